#!/bin/bash
# t-exec.sh: `exec` joins the namespaces of the container's init, runs with the container's
# env/cwd/user/caps/seccomp unless told otherwise, exits with the process's status (127/126 for
# missing / not executable), --process FILE, -d with --pid-file, --preserve-fds, and clear errors
# for created-but-unknown, stopped and unknown containers.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

b=$(mkbundle ex rrt-probe sleep 1000)
# A seccomp profile that refuses mkdir: exec must get it too.
cfg "$b" '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
  syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO"}]}' ||
  bail_out "cannot edit config"
id=$(new_id ex)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "run -d"
[ "$rc" = 0 ] || bail_out "cannot start a container: $err"
init=$(state_field "$id" .pid)

# ---------------------------------------------------------------- namespaces

run rrt exec "$id" rrt-probe ns
is "$rc" 0 "exec rrt-probe ns"
want=""
for ns in cgroup ipc mnt net pid time user uts; do
  want+="$ns:[$(ns_ino "$init" "$ns")]"$'\n'
done
got=$(grep -E '^(cgroup|ipc|mnt|net|pid|time|user|uts):' <<<"$out")
is "$got" "${want%$'\n'}" "exec joins every namespace of init (same /proc/PID/ns links)"
run rrt exec "$id" rrt-probe pid
isnt "$out" "$init" "the exec'd process has its own pid"
like "$out" '^[0-9]+$' "and a pid inside the container's pid namespace"
run rrt exec "$id" sh -c 'tr "\\0" " " </proc/1/cmdline'
like "$out" 'rrt-probe.*sleep' "it sees the container's /proc (pid 1 is the container's init)"
run rrt exec "$id" rrt-probe cwd
is "$out" "/" "cwd is the container's process.cwd"
run rrt exec "$id" ls /
has_line "$out" '^rrt-probe$|^bin$' "its root is the container's rootfs"

# ---------------------------------------------------------------- exit codes and errors

run rrt exec "$id" rrt-probe exit 7
is "$rc" 7 "exit status of the process (7)"
run rrt exec "$id" rrt-probe kill-self KILL
is "$rc" 137 "killed by SIGKILL -> 137"
# A runtime error of exec exits 255, as runc's exec: the process never ran, and 255 is no status
# a process exiting 1 (or 127 from a shell inside) could be mistaken for.
run rrt exec "$id" rrt-probe exit 1
is "$rc" 1 "the process's own exit 1 is exec's status"
run rrt exec "$id" nosuch-binary
is "$rc" 255 "a missing binary: a runtime error, 255"
like "$err" 'exec: "nosuch-binary": executable file not found in \$PATH' \
  "and says it is not in PATH, in runc's words (engines map them to 127)"
run rrt exec "$id" /etc/passwd
is "$rc" 255 "a non-executable file: 255"
like "$err" 'exec: "/etc/passwd": permission denied' "and says permission denied, in runc's words"
run rrt exec -d "$id" nosuch-binary
is "$rc" 255 "exec -d of a missing binary fails (255)"
like "$err" 'executable file not found' "with the message"
run rrt exec --pid-file /nonexistent/dir/pid "$id" true
exec_fails_naming 'pid-file' "a --pid-file that cannot be written: 255, naming it"
run rrt exec "$id"
is "$rc" 255 "exec without a command fails (255)"
like "$err" 'command' "and says a command is required"

# ---------------------------------------------------------------- env, cwd, user, caps

run rrt exec -e FOO=bar -e PATH=/bin:/sbin "$id" rrt-probe env
has_line "$out" '^FOO=bar$' "-e adds a variable"
has_line "$out" '^PATH=/bin:/sbin$' "-e replaces a variable of the config"
is "$(grep -c '^PATH=' <<<"$out")" 1 "PATH only once"
has_line "$out" "^RRT_TEST_BUNDLE=$b\$" "the config's env is kept"
run rrt exec --cwd /tmp "$id" rrt-probe cwd
is "$out" "/tmp" "--cwd"
run rrt exec -u 1000:1001 "$id" rrt-probe ids
like "$out" '^uid=1000 gid=1001 ' "-u UID:GID"
run rrt exec -u 5 "$id" rrt-probe ids
like "$out" '^uid=5 gid=0 ' "-u UID keeps the config's gid"
run rrt exec -u nobody "$id" rrt-probe ids
isnt "$rc" 0 "-u with a name is refused"

