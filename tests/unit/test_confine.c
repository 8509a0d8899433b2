/* test_confine.c: caps, seccomp (and its cache), limits and fd closing, each in a child. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/util.h"
#include "tap.h"

/* Implemented in confine/limits.c, not yet declared in confine.h. */

#define STRV(...)                                                                                  \
  ((struct rrt_strv){(char *[]){__VA_ARGS__, NULL},                                                \
                     sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)})
#define NO_STRV ((struct rrt_strv){NULL, 0})

/* ---- children ---- */

typedef int (*child_fn)(int out, void *arg);

/* Runs fn in a forked child; out collects what it writes to its pipe.
 * Returns the wait status. */
static int in_child(child_fn fn, void *arg, char **out)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    abort();
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0)
    abort();
  if (pid == 0) {
    close(p[0]);
    _exit(fn(p[1], arg));
  }
  close(p[1]);
  struct rrt_error e = RRT_ERROR_INIT;
  char *buf = NULL;
  if (rrt_read_fd(p[0], &buf, NULL, &e) < 0)
    buf = xstrdup("");
  rrt_error_clear(&e);
  close(p[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (out)
    *out = buf;
  else
    free(buf);
  return status;
}

static bool exited0(int status)
{
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
  char *s = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&s, fmt, ap) < 0)
    abort();
  va_end(ap);
  (void)rrt_write_all(fd, s, strlen(s));
  free(s);
}

static int write_str(const char *path, const char *s)
{
  struct rrt_error e = RRT_ERROR_INIT;
  int r = rrt_write_file(path, s, strlen(s), 0, 0, &e);
  rrt_error_clear(&e);
  return r;
}

/* Root in a fresh user namespace mapped onto our own ids. */
static int enter_self_userns(void)
{
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER) < 0)
    return -1;
  char map[64];
  snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
  if (write_str("/proc/self/setgroups", "deny") < 0 || write_str("/proc/self/uid_map", map) < 0)
    return -1;
  snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
  return write_str("/proc/self/gid_map", map);
}

static int userns_child(int out, void *arg)
{
  return enter_self_userns() < 0 ? 1 : 0;
}

static bool userns_works(void)
{
  char *out = NULL;
  int st = in_child(userns_child, NULL, &out);
  free(out);
  return exited0(st);
}

/* ---- capabilities ---- */

static void test_caps_validate(void)
{
  struct rrt_error e = RRT_ERROR_INIT;
  struct rrt_caps good = {.bounding = STRV("CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"),
                          .effective = STRV("cap_chown")};
  is_int(rrt_caps_validate(&good, &e), 0, "caps: valid names accepted");
  is_int(rrt_caps_validate(NULL, &e), 0, "caps: NULL accepted");

  /* config.md: a value that cannot be mapped is a warning, not a failure. */
  struct rrt_caps bad = {.bounding = STRV("CAP_CHOWN", "CAP_KILL", "CAP_FOO")};
  is_int(rrt_caps_validate(&bad, &e), 0, "caps: CAP_FOO is skipped (a warning), not an error");
  struct rrt_caps num = {.ambient = STRV("12")};
  is_int(rrt_caps_validate(&num, &e), 0, "caps: a bare number is skipped as unknown");
  rrt_error_clear(&e);
}

struct caps_case {
  const struct rrt_caps *caps;
  uid_t switch_to; /* 0 = stay root */
};

/* The five masks of /proc/self/status, as "Bnd Eff Prm Inh Amb" hex. */
static void say_status_caps(int out)
{
  FILE *f = fopen("/proc/self/status", "re");
  char line[256];
  const char *keys[] = {"CapBnd:", "CapEff:", "CapPrm:", "CapInh:", "CapAmb:"};
  unsigned long long v[5] = {0};
  while (f && fgets(line, sizeof(line), f))
    for (int i = 0; i < 5; i++)
      if (strncmp(line, keys[i], strlen(keys[i])) == 0)
        v[i] = strtoull(line + strlen(keys[i]), NULL, 16);
  if (f)
    fclose(f);
  say(out, "%llx %llx %llx %llx %llx", v[0], v[1], v[2], v[3], v[4]);
}

static int caps_child(int out, void *arg)
{
  const struct caps_case *c = arg;
  struct rrt_error e = RRT_ERROR_INIT;
  if (c->switch_to == 0 && enter_self_userns() < 0)
    return say(out, "userns: %s", strerror(errno)), 2;
  if (rrt_caps_prepare(c->caps, &e) < 0)
    return say(out, "prepare: %s", rrt_error_msg(&e)), 3;
  if (c->switch_to != 0 && (setresgid(c->switch_to, c->switch_to, c->switch_to) < 0 ||
                            setresuid(c->switch_to, c->switch_to, c->switch_to) < 0))
    return say(out, "setresuid: %s", strerror(errno)), 4;
  if (rrt_caps_apply(c->caps, &e) < 0)
    return say(out, "apply: %s", rrt_error_msg(&e)), 5;
  say_status_caps(out);
  return 0;
}

