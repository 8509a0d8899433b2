/* hooks.c: runs OCI lifecycle hooks: state on stdin, exact env, timeout, output to the log. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/log.h"
#include "rootlessrt/trust.h"
#include "rootlessrt/util.h"

/* How much of a failing hook's stderr ends up in the error message. */
#define STDERR_TAIL_MAX 1024
/* Longest line forwarded to the log in one piece; longer lines are split. */
#define LOG_LINE_MAX 2048
/* After the hook is reaped, a background child may still hold its stdout or
 * stderr open forever: read what is there for this long, then give up. */
#define DRAIN_AFTER_EXIT_MS 100
/* Without pidfds the loop cannot sleep until the hook exits; it polls this often. */
#define PID_POLL_MS 20

/* Signals that would kill the runtime while a hook runs and leave the hook
 * (in a process group of its own, so not reached by a terminal's ^C either)
 * running on, orphaned, past its timeout. While hooks run they are caught
 * instead and end the hook like a timeout does. */
static const int interrupt_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};
#define N_INTERRUPT_SIGNALS (sizeof(interrupt_signals) / sizeof(interrupt_signals[0]))
static volatile sig_atomic_t hooks_interrupted;

static void note_interrupt(int sig)
{
  hooks_interrupted = sig;
}

/* What the child sends over the CLOEXEC report pipe when it fails before or at
 * execve, so that a missing hook is "exec: No such file or directory" rather
 * than an anonymous exit status 127. */
enum child_stage { STAGE_SETUP_FDS, STAGE_EXEC };

struct child_report {
  int stage;
  int errnum;
};

struct out_stream {
  int fd;           /* parent's read end, -1 once at EOF */
  const char *name; /* "stdout" / "stderr" */
  enum rrt_log_level level;
  char line[LOG_LINE_MAX];
  size_t line_len;
};

struct hook_run {
  const char *prefix; /* "createRuntime hook #0 (/path)" */
  pid_t pid;
  int in_fd; /* write end of the hook's stdin, -1 once everything is written */
  const char *in_data;
  size_t in_len, in_off;
  struct out_stream out, err;
  char tail[STDERR_TAIL_MAX + 1]; /* + the terminating NUL for the message */
  size_t tail_len;
  bool tail_truncated;
};

/* Kills the hook's whole process group and reaps it: the guard armed right
 * after fork so that every early return leaves neither a hook nor a zombie. */
static void kill_hook_group(pid_t *pid)
{
  if (*pid <= 0)
    return;
  int saved = errno;
  kill(-*pid, SIGKILL);
  kill(*pid, SIGKILL); /* in case the hook left the group we made for it */
  while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
    ;
  *pid = -1;
  errno = saved;
}
#define cleanup_hook_pid __attribute__((cleanup(kill_hook_group)))

static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int set_nonblock(int fd)
{
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0)
    return -1;
  return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static void close_fd(int *fd)
{
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
}

/* Everything from here to execve runs in the forked child: async-signal-safe
 * calls only, since the runtime may have had other threads at fork time. */
static void __attribute__((noreturn))
child_report_and_exit(int report_fd, enum child_stage stage, int errnum)
{
  struct child_report r = {.stage = stage, .errnum = errnum};
  ssize_t w;
  do
    w = write(report_fd, &r, sizeof(r));
  while (w < 0 && errno == EINTR);
  _exit(127);
}

static void close_from(int first)
{
  if (close_range((unsigned)first, ~0U, 0) == 0)
    return;
  /* Kernels before 5.9: close one by one up to the fd limit. */
  struct rlimit rl;
  long max = 65536;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      rl.rlim_cur < (rlim_t)1 << 20)
    max = (long)rl.rlim_cur;
  for (long fd = first; fd < max; fd++)
    close((int)fd);
}

