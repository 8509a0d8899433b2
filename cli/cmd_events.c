/* cmd_events.c: `events [--interval D] [--stats] ID`: the container's resource usage and OOM
 * kills as JSON lines, runc's format, until its cgroups are gone. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/cmd.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/util.h"

struct events_flags {
  long long interval_ns;
  bool stats;
};

/* A Go duration as runc takes it: one or more NUMBER UNIT ("5s", "100ms", "1m30s", "1.5s"). */
static int parse_duration(const char *s, long long *ns, struct rrt_error *err)
{
  static const struct {
    const char *unit;
    double ns;
  } units[] = {{"ns", 1},  {"us", 1e3}, {"µs", 1e3},  {"ms", 1e6},
               {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
  double total = 0;
  const char *p = s;
  if (!*p)
    return rrt_error_msgf(err, EINVAL, "events: --interval \"\": not a duration (e.g. 5s, 100ms)");
  while (*p) {
    char *end = NULL;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno || v < 0 || *p == '-' || *p == '+')
      return rrt_error_msgf(err, EINVAL,
                            "events: --interval \"%s\": not a duration (e.g. 5s, 100ms)", s);
    size_t best = 0, len = 0;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
      size_t n = strlen(units[i].unit);
      if (strncmp(end, units[i].unit, n) == 0 && n > len) {
        best = i;
        len = n;
      }
    }
    if (!len)
      return rrt_error_msgf(
          err, EINVAL, "events: --interval \"%s\": a number needs a unit (ns, us, ms, s, m, h)", s);
    total += v * units[best].ns;
    p = end + len;
  }
  if (total < 1 || total > 9.2e18)
    return rrt_error_msgf(err, EINVAL, "events: --interval \"%s\": must be greater than 0", s);
  *ns = (long long)(total + 0.5);
  return 0;
}

static int events_flag(int c, void *arg, struct rrt_error *err)
{
  struct events_flags *f = arg;
  if (c == 'i')
    return parse_duration(optarg, &f->interval_ns, err);
  if (c == 's')
    f->stats = true;
  return 0;
}

static void emit(const char *type, const char *id, json_object *data)
{
  json_object *e = json_object_new_object();
  json_object_object_add(e, "type", json_object_new_string(type));
  json_object_object_add(e, "id", json_object_new_string(id));
  if (data)
    json_object_object_add(e, "data", data);
  printf("%s\n", json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
  fflush(stdout);
  json_object_put(e);
}

static long long now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(long long ns)
{
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  nanosleep(&ts, NULL);
}

/* Stats every interval (the first after one, as runc), an oom event for each new OOM kill, both
 * looked at every 100 ms at most; ends once the container's cgroups are gone (it was deleted). */
static int watch(const char *id, const struct rrt_cgroup *cg, long long interval)
{
  uint64_t ooms = rrt_cgroup_oom_count(cg);
  long long tick = interval < 100000000LL ? interval : 100000000LL;
  long long next = now_ns() + interval;
  for (;;) {
    sleep_ns(tick);
    if (!rrt_cgroup_exists(cg))
      return 0;
    uint64_t n = rrt_cgroup_oom_count(cg);
    for (; ooms < n; ooms++)
      emit("oom", id, NULL);
    if (now_ns() >= next) {
      emit("stats", id, rrt_cgroup_stats(cg));
      next += interval;
    }
  }
}

int rrt_cmd_events(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {{"interval", required_argument, NULL, 'i'},
                                       {"stats", no_argument, NULL, 's'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  struct events_flags f = {.interval_ns = 5000000000LL};
  bool help = false;
  const char *id = NULL;
  if (rrt_cmd_parse_flags(argc, argv, "+h", opts, events_flag, &f, &help, err) < 0)
    return -1;
  if (help) {
    rrt_cmd_usage("events");
    return 0;
  }
  if (rrt_cmd_one_id(argc, argv, optind, &id, err) < 0)
    return -1;
  struct rrt_live l;
  if (rrt_live_load(g, id, false, false, false, &l, err) < 0)
    return -1;
  struct rrt_cgroup cg;
  rrt_cgroup_load(&l.st, &cg);
  int ret = -1;
  if (strcmp(rrt_state_status(&l.st), "stopped") == 0)
    rrt_error_msgf(err, ESRCH, "events: container \"%s\" is not running", id);
  else if (!rrt_cgroup_exists(&cg))
    rrt_error_msgf(err, ENOENT,
                   "events: container \"%s\" has no cgroup: no statistics to report (see "
                   "`rootlessrt check` for a delegated cgroup)",
                   id);
  else if (f.stats) {
    emit("stats", id, rrt_cgroup_stats(&cg));
    ret = 0;
  } else {
    ret = watch(id, &cg, f.interval_ns);
  }
  rrt_cgroup_free(&cg);
  rrt_live_free(&l);
  return ret;
}
