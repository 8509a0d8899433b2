#!/bin/bash
# t-userns.sh: the userns-first creation path as an unprivileged user: the id maps seen inside
# (default: 0 -> the caller, 1..N -> the caller's first subordinate range; or the config's), the
# user namespace added when the config has none, every other namespace owned by the container's
# user namespace, and process.user (uid, gid, additionalGids, umask).
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

uid=$(id -u)
gid=$(id -g)
read -r subuid_start subuid_count <<<"$(subid_range /etc/subuid)"
read -r subgid_start subgid_count <<<"$(subid_range /etc/subgid)"
multi=1
why_not=""
if [ -z "${subuid_start:-}" ] || [ -z "${subgid_start:-}" ]; then
  multi=0
  why_not="no /etc/subuid and /etc/subgid range for $(id -un)"
elif ! command -v newuidmap >/dev/null || ! command -v newgidmap >/dev/null; then
  multi=0
  why_not="newuidmap/newgidmap not installed"
fi

maps_of() { # maps_of FILE-OUTPUT: an id map, one "inside outside count" line per range
  awk '{print $1, $2, $3}' <<<"$1"
}

# Prints uid_map, a separator and gid_map from inside a container made from bundle $1.
inside_maps() {
  local id
  id=$(new_id maps)
  run rrt run -b "$1" "$id"
}

# ---------------------------------------------------------------- default maps

if [ "$multi" = 1 ]; then
  want_uid=$(printf '0 %s 1\n1 %s %s' "$uid" "$subuid_start" "$subuid_count")
  want_gid=$(printf '0 %s 1\n1 %s %s' "$gid" "$subgid_start" "$subgid_count")

  # A user namespace without mappings: the default maps.
  b=$(mkbundle default-maps sh -c 'cat /proc/self/uid_map; echo --; cat /proc/self/gid_map')
  cfg "$b" 'del(.linux.uidMappings, .linux.gidMappings)'
  inside_maps "$b"
  is "$rc" 0 "run with a user namespace and no mappings"
  [ "$rc" = 0 ] || diag "stderr: $err"
  is "$(maps_of "$(sed '/^--$/,$d' <<<"$out")")" "$want_uid" \
    "default uid_map: 0 -> $uid (1), 1 -> $subuid_start ($subuid_count)"
  is "$(maps_of "$(sed '1,/^--$/d' <<<"$out")")" "$want_gid" \
    "default gid_map: 0 -> $gid (1), 1 -> $subgid_start ($subgid_count)"

  # No user namespace at all, run unprivileged: one is added, with the same maps.
  b=$(mkbundle no-userns sh -c 'cat /proc/self/uid_map; echo --; cat /proc/self/gid_map')
  cfg "$b" 'del(.linux.uidMappings, .linux.gidMappings)
    | .linux.namespaces |= map(select(.type != "user"))'
  inside_maps "$b"
  is "$rc" 0 "run unprivileged with no user namespace in the config"
  [ "$rc" = 0 ] || diag "stderr: $err"
  is "$(maps_of "$(sed '/^--$/,$d' <<<"$out")")" "$want_uid" "an added user namespace gets the default uid_map"
  is "$(maps_of "$(sed '1,/^--$/d' <<<"$out")")" "$want_gid" "an added user namespace gets the default gid_map"

  # Multi-range maps from the config.
  b=$(mkbundle cfg-maps sh -c 'cat /proc/self/uid_map; echo --; cat /proc/self/gid_map')
  cfg "$b" '.linux.uidMappings = [{containerID: 0, hostID: $u, size: 1},
                                  {containerID: 1000, hostID: $su, size: 100}]
          | .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1},
                                  {containerID: 1000, hostID: $sg, size: 100}]' \
    --argjson u "$uid" --argjson g "$gid" --argjson su "$subuid_start" --argjson sg "$subgid_start"
  inside_maps "$b"
  is "$rc" 0 "run with multi-range uidMappings/gidMappings from the config"
  is "$(maps_of "$(sed '/^--$/,$d' <<<"$out")")" "$(printf '0 %s 1\n1000 %s 100' "$uid" "$subuid_start")" \
    "uid_map is the config's"
  is "$(maps_of "$(sed '1,/^--$/d' <<<"$out")")" "$(printf '0 %s 1\n1000 %s 100' "$gid" "$subgid_start")" \
    "gid_map is the config's"

  # A range the caller does not own is refused, naming the mapping.
  b=$(mkbundle foreign-maps rrt-probe exit 0)
  cfg "$b" '.linux.uidMappings = [{containerID: 0, hostID: 1, size: 1}]
          | .linux.gidMappings = [{containerID: 0, hostID: 1, size: 1}]'
  id=$(new_id foreign)
  run rrt run -b "$b" "$id"
  if [ "$rc" -eq 1 ] && [[ $err =~ [Mm]ap|newuidmap|uid ]]; then
    pass "a uidMapping onto a host id the caller does not own exits 1 naming the map"
  else
    fail "a uidMapping onto a host id the caller does not own exits 1 naming the map" \
      "exit status: $rc" "stderr: $err"
  fi
  nothing_left "$id" "$b"
