/* limits.c: process.rlimits, oomScoreAdj, ioPriority, scheduler and linux.personality. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

static int apply_rlimits(const struct rrt_process *proc, struct rrt_error *err)
{
  for (size_t i = 0; i < proc->n_rlimits; i++) {
    const struct rrt_rlimit *rl = &proc->rlimits[i];
    const char *type = rl->type ? rl->type : "?";
    if (rl->soft > rl->hard)
      return rrt_error_set(err, 0, "process.rlimits[%zu] (%s): soft %llu above hard %llu", i, type,
                           (unsigned long long)rl->soft, (unsigned long long)rl->hard);
    /* uint64 max is RLIM_INFINITY on Linux, which is what "unlimited" means
     * in config.json too. */
    struct rlimit want = {.rlim_cur = (rlim_t)rl->soft, .rlim_max = (rlim_t)rl->hard};
    if (prlimit(0, (__rlimit_resource_t)rl->resource, &want, NULL) == 0)
      continue;
    int saved = errno;
    struct rlimit cur;
    if (saved == EPERM && prlimit(0, (__rlimit_resource_t)rl->resource, NULL, &cur) == 0 &&
        want.rlim_max > cur.rlim_max)
      return rrt_error_set(err, saved,
                           "process.rlimits[%zu] (%s): cannot raise hard limit above %llu", i, type,
                           (unsigned long long)cur.rlim_max);
    return rrt_error_set(err, saved, "process.rlimits[%zu] (%s): setrlimit soft %llu hard %llu", i,
                         type, (unsigned long long)rl->soft, (unsigned long long)rl->hard);
  }
  return 0;
}

/* Written by a process that is still dumpable (confine.h, rrt_oom_score_adj_apply): an undumpable
 * process's /proc/self files belong to root of the user namespace its memory was made in (the
 * runtime's), which the container's root is not, so the open would fail. */
static int apply_oom_score_adj(int value, struct rrt_error *err)
{
  if (value < -1000 || value > 1000)
    return rrt_error_set(err, 0, "process.oomScoreAdj: %d outside -1000..1000", value);
  cleanup_close int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return rrt_error_errno(err, "process.oomScoreAdj: open /proc/self/oom_score_adj");
  char buf[16];
  int len = snprintf(buf, sizeof(buf), "%d", value);
  if (rrt_write_all(fd, buf, (size_t)len) == 0)
    return 0;
  /* Lowering the score needs CAP_SYS_RESOURCE in the initial namespace,
   * which a rootless runtime never has: the container still runs. */
  if (errno == EACCES || errno == EPERM) {
    rrt_warn("process.oomScoreAdj: cannot set %d: %s", value, strerror(errno));
    return 0;
  }
  return rrt_error_errno(err, "process.oomScoreAdj: write %d", value);
}

int rrt_personality_apply(const struct rrt_personality *pers, struct rrt_error *err)
{
  if (!pers)
    return 0;
  unsigned long persona;
  if (pers->domain && strcmp(pers->domain, "LINUX") == 0)
    persona = PER_LINUX;
  else if (pers->domain && strcmp(pers->domain, "LINUX32") == 0)
    persona = PER_LINUX32;
  else
    return rrt_error_set(err, 0, "linux.personality.domain: unknown domain %s",
                         pers->domain ? pers->domain : "(null)");
  if (pers->flags.n > 0)
    return rrt_error_set(err, 0, "linux.personality.flags[0]: unsupported flag %s",
                         pers->flags.v[0]);
  if (personality(persona) < 0)
    return rrt_error_errno(err, "linux.personality: personality(%s)", pers->domain);
  return 0;
}

/* From linux/ioprio.h, which older header packages lack. */
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_WHO_PROCESS 1