static void __attribute__((noreturn))
child_exec(const struct rrt_hook *hook, char *const *argv, char *const *envp, int in_r, int out_w,
           int err_w, int report_w)
{
  /* createContainer and startContainer hooks are forked inside the container's namespaces:
   * until the hook's execve, this is the runtime (confine.h, THE REACH RULE). */
  rrt_confine_undumpable();
  /* Own process group, so that a timeout kills the hook and whatever it
   * started. The parent sets it too: whichever runs first wins the race. */
  setpgid(0, 0);

  /* Ignored signals stay ignored across execve and a blocked mask is
   * inherited: a hook must not run with the runtime's choices (e.g. SIGPIPE
   * ignored, SIGCHLD blocked). Handlers reset themselves at exec, but a
   * handler could run between here and exec, so reset everything. */
  rrt_reset_signals();

  /* If the runtime ran with 0, 1 or 2 closed, a pipe end can sit there: move
   * everything above 3 first so that the dup2s below cannot clobber each other. */
  int in = fcntl(in_r, F_DUPFD_CLOEXEC, 4);
  int out = fcntl(out_w, F_DUPFD_CLOEXEC, 4);
  int errfd = fcntl(err_w, F_DUPFD_CLOEXEC, 4);
  int report = fcntl(report_w, F_DUPFD_CLOEXEC, 4);
  if (report < 0)
    _exit(127); /* nothing left to report through */
  if (in < 0 || out < 0 || errfd < 0)
    child_report_and_exit(report, STAGE_SETUP_FDS, errno);
  /* The report pipe lives at 3 with CLOEXEC: a successful execve closes it,
   * which is how the parent tells "exec worked" from "exec failed". */
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0 || dup3(report, 3, O_CLOEXEC) < 0)
    child_report_and_exit(report, STAGE_SETUP_FDS, errno);
  /* Nothing of the runtime leaks into a hook: not the state directory lock,
   * not the sync socket, not the container's console. */
  close_from(4);

  execve(hook->path, argv, envp);
  child_report_and_exit(3, STAGE_EXEC, errno);
}

static void tail_append(struct hook_run *run, const char *buf, size_t n)
{
  if (n >= STDERR_TAIL_MAX) {
    memcpy(run->tail, buf + n - STDERR_TAIL_MAX, STDERR_TAIL_MAX);
    run->tail_truncated = run->tail_truncated || n > STDERR_TAIL_MAX || run->tail_len > 0;
    run->tail_len = STDERR_TAIL_MAX;
    return;
  }
  if (run->tail_len + n > STDERR_TAIL_MAX) {
    size_t drop = run->tail_len + n - STDERR_TAIL_MAX;
    memmove(run->tail, run->tail + drop, run->tail_len - drop);
    run->tail_len -= drop;
    run->tail_truncated = true;
  }
  memcpy(run->tail + run->tail_len, buf, n);
  run->tail_len += n;
}

static void stream_flush_line(const struct hook_run *run, struct out_stream *s)
{
  if (s->line_len == 0)
    return;
  rrt_log(s->level, "%s %s: %.*s", run->prefix, s->name, (int)s->line_len, s->line);
  s->line_len = 0;
}

/* Forwards complete lines to the log; a partial line waits for more. */
static void stream_feed(const struct hook_run *run, struct out_stream *s, const char *buf, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    if (buf[i] == '\n') {
      stream_flush_line(run, s);
      continue;
    }
    if (s->line_len == sizeof(s->line))
      stream_flush_line(run, s);
    s->line[s->line_len++] = buf[i];
  }
}

/* Reads what is available, but a bounded amount: a hook flooding its output
 * must not keep the loop from checking the timeout. Closes the stream at EOF. */
static void stream_read(struct hook_run *run, struct out_stream *s)
{
  char buf[4096];
  for (int round = 0; round < 16; round++) {
    ssize_t r = read(s->fd, buf, sizeof(buf));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 && errno == EAGAIN)
      return;
    if (r <= 0) {
      stream_flush_line(run, s);
      close_fd(&s->fd);
      return;
    }
    if (s == &run->err)
      tail_append(run, buf, (size_t)r);
    stream_feed(run, s, buf, (size_t)r);
  }
}

