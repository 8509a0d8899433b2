/* seccomp.c: linux.seccomp -> BPF via libseccomp, an on-disk BPF cache, load and notify. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <nettle/sha2.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* The kernel refuses a single filter program longer than this. */
#define MAX_INSNS 4096

struct rrt_seccomp_filter {
  struct sock_fprog prog; /* prog.filter is ours (malloc) */
  unsigned int flags;     /* seccomp(2) flags, from linux.seccomp.flags */
  bool notify;            /* listenerPath is set: ask for a listener, send it there */
  int listener_sock;      /* connected to listenerPath at compile time, or -1 */
};

void rrt_seccomp_filter_free(struct rrt_seccomp_filter *f)
{
  if (!f)
    return;
  free(f->prog.filter);
  if (f->listener_sock >= 0)
    close(f->listener_sock);
  free(f);
}

int rrt_seccomp_filter_listener_fd(const struct rrt_seccomp_filter *f)
{
  return f ? f->listener_sock : -1;
}

void rrt_seccomp_filter_release_listener(struct rrt_seccomp_filter *f)
{
  if (f && f->listener_sock >= 0) {
    close(f->listener_sock);
    f->listener_sock = -1;
  }
}

static void filter_freep(struct rrt_seccomp_filter **f)
{
  rrt_seccomp_filter_free(*f);
}

static void ctx_releasep(scmp_filter_ctx *ctx)
{
  if (*ctx)
    seccomp_release(*ctx);
}

static void json_putp(struct json_object **o)
{
  if (*o)
    json_object_put(*o);
}

/* ---- config.json words -> libseccomp values ---- */

/* SCMP_ACT_* with its errnoRet. The runtime-spec demands an error when
 * errnoRet is given to an action that cannot carry it. */
static int parse_action(const char *name, bool has_errno, uint32_t errno_ret, const char *where,
                        uint32_t *out, struct rrt_error *err)
{
  bool takes_errno = false;
  if (!name)
    return rrt_error_set(err, 0, "%s: missing action", where);
  if (has_errno && errno_ret > 0xffff)
    return rrt_error_set(err, 0, "%s: errnoRet %u out of range (0-65535)", where, errno_ret);
  uint32_t ret = has_errno ? errno_ret : EPERM;
  if (strcmp(name, "SCMP_ACT_KILL") == 0 || strcmp(name, "SCMP_ACT_KILL_THREAD") == 0) {
    *out = SCMP_ACT_KILL_THREAD;
  } else if (strcmp(name, "SCMP_ACT_KILL_PROCESS") == 0) {
    *out = SCMP_ACT_KILL_PROCESS;
  } else if (strcmp(name, "SCMP_ACT_TRAP") == 0) {
    *out = SCMP_ACT_TRAP;
  } else if (strcmp(name, "SCMP_ACT_ERRNO") == 0) {
    *out = SCMP_ACT_ERRNO(ret);
    takes_errno = true;
  } else if (strcmp(name, "SCMP_ACT_TRACE") == 0) {
    /* The tracer sees the value as PTRACE_GETEVENTMSG data; runc uses
     * errnoRet for it, and EPERM when absent. */
    *out = SCMP_ACT_TRACE(ret);
    takes_errno = true;
  } else if (strcmp(name, "SCMP_ACT_ALLOW") == 0) {
    *out = SCMP_ACT_ALLOW;
  } else if (strcmp(name, "SCMP_ACT_LOG") == 0) {
    *out = SCMP_ACT_LOG;
  } else if (strcmp(name, "SCMP_ACT_NOTIFY") == 0) {
    *out = SCMP_ACT_NOTIFY;
  } else {
    return rrt_error_set(err, 0, "%s: unknown action %s", where, name);
  }
  if (has_errno && !takes_errno)
    return rrt_error_set(err, 0, "%s: errnoRet is not valid with %s", where, name);
  return 0;
}

static int parse_op(const char *op, enum scmp_compare *out)
{
  static const struct {
    const char *name;
    enum scmp_compare op;
  } ops[] = {
      {"SCMP_CMP_NE", SCMP_CMP_NE},
      {"SCMP_CMP_LT", SCMP_CMP_LT},
      {"SCMP_CMP_LE", SCMP_CMP_LE},
      {"SCMP_CMP_EQ", SCMP_CMP_EQ},
      {"SCMP_CMP_GE", SCMP_CMP_GE},
      {"SCMP_CMP_GT", SCMP_CMP_GT},
      {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
  };
  for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++) {
    if (strcmp(op, ops[i].name) == 0) {
      *out = ops[i].op;
      return 0;
    }
  }
  return -1;
}

