/* cgroup_res.c: linux.resources (config-linux.md) as cgroup v1 or v2 interface file writes,
 * every one checked before any is made. */
#include <errno.h>
#include <stdarg.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

/* One write: dir/file <- value. */
struct write {
  char *field, *dir, *file, *value;
};

struct plan {
  const struct rrt_cgroup *cg;
  struct write *w;
  size_t n, cap;
  char *problems;   /* "; "-joined, or NULL */
  const char *hint; /* how to get the controllers that are missing */
};

/* Where a controller lives: its v1 hierarchy when the container has one, else cgroup v2. */
struct target {
  int v1;             /* enum rrt_cg_v1, or -1 when cgroup v1 has no such thing */
  const char *v1file; /* NULL: no v1 equivalent */
  const char *v2file; /* NULL: no v2 equivalent */
};

static void problem(struct plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct plan *p, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *m = xvasprintf(fmt, ap);
  va_end(ap);
  char *all = p->problems ? xasprintf("%s; %s", p->problems, m) : xstrdup(m);
  free(m);
  free(p->problems);
  p->problems = all;
}

static char *controller_of(const char *file)
{
  return xstrndup(file, strcspn(file, "."));
}

/* Where the v2 controllers come from: the container's parent. */
static void v2_missing(struct plan *p, const char *field, const char *file)
{
  cleanup_free char *ctl = controller_of(file);
  if (!p->cg->v2) {
    problem(p, "%s: no delegated cgroup v2 %s controller available", field, ctl);
    p->hint = "run it where systemd delegates a cgroup v2 to the user (in a user session: "
              "systemd-run --user --scope -p Delegate=yes ...), or as root";
    return;
  }
  problem(p, "%s: the %s controller is not enabled for the container's cgroup (no %s)", field, ctl,
          file);
  p->hint = "delegate the controllers to the user (systemctl edit user@UID.service: [Service] "
            "Delegate=cpu cpuset io memory pids) or enable them in the parent's "
            "cgroup.subtree_control";
}

static void add(struct plan *p, const char *field, struct target t, const char *v1value,
                const char *v2value)
{
  const char *dir = NULL, *file = NULL, *value = NULL;
  if (t.v1 >= 0 && p->cg->v1[t.v1]) {
    if (!t.v1file) {
      problem(p, "%s: has no cgroup v1 equivalent", field);
      return;
    }
    dir = p->cg->v1[t.v1], file = t.v1file, value = v1value;
  } else if (!t.v2file) {
    problem(p, "%s: has no cgroup v2 equivalent", field);
    return;
  } else if (!p->cg->v2 || !rrt_cg_has(p->cg->v2, t.v2file)) {
    v2_missing(p, field, t.v2file);
    return;
  } else {
    dir = p->cg->v2, file = t.v2file, value = v2value;
  }
  if (!rrt_cg_has(dir, file)) {
    problem(p, "%s: %s/%s does not exist on this host", field, dir, file);
    return;
  }
  if (p->n == p->cap) {
    p->cap = p->cap ? p->cap * 2 : 8;
    p->w = xrealloc(p->w, p->cap * sizeof(*p->w));
  }
  p->w[p->n++] = (struct write){xstrdup(field), xstrdup(dir), xstrdup(file), xstrdup(value)};
}

/* Whether add() could write t: its controller and file exist for the container. */
static bool can_write(const struct plan *p, struct target t)
{
  if (t.v1 >= 0 && p->cg->v1[t.v1])
    return t.v1file && rrt_cg_has(p->cg->v1[t.v1], t.v1file);
  return t.v2file && p->cg->v2 && rrt_cg_has(p->cg->v2, t.v2file);
}

/* A value that asks for no limit (the kernel's default: unlimited, no quota) is not a limit that
 * "cannot be applied" where the controller is missing: there is nothing to enforce. Engines pass
 * them for every container (rootless podman: pids.limit -1), so only a real limit is an error. */
static void add_or_default(struct plan *p, bool is_default, const char *field, struct target t,
                           const char *v1value, const char *v2value)
{
  if (is_default && !can_write(p, t)) {
    rrt_debug("linux.resources.%s: no limit asked, and no controller to write it to", field);
    return;
  }
  add(p, field, t, v1value, v2value);
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
    return rrt_error_msgf(err, EINVAL, "%s: expected an integer", field);
  *out = json_object_get_int64(v);
  return 0;
}

