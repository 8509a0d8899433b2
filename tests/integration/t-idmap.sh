#!/bin/bash
# t-idmap.sh: idmapped mounts (config.md: idmap, ridmap) for an unprivileged user: the kernel allows
# an idmapped mount of a host filesystem only with CAP_SYS_ADMIN over the user namespace that owns
# it (real root), so the runtime refuses one with an error naming the filesystem and that
# permission, and leaves nothing; features says idmap is supported (t-root-idmap.sh: as root).
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

owners='stat -c "%u:%g" /vol'
# Rootless: the runtime names the filesystem and the permission the kernel wants.
vol=$T_WORK/vol
mkdir -p "$vol"
b=$(mkbundle rl sh -c "$owners")
cfg "$b" '.mounts += [{"destination": "/vol", "source": $v, "type": "bind",
  "options": ["bind", "idmap"]}]' --arg v "$vol"
id=$(new_id rl)
run rrt run -b "$b" "$id"
fails_naming 'idmapped mount of .*vol.*CAP_SYS_ADMIN over the user namespace that owns this [a-z0-9]+ filesystem' \
  "rootless: an idmapped bind of a host directory is refused, naming the filesystem and the permission"
is "$(state_left "$id")" "" "rootless: the refused create leaves no state"
run rrt features
is "$(jq -c '.linux.mountExtensions.idmap.enabled' <<<"$out")" true "features: idmap is enabled"

# A mount's own uid/gidMappings need a user namespace with any mapping: real root's.
cfg "$b" '.mounts |= map(if .destination == "/vol" then
  .uidMappings = [{"containerID": 0, "hostID": 0, "size": 1}]
  | .gidMappings = [{"containerID": 0, "hostID": 0, "size": 1}] else . end)'
run rrt run -b "$b" "$(new_id maps)"
fails_naming 'uidMappings and gidMappings of a mount need real root' \
  "rootless: a mount's own uid/gidMappings are refused, saying they need real root"
done_testing
