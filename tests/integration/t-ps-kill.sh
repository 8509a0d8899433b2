#!/bin/bash
# t-ps-kill.sh: `ps` lists every process of the container (table and json), `kill --all` reaches
# the children of init too, and both give clear errors for stopped and unknown containers.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

b=$(mkbundle pk rrt-probe spawn-sleep)
id=$(new_id pk)
out_file=$T_WORK/pk.out
rrt run -d -b "$b" "$id" >"$out_file" 2>&1
is "$?" 0 "run -d a container whose init spawns a child"
wait_until 10 grep -qE '^[0-9]+$' "$out_file" || bail_out "the child never reported: $(cat "$out_file")"
init=$(state_field "$id" .pid)
# The child's pid on our side: the child of init.
child=$(awk '{print $1}' "/proc/$init/task/$init/children" 2>/dev/null)
like "$child" '^[1-9][0-9]*$' "init has a child"

run rrt ps -f json "$id"
is "$rc" 0 "ps -f json"
is "$(jq -c 'sort' <<<"$out")" "$(jq -nc --argjson a "$init" --argjson b "$child" '[$a, $b] | sort')" \
  "ps -f json is the array of init and its child"
is "$(jq '.[0]' <<<"$out")" "$init" "init comes first"
run rrt ps "$id"
is "$rc" 0 "ps (table)"
# The table is ps -ef's, cut to the container's processes (runc's).
is "$(head -n 1 <<<"$out" | tr -s ' ')" "UID PID PPID C STIME TTY TIME CMD" "table header (ps -ef's)"
has_line "$out" "^[^ ]+ +$init +[0-9]+ .* rrt-probe spawn-sleep\$" "table has init with its command line"
has_line "$out" "^[^ ]+ +$child +$init .* rrt-probe spawn-sleep\$" "table has the child"
is "$(wc -l <<<"$out")" 3 "and nothing else"
run rrt ps -f yaml "$id"
isnt "$rc" 0 "ps -f yaml is refused"
like "$err" 'table or json' "and says what is accepted"

run rrt exec -d "$id" rrt-probe sleep 1000
run rrt ps -f json "$id"
is "$(jq length <<<"$out")" 3 "an exec'd process shows up in ps"

run rrt kill --all "$id" KILL
is "$rc" 0 "kill --all KILL"
wait_status "$id" stopped 10
is "$(status_of "$id")" stopped "the container is stopped"
ok "the child of init is gone too" wait_until 5 bash -c '! test -d /proc/$1 || grep -q "^State:.*Z" /proc/$1/status' sh "$child"
run rrt ps -f json "$id"
is "$rc" 0 "ps of a stopped container exits 0"
is "$out" "[]" "and lists nothing"
# containerd calls kill --all once init has exited, to clean up what is left: nothing is, and
# that is a success (crun's behaviour); kill without --all still says it is not running.
run rrt kill --all "$id" KILL
is "$rc" 0 "kill --all of a stopped container succeeds"
run rrt kill "$id" KILL
like "$err" 'not running' "kill without --all says it is not running"
run rrt ps nosuch-container
is "$rc" 1 "ps of an unknown container exits 1"
like "$err" 'does not exist' "and says so"
run rrt delete "$id"
is "$rc" 0 "delete"
nothing_left "$id" "$b"

# kill --all with a catchable signal: every process gets it (not just init). init's trap does not
# exit: the second wait lets the child handle its TERM (an init that exited at once would end the
# pid namespace, and the kernel's SIGKILL could beat the child's handler).
b2=$(mkbundle pk2 sh -c 'trap "echo init-term" TERM; rrt-probe signals & wait; wait')
id2=$(new_id pk2)
o2=$T_WORK/pk2.out
rrt run -d -b "$b2" "$id2" >"$o2" 2>&1
wait_until 10 grep -q ready "$o2"
run rrt kill --all "$id2" TERM
is "$rc" 0 "kill --all TERM"
wait_until 10 grep -q 'got TERM' "$o2"
has_line "$(cat "$o2")" '^got TERM$' "the child of init got TERM"
wait_until 10 grep -q init-term "$o2"
has_line "$(cat "$o2")" '^init-term$' "and so did init"
wait_status "$id2" stopped 10
run rrt delete -f "$id2"
nothing_left "$id2" "$b2"
done_testing