/* For the uid switch the parent maps 0 and 1000 (only a privileged parent
 * can map two ids), then lets the child go on. */
struct mapped_child {
  const struct caps_case *c;
  int go[2];
  int ready[2];
};

static int mapped_caps_child(int out, void *arg)
{
  struct mapped_child *m = arg;
  char b = 0;
  if (unshare(CLONE_NEWUSER) < 0)
    return say(out, "unshare: %s", strerror(errno)), 2;
  if (write(m->ready[1], "r", 1) != 1 || read(m->go[0], &b, 1) != 1 || b != 'g')
    return say(out, "sync failed"), 2;
  if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
    return say(out, "become root: %s", strerror(errno)), 2;
  return caps_child(out, (void *)m->c);
}

static int fork_mapped(struct mapped_child *m, char **out)
{
  if (pipe2(m->go, O_CLOEXEC) < 0 || pipe2(m->ready, O_CLOEXEC) < 0)
    abort();
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    abort();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    _exit(mapped_caps_child(p[1], m));
  }
  close(p[1]);
  char b;
  if (read(m->ready[0], &b, 1) == 1) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
    write_str(path, "0 0 1\n1000 1000 1");
    snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
    write_str(path, "0 0 1\n1000 1000 1");
    (void)!write(m->go[1], "g", 1);
  }
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_read_fd(p[0], out, NULL, &e) < 0)
    *out = xstrdup("");
  rrt_error_clear(&e);
  close(p[0]);
  int st;
  waitpid(pid, &st, 0);
  close(m->go[0]);
  close(m->go[1]);
  close(m->ready[0]);
  close(m->ready[1]);
  return st;
}

#define BIT(c) (1ULL << (c))

static void test_caps_apply(bool have_userns)
{
  if (!have_userns) {
    for (int i = 0; i < 9; i++)
      ok(1, "# SKIP user namespaces unavailable");
    return;
  }
  char *out = NULL;
  char expect[128];
  struct rrt_caps caps = {
      .bounding = STRV("CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SETPCAP"),
      .effective = STRV("CAP_CHOWN", "CAP_NET_BIND_SERVICE"),
      .permitted = STRV("CAP_CHOWN", "CAP_NET_BIND_SERVICE", "CAP_KILL"),
      .inheritable = STRV("CAP_NET_BIND_SERVICE"),
      .ambient = STRV("CAP_NET_BIND_SERVICE"),
  };
  struct caps_case c = {&caps, 0};
  int st = in_child(caps_child, &c, &out);
  ok(exited0(st), "caps: applied as root in a user namespace (%s)", out);
  snprintf(expect, sizeof(expect), "%llx %llx %llx %llx %llx",
           BIT(CAP_CHOWN) | BIT(CAP_KILL) | BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_SETPCAP),
           BIT(CAP_CHOWN) | BIT(CAP_NET_BIND_SERVICE),
           BIT(CAP_CHOWN) | BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_KILL), BIT(CAP_NET_BIND_SERVICE),
           BIT(CAP_NET_BIND_SERVICE));
  is_str(out, expect, "caps: CapBnd/CapEff/CapPrm/CapInh/CapAmb exactly as configured");
  free(out);

  struct caps_case none = {NULL, 0};
  st = in_child(caps_child, &none, &out);
  ok(exited0(st), "caps: NULL caps applied");
  is_str(out, "0 0 0 0 0", "caps: NULL caps = every set empty");
  free(out);

  struct rrt_caps amb_bad = {.bounding = STRV("CAP_KILL"),
                             .permitted = STRV("CAP_KILL"),
                             .effective = STRV("CAP_KILL"),
                             .ambient = STRV("CAP_KILL")};
  struct caps_case ab = {&amb_bad, 0};
  st = in_child(caps_child, &ab, &out);
  ok(exited0(st), "caps: an ambient capability without inheritable is skipped (buildah's configs)");
  snprintf(expect, sizeof(expect), "%llx %llx %llx 0 0", BIT(CAP_KILL), BIT(CAP_KILL),
           BIT(CAP_KILL));
  is_str(out, expect, "caps: the rest applied, the ambient one not raised");
  free(out);

  if (getuid() != 0) {
    for (int i = 0; i < 3; i++)
      ok(1, "# SKIP mapping uid 1000 needs a privileged parent");
    return;
  }
  struct rrt_caps user = {
      .bounding = STRV("CAP_NET_BIND_SERVICE", "CAP_NET_RAW"),
      .effective = STRV("CAP_NET_BIND_SERVICE"),
      .permitted = STRV("CAP_NET_BIND_SERVICE", "CAP_NET_RAW"),
      .inheritable = STRV("CAP_NET_BIND_SERVICE"),
      .ambient = STRV("CAP_NET_BIND_SERVICE"),
  };
  struct caps_case uc = {&user, 1000};
  struct mapped_child m = {.c = &uc};
  st = fork_mapped(&m, &out);
  ok(exited0(st), "caps: applied across setresuid(1000) (%s)", out);
  snprintf(expect, sizeof(expect), "%llx %llx %llx %llx %llx",
           BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_NET_RAW), BIT(CAP_NET_BIND_SERVICE),
           BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_NET_RAW), BIT(CAP_NET_BIND_SERVICE),
           BIT(CAP_NET_BIND_SERVICE));
  is_str(out, expect, "caps: uid 1000 keeps exactly the configured sets (KEEPCAPS worked)");
  free(out);

  uc.caps = NULL;
  st = fork_mapped(&m, &out);
  is_str(out, "0 0 0 0 0", "caps: uid 1000 with NULL caps has nothing");
  free(out);
}

