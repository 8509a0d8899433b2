#!/bin/bash
# t-escapes.sh: the known runtime escapes, each written as the attack, which must fail and leave
# the host untouched: CVE-2019-5736 (writing the runtime through /proc/PID/exe), CVE-2024-21626
# (process.cwd into a leaked fd), CVE-2021-30465 (symlinked and racing mount destinations),
# CVE-2023-27561 (/proc or /sys a symlink), CVE-2025-31133 and CVE-2025-52565 (/dev/null and
# /dev/console replaced), CVE-2022-29162 (inheritable capabilities left set by exec). Every
# refused config must leave nothing behind: no state, no process, no mount.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

sha() { sha256sum "$1" 2>/dev/null | awk '{print $1}'; }
rrt_sha=$(sha "$RRT")

# failed_start NAME ERE ID BUNDLE [RUN-OPTIONS...]: `run` of BUNDLE as ID fails with a message
# matching ERE, and nothing of it is left.
failed_start() {
  local name=$1 ere=$2 id=$3 bundle=$4
  shift 4
  run rrt run "$@" -b "$bundle" "$id"
  isnt "$rc" 0 "$name: refused"
  like "$err" "$ere" "$name: the error says why"
  nothing_left "$id" "$bundle" "$name: nothing left behind"
  rrt delete -f "$id" >/dev/null 2>&1 # when it wrongly ran: keep the next checks clean
}

# ---------------------------------------------------------------- CVE-2019-5736

# The worst rootless case: the runtime binary belongs to the user the container's root maps to,
# so only the sealed memfd copy stands between the container and the binary.
own_rrt=$T_WORK/rootlessrt-owned
{ cp "$RRT" "$own_rrt" && chmod 0755 "$own_rrt"; } || bail_out "cannot copy the runtime"
own_sha=$(sha "$own_rrt")
orrt() { timeout -k 5 "$RRT_CMD_TIMEOUT" "$own_rrt" --root "$RRT_ROOT" "$@"; }

b=$(mkbundle exe rrt-probe wait-file /run/attack-after)
# A startContainer hook runs inside the container while init is still the runtime, blocked
# before its execve: the attacker's best moment. It tries /proc/1/exe for writing at once, and
# leaves a process holding a read-only fd on it that tries again, through /proc/self/fd, once
# init has exec'd the user process (the original exploit's path).
attack='
{ readlink /proc/1/exe; rrt-probe write /proc/1/exe PWNED; } >/run/attack-now 2>&1
(
  # From start on, init is not dumpable (confine.h, THE REACH RULE): no fd to hold at all.
  readlink /proc/1/exe >/dev/null || { printf "unreadable\nEACCES\n" >/run/attack-after; exit; }
  exec 5</proc/1/exe
  n=0
  while [ "$(readlink /proc/1/exe)" != /bin/rrt-probe ] && [ $n -lt 400 ]; do
    sleep 0.05; n=$((n + 1))
  done
  { readlink /proc/self/fd/5; rrt-probe write /proc/self/fd/5 PWNED; } >/run/attack.tmp 2>&1
  mv /run/attack.tmp /run/attack-after
) </dev/null >/dev/null 2>&1 &
'
cfg "$b" '.root.readonly = false | .hooks.startContainer = [{path: "/bin/sh", args: ["sh", "-c", $a]}]' \
  --arg a "$attack" || bail_out "cannot edit $b/config.json"
id=$(new_id exe)
run orrt create -b "$b" "$id"
is "$rc" 0 "CVE-2019-5736: create with the user-owned runtime binary"
pid=$(state_field "$id" .pid)
is "$(readlink "/proc/$pid/exe" 2>&1)" "/memfd:rootlessrt (deleted)" \
  "CVE-2019-5736: the blocked init runs from the sealed memfd, not from $own_rrt"
run "$PY" -c 'import os, sys; os.open("/proc/%s/exe" % sys.argv[1], os.O_WRONLY)' "$pid"
like "$rc:$err" '^1:.*(Text file busy|Operation not permitted|Permission denied)' \
  "CVE-2019-5736: the host side cannot open the created init's /proc/PID/exe for writing"
