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
  char *old;    /* the file's text before the write, to restore on a later failure */
  bool written; /* the write was made */
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
  p->w[p->n++] =
      (struct write){xstrdup(field), xstrdup(dir), xstrdup(file), xstrdup(value), NULL, false};
}

/* Whether add() could write t: its controller and file exist for the container. */
static bool can_write(const struct plan *p, struct target t)
{
  if (t.v1 >= 0 && p->cg->v1[t.v1])
    return t.v1file && rrt_cg_has(p->cg->v1[t.v1], t.v1file);
  return t.v2file && p->cg->v2 && rrt_cg_has(p->cg->v2, t.v2file);
}

int rrt_cgroup_limits_mode(const char *value, bool *warn, struct rrt_error *err)
{
  *warn = value && strcmp(value, "warn") == 0;
  if (value && !*warn && strcmp(value, "error") != 0)
    return rrt_error_msgf(err, EINVAL,
                          "annotations." RRT_LIMITS_ANNOTATION ": \"%s\": expected \"warn\" or "
                          "\"error\"",
                          value);
  return 0;
}

/* A value by what it asks for: "not set" is never written, a kernel default only where its file
 * is (nothing to enforce where the controller or file is missing), a limit always (a limit that
 * cannot be applied is a problem). ask_field: field without an index, as rrt_cgroup_asks wants. */
