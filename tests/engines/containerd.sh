#!/bin/bash
# containerd.sh RUNTIME: the real containerd (Debian's package) driving RUNTIME through its runc
# shim (`ctr run --runtime io.containerd.runc.v2 --runc-binary RUNTIME`), as root and rootless
# under rootlesskit the way containerd's rootless mode runs (containerd-rootless.sh: rootlesskit
# with /etc and /run copied up, containerd as uid 0 of its user namespace). The harness starts its
# own containerd (own root, state dir and socket, no CRI, no CNI: containers get loopback only)
# and imports an OCI image it builds from busybox-static (oci-image.sh).
#
# Prints one TAP-like line per check and ends with "containerd: N passed, N failed, N skipped".
# Must run as real root; the rootless half runs as RRT_TEST_USER (rrt-test), in a cgroup v2
# directory delegated to it (RRT_CTRD_DELEGATE=0: none, and a limit's refusal is checked instead).
# Internal: containerd.sh --inner MODE WORK runs the scenarios of one mode inside WORK.
set -u
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# shellcheck source=tap.sh
source "$here/tap.sh"
# shellcheck source=daemon.sh
source "$here/daemon.sh"

# ---------------------------------------------------------------- the outer harness (root)

outer() {
  local runtime
  runtime=$(readlink -f "$1") || {
    echo "containerd: no runtime $1" >&2
    exit 2
  }
  if [ "$(id -u)" -ne 0 ] || [ "$(awk 'NR == 1 {print $3}' /proc/self/uid_map)" != 4294967295 ]; then
    skip_suite containerd "needs real root to start containerd"
  fi
  local c
  for c in containerd ctr containerd-shim-runc-v2; do
    command -v "$c" >/dev/null 2>&1 || {
      skip_suite containerd "$c is not installed; contrib/install-deps.sh installs it as root"
    }
  done
  work=$(mktemp -d /tmp/rrt-ctrd.XXXXXX) || exit 2
  chmod 0755 "$work"
  trap 'outer_cleanup' EXIT
  mkdir -p "$work/bin" "$work/root" "$work/rootless"
  cp "$runtime" "$work/bin/rootlessrt" || exit 2
  [ -x "$(dirname "$runtime")/rootlessrt-net" ] && cp "$(dirname "$runtime")/rootlessrt-net" "$work/bin/"
  [ -x "$(dirname "$runtime")/ptyrun" ] && cp "$(dirname "$runtime")/ptyrun" "$work/bin/"
  cp "$here/containerd.sh" "$here/tap.sh" "$here/daemon.sh" "$work/bin/" || exit 2
  if ! bash "$here/oci-image.sh" "$work/image.tar" docker.io/rrt/busybox:test >"$work/image.log" 2>&1; then
    fail "build the OCI image" "$(cat "$work/image.log")"
    summary containerd
    exit 1
  fi
  chmod -R a+rX "$work"

  local out
  out=$(bash "$work/bin/containerd.sh" --inner root "$work/root" 2>&1)
  printf '%s\n' "$out" | sed 's/^/root: /'
  add_counts "$(printf '%s\n' "$out" | grep -E '^root: [0-9]+ passed' | tail -n 1)" root

  if ! command -v rootlesskit >/dev/null 2>&1; then
    skip "rootless: rootlesskit is not installed (contrib/install-deps.sh installs it as root)"
  else
    local user=${RRT_TEST_USER:-rrt-test} uid
    uid=$(bash "$here/../../contrib/ensure-user.sh" "$user") || {
      fail "rootless: cannot set up the user $user"
      summary containerd
      exit 1
    }
    chown "$uid" "$work/rootless"
    # As a systemd user session would (containerd's rootless docs rely on it): a cgroup v2
    # directory delegated to the user, for pause/resume. Without one those checks skip.
    # RRT_CTRD_DELEGATE=0: none, as on a host without a user session (the common case).
    cg_deleg=""
    local cg_mnt
    cg_mnt=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
    if [ "${RRT_CTRD_DELEGATE:-1}" != 0 ] && [ -n "$cg_mnt" ] && mkdir "$cg_mnt/rrt-ctrd-$$" 2>/dev/null; then
      cg_deleg=$cg_mnt/rrt-ctrd-$$
      chown "$uid" "$cg_deleg" "$cg_deleg"/cgroup.{procs,threads,subtree_control}
    fi
    # containerd-rootless.sh's network: a namespace of its own (slirp4netns), for which
    # rootlesskit mounts a new sysfs on /sys and moves the cgroup mounts back under it; the host's
    # network where slirp4netns is missing.
    local -a net=(--net=host)
    command -v slirp4netns >/dev/null 2>&1 && net=(--net=slirp4netns --disable-host-loopback)
    # Moved (as root: the move needs the common ancestor) into the delegated cgroup first.
    out=$(
      [ -z "$cg_deleg" ] || echo "$BASHPID" >"$cg_deleg/cgroup.procs"
      exec setpriv --reuid="$uid" --regid="$(id -g "$user")" --init-groups --reset-env \
        env PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="$work/rootless" \
        XDG_RUNTIME_DIR="$work/rootless" RRT_CG_DELEG="$cg_deleg" \
        timeout -k 10 300 rootlesskit "${net[@]}" --copy-up=/etc --copy-up=/run \
        --state-dir="$work/rootless/rootlesskit" \
        bash "$work/bin/containerd.sh" --inner rootless "$work/rootless" 2>&1
    )
    printf '%s\n' "$out" | sed 's/^/rootless: /'
    add_counts "$(printf '%s\n' "$out" | grep -E '^rootless: [0-9]+ passed' | tail -n 1)" rootless
  fi
  summary containerd
  [ "$N_FAIL" -eq 0 ]
}

