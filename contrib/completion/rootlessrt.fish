# fish completion for rootlessrt: verbs, each verb's flags and their values, container ids (from
# `rootlessrt list -q`, with the --root given on the line), signal names, files for -b.
# Installed as share/fish/vendor_completions.d/rootlessrt.fish.

set -l verbs create start run state kill delete list spec exec ps events pause resume update store pull images rmi features check checkpoint restore help

function __rootlessrt_ids
    set -l tokens (commandline -opc)
    set -l root
    for i in (seq (count $tokens))
        if test "$tokens[$i]" = --root; and test $i -lt (count $tokens)
            set root --root $tokens[(math $i + 1)]
        else if string match -q -- '--root=*' $tokens[$i]
            set root --root (string replace -- '--root=' '' $tokens[$i])
        end
    end
    $tokens[1] $root list -q 2>/dev/null
end

# The number of operands after the verb on the line (flags and the values they take skipped).
function __rootlessrt_operands
    set -l tokens (commandline -opc)
    set -l takes --root --log --log-format --rootless --cgroup-manager --criu -b --bundle \
        --pid-file --console-socket --preserve-fds --network -p --publish --network-opt --mtu \
        --cidr --ports-via --name -e --env --env-file -w --workdir -u --user -v --volume --tmpfs \
        --hostname --entrypoint --cap-add --cap-drop --security-opt --userns --overlay --storage \
        --process --cwd -c --cap --apparmor --process-label -f --format -r --resources \
        --platform --authfile
    set -l n -1
    set -l skip 0
    for t in $tokens[2..-1]
        if test $skip -eq 1
            set skip 0
        else if contains -- $t $takes; and not begin
                test "$t" = -f; and contains -- delete $tokens
            end
            set skip 1  # delete's -f is --force: no value
        else if not string match -q -- '-*' $t
            set n (math $n + 1)
        end
    end
    echo $n
end

function __rootlessrt_needs_id
    __fish_seen_subcommand_from start state delete pause resume update ps events exec kill; and test (__rootlessrt_operands) -eq 0
end

function __rootlessrt_needs_signal
    __fish_seen_subcommand_from kill; and test (__rootlessrt_operands) -eq 1
end

complete -c rootlessrt -f

# Global flags and verbs.
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -l root -r -a '(__fish_complete_directories)' -d 'the state directory'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -l log -r -F -d 'also log to this file'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -l log-format -x -a 'text json' -d 'log format'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -l debug -d 'log debug messages'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -l rootless -x -a 'true false auto' -d 'accepted for runc compatibility'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -l systemd-cgroup -d 'the systemd cgroup driver'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -l cgroup-manager -x -a 'cgroupfs systemd disabled' -d 'cgroup manager'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -l criu -r -F -d 'accepted and ignored'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -s v -l version -d 'print the version'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -s h -l help -d 'print the usage'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a create -d 'create a container'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a start -d 'start its process'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a run -d 'create and start'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a state -d 'print its state'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a kill -d 'send a signal'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a delete -d 'delete a container'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a list -d 'list containers'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a spec -d 'write a default config.json'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a exec -d 'run another process in a container'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a ps -d 'its processes'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a events -d 'its resource usage and OOM kills'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a pause -d 'freeze it'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a resume -d 'thaw it'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a update -d 'change its resources'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a store -d 'the image store'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a pull -d 'fetch an image from a registry'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a images -d "the store's images"
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a rmi -d 'remove images'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a features -d 'the features JSON'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a check -d 'check this machine for rootless containers'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a checkpoint -d 'not supported (no CRIU)'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a restore -d 'not supported (no CRIU)'
complete -c rootlessrt -n "not __fish_seen_subcommand_from $verbs" -a help -d 'the usage of a verb'

# Every verb.
complete -c rootlessrt -n "__fish_seen_subcommand_from $verbs" -s h -l help -d 'print the usage of this verb'
complete -c rootlessrt -n '__fish_seen_subcommand_from help' -a "$verbs"
complete -c rootlessrt -n __rootlessrt_needs_id -a '(__rootlessrt_ids)' -d container
complete -c rootlessrt -n __rootlessrt_needs_signal -a 'HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO PWR SYS' -d signal

