/* flag_docs.c: what `rootlessrt help VERB` says after a verb's synopsis: paragraphs about it and
 * each of its flags. man/mkman.sh makes the verb's man page, rootlessrt-VERB(1), from that
 * output; t-docs checks that every flag the verb's parser takes is described here. Plain text:
 * usage.c wraps it to the terminal and mkman.sh to roff. */
#include <stddef.h>

#include "rootlessrt/cmd.h"

#define END                                                                                        \
  {                                                                                                \
    NULL, NULL                                                                                     \
  }
#define STORAGE_FLAG                                                                               \
  {                                                                                                \
    "--storage DIR", "The image store (default: $XDG_DATA_HOME/rootlessrt, or "                    \
                     "~/.local/share/rootlessrt)."                                                 \
  }
#define REGISTRY_FLAGS                                                                             \
  {"--platform OS/ARCH[/VARIANT]",                                                                 \
   "The image of a registry's manifest list to use (default: this machine's, e.g. "                \
   "linux/amd64)."},                                                                               \
      {"--authfile FILE",                                                                          \
       "Registry credentials (default: the first of $REGISTRY_AUTH_FILE, "                         \
       "$XDG_RUNTIME_DIR/containers/auth.json, ~/.config/containers/auth.json and "                \
       "~/.docker/config.json that exists)."},                                                     \
  {                                                                                                \
    "--tls-verify=false", "Do not verify the registry's certificate, and use plain http when it "  \
                          "does not speak TLS."                                                    \
  }
#define FORMAT_FLAG                                                                                \
  {                                                                                                \
    "-f, --format table|json", "The output format (default: table)."                               \
  }

/* The flags of create, which the first form of run takes too. */
#define CREATE_FLAGS                                                                               \
  {"-b, --bundle DIR", "The bundle (default: the current directory)."},                            \
      {"--pid-file FILE", "Write the container's init pid there (atomically)."},                   \
      {"--console-socket SOCKET",                                                                  \
       "With process.terminal true: send the pseudo-terminal's master over this unix socket "      \
       "(with "                                                                                    \
       "process.terminal false it is an error, as with runc: nothing would ever be sent)."},       \
      {"--preserve-fds N", "Pass descriptors 3 to 3+N-1 to the container."},                       \
      {"--no-pivot",                                                                               \
       "Accepted for runc compatibility; the rootfs is entered with pivot_root all the same."},    \
      {"--no-new-keyring", "Keep the caller's session keyring instead of a new one."},             \
      {"--network none|host|slirp",                                                                \
       "none (the default with a network namespace): loopback only; host: no network namespace; "  \
       "slirp: a tap device in the container and libslirp in rootlessrt-net, a helper that lives " \
       "as long as the container."},                                                               \
      {"-p, --publish [HOSTIP:]HOSTPORT:CTRPORT[/tcp|/udp]",                                       \
       "Publish a port (repeatable); the host side listens on 127.0.0.1 unless an address is "     \
       "given."},                                                                                  \
      {"--mtu N", "The MTU of the slirp network (default: 65520)."},                               \
      {"--ipv6", "Give the slirp network IPv6 too."},                                              \
      {"--host-loopback", "Let the container reach the host's 127.0.0.1 through 10.0.2.2."},       \
      {"--cidr CIDR", "The slirp network (default: 10.0.2.0/24)."},                                \
      {"--ports-via splice|slirp",                                                                 \
       "How published ports reach the container: sockets made in its network namespace (splice, "  \
       "the default) or through the slirp stack."},                                                \
      {"--network-opt KEY=VALUE",                                                                  \
       "Any of the network settings above as KEY=VALUE (repeatable): network, mtu, ipv6, "         \
       "host-loopback, cidr, ports-via."},

static const struct rrt_flag_doc create_flags[] = {
    CREATE_FLAGS{"--detach", "A flag of run: create refuses it."},
    {"--no-subreaper, --keep, --criu PATH", "Accepted for runc compatibility and ignored."},
    END,
};

