#!/bin/bash
# bench-net.sh RUNTIME: published ports and the container's own connections, throughput and cost,
# side by side in one run (issues 6, 7, 30).
#
# For rootlessrt (the splice relay and the fast path of the container's own connections),
# rootlessrt with libslirp forced for both (rootlessrt.ports-via=slirp, outbound-via=slirp),
# Debian's slirp4netns (--configure --mtu=N, the port added through its API socket) and Debian's
# pasta (passt package) where installed, each at MTU 1500 and 65520, host loopback reachable
# (10.0.2.2; pasta's gateway address):
#   - published port: iperf3 host->container and container->host (-R), one TCP stream
#   - the container's own connection: iperf3 in the container (exec) to the host's 127.0.0.1,
#     container->host and host->container (-R), one TCP stream
#   - the network helper's CPU seconds (user+sys, /proc/PID/stat) per GB moved, for each
#   - connections per second: sequential HTTP/1.0 GETs (rrt-netbench.c: a C client and a server
#     that does not fork), from the host to the container through the published port, and from
#     the container to the host
#   - UDP: 64-byte datagrams from the container to an echo on the host with 128 in flight
#     (rrt-netbench.c), echoes per second: both directions, as DNS asks and is answered; and the
#     helper's CPU microseconds per echo
# and the ratios of rootlessrt against slirp4netns and pasta, with issue 30's targets.
#
# The container is the same rootlessrt busybox bundle each time, with the host's /usr (iperf3,
# python3) bound read-only into it; for slirp4netns and pasta it is created with --network none
# and the tool is attached to its network namespace before start. The container's own runs are
# `exec`s in it; their servers listen on the host's 127.0.0.1.
#
# As root the measurements are made by the unprivileged user BENCH_USER (rrt-test). Knobs:
# BENCH_NET_SECS (5) seconds per iperf3 run, BENCH_NET_CONN_SECS (3, also the UDP run's),
# BENCH_NET_MTUS ("1500 65520"), BENCH_NET_ONLY ("splice slirp slirp4netns pasta").
# Needs iperf3 (Debian package iperf3), busybox and rrt-netbench (make build/rrt-netbench puts it beside
# the runtime; else it is built here with cc); slirp4netns and passt are compared when installed.
set -u

