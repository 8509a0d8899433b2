#!/bin/bash
# bench-shim.sh RUNTIME: each runtime verb's wall time as containerd's runc shim calls it (create,
# start, kill, delete, state), for RUNTIME, runc and crun side by side: BENCH_SHIM_N (20) `ctr
# run -d` of a busybox `sleep`, killed and deleted, the runtimes alternating one run at a time.
# Real root only.
#
# The shim calls the runtime through a small wrapper that times each call and appends "VERB US"
# to a log: the same wrapper for every runtime, so its cost (a bash start, ~1 ms) is in every
# figure alike. Two layouts: this host's own cgroups (cgroupfs; v1 controllers on a hybrid host,
# what containerd's CRI uses here; crun refuses a hybrid layout and is left out there) and a
# private cgroup2 on /sys/fs/cgroup in a mount namespace of the bench's own (all three).
# BENCH_SHIM_STATE=disk puts the runtimes' state roots (--runc-root) in a directory of the
# bench's own under /run instead of its tmpfs: on this host /run is the root filesystem (ext4),
# where containerd's own default, /run/containerd/runc, is. BENCH_SHIM_LOAD=N runs N busy loops
# beside it (a loaded host: CRI creates while other pods work).
set -u
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() {
  echo "bench-shim: $*" >&2
  exit 1
}