/* Architectures the runtime-spec lists; a libseccomp too old for one of them
 * (loongarch64 and m68k arrived in 2.6) is a warning, anything else an error. */
static bool arch_in_spec(const char *lower)
{
  static const char *const known[] = {
      "x86",     "x86_64",      "x32",    "arm",      "aarch64",     "mips",
      "mips64",  "mips64n32",   "mipsel", "mipsel64", "mipsel64n32", "ppc",
      "ppc64",   "ppc64le",     "s390",   "s390x",    "parisc",      "parisc64",
      "riscv64", "loongarch64", "m68k",   "sh",       "sheb",
  };
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
    if (strcmp(lower, known[i]) == 0)
      return true;
  return false;
}

static int add_architectures(scmp_filter_ctx ctx, const struct rrt_strv *archs,
                             struct rrt_error *err)
{
  for (size_t i = 0; i < archs->n; i++) {
    const char *name = archs->v[i];
    if (!name || strncmp(name, "SCMP_ARCH_", 10) != 0)
      return rrt_error_set(err, 0, "linux.seccomp.architectures[%zu]: unknown architecture %s", i,
                           name ? name : "(null)");
    cleanup_free char *lower = xstrdup(name + 10);
    for (char *p = lower; *p; p++)
      *p = (char)tolower((unsigned char)*p);
    uint32_t token = seccomp_arch_resolve_name(lower);
    if (token == 0) {
      if (!arch_in_spec(lower))
        return rrt_error_set(err, 0, "linux.seccomp.architectures[%zu]: unknown architecture %s", i,
                             name);
      rrt_warn("linux.seccomp.architectures[%zu]: %s is not supported by this libseccomp, skipped",
               i, name);
      continue;
    }
    int r = seccomp_arch_add(ctx, token);
    if (r < 0 && r != -EEXIST) /* the native arch is always there */
      return rrt_error_set(err, -r, "linux.seccomp.architectures[%zu]: add %s", i, name);
  }
  return 0;
}

/* linux.seccomp.flags -> seccomp(2) flags. They are not libseccomp filter
 * attributes here because the runtime loads the exported BPF itself. */
