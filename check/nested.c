/* nested.c: the check's items for a runtime inside another engine's container (a CI job's): what
 * the outer container allows (ids, capabilities, seccomp, a masked /proc, devices) and so what
 * containers made here get. Each kernel question is tried in a short-lived child. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_internal.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

/* What a trial returns when the user namespace itself could not be made. */
#define NO_USERNS 1000

/* Runs fn in a forked child and returns what it reports (0: it worked, an errno, or NO_USERNS +
 * errno), or -1 when the child could not run. */
static int in_child(int (*fn)(void))
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    int e = fn();
    (void)!write(p[1], &e, sizeof(e));
    _exit(0);
  }
  close(p[1]);
  int e = -1;
  if (pid < 0 || read(p[0], &e, sizeof(e)) != (ssize_t)sizeof(e))
    e = -1;
  close(p[0]);
  if (pid > 0)
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
  return e;
}

/* A fresh proc in a user, mount and pid namespace of our own (no id maps needed: the creator
 * holds every capability in it). */
static int try_proc(void)
{
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
    return NO_USERNS + errno;
  pid_t pid = fork();
  if (pid < 0)
    return errno;
  if (pid == 0) {
    int e = 0;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
      e = errno;
    _exit(e);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return errno;
  return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

/* A fresh sysfs with a network namespace of our own, read-only as an outer one may lock it. */
static int try_sysfs(void)
{
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) < 0)
    return NO_USERNS + errno;
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
      mount("sysfs", "/sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    return errno;
  return 0;
}

/* sethostname in a uts namespace of our own: a name one byte too long is the kernel's EINVAL,
 * and EPERM only from a seccomp filter (podman's default profile). */
static int try_sethostname(void)
{
  if (unshare(CLONE_NEWUSER | CLONE_NEWUTS) < 0)
    return NO_USERNS + errno;
  char name[65];
  memset(name, 'x', sizeof(name));
  return sethostname(name, sizeof(name)) < 0 ? errno : 0;
}

/* The number of mounts below dir in our mountinfo: an engine's masked and read-only paths. */
static size_t mounts_below(const struct rrt_check *c, const char *dir)
{
  cleanup_free char *text = check_read(c, "/proc/self/mountinfo");
  size_t n = 0, len = strlen(dir);
  for (char *l = text; l && *l;) {
    char *end = strchr(l, '\n');
    if (end)
      *end = '\0';
    char point[4096];
    if (sscanf(l, "%*s %*s %*s %*s %4095s", point) == 1 && strncmp(point, dir, len) == 0 &&
        point[len] == '/')
      n++;
    l = end ? end + 1 : NULL;
  }
  return n;
}

static const char *engine_guess(const struct rrt_check *c)
{
  cleanup_free char *podman = check_path(c, "/run/.containerenv");
  cleanup_free char *docker = check_path(c, "/.dockerenv");
  if (access(podman, F_OK) == 0)
    return "podman's";
  if (access(docker, F_OK) == 0)
    return "Docker's";
  if (getenv("KUBERNETES_SERVICE_HOST"))
    return "a Kubernetes pod's";
  return "another engine's";
}

static int count_caps(bool effective)
{
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
  memset(d, 0, sizeof(d));
  int n = 0;
  if (!effective) {
    for (int cap = 0; cap <= 63; cap++)
      if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1)
        n++;
    return n;
  }
  if (syscall(SYS_capget, &hdr, d) < 0)
    return -1;
  for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
    n += __builtin_popcount(d[i].effective);
  return n;
}

/* The default maps a container made here gets, in words. */
static void report_ids(struct rrt_check *c, const struct rrt_userns_caller *who)
{
  struct rrt_userns_plan plan = {0};
  struct rrt_error err = RRT_ERROR_INIT;
  rrt_userns_plan_nested(&plan, who);
  unsigned long long n_uids = 0;
  for (size_t i = 0; i < who->uids.n; i++)
    n_uids += who->uids.v[i].size;
  cleanup_free char *own = rrt_idmap_format(&who->uids);
  for (char *p = own; *p; p++)
    if (*p == '\n')
      *p = p[1] ? ',' : '\0';
  cleanup_free char *caps = xasprintf(
      "uid %u, %d capabilities (CAP_SETUID %s, CAP_SETGID %s, CAP_SETFCAP %s), %llu uids in "
      "this namespace (%s)",
      (unsigned)who->euid, count_caps(true), who->setid ? "yes" : "no", who->setid ? "yes" : "no",
      who->setfcap ? "yes" : "no", n_uids, own);
  if (rrt_userns_plan_check_nested(&plan, who, false, &err) < 0) {
    check_add(c, "nested-ids", RRT_CHECK_FAIL,
              xstrdup("docker run --cap-add SETFCAP ...  # or USER 1000 in the job's image"),
              "%s: %s", caps, rrt_error_msg(&err));
  } else if (plan.method == RRT_MAP_DIRECT) {
    check_add(c, "nested-ids", RRT_CHECK_OK, NULL,
              "%s: containers get all of them%s, each onto itself (CAP_SETUID and CAP_SETGID)",
              caps, who->initial ? " but the last, 4294967294" : "");
  } else if (plan.method == RRT_MAP_HELPERS) {
    uint64_t n = 0;
    for (size_t i = 0; i < plan.uid_map.n; i++)
      n += plan.uid_map.v[i].size;
    check_add(c, "nested-ids", RRT_CHECK_OK, NULL,
              "%s: containers get %llu ids through newuidmap/newgidmap and %s", caps,
              (unsigned long long)n, who->subuid_file);
  } else {
    check_add(c, "nested-ids", RRT_CHECK_WARN,
              xstrdup("give the job container CAP_SETUID and CAP_SETGID (as root), or ship "
                      "newuidmap with file capabilities and /etc/subuid ranges in its image"),
              "%s: containers get uid %u alone, setgroups denied (%s): images whose files belong "
              "to other ids fail",
              caps, (unsigned)who->uid, who->helpers_why ? who->helpers_why : "no subordinate ids");
  }
  rrt_error_clear(&err);
  rrt_userns_plan_free(&plan);
}

