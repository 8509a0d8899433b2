#!/bin/bash
# bench.sh: iperf3 through a published port (splice and slirp paths) and out through the gateway.
# Usage, as the unprivileged user: tests/net/bench.sh BUILD_DIR [SECONDS]; needs iperf3, nsenter.
set -euo pipefail
build=${1:-/tmp/b-net}
secs=${2:-5}
smoke=$build/net-smoke
hz=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# Debian's slirp4netns for comparison: prints "TARGET HELPER" like net-smoke --hold.
s4n_start() {
  local port=$1 mtu=$2 sock
  sock=$(mktemp -u /tmp/s4n.XXXXXX)
  unshare -Urn sleep 1000 &
  S4N_TARGET=$!
  sleep 0.2
  slirp4netns --configure --mtu="$mtu" --disable-host-loopback --api-socket "$sock" \
    "$S4N_TARGET" tap0 >/dev/null 2>&1 &
  S4N_PID=$!
  while [ ! -S "$sock" ]; do sleep 0.05; done
  python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(json.dumps({"execute": "add_hostfwd", "arguments": {"proto": "tcp",
  "host_addr": "127.0.0.1", "host_port": int(sys.argv[2]), "guest_port": int(sys.argv[2])}}).encode())
r = s.recv(4096).decode()
sys.exit("error" in r)
' "$sock" "$port"
  rm -f "$sock"
}

# run LABEL PORT VIA MTU DIRECTION: one iperf3 run; prints Gbit/s and helper CPU s/GB.
run() {
  local label=$1 port=$2 via=$3 mtu=$4 dir=$5
  local t h
  if [ "$via" = slirp4netns ]; then
    s4n_start "$port" "$mtu"
    t=$S4N_TARGET h=$S4N_PID
  else
    coproc HOLD { "$smoke" --hold "$port" "$via" "$mtu"; }
    read -r t h <&"${HOLD[0]}"
  fi
  local ns=(nsenter --preserve-credentials -U -n -t "$t")
  local args=(-J -t "$secs")
  if [ "$dir" = out ]; then
    # container -> host through libslirp and the gateway address
    iperf3 -s -1 -B 127.0.0.1 -p "$((port + 1))" >/dev/null 2>&1 &
    sleep 0.3
    local c0; c0=$(cpu_ticks "$h")
    local json; json=$("${ns[@]}" iperf3 -c 10.0.2.2 -p "$((port + 1))" "${args[@]}")
  else
    "${ns[@]}" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
    sleep 0.3
    [ "$dir" = down ] && args+=(-R)
    local c0; c0=$(cpu_ticks "$h")
    local json; json=$(iperf3 -c 127.0.0.1 -p "$port" "${args[@]}")
  fi
  local c1; c1=$(cpu_ticks "$h")
  sleep 0.2
  if [ "$via" = slirp4netns ]; then
    kill "$S4N_PID" "$S4N_TARGET"
    wait "$S4N_PID" "$S4N_TARGET" 2>/dev/null || true
  else
    local hold_in=${HOLD[1]}
    exec {hold_in}>&-
    wait "$HOLD_PID" 2>/dev/null || true
  fi
  python3 -c '
import json, sys
d = json.loads(sys.argv[1]); e = d["end"]
s = e.get("sum_received") or e["sum"]
gbit = s["bits_per_second"] / 1e9; gb = s["bytes"] / 1e9
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / int(sys.argv[4])
print("%-34s %6.2f Gbit/s  helper %5.2f CPU-s  %5.2f CPU-s/GB" % (sys.argv[5], gbit, cpu, cpu / gb))
' "$json" "$c0" "$c1" "$hz" "$label"
}

for mtu in 65520 1500; do
  run "host->ctr splice   mtu $mtu" 25201 splice "$mtu" up
  run "ctr->host splice   mtu $mtu" 25211 splice "$mtu" down
  run "host->ctr slirp    mtu $mtu" 25221 slirp "$mtu" up
  run "ctr->host slirp    mtu $mtu" 25231 slirp "$mtu" down
  run "ctr->host gateway  mtu $mtu" 25241 splice "$mtu" out
  if command -v slirp4netns >/dev/null; then
    run "host->ctr slirp4netns mtu $mtu" 25251 slirp4netns "$mtu" up
    run "ctr->host slirp4netns mtu $mtu" 25261 slirp4netns "$mtu" down
  fi
done
