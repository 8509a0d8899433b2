#!/bin/bash
# t-lifecycle.sh: create -> start -> state -> kill -> delete with true statuses and valid state
# JSON, run in the foreground (exit codes, signal forwarding) and detached, --pid-file, delete -f,
# and concurrent starts serialised by the lock.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

check_state() { # check_state ID STATUS NAME: state exits 0, is valid, has STATUS, created, owner
  local id=$1 want=$2 name=$3 errs
  run rrt state "$id"
  if [ "$rc" -ne 0 ]; then
    fail "$name: state exits 0" "exit status $rc" "stderr: $err"
    skip "no state JSON" 4
    return
  fi
  errs=$(valid_state "$out")
  is "$errs" "" "$name: state JSON is valid against state-schema.json"
  is "$(jq -r '"\(.id) \(.status)"' <<<"$out")" "$id $want" "$name: state says $want"
  is "$(jq -r '.created | type == "string" and test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)$")' \
    <<<"$out")" true "$name: state has created (RFC 3339)"
  # Like runc and crun: the owner's user name.
  is "$(jq -r '.owner | if type == "string" then . else "not a string: \(.)" end' <<<"$out")" \
    "$(id -un)" "$name: state owner is the user's name"
}

# ---------------------------------------------------------------- create, start, kill, delete

b=$(mkbundle life rrt-probe signals)
id=$(new_id life)
pidfile=$T_WORK/life.pid
ctr_out=$T_WORK/life.out
rrt create --pid-file "$pidfile" -b "$b" "$id" >"$ctr_out" 2>&1
is "$?" 0 "create"
check_state "$id" created "after create"
run rrt state "$id"
pid=$(jq -r .pid <<<"$out")
is "$(jq -r .bundle <<<"$out")" "$b" "state bundle is the absolute bundle path"
like "$pid" '^[1-9][0-9]*$' "a created container has a pid"
ok "the created container's init process exists" test -d "/proc/$pid"
is "$(cat "$pidfile" 2>/dev/null)" "$pid" "--pid-file holds the init pid"
sleep 0.3
if grep -q ready "$ctr_out"; then
  fail "create does not run the user process" "container output: $(cat "$ctr_out")"
else
  pass "create does not run the user process"
fi
run rrt list -q
is "$out" "$id" "list -q shows the created container"

run rrt start "$id"
is "$rc" 0 "start"
[ "$rc" = 0 ] || diag "stderr: $err"
wait_until 10 grep -q ready "$ctr_out"
check_state "$id" running "after start"
is "$(state_field "$id" .pid)" "$pid" "start keeps the pid of create"

