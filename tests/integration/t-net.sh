#!/bin/bash
# t-net.sh: built-in networking through the runtime (issues 6 and 7), as the unprivileged user,
# loopback and the test's own namespaces only: --network none/host, the slirp interface
# (tap0 10.0.2.100/24, route via 10.0.2.2, MTU, resolv.conf), published TCP ports (busybox httpd,
# the splice relay and the slirp path) and UDP ports, host loopback through 10.0.2.2 on and off,
# DNS through 10.0.2.3, annotations alone, bad publish specs, ports in use, byte-exact transfers
# with half-close, 1,000 sequential and 100 concurrent connections with the helper's fd count,
# and the helper's lifetime: exit, SIGKILL (mid-transfer), a failed create.
#
# The containers run the host's python3 (the host's /usr bound read-only into the busybox bundle)
# with tests/netbench/net-helper.py, which is also the host side of every check.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

NETPY=$TESTS_DIR/netbench/net-helper.py
py() { "$PY" "$NETPY" "$@"; }

# ---------------------------------------------------------------- what the host allows

if [ ! -e /dev/net/tun ]; then
  skip "/dev/net/tun does not exist on this host (load the tun module)" 1
  done_testing
fi
if ! (exec 3<>/dev/net/tun) 2>/dev/null; then
  skip "/dev/net/tun is not usable by $(id -un) ($(stat -c %a /dev/net/tun)); chmod 0666 it" 1
  done_testing
fi
[ -x /lib64/ld-linux-x86-64.so.2 ] || [ -x /lib/ld-linux-aarch64.so.1 ] ||
  bail_out "cannot find the host's dynamic loader to run python3 in the containers"

# netbundle NAME ARGS...: a busybox bundle that can also run /usr/bin/python3 /net-helper.py.
netbundle() {
  local b
  b=$(mkbundle "$@") || exit 1
  mkdir -p "$b/rootfs/usr" && ln -s usr/lib "$b/rootfs/lib" && ln -s usr/lib64 "$b/rootfs/lib64" &&
    cp "$NETPY" "$b/rootfs/net-helper.py" || bail_out "cannot prepare $b"
  mkdir -p "$b/rootfs/www" && echo "hello from $1" >"$b/rootfs/www/index.html" ||
    bail_out "cannot prepare $b"
  cfg "$b" '.mounts += [{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]}]' ||
    bail_out "cannot edit $b/config.json"
  printf '%s\n' "$b"
}

free_port() { py free-port || bail_out "no free port on 127.0.0.1"; }
helper_of() { jq -r '.netHelper // 0' "$RRT_ROOT/$1/state.json" 2>/dev/null; }
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
fd_count() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# gone_and_free NAME HELPER PORT...: the helper has exited and each port can be bound again.
gone_and_free() {
  local name=$1 h=$2 p busy="" deadline=$((SECONDS + 3))
  shift 2
  while :; do
    busy=""
    for p in "$@"; do py is-free "${p%/*}" "$([[ $p == */udp ]] && echo udp || echo tcp)" || busy+=" $p"; done
    { [ -n "$h" ] && [ "$h" -gt 0 ] && alive "$h"; } || [ -n "$busy" ] || break
    [ "$SECONDS" -ge "$deadline" ] && break
    sleep 0.1
  done
  if [ -n "$h" ] && [ "$h" -gt 0 ] && alive "$h"; then
    fail "$name: no helper left" "helper $h still runs: $(tr '\0' ' ' <"/proc/$h/cmdline")"
  else
    pass "$name: no helper left"
  fi
  is "${busy# }" "" "$name: the published ports are free again"
}

# ---------------------------------------------------------------- --network none, host

b_info=$(mkbundle info sh -c 'ip -o link; echo; ip -o addr; echo; ip route; echo; cat /etc/resolv.conf; readlink /proc/self/ns/net')
id=$(new_id none)
run rrt run --network none -b "$b_info" "$id"
is "$rc" 0 "--network none: run"; [ "$rc" = 0 ] || diag "$err"
is "$(grep -cE '^[0-9]+: ' <<<"${out%%$'\n\n'*}")" 1 "--network none: one interface"
has_line "$out" '^1: lo: <[^>]*\bUP\b' "--network none: it is lo, and lo is up"
has_line "$out" 'lo +inet 127\.0\.0\.1/8' "--network none: lo has 127.0.0.1/8"
nothing_left "$id" "$b_info"

id=$(new_id default)
run rrt run -b "$b_info" "$id"
is "$(grep -cE '^[0-9]+: ' <<<"${out%%$'\n\n'*}")" 1 "no --network, no annotation: loopback only (none)"

id=$(new_id host)
run rrt run --network host -b "$b_info" "$id"
is "$rc" 0 "--network host: run"; [ "$rc" = 0 ] || diag "$err"
is "$(tail -n 1 <<<"$out")" "$(readlink /proc/self/ns/net)" "--network host: the host's network namespace"

# ---------------------------------------------------------------- the slirp interface

id=$(new_id slirp)
run rrt run --network slirp -b "$b_info" "$id"
is "$rc" 0 "--network slirp: run"; [ "$rc" = 0 ] || diag "$err"
has_line "$out" '^[0-9]+: tap0: <[^>]*\bUP\b.* mtu 65520 ' "slirp: tap0 is up with MTU 65520"
has_line "$out" 'tap0 +inet 10\.0\.2\.100/24 ' "slirp: tap0 has 10.0.2.100/24"
has_line "$out" '^default via 10\.0\.2\.2 dev tap0' "slirp: default route via 10.0.2.2"
has_line "$out" '^1: lo: <[^>]*\bUP\b' "slirp: lo is up"
has_line "$out" '^nameserver 10\.0\.2\.3$' "slirp: /etc/resolv.conf names 10.0.2.3"
nothing_left "$id" "$b_info"

