/* test_sysctl.c: which namespace each linux.sysctl key belongs to, and the create-time check
 * that the container has that namespace of its own. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/spec.h"
#include "rootlessrt/sysctl.h"
#include "tap.h"

static void classification(void)
{
  static const struct {
    const char *key;
    int type;
  } cases[] = {
      {"fs.mqueue.queues_max", CLONE_NEWIPC},
      {"fs/mqueue/msg_max", CLONE_NEWIPC},
      {"kernel.msgmnb", CLONE_NEWIPC},
      {"kernel.sem", CLONE_NEWIPC},
      {"kernel.shmmax", CLONE_NEWIPC},
      {"kernel.shm_rmid_forced", CLONE_NEWIPC},
      {"net.ipv4.ping_group_range", CLONE_NEWNET},
      {"net/ipv4/ip_forward", CLONE_NEWNET},
      {"net.ipv4.conf.eth0/1.rp_filter", CLONE_NEWNET},
      {"kernel.hostname", CLONE_NEWUTS},
      {"kernel.domainname", CLONE_NEWUTS},
      {"kernel.core_pattern", 0},
      {"kernel.semx", 0},
      {"kernel.shmallx", 0},
      {"fs.mqueue", 0},
      {"vm.swappiness", 0},
      {"net", 0},
      {"net.", -1},
      {"", -1},
      {".net.ipv4.ip_forward", -1},
      {"/net/ipv4/ip_forward", -1},
      {"net.ipv4..ip_forward", -1},
      {"net/ipv4/../../kernel/core_pattern", -1},
      {"net.ipv4.conf.x/../../kernel", -1},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    is_int(rrt_sysctl_namespace(cases[i].key), cases[i].type, "\"%s\"", cases[i].key);
}

static int check(const char *json, int ns_flags, const char *join_path, int join_type, char **msg)
{
  struct rrt_spec *spec = NULL;
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_spec_parse(json, strlen(json), &spec, &err) < 0) {
    *msg = strdup(rrt_error_msg(&err));
    rrt_error_clear(&err);
    return -2;
  }
  int types[1] = {join_type};
  const char *paths[1] = {join_path};
  struct rrt_ns_plan plan = {
      .ns_flags = ns_flags, .join_types = types, .join_paths = paths, .n_join = join_path ? 1 : 0};
  int r = rrt_sysctl_check(spec, &plan, &err);
  *msg = strdup(r < 0 ? rrt_error_msg(&err) : "");
  rrt_error_clear(&err);
  rrt_spec_free(spec);
  return r;
}

#define CFG(extra) "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"rootfs\"}" extra "}"

static void against_the_plan(void)
{
  char *msg = NULL;
  const char *mq = CFG(",\"linux\":{\"sysctl\":{\"fs.mqueue.queues_max\":\"100\"}}");
  is_int(check(mq, CLONE_NEWIPC, NULL, 0, &msg), 0, "an ipc sysctl with a new ipc namespace");
  free(msg);
  is_int(check(mq, CLONE_NEWNET, NULL, 0, &msg), -1, "an ipc sysctl without one: refused");
  ok(strstr(msg, "fs.mqueue.queues_max") && strstr(msg, "no ipc namespace"),
     "the error names the key and the namespace: %s", msg);
  free(msg);
  is_int(check(mq, 0, "/proc/self/ns/ipc", CLONE_NEWIPC, &msg), -1,
         "joined by a path that is the runtime's own ipc namespace: refused");
  ok(strstr(msg, "joined by path"), "and says so: %s", msg);
  free(msg);
  is_int(check(mq, 0, "/nonexistent/ns/ipc", CLONE_NEWIPC, &msg), -1,
         "a joined path that cannot be checked counts as the runtime's own");
  free(msg);
  const char *core = CFG(",\"linux\":{\"sysctl\":{\"kernel.core_pattern\":\"|/x\"}}");
  is_int(check(core, CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS, NULL, 0, &msg), -1,
         "a sysctl of no namespace: refused whatever the namespaces");
  ok(strstr(msg, "not a namespaced sysctl"), "and says so: %s", msg);
  free(msg);
  const char *host = CFG(",\"hostname\":\"h\"");
  is_int(check(host, CLONE_NEWNET, NULL, 0, &msg), -1, "hostname without a uts namespace");
  ok(strstr(msg, "hostname") && strstr(msg, "uts"), "names hostname and uts: %s", msg);
  free(msg);
  is_int(check(host, CLONE_NEWUTS, NULL, 0, &msg), 0, "hostname with a new uts namespace");
  free(msg);
}

/* kernel.hostname and kernel.domainname against hostname and domainname (issue 27, item 5). */
static void against_the_names(void)
{
  static const struct {
    const char *json;
    int want;
    const char *what;
    const char *says;
  } cases[] = {
      {CFG(",\"hostname\":\"h\",\"linux\":{\"sysctl\":{\"kernel.hostname\":\"other\"}}"), -1,
       "kernel.hostname unlike hostname: refused",
       "\"kernel.hostname\": \"other\" contradicts hostname \"h\""},
      {CFG(",\"hostname\":\"h\",\"linux\":{\"sysctl\":{\"kernel/hostname\":\"other\"}}"), -1,
       "written with slashes too", "\"kernel/hostname\": \"other\" contradicts hostname"},
      {CFG(",\"domainname\":\"bar\",\"linux\":{\"sysctl\":{\"kernel.domainname\":\"foo\"}}"), -1,
       "kernel.domainname unlike domainname: refused",
       "\"kernel.domainname\": \"foo\" contradicts domainname \"bar\""},
      {CFG(",\"domainname\":\"bar\",\"linux\":{\"sysctl\":{\"kernel.domainname\":\"\"}}"), -1,
       "an empty kernel.domainname beside domainname: refused", "contradicts domainname"},
      {CFG(",\"hostname\":\"h\",\"linux\":{\"sysctl\":{\"kernel.hostname\":\"h\"}}"), 0,
       "kernel.hostname equal to hostname: taken", ""},
      {CFG(",\"hostname\":\"h\",\"linux\":{\"sysctl\":{\"kernel.hostname\":\"h\\n\"}}"), 0,
       "equal as the kernel keeps it (up to a newline): taken", ""},
      {CFG(",\"linux\":{\"sysctl\":{\"kernel.domainname\":\"example.com\"}}"), 0,
       "kernel.domainname without domainname (Docker's --domainname): taken", ""},
      {CFG(",\"linux\":{\"sysctl\":{\"kernel.hostname\":\"x\"}}"), 0,
       "kernel.hostname without hostname: taken", ""},
      {CFG(",\"hostname\":\"h\",\"linux\":{\"sysctl\":{\"kernel.domainname\":\"d\"}}"), 0,
       "kernel.domainname beside hostname only: taken", ""},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *msg = NULL;
    is_int(check(cases[i].json, CLONE_NEWUTS, NULL, 0, &msg), cases[i].want, "%s", cases[i].what);
    if (cases[i].want < 0)
      ok(strstr(msg, cases[i].says) && !strchr(msg, '\n'), "one line saying so: '%s'", msg);
    free(msg);
  }
}

int main(void)
{
  classification();
  against_the_plan();
  against_the_names();
  return tap_done();
}
