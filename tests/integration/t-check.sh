#!/bin/bash
# t-check.sh: `rootlessrt check`: every item's line, each problem made on purpose (files the check
# reads given through ROOTLESSRT_CHECK_ROOT, a newuidmap copy without privileges first on PATH,
# device and runtime directory modes), the fix printed for it, --json against its schema, the
# exit status, and create's error pointing at check.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

ITEMS="subuid subgid newuidmap newgidmap userns apparmor overlay seccomp runtime-dir cgroup user-bus
tun fuse fuse-overlayfs rootlessrt-net net-fast-path slirp4netns pasta storage"
ME=$(id -un)
FAKE=$T_WORK/fakeroot

check() { # check ARGS...: `rootlessrt check ARGS` with the environment of CHECK_ENV (an array)
  run env "${CHECK_ENV[@]}" "$RRT" check "$@"
}
line_of() { # line_of ITEM: the item's line of the last check's output
  grep -E "^(ok|warn|fail) +$1 " <<<"$out"
}
item_is() { # item_is ITEM LEVEL ERE NAME: the item's line has LEVEL and matches ERE
  local l
  l=$(line_of "$1")
  like "$l" "^$2 +$1 +.*$3" "$4"
}
fake_root() { # fake_root: a fresh $FAKE holding the host's subid files and os-release
  rm -rf "$FAKE"
  mkdir -p "$FAKE/etc" "$FAKE/proc/sys/user" "$FAKE/proc/sys/kernel" "$FAKE/dev/net"
  cp /etc/subuid /etc/subgid /etc/os-release /etc/passwd "$FAKE/etc/" 2>/dev/null
  CHECK_ENV=(ROOTLESSRT_CHECK_ROOT="$FAKE")
}
CHECK_ENV=()

# ---------------------------------------------------------------- the whole run, as it is here

t0=$(date +%s%N)
check
t1=$(date +%s%N)
diag "check took $(((t1 - t0) / 1000000)) ms here"
missing=""
for i in $ITEMS; do
  [ "$(line_of "$i" | wc -l)" = 1 ] || missing+=" $i"
done
is "$missing" "" "check prints one line for every item"
bad=$(sed '1d;$d' <<<"$out" | grep -vE '^(ok|warn|fail) +[a-z0-9-]+ +[^ ].*')
is "$bad" "" "every item line is: ok|warn|fail NAME what-was-found"
like "$(head -n1 <<<"$out")" "^rootlessrt check: .*\((debian|fedora|arch|suse|other) family\), user $ME \(uid $(id -u)\)$" \
  "the first line names the distribution family and the user"
nfail=$(grep -cE '^fail ' <<<"$out")
like "$(tail -n1 <<<"$out")" "^[0-9]+ ok, [0-9]+ warn, $nfail fail$" "the last line counts the items"
if [ "$nfail" -gt 0 ]; then is "$rc" 1 "exit status 1 with a failing item"; else is "$rc" 0 "exit status 0 with no failing item"; fi
bad=$(grep -E '^(warn|fail) ' <<<"$out" | grep -v -- '-> fix: ' | grep -vE '^(warn|fail) +(cgroup|userns|newuidmap|newgidmap|seccomp|storage|runtime-dir) ')
is "$bad" "" "a warn or fail line without a fix is only one that has none to give"
item_is userns ok 'a test user namespace mapped your id and mounted a tmpfs' "userns: tried for real"
item_is seccomp ok 'a test filter installed; libseccomp [0-9]' "seccomp: a filter tried for real"
item_is newuidmap ok 'setuid root|file capability' "newuidmap: setuid root or file capabilities here"
item_is cgroup '(ok|warn)' 'cgroup (v1|v2|hybrid|none)' "cgroup: the layout named"
text_out=$out

