#!/bin/bash
# t-errors.sh: every error of the foundation exits 1 with a message naming the thing (id, JSON
# path, file), and leaves nothing behind: start of a non-created container, delete of a running
# one, duplicate and unknown ids, ids with "/" or "..", bad configs, a missing or non-executable
# process.args[0], kill with a bad signal.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

# ---------------------------------------------------------------- wrong state

b=$(mkbundle running rrt-probe sleep 100)
id=$(new_id running)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "run -d (setup)"
pid=$(state_field "$id" .pid)

run rrt start "$id"
fails_naming "$id" "start of a running container exits 1 naming the id"
is "$(status_of "$id")" running "the container still runs after the failed start"

run rrt delete "$id"
fails_naming "$id" "delete of a running container without -f exits 1 naming the id"
is "$(status_of "$id")" running "the container still runs after the refused delete"
ok "its process is alive" test -d "/proc/$pid"

run rrt create -b "$b" "$id"
fails_naming "$id" "create with an id in use exits 1 naming the id"
is "$(state_field "$id" '"\(.status) \(.pid)"')" "running $pid" "the existing container is untouched"

run rrt run -b "$b" "$id"
fails_naming "$id" "run with an id in use exits 1 naming the id"
is "$(state_field "$id" '"\(.status) \(.pid)"')" "running $pid" "the existing container is untouched (run)"

run rrt kill "$id" NOSUCHSIG
fails_naming 'NOSUCHSIG' "kill with an unknown signal name exits 1 naming it"
run rrt kill "$id" 12abc
fails_naming '12abc' "kill with a malformed signal exits 1 naming it"
run rrt kill "$id" 999
fails_naming '999' "kill with an out-of-range signal number exits 1 naming it"
is "$(status_of "$id")" running "a refused kill does not touch the container"

run rrt delete -f "$id"
is "$rc" 0 "delete -f (cleanup)"
nothing_left "$id" "$b"

b=$(mkbundle stopped rrt-probe exit 0)
id=$(new_id stopped)
run rrt create -b "$b" "$id"
run rrt start "$id"
wait_status "$id" stopped 10
run rrt start "$id"
fails_naming "$id" "start of a stopped container exits 1 naming the id"
run rrt delete "$id"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- ids

unknown=no-such-$$
for verb in state start delete kill; do
  run rrt "$verb" "$unknown"
  fails_naming "$unknown" "$verb of an unknown id exits 1 naming the id"
done

b=$(mkbundle badid rrt-probe exit 0)
for bad in "a/b" ".." "../escape-$$" "x/../y" "."; do
  run rrt create -b "$b" "$bad"
  if [ "$rc" -eq 1 ] && [[ $err == *"$bad"* ]]; then
    pass "create with id '$bad' exits 1 naming it"
  else
    fail "create with id '$bad' exits 1 naming it" "exit status: $rc" "stderr: $err"
  fi
  run rrt run -b "$b" "$bad"
  is "$rc" 1 "run with id '$bad' exits 1"
  run rrt state "$bad"
  is "$rc" 1 "state with id '$bad' exits 1"
done
ok "no state escaped --root through an id" test ! -e "$RRT_ROOT/../escape-$$" -a ! -e "$RRT_ROOT/../y"
run rrt create -b "$b" ""
is "$rc" 1 "create with an empty id exits 1"
nothing_left "a/b" "$b" "nothing left behind by the invalid ids"

# ---------------------------------------------------------------- bad configs

config_error() { # config_error NAME JQ-FILTER ERE: a config edited by FILTER fails, naming ERE
  local name=$1 filter=$2 re=$3 b id slug
  slug=cfg-$(tr -c 'a-zA-Z0-9.\n' - <<<"$name")
  b=$(mkbundle "$slug" rrt-probe exit 0)
  cfg "$b" "$filter"
  id=$(new_id "$slug")
  run rrt create -b "$b" "$id"
  fails_naming "$re" "create with $name exits 1 naming $re"
  [ "$rc" -eq 0 ] && rrt delete -f "$id" >/dev/null 2>&1 # not to blame the next check on it
  nothing_left "$id" "$b"
  id=$(new_id "$slug")
  run rrt run -b "$b" "$id"
  fails_naming "$re" "run with $name exits 1 naming $re"
  nothing_left "$id" "$b"
}
config_error "no process.args" 'del(.process.args)' 'process\.args'
config_error "process.args not an array" '.process.args = "rrt-probe"' 'process\.args'
config_error "process.args with a number" '.process.args = ["rrt-probe", 3]' 'process\.args'
config_error "no root" 'del(.root)' 'root'
config_error "root.path missing on disk" '.root.path = "no-such-rootfs"' 'no-such-rootfs'
config_error "ociVersion not a string" '.ociVersion = 1' 'ociVersion'
config_error "a namespace of unknown type" '.linux.namespaces += [{"type": "bogus"}]' 'bogus'
config_error "a mount without destination" '.mounts += [{"type": "tmpfs", "source": "tmpfs"}]' \
  'mounts.*destination|destination'
config_error "process.cwd relative" '.process.cwd = "relative/dir"' 'process\.cwd|relative/dir'

b=$(mkbundle invalid-json rrt-probe exit 0)
printf '{ "ociVersion": "1.3.0", "process": ' >"$b/config.json"
id=$(new_id json)
run rrt create -b "$b" "$id"
fails_naming 'config\.json' "create with invalid JSON exits 1 naming config.json"
nothing_left "$id" "$b"

