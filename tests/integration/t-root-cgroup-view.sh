#!/bin/bash
# t-root-cgroup-view.sh: the /sys/fs/cgroup real root's container sees without a cgroup namespace
# (runc's default spec as root, what Docker uses on v1 and hybrid hosts): each hierarchy shows
# the container's own cgroup only, as runc and crun bind it: its own limits, no other container's
# cgroup, none of the host's totals, the unified hierarchy likewise; read-only; nothing mounted
# on the host after delete. With a cgroup namespace the view stays rooted at its own cgroup.
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

real_root || {
  skip "not real root: this file is for the real-root paths" 1
  done_testing
}
v1_memory=$(awk '$9 == "cgroup" && $5 == "/sys/fs/cgroup/memory" {print $5; exit}' /proc/self/mountinfo)
unified=$(awk '$9 == "cgroup2" && ($5 == "/sys/fs/cgroup/unified" || $5 == "/sys/fs/cgroup") {print $5; exit}' /proc/self/mountinfo)

# A neighbour: another container running beside the one that looks.
nb=$(rootbundle neighbour rrt-probe sleep 1000)
cfg "$nb" '.linux.namespaces |= map(select(.type != "cgroup"))' || bail_out "cannot edit $nb/config.json"
nid=$(new_id neighbour)
run rrt run -d -b "$nb" "$nid"
is "$rc" 0 "a neighbour container runs"
[ "$rc" = 0 ] || diag "$err"

# What the looking container prints: the directories under each hierarchy it sees, every name
# in its view that contains the neighbour's id, its limit and usage, the unified hierarchy's
# processes, and the cgroup mount seen at each point (the last one listed there) with its root.
look='for d in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [ -d "$d" ] && echo "dirs $d $(find "$d" -mindepth 1 -type d | wc -l)"; done
  echo "neighbour: $(find /sys/fs/cgroup -name "*$1*" | wc -l)"
  [ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ] && echo "limit $(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"
  [ -e /sys/fs/cgroup/memory/memory.usage_in_bytes ] && echo "usage $(cat /sys/fs/cgroup/memory/memory.usage_in_bytes)"
  [ -e /sys/fs/cgroup/unified/cgroup.procs ] && echo "unified procs $(cat /sys/fs/cgroup/unified/cgroup.procs | tr "\n" " ")"
  awk '"'"'$5 ~ "^/sys/fs/cgroup" {seen[$5] = $0} END {for (p in seen) print "seen " seen[p]}'"'"' /proc/self/mountinfo'
host_usage=$(cat /sys/fs/cgroup/memory/memory.usage_in_bytes 2>/dev/null)

# view NAME WHAT JQ: a container without a cgroup namespace, its config edited by JQ, looks.
view() {
  local name=$1 what=$2 b id usage o
  b=$(rootbundle "$name" sh -c "$look" sh "$nid")
  cfg "$b" '.linux.namespaces |= map(select(.type != "cgroup")) | .linux.resources.memory = {limit: 67108864} | '"$3" ||
    bail_out "cannot edit $b/config.json"
  id=$(new_id "$name")
  run rrt run -b "$b" "$id"
  is "$rc" 0 "$what: run"
  [ "$rc" = 0 ] || diag "$err"
  o=$out # ok below runs a command of its own
  has_line "$o" '^seen .* - cgroup2? ' "$what: cgroup hierarchies are there"
  no_line "$o" '^dirs /sys/fs/cgroup/[^ ]+/ [1-9]' "$what: no cgroup under any hierarchy it sees (its own has none)"
  is "$(sed -n 's/^neighbour: //p' <<<"$o")" 0 "$what: nothing of the neighbour container"
  no_line "$o" '^seen [0-9]+ [0-9]+ [0-9:]+ / [^ ]+ [^ ]* - cgroup2? ' "$what: no hierarchy's root is mounted"
  no_line "$o" '^seen [0-9]+ [0-9]+ [0-9:]+ [^ ]+ [^ ]+ rw' "$what: every cgroup mount read-only"
  if [ -n "$v1_memory" ]; then
    has_line "$o" '^limit 67108864$' "$what, v1 memory: memory.limit_in_bytes is the container's limit"
    usage=$(sed -n 's/^usage //p' <<<"$o")
    ok "$what, v1 memory: memory.usage_in_bytes is the container's ($usage), not the host's total ($host_usage)" \
      test "${usage:-0}" -gt 0 -a "${usage:-0}" -lt 67108864 -a "${usage:-0}" -lt "${host_usage:-0}"
  else
    skip "no cgroup v1 memory hierarchy on this host" 2
  fi
  if [ "$unified" = /sys/fs/cgroup/unified ]; then
    # In its pid namespace the container's own cgroup holds its init (pid 1) and what it runs.
    has_line "$o" '^unified procs 1 ' "$what, the unified hierarchy: the container's own cgroup (its init, pid 1)"
    has_line "$o" '^seen [0-9]+ [0-9]+ [0-9:]+ /[^ ]+ /sys/fs/cgroup/unified [^ ]* - cgroup2 ' \
      "$what, the unified hierarchy: bound at the container's cgroup"
  elif [ "$unified" = /sys/fs/cgroup ]; then
    has_line "$o" '^seen [0-9]+ [0-9]+ [0-9:]+ /[^ ]+ /sys/fs/cgroup [^ ]* - cgroup2 ' \
      "$what, cgroup2: bound at the container's cgroup"
    skip "a cgroup2-only host: no unified hierarchy beside v1 ones" 1
  else
    skip "no cgroup2 mount on this host" 2
  fi
  nothing_left "$id" "$b"
}