die() {
  echo "bench-net: $*" >&2
  exit 1
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=${BENCH_NET_SECS:-5}
conn_secs=${BENCH_NET_CONN_SECS:-3}
mtus=${BENCH_NET_MTUS:-1500 65520}
only=${BENCH_NET_ONLY:-splice slirp slirp4netns pasta}

# ---------------------------------------------------------------- as root: stage, become the user

if [ "${1:-}" != __user ]; then
  [ $# -eq 1 ] || die "usage: bench-net.sh RUNTIME"
  runtime=$(readlink -f "$1") || die "no runtime $1"
  [ -x "$runtime" ] || die "$1 is not executable"
  command -v iperf3 >/dev/null || die "iperf3 is not installed (Debian package iperf3)"
  stage=$(mktemp -d /tmp/rrt-bench-net.XXXXXX) || die "mktemp failed"
  trap 'rm -rf "$stage"' EXIT
  chmod 0755 "$stage"
  cp "$runtime" "$stage/rootlessrt" && cp "$here/bench-net.sh" "$here/net-helper.py" \
    "$here/../../contrib/mkbundle.sh" "$stage/" || die "cannot copy to $stage"
  # The network helper program, found beside the runtime; rrt-netbench too, or built here.
  cp "$(dirname "$runtime")/rootlessrt-net" "$stage/" || die "no rootlessrt-net beside $runtime"
  if [ -x "$(dirname "$runtime")/rrt-netbench" ]; then
    cp "$(dirname "$runtime")/rrt-netbench" "$stage/"
  else
    cc -std=gnu11 -D_GNU_SOURCE -O2 -o "$stage/rrt-netbench" "$here/rrt-netbench.c" ||
      die "no rrt-netbench beside $runtime, and cc cannot build $here/rrt-netbench.c"
  fi
  chmod -R a+rX "$stage"
  mkdir "$stage/work"
  as_user=()
  if [ "$(id -u)" -eq 0 ]; then
    user=${BENCH_USER:-rrt-test}
    uid=$(bash "$here/../../contrib/ensure-user.sh" "$user") || die "cannot set up the user $user"
    chown "$uid:$(id -g "$user")" "$stage/work"
    as_user=(setpriv "--reuid=$uid" "--regid=$(id -g "$user")" --init-groups --reset-env)
  fi
  cd / || exit 1
  "${as_user[@]}" env PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin BENCH_NET_SECS="$secs" \
    BENCH_NET_CONN_SECS="$conn_secs" BENCH_NET_MTUS="$mtus" BENCH_NET_ONLY="$only" \
    bash "$stage/bench-net.sh" __user "$stage"
  exit
fi

# ---------------------------------------------------------------- as the user

stage=$2
rrt=$stage/rootlessrt
work=$stage/work
root=$work/state
py() { /usr/bin/python3 "$stage/net-helper.py" "$@"; }
hz=$(getconf CLK_TCK)
[ -r /dev/net/tun ] && [ -w /dev/net/tun ] || die "/dev/net/tun is not usable by $(id -un)"

bundle=$work/bundle
bash "$stage/mkbundle.sh" "$rrt" "$bundle" -- sh -c \
  'iperf3 -s -p 5201 >/dev/null 2>&1 & /rrt-netbench http 0.0.0.0 80 & wait' >"$work/mkbundle.log" 2>&1 ||
  die "cannot make the bundle: $(cat "$work/mkbundle.log")"
mkdir -p "$bundle/rootfs/usr" "$bundle/rootfs/www" && ln -s usr/lib "$bundle/rootfs/lib" &&
  ln -s usr/lib64 "$bundle/rootfs/lib64" && echo ok >"$bundle/rootfs/www/index.html" &&
  cp "$stage/rrt-netbench" "$bundle/rootfs/rrt-netbench" || die "cannot prepare $bundle"

# The host's servers for the container's own connections, on 127.0.0.1 only.
hp_iperf=$(py free-port) hp_http=$(py free-port) hp_udp=$(py free-port)
iperf3 -s -B 127.0.0.1 -p "$hp_iperf" >/dev/null 2>&1 &
host_pids=$!
"$stage/rrt-netbench" http 127.0.0.1 "$hp_http" &
host_pids+=" $!"
"$stage/rrt-netbench" echo 127.0.0.1 "$hp_udp" &
host_pids+=" $!"
trap 'kill $host_pids 2>/dev/null' EXIT
# iperf3 -s needs a writable /tmp (a mkstemp file for its buffers); the rootfs is read-only.
jq '.mounts += [{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
  {destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777"]}]' \
  "$bundle/config.json" >"$bundle/c.json" && mv "$bundle/c.json" "$bundle/config.json" || die "jq"

cpu_ticks() { [ -n "$1" ] && awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

HELPER="" CID=""
# up KIND MTU PORT_IPERF PORT_HTTP: a running container whose ports 5201 and 80 are published on
# 127.0.0.1 by KIND; sets HELPER (the pid whose CPU is counted). 1 with a reason on failure.
up() {
  local kind=$1 mtu=$2 pi=$3 ph=$4 pid sock ann
  CID=bench-$kind-$mtu-$$ HELPER=""
  case $kind in
    splice | slirp)
      ann=$(jq -n --arg m "$mtu" --arg v "$kind" \
        '{"rootlessrt.mtu": $m, "rootlessrt.ports-via": $v, "rootlessrt.outbound-via": $v,
          "rootlessrt.host-loopback": "true"}')
      jq --argjson a "$ann" '.annotations = $a' "$bundle/config.json" >"$work/cfg.json" &&
        cp "$work/cfg.json" "$bundle/config.json"
      "$rrt" --root "$root" create --network slirp -p "$pi:5201" -p "$ph:80" -b "$bundle" "$CID" \
        >"$work/$CID.log" 2>&1 || { echo "create: $(tail -n 1 "$work/$CID.log")"; return 1; }
      HELPER=$(jq -r .netHelper "$root/$CID/state.json")
      ;;
    slirp4netns | pasta)
      jq '.annotations = {}' "$bundle/config.json" >"$work/cfg.json" && cp "$work/cfg.json" "$bundle/config.json"
      "$rrt" --root "$root" create --network none -b "$bundle" "$CID" >"$work/$CID.log" 2>&1 ||
        { echo "create: $(tail -n 1 "$work/$CID.log")"; return 1; }
      pid=$(jq -r .pid "$root/$CID/state.json")
      if [ "$kind" = slirp4netns ]; then
        sock=$work/s4n-$$.sock
        rm -f "$sock"
        slirp4netns --configure --mtu="$mtu" --api-socket "$sock" \
          --userns-path="/proc/$pid/ns/user" --netns-type=path "/proc/$pid/ns/net" tap0 \
          >"$work/s4n.log" 2>&1 &
        HELPER=$!
        local i
        for ((i = 0; i < 100; i++)); do [ -S "$sock" ] && break; sleep 0.05; done
        /usr/bin/python3 -c '
import json, socket, sys
for port, guest in ((sys.argv[2], 5201), (sys.argv[3], 80)):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.sendall(json.dumps({"execute": "add_hostfwd", "arguments": {"proto": "tcp",
      "host_addr": "127.0.0.1", "host_port": int(port), "guest_port": guest}}).encode())
    r = s.recv(4096).decode()
    if "error" in r: sys.exit(r)
' "$sock" "$pi" "$ph" || { echo "slirp4netns: $(tail -n 2 "$work/s4n.log")"; return 1; }
      else
        pasta -f -q --config-net --mtu "$mtu" -t "$pi:5201,$ph:80" -u none -T none -U none \
          --userns "/proc/$pid/ns/user" --netns "/proc/$pid/ns/net" >"$work/pasta.log" 2>&1 &
        HELPER=$!
        local i
        for ((i = 0; i < 100; i++)); do py is-free "$ph" || break; sleep 0.05; done
        py is-free "$ph" && { echo "pasta: $(tail -n 2 "$work/pasta.log")"; return 1; }
      fi
      ;;
  esac
  "$rrt" --root "$root" start "$CID" || { echo "start failed"; return 1; }
  local t
  for ((t = 0; t < 100; t++)); do
    curl -fsS -m 1 "http://127.0.0.1:$ph/" >/dev/null 2>&1 && break
    sleep 0.1
  done
  [ "$t" -lt 100 ] || { echo "httpd in the container does not answer through $kind"; return 1; }
  # The host as the container reaches it: 10.0.2.2, pasta's gateway address.
  GW=10.0.2.2
  [ "$kind" = pasta ] && GW=$(ctr ip route | awk '/^default/ {print $3; exit}')
  for ((t = 0; t < 100; t++)); do
    ctr wget -q -T 1 -O /dev/null "http://$GW:$hp_http/" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the host's httpd does not answer the container at $GW through $kind"
  return 1
}

ctr() { "$rrt" --root "$root" exec "$CID" "$@"; }

down() {
  "$rrt" --root "$root" delete -f "$CID" >/dev/null 2>&1
  if [ -n "$HELPER" ] && kill -0 "$HELPER" 2>/dev/null; then
    # slirp4netns and pasta do not notice the namespace going away by themselves.
    kill "$HELPER" 2>/dev/null
    wait "$HELPER" 2>/dev/null
  fi
}

# iperf PORT DIR: "GBITS CPU_S_PER_GB" for one run (DIR up = host->container, down = -R).
iperf() {
  local port=$1 dir=$2 c0 c1 json args
  args=(-c 127.0.0.1 -p "$port" -t "$secs" -J)
  [ "$dir" = down ] && args+=(-R)
  c0=$(cpu_ticks "$HELPER")
  json=$(iperf3 "${args[@]}" 2>&1) || {
    echo "bench-net: iperf3 ${args[*]}: $(jq -r '.error // empty' <<<"$json" 2>/dev/null | head -c 200)" >&2
    echo "- -"
    return
  }
  c1=$(cpu_ticks "$HELPER")
  /usr/bin/python3 -c '
import json, sys
e = json.loads(sys.argv[1])["end"]
s = e.get("sum_received") or e["sum"]
gb = s["bytes"] / 1e9
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / int(sys.argv[4])
print("%.2f %.2f" % (s["bits_per_second"] / 1e9, cpu / gb if gb else 0))
' "$json" "$c0" "$c1" "$hz" || echo "- -"
}

# own_iperf DIR: iperf3 in the container to the host (DIR up = container->host, down = -R).
own_iperf() {
  local dir=$1 c0 c1 json args
  args=(-c "$GW" -p "$hp_iperf" -t "$secs" -J)
  [ "$dir" = down ] && args+=(-R)
  c0=$(cpu_ticks "$HELPER")
  json=$(ctr iperf3 "${args[@]}" 2>&1) || {
    echo "bench-net: exec iperf3 ${args[*]}: $(jq -r '.error // empty' <<<"$json" 2>/dev/null | head -c 200)" >&2
    echo "- -"
    return
  }
  c1=$(cpu_ticks "$HELPER")
  /usr/bin/python3 -c '
import json, sys
e = json.loads(sys.argv[1])["end"]
s = e.get("sum_received") or e["sum"]
gb = s["bytes"] / 1e9
cpu = (int(sys.argv[3]) - int(sys.argv[2])) / int(sys.argv[4])
print("%.2f %.2f" % (s["bits_per_second"] / 1e9, cpu / gb if gb else 0))
' "$json" "$c0" "$c1" "$hz" || echo "- -"
}

# own_conn_rate: "CONNECTIONS_PER_S HELPER_CPU_US_PER_CONNECTION"
own_conn_rate() {
  local c0 c1 r
  c0=$(cpu_ticks "$HELPER")
  r=$(ctr /rrt-netbench get "$GW" "$hp_http" "$conn_secs" 2>/dev/null) || { echo "- -"; return; }
  c1=$(cpu_ticks "$HELPER")
  awk -v r="$r" -v t=$((c1 - c0)) -v hz="$hz" -v s="$conn_secs" \
    'BEGIN { if (r > 0) printf "%s %.0f\n", r, t / hz * 1e6 / (r * s); else print "- -" }'
}

# own_udp_rate: "ECHOES_PER_S HELPER_CPU_US_PER_ECHO"
own_udp_rate() {
  local c0 c1 r
  c0=$(cpu_ticks "$HELPER")
  r=$(ctr /rrt-netbench rate "$GW" "$hp_udp" "$conn_secs" 128 2>/dev/null) || { echo "- -"; return; }
  c1=$(cpu_ticks "$HELPER")
  awk -v r="$r" -v t=$((c1 - c0)) -v hz="$hz" -v s="$conn_secs" \
    'BEGIN { if (r > 0) printf "%s %.1f\n", r, t / hz * 1e6 / (r * s); else print "- -" }'
}

conn_rate() { "$stage/rrt-netbench" get 127.0.0.1 "$1" "$conn_secs" 2>/dev/null || echo -; }

declare -A R
names=()
for kind in splice slirp slirp4netns pasta; do
  [[ " $only " == *" $kind "* ]] || continue
  case $kind in
    slirp4netns | pasta)
      if ! command -v "$kind" >/dev/null; then
        R[$kind,skip]="not installed$([ "$kind" = pasta ] && echo " (apt-get install passt)")"
        names+=("$kind")
        continue
      fi
      ;;
  esac
  names+=("$kind")
  for mtu in $mtus; do
    pi=$(py free-port) ph=$(py free-port)
    if ! up "$kind" "$mtu" "$pi" "$ph" >"$work/why" 2>&1; then # not $(...): up sets HELPER
      R[$kind,$mtu,fail]=$(tail -n 1 "$work/why")
      down
      continue
    fi
    R[$kind,$mtu,up]=$(iperf "$pi" up)
    R[$kind,$mtu,down]=$(iperf "$pi" down)
    R[$kind,$mtu,oup]=$(own_iperf up)
    R[$kind,$mtu,odown]=$(own_iperf down)
    R[$kind,$mtu,conn]=$(conn_rate "$ph")
    R[$kind,$mtu,oconn]=$(own_conn_rate)
    R[$kind,$mtu,udp]=$(own_udp_rate)
    down
  done
done

label() {
  case $1 in
    splice) echo "rootlessrt" ;;
    slirp) echo "rootlessrt libslirp" ;;
    *) echo "$1" ;;
  esac
}