sent=""
for sig in USR1 SIGUSR2 10 HUP SIGWINCH; do
  run rrt kill "$id" "$sig"
  is "$rc" 0 "kill $sig"
  case $sig in 10) name=USR1 ;; *) name=${sig#SIG} ;; esac
  sent+="got $name"$'\n'
  n=$(printf '%s' "$sent" | wc -l)
  wait_until 5 bash -c '[ "$(grep -c "^got " "$1")" -ge "$2" ]' sh "$ctr_out" "$n"
done
is "$(grep '^got ' "$ctr_out")" "$(printf '%s' "$sent")" "the process got each signal, by name or number"

run rrt kill "$id"
is "$rc" 0 "kill without a signal"
wait_status "$id" stopped 10
check_state "$id" stopped "after kill (default TERM)"
is "$(tail -n 1 "$ctr_out")" "got TERM" "kill sends TERM by default"
ok "the init process is gone once stopped" bash -c '! test -d /proc/$1 || grep -q "^State:.*Z" /proc/$1/status' sh "$pid"

run rrt delete "$id"
is "$rc" 0 "delete a stopped container"
run rrt state "$id"
isnt "$rc" 0 "state after delete fails"
nothing_left "$id" "$b"

# A container whose process exits on its own becomes stopped.
b=$(mkbundle exits rrt-probe exit 0)
id=$(new_id exits)
run rrt create -b "$b" "$id"
run rrt start "$id"
is "$rc" 0 "start a process that exits at once"
wait_status "$id" stopped 10
is "$(status_of "$id")" stopped "a process that exited makes the container stopped"
run rrt delete "$id"
is "$rc" 0 "delete it"
nothing_left "$id" "$b"

# create takes the bundle from the working directory by default.
b=$(mkbundle cwd rrt-probe sleep 100)
id=$(new_id cwd)
run bash -c 'cd "$1" && shift && exec "$@"' sh "$b" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" create "$id"
is "$rc" 0 "create without --bundle, from the bundle directory"
is "$(state_field "$id" .bundle)" "$b" "the bundle is the working directory"
run rrt delete -f "$id"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- delete -f

b=$(mkbundle force rrt-probe spawn-sleep)
id=$(new_id force)
run rrt create -b "$b" "$id"
run rrt start "$id"
wait_status "$id" running 10
# shellcheck disable=SC2317 # called through wait_until
two_procs() { [ "$(procs_referencing "$1" | wc -l)" -ge 2 ]; }
wait_until 5 two_procs "$b"
run rrt delete -f "$id"
is "$rc" 0 "delete -f a running container (init and a child)"
nothing_left "$id" "$b" "delete -f leaves no process, state or mount"

b=$(mkbundle force2 rrt-probe sleep 100)
id=$(new_id force2)
run rrt create -b "$b" "$id"
run rrt delete --force "$id"
is "$rc" 0 "delete --force a created container"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- run

b=$(mkbundle exit3 rrt-probe exit 3)
id=$(new_id exit3)
run rrt run -b "$b" "$id"
is "$rc" 3 "run exits with the container's status (3)"
nothing_left "$id" "$b" "run removes the container once it exits"

b=$(mkbundle out rrt-probe hostname)
cfg "$b" '.hostname = "rrt-run-out"'
id=$(new_id out)
run rrt run -b "$b" "$id"
is "$rc:$out" "0:rrt-run-out" "run: the container's stdout is run's stdout"

b=$(mkbundle segv rrt-probe kill-self SEGV)
id=$(new_id segv)
run rrt run -b "$b" "$id"
is "$rc" 139 "run exits 128+11 when the process dies of SIGSEGV"
nothing_left "$id" "$b"

b=$(mkbundle killed rrt-probe sleep 100)
id=$(new_id killed)
rrt_bg "$T_WORK/killed.out" run -b "$b" "$id"
if wait_status "$id" running 10; then
  run rrt kill "$id" KILL
  is "$rc" 0 "kill KILL a foreground run"
  wait_pid "$RRT_BG_PID" 15
  is "$?" 137 "run exits 137 when the process is killed by KILL"
else
  fail "run starts (status running)" "output: $(cat "$T_WORK/killed.out")"
  skip "the container did not start" 1
fi
nothing_left "$id" "$b"

# The container starts with nothing ignored or blocked, whatever the caller had: a runtime started
# with HUP, USR1, PIPE and TERM ignored (a shell's `trap ''`) leaves none of them ignored.
b=$(mkbundle sigclean grep -E "^Sig(Blk|Ign):" /proc/self/status)
id=$(new_id sigclean)
run bash -c 'trap "" HUP USR1 PIPE TERM; exec "$@"' sh "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
is "$rc" 0 "run under a caller that ignores HUP, USR1, PIPE and TERM"
is "$(tr -s ' \t' ' ' <<<"$out")" "SigBlk: 0000000000000000"$'\n'"SigIgn: 0000000000000000" \
  "the container's process has no ignored and no blocked signal"
nothing_left "$id" "$b"

# Spare state directories: delete parks the emptied one in the private directory beside the
# root (DIR/.NAME.private), create takes it back. Nothing of the runtime's own is in the root,
# which runc and others sharing it would take for containers.
b=$(mkbundle spare true)
id=$(new_id spare)
priv=$(dirname "$RRT_ROOT")/.$(basename "$RRT_ROOT").private
run rrt run -b "$b" "$id"
is "$rc" 0 "run (a state directory to park)"
ok "after delete, an empty spare state directory waits beside the root" \
  bash -c '[ -d "$1/spare-0" ] && [ -z "$(ls -A "$1/spare-0")" ]' sh "$priv"
ok "and the container's own is gone" test ! -e "$RRT_ROOT/$id"
is "$(find "$RRT_ROOT" -mindepth 1 -maxdepth 1 -name '.*')" "" \
  "the root holds no private directory (.spare, .seccomp-cache) of the runtime's"
is "$(stat -c %a "$priv")" 700 "the private directory is the caller's alone (0700)"
run rrt list -q
is "$out" "" "list does not show the spare"
echo stale >"$priv/spare-0/stale"
id=$(new_id spare2)
rrt create -b "$b" "$id" >/dev/null 2>&1
is "$?" 0 "create with a spare that is not empty"
ok "gets a clean state directory (the stale file is not in it)" test ! -e "$RRT_ROOT/$id/stale"
run rrt create -b "$b" "$id"
like "$rc:$err" '^1:.*already exists' "a duplicate id is still refused with spares about"
rrt delete -f "$id" >/dev/null 2>&1
n=$(find "$priv" -mindepth 1 -maxdepth 1 -name 'spare-*' | wc -l)
ok "spares stay few ($n)" test "$n" -le 4
nothing_left "$id" "$b"

# The container gets the caller's CPUs: create moves its intermediate and the id-map helpers
# between CPUs for speed, and must leave nothing of that behind.
b=$(mkbundle cpus grep "^Cpus_allowed_list:" /proc/self/status)
id=$(new_id cpus)
run rrt run -b "$b" "$id"
is "$(tr -d ' \t' <<<"$out")" "$(grep "^Cpus_allowed_list:" /proc/self/status | tr -d ' \t')" \
  "the container's process may use every CPU the caller may"
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 1 ]; then
  id=$(new_id cpus1)
  run taskset -c 1 "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
  is "$(tr -d ' \t' <<<"$out")" "Cpus_allowed_list:1" "a caller held to CPU 1 (taskset) gets CPU 1 alone"
