/* stats.c: a container's resource usage from its cgroup files, in the shape of runc's `events`
 * stats (cpu, memory, pids, blkio, hugetlb), and its OOM kill count for the oom events. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/util.h"

/* A number file ("max" is no limit: UINT64_MAX, as runc reports it); 0 when absent. */
static uint64_t num(const char *dir, const char *file)
{
  cleanup_free char *t = dir ? rrt_cg_read(dir, file) : NULL;
  if (!t)
    return 0;
  if (strcmp(t, "max") == 0)
    return UINT64_MAX;
  return strtoull(t, NULL, 10);
}

/* "key value" lines: the value of key, 0 when absent. */
static uint64_t keyed(const char *text, const char *key)
{
  size_t n = strlen(key);
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (strncmp(p, key, n) == 0 && p[n] == ' ')
      return strtoull(p + n + 1, NULL, 10);
  return 0;
}

static void add_u64(json_object *o, const char *key, uint64_t v)
{
  json_object_object_add(o, key, json_object_new_uint64(v));
}

/* runc leaves zero counters out of the usage and throttling objects (omitempty). */
static void add_nonzero(json_object *o, const char *key, uint64_t v)
{
  if (v)
    add_u64(o, key, v);
}

/* The v1 controller's directory when the container has one there, else the v2 directory. */
static const char *v1_or_v2(const struct rrt_cgroup *cg, enum rrt_cg_v1 c, bool *v1)
{
  *v1 = cg->v1[c] != NULL;
  return cg->v1[c] ? cg->v1[c] : cg->v2;
}

static json_object *cpu_stats(const struct rrt_cgroup *cg)
{
  json_object *cpu = json_object_new_object(), *usage = json_object_new_object();
  json_object *thr = json_object_new_object();
  bool v1;
  const char *dir = v1_or_v2(cg, RRT_CG_CPUACCT, &v1);
  if (v1) {
    add_nonzero(usage, "total", num(dir, "cpuacct.usage"));
    cleanup_free char *percpu = rrt_cg_read(dir, "cpuacct.usage_percpu");
    if (percpu && *percpu) {
      json_object *a = json_object_new_array();
      char *save = NULL;
      for (char *w = strtok_r(percpu, " ", &save); w; w = strtok_r(NULL, " ", &save))
        json_object_array_add(a, json_object_new_uint64(strtoull(w, NULL, 10)));
      json_object_object_add(usage, "percpu", a);
    }
    /* cpuacct.stat counts clock ticks; runc reports nanoseconds. */
    cleanup_free char *st = rrt_cg_read(dir, "cpuacct.stat");
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t ns = 1000000000ULL / (uint64_t)(hz > 0 ? hz : 100);
    add_u64(usage, "kernel", keyed(st, "system") * ns);
    add_u64(usage, "user", keyed(st, "user") * ns);
  } else {
    cleanup_free char *st = dir ? rrt_cg_read(dir, "cpu.stat") : NULL;
    add_nonzero(usage, "total", keyed(st, "usage_usec") * 1000);
    add_u64(usage, "kernel", keyed(st, "system_usec") * 1000);
    add_u64(usage, "user", keyed(st, "user_usec") * 1000);
  }
  dir = v1_or_v2(cg, RRT_CG_CPU, &v1);
  cleanup_free char *st = dir ? rrt_cg_read(dir, "cpu.stat") : NULL;
  add_nonzero(thr, "periods", keyed(st, "nr_periods"));
  add_nonzero(thr, "throttledPeriods", keyed(st, "nr_throttled"));
  add_nonzero(thr, "throttledTime",
              v1 ? keyed(st, "throttled_time") : keyed(st, "throttled_usec") * 1000);
  json_object_object_add(cpu, "usage", usage);
  json_object_object_add(cpu, "throttling", thr);
  return cpu;
}

static json_object *mem_entry(const char *dir, const char *prefix, bool v1)
{
  json_object *e = json_object_new_object();
  char f[64];
  if (v1) {
    snprintf(f, sizeof(f), "%s.limit_in_bytes", prefix);
    add_u64(e, "limit", num(dir, f));
    snprintf(f, sizeof(f), "%s.usage_in_bytes", prefix);
    add_nonzero(e, "usage", num(dir, f));
    snprintf(f, sizeof(f), "%s.max_usage_in_bytes", prefix);
    add_nonzero(e, "max", num(dir, f));
    snprintf(f, sizeof(f), "%s.failcnt", prefix);
    add_u64(e, "failcnt", num(dir, f));
  } else {
    snprintf(f, sizeof(f), "%s.max", prefix);
    add_u64(e, "limit", num(dir, f));
    snprintf(f, sizeof(f), "%s.current", prefix);
    add_nonzero(e, "usage", num(dir, f));
    snprintf(f, sizeof(f), "%s.peak", prefix);
    add_nonzero(e, "max", num(dir, f));
    add_u64(e, "failcnt", 0);
  }
  return e;
}

static json_object *memory_stats(const struct rrt_cgroup *cg)
{
  json_object *mem = json_object_new_object();
  bool v1;
  const char *dir = v1_or_v2(cg, RRT_CG_MEMORY, &v1);
  if (!dir)
    return mem;
  cleanup_free char *st = rrt_cg_read(dir, "memory.stat");
  add_nonzero(mem, "cache", keyed(st, v1 ? "cache" : "file"));
  json_object_object_add(mem, "usage", mem_entry(dir, "memory", v1));
  json_object_object_add(mem, "swap", mem_entry(dir, v1 ? "memory.memsw" : "memory.swap", v1));
  if (v1) {
    json_object_object_add(mem, "kernel", mem_entry(dir, "memory.kmem", true));
    json_object_object_add(mem, "kernelTCP", mem_entry(dir, "memory.kmem.tcp", true));
  }
  if (st && *st) {
    json_object *raw = json_object_new_object();
    char *save = NULL;
    for (char *line = strtok_r(st, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      char *sp = strchr(line, ' ');
      if (!sp)
        continue;
      *sp = '\0';
      add_u64(raw, line, strtoull(sp + 1, NULL, 10));
    }
    json_object_object_add(mem, "raw", raw);
  }
  return mem;
}

static json_object *pids_stats(const struct rrt_cgroup *cg)
{
  json_object *p = json_object_new_object();
  bool v1;
  const char *dir = v1_or_v2(cg, RRT_CG_PIDS, &v1);
  add_nonzero(p, "current", num(dir, "pids.current"));
  uint64_t max = num(dir, "pids.max");
  add_nonzero(p, "limit", max == UINT64_MAX ? 0 : max);
  return p;
}

json_object *rrt_cgroup_stats(const struct rrt_cgroup *cg)
{
  json_object *s = json_object_new_object();
  json_object_object_add(s, "cpu", cpu_stats(cg));
  json_object_object_add(s, "memory", memory_stats(cg));
  json_object_object_add(s, "pids", pids_stats(cg));
  json_object_object_add(s, "blkio", json_object_new_object());
  json_object_object_add(s, "hugetlb", json_object_new_object());
  return s;
}

uint64_t rrt_cgroup_oom_count(const struct rrt_cgroup *cg)
{
  uint64_t n = 0;
  cleanup_free char *v2 = cg->v2 ? rrt_cg_read(cg->v2, "memory.events") : NULL;
  cleanup_free char *v1 =
      cg->v1[RRT_CG_MEMORY] ? rrt_cg_read(cg->v1[RRT_CG_MEMORY], "memory.oom_control") : NULL;
  n += keyed(v2, "oom_kill");
  n += keyed(v1, "oom_kill");
  return n;
}
