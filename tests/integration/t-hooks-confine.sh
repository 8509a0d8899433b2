#!/bin/bash
# t-hooks-confine.sh: rootless, a startContainer hook runs with exactly the confinement of
# `process` (issue 27, item 1): uid, gid and groups, the capability sets, NoNewPrivs, rlimits and
# the seccomp filter (runc's seccomp.bats "startContainer hook": the filter kills the hook's
# mkdir); a cgroup2 mount fails in it; its timeout still holds. The cases: tests/hooks/confine-cases.sh;
# as real root: t-root-hooks-confine.sh.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# The container has a cgroup namespace of its own (the default config's): an unconfined hook, root
# of the user namespace that owns it, could mount a cgroup2 there.
hc_bundle() { mkbundle "$@"; }
HC_MOUNT="-t cgroup2 cgroup2"
read -r su_start su_count <<<"$(subid_range /etc/subuid)"
read -r sg_start sg_count <<<"$(subid_range /etc/subgid)"
HC_IDS=0
[ "${su_count:-0}" -gt 1000 ] && [ "${sg_count:-0}" -gt 1000 ] && HC_IDS=1
: "$su_start" "$sg_start"

# shellcheck source=../hooks/confine-cases.sh
source "$TESTS_DIR/hooks/confine-cases.sh"
done_testing
