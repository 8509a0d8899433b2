#!/usr/bin/python3
"""mkcorpus.py [DIR]: writes the image fuzz targets' seed corpus of hostile cases into DIR
(default: this directory): image_json/ (first byte: 0 index.json, 1 manifest, 2 config,
3 docker manifest.json, 4 docker config), image_archive/ (whole archives), image_unpack/
(layer tars). Re-run after changing it; the files are committed."""
import hashlib, io, json, os, sys, tarfile

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
T = 1700000000


def put(target, name, data):
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def sha(b):
    return hashlib.sha256(b).hexdigest()


def j(o):
    return json.dumps(o).encode()


# ---------------------------------------------------------------- image_json
Z = "sha256:" + "0" * 64
cases = {
    "index-empty": (0, b""),
    "index-deep": (0, b"[" * 20000 + b"]" * 20000),
    "index-manifests-not-array": (0, j({"manifests": {"a": 1}})),
    "index-manifest-not-object": (0, j({"manifests": [1, "x", None]})),
    "index-digest-not-string": (0, j({"manifests": [{"digest": 5}]})),
    "index-digest-bad": (0, j({"manifests": [{"digest": "sha256:../../etc/passwd"}]})),
    "index-two-no-platform": (0, j({"manifests": [{"digest": Z}, {"digest": Z}]})),
    "index-nul": (0, b'{"manifests":[{"digest":"sha256:\\u0000"}]}'),
    "manifest-nested-missing": (1, j({"manifests": [{"digest": Z}]})),
    "manifest-no-config": (1, j({"schemaVersion": 2, "layers": []})),
    "manifest-config-not-object": (1, j({"config": "x", "layers": 3})),
    "manifest-layers-bad": (1, j({"config": {"digest": Z}, "layers": [1, {"digest": None},
                                                                      {"mediaType": "x/zip"}]})),
    "config-env-not-array": (2, j({"config": {"Env": "A=1", "Cmd": {}, "User": 5}})),
    "config-env-mixed": (2, j({"config": {"Env": [1, None, "A", "=", "B=2"] * 100,
                                          "Entrypoint": [[]], "WorkingDir": ["x"]}})),
    "config-ports": (2, j({"config": {"ExposedPorts": {"": None, "80/tcp": [], "x" * 4096: 1}}})),
    "config-many-env": (2, j({"config": {"Env": ["K%d=v" % i for i in range(5000)]}})),
    "config-not-object": (2, b"[]"),
    "docker-empty-array": (3, b"[]"),
    "docker-config-not-digest": (3, j([{"Config": "../../x.json", "Layers": []}])),
    "docker-config-not-string": (3, j([{"Config": 7, "Layers": "x", "RepoTags": [1]}])),
    "docker-object": (3, j({"Config": "x"})),
    "dconfig-diffids-short": (4, j({"rootfs": {"diff_ids": []}})),
    "dconfig-diffids-bad": (4, j({"rootfs": {"diff_ids": [5]}})),
    "dconfig-diffids-not-array": (4, j({"rootfs": {"diff_ids": "sha256:" + "a" * 64}})),
}
for name, (mode, data) in cases.items():
    put("image_json", name, bytes([mode]) + data)


# ---------------------------------------------------------------- tars
def tar(entries, fmt=tarfile.PAX_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt, encoding="utf-8",
                      errors="surrogateescape") as t:
        for e in entries:
            name, kind, data, link, pax = (list(e) + [None] * 5)[:5]
            ti = tarfile.TarInfo(name)
            ti.type, ti.mtime, ti.mode = kind or tarfile.REGTYPE, T, 0o644
            ti.uid = ti.gid = 0
            ti.linkname = link or ""
            if pax:
                ti.pax_headers = pax
            if ti.type == tarfile.REGTYPE:
                data = data or b""
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
            else:
                t.addfile(ti)
    return buf.getvalue()


def layout(layers, config=None, nest=0):
    files = {}

    def blob(b):
        files["blobs/sha256/" + sha(b)] = b
        return {"digest": "sha256:" + sha(b), "size": len(b)}
    cfg = j({"config": config or {"Cmd": ["/x"]},
             "rootfs": {"diff_ids": ["sha256:" + sha(l) for l in layers]}})
    man = {"schemaVersion": 2, "config": blob(cfg),
           "layers": [dict(blob(l), mediaType="application/vnd.oci.image.layer.v1.tar")
                      for l in layers]}
    desc = blob(j(man))
    for _ in range(nest):
        desc = blob(j({"schemaVersion": 2, "manifests": [desc]}))
    files["index.json"] = j({"schemaVersion": 2, "manifests": [desc]})
    return files


