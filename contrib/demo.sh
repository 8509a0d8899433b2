#!/bin/bash
# demo.sh RUNTIME: runs a busybox container with RUNTIME as an unprivileged user (the invoking
# user, or the created user rrt-demo when run as root) and shows its id, uid_map, hostname and
# mounts; exits with the container's status.
set -u

die() {
  echo "demo: $*" >&2
  exit 1
}

[ $# -eq 1 ] || die "usage: demo.sh RUNTIME"
runtime=$(readlink -f "$1") || die "no runtime $1"
[ -x "$runtime" ] || die "$1 is not executable"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ "$(id -u)" -eq 0 ] && [ "$(awk 'NR == 1 {print $2, $3}' /proc/self/uid_map)" = "0 4294967295" ]; then
  # Real root: the demo is about rootless containers, so it runs as a created user. The runtime and
  # the scripts go to a world-readable dir (the checkout may be under /root).
  uid=$(bash "$here/ensure-user.sh" rrt-demo) || die "cannot set up the user rrt-demo"
  gid=$(id -g rrt-demo)
  stage=$(mktemp -d /tmp/rrt-demo.XXXXXX) || die "mktemp failed"
  trap 'rm -rf "$stage"' EXIT
  chmod 0755 "$stage"
  { cp "$runtime" "$stage/rootlessrt" && cp "$here/demo.sh" "$here/mkbundle.sh" "$stage/"; } ||
    die "cannot copy to $stage"
  chmod -R a+rX "$stage"
  echo "demo: running as the unprivileged user rrt-demo (uid $uid)"
  cd / || exit 1
  # --reset-env leaves XDG_RUNTIME_DIR unset; the runtime then uses its own fallback.
  setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env \
    bash "$stage/demo.sh" "$stage/rootlessrt" </dev/null
  exit $?
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rrt-demo-user.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$work"' EXIT
bash "$here/mkbundle.sh" "$runtime" "$work/bundle" -- sh -c '
  echo "== id";       id
  echo "== uid_map";  cat /proc/self/uid_map
  echo "== hostname"; hostname
  echo "== mounts";   cat /proc/mounts' || die "cannot make the bundle"
{ jq '.hostname = "rootlessrt-demo"' "$work/bundle/config.json" >"$work/config.json" &&
  mv "$work/config.json" "$work/bundle/config.json"; } || die "cannot set the hostname"

echo "demo: $(basename "$runtime") run (as $(id -un), uid $(id -u))"
"$runtime" --root "$work/state" run -b "$work/bundle" "demo-$$" </dev/null
status=$?
echo "demo: the container exited with status $status"
exit "$status"