else
  skip "taskset or a second CPU is missing" 1
fi
nothing_left "$id" "$b"

# Signals sent to a foreground run reach the container process.
b=$(mkbundle fwd rrt-probe signals)
id=$(new_id fwd)
rrt_bg "$T_WORK/fwd.out" run -b "$b" "$id"
if wait_until 10 grep -q ready "$T_WORK/fwd.out"; then
  kill -USR1 "$RRT_BG_PID"
  wait_until 5 grep -q 'got USR1' "$T_WORK/fwd.out"
  ok "run forwards USR1 to the container" grep -q 'got USR1' "$T_WORK/fwd.out"
  kill -TERM "$RRT_BG_PID"
  wait_pid "$RRT_BG_PID" 15
  is "$?" 0 "run forwards TERM; the process exits 0 and so does run"
  ok "the container got TERM" grep -q 'got TERM' "$T_WORK/fwd.out"
else
  fail "run starts the signals probe" "output: $(cat "$T_WORK/fwd.out")"
  kill -KILL "$RRT_BG_PID" 2>/dev/null
  skip "the container did not start" 3
fi
nothing_left "$id" "$b"

# run -d returns at once and leaves the container running.
b=$(mkbundle detach rrt-probe sleep 100)
id=$(new_id detach)
start=$SECONDS
run rrt run -d --pid-file "$T_WORK/detach.pid" -b "$b" "$id"
is "$rc" 0 "run -d"
ok "run -d returns without waiting for the process" test "$((SECONDS - start))" -lt 10
is "$(status_of "$id")" running "after run -d the container is running"
pid=$(state_field "$id" .pid)
is "$(cat "$T_WORK/detach.pid" 2>/dev/null)" "$pid" "run --pid-file holds the init pid"
run rrt kill "$id" 9
is "$rc" 0 "kill 9"
wait_status "$id" stopped 10
is "$(status_of "$id")" stopped "killed by 9: stopped"
run rrt delete "$id"
is "$rc" 0 "delete after kill"
nothing_left "$id" "$b"

b=$(mkbundle detach2 rrt-probe sleep 100)
id=$(new_id detach2)
run rrt run --detach -b "$b" "$id"
is "$rc:$(status_of "$id")" "0:running" "run --detach (long form)"
run rrt delete -f "$id"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- the lock

# Two concurrent starts of one created container: exactly one succeeds, the process runs once.
b=$(mkbundle race rrt-probe signals)
id=$(new_id race)
rrt create -b "$b" "$id" >"$T_WORK/race.out" 2>&1
(rrt start "$id" >/dev/null 2>&1; echo "$?" >"$T_WORK/race.1") &
p1=$!
(rrt start "$id" >/dev/null 2>&1; echo "$?" >"$T_WORK/race.2") &
p2=$!
wait "$p1" "$p2"
is "$(sort "$T_WORK/race.1" "$T_WORK/race.2" | paste -sd ' ')" "0 1" \
  "two concurrent starts: one succeeds, one fails with exit 1"
wait_until 5 grep -q ready "$T_WORK/race.out"
is "$(grep -c ready "$T_WORK/race.out")" 1 "the process started once"
run rrt delete -f "$id"
nothing_left "$id" "$b"

done_testing