# The host side too holds a read-only fd, and tries to write through it once init has exec'd.
"$PY" -c '
import os, sys, time
pid, out = sys.argv[1], sys.argv[2]
fd = os.open("/proc/%s/exe" % pid, os.O_RDONLY)
deadline = time.time() + 20
while time.time() < deadline:
    try:
        if "memfd" not in os.readlink("/proc/%s/exe" % pid):
            break
    except OSError:
        break
    time.sleep(0.02)
try:
    w = os.open("/proc/self/fd/%d" % fd, os.O_WRONLY)
    os.write(w, b"PWNED")
    r = "ok"
except OSError as e:
    r = e.strerror
open(out, "w").write(r + "\n")
' "$pid" "$T_WORK/host-attack" &
host_attacker=$!
sleep 0.2
run orrt start "$id"
is "$rc" 0 "CVE-2019-5736: start (the hook attacks)"
[ "$rc" = 0 ] || diag "$err"
wait_status "$id" stopped 20
wait_pid "$host_attacker" 25
now=$(cat "$b/rootfs/run/attack-now" 2>/dev/null)
after=$(cat "$b/rootfs/run/attack-after" 2>/dev/null)
# The blocked init is not dumpable (confine.h, THE REACH RULE): its exe link is not readable
# inside at all; where it is, it must be the memfd.
like "$(head -n 1 <<<"$now")" '^(/memfd:rootlessrt \(deleted\)|EACCES)$' \
  "CVE-2019-5736: inside, /proc/1/exe of the blocked init is the memfd, or not readable at all"
like "$(tail -n 1 <<<"$now")" '^(ETXTBSY|EPERM|EACCES)$' \
  "CVE-2019-5736: inside, opening it for writing fails"
like "$(sed -n 2p <<<"$after")" '^(ETXTBSY|EPERM|EACCES)$' \
  "CVE-2019-5736: a held fd cannot be reopened for writing after init's execve either"
[ -n "$after" ] || diag "the in-container attacker did not report (init never exec'd?)"
like "$(cat "$T_WORK/host-attack" 2>/dev/null)" '^(Text file busy|Operation not permitted|Permission denied)$' \
  "CVE-2019-5736: nor can the host side through its held fd"
is "$(sha "$own_rrt")" "$own_sha" "CVE-2019-5736: the user-owned runtime binary is unchanged"
is "$(sha "$RRT")" "$rrt_sha" "CVE-2019-5736: the installed runtime binary is unchanged"
run orrt delete -f "$id"
nothing_left "$id" "$b"

# During `exec`, the runtime joins the container's pid namespace before its execve: a process in
# the container watches for any memfd exe and tries to write it.
b=$(mkbundle exe2 sh -c '
while :; do
  for e in /proc/[0-9]*/exe; do
    case $(readlink "$e" 2>/dev/null) in
      *memfd*) echo "$e $(rrt-probe write "$e" PWNED)" >>/run/exec-attack ;;
    esac
  done
done')
cfg "$b" '.root.readonly = false' || bail_out "cannot edit $b/config.json"
id=$(new_id exe2)
run orrt run -d -b "$b" "$id"
is "$rc" 0 "CVE-2019-5736 (exec): a container that hunts for runtime processes"
for _ in 1 2 3 4 5 6 7 8; do
  orrt exec "$id" true >/dev/null 2>&1
done
run orrt exec "$id" rrt-probe cat /proc/self/status
is "$rc" 0 "CVE-2019-5736 (exec): exec still works under attack"
seen=$(cat "$b/rootfs/run/exec-attack" 2>/dev/null)
no_line "$seen" ' ok$' "CVE-2019-5736 (exec): no write to a runtime's /proc/PID/exe succeeded"
diag "attempts seen by the container: $(grep -c . <<<"$seen") ($(awk '{print $2}' <<<"$seen" | sort | uniq -c | paste -sd' '))"
is "$(sha "$own_rrt")" "$own_sha" "CVE-2019-5736 (exec): the runtime binary is unchanged"
run orrt delete -f "$id"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- CVE-2024-21626

