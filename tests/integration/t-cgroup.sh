#!/bin/bash
# t-cgroup.sh: the container's own cgroup v2 directory when the user has a delegated one
# (run-integration.sh delegates one when it runs as root): pause/resume through cgroup.freeze,
# state "paused", ps and exec through the cgroup, update, cleanup at delete; and without one, the
# clear errors of pause/resume/update.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

delegated=0
dir=$(own_cgroup_dir)
if [ "${RRT_CGROUP_DELEGATED:-0}" = 1 ] && [ -n "$dir" ] && [ -w "$dir" ] && [ -w "$dir/cgroup.procs" ]; then
  delegated=1
fi

b=$(mkbundle cg rrt-probe spawn-sleep)

# ---------------------------------------------------------------- without a delegated cgroup
id0=$(new_id nocg)
o0=$T_WORK/nocg.out
rrt --cgroup-manager disabled run -d -b "$b" "$id0" >"$o0" 2>&1
is "$?" 0 "run -d with --cgroup-manager disabled"
run rrt pause "$id0"
is "$rc" 1 "pause without a cgroup exits 1"
like "$err" "container \"$id0\" has no cgroup: no freezer is available to an unprivileged user" \
  "and says no freezer is available"
is "$(status_of "$id0")" running "the container keeps running"
run rrt resume "$id0"
is "$rc" 1 "resume of a running container exits 1"
like "$err" 'not paused' "and says it is not paused"
printf '{"memory": {"limit": 67108864}, "pids": {"limit": 10}}' >"$T_WORK/res.json"
run rrt update --resources "$T_WORK/res.json" "$id0"
is "$rc" 1 "update without a cgroup exits 1"
like "$err" 'memory\.limit: no delegated cgroup v2 memory controller available' "names memory.limit"
like "$err" 'pids\.limit: no delegated cgroup v2 pids controller available' "names pids.limit"
RUN_STDIN=$T_WORK/res.json run rrt update -r - "$id0"
is "$rc" 1 "update -r - reads stdin (and fails the same way)"
printf '{}' >"$T_WORK/empty.json"
run rrt update -r "$T_WORK/empty.json" "$id0"
is "$rc" 0 "update with no limit asked exits 0"
run rrt update "$id0"
isnt "$rc" 0 "update without --resources fails"
run rrt delete -f "$id0"
nothing_left "$id0" "$b"

# runtime.md: a limit that cannot be applied is an error, and no container is created.
bl=$(mkbundle cglim rrt-probe sleep 1000)
cfg "$bl" '.linux.resources.pids = {"limit": 10}'
idl=$(new_id lim)
run rrt run -d -b "$bl" "$idl"
if [ "$delegated" = 1 ] && [ -e "$dir/pids.max" ]; then
  is "$rc" 0 "create with a pids limit in a cgroup with the pids controller"
  pass "(the controller is delegated here: nothing to refuse)"
  rrt delete -f "$idl" >/dev/null 2>&1
else
  is "$rc" 1 "create with a pids limit that cannot be applied fails"
  like "$err" 'linux\.resources.*pids\.limit: .*(no delegated cgroup v2 pids controller|pids controller is not enabled).*Delegate' \
    "naming the limit and how to delegate the controller"
fi
nothing_left "$idl" "$bl"

if [ "$delegated" != 1 ]; then
  skip "no delegated cgroup v2: ${RRT_CGROUP_SKIP:-RRT_CGROUP_DELEGATED is not set}" 37
  done_testing
fi

# ---------------------------------------------------------------- with a delegated cgroup
id=$(new_id cg)
o=$T_WORK/cg.out
rrt run -d -b "$b" "$id" >"$o" 2>&1
is "$?" 0 "run -d in a delegated cgroup"
wait_until 10 grep -qE '^[0-9]+$' "$o"
init=$(state_field "$id" .pid)
child=$(awk '{print $1}' "/proc/$init/task/$init/children" 2>/dev/null)
cg=$dir/rootlessrt-$id
ok "the container has its own cgroup $cg" test -d "$cg"
is "$(sort -n "$cg/cgroup.procs" | paste -sd' ')" "$(printf '%s\n' "$init" "$child" | sort -n | paste -sd' ')" \
  "init and its child are in it"
run rrt ps -f json "$id"
is "$(jq -c 'sort' <<<"$out")" "$(jq -nc --argjson a "$init" --argjson b "$child" '[$a,$b] | sort')" \
  "ps lists the cgroup's processes"
run rrt exec -d --pid-file "$T_WORK/e.pid" "$id" rrt-probe sleep 1000
epid=$(cat "$T_WORK/e.pid" 2>/dev/null)
ok "an exec'd process joins the container's cgroup" grep -qx "${epid:-none}" "$cg/cgroup.procs"

