#!/bin/bash
# tests/podman/podman-check.sh - rootlessrt's podman scenarios: drive rootless podman (Debian 12,
# podman 4.3.1) against an OCI runtime binary, fully offline, as an unprivileged user. Adapted
# from the company's podman-check tool; it needs nothing outside this repository (the image is a
# busybox rootfs built here from Debian's busybox-static). `make check` runs `setup` then `check`
# through tests/podman-check.sh when podman is installed.
#
# Usage (as root):
#   podman-check.sh setup                      install + configure user + import localhost/busybox (idempotent)
#   podman-check.sh check RUNTIME_PATH         scenario checks; "PASS name" / "FAIL name: reason", then "N passed, M failed"
#   podman-check.sh bench RUNTIME_PATH [N]     median seconds of `podman run --rm localhost/busybox true` (N runs, default 10)
#   podman-check.sh trace RUNTIME_PATH [PODMAN ARGS...]
#                                               runtime invocations podman/conmon made for one command
#                                               (default: run --rm localhost/busybox true)
#   podman-check.sh trace-check RUNTIME_PATH   run `check` through the argv-logging wrapper, then print every
#                                               distinct "subcommand + flag set" with one example argv
#   podman-check.sh podman RUNTIME_PATH ARGS.. run an arbitrary podman command as the user (stdin passed through)
#   podman-check.sh shell                      interactive shell as the user inside the same namespace setup
#
# Environment knobs:
#   PC_USER=tester           unprivileged user (needs /etc/subuid + /etc/subgid ranges)
#   PC_CGROUP_VIEW=unified   unified: private mount ns where /sys/fs/cgroup is a pure cgroup2 mount
#                            (crun refuses the host's hybrid v1+v2 layout); host: leave the layout alone
#   PC_STORAGE=overlay       overlay (native rootless overlay, kernel >= 5.13) | fuse-overlayfs | vfs
#   PC_PORT=18080            host port (127.0.0.1 only) for the port-publish scenario
#   PC_TIMEOUT=60            per-podman-command timeout (seconds)
#   PC_ONLY="a b"            only run these check scenarios (names as printed)
#   PC_EXTRA=0               1 = also run x-* scenarios needing a delegated cgroup (pause, limits, update)
#   PC_REGISTER_NAME=1       add basename(RUNTIME_PATH) to runtime_supports_json/_nocgroup in containers.conf
#                            (podman keys these on the runtime's *basename*: json => it passes
#                            --log-format=json --log FILE; nocgroup => --cgroups=disabled allowed and
#                            --cgroup-manager disabled passed). 0 = treat the runtime as unknown.
#                            crun/runc/etc. always keep podman's defaults (runc: json yes, nocgroup no).
#   PC_NO_HYPERFINE=0        bench: 1 = use a date(1) loop even if hyperfine is installed
#   PC_KEYRING=1             0 = containers.conf keyring=false (podman adds --no-new-keyring to create)
#   PC_TRACE_VERBOSE=0       trace: 1 = also print fds and selected env each runtime invocation saw
#   PC_WORK=/tmp/rrt-podman-check  scratch dir (rootfs, tarball, trace logs, copies of this script)
#
# Notes: containers remember their runtime by absolute path -- do not delete/move a runtime (or a
# trace wrapper under $PC_WORK/user-$PC_USER/trace) while containers made with it exist.
# Switching PC_CGROUP_VIEW restarts podman's pause process (podman system migrate), which stops
# the user's running containers; don't run two invocations with different views concurrently.
# Everything stays on loopback; no image pulls. Only processes this script starts are touched.
set -u

PC_USER=${PC_USER:-tester}
PC_CGROUP_VIEW=${PC_CGROUP_VIEW:-unified}
PC_STORAGE=${PC_STORAGE:-overlay}
PC_PORT=${PC_PORT:-18080}
PC_TIMEOUT=${PC_TIMEOUT:-60}
PC_ONLY=${PC_ONLY:-}
PC_REGISTER_NAME=${PC_REGISTER_NAME:-1}
PC_TRACE_VERBOSE=${PC_TRACE_VERBOSE:-0}
PC_WORK=${PC_WORK:-/tmp/rrt-podman-check}
PC_IMAGE=${PC_IMAGE:-localhost/busybox}

die() { echo "podman-check: $*" >&2; exit 2; }

# ---------------------------------------------------------------- root side
user_vars() {
    PC_UID=$(id -u "$PC_USER" 2>/dev/null) || die "no such user $PC_USER"
    PC_GID=$(id -g "$PC_USER")
    PC_HOME=$(getent passwd "$PC_USER" | cut -d: -f6)
    PC_XDG=/tmp/podman-run-$PC_UID     # podman's own fallback name; no logind here
}

# copy this script somewhere the user can read it
stage_self() {
    mkdir -p "$PC_WORK"; chmod 0755 "$PC_WORK"
    install -m 0755 "$(readlink -f "$0")" "$PC_WORK/podman-check.sh"
    install -d -m 0700 -o "$PC_UID" -g "$PC_GID" "$PC_XDG"
    install -d -m 0755 -o "$PC_UID" -g "$PC_GID" "$PC_WORK/user-$PC_USER"
}

