#!/bin/bash
# t-faults.sh: the lifecycle under faults (issue 12, items 1-3). The runtime is killed with
# SIGKILL at a sweep of instants during create (plain, and with --network slirp when
# /dev/net/tun is usable) and during start, and state.json is corrupted in several ways
# (garbage, empty, truncated at several lengths) or missing. After each: `list` shows what
# exists, the status is true (a program that runs is "running"), `delete --force` removes it
# all (no process, no mount, no directory) and the id can be created again.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# status_in_list ID: the status `list -f json` gives ID (empty when not listed).
status_in_list() {
  rrt list -f json 2>/dev/null | jq -r --arg id "$1" '.[] | select(.id == $id) | .status'
}

# sweep NAME BUNDLE STEPS [CREATE FLAGS...]: create killed at STEPS instants spread over 1.3
# times a create's own duration; one TAP line per property, naming the delays that broke it.
sweep_create() {
  local name=$1 b=$2 steps=$3 i id dur d res st left
  shift 3
  id=$(new_id "${name//[^A-Za-z0-9]/-}")
  # The second of two: the first compiles the seccomp filter the others find cached.
  run rrt create "$@" -b "$b" "$id"
  rrt delete -f "$id" >/dev/null 2>&1
  if [ "$rc" -ne 0 ]; then
    fail "$name: a create to time" "$err"
    return
  fi
  dur=$(kill_after -1 "$RRT" --root "$RRT_ROOT" create "$@" -b "$b" "$id")
  rrt delete -f "$id" >/dev/null 2>&1
  [[ $dur =~ ^[0-9]+$ ]] || dur=30000
  local bad_list="" bad_delete="" bad_left="" bad_again="" killed=0 states=""
  for ((i = 0; i < steps; i++)); do
    d=$((dur * 13 * i / 10 / steps))
    id=$(new_id "${name//[^A-Za-z0-9]/-}")
    res=$(kill_after "$d" "$RRT" --root "$RRT_ROOT" create "$@" -b "$b" "$id")
    [ "$res" = killed ] && killed=$((killed + 1))
    if [ -e "$RRT_ROOT/$id" ]; then
      st=$(status_in_list "$id")
      [ -n "$st" ] || bad_list+=" ${d}us"
      states+=" ${st:-none}"
    fi
    rrt delete --force "$id" >"$T_WORK/del.out" 2>&1 || bad_delete+=" ${d}us($(tail -n 1 "$T_WORK/del.out"))"
    left=$(leftovers "$id" "$b")
    [ -z "$left" ] || bad_left+=" ${d}us($left)"
    if rrt create "$@" -b "$b" "$id" >"$T_WORK/again.out" 2>&1 </dev/null; then
      rrt delete --force "$id" >/dev/null 2>&1
      left=$(leftovers "$id" "$b")
      [ -z "$left" ] || bad_left+=" ${d}us(after the second create: $left)"
    else
      bad_again+=" ${d}us($(tail -n 1 "$T_WORK/again.out"))"
      rrt delete --force "$id" >/dev/null 2>&1
    fi
  done
  diag "$name: create took ${dur} us; $killed of $steps runs killed; statuses seen:${states:- none}"
  is "${bad_list# }" "" "$name: every half-made container left by a killed create is listed"
  is "${bad_delete# }" "" "$name: delete --force succeeds whatever instant create died at"
  is "${bad_left# }" "" "$name: and leaves no process, mount or state directory"
  is "${bad_again# }" "" "$name: and the id can be created again"
  ok "$name: the sweep did kill creates half way" test "$killed" -gt 0
}

# ---------------------------------------------------------------- create killed

b=$(mkbundle faults rrt-probe sleep 100)
sweep_create create "$b" 24

if [ -e /dev/net/tun ] && (exec 3<>/dev/net/tun) 2>/dev/null &&
  [ -x "$(dirname "$RRT")/rootlessrt-net" ]; then
  sweep_create "create --network slirp" "$b" 12 --network slirp
else
  skip "--network slirp: /dev/net/tun is not usable here or rootlessrt-net is missing" 5
fi

# ---------------------------------------------------------------- start killed

mkdir -m 0755 "$T_WORK/mark"
sb=$(mkbundle faultstart sh -c 'echo ran >>/mark/ran; exec rrt-probe sleep 100')
cfg "$sb" '.mounts += [{destination: "/mark", type: "bind", source: $m, options: ["rbind", "rw"]}]' \
  --arg m "$T_WORK/mark"
