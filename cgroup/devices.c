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

/*
 * The v1 controller is not a rule list: it is a default (allow or deny) and exceptions, and a
 * line written to devices.deny only removes an identical allow exception. Writing the OCI rules
 * one by one therefore does not give "the last match decides" (`a 1:3 rw` is read as every
 * device; a deny after a wider allow removes nothing). So the final policy is computed here, cell
 * by cell, and written as what the kernel can hold: a deny-all default and the exact allow list,
 * or, when only a list of exceptions to allow-all can say it (allow all but c 10:229), that.
 *
 * A cell is a device type (c or b), a major (one the rules name, or any other) and a minor (the
 * same); every device of a cell gets the same verdict, since no rule tells them apart.
 */
#define OTHER (-2LL)

struct v1_cells {
  long long *maj, *min;   /* the numbers the rules name, then OTHER */
  size_t n_maj, n_min;    /* including OTHER */
  unsigned char *bits[2]; /* [c, b][maj * n_min + min]: the access the policy allows */
};

static void add_num(long long *v, size_t *n, long long x)
{
  if (x == ANY)
    return;
  for (size_t i = 0; i < *n; i++)
    if (v[i] == x)
      return;
  v[(*n)++] = x;
}

/* The access bits the last matching rule of each bit allows (unmatched: denied). */
static unsigned char cell_bits(const struct rule *v, size_t n, char type, long long maj,
                               long long min)
{
  unsigned char allowed = 0, open = 7;
  for (size_t i = n; i-- > 0 && open;) {
    const struct rule *r = &v[i];
    if ((r->type != 'a' && r->type != type) || (r->major != ANY && r->major != maj) ||
        (r->minor != ANY && r->minor != min) || !(r->access & open))
      continue;
    if (r->allow)
      allowed |= (unsigned char)(r->access & open);
    open &= (unsigned char)~r->access;
  }
  return allowed;
}

#define V1_MAX_CELLS (1 << 16)

static int cells_build(const struct rule *v, size_t n, struct v1_cells *c, struct rrt_error *err)
{
  c->maj = xcalloc(n + 1, sizeof(*c->maj));
  c->min = xcalloc(n + 1, sizeof(*c->min));
  c->n_maj = c->n_min = 0;
  for (size_t i = 0; i < n; i++) {
    add_num(c->maj, &c->n_maj, v[i].major);
    add_num(c->min, &c->n_min, v[i].minor);
  }
  c->maj[c->n_maj++] = OTHER;
  c->min[c->n_min++] = OTHER;
  if (c->n_maj * c->n_min > V1_MAX_CELLS)
    return rrt_error_msgf(err, E2BIG,
                          "%zu majors and %zu minors: too many distinct device numbers for the "
                          "cgroup v1 devices controller",
                          c->n_maj - 1, c->n_min - 1);
  for (int t = 0; t < 2; t++) {
    c->bits[t] = xcalloc(c->n_maj * c->n_min, 1);
    for (size_t a = 0; a < c->n_maj; a++)
      for (size_t b = 0; b < c->n_min; b++)
        c->bits[t][a * c->n_min + b] = cell_bits(v, n, t ? 'b' : 'c', c->maj[a], c->min[b]);
  }
  return 0;
}

static void cells_free(struct v1_cells *c)
{
  free(c->maj);
  free(c->min);
  free(c->bits[0]);
  free(c->bits[1]);
}

static void add_line(struct rrt_cg_v1_plan *p, char type, long long maj, long long min,
                     unsigned bits)
{
  char m1[24], m2[24], acc[4];
  size_t a = 0;
  if (bits & ACC_R)
    acc[a++] = 'r';
  if (bits & ACC_W)
    acc[a++] = 'w';
  if (bits & ACC_M)
    acc[a++] = 'm';
  acc[a] = '\0';
  snprintf(m1, sizeof(m1), maj == OTHER ? "*" : "%lld", maj);
  snprintf(m2, sizeof(m2), min == OTHER ? "*" : "%lld", min);
  p->lines = xrealloc(p->lines, (p->n + 2) * sizeof(*p->lines));
  p->lines[p->n++] = xasprintf("%c %s:%s %s", type, m1, m2, acc);
  p->lines[p->n] = NULL;
}

/*
 * The exceptions of one type, for want[] (the allowed bits in allow-list mode, the denied ones in
 * deny-list mode): the widest entries first (*:*, M:*, *:N), each with the bits every cell it
 * spans wants, then M:N for what they leave. True when the entries say exactly want[]: in
 * allow-list mode each cell needs one entry with all its bits (the kernel lets an access through
 * when one exception grants all of it), in deny-list mode their union (any bit of one denies).
 */
