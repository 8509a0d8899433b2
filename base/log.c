/* log.c: the runtime's messages: errors on stderr, everything in the --log file when given. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rootlessrt/escape.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

static int log_fd = -1;
static bool log_json;
static bool log_debug;

/* A symlink at FILE (--log /dev/stderr) is followed only when it is the caller's or root's:
 * another user's, in a directory they can write (fs.protected_symlinks may be off), would have
 * real root create, or append to, any file it names. */
static int open_log(const char *file, struct rrt_error *err)
{
  int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY;
  int fd = open(file, flags | O_NOFOLLOW, 0600);
  if (fd >= 0)
    return fd;
  /* ELOOP, or EACCES for a link in a sticky directory on some kernels. */
  int e = errno;
  struct stat st;
  if (lstat(file, &st) < 0 || !S_ISLNK(st.st_mode)) {
    errno = e;
    return rrt_error_errno(err, "--log %s", file);
  }
  if (st.st_uid != geteuid() && st.st_uid != 0)
    return rrt_error_msgf(err, EPERM,
                          "--log %s is a symlink of uid %u's, not yours or root's: refusing to "
                          "follow it",
                          file, (unsigned)st.st_uid);
  fd = open(file, flags, 0600);
  return fd >= 0 ? fd : rrt_error_errno(err, "--log %s", file);
}

int rrt_log_init(const char *file, bool json, bool debug, struct rrt_error *err)
{
  log_json = json;
  log_debug = debug;
  if (file && *file) {
    int fd = open_log(file, err);
    if (fd < 0)
      return -1;
    if (log_fd >= 0)
      close(log_fd);
    log_fd = fd;
  }
  return 0;
}

void rrt_log_init_fd(int fd, bool json, bool debug)
{
  log_json = json;
  log_debug = debug;
  if (log_fd >= 0 && log_fd != fd)
    close(log_fd);
  log_fd = fd;
}

bool rrt_log_json(void)
{
  return log_json;
}

bool rrt_log_debug_enabled(void)
{
  return log_debug;
}

int rrt_log_fd(void)
{
  return log_fd;
}

static const char *level_name(enum rrt_log_level level)
{
  switch (level) {
  case RRT_LOG_ERROR:
    return "error";
  case RRT_LOG_WARNING:
    return "warning";
  case RRT_LOG_INFO:
    return "info";
  default:
    return "debug";
  }
}

/*
 * A line goes into a log file whole or not at all. A full disk cuts a write short, and the next
 * line would be glued onto the torn one ({"lev{"level":...): conmon and podman read the log's
 * JSON lines. One write (O_APPEND puts it at the end), and a short one is cut off again unless
 * someone appended after it. A pipe or a terminal gets the usual loop.
 */
static void log_write(int fd, const char *line, size_t len)
{
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    (void)rrt_write_all(fd, line, len);
    return;
  }
  ssize_t n;
  do
    n = write(fd, line, len);
  while (n < 0 && errno == EINTR);
  if (n <= 0 || (size_t)n == len)
    return;
  off_t end = lseek(fd, 0, SEEK_CUR);
  if (end >= n && fstat(fd, &st) == 0 && st.st_size == end)
    (void)ftruncate(fd, end - n);
}

static void write_json_line(int fd, enum rrt_log_level level, const char *msg)
{
  struct timeval tv;
  struct tm tm;
  char when[64];
  gettimeofday(&tv, NULL);
  gmtime_r(&tv.tv_sec, &tm);
  size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(when + n, sizeof(when) - n, ".%06ldZ", (long)tv.tv_usec);
  json_object *o = json_object_new_object();
  json_object_object_add(o, "level", json_object_new_string(level_name(level)));
  json_object_object_add(o, "msg", json_object_new_string(msg));
  json_object_object_add(o, "time", json_object_new_string(when));
  const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
  char *line = xasprintf("%s\n", s);
  log_write(fd, line, strlen(line));
  free(line);
  json_object_put(o);
}

/* Every message is escaped (escape.h) before it goes anywhere: it may quote a registry's error,
 * an image's name or config, a path or a hook's output, and neither the terminal nor a log
 * reader (conmon, podman, journald) may get their control bytes or a second line. The result
 * is valid UTF-8, as JSON needs. */
