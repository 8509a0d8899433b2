#!/bin/sh
# build-deb.sh OUTDIR: builds the Debian package from this tree (dpkg-buildpackage -b, unsigned)
# in a copy of the files git knows (tracked, or new and not ignored), so the tree itself is left as it is; the .deb lands in OUTDIR.
set -eu
out=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
for cmd in dpkg-buildpackage dh; do
  command -v "$cmd" >/dev/null 2>&1 || {
    echo "build-deb: $cmd is missing: apt-get install dpkg-dev debhelper" >&2
    exit 1
  }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/rootlessrt-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/rootlessrt"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - --) | tar -xf - -C "$tmp/rootlessrt"
start=$(date +%s)
(cd "$tmp/rootlessrt" && dpkg-buildpackage -b -us -uc >"$tmp/build.log" 2>&1) || {
  tail -n 40 "$tmp/build.log" >&2
  echo "build-deb: dpkg-buildpackage failed" >&2
  exit 1
}
cp "$tmp"/*.deb "$out/"
echo "build-deb: $(cd "$out" && ls ./*.deb | tr "\n" " ")in $out ($(($(date +%s) - start)) s)"