/* ---- seccomp ---- */

/* Captures rrt_warn output (stderr) while fn-like code runs. */
struct capture {
  int saved;
  int fd;
};

static void capture_begin(struct capture *c)
{
  fflush(stderr);
  c->fd = memfd_create("stderr", MFD_CLOEXEC);
  c->saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  dup2(c->fd, STDERR_FILENO);
}

static char *capture_end(struct capture *c)
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

static struct rrt_seccomp_filter *compile_ok(const struct rrt_seccomp *sc, const char *cache,
                                             const char *what)
{
  struct rrt_seccomp_filter *f = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  int r = rrt_seccomp_compile(sc, cache, &f, &e);
  ok(r == 0 && f, "seccomp: %s compiles (%s)", what, e.msg ? e.msg : "ok");
  rrt_error_clear(&e);
  return f;
}

static void compile_fails(const struct rrt_seccomp *sc, const char *msg, const char *what)
{
  struct rrt_seccomp_filter *f = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  ok(rrt_seccomp_compile(sc, NULL, &f, &e) < 0 && !f, "seccomp: %s refused", what);
  is_str(rrt_error_msg(&e), msg, "seccomp: %s error text", what);
  rrt_error_clear(&e);
  rrt_seccomp_filter_free(f);
}

struct probe {
  struct rrt_seccomp_filter *f;
  const struct rrt_seccomp *sc;
  int (*after)(int out);
};

/* NNP first, so loading needs no privilege; then the probe reports. */
static int load_child(int out, void *arg)
{
  struct probe *p = arg;
  struct rrt_error e = RRT_ERROR_INIT;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return 2;
  if (rrt_seccomp_load(p->f, p->sc, NULL, &e) < 0)
    return say(out, "load: %s", rrt_error_msg(&e)), 3;
  return p->after(out);
}

static const char *errname(int r)
{
  return r == 0        ? "ok"
         : r == EPERM  ? "EPERM"
         : r == EACCES ? "EACCES"
         : r == ENOSYS ? "ENOSYS"
                       : "other";
}

static int probe_mkdir(int out)
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

/* A podman-shaped profile: default ERRNO, one big ALLOW entry. Built from
 * libseccomp's table so it stays valid; mkdir/mkdirat/acct are left out. */
struct big_profile {
  struct rrt_seccomp sc;
  struct rrt_seccomp_syscall allow;
  char **names;
};

