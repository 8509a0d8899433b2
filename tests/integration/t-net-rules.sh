#!/bin/bash
# t-net-rules.sh: the container's root against the fast path's rules (issue 30): it deletes the UDP
# table, the UDP routing rules, flushes every table and rule, adds rules of its own that aim at the
# helper's listeners and queue, destroys the helper's sockets in its netns (ss -K). Each time: its
# own TCP, UDP and DNS through 10.0.2.3 still work (through libslirp) or fail at once, its helper
# stays idle when it is, and a second container beside it, with its own helper, keeps its fast path
# and gets back exactly its own bytes.
#
# Each case runs in a user+mount+network namespace of the test's own (unshare, as t-net's DNS
# test): its loopback is "the host" (servers on fixed ports), its /etc/resolv.conf names the test's
# resolver on 127.0.0.1:53. The containers run the host's python3 with tests/netbench/net-helper.py.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

NETPY=$TESTS_DIR/netbench/net-helper.py

if ! (exec 3<>/dev/net/tun) 2>/dev/null; then
  skip "/dev/net/tun is missing or not usable by $(id -un)" 1
  done_testing
fi
probe=$(unshare --map-users=auto --map-groups=auto --map-root-user -m -n true 2>&1)
if [ -n "$probe" ] || ! unshare --map-users=auto --map-groups=auto --map-root-user -m -n true 2>/dev/null; then
  skip "cannot make a user+mount+network namespace with unshare --map-users=auto: ${probe:-failed}" 1
  done_testing
fi

cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null; }
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
line() { sed -n "s/^$1: //p" <<<"$2"; } # line KEY TEXT: the value of "KEY: value" in TEXT

# The namespace's "host": a TCP hello (8080), an xfer echo (8081), UDP echoes (8082, 8084, 8085),
# a connection counter (8083), the resolver; then container B (beside), then A (the root who
# breaks its rules), both detached; it waits for both to print "done", and deletes them.
cat >"$T_WORK/inner.sh" <<'EOS' || bail_out "cannot write $T_WORK/inner.sh"
W=$1 PY=$2 NETPY=$3 RRT=$4 ROOT=$5 A=$6 B=$7 X=$8
ip link set lo up && mount --bind "$W/resolv.conf" /etc/resolv.conf || exit 99
export NET_BIND=127.0.0.1
"$PY" "$NETPY" tcp-hello 127.0.0.1 8080 hello-host & s1=$!
"$PY" "$NETPY" xfer-server 8081 & s2=$!
"$PY" "$NETPY" udp-echo 8082 & s3=$!
"$PY" "$NETPY" tcp-nth 127.0.0.1 8083 & s4=$!
"$PY" "$NETPY" udp-echo 8084 & s5=$!
"$PY" "$NETPY" udp-echo 8085 & s6=$!
"$PY" "$NETPY" dns 127.0.0.1 53 rrt-rules.example 192.0.2.77 & s7=$!
sleep 0.5
"$RRT" --root "$ROOT" --debug --log "$X/b.log" run -d -b "$B" b || echo "run b failed"
"$RRT" --root "$ROOT" --debug --log "$X/a.log" run -d -b "$A" a || echo "run a failed"
i=0
while [ $i -lt 1800 ] && ! { grep -q '^done$' "$X/A.out" && grep -q '^done$' "$X/B.out"; } 2>/dev/null; do
  i=$((i + 1))
  sleep 0.1
done
"$RRT" --root "$ROOT" delete -f a
"$RRT" --root "$ROOT" delete -f b
kill $s1 $s2 $s3 $s4 $s5 $s6 $s7
EOS
echo "nameserver 127.0.0.1" >"$T_WORK/resolv.conf" && chmod 0644 "$T_WORK/resolv.conf" ||
  bail_out "cannot write $T_WORK/resolv.conf"

