# shellcheck shell=bash disable=SC2016,SC2034 # jq filters use $vars; out/err/rc are for the tests
# lib.sh: sourced by tests/integration/t-*.sh: TAP helpers, the runtime wrapper, bundles, state
# validation and the "nothing left behind" checks.
#
# Environment (tests/run-integration.sh sets it; defaults let a test run by hand):
#   RRT        the runtime binary (required)        PROBE     the static rrt-probe (required)
#   RRT_ROOT   the runtime's --root for this test   TESTS_DIR this directory
#   SPEC_DIR   the OCI spec schema (schema/ inside; tests/spec, the copy the repository carries)        RRT_CMD_TIMEOUT seconds per runtime command (30)
#   RRT_ASAN=1 the runtime is an ASan/UBSan build: sanitizer options for leaks and aborts
set -u

: "${RRT:?RRT must name the runtime binary}"
: "${PROBE:?PROBE must name the rrt-probe binary}"
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
CONTRIB_DIR=${CONTRIB_DIR:-$TESTS_DIR/../contrib}
SPEC_DIR=${SPEC_DIR:-$TESTS_DIR/spec}
RRT_CMD_TIMEOUT=${RRT_CMD_TIMEOUT:-30}
PY=/usr/bin/python3
export LC_ALL=C

if [ "${RRT_ASAN:-0}" = 1 ]; then
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:halt_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
fi

T_NAME=$(basename "$0" .sh)
T_WORK=$(mktemp -d "${TMPDIR:-/tmp}/rrt-$T_NAME.XXXXXX") || {
  echo "Bail out! cannot create a temp dir"
  exit 1
}
chmod 0755 "$T_WORK"
T_OWN_ROOT=0
if [ -z "${RRT_ROOT:-}" ]; then
  RRT_ROOT=$T_WORK/state
  T_OWN_ROOT=1
fi
T_N=0
T_FAIL=0
T_SKIP=0
# Set by run(): the last command's stdout, stderr and exit status.
out=""
err=""
rc=0

# ---------------------------------------------------------------- TAP

diag() { # diag TEXT...: TAP comment lines
  local line l
  for line in "$@"; do
    while IFS= read -r l || [ -n "$l" ]; do
      printf '#   %s\n' "$l"
    done <<<"$line"
  done
}

pass() {
  T_N=$((T_N + 1))
  printf 'ok %d - %s\n' "$T_N" "$1"
}

