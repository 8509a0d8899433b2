/* test_cgroup_dev.c: linux.resources.devices, one table of cases against both enforcements: the
 * cgroup v1 plan (read as the kernel's devices controller reads it) and the eBPF program (run by
 * a small interpreter of the instructions cgroup/devices.c emits). */
#include <json-c/json.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "../../cgroup/internal.h"
#include "rootlessrt/util.h"
#include "tap.h"

#define R 2 /* BPF_DEVCG_ACC_READ */
#define W 4
#define M 1

/* The v1 controller's check (security/device_cgroup.c): allow-all with deny exceptions, any
 * shared bit denying; or deny-all with allow exceptions, one of which must grant every bit. */
static bool v1_allows(const struct rrt_cg_v1_plan *p, char type, long maj, long min, int acc)
{
  for (size_t i = 0; i < p->n; i++) {
    char t, smaj[24], smin[24], sacc[8];
    if (sscanf(p->lines[i], "%c %23[^:]:%23s %7s", &t, smaj, smin, sacc) != 4)
      return false;
    int bits =
        (strchr(sacc, 'r') ? R : 0) | (strchr(sacc, 'w') ? W : 0) | (strchr(sacc, 'm') ? M : 0);
    bool hit = t == type && (strcmp(smaj, "*") == 0 || atol(smaj) == maj) &&
               (strcmp(smin, "*") == 0 || atol(smin) == min);
    if (p->allow_default && hit && (bits & acc))
      return false;
    if (!p->allow_default && hit && (bits & acc) == acc)
      return true;
  }
  return p->allow_default;
}

/* The instructions of the device program, on a bpf_cgroup_dev_ctx. */
static int bpf_run(const struct bpf_insn *p, size_t len, char type, long maj, long min, int acc)
{
  uint64_t r[11] = {0};
  uint32_t ctx[3] = {
      (uint32_t)(acc << 16 | (type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR)),
      (uint32_t)maj, (uint32_t)min};
  for (size_t pc = 0; pc < len; pc++) {
    const struct bpf_insn *i = &p[pc];
    uint64_t k = (uint64_t)(int64_t)i->imm;
    switch (i->code) {
    case BPF_LDX | BPF_MEM | BPF_W:
      r[i->dst_reg] = ctx[i->off / 4];
      break;
    case BPF_ALU64 | BPF_MOV | BPF_X:
      r[i->dst_reg] = r[i->src_reg];
      break;
    case BPF_ALU64 | BPF_MOV | BPF_K:
      r[i->dst_reg] = k;
      break;
    case BPF_ALU64 | BPF_AND | BPF_K:
      r[i->dst_reg] &= k;
      break;
    case BPF_ALU64 | BPF_RSH | BPF_K:
      r[i->dst_reg] >>= k;
      break;
    case BPF_JMP | BPF_JNE | BPF_K:
      if (r[i->dst_reg] != k)
        pc += (size_t)i->off;
      break;
    case BPF_JMP | BPF_JEQ | BPF_K:
      if (r[i->dst_reg] == k)
        pc += (size_t)i->off;
      break;
    case BPF_JMP | BPF_EXIT:
      return (int)r[0];
    default:
      return -1;
    }
  }
  return -1;
}

struct probe {
  char type;
  long maj, min;
  int acc;
  bool allowed;
};

struct dev_case {
  const char *name;
  const char *rules;
  bool v1_refused; /* the v1 controller cannot hold this policy: an error, not a wrong list */
  struct probe probes[8]; /* ended by a zero entry */
};

#define DENY_ALL "{\"allow\":false,\"access\":\"rwm\"}"