static void big_profile_init(struct big_profile *b, const char *tag)
{
  /* static: the profile outlives this function */
  static char *archs[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", NULL};
  size_t n = 0;
  b->names = xcalloc(600, sizeof(char *));
  uint32_t arch = seccomp_arch_native();
  for (int nr = 0; nr < 460 && n < 590; nr++) {
    char *name = seccomp_syscall_resolve_num_arch(arch, nr);
    if (!name)
      continue;
    if (strcmp(name, "mkdir") && strcmp(name, "mkdirat") && strcmp(name, "acct") &&
        strcmp(name, "close_range"))
      b->names[n++] = xstrdup(name);
    free(name);
  }
  b->names[n++] = xstrdup("fake_syscall_xyz");
  b->names[n++] = xstrdup("another_fake_syscall");
  b->allow = (struct rrt_seccomp_syscall){.names = {b->names, n}, .action = "SCMP_ACT_ALLOW"};
  b->sc = (struct rrt_seccomp){.default_action = "SCMP_ACT_ERRNO",
                               .architectures = {archs, 3},
                               .syscalls = &b->allow,
                               .n_syscalls = 1};
  /* The cache key: json-c writes what spec.c would. */
  struct json_object *o = json_object_new_object();
  struct json_object *arr = json_object_new_array();
  for (size_t i = 0; i < n; i++)
    json_object_array_add(arr, json_object_new_string(b->names[i]));
  json_object_object_add(o, "defaultAction", json_object_new_string("SCMP_ACT_ERRNO"));
  json_object_object_add(o, "names", arr);
  json_object_object_add(o, "tag", json_object_new_string(tag));
  b->sc.canonical_json = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
}

static void big_profile_free(struct big_profile *b)
{
  rrt_strv_free(b->names);
  free(b->sc.canonical_json);
}

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int count_files(const char *dir, ino_t *ino)
{
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (de->d_name[0] != '.') {
      n++;
      if (ino)
        *ino = de->d_ino;
    }
  if (d)
    closedir(d);
  return n;
}

static void test_seccomp_big_and_cache(void)
{
  struct big_profile b;
  big_profile_init(&b, "one");
  ok(b.allow.names.n >= 300, "seccomp: the big profile has %zu names", b.allow.names.n);

  struct capture cap;
  capture_begin(&cap);
  struct rrt_seccomp_filter *f = compile_ok(&b.sc, NULL, "300-name allow list");
  char *warned = capture_end(&cap);
  ok(strstr(warned, "names[") && strstr(warned, "unknown syscall fake_syscall_xyz, skipped") &&
         strstr(warned, "another_fake_syscall"),
     "seccomp: fake syscalls skipped with a warning");
  ok(!strstr(warned, "unknown syscall read,"), "seccomp: real syscalls are not warned about");
  free(warned);

  char *out = NULL;
  struct probe p = {f, &b.sc, probe_mkdir};
  int st = in_child(load_child, &p, &out);
  ok(exited0(st), "seccomp: child runs under the default-ERRNO profile");
  is_str(out, "open=ok mkdir=EPERM getpid=ok", "seccomp: unlisted mkdir -> EPERM, listed work");
  free(out);
  rrt_seccomp_filter_free(f);

  char dir[] = "/tmp/rrt-confine-cache-XXXXXX";
  if (!mkdtemp(dir))
    abort();
  ino_t ino1 = 0, ino2 = 0;
  double t0 = now_ms();
  f = compile_ok(&b.sc, dir, "cold compile with cache");
  double cold = now_ms() - t0;
  is_int(count_files(dir, &ino1), 1, "seccomp cache: one file after the first compile");
  struct stat sb;
  char path[512];
  snprintf(path, sizeof(path), "%s/", dir);
  DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (de->d_name[0] != '.')
      snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
  if (d)
    closedir(d);
  ok(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600 && strstr(path, ".bpf"),
     "seccomp cache: %s is a 0600 .bpf file", path);

  struct rrt_seccomp_filter *g = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  t0 = now_ms();
  int r = rrt_seccomp_compile(&b.sc, dir, &g, &e);
  double hot = now_ms() - t0;
  ok(r == 0, "seccomp cache: second compile succeeds");
  ok(count_files(dir, &ino2) == 1 && ino1 == ino2, "seccomp cache: second compile is a hit");

  /* Averages over a few rounds, for the report. */
  double cold_sum = 0, hot_sum = 0;
  for (int i = 0; i < 10; i++) {
    struct rrt_seccomp_filter *x = NULL;
    capture_begin(&cap);
    t0 = now_ms();
    rrt_seccomp_compile(&b.sc, NULL, &x, &e);
    cold_sum += now_ms() - t0;
    free(capture_end(&cap));
    rrt_seccomp_filter_free(x);
    x = NULL;
    t0 = now_ms();
    rrt_seccomp_compile(&b.sc, dir, &x, &e);
    hot_sum += now_ms() - t0;
    rrt_seccomp_filter_free(x);
  }
  printf("# seccomp compile, %zu names: first %.2f ms, hit %.3f ms; mean of 10: cold %.2f ms, "
         "cached %.3f ms\n",
         b.allow.names.n, cold, hot, cold_sum / 10, hot_sum / 10);

  p = (struct probe){g, &b.sc, probe_mkdir};
  st = in_child(load_child, &p, &out);
  is_str(out, "open=ok mkdir=EPERM getpid=ok", "seccomp cache: the cached filter behaves the same");
  free(out);
  rrt_seccomp_filter_free(g);
  rrt_seccomp_filter_free(f);

  struct big_profile b2;
  big_profile_init(&b2, "two");
  capture_begin(&cap);
  f = compile_ok(&b2.sc, dir, "changed profile");
  free(capture_end(&cap));
  is_int(count_files(dir, NULL), 2, "seccomp cache: a changed profile is a miss");
  rrt_seccomp_filter_free(f);

  /* A damaged file (a crash mid-write) is recompiled, not loaded. */
  (void)!truncate(path, 20);
  capture_begin(&cap);
  f = compile_ok(&b.sc, dir, "over a damaged cache file");
  warned = capture_end(&cap);
  ok(strstr(warned, "is damaged, recompiling") != NULL, "seccomp cache: damage is noticed");
  free(warned);
  p = (struct probe){f, &b.sc, probe_mkdir};
  in_child(load_child, &p, &out);
  is_str(out, "open=ok mkdir=EPERM getpid=ok", "seccomp cache: recompiled filter works");
  free(out);
  rrt_seccomp_filter_free(f);

  big_profile_free(&b);
  big_profile_free(&b2);
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  (void)!system(cmd);
}

/* The one .bpf file of dir, as a path (malloc'd), or NULL. */
static char *only_file(const char *dir)
{
  char *path = NULL;
  DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (de->d_name[0] != '.') {
      free(path);
      path = xasprintf("%s/%s", dir, de->d_name);
    }
  if (d)
    closedir(d);
  return path;
}

/*
 * The attack on a shared cache: profile B (allows everything) is crafted so that its entry lands
 * under profile A's name. Planted here by copying B's cache file to the name A's compile uses; A
 * must still get A's filter (mkdir denied), never B's.
 */
static void test_seccomp_cache_collision(void)
{
  struct rrt_seccomp_syscall deny_mkdir[] = {
      {.names = STRV("mkdir", "mkdirat"), .action = "SCMP_ACT_ERRNO"}};
  struct rrt_seccomp a = {.default_action = "SCMP_ACT_ALLOW",
                          .syscalls = deny_mkdir,
                          .n_syscalls = 1,
                          .canonical_json =
                              "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"deny\":\"mkdir\"}"};
  struct rrt_seccomp_syscall allow_getpid[] = {
      {.names = STRV("getpid"), .action = "SCMP_ACT_ALLOW"}};
  struct rrt_seccomp b = {.default_action = "SCMP_ACT_ALLOW",
                          .syscalls = allow_getpid,
                          .n_syscalls = 1,
                          .canonical_json = "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}"};
  char da[] = "/tmp/rrt-confine-ca-XXXXXX", db[] = "/tmp/rrt-confine-cb-XXXXXX";
  if (!mkdtemp(da) || !mkdtemp(db))
    abort();
  rrt_seccomp_filter_free(compile_ok(&a, da, "profile A into its cache"));
  rrt_seccomp_filter_free(compile_ok(&b, db, "profile B into its cache"));
  char *pa = only_file(da), *pb = only_file(db);
  ok(pa && pb && strcmp(strrchr(pa, '/'), strrchr(pb, '/')) != 0 &&
         strlen(strrchr(pa, '/') + 1) == 64 + 4,
     "seccomp cache: A and B have their own entries, named by a sha256 (%s)", pa ? pa : "none");
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "cp %s %s", pb ? pb : "/nonexistent", pa ? pa : "/nonexistent");
  ok(system(cmd) == 0, "seccomp cache: B's entry planted under A's name");

  struct capture cap;
  capture_begin(&cap);
  struct rrt_seccomp_filter *f = compile_ok(&a, da, "profile A over B's planted entry");
  char *warned = capture_end(&cap);
  ok(strstr(warned, "holds the filter of another profile, recompiling") != NULL,
     "seccomp cache: the planted entry is noticed (%s)", warned);
  free(warned);
  char *out = NULL;
  struct probe p = {f, &a, probe_mkdir};
  in_child(load_child, &p, &out);
  is_str(out, "open=ok mkdir=EPERM getpid=ok",
         "seccomp cache: A's filter is what loads (mkdir denied), not B's");
  free(out);
  rrt_seccomp_filter_free(f);

  /* The miss rewrote the entry: the next compile of A is a hit on A's own filter. */
  capture_begin(&cap);
  f = compile_ok(&a, da, "profile A again");
  warned = capture_end(&cap);
  is_str(warned, "", "seccomp cache: the rewritten entry is A's (no warning)");
  free(warned);
  p = (struct probe){f, &a, probe_mkdir};
  in_child(load_child, &p, &out);
  is_str(out, "open=ok mkdir=EPERM getpid=ok", "seccomp cache: the hit loads A's filter");
  free(out);
  rrt_seccomp_filter_free(f);
  free(pa);
  free(pb);
  snprintf(cmd, sizeof(cmd), "rm -rf %s %s", da, db);
  (void)!system(cmd);
}

