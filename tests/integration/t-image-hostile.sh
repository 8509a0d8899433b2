#!/bin/bash
# t-image-hostile.sh: the desktop `run` against hostile and broken images the test builds itself
# (python3 tarfile and json): sizes an archive states, FIFOs, a huge sparse /etc/passwd, 100,000
# Env entries, /etc/passwd as the merged layers show it (symlinks across layers, whiteouts,
# opaque directories, unreadable layers), link targets in PAX and non-UTF-8 form, a blob set
# with a duplicate and a hole, nested indexes, the messages; no crash, no hang, no wrong user,
# one line naming the image and the entry, exit status 1, nothing left in the store.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

STORE=$T_WORK/store
store_cleanup() {
  [ -d "$STORE" ] && unshare -r --map-auto rm -rf "$STORE" 2>/dev/null
  _cleanup
}
trap store_cleanup EXIT
drun() { rrt run --storage "$STORE" "$@"; }
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || bail_out "no static busybox at $BUSYBOX (Debian's busybox-static)"

# hostile OUT KIND: OUT/oci (a layout), OUT/oci.tar, OUT/docker.tar of a small busybox image
# made hostile in the way KIND says (see the script).
cat >"$T_WORK/hostile.py" <<'PYEOF'
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
elif kind == "race":  # a layer that takes a while to unpack
    top = lambda t: [ent(t, "many/%d" % i, data=b"x") for i in range(4000)]
elif kind == "empty-whiteout":
    top = lambda t: ent(t, "etc/.wh.")
elif kind == "many-env":
    config["Env"] = ["K%d=%d" % (i, i) for i in range(100000)] + ["K5=again"]
elif kind == "rel-workdir":
    config["WorkingDir"] = "app"
if kind in ("big-passwd", "fifo-passwd", "passwd-symlink", "passwd-dirlink", "passwd-whiteout",
            "passwd-opaque", "passwd-eacces"):
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
PYEOF
hostile() {
  "$PY" "$T_WORK/hostile.py" "$T_WORK/$1" "$1" "$BUSYBOX" || bail_out "hostile.py $1 failed"
}

# What a refusal leaves: nothing in the store's tmp/ and containers/, no bundle in the state root.
left() {
  find "$STORE/tmp" "$STORE/containers" "$RRT_ROOT/.run" -mindepth 1 -maxdepth 1 \
    ! -name .spare ! -name '.new-*' -printf '%f ' 2>/dev/null
}
# refused ERE NAME: the last run exited 1 with one line matching ERE, and left nothing.
refused() {
  fails_naming "$1" "$2"
  is "$(wc -l <<<"$err"):$(left)" "1:" "... one line, nothing left in the store or the state root"
}

# ---------------------------------------------------------------- sizes an archive states

hostile realsize-oci
run drun --rm "oci-archive:$T_WORK/realsize-oci/oci.tar"
refused "^.*oci.tar: index.json: the archive states an invalid size \(-1\)$" \
  "an oci-archive whose index.json says GNU.sparse.realsize=-1: refused, no crash"
hostile realsize-docker
run drun --rm "docker-archive:$T_WORK/realsize-docker/docker.tar"
refused "docker.tar: manifest.json: the archive states an invalid size \(-1\)$" \
  "a docker-archive whose manifest.json says SCHILY.realsize=-1: refused, no crash"

# ---------------------------------------------------------------- nothing blocks

hostile fifo-index
run drun --rm "oci:$T_WORK/fifo-index/oci"
refused "fifo-index/oci/index.json: not a regular file" "index.json a FIFO: refused at once, no hang"
mkfifo "$T_WORK/fifo.tar"
run drun --rm "oci-archive:$T_WORK/fifo.tar"
refused "fifo.tar: not a regular file" "a FIFO as the archive: refused at once"
hostile fifo-passwd
run drun --rm "oci:$T_WORK/fifo-passwd/oci"
refused "fifo-passwd/oci: the image's User: the image's /etc/passwd \(.*/etc/passwd\): not a regular file" \
  "/etc/passwd a FIFO in the top layer, the image's User a name: refused, no hang"

# ---------------------------------------------------------------- limits

hostile big-passwd
run drun --rm "oci:$T_WORK/big-passwd/oci"
refused "big-passwd/oci: the image's User: the image's /etc/passwd \(.*\) is 4294967296 bytes: more than the 8 MiB limit" \
  "a 4 GiB sparse /etc/passwd: refused with the limit named, no abort"
hostile many-env
run drun --rm --print-config "oci:$T_WORK/many-env/oci"
is "$rc:$(jq -r '.process.env | length, .[7]' <<<"$out" 2>/dev/null | tr '\n' ' ')" "0:100002 K5=again " \
  "100,000 Env entries: the config in time (a later KEY replaces an earlier one in place)"

# ---------------------------------------------------------------- the user, as the image shows it

# The base layer's /etc/passwd says alice is 1000; the layers above say otherwise.
hostile passwd-symlink
run drun --rm --print-config "oci:$T_WORK/passwd-symlink/oci"
is "$rc:$(jq -c .process.user <<<"$out" 2>/dev/null)" '0:{"uid":4242,"gid":4242}' \
  "/etc/passwd a symlink to a file of a lower layer (absolute): that file's alice"
