/* cgroup.c: the container's cgroup v2 directory inside a delegated subtree:
 * create, enter, freeze, list, kill, resource updates. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

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

/* The caller's cgroup v2 path ("0::/a/b" in /proc/self/cgroup). */
static char *own_cgroup_path(void)
{
  cleanup_fclose FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f)
    return NULL;
  char *line = NULL;
  size_t cap = 0;
  char *r = NULL;
  while (getline(&line, &cap, f) > 0) {
    if (strncmp(line, "0::", 3) == 0) {
      line[strcspn(line, "\n")] = '\0';
      r = xstrdup(line + 3);
      break;
    }
  }
  free(line);
  return r;
}

/* The directory of cgroup `cg` through a cgroup2 mount of ours whose root
 * holds it (a mount of a sub-tree, as in a cgroup namespace, has root != /). */
static char *cgroup_dir(const char *cg)
{
  cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f)
    return NULL;
  char *line = NULL;
  size_t cap = 0;
  char *r = NULL;
  while (!r && getline(&line, &cap, f) > 0) {
    char *sep = strstr(line, " - ");
    if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
      continue;
    char root[PATH_MAX], mnt[PATH_MAX];
    if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2)
      continue;
    unescape_octal(root);
    unescape_octal(mnt);
    size_t n = strlen(root);
    if (strcmp(root, "/") == 0)
      r = xasprintf("%s%s", mnt, strcmp(cg, "/") == 0 ? "" : cg);
    else if (strncmp(cg, root, n) == 0 && (cg[n] == '/' || cg[n] == '\0'))
      r = xasprintf("%s%s", mnt, cg + n);
  }
  free(line);
  return r;
}

char *rrt_cgroup_own_dir(void)
{
  cleanup_free char *cg = own_cgroup_path();
  return cg ? cgroup_dir(cg) : NULL;
}

static bool writable(const char *dir, const char *file)
{
  cleanup_free char *p = file ? xasprintf("%s/%s", dir, file) : xstrdup(dir);
  return faccessat(AT_FDCWD, p, W_OK, AT_EACCESS) == 0;
}

static int write_at(const char *dir, const char *file, const char *value, struct rrt_error *err)
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

int rrt_cgroup_enter(const char *path, pid_t pid, struct rrt_error *err)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%d", (int)pid);
  return write_at(path, "cgroup.procs", buf, err);
}

int rrt_cgroup_create(const char *id, pid_t init, bool disabled, char **path, struct rrt_error *err)
{
  *path = NULL;
  if (disabled) {
    rrt_debug("cgroup: --cgroup-manager disabled: the container gets no cgroup");
    return 0;
  }
  cleanup_free char *own = own_cgroup_path();
  if (!own) {
    rrt_debug("cgroup: no cgroup v2 entry in /proc/self/cgroup: no cgroup for the container");
    return 0;
  }
  cleanup_free char *dir = cgroup_dir(own);
  if (!dir) {
    rrt_debug("cgroup: cgroup v2 is not mounted here: no cgroup for the container");
    return 0;
  }
  /* Delegated means: we may create children and move processes. */
  if (!writable(dir, NULL) || !writable(dir, "cgroup.procs")) {
    rrt_debug("cgroup: %s is not delegated to this user: no cgroup for the container", dir);
    return 0;
  }
  cleanup_free char *mine = xasprintf("%s/rootlessrt-%s", dir, id);
  if (mkdir(mine, 0755) < 0)
    return rrt_error_errno(err, "cgroup: mkdir %s", mine);
  if (rrt_cgroup_enter(mine, init, err) < 0) {
    rmdir(mine);
    return rrt_error_wrap(err, "cgroup: move init into its cgroup");
  }
  rrt_debug("cgroup: container %s in %s", id, mine);
  *path = steal_ptr(&mine);
  return 0;
}

/* "key value" of cgroup.events; -1 when unreadable. */
static int events_value(const char *path, const char *key)
{
  cleanup_free char *p = xasprintf("%s/cgroup.events", path);
  cleanup_free char *text = NULL;
  if (rrt_read_file(p, &text, NULL, NULL) < 0)
    return -1;
  size_t n = strlen(key);
  for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (strncmp(l, key, n) == 0 && l[n] == ' ')
      return atoi(l + n + 1);
  return -1;
}

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static bool wait_events(const char *path, const char *key, int want, int timeout_ms)
{
  for (int waited = 0;; waited += 10) {
    if (events_value(path, key) == want)
      return true;
    if (waited >= timeout_ms)
      return false;
    sleep_ms(10);
  }
}

/* Sub-cgroups first: a directory can only go once its children have. */
static void remove_tree(const char *path)
{
  DIR *d = opendir(path);
  if (d) {
    struct dirent *de;
    while ((de = readdir(d)))
      if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
        cleanup_free char *sub = xasprintf("%s/%s", path, de->d_name);
        remove_tree(sub);
      }
    closedir(d);
  }
  for (int i = 0; i < 200 && rmdir(path) < 0 && errno == EBUSY; i++)
    sleep_ms(10);
}

