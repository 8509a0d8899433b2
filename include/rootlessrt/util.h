/* util.h: cleanup attributes, ownership hand-off and small allocation helpers. */
#ifndef ROOTLESSRT_UTIL_H
#define ROOTLESSRT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "rootlessrt/error.h"

void rrt_cleanup_freep(void *p);
void rrt_cleanup_closep(int *fd);
void rrt_cleanup_fclosep(FILE **f);
void rrt_cleanup_strvp(char ***v);
/* Kills (SIGKILL) and reaps the pid unless it is <= 0 (disarmed). */
void rrt_cleanup_pidp(pid_t *pid);

#define cleanup_free __attribute__((cleanup(rrt_cleanup_freep)))
#define cleanup_close __attribute__((cleanup(rrt_cleanup_closep)))
#define cleanup_fclose __attribute__((cleanup(rrt_cleanup_fclosep)))
#define cleanup_strv __attribute__((cleanup(rrt_cleanup_strvp)))
#define cleanup_pid __attribute__((cleanup(rrt_cleanup_pidp)))

/* Hands ownership out of a cleanup variable. */
static inline int steal_fd(int *fd)
{
  int r = *fd;
  *fd = -1;
  return r;
}
static inline void *rrt_steal_ptr(void *pp)
{
  void **p = (void **)pp;
  void *r = *p;
  *p = NULL;
  return r;
}
#define steal_ptr(pp) rrt_steal_ptr((void *)(pp))
static inline pid_t steal_pid(pid_t *pid)
{
  pid_t r = *pid;
  *pid = -1;
  return r;
}

/* Allocation never fails silently: these abort on out-of-memory. */
void *xmalloc(size_t n);
void *xzalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

void rrt_strv_free(char **v);
size_t rrt_strv_len(char *const *v);

/* Whole-file helpers; they retry EINTR, open with O_CLOEXEC. */
int rrt_read_file(const char *path, char **out, size_t *len, struct rrt_error *err);
int rrt_read_file_at(int dirfd, const char *path, char **out, size_t *len, struct rrt_error *err);
int rrt_read_fd(int fd, char **out, size_t *len, struct rrt_error *err);
int rrt_write_file(const char *path, const void *data, size_t len, int flags, mode_t mode,
                   struct rrt_error *err);
/* A comma-separated option list without the options named in `drop` (NULL-terminated): each
 * matches a whole option, or, ending in '=', every option that starts so ("gid=" drops
 * "gid=5"). list may be NULL (an empty result). */
char *rrt_opts_without(const char *list, const char *const *drop);
int rrt_write_all(int fd, const void *data, size_t len);
ssize_t rrt_read_all(int fd, void *buf, size_t len);

/* --pid-file: written atomically (tmp + rename). */
int rrt_write_pid_file(const char *path, pid_t pid, struct rrt_error *err);
/* A connected SOCK_STREAM unix socket (O_CLOEXEC) or -1; `what` names it in
 * errors ("--console-socket"). */
int rrt_connect_unix(const char *path, const char *what, struct rrt_error *err);

/* Parsing numbers strictly (the whole string, range checked). 0 or -1. */
int rrt_parse_u64(const char *s, unsigned long long *out);
int rrt_parse_i64(const char *s, long long *out);

/* Every signal to its default action, none blocked: what a new program (a
 * hook, the container's process) must start with, whatever the caller had. */
void rrt_reset_signals(void);

/* Foreground run/exec: INT, TERM, HUP, QUIT, USR1, USR2 (and WINCH when asked)
 * received by the runtime go to pid. _early installs the handlers before pid is known,
 * keeping what arrives until rrt_forward_signals names it. */
void rrt_forward_signals_early(bool winch);
void rrt_forward_signals(pid_t pid, bool winch);
void rrt_forward_signals_stop(void);
/* stdin, stdout and stderr onto /dev/null, for a helper that outlives its caller: it holds none
 * of the caller's stdio (an engine's pipes, which it reads to their end). Without /dev/null they
 * stay as they are. */
void rrt_stdio_to_null(void);

/* Waits for pid, reaping any other child (a subreaper collects the
 * container's orphans); its exit code, 128+N when killed by signal N, or -1. */
int rrt_wait_reaping(pid_t pid);

/* The login name of uid, or NULL: /etc/passwd first, read directly, then NSS (getpwuid) for a
 * uid it does not list. Remembered for the process; the pointer stays valid. */
const char *rrt_user_name(uid_t uid);
/* The same, from the text of a passwd file (for tests): malloc'd, or NULL. */
char *rrt_passwd_lookup(const char *text, uid_t uid);

/* One descriptor in a message's control data (SCM_RIGHTS). */
union rrt_fd_cmsg {
  char buf[CMSG_SPACE(sizeof(int))];
  struct cmsghdr align;
};
/* Attaches fd to m, with ctl as its control buffer; fd < 0 attaches nothing. */
void rrt_msg_attach_fd(struct msghdr *m, union rrt_fd_cmsg *ctl, int fd);
/* Makes ctl m's control buffer for receiving one descriptor. */
void rrt_msg_expect_fd(struct msghdr *m, union rrt_fd_cmsg *ctl);
/* The descriptor a received m carries (the first one), or -1. */
int rrt_msg_fd(struct msghdr *m);

/* Signal names: "TERM", "SIGTERM", "15", "sigkill". -1 when unknown. */
int rrt_signal_parse(const char *s);
const char *rrt_signal_name(int sig);

#endif
