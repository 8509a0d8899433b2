#!/bin/bash
# root-setup/t-full.sh setup|teardown DIR UID GID: (root) the small filesystem t-full.sh fills:
# a tmpfs at DIR/full, 16 MiB and 2048 inodes, owned by the test user (mode 0700), so that the
# runtime, run as that user, finds its --root and its image store on a disk it can fill.
# DIR/env names it. teardown: unmounts it (lazily when a leftover still holds it).
set -u
action=$1 dir=$2 uid=$3 gid=$4

case $action in
setup)
  mkdir -m 0755 "$dir/full" || exit 1
  mount -t tmpfs -o "size=16m,nr_inodes=2048,uid=$uid,gid=$gid,mode=0700" rrt-full "$dir/full" ||
    {
      echo "root-setup/t-full: cannot mount a tmpfs at $dir/full" >&2
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
  echo "usage: t-full.sh setup|teardown DIR UID GID" >&2
  exit 1
  ;;
esac