outer_cleanup() {
  if [ -n "${cg_deleg:-}" ]; then
    find "$cg_deleg" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
    rmdir "$cg_deleg" 2>/dev/null
  fi
  [ "${RRT_KEEP:-0}" = 1 ] && echo "containerd: work dir kept: $work" && return
  rm -rf "$work" 2>/dev/null || true
}

add_counts() { # add_counts SUMMARY-LINE MODE
  if [ -z "$1" ]; then
    fail "$2: the scenarios printed no summary"
    return
  fi
  add_summary "$1"
}

case ${1:-} in
  --inner) ;;
  "" | -*)
    echo "usage: containerd.sh RUNTIME" >&2
    exit 2
    ;;
  *)
    outer "$1"
    exit
    ;;
esac

# ---------------------------------------------------------------- the scenarios (one mode)

mode=$2 W=$3
RRT=$(dirname "$(readlink -f "$0")")/rootlessrt
IMG=docker.io/rrt/busybox:test
RUNC_ROOT=$W/runc
ctrd_pid=""

inner_cleanup() {
  local id
  for id in $(ctr_ task ls -q 2>/dev/null); do ctr_ task kill -s KILL "$id" >/dev/null 2>&1; done
  for id in $(ctr_ containers ls -q 2>/dev/null); do
    ctr_ task delete -f "$id" >/dev/null 2>&1
    ctr_ containers delete "$id" >/dev/null 2>&1
  done
  if [ -n "$ctrd_pid" ]; then
    kill "$ctrd_pid" 2>/dev/null
    wait "$ctrd_pid" 2>/dev/null
  fi
  # The parent cgroups: the pod's (the CRI-shaped checks) and ctr's namespace's /default (root
  # runs with cgroupsPath /default/ID); the runtime removes only its own leaves. An empty
  # /default only: another containerd's containers may be in theirs.
  local m
  [ "$mode" = root ] || return 0
  for m in $(awk '$9 ~ /^cgroup2?$/ {print $5}' /proc/self/mountinfo); do
    [ -d "$m/$POD_CG_TOP" ] && find "$m/$POD_CG_TOP" -depth -type d -exec rmdir {} + 2>/dev/null
    rmdir "$m/default" 2>/dev/null
  done
}
POD_CG_TOP=rrt-kubepods-$$
trap inner_cleanup EXIT

