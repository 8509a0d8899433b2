#!/bin/bash
# t-confine.sh: every process-confinement field of config.json changes what the container really
# has, as rrt-probe reports it from inside: the five capability sets, NoNewPrivs and Seccomp,
# rlimits, umask, open fds (--preserve-fds, LISTEN_FDS/LISTEN_PID), cwd, user and groups,
# oomScoreAdj, and seccomp profiles (errno, kill, argument filters, podman's default profile and
# the compiled-filter cache). Failing configs must fail clearly and leave nothing behind.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

CONFINE_DIR=$TESTS_DIR/confine

# One bundle; each case rewrites its config.json from the pristine one.
b=$(mkbundle cf rrt-probe caps)
base_cfg=$T_WORK/base-config.json
cp "$b/config.json" "$base_cfg" || bail_out "cannot save the base config"
# The default rootless capabilities (what every case starts from).
default_caps=$(jq -c .process.capabilities "$base_cfg")
[ "$default_caps" != null ] || bail_out "the base config has no process.capabilities"

# with_cfg FILTER [JQ-OPTIONS...] -- ARGS...: config = base | .process.args = ARGS | FILTER.
with_cfg() {
  local filter=$1 args
  shift
  local -a jqopts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    jqopts+=("$1")
    shift
  done
  shift
  args=$("$PY" -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@") || return 1
  jq "${jqopts[@]}" --argjson args "$args" "(.process.args = \$args) | $filter" "$base_cfg" \
    >"$b/config.json"
}

# crun FILTER [JQ-OPTIONS...] -- ARGS...: `run` of the bundle with that config; out/err/rc as run.
# RUN_OPTS (an array) goes between `run` and `-b`. $cid is the container id used.
RUN_OPTS=()
cid=""
crun() {
  with_cfg "$@" || bail_out "cannot write $b/config.json"
  cid=$(new_id cf)
  run rrt run "${RUN_OPTS[@]}" -b "$b" "$cid"
}

caps_of() { awk -v k="$1:" '$1 == k {print $2}' <<<"$2"; }
# capmask NAME...: the 16-hex-digit mask /proc/PID/status shows for those capabilities.
capmask() {
  local m=0 n
  for n in "$@"; do
    case $n in
      CAP_CHOWN) m=$((m | 1 << 0)) ;;
      CAP_KILL) m=$((m | 1 << 5)) ;;
      CAP_SETPCAP) m=$((m | 1 << 8)) ;;
      CAP_NET_BIND_SERVICE) m=$((m | 1 << 10)) ;;
      CAP_NET_RAW) m=$((m | 1 << 13)) ;;
      CAP_SYS_ADMIN) m=$((m | 1 << 21)) ;;
      CAP_AUDIT_WRITE) m=$((m | 1 << 29)) ;;
      *) bail_out "capmask: add $n" ;;
    esac
  done
  printf '%016x\n' "$m"
}

# failed_create NAME ERE FILTER [JQ-OPTIONS...]: `create` with that config fails (the config is
# refused before any process exists), its message matches ERE, and nothing is left behind.
failed_create() {
  local name=$1 ere=$2 filter=$3 id
  shift 3
  with_cfg "$filter" "$@" -- rrt-probe sleep 100 || bail_out "cannot write $b/config.json"
  id=$(new_id bad)
  run rrt create -b "$b" "$id"
  isnt "$rc" 0 "$name: create fails"
  like "$err" "$ere" "$name: the error says why"
  nothing_left "$id" "$b" "$name: nothing left behind"
  rrt delete -f "$id" >/dev/null 2>&1 # when create wrongly succeeded: keep the next checks clean
}

# failed_run NAME ERE FILTER [JQ-OPTIONS...]: `run` with that config fails (at create or when the
# process is set up), with a message matching ERE, and leaves nothing behind.
failed_run() {
  local name=$1 ere=$2 filter=$3 id
  shift 3
  with_cfg "$filter" "$@" -- rrt-probe exit 0 || bail_out "cannot write $b/config.json"
  id=$(new_id bad)
  run rrt run -b "$b" "$id"
  isnt "$rc" 0 "$name: run fails"
  like "$err" "$ere" "$name: the error says why"
  nothing_left "$id" "$b" "$name: nothing left behind"
  rrt delete -f "$id" >/dev/null 2>&1
}

# ---------------------------------------------------------------- capabilities

crun . -- rrt-probe caps
is "$rc" 0 "run rrt-probe caps with the default rootless capabilities"
want=$(capmask CAP_AUDIT_WRITE CAP_KILL CAP_NET_BIND_SERVICE)
is "$(caps_of CapBnd "$out"):$(caps_of CapPrm "$out"):$(caps_of CapEff "$out")" "$want:$want:$want" \
  "default: bounding, permitted and effective are exactly the configured three"
