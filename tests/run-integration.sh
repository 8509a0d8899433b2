#!/bin/bash
# run-integration.sh RUNTIME PROBE: runs every tests/integration/t-*.sh against RUNTIME as an
# unprivileged user (as root: the user rrt-test, created with a subuid range), each with a time
# limit, and prints the failures, the skips and "integration: N passed, N failed, N skipped".
#
# Knobs: RRT_TESTS="t-cli t-errors" runs only those; RRT_TEST_TIMEOUT (300 s per file: t-hooks-fail takes 45 s alone and passed 120 s on a loaded host);
# RRT_VERBOSE=1 prints every TAP line; RRT_KEEP=1 keeps the work dir; RRT_TEST_USER (rrt-test);
# RRT_CGROUP_VIEW=unified (root only) runs the tests in a private mount namespace whose
# /sys/fs/cgroup is a cgroup2 mount (crun refuses a hybrid host layout); RRT_ASAN is passed on.
# A file with the line "# rrt-test-as: root" runs as root when we are root (see as_root).
set -u

die() {
  echo "run-integration: $*" >&2
  exit 1
}

[ $# -eq 2 ] || die "usage: run-integration.sh RUNTIME PROBE"
runtime=$(readlink -f "$1") || die "no runtime $1"
probe=$(readlink -f "$2") || die "no probe $2"
[ -x "$runtime" ] || die "$1 is not executable"
[ -x "$probe" ] || die "$2 is not executable"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
spec_src=$(readlink -f "${SPEC_DIR:-$repo/tests/spec}")
[ -f "$spec_src/schema/state-schema.json" ] || die "no OCI spec schema under $spec_src"
test_timeout=${RRT_TEST_TIMEOUT:-300}
test_user=${RRT_TEST_USER:-rrt-test}

# Nothing of our caller's (make's jobserver pipes, an editor's sockets) may reach the tests: a
# leaked fd would show up inside containers as if the runtime leaked it.
for fd in "/proc/$$/fd"/*; do
  fd=${fd##*/}
  [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"
done

summary() { # summary PASS FAIL SKIP
  echo "integration: $1 passed, $2 failed, $3 skipped"
}

# Who runs the tests.
if [ "$(id -u)" -eq 0 ]; then
  if [ "$(awk 'NR == 1 {print $1, $2, $3}' /proc/self/uid_map)" != "0 0 4294967295" ]; then
    echo "SKIP integration: uid 0 inside a user namespace cannot create the test user;" \
      "run as real root or as an unprivileged user"
    summary 0 0 1
    exit 0
  fi
  mode=root
  uid=$(bash "$repo/contrib/ensure-user.sh" "$test_user") || die "cannot set up user $test_user"
  gid=$(id -g "$test_user")
else
  caps=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
  if [ -n "$caps" ] && [ "$((16#$caps))" -ne 0 ]; then
    echo "SKIP integration: this uid $(id -u) has capabilities ($caps); the tests need an" \
      "unprivileged user (or real root, which creates one)"
    summary 0 0 1
    exit 0
  fi
  mode=user
  uid=$(id -u)
  gid=$(id -g)
fi

# A world-readable copy of everything the tests use: the CI clone may live where the test user
# cannot go (/root/...).
work=$(mktemp -d /tmp/rrt-int.XXXXXX) || die "mktemp failed"
chmod 0755 "$work"
cleanup() {
  if [ "${RRT_KEEP:-0}" = 1 ]; then
    echo "run-integration: work dir kept: $work"
  else
    rm -rf "$work"
  fi
}
trap 'cleanup; cgroup_cleanup' EXIT
mkdir -p "$work/bin" "$work/logs" "$work/root" "$work/tmp"
{ cp "$runtime" "$work/bin/" && cp "$probe" "$work/bin/rrt-probe"; } || die "cannot copy binaries"
# The helpers (network, systemd, registry) go beside the runtime, where the runtime looks for them.
for h in rootlessrt-net rootlessrt-systemd rootlessrt-pull; do
  if [ -x "$(dirname "$runtime")/$h" ]; then
    cp "$(dirname "$runtime")/$h" "$work/bin/" || die "cannot copy $h"
  fi
done
# Other test helpers (tests/helper/NAME.c) built next to the probe go along with it.
for h in "$repo"/tests/helper/*.c; do
  h=$(basename "$h" .c)
  if [ "$h" != rrt-probe ] && [ -x "$(dirname "$probe")/$h" ]; then
    cp "$(dirname "$probe")/$h" "$work/bin/" || die "cannot copy $h"
  fi
done
cp -r "$repo/tests" "$repo/contrib" "$repo/man" "$work/" || die "cannot copy tests, contrib and man"
# The documents, for t-docs.sh.
for d in README.md docs; do
  [ ! -e "$repo/$d" ] || cp -r "$repo/$d" "$work/" || die "cannot copy $d"
done
cp -r "$spec_src" "$work/spec" || die "cannot copy $spec_src"
chmod -R u+w,a+rX "$work" # a SPEC_DIR given may be read-only: keep the copy removable
if [ "$mode" = root ]; then
  chown "$uid:$gid" "$work/root" "$work/tmp"
fi
chmod 0700 "$work/root"
rrt_bin=$work/bin/$(basename "$runtime")

# ---------------------------------------------------------------- delegated cgroup (t-cgroup)
# As root: a cgroup v2 directory owned by the test user (as a systemd user session delegates
# one), with t-cgroup.sh's shell placed in its child "leaf", so the runtime sees a writable
# cgroup and pause/resume/ps/kill --all/update can be checked for real. Unprivileged runs have
# none: t-cgroup.sh then checks the clear errors and skips the rest with the reason.
cg_deleg=""
cg_skip_reason="the tests do not run as root, so no cgroup can be delegated to the test user"
if [ "$mode" = root ]; then
  cg_mnt=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
  if [ -z "$cg_mnt" ]; then
    cg_skip_reason="no cgroup2 mount on this host"
  elif ! mkdir "$cg_mnt/rrt-test-$$" "$cg_mnt/rrt-test-$$/leaf" 2>/dev/null; then
    cg_skip_reason="cannot create a cgroup under $cg_mnt"
  else
    cg_deleg=$cg_mnt/rrt-test-$$
    chown "$uid:$gid" "$cg_deleg" "$cg_deleg"/cgroup.{procs,threads,subtree_control} \
      "$cg_deleg/leaf" "$cg_deleg"/leaf/cgroup.{procs,threads,subtree_control}
  fi
fi
cgroup_cleanup() {
  [ -n "$cg_deleg" ] || return 0
  local d
  # Deepest first; a cgroup the runtime left behind is reported by the caller.
  while IFS= read -r d; do rmdir "$d" 2>/dev/null; done < <(find "$cg_deleg" -mindepth 1 -type d | sort -r)
  rmdir "$cg_deleg" 2>/dev/null
}

# as_root TEST: the file says "# rrt-test-as: root": it is about what real root does (sysctls,
# cgroups, devices) and runs as root when we are; otherwise as the user, and it skips with why.
as_root() { grep -qx '# rrt-test-as: root' "$1"; }

# run_as_user LOG ERRLOG ROOT TEST: one test file, as the test user (or as root, see as_root),
# bounded in time.
run_as_user() {
  local log=$1 errlog=$2 root=$3 t=$4 tmp=$work/tmp
  # As root, a TMPDIR of root's, sticky like /tmp (such a file may hand work to the test user): a
  # --root under the test user's own directory would be refused.
  if [ "$mode" = root ] && as_root "$t"; then
    tmp=$work/tmp-root
    [ -d "$tmp" ] || mkdir -m 1777 "$tmp"
  fi
  local -a envs=(
    PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8
    RRT="$rrt_bin" PROBE="$work/bin/rrt-probe" TESTS_DIR="$work/tests" SPEC_DIR="$work/spec"
    RRT_ROOT="$root" TMPDIR="$tmp" RRT_ASAN="${RRT_ASAN:-0}"
  )
  # t-systemd.sh: a real systemd user manager, started by the repository's harness.
  local sd_user=$repo/tests/helper/systemd-user.sh
  [ -x "$sd_user" ] && envs+=(RRT_SYSTEMD_USER="$(readlink -f "$sd_user")" RRT_TEST_USER="$test_user")
  [ -n "${T_SETUP_DIR:-}" ] && envs+=(RRT_ROOT_SETUP="$T_SETUP_DIR")
  [ -n "${T_SETUP_SKIP:-}" ] && envs+=(RRT_ROOT_SETUP_SKIP="$T_SETUP_SKIP")
  [ -n "${ASAN_OPTIONS:-}" ] && envs+=(ASAN_OPTIONS="$ASAN_OPTIONS")
  [ -n "${UBSAN_OPTIONS:-}" ] && envs+=(UBSAN_OPTIONS="$UBSAN_OPTIONS")
  local -a pre=()
  if [ "$(basename "$t")" = t-cgroup.sh ]; then
    if [ -n "$cg_deleg" ]; then
      envs+=(RRT_CGROUP_DELEGATED=1)
      # shellcheck disable=SC2016 # $$ and $1 belong to the inner shell
      pre=(sh -c 'echo $$ >"$1/leaf/cgroup.procs" || exit 3; shift; exec "$@"' sh "$cg_deleg")
    else
      envs+=(RRT_CGROUP_SKIP="$cg_skip_reason")
    fi
  fi
  if [ "$mode" = root ] && ! as_root "$t"; then
    if [ "${RRT_CGROUP_VIEW:-host}" = unified ] && [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
      pre+=(unshare -m --propagation private sh -c
        'mount -t cgroup2 none /sys/fs/cgroup || exit 3; exec "$@"' sh)
    fi
    pre+=(setpriv "--reuid=$uid" "--regid=$gid" --init-groups --reset-env)
  fi
  (cd "$tmp" && timeout -k 10 "$test_timeout" "${pre[@]}" \
    env -u XDG_RUNTIME_DIR "${envs[@]}" bash "$t" >"$log" 2>"$errlog" </dev/null)
}

# leftovers: processes that still mention the work dir (cmdline, environ, cwd, root) once a test
# file has finished; each is reported and killed.
leftover_pids() {
  /usr/bin/python3 -c '
import os, sys
needle, me = sys.argv[1].encode(), str(os.getpid())
for p in os.listdir("/proc"):
    if not p.isdigit() or p == me:
        continue
    hit = False
    for f in ("cmdline", "environ"):
        try:
            with open("/proc/%s/%s" % (p, f), "rb") as fh:
                hit = hit or needle in fh.read()
        except OSError:
            pass
    for l in ("cwd", "root"):
        try:
            hit = hit or needle in os.readlink("/proc/%s/%s" % (p, l)).encode()
        except OSError:
            pass
    if hit:
        print(p)
' "$work/"
}

total_pass=0
total_fail=0
total_skip=0
failures=""
skips=""
add_failure() { failures+="$1"$'\n'; }

shopt -s nullglob
tests=("$work"/tests/integration/t-*.sh)
[ ${#tests[@]} -gt 0 ] || die "no tests in $repo/tests/integration"
for t in "${tests[@]}"; do
  name=$(basename "$t" .sh)
  if [ -n "${RRT_TESTS:-}" ] && [[ " $RRT_TESTS " != *" $name "* && " $RRT_TESTS " != *" $name.sh "* ]]; then
    continue
  fi
  log=$work/logs/$name.tap
  errlog=$work/logs/$name.stderr
  root=$work/root/$name
  # A file run as root gets a state root of root's: one under the test user's directory is
  # refused, since that user could replace it.
  if [ "$mode" = root ] && as_root "$t"; then
    [ -d "$work/root-as-root" ] || mkdir -m 0700 "$work/root-as-root"
    root=$work/root-as-root/$name
  fi
  mkdir -m 0700 "$root"
  [ "$mode" = root ] && ! as_root "$t" && chown "$uid:$gid" "$root"
  # A test that needs something only root can make (a second user: t-trust) has a script in
  # root-setup/ run around it, as root; the test finds what it made in $RRT_ROOT_SETUP.
  setup=$(dirname "$t")/root-setup/$name.sh
  T_SETUP_DIR="" T_SETUP_SKIP=""
  if [ "$mode" = root ] && [ -f "$setup" ]; then
    T_SETUP_DIR=$(mktemp -d "$work/setup.XXXXXX") && chmod 0755 "$T_SETUP_DIR"
    if ! bash "$setup" setup "$T_SETUP_DIR" "$uid" "$gid" >"$work/logs/$name.setup" 2>&1; then
      T_SETUP_SKIP="root-setup/$name.sh failed: $(tail -n 1 "$work/logs/$name.setup")"
    fi
  fi
  start=$SECONDS
  run_as_user "$log" "$errlog" "$root" "$t"
  status=$?
  if [ -n "$T_SETUP_DIR" ]; then
    bash "$setup" teardown "$T_SETUP_DIR" "$uid" "$gid" >>"$work/logs/$name.setup" 2>&1
  fi
  [ "${RRT_VERBOSE:-0}" = 1 ] && sed "s|^|$name: |" "$log"

  p=0 f=0 s=0 n=0 plan="" cur_fail=0 bailed=0
  while IFS= read -r line; do
    case $line in
      "not ok "*)
        n=$((n + 1)) f=$((f + 1)) cur_fail=1
        add_failure "$name: $line"
        ;;
      "ok "*"# SKIP"*)
        n=$((n + 1)) s=$((s + 1)) cur_fail=0
        skips+="$name: SKIP ${line#*# SKIP }"$'\n'
        ;;
      "ok "*) n=$((n + 1)) p=$((p + 1)) cur_fail=0 ;;
      "#"*) [ "$cur_fail" = 1 ] && add_failure "$name:   $line" ;;
      "Bail out!"*)
        f=$((f + 1)) cur_fail=0 bailed=1
        add_failure "$name: $line"
        ;;
      1..*) plan=${line#1..} ;;
      *) cur_fail=0 ;;
    esac
  done <"$log"

  why=""
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    why="timed out after ${test_timeout}s"
  elif [ "$bailed" = 1 ]; then
    why=""
  elif [ -z "$plan" ]; then
    why="ended without a plan (exit status $status)"
  elif [ "$plan" != "$n" ]; then
    why="planned $plan tests, ran $n"
  elif [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
    why="exited with status $status"
  fi
  if [ -n "$why" ]; then
    f=$((f + 1))
    add_failure "$name: not ok - $name.sh $why"
  fi
  if [ -n "$why" ] || [ "$f" -gt 0 ]; then
    if [ -s "$errlog" ]; then
      add_failure "$name:   # stderr (last 20 lines):"
      while IFS= read -r line; do add_failure "$name:   #   $line"; done < <(tail -n 20 "$errlog")
    fi
  fi

  # Nothing may outlive a test file: processes, state or host mounts.
  mapfile -t left < <(leftover_pids)
  if [ ${#left[@]} -gt 0 ]; then
    f=$((f + 1))
    add_failure "$name: not ok - processes left behind: $(for pid in "${left[@]}"; do
      tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-120 | sed "s/^/[$pid] /"
    done | paste -sd ';')"
    kill -KILL "${left[@]}" 2>/dev/null
  fi
  state_left=$(find "$root" -mindepth 1 -maxdepth 1 ! -name '.*' -printf '%f ' 2>/dev/null)
  if [ -n "$state_left" ]; then
    f=$((f + 1))
    add_failure "$name: not ok - state left in --root: $state_left"
  fi
  if [ -n "$cg_deleg" ]; then
    cg_left=$(find "$cg_deleg/leaf" -mindepth 1 -maxdepth 1 -type d -printf '%f ' 2>/dev/null)
    if [ -n "$cg_left" ]; then
      f=$((f + 1))
      add_failure "$name: not ok - cgroups left in $cg_deleg/leaf: $cg_left"
    fi
  fi
  mounts_left=$(grep -F -- "$work/" /proc/self/mountinfo)
  if [ -n "$mounts_left" ]; then
    f=$((f + 1))
    add_failure "$name: not ok - host mounts left behind: $mounts_left"
  fi

  echo "$name: $p passed, $f failed, $s skipped ($((SECONDS - start)) s)"
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
  total_skip=$((total_skip + s))
done

if [ -n "$skips" ]; then
  printf '%s' "$skips"
fi
if [ -n "$failures" ]; then
  echo "integration failures:"
  printf '%s' "$failures"
fi
summary "$total_pass" "$total_fail" "$total_skip"
[ "$total_fail" -eq 0 ]
