#!/bin/bash
# t-terminal.sh: process.terminal: the pty master over --console-socket (create/start and
# exec -t), consoleSize and resizes, and the runtime as the terminal for a foreground `run` and
# `exec -t` (under script(1), which gives them a tty): output, exit status.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# The receiver: built by make next to the probe, or here when a compiler is at hand.
recv=${CONSOLE_RECV:-$(dirname "$PROBE")/console-recv}
if [ ! -x "$recv" ]; then
  recv=$T_WORK/console-recv
  if ! cc -std=gnu11 -D_GNU_SOURCE -O2 -o "$recv" "$TESTS_DIR/helper/console-recv.c" 2>"$T_WORK/cc.log"; then
    recv=""
  fi
fi

# recv_bg SOCK OUT INPUT [FLAGS...]: the receiver in the background, waits until it listens.
recv_bg() {
  local sock=$1 o=$2 input=$3
  shift 3
  "$recv" "$sock" "$input" "$@" >"$o" 2>"$o.err" &
  RECV_PID=$!
  wait_until 10 grep -q ready "$o.err"
}

if [ -z "$recv" ]; then
  skip "no console-recv helper and no C compiler to build it" 11
else
  b=$(mkbundle tty sh)
  cfg "$b" '.process.terminal = true | .process.consoleSize = {height: 30, width: 100}' ||
    bail_out "cannot edit config"
  id=$(new_id tty)
  sock=$T_WORK/console.sock
  o=$T_WORK/recv.out
  recv_bg "$sock" "$o" $'stty size; tty; echo ok-from-$((6*7)); exit\n' --winsize
  run rrt create --console-socket "$sock" -b "$b" "$id"
  is "$rc" 0 "create --console-socket"
  [ "$rc" = 0 ] || diag "$err"
  run rrt start "$id"
  is "$rc" 0 "start"
  wait_pid "$RECV_PID" 20
  is "$?" 0 "the receiver got the pty master and the shell hung up"
  has_line "$(cat "$o")" '^winsize 30x100' "consoleSize is the pty's size"
  has_line "$(tr -d '\r' <"$o")" '^30 100$' "stty inside sees it"
  has_line "$(tr -d '\r' <"$o")" '^/dev/(pts/[0-9]+|console)$' "the shell's stdin is the pty"
  has_line "$(tr -d '\r' <"$o")" '^ok-from-42$' "a command typed into the pty ran"
  wait_status "$id" stopped 10
  run rrt delete "$id"

  # exec -t --console-socket into a running container.
  b2=$(mkbundle ttyx rrt-probe sleep 1000)
  id2=$(new_id ttyx)
  run rrt run -d -b "$b2" "$id2"
  o2=$T_WORK/recv2.out
  recv_bg "$sock" "$o2" $'tty; echo exec-$((6*7)); exit\n' --resize 20x70
  run rrt exec -t --console-socket "$sock" -d "$id2" sh
  is "$rc" 0 "exec -t --console-socket -d"
  [ "$rc" = 0 ] || diag "$err"
  wait_pid "$RECV_PID" 20
  has_line "$(tr -d '\r' <"$o2")" '^exec-42$' "exec -t: a command typed into its pty ran"
  has_line "$(tr -d '\r' <"$o2")" '^/dev/pts/[0-9]+$' "exec -t: its stdin is a pty of the container"
  run rrt delete -f "$id2"

  # As runc: the console is process.user's (its owner; the group stays), so that a non-root
  # user can use it.
  read -r su_start su_count <<<"$(subid_range /etc/subuid)"
  if [ -z "${su_start:-}" ] || [ "${su_count:-0}" -lt 1001 ]; then
    skip "no subuid range of 1001+ ids for $(id -un): process.user uid 1000 needs one" 1
  else
    b3=$(mkbundle ttyu sh)
    cfg "$b3" '.process.terminal = true | .process.user = {uid: 1000, gid: 1000}' ||
      bail_out "cannot edit config"
    id3=$(new_id ttyu)
    o3=$T_WORK/recv3.out
    recv_bg "$sock" "$o3" $'echo owner-$(stat -L -c %u /proc/self/fd/0); exit\n'
    run rrt run --console-socket "$sock" -d -b "$b3" "$id3"
    wait_pid "$RECV_PID" 20
    has_line "$(tr -d '\r' <"$o3")" '^owner-1000$' "process.user uid 1000 owns its pty"
    run rrt delete -f "$id3"
  fi
fi

b3=$(mkbundle ttyn sh)
cfg "$b3" '.process.terminal = true' || bail_out "cannot edit config"
id3=$(new_id ttyn)
run rrt create -b "$b3" "$id3"
isnt "$rc" 0 "create with terminal=true and no --console-socket fails"
like "$err" 'console-socket' "and says --console-socket is required"

# ---------------------------------------------------------------- the runtime as the terminal
if ! command -v script >/dev/null; then
  skip "script(1) (util-linux) is not installed" 5
else
  b4=$(mkbundle ttyr sh -c 'tty; echo hello; exit 3')
  cfg "$b4" '.process.terminal = true' || bail_out "cannot edit config"
  id4=$(new_id ttyr)
  run timeout 30 script -qec "$(printf '%q ' "$RRT" --root "$RRT_ROOT" run -b "$b4" "$id4")" /dev/null
  is "$rc" 3 "foreground run with a terminal exits with the shell's status (3)"
  has_line "$(tr -d '\r' <<<"$out")" '^hello$' "its output reaches our terminal"
  has_line "$(tr -d '\r' <<<"$out")" '^/dev/(pts/[0-9]+|console)$' "the container got a pty of its own"
  run rrt state "$id4"
  isnt "$rc" 0 "the foreground container is deleted afterwards"

  b5=$(mkbundle ttye rrt-probe sleep 1000)
  id5=$(new_id ttye)
  run rrt run -d -b "$b5" "$id5"
  run timeout 30 script -qec "$(printf '%q ' "$RRT" --root "$RRT_ROOT" exec -t "$id5" sh -c 'tty; exit 4')" /dev/null
  is "$rc" 4 "exec -t in the foreground: status 4, output: $(tr -d '\r' <<<"$out" | paste -sd' ')"
  run rrt delete -f "$id5"
fi
done_testing