id=$(new_id starttime)
rrt create -b "$sb" "$id" >/dev/null 2>&1 </dev/null
dur=$(kill_after -1 "$RRT" --root "$RRT_ROOT" start "$id")
rrt delete -f "$id" >/dev/null 2>&1
[[ $dur =~ ^[0-9]+$ ]] || dur=20000
steps=12
bad_status="" bad_second="" bad_runs="" bad_third="" bad_left="" killed=0
for ((i = 0; i < steps; i++)); do
  d=$((dur * 13 * i / 10 / steps))
  rm -f "$T_WORK/mark/ran"
  id=$(new_id start)
  if ! rrt create -b "$sb" "$id" >"$T_WORK/c.out" 2>&1 </dev/null; then
    fail "start sweep: create $id" "$(cat "$T_WORK/c.out")"
    continue
  fi
  res=$(kill_after "$d" "$RRT" --root "$RRT_ROOT" start "$id")
  [ "$res" = killed ] && killed=$((killed + 1))
  # The program ran: whatever moment start died at, the container is running.
  if [ -s "$T_WORK/mark/ran" ]; then
    st=$(status_of "$id")
    [ "$st" = running ] || bad_status+=" ${d}us($st)"
  fi
  # A second start: it starts a container whose init still waits, or says it was started.
  run rrt start "$id"
  if [ "$rc" -ne 0 ] && ! [[ $err =~ started\ already|being\ started\ already ]]; then
    bad_second+=" ${d}us($err)"
  fi
  if wait_until 10 test -s "$T_WORK/mark/ran"; then
    n=$(wc -l <"$T_WORK/mark/ran")
    [ "$n" -eq 1 ] || bad_runs+=" ${d}us(ran $n times)"
  else
    bad_runs+=" ${d}us(never ran)"
  fi
  st=$(status_of "$id")
  [ "$st" = running ] || bad_status+=" ${d}us(after: $st)"
  run rrt start "$id"
  [[ $rc == 1 && $err =~ has\ been\ started\ already ]] || bad_third+=" ${d}us($rc: $err)"
  rrt delete --force "$id" >/dev/null 2>&1
  left=$(leftovers "$id" "$sb")
  [ -z "$left" ] || bad_left+=" ${d}us($left)"
done
diag "start took ${dur} us; $killed of $steps runs killed"
is "${bad_status# }" "" "start killed: a container whose program runs is running, whatever moment start died at"
is "${bad_second# }" "" "a second start either starts it (init still waited) or says it was started"
is "${bad_runs# }" "" "the program runs exactly once"
is "${bad_third# }" "" "a start after that says clearly it has been started already"
is "${bad_left# }" "" "delete --force leaves nothing"
ok "the sweep did kill starts half way" test "$killed" -gt 0

# ---------------------------------------------------------------- corrupt or missing state.json

gone() { # gone PID: no such process, or only a zombie waiting for its parent
  [ ! -e "/proc/$1" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ]
}

# corrupt KIND: rewrites ROOT/ID/state.json (id in $id) as KIND says.
corrupt() {
  local f=$RRT_ROOT/$id/state.json len
  len=$(stat -c %s "$f")
  case $1 in
    garbage) printf '\x7fELF\x01 not json at all {{{' >"$f" ;;
    empty) : >"$f" ;;
    missing) rm -f "$f" ;;
    truncated-1) truncate -s 1 "$f" ;;
    truncated-17) truncate -s 17 "$f" ;;
    truncated-half) truncate -s $((len / 2)) "$f" ;;
    truncated-last) truncate -s $((len - 1)) "$f" ;;
    not-object) echo '[1, 2, 3]' >"$f" ;;
  esac
}

for kind in garbage empty missing truncated-1 truncated-17 truncated-half truncated-last not-object; do
  id=$(new_id "broken-$kind")
  if [ "$kind" = garbage ] || [ "$kind" = truncated-half ]; then
    rrt run -d -b "$b" "$id" >/dev/null 2>&1 </dev/null # a running one too
  else
    rrt create -b "$b" "$id" >/dev/null 2>&1 </dev/null
  fi
  pid=$(state_field "$id" .pid)
  if [ -z "$pid" ] || [ "$pid" = 0 ]; then
    fail "$kind: a container to break"
    continue
  fi
  corrupt "$kind"
  is "$(status_in_list "$id")" broken "$kind state.json: list shows the container as broken"
  run rrt state "$id"
  like "$rc:$err" "^1:.*\"$id\" is broken: state.json is (corrupt|missing).*delete --force" \
    "$kind: state says it is broken and how to remove it"
  run rrt delete "$id"
  like "$rc:$err" '^1:.*delete --force' "$kind: delete without --force refuses, naming --force"
  run rrt delete --force "$id"
  is "$rc" 0 "$kind: delete --force removes it"
  ok "$kind: and its init (pid $pid) is gone" wait_until 5 gone "$pid"
  nothing_left "$id" "$b" "$kind: nothing is left of it"
  run rrt create -b "$b" "$id"
  is "$rc" 0 "$kind: the id can be created again"
  rrt delete --force "$id" >/dev/null 2>&1
done

# ---------------------------------------------------------------- a create still at work

# No state.json yet while a create holds the directory's lock: "creating", not "broken". The
# lock is held here by this shell (flock on a descriptor of the directory), as create holds it.
id=$(new_id creating)
rrt create -b "$b" "$id" >/dev/null 2>&1 </dev/null
pid=$(state_field "$id" .pid)
mv "$RRT_ROOT/$id/state.json" "$T_WORK/state.json.saved"
exec 9<"$RRT_ROOT/$id"
flock -x 9
is "$(status_in_list "$id")" creating "list: a container whose create still holds the lock is creating"
is "$(state_field "$id" '"\(.status) \(.pid)"')" "creating $pid" \
  "state: status creating, with init's pid from the record create made first"
exec 9<&-
is "$(status_in_list "$id")" broken "once its create is gone without a state.json: broken"
mv "$T_WORK/state.json.saved" "$RRT_ROOT/$id/state.json"
is "$(status_in_list "$id")" created "and with its state.json back: created"
run rrt delete --force "$id"
is "$rc" 0 "delete --force"
nothing_left "$id" "$b"

done_testing
