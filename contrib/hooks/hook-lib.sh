# hook-lib.sh: what the example hooks share; sourced, not run. Hooks get
# exactly the env of config.json, so PATH may well be absent.
# shellcheck shell=sh
PATH=${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}
export PATH

die() {
  echo "${0##*/}: $*" >&2
  exit 1
}

# read_container_pid: the state JSON on stdin -> the container's pid on stdout,
# a live process with a network namespace of its own (jq when installed, sed
# otherwise). Use as pid=$(read_container_pid): with set -e a failure exits.
read_container_pid() {
  state=$(cat)
  if command -v jq >/dev/null 2>&1; then
    pid=$(printf '%s' "$state" | jq -r '.pid // empty')
  else
    pid=$(printf '%s' "$state" | sed -n 's/.*"pid"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p')
  fi
  case $pid in
  '' | *[!0-9]* | 0) die "no container pid in the state on stdin" ;;
  esac
  [ -e "/proc/$pid/ns/net" ] || die "container process $pid is gone"
  if [ "$(readlink "/proc/$pid/ns/net")" = "$(readlink /proc/self/ns/net)" ]; then
    die "container $pid shares the runtime's network namespace: add a \"network\" namespace"
  fi
  echo "$pid"
}
