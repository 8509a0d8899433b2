#!/bin/sh
# nested-inner.sh BIN WORK EXPECT: what a CI job does inside an outer container (nested.sh makes
# it, with one engine or another), run there as the job's user. BIN holds rootlessrt, its
# rootlessrt-net, busybox (static) and image.tar (an OCI archive of busybox, made by
# oci-image.sh); WORK is a writable directory of the outer container. It runs, as the job would:
# a bundle from `rootlessrt spec --rootless` (busybox), the same without a pid namespace, a
# desktop `run --rm oci-archive:` (its overlay nested) with --network slirp fetching a page
# from a server on the outer container's loopback, and `check`; after each run, that nothing is
# in the outer container that was not there before it (processes, mounts, files). EXPECT "ok",
# or "fail:ERE": every run must exit 1 with one line on stderr matching ERE, and leave nothing.
# POSIX sh (busybox's, or the image's): prints "ok - NAME" / "not ok - NAME" lines and "#"
# diagnostics.
BIN=$1 W=$2 EXPECT=$3 EXPECT_NET=${4:-same}
[ "$EXPECT_NET" = same ] && EXPECT_NET=$EXPECT
RRT=$BIN/rootlessrt
ROOT=$W/state
# NESTED_ROOT=DIR: no --root, and the state must be found in DIR (the default the runtime picks).
ROOT_FLAG="--root $ROOT"
if [ -n "${NESTED_ROOT:-}" ]; then
  ROOT=$NESTED_ROOT
  ROOT_FLAG=""
fi
n_fail=0
pass() { echo "ok - $1"; }
fail() {
  n_fail=$((n_fail + 1))
  echo "not ok - $1"
  shift
  for l in "$@"; do printf '%s\n' "$l" | sed 's/^/#   /'; done
}

mkdir -p "$W/b/rootfs" || exit 2
cd "$W/b/rootfs" || exit 2
mkdir -p bin proc sys dev tmp etc
cp "$BIN/busybox" bin/busybox && ln -sf busybox bin/sh && ln -sf busybox bin/cat && ln -sf busybox bin/id &&
  ln -sf busybox bin/hostname && ln -sf busybox bin/ls && ln -sf busybox bin/wc &&
  ln -sf busybox bin/wget || exit 2
cd "$W/b" || exit 2
"$RRT" spec --rootless || exit 2
# The process prints what a job checks: its uid, the hostname, a proc of its own pid namespace.
sed -e 's/"terminal": true/"terminal": false/' \
  -e 's|^      "sh"$|      "sh", "-c", "echo hello; id -u; hostname; cat /proc/self/uid_map \| wc -l; ls /proc/1/ >/dev/null \&\& echo proc"|' \
  config.json >config.new && mv config.new config.json || exit 2
mkdir -p "$W/b2" && ln -s ../b/rootfs "$W/b2/rootfs" || exit 2

# A fresh command each time: out, err, rc.
run() {
  "$@" >"$W/.out" 2>"$W/.err" </dev/null
  rc=$?
  out=$(cat "$W/.out")
  err=$(cat "$W/.err")
}

# expect NAME WANT-ERE: the last run did what EXPECT says.
expect() {
  case ${3:-$EXPECT} in
    ok)
      if [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -qE "$2"; then
        pass "$1"
      else
        fail "$1" "exit status $rc" "stdout: $out" "stderr: $err"
      fi
      ;;
    fail:*)
      ere=${3:-$EXPECT}
      ere=${ere#fail:}
      # The error's line; a warning about something that worked before it (the outer /proc
      # bound) is not part of it.
      lines=$(printf '%s\n' "$err" | grep -v '^rootlessrt: warning: ' | grep -c .)
      if [ "$rc" = 1 ] && [ "$lines" = 1 ] && printf '%s\n' "$err" | grep -qE "$ere"; then
        pass "$1: refused in one line naming the cause"
      else
        fail "$1: refused in one line naming the cause" "exit status $rc (want 1)" \
          "stderr ($lines lines): $err" "want one line matching: $ere"
      fi
      ;;
  esac
}

