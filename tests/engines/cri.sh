#!/bin/bash
# cri.sh RUNTIME: Kubernetes' CRI as the kubelet drives it: containerd's CRI plugin (Debian's
# containerd) with RUNTIME as a runtime handler of the runc shim (runtime_type
# io.containerd.runc.v2, BinaryName), cgroupfs, host-network pods (no CNI). The calls are made by
# cri.py (python3-grpcio). The same scenarios run with runc as the handler first, for the
# figures ("runc: N of M"); only RUNTIME's results count.
#
# Everything lives in a private mount namespace (unshare -m) and a work directory of its own:
# containerd's root, state and sockets, the images (oci-image.sh), the volumes. Real root only.
# Prints TAP-like lines and "cri: N passed, N failed, N skipped".
set -u
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tap.sh
source "$here/tap.sh"
# shellcheck source=daemon.sh
source "$here/daemon.sh"

if [ "${1:-}" != --inner ]; then
  [ $# -eq 1 ] || {
    echo "usage: cri.sh RUNTIME" >&2
    exit 2
  }
  runtime=$(readlink -f "$1") || exit 2
  if [ "$(id -u)" -ne 0 ] || [ "$(awk 'NR == 1 {print $3}' /proc/self/uid_map)" != 4294967295 ]; then
    skip_suite cri "needs real root to start containerd"
  fi
  for c in containerd containerd-shim-runc-v2 unshare; do
    command -v "$c" >/dev/null 2>&1 || {
      skip_suite cri "$c is not installed; contrib/install-deps.sh installs it as root"
    }
  done
  /usr/bin/python3 -c 'import grpc' 2>/dev/null || {
    skip_suite cri "python3-grpcio is not installed; contrib/install-deps.sh installs it as root"
  }
  exec unshare -m --propagation private bash "$here/cri.sh" --inner "$runtime"
fi

# ---------------------------------------------------------------- inside the mount namespace
runtime=$2
W=$(mktemp -d /tmp/rrt-cri.XXXXXX) || exit 2
ctrd_pid=""
cleanup() {
  if [ -n "$ctrd_pid" ]; then
    kill "$ctrd_pid" 2>/dev/null
    wait "$ctrd_pid" 2>/dev/null
  fi
  # What a failed scenario left: shims and containers (their processes are in this run's work dir).
  pkill -KILL -f "containerd-shim-runc-v2 -namespace k8s.io -address $W/" 2>/dev/null
  local cg
  for cg in /sys/fs/cgroup/*/rrt-cri-$$ /sys/fs/cgroup/rrt-cri-$$ /sys/fs/cgroup/unified/rrt-cri-$$; do
    [ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  [ "${RRT_KEEP:-0}" = 1 ] && echo "cri: work dir kept: $W" && return
  umount -R "$W" 2>/dev/null
  rm -rf "$W" 2>/dev/null
}
trap cleanup EXIT
mount -t tmpfs -o mode=0755 cri-work "$W" || exit 2
mkdir -p "$W/root" "$W/state" "$W/bin" "$W/runc-rrt" "$W/runc-runc" "$W/shared" "$W/cni"
cp "$runtime" "$W/bin/rootlessrt" || exit 2
[ -x "$(dirname "$runtime")/rootlessrt-net" ] && cp "$(dirname "$runtime")/rootlessrt-net" "$W/bin/"
# The Bidirectional volume must be a shared mount for containerd to accept it.
mount --bind "$W/shared" "$W/shared" && mount --make-shared "$W/shared"

restrict=false
if [ $((0x$(awk '/^CapBnd:/ {print $2}' /proc/self/status) >> 24 & 1)) -eq 0 ]; then
  restrict=true
fi
{
  containerd_config "$W"
  cat <<TOML
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/rrt/pause:test"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  # Without CAP_SYS_RESOURCE (this machine's root has none in its bounding set), lowering an
  # oom_score_adj fails; containerd then asks for no less than its own, as in rootless setups.
  restrict_oom_score_adj = $restrict
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$W/cni"
    conf_dir = "$W/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "rrt"
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.rrt]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.rrt.options]
        BinaryName = "$W/bin/rootlessrt"
        Root = "$W/runc-rrt"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc || echo /usr/sbin/runc)"
        Root = "$W/runc-runc"
TOML
} >"$W/config.toml"
ctr_() { timeout -k 5 60 ctr --address "$W/c.sock" -n k8s.io "$@"; }
if ! start_containerd "$W"; then
  fail "containerd with its CRI plugin starts" "$(tail -n 20 "$W/containerd.log")"
  summary cri
  exit 1
fi
# The images, offline: busybox, and a pause image whose process sleeps until it is killed.
if ! bash "$here/oci-image.sh" "$W/busybox.tar" docker.io/rrt/busybox:test >"$W/img.log" 2>&1 ||
  ! OCI_IMAGE_CMD='["sleep","2147483647"]' bash "$here/oci-image.sh" "$W/pause.tar" \
    docker.io/rrt/pause:test >>"$W/img.log" 2>&1 ||
  ! ctr_ images import "$W/busybox.tar" >>"$W/img.log" 2>&1 ||
  ! ctr_ images import "$W/pause.tar" >>"$W/img.log" 2>&1; then
  fail "the busybox and pause images are imported" "$(cat "$W/img.log")"
  summary cri
  exit 1
fi

# runc first, for the figures only.
mkdir -p "$W/work-runc" "$W/work-rrt"
ln -s "$W/shared" "$W/work-runc/shared"
ln -s "$W/shared" "$W/work-rrt/shared"
ref=$(CRI_CGROUP_PARENT=/rrt-cri-$$/runc timeout -k 10 300 /usr/bin/python3 "$here/cri.py" \
  "$W/c.sock" runc "$W/work-runc" 2>&1)
ref_line=$(printf '%s\n' "$ref" | grep -E '^cri: [0-9]+ passed' | tail -n 1)
echo "# with runc as the handler (for comparison, not counted): ${ref_line#cri: }"
printf '%s\n' "$ref" | grep -A3 '^not ok' | sed 's/^/# runc: /'

out=$(CRI_CGROUP_PARENT=/rrt-cri-$$/rrt timeout -k 10 300 /usr/bin/python3 "$here/cri.py" \
  "$W/c.sock" rrt "$W/work-rrt" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -v '^cri: [0-9]'
line=$(printf '%s\n' "$out" | grep -E '^cri: [0-9]+ passed' | tail -n 1)
if [ -z "$line" ]; then
  fail "cri.py printed no summary (exit status $rc)" "$(tail -n 20 "$W/containerd.log")"
else
  add_summary "$line"
  if [ "$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$line")" != 0 ]; then
    echo "# containerd's log (tail):"
    tail -n 30 "$W/containerd.log" | sed 's/^/#   /'
  fi
fi
# Nothing of the runtime's is left once every pod is removed (the shim gives it ROOT/NAMESPACE;
# its private data, the spare directories and the seccomp cache, lives beside that).
left=$(ls -A "$W/runc-rrt/k8s.io" 2>/dev/null)
if [ -z "$left" ]; then
  pass "no container state left under the runtime's root after the pods are removed"
else
  fail "no container state left under the runtime's root after the pods are removed" "$left"
fi
summary cri
[ "$N_FAIL" -eq 0 ]
