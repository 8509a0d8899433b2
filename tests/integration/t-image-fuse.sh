#!/bin/bash
# t-image-fuse.sh: the desktop run's errors say the real cause: a /dev/fuse the user cannot open
# (mode 0600) or that does not exist, when the overlay needs fuse-overlayfs, is the overlay's
# failure with the fix (not "the container's command cannot be executed", exit 126). Each case
# runs the runtime as the test user in a private mount namespace of its own where /dev/fuse is
# that way: the host's /dev is not touched.
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

N=10
user=${RRT_TEST_USER:-rrt-test}
if ! real_root; then
  skip "needs the host's root to set up a private /dev/fuse" "$N"
  done_testing
fi
if ! u=$(id -u "$user" 2>/dev/null) || ! g=$(id -g "$user" 2>/dev/null); then
  skip "no user $user to run the runtime as" "$N"
  done_testing
fi
if ! command -v fuse-overlayfs >/dev/null; then
  skip "no fuse-overlayfs: the overlay cannot need it" "$N"
  done_testing
fi

base=$(mkbundle base true)/rootfs
ustate=$T_WORK/ustate ustore=$T_WORK/ustore
mkdir -p "$ustate" "$ustore" "$T_WORK/fake"
chown -R "$u:$g" "$T_WORK/base" "$ustate" "$ustore"
chmod 0755 "$T_WORK"
# as_user_in_ns SETUP CMD...: CMD as the user, in a new private mount namespace after SETUP (sh).
as_user_in_ns() {
  local setup=$1
  shift
  timeout -k 5 "$RRT_CMD_TIMEOUT" unshare -m --propagation private sh -c "$setup"' || exit 3
    exec setpriv --reuid='"$u"' --regid='"$g"' --init-groups --reset-env env PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent "$@"' sh "$@"
}
# shellcheck disable=SC2317 # called through run
urun() { as_user_in_ns "$1" "$RRT" --root "$ustate" run --rm --storage "$ustore" "${@:2}"; }

# /dev/fuse mode 0600, owner root: a device node of our own bound over it in the namespace.
mknod "$T_WORK/fake/fuse" c 10 229 && chmod 0600 "$T_WORK/fake/fuse"
bind_0600="mount --bind $T_WORK/fake/fuse /dev/fuse"
# /dev/fuse absent: a tmpfs /dev holding the nodes a run needs, bound from the real one.
keep=$T_WORK/fake/dev
mkdir -p "$keep"
no_fuse="mount --rbind /dev $keep && mount -t tmpfs -o mode=0755 tmpfs /dev &&
  for n in null zero full random urandom tty ptmx; do touch /dev/\$n && mount --bind $keep/\$n /dev/\$n || exit 1; done &&
  mkdir /dev/pts /dev/shm && mount --rbind $keep/pts /dev/pts && mount --rbind $keep/shm /dev/shm"

for c in 0600 absent; do
  setup=$bind_0600 want='/dev/fuse is mode 0600, owner root; fix: sudo chmod 0666 /dev/fuse' why='Permission denied'
  [ "$c" = absent ] && setup=$no_fuse want='/dev/fuse does not exist: the fuse module is not loaded; fix: sudo modprobe fuse' why='No such file or directory'
  run urun "$setup" --overlay fuse "$base" true
  like "$rc:$err" "^1:rootlessrt: run: the container's copy-on-write root could not be mounted: the overlay on / .*fuse-overlayfs: open /dev/fuse .*: $why \\(the overlay needs fuse-overlayfs here, and ${want//./\\.}" \
    "/dev/fuse $c: the overlay's failure, why, and the fix; exit 1"
  unlike "$err" "cannot be executed|was not found" "/dev/fuse $c: not taken for the command's failure"
  is "$(printf '%s\n' "$err" | wc -l)" 1 "/dev/fuse $c: one line"
  is "$(find "$ustate/.run" "$ustore/containers" -mindepth 1 -maxdepth 1 ! -name .spare 2>/dev/null)" "" \
    "/dev/fuse $c: no bundle and no upper directory left"
done
# The same namespace setups, /dev/fuse aside, run a container: what failed was the device.
run urun "$bind_0600" --overlay kernel "$base" echo kernel
is "$rc:$out" "0:kernel" "with the 0600 /dev/fuse, the kernel's overlay still runs it"
run urun "$no_fuse" --overlay kernel "$base" echo kernel
is "$rc:$out" "0:kernel" "with no /dev/fuse, the kernel's overlay still runs it"

for d in "$ustore"/layers/sha256/* "$ustore"/containers/*; do
  [ -e "$d" ] && as_user_in_ns true "$RRT" store --storage "$ustore" rm "${d##*/}" >/dev/null 2>&1
done
done_testing
