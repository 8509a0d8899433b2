#!/bin/sh
# fail-hook.sh MODE DIR: an OCI hook for t-hooks.sh that fails on purpose; POSIX sh (busybox too).
#   exit1   says so on stderr, exits 1
#   signal  kills itself with SIGKILL
#   sleep   starts `sleep 30` in the background, writes its pid to DIR/sleep.pid and waits for it
#           (the runtime's timeout must kill both: the whole process group)
mode=$1 dir=$2
cat >/dev/null
case $mode in
  exit1)
    echo "fail-hook: failing on purpose with status 1" >&2
    exit 1
    ;;
  signal)
    kill -KILL $$
    ;;
  sleep)
    sleep 30 &
    echo $! >"$dir/sleep.pid"
    wait
    ;;
  *)
    echo "fail-hook: unknown mode $mode" >&2
    exit 2
    ;;
esac
