/* confine_child.h: the confine unit tests' children: each test runs in a forked child that reports
 * over a pipe, some as root in a user namespace of their own. */
#ifndef RRT_TEST_CONFINE_CHILD_H
#define RRT_TEST_CONFINE_CHILD_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/util.h"

#define STRV(...)                                                                                  \
  ((struct rrt_strv){(char *[]){__VA_ARGS__, NULL},                                                \
                     sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)})
#define NO_STRV ((struct rrt_strv){NULL, 0})

typedef int (*child_fn)(int out, void *arg);

/* Forks a child that runs fn, its pipe's write end as out; returns the read end. */
static inline int child_start(child_fn fn, void *arg, pid_t *pid)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    abort();
  fflush(stdout);
  *pid = fork();
  if (*pid < 0)
    abort();
  if (*pid == 0) {
    close(p[0]);
    _exit(fn(p[1], arg));
  }
  close(p[1]);
  return p[0];
}

/* Collects what a child_start child wrote (out, when not NULL) and reaps it: the wait status. */
static inline int child_finish(pid_t pid, int rfd, char **out)
{
  struct rrt_error e = RRT_ERROR_INIT;
  char *buf = NULL;
  if (rrt_read_fd(rfd, &buf, NULL, &e) < 0)
    buf = xstrdup("");
  rrt_error_clear(&e);
  close(rfd);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (out)
    *out = buf;
  else
    free(buf);
  return status;
}

/* Runs fn in a forked child; out collects what it writes to its pipe.
 * Returns the wait status. */
static inline int in_child(child_fn fn, void *arg, char **out)
{
  pid_t pid;
  int rfd = child_start(fn, arg, &pid);
  return child_finish(pid, rfd, out);
}

static inline bool exited0(int status)
{
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static inline void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void say(int fd, const char *fmt, ...)
{
  char *s = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&s, fmt, ap) < 0)
    abort();
  va_end(ap);
  (void)rrt_write_all(fd, s, strlen(s));
  free(s);
}

static inline int write_str(const char *path, const char *s)
{
  struct rrt_error e = RRT_ERROR_INIT;
  int r = rrt_write_file(path, s, strlen(s), 0, 0, &e);
  rrt_error_clear(&e);
  return r;
}

/* Root in a fresh user namespace mapped onto our own ids. */
static inline int enter_self_userns(void)
{
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER) < 0)
    return -1;
  char map[64];
  snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
  if (write_str("/proc/self/setgroups", "deny") < 0 || write_str("/proc/self/uid_map", map) < 0)
    return -1;
  snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
  return write_str("/proc/self/gid_map", map);
}

static inline int userns_child(int out, void *arg)
{
  return enter_self_userns() < 0 ? 1 : 0;
}

static inline bool userns_works(void)
{
  char *out = NULL;
  int st = in_child(userns_child, NULL, &out);
  free(out);
  if (!exited0(st))
    printf("# user namespaces unavailable: namespace tests are skipped\n");
  return exited0(st);
}

#endif
