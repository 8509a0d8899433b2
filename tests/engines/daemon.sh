# shellcheck shell=bash
# daemon.sh: sourced by the engine suites: waiting for a daemon they started, and a containerd of
# their own (its root, state and sockets in one directory, the plugins this host lacks disabled).

# wait_answering PID SECONDS CMD...: polls CMD every 0.1 s until it succeeds (status 0); status 1
# once PID is gone or after SECONDS.
wait_answering() {
  local pid=$1 tries=$(($2 * 10))
  shift 2
  for _ in $(seq "$tries"); do
    "$@" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  "$@" >/dev/null 2>&1
}

# containerd_config DIR [PLUGIN...]: prints the start of a config.toml for a containerd whose
# root, state and sockets (DIR/c.sock, DIR/c.sock.ttrpc) are in DIR; the snapshotters and the
# tracing processor this host has no use for are disabled, and each PLUGIN too. A caller adds its
# plugins' sections after it.
containerd_config() {
  local dir=$1 p list
  shift
  list='"io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp"'
  for p in "$@"; do list+=", \"$p\""; done
  cat <<TOML
version = 2
root = "$dir/root"
state = "$dir/state"
disabled_plugins = [$list]
[grpc]
  address = "$dir/c.sock"
[ttrpc]
  address = "$dir/c.sock.ttrpc"
TOML
}

# start_containerd DIR: containerd with DIR/config.toml, its log in DIR/containerd.log, its pid in
# ctrd_pid; status 0 once `ctr version` answers on DIR/c.sock (20 s at the most), 1 if it never
# does (it died, or hangs: the caller's cleanup kills ctrd_pid).
start_containerd() {
  containerd --config "$1/config.toml" >"$1/containerd.log" 2>&1 &
  ctrd_pid=$!
  wait_answering "$ctrd_pid" 20 timeout -k 5 60 ctr --address "$1/c.sock" version
}
