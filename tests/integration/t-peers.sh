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

# ---------------------------------------------------------------- a missing cwd, a read-only root

b=$(mkbundle rocwd rrt-probe cwd)
cfg "$b" '.root.readonly = true | .process.cwd = "/made/by/the/runtime"'
id=$(new_id rocwd)
run rrt run -b "$b" "$id"
is "$rc:$out" "0:/made/by/the/runtime" "root.readonly with a missing process.cwd: made before the remount"
ok "the cwd exists in the rootfs" test -d "$b/rootfs/made/by/the/runtime"
run rrt run -b "$b" "$(new_id rocwd)"
is "$rc:$out" "0:/made/by/the/runtime" "and an existing one is entered"
cfg "$b" '.process.args = ["sh", "-c", "touch /x"] | .process.cwd = "/made/too"'
id=$(new_id rocwd)
run rrt run -b "$b" "$id"
isnt "$rc" 0 "the root is still read-only for the container"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- no process

# runtime.md: process is optional at create; start must then fail.
b=$(mkbundle noproc rrt-probe exit 0)
cfg "$b" 'del(.process)'
id=$(new_id noproc)
run rrt create -b "$b" "$id"
is "$rc" 0 "create without process succeeds (${err:-no stderr})"
is "$(status_of "$id")" created "and the container is created"
run rrt start "$id"
is "$rc" 1 "start without process exits 1"
like "$err" 'process.*no process' "and says there is no process"
rrt delete -f "$id" >/dev/null 2>&1
nothing_left "$id" "$b"
id=$(new_id noproc)
run rrt run -b "$b" "$id"
is "$rc" 1 "run without process exits 1"
like "$err" 'no process' "and says there is no process"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- HOME

# No HOME in process.env: the container's /etc/passwd entry for process.user.uid, "/" without one.
b=$(mkbundle home sh -c 'echo "$HOME"')
printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\nnobody:x:65534:65534::/nonexistent:/bin/false\n' \
  >"$b/rootfs/etc/passwd"
cfg "$b" '.process.env |= map(select(startswith("HOME=") | not))'
home_of() { # home_of UID: HOME as `run` gives it to that uid
  cfg "$b" '.process.user = {uid: $u, gid: $u}' --argjson u "$1"
  run rrt run -b "$b" "$(new_id home)"
  echo "$rc:$out"
}
is "$(home_of 0)" "0:/root" "no HOME: root gets /root from the container's /etc/passwd"
if [ -n "$(subid_range /etc/subuid)" ] && [ -n "$(subid_range /etc/subgid)" ]; then
  is "$(home_of 1000)" "0:/home/user" "no HOME: uid 1000 gets its passwd entry's home"
  is "$(home_of 2000)" "0:/" "no HOME: a uid without an entry gets /"
else
  skip "uids 1000 and 2000 need subordinate id ranges for $(id -un)" 2
fi
cfg "$b" '.process.user = {uid: 0, gid: 0} | .process.env += ["HOME=/given"]'
run rrt run -b "$b" "$(new_id home)"
is "$rc:$out" "0:/given" "a HOME in process.env is kept"

cfg "$b" '.process.env |= map(select(startswith("HOME=") | not)) | .process.args = ["sleep", "100"]'
id=$(new_id home)
run rrt run -d -b "$b" "$id"
run rrt exec "$id" sh -c 'echo "$HOME"'
is "$rc:$out" "0:/root" "exec without HOME: from /etc/passwd too"
if [ -n "$(subid_range /etc/subuid)" ]; then
  run rrt exec -u 65534 "$id" sh -c 'echo "$HOME"'
  is "$rc:$out" "0:/nonexistent" "exec -u 65534: that uid's home"
else
  skip "uid 65534 needs a subordinate uid range for $(id -un)"
fi
run rrt exec -e HOME=/mine "$id" sh -c 'echo "$HOME"'
is "$rc:$out" "0:/mine" "exec -e HOME=... is kept"
rrt delete -f "$id" >/dev/null 2>&1
nothing_left "$id" "$b"

done_testing
