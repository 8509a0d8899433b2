#!/bin/bash
# t-trust.sh: no other user may steer the runtime (issue 11, items 8-10). A state root that is a
# symlink, another user's, or writable by others is refused by every verb; so is an entry of a
# root that is not a real directory of the caller's, and a state.json or config.json that is not
# the caller's regular file. Written as the attack: a fake container whose state names one of
# the victim's processes and whose config has a poststop hook; the victim's process survives and
# the hook never runs. A hook another user could replace is warned about; a console socket
# another user listens on is refused. As root the harness adds a second user, rrt-evil
# (root-setup/t-trust.sh), who plants the roots; without it the same-user checks still run.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

b=$(mkbundle trust rrt-probe sleep 100)
cfg "$b" '.process.terminal = false' || bail_out "cannot edit the bundle"

# plant_fake DIR ID PID MARK: a fake container DIR/ID whose state names PID and whose config
# has a poststop hook that creates MARK.
plant_fake() {
  local dir=$1/$2 start
  start=$(awk '{print $22}' "/proc/$3/stat")
  mkdir -p "$dir" && chmod 0700 "$dir" || return 1
  jq -n --arg id "$2" --argjson pid "$3" --argjson st "$start" --arg b "$b" \
    '{id: $id, pid: $pid, pidStart: $st, bundle: $b, rootfs: ($b + "/rootfs"), owner: 0,
      created: "2020-01-01T00:00:00Z"}' >"$dir/state.json" || return 1
  jq --arg m "$4" '.hooks.poststop = [{path: "/bin/sh", args: ["sh", "-c", "echo ran >" + $m]}]' \
    "$b/config.json" >"$dir/config.json"
}

# every_verb NAME ERE ROOT-ARGS...: each verb on the fake container "fake" exits 1 (exec 255)
# with a message matching ERE; the victim lives on and the hook does not run.
every_verb() {
  local name=$1 ere=$2 v
  shift 2
  local -a verbs=("list" "state fake" "kill fake KILL" "kill --all fake KILL" "delete fake"
    "delete --force fake" "start fake" "exec fake true" "ps fake" "pause fake" "resume fake"
    "update --resources $T_WORK/res.json fake" "create -b $b fake2" "run -b $b fake3")
  for v in "${verbs[@]}"; do
    # shellcheck disable=SC2086 # the verb's words
    run timeout -k 5 "$RRT_CMD_TIMEOUT" "$@" $v
    FAIL_RC=$([ "${v%% *}" = exec ] && echo 255 || echo 1) fails_naming "$ere" "$name: $v is refused, saying why"
  done
  ok "$name: the victim's process survived" kill -0 "$victim"
  ok "$name: the planted poststop hook did not run" test ! -e "$mark"
}

echo '{"pids": {"limit": 10}}' >"$T_WORK/res.json"
sleep 1000 >/dev/null 2>&1 &
victim=$!
own_victim=$victim
mark=$T_WORK/hook-ran

# ---------------------------------------------------------------- a symlinked root (same user)

mkdir -p "$T_WORK/elsewhere" && chmod 0700 "$T_WORK/elsewhere"
plant_fake "$T_WORK/elsewhere" fake "$victim" "$mark" || bail_out "cannot plant a fake container"
ln -s "$T_WORK/elsewhere" "$T_WORK/linkroot"
every_verb "--root symlink" 'state root .*linkroot is a symbolic link.*rm ' \
  "$RRT" --root "$T_WORK/linkroot"
ok "the planted root is left as it was" test -e "$T_WORK/elsewhere/fake/state.json"

mkdir -m 1777 "$T_WORK/xdg"
ln -s "$T_WORK/elsewhere" "$T_WORK/xdg/rootlessrt"
every_verb "default root (XDG_RUNTIME_DIR/rootlessrt) symlink" \
  'state root .*/xdg/rootlessrt is a symbolic link' env XDG_RUNTIME_DIR="$T_WORK/xdg" "$RRT"

# ---------------------------------------------------------------- roots others can write

