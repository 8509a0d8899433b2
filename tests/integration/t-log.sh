#!/bin/bash
# t-log.sh: where the runtime's messages go. With --log, warnings go to the log file only and
# errors to the log and stderr (as runc); at create the runtime's stderr is the container's own
# (containerd's shim, conmon), so no runtime line may ever show up in a container's output.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# warn_bundle NAME SYSCALL: a bundle whose process writes one line to stdout and one to stderr,
# with a seccomp profile naming an unknown syscall (a warning at create). Each bundle names its
# own syscall: the compiled filter is cached, and a cached one is not compiled (nor warned) again.
warn_bundle() {
  local b
  b=$(mkbundle "$1" sh -c 'echo to-stdout; echo to-stderr >&2')
  cfg "$b" '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
    syscalls: [{names: [$n], action: "SCMP_ACT_ERRNO"}]}' --arg n "$2" ||
    bail_out "cannot edit $b/config.json"
  printf '%s\n' "$b"
}

# ---------------------------------------------------------------- create + start with --log

b=$(warn_bundle warn-log rrt_no_such_syscall_a)
id=$(new_id warn-log)
log=$T_WORK/warn.log
ctr_out=$T_WORK/warn.out
ctr_err=$T_WORK/warn.err
rrt --log "$log" --log-format json create -b "$b" "$id" >"$ctr_out" 2>"$ctr_err"
is "$?" 0 "create with --log and a config that warns"
ok "start" rrt --log "$log" --log-format json start "$id"
wait_status "$id" stopped 20 || fail "the container did not stop" "state: $(rrt state "$id" 2>&1)"
is "$(cat "$ctr_err")" "to-stderr" "the container's stderr holds its own line only (no rootlessrt: line)"
is "$(cat "$ctr_out")" "to-stdout" "the container's stdout holds its own line only"
if jq -se 'any(.[]; .level == "warning" and (.msg | contains("rrt_no_such_syscall_a")))' "$log" \
  >/dev/null 2>&1; then
  pass "the warning is a JSON line of level warning in the --log file"
else
  fail "the warning is a JSON line of level warning in the --log file" "log: $(cat "$log" 2>/dev/null)"
fi
rrt delete "$id" >/dev/null 2>&1

# ---------------------------------------------------------------- run (foreground) with --log

b=$(warn_bundle warn-run rrt_no_such_syscall_b)
id=$(new_id warn-run)
log=$T_WORK/run.log
run rrt --log "$log" --log-format text run -b "$b" "$id"
is "$rc" 0 "run with --log and a config that warns"
is "$err" "to-stderr" "run: stderr holds the container's line only"
has_line "$(cat "$log" 2>/dev/null)" '^warning: .*rrt_no_such_syscall_b' \
  "run: the warning is in the text --log file"

# ---------------------------------------------------------------- without --log: the terminal

b=$(warn_bundle warn-tty rrt_no_such_syscall_c)
id=$(new_id warn-tty)
run rrt run -b "$b" "$id"
is "$rc" 0 "run without --log and a config that warns"
has_line "$err" '^rootlessrt: warning: .*rrt_no_such_syscall_c' \
  "without --log the warning goes to stderr (the person at the terminal)"

# ---------------------------------------------------------------- errors: the log and stderr

log=$T_WORK/error.log
run rrt --log "$log" --log-format json delete no-such-ctr-log
is "$rc" 1 "delete of an unknown id exits 1"
has_line "$err" '^rootlessrt: .*no-such-ctr-log' "with --log, the error is on stderr too (as runc)"
if jq -se 'any(.[]; .level == "error" and (.msg | contains("no-such-ctr-log")))' "$log" \
  >/dev/null 2>&1; then
  pass "with --log, the error is in the log file"
else
  fail "with --log, the error is in the log file" "log: $(cat "$log" 2>/dev/null)"
fi

done_testing
