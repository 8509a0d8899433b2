#!/bin/bash
# t-reported.sh: what goes wrong reaches the user as it is, every time: init's own error even when
# the runtime had queued messages ahead of it (a reset socket is not the error), and messages that
# name the real cause (a deleted bundle, a bad id, a bad config, an out-of-range number).
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# ---------------------------------------------------------------- init's error, every time

# always_says NAME ERE N BUNDLE VERB: N times, VERB (run or create) of BUNDLE fails with exit 1 and
# a message matching ERE; whatever else it printed is reported once, with its count.
always_says() {
  local name=$1 ere=$2 n=$3 b=$4 verb=$5 i id others=""
  for ((i = 0; i < n; i++)); do
    id=$(new_id lost)
    run rrt "$verb" -b "$b" "$id"
    if [ "$rc" -ne 1 ] || ! [[ $err =~ $ere ]]; then
      others+="rc=$rc: $err"$'\n'
    fi
    rrt delete -f "$id" >/dev/null 2>&1
  done
  LAST_ID=$id
  if [ -z "$others" ]; then
    pass "$name: the real message, $n times out of $n"
  else
    fail "$name: the real message, $n times out of $n" "expected: $ere" \
      "$(sort <<<"${others%$'\n'}" | uniq -c)"
  fi
}

# No mount namespace: init refuses at once, while the runtime still queues the go-ahead (and, for
# run, the start) ahead of it.
b=$(mkbundle nomnt rrt-probe exit 0)
cfg "$b" '.linux.namespaces |= map(select(.type != "mount"))'
always_says "no mount namespace (run)" 'linux\.namespaces: a mount namespace is required' 30 "$b" run
always_says "no mount namespace (create)" 'linux\.namespaces: a mount namespace is required' 15 "$b" create
nothing_left "$LAST_ID" "$b" "nothing left behind by the refused configs"

# A /proc symlink (CVE-2023-27561): init refuses it later, once the rootfs is being built.
b=$(mkbundle procsym rrt-probe exit 0)
{ rmdir "$b/rootfs/proc" && ln -s tmp "$b/rootfs/proc"; } || bail_out "cannot make rootfs/proc a symlink"
always_says "rootfs/proc a symlink (run)" '/proc.*symlink' 30 "$b" run

# A program that cannot be executed: the error comes back from init after the start.
b=$(mkbundle noexec /no/such/program)
always_says "a missing program (run)" '/no/such/program' 20 "$b" run

done_testing
