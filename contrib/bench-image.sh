#!/bin/bash
# bench-image.sh RUNTIME: the desktop run, measured (part of `make bench`). An image built by
# contrib/mkimage.py (busybox, 3 layers): the first run (the unpack included) and the warm
# `run --rm IMAGE true`, alternating with the bundle form of the same runtime and with crun on a
# prepared bundle (one at a time, so load hits all alike), against `podman run --rm` of the same
# image when podman is installed; the same image from a local registry (docker-registry on
# 127.0.0.1, pushed by skopeo, when both are installed): a cold `run docker://` (the pull
# included) and a warm one against `podman run` of it with and without the image pulled;
# then a 1 GiB write inside the container on each overlay
# mechanism and on the host filesystem under it (busybox dd, then sync -d of the file, timed from outside).
#
# Knobs: BENCH_N (20 warm runs each), BENCH_COLD_N (5), BENCH_PODMAN_N (5), BENCH_WRITE_MB (1024).
# As root it runs as BENCH_USER (rrt-test) in a private mount namespace whose /sys/fs/cgroup is
# cgroup2 (crun refuses a hybrid host), as bench.sh does.
set -u

die() {
  echo "bench-image: $*" >&2
  exit 1
}

now_us() { now=${EPOCHREALTIME/[.,]/}; }
ms() { awk -v u="$1" 'BEGIN {printf "%.1f", u / 1000}'; }

# timed US_VAR CMD...: adds CMD's wall time to US_VAR; fails with its first error line.
timed() {
  local var=$1 t0 now
  shift
  now_us
  t0=$now
  if ! "$@" >/dev/null 2>"$W/err"; then
    echo "bench-image: failed: $* : $(head -n 1 "$W/err")" >&2
    return 1
  fi
  now_us
  printf -v "$var" '%d' $((${!var} + now - t0))
}

