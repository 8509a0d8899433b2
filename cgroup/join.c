/* join.c: a process into the container's cgroups: exec --cgroup's narrowing to a sub-cgroup of
 * the container's own, entering, and joining from a forked child (CLONE_INTO_CGROUP or a write
 * of cgroup.procs). */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h> /* struct clone_args, CLONE_INTO_CGROUP */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

/* One name of a controller list "cpu,memory": whether the v1 hierarchy c is in it. */
static bool lists_controller(const char *list, size_t len, enum rrt_cg_v1 c)
{
  const char *name = rrt_cgroup_v1_name(c);
  size_t n = strlen(name);
  for (const char *p = list; p < list + len;) {
    const char *end = memchr(p, ',', (size_t)(list + len - p));
    size_t l = end ? (size_t)(end - p) : (size_t)(list + len - p);
    if (l == n && strncmp(p, name, n) == 0)
      return true;
    p += l + 1;
  }
  return false;
}

/* Does a component of path name the parent? */
static bool has_dotdot(const char *path)
{
  for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2)
    if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
      return true;
  return false;
}

/* Every name of the list "cpu,memory" is a v1 hierarchy the container has a cgroup in. */
static int check_controllers(const struct rrt_cgroup *cg, const char *spec, size_t len,
                             struct rrt_error *err)
{
  for (const char *p = spec; p < spec + len;) {
    const char *end = memchr(p, ',', (size_t)(spec + len - p));
    size_t l = end ? (size_t)(end - p) : (size_t)(spec + len - p);
    bool known = false;
    for (int i = 0; i < RRT_CG_V1_N && !known; i++)
      known = cg->v1[i] && strlen(rrt_cgroup_v1_name((enum rrt_cg_v1)i)) == l &&
              strncmp(p, rrt_cgroup_v1_name((enum rrt_cg_v1)i), l) == 0;
    if (!known)
      return rrt_error_msgf(err, EINVAL,
                            "exec: --cgroup \"%s\": unknown controller \"%.*s\" (none of the "
                            "container's cgroup v1 hierarchies)",
                            spec, (int)l, p);
    p += l + 1;
  }
  return 0;
}

int rrt_cgroup_narrow(struct rrt_cgroup *cg, const char *spec, struct rrt_error *err)
{
  const char *colon = strchr(spec, ':');
  const char *path = colon ? colon + 1 : spec;
  size_t list_len = colon ? (size_t)(colon - spec) : 0;
  /* As runc joins the path to the container's cgroup: "/" (or "memory:/") is that cgroup
   * itself, "/sub" its sub-cgroup sub. */
  while (*path == '/')
    path++;
  /* The texts runc's suite matches: "X is not a sub cgroup path", "adding pid ...: no such
   * file", "unknown controller". */
  if (has_dotdot(path))
    return rrt_error_msgf(err, EINVAL,
                          "exec: --cgroup \"%s\": %s is not a sub cgroup path of the container's "
                          "(no \"..\"; / is its own)",
                          spec, path);
  if ((colon && !list_len) || (colon && strchr(path, ':')))
    return rrt_error_msgf(err, EINVAL,
                          "exec: --cgroup \"%s\": expected [CONTROLLER[,CONTROLLER]:]PATH, PATH a "
                          "sub-cgroup of the container's (/ is its own)",
                          spec);
  bool any_v1 = false;
  for (int i = 0; i < RRT_CG_V1_N; i++)
    any_v1 = any_v1 || cg->v1[i];
  if (colon && !any_v1)
    return rrt_error_msgf(err, EINVAL,
                          "exec: --cgroup \"%s\": the container's cgroup is cgroup v2, one "
                          "hierarchy: give the sub-cgroup's path alone",
                          spec);
  if (!cg->v2 && !any_v1)
    return rrt_error_msgf(err, ENOENT, "exec: --cgroup \"%s\": the container has no cgroup", spec);
  if (colon && check_controllers(cg, spec, list_len, err) < 0)
    return -1;
  if (!*path)
    return 0;
  char *next_v2 = NULL, *next_v1[RRT_CG_V1_N] = {0};
  int r = 0;
  if (!colon && cg->v2)
    next_v2 = xasprintf("%s/%s", cg->v2, path);
  for (int i = 0; i < RRT_CG_V1_N; i++)
    if (cg->v1[i] && (!colon || lists_controller(spec, list_len, (enum rrt_cg_v1)i)))
      next_v1[i] = xasprintf("%s/%s", cg->v1[i], path);
  struct stat st;
  const char *missing =
      next_v2 && (stat(next_v2, &st) < 0 || !S_ISDIR(st.st_mode)) ? next_v2 : NULL;
  for (int i = 0; !missing && i < RRT_CG_V1_N; i++)
    if (next_v1[i] && (stat(next_v1[i], &st) < 0 || !S_ISDIR(st.st_mode)))
      missing = next_v1[i];
  if (missing)
    r = rrt_error_msgf(err, ENOENT,
                       "exec: --cgroup \"%s\": no sub-cgroup %s: adding pid to %s/cgroup.procs: "
                       "no such file or directory",
                       spec, missing, missing);
  if (r < 0) {
    free(next_v2);
    for (int i = 0; i < RRT_CG_V1_N; i++)
      free(next_v1[i]);
    return -1;
  }
  if (next_v2) {
    free(cg->v2);
    cg->v2 = next_v2;
  }
  for (int i = 0; i < RRT_CG_V1_N; i++)
    if (next_v1[i]) {
      free(cg->v1[i]);
      cg->v1[i] = next_v1[i];
    }
  return 0;
}

