#!/bin/bash
# t-image-oci.sh: the desktop `run` on images: an OCI layout, the same as oci-archive and as
# docker-archive (built here from busybox-static by contrib/mkimage.py), unpacked once into the
# store with their owners, modes, whiteouts, opaque directories and links; the image config
# applied; every blob verified; hostile tars refused; an interrupted unpack never used; both
# overlay mechanisms (kernel overlayfs, fuse-overlayfs) with the same checks.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

use_store

IMG=$T_WORK/img
if ! /usr/bin/python3 "$CONTRIB_DIR/mkimage.py" "$IMG" --probe "$PROBE" >"$T_WORK/mkimage.log" 2>&1; then
  diag "$(cat "$T_WORK/mkimage.log")"
  bail_out "contrib/mkimage.py failed"
fi
manifest_of() { # manifest_of LAYOUT: the path of its manifest
  echo "$1/blobs/sha256/$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$1/index.json")"
}
blobs_of() { # blobs_of LAYOUT: the layer blobs' digests (hex), bottom first
  jq -r '.layers[].digest | sub("sha256:"; "")' "$(manifest_of "$1")"
}
layers_of() { # layers_of LAYOUT: the layers' diff_ids (hex, the store's names), bottom first
  local c
  c=$(jq -r '.config.digest | sub("sha256:"; "")' "$(manifest_of "$1")")
  jq -r '.rootfs.diff_ids[] | sub("sha256:"; "")' "$1/blobs/sha256/$c"
}
store_snapshot() { (cd "$STORE/layers" && find . -printf '%p %U:%G %m %s %T@\n' | sort | md5sum); }

# What the checks below look at, printed by one script inside the container.
probe_script='id; pwd; echo "$GREETING"; test -e /etc/deleted-later && echo whiteout-broken;
ls /olddir | tr "\n" " "; echo; stat -c "%i" /usr/bin/orig /usr/bin/hard | uniq | wc -l;
stat -c "%a %u:%g %n" /usr/bin/suid /data/by-alice /home/alice/own /etc/passwd /tmp;
readlink /app/passwd-link; cat /app/hello.txt'
want_inside="uid=0(root) gid=0(root)
/app
hello
c 
1
4755 0:0 /usr/bin/suid
640 1000:1000 /data/by-alice
644 1000:1000 /home/alice/own
644 0:0 /etc/passwd
1777 0:0 /tmp
../etc/passwd
hello from the image"

# ---------------------------------------------------------------- the image config

run drun --rm "oci:$IMG/oci"
is "$rc:$out" "0:entry from-cmd" "oci:DIR: Entrypoint + Cmd"
is "$err" "" "the first run unpacks three layers silently when stderr is not a terminal"
run drun --rm "oci:$IMG/oci:latest" a b
is "$rc:$out" "0:entry a b" "oci:DIR:TAG: a command replaces Cmd"
run drun --rm --entrypoint /bin/sh "oci:$IMG/oci" -c 'id -un; pwd; echo $GREETING; echo $PATH'
is "$rc:$out" "0:alice
/app
hello
/usr/bin:/bin" "User, WorkingDir and Env from the image config"
run drun --rm --print-config "oci:$IMG/oci"
is "$(jq -r '.annotations["org.opencontainers.image.stopSignal"]' <<<"$out")" SIGINT \
  "StopSignal is kept as an annotation of the generated config"
run drun --rm "oci:$IMG/oci:nosuchtag"
like "$rc:$err" '^1:.*no image tagged "nosuchtag"' "an unknown tag"

# ---------------------------------------------------------------- three inputs, one result

snap=""
for ref in "oci:$IMG/oci" "oci-archive:$IMG/oci.tar" "docker-archive:$IMG/docker.tar"; do
  run drun --rm -u 0 --entrypoint /bin/sh "$ref" -c "$probe_script"
  is "$rc:$out" "0:$want_inside" "$ref: ownership, modes, whiteout, opaque dir, hard link, symlink"
  [ -z "$snap" ] && snap=$(store_snapshot)