ctr_() { timeout -k 5 60 ctr --address "$W/c.sock" "$@"; }
# split_args [FLAGS...] -- CMD...: fills the caller's arrays flags (the words before --) and cmd.
split_args() {
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    flags+=("$1")
    shift
  done
  shift
  cmd=("$@")
}
# crun_ ID [CTR-RUN-FLAGS...] -- CMD...: ctr run with this runtime, no network but loopback
crun_() {
  local id=$1
  local -a flags=() cmd=()
  shift
  split_args "$@"
  ctr_ run --runtime io.containerd.runc.v2 --runc-binary "$RRT" --runc-root "$RUNC_ROOT" \
    --fifo-dir "$W/fifo" "${CG_FLAGS[@]}" "${flags[@]}" "$IMG" "$id" "${cmd[@]}"
}
# Rootless on a host whose controllers are cgroup v1, as nerdctl's cgroup manager "none" does:
# no cgroupsPath (the runtime uses a cgroup below its own, delegated one, for pause) and no
# default cpu.shares, which nothing could apply.
CG_FLAGS=()
if [ "$mode" = rootless ]; then
  CG_FLAGS=(--cgroup "" --cpu-shares 0)
fi
# cexec_ ID [CTR-EXEC-FLAGS...] -- CMD...
cexec_() {
  local id=$1
  local -a flags=() cmd=()
  shift
  split_args "$@"
  ctr_ task exec --fifo-dir "$W/fifo" "${flags[@]}" "$id" "${cmd[@]}"
}
task_pid() { ctr_ task ls 2>/dev/null | awk -v id="$1" '$1 == id {print $2}'; }
task_status() { ctr_ task ls 2>/dev/null | awk -v id="$1" '$1 == id {print $3}'; }
wait_status() { # wait_status ID STATUS: polls for up to 10 s
  for _ in $(seq 200); do
    [ "$(task_status "$1")" = "$2" ] && return 0
    sleep 0.05
  done
  return 1
}
is() { # is GOT WANT NAME
  if [ "$1" == "$2" ]; then pass "$3"; else fail "$3" "got:      '$1'" "expected: '$2'"; fi
}
like() {
  if [[ $1 =~ $2 ]]; then pass "$3"; else fail "$3" "got:      '$1'" "expected to match: $2"; fi
}

# Rootless: rootlesskit's copy-up made /run a tmpfs of symlinks to the host's entries; the shim
# makes its sockets under /run/containerd, so that one must be ours (containerd-rootless.sh removes
# it the same way).
if [ "$mode" = rootless ] && [ -L /run/containerd ]; then
  rm -f /run/containerd
fi
mkdir -p "$W/root" "$W/state" "$W/fifo" "$RUNC_ROOT"
containerd_config "$W" io.containerd.grpc.v1.cri io.containerd.internal.v1.opt >"$W/config.toml"
if ! start_containerd "$W"; then
  fail "containerd starts" "$(tail -n 20 "$W/containerd.log")"
  summary "$mode"
  exit 1
fi
if out=$(ctr_ images import "$(dirname "$W")/image.tar" 2>&1); then
  pass "ctr images import of the busybox OCI tarball"
else
  fail "ctr images import of the busybox OCI tarball" "$out"
  summary "$mode"
  exit 1
fi

# ---------------------------------------------------------------- run, exit codes, tty

out=$(crun_ r1 --rm -- sh -c 'echo hello; exit 3' 2>&1)
rc=$?
is "$out" hello "run: the container's output reaches ctr"
is "$rc" 3 "run: ctr exits with the container's exit code"

# ptyrun (tests/helper) gives ctr a terminal that never sees input: script(1) would forward the
# end of its own stdin. A failure says what containerd and the shim saw.
PTYRUN=$(dirname "$(readlink -f "$0")")/ptyrun
if [ ! -x "$PTYRUN" ]; then
  skip "run -t: no ptyrun helper beside the runtime (make builds it in the build directory)"
else
  t0=$(date +%s)
  "$PTYRUN" --timeout 60 ctr --address "$W/c.sock" run --runtime io.containerd.runc.v2 \
    --runc-binary "$RRT" --runc-root "$RUNC_ROOT" --fifo-dir "$W/fifo" "${CG_FLAGS[@]}" --rm -t \
    "$IMG" r3 sh -c 'tty; [ -t 0 ] && echo stdin-tty' >"$W/tty.out" 2>&1
  rc=$?
  out=$(tr -d '\r' <"$W/tty.out")
  want=$'/dev/pts/[0-9]+\nstdin-tty'
  if [[ $out =~ $want ]] && [ "$rc" = 0 ]; then
    pass "run -t: the container's stdio is a terminal"
  else
    fail "run -t: the container's stdio is a terminal" "got:      '$out'" \
      "status $rc after $(($(date +%s) - t0)) s; tasks: $(ctr_ task ls 2>&1 | tr '\n' ' ')" \
      "containerd's log:" "$(tail -n 15 "$W/containerd.log")"
  fi
