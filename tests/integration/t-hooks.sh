#!/bin/bash
# t-hooks.sh: OCI lifecycle hooks (issue 3) as an unprivileged user: the order and the command each
# kind runs under, the state on stdin (schema, status, pid), where each kind runs, the userns-first
# proof (a createRuntime hook configures the container's netns before init execs), poststart only
# after a successful execve, env/args/timeout exactly as given, `run` with failing hooks, and the
# contrib hooks (netns-lo-addr.sh, slirp4netns.sh). Failures of each kind: t-hooks-fail.sh.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"
# shellcheck source=../hooks/hooks-lib.sh
source "$TESTS_DIR/hooks/hooks-lib.sh"

my_ns() { echo "$(readlink /proc/self/ns/user) $(readlink /proc/self/ns/net) $(readlink /proc/self/ns/mnt)"; }
pid_ns() { echo "$(readlink "/proc/$1/ns/user") $(readlink "/proc/$1/ns/net") $(readlink "/proc/$1/ns/mnt")"; }

# ---------------------------------------------------------------- order, state, where

b=$(hbundle order rrt-probe sleep 30)
cfg "$b" '.annotations = {"org.example.hooks": "a b", "x": ""}'
for k in "${HOOK_KINDS[@]}"; do
  case $k in
    prestart | createRuntime | createContainer | poststart) log_hook "$b" "$k" "$k" exe ;;
    startContainer) log_hook "$b" "$k" "$k" exe1 ;;
    *) log_hook "$b" "$k" ;;
  esac
done
id=$(new_id order)
phase "$b" create
rrt create -b "$b" "$id" >"$T_WORK/order.out" 2>"$T_WORK/order.err"
is "$?" 0 "create with all six kinds of hooks"
pid=$(state_field "$id" .pid)
ctr_ns=$(pid_ns "$pid")
is "$(hook_log "$b")" "prestart create
createRuntime create
createContainer create" "create runs prestart, createRuntime, createContainer, in that order"
phase "$b" start
run rrt start "$id"
is "$rc" 0 "start"
[ "$rc" = 0 ] || diag "stderr: $err"
is "$(awk '$1 ~ /^(startContainer|poststart)$/ {print $1, $4}' "$b/log/log")" "startContainer start
poststart start" "start runs startContainer, then poststart"
phase "$b" kill
run rrt kill "$id" KILL
wait_status "$id" stopped 10
phase "$b" delete
run rrt delete "$id"
is "$rc" 0 "delete"
expected=""
for k in "${HOOK_KINDS[@]}"; do
  case $k in
    poststop) st=stopped p="($pid|0)" ph=delete ;;
    poststart) st=running p=$pid ph=start ;;
    startContainer) st=created p=$pid ph=start ;;
    *) st=created p=$pid ph=create ;;
  esac
  expected+="^$k $st $p $ph\$"$'\n'
done
got=$(cat "$b/log/log" 2>/dev/null)
mapfile -t want_re <<<"${expected%$'\n'}"
mapfile -t got_l <<<"$got"
order_ok=1
[ "${#got_l[@]}" -eq 6 ] || order_ok=0
for i in 0 1 2 3 4 5; do
  [[ ${got_l[i]:-} =~ ${want_re[i]} ]] || order_ok=0
done
if [ "$order_ok" = 1 ]; then
  pass "the six kinds ran once each, in order, under create/start/delete, with status and pid"
else
  fail "the six kinds ran once each, in order, under create/start/delete, with status and pid" \
    "log: $got" "expected (one ERE per line): $expected"
fi
for k in "${HOOK_KINDS[@]}"; do
  s=$(cat "$b/log/state.$k" 2>/dev/null)
  if [ -z "$s" ]; then
    fail "$k: the hook got the state on stdin" "no $b/log/state.$k"
    continue
  fi
  is "$(valid_state "$s")" "" "$k: the state on stdin is valid against state-schema.json"
  is "$(jq -r '[.id, .bundle] | join(" ")' <<<"$s")" "$id $b" "$k: the state has the id and bundle"