caps_of() { awk -v k="$1:" '$1 == k {print $2}' <<<"$2"; }
init_caps=$(cat "/proc/$init/status")
run rrt exec "$id" rrt-probe caps
is "$(caps_of CapEff "$out")" "$(caps_of CapEff "$init_caps")" "exec has init's effective caps"
is "$(caps_of CapBnd "$out")" "$(caps_of CapBnd "$init_caps")" "and init's bounding set"
run rrt exec --cap CAP_SYS_ADMIN "$id" rrt-probe caps
eff=$(caps_of CapEff "$out")
is "$(((16#${eff:-0} >> 21) & 1))" 1 "--cap CAP_SYS_ADMIN adds it to the effective set"
run rrt exec --cap CAP_NOPE "$id" rrt-probe caps
is "$rc:$(caps_of CapEff "$out")" "0:$(caps_of CapEff "$init_caps")" \
  "--cap with an unknown name: a warning, exec goes on with the others (config.md)"
like "$err" 'warning: .*unknown capability CAP_NOPE' "and the warning names it"
cfg "$b" '.process.noNewPrivileges = false' || bail_out "cannot edit config"
id_nnp=$(new_id nnp)
run rrt run -d -b "$b" "$id_nnp"
run rrt exec "$id_nnp" rrt-probe status
has_line "$out" '^NoNewPrivs:[[:space:]]+0$' "no_new_privs off when the config says so"
run rrt exec --no-new-privs "$id_nnp" rrt-probe status
has_line "$out" '^NoNewPrivs:[[:space:]]+1$' "--no-new-privs"
has_line "$out" '^Seccomp:[[:space:]]+2$' "the container's seccomp filter is loaded"
run rrt exec "$id_nnp" rrt-probe syscall mkdir
is "$out" "EPERM" "the container's seccomp profile applies to exec (mkdir refused)"
run rrt delete -f "$id_nnp"

# ---------------------------------------------------------------- --process FILE

pf=$T_WORK/process.json
cat >"$pf" <<'JSON'
{"args": ["rrt-probe", "env"], "env": ["ONLY=this", "PATH=/bin"], "cwd": "/tmp",
 "user": {"uid": 0, "gid": 0},
 "capabilities": {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]}}
JSON
run rrt exec --process "$pf" "$id"
is "$rc" 0 "--process FILE"
is "$out" $'HOME=/root\nONLY=this\nPATH=/bin' "exactly the env of the process file (and HOME from /etc/passwd)"
jq '.args = ["rrt-probe", "caps"]' "$pf" >"$pf.caps"
run rrt exec --process "$pf.caps" "$id"
is "$(caps_of CapEff "$out")" "0000000000000020" "caps drop: only CAP_KILL from the process file"
is "$(caps_of CapBnd "$out")" "0000000000000020" "the bounding set is dropped too"
echo '{"args": []}' >"$pf.bad"
run rrt exec --process "$pf.bad" "$id"
isnt "$rc" 0 "an invalid process file fails"
like "$err" 'process\.(args|cwd)' "naming the field"
run rrt exec --process "$pf" "$id" extra
isnt "$rc" 0 "--process and a command line together are refused"

# ---------------------------------------------------------------- detach, pid file, fds

