/* cgroup.c: where a container's cgroups are: the caller's own cgroups, linux.cgroupsPath;
 * create, freeze, processes, kill, cleanup. The filesystems and their files are fs.c's, exec's
 * --cgroup and joining join.c's, limits resources.c's, device rules devices.c's, the systemd driver
 * systemd.c's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

static int events_value(const char *path, const char *key);

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The caller's own cgroups from /proc/self/cgroup: "0::/a" (v2) and "N:memory,...:/b" (v1). */
struct own {
  char *v2;
  char *v1[RRT_CG_V1_N];
};

static void own_read(struct own *w)
{
  memset(w, 0, sizeof(*w));
  cleanup_fclose FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f)
    return;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
      continue;
    *c2 = '\0';
    if (strcmp(line, "0:") == 0 && c1[1] == '\0') {
      free(w->v2);
      w->v2 = xstrdup(c2 + 1);
      continue;
    }
    char *save = NULL;
    for (char *o = strtok_r(c1 + 1, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
      int i = rrt_cg_v1_index(o);
      if (i >= 0 && !w->v1[i])
        w->v1[i] = xstrdup(c2 + 1);
    }
  }
  free(line);
}

static void own_free(struct own *w)
{
  free(w->v2);
  for (int i = 0; i < RRT_CG_V1_N; i++)
    free(w->v1[i]);
}

/* ---------------------------------------------------------------- cgroupsPath */

/*
 * linux.cgroupsPath for the cgroupfs driver: "/a/b" (from the mount's root) or "a/b" (from the
 * caller's cgroup), normalised into *rel (no leading slash). Refused: empty, "." or "..",
 * control characters, the systemd "slice:prefix:name" form, the root itself.
 */
static int check_path(const char *p, bool *absolute, char **rel, struct rrt_error *err)
{
  if (!*p)
    return rrt_error_msgf(err, EINVAL, "linux.cgroupsPath: empty");
  if (p[0] != '/' && strchr(p, ':'))
    return rrt_error_msgf(err, EINVAL,
                          "linux.cgroupsPath \"%s\": a systemd slice:prefix:name path needs "
                          "--systemd-cgroup; the cgroupfs manager takes /absolute or relative/path",
                          p);
  if (strlen(p) >= PATH_MAX / 2)
    return rrt_error_msgf(err, ENAMETOOLONG, "linux.cgroupsPath: too long");
  for (const char *c = p; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      return rrt_error_msgf(err, EINVAL, "linux.cgroupsPath: holds a control character");
  *absolute = p[0] == '/';
  cleanup_free char *copy = xstrdup(p);
  char *out = xcalloc(1, strlen(p) + 1);
  char *save = NULL;
  for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
    if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0) {
      free(out);
      return rrt_error_msgf(err, EINVAL, "linux.cgroupsPath \"%s\": \"%s\" is not allowed", p, c);
    }
    if (strlen(c) > NAME_MAX) {
      free(out);
      return rrt_error_msgf(err, ENAMETOOLONG, "linux.cgroupsPath: a component is too long");
    }
    if (*out)
      strcat(out, "/");
    strcat(out, c);
  }
  if (!*out) {
    free(out);
    return rrt_error_msgf(err, EINVAL, "linux.cgroupsPath \"%s\": names the root cgroup", p);
  }
  *rel = out;
  return 0;
}

/* ---------------------------------------------------------------- create */

/* cgroup v1 cpuset: a new cgroup starts with no cpus and no mems, which refuses every process. */
static void inherit_cpuset(const char *parent, const char *child)
{
  static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
  for (size_t i = 0; i < 2; i++) {
    cleanup_free char *mine = rrt_cg_read(child, files[i]);
    cleanup_free char *theirs = rrt_cg_read(parent, files[i]);
    if (mine && !*mine && theirs && *theirs)
      rrt_cg_write(child, files[i], theirs, NULL);
  }
}

