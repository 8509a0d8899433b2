#!/bin/bash
# mkbundle.sh RUNTIME DIR [--probe PROBE] [-- ARGS...]: makes an OCI bundle in DIR with a busybox
# rootfs (Debian's busybox-static), optionally the static rrt-probe test helper, and the config
# from `RUNTIME spec --rootless`, its process.args replaced by ARGS and terminal off.
set -u

die() {
  echo "mkbundle: $*" >&2
  exit 1
}

[ $# -ge 2 ] || die "usage: mkbundle.sh RUNTIME DIR [--probe PROBE] [-- ARGS...]"
runtime=$1 dir=$2
shift 2
probe=""
while [ $# -gt 0 ]; do
  case $1 in
    --probe)
      [ $# -ge 2 ] || die "--probe needs a path"
      probe=$2
      shift 2
      ;;
    --)
      shift
      break
      ;;
    *) die "unexpected argument: $1" ;;
  esac
done
have_args=0
[ $# -gt 0 ] && have_args=1

busybox=/bin/busybox
[ -x "$busybox" ] || die "$busybox missing (install busybox-static)"
[ -z "$probe" ] || [ -x "$probe" ] || die "probe $probe is not executable"
command -v jq >/dev/null || die "jq missing"

# The bundle is used by whoever runs this (the unprivileged test user): keep it readable.
umask 022
rootfs=$dir/rootfs
mkdir -p "$dir" || die "cannot create $dir"
mkdir -p "$rootfs"/{bin,proc,sys,dev,tmp,etc,root,run,var/tmp} || die "cannot create $rootfs"
chmod 1777 "$rootfs/tmp" "$rootfs/var/tmp"
cp "$busybox" "$rootfs/bin/busybox" || die "cannot copy $busybox"
chmod 0755 "$rootfs/bin/busybox"

# One symlink per applet; python does ~400 symlinks in one process instead of 400 ln forks.
"$busybox" --list | /usr/bin/python3 -c '
import os, sys
d = sys.argv[1]
for name in sys.stdin.read().split():
    p = os.path.join(d, name)
    if name != "busybox" and not os.path.lexists(p):
        os.symlink("busybox", p)
' "$rootfs/bin" || die "cannot create applet links in $rootfs/bin"

if [ -n "$probe" ]; then
  cp "$probe" "$rootfs/bin/rrt-probe" || die "cannot copy $probe"
  chmod 0755 "$rootfs/bin/rrt-probe"
fi

printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
  >"$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
echo rootlessrt >"$rootfs/etc/hostname"

rm -f "$dir/config.json"
"$runtime" spec --rootless -b "$dir" || die "$runtime spec --rootless -b $dir failed"
[ -s "$dir/config.json" ] || die "$runtime spec did not write $dir/config.json"

tmp=$dir/config.json.tmp
if [ "$have_args" = 1 ]; then
  # ARGS as a JSON array built by python: jq would take an argument such as "-c" as its option.
  args_json=$(/usr/bin/python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@") ||
    die "cannot encode ARGS"
  jq --argjson a "$args_json" '.process.args = $a | .process.terminal = false' \
    "$dir/config.json" >"$tmp" || die "jq failed on $dir/config.json"
else
  jq '.process.terminal = false' "$dir/config.json" >"$tmp" || die "jq failed on $dir/config.json"
fi
mv "$tmp" "$dir/config.json"
chmod 0644 "$dir/config.json"
