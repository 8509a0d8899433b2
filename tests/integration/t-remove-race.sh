#!/bin/bash
# t-remove-race.sh: `run --rm` and `delete` of a desktop run remove the container's upper
# directory while a process with the container's ids swaps its directories for symlinks to a
# canary directory of the user's (the way a process that outlived init would): at a sweep of
# timings, the canary is untouched and the upper directory is gone; a mount inside the upper
# directory is not crossed.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

use_store

base=$(mkbundle base true)/rootfs
canary=$T_WORK/canary
DIRS=6
FILES=12

# The user's own files, with the very names the container makes (what a removal by path would
# delete through a swapped-in symlink).
make_canary() {
  rm -rf "$canary"
  mkdir -p "$canary/sub"
  for f in $(seq 0 $((FILES - 1))); do echo mine >"$canary/f$f"; done
  echo mine >"$canary/sub/f"
}
canary_ok() {
  [ "$(find "$canary" -type f | wc -l)" -eq $((FILES + 1)) ] &&
    [ "$(cat "$canary/f0" "$canary/sub/f")" = "mine
mine" ]
}

# The container's script: DIRS directories of FILES files and a sub/ each, then a mark.
fill='for d in $(seq 0 '$((DIRS - 1))'); do mkdir -p /big/d$d/sub; for f in $(seq 0 '$((FILES - 1))'); do echo x >/big/d$d/f$f; done; echo x >/big/d$d/sub/f; done; touch /big/ready'

# swapper UPPER DELAY: once UPPER/big/ready is there, waits DELAY seconds, then for at most 2 s
# (or until UPPER is gone) turns each directory of UPPER/big (and its sub/) into a symlink to the
# canary and back, moving the real one aside; only real directories are moved, so what it does
# ends once the removal has them. Prints the number of swaps.
swapper() {
  "$PY" - "$1" "$canary" "$2" <<'EOF'
import os, stat, sys, time
upper, canary, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
big = os.path.join(upper, "big")
end = time.time() + 60
while not os.path.exists(os.path.join(big, "ready")):
    if time.time() > end or not os.path.lexists(os.path.dirname(upper)):
        print(0)
        sys.exit(0)
    time.sleep(0.0005)
time.sleep(delay)
swaps = 0
end = time.time() + 2
def swap(dfd, name, target):
    # Relative to a directory fd opened without following links: the swapper itself must never
    # act inside the canary through a link it made.
    global swaps
    aside = name + ".aside"
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            os.rename(name, aside, src_dir_fd=dfd, dst_dir_fd=dfd)
            os.symlink(target, name, dir_fd=dfd)
            swaps += 1
        elif stat.S_ISLNK(st.st_mode):
            if stat.S_ISDIR(os.stat(aside, dir_fd=dfd, follow_symlinks=False).st_mode):
                os.unlink(name, dir_fd=dfd)
                os.rename(aside, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError:
        pass
def opendir(name, dfd=None):
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
    except OSError:
        return -1
while time.time() < end and os.path.lexists(upper):
    bfd = opendir(big)
    if bfd < 0:
        break
    for n in range(int(os.environ.get("DIRS", "6"))):
        name = "d%d" % n
        dfd = opendir(name, bfd)
        if dfd >= 0:
            swap(dfd, "sub", os.path.join(canary, "sub"))
            os.close(dfd)
        swap(bfd, name, canary)
    os.close(bfd)
print(swaps)
EOF
}

# ---------------------------------------------------------------- run --rm

make_canary
bad=0 left=0 swapped=0 runs=0 first_bad=""
for delay in 0 0.001 0.002 0.004 0.006 0.008 0.012 0.016 0.025 0.04 0.06 0.1; do
  id=$(new_id rmrace)
  upper=$STORE/containers/$id/upper
  DIRS=$DIRS swapper "$upper" "$delay" >"$T_WORK/swaps" &
  sw=$!
  run drun --rm --name "$id" "$base" sh -c "$fill"
  wait "$sw"
  runs=$((runs + 1))
  [ "$rc" -eq 0 ] || diag "run --rm at $delay s: exit $rc: $err"
  [ "$(cat "$T_WORK/swaps")" -gt 0 ] && swapped=$((swapped + 1))
  if ! canary_ok; then
    bad=$((bad + 1))
    [ -n "$first_bad" ] || first_bad="$delay s"
    make_canary
  fi
  [ -e "$STORE/containers/$id" ] && left=$((left + 1))
done
is "$bad" 0 "run --rm: the canary is untouched at all $runs timings${first_bad:+ (first touched at $first_bad)}"
is "$left" 0 "run --rm: the upper directory is gone at all $runs timings"
ok "the swapper swapped during some of the runs ($swapped of $runs)" test "$swapped" -gt 0

# ---------------------------------------------------------------- run -d --rm, then delete

bad=0 left=0 runs=0 first_bad=""
for delay in 0 0.002 0.005 0.01 0.02 0.05; do
  id=$(new_id rmdel)
  upper=$STORE/containers/$id/upper
  run drun -d --rm --name "$id" "$base" sh -c "$fill; sleep 600"
  [ "$rc" -eq 0 ] || diag "run -d at $delay s: exit $rc: $err"
  wait_until 20 test -e "$upper/big/ready" || diag "no $upper/big/ready"
  rrt kill "$id" KILL >/dev/null 2>&1
  wait_status "$id" stopped 20 || diag "$id did not stop"
  DIRS=$DIRS swapper "$upper" "$delay" >"$T_WORK/swaps" &
  sw=$!
  run rrt delete "$id"
  wait "$sw"
  runs=$((runs + 1))
  [ "$rc" -eq 0 ] || diag "delete at $delay s: exit $rc: $err"
  if ! canary_ok; then
    bad=$((bad + 1))
    [ -n "$first_bad" ] || first_bad="$delay s"
    make_canary
  fi
  [ -e "$STORE/containers/$id" ] && left=$((left + 1))
done
is "$bad" 0 "delete: the canary is untouched at all $runs timings${first_bad:+ (first touched at $first_bad)}"
is "$left" 0 "delete: the upper directory is gone at all $runs timings"

# ---------------------------------------------------------------- a mount inside is not crossed

# A kept container's upper directory with a directory of the user's bind-mounted inside it (in a
# mount namespace of the user's own, which `store rm` is then run in): the mount is not entered.
id=$(new_id rmmount)
run drun --name "$id" "$base" sh -c 'mkdir -p /m/inside /keep; echo x >/keep/f'
is "$rc" 0 "a kept container for the mount case"
make_canary
upper=$STORE/containers/$id/upper
out=$(unshare -rm --map-auto sh -c '
  mount --bind "$1" "$2/m/inside" || exit 9
  '"$(printf '%q' "$RRT")"' --root "$3" store --storage "$4" rm "$5" >/dev/null 2>"$6"; echo "rc=$?"
  ls "$2/m/inside" | wc -l' sh "$canary" "$upper" "$RRT_ROOT" "$STORE" "$id" "$T_WORK/mount-err" 2>&1)
if [ "${out%%$'\n'*}" = "" ] || [[ $out == *"exit 9"* ]]; then
  skip "cannot bind-mount in a user namespace here: $out" 3
else
  like "$out" "rc=1" "store rm: an error while a mount is inside the container's directory"
  like "$(cat "$T_WORK/mount-err")" "m/inside: a mount point: not crossed" "the error names the mount point"
  ok "the mounted directory's files are untouched" canary_ok
fi
unshare -r --map-auto rm -rf "$STORE/containers/$id" 2>/dev/null

done_testing
