#!/bin/bash
# t-hooks-fail.sh: a failing prestart, createRuntime, createContainer, startContainer or poststart
# hook (exit 1, killed by a signal, timeout, missing or non-executable path) fails create or start with exit 1 and an
# error naming the kind, index and path; afterwards the container does not exist, nothing of it
# is left, no later hook ran and the poststop hooks did. A failing poststop hook is a warning.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"
# shellcheck source=../hooks/hooks-lib.sh
source "$TESTS_DIR/hooks/hooks-lib.sh"

# expected_log KIND CMD: "KIND PHASE" lines of every hook that must have run when hook #1 of KIND
# failed under CMD: each kind up to KIND (its hook #0 included), then poststop.
expected_log() {
  local k
  for k in "${HOOK_KINDS[@]}"; do
    case $k in
      startContainer | poststart) echo "$k start" ;;
      poststop) ;;
      *) echo "$k create" ;;
    esac
    [ "$k" = "$1" ] && break
  done
  echo "poststop $2"
}

# fail_case KIND MODE: hooks.KIND = [log-hook.sh, fail-hook.sh MODE], every other kind a
# log-hook.sh; the command that runs KIND must fail because of hook #1.
fail_case() {
  local kind=$1 mode=$2 tag="$1 $2" b id path hook cmd t0 elapsed pid spid ipid want
  b=$(hbundle "f-$kind-$mode" rrt-probe sleep 30)
  all_log_hooks "$b"
  if [ "$mode" = missing ]; then
    path=$(hook_script "$b" "$kind" no-such-hook.sh)
  elif [ "$mode" = noexec ]; then
    # Readable, not executable; in the log dir, which the container sees as /hooklog.
    install -m 0644 "$HOOKS_DIR/fail-hook.sh" "$b/log/noexec-hook.sh"
    path=$(hook_dir "$b" "$kind")/noexec-hook.sh
  else
    path=$(hook_script "$b" "$kind" fail-hook.sh)
  fi
  hook=$(hook_json "$path" fail-hook.sh "$mode" "$(hook_dir "$b" "$kind")")
  [ "$mode" = sleep ] && hook=$(jq -c '. + {timeout: 1}' <<<"$hook")
  add_hook "$b" "$kind" "$hook"
  id=$(new_id "f-$kind")

  cmd=create ipid=""
  case $kind in
    startContainer | poststart)
      phase "$b" create
      run rrt create -b "$b" "$id"
      if [ "$rc" -ne 0 ]; then
        fail "$tag: create succeeds before the failing start" "exit status: $rc" "stderr: $err"
        skip "$tag: create failed" 7
        rrt delete -f "$id" >/dev/null 2>&1
        return
      fi
      pid=$(state_field "$id" .pid)
      ipid=$pid
      cmd=start
      ;;
  esac
  phase "$b" "$cmd"
  t0=$SECONDS
  if [ "$cmd" = create ]; then
    run rrt create -b "$b" "$id"
  else
    run rrt start "$id"
  fi
  elapsed=$((SECONDS - t0))
  is "$rc" 1 "$tag: $cmd exits 1"
  [ -n "$ipid" ] || ipid=$(awk '$1 == "prestart" {print $3}' "$b/log/log" 2>/dev/null)
  case $mode in
    exit1) want="error running hook: exited with status 1: fail-hook: failing on purpose with status 1" ;;
    signal) want="error running hook: killed by signal SIGKILL (killed)" ;;
    sleep) want="error running hook: timed out after 1s" ;;
    missing) want="exec: No such file or directory" ;;
    noexec) want="exec: Permission denied" ;;
  esac
  contains "$err" "$kind hook #1 ($path): $want" "$tag: the error names kind, index, path and why"
  if [ "$mode" = sleep ]; then
    if [ "$elapsed" -le 5 ]; then
      pass "$tag: the timeout (1 s) ends $cmd within 5 s"
    else
      fail "$tag: the timeout (1 s) ends $cmd within 5 s" "took ${elapsed}s"
    fi
    spid=$(cat "$b/log/sleep.pid" 2>/dev/null)
    case $kind in
      startContainer | createContainer)
        # Its pid is one of the container's pid namespace: nothing_left below finds it (its cwd
        # or root is in the bundle) if it survived.
        pass "$tag: the hook's sleep is checked by 'nothing left'"
        ;;
      *)
        if [ -z "$spid" ]; then
          fail "$tag: the hook's background sleep is gone" "the hook wrote no sleep.pid"
        elif wait_until 3 bash -c '! grep -qs "^sleep" /proc/$1/cmdline' sh "$spid"; then
          pass "$tag: the hook's background sleep is gone"
        else
          fail "$tag: the hook's background sleep is gone" "pid $spid: $(tr '\0' ' ' </proc/"$spid"/cmdline)"
        fi
        ;;
    esac
  fi
  run rrt state "$id"
  if [ "$rc" -ne 0 ] && [[ $err == *"does not exist"* ]]; then
    pass "$tag: state says the container does not exist"
  else
    fail "$tag: state says the container does not exist" "exit status: $rc" "stdout: $out" "stderr: $err"
  fi
  nothing_left "$id" "$b" "$tag: nothing of the container is left"
  if [ -n "${pid:-}" ]; then
    ok "$tag: the init process (pid $pid) is gone" bash -c '! test -d /proc/$1 || grep -q "^State:.*Z" /proc/$1/status' sh "$pid"
  fi
  is "$(hook_log "$b")" "$(expected_log "$kind" "$cmd")" "$tag: the hooks up to the failing one ran, then poststop"
  # runc and crun give a stopped state no pid (0): accept that or the init's pid, nothing else.
  has_line "$(cat "$b/log/log" 2>/dev/null)" "^poststop stopped (0|${ipid:-x}) " \
    "$tag: poststop saw status stopped (pid 0 or the init's)"
}

