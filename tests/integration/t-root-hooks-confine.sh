#!/bin/bash
# t-root-hooks-confine.sh: as real root, without a user namespace, a startContainer hook runs with
# exactly the confinement of `process` (issue 27, item 1): before, it ran as uid 0 with every
# capability, no NoNewPrivs and no filter, and mounted the host's v1 freezer hierarchy (release_agent
# writable). The cases: tests/hooks/confine-cases.sh; rootless: t-hooks-confine.sh.
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

N=32
if ! real_root; then
  skip "a hook with real root's privileges needs real root; this runs as uid $(id -u)" "$N"
  done_testing
fi
# runc's default spec: no user and no cgroup namespace, as the reported attack had it.
hc_bundle() {
  local b
  b=$(rootbundle "$@")
  cfg "$b" '.linux.namespaces |= map(select(.type != "cgroup"))' || bail_out "cannot edit $b/config.json"
  printf '%s\n' "$b"
}
# A v1 hierarchy where the host has one (a legacy or hybrid host), else the cgroup2.
if awk '$9 == "cgroup" && $NF ~ /(^|,)freezer(,|$)/ {f = 1} END {exit !f}' /proc/self/mountinfo; then
  HC_MOUNT="-t cgroup -o freezer freezer"
else
  HC_MOUNT="-t cgroup2 cgroup2"
fi
HC_IDS=1

# shellcheck source=../hooks/confine-cases.sh
source "$TESTS_DIR/hooks/confine-cases.sh"
done_testing