done
oci_layers=$(layers_of "$IMG/oci")
n=0
for l in $oci_layers; do [ -d "$STORE/layers/sha256/$l" ] && n=$((n + 1)); done
is "$n" 3 "the OCI layout and the oci-archive share their three layers in the store"
base_layer=$(head -1 <<<"$oci_layers")
is "$(stat -c %F "$STORE/layers/sha256/$(sed -n 2p <<<"$oci_layers")/etc/deleted-later" 2>/dev/null)" \
  "character special file" "the store keeps the whiteout as overlayfs reads it"
ok "a deleted lower file stays in the store's lower layer" test -f "$STORE/layers/sha256/$base_layer/etc/deleted-later"
sub=$(subid_range /etc/subuid)
if [ -n "$sub" ]; then
  is "$(stat -c %u "$STORE/layers/sha256/$base_layer/home/alice/own")" "$((${sub% *} + 999))" \
    "the store's files belong to the subordinate ids (uid 1000 -> the 1000th)"
else
  skip "no subordinate ids: the store holds only the caller's files"
fi

# ---------------------------------------------------------------- one layer, one key: its diff_id

K=$T_WORK/kstore
krun() { rrt run --rm --storage "$K" "$@"; }
kdirs() { find "$1/layers/sha256" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' '; }
kstate() { find "$1/layers" "$1/tmp" -mindepth 1 -maxdepth 3 -printf '%p %T@\n' | sort; }
diffs=$(layers_of "$IMG/oci" | sort | tr '\n' ' ')
read -r -a blob_a <<<"$(blobs_of "$IMG/oci" | tr '\n' ' ')"
read -r -a diff_a <<<"$(layers_of "$IMG/oci" | tr '\n' ' ')"
run krun "oci-archive:$IMG/oci.tar" true
is "$rc:$(kdirs "$K")" "0:$diffs" "oci-archive (gzip, zstd, plain layers): each stored under its diff_id"
before=$(kstate "$K")
run krun "docker-archive:$IMG/docker.tar" true
is "$rc:$(kdirs "$K")" "0:$diffs" "the same image as docker-archive (plain tars) then: one directory per layer"
is "$(kstate "$K")" "$before" "... none unpacked again, nothing left in tmp/"
run rrt store --storage "$K" ls
has_line "$out" "^layer +${diff_a[0]} +[0-9.]+ (B|KiB|MiB) +diff_id sha256:${diff_a[0]}, blob sha256:${blob_a[0]}\$" \
  "store ls: a layer's key, its diff_id and the blob it was unpacked from"

# A config whose diff_id for layer 1 is not what that layer's blob decompresses to.
"$PY" - "$IMG/oci" "$T_WORK/lying" <<'PYEOF'
import hashlib, json, os, shutil, sys, tarfile
src, out = sys.argv[1], sys.argv[2]
shutil.copytree(src, out + "/oci")
blobs = out + "/oci/blobs/sha256"
def put(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, d), "wb").write(data)
    return d
idx = json.load(open(out + "/oci/index.json"))
man = json.load(open(os.path.join(blobs, idx["manifests"][0]["digest"][7:])))
cfg = json.load(open(os.path.join(blobs, man["config"]["digest"][7:])))
cfg["rootfs"]["diff_ids"][1] = "sha256:" + hashlib.sha256(b"another tar").hexdigest()
c = json.dumps(cfg).encode()
man["config"].update(digest="sha256:" + put(c), size=len(c))
m = json.dumps(man).encode()
idx["manifests"][0].update(digest="sha256:" + put(m), size=len(m))
json.dump(idx, open(out + "/oci/index.json", "w"))
with tarfile.open(out + "/oci.tar", "w") as t:
    for name in sorted(os.listdir(out + "/oci")):
        t.add(os.path.join(out, "oci", name), arcname=name)
