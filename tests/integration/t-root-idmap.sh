#!/bin/bash
# t-root-idmap.sh: idmapped mounts (config.md: idmap, ridmap, a mount's uid/gidMappings) as real
# root, the way Kubernetes' user-namespaced pods and podman --userns=auto use them: a volume owned
# by host ids shows as the container's own ids inside a user-namespaced container, and what the
# container writes there gets the host's ids back; without idmap the same volume shows unmapped
# owners (nobody). t-idmap.sh is the unprivileged side (a clear refusal).
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

N=15
owners='stat -c "%u:%g" /vol /vol/f; touch /vol/made-inside; mkdir -p /vol/sub/deep'

if ! real_root; then
  skip "idmapped mounts of a host filesystem need real root; this runs as uid $(id -u) (t-idmap.sh checks the refusal)" "$N"
  done_testing
fi

# A user-namespaced container: container 0..65535 -> host 300000..365535.
base=300000
usermap='[{"containerID": 0, "hostID": 300000, "size": 65536}]'
vol=$T_WORK/vol
mkdir -p "$vol"
echo data >"$vol/f"
chown 0:0 "$vol" "$vol/f"
b=$(mkbundle idm sh -c "$owners")
cfg "$b" '.linux.namespaces |= (map(select(.type != "user")) + [{"type": "user"}])
  | .linux.uidMappings = $m | .linux.gidMappings = $m
  | .mounts += [{"destination": "/vol", "source": $v, "type": "bind", "options": ["bind", "idmap"]}]' \
  --argjson m "$usermap" --arg v "$vol"
chown -R "$base:$base" "$b/rootfs"

id=$(new_id idm)
run rrt run -b "$b" "$id"
is "$rc" 0 "idmap with the container's mapping: the container runs" || diag "$err"
is "$out" $'0:0\n0:0' "idmap: host root's volume shows as the container's root (0:0), not nobody"
is "$(stat -c %u:%g "$vol/made-inside")" 0:0 \
  "idmap: a file the container's root creates is host root's on the host (0:0)"
is "$(stat -c %u:%g "$vol/sub/deep")" 0:0 "idmap: so is a directory it makes"
is "$(state_left "$id")" "" "idmap: nothing of the container is left after the run"

# The same volume without idmap: the container sees host root as unmapped (nobody), and cannot
# write there.
rm -rf "$vol/made-inside" "$vol/sub"
cfg "$b" '.mounts |= map(if .destination == "/vol" then .options = ["bind"] else . end)'
run rrt run -b "$b" "$(new_id plain)"
like "$out" '^65534:65534' "without idmap: the same volume shows unmapped owners (65534)"
[ ! -e "$vol/made-inside" ]
is "$?" 0 "without idmap: the container's root cannot create a file in host root's directory"

# The mount's own mappings (as Kubernetes passes them): host uid/gid 4242 -> the container's 0.
rm -rf "$vol/made-inside" "$vol/sub"
chown 4242:4343 "$vol" "$vol/f"
cfg "$b" '.mounts |= map(if .destination == "/vol" then .options = ["bind", "idmap"]
    | .uidMappings = [{"containerID": 4242, "hostID": 300000, "size": 1}]
    | .gidMappings = [{"containerID": 4343, "hostID": 300000, "size": 1}] else . end)'
run rrt run -b "$b" "$(new_id own)"
is "$rc" 0 "uid/gidMappings of the mount: the container runs" || diag "$err"
is "$out" $'0:0\n0:0' "uid/gidMappings: host 4242:4343 shows as the container's 0:0"
is "$(stat -c %u:%g "$vol/made-inside")" 4242:4343 \
  "uid/gidMappings: what the container's root creates is 4242:4343 on the host"

# ridmap on an rbind: the submount is idmapped too; idmap on an rbind only maps the top.
rm -rf "$vol/made-inside" "$vol/sub"
chown 0:0 "$vol" "$vol/f"
mkdir -p "$vol/sub"
sub=$T_WORK/subsrc
mkdir -p "$sub"
touch "$sub/g"
mount --bind "$sub" "$vol/sub"
cfg "$b" '.process.args = ["sh", "-c", "stat -c %u /vol/sub/g"]
  | .mounts |= map(if .destination == "/vol" then .options = ["rbind", "ridmap"]
    | del(.uidMappings, .gidMappings) else . end)'
run rrt run -b "$b" "$(new_id rid)"
is "$out" 0 "ridmap on an rbind: the submount is idmapped too (0)" || diag "$err"
cfg "$b" '.mounts |= map(if .destination == "/vol" then .options = ["rbind", "idmap"] else . end)'
run rrt run -b "$b" "$(new_id rtop)"
is "$out" 65534 "idmap on an rbind: the submount keeps its own (unmapped) owners" || diag "$err"
umount "$vol/sub"

# Errors: idmap without any mapping and no user namespace; on a non-bind mount.
nb=$(rootbundle noun true)
cfg "$nb" '.mounts += [{"destination": "/vol", "source": $v, "type": "bind",
  "options": ["bind", "idmap"]}]' --arg v "$vol"
id=$(new_id nouserns)
run rrt create -b "$nb" "$id"
fails_naming 'mounts\[[0-9]+\] \(/vol\): idmap: no uidMappings and gidMappings' \
  "idmap without mappings in a container without a user namespace is an error"
is "$(state_left "$id")" "" "that create leaves no state"
cfg "$b" '.process.args = ["true"] | .mounts += [{"destination": "/t", "type": "tmpfs",
  "source": "tmpfs", "options": ["idmap"]}] | .mounts |= map(select(.destination != "/vol"))'
run rrt run -b "$b" "$(new_id tmpfs)"
fails_naming 'only a bind mount .* can be idmapped' "idmap on a tmpfs is refused, saying why"

done_testing