run rrt pause "$id"
is "$rc" 0 "pause"
[ "$rc" = 0 ] || diag "$err"
is "$(status_of "$id")" paused "state says paused"
is "$(state_field "$id" .status)" paused "state JSON status paused"
has_line "$(cat "$cg/cgroup.events" 2>/dev/null)" '^frozen 1$' "cgroup.events says frozen"
run rrt pause "$id"
isnt "$rc" 0 "pause of a paused container fails"
run rrt exec "$id" true
isnt "$rc" 0 "exec into a paused container fails"
like "$err" 'paused' "and says it is paused"
run rrt resume "$id"
is "$rc" 0 "resume"
is "$(status_of "$id")" running "state says running again"
has_line "$(cat "$cg/cgroup.events" 2>/dev/null)" '^frozen 0$' "cgroup.events says thawed"

# The core interface files are the owner's whatever controllers there are.
printf '{"unified": {"cgroup.max.descendants": "7"}}' >"$T_WORK/u.json"
run rrt update -r "$T_WORK/u.json" "$id"
is "$rc" 0 "update of a core interface file"
is "$(cat "$cg/cgroup.max.descendants" 2>/dev/null)" 7 "unified cgroup.max.descendants written"
# All or nothing: a limit that cannot be applied fails the update, and nothing is written.
printf '{"unified": {"cgroup.max.descendants": "5"}, "pids": {"limit": 10}}' >"$T_WORK/u.json"
run rrt update -r "$T_WORK/u.json" "$id"
if [ -e "$cg/pids.max" ]; then
  is "$(cat "$cg/pids.max")" 10 "pids.max written"
  is "$(cat "$cg/cgroup.max.descendants" 2>/dev/null)" 5 "and the unified value with it"
else
  like "$err" 'pids\.limit: the pids controller is not enabled.*Delegate=' \
    "says pids.limit could not be applied, and how to delegate the controller"
  is "$(cat "$cg/cgroup.max.descendants" 2>/dev/null)" 7 "and writes nothing else"
fi
printf '{"unified": {"nosuch.file": "1"}}' >"$T_WORK/u.json"
run rrt update -r "$T_WORK/u.json" "$id"
is "$rc" 1 "an unknown unified key is an error"
like "$err" 'unified\.nosuch\.file: unknown interface file' "naming it"

run rrt kill --all "$id" KILL
wait_status "$id" stopped 10
is "$(status_of "$id")" stopped "kill --all stops it"
run rrt delete "$id"
is "$rc" 0 "delete"
ok "delete removes the container's cgroup" test ! -e "$cg"
nothing_left "$id" "$b"

# linux.cgroupsPath: relative from the caller's cgroup; absolute, which a user cannot make at the
# cgroup root, inside the caller's cgroup too.
for p in "rel-$$/c" "/abs-$$/c"; do
  idp=$(new_id path)
  cfg "$b" '.linux.cgroupsPath = $p' --arg p "$p"
  rrt run -d -b "$b" "$idp" >/dev/null 2>&1
  initp=$(state_field "$idp" .pid)
  want=$dir/${p#/}
  has_line "$(cat "$want/cgroup.procs" 2>/dev/null)" "^${initp:-none}\$" "cgroupsPath $p: init in $want"
  rrt delete -f "$idp" >/dev/null 2>&1
  ok "delete removes $want" test ! -e "$want"
  rmdir "$(dirname "$want")" 2>/dev/null
done
cfg "$b" 'del(.linux.cgroupsPath)'

# delete -f of a paused container: cgroup.kill reaches frozen processes.
id2=$(new_id cg2)
rrt run -d -b "$b" "$id2" >/dev/null 2>&1
run rrt pause "$id2"
is "$rc" 0 "pause a second container"
run rrt delete -f "$id2"
is "$rc" 0 "delete -f of a paused container"
ok "its cgroup is gone" test ! -e "$dir/rootlessrt-$id2"
nothing_left "$id2" "$b"

# kill --all once init has exited: what it left in the cgroup (no pid namespace of its own, so
# its child outlives it) is signalled, and that succeeds.
bo=$(mkbundle orphan sh -c 'setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo started')
cfg "$bo" '.linux.namespaces |= map(select(.type != "pid"))'
id3=$(new_id orphan)
rrt run -d -b "$bo" "$id3" >/dev/null 2>&1
wait_status "$id3" stopped 10
cg3=$dir/rootlessrt-$id3
isnt "$(cat "$cg3/cgroup.procs" 2>/dev/null)" "" "init exited, its child is still in the cgroup"
run rrt kill --all "$id3" KILL
is "$rc" 0 "kill --all after init exited succeeds"
ok "and empties the cgroup" wait_until 10 grep -q 'populated 0' "$cg3/cgroup.events"
run rrt delete "$id3"
nothing_left "$id3" "$bo"
done_testing