fail() { # fail NAME [DIAG...]
  T_N=$((T_N + 1))
  T_FAIL=$((T_FAIL + 1))
  printf 'not ok %d - %s\n' "$T_N" "$1"
  shift
  [ $# -gt 0 ] && diag "$@"
  return 0
}

skip() { # skip REASON [COUNT]: COUNT skipped tests, each says why
  local i
  for ((i = 0; i < ${2:-1}; i++)); do
    T_N=$((T_N + 1))
    T_SKIP=$((T_SKIP + 1))
    printf 'ok %d # SKIP %s\n' "$T_N" "$1"
  done
}

bail_out() { # bail_out REASON: this file cannot go on
  printf 'Bail out! %s\n' "$*"
  exit 1
}

ok() { # ok NAME CMD...: passes when CMD exits 0
  local name=$1
  shift
  run "$@"
  if [ "$rc" -eq 0 ]; then
    pass "$name"
  else
    fail "$name" "command: $*" "exit status: $rc" "stdout: $out" "stderr: $err"
  fi
}

is() { # is GOT WANT NAME
  if [ "$1" == "$2" ]; then
    pass "$3"
  else
    fail "$3" "got:      '$1'" "expected: '$2'"
  fi
}

isnt() { # isnt GOT UNWANTED NAME
  if [ "$1" != "$2" ]; then
    pass "$3"
  else
    fail "$3" "got '$1', which it must not be"
  fi
}

like() { # like GOT ERE NAME
  if [[ $1 =~ $2 ]]; then
    pass "$3"
  else
    fail "$3" "got:      '$1'" "expected to match: $2"
  fi
}

unlike() { # unlike GOT ERE NAME
  if [[ $1 =~ $2 ]]; then
    fail "$3" "got:      '$1'" "expected not to match: $2"
  else
    pass "$3"
  fi
}

has_line() { # has_line TEXT ERE NAME: some line of TEXT matches ERE
  if grep -qE -- "$2" <<<"$1"; then
    pass "$3"
  else
    fail "$3" "got:      '$1'" "expected a line matching: $2"
  fi
}

no_line() { # no_line TEXT ERE NAME: no line of TEXT matches ERE
  if grep -qE -- "$2" <<<"$1"; then
    fail "$3" "got:      '$1'" "expected no line matching: $2"
  else
    pass "$3"
  fi
}

# run CMD...: runs CMD, sets $out, $err and $rc; stdin is $RUN_STDIN (default /dev/null). Every
# call writes fresh files, since a container started by CMD keeps CMD's stdout and stderr. A
# sanitizer report on stderr is a failed test of its own, so a leak or UB cannot hide behind an
# expected exit status.
T_RUNS=0
run() {
  T_RUNS=$((T_RUNS + 1))
  local o=$T_WORK/.run$T_RUNS.out e=$T_WORK/.run$T_RUNS.err
  "$@" >"$o" 2>"$e" <"${RUN_STDIN:-/dev/null}"
  rc=$?
  out=$(cat "$o")
  err=$(cat "$e")
  if grep -qE 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:' "$e"; then
    fail "no sanitizer report from: $*" "$err"
  fi
  return 0
}

done_testing() { # prints the plan; the file's exit status says whether everything passed
  printf '1..%d\n' "$T_N"
  [ "$T_FAIL" -eq 0 ]
  exit
}

# ---------------------------------------------------------------- the runtime

rrt() { # rrt ARGS...: the runtime with this test's --root, bounded in time
  timeout -k 5 "$RRT_CMD_TIMEOUT" "$RRT" --root "$RRT_ROOT" "$@"
}

# rrt_bg OUTFILE ARGS...: starts the runtime in the background (no timeout wrapper, so $RRT_BG_PID
# is the runtime itself and signals sent to it reach it); stdout and stderr go to OUTFILE.
RRT_BG_PID=""
rrt_bg() {
  local f=$1
  shift
  "$RRT" --root "$RRT_ROOT" "$@" >"$f" 2>&1 </dev/null &
  RRT_BG_PID=$!
}

# wait_pid PID SECONDS: waits for a background child; returns its exit status, 124 on timeout.
wait_pid() {
  local pid=$1 deadline=$((SECONDS + $2)) st
  while [ "$SECONDS" -lt "$deadline" ]; do
    st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || break
    [ "$st" = Z ] && break
    sleep 0.05
  done
  if [ "$SECONDS" -ge "$deadline" ]; then
    return 124
  fi
  wait "$pid"
}

# wait_until SECONDS CMD...: polls CMD until it succeeds; 1 on timeout.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  while ! "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.05
  done
}

wait_status() { # wait_status ID STATUS [SECONDS]: polls `state ID` until STATUS; 1 on timeout
  local deadline=$((SECONDS + ${3:-10}))
  while [ "$(status_of "$1")" != "$2" ]; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.05
  done
}

new_id() { # new_id [PREFIX]: a fresh container id (the counter is a file: $(new_id) is a subshell)
  local n
  n=$(($(cat "$T_WORK/.seq" 2>/dev/null || echo 0) + 1))
  echo "$n" >"$T_WORK/.seq"
  printf '%s-%d-%d\n' "${1:-c}" "$$" "$n"
}

state_field() { # state_field ID JQ-FILTER: one field of `state ID`, empty on error
  rrt state "$1" 2>/dev/null | jq -r "$2" 2>/dev/null
}

status_of() { state_field "$1" .status; }

# ---------------------------------------------------------------- bundles

# mkbundle NAME [ARGS...]: a busybox+probe bundle in $T_WORK/NAME (printed), process.args = ARGS.
# Its process env carries RRT_TEST_BUNDLE=<dir> so that a leftover container is recognisable.
mkbundle() {
  local dir=$T_WORK/$1
  shift
  local log=$T_WORK/.mkbundle.log
  if ! bash "$CONTRIB_DIR/mkbundle.sh" "$RRT" "$dir" --probe "$PROBE" -- "$@" >"$log" 2>&1; then
    diag "$(cat "$log")"
    bail_out "mkbundle $dir failed"
  fi
  cfg "$dir" '.process.env = ((.process.env // []) + ["RRT_TEST_BUNDLE=" + $b])' --arg b "$dir" ||
    bail_out "cannot edit $dir/config.json"
  printf '%s\n' "$dir"
}

