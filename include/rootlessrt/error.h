/* error.h: the one error convention: negative return + filled out-parameter. */
#ifndef ROOTLESSRT_ERROR_H
#define ROOTLESSRT_ERROR_H

#include <stdarg.h>

/*
 * A fallible function takes a trailing `struct rrt_error *err` (caller-owned,
 * zero-initialised with RRT_ERROR_INIT, or NULL when only the verdict
 * matters), returns a negative number on failure
 * and fills *err. Callers add context with rrt_error_wrap() and return the
 * negative value again; only main() prints. errnum is 0 when no errno applies.
 */
struct rrt_error {
  int errnum;
  char *msg;
};

#define RRT_ERROR_INIT                                                                             \
  {                                                                                                \
    0, NULL                                                                                        \
  }

/* Sets err to "<fmt...>: strerror(errnum)" (the suffix only when errnum != 0).
 * Frees any previous message. Always returns -1. */
int rrt_error_set(struct rrt_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int rrt_error_setv(struct rrt_error *err, int errnum, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Like rrt_error_set, but the message stays exactly as formatted: for errors
 * whose text says it all ("container \"x\" does not exist"); errnum is kept
 * for callers that test it. Always returns -1. */
int rrt_error_msgf(struct rrt_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* rrt_error_set with errnum = errno. Always returns -1. */
int rrt_error_errno(struct rrt_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefixes the existing message with "<fmt...>: ". Always returns -1. */
int rrt_error_wrap(struct rrt_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Moves src into dst (dst's old message freed, src reset). */
void rrt_error_move(struct rrt_error *dst, struct rrt_error *src);

void rrt_error_clear(struct rrt_error *err);

static inline const char *rrt_error_msg(const struct rrt_error *err)
{
  return err->msg ? err->msg : "unknown error";
}

#endif
