#!/bin/bash
# systemd-user.sh USER CMD [ARG...]: runs CMD as USER beside a live `systemd --user` manager and
# its user bus, as a desktop login would give one, on a host whose pid 1 is not systemd (a CI
# container). Root only. All of it happens in a private mount namespace, so the host sees none of
# its mounts:
#   /sys/fs/cgroup   a cgroup2 mount; CG_PARENT/user-UID is USER's (what logind delegates): the
#                    manager runs in user-UID/user@UID.service and CMD in user-UID/session.scope,
#                    so the manager's scopes, `systemd-run --scope` and Delegate= work;
#   /run/systemd     a private tmpfs with system/ in it: sd_booted() and systemctl believe it;
#   XDG_RUNTIME_DIR  a fresh 0700 directory of USER's, where the manager puts its bus socket.
# CMD gets XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS; `systemctl --user`, `systemd-run --user`
# and sd_bus_default_user() reach the manager. When CMD ends (or this script is killed) the manager
# is stopped, whatever is left in its cgroups is killed, and the cgroups and the directory go.
#
# CG_PARENT names the cgroup (default rrt-sd-PID, under the cgroup2 root); RRT_SD_LOG=FILE keeps
# the manager's log there. Exit status: CMD's, or 2 when the manager cannot be started (the
# reason, and the manager's log, on stderr). Needs Debian's systemd and dbus-user-session.
set -u

die() {
  echo "systemd-user: $*" >&2
  exit 2
}
[ $# -ge 2 ] || die "usage: systemd-user.sh USER CMD [ARG...]"
[ "$(id -u)" -eq 0 ] || die "must run as root (it mounts a cgroup2 tree and delegates it to $1)"
[ -x /lib/systemd/systemd ] || die "no /lib/systemd/systemd (apt-get install systemd dbus-user-session)"
command -v dbus-daemon >/dev/null 2>&1 || die "no dbus-daemon (apt-get install dbus-user-session)"

# Once, into a private mount namespace (the marker keeps the re-executed copy from looping).
if [ "${RRT_SD_PRIVATE:-}" != "$$" ]; then
  exec unshare --mount --propagation private env RRT_SD_PRIVATE=$$ CG_PARENT="${CG_PARENT:-rrt-sd-$$}" \
    bash "${BASH_SOURCE[0]}" "$@"
fi
unset RRT_SD_PRIVATE

user=$1
shift
uid=$(id -u "$user" 2>/dev/null) || die "no user $user"
gid=$(id -g "$user")
home=$(getent passwd "$user" | cut -d: -f6)
cg_parent=$CG_PARENT

cg=/sys/fs/cgroup/$cg_parent
xdg=""
mgr=""
log=${RRT_SD_LOG:-}
own_log=0
made_run_systemd=0
cleanup() {
  if [ -n "$mgr" ]; then
    kill -TERM "$mgr" 2>/dev/null
    # The manager stops its units and exits; up to 10 s, then it is killed.
    for _ in $(seq 100); do
      kill -0 "$mgr" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$mgr" 2>/dev/null
    wait "$mgr" 2>/dev/null
  fi
  # Whatever CMD or the manager left behind (the script itself sits in $cg/init: moved out first).
  if [ -d "$cg" ]; then
    echo $$ >/sys/fs/cgroup/cgroup.procs 2>/dev/null
    local d p
    while read -r d; do
      if [ -e "$d/cgroup.kill" ]; then
        echo 1 >"$d/cgroup.kill" 2>/dev/null
      else
        while read -r p; do kill -KILL "$p" 2>/dev/null; done <"$d/cgroup.procs"
      fi
    done < <(find "$cg" -depth -type d 2>/dev/null)
    for _ in $(seq 50); do
      find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
      [ -d "$cg" ] || break
      sleep 0.1
    done
  fi
  [ -n "$xdg" ] && rm -rf "$xdg"
  [ "$own_log" = 1 ] && rm -f "$log"
  [ "$made_run_systemd" = 1 ] && umount /run/systemd && rmdir /run/systemd
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

umount -l /sys/fs/cgroup 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup || die "cannot mount cgroup2 on /sys/fs/cgroup"
# A host without /run/systemd gets it back removed (the directory itself is the host's /run's).
if [ ! -d /run/systemd ]; then
  mkdir /run/systemd || die "cannot make /run/systemd"
  made_run_systemd=1
fi
mount -t tmpfs -o mode=0755 tmpfs /run/systemd || die "cannot mount a tmpfs on /run/systemd"
mkdir /run/systemd/system

# USER owns the common ancestor of the manager's cgroup and CMD's: moving CMD's processes into a
# scope of the manager's (systemd-run --scope) needs that. The script waits in a leaf of root's.
ucg=$cg/user-$uid
mkdir -p "$ucg/user@$uid.service" "$ucg/session.scope" || die "cannot make the cgroups under $ucg"
{ mkdir -p "$cg/init" && echo $$ >"$cg/init/cgroup.procs"; } || die "cannot move into $cg/init"
chown -R "$uid:$gid" "$ucg"

xdg=$(mktemp -d /tmp/rrt-sd-xdg.XXXXXX) || die "cannot make a runtime directory"
chown "$uid:$gid" "$xdg" && chmod 0700 "$xdg"
if [ -z "$log" ]; then
  log=$(mktemp /tmp/rrt-sd-log.XXXXXX) || die "cannot make a log file"
  own_log=1
fi
bus=unix:path=$xdg/bus
as_user() {
  setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env \
    env PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" XDG_RUNTIME_DIR="$xdg" \
    DBUS_SESSION_BUS_ADDRESS="$bus" "$@"
}

# The manager, started in its delegated cgroup (a subshell moves itself there, then execs).
(
  echo "$BASHPID" >"$ucg/user@$uid.service/cgroup.procs" || exit 3
  exec setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env \
    env PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" XDG_RUNTIME_DIR="$xdg" \
    DBUS_SESSION_BUS_ADDRESS="$bus" /lib/systemd/systemd --user --log-target=console
) >"$log" 2>&1 </dev/null &
mgr=$!

# Ready when the manager says it is running (or degraded: a unit of the user's failed), up to 20 s.
state=""
for _ in $(seq 200); do
  state=$(as_user systemctl --user is-system-running 2>/dev/null)
  case $state in running | degraded) break ;; esac
  kill -0 "$mgr" 2>/dev/null || break
  sleep 0.1
done
case $state in
  running | degraded) ;;
  *)
    echo "systemd-user: the user manager of $user did not come up (state '${state:-none}'); its log:" >&2
    tail -n 20 "$log" >&2
    exit 2
    ;;
esac

(
  echo "$BASHPID" >"$ucg/session.scope/cgroup.procs" || exit 3
  as_user "$@"
)
rc=$?
exit "$rc"
