/* test_seccomp.c: seccomp filters compiled and loaded in a child (actions, argument rules), the
 * errors of a bad profile, and SCMP_ACT_NOTIFY's listener. */
#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "confine_child.h"
#include "rootlessrt/confine.h"
#include "seccomp_probe.h"
#include "tap.h"

static void compile_fails(const struct rrt_seccomp *sc, const char *msg, const char *what)
{
  struct rrt_seccomp_filter *f = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  ok(rrt_seccomp_compile(sc, NULL, &f, &e) < 0 && !f, "seccomp: %s refused", what);
  is_str(rrt_error_msg(&e), msg, "seccomp: %s error text", what);
  rrt_error_clear(&e);
  rrt_seccomp_filter_free(f);
}

static int probe_getpid(int out)
{
  say(out, "before ");
  syscall(SYS_getpid);
  say(out, "survived");
  return 0;
}

static int probe_socket(int out)
{
  int a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int ea = a < 0 ? errno : 0;
  int b = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int eb = b < 0 ? errno : 0;
  int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int ec = c < 0 ? errno : 0;
  say(out, "inet=%s inet6=%s unix=%s", errname(ea), errname(eb), errname(ec));
  return 0;
}

/* Compiles sc, loads it in a child that tries socket() for three families, compares. */
static void check_socket_filter(const struct rrt_seccomp *sc, const char *what, const char *want,
                                const char *name)
{
  char *out = NULL;
  struct rrt_seccomp_filter *f = compile_ok(sc, NULL, what);
  struct probe p = {f, sc, probe_socket};
  in_child(load_child, &p, &out);
  is_str(out, want, "%s", name);
  free(out);
  rrt_seccomp_filter_free(f);
}

static void test_seccomp_basic(void)
{
  char *out = NULL;
  struct rrt_seccomp_syscall deny_mkdir[] = {
      {.names = STRV("mkdir", "mkdirat"), .action = "SCMP_ACT_ERRNO"},
  };
  struct rrt_seccomp sc = {.default_action = "SCMP_ACT_ALLOW",
                           .architectures =
                               STRV("SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"),
                           .flags = STRV("SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG"),
                           .syscalls = deny_mkdir,
                           .n_syscalls = 1};
  struct rrt_seccomp_filter *f = compile_ok(&sc, NULL, "deny mkdir");
  struct probe p = {f, &sc, probe_mkdir};
  int st = in_child(load_child, &p, &out);
  ok(exited0(st), "seccomp: child with the mkdir filter exits normally");
  is_str(out, "open=ok mkdir=EPERM getpid=ok", "seccomp: mkdir -> EPERM, the rest works");
  free(out);
  rrt_seccomp_filter_free(f);

  const char *kill_actions[] = {"SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL"};
  for (size_t i = 0; i < 2; i++) {
    struct rrt_seccomp_syscall kill_getpid[] = {
        {.names = STRV("getpid"), .action = (char *)kill_actions[i]}};
    struct rrt_seccomp ks = {
        .default_action = "SCMP_ACT_ALLOW", .syscalls = kill_getpid, .n_syscalls = 1};
    f = compile_ok(&ks, NULL, kill_actions[i]);
    p = (struct probe){f, &ks, probe_getpid};
    st = in_child(load_child, &p, &out);
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS && strcmp(out, "before ") == 0,
       "seccomp: getpid under %s dies of SIGSYS (status %#x, %s)", kill_actions[i], st, out);
    free(out);
    rrt_seccomp_filter_free(f);
  }

  /* socket(AF_INET) only, with EACCES: an argument filter. */
  struct rrt_seccomp_arg inet[] = {{.index = 0, .value = AF_INET, .op = "SCMP_CMP_EQ"}};
  struct rrt_seccomp_syscall deny_inet[] = {{.names = STRV("socket"),
                                             .action = "SCMP_ACT_ERRNO",
                                             .has_errno_ret = true,
                                             .errno_ret = EACCES,
                                             .args = inet,
                                             .n_args = 1}};
  struct rrt_seccomp as = {
      .default_action = "SCMP_ACT_ALLOW", .syscalls = deny_inet, .n_syscalls = 1};
  check_socket_filter(&as, "socket(AF_INET) arg filter", "inet=EACCES inet6=ok unix=ok",
                      "seccomp: only socket(AF_INET) gets EACCES");

  /* Two comparisons of the same argument are ORed (one rule each). */
  struct rrt_seccomp_arg both[] = {{.index = 0, .value = AF_INET, .op = "SCMP_CMP_EQ"},
                                   {.index = 0, .value = AF_INET6, .op = "SCMP_CMP_EQ"}};
  deny_inet[0].args = both;
  deny_inet[0].n_args = 2;
  check_socket_filter(&as, "same-index args", "inet=EACCES inet6=EACCES unix=ok",
                      "seccomp: same-index args are ORed");

  /* MASKED_EQ: value is the mask, valueTwo the datum (SOCK_STREAM=1). */
  struct rrt_seccomp_arg masked[] = {
      {.index = 1, .value = 0xf, .value_two = SOCK_STREAM, .op = "SCMP_CMP_MASKED_EQ"},
      {.index = 0, .value = AF_UNIX, .op = "SCMP_CMP_EQ"}};
  deny_inet[0].args = masked;
  deny_inet[0].n_args = 2;
  check_socket_filter(&as, "masked_eq args", "inet=ok inet6=ok unix=EACCES",
                      "seccomp: different-index args are ANDed");
}