PYEOF
lie=$(layers_of "$T_WORK/lying/oci" | sed -n 2p)
run krun "oci-archive:$T_WORK/lying/oci.tar" true
fails_naming "^rootlessrt: run: oci-archive:$T_WORK/lying/oci.tar: layer 1 \(sha256:${blob_a[1]}\): its uncompressed tar is sha256:${diff_a[1]}, but the config's rootfs.diff_ids\[1\] is sha256:$lie: refused$" \
  "a config whose diff_id does not match its layer: refused naming the image, the layer and both digests"
is "$(echo "$err" | wc -l):$(kstate "$K")" "1:$before" "... in one line, nothing left in the store"

# A store made by an earlier version: its OCI layers named by their compressed digests.
O=$T_WORK/oldstore
run rrt run --rm --storage "$O" "oci:$IMG/oci" true
for i in 0 1; do mv "$O/layers/sha256/${diff_a[$i]}" "$O/layers/sha256/${blob_a[$i]}"; done
rm -rf "$O/layers/blobs"
old=$(kdirs "$O")
run rrt run --rm --storage "$O" "oci:$IMG/oci"
is "$rc:$out:$(kdirs "$O")" "0:entry from-cmd:$old" "an old-layout store still runs, its layers used where they are"
run rrt store --storage "$O" ls
has_line "$out" "^layer +${blob_a[0]} +[0-9.]+ (B|KiB|MiB) +\(unpacked by an earlier version" \
  "store ls says which layers an earlier version named"
run rrt store --storage "$K" rm "sha256:${diff_a[0]}"
is "$rc:$(find "$K/layers/blobs/sha256" -name "${blob_a[0]}" | wc -l):$(find "$K/layers/blobs/sha256" -name "${blob_a[1]}" | wc -l)" \
  "0:0:1" "store rm of a layer forgets the blob recorded for it, and only that one"
unshare -r --map-auto rm -rf "$K" "$O" 2>/dev/null

# ---------------------------------------------------------------- podman save