/* base/rel, made level by level. */
/* *made: the topmost level this call created, NULL when the leaf was there already. */
static int mkdir_levels(const char *base, const char *rel, bool v2, bool cpuset, char **leaf,
                        char **made, struct rrt_error *err)
{
  *made = NULL;
  char *dir = xstrdup(base);
  cleanup_free char *copy = xstrdup(rel);
  char *save = NULL;
  for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
    if (v2)
      rrt_cg_enable_controllers(dir);
    char *next = xasprintf("%s/%s", dir, c);
    if (mkdir(next, 0755) == 0) {
      if (!*made)
        *made = xstrdup(next);
    } else if (errno != EEXIST) {
      int e = errno;
      free(dir);
      rrt_error_set(err, e, "mkdir %s", next);
      free(next);
      return -1;
    } else if (*made) { /* made above, yet there now: someone else's after all */
      free(*made);
      *made = NULL;
    }
    if (cpuset)
      inherit_cpuset(dir, next);
    free(dir);
    dir = next;
  }
  *leaf = dir;
  return 0;
}

/* A v1 directory, or one below it, with a process in it: v1 has no "populated" that counts the
 * sub-cgroups, as cgroup.events does on v2. */
static bool v1_populated(const char *dir)
{
  cleanup_free char *procs = rrt_cg_read(dir, "cgroup.procs");
  if (procs && *procs)
    return true;
  DIR *d = opendir(dir);
  if (!d)
    return false;
  bool found = false;
  struct dirent *de;
  while (!found && (de = readdir(d)))
    if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
      cleanup_free char *sub = xasprintf("%s/%s", dir, de->d_name);
      found = v1_populated(sub);
    }
  closedir(d);
  return found;
}

/* A frozen cgroup (or one under a frozen parent): init would never run, and create would hang
 * waiting on it. Refused with the text runc gives. */
static bool frozen_dir(const char *dir, bool v2)
{
  if (v2) {
    cleanup_free char *f = rrt_cg_read(dir, "cgroup.freeze");
    return (f && strcmp(f, "1") == 0) || events_value(dir, "frozen") == 1;
  }
  cleanup_free char *st = rrt_cg_read(dir, "freezer.state");
  return st && strcmp(st, "THAWED") != 0;
}

/* A cgroup that already holds processes, itself or in a sub-cgroup, is someone else's: the
 * container is not put with them (its limits and freezer would be theirs, and delete would kill
 * them), unless RRT_CGROUP_ANNOTATION=shared asks for runc 1.1's warning. A frozen one is
 * refused whatever the annotation. */
static int check_empty(const char *dir, bool v2, bool shared, struct rrt_error *err)
{
  cleanup_free char *ev = v2 ? rrt_cg_read(dir, "cgroup.events") : NULL;
  bool populated = (ev && strstr(ev, "populated 1")) || (!v2 && v1_populated(dir));
  if (populated && shared)
    rrt_warn("linux.cgroupsPath: cgroup %s already holds processes; shared with them "
             "(" RRT_CGROUP_ANNOTATION "=shared): the container's limits and freezer are theirs, "
             "and its delete kills them",
             dir);
  else if (populated)
    return rrt_error_msgf(err, EBUSY,
                          "linux.cgroupsPath: cgroup %s already holds processes; give the "
                          "container a cgroup of its own (or " RRT_CGROUP_ANNOTATION "=shared)",
                          dir);
  if (frozen_dir(dir, v2))
    return rrt_error_msgf(err, EBUSY,
                          "linux.cgroupsPath: container's cgroup unexpectedly frozen (%s): thaw "
                          "it first",
                          dir);
  return 0;
}

int rrt_cgroup_shared_mode(const char *value, bool *shared, struct rrt_error *err)
{
  *shared = value && strcmp(value, "shared") == 0;
  if (value && !*shared && strcmp(value, "own") != 0)
    return rrt_error_msgf(err, EINVAL,
                          "annotations." RRT_CGROUP_ANNOTATION ": \"%s\": expected \"shared\" or "
                          "\"own\"",
                          value);
  return 0;
}

static bool denied(int e)
{
  return e == EACCES || e == EPERM || e == EROFS;
}

/* The container's cgroup2 directory. Unprivileged without a delegated cgroup there, *why says
 * so and cg->v2 stays NULL. */
/* Where the container's cgroup2 directory goes (*base, below which rel is made), decided before
 * anything is made. Unprivileged without a delegated cgroup there, *why says so and *base stays
 * NULL. */