is "$(caps_of CapInh "$out")" 0000000000000000 "default: inheritable is empty (not asked for)"
is "$(caps_of CapAmb "$out")" 0000000000000000 "default: ambient is empty"

# Each set on its own changes what the process has. A non-root user, so that permitted and
# effective are not widened to the bounding set by the kernel's root rules at execve.
crun '.process.user = {uid: 1000, gid: 1000} | .process.capabilities = {
  bounding: ["CAP_CHOWN", "CAP_NET_RAW", "CAP_SETPCAP"],
  permitted: ["CAP_CHOWN", "CAP_NET_RAW"], effective: ["CAP_CHOWN", "CAP_NET_RAW"],
  inheritable: ["CAP_CHOWN", "CAP_NET_RAW"], ambient: ["CAP_CHOWN", "CAP_NET_RAW"]}' -- rrt-probe caps
is "$rc" 0 "uid 1000 with all five sets"
two=$(capmask CAP_CHOWN CAP_NET_RAW)
is "$(caps_of CapBnd "$out")" "$(capmask CAP_CHOWN CAP_NET_RAW CAP_SETPCAP)" "bounding exactly as configured"
is "$(caps_of CapPrm "$out")" "$two" "permitted exactly as configured"
is "$(caps_of CapEff "$out")" "$two" "effective exactly as configured"
is "$(caps_of CapInh "$out")" "$two" "inheritable exactly as configured"
is "$(caps_of CapAmb "$out")" "$two" "ambient exactly as configured"

crun '.process.user = {uid: 1000, gid: 1000} | .process.capabilities = {
  bounding: ["CAP_CHOWN", "CAP_NET_RAW"], permitted: ["CAP_CHOWN", "CAP_NET_RAW"],
  effective: ["CAP_NET_RAW"], inheritable: ["CAP_CHOWN", "CAP_NET_RAW"], ambient: ["CAP_NET_RAW"]}' \
  -- rrt-probe caps
is "$(caps_of CapAmb "$out")" "$(capmask CAP_NET_RAW)" "a smaller ambient set: only CAP_NET_RAW"
is "$(caps_of CapEff "$out")" "$(capmask CAP_NET_RAW)" "effective follows it (non-root execve keeps the ambient ones)"
is "$(caps_of CapInh "$out")" "$two" "inheritable still both"

# Root with noNewPrivileges: the kernel cannot widen permitted past what the runtime set.
crun '.process.capabilities = {bounding: ["CAP_KILL", "CAP_SETPCAP"], permitted: ["CAP_KILL"],
  effective: ["CAP_KILL"]}' -- rrt-probe caps
is "$(caps_of CapBnd "$out"):$(caps_of CapPrm "$out"):$(caps_of CapEff "$out"):$(caps_of CapInh "$out")" \
  "$(capmask CAP_KILL CAP_SETPCAP):$(capmask CAP_KILL):$(capmask CAP_KILL):0000000000000000" \
  "root: a bounding capability left out of permitted is not granted"

crun 'del(.process.capabilities)' -- rrt-probe caps
is "$rc:$(caps_of CapBnd "$out"):$(caps_of CapEff "$out")" "0:0000000000000000:0000000000000000" \
  "no process.capabilities: every set is empty"

# config.md: a capability name that cannot be mapped is logged as a warning; the runtime goes on.
crun '.process.capabilities = {bounding: ["CAP_KILL", "CAP_FOO"], permitted: ["CAP_KILL"],
  effective: ["CAP_KILL", "12"], ambient: ["CAP_NOT_A_CAP"]}' -- rrt-probe caps
is "$rc:$(caps_of CapBnd "$out"):$(caps_of CapEff "$out")" "0:$(capmask CAP_KILL):$(capmask CAP_KILL)" \
  "unknown capability names: the container runs with the known ones"
has_line "$err" 'warning: process\.capabilities\.bounding\[1\]: unknown capability CAP_FOO' \
  "unknown capability names: a warning names the entry"
has_line "$err" 'warning: process\.capabilities\.effective\[1\]: unknown capability 12' \
  "a bare number is not a capability name: a warning"

# buildah (podman build) lists ambient capabilities with no inheritable set: the capability is
# not raised and the RUN step runs. As with crun, nothing on stderr (buildah and runc's bats read
# it as the container's output; it came after the seccomp filter, to its notify agent): a note in
# the --log file.
amb_log=$T_WORK/ambient.log
RUN_OPTS=() # the global --log goes before the verb
with_cfg '.process.capabilities = {bounding: ["CAP_CHOWN", "CAP_KILL"], permitted: ["CAP_CHOWN", "CAP_KILL"],
  effective: ["CAP_CHOWN", "CAP_KILL"], ambient: ["CAP_CHOWN", "CAP_KILL"]}' -- rrt-probe caps ||
  bail_out "cannot write $b/config.json"