# as_user ARGS...: run `bash $PC_WORK/podman-check.sh ARGS...` as the user in a private
# mount namespace (/ made rshared; /sys/fs/cgroup replaced by cgroup2 if PC_CGROUP_VIEW=unified).
as_user() {
    local pre='mount --make-rshared / 2>/dev/null;'
    if [ "$PC_CGROUP_VIEW" = unified ] && [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
        pre="umount -R /sys/fs/cgroup 2>/dev/null || umount -l /sys/fs/cgroup; mount -t cgroup2 none /sys/fs/cgroup || exit 3; $pre"
    fi
    unshare -m --propagation private -- sh -c "$pre"' exec "$@"' sh \
        setpriv --reuid="$PC_UID" --regid="$PC_GID" --init-groups \
        env -i HOME="$PC_HOME" USER="$PC_USER" LOGNAME="$PC_USER" SHELL=/bin/sh LANG=C.UTF-8 \
            PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin XDG_RUNTIME_DIR="$PC_XDG" \
            TERM="${TERM:-xterm}" PC_USER="$PC_USER" PC_CGROUP_VIEW="$PC_CGROUP_VIEW" \
            PC_STORAGE="$PC_STORAGE" PC_PORT="$PC_PORT" PC_TIMEOUT="$PC_TIMEOUT" PC_ONLY="$PC_ONLY" \
            PC_REGISTER_NAME="$PC_REGISTER_NAME" PC_TRACE_VERBOSE="$PC_TRACE_VERBOSE" \
            PC_WORK="$PC_WORK" PC_IMAGE="$PC_IMAGE" PC_EXTRA="${PC_EXTRA:-0}" PC_NO_HYPERFINE="${PC_NO_HYPERFINE:-0}" PC_KEYRING="${PC_KEYRING:-1}" \
        bash -c 'for n in $(ls /proc/$$/fd); do [ "$n" -gt 2 ] && eval "exec $n>&-"; done   # drop stray inherited fds
                 cd "$HOME" && exec bash "$0" "$@"' "$PC_WORK/podman-check.sh" "$@"
}

root_setup() {
    [ "$(id -u)" = 0 ] || die "setup must run as root"
    local pkgs="podman uidmap slirp4netns fuse-overlayfs busybox-static" need="" p
    for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"; done
    if [ -n "$need" ]; then
        echo "installing:$need"
        DEBIAN_FRONTEND=noninteractive apt-get install -y $need >/dev/null || die "apt-get install failed"
    fi
    # distrobox for its scenario (a SKIP saying so where it cannot be installed)
    dpkg -s distrobox >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y distrobox >/dev/null 2>&1 \
        || echo "note: distrobox not installable; its scenario skips"
    dpkg -s hyperfine >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y hyperfine >/dev/null 2>&1 \
        || echo "note: hyperfine not installable; bench falls back to a date loop"
    id -u "$PC_USER" >/dev/null 2>&1 || useradd -m -s /bin/bash "$PC_USER" || die "cannot create user $PC_USER"
    user_vars
    # rootless networking (slirp4netns) and fuse-overlayfs need these; 0666 is the usual distro default
    local d
    for d in /dev/net/tun /dev/fuse; do
        [ -e "$d" ] && [ "$(stat -c %a "$d")" != 666 ] && chmod 0666 "$d"
    done
    # a supplementary group of the user's own: what --group-add keep-groups keeps
    getent group "$PC_USER-kg" >/dev/null || groupadd "$PC_USER-kg" || die "cannot create group $PC_USER-kg"
    id -nG "$PC_USER" | tr ' ' '\n' | grep -qx "$PC_USER-kg" || usermod -aG "$PC_USER-kg" "$PC_USER"
    grep -q "^$PC_USER:" /etc/subuid || usermod --add-subuids 100000-165535 "$PC_USER"
    grep -q "^$PC_USER:" /etc/subgid || usermod --add-subgids 100000-165535 "$PC_USER"
    stage_self
    # tiny busybox rootfs -> tarball (rebuilt only if missing or busybox changed)
    local R=$PC_WORK/rootfs T=$PC_WORK/busybox-rootfs.tar stamp
    stamp=$(sha256sum /bin/busybox | cut -c1-16)
    if [ ! -s "$T" ] || [ "$(cat "$PC_WORK/busybox-rootfs.stamp" 2>/dev/null)" != "$stamp" ]; then
        rm -rf "$R"; mkdir -p "$R"/{bin,sbin,usr/bin,etc,tmp,proc,sys,dev,root,home,run,var/www}
        cp /bin/busybox "$R/bin/busybox"
        for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$R/bin/$a"; done
        chmod 1777 "$R/tmp"
        printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' > "$R/etc/passwd"
        printf 'root:x:0:\nuser:x:1000:\nnobody:x:65534:\n' > "$R/etc/group"
        echo 'hello from busybox httpd' > "$R/var/www/index.html"
        tar --numeric-owner --owner=0 --group=0 --mtime=@0 --sort=name -C "$R" -cf "$T" .
        chmod 0644 "$T"; echo "$stamp" > "$PC_WORK/busybox-rootfs.stamp"
    fi
    as_user __setup_user
}

# ---------------------------------------------------------------- user side helpers
CONF_DIR=${HOME:-/nonexistent}/.config/containers

write_containers_conf() {  # extra runtime names as args
    local names="crun runc kata runsc youki krun" nc="crun krun" n f=$CONF_DIR/containers.conf
    for n in $(cat "$CONF_DIR/podman-client.names" 2>/dev/null) "$@"; do
        # runtimes podman already knows keep podman's defaults (runc: json yes, nocgroups no)
        case " $names runj ocijail " in *" $n "*) continue;; esac
        names="$names $n"; nc="$nc $n"
    done
    local q1 q2
    q1=$(printf '"%s", ' $names); q2=$(printf '"%s", ' $nc)
    mkdir -p "$CONF_DIR"
    cat > "$f.new" <<EOF
# managed by podman-check.sh (rewritten on setup/check/bench/trace)
[containers]
$( [ "${PC_KEYRING:-1}" = 0 ] && echo 'keyring = false   # podman then passes "create ... --no-new-keyring"' )

[engine]
# no systemd/logind in this VM
cgroup_manager = "cgroupfs"
events_logger = "file"
# podman decides per runtime *basename* whether to pass --log-format=json --log FILE
# and whether --cgroups=disabled is allowed (NB: TOML key is runtime_supports_nocgroup,
# singular, in containers/common 0.50 although containers.conf(5) spells it ..._nocgroups)
runtime_supports_json = [${q1%, }]
runtime_supports_nocgroup = [${q2%, }]

[network]
EOF
    if cmp -s "$f.new" "$f"; then rm -f "$f.new"; else mv "$f.new" "$f"; fi
    # shellcheck disable=SC2194 # the list is the constant; $n is what is looked for
    for n in "$@"; do
        case " crun runc kata runsc youki krun runj ocijail " in *" $n "*) continue;; esac
        grep -qx "$n" "$CONF_DIR/podman-client.names" 2>/dev/null || echo "$n" >> "$CONF_DIR/podman-client.names"
    done
}

storage_conf_text() {
    echo "# managed by podman-check.sh (PC_STORAGE=$PC_STORAGE)"
    echo "[storage]"
    case $PC_STORAGE in
        overlay|fuse-overlayfs) echo 'driver = "overlay"';;
        vfs) echo 'driver = "vfs"';;
        *) echo "bad PC_STORAGE=$PC_STORAGE" >&2; return 1;;
    esac
    echo "runroot = \"$XDG_RUNTIME_DIR/containers\""
    echo "graphroot = \"$HOME/.local/share/containers/storage\""
    if [ "$PC_STORAGE" = fuse-overlayfs ]; then
        echo '[storage.options.overlay]'
        echo 'mount_program = "/usr/bin/fuse-overlayfs"'
    fi
}

# The rootless pause process pins podman's user+mount namespace: every later podman
# joins it, so the cgroup view it was born with wins. Restart it if the view is wrong.
ensure_view() {
    local want have
    if [ "$PC_CGROUP_VIEW" = unified ]; then want=cgroup2fs; else want=$(stat -f -c %T /sys/fs/cgroup); fi
    have=$(podman unshare stat -f -c %T /sys/fs/cgroup 2>/dev/null)
    if [ "$have" != "$want" ]; then
        echo "note: podman pause process has cgroup view '$have', want '$want': podman system migrate" >&2
        podman system migrate >/dev/null 2>&1
        have=$(podman unshare stat -f -c %T /sys/fs/cgroup 2>/dev/null)
        [ "$have" = "$want" ] || { echo "podman-check: cannot get cgroup view $want (have $have)" >&2; return 1; }
    fi
}