mkdir "$T_WORK/wroot"
plant_fake "$T_WORK/wroot" fake "$victim" "$mark" || bail_out "cannot plant a fake container"
chmod 0777 "$T_WORK/wroot"
every_verb "a root of mode 0777" 'writable by others \(mode 0777\).*chmod go-w' \
  "$RRT" --root "$T_WORK/wroot"
chmod 0770 "$T_WORK/wroot"
run "$RRT" --root "$T_WORK/wroot" list
fails_naming 'writable by others \(mode 0770\)' "a group-writable root (0770) is refused too"
chmod 0700 "$T_WORK/wroot"
mkdir -m 0777 "$T_WORK/open" && mkdir -m 0700 "$T_WORK/open/root"
run "$RRT" --root "$T_WORK/open/root" list
fails_naming 'directory .*/open above it is writable by others' \
  "a root in a directory anyone can write (not sticky) is refused"

# ---------------------------------------------------------------- entries of a good root

eroot=$T_WORK/eroot
mkdir -m 0700 "$eroot"
ln -s "$T_WORK/elsewhere/fake" "$eroot/fake"
run "$RRT" --root "$eroot" kill fake KILL
fails_naming 'eroot/fake is a symbolic link, not a container directory' \
  "an entry that is a symlink is refused (kill)"
run "$RRT" --root "$eroot" delete --force fake
fails_naming 'eroot/fake is a symbolic link' "and by delete --force"
run "$RRT" --root "$eroot" list
is "$rc" 0 "list with an untrusted entry still lists"
has_line "$err" 'warning: .*eroot/fake is a symbolic link' "and warns about it"
unlike "$out" 'fake' "without showing it as a container"
rm "$eroot/fake"
mkdir -m 0700 "$eroot/fake"
ln -s "$T_WORK/elsewhere/fake/state.json" "$eroot/fake/state.json"
cp "$T_WORK/elsewhere/fake/config.json" "$eroot/fake/config.json"
run "$RRT" --root "$eroot" delete --force fake
fails_naming 'state.json is a symbolic link' "a state.json that is a symlink is refused"
rm "$eroot/fake/state.json"
cp "$T_WORK/elsewhere/fake/state.json" "$eroot/fake/state.json"
chmod 0666 "$eroot/fake/state.json"
run "$RRT" --root "$eroot" kill fake KILL
fails_naming 'state.json is writable by others' "a state.json others can write is refused"
chmod 0600 "$eroot/fake/state.json"
chmod 0777 "$eroot/fake"
run "$RRT" --root "$eroot" state fake
fails_naming 'eroot/fake is writable by others' "a container directory others can write is refused"
ok "the victim survived all of it" kill -0 "$victim"
ok "no planted hook ran" test ! -e "$mark"
rm -rf "${eroot:?}/fake" "$T_WORK/elsewhere/fake"

# ---------------------------------------------------------------- hooks others could replace

mkdir -m 0777 "$T_WORK/openhooks" && mkdir -m 0755 "$T_WORK/myhooks"
printf '#!/bin/sh\ncat >/dev/null\n' >"$T_WORK/openhooks/h.sh"
cp "$T_WORK/openhooks/h.sh" "$T_WORK/myhooks/h.sh"
chmod 0755 "$T_WORK/openhooks/h.sh" "$T_WORK/myhooks/h.sh"
hb=$(mkbundle trusthooks true)
cfg "$hb" '.hooks = {createRuntime: [{path: $o}], poststop: [{path: $m}]}' \
  --arg o "$T_WORK/openhooks/h.sh" --arg m "$T_WORK/myhooks/h.sh"
id=$(new_id hooks)
run rrt --log "$T_WORK/hooks.log" run -b "$hb" "$id"
is "$rc" 0 "run with a hook in a directory anyone can write still runs"
log=$(cat "$T_WORK/hooks.log" 2>/dev/null)
has_line "$log$err" 'createRuntime hook #0 .*openhooks.*writable by someone other than you' \
  "a warning names the hook and the directory others can write"
no_line "$log$err" 'poststop hook #0 .*writable by someone other' \
  "a hook only the caller can change gets no warning"
nothing_left "$id" "$hb"

# ---------------------------------------------------------------- a second user (as root)

