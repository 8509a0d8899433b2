/* rootlessrt-systemd: the systemd cgroup driver's D-Bus client, a separate program linked with
 * libsystemd (sd-bus). rootlessrt is a static binary and Debian ships no static libsystemd, so
 * the runtime execs this only when --systemd-cgroup is used, as it does rootlessrt-net.
 *
 *   rootlessrt-systemd [--system] start UNIT SLICE PID [NAME=VALUE...]
 *       a transient scope UNIT in SLICE holding PID, Delegate=yes and the properties; waits for
 *       the job and prints the scope's ControlGroup
 *   rootlessrt-systemd [--system] set UNIT NAME=VALUE...    SetUnitProperties (runtime)
 *   rootlessrt-systemd [--system] stop UNIT                 StopUnit, waits; gone already is fine
 *
 * The user bus is the caller's (DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus), --system
 * the system bus. Exit status: 0 done, 1 failed (the reason on stderr), 3 no bus to talk to. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>

#define DEST "org.freedesktop.systemd1"
#define PATH "/org/freedesktop/systemd1"
#define MANAGER "org.freedesktop.systemd1.Manager"
#define EXIT_NO_BUS 3

/* Every reply, error and message is released on every path (the helper is LSan clean). */
#define cleanup_bus_error __attribute__((cleanup(sd_bus_error_free)))
#define cleanup_bus_msg __attribute__((cleanup(sd_bus_message_unrefp)))

static int fail(const char *what, int r, const sd_bus_error *e)
{
  fprintf(stderr, "rootlessrt-systemd: %s: %s\n", what,
          e && sd_bus_error_is_set(e) ? e->message : strerror(-r));
  return 1;
}

/* ---------------------------------------------------------------- properties */

/* "0-3,5" -> the bitmask systemd's AllowedCPUs and AllowedMemoryNodes take (byte i, bit j:
 * cpu 8i+j). */
static int cpu_mask(const char *list, uint8_t *mask, size_t *len)
{
  *len = 0;
  memset(mask, 0, 1024);
  for (const char *p = list; *p;) {
    char *end;
    unsigned long a = strtoul(p, &end, 10), b = a;
    if (end == p)
      return -1;
    if (*end == '-') {
      p = end + 1;
      b = strtoul(p, &end, 10);
      if (end == p || b < a)
        return -1;
    }
    if (b >= 8192)
      return -1;
    for (unsigned long c = a; c <= b; c++) {
      mask[c / 8] |= (uint8_t)(1u << (c % 8));
      if (c / 8 + 1 > *len)
        *len = c / 8 + 1;
    }
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      return -1;
  }
  return 0;
}

/* NAME=VALUE with the type systemd gives NAME: "t" numbers ("max": infinity), "ay" cpu lists. */
static int append_prop(sd_bus_message *m, const char *arg)
{
  static const char *const u64[] = {"MemoryMax",          "MemoryHigh",         "MemoryLow",
                                    "MemorySwapMax",      "TasksMax",           "CPUWeight",
                                    "CPUQuotaPerSecUSec", "CPUQuotaPeriodUSec", "IOWeight",
                                    "MemoryMin",          "StartupCPUWeight",   NULL};
  const char *eq = strchr(arg, '=');
  if (!eq)
    return -EINVAL;
  char name[64];
  size_t n = (size_t)(eq - arg);
  if (n >= sizeof(name))
    return -EINVAL;
  memcpy(name, arg, n);
  name[n] = '\0';
  const char *v = eq + 1;
  for (size_t i = 0; u64[i]; i++)
    if (strcmp(u64[i], name) == 0) {
      char *end;
      errno = 0;
      uint64_t x = strcmp(v, "max") == 0 ? UINT64_MAX : strtoull(v, &end, 10);
      if (strcmp(v, "max") != 0 && (errno || end == v || *end))
        return -EINVAL;
      return sd_bus_message_append(m, "(sv)", name, "t", x);
    }
  if (strcmp(name, "AllowedCPUs") == 0 || strcmp(name, "AllowedMemoryNodes") == 0) {
    uint8_t mask[1024];
    size_t len;
    if (cpu_mask(v, mask, &len) < 0)
      return -EINVAL;
    int r;
    if ((r = sd_bus_message_open_container(m, 'r', "sv")) < 0 ||
        (r = sd_bus_message_append(m, "s", name)) < 0 ||
        (r = sd_bus_message_open_container(m, 'v', "ay")) < 0 ||
        (r = sd_bus_message_append_array(m, 'y', mask, len)) < 0 ||
        (r = sd_bus_message_close_container(m)) < 0)
      return r;
    return sd_bus_message_close_container(m);
  }
  return -EINVAL;
}