done
for k in prestart startContainer poststop; do
  is "$(jq -c .annotations "$b/log/state.$k" 2>/dev/null)" '{"org.example.hooks":"a b","x":""}' \
    "$k: the state carries the config's annotations"
done
# What the runtime hands down: no fd beyond stdio (3 is ls's own directory).
for k in "${HOOK_KINDS[@]}"; do
  is "$(cat "$b/log/fds.$k" 2>/dev/null)" "0 1 2 3 " "$k: the hook inherits no fd beyond stdin, stdout, stderr"
done
# Where each kind ran.
is "$(cat "$b/log/ns.prestart" 2>/dev/null)" "$(my_ns)" "prestart runs in the runtime's namespaces"
is "$(cat "$b/log/ns.createRuntime" 2>/dev/null)" "$(my_ns)" "createRuntime runs in the runtime's namespaces"
is "$(cat "$b/log/ns.createContainer" 2>/dev/null)" "$ctr_ns" "createContainer runs in the container's user, net and mount namespaces"
is "$(cat "$b/log/ns.startContainer" 2>/dev/null)" "$ctr_ns" "startContainer runs in the container's namespaces"
is "$(cat "$b/log/ns.poststart" 2>/dev/null)" "$(my_ns)" "poststart runs in the runtime's namespaces"
is "$(cat "$b/log/ns.poststop" 2>/dev/null)" "$(my_ns)" "poststop runs in the runtime's namespaces"
# Before the user program: init still runs the runtime; poststart: the user program.
for k in prestart createRuntime createContainer startContainer; do
  # From start on, init is not dumpable until its execve (confine.h, THE REACH RULE): the
  # startContainer hook, inside the container's pid namespace, cannot read its exe link.
  if [ "$k" = startContainer ]; then
    like "$(cat "$b/log/exe.$k" 2>/dev/null)" '^$|denied' "$k: init's /proc/1/exe is not readable from inside the container before its execve"
  else
    unlike "$(cat "$b/log/exe.$k" 2>/dev/null)" 'rrt-probe|^$|No such|denied' "$k: init has not exec'd the user program (exe: the runtime's)"
  fi
  unlike "$(cat "$b/log/cmdline.$k" 2>/dev/null)" 'rrt-probe sleep 30|^$|No such|denied' "$k: init's cmdline is still the runtime's"
done
like "$(cat "$b/log/exe.poststart" 2>/dev/null)" '/bin/rrt-probe$' "poststart: /proc/PID/exe is the user program"
is "$(cat "$b/log/cmdline.poststart" 2>/dev/null)" "rrt-probe sleep 30 " "poststart: /proc/PID/cmdline is the user program's"
nothing_left "$id" "$b" "nothing left after the hooks' lifecycle"

# ---------------------------------------------------------------- the userns-first proof

# Unprivileged createRuntime hooks enter the blocked init's user+net namespaces as their owner and
# configure them; the container's command, once started, sees the configuration.
b=$(hbundle netns sh -c 'ip -o addr show; ip -o link show lo; readlink /proc/self/ns/net; exec rrt-probe sleep 30')
add_hook "$b" createRuntime "$(hook_json "$HOOKS_DIR/netns-hook.sh" netns-hook.sh "$b/log" 10.201.0.1/32)"
add_hook "$b" createRuntime "$(jq -c '. + {timeout: 10}' <<<"$(hook_json "$CONTRIB_DIR/hooks/netns-lo-addr.sh" \
  netns-lo-addr.sh 10.200.0.1/24 "$b/log/contrib.done")")"
