#!/bin/bash
# podman-hostile.sh RUNTIME: the hostile and broken images of t-image-hostile.sh
# (tests/helper/hostile-image.py builds them) fed to rootless podman as a user would
# (`podman run --rm oci-archive:FILE`, docker-archive:, oci:, with podman's own default runtime,
# in a private storage root and private XDG dirs under the suite's tmp) and to `rootlessrt run`,
# then compared class by class: where podman runs the image as user U, rootlessrt runs it as U
# (the same output); where podman refuses, rootlessrt refuses with one line and exit status 1;
# where they differ by design (rootlessrt refuses what podman accepts, or podman hangs) the check
# names the case, and docs/desktop.md's table lists it. Each podman call is bounded by
# PH_TIMEOUT seconds (90: 100,000 Env entries take podman a while on a loaded machine; PH_HANG_TIMEOUT, 10, where podman is known to block on a FIFO): a podman
# that hangs is a finding recorded in the table, not a failure. podman is the reference here,
# not the thing tested: where it is cut by the bound on a case it is known to answer (every
# "same" case's outcome is in EXPECTED[CLASS]; a "stricter" one is a refusal of ours), the
# comparison is skipped, saying podman did not answer in N s, and rootlessrt is checked against
# that known outcome; a busy host never fails the suite through podman's slowness.
# Prints the table (class, podman, rootlessrt) as '#' lines.
#
# Skipped, with the reason, under the sanitizers (RRT_ASAN=1), when not root (it sets up its
# user, PH_USER, rrt-test by default), or when podman, python3 or a static busybox is missing.
# Ends with "podman-hostile: N passed, N failed, N skipped".
# Internal: podman-hostile.sh --inner WORK runs the cases as the user.
set -u
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PH_TIMEOUT=${PH_TIMEOUT:-90}
PH_PODMAN_TIMEOUT=${PH_PODMAN_TIMEOUT:-$PH_TIMEOUT} # podman's own bound (rootlessrt keeps PH_TIMEOUT)
PH_HANG_TIMEOUT=${PH_HANG_TIMEOUT:-10} # for podman where it is known to block
N_CASES=25

# shellcheck source=tap.sh
source "$here/tap.sh"
skip_all() {
  echo "podman-hostile: skipped ($1)"
  N_SKIP=$N_CASES
  summary podman-hostile
  exit 0
}

