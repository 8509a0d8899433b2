/* kernel.c: the check's kernel items, each tried in a short-lived child: user namespaces (the
 * sysctls, AppArmor's restriction and rootlessrt's profile), overlayfs in a user namespace,
 * seccomp filters. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_internal.h"
#include "rootlessrt/reexec.h"
#include "rootlessrt/util.h"

int check_overlay_errno = -1;

/* What the throwaway user namespace child got to. */
struct ns_result {
  char step[48]; /* the step that failed, "" when all worked */
  int err;
  int overlay_err; /* -1: not tried */
  bool overlay_userxattr;
};

static int write_str(const char *path, const char *s)
{
  cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || rrt_write_all(fd, s, strlen(s)) < 0)
    return -1;
  return 0;
}

static int map_self(uid_t uid, gid_t gid)
{
  char m[64];
  snprintf(m, sizeof(m), "0 %u 1\n", (unsigned)uid);
  if (write_str("/proc/self/uid_map", m) < 0)
    return -1;
  if (write_str("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
    return -1;
  snprintf(m, sizeof(m), "0 %u 1\n", (unsigned)gid);
  return write_str("/proc/self/gid_map", m);
}

/* In the child: overlay with lower, upper and work under base (which exists). */
static int mount_overlay(const char *base, bool *userxattr)
{
  static const char *const subs[] = {"l", "u", "w", "m"};
  char p[4][4096];
  for (int i = 0; i < 4; i++) {
    snprintf(p[i], sizeof(p[i]), "%s/%s", base, subs[i]);
    if (mkdir(p[i], 0700) < 0 && errno != EEXIST)
      return errno;
  }
  char opts[3 * 4096 + 64];
  snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", p[0], p[1], p[2]);
  if (mount("overlay", p[3], "overlay", 0, opts) == 0)
    return 0;
  strcat(opts, ",userxattr");
  if (mount("overlay", p[3], "overlay", 0, opts) == 0) {
    *userxattr = true;
    return 0;
  }
  return errno;
}

static const char *tmpfs_target(void)
{
  static const char *const dirs[] = {"/tmp", "/dev/shm", "/run", "/mnt"};
  struct stat st;
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
    if (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
      return dirs[i];
  return "/";
}

#define STEP(r, s)                                                                                 \
  do {                                                                                             \
    snprintf((r)->step, sizeof((r)->step), "%s", s);                                               \
    (r)->err = errno;                                                                              \
    return;                                                                                        \
  } while (0)

/* The child's work: a user and mount namespace mapped to the caller, a tmpfs, and overlay on
 * it (base == NULL) or on base (a directory of the filesystem to test). */
static void ns_child(struct ns_result *r, uid_t uid, gid_t gid, const char *base)
{
  r->overlay_err = -1;
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
    STEP(r, "unshare(CLONE_NEWUSER|CLONE_NEWNS)");
  if (map_self(uid, gid) < 0)
    STEP(r, "write /proc/self/uid_map");
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    STEP(r, "make / private");
  const char *t = tmpfs_target();
  if (!base && mount("tmpfs", t, "tmpfs", 0, "size=1m,mode=0700") < 0)
    STEP(r, "mount tmpfs");
  r->overlay_err = mount_overlay(base ? base : t, &r->overlay_userxattr);
}

/* Runs ns_child in a child process; false when it could not run at all. */
static bool try_ns(struct ns_result *r, const char *base)
{
  int p[2];
  memset(r, 0, sizeof(*r));
  r->overlay_err = -1;
  if (pipe2(p, O_CLOEXEC) < 0)
    return false;
  uid_t uid = getuid();
  gid_t gid = getgid();
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    ns_child(r, uid, gid, base);
    (void)!write(p[1], r, sizeof(*r));
    _exit(0);
  }
  close(p[1]);
  bool ok = pid > 0 && read(p[0], r, sizeof(*r)) == (ssize_t)sizeof(*r);
  close(p[0]);
  if (pid > 0)
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
  return ok;
}

int check_try_overlay(const char *dir)
{
  struct ns_result r;
  if (!try_ns(&r, dir) || r.step[0])
    return -1;
  return r.overlay_err;
}

/* ---------------------------------------------------------------- AppArmor */

struct apparmor {
  bool enabled;
  long long restrict_userns; /* -1: the sysctl does not exist */
  bool profile_loaded;       /* "rootlessrt" in the loaded profiles */
  bool under_profile;        /* this process runs under it */
  char *label;               /* this process's label */
};

static void apparmor_state(const struct rrt_check *c, struct apparmor *a)
{
  cleanup_free char *en = check_read(c, "/sys/module/apparmor/parameters/enabled");
  a->enabled = en && en[0] == 'Y';
  a->restrict_userns = check_read_num(c, "/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  cleanup_free char *profiles = check_read(c, "/sys/kernel/security/apparmor/profiles");
  a->profile_loaded =
      profiles && (strncmp(profiles, "rootlessrt ", 11) == 0 || strstr(profiles, "\nrootlessrt "));
  char *label = check_read(c, "/proc/self/attr/apparmor/current");
  if (!label)
    label = check_read(c, "/proc/self/attr/current");
  if (label)
    label[strcspn(label, "\n")] = '\0';
  a->label = label;
  a->under_profile = label && strncmp(label, "rootlessrt ", 11) == 0;
}

static char *self_exe(void)
{
  char buf[4096];
  const char *orig = getenv(RRT_EXE_ENV);
  if (orig && orig[0] == '/')
    return xstrdup(orig);
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return xstrdup("rootlessrt");
  buf[n] = '\0';
  return xstrdup(buf);
}

static char *apparmor_fix(const struct rrt_check *c, const struct apparmor *a)
{
  cleanup_free char *exe = self_exe();
  if (a->profile_loaded)
    return xasprintf("run the installed rootlessrt (/usr/bin or /usr/local/bin), which the "
                     "profile covers, not %s",
                     exe);
  cleanup_free char *etc = check_path(c, "/etc/apparmor.d/rootlessrt");
  if (access(etc, R_OK) == 0)
    return xstrdup("sudo apparmor_parser -r /etc/apparmor.d/rootlessrt");
  return xstrdup("sudo install -m 0644 /usr/local/share/rootlessrt/apparmor/rootlessrt "
                 "/etc/apparmor.d/rootlessrt && sudo apparmor_parser -r "
                 "/etc/apparmor.d/rootlessrt");
}

static bool apparmor_blocks(const struct apparmor *a)
{
  return a->enabled && a->restrict_userns == 1 && !a->under_profile;
}

static void report_apparmor(struct rrt_check *c, const struct apparmor *a)
{
  const char *loaded = a->profile_loaded ? "loaded" : "not loaded";
  if (!a->enabled)
    check_add(c, "apparmor", RRT_CHECK_OK, NULL, "AppArmor is not enabled");
  else if (a->restrict_userns != 1)
    check_add(c, "apparmor", RRT_CHECK_OK, NULL,
              "enabled; unprivileged user namespaces not restricted "
              "(kernel.apparmor_restrict_unprivileged_userns %s); profile rootlessrt %s",
              a->restrict_userns < 0 ? "absent" : "= 0", loaded);
  else if (a->under_profile)
    check_add(c, "apparmor", RRT_CHECK_OK, NULL,
              "kernel.apparmor_restrict_unprivileged_userns = 1; rootlessrt runs under its "
              "profile (%s)",
              a->label);
  else
    check_add(c, "apparmor", RRT_CHECK_FAIL, apparmor_fix(c, a),
              "kernel.apparmor_restrict_unprivileged_userns = 1 and this rootlessrt runs as "
              "\"%s\": user namespaces get no capabilities; profile rootlessrt %s",
              a->label ? a->label : "unconfined", loaded);
}

/* ---------------------------------------------------------------- user namespaces */

static void report_userns(struct rrt_check *c, const struct apparmor *a, const struct ns_result *r,
                          bool ran)
{
  long long max = check_read_num(c, "/proc/sys/user/max_user_namespaces");
  long long clone = check_read_num(c, "/proc/sys/kernel/unprivileged_userns_clone");
  if (max == 0) {
    check_add(c, "userns", RRT_CHECK_FAIL, check_sysctl_fix("user.max_user_namespaces", "28633"),
              "user.max_user_namespaces = 0: user namespaces are disabled");
    return;
  }
  if (clone == 0) {
    check_add(c, "userns", RRT_CHECK_FAIL,
              check_sysctl_fix("kernel.unprivileged_userns_clone", "1"),
              "kernel.unprivileged_userns_clone = 0: only root may create user namespaces");
    return;
  }
  if (!ran || r->step[0]) {
    char *fix = NULL;
    if (apparmor_blocks(a))
      fix = apparmor_fix(c, a);
    else if (ran && r->err == ENOSPC)
      fix = check_sysctl_fix("user.max_user_namespaces", "28633");
    check_add(c, "userns", RRT_CHECK_FAIL, fix, "a test user namespace failed: %s: %s",
              ran ? r->step : "fork", strerror(r->err));
    return;
  }
  check_add(c, "userns", RRT_CHECK_OK, NULL,
            "user.max_user_namespaces = %lld%s; a test user namespace mapped your id and mounted "
            "a tmpfs",
            max, clone == 1 ? ", kernel.unprivileged_userns_clone = 1" : "");
}

static void report_overlay(struct rrt_check *c, const struct ns_result *r, bool ran)
{
  struct utsname u;
  if (uname(&u) < 0)
    snprintf(u.release, sizeof(u.release), "?");
  check_overlay_errno = ran && !r->step[0] ? r->overlay_err : -1;
  if (!ran || r->step[0])
    check_add(c, "overlay", RRT_CHECK_WARN, NULL,
              "not tried: no user namespace (see userns); kernel %s", u.release);
  else if (r->overlay_err == 0)
    check_add(c, "overlay", RRT_CHECK_OK, NULL,
              "kernel overlayfs mounts in a user namespace%s (kernel %s)",
              r->overlay_userxattr ? " with userxattr" : "", u.release);
  else
    check_add(c, "overlay", RRT_CHECK_WARN, check_install(c, PKG_FUSE_OVERLAYFS),
              "kernel overlayfs in a user namespace: %s (kernel %s; 5.11 or later allows it): "
              "image roots need fuse-overlayfs",
              strerror(r->overlay_err), u.release);
}

/* ---------------------------------------------------------------- seccomp */

/* In a child: no_new_privs and an allow-everything filter; 0 or errno. */
static int try_seccomp(void)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return errno;
  pid_t pid = fork();
  if (pid == 0) {
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {1, &allow};
    int e = 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
      e = errno;
    (void)!write(p[1], &e, sizeof(e));
    _exit(0);
  }
  close(p[1]);
  int e = ECHILD;
  if (pid < 0 || read(p[0], &e, sizeof(e)) != (ssize_t)sizeof(e))
    e = pid < 0 ? errno : ECHILD;
  close(p[0]);
  if (pid > 0)
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
  return e;
}

static void report_seccomp(struct rrt_check *c)
{
  const struct scmp_version *v = seccomp_version();
  unsigned int notify = SECCOMP_RET_USER_NOTIF;
  bool has_notify = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &notify) == 0;
  int e = try_seccomp();
  if (e)
    check_add(c, "seccomp", RRT_CHECK_WARN, NULL,
              "installing a filter failed: %s: configs with linux.seccomp fail", strerror(e));
  else
    check_add(c, "seccomp", RRT_CHECK_OK, NULL,
              "a test filter installed; libseccomp %u.%u.%u; SCMP_ACT_NOTIFY %s", v->major,
              v->minor, v->micro, has_notify ? "available" : "not available");
}

void check_userns(struct rrt_check *c)
{
  struct apparmor a = {0};
  apparmor_state(c, &a);
  struct ns_result r;
  bool ran = try_ns(&r, NULL);
  if (!ran)
    r.err = errno;
  report_userns(c, &a, &r, ran);
  report_apparmor(c, &a);
  report_overlay(c, &r, ran);
  report_seccomp(c);
  free(a.label);
}