id=$(new_id netns)
ctr_out=$T_WORK/netns.out
rrt create -b "$b" "$id" >"$ctr_out" 2>"$T_WORK/netns.err"
is "$?" 0 "create with the netns hooks (unprivileged)"
[ -s "$T_WORK/netns.err" ] && diag "create stderr: $(cat "$T_WORK/netns.err")"
pid=$(state_field "$id" .pid)
is "$(cat "$b/log/netns-hook.ok" 2>/dev/null)" "$pid" "the createRuntime hook joined the container's userns+netns with nsenter"
is "$(cat "$b/log/contrib.done" 2>/dev/null)" "$pid" "contrib/hooks/netns-lo-addr.sh ran"
unlike "$(cat "$b/log/exe" 2>/dev/null)" '^$|/bin/(rrt-probe|busybox|sh)$' "the hook saw init not yet exec'd (exe: $(cat "$b/log/exe" 2>/dev/null))"
unlike "$(cat "$b/log/cmdline" 2>/dev/null)" '^$|^sh -c|rrt-probe sleep' "the hook saw init's cmdline still the runtime's ($(cat "$b/log/cmdline" 2>/dev/null))"
has_line "$(cat "$b/log/lo" 2>/dev/null)" 'inet 10\.201\.0\.1/32' "the hook saw its address on lo"
run rrt start "$id"
is "$rc" 0 "start"
wait_until 10 grep -q '^net:' "$ctr_out"
got=$(cat "$ctr_out")
has_line "$got" '^[0-9]+: lo .*inet 10\.201\.0\.1/32' "the container sees the hook's address on lo"
has_line "$got" '^[0-9]+: dummy0 .*inet 10\.200\.0\.1/24' "the container sees dummy0 10.200.0.1/24 from netns-lo-addr.sh"
has_line "$got" '^[0-9]+: lo: <[^>]*\bUP\b' "the container's lo is up"
is "$(grep '^net:' <<<"$got")" "$(cat "$b/log/netns" 2>/dev/null)" "the hook configured the container's own netns"
isnt "$(cat "$b/log/netns" 2>/dev/null)" "$(readlink /proc/self/ns/net)" "which is not the host's"
run rrt delete -f "$id"
is "$rc" 0 "delete -f"
nothing_left "$id" "$b" "nothing left after the netns hooks"

# ---------------------------------------------------------------- poststart vs exec

# args[0] missing from the start: create (which may resolve it early) or start fails naming it.
b=$(hbundle noexec /no/such/program)
log_hook "$b" poststart
log_hook "$b" poststop
id=$(new_id noexec)
phase "$b" create
run rrt create -b "$b" "$id"
if [ "$rc" -eq 0 ]; then
  phase "$b" start
  run rrt start "$id"
fi
is "$rc" 1 "create or start of a missing args[0] exits 1"
contains "$err" "/no/such/program" "and names the path"
like "$err" 'no such file' "and says why"
no_line "$(cat "$b/log/log" 2>/dev/null)" '^poststart' "poststart never ran for a missing args[0]"
run rrt state "$id"
like "$rc $err" '^1 .*does not exist' "state: the container does not exist after the failed exec"
nothing_left "$id" "$b" "nothing left after the failed exec"

# args[0] there at create and gone (or no longer executable) at start: only execve can tell, and
# poststart must not run for the process that did not exec.
for how in removed chmod-x; do
  b=$(hbundle "vanish-$how" /bin/vanishing sleep 30)
  cp /bin/busybox "$b/rootfs/bin/vanishing"
  log_hook "$b" poststart
  log_hook "$b" poststop
  id=$(new_id vanish)
  phase "$b" create
  run rrt create -b "$b" "$id"
  is "$rc" 0 "$how: create while args[0] is there"
  [ "$rc" = 0 ] || diag "stderr: $err"
  case $how in
    removed) rm -f "$b/rootfs/bin/vanishing" && why='no such file' ;;
    chmod-x) chmod 0644 "$b/rootfs/bin/vanishing" && why='permission denied' ;;
  esac
  phase "$b" start
  run rrt start "$id"
  is "$rc" 1 "$how: start fails when execve fails"
  contains "$err" "/bin/vanishing" "$how: the error names args[0]"
  like "$err" "$why" "$how: and says why ($why)"
  no_line "$(cat "$b/log/log" 2>/dev/null)" '^poststart' "$how: poststart never ran for a process that failed to exec"
  has_line "$(cat "$b/log/log" 2>/dev/null)" '^poststop stopped [0-9]+ start$' "$how: poststop ran when start failed"
  run rrt state "$id"
  like "$rc $err" '^1 .*does not exist' "$how: the container does not exist after the failed start"
  nothing_left "$id" "$b" "$how: nothing left after the failed exec"
