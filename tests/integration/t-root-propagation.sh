#!/bin/bash
# t-root-propagation.sh: linux.rootfsPropagation rshared with a volume bound "rbind,rshared" (CRI's
# bidirectional mount propagation): a mount made inside the container on the volume shows up on
# the host, as with runc and crun; with the default (rslave) it does not. The "host" is a mount
# namespace of the test's own (unshare -m), whose volume is a shared mount: nothing reaches the
# machine's. As real root only: a rootless container's mount namespace is owned by another user
# namespace, and the kernel makes every mount it copies from the host a slave there.
# rrt-test-as: root
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

N=6
if ! real_root; then
  skip "a mount propagating back to the host needs real root; this runs as uid $(id -u)" "$N"
  done_testing
fi
if ! unshare -m --propagation private true 2>/dev/null; then
  skip "unshare -m cannot make a mount namespace here" "$N"
  done_testing
fi

vol=$T_WORK/vol
mkdir -p "$vol"
b=$(rootbundle prop sh -c 'mkdir -p /vol/sub && mount -t tmpfs -o size=4k rrt-prop /vol/sub && echo mounted')
cfg "$b" '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"]) | .root.readonly = false
  | .mounts += [{destination: "/vol", type: "bind", source: $v, options: ["rbind", "rshared"]}]' \
  --arg v "$vol" || bail_out "cannot edit $b/config.json"

# in_host_ns PROPAGATION [RUN-FLAGS...]: the run inside a mount namespace whose $vol is a shared
# mount of its own; prints the container's output, then what that namespace sees at $vol/sub.
in_host_ns() {
  local prop=$1
  shift
  if [ "$prop" = default ]; then
    cfg "$b" 'del(.linux.rootfsPropagation)'
  else
    cfg "$b" '.linux.rootfsPropagation = $p' --arg p "$prop"
  fi
  run unshare -m --propagation private sh -c '
    mount --bind "$1" "$1" && mount --make-shared "$1" || exit 99
    vol=$1; shift
    "$@"
    awk -v p="$vol/sub" '"'"'$5 == p {print "host sees: " $9 " " $10}'"'"' /proc/self/mountinfo' \
    sh "$vol" timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" run "$@" -b "$b" "$(new_id prop)"
}

for mode in pivot no-pivot; do
  flag=()
  [ "$mode" = no-pivot ] && flag=(--no-pivot)
  in_host_ns rshared "${flag[@]}"
  [ "$rc" = 0 ] || diag "$err"
  is "$(paste -sd ' ' <<<"$out")" "mounted host sees: tmpfs rrt-prop" \
    "$mode, rootfsPropagation rshared: a mount inside the rshared volume reaches the host"
done

in_host_ns default
[ "$rc" = 0 ] || diag "$err"
is "$(paste -sd ' ' <<<"$out")" "mounted" "no rootfsPropagation (rslave): a mount inside the volume stays inside"

in_host_ns rprivate
[ "$rc" = 0 ] || diag "$err"
is "$(paste -sd ' ' <<<"$out")" "mounted" "rootfsPropagation rprivate: a mount inside the volume stays inside"

# Nothing of the test's mount namespaces reached the machine's.
no_line "$(awk '{print $5}' /proc/self/mountinfo)" "^$vol" "no mount at the volume on the machine"
ok "the volume directory on the machine holds only the directory made inside" test "$(ls -A "$vol")" = sub

done_testing
