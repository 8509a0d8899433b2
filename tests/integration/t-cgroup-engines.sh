#!/bin/bash
# t-cgroup-engines.sh: what engines send with every container asks for no limit and never fails
# it (Docker's blockIO.weight 0 and cpu.shares 0, ctr's cpu.shares 1024); a real limit that
# cannot be applied stays an error unless run.oci.rootlessrt.limits=warn; runc's update flags;
# kill with signal 0 and of a stopped container as engines expect it; run --keep.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

dir=$(own_cgroup_dir)
# Where the user has a delegated cgroup v2 with the cpu controller, cpu.shares 512 can be applied.
cpu_delegated=0
if [ -n "$dir" ] && [ -w "$dir" ] && grep -qw cpu "$dir/cgroup.controllers" 2>/dev/null; then
  cpu_delegated=1
fi

b=$(mkbundle eng rrt-probe exit 0)

# ---------------------------------------------------------------- what engines always send
cfg "$b" '.linux.resources = {"blockIO": {"weight": 0}, "cpu": {"shares": 0, "quota": 0, "period": 0}}'
id=$(new_id docker)
run rrt run -b "$b" "$id"
is "$rc" 0 "Docker's blockIO.weight 0 and cpu.shares 0 (not set) do not fail the container"
[ "$rc" = 0 ] || diag "$err"
nothing_left "$id" "$b"

cfg "$b" '.linux.resources = {"cpu": {"shares": 1024}, "pids": {"limit": -1}, "memory": {"limit": -1}}'
id=$(new_id ctr)
run rrt run -b "$b" "$id"
is "$rc" 0 "ctr's cpu.shares 1024 (the kernel's default) does not fail the container"
[ "$rc" = 0 ] || diag "$err"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- a real limit
cfg "$b" '.linux.resources = {"cpu": {"shares": 512}}'
id=$(new_id real)
run rrt run -b "$b" "$id"
if [ "$cpu_delegated" = 1 ]; then
  skip "the cpu controller is delegated to this user: cpu.shares 512 can be applied" 2
else
  fails_naming 'linux\.resources.*cpu\.shares' "a real cpu.shares that cannot be applied is an error naming it"
  nothing_left "$id" "$b"
fi
cfg "$b" '.annotations["run.oci.rootlessrt.limits"] = "warn"'
id=$(new_id warn)
run rrt run -b "$b" "$id"
is "$rc" 0 "with run.oci.rootlessrt.limits=warn the container runs"
if [ "$cpu_delegated" = 1 ]; then
  skip "the cpu controller is delegated to this user: nothing to warn about" 1
else
  like "$err" 'warning.*cpu\.shares' "and a warning names the limit not applied"
fi
nothing_left "$id" "$b"
# A memory limit where a cgroup2 mount is there but nothing of it is the user's (the common case
# on a host without a systemd user session: a hybrid host's /sys/fs/cgroup/unified with no
# controllers): the refusal says the mount is there and not delegated, and how to get it, never
# that cgroup v2 is not mounted (issue 28 item 7).
cg2_mnt=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
if [ -z "$cg2_mnt" ]; then
  skip "no cgroup2 mount on this host: nothing to call not delegated" 4
elif [ -n "$dir" ] && [ -w "$dir" ]; then
  skip "a cgroup v2 directory is delegated to this user ($dir): nothing to refuse as not delegated" 4
else
  cfg "$b" 'del(.annotations["run.oci.rootlessrt.limits"]) | .linux.resources = {"memory": {"limit": 67108864}}'
  id=$(new_id nodeleg)
  run rrt run -b "$b" "$id"
  fails_naming "cgroup2 mount $cg2_mnt is not delegated to this user.*memory\.limit.*Delegate=yes" \
    "a memory limit with cgroup2 mounted and nothing delegated: refused, the mount named as not delegated, and how to get delegation"
  is "$(wc -l <<<"$err")" 1 "... in one line"
  no_line "$err" "not mounted" "... never that cgroup v2 is not mounted"
  nothing_left "$id" "$b"
fi

cfg "$b" '.annotations["run.oci.rootlessrt.limits"] = "loud"'
id=$(new_id badann)
run rrt run -b "$b" "$id"
fails_naming 'run\.oci\.rootlessrt\.limits.*"loud"' "any other value of the annotation is refused, naming it"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- update flags
bs=$(mkbundle engs rrt-probe sleep 1000)
id=$(new_id upd)
run rrt run -d -b "$bs" "$id"
is "$rc" 0 "run -d a sleeper"
run rrt update --cpu-period 0 --cpu-quota 0 --blkio-weight 0 "$id"
is "$rc" 0 "update --cpu-period 0 --cpu-quota 0 --blkio-weight 0 (runc's flags; 0: unchanged)"
[ "$rc" = 0 ] || diag "$err"
run rrt update --memory 64q "$id"
fails_naming '--memory "64q"' "update --memory with a bad size names the flag and the value"
printf '{}' >"$T_WORK/empty.json"
run rrt update -r "$T_WORK/empty.json" --memory 64m "$id"
fails_naming '--resources and --memory cannot be combined' "--resources with a limit flag is refused"
run rrt update --pids-limit 10 "$id"
if [ -n "$dir" ] && [ -e "$dir/pids.max" ]; then
  skip "the pids controller is delegated to this user" 1
else
  fails_naming 'pids\.limit' "update --pids-limit without a cgroup is an error naming pids.limit"
fi

# ---------------------------------------------------------------- kill
run rrt kill "$id" 0
is "$rc" 0 "kill ID 0 of a running container succeeds (the liveness check)"
[ "$rc" = 0 ] || diag "$err"
is "$(status_of "$id")" running "and signals nothing"
run rrt kill "$id" KILL
wait_status "$id" stopped 10
run rrt kill "$id" 0
fails_naming 'container not running' "kill ID 0 of a stopped container fails with \"container not running\""
run rrt kill "$id" TERM
like "$err" 'container not running' "so does any other signal (the text containerd's checkKillError matches)"
run rrt update --memory 64m "$id"
fails_naming 'container not running' "update of a stopped container says it is not running"
run rrt delete "$id"
nothing_left "$id" "$bs"

# ---------------------------------------------------------------- run --keep
bk=$(mkbundle engk sh -c 'exit 3')
id=$(new_id keep)
run rrt run --keep -b "$bk" "$id"
is "$rc" 3 "run --keep exits with the container's status"
is "$(status_of "$id")" stopped "and keeps the stopped container (runc's --keep)"
run rrt delete "$id"
is "$rc" 0 "which delete then removes"
nothing_left "$id" "$bk"
run rrt run --keep -d -b "$bk" "$id"
fails_naming '--keep and --detach' "run --keep --detach is refused, saying why"
run rrt create --keep -b "$bk" "$id"
fails_naming 'create: --keep is a flag of run' "create --keep is refused"
nothing_left "$id" "$bk"
done_testing
