/* cgroup_dev.c: linux.resources.devices, enforced as real root: the cgroup v1 devices
 * controller where there is one, else an eBPF program (BPF_PROG_TYPE_CGROUP_DEVICE) generated
 * here and attached to the container's cgroup v2 directory. Rules apply in order, the last one
 * that matches decides; what none matches is denied. The devices every container needs follow
 * the config's rules, as in runc and crun. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

#define ACC_M 1 /* BPF_DEVCG_ACC_MKNOD */
#define ACC_R 2 /* BPF_DEVCG_ACC_READ */
#define ACC_W 4 /* BPF_DEVCG_ACC_WRITE */
#define ANY (-1LL)

struct rule {
  bool allow;
  char type;              /* 'a', 'c', 'b' */
  long long major, minor; /* ANY: every one */
  int access;             /* ACC_* bits */
};

/* runtime-linux.md's default devices, /dev/console, /dev/ptmx and the ptys, and mknod of any
 * node (opening one is what the rules decide). */
static const struct rule needed[] = {
    {true, 'c', ANY, ANY, ACC_M}, {true, 'b', ANY, ANY, ACC_M}, {true, 'c', 1, 3, 7},
    {true, 'c', 1, 5, 7},         {true, 'c', 1, 7, 7},         {true, 'c', 1, 8, 7},
    {true, 'c', 1, 9, 7},         {true, 'c', 5, 0, 7},         {true, 'c', 5, 1, 7},
    {true, 'c', 5, 2, 7},         {true, 'c', 136, ANY, 7},
};

static int parse_rule(json_object *o, size_t i, struct rule *r, struct rrt_error *err)
{
  json_object *x;
  *r = (struct rule){false, 'a', ANY, ANY, 7};
  if (json_object_object_get_ex(o, "allow", &x))
    r->allow = json_object_get_boolean(x);
  if (json_object_object_get_ex(o, "type", &x)) {
    const char *t = json_object_get_string(x);
    if (!t || strlen(t) != 1 || !strchr("acb", t[0]))
      return rrt_error_msgf(err, EINVAL, "devices[%zu].type \"%s\": not a, c or b", i, t ? t : "");
    r->type = t[0];
  }
  if (json_object_object_get_ex(o, "major", &x) && !json_object_is_type(x, json_type_null))
    r->major = json_object_get_int64(x);
  if (json_object_object_get_ex(o, "minor", &x) && !json_object_is_type(x, json_type_null))
    r->minor = json_object_get_int64(x);
  if ((r->major < 0 && r->major != ANY) || r->major > 0x7fffffff ||
      (r->minor < 0 && r->minor != ANY) || r->minor > 0x7fffffff)
    return rrt_error_msgf(err, EINVAL, "devices[%zu]: major and minor must be -1 or in [0, 2^31)",
                          i);
  if (json_object_object_get_ex(o, "access", &x)) {
    const char *a = json_object_get_string(x);
    r->access = 0;
    for (; a && *a; a++) {
      if (!strchr("rwm", *a))
        return rrt_error_msgf(err, EINVAL, "devices[%zu].access: '%c' is not r, w or m", i, *a);
      r->access |= *a == 'r' ? ACC_R : *a == 'w' ? ACC_W : ACC_M;
    }
  }
  return 0;
}

static int rules_build(json_object *arr, struct rule **out, size_t *n, struct rrt_error *err)
{
  size_t k = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
  size_t extra = sizeof(needed) / sizeof(needed[0]);
  struct rule *v = xcalloc(k + extra, sizeof(*v));
  for (size_t i = 0; i < k; i++)
    if (parse_rule(json_object_array_get_idx(arr, i), i, &v[i], err) < 0) {
      free(v);
      return rrt_error_wrap(err, "linux.resources");
    }
  memcpy(v + k, needed, sizeof(needed));
  *out = v;
  *n = k + extra;
  return 0;
}

static bool matches_all(const struct rule *r)
{
  return r->type == 'a' && r->major == ANY && r->minor == ANY && r->access == 7;
}

/* ---------------------------------------------------------------- cgroup v1 */