run rrt --log "$amb_log" run -b "$b" "$(new_id cf)"
is "$rc:$(caps_of CapEff "$out"):$(caps_of CapAmb "$out")" "0:$(capmask CAP_CHOWN CAP_KILL):0000000000000000" \
  "ambient without inheritable: runs, nothing raised"
is "$err" "" "ambient without inheritable: nothing on stderr (--log given)"
has_line "$(cat "$amb_log" 2>/dev/null)" 'warning: process\.capabilities\.ambient\[0\]: CAP_CHOWN .*not raised' \
  "ambient without inheritable: the --log file names the capability"
run rrt run -b "$b" "$(new_id cf)"
is "$rc:$err" "0:" "ambient without inheritable: nothing on stderr (no --log either)"

# --privileged under podman rootless: the container shares podman's user namespace, whose
# bounding set may lack a listed capability. Like runc and crun, create refuses, naming it;
# without that, the container started silently with fewer capabilities.
if ! unshare -Ur setpriv --bounding-set -sys_resource -- true >/dev/null 2>&1; then
  skip "unshare -Ur setpriv --bounding-set is not available here" 3
else
  with_cfg '.linux.namespaces |= map(select(.type != "user")) |
    del(.linux.uidMappings, .linux.gidMappings) |
    .process.capabilities.bounding += ["CAP_SYS_RESOURCE"] |
    .process.capabilities.permitted += ["CAP_SYS_RESOURCE"] |
    .process.capabilities.effective += ["CAP_SYS_RESOURCE"]' -- rrt-probe caps ||
    bail_out "cannot write $b/config.json"
  id=$(new_id cf)
  run unshare -Ur setpriv --bounding-set -sys_resource -- "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
  is "$rc" 1 "a bounding capability the runtime lacks: run exits 1"
  like "$err" 'process\.capabilities\.bounding\[[0-9]+\]: CAP_SYS_RESOURCE is not in the runtime.s bounding set' \
    "and names the capability"
  nothing_left "$id" "$b" "a bounding capability the runtime lacks: nothing left behind"
fi

# An LSM label asked for on a kernel without that LSM: a clear error at create (this machine has
# neither AppArmor nor SELinux; where one is enabled the label is applied instead).
if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ]; then
  failed_create "apparmorProfile without AppArmor" 'process\.apparmorProfile.*AppArmor is not enabled' \
    '.process.apparmorProfile = "rootlessrt-test"'
else
  skip "AppArmor is enabled here: the error path cannot be shown" 3
fi
if [ ! -e /sys/fs/selinux/enforce ]; then
  failed_create "selinuxLabel without SELinux" 'process\.selinuxLabel.*SELinux is not enabled' \
    '.process.selinuxLabel = "system_u:system_r:container_t:s0"'
else
  skip "SELinux is enabled here: the error path cannot be shown" 3
fi

# ---------------------------------------------------------------- NoNewPrivs and Seccomp lines

crun '.process.noNewPrivileges = true' -- rrt-probe status
has_line "$out" '^NoNewPrivs:[[:space:]]+1$' "noNewPrivileges true -> NoNewPrivs: 1"
has_line "$out" '^Seccomp:[[:space:]]+0$' "no linux.seccomp -> Seccomp: 0"
crun '.process.noNewPrivileges = false' -- rrt-probe status
has_line "$out" '^NoNewPrivs:[[:space:]]+0$' "noNewPrivileges false -> NoNewPrivs: 0"
crun '.process.noNewPrivileges = false | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
  syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO"}]}' -- rrt-probe status
is "$rc" 0 "a seccomp filter without noNewPrivileges loads (while the runtime holds CAP_SYS_ADMIN)"
has_line "$out" '^Seccomp:[[:space:]]+2$' "a profile -> Seccomp: 2 (filter mode)"
has_line "$out" '^NoNewPrivs:[[:space:]]+0$' "and NoNewPrivs stays 0"

# ---------------------------------------------------------------- rlimits

crun '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 100, hard: 200},
  {type: "RLIMIT_CORE", soft: 0, hard: 0}, {type: "RLIMIT_NPROC", soft: 300, hard: 400}]' \
  -- rrt-probe rlimits
has_line "$out" '^RLIMIT_NOFILE 100 200$' "RLIMIT_NOFILE soft 100 hard 200"
has_line "$out" '^RLIMIT_CORE 0 0$' "RLIMIT_CORE 0 0"
has_line "$out" '^RLIMIT_NPROC 300 400$' "RLIMIT_NPROC 300 400"
crun '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 64, hard: 64}]' -- sh -c 'ulimit -n'
is "$out" 64 "a shell in the container sees the NOFILE limit"
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ]; then
  skip "the caller's RLIMIT_NOFILE hard limit is unlimited: nothing to exceed" 3
