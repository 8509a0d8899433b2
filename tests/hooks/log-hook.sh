#!/bin/sh
# log-hook.sh NAME DIR [exe|exe1]: an OCI hook for t-hooks.sh; POSIX sh, so that busybox runs it too
# (startContainer runs it inside the container, DIR then being a bind mount of a host dir).
#
# Appends "NAME STATUS PID PHASE" to DIR/log, where STATUS and PID come from the state JSON on
# stdin and PHASE is the content of DIR/phase (the test writes the runtime command it is about to
# run there), and keeps the state as DIR/state.NAME for the test to validate against the schema.
# With "exe": also DIR/exe.NAME = readlink /proc/PID/exe and DIR/cmdline.NAME = /proc/PID/cmdline
# (NUL -> space), i.e. what the container's pid runs while the hook runs; "exe1" the same for pid 1
# (a startContainer hook: the container's init in its own pid namespace). Always DIR/ns.NAME: the
# hook's own user, net and mnt namespaces (readlink /proc/self/ns/*); DIR/fds.NAME: the open
# fds of a program it runs (ls /proc/self/fd).
name=$1 dir=$2
state=$(cat) || exit 1
printf '%s\n' "$state" >"$dir/state.$name" || exit 1
flat=$(printf '%s' "$state" | tr -d '\n')
status=$(printf '%s' "$flat" | sed -n 's/.*"status"[[:space:]]*:[[:space:]]*"\([a-z]*\)".*/\1/p')
pid=$(printf '%s' "$flat" | sed -n 's/.*"pid"[[:space:]]*:[[:space:]]*\([0-9-][0-9]*\).*/\1/p')
phase=$(cat "$dir/phase" 2>/dev/null)
case ${3:-} in
  exe) p=$pid ;;
  exe1) p=1 ;;
  *) p="" ;;
esac
if [ -n "$p" ]; then
  readlink "/proc/$p/exe" >"$dir/exe.$name" 2>&1
  tr '\0' ' ' <"/proc/$p/cmdline" >"$dir/cmdline.$name" 2>&1
fi
# ls's own fds: 0-2 and its directory (3); anything more came from the runtime.
# shellcheck disable=SC2012 # fd numbers only
ls /proc/self/fd/ 2>&1 | tr '\n' ' ' >"$dir/fds.$name"
echo "$(readlink /proc/self/ns/user) $(readlink /proc/self/ns/net) $(readlink /proc/self/ns/mnt)" \
  >"$dir/ns.$name"
echo "$name ${status:-?} ${pid:-?} ${phase:-?}" >>"$dir/log" || exit 1
