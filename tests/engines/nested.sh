#!/bin/bash
# nested.sh RUNTIME: RUNTIME where CI jobs run it, nested in the container a CI system gives a job
# (issue 29). In each place a job (nested-inner.sh) runs a `spec --rootless` busybox bundle with
# and without a pid namespace, a desktop `run --rm oci-archive:` with --network slirp, and
# `check`, and after each run that nothing is new in its container (a process, a mount, a file
# where a runtime writes):
#   rrt-*     inside rootlessrt's own rootless container (a bundle binding the host's /usr and
#             /etc read-only, made by RUNTIME as the test user): uid 0 with spec --rootless's
#             three capabilities (refused in one line: the kernel asks CAP_SETFCAP to map uid 0),
#             uid 0 with Docker's 14, uid 1000 with none; uid 1000 with newuidmap/newgidmap
#             (file capabilities, the image's /etc/subuid) under Docker's bounding set (both
#             ranges) and under the three (its own id alone); uid 0 with the three, no_new_privs
#             off and the helpers, setuid root as Debian ships them or with file capabilities
#             (refused in one line: no helper run by uid 0 has CAP_SETFCAP either); then what
#             cannot work, one line each:
#             an outer seccomp profile refusing user namespaces, user.max_user_namespaces = 0,
#             no /dev/net/tun for slirp; and a read-only root without /tmp nor XDG_RUNTIME_DIR
#             (the state goes to /dev/shm);
#   podman-*  inside rootless podman's default container (refusing slirp for want of
#             /dev/net/tun), and with --security-opt seccomp=unconfined --device /dev/net/tun;
#   docker-*  inside rootful Docker (a dockerd of its own, runc) with seccomp and AppArmor
#             unconfined, no --privileged (GitLab's runners), as root and as USER 1000 with
#             /dev/net/tun, as root without it (GitLab's default: slirp refused in one line), and
#             in Docker's default container (its seccomp profile: the one-line refusal);
#   cri-*     inside a Kubernetes pod through containerd's CRI (runc, a non-privileged
#             securityContext, the host's network and IPC namespaces, /dev/net/tun), as uid 0
#             and as runAsUser 1000.
# The outer containers bind the host's /usr read-only (a Debian CI image), the runtime's files
# read-only and a work directory; images are made offline (oci-image.sh). A place whose engine
# is missing is skipped with the reason. Real root only (it starts the engines and sets up the
# test user). Prints TAP-like lines and "nested: N passed, N failed, N skipped".
# Knobs: RRT_NESTED_PLACES="rrt podman docker cri" (the engines to run, in that order),
# RRT_NESTED_ONLY="root3 cri ..." (only those places by name, without "rrt-": the others are
# skipped), RRT_NESTED_TIMEOUT (180 s per place), NESTED_DEBUG=1 (the runtime's warnings and
# check's report in the output), RRT_KEEP=1 (the work dir is kept).
set -u
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tap.sh
source "$here/tap.sh"
# shellcheck source=daemon.sh
source "$here/daemon.sh"

