#!/bin/bash
# t-notify.sh: NOTIFY_SOCKET (systemd's sd_notify, podman --sdnotify=container, Type=notify units)
# relayed for create+start and run: the container gets a socket at process.env's NOTIFY_SOCKET
# (/run/notify/notify.sock when the config has none), its datagrams reach the caller's socket, and
# only once the container was started; READY=1 carries the container's MAINPID. A python3
# datagram listener plays systemd.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# listen SOCKET FILE: a datagram listener on SOCKET appending each message to FILE as one line
# (newlines shown as '|'); $LISTENER is its pid. It gives up after 120 s.
LISTENER=""
listen() {
  rm -f "$1" "$2"
  : >"$2"
  "$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(1)
end = time.time() + 120
with open(sys.argv[2], "a") as f:
    while time.time() < end:
        try:
            m = s.recv(65536)
        except socket.timeout:
            continue
        f.write(m.decode(errors="replace").replace("\n", "|") + "\n")
        f.flush()
' "$1" "$2" &
  LISTENER=$!
  wait_until 10 test -S "$1" || bail_out "the notify listener did not start"
}
stop_listener() { [ -n "$LISTENER" ] && kill "$LISTENER" 2>/dev/null && wait "$LISTENER" 2>/dev/null; }
trap stop_listener EXIT

sd=$T_WORK/sd.sock
msgs=$T_WORK/sd.msgs

# ---------------------------------------------------------------- create + start

b=$(mkbundle notify sh -c 'rrt-probe notify "STATUS=starting"; rrt-probe notify "READY=1"; echo "$NOTIFY_SOCKET"; sleep 100')
id=$(new_id notify)
listen "$sd" "$msgs"
NOTIFY_SOCKET=$sd rrt create -b "$b" "$id" >"$T_WORK/notify.out" 2>"$T_WORK/notify.err"
is "$?" 0 "create with NOTIFY_SOCKET set"
relay=$(cat "$RRT_ROOT/$id/notify.pid" 2>/dev/null)
like "$relay" '^[1-9][0-9]*$' "create starts a relay (notify.pid in the state directory)"
sleep 0.3 # whatever the relay would wrongly send at create has time to arrive
is "$(cat "$msgs")" "" "nothing reaches the caller's socket before start"
ok "start" env NOTIFY_SOCKET="$sd" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" start "$id"
pid=$(state_field "$id" .pid)
wait_until 10 grep -q 'READY=1' "$msgs"
is "$(cat "$msgs")" $'STATUS=starting\nMAINPID='"$pid"'|READY=1' \
  "after start the container's messages reach the caller's socket, READY=1 with MAINPID"
wait_until 10 test -s "$T_WORK/notify.out"
is "$(cat "$T_WORK/notify.out")" /run/notify/notify.sock \
  "the container's NOTIFY_SOCKET is /run/notify/notify.sock when the config names none"
ok "delete --force" rrt delete --force "$id"
wait_until 10 sh -c "! kill -0 $relay" 2>/dev/null
if [ -n "$relay" ] && kill -0 "$relay" 2>/dev/null; then
  fail "the relay exits with the container" "pid $relay: $(cat "/proc/$relay/comm" 2>/dev/null)"
else
  pass "the relay exits with the container"
fi
stop_listener

# ---------------------------------------------------------------- run, a path from the config

b=$(mkbundle notify-cfg sh -c 'rrt-probe notify "READY=1"; ls -l "$NOTIFY_SOCKET"')
cfg "$b" '.process.env += ["NOTIFY_SOCKET=/var/custom/sd.sock"]' || bail_out "cannot edit $b"
id=$(new_id notify-cfg)
listen "$sd" "$msgs"
run env NOTIFY_SOCKET="$sd" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
is "$rc" 0 "run with NOTIFY_SOCKET set and process.env naming /var/custom/sd.sock"
like "$out" '^s[rwx-]{9} .* /var/custom/sd.sock$' "the container has a socket at the config's path"
wait_until 10 grep -q 'READY=1' "$msgs"
like "$(cat "$msgs")" '^MAINPID=[0-9]+\|READY=1$' "run: READY=1 reaches the caller's socket"
stop_listener

# ---------------------------------------------------------------- a MAINPID of the container's

# A container names a process of the host as MAINPID: a caller that is root (a Type=notify unit)
# would have systemd track it, and kill it when the unit stops. Only init is ever MAINPID.
sleep 1000 >/dev/null 2>&1 &
hostpid=$!
b=$(mkbundle notify-mainpid sh -c 'rrt-probe notify "MAINPID=$HOSTPID"; rrt-probe notify "$(printf "MAINPID=%s\nREADY=1\nSTATUS=up" "$HOSTPID")"')
cfg "$b" '.process.env += ["HOSTPID=" + $p]' --arg p "$hostpid" || bail_out "cannot edit $b"
id=$(new_id notify-mainpid)
listen "$sd" "$msgs"
run env NOTIFY_SOCKET="$sd" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
is "$rc" 0 "run: the container sends MAINPID=<a host process> (alone, then with READY=1)"
wait_until 10 grep -q 'READY=1' "$msgs"
no_line "$(cat "$msgs")" "MAINPID=$hostpid" "the host process's pid never reaches the caller's socket"
like "$(cat "$msgs")" '^MAINPID=[0-9]+\|READY=1\|STATUS=up$' \
  "READY=1 goes with init's MAINPID, the rest of the datagram as sent"
kill "$hostpid" 2>/dev/null
stop_listener

# ---------------------------------------------------------------- not asked: nothing

b=$(mkbundle notify-none sh -c 'test -e /run/notify/notify.sock && echo present; echo "env=${NOTIFY_SOCKET:-}"')
id=$(new_id notify-none)
run env -u NOTIFY_SOCKET timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
is "$rc" 0 "run without NOTIFY_SOCKET"
is "$out" "env=" "without NOTIFY_SOCKET the container gets no socket and no variable"

# ---------------------------------------------------------------- bad values

b=$(mkbundle notify-bad true)
cfg "$b" '.process.env += ["NOTIFY_SOCKET=relative/sd.sock"]' || bail_out "cannot edit $b"
id=$(new_id notify-bad)
run env NOTIFY_SOCKET="$sd" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" create -b "$b" "$id"
is "$rc" 1 "a relative NOTIFY_SOCKET in process.env is an error at create"
like "$err" 'process\.env\[[0-9]+\]: NOTIFY_SOCKET "relative/sd.sock"' "the error names the entry"
is "$(rrt list -q)" "" "nothing is left behind"
run env NOTIFY_SOCKET=relative.sock timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" \
  create -b "$b" "$id"
like "$err" 'NOTIFY_SOCKET "relative.sock": not an absolute path' \
  "a relative NOTIFY_SOCKET in the runtime's environment is an error naming it"

done_testing
