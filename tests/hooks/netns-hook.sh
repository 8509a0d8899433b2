#!/bin/sh
# netns-hook.sh DIR ADDR: a createRuntime hook for t-hooks.sh, run unprivileged in the runtime's
# namespaces: checks that the container's init has not exec'd the user program yet (its cmdline
# and exe are still the runtime's; DIR/exe and DIR/cmdline keep them), then enters the container's
# user and network namespaces as their owner and puts ADDR on lo. Writes DIR/netns-hook.ok last.
set -eu
dir=$1 addr=$2
pid=$(tr -d '\n' | sed -n 's/.*"pid"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p')
[ -n "$pid" ] || { echo "netns-hook: no pid on stdin" >&2; exit 1; }
readlink "/proc/$pid/exe" >"$dir/exe"
tr '\0' ' ' <"/proc/$pid/cmdline" >"$dir/cmdline"
# The namespaces of a blocked init must be openable by its owner (crun's non-dumpable init is not).
for ns in user net mnt; do
  [ -r "/proc/$pid/ns/$ns" ] || { echo "netns-hook: /proc/$pid/ns/$ns is not readable" >&2; exit 1; }
done
readlink "/proc/$pid/ns/net" >"$dir/netns"
nsenter --preserve-credentials -U -n -t "$pid" -- ip addr add "$addr" dev lo
nsenter --preserve-credentials -U -n -t "$pid" -- ip -o addr show dev lo >"$dir/lo"
echo "$pid" >"$dir/netns-hook.ok"
