/* explain.c: create's errors that `rootlessrt check` diagnoses get their cause named and a
 * pointer to it. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check_internal.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

static long long sysctl_value(const char *path)
{
  struct rrt_check c = {.prefix = getenv("ROOTLESSRT_CHECK_ROOT")};
  return check_read_num(&c, path);
}

/* Whether this process runs under rootlessrt's AppArmor profile (which allows user namespaces). */
static bool under_own_profile(void)
{
  struct rrt_check c = {.prefix = getenv("ROOTLESSRT_CHECK_ROOT")};
  cleanup_free char *label = check_read(&c, "/proc/self/attr/apparmor/current");
  if (!label)
    label = check_read(&c, "/proc/self/attr/current");
  return label && strncmp(label, "rootlessrt ", 11) == 0;
}

/*
 * Whether a seccomp filter (an outer container's: Docker's default refuses clone and unshare of
 * namespaces without CAP_SYS_ADMIN) made the EPERM of clone or unshare(CLONE_NEWUSER). Each probe
 * is a call the kernel itself always refuses as EINVAL (CLONE_NEWUSER with CLONE_FS for clone, an
 * unshare flag that does not exist for unshare), so nothing is created; a filter, which looks at
 * the call before the kernel does, answers EPERM.
 */
bool check_seccomp_refuses_userns(void)
{
  struct rrt_check c = {.prefix = getenv("ROOTLESSRT_CHECK_ROOT")};
  cleanup_free char *status = check_read(&c, "/proc/self/status");
  const char *mode = status ? strstr(status, "\nSeccomp:") : NULL;
  if (!mode || atoi(mode + 9) != 2)
    return false;
  if (c.prefix) /* a test's fake /proc: its "Seccomp: 2" is the answer */
    return true;
  errno = 0;
  long r = syscall(SYS_clone, CLONE_NEWUSER | CLONE_FS | SIGCHLD, NULL, NULL, NULL, NULL);
  if (r == 0)
    _exit(0); /* cannot be: the kernel refuses the combination */
  bool clone_filtered = r < 0 && errno == EPERM;
  bool unshare_filtered = unshare(CLONE_NEWUSER | CLONE_PARENT) < 0 && errno == EPERM;
  return clone_filtered || unshare_filtered;
}

/* Inside another engine's container (userns.h: rrt_userns_caller). */
static bool nested(void)
{
  struct rrt_userns_caller who;
  rrt_userns_caller_read(&who);
  bool n = who.nested;
  rrt_userns_caller_free(&who);
  return n;
}

/* Why /dev/fuse could not be opened, with the fix (what `rootlessrt check` says of it). */
static const char *fuse_cause(void)
{
  static char why[320];
  struct rrt_check c = {.prefix = getenv("ROOTLESSRT_CHECK_ROOT")};
  cleanup_free char *path = check_path(&c, "/dev/fuse");
  struct stat st;
  if (stat(path, &st) < 0) {
    snprintf(why, sizeof(why),
             "the overlay needs fuse-overlayfs here, and /dev/fuse does not exist: the fuse "
             "module is not loaded; fix: sudo modprobe fuse");
  } else {
    const char *owner = rrt_user_name(st.st_uid);
    snprintf(why, sizeof(why),
             "the overlay needs fuse-overlayfs here, and /dev/fuse is mode %04o, owner %s; fix: "
             "sudo chmod 0666 /dev/fuse (a udev rule keeps it so: see rootlessrt check)",
             (unsigned)(st.st_mode & 07777), owner ? owner : "?");
  }
  return why;
}

/* The cause, or NULL when the error is not one check diagnoses. */
static const char *cause_of(const struct rrt_error *err)
{
  const char *m = err->msg ? err->msg : "";
  if (strstr(m, "CAP_SETFCAP")) /* names its cause and the fix already (userns.h) */
    return NULL;
  if (strstr(m, "clone(CLONE_NEWUSER)") || strstr(m, "unshare(CLONE_NEWUSER")) {
    long long max = sysctl_value("/proc/sys/user/max_user_namespaces");
    if (max == 0)
      return "no user namespace may be created (user.max_user_namespaces = 0 here: raise it "
             "where it is 0, on the host or in the outer container, sysctl -w "
             "user.max_user_namespaces=15000)";
    if (err->errnum == ENOSPC)
      return "no user namespace may be created (user.max_user_namespaces)";
    /* The desktop form's child reports its errno in the text (userns_call.c). */
    bool eperm = err->errnum == EPERM || strstr(m, strerror(EPERM));
    if (eperm && check_seccomp_refuses_userns())
      return "the outer container's seccomp profile refuses user namespaces: run it with "
             "--security-opt seccomp=unconfined, or a profile that allows them";
    if (err->errnum == EACCES) {
      struct rrt_check c = {.prefix = getenv("ROOTLESSRT_CHECK_ROOT")};
      cleanup_free char *lsm = check_read(&c, "/sys/kernel/security/lsm");
      if (lsm && strstr(lsm, "selinux"))
        return "SELinux refuses user namespaces to this domain: allow it user_namespace "
               "create, or run the outer container with --security-opt label=disable";
      if (lsm && strstr(lsm, "apparmor"))
        return "AppArmor refuses user namespaces to this profile: allow them in it (a "
               "\"userns,\" rule), or run the outer container with --security-opt "
               "apparmor=unconfined";
      return "a Linux security module refuses user namespaces here";
    }
    if (sysctl_value("/proc/sys/kernel/unprivileged_userns_clone") == 0)
      return "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)";
    return "user namespaces are denied to this user";
  }
  if (strstr(m, "newuidmap") || strstr(m, "newgidmap"))
    return "the id-map helpers (newuidmap/newgidmap) failed";
  if (strstr(m, "/etc/subuid") || strstr(m, "/etc/subgid"))
    return "the subordinate ids (/etc/subuid, /etc/subgid) do not allow the maps";
  if (strstr(m, "/dev/net/tun") && (err->errnum == ENOENT || strstr(m, strerror(ENOENT))) &&
      nested())
    return "the outer container has no /dev/net/tun: run it with --device /dev/net/tun, or this "
           "container with --network none";
  if (strstr(m, "/dev/net/tun"))
    return "/dev/net/tun is not usable";
  if (strstr(m, "open /dev/fuse") && (err->errnum == ENOENT || strstr(m, strerror(ENOENT))) &&
      nested())
    return "the overlay needs fuse-overlayfs here, and the outer container has no /dev/fuse: run "
           "it with --device /dev/fuse";
  if (strstr(m, "open /dev/fuse"))
    return fuse_cause();
  if (strstr(m, "network helper"))
    return "the network helper rootlessrt-net failed";
  if ((err->errnum == EPERM || err->errnum == EACCES) &&
      sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1 &&
      !under_own_profile())
    return "AppArmor restricts unprivileged user namespaces "
           "(kernel.apparmor_restrict_unprivileged_userns = 1)";
  return NULL;
}

void rrt_check_explain(struct rrt_error *err)
{
  if (!err || !err->msg)
    return;
  const char *cause = cause_of(err);
  if (!cause)
    return;
  char *msg = xasprintf("%s (%s); run 'rootlessrt check' for details", err->msg, cause);
  free(err->msg);
  err->msg = msg;
}
