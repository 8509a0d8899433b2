/* caps.c: process.capabilities: name validation, bounding drop, capset and ambient. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

/* One bit per capability; the kernel has 41 today and its ABI stops at 64. */
typedef uint64_t capmask;

#define CAP_BIT(c) ((capmask)1 << (unsigned)(c))

enum { SET_BOUNDING, SET_EFFECTIVE, SET_PERMITTED, SET_INHERITABLE, SET_AMBIENT, SET__COUNT };

static const char *const set_names[SET__COUNT] = {"bounding", "effective", "permitted",
                                                  "inheritable", "ambient"};

struct capmasks {
  capmask m[SET__COUNT];
};

static const struct rrt_strv *caps_set(const struct rrt_caps *caps, int set)
{
  switch (set) {
  case SET_BOUNDING:
    return &caps->bounding;
  case SET_EFFECTIVE:
    return &caps->effective;
  case SET_PERMITTED:
    return &caps->permitted;
  case SET_INHERITABLE:
    return &caps->inheritable;
  default:
    return &caps->ambient;
  }
}

/* The highest capability the running kernel knows. /proc may not be mounted
 * (or be the container's) when this runs, so fall back to probing the
 * bounding set, which answers EINVAL past the last capability. */
static int last_cap(void)
{
  static int cached = -1;
  if (cached >= 0)
    return cached;
  cleanup_free char *buf = NULL;
  struct rrt_error ignored = RRT_ERROR_INIT;
  long long v = -1;
  if (rrt_read_file("/proc/sys/kernel/cap_last_cap", &buf, NULL, &ignored) == 0) {
    buf[strcspn(buf, "\n")] = '\0';
    if (rrt_parse_i64(buf, &v) < 0)
      v = -1;
  }
  rrt_error_clear(&ignored);
  if (v < 0 || v > 63) {
    v = 0;
    while (v < 63 && prctl(PR_CAPBSET_READ, (unsigned long)(v + 1), 0, 0, 0) >= 0)
      v++;
  }
  cached = (int)v;
  return cached;
}

/* OCI spells capabilities "CAP_CHOWN"; libcap also accepts bare numbers,
 * which config.json must not, so the prefix is checked first. */
static int cap_parse_name(const char *name, cap_value_t *out)
{
  if (!name || strncasecmp(name, "CAP_", 4) != 0)
    return -1;
  return cap_from_name(name, out);
}

/* Turns the five name lists into masks. Unknown names and names the running
 * kernel lacks are left out, with a warning when warn is set (only validation
 * sets it, so the child does not repeat it): config.md says a value that cannot
 * be mapped is logged as a warning and is no reason to fail. */
static int caps_to_masks(const struct rrt_caps *caps, bool warn, struct capmasks *out,
                         struct rrt_error *err)
{
  int last = last_cap();
  memset(out, 0, sizeof(*out));
  if (!caps)
    return 0;
  for (int s = 0; s < SET__COUNT; s++) {
    const struct rrt_strv *sv = caps_set(caps, s);
    for (size_t i = 0; i < sv->n; i++) {
      cap_value_t v;
      if (cap_parse_name(sv->v[i], &v) < 0) {
        if (warn)
          rrt_warn("process.capabilities.%s[%zu]: unknown capability %s, ignored", set_names[s], i,
                   sv->v[i] ? sv->v[i] : "(null)");
        continue;
      }
      if (v > last || v > 63) {
        if (warn)
          rrt_warn("process.capabilities.%s[%zu]: %s is not known to the running kernel "
                   "(last capability %d), ignored",
                   set_names[s], i, sv->v[i], last);
        continue;
      }
      out->m[s] |= CAP_BIT(v);
    }
  }
  return 0;
}

/* The kernel raises an ambient capability only when it is permitted and inheritable; buildah
 * lists ambient capabilities with no inheritable set, on every RUN step. crun says nothing and
 * runs it; rootlessrt does the same and notes it in the --log file only: on stderr it would read
 * as the container's output. */
static void note_unraisable_ambient(const struct rrt_caps *caps, const struct capmasks *m)
{
  capmask need = m->m[SET_PERMITTED] & m->m[SET_INHERITABLE];
  for (size_t i = 0; caps && i < caps->ambient.n; i++) {
    cap_value_t v;
    if (cap_parse_name(caps->ambient.v[i], &v) < 0 || !(m->m[SET_AMBIENT] & CAP_BIT(v)))
      continue;
    if (!(need & CAP_BIT(v)))
      rrt_log_file(RRT_LOG_WARNING,
                   "process.capabilities.ambient[%zu]: %s is not in both the permitted and "
                   "the inheritable sets, not raised",
                   i, caps->ambient.v[i]);
  }
}

int rrt_caps_validate(const struct rrt_caps *caps, struct rrt_error *err)
{
  struct capmasks m;
  if (caps_to_masks(caps, true, &m, err) < 0)
    return -1;
  note_unraisable_ambient(caps, &m);
  return 0;
}

static capmask current_permitted(void);

int rrt_caps_check_held(const struct rrt_caps *caps, struct rrt_error *err)
{
  capmask have = current_permitted();
  const int sets[] = {SET_BOUNDING, SET_EFFECTIVE, SET_PERMITTED};
  for (size_t k = 0; caps && k < sizeof(sets) / sizeof(sets[0]); k++) {
    const struct rrt_strv *sv = caps_set(caps, sets[k]);
    for (size_t i = 0; i < sv->n; i++) {
      cap_value_t v;
      if (cap_parse_name(sv->v[i], &v) < 0 || v > last_cap() || v > 63)
        continue; /* warned about at validation */
      if (prctl(PR_CAPBSET_READ, (unsigned long)v, 0, 0, 0) != 1)
        return rrt_error_msgf(err, EPERM,
                              "process.capabilities.%s[%zu]: %s is not in the runtime's bounding "
                              "set: it cannot be granted",
                              set_names[sets[k]], i, sv->v[i]);
      if (sets[k] != SET_BOUNDING && !(have & CAP_BIT(v)))
        return rrt_error_msgf(err, EPERM,
                              "process.capabilities.%s[%zu]: %s is not held by the runtime: it "
                              "cannot be granted",
                              set_names[sets[k]], i, sv->v[i]);
    }
  }
  return 0;
}