/* An integer member, formatted for v1 ("-1" unlimited) and v2 ("max"); 0 when absent. */
static int int_member(json_object *o, const char *key, const char *field, long long *v,
                      struct rrt_error *err)
{
  json_object *x = get(o, key);
  if (!x)
    return 0;
  return want_int(x, field, v, err) < 0 ? -1 : 1;
}

static char *v2_limit(long long v)
{
  return v < 0 ? xstrdup("max") : xasprintf("%lld", v);
}

static int plan_memory(struct plan *p, json_object *mem, struct rrt_error *err)
{
  long long limit = 0, v = 0;
  int has_limit, r;
  if ((has_limit = int_member(mem, "limit", "memory.limit", &limit, err)) < 0)
    return -1;
  if (has_limit) {
    cleanup_free char *a = xasprintf("%lld", limit), *b = v2_limit(limit);
    add_or_default(p, limit < 0, "memory.limit",
                   (struct target){RRT_CG_MEMORY, "memory.limit_in_bytes", "memory.max"}, a, b);
  }
  if ((r = int_member(mem, "reservation", "memory.reservation", &v, err)) < 0)
    return -1;
  if (r) {
    cleanup_free char *a = xasprintf("%lld", v), *b = v2_limit(v);
    add(p, "memory.reservation",
        (struct target){RRT_CG_MEMORY, "memory.soft_limit_in_bytes", "memory.low"}, a, b);
  }
  if ((r = int_member(mem, "swap", "memory.swap", &v, err)) < 0)
    return -1;
  if (r) {
    /* OCI's swap is memory+swap, as v1's memsw; v2's swap.max is the swap alone. */
    if (v > 0 && has_limit && limit > 0 && v < limit)
      return rrt_error_msgf(err, EINVAL, "memory.swap: %lld is below memory.limit %lld", v, limit);
    cleanup_free char *a = xasprintf("%lld", v);
    cleanup_free char *b =
        v < 0 ? xstrdup("max") : xasprintf("%lld", has_limit && limit > 0 ? v - limit : v);
    add_or_default(p, v < 0, "memory.swap",
                   (struct target){RRT_CG_MEMORY, "memory.memsw.limit_in_bytes", "memory.swap.max"},
                   a, b);
  }
  if ((r = int_member(mem, "swappiness", "memory.swappiness", &v, err)) < 0)
    return -1;
  if (r) {
    cleanup_free char *a = xasprintf("%lld", v);
    add(p, "memory.swappiness", (struct target){RRT_CG_MEMORY, "memory.swappiness", NULL}, a, a);
  }
  json_object *x = get(mem, "disableOOMKiller");
  if (x && json_object_get_boolean(x))
    add(p, "memory.disableOOMKiller", (struct target){RRT_CG_MEMORY, "memory.oom_control", NULL},
        "1", "1");
  static const char *const ignored[] = {"kernel", "kernelTCP", "useHierarchy", "checkBeforeUpdate"};
  for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
    if (get(mem, ignored[i]))
      rrt_debug("linux.resources.memory.%s: deprecated, ignored", ignored[i]);
  return 0;
}

static int plan_cpu_quota(struct plan *p, json_object *cpu, struct rrt_error *err)
{
  long long quota = -1, period = 100000, burst = 0;
  int hq, hp, hb;
  if ((hq = int_member(cpu, "quota", "cpu.quota", &quota, err)) < 0 ||
      (hp = int_member(cpu, "period", "cpu.period", &period, err)) < 0 ||
      (hb = int_member(cpu, "burst", "cpu.burst", &burst, err)) < 0)
    return -1;
  if (hq || hp) {
    cleanup_free char *q = xasprintf("%lld", quota > 0 ? quota : -1);
    cleanup_free char *pe = xasprintf("%lld", period);
    cleanup_free char *v2 =
        quota > 0 ? xasprintf("%lld %lld", quota, period) : xasprintf("max %lld", period);
    /* v1: the period first, so that a quota meant for it is checked against it. */
    if (hp)
      add(p, "cpu.period", (struct target){RRT_CG_CPU, "cpu.cfs_period_us", "cpu.max"}, pe, v2);
    if (hq)
      add_or_default(p, quota <= 0 && !hp, "cpu.quota",
                     (struct target){RRT_CG_CPU, "cpu.cfs_quota_us", "cpu.max"}, q, v2);
  }
  if (hb) {
    cleanup_free char *b = xasprintf("%lld", burst);
    add(p, "cpu.burst", (struct target){RRT_CG_CPU, "cpu.cfs_burst_us", "cpu.max.burst"}, b, b);
  }
  return 0;
}

