#!/bin/bash
# t-root-devices.sh: as real root, linux.resources.devices is enforced: a node the config creates
# (/dev/fuse) but its rules deny cannot be opened (EPERM), an allow rule opens it, the devices
# every container needs stay usable. Through the cgroup v1 devices controller on this host's
# layout (legacy or hybrid), and through the eBPF device program on a cgroup2-only view (a private
# mount namespace with cgroup2 at /sys/fs/cgroup). Unprivileged runs skip: rootless, only the
# nodes bound into /dev exist, and no rule is enforced by a cgroup.
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

N=31
if ! real_root; then
  skip "device rules are enforced for real root only; this runs as uid $(id -u)" "$N"
  done_testing
fi
if [ ! -c /dev/fuse ]; then
  skip "no /dev/fuse on this host to test with" "$N"
  done_testing
fi

# A root config without a user namespace, /dev/fuse created by linux.devices.
b=$(mkbundle dev rrt-probe open /dev/fuse)
cfg "$b" '.linux.namespaces |= map(select(.type != "user")) | del(.linux.uidMappings, .linux.gidMappings)
  | .linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229, "fileMode": 438}]'
rules() { # rules JSON: linux.resources.devices
  cfg "$b" '.linux.resources.devices = $r' --argjson r "$1"
}
deny_all='[{"allow": false, "access": "rwm"}]'

# The attacks on the v1 writer (issue 19.4), and what opening /dev/fuse (c 10:229) must give.
attack_rules=(
  '[{"allow": false, "access": "rwm"}, {"allow": true, "type": "a", "major": 1, "minor": 3, "access": "rwm"}]'
  '[{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "access": "rwm"}, {"allow": false, "type": "c", "major": 10, "minor": 229, "access": "rwm"}]'
  '[{"allow": false, "access": "rwm"}, {"allow": true, "type": "a", "major": 10, "minor": 229, "access": "rw"}]'
)
attack_want=(EPERM EPERM ok)
attack_name=(
  "allow a 1:3 (null, both types) does not open c 10:229"
  "deny all, allow c *:*, deny c 10:229: c 10:229 stays closed"
  "allow a 10:229 rw opens c 10:229"
)

# compare_engine VIEW WANT NAME: the same bundle under runc (the host's v1 layout) or crun (the
# cgroup2-only view, where it runs with its cgroupfs manager) gives the same open(2) result.
compare_engine() {
  local view=$1 want=$2 name=$3 eng id
  eng=$([ "$view" = host ] && echo runc || echo crun)
  if ! command -v "$eng" >/dev/null; then
    skip "$eng is not installed: $view: $name not compared" 1
    return
  fi
  id=cmp-$$-$(new_id "$eng")
  if [ "$view" = host ]; then
    run timeout -k 5 "$RRT_CMD_TIMEOUT" runc --root "$T_WORK/runc" run -b "$b" "$id"
  else
    # crun 1.8.1 knows runtime-spec versions up to 1.1: the same config, as 1.0.2.
    cp "$b/config.json" "$T_WORK/config.json.rrt"
    cfg "$b" '.ociVersion = "1.0.2" | del(.process.rlimits)'
    run unshare -m --propagation private sh -c \
      'mount -t cgroup2 none /sys/fs/cgroup || exit 99; shift; exec "$@"' sh - \
      timeout -k 5 "$RRT_CMD_TIMEOUT" crun --root "$T_WORK/crun" run -b "$b" "$id"
    cp "$T_WORK/config.json.rrt" "$b/config.json"
  fi
  # Where the other runtime gets it wrong (runc 1.1.5 on v1 opens c 10:229 under "a 1:3") or
  # refuses the rules, that is reported, not held against rootlessrt.
  if [ "$out" != ok ] && [ "$out" != EPERM ]; then
    skip "$eng refused or did not run the bundle (exit $rc: $(head -c 160 <<<"$err" | tr '\n' ' ')): $view: $name" 1
  elif [ "$out" != "$want" ]; then
    skip "$eng differs: $view: $name: $eng's container gets $out" 1
  else
    pass "$view: $eng agrees: $name"
  fi
  "$eng" --root "$T_WORK/$eng" delete -f "$id" >/dev/null 2>&1
}