run drun --rm "oci:$T_WORK/passwd-symlink/oci"
is "$rc:$out" "0:4242" "... and the process runs as 4242"
hostile passwd-dirlink
run drun --rm --print-config "oci:$T_WORK/passwd-dirlink/oci"
is "$rc:$(jq -c .process.user <<<"$out" 2>/dev/null)" '0:{"uid":4242,"gid":4242}' \
  "/etc a relative symlink in the top layer over a whited-out /etc: the linked passwd"
hostile passwd-whiteout
run drun --rm "oci:$T_WORK/passwd-whiteout/oci"
refused 'passwd-whiteout/oci: the image.s User: user "alice": not in the image.s /etc/passwd' \
  "/etc/passwd whited out by the top layer: the user is not found (as podman)"
hostile passwd-opaque
run drun --rm "oci:$T_WORK/passwd-opaque/oci"
refused 'passwd-opaque/oci: the image.s User: user "alice": not in the image.s /etc/passwd' \
  "/etc opaque in the top layer: the base layer's passwd is hidden"
run drun --rm -u 0 "oci:$T_WORK/passwd-opaque/oci"
is "$rc:$out" "0:0" "... a numeric -u still runs"
hostile passwd-eacces
run drun --rm "oci:$T_WORK/passwd-eacces/oci"
if [ "$(id -u)" = 0 ]; then
  skip "as root every layer is readable" 2
else
  refused "passwd-eacces/oci: the image's User: the image's /etc/passwd \(.*/etc/passwd\): Permission denied" \
    "/etc/passwd of the top layer unreadable: an error, not the base layer's"
fi

# ---------------------------------------------------------------- links in every form

hostile links
run drun --rm "oci:$T_WORK/links/oci"
want=$(printf '0:ziel-\303\244-%s\nraw-\377\nhard data\n1' "$(printf 'x%.0s' {1..100})")
is "$rc:$out" "$want" "PAX and non-UTF-8 symlink targets, PAX hard links: all unpacked as written"

# ---------------------------------------------------------------- the blob set

hostile dup-blob
run drun --rm "oci-archive:$T_WORK/dup-blob/oci.tar"
l0=$(jq -r '.layers[0].digest | sub("sha256:"; "")' "$T_WORK/dup-blob/oci/blobs/sha256/$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$T_WORK/dup-blob/oci/index.json")")
l1=$(jq -r '.layers[1].digest | sub("sha256:"; "")' "$T_WORK/dup-blob/oci/blobs/sha256/$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$T_WORK/dup-blob/oci/index.json")")
refused "layer blobs/sha256/$l0 is missing from the archive.*layer blobs/sha256/$l1 is in the archive 2 times" \
  "an oci-archive with one layer twice and one missing (the base layer, in the store already): both named"
ok "... before anything was unpacked" test ! -e "$STORE/layers/sha256/$l1"

hostile corrupt
run drun --rm "oci-archive:$T_WORK/corrupt/oci.tar"
new=$(jq -r '.layers[1].digest | sub("sha256:"; "")' "$T_WORK/corrupt/oci/blobs/sha256/$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$T_WORK/corrupt/oci/index.json")")
refused "layer blobs/sha256/[0-9a-f]{64}: digest mismatch: expected sha256:" \
  "an oci-archive whose top layer does not match its digest: refused"
ok "... before a layer below it was unpacked into the store" test ! -e "$STORE/layers/sha256/$new"

# ---------------------------------------------------------------- messages

hostile empty-whiteout
run drun --rm "oci:$T_WORK/empty-whiteout/oci"
refused 'entry "etc/.wh.": a whiteout names no file: refused' "an empty whiteout name: named, no stale errno"
hostile rel-workdir
run drun --rm "oci:$T_WORK/rel-workdir/oci"
refused "rel-workdir/oci: the image's WorkingDir \"app\" is not absolute" "a relative WorkingDir is the image's, not -w's"
hostile nested
run drun --rm "oci:$T_WORK/nested/oci"
refused "nested/oci: indexes nested more than 4 deep" "six nested indexes: the depth named"

# ---------------------------------------------------------------- leftovers in the store

# What a killed unpack leaves (a directory in tmp/ no run holds the lock of), owned by a
# subordinate id: the next run removes it even when it needs no unpack.
drun --rm "oci:$T_WORK/links/oci" >/dev/null 2>&1
unshare -r --map-auto sh -c "mkdir -p '$STORE/tmp/999-deadbeef/etc' && chown 7:7 '$STORE/tmp/999-deadbeef/etc'" ||
  bail_out "cannot make a leftover with subordinate ids"
run drun --rm "oci:$T_WORK/links/oci"
is "$rc:$(ls -A "$STORE/tmp")" "0:" "a killed unpack's directory: removed by the next run, which unpacks nothing"
unshare -r --map-auto mkdir -p "$STORE/tmp/998-deadbeef"
run rrt store --storage "$STORE" ls
is "$rc:$(ls -A "$STORE/tmp")" "0:" "... and by store ls"

# Two runs of a fresh image at once: both may unpack; the loser's copy goes at once.
hostile race
drun --rm "oci:$T_WORK/race/oci" >"$T_WORK/r1.out" 2>&1 &
p1=$!
drun --rm "oci:$T_WORK/race/oci" >"$T_WORK/r2.out" 2>&1 &
p2=$!
wait "$p1"
s1=$?
wait "$p2"
s2=$?
is "$s1:$s2:$(find "$STORE/tmp" -mindepth 1 -maxdepth 1 | wc -l)" "0:0:0" \
  "two runs race for the same layers: both run, no copy left in tmp/"

done_testing
