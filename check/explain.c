/* explain.c: create's errors that `rootlessrt check` diagnoses get their cause named and a
 * pointer to it. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_internal.h"
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
  if (strstr(m, "clone(CLONE_NEWUSER)") || strstr(m, "unshare(CLONE_NEWUSER")) {
    if (err->errnum == ENOSPC || sysctl_value("/proc/sys/user/max_user_namespaces") == 0)
      return "no user namespace may be created (user.max_user_namespaces)";
    if (sysctl_value("/proc/sys/kernel/unprivileged_userns_clone") == 0)
      return "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)";
    return "user namespaces are denied to this user";
  }
  if (strstr(m, "newuidmap") || strstr(m, "newgidmap"))
    return "the id-map helpers (newuidmap/newgidmap) failed";
  if (strstr(m, "/etc/subuid") || strstr(m, "/etc/subgid"))
    return "the subordinate ids (/etc/subuid, /etc/subgid) do not allow the maps";
  if (strstr(m, "/dev/net/tun"))
    return "/dev/net/tun is not usable";
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