static void plan_v2(const struct rrt_cgroup_opts *o, const struct rrt_cg_mounts *m,
                    const struct own *w, const char *rel, bool absolute, char **base, char **why)
{
  *base = NULL;
  if (!m->v2_mnt) {
    *why = xstrdup("no cgroup2 mount is visible here");
    return;
  }
  char *b = absolute ? xstrdup(m->v2_mnt) : rrt_cg_dir_of(m->v2_mnt, m->v2_root, w->v2);
  /* A user cannot write at the root: an absolute path (an engine's "/libpod_parent/...") is
   * taken inside the user's own delegated cgroup, the same place for the same value. */
  if (b && absolute && !o->privileged && faccessat(AT_FDCWD, b, W_OK, AT_EACCESS) < 0) {
    free(b);
    b = rrt_cg_dir_of(m->v2_mnt, m->v2_root, w->v2);
    absolute = false;
    rrt_debug("cgroup: linux.cgroupsPath /%s: under the caller's own cgroup", rel);
  }
  if (!b) {
    *why = xasprintf("the caller's cgroup v2 is not under the cgroup2 mount %s", m->v2_mnt);
    return;
  }
  if (!o->privileged && !absolute && faccessat(AT_FDCWD, b, W_OK, AT_EACCESS) < 0) {
    *why = xasprintf("the caller's cgroup %s on the cgroup2 mount %s is not delegated to this "
                     "user",
                     b, m->v2_mnt);
    free(b);
    return;
  }
  *base = b;
}

/* The container's cgroup2 directory, base/rel. Unprivileged, a mkdir refused says so in *why and
 * cg->v2 stays NULL. */
static int make_v2(const struct rrt_cgroup_opts *o, const char *base, const char *rel,
                   struct rrt_cgroup *cg, char **why, struct rrt_error *err)
{
  char *leaf = NULL;
  if (mkdir_levels(base, rel, true, false, &leaf, &cg->made_v2, err) < 0) {
    if (o->privileged || !denied(err->errnum))
      return rrt_error_wrap(err, "cgroup");
    *why = xasprintf("%s (not delegated to this user)", rrt_error_msg(err));
    rrt_error_clear(err);
    return 0;
  }
  cg->v2 = leaf;
  return check_empty(leaf, true, o->cgroup_shared, err);
}
/* Unprivileged on cgroup v1: whether the user can make base/rel (the deepest level of it that
 * exists is writable) and move init in (its cgroup.procs is): a hierarchy root made such a
 * sub-tree theirs (chown, as runc's rootless tests do), else the controller is not used. */
static bool v1_writable(const char *base, const char *rel)
{
  cleanup_free char *dir = xasprintf("%s/%s", base, rel);
  struct stat st;
  if (stat(dir, &st) == 0) {
    cleanup_free char *procs = xasprintf("%s/cgroup.procs", dir);
    return faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) == 0 &&
           faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) == 0;
  }
  for (char *slash = strrchr(dir, '/'); slash && slash > dir + strlen(base) - 1;
       slash = strrchr(dir, '/')) {
    *slash = '\0';
    if (stat(dir, &st) == 0)
      return faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) == 0;
  }
  return false;
}

/* On a legacy or hybrid host: the same path in every v1 controller present; for an
 * unprivileged user only in those where that path is theirs to write (v1_writable). */
/* Where the container's directory goes in each v1 hierarchy (base[i], NULL where none is
 * used): on a legacy or hybrid host the same path in every v1 controller present; for an
 * unprivileged user only in those where that path is theirs to write (v1_writable). Co-mounted
 * hierarchies (cpu,cpuacct) share one directory: same[i] names the first of them. */
static void plan_v1(const struct rrt_cgroup_opts *o, const struct rrt_cg_mounts *m,
                    const struct own *w, const char *rel, bool absolute, char *base[RRT_CG_V1_N],
                    int same[RRT_CG_V1_N])
{
  for (int i = 0; i < RRT_CG_V1_N; i++) {
    base[i] = NULL;
    same[i] = -1;
    if (!m->v1_mnt[i])
      continue;
    for (int j = 0; j < i && same[i] < 0; j++)
      if (m->v1_mnt[j] && strcmp(m->v1_mnt[j], m->v1_mnt[i]) == 0 && (base[j] || same[j] >= 0))
        same[i] = same[j] >= 0 ? same[j] : j;
    if (same[i] >= 0)
      continue;
    char *b =
        absolute ? xstrdup(m->v1_mnt[i]) : rrt_cg_dir_of(m->v1_mnt[i], m->v1_root[i], w->v1[i]);
    if (b && !o->privileged && !v1_writable(b, rel)) {
      rrt_debug("cgroup: %s/%s is not writable by this user: no %s controller", b, rel,
                rrt_cgroup_v1_name((enum rrt_cg_v1)i));
      free(b);
      b = NULL;
    }
    base[i] = b;
  }
}