done

# ---------------------------------------------------------------- env, args, timeout

b=$(hbundle fields rrt-probe exit 0)
code='import sys
for f in ("cmdline", "environ"):
    open(sys.argv[1] + "." + f, "wb").write(open("/proc/self/" + f, "rb").read())'
add_hook "$b" createRuntime "$(jq -cn --arg c "$code" --arg o "$b/log/py1" \
  '{path: "/usr/bin/python3", args: ["my-argv0", "-c", $c, $o], env: ["A=1 2", "EMPTY=", "PATH=/nowhere"]}')"
add_hook "$b" createRuntime "$(jq -cn --arg c "$code" --arg o "$b/log/py2" \
  '{path: "/usr/bin/python3", args: ["python3", "-c", $c, $o]}')"
# A hook within its timeout: sleeps 1 s of a 3 s timeout.
add_hook "$b" prestart '{"path": "/bin/sh", "args": ["sh", "-c", "sleep 1"], "timeout": 3}'
id=$(new_id fields)
t0=$(date +%s%N)
run rrt create -b "$b" "$id"
t1=$(date +%s%N)
is "$rc" 0 "create with env/args/timeout hooks"
[ "$rc" = 0 ] || diag "stderr: $err"
is "$(tr '\0' '\n' <"$b/log/py1.cmdline" 2>/dev/null)" "my-argv0
-c
$code
$b/log/py1" "args is the full argv: args[0] included"
is "$(tr '\0' '\n' <"$b/log/py1.environ" 2>/dev/null)" "A=1 2
EMPTY=
PATH=/nowhere" "env is exactly the config's (nothing inherited, order kept)"
is "$(tr '\0' '\n' <"$b/log/py2.environ" 2>/dev/null)" "" "no env in the config: an empty environment"
if [ $(((t1 - t0) / 1000000)) -ge 1000 ]; then
  pass "a hook that needs 1 s of its 3 s timeout is waited for"
else
  fail "a hook that needs 1 s of its 3 s timeout is waited for" "create took $(((t1 - t0) / 1000000)) ms"
fi
rrt delete -f "$id" >/dev/null 2>&1

# The annotation rootlessrt.hooks-env=inherit: a hook without env gets the runtime's own
# environment, as with runc and crun (runtime side and in the container's namespaces alike); one
# with env still gets exactly that.
b=$(hbundle inherit rrt-probe exit 0)
cfg "$b" '.annotations["rootlessrt.hooks-env"] = "inherit"' || bail_out "cannot edit config"
for kind in createRuntime createContainer; do
  add_hook "$b" "$kind" "$(jq -cn --arg c "$code" --arg o "$b/log/$kind" \
    '{path: "/usr/bin/python3", args: ["python3", "-c", $c, $o]}')"
done
add_hook "$b" createRuntime "$(jq -cn --arg c "$code" --arg o "$b/log/given" \
  '{path: "/usr/bin/python3", args: ["python3", "-c", $c, $o], env: ["ONLY=this"]}')"
id=$(new_id inherit)
run env RRT_HOOK_MARK=from-the-caller "$RRT" --root "$RRT_ROOT" create -b "$b" "$id"
is "$rc" 0 "create with rootlessrt.hooks-env=inherit"
[ "$rc" = 0 ] || diag "stderr: $err"
for kind in createRuntime createContainer; do
  has_line "$(tr '\0' '\n' <"$b/log/$kind.environ" 2>/dev/null)" '^RRT_HOOK_MARK=from-the-caller$' \
    "rootlessrt.hooks-env=inherit: a $kind hook without env has the runtime's environment"
done
is "$(tr '\0' '\n' <"$b/log/given.environ" 2>/dev/null)" "ONLY=this" \
  "rootlessrt.hooks-env=inherit: a hook with env still gets exactly it"
rrt delete -f "$id" >/dev/null 2>&1

