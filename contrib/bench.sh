#!/bin/bash
# bench.sh RUNTIME: mean wall time of BENCH_N (20) sequential `run` of a /bin/true busybox
# container, for RUNTIME and for crun (--cgroup-manager=disabled) where installed, side by side,
# with the ratio (target: RUNTIME <= 0.6 x crun) and the peak RSS of the runtime process. The
# runs of the two alternate, one at a time, so that a change in the machine's load hits both.
#
# As root the runs are made by the unprivileged user BENCH_USER (rrt-test) in a private mount
# namespace whose /sys/fs/cgroup is cgroup2 (crun refuses a hybrid v1+v2 host); the same for both
# runtimes. The timing happens inside, so unshare and setpriv are not measured.
set -u

die() {
  echo "bench: $*" >&2
  exit 1
}

# now_us: microseconds into $now. A variable, not output: $(now_us) would fork a subshell,
# and the timed span would include that fork's exit and the next one's start (about a
# millisecond, the same for every runtime, which pulls every ratio towards 1).
now_us() {
  if [ -n "${EPOCHREALTIME:-}" ]; then
    now=${EPOCHREALTIME/[.,]/}
  else
    now=$(($(date +%s%N) / 1000))
  fi
}

# rss BUNDLE ROOT RUNTIME [GLOBAL FLAGS...]: (as the user) the peak RSS in KiB of one run.
rss() {
  local bundle=$1 root=$2 kb=""
  shift 2
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o "$root.rss" "$@" --root "$root" run -b "$bundle" "rss-$$" >/dev/null 2>&1 &&
      kb=$(tail -n 1 "$root.rss")
  else
    kb=$(/usr/bin/python3 -c '
import os, resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$@" --root "$root" run -b "$bundle" "rss-$$" 2>/dev/null)
  fi
  echo "${kb:-?}"
}

# timed_run US_VAR BUNDLE ROOT NAME RUNTIME [GLOBAL FLAGS...]: one run; adds its microseconds
# to the variable named US_VAR. Fails (with the error on stdout) when the run fails.
timed_run() {
  local var=$1 bundle=$2 root=$3 name=$4 now t0 errf=$3.err
  shift 4
  now_us
  t0=$now
  if ! "$@" --root "$root" run -b "$bundle" "$name" >/dev/null 2>"$errf"; then
    echo "fail $name: $(head -n 1 "$errf")"
    return 1
  fi
  now_us
  printf -v "$var" '%d' $((${!var} + now - t0))
}

# __loop BUNDLE ROOT N RUNTIME [GLOBAL FLAGS...]: (as the user) one warm-up run, N timed runs,
# and the peak RSS of one more. Prints "ok MEAN_US RSS_KB" or "fail REASON".
bench_loop() {
  local bundle=$1 root=$2 n=$3 i total=0
  shift 3
  mkdir -p "$root"
  timed_run total "$bundle" "$root" "warmup-$$" "$@" || return 0
  total=0
  for ((i = 1; i <= n; i++)); do
    # BENCH_COLD=1: every run compiles its seccomp filter (no cache), the rest unchanged.
    [ "${BENCH_COLD:-0}" = 1 ] && rm -rf "$root/.seccomp-cache"
    timed_run total "$bundle" "$root" "bench-$$-$i" "$@" || return 0
  done
  echo "ok $((total / n)) $(rss "$bundle" "$root" "$@")"
}

# __pair N BUNDLE_A ROOT_A BUNDLE_B ROOT_B -- RUNTIME_A [FLAGS...] -- RUNTIME_B [FLAGS...]:
# (as the user) N runs of each, alternating A, B, A, B: whatever the machine does meanwhile
# (other tenants of the host, writeback) falls on both alike, where two blocks of N runs
# minutes apart can differ by a fifth. Prints "ok MEAN_A RSS_A MEAN_B RSS_B" or "fail REASON".
bench_pair() {
  local n=$1 ba=$2 ra=$3 bb=$4 rb=$5 i ta=0 tb=0
  local -a a=() b=()
  shift 5
  [ "${1:-}" = -- ] && shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    a+=("$1")
    shift
  done
  [ $# -gt 0 ] && shift
  b=("$@")
  mkdir -p "$ra" "$rb"
  timed_run ta "$ba" "$ra" "warmup-$$" "${a[@]}" || return 0
  timed_run tb "$bb" "$rb" "warmup-$$" "${b[@]}" || return 0
  ta=0 tb=0
  for ((i = 1; i <= n; i++)); do
    timed_run ta "$ba" "$ra" "bench-$$-$i" "${a[@]}" || return 0
    timed_run tb "$bb" "$rb" "bench-$$-$i" "${b[@]}" || return 0
  done
  echo "ok $((ta / n)) $(rss "$ba" "$ra" "${a[@]}") $((tb / n)) $(rss "$bb" "$rb" "${b[@]}")"
}

# __crun_config SRC DST [own]: (as the user) DST/config.json for crun, on SRC's rootfs: SRC's
# config with the ociVersion crun 1.8 knows, or ("own") crun's own `spec --rootless`.
crun_config() {
  local src=$1 dst=$2 how=${3:-same}
  mkdir -p "$dst"
  rm -f "$dst/config.json"
  if [ "$how" = own ]; then
    crun spec --rootless -b "$dst" || return 1
    jq --arg r "$src/rootfs" '.root.path = $r | .process.args = ["/bin/true"] | .process.terminal = false' \
      "$dst/config.json" >"$dst/c.json"
  else
    jq --arg r "$src/rootfs" '.root.path = $r | .ociVersion = "1.0.2"' "$src/config.json" >"$dst/c.json"
  fi && mv "$dst/c.json" "$dst/config.json"
}

case ${1:-} in
  __loop)
    shift
    bench_loop "$@"
    exit 0
    ;;
  __pair)
    shift
    bench_pair "$@"
    exit 0
    ;;
  __crun_config)
    shift
    crun_config "$@"
    exit
    ;;