static int make_v1(const struct rrt_cgroup_opts *o, char *const base[RRT_CG_V1_N],
                   const int same[RRT_CG_V1_N], const char *rel, struct rrt_cgroup *cg,
                   struct rrt_error *err)
{
  for (int i = 0; i < RRT_CG_V1_N; i++) {
    if (same[i] >= 0 && cg->v1[same[i]])
      cg->v1[i] = xstrdup(cg->v1[same[i]]);
    if (!base[i])
      continue;
    if (mkdir_levels(base[i], rel, false, i == RRT_CG_CPUSET, &cg->v1[i], &cg->made_v1[i], err) < 0)
      return rrt_error_wrap(err, "cgroup %s", rrt_cgroup_v1_name((enum rrt_cg_v1)i));
    if (check_empty(cg->v1[i], false, o->cgroup_shared, err) < 0)
      return -1;
  }
  return 0;
}
static bool any_v1(const struct rrt_cgroup *cg)
{
  for (int i = 0; i < RRT_CG_V1_N; i++)
    if (cg->v1[i])
      return true;
  return false;
}

bool rrt_cgroup_has_device_rules(const char *resources_json)
{
  if (!resources_json)
    return false;
  json_object *res = json_tokener_parse(resources_json), *d = NULL;
  bool r = res && json_object_object_get_ex(res, "devices", &d) &&
           json_object_is_type(d, json_type_array) && json_object_array_length(d) > 0;
  json_object_put(res);
  return r;
}

/* No cgroup for the container: fine, unless it asked for what only a cgroup gives. */
static int without_cgroup(const struct rrt_cgroup_opts *o, const char *why, struct rrt_error *err)
{
  rrt_debug("cgroup: no cgroup for the container: %s", why);
  if (o->privileged && rrt_cgroup_has_device_rules(o->resources_json))
    return rrt_error_msgf(err, ENOTSUP,
                          "linux.resources.devices: the device rules cannot be enforced: %s", why);
  if (!o->has_limits)
    return 0;
  struct rrt_cgroup none = {.limits_warn = o->limits_warn};
  if (rrt_cgroup_update(&none, o->resources_json, false, err) < 0)
    return rrt_error_wrap(err, "linux.resources (%s)", why);
  return 0;
}

/* A leaf of the plan that is not there yet (so it will be the container's). */
static char *new_leaf(const char *base, const char *rel)
{
  char *leaf = xasprintf("%s/%s", base, rel);
  struct stat st;
  if (stat(leaf, &st) == 0) {
    free(leaf);
    return NULL;
  }
  return leaf;
}

/* The one record of the container's cgroups (rrt_cgroup_opts.record), made before any directory
 * is: the directories create is about to make. One that is there already (an empty cgroup the
 * container is to go in) is not in it: delete --force of a create killed at any instant kills
 * and removes what the record names, and leaves a cgroup that was there before as it was (init,
 * the one process create puts in, dies by its own record). */
static int record_plan(const struct rrt_cgroup_opts *o, const char *v2_base,
                       char *const v1_base[RRT_CG_V1_N], const char *rel, struct rrt_error *err)
{
  struct rrt_cgroup plan = {0};
  bool any = false;
  if (v2_base)
    any |= (plan.v2 = new_leaf(v2_base, rel)) != NULL;
  for (int i = 0; i < RRT_CG_V1_N; i++)
    if (v1_base[i])
      any |= (plan.v1[i] = new_leaf(v1_base[i], rel)) != NULL;
  int r = any ? o->record(&plan, o->record_arg, err) : 0;
  rrt_cgroup_free(&plan);
  return r;
}