# Without args, argv[0] is the path: busybox picks its applet by argv[0].
mkdir -p "$T_WORK/bb"
ln -s /bin/busybox "$T_WORK/bb/false"
b=$(hbundle argv0 rrt-probe exit 0)
add_hook "$b" createRuntime "{\"path\": \"$T_WORK/bb/false\", \"args\": [\"true\"]}"
id=$(new_id argv0)
run rrt create -b "$b" "$id"
is "$rc" 0 "args [\"true\"] on a busybox link named false: argv[0] is args[0] (true)"
rrt delete -f "$id" >/dev/null 2>&1
cfg "$b" 'del(.hooks.createRuntime[0].args)'
run rrt create -b "$b" "$id"
is "$rc" 1 "no args on a busybox link named false: argv[0] is the path (false)"
contains "$err" "createRuntime hook #0 ($T_WORK/bb/false): error running hook: exited with status 1" "and the error says so"
rrt delete -f "$id" >/dev/null 2>&1

# The timeout is the configured one, and says so.
b=$(hbundle timeout2 rrt-probe exit 0)
add_hook "$b" createRuntime "$(jq -c '. + {timeout: 2}' <<<"$(hook_json "$HOOKS_DIR/fail-hook.sh" fail-hook.sh sleep "$b/log")")"
id=$(new_id timeout2)
t0=$(date +%s%N)
run rrt create -b "$b" "$id"
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 1 "a hook over its 2 s timeout fails create"
contains "$err" "createRuntime hook #0 ($HOOKS_DIR/fail-hook.sh): error running hook: timed out after 2s" "the error says after how long"
if [ "$ms" -ge 1900 ] && [ "$ms" -le 5000 ]; then
  pass "the 2 s timeout is honoured (create took $ms ms)"
else
  fail "the 2 s timeout is honoured" "create took $ms ms"
fi
nothing_left "$id" "$b" "nothing left after the timeout"

# The deprecated prestart alone still runs, before createRuntime would.
b=$(hbundle prestart rrt-probe exit 0)
log_hook "$b" prestart
id=$(new_id prestart)
phase "$b" create
run rrt create -b "$b" "$id"
is "$rc" 0 "create with only a (deprecated) prestart hook"
has_line "$(cat "$b/log/log" 2>/dev/null)" "^prestart created [1-9][0-9]* create$" "the prestart hook ran during create"
rrt delete -f "$id" >/dev/null 2>&1

# ---------------------------------------------------------------- what else a hook meets

# Signals: the runtime blocks SIGPIPE around hooks and `run` forwards signals; a hook starts with
# no blocked and no ignored signal. grep itself is the hook (a shell would change them); its
# stdout lands in the --log file.
b=$(hbundle sigs rrt-probe exit 0)
for k in "${HOOK_KINDS[@]}"; do
  g=/usr/bin/grep
  [ "$k" = startContainer ] && g=/bin/grep
  add_hook "$b" "$k" "$(hook_json "$g" grep -E "^Sig(Blk|Ign):" /proc/self/status)"
done
id=$(new_id sigs)
rlog=$T_WORK/sigs.log
run "$RRT" --root "$RRT_ROOT" --log "$rlog" run -b "$b" "$id"
is "$rc" 0 "run with a grep hook of every kind (--log)"
for k in "${HOOK_KINDS[@]}"; do
  got=$(grep -E "$k hook #0 .*stdout: Sig(Blk|Ign):" "$rlog" 2>/dev/null | sed 's/.*stdout: //' | tr -s ' \t' ' ')
  is "$got" "SigBlk: 0000000000000000"$'\n'"SigIgn: 0000000000000000" "$k: the hook starts with no blocked or ignored signal"
done

# A hook may ask the runtime about its container (`state ID`): create and start hold the state
# lock while their hooks run, which must not make the hook wait for itself.
b=$(hbundle statehook rrt-probe sleep 30)
add_hook "$b" createRuntime "$(jq -c '. + {timeout: 20}' <<<"$(hook_json "$HOOKS_DIR/state-hook.sh" \
  state-hook.sh "$RRT" "$RRT_ROOT" "$b/log/cr")")"
