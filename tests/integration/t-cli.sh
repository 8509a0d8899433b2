#!/bin/bash
# t-cli.sh: the command line as engines see it: --version, --help, help VERB, global flags, spec,
# list, and the create/run flags --bundle, --no-new-keyring, --preserve-fds, --console-socket.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

VERBS="create start run state kill delete list spec"

# ---------------------------------------------------------------- --version, --help, help VERB

run "$RRT" --version
is "$rc" 0 "--version exits 0"
is "$(printf '%s\n' "$out" | wc -l)" 3 "--version prints three lines"
like "$(sed -n 1p <<<"$out")" '^rootlessrt version [0-9]+\.[0-9]+' "--version line 1: rootlessrt version X"
like "$(sed -n 2p <<<"$out")" '^commit: [^ ]+$' "--version line 2: commit: ..."
is "$(sed -n 3p <<<"$out")" "spec: 1.3.0" "--version line 3: spec: 1.3.0"

run "$RRT" --help
is "$rc" 0 "--help exits 0"
missing=""
for v in $VERBS; do
  grep -qw -- "$v" <<<"$out" || missing+=" $v"
done
is "$missing" "" "--help names every verb"
missing=""
for f in --root --log --log-format --debug --rootless --systemd-cgroup --cgroup-manager --version; do
  grep -q -- "$f" <<<"$out" || missing+=" $f"
done
is "$missing" "" "--help names every global flag"

for v in $VERBS; do
  run "$RRT" help "$v"
  if [ "$rc" -eq 0 ] && grep -qw -- "$v" <<<"$out$err"; then
    pass "help $v"
  else
    fail "help $v" "exit status $rc" "stdout: $out" "stderr: $err"
  fi
done

flags_in_help() { # flags_in_help VERB FLAG...: every FLAG appears in `help VERB`
  local v=$1 f miss=""
  shift
  run "$RRT" help "$v"
  for f in "$@"; do
    grep -q -- "$f" <<<"$out$err" || miss+=" $f"
  done
  is "$miss" "" "help $v names $*"
}
flags_in_help create --bundle --pid-file --console-socket --preserve-fds --no-pivot --no-new-keyring
flags_in_help run --detach
flags_in_help delete --force
flags_in_help list --format --quiet
flags_in_help spec --rootless --bundle

run "$RRT" help no-such-verb
isnt "$rc" 0 "help of an unknown verb fails"
like "$out$err" 'no-such-verb' "help of an unknown verb names it"

run rrt no-such-verb
isnt "$rc" 0 "an unknown verb fails"
like "$err" 'no-such-verb' "an unknown verb is named in the error"

# ---------------------------------------------------------------- global flags

run rrt list
is "$rc" 0 "list on an empty root"
run rrt list -q
is "$rc:$out" "0:" "list -q on an empty root prints nothing"
run rrt list -f json
if [ "$rc" -eq 0 ] && jq -e '(. // []) | type == "array" and length == 0' <<<"$out" >/dev/null 2>&1; then
  pass "list -f json on an empty root is an empty array"
else
  fail "list -f json on an empty root is an empty array" "exit status $rc" "stdout: $out" "stderr: $err"
fi

for f in "--debug" "--rootless true" "--rootless false" "--rootless auto" \
  "--cgroup-manager disabled" "--cgroup-manager cgroupfs" "--log-format text"; do
  # shellcheck disable=SC2086 # the flag and its value are two words
  ok "global flag $f is accepted" rrt $f list
done

# Engines (podman) pass the equals form.
run "$RRT" --root="$RRT_ROOT" --log-format=json --log="$T_WORK/eq.log" list -q
is "$rc" 0 "global flags in --flag=value form"

log=$T_WORK/json.log
run rrt --log "$log" --log-format json state no-such-ctr
is "$rc" 1 "state of an unknown id exits 1 (with --log, --log-format json)"
if [ -s "$log" ] &&
  jq -se 'length > 0 and all(.[]; has("level") and has("msg") and has("time"))' "$log" >/dev/null 2>&1; then
  pass "--log-format json: every log line is JSON with level, msg, time"
else
  fail "--log-format json: every log line is JSON with level, msg, time" "log: $(cat "$log" 2>/dev/null)"
