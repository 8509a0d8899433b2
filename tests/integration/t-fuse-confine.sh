#!/bin/bash
# t-fuse-confine.sh: fuse-overlayfs served from outside the container (issue 19, items 1 and 6),
# written as the attack: a container with CAP_SYS_PTRACE looks in its /proc for fuse-overlayfs
# and through every /proc/PID/root for a 0600 file of the user's home (a daemon in its pid
# namespace gave it the host's "/"); the same from a container whose pid namespace another
# container's fuse-overlayfs joins; and no daemon or server left after delete or a killed create.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

N_TESTS=20
if ! command -v fuse-overlayfs >/dev/null; then
  skip "fuse-overlayfs is not installed" "$N_TESTS"
  done_testing
  exit
fi
if [ ! -r /dev/fuse ] || [ ! -w /dev/fuse ]; then
  skip "/dev/fuse is not readable and writable by $(id -un) (mode $(stat -c %a /dev/fuse))" "$N_TESTS"
  done_testing
  exit
fi

STORE=$T_WORK/store
ROOT=$T_WORK/root
mkdir -p "$ROOT/bin" "$ROOT/tmp" && cp "$PROBE" "$ROOT/bin/rrt-probe" || bail_out "cannot make $ROOT"

# The host file the attack wants: in the user's home when there is one to write, mode 0600.
home=$(getent passwd "$(id -un)" | cut -d: -f6)
if [ -z "$home" ] || [ ! -d "$home" ] || [ ! -w "$home" ]; then
  diag "no writable home for $(id -un): the host file is in $T_WORK instead"
  home=$T_WORK/home
  mkdir -p "$home"
fi
secret=$home/.rrt-fuse-secret.$$
fuse_cleanup() {
  rm -f "$secret"
  _cleanup
}
trap fuse_cleanup EXIT
token="host-secret-$RANDOM$RANDOM"
(umask 077 && echo "$token" >"$secret") || bail_out "cannot write $secret"

# ---------------------------------------------------------------- the attack from the container

run drun --rm --overlay fuse --cap-add SYS_PTRACE "$ROOT" /bin/rrt-probe fuse-scan /bin/rrt-probe
is "$rc" 0 "--overlay fuse --cap-add SYS_PTRACE: the scan runs"
has_line "$out" '^reached 1 ' "the scan does reach files through /proc/PID/root (its own root)"

run drun --rm --overlay fuse --cap-add SYS_PTRACE "$ROOT" /bin/rrt-probe fuse-scan "$secret"
is "$rc" 0 "the scan for the host file runs"
no_line "$out" '^fuse-overlayfs ' "no fuse-overlayfs process in the container's /proc"
no_line "$out" '^reached ' "the user's 0600 file is reachable through no /proc/PID/root"
unlike "$out" "$token" "the container never reads the host file"

# The server joins the container's user namespace as the runtime's user: with --userns keep-id
# that user is not root there, and fuse-overlayfs must still be (its capabilities).
run drun --rm --overlay fuse --userns keep-id "$ROOT" /bin/rrt-probe ids
is "$rc:$(cut -d' ' -f1 <<<"$out")" "0:uid=$(id -u)" "--overlay fuse --userns keep-id: the run works, as the user"
[ "$rc" = 0 ] || diag "$err"

# ---------------------------------------------------------------- a joined pid namespace (item 6)

# A holds the namespaces, with CAP_SYS_PTRACE; B joins them with a fuse-overlayfs root. A must see
# no daemon of B's.
b_a=$(mkbundle join-a rrt-probe sleep 100)
cfg "$b_a" '.process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"])' ||
  bail_out "cannot edit $b_a/config.json"
id_a=$(new_id join-a)
run rrt run -d -b "$b_a" "$id_a"
pid_a=$(state_field "$id_a" .pid)
b_b=$(mkbundle join-b rrt-probe sleep 100)
mv "$b_b/rootfs" "$b_b/lower" && mkdir -p "$b_b/rootfs" "$b_b/upper" "$b_b/work"
cfg "$b_b" '.root.readonly = false | .annotations["rootlessrt.overlay"] = "fuse" |
  .mounts = [{destination: "/", type: "overlay", source: "overlay",
  options: ["lowerdir=lower", "upperdir=upper", "workdir=work"]}] + .mounts |
  .linux.namespaces |= map(select(.type != "user" and .type != "pid")) +
  [{type: "user", path: "/proc/\($p)/ns/user"}, {type: "pid", path: "/proc/\($p)/ns/pid"}] |
  del(.linux.uidMappings, .linux.gidMappings)' --arg p "$pid_a" || bail_out "cannot edit $b_b/config.json"