# The generated resolv.conf lives in the state directory: the container writing its
# /etc/resolv.conf (8 MiB would fill a small XDG_RUNTIME_DIR) must reach nothing there.
b_resolv=$(mkbundle resolv sh -c 'rrt-probe write /etc/resolv.conf "nameserver 6.6.6.6" >/run/w 2>&1')
cfg "$b_resolv" '.root.readonly = false' || bail_out "cannot edit $b_resolv/config.json"
id=$(new_id resolv)
run rrt create --network slirp -b "$b_resolv" "$id"
is "$rc" 0 "slirp: create a container that writes its /etc/resolv.conf"
before=$(cat "$RRT_ROOT/$id/resolv.conf" 2>&1)
run rrt start "$id"
wait_status "$id" stopped 20
is "$(cat "$b_resolv/rootfs/run/w" 2>&1)" "EROFS" "slirp: /etc/resolv.conf is read-only inside"
after=$(cat "$RRT_ROOT/$id/resolv.conf" 2>&1)
is "$after" "$before" "slirp: the state directory's resolv.conf is unchanged"
like "$after" '^nameserver 10\.0\.2\.3' "slirp: and still names 10.0.2.3"
rrt delete -f "$id" >/dev/null 2>&1
nothing_left "$id" "$b_resolv"

# A container root with CAP_SYS_ADMIN (podman --privileged, --cap-add SYS_ADMIN) may remount
# its own read-only mounts writable: what it then writes must still not reach the state directory.
b_resolv2=$(mkbundle resolv2 sh -c 'mount -o remount,rw,bind /etc/resolv.conf; rrt-probe write /etc/resolv.conf "nameserver 6.6.6.6" >/run/w 2>&1')
cfg "$b_resolv2" '.root.readonly = false | .process.capabilities[] += ["CAP_SYS_ADMIN"]' ||
  bail_out "cannot edit $b_resolv2/config.json"
id=$(new_id resolv2)
run rrt create --network slirp -b "$b_resolv2" "$id"
is "$rc" 0 "slirp: create a container with CAP_SYS_ADMIN that remounts /etc/resolv.conf rw"
before=$(cat "$RRT_ROOT/$id/resolv.conf" 2>&1)
run rrt start "$id"
wait_status "$id" stopped 20
is "$(cat "$RRT_ROOT/$id/resolv.conf" 2>&1)" "$before" \
  "slirp: remounted writable, its writes still do not reach the state directory's resolv.conf"
rrt delete -f "$id" >/dev/null 2>&1
nothing_left "$id" "$b_resolv2"

# ---------------------------------------------------------------- bad specs and options

# The helper program (rootlessrt-net, beside the runtime or in libexec) missing: create says so.
id=$(new_id nohelper)
run env ROOTLESSRT_NET_HELPER=/nonexistent/rootlessrt-net "$RRT" --root "$RRT_ROOT" run \
  --network slirp -b "$b_info" "$id"
is "$rc" 1 "a missing network helper fails run"
like "$err" 'network helper /nonexistent/rootlessrt-net: No such file or directory' \
  "the error names the helper and why: $err"
nothing_left "$id" "$b_info"

b_bad=$(mkbundle bad true)
bad_spec() { # bad_spec SPEC ERE NAME
  local bid
  bid=$(new_id bad)
  run rrt create -p "$1" -b "$b_bad" "$bid"
  if [ "$rc" -ne 0 ] && [[ $err =~ $2 ]]; then
    pass "$3"
  else
    fail "$3" "exit status $rc" "stderr: $err" "expected: $2"
  fi
  [ -z "$(state_left "$bid")" ] || fail "$3: nothing left" "state: $(state_left "$bid")"
}
bad_spec 8080:abc 'publish "8080:abc": container port: not a number' "-p 8080:abc names the container port"
bad_spec 70000:80 'host port: 70000 is out of range' "-p 70000:80 names the host port and the range"
bad_spec 1.2.3:8080:80 'host address: "1\.2\.3" is not an IP address' "-p 1.2.3:8080:80 names the host address"
bad_spec 8080:80/sctp 'protocol: expected tcp or udp, got "sctp"' "-p 8080:80/sctp names the protocol"
bad_spec 8080 'expected \[HOSTIP:\]HOSTPORT:CTRPORT' "-p 8080 shows the expected form"
bid=$(new_id bad)
run rrt create --network none -p 8080:80 -b "$b_bad" "$bid"
like "$rc:$err" '^[1-9][0-9]*:.*only be published with network slirp, not none' "-p with --network none is refused"
b_badann=$(mkbundle badann true)
cfg "$b_badann" '.annotations["rootlessrt.publish"] = "8080:80,9090:x/udp"'
bid=$(new_id badann)
run rrt create -b "$b_badann" "$bid"
like "$rc:$err" '^[1-9][0-9]*:.*annotation rootlessrt.publish.*"9090:x/udp": container port: not a number' \
  "a bad rootlessrt.publish annotation names the annotation and the field"
cfg "$b_badann" '.annotations = {"rootlessrt.network": "slirp", "rootlessrt.mtu": "70000"}'
run rrt create -b "$b_badann" "$bid"
like "$rc:$err" '^[1-9][0-9]*:.*rootlessrt.mtu: expected a number from 68 to 65521' "a bad rootlessrt.mtu is refused"
nothing_left "$bid" "$b_badann" "nothing left behind by the refused creates"

# ---------------------------------------------------------------- published ports

SERVE='P="/usr/bin/python3 /net-helper.py"
$P udp-echo 5353 & $P xfer-server 9000 & $P short-server 9001 & $P stream-server 9002 &
httpd -f -p 80 -h /www & wait'
b_srv=$(netbundle srv sh -c "$SERVE")

# wait_served NAME HTTPPORT [TCPPORTS...]: httpd answers, the xfer (9000), short (9001) servers too.
wait_served() {
  local name=$1 ph=$2 px=${3:-} ps=${4:-}
  if wait_until 10 curl -fsS -m 2 "http://127.0.0.1:$ph/" &&
    { [ -z "$px" ] || wait_until 10 py xfer-client "$px" 0; } &&
    { [ -z "$ps" ] || wait_until 10 py short-seq "$ps" 1; }; then
    return 0
  fi
  return 1
}

# The main container: every server, published with flags; created with a retry on a port taken
# between the check and the bind.
srv=$(new_id srv)
for _ in 1 2 3; do
  PH=$(free_port) PU=$(free_port) PX=$(free_port) PS=$(free_port) PT=$(free_port)
  run rrt create -p "$PH:80" -p "127.0.0.1:$PU:5353/udp" -p "$PX:9000/tcp" -p "$PS:9001" \
    -p "$PT:9002" -b "$b_srv" "$srv"
  [ "$rc" -eq 0 ] || [[ $err != *"in use"* ]] && break
