#!/bin/bash
# root-setup/t-registry.sh setup|teardown DIR UID GID: (root) a small disk for t-registry.sh's
# full-disk pull: a tmpfs at DIR/full, 8 MiB, owned by the test user (mode 0700), for an image
# store that a 24 MiB layer cannot fit in. DIR/env names it. teardown: unmounts it.
set -u
# shellcheck source-path=SCRIPTDIR source=tmpfs-full.sh
source "$(dirname "$0")/tmpfs-full.sh"
tmpfs_full t-registry rrt-registry-full size=8m "$@"
