#!/bin/bash
# t-root-cgroup-engines.sh: real root on a legacy or hybrid host, as Docker drives it: the
# blockIO.weight 0 and cpu.shares 0 it sends with every container are not written (this kernel
# may have no blkio.weight), `docker update --memory` (cpu period and quota 0: unchanged) and
# runc's update flags, all or nothing; kill 0; delete --force of a paused container.
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

N=47
need_cgroup_v1 "$N" memory cpu cpuset freezer
top=rrt-te-$$
trap 'remove_v1_tree "$top"; _cleanup' EXIT

b=$(rootbundle ce rrt-probe sleep 1000)
cfg "$b" '.linux.resources = {"blockIO": {"weight": 0}, "cpu": {"shares": 0},
                        "memory": {"limit": 67108864}}
  | .linux.cgroupsPath = $p' --arg p "/$top/docker"
d=$top/docker
id=$(new_id docker)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "run -d with Docker's blockIO.weight 0 and cpu.shares 0"
[ "$rc" = 0 ] || diag "$err"
is "$(cat "$V1/memory/$d/memory.limit_in_bytes" 2>/dev/null)" 67108864 "the real limit beside them is written"
is "$(cat "$V1/cpu/$d/cpu.shares" 2>/dev/null)" 1024 "cpu.shares 0 is not written (the kernel's 1024 stays)"
if awk '$9 == "cgroup" && $5 == "/sys/fs/cgroup/systemd" {f = 1} END {exit !f}' /proc/self/mountinfo; then
  has_line "$(cat "$V1/systemd/$d/cgroup.procs" 2>/dev/null)" "^$(state_field "$id" .pid)\$" \
    "init is at the path in the name=systemd hierarchy too (as runc and crun put it)"
else
  skip "no name=systemd hierarchy at $V1/systemd" 1
fi

# docker update --memory: the shim sends cpu period and quota 0, meaning unchanged.
printf '{"memory": {"limit": 134217728}, "cpu": {"period": 0, "quota": 0}}' >"$T_WORK/u.json"
run rrt update -r "$T_WORK/u.json" "$id"
is "$rc" 0 "update of memory with cpu period and quota 0"
[ "$rc" = 0 ] || diag "$err"
is "$(cat "$V1/memory/$d/memory.limit_in_bytes" 2>/dev/null)" 134217728 "memory.limit updated"
is "$(cat "$V1/cpu/$d/cpu.cfs_period_us" 2>/dev/null)/$(cat "$V1/cpu/$d/cpu.cfs_quota_us" 2>/dev/null)" \
  "100000/-1" "cpu period and quota unchanged"

run rrt update --memory 96m --cpu-share 512 "$id"
is "$rc" 0 "update --memory 96m --cpu-share 512 (runc's flags)"
[ "$rc" = 0 ] || diag "$err"
is "$(cat "$V1/memory/$d/memory.limit_in_bytes" 2>/dev/null):$(cat "$V1/cpu/$d/cpu.shares" 2>/dev/null)" \
  "100663296:512" "both written"

# All or nothing: cpuset.cpus 9999 is refused by the kernel after memory.limit was written.
run rrt update --memory 32m --cpu-share 256 --cpuset-cpus 9999 "$id"
fails_naming 'cpu\.cpus' "an update the kernel refuses part of fails, naming that part"
is "$(cat "$V1/memory/$d/memory.limit_in_bytes" 2>/dev/null):$(cat "$V1/cpu/$d/cpu.shares" 2>/dev/null)" \
  "100663296:512" "and the limits written before it are back to their old values"

run rrt kill "$id" 0
is "$rc" 0 "kill ID 0 of a running container"
[ "$rc" = 0 ] || diag "$err"