# The caller leaks host directories as fds 3..9 (what a buggy runtime would leak to init); the
# process asks for each as its cwd and writes a file there. The root is read-only, so a write
# that succeeds went to a host directory.
leak=$T_WORK/leaked
mkdir -p "$leak/d3" "$leak/d4" "$leak/d5" "$leak/d6"
b=$(mkbundle cwd rrt-probe write escaped-21626 x)
escaped=""
for n in 3 4 5 6 7 8 9 10; do
  cfg "$b" '.process.cwd = $c' --arg c "/proc/self/fd/$n" || bail_out "cannot edit $b/config.json"
  id=$(new_id cwd)
  run bash -c 'exec 3<"$1/d3" 4<"$1/d4" 5<"$1/d5" 6<"$1/d6" 7</ 8<"$1" 9</tmp; shift
    exec timeout 30 "$@"' sh "$leak" "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
  if [ "$out" = ok ]; then
    escaped+="cwd=/proc/self/fd/$n wrote outside the container; "
  elif [ "$rc" -ne 0 ] && ! [[ $err =~ process\.cwd ]] && [ -n "$err" ]; then
    escaped+="cwd=/proc/self/fd/$n failed without naming process.cwd: $err; "
  fi
  rrt delete -f "$id" >/dev/null 2>&1
done
is "$escaped" "" "CVE-2024-21626: cwd=/proc/self/fd/3..10 never lands in a leaked host directory"
is "$(find "$leak" /tmp /tmp/escaped-21626 -maxdepth 1 -name escaped-21626 2>/dev/null | sort -u)" "" \
  "CVE-2024-21626: no file appeared in the leaked host directories"
cfg "$b" '.process.cwd = "/proc/self/fd/7" | .process.args = ["rrt-probe", "cwd"]' ||
  bail_out "cannot edit $b/config.json"
id=$(new_id cwd)
run bash -c 'exec 7</; exec timeout 30 "$@"' sh "$RRT" --root "$RRT_ROOT" run -b "$b" "$id"
isnt "$rc" 0 "CVE-2024-21626: cwd into a leaked fd of the host's / is refused"
like "$err" 'process\.cwd /proc/self/fd/7' "CVE-2024-21626: naming process.cwd"
nothing_left "$id" "$b" "CVE-2024-21626: nothing left behind"
rrt delete -f "$id" >/dev/null 2>&1

# The same through exec --cwd, the caller of exec leaking the directories.
b=$(mkbundle cwdx rrt-probe sleep 1000)
id=$(new_id cwdx)
run rrt run -d -b "$b" "$id"
escaped=""
for n in 3 4 5 6 7 8 9 10 11 12; do
  run bash -c 'exec 3<"$1/d3" 4<"$1/d4" 5<"$1/d5" 6<"$1/d6" 7</ 8<"$1" 9</tmp; shift
    exec timeout 30 "$@"' sh "$leak" "$RRT" --root "$RRT_ROOT" exec --cwd "/proc/self/fd/$n" "$id" \
    rrt-probe write escaped-21626 x
  [ "$out" = ok ] && escaped+="exec --cwd /proc/self/fd/$n wrote outside; "
done
is "$escaped" "" "CVE-2024-21626 (exec): --cwd /proc/self/fd/N never reaches a host directory"
is "$(find "$leak" /tmp -maxdepth 2 -name escaped-21626 2>/dev/null)" "" \
  "CVE-2024-21626 (exec): the host directories are untouched"
run rrt delete -f "$id"
nothing_left "$id" "$b"

# ---------------------------------------------------------------- CVE-2021-30465