static void test_seccomp_errors(void)
{
  struct rrt_seccomp_syscall s[] = {
      {.names = STRV("getpid"), .action = "SCMP_ACT_ALLOW", .has_errno_ret = true, .errno_ret = 1}};
  struct rrt_seccomp sc = {.default_action = "SCMP_ACT_ERRNO", .syscalls = s, .n_syscalls = 1};
  compile_fails(&sc, "linux.seccomp.syscalls[0]: errnoRet is not valid with SCMP_ACT_ALLOW",
                "errnoRet on ALLOW");
  s[0] = (struct rrt_seccomp_syscall){.names = STRV("getpid"), .action = "SCMP_ACT_MAYBE"};
  compile_fails(&sc, "linux.seccomp.syscalls[0]: unknown action SCMP_ACT_MAYBE", "unknown action");
  s[0].action = "SCMP_ACT_ALLOW";
  sc.architectures = STRV("SCMP_ARCH_X86_64", "SCMP_ARCH_VAX");
  compile_fails(&sc, "linux.seccomp.architectures[1]: unknown architecture SCMP_ARCH_VAX",
                "unknown architecture");
  sc.architectures = NO_STRV;
  sc.flags = STRV("SECCOMP_FILTER_FLAG_FAST");
  compile_fails(&sc, "linux.seccomp.flags[0]: unknown flag SECCOMP_FILTER_FLAG_FAST",
                "unknown flag");
  sc.flags = NO_STRV;
  struct rrt_seccomp_arg bad[] = {{.index = 0, .value = 1, .op = "SCMP_CMP_ALMOST"}};
  s[0].args = bad;
  s[0].n_args = 1;
  compile_fails(&sc, "linux.seccomp.syscalls[0].args[0]: unknown op SCMP_CMP_ALMOST", "unknown op");
}

/* SCMP_ACT_NOTIFY: the listener fd and the containerProcessState reach an
 * agent on listenerPath; the agent answers mkdir with EROFS. */
struct notify_arg {
  struct rrt_seccomp_filter *f;
  const struct rrt_seccomp *sc;
  int ls; /* the agent's listening socket, closed in the child */
};

static int notify_child(int out, void *arg)
{
  struct notify_arg *n = arg;
  struct rrt_error e = RRT_ERROR_INIT;
  close(n->ls);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return 2;
  const char *state = "{\"ociVersion\":\"1.3.0\",\"id\":\"c1\",\"status\":\"creating\","
                      "\"pid\":4242,\"bundle\":\"/b\"}";
  if (rrt_seccomp_load(n->f, n->sc, state, &e) < 0)
    return say(out, "load: %s", rrt_error_msg(&e)), 3;
  int r = mkdir("/tmp/rrt-notify-never", 0700) < 0 ? errno : 0;
  say(out, "mkdir=%s", r == EROFS ? "EROFS" : errname(r));
  return 0;
}

