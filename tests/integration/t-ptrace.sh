#!/bin/bash
# t-ptrace.sh: the reach rule (include/rootlessrt/confine.h, issue 19 items 2 and 6), written as
# the attack. A container whose process has CAP_SYS_PTRACE tries to take over what the runtime
# starts in it before that is confined: exec's process while it reads the container's
# /etc/passwd (a FIFO there held the old runtime as long as the container liked), and create's
# init before pivot_root when it joins that container's pid namespace. Neither is attachable,
# its /proc root is closed, its fds cannot be taken, a forged pid report is never acted on (a
# host process of the user survives, --pid-file holds the container's pid), and exec never
# blocks on a FIFO /etc/passwd (HOME=/ instead).
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

out_dir=$T_WORK/ptrace-out
mkdir -p "$out_dir"
b=$(mkbundle ptrace rrt-probe sleep 1000)
cfg "$b" '.process.capabilities |= with_entries(.value = ((.value // []) + ["CAP_SYS_PTRACE"] | unique))
  | .mounts += [{destination: "/out", type: "bind", source: $o, options: ["rbind", "rw"]}]
  | .root.readonly = false' --arg o "$out_dir" || bail_out "cannot edit config"
id=$(new_id ptrace)
run rrt run -d -b "$b" "$id"
[ "$rc" = 0 ] || bail_out "cannot start the attacking container: $err"
init=$(state_field "$id" .pid)

# A host process of the test user, outside any container: what a forged pid would name.
sleep 1000 &
host_pid=$!

# attack NAME HOSTPID: starts the attacker in the container (detached; it waits for a runtime
# helper to appear in its pid namespace, or for $out_dir/NAME.stop).
attack() {
  rm -f "$out_dir/$1.txt" "$out_dir/$1.stop"
  run rrt exec -d -e HOME=/ "$id" rrt-probe reach-helpers "/out/$1.txt" "/out/$1.stop" "$2"
  [ "$rc" = 0 ] || fail "start the attacker ($1)" "$err"
}
# attack_result NAME: stops the attacker (if it is still looking) and prints what it did.
attack_result() {
  touch "$out_dir/$1.stop"
  wait_until 20 grep -qx 'done' "$out_dir/$1.txt" || diag "the attacker ($1) did not finish"
  cat "$out_dir/$1.txt" 2>/dev/null
}
# refused RESULT NAME: every attempt on the runtime's process was refused. With the fix, exec's
# process may be gone (exec'd) before the attacker sees it, or while it tries: nothing reached the
# runtime then, and the attempts are void (the old runtime, blocked on the FIFO, stays a target).
refused() {
  if grep -qE '^target: none$|^after: exec' <<<"$1"; then
    pass "$2: no runtime process was reachable long enough to try (it had exec'd)"
    pass "$2: (no /proc/PID/root to try)"
    pass "$2: (no fds to take)"
    return
  fi
  no_line "$1" '^attach: ok$' "$2: PTRACE_SEIZE of the runtime's process is refused"
  no_line "$1" '^root: ok$' "$2: its /proc/PID/root cannot be opened"
  no_line "$1" '^getfd: [1-9]' "$2: none of its fds can be taken with pidfd_getfd"
}
# release_fifo: a runtime still blocked reading the FIFO (the old one, killed by timeout, leaves
# its process there) reads a line and goes on, so that it is no target for the next round.
release_fifo() {
  touch "$out_dir/release.stop"
  run rrt exec -e HOME=/ "$id" rrt-probe reach-helpers /out/release.txt /out/release.stop 0
}
fifo_passwd() {
  run rrt exec -e HOME=/ "$id" rrt-probe mkfifo /etc/passwd
  is "$rc" 0 "/etc/passwd in the container is now a FIFO ($1)"
}

# ---------------------------------------------------------------- exec never blocks

fifo_passwd "no reader"
start=$SECONDS
run timeout -k 2 10 "$RRT" --root "$RRT_ROOT" --log "$T_WORK/fifo.log" exec "$id" rrt-probe env
is "$rc" 0 "exec with a FIFO at /etc/passwd completes (no one ever writes to it)"
has_line "$out" '^HOME=/$' "HOME=/ when /etc/passwd is not a regular file"
ok "it took less than 5 s" test $((SECONDS - start)) -lt 5
like "$(cat "$T_WORK/fifo.log" 2>/dev/null)" 'HOME=/: /etc/passwd in the container is not a regular file' \
  "the log says why HOME is /"