else
  failed_run "RLIMIT_NOFILE above the caller's hard limit" \
    "process\\.rlimits\\[0\\] \\(RLIMIT_NOFILE\\).*(above|raise).*$hard" \
    '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 10, hard: $h}]' --argjson h "$((hard + 1))"
fi
failed_run "soft above hard" 'process\.rlimits\[0\].*soft' \
  '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 200, hard: 100}]'
failed_run "unknown rlimit" 'process\.rlimits\[0\].*RLIMIT_NOPE' \
  '.process.rlimits = [{type: "RLIMIT_NOPE", soft: 1, hard: 1}]'

# ---------------------------------------------------------------- umask, cwd

crun '.process.user.umask = 63' -- rrt-probe umask
is "$out" 0077 "process.user.umask 63 -> 0077"
crun '.process.user.umask = 0' -- rrt-probe umask
is "$out" 0000 "process.user.umask 0 -> 0000"
crun 'del(.process.user.umask)' -- rrt-probe umask
is "$out" 0022 "no umask -> 0022"

crun '.process.cwd = "/tmp"' -- rrt-probe cwd
is "$out" /tmp "process.cwd /tmp"
crun '.process.cwd = "/etc/../var/tmp"' -- rrt-probe cwd
is "$out" /var/tmp "process.cwd /etc/../var/tmp -> /var/tmp"
crun '.process.cwd = "/no/such/dir"' -- rrt-probe cwd
is "$rc:$out" "0:/no/such/dir" "a missing cwd is made, read-only root or not (as runc and crun)"
failed_run "a cwd that is a file" 'process\.cwd.*/etc/passwd.*not a directory' '.process.cwd = "/etc/passwd"'

# ---------------------------------------------------------------- fds

# The caller's own fds (3..9, one a host directory) must not reach the container.
with_cfg . -- rrt-probe fds
id=$(new_id fds)
run bash -c 'exec 3</dev/null 4</etc/passwd 7</ 9>>"$1"; shift; exec timeout 30 "$@"' sh \
  "$T_WORK/fd9" "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
is "$rc:$out" "0:0 1 2" "only 0, 1, 2 reach the container, though the caller had 3, 4, 7 and 9 open"
with_cfg . -- rrt-probe fds
id=$(new_id fds)
run bash -c 'exec 3</dev/null 4</etc/passwd 5</dev/null 8</; shift; exec timeout 30 "$@"' sh \
  x "$RRT" --root "$RRT_ROOT" run --preserve-fds 2 -b "$b" "$id"
is "$rc:$out" "0:0 1 2 3 4" "--preserve-fds 2: 0 1 2 3 4, not 5 or 8"
with_cfg . -- rrt-probe env
id=$(new_id fds)
run bash -c 'exec 3</dev/null 4</dev/null; exec timeout 30 "$@"' sh \
  "$RRT" --root "$RRT_ROOT" run --preserve-fds 2 -b "$b" "$id"
has_line "$out" '^LISTEN_FDS=2$' "--preserve-fds 2 sets LISTEN_FDS=2"
has_line "$out" '^LISTEN_PID=1$' "and LISTEN_PID to the process's pid (1)"
with_cfg '.process.env += ["LISTEN_FDS=1", "LISTEN_PID=4242"]' -- rrt-probe env
id=$(new_id fds)
run bash -c 'exec 3</dev/null; exec timeout 30 "$@"' sh \
  "$RRT" --root "$RRT_ROOT" run --preserve-fds 1 -b "$b" "$id"
is "$(grep -E '^LISTEN_(FDS|PID)=' <<<"$out" | paste -sd,)" "LISTEN_FDS=1,LISTEN_PID=1" \
  "a configured LISTEN_PID is replaced by the real pid"
crun . -- rrt-probe env
no_line "$out" '^LISTEN_(FDS|PID)=' "without --preserve-fds there is no LISTEN_FDS/LISTEN_PID"