# rulesbundle NAME SCRIPT X: a busybox bundle running SCRIPT as /t.sh with the host's /usr
# (python3, ip, iptables, ss), net-helper.py, X at /x, --host-loopback, MTU 1500, CAP_NET_ADMIN,
# its root the namespace's root.
rulesbundle() {
  local b
  b=$(mkbundle "$1" sh /t.sh) || exit 1
  mkdir -p "$b/rootfs/usr" && ln -s usr/lib "$b/rootfs/lib" && ln -s usr/lib64 "$b/rootfs/lib64" &&
    cp "$NETPY" "$b/rootfs/net-helper.py" && printf '%s\n' "$2" >"$b/rootfs/t.sh" ||
    bail_out "cannot prepare $b"
  cfg "$b" '.mounts += [{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
      {destination: "/x", type: "bind", source: $x, options: ["rbind", "rw"]}] |
    .annotations = {"rootlessrt.network": "slirp", "rootlessrt.host-loopback": "true",
      "rootlessrt.mtu": "1500"} |
    .process.capabilities[] += ["CAP_NET_ADMIN"] |
    .linux.uidMappings = [{containerID: 0, hostID: 0, size: 1}] |
    .linux.gidMappings = [{containerID: 0, hostID: 0, size: 1}] | del(.process.user.additionalGids)' \
    --arg x "$3" || bail_out "cannot edit $b/config.json"
  printf '%s\n' "$b"
}

# A: the fast path before, BREAK (lines of its own), then its own TCP, UDP and DNS; "quiet" while
# the test measures its helper's CPU; then 3 x 8 MiB at the same time as B's.
A_HEAD='exec >/x/A.out 2>&1
P="/usr/bin/python3 /net-helper.py" G=10.0.2.2
echo "before: $($P mss $G 8080)"
echo "udpbefore: $(NET_HOST=$G $P udp-ping 8082 a-before)"'
A_TAIL='echo "tcp: $($P mss $G 8080)"
echo "xfer: $(NET_HOST=$G $P xfer-client 8081 1048576)"
echo "udp: $(NET_HOST=$G $P udp-ping 8084 a-udp)"
echo "udpsock: $(grep -c " 0202000A:$(printf %04X 8084) " /proc/net/udp)"
echo "dns: $(nslookup rrt-rules.example 10.0.2.3 2>&1 | grep -c 192.0.2.77)"
echo "dnssock: $(grep -c " 0302000A:0035 " /proc/net/udp)"
echo quiet
while [ ! -e /x/go ]; do sleep 0.05; done
for i in 1 2 3; do echo "x$i: $(NET_HOST=$G $P xfer-client 8081 8388608)" & done; wait
echo done'
# B: nothing broken; after A broke its rules, its fast path, bytes, UDP and DNS.
B_SCRIPT='exec >/x/B.out 2>&1
P="/usr/bin/python3 /net-helper.py" G=10.0.2.2
echo ready
while [ ! -e /x/go ]; do sleep 0.05; done
echo "tcp: $($P mss $G 8080)"
for i in 1 2 3; do echo "x$i: $(NET_HOST=$G $P xfer-client 8081 8388608)" & done; wait
echo "udp: $(NET_HOST=$G $P udp-ping 8085 b-udp)"
echo "udpsock: $(grep -c " 0202000A:$(printf %04X 8085) " /proc/net/udp)"
echo "dns: $(nslookup rrt-rules.example 10.0.2.3 2>&1 | grep -c 192.0.2.77)"
echo "dnssock: $(grep -c " 0302000A:0035 " /proc/net/udp)"
echo done'

FAST='^([2-9][0-9]{3}|[1-9][0-9]{4}) hello-host$' # loopback-sized segments at MTU 1500: spliced
SLOW='^1[0-9]{3} hello-host$'                      # tap0's: through libslirp