esac

[ $# -eq 1 ] || die "usage: bench.sh RUNTIME"
runtime=$(readlink -f "$1") || die "no runtime $1"
[ -x "$runtime" ] || die "$1 is not executable"
n=${BENCH_N:-20}
[[ $n =~ ^[1-9][0-9]*$ ]] || die "BENCH_N must be a positive number"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
crun=$(command -v crun 2>/dev/null || true)

stage=$(mktemp -d /tmp/rrt-bench.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"
{ cp "$runtime" "$stage/rootlessrt" && cp "$here/bench.sh" "$here/mkbundle.sh" "$stage/" &&
  cp "$here/../tests/confine/podman-default.json" "$stage/seccomp.json"; } ||
  die "cannot copy to $stage"
chmod -R a+rX "$stage"
mkdir "$stage/work"

as_user=()
if [ "$(id -u)" -eq 0 ]; then
  user=${BENCH_USER:-rrt-test}
  uid=$(bash "$here/ensure-user.sh" "$user") || die "cannot set up the user $user"
  gid=$(id -g "$user")
  chown "$uid:$gid" "$stage/work"
  pre='mount --make-rprivate / 2>/dev/null;'
  if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
    pre+=' mount -t cgroup2 none /sys/fs/cgroup || echo "bench: no cgroup2 view" >&2;'
  fi
  as_user=(unshare -m sh -c "$pre"' exec "$@"' sh
    setpriv "--reuid=$uid" "--regid=$gid" --init-groups --reset-env)
  who=$user
else
  who=$(id -un)
fi
cd / || exit 1

"${as_user[@]}" bash "$stage/mkbundle.sh" "$stage/rootlessrt" "$stage/work/bundle" -- /bin/true \
  >"$stage/work/mkbundle.log" 2>&1 || die "cannot make the bundle: $(cat "$stage/work/mkbundle.log")"

declare -A res
names=(rootlessrt)
rrt_cmd=("$stage/rootlessrt" --cgroup-manager disabled)
crun_note=""
order="alone"
if [ -n "$crun" ]; then
  names+=(crun)
  res[crun]="fail cannot write a config for crun"
  # The same rootfs and config for both (but the ociVersion: crun 1.8 refuses newer ones); crun's
  # own rootless config if it still refuses.
  for how in same own; do
    "${as_user[@]}" bash "$stage/bench.sh" __crun_config "$stage/work/bundle" \
      "$stage/work/bundle-crun" "$how" >/dev/null 2>&1 || continue
    res[crun]=$("${as_user[@]}" bash "$stage/bench.sh" __loop "$stage/work/bundle-crun" \
      "$stage/work/root-crun-try" 1 "$crun" --cgroup-manager=disabled)
    case ${res[crun]} in ok*) break ;; esac
  done
  if [ "$how" = own ] && [[ ${res[crun]} == ok* ]]; then
    crun_note=" (crun ran its own 'crun spec --rootless' config)"
  fi
fi
if [[ ${res[crun]:-} == ok* ]]; then
  order="alternating"
  pair=$("${as_user[@]}" bash "$stage/bench.sh" __pair "$n" "$stage/work/bundle" \
    "$stage/work/root-rrt" "$stage/work/bundle-crun" "$stage/work/root-crun" -- "${rrt_cmd[@]}" \
    -- "$crun" --cgroup-manager=disabled)
  read -r st m_r rss_r m_c rss_c <<<"$pair"
  if [ "$st" = ok ]; then
    res[rootlessrt]="ok $m_r $rss_r"
    res[crun]="ok $m_c $rss_c"
  else
    res[rootlessrt]=$pair
    res[crun]=$pair
  fi
else
  res[rootlessrt]=$("${as_user[@]}" bash "$stage/bench.sh" __loop "$stage/work/bundle" \
    "$stage/work/root-rrt" "$n" "${rrt_cmd[@]}")
fi

echo "bench: $n sequential runs each of /bin/true in a busybox bundle ($order), as $who$crun_note"
printf '%-12s %12s %16s\n' runtime "mean ms" "peak RSS KiB"
for name in "${names[@]}"; do
  read -r st mean rss <<<"${res[$name]}"
  if [ "$st" = ok ]; then
    printf '%-12s %12s %16s\n' "$name" "$(awk -v u="$mean" 'BEGIN {printf "%.2f", u / 1000}')" "$rss"
  else
    printf '%-12s %s\n' "$name" "failed: ${res[$name]#fail }"
  fi
done

read -r st_r mean_r _ <<<"${res[rootlessrt]}"
if [ -z "$crun" ]; then
  echo "ratio: n/a (crun not installed)"
else
  read -r st_c mean_c _ <<<"${res[crun]}"
  if [ "$st_r" = ok ] && [ "$st_c" = ok ] && [ "$mean_c" -gt 0 ]; then
    awk -v r="$mean_r" -v c="$mean_c" 'BEGIN {
      q = r / c
      printf "ratio rootlessrt/crun: %.2f (target <= 0.60: %s)\n", q, q <= 0.6 ? "met" : "missed"
    }'
  else
    echo "ratio: n/a (a runtime failed)"
  fi