fi
if jq -se 'any(.[]; .level == "error" and (.msg | contains("no-such-ctr")))' "$log" >/dev/null 2>&1; then
  pass "--log-format json: the error is logged at level error, naming the id"
else
  fail "--log-format json: the error is logged at level error, naming the id" \
    "log: $(cat "$log" 2>/dev/null)"
fi

log=$T_WORK/text.log
run rrt --log "$log" --log-format text state no-such-ctr2
if grep -q 'no-such-ctr2' "$log" 2>/dev/null; then
  pass "--log-format text: the error is in the log file"
else
  fail "--log-format text: the error is in the log file" "log: $(cat "$log" 2>/dev/null)"
fi

# --root defaults to $XDG_RUNTIME_DIR/rootlessrt (engines pass only XDG_RUNTIME_DIR).
b=$(mkbundle xdg rrt-probe sleep 100)
id=$(new_id xdg)
mkdir -m 0700 "$T_WORK/xdg-run"
run env XDG_RUNTIME_DIR="$T_WORK/xdg-run" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" create -b "$b" "$id"
is "$rc" 0 "create without --root"
if [ -d "$T_WORK/xdg-run/rootlessrt" ] && find "$T_WORK/xdg-run/rootlessrt" -name "$id" | grep -q .; then
  pass "without --root the state lives under \$XDG_RUNTIME_DIR/rootlessrt"
else
  fail "without --root the state lives under \$XDG_RUNTIME_DIR/rootlessrt" \
    "found: $(find "$T_WORK/xdg-run" 2>/dev/null | head -20)"
fi
run env XDG_RUNTIME_DIR="$T_WORK/xdg-run" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" list -q
is "$out" "$id" "list without --root finds the container"
run env XDG_RUNTIME_DIR="$T_WORK/xdg-run" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" delete -f "$id"
is "$rc" 0 "delete -f without --root"
nothing_left "$id" "$b"

# A --root that does not exist yet is created.
newroot=$T_WORK/new/root
b=$(mkbundle newroot rrt-probe sleep 100)
id=$(new_id newroot)
run timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$newroot" create -b "$b" "$id"
is "$rc" 0 "create with a --root that does not exist"
run timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$newroot" list -q
is "$out" "$id" "the new --root holds the container"
run timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$newroot" delete -f "$id"
is "$rc" 0 "delete -f in the new --root"

# ---------------------------------------------------------------- spec

d=$T_WORK/spec-rootless
mkdir "$d"
run rrt spec --rootless -b "$d"
is "$rc" 0 "spec --rootless -b DIR"
if [ -f "$d/config.json" ]; then
  pass "spec --rootless writes DIR/config.json"
  errs=$(valid_against config-schema.json "$(cat "$d/config.json")")
  is "$errs" "" "spec --rootless config is valid against config-schema.json"
  ver=$("$RRT" --version | sed -n 's/^spec: //p')
  is "$(jq -r .ociVersion "$d/config.json")" "$ver" "spec ociVersion matches --version's spec line"
  is "$(jq -r '[.linux.namespaces[]?.type] | (index("user") != null) and (index("mount") != null)' \
    "$d/config.json")" true "spec --rootless asks for user and mount namespaces"
else
  fail "spec --rootless writes DIR/config.json" "ls: $(ls -la "$d")"
  skip "no config.json from spec --rootless" 3
fi

d=$T_WORK/spec-cwd
mkdir "$d"
run bash -c 'cd "$1" && shift && exec "$@"' sh "$d" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" spec
is "$rc" 0 "spec without -b"
ok "spec without -b writes ./config.json" test -s "$d/config.json"

