#!/bin/bash
# t-systemd.sh: the systemd cgroup driver against a real systemd user manager: with
# --systemd-cgroup, cgroupsPath slice:prefix:name becomes the transient scope prefix-name.scope
# (Delegate=yes) holding init in its sub-cgroup "container", the limits become unit properties
# (checked with `systemctl --user show`), pause/resume/ps/kill --all/update/delete work through it
# and the scope is gone after delete; without a bus, one warning and the cgroupfs manager. The
# manager comes from tests/helper/systemd-user.sh (as root: it makes a user session for the
# test user); not as root, or without systemd, the file skips saying why. This machine's cgroup v2 has
# no controllers: limit values are t-cgroup's and t-root-cgroup's, their translation is here.
# rrt-test-as: root
# shellcheck disable=SC2016

N=33
tool=${RRT_SYSTEMD_USER:-}
user=${RRT_TEST_USER:-rrt-test}
if [ "${1:-}" != --inner ]; then
  why=""
  if [ "$(id -u)" != 0 ]; then
    why="a systemd user manager is started by root (systemd-user.sh); this runs as uid $(id -u)"
  elif [ -z "$tool" ] || [ ! -x "$tool" ]; then
    why="no tests/helper/systemd-user.sh (RRT_SYSTEMD_USER) to start a systemd user manager"
  elif [ ! -x /lib/systemd/systemd ] || ! command -v systemctl >/dev/null; then
    why="systemd is not installed (apt-get install systemd dbus-user-session)"
  elif [ ! -x "$(dirname "$RRT")/rootlessrt-systemd" ]; then
    why="no rootlessrt-systemd beside $RRT"
  elif ! id "$user" >/dev/null 2>&1; then
    why="no user $user"
  fi
  if [ -n "$why" ]; then
    for ((i = 1; i <= N; i++)); do echo "ok $i # SKIP $why"; done
    echo "1..$N"
    exit 0
  fi
  cgp=rrt-sd-t-$$
  # The test user's own temporary directory: the root tests' TMPDIR is root's.
  tmp=$(mktemp -d /tmp/rrt-t-systemd.XXXXXX) && chown "$user" "$tmp" || exit 1
  CG_PARENT=$cgp "$tool" "$user" env PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 \
    RRT="$RRT" PROBE="$PROBE" TESTS_DIR="${TESTS_DIR:-}" SPEC_DIR="${SPEC_DIR:-}" \
    TMPDIR="$tmp" RRT_ASAN="${RRT_ASAN:-0}" bash "$0" --inner
  rc=$?
  rm -rf "$tmp"
  # The manager's cgroups (the tool makes them under the cgroup2 root) go with it.
  mnt=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
  [ -n "$mnt" ] && [ -d "$mnt/$cgp" ] && find "$mnt/$cgp" -depth -type d -exec rmdir {} + 2>/dev/null
  exit "$rc"
fi

# ---------------------------------------------------------------- inside: the test user's session
unset RRT_ROOT
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

b=$(mkbundle sd rrt-probe sleep 1000)
own=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
show() { systemctl --user show "$1" -p "$2" --value 2>/dev/null; }

id=$(new_id sd)
cfg "$b" '.linux.cgroupsPath = $p | .linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 10},
  "cpu": {"quota": 50000, "period": 100000, "shares": 1024, "cpus": "0"},
  "unified": {"memory.high": "50331648", "cgroup.max.descendants": "5"}}' --arg p "user.slice:rrt:$id"
run rrt --systemd-cgroup run -d -b "$b" "$id"
is "$rc" 0 "--systemd-cgroup run -d with cgroupsPath user.slice:rrt:$id"
[ "$rc" = 0 ] || diag "$err"
unit=rrt-$id.scope
is "$(show "$unit" ActiveState)" active "the transient scope $unit is active"
is "$(show "$unit" Slice)" user.slice "in user.slice"
is "$(show "$unit" Delegate)" yes "with Delegate=yes"
is "$(show "$unit" MemoryMax) $(show "$unit" MemoryHigh) $(show "$unit" TasksMax)" \
  "67108864 50331648 10" "memory.limit, unified memory.high, pids.limit: MemoryMax, MemoryHigh, TasksMax"
is "$(show "$unit" CPUQuotaPerSecUSec) $(show "$unit" CPUWeight) $(show "$unit" AllowedCPUs)" \
  "500ms 39 0" "cpu quota/period, shares, cpus: CPUQuotaPerSecUSec, CPUWeight, AllowedCPUs"
scope=/sys/fs/cgroup$(show "$unit" ControlGroup)
init=$(state_field "$id" .pid)
is "$(sed -n 's/^0:://p' "/proc/$init/cgroup" 2>/dev/null)" "$(show "$unit" ControlGroup)/container" \
  "init is in the scope's sub-cgroup container"
is "$(cat "$scope/container/cgroup.max.descendants" 2>/dev/null)" 5 \
  "a limit systemd has no property for is written through cgroupfs"