else
  skip "$why_not" 11
fi

# The single self map works without helpers or ranges.
b=$(mkbundle self-map sh -c 'cat /proc/self/uid_map; echo --; cat /proc/self/gid_map')
cfg "$b" '.linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}]
        | .linux.gidMappings = [{containerID: 0, hostID: $g, size: 1}]' \
  --argjson u "$uid" --argjson g "$gid"
inside_maps "$b"
is "$rc" 0 "run with the single self map"
is "$(maps_of "$(sed '/^--$/,$d' <<<"$out")")" "0 $uid 1" "uid_map: 0 -> $uid (1)"
is "$(maps_of "$(sed '1,/^--$/d' <<<"$out")")" "0 $gid 1" "gid_map: 0 -> $gid (1)"

b=$(mkbundle root-inside rrt-probe ids)
id=$(new_id root-inside)
run rrt run -b "$b" "$id"
like "$out" '^uid=0 gid=0 euid=0 egid=0 ' "the process is root inside its user namespace"

# ---------------------------------------------------------------- namespace ownership

b=$(mkbundle owner rrt-probe sleep 100)
id=$(new_id owner)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "run -d for the ownership checks"
pid=$(state_field "$id" .pid)
if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then
  my_user=$(ns_ino $$ user)
  ctr_user=$(ns_ino "$pid" user)
  isnt "$ctr_user" "$my_user" "the container has its own user namespace"
  is "$(ns_parent_ino "$pid")" "$my_user" "the container's user namespace is a child of ours"
  for ns in net mnt uts ipc pid; do
    if ! jq -e --arg t "$(sed 's/^mnt$/mount/; s/^net$/network/' <<<"$ns")" \
      '.linux.namespaces | map(.type) | index($t)' "$b/config.json" >/dev/null; then
      skip "the config has no $ns namespace" 2
      continue
    fi
    isnt "$(ns_ino "$pid" "$ns")" "$(ns_ino $$ "$ns")" "the container's $ns namespace is not ours"
    is "$(ns_owner_ino "$pid" "$ns" 2>&1)" "$ctr_user" \
      "the container's $ns namespace is owned by its user namespace (NS_GET_USERNS)"
  done
else
  fail "the container runs" "state: $(rrt state "$id" 2>&1)"
  skip "no container" 11
fi
run rrt delete -f "$id"
nothing_left "$id" "$b"

# What the process sees from inside agrees: its namespaces differ from the host's.
b=$(mkbundle ns-inside rrt-probe ns)
id=$(new_id ns-inside)
run rrt run -b "$b" "$id"
for ns in net mnt user; do
  host="$ns:[$(ns_ino $$ "$ns")]"
  inside=$(grep "^$ns:" <<<"$out")
  if [ -n "$inside" ] && [ "$inside" != "$host" ]; then
    pass "inside, /proc/self/ns/$ns is not the host's"
  else
    fail "inside, /proc/self/ns/$ns is not the host's" "inside: '$inside'" "host: '$host'"
  fi
done

# ---------------------------------------------------------------- process.user

if [ "$multi" = 1 ]; then
  b=$(mkbundle user rrt-probe ids)
  cfg "$b" '.process.user = {uid: 1000, gid: 1000, additionalGids: [5, 6]}'
  id=$(new_id user)
  run rrt run -b "$b" "$id"
  like "$out" '^uid=1000 gid=1000 euid=1000 egid=1000 groups=' "process.user uid and gid"
  groups=$(sed -n 's/.*groups=//p' <<<"$out" | tr ',' '\n' | sort -n | paste -sd,)
  is "$groups" "5,6" "process.user.additionalGids are exactly the supplementary groups"
else
  skip "$why_not" 2
fi

for mask in 18:0022 63:0077; do
  b=$(mkbundle "umask-${mask%%:*}" rrt-probe umask)
  cfg "$b" '.process.user.umask = $m' --argjson m "${mask%%:*}"
  id=$(new_id umask)
  run rrt run -b "$b" "$id"
  is "$out" "${mask#*:}" "process.user.umask ${mask#*:}"
done

done_testing