static void report_seccomp(struct rrt_check *c)
{
  cleanup_free char *status = check_read(c, "/proc/self/status");
  const char *m = status ? strstr(status, "\nSeccomp:") : NULL;
  if (!m || atoi(m + 9) != 2) {
    check_add(c, "nested-seccomp", RRT_CHECK_OK, NULL, "no seccomp filter outside");
    return;
  }
  if (check_seccomp_refuses_userns()) {
    check_add(c, "nested-seccomp", RRT_CHECK_FAIL,
              xstrdup("docker run --security-opt seccomp=unconfined ...  # or a profile that "
                      "allows clone and unshare of namespaces"),
              "the outer container's seccomp profile refuses user namespaces (as Docker's default "
              "does without CAP_SYS_ADMIN): no container can be made");
    return;
  }
  int e = in_child(try_sethostname);
  if (e == EPERM)
    check_add(c, "nested-seccomp", RRT_CHECK_WARN,
              xstrdup("podman run --security-opt seccomp=unconfined ...  # to set hostnames"),
              "a seccomp filter outside allows user namespaces but refuses sethostname (as "
              "podman's default does): containers keep the outer hostname, with a warning");
  else
    check_add(c, "nested-seccomp", RRT_CHECK_OK, NULL,
              "a seccomp filter outside allows user namespaces and sethostname");
}

static void report_mount(struct rrt_check *c, const char *name, const char *dir, const char *fs,
                         int (*try)(void), const char *fallback)
{
  size_t below = mounts_below(c, dir);
  int e = in_child(try);
  if (e == 0) {
    check_add(c, name, RRT_CHECK_OK, NULL,
              "a fresh %s mounts (%zu masked or read-only paths in %s)", fs, below, dir);
  } else if (e < 0) {
    check_add(c, name, RRT_CHECK_WARN, NULL, "not tried: the trial did not run");
  } else if (e >= NO_USERNS) {
    /* No container at all then: userns and nested-seccomp say why. */
    check_add(c, name, RRT_CHECK_FAIL, NULL,
              "not tried: no user namespace can be made here (%s; see userns, nested-seccomp)",
              strerror(e - NO_USERNS));
  } else {
    check_add(c, name, RRT_CHECK_WARN,
              xstrdup("docker run --security-opt systempaths=unconfined ...  # podman: "
                      "--security-opt unmask=ALL"),
              "a fresh %s is refused (%s; %zu masked or read-only paths in the outer %s): %s", fs,
              strerror(e), below, dir, fallback);
  }
}

void check_nested(struct rrt_check *c)
{
  struct rrt_userns_caller who;
  rrt_userns_caller_read(&who);
  c->nested = who.nested;
  if (!who.nested) {
    check_add(c, "nested", RRT_CHECK_OK, NULL,
              "not in a container: the initial user namespace, a full capability bounding set");
    rrt_userns_caller_free(&who);
    return;
  }
  cleanup_free char *how =
      who.initial ? xasprintf("the initial user namespace, %d capabilities in the bounding set "
                              "(no CAP_SYS_ADMIN)",
                              count_caps(false))
                  : xstrdup("a user namespace of its own");
  size_t first = c->n;
  check_add(c, "nested", RRT_CHECK_OK, NULL, "inside %s container (%s)", engine_guess(c), how);
  report_ids(c, &who);
  report_seccomp(c);
  report_mount(c, "nested-proc", "/proc", "proc", try_proc,
               "a container with a pid namespace gets the outer /proc bound, its masks kept (one "
               "warning), and sees the outer processes; one without gets it anyway");
  report_mount(c, "nested-sys", "/sys", "sysfs", try_sysfs,
               "containers get the outer /sys bound, its masks kept");
  /* The summary: the worst of the items after it. */
  enum rrt_check_level worst = RRT_CHECK_OK;
  for (size_t i = first + 1; i < c->n; i++)
    if (c->items[i].level > worst)
      worst = c->items[i].level;
  c->items[first].level = worst;
  char *found = xasprintf("%s: %s", c->items[first].found,
                          worst == RRT_CHECK_FAIL   ? "containers cannot be made here (see below)"
                          : worst == RRT_CHECK_WARN ? "containers run, with the limits below"
                                                    : "containers run as on a host");
  free(c->items[first].found);
  c->items[first].found = found;
  rrt_userns_caller_free(&who);
}
