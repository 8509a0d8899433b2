#!/bin/bash
# root-setup/t-trust.sh setup|teardown DIR UID GID: (root) the second user t-trust.sh needs.
# setup: makes sure the user rrt-evil exists (contrib/ensure-user.sh), starts a process of the
# test user's (the victim), and as rrt-evil plants what the attack uses: a fake container whose
# state.json names the victim's process and whose config.json has a poststop hook, reached
# through a symlink where the test user's default root would be (DIR/xdg/rootlessrt, and
# /tmp/rootlessrt-UID when nothing is there), and as an entry of a root of the test user's left
# at mode 0777; and a unix socket rrt-evil listens on. DIR/env tells the test where everything
# is. teardown: stops both processes and removes what rrt-evil planted outside DIR.
set -u
action=$1 dir=$2 uid=$3 gid=$4
here=$(cd "$(dirname "$0")" && pwd)
contrib=$here/../../../contrib

die() {
  echo "root-setup/t-trust: $*" >&2
  exit 1
}

evil() { setpriv --reuid=rrt-evil --regid=rrt-evil --init-groups --reset-env "$@"; }

teardown() {
  [ -r "$dir/pids" ] && while read -r p; do kill -KILL "$p" 2>/dev/null; done <"$dir/pids"
  local t=/tmp/rootlessrt-$uid
  if [ -L "$t" ] && [ "$(stat -c %U "$t")" = rrt-evil ]; then
    rm -f "$t"
  fi
  return 0
}

case $action in
teardown)
  teardown
  exit 0
  ;;
setup) ;;
*) die "usage: t-trust.sh setup|teardown DIR UID GID" ;;
esac

bash "$contrib/ensure-user.sh" rrt-evil >/dev/null || die "cannot make the user rrt-evil"
setpriv --reuid="$uid" --regid="$gid" --clear-groups sleep 1000 >/dev/null 2>&1 &
victim=$!
echo "$victim" >>"$dir/pids"
for _ in $(seq 200); do
  [ "$(cat "/proc/$victim/comm" 2>/dev/null)" = sleep ] && break
  sleep 0.05
done
[ "$(stat -c %u "/proc/$victim")" = "$uid" ] || die "the victim's process is not the test user's"

install -d -m 0755 -o "$uid" -g "$gid" "$dir/marks"
install -d -m 1777 "$dir/xdg"
install -d -m 0777 -o "$uid" -g "$gid" "$dir/shared"
install -d -m 0755 -o rrt-evil "$dir/evil"

# As rrt-evil, with nothing but what any user can read: the victim's pid and start time.
evil env DIR="$dir" VICTIM="$victim" bash -c '
  set -e
  umask 022
  start=$(awk "{print \$22}" "/proc/$VICTIM/stat")
  mkdir "$DIR/evil/fake"
  printf "{\"ociVersion\":\"1.0.2\",\"id\":\"fake\",\"pid\":%s,\"pidStart\":%s,\"bundle\":\"/\",\"rootfs\":\"/\",\"created\":\"2020-01-01T00:00:00Z\",\"owner\":0}" \
    "$VICTIM" "$start" >"$DIR/evil/fake/state.json"
  printf "%s" "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"},\"process\":{\"args\":[\"true\"],\"cwd\":\"/\"},\"hooks\":{\"poststop\":[{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"echo ran >$DIR/marks/hook-ran\"]}]}}" \
    >"$DIR/evil/fake/config.json"
  ln -s "$DIR/evil" "$DIR/xdg/rootlessrt"
  cp -r "$DIR/evil/fake" "$DIR/shared/fake"
' || die "rrt-evil could not plant the fake container"

tmp_plant=""
if [ ! -e "/tmp/rootlessrt-$uid" ] && [ ! -L "/tmp/rootlessrt-$uid" ] &&
  evil ln -s "$dir/evil" "/tmp/rootlessrt-$uid"; then
  tmp_plant=/tmp/rootlessrt-$uid
fi

# rrt-evil's listener: it notes whether a terminal (an fd) ever reached it.
setpriv --reuid=rrt-evil --regid=rrt-evil --init-groups --reset-env /usr/bin/python3 -c '
import array, os, socket, sys
path, got = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
s.listen(8)
while True:
    c, _ = s.accept()
    try:
        msg, anc, flags, addr = c.recvmsg(1024, socket.CMSG_SPACE(4 * 8))
        if anc:
            open(got, "w").write("got a terminal\n")
    except OSError:
        pass
    c.close()
' "$dir/evil/evil.sock" "$dir/evil/got-terminal" </dev/null >/dev/null 2>&1 &
echo $! >>"$dir/pids"
for _ in $(seq 200); do
  [ -S "$dir/evil/evil.sock" ] && break
  sleep 0.05
done
[ -S "$dir/evil/evil.sock" ] || die "rrt-evil's listener did not start"

cat >"$dir/env" <<EOF
VICTIM_PID=$victim
MARK=$dir/marks/hook-ran
EVIL_DIR=$dir/evil
XDG_PLANT=$dir/xdg
TMP_PLANT=$tmp_plant
SHARED_ROOT=$dir/shared
EVIL_SOCK=$dir/evil/evil.sock
EVIL_GOT=$dir/evil/got-terminal
EOF
chmod 0644 "$dir/env"
