#!/bin/sh
# dist.sh VERSION OUTDIR: OUTDIR/rootlessrt-VERSION.tar.gz, the files git knows (tracked, or new
# and not ignored) as they are in the tree, under rootlessrt-VERSION/. It builds and tests with
# the README's two commands (make demo, make check), and is the RPM spec's Source0.
set -eu
version=$1
out=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
name=rootlessrt-$version
tmp=$(mktemp -d /tmp/rootlessrt-dist.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/$name"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - --) |
  tar -xf - -C "$tmp/$name"
# The commit is not in the tarball's tree: keep the one it was made from.
commit=$(cd "$repo" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
sed -i "s/^COMMIT := .*/COMMIT := $commit/" "$tmp/$name/Makefile"
tar -C "$tmp" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" "$name"
echo "dist: $out/$name.tar.gz ($(du -k "$out/$name.tar.gz" | cut -f1) KiB, $(tar -tzf "$out/$name.tar.gz" | grep -vc '/$') files)"