static int plan_cpu(struct plan *p, json_object *cpu, struct rrt_error *err)
{
  long long v = 0;
  int r;
  if ((r = int_member(cpu, "shares", "cpu.shares", &v, err)) < 0)
    return -1;
  if (r) {
    /* The conversion runc and crun use: [2, 262144] -> [1, 10000]. */
    long long w = v <= 0 ? 100 : 1 + ((v - 2) * 9999) / 262142;
    cleanup_free char *a = xasprintf("%lld", v);
    cleanup_free char *b = xasprintf("%lld", w < 1 ? 1 : w > 10000 ? 10000 : w);
    add_or_default(p, v == 0, "cpu.shares", (struct target){RRT_CG_CPU, "cpu.shares", "cpu.weight"},
                   a, b);
  }
  if (plan_cpu_quota(p, cpu, err) < 0)
    return -1;
  static const struct {
    const char *key;
    struct target t;
  } plain[] = {
      {"realtimeRuntime", {RRT_CG_CPU, "cpu.rt_runtime_us", NULL}},
      {"realtimePeriod", {RRT_CG_CPU, "cpu.rt_period_us", NULL}},
      {"cpus", {RRT_CG_CPUSET, "cpuset.cpus", "cpuset.cpus"}},
      {"mems", {RRT_CG_CPUSET, "cpuset.mems", "cpuset.mems"}},
      {"idle", {RRT_CG_CPU, NULL, "cpu.idle"}},
  };
  for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
    json_object *x = get(cpu, plain[i].key);
    if (!x)
      continue;
    cleanup_free char *field = xasprintf("cpu.%s", plain[i].key);
    const char *s = json_object_get_string(x);
    add(p, field, plain[i].t, s, s);
  }
  return 0;
}

/* blockIO device lists: "MAJ:MIN VALUE" lines (v1) or "MAJ:MIN KEY=VALUE" (v2 io.max). */
static int plan_blkio_devices(struct plan *p, json_object *bio, struct rrt_error *err)
{
  static const struct {
    const char *key, *v1file, *v2key;
  } lists[] = {
      {"weightDevice", "blkio.weight_device", NULL},
      {"throttleReadBpsDevice", "blkio.throttle.read_bps_device", "rbps"},
      {"throttleWriteBpsDevice", "blkio.throttle.write_bps_device", "wbps"},
      {"throttleReadIOPSDevice", "blkio.throttle.read_iops_device", "riops"},
      {"throttleWriteIOPSDevice", "blkio.throttle.write_iops_device", "wiops"},
  };
  for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
    json_object *arr = get(bio, lists[i].key);
    size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
    for (size_t k = 0; k < n; k++) {
      json_object *d = json_object_array_get_idx(arr, k);
      cleanup_free char *field = xasprintf("blockIO.%s[%zu]", lists[i].key, k);
      long long maj = 0, min = 0, v = 0;
      const char *vk = lists[i].v2key ? "rate" : "weight";
      if (int_member(d, "major", field, &maj, err) < 0 ||
          int_member(d, "minor", field, &min, err) < 0 || int_member(d, vk, field, &v, err) < 0)
        return -1;
      if (!get(d, vk))
        continue; /* a weightDevice entry with only a leafWeight */
      cleanup_free char *a = xasprintf("%lld:%lld %lld", maj, min, v);
      cleanup_free char *b = lists[i].v2key
                                 ? xasprintf("%lld:%lld %s=%lld", maj, min, lists[i].v2key, v)
                                 : xasprintf("%lld:%lld %lld", maj, min, v);
      add(p, field,
          (struct target){RRT_CG_BLKIO, lists[i].v1file, lists[i].v2key ? "io.max" : "io.weight"},
          a, b);
    }
  }
  return 0;
}

