# shellcheck shell=bash disable=SC2016,SC2154 # jq filters use $vars; rc, out, err: set by run (lib.sh)
# confine-cases.sh: sourced by t-hooks-confine.sh (rootless) and t-root-hooks-confine.sh (real
# root) after lib.sh: a startContainer hook runs with exactly the confinement of `process` (issue
# 27, item 1): user, groups, capabilities, no_new_privs, rlimits and the seccomp filter, so that a
# hook the image supplies can do no more than the container's program.
#
# Before the file sources this, it defines hc_bundle NAME ARGS... (a bundle for the mode it runs
# in) and sets HC_MOUNT (the mount(8) arguments of a cgroup hierarchy an unconfined hook could
# mount there) and HC_IDS (1 when uid 1000 and setgroups can be used).

# What a hook prints on stderr reaches run's stderr as "rootlessrt: startContainer hook #0
# (PATH) stderr: LINE": hook_lines ERR prints the LINEs.
hook_lines() {
  sed -n 's/^rootlessrt: startContainer hook #0 ([^)]*) stderr: //p' <<<"$1"
}

# The report both sides print: the probe's status and capability lines and the rlimits.
HC_REPORT='rrt-probe status; rrt-probe caps; rrt-probe rlimits'

# hc_run NAME FILTER [JQ-OPTIONS...] -- ARGS...: `run` of a fresh bundle running ARGS, its config
# FILTER'd, with a startContainer hook `/bin/sh -c $HC_HOOK` (set by the caller); out/err/rc as run.
hc_run() {
  local name=$1 filter=$2 b
  local -a jqopts=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    jqopts+=("$1")
    shift
  done
  shift
  b=$(hc_bundle "$name" "$@")
  cfg "$b" "$filter | .hooks.startContainer = [{path: \"/bin/sh\", args: [\"sh\", \"-c\", \$h]}]" \
    "${jqopts[@]}" --arg h "$HC_HOOK" || bail_out "cannot edit $b/config.json"
  hc_b=$b
  hc_id=$(new_id "$name")
  run rrt run -b "$b" "$hc_id"
}

# ---------------------------------------------------------------- the same confinement

# A non-root user with a supplementary group, one capability raised (ambient, so that a non-root
# program keeps it across execve), no_new_privs, a seccomp filter and an rlimit of its own.
confined='.process.noNewPrivileges = true
  | .process.capabilities = {bounding: $c, effective: $c, permitted: $c, inheritable: ["CAP_KILL"],
      ambient: ["CAP_KILL"]}
  | .process.rlimits = [{type: "RLIMIT_NOFILE", soft: 321, hard: 432}]
  | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
      syscalls: [{names: ["chroot"], action: "SCMP_ACT_ERRNO", errnoRet: 1}]}'
caps3='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]'
if [ "$HC_IDS" = 1 ]; then
  user='.process.user = {uid: 1000, gid: 1000, additionalGids: [5]}'
  want_eff=0000000000000020 # uid 1000 keeps only the ambient CAP_KILL across execve
else
  user='.process.user = {uid: 0, gid: 0}'
  want_eff=0000000020000420
fi

HC_HOOK="{ $HC_REPORT; } >&2"
hc_run same "$user | $confined" --argjson c "$caps3" -- sh -c "$HC_REPORT"
is "$rc" 0 "run with a confined process and a startContainer hook"
[ "$rc" = 0 ] || diag "stderr: $err"
hook=$(hook_lines "$err")
is "$hook" "$out" "the hook's uid, gid, groups, capabilities, NoNewPrivs, Seccomp and rlimits are the process's"
if [ "$HC_IDS" = 1 ]; then
  has_line "$hook" '^Uid:[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000$' "the hook runs as process.user.uid 1000"
  has_line "$hook" '^Gid:[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000[[:space:]]+1000$' "with process.user.gid 1000"
  has_line "$hook" '^Groups:[[:space:]]+5[[:space:]]*$' "and additionalGids, nothing else"
else
  skip "no subuid/subgid range of 1001+ ids for $(id -un): uid 1000 and setgroups need one" 3
fi
has_line "$hook" "^CapEff:[[:space:]]+$want_eff\$" "the hook's effective set is the process's ($want_eff)"
has_line "$hook" '^CapBnd:[[:space:]]+0000000020000420$' "its bounding set is the configured three"
has_line "$hook" '^NoNewPrivs:[[:space:]]+1$' "NoNewPrivs: 1"
has_line "$hook" '^Seccomp:[[:space:]]+2$' "Seccomp: 2 (the container's filter)"
has_line "$hook" '^RLIMIT_NOFILE 321 432$' "the process's rlimits"
nothing_left "$hc_id" "$hc_b" "nothing left after a confined startContainer hook"

