#!/bin/sh
# run-smoke.sh: builds net-smoke against the library and runs it as an unprivileged user.
# Usage (as root): tests/net/run-smoke.sh [BUILD_DIR] [USER]; needs nsenter, ip, /dev/net/tun 0666.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-/tmp/b-net}
user=${2:-rrt-net}
make --no-print-directory BUILD="$build" "$build/librrt.a" >/dev/null
# shellcheck disable=SC2046
cc -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Iinclude \
  $(pkg-config --cflags libseccomp libcap json-c slirp) \
  -o "$build/net-smoke" tests/net/net-smoke.c "$build/librrt.a" \
  $(pkg-config --libs libseccomp libcap json-c slirp)
chmod 0755 "$build" "$build/net-smoke"

if [ "$(id -u)" -ne 0 ]; then
  exec "$build/net-smoke"
fi
mode=$(stat -c %a /dev/net/tun)
# The permission error first, with the device as most distributions do not ship it.
chmod 0600 /dev/net/tun
su "$user" -s /bin/sh -c "$build/net-smoke --tun-check" || rc=$?
chmod 0666 /dev/net/tun
su "$user" -s /bin/sh -c "$build/net-smoke" || rc=$?
chmod "$mode" /dev/net/tun
exit "${rc:-0}"
