#!/bin/bash
# t-root.sh: what real root's containers must not do to the host, each written as the attack:
# namespaced sysctls without the namespace (the host's value written), a cgroup namespace made
# before init is in its cgroup, writable cgroup v1 hierarchies, bind sources and devices root's
# user namespace cannot reach (issue 11). As real root only (run-integration
# runs this file as root); as anyone else every check skips with the reason.
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

if ! real_root; then
  skip "not real root: these checks are about containers of the host's root" 1
  done_testing
fi

# refused NAME ERE BUNDLE: `run` fails with a message matching ERE, nothing left.
refused() {
  local id
  id=$(new_id)
  run rrt run -b "$3" "$id"
  isnt "$rc" 0 "$1: refused"
  like "$err" "$2" "$1: the error names the sysctl and the missing namespace"
  nothing_left "$id" "$3" "$1: nothing left behind"
  rrt delete -f "$id" >/dev/null 2>&1
}

# ---------------------------------------------------------------- sysctls (issue 11, item 1)

host_mq=$(cat /proc/sys/fs/mqueue/queues_max)
host_ping=$(cat /proc/sys/net/ipv4/ping_group_range)
host_shm=$(cat /proc/sys/kernel/shm_rmid_forced)
host_name=$(cat /proc/sys/kernel/hostname)
new_mq=$((host_mq == 100 ? 101 : 100))

b=$(rootbundle sysctl-ipc rrt-probe cat /proc/sys/fs/mqueue/queues_max)
cfg "$b" '.linux.namespaces |= map(select(.type != "ipc")) | .linux.sysctl = {"fs.mqueue.queues_max": $v}' \
  --arg v "$new_mq" || bail_out "cannot edit $b/config.json"
refused "fs.mqueue.* without an ipc namespace" 'fs\.mqueue\.queues_max.*no ipc namespace' "$b"
cfg "$b" '.linux.sysctl = {"kernel.shm_rmid_forced": "1"}' || bail_out "cannot edit $b/config.json"
refused "kernel.shm* without an ipc namespace" 'kernel\.shm_rmid_forced.*no ipc namespace' "$b"
# Joining the host's own ipc namespace by path is no namespace of its own either.
cfg "$b" '.linux.namespaces += [{type: "ipc", path: "/proc/1/ns/ipc"}] | .linux.sysctl = {"fs.mqueue.queues_max": $v}' \
  --arg v "$new_mq" || bail_out "cannot edit $b/config.json"
refused "fs.mqueue.* in the host's ipc namespace joined by path" \
  'fs\.mqueue\.queues_max.*no ipc namespace.*joined by path' "$b"

b=$(rootbundle sysctl-net rrt-probe cat /proc/sys/net/ipv4/ping_group_range)
cfg "$b" '.linux.namespaces |= map(select(.type != "network")) | .linux.sysctl = {"net.ipv4.ping_group_range": "0 0"}' ||
  bail_out "cannot edit $b/config.json"
refused "net.* without a network namespace" 'net\.ipv4\.ping_group_range.*no network namespace' "$b"

b=$(rootbundle sysctl-uts rrt-probe hostname)
cfg "$b" '.linux.namespaces |= map(select(.type != "uts")) | del(.hostname) | .linux.sysctl = {"kernel.hostname": "pwned"}' ||
  bail_out "cannot edit $b/config.json"
refused "kernel.hostname without a uts namespace" 'kernel\.hostname.*no uts namespace' "$b"

b=$(rootbundle sysctl-host rrt-probe cat /proc/sys/kernel/core_pattern)
cfg "$b" '.linux.sysctl = {"kernel.core_pattern": "|/bin/pwned"}' || bail_out "cannot edit $b/config.json"
refused "a sysctl of no namespace (kernel.core_pattern)" 'kernel\.core_pattern.*not a namespaced sysctl' "$b"

is "$(cat /proc/sys/fs/mqueue/queues_max)" "$host_mq" "the host's fs.mqueue.queues_max is unchanged"
is "$(cat /proc/sys/net/ipv4/ping_group_range)" "$host_ping" "the host's net.ipv4.ping_group_range is unchanged"
is "$(cat /proc/sys/kernel/shm_rmid_forced)" "$host_shm" "the host's kernel.shm_rmid_forced is unchanged"
is "$(cat /proc/sys/kernel/hostname)" "$host_name" "the host's hostname is unchanged"