fi

# ---------------------------------------------------------------- seccomp: podman's profile
# The same /bin/true runs with podman's default seccomp profile (~370 rules): rootlessrt cold
# (the filter compiled every run) and cached (ROOT/.seccomp-cache), and crun.
"${as_user[@]}" sh -c 'cp -r "$1/bundle" "$1/bundle-sc" && jq --slurpfile s "$2" ".linux.seccomp = \$s[0]" \
  "$1/bundle/config.json" >"$1/bundle-sc/config.json"' sh "$stage/work" "$stage/seccomp.json" ||
  die "cannot make the seccomp bundle"
sc_cold=$("${as_user[@]}" env BENCH_COLD=1 bash "$stage/bench.sh" __loop "$stage/work/bundle-sc" \
  "$stage/work/root-sc-cold" "$n" "$stage/rootlessrt" --cgroup-manager disabled)
sc_warm=$("${as_user[@]}" bash "$stage/bench.sh" __loop "$stage/work/bundle-sc" \
  "$stage/work/root-sc-warm" "$n" "$stage/rootlessrt" --cgroup-manager disabled)
sc_crun="fail crun not installed"
if [ -n "$crun" ]; then
  "${as_user[@]}" bash "$stage/bench.sh" __crun_config "$stage/work/bundle-sc" \
    "$stage/work/bundle-sc-crun" same >/dev/null 2>&1 &&
    sc_crun=$("${as_user[@]}" bash "$stage/bench.sh" __loop "$stage/work/bundle-sc-crun" \
      "$stage/work/root-sc-crun" "$n" "$crun" --cgroup-manager=disabled)
