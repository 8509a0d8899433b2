#!/bin/bash
# t-pidfile.sh: --pid-file is written through a temporary file beside it (PATH.rrt-tmp, renamed
# into place). Written as the attack (issue 11: no other user may steer your runtime): in a
# directory others can write (/tmp, where fs.protected_symlinks may be off), another user's
# symlink at that temporary name must not get the pid written into the file it points at (as
# root, any file), nor end up as the pid file. A create that fails leaves a file that was already
# at the pid file's path (it removed it).
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

shared=$T_WORK/shared
mkdir -m 0777 "$shared"
echo precious >"$T_WORK/victim"

b=$(mkbundle pidfile rrt-probe sleep 1000)
id=$(new_id pidfile)
ln -s "$T_WORK/victim" "$shared/c.pid.rrt-tmp"
run rrt create --pid-file "$shared/c.pid" -b "$b" "$id"
is "$rc" 0 "create --pid-file with a planted symlink at PATH.rrt-tmp"
is "$(cat "$T_WORK/victim")" precious "the file the symlink pointed at is unchanged"
ok "the pid file is a regular file, not the planted link" test -f "$shared/c.pid" -a ! -L "$shared/c.pid"
is "$(cat "$shared/c.pid" 2>/dev/null)" "$(state_field "$id" .pid)" "and holds init's pid"
ok "no temporary file is left" test ! -e "$shared/c.pid.rrt-tmp" -a ! -L "$shared/c.pid.rrt-tmp"
ok "start" rrt start "$id"

ln -s "$T_WORK/victim" "$shared/e.pid.rrt-tmp"
run rrt exec -d --pid-file "$shared/e.pid" "$id" rrt-probe sleep 1000
is "$rc" 0 "exec -d --pid-file with a planted symlink at PATH.rrt-tmp"
is "$(cat "$T_WORK/victim")" precious "exec: the file the symlink pointed at is unchanged"
ok "exec: the pid file is a regular file" test -f "$shared/e.pid" -a ! -L "$shared/e.pid"

rrt delete -f "$id" >/dev/null 2>&1
nothing_left "$id" "$b"

# A create that fails removes only a pid file it wrote: one already at that path (another
# container's, or any file the caller named) stays, as root whatever file it is.
echo 4242 >"$T_WORK/other.pid"
b_bad=$(mkbundle pidfile-bad /no/such/program)
id=$(new_id pidfile-bad)
run rrt create --pid-file "$T_WORK/other.pid" -b "$b_bad" "$id"
isnt "$rc" 0 "a create that fails (process.args[0] does not exist)"
is "$(cat "$T_WORK/other.pid" 2>/dev/null)" 4242 "leaves the file already at its --pid-file path"
nothing_left "$id" "$b_bad"
done_testing
