#!/bin/bash
# t-rootfs.sh: what the process finds around it: hostname, readonly root, masked and readonly
# paths, /proc, /dev nodes and symlinks, config mounts (tmpfs, bind ro) resolved inside the rootfs,
# --no-pivot, and process cwd/env (args are found through PATH).
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

last_id=""
inside() { # inside BUNDLE: runs it in the foreground as $last_id; $out, $err, $rc
  last_id=$(new_id "$(basename "$1")")
  run rrt run -b "$1" "$last_id"
}

# ---------------------------------------------------------------- uts, root

b=$(mkbundle hostname rrt-probe hostname)
cfg "$b" '.hostname = "rrt-host-test"'
inside "$b"
is "$rc:$out" "0:rrt-host-test" "hostname from the config"
ok "the host's hostname is unchanged" test "$(hostname)" != rrt-host-test

b=$(mkbundle domainname cat /proc/sys/kernel/domainname)
cfg "$b" '.domainname = "rrt.example"'
inside "$b"
is "$rc:$out" "0:rrt.example" "domainname from the config"

b=$(mkbundle ro-root rrt-probe write /new-file x)
cfg "$b" '.root.readonly = true'
inside "$b"
is "$out" "EROFS" "root.readonly: writing / fails with EROFS"
ok "nothing was written to the rootfs" test ! -e "$b/rootfs/new-file"

b=$(mkbundle rw-root rrt-probe write /new-file x)
cfg "$b" '.root.readonly = false'
inside "$b"
is "$out" "ok" "root.readonly false: / is writable"
is "$(cat "$b/rootfs/new-file" 2>/dev/null)" x "the write lands in the bundle's rootfs"
is "$(stat -c %u "$b/rootfs/new-file" 2>/dev/null)" "$(id -u)" "a file made by root inside is the caller's"

b=$(mkbundle abs-root rrt-probe cwd)
cfg "$b" '.root.path = $p' --arg p "$b/rootfs"
inside "$b"
is "$rc:$out" "0:/" "an absolute root.path works"

# An rro rbind is read-only all the way down: the rootless default binds the host's /sys so,
# and the mounts under it (cgroup hierarchies on this host) must not stay writable.
b=$(mkbundle sys-rro sh -c 'awk '"'"'$2 ~ "^/sys(/|$)" && $4 !~ /^ro(,|$)/ {print $2}'"'"' /proc/mounts')
cfg "$b" '.mounts |= map(if .destination == "/sys" then {destination: "/sys", type: "none",
  source: "/sys", options: ["rbind", "nosuid", "noexec", "nodev", "ro", "rro"]} else . end)'
inside "$b"
is "$rc:$out" "0:" "an rro rbind of /sys: every mount under /sys is read-only"
mkdir -p "$T_WORK/spec-rootless"
"$RRT" spec --rootless -b "$T_WORK/spec-rootless" >/dev/null 2>&1
is "$(jq -c '.mounts[] | select(.destination == "/sys") | .options' "$T_WORK/spec-rootless/config.json")" \
  '["rbind","nosuid","noexec","nodev","ro","rro"]' "the rootless default /sys bind says rro"

# "ro" is mount(2)'s flag: on an rbind it makes the top mount read-only and leaves the mounts
# under it as they are; "rro" is the recursive one (config.md). The tree bound is made by the
# first mount: a tmpfs under /data in the rootfs, which the host path of the rootfs then shows.
for opt in ro rro; do
  b=$(mkbundle "rbind-$opt" sh -c 'rrt-probe write /view/f x; rrt-probe write /view/sub/f x; true')
  mkdir -p "$b/rootfs/data/sub" "$b/rootfs/view"
  cfg "$b" '.mounts += [{destination: "/data/sub", type: "tmpfs", source: "tmpfs", options: ["size=1m"]},
    {destination: "/view", type: "bind", source: ($b + "/rootfs/data"), options: ["rbind", $o]}]' \
    --arg b "$b" --arg o "$opt"
  inside "$b"
  [ "$rc" = 0 ] || diag "$err"
  if [ "$opt" = ro ]; then
    is "$rc:$(paste -sd ' ' <<<"$out")" "0:EROFS ok" "an ro rbind: the top mount is read-only, a mount under it stays writable"
  else
    is "$rc:$(paste -sd ' ' <<<"$out")" "0:EROFS EROFS" "an rro rbind: the mount under it is read-only too"
  fi