outer() {
  local runtime user uid gid work h out line n
  runtime=$(readlink -f "$1") || {
    echo "podman-hostile: no runtime $1" >&2
    exit 2
  }
  [ "${RRT_ASAN:-0}" = 1 ] && skip_all "not under the sanitizers: podman's timeouts are tuned for a normal build"
  [ "$(id -u)" -eq 0 ] || skip_all "needs root to set up its user"
  command -v podman >/dev/null 2>&1 || skip_all "podman is not installed"
  [ -x /usr/bin/python3 ] || skip_all "python3 is not installed"
  [ -x /bin/busybox ] || skip_all "no static busybox at /bin/busybox (busybox-static)"
  user=${PH_USER:-rrt-test}
  uid=$(bash "$here/../../contrib/ensure-user.sh" "$user") || skip_all "cannot set up the user $user"
  gid=$(id -g "$user")
  # Everything the user needs, world-readable (the checkout may be where the user cannot go).
  # Lower case: podman reads an oci:PATH with an upper-case letter as a registry name.
  work=/tmp/rrt-podman-hostile-$$
  rm -rf "$work" && mkdir "$work" || exit 2
  chmod 0755 "$work"
  mkdir -p "$work/bin" "$work/u"
  install -m 0755 "$runtime" "$work/bin/rootlessrt" || exit 2
  for h in rootlessrt-net rootlessrt-pull; do
    [ -x "$(dirname "$runtime")/$h" ] && install -m 0755 "$(dirname "$runtime")/$h" "$work/bin/$h"
  done
  install -m 0755 "$here/podman-hostile.sh" "$work/podman-hostile.sh" || exit 2
  install -m 0644 "$here/tap.sh" "$work/tap.sh" || exit 2
  install -m 0755 "$here/../helper/hostile-image.py" "$work/hostile-image.py" || exit 2
  chown "$uid:$gid" "$work/u"
  # Podman and crun want a pure cgroup2 /sys/fs/cgroup (crun refuses a hybrid layout): a private
  # mount namespace with one, as tests/podman/podman-check.sh does.
  local pre='mount --make-rshared / 2>/dev/null;'
  if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
    pre="umount -R /sys/fs/cgroup 2>/dev/null || umount -l /sys/fs/cgroup; mount -t cgroup2 none /sys/fs/cgroup || exit 3; $pre"
  fi
  out=$(timeout -k 10 900 unshare -m --propagation private -- sh -c "$pre"' exec "$@"' sh \
    setpriv --reuid="$uid" --regid="$gid" --init-groups \
    env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 USER="$user" \
    PH_TIMEOUT="$PH_TIMEOUT" PH_PODMAN_TIMEOUT="$PH_PODMAN_TIMEOUT" PH_HANG_TIMEOUT="$PH_HANG_TIMEOUT" bash "$work/podman-hostile.sh" --inner "$work" 2>&1 </dev/null)
  printf '%s\n' "$out" | grep -v '^podman-hostile: [0-9]* passed'
  line=$(printf '%s\n' "$out" | grep -E '^podman-hostile: [0-9]+ passed' | tail -n 1)
  if [ -z "$line" ]; then
    fail "the cases printed no summary"
  else
    n=$(sed -n 's/.* \([0-9]*\) passed.*/\1/p' <<<"$line") && N_PASS=$((N_PASS + n))
    n=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$line") && N_FAIL=$((N_FAIL + n))
    n=$(sed -n 's/.* \([0-9]*\) skipped.*/\1/p' <<<"$line") && N_SKIP=$((N_SKIP + n))
  fi
  # The inner part stops podman's pause process itself; one it could not stop is killed here.
  local pid
  pid=$(cat "$work/u/xdg/libpod/tmp/pause.pid" 2>/dev/null)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    fail "podman's pause process ($pid) was left running" && kill -9 "$pid"
  fi
  rm -rf "$work"
  summary podman-hostile
  [ "$N_FAIL" -eq 0 ]
}

case ${1:-} in
  --inner) ;;
  "" | -*)
    echo "usage: podman-hostile.sh RUNTIME" >&2
    exit 2
    ;;
  *)
    outer "$1"
    exit
    ;;
esac

# ---------------------------------------------------------------- as the user

W=$2
RT=$W/bin/rootlessrt
U=$W/u
export HOME=$U/home XDG_RUNTIME_DIR=$U/xdg XDG_CONFIG_HOME=$U/home/.config \
  XDG_DATA_HOME=$U/home/.local/share
mkdir -p "$XDG_CONFIG_HOME/containers" "$XDG_DATA_HOME" "$U/img" "$U/rrt-state" &&
  install -d -m 0700 "$XDG_RUNTIME_DIR" || exit 2
# Podman's own defaults (crun, overlay), only the store and its state moved under $U, and
# cgroupfs and a file events log for a machine without systemd or logind.
cat >"$XDG_CONFIG_HOME/containers/containers.conf" <<EOF
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
cat >"$XDG_CONFIG_HOME/containers/storage.conf" <<EOF
[storage]
driver = "overlay"
runroot = "$U/runroot"
graphroot = "$U/graph"
EOF

cleanup() {
  # Every container podman made here (one a killed run left included), then its pause process,
  # then the store, whose files belong to subordinate ids.
  timeout -k 5 60 podman rm -a -f -t 0 >/dev/null 2>&1
  timeout -k 5 60 podman unshare rm -rf "$U/graph" "$U/runroot" "$U/rrt-store" >/dev/null 2>&1
  local pid
  pid=$(cat "$XDG_RUNTIME_DIR/libpod/tmp/pause.pid" 2>/dev/null)
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  fi
}
trap cleanup EXIT

