#!/bin/bash
# t-full.sh: the lifecycle on a full disk (issue 12: faults injected at many points). The
# runtime's --root (and, for the desktop run, its image store) is on a small tmpfs that root
# made for the test user (root-setup/t-full.sh); the runtime runs as that user. The disk is
# filled to leave N bytes, or N inodes, for a sweep of N from nothing to what a create needs
# (plain, with --network slirp, NOTIFY_SOCKET, a --pid-file and a --log on the full disk). At every
# point: create either works or exits 1 naming what it could not write and "No space left on
# device", and then leaves nothing (state directory, process, mount, cgroup, pid file); a
# container made before the disk filled can still be started, listed, stated, killed and
# deleted, its state.json always whole; the id can be created again once there is room. An
# image unpacked onto the full store fails clearly and leaves no half layer a later run trusts
# (a layer whose files fit but whose extended attribute does not is not committed).
# Also: a --log line is whole or absent when the disk fills mid-line; spec leaves no cut
# config.json; exec [-d] whose --pid-file cannot be written leaves no process; a seccomp cache
# write that runs out only warns.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

if [ -z "${RRT_ROOT_SETUP:-}" ] || [ ! -r "$RRT_ROOT_SETUP/env" ]; then
  skip "no small filesystem to fill: ${RRT_ROOT_SETUP_SKIP:-the tests do not run as root, so the harness cannot mount one (root-setup/t-full.sh) and this user cannot}" 1
  done_testing
fi
# shellcheck source=/dev/null
source "$RRT_ROOT_SETUP/env"
FULL=$FULL_FS
if [ ! -O "$FULL" ] || [ "$(stat -f -c %T "$FULL")" != tmpfs ]; then
  skip "$FULL is not a tmpfs of $(id -un)'s: root-setup/t-full.sh did not make it" 1
  done_testing
fi
RRT_ROOT=$FULL/root
mkdir -m 0700 "$RRT_ROOT" || bail_out "cannot make $RRT_ROOT"
ENOSPC="No space left on device"

# ---------------------------------------------------------------- filling the disk

avail() { stat -f -c '%a %S' "$FULL" | awk '{print $1 * $2}'; }

unfill() { rm -rf "$FULL/fill" "$FULL/inodes"; }

fill_bytes() { # fill_bytes N: leaves N bytes free (tmpfs counts whole pages: N rounds down)
  local a
  unfill
  a=$(avail)
  [ "$a" -gt "$1" ] && fallocate -l $((a - $1)) "$FULL/fill"
}

fill_inodes() { # fill_inodes N: leaves N inodes free (and the bytes)
  unfill
  mkdir "$FULL/inodes"
  "$PY" -c '
import os, sys
d, keep = sys.argv[1], int(sys.argv[2])
st = os.statvfs(d)
for i in range(max(st.f_ffree - keep, 0)):
    try:
        os.close(os.open("%s/%d" % (d, i), os.O_CREAT | os.O_WRONLY, 0o600))
    except OSError:
        break
' "$FULL/inodes" "$1"
}

# ---------------------------------------------------------------- what a failed create leaves

# a_clear_enospc ERR: one line that names the file it could not write (a path, or a name such as
# config.json) and ends in ENOSPC.
a_clear_enospc() {
  [ "$(wc -l <<<"$1")" -eq 1 ] && [[ $1 =~ ^rootlessrt:\ .*[^\ :]*[/.][^\ :]+.*:\ $ENOSPC$ ]]
}

# lifecycle ID: start, list, state, kill, delete --force of a created container while the disk
# stays full; prints what went wrong (empty when nothing).
lifecycle() {
  local id=$1 bad="" st
  rrt start "$id" >"$T_WORK/lc.out" 2>&1 || bad+="start: $(tail -n 1 "$T_WORK/lc.out"); "
  st=$(rrt list -f json 2>/dev/null | jq -r --arg id "$id" '.[] | select(.id == $id) | .status')
  [ "$st" = running ] || bad+="list: ${st:-not listed}; "
  run rrt state "$id"
  [ "$rc" = 0 ] && [ "$(jq -r .status <<<"$out" 2>/dev/null)" = running ] || bad+="state: $rc $err; "
  jq -e . "$RRT_ROOT/$id/state.json" >/dev/null 2>&1 || bad+="state.json: not whole; "
  rrt kill "$id" KILL >"$T_WORK/lc.out" 2>&1 || bad+="kill: $(tail -n 1 "$T_WORK/lc.out"); "
  wait_status "$id" stopped 10 || bad+="kill: still $(status_of "$id"); "
  rrt delete --force "$id" >"$T_WORK/lc.out" 2>&1 || bad+="delete --force: $(tail -n 1 "$T_WORK/lc.out"); "
  printf '%s' "$bad"
}