static const struct rrt_flag_doc run_flags[] = {
    {NULL, "The first form (a bundle, as runc): the flags of create, and"},
    CREATE_FLAGS{
        "-d, --detach",
        "Return once the container runs. Without it, run stays in the foreground, forwards "
        "signals, "
        "exits with the container's status (128+N when killed by signal N) and deletes it."},
    {"--keep", "runc's: in the foreground, the stopped container is kept for state and delete."},
    {"--no-subreaper, --criu PATH", "Accepted for runc compatibility and ignored."},
    {NULL, "The second form (an image or a root directory, with flags as in podman run)"},
    {"--rm", "Remove the container's changes and its bundle when it is deleted."},
    {"-d, --detach", "Return once the container runs."},
    {"-i, --interactive", "Keep stdin open."},
    {"-t, --tty", "A terminal (default: when stdin and stdout are one)."},
    {"--name NAME", "The container's name (its id)."},
    {"-e, --env KEY=VALUE", "An environment variable (repeatable)."},
    {"--env-file FILE", "Environment variables, one a line (repeatable)."},
    {"-w, --workdir DIR", "The working directory."},
    {"-u, --user USER[:GROUP]",
     "The user (names from the image's own /etc/passwd and /etc/group)."},
    {"-v, --volume SRC:DST[:ro]", "Bind SRC at DST (repeatable)."},
    {"--tmpfs DST[:OPTS]", "A tmpfs at DST (repeatable)."},
    {"-p, --publish [HOSTIP:]HOSTPORT:CTRPORT[/tcp|/udp]", "As for the first form."},
    {"--network none|host|slirp", "As for the first form."},
    {"--hostname NAME", "The container's host name."},
    {"--read-only", "A read-only root."},
    {"--read-only-tmpfs[=true|false]",
     "With --read-only: tmpfs on /run, /tmp and /var/tmp so they stay writable (the default, as "
     "in podman); =false leaves them read-only."},
    {"--entrypoint CMD", "Replace the image's entrypoint."},
    {"--cap-add CAP", "Add a capability (repeatable)."},
    {"--cap-drop CAP", "Drop a capability (repeatable)."},
    {"--security-opt OPT",
     "no-new-privileges, seccomp=FILE|unconfined, apparmor=PROFILE or label=disable "
     "(repeatable)."},
    {"--userns keep-id", "Map the caller to its own uid in the container."},
    {"--overlay auto|kernel|fuse", "How the overlay root is mounted."},
    STORAGE_FLAG,
    {"--print-config", "Print the generated config.json and run nothing."},
    REGISTRY_FLAGS,
    {"--pull always|missing|never|newer",
     "When a registry image is asked of its registry (podman's): missing (the default for a "
     "name: the store's image of that name runs offline), always (the default for docker://), "
     "never (the store's only), newer (asked each time; the stored image runs, with a warning, "
     "when the registry cannot be asked)."},
    END,
};

static const struct rrt_flag_doc kill_flags[] = {
    {"-a, --all", "Signal every process of the container (its cgroup or its pid namespace)."},
    END,
};

static const struct rrt_flag_doc delete_flags[] = {
    {"-f, --force", "Kill a running (or paused) container first; remove a broken one."},
    END,
};

static const struct rrt_flag_doc list_flags[] = {
    FORMAT_FLAG,
    {"-q, --quiet", "Only the ids, one a line."},
    END,
};

static const struct rrt_flag_doc spec_flags[] = {
    {"-b, --bundle DIR", "Where to write config.json (default: the current directory)."},
    {"--rootless",
     "A config for an unprivileged user (the default when not privileged): a user namespace, no "
     "devices that need privilege."},
    END,
};

static const struct rrt_flag_doc exec_flags[] = {
    {"-p, --process FILE",
     "The process as OCI process JSON (the other flags then only override it)."},
    {"-t, --tty", "A terminal."},
    {"--console-socket SOCKET", "Send the terminal's master over this unix socket."},
    {"-d, --detach", "Return once the process runs."},
    {"--pid-file FILE", "Write its pid there."},
    {"-e, --env KEY=VALUE", "An environment variable (repeatable)."},
    {"--cwd DIR", "The working directory."},
    {"-u, --user UID[:GID]", "The user."},
    {"-c, --cap CAP", "A capability (repeatable)."},
    {"--no-new-privs", "Set no_new_privs."},
    {"--preserve-fds N", "Pass descriptors 3 to 3+N-1."},
    {"--cgroup [CONTROLLER[,CONTROLLER]:]PATH",
     "Run the process in a sub-cgroup of the container's that exists (repeatable, as runc): "
     "without controllers in every hierarchy, with them in those cgroup v1 ones; on cgroup v2 a "
     "path alone."},
    {"--additional-gids GID", "A supplementary group of the process (repeatable; replaces "
                              "process.user.additionalGids)."},
    {"--ignore-paused",
     "Exec into a paused container too: the process joins the frozen cgroup and runs once the "
     "container is resumed (without it, a paused container is an error, as with runc)."},
    {"--apparmor PROFILE, --process-label LABEL", "Accepted; a warning says they are ignored."},
    END,
};