# systemd socket activation of the runtime (LISTEN_FDS, LISTEN_PID its own pid): as with runc and
# crun, fds 3.. go to the container with LISTEN_FDS, LISTEN_PID=1 and LISTEN_FDNAMES, before any
# --preserve-fds ones; LISTEN_* of process.env give way.
# activated ENV... -- ARGS...: the runtime exec'd with ENV and LISTEN_PID=its pid (unless ENV
# has one), fds 3 to 6 open.
activated() {
  local -a envs=()
  while [ "$1" != -- ]; do
    envs+=("$1")
    shift
  done
  shift
  run bash -c 'exec 3</dev/null 4</etc/passwd 5</dev/null 6</; exec timeout 30 "$@"' sh \
    env "${envs[@]}" sh -c 'export LISTEN_PID="${LISTEN_PID:-$$}"; exec "$@"' sh \
    "$RRT" --root "$RRT_ROOT" "$@"
}
with_cfg . -- rrt-probe fds
activated LISTEN_FDS=2 -- run -b "$b" "$(new_id fds)"
is "$rc:$out" "0:0 1 2 3 4" "LISTEN_FDS=2 for the runtime: the container has fds 3 and 4, not 5 or 6"
activated LISTEN_FDS=2 -- run --preserve-fds 1 -b "$b" "$(new_id fds)"
is "$rc:$out" "0:0 1 2 3 4 5" "LISTEN_FDS=2 and --preserve-fds 1: fds 3 to 5"
with_cfg '.process.env += ["LISTEN_FDS=7", "LISTEN_FDNAMES=stale"]' -- rrt-probe env
activated LISTEN_FDS=2 LISTEN_FDNAMES=web:admin -- run -b "$b" "$(new_id fds)"
is "$rc:$(grep -E '^LISTEN_' <<<"$out" | sort | paste -sd,)" \
  "0:LISTEN_FDNAMES=web:admin,LISTEN_FDS=2,LISTEN_PID=1" \
  "the container's LISTEN_FDS, LISTEN_PID=1 and LISTEN_FDNAMES are the activation's"
with_cfg . -- rrt-probe fds
activated LISTEN_FDS=2 LISTEN_PID=1 -- run -b "$b" "$(new_id fds)"
is "$rc:$out" "0:0 1 2" "LISTEN_FDS for another pid (LISTEN_PID=1 outside): no fds are passed"

# ---------------------------------------------------------------- user, groups

read -r sg_start sg_count <<<"$(subid_range /etc/subgid)"
read -r su_start su_count <<<"$(subid_range /etc/subuid)"
if [ -z "${sg_start:-}" ] || [ -z "${su_start:-}" ] || [ "${sg_count:-0}" -lt 1001 ] ||
  [ "${su_count:-0}" -lt 1001 ]; then
  skip "no subuid/subgid range of 1001+ ids for $(id -un): uid 1000 and setgroups need one" 4
else
  crun '.process.user = {uid: 1000, gid: 1000, additionalGids: [5, 6, 1000]}' -- rrt-probe ids
  is "$rc:$out" "0:uid=1000 gid=1000 euid=1000 egid=1000 groups=5,6,1000" \
    "user uid 1000, gid 1000, additionalGids 5,6,1000"
  crun '.process.user = {uid: 0, gid: 0}' -- rrt-probe ids
  is "$out" "uid=0 gid=0 euid=0 egid=0 groups=" "uid 0 without additionalGids: no supplementary groups"
  crun '.root.readonly = false | .process.user = {uid: 1000, gid: 1000}' -- rrt-probe write /etc/hostname x
  is "$out" EACCES "uid 1000 cannot write root's /etc/hostname (the uid switch is real)"
  # As runc: the cwd is entered before the user switch; one only root may enter still works.
  mkdir -p "$b/rootfs/private" && chmod 0700 "$b/rootfs/private" || bail_out "cannot make private/"
  crun '.process.user = {uid: 1000, gid: 1000} | .process.cwd = "/private"' -- rrt-probe cwd
  is "$rc:$out" "0:/private" "a cwd only root may enter, as uid 1000: entered before the switch"
  rmdir "$b/rootfs/private"
fi
failed_run "an unmapped uid" 'process\.user\.uid 4000000000' '.process.user = {uid: 4000000000, gid: 0}'

# podman's --group-add keep-groups (every distrobox): the annotation run.oci.keep_original_groups
# keeps the runtime's supplementary groups (devices reached through video or kvm stay
# reachable); its gid is 0 inside, the others are unmapped: the overflow gid.
want=""
overflow=$(cat /proc/sys/kernel/overflowgid)
for g in $(id -G); do
  [ "$g" = "$(id -g)" ] && g=0 || g=$overflow
  want=${want:+$want,}$g
done
crun '.annotations["run.oci.keep_original_groups"] = "1" | .process.user = {uid: 0, gid: 0}' -- \
  rrt-probe ids
is "$rc:$(sed -n 's/.*groups=//p' <<<"$out" | tr ',' '\n' | sort -n | paste -sd,)" \
  "0:$(tr ',' '\n' <<<"$want" | sort -n | paste -sd,)" \
  "run.oci.keep_original_groups=1: the runtime's groups are kept ($(id -G) -> $want)"
# podman 4.3 sends additionalGids too with --userns=keep-id (the image's /etc/group): the list
# is ignored and the groups kept, as crun does (a refusal stopped every distrobox).
crun '.annotations["run.oci.keep_original_groups"] = "1" | .process.user = {uid: 0, gid: 0,
  additionalGids: [5, 4000000000]}' -- rrt-probe ids