# sweep NAME UNIT POINTS BUNDLE ARGS...: `rrt ARGS... -b BUNDLE ID` (ARGS: global flags, the
# verb create and its flags) on a disk filled to leave each of POINTS free (UNIT: bytes or
# inodes). @PIDFILE@ and @LOG@ in ARGS become a file on the full disk, one per point. The first
# container made (the one nearest the edge) goes through its lifecycle on the full disk; a
# refused id is created again once there is room. One TAP line per property, naming the points
# that broke it.
sweep() {
  local name=$1 unit=$2 points=$3 b=$4 n id left pf lf
  shift 4
  local bad_exit="" bad_left="" bad_life="" bad_again="" made=0 refused=0 msgs=""
  SWEEP_WARNINGS="" # what the creates that worked said on stderr
  for n in $points; do
    id=$(new_id full)
    pf=$FULL/$id.pid lf=$FULL/$id.log
    local -a args=("${@//@PIDFILE@/$pf}")
    args=("${args[@]//@LOG@/$lf}")
    "${SWEEP_BEFORE:-:}"
    "fill_$unit" "$n"
    run rrt "${args[@]}" -b "$b" "$id"
    if [ "$rc" = 0 ]; then
      made=$((made + 1))
      SWEEP_WARNINGS+=$err$'\n'
      if [ "$made" = 1 ]; then
        left=$(lifecycle "$id")
        [ -z "$left" ] || bad_life+=" $n($left)"
      fi
      rrt delete --force "$id" >/dev/null 2>&1
      left=$(leftovers "$id" "$b" "$pf.rrt-tmp")
    elif [ "$rc" = 1 ] && a_clear_enospc "$err"; then
      refused=$((refused + 1))
      msgs+="$n: ${err#rootlessrt: }"$'\n'
      left=$(leftovers "$id" "$b" "$pf" "$pf.rrt-tmp")
    else
      bad_exit+=" $n($rc: $err)"
      left=$(leftovers "$id" "$b" "$pf" "$pf.rrt-tmp")
    fi
    [ -z "$left" ] || bad_left+=" $n($left)"
    rrt delete --force "$id" >/dev/null 2>&1
    rm -f "$pf" "$lf"
    unfill
    if [ "$rc" != 0 ]; then
      if rrt "${args[@]}" -b "$b" "$id" >"$T_WORK/again.out" 2>&1 </dev/null; then
        rrt delete --force "$id" >/dev/null 2>&1
      else
        bad_again+=" $n($(tail -n 1 "$T_WORK/again.out"))"
        rrt delete --force "$id" >/dev/null 2>&1
      fi
      rm -f "$pf" "$lf"
    fi
  done
  diag "$name: $made made, $refused refused; the messages:" "$(sort -u -t: -k2 <<<"${msgs%$'\n'}")"
  is "${bad_exit# }" "" "$name: every create succeeds or exits 1 naming what it could not write: $ENOSPC"
  is "${bad_left# }" "" "$name: a refused create leaves no state, process, mount, cgroup or pid file"
  is "${bad_life# }" "" "$name: one made on the full disk starts, lists, states, is killed and deleted"
  is "${bad_again# }" "" "$name: with room again a refused id is created"
  ok "$name: the sweep reached both sides (refused at the low end, made at the high end)" \
    test "$refused" -gt 0 -a "$made" -gt 0
}

b=$(mkbundle full rrt-probe sleep 100)