static void test_seccomp_notify(void)
{
  char dir[] = "/tmp/rrt-confine-notify-XXXXXX";
  if (!mkdtemp(dir))
    abort();
  char *sock_path = xasprintf("%s/agent.sock", dir);
  int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock_path);
  if (bind(ls, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(ls, 1) < 0)
    abort();

  struct rrt_seccomp_syscall s[] = {
      {.names = STRV("mkdir", "mkdirat"), .action = "SCMP_ACT_NOTIFY"}};
  struct rrt_seccomp sc = {.default_action = "SCMP_ACT_ALLOW",
                           .listener_path = sock_path,
                           .listener_metadata = "MKNOD=/dev/null",
                           .flags = STRV("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"),
                           .syscalls = s,
                           .n_syscalls = 1};
  struct rrt_seccomp_filter *f = compile_ok(&sc, NULL, "notify profile");
  struct notify_arg na = {f, &sc, ls};
  pid_t pid;
  int rfd = child_start(notify_child, &na, &pid);
  rrt_seccomp_filter_release_listener(f);

  int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
  char buf[4096] = {0};
  union {
    char b[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = {buf, sizeof(buf) - 1};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b)};
  ssize_t got = c >= 0 ? recvmsg(c, &msg, MSG_CMSG_CLOEXEC) : -1;
  int fd = -1;
  struct cmsghdr *cm = got > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
  if (cm && cm->cmsg_type == SCM_RIGHTS)
    memcpy(&fd, CMSG_DATA(cm), sizeof(int));
  ok(fd >= 0, "seccomp notify: the listener fd arrived over SCM_RIGHTS");
  /* The rest of the payload, until the runtime closes the connection. */
  while (got > 0 && (size_t)got < sizeof(buf) - 1) {
    ssize_t more = read(c, buf + got, sizeof(buf) - 1 - (size_t)got);
    if (more <= 0)
      break;
    got += more;
  }
  struct json_object *o = json_tokener_parse(buf), *v = NULL, *st = NULL;
  ok(o && json_object_object_get_ex(o, "fds", &v) &&
         strcmp(json_object_get_string(json_object_array_get_idx(v, 0)), "seccompFd") == 0,
     "seccomp notify: payload fds = [\"seccompFd\"] (%s)", buf);
  ok(o && json_object_object_get_ex(o, "pid", &v) && json_object_get_int(v) == 4242 &&
         json_object_object_get_ex(o, "metadata", &v) &&
         strcmp(json_object_get_string(v), "MKNOD=/dev/null") == 0 &&
         json_object_object_get_ex(o, "ociVersion", &v) &&
         json_object_object_get_ex(o, "state", &st) && json_object_object_get_ex(st, "id", &v) &&
         strcmp(json_object_get_string(v), "c1") == 0,
     "seccomp notify: payload has ociVersion, pid, metadata and state");
  json_object_put(o);

  /* Play agent: answer the one notification with EROFS. */
  struct seccomp_notif req;
  struct seccomp_notif_resp resp;
  memset(&req, 0, sizeof(req));
  int answered = -1;
  if (fd >= 0 && ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
    memset(&resp, 0, sizeof(resp));
    resp.id = req.id;
    resp.error = -EROFS;
    answered = ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
  ok(answered == 0, "seccomp notify: the agent received mkdir and answered");
  char *out = NULL;
  child_finish(pid, rfd, &out);
  is_str(out, "mkdir=EROFS", "seccomp notify: the container saw the agent's answer");
  free(out);
  if (fd >= 0)
    close(fd);
  if (c >= 0)
    close(c);
  close(ls);
  unlink(sock_path);
  rmdir(dir);
  free(sock_path);
  rrt_seccomp_filter_free(f);
}

/* ---- ENOSYS for syscalls newer than the profile (issue 27, item 5) ---- */

#define X32_BIT 0x40000000L

/* errno of a raw syscall, with no libc call around it that could make another one. */
static const char *raw(long nr)
{
  long r = syscall(nr, 0, 0, 0);
  return r >= 0 ? "ok" : errname(errno);
}

#if defined(__x86_64__)
/* The same number through the i386 entry (int 0x80): seccomp sees AUDIT_ARCH_I386. */
static const char *raw_i386(long nr)
{
  long r;
  __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr) : "memory", "rcx", "r11");
  return r >= 0 ? "ok" : errname((int)-r);
}
#endif