static const struct rrt_flag_doc ps_flags[] = {FORMAT_FLAG, END};

static const struct rrt_flag_doc events_flags[] = {
    {"--interval DURATION",
     "Time between two statistics lines (a Go duration as runc takes it: 5s, the default, 100ms, "
     "1m30s)."},
    {"--stats", "Print the statistics once and exit."},
    END,
};

static const struct rrt_flag_doc update_flags[] = {
    {"-r, --resources FILE|-", "A linux.resources JSON object (- for stdin)."},
    {"--memory B", "The memory limit."},
    {"--memory-reservation B", "The memory soft limit."},
    {"--memory-swap B", "The memory+swap limit."},
    {"--cpu-share N", "CPU shares."},
    {"--cpu-period US", "The CFS period, in microseconds."},
    {"--cpu-quota US", "The CFS quota, in microseconds."},
    {"--cpu-rt-period US", "The realtime period, in microseconds."},
    {"--cpu-rt-runtime US", "The realtime runtime, in microseconds."},
    {"--cpuset-cpus LIST", "The CPUs to run on (0-3,6)."},
    {"--cpuset-mems LIST", "The memory nodes to run on."},
    {"--pids-limit N", "The most tasks (-1 or 0: no limit)."},
    {"--blkio-weight N", "The block I/O weight."},
    {"--kernel-memory B, --kernel-memory-tcp B",
     "runc's deprecated kernel memory limits: a warning says they are ignored."},
    {"--l3-cache-schema S, --mem-bw-schema S", "runc's Intel RDT flags: refused."},
    END,
};

static const struct rrt_flag_doc store_flags[] = {
    STORAGE_FLAG,
    {"-f, --force",
     "store rm of a layer an image uses removes it all the same (the image then counts as "
     "missing: the next run pulls or imports it again); a layer a container uses always stays."},
    END,
};

static const struct rrt_flag_doc images_flags[] = {
    STORAGE_FLAG,
    {"-q, --quiet", "Only the image ids."},
    {"--no-trunc", "The whole id (sha256:HEX)."},
    {"-n, --noheading", "No header line."},
    {"-a, --all", "Accepted (there are no intermediate images to show)."},
    {"--format json|table",
     "A JSON array (podman's fields: Id, RepoTags, RepoDigests, Size, Names, Digest, Created, "
     "CreatedAt...), or the table."},
    END,
};

static const struct rrt_flag_doc rmi_flags[] = {
    STORAGE_FLAG,
    {"-f, --force",
     "Remove the record of an image a container uses all the same (its layers stay while it uses "
     "them)."},
    {"-a, --all", "Every image."},
    END,
};

static const struct rrt_flag_doc pull_flags[] = {STORAGE_FLAG, REGISTRY_FLAGS, END};

static const struct rrt_flag_doc check_flags[] = {
    {"--json",
     "The same as a JSON object: distribution, user, items (each with name, status, found, fix) "
     "and summary."},
    {"--storage DIR", "The storage directory to test (default: $XDG_DATA_HOME/rootlessrt, or "
                      "~/.local/share/rootlessrt)."},
    END,
};

