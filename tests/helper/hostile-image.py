#!/usr/bin/python3
# hostile-image.py OUT KIND BUSYBOX: a small busybox image made hostile or broken in the way KIND
# says, as OUT/oci (a layout), OUT/oci.tar (an oci-archive) and OUT/docker.tar (a docker-archive).
# Shared by tests/integration/t-image-hostile.sh (rootlessrt alone) and
# tests/engines/podman-hostile.sh (the same images fed to podman and to rootlessrt). Kinds: see
# below; an unknown KIND is the plain image (Cmd "id -u").
import hashlib, io, json, os, shutil, sys, tarfile

out, kind, busybox = sys.argv[1], sys.argv[2], sys.argv[3]
T = 1700000000


def sha(b):
    return hashlib.sha256(b).hexdigest()


def ent(t, name, kind=tarfile.REGTYPE, data=b"", mode=0o644, uid=0, link="", pax=None):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.uid, ti.gid, ti.mtime, ti.linkname = kind, mode, uid, uid, T, link
    if pax:
        ti.pax_headers = pax
    if kind == tarfile.REGTYPE:
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    else:
        t.addfile(ti)


def tar(build):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8",
                      errors="surrogateescape") as t:
        build(t)
    return buf.getvalue()


def base(t):
    for d in ("bin", "etc", "proc", "sys", "dev", "tmp"):
        ent(t, d, tarfile.DIRTYPE, mode=0o755)
    ent(t, "bin/busybox", data=open(busybox, "rb").read(), mode=0o755)
    for a in ("sh", "id", "cat", "echo", "readlink", "stat", "true", "ls", "sort", "wc"):
        ent(t, "bin/" + a, tarfile.SYMTYPE, link="busybox", mode=0o777)
    ent(t, "etc/passwd", data=b"root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/:/bin/sh\n")
    ent(t, "etc/group", data=b"root:x:0:\nalice:x:1000:\n")


ALICE = b"root:x:0:0:root:/root:/bin/sh\nalice:x:4242:4242::/:/bin/sh\n"
layers = [tar(base)]
config = {"Cmd": ["/bin/sh", "-c", "id -u"]}
top = None
if kind == "big-passwd":
    def big(t):
        data = ALICE
        m = b"1\n0\n%d\n" % len(data)
        m += b"\0" * (512 - len(m))
        ti = tarfile.TarInfo("etc/GNUSparseFile.0/passwd")
        ti.size, ti.mode, ti.mtime = len(m) + len(data), 0o644, T
        ti.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                          "GNU.sparse.name": "etc/passwd", "GNU.sparse.realsize": str(4 << 30)}
        t.addfile(ti, io.BytesIO(m + data))
    top = big
elif kind == "fifo-passwd":
    top = lambda t: ent(t, "etc/passwd", tarfile.FIFOTYPE)
elif kind == "passwd-symlink":
    layers.append(tar(lambda t: ent(t, "etc/real-passwd", data=ALICE)))
    top = lambda t: ent(t, "etc/passwd", tarfile.SYMTYPE, link="/etc/real-passwd")
elif kind == "passwd-dirlink":  # /etc itself a symlink in the top layer, relative
    def f(t):
        ent(t, "etc2", tarfile.DIRTYPE, mode=0o755)
        ent(t, "etc2/passwd", data=ALICE)
    layers.append(tar(f))
    top = lambda t: (ent(t, ".wh.etc"), ent(t, "etc", tarfile.SYMTYPE, link="etc2"))
elif kind == "passwd-whiteout":
    top = lambda t: ent(t, "etc/.wh.passwd")
elif kind == "passwd-opaque":
    top = lambda t: (ent(t, "etc", tarfile.DIRTYPE, mode=0o755), ent(t, "etc/.wh..wh..opq"),
                     ent(t, "etc/group", data=b"root:x:0:\n"))
elif kind == "passwd-eacces":
    top = lambda t: ent(t, "etc/passwd", data=ALICE, mode=0o600, uid=5)
elif kind == "etc-eacces":  # the top layer's /etc itself unreadable to the user
    top = lambda t: (ent(t, "etc", tarfile.DIRTYPE, mode=0o700, uid=5), ent(t, "etc/passwd", data=ALICE))
elif kind == "links":
    def f(t):
        ent(t, "orig", data=b"hard data\n")
        ent(t, "ln-utf8", tarfile.SYMTYPE, link="ziel-\u00e4-" + "x" * 100)
        ent(t, "ln-raw", tarfile.SYMTYPE, link=b"raw-\xff".decode("utf-8", "surrogateescape"))
        ent(t, "hard-" + "y" * 100, tarfile.LNKTYPE, link="orig")
        ent(t, "hard-\u00e4", tarfile.LNKTYPE, link="orig")
    top = f
    config["Cmd"] = ["/bin/sh", "-c", "readlink /ln-utf8; readlink /ln-raw; cat /hard-y*; "
                     "stat -c %i /orig /hard-* | sort -u | wc -l"]
