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

# ---------------------------------------------------------------- messages that name the cause

# The bundle deleted between create and start: not "resolves outside the container".
b=$(mkbundle gone rrt-probe exit 0)
id=$(new_id gone)
run rrt create -b "$b" "$id"
is "$rc" 0 "create (setup)"
rm -rf "$b"
run rrt start "$id"
is "$rc" 1 "start after the bundle was deleted exits 1"
like "$err" 'process\.cwd /: the directory was removed' "and says the directory was removed"
unlike "$err" 'outside the container' "and does not call it an escape"
rrt delete -f "$id" >/dev/null 2>&1

# json_lines_valid FILE: every line of FILE is valid UTF-8 and a JSON object; the bad ones on stdout.
json_lines_valid() {
  "$PY" -c '
import json, sys
bad = 0
for n, raw in enumerate(open(sys.argv[1], "rb"), 1):
    try:
        json.loads(raw.decode("utf-8"))
    except ValueError as e:
        bad += 1
        print("line %d: %s: %r" % (n, e, raw[:200]))
sys.exit(1 if bad else 0)
' "$1"
}

# An id with non-ASCII bytes (and one with half a character): refused at once, the bytes shown
# escaped, and a --log-format json line stays valid UTF-8 and valid JSON.
b=$(mkbundle badid rrt-probe exit 0)
log=$T_WORK/badid.log
for bad in $'caf\xc3\xa9' $'half\xc3' $'ctl\x01x' 'sp ace'; do
  run rrt --log "$log" --log-format json create -b "$b" "$bad"
  is "$rc" 1 "create with id $(printf %q "$bad") exits 1"
  like "$err" 'container id ".*": invalid character' "and names the invalid character"
done
like "$(cat "$log")" 'caf\\\\xc3\\\\xa9' "the id's bytes are shown escaped in the log"
is "$(json_lines_valid "$log")" "" "every --log-format json line is valid UTF-8 JSON"
# A message quoting other bytes from the user (here process.args[0]) stays valid JSON too.
log=$T_WORK/badarg.log
cfg "$b" '.process.args = ["/no/such/\u00ff"]' && sed -i 's/\\u00ff/\xff/; s/ÿ/\xff/' "$b/config.json"
run rrt --log "$log" --log-format json run -b "$b" "$(new_id badarg)"
is "$rc" 1 "run of a program whose name has a byte that is not UTF-8 fails"
is "$(json_lines_valid "$log")" "" "and the JSON log line is still valid UTF-8 JSON"
ok "the log has that error" grep -q 'such.*no such file' "$log"

# A 1 KiB id: refused before anything is made, saying how long it may be.
long=$(printf 'a%.0s' {1..1024})
run rrt create -b "$b" "$long"
is "$rc" 1 "create with a 1 KiB id exits 1"
like "$err" 'container id "a+\.\.\.": 1024 bytes, longer than [0-9]+' "and says it is too long"
is "$(find "$RRT_ROOT" -maxdepth 1 -name 'aaaa*' | wc -l)" 0 "and makes no state directory"

# The config's path once, not "config.json: config.json: ...".
b=$(mkbundle badjson rrt-probe exit 0)
printf '{ "ociVersion": ' >"$b/config.json"
run rrt create -b "$b" "$(new_id badjson)"
is "$rc" 1 "create with invalid JSON exits 1"
like "$err" "$b/config\.json: invalid JSON" "and names the file"
is "$(grep -o 'config\.json' <<<"$err" | wc -l)" 1 "once"

# A uid past 64 bits: out of range, not the saturated 18446744073709551615.
b=$(mkbundle bigid rrt-probe exit 0)
cfg "$b" '.process.user.uid = 12345' && sed -i 's/12345/99999999999999999999999/' "$b/config.json"
run rrt create -b "$b" "$(new_id bigid)"
is "$rc" 1 "create with uid 99999999999999999999999 exits 1"
like "$err" 'process\.user\.uid: expected integer in 0\.\.4294967295, got a number outside the 64-bit range' \
  "and says it is out of range"
unlike "$err" '18446744073709551615' "not as the saturated value"

# A relative --root: resolved before create changes into the bundle.
b=$(mkbundle relroot rrt-probe exit 0)
id=$(new_id relroot)
here=$PWD # back there after: the cleanup kills whatever has its cwd under $T_WORK
mkdir -p "$T_WORK/cwd" && cd "$T_WORK/cwd" || bail_out "cannot cd"
run timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root rel-root create -b "$b" "$id"
is "$rc" 0 "create with a relative --root (${err:-no stderr})"
ok "the state is under that root, relative to the caller's directory" test -d "$T_WORK/cwd/rel-root/$id"
ok "and nothing of it in the bundle" test ! -e "$b/rel-root"
run timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root rel-root delete -f "$id"
is "$rc" 0 "delete with the same relative --root"
cd "$here" || bail_out "cannot cd back"
nothing_left "$id" "$b"

done_testing
