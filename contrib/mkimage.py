#!/usr/bin/python3
"""mkimage.py OUT [--busybox PATH] [--probe PATH] [--xattr] [--shell] [--evil KIND] [--arch A [--variant V]]: builds a small test image from
Debian's static busybox, with no engine: OUT/oci (an OCI image layout, tag "latest"),
OUT/oci.tar (the same as an oci-archive) and OUT/docker.tar (a docker-archive,
localhost/rrt-test:latest).

Three layers: a gzip base (busybox and its applets as symlinks, /etc/passwd with alice 1000,
alice's home owned by 1000, files the next layer removes); a zstd layer (when the zstd program
exists, gzip otherwise) with a whiteout, an opaque directory, a hard link, a setuid file and a
file of uid 1000 mode 0640; a plain tar with the working directory and a symlink. The config has
Entrypoint, Cmd, Env, WorkingDir, User and StopSignal.

--xattr adds a fourth layer, a plain tar of one file /noted with a 1500-byte user.rrt.note
extended attribute (pax SCHILY.xattr), the layer's last entry.

--shell gives the image the config of a distribution's base image (alpine's): Cmd /bin/sh, a
PATH, no entrypoint, root in /; the documentation's examples run it.

--arch A (default amd64) and --variant V set the config's architecture and variant.

--evil KIND makes a one-layer image whose layer is hostile instead: dotdot (an entry
"../escape"), absolute ("/abs"), symlink (a symlink to OUTSIDE=<dir> then a file through it),
device (a character device node).
"""
import gzip, hashlib, io, json, os, shutil, subprocess, sys, tarfile, time

MTIME = 1700000000


def entry(tar, name, kind=tarfile.REGTYPE, data=b"", mode=0o644, uid=0, gid=0, link=""):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.uid, ti.gid, ti.mtime = kind, mode, uid, gid, MTIME
    ti.uname = ti.gname = ""
    ti.linkname = link
    if kind == tarfile.REGTYPE:
        ti.size = len(data)
        tar.addfile(ti, io.BytesIO(data))
    else:
        tar.addfile(ti)


def make_tar(build):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        build(tar)
    return buf.getvalue()


def layer_base(busybox, probe):
    def build(t):
        for d, m in (("bin", 0o755), ("etc", 0o755), ("tmp", 0o1777), ("home", 0o755),
                     ("olddir", 0o755), ("proc", 0o755), ("sys", 0o755), ("dev", 0o755)):
            entry(t, d, tarfile.DIRTYPE, mode=m)
        entry(t, "bin/busybox", data=open(busybox, "rb").read(), mode=0o755)
        applets = subprocess.run([busybox, "--list"], capture_output=True, text=True).stdout
        for a in applets.split():
            if a != "busybox":
                entry(t, "bin/" + a, tarfile.SYMTYPE, link="busybox", mode=0o777)
        if probe:
            entry(t, "bin/rrt-probe", data=open(probe, "rb").read(), mode=0o755)
        entry(t, "etc/passwd", data=b"root:x:0:0:root:/root:/bin/sh\n"
              b"alice:x:1000:1000:alice:/home/alice:/bin/sh\n")
        entry(t, "etc/group", data=b"root:x:0:\nalice:x:1000:\n")
        entry(t, "etc/deleted-later", data=b"you should not see me\n")
        entry(t, "olddir/a", data=b"a\n")
        entry(t, "olddir/b", data=b"b\n")
        entry(t, "home/alice", tarfile.DIRTYPE, mode=0o755, uid=1000, gid=1000)
        entry(t, "home/alice/own", data=b"alice's\n", uid=1000, gid=1000)
    return make_tar(build)


def layer_changes():
    def build(t):
        entry(t, "etc/.wh.deleted-later")
        entry(t, "olddir", tarfile.DIRTYPE, mode=0o755)
        entry(t, "olddir/.wh..wh..opq")
        entry(t, "olddir/c", data=b"c\n")
        entry(t, "usr", tarfile.DIRTYPE, mode=0o755)
        entry(t, "usr/bin", tarfile.DIRTYPE, mode=0o755)
        entry(t, "usr/bin/orig", data=b"linked\n")
        entry(t, "usr/bin/hard", tarfile.LNKTYPE, link="usr/bin/orig")
        entry(t, "usr/bin/suid", data=b"#!/bin/sh\n", mode=0o4755)
        entry(t, "data", tarfile.DIRTYPE, mode=0o755)
        entry(t, "data/by-alice", data=b"secret\n", mode=0o640, uid=1000, gid=1000)
    return make_tar(build)


def layer_app():
    def build(t):
        entry(t, "app", tarfile.DIRTYPE, mode=0o755)
        entry(t, "app/hello.txt", data=b"hello from the image\n")
        entry(t, "app/passwd-link", tarfile.SYMTYPE, link="../etc/passwd", mode=0o777)
    return make_tar(build)