if [ "${1:-}" != --inner ]; then
  [ $# -eq 1 ] || die "usage: bench-shim.sh RUNTIME"
  rt=$(readlink -f "$1") || die "no runtime $1"
  if [ "$(id -u)" -ne 0 ] || [ "$(awk 'NR == 1 {print $3}' /proc/self/uid_map)" != 4294967295 ]; then
    echo "bench-shim: skipped (containerd's shim needs real root)"
    exit 0
  fi
  for c in containerd ctr containerd-shim-runc-v2 unshare; do
    command -v "$c" >/dev/null 2>&1 || {
      echo "bench-shim: skipped ($c is not installed)"
      exit 0
    }
  done
  echo "bench-shim: each verb as containerd's runc shim calls it, min, median and mean of ${BENCH_SHIM_N:-20} \`ctr run -d\`, kill, delete (alternating)"
  unshare -m --propagation private bash "$0" --inner host "$rt"
  unshare -m --propagation private bash "$0" --inner cgroup2 "$rt"
  exit 0
fi

# ---------------------------------------------------------------- one layout, in its namespace
layout=$2 rt=$3
n=${BENCH_SHIM_N:-20}
W=$(mktemp -d /tmp/rrt-bench-shim.XXXXXX) || exit 1
ctrd_pid=""
state=$W
[ "${BENCH_SHIM_STATE:-tmpfs}" = disk ] && state=$(mktemp -d /run/rrt-bench-shim.XXXXXX)
busy=()
cleanup() {
  [ ${#busy[@]} -gt 0 ] && kill "${busy[@]}" 2>/dev/null
  [ "$state" != "$W" ] && rm -rf "$state"
  if [ -n "$ctrd_pid" ]; then
    kill "$ctrd_pid" 2>/dev/null
    wait "$ctrd_pid" 2>/dev/null
  fi
  umount -R "$W" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
mount -t tmpfs -o mode=0755 bench-shim "$W" || exit 1
if [ "$layout" = cgroup2 ]; then
  mount -t cgroup2 none /sys/fs/cgroup || die "cannot mount a private cgroup2"
fi

# NAME -> the binary and the global flags its wrapper passes. crun 1.8 cannot use cgroups here at
# all: on cgroup v2 it loads its device filter as an eBPF program and first raises RLIMIT_MEMLOCK
# to infinity (what kernels before 5.11 charged BPF memory to), which needs CAP_SYS_RESOURCE that
# this machine's root lacks in its bounding set; and it refuses the host's hybrid layout. So crun
# runs with --cgroup-manager=disabled (no cgroup at all, no device filter) in the private cgroup2
# view, and rootlessrt runs there the same way too ("-nocg"), for a like-for-like figure.
declare -A real=([rootlessrt]=$rt) flags=()
command -v runc >/dev/null 2>&1 && real[runc]=$(command -v runc)
if [ "$layout" = cgroup2 ]; then
  real[rootlessrt-nocg]=$rt
  flags[rootlessrt-nocg]=--cgroup-manager=disabled
  if command -v crun >/dev/null 2>&1; then
    real[crun-nocg]=$(command -v crun)
    flags[crun-nocg]=--cgroup-manager=disabled
  fi
fi
names=(rootlessrt)
for r in runc rootlessrt-nocg crun-nocg; do [ -n "${real[$r]:-}" ] && names+=("$r"); done

mkdir -p "$W/bin" "$W/root" "$W/state" "$W/fifo"
for r in "${names[@]}"; do
  mkdir -p "$state/rt-$r"
  cat >"$W/bin/$r" <<EOF
#!/bin/bash
verb=other
for a; do case \$a in create|start|kill|delete|state) verb=\$a; break ;; esac; done
t0=\${EPOCHREALTIME/[.,]/}
"${real[$r]}" ${flags[$r]:-} "\$@"
rc=\$?
t1=\${EPOCHREALTIME/[.,]/}
echo "\$verb \$((t1 - t0))" >>"$W/$r.log"
exit \$rc
EOF
  chmod 0755 "$W/bin/$r"
done
[ -x "$(dirname "$rt")/rootlessrt-net" ] && cp "$(dirname "$rt")/rootlessrt-net" "$W/bin/"

cat >"$W/config.toml" <<EOF
version = 2
root = "$W/root"
state = "$W/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$W/c.sock"
[ttrpc]
  address = "$W/c.sock.ttrpc"
EOF
containerd --config "$W/config.toml" >"$W/containerd.log" 2>&1 &
ctrd_pid=$!
ctr_() { timeout -k 5 60 ctr --address "$W/c.sock" "$@"; }
for _ in $(seq 200); do
  ctr_ version >/dev/null 2>&1 && break
  sleep 0.1
done
ctr_ version >/dev/null 2>&1 || die "containerd did not start: $(tail -n 5 "$W/containerd.log")"
img=docker.io/rrt/busybox:bench
bash "$here/../tests/engines/oci-image.sh" "$W/img.tar" "$img" >/dev/null 2>&1 &&
  ctr_ images import "$W/img.tar" >/dev/null 2>&1 || die "cannot import the busybox image"

one() { # one RUNTIME ID: run -d, kill, wait for the exit, delete (create, start, kill, delete)
  ctr_ run -d --runtime io.containerd.runc.v2 --runc-binary "$W/bin/$1" \
    --runc-root "$state/rt-$1" --fifo-dir "$W/fifo" "$img" "$2" sleep 100 >/dev/null 2>"$W/err" || {
    echo "bench-shim: $layout: $1: ctr run failed: $(head -n 3 "$W/err")" >&2
    return 1
  }
  ctr_ task kill -s SIGKILL "$2" >/dev/null 2>&1
  for _ in $(seq 200); do
    [ "$(ctr_ task ls 2>/dev/null | awk -v id="$2" '$1 == id {print $3}')" = STOPPED ] && break
    sleep 0.02
  done
  ctr_ task delete "$2" >/dev/null 2>&1 && ctr_ containers delete "$2" >/dev/null 2>&1 || {
    echo "bench-shim: $layout: $1: the container could not be deleted" >&2
    return 1
  }
}
# A runtime that cannot run here at all (runc on a cgroup2 without controllers, given ctr's
# cpu.shares) is left out of this layout's table, with its error above.
kept=()
for r in "${names[@]}"; do one "$r" "warm-$r" && kept+=("$r"); done
[ "${kept[0]:-}" = rootlessrt ] || exit 1
names=("${kept[@]}")
rm -f "$W"/*.log
for _ in $(seq "${BENCH_SHIM_LOAD:-0}"); do
  (while :; do :; done) &
  busy+=($!)
done
for i in $(seq "$n"); do
  for r in "${names[@]}"; do one "$r" "b$i-$r" || exit 1; done
done

# Per verb and runtime: the minimum, the median and the mean of its n calls.
stat() { # stat LOG VERB
  awk -v v="$2" '$1 == v {print $2}' "$1" | sort -n |
    awk '{a[NR] = $1; s += $1} END {
      if (!NR) { printf " %23s", "-"; exit }
      m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
      printf " %6.2f %6.2f %6.2f ms", a[1] / 1000, m / 1000, s / NR / 1000 }'
}
[ ${#busy[@]} -gt 0 ] && kill "${busy[@]}" 2>/dev/null
busy=()
echo "  $layout cgroups (min median mean of $n; state roots on ${BENCH_SHIM_STATE:-tmpfs}, ${BENCH_SHIM_LOAD:-0} busy loops, load $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '    %-8s' verb
for r in "${names[@]}"; do printf ' %23s' "$r"; done
echo
for verb in create start kill delete; do
  printf '    %-8s' "$verb"
  for r in "${names[@]}"; do stat "$W/$r.log" "$verb"; done
  echo
done