store_clear() {
  local l
  for l in "$S"/layers/sha256/*; do
    [ -e "$l" ] && "$R" store --storage "$S" rm "sha256:$(basename "$l")"
  done
  return 0
}

# dd_rate LABEL MB CMD...: CMD writes MB MiB (dd, fsync'ed); its rate from its wall time.
dd_rate() {
  local label=$1 mb=$2 t=0
  shift 2
  if timed t "$@"; then
    printf '%-34s %8s MiB/s\n' "$label" "$(awk -v m="$mb" -v u="$t" 'BEGIN {printf "%.0f", m / (u / 1e6)}')"
  else
    printf '%-34s %s\n' "$label" failed
  fi
}

user_part() {
  R=$1
  W=$2
  S=$W/store
  local n=${BENCH_N:-20} cn=${BENCH_COLD_N:-5} pn=${BENCH_PODMAN_N:-5} mb=${BENCH_WRITE_MB:-1024}
  local here img t=0 i tr=0 tb=0 tc=0 tp=0 crun
  here=$(dirname "$R")
  export XDG_RUNTIME_DIR=$W/xdg
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 0700 "$XDG_RUNTIME_DIR"
  /usr/bin/python3 "$here/mkimage.py" "$W/img" >"$W/mkimage.log" 2>&1 || die "mkimage: $(tail -1 "$W/mkimage.log")"
  img="oci:$W/img/oci"
  bash "$here/mkbundle.sh" "$R" "$W/bundle" -- /bin/true >"$W/mkbundle.log" 2>&1 ||
    die "mkbundle: $(tail -1 "$W/mkbundle.log")"
  rr=("$R" --root "$W/root" --cgroup-manager disabled)

  echo "bench: the desktop run of a 3-layer busybox image ($(du -sh "$W/img/oci.tar" | cut -f1) as oci-archive)"
  for ((i = 1; i <= cn; i++)); do
    store_clear
    timed t "${rr[@]}" run --rm --storage "$S" "$img" true || return 1
  done
  printf '%-44s %8s ms\n' "first run (unpack included), mean of $cn" "$(ms $((t / cn)))"

  crun=$(command -v crun || true)
  if [ -n "$crun" ]; then
    mkdir -p "$W/bundle-crun"
    jq --arg r "$W/bundle/rootfs" '.root.path = $r | .ociVersion = "1.0.2"' "$W/bundle/config.json" \
      >"$W/bundle-crun/config.json"
    "$crun" --root "$W/root-crun" --cgroup-manager=disabled run -b "$W/bundle-crun" w >/dev/null 2>&1 || crun=""
  fi
  timed tr "${rr[@]}" run --rm --storage "$S" "$img" true || return 1
  tr=0
  for ((i = 1; i <= n; i++)); do
    timed tr "${rr[@]}" run --rm --storage "$S" "$img" true || return 1
    timed tb "${rr[@]}" run -b "$W/bundle" "b$i" || return 1
    if [ -n "$crun" ]; then
      timed tc "$crun" --root "$W/root-crun" --cgroup-manager=disabled run -b "$W/bundle-crun" "c$i" || return 1
    fi
  done
  printf '%-44s %8s ms\n' "warm: run --rm IMAGE true, mean of $n" "$(ms $((tr / n)))"
  printf '%-44s %8s ms   (image / bundle: %s)\n' "bundle form: run -b BUNDLE ID (same runs)" \
    "$(ms $((tb / n)))" "$(awk -v a="$tr" -v b="$tb" 'BEGIN {printf "%.2f", a / b}')"
  if [ -n "$crun" ]; then
    printf '%-44s %8s ms\n' "crun run on a prepared bundle (same runs)" "$(ms $((tc / n)))"
  else
    echo "crun: not installed or refused the bundle"
  fi

  if command -v podman >/dev/null; then
    local -a p=(podman --root "$W/proot" --runroot "$W/prun" --cgroup-manager cgroupfs --events-backend none)
    if "${p[@]}" load -i "$W/img/docker.tar" >/dev/null 2>&1 &&
      "${p[@]}" run --rm --net none localhost/rrt-test:latest >/dev/null 2>&1; then
      for ((i = 1; i <= pn; i++)); do
        timed tp "${p[@]}" run --rm --net none localhost/rrt-test:latest true || break
      done
      printf '%-44s %8s ms   (rootlessrt image / podman: %s)\n' "podman run --rm IMAGE true, mean of $pn" \
        "$(ms $((tp / pn)))" "$(awk -v a="$tr" -v n="$n" -v b="$tp" -v m="$pn" 'BEGIN {printf "%.3f", (a / n) / (b / m)}')"
    else
      echo "podman: cannot load or run the image here: $("${p[@]}" run --rm localhost/rrt-test:latest 2>&1 | tail -n 1)"
    fi
    "${p[@]}" system reset -f >/dev/null 2>&1
  else
    echo "podman: not installed"
  fi

  registry_part "$img" "$cn" "$n" "$pn" || echo "bench: the registry benchmark failed" >&2

  echo
  echo "bench: writing $mb MiB (busybox dd, then fdatasync of the file) inside the container and on the host"
  local dd="dd if=/dev/zero of=\$1 bs=1M count=$mb 2>/dev/null && sync -d \$1"
  dd_rate "host ($(stat -f -c %T "$W"))" "$mb" /bin/busybox sh -c "$dd" sh "$W/host.img"
  rm -f "$W/host.img"
  for mech in kernel fuse; do
    dd_rate "container, --overlay $mech" "$mb" "${rr[@]}" run --rm --overlay "$mech" --storage "$S" -u 0 \
      --entrypoint /bin/sh "$img" -c "$dd" sh /big
  done
  store_clear
}

# registry_part IMAGE COLD_N WARM_N PODMAN_N: the image pushed to a registry on 127.0.0.1, run
# from there cold (empty store: the pull included) and warm, and by podman likewise.
registry_part() {
  local img=$1 cn=$2 n=$3 pn=$4 port ref t=0 tw=0 tp=0 tpw=0 i reg
  echo
  if ! command -v docker-registry >/dev/null || ! command -v skopeo >/dev/null; then
    echo "registry: docker-registry or skopeo is not installed"
    return 0
  fi
  port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  printf 'version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
    "$W/regdata" "$port" >"$W/registry.yml"
  docker-registry serve "$W/registry.yml" >"$W/registry.log" 2>&1 &
  reg=$!
  for ((i = 0; i < 200; i++)); do
    curl -s -o /dev/null "http://127.0.0.1:$port/v2/" && break
    sleep 0.05
  done
  ref=127.0.0.1:$port/rrt/bench:latest
  if ! skopeo copy -q --dest-tls-verify=false "$img:latest" "docker://$ref" >"$W/skopeo.log" 2>&1; then
    echo "registry: skopeo copy failed: $(tail -n 1 "$W/skopeo.log")"
    kill "$reg"
    return 1
  fi
  echo "bench: the same image from a local registry (docker-registry on 127.0.0.1, http)"
  for ((i = 1; i <= cn; i++)); do
    store_clear
    timed t "${rr[@]}" run --rm --storage "$S" --tls-verify=false "docker://$ref" true || break
  done
  printf '%-44s %8s ms\n' "cold: run docker://REF true (pull), mean of $cn" "$(ms $((t / cn)))"
  for ((i = 1; i <= n; i++)); do
    timed tw "${rr[@]}" run --rm --storage "$S" --tls-verify=false "docker://$ref" true || break
  done
  printf '%-44s %8s ms\n' "warm: run docker://REF true, mean of $n" "$(ms $((tw / n)))"
  if command -v podman >/dev/null; then
    local -a p=(podman --root "$W/proot" --runroot "$W/prun" --cgroup-manager cgroupfs --events-backend none)
    for ((i = 1; i <= pn; i++)); do
      "${p[@]}" rmi -f "$ref" >/dev/null 2>&1
      timed tp "${p[@]}" run --rm --net none --tls-verify=false "$ref" true || break
    done
    for ((i = 1; i <= pn; i++)); do
      timed tpw "${p[@]}" run --rm --net none "$ref" true || break
    done
    printf '%-44s %8s ms   (rootlessrt / podman: %s)\n' "podman run (pull included), mean of $pn" \
      "$(ms $((tp / pn)))" "$(awk -v a="$t" -v n="$cn" -v b="$tp" -v m="$pn" 'BEGIN {printf "%.3f", (a / n) / (b / m)}')"
    printf '%-44s %8s ms   (rootlessrt / podman: %s)\n' "podman run, image present, mean of $pn" \
      "$(ms $((tpw / pn)))" "$(awk -v a="$tw" -v n="$n" -v b="$tpw" -v m="$pn" 'BEGIN {printf "%.3f", (a / n) / (b / m)}')"
    "${p[@]}" system reset -f >/dev/null 2>&1
  else
    echo "podman: not installed"
  fi
  kill "$reg"
  wait "$reg" 2>/dev/null
  return 0
}

case ${1:-} in
  __user)
    shift
    user_part "$@"
    exit
    ;;
esac

[ $# -eq 1 ] || die "usage: bench-image.sh RUNTIME"
runtime=$(readlink -f "$1") || die "no runtime $1"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stage=$(mktemp -d /tmp/rrt-bench-image.XXXXXX) || die "mktemp failed"
chmod 0755 "$stage"
{ cp "$runtime" "$stage/rootlessrt" && cp "$here/bench-image.sh" "$here/mkimage.py" \
  "$here/mkbundle.sh" "$stage/"; } || die "cannot copy to $stage"
# The registry client goes beside the runtime, where it looks for it.
[ -x "$(dirname "$runtime")/rootlessrt-pull" ] && cp "$(dirname "$runtime")/rootlessrt-pull" "$stage/"
mkdir "$stage/work"
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  user=${BENCH_USER:-rrt-test}
  uid=$(bash "$here/ensure-user.sh" "$user") || die "cannot set up the user $user"
  chown "$uid:$(id -g "$user")" "$stage/work"
  pre='mount --make-rprivate / 2>/dev/null;'
  [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ] && pre+=' mount -t cgroup2 none /sys/fs/cgroup;'
  as_user=(unshare -m sh -c "$pre"' exec "$@"' sh
    setpriv "--reuid=$uid" "--regid=$(id -g "$user")" --init-groups --reset-env
    env PATH=/usr/local/bin:/usr/bin:/bin HOME="$stage/work" BENCH_N="${BENCH_N:-20}"
    BENCH_COLD_N="${BENCH_COLD_N:-5}" BENCH_PODMAN_N="${BENCH_PODMAN_N:-5}"
    BENCH_WRITE_MB="${BENCH_WRITE_MB:-1024}")
fi
cd / || exit 1
"${as_user[@]}" bash "$stage/bench-image.sh" __user "$stage/rootlessrt" "$stage/work"
status=$?
"${as_user[@]}" sh -c 'unshare -r --map-auto rm -rf "$1"/* 2>/dev/null' sh "$stage/work"
rm -rf "$stage"
exit "$status"