/* Feeds the state to the hook's stdin. A hook that does not read it closes
 * the pipe: EPIPE just ends the writing (SIGPIPE is blocked by the caller). */
static void stdin_write(struct hook_run *run)
{
  while (run->in_off < run->in_len) {
    ssize_t w = write(run->in_fd, run->in_data + run->in_off, run->in_len - run->in_off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && errno == EAGAIN)
      return;
    if (w < 0)
      break;
    run->in_off += (size_t)w;
  }
  close_fd(&run->in_fd);
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0); /* always O_CLOEXEC */
#else
  errno = ENOSYS;
  return -1;
#endif
}

/* Runs the poll loop until the hook is reaped and its output drained (or the
 * drain deadline passes). *timed_out is set when the hook had to be killed. */
static int supervise(struct hook_run *run, int timeout_s, const sigset_t *poll_mask, int *status,
                     bool *timed_out, struct rrt_error *err)
{
  int64_t start = now_ms();
  int64_t deadline = timeout_s > 0 ? start + (int64_t)timeout_s * 1000 : -1;
  int64_t drain_deadline = -1;
  bool reaped = false;
  /* A pidfd wakes the loop when the hook exits even if a background child
   * keeps its stdout open; without one, fall back to polling waitpid. */
  cleanup_close int pidfd = pidfd_open_compat(run->pid);

  *timed_out = false;
  for (;;) {
    if (!reaped) {
      pid_t r = waitpid(run->pid, status, WNOHANG);
      if (r < 0 && errno != EINTR)
        return rrt_error_errno(err, "%s: waitpid", run->prefix);
      if (r == run->pid) {
        reaped = true;
        run->pid = -1;
        drain_deadline = now_ms() + DRAIN_AFTER_EXIT_MS;
        close_fd(&run->in_fd);
      }
    }
    if (hooks_interrupted && !reaped) {
      kill_hook_group(&run->pid);
      const char *name = rrt_signal_name(hooks_interrupted);
      return rrt_error_msgf(err, EINTR, "%s: interrupted by signal SIG%s", run->prefix,
                            name ? name : "?");
    }
    int64_t now = now_ms();
    if (reaped && ((run->out.fd < 0 && run->err.fd < 0) || now >= drain_deadline))
      break;
    if (!reaped && deadline >= 0 && now >= deadline) {
      /* The whole group: a shell hook's `sleep` must not outlive it. */
      kill_hook_group(&run->pid);
      *timed_out = true;
      break;
    }

    struct pollfd pfd[4];
    nfds_t n = 0;
    int in_i = -1, out_i = -1, err_i = -1;
    if (run->in_fd >= 0) {
      in_i = (int)n;
      pfd[n++] = (struct pollfd){.fd = run->in_fd, .events = POLLOUT};
    }
    if (run->out.fd >= 0) {
      out_i = (int)n;
      pfd[n++] = (struct pollfd){.fd = run->out.fd, .events = POLLIN};
    }
    if (run->err.fd >= 0) {
      err_i = (int)n;
      pfd[n++] = (struct pollfd){.fd = run->err.fd, .events = POLLIN};
    }
    if (!reaped && pidfd >= 0)
      pfd[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};

    int64_t wait = -1;
    if (reaped)
      wait = drain_deadline - now;
    else if (deadline >= 0)
      wait = deadline - now;
    if (!reaped && pidfd < 0 && (wait < 0 || wait > PID_POLL_MS))
      wait = PID_POLL_MS;

    /* The interrupt signals are blocked but here: one cannot slip in between
     * the check above and the wait. */
    struct timespec ts = {.tv_sec = wait / 1000, .tv_nsec = (wait % 1000) * 1000000};
    int r = ppoll(pfd, n, wait < 0 ? NULL : &ts, poll_mask);
    if (r < 0 && errno != EINTR)
      return rrt_error_errno(err, "%s: poll", run->prefix);
    if (r <= 0)
      continue;
    if (in_i >= 0 && pfd[in_i].revents)
      stdin_write(run);
    if (out_i >= 0 && pfd[out_i].revents)
      stream_read(run, &run->out);
    if (err_i >= 0 && pfd[err_i].revents)
      stream_read(run, &run->err);
  }
  /* Whatever partial line is left when we stop waiting still goes to the log. */
  stream_flush_line(run, &run->out);
  stream_flush_line(run, &run->err);
  return 0;
}