add_hook "$b" poststart "$(jq -c '. + {timeout: 20}' <<<"$(hook_json "$HOOKS_DIR/state-hook.sh" \
  state-hook.sh "$RRT" "$RRT_ROOT" "$b/log/ps")")"
id=$(new_id statehook)
run rrt create -b "$b" "$id"
is "$rc" 0 "create with a createRuntime hook that runs \`state\`"
is "$(cat "$b/log/cr.rc" 2>/dev/null) $(jq -r .status "$b/log/cr.out" 2>/dev/null)" "0 created" \
  "a createRuntime hook gets \`state\` of its container (not a deadlock on the state lock)"
[ "$(cat "$b/log/cr.rc" 2>/dev/null)" = 0 ] || diag "state from the hook: exit $(cat "$b/log/cr.rc" 2>/dev/null) (124: timed out after 5 s)" "$(cat "$b/log/cr.err" 2>/dev/null)"
run rrt start "$id"
is "$rc" 0 "start with a poststart hook that runs \`state\`"
is "$(cat "$b/log/ps.rc" 2>/dev/null) $(jq -r .status "$b/log/ps.out" 2>/dev/null)" "0 running" \
  "a poststart hook gets \`state\` of its container (not a deadlock on the state lock)"
rrt delete -f "$id" >/dev/null 2>&1

# Hook stdout and stderr go to the runtime's --log; stderr (not stdout) is shown on a failure.
b=$(hbundle say rrt-probe sleep 30)
add_hook "$b" createRuntime "$(hook_json "$HOOKS_DIR/say-hook.sh" say-hook.sh said-by-createRuntime)"
add_hook "$b" startContainer "$(hook_json /hooks/say-hook.sh say-hook.sh said-by-startContainer)"
id=$(new_id say)
rlog=$T_WORK/say.log
run "$RRT" --root "$RRT_ROOT" --log "$rlog" create -b "$b" "$id"
is "$rc" 0 "create with --log and a talking hook"
run "$RRT" --root "$RRT_ROOT" --log "$rlog" start "$id"
is "$rc" 0 "start with --log and a talking hook"
for k in createRuntime startContainer; do
  for s in out err; do
    has_line "$(cat "$rlog" 2>/dev/null)" "$k hook #0 .*said-by-$k-$s" "the $k hook's std$s is in the --log file"
  done
done
rrt delete -f "$id" >/dev/null 2>&1

b=$(hbundle tail rrt-probe sleep 30)
add_hook "$b" createRuntime "$(hook_json "$HOOKS_DIR/say-hook.sh" say-hook.sh the-last-words 500)"
id=$(new_id tail)
run rrt create -b "$b" "$id"
is "$rc" 1 "a hook that writes 500 lines of stderr and fails"
# The hook's stderr is shown as it comes too; the error is the last line and what follows.
msg=${err##*"(${HOOKS_DIR}/say-hook.sh): error running hook: exited with status 1: "}
# An error is one line: the tail's newlines come escaped (\x0a, include/rootlessrt/escape.h).
msg=${msg//'\x0a'/$'\n'}
contains "$msg" "filler line 499 of the-last-words"$'\n'"the-last-words-err" "the error ends with the tail of its stderr"
unlike "$msg" 'filler line 0 of|the-last-words-out' "but not its head, nor its stdout"
if [ "${#msg}" -le 1100 ] && [ "${#msg}" -ge 500 ]; then
  pass "the tail in the error is about 1 KiB (${#msg} bytes)"
else
  fail "the tail in the error is about 1 KiB" "${#msg} bytes: $msg"
fi
has_line "$msg" '^filler line [0-9]+ of the-last-words$' "the tail starts at a line boundary"
is "$(grep -vxE 'filler line [0-9]+ of the-last-words|the-last-words-err' <<<"$msg")" "" \
  "and no line in it is cut in half"
nothing_left "$id" "$b" "nothing left after the talking hook"

# A hook that leaves a background child holding its stdout: the runtime does not wait for the child.
b=$(hbundle daemon rrt-probe sleep 30)
add_hook "$b" createRuntime "$(jq -cn --arg f "$b/log/daemon.pid" \
  '{path: "/bin/sh", args: ["sh", "-c", "sleep 20 & echo $! >\"$0\"", $f], timeout: 10}')"
