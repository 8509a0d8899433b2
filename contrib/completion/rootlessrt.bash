# bash completion for rootlessrt: verbs, each verb's flags and their values, container ids (from
# `rootlessrt list -q`, with the --root given on the line), signal names, files for -b.
# Installed as share/bash-completion/completions/rootlessrt.

_rootlessrt_verbs="create start run state kill delete list spec exec ps events pause resume update store
pull images rmi features check checkpoint restore help"
_rootlessrt_globals="--root --log --log-format --debug --rootless --systemd-cgroup
--cgroup-manager --criu -v --version -h --help"
_rootlessrt_signals="HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM
STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO PWR SYS"
_rootlessrt_caps="CAP_AUDIT_CONTROL CAP_AUDIT_READ CAP_AUDIT_WRITE CAP_BLOCK_SUSPEND CAP_BPF
CAP_CHECKPOINT_RESTORE CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_FSETID
CAP_IPC_LOCK CAP_IPC_OWNER CAP_KILL CAP_LEASE CAP_LINUX_IMMUTABLE CAP_MAC_ADMIN
CAP_MAC_OVERRIDE CAP_MKNOD CAP_NET_ADMIN CAP_NET_BIND_SERVICE CAP_NET_BROADCAST CAP_NET_RAW
CAP_PERFMON CAP_SETFCAP CAP_SETGID CAP_SETPCAP CAP_SETUID CAP_SYS_ADMIN CAP_SYS_BOOT
CAP_SYS_CHROOT CAP_SYS_MODULE CAP_SYS_NICE CAP_SYS_PACCT CAP_SYS_PTRACE CAP_SYS_RAWIO
CAP_SYS_RESOURCE CAP_SYS_TIME CAP_SYS_TTY_CONFIG CAP_SYSLOG CAP_WAKE_ALARM"

# The flags of a verb.
_rootlessrt_flags() {
  local create="-b --bundle --pid-file --console-socket --preserve-fds --no-pivot
    --no-new-keyring --network -p --publish --network-opt --mtu --ipv6 --host-loopback --cidr
    --ports-via --detach --no-subreaper --keep --criu -h --help"
  case $1 in
    create) echo "$create" ;;
    run)
      echo "$create -d --rm -i --interactive -t --tty --name -e --env --env-file -w --workdir
        -u --user -v --volume --tmpfs --hostname --read-only --read-only-tmpfs --entrypoint
        --cap-add --cap-drop --security-opt --userns --overlay --storage --print-config
        --platform --authfile --tls-verify --pull"
      ;;
    kill) echo "-a --all -h --help" ;;
    delete) echo "-f --force -h --help" ;;
    list) echo "-f --format -q --quiet -h --help" ;;
    spec) echo "-b --bundle --rootless -h --help" ;;
    exec)
      echo "-p --process -t --tty --console-socket -d --detach --pid-file -e --env --cwd -u
        --user -c --cap --no-new-privs --preserve-fds --cgroup --ignore-paused --additional-gids --apparmor --process-label -h
        --help"
      ;;
    ps) echo "-f --format -h --help" ;;
    events) echo "--interval --stats -h --help" ;;
    update) echo "-r --resources --memory --memory-reservation --memory-swap --cpu-share --cpu-period
      --cpu-quota --cpu-rt-period --cpu-rt-runtime --cpuset-cpus --cpuset-mems --pids-limit
      --blkio-weight --kernel-memory --kernel-memory-tcp --l3-cache-schema --mem-bw-schema -h
      --help" ;;
    store) echo "--storage -f --force -h --help" ;;
    pull) echo "--storage --platform --authfile --tls-verify -h --help" ;;
    images) echo "--storage -q --quiet --no-trunc -n --noheading -a --all --format -h --help" ;;
    rmi) echo "--storage -f --force -a --all -h --help" ;;
    check) echo "--json --storage -h --help" ;;
    *) echo "-h --help" ;;
  esac
}

