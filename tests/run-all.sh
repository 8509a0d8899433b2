#!/bin/bash
# run-all.sh BUILD: unit tests (BUILD/tests/test_*) then integration tests (BUILD/rootlessrt,
# BUILD/rrt-probe); ends with the one line CI reads: "N passed, N failed[, N skipped]".
set -u

[ $# -eq 1 ] || {
  echo "usage: run-all.sh BUILD" >&2
  exit 2
}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(readlink -f "$1") || {
  echo "run-all: no build dir $1" >&2
  exit 2
}

# count WORD LINE: the number before WORD in a summary line ("unit: 3 passed, 0 failed").
count() {
  local n
  n=$(printf '%s\n' "$2" | sed -n "s/.*[^0-9]\([0-9][0-9]*\) $1.*/\1/p")
  echo "${n:-0}"
}

pass=0
fail=0
skip=0

shopt -s nullglob
units=("$build"/tests/test_*)
if [ ${#units[@]} -gt 0 ]; then
  unit_out=$(sh "$here/run-unit.sh" "${units[@]}")
  unit_rc=$?
  printf '%s\n' "$unit_out"
  line=$(printf '%s\n' "$unit_out" | grep '^unit: ' | tail -n 1)
  if [ -z "$line" ]; then
    echo "not ok - run-unit.sh printed no summary (exit status $unit_rc)"
    fail=$((fail + 1))
  else
    pass=$((pass + $(count passed "$line")))
    fail=$((fail + $(count failed "$line")))
    if [ "$unit_rc" -ne 0 ] && [ "$(count failed "$line")" -eq 0 ]; then
      fail=$((fail + 1))
    fi
  fi
else
  echo "unit: no test binaries in $build/tests"
fi

# Integration output streams (it takes a while); the summary line is taken from a copy.
int_log=$(mktemp)
bash "$here/run-integration.sh" "$build/rootlessrt" "$build/rrt-probe" 2>&1 | tee "$int_log"
int_rc=${PIPESTATUS[0]}
line=$(grep '^integration: [0-9]' "$int_log" | tail -n 1)
rm -f "$int_log"
if [ -z "$line" ]; then
  echo "not ok - run-integration.sh printed no summary (exit status $int_rc)"
  fail=$((fail + 1))
else
  pass=$((pass + $(count passed "$line")))
  fail=$((fail + $(count failed "$line")))
  skip=$((skip + $(count skipped "$line")))
  if [ "$int_rc" -ne 0 ] && [ "$(count failed "$line")" -eq 0 ]; then
    fail=$((fail + 1))
  fi
fi

# The fuzz harnesses (tests/fuzz/smoke.sh): each one's seed corpus replayed by the normal build
# (BUILD/fuzz/), then a few seconds of libFuzzer (build-fuzz/, made by `make check` where clang and
# libFuzzer are installed; the reason is printed where not). Each check counts as one test.
fuzz_log=$(mktemp)
if [ "${RRT_ASAN:-0}" = 1 ]; then
  RRT_FUZZ_SMOKE=0 RRT_FUZZ_SMOKE_WHY="check-asan replays the corpus; make check runs libFuzzer" \
    bash "$here/fuzz/smoke.sh" "${RRT_FUZZ_BUILD:-$here/../build-fuzz}" "$build" >"$fuzz_log" 2>&1
else
  bash "$here/fuzz/smoke.sh" "${RRT_FUZZ_BUILD:-$here/../build-fuzz}" "$build" >"$fuzz_log" 2>&1
fi
fuzz_rc=$?
grep -E '^(not ok|ok # SKIP|#)' "$fuzz_log" | sed 's/^/fuzz: /'
line=$(grep -E '^fuzz: [0-9]+ passed' "$fuzz_log" | tail -n 1)
if [ -z "$line" ]; then
  tail -n 20 "$fuzz_log" | sed 's/^/fuzz: /'
  echo "not ok - tests/fuzz/smoke.sh printed no summary (exit status $fuzz_rc)"
  fail=$((fail + 1))
else
  echo "$line"
  pass=$((pass + $(count passed "$line")))
  fail=$((fail + $(count failed "$line")))
  skip=$((skip + $(count skipped "$line")))
  if [ "$fuzz_rc" -ne 0 ] && [ "$(count failed "$line")" -eq 0 ]; then
    fail=$((fail + 1))
  fi
fi
rm -f "$fuzz_log"

# The real client: rootless podman's 73 scenarios (tests/podman/podman-check.sh) with this
# runtime, when podman is installed (contrib/install-deps.sh installs it as root). Each scenario
# counts as one test.
if [ "${RRT_ASAN:-0}" = 1 ]; then
  echo "podman: skipped (not under the sanitizers: podman's own timeouts are tuned for a normal build)"
  skip=$((skip + 1))
elif ! command -v podman >/dev/null 2>&1; then
  echo "podman: skipped (podman is not installed; contrib/install-deps.sh as root installs it for these 73 scenarios)"
  skip=$((skip + 1))
elif [ "$(id -u)" -ne 0 ]; then
  echo "podman: skipped (the podman scenarios need root to set up their user)"
  skip=$((skip + 1))
else
  pc_log=$(mktemp)
  bash "$here/podman-check.sh" "$build/rootlessrt" >"$pc_log" 2>&1
  pc_rc=$?
  grep -E '^(FAIL|SKIP)' "$pc_log" | sed 's/^/podman: /'
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$pc_log" | tail -n 1)
  if [ -z "$line" ] && [ "$pc_rc" -eq 0 ] && grep -q '^SKIP podman-check' "$pc_log"; then
    skip=$((skip + 1)) # the reason is printed above
  elif [ -z "$line" ]; then
    tail -n 20 "$pc_log" | sed 's/^/podman: /'
    echo "not ok - podman-check printed no summary (exit status $pc_rc)"
    fail=$((fail + 1))
  else
    echo "podman: $line"
    pass=$((pass + $(count passed " $line")))
    fail=$((fail + $(count failed " $line")))
    skip=$((skip + $(count skipped " $line")))
  fi
  rm -f "$pc_log"
fi

# engine NAME SCRIPT: one of tests/engines/ against the build; it ends with "NAME: N passed, N
# failed, N skipped" (or "NAME: skipped (why)" and that summary). Each check counts as one test.
engine() {
  local name=$1 script=$2 log rc line
  if [ "${RRT_ASAN:-0}" = 1 ]; then
    echo "$name: skipped (not under the sanitizers: the engine's timeouts are tuned for a normal build)"
    skip=$((skip + 1))
    return
  fi
  log=$(mktemp)
  bash "$here/engines/$script" "$build/rootlessrt" >"$log" 2>&1
  rc=$?
  grep -E '^((root|rootless): )?(not ok|ok # SKIP|#)' "$log" | sed "s/^/$name: /"
  grep -E "^$name: skipped" "$log"
  line=$(grep -E "^$name: [0-9]+ passed" "$log" | tail -n 1)
  if [ -z "$line" ]; then
    tail -n 20 "$log" | sed "s/^/$name: /"
    echo "not ok - $script printed no summary (exit status $rc)"
    fail=$((fail + 1))
  else
    echo "$line"
    pass=$((pass + $(count passed "$line")))
    fail=$((fail + $(count failed "$line")))
    skip=$((skip + $(count skipped "$line")))
    if [ "$rc" -ne 0 ] && [ "$(count failed "$line")" -eq 0 ]; then
      fail=$((fail + 1))
    fi
  fi
  rm -f "$log"
}

# containerd through its runc shim, as root and rootless under rootlesskit, when containerd is
# installed (contrib/install-deps.sh installs it as root).
engine containerd containerd.sh
# Kubernetes' CRI: containerd's CRI plugin with the runtime as a handler, driven by the kubelet's
# calls (tests/engines/cri.py, python3-grpcio), as root.
engine cri cri.sh
# Docker (docker.io's dockerd 20.10, rootful and rootless under dockerd-rootless.sh) with the
# runtime as its default runtime, when docker.io is installed (contrib/install-deps.sh installs it
# as root); a time limit per mode, and everything it started is gone after it.
engine docker docker.sh
# Rootless podman with --cgroup-manager=systemd beside a real systemd --user manager (started by
# tests/helper/systemd-user.sh; skipped with the reason without podman or systemd).
engine podman-systemd podman-systemd.sh
# Nested where CI jobs run (issue 29): inside rootlessrt's own rootless container, rootless
# podman's, rootful Docker's (a dockerd of its own) and a CRI pod (containerd, runc), a job runs
# spec --rootless bundles, a desktop run and slirp, or is refused in one line; each place is
# skipped with the reason when its engine is missing.
engine nested nested.sh
# The hostile images of t-image-hostile.sh fed to rootless podman (its own runtime, a private
# store) and to rootlessrt, class by class; the table of what each did (skipped without podman).
engine podman-hostile podman-hostile.sh

if [ "$skip" -gt 0 ]; then
  echo "$pass passed, $fail failed, $skip skipped"
else
  echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