if [ -z "${RRT_ROOT_SETUP:-}" ] || [ ! -r "$RRT_ROOT_SETUP/env" ]; then
  skip "no second user: ${RRT_ROOT_SETUP_SKIP:-the tests do not run as root, so the harness cannot make rrt-evil}" 39
else
  # shellcheck disable=SC1091 # written by root-setup/t-trust.sh
  source "$RRT_ROOT_SETUP/env"
  victim=$VICTIM_PID
  mark=$MARK
  ok "rrt-evil's fake container names our process (as the attack needs)" \
    test "$(jq -r .pid "$EVIL_DIR/fake/state.json")" = "$victim"
  every_verb "rrt-evil's symlink as XDG_RUNTIME_DIR/rootlessrt" \
    'is a symbolic link \(to .*, made by rrt-evil' env XDG_RUNTIME_DIR="$XDG_PLANT" "$RRT"
  if [ -n "$TMP_PLANT" ] && [ ! -d "/run/user/$(id -u)" ]; then
    run env -u XDG_RUNTIME_DIR "$RRT" list
    fails_naming "state root $TMP_PLANT is a symbolic link .*made by rrt-evil" \
      "the default root /tmp/rootlessrt-UID planted by rrt-evil: list refuses"
    run env -u XDG_RUNTIME_DIR "$RRT" delete --force fake
    fails_naming "state root $TMP_PLANT is a symbolic link" "delete --force refuses"
    run env -u XDG_RUNTIME_DIR "$RRT" kill fake KILL
    fails_naming "state root $TMP_PLANT is a symbolic link" "kill refuses"
  else
    skip "/tmp/rootlessrt-$(id -u) was not planted (it existed, or /run/user/$(id -u) is the default)" 3
  fi
  # Our own root, left 0777: rrt-evil put a container in it.
  run "$RRT" --root "$SHARED_ROOT" list
  fails_naming 'writable by others \(mode 0777\)' "our root of mode 0777 with rrt-evil's entry: refused"
  chmod 0700 "$SHARED_ROOT"
  run "$RRT" --root "$SHARED_ROOT" list
  is "$rc" 0 "once private, list lists"
  has_line "$err" "warning: .*/fake is owned by rrt-evil" "and warns about rrt-evil's entry"
  unlike "$out" 'fake' "which it does not show as a container"
  for v in "kill fake KILL" "delete fake" "delete --force fake" "state fake"; do
    # shellcheck disable=SC2086
    run "$RRT" --root "$SHARED_ROOT" $v
    fails_naming "fake is owned by rrt-evil .*not by you" "rrt-evil's entry: $v is refused"
  done
  ok "the victim's process survived every verb" kill -0 "$victim"
  ok "rrt-evil's poststop hook never ran as us" test ! -e "$mark"
  ok "rrt-evil's entry is left alone" test -e "$SHARED_ROOT/fake/state.json"
  # A console socket rrt-evil listens on would get the container's terminal.
  tb=$(mkbundle trusttty rrt-probe sleep 100)
  cfg "$tb" '.process.terminal = true'
  id=$(new_id tty)
  run rrt create -b "$tb" --console-socket "$EVIL_SOCK" "$id"
  fails_naming "console-socket .*runs as rrt-evil" "create refuses rrt-evil's console socket"
  ok "rrt-evil received no terminal" test ! -e "$EVIL_GOT"
  nothing_left "$id" "$tb"
  id=$(new_id ttyexec)
  rrt run -d -b "$b" "$id" >/dev/null 2>&1 </dev/null
  run rrt exec -t --console-socket "$EVIL_SOCK" "$id" true
  exec_fails_naming "console-socket .*runs as rrt-evil" "exec -t refuses rrt-evil's console socket"
  ok "rrt-evil received no terminal from exec either" test ! -e "$EVIL_GOT"
  rrt delete -f "$id" >/dev/null 2>&1
  nothing_left "$id" "$b"
  ok "the victim is still there at the end" kill -0 "$victim"
  run "$RRT" --root "$SHARED_ROOT" list
  is "$rc" 0 "(sanity) the shared root lists again"
fi

kill "$own_victim" 2>/dev/null
done_testing