# What a create writes on tmpfs: config.json and state.json (a page each, and state.json.tmp
# beside it until the rename), the init record and the start socket (inodes); slirp adds
# resolv.conf and a second state.json; a pid file a page and an inode. The sweeps go past that.
page=$(stat -f -c %S "$FULL")
bytes="0 $((page - 1)) $page $((2 * page)) $((3 * page)) $((4 * page))"
sweep "create, N bytes free" bytes "$bytes" "$b" create
sweep "create, N inodes free" inodes "0 1 2 3 4 5" "$b" create
sweep "create --pid-file on the full disk, N bytes free" bytes "$bytes" "$b" create --pid-file @PIDFILE@
sweep "create --pid-file on the full disk, N inodes free" inodes "0 1 2 3 4 5" "$b" create --pid-file @PIDFILE@
sweep "log on the full disk, N inodes free" inodes "0 1 5" "$b" --log @LOG@ --log-format json create
sweep "log on the full disk, N bytes free" bytes "$bytes" "$b" --log @LOG@ --log-format json --debug create
# NOTIFY_SOCKET: a relay process and notify.pid, notify.sock in the state directory. Nobody need
# listen: the relay only forwards once the container is started.
NOTIFY_SOCKET=$T_WORK/sd.sock sweep "create with NOTIFY_SOCKET, N inodes free" inodes "0 1 2 3 4 5 6 7 8" "$b" create
NOTIFY_SOCKET=$T_WORK/sd.sock sweep "create with NOTIFY_SOCKET, N bytes free" bytes "$bytes" "$b" create
# A seccomp profile: create compiles it and writes the filter to the cache beside the root
# (emptied before each point, so that every create writes it). A cache write that runs out is a
# warning; no temporary or cut cache file may stay for a later create to load.
sc=$(mkbundle seccomp rrt-probe sleep 100)
cfg "$sc" '.linux.seccomp = $p[0]' --slurpfile p "$TESTS_DIR/confine/podman-default.json" ||
  bail_out "cannot edit $sc/config.json"
CACHE=$FULL/.root.private/seccomp-cache
no_cache() { rm -rf "$CACHE"; }
SWEEP_BEFORE=no_cache sweep "create with a seccomp profile, N bytes free" bytes \
  "$bytes $((5 * page)) $((6 * page)) $((8 * page))" "$sc" create
has_line "$SWEEP_WARNINGS" "warning: seccomp cache: write .*: $ENOSPC" \
  "a create whose cache write ran out warns and goes on"
is "$(find "$FULL/.root.private" -name '*.tmp' 2>/dev/null)" "" "no temporary cache file is left"
scs=$(mkbundle seccomp-status rrt-probe status)
cfg "$scs" '.linux.seccomp = $p[0]' --slurpfile p "$TESTS_DIR/confine/podman-default.json" ||
  bail_out "cannot edit $scs/config.json"
run rrt --debug run -b "$scs" "$(new_id full)"
has_line "$out" '^Seccomp:[[:space:]]+2$' "with room again, the filter loads (from the cache or compiled anew)"
if [ -e /dev/net/tun ] && (exec 3<>/dev/net/tun) 2>/dev/null &&
  [ -x "$(dirname "$RRT")/rootlessrt-net" ]; then
  sweep "create --network slirp, N bytes free" bytes "$bytes $((5 * page))" "$b" create --network slirp
else
  skip "--network slirp: /dev/net/tun is not usable here or rootlessrt-net is missing" 5
fi

# A log whose last page has K bytes left when the disk fills: whatever line runs out there, the
# next runtime's lines must not be glued onto a torn one (conmon and podman read its JSON lines).
bad_log=""
for k in 0 1 10 40 90 150 400; do
  lf=$FULL/torn.log id=$(new_id full)
  unfill
  { head -c $((page - 1 - k)) /dev/zero | tr '\0' x && echo; } >"$lf"
  fill_bytes 0
  rrt --log "$lf" --log-format json --debug create -b "$b" "$id" >/dev/null 2>&1 </dev/null
  rrt delete --force "$id" >/dev/null 2>&1
  unfill
  rrt --log "$lf" --log-format json --debug create -b "$b" "$id" >/dev/null 2>&1 </dev/null
  rrt --log "$lf" --log-format json --debug delete --force "$id" >/dev/null 2>&1 </dev/null
  torn=$(tail -n +2 "$lf" | while IFS= read -r l; do jq -e . <<<"$l" >/dev/null 2>&1 || echo "${l:0:80}"; done)
  [ -z "$torn" ] && [ "$(wc -l <"$lf")" -gt 3 ] || bad_log+=" $k($torn)"
  rm -f "$lf"
