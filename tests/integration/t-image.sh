#!/bin/bash
# t-image.sh: the desktop `run` on a root directory: a copy-on-write overlay root (the base is
# never modified, --rm leaves nothing), podman-like flags on a generated config, the store verb,
# and overlay mounts in a config.json of the runc form (on / and elsewhere).
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

use_store

base=$(mkbundle base true)/rootfs
echo base >"$base/etc/motd"
printf 'alice:x:1000:1000::/home/alice:/bin/sh\n' >>"$base/etc/passwd"
printf 'staff:x:50:\n' >>"$base/etc/group"
snapshot() { (cd "$base" && find . -printf '%p %m %s %T@\n' | sort | md5sum); }
before=$(snapshot)

# ---------------------------------------------------------------- the root directory form

run drun --rm "$base" sh -c 'echo changed >/etc/motd; echo new >/new; rm /bin/rrt-probe; cat /etc/motd /new; test -e /bin/rrt-probe || echo gone'
is "$rc:$out" "0:changed
new
gone" "run --rm ./rootfs CMD: writes, a new file and a removed file inside"
is "$(snapshot)" "$before" "the root directory is not modified"
is "$(ls "$STORE/containers" 2>/dev/null)" "" "--rm leaves no upper directory"
run drun --rm "$base" true
spare_files=$(find "$STORE/containers/.spare" -mindepth 3 ! -path '*/work/work' 2>/dev/null)
ok "an unwritten upper directory is kept as an empty spare for the next run" \
  test -d "$STORE/containers/.spare/0/upper" -a -z "$spare_files"
run drun --rm "$base" sh -c 'ls -A /tmp; echo x >/tmp/x'
is "$rc:$out" "0:" "the next run starts from it with nothing of the last one"
is "$(ls -A "$RRT_ROOT/.run" 2>/dev/null)" "" "--rm leaves no generated bundle"
ok "--rm leaves no mount" test -z "$(mounts_referencing "$STORE")"

run drun --rm "$base" stat -c '%u %g' /etc/motd
is "$rc:$out" "0:0 0" "the caller's files are root's inside"

run rrt run --rm --storage "$STORE" "$base" rrt-probe exit 7
is "$rc" 7 "the container's exit status is run's"

cd "$T_WORK" || bail_out "cd $T_WORK"
run drun --rm ./base/rootfs cat /etc/motd
cd - >/dev/null || bail_out "cd back" # the cleanup kills what has its cwd in T_WORK
is "$rc:$out" "0:base" "a relative ./rootfs works (a '/' makes it the desktop form)"

# ---------------------------------------------------------------- flags

printf 'FROM_FILE=1\n# a comment\nOVER=file\n' >"$T_WORK/envfile"
run drun --rm -e OVER=flag --env-file "$T_WORK/envfile" -e PLAIN=x -w /etc --hostname box \
  "$base" sh -c 'echo $FROM_FILE $OVER $PLAIN; pwd; hostname'
is "$rc:$out" "0:1 flag x
/etc
box" "-e, --env-file (-e wins), -w, --hostname"

run drun --rm -u alice "$base" id
is "$rc:$out" "0:uid=1000(alice) gid=1000" "-u NAME: the image's /etc/passwd"
run drun --rm -u 1000:staff "$base" id -g
is "$rc:$out" "0:50" "-u UID:GROUP: the image's /etc/group"
run drun --rm -u nosuch "$base" true
like "$rc:$err" "^1:.*user \"nosuch\": not in the image's /etc/passwd" "-u with an unknown name"

mkdir -p "$T_WORK/vol" && echo in-volume >"$T_WORK/vol/f"
run drun --rm -v "$T_WORK/vol:/mnt/v" "$base" sh -c 'cat /mnt/v/f; echo w >/mnt/v/w'
is "$rc:$out:$(cat "$T_WORK/vol/w" 2>/dev/null)" "0:in-volume:w" "-v SRC:DST: a read-write bind"
run drun --rm -v "$T_WORK/vol:/mnt/v:ro" "$base" rrt-probe write /mnt/v/x y
is "$out" EROFS "-v SRC:DST:ro is read-only"
run drun --rm -v "relative-nope:/x" "$base" true
like "$rc:$err" "^1:.*-v \"relative-nope:/x\": source" "-v with a missing source is an error"

run drun --rm --read-only --tmpfs /scratch "$base" sh -c 'rrt-probe write /x y; rrt-probe write /scratch/x y'
is "$out" "EROFS
ok" "--read-only root, --tmpfs DST writable"

run drun --rm --entrypoint echo "$base" a b
is "$rc:$out" "0:a b" "--entrypoint replaces the entrypoint, the command its arguments"

