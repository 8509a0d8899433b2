#!/bin/bash
# root-setup/t-full.sh setup|teardown DIR UID GID: (root) the small filesystem t-full.sh fills:
# a tmpfs at DIR/full, 16 MiB and 2048 inodes, owned by the test user (mode 0700), so that the
# runtime, run as that user, finds its --root and its image store on a disk it can fill.
# DIR/env names it. teardown: unmounts it (lazily when a leftover still holds it).
set -u
# shellcheck source-path=SCRIPTDIR source=tmpfs-full.sh
source "$(dirname "$0")/tmpfs-full.sh"
tmpfs_full t-full rrt-full size=16m,nr_inodes=2048 "$@"
