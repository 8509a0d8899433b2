/* test_hooks.c: rrt_hooks_run against small /bin/sh hooks in a temporary directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rootlessrt/hooks.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"
#include "tap.h"

static char tmpdir[] = "/tmp/rrt-test-hooks-XXXXXX";

/* Writes an executable (or not) script into tmpdir; returns its malloc'd path. */
static char *script(const char *name, mode_t mode, const char *body)
{
  char *path = xasprintf("%s/%s", tmpdir, name);
  char *text = xasprintf("#!/bin/sh\n%s\n", body);
  struct rrt_error err = RRT_ERROR_INIT;
  unlink(path);
  if (rrt_write_file(path, text, strlen(text), O_CREAT | O_TRUNC, mode, &err) < 0) {
    printf("# %s\n", rrt_error_msg(&err));
    abort();
  }
  chmod(path, mode);
  free(text);
  return path;
}

static char *tmp_path(const char *name)
{
  return xasprintf("%s/%s", tmpdir, name);
}

static char *slurp(const char *path, size_t *len)
{
  char *data = NULL;
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_read_file(path, &data, len, &err) < 0) {
    rrt_error_clear(&err);
    return NULL;
  }
  return data;
}

/* Runs the given hooks as `kind`; *msg gets the error message or NULL. */
static int run_hooks(enum rrt_hook_kind kind, struct rrt_hook *hooks, size_t n, const char *state,
                     char **msg, int *errnum)
{
  struct rrt_spec spec;
  memset(&spec, 0, sizeof(spec));
  spec.hooks[kind].v = hooks;
  spec.hooks[kind].n = n;
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_hooks_run(&spec, kind, state, &err);
  if (msg)
    *msg = err.msg ? xstrdup(err.msg) : NULL;
  if (errnum)
    *errnum = err.errnum;
  rrt_error_clear(&err);
  return r;
}