def layer_noted():
    def build(t):
        ti = tarfile.TarInfo("noted")
        ti.mode, ti.mtime, ti.size = 0o644, MTIME, 6
        ti.uname = ti.gname = ""
        ti.pax_headers = {"SCHILY.xattr.user.rrt.note": "n" * 1500}
        t.addfile(ti, io.BytesIO(b"noted\n"))
    return make_tar(build)


def layer_evil(kind, outside):
    def build(t):
        entry(t, "ok", data=b"ok\n")
        if kind == "dotdot":
            entry(t, "../escape", data=b"x\n")
        elif kind == "absolute":
            entry(t, "/abs", data=b"x\n")
        elif kind == "symlink":
            entry(t, "evil", tarfile.SYMTYPE, link=outside, mode=0o777)
            entry(t, "evil/pwned", data=b"x\n")
        elif kind == "device":
            ti = tarfile.TarInfo("sda")
            ti.type, ti.mode, ti.devmajor, ti.devminor, ti.mtime = tarfile.CHRTYPE, 0o666, 8, 0, MTIME
            t.addfile(ti)
    return make_tar(build)


def compress(data, how):
    if how == "gzip":
        return gzip.compress(data, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip"
    if how == "zstd":
        out = subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True)
        return out.stdout, "application/vnd.oci.image.layer.v1.tar+zstd"
    return data, "application/vnd.oci.image.layer.v1.tar"


def sha(b):
    return hashlib.sha256(b).hexdigest()


def blob(layout, data):
    d = sha(data)
    with open(os.path.join(layout, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + d, "size": len(data)}


def main():
    args = sys.argv[1:]
    out = args.pop(0)
    noted = "--xattr" in args
    shell = "--shell" in args
    args = [a for a in args if a not in ("--xattr", "--shell")]
    opts = dict(zip(args[::2], args[1::2]))
    busybox = opts.get("--busybox", "/bin/busybox")
    evil = opts.get("--evil")
    if evil:
        layers = [(layer_evil(evil, opts.get("--outside", "/tmp")), "none")]
        config = {"Cmd": ["/ok"]}
    else:
        have_zstd = shutil.which("zstd") is not None
        layers = [(layer_base(busybox, opts.get("--probe")), "gzip"),
                  (layer_changes(), "zstd" if have_zstd else "gzip"), (layer_app(), "none")]
        if noted:
            layers.append((layer_noted(), "none"))
        config = {"Entrypoint": ["/bin/echo", "entry"], "Cmd": ["from-cmd"],
                  "Env": ["PATH=/usr/bin:/bin", "GREETING=hello"], "WorkingDir": "/app",
                  "User": "alice", "StopSignal": "SIGINT", "ExposedPorts": {"80/tcp": {}}}
        if shell:
            config = {"Cmd": ["/bin/sh"], "Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}
    layout = os.path.join(out, "oci")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.join(layout, "blobs", "sha256"))
    cfg = {"architecture": opts.get("--arch", "amd64"), "os": "linux", "config": config,
           "rootfs": {"type": "layers", "diff_ids": ["sha256:" + sha(t) for t, _ in layers]}}
    if "--variant" in opts:
        cfg["variant"] = opts["--variant"]
    cfg_bytes = json.dumps(cfg).encode()
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": dict(blob(layout, cfg_bytes),
                               mediaType="application/vnd.oci.image.config.v1+json"),
                "layers": []}
    for t, how in layers:
        data, mt = compress(t, how)
        manifest["layers"].append(dict(blob(layout, data), mediaType=mt))
    mdesc = blob(layout, json.dumps(manifest).encode())
    mdesc.update(mediaType=manifest["mediaType"],
                 annotations={"org.opencontainers.image.ref.name": "latest"})
    with open(os.path.join(layout, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [mdesc]}, f)
    with open(os.path.join(layout, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    with tarfile.open(os.path.join(out, "oci.tar"), "w") as tar:
        for name in sorted(os.listdir(layout)):
            tar.add(os.path.join(layout, name), arcname=name)
    # docker-archive: plain layer tars named by their diff id, the config by its digest.
    with tarfile.open(os.path.join(out, "docker.tar"), "w") as tar:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size, ti.mtime = len(data), MTIME
            tar.addfile(ti, io.BytesIO(data))
        names = []
        for t, _ in layers:
            names.append(sha(t) + ".tar")
            add(names[-1], t)
        add(sha(cfg_bytes) + ".json", cfg_bytes)
        add("manifest.json", json.dumps([{"Config": sha(cfg_bytes) + ".json",
                                          "RepoTags": ["localhost/rrt-test:latest"],
                                          "Layers": names}]).encode())


if __name__ == "__main__":
    main()
