/* process.c: config.json's process: user, capabilities, rlimits, I/O priority, scheduler. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "internal.h"
#include "rootlessrt/util.h"

static const char *const sched_flags[] = {"SCHED_FLAG_RESET_ON_FORK",  "SCHED_FLAG_RECLAIM",
                                          "SCHED_FLAG_DL_OVERRUN",     "SCHED_FLAG_KEEP_POLICY",
                                          "SCHED_FLAG_KEEP_PARAMS",    "SCHED_FLAG_UTIL_CLAMP_MIN",
                                          "SCHED_FLAG_UTIL_CLAMP_MAX", NULL};

static const char *const sched_policies[] = {"SCHED_OTHER",    "SCHED_FIFO", "SCHED_RR",
                                             "SCHED_BATCH",    "SCHED_ISO",  "SCHED_IDLE",
                                             "SCHED_DEADLINE", NULL};

static const char *const ioprio_classes[] = {"IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE",
                                             "IOPRIO_CLASS_IDLE", NULL};

#define RL(x)                                                                                      \
  {                                                                                                \
    "RLIMIT_" #x, RLIMIT_##x                                                                       \
  }
static const struct {
  const char *name;
  int resource;
} rlimit_table[] = {
    RL(AS),   RL(CORE),   RL(CPU),   RL(DATA), RL(FSIZE),  RL(LOCKS),  RL(MEMLOCK),    RL(MSGQUEUE),
    RL(NICE), RL(NOFILE), RL(NPROC), RL(RSS),  RL(RTPRIO), RL(RTTIME), RL(SIGPENDING), RL(STACK),
};
#undef RL

/* process                                                                                     */