done
is "${bad_log# }" "" "--log-format json on a disk that fills mid-line: every line in the log is whole"

# `spec` into a bundle on the full disk: a clear error and no cut config.json left, which create
# would refuse and the next spec would call existing already.
sb=$FULL/specbundle
mkdir "$sb"
for unit in bytes inodes; do
  "fill_$unit" 0
  run rrt spec --rootless -b "$sb"
  ok "spec, no ${unit%s} free: exits 1 naming config.json: $ENOSPC" \
    eval '[ "$rc" = 1 ] && a_clear_enospc "$err" && [[ $err == *config.json* ]]'
  ok "spec, no ${unit%s} free: no config.json is left" test ! -e "$sb/config.json"
  unfill
  run rrt spec --rootless -b "$sb"
  ok "spec, no ${unit%s} free: with room again spec writes it" \
    eval '[ "$rc" = 0 ] && jq -e .ociVersion "$sb/config.json"'
  rm -f "$sb/config.json"
done
rm -rf "$sb"

# exec into a running container with its --pid-file on the full disk: the process is there with
# its pid file, or exec fails clearly (255) and the process is not left running behind the error.
eid=$(new_id full)
rrt run -d -b "$b" "$eid" >/dev/null 2>&1 </dev/null
sleep_pids() { pgrep -u "$(id -u)" -f "rrt-probe sleep $tag\$"; }
bad_exec="" refused=0
for point in bytes:0 bytes:$page inodes:0 inodes:1 inodes:2; do
  for mode in -d ""; do
    tag=$((9000 + RANDOM % 999))$T_N
    ef=$FULL/exec.pid
    "fill_${point%:*}" "${point#*:}"
    if [ "$mode" = -d ]; then
      run rrt exec -d --pid-file "$ef" "$eid" rrt-probe sleep "$tag"
    else
      run rrt exec --pid-file "$ef" "$eid" rrt-probe sleep 0
    fi
    if [ "$rc" = 255 ] && a_clear_enospc "$err"; then
      refused=$((refused + 1))
      [ -e "$ef" ] || [ -e "$ef.rrt-tmp" ] && bad_exec+=" $point$mode(a pid file left)"
    elif [ "$rc" != 0 ]; then
      bad_exec+=" $point$mode($rc: $err)"
    fi
    if [ "$rc" = 255 ] && [ -n "$mode" ] && ! wait_until 5 eval '[ -z "$(sleep_pids)" ]'; then
      bad_exec+=" $point$mode(the process runs on: $(sleep_pids | tr '\n' ' '))"
    fi
    sleep_pids | xargs -r kill -KILL 2>/dev/null
    rm -f "$ef" "$ef.rrt-tmp"
    unfill
  done
done
is "${bad_exec# }" "" "exec [-d] --pid-file on the full disk: done, or refused clearly with no process left behind"
ok "the exec sweep was refused somewhere" test "$refused" -gt 0
rrt delete --force "$eid" >/dev/null 2>&1

# ---------------------------------------------------------------- made before the disk filled

