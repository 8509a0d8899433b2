/* fs.c: the cgroup filesystems underneath every driver: the hierarchies of this mount namespace
 * (cgroup2 and each v1 controller), a cgroup's directory through them, and its interface files
 * (read, write, exists; enabling controllers for children). cgroup.c (where a container's
 * cgroups are, and their life), resources.c, devices.c and systemd.c all stand on it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

static const char *const v1_names[RRT_CG_V1_N] = {"cpu",     "cpuacct", "cpuset",   "memory",
                                                  "pids",    "freezer", "devices",  "blkio",
                                                  "hugetlb", "net_cls", "net_prio", "name=systemd"};

const char *rrt_cgroup_v1_name(enum rrt_cg_v1 c)
{
  return v1_names[c];
}

int rrt_cg_v1_index(const char *name)
{
  for (int i = 0; i < RRT_CG_V1_N; i++)
    if (strcmp(v1_names[i], name) == 0)
      return i;
  return -1;
}

/* ---------------------------------------------------------------- interface files */

int rrt_cg_write(const char *dir, const char *file, const char *value, struct rrt_error *err)
{
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  cleanup_close int fd = open(p, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return rrt_error_errno(err, "open %s", p);
  ssize_t w;
  do
    w = write(fd, value, strlen(value));
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return rrt_error_errno(err, "write \"%s\" to %s", value, p);
  return 0;
}

char *rrt_cg_read(const char *dir, const char *file)
{
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  char *text = NULL;
  if (rrt_read_file(p, &text, NULL, NULL) < 0)
    return NULL;
  size_t n = strlen(text);
  while (n > 0 && text[n - 1] == '\n')
    text[--n] = '\0';
  return text;
}

bool rrt_cg_has(const char *dir, const char *file)
{
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  return access(p, F_OK) == 0;
}

/* ---------------------------------------------------------------- hierarchies */

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
  char *w = s;
  for (char *r = s; *r; r++) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
        r[3] <= '7') {
      *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
      r += 3;
    } else {
      *w++ = *r;
    }
  }
  *w = '\0';
}

struct mnt {
  unsigned long long id;
  char *root, *point, *type, *opts;
};