b=$(mkbundle no-config rrt-probe exit 0)
rm -f "$b/config.json"
id=$(new_id noconfig)
run rrt create -b "$b" "$id"
fails_naming 'config\.json' "create in a bundle without config.json exits 1 naming config.json"
nothing_left "$id" "$b"

id=$(new_id nobundle)
run rrt create -b "$T_WORK/no-such-bundle" "$id"
fails_naming 'no-such-bundle' "create with a missing bundle dir exits 1 naming it"

# ---------------------------------------------------------------- process.args[0]

# The exec failure reaches the user: from start (or already from create) for create+start, from
# run; with the path and the errno; nothing is left once the container is gone.
exec_error() { # exec_error NAME ARG0 ERE
  local name=$1 arg0=$2 re=$3 b id slug
  slug=exec-$(tr -c 'a-zA-Z0-9.\n' - <<<"$name")
  b=$(mkbundle "$slug" "$arg0")
  id=$(new_id "$slug")
  run rrt run -b "$b" "$id"
  if [ "$rc" -ne 0 ] && [[ $err =~ $re ]]; then
    pass "run with $name fails naming $arg0"
  else
    fail "run with $name fails naming $arg0" "exit status: $rc" "stderr: $err" "expected: $re"
  fi
  nothing_left "$id" "$b"
  id=$(new_id "$slug")
  run rrt create -b "$b" "$id"
  if [ "$rc" -ne 0 ]; then
    fails_naming "$re" "create+start with $name: create fails naming $arg0"
  else
    run rrt start "$id"
    fails_naming "$re" "create+start with $name: start exits 1 naming $arg0"
    run rrt delete -f "$id"
  fi
  nothing_left "$id" "$b"
}
exec_error "a missing binary" /bin/no-such-binary '/bin/no-such-binary.*([Nn]o such file|ENOENT)'
exec_error "a missing command (PATH search)" no-such-command 'no-such-command'
exec_error "a non-executable file" /etc/passwd '/etc/passwd.*([Pp]ermission denied|EACCES)'

# What engines parse: the docker CLI exits 127 on "no such file or directory" or "executable file
# not found", 126 on "permission denied" (case-sensitive, runc's words); podman's 126 and 127
# come from the same texts. Like runc and crun, create is what fails: podman reports a failed
# start as "`start` failed", not as the cause. Nothing is left behind.
create_refuses() { # create_refuses NAME TEXT ARG0 [JQ-FILTER]
  local name=$1 text=$2 arg0=$3 filter=${4:-.} b id slug
  slug=cr-$(tr -c 'a-zA-Z0-9.\n' - <<<"$name")
  b=$(mkbundle "$slug" "$arg0")
  cfg "$b" "$filter" --arg b "$b" || bail_out "cannot edit $b/config.json"
  [ -d "$b/vol" ] || mkdir "$b/vol"
  printf '#!/bin/sh\necho ran\n' >"$b/vol/script.sh" && chmod 0755 "$b/vol/script.sh"
  printf '#!/bin/sh\necho ran\n' >"$b/rootfs/bin/owner-only" && chmod 0700 "$b/rootfs/bin/owner-only"
  id=$(new_id "$slug")
  run rrt create -b "$b" "$id"
  if [ "$rc" -eq 1 ] && [[ $err == *"$text"* ]]; then
    pass "create with $name exits 1 saying: $text"
  else
    fail "create with $name exits 1 saying: $text" "exit status: $rc" "stderr: $err"
    rrt delete -f "$id" >/dev/null 2>&1
  fi
  nothing_left "$id" "$b"
}
create_refuses "a missing binary" 'exec: "/no/such": stat /no/such: no such file or directory' \
  /no/such
create_refuses "a missing command" 'exec: "no-such-cmd": executable file not found in $PATH' \
  no-such-cmd
create_refuses "a directory" 'exec: "/etc": permission denied' /etc
create_refuses "a file without execute bits" 'exec: "/etc/passwd": permission denied' /etc/passwd
create_refuses "a script on a noexec volume" 'exec: "/vol/script.sh": permission denied' \
  /vol/script.sh '.mounts += [{destination: "/vol", type: "bind", source: ($b + "/vol"),
    options: ["bind", "noexec"]}]'
read -r su_start su_count <<<"$(subid_range /etc/subuid)"
read -r sg_start sg_count <<<"$(subid_range /etc/subgid)"
if [ "${su_count:-0}" -lt 1001 ] || [ "${sg_count:-0}" -lt 1001 ] || [ -z "${su_start:-}" ] ||
  [ -z "${sg_start:-}" ]; then
  skip "no subuid/subgid range of 1001+ ids for $(id -un): process.user uid 1000 needs one" 2
else
  create_refuses "a file only its owner may execute, as uid 1000" \
    'exec: "/bin/owner-only": permission denied' /bin/owner-only \
    '.process.user = {uid: 1000, gid: 1000}'
  # In PATH, a file the process user may not execute is passed over, as runc does.
  create_refuses "a PATH entry only its owner may execute, as uid 1000" \
    'exec: "owner-only": executable file not found in $PATH' owner-only \
    '.process.user = {uid: 1000, gid: 1000}'
fi

done_testing
