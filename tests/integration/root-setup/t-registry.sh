#!/bin/bash
# root-setup/t-registry.sh setup|teardown DIR UID GID: (root) a small disk for t-registry.sh's
# full-disk pull: a tmpfs at DIR/full, 8 MiB, owned by the test user (mode 0700), for an image
# store that a 24 MiB layer cannot fit in. DIR/env names it. teardown: unmounts it.
set -u
action=$1 dir=$2 uid=$3 gid=$4

case $action in
setup)
  mkdir -m 0755 "$dir/full" || exit 1
  mount -t tmpfs -o "size=8m,uid=$uid,gid=$gid,mode=0700" rrt-registry-full "$dir/full" || {
    echo "root-setup/t-registry: cannot mount a tmpfs at $dir/full" >&2
    exit 1
  }
  echo "FULL_FS=$dir/full" >"$dir/env"
  chmod 0644 "$dir/env"
  ;;
teardown)
  if mountpoint -q "$dir/full"; then
    umount "$dir/full" 2>/dev/null || umount -l "$dir/full"
  fi
  exit 0
  ;;
*)
  echo "usage: t-registry.sh setup|teardown DIR UID GID" >&2
  exit 1
  ;;
esac
