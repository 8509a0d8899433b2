#!/bin/bash
# t-cgroup-view.sh: the /sys/fs/cgroup a rootless container sees. Without a cgroup namespace
# (an rbind of the host's /sys, or a cgroup mount), each hierarchy is bound at the container's
# own cgroup, the one its /proc/self/cgroup names; with one (the default) the host's cgroups
# under the /sys bind stay hidden. t-root-cgroup-view.sh has real root's cases.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# Prints "cg POINT PATH" for each line of /proc/self/cgroup matched to the hierarchy mounted at
# POINT, and "seen POINT ROOT" for the cgroup mount seen at each point (the last one there).
look='awk -F: '"'"'{print "cgroup " $2 " " $3}'"'"' /proc/self/cgroup
  awk '"'"'$5 ~ "^/sys/fs/cgroup" && / - cgroup2? / {seen[$5] = $4 " " $6; t[$5] = $0}
    END {for (p in seen) print "seen " p " " seen[p] " " substr(t[p], index(t[p], " - ") + 3)}'"'"' /proc/self/mountinfo'

# check WHAT OUT: each hierarchy seen is rooted where /proc/self/cgroup says the container is.
check() {
  local what=$1 o=$2 point root opts type super ctrl path bad=0 n=0
  while read -r _ point root opts type _ super; do
    n=$((n + 1))
    if [ "$type" = cgroup2 ]; then
      path=$(sed -n 's/^cgroup  \(.*\)$/\1/p' <<<"$o")
    else
      path=""
      while read -r _ ctrl p; do
        [ -n "$ctrl" ] || continue
        case ",$super," in *",${ctrl%%,*},"*) path=$p ;; esac
      done <<<"$(grep '^cgroup ' <<<"$o")"
    fi
    if [ "$root" != "$path" ]; then
      bad=$((bad + 1))
      diag "$what: $point is rooted at $root, the container's cgroup there is ${path:-none}"
    fi
    case ",$opts," in *,ro,*) ;; *)
      bad=$((bad + 1))
      diag "$what: $point is not read-only ($opts)"
      ;;
    esac
  done <<<"$(grep '^seen ' <<<"$o")"
  ok "$what: $n hierarchies, each rooted at the container's own cgroup there, read-only" test "$bad" -eq 0 -a "$n" -gt 0
}

b=$(mkbundle rbind sh -c "$look")
cfg "$b" '.linux.namespaces |= map(select(.type != "cgroup"))' || bail_out "cannot edit $b/config.json"
id=$(new_id rbind)
run rrt run -b "$b" "$id"
is "$rc" 0 "no cgroup namespace, an rbind of /sys: run"
[ "$rc" = 0 ] || diag "$err"
check "no cgroup namespace, an rbind of /sys" "$out"
nothing_left "$id" "$b"

b=$(mkbundle cgmount sh -c "$look")
cfg "$b" '.linux.namespaces |= map(select(.type != "cgroup")) |
  .mounts += [{destination: "/sys/fs/cgroup", type: "cgroup", source: "cgroup", options: ["nosuid", "noexec", "nodev", "ro"]}]' ||
  bail_out "cannot edit $b/config.json"
id=$(new_id cgmount)
run rrt run -b "$b" "$id"
is "$rc" 0 "no cgroup namespace, a cgroup mount: run"
[ "$rc" = 0 ] || diag "$err"
check "no cgroup namespace, a cgroup mount" "$out"
nothing_left "$id" "$b"

# The default: a cgroup namespace; the host's cgroups under the /sys bind are hidden.
b=$(mkbundle cgns sh -c 'find /sys/fs/cgroup -mindepth 1 | wc -l')
id=$(new_id cgns)
run rrt run -b "$b" "$id"
is "$rc:$out" "0:0" "a cgroup namespace (the default): nothing of the host's cgroups under /sys"
nothing_left "$id" "$b"

done_testing
