/* common.c: what every file of rootlessrt-pull shares: the one error message and where it goes,
 * the options, digests and files. The bottom of pull/: it uses nothing else of it. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pull.h"

struct pull_opts popt = {.error_fd = -1, .ready_fd = -1};

static char g_err[4096];
static bool g_reported;

int failf(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof(g_err), fmt, ap);
  va_end(ap);
  return -1;
}

const char *pull_error(void)
{
  return g_err;
}

/* Escaped again here (the parts from outside were where they were read; escaping twice changes
 * nothing): this line is what the runtime prints. */
void pull_report(void)
{
  if (g_reported)
    return;
  g_reported = true;
  cleanup_free char *msg = rrt_escape(g_err);
  if (popt.error_fd >= 0)
    (void)!write(popt.error_fd, msg, strlen(msg));
  else
    fprintf(stderr, "rootlessrt-pull: %s\n", msg);
}

bool valid_digest(const char *d)
{
  return d && strncmp(d, "sha256:", 7) == 0 && strlen(d + 7) == 64 &&
         strspn(d + 7, "0123456789abcdef") == 64;
}

int write_file(const char *path, const char *data, size_t len)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return failf("%s: %s", path, strerror(errno));
  ssize_t w = write(fd, data, len);
  int e = errno;
  if (close(fd) < 0 && w == (ssize_t)len)
    return failf("%s: %s", path, strerror(errno));
  return w == (ssize_t)len ? 0 : failf("%s: %s", path, w < 0 ? strerror(e) : "short write");
}