fi

# ---------------------------------------------------------------- a log free of runtime lines

# An unknown syscall name in the seccomp profile: the runtime warns at create, and containerd's
# shim gives it the container's own stdio then. The warning belongs in the shim's log.json only.
cat >"$W/seccomp.json" <<'EOF'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["rrt_no_such_syscall"], "action": "SCMP_ACT_ERRNO"}]}
EOF
# stderr first, and a pause before stdout: containerd 1.6's file logger closes the file when
# stdout reaches EOF, whatever stderr still had to copy (1 run in 12 lost "to-stderr" here, none
# with runc, which is slower to start; the same container through two pipes of our own lost
# nothing in 40 runs).
crun_ l1 -d --seccomp --seccomp-profile "$W/seccomp.json" --log-uri "file://$W/l1.out" \
  -- sh -c 'echo to-stderr >&2; sleep 0.3; echo to-stdout' >/dev/null 2>&1
wait_status l1 STOPPED
# The shim copies the two streams into the file on its own: STOPPED can come before it wrote the
# last line. Up to 10 s for both.
for _ in $(seq 100); do
  [ "$(sort "$W/l1.out" 2>/dev/null)" = $'to-stderr\nto-stdout' ] && break
  sleep 0.1
done
bundle_log=$W/state/io.containerd.runtime.v2.task/default/l1/log.json
is "$(sort "$W/l1.out" 2>/dev/null)" $'to-stderr\nto-stdout' \
  "container log: the container's own lines, nothing of the runtime's"
if grep -q '"level":"warning".*rrt_no_such_syscall' "$bundle_log" 2>/dev/null; then
  pass "container log: the runtime's warning went to the shim's log.json"
else
  fail "container log: the runtime's warning went to the shim's log.json" \
    "log.json: $(cat "$bundle_log" 2>/dev/null)"
fi
ctr_ task delete l1 >/dev/null 2>&1
ctr_ containers delete l1 >/dev/null 2>&1

# ---------------------------------------------------------------- exec, ps, pause, kill

crun_ d1 -d -- sleep 1000 >/dev/null 2>&1
if wait_status d1 RUNNING; then pass "run -d: the task runs"; else fail "run -d: the task runs" "$(ctr_ task ls 2>&1)"; fi
d1_pid=$(task_pid d1)
# The sleeps below carry this run's token, a second argument under a second that busybox's sleep
# adds to the first: pgrep then finds only what this suite made (on a busy host any other process
# may be a `sleep 999` too).
tok=0.$$$RANDOM
out=$(cexec_ d1 --exec-id e1 -- sh -c 'echo in-exec; exit 4' 2>&1)
rc=$?
is "$out" in-exec "exec: the process's output"
is "$rc" 4 "exec: its exit code"
cexec_ d1 -d --exec-id e2 -- sleep 999 "$tok" >/dev/null 2>&1
pids=$(ctr_ task ps d1 2>/dev/null | awk 'NR > 1 {print $1}' | sort -n | tr '\n' ' ')
e2_pid=$(pgrep -f "^sleep 999 $tok\$" | head -n 1)
like "$pids" "(^| )${d1_pid:-none}( |$)" "ps: lists the task's init"
like "$pids" "(^| )${e2_pid:-none}( |$)" "ps: lists the exec'd process"

pause_check() {
  ctr_ task pause d1 >/dev/null 2>&1
  is "$(task_status d1)" PAUSED "pause: the task is paused"
  ctr_ task resume d1 >/dev/null 2>&1
  is "$(task_status d1)" RUNNING "resume: the task runs again"
}
if [ "$mode" = rootless ] && [ -z "${RRT_CG_DELEG:-}" ]; then
  skip "pause/resume: no cgroup v2 delegated to the user on this host" && skip "resume"
else
  pause_check
fi