static int append_props(sd_bus_message *m, char **args, int n)
{
  for (int i = 0; i < n; i++) {
    int r = append_prop(m, args[i]);
    if (r < 0) {
      fprintf(stderr, "rootlessrt-systemd: property %s: not one this driver sets\n", args[i]);
      return r;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- jobs */

/* JobRemoved may arrive before the reply that names the job: every one is kept. */
struct jobs {
  char *path[64];
  char *result[64];
  size_t n;
};

static void jobs_free(struct jobs *j)
{
  for (size_t k = 0; k < j->n; k++) {
    free(j->path[k]);
    free(j->result[k]);
  }
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
  (void)e;
  struct jobs *j = userdata;
  uint32_t id;
  const char *path, *unit, *result;
  if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0 || j->n == 64)
    return 0;
  j->path[j->n] = strdup(path);
  j->result[j->n++] = strdup(result);
  return 0;
}

static const char *job_result(const struct jobs *j, const char *job)
{
  for (size_t i = 0; i < j->n; i++)
    if (j->path[i] && strcmp(j->path[i], job) == 0)
      return j->result[i];
  return NULL;
}

/* Waits up to 30 s for job; its result ("done" is success). */
static const char *wait_job(sd_bus *bus, const struct jobs *j, const char *job)
{
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    const char *r = job_result(j, job);
    if (r)
      return r;
    int p = sd_bus_process(bus, NULL);
    if (p < 0)
      return "bus error";
    if (p > 0)
      continue;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - t0.tv_sec > 30)
      return "timeout";
    sd_bus_wait(bus, 1000000);
  }
}

/* ---------------------------------------------------------------- verbs */

static int start(sd_bus *bus, struct jobs *jobs, char **argv, int argc)
{
  const char *unit = argv[0], *slice = argv[1];
  uint32_t pid = (uint32_t)strtoul(argv[2], NULL, 10);
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  cleanup_bus_msg sd_bus_message *m = NULL;
  cleanup_bus_msg sd_bus_message *reply = NULL;
  cleanup_bus_msg sd_bus_message *unit_reply = NULL;
  const char *job;
  int r;
  if ((r = sd_bus_message_new_method_call(bus, &m, DEST, PATH, MANAGER, "StartTransientUnit")) <
          0 ||
      (r = sd_bus_message_append(m, "ss", unit, "fail")) < 0 ||
      (r = sd_bus_message_open_container(m, 'a', "(sv)")) < 0 ||
      (r = sd_bus_message_append(m, "(sv)", "Description", "s", "rootlessrt container")) < 0 ||
      (*slice && (r = sd_bus_message_append(m, "(sv)", "Slice", "s", slice)) < 0) ||
      (r = sd_bus_message_append(m, "(sv)", "Delegate", "b", 1)) < 0 ||
      (r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1, pid)) < 0 ||
      (r = append_props(m, argv + 3, argc - 3)) < 0 ||
      (r = sd_bus_message_close_container(m)) < 0 ||
      (r = sd_bus_message_append(m, "a(sa(sv))", 0)) < 0)
    return fail("StartTransientUnit: build the call", r, NULL);
  r = sd_bus_call(bus, m, 0, &e, &reply);
  if (r < 0)
    return fail("StartTransientUnit", r, &e);
  if ((r = sd_bus_message_read(reply, "o", &job)) < 0)
    return fail("StartTransientUnit: reply", r, NULL);
  const char *res = wait_job(bus, jobs, job);
  if (strcmp(res, "done") != 0) {
    fprintf(stderr, "rootlessrt-systemd: start %s: job %s\n", unit, res);
    return 1;
  }
  char *cg = NULL;
  const char *upath;
  if ((r = sd_bus_call_method(bus, DEST, PATH, MANAGER, "GetUnit", &e, &unit_reply, "s", unit)) <
          0 ||
      (r = sd_bus_message_read(unit_reply, "o", &upath)) < 0)
    return fail("GetUnit", r, &e);
  if ((r = sd_bus_get_property_string(bus, DEST, upath, "org.freedesktop.systemd1.Scope",
                                      "ControlGroup", &e, &cg)) < 0)
    return fail("ControlGroup", r, &e);
  printf("%s\n", cg);
  free(cg);
  return 0;
}