done

# A cgroup mount is read-write unless "ro" is written (mount(8)); `rootlessrt spec` writes "ro".
for opt in rw ro; do
  b=$(mkbundle "cgroup-$opt" sh -c 'awk '"'"'$5 == "/sys/fs/cgroup" {split($6, f, ","); print f[1]}'"'"' /proc/self/mountinfo')
  extra='[]'
  [ "$opt" = ro ] && extra='["ro"]'
  cfg "$b" '.mounts += [{destination: "/sys/fs/cgroup", type: "cgroup", source: "cgroup",
    options: (["nosuid", "noexec", "nodev"] + $e)}]' --argjson e "$extra"
  inside "$b"
  [ "$rc" = 0 ] || diag "$err"
  is "$rc:$(tail -n 1 <<<"$out")" "0:$opt" "a cgroup mount with options nosuid,noexec,nodev$([ "$opt" = ro ] && echo ,ro) is $opt"
done

# ---------------------------------------------------------------- masked and readonly paths

if [ -e /proc/kcore ]; then
  b=$(mkbundle kcore rrt-probe cat /proc/kcore)
  cfg "$b" '.linux.maskedPaths = ((.linux.maskedPaths // []) + ["/proc/kcore"] | unique)'
  inside "$b"
  is "$rc:${#out}" "0:0" "masked /proc/kcore reads empty"
else
  skip "this kernel has no /proc/kcore to mask"
fi
# A masked file that exists everywhere.
b=$(mkbundle meminfo rrt-probe cat /proc/meminfo)
cfg "$b" '.linux.maskedPaths = ((.linux.maskedPaths // []) + ["/proc/meminfo"] | unique)'
inside "$b"
is "$rc:${#out}" "0:0" "a masked file (/proc/meminfo) reads empty"

# /proc/tty is never empty; masked, it must be an empty directory.
b=$(mkbundle masked-dir sh -c 'test -d /proc/tty && ls -A /proc/tty | wc -l')
cfg "$b" '.linux.maskedPaths = ((.linux.maskedPaths // []) + ["/proc/tty"] | unique)'
inside "$b"
is "$rc:$(tr -d ' ' <<<"$out")" 0:0 "a masked directory is empty"

b=$(mkbundle proc-sys rrt-probe write /proc/sys/kernel/hostname nope)
cfg "$b" '.linux.readonlyPaths = ((.linux.readonlyPaths // []) + ["/proc/sys"] | unique)'
inside "$b"
is "$out" "EROFS" "readonly /proc/sys: a write fails with EROFS"

b=$(mkbundle ro-path rrt-probe write /data/f x)
mkdir -p "$b/rootfs/data"
cfg "$b" '.root.readonly = false | .linux.readonlyPaths = ((.linux.readonlyPaths // []) + ["/data"])'
inside "$b"
is "$out" "EROFS" "a readonlyPaths directory in the rootfs is read-only"

# ---------------------------------------------------------------- /proc, /dev

b=$(mkbundle mounts rrt-probe mounts)
inside "$b"
mi=$out
has_line "$mi" '^[0-9]+ [0-9]+ [^ ]+ [^ ]+ /proc [^-]* - proc ' "/proc is a proc mount"
has_line "$mi" '^[0-9]+ [0-9]+ [^ ]+ [^ ]+ /dev [^-]* - tmpfs ' "/dev is a tmpfs"
has_line "$mi" '^[0-9]+ [0-9]+ [^ ]+ [^ ]+ /dev/pts [^-]* - devpts ' "/dev/pts is a devpts"
no_line "$(awk '{print $5}' <<<"$mi")" "^$T_WORK|oldroot" \
  "no host path is a mount point in the container (the old root is gone)"

