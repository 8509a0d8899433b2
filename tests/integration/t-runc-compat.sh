#!/bin/bash
# t-runc-compat.sh: what runc's own bats suite (contrib/runc-bats.sh) found missing, rootless:
# spec --rootless asks for a terminal as runc's does, --console-socket without a terminal is
# refused, events without a cgroup is an error, a missing seccomp agent is named, exec flags
# (--ignore-paused, --additional-gids) and update flags after the id are parsed, createContainer
# hooks run in the container's root.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# ---------------------------------------------------------------- spec --rootless
d=$T_WORK/spec
mkdir "$d"
run rrt spec --rootless -b "$d"
is "$rc" 0 "spec --rootless"
is "$(jq -r .process.terminal "$d/config.json")" true \
  "spec --rootless: process.terminal true (an interactive sh, as runc's)"
is "$(jq -r '.process.args | join(" ")' "$d/config.json")" sh "spec --rootless: args sh"

# ---------------------------------------------------------------- --console-socket, no terminal
b=$(mkbundle cs rrt-probe sleep 100)
id=$(new_id cs)
run rrt create --console-socket "$T_WORK/no.sock" -b "$b" "$id"
fails_naming '--console-socket: process.terminal is false' \
  "create --console-socket with process.terminal false is refused"
nothing_left "$id" "$b"
run rrt run -d --console-socket "$T_WORK/no.sock" -b "$b" "$id"
fails_naming '--console-socket: process.terminal is false' \
  "run -d --console-socket with process.terminal false is refused"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- a running container
b=$(mkbundle rc rrt-probe sleep 1000)
id=$(new_id rc)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "run -d"
[ "$rc" = 0 ] || bail_out "cannot start a container: $err"

# No cgroup of its own here unless one was delegated: events says so (with one, it reports).
if [ -z "$(cgroups_of "$id" 2>/dev/null)" ] && ! rrt events --stats "$id" >/dev/null 2>&1; then
  run rrt events --stats "$id"
  fails_naming 'has no cgroup: no statistics' "events without a cgroup is an error naming why"
else
  run rrt events --stats "$id"
  is "$(jq -r .type <<<"$out" 2>&1)" stats "events --stats with a delegated cgroup"
fi
run rrt events --interval 1x "$id"
fails_naming 'interval "1x"' "events --interval with an unknown unit is refused"

run rrt exec --ignore-paused "$id" echo ok
is "$rc $out" "0 ok" "exec --ignore-paused on a running container runs it"
run rrt exec -u 1000:1000 --additional-gids 100 "$id" id -G
is "$rc $out" "0 1000 100" "exec --additional-gids: the supplementary group given"
run rrt exec --additional-gids -3 "$id" true
exec_fails_naming 'additional-gids "-3"' "exec --additional-gids -3 is refused"
run rrt update "$id" --memory 1g --bogus
fails_naming 'unknown flag --bogus' "update ID with an unknown flag after the id names it"
# checkpoint and restore: runc's verbs, not supported, said so; the container runs on.
run rrt checkpoint --image-path "$T_WORK/img" "$id"
fails_naming '^rootlessrt: checkpoint: not supported by rootlessrt \(no CRIU support\)' \
  "checkpoint (with runc's flags) says it is not supported"
is "$(status_of "$id")" running "the container still runs after checkpoint"
run rrt restore "$id"
fails_naming 'restore: not supported' "restore says it is not supported"
run rrt checkpoint --help
is "$rc" 0 "checkpoint --help"
run rrt delete -f "$id"
is "$rc" 0 "delete -f"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- createContainer hooks' cwd
b=$(mkbundle hk true)
cfg "$b" '.hooks.createContainer = [{path: "/bin/sh", args: ["sh", "-c", "pwd -P > \($f)"]}]' \
  --arg f "$T_WORK/hook-cwd"
id=$(new_id hk)
run rrt run -b "$b" "$id"
is "$rc" 0 "run with a createContainer hook"
is "$(cat "$T_WORK/hook-cwd" 2>/dev/null)" "$(cd "$b/rootfs" && pwd -P)" \
  "createContainer hooks run in the container's root (a relative path is the container's)"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- seccomp notify, no agent
b=$(mkbundle sn true)
cfg "$b" '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerPath: $s,
  syscalls: [{names: ["mkdir"], action: "SCMP_ACT_NOTIFY"}]}' --arg s "$T_WORK/no-agent.sock"
id=$(new_id sn)
run rrt run -b "$b" "$id"
fails_naming 'failed to connect with seccomp agent at linux.seccomp.listenerPath .*no-agent.sock' \
  "no seccomp agent listening: the error says so and names listenerPath"
nothing_left "$id" "$b"
done_testing