static int parse_user(json_object *proc, struct rrt_user *u, struct rrt_error *err)
{
  json_object *obj, *gids;
  cleanup_free char *path = NULL, *gpath = NULL;
  if (spec_get_typed(proc, "process", "user", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0; /* root in the container, as runc and crun default */
  if (spec_get_u32(obj, path, "uid", F_REQ, NULL, &u->uid, err) < 0 ||
      spec_get_u32(obj, path, "gid", F_REQ, NULL, &u->gid, err) < 0 ||
      spec_get_u32(obj, path, "umask", 0, &u->has_umask, &u->umask, err) < 0 ||
      spec_get_str(obj, path, "username", 0, &u->username, err) < 0)
    return -1;
  if (u->has_umask && u->umask > 0777)
    return rrt_error_set(err, 0, "%s.umask: must be at most 0777 (511), got %" PRIu32, path,
                         u->umask);
  if (spec_get_typed(obj, path, "additionalGids", 0, json_type_array, &gids, &gpath, err) < 0)
    return -1;
  if (!gids)
    return 0;
  u->n_additional_gids = json_object_array_length(gids);
  u->additional_gids = xcalloc(u->n_additional_gids, sizeof(uint32_t));
  for (size_t i = 0; i < u->n_additional_gids; i++) {
    cleanup_free char *ip = spec_idx_path(gpath, i);
    uint64_t g;
    if (spec_want_uint(json_object_array_get_idx(gids, i), ip, UINT32_MAX, &g, err) < 0)
      return -1;
    u->additional_gids[i] = (uint32_t)g;
  }
  return 0;
}

static int parse_caps(json_object *proc, struct rrt_process *p, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  if (spec_get_typed(proc, "process", "capabilities", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  /* Names are not checked here: config.md wants unknown capabilities logged, not fatal. */
  p->capabilities = xzalloc(sizeof *p->capabilities);
  struct rrt_caps *c = p->capabilities;
  if (spec_get_strv(obj, path, "bounding", 0, &c->bounding, err) < 0 ||
      spec_get_strv(obj, path, "effective", 0, &c->effective, err) < 0 ||
      spec_get_strv(obj, path, "permitted", 0, &c->permitted, err) < 0 ||
      spec_get_strv(obj, path, "inheritable", 0, &c->inheritable, err) < 0 ||
      spec_get_strv(obj, path, "ambient", 0, &c->ambient, err) < 0)
    return -1;
  return 0;
}

static int parse_rlimit(json_object *e, const char *ip, struct rrt_rlimit *rl,
                        struct rrt_error *err)
{
  if (spec_expect(e, json_type_object, ip, "object", err) < 0 ||
      spec_get_str(e, ip, "type", F_REQ, &rl->type, err) < 0 ||
      spec_get_uint(e, ip, "soft", F_REQ, UINT64_MAX, NULL, &rl->soft, err) < 0 ||
      spec_get_uint(e, ip, "hard", F_REQ, UINT64_MAX, NULL, &rl->hard, err) < 0)
    return -1;
  rl->resource = -1;
  for (size_t k = 0; k < sizeof rlimit_table / sizeof rlimit_table[0]; k++)
    if (strcmp(rlimit_table[k].name, rl->type) == 0)
      rl->resource = rlimit_table[k].resource;
  if (rl->resource < 0)
    return rrt_error_set(err, 0, "%s.type: unknown resource \"%s\"", ip, rl->type);
  /* setrlimit(2) refuses soft > hard with a bare EINVAL; say which entry here. */
  if (rl->soft > rl->hard)
    return rrt_error_set(err, 0, "%s: soft limit %" PRIu64 " exceeds hard limit %" PRIu64, ip,
                         rl->soft, rl->hard);
  return 0;
}

static int parse_rlimits(json_object *proc, struct rrt_process *p, struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *path = NULL;
  if (spec_get_typed(proc, "process", "rlimits", 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  p->n_rlimits = json_object_array_length(arr);
  p->rlimits = xcalloc(p->n_rlimits, sizeof *p->rlimits);
  for (size_t i = 0; i < p->n_rlimits; i++) {
    cleanup_free char *ip = spec_idx_path(path, i);
    if (parse_rlimit(json_object_array_get_idx(arr, i), ip, &p->rlimits[i], err) < 0)
      return -1;
    for (size_t j = 0; j < i; j++)
      if (p->rlimits[j].resource == p->rlimits[i].resource)
        return rrt_error_set(err, 0, "%s.type: duplicate \"%s\"", ip, p->rlimits[i].type);
  }
  return 0;
}

static int parse_io_priority(json_object *proc, struct rrt_io_priority *io, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL, *cpath = NULL;
  if (spec_get_typed(proc, "process", "ioPriority", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  io->present = true;
  cpath = spec_key_path(path, "class");
  /* ioprio_set(2) levels run 0 (highest) to 7 (lowest). */
  if (spec_get_str(obj, path, "class", F_REQ, &io->klass, err) < 0 ||
      spec_want_enum(io->klass, ioprio_classes, cpath, "class", err) < 0 ||
      spec_get_i32(obj, path, "priority", 0, 7, NULL, &io->priority, err) < 0)
    return -1;
  return 0;
}

static int parse_scheduler(json_object *proc, struct rrt_scheduler *s, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL, *ppath = NULL, *fpath = NULL;
  if (spec_get_typed(proc, "process", "scheduler", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  s->present = true;
  ppath = spec_key_path(path, "policy");
  fpath = spec_key_path(path, "flags");
  if (spec_get_str(obj, path, "policy", F_REQ, &s->policy, err) < 0 ||
      spec_want_enum(s->policy, sched_policies, ppath, "policy", err) < 0 ||
      spec_get_i32(obj, path, "nice", INT32_MIN, INT32_MAX, NULL, &s->nice, err) < 0 ||
      spec_get_i32(obj, path, "priority", INT32_MIN, INT32_MAX, NULL, &s->priority, err) < 0 ||
      spec_get_strv(obj, path, "flags", 0, &s->flags, err) < 0 ||
      spec_want_enum_strv(&s->flags, sched_flags, fpath, "flag", err) < 0 ||
      spec_get_uint(obj, path, "runtime", 0, UINT64_MAX, NULL, &s->runtime, err) < 0 ||
      spec_get_uint(obj, path, "deadline", 0, UINT64_MAX, NULL, &s->deadline, err) < 0 ||
      spec_get_uint(obj, path, "period", 0, UINT64_MAX, NULL, &s->period, err) < 0)
    return -1;
  return 0;
}

static int parse_console_size(json_object *proc, struct rrt_process *p, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  if (spec_get_typed(proc, "process", "consoleSize", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  p->has_console_size = true;
  if (spec_get_u32(obj, path, "height", F_REQ, NULL, &p->console_height, err) < 0 ||
      spec_get_u32(obj, path, "width", F_REQ, NULL, &p->console_width, err) < 0)
    return -1;
  return 0;
}

int spec_parse_process(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  if (spec_get_typed(doc, "", "process", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  struct rrt_process *p = spec->process = xzalloc(sizeof *spec->process);
  int64_t oom = 0;
  if (spec_get_bool(obj, path, "terminal", &p->terminal, err) < 0 ||
      parse_console_size(obj, p, err) < 0 || parse_user(obj, &p->user, err) < 0 ||
      spec_get_strv(obj, path, "args", F_REQ | F_NONEMPTY, &p->args, err) < 0 ||
      spec_get_str(obj, path, "commandLine", 0, &p->command_line, err) < 0 ||
      spec_get_strv(obj, path, "env", 0, &p->env, err) < 0 ||
      spec_get_str(obj, path, "cwd", F_REQ | F_ABS, &p->cwd, err) < 0 ||
      parse_caps(obj, p, err) < 0 || parse_rlimits(obj, p, err) < 0 ||
      spec_get_bool(obj, path, "noNewPrivileges", &p->no_new_privileges, err) < 0 ||
      spec_get_str(obj, path, "apparmorProfile", 0, &p->apparmor_profile, err) < 0 ||
      spec_get_int(obj, path, "oomScoreAdj", 0, -1000, 1000, &p->has_oom_score_adj, &oom, err) <
          0 ||
      spec_get_str(obj, path, "selinuxLabel", 0, &p->selinux_label, err) < 0 ||
      parse_io_priority(obj, &p->io_priority, err) < 0 ||
      parse_scheduler(obj, &p->scheduler, err) < 0)
    return -1;
  p->oom_score_adj = (int)oom;
  return 0;
}
