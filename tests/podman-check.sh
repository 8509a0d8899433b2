#!/bin/bash
# podman-check.sh RUNTIME: rootless podman's scenarios (tests/podman/podman-check.sh: setup, then
# check) against RUNTIME, as root with podman installed or installable; otherwise one SKIP line
# saying why. `make check` runs it (tests/run-all.sh) when podman is installed.
set -u

skip() {
  echo "SKIP podman-check: $*"
  exit 0
}

[ $# -eq 1 ] || {
  echo "usage: podman-check.sh RUNTIME" >&2
  exit 2
}
runtime=$(readlink -f "$1") || {
  echo "podman-check: no runtime $1" >&2
  exit 2
}
[ -x "$runtime" ] || {
  echo "podman-check: $1 is not executable" >&2
  exit 2
}
tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/podman/podman-check.sh

[ "$(id -u)" -eq 0 ] || skip "needs root (it installs podman and sets up its own user)"
if ! command -v podman >/dev/null 2>&1 &&
  ! apt-cache policy podman 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  skip "podman is neither installed nor installable (apt-cache policy podman)"
fi

bash "$tool" setup || {
  echo "podman-check: setup failed"
  exit 1
}

# Podman remembers a container's runtime by path and keys its options on the basename: a stable,
# world-readable copy named rootlessrt (the checkout may be where the podman user cannot go).
dir=${PC_WORK:-/tmp/rrt-podman-check}/runtime
mkdir -p "$dir"
chmod 0755 "$dir"
if ! install -m 0755 "$runtime" "$dir/rootlessrt.new" || ! mv -f "$dir/rootlessrt.new" "$dir/rootlessrt"; then
  echo "podman-check: cannot copy $runtime to $dir"
  exit 1
fi
bash "$tool" check "$dir/rootlessrt"
