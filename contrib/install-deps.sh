#!/bin/sh
# install-deps.sh: installs the Debian packages rootlessrt builds and tests with, if any is missing.
# Idempotent and silent when everything is present. As root it runs apt-get; otherwise it prints
# the command to run and exits 1.
set -u

missing=""
need() { # need PACKAGE: remember a package to install (once)
  case " $missing " in
    *" $1 "*) ;;
    *) missing="${missing:+$missing }$1" ;;
  esac
}

have_cmd() { command -v "$1" >/dev/null 2>&1; }

pkg_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

# Commands, each with the package that provides it.
for pair in cc:gcc make:make pkg-config:pkg-config newuidmap:uidmap newgidmap:uidmap jq:jq \
  setpriv:util-linux ip:iproute2 slirp4netns:slirp4netns shellcheck:shellcheck \
  clang-format:clang-format cppcheck:cppcheck valgrind:valgrind crun:crun curl:curl \
  iperf3:iperf3 pasta:passt nsenter:util-linux script:bsdutils groff:groff man:man-db zsh:zsh \
  fish:fish apparmor_parser:apparmor fuse-overlayfs:fuse-overlayfs zstd:zstd unshare:util-linux \
  strace:strace iptables-nft:iptables setcap:libcap2-bin; do
  have_cmd "${pair%%:*}" || need "${pair#*:}"
done
[ -x /usr/bin/time ] || need time

# The bundle rootfs needs a static busybox at /bin/busybox (busybox-static, not busybox).
if [ ! -x /bin/busybox ] || ! pkg_installed busybox-static; then
  need busybox-static
fi

# Schema validation uses Debian's python, not whatever python3 is first in PATH.
if [ ! -x /usr/bin/python3 ] || ! /usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1; then
  need python3-jsonschema
fi

# libc headers: a compiler alone cannot build anything.
[ -e /usr/include/stdio.h ] || need libc6-dev

# clang and its libFuzzer runtime: `make fuzz` needs them (`install-deps.sh fuzz`), and `make
# check` runs a few seconds of each fuzzer with them, so as root they are installed for it too.
if [ "${1:-}" = fuzz ] || [ "$(id -u)" -eq 0 ]; then
  have_cmd clang || need clang
  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
    need libclang-rt-dev
fi

# `install-deps.sh runc-bats`: runc's bats suite (contrib/runc-bats.sh, `make check-runc`): bats,
# gawk (its cgroup v1 helpers), dpkg-source to unpack the source package, debootstrap for its
# Debian image, and Go with the libraries its helpers recvtty and seccompagent import, built in
# GOPATH mode from /usr/share/gocode.
if [ "${1:-}" = runc-bats ]; then
  for pair in bats:bats gawk:gawk dpkg-source:dpkg-dev debootstrap:debootstrap go:golang-go \
    gcc:gcc nsenter:util-linux setpriv:util-linux runc:runc crun:crun; do
    have_cmd "${pair%%:*}" || need "${pair#*:}"
  done
  for p in golang-github-containerd-console-dev golang-github-urfave-cli-dev \
    golang-github-sirupsen-logrus-dev golang-github-seccomp-libseccomp-golang-dev \
    golang-github-cyphar-filepath-securejoin-dev golang-github-opencontainers-specs-dev \
    golang-golang-x-sys-dev; do
    pkg_installed "$p" || need "$p"
  done
fi

# The real engines the tests drive (tests/engines/containerd.sh): containerd with its runc shim
# (Debian's package pulls runc in) and rootlesskit for its rootless mode. Optional: installed only
# as root, so an unprivileged build is not stopped by them; without them those checks skip.
if [ "$(id -u)" -eq 0 ]; then
  # A real systemd user manager for the systemd cgroup driver's tests (t-systemd.sh); rootless
  # podman and what its scenarios use (tests/podman/podman-check.sh: catatonit for --init and
  # the pod's infra container); dockerd for tests/engines/docker.sh (docker.io pulls in tini as
  # docker-init, and runc, the suite's reference runtime); a local registry, skopeo to push to it
  # and htpasswd for its password file (t-registry.sh), openssl to sign the tokens of
  # t-registry-token.sh's token server; distrobox for podman's distrobox scenario.
  for pair in containerd:containerd containerd-shim-runc-v2:containerd rootlesskit:rootlesskit \
    systemctl:systemd podman:podman fuse-overlayfs:fuse-overlayfs catatonit:catatonit \
    dockerd:docker.io docker-init:tini runc:runc docker-registry:docker-registry skopeo:skopeo \
    htpasswd:apache2-utils openssl:openssl distrobox:distrobox; do
    have_cmd "${pair%%:*}" || need "${pair#*:}"
  done
  pkg_installed dbus-user-session || need dbus-user-session
  # Kubernetes' CRI calls (tests/engines/cri.py) go through gRPC.
  /usr/bin/python3 -c 'import grpc' >/dev/null 2>&1 || need python3-grpcio
fi

# Libraries found through pkg-config.
for pair in libseccomp:libseccomp-dev libcap:libcap-dev json-c:libjson-c-dev slirp:libslirp-dev \
  glib-2.0:libglib2.0-dev libarchive:libarchive-dev nettle:nettle-dev libzstd:libzstd-dev \
  zlib:zlib1g-dev libsystemd:libsystemd-dev libcurl:libcurl4-openssl-dev; do
  if ! have_cmd pkg-config || ! pkg-config --exists "${pair%%:*}" 2>/dev/null; then
    need "${pair#*:}"
  fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: $missing" >&2
  echo "install-deps: run as root:" >&2
  echo "  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing" >&2
  exit 1
fi

echo "install-deps: installing $missing"
apt-get update -qq >/dev/null || {
  echo "install-deps: apt-get update failed" >&2
  exit 1
}
# No package's service may start while installing (docker.io's and containerd's would, where
# there is no policy): the tests start their own daemons, in directories of their own.
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  policy=/usr/sbin/policy-rc.d
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 0755 "$policy"
fi
# shellcheck disable=SC2086 # $missing is a list of package names
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
rc=$?
[ -n "$policy" ] && rm -f "$policy"
[ "$rc" -eq 0 ] || {
  echo "install-deps: apt-get install $missing failed" >&2
  exit 1
}
