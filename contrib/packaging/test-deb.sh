#!/bin/bash
# test-deb.sh DIR RUNTIME: installs DIR/rootlessrt_*.deb into a clean Debian 12 root and runs the
# packaged `rootlessrt check` there as an unprivileged user, then a busybox container with the
# packaged runtime. As root. The root is debootstrapped once (DIR/debroot-pristine, kept) and
# copied fresh for every run; it runs as a container of this project's own (RUNTIME, as real
# root: pid, mount, ipc, uts and cgroup namespaces; the host's network, so that apt fetches the
# package's dependencies from the Debian mirror as a user's apt would). Its bounding set has
# CAP_SYS_ADMIN, as a host's has: setuid newuidmap needs it to write a child's uid_map; and its
# /proc has no masked paths, as a host's has none: a user namespace mounts proc only where the
# whole of it is visible.
set -euo pipefail

die() {
  echo "test-deb: $*" >&2
  exit 1
}
[ $# -eq 2 ] || die "usage: test-deb.sh DIR RUNTIME"
[ "$(id -u)" = 0 ] || die "run as root (debootstrap, and the container as real root)"
dir=$(readlink -f "$1")
rt=$(readlink -f "$2")
deb=$(ls "$dir"/rootlessrt_*.deb 2>/dev/null | head -n1)
[ -n "$deb" ] || die "no rootlessrt_*.deb in $dir (make deb)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
[ -x /bin/busybox ] || die "no static /bin/busybox (apt-get install busybox-static)"

pristine=$dir/debroot-pristine
if [ ! -e "$pristine/.complete" ]; then
  echo "test-deb: debootstrap bookworm into $pristine (once)"
  rm -rf "$pristine"
  debootstrap --variant=minbase bookworm "$pristine" http://deb.debian.org/debian >"$dir/debootstrap.log" 2>&1 ||
    die "debootstrap failed (see $dir/debootstrap.log)"
  touch "$pristine/.complete"
fi

work=$(mktemp -d /var/tmp/rootlessrt-debtest.XXXXXX)
cleanup() {
  "$rt" --root "$work/state" delete --force debtest >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
start=$SECONDS
cp -a "$pristine" "$work/rootfs"
rm -f "$work/rootfs/.complete"
cp "$deb" "$work/rootfs/tmp/rootlessrt.deb"
cp /bin/busybox "$work/rootfs/tmp/busybox"
cp /etc/resolv.conf "$work/rootfs/etc/resolv.conf"

cat >"$work/rootfs/tmp/inside.sh" <<'EOS'
set -eu
export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin
apt-get update -qq >/tmp/apt.log 2>&1
apt-get install -y -qq --no-install-recommends /tmp/rootlessrt.deb >>/tmp/apt.log 2>&1 || {
  tail -n 20 /tmp/apt.log
  exit 1
}
echo "installed: $(dpkg-query -W -f '${Package} ${Version}' rootlessrt) with $(dpkg-query -W -f '${Depends}' rootlessrt)"
for f in /usr/bin/rootlessrt /usr/libexec/rootlessrt/rootlessrt-net /usr/share/man/man1/rootlessrt.1.gz \
  /usr/share/bash-completion/completions/rootlessrt /usr/share/zsh/site-functions/_rootlessrt \
  /usr/share/fish/vendor_completions.d/rootlessrt.fish /usr/share/rootlessrt/apparmor/rootlessrt; do
  [ -e "$f" ] || { echo "missing: $f"; exit 1; }
done
# A man page for every verb the installed binary has.
for v in $(rootlessrt --list-flags | awk '$1 == "verb" && $2 != "help" {print $2}'); do
  [ -e "/usr/share/man/man1/rootlessrt-$v.1.gz" ] || { echo "missing: the man page of $v"; exit 1; }
done
echo "files: the runtime, rootlessrt-net, the man pages (one per verb), three completions, the AppArmor profile"
useradd -m -s /bin/sh pkguser
grep -q '^pkguser:' /etc/subuid || usermod --add-subuids 100000-165535 --add-subgids 100000-165535 pkguser
uid=$(id -u pkguser)
mkdir -p /run/user && install -d -m 0700 -o pkguser -g pkguser "/run/user/$uid"
as_user() {
  setpriv --reuid=pkguser --regid=pkguser --init-groups --reset-env \
    env HOME=/home/pkguser XDG_RUNTIME_DIR="/run/user/$uid" PATH=/usr/bin:/bin "$@"
}
echo "--- rootlessrt check, as pkguser (uid $uid):"
set +e
as_user rootlessrt check
echo "check exit status: $?"
set -e
b=/home/pkguser/bundle
mkdir -p "$b/rootfs/bin"
cp /tmp/busybox "$b/rootfs/bin/busybox"
ln -s busybox "$b/rootfs/bin/sh"
chown -R pkguser:pkguser "$b"
as_user rootlessrt spec --rootless -b "$b"
sed -i 's/"sh"/"sh", "-c", "echo hello from a container of the packaged rootlessrt, uid $(busybox id -u)"/' "$b/config.json"
as_user rootlessrt run -b "$b" pkgtest
EOS

"$rt" spec -b "$work" >/dev/null
jq '.root = {"path": "rootfs", "readonly": false}
  | .process.args = ["/bin/sh", "/tmp/inside.sh"] | .process.noNewPrivileges = false
  | .process.env += ["HOME=/root"]
  | .process.capabilities = ({"bounding": $caps, "effective": $caps, "permitted": $caps})
  | .linux.namespaces |= map(select(.type != "network"))
  | .linux.devices = [
      {"path": "/dev/net/tun", "type": "c", "major": 10, "minor": 200, "fileMode": 438, "uid": 0, "gid": 0},
      {"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438, "uid": 0, "gid": 0}]
  | .linux.resources.devices = ((.linux.resources.devices // []) + [
      {"allow": true, "type": "c", "major": 10, "minor": 200, "access": "rwm"},
      {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rwm"}])
  | .mounts += [{"destination": "/run", "type": "tmpfs", "source": "tmpfs",
      "options": ["nosuid", "nodev", "mode=0755"]}]
  | .linux.maskedPaths = [] | .linux.readonlyPaths = []
  | .hostname = "debtest"' \
  --argjson caps '["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_SETGID",
    "CAP_SETUID","CAP_SETPCAP","CAP_SETFCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT","CAP_AUDIT_WRITE",
    "CAP_MKNOD","CAP_SYS_ADMIN"]' "$work/config.json" >"$work/config.json.new"
mv "$work/config.json.new" "$work/config.json"
echo "test-deb: $(basename "$deb") into a fresh Debian 12 root, in a rootlessrt container"
set +e
"$rt" --root "$work/state" run -b "$work" debtest 2>&1 | tee "$dir/test-deb.log"
status=${PIPESTATUS[0]}
set -e
echo "test-deb: exit status $status ($((SECONDS - start)) s); the log is $dir/test-deb.log"
grep -q '^check exit status: 0$' "$dir/test-deb.log" || die "rootlessrt check failed in the clean root"
grep -q '^hello from a container of the packaged rootlessrt' "$dir/test-deb.log" || die "the packaged runtime did not run a container"
[ "$status" -eq 0 ] || die "the test container exited with $status"
echo "test-deb: ok"