static int set(sd_bus *bus, char **argv, int argc)
{
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  cleanup_bus_msg sd_bus_message *m = NULL;
  int r;
  if ((r = sd_bus_message_new_method_call(bus, &m, DEST, PATH, MANAGER, "SetUnitProperties")) < 0 ||
      (r = sd_bus_message_append(m, "sb", argv[0], 1)) < 0 ||
      (r = sd_bus_message_open_container(m, 'a', "(sv)")) < 0 ||
      (r = append_props(m, argv + 1, argc - 1)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
    return fail("SetUnitProperties: build the call", r, NULL);
  r = sd_bus_call(bus, m, 0, &e, NULL);
  return r < 0 ? fail("SetUnitProperties", r, &e) : 0;
}

static int stop(sd_bus *bus, struct jobs *jobs, const char *unit)
{
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  cleanup_bus_msg sd_bus_message *reply = NULL;
  const char *job;
  int r =
      sd_bus_call_method(bus, DEST, PATH, MANAGER, "StopUnit", &e, &reply, "ss", unit, "replace");
  if (r < 0 && sd_bus_error_has_name(&e, "org.freedesktop.systemd1.NoSuchUnit"))
    return 0;
  if (r < 0)
    return fail("StopUnit", r, &e);
  if ((r = sd_bus_message_read(reply, "o", &job)) < 0)
    return fail("StopUnit: reply", r, NULL);
  const char *res = wait_job(bus, jobs, job);
  if (strcmp(res, "done") != 0) {
    fprintf(stderr, "rootlessrt-systemd: stop %s: job %s\n", unit, res);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv)
{
  int i = 1;
  bool system = i < argc && strcmp(argv[i], "--system") == 0;
  i += system;
  if (argc - i < 2) {
    fprintf(stderr, "usage: rootlessrt-systemd [--system] start|set|stop UNIT ...\n");
    return 1;
  }
  const char *verb = argv[i++];
  __attribute__((cleanup(sd_bus_flush_close_unrefp))) sd_bus *bus = NULL;
  int r = system ? sd_bus_open_system(&bus) : sd_bus_open_user(&bus);
  if (r < 0) {
    fprintf(stderr, "rootlessrt-systemd: no %s bus: %s\n", system ? "system" : "user",
            strerror(-r));
    return EXIT_NO_BUS;
  }
  __attribute__((cleanup(jobs_free))) struct jobs jobs = {0};
  cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
  /* JobRemoved is sent to subscribers: match first, so that no job ends unseen. */
  if ((r = sd_bus_match_signal(bus, NULL, DEST, PATH, MANAGER, "JobRemoved", on_job_removed,
                               &jobs)) < 0)
    return fail("match JobRemoved", r, NULL);
  if ((r = sd_bus_call_method(bus, DEST, PATH, MANAGER, "Subscribe", &e, NULL, NULL)) < 0) {
    if (sd_bus_error_has_name(&e, SD_BUS_ERROR_SERVICE_UNKNOWN) ||
        sd_bus_error_has_name(&e, SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
      fprintf(stderr, "rootlessrt-systemd: no systemd on the %s bus\n", system ? "system" : "user");
      return EXIT_NO_BUS;
    }
    return fail("Subscribe", r, &e);
  }
  int rc;
  if (strcmp(verb, "start") == 0 && argc - i >= 3)
    rc = start(bus, &jobs, argv + i, argc - i);
  else if (strcmp(verb, "set") == 0)
    rc = set(bus, argv + i, argc - i);
  else if (strcmp(verb, "stop") == 0)
    rc = stop(bus, &jobs, argv[i]);
  else {
    fprintf(stderr, "rootlessrt-systemd: unknown verb or missing arguments: %s\n", verb);
    rc = 1;
  }
  return rc;
}