/* The stderr tail for a message: trailing blank lines dropped and, when the
 * beginning was cut off, starting at a line boundary. Empty when none. */
static const char *stderr_tail(struct hook_run *run)
{
  size_t len = run->tail_len;
  while (len > 0 && (run->tail[len - 1] == '\n' || run->tail[len - 1] == '\r' ||
                     run->tail[len - 1] == ' ' || run->tail[len - 1] == '\t'))
    len--;
  size_t start = 0;
  if (run->tail_truncated) {
    const char *nl = memchr(run->tail, '\n', len);
    if (nl)
      start = (size_t)(nl - run->tail) + 1;
  }
  memmove(run->tail, run->tail + start, len - start);
  len -= start;
  run->tail[len] = '\0';
  return run->tail;
}

/* Turns how the hook ended into 0 or the error message a user can act on. */
static int hook_outcome(struct hook_run *run, const struct rrt_hook *hook, int report_r, int status,
                        bool timed_out, struct rrt_error *err)
{
  /* The child is gone, so is every copy of the report pipe's write end:
   * this read cannot block. Empty means execve succeeded. */
  struct child_report rep;
  if (rrt_read_all(report_r, &rep, sizeof(rep)) == (ssize_t)sizeof(rep))
    return rrt_error_set(err, rep.errnum, "%s: %s", run->prefix,
                         rep.stage == STAGE_EXEC ? "exec" : "setting up stdio");

  /* "error running hook" and the signal's description ("bad system call") are runc's words,
   * which runc's own suite looks for (seccomp.bats, "startContainer hook"). */
  const char *prefix = run->prefix;
  const char *tail = stderr_tail(run);
  const char *sep = *tail ? ": " : "";
  if (timed_out)
    return rrt_error_set(err, 0, "%s: error running hook: timed out after %ds%s%s", prefix,
                         hook->timeout, sep, tail);
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return rrt_error_set(err, 0, "%s: error running hook: exited with status %d%s%s", prefix,
                         WEXITSTATUS(status), sep, tail);
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char *name = rrt_signal_name(sig);
    char what[64];
    snprintf(what, sizeof(what), "%s", strsignal(sig));
    if (what[0] >= 'A' && what[0] <= 'Z' && !(what[1] >= 'A' && what[1] <= 'Z'))
      what[0] = (char)(what[0] - 'A' + 'a');
    if (name)
      return rrt_error_set(err, 0, "%s: error running hook: killed by signal SIG%s (%s)%s%s",
                           prefix, name, what, sep, tail);
    return rrt_error_set(err, 0, "%s: error running hook: killed by signal %d (%s)%s%s", prefix,
                         sig, what, sep, tail);
  }
  return 0;
}

/*
 * A hook without `env`: config.md gives `env` environ's semantics and says nothing of an absent
 * one; rootlessrt gives it an empty environment, so that nothing of whoever called the runtime
 * (an engine's secrets, a stray LD_PRELOAD) reaches a hook that did not ask for it. runc and crun
 * pass on their own environment: the annotation rootlessrt.hooks-env=inherit asks for that.
 */
