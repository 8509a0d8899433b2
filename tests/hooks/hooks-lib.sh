# shellcheck shell=bash disable=SC2016 # jq filters use $vars
# hooks-lib.sh: sourced by tests/integration/t-hooks*.sh after lib.sh: bundles with OCI hooks made
# of the scripts in this directory.
#
# hbundle puts these scripts into the container's rootfs too (/hooks/...), since a startContainer
# hook's path resolves inside the container, and bind-mounts BUNDLE/log (host) at /hooklog, so
# that every hook, wherever it runs, logs into the same host directory.

HOOKS_DIR=$TESTS_DIR/hooks
HOOK_PATH_ENV="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Every kind, in the order runtime.md calls them.
HOOK_KINDS=(prestart createRuntime createContainer startContainer poststart poststop)

# hook_json PATH [ARGV...]: a hook entry with args = ARGV (argv[0] included) and env = [PATH=...].
hook_json() {
  local p=$1 a='[]' x
  shift
  # One --arg each: jq 1.6 takes a positional argument such as -E for an option of its own.
  for x in "$@"; do a=$(jq -cn --argjson a "$a" --arg x "$x" '$a + [$x]'); done
  jq -cn --arg p "$p" --arg e "$HOOK_PATH_ENV" --argjson a "$a" '{path: $p, args: $a, env: [$e]}'
}

add_hook() { # add_hook BUNDLE KIND JSON: appends JSON to hooks.KIND
  cfg "$1" '.hooks[$k] = ((.hooks[$k] // []) + [$h])' --arg k "$2" --argjson h "$3" ||
    bail_out "cannot add a $2 hook to $1/config.json"
}

hbundle() { # hbundle NAME ARGS...: mkbundle NAME ARGS... plus the hook scripts and /hooklog
  local b
  b=$(mkbundle "$@") || exit 1
  if ! { mkdir -p "$b/rootfs/hooks" "$b/rootfs/hooklog" "$b/log" &&
    cp "$HOOKS_DIR"/*.sh "$b/rootfs/hooks/" && chmod 0755 "$b/rootfs/hooks/"*.sh; }; then
    bail_out "cannot copy the hook scripts into $b/rootfs"
  fi
  cfg "$b" '.mounts += [{destination: "/hooklog", type: "bind", source: $d, options: ["rbind", "rw"]}]' \
    --arg d "$b/log" || bail_out "cannot edit $b/config.json"
  printf '%s\n' "$b"
}

# hook_dir BUNDLE KIND: the log directory as the hook of KIND sees it.
hook_dir() {
  if [ "$2" = startContainer ]; then echo /hooklog; else echo "$1/log"; fi
}

# hook_script BUNDLE KIND SCRIPT: the path of tests/hooks/SCRIPT as the hook of KIND resolves it.
hook_script() {
  if [ "$2" = startContainer ]; then echo "/hooks/$3"; else echo "$HOOKS_DIR/$3"; fi
}

# log_hook BUNDLE KIND [NAME [exe]]: appends a log-hook.sh (logging as NAME) to hooks.KIND.
log_hook() {
  local b=$1 kind=$2 name=${3:-$2}
  shift 3 2>/dev/null || shift $#
  add_hook "$b" "$kind" "$(hook_json "$(hook_script "$b" "$kind" log-hook.sh)" log-hook.sh "$name" \
    "$(hook_dir "$b" "$kind")" "$@")"
}

all_log_hooks() { # all_log_hooks BUNDLE: one log-hook.sh for every kind
  local k
  for k in "${HOOK_KINDS[@]}"; do log_hook "$1" "$k"; done
}

phase() { # phase BUNDLE NAME: the command about to run, as the hooks will log it
  echo "$2" >"$1/log/phase"
}

hook_log() { # hook_log BUNDLE: "KIND PHASE" per logged hook run
  awk '{print $1, $4}' "$1/log/log" 2>/dev/null
}

contains() { # contains TEXT SUBSTRING NAME: a fixed-string match (paths have regex characters)
  if [[ $1 == *"$2"* ]]; then
    pass "$3"
  else
    fail "$3" "got:              '$1'" "expected to contain: '$2'"
  fi
}