is "$rc:$(sed -n 's/.*groups=//p' <<<"$out" | tr ',' '\n' | sort -n | paste -sd,)" \
  "0:$(tr ',' '\n' <<<"$want" | sort -n | paste -sd,)" \
  "keep_original_groups with additionalGids [5, 4000000000]: the list ignored, the groups kept"

# ---------------------------------------------------------------- oomScoreAdj

cur=$(cat /proc/self/oom_score_adj)
up=$((cur + 100 > 1000 ? 1000 : cur + 100))
crun '.process.oomScoreAdj = $v' --argjson v "$up" -- rrt-probe cat /proc/self/oom_score_adj
is "$rc:$out" "0:$up" "oomScoreAdj raised from $cur to $up"
if [ "$cur" -le -1000 ]; then
  skip "oom_score_adj is already -1000: nothing lower to ask for" 3
else
  down=$((cur - 100 < -1000 ? -1000 : cur - 100))
  crun '.process.oomScoreAdj = $v' --argjson v "$down" -- rrt-probe cat /proc/self/oom_score_adj
  is "$rc" 0 "oomScoreAdj lowered to $down: the container still runs"
  like "$err" "warning.*oomScoreAdj.*$down" "with a warning naming process.oomScoreAdj"
  is "$out" "$cur" "and the score is left at $cur"
fi
failed_run "oomScoreAdj out of range" 'process\.oomScoreAdj' '.process.oomScoreAdj = 1001'

# In a pid namespace another container holds (Docker's --pid container:X, a pod) init is not
# dumpable, nor is exec's process: neither can open its own /proc/self/oom_score_adj from inside
# the user namespace (the file is root's of the runtime's), so it is written before (issue 28).
hold_b=$(mkbundle oomhold rrt-probe sleep 100)
hold_id=$(new_id oomhold)
run rrt run -d -b "$hold_b" "$hold_id"
hold_pid=$(state_field "$hold_id" .pid)
if [ "$rc" != 0 ] || [ -z "$hold_pid" ]; then
  fail "oomScoreAdj in a joined pid namespace: the container holding it runs" "$err"
else
  crun '.process.oomScoreAdj = $v | .linux.namespaces |= map(select(.type != "user" and
    .type != "pid")) + [{type: "user", path: "/proc/\($p)/ns/user"},
    {type: "pid", path: "/proc/\($p)/ns/pid"}] | del(.linux.uidMappings, .linux.gidMappings)' \
    --argjson v "$up" --arg p "$hold_pid" -- rrt-probe cat /proc/self/oom_score_adj
  is "$rc:$out" "0:$up" "oomScoreAdj $up in another container's user and pid namespaces"
  [ "$rc" = 0 ] || diag "$err"
  jq --argjson v "$up" '.process | .args = ["cat", "/proc/self/oom_score_adj"] |
    .oomScoreAdj = $v' "$hold_b/config.json" >"$T_WORK/oom-process.json" ||
    bail_out "cannot write the exec process"
  run rrt exec --process "$T_WORK/oom-process.json" "$hold_id"
  is "$rc:$out" "0:$up" "exec --process with oomScoreAdj $up"
  [ "$rc" = 0 ] || diag "$err"
fi
rrt delete -f "$hold_id" >/dev/null 2>&1
nothing_left "$hold_id" "$hold_b" "oomScoreAdj in a joined pid namespace: nothing left"

# ---------------------------------------------------------------- seccomp

# With a writable root so that an allowed mkdir succeeds and a refused one is seccomp's doing.
crun '.root.readonly = false | .linux.seccomp = $p[0]' --slurpfile p "$CONFINE_DIR/deny-mkdir.json" \
  -- sh -c 'rrt-probe syscall mkdir; rrt-probe syscall getpid; mkdir /tmp/d 2>&1; echo "mkdir $?"'
is "$(sed -n 1,2p <<<"$out" | paste -sd,)" "EPERM,ok" "deny-mkdir: mkdir fails with EPERM, getpid works"
has_line "$out" '^mkdir 1$' "busybox mkdir fails under it"
crun '.root.readonly = false' -- rrt-probe syscall mkdir
is "$out" ok "without the profile mkdir works"

# SCMP_ACT_NOTIFY: listenerPath is a host path, connected before init pivots; the agent gets
# the listener fd and the containerProcessState, then closes it: a notified mkdir fails ENOSYS.
agent_sock=$T_WORK/agent.sock
"$PY" "$CONFINE_DIR/notify-agent.py" "$agent_sock" "$T_WORK/agent.out" &
agent=$!
wait_until 10 test -e "$T_WORK/agent.out.ready"
crun '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerPath: $s,
  listenerMetadata: "rrt-test", syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_NOTIFY"}]}' \
  --arg s "$agent_sock" -- sh -c 'rrt-probe syscall mkdir; rrt-probe syscall getpid'