static int parse_flags(const struct rrt_seccomp *sc, bool notify, unsigned int *out,
                       struct rrt_error *err)
{
  unsigned int flags = 0;
  for (size_t i = 0; i < sc->flags.n; i++) {
    const char *f = sc->flags.v[i];
    if (f && strcmp(f, "SECCOMP_FILTER_FLAG_TSYNC") == 0) {
      flags |= SECCOMP_FILTER_FLAG_TSYNC;
    } else if (f && strcmp(f, "SECCOMP_FILTER_FLAG_LOG") == 0) {
      flags |= SECCOMP_FILTER_FLAG_LOG;
    } else if (f && strcmp(f, "SECCOMP_FILTER_FLAG_SPEC_ALLOW") == 0) {
      flags |= SECCOMP_FILTER_FLAG_SPEC_ALLOW;
    } else if (f && strcmp(f, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") == 0) {
      /* The kernel only accepts it together with a listener. */
      if (notify)
        flags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
      else
        rrt_warn("linux.seccomp.flags[%zu]: %s has no effect without SCMP_ACT_NOTIFY, ignored", i,
                 f);
    } else {
      return rrt_error_set(err, 0, "linux.seccomp.flags[%zu]: unknown flag %s", i,
                           f ? f : "(null)");
    }
  }
  *out = flags;
  return 0;
}

/* ---- libseccomp compilation ---- */

static int add_syscall_rules(scmp_filter_ctx ctx, const struct rrt_seccomp_syscall *s, size_t i,
                             uint32_t action, struct rrt_error *err)
{
  if (s->n_args > 6)
    return rrt_error_set(err, 0, "linux.seccomp.syscalls[%zu].args: more than 6 entries", i);
  struct scmp_arg_cmp cmps[6];
  bool seen[6] = {false};
  bool repeated = false;
  for (size_t a = 0; a < s->n_args; a++) {
    const struct rrt_seccomp_arg *arg = &s->args[a];
    enum scmp_compare op;
    if (arg->index > 5)
      return rrt_error_set(err, 0, "linux.seccomp.syscalls[%zu].args[%zu]: index %u > 5", i, a,
                           arg->index);
    if (parse_op(arg->op, &op) < 0)
      return rrt_error_set(err, 0, "linux.seccomp.syscalls[%zu].args[%zu]: unknown op %s", i, a,
                           arg->op ? arg->op : "(null)");
    /* For SCMP_CMP_MASKED_EQ value is the mask and valueTwo the datum. */
    cmps[a] = (struct scmp_arg_cmp){arg->index, op, arg->value, arg->value_two};
    if (seen[arg->index])
      repeated = true;
    seen[arg->index] = true;
  }

  for (size_t j = 0; j < s->names.n; j++) {
    const char *name = s->names.v[j];
    int nr = name ? seccomp_syscall_resolve_name(name) : __NR_SCMP_ERROR;
    if (nr == __NR_SCMP_ERROR) {
      /* Profiles list syscalls of newer kernels and other arches; every
       * engine skips the ones this libseccomp cannot name. */
      rrt_warn("linux.seccomp.syscalls[%zu].names[%zu]: unknown syscall %s, skipped", i, j,
               name ? name : "(null)");
      continue;
    }
    int r;
    if (s->n_args == 0 || !repeated) {
      r = seccomp_rule_add_array(ctx, action, nr, (unsigned)s->n_args, cmps);
    } else {
      /* libseccomp ANDs the comparisons of one rule and cannot compare one
       * argument twice; OCI means them ORed, so one rule per comparison. */
      r = 0;
      for (size_t a = 0; a < s->n_args && r >= 0; a++)
        r = seccomp_rule_add_array(ctx, action, nr, 1, &cmps[a]);
    }
    if (r < 0)
      return rrt_error_set(err, -r, "linux.seccomp.syscalls[%zu]: add rule for %s", i, name);
  }
  return 0;
}

/* seccomp_export_bpf writes to an fd; a memfd turns that into memory. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_filter **insns, size_t *n,
                      struct rrt_error *err)
{
  cleanup_close int fd = memfd_create("rrt-seccomp-bpf", MFD_CLOEXEC);
  if (fd < 0)
    return rrt_error_errno(err, "seccomp: memfd_create");
  int r = seccomp_export_bpf(ctx, fd);
  if (r < 0)
    return rrt_error_set(err, -r, "seccomp: export BPF");
  if (lseek(fd, 0, SEEK_SET) < 0)
    return rrt_error_errno(err, "seccomp: lseek");
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (rrt_read_fd(fd, &buf, &len, err) < 0)
    return rrt_error_wrap(err, "seccomp: read BPF");
  if (len == 0 || len % sizeof(struct sock_filter) != 0)
    return rrt_error_set(err, 0, "seccomp: libseccomp produced %zu bytes of BPF", len);
  if (len / sizeof(struct sock_filter) > MAX_INSNS)
    return rrt_error_set(err, E2BIG, "seccomp: filter has %zu instructions, the kernel takes %d",
                         len / sizeof(struct sock_filter), MAX_INSNS);
  *n = len / sizeof(struct sock_filter);
  *insns = xmalloc(len);
  memcpy(*insns, buf, len);
  return 0;
}

/* ---- ENOSYS for syscalls newer than the profile ---- */

/*
 * A syscall the profile cannot know (newer than every one it names) gets ENOSYS rather than the
 * default action, so that programs fall back as they do on an older kernel (glibc's clone3 to
 * clone, faccessat2 to faccessat): with EPERM they give up. runc's patchbpf does the same; this
 * is our own program. Before libseccomp's, per architecture of the filter (its audit arch, x32
 * told from x86_64 by bit 30 of the number, as the kernel does):
 *
 *     ld arch; jeq ARCH_1 -> S_1; ...; ja FILTER
 *     S_i: ld nr; [x86_64: jset X32_BIT -> X32]; jgt MAX_i -> ENOSYS; ja FILTER
 *          [X32: jgt MAX_x32 -> ENOSYS; ja FILTER]; ENOSYS: ret ERRNO(ENOSYS)
 *     FILTER: libseccomp's program, untouched
 *
 * MAX is the highest number the profile's names (any rule, any action) resolve to on that
 * architecture; an architecture none of them resolves on is left to the filter, and so is the
 * other half of x86_64 when only one of x86_64 and x32 is listed (the filter's bad-arch action).
 * Only for a default that denies (errno, kill, trap, notify): with ALLOW, LOG or TRACE a new
 * syscall already reaches the kernel, as runc decides.
 */
#define X32_SYSCALL_BIT 0x40000000U

struct arch_max {
  uint32_t audit; /* AUDIT_ARCH_*, what seccomp_data.arch holds */
  int64_t max;    /* highest number named for it, -1: none */
  int64_t x32;    /* on AUDIT_ARCH_X86_64: the same for x32 (bit 30 included), -1: none */
};

static bool default_denies(uint32_t def)
{
  uint32_t act = def & 0xffff0000U;
  return act != SCMP_ACT_ALLOW && act != SCMP_ACT_LOG && act != SCMP_ACT_TRACE(0);
}

static int64_t highest_named(const struct rrt_seccomp *sc, uint32_t token)
{
  int64_t max = -1;
  for (size_t i = 0; i < sc->n_syscalls; i++)
    for (size_t j = 0; j < sc->syscalls[i].names.n; j++) {
      const char *name = sc->syscalls[i].names.v[j];
      int nr = name ? seccomp_syscall_resolve_name_arch(token, name) : -1;
      if (nr >= 0 && nr > max) /* negative: unknown, or a multiplexed pseudo-syscall */
        max = nr;
    }
  return max;
}

/* The filter's architectures: the native one (libseccomp always has it) and those listed. */
static size_t collect_arches(const struct rrt_seccomp *sc, struct arch_max *out, size_t cap)
{
  uint32_t tokens[64];
  size_t nt = 0;
  tokens[nt++] = seccomp_arch_native();
  for (size_t i = 0; i < sc->architectures.n && nt < 64; i++) {
    const char *name = sc->architectures.v[i];
    cleanup_free char *lower = xstrdup(name + 10); /* add_architectures checked SCMP_ARCH_ */
    for (char *p = lower; *p; p++)
      *p = (char)tolower((unsigned char)*p);
    uint32_t t = seccomp_arch_resolve_name(lower);
    if (t != 0)
      tokens[nt++] = t;
  }
  size_t n = 0;
  for (size_t i = 0; i < nt; i++) {
    bool x32 = tokens[i] == SCMP_ARCH_X32;
    uint32_t audit = x32 ? SCMP_ARCH_X86_64 : tokens[i];
    size_t k = 0;
    while (k < n && out[k].audit != audit)
      k++;
    if (k == n) {
      if (n == cap)
        continue;
      out[n++] = (struct arch_max){.audit = audit, .max = -1, .x32 = -1};
    }
    int64_t m = highest_named(sc, tokens[i]);
    if (x32)
      out[k].x32 = m;
    else
      out[k].max = m;
  }
  return n;
}

/* An instruction whose jump targets are absolute indexes, made relative at the end. */
struct stub_insn {
  uint16_t code;
  uint32_t k;
  size_t jt, jf; /* conditional jumps: targets; BPF_JA: jt is the target */
};

#define STUB_FILTER ((size_t)-1) /* the first instruction of libseccomp's program */

static int enosys_stub(const struct rrt_seccomp *sc, struct sock_filter **out, size_t *n_out,
                       struct rrt_error *err)
{
  struct arch_max arches[32];
  size_t na = collect_arches(sc, arches, 32), n_used = 0;
  struct arch_max *used[32];
  for (size_t i = 0; i < na; i++)
    if (arches[i].max >= 0 || (arches[i].audit == SCMP_ARCH_X86_64 && arches[i].x32 >= 0))
      used[n_used++] = &arches[i];
  *out = NULL;
  *n_out = 0;
  if (n_used == 0)
    return 0;
  struct stub_insn p[8 + 32 * 8];
  size_t n = 0, jeq[32];
  p[n++] = (struct stub_insn){BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0};
  for (size_t i = 0; i < n_used; i++) {
    jeq[i] = n;
    p[n++] = (struct stub_insn){BPF_JMP | BPF_JEQ | BPF_K, used[i]->audit, 0, 0};
  }
  p[n++] = (struct stub_insn){BPF_JMP | BPF_JA, 0, STUB_FILTER, 0};
  for (size_t i = 0; i < n_used; i++) {
    const struct arch_max *a = used[i];
    bool x86_64 = a->audit == SCMP_ARCH_X86_64;
    p[jeq[i]].jt = n;
    p[jeq[i]].jf = jeq[i] + 1;
    p[n++] = (struct stub_insn){BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0};
    size_t jset = n;
    if (x86_64)
      p[n++] = (struct stub_insn){BPF_JMP | BPF_JSET | BPF_K, X32_SYSCALL_BIT, 0, 0};
    /* Both halves jump to the section's ENOSYS return, placed last: fixed up below. */
    size_t gt[2] = {0, 0}, ngt = 0;
    if (x86_64)
      p[jset].jf = n;
    if (a->max >= 0) {
      size_t at = gt[ngt++] = n++;
      p[at] = (struct stub_insn){BPF_JMP | BPF_JGT | BPF_K, (uint32_t)a->max, 0, at + 1};
    }
    p[n++] = (struct stub_insn){BPF_JMP | BPF_JA, 0, STUB_FILTER, 0};
    if (x86_64) {
      p[jset].jt = n;
      if (a->x32 >= 0) {
        size_t at = gt[ngt++] = n++;
        p[at] = (struct stub_insn){BPF_JMP | BPF_JGT | BPF_K, (uint32_t)a->x32, 0, at + 1};
      }
      p[n++] = (struct stub_insn){BPF_JMP | BPF_JA, 0, STUB_FILTER, 0};
    }
    for (size_t g = 0; g < ngt; g++)
      p[gt[g]].jt = n;
    p[n++] = (struct stub_insn){BPF_RET | BPF_K, SCMP_ACT_ERRNO(ENOSYS), 0, 0};
  }
  struct sock_filter *f = xcalloc(n, sizeof(*f));
  for (size_t i = 0; i < n; i++) {
    size_t jt = p[i].jt == STUB_FILTER ? n : p[i].jt, jf = p[i].jf == STUB_FILTER ? n : p[i].jf;
    f[i] = (struct sock_filter){.code = p[i].code, .k = p[i].k};
    if (BPF_CLASS(p[i].code) != BPF_JMP)
      continue;
    if (BPF_OP(p[i].code) == BPF_JA) {
      f[i].k = (uint32_t)(jt - i - 1);
      continue;
    }
    if (jt - i - 1 > 255 || jf - i - 1 > 255) {
      free(f);
      return rrt_error_set(err, E2BIG, "seccomp: the ENOSYS check does not fit a short jump");
    }
    f[i].jt = (uint8_t)(jt - i - 1);
    f[i].jf = (uint8_t)(jf - i - 1);
  }
  *out = f;
  *n_out = n;
  return 0;
}

/* The stub in front of libseccomp's program, when the default denies. */
static int prepend_enosys(const struct rrt_seccomp *sc, uint32_t def, struct sock_filter **insns,
                          size_t *n, struct rrt_error *err)
{
  if (!default_denies(def))
    return 0;
  cleanup_free struct sock_filter *stub = NULL;
  size_t ns = 0;
  if (enosys_stub(sc, &stub, &ns, err) < 0)
    return -1;
  if (ns == 0)
    return 0;
  if (ns + *n > MAX_INSNS)
    return rrt_error_set(err, E2BIG, "seccomp: filter has %zu instructions, the kernel takes %d",
                         ns + *n, MAX_INSNS);
  struct sock_filter *all = xcalloc(ns + *n, sizeof(*all));
  memcpy(all, stub, ns * sizeof(*all));
  memcpy(all + ns, *insns, *n * sizeof(*all));
  free(*insns);
  *insns = all;
  *n += ns;
  return 0;
}

static int compile_bpf(const struct rrt_seccomp *sc, struct sock_filter **insns, size_t *n,
                       struct rrt_error *err)
{
  uint32_t def;
  if (parse_action(sc->default_action, sc->has_default_errno_ret, sc->default_errno_ret,
                   "linux.seccomp.defaultAction", &def, err) < 0)
    return -1;
  __attribute__((cleanup(ctx_releasep))) scmp_filter_ctx ctx = seccomp_init(def);
  if (!ctx)
    return rrt_error_set(err, 0, "linux.seccomp.defaultAction: libseccomp refuses %s",
                         sc->default_action);
  /* The runtime decides about no_new_privs (process.noNewPrivileges) and
   * loads the BPF itself; this keeps libseccomp from ever setting it. */
  int r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (r < 0)
    return rrt_error_set(err, -r, "seccomp: clear SCMP_FLTATR_CTL_NNP");
  /* A binary tree of syscalls keeps 300-entry allow lists cheap per syscall;
   * older libseccomp lacks it, which only costs speed. */
  (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

  if (add_architectures(ctx, &sc->architectures, err) < 0)
    return -1;

  for (size_t i = 0; i < sc->n_syscalls; i++) {
    const struct rrt_seccomp_syscall *s = &sc->syscalls[i];
    cleanup_free char *where = xasprintf("linux.seccomp.syscalls[%zu]", i);
    uint32_t action;
    if (parse_action(s->action, s->has_errno_ret, s->errno_ret, where, &action, err) < 0)
      return -1;
    /* libseccomp rejects a rule that repeats the default (EACCES); it would
     * change nothing anyway. */
    if (action == def)
      continue;
    if (add_syscall_rules(ctx, s, i, action, err) < 0)
      return -1;
  }
  if (export_bpf(ctx, insns, n, err) < 0)
    return -1;
  if (prepend_enosys(sc, def, insns, n, err) < 0) {
    free(steal_ptr(insns));
    return -1;
  }
  return 0;
}

/* ---- the cache ---- */

/* A cache file: this header, the profile it was compiled from (profile_len bytes: cache_input()),
 * then n_insns sock_filter instructions as built. The file's name is the sha256 of the profile;
 * a hit still compares the stored profile with the one asked for byte for byte, so that a name
 * that matches by accident (or by a crafted collision, where the cache is shared) never loads
 * another profile's filter. */
struct cache_header {
  char magic[8];
  uint32_t profile_len;
  uint32_t n_insns;
};

static const char cache_magic[8] = {'R', 'R', 'T', 'B', 'P', 'F', '3', '\n'};

/* What decides the BPF, as the exact bytes the key is made of: this runtime's version, the
 * libseccomp that compiles it (its syscall tables and code generation), the arch it compiles for
 * and the profile (canonical_json, what compile_bpf is given). */
static char *cache_input(const struct rrt_seccomp *sc, size_t *len)
{
  const struct scmp_version *v = seccomp_version();
  char *s = xasprintf("rrt-seccomp-cache-v3 rootlessrt=%s libseccomp=%u.%u.%u native=%u%c%s",
                      RRT_VERSION, v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0,
                      seccomp_arch_native(), '\0', sc->canonical_json);
  *len = strlen(s) + 1 + strlen(sc->canonical_json);
  return s;
}

static void cache_name(const char *input, size_t len, char hex[2 * SHA256_DIGEST_SIZE + 1])
{
  struct sha256_ctx ctx;
  uint8_t raw[SHA256_DIGEST_SIZE];
  sha256_init(&ctx);
  sha256_update(&ctx, len, (const uint8_t *)input);
  sha256_digest(&ctx, sizeof(raw), raw);
  for (size_t i = 0; i < sizeof(raw); i++)
    snprintf(hex + 2 * i, 3, "%02x", raw[i]);
}

/* 0 and the program on a hit, 1 on a miss; a damaged file, or one holding another profile, is a
 * miss. */
static int cache_read(const char *path, const char *input, size_t input_len,
                      struct sock_filter **insns, size_t *n)
{
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) {
    if (errno != ENOENT)
      rrt_warn("seccomp cache: open %s: %s, recompiling", path, strerror(errno));
    return 1;
  }
  cleanup_free char *buf = NULL;
  size_t len = 0;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_read_fd(fd, &buf, &len, &e) < 0) {
    rrt_warn("seccomp cache: %s: %s, recompiling", path, rrt_error_msg(&e));
    rrt_error_clear(&e);
    return 1;
  }
  struct cache_header h;
  if (len < sizeof(h))
    goto damaged;
  memcpy(&h, buf, sizeof(h));
  if (memcmp(h.magic, cache_magic, sizeof(cache_magic)) != 0 || h.n_insns == 0 ||
      h.n_insns > MAX_INSNS || h.profile_len > len - sizeof(h) ||
      len - sizeof(h) - h.profile_len != (size_t)h.n_insns * sizeof(struct sock_filter))
    goto damaged;
  if (h.profile_len != input_len || memcmp(buf + sizeof(h), input, input_len) != 0) {
    rrt_warn("seccomp cache: %s holds the filter of another profile, recompiling", path);
    return 1;
  }
  *n = h.n_insns;
  *insns = xmalloc(*n * sizeof(struct sock_filter));
  memcpy(*insns, buf + sizeof(h) + h.profile_len, *n * sizeof(struct sock_filter));
  return 0;
damaged:
  rrt_warn("seccomp cache: %s is damaged, recompiling", path);
  return 1;
}