static const struct dev_case cases[] = {
    {"type a with a major:minor is that device of both types",
     "[" DENY_ALL ",{\"allow\":true,\"type\":\"a\",\"major\":10,\"minor\":229}]",
     false,
     {{'c', 10, 229, R | W, true},
      {'b', 10, 229, R, true},
      {'c', 10, 228, R, false},
      {'c', 4, 1, R | W, false},
      {'b', 8, 0, R | W, false}}},
    {"a deny after a wider allow closes that device",
     "[" DENY_ALL ",{\"allow\":true,\"type\":\"c\"},{\"allow\":false,\"type\":\"c\",\"major\":10,"
     "\"minor\":229}]",
     false,
     {{'c', 10, 229, R, false},
      {'c', 10, 229, W, false},
      {'c', 10, 229, M, true}, /* mknod of any node: the needed rules come after */
      {'c', 10, 200, R | W, true},
      {'c', 4, 1, R, true},
      {'b', 8, 0, R, false}}},
    {"allow all, then deny c 10:229 w",
     "[{\"allow\":true,\"access\":\"rwm\"},{\"allow\":false,\"type\":\"c\",\"major\":10,\"minor\":"
     "229,\"access\":\"w\"}]",
     false,
     {{'c', 10, 229, R, true},
      {'c', 10, 229, W, false},
      {'c', 10, 229, R | W, false},
      {'b', 8, 0, R | W, true},
      {'c', 10, 200, W, true}}},
    {"deny all leaves the needed devices",
     "[" DENY_ALL "]",
     false,
     {{'c', 1, 3, R | W, true},
      {'c', 136, 5, R | W, true},
      {'c', 10, 229, R, false},
      {'b', 8, 0, M, true},
      {'b', 8, 0, R, false},
      {'c', 1, 4, R, false}}},
    {"a major wildcard allow with one minor denied",
     "[" DENY_ALL
     ",{\"allow\":true,\"type\":\"c\",\"major\":10,\"access\":\"rw\"},{\"allow\":false,"
     "\"type\":\"c\",\"major\":10,\"minor\":229,\"access\":\"rwm\"}]",
     true, /* c 10:* but 10:229: no v1 list says it */
     {{'c', 10, 229, R, false},
      {'c', 10, 200, R | W, true},
      {'c', 11, 229, R, false},
      {'c', 10, 229, M, true}}},
    {"a minor wildcard allow",
     "[" DENY_ALL ",{\"allow\":true,\"type\":\"c\",\"minor\":229,\"access\":\"r\"},{\"allow\":true,"
     "\"type\":\"b\",\"major\":8,\"minor\":-1,\"access\":\"rw\"}]",
     false,
     {{'c', 10, 229, R, true},
      {'c', 10, 229, W, false},
      {'c', 11, 229, R, true},
      {'c', 10, 228, R, false},
      {'b', 8, 3, R | W, true},
      {'b', 9, 3, R, false}}},
    {"allow all but c 10:*, then allow c 10:229 again",
     "[{\"allow\":true},{\"allow\":false,\"type\":\"c\",\"major\":10},{\"allow\":true,\"type\":"
     "\"c\",\"major\":10,\"minor\":229}]",
     true,
     {{'c', 10, 229, R | W, true},
      {'c', 10, 200, R, false},
      {'c', 11, 1, R | W, true},
      {'b', 8, 0, R | W, true}}},
};

static const char *acc_str(int acc, char buf[4])
{
  size_t n = 0;
  if (acc & R)
    buf[n++] = 'r';
  if (acc & W)
    buf[n++] = 'w';
  if (acc & M)
    buf[n++] = 'm';
  buf[n] = '\0';
  return buf;
}

static void run_case(const struct dev_case *c)
{
  struct json_object *rules = json_tokener_parse(c->rules);
  ok(rules != NULL, "%s: the rules parse", c->name);
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_cg_v1_plan plan = {0};
  int pr = rrt_cg_devices_v1_plan(rules, &plan, &err);
  if (c->v1_refused) {
    ok(pr < 0 && strstr(rrt_error_msg(&err), "cannot hold"), "%s: v1 refuses it (%s)", c->name,
       rrt_error_msg(&err));
  } else {
    ok(pr == 0, "%s: v1 plan (%s)", c->name, pr < 0 ? rrt_error_msg(&err) : "ok");
    bool no_a = true;
    for (size_t i = 0; i < plan.n; i++)
      no_a = no_a && plan.lines[i][0] != 'a';
    ok(no_a, "%s: no v1 exception of type a", c->name);
  }
  rrt_error_clear(&err);
  struct bpf_insn *prog = NULL;
  size_t len = 0;
  ok(rrt_cg_devices_program(rules, &prog, &len, &err) == 0, "%s: eBPF program", c->name);
  for (const struct probe *p = c->probes; p->type; p++) {
    char a[4];
    if (!c->v1_refused)
      is_int(v1_allows(&plan, p->type, p->maj, p->min, p->acc), p->allowed,
             "%s: v1: %c %ld:%ld %s %s", c->name, p->type, p->maj, p->min, acc_str(p->acc, a),
             p->allowed ? "allowed" : "denied");
    is_int(bpf_run(prog, len, p->type, p->maj, p->min, p->acc), p->allowed,
           "%s: eBPF: %c %ld:%ld %s %s", c->name, p->type, p->maj, p->min, acc_str(p->acc, a),
           p->allowed ? "allowed" : "denied");
  }
  free(prog);
  rrt_cg_v1_plan_free(&plan);
  json_object_put(rules);
}

int main(void)
{
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    run_case(&cases[i]);

  /* What v1 is given for deny-all: the default and exactly the needed devices. */
  struct json_object *rules = json_tokener_parse("[" DENY_ALL "]");
  struct rrt_cg_v1_plan plan = {0};
  struct rrt_error err = RRT_ERROR_INIT;
  ok(rrt_cg_devices_v1_plan(rules, &plan, &err) == 0 && !plan.allow_default,
     "deny all: a deny-all default");
  cleanup_free char *joined = NULL;
  for (size_t i = 0; i < plan.n; i++) {
    char *j = xasprintf("%s%s%s", joined ? joined : "", joined ? "," : "", plan.lines[i]);
    free(joined);
    joined = j;
  }
  is_str(joined,
         "c *:* m,c 136:* rwm,c 1:3 rwm,c 1:5 rwm,c 1:7 rwm,c 1:8 rwm,c 1:9 rwm,c 5:0 rwm,"
         "c 5:1 rwm,c 5:2 rwm,b *:* m",
         "deny all: the allow list is the needed devices");
  rrt_cg_v1_plan_free(&plan);
  json_object_put(rules);
  return tap_done();
}