# Mount destinations that are symlinks to host paths: the mounts must land inside the rootfs.
outside=$T_WORK/outside
mkdir -p "$outside/bind-target" "$T_WORK/volume"
echo volume-marker >"$T_WORK/volume/marker"
b=$(mkbundle mnt sh -c 'echo data >/lnk-tmpfs/written && cat /lnk-bind/marker &&
  echo inside >/lnk-bind/from-container && grep -c " tmpfs tmpfs .*size=1236k" /proc/self/mountinfo')
ln -s "$outside/new-dir" "$b/rootfs/lnk-tmpfs"
ln -s "$outside/bind-target" "$b/rootfs/lnk-bind"
cfg "$b" '.mounts += [{destination: "/lnk-tmpfs", type: "tmpfs", source: "tmpfs", options: ["size=1236k"]},
  {destination: "/lnk-bind", type: "bind", source: $v, options: ["rbind", "rw"]}]' \
  --arg v "$T_WORK/volume" || bail_out "cannot edit $b/config.json"
id=$(new_id mnt)
run rrt run -b "$b" "$id"
is "$rc" 0 "CVE-2021-30465: mount destinations that are symlinks to host paths"
[ "$rc" = 0 ] || diag "$err"
is "$out" $'volume-marker\n1' "CVE-2021-30465: inside, both mounts are where the links point (in the rootfs)"
is "$(find "$outside" -mindepth 1 -printf '%P\n' | sort | paste -sd' ')" "bind-target" \
  "CVE-2021-30465: the host directory the links name is untouched (no new-dir, nothing written)"
is "$(cat "$T_WORK/volume/from-container" 2>/dev/null)" inside "CVE-2021-30465: the volume got the container's write"
is "$(mounts_referencing "$outside")" "" "CVE-2021-30465: no host mount on the link targets"
nothing_left "$id" "$b"

# A symlink swapped back and forth while create resolves the destination.
b=$(mkbundle race rrt-probe mounts)
race_target=$T_WORK/race-target
mkdir -p "$race_target" "$b/rootfs/race"
ln -s "$race_target" "$b/rootfs/race.lnk"
cfg "$b" '.mounts += [{destination: "/race", type: "tmpfs", source: "tmpfs", options: ["size=2468k"]}]' ||
  bail_out "cannot edit $b/config.json"
"$PY" -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = (os.fsencode(p) for p in sys.argv[1:3])
end = time.time() + float(sys.argv[3])
while time.time() < end:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
' "$b/rootfs/race" "$b/rootfs/race.lnk" 20 &
swapper=$!
ran=0 refused=0 bad=""
deadline=$((SECONDS + 6))
while [ "$SECONDS" -lt "$deadline" ]; do
  id=$(new_id race)
  run rrt run -b "$b" "$id"
  if [ "$rc" -eq 0 ]; then
    ran=$((ran + 1))
    grep -q ' tmpfs tmpfs .*size=2468k' <<<"$out" ||
      bad+="run $id: the tmpfs is not in the container's mount table; "
  else
    refused=$((refused + 1))
  fi
  rrt delete -f "$id" >/dev/null 2>&1
done
kill "$swapper" 2>/dev/null
wait "$swapper" 2>/dev/null
diag "racing symlink swap: $ran runs succeeded, $refused refused"
is "$bad" "" "CVE-2021-30465 (race): every run that succeeded has its tmpfs inside the container"
is "$(find "$race_target" -mindepth 1 | head -n 5)" "" "CVE-2021-30465 (race): the host target stays empty"
is "$(mounts_referencing "$race_target")" "" "CVE-2021-30465 (race): no host mount on it"
ok "CVE-2021-30465 (race): at least one run completed" test "$ran" -gt 0
nothing_left "$id" "$b" "CVE-2021-30465 (race): nothing left behind"

# ---------------------------------------------------------------- CVE-2023-27561

hostdir=$T_WORK/host-procfs
mkdir -p "$hostdir"
b=$(mkbundle procln rrt-probe exit 0)
{ rmdir "$b/rootfs/proc" && ln -s "$hostdir" "$b/rootfs/proc"; } || bail_out "cannot make rootfs/proc a symlink"
failed_start "CVE-2023-27561: rootfs/proc a symlink to a host directory" \
  '/proc.*symlink' "$(new_id procln)" "$b"
