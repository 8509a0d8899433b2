/* confine.h: what happens to the process right before execve: caps, seccomp,
 * rlimits, no_new_privs, oom score, personality, io priority, scheduler, fds. */
#ifndef ROOTLESSRT_CONFINE_H
#define ROOTLESSRT_CONFINE_H

#include <stdbool.h>
#include <stddef.h>

#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

/*
 * THE REACH RULE (issue 19, items 2 and 6). No process the runtime starts on a container's
 * behalf is reachable from the container while it holds more than the container's own
 * confinement: not by ptrace, not through /proc/PID/{root,cwd,fd,mem,environ}, not by signals,
 * not by pidfd (pidfd_getfd). Such a process (exec's joining child and the process it forks,
 * create's init, a hook's child forked inside the container's namespaces) has every capability
 * of the user namespace, no seccomp and no no_new_privs, holds the runtime's sockets and, before
 * pivot_root, sees the host's filesystem; a container process with CAP_SYS_PTRACE that can
 * attach to it is out of its confinement, and what it then says over the runtime's socket (a
 * forged pid) becomes what the runtime signals and writes to --pid-file.
 *
 * How it is kept:
 *  - Not dumpable (PR_SET_DUMPABLE 0) from the fork or clone on: the kernel then checks
 *    CAP_SYS_PTRACE in the user namespace of the process's mm, which is the runtime's (the
 *    process was forked, not exec'd), and that no container has. Only the execve of the
 *    container's program (or of a hook's) makes it dumpable again, as the kernel does for a
 *    program that is not setuid; nothing in between sets it back to 1, and a credential change
 *    (setresuid, capset), which resets it to fs.suid_dumpable, is followed by clearing it again
 *    (rrt_confine_undumpable). As runc has done since CVE-2016-9962.
 *  - Nothing read from the container's filesystem can block it: /etc/passwd is opened
 *    O_NONBLOCK, must be a regular file of at most RRT_CONTAINER_FILE_MAX bytes (process.c).
 *  - Pids the runtime acts on come from the kernel, never from the container: a child reports
 *    the process it forked as a pidfd (SCM_RIGHTS), and the runtime takes the pid from the
 *    pidfd's fdinfo and checks that it is the child it forked or that child's own child
 *    (rrt_sync_expect_child_pid, sync.h). One report per step: a second is a protocol error.
 *
 * The one window left open on purpose: create's init in a pid namespace of its own is dumpable
 * from the id maps until `start` (init.c), because the owner's prestart and createRuntime hooks,
 * the network helper and `exec`/`ps` of a created container open /proc/INIT/ns/; nothing of the
 * container is in that pid namespace then but what `exec` puts there. In a pid namespace joined
 * by path (another container's), init is never dumpable before its execve.
 */
#define RRT_CONTAINER_FILE_MAX (1024 * 1024)

/* PR_SET_DUMPABLE 0, see THE REACH RULE. Async-signal-safe; errors are ignored (the call cannot
 * fail for 0). */
void rrt_confine_undumpable(void);

/* Validates every capability name (unknown -> error naming the entry, e.g.
 * "process.capabilities.bounding[2]: unknown capability CAP_FOO"); names the
 * running kernel lacks are dropped with a warning. Called at create time. */
int rrt_caps_validate(const struct rrt_caps *caps, struct rrt_error *err);

/* In the container's user namespace, before the bounding set is dropped: every capability of
 * the bounding, effective and permitted sets is one the runtime holds, or an error naming it
 * (as runc and crun: under podman rootless, whose user namespace the container shares, the
 * caller's bounding set may lack one that --privileged lists). An unraisable ambient one is not
 * an error. Called at create (rrt_process_prepare) and again by rrt_caps_prepare. */
int rrt_caps_check_held(const struct rrt_caps *caps, struct rrt_error *err);
/* Before the uid switch: rrt_caps_check_held, PR_SET_KEEPCAPS and the bounding set drop. */
int rrt_caps_prepare(const struct rrt_caps *caps, struct rrt_error *err);
/* After the uid switch: effective, permitted, inheritable, ambient exactly as
 * configured (a NULL caps = drop everything but keep what the uid gives). It writes nothing:
 * it may run under the container's seccomp filter, whose notify agent would get the write. */
int rrt_caps_apply(const struct rrt_caps *caps, struct rrt_error *err);

/* rlimits, ioPriority, scheduler (before execve). */
int rrt_process_limits_apply(const struct rrt_process *proc, struct rrt_error *err);
/* process.oomScoreAdj, into this process and what it forks: written while it is still dumpable,
 * before it joins a pid namespace another container sees (init, before its fork) or the first
 * namespace (exec, the runtime's own child), since an undumpable process cannot open its own
 * /proc/self/oom_score_adj from inside a user namespace (Docker's --userns-remap with --pid
 * container:X). A refused write (lowering it without CAP_SYS_RESOURCE) is a warning. */
int rrt_oom_score_adj_apply(const struct rrt_process *proc, struct rrt_error *err);

/* linux.personality: LINUX -> PER_LINUX, LINUX32 -> PER_LINUX32. */
int rrt_personality_apply(const struct rrt_personality *pers, struct rrt_error *err);

/* process.apparmorProfile / selinuxLabel: check = a clear error when one is
 * asked for and that LSM is not enabled (create time); apply = set the
 * label for the coming execve. */
int rrt_lsm_check(const struct rrt_process *proc, struct rrt_error *err);
int rrt_lsm_apply(const struct rrt_process *proc, struct rrt_error *err);

/* A compiled seccomp filter (BPF), ready to load. */
struct rrt_seccomp_filter;

/* Compiles (or takes from cache_dir, keyed by the sha256 of canonical_json and
 * the runtime's and libseccomp's versions, the profile stored beside the program
 * and compared on every hit; NULL = no cache) the filter. Unknown syscall names are skipped with a
 * warning. */
int rrt_seccomp_compile(const struct rrt_seccomp *sc, const char *cache_dir,
                        struct rrt_seccomp_filter **out, struct rrt_error *err);
/* Loads it (the last step before execve). With SCMP_ACT_NOTIFY the listener fd
 * is sent to listenerPath with the state and listenerMetadata. */
int rrt_seccomp_load(struct rrt_seccomp_filter *f, const struct rrt_seccomp *sc,
                     const char *state_json, struct rrt_error *err);
void rrt_seccomp_filter_free(struct rrt_seccomp_filter *f);
/* With SCMP_ACT_NOTIFY, compile connects to listenerPath (a host path: before
 * pivot_root or joining the container's mount namespace). A process that
 * forked the one that will load the filter drops its copy of that
 * connection with this, so the agent sees it end after the payload. */
void rrt_seccomp_filter_release_listener(struct rrt_seccomp_filter *f);
/* That connection's fd (-1 when none): it must survive the fd clean-up. */
int rrt_seccomp_filter_listener_fd(const struct rrt_seccomp_filter *f);

/* systemd socket activation of the runtime itself: LISTEN_FDS=N in our environment (and
 * LISTEN_PID, when set, our pid): the N fds from 3 on go to the container, as runc and crun do,
 * with LISTEN_FDS, LISTEN_PID=1 and the caller's LISTEN_FDNAMES in its environment. Returns N,
 * 0 without them (or when they are not ours); marks them close-on-exec for the runtime's own
 * helpers (the container's execve gets them all the same). */
int rrt_listen_fds_from_env(void);

/* Closes every fd >= first except those in keep[] (close_range where possible). */
int rrt_close_fds_from(int first, const int *keep, size_t n_keep, struct rrt_error *err);

#endif