/* Every syscall first, then one write(2) of the results from a stack buffer: under a profile that
 * denies all but write and exit, nothing else may run. */
static int probe_newer(int out)
{
  char buf[256];
  int n = snprintf(buf, sizeof(buf), "1000=%s getppid=%s", raw(1000), raw(SYS_getppid));
#if defined(__x86_64__)
  const char *x32 = raw(X32_BIT | 1000), *i386_new = raw_i386(1000), *i386_getpid = raw_i386(20);
  n += snprintf(buf + n, sizeof(buf) - (size_t)n, " x32-1000=%s i386-1000=%s i386-getpid=%s", x32,
                i386_new, i386_getpid);
#endif
  if (write(out, buf, (size_t)n) < 0)
    return 4;
  return 0;
}

static int probe_getppid(int out)
{
  say(out, "getppid=%s 1000=%s", raw(SYS_getppid), raw(1000));
  return 0;
}

static void check_newer(const struct rrt_seccomp *sc, const char *cache, const char *want,
                        const char *what)
{
  char *out = NULL;
  struct rrt_seccomp_filter *f = compile_ok(sc, cache, what);
  struct probe p = {f, sc, probe_newer};
  int st = f ? in_child(load_child, &p, &out) : -1;
  ok(exited0(st), "seccomp: %s: the child lives (status %#x)", what, st);
  is_str(out ? out : "", want, "seccomp: %s", what);
  free(out);
  rrt_seccomp_filter_free(f);
}

static void test_seccomp_enosys(void)
{
  /* Only what the probe needs: write to report, exit to end, and sigaltstack, which an ASan
   * build calls before the child's _exit (__asan_handle_no_return: denied, the child dies in a
   * CHECK). The highest of them (exit_group: 231 on x86_64, 252 on i386) bounds what the
   * profile knows. */
  struct rrt_seccomp_syscall allow[] = {
      {.names = STRV("write", "exit", "exit_group", "sigaltstack"), .action = "SCMP_ACT_ALLOW"}};
  struct rrt_seccomp sc = {.default_action = "SCMP_ACT_ERRNO",
                           .architectures =
                               STRV("SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"),
                           .syscalls = allow,
                           .n_syscalls = 1};
#if defined(__x86_64__)
  const char *want = "1000=ENOSYS getppid=EPERM x32-1000=ENOSYS i386-1000=ENOSYS i386-getpid=EPERM";
#else
  const char *want = "1000=ENOSYS getppid=EPERM";
#endif
  check_newer(&sc, NULL, want,
              "default errno: a number above every named one gets ENOSYS, on x86_64, x32 "
              "and i386; an unnamed one below keeps the default errno");

  /* Cached: the program the cache holds has the check too. */
  char dir[] = "/tmp/rrt-seccomp-enosys-XXXXXX";
  if (!mkdtemp(dir))
    abort();
  char *cache = xasprintf("%s/cache", dir);
  sc.canonical_json = "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"test\":\"enosys\"}";
  check_newer(&sc, cache, want, "compiled into the cache: ENOSYS as above");
  check_newer(&sc, cache, want, "loaded from the cache: ENOSYS as above");
  sc.canonical_json = NULL;
  char *rm = xasprintf("rm -rf '%s'", dir);
  ok(system(rm) == 0, "seccomp: cache directory removed");
  free(rm);
  free(cache);

  /* A kill default: a newer syscall is answered ENOSYS, it does not kill. */
  sc.default_action = "SCMP_ACT_KILL_PROCESS";
  sc.architectures = NO_STRV;
  struct rrt_seccomp_syscall kill_rest[] = {{.names = STRV("write", "exit", "exit_group", "getppid",
                                                           "brk", "mmap", "munmap", "sigaltstack"),
                                             .action = "SCMP_ACT_ALLOW"}};
  sc.syscalls = kill_rest;
  struct rrt_seccomp_filter *f = compile_ok(&sc, NULL, "kill default");
  struct probe p = {f, &sc, probe_getppid};
  char *out = NULL;
  int st = in_child(load_child, &p, &out);
  ok(exited0(st) && strcmp(out, "getppid=ok 1000=ENOSYS") == 0,
     "seccomp: kill default, native arch only: the newer syscall gets ENOSYS, no SIGSYS (status "
     "%#x, %s)",
     st, out);
  free(out);
  rrt_seccomp_filter_free(f);

  /* ALLOW default: no check, a syscall above the named ones reaches the kernel. */
  struct rrt_seccomp_syscall deny_getpid[] = {
      {.names = STRV("getpid"), .action = "SCMP_ACT_ERRNO"}};
  struct rrt_seccomp as = {
      .default_action = "SCMP_ACT_ALLOW", .syscalls = deny_getpid, .n_syscalls = 1};
  f = compile_ok(&as, NULL, "allow default");
  p = (struct probe){f, &as, probe_getppid};
  st = in_child(load_child, &p, &out);
  ok(exited0(st) && strcmp(out, "getppid=ok 1000=ENOSYS") == 0,
     "seccomp: allow default: getppid (above getpid, the one named) still runs (%s)", out);
  free(out);
  rrt_seccomp_filter_free(f);
}