id_b=$(new_id join-b)
run rrt run -d -b "$b_b" "$id_b"
is "$rc" 0 "a container with a fuse-overlayfs root joins another's pid namespace"
[ "$rc" = 0 ] || diag "$err"
run rrt exec "$id_a" rrt-probe fuse-scan "$secret"
no_line "$out" '^fuse-overlayfs ' "the other container's /proc shows no fuse-overlayfs of the joiner"
no_line "$out" '^reached ' "... and no /proc/PID/root there reaches the user's file"
rrt delete -f "$id_b" >/dev/null 2>&1
rrt delete -f "$id_a" >/dev/null 2>&1

# ---------------------------------------------------------------- nothing left behind

fuse_of() { procs_referencing "$1" | grep fuse-overlayfs; }
servers_of() { # servers_of ID: the fuse-overlayfs servers state.json records
  jq -r '.fuseHelpers[]?.pid' "$RRT_ROOT/$1/state.json" 2>/dev/null
}
alive() { # alive PID...: some of them still runs (a zombie has ended, waiting for its parent)
  local p s
  for p in "$@"; do
    s=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)
    [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ] && return 0
  done
  return 1
}

id=$(new_id left)
drun -d --overlay fuse --name "$id" "$ROOT" /bin/rrt-probe sleep 100 >/dev/null
ok "fuse-overlayfs serves the running container" test -n "$(fuse_of "$STORE/containers/$id")"
servers=$(servers_of "$id")
ok "state.json records its server" test -n "$servers"
# What the daemon itself holds, seen from the host by its owner.
daemon=$(fuse_of "$STORE/containers/$id" | awk 'NR == 1 {print $1}')
init=$(state_field "$id" .pid)
isnt "$(ns_ino "$daemon" pid)" "$(ns_ino "$init" pid)" "the daemon is not in the container's pid namespace"
ok "the user's file is not in the daemon's root" test ! -e "/proc/$daemon/root$secret"
allowed="/|/proc|/dev/null|/dev/fuse|/lib[^/]*|/usr/lib[^/]*|/usr/local/lib|/etc/ld\.so\.cache|$ROOT|$STORE/containers/$id"
is "$(awk '{print $5}' "/proc/$daemon/mountinfo" | grep -Evx "$allowed")" "" \
  "the daemon's mounts: its layers, the libraries, /dev/null, /dev/fuse and its /proc, no more"
bnd=$(awk '$1 == "CapBnd:" {print $2}' "/proc/$daemon/status")
# CAP_SYS_PTRACE is bit 19, CAP_SYS_ADMIN bit 21, CAP_KILL bit 5.
ok "the daemon has neither CAP_SYS_ADMIN, CAP_SYS_PTRACE nor CAP_KILL (bounding set $bnd)" \
  test $((0x${bnd:-ffffffffff} & ((1 << 19) | (1 << 21) | (1 << 5)))) = 0
rrt delete -f "$id" >/dev/null 2>&1
left=$(fuse_of "$STORE/containers/$id")
# shellcheck disable=SC2086 # a list of pids
alive $servers && left+=" its server"
is "$left" "" "delete --force: no fuse-overlayfs and no server left once it returns"
rrt store --storage "$STORE" rm "$id" >/dev/null 2>&1

# A runtime killed during create: a createRuntime hook holds it there, after the mount.
b=$(mkbundle fuse-kill true)
mv "$b/rootfs" "$b/lower" && mkdir -p "$b/rootfs" "$b/upper" "$b/work"
cfg "$b" '.root.readonly = false | .annotations["rootlessrt.overlay"] = "fuse" |
  .mounts = [{destination: "/", type: "overlay", source: "overlay",
  options: ["lowerdir=\($b)/lower", "upperdir=\($b)/upper", "workdir=\($b)/work"]}] + .mounts |
  .hooks.createRuntime = [{path: "/bin/sh", args: ["sh", "-c", "echo $$ >\($b)/hook.pid; touch \($b)/in-hook; exec sleep 60"]}]' \
  --arg b "$b" || bail_out "cannot edit $b/config.json"
id=$(new_id fk)
rrt_bg "$T_WORK/fuse-kill.out" run -b "$b" "$id"
wait_until 20 test -e "$b/in-hook"
servers=$(servers_of "$id")
ok "fuse-overlayfs and its server run while create waits" test -n "$(fuse_of "$b")" -a -n "$servers"
daemon=$(fuse_of "$b" | awk 'NR == 1 {print $1}')
is "$(awk -v l="$b/lower" '$5 == l {split($6, o, ","); print o[1]}' "/proc/$daemon/mountinfo" 2>/dev/null)" ro \
  "a lower directory beside the upper and work ones is read-only for the daemon"
kill -KILL "$RRT_BG_PID"
wait "$RRT_BG_PID" 2>/dev/null
# shellcheck disable=SC2086 # a list of pids
gone() { test -z "$(fuse_of "$b")" && ! alive $servers; }
ok "kill -9 of the runtime during create: the daemon and its server end with init" wait_until 10 gone
kill "$(cat "$b/hook.pid")" 2>/dev/null
rrt delete -f "$id" >/dev/null 2>&1

done_testing
