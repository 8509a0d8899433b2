/* cmd_update.c: `update [-r|--resources FILE|-] [runc's limit flags] ID`: resource limits through
 * the container's cgroup, when it has a delegated one. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/cmd.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/log.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

/* runc's update flags, each one linux.resources member. */
enum kind { K_INT, K_BYTES, K_STRING, K_IGNORED, K_REFUSED };
static const struct flag {
  const char *name;
  const char *object, *member; /* linux.resources.<object>.<member> */
  enum kind kind;
} flags[] = {
    {"blkio-weight", "blockIO", "weight", K_INT},
    {"cpu-period", "cpu", "period", K_INT},
    {"cpu-quota", "cpu", "quota", K_INT},
    {"cpu-share", "cpu", "shares", K_INT},
    {"cpu-rt-period", "cpu", "realtimePeriod", K_INT},
    {"cpu-rt-runtime", "cpu", "realtimeRuntime", K_INT},
    {"cpuset-cpus", "cpu", "cpus", K_STRING},
    {"cpuset-mems", "cpu", "mems", K_STRING},
    {"memory", "memory", "limit", K_BYTES},
    {"memory-reservation", "memory", "reservation", K_BYTES},
    {"memory-swap", "memory", "swap", K_BYTES},
    {"pids-limit", "pids", "limit", K_INT},
    {"kernel-memory", "memory", "kernel", K_IGNORED},
    {"kernel-memory-tcp", "memory", "kernelTCP", K_IGNORED},
    {"l3-cache-schema", NULL, NULL, K_REFUSED},
    {"mem-bw-schema", NULL, NULL, K_REFUSED},
};
#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))
#define FLAG_BASE 0x100

struct update_args {
  const char *file;
  json_object *res; /* what the flags ask for */
  const char *first_flag;
  bool ignored_flag; /* a deprecated flag that asks for nothing */
};

/* A size as runc's --memory takes it: a number with an optional k, m, g, t or p (powers of
 * 1024, an optional trailing b), or -1 for unlimited. */
static int parse_bytes(const char *s, long long *out)
{
  if (strcmp(s, "-1") == 0) {
    *out = -1;
    return 0;
  }
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || !isdigit((unsigned char)*s))
    return -1;
  static const char units[] = "kmgtp";
  const char *u = *end ? strchr(units, tolower((unsigned char)*end)) : NULL;
  int shift = 0;
  if (*end && u) {
    shift = 10 * (int)(u - units + 1);
    end++;
  }
  if (*end == 'b' || *end == 'B')
    end++;
  if (*end || (shift && v > (0x7fffffffffffffffULL >> shift)))
    return -1;
  *out = (long long)(v << shift);
  return 0;
}

static int set_flag(const struct flag *f, const char *value, struct update_args *a,
                    struct rrt_error *err)
{
  if (f->kind == K_REFUSED)
    return rrt_error_msgf(err, ENOTSUP, "update: --%s: Intel RDT is not supported", f->name);
  if (f->kind == K_IGNORED) {
    rrt_warn("update: --%s: kernel memory limits are deprecated (config-linux.md) and ignored",
             f->name);
    a->ignored_flag = true;
    return 0;
  }
  json_object *v = NULL;
  long long n = 0;
  if (f->kind == K_STRING) {
    v = json_object_new_string(value);
  } else if (f->kind == K_BYTES) {
    if (parse_bytes(value, &n) < 0)
      return rrt_error_msgf(err, EINVAL,
                            "update: --%s \"%s\": expected bytes (a number, optionally with k, m, "
                            "g or t) or -1",
                            f->name, value);
    v = json_object_new_int64(n);
  } else {
    if (rrt_parse_i64(value, &n) < 0)
      return rrt_error_msgf(err, EINVAL, "update: --%s \"%s\": expected an integer", f->name,
                            value);
    v = json_object_new_int64(n);
  }
  json_object *o = NULL;
  if (!json_object_object_get_ex(a->res, f->object, &o)) {
    o = json_object_new_object();
    json_object_object_add(a->res, f->object, o);
  }
  json_object_object_add(o, f->member, v);
  if (!a->first_flag)
    a->first_flag = f->name;
  return 0;
}