# create and run.
set -l cr '__fish_seen_subcommand_from create run'
complete -c rootlessrt -n $cr -s b -l bundle -r -a '(__fish_complete_directories)' -d 'the bundle directory'
complete -c rootlessrt -n $cr -l pid-file -r -F -d 'write the init pid there'
complete -c rootlessrt -n $cr -l console-socket -r -F -d 'send the terminal master over this socket'
complete -c rootlessrt -n $cr -l preserve-fds -x -d 'pass descriptors 3 to 3+N-1'
complete -c rootlessrt -n $cr -l no-pivot -d 'accepted for runc compatibility'
complete -c rootlessrt -n $cr -l no-new-keyring -d 'keep the session keyring'
complete -c rootlessrt -n $cr -l network -x -a 'none host slirp' -d 'the network'
complete -c rootlessrt -n $cr -s p -l publish -x -d 'publish a port [HOSTIP:]HOSTPORT:CTRPORT'
complete -c rootlessrt -n $cr -l network-opt -x -d 'a network setting KEY=VALUE'
complete -c rootlessrt -n $cr -l mtu -x -d 'the MTU of the slirp network'
complete -c rootlessrt -n $cr -l ipv6 -d 'IPv6 on the slirp network'
complete -c rootlessrt -n $cr -l host-loopback -d 'let the container reach the host loopback'
complete -c rootlessrt -n $cr -l cidr -x -d 'the slirp network'
complete -c rootlessrt -n $cr -l ports-via -x -a 'splice slirp' -d 'how published ports reach the container'
complete -c rootlessrt -n '__fish_seen_subcommand_from create' -l detach -d 'a flag of run'
complete -c rootlessrt -n $cr -l no-subreaper -d 'accepted and ignored'
complete -c rootlessrt -n $cr -l keep -d 'run: keep the stopped container'
complete -c rootlessrt -n $cr -l criu -r -F -d 'accepted and ignored'

# run: the desktop form.
set -l r '__fish_seen_subcommand_from run'
complete -c rootlessrt -n $r -s d -l detach -d 'return once it runs'
complete -c rootlessrt -n $r -l rm -d 'remove the container and its changes when deleted'
complete -c rootlessrt -n $r -s i -l interactive -d 'keep stdin open'
complete -c rootlessrt -n $r -s t -l tty -d 'a terminal'
complete -c rootlessrt -n $r -l name -x -d 'the container name'
complete -c rootlessrt -n $r -s e -l env -x -d 'an environment variable KEY=VALUE'
complete -c rootlessrt -n $r -l env-file -r -F -d 'environment variables from a file'
complete -c rootlessrt -n $r -s w -l workdir -x -d 'the working directory'
complete -c rootlessrt -n $r -s u -l user -x -d 'the user USER[:GROUP]'
complete -c rootlessrt -n $r -s v -l volume -r -F -d 'bind SRC:DST[:ro]'
complete -c rootlessrt -n $r -l tmpfs -x -d 'a tmpfs DST[:OPTS]'
complete -c rootlessrt -n $r -l hostname -x -d 'the host name'
complete -c rootlessrt -n $r -l read-only -d 'a read-only root'
complete -c rootlessrt -n $r -l read-only-tmpfs -d 'with --read-only, tmpfs on /run, /tmp, /var/tmp'
complete -c rootlessrt -n $r -l entrypoint -x -d 'replace the entrypoint'
complete -c rootlessrt -n $r -l cap-add -x -d 'add a capability'
complete -c rootlessrt -n $r -l cap-drop -x -d 'drop a capability'
complete -c rootlessrt -n $r -l security-opt -x -a 'no-new-privileges seccomp=unconfined label=disable' -d 'a security option'
complete -c rootlessrt -n $r -l userns -x -a keep-id -d 'user namespace mode'
complete -c rootlessrt -n $r -l overlay -x -a 'auto kernel fuse' -d 'how the overlay root is mounted'
complete -c rootlessrt -n $r -l storage -r -a '(__fish_complete_directories)' -d 'the store'
complete -c rootlessrt -n $r -l print-config -d 'print the config and run nothing'
complete -c rootlessrt -n $r -l platform -x -a 'linux/amd64 linux/arm64 linux/arm/v7' -d 'the platform of a registry image'
complete -c rootlessrt -n $r -l authfile -r -F -d 'the registry credentials file'
complete -c rootlessrt -n $r -l tls-verify -x -a 'true false' -d "verify the registry's TLS"
complete -c rootlessrt -n $r -l pull -x -a 'always missing never newer' -d 'when to ask the registry'
complete -c rootlessrt -n $r -F