done
is "$rc" 0 "create with five published ports"; [ "$rc" = 0 ] || diag "$err"
helper=$(helper_of "$srv")
like "$helper" '^[1-9][0-9]*$' "the state names the network helper"
# libslirp and GLib are dlopened by the helper alone: the runtime and init never map them.
srv_init=$(jq -r .pid "$RRT_ROOT/$srv/state.json")
has_line "$(cat "/proc/$helper/maps" 2>&1)" '/libslirp\.so\.0' "the helper has libslirp loaded"
maps=$(cat "/proc/$srv_init/maps" 2>&1)
has_line "$maps" 'rootlessrt' "init's maps are readable (the runtime's code, not yet exec'd)"
if grep -qE 'libslirp|libglib' <<<"$maps"; then
  fail "init maps neither libslirp nor GLib" "$(grep -E 'libslirp|libglib' <<<"$maps" | head -n 2)"
else
  pass "init maps neither libslirp nor GLib"
fi
busy=""
for p in "$PH" "$PX" "$PS" "$PT" "$PU/udp"; do py is-free "${p%/*}" "$([[ $p == */udp ]] && echo udp || echo tcp)" && busy+=" $p"; done
is "${busy# }" "" "when create returns, every published port is bound"
ok "start" rrt start "$srv"
wait_served srv "$PH" "$PX" "$PS" || fail "the servers in the container answer" "$(cat "$T_WORK"/.run*.err | tail -n 5)"

run curl -fsS -m 5 "http://127.0.0.1:$PH/"
is "$out" "hello from srv" "published TCP port: busybox httpd fetched from the host at 127.0.0.1:$PH"
udp_why="the container got it; its reply to 10.0.2.2 is dropped by libslirp when host loopback is off (sotranslate_out; podman#4586)"
run py udp-ping "$PU" "ping-$$"
is "$out" "ping-$$" "published UDP port: a datagram echoed by the container"
[ "$out" = "ping-$$" ] || diag "$udp_why"
run py xfer-client "$PX" $((48 << 20))
is "$out" "ok $((48 << 20)) bytes each way" "48 MiB both ways through the splice relay, byte-exact, with half-close"

# fd baseline, once the relay has served a connection.
base=$(fd_count "$helper")
run py short-seq "$PS" 1000
is "$out" 1000 "1,000 sequential short connections"
run py short-conc "$PS" 100
is "$out" 100 "100 concurrent short connections"
wait_until 5 bash -c '[ "$(find /proc/$1/fd -mindepth 1 -maxdepth 1 | wc -l)" -le "$2" ]' sh "$helper" "$base"
is "$(fd_count "$helper")" "$base" "the helper's fd count is back to its baseline ($base)"

# Annotations alone, no flags: a second container publishing other ports at the same time, with
# the slirp path forced for its TCP port and MTU 1500.
b_ann=$(netbundle ann sh -c "ip -o link show tap0; ip -o addr show tap0; ip route; cat /etc/resolv.conf; $SERVE")
PA=$(free_port) PAU=$(free_port) PAX=$(free_port)
cfg "$b_ann" '.annotations = {"rootlessrt.network": "slirp",
  "rootlessrt.publish": "\($a):80/tcp, 127.0.0.1:\($u):5353/udp,\($x):9000",
  "rootlessrt.mtu": "1500", "rootlessrt.ports-via": "slirp"}' \
  --arg a "$PA" --arg u "$PAU" --arg x "$PAX"
ann=$(new_id ann)
rrt create -b "$b_ann" "$ann" >"$T_WORK/ann.out" 2>&1
is "$?" 0 "annotations alone: create (while the first container runs)"
ok "annotations alone: start" rrt start "$ann"
wait_served ann "$PA" "$PAX"
ann_out=$(cat "$T_WORK/ann.out")
has_line "$ann_out" 'tap0: <[^>]*\bUP\b.* mtu 1500 ' "annotations: rootlessrt.mtu=1500 sets tap0's MTU"
has_line "$ann_out" 'tap0 +inet 10\.0\.2\.100/24 ' "annotations: tap0 has 10.0.2.100/24"
has_line "$ann_out" '^default via 10\.0\.2\.2 dev tap0' "annotations: default route via 10.0.2.2"
has_line "$ann_out" '^nameserver 10\.0\.2\.3$' "annotations: resolv.conf names 10.0.2.3"
run curl -fsS -m 5 "http://127.0.0.1:$PA/"
is "$out" "hello from ann" "annotations: published TCP port (slirp path) answers"
run curl -fsS -m 5 "http://127.0.0.1:$PH/"
is "$out" "hello from srv" "two containers publish different ports at once"
run py udp-ping "$PAU" "ann-$$"
is "$out" "ann-$$" "annotations: published UDP port"
[ "$out" = "ann-$$" ] || diag "$udp_why"
run py xfer-client "$PAX" $((8 << 20))
is "$out" "ok $((8 << 20)) bytes each way" "8 MiB both ways through the slirp path, byte-exact, with half-close"

# A port in use: a clear error at create, nothing left, the owner unaffected.
b_dup=$(netbundle dup sleep 100)
dup=$(new_id dup)
run rrt create -p "$PH:80" -b "$b_dup" "$dup"
like "$rc:$err" "^[1-9][0-9]*:.*publish 127\.0\.0\.1:$PH.*(in use|EADDRINUSE)" "a port in use fails create and says which"
nothing_left "$dup" "$b_dup" "nothing left behind by the create that found its port in use"
run curl -fsS -m 5 "http://127.0.0.1:$PH/"
is "$out" "hello from srv" "the container that owns the port still serves it"

# The container dying mid-transfer: the host side ends promptly, the helper exits (SIGKILL of the
# container's init by its pid, not through the runtime).
pid=$(state_field "$srv" .pid)
dief=$T_WORK/die.out
: >"$dief"
"$PY" "$NETPY" die-client "$PT" "$dief" &
dpid=$!
if wait_until 10 grep -q reading "$dief"; then
  t0=$("$PY" -c 'import time; print("%.3f" % time.monotonic())')
  kill -KILL "$pid"
  wait_pid "$dpid" 10
  end=$(grep ended "$dief")
  read -r _ how t1 <<<"${end/error /error-}"
  like "${how:-none}" '^(eof|error-.*)$' "the container dying mid-transfer ends the host connection (EOF or reset)"
  like "$(awk -v a="$t0" -v b="${t1:-999999}" 'BEGIN {print (b - a < 2) ? "prompt" : "after " b - a " s"}')" \
    '^prompt$' "... within 2 s"
