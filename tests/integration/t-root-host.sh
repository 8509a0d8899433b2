#!/bin/bash
# t-root-host.sh: real root's containers, and real root's runtime, must leave the host exactly as
# it was; each written as the attack: a config joining the host's own mount namespace by path
# (the rootfs was set up there, and pivot_root moved every process of the host into it), a
# container root that chmods or touches its /dev nodes and masked files (they were binds of the
# host's own nodes, writable), a cgroup2 mount without a cgroup namespace (it set the host's
# cgroup2 flags), the slirp helper (it parsed the container's packets as root), another user's
# symlink at --log (root appended to the file it named). As real root only (run-integration runs this file as root).
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

if ! real_root; then
  skip "not real root: these checks are about what the host's root does" 26
  done_testing
fi

# ---------------------------------------------------------------- the host's mount namespace
# A mount namespace joined by path that is the runtime's own, or pid 1's. Tried inside a
# sandbox: a private mount and pid namespace, whose pid 1 is a shell of ours, and a runtime in a
# mount namespace below it. Were the attack to work again it would pivot the sandbox, not the
# machine; the sandbox's mount table and root must stay as they were.
sandbox=$T_WORK/sandbox
mkdir -p "$sandbox"
for p in /proc/self/ns/mnt /proc/1/ns/mnt; do
  b=$(rootbundle "join-mnt-${p//\//_}" rrt-probe exit 0)
  cfg "$b" '.linux.namespaces |= map(select(.type != "mount")) + [{type: "mount", path: $p}]' --arg p "$p" ||
    bail_out "cannot edit $b/config.json"
done
b_self=$T_WORK/join-mnt-_proc_self_ns_mnt
b_init=$T_WORK/join-mnt-_proc_1_ns_mnt
id_self=$(new_id join-self)
id_init=$(new_id join-init)
run unshare -m -p -f --mount-proc --propagation private bash -c '
  w=$1 rrt=$2 root=$3
  cat /proc/self/mountinfo >"$w/before"
  timeout -k 5 30 "$rrt" --root "$root" run -b "$4" "$5" >"$w/self.out" 2>&1
  echo "$?" >"$w/self.rc"
  timeout -k 5 30 unshare -m --propagation private "$rrt" --root "$root" run -b "$6" "$7" >"$w/init.out" 2>&1
  echo "$?" >"$w/init.rc"
  cat /proc/self/mountinfo >"$w/after"
  readlink /proc/self/root >"$w/root"' sh "$sandbox" "$RRT" "$RRT_ROOT" "$b_self" "$id_self" "$b_init" "$id_init"
[ "$rc" = 0 ] || diag "sandbox: $err"
is "$(cat "$sandbox/self.rc" 2>/dev/null):$(cat "$sandbox/self.out" 2>/dev/null)" \
  "1:rootlessrt: linux.namespaces: the mount namespace /proc/self/ns/mnt is the runtime's (the host's) own: the container's mounts and pivot_root would be the host's" \
  "joining the runtime's own mount namespace by path is refused, saying why"
like "$(cat "$sandbox/init.rc" 2>/dev/null):$(cat "$sandbox/init.out" 2>/dev/null)" \
  "^1:.*mount namespace /proc/1/ns/mnt is the runtime's \(the host's\) own" \
  "and so is pid 1's, from a runtime in a mount namespace of its own"
ok "the mount table it would have changed is unchanged" cmp -s "$sandbox/before" "$sandbox/after"
is "$(cat "$sandbox/root" 2>/dev/null)" / "its processes' root is still /"
nothing_left "$id_self" "$b_self"