/* Written to a temporary name and renamed: a reader sees the old file or the
 * whole new one. No fsync: a file cut short by a crash fails the size check
 * and is simply recompiled. Failures only cost the next compile. */
static void cache_write(const char *dir, const char *path, const char *input, size_t input_len,
                        const struct sock_filter *insns, size_t n)
{
  if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
    rrt_warn("seccomp cache: mkdir %s: %s", dir, strerror(errno));
    return;
  }
  cleanup_free char *tmp = xasprintf("%s.%d.tmp", path, (int)getpid());
  cleanup_close int fd =
      open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd < 0) {
    rrt_warn("seccomp cache: create %s: %s", tmp, strerror(errno));
    return;
  }
  struct cache_header h = {.profile_len = (uint32_t)input_len, .n_insns = (uint32_t)n};
  memcpy(h.magic, cache_magic, sizeof(cache_magic));
  if (rrt_write_all(fd, &h, sizeof(h)) < 0 || rrt_write_all(fd, input, input_len) < 0 ||
      rrt_write_all(fd, insns, n * sizeof(struct sock_filter)) < 0 || rename(tmp, path) < 0) {
    rrt_warn("seccomp cache: write %s: %s", path, strerror(errno));
    unlink(tmp);
  }
}

static bool has_notify(const struct rrt_seccomp *sc)
{
  for (size_t i = 0; i < sc->n_syscalls; i++)
    if (sc->syscalls[i].action && strcmp(sc->syscalls[i].action, "SCMP_ACT_NOTIFY") == 0)
      return true;
  return false;
}

