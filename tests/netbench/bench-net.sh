#!/bin/bash
# bench-net.sh RUNTIME: published-port throughput and cost, side by side in one run (issues 6, 7).
#
# For rootlessrt (splice relay), rootlessrt (slirp path forced: rootlessrt.ports-via=slirp),
# Debian's slirp4netns (--configure --mtu=N --disable-host-loopback, the port added through its
# API socket) and Debian's pasta (passt package) where installed, at MTU 1500 and 65520:
#   - iperf3 host->container and container->host (-R), one TCP stream, through the published port
#   - the network helper's CPU seconds (user+sys, /proc/PID/stat) per GB moved
#   - connections per second: sequential HTTP/1.0 GETs from the host to busybox httpd in the
#     container (each a new connection; at MTU 65520)
# and the ratios of rootlessrt against slirp4netns and pasta.
#
# The container is the same rootlessrt busybox bundle each time, with the host's /usr (iperf3,
# python3) bound read-only into it; for slirp4netns and pasta it is created with --network none
# and the tool is attached to its network namespace before start.
#
# As root the measurements are made by the unprivileged user BENCH_USER (rrt-test). Knobs:
# BENCH_NET_SECS (5) seconds per iperf3 run, BENCH_NET_CONN_SECS (3), BENCH_NET_MTUS
# ("1500 65520"), BENCH_NET_ONLY ("splice slirp slirp4netns pasta").
# Needs iperf3 (Debian package iperf3); slirp4netns and passt are compared when installed.
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
  # The network helper program, found beside the runtime.
  cp "$(dirname "$runtime")/rootlessrt-net" "$stage/" || die "no rootlessrt-net beside $runtime"
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
  'iperf3 -s -p 5201 >/dev/null 2>&1 & httpd -f -p 80 -h /www & wait' >"$work/mkbundle.log" 2>&1 ||
  die "cannot make the bundle: $(cat "$work/mkbundle.log")"
mkdir -p "$bundle/rootfs/usr" "$bundle/rootfs/www" && ln -s usr/lib "$bundle/rootfs/lib" &&
  ln -s usr/lib64 "$bundle/rootfs/lib64" && echo ok >"$bundle/rootfs/www/index.html" ||
  die "cannot prepare $bundle"
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
        '{"rootlessrt.mtu": $m, "rootlessrt.ports-via": $v}')
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
        slirp4netns --configure --mtu="$mtu" --disable-host-loopback --api-socket "$sock" \
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
    curl -fsS -m 1 "http://127.0.0.1:$ph/" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "httpd in the container does not answer through $kind"
  return 1
}

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

conn_rate() { # conn_rate PORT: sequential GET / per second
  /usr/bin/python3 -c '
import socket, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
n, t0 = 0, time.monotonic()
while time.monotonic() - t0 < secs:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        while s.recv(65536):
            pass
    n += 1
print("%.0f" % (n / (time.monotonic() - t0)))
' "$1" "$conn_secs" 2>/dev/null || echo -
}

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
    [ "$mtu" = "${mtus##* }" ] && R[$kind,conn]=$(conn_rate "$ph")
    down
  done
done

label() {
  case $1 in
    splice) echo "rootlessrt splice" ;;
    slirp) echo "rootlessrt slirp" ;;
    *) echo "$1" ;;
  esac
}

echo
echo "bench-net: iperf3 through a port published on 127.0.0.1, one TCP stream, ${secs} s per run;"
echo "CPU = the network helper's user+sys CPU seconds per GB moved (relay or slirp process)"
printf '%-18s %6s  %-24s  %-24s  %s\n' "" "" "host->container" "container->host" ""
printf '%-18s %6s  %10s %13s  %10s %13s  %s\n' network mtu Gbit/s "CPU s/GB" Gbit/s "CPU s/GB" "conn/s"
for kind in "${names[@]}"; do
  if [ -n "${R[$kind,skip]:-}" ]; then
    printf '%-18s %s\n' "$(label "$kind")" "skipped: ${R[$kind,skip]}"
    continue
  fi
  for mtu in $mtus; do
    if [ -n "${R[$kind,$mtu,fail]:-}" ]; then
      printf '%-18s %6s  failed: %s\n' "$(label "$kind")" "$mtu" "${R[$kind,$mtu,fail]}"
      continue
    fi
    read -r ug uc <<<"${R[$kind,$mtu,up]}"
    read -r dg dc <<<"${R[$kind,$mtu,down]}"
    c=""
    [ "$mtu" = "${mtus##* }" ] && c=${R[$kind,conn]:-}
    printf '%-18s %6s  %10s %13s  %10s %13s  %s\n' "$(label "$kind")" "$mtu" "$ug" "$uc" "$dg" "$dc" "$c"
  done
done

# Ratios of rootlessrt splice (and slirp) against the others, per MTU and direction.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else printf "n/a" }'; }
echo
for ref in slirp4netns pasta; do
  [[ " ${names[*]} " == *" $ref "* ]] && [ -z "${R[$ref,skip]:-}" ] || continue
  for kind in splice slirp; do
    [[ " ${names[*]} " == *" $kind "* ]] || continue
    for mtu in $mtus; do
      read -r ug uc <<<"${R[$kind,$mtu,up]:-- -}"
      read -r dg dc <<<"${R[$kind,$mtu,down]:-- -}"
      read -r rug ruc <<<"${R[$ref,$mtu,up]:-- -}"
      read -r rdg rdc <<<"${R[$ref,$mtu,down]:-- -}"
      printf '%-18s / %-11s mtu %5s: throughput h->c %s c->h %s; CPU/GB h->c %s c->h %s\n' \
        "$(label "$kind")" "$ref" "$mtu" "$(ratio "$ug" "$rug")" "$(ratio "$dg" "$rdg")" \
        "$(ratio "$uc" "$ruc")" "$(ratio "$dc" "$rdc")"
    done
  done
  printf '%-18s / %-11s conn/s: %s\n' "rootlessrt splice" "$ref" "$(ratio "${R[splice,conn]:-}" "${R[$ref,conn]:-}")"
done
echo "targets: splice >= 1.8x slirp4netns at 65520 h->c and >= 0.9x pasta at <= pasta's CPU/GB;"
echo "         slirp path >= 1.2x slirp4netns at equal MTU with less CPU/GB"