# ---------------------------------------------------------------- /dev nodes and masked files
# The default nodes are binds of the host's: the container's root owns them (uid 0 on both
# sides). Times are what the attack changes here (a chmod to the mode it has already changes
# nothing, but must fail all the same); whatever it changed is put back afterwards.
host_full=$(stat -c %Y /dev/full)
host_null=$(stat -c %Y /dev/null)
b=$(rootbundle devnodes sh -c 'touch -m -d @12345 /dev/full && echo touched-full
  chmod "$(stat -c %a /dev/full)" /dev/full && echo chmod-full
  chown 0:0 /dev/full && echo chown-full
  touch -m -d @12345 /proc/keys && echo touched-masked
  echo x >/dev/full; echo x >/dev/null && echo wrote-null; head -c 4 /dev/zero | wc -c')
cfg "$b" '.process.capabilities.bounding += ["CAP_CHOWN", "CAP_FOWNER"] |
  .process.capabilities.effective += ["CAP_CHOWN", "CAP_FOWNER"] |
  .process.capabilities.permitted += ["CAP_CHOWN", "CAP_FOWNER"] |
  .linux.maskedPaths = ((.linux.maskedPaths // []) + ["/proc/keys"] | unique)' ||
  bail_out "cannot edit $b/config.json"
id=$(new_id devnodes)
run rrt run -b "$b" "$id"
is "$rc" 0 "root, no user namespace: run"
is "$(stat -c %Y /dev/full)" "$host_full" "the container's touch of /dev/full leaves the host's /dev/full as it was"
if [ -f /proc/keys ]; then
  is "$(stat -c %Y /dev/null)" "$host_null" "its touch of a masked file leaves the host's /dev/null as it was"
else
  skip "no /proc/keys here to mask" 1
fi
no_line "$out" '^(touched|chmod|chown)-' "touch, chmod and chown of the nodes fail inside"
like "$out" 'wrote-null.*4' "the nodes are still the devices"
touch -m -d "@$host_full" /dev/full
touch -m -d "@$host_null" /dev/null
nothing_left "$id" "$b"

# ---------------------------------------------------------------- the host's cgroup2 flags
# In the initial cgroup namespace a new cgroup2 mount sets the hierarchy's global flags
# (nsdelegate, memory_localevents, ...) to its own options: a container without a cgroup
# namespace of its own mounting cgroup2 cleared systemd's nsdelegate, or set what its config
# listed. The flag tried is one that only changes what memory.events counts; put back if changed.
v2_super() { awk '$0 ~ / - cgroup2 / && ($5 == "/sys/fs/cgroup" || $5 == "/sys/fs/cgroup/unified") {
  sub(/.* - cgroup2 [^ ]* /, ""); print; exit}' /proc/self/mountinfo; }
host_v2=$(v2_super)
if [ -z "$host_v2" ]; then
  skip "the host has no cgroup2 mount" 3
else
  case ",$host_v2," in
  *,memory_localevents,*) opts='[]' ;;
  *) opts='["memory_localevents"]' ;;
  esac
  b=$(rootbundle cgroup2-flags sh -c 'grep " /sys/fs/cgroup " /proc/self/mountinfo')
  cfg "$b" '.linux.namespaces |= map(select(.type != "cgroup")) |
    .mounts = [.mounts[] | select(.destination != "/sys/fs/cgroup")] +
      [{destination: "/sys/fs/cgroup", type: "cgroup2", source: "cgroup", options: $o}]' \
    --argjson o "$opts" || bail_out "cannot edit $b/config.json"
  id=$(new_id cgroup2-flags)
  run rrt run -b "$b" "$id"
  like "$rc:$out" '^0:.* /sys/fs/cgroup .* - cgroup2 ' "a cgroup2 mount without a cgroup namespace: run"
  is "$(v2_super)" "$host_v2" "leaves the host's cgroup2 flags as they were (options $opts)"
  if [ "$(v2_super)" != "$host_v2" ]; then
    mkdir -p "$T_WORK/v2"
    unshare -m sh -c 'mount -t cgroup2 -o "$1" none "$2"' sh "$(echo "$host_v2" | sed 's/^rw,\{0,1\}//')" "$T_WORK/v2"
  fi
  nothing_left "$id" "$b"
fi

# ---------------------------------------------------------------- the slirp helper
# The network helper parses everything the container sends: real root's must not do so as root.
b=$(rootbundle slirp-helper rrt-probe sleep 1000)
id=$(new_id slirp-helper)
run rrt run -d --network slirp -b "$b" "$id"
is "$rc" 0 "run -d --network slirp as root"
helper=$(jq -r '.netHelper // empty' "$RRT_ROOT/$id/state.json" 2>/dev/null)
is "$(awk '/^(Uid|Gid):/ {print $1, $2, $3, $4, $5} /^CapEff:/ {print $1, $2}' "/proc/${helper:-0}/status" 2>/dev/null)" \
  "$(printf 'Uid: 65534 65534 65534 65534\nGid: 65534 65534 65534 65534\nCapEff: 0000000000000000')" \
  "its network helper runs as nobody, with no capability"
rrt delete -f "$id" >/dev/null 2>&1
nothing_left "$id" "$b"
# Its agent in the container's namespaces stays root: the helper as nobody cannot signal it, and
# still both go when the container does (before any delete).
b=$(rootbundle slirp-exit rrt-probe exit 0)
id=$(new_id slirp-exit)
rrt run -d --network slirp -b "$b" "$id" >/dev/null 2>&1
helper=$(jq -r '.netHelper // empty' "$RRT_ROOT/$id/state.json" 2>/dev/null)
gone() { ! pgrep -P "$1" >/dev/null && [ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
ok "once the container exits, its network helper and agent exit too" wait_until 20 gone "${helper:-0}"
rrt delete -f "$id" >/dev/null 2>&1

# The container's own connection to the host's loopback (10.0.2.2, --host-loopback) by the fast
# path, whose SYN gate waits for the helper's verdict (nfnetlink, which wants CAP_NET_ADMIN over
# the container's network namespace): as nobody, real root's helper had none, and every such
# connection timed out (a CI job's root, nested, too). With a user namespace of the container's,
# the helper is that namespace's root (its mapped uid on the host, in that namespace); without
# one, nobody, and the agent makes no gate.
PO=$("$PY" "$TESTS_DIR/netbench/net-helper.py" free-port) || bail_out "no free port on 127.0.0.1"
"$PY" "$TESTS_DIR/netbench/net-helper.py" tcp-hello 127.0.0.1 "$PO" "hello-from-host-$$" \
  >"$T_WORK/hello.out" 2>&1 &
hello_pid=$!
wait_until 5 grep -q listening "$T_WORK/hello.out" || fail "the host's TCP server listens on 127.0.0.1:$PO"
b=$(rootbundle slirp-out sh -c "nc -w 5 10.0.2.2 $PO </dev/null")
id=$(new_id slirp-out)
run rrt run --network slirp --host-loopback -b "$b" "$id"
is "$rc:$out" "0:hello-from-host-$$" "no user namespace: the container's own connection to the host's loopback"
nothing_left "$id" "$b"
usermap='[{"containerID": 0, "hostID": 300000, "size": 65536}]'
userns='.linux.namespaces += [{type: "user"}] | .linux.uidMappings = $m | .linux.gidMappings = $m'
b=$(rootbundle slirp-out-userns sh -c "nc -w 5 10.0.2.2 $PO </dev/null")
cfg "$b" "$userns" --argjson m "$usermap" || bail_out "cannot edit $b/config.json"
# The rootfs is root's: the container's root (300000) could not make the files slirp binds.
mkdir -p "$b/rootfs/etc" && touch "$b/rootfs/etc/resolv.conf" "$b/rootfs/etc/hosts" || bail_out "cannot prepare $b"
id=$(new_id slirp-out-userns)
run rrt run --network slirp --host-loopback -b "$b" "$id"
is "$rc:$out" "0:hello-from-host-$$" "a user namespace: the container's own connection to the host's loopback"
[ "$rc" = 0 ] || diag "stderr: $err"
nothing_left "$id" "$b"
b=$(rootbundle slirp-helper-userns rrt-probe sleep 1000)
cfg "$b" "$userns" --argjson m "$usermap" || bail_out "cannot edit $b/config.json"
# The rootfs is root's: the container's root (300000) could not make the files slirp binds.
mkdir -p "$b/rootfs/etc" && touch "$b/rootfs/etc/resolv.conf" "$b/rootfs/etc/hosts" || bail_out "cannot prepare $b"
id=$(new_id slirp-helper-userns)
rrt run -d --network slirp -b "$b" "$id" >/dev/null 2>&1
helper=$(jq -r '.netHelper // empty' "$RRT_ROOT/$id/state.json" 2>/dev/null)
init=$(jq -r '.pid // empty' "$RRT_ROOT/$id/state.json" 2>/dev/null)
is "$(awk '/^(Uid|Gid):/ {print $1, $2, $3, $4, $5}' "/proc/${helper:-0}/status" 2>/dev/null)" \
  "$(printf 'Uid: 300000 300000 300000 300000\nGid: 300000 300000 300000 300000')" \
  "... its helper runs as the container's root (uid 0 of its user namespace, 300000 on the host)"
is "$(readlink "/proc/${helper:-0}/ns/user")" "$(readlink "/proc/${init:-0}/ns/user")" \
  "... in the container's user namespace, not the host's"
rrt delete -f "$id" >/dev/null 2>&1
nothing_left "$id" "$b"
kill "$hello_pid" 2>/dev/null
wait "$hello_pid" 2>/dev/null

# ---------------------------------------------------------------- --log through a symlink
# Another user's symlink where the log is to be (a directory others can write): root must not
# create or append to the file it names. Root's own symlink (as /dev/stderr is) is followed.
shared=$T_WORK/shared
mkdir -m 0777 "$shared"
echo precious >"$T_WORK/victim"
ln -s "$T_WORK/victim" "$shared/log.json"
chown -h nobody "$shared/log.json"
run rrt --log "$shared/log.json" state no-such-container
like "$rc:$err" "^1:.*--log $shared/log\.json is a symlink of uid [0-9]+'s, not yours or root's" \
  "--log at another user's symlink is refused, naming it"
is "$(cat "$T_WORK/victim")" precious "the file it points at is unchanged"
ln -s "$T_WORK/own.log" "$shared/own.json"
run rrt --log "$shared/own.json" state no-such-container
like "$rc:$(cat "$T_WORK/own.log" 2>/dev/null)" '^1:.*no-such-container' \
  "--log at the caller's own symlink is followed: the error is in the file it names"

done_testing