cfg() { # cfg BUNDLE FILTER [JQ-OPTIONS...]: edits BUNDLE/config.json in place with jq
  local b=$1 filter=$2
  shift 2
  jq "$@" "$filter" "$b/config.json" >"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json"
}

# ---------------------------------------------------------------- checks

# valid_against SCHEMA JSON: 0 when JSON is valid against SCHEMA (a file of $SPEC_DIR/schema, whose
# $refs are resolved in that directory); the errors on stdout.
valid_against() {
  printf '%s' "$2" | "$PY" -c '
import json, os, sys
from jsonschema import Draft4Validator, RefResolver
d = os.path.abspath(sys.argv[1])
with open(os.path.join(d, sys.argv[2])) as f:
    schema = json.load(f)
try:
    inst = json.load(sys.stdin)
except ValueError as e:
    print("not JSON:", e)
    sys.exit(1)
v = Draft4Validator(schema, resolver=RefResolver("file://" + d + "/", schema))
errs = sorted(v.iter_errors(inst), key=str)
for e in errs:
    print("/".join(str(p) for p in e.path) or "(root)", e.message)
sys.exit(1 if errs else 0)
' "$SPEC_DIR/schema" "$1"
}

valid_state() { # valid_state JSON: against the spec's state-schema.json
  valid_against state-schema.json "$1"
}