static int listener_connect(const char *path, struct rrt_error *err);

int rrt_seccomp_compile(const struct rrt_seccomp *sc, const char *cache_dir,
                        struct rrt_seccomp_filter **out, struct rrt_error *err)
{
  __attribute__((cleanup(filter_freep))) struct rrt_seccomp_filter *f = xzalloc(sizeof(*f));
  f->listener_sock = -1;
  if (has_notify(sc) && !sc->listener_path)
    return rrt_error_set(err, 0, "linux.seccomp: SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath");
  /* A listenerPath without any SCMP_ACT_NOTIFY rule still gets its one connection, the state and
   * a listener (that never has a notification to read), as crun does: an agent waiting on the
   * socket is never left blocked until its own timeout. config-linux.md lets the runtime ignore
   * the path then; runc does, and its agents wait. */
  f->notify = sc->listener_path != NULL;
  if (parse_flags(sc, f->notify, &f->flags, err) < 0)
    return -1;
  /* listenerPath is a path of the runtime's filesystem: connect now, before
   * init pivots into the container (or exec joins its mount namespace). */
  if (f->notify) {
    f->listener_sock = listener_connect(sc->listener_path, err);
    if (f->listener_sock < 0)
      return -1;
  }

  struct sock_filter *insns = NULL;
  size_t n = 0;
  cleanup_free char *path = NULL;
  cleanup_free char *input = NULL;
  size_t input_len = 0;
  if (cache_dir && sc->canonical_json && strlen(sc->canonical_json) < UINT32_MAX / 2) {
    char name[2 * SHA256_DIGEST_SIZE + 1];
    input = cache_input(sc, &input_len);
    cache_name(input, input_len, name);
    path = xasprintf("%s/%s.bpf", cache_dir, name);
    if (cache_read(path, input, input_len, &insns, &n) == 0) {
      rrt_debug("seccomp: cache hit %s", path);
      f->prog.filter = insns;
      f->prog.len = (unsigned short)n;
      *out = steal_ptr(&f);
      return 0;
    }
  }
  if (compile_bpf(sc, &insns, &n, err) < 0)
    return -1;
  f->prog.filter = insns;
  f->prog.len = (unsigned short)n;
  if (path)
    cache_write(cache_dir, path, input, input_len, insns, n);
  *out = steal_ptr(&f);
  return 0;
}