wait "$agent"
is "$(paste -sd, <<<"$out")" "ENOSYS,ok" "notify: the agent closed the listener, the notified mkdir fails ENOSYS"
has_line "$(cat "$T_WORK/agent.out" 2>/dev/null)" '^fds=1$' "notify: the agent received one fd (the listener)"
like "$(tail -n 1 "$T_WORK/agent.out" 2>/dev/null)" '"fds": \["seccompFd"\].*"metadata": "rrt-test".*"state": \{.*"id": "'"$cid"'"' \
  "notify: containerProcessState with fds, metadata and the container's state"

# listenerPath and no SCMP_ACT_NOTIFY rule (issue 27, item 5): the agent still gets its one
# connection, the state and a listener, as with crun; it is never left waiting for nothing.
rm -f "$agent_sock" "$T_WORK/agent.out" "$T_WORK/agent.out.ready"
"$PY" "$CONFINE_DIR/notify-agent.py" "$agent_sock" "$T_WORK/agent.out" &
agent=$!
wait_until 10 test -e "$T_WORK/agent.out.ready"
crun '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerPath: $s, listenerMetadata: "m2"}' \
  --arg s "$agent_sock" -- rrt-probe syscall getpid
is "$rc:$out" "0:ok" "listenerPath without a notify rule: the process runs"
wait_until 10 test -s "$T_WORK/agent.out"
kill "$agent" 2>/dev/null
wait "$agent" 2>/dev/null
has_line "$(cat "$T_WORK/agent.out" 2>/dev/null)" '^fds=1$' "listenerPath without a notify rule: the agent is connected to and gets a listener"
like "$(tail -n 1 "$T_WORK/agent.out" 2>/dev/null)" '"metadata": "m2".*"state": \{.*"id": "'"$cid"'"' \
  "and the containerProcessState with its metadata and the container's state"

# A syscall newer than every one the profile names gets ENOSYS, not the default errno (issue 27,
# item 5; runc's patchbpf): podman's profile with the default EPERM (its own defaultErrnoRet is
# ENOSYS already). One below the highest it names keeps EPERM. A profile that allows by default
# has no such check: a syscall the kernel lacks is its ENOSYS anyway.
crun '.linux.seccomp = ($p[0] | del(.defaultErrnoRet))' --slurpfile p "$CONFINE_DIR/podman-default.json" \
  -- sh -c 'rrt-probe rawsyscall 1000; rrt-probe rawsyscall 248; true'
is "$rc:$(paste -sd, <<<"$out")" "0:ENOSYS,EPERM" \
  "default EPERM: syscall 1000 (newer than the profile) gets ENOSYS, add_key (248, unlisted, older) EPERM"
crun '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["getpid"], action: "SCMP_ACT_ERRNO"}]}' \
  -- sh -c 'rrt-probe rawsyscall 1000; rrt-probe rawsyscall 39; rrt-probe rawsyscall 110; true'
is "$(paste -sd, <<<"$out")" "ENOSYS,EPERM,ok" \
  "default ALLOW: syscall 1000 is the kernel's ENOSYS, getpid refused, getppid (above it) runs"

crun '.linux.seccomp = $p[0]' --slurpfile p "$CONFINE_DIR/kill-getpid.json" -- rrt-probe syscall getpid
is "$rc" 159 "kill-getpid: the process dies of SIGSYS, run exits 128+31"
is "$out" "" "and prints nothing (it died in the syscall)"
nothing_left "$cid" "$b" "a process killed by seccomp leaves nothing behind"
crun '.linux.seccomp = $p[0]' --slurpfile p "$CONFINE_DIR/kill-getpid.json" -- rrt-probe syscall mkdir
is "$rc" 1 "kill-getpid: other syscalls are allowed (mkdir reaches the read-only root)"

crun '.linux.seccomp = $p[0]' --slurpfile p "$CONFINE_DIR/arg-socket.json" \
  -- sh -c 'rrt-probe syscall socket; rrt-probe syscall socket-unix; rrt-probe rawsyscall 41 10 1 0'
is "$(paste -sd, <<<"$out")" "EACCES,ok,EAFNOSUPPORT" \
  "arg filter: socket(AF_INET) -> EACCES (errnoRet 13), AF_UNIX allowed, AF_INET6 hits the MASKED_EQ rule"

crun '.root.readonly = false | .linux.seccomp = $p[0]' --slurpfile p "$CONFINE_DIR/podman-default.json" \
  -- sh -c 'set -e; echo hello | tr a-z A-Z; ls / | grep -c . >/dev/null; mkdir -p /tmp/pd/x;
    echo data >/tmp/pd/x/f; cat /tmp/pd/x/f; rm -r /tmp/pd; sleep 0.1; n=0; while [ $n -lt 3 ];
    do n=$((n + 1)); done; echo "loop $n"; rrt-probe status | grep Seccomp;
    rrt-probe rawsyscall 248 || true; rrt-probe syscall chroot || true'