static int v1_apply(const char *dir, const struct rule *v, size_t n, struct rrt_error *err)
{
  if (rrt_cg_write(dir, "devices.deny", "a", err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++) {
    const char *file = v[i].allow ? "devices.allow" : "devices.deny";
    char line[64], maj[24], min[24], acc[4];
    size_t a = 0;
    if (v[i].access & ACC_R)
      acc[a++] = 'r';
    if (v[i].access & ACC_W)
      acc[a++] = 'w';
    if (v[i].access & ACC_M)
      acc[a++] = 'm';
    acc[a] = '\0';
    if (!a)
      continue;
    if (matches_all(&v[i])) {
      snprintf(line, sizeof(line), "a");
    } else {
      snprintf(maj, sizeof(maj), v[i].major == ANY ? "*" : "%lld", v[i].major);
      snprintf(min, sizeof(min), v[i].minor == ANY ? "*" : "%lld", v[i].minor);
      snprintf(line, sizeof(line), "%c %s:%s %s", v[i].type, maj, min, acc);
    }
    if (rrt_cg_write(dir, file, line, err) < 0)
      return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- eBPF */

#define INSN(c, d, s, o, i)                                                                        \
  ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define LDX_W(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define AND_IMM(d, i) INSN(BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, i)
#define RSH_IMM(d, i) INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define JNE_IMM(d, i, o) INSN(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, i)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* One rule: the checks that skip to the next rule on a mismatch, then its verdict. r3 holds the
 * device type, r4 the access asked, r5 the major, r6 the minor. An allow rule matches when it
 * grants every access asked; a deny rule when it denies any of them. */
static size_t emit_rule(const struct rule *r, struct bpf_insn *out)
{
  struct bpf_insn b[12];
  size_t n = 0;
  int jumps[4], nj = 0;
  if (r->type != 'a') {
    jumps[nj++] = (int)n;
    b[n++] = JNE_IMM(3, r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, 0);
  }
  if (r->access != 7) {
    b[n++] = MOV_REG(7, 4);
    b[n++] = AND_IMM(7, r->allow ? (~r->access & 7) : r->access);
    jumps[nj++] = (int)n;
    b[n++] = r->allow ? JNE_IMM(7, 0, 0) : JEQ_IMM(7, 0, 0);
  }
  if (r->major != ANY) {
    jumps[nj++] = (int)n;
    b[n++] = JNE_IMM(5, (int)r->major, 0);
  }
  if (r->minor != ANY) {
    jumps[nj++] = (int)n;
    b[n++] = JNE_IMM(6, (int)r->minor, 0);
  }
  b[n++] = MOV_IMM(0, r->allow ? 1 : 0);
  b[n++] = EXIT();
  for (int j = 0; j < nj; j++)
    b[jumps[j]].off = (short)(n - (size_t)jumps[j] - 1);
  memcpy(out, b, n * sizeof(*b));
  return n;
}

/* The program: the rules from the last to the first (the first match returns), then deny. */
static struct bpf_insn *program(const struct rule *v, size_t n, size_t *len)
{
  struct bpf_insn *p = xcalloc(10 + n * 12, sizeof(*p));
  size_t k = 0;
  p[k++] = LDX_W(2, 1, 0); /* access_type: (access << 16) | type */
  p[k++] = MOV_REG(3, 2);
  p[k++] = AND_IMM(3, 0xffff);
  p[k++] = MOV_REG(4, 2);
  p[k++] = RSH_IMM(4, 16);
  p[k++] = LDX_W(5, 1, 4); /* major */
  p[k++] = LDX_W(6, 1, 8); /* minor */
  bool decided = false;
  for (size_t i = n; i-- > 0 && !decided;) {
    if (v[i].access == 0)
      continue;
    k += emit_rule(&v[i], p + k);
    decided = matches_all(&v[i]); /* nothing before it can decide any more */
  }
  if (!decided) {
    p[k++] = MOV_IMM(0, 0);
    p[k++] = EXIT();
  }
  *len = k;
  return p;
}

static long bpf(int cmd, union bpf_attr *attr)
{
  return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int prog_load(const struct bpf_insn *insns, size_t len, struct rrt_error *err)
{
  static char log[4096];
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = (unsigned long)insns;
  a.insn_cnt = (unsigned)len;
  a.license = (unsigned long)"GPL";
  int fd = (int)bpf(BPF_PROG_LOAD, &a);
  log[0] = '\0';
  if (fd < 0 && errno == EINVAL) {
    /* Again with the verifier's log, for the message: its first line says what it refused. */
    a.log_buf = (unsigned long)log;
    a.log_size = sizeof(log);
    a.log_level = 1;
    fd = (int)bpf(BPF_PROG_LOAD, &a);
    log[strcspn(log, "\n")] = '\0';
  }
  if (fd < 0)
    return rrt_error_errno(err, "bpf(BPF_PROG_LOAD) of the device program%s%.200s",
                           log[0] ? ": " : "", log);
  return fd;
}

/* Programs of ours already attached (update): replaced once the new one is in. */
static void detach_others(int cgfd, int keep_fd)
{
  union bpf_attr a;
  __u32 ids[64];
  struct bpf_prog_info info;
  memset(&a, 0, sizeof(a));
  a.query.target_fd = (__u32)cgfd;
  a.query.attach_type = BPF_CGROUP_DEVICE;
  a.query.prog_ids = (unsigned long)ids;
  a.query.prog_cnt = 64;
  if (bpf(BPF_PROG_QUERY, &a) < 0)
    return;
  memset(&info, 0, sizeof(info));
  union bpf_attr ia = {
      .info = {.bpf_fd = (__u32)keep_fd, .info_len = sizeof(info), .info = (unsigned long)&info}};
  if (bpf(BPF_OBJ_GET_INFO_BY_FD, &ia) < 0)
    return;
  for (__u32 i = 0; i < a.query.prog_cnt; i++) {
    if (ids[i] == info.id)
      continue;
    union bpf_attr g = {.prog_id = ids[i]};
    cleanup_close int pfd = (int)bpf(BPF_PROG_GET_FD_BY_ID, &g);
    if (pfd < 0)
      continue;
    union bpf_attr d;
    memset(&d, 0, sizeof(d));
    d.target_fd = (__u32)cgfd;
    d.attach_bpf_fd = (__u32)pfd;
    d.attach_type = BPF_CGROUP_DEVICE;
    if (bpf(BPF_PROG_DETACH, &d) < 0)
      rrt_debug("cgroup: detach device program %u: %s", ids[i], strerror(errno));
  }
}

static int v2_apply(const char *dir, const struct rule *v, size_t n, struct rrt_error *err)
{
  size_t len = 0;
  cleanup_free struct bpf_insn *insns = program(v, n, &len);
  cleanup_close int pfd = prog_load(insns, len, err);
  if (pfd < 0)
    return -1;
  cleanup_close int cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgfd < 0)
    return rrt_error_errno(err, "open %s", dir);
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.target_fd = (__u32)cgfd;
  a.attach_bpf_fd = (__u32)pfd;
  a.attach_type = BPF_CGROUP_DEVICE;
  a.attach_flags = BPF_F_ALLOW_MULTI;
  if (bpf(BPF_PROG_ATTACH, &a) < 0)
    return rrt_error_errno(err, "bpf(BPF_PROG_ATTACH) of the device program to %s", dir);
  detach_others(cgfd, pfd);
  return 0;
}

int rrt_cg_devices_apply(const struct rrt_cgroup *cg, json_object *devices, struct rrt_error *err)
{
  struct rule *v = NULL;
  size_t n = 0;
  if (rules_build(devices, &v, &n, err) < 0)
    return -1;
  int r;
  if (cg->v1[RRT_CG_DEVICES])
    r = v1_apply(cg->v1[RRT_CG_DEVICES], v, n, err);
  else if (cg->v2)
    r = v2_apply(cg->v2, v, n, err);
  else
    r = rrt_error_msgf(err, ENOTSUP, "no cgroup to enforce them in");
  free(v);
  if (r < 0)
    return rrt_error_wrap(err, "linux.resources.devices");
  return 0;
}