else
  fail "the stream through the published port started" "$(cat "$dief")"
  skip "no stream" 1
  kill "$dpid" 2>/dev/null
fi
wait_status "$srv" stopped 10
gone_and_free "SIGKILL of the container" "$helper" "$PH" "$PX" "$PS" "$PT" "$PU/udp"
ok "delete the killed container" rrt delete "$srv"
nothing_left "$srv" "$b_srv"

ann_helper=$(helper_of "$ann")
ok "kill the annotated container" rrt kill "$ann" KILL
wait_status "$ann" stopped 10
gone_and_free "rrt kill KILL" "$ann_helper" "$PA" "$PAX" "$PAU/udp"
rrt delete "$ann" >/dev/null 2>&1
nothing_left "$ann" "$b_ann"

# ---------------------------------------------------------------- UDP flows past their idle time

# Issue 19.3, as the attack: 200 UDP clients idle past the flow timeout (1 s here, by
# --network-opt udp-idle-timeout), then a new client's datagram and the container's replies on
# every idle flow in one batch of the helper's events (the helper is stopped while both arrive).
# The new client's datagram closes the idle flows; their events later in the batch must not reach
# freed memory. Under ASan the helper's reports go to a file, which must stay absent.
UDPPY=$TESTS_DIR/netbench/udp-idle.py
b_udp=$(netbundle udpidle /usr/bin/python3 /udp-idle.py server 5353 /x)
mkdir -p "$T_WORK/udpx" "$T_WORK/asan" && cp "$UDPPY" "$b_udp/rootfs/udp-idle.py" ||
  bail_out "cannot prepare $b_udp"
cfg "$b_udp" '.mounts += [{destination: "/x", type: "bind", source: $d, options: ["rbind", "rw"]}]' \
  --arg d "$T_WORK/udpx" || bail_out "cannot edit $b_udp/config.json"
udp=$(new_id udpidle)
PI=$(free_port)
run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T_WORK/asan/net" \
  "$RRT" --root "$RRT_ROOT" run -d -p "127.0.0.1:$PI:5353/udp" --network-opt udp-idle-timeout=1 \
  -b "$b_udp" "$udp"
is "$rc" 0 "run -d with --network-opt udp-idle-timeout=1"; [ "$rc" = 0 ] || diag "$err"
uh=$(helper_of "$udp")
if [ "${RRT_ASAN:-0}" = 1 ]; then
  has_line "$(cat "/proc/$uh/maps" 2>&1)" 'libasan' "the network helper is the ASan build"
else
  pass "the network helper is the normal build (RRT_ASAN is not set)"
fi
wait_until 10 py udp-ping "$PI" warm >/dev/null || diag "the UDP server did not answer in 10 s"
run "$PY" "$UDPPY" clients "$PI" 200 1 "$uh" "$T_WORK/udpx"
is "$out" "pinged=200 new=ok late_wrong=0 again=200" \
  "200 idle UDP flows closed by a new client while their replies wait: every client answered right"
[ "$rc" = 0 ] || diag "$err"
if alive "$uh"; then pass "the helper survived"; else fail "the helper survived" "helper $uh is gone"; fi
is "$(cat "$T_WORK"/asan/net.* 2>/dev/null | head -n 20)" "" "no sanitizer report from the helper"
rrt kill "$udp" KILL >/dev/null 2>&1
wait_status "$udp" stopped 10
rrt delete "$udp" >/dev/null 2>&1
nothing_left "$udp" "$b_udp"
bad=$(new_id udpidle)
run rrt create -p "$(free_port):53/udp" --network-opt udp-idle-timeout=0 -b "$b_udp" "$bad"
like "$rc:$err" '^1:.*--(network-opt )?udp-idle-timeout: expected seconds from 1 to 86400, got "0"' \
  "udp-idle-timeout=0 is refused, naming the option"
nothing_left "$bad" "$b_udp"

# ---------------------------------------------------------------- exit, failed create

b_exit=$(mkbundle exit sh -c 'ip -o addr show tap0')
id=$(new_id exit)
P1=$(free_port)
run rrt run -p "$P1:80" -b "$b_exit" "$id"
has_line "$out" 'inet 10\.0\.2\.100/24' "run -p: the container ran with its network"
gone_and_free "after the container exits (run)" "" "$P1"
nothing_left "$id" "$b_exit"

id=$(new_id exit)
run rrt create -p "$P1:80" -b "$b_exit" "$id"
h=$(helper_of "$id")
ok "create, start and let it exit" rrt start "$id"
wait_status "$id" stopped 10
gone_and_free "after the container exits, before delete" "$h" "$P1"
rrt delete "$id" >/dev/null 2>&1
nothing_left "$id" "$b_exit"

b_hook=$(mkbundle hookfail true)
cfg "$b_hook" '.hooks = {createRuntime: [{path: "/bin/sh", args: ["sh", "-c", "echo hook-ran >&2; exit 7"]}]}'
id=$(new_id hookfail)
run rrt create -p "$P1:80" -p "$P1:53/udp" -b "$b_hook" "$id"
like "$rc:$err" '^[1-9][0-9]*:.*hook' "a create that fails after the network started says why"
gone_and_free "after a failed create" "" "$P1" "$P1/udp"
nothing_left "$id" "$b_hook"

# ---------------------------------------------------------------- outbound, host loopback

PO=$(free_port)
hello_out=$T_WORK/hello.out
"$PY" "$NETPY" tcp-hello 127.0.0.1 "$PO" "hello-from-host-$$" >"$hello_out" 2>&1 &
hello_pid=$!
wait_until 5 grep -q listening "$hello_out" || fail "the host's TCP server listens on 127.0.0.1:$PO"
b_out=$(mkbundle out sh -c "nc -w 3 10.0.2.2 $PO </dev/null; echo rc=\$?")
id=$(new_id out)
run rrt run --network slirp -b "$b_out" "$id"
unlike "$out" "hello-from-host" "host loopback off (default): 10.0.2.2:$PO does not reach the host's 127.0.0.1"
cfg "$b_out" '.annotations["rootlessrt.host-loopback"] = "true"'
id=$(new_id out)
run rrt run --network slirp -b "$b_out" "$id"
has_line "$out" "^hello-from-host-$$\$" "rootlessrt.host-loopback=true: 10.0.2.2:$PO reaches the host's 127.0.0.1"
nothing_left "$id" "$b_out"
kill "$hello_pid" 2>/dev/null
wait "$hello_pid" 2>/dev/null