b=$(mkbundle devs sh -c 'for d in null zero full random urandom tty; do test -c /dev/$d && echo $d; done
  echo x >/dev/null && echo wrote-null
  head -c 4 /dev/zero | od -An -tx1 | tr -d " "
  for l in fd stdin stdout stderr ptmx; do echo "$l $(readlink /dev/$l)"; done')
inside "$b"
is "$(sed -n 1,6p <<<"$out" | paste -sd ' ')" "null zero full random urandom tty" \
  "the standard device nodes exist"
is "$(sed -n 7p <<<"$out")" wrote-null "/dev/null is writable"
is "$(sed -n 8p <<<"$out")" 00000000 "/dev/zero reads zeros"
is "$(sed -n 9,12p <<<"$out" | paste -sd ',')" \
  "fd /proc/self/fd,stdin /proc/self/fd/0,stdout /proc/self/fd/1,stderr /proc/self/fd/2" \
  "the standard /dev symlinks"
like "$(sed -n 13p <<<"$out")" '^ptmx (pts/ptmx|/dev/pts/ptmx)$' "/dev/ptmx points to pts/ptmx"

# config-linux.md: /dev/ptmx is the container's /dev/pts/ptmx, even when linux.devices lists it
# (the host's 5:2 node would open no pty of the container's devpts).
b=$(mkbundle ptmx-listed sh -c 'readlink /dev/ptmx; rrt-probe open /dev/ptmx')
cfg "$b" '.linux.devices = ((.linux.devices // []) + [{path: "/dev/ptmx", type: "c", major: 5, minor: 2, fileMode: 438}])'
inside "$b"
is "$rc:$(paste -sd ' ' <<<"$out")" "0:pts/ptmx ok" "linux.devices lists /dev/ptmx: it is the pts/ptmx link and opens"

# An ro /dev takes effect after what is made under it: devpts on /dev/pts, the nodes, the links.
b=$(mkbundle ro-dev sh -c 'rrt-probe write /dev/f x; echo x >/dev/null && echo null-ok; test -c /dev/pts/ptmx && echo pts-ok')
cfg "$b" '.mounts |= map(if .destination == "/dev" then .options += ["ro"] else . end)'
inside "$b"
[ "$rc" = 0 ] || diag "$err"
is "$rc:$(paste -sd ' ' <<<"$out")" "0:EROFS null-ok pts-ok" "an ro /dev: made read-only once devpts and the nodes are in it"

# ---------------------------------------------------------------- config mounts

share=$T_WORK/share
mkdir -p "$share"
echo shared-content >"$share/f"
b=$(mkbundle mnts sh -c 'cat /mnt/share/f; /bin/rrt-probe write /mnt/share/g x
  /bin/rrt-probe write /mnt/t/f x; grep " /mnt/t " /proc/self/mountinfo')
mkdir -p "$b/rootfs/mnt/share" "$b/rootfs/mnt/t"
cfg "$b" '.mounts += [
    {destination: "/mnt/share", type: "bind", source: $s, options: ["rbind", "ro"]},
    {destination: "/mnt/t", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "size=1m"]}]' \
  --arg s "$share"
inside "$b"
mo=$out
is "$(sed -n 1p <<<"$mo")" shared-content "a bind mount shows the host directory"
is "$(sed -n 2p <<<"$mo")" EROFS "a bind mount with ro is read-only"
ok "the ro bind did not write to the host" test ! -e "$share/g"
is "$(sed -n 3p <<<"$mo")" ok "a tmpfs mount is writable under a read-only root"
like "$(sed -n 4p <<<"$mo")" ' /mnt/t [^ ]*nosuid,nodev[^ ]* (.* )?- tmpfs ' "the tmpfs has nosuid,nodev"

# tmpcopyup (podman's --tmpfs asks for it): the tmpfs starts as a copy of the directory it
# covers, owners, modes and symlinks kept; writes stay in the tmpfs. Without it: empty.
b=$(mkbundle copyup sh -c 'cat /opt/data/f; readlink /opt/data/l; stat -c %a /opt/data/sub
  cat /opt/data/sub/g; echo new >/opt/data/n && cat /opt/data/n
  grep -c " /opt/data .* - tmpfs " /proc/self/mountinfo; ls -A /opt/plain | wc -l; readlink /opt/data/esc')
mkdir -p "$b/rootfs/opt/data/sub" "$b/rootfs/opt/plain"
echo image-f >"$b/rootfs/opt/data/f"
echo image-g >"$b/rootfs/opt/data/sub/g"
echo hidden >"$b/rootfs/opt/plain/x"
ln -s f "$b/rootfs/opt/data/l"
ln -s ../../../../../../etc/shadow "$b/rootfs/opt/data/esc"
chmod 0750 "$b/rootfs/opt/data/sub"
cfg "$b" '.mounts += [
    {destination: "/opt/data", type: "tmpfs", source: "tmpfs", options: ["tmpcopyup", "size=1m"]},
    {destination: "/opt/plain", type: "tmpfs", source: "tmpfs", options: ["size=1m"]}]'