# exec --cgroup (runc's form): into a sub-cgroup that exists, in every hierarchy or the named ones.
for dir in "$V1"/*/"$d"; do mkdir -p "$dir/sub"; done
# A v1 cpuset cgroup starts with no cpus and mems: it takes no process until they are set.
cat "$V1/cpuset/$d/cpuset.cpus" >"$V1/cpuset/$d/sub/cpuset.cpus"
cat "$V1/cpuset/$d/cpuset.mems" >"$V1/cpuset/$d/sub/cpuset.mems"
run rrt exec --cgroup sub "$id" rrt-probe cat /proc/self/cgroup
like "$out" "memory:(/$d)?/sub" "exec --cgroup sub: the process is in the sub-cgroup" || diag "$err"
run rrt exec --cgroup memory:sub "$id" rrt-probe cat /proc/self/cgroup
like "$out" "memory:(/$d)?/sub" "exec --cgroup memory:sub: in memory's sub-cgroup" || diag "$err"
unlike "$out" ":cpu,cpuacct:(/$d)?/sub" "exec --cgroup memory:sub: not in cpu's"
run rrt exec --cgroup nosuch "$id" true
exec_fails_naming 'exec: --cgroup "nosuch": no sub-cgroup' "exec --cgroup of a missing sub-cgroup is an error"
run rrt exec --cgroup ../up "$id" true
exec_fails_naming 'exec: --cgroup "\.\./up": \.\./up is not a sub cgroup path' "exec --cgroup with .. is refused"
# runc's suite: "/" and "memory:/" are the container's own cgroup, "/sub" is sub; a controller
# the container has no cgroup of is an error.
memcg() { grep ':memory:' <<<"$out" | cut -d: -f3; }
run rrt exec --cgroup / "$id" rrt-probe cat /proc/self/cgroup
is "$rc" 0 "exec --cgroup /: runs" || diag "$err"
like "$(memcg)" "^(/$d|/)$" "exec --cgroup /: in the container's own cgroup"
run rrt exec --cgroup memory:/ "$id" rrt-probe cat /proc/self/cgroup
is "$rc" 0 "exec --cgroup memory:/: runs" || diag "$err"
like "$(memcg)" "^(/$d|/)$" "exec --cgroup memory:/: in the container's own memory cgroup"
run rrt exec --cgroup /sub "$id" rrt-probe cat /proc/self/cgroup
like "$(memcg)" "^(/$d)?/sub$" "exec --cgroup /sub: in the sub-cgroup" || diag "$err"
run rrt exec --cgroup whaaat:/ "$id" true
exec_fails_naming 'exec: --cgroup "whaaat:/": unknown controller "whaaat"' \
  "exec --cgroup of an unknown controller is an error naming it"

run rrt delete -f "$id"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- delete --force when paused
cfg "$b" '.linux.resources = {} | .linux.cgroupsPath = $p' --arg p "/$top/paused"
d=$top/paused
id=$(new_id paused)
run rrt run -d -b "$b" "$id"
init=$(state_field "$id" .pid)
run rrt pause "$id"
is "$rc" 0 "pause"
is "$(cat "$V1/freezer/$d/freezer.state" 2>/dev/null)" FROZEN "frozen"
run rrt delete --force "$id"
is "$rc" 0 "delete --force of a paused container succeeds"
[ "$rc" = 0 ] || diag "$err"
unlike "$err" 'did not die' "without a frozen init that 'did not die'"
ok "its init is gone" bash -c '! test -d /proc/$1 || grep -q "^State:.*Z" /proc/$1/status' sh "${init:-0}"
is "$(find "$V1" -path "*/$top/paused" 2>/dev/null)" "" "and its cgroup in every controller"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- a frozen cgroup
# Taken, init would never run and create would wait on it: refused, as runc does.
mkdir -p "$V1/freezer/$top/frozen"
echo FROZEN >"$V1/freezer/$top/frozen/freezer.state"
cfg "$b" '.linux.cgroupsPath = $p' --arg p "/$top/frozen"
id=$(new_id frozen)
run rrt run -d -b "$b" "$id"
fails_naming "container's cgroup unexpectedly frozen" "run -d into a frozen cgroup is refused at once, naming it"
nothing_left "$id" "$b"
echo THAWED >"$V1/freezer/$top/frozen/freezer.state"

# ---------------------------------------------------------------- rootless on cgroup v1
# A sub-tree of each v1 hierarchy made the user's (as runc's rootless tests do): an unprivileged
# container at that cgroupsPath uses it, limits and freezer included.
user=${RRT_TEST_USER:-rrt-test}
if ! u=$(id -u "$user" 2>/dev/null) || ! g=$(id -g "$user" 2>/dev/null); then
  skip "no user $user to run an unprivileged container as" 6