id=$(new_id daemon)
t0=$SECONDS
run rrt create -b "$b" "$id"
is "$rc" 0 "create with a hook that leaves a child holding its stdout"
if [ $((SECONDS - t0)) -le 3 ]; then
  pass "create does not wait for the hook's background child"
else
  fail "create does not wait for the hook's background child" "took $((SECONDS - t0)) s"
fi
dpid=$(cat "$b/log/daemon.pid" 2>/dev/null)
[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
rrt delete -f "$id" >/dev/null 2>&1

# A startContainer path resolves in the container: the host's copy is not there.
b=$(hbundle ctrpath rrt-probe sleep 30)
rm -f "$b/rootfs/hooks/log-hook.sh"
add_hook "$b" startContainer "$(hook_json "$HOOKS_DIR/log-hook.sh" log-hook.sh startContainer /hooklog)"
id=$(new_id ctrpath)
run rrt create -b "$b" "$id"
is "$rc" 0 "create with a startContainer hook only the host has"
run rrt start "$id"
contains "$rc $err" "1 " "start fails: a startContainer path is resolved inside the container"
contains "$err" "startContainer hook #0 ($HOOKS_DIR/log-hook.sh): exec: No such file or directory" "and says so"
nothing_left "$id" "$b" "nothing left after the container-side ENOENT"

# Hook entries the spec forbids fail create, naming the field.
b=$(hbundle badhooks rrt-probe exit 0)
cp "$b/config.json" "$b/config.json.orig"
bad_hook() { # bad_hook NAME JQ ERE
  cp "$b/config.json.orig" "$b/config.json"
  cfg "$b" "$2"
  id=$(new_id bad)
  run rrt create -b "$b" "$id"
  if [ "$rc" -eq 1 ] && [[ $err =~ $3 ]]; then
    pass "$1: create fails naming it"
  else
    fail "$1: create fails naming it" "exit status: $rc" "stderr: $err" "expected: $3"
  fi
  rrt delete -f "$id" >/dev/null 2>&1
}
bad_hook "a relative hook path" '.hooks.createRuntime = [{path: "hooks/x.sh"}]' 'hooks\.createRuntime\[0\]\.path'
bad_hook "a hook without path" '.hooks.poststop = [{args: ["x"]}]' 'hooks\.poststop\[0\]\.path'
bad_hook "timeout 0" '.hooks.prestart = [{path: "/bin/true", timeout: 0}]' 'hooks\.prestart\[0\]\.timeout'
bad_hook "a negative timeout" '.hooks.poststart = [{path: "/bin/true", timeout: -1}]' 'hooks\.poststart\[0\]\.timeout'
bad_hook "env not an array" '.hooks.createContainer = [{path: "/bin/true", env: "A=1"}]' 'hooks\.createContainer\[0\]\.env'
bad_hook "an unknown kind is ignored, a wrong type is not" '.hooks.startContainer = {}' 'hooks\.startContainer'

# delete -f of a running container stops it and then runs poststop.
b=$(hbundle force rrt-probe sleep 30)
log_hook "$b" poststop
id=$(new_id force)
run rrt create -b "$b" "$id"
run rrt start "$id"
pid=$(state_field "$id" .pid)
phase "$b" delete-f
run rrt delete -f "$id"
is "$rc" 0 "delete -f of a running container with a poststop hook"
has_line "$(cat "$b/log/log" 2>/dev/null)" '^poststop stopped [0-9]+ delete-f$' "poststop ran during delete -f"
nothing_left "$id" "$b" "nothing left after delete -f"

# ---------------------------------------------------------------- run (foreground)

b=$(hbundle run-ok rrt-probe exit 0)
all_log_hooks "$b"
id=$(new_id run-ok)
phase "$b" run
run rrt run -b "$b" "$id"
is "$rc" 0 "run with all six kinds of hooks"
is "$(hook_log "$b")" "prestart run
createRuntime run
createContainer run
startContainer run
poststart run
poststop run" "run calls all six kinds in order"
nothing_left "$id" "$b" "nothing left after run"

run_fail() { # run_fail KIND: `run` with hooks.KIND = [log-hook.sh, fail-hook.sh exit1]
  local kind=$1 b id path
  b=$(hbundle "run-$kind" rrt-probe sleep 30)
  log_hook "$b" "$kind"
  log_hook "$b" poststop
  path=$(hook_script "$b" "$kind" fail-hook.sh)
  add_hook "$b" "$kind" "$(hook_json "$path" fail-hook.sh exit1 "$(hook_dir "$b" "$kind")")"
  id=$(new_id "run-$kind")
  phase "$b" run
  run rrt run -b "$b" "$id"
  is "$rc" 1 "run with a failing $kind hook exits 1"
  contains "$err" "$kind hook #1 ($path): error running hook: exited with status 1: fail-hook: failing on purpose" \
    "run: the error names $kind, index and path"
  has_line "$(cat "$b/log/log" 2>/dev/null)" '^poststop stopped [0-9]+ run$' "run: poststop ran after the failing $kind hook"
  run rrt state "$id"
  like "$rc $err" '^1 .*does not exist' "run: the container does not exist after the failing $kind hook"
  nothing_left "$id" "$b" "run: nothing left after the failing $kind hook"
}
run_fail createRuntime
run_fail startContainer
run_fail poststart

# ---------------------------------------------------------------- contrib/hooks/slirp4netns.sh

slirp_skip=""
if ! command -v slirp4netns >/dev/null 2>&1; then
  slirp_skip="slirp4netns is not installed"
elif ! (exec 3<>/dev/net/tun) 2>/dev/null; then
  slirp_skip="/dev/net/tun is not usable by $(id -un)"
fi
if [ -n "$slirp_skip" ]; then
  skip "contrib slirp4netns hook: $slirp_skip" 7
else
  b=$(hbundle slirp sh -c 'ip -o addr show tap0; ip route; echo done; exec rrt-probe sleep 30')
  add_hook "$b" createRuntime "$(jq -c '. + {timeout: 30}' <<<"$(hook_json "$CONTRIB_DIR/hooks/slirp4netns.sh" slirp4netns.sh tap0)")"
  id=$(new_id slirp)
  ctr_out=$T_WORK/slirp.out
  rrt create -b "$b" "$id" >"$ctr_out" 2>"$T_WORK/slirp.err"
  is "$?" 0 "create with the contrib slirp4netns hook"
  [ -s "$T_WORK/slirp.err" ] && diag "create stderr: $(cat "$T_WORK/slirp.err")"
  pid=$(state_field "$id" .pid)
  run rrt start "$id"
  is "$rc" 0 "start"
  wait_until 10 grep -q '^done' "$ctr_out"
  got=$(cat "$ctr_out")
  has_line "$got" '^[0-9]+: tap0 +inet 10\.0\.2\.100/24' "the container has tap0 with 10.0.2.100/24"
  has_line "$got" '^default via 10\.0\.2\.2 dev tap0' "and a default route via 10.0.2.2"
  slirps() { grep -l -s -a -E "^slirp4netns" /proc/[0-9]*/cmdline | while read -r f; do
    tr '\0' ' ' <"$f" | grep -E " $pid tap0 ?$" >/dev/null && echo "${f%/cmdline}"; done; }
  isnt "$(slirps)" "" "slirp4netns serves the container"
  run rrt delete -f "$id"
  is "$rc" 0 "delete -f"
  if wait_until 5 bash -c '[ -z "$('"$(declare -f slirps)"'; pid='"$pid"' slirps)" ]'; then
    pass "slirp4netns exits with the container"
  else
    fail "slirp4netns exits with the container" "still there: $(slirps)"
  fi
fi

done_testing