int rrt_cgroup_enter(const struct rrt_cgroup *cg, pid_t pid, struct rrt_error *err)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%d", (int)(pid ? pid : getpid()));
  for (int i = 0; i < RRT_CG_V1_N; i++) {
    bool seen = false;
    for (int j = 0; j < i && cg->v1[i]; j++)
      seen = seen || (cg->v1[j] && strcmp(cg->v1[j], cg->v1[i]) == 0);
    if (cg->v1[i] && !seen && rrt_cg_write(cg->v1[i], "cgroup.procs", buf, err) < 0)
      return -1;
  }
  if (cg->v2 && rrt_cg_write(cg->v2, "cgroup.procs", buf, err) < 0)
    return -1;
  return 0;
}

int rrt_cgroup_join_prepare(const struct rrt_cgroup *cg, struct rrt_cgroup_join *j,
                            struct rrt_error *err)
{
  memset(j, 0, sizeof(*j));
  j->v2_fd = -1;
  if (cg->v2) {
    j->v2_fd = open(cg->v2, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (j->v2_fd < 0)
      return rrt_error_errno(err, "cgroup: open %s", cg->v2);
    j->v2_procs = xasprintf("%s/cgroup.procs", cg->v2);
  }
  for (int i = 0; i < RRT_CG_V1_N; i++) {
    bool seen = false;
    for (int k = 0; k < i && cg->v1[i]; k++)
      seen = seen || (cg->v1[k] && strcmp(cg->v1[k], cg->v1[i]) == 0);
    if (cg->v1[i] && !seen)
      j->v1_tasks[i] = xasprintf("%s/tasks", cg->v1[i]);
  }
  return 0;
}

void rrt_cgroup_join_free(struct rrt_cgroup_join *j)
{
  if (j->v2_fd >= 0)
    close(j->v2_fd);
  free(j->v2_procs);
  for (int i = 0; i < RRT_CG_V1_N; i++)
    free(j->v1_tasks[i]);
  memset(j, 0, sizeof(*j));
  j->v2_fd = -1;
}

pid_t rrt_cgroup_fork_into(const struct rrt_cgroup_join *j, bool *in_v2)
{
  *in_v2 = false;
  if (j->v2_fd >= 0) {
    struct clone_args ca = {
        .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)j->v2_fd};
    long pid = syscall(SYS_clone3, &ca, sizeof(ca));
    if (pid >= 0) {
      *in_v2 = true;
      return (pid_t)pid;
    }
    /* ENOSYS, E2BIG (older kernels), or a directory the kernel will not start a process in:
     * the write to cgroup.procs says why, or works. */
  }
  return fork();
}

/* A whole file's write of a short value, by path (rrt_cg_write takes a directory). */
static int write_join(const char *path, const char *value, struct rrt_error *err)
{
  cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value))
    return rrt_error_errno(err, "cgroup: write %s to %s", value, path);
  return 0;
}

int rrt_cgroup_join_self(const struct rrt_cgroup_join *j, bool in_v2, struct rrt_error *err)
{
  for (int i = 0; i < RRT_CG_V1_N; i++)
    if (j->v1_tasks[i] && write_join(j->v1_tasks[i], "0", err) < 0)
      return -1;
  if (j->v2_procs && !in_v2) {
    char pid[32];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    return write_join(j->v2_procs, pid, err);
  }
  return 0;
}