# Containers made with room to spare, then the disk filled to the last byte and the last inode:
# each verb still works, and state.json stays whole and the same.
lb=$(mkbundle late rrt-probe sleep 100)
for unit in bytes inodes; do
  c1=$(new_id full) c2=$(new_id full)
  rrt create -b "$lb" "$c1" >/dev/null 2>&1 </dev/null
  rrt run -d -b "$lb" "$c2" >/dev/null 2>&1 </dev/null
  before=$(cat "$RRT_ROOT/$c1/state.json" 2>/dev/null)
  bad="" want=0
  "fill_$unit" 0
  if [ "$unit" = inodes ]; then # and the bytes: the last pages into a file that exists
    fallocate -l "$(avail)" "$FULL/inodes/0"
    want=0:0
  fi
  got=$(stat -f -c %a "$FULL")
  [ "$unit" = inodes ] && got+=:$(stat -f -c %d "$FULL")
  [ "$got" = "$want" ] || bad+="the disk is not full ($got); "
  left=$(lifecycle "$c1")
  [ -z "$left" ] || bad+="created: $left"
  run rrt state "$c2"
  [ "$rc:$(jq -r .status <<<"$out" 2>/dev/null)" = 0:running ] || bad+="state of a running one: $rc $err; "
  run rrt list -q
  [[ $'\n'$out$'\n' == *$'\n'$c2$'\n'* ]] || bad+="list: $out $err; "
  run rrt kill "$c2" KILL
  [ "$rc" = 0 ] || bad+="kill: $err; "
  wait_status "$c2" stopped 10 || bad+="after kill: $(status_of "$c2"); "
  run rrt delete "$c2"
  [ "$rc" = 0 ] || bad+="delete of a stopped one: $err; "
  is "${bad%; }" "" "full to the last ${unit%s}: a container made before starts, lists, states, is killed and deleted"
  nothing_left "$c1" "$lb" "full to the last ${unit%s}: nothing is left of either"
  unfill
  run rrt create -b "$lb" "$c1"
  is "$rc" 0 "full to the last ${unit%s}: with room again the id is created again"
  is "$(jq -c 'del(.pid, .pidStart, .created)' "$RRT_ROOT/$c1/state.json" 2>/dev/null)" \
    "$(jq -c 'del(.pid, .pidStart, .created)' <<<"$before" 2>/dev/null)" "and its state.json is what it was the first time"
  rrt delete --force "$c1" >/dev/null 2>&1
done

# ---------------------------------------------------------------- the desktop run's image store

STORE=$FULL/store
IMG=$T_WORK/img
drun() { rrt run --rm --storage "$STORE" "$@"; }
store_empty() { # every layer out of the store (its files belong to subordinate ids)
  local l
  for l in "$STORE"/layers/sha256/*; do
    [ -e "$l" ] && rrt store --storage "$STORE" rm "sha256:${l##*/}" >/dev/null 2>&1
  done
}
layer_sums() { # one line per layer in the store: its digest, a sum of its entries and xattrs
  "$PY" -c '
import hashlib, os, sys
top = sys.argv[1]
for hexd in sorted(os.listdir(top)) if os.path.isdir(top) else []:
    h, root = hashlib.sha256(), os.path.join(top, hexd)
    for d, dirs, files in os.walk(root, onerror=lambda e: h.update(str(e.errno).encode())):
        dirs.sort()
        for n in sorted(dirs + files):
            p = os.path.join(d, n)
            st = os.lstat(p)
            h.update(("%s %o %d %d:%d" % (os.path.relpath(p, root), st.st_mode, st.st_size,
                                          st.st_uid, st.st_gid)).encode())
            try:
                for x in sorted(os.listxattr(p, follow_symlinks=False)):
                    h.update(x.encode() + os.getxattr(p, x, follow_symlinks=False))
            except OSError as e:
                h.update(str(e.errno).encode())
    print(hexd, h.hexdigest())
' "$STORE/layers/sha256"
}
# what_is_left: what a run refused on the full disk may have left: a half layer being unpacked,
# an upper directory, a bundle, a state directory, a process or a mount (empty when nothing).
what_is_left() {
  local t c r p m
  t=$(ls -A "$STORE/tmp" 2>/dev/null)
  c=$(find "$STORE/containers" -mindepth 1 -maxdepth 1 ! -name .spare -printf '%f ' 2>/dev/null)
  r=$(find "$RRT_ROOT" -mindepth 1 -maxdepth 2 ! -path "$RRT_ROOT/.run" -printf '%P ' 2>/dev/null)
  p=$(procs_referencing "$FULL/")
  m=$(mounts_referencing "$FULL/")
  echo "${t:+store tmp: $t; }${c:+containers: $c; }${r:+root: $r; }${p:+processes: $p; }${m:+mounts: $m}"
}