release_fifo

# ---------------------------------------------------------------- exec: the attack

fifo_passwd "attack"
attack exec 0
run timeout -k 2 20 "$RRT" --root "$RRT_ROOT" exec "$id" rrt-probe env
is "$rc" 0 "exec under attack completes"
has_line "$out" '^HOME=/$' "its HOME is / (the attacker's passwd line never reached it)"
res=$(attack_result exec)
release_fifo
diag "attacker: $(tr '\n' ' ' <<<"$res")"
refused "$res" "exec"

# A forged INIT_PID naming the host process, with --pid-file: the file holds the container's pid.
fifo_passwd "forged pid"
attack forge "$host_pid"
pf=$T_WORK/exec.pid
run timeout -k 2 20 "$RRT" --root "$RRT_ROOT" exec -d --pid-file "$pf" "$id" rrt-probe sleep 1000
is "$rc" 0 "exec -d --pid-file under attack"
res=$(attack_result forge)
release_fifo
diag "attacker: $(tr '\n' ' ' <<<"$res")"
p=$(cat "$pf" 2>/dev/null)
isnt "$p" "$host_pid" "--pid-file does not hold the forged (host) pid"
is "$(ns_ino "${p:-0}" pid 2>/dev/null)" "$(ns_ino "$init" pid)" "--pid-file holds a process in the container's pid namespace"
like "$(tr '\0' ' ' <"/proc/${p:-0}/cmdline" 2>/dev/null)" '^rrt-probe sleep 1000' "and it is the exec'd program"

# An exec that fails after its process started kills that process: never the forged pid.
fifo_passwd "forged pid, failing exec"
attack forge2 "$host_pid"
run timeout -k 2 20 "$RRT" --root "$RRT_ROOT" exec -d --pid-file "$T_WORK/no/such/dir/pid" "$id" rrt-probe sleep 1000
is "$rc" 255 "exec -d with an unwritable --pid-file fails (255)"
res=$(attack_result forge2)
release_fifo
diag "attacker: $(tr '\n' ' ' <<<"$res")"
ok "the host process of the user that a forged report named is alive" kill -0 "$host_pid"

# ---------------------------------------------------------------- create joining the pid ns

# B joins A's user and pid namespaces (as a pod does) and makes its own mount namespace; its
# createRuntime hook holds init before pivot_root until the attacker in A is done.
hb=$(mkbundle joiner rrt-probe sleep 1000)
hook=$T_WORK/hold-hook.sh
cat >"$hook" <<EOF
#!/bin/sh
i=0
while [ ! -e "$out_dir/join.txt" ] || ! grep -qx 'done' "$out_dir/join.txt"; do
  i=\$((i + 1)); [ \$i -gt 400 ] && exit 0; sleep 0.05
done
EOF
chmod 755 "$hook"
cfg "$hb" '.linux.namespaces = [{type: "user", path: "/proc/\($p)/ns/user"},
    {type: "pid", path: "/proc/\($p)/ns/pid"}, {type: "mount"}, {type: "ipc"}, {type: "uts"}]
  | del(.linux.uidMappings, .linux.gidMappings)
  | .hooks.createRuntime = [{path: $h}]' --arg p "$init" --arg h "$hook" || bail_out "cannot edit config"
attack join 0
jid=$(new_id joiner)
run rrt create -b "$hb" "$jid"
is "$rc" 0 "create joining the attacker's user and pid namespaces"
[ "$rc" = 0 ] || diag "$err"
res=$(attack_result join)
diag "attacker: $(tr '\n' ' ' <<<"$res")"
like "$res" 'target: [0-9]+' "the attacker saw create's init in its pid namespace (before pivot_root)"
refused "$res" "create's init in a joined pid namespace"
run rrt delete --force "$jid"

kill "$host_pid" 2>/dev/null
wait "$host_pid" 2>/dev/null
run rrt delete --force "$id"
done_testing