# --with-ns pid: of another task: the new container sees d1's processes (pid 1 is its sleep).
out=$(crun_ w1 --rm --with-ns "pid:/proc/$d1_pid/ns/pid" -- cat /proc/1/cmdline 2>&1 | tr '\0' ' ')
is "$out" "sleep 1000 " "--with-ns pid: the container joins another task's pid namespace"

# A task sharing d1's pid namespace leaves a process behind when its init exits: the shim then
# runs `kill --all` on it and deletes it; the leftover must not survive (issue 13 item 5).
leftover_check() {
  local left ns
  ns=$(crun_ w2 --rm --with-ns "pid:/proc/$d1_pid/ns/pid" -- \
    sh -c "sleep 997 $tok & readlink /proc/self/ns/pid; exit 0" 2>&1)
  is "$ns" "$(readlink "/proc/$d1_pid/ns/pid")" "--with-ns pid: the task's pid namespace is d1's"
  for _ in $(seq 100); do
    left=$(pgrep -f "^sleep 997 $tok\$" | tr '\n' ' ')
    [ -z "$left" ] && break
    sleep 0.05
  done
  is "$left" "" "kill --all after init exited: the task's leftover process is killed"
}
leftover_check
# A leftover dies with d1 below: it is in d1's pid namespace, whose init goes.

# kill: the default SIGTERM reaches a handler in the container.
crun_ k1 --rm -- sh -c 'trap "exit 7" TERM; while :; do sleep 0.1; done' >/dev/null 2>&1 &
k1_ctr=$!
wait_status k1 RUNNING
ctr_ task kill k1 >/dev/null 2>&1
wait "$k1_ctr"
is "$?" 7 "kill: SIGTERM reaches the container, ctr run exits with its status"

crun_ k2 --rm -- sleep 1000 >/dev/null 2>&1 &
k2_ctr=$!
wait_status k2 RUNNING
ctr_ task kill -s KILL k2 >/dev/null 2>&1
wait "$k2_ctr"
is "$?" 137 "kill -s KILL: ctr run exits 137"

# kill --all: every process of the task.
cexec_ d1 -d --exec-id e3 -- sleep 998 "$tok" >/dev/null 2>&1
ctr_ task kill --all -s KILL d1 >/dev/null 2>&1
if wait_status d1 STOPPED; then pass "kill --all: the task stops"; else fail "kill --all: the task stops" "$(ctr_ task ls 2>&1)"; fi
left=$(pgrep -f "^sleep 99[89] $tok\$" | tr '\n' ' ')
is "$left" "" "kill --all: no exec'd process is left"

# delete: the task and the container go, and the runtime's state with them.
ctr_ task delete d1 >/dev/null 2>&1
ctr_ containers delete d1 >/dev/null 2>&1
is "$(ctr_ task ls -q 2>&1)" "" "delete: no task is left"
is "$("$RRT" --root "$RUNC_ROOT/default" list -q 2>&1)" "" "delete: the runtime lists no container"

# ---------------------------------------------------------------- cgroups (root)

cgroup_checks() {
  crun_ m1 -d --memory-limit 67108864 -- sleep 1000 >/dev/null 2>&1
  wait_status m1 RUNNING
  local m1_pid own_cg metrics
  m1_pid=$(task_pid m1)
  metrics=$(ctr_ task metrics --format json m1 2>/dev/null)
  is "$(jq -r '.memory.usage.limit // .memory_limit_in_bytes // .memory.hierarchical_memory_limit' \
    <<<"$metrics" 2>/dev/null)" 67108864 "--memory-limit: task metrics report the 64M limit"
  own_cg=$(awk -F: '$2 == "memory" || ($1 == "0" && $2 == "") {print $3; exit}' "/proc/$m1_pid/cgroup")
  like "$own_cg" "/default/m1\$" "task metrics: the container is in its own cgroup (ctr's /default/m1)"
  ctr_ task kill -s KILL m1 >/dev/null 2>&1
  wait_status m1 STOPPED
  ctr_ task delete m1 >/dev/null 2>&1
  ctr_ containers delete m1 >/dev/null 2>&1
}
if [ "$mode" != root ]; then
  skip "--memory-limit and task metrics: as root only here (a rootless user gets no cgroup v1)" 2
else
  cgroup_checks
fi

# ---------------------------------------------------------------- cgroups (rootless)