# image_sweep NAME UNIT POINTS COLD: `run --rm oci:IMAGE` on the full disk, the store emptied
# before each point when COLD is 1 (the unpack itself runs out), kept otherwise (the run's
# bundle, upper directory and state do).
image_sweep() {
  local name=$1 unit=$2 points=$3 cold=$4 n left
  local bad_exit="" bad_left="" bad_layers="" bad_again="" made=0 refused=0 msgs=""
  for n in $points; do
    [ "$cold" = 1 ] && store_empty
    "fill_$unit" "$n"
    run drun "oci:$IMG/oci"
    if [ "$rc:$out" = "0:entry from-cmd" ]; then
      made=$((made + 1))
    elif [ "$rc" = 1 ] && a_clear_enospc "$err"; then
      refused=$((refused + 1))
      msgs+="$n: ${err#rootlessrt: }"$'\n'
    else
      bad_exit+=" $n($rc: $out $err)"
    fi
    left=$(what_is_left)
    [ -z "$left" ] || bad_left+=" $n($left)"
    # Whatever is in the store now is whole: a layer is there as a whole or not at all.
    [ -z "$(comm -23 <(layer_sums) <(echo "$want_layers"))" ] || bad_layers+=" $n($(comm -23 <(layer_sums) <(echo "$want_layers") | cut -c1-12))"
    unfill
    run drun "oci:$IMG/oci"
    [ "$rc:$out" = "0:entry from-cmd" ] && [ "$(layer_sums)" = "$want_layers" ] || bad_again+=" $n($rc: $err)"
  done
  diag "$name: $made ran, $refused refused; the messages:" "$(sort -u -t: -k2 <<<"${msgs%$'\n'}")"
  is "${bad_exit# }" "" "$name: every run succeeds or exits 1 naming what it could not write: $ENOSPC"
  is "${bad_left# }" "" "$name: a refused run leaves no half layer, upper directory, bundle, state, process or mount"
  is "${bad_layers# }" "" "$name: every layer in the store is whole"
  is "${bad_again# }" "" "$name: with room again the next run unpacks what is missing and runs"
  ok "$name: the sweep reached both sides" test "$refused" -gt 0 -a "$made" -gt 0
  IMAGE_MSGS=$msgs
}

# The test image, with a fourth layer whose one file has a 1500-byte user.* attribute (tmpfs
# charges it to the inode space): a layer whose files fit but whose attribute does not.
if ! "$PY" "$CONTRIB_DIR/mkimage.py" "$IMG" --probe "$PROBE" --xattr >"$T_WORK/mkimage.log" 2>&1; then
  diag "$(cat "$T_WORK/mkimage.log")"
  skip "contrib/mkimage.py cannot build the test image" 22
else
  unfill
  b0=$(avail) i0=$(stat -f -c %d "$FULL")
  run drun "oci:$IMG/oci"
  is "$rc:$out" "0:entry from-cmd" "the image runs with room to spare"
  want_layers=$(layer_sums)
  need=$((b0 - $(avail))) inodes=$((i0 - $(stat -f -c %d "$FULL")))
  diag "a cold run takes $need bytes and $inodes inodes of the store and root"
  image_sweep "image unpack, N bytes free" bytes \
    "0 $((need / 4)) $((need / 2)) $((need * 3 / 4)) $((need - 2 * page)) $((need + 16 * page))" 1
  # Densely near the end of the unpack: the last layer's file made, its attribute out of room.
  image_sweep "image unpack, N inodes free" inodes \
    "0 1 $((inodes / 4)) $((inodes / 2)) $(seq -s ' ' $((inodes - 20)) $((inodes - 4))) $((inodes + 2))" 1
  has_line "$IMAGE_MSGS" "noted: set user\.rrt\.note: $ENOSPC" \
    "an attribute the disk has no room for fails the unpack (the layer is not committed without it)"
  image_sweep "warm run, N bytes free" bytes "0 $page $((2 * page)) $((3 * page)) $((4 * page)) $((6 * page)) $((8 * page))" 0
  image_sweep "warm run, N inodes free" inodes "0 1 2 3 4 5 6 8 10 12 14 16 20" 0
  store_empty
fi

is "$(find "$RRT_ROOT" -mindepth 1 -maxdepth 2 ! -path "$RRT_ROOT/.run" -printf '%P ')" "" \
  "the full disk's --root holds nothing at the end"

done_testing
