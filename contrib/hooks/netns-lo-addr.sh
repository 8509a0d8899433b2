#!/bin/sh
# netns-lo-addr.sh: OCI createRuntime/prestart hook: lo up and dummy0 with an address in the container's netns.
#
# Runs in the runtime namespace as the user who runs the runtime (rootless: the
# owner of the container's user namespace), reads the state JSON on stdin and
# enters the container's user and network namespaces with nsenter. Needs a
# config.json with a new "network" namespace; jq is used when installed.
#
#   "hooks": {
#     "createRuntime": [{
#       "path": "/usr/local/share/rootlessrt/hooks/netns-lo-addr.sh",
#       "args": ["netns-lo-addr.sh", "10.200.0.1/24", "/tmp/netns-lo-addr.done"],
#       "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
#       "timeout": 10
#     }]
#   }
#
# Arguments (both optional):
#   ADDRESS/PREFIX  put on dummy0, default 10.200.0.1/24
#   MARKER_FILE     written with the container pid once everything is set up,
#                   so that a test can see that the hook ran
# dummy0 is a "dummy" link; on kernels built without CONFIG_DUMMY it falls back
# to an empty bridge, which holds a local address just as well.
set -eu

# shellcheck source=hook-lib.sh
. "$(dirname "$0")/hook-lib.sh"

addr=${1:-10.200.0.1/24}
marker=${2:-}
case $addr in
*/*) ;;
*) die "address '$addr' has no /PREFIX (e.g. 10.200.0.1/24)" ;;
esac

pid=$(read_container_pid)

# Entering one's own user namespace is EINVAL: only ask for -U when the
# container has one (always, rootless; not for a root runtime without it).
# --preserve-credentials keeps our ids, so that files we touch stay ours.
userns=
if [ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ]; then
  userns="-U --preserve-credentials"
fi

# One nsenter for all of it: the namespaces cannot change under us halfway.
# shellcheck disable=SC2086,SC2016 # $userns is a list of options; $1 expands inside
nsenter $userns -n -t "$pid" -- sh -eu -c '
  ip link set lo up
  if ! ip link add dummy0 type dummy 2>/dev/null; then
    ip link add dummy0 type bridge
  fi
  ip addr add "$1" dev dummy0
  ip link set dummy0 up
' netns-lo-addr-ns "$addr" || die "setting up lo and dummy0 ($addr) in the netns of $pid failed"

if [ -n "$marker" ]; then
  echo "$pid" >"$marker" || die "cannot write marker $marker"
fi
