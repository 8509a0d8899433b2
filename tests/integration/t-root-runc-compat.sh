#!/bin/bash
# t-root-runc-compat.sh: what runc's own bats suite (contrib/runc-bats.sh) found missing, as real
# root on this legacy/hybrid host: spec's terminal and namespaces as runc's, --console-socket
# without a terminal refused, events (stats, interval, oom), exec into a paused container
# (refused; --ignore-paused), exec --additional-gids, ps through ps(1) with its arguments, update
# flags after the id, list's JSON key order.
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

N=51
if ! real_root; then
  skip "the cgroup v1 controllers are for real root only; this runs as uid $(id -u)" "$N"
  done_testing
fi
V1=/sys/fs/cgroup
for c in memory pids freezer cpuacct; do
  if ! awk -v c="$c" '$9 == "cgroup" && $5 == "/sys/fs/cgroup/" c {f = 1} END {exit !f}' /proc/self/mountinfo; then
    skip "no cgroup v1 $c controller at $V1/$c: not a legacy or hybrid host" "$N"
    done_testing
  fi
done

top=rrt-rc-$$
cleanup_top() {
  find "$V1" -depth -type d \( -path "*/$top/*" -o -name "$top" \) -exec rmdir {} \; 2>/dev/null
}
trap 'cleanup_top; _cleanup' EXIT

# ---------------------------------------------------------------- spec, as runc's
d=$T_WORK/spec
mkdir "$d"
run rrt spec -b "$d"
is "$rc" 0 "spec as root"
is "$(jq -r .process.terminal "$d/config.json")" true "spec: process.terminal true (an interactive sh, as runc's)"
is "$(jq -r '[.linux.namespaces[].type] | join(",")' "$d/config.json")" "pid,network,ipc,uts,mount" \
  "spec as root: no cgroup or user namespace (runc's list)"
is "$(jq -c .linux.resources "$d/config.json")" '{"devices":[{"allow":false,"access":"rwm"}]}' \
  "spec as root: runc's device rule, in a linux.resources that tools add their limits to"

# ---------------------------------------------------------------- --console-socket, no terminal
b=$(rootbundle cs rrt-probe sleep 100)
id=$(new_id cs)
run rrt create --console-socket "$T_WORK/no.sock" -b "$b" "$id"
fails_naming '--console-socket.*process.terminal is false' \
  "create --console-socket with process.terminal false is refused (it would wait forever)"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- events
b=$(rootbundle ev rrt-probe sleep 1000)
cfg "$b" '.linux.cgroupsPath = $p | .linux.resources = {"memory": {"limit": 67108864}, "pids": {"limit": 40}}' \
  --arg p "/$top/ev"
id=$(new_id ev)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "run -d with limits"
init=$(state_field "$id" .pid)
run rrt events --stats "$id"
is "$rc" 0 "events --stats"
is "$(jq -r '"\(.type) \(.id)"' <<<"$out" 2>&1)" "stats $id" "events --stats: one stats line for the container"
like "$out" '^\{"type":"stats","id":"[^"]+","data":\{' "events --stats: runc's key order, no spaces"
stats=$out
is "$(jq -r .data.memory.usage.limit <<<"$stats" 2>&1)" 67108864 "events: memory.usage.limit is the configured limit"
is "$(jq -r .data.pids.limit <<<"$stats" 2>&1)" 40 "events: pids.limit is the configured limit"
ok "events: pids.current counts init" test "$(jq -r .data.pids.current <<<"$stats" 2>/dev/null)" -ge 1
ok "events: cpu.usage.total is a number of nanoseconds" \
  test "$(jq -r '.data.cpu.usage.total // 0' <<<"$stats" 2>/dev/null)" -gt 0
is "$(wc -l <<<"$stats")" 1 "events --stats exits after one line"

# Every interval until the container is deleted; an oom line for an OOM kill in its cgroup.
rrt_bg "$T_WORK/events.out" events --interval 200ms "$id"
ev=$RRT_BG_PID
wait_until 5 test "$(grep -c '"type":"stats"' "$T_WORK/events.out")" -ge 2
ok "events --interval 200ms: a stats line each interval" \
  test "$(grep -c '"type":"stats"' "$T_WORK/events.out")" -ge 2
run rrt exec "$id" sh -c 'x=$(head -c 200000000 /dev/zero | tr "\0" x); echo $x'
wait_until 5 grep -q '"type":"oom"' "$T_WORK/events.out"
has_line "$(cat "$T_WORK/events.out")" "^\{\"type\":\"oom\",\"id\":\"$id\"\}\$" \
  "events: an OOM kill in the container's cgroup prints {\"type\":\"oom\",\"id\":ID}"
run rrt delete -f "$id"
wait_pid "$ev" 5
is "$?" 0 "events ends (status 0) once the container is deleted"
nothing_left "$id" "$b"

run rrt events --interval 0s "$id"
fails_naming 'interval.*greater than 0' "events --interval 0s is refused"
run rrt events --interval 5 "$id"
fails_naming 'needs a unit' "events --interval without a unit is refused"
b2=$(rootbundle evs rrt-probe true)
id=$(new_id evs)
rrt create -b "$b2" "$id" >/dev/null 2>&1 && rrt start "$id" >/dev/null 2>&1
wait_status "$id" stopped 5
run rrt events --stats "$id"
fails_naming 'is not running' "events on a stopped container is refused"
rrt delete -f "$id" >/dev/null 2>&1

