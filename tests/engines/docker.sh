#!/bin/bash
# docker.sh RUNTIME: Docker (Debian 12's docker.io, dockerd 20.10) driving RUNTIME as its default
# runtime, the way a user configures it: daemon.json {"runtimes": {"rrt": {"path": RUNTIME}},
# "default-runtime": "rrt"}. The harness starts its own rootful dockerd in a directory of its own
# (--data-root, --exec-root, a unix socket there, --pidfile, --bridge=none, --iptables=false,
# containers under the cgroup parent rrt-docker-PID), which starts its own containerd under that
# exec root; the image is `docker load`ed from a tarball built from busybox-static (oci-image.sh),
# nothing is pulled. Containers get --network none. Then the everyday scenarios, one check each:
# run and its exit codes (1, 127, 126), -e, -w, -u, -v, --read-only, --tmpfs, --memory, --cpus,
# --pids-limit, update --memory, exec, exec -t, logs, stop, kill, restart, pause/unpause, rm -f,
# --init, -t; and after the daemon stopped, that nothing is left (processes, mounts, cgroups,
# network interfaces, the runtime's state).
#
# Rootless Docker (dockerd-rootless.sh under rootlesskit as RRT_TEST_USER) runs the same scenarios
# but the cgroup limits and pause (this host's controllers are cgroup v1: a rootless dockerd has
# none), when docker.io's contrib script is there.
#
# A rootful dockerd with --userns-remap (the user rrt-remap and its subordinate range, made by
# contrib/ensure-user.sh): every container in a user namespace of its own, its root a subordinate
# uid; run, exec, and the namespaces of another container joined (--pid, --ipc, --network
# container:X), where init is not dumpable and must still get its oomScoreAdj (issue 28).
#
# The reference: `docker.sh /usr/sbin/runc` runs the same checks against runc. Knobs:
# RRT_DOCKER_TIMEOUT (240 s per mode), RRT_KEEP=1 keeps the work directory, RRT_DOCKER_ROOTLESS=0
# skips the rootless half, RRT_DOCKER_REMAP=0 the remapped daemon. Prints one TAP-like line per check and ends with
# "docker: N passed, N failed, N skipped". Must run as real root.
# Internal: docker.sh --inner MODE WORK runs the scenarios of one mode against a running daemon.
set -u
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# shellcheck source=tap.sh
source "$here/tap.sh"
# shellcheck source=daemon.sh
source "$here/daemon.sh"

# The checks of one mode (29 scenarios, then the leftovers: 4 as root, 3 rootless; the remapped
# daemon's 2 + 7 and 4), for the skips.
N_ROOT=33 N_ROOTLESS=32 N_REMAP=13

# ---------------------------------------------------------------- the outer harness (root)

skip_all() { skip_suite docker "$1" $((N_ROOT + N_ROOTLESS + N_REMAP)); }