else
  ud=$top/user
  for c in memory pids freezer; do
    mkdir -p "$V1/$c/$ud"
    chown -R "$u:$g" "$V1/$c/$ud"
  done
  ub=$(mkbundle ceu rrt-probe sleep 1000)
  cfg "$ub" '.linux.uidMappings = [{"containerID": 0, "hostID": $u, "size": 1}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": $g, "size": 1}]
    | .linux.resources = {"pids": {"limit": 30}} | .linux.cgroupsPath = $p' \
    --arg p "/$ud" --argjson u "$u" --argjson g "$g"
  chown -R "$u:$g" "$ub"
  uroot=$T_WORK/uroot
  mkdir -p "$uroot"
  chown "$u:$g" "$uroot"
  # shellcheck disable=SC2317 # called through run
  urrt() {
    setpriv "--reuid=$u" "--regid=$g" --init-groups --reset-env \
      env PATH=/usr/local/bin:/usr/bin:/bin "$RRT" --root "$uroot" "$@"
  }
  uid_id=$(new_id user)
  run urrt run -d -b "$ub" "$uid_id"
  is "$rc" 0 "an unprivileged run -d at a cgroupsPath whose v1 cgroups are the user's"
  [ "$rc" = 0 ] || diag "$err"
  uinit=$(jq -r .pid "$uroot/$uid_id/state.json" 2>/dev/null)
  has_line "$(cat "$V1/pids/$ud/cgroup.procs" 2>/dev/null)" "^${uinit:-none}\$" "init is in the user's pids cgroup"
  is "$(cat "$V1/pids/$ud/pids.max" 2>/dev/null)" 30 "pids.limit is written there"
  run urrt pause "$uid_id"
  is "$rc:$(cat "$V1/freezer/$ud/freezer.state" 2>/dev/null)" 0:FROZEN "pause uses the user's v1 freezer"
  run urrt delete --force "$uid_id"
  is "$rc" 0 "delete --force of the paused unprivileged container"
  [ "$rc" = 0 ] || diag "$err"
  is "$(cat "$V1/pids/$ud/cgroup.procs" 2>/dev/null)" "" "leaves nothing in its cgroup"
fi

# ---------------------------------------------------------------- process.oomScoreAdj
# Lowering it needs CAP_SYS_RESOURCE: applied when this root has it, else an error naming it (as
# runc), never a warning and a container running at another score.
ob=$(mkbundle ceo cat /proc/self/oom_score_adj)
cfg "$ob" '.linux.namespaces |= map(select(.type != "user")) | del(.linux.uidMappings, .linux.gidMappings)
  | .process.oomScoreAdj = -998'
id=$(new_id oom)
run rrt run -b "$ob" "$id"
capeff=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
if (((0x${capeff:-0} >> 24) & 1)); then # CAP_SYS_RESOURCE is capability 24
  is "$rc:$out" "0:-998" "oomScoreAdj -998 is applied (this root has CAP_SYS_RESOURCE)"
else
  fails_naming 'process\.oomScoreAdj.*-998' "oomScoreAdj -998 this root cannot set is an error naming it"
fi
nothing_left "$id" "$ob"

# ---------------------------------------------------------------- a cgroup shared on purpose
# run.oci.rootlessrt.cgroup=shared: runc 1.1's warning instead of the refusal.
mkdir -p "$V1/pids/$top/shared"
sleep 300 &
host_pid=$!
echo "$host_pid" >"$V1/pids/$top/shared/cgroup.procs"
cfg "$b" '.linux.cgroupsPath = $p | .annotations["run.oci.rootlessrt.cgroup"] = "shared"' \
  --arg p "/$top/shared"
id=$(new_id shared)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "with run.oci.rootlessrt.cgroup=shared a cgroup holding a host process is taken"
like "$err" 'warning: .*already holds processes; shared' "with a warning saying so"
has_line "$(cat "$V1/pids/$top/shared/cgroup.procs" 2>/dev/null)" "^$(state_field "$id" .pid)\$" \
  "init is in it beside the host process"
rrt delete -f "$id" >/dev/null 2>&1
kill "$host_pid" 2>/dev/null
wait "$host_pid" 2>/dev/null
cfg "$b" '.annotations["run.oci.rootlessrt.cgroup"] = "everyone"'
id=$(new_id shared)
run rrt run -d -b "$b" "$id"
fails_naming 'run\.oci\.rootlessrt\.cgroup.*"everyone"' "any other value of the annotation is refused, naming it"
nothing_left "$id" "$b"
done_testing
