#!/bin/bash
# bench-nested.sh RUNTIME: the mean wall time of BENCH_N (20) sequential `run` of a /bin/true
# busybox bundle on the host and nested in a CI job's container (issue 29, target: nested <=
# 1.5 x host), side by side. The job's container is rootlessrt's own rootless one, as
# tests/engines/nested.sh makes it (the host's /usr and /etc bound read-only; its /proc the
# outer one bound, masks kept), the job as uid 0 with Docker's 14 capabilities and as uid 1000.
# Every loop is bench.sh's own (__loop: one warm-up, then the timed runs, timed where they run,
# so the outer container's start is not counted), in the order host, root, uid 1000, uid 1000,
# root, host, each mean the average of its two rounds, so that a drift of the machine's load
# hits all alike. As root the runs are the user BENCH_USER's (rrt-test).
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
mkdir -p "$stage/nested" "$stage/state" || exit 1
install -m 0755 "$runtime" "$stage/nested/rootlessrt" &&
  install -m 0755 "$here/bench.sh" "$here/mkbundle.sh" "$stage/nested/" || die "cannot copy to $stage"
chown -R "$uid:$gid" "$stage"
as_user=(setpriv "--reuid=$uid" "--regid=$gid" --init-groups env -i
  PATH=/usr/local/bin:/usr/bin:/bin HOME="$stage")
cd / || exit 1
"${as_user[@]}" bash "$stage/nested/mkbundle.sh" "$stage/nested/rootlessrt" "$stage/nested/bundle" \
  -- /bin/true >"$stage/mkbundle.log" 2>&1 || die "cannot make the bundle: $(cat "$stage/mkbundle.log")"

# The job's containers, running bench.sh's loop on the same bundle (bound at the same path): as
# uid 0 with Docker's 14 capabilities (its inner maps written directly), and as uid 1000 with
# none (the job's own id alone, written by itself).
caps='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW",
 "CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT",
 "CAP_KILL","CAP_AUDIT_WRITE"]'
outer() { # outer NAME JQ-FILTER
  local o=$stage/outer-$1
  mkdir -p "$o/rootfs" && (cd "$o/rootfs" && mkdir -p usr etc proc sys dev tmp run nested &&
    ln -s usr/bin bin && ln -s usr/sbin sbin && ln -s usr/lib lib && ln -s usr/lib64 lib64) || exit 1
  (cd "$o" && "$stage/nested/rootlessrt" spec --rootless) || exit 1
  jq --arg s "$stage/nested" --arg n "$n" --argjson caps "$caps" '
    .process.terminal = false |
    .process.args = ["/bin/bash", ($s + "/bench.sh"), "__loop", ($s + "/bundle"), "/tmp/root", $n,
                     ($s + "/rootlessrt"), "--cgroup-manager", "disabled"] |
    .mounts += [
      {destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro", "nosuid", "nodev"]},
      {destination: "/etc", type: "bind", source: "/etc", options: ["rbind", "ro", "nosuid", "nodev"]},
      {destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777"]},
      {destination: $s, type: "bind", source: $s, options: ["rbind", "ro"]}] | '"$2" \
    "$o/config.json" >"$o/c.json" && mv "$o/c.json" "$o/config.json" || exit 1
  chown -R "$uid:$gid" "$o"
}
outer root '.process.noNewPrivileges = false |
  .process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps}'
outer user '.process.user = {uid: 1000, gid: 1000} | .process.capabilities = {}'

host_loop() {
  "${as_user[@]}" bash "$stage/nested/bench.sh" __loop "$stage/nested/bundle" "$stage/root-host-$1" \
    "$n" "$stage/nested/rootlessrt" --cgroup-manager disabled
}
nested_loop() { # nested_loop NAME ROUND
  "${as_user[@]}" "$stage/nested/rootlessrt" --root "$stage/state" --cgroup-manager disabled run \
    -b "$stage/outer-$1" "bench-nested-$1-$2" 2>"$stage/nested-$1.err" || cat "$stage/nested-$1.err" >&2
}
# mean_ms A B: the mean of two "ok MEAN_US RSS" results in ms, or empty when one failed.
mean_ms() {
  local s1 m1 s2 m2
  read -r s1 m1 _ <<<"$1"
  read -r s2 m2 _ <<<"$2"
  [ "$s1" = ok ] && [ "$s2" = ok ] && awk -v a="$m1" -v b="$m2" 'BEGIN {printf "%.2f", (a + b) / 2000}'
}
h1=$(host_loop 1)
r1=$(nested_loop root 1)
u1=$(nested_loop user 1)
u2=$(nested_loop user 2)
r2=$(nested_loop root 2)
h2=$(host_loop 2)
echo "bench: $n sequential runs of /bin/true in a busybox bundle, on the host and nested in a CI"
echo "job's container (rootlessrt's own rootless one), as $user; two rounds each (host, nested"
echo "root, nested uid 1000, the same back)"
printf '%-34s %10s %8s\n' where "mean ms" "x host"
host=$(mean_ms "$h1" "$h2")
ok=1
for row in "host|$host" "nested, uid 0 + Docker's 14 caps|$(mean_ms "$r1" "$r2")" \
  "nested, uid 1000, no capabilities|$(mean_ms "$u1" "$u2")"; do
  name=${row%%|*} ms=${row#*|}
  if [ -z "$ms" ]; then
    printf '%-34s %s\n' "$name" "failed"
    ok=0
  elif [ -n "$host" ]; then
    printf '%-34s %10s %8s\n' "$name" "$ms" "$(awk -v x="$ms" -v h="$host" 'BEGIN {printf "%.2f", x / h}')"
  fi
done
if [ "$ok" = 1 ]; then
  awk -v h="$host" -v a="$(mean_ms "$r1" "$r2")" -v b="$(mean_ms "$u1" "$u2")" 'BEGIN {
    q = (a > b ? a : b) / h
    printf "worst ratio nested/host: %.2f (target <= 1.50: %s)\n", q, q <= 1.5 ? "met" : "missed"
  }'
fi
[ "$ok" = 1 ]