if command -v podman >/dev/null; then
  mkdir -p "$T_WORK/xdg" && chmod 0700 "$T_WORK/xdg"
  prun=$(mktemp -d /tmp/rrt-pr.XXXXXX) # podman wants a runroot of at most 50 characters
  pod() {
    XDG_RUNTIME_DIR=$T_WORK/xdg podman --root "$T_WORK/proot" --runroot "$prun" \
      --cgroup-manager cgroupfs --events-backend none "$@"
  }
  mkdir -p "$T_WORK/prootfs"
  tar -C "$T_WORK/prootfs" -xf "$IMG/docker.tar" "$(jq -r '.[0].Layers[0]' <(tar -xOf "$IMG/docker.tar" manifest.json))" 2>/dev/null
  if pod import --change 'CMD ["/bin/echo", "imported"]' "$T_WORK/prootfs"/*.tar localhost/rrt-imported >/dev/null 2>"$T_WORK/pod.err" &&
    pod save --format oci-archive -o "$T_WORK/podman-oci.tar" localhost/rrt-imported 2>>"$T_WORK/pod.err" &&
    pod save --format docker-archive -o "$T_WORK/podman-docker.tar" localhost/rrt-imported 2>>"$T_WORK/pod.err"; then
    for f in oci-archive:"$T_WORK/podman-oci.tar" docker-archive:"$T_WORK/podman-docker.tar"; do
      run drun --rm "$f"
      is "$rc:$out" "0:imported" "podman save (${f%%:*}) of an image podman imported"
    done
  else
    diag "$(cat "$T_WORK/pod.err")"
    skip "podman cannot import and save an image as $(id -un) here" 2
  fi
  pod system reset -f >/dev/null 2>&1
  rm -rf "$prun"
else
  skip "podman is not installed" 2
fi

# ---------------------------------------------------------------- the store is never written

before=$(store_snapshot)
run drun --rm -u 0 --entrypoint /bin/sh "oci:$IMG/oci" -c 'rm -rf /olddir /bin/rrt-probe; echo x >/etc/passwd; chmod 700 /app; chown 5:5 /data/by-alice'
is "$rc" 0 "a container deletes, rewrites and chowns files of the image"
is "$(store_snapshot)" "$before" "the store's layers are unchanged by it"
is "$(ls "$STORE/containers")" "" "--rm: no upper directory left"
run drun --rm -u 0 --entrypoint cat "oci:$IMG/oci" /etc/passwd
is "$(head -c 5 <<<"$out")" "root:" "the next container sees the image again"

# ---------------------------------------------------------------- verification and hostile tars

cp -r "$IMG/oci" "$T_WORK/corrupt"
top=$(tail -1 <<<"$oci_layers")
chmod u+w "$T_WORK/corrupt/blobs/sha256/$top"
printf 'X' | dd of="$T_WORK/corrupt/blobs/sha256/$top" bs=1 seek=600 conv=notrunc 2>/dev/null
mv "$STORE/layers/sha256/$top" "$T_WORK/top.saved"
run drun --rm "oci:$T_WORK/corrupt"
like "$rc:$err" "^1:.*digest mismatch: expected sha256:$top" "a flipped byte in a layer: refused, the digest named"
ok "... and the layer is not in the store" test ! -e "$STORE/layers/sha256/$top"
is "$(ls -A "$STORE/tmp")" "" "... nor half of it"
mv "$T_WORK/top.saved" "$STORE/layers/sha256/$top"

m=$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$T_WORK/corrupt/index.json")
chmod u+w "$T_WORK/corrupt/blobs/sha256/$m"
sed -i 's/schemaVersion/schemaVersioN/' "$T_WORK/corrupt/blobs/sha256/$m"
run drun --rm "oci:$T_WORK/corrupt"
like "$rc:$err" "^1:.*manifest sha256:$m: digest mismatch" "a changed manifest: refused"

# A docker-archive whose layer.tar is not its diff_id, while the store holds that diff_id (the
# same image ran before): refused all the same, never run from the stored layer.
mkdir "$T_WORK/dcorrupt"
tar -C "$T_WORK/dcorrupt" -xf "$IMG/docker.tar"
dlayer=$(jq -r '.[0].Layers[-1]' "$T_WORK/dcorrupt/manifest.json")
ddiff=$(jq -r '.rootfs.diff_ids[-1] | sub("sha256:"; "")' "$T_WORK/dcorrupt/$(jq -r '.[0].Config' "$T_WORK/dcorrupt/manifest.json")")
chmod u+w "$T_WORK/dcorrupt/$dlayer"
# The last byte of the tar's end-of-archive padding: the tar still reads the same.
printf 'X' | dd of="$T_WORK/dcorrupt/$dlayer" bs=1 seek=$(($(stat -c %s "$T_WORK/dcorrupt/$dlayer") - 1)) conv=notrunc 2>/dev/null
(cd "$T_WORK/dcorrupt" && tar -cf "$T_WORK/dcorrupt.tar" -- *)
ok "the store holds that diff_id" test -d "$STORE/layers/sha256/$ddiff"
run drun --rm "docker-archive:$T_WORK/dcorrupt.tar" true
like "$rc:$err" "^1:rootlessrt: run: docker-archive:.*layer ${dlayer//./\\.}: digest mismatch: expected sha256:$ddiff" \
  "docker-archive: a layer.tar that is not its diff_id is refused though the store holds the layer"
is "$(printf '%s\n' "$err" | wc -l)" 1 "... in one line"
ok "... and the stored layer stays" test -d "$STORE/layers/sha256/$ddiff"

mkdir -p "$T_WORK/outside"
for kind in dotdot absolute symlink device; do
  /usr/bin/python3 "$CONTRIB_DIR/mkimage.py" "$T_WORK/evil-$kind" --evil "$kind" --outside "$T_WORK/outside"
  run drun --rm "oci:$T_WORK/evil-$kind/oci" /ok
  case $kind in
    dotdot) like "$rc:$err" '^1:.*"../escape" leads out of the layer' "a ../ entry is refused" ;;
    absolute) like "$rc:$err" '^1:.*"/abs" has an absolute name' "an absolute entry is refused" ;;
    symlink) is "$rc" 1 "a file written through a symlink out of the layer is refused" ;;
    device)
      l=$(layers_of "$T_WORK/evil-$kind/oci")
      ok "a device node is not unpacked" test -f "$STORE/layers/sha256/$l/ok" -a ! -e "$STORE/layers/sha256/$l/sda"
      ;;
  esac
done
escaped=$(find "$T_WORK" -name escape 2>/dev/null)
is "$(ls -A "$T_WORK/outside"):$escaped" ":" "nothing was written outside the store"
ok "no /abs on the host" test ! -e /abs

# ---------------------------------------------------------------- an interrupted unpack

# A layer of 20,000 files takes a while to unpack: the runtime is killed once it is writing it
# (a poller sees its directory in tmp/). Blobs are regular files only (a FIFO is refused).
SLOW=$T_WORK/slow
cp -r "$IMG/oci" "$SLOW"
"$PY" - "$SLOW" <<'PYEOF'
import hashlib, io, json, os, sys, tarfile
layout = sys.argv[1]
blobs = os.path.join(layout, "blobs", "sha256")
def put(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, d), "wb").write(data)
    return d
idx = json.load(open(os.path.join(layout, "index.json")))
man = json.load(open(os.path.join(blobs, idx["manifests"][0]["digest"][7:])))
cfg = json.load(open(os.path.join(blobs, man["config"]["digest"][7:])))
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
    for i in range(20000):
        ti = tarfile.TarInfo("slow/%05d" % i)
        ti.size, ti.mtime = 2, 1700000000
        t.addfile(ti, io.BytesIO(b"s\n"))
data = buf.getvalue()
d = put(data)
man["layers"].append({"mediaType": "application/vnd.oci.image.layer.v1.tar",
                      "digest": "sha256:" + d, "size": len(data)})
cfg["rootfs"]["diff_ids"].append("sha256:" + d)
c = json.dumps(cfg).encode()
man["config"].update(digest="sha256:" + put(c), size=len(c))
m = json.dumps(man).encode()
idx["manifests"][0].update(digest="sha256:" + put(m), size=len(m))
json.dump(idx, open(os.path.join(layout, "index.json"), "w"))
PYEOF
slow_layer=$(layers_of "$SLOW" | tail -1)
killed=$("$PY" -c '
import glob, os, signal, sys, time
pid = os.fork()
if pid == 0:
    fd = os.open("/dev/null", os.O_RDWR)
    for i in range(3):
        os.dup2(fd, i)
    os.execv(sys.argv[2], sys.argv[2:])
deadline = time.monotonic() + 60
while time.monotonic() < deadline and not glob.glob(sys.argv[1] + "/tmp/*/slow/00100"):
    if os.waitpid(pid, os.WNOHANG)[0]:
        print("exited before the unpack")
        sys.exit()
    time.sleep(0.002)
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
print("killed" if glob.glob(sys.argv[1] + "/tmp/*/slow") else "not seen unpacking")
' "$STORE" "$RRT" --root "$RRT_ROOT" run --storage "$STORE" "oci:$SLOW" true)
is "$killed" killed "the runtime is killed while it unpacks a layer"
ok "killed during the unpack: the layer is not in the store" test ! -e "$STORE/layers/sha256/$slow_layer"
no_procs() { test -z "$(procs_referencing "$1")"; }
wait_until 10 no_procs "$STORE"
run drun --rm "oci:$SLOW"
is "$rc:$out" "0:entry from-cmd" "the next run unpacks it again"
is "$(ls -A "$STORE/tmp")" "" "... and removes what the killed one left"
ok "... and the layer is whole in the store" test -f "$STORE/layers/sha256/$slow_layer/slow/19999"