const struct rrt_verb_help rrt_verb_helps[] = {
    {"create", NULL, create_flags},
    {"start",
     "It returns once the container's process has been executed, or with the reason it "
     "could not be.",
     NULL},
    {"run",
     "The first form creates and starts the container of a bundle. The second runs an image or a "
     "root directory on a copy-on-write overlay, as podman run does: the root directory is "
     "never modified; an image comes from an OCI layout, an OCI or Docker archive, or a "
     "registry (pulled into the store first).",
     run_flags},
    {"state",
     "The OCI state JSON (ociVersion, id, status, pid, bundle, annotations), plus runc's created "
     "and owner. The status is creating while a create is still at work; a broken container is "
     "an error that says how to remove it.",
     NULL},
    {"kill",
     "A stopped container is an error saying container not running; once init has exited, "
     "--all still signals what it left in its cgroup.",
     kill_flags},
    {"delete", NULL, delete_flags},
    {"list", "Every container under the root, half-made ones included.", list_flags},
    {"spec",
     "The config runs an interactive sh on a terminal, as runc's and crun's do; run accepts it "
     "unchanged.",
     spec_flags},
    {"exec", "It exits with the process's status (127: not found, 126: not executable).",
     exec_flags},
    {"ps",
     "The table is what the host's ps(1) prints with PS_ARGS (default -ef), cut to the header and "
     "the container's processes, as runc prints it; JSON is the list of their pids.",
     ps_flags},
    {"events",
     "Each line is runc's JSON: {\"type\":\"stats\",\"id\":ID,\"data\":{cpu, memory, pids, "
     "...}}, read from the container's cgroup files; an OOM kill in its cgroup prints "
     "{\"type\":\"oom\",\"id\":ID}. It ends once the container is deleted.",
     events_flags},
    {"pause",
     "The container needs a cgroup (cgroup v2 cgroup.freeze, or v1 freezer.state as root).", NULL},
    {"resume", NULL, NULL},
    {"update",
     "The flags are runc's and build the same linux.resources object; with --resources they are "
     "an error. B is a number of bytes, with k, m, g or t, or -1 for no limit; 0 leaves a value "
     "unchanged. All of it is applied or none: every file is read before it is written, and a "
     "failed write puts back what was written.",
     update_flags},
    {"store",
     "ls prints each image, layer and container's kept changes with its size, and the partial "
     "downloads a later pull resumes; rm removes what it names (a layer an image uses stays "
     "unless --force); prune removes the images left without a name, then every layer and blob no "
     "image and no container uses.",
     store_flags},
    {"pull",
     "A name without a registry is looked up in the unqualified-search-registries of "
     "registries.conf; docker://NAME means Docker Hub, as for skopeo.\n\n"
     "A layer whose download was cut short (the registry went away, the pull was killed) is "
     "resumed by the next pull of it: the bytes received are kept in "
     "STORE/tmp/partial-sha256-HEX, and the rest is asked for with Range: bytes=N-. A registry "
     "that ignores the range sends the layer again from its first byte; the digest over all of "
     "it decides. Such files go once the layer arrived whole, or after 24 hours; store ls lists "
     "them.\n\n"
     "An archive or a layout (docker-archive:, oci-archive:, oci:) is imported instead, and "
     "recorded by its name (a docker-archive's RepoTags), so that run NAME finds it offline.",
     pull_flags},
    {"images",
     "The images the store holds by name, pulled or imported, newest first, as podman images "
     "prints them: CREATED is the config's created (else when it was recorded), SIZE the "
     "layers' uncompressed size in decimal units.",
     images_flags},
    {"rmi",
     "A name of an image that has other names is untagged (Untagged: NAME); otherwise the "
     "record goes, with the layers no other image and no container uses (Deleted: ID). An "
     "image a desktop container of this --root uses is refused, naming it, unless --force.",
     rmi_flags},
    {"features",
     "The runtime-spec features document: the OCI versions, hooks, mount options, annotations, "
     "and for Linux the namespaces, capabilities, cgroup, seccomp (the actions, architectures "
     "and flags of the linked libseccomp), AppArmor, SELinux and Intel RDT support.",
     NULL},
    {"check",
     "One line per item: ok, warn or fail, the item, what was found and, for a problem, -> fix: "
     "and the command that fixes it on this distribution family (Debian/Ubuntu, Fedora/RHEL, "
     "Arch, openSUSE, from /etc/os-release). fail means a default rootless run cannot work, warn "
     "that a feature is missing; the exit status is 1 when an item fails.\n\n"
     "The items: subuid, subgid, newuidmap, newgidmap (tried on a throwaway user namespace), "
     "userns (the sysctls, and a throwaway user and mount namespace), apparmor "
     "(kernel.apparmor_restrict_unprivileged_userns and rootlessrt's profile), overlay (kernel "
     "overlayfs in a user namespace), seccomp, nested (inside another engine's container, a CI "
     "job's, and then nested-ids, nested-seccomp, nested-proc, nested-sys: what the outer "
     "container allows and what containers get), runtime-dir, cgroup, user-bus, tun, fuse, "
     "fuse-overlayfs, rootlessrt-net, net-fast-path (whether nf_tables takes the rules of the "
     "container's own connections in a user namespace), slirp4netns, pasta, storage. Nothing on "
     "the system is changed.",
     check_flags},
    {"checkpoint",
     "runc's verb for a CRIU checkpoint: rootlessrt has no CRIU support, so it is an error "
     "(status 1) that says so, whatever flags are given, and the container is left as it is.",
     NULL},
    {"restore", "The same for runc's restore: an error, nothing done.", NULL},
};

const size_t rrt_verb_helps_len = sizeof(rrt_verb_helps) / sizeof(rrt_verb_helps[0]);