fi
echo
echo "bench: $n runs of /bin/true with podman's default seccomp profile"
printf '%-22s %12s\n' runtime "mean ms"
for row in "rootlessrt (cold)|$sc_cold" "rootlessrt (cached)|$sc_warm" "crun|$sc_crun"; do
  read -r st mean _ <<<"${row#*|}"
  if [ "$st" = ok ]; then
    printf '%-22s %12s\n' "${row%%|*}" "$(awk -v u="$mean" 'BEGIN {printf "%.2f", u / 1000}')"
  else
    printf '%-22s %s\n' "${row%%|*}" "failed: ${row#*|}"
  fi
done

# ---------------------------------------------------------------- podman run --rm
# Rootless podman with rootlessrt and with crun (tests/podman/podman-check.sh bench), when
# podman is installed and we are root (the tool sets up its own user).
tool=$here/../tests/podman/podman-check.sh
if [ "$(id -u)" -eq 0 ] && command -v podman >/dev/null 2>&1 && bash "$tool" setup >/dev/null; then
  pdir=${PC_WORK:-/tmp/rrt-podman-check}/runtime
  mkdir -p "$pdir" && chmod 0755 "$pdir" && install -m 0755 "$runtime" "$pdir/rootlessrt"
  echo
  echo "bench: podman run --rm localhost/busybox true (median of ${BENCH_PODMAN_N:-10})"
  for rt in "$pdir/rootlessrt" ${crun:+"$crun"}; do
    printf '%-12s %s\n' "$(basename "$rt")" \
      "$(bash "$tool" bench "$rt" "${BENCH_PODMAN_N:-10}" 2>&1 | tail -n 1)"
  done
else
  echo "bench: podman run --rm: skipped (needs root and podman)"
fi

# ---------------------------------------------------------------- nested (bench-nested.sh)
# /bin/true on the host and nested in a CI job's container, side by side (issue 29: nested <=
# 1.5 x host). As root only (its user needs subordinate ids); BENCH_NESTED=0 leaves it out.
if [ "${BENCH_NESTED:-1}" = 1 ] && [ "$(id -u)" -eq 0 ]; then
  echo
  bash "$here/bench-nested.sh" "$runtime" || echo "bench: the nested benchmark failed" >&2
fi

# ---------------------------------------------------------------- the desktop run (bench-image.sh)
# An image's first and warm runs against the bundle form, crun and podman; 1 GiB written on each
# overlay mechanism. BENCH_IMAGE=0 leaves it out.
if [ "${BENCH_IMAGE:-1}" = 1 ]; then
  echo
  bash "$here/bench-image.sh" "$runtime" || echo "bench: the image benchmark failed" >&2
fi

# ---------------------------------------------------------------- network (bench-net.sh)
# Published-port throughput, CPU per GB and connections/s against slirp4netns and pasta
# (tests/netbench/bench-net.sh, owned by the networking tests). BENCH_NET=0 leaves it out.
if [ "${BENCH_NET:-1}" = 1 ]; then
  bash "$here/../tests/netbench/bench-net.sh" "$runtime" || echo "bench: the network benchmark failed" >&2
fi

[ "$st_r" = ok ]
