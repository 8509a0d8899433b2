/* live.c: a container as the verbs after create see it: its state loaded and locked
 * (rrt_live_load), and its processes (its cgroup's, its pid namespace's, or init's descendants).
 * Used by kill.c, exec.c and the verbs ps, pause, update. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/container.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

int rrt_live_load(const struct rrt_global *g, const char *id, bool exclusive, bool keep_lock,
                  bool want_config, struct rrt_live *l, struct rrt_error *err)
{
  memset(l, 0, sizeof(*l));
  l->dirfd = -1;
  if (rrt_state_root(g->root, false, &l->root, err) < 0)
    return -1;
  cleanup_close int fd = -1;
  if (rrt_state_open(l->root, id, exclusive, &fd, err) < 0)
    return -1;
  if (rrt_state_read(fd, &l->st, err) < 0)
    return rrt_error_wrap(err, "container \"%s\"", id);
  if (want_config) {
    size_t len = 0;
    if (rrt_state_read_file(fd, "config.json", &l->config_text, &len, err) < 0 ||
        rrt_spec_parse(l->config_text, len, &l->spec, err) < 0)
      return rrt_error_wrap(err, "container \"%s\"", id);
  }
  if (keep_lock)
    l->dirfd = steal_fd(&fd);
  return 0;
}

void rrt_live_free(struct rrt_live *l)
{
  free(l->root);
  if (l->dirfd >= 0)
    close(l->dirfd);
  rrt_state_free(&l->st);
  free(l->config_text);
  rrt_spec_free(l->spec);
  memset(l, 0, sizeof(*l));
  l->dirfd = -1;
}

bool rrt_same_ns(pid_t pid, const char *name)
{
  char a[64], b[64];
  struct stat sa, sb;
  snprintf(a, sizeof(a), "/proc/%d/ns/%s", pid, name);
  snprintf(b, sizeof(b), "/proc/self/ns/%s", name);
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* init is pid 1 of its pid namespace (the last NSpid field): the namespace is the container's
 * own, not one it joined by path and shares with others. */
static bool owns_pid_ns(pid_t pid)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/status", pid);
  cleanup_free char *text = NULL;
  if (rrt_read_file(path, &text, NULL, NULL) < 0)
    return true;
  const char *line = strstr(text, "\nNSpid:");
  if (!line)
    return true;
  const char *end = strchr(line + 1, '\n');
  const char *last = end ? end : line + strlen(line);
  while (last > line && (last[-1] == ' ' || last[-1] == '\t'))
    last--;
  const char *start = last;
  while (start > line && start[-1] >= '0' && start[-1] <= '9')
    start--;
  return last - start == 1 && *start == '1';
}

/* A container sharing our pid namespace, or one it joined by path: its processes are init's
 * descendants (a scan by pid namespace would take every process of the others too). */
static int descendants(pid_t init, pid_t **pids, size_t *n, struct rrt_error *err)
{
  DIR *d = opendir("/proc");
  if (!d)
    return rrt_error_errno(err, "open /proc");
  size_t cap = 64, count = 0;
  pid_t *all = xmalloc(cap * sizeof(*all)), *parent = xmalloc(cap * sizeof(*parent));
  struct dirent *de;
  while ((de = readdir(d))) {
    unsigned long long p;
    if (rrt_parse_u64(de->d_name, &p) < 0)
      continue;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%llu/stat", p);
    cleanup_free char *text = NULL;
    if (rrt_read_file(path, &text, NULL, NULL) < 0)
      continue;
    char *rp = strrchr(text, ')');
    int ppid = 0;
    if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
      continue;
    if (count == cap) {
      cap *= 2;
      all = xrealloc(all, cap * sizeof(*all));
      parent = xrealloc(parent, cap * sizeof(*parent));
    }
    all[count] = (pid_t)p;
    parent[count++] = ppid;
  }
  closedir(d);
  pid_t *v = xmalloc((count + 1) * sizeof(*v));
  size_t k = 0;
  v[k++] = init;
  for (size_t head = 0; head < k; head++)
    for (size_t i = 0; i < count; i++)
      if (parent[i] == v[head] && all[i] != init)
        v[k++] = all[i];
  free(all);
  free(parent);
  *pids = v;
  *n = k;
  return 0;
}

int rrt_live_pids(const struct rrt_state *st, pid_t **pids, size_t *n, struct rrt_error *err)
{
  pid_t init = st->pid;
  struct rrt_cgroup cg;
  rrt_cgroup_load(st, &cg);
  bool in_cgroup = rrt_cgroup_exists(&cg);
  int r = in_cgroup ? rrt_cgroup_pids(&cg, pids, n, err) : 0;
  rrt_cgroup_free(&cg);
  if (in_cgroup) {
    if (r < 0)
      return -1;
    for (size_t i = 1; i < *n; i++)
      if ((*pids)[i] == init) {
        (*pids)[i] = (*pids)[0];
        (*pids)[0] = init;
      }
    return 0;
  }
  if (rrt_same_ns(init, "pid") || !owns_pid_ns(init))
    return descendants(init, pids, n, err);
  return rrt_container_pids(init, pids, n, err);
}

int rrt_container_pids(pid_t init, pid_t **pids, size_t *n, struct rrt_error *err)
{
  char path[64];
  struct stat ref;
  snprintf(path, sizeof(path), "/proc/%d/ns/pid", init);
  if (stat(path, &ref) < 0)
    return rrt_error_errno(err, "%s", path);
  size_t cap = 16, count = 0;
  pid_t *v = xmalloc(cap * sizeof(*v));
  v[count++] = init;
  DIR *d = opendir("/proc"); /* glibc opens it O_CLOEXEC */
  if (!d) {
    free(v);
    return rrt_error_errno(err, "open /proc");
  }
  struct dirent *de;
  while ((de = readdir(d))) {
    unsigned long long p;
    if (rrt_parse_u64(de->d_name, &p) < 0 || (pid_t)p == init)
      continue;
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%llu/ns/pid", p);
    if (stat(path, &st) < 0 || st.st_ino != ref.st_ino || st.st_dev != ref.st_dev)
      continue;
    if (count == cap) {
      cap *= 2;
      v = xrealloc(v, cap * sizeof(*v));
    }
    v[count++] = (pid_t)p;
  }
  closedir(d);
  *pids = v;
  *n = count;
  return 0;
}