# With the namespaces, the same sysctls are set inside and only there.
b=$(rootbundle sysctl-ok sh -c 'cat /proc/sys/fs/mqueue/queues_max /proc/sys/net/ipv4/ping_group_range')
cfg "$b" '.linux.sysctl = {"fs.mqueue.queues_max": $v, "net/ipv4/ping_group_range": "0 0"}' --arg v "$new_mq" ||
  bail_out "cannot edit $b/config.json"
id=$(new_id)
run rrt run -b "$b" "$id"
is "$rc:$(tr '\t\n' ' ;' <<<"$out")" "0:$new_mq;0 0;" "with ipc and network namespaces the sysctls apply inside"
is "$(cat /proc/sys/fs/mqueue/queues_max)" "$host_mq" "and the host's fs.mqueue.queues_max is still unchanged"

# ---------------------------------------------------------------- cgroups (issue 11, items 3, 4)

# mkdir in every cgroup hierarchy the container sees: a new cgroup under the host's root (or a
# release_agent write) is the classic v1 escape. Prints "DIR ERROR" per hierarchy.
mkdir_attack='for d in /sys/fs/cgroup /sys/fs/cgroup/*/; do
  n=${d%/}/rrt-attack-$1
  if mkdir "$n" 2>/dev/null; then echo "$d WROTE"; rmdir "$n"; else echo "$d $(rrt-probe write "$n/x" y)"; fi
done'