# Without no_new_privs the filter goes on before the capabilities are set (loading it needs
# CAP_SYS_ADMIN then): the hook comes after both, still as the process.
hc_run nonnp "$user | $confined | .process.noNewPrivileges = false" --argjson c "$caps3" -- sh -c "$HC_REPORT"
is "$rc" 0 "run with noNewPrivileges false and a startContainer hook"
is "$(hook_lines "$err")" "$out" "without noNewPrivileges too, the hook's confinement is the process's"
has_line "$(hook_lines "$err")" '^NoNewPrivs:[[:space:]]+0$' "NoNewPrivs: 0, as configured"
has_line "$(hook_lines "$err")" '^Seccomp:[[:space:]]+2$' "and the filter is on"

# Under the filter itself: a call the profile refuses is refused to the hook as to the process.
HC_HOOK='rrt-probe syscall chroot >&2; true'
hc_run filter "$confined" --argjson c "$caps3" -- rrt-probe syscall chroot
is "$rc:$out" "1:EPERM" "the process's chroot gets the profile's errno"
is "$(hook_lines "$err")" "EPERM" "so does the hook's"

# ---------------------------------------------------------------- a cgroup hierarchy

# The classic escape: a hook that mounts a cgroup hierarchy (and would write its release_agent).
# With runc's three capabilities, as root of the container and as uid 1000, the mount is refused.
HC_HOOK="mount $HC_MOUNT /tmp >&2 2>&1 && echo MOUNTED >&2 || echo REFUSED >&2"
hc_run cgroot '.process.user = {uid: 0, gid: 0} | .process.capabilities = {bounding: $c,
  effective: $c, permitted: $c}' --argjson c "$caps3" -- true
is "$rc" 0 "run: a hook that tries to mount a cgroup hierarchy (as the container's root)"
has_line "$(hook_lines "$err")" '^REFUSED$' "mount $HC_MOUNT fails in the hook (no CAP_SYS_ADMIN, as the process)"
no_line "$(hook_lines "$err")" '^MOUNTED$' "nothing was mounted"
if [ "$HC_IDS" = 1 ]; then
  hc_run cguser '.process.user = {uid: 1000, gid: 1000} | .process.capabilities = {bounding: $c,
    effective: $c, permitted: $c}' --argjson c "$caps3" -- true
  has_line "$(hook_lines "$err")" '^REFUSED$' "as uid 1000 too"
  no_line "$(hook_lines "$err")" '^MOUNTED$' "nothing mounted as uid 1000"
else
  skip "no subuid/subgid range of 1001+ ids for $(id -un)" 2
fi
nothing_left "$hc_id" "$hc_b" "nothing left after the mount attempts"

# ---------------------------------------------------------------- runc's seccomp.bats test

# "runc run [seccomp] (SCMP_ACT_KILL) startContainer hook": the filter kills the hook's mkdir, so
# start fails and the program never runs.
HC_HOOK='mkdir /tmp/made-by-hook'
hc_run kill '.root.readonly = false | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
  architectures: ["SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_X86_64"],
  syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_KILL"}]}' -- sh -c 'echo PROGRAM-RAN'
is "$rc" 1 "run fails: the filter killed the startContainer hook's mkdir"
like "$err" 'startContainer hook #0 \(/bin/sh\): error running hook: killed by signal SIGSYS \(bad system call\)' \
  "the error names the hook and SIGSYS, in runc's words too"
unlike "$out" PROGRAM-RAN "the program did not run"
ok "the hook's directory was not made" test ! -e "$hc_b/rootfs/tmp/made-by-hook"
nothing_left "$hc_id" "$hc_b" "nothing left after the killed hook"

# ---------------------------------------------------------------- the timeout, under it all

# The runtime's supervision of the hook runs under the same user and filter: the timeout still
# kills a hook that hangs, and start fails in about that time.
HC_HOOK='sleep 30'
b=$(hc_bundle timeout true)
cfg "$b" "$user | $confined | .hooks.startContainer = [{path: \"/bin/sh\", args: [\"sh\", \"-c\", \$h], timeout: 1}]" \
  --argjson c "$caps3" --arg h "$HC_HOOK" || bail_out "cannot edit $b/config.json"
id=$(new_id timeout)
t0=$SECONDS
run rrt run -b "$b" "$id"
elapsed=$((SECONDS - t0))
is "$rc" 1 "a confined startContainer hook past its timeout fails run"
like "$err" 'startContainer hook #0 \(/bin/sh\): error running hook: timed out after 1s' "and says it timed out"
ok "within the time a sleep 30 would take ($elapsed s)" test "$elapsed" -lt 25
nothing_left "$id" "$b" "nothing left after the timeout (no sleep either)"