runtime_name=$(timeout -k 5 60 podman info --format '{{.Host.OCIRuntime.Name}}' 2>&1)
echo "# podman $(podman --version | sed 's/.* //'), its default runtime: $runtime_name," \
  "storage $(timeout -k 5 60 podman info --format '{{.Store.GraphDriverName}} {{.Store.GraphRoot}}' 2>&1)"

# hostile KIND: $U/img/KIND/{oci,oci.tar,docker.tar}, once.
hostile() {
  [ -d "$U/img/$1" ] || /usr/bin/python3 "$W/hostile-image.py" "$U/img/$1" "$1" /bin/busybox ||
    echo "# hostile-image.py $1 failed"
}

# outcome RC OUTFILE ERRFILE LIMIT TENTHS: what a run did, for the table and the comparison: its
# time and output (the first 40 bytes) or the end of its last message (60 bytes, the work
# directory cut).
outcome() {
  local said t
  t=$(printf '%d.%d s' $(($5 / 10)) $(($5 % 10)))
  case $1 in
    0) printf 'runs (%s): %s' "$t" "$(head -c 40 "$2" | tr '\n' '|' | sed 's/|$//')" ;;
    124 | 137) printf 'hangs (killed after %s s)' "$4" ;;
    *)
      said=$(tail -n 1 "$3" | sed "s|$U/||g; s/^Error: //")
      [ ${#said} -gt 60 ] && said=...${said: -57}
      printf 'refuses (%s, %s): %s' "$1" "$t" "$said"
      ;;
  esac
}

ROWS=()
# What each "same" case prints, known from the image hostile-image.py made (the plain image's Cmd
# is `id -u`; alice is 4242 in the layers above the base): the reference when podman is cut by its
# time limit (a loaded host), and checked against podman's own output when it is not.
# "(refused)": podman refuses it, rootlessrt must (one line, exit 1).
links_out=$(printf 'ziel-\303\244-%s\nraw-\377\nhard data\n1' "$(printf 'x%.0s' {1..100})")
declare -A EXPECTED=(
  [plain]=0 [plain-docker]=0 [plain-oci-dir]=0
  [many-env]="again 99999" # the later K5 wins, as in podman
  [big-passwd]="(refused)" # podman reads the 4 GiB file for 12 s (quiet host) before refusing
  [passwd-symlink]=4242 [passwd-dirlink]=4242 [passwd-eacces]=4242 [etc-eacces]=4242
  [passwd-whiteout]="(refused)" [passwd-opaque]="(refused)" [passwd-opaque-u0]=0
  [links]=$links_out [links-docker]=$links_out
  [corrupt]="(refused)" [empty-whiteout]="(refused)" [nested]="(refused)"
  [nested-archive]="(refused)"
)
# compare CLASS EXPECT REF [RUN ARGS...] [-- CMD...]: REF (TRANSPORT:PATH under $U/img) run by
# podman and by rootlessrt, with RUN ARGS before it and CMD after it. EXPECT: same (rootlessrt
# does what podman does), stricter (podman runs it, rootlessrt refuses: by design) or
# podman-hangs (podman blocks until killed; rootlessrt must refuse at once).
compare() {
  local class=$1 expect=$2 ref=$3 prc rrc po pe ro re p r
  shift 3
  local -a opts=() cmd=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1") && shift; done
  [ $# -gt 0 ] && shift && cmd=("$@")
  ref=${ref/:/:$U/img/}
  po=$U/p.out pe=$U/p.err ro=$U/r.out re=$U/r.err
  local limit=$PH_PODMAN_TIMEOUT
  [ "$expect" = podman-hangs ] && limit=$PH_HANG_TIMEOUT
  local t0 t1 t2
  t0=$(date +%s%N)
  timeout -k 5 "$limit" podman run --rm --network none "${opts[@]}" "$ref" "${cmd[@]}" \
    >"$po" 2>"$pe" </dev/null
  prc=$?
  t1=$(date +%s%N)
  timeout -k 5 "$PH_TIMEOUT" "$RT" --root "$U/rrt-state" run --rm --network none \
    --storage "$U/rrt-store" "${opts[@]}" "$ref" "${cmd[@]}" >"$ro" 2>"$re" </dev/null
  rrc=$?
  t2=$(date +%s%N)
  # podman cut by its time limit where it is known to answer: a busy host, not a finding. podman
  # is the reference, not the thing tested: the comparison is skipped, saying so, and rootlessrt
  # is checked against what the case is known to do; a killed run's container goes.
  local cut=0
  { [ "$prc" = 124 ] || [ "$prc" = 137 ]; } && [ "$expect" != podman-hangs ] && cut=1
  p=$(outcome "$prc" "$po" "$pe" "$limit" $(((t1 - t0) / 100000000)))
  [ "$cut" = 1 ] && p="did not answer in $limit s (cut: a busy host)"
  r=$(outcome "$rrc" "$ro" "$re" "$PH_TIMEOUT" $(((t2 - t1) / 100000000)))
  ROWS+=("$(printf '%-16s | %-86s | %s' "$class" "$p" "$r")")
  local shown # podman's output, for the check's name (which stays the same from run to run)
  shown=$(head -c 40 "$po" | tr '\n' '|' | sed 's/|$//')
  local diag=("podman: exit $prc: $(tail -n 3 "$pe")" "rootlessrt: exit $rrc: $(cat "$re")")
  # A refusal of ours is one line and exit status 1.
  local refused=0
  [ "$rrc" = 1 ] && [ "$(wc -l <"$re")" = 1 ] && [ ! -s "$ro" ] && refused=1
  podman_cut() {
    skip "$class: podman did not answer in $limit s (a busy host): the comparison with podman skipped"
    timeout -k 5 60 podman rm -a -f -t 0 >/dev/null 2>&1
  }
  case $expect in
    same)
      local want=${EXPECTED[$class]-} got wshown
      wshown=$(printf '%s' "$want" | head -c 40 | tr '\n' '|') # for the check's name: one line
      if [ -z "$want" ]; then
        fail "$class: this file names what the case prints (EXPECTED[$class])"
        return
      fi
      if [ "$rrc" = 0 ]; then got=$(cat "$ro"); else got="(refused)"; fi
      [ "$got" = "(refused)" ] && [ "$refused" = 0 ] && got="(exit $rrc, not one line)"
      if [ "$cut" = 1 ]; then
        podman_cut
        if [ "$got" = "$want" ]; then
          pass "$class: rootlessrt does the expected: $wshown"
        else
          fail "$class: rootlessrt does the expected: $wshown" "rootlessrt: $r" "${diag[@]}"
        fi
      elif { [ "$want" = "(refused)" ] && [ "$prc" = 0 ]; } ||
        { [ "$want" != "(refused)" ] && [ "$(cat "$po")" != "$want" ]; }; then
        fail "$class: podman does what this file expects ($wshown)" "${diag[@]}"
      elif [ "$prc" = 0 ]; then
        if [ "$rrc" = 0 ] && cmp -s "$po" "$ro"; then
          pass "$class: podman runs it ($shown), rootlessrt the same"
        else
          fail "$class: podman runs it ($shown), rootlessrt the same" "rootlessrt: $r" "${diag[@]}"
        fi
      elif [ "$refused" = 1 ]; then
        pass "$class: podman refuses it, rootlessrt too (one line, exit 1)"
      else
        fail "$class: podman refuses it, rootlessrt too (one line, exit 1)" "${diag[@]}"
      fi
      ;;
    stricter)
      if [ "$cut" = 1 ]; then
        podman_cut
        if [ "$refused" = 1 ]; then
          pass "$class: rootlessrt refuses it by design (one line, exit 1)"
        else
          fail "$class: rootlessrt refuses it by design (one line, exit 1)" "${diag[@]}"
        fi
      elif [ "$prc" != 0 ]; then
        fail "$class: podman runs it, rootlessrt refuses by design: podman no longer runs it" \
          "${diag[@]}"
      elif [ "$refused" = 1 ]; then
        pass "$class: podman runs it ($shown), rootlessrt refuses by design (one line, exit 1)"
      else
        fail "$class: podman runs it ($shown), rootlessrt refuses by design (one line, exit 1)" \
          "${diag[@]}"
      fi
      ;;
    podman-hangs)
      if [ "$refused" = 1 ]; then
        pass "$class: podman blocks (a finding, not a failure); rootlessrt refuses at once (one line, exit 1)"
      else
        fail "$class: podman blocks (a finding, not a failure); rootlessrt refuses at once (one line, exit 1)" \
          "${diag[@]}"
      fi
      [ "$prc" = 124 ] || [ "$prc" = 137 ] ||
        echo "# $class: podman no longer hangs ($p): update docs/desktop.md's table"
      # A killed podman run leaves its container behind; gone before the next case.
      timeout -k 5 60 podman rm -a -f -t 0 >/dev/null 2>&1
      ;;
  esac
}