static void want(struct plan *p, const char *ask_field, const char *ask_value, const char *field,
                 struct target t, const char *v1value, const char *v2value)
{
  enum rrt_cg_ask a = rrt_cgroup_asks(ask_field, ask_value);
  if (a == RRT_CG_UNSET) {
    rrt_debug("linux.resources.%s: %s means not set, nothing written", field, ask_value);
    return;
  }
  if (a == RRT_CG_DEFAULT && !can_write(p, t)) {
    rrt_debug("linux.resources.%s: the kernel's default, and no file to write it to", field);
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
    want(p, "memory.limit", a, "memory.limit",
         (struct target){RRT_CG_MEMORY, "memory.limit_in_bytes", "memory.max"}, a, b);
  }
  if ((r = int_member(mem, "reservation", "memory.reservation", &v, err)) < 0)
    return -1;
  if (r) {
    cleanup_free char *a = xasprintf("%lld", v), *b = v2_limit(v);
    want(p, "memory.reservation", a, "memory.reservation",
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
    want(p, "memory.swap", a, "memory.swap",
         (struct target){RRT_CG_MEMORY, "memory.memsw.limit_in_bytes", "memory.swap.max"}, a, b);
  } else if (has_limit && limit < 0) {
    /* An unlimited memory without a word on swap unlimits memory+swap too, as runc does: v1
     * refuses a memory limit above the memsw one, so `update --memory -1` after a swap limit
     * would fail otherwise (write_all puts memsw first when the kernel says so). */
    want(p, "memory.swap", "-1", "memory.swap",
         (struct target){RRT_CG_MEMORY, "memory.memsw.limit_in_bytes", "memory.swap.max"}, "-1",
         "max");
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

/* Whether controller c is written through its cgroup v1 hierarchy (else cgroup v2). */
static bool on_v1(const struct plan *p, enum rrt_cg_v1 c)
{
  return p->cg->v1[c] != NULL;
}

/* cgroup v2 has quota and period in one file, cpu.max: what is not set (0, as the containerd
 * shim sends on update) keeps the value the file has. */
static void plan_cpu_max(struct plan *p, long long quota, enum rrt_cg_ask aq, long long period,
                         enum rrt_cg_ask ap)
{
  cleanup_free char *cur = p->cg->v2 ? rrt_cg_read(p->cg->v2, "cpu.max") : NULL;
  char curq[32] = "max";
  long long curp = 100000;
  if (cur && sscanf(cur, "%31s %lld", curq, &curp) < 1)
    snprintf(curq, sizeof(curq), "max");
  cleanup_free char *q = aq == RRT_CG_UNSET ? xstrdup(curq)
                         : quota > 0        ? xasprintf("%lld", quota)
                                            : xstrdup("max");
  cleanup_free char *v2 = xasprintf("%s %lld", q, ap == RRT_CG_UNSET ? curp : period);
  /* Named (and judged) by the member that asks most: a real limit stays one. */
  bool by_quota =
      aq == RRT_CG_LIMIT || ap == RRT_CG_UNSET || (aq == RRT_CG_DEFAULT && ap != RRT_CG_LIMIT);
  cleanup_free char *av = xasprintf("%lld", by_quota ? quota : period);
  want(p, by_quota ? "cpu.quota" : "cpu.period", av, by_quota ? "cpu.quota" : "cpu.period",
       (struct target){RRT_CG_CPU, NULL, "cpu.max"}, v2, v2);
}

static int plan_cpu_quota(struct plan *p, json_object *cpu, struct rrt_error *err)
{
  long long quota = 0, period = 0, burst = 0;
  int hq, hp, hb;
  if ((hq = int_member(cpu, "quota", "cpu.quota", &quota, err)) < 0 ||
      (hp = int_member(cpu, "period", "cpu.period", &period, err)) < 0 ||
      (hb = int_member(cpu, "burst", "cpu.burst", &burst, err)) < 0)
    return -1;
  cleanup_free char *qs = xasprintf("%lld", quota), *ps = xasprintf("%lld", period);
  enum rrt_cg_ask aq = hq ? rrt_cgroup_asks("cpu.quota", qs) : RRT_CG_UNSET;
  enum rrt_cg_ask ap = hp ? rrt_cgroup_asks("cpu.period", ps) : RRT_CG_UNSET;
  if (on_v1(p, RRT_CG_CPU)) {
    cleanup_free char *q = xasprintf("%lld", quota > 0 ? quota : -1);
    /* The period first, so that a quota meant for it is checked against it. */
    if (hp)
      want(p, "cpu.period", ps, "cpu.period",
           (struct target){RRT_CG_CPU, "cpu.cfs_period_us", NULL}, ps, ps);
    if (hq)
      want(p, "cpu.quota", qs, "cpu.quota", (struct target){RRT_CG_CPU, "cpu.cfs_quota_us", NULL},
           q, q);
  } else if (aq != RRT_CG_UNSET || ap != RRT_CG_UNSET) {
    plan_cpu_max(p, quota, aq, period, ap);
  }
  if (hb) {
    cleanup_free char *b = xasprintf("%lld", burst);
    want(p, "cpu.burst", b, "cpu.burst",
         (struct target){RRT_CG_CPU, "cpu.cfs_burst_us", "cpu.max.burst"}, b, b);
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
    want(p, "cpu.shares", a, "cpu.shares", (struct target){RRT_CG_CPU, "cpu.shares", "cpu.weight"},
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
    want(p, field, s, field, plain[i].t, s, s);
  }
  return 0;
}

/* A weight file: CFQ's blkio.weight and io.weight, or with BFQ (the only weight there is on
 * kernels >= 5.0 for v1) blkio.bfq.weight and io.bfq.weight, on BFQ's own 1..1000 scale. */
static struct target weight_target(const struct plan *p, bool device, bool *bfq_v2)
{
  struct target t = {RRT_CG_BLKIO, device ? "blkio.weight_device" : "blkio.weight", "io.weight"};
  const char *v1bfq = device ? "blkio.bfq.weight_device" : "blkio.bfq.weight";
  const char *d1 = p->cg->v1[RRT_CG_BLKIO];
  *bfq_v2 = false;
  if (d1 && !rrt_cg_has(d1, t.v1file) && rrt_cg_has(d1, v1bfq))
    t.v1file = v1bfq;
  if (!d1 && p->cg->v2 && !rrt_cg_has(p->cg->v2, t.v2file) &&
      rrt_cg_has(p->cg->v2, "io.bfq.weight")) {
    t.v2file = "io.bfq.weight";
    *bfq_v2 = true;
  }
  return t;
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
    cleanup_free char *ask = xasprintf("blockIO.%s", lists[i].key);
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
      bool bfq = false;
      struct target t = lists[i].v2key ? (struct target){RRT_CG_BLKIO, lists[i].v1file, "io.max"}
                                       : weight_target(p, true, &bfq);
      cleanup_free char *a = xasprintf("%lld:%lld %lld", maj, min, v);
      cleanup_free char *b = lists[i].v2key
                                 ? xasprintf("%lld:%lld %s=%lld", maj, min, lists[i].v2key, v)
                                 : xasprintf("%lld:%lld %lld", maj, min, v);
      cleanup_free char *vs = xasprintf("%lld", v);
      want(p, ask, vs, field, t, a, b);
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
    bool bfq = false;
    struct target t = weight_target(p, false, &bfq);
    cleanup_free char *a = xasprintf("%lld", v);
    cleanup_free char *b =
        bfq ? xasprintf("default %lld", v) : xasprintf("default %lld", 1 + (v - 10) * 9999 / 990);
    want(p, "blockIO.weight", a, "blockIO.weight", t, a, b);
  }
  if ((r = int_member(bio, "leafWeight", "blockIO.leafWeight", &v, err)) < 0)
    return -1;
  if (r) {
    cleanup_free char *a = xasprintf("%lld", v);
    want(p, "blockIO.leafWeight", a, "blockIO.leafWeight",
         (struct target){RRT_CG_BLKIO, "blkio.leaf_weight", NULL}, a, a);
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
    cleanup_free char *a = xasprintf("%lld", v), *b = v2_limit(v);
    want(p, "pids.limit", a, "pids.limit", (struct target){RRT_CG_PIDS, "pids.max", "pids.max"}, b,
         b);
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
    want(p, "network.classID", s, "network.classID",
         (struct target){RRT_CG_NET_CLS, "net_cls.classid", NULL}, s, s);
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
    free(p->w[i].old);
  }
  free(p->w);
  free(p->problems);
}

/* "MAJ:MIN" at the start of a device-keyed value, or NULL. */
static char *device_key(const char *value)
{
  size_t n = strcspn(value, " ");
  return value[n] == ' ' && memchr(value, ':', n) ? xstrndup(value, n) : NULL;
}

/* What puts a device-keyed file back for a device the old text has no line for. */
static const char *device_reset(const char *file)
{
  if (strcmp(file, "io.max") == 0)
    return "rbps=max wbps=max riops=max wiops=max";
  if (strcmp(file, "io.weight") == 0 || strcmp(file, "io.bfq.weight") == 0)
    return "default";
  return "0"; /* blkio.throttle.*, blkio.weight_device: 0 removes the rule */
}

/* Writes w->old back: line by line (multi-line files take one entry a write), only the device a
 * keyed write changed, memory.oom_control as its oom_kill_disable. */
static int restore(const struct write *w)
{
  if (!w->old)
    return -1;
  if (strcmp(w->file, "memory.oom_control") == 0) {
    const char *k = strstr(w->old, "oom_kill_disable ");
    return rrt_cg_write(w->dir, w->file, k && k[17] == '1' ? "1" : "0", NULL);
  }
  cleanup_free char *key = device_key(w->value);
  if (key) {
    size_t n = strlen(key);
    for (const char *l = w->old; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
      if (strncmp(l, key, n) == 0 && l[n] == ' ') {
        cleanup_free char *line = xstrndup(l, strcspn(l, "\n"));
        return rrt_cg_write(w->dir, w->file, line, NULL);
      }
    cleanup_free char *reset = xasprintf("%s %s", key, device_reset(w->file));
    return rrt_cg_write(w->dir, w->file, reset, NULL);
  }
  if (!strchr(w->old, '\n'))
    return rrt_cg_write(w->dir, w->file, w->old, NULL);
  int r = 0;
  cleanup_free char *copy = xstrdup(w->old);
  char *save = NULL;
  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    if (rrt_cg_write(w->dir, w->file, l, NULL) < 0)
      r = -1;
  return r;
}

/* After a failed write: what was written goes back, the last first; v1 refuses a memory limit
 * above memsw (and memsw below the limit) whatever the order, so a second round retries. */
static void undo(struct plan *p)
{
  for (int round = 0; round < 2; round++)
    for (size_t i = p->n; i-- > 0;)
      if (p->w[i].written && restore(&p->w[i]) == 0)
        p->w[i].written = false;
  for (size_t i = 0; i < p->n; i++)
    if (p->w[i].written)
      rrt_warn("linux.resources.%s: cannot restore %s/%s to its old value", p->w[i].field,
               p->w[i].dir, p->w[i].file);
}

/* Files the kernel checks against each other, so that the right order depends on the old and
 * new values: v1's memory limit against memsw, a cpu period against its quota (here and in the
 * parent's budget: a shorter period first can be refused while the quota is unlimited). */
static bool partners(const char *a, const char *b)
{
  static const char *const pairs[][2] = {
      {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"},
      {"cpu.cfs_period_us", "cpu.cfs_quota_us"},
      {"cpu.rt_period_us", "cpu.rt_runtime_us"},
  };
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
    if ((strcmp(a, pairs[i][0]) == 0 && strcmp(b, pairs[i][1]) == 0) ||
        (strcmp(a, pairs[i][1]) == 0 && strcmp(b, pairs[i][0]) == 0))
      return true;
  return false;
}

/* Every write, or (on a failure) none: each file's old text is read first and written back. */
static int write_all(struct plan *p, struct rrt_error *err)
{
  for (size_t i = 0; i < p->n; i++)
    p->w[i].old = rrt_cg_read(p->w[i].dir, p->w[i].file);
  for (size_t i = 0; i < p->n; i++) {
    struct write *w = &p->w[i];
    if (w->written)
      continue;
    struct rrt_error e = RRT_ERROR_INIT;
    if (rrt_cg_write(w->dir, w->file, w->value, &e) == 0) {
      w->written = true;
      continue;
    }
    bool retried = false;
    /* EINVAL: the partner this plan writes later may have to go first. */
    for (size_t j = i + 1; j < p->n && e.errnum == EINVAL && !retried; j++)
      if (!p->w[j].written && strcmp(p->w[j].dir, w->dir) == 0 && partners(w->file, p->w[j].file) &&
          rrt_cg_write(p->w[j].dir, p->w[j].file, p->w[j].value, NULL) == 0) {
        p->w[j].written = true;
        retried = rrt_cg_write(w->dir, w->file, w->value, NULL) == 0;
      }
    if (!retried) {
      undo(p);
      rrt_error_move(err, &e);
      return rrt_error_wrap(err, "%s", w->field);
    }
    w->written = true;
    rrt_error_clear(&e);
  }
  return 0;
}

int rrt_cgroup_update(const struct rrt_cgroup *cg, const char *resources_json, bool devices,
                      struct rrt_error *err)
{
  /* In a systemd scope, what systemd has properties for goes to it, the rest to cgroupfs. The
   * properties are set last, once every cgroupfs write is done: a failed write then changes no
   * property, and a refused property puts back what was written (all or nothing). */
  const char *whole = resources_json;
  cleanup_free char *rest = NULL;
  if (cg->unit && rrt_cg_systemd_update(cg, whole, false, &rest, err) < 0)
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
  if (p.problems && cg->limits_warn) {
    /* run.oci.rootlessrt.limits=warn: runc's rootless behaviour, what can be applied is. */
    rrt_warn("linux.resources: not applied (" RRT_LIMITS_ANNOTATION "=warn): %s", p.problems);
  } else if (p.problems) {
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
  if (cg->unit && rrt_cg_systemd_update(cg, whole, true, NULL, err) < 0) {
    undo(&p);
    goto out;
  }
  ret = 0;
out:
  plan_free(&p);
  json_object_put(res);
  return ret;
}
