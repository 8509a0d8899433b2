#!/bin/sh
# slirp4netns.sh: OCI createRuntime hook: user-mode networking for the container with slirp4netns.
#
# Runs in the runtime namespace as the user who runs the runtime, reads the
# state JSON on stdin and starts slirp4netns(1) for the container's network
# namespace: a tap device (default tap0) with 10.0.2.100/24, default route via
# 10.0.2.2 and DNS at 10.0.2.3, MTU 65520, no access to the host's loopback.
# The container needs its own "network" namespace; /dev/net/tun must be
# usable by that user (it is 0666 on most distributions).
#
#   "hooks": {
#     "createRuntime": [{
#       "path": "/usr/local/share/rootlessrt/hooks/slirp4netns.sh",
#       "args": ["slirp4netns.sh", "tap0"],
#       "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
#       "timeout": 30
#     }]
#   }
#
# Arguments (all optional): TAP_NAME [EXTRA_SLIRP4NETNS_OPTIONS...], e.g.
#   ["slirp4netns.sh", "tap0", "--enable-ipv6", "--cidr=10.0.3.0/24"]
# Environment (optional): SLIRP4NETNS_READY_TIMEOUT seconds to wait for the
# tap to be configured (default 10); SLIRP4NETNS_LOG a file for slirp4netns's
# own output (default: shown on failure only, then discarded).
#
# Lifetime: slirp4netns does not notice on its own that the container died (a
# tap fd keeps the namespace alive), so it is started with --exit-fd on a pipe
# whose only writer is a watcher waiting for the container pid: when the
# container exits, the watcher exits, the pipe hangs up and slirp4netns quits
# (within a second: tail --pid polls). Both run in their own sessions so that
# the hook can return at once, and the runtime killing the hook's process group
# on a timeout does not reach a slirp4netns that is already serving.
set -eu

# shellcheck source=hook-lib.sh
. "$(dirname "$0")/hook-lib.sh"

tap=${1:-tap0}
[ $# -gt 0 ] && shift
wait_s=${SLIRP4NETNS_READY_TIMEOUT:-10}
case $wait_s in
'' | *[!0-9]* | 0) die "SLIRP4NETNS_READY_TIMEOUT must be a positive number of seconds" ;;
esac
command -v slirp4netns >/dev/null 2>&1 || die "slirp4netns not found in PATH ($PATH)"

pid=$(read_container_pid)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/slirp4netns-hook.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/ready"
log=${SLIRP4NETNS_LOG:-$tmp/log}

# The watcher's stdout is the exit pipe (fd 4 of slirp4netns); it writes
# nothing and exits with the container. slirp4netns writes "1" on fd 3 (the
# FIFO) once tap is up and configured. Neither keeps the hook's stdout or
# stderr: the runtime would otherwise wait for them.
setsid tail --pid="$pid" -f /dev/null </dev/null 2>/dev/null |
  setsid slirp4netns --configure --mtu=65520 --disable-host-loopback \
    --ready-fd=3 --exit-fd=4 "$@" "$pid" "$tap" \
    4<&0 </dev/null 3>"$tmp/ready" >>"$log" 2>&1 &
slirp=$!

# Empty on EOF (slirp4netns died) and on timeout (status 124).
rc=0
ready=$(timeout "$wait_s" head -c 1 "$tmp/ready" 2>/dev/null) || rc=$?
if [ "$ready" != 1 ]; then
  # The watcher goes too: coreutils tail -f exits once its output pipe is gone.
  kill "$slirp" 2>/dev/null || true
  if [ -z "${SLIRP4NETNS_LOG:-}" ] && [ -s "$log" ]; then
    sed "s/^/${0##*/}: slirp4netns: /" "$log" >&2
  fi
  if [ "$rc" -eq 124 ]; then
    die "slirp4netns for container $pid ($tap) was not ready within ${wait_s}s"
  fi
  die "slirp4netns for container $pid ($tap) exited before it was ready"
fi