void rrt_cgroup_destroy(const char *path)
{
  if (!path)
    return;
  struct stat st;
  if (stat(path, &st) < 0)
    return;
  struct rrt_error e = RRT_ERROR_INIT;
  /* cgroup.kill (5.14) reaches frozen processes too and every descendant. */
  if (write_at(path, "cgroup.kill", "1", &e) < 0) {
    rrt_debug("cgroup: %s", rrt_error_msg(&e));
    rrt_error_clear(&e);
    pid_t *pids = NULL;
    size_t n = 0;
    if (rrt_cgroup_pids(path, &pids, &n, NULL) == 0) {
      for (size_t i = 0; i < n; i++)
        kill(pids[i], SIGKILL);
      free(pids);
    }
    write_at(path, "cgroup.freeze", "0", NULL);
  }
  if (!wait_events(path, "populated", 0, 5000))
    rrt_warn("cgroup: %s still has processes after cgroup.kill", path);
  remove_tree(path);
  if (stat(path, &st) == 0)
    rrt_warn("cgroup: cannot remove %s: %s", path, strerror(errno));
}

static void collect_pids(const char *path, pid_t **v, size_t *n, size_t *cap)
{
  cleanup_free char *procs = xasprintf("%s/cgroup.procs", path);
  cleanup_free char *text = NULL;
  if (rrt_read_file(procs, &text, NULL, NULL) == 0) {
    char *save = NULL;
    for (char *t = strtok_r(text, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
      unsigned long long p;
      if (rrt_parse_u64(t, &p) < 0 || p == 0)
        continue;
      if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *v = xrealloc(*v, *cap * sizeof(**v));
      }
      (*v)[(*n)++] = (pid_t)p;
    }
  }
  DIR *d = opendir(path);
  if (!d)
    return;
  struct dirent *de;
  while ((de = readdir(d)))
    if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
      cleanup_free char *sub = xasprintf("%s/%s", path, de->d_name);
      collect_pids(sub, v, n, cap);
    }
  closedir(d);
}

int rrt_cgroup_pids(const char *path, pid_t **pids, size_t *n, struct rrt_error *err)
{
  struct stat st;
  if (stat(path, &st) < 0)
    return rrt_error_errno(err, "cgroup %s", path);
  size_t cap = 0;
  *pids = NULL;
  *n = 0;
  collect_pids(path, pids, n, &cap);
  return 0;
}

int rrt_cgroup_freeze(const char *path, bool freeze, struct rrt_error *err)
{
  if (write_at(path, "cgroup.freeze", freeze ? "1" : "0", err) < 0)
    return -1;
  if (!wait_events(path, "frozen", freeze ? 1 : 0, 5000))
    return rrt_error_msgf(err, ETIMEDOUT, "cgroup %s: not %s after 5 s", path,
                          freeze ? "frozen" : "thawed");
  return 0;
}

/* ---------------------------------------------------------------- update */

struct update {
  const char *path;
  int applied, asked;
};

/* Which controller owns an interface file: "memory" of "memory.max". */
static char *controller_of(const char *file)
{
  return xstrndup(file, strcspn(file, "."));
}

static void apply(struct update *u, const char *field, const char *file, const char *value)
{
  u->asked++;
  cleanup_free char *ctl = controller_of(file);
  if (!u->path) {
    rrt_warn("update: %s: no delegated cgroup v2 %s controller available", field, ctl);
    return;
  }
  cleanup_free char *p = xasprintf("%s/%s", u->path, file);
  if (access(p, F_OK) < 0) {
    rrt_warn("update: %s: the %s controller is not enabled for this container's cgroup (no %s)",
             field, ctl, file);
    return;
  }
  struct rrt_error e = RRT_ERROR_INIT;
  if (write_at(u->path, file, value, &e) < 0) {
    rrt_warn("update: %s: %s", field, rrt_error_msg(&e));
    rrt_error_clear(&e);
    return;
  }
  u->applied++;
}

static json_object *get(json_object *o, const char *key)
{
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, key, &v) && !json_object_is_type(v, json_type_null)
             ? v
             : NULL;
}

static int want_int(json_object *v, const char *field, long long *out, struct rrt_error *err)
{
  if (!json_object_is_type(v, json_type_int))
    return rrt_error_msgf(err, EINVAL, "update: %s: expected an integer", field);
  *out = json_object_get_int64(v);
  return 0;
}

static char *limit_text(long long v)
{
  return v < 0 ? xstrdup("max") : xasprintf("%lld", v);
}

