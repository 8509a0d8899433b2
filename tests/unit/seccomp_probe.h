/* seccomp_probe.h: the seccomp unit tests' tools: stderr captured around a compile, a filter
 * compiled as a test, and a child that loads it and reports what a probe saw. */
#ifndef RRT_TEST_SECCOMP_PROBE_H
#define RRT_TEST_SECCOMP_PROBE_H

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "confine_child.h"
#include "tap.h"

/* Captures rrt_warn output (stderr) while fn-like code runs. */
struct capture {
  int saved;
  int fd;
};

static inline void capture_begin(struct capture *c)
{
  fflush(stderr);
  c->fd = memfd_create("stderr", MFD_CLOEXEC);
  c->saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  dup2(c->fd, STDERR_FILENO);
}

static inline char *capture_end(struct capture *c)
{
  dup2(c->saved, STDERR_FILENO);
  close(c->saved);
  lseek(c->fd, 0, SEEK_SET);
  char *s = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_read_fd(c->fd, &s, NULL, &e) < 0)
    s = xstrdup("");
  rrt_error_clear(&e);
  close(c->fd);
  return s;
}

static inline struct rrt_seccomp_filter *compile_ok(const struct rrt_seccomp *sc, const char *cache,
                                                    const char *what)
{
  struct rrt_seccomp_filter *f = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  int r = rrt_seccomp_compile(sc, cache, &f, &e);
  ok(r == 0 && f, "seccomp: %s compiles (%s)", what, e.msg ? e.msg : "ok");
  rrt_error_clear(&e);
  return f;
}

struct probe {
  struct rrt_seccomp_filter *f;
  const struct rrt_seccomp *sc;
  int (*after)(int out);
};

/* NNP first, so loading needs no privilege; then the probe reports. */
static inline int load_child(int out, void *arg)
{
  struct probe *p = arg;
  struct rrt_error e = RRT_ERROR_INIT;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return 2;
  if (rrt_seccomp_load(p->f, p->sc, NULL, &e) < 0)
    return say(out, "load: %s", rrt_error_msg(&e)), 3;
  return p->after(out);
}

static inline const char *errname(int r)
{
  return r == 0        ? "ok"
         : r == EPERM  ? "EPERM"
         : r == EACCES ? "EACCES"
         : r == ENOSYS ? "ENOSYS"
                       : "other";
}

static inline int probe_mkdir(int out)
{
  char path[] = "/tmp/rrt-confine-mkdir-XXXXXX";
  int fd = mkstemp(path); /* openat must still work */
  unlink(path);
  int r = mkdir(path, 0700) < 0 ? errno : 0;
  if (r == 0)
    rmdir(path);
  int pr = syscall(SYS_getpid) == getpid() ? 0 : errno;
  say(out, "open=%s mkdir=%s getpid=%s", fd >= 0 ? "ok" : "fail", errname(r), errname(pr));
  return 0;
}

#endif