# On a terminal, an unpack shows its progress.
top=$(tail -1 <<<"$oci_layers")
mv "$STORE/layers/sha256/$top" "$T_WORK/top.saved"
run script -qec "$(printf '%q ' "$RRT" --root "$RRT_ROOT" run --rm --storage "$STORE" "oci:$IMG/oci" true)" /dev/null
like "$out" "layer 1/1 sha256:${top:0:12}… [0-9.]+ MiB / [0-9.]+ MiB \\(100%\\)" "on a tty: progress (layer N/M, digest, MiB done / total, percentage)"
unshare -r --map-auto rm -rf "$T_WORK/top.saved" 2>/dev/null

# ---------------------------------------------------------------- both overlay mechanisms

fuse_ok=""
if ! command -v fuse-overlayfs >/dev/null; then
  fuse_skip="fuse-overlayfs is not installed"
elif [ ! -r /dev/fuse ] || [ ! -w /dev/fuse ]; then
  fuse_skip="/dev/fuse is not readable and writable by $(id -un) (mode $(stat -c %a /dev/fuse))"
else
  fuse_ok=1
fi
for mech in kernel fuse; do
  if [ "$mech" = fuse ] && [ -z "$fuse_ok" ]; then
    run drun --rm --overlay fuse "oci:$IMG/oci"
    like "$rc:$err" "^1:.*fuse-overlayfs" "--overlay fuse without fuse-overlayfs: a clear error"
    skip "$fuse_skip" 7
    continue
  fi
  run drun --rm --overlay "$mech" -u 0 --entrypoint /bin/sh "oci:$IMG/oci" -c "$probe_script"
  is "$rc:$out" "0:$want_inside" "--overlay $mech: the image as it is"
  run drun --rm --overlay "$mech" -u 0 --entrypoint /bin/sh "oci:$IMG/oci" -c \
    'awk "\$5 == \"/\" {for (i = 7; i <= NF; i++) if (\$i == \"-\") {print \$(i + 1); exit}}" /proc/self/mountinfo'
  case $mech in
    kernel) is "$out" overlay "--overlay kernel: the root is kernel overlayfs" ;;
    fuse) is "$out" fuse.fuse-overlayfs "--overlay fuse: the root is fuse-overlayfs" ;;
  esac
  # Much written, then the container exits: nothing may wait on the overlay's own daemon.
  run drun --rm --overlay "$mech" -u 0 --entrypoint /bin/sh "oci:$IMG/oci" -c \
    'dd if=/dev/zero of=/big bs=1M count=200 2>/dev/null && sync -d /big && stat -c %s /big'
  is "$rc:$out" "0:209715200" "--overlay $mech: 200 MiB written and synced, and the run ends"
  before=$(store_snapshot)
  a=$(new_id "$mech-a")
  b=$(new_id "$mech-b")
  drun -d --rm --overlay "$mech" --name "$a" -u 0 --entrypoint /bin/sh "oci:$IMG/oci" -c 'echo A >/app/who; rm /app/hello.txt; sleep 60' >/dev/null
  drun -d --rm --overlay "$mech" --name "$b" -u 0 --entrypoint /bin/sh "oci:$IMG/oci" -c 'echo B >/app/who; sleep 60' >/dev/null
  wait_until 10 rrt exec "$a" test -e /app/who
  wait_until 10 rrt exec "$b" test -e /app/who
  run rrt exec "$a" sh -c 'cat /app/who; ls /app'
  out_a=$out
  run rrt exec "$b" sh -c 'cat /app/who; ls /app'
  is "$out_a|$out" "A