for kind in prestart createRuntime createContainer startContainer poststart; do
  for mode in exit1 signal sleep missing noexec; do
    fail_case "$kind" "$mode"
  done
done

# ---------------------------------------------------------------- a failing poststop hook

b=$(hbundle poststop-fail rrt-probe exit 0)
log_hook "$b" poststop p0
add_hook "$b" poststop "$(hook_json "$HOOKS_DIR/fail-hook.sh" fail-hook.sh exit1 "$b/log")"
add_hook "$b" poststop "$(hook_json "$b/no-such-hook.sh" no-such-hook.sh)"
log_hook "$b" poststop p3
id=$(new_id poststop)
phase "$b" create
run rrt create -b "$b" "$id"
is "$rc" 0 "poststop failing: create"
phase "$b" start
run rrt start "$id"
is "$rc" 0 "poststop failing: start"
wait_status "$id" stopped 10
phase "$b" delete
run rrt delete "$id"
is "$rc" 0 "a failing poststop hook: delete still exits 0"
contains "$err" "poststop hook #1 ($HOOKS_DIR/fail-hook.sh): error running hook: exited with status 1" \
  "a failing poststop hook: a warning names kind, index and path"
like "$err" '[Ww]arn' "a failing poststop hook: the message is a warning"
contains "$err" "poststop hook #2 ($b/no-such-hook.sh)" "a missing poststop hook: a warning names it too"
is "$(hook_log "$b")" "p0 delete"$'\n'"p3 delete" "the other poststop hooks still ran, in order"
run rrt state "$id"
isnt "$rc" 0 "a failing poststop hook: the container is deleted"
nothing_left "$id" "$b" "a failing poststop hook: nothing left"

# ---------------------------------------------------------------- the runtime stopped mid-hook

# An engine gives up on a slow create and sends the runtime SIGTERM (or a user types ^C; the hook
# runs in its own process group, so the terminal's SIGINT does not reach it): the hook must not
# run on, orphaned, past its timeout, and the half-created container must not stay behind.
for sig in TERM INT; do
  b=$(hbundle "sig$sig" rrt-probe sleep 30)
  log_hook "$b" poststop
  add_hook "$b" createRuntime "$(jq -c '. + {timeout: 60}' <<<"$(hook_json "$HOOKS_DIR/fail-hook.sh" \
    fail-hook.sh sleep "$b/log")")"
  id=$(new_id "sig$sig")
  # A background job of a script starts with SIGINT ignored: give the runtime the default back
  # (env execs it: $! is the runtime).
  env --default-signal=INT,TERM "$RRT" --root "$RRT_ROOT" create -b "$b" "$id" >"$T_WORK/sig$sig.out" 2>&1 </dev/null &
  bgpid=$!
  if ! wait_until 10 test -s "$b/log/sleep.pid"; then
    fail "SIG$sig to create while a hook runs" "the hook did not start" "$(cat "$T_WORK/sig$sig.out")"
    kill -KILL "$bgpid" 2>/dev/null
    skip "the hook did not start" 3
  else
    spid=$(cat "$b/log/sleep.pid")
    kill -"$sig" "$bgpid"
    wait_pid "$bgpid" 10
    st=$?
    isnt "$st" 0 "SIG$sig to create while a hook runs: create fails (status $st)"
    if wait_until 3 bash -c '! grep -qs "^sleep" /proc/$1/cmdline' sh "$spid"; then
      pass "SIG$sig to create: the hook (and its child) does not outlive the runtime"
    else
      fail "SIG$sig to create: the hook (and its child) does not outlive the runtime" \
        "pid $spid still runs: $(tr '\0' ' ' </proc/"$spid"/cmdline 2>/dev/null)"
      kill -KILL "$spid" 2>/dev/null
    fi
    run rrt state "$id"
    like "$rc $err" '^1 .*does not exist' "SIG$sig to create: the half-created container is not left behind"
    has_line "$(cat "$b/log/log" 2>/dev/null)" '^poststop ' "SIG$sig to create: poststop ran"
  fi
  rrt delete -f "$id" >/dev/null 2>&1
  nothing_left "$id" "$b" "SIG$sig to create: nothing left (after delete -f)"
done

done_testing