echo
echo "bench-net: one TCP stream per iperf3 run, ${secs} s; CPU = the network helper's (relay,"
echo "libslirp, slirp4netns or pasta process) user+sys CPU seconds per GB moved; conn/s: sequential"
echo "HTTP/1.0 GETs, ${conn_secs} s; UDP: 64-byte echoes per second, 128 in flight, ${conn_secs} s;"
echo "us/conn, us/echo: the helper's CPU microseconds for each"
echo
echo "published port (the host's 127.0.0.1 -> the container)"
printf '%-20s %6s  %-24s  %-24s  %s\n' "" "" "host->container" "container->host" ""
printf '%-20s %6s  %10s %13s  %10s %13s  %7s\n' network mtu Gbit/s "CPU s/GB" Gbit/s "CPU s/GB" "conn/s"
row() { # row KIND MTU KEY_A KEY_B KEY_C...
  local kind=$1 mtu=$2 ag ac bg bc rest="" k
  read -r ag ac <<<"${R[$kind,$mtu,$3]:-- -}"
  read -r bg bc <<<"${R[$kind,$mtu,$4]:-- -}"
  shift 4
  for k in "$@"; do rest+=$(printf '  %7s' ${R[$kind,$mtu,$k]:--}); done
  printf '%-20s %6s  %10s %13s  %10s %13s%s\n' "$(label "$kind")" "$mtu" "$ag" "$ac" "$bg" "$bc" "$rest"
}
table() { # table KEY_A KEY_B KEY_C...
  local kind mtu
  for kind in "${names[@]}"; do
    if [ -n "${R[$kind,skip]:-}" ]; then
      printf '%-20s %s\n' "$(label "$kind")" "skipped: ${R[$kind,skip]}"
      continue
    fi
    for mtu in $mtus; do
      if [ -n "${R[$kind,$mtu,fail]:-}" ]; then
        printf '%-20s %6s  failed: %s\n' "$(label "$kind")" "$mtu" "${R[$kind,$mtu,fail]}"
        continue
      fi
      row "$kind" "$mtu" "$@"
    done
  done
}
table up down conn
echo
echo "the container's own connections (the container -> the host's 127.0.0.1 through its gateway)"
printf '%-20s %6s  %-24s  %-24s  %s\n' "" "" "container->host" "host->container" ""
printf '%-20s %6s  %10s %13s  %10s %13s  %7s %7s  %7s %7s\n' network mtu Gbit/s "CPU s/GB" Gbit/s \
  "CPU s/GB" "conn/s" "us/conn" "UDP/s" "us/echo"