passwd-link
who|B
hello.txt
passwd-link
who" "--overlay $mech: two containers of one image at once, each with its changes"
  pid=$(state_field "$a" .pid)
  kill -KILL "$pid"
  wait_status "$a" stopped 10
  ok "--overlay $mech: kill -9 of the container leaves no overlay process" \
    test -z "$(procs_referencing "$STORE/containers/$a")"
  rrt delete -f "$a" >/dev/null 2>&1
  rrt delete -f "$b" >/dev/null 2>&1
  is "$(store_snapshot):$(ls "$STORE/containers")" "$before:" \
    "--overlay $mech: the store unchanged, --rm left no upper directory"
  nothing_left "$b" "$STORE/containers/$b" "--overlay $mech: no mount, no process left"
done

# fuse-overlayfs gets stdio and nothing else of the runtime's: a stand-in lists its fds as the
# error the runtime reports (rrt-probe as "fuse-overlayfs": static, as it runs in a root holding
# the libraries, not a shell).
if [ -r /dev/fuse ] && [ -w /dev/fuse ]; then
  export ROOTLESSRT_FUSE_OVERLAYFS=$PROBE
  run drun --rm -i --overlay fuse "oci:$IMG/oci" true
  like "$rc:$err" '^1:.*fuse-overlayfs failed.* 0 -> /dev/null.* 2 -> pipe:' "fuse-overlayfs: stdin /dev/null, stderr the runtime's pipe"
  unlike "$err" ' ([3-9]|[0-9][0-9]+) -> /dev/null' "fuse-overlayfs: no /dev/null fd of the runtime's beyond stdio"
  b=$(mkbundle fuse-fds true)
  mv "$b/rootfs" "$b/lower" && mkdir -p "$b/rootfs" "$b/upper" "$b/work"
  cfg "$b" '.root.readonly = false | .annotations["rootlessrt.overlay"] = "fuse" |
    .mounts = [{destination: "/", type: "overlay", source: "overlay",
    options: ["lowerdir=lower", "upperdir=upper", "workdir=work"]}] + .mounts'
  run rrt run -b "$b" "$(new_id ff)"
  unset ROOTLESSRT_FUSE_OVERLAYFS
  like "$rc:$err" '^1:.*fuse-overlayfs failed.* 0 -> /dev/null.* 2 -> pipe:' "fuse-overlayfs of a bundle: stdin /dev/null, stderr the runtime's pipe"
  unlike "$err" ' ([3-9]|[0-9][0-9]+) -> /dev/null' "fuse-overlayfs of a bundle: no /dev/null fd beyond stdio"