static int create_cgroupfs(const struct rrt_cgroup_opts *o, struct rrt_cgroup *cg,
                           struct rrt_error *err)
{
  bool absolute = false;
  cleanup_free char *rel = NULL;
  if (o->path && check_path(o->path, &absolute, &rel, err) < 0)
    return -1;
  if (!rel)
    rel = xasprintf("rootlessrt-%s", o->id);
  struct rrt_cg_mounts m;
  struct own w;
  rrt_cg_mounts_read(&m);
  own_read(&w);
  cleanup_free char *why = NULL;
  cleanup_free char *v2_base = NULL;
  char *v1_base[RRT_CG_V1_N] = {0};
  int same[RRT_CG_V1_N];
  plan_v2(o, &m, &w, rel, absolute, &v2_base, &why);
  /* Unprivileged, cgroup v1 only where a path was given: the user's own cgroup in a v1
   * hierarchy is never theirs to write. */
  if (o->privileged || o->path)
    plan_v1(o, &m, &w, rel, absolute, v1_base, same);
  else
    for (int i = 0; i < RRT_CG_V1_N; i++)
      same[i] = -1;
  int r = o->record ? record_plan(o, v2_base, v1_base, rel, err) : 0;
  if (r == 0 && v2_base)
    r = make_v2(o, v2_base, rel, cg, &why, err);
  if (r == 0)
    r = make_v1(o, v1_base, same, rel, cg, err);
  if (r == 0 && !cg->v2 && !any_v1(cg))
    r = without_cgroup(o, why ? why : "no cgroup hierarchy is mounted here", err);
  for (int i = 0; i < RRT_CG_V1_N; i++)
    free(v1_base[i]);
  rrt_cg_mounts_free(&m);
  own_free(&w);
  return r;
}

static int remove_tree(const char *path);
/* A failed create: what it made goes (init, if it got in, with it); a cgroup that was there
 * before, and whatever runs in it, is left as it was. A systemd scope is the container's own. */
static void undo_create(struct rrt_cgroup *cg)
{
  struct rrt_cgroup mine = {.unit = cg->unit, .system_bus = cg->system_bus};
  mine.v2 = cg->unit || cg->made_v2 ? cg->v2 : NULL;
  for (int i = 0; i < RRT_CG_V1_N; i++)
    mine.v1[i] = cg->made_v1[i] ? cg->v1[i] : NULL;
  rrt_cgroup_destroy(&mine);
  rrt_cgroup_remove_made(cg);
}

void rrt_cgroup_remove_made(const struct rrt_cgroup *cg)
{
  for (int i = 0; i < RRT_CG_V1_N; i++)
    if (cg->made_v1[i])
      remove_tree(cg->made_v1[i]);
  if (cg->made_v2)
    remove_tree(cg->made_v2);
}

int rrt_cgroup_create(const struct rrt_cgroup_opts *o, pid_t init, struct rrt_cgroup *cg,
                      struct rrt_error *err)
{
  memset(cg, 0, sizeof(*cg));
  cg->limits_warn = o->limits_warn;
  if (o->disabled) {
    rrt_debug("cgroup: --cgroup-manager disabled: the container gets no cgroup");
    if (o->has_limits)
      rrt_warn("linux.resources: limits are not applied: --cgroup-manager=disabled");
    return 0;
  }
  int r = 0;
  bool fallback = !o->systemd;
  cleanup_free char *rest = NULL;
  if (o->systemd)
    r = rrt_cg_systemd_create(o, init, cg, &rest, &fallback, err);
  /* The scope is the container's from the start (cgroupfs reports each directory as made). */
  if (r == 0 && cg->unit && o->record)
    r = o->record(cg, o->record_arg, err);
  if (r == 0 && fallback) {
    /* No bus: the caller's own cgroup, as the cgroupfs manager makes it (a systemd
     * slice:prefix:name path means nothing there). */
    struct rrt_cgroup_opts fs = *o;
    if (o->systemd)
      fs.path = NULL;
    r = create_cgroupfs(&fs, cg, err);
  }
  if (r == 0 && (cg->v2 || any_v1(cg))) {
    r = rrt_cgroup_update(cg, rest ? rest : o->resources_json, o->privileged, err);
    if (r < 0)
      rrt_error_wrap(err, "linux.resources");
    else if (!cg->unit && init > 0)
      r = rrt_cgroup_enter(cg, init, err);
  }
  if (r < 0) {
    undo_create(cg);
    rrt_cgroup_free(cg);
    return -1;
  }
  if (cg->v2)
    rrt_debug("cgroup: container %s in %s", o->id, cg->v2);
  return 0;
}

/* ---------------------------------------------------------------- state record */