# The other verbs.
complete -c rootlessrt -n '__fish_seen_subcommand_from kill' -s a -l all -d 'signal every process'
complete -c rootlessrt -n '__fish_seen_subcommand_from delete' -s f -l force -d 'kill it first'
complete -c rootlessrt -n '__fish_seen_subcommand_from list ps' -s f -l format -x -a 'table json' -d 'output format'
complete -c rootlessrt -n '__fish_seen_subcommand_from events' -l interval -x -d 'time between statistics (5s, 100ms)'
complete -c rootlessrt -n '__fish_seen_subcommand_from events' -l stats -d 'print the statistics once and exit'
complete -c rootlessrt -n '__fish_seen_subcommand_from list' -s q -l quiet -d 'only the ids'
complete -c rootlessrt -n '__fish_seen_subcommand_from spec' -s b -l bundle -r -a '(__fish_complete_directories)' -d 'the bundle directory'
complete -c rootlessrt -n '__fish_seen_subcommand_from spec' -l rootless -d 'a config for an unprivileged user'
set -l x '__fish_seen_subcommand_from exec'
complete -c rootlessrt -n $x -s p -l process -r -F -d 'the process JSON'
complete -c rootlessrt -n $x -s t -l tty -d 'a terminal'
complete -c rootlessrt -n $x -l console-socket -r -F -d 'send the terminal master over this socket'
complete -c rootlessrt -n $x -s d -l detach -d 'return once it runs'
complete -c rootlessrt -n $x -l pid-file -r -F -d 'write its pid there'
complete -c rootlessrt -n $x -s e -l env -x -d 'an environment variable KEY=VALUE'
complete -c rootlessrt -n $x -l cwd -x -d 'the working directory'
complete -c rootlessrt -n $x -s u -l user -x -d 'the user UID[:GID]'
complete -c rootlessrt -n $x -s c -l cap -x -d 'a capability'
complete -c rootlessrt -n $x -l no-new-privs -d 'set no_new_privs'
complete -c rootlessrt -n $x -l preserve-fds -x -d 'pass descriptors 3 to 3+N-1'
complete -c rootlessrt -n $x -l cgroup -x -d 'run in a sub-cgroup of the container'
complete -c rootlessrt -n $x -l additional-gids -x -d 'a supplementary group'
complete -c rootlessrt -n $x -l ignore-paused -d 'a paused container too: the process runs at resume'
complete -c rootlessrt -n $x -l apparmor -x -d 'accepted and ignored'
complete -c rootlessrt -n $x -l process-label -x -d 'accepted and ignored'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -s r -l resources -r -F -d 'linux.resources JSON, - for stdin'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l memory -x -d 'memory limit, bytes'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l memory-reservation -x -d 'soft memory limit, bytes'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l memory-swap -x -d 'memory+swap, bytes'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l cpu-share -x -d 'cpu shares'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l cpu-period -x -d 'CFS period, us'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l cpu-quota -x -d 'CFS quota, us'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l cpu-rt-period -x -d 'realtime period, us'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l cpu-rt-runtime -x -d 'realtime runtime, us'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l cpuset-cpus -x -d 'cpus to run on'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l cpuset-mems -x -d 'memory nodes'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l pids-limit -x -d 'max tasks'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l blkio-weight -x -d 'io weight'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l kernel-memory -x -d 'ignored (deprecated)'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l kernel-memory-tcp -x -d 'ignored (deprecated)'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l l3-cache-schema -x -d 'Intel RDT: refused'
complete -c rootlessrt -n '__fish_seen_subcommand_from update' -l mem-bw-schema -x -d 'Intel RDT: refused'
complete -c rootlessrt -n '__fish_seen_subcommand_from store' -l storage -r -a '(__fish_complete_directories)' -d 'the store'
complete -c rootlessrt -n '__fish_seen_subcommand_from store; and test (__rootlessrt_operands) -eq 0' -a 'ls rm prune'
complete -c rootlessrt -n '__fish_seen_subcommand_from store' -s f -l force -d 'rm: a layer an image uses too'
complete -c rootlessrt -n '__fish_seen_subcommand_from images' -l storage -r -a '(__fish_complete_directories)' -d 'the store'
complete -c rootlessrt -n '__fish_seen_subcommand_from images' -s q -l quiet -d 'only the ids'
complete -c rootlessrt -n '__fish_seen_subcommand_from images' -l no-trunc -d 'the whole ids'
complete -c rootlessrt -n '__fish_seen_subcommand_from images' -s n -l noheading -d 'no header'
complete -c rootlessrt -n '__fish_seen_subcommand_from images' -s a -l all -d 'all images'
complete -c rootlessrt -n '__fish_seen_subcommand_from images' -l format -x -a 'table json' -d 'output format'
complete -c rootlessrt -n '__fish_seen_subcommand_from rmi' -l storage -r -a '(__fish_complete_directories)' -d 'the store'
complete -c rootlessrt -n '__fish_seen_subcommand_from rmi' -s f -l force -d 'also an image a container uses'
complete -c rootlessrt -n '__fish_seen_subcommand_from rmi' -s a -l all -d 'every image'
complete -c rootlessrt -n '__fish_seen_subcommand_from pull' -l storage -r -a '(__fish_complete_directories)' -d 'the store'
complete -c rootlessrt -n '__fish_seen_subcommand_from pull' -l platform -x -a 'linux/amd64 linux/arm64 linux/arm/v7' -d 'the platform to pull'
complete -c rootlessrt -n '__fish_seen_subcommand_from pull' -l authfile -r -F -d 'the registry credentials file'
complete -c rootlessrt -n '__fish_seen_subcommand_from pull' -l tls-verify -x -a 'true false' -d "verify the registry's TLS"
complete -c rootlessrt -n '__fish_seen_subcommand_from check' -l json -d 'print JSON'
complete -c rootlessrt -n '__fish_seen_subcommand_from check' -l storage -r -a '(__fish_complete_directories)' -d 'the storage directory to test'