# The generated configs run unchanged (only the rootfs is added), as from a terminal (script(1)
# gives it one, since a default config may ask for a terminal): the shell reads "exit 7".
printf 'exit 7\n' >"$T_WORK/exit7"
for kind in --rootless ""; do
  b=$(mkbundle "spec-run$kind" true)
  rm -f "$b/config.json"
  # shellcheck disable=SC2086 # $kind is empty or one flag
  run rrt spec $kind -b "$b"
  id=$(new_id spec)
  cmd=$(printf '%q ' timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" run -b "$b" "$id")
  # Typed once the shell is up: a terminal drops what is typed ahead when the shell sets it up.
  rm -f "$T_WORK/exit7.fifo" && mkfifo "$T_WORK/exit7.fifo"
  (exec 3>"$T_WORK/exit7.fifo" && sleep 1 && cat "$T_WORK/exit7" >&3) &
  RUN_STDIN=$T_WORK/exit7.fifo run script -qefc "$cmd" /dev/null
  wait $!
  is "$rc" 7 "run accepts the config of 'spec ${kind:-(no flags)}' unchanged (shell exits 7)"
  [ "$rc" = 7 ] || diag "stdout: $out" "stderr: $err"
  nothing_left "$id" "$b"
done

# ---------------------------------------------------------------- list

b=$(mkbundle list rrt-probe sleep 100)
id=$(new_id list)
run rrt create --bundle "$b" "$id"
is "$rc" 0 "create --bundle (long form)"
pid=$(state_field "$id" .pid)
run rrt list
has_line "$out" "^${id}[[:space:]].*created" "list shows the id and status created"
like "$(head -n 1 <<<"$out")" 'ID' "list prints a header"
run rrt list -q
is "$out" "$id" "list -q prints only the id"
run rrt list --quiet
is "$out" "$id" "list --quiet prints only the id"
run rrt list -f json
is "$(jq -r --arg id "$id" '.[] | select(.id == $id) | "\(.status) \(.pid) \(.bundle)"' <<<"$out" 2>&1)" \
  "created $pid $b" "list -f json: status, pid and bundle of the container"
run rrt list --format json
is "$(jq -r 'length' <<<"$out" 2>&1)" 1 "list --format json (long form)"
run rrt delete -f "$id"
is "$rc" 0 "delete -f a created container"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- create/run flags

b=$(mkbundle keyring rrt-probe exit 0)
id=$(new_id keyring)
run rrt run --no-new-keyring -b "$b" "$id"
is "$rc" 0 "run --no-new-keyring"

# No fd of the caller reaches the container unless --preserve-fds asks for it.
b=$(mkbundle fds rrt-probe fds)
id=$(new_id fds)
run rrt run -b "$b" "$id" 3<"$b/config.json" 4<"$b/config.json"
is "$out" "0 1 2" "without --preserve-fds the container has only fds 0 1 2"
id=$(new_id fds)
run rrt run --preserve-fds 1 -b "$b" "$id" 3<"$b/config.json" 4<"$b/config.json"
is "$out" "0 1 2 3" "--preserve-fds 1 passes fd 3 and nothing else"
nothing_left "$id" "$b"

# --console-socket: the pty master arrives over the socket; the process writes to the pty.
console_py='
import array, os, select, socket, sys
path, outf = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(1)
s.settimeout(25)
out = open(outf, "w")
c, _ = s.accept()
fds = array.array("i")
msg, anc, flags, addr = c.recvmsg(4096, socket.CMSG_SPACE(8 * fds.itemsize))
for level, typ, data in anc:
    if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
        fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
if not fds:
    out.write("no fd\n")
    sys.exit(1)
out.write("tty\n" if os.isatty(fds[0]) else "not a tty\n")
out.flush()
while True:
    r, _, _ = select.select([fds[0]], [], [], 25)
    if not r:
        break
    try:
        chunk = os.read(fds[0], 4096)
    except OSError:
        break  # EIO: every slave fd is closed
    if not chunk:
        break
    out.write(chunk.decode(errors="replace"))
    out.flush()
'
b=$(mkbundle console rrt-probe hostname)
cfg "$b" '.process.terminal = true | .hostname = "rrt-console"'
sock=$T_WORK/console.sock
"$PY" -c "$console_py" "$sock" "$T_WORK/console.out" &
pypid=$!
wait_until 10 test -S "$sock"
id=$(new_id console)
run rrt create --console-socket "$sock" -b "$b" "$id"
is "$rc" 0 "create --console-socket with terminal true"
[ "$rc" = 0 ] || diag "stderr: $err"
run rrt start "$id"
is "$rc" 0 "start a container with a terminal"
wait_pid "$pypid" 30
got=$(cat "$T_WORK/console.out" 2>/dev/null)
is "$(head -n 1 <<<"$got")" tty "--console-socket receives a tty master"
like "$got" 'rrt-console' "the process writes to that tty"
wait_status "$id" stopped 10
run rrt delete -f "$id"
nothing_left "$id" "$b"

done_testing