# one_case NAME TCP UDP BREAK: runs A (with BREAK) and B in a namespace of their own; TCP and UDP
# say which path A's own traffic takes after BREAK (fast, slow); sets AOUT and BOUT.
one_case() {
  local name=$1 tcp=$2 udp=$3 x=$T_WORK/x-$1 root=$T_WORK/root-$1 a b ipid h c0 c1 cpu
  mkdir -p "$x" "$root" || bail_out "cannot make $x"
  a=$(rulesbundle "a-$name" "$A_HEAD
$4
$A_TAIL" "$x") b=$(rulesbundle "b-$name" "$B_SCRIPT" "$x")
  timeout -k 5 240 unshare --map-users=auto --map-groups=auto --map-root-user -m -n \
    bash "$T_WORK/inner.sh" "$T_WORK" "$PY" "$NETPY" "$RRT" "$root" "$a" "$b" "$x" >"$x/inner.out" 2>&1 &
  ipid=$!
  # A's helper while A sleeps: 2 s of nothing to do, whatever its root did to the rules.
  if wait_until 120 sh -c 'grep -q "^quiet$" "$1" || ! kill -0 "$2"' sh "$x/A.out" "$ipid" &&
    grep -q '^quiet$' "$x/A.out"; then
    h=$(jq -r '.netHelper // 0' "$root/a/state.json" 2>/dev/null)
    c0=$(cpu_s "$h")
    sleep 2
    c1=$(cpu_s "$h")
    cpu=$(awk -v a="${c0:-0}" -v b="${c1:-99}" 'BEGIN {printf "%.2f", b - a}')
  fi
  touch "$x/go"
  wait "$ipid"
  AOUT=$(cat "$x/A.out" 2>&1) BOUT=$(cat "$x/B.out" 2>&1)
  has_line "$AOUT" '^done$' "$name: A ran to its end" || diag "$AOUT" "$(tail -n 5 "$x/inner.out")"
  like "$(line before "$AOUT")" "$FAST" "$name: before, A's own TCP is spliced"
  [ "$tcp" = fast ] && want=$FAST || want=$SLOW
  like "$(line tcp "$AOUT")" "$want" "$name: after, A's own TCP reaches the host, $tcp"
  is "$(line xfer "$AOUT")" "ok 1048576 bytes each way" "$name: after, 1 MiB both ways, byte-exact"
  is "$(line udp "$AOUT")" a-udp "$name: after, A's datagram is echoed"
  is "$(line udpsock "$AOUT")" "$([ "$udp" = fast ] && echo 1 || echo 0)" \
    "$name: ... $udp (the helper's socket for it in A's netns: $(line udpsock "$AOUT"))"
  is "$(line dns "$AOUT")" 1 "$name: after, A resolves a name through 10.0.2.3"
  is "$(line dnssock "$AOUT")" "$([ "$udp" = fast ] && echo 1 || echo 0)" "$name: ... $udp"
  is "$(grep -c '^x[123]: ok 8388608 bytes each way$' <<<"$AOUT")" 3 \
    "$name: A's 3 x 8 MiB beside B's: each gets back exactly its own bytes"
  like "$(awk -v c="${cpu:-99}" 'BEGIN {print (c <= 0.2) ? "ok" : "busy"}')" '^ok$' \
    "$name: A's helper is idle while A is (${cpu:-?} CPU-s in 2 s)"
  like "$(wc -l <"$x/a.log")" '^([0-9]{1,2}|[1-2][0-9]{2})$' "$name: A's helper logs no flood ($(wc -l <"$x/a.log") lines)"
  like "$(line tcp "$BOUT")" "$FAST" "$name: B beside it: its own TCP still spliced"
  is "$(grep -c '^x[123]: ok 8388608 bytes each way$' <<<"$BOUT")" 3 \
    "$name: B: each of its 3 x 8 MiB gets back exactly its own bytes"
  is "$(line udp "$BOUT"):$(line udpsock "$BOUT")" b-udp:1 "$name: B: its datagram by its helper's fast path"
  is "$(line dns "$BOUT"):$(line dnssock "$BOUT")" 1:1 "$name: B: a name through 10.0.2.3 by the fast path"
  is "$(ls -A "$root" 2>&1 | tr '\n' ' ')$(procs_referencing "$a")$(procs_referencing "$b")" "" \
    "$name: nothing left of A and B"
}

# (a) The UDP table.
one_case udp-table fast slow 'echo "break: $($P nft-delete-table inet rootlessrt-udp)"'
is "$(line break "$AOUT")" deleted "udp-table: A's root deletes table inet rootlessrt-udp"

# (b) The routing rules and the table the marked datagrams are routed by.
one_case udp-routes fast slow 'T=$(ip rule show | sed -n "s/.*fwmark .* lookup \([0-9a-z]*\).*/\1/p" | head -n 1)
for p in $(ip rule show | sed -n "s/^\([0-9]*\):.*fwmark.*/\1/p"); do ip rule del pref $p; done
ip route flush table "$T"
echo "break: $T $(ip rule show | grep -c fwmark) $(ip route show table "$T" | wc -l)"'
like "$(line break "$AOUT")" '^[0-9]+ 0 0$' "udp-routes: A's root deletes the fwmark rule and its table's routes"

# (c) Everything it can: every table (nft flush ruleset), every routing rule but the kernel's own.
one_case flush slow slow 'echo "break: $($P nft-flush)"
for p in $(ip rule show | sed -n "s/^\([0-9]*\):.*/\1/p"); do
  case $p in 0 | 32766 | 32767) ;; *) ip rule del pref $p ;; esac