/* ---- loading and the notify listener ---- */

/* The containerProcessState of config-linux.md: what a seccomp agent reads
 * next to the listener fd. */
static int notify_payload(const struct rrt_seccomp *sc, const char *state_json, char **out,
                          struct rrt_error *err)
{
  if (!state_json)
    return rrt_error_set(err, 0, "seccomp notify: no container state to send");
  __attribute__((cleanup(json_putp))) struct json_object *state = json_tokener_parse(state_json);
  if (!state || !json_object_is_type(state, json_type_object))
    return rrt_error_set(err, 0, "seccomp notify: the container state is not a JSON object");
  /* The pid "as seen by the runtime": the state has it; inside a new pid
   * namespace getpid() would say 1. */
  int64_t pid = getpid();
  struct json_object *p = NULL;
  if (json_object_object_get_ex(state, "pid", &p) && json_object_is_type(p, json_type_int))
    pid = json_object_get_int64(p);

  __attribute__((cleanup(json_putp))) struct json_object *o = json_object_new_object();
  struct json_object *fds = json_object_new_array();
  json_object_array_add(fds, json_object_new_string("seccompFd"));
  json_object_object_add(o, "ociVersion", json_object_new_string(RRT_OCI_VERSION));
  json_object_object_add(o, "fds", fds);
  json_object_object_add(o, "pid", json_object_new_int64(pid));
  if (sc->listener_metadata)
    json_object_object_add(o, "metadata", json_object_new_string(sc->listener_metadata));
  json_object_object_add(o, "state", json_object_get(state));
  *out = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  return 0;
}