# With a cgroup namespace, made after init joined its cgroup: the container's cgroup is its root.
# On a v1 or hybrid host each hierarchy is mounted anew (rooted at the container's cgroup in it);
# the unified one is at /sys/fs/cgroup/unified then.
b=$(rootbundle cgns sh -c 'grep "^0::" /proc/self/cgroup; d=/sys/fs/cgroup
  [ -d $d/unified ] && d=$d/unified; find $d -mindepth 1 -maxdepth 1 -type d | wc -l
  grep -E " - cgroup2? " /proc/self/mountinfo
  [ -d /sys/fs/cgroup/memory ] && echo "memory: $(find /sys/fs/cgroup/memory -mindepth 1 -type d | wc -l)"')
cfg "$b" '.mounts |= map(select(.destination != "/sys/fs/cgroup")) +
  [{destination: "/sys/fs/cgroup", type: "cgroup", source: "cgroup", options: ["nosuid", "noexec", "nodev", "ro"]}]' ||
  bail_out "cannot edit $b/config.json"
id=$(new_id cgns)
run rrt run -b "$b" "$id"
is "$rc" 0 "cgroup namespace: run"
[ "$rc" = 0 ] || diag "$err"
is "$(head -n 1 <<<"$out")" "0::/" "cgroup namespace: the container's own cgroup is its root (0::/)"
is "$(sed -n 2p <<<"$out")" "0" "cgroup namespace: its cgroup2 view shows no cgroup above or beside its own"
has_line "$out" ' - cgroup2? ' "cgroup namespace: cgroup hierarchies are mounted"
no_line "$out" '^[0-9]+ [0-9]+ [0-9:]+ [^ ]+ [^ ]+ rw' "cgroup namespace, ro: every one read-only"
if grep -q ' - cgroup .*memory' /proc/self/mountinfo && [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
  has_line "$out" '^memory: 0$' "cgroup namespace: the v1 memory hierarchy is rooted at the container's cgroup"
else
  skip "no cgroup v1 memory hierarchy on this host" 1
fi
nothing_left "$id" "$b"

# No "ro" written: the container's own hierarchies (rooted at its cgroup) are read-write, as
# mount(8) and runc read a missing "ro".
# The last mount at a path is the one seen (the host's under the /sys rbind are hidden).
b=$(rootbundle cgns-rw sh -c 'awk '"'"'$5 ~ "^/sys/fs/cgroup" {split($6, f, ","); m[$5] = f[1]}
  END {for (p in m) print m[p]}'"'"' /proc/self/mountinfo | sort -u')
cfg "$b" '.mounts |= map(select(.destination != "/sys/fs/cgroup")) +
  [{destination: "/sys/fs/cgroup", type: "cgroup", source: "cgroup", options: ["nosuid", "noexec", "nodev"]}]' ||
  bail_out "cannot edit $b/config.json"
id=$(new_id cgns-rw)
run rrt run -b "$b" "$id"
[ "$rc" = 0 ] || diag "$err"
is "$rc:$(paste -sd ' ' <<<"$out")" "0:rw" "cgroup namespace, no ro: its cgroup mounts are read-write"
nothing_left "$id" "$b"

# The same mount without a cgroup namespace, no "ro" asked: the host's hierarchy roots, which
# stay read-only for real root whatever the options say (a warning says so), every hierarchy
# under it. The container's root has CAP_DAC_OVERRIDE, as docker's default gives it.
b=$(rootbundle cgro sh -c "$mkdir_attack; grep -E ' - cgroup2? ' /proc/self/mountinfo" sh "$$")
cfg "$b" '.process.capabilities |= with_entries(.value += ["CAP_DAC_OVERRIDE"]) |
  .linux.namespaces |= map(select(.type != "cgroup")) | .mounts |= map(select(.destination != "/sys/fs/cgroup")) +
  [{destination: "/sys/fs/cgroup", type: "cgroup", source: "cgroup", options: ["nosuid", "noexec", "nodev"]}]' ||
  bail_out "cannot edit $b/config.json"
id=$(new_id cgro)
run rrt run -b "$b" "$id"
is "$rc" 0 "cgroup v1 hierarchies: run (an attack on each)"
[ "$rc" = 0 ] || diag "$err"
like "$err" 'the host.s cgroup hierarchies stay read-only' "cgroup v1 hierarchies: a warning says they stay read-only"
has_line "$out" '^/sys/fs/cgroup/[a-z_=]+/ ' "cgroup v1 hierarchies: the container sees some"
no_line "$out" 'WROTE|ok$' "cgroup v1 hierarchies: no new cgroup anywhere (each read-only)"
no_line "$out" '^[0-9]+ [0-9]+ [0-9:]+ [^ ]+ [^ ]+ rw' "cgroup v1 hierarchies: every cgroup mount inside is read-only"
escaped=$(find /sys/fs/cgroup -maxdepth 2 -name "rrt-attack-$$" 2>/dev/null)
is "$escaped" "" "cgroup v1 hierarchies: nothing made on the host"
for d in $escaped; do rmdir "$d"; done
nothing_left "$id" "$b"

# ---------------------------------------------------------------- root with a user namespace (item 6)

# The container's root is host uid 200000: it cannot enter a directory only host root may, nor
# mknod. The runtime opens the bind source and makes the nodes; init gets them as mounts.
priv=$T_WORK/root-only
mkdir -p "$priv/inner" && chmod 0700 "$priv" && echo secret-data >"$priv/inner/data" ||
  bail_out "cannot make $priv"
b=$(mkbundle userns-root sh -c 'cat /mnt/data; ls -ln /dev/rrt-null /dev/rrt-full | awk "{print \$1, \$3, \$4}"
  echo x >/dev/rrt-null && echo wrote-null; head -n 1 /proc/self/uid_map')
mkdir -p "$b/rootfs/mnt"
cfg "$b" '.linux.uidMappings = [{containerID: 0, hostID: 200000, size: 65536}] |
  .linux.gidMappings = [{containerID: 0, hostID: 200000, size: 65536}] |
  .linux.devices = [{path: "/dev/rrt-null", type: "c", major: 1, minor: 3, fileMode: 416, uid: 0, gid: 0},
                    {path: "/dev/rrt-full", type: "c", major: 1, minor: 7, fileMode: 438, uid: 1000, gid: 5}] |
  .mounts += [{destination: "/mnt", type: "bind", source: $src, options: ["bind", "ro"]}]' \
  --arg src "$priv/inner" || bail_out "cannot edit $b/config.json"
id=$(new_id userns-root)
run rrt run -b "$b" "$id"
is "$rc" 0 "root, user namespace: run"
[ "$rc" = 0 ] || diag "$err"
has_line "$out" '^ +0 +200000 +65536$' "root, user namespace: the container's root is host uid 200000"
has_line "$out" '^secret-data$' "root, user namespace: a bind source under a root-only directory is mounted"
has_line "$out" '^crw-r----- 0 0$' "root, user namespace: linux.devices node made with its mode and owner"
has_line "$out" '^crw-rw-rw- 1000 5$' "root, user namespace: a second node, owned by container ids 1000:5"
has_line "$out" '^wrote-null$' "root, user namespace: the node is the device (1:3)"
is "$(find "$RRT_ROOT" "$(dirname "$RRT_ROOT")/.$(basename "$RRT_ROOT").private" -name '.devices-*' 2>/dev/null)" "" "root, user namespace: the runtime's node directory is gone"
nothing_left "$id" "$b"
# Creates killed at many instants (some while the nodes are in their directory), each deleted
# with --force: the next create that makes nodes removes what the killed ones left.
id=$(new_id userns-killed)
dur=$(kill_after -1 "$RRT" --root "$RRT_ROOT" create -b "$b" "$id")
rrt delete -f "$id" >/dev/null 2>&1
[[ $dur =~ ^[0-9]+$ ]] || dur=30000
for ((i = 0; i < 12; i++)); do
  id=$(new_id userns-killed)
  kill_after $((dur * i / 12)) "$RRT" --root "$RRT_ROOT" create -b "$b" "$id" >/dev/null
  rrt delete -f "$id" >/dev/null 2>&1
done
id=$(new_id userns-root)
run rrt run -b "$b" "$id"
is "$(find "$RRT_ROOT" "$(dirname "$RRT_ROOT")/.$(basename "$RRT_ROOT").private" -name '.devices-*' 2>/dev/null)" "" \
  "root, user namespace: no node directory of a killed create is left after the next run"

# --network slirp: the resolv.conf in the state directory (root's, 0700) reaches init the same way.
b_net=$(mkbundle userns-slirp sh -c 'cat /etc/resolv.conf; echo x >>/etc/resolv.conf || echo refused')
touch "$b_net/rootfs/etc/resolv.conf"
cfg "$b_net" '.linux.uidMappings = [{containerID: 0, hostID: 200000, size: 65536}] |
  .linux.gidMappings = [{containerID: 0, hostID: 200000, size: 65536}]' || bail_out "cannot edit $b_net/config.json"
id=$(new_id userns-slirp)
run rrt run --network slirp -b "$b_net" "$id"
is "$rc" 0 "root, user namespace, slirp: run"
[ "$rc" = 0 ] || diag "$err"
has_line "$out" '^nameserver 10\.0\.2\.3$' "root, user namespace, slirp: /etc/resolv.conf is the state directory's"
has_line "$out" '^refused$' "root, user namespace, slirp: and not writable"
nothing_left "$id" "$b_net"

# A state root on a nodev filesystem (/run usually is): the nodes still open.
nodev=$T_WORK/nodev-root
mkdir -p "$nodev"
id=$(new_id userns-nodev)
run unshare -m --propagation private sh -c 'mount -t tmpfs -o nodev,mode=0700 tmpfs "$1" || exit 99
  shift; exec "$@"' sh "$nodev" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$nodev/state" run -b "$b" "$id"
if [ "$rc" = 99 ]; then
  skip "cannot mount a tmpfs in a private mount namespace" 1
else
  has_line "$out" '^wrote-null$' "root, user namespace: nodes made under a nodev state root work"
fi

# ---------------------------------------------------------------- --no-pivot (issue 21)

# Real root without a user namespace: --no-pivot detaches the host's /proc and /sys (nothing
# locks them), so a nested user namespace finds no fully visible proc to mount another from.
b=$(rootbundle nopivot-proc rrt-probe nested-proc)
cfg "$b" '.process.capabilities |= with_entries(.value += ["CAP_SETFCAP"])' ||
  bail_out "cannot edit $b/config.json"
id=$(new_id nopivot-proc)
run rrt run --no-pivot -b "$b" "$id"
is "$out" EPERM "root, --no-pivot: a nested user namespace cannot mount proc"
nothing_left "$id" "$b"
has_line "$(awk '$9 == "proc" {print $5}' /proc/self/mountinfo)" '^/proc$' \
  "root, --no-pivot: the host's /proc is still mounted on the host"

done_testing