user_setup() {
    mkdir -p "$CONF_DIR"
    write_containers_conf
    local st=$CONF_DIR/storage.conf new err
    new=$(storage_conf_text) || exit 2
    if [ "$new" != "$(cat "$st" 2>/dev/null)" ]; then
        printf '%s\n' "$new" > "$st"
        if [ -d "$HOME/.local/share/containers/storage" ]; then
            echo "storage config changed -> podman system reset -f (user $USER)"
            podman system reset -f >/dev/null 2>&1
            printf '%s\n' "$new" > "$st"     # reset may remove it
        fi
    fi
    # DB remembers the graph driver; a mismatch means storage was created with another driver
    err=$(podman info --format '{{.Store.GraphDriverName}}' 2>&1 >/dev/null)
    if echo "$err" | grep -q 'overwritten by graph driver'; then
        echo "graph driver mismatch in libpod DB -> podman system reset -f"
        podman system reset -f >/dev/null 2>&1; printf '%s\n' "$new" > "$st"
    fi
    ensure_view || exit 1
    if ! podman image exists "$PC_IMAGE" || [ "$(podman image inspect --format '{{index .Labels "pc.stamp"}}' "$PC_IMAGE" 2>/dev/null)" != "$(cat "$PC_WORK/busybox-rootfs.stamp")" ]; then
        podman import -q --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin:/sbin:/usr/bin' \
            --change "LABEL pc.stamp=$(cat "$PC_WORK/busybox-rootfs.stamp")" \
            "$PC_WORK/busybox-rootfs.tar" "$PC_IMAGE" >/dev/null || { echo "import failed" >&2; exit 1; }
    fi
    podman info --format 'podman {{.Version.Version}} | conmon {{.Host.Conmon.Version}} | cgroups {{.Host.CgroupsVersion}} ({{.Host.CgroupManager}}) | storage {{.Store.GraphDriverName}} | rootless {{.Host.Security.Rootless}}' 2>/dev/null
    podman images --format '{{.Repository}}:{{.Tag}} {{.ID}} {{.Size}}' --filter reference="$PC_IMAGE"
    echo "setup OK (user $USER, XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR, cgroup view $PC_CGROUP_VIEW)"
}

