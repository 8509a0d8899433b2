/* lsm.c: process.apparmorProfile and process.selinuxLabel: applied on exec
 * when the LSM is enabled, a clear error when it is asked for and is not. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/util.h"

static bool apparmor_enabled(void)
{
  char c = 'N';
  int fd = open("/sys/module/apparmor/parameters/enabled", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool ok = read(fd, &c, 1) == 1 && c == 'Y';
  close(fd);
  return ok;
}

static bool selinux_enabled(void)
{
  return access("/sys/fs/selinux/enforce", F_OK) == 0;
}

int rrt_lsm_check(const struct rrt_process *proc, struct rrt_error *err)
{
  if (proc->apparmor_profile && *proc->apparmor_profile && !apparmor_enabled())
    return rrt_error_msgf(err, ENOTSUP,
                          "process.apparmorProfile \"%s\": AppArmor is not enabled on this kernel",
                          proc->apparmor_profile);
  if (proc->selinux_label && *proc->selinux_label && !selinux_enabled())
    return rrt_error_msgf(err, ENOTSUP,
                          "process.selinuxLabel \"%s\": SELinux is not enabled on this kernel",
                          proc->selinux_label);
  return 0;
}

/* The label takes effect at the next execve, which is ours. */
static int write_attr(const char *const *paths, const char *value, const char *what,
                      struct rrt_error *err)
{
  for (size_t i = 0; paths[i]; i++) {
    cleanup_close int fd = open(paths[i], O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    if (rrt_write_all(fd, value, strlen(value)) < 0)
      return rrt_error_errno(err, "%s: write %s", what, paths[i]);
    return 0;
  }
  return rrt_error_errno(err, "%s: no writable /proc/self/attr exec file", what);
}

int rrt_lsm_apply(const struct rrt_process *proc, struct rrt_error *err)
{
  if (rrt_lsm_check(proc, err) < 0)
    return -1;
  if (proc->apparmor_profile && *proc->apparmor_profile) {
    static const char *const paths[] = {"/proc/self/attr/apparmor/exec", "/proc/self/attr/exec",
                                        NULL};
    cleanup_free char *v = xasprintf("exec %s", proc->apparmor_profile);
    if (write_attr(paths, v, "process.apparmorProfile", err) < 0)
      return -1;
  }
  if (proc->selinux_label && *proc->selinux_label) {
    static const char *const paths[] = {"/proc/self/attr/exec", NULL};
    if (write_attr(paths, proc->selinux_label, "process.selinuxLabel", err) < 0)
      return -1;
  }
  return 0;
}