inside "$b"
is "$rc" 0 "a tmpfs mount with tmpcopyup"
[ "$rc" = 0 ] || diag "$err"
is "$out" "image-f
f
750
image-g
new
1
0
../../../../../../etc/shadow" "tmpcopyup: files, symlinks (as symlinks), modes and subdirectories copied; the tmpfs writable; a plain tmpfs empty"
ok "tmpcopyup: writes stayed in the tmpfs" test ! -e "$b/rootfs/opt/data/n"

# A mount target that is a symlink to an absolute path is resolved inside the rootfs: the mount
# must land in the rootfs (visible inside), never on the host path (invisible inside).
outside=$T_WORK/outside
mkdir -p "$outside"
b=$(mkbundle symlink-target ls /evil/)
mkdir -p "$b/rootfs$outside"
ln -s "$outside" "$b/rootfs/evil"
cfg "$b" '.mounts += [{destination: "/evil", type: "bind", source: $s, options: ["rbind", "ro"]}]' \
  --arg s "$share"
inside "$b"
if [ "$rc" -ne 0 ]; then
  pass "a symlinked mount target is refused or resolved inside the rootfs (refused: exit $rc)"
else
  is "$(sed -n 1p <<<"$out")" f "a symlinked mount target is refused or resolved inside the rootfs"
fi
nothing_left "$last_id" "$b" "no mount or process left by the symlinked target"

b=$(mkbundle nopivot sh -c 'hostname; cat /etc/hostname; rrt-probe cwd')
cfg "$b" '.hostname = "rrt-nopivot"'
id=$(new_id nopivot)
run rrt run --no-pivot -b "$b" "$id"
is "$rc:$(paste -sd ' ' <<<"$out")" "0:rrt-nopivot rootlessrt /" "run --no-pivot"

# The kernel lets a nested user namespace mount a new proc only when a fully visible one is in
# its mount namespace: with pivot_root there is none (the container's has masks), and --no-pivot
# must leave none of the host's either. CAP_SETFCAP lets the container's root map itself.
b=$(mkbundle nested-proc rrt-probe nested-proc)
cfg "$b" '.process.capabilities |= with_entries(.value += ["CAP_SETFCAP"])'
for mode in pivot no-pivot; do
  flag=()
  [ "$mode" = no-pivot ] && flag=(--no-pivot)
  run rrt run "${flag[@]}" -b "$b" "$(new_id nested-proc)"
  case $out in
  unshare:* | uid_map:* | setgroups:* | gid_map:*)
    skip "$mode: no nested user namespace here ($out)"
    ;;
  *)
    is "$out" EPERM "$mode: a nested user namespace cannot mount proc (no fully visible proc)"
    ;;
  esac
done
b=$(mkbundle nopivot-mounts rrt-probe mounts)
id=$(new_id nopivot-mounts)
run rrt run --no-pivot -b "$b" "$id"
no_line "$(awk '{print $5}' <<<"$out")" "^$T_WORK" "--no-pivot: no host path is a mount point in the container"
nothing_left "$id" "$b" "--no-pivot: nothing left behind"

# ---------------------------------------------------------------- process

b=$(mkbundle cwd rrt-probe cwd)
mkdir -p "$b/rootfs/srv/work"
cfg "$b" '.process.cwd = "/srv/work"'
inside "$b"
is "$out" "/srv/work" "process.cwd"

b=$(mkbundle env rrt-probe env)
cfg "$b" '.process.env = ["PATH=/bin", "FOO=bar baz", "EMPTY=", "RRT_TEST_BUNDLE=" + $b]' --arg b "$b"
inside "$b"
has_line "$out" '^FOO=bar baz$' "process.env: a value with a space"
has_line "$out" '^EMPTY=$' "process.env: an empty value"
has_line "$out" '^PATH=/bin$' "process.env: PATH"
no_line "$out" '^(RRT_ROOT|TESTS_DIR|SPEC_DIR|PROBE)=' "nothing of the runtime's environment leaks in"

b=$(mkbundle path-search rrt-probe exit 5)
cfg "$b" '.process.env = ["PATH=/nowhere:/bin", "RRT_TEST_BUNDLE=" + $b]' --arg b "$b"
inside "$b"
is "$rc" 5 "process.args[0] is searched in the container's PATH"

done_testing