static int plan_blkio(struct plan *p, json_object *bio, struct rrt_error *err)
{
  long long v = 0;
  int r;
  if ((r = int_member(bio, "weight", "blockIO.weight", &v, err)) < 0)
    return -1;
  if (r) {
    cleanup_free char *a = xasprintf("%lld", v);
    cleanup_free char *b = xasprintf("default %lld", 1 + (v - 10) * 9999 / 990);
    add(p, "blockIO.weight", (struct target){RRT_CG_BLKIO, "blkio.weight", "io.weight"}, a, b);
  }
  if ((r = int_member(bio, "leafWeight", "blockIO.leafWeight", &v, err)) < 0)
    return -1;
  if (r) {
    cleanup_free char *a = xasprintf("%lld", v);
    add(p, "blockIO.leafWeight", (struct target){RRT_CG_BLKIO, "blkio.leaf_weight", NULL}, a, a);
  }
  return plan_blkio_devices(p, bio, err);
}

static int plan_misc(struct plan *p, json_object *res, struct rrt_error *err)
{
  json_object *x, *arr;
  long long v = 0;
  if ((x = get(get(res, "pids"), "limit"))) {
    if (want_int(x, "pids.limit", &v, err) < 0)
      return -1;
    cleanup_free char *a = xasprintf("%lld", v <= 0 ? -1 : v), *b = v2_limit(v <= 0 ? -1 : v);
    add_or_default(p, v <= 0, "pids.limit", (struct target){RRT_CG_PIDS, "pids.max", "pids.max"},
                   v <= 0 ? "max" : a, b);
  }
  size_t n = (arr = get(res, "hugepageLimits")) ? json_object_array_length(arr) : 0;
  for (size_t i = 0; i < n; i++) {
    json_object *h = json_object_array_get_idx(arr, i);
    cleanup_free char *field = xasprintf("hugepageLimits[%zu]", i);
    const char *size = json_object_get_string(get(h, "pageSize"));
    if (int_member(h, "limit", field, &v, err) < 0)
      return -1;
    cleanup_free char *f1 = xasprintf("hugetlb.%s.limit_in_bytes", size ? size : "?");
    cleanup_free char *f2 = xasprintf("hugetlb.%s.max", size ? size : "?");
    cleanup_free char *val = xasprintf("%lld", v);
    add(p, field, (struct target){RRT_CG_HUGETLB, f1, f2}, val, val);
  }
  json_object *net = get(res, "network");
  if ((x = get(net, "classID"))) {
    const char *s = json_object_get_string(x);
    add(p, "network.classID", (struct target){RRT_CG_NET_CLS, "net_cls.classid", NULL}, s, s);
  }
  n = (arr = get(net, "priorities")) ? json_object_array_length(arr) : 0;
  for (size_t i = 0; i < n; i++) {
    json_object *e = json_object_array_get_idx(arr, i);
    cleanup_free char *field = xasprintf("network.priorities[%zu]", i);
    cleanup_free char *val = xasprintf("%s %s", json_object_get_string(get(e, "name")),
                                       json_object_get_string(get(e, "priority")));
    add(p, field, (struct target){RRT_CG_NET_PRIO, "net_prio.ifpriomap", NULL}, val, val);
  }
  json_object *rdma = get(res, "rdma");
  if (rdma) {
    json_object_object_foreach(rdma, hca, lim)
    {
      cleanup_free char *field = xasprintf("rdma.%s", hca);
      cleanup_free char *val = xasprintf(
          "%s hca_handle=%s hca_object=%s", hca,
          get(lim, "hcaHandles") ? json_object_get_string(get(lim, "hcaHandles")) : "max",
          get(lim, "hcaObjects") ? json_object_get_string(get(lim, "hcaObjects")) : "max");
      add(p, field, (struct target){-1, NULL, "rdma.max"}, val, val);
    }
  }
  return 0;
}

/* unified: cgroup v2 interface files by name; one the container's cgroup does not have is an
 * unknown key or a controller that is not enabled, and both are errors. */