# ---------------------------------------------------------------- paused: exec, --ignore-paused
b=$(rootbundle pz rrt-probe sleep 1000)
cfg "$b" '.linux.cgroupsPath = $p' --arg p "/$top/pz"
id=$(new_id pz)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "run -d"
init=$(state_field "$id" .pid)
run rrt pause "$id"
is "$rc" 0 "pause"
run rrt exec "$id" echo ok
exec_fails_naming 'cannot exec in a paused container.*--ignore-paused' \
  "exec into a paused container is refused, naming --ignore-paused"
(
  sleep 1
  rrt resume "$id" >/dev/null 2>&1
) &
t0=$SECONDS
run rrt exec --ignore-paused "$id" echo ok
wait
is "$rc $out" "0 ok" "exec --ignore-paused runs the process once the container is resumed"
ok "exec --ignore-paused waited for the resume" test $((SECONDS - t0)) -ge 1

# ---------------------------------------------------------------- exec --additional-gids
run rrt exec -u 1000:1000 --additional-gids 100 --additional-gids 65534 "$id" id -G
is "$rc $out" "0 1000 100 65534" "exec --additional-gids: the supplementary groups given"
run rrt exec --additional-gids users "$id" id -G
exec_fails_naming 'additional-gids "users": not a gid' "exec --additional-gids with a name is refused"

# ---------------------------------------------------------------- ps through ps(1)
run rrt ps "$id"
is "$rc" 0 "ps"
like "$(head -n 1 <<<"$out")" '^UID +PID +PPID +C +STIME +TTY +TIME +CMD' "ps: ps -ef's header"
has_line "$out" "^root +$init +" "ps: init's line, as ps -ef prints it"
is "$(grep -cv '^UID' <<<"$out")" 1 "ps: no process outside the container"
run rrt ps "$id" -o pid,comm
is "$rc" 0 "ps ID PS_ARGS"
is "$(tr -s ' ' <<<"$out" | sed 's/^ //')" "$(printf "PID COMMAND\n%s rrt-probe" "$init")" \
  "ps: what follows the id goes to ps(1)"
run rrt ps -f json "$id"
is "$out" "[$init]" "ps -f json: the pids"
run rrt ps "$id" -o nosuchfield
fails_naming 'ps: ps\(1\) failed' "ps: ps(1)'s failure is an error"

# ---------------------------------------------------------------- update: flags after the id
run rrt update "$id" --pids-limit 33
is "$rc" 0 "update ID --pids-limit (flags after the id)"
is "$(cat "$V1/pids/$top/pz/pids.max" 2>/dev/null)" 33 "update ID --pids-limit wrote pids.max"
# --memory -1 after a swap limit: memory+swap goes unlimited too (v1 refuses memory above memsw).
mem=$V1/memory/$top/pz
if [ -e "$mem/memory.memsw.limit_in_bytes" ]; then
  run rrt update "$id" --memory 64m --memory-swap 96m
  is "$rc $(cat "$mem/memory.memsw.limit_in_bytes")" "0 100663296" "update --memory-swap sets memsw"
  run rrt update "$id" --memory -1
  is "$rc" 0 "update --memory -1 after a swap limit"
  [ "$rc" = 0 ] || diag "$err"
  is "$(cat "$mem/memory.limit_in_bytes") $(cat "$mem/memory.memsw.limit_in_bytes")" \
    "$(cat "$V1/memory/memory.limit_in_bytes") $(cat "$V1/memory/memory.memsw.limit_in_bytes")" \
    "update --memory -1: memory and memory+swap unlimited"
else
  skip "no memory.memsw (swap accounting off)" 3
fi
run rrt update "$id" extra
fails_naming 'unexpected argument "extra"' "update: a second operand is still an error"

# ---------------------------------------------------------------- cpu period and quota, in a pod
# The pod's quota is 50%; a shorter period written before the quota is refused while the child's
# quota is still unlimited: the partner goes first.
mkdir -p "$V1/cpu/$top/pod" && echo 50000 >"$V1/cpu/$top/pod/cpu.cfs_quota_us"
bp=$(rootbundle pod rrt-probe sleep 1000)
cfg "$bp" '.linux.cgroupsPath = $p' --arg p "/$top/pod/c"
idp=$(new_id pod)
run rrt run -d -b "$bp" "$idp"
is "$rc" 0 "run -d in a pod cgroup with a cpu quota"
run rrt update --cpu-quota 60000 "$idp"
fails_naming 'cpu.quota' "update: a quota above the pod's is refused, naming cpu.quota"
run rrt update --cpu-period 10000 --cpu-quota 3000 "$idp"
is "$rc" 0 "update --cpu-period 10000 --cpu-quota 3000 under the pod's limit"
[ "$rc" = 0 ] || diag "$err"
is "$(cat "$V1/cpu/$top/pod/c/cpu.cfs_period_us") $(cat "$V1/cpu/$top/pod/c/cpu.cfs_quota_us")" \
  "10000 3000" "both written"
run rrt delete -f "$idp"
nothing_left "$idp" "$bp"

# ---------------------------------------------------------------- list: runc's key order
run rrt list -f json
is "$(jq -r '.[0] | keys_unsorted | .[0:4] | join(",")' <<<"$out" 2>&1)" "ociVersion,id,pid,status" \
  "list -f json: ociVersion, id, pid, status first, as runc"

run rrt delete -f "$id"
is "$rc" 0 "delete -f"
nothing_left "$id" "$b"
done_testing
