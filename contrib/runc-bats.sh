#!/bin/bash
# runc-bats.sh: runs runc's own integration suite (bats, from Debian's runc source package) against
# rootlessrt, runc and crun, as root and rootless, and prints a side-by-side table.
#
#   contrib/runc-bats.sh [--cache DIR] [--runtime NAME=PATH]... [--mode root|rootless|both]
#                        [--tests 'a.bats b.bats'] [--no-debian] [--timeout SECONDS]
#                        [--rootless-features cgroup|idmap|idmap+cgroup|none]
#
# Without --runtime: rootlessrt (RRT_BIN, or build/rootlessrt), runc and crun from PATH.
#
# As root. Nothing of runc's is kept in this tree: the source package is fetched with apt through a
# private sources list and lists directory under the cache (the machine's apt configuration is
# never read for sources nor changed), unpacked with Debian's patches (the suite that goes with
# the installed runc 1.1.5+ds1-1+deb12u1), and run from there. Images are made offline: busybox from
# Debian's busybox-static, Debian from debootstrap (cached; --no-debian skips hooks.bats, the only
# user of that image). The Go helpers the suite starts (recvtty, seccompagent) are built with
# Debian's Go and golang-*-dev packages in GOPATH mode; sd-helper is only used with
# RUNC_USE_SYSTEMD, which this script does not set, and is not built.
#
# Rootless runs are as the user rrt-bats (contrib/ensure-user.sh), with runc's rootless feature
# cgroup (a delegated /runc-cgroups-integration-test in each cgroup v1 hierarchy, and on the v2
# mount when it is the unified one), set up as runc's tests/rootless.sh does. Not idmap by default:
# the suite adds its mappings to what `spec --rootless` wrote, and rootlessrt's spec writes none
# (the runtime maps the user and its /etc/subuid range itself), so container root would be
# unmapped; --rootless-features idmap+cgroup runs it anyway (the user's own subuid range).
#
# Results: CACHE/results/RUNTIME-MODE.tap (bats TAP), a table on stdout and
# CACHE/results/table.txt; CACHE/results/diff-MODE.txt lists each test whose result differs
# between the runtimes.
set -u -o pipefail

die() {
  echo "runc-bats: $*" >&2
  exit 1
}
say() { echo "runc-bats: $*" >&2; }

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || die "cannot find the source tree"
cache=$top/build/runc-bats
mode=both
tests=""
debian=1
timeout=""
features=cgroup
declare -a rt_names=() rt_paths=()

while [ $# -gt 0 ]; do
  case $1 in
    --cache)
      [ $# -ge 2 ] || die "--cache needs a directory"
      cache=$2
      shift 2
      ;;
    --runtime)
      [ $# -ge 2 ] && [[ $2 == ?*=?* ]] || die "--runtime needs NAME=PATH"
      rt_names+=("${2%%=*}")
      rt_paths+=("${2#*=}")
      shift 2
      ;;
    --mode)
      [ $# -ge 2 ] || die "--mode needs root, rootless or both"
      case $2 in root | rootless | both) mode=$2 ;; *) die "--mode $2: not root, rootless or both" ;; esac
      shift 2
      ;;
    --tests)
      [ $# -ge 2 ] || die "--tests needs a list of .bats files"
      tests=$2
      shift 2
      ;;
    --no-debian)
      debian=0
      shift
      ;;
    --timeout)
      [ $# -ge 2 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--timeout needs a number of seconds"
      timeout=$2
      shift 2
      ;;
    --rootless-features)
      [ $# -ge 2 ] || die "--rootless-features needs cgroup, idmap, idmap+cgroup or none"
      case $2 in cgroup | idmap | idmap+cgroup | cgroup+idmap) features=$2 ;; none) features="" ;;
        *) die "--rootless-features $2: not cgroup, idmap, idmap+cgroup or none" ;; esac
      shift 2
      ;;
    -h | --help)
      sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) die "unexpected argument: $1 (see --help)" ;;
  esac
done

[ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages and runs the suite as root too)"
sh "$top/contrib/install-deps.sh" runc-bats || die "installing the suite's packages failed"
if [ ${#rt_names[@]} -eq 0 ]; then
  rt_names=(rootlessrt runc crun)
  rt_paths=("${RRT_BIN:-$top/build/rootlessrt}" "$(command -v runc || echo /usr/sbin/runc)"
    "$(command -v crun || echo /usr/bin/crun)")
fi
for i in "${!rt_paths[@]}"; do
  p=${rt_paths[$i]}
  [[ $p == /* ]] || p=$PWD/$p
  [ -x "$p" ] || die "runtime ${rt_names[$i]}: $p is not an executable file"
  rt_paths[i]=$p
done

mkdir -p "$cache" || die "cannot create $cache"
cache=$(cd "$cache" && pwd) || die "cannot enter $cache"

# --- runc's source, through a private apt configuration -----------------------------------------
srcdir=$cache/runc
fetch_source() {
  local apt=$cache/apt
  mkdir -p "$apt/lists/partial" "$apt/parts" "$apt/cache/archives/partial" "$apt/dl" ||
    die "cannot create $apt"
  : >"$apt/sources.list"
  cat >"$apt/parts/runc-bats.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  local -a opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=$apt/parts"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Sandbox::User=root")
  say "fetching runc's source package (private apt lists in $apt)"
  apt-get -qq "${opts[@]}" update >/dev/null || die "apt-get update (deb-src, private lists) failed"
  (cd "$apt/dl" && apt-get -qq "${opts[@]}" source --download-only runc >/dev/null) ||
    die "apt-get source --download-only runc failed"
  local dsc
  dsc=$(ls "$apt"/dl/runc_*.dsc 2>/dev/null | tail -n 1)
  [ -n "$dsc" ] || die "no runc .dsc in $apt/dl"
  rm -rf "$srcdir.tmp"
  dpkg-source --no-check -x "$dsc" "$srcdir.tmp" >/dev/null || die "dpkg-source -x $dsc failed"
  basename "$dsc" .dsc >"$srcdir.tmp/.runc-bats-version"
  mv "$srcdir.tmp" "$srcdir" || die "cannot move the source to $srcdir"
}
[ -f "$srcdir/tests/integration/helpers.bash" ] || fetch_source
itests=$srcdir/tests/integration
say "suite: $(cat "$srcdir/.runc-bats-version" 2>/dev/null || echo runc) in $srcdir"

# --- images, offline ------------------------------------------------------------------------------
images=$cache/images
mkdir -p "$images" || die "cannot create $images"
make_busybox() {
  local r=$images/busybox.tmp
  rm -rf "$r"
  # No proc or sys, as in that image: mask.bats makes them symlinks.
  mkdir -p "$r"/{bin,dev,etc,home,root,tmp,usr/sbin,var/spool/mail,var/www} ||
    die "cannot create $r"
  chmod 1777 "$r/tmp"
  chmod 0700 "$r/root"
  cp /bin/busybox "$r/bin/busybox" || die "cannot copy /bin/busybox"
  local a
  for a in $(/bin/busybox --list); do
    [ "$a" = busybox ] || ln "$r/bin/busybox" "$r/bin/$a" || die "cannot link $a"
  done
  # The accounts of Docker's busybox image, which the suite was written against.
  cat >"$r/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
EOF
  cat >"$r/etc/group" <<'EOF'
root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
lp:x:7:
mail:x:8:
kmem:x:9:
wheel:x:10:root
cdrom:x:11:
dialout:x:18:
floppy:x:19:
video:x:28:
audio:x:29:
tape:x:32:
www-data:x:33:
operator:x:37:
utmp:x:43:
plugdev:x:46:
staff:x:50:
lock:x:54:
netdev:x:82:
users:x:100:
nogroup:x:65534:
EOF
  tar -C "$r" -cf "$images/busybox.tar" . || die "cannot write $images/busybox.tar"
  rm -rf "$r"
}
[ -s "$images/busybox.tar" ] || make_busybox

debian_image=""
if [ "$debian" = 1 ]; then
  if [ ! -s "$images/debian.tar" ]; then
    say "debootstrap --variant=minbase bookworm (once, cached in $images/debian.tar)"
    rm -rf "$images/debian.tmp"
    if debootstrap --variant=minbase bookworm "$images/debian.tmp" http://deb.debian.org/debian \
      >"$images/debootstrap.log" 2>&1; then
      tar -C "$images/debian.tmp" --exclude './dev/*' -cf "$images/debian.tar.tmp" . &&
        mv "$images/debian.tar.tmp" "$images/debian.tar" || die "cannot write $images/debian.tar"
    else
      say "debootstrap failed (see $images/debootstrap.log): hooks.bats is skipped"
    fi
    rm -rf "$images/debian.tmp"
  fi
  [ -s "$images/debian.tar" ] && debian_image=$images/debian.tar
fi
# runc's get-images.sh downloads both images; this one names what was made above.
cat >"$itests/get-images.sh" <<EOF
#!/bin/bash
# Written by rootlessrt's contrib/runc-bats.sh: the images are made offline.
echo BUSYBOX_IMAGE=$images/busybox.tar
echo DEBIAN_IMAGE=${debian_image:-/nonexistent/debian.tar}
EOF
chmod 0755 "$itests/get-images.sh"

# --- the Go helpers ------------------------------------------------------------------------------
build_helpers() {
  local gopath=$cache/gopath
  mkdir -p "$gopath/src/github.com/opencontainers" || die "cannot create $gopath"
  ln -sfn "$srcdir" "$gopath/src/github.com/opencontainers/runc" || die "cannot link $srcdir"
  local h tags
  for h in recvtty seccompagent; do
    [ -x "$srcdir/contrib/cmd/$h/$h" ] && continue
    tags=""
    [ "$h" = seccompagent ] && tags=seccomp
    if ! (cd "$gopath/src/github.com/opencontainers/runc" &&
      GOPATH=$gopath:/usr/share/gocode GO111MODULE=off GOCACHE=$cache/gocache GOFLAGS='' \
        go build -tags "$tags" -o "contrib/cmd/$h/$h" "./contrib/cmd/$h") \
      >"$cache/build-$h.log" 2>&1; then
      say "building $h failed (see $cache/build-$h.log): the tests that need it fail"
    fi
  done
}
build_helpers

# --- the rootless user and its delegated cgroups --------------------------------------------------
user=rrt-bats
cg_rel=/runc-cgroups-integration-test
rootless_env=()
setup_rootless() {
  local uid gid start ucount gstart gcount
  uid=$(bash "$top/contrib/ensure-user.sh" "$user") || die "cannot set up the user $user"
  gid=$(id -g "$user")
  IFS=: read -r _ start ucount < <(grep -E "^($user|$uid):" /etc/subuid | head -n 1)
  IFS=: read -r _ gstart gcount < <(grep -E "^($user|$uid):" /etc/subgid | head -n 1)
  [ -n "${start:-}" ] && [ -n "${gstart:-}" ] || die "no /etc/subuid or /etc/subgid range for $user"
  # The user must reach the suite, the images and the runtimes.
  local d=$cache
  while [ "$d" != / ]; do
    chmod o+x "$d" 2>/dev/null
    d=$(dirname "$d")
  done
  chmod -R o+rX "$cache" 2>/dev/null
  # cwd.bats: a directory owned by uid 1024 in the container (container 1000 is the range's start).
  aux_dir=$(mktemp -d /tmp/runc-bats-aux.XXXXXX) || die "mktemp failed"
  chown "$((start - 1000 + 1024))" "$aux_dir" || die "chown $aux_dir failed"
  chmod 0755 "$aux_dir"
  # cgroup: as tests/rootless.sh's enable_cgroup, for each v1 hierarchy and the v2 one.
  local cg m
  [[ $features == *cgroup* ]] || cg_rel=/nonexistent
  [[ $features == *cgroup* ]] && for cg in $(cut -d: -f2 </proc/self/cgroup | sed -E 's/^name=//;s/,/\n/g' | sed '/^$/d'); do
    m=/sys/fs/cgroup/$cg
    [ -d "$m" ] || continue
    mkdir -p "$m$cg_rel" || continue
    chown "root:$gid" "$m$cg_rel" "$m$cg_rel/cgroup.procs" "$m$cg_rel/tasks" 2>/dev/null
    chmod g+rwx "$m$cg_rel" "$m$cg_rel/cgroup.procs" "$m$cg_rel/tasks" 2>/dev/null
    if [ "$cg" = cpuset ]; then
      chown "$uid:$gid" "$m$cg_rel/cpuset.cpus" "$m$cg_rel/cpuset.mems"
    fi
    if [ "$cg" = cpu ]; then
      for f in cpu.rt_period_us cpu.rt_runtime_us; do
        [ -e "$m$cg_rel/$f" ] && chown "$uid:$gid" "$m$cg_rel/$f"
      done
    fi
  done
  if [[ $features == *cgroup* ]] && [ -e /sys/fs/cgroup/cgroup.controllers ]; then
    for f in $(cat /sys/fs/cgroup/cgroup.controllers); do
      echo "+$f" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    done
    m=/sys/fs/cgroup
    mkdir -p "$m$cg_rel" || die "cannot create $m$cg_rel"
    chown "root:$gid" "$m$cg_rel" "$m$cg_rel/cgroup.subtree_control" "$m$cg_rel/cgroup.procs" \
      "$m/cgroup.procs"
    chmod g+rwx "$m$cg_rel"
    chmod g+rw "$m$cg_rel/cgroup.subtree_control" "$m$cg_rel/cgroup.procs" "$m/cgroup.procs"
  fi
  rootless_env=(ROOTLESS_FEATURES="$features"
    ROOTLESS_UIDMAP_START="$start" ROOTLESS_UIDMAP_LENGTH="$ucount"
    ROOTLESS_GIDMAP_START="$gstart" ROOTLESS_GIDMAP_LENGTH="$gcount"
    AUX_UID=1024 AUX_DIR="$aux_dir" HOME="$(getent passwd "$user" | cut -d: -f6)" USER="$user")
}
cleanup_rootless() {
  [ -n "${aux_dir:-}" ] && rm -rf "$aux_dir"
  local m
  [ "$cg_rel" = /nonexistent ] && return 0
  for m in /sys/fs/cgroup/*"$cg_rel" /sys/fs/cgroup"$cg_rel"; do
    [ -d "$m" ] && rmdir "$m" 2>/dev/null
  done
  return 0
}
trap cleanup_rootless EXIT

# --- running ---------------------------------------------------------------------------------------
results=$cache/results
mkdir -p "$results" || die "cannot create $results"
files=()
if [ -n "$tests" ]; then
  for t in $tests; do
    [ -f "$itests/$t" ] || die "--tests: no $t in $itests"
    files+=("$itests/$t")
  done
else
  for t in "$itests"/*.bats; do files+=("$t"); done
fi
if [ -z "$debian_image" ]; then
  kept=()
  for t in "${files[@]}"; do
    if [ "$(basename "$t")" = hooks.bats ]; then
      say "hooks.bats skipped: no Debian image (--no-debian, or debootstrap failed)"
    else
      kept+=("$t")
    fi
  done
  files=("${kept[@]}")
fi

# On a terminal, as runc's CI runs it (script(1)): runc's foreground run opens /dev/tty for a
# config with process.terminal. ptyrun (tests/helper) gives one that never sees input or EOF.
ptyrun=${PTYRUN:-$top/build/ptyrun}
[ -x "$ptyrun" ] || die "$ptyrun missing (make build/ptyrun, or PTYRUN=PATH)"

# A recvtty a test left behind (its teardown found no pid file) keeps bats's output open, and
# bats waits for it after the last test: once every planned result is in, wait 30 s, then end
# the recvtty processes of this suite's own binary, by pid.
watch_suite() { # watch_suite PID TAP
  local pid=$1 tap=$2 plan done_at=0 p exe
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tap" | head -n 1)
    [ -n "$plan" ] && [ "$(grep -cE '^(not )?ok [0-9]+' "$tap")" -ge "$plan" ] || continue
    [ "$done_at" = 0 ] && done_at=$SECONDS
    [ $((SECONDS - done_at)) -ge 30 ] || continue
    for p in /proc/[0-9]*; do
      exe=$(readlink "$p/exe" 2>/dev/null) || continue
      if [ "$exe" = "$srcdir/contrib/cmd/recvtty/recvtty" ]; then
        say "ending a recvtty left behind (pid ${p#/proc/})"
        kill "${p#/proc/}" 2>/dev/null
      fi
    done
  done
  wait "$pid"
}

# The suite's cgroups left by an earlier test or run (update.bats' rt test keeps its cgroup, whose
# rt runtime then leaves none for the next run): the sub-cgroups of the suite's own parent go
# (rmdir: never one with processes); the parent stays (the rootless setup delegated it).
tidy_cgroups() {
  find /sys/fs/cgroup/*"$cg_rel" /sys/fs/cgroup"$cg_rel" -mindepth 1 -depth -type d \
    -exec rmdir {} \; 2>/dev/null
  return 0
}

run_suite() { # run_suite NAME PATH MODE
  local name=$1 path=$2 m=$3 tap=$results/$1-$3.tap start
  tidy_cgroups
  start=$(date +%s)
  say "$name ($m): bats on ${#files[@]} files"
  # No BATS_TEST_TIMEOUT unless asked: its watchdog is a child of the test's shell, and the tests
  # that `wait` for their own background jobs (events.bats) then wait for it too and time out.
  local -a envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin RUNC="$path"
    ${timeout:+BATS_TEST_TIMEOUT="$timeout"} TMPDIR=/tmp LANG=C.UTF-8)
  if [ "$m" = root ]; then
    (cd "$itests" && env -i "${envs[@]}" HOME=/root "$ptyrun" --timeout 14400 bats --tap \
      "${files[@]}") 2>"$tap.err" | tr -d '\r' >"$tap" &
  else
    (cd "$itests" && setpriv --reuid="$user" --regid="$user" --init-groups --reset-env -- \
      env -i "${envs[@]}" "${rootless_env[@]}" "$ptyrun" --timeout 14400 bats --tap "${files[@]}") \
      2>"$tap.err" | tr -d '\r' >"$tap" &
  fi
  watch_suite $! "$tap"
  say "$name ($m): $(summary "$tap") in $(($(date +%s) - start)) s"
}

summary() { # summary TAP: "P passed, F failed, S skipped"
  awk '/^ok .* # [sS][kK][iI][pP]/ {s++; next} /^ok / {p++; next} /^not ok / {f++}
       END {printf "%d passed, %d failed, %d skipped\n", p, f, s}' "$1"
}

modes=()
case $mode in root) modes=(root) ;; rootless) modes=(rootless) ;; both) modes=(root rootless) ;; esac
for m in "${modes[@]}"; do
  [ "$m" = rootless ] && setup_rootless
  for i in "${!rt_names[@]}"; do
    run_suite "${rt_names[$i]}" "${rt_paths[$i]}" "$m"
  done
done

# --- the table ---------------------------------------------------------------------------------------
outcomes() { # outcomes TAP: "NAME<TAB>pass|fail|skip" per test
  sed -nE 's/^ok [0-9]+ (.*) # [sS][kK][iI][pP].*/\1\tskip/p; t
           s/^ok [0-9]+ (.*)/\1\tpass/p; t
           s/^not ok [0-9]+ (.*)/\1\tfail/p' "$1"
}
{
  printf '%-10s' mode
  for n in "${rt_names[@]}"; do printf ' | %-24s' "$n (pass/fail/skip)"; done
  echo
  for m in "${modes[@]}"; do
    printf '%-10s' "$m"
    for n in "${rt_names[@]}"; do
      printf ' | %-24s' "$(awk '/^ok .* # [sS][kK][iI][pP]/ {s++; next} /^ok / {p++; next}
        /^not ok / {f++} END {printf "%d / %d / %d", p, f, s}' "$results/$n-$m.tap")"
    done
    echo
  done
} | tee "$results/table.txt"
for m in "${modes[@]}"; do
  args=()
  for n in "${rt_names[@]}"; do args+=("$results/$n-$m.tap"); done
  # One line per test whose outcome is not the same for every runtime.
  for a in "${args[@]}"; do outcomes "$a" >"$a.outcomes"; done
  python3 - "$results/diff-$m.txt" "${rt_names[@]}" -- "${args[@]/%/.outcomes}" <<'EOF'
import sys
out = sys.argv[1]
sep = sys.argv.index("--")
names, files = sys.argv[2:sep], sys.argv[sep + 1:]
res, order = [], []
for f in files:
    d = {}
    for line in open(f):
        t, _, o = line.rstrip("\n").rpartition("\t")
        d[t] = o
        if t not in order:
            order.append(t)
    res.append(d)
with open(out, "w") as w:
    w.write("\t".join(names) + "\ttest\n")
    for t in order:
        row = [r.get(t, "-") for r in res]
        if len(set(row)) > 1:
            w.write("\t".join(row) + "\t" + t + "\n")
EOF
  say "$m: $(($(wc -l <"$results/diff-$m.txt") - 1)) tests differ between runtimes: $results/diff-$m.txt"
done