static int update_memory(struct update *u, json_object *mem, struct rrt_error *err)
{
  long long limit = 0, v = 0;
  bool has_limit = false;
  json_object *x;
  if ((x = get(mem, "limit"))) {
    if (want_int(x, "memory.limit", &limit, err) < 0)
      return -1;
    has_limit = true;
    cleanup_free char *t = limit_text(limit);
    apply(u, "memory.limit", "memory.max", t);
  }
  if ((x = get(mem, "reservation"))) {
    if (want_int(x, "memory.reservation", &v, err) < 0)
      return -1;
    cleanup_free char *t = limit_text(v);
    apply(u, "memory.reservation", "memory.low", t);
  }
  if ((x = get(mem, "swap"))) {
    if (want_int(x, "memory.swap", &v, err) < 0)
      return -1;
    /* OCI's swap is memory+swap; v2's swap.max is the swap alone. */
    cleanup_free char *t =
        v < 0 ? xstrdup("max") : xasprintf("%lld", has_limit && limit > 0 ? v - limit : v);
    apply(u, "memory.swap", "memory.swap.max", t);
  }
  static const char *const unsupported[] = {
      "kernel", "kernelTCP", "swappiness", "disableOOMKiller", "useHierarchy", "checkBeforeUpdate"};
  for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
    if (get(mem, unsupported[i])) {
      u->asked++;
      rrt_warn("update: memory.%s: has no cgroup v2 equivalent, ignored", unsupported[i]);
    }
  return 0;
}

static int update_cpu(struct update *u, json_object *cpu, struct rrt_error *err)
{
  long long v = 0;
  json_object *x;
  if ((x = get(cpu, "shares"))) {
    if (want_int(x, "cpu.shares", &v, err) < 0)
      return -1;
    /* The conversion runc and crun use: [2, 262144] -> [1, 10000]. */
    long long w = v <= 0 ? 100 : 1 + ((v - 2) * 9999) / 262142;
    cleanup_free char *t = xasprintf("%lld", w < 1 ? 1 : w > 10000 ? 10000 : w);
    apply(u, "cpu.shares", "cpu.weight", t);
  }
  json_object *q = get(cpu, "quota"), *p = get(cpu, "period");
  if (q || p) {
    long long quota = -1, period = 100000;
    if ((q && want_int(q, "cpu.quota", &quota, err) < 0) ||
        (p && want_int(p, "cpu.period", &period, err) < 0))
      return -1;
    cleanup_free char *t =
        quota > 0 ? xasprintf("%lld %lld", quota, period) : xasprintf("max %lld", period);
    apply(u, q ? "cpu.quota" : "cpu.period", "cpu.max", t);
  }
  if ((x = get(cpu, "cpus")))
    apply(u, "cpu.cpus", "cpuset.cpus", json_object_get_string(x));
  if ((x = get(cpu, "mems")))
    apply(u, "cpu.mems", "cpuset.mems", json_object_get_string(x));
  if ((x = get(cpu, "idle")))
    apply(u, "cpu.idle", "cpu.idle", json_object_get_string(x));
  return 0;
}

int rrt_cgroup_update(const char *path, const char *resources_json, int *applied, int *asked,
                      struct rrt_error *err)
{
  struct update u = {.path = path};
  json_object *res = json_tokener_parse(resources_json);
  if (!res || !json_object_is_type(res, json_type_object)) {
    if (res)
      json_object_put(res);
    return rrt_error_msgf(err, EINVAL, "update: the resources are not a JSON object");
  }
  int ret = -1;
  json_object *x;
  if ((x = get(res, "memory")) && update_memory(&u, x, err) < 0)
    goto out;
  if ((x = get(res, "cpu")) && update_cpu(&u, x, err) < 0)
    goto out;
  if ((x = get(res, "pids")) && (x = get(x, "limit"))) {
    long long v = 0;
    if (want_int(x, "pids.limit", &v, err) < 0)
      goto out;
    cleanup_free char *t = limit_text(v <= 0 ? -1 : v);
    apply(&u, "pids.limit", "pids.max", t);
  }
  if ((x = get(res, "blockIO")) && (x = get(x, "weight"))) {
    long long v = 0;
    if (want_int(x, "blockIO.weight", &v, err) < 0)
      goto out;
    cleanup_free char *t = xasprintf("default %lld", 1 + (v - 10) * 9999 / 990);
    apply(&u, "blockIO.weight", "io.weight", t);
  }
  if ((x = get(res, "unified"))) {
    json_object_object_foreach(x, key, val)
    {
      cleanup_free char *field = xasprintf("unified.%s", key);
      if (strchr(key, '/') || key[0] == '.' || !json_object_is_type(val, json_type_string)) {
        ret =
            rrt_error_msgf(err, EINVAL, "update: %s: not an interface file name and value", field);
        goto out;
      }
      apply(&u, field, key, json_object_get_string(val));
    }
  }
  static const char *const unsupported[] = {"hugepageLimits", "network", "rdma", "devices"};
  for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
    if ((x = get(res, unsupported[i])) &&
        !(json_object_is_type(x, json_type_array) && json_object_array_length(x) == 0)) {
      if (strcmp(unsupported[i], "devices") == 0)
        continue; /* device rules are enforced by the container's /dev, not a cgroup */
      u.asked++;
      rrt_warn("update: %s: not supported by rootlessrt, ignored", unsupported[i]);
    }
  ret = 0;
out:
  json_object_put(res);
  *applied = u.applied;
  *asked = u.asked;
  return ret;
}
