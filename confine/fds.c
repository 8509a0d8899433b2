/* fds.c: closing everything the container must not inherit, except a keep list. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/util.h"

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static bool is_kept(int fd, const int *keep, size_t n_keep)
{
  return bsearch(&fd, keep, n_keep, sizeof(int), cmp_int) != NULL;
}

/* Without close_range (before 5.9, or a seccomp profile refusing it): list
 * /proc/self/fd first, then close, so the directory walk is not disturbed. */
static int close_fds_proc(int first, const int *keep, size_t n_keep)
{
  DIR *d = opendir("/proc/self/fd"); /* glibc opens it O_CLOEXEC */
  if (!d) {
    /* No /proc (early in a new mount namespace): every possible number. */
    struct rlimit rl;
    int max = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < INT_MAX)
      max = (int)rl.rlim_cur;
    for (int fd = first; fd < max; fd++)
      if (!is_kept(fd, keep, n_keep))
        close(fd);
    return 0;
  }
  int self = dirfd(d);
  size_t n = 0, cap = 64;
  cleanup_free int *fds = xmalloc(cap * sizeof(int));
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    long long v;
    if (rrt_parse_i64(de->d_name, &v) < 0 || v < first || v > INT_MAX || v == self)
      continue;
    if (n == cap) {
      cap *= 2;
      fds = xrealloc(fds, cap * sizeof(int));
    }
    fds[n++] = (int)v;
  }
  closedir(d);
  for (size_t i = 0; i < n; i++)
    if (!is_kept(fds[i], keep, n_keep))
      close(fds[i]);
  return 0;
}

int rrt_close_fds_from(int first, const int *keep, size_t n_keep, struct rrt_error *err)
{
  if (first < 0)
    return rrt_error_set(err, EINVAL, "close fds: bad first fd %d", first);
  cleanup_free int *sorted = xcalloc(n_keep ? n_keep : 1, sizeof(int));
  if (n_keep)
    memcpy(sorted, keep, n_keep * sizeof(int));
  qsort(sorted, n_keep, sizeof(int), cmp_int);

  /* close_range over the gaps between kept fds; kept ones are untouched, so
   * their FD_CLOEXEC stays whatever the caller chose. */
  unsigned int from = (unsigned int)first;
  for (size_t i = 0; i <= n_keep; i++) {
    unsigned int to = ~0U;
    if (i < n_keep) {
      if (sorted[i] < first || (unsigned int)sorted[i] < from)
        continue; /* below the range, or a duplicate */
      to = (unsigned int)sorted[i] - 1;
      if (sorted[i] == (int)from) {
        from++;
        continue;
      }
    }
    if (close_range(from, to, 0) < 0) {
      if (errno == ENOSYS || errno == EPERM)
        return close_fds_proc(first, sorted, n_keep);
      return rrt_error_errno(err, "close_range(%u, %u)", from, to);
    }
    if (i < n_keep)
      from = (unsigned int)sorted[i] + 1;
  }
  return 0;
}

int rrt_listen_fds_from_env(void)
{
  const char *fds = getenv("LISTEN_FDS");
  const char *pid = getenv("LISTEN_PID");
  long long n, p;
  if (!fds || rrt_parse_i64(fds, &n) < 0 || n <= 0 || n > 4096)
    return 0;
  /* sd_listen_fds: the fds are for the process LISTEN_PID names. */
  if (pid && (rrt_parse_i64(pid, &p) < 0 || p != (long long)getpid()))
    return 0;
  for (int fd = 3; fd < 3 + (int)n; fd++) {
    int fl = fcntl(fd, F_GETFD);
    if (fl < 0)
      return 0; /* not there: LISTEN_FDS was not meant for us */
    (void)fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
  }
  return (int)n;
}