static int apply_io_priority(const struct rrt_io_priority *io, struct rrt_error *err)
{
  int klass;
  if (io->klass && strcmp(io->klass, "IOPRIO_CLASS_RT") == 0)
    klass = 1;
  else if (io->klass && strcmp(io->klass, "IOPRIO_CLASS_BE") == 0)
    klass = 2;
  else if (io->klass && strcmp(io->klass, "IOPRIO_CLASS_IDLE") == 0)
    klass = 3;
  else
    return rrt_error_set(err, 0, "process.ioPriority.class: unknown class %s",
                         io->klass ? io->klass : "(null)");
  if (io->priority < 0 || io->priority > 7)
    return rrt_error_set(err, 0, "process.ioPriority.priority: %d outside 0..7", io->priority);
  /* Set on this process only: children inherit it across fork, so the whole
   * container gets it, while IOPRIO_WHO_PGRP could reach runtime processes
   * that share the process group. */
  if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, (klass << IOPRIO_CLASS_SHIFT) | io->priority) <
      0)
    return rrt_error_errno(err, "process.ioPriority (%s, %d): ioprio_set", io->klass, io->priority);
  return 0;
}

/* struct sched_attr of sched_setattr(2); glibc has no wrapper or type. */
struct sched_attr_v1 {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

static int sched_policy(const char *name, uint32_t *out)
{
  static const struct {
    const char *name;
    uint32_t value;
  } policies[] = {
      {"SCHED_OTHER", 0}, {"SCHED_FIFO", 1}, {"SCHED_RR", 2},       {"SCHED_BATCH", 3},
      {"SCHED_ISO", 4},   {"SCHED_IDLE", 5}, {"SCHED_DEADLINE", 6},
  };
  for (size_t i = 0; name && i < sizeof(policies) / sizeof(policies[0]); i++) {
    if (strcmp(name, policies[i].name) == 0) {
      *out = policies[i].value;
      return 0;
    }
  }
  return -1;
}

static int sched_flag(const char *name, uint64_t *out)
{
  static const struct {
    const char *name;
    uint64_t value;
  } flags[] = {
      {"SCHED_FLAG_RESET_ON_FORK", 0x01},  {"SCHED_FLAG_RECLAIM", 0x02},
      {"SCHED_FLAG_DL_OVERRUN", 0x04},     {"SCHED_FLAG_KEEP_POLICY", 0x08},
      {"SCHED_FLAG_KEEP_PARAMS", 0x10},    {"SCHED_FLAG_UTIL_CLAMP_MIN", 0x20},
      {"SCHED_FLAG_UTIL_CLAMP_MAX", 0x40},
  };
  for (size_t i = 0; name && i < sizeof(flags) / sizeof(flags[0]); i++) {
    if (strcmp(name, flags[i].name) == 0) {
      *out = flags[i].value;
      return 0;
    }
  }
  return -1;
}

static int apply_scheduler(const struct rrt_scheduler *s, struct rrt_error *err)
{
  struct sched_attr_v1 attr = {.size = sizeof(attr)};
  if (sched_policy(s->policy, &attr.sched_policy) < 0)
    return rrt_error_set(err, 0, "process.scheduler.policy: unknown policy %s",
                         s->policy ? s->policy : "(null)");
  for (size_t i = 0; i < s->flags.n; i++) {
    uint64_t f;
    if (sched_flag(s->flags.v[i], &f) < 0)
      return rrt_error_set(err, 0, "process.scheduler.flags[%zu]: unknown flag %s", i,
                           s->flags.v[i]);
    attr.sched_flags |= f;
  }
  attr.sched_nice = s->nice;
  attr.sched_priority = (uint32_t)s->priority;
  attr.sched_runtime = s->runtime;
  attr.sched_deadline = s->deadline;
  attr.sched_period = s->period;
  if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0)
    return rrt_error_errno(err, "process.scheduler (%s, priority %d, nice %d): sched_setattr",
                           s->policy, s->priority, s->nice);
  return 0;
}

int rrt_oom_score_adj_apply(const struct rrt_process *proc, struct rrt_error *err)
{
  if (!proc || !proc->has_oom_score_adj)
    return 0;
  return apply_oom_score_adj(proc->oom_score_adj, err);
}

int rrt_process_limits_apply(const struct rrt_process *proc, struct rrt_error *err)
{
  if (!proc)
    return 0;
  if (apply_rlimits(proc, err) < 0)
    return -1;
  if (proc->io_priority.present && apply_io_priority(&proc->io_priority, err) < 0)
    return -1;
  if (proc->scheduler.present && apply_scheduler(&proc->scheduler, err) < 0)
    return -1;
  return 0;
}