is "$(find "$hostdir" -mindepth 1)" "" "CVE-2023-27561: the host directory stays empty"

b=$(mkbundle procrel rrt-probe exit 0)
{ rmdir "$b/rootfs/proc" && ln -s tmp "$b/rootfs/proc"; } || bail_out "cannot make rootfs/proc a symlink"
failed_start "CVE-2023-27561: rootfs/proc a relative symlink into the rootfs" \
  '/proc.*symlink' "$(new_id procrel)" "$b"

# The rootless config binds the host's /sys: the destination must be checked just the same.
b=$(mkbundle sysln rrt-probe exit 0)
{ rmdir "$b/rootfs/sys" && ln -s "$hostdir" "$b/rootfs/sys"; } || bail_out "cannot make rootfs/sys a symlink"
failed_start "CVE-2023-27561: rootfs/sys a symlink (bind-mounted /sys)" \
  '/sys.*symlink' "$(new_id sysln)" "$b"
is "$(find "$hostdir" -mindepth 1)" "" "CVE-2023-27561: the host directory stays empty"

# ---------------------------------------------------------------- CVE-2025-31133, CVE-2025-52565

victim=$T_WORK/host-victim
echo host-secret >"$victim"
# A /dev shared with another container (bound from the host), whose null an attacker replaced
# by a symlink to a file that is writable in this container: a masked file bound from "/dev/null"
# would become that file.
shdev=$T_WORK/shared-dev
mkdir -p "$shdev"
ln -s /victim "$shdev/null"
b=$(mkbundle devnull sh -c 'echo PWNED >/etc/hostname; cat /etc/hostname')
cfg "$b" '.mounts = [.mounts[] | select(.destination != "/dev")] +
  [{destination: "/dev", type: "bind", source: $d, options: ["rbind", "rw"]},
   {destination: "/victim", type: "bind", source: $v, options: ["bind", "rw"]}] |
  .linux.maskedPaths += ["/etc/hostname"]' --arg d "$shdev" --arg v "$victim" ||
  bail_out "cannot edit $b/config.json"
failed_start "CVE-2025-31133: /dev/null a symlink to a writable file, with maskedPaths" \
  '/dev/null.*(null device|1:3|symlink)' "$(new_id devnull)" "$b"
is "$(cat "$victim")" host-secret "CVE-2025-31133: the host file is unchanged"
rm -f "$shdev/null"
echo not-null >"$shdev/null"
failed_start "CVE-2025-31133: /dev/null a regular file, with maskedPaths" \
  '/dev/null.*(null device|1:3)' "$(new_id devnull)" "$b"
is "$(cat "$victim"):$(cat "$shdev/null")" "host-secret:not-null" "CVE-2025-31133: both files are unchanged"

# The rootfs's own /dev (no /dev mount) with null a symlink to a host path.
b=$(mkbundle devnull2 sh -c 'echo PWNED >/dev/null; cat /etc/hostname | wc -c')
ln -s "$victim" "$b/rootfs/dev/null"
cfg "$b" '.mounts = [.mounts[] | select(.destination != "/dev")] | .linux.maskedPaths += ["/etc/hostname"]' ||
  bail_out "cannot edit $b/config.json"
id=$(new_id devnull2)
run rrt run -b "$b" "$id"
if [ "$rc" -eq 0 ]; then
  is "$out" 0 "CVE-2025-31133: rootfs/dev/null a symlink to a host path: the masked file reads empty"
else
  like "$err" '/dev/null' "CVE-2025-31133: rootfs/dev/null a symlink to a host path: refused, naming /dev/null"
fi
is "$(cat "$victim")" host-secret "CVE-2025-31133: the host file it names is unchanged"
nothing_left "$id" "$b"