int rrt_caps_prepare(const struct rrt_caps *caps, struct rrt_error *err)
{
  struct capmasks m;
  if (caps_to_masks(caps, false, &m, err) < 0 || rrt_caps_check_held(caps, err) < 0)
    return -1;
  /* Without KEEPCAPS the switch away from uid 0 would empty the permitted set
   * before rrt_caps_apply can choose what stays. */
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return rrt_error_errno(err, "prctl(PR_SET_KEEPCAPS, 1)");
  int last = last_cap();
  for (int c = 0; c <= last; c++) {
    if (m.m[SET_BOUNDING] & CAP_BIT(c))
      continue;
    if (prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) < 0 && errno != EINVAL) {
      int saved = errno;
      char *name = cap_to_name((cap_value_t)c); /* libcap memory: cap_free */
      errno = saved;
      rrt_error_errno(err, "process.capabilities.bounding: drop %s", name ? name : "capability");
      cap_free(name);
      return -1;
    }
  }
  return 0;
}

static char *mask_names(capmask mask)
{
  char *s = xstrdup("");
  for (int c = 0; c < 64; c++) {
    if (!(mask & CAP_BIT(c)))
      continue;
    char *name = cap_to_name((cap_value_t)c);
    char *n = xasprintf("%s%s%s", s, *s ? ", " : "", name ? name : "?");
    cap_free(name);
    free(s);
    s = n;
  }
  return s;
}

static void cap_t_freep(cap_t *c)
{
  if (*c)
    cap_free(*c);
}

/* Sets one flag of a cap_t to exactly the capabilities in mask. */
static int cap_t_set_mask(cap_t c, cap_flag_t flag, capmask mask)
{
  for (int v = 0; v < 64; v++) {
    if (!(mask & CAP_BIT(v)))
      continue;
    cap_value_t val = (cap_value_t)v;
    if (cap_set_flag(c, flag, 1, &val, CAP_SET) < 0)
      return -1;
  }
  return 0;
}

/* The permitted set this process holds now: nothing can be added to it. */
static capmask current_permitted(void)
{
  __attribute__((cleanup(cap_t_freep))) cap_t cur = cap_get_proc();
  capmask m = 0;
  if (!cur)
    return 0;
  for (int v = 0; v <= last_cap() && v < 64; v++) {
    cap_flag_value_t fv = CAP_CLEAR;
    if (cap_get_flag(cur, (cap_value_t)v, CAP_PERMITTED, &fv) == 0 && fv == CAP_SET)
      m |= CAP_BIT(v);
  }
  return m;
}

int rrt_caps_apply(const struct rrt_caps *caps, struct rrt_error *err)
{
  struct capmasks m;
  if (caps_to_masks(caps, false, &m, err) < 0)
    return -1;

  /* rrt_caps_check_held refused what the runtime does not hold; should the kernel disagree,
   * capset says so. */
  /* The kernel refuses an effective capability that is not permitted. */
  m.m[SET_EFFECTIVE] &= m.m[SET_PERMITTED];

  __attribute__((cleanup(cap_t_freep))) cap_t c = cap_init();
  if (!c)
    return rrt_error_errno(err, "cap_init");
  /* The inheritable set stays empty unless config.json lists it: a non-empty
   * default let execve of file-capable binaries gain caps (CVE-2022-29162). */
  if (cap_t_set_mask(c, CAP_EFFECTIVE, m.m[SET_EFFECTIVE]) < 0 ||
      cap_t_set_mask(c, CAP_PERMITTED, m.m[SET_PERMITTED]) < 0 ||
      cap_t_set_mask(c, CAP_INHERITABLE, m.m[SET_INHERITABLE]) < 0)
    return rrt_error_errno(err, "process.capabilities: cap_set_flag");
  if (cap_set_proc(c) < 0) {
    cleanup_free char *inh = mask_names(m.m[SET_INHERITABLE]);
    return rrt_error_errno(err, "process.capabilities: capset (inheritable: %s)",
                           *inh ? inh : "none");
  }

  /* KEEPCAPS only bridged the uid switch; leaving it set would let the
   * container keep caps across a later setuid of its own. */
  if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return rrt_error_errno(err, "prctl(PR_SET_KEEPCAPS, 0)");

  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) {
    /* Kernels before 4.3 have no ambient set; only an error when asked for. */
    if (errno == EINVAL && m.m[SET_AMBIENT] == 0)
      return 0;
    return rrt_error_errno(err, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
  }
  const struct rrt_strv *amb = caps ? &caps->ambient : NULL;
  for (size_t i = 0; amb && i < amb->n; i++) {
    cap_value_t v;
    if (cap_parse_name(amb->v[i], &v) < 0 || !(m.m[SET_AMBIENT] & CAP_BIT(v)))
      continue; /* beyond the kernel's last cap: warned at validation */
    /* Not permitted and inheritable: not raised, as with crun (noted at validation). */
    capmask need = m.m[SET_PERMITTED] & m.m[SET_INHERITABLE];
    if (!(need & CAP_BIT(v)))
      continue;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long)v, 0, 0) < 0)
      return rrt_error_errno(err, "process.capabilities.ambient[%zu]: raise %s", i, amb->v[i]);
  }
  return 0;
}