outer() {
  local runtime
  runtime=$(readlink -f "$1") && [ -x "$runtime" ] || {
    echo "docker: no runtime $1" >&2
    exit 2
  }
  if [ "$(id -u)" -ne 0 ] || [ "$(awk 'NR == 1 {print $3}' /proc/self/uid_map)" != 4294967295 ]; then
    skip_all "needs real root to start dockerd"
  fi
  local c
  for c in dockerd containerd containerd-shim-runc-v2 docker-init; do
    command -v "$c" >/dev/null 2>&1 ||
      skip_all "$c is not installed (contrib/install-deps.sh as root installs docker.io)"
  done
  # docker.io's own client (its API version is the daemon's), not another docker first in PATH.
  DOCKER_CLI=$(dirname "$(command -v dockerd)")/../bin/docker
  [ -x "$DOCKER_CLI" ] || DOCKER_CLI=$(command -v docker) ||
    skip_all "no docker client (docker.io's /usr/bin/docker)"
  DOCKER_CLI=$(readlink -f "$DOCKER_CLI")
  export DOCKER_CLI

  work=$(mktemp -d /tmp/rrt-docker.XXXXXX) || exit 2
  chmod 0755 "$work"
  links_before=$(link_names)
  # dockerd makes /run/docker/plugins whatever its exec root, and the shims /run/containerd/s:
  # removed after if they were not there before.
  host_dirs_new=""
  for c in /run/docker /run/containerd; do
    [ -e "$c" ] || host_dirs_new="$host_dirs_new $c"
  done
  trap 'outer_cleanup' EXIT
  trap 'exit 143' TERM INT HUP
  mkdir -p "$work/bin" "$work/root" "$work/rootless"
  # A copy named as the runtime, readable by the rootless user.
  cp "$runtime" "$work/bin/$(basename "$runtime")" || exit 2
  rt_bin=$work/bin/$(basename "$runtime")
  local h
  for h in rootlessrt-net rootlessrt-systemd; do
    [ -x "$(dirname "$runtime")/$h" ] && cp "$(dirname "$runtime")/$h" "$work/bin/"
  done
  cp "$here/docker.sh" "$here/tap.sh" "$here/daemon.sh" "$work/bin/" || exit 2
  if ! bash "$here/oci-image.sh" --docker "$work/image.tar" docker.io/rrt/busybox:test \
    >"$work/image.log" 2>&1; then
    fail "build the image tarball" "$(cat "$work/image.log")"
    summary docker
    exit 1
  fi
  chmod -R a+rX "$work"

  rootful
  if [ "${RRT_DOCKER_REMAP:-1}" = 0 ]; then
    skip "remap: RRT_DOCKER_REMAP=0" "$N_REMAP"
  else
    remapped
  fi
  if [ "${RRT_DOCKER_ROOTLESS:-1}" = 0 ]; then
    skip "rootless: RRT_DOCKER_ROOTLESS=0" "$N_ROOTLESS"
  else
    rootless
  fi
  summary docker
  [ "$N_FAIL" -eq 0 ]
}

link_names() { ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | sort; }
# new_links: the interfaces made since links_before that this run could have made. Another daemon
# on a busy host (the host's Docker, a peer's test) makes veth pairs, bridges, dummies and tunnels
# all the time; ours make none (--bridge=none, containers --network none), and the runtime makes
# only tap0, a tun device, in the container's network namespace: a new tun device in the host's
# is the one leak this run could leave, and the only kind compared.
new_links() {
  local name
  comm -13 <(printf '%s\n' "$links_before") <(link_names) | while read -r name; do
    [ -n "$name" ] || continue
    ip -o -d link show dev "$name" 2>/dev/null | grep -qE '[[:space:]]tun type ' && echo "$name"
  done
}
# No iptables comparison: every dockerd here runs with --iptables=false --ip6tables=false (the
# rootless one in rootlesskit's network namespace besides), so none writes a rule, and the rules
# that name Docker on the host are the host's Docker's, which adds and removes them as its own
# containers come and go: no name tells a rule of ours from one of theirs.

# run_inner MODE [PREFIX...]: the scenarios of MODE against the daemon at $work/MODE/d.sock, within
# the time limit; their lines are printed with "MODE: " before them and counted.
run_inner() {
  local mode=$1 out line
  shift
  out=$(timeout -k 10 "${RRT_DOCKER_TIMEOUT:-240}" "$@" env DOCKER_CLI="$DOCKER_CLI" \
    RT_NAME=rrt RT_BIN="$rt_bin" bash "$work/bin/docker.sh" --inner "$mode" \
    "$work/$mode" 2>&1)
  printf '%s\n' "$out" | grep -vE "^$mode: [0-9]+ passed" | sed "s/^/$mode: /"
  line=$(printf '%s\n' "$out" | grep -E "^$mode: [0-9]+ passed" | tail -n 1)
  if [ -z "$line" ]; then
    fail "$mode: the scenarios printed no summary (killed after ${RRT_DOCKER_TIMEOUT:-240} s?)"
    return
  fi
  add_summary "$line"
}

# wait_daemon DIR PID: until the daemon at DIR/d.sock answers (60 s), or its process is gone.
wait_daemon() { wait_answering "$2" 60 timeout 5 "$DOCKER_CLI" -H "unix://$1/d.sock" version; }

# stop_daemon PID: SIGTERM (dockerd stops its containers and its containerd), 30 s, then SIGKILL.
stop_daemon() {
  local pid=$1
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
}