prep_runtime() {  # $1 runtime path -> sets RT
    RT=$1
    case $RT in /*) ;; *) echo "RUNTIME_PATH must be absolute" >&2; exit 2;; esac
    [ -x "$RT" ] || { echo "$RT is not executable by $USER" >&2; exit 2; }
    if [ "$PC_REGISTER_NAME" = 1 ]; then write_containers_conf "$(basename "$RT")"
    else  # forget the name so podman treats the runtime as unknown (no json log, no --cgroups=disabled)
        local nf=$CONF_DIR/podman-client.names
        [ -f "$nf" ] && { grep -vx "$(basename "$RT")" "$nf" > "$nf.new"; mv "$nf.new" "$nf"; }
        write_containers_conf
    fi
    ensure_view || exit 1
    podman image exists "$PC_IMAGE" || { echo "$PC_IMAGE missing: run setup first" >&2; exit 2; }
}

P() { timeout -k 5 "$PC_TIMEOUT" podman --runtime "$RT" "$@"; }

# ---------------------------------------------------------------- scenarios
# Each scn_* returns 0 on success; on failure prints a short reason to stdout.
E=$(mktemp -u)   # stderr capture file (created per use)
cap() {  # cap CMD... : OUT=stdout, RC=rc, ERR=last stderr lines
    OUT=$("$@" 2>"$E"); RC=$?
    ERR=$(grep -v -e 'is not a shared mount' "$E" 2>/dev/null | tail -n 3 | tr '\n' ' ' | cut -c1-400)
}
why() { echo "${1:-unexpected} (rc=$RC out='$(printf '%s' "$OUT" | tr '\n\r' '  ' | cut -c1-200)' err='$ERR')"; return 1; }
want() {  # want EXPECTED_OUT CMD...  (rc must be 0, stdout (CR stripped) must equal EXPECTED)
    local exp=$1; shift; cap "$@"; OUT=$(printf '%s' "$OUT" | tr -d '\r')
    [ $RC = 0 ] && [ "$OUT" = "$exp" ] || why "want '$exp'"
}
I=$PC_IMAGE
UW=$PC_WORK/user-${USER:-root}   # user-writable scratch (created by stage_self)
N=pcchk   # container name prefix
state() { P inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$1" 2>/dev/null; }
waitfor() {  # waitfor SECONDS CMD... (poll until CMD succeeds)
    local t=$(( $1 * 5 )); shift
    while [ $t -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; t=$((t-1)); done; return 1
}
default_caps=00000000800405fb   # CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE SYS_CHROOT SETFCAP

scn_run_echo()        { want hi P run --rm $I echo hi; }
scn_default_cmd()     { cap P run --rm $I; [ $RC = 0 ] || why; }
scn_exit_code()       { cap P run --rm $I sh -c 'exit 7'; [ $RC = 7 ] || why "want rc 7"; }
# podman derives 127/126 from the runtime's error text ("no such file"/"not found" -> 127, "permission denied" -> 126)
scn_cmd_not_found()   { cap P run --rm $I /nonexistent; [ $RC = 127 ] || why "want rc 127"; }
scn_cmd_not_executable() { cap P run --rm $I /etc/passwd; [ $RC = 126 ] || why "want rc 126"; }
scn_rm_cleans_up()    { P run --name $N-rm --rm $I true >/dev/null 2>&1; cap P ps -a --filter name=^$N-rm\$ --format '{{.Names}}'; [ -z "$OUT" ] || why "container left behind"; }
_pipe_cat()           { printf 'x\ny\n' | P run --rm -i $I cat; }
scn_stdin_pipe()      { want "$(printf 'x\ny')" _pipe_cat; }
scn_tty()             { cap P run --rm -t $I tty; OUT=$(printf '%s' "$OUT" | tr -d '\r'); case $OUT in /dev/pts/*) ;; *) why "want /dev/pts/N";; esac; }
scn_env_workdir_hostname() { want "bar /tmp pch" P run --rm -e FOO=bar -w /tmp --hostname pch $I sh -c 'echo $FOO $(pwd) $(hostname)'; }
scn_image_env_path()  { want "/bin:/sbin:/usr/bin" P run --rm $I sh -c 'echo $PATH'; }
scn_user()            { want "1000:1000 user" P run --rm --user 1000:1000 $I sh -c 'echo $(id -u):$(id -g) $(whoami)'; }
scn_user_groups()     { want "1000:1000:5 6 1000" P run --rm --user 1000:1000 --group-add 5 --group-add 6 $I sh -c 'echo $(id -u):$(id -g):$(id -G | tr " " "\n" | sort -n | tr "\n" " ")' ; }
scn_volume_rw() {
    local d=$UW/vol-$$-x; rm -rf "$d"; mkdir -p "$d"; echo host > "$d/in"
    want host P run --rm -v "$d:/x" $I sh -c 'cat /x/in; echo ctr > /x/out' || return 1
    [ "$(cat "$d/out" 2>/dev/null)" = ctr ] || why "file written in container not visible on host"
    rm -rf "$d"
}
scn_volume_ro() {
    local d=$UW/vol-$$-y; rm -rf "$d"; mkdir -p "$d"
    want "ro-ok" P run --rm -v "$d:/x:ro" $I sh -c 'touch /x/f 2>/dev/null && echo WRITABLE || echo ro-ok'; local r=$?
    rm -rf "$d"; return $r
}
scn_read_only()       { want "$(printf 'ro\ntmp-rw')" P run --rm --read-only $I sh -c 'touch /f 2>/dev/null && echo rw || echo ro; touch /tmp/f && echo tmp-rw'; }
scn_tmpfs()           { want "tmpfs" P run --rm --tmpfs /scratch:size=1m $I sh -c 'awk "\$2==\"/scratch\"{print \$3}" /proc/mounts'; }
# --tmpfs asks for tmpcopyup: the image's files are there, on the tmpfs.
scn_tmpfs_copyup()    { want "tmpfs copied" P run --rm --tmpfs /etc:size=1m $I sh -c 'awk "\$2==\"/etc\"{printf \"%s \", \$3}" /proc/mounts; grep -q "^root:" /etc/passwd && echo copied'; }
scn_shm_size()        { want "1024" P run --rm --shm-size 1m $I sh -c 'df -k /dev/shm | awk "NR==2{print \$2}"'; }
scn_caps_default()    { want "$default_caps" P run --rm $I sh -c 'awk "/^CapEff/{print \$2}" /proc/self/status'; }
scn_cap_drop_all()    { want "0000000000000000 0000000000000000 0000000000000000" P run --rm --cap-drop ALL $I sh -c 'awk "/^Cap(Eff|Prm|Bnd)/{printf \"%s \", \$2}" /proc/self/status | sed "s/ \$//"'; }
scn_cap_add()         { want "00000000800415fb" P run --rm --cap-add NET_ADMIN $I sh -c 'awk "/^CapEff/{print \$2}" /proc/self/status'; }
scn_caps_nonroot_user() { want "0000000000000000" P run --rm --user 1000 $I sh -c 'awk "/^CapEff/{print \$2}" /proc/self/status'; }
scn_privileged() {
    local last full; last=$(cat /proc/sys/kernel/cap_last_cap); full=$(printf '%016x' $(( (1 << (last + 1)) - 1 )))
    want "$full 0" P run --rm --privileged $I sh -c 'echo $(awk "/^CapEff/{print \$2}" /proc/self/status) $(awk "/^Seccomp:/{print \$2}" /proc/self/status)'
}
scn_seccomp_default() { want "2" P run --rm $I sh -c 'awk "/^Seccomp:/{print \$2}" /proc/self/status'; }
scn_seccomp_profile_file() { want "2" P run --rm --security-opt seccomp=/usr/share/containers/seccomp.json $I sh -c 'awk "/^Seccomp:/{print \$2}" /proc/self/status'; }
scn_seccomp_unconfined() { want "0" P run --rm --security-opt seccomp=unconfined $I sh -c 'awk "/^Seccomp:/{print \$2}" /proc/self/status'; }
scn_seccomp_enforced() {  # custom profile: deny mkdir/mkdirat with EPERM
    local f=$UW/seccomp-$$.json
    cat > "$f" <<'EOF'
{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":1}]}
EOF
    want "denied" P run --rm --security-opt seccomp="$f" $I sh -c 'mkdir /tmp/zz 2>/dev/null && echo allowed || echo denied'; local r=$?
    rm -f "$f"; return $r
}
scn_no_new_privileges() { want "1" P run --rm --security-opt no-new-privileges $I sh -c 'awk "/^NoNewPrivs/{print \$2}" /proc/self/status'; }
scn_ulimit()          { want "1024 2048" P run --rm --ulimit nofile=1024:2048 $I sh -c 'echo $(ulimit -n) $(ulimit -Hn)'; }
scn_sysctl()          { want "8192" P run --rm --sysctl kernel.msgmax=8192 $I cat /proc/sys/kernel/msgmax; }
read -r -d '' CS_MASKED <<'EOS'
m=""
for p in /proc/keys /proc/timer_list /proc/kcore /sys/firmware; do
  [ -e $p ] || continue
  awk -v p=$p '$5==p{f=1} END{exit !f}' /proc/self/mountinfo || m="$m unmasked:$p"
done
for p in /proc/sys /proc/sysrq-trigger /proc/bus /proc/fs /proc/irq; do
  [ -e $p ] || continue
  awk -v p=$p '$5==p && $6 ~ /(^|,)ro(,|$)/{f=1} END{exit !f}' /proc/self/mountinfo || m="$m not-ro:$p"
done
echo ok$m
EOS
scn_masked_readonly_paths() { want ok P run --rm $I sh -c "$CS_MASKED"; }
read -r -d '' CS_DEV <<'EOS'
m=""
for d in null zero full random urandom tty ptmx fd stdin stdout stderr; do [ -e /dev/$d ] || m="$m no-dev:$d"; done
for x in /proc:proc /dev:tmpfs /dev/pts:devpts /dev/shm:tmpfs /dev/mqueue:mqueue /sys:sysfs; do
  awk -v p=${x%%:*} -v t=${x#*:} '$2==p && $3==t {f=1} END{exit !f}' /proc/mounts || m="$m no-mount:$x"
done
[ "$(head -c 3 /dev/zero | wc -c)" = 3 ] || m="$m bad-zero"
echo ok$m
EOS
scn_dev_and_mounts() { want ok P run --rm $I sh -c "$CS_DEV"; }
scn_device()          { want "ok" P run --rm --device /dev/null:/dev/pcnull $I sh -c 'echo x > /dev/pcnull && [ -c /dev/pcnull ] && echo ok'; }
scn_init()            { want "1 podman-init" P run --rm --init $I sh -c 'echo 1 $(cat /proc/1/comm)'; }
scn_userns_keep_id()  { want "$(id -u):$(id -g)" P run --rm --userns keep-id $I sh -c 'echo $(id -u):$(id -g)'; }
# --group-add keep-groups with keep-id: podman 4.3 sends run.oci.keep_original_groups and
# process.user.additionalGids together; the groups are the user's own (its supplementary group,
# unmapped, shows as the overflow gid 65534), the list ignored, as crun does.
scn_keep_groups_keep_id() {
    [ -n "$(id -G | tr ' ' '\n' | grep -vx "$(id -g)")" ] ||
        { echo "the user has no supplementary group (setup adds one)"; return 2; }
    want "$(id -u):$(id -g):$(id -g) 65534" P run --rm --userns keep-id --group-add keep-groups $I \
        sh -c 'echo $(id -u):$(id -g):$(id -G | tr " " "\n" | sort -un | tr "\n" " " | sed "s/ \$//")'
}
# distrobox: create and enter a box (its podman flags: --userns keep-id, the keep-groups annotation,
# --privileged, --pid host, / of the host at /run/host, ...), podman running the runtime under
# test. distrobox-init installs what it checks for unless the image has it: the box's image is the
# busybox image plus small scripts for those tools (offline, no package manager needed).
_dbox_image() {
    local d=$UW/dbox-$$ f
    rm -rf "$d"; mkdir -p "$d/bin"
    for f in sudo useradd usermod groupadd pinentry curl lsof chpasswd; do
        case $f in
            sudo) printf '#!/bin/sh\nexec "$@"\n' ;;
            *) printf '#!/bin/sh\nexit 0\n' ;;
        esac > "$d/bin/$f"
    done
    # busybox's mount spells --rbind as -o rbind; findmnt PATH: is PATH a mount point
    printf '#!/bin/sh\nn=0\nfor a do\n  [ $n = 0 ] && set --\n  n=1\n  if [ "$a" = --rbind ]; then set -- "$@" -o rbind; else set -- "$@" "$a"; fi\ndone\nexec /bin/busybox mount "$@"\n' > "$d/bin/mount"
    printf '#!/bin/sh\nawk -v p="$1" '"'"'$5 == p {f = 1} END {exit !f}'"'"' /proc/self/mountinfo\n' > "$d/bin/findmnt"
    chmod 0755 "$d"/bin/*
    printf 'FROM %s\nCOPY bin/ /usr/local/bin/\nENV PATH=/usr/local/bin:/bin:/sbin:/usr/bin\n' "$I" > "$d/Containerfile"
    P build --pull=never -q -t localhost/$N-dbox:latest "$d" >/dev/null; local r=$?
    rm -rf "$d"; return $r
}
# podman as distrobox calls it: the runtime under test first in PATH's podman
_dbox() { PATH=$UW/dbox-path:$PATH timeout -k 5 $((PC_TIMEOUT * 3)) "$@"; }
scn_distrobox() {
    command -v distrobox >/dev/null 2>&1 || { echo "distrobox is not installed (apt-get install distrobox)"; return 2; }
    local b=$N-dbox r
    mkdir -p "$UW/dbox-path"
    printf '#!/bin/sh\nexec /usr/bin/podman --runtime %q "$@"\n' "$RT" > "$UW/dbox-path/podman"
    chmod 0755 "$UW/dbox-path/podman"
    _dbox_image || { why "podman build of the box's image"; return 1; }
    P rm -f -t 0 $b >/dev/null 2>&1
    cap _dbox distrobox create --yes --no-entry -i localhost/$N-dbox:latest -n $b
    if [ $RC != 0 ]; then why "distrobox create"; r=1
    else
        # distrobox-enter evaluates the command as a string: a plain one
        cap _dbox distrobox enter $b -- id -G
        OUT=$(printf '%s' "$OUT" | tr -d '\r' | tr ' ' '\n' | sort -un | paste -sd' ')
        r=0
        if [ $RC != 0 ] || [ "$OUT" != "$(id -g) 65534" ]; then
            ERR="$ERR box log: $(P logs $b 2>&1 | tail -n 3 | tr '\n' ' ' | cut -c1-300)"
            why "want groups '$(id -g) 65534' in the box"; r=1
        fi
    fi
    _dbox distrobox rm --force $b >/dev/null 2>&1 || P rm -f -t 0 $b >/dev/null 2>&1
    P rmi -f localhost/$N-dbox:latest >/dev/null 2>&1
    return $r
}
scn_uidmap()          { want "0 1 1000" P run --rm --uidmap 0:1:1000 $I sh -c 'awk "{print \$1, \$2, \$3}" /proc/self/uid_map'; }
scn_net_none()        { want "lo" P run --rm --network none $I ls /sys/class/net; }
scn_net_slirp4netns() { cap P run --rm --network slirp4netns $I ip -4 addr show tap0; case $OUT in *10.0.2.100*) ;; *) why "no 10.0.2.100 on tap0";; esac; }
# The host's network namespace itself, not its interface list (another daemon adds and removes
# veths between two listings on a busy host).
scn_net_host()        { want "$(readlink /proc/self/ns/net)" P run --rm --network host $I readlink /proc/self/ns/net; }
scn_uts_host()        { want "$(hostname)" P run --rm --uts host $I hostname; }
scn_port_publish() {
    local c=$N-http url="http://127.0.0.1:$PC_PORT/"
    P rm -f -t 0 $c >/dev/null 2>&1
    cap P run -d --name $c --network slirp4netns -p 127.0.0.1:$PC_PORT:80 $I httpd -f -p 80 -h /var/www
    [ $RC = 0 ] || { why "run -d failed"; return 1; }
    if waitfor 15 curl -sf --max-time 2 "$url"; then
        OUT=$(curl -sf --max-time 2 "$url"); RC=$?
    else OUT=""; RC=1; fi
    P rm -f -t 0 $c >/dev/null 2>&1
    [ "$OUT" = "hello from busybox httpd" ] || why "curl $url"
}
scn_pod() {
    local p=$N-pod
    P pod rm -f $p >/dev/null 2>&1
    cap P pod create --name $p; [ $RC = 0 ] || { why "pod create"; return 1; }
    want inpod P run --rm --pod $p $I echo inpod; local r=$?
    P pod rm -f -t 0 $p >/dev/null 2>&1; return $r
}
_pfd_run()            { echo fd3-content > "$UW/fd3"; P run --rm --preserve-fds 1 $I sh -c 'cat <&3' 3<"$UW/fd3"; }
scn_preserve_fds()    { want fd3-content _pfd_run; }
scn_log_passthrough() { want hi P run --rm --log-driver=passthrough $I echo hi; }
scn_cgroups_disabled() { want hi P run --rm --cgroups=disabled $I echo hi; }

# -- lifecycle on one detached container
scn_detach_run()      { P rm -f -t 0 $N-det >/dev/null 2>&1; cap P run -d --name $N-det $I sleep 600; [ $RC = 0 ] || why; }
scn_ps()              { cap P ps --filter name=^$N-det\$ --format '{{.Names}} {{.Status}}'; case $OUT in "$N-det Up"*) ;; *) why "want Up";; esac; }
scn_inspect_pid()     { cap P inspect --format '{{.State.Running}} {{.State.Pid}}' $N-det; local pid=${OUT#* }; [ "${OUT%% *}" = true ] && [ -n "$pid" ] && [ "$pid" -gt 0 ] && [ -d /proc/$pid ] || why; }
scn_exec()            { want hi P exec $N-det echo hi; }
_exec_pipe()          { printf 'y\n' | P exec -i $N-det cat; }
scn_exec_stdin()      { want y _exec_pipe; }
scn_exec_tty()        { cap P exec -t $N-det tty; OUT=$(printf '%s' "$OUT" | tr -d '\r'); case $OUT in /dev/pts/*) ;; *) why "want /dev/pts/N";; esac; }
scn_exec_user_env_workdir() { want "1000 b /tmp" P exec --user 1000:1000 -e A=b -w /tmp $N-det sh -c 'echo $(id -u) $A $(pwd)'; }
scn_exec_exit_code()  { cap P exec $N-det sh -c 'exit 3'; [ $RC = 3 ] || why "want rc 3"; }
scn_exec_detach()     { cap P exec -d $N-det sh -c 'echo d > /tmp/d'; [ $RC = 0 ] || { why; return 1; }; waitfor 5 P exec $N-det test -s /tmp/d || { why "file not written"; return 1; }; want d P exec $N-det cat /tmp/d; }
scn_exec_caps() { want "00000000800405fb" P exec $N-det sh -c 'awk "/^CapEff/{print \$2}" /proc/self/status'; }
_pfd_exec()           { echo fd3-exec > "$UW/fd3e"; P exec --preserve-fds 1 $N-det sh -c 'cat <&3' 3<"$UW/fd3e"; }
scn_exec_preserve_fds() { want fd3-exec _pfd_exec; }
scn_top()             { cap P top $N-det pid args; case $OUT in *"sleep 600"*) ;; *) why "no sleep in top";; esac; }
scn_pid_ns_join()     { cap P run --rm --pid container:$N-det $I ps -o args; case $OUT in *"sleep 600"*) ;; *) why "sleep not visible";; esac; }
scn_net_ns_join()     { cap P run --rm --network container:$N-det $I ls /sys/class/net; [ $RC = 0 ] || why; }
scn_stop_timeout() {  # PID 1 ignores SIGTERM -> SIGKILL after 1s
    local t0 dt; t0=$(date +%s); cap P stop -t 1 $N-det; dt=$(( $(date +%s) - t0 ))
    [ $RC = 0 ] || { why; return 1; }
    cap state $N-det; case $OUT in exited*) ;; *) why "state after stop";; esac || return 1
    [ $dt -le 15 ] || why "stop took ${dt}s"
}
scn_start_again()     { cap P start $N-det; [ $RC = 0 ] || { why; return 1; }; cap state $N-det; case $OUT in running*) ;; *) why "not running after start";; esac; }
scn_restart()         { cap P restart -t 1 $N-det; [ $RC = 0 ] || { why; return 1; }; cap state $N-det; case $OUT in running*) ;; *) why "not running after restart";; esac; }
_is_exited() { [ "$(P inspect --format '{{.State.Status}}' "$1" 2>/dev/null)" = exited ]; }
scn_kill()            { cap P kill $N-det; [ $RC = 0 ] || { why; return 1; }; waitfor 10 _is_exited $N-det; cap state $N-det; [ "$OUT" = "exited 137" ] || why "want 'exited 137'"; }
scn_rm_force_running() {
    cap P start $N-det; [ $RC = 0 ] || { why "start"; return 1; }
    cap P rm -f -t 0 $N-det; [ $RC = 0 ] || { why; return 1; }
    cap P ps -a --filter name=^$N-det\$ --format '{{.Names}}'; [ -z "$OUT" ] || why "still listed"
}
scn_stop_graceful() {
    local c=$N-trap; P rm -f -t 0 $c >/dev/null 2>&1
    cap P run -d --name $c $I sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done'; [ $RC = 0 ] || { why; return 1; }
    sleep 0.5; local t0 dt; t0=$(date +%s); cap P stop -t 20 $c; dt=$(( $(date +%s) - t0 ))
    cap state $c; P rm -f -t 0 $c >/dev/null 2>&1
    [ "$OUT" = "exited 0" ] && [ $dt -lt 10 ] || why "want 'exited 0' quickly (took ${dt}s)"
}
scn_kill_signal() {
    local c=$N-sig; P rm -f -t 0 $c >/dev/null 2>&1
    cap P run -d --name $c $I sh -c 'trap "echo got-usr1; exit 5" USR1; while :; do sleep 0.1; done'; [ $RC = 0 ] || { why; return 1; }
    sleep 0.5; cap P kill --signal USR1 $c; [ $RC = 0 ] || { why; P rm -f -t 0 $c >/dev/null 2>&1; return 1; }
    cap P wait $c; local w=$OUT; cap P logs $c; local l=$OUT; P rm -f -t 0 $c >/dev/null 2>&1
    [ "$w" = 5 ] && [ "$l" = got-usr1 ] || { OUT="wait=$w logs=$l"; why "want wait=5 logs=got-usr1"; }
}
_logs_all() { P logs "$1" 2>&1; }
scn_logs_wait() {
    local c=$N-log; P rm -f -t 0 $c >/dev/null 2>&1
    cap P run -d --name $c $I sh -c 'echo out1; echo err1 >&2; exit 4'; [ $RC = 0 ] || { why; return 1; }
    cap P wait $c; local w=$OUT; cap _logs_all $c; local l; l=$(printf '%s' "$OUT" | sort | tr '\n' ' ')
    P rm -f $c >/dev/null 2>&1
    [ "$w" = 4 ] && [ "$l" = "err1 out1 " ] || { OUT="wait=$w logs=$l"; why "want wait=4 logs='err1 out1'"; }
}
scn_create_start_attach() {
    local c=$N-cs; P rm -f -t 0 $c >/dev/null 2>&1
    cap P create --name $c $I echo attached; [ $RC = 0 ] || { why; return 1; }
    want attached P start -a $c; local r=$?; P rm -f $c >/dev/null 2>&1; return $r
}
scn_run_attach_stdio() {  # run without -d: stdout/stderr both come through, exit code propagates
    cap P run --rm $I sh -c 'echo to-out; echo to-err >&2; exit 2'
    [ $RC = 2 ] && [ "$OUT" = to-out ] && grep -q to-err "$E" || why "want rc 2, stdout to-out, stderr to-err"
}
# podman build with RUN steps: buildah hands the runtime ambient capabilities with no inheritable
# set (a warning, not a failure); a RUN that needs CAP_CHOWN must still work.
scn_build_run() {
    local d=$UW/build-$$ t=localhost/$N-built:latest
    rm -rf "$d"; mkdir -p "$d"
    printf 'FROM %s\nRUN echo built > /built && chown 1000:1000 /built\nRUN test "$(stat -c %%u /built)" = 1000 && echo step2 >> /built\n' "$I" > "$d/Containerfile"
    cap P build --pull=never -q -t "$t" "$d"; local r=$RC
    rm -rf "$d"
    [ $r = 0 ] || { why "podman build"; P rmi -f "$t" >/dev/null 2>&1; return 1; }
    want "$(printf 'built\nstep2\n1000')" P run --rm "$t" sh -c 'cat /built; stat -c %u /built'; r=$?
    P rmi -f "$t" >/dev/null 2>&1; return $r
}
scn_no_leftovers() { cap P ps -a --filter name=^$N- --format '{{.Names}}'; [ -z "$OUT" ] || why "leftover containers"; }

# -- optional (PC_EXTRA=1): need a writable/delegated cgroup; crun and runc both fail these here
scn_x_pause_unpause() {
    local c=$N-pause; P rm -f -t 0 $c >/dev/null 2>&1
    cap P run -d --name $c $I sleep 600; [ $RC = 0 ] || { why; return 1; }
    cap P pause $c; local r1=$RC e1=$ERR; cap state $c; local s1=$OUT
    cap P unpause $c; local r2=$RC; cap state $c; local s2=$OUT
    P rm -f -t 0 $c >/dev/null 2>&1
    [ $r1 = 0 ] && [ "${s1%% *}" = paused ] && [ $r2 = 0 ] && [ "${s2%% *}" = running ] || { ERR=$e1; why "pause=$r1/$s1 unpause=$r2/$s2"; }
}
scn_x_memory_limit()  { want 67108864 P run --rm --memory 64m $I cat /sys/fs/cgroup/memory.max; }
scn_x_pids_limit()    { want 10 P run --rm --pids-limit 10 $I cat /sys/fs/cgroup/pids.max; }
scn_x_update() {
    local c=$N-upd; P rm -f -t 0 $c >/dev/null 2>&1
    cap P run -d --name $c $I sleep 600; [ $RC = 0 ] || { why; return 1; }
    cap P update --memory 128m $c; local r=$RC e=$ERR
    P rm -f -t 0 $c >/dev/null 2>&1; ERR=$e; RC=$r; [ $r = 0 ] || why "update"
}
EXTRA_SCENARIOS="x_pause_unpause x_memory_limit x_pids_limit x_update"

SCENARIOS="run_echo default_cmd exit_code run_attach_stdio cmd_not_found cmd_not_executable rm_cleans_up stdin_pipe tty env_workdir_hostname image_env_path
 user user_groups volume_rw volume_ro read_only tmpfs tmpfs_copyup shm_size caps_default cap_drop_all cap_add caps_nonroot_user privileged
 seccomp_default seccomp_profile_file seccomp_unconfined seccomp_enforced no_new_privileges ulimit sysctl
 masked_readonly_paths dev_and_mounts device init userns_keep_id keep_groups_keep_id distrobox uidmap net_none net_slirp4netns net_host uts_host
 port_publish pod preserve_fds log_passthrough cgroups_disabled
 detach_run ps inspect_pid exec exec_stdin exec_tty exec_user_env_workdir exec_exit_code exec_detach exec_caps exec_preserve_fds top
 pid_ns_join net_ns_join stop_timeout start_again restart kill rm_force_running stop_graceful kill_signal logs_wait
 create_start_attach build_run no_leftovers"

user_check() {
    prep_runtime "$1"
    local pass=0 fail=0 skip=0 s name out r
    trap 'rm -f "$E"' EXIT
    for s in $(P ps -a --filter name=^$N- --format '{{.Names}}' 2>/dev/null); do P rm -f -t 0 "$s" >/dev/null 2>&1; done
    P pod rm -f $N-pod >/dev/null 2>&1
    local list=$SCENARIOS; [ "${PC_EXTRA:-0}" = 1 ] && list="$list $EXTRA_SCENARIOS"
    for s in $list; do
        name=${s//_/-}
        if [ -n "$PC_ONLY" ] && ! case " $PC_ONLY " in *" $name "*|*" $s "*) true;; *) false;; esac; then continue; fi
        out=$(scn_$s 2>&1 </dev/null); r=$?
        if [ $r = 0 ]; then echo "PASS $name"; pass=$((pass+1))
        elif [ $r = 2 ]; then echo "SKIP $name: $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-600)"; skip=$((skip+1))
        else echo "FAIL $name: $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-600)"; fail=$((fail+1)); fi
    done
    for s in $(P ps -a --filter name=^$N- --format '{{.Names}}' 2>/dev/null); do P rm -f -t 0 "$s" >/dev/null 2>&1; done
    P pod rm -f $N-pod >/dev/null 2>&1
    echo "$pass passed, $fail failed, $skip skipped"
    [ $fail = 0 ]
}

user_bench() {
    prep_runtime "$1"; local n=${2:-10} csv t
    P run --rm $I true >/dev/null 2>&1 || { echo "podman run failed with $RT" >&2; exit 1; }
    if [ "${PC_NO_HYPERFINE:-0}" != 1 ] && command -v hyperfine >/dev/null 2>&1; then
        csv=$(mktemp)
        hyperfine -N --warmup 2 --runs "$n" --export-csv "$csv" "podman --runtime $RT run --rm $I true" >&2 || exit 1
        # command,mean,stddev,median,user,system,min,max
        awk -F, -v rt="$RT" 'NR==2{printf "runtime=%s runs='"$n"' mean=%.3f median=%.3f min=%.3f max=%.3f\n", rt, $2, $4, $7, $8 > "/dev/stderr"; printf "%.3f\n", $4}' "$csv"
        rm -f "$csv"
    else
        t=$(mktemp)
        P run --rm $I true >/dev/null 2>&1
        for _ in $(seq "$n"); do
            local a b; a=$(date +%s.%N); P run --rm $I true >/dev/null 2>&1; b=$(date +%s.%N)
            awk -v a="$a" -v b="$b" 'BEGIN{print b-a}' >> "$t"
        done
        sort -n "$t" | awk -v rt="$RT" '{v[NR]=$1} END{m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "runtime=%s runs=%d median=%.3f min=%.3f max=%.3f\n", rt, NR, m, v[1], v[NR] > "/dev/stderr"; printf "%.3f\n", m}'
        rm -f "$t"
    fi
}

# ---------------------------------------------------------------- tracing
# make_wrapper REAL -> prints wrapper path. The wrapper keeps the runtime's basename
# because podman keys runtime features (json log, nocgroups) on the basename.
make_wrapper() {
    local real=$1 name dir
    name=$(basename "$real"); dir=$UW/trace/$name-$$
    mkdir -p "$dir"; : > "$dir/log"
    {
        printf '#!/bin/bash\n# argv-logging wrapper generated by podman-check.sh: log argv/fds/env, run the real runtime, log rc\n'
        printf 'REAL=%q\nLOG=%q\n' "$real" "$dir/log"
        cat <<'WRAP'
# list our fds from a background child so that the listing opens nothing in this process
ls -l /proc/$$/fd/ > "$LOG.fd.$$" 2>/dev/null &
wait $!
fds=$(awk -v self="$0" 'NR>1 && $NF!=self {printf " %s=%s", $(NF-2), $NF}' "$LOG.fd.$$"); rm -f "$LOG.fd.$$"
envs=$(env | grep -E '^(XDG_RUNTIME_DIR|HOME|PATH|NOTIFY_SOCKET|LISTEN_[A-Z]*|_OCI_[A-Z]*|_CONTAINERS_[A-Z_]*|TERM|container|DBUS_SESSION_BUS_ADDRESS)=' | tr '\n' ' ')
args=''
for a in "$@"; do args="$args"$'\037'"$a"; done
printf 'C %s %s %s%s\nF %s%s\nV %s %s\n' "$$" "$(date +%s.%N)" "$(cat /proc/$PPID/comm 2>/dev/null)" "$args" "$$" "$fds" "$$" "$envs" >> "$LOG"
"$REAL" "$@"
rc=$?
printf 'R %s %s\n' "$$" "$rc" >> "$LOG"
exit $rc
WRAP
    } > "$dir/$name"
    chmod 0755 "$dir/$name"
    echo "$dir/$name"
}

# print log: one block per invocation
print_trace() {  # $1 log file, $2 verbose
    awk -v verbose="$2" -F' ' '
    function q(s) { if (s ~ /^[A-Za-z0-9_@%+=:,.\/-]+$/) return s; gsub(/\047/, "\047\\\047\047", s); return "\047" s "\047" }
    $1=="C" { pid=$2; line=$0; sub(/^C [0-9]+ [0-9.]+ /, "", line); n=split(line, a, "\037"); parent[pid]=a[1];
              s="runtime"; for (i=2;i<=n;i++) s=s " " q(a[i]); cmd[pid]=s; order[++k]=pid; next }
    $1=="F" { line=$0; sub(/^F [0-9]+ ?/, "", line); fds[$2]=line; next }
    $1=="V" { line=$0; sub(/^V [0-9]+ ?/, "", line); env[$2]=line; next }
    $1=="R" { rc[$2]=$3; next }
    END { for (j=1;j<=k;j++) { p=order[j]; printf "%s   # parent=%s rc=%s\n", cmd[p], parent[p], (p in rc)?rc[p]:"?";
            if (verbose=="1") { printf "    fds: %s\n    env: %s\n", fds[p], env[p] } } }' "$1"
}

# distinct subcommand + flag sets, with one example each
summarize_trace() {  # $1 log file
    awk -F' ' '
    BEGIN { split("--log --root --log-format --log-level --cgroup-manager --bundle -b --pid-file --console-socket --preserve-fds --process -p --cwd --env -e --user -u --cap -c --apparmor --process-label --format -f --criu --image-path --work-path", v, " "); for (i in v) takes[v[i]]=1 }
    function q(s) { if (s ~ /^[A-Za-z0-9_@%+=:,.\/-]+$/) return s; gsub(/\047/, "\047\\\047\047", s); return "\047" s "\047" }
    $1=="C" { line=$0; sub(/^C [0-9]+ [0-9.]+ /, "", line); n=split(line, a, "\037");
      glob=""; sub_=""; flags=""; npos=0; ex="runtime";
      for (i=2;i<=n;i++) ex=ex " " q(a[i]);
      for (i=2;i<=n;i++) { x=a[i];
        if (x ~ /^-/) { f=x; if (f ~ /=/) { sub(/=.*/, "=V", f) } else if ((f in takes) && i<n) { f=f " V"; i++ }
                        if (sub_=="") glob=glob " " f; else flags=flags " " f }
        else if (sub_=="") sub_=x; else npos++ }
      key=sprintf("%-8s global:[%s ] flags:[%s ] +%d positional", sub_, glob, flags, npos);
      if (!(key in seen)) { seen[key]=ex; ord[++k]=key } cnt[key]++ }
    END { for (j=1;j<=k;j++) printf "%s   (x%d)\n    e.g. %s\n", ord[j], cnt[ord[j]], seen[ord[j]] }' "$1"
}

