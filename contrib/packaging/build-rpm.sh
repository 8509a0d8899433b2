#!/bin/sh
# build-rpm.sh VERSION BUILD: rpmbuild -ta of BUILD/rootlessrt-VERSION.tar.gz (from make dist)
# with --nodeps, into BUILD/rpm/; prints the package's files.
set -eu
version=$1
build=$(cd "$2" && pwd)
command -v rpmbuild >/dev/null 2>&1 || {
  echo "build-rpm: rpmbuild is missing (apt-get install rpm, or dnf install rpm-build)" >&2
  exit 1
}
top=$build/rpm
rm -rf "$top"
mkdir -p "$top"
tar="$build/rootlessrt-$version.tar.gz"
start=$(date +%s)
rpmbuild -ta --nodeps --define "_topdir $top" "$tar" >"$top/build.log" 2>&1 || {
  tail -n 30 "$top/build.log" >&2
  echo "build-rpm: rpmbuild failed (log: $top/build.log)" >&2
  exit 1
}
rpm=$(find "$top/RPMS" -name "rootlessrt-$version-*.rpm" ! -name '*debug*' | head -n1)
echo "build-rpm: $rpm ($(($(date +%s) - start)) s):"
rpm -qlp "$rpm" 2>/dev/null | sed 's/^/  /'
