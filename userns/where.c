/* where.c: where the runtime runs (the initial user namespace, privilege there) and where the
 * id-map helpers newuidmap and newgidmap are. */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

/* The helpers are setuid programs from shadow's uidmap package; these are
 * where distributions install them when PATH (e.g. under sudo or systemd)
 * does not list them. */
static const char *const helper_dirs[] = {"/usr/bin", "/usr/sbin", "/bin"};

bool rrt_in_initial_userns(void)
{
  cleanup_free char *buf = NULL;
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_read_file("/proc/self/uid_map", &buf, NULL, &err) < 0) {
    /* Without /proc we cannot tell; answering "no" keeps us on the path that
     * creates a user namespace rather than assuming host root. */
    rrt_error_clear(&err);
    return false;
  }
  unsigned long first, lower, count;
  int used = 0;
  if (sscanf(buf, " %lu %lu %lu %n", &first, &lower, &count, &used) != 3)
    return false;
  return first == 0 && lower == 0 && count == 4294967295UL && buf[used] == '\0';
}

static bool have_cap_sys_admin(void)
{
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
  memset(data, 0, sizeof(data));
  if (syscall(SYS_capget, &hdr, data) < 0)
    return false;
  return (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) != 0;
}

bool rrt_host_privileged(void)
{
  /* uid 0 alone proves nothing: a root without CAP_SYS_ADMIN (or root inside
   * somebody else's user namespace) cannot do what host root can. */
  return rrt_in_initial_userns() && have_cap_sys_admin();
}

static bool is_executable_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The full path of a helper, malloc'd, or NULL. Relative PATH entries are
 * skipped: a setuid helper must not be picked up from the current directory. */
static char *search_helper(const char *name)
{
  const char *path = getenv("PATH");
  while (path && *path) {
    size_t len = strcspn(path, ":");
    if (len > 0 && path[0] == '/') {
      char *candidate = xasprintf("%.*s/%s", (int)len, path, name);
      if (is_executable_file(candidate))
        return candidate;
      free(candidate);
    }
    path += len;
    if (*path == ':')
      path++;
  }
  for (size_t i = 0; i < sizeof(helper_dirs) / sizeof(helper_dirs[0]); i++) {
    char *candidate = xasprintf("%s/%s", helper_dirs[i], name);
    if (is_executable_file(candidate))
      return candidate;
    free(candidate);
  }
  return NULL;
}

/* search_helper, once per name and PATH: planning and starting both ask. */
char *rrt_userns_find_helper(const char *name)
{
  static struct {
    const char *name;
    char *env_path; /* the PATH it was found with */
    char *path;
  } found[2];
  const char *env = getenv("PATH");
  if (!env)
    env = "";
  size_t slot = strcmp(name, "newuidmap") == 0 ? 0 : 1;
  if (found[slot].name && strcmp(found[slot].name, name) == 0 &&
      strcmp(found[slot].env_path, env) == 0)
    return found[slot].path ? xstrdup(found[slot].path) : NULL;
  char *path = search_helper(name);
  free(found[slot].env_path);
  free(found[slot].path);
  found[slot].name = name;
  found[slot].env_path = xstrdup(env);
  found[slot].path = path ? xstrdup(path) : NULL;
  return path;
}
