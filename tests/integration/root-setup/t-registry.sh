#!/bin/bash
# root-setup/t-registry.sh setup|teardown DIR UID GID: (root) a small disk for t-registry.sh's
# full-disk pull: a tmpfs at DIR/full, 8 MiB, owned by the test user (mode 0700), for an image
# store that a 24 MiB layer cannot fit in. DIR/env names it, and FULL_RUNS: how many times the
# full-disk pull runs ($RRT_REGISTRY_FULL_RUNS, default 20). teardown: unmounts it.
set -u
# shellcheck source-path=SCRIPTDIR source=tmpfs-full.sh
source "$(dirname "$0")/tmpfs-full.sh"
if [ "${1:-}" = setup ]; then
  (tmpfs_full t-registry rrt-registry-full size=8m "$@") || exit 1
  runs=${RRT_REGISTRY_FULL_RUNS:-20}
  case $runs in '' | *[!0-9]*) runs=20 ;; esac
  echo "FULL_RUNS=$runs" >>"$2/env"
  exit 0
fi
tmpfs_full t-registry rrt-registry-full size=8m "$@"