run rrt ps -f json "$id"
is "$out" "[$init]" "ps lists the scope's processes"
run rrt pause "$id"
is "$(status_of "$id")" paused "pause freezes it"
run rrt resume "$id"
is "$(status_of "$id")" running "resume thaws it"
printf '{"memory": {"limit": 134217728}}' >"$T_WORK/u.json"
run rrt update -r "$T_WORK/u.json" "$id"
is "$rc:$(show "$unit" MemoryMax)" 0:134217728 "update sets MemoryMax on the unit"
# docker update --memory through the shim: cpu period and quota 0 (unchanged), Docker's zeros.
printf '{"memory": {"limit": 100663296}, "cpu": {"period": 0, "quota": 0, "shares": 0},
  "blockIO": {"weight": 0}}' >"$T_WORK/u2.json"
run rrt update -r "$T_WORK/u2.json" "$id"
is "$rc:$(show "$unit" MemoryMax) $(show "$unit" CPUQuotaPerSecUSec) $(show "$unit" CPUWeight)" \
  "0:100663296 500ms 39" "update with cpu period and quota 0 and Docker's zeros changes MemoryMax only"
# All or nothing: a cgroupfs write the kernel refuses sets no property (they are set last), and a
# property systemd refuses puts back the cgroupfs writes made before it.
printf '{"memory": {"limit": 201326592}, "unified": {"cgroup.max.descendants": "bogus"}}' \
  >"$T_WORK/u3.json"
run rrt update -r "$T_WORK/u3.json" "$id"
like "$rc:$err" '^1:.*unified\.cgroup\.max\.descendants' \
  "update with a cgroupfs value the kernel refuses fails, naming it"
is "$(show "$unit" MemoryMax) $(cat "$scope/container/cgroup.max.descendants" 2>/dev/null)" \
  "100663296 5" "and changes nothing: MemoryMax stays, the file too"
printf '{"cpu": {"cpus": "9000"}, "unified": {"cgroup.max.descendants": "7"}}' >"$T_WORK/u4.json"
run rrt update -r "$T_WORK/u4.json" "$id"
like "$rc:$err" '^1:.*systemd: set the properties' "update with a property systemd refuses fails"
is "$(cat "$scope/container/cgroup.max.descendants" 2>/dev/null) $(show "$unit" AllowedCPUs)" "5 0" \
  "and the cgroupfs write made before it is put back"
run rrt kill --all "$id" KILL
wait_status "$id" stopped 10
is "$(status_of "$id")" stopped "kill --all stops it"
run rrt delete "$id"
is "$rc" 0 "delete"
is "$(show "$unit" LoadState)" not-found "the scope is gone after delete"
ok "and so is its cgroup" test ! -e "$scope"
nothing_left "$id" "$b"

# The helper's failures: its own message and status 1 (under check-asan, no leak report either).
helper=$(dirname "$RRT")/rootlessrt-systemd
run "$helper" stop "$unit"
is "$rc:$err" "0:" "rootlessrt-systemd stop of a scope already gone: status 0, nothing said"
run "$helper" start "rrt-none-$id.scope" "" 2147483647
like "$rc:$err" '^1:rootlessrt-systemd: StartTransientUnit: [^'$'\n'']*$' \
  "rootlessrt-systemd start with no such process: status 1, one line from systemd"
run "$helper" set "$unit" Nope=1
like "$rc:$err" '^1:rootlessrt-systemd: property Nope=1: .*build the call[^'$'\n'']*$' \
  "rootlessrt-systemd set of an unknown property: status 1, naming it"

# No cgroupsPath: rootlessrt-<id>.scope in user.slice.
id=$(new_id dflt)
cfg "$b" 'del(.linux.cgroupsPath) | .linux.resources = {}'
rrt --cgroup-manager systemd run -d -b "$b" "$id" >/dev/null 2>&1
is "$(show "rootlessrt-$id.scope" ActiveState)/$(show "rootlessrt-$id.scope" Slice)" active/user.slice \
  "--cgroup-manager systemd without a path: rootlessrt-<id>.scope in user.slice"
rrt delete -f "$id" >/dev/null 2>&1

# No bus: one warning, and the caller's own cgroup through cgroupfs.
id=$(new_id nobus)
run env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR=/nonexistent "$RRT" --root "$RRT_ROOT" \
  --systemd-cgroup run -d -b "$b" "$id"
is "$rc" 0 "no bus: run -d still works"
is "$(grep -c 'warning' <<<"$err")" 1 "with one warning"
like "$err" 'systemd-cgroup: .*cgroupfs' "saying the cgroupfs manager is used instead"
is "$(jq -r .cgroup "$RRT_ROOT/$id/state.json" 2>/dev/null)" "$own/rootlessrt-$id" \
  "the container's cgroup is in the caller's own"
rrt delete -f "$id" >/dev/null 2>&1

# No bus and a limit that cgroupfs cannot apply here: an error at create.
id=$(new_id nobuslim)
cfg "$b" '.linux.resources = {"pids": {"limit": 10}}'
run env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR=/nonexistent "$RRT" --root "$RRT_ROOT" \
  --systemd-cgroup run -d -b "$b" "$id"
like "$rc:$err" '^1:.*pids\.limit' "no bus and a limit that cannot be applied: create fails naming it"
nothing_left "$id" "$b"

cfg "$b" '.linux.cgroupsPath = "a:b"'
run rrt --systemd-cgroup run -d -b "$b" "$(new_id bad)"
like "$rc:$err" '^1:.*linux\.cgroupsPath "a:b": .*slice:prefix:name' "a path not of the form slice:prefix:name is refused"
done_testing