/* SCMP_ACT_NOTIFY: the listener fd and the containerProcessState reach an
 * agent on listenerPath; the agent answers mkdir with EROFS. */
struct notify_arg {
  struct rrt_seccomp_filter *f;
  const struct rrt_seccomp *sc;
};

static int notify_child(int out, void *arg)
{
  struct notify_arg *n = arg;
  struct rrt_error e = RRT_ERROR_INIT;
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
  struct notify_arg na = {f, &sc};

  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    abort();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    close(ls);
    _exit(notify_child(p[1], &na));
  }
  close(p[1]);
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
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_read_fd(p[0], &out, NULL, &e) < 0)
    out = xstrdup("");
  rrt_error_clear(&e);
  int status;
  waitpid(pid, &status, 0);
  is_str(out, "mkdir=EROFS", "seccomp notify: the container saw the agent's answer");
  free(out);
  if (fd >= 0)
    close(fd);
  if (c >= 0)
    close(c);
  close(p[0]);
  close(ls);
  unlink(sock_path);
  rmdir(dir);
  free(sock_path);
  rrt_seccomp_filter_free(f);
}

/* ---- limits ---- */

static int rlimit_child(int out, void *arg)
{
  struct rrt_rlimit rl[] = {{"RLIMIT_NOFILE", RLIMIT_NOFILE, 512, 1024},
                            {"RLIMIT_CORE", RLIMIT_CORE, 0, 0}};
  struct rrt_process proc = {.rlimits = rl, .n_rlimits = 2};
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_process_limits_apply(&proc, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 3;
  struct rlimit a, b;
  getrlimit(RLIMIT_NOFILE, &a);
  getrlimit(RLIMIT_CORE, &b);
  say(out, "%llu/%llu %llu/%llu", (unsigned long long)a.rlim_cur, (unsigned long long)a.rlim_max,
      (unsigned long long)b.rlim_cur, (unsigned long long)b.rlim_max);
  return 0;
}

/* In a user namespace CAP_SYS_RESOURCE does not count: a hard limit cannot
 * go back up, as for a rootless runtime. */
static int rlimit_raise_child(int out, void *arg)
{
  if (unshare(CLONE_NEWUSER) < 0)
    return say(out, "unshare: %s", strerror(errno)), 2;
  struct rlimit low = {256, 1024};
  if (setrlimit(RLIMIT_NOFILE, &low) < 0)
    return 2;
  struct rrt_rlimit rl[] = {{"RLIMIT_NOFILE", RLIMIT_NOFILE, 512, 4096}};
  struct rrt_process proc = {.rlimits = rl, .n_rlimits = 1};
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_process_limits_apply(&proc, &e) == 0)
    return say(out, "raised"), 0;
  say(out, "%s", rrt_error_msg(&e));
  return 1;
}