static int listener_connect(const char *path, struct rrt_error *err)
{
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(addr.sun_path))
    return rrt_error_set(err, ENAMETOOLONG, "linux.seccomp.listenerPath %s", path);
  strcpy(addr.sun_path, path);
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return rrt_error_errno(err, "seccomp notify: socket");
  int r;
  do
    r = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return rrt_error_errno(err,
                           "seccomp notify: failed to connect with seccomp agent at "
                           "linux.seccomp.listenerPath %s",
                           path);
  return steal_fd(&fd);
}

/* The fd travels with the first bytes, as the spec requires; the rest of a
 * long payload follows in plain sends. */
static int send_listener(int sock, int listener, const char *payload, const char *path,
                         struct rrt_error *err)
{
  size_t len = strlen(payload), sent = 0;
  union rrt_fd_cmsg ctl;
  struct iovec iov = {.iov_base = (void *)payload, .iov_len = len};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  rrt_msg_attach_fd(&msg, &ctl, listener);
  ssize_t w;
  do
    w = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return rrt_error_errno(err, "seccomp notify: send to %s", path);
  sent = (size_t)w;
  while (sent < len) {
    w = send(sock, payload + sent, len - sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return rrt_error_errno(err, "seccomp notify: send to %s", path);
    sent += (size_t)w;
  }
  return 0;
}

/*
 * Without no_new_privs the kernel only takes a filter from a task with
 * CAP_SYS_ADMIN in its user namespace. The container init has it as userns
 * root before execve, but not after switching to a non-root user: the caller
 * either loads while it still holds caps or sets PR_SET_NO_NEW_PRIVS first.
 * Everything after this call runs under the filter, so it comes last, and the
 * listener socket is connected before it so the filter cannot refuse that.
 * The listener socket was connected by rrt_seccomp_compile, in the runtime's
 * mount namespace (listenerPath is a host path).
 */
int rrt_seccomp_load(struct rrt_seccomp_filter *f, const struct rrt_seccomp *sc,
                     const char *state_json, struct rrt_error *err)
{
  if (!f)
    return 0;
  unsigned int flags = f->flags;
  cleanup_close int sock = -1;
  cleanup_free char *payload = NULL;
  if (f->notify) {
    if (!sc || !sc->listener_path)
      return rrt_error_set(err, 0, "seccomp notify: no linux.seccomp.listenerPath");
    if (notify_payload(sc, state_json, &payload, err) < 0)
      return -1;
    sock = f->listener_sock >= 0 ? steal_fd(&f->listener_sock)
                                 : listener_connect(sc->listener_path, err);
    if (sock < 0)
      return -1;
    flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    /* TSYNC reports a failing thread by its id, which collides with the
     * listener fd as return value unless TSYNC_ESRCH is asked for. */
    if (flags & SECCOMP_FILTER_FLAG_TSYNC)
      flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
  }
  long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &f->prog);
  if (r < 0 && errno == EINVAL && (flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)) {
    rrt_warn("linux.seccomp.flags: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV is not supported by "
             "this kernel, ignored");
    flags &= ~(unsigned int)SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &f->prog);
  }
  if (r < 0) {
    if (errno == EACCES)
      return rrt_error_errno(err, "seccomp: load filter (needs no_new_privs or CAP_SYS_ADMIN)");
    return rrt_error_errno(err, "seccomp: load filter");
  }
  if (!f->notify)
    return 0;
  cleanup_close int listener = (int)r;
  return send_listener(sock, listener, payload, sc->listener_path, err);
}