# procs_referencing PATH: "PID cmdline" of every process (but this scan) whose cmdline, environ,
# cwd or root mentions PATH.
procs_referencing() {
  "$PY" -c '
import os, sys
needle = sys.argv[1]
me = str(os.getpid())
for p in os.listdir("/proc"):
    if not p.isdigit() or p == me:
        continue
    hit = False
    for f in ("cmdline", "environ"):
        try:
            with open("/proc/%s/%s" % (p, f), "rb") as fh:
                hit = hit or needle.encode() in fh.read()
        except OSError:
            pass
    for l in ("cwd", "root"):
        try:
            hit = hit or needle in os.readlink("/proc/%s/%s" % (p, l))
        except OSError:
            pass
    if hit:
        try:
            with open("/proc/%s/cmdline" % p, "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            cmd = "?"
        print(p, cmd)
' "$1"
}

mounts_referencing() { # mounts_referencing PATH: our mountinfo lines that mention PATH
  grep -F -- "$1" /proc/self/mountinfo
}

state_left() { # state_left ID: what the runtime still has of ID (files under RRT_ROOT, list -q)
  case $1 in */* | . | .. | '') ;; *) [ -d "$RRT_ROOT" ] && find "$RRT_ROOT" -name "$1" ;; esac
  rrt list -q 2>/dev/null | grep -Fx -- "$1"
}

# cgroups_of ID: cgroup directories named after ID (the runtime names its cgroups after the id).
cgroups_of() {
  find /sys/fs/cgroup -maxdepth 8 -type d -name "*$1*" 2>/dev/null
}

# leftovers ID BUNDLE [FILE...]: what is still there of the container (empty when nothing):
# state, processes, mounts, cgroups, and FILEs (a pid file and its temporary).
leftovers() {
  local id=$1 b=$2 s p m c f deadline=$((SECONDS + 5))
  shift 2
  while :; do
    s=$(state_left "$id")
    p=$(procs_referencing "$b")
    m=$(mounts_referencing "$b")
    c=$(cgroups_of "$id")
    f=""
    for x in "$@"; do [ -e "$x" ] && f+=" $x"; done
    [ -z "$s$p$m$c$f" ] && return 0
    [ "$SECONDS" -ge "$deadline" ] && break
    sleep 0.1
  done
  echo "${s:+state: $s; }${p:+processes: $p; }${m:+mounts: $m; }${c:+cgroups: $c; }${f:+files:$f}"
}

fails_naming() { # fails_naming ERE NAME: the last run exited 1 (FAIL_RC) and its stderr matches ERE
  if [ "$rc" -eq "${FAIL_RC:-1}" ] && [[ $err =~ $1 ]]; then
    pass "$2"
  else
    fail "$2" "exit status: $rc (expected ${FAIL_RC:-1})" "stderr: $err" "expected stderr to match: $1"
  fi
}
# exec_fails_naming ERE NAME: the same for exec, whose runtime errors exit 255 (as runc's)
exec_fails_naming() { FAIL_RC=255 fails_naming "$@"; }

# real_root: true for the host's root (uid 0 of the initial user namespace), which the root-only
# files need.
real_root() {
  [ "$(id -u)" = 0 ] && [ "$(awk 'NR == 1 {print $1, $2, $3}' /proc/self/uid_map)" = "0 0 4294967295" ]
}

# rootbundle NAME ARGS...: a bundle for root: the rootless default config without its user
# namespace (no id maps to write).
rootbundle() {
  local b
  b=$(mkbundle "$@")
  cfg "$b" '.linux.namespaces |= map(select(.type != "user")) | del(.linux.uidMappings, .linux.gidMappings)' ||
    bail_out "cannot edit $b/config.json"
  printf '%s\n' "$b"
}

# kill_after MICROSECONDS CMD...: runs CMD (stdio on /dev/null, so that no container keeps a
# pipe of ours open), SIGKILLs it after the delay unless it is done; prints "killed" or
# "exited N". A delay of -1: no kill; prints how long CMD took in microseconds when it
# succeeded, "exited N" otherwise.
kill_after() {
  "$PY" -c '
import os, signal, sys, time
delay = int(sys.argv[1]) / 1e6
pid = os.fork()
if pid == 0:
    fd = os.open("/dev/null", os.O_RDWR)
    for i in range(3):
        os.dup2(fd, i)
    os.execv(sys.argv[2], sys.argv[2:])
t0 = time.monotonic()
if delay >= 0:
    time.sleep(delay)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
_, st = os.waitpid(pid, 0)
took = int((time.monotonic() - t0) * 1e6)
if os.WIFSIGNALED(st):
    print("killed")
elif delay < 0 and os.WEXITSTATUS(st) == 0:
    print(took)
else:
    print("exited %d" % os.WEXITSTATUS(st))
' "$@"
}

# nothing_left ID BUNDLE [NAME]: no state for ID, no process and no mount that references BUNDLE.
# Allows 3 s for a process the runtime is still reaping.
nothing_left() {
  local id=$1 b=$2 name=${3:-"nothing left behind by $1"} s p m deadline=$((SECONDS + 3))
  while :; do
    s=$(state_left "$id")
    p=$(procs_referencing "$b")
    m=$(mounts_referencing "$b")
    [ -z "$s$p$m" ] && break
    [ "$SECONDS" -ge "$deadline" ] && break
    sleep 0.1
  done
  if [ -z "$s$p$m" ]; then
    pass "$name"
  else
    fail "$name" ${s:+"state: $s"} ${p:+"processes: $p"} ${m:+"mounts: $m"}
  fi
}

ns_ino() { # ns_ino PID NS: inode of /proc/PID/ns/NS
  stat -L -c %i "/proc/$1/ns/$2"
}

# ns_owner_ino PID NS: inode of the user namespace that owns /proc/PID/ns/NS (ioctl NS_GET_USERNS).
ns_owner_ino() {
  "$PY" -c '
import fcntl, os, sys
fd = os.open("/proc/%s/ns/%s" % (sys.argv[1], sys.argv[2]), os.O_RDONLY | os.O_CLOEXEC)
owner = fcntl.ioctl(fd, 0xb701)  # NS_GET_USERNS: a new fd for the owning user namespace
print(os.fstat(owner).st_ino)
' "$1" "$2"
}

# ns_parent_ino PID: inode of the parent of /proc/PID/ns/user (ioctl NS_GET_PARENT).
ns_parent_ino() {
  "$PY" -c '
import fcntl, os, sys
fd = os.open("/proc/%s/ns/user" % sys.argv[1], os.O_RDONLY | os.O_CLOEXEC)
print(os.fstat(fcntl.ioctl(fd, 0xb702)).st_ino)  # NS_GET_PARENT
' "$1"
}

# subid_range FILE: "START COUNT" of the current user's first range in FILE (empty if none).
subid_range() {
  local me uid
  me=$(id -un)
  uid=$(id -u)
  awk -F: -v a="$me" -v b="$uid" '($1 == a || $1 == b) && $3 > 0 {print $2, $3; exit}' "$1" 2>/dev/null
}

# ---------------------------------------------------------------- preambles several files share

# use_store: an image store for the desktop `run` at $STORE ($T_WORK/store), used through drun;
# at exit what it holds is removed through the runtime (an unpack's leftover tmp/ as the user's
# root in a user namespace: it may hold files of other owners), then the usual cleanup.
use_store() {
  STORE=$T_WORK/store
  trap store_cleanup EXIT
}
store_cleanup() {
  local n
  # The image records first: a layer an image uses is kept by store rm.
  rrt rmi --storage "$STORE" --all --force >/dev/null 2>&1
  for n in "$STORE"/containers/* "$STORE"/layers/sha256/* "$STORE"/tmp/*; do
    [ -e "$n" ] && rrt store --storage "$STORE" rm "$(basename "$n")" >/dev/null 2>&1
  done
  [ -d "$STORE/tmp" ] && unshare -r --map-auto rm -rf "$STORE/tmp" 2>/dev/null
  _cleanup
}
drun() { rrt run --storage "$STORE" "$@"; }

# own_cgroup_dir: our own cgroup v2 directory: /proc/self/cgroup "0::/path" under the cgroup2
# mount (nothing printed, status 1, without one).
own_cgroup_dir() {
  local cg mnt
  cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
  mnt=$(awk '$9 == "cgroup2" && $4 == "/" {print $5; exit}' /proc/self/mountinfo)
  [ -n "$cg" ] && [ -n "$mnt" ] && printf '%s%s\n' "$mnt" "${cg%/}"
}

# need_cgroup_v1 N CONTROLLER...: for the root-only cgroup v1 files: unless this is real root on
# a legacy or hybrid host with each CONTROLLER's hierarchy at $V1/CONTROLLER, all N tests are
# skipped, saying why, and the file ends.
V1=/sys/fs/cgroup
need_cgroup_v1() {
  local n=$1 c
  shift
  if ! real_root; then
    skip "cgroup v1 is for real root only; this runs as uid $(id -u)" "$n"
    done_testing
  fi
  for c in "$@"; do
    if ! awk -v c="$c" '$9 == "cgroup" && $5 == "/sys/fs/cgroup/" c {f = 1} END {exit !f}' /proc/self/mountinfo; then
      skip "no cgroup v1 $c controller at $V1/$c: not a legacy or hybrid host" "$n"
      done_testing
    fi
  done
}

# remove_v1_tree TOP: the v1 cgroup directories TOP and below, in every controller: the parents
# the runtime made for a cgroupsPath stay (as with runc), the test removes them.
remove_v1_tree() {
  find "$V1" -depth -type d \( -path "*/$1/*" -o -name "$1" \) -exec rmdir {} \; 2>/dev/null
}

# ---------------------------------------------------------------- cleanup

_cleanup() {
  local id pids
  trap - EXIT
  {
    rrt list -q 2>/dev/null
    [ -d "$RRT_ROOT" ] && ls -1 "$RRT_ROOT" 2>/dev/null
  } | sort -u | while IFS= read -r id; do
    [ -n "$id" ] && rrt delete -f "$id" >/dev/null 2>&1
  done
  # Whatever still runs from this test's bundles (a runtime that hung, a container it lost).
  pids=$(procs_referencing "$T_WORK" | awk '{print $1}')
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086 # a list of pids
    kill -KILL $pids 2>/dev/null
  fi
  chmod -R u+w "$T_WORK" 2>/dev/null
  rm -rf "$T_WORK" 2>/dev/null
  if [ "$T_OWN_ROOT" = 1 ]; then
    rm -rf "$RRT_ROOT" 2>/dev/null
  fi
}
trap _cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