else
  skip "/dev/fuse is not readable and writable by $(id -un)" 4
fi

if [ -n "$fuse_ok" ]; then
  # A runtime killed during create: a createRuntime hook holds it there.
  b=$(mkbundle fuse-kill true)
  mv "$b/rootfs" "$b/lower" && mkdir -p "$b/rootfs" "$b/upper" "$b/work"
  cfg "$b" '.root.readonly = false | .annotations["rootlessrt.overlay"] = "fuse" |
    .mounts = [{destination: "/", type: "overlay", source: "overlay",
    options: ["lowerdir=\($b)/lower", "upperdir=\($b)/upper", "workdir=\($b)/work"]}] + .mounts |
    .hooks.createRuntime = [{path: "/bin/sh", args: ["sh", "-c", "echo $$ >\($b)/hook.pid; touch \($b)/in-hook; exec sleep 60"]}]' \
    --arg b "$b"
  rrt_bg "$T_WORK/fuse-kill.out" run -b "$b" "$(new_id fk)"
  wait_until 20 test -e "$b/in-hook"
  fuse_procs() { procs_referencing "$b" | grep fuse-overlayfs; }
  ok "fuse-overlayfs runs while create waits" test -n "$(fuse_procs)"
  kill -KILL "$RRT_BG_PID"
  wait "$RRT_BG_PID" 2>/dev/null
  no_fuse() { test -z "$(fuse_procs)"; }
  ok "kill -9 of the runtime during create: no fuse-overlayfs left" wait_until 10 no_fuse
  kill "$(cat "$b/hook.pid")" 2>/dev/null
