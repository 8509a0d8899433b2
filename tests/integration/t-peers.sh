#!/bin/bash
# t-peers.sh: what other runtimes' test suites and engines check and rootlessrt once got wrong: the
# runtime's own last steps never run under the container's seccomp filter; the container's
# processes have a session of their own; a missing cwd under a read-only root; a config without
# `process` (an error at start, not at create); HOME from the container's /etc/passwd.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# ---------------------------------------------------------------- seccomp goes on last

# A profile that denies what the runtime itself calls after the user switch (getcwd for the cwd
# check, chdir, close_range for the fds, umask, rt_sigaction for the signal reset, getsid and
# setsid): without noNewPrivileges the filter needs CAP_SYS_ADMIN to load, and none of those may
# run under it. mkdir is denied too, to show that the filter is on in the container.
deny='{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["getcwd", "chdir", "fchdir",
  "close_range", "umask", "rt_sigaction", "getsid", "setsid", "mkdir", "mkdirat"],
  "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
b=$(mkbundle seccomp-last rrt-probe syscall mkdir)
base=$T_WORK/seccomp-last.json
cp "$b/config.json" "$base"
for nnp in false true; do
  for user in 0 1000; do
    if [ "$user" = 1000 ] && [ -z "$(subid_range /etc/subuid)" ]; then
      skip "uid 1000 in the container needs a subordinate uid range for $(id -un)"
      continue
    fi
    jq --argjson d "$deny" --argjson nnp "$nnp" --argjson u "$user" \
      '.process.noNewPrivileges = $nnp | .process.user = {uid: $u, gid: $u} | .linux.seccomp = $d |
       .process.cwd = "/tmp"' "$base" >"$b/config.json"
    id=$(new_id seccomp)
    run rrt run -b "$b" "$id"
    is "$rc:$out" "1:EPERM" \
      "noNewPrivileges $nnp, uid $user: a profile denying getcwd, chdir, close_range...: the runtime gets to execve and the filter is on (${err:-no stderr})"
  done
done
nothing_left "$id" "$b"

# ---------------------------------------------------------------- a session of its own

# conmon kills its own process group: the container's init must not be in it (runc and crun
# call setsid). Seen from the host: init's session id is its pid; from inside, 1.
b=$(mkbundle session sh -c 'read -r _ _ _ _ _ sid _ </proc/self/stat; echo "$sid"; exec sleep 100')
id=$(new_id session)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "run -d (setup)"
pid=$(state_field "$id" .pid)
read -r _ _ _ _ _ sid _ <"/proc/$pid/stat"
is "$sid" "$pid" "no terminal: the container's init leads a session of its own (host's view)"
run rrt exec "$id" sh -c 'read -r _ _ _ _ _ sid _ </proc/self/stat; echo "$$ $sid"'
read -r epid esid <<<"$out"
is "$esid" "$epid" "no terminal: an exec'd process leads a session of its own"
rrt delete -f "$id" >/dev/null 2>&1
id=$(new_id session)
run rrt create -b "$b" "$id"
pid=$(state_field "$id" .pid)
read -r _ _ _ _ _ sid _ <"/proc/$pid/stat"
is "$sid" "$pid" "already after create: init is out of the caller's session"
rrt delete -f "$id" >/dev/null 2>&1
nothing_left "$id" "$b"

done_testing
