#!/bin/bash
# t-breakout.sh: ways out of a rootless container through its namespaces (issue 11), each written
# as the attack: a pid namespace joined by path that left init in the caller's (the container saw,
# and could signal, the user's processes), the host's /proc given to a container that has a pid
# namespace, and the host's cgroup mounts left writable under a /sys bound from the host.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# ---------------------------------------------------------------- a pid namespace joined by path

# A holds the namespaces; B joins its user and pid namespaces by path. B's processes must be in
# A's pid namespace: A's process is pid 1 there, and nothing of the host is in B's /proc.
b_a=$(mkbundle pidns-a rrt-probe sleep 100)
id_a=$(new_id pidns-a)
run rrt run -d -b "$b_a" "$id_a"
is "$rc" 0 "pid namespace by path: the container holding it runs"
pid_a=$(state_field "$id_a" .pid)
b_b=$(mkbundle pidns-b sh -c 'cat /proc/1/cmdline | tr "\0" " "; echo; echo $$; ls -d /proc/[0-9]* | wc -l')
cfg "$b_b" '.linux.namespaces |= map(select(.type != "user" and .type != "pid")) +
  [{type: "user", path: "/proc/\($p)/ns/user"}, {type: "pid", path: "/proc/\($p)/ns/pid"}] |
  del(.linux.uidMappings, .linux.gidMappings)' --arg p "$pid_a" || bail_out "cannot edit $b_b/config.json"
id_b=$(new_id pidns-b)
run rrt run -b "$b_b" "$id_b"
is "$rc" 0 "pid namespace by path: the joining container runs"
[ "$rc" = 0 ] || diag "$err"
is "$(head -n 1 <<<"$out")" "rrt-probe sleep 100 " "pid namespace by path: its pid 1 is the other container's process"
like "$(sed -n 2p <<<"$out")" '^[2-9]$' "pid namespace by path: the container's process (init itself) has a pid of that namespace"
like "$(sed -n 3p <<<"$out")" '^[2-4]$' "pid namespace by path: its /proc shows that namespace's processes only"
unlike "$err" 'binding the host /proc' "pid namespace by path: no host /proc fallback"
nothing_left "$id_b" "$b_b"

# Sharing A's pid namespace does not make A's processes B's: ps and kill --all of B leave A alone.
b_c=$(mkbundle pidns-c rrt-probe sleep 100)
cfg "$b_c" '.linux.namespaces |= map(select(.type != "user" and .type != "pid")) +
  [{type: "user", path: "/proc/\($p)/ns/user"}, {type: "pid", path: "/proc/\($p)/ns/pid"}] |
  del(.linux.uidMappings, .linux.gidMappings)' --arg p "$pid_a" || bail_out "cannot edit $b_c/config.json"
id_c=$(new_id pidns-c)
run rrt run -d -b "$b_c" "$id_c"
is "$rc" 0 "pid namespace by path: a joining container runs detached"
pid_c=$(state_field "$id_c" .pid)
run rrt ps "$id_c"
unlike "$out" "(^|[^0-9])$pid_a([^0-9]|$)" "pid namespace by path: ps of the joiner does not list the other container's process"
run rrt kill --all "$id_c" KILL
wait_status "$id_c" stopped 10
is "$(status_of "$id_c")" stopped "pid namespace by path: kill --all stops the joiner"
# Its state would still say running for a killed but unreaped (zombie) init: ask /proc.
is "$(awk '{print $3}' "/proc/$pid_a/stat" 2>&1)" S "pid namespace by path: and leaves the other container's process alive"
[ -n "$pid_c" ] || diag "no pid for $id_c"
rrt delete -f "$id_c" >/dev/null 2>&1
nothing_left "$id_c" "$b_c"
rrt delete -f "$id_a" >/dev/null 2>&1
nothing_left "$id_a" "$b_a"

# ---------------------------------------------------------------- the outer /proc with a pid namespace

# A fresh proc is refused where the caller's /proc has a locked mount over part of it (here a
# tmpfs over /proc/sys, made in one user namespace and locked by a nested one, as in a CI job's
# container, whose engine masks paths of /proc). The container has a pid namespace: it gets the
# caller's /proc bound with that mask kept, the config's maskedPaths over it, and one warning
# saying so (issue 29). It sees the processes outside, but reaches none of them: a signal by pid
# goes to its own pid namespace, and their /proc files beyond ps's are another user namespace's.
if ! command -v unshare >/dev/null || ! unshare -Urm true 2>/dev/null; then
  skip "unshare -Urm is not available to make a nested user namespace" 5
else
  sleep 100 &
  outside=$!
  b=$(mkbundle proc-host sh -c "wc -c </proc/timer_list; ls /proc/sys | wc -l
    [ -d /proc/$outside ] && echo visible
    kill -0 $outside 2>/dev/null && echo signalled || echo unreachable
    cat /proc/$outside/environ >/dev/null 2>&1 && echo readable || echo unreadable")
  cfg "$b" '.linux.namespaces |= map(select(.type != "user")) | del(.linux.uidMappings, .linux.gidMappings)' ||
    bail_out "cannot edit $b/config.json"
  id=$(new_id proc-host)
  run unshare -Urm sh -c 'mount -t tmpfs t /proc/sys && exec unshare -Urm "$@"' sh \
    timeout 30 "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
  is "$rc" 0 "outer /proc: a container with a pid namespace runs where a fresh proc is refused"
  like "$err" '^rootlessrt: warning: mount proc on /proc: .*binding that /proc instead, its masks kept: the container sees the processes outside its pid namespace$' \
    "outer /proc: one warning line says so"
  is "$(printf '%s\n' "$out" | head -n 2 | tr '\n' ' ')" "0 0 " \
    "outer /proc: the outer mask (/proc/sys) kept, the config's maskedPaths (/proc/timer_list) over it"
  is "$(printf '%s\n' "$out" | tail -n 3 | tr '\n' ' ')" "visible unreachable unreadable " \
    "outer /proc: a process outside is listed, but can be neither signalled nor read"
  kill "$outside" 2>/dev/null
  wait "$outside" 2>/dev/null
  nothing_left "$id" "$b"
fi

# ---------------------------------------------------------------- the host's cgroups under /sys

# No network namespace: sysfs cannot be mounted, /sys is bound from the host. Its cgroup
# hierarchies (on a hybrid host a cgroup2 mount among them) must not be writable inside, nor the
# host's tree visible: an empty read-only tmpfs hides them.
b=$(mkbundle sysfs-cg sh -c 'grep -E " - cgroup2? " /proc/self/mountinfo; ls -A /sys/fs/cgroup | wc -l; ls /sys/class | wc -l')
cfg "$b" '.linux.namespaces |= map(select(.type != "network")) |
  .mounts |= map(select(.destination != "/sys/fs/cgroup" and .destination != "/sys")) +
  [{destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"]}]' ||
  bail_out "cannot edit $b/config.json"
id=$(new_id sysfs-cg)
run rrt run --network host -b "$b" "$id"
is "$rc" 0 "sysfs bound from the host: run"
[ "$rc" = 0 ] || diag "$err"
no_line "$out" '^[0-9]+ [0-9]+ [0-9:]+ [^ ]+ /sys/fs/cgroup[^ ]* rw' "sysfs bound from the host: no writable cgroup mount inside"
is "$(tail -n 2 <<<"$out" | head -n 1)" "0" "sysfs bound from the host: /sys/fs/cgroup is empty"
like "$(tail -n 1 <<<"$out")" '^[1-9]' "sysfs bound from the host: the rest of /sys is there"
nothing_left "$id" "$b"

done_testing
