#!/bin/bash
# demo.sh RUNTIME: runs a busybox container with RUNTIME as an unprivileged user (the invoking
# user, or the created user rrt-demo when run as root) and shows its id, uid_map, hostname and
# mounts; then the desktop form: an image the demo builds (contrib/mkimage.py, from busybox) run
# straight from its oci-archive on a copy-on-write root, twice (the second run finds its layers
# in the store). Exits with the first container's status.
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
  { cp "$runtime" "$stage/rootlessrt" && cp "$here/demo.sh" "$here/mkbundle.sh" "$here/mkimage.py" "$stage/"; } ||
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
# The store's layers belong to subordinate ids: `store rm` removes them from inside.
cleanup() {
  local l
  for l in "$work"/store/layers/sha256/*; do
    [ -e "$l" ] && "$runtime" store --storage "$work/store" rm "sha256:$(basename "$l")" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT
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

echo
echo "demo: the desktop form: an image built here (3 layers), run from its oci-archive"
if /usr/bin/python3 "$here/mkimage.py" "$work/img" >"$work/mkimage.log" 2>&1; then
  for n in first second; do
    echo "demo: \$ rootlessrt run --rm oci-archive:img/oci.tar sh -c '...'   ($n run)"
    t0=$(date +%s%N)
    "$runtime" --root "$work/state" run --rm --storage "$work/store" --entrypoint /bin/sh \
      "oci-archive:$work/img/oci.tar" -c 'echo "   as $(id -un) in $PWD, GREETING=$GREETING, / is $(grep " / " /proc/mounts | cut -d" " -f3)"
        echo scratch >/home/alice/new && ls -l /home/alice | sed "s/^/   /"' </dev/null
    st=$?
    echo "demo:   $((($(date +%s%N) - t0) / 1000000)) ms, exit status $st"
  done
  "$runtime" store --storage "$work/store" ls | sed 's/^/demo:   /'
else
  echo "demo: cannot build the image: $(tail -n 1 "$work/mkimage.log")"
fi
exit "$status"