# run_in VIEW ID [ARGS...]: `run` of the bundle on the host's layout (host) or a cgroup2-only one.
run_in() {
  local view=$1
  shift
  if [ "$view" = host ]; then
    run rrt run -b "$b" "$@"
  else
    run unshare -m --propagation private sh -c \
      'mount -t cgroup2 none /sys/fs/cgroup || exit 99; shift; exec "$@"' sh - \
      timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" run -b "$b" "$@"
  fi
}

check_view() { # check_view VIEW: 14 tests
  local view=$1 id
  id=$(new_id "$view")
  rules "$deny_all"
  run_in "$view" "$id"
  if [ "$rc" = 99 ]; then
    skip "cannot mount cgroup2 in a private mount namespace" 14
    return
  fi
  is "$out" EPERM "$view: deny-all: opening /dev/fuse inside fails with EPERM"
  is "$rc" 1 "$view: and the program exits 1"
  [ "$out" = EPERM ] || diag "$err"

  rules '[{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rw"}]'
  run_in "$view" "$(new_id "$view")"
  is "$out" ok "$view: an allow rule for c 10:229 rw opens it"

  rules '[{"allow": true, "access": "rwm"}, {"allow": false, "type": "c", "major": 10, "minor": 229, "access": "w"}]'
  run_in "$view" "$(new_id "$view")"
  is "$out" EPERM "$view: allow-all then deny c 10:229 w: read-write open refused (the last rule wins)"

  # Issue 19.4, as the attack: rules that, written line by line to the v1 controller, opened
  # every device (`a 1:3 rwm` is "all devices" there; a deny only removes an identical allow).
  local r want name i=0
  for r in "${attack_rules[@]}"; do
    want=${attack_want[$i]} name=${attack_name[$i]}
    i=$((i + 1))
    rules "$r"
    run_in "$view" "$(new_id "$view")"
    is "$out" "$want" "$view: $name"
    [ "$out" = "$want" ] || diag "$err"
    compare_engine "$view" "$want" "$name"
  done

  rules "$deny_all"
  cfg "$b" '.process.args = ["rrt-probe", "open", "/dev/null"]'
  run_in "$view" "$(new_id "$view")"
  is "$out" ok "$view: deny-all still leaves /dev/null usable"
  cfg "$b" '.process.args = ["rrt-probe", "open", "/dev/fuse"]'

  # update replaces the rules of a running container (the v1 lists, or the attached program).
  rules "$deny_all"
  cfg "$b" '.process.args = ["rrt-probe", "sleep", "1000"]'
  local script='"$@" run -d -b "$B" "$ID" >/dev/null 2>&1 || exit 98
    "$@" exec "$ID" rrt-probe open /dev/fuse
    printf "%s" "$RULES" | "$@" update -r - "$ID" || echo update-failed
    "$@" exec "$ID" rrt-probe open /dev/fuse; "$@" delete -f "$ID"'
  local allow='{"devices": [{"allow": false, "access": "rwm"},
    {"allow": true, "type": "c", "major": 10, "minor": 229, "access": "rw"}]}'
  id=$(new_id "$view")
  if [ "$view" = host ]; then
    run env B="$b" ID="$id" RULES="$allow" sh -c "$script" sh "$RRT" --root "$RRT_ROOT"
  else
    run env B="$b" ID="$id" RULES="$allow" unshare -m --propagation private sh -c \
      "mount -t cgroup2 none /sys/fs/cgroup || exit 99; $script" sh "$RRT" --root "$RRT_ROOT"
  fi
  is "$(printf '%s' "$out" | paste -sd' ')" "EPERM ok" "$view: update with an allow rule opens it in a running container"
  cfg "$b" '.process.args = ["rrt-probe", "open", "/dev/fuse"]'

  rules '[{"allow": false, "type": "x", "access": "rwm"}]'
  run_in "$view" "$(new_id "$view")"
  is "$rc" 1 "$view: a rule of type x is refused"
  like "$err" 'devices\[0\]\.type "x"' "$view: naming the rule"
}

check_view host
ids_before=$(find /sys/fs/cgroup -maxdepth 2 -name "rootlessrt-host-$$-*" 2>/dev/null)
is "$ids_before" "" "no cgroup of these containers is left on the host"
check_view cgroup2
nothing_left "host-$$-1" "$b"
nothing_left "cgroup2-$$-7" "$b"
done_testing