# ---------------------------------------------------------------- the cases

for k in realsize-oci realsize-docker fifo-index fifo-passwd big-passwd many-env passwd-symlink \
  passwd-dirlink passwd-whiteout passwd-opaque passwd-eacces etc-eacces links dup-blob corrupt \
  empty-whiteout rel-workdir nested plain; do
  hostile "$k"
done
mkfifo "$U/img/fifo.tar"

compare plain same oci-archive:plain/oci.tar
compare plain-docker same docker-archive:plain/docker.tar
compare plain-oci-dir same oci:plain/oci
compare realsize-oci stricter oci-archive:realsize-oci/oci.tar
compare realsize-docker stricter docker-archive:realsize-docker/docker.tar
compare fifo-index podman-hangs oci:fifo-index/oci
compare fifo-archive podman-hangs oci-archive:fifo.tar
compare fifo-passwd podman-hangs oci-archive:fifo-passwd/oci.tar
compare big-passwd same oci-archive:big-passwd/oci.tar
compare many-env same oci-archive:many-env/oci.tar -- sh -c 'echo "$K5 $K99999"'
compare passwd-symlink same oci-archive:passwd-symlink/oci.tar
compare passwd-dirlink same oci-archive:passwd-dirlink/oci.tar
compare passwd-whiteout same oci-archive:passwd-whiteout/oci.tar
compare passwd-opaque same oci-archive:passwd-opaque/oci.tar
compare passwd-opaque-u0 same oci-archive:passwd-opaque/oci.tar -u 0
compare passwd-eacces same oci-archive:passwd-eacces/oci.tar
compare etc-eacces same oci-archive:etc-eacces/oci.tar
compare links same oci-archive:links/oci.tar
compare links-docker same docker-archive:links/docker.tar
compare dup-blob stricter oci-archive:dup-blob/oci.tar
compare corrupt same oci-archive:corrupt/oci.tar
compare empty-whiteout same oci-archive:empty-whiteout/oci.tar
compare rel-workdir stricter oci-archive:rel-workdir/oci.tar
compare nested same oci:nested/oci
compare nested-archive same oci-archive:nested/oci.tar

echo "# $(printf '%-16s | %-86s | %s' class podman rootlessrt)"
for r in "${ROWS[@]}"; do echo "# $r"; done
summary podman-hostile
[ "$N_FAIL" -eq 0 ]