# Rootless with a delegated cgroup v2 directory: ctr run --cgroup /PATH puts the container in
# PATH below that directory (a user cannot write at the mount's root), where pause and the
# limits v2 has act on it; a limit nothing here can apply is refused saying what is true (the
# cgroup2 mount is there; the controller is not delegated), not "cgroup v2 is not mounted".
rootless_cgroup_checks() {
  local pid v2 out rc
  ctr_ run --runtime io.containerd.runc.v2 --runc-binary "$RRT" --runc-root "$RUNC_ROOT" \
    --fifo-dir "$W/fifo" --cgroup /rrt-ctr-custom/cg1 --cpu-shares 0 -d "$IMG" cg1 sleep 1000 \
    >"$W/cg1.out" 2>&1
  if wait_status cg1 RUNNING; then
    pass "run --cgroup /rrt-ctr-custom/cg1: the task runs"
  else
    fail "run --cgroup /rrt-ctr-custom/cg1: the task runs" "$(cat "$W/cg1.out")"
  fi
  pid=$(task_pid cg1)
  v2=$(awk -F: '$1 == "0" {print $3; exit}' "/proc/${pid:-none}/cgroup" 2>/dev/null)
  is "$v2" "${RRT_CG_DELEG#"$CG2_MNT"}/rrt-ctr-custom/cg1" \
    "run --cgroup /rrt-ctr-custom/cg1: in that cgroup, below the user's delegated one"
  ctr_ task kill -s KILL cg1 >/dev/null 2>&1
  wait_status cg1 STOPPED
  ctr_ task delete cg1 >/dev/null 2>&1
  ctr_ containers delete cg1 >/dev/null 2>&1
  is "$(find "$RRT_CG_DELEG/rrt-ctr-custom" -mindepth 1 -type d 2>&1)" "" \
    "delete: the container's cgroup is gone"
  rmdir "$RRT_CG_DELEG/rrt-ctr-custom" 2>/dev/null
  out=$(ctr_ run --runtime io.containerd.runc.v2 --runc-binary "$RRT" --runc-root "$RUNC_ROOT" \
    --fifo-dir "$W/fifo" --cgroup /rrt-ctr-custom/cg2 --memory-limit 67108864 --rm "$IMG" cg2 \
    true 2>&1)
  rc=$?
  if grep -qw memory "$RRT_CG_DELEG/cgroup.controllers" 2>/dev/null; then
    is "$rc" 0 "run --memory-limit: the delegated cgroup has the memory controller: it runs"
  elif [ "$rc" != 0 ] && [[ $out == *"memory controller is not enabled"* ]] &&
    [[ $out != *"not mounted"* ]]; then
    pass "run --memory-limit without the memory controller: refused, saying it is not enabled there"
  else
    fail "run --memory-limit without the memory controller: refused, saying it is not enabled there" \
      "exit status $rc: $out"
  fi
  ctr_ containers delete cg2 >/dev/null 2>&1
  rmdir "$RRT_CG_DELEG/rrt-ctr-custom" 2>/dev/null
}
# Nothing delegated (a host without a user session), the cgroup2 mount still there: a limit is
# refused saying the mount is not delegated to this user, never that cgroup v2 is not mounted
# (rootlesskit's new sysfs once hid the mount from the runtime: issue 28 item 7).
rootless_not_delegated_check() {
  local out rc
  out=$(ctr_ run --runtime io.containerd.runc.v2 --runc-binary "$RRT" --runc-root "$RUNC_ROOT" \
    --fifo-dir "$W/fifo" --memory-limit 67108864 --rm "$IMG" nd1 true 2>&1)
  rc=$?
  if [ "$rc" != 0 ] && [[ $out == *"cgroup2 mount $CG2_MNT is not delegated to this user"* ]] &&
    [[ $out != *"not mounted"* ]]; then
    pass "run --memory-limit with nothing delegated: refused, saying the cgroup2 mount is not delegated"
  else
    fail "run --memory-limit with nothing delegated: refused, saying the cgroup2 mount is not delegated" \
      "exit status $rc: $out"
  fi
  ctr_ containers delete nd1 >/dev/null 2>&1
}
CG2_MNT=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
if [ "$mode" != rootless ]; then
  :