# runc's default spec: sysfs, and a cgroup mount on /sys/fs/cgroup.
runc_mounts='.mounts |= map(select(.destination != "/sys" and .destination != "/sys/fs/cgroup")) +
  [{destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"]},
   {destination: "/sys/fs/cgroup", type: "cgroup", source: "cgroup", options: ["nosuid", "noexec", "nodev", "relatime", "ro"]}]'
view runc-spec "runc's mounts" "$runc_mounts"
# The rootless default's rbind of the host's /sys (the hierarchies come with it).
view sys-rbind "an rbind of /sys" '.'

# The config asks for a cgroup2 mount (hybrid host): the unified hierarchy's own cgroup alone.
if [ "$unified" = /sys/fs/cgroup/unified ]; then
  b=$(rootbundle view2 sh -c 'find /sys/fs/cgroup -mindepth 1 -type d | wc -l; grep -E " - cgroup2? " /proc/self/mountinfo')
  cfg "$b" '.linux.namespaces |= map(select(.type != "cgroup")) | .mounts |= map(select(.destination != "/sys/fs/cgroup")) +
    [{destination: "/sys/fs/cgroup", type: "cgroup2", source: "cgroup", options: ["nosuid", "noexec", "nodev", "ro"]}]' ||
    bail_out "cannot edit $b/config.json"
  id=$(new_id view2)
  run rrt run -b "$b" "$id"
  is "$rc:$(head -n 1 <<<"$out")" "0:0" "type cgroup2, no cgroup namespace: no cgroup under it"
  has_line "$out" '^[0-9]+ [0-9]+ [0-9:]+ /[^ ]+ /sys/fs/cgroup ro[^ ]* - cgroup2 ' \
    "type cgroup2, no cgroup namespace: the unified hierarchy bound at the container's cgroup"
  nothing_left "$id" "$b"
else
  skip "not a hybrid host" 3
fi

# A cgroup2-only host: cgroup2 mounted at /sys/fs/cgroup over the hybrid layout, in a private
# mount namespace (as t-root-cgroup.sh does): the container's own cgroup of it bound there.
b=$(rootbundle v2host sh -c 'find /sys/fs/cgroup -mindepth 1 -type d | wc -l; echo "procs $(tr "\n" " " </sys/fs/cgroup/cgroup.procs)"
  awk '"'"'$5 == "/sys/fs/cgroup" {l = $0} END {print "seen " l}'"'"' /proc/self/mountinfo')
cfg "$b" '.linux.namespaces |= map(select(.type != "cgroup")) | '"$runc_mounts" || bail_out "cannot edit $b/config.json"
id=$(new_id v2host)
run env B="$b" ID="$id" unshare -m --propagation private sh -c '
  mount -t cgroup2 none /sys/fs/cgroup || exit 99
  "$@" run -b "$B" "$ID"' sh "$RRT" --root "$RRT_ROOT"
if [ "$rc" = 99 ]; then
  skip "cannot mount cgroup2 in a private mount namespace" 4
else
  is "$rc:$(head -n 1 <<<"$out")" "0:0" "a cgroup2 host, no cgroup namespace: no cgroup under the one it sees"
  has_line "$out" '^procs 1 ' "a cgroup2 host: that is the container's own (its init, pid 1)"
  has_line "$out" '^seen [0-9]+ [0-9]+ [0-9:]+ /[^ ]+ /sys/fs/cgroup ro[^ ]* - cgroup2 ' \
    "a cgroup2 host: its own cgroup bound at /sys/fs/cgroup, read-only"
  nothing_left "$id" "$b"
fi

# With a cgroup namespace: rooted at its own cgroup (mounted anew), nothing of the neighbour.
b=$(rootbundle cgns sh -c "$look" sh "$nid")
cfg "$b" '.linux.resources.memory = {limit: 67108864} | '"$runc_mounts" || bail_out "cannot edit $b/config.json"
id=$(new_id cgns)
run rrt run -b "$b" "$id"
is "$rc" 0 "cgroup namespace: run"
no_line "$out" '^dirs /sys/fs/cgroup/[^ ]+/ [1-9]' "cgroup namespace: no cgroup under any hierarchy it sees"
is "$(sed -n 's/^neighbour: //p' <<<"$out")" 0 "cgroup namespace: nothing of the neighbour container"
if [ -n "$v1_memory" ]; then
  has_line "$out" '^limit 67108864$' "cgroup namespace, v1 memory: its own limit"
else
  skip "no cgroup v1 memory hierarchy on this host" 1
fi
nothing_left "$id" "$b"

rrt delete -f "$nid" >/dev/null 2>&1
nothing_left "$nid" "$nb"
is "$(grep -c "$T_WORK" /proc/self/mountinfo)" 0 "nothing of this test is mounted on the host"

done_testing