static int plan_unified(struct plan *p, json_object *u, struct rrt_error *err)
{
  json_object_object_foreach(u, key, val)
  {
    cleanup_free char *field = xasprintf("unified.%s", key);
    if (!*key || strchr(key, '/') || key[0] == '.' || !json_object_is_type(val, json_type_string))
      return rrt_error_msgf(err, EINVAL, "%s: not an interface file name and a string value",
                            field);
    if (!p->cg->v2) {
      problem(p, "%s: needs cgroup v2, and the container has no cgroup v2 directory", field);
      continue;
    }
    if (!rrt_cg_has(p->cg->v2, key)) {
      static const char *const controllers[] = {"cpu",     "cpuset", "memory", "io", "pids",
                                                "hugetlb", "rdma",   "misc",   NULL};
      cleanup_free char *ctl = controller_of(key);
      bool known = false;
      for (size_t i = 0; controllers[i]; i++)
        known = known || strcmp(controllers[i], ctl) == 0;
      if (known)
        v2_missing(p, field, key);
      else
        problem(p, "%s: unknown interface file (no controller \"%s\" and no file %s in %s)", field,
                ctl, key, p->cg->v2);
      continue;
    }
    add(p, field, (struct target){-1, NULL, key}, json_object_get_string(val),
        json_object_get_string(val));
  }
  return 0;
}

static void plan_free(struct plan *p)
{
  for (size_t i = 0; i < p->n; i++) {
    free(p->w[i].field);
    free(p->w[i].dir);
    free(p->w[i].file);
    free(p->w[i].value);
  }
  free(p->w);
  free(p->problems);
}

/* v1 refuses a memory limit above memsw (and memsw below the limit): when one write fails the
 * other goes first. */
static int write_all(struct plan *p, struct rrt_error *err)
{
  for (size_t i = 0; i < p->n; i++) {
    struct write *w = &p->w[i];
    if (!w->value)
      continue;
    struct rrt_error e = RRT_ERROR_INIT;
    if (rrt_cg_write(w->dir, w->file, w->value, &e) == 0)
      continue;
    bool retried = false;
    for (size_t j = i + 1; j < p->n && e.errnum == EINVAL && !retried; j++)
      if (strcmp(p->w[j].file, "memory.memsw.limit_in_bytes") == 0 &&
          rrt_cg_write(p->w[j].dir, p->w[j].file, p->w[j].value, NULL) == 0) {
        free(p->w[j].value);
        p->w[j].value = NULL;
        retried = rrt_cg_write(w->dir, w->file, w->value, NULL) == 0;
      }
    if (!retried) {
      rrt_error_move(err, &e);
      return rrt_error_wrap(err, "%s", w->field);
    }
    rrt_error_clear(&e);
  }
  return 0;
}

int rrt_cgroup_update(const struct rrt_cgroup *cg, const char *resources_json, bool devices,
                      struct rrt_error *err)
{
  /* In a systemd scope, what systemd has properties for goes to it first. */
  cleanup_free char *rest = NULL;
  if (cg->unit && rrt_cg_systemd_update(cg, resources_json, &rest, err) < 0)
    return -1;
  if (rest)
    resources_json = rest;
  json_object *res = json_tokener_parse(resources_json ? resources_json : "{}");
  if (!res || !json_object_is_type(res, json_type_object)) {
    json_object_put(res);
    return rrt_error_msgf(err, EINVAL, "the resources are not a JSON object");
  }
  struct plan p = {.cg = cg};
  json_object *x;
  int ret = -1;
  if ((x = get(res, "memory")) && plan_memory(&p, x, err) < 0)
    goto out;
  if ((x = get(res, "cpu")) && plan_cpu(&p, x, err) < 0)
    goto out;
  if ((x = get(res, "blockIO")) && plan_blkio(&p, x, err) < 0)
    goto out;
  if (plan_misc(&p, res, err) < 0)
    goto out;
  if ((x = get(res, "unified")) && plan_unified(&p, x, err) < 0)
    goto out;
  if (p.problems) {
    if (p.hint)
      rrt_error_msgf(err, ENOTSUP, "cannot be applied: %s (%s)", p.problems, p.hint);
    else
      rrt_error_msgf(err, ENOTSUP, "cannot be applied: %s", p.problems);
    goto out;
  }
  if (write_all(&p, err) < 0)
    goto out;
  if (devices && rrt_cg_devices_apply(cg, get(res, "devices"), err) < 0)
    goto out;
  ret = 0;
out:
  plan_free(&p);
  json_object_put(res);
  return ret;
}