static bool path_under(const char *p, const char *dir)
{
  size_t n = strlen(dir);
  if (strcmp(dir, "/") == 0)
    return true;
  return strncmp(p, dir, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

static size_t read_mounts(struct mnt **out)
{
  cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
  *out = NULL;
  if (!f)
    return 0;
  char *line = NULL;
  size_t cap = 0, n = 0, vcap = 0;
  while (getline(&line, &cap, f) > 0) {
    char root[PATH_MAX], point[PATH_MAX], type[64], opts[1024];
    unsigned long long id;
    char *sep = strstr(line, " - ");
    if (!sep || sscanf(line, "%llu %*s %*s %4095s %4095s", &id, root, point) != 3 ||
        sscanf(sep + 3, "%63s %*s %1023s", type, opts) != 2)
      continue;
    if (strcmp(type, "cgroup") != 0 && strcmp(type, "cgroup2") != 0) {
      /* Still needed: a later mount over a cgroup mount's parent hides it. */
      strcpy(type, "other");
    }
    unescape_octal(root);
    unescape_octal(point);
    if (n == vcap) {
      vcap = vcap ? vcap * 2 : 32;
      *out = xrealloc(*out, vcap * sizeof(**out));
    }
    (*out)[n++] = (struct mnt){id, xstrdup(root), xstrdup(point), xstrdup(type), xstrdup(opts)};
  }
  free(line);
  return n;
}

/* Is the mount not the one its mount point shows? The kernel says which mount a path is on
 * (statx's mount id, Linux 5.8): mountinfo's order does not, since a mount moved under a newer
 * one is listed before it (rootlesskit, for a network namespace of its own, mounts a new sysfs
 * on /sys and moves the cgroup mounts back under it: they come before that sysfs, yet they are
 * what /sys/fs/cgroup shows). Without statx's mount id: hidden by any later one on its mount
 * point or above it. */
static bool hidden(const struct mnt *v, size_t n, size_t i)
{
  struct statx stx;
  if (statx(AT_FDCWD, v[i].point, AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
      (stx.stx_mask & STATX_MNT_ID))
    return stx.stx_mnt_id != v[i].id;
  for (size_t j = i + 1; j < n; j++)
    if (path_under(v[i].point, v[j].point))
      return true;
  return false;
}

static void take_v1(struct rrt_cg_mounts *m, const struct mnt *x)
{
  cleanup_free char *opts = xstrdup(x->opts);
  char *save = NULL;
  for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
    int i = rrt_cg_v1_index(o);
    if (i >= 0 && !m->v1_mnt[i]) {
      m->v1_mnt[i] = xstrdup(x->point);
      m->v1_root[i] = xstrdup(x->root);
    }
  }
}

/* The cgroup2 mount is the one at /sys/fs/cgroup when there is one (a hybrid host hides another
 * at /sys/fs/cgroup/unified), else the first visible one. */
void rrt_cg_mounts_read(struct rrt_cg_mounts *m)
{
  memset(m, 0, sizeof(*m));
  struct mnt *v = NULL;
  size_t n = read_mounts(&v);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(v[i].type, "other") == 0 || hidden(v, n, i))
      continue;
    if (strcmp(v[i].type, "cgroup") == 0) {
      take_v1(m, &v[i]);
    } else if (!m->v2_mnt || strcmp(v[i].point, "/sys/fs/cgroup") == 0) {
      free(m->v2_mnt);
      free(m->v2_root);
      m->v2_mnt = xstrdup(v[i].point);
      m->v2_root = xstrdup(v[i].root);
    }
  }
  for (size_t i = 0; i < n; i++) {
    free(v[i].root);
    free(v[i].point);
    free(v[i].type);
    free(v[i].opts);
  }
  free(v);
}

void rrt_cg_mounts_free(struct rrt_cg_mounts *m)
{
  free(m->v2_mnt);
  free(m->v2_root);
  for (int i = 0; i < RRT_CG_V1_N; i++) {
    free(m->v1_mnt[i]);
    free(m->v1_root[i]);
  }
}

/* The directory of cgroup `cg` through a mount whose root holds it (a mount of a sub-tree, as in
 * a cgroup namespace, has root != /); NULL when that mount does not show it. */
char *rrt_cg_dir_of(const char *mnt, const char *root, const char *cg)
{
  if (!mnt || !cg || !path_under(cg, root))
    return NULL;
  const char *rest = strcmp(root, "/") == 0 ? cg : cg + strlen(root);
  if (strcmp(rest, "/") == 0)
    rest = "";
  return xasprintf("%s%s", mnt, rest);
}

static bool word_in(const char *list, const char *word)
{
  size_t n = strlen(word);
  for (const char *p = list; (p = strstr(p, word)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0' || p[n] == '\n'))
      return true;
  return false;
}

/* cgroup v2: every controller dir has is turned on for its children. Refused (EBUSY) where dir
 * holds processes, as the caller's own cgroup does: then what the delegation enabled is all. */
void rrt_cg_enable_controllers(const char *dir)
{
  cleanup_free char *avail = rrt_cg_read(dir, "cgroup.controllers");
  cleanup_free char *on = rrt_cg_read(dir, "cgroup.subtree_control");
  if (!avail)
    return;
  char *save = NULL;
  for (char *c = strtok_r(avail, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
    if (on && word_in(on, c))
      continue;
    cleanup_free char *w = xasprintf("+%s", c);
    struct rrt_error e = RRT_ERROR_INIT;
    if (rrt_cg_write(dir, "cgroup.subtree_control", w, &e) < 0)
      rrt_debug("cgroup: %s", rrt_error_msg(&e));
    rrt_error_clear(&e);
  }
}
