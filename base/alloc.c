/* alloc.c: the bottom of the tree: allocation that cannot fail (it aborts) and the cleanup
 * attributes' functions. Nothing here may call anything else of rootlessrt's: error.c builds its
 * messages with xasprintf, and util.c reports through error.c. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "rootlessrt/util.h"

void rrt_cleanup_freep(void *p)
{
  free(*(void **)p);
}

void rrt_cleanup_closep(int *fd)
{
  if (*fd >= 0) {
    int saved = errno;
    close(*fd);
    errno = saved;
  }
}

void rrt_cleanup_fclosep(FILE **f)
{
  if (*f)
    fclose(*f);
}

void rrt_cleanup_strvp(char ***v)
{
  rrt_strv_free(*v);
}

void rrt_cleanup_pidp(pid_t *pid)
{
  if (*pid > 0) {
    int saved = errno;
    kill(*pid, SIGKILL);
    while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
      ;
    errno = saved;
  }
}

void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p)
    abort();
  return p;
}

void *xzalloc(size_t n)
{
  return xcalloc(1, n);
}

void *xcalloc(size_t nmemb, size_t size)
{
  void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
  if (!p)
    abort();
  return p;
}

void *xrealloc(void *p, size_t n)
{
  void *r = realloc(p, n ? n : 1);
  if (!r)
    abort();
  return r;
}

char *xstrdup(const char *s)
{
  char *r = strdup(s);
  if (!r)
    abort();
  return r;
}

char *xstrndup(const char *s, size_t n)
{
  char *r = strndup(s, n);
  if (!r)
    abort();
  return r;
}

char *xvasprintf(const char *fmt, va_list ap)
{
  char *r = NULL;
  if (vasprintf(&r, fmt, ap) < 0)
    abort();
  return r;
}

char *xasprintf(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *r = xvasprintf(fmt, ap);
  va_end(ap);
  return r;
}

void rrt_strv_free(char **v)
{
  if (!v)
    return;
  for (char **p = v; *p; p++)
    free(*p);
  free(v);
}