# ---------------------------------------------------------------- the container's own connections

# Issue 30: TCP the container starts is redirected by nf_tables rules in its netns to the helper,
# which connects from the host and splices: the kernel's TCP stack on both sides, no segment
# through libslirp. Here to the host's loopback through 10.0.2.2 (--host-loopback), at MTU 1500;
# the host's servers listen on 127.0.0.1 only. A connection of the container's own at MTU 1500
# then has loopback-sized segments (its MSS): on the slirp path it has tap0's, 1448.
hostsrv() { # hostsrv VERB ARGS...: a server of net-helper.py on the host's 127.0.0.1; prints its pid
  NET_BIND=127.0.0.1 "$PY" "$NETPY" "$@" >/dev/null 2>&1 &
  echo $!
}
ports_up() { # ports_up PORT...: each accepts a TCP connection on 127.0.0.1
  local p
  for p in "$@"; do "$PY" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$p" || return 1; done
}
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null; }
# outbundle NAME SCRIPT: a netbundle running SCRIPT (a file /t.sh in it), with --host-loopback and
# MTU 1500 by annotation, and CAP_NET_ADMIN (for the root who removes the rules).
outbundle() {
  local b
  b=$(netbundle "$1" sh /t.sh) || exit 1
  printf '%s\n' "$2" >"$b/rootfs/t.sh" || bail_out "cannot write $b/rootfs/t.sh"
  cfg "$b" '.annotations = {"rootlessrt.network": "slirp", "rootlessrt.host-loopback": "true",
    "rootlessrt.mtu": "1500"} |
    .process.capabilities[] += ["CAP_NET_ADMIN"]' || bail_out "cannot edit $b/config.json"
  printf '%s\n' "$b"
}
# out_of FILE: waits (60 s) for the line "done" in FILE, prints FILE.
out_of() { wait_until 60 grep -q '^done$' "$1"; cat "$1"; }

PO=$(free_port) PX=$(free_port) PHC=$(free_port) PS=$(free_port) PK=$(free_port) PC=$(free_port)
PU=$(free_port) PN=$(free_port)
HC_N=300000
srv_pids=" $(hostsrv tcp-hello 127.0.0.1 "$PO" "hello-from-host-$$")"
srv_pids+=" $(hostsrv xfer-server "$PX") $(hostsrv hc-server "$PHC" "$HC_N" "$T_WORK/hc.log")"
srv_pids+=" $(hostsrv short-server "$PS") $(hostsrv count-server "$PK") $(hostsrv udp-echo "$PU")"
srv_pids+=" $(hostsrv tcp-nth 127.0.0.1 "$PN")"
# ports_up's own connection to $PN is its "conn 1".
wait_until 10 ports_up "$PO" "$PX" "$PHC" "$PS" "$PK" "$PN" ||
  fail "the host's test servers listen" "ports $PO $PX $PHC $PS $PK $PN"
OUT_SCRIPT='P="/usr/bin/python3 /net-helper.py" G=10.0.2.2
echo "mss: $($P mss $G '$PO')"
echo "refused: $($P connect $G '$PC')"
echo "sport: $(NET_HOST=$G $P same-sport '$PO' '$PN')"
echo "xfer: $(NET_HOST=$G $P xfer-client '$PX' 4194304)"
echo "hc: $(NET_HOST=$G $P hc-client '$PHC' 1000000)"
echo "seq: $(NET_HOST=$G $P short-seq '$PS' 300)"
echo "conc: $(NET_HOST=$G $P short-conc '$PS' 50)"
$P short-server 9005 &
i=0; while [ $i -lt 100 ] && ! $P connect 127.0.0.1 9005 | grep -q ^ok; do i=$((i + 1)); sleep 0.1; done
echo "self: $(NET_HOST=10.0.2.100 $P short-seq 9005 5) $($P short-seq 9005 5)"
for p in $($P lo-listeners); do [ "$p" = 9005 ] || echo "loop $p: $($P probe 127.0.0.1 $p)"; done
echo "after: $($P mss $G '$PO')"
echo ready
while [ ! -e /x/go ]; do sleep 0.05; done
echo "count: $(NET_HOST=$G $P count-client '$PK' 1073741824)"
echo "udp: $(NET_HOST=$G $P udp-ping '$PU' udp-from-ctr)"
echo "udpsock: $(grep -ci " 0202000A:$(printf %04X '$PU') " /proc/net/udp)"
echo "udprefused: $($P udp-refused $G '$PC')"
echo "big: $(NET_HOST=$G $P udp-ping '$PU' $(head -c 30000 /dev/zero | tr "\\0" u) | wc -c)"
echo done
exec sleep 600'
b_own=$(outbundle own "$OUT_SCRIPT")
mkdir -p "$T_WORK/own-x" || bail_out "cannot make $T_WORK/own-x"
cfg "$b_own" '.mounts += [{destination: "/x", type: "bind", source: $d, options: ["rbind", "rw"]}]' \
  --arg d "$T_WORK/own-x" || bail_out "cannot edit $b_own/config.json"
own=$(new_id own)
rrt create -b "$b_own" "$own" >"$T_WORK/own.out" 2>"$T_WORK/own.err"
is "$?" 0 "the container's own connections: create"
own_helper=$(helper_of "$own")
ok "the container's own connections: start" rrt start "$own"
# The helper's CPU for the 1 GiB alone: from the container's "ready" to its count.
wait_until 60 grep -q '^ready$' "$T_WORK/own.out"
cpu0=$(cpu_s "$own_helper")
touch "$T_WORK/own-x/go"
wait_until 60 grep -q '^count: ' "$T_WORK/own.out"
cpu1=$(cpu_s "$own_helper")
cpu=$(awk -v a="${cpu0:-0}" -v b="${cpu1:-99}" 'BEGIN {printf "%.2f", b - a}')
got=$(out_of "$T_WORK/own.out")
mss=$(sed -n 's/^mss: \([0-9]*\) .*/\1/p' <<<"$got")
has_line "$got" "^mss: [0-9]+ hello-from-host-$$\$" "a connection to 10.0.2.2 reaches the host's 127.0.0.1 (--host-loopback)"
like "${mss:-0}" '^([2-9][0-9]{3}|[1-9][0-9]{4})$' \
  "... with loopback-sized segments at MTU 1500 (MSS ${mss:-none}): the kernel's TCP stack, not libslirp's"