layer = tar([("etc", tarfile.DIRTYPE), ("etc/passwd", None, b"root:x:0:0::/:/bin/sh\n")])
layer2 = tar([("second", None, b"2\n")])
ok = layout([layer, layer2])
put("image_archive", "oci-ok", tar([(n, None, d) for n, d in sorted(ok.items())]))
put("image_archive", "oci-realsize",
    tar([(n, None, d, None, {"GNU.sparse.realsize": "-1"} if n == "index.json" else None)
         for n, d in sorted(ok.items())]))
l0, l1 = "blobs/sha256/" + sha(layer), "blobs/sha256/" + sha(layer2)
put("image_archive", "oci-dup-and-missing",
    tar([(n, None, d) for n, d in sorted(ok.items()) if n != l0] + [(l1, None, layer2)]))
nested = layout([layer], nest=6)
put("image_archive", "oci-nested-6", tar([(n, None, d) for n, d in sorted(nested.items())]))
put("image_archive", "oci-index-hardlink",
    tar([("x", None, ok["index.json"]), ("index.json", tarfile.LNKTYPE, None, "x")]))
put("image_archive", "oci-index-fifo", tar([("index.json", tarfile.FIFOTYPE)]))
put("image_archive", "truncated", tar([(n, None, d) for n, d in sorted(ok.items())])[:1500])
put("image_archive", "not-a-tar", b"\x1f\x8b\x08\x00garbage" * 64)
put("image_archive", "oci-huge-size",
    tar([("index.json", None, b"{}", None, {"size": str(1 << 62)})]))
cfgb = j({"config": {}, "rootfs": {"diff_ids": ["sha256:" + sha(layer)] * 2}})
put("image_archive", "docker-realsize",
    tar([(sha(layer) + ".tar", None, layer), (sha(cfgb) + ".json", None, cfgb),
         ("manifest.json", None, j([{"Config": sha(cfgb) + ".json",
                                     "Layers": [sha(layer) + ".tar"] * 2}]),
          None, {"SCHILY.realsize": "-1"})]))
put("image_archive", "docker-dup-layer",
    tar([(sha(layer) + ".tar", None, layer), (sha(layer) + ".tar", None, layer),
         (sha(cfgb) + ".json", None, cfgb),
         ("manifest.json", None, j([{"Config": sha(cfgb) + ".json",
                                     "Layers": [sha(layer) + ".tar"] * 2}]))]))

# ---------------------------------------------------------------- image_unpack
U = {
    "dotdot": [("../escape", None, b"x")],
    "absolute": [("/abs", None, b"x")],
    "empty-whiteout": [("etc/.wh.", None)],
    "whiteout-dotdot": [("etc/.wh..", None), ("etc/.wh...", None)],
    "opaque": [("d", tarfile.DIRTYPE), ("d/.wh..wh..opq", None), ("d/f", None, b"f")],
    "pax-links": [("orig", None, b"o"), ("ln", tarfile.SYMTYPE, None, "ziel-\u00e4" + "x" * 100),
                  ("raw", tarfile.SYMTYPE, None, b"r\xff".decode("utf-8", "surrogateescape")),
                  ("hard-" + "y" * 100, tarfile.LNKTYPE, None, "orig")],
    "hardlink-root": [("h", tarfile.LNKTYPE, None, ".")],
    "hardlink-missing": [("h", tarfile.LNKTYPE, None, "nothing/here")],
    "hardlink-dotdot": [("h", tarfile.LNKTYPE, None, "../../etc/passwd")],
    "symlink-empty": [("s", tarfile.SYMTYPE, None, "")],
    "symlink-then-write": [("s", tarfile.SYMTYPE, None, "/"), ("s/etc/x", None, b"x")],
    "fifo-device": [("f", tarfile.FIFOTYPE), ("c", tarfile.CHRTYPE), ("b", tarfile.BLKTYPE)],
    "dir-over-file": [("a", None, b"x"), ("a", tarfile.DIRTYPE), ("a/b", None, b"y"),
                      ("a", None, b"z")],
    "non-utf8-name": [(b"n\xff\xfe".decode("utf-8", "surrogateescape"), None, b"x")],
    "gnu-longname": [("l" * 300, None, b"x")],
}
for name, entries in U.items():
    fmt = tarfile.GNU_FORMAT if name == "gnu-longname" else tarfile.PAX_FORMAT
    put("image_unpack", name, tar(entries, fmt))
m = b"1\n0\n4\n"
m += b"\0" * (512 - len(m))
sp = tarfile.TarInfo("GNUSparseFile.0/big")
sp.size, sp.mtime = len(m) + 4, T
sp.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "big",
                  "GNU.sparse.realsize": str(1 << 30)}
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
    t.addfile(sp, io.BytesIO(m + b"data"))
put("image_unpack", "sparse-1g", buf.getvalue())