check --json
is "$rc" "$(if [ "$nfail" -gt 0 ]; then echo 1; else echo 0; fi)" "check --json: the same exit status"
schema_errors=$(printf '%s' "$out" | "$PY" -c '
import json, sys
from jsonschema import Draft4Validator
schema = json.load(open(sys.argv[1]))
try:
    doc = json.load(sys.stdin)
except ValueError as e:
    print("not JSON:", e); sys.exit(1)
errs = sorted(Draft4Validator(schema).iter_errors(doc), key=str)
for e in errs:
    print("/".join(str(p) for p in e.path) or "(root)", e.message)
counts = {"ok": 0, "warn": 0, "fail": 0}
for i in doc["items"]:
    counts[i["status"]] += 1
if counts != doc["summary"]:
    print("summary", doc["summary"], "counts", counts)
' "$TESTS_DIR/check/check.schema.json" 2>&1)
is "$schema_errors" "" "check --json is valid against tests/check/check.schema.json, its summary adds up"
json_lines=$(jq -r '.items[] | "\(.status) \(.name)"' <<<"$out")
text_lines=$(sed '1d;$d' <<<"$text_out" | awk '{print $1, $2}')
is "$json_lines" "$text_lines" "check --json lists the same items with the same verdicts as the text"

# ---------------------------------------------------------------- subordinate ids

fake_root
printf 'alice:100000:65536\nbob:165536:65536\n' >"$FAKE/etc/subuid"
check
item_is subuid warn "no range for $ME in /etc/subuid: containers get your own id alone" "subuid: no range, said"
like "$(line_of subuid)" "-> fix: sudo usermod --add-subuids 262144-327679 $ME\$" \
  "subuid: the fix adds the first free 65536 ids with usermod"
item_is newuidmap ok 'not tried: no subordinate range' "newuidmap: not tried without a range"

grep -v "^$ME:" /etc/passwd >"$FAKE/etc/passwd"
check
like "$(line_of subuid)" "-> fix: echo '$ME:262144:65536' \| sudo tee -a /etc/subuid\$" \
  "subuid: a user not in /etc/passwd (LDAP) gets the line to append"

fake_root
range=$(subid_range /etc/subuid)
if [ -n "$range" ]; then
  read -r start count <<<"$range"
  printf 'mallory:%d:65536\n' $((start + 10)) >>"$FAKE/etc/subuid"
  check
  item_is subuid fail "overlaps mallory's $((start + 10))-$((start + 65545)): their containers share ids" \
    "subuid: another user's overlapping range is a failure"
  like "$(line_of subuid)" "-> fix: sudo usermod --del-subuids $start-$((start + count - 1)) --add-subuids [0-9]+-[0-9]+ $ME\$" \
    "subuid: the fix moves the range"
  is "$rc" 1 "exit status 1 with a failing item"
  printf '%s:%d:1000\n' "$ME" "$start" >"$FAKE/etc/subgid"
  check
  item_is subgid warn "$ME: $start-$((start + 999)) \(1000 ids\) in /etc/subgid, fewer than 65536" \
    "subgid: a range below 65536 is a warning"
  like "$(line_of subgid)" "-> fix: sudo usermod --add-subgids [0-9]+-[0-9]+ $ME\$" "subgid: the fix adds ids"
else
  skip "$ME has no range in /etc/subuid" 5
fi

# ---------------------------------------------------------------- the id-map helpers

mkdir -p "$T_WORK/fakebin"
cp /usr/bin/newuidmap "$T_WORK/fakebin/newuidmap" 2>/dev/null
if [ -x "$T_WORK/fakebin/newuidmap" ] && [ -n "$(subid_range /etc/subuid)" ]; then
  CHECK_ENV=(PATH="$T_WORK/fakebin:$PATH")
  check
  item_is newuidmap fail "$T_WORK/fakebin/newuidmap is neither setuid root nor has file capability cap_setuid" \
    "newuidmap: a copy without the setuid bit first on PATH fails"
  like "$(line_of newuidmap)" "-> fix: export PATH=$PATH  # $T_WORK/fakebin/newuidmap is a copy" \
    "newuidmap: the fix takes its directory off PATH"
  item_is newgidmap ok 'setuid root|file capability' "newgidmap: still the real one"
  is "$rc" 1 "exit status 1"

  b=$(mkbundle helpers true)
  id=$(new_id helpers)
  run env PATH="$T_WORK/fakebin:$PATH" timeout 30 "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
  is "$rc" 1 "create with a broken newuidmap fails"
  like "$err" "newuidmap.*\(the id-map helpers \(newuidmap/newgidmap\) failed\); run 'rootlessrt check' for details\$" \
    "create's error names the helpers and ends with run 'rootlessrt check' for details"
  nothing_left "$id" "$b"
else
  skip "no /usr/bin/newuidmap or no subuid range for $ME" 7
fi
CHECK_ENV=()

# ---------------------------------------------------------------- user namespaces: sysctls, AppArmor

fake_root
echo 0 >"$FAKE/proc/sys/user/max_user_namespaces"
check
item_is userns fail 'user.max_user_namespaces = 0: user namespaces are disabled' "userns: max_user_namespaces 0"
like "$(line_of userns)" "-> fix: sudo sysctl -w user.max_user_namespaces=28633 && echo 'user.max_user_namespaces=28633' \| sudo tee /etc/sysctl.d/90-rootlessrt.conf\$" \
  "userns: the fix sets the sysctl now and at boot"
is "$rc" 1 "exit status 1"

# For real: in a user namespace of our own, whose user.max_user_namespaces is ours to set to 0,
# no further user namespace can be made: check's trial and create both meet ENOSPC.
if unshare -r sh -c 'echo 0 >/proc/sys/user/max_user_namespaces' 2>/dev/null; then
  run unshare -r sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$@"' sh "$RRT" check
  item_is userns fail 'user.max_user_namespaces = 0: user namespaces are disabled' \
    "userns: a real user.max_user_namespaces = 0 (in a user namespace of the test's)"
  item_is overlay warn 'not tried: no user namespace' "overlay: not tried without a user namespace"
  b=$(mkbundle nouserns true)
  # As uid 0 of that namespace the runtime honours the config: a user namespace mapping that 0.
  cfg "$b" '.linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 1}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 1}]'
  id=$(new_id nouserns)
  run unshare -r sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$@"' sh \
    timeout 30 "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
  is "$rc" 1 "create where no user namespace may be made fails"
  like "$err" "clone\(CLONE_NEWUSER\).*\(no user namespace may be created \(user.max_user_namespaces = 0 here: raise it where it is 0, on the host or in the outer container, sysctl -w user.max_user_namespaces=15000\)\); run 'rootlessrt check' for details\$" \
    "create's error names user.max_user_namespaces, the fix, and ends with run 'rootlessrt check' for details"
  nothing_left "$id" "$b"
else
  skip "unshare -r cannot make a user namespace here (or set its max_user_namespaces)" 5
fi

fake_root
echo 0 >"$FAKE/proc/sys/kernel/unprivileged_userns_clone"
check
item_is userns fail 'kernel.unprivileged_userns_clone = 0' "userns: unprivileged_userns_clone 0"
like "$(line_of userns)" "-> fix: sudo sysctl -w kernel.unprivileged_userns_clone=1 " "userns: the fix sets it to 1"

fake_root
mkdir -p "$FAKE/sys/module/apparmor/parameters" "$FAKE/proc/self/attr" "$FAKE/sys/kernel/security/apparmor"
echo Y >"$FAKE/sys/module/apparmor/parameters/enabled"
echo 1 >"$FAKE/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
echo unconfined >"$FAKE/proc/self/attr/current"
check
item_is apparmor fail 'kernel.apparmor_restrict_unprivileged_userns = 1 and this rootlessrt runs as "unconfined".*profile rootlessrt not loaded' \
  "apparmor: the restriction without the profile fails"
like "$(line_of apparmor)" "-> fix: sudo install -m 0644 /usr/local/share/rootlessrt/apparmor/rootlessrt /etc/apparmor.d/rootlessrt && sudo apparmor_parser -r /etc/apparmor.d/rootlessrt\$" \
  "apparmor: the fix installs and loads the profile"
mkdir -p "$FAKE/etc/apparmor.d" && echo '# profile' >"$FAKE/etc/apparmor.d/rootlessrt"
check
like "$(line_of apparmor)" "-> fix: sudo apparmor_parser -r /etc/apparmor.d/rootlessrt\$" \
  "apparmor: an installed profile only needs loading"
printf 'rootlessrt (unconfined)\nrootlessrt-net (unconfined)\n' >"$FAKE/sys/kernel/security/apparmor/profiles"
check
like "$(line_of apparmor)" 'profile rootlessrt loaded  -> fix: run the installed rootlessrt' \
  "apparmor: a loaded profile that does not cover this binary says to run the installed one"
echo 'rootlessrt (unconfined)' >"$FAKE/proc/self/attr/current"
check
item_is apparmor ok 'runs under its profile \(rootlessrt \(unconfined\)\)' "apparmor: under the profile, ok"

# ---------------------------------------------------------------- devices

fake_root
: >"$FAKE/dev/net/tun"
chmod 0000 "$FAKE/dev/net/tun"
check
item_is tun warn "/dev/net/tun \(mode 0000, owner $ME\): Permission denied: --network slirp fails" \
  "tun: a device the user cannot open is a warning"
like "$(line_of tun)" "-> fix: sudo chmod 0666 /dev/net/tun && echo 'KERNEL==\"tun\", MODE=\"0666\"' \| sudo tee /etc/udev/rules.d/60-rootlessrt-tun.rules\$" \
  "tun: the fix opens it now and at boot"
item_is fuse warn '/dev/fuse: No such file or directory: fuse-overlayfs' "fuse: a missing device"
like "$(line_of fuse)" '-> fix: sudo modprobe fuse$' "fuse: the fix loads the module"
CHECK_ENV=()
check
if [ -r /dev/net/tun ] && [ -w /dev/net/tun ]; then
  item_is tun ok '/dev/net/tun opens read-write' "tun: the real device opens"
else
  item_is tun warn '/dev/net/tun \(mode' "tun: the real device is not usable, said"
fi

# ---------------------------------------------------------------- runtime directory

check
item_is runtime-dir warn 'XDG_RUNTIME_DIR is not set' "runtime-dir: unset (as the tests run) is a warning"
like "$(line_of runtime-dir)" "-> fix: (export XDG_RUNTIME_DIR=/run/user/$(id -u)|sudo loginctl enable-linger $ME && export XDG_RUNTIME_DIR=/run/user/$(id -u))\$" \
  "runtime-dir: the fix sets it"
mkdir -m 0755 "$T_WORK/rt"
CHECK_ENV=(XDG_RUNTIME_DIR="$T_WORK/rt")
check
item_is runtime-dir warn "XDG_RUNTIME_DIR=$T_WORK/rt has mode 0755, not 0700" "runtime-dir: mode 0755 is a warning"
like "$(line_of runtime-dir)" "-> fix: chmod 0700 $T_WORK/rt\$" "runtime-dir: the fix is chmod 0700"
chmod 0700 "$T_WORK/rt"
check
if [ "$(stat -f -c %T "$T_WORK/rt")" = tmpfs ]; then
  item_is runtime-dir ok "XDG_RUNTIME_DIR=$T_WORK/rt: yours, 0700, tmpfs" "runtime-dir: 0700 on tmpfs is ok"
else
  item_is runtime-dir warn "XDG_RUNTIME_DIR=$T_WORK/rt is on [a-z0-9]+, not a tmpfs" "runtime-dir: not a tmpfs is a warning"
fi
CHECK_ENV=(XDG_RUNTIME_DIR="$T_WORK/no-such-dir")
check
item_is runtime-dir fail "XDG_RUNTIME_DIR=$T_WORK/no-such-dir: No such file or directory" "runtime-dir: missing is a failure"
shm=$(mktemp -d /dev/shm/rrt-check.XXXXXX 2>/dev/null)
if [ -n "$shm" ]; then
  chmod 0700 "$shm"
  CHECK_ENV=(XDG_RUNTIME_DIR="$shm")
  check
  item_is runtime-dir ok "XDG_RUNTIME_DIR=$shm: yours, 0700, tmpfs, [0-9]+ MiB free" "runtime-dir: 0700 on tmpfs is ok"
  rmdir "$shm"
else
  skip "no /dev/shm to make a tmpfs runtime directory in"
fi
CHECK_ENV=()

# ---------------------------------------------------------------- network helpers, families

printf '#!/bin/sh\necho "rootlessrt-net: error while loading shared libraries: libslirp.so.0: cannot open shared object file" >&2\nexit 127\n' >"$T_WORK/bad-net"
chmod +x "$T_WORK/bad-net"
mkdir -p "$T_WORK/nobin"
for fam in debian:libslirp0:'apt-get install -y' fedora:libslirp:'dnf install -y' \
  arch:libslirp:'pacman -S --needed' opensuse-tumbleweed:libslirp0:'zypper install -y'; do
  IFS=: read -r id pkg cmd <<<"$fam"
  fake_root
  printf 'ID=%s\nPRETTY_NAME="Test %s"\n' "$id" "$id" >"$FAKE/etc/os-release"
  CHECK_ENV+=(ROOTLESSRT_NET_HELPER="$T_WORK/bad-net" PATH="$T_WORK/nobin")
  check
  item_is rootlessrt-net warn "$T_WORK/bad-net does not run: .*libslirp.so.0" "rootlessrt-net ($id): a helper that does not load"
  like "$(line_of rootlessrt-net)" "-> fix: sudo $cmd $pkg\$" "rootlessrt-net ($id): the fix installs $pkg"
  like "$(line_of slirp4netns)" "^warn +slirp4netns +not installed, nor pasta.*-> fix: sudo $cmd slirp4netns\$" \
    "slirp4netns ($id): missing, with the install command"
  like "$(line_of pasta)" "-> fix: sudo $cmd passt\$" "pasta ($id): the package is passt"
done
CHECK_ENV=()
check
item_is rootlessrt-net ok "rootlessrt-net runs \(libslirp loads\)" "rootlessrt-net: the real one runs"

# The fast path of the container's own connections (issue 30): nf_tables in a user namespace, as
# this kernel has it; and refused, by the helper's own test knob (ROOTLESSRT_NET_FAULT).
item_is net-fast-path ok "nf_tables takes the rules: the container's own TCP and UDP bypass libslirp" \
  "net-fast-path: this kernel takes the rules"
CHECK_ENV=(ROOTLESSRT_NET_FAULT=nft-rule)
check
item_is net-fast-path warn "nf_tables: .*: the container's own TCP goes through libslirp \(slower\)  -> fix: .*modules-load" \
  "net-fast-path: the rules refused: TCP through libslirp, and the modules to load"
CHECK_ENV=(ROOTLESSRT_NET_FAULT=nfq-socket)
check
item_is net-fast-path warn "a refused TCP destination is a reset after connect\(\) \(no SYN gate: NFQUEUE\)" \
  "net-fast-path: no NFQUEUE: TCP still fast, refusals after connect"
CHECK_ENV=(ROOTLESSRT_NET_FAULT=udp-table)
check
item_is net-fast-path warn "its own UDP goes through libslirp \(slower\)" "net-fast-path: the UDP table refused"
CHECK_ENV=()

# ---------------------------------------------------------------- storage

mkdir -p "$T_WORK/store"
check --storage "$T_WORK/store"
fs=$(stat -f -c %T "$T_WORK/store")
item_is storage '(ok|warn)' "$T_WORK/store on " "storage: the directory and its filesystem named"
if [ "$fs" = ext2/ext3 ] || [ "$fs" = tmpfs ] || [ "$fs" = xfs ] || [ "$fs" = btrfs ]; then
  item_is storage ok 'user xattrs work; overlayfs upper works' "storage: xattrs and overlay upper on $fs"
else
  skip "storage on $fs: whether it has user xattrs is not known here"
fi
is "$(find "$T_WORK/store" -mindepth 1 | wc -l)" 0 "storage: nothing left in the directory by the check"
check --storage "$T_WORK/store/not/yet"
item_is storage '(ok|warn)' "$T_WORK/store/not/yet \(not made yet; tried in $T_WORK/store\)" \
  "storage: a directory not made yet is tried in its nearest parent"
is "$(find "$T_WORK/store" -mindepth 1 | wc -l)" 0 "storage: the parent is left as it was"

run "$RRT" check --no-such-flag
is "$rc" 1 "check: an unknown flag fails"
like "$err" 'check: unknown flag --no-such-flag' "check: the unknown flag named"

done_testing