elif kind == "links-ascii":  # ASCII targets, short and in PAX records (a hard link's: type 0)
    def f(t):
        ent(t, "orig", data=b"hard data\n")
        ent(t, "d/" + "z" * 100, data=b"long data\n")
        ent(t, "ln-long", tarfile.SYMTYPE, link="/d/" + "z" * 100)
        ent(t, "ln-short", tarfile.SYMTYPE, link="orig")
        ent(t, "hard-short", tarfile.LNKTYPE, link="orig")
        ent(t, "hard-" + "y" * 100, tarfile.LNKTYPE, link="orig")
        ent(t, "hard-long", tarfile.LNKTYPE, link="d/" + "z" * 100)
    top = f
    config["Cmd"] = ["/bin/sh", "-c", "readlink /ln-long; readlink /ln-short; cat /ln-long "
                     "/hard-long /hard-short; stat -c %i /orig /hard-short /hard-y* | sort -u | wc -l"]
elif kind == "race":  # a layer that takes a while to unpack
    top = lambda t: [ent(t, "many/%d" % i, data=b"x") for i in range(4000)]
elif kind == "empty-whiteout":
    top = lambda t: ent(t, "etc/.wh.")
elif kind == "many-env":
    config["Env"] = ["K%d=%d" % (i, i) for i in range(100000)] + ["K5=again"]
elif kind == "rel-workdir":
    config["WorkingDir"] = "app"
if kind in ("big-passwd", "fifo-passwd", "passwd-symlink", "passwd-dirlink", "passwd-whiteout",
            "passwd-opaque", "passwd-eacces", "etc-eacces"):
    config["User"] = "alice"
if top:
    layers.append(tar(top))
if kind == "dup-blob":
    layers.append(tar(lambda t: ent(t, "second", data=b"2\n")))
if kind == "corrupt":  # a new layer, then one whose blob in oci.tar has a byte changed
    layers.append(tar(lambda t: ent(t, "new-layer", data=b"new\n")))
    layers.append(tar(lambda t: ent(t, "corrupt", data=b"0123456789\n")))

layout = os.path.join(out, "oci")
shutil.rmtree(out, ignore_errors=True)
os.makedirs(os.path.join(layout, "blobs", "sha256"))
files = {}


def blob(data):
    d = sha(data)
    files["blobs/sha256/" + d] = data
    return {"digest": "sha256:" + d, "size": len(data)}


cfg = {"architecture": "amd64", "os": "linux", "config": config,
       "rootfs": {"type": "layers", "diff_ids": ["sha256:" + sha(l) for l in layers]}}
cb = json.dumps(cfg).encode()
man = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
       "config": dict(blob(cb), mediaType="application/vnd.oci.image.config.v1+json"),
       "layers": [dict(blob(l), mediaType="application/vnd.oci.image.layer.v1.tar")
                  for l in layers]}
desc = dict(blob(json.dumps(man).encode()), mediaType=man["mediaType"])
if kind == "nested":  # six indexes, each naming the next
    for _ in range(5):
        idx = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
               "manifests": [desc]}
        desc = dict(blob(json.dumps(idx).encode()), mediaType=idx["mediaType"])
files["index.json"] = json.dumps({"schemaVersion": 2, "manifests": [desc]}).encode()
files["oci-layout"] = b'{"imageLayoutVersion": "1.0.0"}'
for name, data in files.items():
    with open(os.path.join(layout, name), "wb") as f:
        f.write(data)
if kind == "fifo-index":
    os.unlink(os.path.join(layout, "index.json"))
    os.mkfifo(os.path.join(layout, "index.json"))


def add(t, name, data, pax=None):
    ti = tarfile.TarInfo(name)
    ti.size, ti.mtime = len(data), T
    if pax:
        ti.pax_headers = pax
    t.addfile(ti, io.BytesIO(data))


realsize = {"realsize-oci": ("index.json", {"GNU.sparse.realsize": "-1"}),
            "realsize-docker": ("manifest.json", {"SCHILY.realsize": "-1"})}.get(kind, ("", None))
with tarfile.open(os.path.join(out, "oci.tar"), "w", format=tarfile.PAX_FORMAT) as t:
    names = sorted(files)
    if kind == "dup-blob":  # the second layer twice, the base layer not at all
        l0, l1 = ("blobs/sha256/" + sha(l) for l in layers)
        names = [n for n in names if n != l0] + [l1]
    if kind == "corrupt":  # the corrupted blob last: the new layer comes first in the tar
        bad = "blobs/sha256/" + sha(layers[-1])
        names = [n for n in names if n != bad] + [bad]
    for name in names:
        data = files[name]
        if kind == "corrupt" and name == "blobs/sha256/" + sha(layers[-1]):
            data = data.replace(b"0123456789", b"0123456780")
        add(t, name, data, realsize[1] if name == realsize[0] else None)
with tarfile.open(os.path.join(out, "docker.tar"), "w", format=tarfile.PAX_FORMAT) as t:
    lnames = [sha(l) + ".tar" for l in layers]
    for n, l in zip(lnames, layers):
        add(t, n, l)
    add(t, sha(cb) + ".json", cb)
    add(t, "manifest.json", json.dumps([{"Config": sha(cb) + ".json", "RepoTags": ["x:latest"],
                                          "Layers": lnames}]).encode(),
        realsize[1] if realsize[0] == "manifest.json" else None)