# The values of a flag that takes one (in COMPREPLY); 1 when the flag takes none.
_rootlessrt_value() { # _rootlessrt_value VERB FLAG CUR (VERB empty: a global flag)
  local verb=$1 cur=$3 words=""
  case $2 in
    -b | --bundle | --root | --storage | --cwd | -w | --workdir)
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      return 0
      ;;
    --pid-file | --console-socket | --log | --env-file | --criu | -r | --resources | --process | \
      --authfile)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0
      ;;
    -p)
      [ "$verb" = exec ] && mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0
      ;;
    -v | --volume)
      [ -z "$verb" ] && return 1
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0
      ;;
    -f | --format)
      case $verb in delete | store | rmi) return 1 ;; esac
      words="table json"
      ;;
    --pull) words="always missing never newer" ;;
    --log-format) words="text json" ;;
    --rootless) [ -n "$verb" ] && return 1 || words="true false auto" ;;
    --network) words="none host slirp" ;;
    --ports-via) words="splice slirp" ;;
    --cgroup-manager) words="cgroupfs systemd disabled" ;;
    --overlay) words="auto kernel fuse" ;;
    --platform) words="linux/amd64 linux/arm64 linux/arm/v7" ;;
    --userns) words="keep-id" ;;
    -c | --cap | --cap-add | --cap-drop) words=$_rootlessrt_caps ;;
    --security-opt) words="no-new-privileges seccomp=unconfined label=disable" ;;
    -u | --user | -e | --env | --name | --mtu | --cidr | --preserve-fds | --cgroup | --publish | \
      --network-opt | --tmpfs | --hostname | --entrypoint | --apparmor | --process-label | \
      --memory | --memory-reservation | --memory-swap | --cpu-share | --cpu-period | --cpu-quota | \
      --cpu-rt-period | --cpu-rt-runtime | --cpuset-cpus | --cpuset-mems | --pids-limit | \
      --blkio-weight | --kernel-memory | --kernel-memory-tcp | --l3-cache-schema | --mem-bw-schema) ;;
    *) return 1 ;;
  esac
  [ -n "$words" ] && mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
  return 0
}

_rootlessrt() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local rt=${COMP_WORDS[0]} root="" verb="" i=1 n=0 w
  COMPREPLY=()
  while [ "$i" -lt "$COMP_CWORD" ]; do
    w=${COMP_WORDS[i]}
    case $w in
      --root) root=${COMP_WORDS[i + 1]} i=$((i + 1)) ;;
      --root=*) root=${w#--root=} ;;
      --log | --log-format | --rootless | --cgroup-manager | --criu) i=$((i + 1)) ;;
      -*) ;;
      *)
        verb=$w
        break
        ;;
    esac
    i=$((i + 1))
  done
  if [ -z "$verb" ]; then
    _rootlessrt_value "" "$prev" "$cur" && return
    if [[ $cur == -* ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$_rootlessrt_globals" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -W "$_rootlessrt_verbs" -- "$cur")
    fi
    return
  fi
  # The flags of the verb take values: skip them to count the operands before the cursor.
  local vi=$i
  for ((i = vi + 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      -*) (_rootlessrt_value "$verb" "$w" "" >/dev/null) && [[ $w != *=* ]] && i=$((i + 1)) ;;
      *) n=$((n + 1)) ;;
    esac
  done
  if [[ $prev == -* ]] && [ "$COMP_CWORD" -gt $((vi + 1)) ] && _rootlessrt_value "$verb" "$prev" "$cur"; then
    return
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_rootlessrt_flags "$verb")" -- "$cur")
    return
  fi
  case $verb in
    start | state | delete | pause | resume | update | ps | events | exec)
      [ "$n" -eq 0 ] && mapfile -t COMPREPLY < <(compgen -W "$("$rt" ${root:+--root "$root"} list -q 2>/dev/null)" -- "$cur")
      ;;
    kill)
      if [ "$n" -eq 0 ]; then
        mapfile -t COMPREPLY < <(compgen -W "$("$rt" ${root:+--root "$root"} list -q 2>/dev/null)" -- "$cur")
      elif [ "$n" -eq 1 ]; then
        mapfile -t COMPREPLY < <(compgen -W "$_rootlessrt_signals" -- "$cur")
      fi
      ;;
    run) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    store) [ "$n" -eq 0 ] && mapfile -t COMPREPLY < <(compgen -W "ls rm prune" -- "$cur") ;;
    help) [ "$n" -eq 0 ] && mapfile -t COMPREPLY < <(compgen -W "$_rootlessrt_verbs" -- "$cur") ;;
  esac
}
complete -F _rootlessrt rootlessrt