# What a case could leave in the outer container, one line each, to compare before and after it:
# the outer container's processes (all but this script: no pattern, so a leaked rootlessrt-net
# or container init counts as much as anything of WORK), its mounts, and the paths under the
# directories a runtime writes to: the state root, XDG_RUNTIME_DIR, /tmp, /dev/shm (unless
# NESTED_HOST_SHM=1: a pod with the host's IPC namespace has the host's /dev/shm, which others
# write to), and WORK but for this script's own files, the image store (its images are kept
# between cases) and the bundle's rootfs (the container's own files, and the mount points the
# runtime makes there, /etc/resolv.conf for slirp, stay with the bundle as with any runtime).
# Only a function call, no fork, lists /proc: the subshells it starts after are not in the list.
B="$BIN/busybox"
snapshot() {
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = $$ ] && continue
    # Zombies and exiting processes have no command line: they hold nothing.
    c=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) && [ -n "$c" ] && echo "process ${p#/proc/}: $c"
  done
  "$B" awk '{print "mount " $1 " on " $5 " (" $0 ")"}' /proc/self/mountinfo
  shm=/dev/shm
  [ "${NESTED_HOST_SHM:-0}" = 1 ] && shm=""
  "$B" find "$ROOT" ${XDG_RUNTIME_DIR:+"$XDG_RUNTIME_DIR"} /tmp $shm "$W" -xdev \
    \( -path "$W/store" -o -path "$W/.snap*" -o -path "$W/.out" -o -path "$W/.err" -o \
    -path "$W/b/rootfs" \) -prune -o \
    -print 2>/dev/null | "$B" sort -u | sed 's/^/path /'
}
before() { snapshot >"$W/.snap-before"; }

# leftovers NAME: nothing is in the outer container after case NAME that was not before it, but
# what the runtime keeps between containers: the state root and its .run, and beside the root
# its private directory, .ROOT.private, with up to 4 emptied spare state directories and the
# seccomp cache (container/state.c). A helper told to go may take a moment to exit: what is new
# is looked at again for up to 30 s before it counts.
leftovers() {
  priv="${ROOT%/*}/.${ROOT##*/}.private"
  i=0
  while :; do
    snapshot >"$W/.snap-after"
    left=$("$B" awk -v root="$ROOT" -v priv="$priv" 'NR == FNR { seen[$0] = 1; next }
      !seen[$0] && $0 != "path " root && $0 != "path " root "/.run" && $0 != "path " priv &&
      !(index($0, "path " priv "/spare-") == 1 && length($0) == length("path " priv "/spare-") + 1) &&
      index($0 "/", "path " priv "/seccomp-cache/") != 1' \
      "$W/.snap-before" "$W/.snap-after")
    [ -z "$left" ] || [ "$i" -ge 60 ] && break
    i=$((i + 1))
    sleep 0.5
  done
  l=$("$RRT" $ROOT_FLAG list -q 2>/dev/null)
  [ -n "$l" ] && left="containers: $l
$left"
  if [ -z "$left" ]; then pass "$1: nothing left in the outer container"; else fail "$1: nothing left in the outer container" "$left"; fi
}

# 1. The bundle of spec --rootless, as it is.
before
run "$RRT" $ROOT_FLAG run -b "$W/b" job1
expect "spec --rootless bundle" '^hello$'
[ "$EXPECT" = ok ] && {
  h=$(printf '%s\n' "$out" | sed -n 3p)
  [ "$h" = rootlessrt ] || printf '%s\n' "$err" | grep -q 'hostname "rootlessrt" not set' ||
    fail "spec --rootless bundle: the hostname is the config's, or a warning says why not" "$out" "$err"
  printf '%s\n' "$out" | grep -qx proc || fail "spec --rootless bundle: a /proc" "$out"
  # NESTED_MAP_LINES=N: the container's uid_map must have N lines (the helpers' ranges).
  [ -n "${NESTED_MAP_LINES:-}" ] && [ "$(printf '%s\n' "$out" | sed -n 4p)" != "$NESTED_MAP_LINES" ] &&
    fail "spec --rootless bundle: a uid_map of $NESTED_MAP_LINES lines" "$out" "$err"
}
# What the runtime warned about (the outer /proc bound, a hostname refused), with NESTED_DEBUG=1.
[ "${NESTED_DEBUG:-0}" = 1 ] && printf '%s\n' "$err" | grep '^rootlessrt: warning: ' | sed 's/^/#   job1: /'
[ -n "${NESTED_ROOT:-}" ] && [ "$EXPECT" = ok ] && [ ! -d "$NESTED_ROOT" ] &&
  fail "spec --rootless bundle: the state went to $NESTED_ROOT" "$(ls -la /dev/shm /tmp 2>&1)"
"$RRT" $ROOT_FLAG delete -f job1 >/dev/null 2>&1
leftovers "spec --rootless bundle"

# 2. Without a pid namespace (the config's pid entry dropped), and a sysfs mount for /sys where
# the bundle has a bind of the outer one (a fresh sysfs, or the outer /sys bound, a warning).
"$BIN/busybox" awk '
  /"type": "pid"/ { drop = 1 }
  { lines[n++] = $0 }
  END {
    for (i = 0; i < n; i++) {
      if (i + 1 < n && lines[i + 1] ~ /"type": "pid"/) { i += 2; continue }
      print lines[i]
    }
  }' "$W/b/config.json" |
  sed -e '/"destination": "\/sys"/,/]/{s/"type": "none"/"type": "sysfs"/; s/"source": "\/sys"/"source": "sysfs"/
    /"rbind",/d; /"rro"/d; s/"ro",/"ro"/}' >"$W/b2/config.json"