N_JOB=9 # the lines nested-inner.sh prints
PLACES_RRT=12 PLACES_PODMAN=3 PLACES_DOCKER=4 PLACES_CRI=2
T=${RRT_NESTED_TIMEOUT:-180} # seconds per place
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Internal: nested.sh --cri WORK BIN UID, in a private mount namespace: containerd with its CRI
# plugin (runc as the handler, as a cluster has it), a pod, the job's container (cri.py); prints
# the job's lines.
if [ "${1:-}" = --cri ]; then
  W=$2/cri-$4 BIN=$3 as=$4
  mkdir -p "$W" && mount -t tmpfs -o mode=0755 cri-work "$W" || exit 2
  mkdir -p "$W/root" "$W/state" "$W/runc" "$W/cni" "$W/job"
  ctrd_pid=""
  cri_cleanup() {
    local cg
    [ -n "$ctrd_pid" ] && kill "$ctrd_pid" 2>/dev/null && wait "$ctrd_pid" 2>/dev/null
    # The shims this containerd started (their command line names its address in W), by pid.
    local p
    for p in /proc/[0-9]*; do
      case $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) in
        *containerd-shim-runc-v2*"-address $W/"*) kill -KILL "${p#/proc/}" 2>/dev/null ;;
      esac
    done
    for cg in /sys/fs/cgroup/*/rrt-nested-cri-$$ /sys/fs/cgroup/rrt-nested-cri-$$; do
      [ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
    umount -R "$W" 2>/dev/null
  }
  trap cri_cleanup EXIT
  restrict=false
  [ $((0x$(awk '/^CapBnd:/ {print $2}' /proc/self/status) >> 24 & 1)) -eq 0 ] && restrict=true
  {
    containerd_config "$W"
    cat <<TOML
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/rrt/pause:test"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  restrict_oom_score_adj = $restrict
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$W/cni"
    conf_dir = "$W/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$W/runc"
TOML
  } >"$W/config.toml"
  if ! start_containerd "$W"; then
    echo "not ok - containerd with its CRI plugin starts"
    tail -n 20 "$W/containerd.log" | sed 's/^/#   /'
    exit 1
  fi
  ctr_() { timeout -k 5 60 ctr --address "$W/c.sock" -n k8s.io "$@"; }
  if ! OCI_IMAGE_CMD='["sleep","2147483647"]' bash "$here/oci-image.sh" "$W/pause.tar" \
    docker.io/rrt/pause:test >"$W/img.log" 2>&1 || ! ctr_ images import "$W/pause.tar" >>"$W/img.log" 2>&1 ||
    ! ctr_ images import "$BIN/image.tar" >>"$W/img.log" 2>&1; then
    echo "not ok - the images are imported"
    sed 's/^/#   /' "$W/img.log"
    exit 1
  fi
  chmod 1777 "$W/job"
  job=$(jq -cn --arg bin "$BIN" --arg w "$W/job" --argjson uid "$as" --arg debug "${NESTED_DEBUG:-0}" '{
    name: "nested-\($uid)", run_as_user: $uid, envs: {NESTED_DEBUG: $debug, NESTED_HOST_SHM: "1"},
    command: ["sh", "/nested/bin/nested-inner.sh", "/nested/bin", "/job", "ok", "same"],
    mounts: [["/usr", "/usr", true], ["/usr/lib", "/lib", true], ["/usr/lib64", "/lib64", true],
             [$bin, "/nested/bin", true], [$w, "/job", false]],
    devices: ["/dev/net/tun"]}')
  CRI_NESTED_JOB=$job CRI_IMAGE=docker.io/rrt/nested:test CRI_CGROUP_PARENT=/rrt-nested-cri-$$ \
    CRI_NESTED_TIMEOUT=$((T - 30)) /usr/bin/python3 "$here/cri.py" "$W/c.sock" runc "$W"
  exit 0
fi

[ $# -eq 1 ] || {
  echo "usage: nested.sh RUNTIME" >&2
  exit 2
}
runtime=$(readlink -f "$1") && [ -x "$runtime" ] || {
  echo "nested: no runtime $1" >&2
  exit 2
}
all=$((N_JOB * (PLACES_RRT + PLACES_PODMAN + PLACES_DOCKER + PLACES_CRI)))
if [ "$(id -u)" -ne 0 ] || [ "$(awk 'NR == 1 {print $3}' /proc/self/uid_map)" != 4294967295 ]; then
  skip_suite nested "needs real root to set up its user and start the engines" "$all"
fi
[ -x /bin/busybox ] || skip_suite nested "no static busybox at /bin/busybox (busybox-static)" "$all"
command -v jq >/dev/null || skip_suite nested "jq is not installed" "$all"
user=${RRT_TEST_USER:-rrt-test}
uid=$(bash "$here/../../contrib/ensure-user.sh" "$user") || skip_suite nested "cannot set up $user" "$all"
gid=$(id -g "$user")

work=$(mktemp -d /tmp/rrt-nested.XXXXXX) || exit 2
chmod 0755 "$work"
BIN=$work/bin
daemon_pid="" ctrd_pid=""
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  [ -n "$ctrd_pid" ] && kill "$ctrd_pid" 2>/dev/null && wait "$ctrd_pid" 2>/dev/null
  [ "${RRT_KEEP:-0}" = 1 ] && echo "# nested: work dir kept: $work" && return
  # The test user's stores hold files of its subordinate ids.
  [ -d "$work/rrt" ] && setpriv --reuid="$uid" --regid="$gid" --init-groups \
    "$BIN/rootlessrt" --root "$work/rrt-state" list -q 2>/dev/null |
    while read -r id; do
      setpriv --reuid="$uid" --regid="$gid" --init-groups "$BIN/rootlessrt" --root "$work/rrt-state" delete -f "$id"
    done
  awk -v w="$work/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r |
    while read -r m; do umount -l "$m"; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

mkdir -p "$BIN" "$work/rrt-state" || exit 2
chown "$uid:$gid" "$work/rrt-state" && chmod 0700 "$work/rrt-state"
install -m 0755 "$runtime" "$BIN/rootlessrt" || exit 2
[ -x "$(dirname "$runtime")/rootlessrt-net" ] && install -m 0755 "$(dirname "$runtime")/rootlessrt-net" "$BIN/"
install -m 0755 /bin/busybox "$BIN/busybox" || exit 2
install -m 0755 "$here/nested-inner.sh" "$BIN/nested-inner.sh" || exit 2
bash "$here/oci-image.sh" --docker "$BIN/image.tar" docker.io/rrt/nested:test >"$work/image.log" 2>&1 ||
  {
    fail "the image tarball is made" "$(cat "$work/image.log")"
    summary nested
    exit 1
  }
chmod -R a+rX "$BIN"

# job NAME CMD...: runs CMD, which runs nested-inner.sh in the outer container of place NAME;
# its lines are counted with "NAME: " before them; a job that did not print them all fails.
job() {
  local name=$1 out rc n line
  shift
  if [ -n "${RRT_NESTED_ONLY:-}" ] && ! [[ " $RRT_NESTED_ONLY " == *" ${name#rrt-} "* ]]; then
    skip "$name: not in RRT_NESTED_ONLY" "$N_JOB"
    return
  fi
  out=$(timeout -k 10 "$T" "$@" 2>&1)
  rc=$?
  n=0
  while IFS= read -r line; do
    case $line in
      "ok - "*) pass "$name: ${line#ok - }" && n=$((n + 1)) ;;
      "not ok - "*) N_FAIL=$((N_FAIL + 1)) && echo "not ok - $name: ${line#not ok - }" && n=$((n + 1)) ;;
      "#"*) echo "$line" ;;
    esac
  done <<<"$out"
  if [ "$n" -lt "$N_JOB" ]; then
    fail "$name: the job ran to its end ($n of $N_JOB checks; exit status $rc)" "$(tail -n 15 <<<"$out")"
    N_FAIL=$((N_FAIL + N_JOB - n - 1))
  fi
}

# ---------------------------------------------------------------- inside rootlessrt's own container

DOCKER_CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW",
 "CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT",
 "CAP_KILL","CAP_AUDIT_WRITE"]'
# An outer seccomp profile as Docker's default is for user namespaces: unshare refused, clone
# refused with CLONE_NEWUSER (0x10000000), clone3 ENOSYS (so that clone is used).
SECCOMP_NO_USERNS='{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
 {"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
 {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
 {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
  "args": [{"index": 0, "value": 268435456, "valueTwo": 268435456, "op": "SCMP_CMP_MASKED_EQ"}]}]}'

# rrt_place NAME EXPECT EXPECT_NET JQ-FILTER [JOB-PREFIX]: a bundle binding the host's /usr and
# /etc read-only, the runtime's files on /nested/bin, a tmpfs /tmp, /dev/net/tun, and a job run
# by the test user with the runtime as the outer engine; JQ-FILTER changes the config after.
rrt_place() {
  local name=$1 expect=$2 expect_net=$3 filter=$4 prefix=${5:-}
  local d=$work/rrt/$name
  mkdir -p "$d/rootfs" "$d/build" && (cd "$d/rootfs" &&
    mkdir -p usr etc proc sys dev tmp run root build nested/bin && ln -s usr/bin bin &&
    ln -s usr/sbin sbin && ln -s usr/lib lib && ln -s usr/lib64 lib64) || return 1
  (cd "$d" && "$BIN/rootlessrt" spec --rootless) || return 1
  jq --arg bin "$BIN" --arg build "$d/build" --arg e "$expect" --arg en "$expect_net" \
    --arg pre "$prefix" --arg debug "${NESTED_DEBUG:-0}" --argjson dcaps "$DOCKER_CAPS" --argjson sc "$SECCOMP_NO_USERNS" '
    .process.terminal = false | .hostname = "outer" |
    .process.args = ["/bin/sh", "-c", ($pre + "exec /bin/sh /nested/bin/nested-inner.sh /nested/bin \"$W\" \"$0\" \"$1\""), $e, $en] |
    .process.env += ["W=/tmp/job", "NESTED_DEBUG=" + $debug] |
    .mounts += [
      {destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro", "nosuid", "nodev"]},
      {destination: "/etc", type: "bind", source: "/etc", options: ["rbind", "ro", "nosuid", "nodev"]},
      {destination: "/nested/bin", type: "bind", source: $bin, options: ["bind", "ro"]},
      {destination: "/build", type: "bind", source: $build, options: ["bind", "rw"]},
      {destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777"]},
      {destination: "/run", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=755"]}] |
    .linux.devices = [{path: "/dev/net/tun", type: "c", major: 10, minor: 200, fileMode: 438}] |
    '"$filter" "$d/config.json" >"$d/config.new" && mv "$d/config.new" "$d/config.json" || return 1
  chown -R "$uid:$gid" "$d"
  # The outer uid 1000 is the test user's subordinate id 999 (its first range; rootlessrt's map).
  local sub
  sub=$(awk -F: -v u="$user" '$1 == u {print $2 + 999; exit}' /etc/subuid)
  [ -n "$sub" ] && chown "$sub:$sub" "$d/build"
  job "rrt-$name" setpriv --reuid="$uid" --regid="$gid" --init-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work" \
    "$BIN/rootlessrt" --root "$work/rrt-state" run -b "$d" "nested-$name"
}

rrt_places() {
  local caps14='.process.capabilities = {bounding: $dcaps, effective: $dcaps, permitted: $dcaps} |
    .process.noNewPrivileges = false'
  local u1000='.process.user = {uid: 1000, gid: 1000} | .process.capabilities = {}'

  rrt_place root3 "fail:uid 0 of this container may map itself into a new user namespace only with CAP_SETFCAP.*: add CAP_SETFCAP" same '.'
  rrt_place root14 ok same "$caps14"
  rrt_place user1000 ok same "$u1000"
  rrt_place seccomp "fail:the outer container's seccomp profile refuses user namespaces: run it with --security-opt seccomp=unconfined" same \
    "$u1000 | .linux.seccomp = \$sc"
  # Root of the outer container lowers the limit of its own user namespace (CAP_SYS_RESOURCE
  # there; /proc/sys writable), then runs the job.
  rrt_place maxuserns "fail:user.max_user_namespaces = 0 here: raise it" same \
    "$caps14 | .process.capabilities |= map_values(. + [\"CAP_SYS_RESOURCE\"]) |
     .linux.readonlyPaths -= [\"/proc/sys\"]" 'echo 0 >/proc/sys/user/max_user_namespaces || exit 3; '
  rrt_place notun ok "fail:/dev/net/tun" "$u1000 | .linux.devices = []"
  # As podman's own images ship it: /etc/subuid and /etc/subgid of the image (two ranges around
  # the user's own id), newuidmap and newgidmap with file capabilities (not setuid), a bounding
  # set with CAP_SETUID and CAP_SETGID and no no_new_privs: the helpers map both ranges.
  local e=$work/rrt/helpers-etc h=$work/helpers
  mkdir -p "$e" "$h"
  printf 'root:x:0:0::/root:/bin/sh
ci:x:1000:1000::/build:/bin/sh
' >"$e/passwd"
  printf 'root:x:0:
ci:x:1000:
' >"$e/group"
  printf 'ci:1:999
ci:1001:64535
' | tee "$e/subuid" >"$e/subgid"
  if command -v setcap >/dev/null && install -m 0755 /usr/bin/newuidmap /usr/bin/newgidmap "$h/" &&
    setcap cap_setuid+ep "$h/newuidmap" && setcap cap_setgid+ep "$h/newgidmap"; then
    rrt_place helpers ok same "$u1000 | .process.noNewPrivileges = false |
      .process.capabilities = {bounding: \$dcaps} |
      .mounts |= map(if .destination == \"/etc\" then .source = \"$e\" else . end) |
      .mounts += [{destination: \"/nested/helpers\", type: \"bind\", source: \"$h\", options: [\"bind\", \"ro\"]}] |
      .process.env |= map(select(startswith(\"PATH=\") | not)) |
      .process.env += [\"PATH=/nested/helpers:/usr/bin:/bin\", \"NESTED_MAP_LINES=3\"]"
    # The same helpers under spec --rootless's bounding set, without CAP_SETUID and CAP_SETGID:
    # the kernel refuses to run a file whose capabilities the bounding set lacks, so the job
    # maps its own id alone.
    rrt_place helpers3 ok same "$u1000 | .process.noNewPrivileges = false |
      .process.capabilities = {bounding: [\"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\"]} |
      .mounts |= map(if .destination == \"/etc\" then .source = \"$e\" else . end) |
      .mounts += [{destination: \"/nested/helpers\", type: \"bind\", source: \"$h\", options: [\"bind\", \"ro\"]}] |
      .process.env |= map(select(startswith(\"PATH=\") | not)) |
      .process.env += [\"PATH=/nested/helpers:/usr/bin:/bin\", \"NESTED_MAP_LINES=1\"]"
  else
    skip "rrt-helpers: setcap (libcap2-bin) cannot give a copy of newuidmap file capabilities" $((2 * N_JOB))
  fi
  # A root job with spec --rootless's three capabilities, no no_new_privs (as a CI engine runs a
  # job), /etc/subuid and /etc/subgid ranges for root, and newuidmap/newgidmap, as Debian ships
  # them (setuid root; owned by the job's root, as an image's are) and with file capabilities as
  # the helpers place has them. The kernel lets only a writer with CAP_SETFCAP map uid 0, and a
  # helper run by uid 0 has the bounding set, whatever its setuid bit or file capabilities: no
  # helper can stand in, and the one line says so (not the helper's own error).
  local e0=$work/rrt/root-helpers-etc hs=$work/root-helpers-suid hf=$work/root-helpers-fcap
  mkdir -p "$e0" "$hs" "$hf"
  printf 'root:x:0:0::/root:/bin/sh\n' >"$e0/passwd"
  printf 'root:x:0:\n' >"$e0/group"
  printf 'root:1:65536\n' | tee "$e0/subuid" >"$e0/subgid"
  local root_helpers=".process.noNewPrivileges = false |
      .mounts |= map(if .destination == \"/etc\" then .source = \"$e0\" else . end) |
      .process.env |= map(select(startswith(\"PATH=\") | not)) |
      .process.env += [\"PATH=/nested/helpers:/usr/bin:/bin\"]"
  local root3_line="fail:uid 0 of this container may map itself into a new user namespace only with CAP_SETFCAP.*the id-map helpers cannot stand in \(/nested/helpers/newuidmap: run by uid 0 .*CAP_SETFCAP.*\): add CAP_SETFCAP"
  if install -m 0755 /usr/bin/newuidmap /usr/bin/newgidmap "$hs/" && chown "$uid:$gid" "$hs"/new* &&
    chmod 4755 "$hs"/new*; then
    rrt_place root3-suid "$root3_line" same "$root_helpers |
      .mounts += [{destination: \"/nested/helpers\", type: \"bind\", source: \"$hs\", options: [\"bind\", \"ro\"]}]"
  else
    skip "rrt-root3-suid: no /usr/bin/newuidmap to copy (uidmap)" "$N_JOB"
  fi
  if command -v setcap >/dev/null && install -m 0755 /usr/bin/newuidmap /usr/bin/newgidmap "$hf/" &&
    setcap cap_setuid+ep "$hf/newuidmap" && setcap cap_setgid+ep "$hf/newgidmap"; then
    rrt_place root3-fcap "$root3_line" same "$root_helpers |
      .mounts += [{destination: \"/nested/helpers\", type: \"bind\", source: \"$hf\", options: [\"bind\", \"ro\"]}]"
  else
    skip "rrt-root3-fcap: setcap (libcap2-bin) cannot give a copy of newuidmap file capabilities" "$N_JOB"
  fi
  # Nowhere to write the state: a read-only root, no tmpfs on /tmp, /run nor /dev/shm, no
  # XDG_RUNTIME_DIR; the job's work on /build (its checkout). check's nested verdict is
  # unaffected (runtime-dir says it).
  rrt_place nostate "fail:no writable state directory: XDG_RUNTIME_DIR is not set and none of .*: set XDG_RUNTIME_DIR to a writable directory, or pass --root DIR" same \
    "$u1000 | .mounts |= map(select(.destination != \"/tmp\" and .destination != \"/run\" and .destination != \"/dev/shm\")) |
    .process.env += [\"W=/build/job\", \"NESTED_ROOT=/nonexistent\", \"NESTED_VERDICT=ok\"]"
  # A read-only root, no tmpfs on /tmp or /run, no XDG_RUNTIME_DIR: the job's work is on /build
  # (its checkout), the state must go to /dev/shm.
  rrt_place rostate ok same "$u1000 | .mounts |= map(select(.destination != \"/tmp\" and .destination != \"/run\")) |
    .process.env += [\"W=/build/job\", \"NESTED_ROOT=/dev/shm/rootlessrt-1000\"]"
}

# ---------------------------------------------------------------- inside rootless podman's

podman_places() {
  if ! command -v podman >/dev/null 2>&1; then
    skip "podman: podman is not installed" $((N_JOB * PLACES_PODMAN))
    return
  fi
  local u=$work/podman
  mkdir -p "$u/home/.config/containers" "$u/xdg" "$u/job1" "$u/job2"
  chmod 0700 "$u/xdg"
  cat >"$u/home/.config/containers/storage.conf" <<EOF
[storage]
driver = "overlay"
runroot = "$u/runroot"
graphroot = "$u/graph"
EOF
  printf '[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' >"$u/home/.config/containers/containers.conf"
  chown -R "$uid:$gid" "$u"
  # Podman's crun wants a pure cgroup2 /sys/fs/cgroup: a private mount namespace with one.
  local pre='mount --make-rshared / 2>/dev/null;'
  if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
    pre="umount -R /sys/fs/cgroup 2>/dev/null || umount -l /sys/fs/cgroup; mount -t cgroup2 none /sys/fs/cgroup || exit 3; $pre"
  fi
  local as_podman=(unshare -m --propagation private -- sh -c "$pre"' exec "$@"' sh
    setpriv --reuid="$uid" --regid="$gid" --init-groups
    env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="$u/home" XDG_RUNTIME_DIR="$u/xdg"
    XDG_CONFIG_HOME="$u/home/.config")
  if ! timeout -k 5 "$T" "${as_podman[@]}" podman load -q -i "$BIN/image.tar" >"$u/load.log" 2>&1; then
    fail "podman: the image loads" "$(cat "$u/load.log")"
    N_FAIL=$((N_FAIL + N_JOB * PLACES_PODMAN - 1))
    return
  fi
  local common=(--rm --network none -e "NESTED_DEBUG=${NESTED_DEBUG:-0}" -v /usr:/usr:ro -v /usr/lib:/lib:ro -v /usr/lib64:/lib64:ro
    -v "$BIN:/nested/bin:ro")
  job podman-default "${as_podman[@]}" podman run "${common[@]}" -v "$u/job1:/job" \
    docker.io/rrt/nested:test sh /nested/bin/nested-inner.sh /nested/bin /job ok fail:/dev/net/tun
  # The job as uid 1000 of podman's container (its work on a tmpfs it can write).
  job podman-user1000 "${as_podman[@]}" podman run "${common[@]}" --user 1000:1000 \
    --tmpfs /job:rw,exec,mode=1777 \
    docker.io/rrt/nested:test sh /nested/bin/nested-inner.sh /nested/bin /job ok fail:/dev/net/tun
  job podman-unconfined "${as_podman[@]}" podman run "${common[@]}" -v "$u/job2:/job" \
    --security-opt seccomp=unconfined --device /dev/net/tun \
    docker.io/rrt/nested:test sh /nested/bin/nested-inner.sh /nested/bin /job ok same
  timeout -k 5 60 "${as_podman[@]}" podman rm -a -f -t 0 >/dev/null 2>&1
  timeout -k 5 60 "${as_podman[@]}" podman unshare rm -rf "$u/graph" "$u/runroot" "$u/job1" "$u/job2" >/dev/null 2>&1
  local pid
  pid=$(cat "$u/xdg/libpod/tmp/pause.pid" 2>/dev/null)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
}

# ---------------------------------------------------------------- inside rootful Docker's

docker_places() {
  local c
  for c in dockerd containerd containerd-shim-runc-v2 runc; do
    if ! command -v "$c" >/dev/null 2>&1; then
      skip "docker: $c is not installed" $((N_JOB * PLACES_DOCKER))
      return
    fi
  done
  local cli d=$work/docker host_dirs_new="" c2
  # dockerd makes /run/docker/plugins and its shims /run/containerd/s whatever its exec root:
  # their empty directories go after, when they were not there before.
  for c2 in /run/docker /run/containerd; do
    [ -e "$c2" ] || host_dirs_new="$host_dirs_new $c2"
  done
  cli=$(dirname "$(command -v dockerd)")/../bin/docker
  [ -x "$cli" ] || cli=$(command -v docker)
  mkdir -p "$d/data" "$d/exec" "$d/job1" "$d/job2" "$d/job3" "$d/job4"
  chown "1000:1000" "$d/job2"
  echo '{}' >"$d/daemon.json"
  dockerd --config-file "$d/daemon.json" --data-root "$d/data" --exec-root "$d/exec" \
    -H "unix://$d/d.sock" --pidfile "$d/d.pid" --bridge=none --iptables=false --ip6tables=false \
    --ip-masq=false --userland-proxy=false --cgroup-parent="/rrt-nested-$$" \
    --exec-opt native.cgroupdriver=cgroupfs >"$d/dockerd.log" 2>&1 &
  daemon_pid=$!
  local dk=("$cli" -H "unix://$d/d.sock")
  if ! wait_answering "$daemon_pid" 60 timeout 5 "${dk[@]}" version ||
    ! timeout -k 5 "$T" "${dk[@]}" load -q -i "$BIN/image.tar" >"$d/load.log" 2>&1; then
    fail "docker: dockerd starts and loads the image" "$(tail -n 20 "$d/dockerd.log")" "$(cat "$d/load.log" 2>/dev/null)"
    N_FAIL=$((N_FAIL + N_JOB * PLACES_DOCKER - 1))
  else
    local common=(run --rm --network none -e "NESTED_DEBUG=${NESTED_DEBUG:-0}" -v /usr:/usr:ro -v /usr/lib:/lib:ro -v /usr/lib64:/lib64:ro
      -v "$BIN:/nested/bin:ro")
    local gitlab_bare=(--security-opt seccomp=unconfined --security-opt apparmor=unconfined)
    local gitlab=("${gitlab_bare[@]}" --device /dev/net/tun)
    job docker-gitlab "${dk[@]}" "${common[@]}" "${gitlab[@]}" -v "$d/job1:/job" \
      docker.io/rrt/nested:test sh /nested/bin/nested-inner.sh /nested/bin /job ok same
    job docker-gitlab-user1000 "${dk[@]}" "${common[@]}" "${gitlab[@]}" -u 1000:1000 -v "$d/job2:/job" \
      docker.io/rrt/nested:test sh /nested/bin/nested-inner.sh /nested/bin /job ok same
    # GitLab's default runner config gives the job no devices: all runs but slirp's, and slirp
    # is refused in one line naming /dev/net/tun and the fix.
    job docker-gitlab-notun "${dk[@]}" "${common[@]}" "${gitlab_bare[@]}" -v "$d/job4:/job" \
      docker.io/rrt/nested:test sh /nested/bin/nested-inner.sh /nested/bin /job ok \
      "fail:the outer container has no /dev/net/tun: run it with --device /dev/net/tun"
    job docker-default "${dk[@]}" "${common[@]}" -v "$d/job3:/job" docker.io/rrt/nested:test \
      sh /nested/bin/nested-inner.sh /nested/bin /job \
      "fail:the outer container's seccomp profile refuses user namespaces: run it with --security-opt seccomp=unconfined, or a profile that allows them" same
  fi
  kill "$daemon_pid" 2>/dev/null
  for _ in $(seq 300); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$daemon_pid" 2>/dev/null
  wait "$daemon_pid" 2>/dev/null
  daemon_pid=""
  local m
  for m in $(awk '$9 ~ /^cgroup2?$/ {print $5}' /proc/self/mountinfo); do
    [ -d "$m/rrt-nested-$$" ] && find "$m/rrt-nested-$$" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  for c2 in $host_dirs_new; do
    [ -d "$c2" ] && find "$c2" -depth -type d -empty -exec rmdir {} \; 2>/dev/null
  done
}

# ---------------------------------------------------------------- inside a Kubernetes pod

cri_places() {
  local c
  for c in containerd containerd-shim-runc-v2 runc unshare; do
    if ! command -v "$c" >/dev/null 2>&1; then
      skip "cri: $c is not installed" $((N_JOB * PLACES_CRI))
      return
    fi
  done
  if ! /usr/bin/python3 -c 'import grpc' 2>/dev/null; then
    skip "cri: python3-grpcio is not installed" $((N_JOB * PLACES_CRI))
    return
  fi
  job cri unshare -m --propagation private bash "$here/nested.sh" --cri "$work" "$BIN" 0
  job cri-user1000 unshare -m --propagation private bash "$here/nested.sh" --cri "$work" "$BIN" 1000
}


for p in ${RRT_NESTED_PLACES:-rrt podman docker cri}; do
  "${p}_places"
done
summary nested
[ "$N_FAIL" -eq 0 ]