done
echo "rules: $(ip rule show | wc -l)"'
is "$(line break "$AOUT"):$(line rules "$AOUT")" deleted:3 "flush: A's root deletes every table and rule"

# (d) Rules of its own aimed at the helper: a redirect of 10.0.2.3's TCP to the helper's listener
# (a destination the fast path never takes), of a datagram to its transparent socket, and every
# TCP packet (not first SYNs alone) queued to the helper's SYN gate. Its own traffic to 10.0.2.2
# stays on the fast path; what it aimed gets a reset or nothing, at once; and the host sees one
# connection for each of its connects: the counter's replies are consecutive.
one_case own-rules fast fast 'L=$($P lo-listeners | head -n 1)
UL=$(printf %d 0x$(sed -n "s/^ *[0-9]*: 0100007F:\([0-9A-F]*\) .*/\1/p" /proc/net/udp | head -n 1))
I=/usr/sbin/iptables-nft
$I -t nat -A OUTPUT -p tcp -d 10.0.2.3 -j REDIRECT --to-ports $L &&
  $I -t nat -A OUTPUT -p udp -d 10.0.2.3 --dport 5353 -j REDIRECT --to-ports $UL && echo "break: added $L $UL"
echo "owntcp: $($P probe 10.0.2.3 80)"
echo "ownudp: $(NET_HOST=10.0.2.3 $P udp-ping 5353 own)"
echo "queue: $($I -t mangle -A OUTPUT -p tcp -j NFQUEUE --queue-num 0 --queue-bypass && echo added)"
echo "nth: $($P mss $G 8083 | cut -d" " -f3) $($P mss $G 8083 | cut -d" " -f3) $($P mss $G 8083 | cut -d" " -f3)"'
like "$(line break "$AOUT")" '^added [0-9]+ [0-9]+$' "own-rules: A's root adds its rules (iptables-nft)" ||
  diag "$AOUT"
like "$(line owntcp "$AOUT")" '^connect=(ok got=0 end=(eof|ECONNRESET)|ECONNREFUSED|ECONNRESET)$' \
  "own-rules: 10.0.2.3:80 redirected to the helper's listener: a reset, nothing reached"
is "$(line ownudp "$AOUT")" "no reply" "own-rules: a datagram redirected to the helper's socket: dropped"
is "$(line queue "$AOUT")" added "own-rules: A's root queues every TCP packet to the helper's queue"
like "$(line nth "$AOUT")" '^[0-9]+ [0-9]+ [0-9]+$' "own-rules: three connections to the host's counter answer"
like "$(line nth "$AOUT" | awk '{print ($2 == $1 + 1 && $3 == $2 + 1) ? "one each" : "more"}')" '^one each$' \
  "own-rules: every TCP packet queued to the helper: still one host connection per connect ($(line nth "$AOUT"))"

# (e) The helper's own sockets in its netns destroyed (ss -K: SOCK_DESTROY, which CAP_NET_ADMIN over
# the netns allows): the TCP listener, the UDP socket. The helper notices, and the container's own
# traffic goes through libslirp; the helper does not wake up for the dead sockets.
one_case destroy slow slow 'echo "break: $(/usr/bin/ss -K -t state listening src 127.0.0.1 | grep -c 127.0.0.1) $(/usr/bin/ss -K -u -a src 127.0.0.1 | grep -c 127.0.0.1)"'
is "$(line break "$AOUT")" "1 1" "destroy: A's root destroys the helper's TCP listener and UDP socket"

done_testing