user_trace() {
    local real=$1; shift
    [ -x "$real" ] || { echo "$real not executable" >&2; exit 2; }
    local w; w=$(make_wrapper "$real")
    prep_runtime "$w"
    if [ $# = 0 ]; then set -- run --rm "$PC_IMAGE" true; fi
    echo "# podman --runtime $w $*" >&2
    P "$@"; local rc=$?
    sleep 1  # conmon's exit command (podman container cleanup -> runtime delete) runs asynchronously
    echo "# podman rc=$rc; runtime invocations (argv[0] shown as 'runtime'):"
    print_trace "$(dirname "$w")/log" "$PC_TRACE_VERBOSE"
}

user_trace_check() {
    local real=$1 w
    [ -x "$real" ] || { echo "$real not executable" >&2; exit 2; }
    w=$(make_wrapper "$real")
    user_check "$w"; sleep 2
    echo "# distinct runtime invocations (subcommand, global flags, subcommand flags; V = value):"
    summarize_trace "$(dirname "$w")/log"
    echo "# full log: $(dirname "$w")/log"
}

# ---------------------------------------------------------------- dispatch
cmd=${1:-}; [ $# -gt 0 ] && shift
case $cmd in
    __setup_user) user_setup ;;
    __check)  user_check "$@" ;;
    __bench)  user_bench "$@" ;;
    __trace)  user_trace "$@" ;;
    __trace_check) user_trace_check "$@" ;;
    __podman) prep_runtime "$1"; shift; podman --runtime "$RT" "$@" ;;
    __shell)  ensure_view; exec bash -i ;;
    setup) root_setup ;;
    check|bench|trace|trace-check|podman)
        [ $# -ge 1 ] || die "usage: $0 $cmd RUNTIME_PATH"
        [ "$(id -u)" = 0 ] || die "run as root (drops to \$PC_USER itself)"
        user_vars; stage_self
        case $cmd in
            check) as_user __check "$@" </dev/null ;;
            bench) as_user __bench "$@" </dev/null ;;
            trace) as_user __trace "$@" </dev/null ;;
            trace-check) as_user __trace_check "$@" </dev/null ;;
            podman) as_user __podman "$@" ;;
        esac ;;
    shell) [ "$(id -u)" = 0 ] || die "run as root"; user_vars; stage_self; as_user __shell ;;
    *) awk 'NR>1 && !/^#/{exit} NR>1{sub(/^# ?/, ""); print}' "$0"; exit 2 ;;
esac