is "$rc" 0 "podman's default profile: busybox sh runs a script"
is "$(sed -n 1,3p <<<"$out" | paste -sd,)" "HELLO,data,loop 3" "pipes, files and loops work under it"
has_line "$out" '^Seccomp:[[:space:]]+2$' "the filter is loaded"
has_line "$out" '^ENOSYS$' "a syscall it does not list (add_key) gets defaultErrnoRet 38 (ENOSYS)"
has_line "$out" '^EPERM$' "one it refuses explicitly (chroot) gets EPERM"
has_line "$err" 'warning.*rrt_future_syscall_a' "an unknown syscall name is skipped with a warning"
has_line "$err" 'warning.*rrt_future_syscall_b' "each one named"
no_line "$err" 'error' "and nothing worse"

failed_run "an unknown seccomp action" 'linux\.seccomp.*SCMP_ACT_NOPE' \
  '.linux.seccomp = {defaultAction: "SCMP_ACT_NOPE"}'
failed_run "an unknown comparison" 'linux\.seccomp.*SCMP_CMP_NOPE' \
  '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["socket"],
    action: "SCMP_ACT_ERRNO", args: [{index: 0, value: 2, op: "SCMP_CMP_NOPE"}]}]}'

# ---------------------------------------------------------------- sysctls against the names

# kernel.hostname and kernel.domainname are what hostname and domainname set: a sysctl that says
# otherwise is refused at create, in one line naming the key (issue 27, item 5). One that says
# the same, or either key without its field (Docker's --domainname), passes the check.
failed_create "kernel.hostname against hostname" \
  '^rootlessrt: linux\.sysctl "kernel\.hostname": "other" contradicts hostname "rootlessrt" \(set one of them\)$' \
  '.hostname = "rootlessrt" | .linux.sysctl = {"kernel.hostname": "other"}'
failed_create "kernel.domainname against domainname" \
  '^rootlessrt: linux\.sysctl "kernel\.domainname": "foo" contradicts domainname "bar" \(set one of them\)$' \
  '.domainname = "bar" | .linux.sysctl = {"kernel.domainname": "foo"}'
# (Taken, they are written as any sysctl: rootless the kernel refuses the write, /proc/sys/kernel
# being the host root's; the unit test test_sysctl checks which are taken.)

# ---------------------------------------------------------------- the seccomp filter cache

# The cache directory is the runtime's choice; look for the compiled filters wherever it may be.
cache_files() {
  find "$RRT_ROOT" "$(dirname "$RRT_ROOT")/.$(basename "$RRT_ROOT").private" \
    "${XDG_CACHE_HOME:-$HOME/.cache}/rootlessrt" "${XDG_RUNTIME_DIR:-/nonexistent}" \
    -name '*.bpf' -type f 2>/dev/null | sort
}
before=$(cache_files)
# podman's profile with one more rule: a profile no earlier case of this file compiled.
cache_filter='.linux.seccomp = ($p[0] | .syscalls += [{names: ["getpgrp"], action: "SCMP_ACT_ALLOW"}])'
crun "$cache_filter" --slurpfile p "$CONFINE_DIR/podman-default.json" -- rrt-probe status
after=$(cache_files)
new_files=$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | grep .)
if [ -z "$new_files" ]; then
  skip "no seccomp cache directory is wired (no *.bpf file appeared under --root or ~/.cache)" 6
else
  is "$(wc -l <<<"$new_files")" 1 "one compiled filter is cached for podman's profile"
  f=$new_files
  with_cfg "$cache_filter" --slurpfile p "$CONFINE_DIR/podman-default.json" -- rrt-probe status
  cid=$(new_id cache)
  run rrt --debug run -b "$b" "$cid"
  has_line "$out" '^Seccomp:[[:space:]]+2$' "the second run with the same profile loads the filter"
  has_line "$err" 'cache hit' "from the cache (debug: cache hit)"
  printf 'garbage' >"$f"
  crun "$cache_filter" --slurpfile p "$CONFINE_DIR/podman-default.json" -- rrt-probe rawsyscall 248
  is "$rc:$out" "1:ENOSYS" "a damaged cache file is recompiled: the filter still works"
  like "$err" 'warning.*seccomp cache' "with a warning"
  crun '.linux.seccomp = ($p[0] | .syscalls += [{names: ["getppid"], action: "SCMP_ACT_ALLOW"}])' \
    --slurpfile p "$CONFINE_DIR/podman-default.json" -- rrt-probe status
  is "$(comm -13 <(printf '%s\n' "$after") <(cache_files) | grep -c .)" 1 \
    "another profile gets a cache file of its own"
fi

nothing_left "$cid" "$b" "nothing left behind at the end"
done_testing