pidf=$T_WORK/exec.pid
run rrt exec -d --pid-file "$pidf" "$id" rrt-probe sleep 1000
is "$rc" 0 "exec -d --pid-file"
epid=$(cat "$pidf" 2>/dev/null)
like "$epid" '^[1-9][0-9]*$' "the pid file holds a pid"
is "$(ns_ino "$epid" pid 2>/dev/null)" "$(ns_ino "$init" pid)" "that pid (ours) is in the container's pid namespace"
like "$(tr '\0' ' ' <"/proc/$epid/cmdline" 2>/dev/null)" 'rrt-probe sleep 1000' "and runs the command"
run rrt ps -f json "$id"
is "$(jq --argjson p "$epid" 'index($p) != null' <<<"$out")" true "ps lists the detached process"

run rrt exec "$id" rrt-probe fds
is "$out" "0 1 2" "no fd of the runtime leaks into the exec'd process"
exec 7</dev/null 8</dev/null
run rrt exec --preserve-fds 2 "$id" rrt-probe fds
is "$out" "0 1 2 3 4" "--preserve-fds 2 passes fds 3 and 4"
exec 7<&- 8<&-

# ---------------------------------------------------------------- signals in the foreground

sigout=$T_WORK/sig.out
rrt_bg "$sigout" exec "$id" rrt-probe signals
bgpid=$RRT_BG_PID
wait_until 10 grep -q ready "$sigout"
kill -USR1 "$bgpid"
wait_until 5 grep -q 'got USR1' "$sigout"
kill -TERM "$bgpid"
wait_pid "$bgpid" 10
st=$?
is "$(grep '^got' "$sigout" | paste -sd,)" "got USR1,got TERM" "signals to exec reach the process"
is "$st" 0 "and exec exits with its status"

# A signal that reaches the runtime while the process is starting, before the runtime learnt its
# pid, is kept and forwarded: the runtime never dies of it and leaves the process behind. Sent at
# a sweep of delays across the start.
is_runtime() { [ "$(readlink "/proc/$1/exe")" = "$(readlink -f "$RRT")" ]; }
orphans=0
lost=""
for d in 0 0.001 0.002 0.004 0.006 0.008 0.012 0.016 0.024 0.032 0.05 0.08; do
  rrt_bg "$T_WORK/early.out" exec "$id" rrt-probe sleep 999
  bgpid=$RRT_BG_PID
  # Not before the runtime runs: a signal to the forked shell would run its copy of our EXIT trap.
  wait_until 10 is_runtime "$bgpid"
  sleep "$d"
  kill -TERM "$bgpid" 2>/dev/null
  wait_pid "$bgpid" 20
  st=$?
  [ "$st" -eq 143 ] || lost="$lost $d:$st"
  run rrt ps -f json "$id"
  for p in $(jq -r '.[]' <<<"$out"); do
    if tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q 'sleep 999'; then
      orphans=$((orphans + 1))
      diag "left behind after a TERM at $d s: pid $p"
      kill -KILL "$p" 2>/dev/null
    fi
  done
done
is "$orphans" 0 "a TERM sent while exec starts is forwarded, no process left behind"
is "$lost" "" "and exec exits 143 (the process's death by TERM) at every delay"

# ---------------------------------------------------------------- created, stopped, unknown

b2=$(mkbundle ex2 rrt-probe sleep 1000)
id2=$(new_id ex2)
run rrt create -b "$b2" "$id2"
is "$rc" 0 "create a second container"
run rrt exec "$id2" rrt-probe pid
exec_fails_naming 'exec: container "[^"]*" is created, not started: start it first' \
  "exec into a created container is refused (its init still holds the runtime's privileges)"
is "$(status_of "$id2")" created "and leaves it created"
run rrt delete -f "$id2"

run rrt kill "$id" KILL
wait_status "$id" stopped 10
run rrt exec "$id" true
is "$rc" 255 "exec into a stopped container exits 255"
like "$err" "container \"$id\" is stopped" "and says it is stopped"
run rrt exec nosuch-container true
is "$rc" 255 "exec into an unknown container exits 255"
like "$err" 'container "nosuch-container" does not exist' "and says it does not exist"

run rrt delete -f "$id"
nothing_left "$id" "$b"
nothing_left "$id2" "$b2"
done_testing