# work_pids: the processes that still name the work directory (daemons, shims, the runtime, the
# containers' processes: their cwd or root is under it).
work_pids() {
  local p
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF "$work/" ||
      [[ $(readlink "$p/root" 2>/dev/null) == "$work"/* ]] ||
      [[ $(readlink "$p/cwd" 2>/dev/null) == "$work"/* ]]; then
      echo "${p#/proc/}"
    fi
  done
}
work_mounts() { awk -v w="$work/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo; }
# work_cgroups [-mindepth 1]: the cgroup parent given to dockerd, in every hierarchy (with
# -mindepth 1: the containers' cgroups below it; dockerd leaves the parent itself, as a host's
# /docker stays).
work_cgroups() {
  local m
  for m in $(awk '$9 ~ /^cgroup2?$/ {print $5}' /proc/self/mountinfo); do
    [ -d "$m/rrt-docker-$$" ] && find "$m/rrt-docker-$$" "$@" -type d 2>/dev/null
  done
}

# leftover_checks MODE: after the daemon of MODE stopped.
leftover_checks() {
  local mode=$1 left
  left=$(work_pids | xargs -r ps -o pid=,args= -p 2>/dev/null)
  is_ "$left" "" "$mode: no process is left once dockerd stopped"
  is_ "$(work_mounts)" "" "$mode: no mount is left under the work directory"
  [ "$mode" != rootless ] && is_ "$(work_cgroups -mindepth 1)" "" "$mode: no container cgroup is left"
  is_ "$(new_links)" "" "$mode: no tun device is left in the host's network namespace (the one kind this run could leak)"
}
is_() { if [ "$1" == "$2" ]; then pass "$3"; else fail "$3" "got:      '$1'" "expected: '$2'"; fi; }

rootful() {
  local d=$work/root
  mkdir -p "$d/data" "$d/exec"
  cat >"$d/daemon.json" <<EOF
{
  "runtimes": {"rrt": {"path": "$rt_bin"}},
  "default-runtime": "rrt",
  "deprecated-key-path": "$d/key.json"
}
EOF
  dockerd --config-file "$d/daemon.json" --data-root "$d/data" --exec-root "$d/exec" \
    -H "unix://$d/d.sock" --pidfile "$d/d.pid" --bridge=none --iptables=false --ip6tables=false \
    --ip-masq=false --userland-proxy=false --cgroup-parent="/rrt-docker-$$" \
    --exec-opt native.cgroupdriver=cgroupfs >"$d/dockerd.log" 2>&1 &
  root_pid=$!
  if ! wait_daemon "$d" "$root_pid"; then
    fail "root: dockerd starts" "$(tail -n 20 "$d/dockerd.log")"
    skip "root: the scenarios need dockerd" $((N_ROOT - 1))
    return
  fi
  run_inner root
  stop_daemon "$root_pid"
  wait "$root_pid" 2>/dev/null
  root_pid=""
  leftover_checks root
}

# The same daemon as rootful's, with --userns-remap: the containers' root is rrt-remap's first
# subordinate uid.
remapped() {
  local d=$work/remap start
  if ! bash "$here/../../contrib/ensure-user.sh" rrt-remap >/dev/null; then
    fail "remap: cannot set up the user rrt-remap"
    skip "remap: the scenarios need the user" $((N_REMAP - 1))
    return
  fi
  start=$(awk -F: '$1 == "rrt-remap" {print $2; exit}' /etc/subuid)
  mkdir -p "$d/data" "$d/exec"
  cat >"$d/daemon.json" <<EOF
{
  "runtimes": {"rrt": {"path": "$rt_bin"}},
  "default-runtime": "rrt",
  "userns-remap": "rrt-remap",
  "deprecated-key-path": "$d/key.json"
}
EOF
  dockerd --config-file "$d/daemon.json" --data-root "$d/data" --exec-root "$d/exec" \
    -H "unix://$d/d.sock" --pidfile "$d/d.pid" --bridge=none --iptables=false --ip6tables=false \
    --ip-masq=false --userland-proxy=false --cgroup-parent="/rrt-docker-$$" \
    --exec-opt native.cgroupdriver=cgroupfs >"$d/dockerd.log" 2>&1 &
  remap_pid=$!
  if ! wait_daemon "$d" "$remap_pid"; then
    fail "remap: dockerd --userns-remap starts" "$(tail -n 20 "$d/dockerd.log")"
    skip "remap: the scenarios need dockerd" $((N_REMAP - 1))
    return
  fi
  run_inner remap env RRT_REMAP_START="$start"
  stop_daemon "$remap_pid"
  wait "$remap_pid" 2>/dev/null
  remap_pid=""
  leftover_checks remap
}

rootless() {
  local user=${RRT_TEST_USER:-rrt-test} uid gid d=$work/rootless
  local script=/usr/share/docker.io/contrib/dockerd-rootless.sh c
  if [ ! -x "$script" ]; then
    skip "rootless: no $script (docker.io's rootless launcher)" "$N_ROOTLESS"
    return
  fi
  for c in rootlesskit slirp4netns; do
    command -v "$c" >/dev/null 2>&1 || {
      skip "rootless: $c is not installed (contrib/install-deps.sh installs it as root)" "$N_ROOTLESS"
      return
    }
  done
  uid=$(bash "$here/../../contrib/ensure-user.sh" "$user") || {
    fail "rootless: cannot set up the user $user"
    return
  }
  gid=$(id -g "$user")
  mkdir -p "$d/home" "$d/xdg" "$d/data" "$d/exec"
  chmod 0700 "$d/xdg"
  cat >"$d/daemon.json" <<EOF
{
  "runtimes": {"rrt": {"path": "$rt_bin"}},
  "default-runtime": "rrt",
  "deprecated-key-path": "$d/key.json"
}
EOF
  chown -R "$uid:$gid" "$d"
  # dockerd-rootless.sh: rootlesskit (slirp4netns, /etc and /run copied up), then dockerd as uid 0
  # of its user namespace with the flags given here.
  setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env \
    env PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="$d/home" XDG_RUNTIME_DIR="$d/xdg" \
    DOCKERD_ROOTLESS_ROOTLESSKIT_NET=slirp4netns \
    "$script" --config-file "$d/daemon.json" --data-root "$d/data" --exec-root "$d/exec" \
    -H "unix://$d/d.sock" --pidfile "$d/d.pid" --bridge=none --iptables=false \
    --ip6tables=false --ip-masq=false --userland-proxy=false \
    >"$d/dockerd.log" 2>&1 &
  rootless_pid=$!
  if ! wait_daemon "$d" "$rootless_pid"; then
    fail "rootless: dockerd-rootless.sh starts" "$(tail -n 20 "$d/dockerd.log")"
    skip "rootless: the scenarios need dockerd" $((N_ROOTLESS - 1))
    return
  fi
  run_inner rootless setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env \
    env PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="$d/home" XDG_RUNTIME_DIR="$d/xdg"
  # rootlesskit passes the signal on to dockerd, then exits.
  stop_daemon "$rootless_pid"
  wait "$rootless_pid" 2>/dev/null
  rootless_pid=""
  leftover_checks rootless
}

# Everything, whatever state the run stopped in: daemons, then any process naming the work
# directory, its mounts (deepest first), the cgroups, the directory.
outer_cleanup() {
  stop_daemon "${root_pid:-}"
  stop_daemon "${remap_pid:-}"
  stop_daemon "${rootless_pid:-}"
  local p
  for _ in 1 2 3; do
    p=$(work_pids)
    [ -z "$p" ] && break
    # shellcheck disable=SC2086 # a list of pids
    kill -KILL $p 2>/dev/null
    sleep 0.2
  done
  work_mounts | sort -r | while read -r p; do umount -l "$p" 2>/dev/null; done
  local cg
  for cg in $(work_cgroups); do
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  for cg in ${host_dirs_new:-}; do
    [ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  if [ "${RRT_KEEP:-0}" = 1 ]; then
    echo "docker: work dir kept: $work"
    return
  fi
  rm -rf "$work" 2>/dev/null || true
}

case ${1:-} in
  --inner) ;;
  "" | -*)
    echo "usage: docker.sh RUNTIME" >&2
    exit 2
    ;;
  *)
    outer "$1"
    exit
    ;;
esac

# ---------------------------------------------------------------- the scenarios (one mode)

mode=$2 W=$3
IMG=rrt/busybox:test
D() { timeout -k 5 60 "$DOCKER_CLI" -H "unix://$W/d.sock" "$@"; }
R() { D run --rm --network none "$@"; }
is() { # is GOT WANT NAME [DIAG...]
  if [ "$1" == "$2" ]; then
    pass "$3"
  else
    local got=$1 want=$2 name=$3
    shift 3
    fail "$name" "got:      '$got'" "expected: '$want'" "$@"
  fi
}
like() {
  if [[ $1 =~ $2 ]]; then pass "$3"; else fail "$3" "got:      '$1'" "expected to match: $2"; fi
}
state() { D inspect -f "{{.State.$2}}" "$1" 2>&1; }
# wait_state ID STATUS: polls for up to 20 s. A container that never started (created: `docker
# run -d` and `restart` return once it runs or failed to) or is gone fails at once.
wait_state() {
  local st
  for _ in $(seq 200); do
    st=$(state "$1" Status)
    [ "$st" = "$2" ] && return 0
    case $st in created | dead | *"No such"*) return 1 ;; esac
    [ "$2" = running ] && [ "$st" = exited ] && return 1
    sleep 0.1
  done
  return 1
}
wait_log() { # wait_log ID TEXT: until the running container's log holds TEXT, up to 20 s
  for _ in $(seq 200); do
    D logs "$1" 2>&1 | grep -qF "$2" && return 0
    [ "$(state "$1" Status)" = running ] || return 1
    sleep 0.1
  done
  return 1
}
# cg_file ID CONTROLLER V1-FILE V2-FILE: the value of the container's own cgroup file on the host
cg_file() {
  local pid path
  pid=$(state "$1" Pid)
  path=$(awk -F: -v c="$2" '$2 ~ "(^|,)" c "(,|$)" {print $3; exit}' "/proc/$pid/cgroup" 2>/dev/null)
  if [ -n "$path" ]; then
    cat "/sys/fs/cgroup/$2$path/$3" 2>&1
  else
    path=$(awk -F: '$1 == "0" {print $3; exit}' "/proc/$pid/cgroup" 2>/dev/null)
    cat "/sys/fs/cgroup$path/$4" 2>&1
  fi
}
trap 'D rm -f $(D ps -aq 2>/dev/null) >/dev/null 2>&1' EXIT

if out=$(D load -i "$(dirname "$W")/image.tar" 2>&1) && D image inspect "$IMG" >/dev/null 2>&1; then
  pass "docker load of the busybox image"
else
  fail "docker load of the busybox image" "$out"
  summary "$mode"
  exit 1
fi
rt=$(D info -f '{{.DefaultRuntime}}' 2>&1)
is "$rt" "$RT_NAME" "docker info: the default runtime is $RT_NAME"

# ---------------------------------------------------------------- --userns-remap

# Every container in a user namespace of its own. A container joining another's pid namespace
# (--pid container:X) has an init that is not dumpable there from before it exists: runc and crun
# run it; rootlessrt said "process.oomScoreAdj: open /proc/self/oom_score_adj: Permission denied".
if [ "$mode" = remap ]; then
  out=$(R "$IMG" sh -c 'id -u; cat /proc/self/uid_map' 2>&1)
  like "$out" "^0"$'\n'" +0 +$RRT_REMAP_START +[0-9]+" \
    "run: root in the container is rrt-remap's first subordinate uid ($RRT_REMAP_START)"
  c=$(D run -d --network none --ipc shareable --name rrt-r1 "$IMG" sleep 1000 2>&1)
  if wait_state rrt-r1 running; then
    pass "run -d: the container runs"
  else
    fail "run -d: the container runs" "$c"
  fi
  out=$(R --pid container:rrt-r1 "$IMG" sh -c 'tr "\0" " " </proc/1/cmdline' 2>&1)
  is "$out" "sleep 1000 " "run --pid container:X: its pid 1 is the other container's process"
  out=$(R --oom-score-adj 500 --pid container:rrt-r1 "$IMG" cat /proc/self/oom_score_adj 2>&1)
  is "$out" 500 "run --oom-score-adj 500 --pid container:X: the score is set"
  out=$(D run --rm --network container:rrt-r1 --ipc container:rrt-r1 "$IMG" true 2>&1)
  is "$?" 0 "run --network container:X --ipc container:X" "$out"
  out=$(D exec rrt-r1 sh -c 'echo in-exec; exit 3' 2>&1)
  is "$out/$?" "in-exec/3" "exec: the process's output and exit code"
  c=$(D run -d --network none --name rrt-r2 --pid container:rrt-r1 "$IMG" sleep 1000 2>&1)
  if wait_state rrt-r2 running; then
    out=$(D exec rrt-r2 cat /proc/self/oom_score_adj 2>&1)
    is "$out/$?" "0/0" "exec into a container in a joined pid namespace"
  else
    fail "exec into a container in a joined pid namespace" "$c" "$(D logs rrt-r2 2>&1 | tail -n 3)"
  fi
  D rm -f rrt-r2 rrt-r1 >/dev/null 2>&1
  summary "$mode"
  [ "$N_FAIL" -eq 0 ]
  exit
fi

# ---------------------------------------------------------------- run and its exit codes

out=$(R "$IMG" true 2>&1)
is "$?" 0 "run true: exit 0" "$out"
out=$(R "$IMG" false 2>&1)
is "$?" 1 "run false: exit 1" "$out"
out=$(R "$IMG" /no/such 2>&1)
rc=$?
is "$rc" 127 "run /no/such: exit 127 (command not found)" "$out"
out=$(R "$IMG" /etc/passwd 2>&1)
rc=$?
is "$rc" 126 "run /etc/passwd: exit 126 (not executable)" "$out"
out=$(R -e RRT_FOO=bar "$IMG" sh -c 'echo "$RRT_FOO"' 2>&1)
is "$out" bar "run -e: the variable reaches the process"
out=$(R -w /var/rrt-cwd "$IMG" pwd 2>&1)
is "$out" /var/rrt-cwd "run -w: the working directory (made by the engine)"
out=$(R -u 1234:5678 "$IMG" id 2>&1)
like "$out" '^uid=1234 gid=5678' "run -u 1234:5678: the process's ids"
mkdir -p "$W/vol"
echo from-host >"$W/vol/in"
out=$(R -v "$W/vol:/vol" "$IMG" sh -c 'cat /vol/in; echo from-container >/vol/out' 2>&1)
is "$out $(cat "$W/vol/out" 2>&1)" "from-host from-container" "run -v: a host directory, both ways"
out=$(R --read-only "$IMG" sh -c 'touch /rrt-x 2>/dev/null && echo writable || echo read-only' 2>&1)
is "$out" read-only "run --read-only: the root filesystem is read-only"
out=$(R --tmpfs /scratch "$IMG" sh -c \
  'awk "\$2 == \"/scratch\" {print \$3}" /proc/mounts; touch /scratch/f && echo written' 2>&1)
is "$out" $'tmpfs\nwritten' "run --tmpfs /scratch: a writable tmpfs"
out=$(R -t "$IMG" sh -c 'tty; [ -t 0 ] || echo stdin-not-a-tty' 2>&1 | tr -d '\r')
like "$out" '^/dev/pts/[0-9]+' "run -t: the process's stdio is a terminal"
out=$(R --init "$IMG" cat /proc/1/cmdline 2>&1 | tr '\0' ' ')
like "$out" '^/sbin/docker-init -- cat /proc/1/cmdline' "run --init: pid 1 is docker-init"

# ---------------------------------------------------------------- resources (root)

resource_checks() {
  local c
  c=$(D run -d --network none --memory 64m --cpus 1.5 --pids-limit 50 "$IMG" sleep 1000 2>&1)
  if ! wait_state "$c" running; then
    fail "run -d --memory 64m --cpus 1.5 --pids-limit 50: the container runs" "$c" \
      "$(D logs "$c" 2>&1 | tail -n 5)"
    skip "the limits and update --memory: no container" 4
    return
  fi
  pass "run -d --memory 64m --cpus 1.5 --pids-limit 50: the container runs"
  is "$(cg_file "$c" memory memory.limit_in_bytes memory.max)" 67108864 \
    "run --memory 64m: the container's memory limit"
  is "$(cg_file "$c" cpu cpu.cfs_quota_us cpu.max | cut -d' ' -f1)" 150000 \
    "run --cpus 1.5: the CFS quota (150000 of 100000)"
  is "$(cg_file "$c" pids pids.max pids.max)" 50 "run --pids-limit 50: pids.max"
  out=$(D update --memory 128m --memory-swap 256m "$c" 2>&1)
  is "$(cg_file "$c" memory memory.limit_in_bytes memory.max)" 134217728 \
    "update --memory 128m: the new limit is applied" "update: $out"
  D rm -f "$c" >/dev/null 2>&1
}
if [ "$mode" = root ]; then
  resource_checks
else
  skip "--memory, --cpus, --pids-limit, update --memory: rootless Docker has no cgroup v1 controllers" 5
fi

# ---------------------------------------------------------------- a running container

c=$(D run -d --network none --name rrt-d1 "$IMG" sleep 1000 2>&1)
if wait_state rrt-d1 running; then pass "run -d: the container runs"; else fail "run -d: the container runs" "$c"; fi
out=$(D exec rrt-d1 sh -c 'echo in-exec; exit 3' 2>&1)
rc=$?
is "$out/$rc" "in-exec/3" "exec: the process's output and exit code"
out=$(D exec -t rrt-d1 tty 2>&1 | tr -d '\r')
like "$out" '^/dev/pts/[0-9]+$' "exec -t: the process's stdio is a terminal"

if [ "$mode" = root ]; then
  D pause rrt-d1 >/dev/null 2>&1
  s1=$(state rrt-d1 Status)
  D unpause rrt-d1 >/dev/null 2>&1
  is "$s1 $(state rrt-d1 Status)" "paused running" "pause, unpause: paused, then running"
else
  skip "pause/unpause: rootless Docker has no freezer here (cgroup v1)"
fi

pid1=$(state rrt-d1 Pid)
out=$(D restart -t 1 rrt-d1 2>&1)
if wait_state rrt-d1 running && [ "$(state rrt-d1 Pid)" != "$pid1" ]; then
  pass "restart: running again, a new process"
else
  fail "restart: running again, a new process" "restart: $out" "status $(state rrt-d1 Status)"
fi

out=$(D kill rrt-d1 2>&1)
wait_state rrt-d1 exited
is "$(state rrt-d1 Status) $(state rrt-d1 ExitCode)" "exited 137" "kill: exited with 137 (SIGKILL)" \
  "kill: $out"
D rm rrt-d1 >/dev/null 2>&1

# stop: SIGTERM reaches the container's handler (trap installed before the log line).
D run -d --network none --name rrt-d2 "$IMG" \
  sh -c 'trap "exit 5" TERM; echo ready; while :; do sleep 0.1; done' >/dev/null 2>&1
wait_log rrt-d2 ready
out=$(D stop -t 20 rrt-d2 2>&1)
is "$(state rrt-d2 Status) $(state rrt-d2 ExitCode)" "exited 5" "stop: SIGTERM reaches the process" \
  "stop: $out"
D rm rrt-d2 >/dev/null 2>&1

# logs: both streams of a container that ran.
D run -d --network none --name rrt-d3 "$IMG" sh -c 'echo to-stdout; echo to-stderr >&2' >/dev/null 2>&1
wait_state rrt-d3 exited
is "$(D logs rrt-d3 2>&1 | sort)" $'to-stderr\nto-stdout' "logs: the container's stdout and stderr"
D rm rrt-d3 >/dev/null 2>&1

# rm -f of a running container: gone for docker and for the runtime.
c=$(D run -d --network none "$IMG" sleep 1000 2>&1)
wait_state "$c" running
out=$(D rm -f "$c" 2>&1)
is "$(D ps -aq --no-trunc | grep -c "^$c")" 0 "rm -f: docker lists the container no more" "rm: $out"
left=$("$RT_BIN" --root "$W/exec/runtime-$RT_NAME/moby" list -q 2>/dev/null | grep -c "^$c")
is "$left" 0 "rm -f: the runtime has no state of it"

summary "$mode"
[ "$N_FAIL" -eq 0 ]