# /dev/console replaced in the rootfs's own /dev, with a terminal.
recv=${CONSOLE_RECV:-$(dirname "$PROBE")/console-recv}
if [ ! -x "$recv" ]; then
  recv=$T_WORK/console-recv
  cc -std=gnu11 -D_GNU_SOURCE -O2 -o "$recv" "$TESTS_DIR/helper/console-recv.c" 2>/dev/null || recv=""
fi
if [ -z "$recv" ]; then
  skip "no console-recv helper and no C compiler to build it" 8
else
  console_case() { # console_case NAME ERE SETUP: create with a terminal; SETUP plants /dev/console
    local name=$1 ere=$2 setup=$3 bc id sock=$T_WORK/console.sock
    bc=$(mkbundle "console-$(new_id c)" sh -c 'echo PWNED >/dev/console')
    eval "$setup"
    cfg "$bc" '.root.readonly = false | .mounts = [.mounts[] | select(.destination != "/dev")] |
      .process.terminal = true' || bail_out "cannot edit $bc/config.json"
    rm -f "$sock"
    "$recv" "$sock" "" --timeout 15 >"$T_WORK/recv.out" 2>"$T_WORK/recv.err" &
    local rpid=$!
    wait_until 10 grep -q ready "$T_WORK/recv.err"
    id=$(new_id console)
    RRT_CMD_TIMEOUT=10 run rrt create --console-socket "$sock" -b "$bc" "$id"
    isnt "$rc" 0 "$name: create refuses"
    [ "$rc" = 124 ] && diag "create hung: killed after 10 s"
    like "$err" "$ere" "$name: the error says why"
    nothing_left "$id" "$bc" "$name: nothing left behind"
    rrt delete -f "$id" >/dev/null 2>&1
    kill "$rpid" 2>/dev/null
    wait "$rpid" 2>/dev/null
  }
  echo host-console >"$T_WORK/host-console"
  console_case "CVE-2025-52565: /dev/console a symlink to a host file" '/dev/console.*symlink' \
    'ln -s "$T_WORK/host-console" "$bc/rootfs/dev/console"'
  is "$(cat "$T_WORK/host-console")" host-console "CVE-2025-52565: the host file is unchanged"
  console_case "CVE-2025-52565: /dev/console a FIFO" '/dev/console' 'mkfifo "$bc/rootfs/dev/console"'
fi

# ---------------------------------------------------------------- CVE-2022-29162

b=$(mkbundle inh rrt-probe sleep 1000)
id=$(new_id inh)
run rrt run -d -b "$b" "$id"
is "$rc" 0 "CVE-2022-29162: a container with the default capabilities"
init=$(state_field "$id" .pid)
is "$(awk '$1 == "CapInh:" {print $2}' "/proc/$init/status" 2>/dev/null)" 0000000000000000 \
  "CVE-2022-29162: init's inheritable set is empty"
inh_of() { awk '$1 == "CapInh:" {print $2}' <<<"$1"; }
run rrt exec "$id" rrt-probe caps
is "$(inh_of "$out")" 0000000000000000 "CVE-2022-29162: exec: inheritable empty"
run rrt exec --cap CAP_NET_RAW "$id" rrt-probe caps
is "$(inh_of "$out")" 0000000000000000 "CVE-2022-29162: exec --cap CAP_NET_RAW: inheritable still empty"
run rrt exec -u 1000:1000 "$id" rrt-probe caps
is "$(inh_of "$out"):$(awk '$1 == "CapAmb:" {print $2}' <<<"$out")" 0000000000000000:0000000000000000 \
  "CVE-2022-29162: exec as uid 1000: inheritable and ambient empty"
pf=$T_WORK/inh-process.json
echo '{"args": ["rrt-probe", "caps"], "cwd": "/", "user": {"uid": 0, "gid": 0},
  "capabilities": {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"]}}' >"$pf"
run rrt exec --process "$pf" "$id"
is "$(inh_of "$out")" 0000000000000000 "CVE-2022-29162: exec --process without inheritable: empty"
run rrt delete -f "$id"
nothing_left "$id" "$b"

done_testing