static int update_flag(int c, void *arg, struct rrt_error *err)
{
  struct update_args *a = arg;
  if (c == 'r')
    a->file = optarg;
  else if (c >= FLAG_BASE && c < FLAG_BASE + (int)N_FLAGS)
    return set_flag(&flags[c - FLAG_BASE], optarg, a, err);
  return 0;
}

/* The resources JSON: --resources' file (or stdin), or the flags' object. */
static int resources_text(struct update_args *a, char **text, struct rrt_error *err)
{
  if (a->file && a->first_flag)
    return rrt_error_msgf(err, EINVAL,
                          "update: --resources and --%s cannot be combined (give every limit in "
                          "the file, or every limit as a flag)",
                          a->first_flag);
  if (a->first_flag) {
    *text = xstrdup(json_object_to_json_string_ext(a->res, JSON_C_TO_STRING_PLAIN));
    return 0;
  }
  if (!a->file && !a->ignored_flag)
    return rrt_error_msgf(err, EINVAL,
                          "update: --resources FILE (or - for stdin), or a limit flag (--memory, "
                          "--cpu-quota, ...), is required");
  if (!a->file) {
    *text = xstrdup("{}"); /* only ignored flags */
    return 0;
  }
  if (strcmp(a->file, "-") == 0 ? rrt_read_fd(STDIN_FILENO, text, NULL, err) < 0
                                : rrt_read_file(a->file, text, NULL, err) < 0)
    return rrt_error_wrap(err, "update: --resources");
  return 0;
}

static int apply(const struct rrt_global *g, const char *id, const char *text,
                 struct rrt_error *err)
{
  cleanup_cgroup_target struct rrt_cmd_cgroup_target t = RRT_CMD_CGROUP_TARGET_INIT;
  if (rrt_cmd_cgroup_target_load(g, id, &t, err) < 0)
    return -1;
  if (strcmp(rrt_state_status(&t.l.st), "stopped") == 0)
    return rrt_error_msgf(err, ESRCH, "update: container \"%s\": container not running", id);
  /* Nothing is written unless everything can be: the error names what cannot. Device rules
   * only as real root, who set them at create. */
  json_object *ann = t.l.st.annotations_json ? json_tokener_parse(t.l.st.annotations_json) : NULL;
  json_object *mode = NULL;
  bool have = ann && json_object_object_get_ex(ann, RRT_LIMITS_ANNOTATION, &mode);
  int r =
      rrt_cgroup_limits_mode(have ? json_object_get_string(mode) : NULL, &t.cg.limits_warn, err);
  json_object_put(ann);
  if (r < 0)
    return -1;
  bool devices = rrt_host_privileged() && rrt_cgroup_has_device_rules(text);
  if (rrt_cgroup_update(&t.cg, text, devices, err) < 0)
    return rrt_error_wrap(err, "update: container \"%s\"", id);
  return 0;
}

int rrt_cmd_update(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  struct option opts[N_FLAGS + 3];
  for (size_t i = 0; i < N_FLAGS; i++)
    opts[i] = (struct option){flags[i].name, required_argument, NULL, FLAG_BASE + (int)i};
  opts[N_FLAGS] = (struct option){"resources", required_argument, NULL, 'r'};
  opts[N_FLAGS + 1] = (struct option){"help", no_argument, NULL, 'h'};
  opts[N_FLAGS + 2] = (struct option){NULL, 0, NULL, 0};
  struct update_args a = {.res = json_object_new_object()};
  bool help = false;
  const char *id = NULL;
  cleanup_free char *text = NULL;
  int ret = -1;
  /* No "+": the flags may follow the id too (`update ID --memory 1g`), as runc takes them. */
  if (rrt_cmd_parse_flags(argc, argv, "r:h", opts, update_flag, &a, &help, err) < 0)
    goto out;
  if (help) {
    rrt_cmd_usage("update");
    ret = 0;
    goto out;
  }
  if (rrt_cmd_one_id(argc, argv, optind, &id, err) < 0 || resources_text(&a, &text, err) < 0)
    goto out;
  ret = apply(g, id, text, err);
out:
  json_object_put(a.res);
  return ret;
}