void rrt_cgroup_store(const struct rrt_cgroup *cg, struct rrt_state *st)
{
  free(st->cgroup);
  free(st->cgroups_json);
  st->cgroup = cg->v2 ? xstrdup(cg->v2) : NULL;
  st->cgroups_json = NULL;
  if (!any_v1(cg) && !cg->unit)
    return;
  json_object *o = json_object_new_object();
  if (any_v1(cg)) {
    json_object *v1 = json_object_new_object();
    for (int i = 0; i < RRT_CG_V1_N; i++)
      if (cg->v1[i])
        json_object_object_add(v1, rrt_cgroup_v1_name((enum rrt_cg_v1)i),
                               json_object_new_string(cg->v1[i]));
    json_object_object_add(o, "v1", v1);
  }
  if (cg->unit) {
    json_object_object_add(o, "unit", json_object_new_string(cg->unit));
    json_object_object_add(o, "systemBus", json_object_new_boolean(cg->system_bus));
  }
  st->cgroups_json = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
}

void rrt_cgroup_load(const struct rrt_state *st, struct rrt_cgroup *cg)
{
  memset(cg, 0, sizeof(*cg));
  cg->v2 = st->cgroup ? xstrdup(st->cgroup) : NULL;
  json_object *o = st->cgroups_json ? json_tokener_parse(st->cgroups_json) : NULL;
  json_object *v1 = NULL, *x = NULL;
  if (o && json_object_object_get_ex(o, "v1", &v1) && json_object_is_type(v1, json_type_object))
    for (int i = 0; i < RRT_CG_V1_N; i++)
      if (json_object_object_get_ex(v1, rrt_cgroup_v1_name((enum rrt_cg_v1)i), &x) &&
          json_object_is_type(x, json_type_string))
        cg->v1[i] = xstrdup(json_object_get_string(x));
  if (o && json_object_object_get_ex(o, "unit", &x) && json_object_is_type(x, json_type_string))
    cg->unit = xstrdup(json_object_get_string(x));
  if (o && json_object_object_get_ex(o, "systemBus", &x))
    cg->system_bus = json_object_get_boolean(x);
  json_object_put(o);
}

void rrt_cgroup_free(struct rrt_cgroup *cg)
{
  free(cg->v2);
  free(cg->made_v2);
  for (int i = 0; i < RRT_CG_V1_N; i++) {
    free(cg->v1[i]);
    free(cg->made_v1[i]);
  }
  free(cg->unit);
  memset(cg, 0, sizeof(*cg));
}

/* The directory whose cgroup.procs lists the container's processes. */
static const char *procs_dir(const struct rrt_cgroup *cg)
{
  static const enum rrt_cg_v1 order[] = {RRT_CG_PIDS,    RRT_CG_FREEZER, RRT_CG_MEMORY,
                                         RRT_CG_DEVICES, RRT_CG_CPU,     RRT_CG_BLKIO};
  struct stat st;
  if (cg->v2 && stat(cg->v2, &st) == 0)
    return cg->v2;
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
    if (cg->v1[order[i]] && stat(cg->v1[order[i]], &st) == 0)
      return cg->v1[order[i]];
  return NULL;
}

bool rrt_cgroup_exists(const struct rrt_cgroup *cg)
{
  return procs_dir(cg) != NULL;
}

/* ---------------------------------------------------------------- processes */