static void log_msg(enum rrt_log_level level, bool to_stderr, const char *raw)
{
  cleanup_free char *msg = rrt_escape(raw);
  /* With --log, only errors also go to stderr, as runc does: at create an
   * engine's runtime stderr is the container's own stderr (containerd's shim,
   * conmon), so a warning there would become a line of the container's log.
   * Without a log file, stderr takes everything. */
  if (to_stderr && (level == RRT_LOG_ERROR || log_fd < 0)) {
    char *line = xasprintf("rootlessrt: %s%s\n",
                           level == RRT_LOG_ERROR     ? ""
                           : level == RRT_LOG_WARNING ? "warning: "
                                                      : "",
                           msg);
    (void)rrt_write_all(STDERR_FILENO, line, strlen(line));
    free(line);
  }
  if (log_fd >= 0) {
    if (log_json) {
      write_json_line(log_fd, level, msg);
    } else {
      char *line = xasprintf("%s: %s\n", level_name(level), msg);
      log_write(log_fd, line, strlen(line));
      free(line);
    }
  }
}

/* The format is checked at rrt_log's and rrt_log_file's callers; clang wants it said here too. */
__attribute__((format(printf, 3, 0))) static void log_va(enum rrt_log_level level, bool to_stderr,
                                                         const char *fmt, va_list ap)
{
  int saved = errno;
  char *msg = xvasprintf(fmt, ap);
  log_msg(level, to_stderr, msg);
  free(msg);
  errno = saved;
}

void rrt_log(enum rrt_log_level level, const char *fmt, ...)
{
  if (level == RRT_LOG_DEBUG && !log_debug)
    return;
  va_list ap;
  va_start(ap, fmt);
  log_va(level, true, fmt, ap);
  va_end(ap);
}

void rrt_log_file(enum rrt_log_level level, const char *fmt, ...)
{
  if (log_fd < 0 || (level == RRT_LOG_DEBUG && !log_debug))
    return;
  va_list ap;
  va_start(ap, fmt);
  log_va(level, false, fmt, ap);
  va_end(ap);
}

/* The phases' clock: CLOCK_MONOTONIC, from the first rrt_phase_start (main) on. A forked child
 * (the container's init) inherits the origin and the last phase, so its lines continue the
 * runtime's timeline; each process then counts its own durations. */
static struct timespec phase_t0, phase_last;

static double ms_between(const struct timespec *a, const struct timespec *b)
{
  return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

/* Across the re-execution from a sealed copy (reexec.h), which is part of the time. */
#define PHASE_T0_ENV "_ROOTLESSRT_PHASE_T0"

void rrt_phase_start(void)
{
  clock_gettime(CLOCK_MONOTONIC, &phase_t0);
  const char *t = getenv(PHASE_T0_ENV);
  long long sec = 0, nsec = 0;
  if (t && sscanf(t, "%lld.%lld", &sec, &nsec) == 2 && sec > 0 && nsec >= 0 && nsec < 1000000000 &&
      sec <= (long long)phase_t0.tv_sec) {
    phase_t0.tv_sec = (time_t)sec;
    phase_t0.tv_nsec = (long)nsec;
  }
  unsetenv(PHASE_T0_ENV);
  phase_last = phase_t0;
}

void rrt_phase_export(void)
{
  char t[64];
  snprintf(t, sizeof(t), "%lld.%09ld", (long long)phase_t0.tv_sec, phase_t0.tv_nsec);
  setenv(PHASE_T0_ENV, t, 1);
}

void rrt_phase(const char *fmt, ...)
{
  if (!log_debug)
    return;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (phase_t0.tv_sec == 0 && phase_t0.tv_nsec == 0)
    phase_t0 = phase_last = now;
  va_list ap;
  va_start(ap, fmt);
  cleanup_free char *what = xvasprintf(fmt, ap);
  va_end(ap);
  rrt_log(RRT_LOG_DEBUG, "%8.3f ms (+%.3f): %s", ms_between(&phase_t0, &now),
          ms_between(&phase_last, &now), what);
  phase_last = now;
}
