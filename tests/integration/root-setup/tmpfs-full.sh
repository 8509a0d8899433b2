# shellcheck shell=bash
# root-setup/tmpfs-full.sh: sourced by the root-setup scripts of the tests that fill a disk
# (t-full.sh, t-registry.sh): a small tmpfs at DIR/full owned by the test user (mode 0700),
# named in DIR/env as FULL_FS; teardown unmounts it (lazily when a leftover still holds it).

# tmpfs_full NAME SOURCE OPTIONS ACTION DIR UID GID: NAME the script (for its messages), SOURCE
# the mount's name in mountinfo, OPTIONS its size limits; ACTION DIR UID GID as the script got
# them from run-integration.sh. Exits with the script's status.
tmpfs_full() {
  local name=$1 source=$2 options=$3 action=${4:-} dir=${5:-} uid=${6:-} gid=${7:-}
  case $action in
  setup)
    mkdir -m 0755 "$dir/full" || exit 1
    mount -t tmpfs -o "$options,uid=$uid,gid=$gid,mode=0700" "$source" "$dir/full" || {
      echo "root-setup/$name: cannot mount a tmpfs at $dir/full" >&2
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
    echo "usage: $name.sh setup|teardown DIR UID GID" >&2
    exit 1
    ;;
  esac
}