run drun --rm --cap-drop all --cap-add NET_RAW "$base" sh -c 'grep CapEff /proc/self/status'
is "$rc:$out" "0:CapEff:	0000000000002000" "--cap-drop all --cap-add NET_RAW"
run drun --rm "$base" sh -c 'grep -E "^(CapEff|NoNewPrivs)" /proc/self/status'
is "$out" "CapEff:	00000000800405fb
NoNewPrivs:	0" "podman's default capabilities, no_new_privs off"
run drun --rm --security-opt no-new-privileges "$base" sh -c 'grep NoNewPrivs /proc/self/status'
is "$out" "NoNewPrivs:	1" "--security-opt no-new-privileges"
run drun --rm --security-opt bogus "$base" true
like "$rc:$err" "^1:.*--security-opt \"bogus\": unknown" "an unknown --security-opt is an error"

if [ -n "$(subid_range /etc/subuid)" ]; then
  run drun --rm --userns keep-id "$base" sh -c 'id -u; stat -c %u /etc/motd'
  is "$rc:$out" "0:$(id -u)
$(id -u)" "--userns keep-id: the caller's uid inside; its files are its own"
else
  skip "no subordinate ids for $(id -un): --userns keep-id needs them"
fi

run drun --rm --print-config "$base" echo hi
config=$out
ok "--print-config prints a config valid against the spec's schema" valid_against config-schema.json "$config"
is "$(jq -r '.mounts[0].type + " " + .mounts[0].destination' <<<"$config")" "overlay /" \
  "the generated config: an overlay mount on /"
is "$(ls "$STORE/containers" 2>/dev/null)" "" "--print-config runs nothing and keeps nothing"

# ---------------------------------------------------------------- two at once, -d, kept changes

a=$(new_id a)
b=$(new_id b)
run drun -d --rm --name "$a" "$base" sh -c 'echo A >/who; sleep 60'
is "$rc:$out" "0:$a" "-d prints the id"
run drun -d --rm --name "$b" "$base" sh -c 'echo B >/who; sleep 60'
wait_until 10 rrt exec "$a" test -e /who
wait_until 10 rrt exec "$b" test -e /who
run rrt exec "$a" cat /who
is "$out" A "two containers from one base run at once, each with its own changes"
run rrt exec "$b" cat /who
is "$out" B "... and the other one"
rrt delete -f "$a" >/dev/null 2>&1
rrt delete -f "$b" >/dev/null 2>&1
is "$(ls "$STORE/containers" 2>/dev/null)" "" "delete of a -d --rm container removes its upper"
nothing_left "$a" "$STORE/containers/$a"

k=$(new_id keep)
run drun --name "$k" "$base" sh -c 'echo kept >/kept'
is "$rc" 0 "without --rm"
is "$(cat "$STORE/containers/$k/upper/kept" 2>/dev/null)" kept "the changes persist in the store"
run drun --name "$k" "$base" true
like "$rc:$err" "^1:.*changes of a container named \"$k\" are kept in" "the name is taken until they are removed"
run rrt store --storage "$STORE" ls
has_line "$out" "^container +$k +[0-9.]+ (B|KiB)" "store ls lists them with a size"
run rrt store --storage "$STORE" rm "$k"
is "$rc:$(ls "$STORE/containers")" "0:" "store rm removes them"
run rrt store --storage "$STORE" rm "$k"
like "$rc:$err" "^1:.*nothing named \"$k\"" "store rm of an unknown name"

# ---------------------------------------------------------------- errors leave nothing

run drun --rm "$T_WORK/no-such-dir" true
like "$rc:$err" "^1:.*no-such-dir: No such file or directory" "a missing root directory"
run drun --rm "$T_WORK/envfile" true
like "$rc:$err" "^1:.*is not a root directory" "a file is not a root directory"
run drun --rm "$base" /no/such/program
is "$rc" 127 "a missing program fails create, with podman's status 127"
is "$(ls "$STORE/containers" 2>/dev/null):$(ls -A "$RRT_ROOT/.run" 2>/dev/null)" ":" \
  "failed runs leave no upper directory and no bundle"

# The runc form is untouched: an id (no '/') with -b.
b=$(mkbundle runc-form echo runc)
run rrt run -b "$b" "$(new_id)"
is "$rc:$out" "0:runc" "run -b DIR ID stays the runc form"

# ---------------------------------------------------------------- overlay mounts in config.json

b=$(mkbundle ov-root sh -c 'echo x >/written; cat /etc/motd; ls /data')
mv "$b/rootfs" "$b/lower" && mkdir -p "$b/rootfs" "$b/upper" "$b/work" "$b/dlow/data" "$b/dup" "$b/dwork"
echo dl >"$b/dlow/data/from-lower"
echo base >"$b/lower/etc/motd"
cfg "$b" '.root.readonly = false | .mounts = [{destination: "/", type: "overlay", source: "overlay",
  options: ["lowerdir=lower", "upperdir=upper", "workdir=work"]}] + .mounts +
  [{destination: "/data", type: "overlay", source: "overlay",
  options: ["lowerdir=dlow/data", "upperdir=dup", "workdir=dwork"]}]'
run rrt run -b "$b" "$(new_id)"
is "$rc:$out" "0:base
from-lower" "config.json: an overlay on / and on /data (relative paths against the bundle)"
ok "the write went to the upper directory" test -e "$b/upper/written"
ok "... not to the lower one" test ! -e "$b/lower/written"

done_testing
