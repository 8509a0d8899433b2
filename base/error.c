/* error.c: the error out-parameter (see include/rootlessrt/error.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/error.h"
#include "rootlessrt/util.h"

int rrt_error_setv(struct rrt_error *err, int errnum, const char *fmt, va_list ap)
{
  char *base = NULL;
  if (!err)
    return -1; /* a caller that only wants the verdict */
  if (vasprintf(&base, fmt, ap) < 0)
    abort();
  free(err->msg);
  if (errnum != 0) {
    err->msg = xasprintf("%s: %s", base, strerror(errnum));
    free(base);
  } else {
    err->msg = base;
  }
  err->errnum = errnum;
  return -1;
}

int rrt_error_set(struct rrt_error *err, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  rrt_error_setv(err, errnum, fmt, ap);
  va_end(ap);
  return -1;
}

int rrt_error_errno(struct rrt_error *err, const char *fmt, ...)
{
  int saved = errno;
  va_list ap;
  va_start(ap, fmt);
  rrt_error_setv(err, saved, fmt, ap);
  va_end(ap);
  errno = saved;
  return -1;
}

int rrt_error_wrap(struct rrt_error *err, const char *fmt, ...)
{
  char *prefix = NULL;
  if (!err)
    return -1;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&prefix, fmt, ap) < 0)
    abort();
  va_end(ap);
  char *msg = xasprintf("%s: %s", prefix, rrt_error_msg(err));
  free(prefix);
  free(err->msg);
  err->msg = msg;
  return -1;
}

void rrt_error_move(struct rrt_error *dst, struct rrt_error *src)
{
  free(dst->msg);
  dst->msg = src->msg;
  dst->errnum = src->errnum;
  src->msg = NULL;
  src->errnum = 0;
}

void rrt_error_clear(struct rrt_error *err)
{
  free(err->msg);
  err->msg = NULL;
  err->errnum = 0;
}

int rrt_error_msgf(struct rrt_error *err, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  rrt_error_setv(err, 0, fmt, ap);
  va_end(ap);
  if (err)
    err->errnum = errnum;
  return -1;
}