static int run_one(enum rrt_hook_kind kind, struct rrt_hook hook, const char *state, char **msg)
{
  return run_hooks(kind, &hook, 1, state, msg, NULL);
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A killed process is gone once its parent (init, here) reaps it; a zombie
 * counts as gone too, since nothing of it runs any more. */
static bool process_gone(pid_t pid)
{
  for (int i = 0; i < 200; i++) {
    if (kill(pid, 0) < 0 && errno == ESRCH)
      return true;
    char *stat_path = xasprintf("/proc/%d/stat", (int)pid);
    cleanup_free char *st = slurp(stat_path, NULL);
    free(stat_path);
    const char *paren = st ? strrchr(st, ')') : NULL;
    if (paren && paren[1] == ' ' && paren[2] == 'Z')
      return true;
    usleep(10000);
  }
  return false;
}

static pid_t read_pid(const char *path)
{
  cleanup_free char *s = slurp(path, NULL);
  return s ? (pid_t)atoi(s) : -1;
}

/* rrt_hooks_run must leave no child behind: no zombie, no survivor. */
static bool no_children(void)
{
  return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static void test_stdin_args_env(void)
{
  cleanup_free char *out = tmp_path("stdin.out");
  cleanup_free char *body = xasprintf("cat > '%s'", out);
  cleanup_free char *path = script("stdin.sh", 0755, body);
  const char *state = "{\"ociVersion\":\"1.3.0\",\"id\":\"c1\",\"status\":\"creating\",\"pid\":42}";
  cleanup_free char *msg = NULL;
  struct rrt_hook h = {.path = path};
  is_int(run_one(RRT_HOOK_CREATE_RUNTIME, h, state, &msg), 0, "stdin hook succeeds");
  cleanup_free char *got = slurp(out, NULL);
  is_str(got, state, "hook receives the state JSON on stdin, exactly");

  /* More than a pipe buffer: the parent must keep feeding while polling. */
  size_t big_len = 300 * 1024;
  cleanup_free char *big = xmalloc(big_len + 1);
  for (size_t i = 0; i < big_len; i++)
    big[i] = (char)('a' + i % 26);
  big[big_len] = '\0';
  is_int(run_one(RRT_HOOK_CREATE_RUNTIME, h, big, NULL), 0, "hook with 300 KiB of state succeeds");
  size_t got_len = 0;
  cleanup_free char *got_big = slurp(out, &got_len);
  ok(got_big && got_len == big_len && memcmp(got_big, big, big_len) == 0,
     "300 KiB of state arrive intact (%zu bytes)", got_len);

  /* A hook that never reads stdin must not SIGPIPE the runtime. */
  cleanup_free char *noread = script("noread.sh", 0755, "exit 0");
  struct rrt_hook nr = {.path = noread};
  is_int(run_one(RRT_HOOK_CREATE_RUNTIME, nr, big, NULL), 0,
         "hook ignoring a large stdin succeeds, runtime survives SIGPIPE");

  /* Args: a script sees its own path as $0 (the kernel's shebang handling),
   * the rest of args after it. */
  cleanup_free char *args_out = tmp_path("args.out");
  cleanup_free char *args_body = xasprintf("echo \"$0 $@\" > '%s'", args_out);
  cleanup_free char *args_path = script("args.sh", 0755, args_body);
  char *argv[] = {"ignored-by-shebang", "one", "two three", NULL};
  struct rrt_hook ha = {.path = args_path, .args = {argv, 3}};
  is_int(run_one(RRT_HOOK_PRESTART, ha, "{}", NULL), 0, "args hook succeeds");
  cleanup_free char *args_got = slurp(args_out, NULL);
  cleanup_free char *args_want = xasprintf("%s one two three\n", args_path);
  is_str(args_got, args_want, "hook gets args[1..]");

  /* args[0] itself: exec /bin/sh directly and read its own cmdline. */
  cleanup_free char *cmd_out = tmp_path("cmdline.out");
  cleanup_free char *cmd = xasprintf("cat /proc/$$/cmdline > '%s'", cmd_out);
  char *argv0[] = {"custom-argv0", "-c", cmd, "dollar0", "p1", NULL};
  struct rrt_hook h0 = {.path = "/bin/sh", .args = {argv0, 5}};
  is_int(run_one(RRT_HOOK_PRESTART, h0, "{}", NULL), 0, "argv0 hook succeeds");
  size_t cmd_len = 0;
  cleanup_free char *cmd_got = slurp(cmd_out, &cmd_len);
  size_t want_len = 0;
  char want[4096];
  for (char **a = argv0; *a; a++) {
    size_t l = strlen(*a) + 1;
    memcpy(want + want_len, *a, l);
    want_len += l;
  }
  ok(cmd_got && cmd_len == want_len && memcmp(cmd_got, want, want_len) == 0,
     "argv is args exactly, args[0] included");

  /* Absent args: argv is {path}. */
  struct rrt_hook hn = {.path = args_path};
  is_int(run_one(RRT_HOOK_PRESTART, hn, "{}", NULL), 0, "hook without args succeeds");
  free(args_got);
  args_got = slurp(args_out, NULL);
  free(args_want);
  args_want = xasprintf("%s \n", args_path);
  is_str(args_got, args_want, "no args: $0 is the path, no arguments");

  /* Env: exactly what is given; PATH is not made up. */
  cleanup_free char *env_out = tmp_path("env.out");
  /* The environ the shell was exec'd with, not what it exports (dash adds PWD). */
  cleanup_free char *env_body =
      xasprintf("/usr/bin/tr '\\0' '\\n' < /proc/$$/environ > '%s'", env_out);
  cleanup_free char *env_path = script("env.sh", 0755, env_body);
  setenv("RRT_TEST_LEAK", "must-not-appear", 1);
  char *envv[] = {"FOO=bar", "HOOK_X=1 2", NULL};
  struct rrt_hook he = {.path = env_path, .env = {envv, 2}};
  is_int(run_one(RRT_HOOK_POSTSTART, he, "{}", NULL), 0, "env hook succeeds");
  cleanup_free char *env_got = slurp(env_out, NULL);
  is_str(env_got, "FOO=bar\nHOOK_X=1 2\n", "env is exactly the given one");
  struct rrt_hook he0 = {.path = env_path};
  is_int(run_one(RRT_HOOK_POSTSTART, he0, "{}", NULL), 0, "hook without env succeeds");
  free(env_got);
  env_got = slurp(env_out, NULL);
  is_str(env_got, "", "absent env: empty environment, no PATH, nothing inherited");
  unsetenv("RRT_TEST_LEAK");
}

static void test_failures(void)
{
  cleanup_free char *fail =
      script("fail.sh", 0755, "echo to-stdout; echo 'oops: it broke' >&2; exit 3");
  cleanup_free char *msg = NULL;
  struct rrt_hook h = {.path = fail};
  is_int(run_one(RRT_HOOK_CREATE_RUNTIME, h, "{}", &msg), -1, "failing hook fails");
  cleanup_free char *want = xasprintf(
      "createRuntime hook #0 (%s): error running hook: exited with status 3: oops: it broke", fail);
  is_str(msg, want, "message names kind, index, path, status and stderr");

  /* A long stderr: only its end is kept, starting at a line. */
  cleanup_free char *chatty =
      script("chatty.sh", 0755,
             "i=0; while [ $i -lt 300 ]; do echo \"noise line $i\" >&2; i=$((i+1)); done\n"
             "echo 'the real reason' >&2; exit 1");
  struct rrt_hook hc = {.path = chatty};
  free(msg);
  msg = NULL;
  is_int(run_one(RRT_HOOK_CREATE_CONTAINER, hc, "{}", &msg), -1, "chatty hook fails");
  size_t mlen = msg ? strlen(msg) : 0;
  const char *reason = "the real reason";
  ok(msg && mlen > strlen(reason) && strcmp(msg + mlen - strlen(reason), reason) == 0 &&
         mlen < 1024 + strlen(chatty) + 80,
     "stderr tail keeps the end (%zu bytes)", mlen);
  ok(msg && strstr(msg, "status 1: noise line ") && !strstr(msg, "noise line 0\n"),
     "stderr tail starts at a line boundary");

  /* Killed by a signal the runtime ignores: the hook gets default dispositions.
   * The mask is read by grep from its own status: the shell's own is briefly
   * all-blocked while it forks. */
  struct sigaction ign = {.sa_handler = SIG_IGN}, old;
  sigaction(SIGTERM, &ign, &old);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  sigprocmask(SIG_BLOCK, &block, &old_mask);
  cleanup_free char *sig_out = tmp_path("sig.out");
  cleanup_free char *sig_body = xasprintf(
      "grep -E '^Sig(Blk|Ign)' /proc/self/status > '%s'; kill -TERM $$; sleep 5", sig_out);
  cleanup_free char *sig = script("sig.sh", 0755, sig_body);
  struct rrt_hook hs = {.path = sig};
  free(msg);
  msg = NULL;
  is_int(run_one(RRT_HOOK_START_CONTAINER, hs, "{}", &msg), -1, "self-killing hook fails");
  free(want);
  want = xasprintf(
      "startContainer hook #0 (%s): error running hook: killed by signal SIGTERM (terminated)",
      sig);
  is_str(msg, want, "killed by signal, even though the runtime ignores SIGTERM");
  cleanup_free char *sig_got = slurp(sig_out, NULL);
  ok(sig_got && strstr(sig_got, "SigBlk:\t0000000000000000"),
     "hook starts with an empty signal mask");
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  sigaction(SIGTERM, &old, NULL);

  /* Missing and non-executable paths say so, not "status 127". */
  struct rrt_hook hm = {.path = "/nonexistent/hook"};
  int errnum = 0;
  free(msg);
  msg = NULL;
  is_int(run_hooks(RRT_HOOK_PRESTART, &hm, 1, "{}", &msg, &errnum), -1, "missing hook fails");
  is_str(msg, "prestart hook #0 (/nonexistent/hook): exec: No such file or directory",
         "missing hook: exec error");
  is_int(errnum, ENOENT, "missing hook: errnum ENOENT");
  cleanup_free char *noexec = script("noexec.sh", 0644, "exit 0");
  struct rrt_hook hx = {.path = noexec};
  free(msg);
  msg = NULL;
  is_int(run_one(RRT_HOOK_PRESTART, hx, "{}", &msg), -1, "non-executable hook fails");
  free(want);
  want = xasprintf("prestart hook #0 (%s): exec: Permission denied", noexec);
  is_str(msg, want, "non-executable hook: exec error");
}

static void test_timeouts(void)
{
  cleanup_free char *pid_out = tmp_path("pid.out");
  cleanup_free char *body = xasprintf("echo $$ > '%s'; exec sleep 30", pid_out);
  cleanup_free char *slow = script("slow.sh", 0755, body);
  struct rrt_hook h = {.path = slow, .timeout = 1};
  cleanup_free char *msg = NULL;
  double t0 = now_s();
  is_int(run_one(RRT_HOOK_CREATE_RUNTIME, h, "{}", &msg), -1, "slow hook fails");
  double dt = now_s() - t0;
  ok(dt >= 0.9 && dt < 2.0, "timeout 1 returns after ~1s (%.2fs)", dt);
  cleanup_free char *want =
      xasprintf("createRuntime hook #0 (%s): error running hook: timed out after 1s", slow);
  is_str(msg, want, "timeout message");
  pid_t pid = read_pid(pid_out);
  ok(pid > 0 && process_gone(pid), "the timed-out hook process is gone");

  /* The whole process group dies, not just the hook. */
  cleanup_free char *bg_out = tmp_path("bg.out");
  cleanup_free char *bg_body = xasprintf("sleep 30 & echo $! > '%s'; sleep 30", bg_out);
  cleanup_free char *bg = script("bg.sh", 0755, bg_body);
  struct rrt_hook hb = {.path = bg, .timeout = 1};
  t0 = now_s();
  is_int(run_one(RRT_HOOK_CREATE_RUNTIME, hb, "{}", NULL), -1,
         "hook with a background child times out");
  dt = now_s() - t0;
  ok(dt < 2.0, "... within ~1s (%.2fs)", dt);
  pid = read_pid(bg_out);
  ok(pid > 0 && process_gone(pid), "the hook's background child is killed too");

  /* A successful hook whose background child keeps stdout/stderr open: the
   * runtime does not wait for that child. */
  cleanup_free char *daemon_out = tmp_path("daemon.out");
  cleanup_free char *daemon_body =
      xasprintf("echo started; sleep 30 & echo $! > '%s'; exit 0", daemon_out);
  cleanup_free char *daemon = script("daemon.sh", 0755, daemon_body);
  struct rrt_hook hd = {.path = daemon};
  t0 = now_s();
  is_int(run_one(RRT_HOOK_POSTSTART, hd, "{}", NULL), 0, "hook leaving a daemon succeeds");
  dt = now_s() - t0;
  ok(dt < 1.0, "... without waiting for the daemon's output to close (%.2fs)", dt);
  pid = read_pid(daemon_out);
  if (pid > 0)
    kill(pid, SIGKILL);
}

static void test_order_and_poststop(void)
{
  cleanup_free char *seq = tmp_path("seq.out");
  cleanup_free char *b1 = xasprintf("printf 1 >> '%s'", seq);
  cleanup_free char *b2 = xasprintf("printf 2 >> '%s'; echo second failed >&2; exit 7", seq);
  cleanup_free char *b3 = xasprintf("printf 3 >> '%s'", seq);
  cleanup_free char *p1 = script("seq1.sh", 0755, b1);
  cleanup_free char *p2 = script("seq2.sh", 0755, b2);
  cleanup_free char *p3 = script("seq3.sh", 0755, b3);
  struct rrt_hook hooks[] = {{.path = p1}, {.path = p2}, {.path = p3}};
  cleanup_free char *msg = NULL;

  unlink(seq);
  is_int(run_hooks(RRT_HOOK_CREATE_RUNTIME, hooks, 3, "{}", &msg, NULL), -1,
         "second of three hooks fails");
  cleanup_free char *got = slurp(seq, NULL);
  is_str(got, "12", "hooks run in order and the first failure stops the rest");
  cleanup_free char *want = xasprintf(
      "createRuntime hook #1 (%s): error running hook: exited with status 7: second failed", p2);
  is_str(msg, want, "the failing hook's index is named");

  unlink(seq);
  free(msg);
  msg = NULL;
  is_int(run_hooks(RRT_HOOK_POSTSTOP, hooks, 3, "{}", &msg, NULL), 0,
         "poststop returns 0 despite a failure");
  free(got);
  got = slurp(seq, NULL);
  is_str(got, "123", "poststop runs every hook");
  ok(msg == NULL, "poststop leaves no error");

  struct rrt_spec empty;
  memset(&empty, 0, sizeof(empty));
  struct rrt_error err = RRT_ERROR_INIT;
  is_int(rrt_hooks_run(&empty, RRT_HOOK_PRESTART, "{}", &err), 0, "no hooks: nothing to do");
}

static void test_fds_and_log(const char *log_path)
{
  /* An fd the runtime forgot to mark CLOEXEC still does not reach the hook. */
  int leak = open("/dev/null", O_RDONLY);
  cleanup_free char *fd_out = tmp_path("fd.out");
  cleanup_free char *body = xasprintf("ls /proc/self/fd > '%s'", fd_out);
  cleanup_free char *path = script("fds.sh", 0755, body);
  struct rrt_hook h = {.path = path};
  is_int(run_one(RRT_HOOK_CREATE_RUNTIME, h, "{}", NULL), 0, "fd listing hook succeeds");
  cleanup_free char *got = slurp(fd_out, NULL);
  /* 3 is ls's own handle on /proc/self/fd. */
  is_str(got, "0\n1\n2\n3\n", "hook sees only stdin, stdout, stderr");
  close(leak);

  cleanup_free char *talk =
      script("talk.sh", 0755, "echo hello-stdout; printf 'hello-stderr\\nno-newline' >&2");
  struct rrt_hook ht = {.path = talk};
  is_int(run_one(RRT_HOOK_POSTSTART, ht, "{}", NULL), 0, "talking hook succeeds");
  cleanup_free char *log = slurp(log_path, NULL);
  cleanup_free char *want_out = xasprintf("poststart hook #0 (%s) stdout: hello-stdout\n", talk);
  cleanup_free char *want_err = xasprintf("poststart hook #0 (%s) stderr: hello-stderr\n", talk);
  cleanup_free char *want_tail = xasprintf("poststart hook #0 (%s) stderr: no-newline\n", talk);
  ok(log && strstr(log, want_out), "hook stdout is forwarded to the log, line by line");
  ok(log && strstr(log, want_err) && strstr(log, want_tail),
     "hook stderr is forwarded, the last partial line too");
}

int main(void)
{
  if (!mkdtemp(tmpdir)) {
    printf("Bail out! mkdtemp: %s\n", strerror(errno));
    return 1;
  }
  cleanup_free char *log_path = tmp_path("runtime.log");
  rrt_log_init(log_path, false, false, NULL);
  int fds_before = tap_count_fds();

  test_stdin_args_env();
  test_failures();
  test_timeouts();
  test_order_and_poststop();
  test_fds_and_log(log_path);

  ok(no_children(), "no zombie or leftover child after all runs");
  is_int(tap_count_fds(), fds_before, "no fd leaked by rrt_hooks_run");

  cleanup_free char *rm = xasprintf("rm -rf '%s'", tmpdir);
  if (system(rm) != 0)
    printf("# could not remove %s\n", tmpdir);
  return tap_done();
}