static int read_int_file(const char *path)
{
  char *s = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_read_file(path, &s, NULL, &e) < 0) {
    rrt_error_clear(&e);
    return -99999;
  }
  int v = atoi(s);
  free(s);
  return v;
}

static int oom_child(int out, void *arg)
{
  struct rrt_process proc = {.has_oom_score_adj = true, .oom_score_adj = 500};
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_process_limits_apply(&proc, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 3;
  say(out, "%d", read_int_file("/proc/self/oom_score_adj"));
  /* Lowering it again without CAP_SYS_RESOURCE is only a warning. */
  if (unshare(CLONE_NEWUSER) == 0) {
    proc.oom_score_adj = -500;
    if (rrt_process_limits_apply(&proc, &e) < 0)
      return say(out, " %s", rrt_error_msg(&e)), 4;
    say(out, " %d", read_int_file("/proc/self/oom_score_adj"));
  }
  return 0;
}

static int sched_io_child(int out, void *arg)
{
  struct rrt_process proc = {
      .io_priority = {.present = true, .klass = "IOPRIO_CLASS_BE", .priority = 5},
      .scheduler = {.present = true, .policy = "SCHED_BATCH", .nice = 7},
  };
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_process_limits_apply(&proc, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 3;
  long io = syscall(SYS_ioprio_get, 1, 0);
  say(out, "io=%ld/%ld batch=%d nice=%d", io >> 13, io & 7, sched_getscheduler(0) == SCHED_BATCH,
      getpriority(PRIO_PROCESS, 0));
  return 0;
}

static int sched_fifo_child(int out, void *arg)
{
  if (unshare(CLONE_NEWUSER) < 0)
    return 2;
  struct rrt_process proc = {
      .scheduler = {.present = true, .policy = "SCHED_FIFO", .priority = 10},
  };
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_process_limits_apply(&proc, &e) == 0)
    return say(out, "allowed"), 0;
  say(out, "%s", rrt_error_msg(&e));
  return 1;
}

static int personality_child(int out, void *arg)
{
  struct rrt_personality pers = {.domain = "LINUX32"};
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_personality_apply(&pers, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 3;
  struct utsname u;
  uname(&u);
  say(out, "%d %s", (personality(0xffffffff) & PER_MASK) == PER_LINUX32, u.machine);
  return 0;
}

static void test_limits(bool have_userns)
{
  char *out = NULL;
  int st = in_child(rlimit_child, NULL, &out);
  ok(exited0(st), "rlimits: applied");
  is_str(out, "512/1024 0/0", "rlimits: getrlimit sees soft/hard as configured");
  free(out);

  if (have_userns) {
    st = in_child(rlimit_raise_child, NULL, &out);
    is_str(out,
           "process.rlimits[0] (RLIMIT_NOFILE): cannot raise hard limit above 1024: Operation not "
           "permitted",
           "rlimits: raising the hard limit fails with a clear error");
    free(out);
  } else {
    ok(1, "# SKIP user namespaces unavailable");
  }

  struct rrt_rlimit bad[] = {{"RLIMIT_NOFILE", RLIMIT_NOFILE, 10, 5}};
  struct rrt_process proc = {.rlimits = bad, .n_rlimits = 1};
  struct rrt_error e = RRT_ERROR_INIT;
  ok(rrt_process_limits_apply(&proc, &e) < 0 && strstr(rrt_error_msg(&e), "soft 10 above hard 5"),
     "rlimits: soft above hard refused (%s)", rrt_error_msg(&e));
  rrt_error_clear(&e);

  st = in_child(oom_child, NULL, &out);
  ok(exited0(st), "oomScoreAdj: applied (%s)", out);
  ok(strncmp(out, "500", 3) == 0, "oomScoreAdj: raised to 500");
  if (have_userns)
    is_str(out, "500 500", "oomScoreAdj: lowering unprivileged warns, keeps the value");
  else
    ok(1, "# SKIP user namespaces unavailable");
  free(out);

  st = in_child(sched_io_child, NULL, &out);
  is_str(out, "io=2/5 batch=1 nice=7", "ioPriority BE/5 and SCHED_BATCH nice 7 applied");
  free(out);

  if (have_userns) {
    st = in_child(sched_fifo_child, NULL, &out);
    is_str(out,
           "process.scheduler (SCHED_FIFO, priority 10, nice 0): sched_setattr: "
           "Operation not permitted",
           "scheduler: EPERM names the policy");
    free(out);
  } else {
    ok(1, "# SKIP user namespaces unavailable");
  }

  struct rrt_process badsched = {.scheduler = {.present = true, .policy = "SCHED_FAST"}};
  ok(rrt_process_limits_apply(&badsched, &e) < 0 &&
         strcmp(rrt_error_msg(&e), "process.scheduler.policy: unknown policy SCHED_FAST") == 0,
     "scheduler: unknown policy refused");
  rrt_error_clear(&e);

  st = in_child(personality_child, NULL, &out);
  is_str(out, "1 i686", "personality LINUX32: uname says i686");
  free(out);
}

/* ---- fds ---- */

struct fds_case {
  bool no_close_range; /* force the /proc/self/fd walk */
};

static bool fd_open(int fd)
{
  return fcntl(fd, F_GETFD) >= 0;
}

static int fds_child(int out, void *arg)
{
  const struct fds_case *c = arg;
  int fds[6];
  for (int i = 0; i < 6; i++)
    fds[i] = open("/dev/null", O_RDONLY | (i % 2 ? O_CLOEXEC : 0));
  /* keep[] is unsorted and holds one fd below `first`. */
  int keep[] = {fds[4], out, fds[1], 0};
  struct rrt_error e = RRT_ERROR_INIT;
  if (c->no_close_range) {
    struct rrt_seccomp_syscall s[] = {{.names = STRV("close_range"),
                                       .action = "SCMP_ACT_ERRNO",
                                       .has_errno_ret = true,
                                       .errno_ret = ENOSYS}};
    struct rrt_seccomp sc = {.default_action = "SCMP_ACT_ALLOW", .syscalls = s, .n_syscalls = 1};
    struct rrt_seccomp_filter *f = NULL;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || rrt_seccomp_compile(&sc, NULL, &f, &e) < 0 ||
        rrt_seccomp_load(f, &sc, NULL, &e) < 0)
      return say(out, "setup: %s", rrt_error_msg(&e)), 3;
    rrt_seccomp_filter_free(f);
    if (close_range(1000, 1001, 0) == 0 || errno != ENOSYS)
      return say(out, "close_range not blocked"), 3;
  }
  if (rrt_close_fds_from(3, keep, 4, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 4;
  int n_open = 0;
  for (int fd = 3; fd < 64; fd++)
    n_open += fd_open(fd);
  bool gone = !fd_open(fds[0]) && !fd_open(fds[2]) && !fd_open(fds[3]) && !fd_open(fds[5]);
  say(out, "open=%d gone=%d kept=%d%d cloexec=%d%d", n_open, gone, fd_open(fds[1]), fd_open(fds[4]),
      (fcntl(fds[1], F_GETFD) & FD_CLOEXEC) != 0, (fcntl(fds[4], F_GETFD) & FD_CLOEXEC) != 0);
  return 0;
}

static void test_fds(void)
{
  char *out = NULL;
  struct fds_case c = {false};
  int st = in_child(fds_child, &c, &out);
  ok(exited0(st), "close_fds: ran");
  /* out (the pipe), fds[1] (CLOEXEC) and fds[4] (not) stay. */
  is_str(out, "open=3 gone=1 kept=11 cloexec=10",
         "close_fds: only kept fds survive, CLOEXEC flags untouched");
  free(out);
  c.no_close_range = true;
  st = in_child(fds_child, &c, &out);
  is_str(out, "open=3 gone=1 kept=11 cloexec=10",
         "close_fds: same result through /proc/self/fd when close_range is unavailable");
  free(out);
  struct rrt_error e = RRT_ERROR_INIT;
  ok(rrt_close_fds_from(-1, NULL, 0, &e) < 0, "close_fds: negative first refused");
  rrt_error_clear(&e);
}

/* In a child: fds 3 and 4 open, LISTEN_* as given; writes N and whether fd 3 became CLOEXEC. */
static int listen_child(int out, void *arg)
{
  const char *const *env = arg;
  int o = fcntl(out, F_DUPFD_CLOEXEC, 20);
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (o < 0 || fd < 0 || dup2(fd, 3) < 0 || dup2(fd, 4) < 0)
    return 2;
  for (int i = 5; i < 20; i++)
    close(i);
  /* as a socket activation hands them over: inheritable */
  if (fcntl(3, F_SETFD, 0) < 0 || fcntl(4, F_SETFD, 0) < 0)
    return 2;
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_PID");
  char pid[32];
  snprintf(pid, sizeof(pid), "%d", (int)getpid());
  if (env[0])
    setenv("LISTEN_FDS", env[0], 1);
  if (env[1])
    setenv("LISTEN_PID", strcmp(env[1], "self") == 0 ? pid : env[1], 1);
  int n = rrt_listen_fds_from_env();
  dprintf(o, "%d %d", n, (fcntl(3, F_GETFD) & FD_CLOEXEC) != 0);
  return 0;
}

static void test_listen_fds(void)
{
  const char
      *cases[][3] =
          {
              {"2", "self", "2 1"}, {"2", NULL, "2 1"},   {"2", "1", "0 0"},
              {"0", "self", "0 0"}, {"x", "self", "0 0"}, {NULL, "self", "0 0"},
              {"5", "self", "0 1"}, /* fds 5.. are not open: not ours (3 was marked on the way) */
          };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *out = NULL;
    const char *env[2] = {cases[i][0], cases[i][1]};
    int st = in_child(listen_child, (void *)env, &out);
    ok(exited0(st), "listen fds: LISTEN_FDS=%s LISTEN_PID=%s ran", env[0] ? env[0] : "(unset)",
       env[1] ? env[1] : "(unset)");
    is_str(out, cases[i][2], "listen fds: LISTEN_FDS=%s LISTEN_PID=%s -> %s",
           env[0] ? env[0] : "(unset)", env[1] ? env[1] : "(unset)", cases[i][2]);
    free(out);
  }
}

int main(void)
{
  bool have_userns = userns_works();
  if (!have_userns)
    printf("# user namespaces unavailable: namespace tests are skipped\n");
  test_caps_validate();
  test_caps_apply(have_userns);
  test_seccomp_basic();
  test_seccomp_errors();
  test_seccomp_big_and_cache();
  test_seccomp_cache_collision();
  test_seccomp_notify();
  test_limits(have_userns);
  test_fds();
  test_listen_fds();
  return tap_done();
}