elif [ -z "$CG2_MNT" ]; then
  skip "rootless --cgroup and --memory-limit: no cgroup2 mount here" 4
elif [ -z "${RRT_CG_DELEG:-}" ]; then
  skip "rootless --cgroup: no cgroup v2 delegated to the user on this host" 3
  rootless_not_delegated_check
else
  rootless_cgroup_checks
fi

# ---------------------------------------------------------------- a CRI-shaped pod (root)

# Kubernetes' CRI cannot be driven from Debian 12's packages (no cri-tools, no CRI protos): the
# shape of what containerd's CRI plugin sends, through ctr. A sandbox holding the pod's network,
# IPC and UTS namespaces, then a container joining them, both with cgroupsPath under the pod's
# parent as the cgroupfs driver makes it (kubepods/besteffort/podUID/ID) and a BestEffort pod's
# cpu.shares 2.
pod_checks() {
  local pod=/$POD_CG_TOP/besteffort/podrrt spid cpid want got path
  crun_ pod-s -d --cgroup "$pod/pod-s" --cpu-shares 2 -- sleep 1000 >/dev/null 2>&1
  if ! wait_status pod-s RUNNING; then
    fail "pod: the sandbox runs" "$(ctr_ task ls 2>&1)" "$(tail -n 5 "$W/containerd.log")"
    skip "pod: no sandbox" 2
    return
  fi
  pass "pod: the sandbox runs (cgroupsPath $pod/pod-s, cpu.shares 2)"
  spid=$(task_pid pod-s)
  crun_ pod-c -d --cgroup "$pod/pod-c" --cpu-shares 2 --with-ns "network:/proc/$spid/ns/net" \
    --with-ns "ipc:/proc/$spid/ns/ipc" --with-ns "uts:/proc/$spid/ns/uts" -- sleep 999 >/dev/null 2>&1
  wait_status pod-c RUNNING
  cpid=$(task_pid pod-c)
  want=$(readlink "/proc/$spid/ns/net" "/proc/$spid/ns/ipc" "/proc/$spid/ns/uts" 2>&1 | tr '\n' ' ')
  got=$(readlink "/proc/${cpid:-none}/ns/net" "/proc/${cpid:-none}/ns/ipc" \
    "/proc/${cpid:-none}/ns/uts" 2>&1 | tr '\n' ' ')
  is "$got" "$want" "pod: the container joins the sandbox's network, IPC and UTS namespaces"
  path=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3; exit}' "/proc/${cpid:-none}/cgroup" 2>/dev/null)
  is "$path $(cat "/sys/fs/cgroup/cpu$path/cpu.shares" 2>&1)" "$pod/pod-c 2" \
    "pod: the container's cgroup is under the pod's, with cpu.shares 2"
  local id
  for id in pod-c pod-s; do
    ctr_ task kill -s KILL "$id" >/dev/null 2>&1
    wait_status "$id" STOPPED
    ctr_ task delete "$id" >/dev/null 2>&1
    ctr_ containers delete "$id" >/dev/null 2>&1
  done
}
if [ "$mode" != root ]; then
  skip "pod: as root only here (the pod's cgroups need a writable cgroup v1 tree)" 3
else
  pod_checks
fi

# ---------------------------------------------------------------- ctr run's own defaults

# What a user typing `ctr run` gets: cgroupsPath /default/ID and cpu.shares 1024 in every spec
# (ctr's --cpu-shares default), not the "none" cgroup manager's flags the checks above use. As
# root the runtime applies them; rootless, in a cgroup tree the user cannot write, the kernel's
# own default shares are no limit to refuse the container for: it must run. (runc 1.1.5 refuses:
# "mkdir /sys/fs/cgroup/cpuset/default/r4: permission denied"; this asserts the runtime's own
# promise, not runc's behaviour.)
out=$(ctr_ run --runtime io.containerd.runc.v2 --runc-binary "$RRT" --runc-root "$RUNC_ROOT" \
  --fifo-dir "$W/fifo" --rm "$IMG" r4 sh -c 'echo with-defaults' 2>&1)
rc=$?
is "$out/$rc" "with-defaults/0" "run with ctr's defaults (cgroupsPath /default/r4, cpu.shares 1024)"

summary "$mode"
[ "$N_FAIL" -eq 0 ]