else
  skip "$fuse_skip" 2
fi

# ---------------------------------------------------------------- a run killed half way
# kill -9 of the runtime at a sweep of instants of a foreground --rm run: `delete -f` of what
# `list` shows, and the next run, remove everything it left (bundle, container directory).
# (A .new-ID.XXXXXX bundle a run killed in its first instant left goes a minute later.)
run_leftovers() {
  find "$RRT_ROOT/.run" "$STORE/containers" -mindepth 1 -maxdepth 1 \
    ! -name '.new-*' ! -name .spare -printf '%f\n' 2>/dev/null
}
dur=$(kill_after -1 "$RRT" --root "$RRT_ROOT" run --storage "$STORE" --rm "oci:$IMG/oci" true)
[[ $dur =~ ^[0-9]+$ ]] || dur=300000
bad="" killed=0
for ((i = 0; i < 12; i++)); do
  d=$((dur * 13 * i / 10 / 12))
  res=$(kill_after "$d" "$RRT" --root "$RRT_ROOT" run --storage "$STORE" --rm "oci:$IMG/oci" true)
  [ "$res" = killed ] && killed=$((killed + 1))
  for c in $(rrt list -q 2>/dev/null); do rrt delete -f "$c" >/dev/null 2>&1; done
  drun --rm "oci:$IMG/oci" true >/dev/null 2>&1
  left=$(run_leftovers | tr '\n' ' ')
  [ -z "$left" ] || bad+=" ${d}us($left)"
done
diag "a run took ${dur} us; $killed of 12 runs killed"
is "${bad# }" "" "a --rm run killed at any instant leaves nothing once deleted and after the next run"
ok "the sweep did kill runs half way" test "$killed" -gt 0

# ---------------------------------------------------------------- many layers
# 80 layers: the kernel overlay's options pass a page (mount(2)'s limit, about 30 of a store's
# layer paths), so they go one layer at a time (fsconfig lowerdir+); each layer's file is seen.
MANY=$T_WORK/many
cp -r "$IMG/oci" "$MANY"
"$PY" - "$MANY" 80 <<'PYEOF'
import hashlib, io, json, os, sys, tarfile
layout, n = sys.argv[1], int(sys.argv[2])
blobs = os.path.join(layout, "blobs", "sha256")
def put(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, d), "wb").write(data)
    return d
idx = json.load(open(os.path.join(layout, "index.json")))
man = json.load(open(os.path.join(blobs, idx["manifests"][0]["digest"][7:])))
cfg = json.load(open(os.path.join(blobs, man["config"]["digest"][7:])))
for i in range(n):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        body = ("layer %d\n" % i).encode()
        ti = tarfile.TarInfo("many/%02d" % i)
        ti.size, ti.mode, ti.mtime = len(body), 0o644, 1700000000
        t.addfile(ti, io.BytesIO(body))
    data = buf.getvalue()
    d = put(data)
    man["layers"].append({"mediaType": "application/vnd.oci.image.layer.v1.tar",
                          "digest": "sha256:" + d, "size": len(data)})
    cfg["rootfs"]["diff_ids"].append("sha256:" + d)
c = json.dumps(cfg).encode()
man["config"].update(digest="sha256:" + put(c), size=len(c))
m = json.dumps(man).encode()
idx["manifests"][0].update(digest="sha256:" + put(m), size=len(m))
json.dump(idx, open(os.path.join(layout, "index.json"), "w"))
PYEOF
run drun --rm --overlay kernel --entrypoint /bin/sh "oci:$MANY" -c 'ls /many | wc -l; cat /many/00 /many/79'
is "$rc:$out" "0:80
layer 0
layer 79" "an image of 83 layers runs on the kernel overlay (--overlay kernel): every layer seen"
[ "$rc" = 0 ] || diag "$err"

done_testing
