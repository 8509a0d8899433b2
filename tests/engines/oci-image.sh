#!/bin/bash
# oci-image.sh [--docker] OUT.tar NAME [FILE...]: writes an OCI image layout tarball (one
# uncompressed layer) holding Debian's static busybox at /bin/busybox with a link for every applet,
# plus each FILE at /bin/<its name>, for `ctr images import`. NAME is the image reference it is
# imported under. --docker adds the manifest.json of `docker save` (all Docker 20.10's
# `docker load` reads), naming the same config and layer blobs. OCI_IMAGE_CMD (JSON) replaces
# its Cmd, ["sh"].
set -u

die() {
  echo "oci-image: $*" >&2
  exit 1
}
docker=0
[ "${1:-}" = --docker ] && docker=1 && shift
[ $# -ge 2 ] || die "usage: oci-image.sh [--docker] OUT.tar NAME [FILE...]"
out=$1 name=$2
shift 2
[ -x /bin/busybox ] || die "no /bin/busybox (apt-get install busybox-static)"
/usr/bin/python3 - "$docker" "$out" "$name" "$@" <<'EOF'
import hashlib, io, json, os, subprocess, sys, tarfile

docker, out, name, extra = sys.argv[1] == "1", sys.argv[2], sys.argv[3], sys.argv[4:]
applets = subprocess.run(["/bin/busybox", "--list"], capture_output=True, text=True,
                         check=True).stdout.split()

def add(tar, info, data=None):
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "root", "root"
    tar.addfile(info, io.BytesIO(data) if data is not None else None)

def directory(tar, path, mode=0o755):
    i = tarfile.TarInfo(path); i.type = tarfile.DIRTYPE; i.mode = mode; add(tar, i)

def regular(tar, path, data, mode=0o644):
    i = tarfile.TarInfo(path); i.size = len(data); i.mode = mode; add(tar, i, data)

layer_buf = io.BytesIO()
with tarfile.open(fileobj=layer_buf, mode="w", format=tarfile.PAX_FORMAT) as t:
    for d in ("bin", "dev", "etc", "proc", "sys", "tmp", "run", "var"):
        directory(t, d, 0o1777 if d == "tmp" else 0o755)
    with open("/bin/busybox", "rb") as f:
        regular(t, "bin/busybox", f.read(), 0o755)
    for a in applets:
        if a != "busybox":
            i = tarfile.TarInfo("bin/" + a); i.type = tarfile.SYMTYPE; i.linkname = "busybox"
            i.mode = 0o777; add(t, i)
    for path in extra:
        with open(path, "rb") as f:
            regular(t, "bin/" + os.path.basename(path), f.read(), 0o755)
    regular(t, "etc/passwd", b"root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n")
    regular(t, "etc/group", b"root:x:0:\nnogroup:x:65534:\n")
layer = layer_buf.getvalue()

def blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest(), data

layer_digest, _ = blob(layer)
config = json.dumps({
    "architecture": "amd64", "os": "linux",
    "config": {"Env": ["PATH=/bin"], "Cmd": json.loads(os.environ.get("OCI_IMAGE_CMD", '["sh"]')),
               "WorkingDir": "/"},
    "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
}, sort_keys=True).encode()
config_digest, _ = blob(config)
manifest = json.dumps({
    "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
               "digest": config_digest, "size": len(config)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                "digest": layer_digest, "size": len(layer)}],
}, sort_keys=True).encode()
manifest_digest, _ = blob(manifest)
index = json.dumps({
    "schemaVersion": 2,
    "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                   "digest": manifest_digest, "size": len(manifest),
                   "platform": {"architecture": "amd64", "os": "linux"},
                   "annotations": {"io.containerd.image.name": name,
                                   "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}}],
}, sort_keys=True).encode()

with tarfile.open(out, mode="w") as t:
    regular(t, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
    directory(t, "blobs"); directory(t, "blobs/sha256")
    for d, data in ((layer_digest, layer), (config_digest, config), (manifest_digest, manifest)):
        regular(t, "blobs/sha256/" + d.split(":")[1], data)
    regular(t, "index.json", index)
    if docker:
        regular(t, "manifest.json", json.dumps([{
            "Config": "blobs/sha256/" + config_digest.split(":")[1],
            "RepoTags": [name.split("/", 1)[1] if name.startswith("docker.io/") else name],
            "Layers": ["blobs/sha256/" + layer_digest.split(":")[1]],
        }]).encode())
EOF
