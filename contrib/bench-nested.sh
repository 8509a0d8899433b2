#!/bin/bash
# bench-nested.sh RUNTIME: the mean wall time of BENCH_N (20) sequential `run` of a /bin/true
# busybox bundle on the host and nested in a CI job's container (issue 29, target: nested <=
# 1.5 x host), side by side. The job's container is rootlessrt's own rootless one, as
# tests/engines/nested.sh makes it (the host's /usr and /etc bound read-only, uid 0 with
# Docker's 14 capabilities, so the inner maps are written directly and its /proc is the outer
# one bound, masks kept). Both loops are bench.sh's own (__loop: one warm-up, then the timed
# runs, timed where they run, so the outer container's start is not counted), in the order host,
# nested, nested, host, each mean the average of its two rounds, so that a drift of the
# machine's load hits both alike. As root the runs are the user BENCH_USER's (rrt-test).
set -u

die() {
  echo "bench-nested: $*" >&2
  exit 1
}

[ $# -eq 1 ] || die "usage: bench-nested.sh RUNTIME"
runtime=$(readlink -f "$1") && [ -x "$runtime" ] || die "no runtime $1"
n=${BENCH_N:-20}
[[ $n =~ ^[1-9][0-9]*$ ]] || die "BENCH_N must be a positive number"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ "$(id -u)" -eq 0 ] || die "needs root (the runs are made by an unprivileged user with subordinate ids)"
command -v jq >/dev/null || die "jq is not installed"

user=${BENCH_USER:-rrt-test}
uid=$(bash "$here/ensure-user.sh" "$user") || die "cannot set up the user $user"
gid=$(id -g "$user")
stage=$(mktemp -d /tmp/rrt-bench-nested.XXXXXX) || die "mktemp failed"
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"
mkdir -p "$stage/nested" "$stage/outer/rootfs" "$stage/state" || exit 1
install -m 0755 "$runtime" "$stage/nested/rootlessrt" &&
  install -m 0755 "$here/bench.sh" "$here/mkbundle.sh" "$stage/nested/" || die "cannot copy to $stage"
chown -R "$uid:$gid" "$stage"
as_user=(setpriv "--reuid=$uid" "--regid=$gid" --init-groups env -i
  PATH=/usr/local/bin:/usr/bin:/bin HOME="$stage")
cd / || exit 1
"${as_user[@]}" bash "$stage/nested/mkbundle.sh" "$stage/nested/rootlessrt" "$stage/nested/bundle" \
  -- /bin/true >"$stage/mkbundle.log" 2>&1 || die "cannot make the bundle: $(cat "$stage/mkbundle.log")"

# The job's container, running bench.sh's loop on the same bundle (bound at the same path).
(cd "$stage/outer/rootfs" && mkdir -p usr etc proc sys dev tmp run nested && ln -s usr/bin bin &&
  ln -s usr/sbin sbin && ln -s usr/lib lib && ln -s usr/lib64 lib64) || exit 1
(cd "$stage/outer" && "$stage/nested/rootlessrt" spec --rootless) || exit 1
caps='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW",
 "CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT",
 "CAP_KILL","CAP_AUDIT_WRITE"]'
jq --arg s "$stage/nested" --arg n "$n" --argjson caps "$caps" '
  .process.terminal = false | .process.noNewPrivileges = false |
  .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps} |
  .process.args = ["/bin/bash", ($s + "/bench.sh"), "__loop", ($s + "/bundle"), "/tmp/root", $n,
                   ($s + "/rootlessrt"), "--cgroup-manager", "disabled"] |
  .mounts += [
    {destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro", "nosuid", "nodev"]},
    {destination: "/etc", type: "bind", source: "/etc", options: ["rbind", "ro", "nosuid", "nodev"]},
    {destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777"]},
    {destination: $s, type: "bind", source: $s, options: ["rbind", "ro"]}]' \
  "$stage/outer/config.json" >"$stage/outer/c.json" && mv "$stage/outer/c.json" "$stage/outer/config.json" || exit 1
chown -R "$uid:$gid" "$stage/outer"

host_loop() {
  "${as_user[@]}" bash "$stage/nested/bench.sh" __loop "$stage/nested/bundle" "$stage/root-host-$1" \
    "$n" "$stage/nested/rootlessrt" --cgroup-manager disabled
}
nested_loop() {
  "${as_user[@]}" "$stage/nested/rootlessrt" --root "$stage/state" --cgroup-manager disabled run \
    -b "$stage/outer" "bench-nested-$1" 2>"$stage/nested-$1.err" || cat "$stage/nested-$1.err" >&2
}
h1=$(host_loop 1)
n1=$(nested_loop 1)
n2=$(nested_loop 2)
h2=$(host_loop 2)
read -r sh1 mh1 _ <<<"$h1"
read -r sn1 mn1 _ <<<"$n1"
read -r sn2 mn2 _ <<<"$n2"
read -r sh2 mh2 _ <<<"$h2"
echo "bench: $n sequential runs of /bin/true in a busybox bundle, on the host and nested in a CI"
echo "job's container (rootlessrt's own rootless one: uid 0, Docker's 14 capabilities), as $user;"
echo "two rounds each (host, nested, nested, host)"
printf '%-8s %12s\n' where "mean ms"
ok=1
for row in "host|$sh1|${mh1:-}|$sh2|${mh2:-}|$h1 $h2" "nested|$sn1|${mn1:-}|$sn2|${mn2:-}|$n1 $n2"; do
  IFS='|' read -r name s1 m1 s2 m2 why <<<"$row"
  if [ "$s1" = ok ] && [ "$s2" = ok ]; then
    printf '%-8s %12s\n' "$name" "$(awk -v a="$m1" -v b="$m2" 'BEGIN {printf "%.2f", (a + b) / 2000}')"
  else
    printf '%-8s %s\n' "$name" "failed: $why"
    ok=0
  fi
done
if [ "$ok" = 1 ]; then
  awk -v h=$((mh1 + mh2)) -v x=$((mn1 + mn2)) 'BEGIN {
    q = x / h
    printf "ratio nested/host: %.2f (target <= 1.50: %s)\n", q, q <= 1.5 ? "met" : "missed"
  }'
fi
[ "$ok" = 1 ]