static void collect_pids(const char *path, pid_t **v, size_t *n, size_t *cap)
{
  cleanup_free char *text = rrt_cg_read(path, "cgroup.procs");
  char *save = NULL;
  for (char *t = text ? strtok_r(text, "\n", &save) : NULL; t; t = strtok_r(NULL, "\n", &save)) {
    unsigned long long p;
    if (rrt_parse_u64(t, &p) < 0 || p == 0)
      continue;
    if (*n == *cap) {
      *cap = *cap ? *cap * 2 : 16;
      *v = xrealloc(*v, *cap * sizeof(**v));
    }
    (*v)[(*n)++] = (pid_t)p;
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

int rrt_cgroup_pids(const struct rrt_cgroup *cg, pid_t **pids, size_t *n, struct rrt_error *err)
{
  *pids = NULL;
  *n = 0;
  const char *dir = procs_dir(cg);
  if (!dir)
    return rrt_error_msgf(err, ENOENT, "the container has no cgroup");
  size_t cap = 0;
  collect_pids(dir, pids, n, &cap);
  return 0;
}

int rrt_cgroup_kill(const struct rrt_cgroup *cg, int sig, size_t *n, struct rrt_error *err)
{
  pid_t *pids = NULL;
  *n = 0;
  if (rrt_cgroup_pids(cg, &pids, n, err) < 0)
    return -1;
  /* cgroup.kill (5.14) reaches every descendant, frozen ones and ones forked meanwhile too. */
  if (sig == SIGKILL && cg->v2 && rrt_cg_has(cg->v2, "cgroup.kill") &&
      rrt_cg_write(cg->v2, "cgroup.kill", "1", NULL) == 0) {
    free(pids);
    return 0;
  }
  size_t sent = 0;
  for (size_t i = 0; i < *n; i++)
    if (kill(pids[i], sig) == 0)
      sent++;
  free(pids);
  *n = sent;
  return 0;
}

/* ---------------------------------------------------------------- freezer */

bool rrt_cgroup_has_freezer(const struct rrt_cgroup *cg)
{
  return (cg->v1[RRT_CG_FREEZER] && rrt_cg_has(cg->v1[RRT_CG_FREEZER], "freezer.state")) ||
         (cg->v2 && rrt_cg_has(cg->v2, "cgroup.freeze"));
}

bool rrt_cgroup_frozen(const struct rrt_cgroup *cg)
{
  if (cg->v1[RRT_CG_FREEZER]) {
    cleanup_free char *s = rrt_cg_read(cg->v1[RRT_CG_FREEZER], "freezer.state");
    if (s)
      return strcmp(s, "THAWED") != 0;
  }
  cleanup_free char *f = cg->v2 ? rrt_cg_read(cg->v2, "cgroup.freeze") : NULL;
  return f && strcmp(f, "1") == 0;
}

/* "key value" of cgroup.events; -1 when unreadable. */
static int events_value(const char *path, const char *key)
{
  cleanup_free char *text = rrt_cg_read(path, "cgroup.events");
  size_t n = strlen(key);
  for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (strncmp(l, key, n) == 0 && l[n] == ' ')
      return atoi(l + n + 1);
  return -1;
}

/* cgroup v1 may stay FREEZING while a task is in an uninterruptible sleep: write again. */
static bool v1_freeze(const char *dir, bool freeze, int timeout_ms)
{
  const char *want = freeze ? "FROZEN" : "THAWED";
  for (int waited = 0; waited <= timeout_ms; waited += 10) {
    if (waited % 200 == 0)
      rrt_cg_write(dir, "freezer.state", want, NULL);
    cleanup_free char *s = rrt_cg_read(dir, "freezer.state");
    if (s && strcmp(s, want) == 0)
      return true;
    sleep_ms(10);
  }
  return false;
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

int rrt_cgroup_freeze(const struct rrt_cgroup *cg, bool freeze, struct rrt_error *err)
{
  const char *v1 = cg->v1[RRT_CG_FREEZER];
  if (v1 && rrt_cg_has(v1, "freezer.state")) {
    if (!v1_freeze(v1, freeze, 5000)) {
      if (freeze)
        v1_freeze(v1, false, 1000);
      return rrt_error_msgf(err, ETIMEDOUT, "cgroup %s: not %s after 5 s", v1,
                            freeze ? "frozen" : "thawed");
    }
    return 0;
  }
  if (!cg->v2)
    return rrt_error_msgf(err, ENOTSUP, "no freezer");
  if (rrt_cg_write(cg->v2, "cgroup.freeze", freeze ? "1" : "0", err) < 0)
    return -1;
  if (!wait_events(cg->v2, "frozen", freeze ? 1 : 0, 5000))
    return rrt_error_msgf(err, ETIMEDOUT, "cgroup %s: not %s after 5 s", cg->v2,
                          freeze ? "frozen" : "thawed");
  return 0;
}

/* ---------------------------------------------------------------- cleanup */

/* Sub-cgroups first: a directory can only go once its children have. */
/* 0, or the errno of the last rmdir of path. */
static int remove_tree(const char *path)
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
  for (int i = 0; i < 200; i++) {
    if (rmdir(path) == 0 || errno == ENOENT)
      return 0;
    if (errno != EBUSY)
      return errno;
    sleep_ms(10);
  }
  return EBUSY;
}

/* Everything in it killed, the freezer thawed so that SIGKILL is delivered; until empty. */
static bool empty_out(const struct rrt_cgroup *cg, int timeout_ms)
{
  for (int waited = 0;; waited += 20) {
    size_t n = 0;
    struct rrt_error e = RRT_ERROR_INIT;
    if (rrt_cgroup_kill(cg, SIGKILL, &n, &e) < 0) {
      rrt_error_clear(&e);
      return true; /* gone */
    }
    if (waited == 0 && rrt_cgroup_frozen(cg)) {
      if (cg->v1[RRT_CG_FREEZER])
        rrt_cg_write(cg->v1[RRT_CG_FREEZER], "freezer.state", "THAWED", NULL);
      if (cg->v2)
        rrt_cg_write(cg->v2, "cgroup.freeze", "0", NULL);
    }
    pid_t *pids = NULL;
    if (rrt_cgroup_pids(cg, &pids, &n, NULL) < 0 || n == 0) {
      free(pids);
      return true;
    }
    free(pids);
    if (waited >= timeout_ms)
      return false;
    sleep_ms(20);
  }
}

void rrt_cgroup_destroy(const struct rrt_cgroup *cg)
{
  if (!rrt_cgroup_exists(cg)) {
    if (cg->unit)
      rrt_cg_systemd_stop(cg);
    return;
  }
  if (!empty_out(cg, 5000))
    rrt_warn("cgroup: %s still has processes after SIGKILL", procs_dir(cg));
  struct stat st;
  const char *dirs[RRT_CG_V1_N + 1];
  size_t n = 0;
  for (int i = 0; i < RRT_CG_V1_N; i++)
    if (cg->v1[i])
      dirs[n++] = cg->v1[i];
  if (cg->v2)
    dirs[n++] = cg->v2;
  for (size_t i = 0; i < n; i++) {
    if (stat(dirs[i], &st) < 0)
      continue; /* gone, or a co-mounted one removed already */
    int e = remove_tree(dirs[i]);
    if (e)
      rrt_warn("cgroup: cannot remove %s: %s", dirs[i], strerror(e));
  }
  if (cg->unit)
    rrt_cg_systemd_stop(cg);
}

/* "oom_kill N" in v2 memory.events or v1 memory.oom_control, N > 0. */
static bool oom_kills_in(const char *dir, const char *file)
{
  cleanup_free char *text = dir ? rrt_cg_read(dir, file) : NULL;
  const char *p = text ? strstr(text, "oom_kill ") : NULL;
  return p && strtoull(p + 9, NULL, 10) > 0;
}

bool rrt_cgroup_oom_killed(const struct rrt_state *st)
{
  struct rrt_cgroup cg;
  rrt_cgroup_load(st, &cg);
  bool killed = oom_kills_in(cg.v2, "memory.events") ||
                oom_kills_in(cg.v1[RRT_CG_MEMORY], "memory.oom_control");
  rrt_cgroup_free(&cg);
  return killed;
}

void rrt_cgroup_destroy_state(const struct rrt_state *st)
{
  if (!st->cgroup && !st->cgroups_json)
    return;
  struct rrt_cgroup cg;
  rrt_cgroup_load(st, &cg);
  rrt_cgroup_destroy(&cg);
  rrt_cgroup_free(&cg);
}

void rrt_cgroup_destroy_failed(const struct rrt_state *st, const struct rrt_cgroup *made)
{
  struct rrt_cgroup cg;
  rrt_cgroup_load(st, &cg);
  if (cg.unit) {
    rrt_cgroup_destroy(&cg); /* a systemd scope create started is the container's own */
  } else if (rrt_cgroup_exists(&cg) && !empty_out(&cg, 5000)) {
    rrt_warn("cgroup: %s still has processes after SIGKILL", procs_dir(&cg));
  }
  rrt_cgroup_free(&cg);
  rrt_cgroup_remove_made(made);
}

char *rrt_cgroup_own_dir(void)
{
  struct rrt_cg_mounts m;
  struct own w;
  rrt_cg_mounts_read(&m);
  own_read(&w);
  char *dir = rrt_cg_dir_of(m.v2_mnt, m.v2_root, w.v2);
  rrt_cg_mounts_free(&m);
  own_free(&w);
  return dir;
}

int rrt_cgroup_kill_state(const struct rrt_state *st, int sig, struct rrt_error *err)
{
  struct rrt_cgroup cg;
  rrt_cgroup_load(st, &cg);
  size_t n = 0;
  int r = rrt_cgroup_exists(&cg) ? rrt_cgroup_kill(&cg, sig, &n, err) : 0;
  if (r == 0)
    rrt_debug("kill --all: %zu process%s left in the cgroup of container %s signalled", n,
              n == 1 ? "" : "es", st->id);
  rrt_cgroup_free(&cg);
  return r;
}