like "$(sed -n 's/^refused: //p' <<<"$got")" '^ECONNREFUSED (0\.|1\.)' \
  "a refused destination refuses the container's connect() at once"
# One source port to two destinations: the second's conntrack reply tuple is the first's (one
# listener for all), NAT gives it another port, and it must still get the host connection made
# for its SYN: the host's server sees one connection, not that one left idle and a second.
like "$(sed -n 's/^sport: //p' <<<"$got")" "^[0-9]+: hello-from-host-$$ \| conn 2 [0-4]\.[0-9]\$" \
  "one source port to two destinations in turn: the second is the host's one connection for it"
has_line "$got" "^xfer: ok 4194304 bytes each way\$" "4 MiB both ways, byte-exact, the container half-closing first"
hc_want=$("$PY" -c 'import hashlib, sys; print(hashlib.sha256(b"s" * int(sys.argv[1])).hexdigest())' "$HC_N")
hc=$(sed -n 's/^hc: //p' <<<"$got")
like "$hc" "^ok got $HC_N sha256 $hc_want sent 1000000 [0-9a-f]{64}\$" \
  "the host half-closing first: the container reads all $HC_N bytes and EOF, and still sends"
is "$(tail -n 1 "$T_WORK/hc.log" 2>/dev/null)" "got 1000000 ${hc##* }" "... and the host gets all it sent after"
has_line "$got" '^seq: 300$' "300 sequential short connections"
has_line "$got" '^conc: 50$' "50 concurrent short connections"
has_line "$got" '^self: 5 5$' "the container's own port 9005 answers it on 10.0.2.100 and 127.0.0.1"
loops=$(grep '^loop ' <<<"$got")
like "$(wc -l <<<"$loops")" '^[1-9]' "the helper's listener is visible in the container ($(tr '\n' ';' <<<"$loops"))"
unlike "$loops" 'got=[1-9]|timeout|connect=(ok got=0 end=[^Ee]|[^oE])' \
  "connecting to the helper's own listener gets nothing (a reset or EOF), at once"
has_line "$got" "^after: [0-9]+ hello-from-host-$$\$" "... and the helper still serves the next connection"
has_line "$got" '^count: 1073741824$' "1 GiB to the host, counted there"
like "$(awk -v c="${cpu:-99}" 'BEGIN {print (c / 1.07 <= 0.5) ? "ok" : "high"}')" '^ok$' \
  "the helper's CPU for it: ${cpu:-?} s (at most 0.5 s/GB; libslirp needs about 4)"
has_line "$got" '^udp: udp-from-ctr$' "a datagram to 10.0.2.2 is echoed by the host's 127.0.0.1"
has_line "$got" '^udpsock: 1$' "... through the helper's transparent socket at 10.0.2.2:$PU in the container's netns"
has_line "$got" '^big: 30001$' "a datagram of 30,000 bytes at MTU 1500, both ways"
like "$(sed -n 's/^udprefused: //p' <<<"$got")" '^ECONNREFUSED (0|1)\.' \
  "a datagram to a port nothing listens on: ECONNREFUSED at once (ICMP port unreachable, as libslirp's)"
ok "kill the container" rrt kill "$own" KILL
wait_status "$own" stopped 10
gone_and_free "the container's own connections" "$own_helper"
rrt delete "$own" >/dev/null 2>&1
nothing_left "$own" "$b_own"

# Two containers at once, each moving its own random bytes: neither gets the other's.
two_script='P="/usr/bin/python3 /net-helper.py"
for i in 1 2 3; do echo "x$i: $(NET_HOST=10.0.2.2 $P xfer-client '$PX' 8388608)"; done
echo done'
b_t1=$(outbundle two1 "$two_script") b_t2=$(outbundle two2 "$two_script")
t1=$(new_id two) t2=$(new_id two)
rrt create -b "$b_t1" "$t1" >"$T_WORK/t1.out" 2>&1 && rrt create -b "$b_t2" "$t2" >"$T_WORK/t2.out" 2>&1
rrt start "$t1" && rrt start "$t2"
o1=$(out_of "$T_WORK/t1.out") o2=$(out_of "$T_WORK/t2.out")
is "$(grep -c ' ok 8388608 bytes each way' <<<"$o1$o2")" 6 "two containers at once: each gets back exactly its own bytes"
for c in "$t1" "$t2"; do wait_status "$c" stopped 10; rrt delete -f "$c" >/dev/null 2>&1; done
nothing_left "$t1" "$b_t1"
nothing_left "$t2" "$b_t2"

# The container's root removing the rules: its connections take the slirp path, no more.
rm_script='P="/usr/bin/python3 /net-helper.py"
echo "before: $($P mss 10.0.2.2 '$PO')"
echo "delete: $($P nft-delete-table inet rootlessrt)"
echo "after: $($P mss 10.0.2.2 '$PO')"
echo "xfer: $(NET_HOST=10.0.2.2 $P xfer-client '$PX' 1048576)"
echo done'
b_rm=$(outbundle rmrules "$rm_script")
id=$(new_id rmrules)
run rrt run -b "$b_rm" "$id"
is "$(sed -n 's/^delete: //p' <<<"$out")" deleted "the container's root deletes the table of rules"
like "$(sed -n 's/^before: \([0-9]*\) .*/\1/p' <<<"$out")" '^[0-9]{4,5}$' "before: the fast path"
like "$(sed -n 's/^after: //p' <<<"$out")" "^1[0-9]{3} hello-from-host-$$\$" \
  "after: its connection still reaches the host, through libslirp (MSS of MTU 1500)"
has_line "$out" '^xfer: ok 1048576 bytes each way$' "... byte-exact"
nothing_left "$id" "$b_rm"