static bool cover(const struct v1_cells *c, const unsigned char *want, bool single, char type,
                  struct rrt_cg_v1_plan *p)
{
  size_t nm = c->n_maj, nn = c->n_min, om = nm - 1, on = nn - 1;
  unsigned x = 7;
  unsigned char *y = xcalloc(nm, 1), *z = xcalloc(nn, 1);
  memset(y, 7, nm);
  memset(z, 7, nn);
  for (size_t a = 0; a < nm; a++)
    for (size_t b = 0; b < nn; b++) {
      unsigned w = want[a * nn + b];
      x &= w;
      y[a] &= (unsigned char)w;
      z[b] &= (unsigned char)w;
    }
  bool ok = true;
  for (size_t a = 0; a < nm && ok; a++)
    for (size_t b = 0; b < nn && ok; b++) {
      unsigned w = want[a * nn + b];
      unsigned have[4] = {x, a != om ? y[a] : 0, b != on ? z[b] : 0, a != om && b != on ? w : 0};
      unsigned all = have[0] | have[1] | have[2] | have[3];
      bool one = false;
      for (int k = 0; k < 4; k++)
        one = one || (have[k] & w) == w;
      ok = single ? one : all == w;
    }
  if (ok) {
    if (x)
      add_line(p, type, OTHER, OTHER, x);
    for (size_t a = 0; a < om; a++)
      if (y[a] & ~x)
        add_line(p, type, c->maj[a], OTHER, y[a]);
    for (size_t b = 0; b < on; b++)
      if (z[b] & ~x)
        add_line(p, type, OTHER, c->min[b], z[b]);
    for (size_t a = 0; a < om; a++)
      for (size_t b = 0; b < on; b++) {
        unsigned w = want[a * nn + b];
        if (w && (w & ~x) && (w & ~y[a]) && (w & ~z[b]))
          add_line(p, type, c->maj[a], c->min[b], w);
      }
  }
  free(y);
  free(z);
  return ok;
}

void rrt_cg_v1_plan_free(struct rrt_cg_v1_plan *p)
{
  for (size_t i = 0; i < p->n; i++)
    free(p->lines[i]);
  free(p->lines);
  p->lines = NULL;
  p->n = 0;
}

static int v1_plan(const struct rule *v, size_t n, struct rrt_cg_v1_plan *p, struct rrt_error *err)
{
  struct v1_cells c = {0};
  *p = (struct rrt_cg_v1_plan){0};
  if (cells_build(v, n, &c, err) < 0) {
    cells_free(&c);
    return -1;
  }
  size_t k = c.n_maj * c.n_min;
  bool ok = cover(&c, c.bits[0], true, 'c', p) && cover(&c, c.bits[1], true, 'b', p);
  if (!ok) {
    /* The same policy as exceptions to allow-all: the denied bits. */
    rrt_cg_v1_plan_free(p);
    p->allow_default = true;
    for (int t = 0; t < 2; t++)
      for (size_t i = 0; i < k; i++)
        c.bits[t][i] = (unsigned char)(~c.bits[t][i] & 7);
    ok = cover(&c, c.bits[0], false, 'c', p) && cover(&c, c.bits[1], false, 'b', p);
  }
  cells_free(&c);
  if (!ok) {
    rrt_cg_v1_plan_free(p);
    return rrt_error_msgf(err, EINVAL,
                          "the rules allow and deny overlapping ranges of devices in a way the "
                          "cgroup v1 devices controller cannot hold (neither as an allow list "
                          "nor as exceptions to allow-all)");
  }
  return 0;
}

int rrt_cg_devices_v1_plan(json_object *devices, struct rrt_cg_v1_plan *p, struct rrt_error *err)
{
  struct rule *v = NULL;
  size_t n = 0;
  if (rules_build(devices, &v, &n, err) < 0)
    return -1;
  int r = v1_plan(v, n, p, err);
  free(v);
  return r;
}

static bool has_line(char *const *lines, size_t n, const char *s, size_t len)
{
  for (size_t i = 0; i < n; i++)
    if (strlen(lines[i]) == len && memcmp(lines[i], s, len) == 0)
      return true;
  return false;
}

/* devices.list as the plan says it must read: the allow list (any order), or, in allow-all
 * mode, "a *:* rwm" (the kernel does not list the deny exceptions). */
static int v1_verify(const char *dir, const struct rrt_cg_v1_plan *p, struct rrt_error *err)
{
  cleanup_free char *got = rrt_cg_read(dir, "devices.list");
  if (!got)
    return rrt_error_errno(err, "read %s/devices.list", dir);
  char *const all[] = {"a *:* rwm"};
  char *const *want = p->allow_default ? all : p->lines;
  size_t n_want = p->allow_default ? 1 : p->n, n_got = 0;
  bool same = true;
  for (const char *s = got; *s;) {
    size_t len = strcspn(s, "\n");
    if (len) {
      n_got++;
      same = same && has_line(want, n_want, s, len);
    }
    s += len + (s[len] == '\n');
  }
  if (!same || n_got != n_want) {
    for (char *q = got; *q; q++)
      if (*q == '\n')
        *q = ',';
    return rrt_error_msgf(err, EIO,
                          "%s/devices.list reads \"%s\" after writing the rules, not the %zu "
                          "entries intended",
                          dir, got, n_want);
  }
  return 0;
}

static int v1_apply(const char *dir, const struct rule *v, size_t n, struct rrt_error *err)
{
  struct rrt_cg_v1_plan p;
  if (v1_plan(v, n, &p, err) < 0)
    return -1;
  /* "a" sets the default and clears every exception; then the exceptions to it. */
  const char *def = p.allow_default ? "devices.allow" : "devices.deny";
  const char *exc = p.allow_default ? "devices.deny" : "devices.allow";
  int r = rrt_cg_write(dir, def, "a", err);
  for (size_t i = 0; r == 0 && i < p.n; i++)
    r = rrt_cg_write(dir, exc, p.lines[i], err);
  if (r == 0)
    r = v1_verify(dir, &p, err);
  rrt_cg_v1_plan_free(&p);
  return r;
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

int rrt_cg_devices_program(json_object *devices, struct bpf_insn **insns, size_t *len,
                           struct rrt_error *err)
{
  struct rule *v = NULL;
  size_t n = 0;
  if (rules_build(devices, &v, &n, err) < 0)
    return -1;
  *insns = program(v, n, len);
  free(v);
  return 0;
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