/* linux.seccomp.listenerPath without any SCMP_ACT_NOTIFY rule: the agent still gets its one
 * connection, the state and a listener, never a wait for nothing (issue 27, item 5). */
static void test_seccomp_listener_only(void)
{
  char dir[] = "/tmp/rrt-confine-listener-XXXXXX";
  if (!mkdtemp(dir))
    abort();
  char *sock_path = xasprintf("%s/agent.sock", dir);
  int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock_path);
  if (bind(ls, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(ls, 1) < 0)
    abort();
  struct rrt_seccomp sc = {.default_action = "SCMP_ACT_ALLOW", .listener_path = sock_path};
  struct rrt_seccomp_filter *f = compile_ok(&sc, NULL, "listenerPath without a notify rule");
  struct notify_arg na = {f, &sc, ls};
  pid_t pid;
  int rfd = child_start(notify_child, &na, &pid);
  rrt_seccomp_filter_release_listener(f);
  /* Not blocking forever when nothing connects: the test gives it 10 s. */
  struct pollfd pfd = {.fd = ls, .events = POLLIN};
  int c = poll(&pfd, 1, 10000) == 1 ? accept4(ls, NULL, NULL, SOCK_CLOEXEC) : -1;
  ok(c >= 0, "seccomp listener: the runtime connects to listenerPath");
  char buf[4096] = {0};
  union {
    char b[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = {buf, sizeof(buf) - 1};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b)};
  ssize_t got = c >= 0 ? recvmsg(c, &msg, MSG_CMSG_CLOEXEC) : -1;
  int fd = -1;
  struct cmsghdr *cm = got > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
  if (cm && cm->cmsg_type == SCM_RIGHTS)
    memcpy(&fd, CMSG_DATA(cm), sizeof(int));
  ok(fd >= 0, "seccomp listener: one fd (a listener) arrives");
  while (got > 0 && (size_t)got < sizeof(buf) - 1) {
    ssize_t more = read(c, buf + got, sizeof(buf) - 1 - (size_t)got);
    if (more <= 0)
      break;
    got += more;
  }
  struct json_object *o = json_tokener_parse(buf), *v = NULL, *st = NULL;
  ok(o && json_object_object_get_ex(o, "state", &st) && json_object_object_get_ex(st, "id", &v) &&
         strcmp(json_object_get_string(v), "c1") == 0,
     "seccomp listener: with the container's state (%s)", buf);
  json_object_put(o);
  char *out = NULL;
  int status = child_finish(pid, rfd, &out);
  ok(exited0(status) && strcmp(out, "mkdir=ok") == 0 && rmdir("/tmp/rrt-notify-never") == 0,
     "seccomp listener: the process runs on, nothing is notified (%s)", out);
  free(out);
  if (fd >= 0)
    close(fd);
  if (c >= 0)
    close(c);
  close(ls);
  unlink(sock_path);
  rmdir(dir);
  free(sock_path);
  rrt_seccomp_filter_free(f);
}

int main(void)
{
  test_seccomp_basic();
  test_seccomp_errors();
  test_seccomp_notify();
  test_seccomp_enosys();
  test_seccomp_listener_only();
  return tap_done();
}