static bool hooks_inherit_env(const struct rrt_spec *spec)
{
  const char *v = rrt_spec_annotation(spec, "rootlessrt.hooks-env");
  return v && strcmp(v, "inherit") == 0;
}

static int run_one(const struct rrt_hook *hook, bool inherit_env, const char *prefix,
                   const char *state_json, const sigset_t *poll_mask, struct rrt_error *err)
{
  char *default_argv[] = {hook->path, NULL};
  char *empty_env[] = {NULL};
  char *const *argv = hook->args.v && hook->args.n > 0 ? hook->args.v : default_argv;
  char *const *envp = hook->env.v ? hook->env.v : inherit_env ? environ : empty_env;

  int in[2], out[2], errp[2], report[2];
  if (pipe2(in, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "%s: pipe", prefix);
  cleanup_close int in_r = in[0], in_w = in[1];
  if (pipe2(out, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "%s: pipe", prefix);
  cleanup_close int out_r = out[0], out_w = out[1];
  if (pipe2(errp, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "%s: pipe", prefix);
  cleanup_close int err_r = errp[0], err_w = errp[1];
  if (pipe2(report, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "%s: pipe", prefix);
  cleanup_close int report_r = report[0], report_w = report[1];
  /* The parent never blocks on a hook: a hook that ignores stdin or floods
   * stdout must not stall the timeout. The child's ends stay blocking. */
  if (set_nonblock(in_w) < 0 || set_nonblock(out_r) < 0 || set_nonblock(err_r) < 0)
    return rrt_error_errno(err, "%s: fcntl O_NONBLOCK", prefix);

  cleanup_hook_pid pid_t pid = fork();
  if (pid < 0)
    return rrt_error_errno(err, "%s: fork", prefix);
  if (pid == 0)
    child_exec(hook, argv, envp, in_r, out_w, err_w, report_w);
  /* Races the child's own setpgid so that kill(-pid) works from now on;
   * EACCES after the child's execve is harmless, it did it first. */
  setpgid(pid, pid);
  close_fd(&in_r);
  close_fd(&out_w);
  close_fd(&err_w);
  close_fd(&report_w);

  bool in_log_file = rrt_log_fd() >= 0;
  struct hook_run run = {
      .prefix = prefix,
      .pid = pid,
      .in_fd = in_w,
      .in_data = state_json ? state_json : "",
      .in_len = state_json ? strlen(state_json) : 0,
      /* stdout is chatter: into the log file when there is one, but onto the
       * user's terminal only with --debug. stderr is what a hook says when it
       * is unhappy, so the user sees it either way. */
      .out = {.fd = out_r, .name = "stdout", .level = in_log_file ? RRT_LOG_INFO : RRT_LOG_DEBUG},
      .err = {.fd = err_r, .name = "stderr", .level = RRT_LOG_INFO},
  };
  int status = 0;
  bool timed_out = false;
  int r = supervise(&run, hook->timeout, poll_mask, &status, &timed_out, err);
  /* supervise() closes what it finishes with; the rest closes here. */
  if (run.in_fd < 0)
    in_w = -1;
  if (run.out.fd < 0)
    out_r = -1;
  if (run.err.fd < 0)
    err_r = -1;
  pid = run.pid; /* -1 once reaped; otherwise the guard kills and reaps */
  if (r < 0)
    return r;

  return hook_outcome(&run, hook, report_r, status, timed_out, err);
}

/* A hook another user can replace runs as the caller: said in the log, as runc and crun do not.
 * createContainer and startContainer paths are the container's, resolved inside it. */
static void warn_if_others_may_write(enum rrt_hook_kind kind, const char *prefix, const char *path)
{
  if (kind == RRT_HOOK_CREATE_CONTAINER || kind == RRT_HOOK_START_CONTAINER)
    return;
  cleanup_free char *who = rrt_trust_writable_by_others(path);
  if (who)
    rrt_warn("%s: %s is writable by someone other than you or root, who could change what runs "
             "as you",
             prefix, who);
}

int rrt_hooks_run(const struct rrt_spec *spec, enum rrt_hook_kind kind, const char *state_json,
                  struct rrt_error *err)
{
  if ((unsigned)kind >= RRT_HOOK__COUNT)
    return rrt_error_set(err, EINVAL, "hooks: unknown kind %d", (int)kind);
  const struct rrt_hook_list *list = &spec->hooks[kind];
  if (list->n == 0)
    return 0;
  const char *kind_name = rrt_hook_kind_name(kind);

  /* A hook that exits without reading its stdin must not kill the runtime
   * with SIGPIPE: block it for the duration and discard what we caused. */
  sigset_t pipe_set, block_set, old_mask, poll_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  /* A signal that would kill the runtime is caught instead (those with a
   * handler or ignored keep theirs): blocked, and let in only while waiting. */
  block_set = pipe_set;
  struct sigaction catch_sa = {.sa_handler = note_interrupt}, old_sa[N_INTERRUPT_SIGNALS];
  bool caught[N_INTERRUPT_SIGNALS] = {false};
  sigemptyset(&catch_sa.sa_mask);
  hooks_interrupted = 0;
  for (size_t i = 0; i < N_INTERRUPT_SIGNALS; i++) {
    if (sigaction(interrupt_signals[i], NULL, &old_sa[i]) == 0 && old_sa[i].sa_handler == SIG_DFL &&
        !(old_sa[i].sa_flags & SA_SIGINFO)) {
      sigaddset(&block_set, interrupt_signals[i]);
      caught[i] = true;
    }
  }
  sigprocmask(SIG_BLOCK, &block_set, &old_mask);
  for (size_t i = 0; i < N_INTERRUPT_SIGNALS; i++)
    if (caught[i])
      sigaction(interrupt_signals[i], &catch_sa, NULL);
  poll_mask = old_mask;
  sigaddset(&poll_mask, SIGPIPE);
  bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;

  int ret = 0;
  for (size_t i = 0; i < list->n; i++) {
    const struct rrt_hook *hook = &list->v[i];
    cleanup_free char *prefix = xasprintf("%s hook #%zu (%s)", kind_name, i, hook->path);
    struct rrt_error one = RRT_ERROR_INIT;
    rrt_debug("%s: running", prefix);
    warn_if_others_may_write(kind, prefix, hook->path);
    if (run_one(hook, hooks_inherit_env(spec), prefix, state_json, &poll_mask, &one) == 0 &&
        !hooks_interrupted)
      continue;
    if (hooks_interrupted) {
      /* No more hooks, not even poststop ones: the caller was asked to stop. */
      const char *name = rrt_signal_name(hooks_interrupted);
      if (!one.msg)
        rrt_error_msgf(&one, EINTR, "%s: interrupted by signal SIG%s", prefix, name ? name : "?");
      rrt_error_move(err, &one);
      ret = -1;
      break;
    }
    if (kind == RRT_HOOK_POSTSTOP) {
      /* runtime.md, lifecycle step 13: warn, then go on as if it succeeded. */
      rrt_warn("%s", rrt_error_msg(&one));
      rrt_error_clear(&one);
      continue;
    }
    rrt_error_move(err, &one);
    ret = -1;
    break;
  }

  if (!was_pending) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
      ;
  }
  /* Restore the mask first: a signal still pending is taken by our handler. */
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  for (size_t i = 0; i < N_INTERRUPT_SIGNALS; i++)
    if (caught[i])
      sigaction(interrupt_signals[i], &old_sa[i], NULL);
  if (hooks_interrupted && ret == 0) {
    const char *name = rrt_signal_name(hooks_interrupted);
    ret = rrt_error_msgf(err, EINTR, "%s hooks: interrupted by signal SIG%s", kind_name,
                         name ? name : "?");
  }
  return ret;
}
