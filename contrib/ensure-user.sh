#!/bin/bash
# ensure-user.sh NAME: (root) makes sure an unprivileged user NAME exists with a 65536-id range in
# /etc/subuid and /etc/subgid, then prints its uid. Used by the demo and the integration tests.
set -u

die() {
  echo "ensure-user: $*" >&2
  exit 1
}

{ [ $# -eq 1 ] && [ -n "$1" ]; } || die "usage: ensure-user.sh NAME"
name=$1
[ "$(id -u)" -eq 0 ] || die "must run as root"

# Several test runs may set the same user up at once: one at a time.
exec 9>>/run/rrt-ensure-user.lock || die "cannot open /run/rrt-ensure-user.lock"
flock 9 || die "cannot lock /run/rrt-ensure-user.lock"

if ! id -u "$name" >/dev/null 2>&1; then
  useradd -m -s /bin/bash "$name" || id -u "$name" >/dev/null 2>&1 || die "useradd $name failed"
fi
uid=$(id -u "$name") || die "no uid for $name"

# First free id after every existing range of both files (never below 200000), so the new range
# overlaps nobody's and the uid and gid ranges start at the same number.
next_start() {
  local max=200000 f owner start count rest
  for f in /etc/subuid /etc/subgid; do
    [ -r "$f" ] || continue
    while IFS=: read -r owner start count rest; do
      case $owner in '' | '#'*) continue ;; esac
      [[ $start =~ ^[0-9]+$ && $count =~ ^[0-9]+$ ]] || continue
      ((start + count > max)) && max=$((start + count))
    done <"$f"
  done
  echo "$max"
}

has_range() { # has_range FILE: a line for the user (by name or by uid)
  [ -r "$1" ] && grep -qE "^($name|$uid):[0-9]+:[0-9]+" "$1"
}

start=$(next_start)
for f in /etc/subuid /etc/subgid; do
  if ! has_range "$f"; then
    echo "$name:$start:65536" >>"$f" || die "cannot write $f"
    chmod 0644 "$f"
  fi
done

# Tests of rootless networking (slirp4netns, the tap inside the netns) open /dev/net/tun as the
# unprivileged user; most distributions ship it 0666, some minimal images 0600.
if [ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
  chmod 0666 /dev/net/tun
fi
# The same for /dev/fuse: fuse-overlayfs (rootlessrt run --overlay fuse) opens it as the user.
if [ -c /dev/fuse ] && [ "$(stat -c %a /dev/fuse)" != 666 ]; then
  chmod 0666 /dev/fuse
fi

echo "$uid"