before
run "$RRT" $ROOT_FLAG run -b "$W/b2" job2
expect "spec --rootless bundle without a pid namespace" '^hello$'
[ "${NESTED_DEBUG:-0}" = 1 ] && printf '%s\n' "$err" | grep '^rootlessrt: warning: ' | sed 's/^/#   job2: /'
"$RRT" $ROOT_FLAG delete -f job2 >/dev/null 2>&1
leftovers "without a pid namespace"

# 3. The bundle with --network slirp, fetching a page served on the outer container's loopback
# through 10.0.2.2.
mkdir -p "$W/b3" "$W/www" && ln -s ../b/rootfs "$W/b3/rootfs" && echo "served-$$" >"$W/www/index.html" || exit 2
# A free port of the outer container's loopback (with a pod's host network, the host's): busybox
# httpd exits at once when the bind fails.
# listening PORT: 127.0.0.1:PORT is in LISTEN state in this network namespace.
listening() {
  grep -qi "^ *[0-9]*: 0100007F:$(printf '%04X' "$1") 00000000:0000 0A " /proc/net/tcp
}
port=$((20000 + $$ % 20000))
for _ in 1 2 3 4 5 6 7 8; do
  "$BIN/busybox" httpd -f -p "127.0.0.1:$port" -h "$W/www" &
  httpd=$!
  # Until it listens (however slow the host) or is gone (the port was taken).
  while kill -0 "$httpd" 2>/dev/null && ! listening "$port"; do sleep 0.05; done
  listening "$port" && break
  wait "$httpd" 2>/dev/null
  port=$((port + 1))
done
sed -e "s|\"sh\", \"-c\", \".*\"\$|\"sh\", \"-c\", \"wget -q -O- http://10.0.2.2:$port/\"|" \
  "$W/b/config.json" >"$W/b3/config.json" || exit 2
before
run "$RRT" $ROOT_FLAG run --network slirp --host-loopback -b "$W/b3" job3
expect "spec --rootless bundle with --network slirp" "^served-$$\$" "$EXPECT_NET"
kill "$httpd" 2>/dev/null
wait "$httpd" 2>/dev/null
"$RRT" $ROOT_FLAG delete -f job3 >/dev/null 2>&1
leftovers "with --network slirp"

# 4. The desktop form: an OCI archive on an overlay (kernel overlay or fuse-overlayfs), its
# network slirp's.
before
run "$RRT" $ROOT_FLAG run --rm --storage "$W/store" --network slirp "oci-archive:$BIN/image.tar" \
  sh -c 'echo "net=$(ip -4 addr show tap0 | grep -o "inet [0-9.]*") root=$(awk "\$5 == \"/\" {
    for (i = 7; i <= NF; i++) if (\$i == \"-\") { print \$(i + 1); exit } }" /proc/self/mountinfo)"'
# Its root is an overlay (the kernel's, or fuse-overlayfs: fuse.fuse-overlayfs), its tap0 slirp's.
expect "run --rm oci-archive: with --network slirp" \
  '^net=inet 10\.0\.2\.100 root=(overlay|fuse\.fuse-overlayfs)$' "$EXPECT_NET"
leftovers "run --rm oci-archive:"
"$RRT" store rm --storage "$W/store" --all >/dev/null 2>&1

# 5. check: says it is nested and what the outer container allows.
"$RRT" check >"$W/.out" 2>&1
out=$(cat "$W/.out")
# Where nothing can be made, its verdict is fail; elsewhere it names how the ids go.
want='^(ok|warn) +nested +inside .*: containers run'
case ${NESTED_VERDICT:-$EXPECT} in fail:*) want='^fail +nested +inside .*: containers cannot be made here' ;; esac
if printf '%s\n' "$out" | grep -qE "$want" &&
  printf '%s\n' "$out" | grep -qE '^(ok|warn|fail) +nested-ids +uid [0-9]+, ' &&
  printf '%s\n' "$out" | grep -qE '^(ok|warn|fail) +nested-(seccomp|proc|sys) '; then
  pass "check reports the nesting and what the outer container allows"
else
  fail "check reports the nesting and what the outer container allows" "want a line: $want" "$out"
fi
[ "${NESTED_DEBUG:-0}" = 1 ] && printf '%s\n' "$out" | sed 's/^/#   /'
exit 0
