#!/bin/sh
# state-hook.sh RUNTIME ROOT OUT: an OCI hook for t-hooks.sh that asks the runtime for the state of
# the container it runs for (`RUNTIME --root ROOT state ID`, at most 5 s), as hooks often do, and
# writes OUT.rc, OUT.out and OUT.err. It always succeeds: the test judges the files.
rrt=$1 root=$2 out=$3
id=$(tr -d '\n' | sed -n 's/.*"id"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
rc=0
timeout 5 "$rrt" --root "$root" state "$id" >"$out.out" 2>"$out.err" || rc=$?
echo "$rc" >"$out.rc"
exit 0
