#!/bin/sh
# install.sh MODE PROFILE DIR: installs the AppArmor profile into DIR (/etc/apparmor.d) when
# MODE is 1, or when MODE is auto, DIR exists and apparmor_parser accepts the profile (AppArmor
# 4.0 or later: older parsers reject userns rules, and those kernels do not restrict user
# namespaces anyway). Says what it did.
set -u
mode=$1 profile=$2 dir=$3
case $mode in
  0 | no)
    echo "apparmor: not installed (APPARMOR=$mode)"
    exit 0
    ;;
  auto)
    if [ ! -d "$dir" ]; then
      echo "apparmor: $dir does not exist: profile not installed"
      exit 0
    fi
    if ! command -v apparmor_parser >/dev/null 2>&1; then
      echo "apparmor: no apparmor_parser: profile not installed in $dir"
      exit 0
    fi
    if ! out=$(apparmor_parser -Q -K "$profile" 2>&1); then
      echo "apparmor: apparmor_parser does not take the profile (AppArmor before 4.0 has no" \
        "userns rules): not installed in $dir; $(printf '%s' "$out" | tail -n1)"
      exit 0
    fi
    ;;
esac
install -D -m 0644 "$profile" "$dir/rootlessrt" || exit 1
echo "apparmor: installed $dir/rootlessrt; load it: sudo apparmor_parser -r $dir/rootlessrt"