# --ipv6: [fd00::2] is the host's [::1] with --host-loopback, by the same path (once libslirp's
# router advertisement gave tap0 its address: up to 10 s).
if grep -q '^00000000000000000000000000000001 .* lo$' /proc/net/if_inet6 2>/dev/null; then
  P6=$(free_port)
  srv_pids+=" $(hostsrv tcp-hello ::1 "$P6" "hello6-$$")"
  b_v6=$(outbundle v6 'P="/usr/bin/python3 /net-helper.py"
i=0; while [ $i -lt 100 ] && $P connect fd00::2 '$PC' | grep -qE "^E(NETUNREACH|ADDRNOTAVAIL)"; do i=$((i + 1)); sleep 0.1; done
echo "mss6: $($P mss fd00::2 '$P6')"
echo "refused6: $($P connect fd00::2 '$PC')"
echo done')
  cfg "$b_v6" '.annotations["rootlessrt.ipv6"] = "true"'
  id=$(new_id v6)
  wait_until 5 "$PY" -c 'import socket, sys; socket.create_connection(("::1", int(sys.argv[1])), 1).close()' "$P6"
  run rrt run -b "$b_v6" "$id"
  like "$(sed -n 's/^mss6: //p' <<<"$out")" "^([2-9][0-9]{3}|[1-9][0-9]{4}) hello6-$$\$" \
    "--ipv6: [fd00::2] reaches the host's [::1], spliced (loopback-sized segments)"
  like "$(sed -n 's/^refused6: //p' <<<"$out")" '^ECONNREFUSED (0\.|1\.)' "--ipv6: refused at once"
  nothing_left "$id" "$b_v6"
else
  skip "the host's lo has no ::1: no IPv6 loopback to reach" 3
fi

# --host-loopback off: the host's 127.0.0.1 stays out of reach, on the fast path too.
b_nolo=$(outbundle nolo 'echo "nolo: $(/usr/bin/python3 /net-helper.py connect 10.0.2.2 '$PO')"; echo done')
cfg "$b_nolo" '.annotations["rootlessrt.host-loopback"] = "false"'
id=$(new_id nolo)
run rrt run -b "$b_nolo" "$id"
unlike "$(sed -n 's/^nolo: //p' <<<"$out")" '^ok' "host loopback off: 10.0.2.2:$PO does not connect ($(sed -n 's/^nolo: //p' <<<"$out"))"
nothing_left "$id" "$b_nolo"

# The kernel refusing what the fast path needs, step by step (ROOTLESSRT_NET_FAULT, a test knob:
# that step fails with EPERM, or nft-rule: a rule the kernel lacks): the slirp path, one debug
# line saying so; without the SYN gate's queue, the fast path connecting after accept; without
# the TCP routes, the fast path in tap0's segment size.
b_f=$(outbundle fault 'P="/usr/bin/python3 /net-helper.py"
echo "mss: $($P mss 10.0.2.2 '$PO')"
echo "udp: $(NET_HOST=10.0.2.2 $P udp-ping '$PU' fault-udp)"
echo done')
for step in socket bind listen nft-socket nft-send nft-rule nfq-socket route udp udp-table; do
  id=$(new_id fault)
  run env ROOTLESSRT_NET_FAULT=$step "$RRT" --root "$RRT_ROOT" --debug --log "$T_WORK/fault-$step.log" \
    run -b "$b_f" "$id"
  m=$(sed -n 's/^mss: //p' <<<"$out")
  slow=$(grep -c "own connections go through libslirp" "$T_WORK/fault-$step.log")
  if [ "$step" = nfq-socket ]; then
    like "$m" "^([2-9][0-9]{3}|[1-9][0-9]{4}) hello-from-host-$$\$" "fault at $step: the fast path, connecting after accept"
    is "$(grep -c 'no SYN gate' "$T_WORK/fault-$step.log"):$slow" 1:0 "fault at $step: one debug line says there is no gate"
  elif [ "${step%-table}" = udp ]; then
    like "$m" "^([2-9][0-9]{3}|[1-9][0-9]{4}) hello-from-host-$$\$" "fault at $step: TCP keeps the fast path"
    is "$(grep -c 'own datagrams go through libslirp' "$T_WORK/fault-$step.log"):$slow" 1:0 \
      "fault at $step: one debug line says UDP goes through libslirp"
  elif [ "$step" = route ]; then
    like "$m" "^1[0-9]{3} hello-from-host-$$\$" "fault at $step: the fast path in segments of tap0's MTU"
    is "$(grep -c "keeps tap0's MTU" "$T_WORK/fault-$step.log"):$slow" 1:0 "fault at $step: one debug line says so"
  else
    like "$m" "^1[0-9]{3} hello-from-host-$$\$" "fault at $step: the connection goes through libslirp"
    is "$slow" 1 "fault at $step: one debug line says so"
  fi
  is "$(sed -n 's/^udp: //p' <<<"$out")" fault-udp "fault at $step: a datagram to 10.0.2.2 still comes back"
  nothing_left "$id" "$b_f"
done

for p in $srv_pids; do kill "$p" 2>/dev/null; done

# ---------------------------------------------------------------- DNS through 10.0.2.3

# libslirp forwards 10.0.2.3 to the first nameserver of the helper's /etc/resolv.conf. The test
# gives the runtime its own: a user namespace (uid 0 there, the user's subordinate ids mapped by
# unshare --map-users=auto), a mount namespace whose /etc/resolv.conf says 127.0.0.1, and a network
# namespace where the test's resolver listens on 127.0.0.1:53. The runtime then runs as uid 0 of a
# user namespace, as under rootless podman.
b_dns=$(mkbundle dns nslookup rrt-dns-test.example 10.0.2.3)
cfg "$b_dns" '.linux.uidMappings = [{containerID: 0, hostID: 0, size: 1}] |
  .linux.gidMappings = [{containerID: 0, hostID: 0, size: 1}] | del(.process.user.additionalGids)'
echo "nameserver 127.0.0.1" >"$T_WORK/resolv.conf"
chmod 0644 "$T_WORK/resolv.conf"
dns_probe=$(unshare --map-users=auto --map-groups=auto --map-root-user -m -n true 2>&1)
if [ -n "$dns_probe" ] || ! unshare --map-users=auto --map-groups=auto --map-root-user -m -n true 2>/dev/null; then
  skip "DNS: cannot make a user+mount+network namespace with unshare --map-users=auto: ${dns_probe:-failed}" 3
else
  id=$(new_id dns)
  run timeout -k 5 30 unshare --map-users=auto --map-groups=auto --map-root-user -m -n sh -c '
    ip link set lo up && mount --bind "$1" /etc/resolv.conf || exit 99
    "$2" "$3" dns 127.0.0.1 53 rrt-dns-test.example 192.0.2.77 & r=$!
    sleep 0.3
    "$4" --root "$5" --debug --log "$8" run --network slirp -b "$6" "$7"; rc=$?
    kill $r; exit $rc' sh "$T_WORK/resolv.conf" "$PY" "$NETPY" "$RRT" "$T_WORK/dns-root" "$b_dns" "$id" \
    "$T_WORK/dns.log"
  is "$rc" 0 "DNS: nslookup through 10.0.2.3 exits 0"
  [ "$rc" = 0 ] || diag "$err"
  has_line "$out" '^Address:? +192\.0\.2\.77$' "DNS: the name resolves through 10.0.2.3 to the test resolver's answer"
  has_line "$(cat "$T_WORK/dns.log")" "own connections by the fast path: TCP .*UDP" \
    "DNS: by the helper's UDP path (its debug line says so)"
fi

# The outside, as a network namespace of the test's own (unshare, as the DNS test below: the
# runtime runs as uid 0 of a user namespace): a veth whose end v0 is 192.0.2.1/24, a server there.
# The container (host loopback off) reaches 192.0.2.1 by the fast path; a port nothing listens on
# (TCP and UDP), a network with no route and an address no one answers on 192.0.2.0/24 fail as on
# the slirp path (--network-opt outbound-via=slirp, the same container run again): the same errno,
# as soon.
b_ext=$(netbundle ext sh /t.sh)
cat >"$b_ext/rootfs/t.sh" <<'EOS' || bail_out "cannot write $b_ext/rootfs/t.sh"
P="/usr/bin/python3 /net-helper.py"
echo "mss: $($P mss 192.0.2.1 8080)"
echo "refused: $($P connect 192.0.2.1 8081)"
echo "nonet: $($P connect 198.51.100.1 80)"
echo "nohost: $($P connect 192.0.2.99 80 6)"
echo "udprefused: $($P udp-refused 192.0.2.1 8081)"
EOS
cfg "$b_ext" '.annotations = {"rootlessrt.network": "slirp", "rootlessrt.mtu": "1500"} |
  .linux.uidMappings = [{containerID: 0, hostID: 0, size: 1}] |
  .linux.gidMappings = [{containerID: 0, hostID: 0, size: 1}] | del(.process.user.additionalGids)' ||
  bail_out "cannot edit $b_ext/config.json"
if [ -n "$dns_probe" ]; then
  skip "the outside: cannot make a user+mount+network namespace with unshare --map-users=auto: $dns_probe" 12
else
  id=$(new_id ext) id2=$(new_id ext)
  run timeout -k 5 90 unshare --map-users=auto --map-groups=auto --map-root-user -m -n sh -c '
    ip link set lo up && ip link add v0 type veth peer name v1 && ip addr add 192.0.2.1/24 dev v0 &&
      ip link set v0 up && ip link set v1 up || exit 99
    NET_BIND=192.0.2.1 "$1" "$2" tcp-hello 192.0.2.1 8080 hello-outside & s=$!
    sleep 0.3
    "$3" --root "$4" run -b "$5" "$6"; echo "rc=$?"
    "$3" --root "$4" run --network-opt outbound-via=slirp -b "$5" "$7"; echo "rc=$?"
    kill $s' sh "$PY" "$NETPY" "$RRT" "$T_WORK/ext-root" "$b_ext" "$id" "$id2"
  [ "$rc" = 0 ] || diag "$err"
  fast=$(sed -n '1,/^rc=/p' <<<"$out") slow=$(sed -n '/^rc=/,$p' <<<"$out" | tail -n +2)
  is "$(grep -c '^rc=0$' <<<"$out")" 2 "the outside: both runs exit 0"
  like "$(sed -n 's/^mss: //p' <<<"$fast")" '^([2-9][0-9]{3}|[1-9][0-9]{4}) hello-outside$' \
    "the outside: 192.0.2.1 is reached by the fast path (loopback-sized segments at MTU 1500)"
  like "$(sed -n 's/^mss: //p' <<<"$slow")" '^1[0-9]{3} hello-outside$' "... and by libslirp with outbound-via=slirp"
  for what in refused nonet nohost udprefused; do
    f=$(sed -n "s/^$what: //p" <<<"$fast") s=$(sed -n "s/^$what: //p" <<<"$slow")
    is "${f%% *}" "${s%% *}" "the outside, $what: the fast path fails as libslirp does (${s:-nothing})"
    like "$(awk -v a="${f#* }" -v b="${s#* }" 'BEGIN {print (a + 0 <= b + 1.5) ? "ok" : a " s against " b " s"}')" \
      '^ok$' "the outside, $what: as soon (${f#* } s, libslirp ${s#* } s)"
    [ "$what" = nohost ] && is "${f%% *}" timeout "the outside: no answer from 192.0.2.99 is a timeout, as libslirp's (6 s here)"
  done
fi

# ---------------------------------------------------------------- the slirp4netns hook beside

hook=$CONTRIB_DIR/hooks/slirp4netns.sh
if ! command -v slirp4netns >/dev/null; then
  skip "slirp4netns is not installed: the contrib hook cannot be tried" 2
else
  b_s4n=$(mkbundle s4n sh -c 'ip -o addr show tap0; ip route')
  cfg "$b_s4n" '.hooks = {createRuntime: [{path: $h, args: ["slirp4netns.sh", "tap0"],
    env: ["PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"], timeout: 30}]}' --arg h "$hook"
  # Beside a built-in network container that is running.
  b_side=$(netbundle side sleep 30)
  side=$(new_id side)
  run rrt run -d --network slirp -p "$(free_port):80" -b "$b_side" "$side"
  id=$(new_id s4n)
  run rrt run -b "$b_s4n" "$id"
  has_line "$out" 'tap0 +inet 10\.0\.2\.100/24' "the contrib slirp4netns hook still configures tap0"
  is "$(status_of "$side")" running "... while a built-in slirp container runs beside it"
  nothing_left "$id" "$b_s4n"
  rrt kill "$side" KILL >/dev/null 2>&1
  wait_status "$side" stopped 10
  rrt delete "$side" >/dev/null 2>&1
fi

done_testing