table oup odown oconn udp

# Ratios of rootlessrt (and its libslirp path) against the others, per MTU.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else printf "n/a" }'; }
echo
for ref in slirp4netns pasta; do
  [[ " ${names[*]} " == *" $ref "* ]] && [ -z "${R[$ref,skip]:-}" ] || continue
  for kind in splice slirp; do
    [[ " ${names[*]} " == *" $kind "* ]] || continue
    for mtu in $mtus; do
      read -r ug _ <<<"${R[$kind,$mtu,up]:-- -}"
      read -r dg _ <<<"${R[$kind,$mtu,down]:-- -}"
      read -r oug _ <<<"${R[$kind,$mtu,oup]:-- -}"
      read -r odg _ <<<"${R[$kind,$mtu,odown]:-- -}"
      read -r rug _ <<<"${R[$ref,$mtu,up]:-- -}"
      read -r rdg _ <<<"${R[$ref,$mtu,down]:-- -}"
      read -r roug _ <<<"${R[$ref,$mtu,oup]:-- -}"
      read -r rodg _ <<<"${R[$ref,$mtu,odown]:-- -}"
      printf '%-20s / %-11s mtu %5s: published h->c %s c->h %s conn %s; own c->h %s h->c %s conn %s UDP %s\n' \
        "$(label "$kind")" "$ref" "$mtu" "$(ratio "$ug" "$rug")" "$(ratio "$dg" "$rdg")" \
        "$(ratio "${R[$kind,$mtu,conn]:-}" "${R[$ref,$mtu,conn]:-}")" "$(ratio "$oug" "$roug")" \
        "$(ratio "$odg" "$rodg")" "$(ratio "${R[$kind,$mtu,oconn]%% *}" "${R[$ref,$mtu,oconn]%% *}")" \
        "$(ratio "${R[$kind,$mtu,udp]%% *}" "${R[$ref,$mtu,udp]%% *}")"
    done
  done
done
echo "targets (issue 30): own c->h >= 5x slirp4netns at 1500 and >= 1.5x at 65520 with helper CPU"
echo "         <= 0.3 s/GB, own conn/s >= 2x, UDP/s >= 3x; published h->c >= 1.8x slirp4netns at 65520"
