/* nested.c: where the runtime runs as far as ids go (a host, or a CI job's container), and the
 * default maps of a container started inside another one. */
#include <endian.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "rootlessrt/log.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

/* Kernel limit on lines in /proc/PID/{uid,gid}_map since Linux 4.15. */
#define MAX_MAP_LINES 340

static void ids_add(struct rrt_id_mappings *m, uint32_t container_id, uint32_t host_id,
                    uint32_t size)
{
  m->v = xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
  m->v[m->n++] = (struct rrt_id_mapping){container_id, host_id, size};
}

int rrt_userns_parse_own_map(const char *text, struct rrt_id_mappings *ids)
{
  ids->v = NULL;
  ids->n = 0;
  const char *p = text ? text : "";
  while (*p) {
    unsigned long inside, outside, count;
    int used = 0;
    if (sscanf(p, " %lu %lu %lu%n", &inside, &outside, &count, &used) != 3)
      break;
    if (count > 0 && inside <= UINT32_MAX && count <= UINT32_MAX && ids->n < MAX_MAP_LINES)
      ids_add(ids, (uint32_t)inside, (uint32_t)outside, (uint32_t)count);
    p += used;
    while (*p == '\n' || *p == ' ')
      p++;
  }
  return ids->n > 0 ? 0 : -1;
}

bool rrt_userns_ids_cover(const struct rrt_id_mappings *ids, unsigned long start,
                          unsigned long count)
{
  /* A range may span lines that follow each other: walk it piece by piece. */
  while (count > 0) {
    size_t i;
    for (i = 0; i < ids->n; i++) {
      unsigned long lo = ids->v[i].container_id, hi = lo + ids->v[i].size;
      if (start >= lo && start < hi) {
        unsigned long take = hi - start < count ? hi - start : count;
        start += take;
        count -= take;
        break;
      }
    }
    if (i == ids->n)
      return false;
  }
  return true;
}

static void caps_of(struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3])
{
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  memset(data, 0, sizeof(*data) * _LINUX_CAPABILITY_U32S_3);
  if (syscall(SYS_capget, &hdr, data) < 0)
    memset(data, 0, sizeof(*data) * _LINUX_CAPABILITY_U32S_3);
}

static bool effective(const struct __user_cap_data_struct *data, int cap)
{
  return (data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap)) != 0;
}

static bool bounding(int cap)
{
  return prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1;
}

static bool no_new_privs(void)
{
  return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
}

/*
 * Whether the kernel runs a helper with file capabilities at all, and gives it cap: every
 * capability the file asks must be in the bounding set, or exec fails with EPERM (the kernel's
 * rule for a file with the effective bit: it would run without what it counts on).
 */
static bool file_caps_granted(const char *path, int cap, const char **why)
{
  struct vfs_ns_cap_data d;
  memset(&d, 0, sizeof(d));
  ssize_t n = getxattr(path, "security.capability", &d, sizeof(d));
  /* Revision 1 holds one word of each set, 2 and 3 (the latter with a root id) two. */
  int words = n >= (ssize_t)XATTR_CAPS_SZ_2 ? 2 : n >= (ssize_t)XATTR_CAPS_SZ_1 ? 1 : 0;
  if ((le32toh(d.magic_etc) & VFS_CAP_REVISION_MASK) == VFS_CAP_REVISION_1 && words > 1)
    words = 1;
  bool has_cap = false;
  for (int w = 0; w < words; w++) {
    uint32_t permitted = le32toh(d.data[w].permitted);
    for (int b = 0; b < 32; b++) {
      if (!(permitted & (1U << b)))
        continue;
      if (!bounding(w * 32 + b)) {
        *why = "its file capabilities are not all in the capability bounding set, so the kernel "
               "refuses to run it";
        return false;
      }
      has_cap = has_cap || w * 32 + b == cap;
    }
  }
  if (!has_cap)
    *why = cap == CAP_SETUID ? "its file capabilities lack CAP_SETUID"
                             : "its file capabilities lack CAP_SETGID";
  return has_cap;
}

/*
 * Whether the helper at path (newuidmap needing cap CAP_SETUID, newgidmap CAP_SETGID) runs with
 * the privilege it needs here. Nested, a setuid newuidmap is often no use: the setuid bit is
 * ignored when its owner is not mapped (the host's binary in a rootless container), on a nosuid
 * mount or under no_new_privs; a setuid root one runs as uid 0, which is not the new
 * namespace's owner, so the kernel asks CAP_SYS_ADMIN over it, which only a bounding set with
 * CAP_SYS_ADMIN grants. A file-capability helper keeps the caller's euid.
 */
static bool helper_gets_privilege(const char *path, int cap, const struct rrt_userns_caller *c,
                                  const char **why)
{
  struct stat st;
  struct statvfs sv;
  if (stat(path, &st) < 0) {
    *why = "cannot stat it";
    return false;
  }
  if (no_new_privs()) {
    *why = "no_new_privs is set, so the kernel ignores its setuid bit and file capabilities";
    return false;
  }
  if (statvfs(path, &sv) == 0 && (sv.f_flag & ST_NOSUID)) {
    *why = "it lies on a nosuid mount";
    return false;
  }
  /* uid 0's maps map uid 0 (0 -> the caller), which the kernel's verify_root_map lets only a
   * writer with CAP_SETFCAP write; a helper run by uid 0 has the bounding set, whatever its
   * setuid bit or file capabilities say. */
  if (c->uid == 0 && !bounding(CAP_SETFCAP)) {
    *why = "run by uid 0 it writes a map of uid 0, which the kernel allows only with "
           "CAP_SETFCAP, and the capability bounding set lacks it";
    return false;
  }
  if (getxattr(path, "security.capability", NULL, 0) > 0)
    return file_caps_granted(path, cap, why); /* cap_setuid+ep, as Fedora ships it */
  if (!(st.st_mode & S_ISUID) || st.st_uid != 0) {
    *why = st.st_mode & S_ISUID ? "it is setuid to an id that is not this namespace's root"
                                : "it is neither setuid root nor has file capabilities";
    return false;
  }
  if (!bounding(CAP_SETUID) || !bounding(CAP_SETGID)) {
    *why = "the capability bounding set lacks CAP_SETUID or CAP_SETGID";
    return false;
  }
  if (c->euid != 0 && !bounding(CAP_SYS_ADMIN)) {
    *why = "it is setuid root and the bounding set lacks CAP_SYS_ADMIN, which the kernel asks "
           "of a map writer that is not the namespace's owner";
    return false;
  }
  return true;
}

void rrt_userns_caller_read(struct rrt_userns_caller *c)
{
  memset(c, 0, sizeof(*c));
  c->uid = getuid();
  c->gid = getgid();
  c->euid = geteuid();
  c->username = rrt_user_name(c->uid);
  c->subuid_file = "/etc/subuid";
  c->subgid_file = "/etc/subgid";
  c->initial = rrt_in_initial_userns();
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
  caps_of(data);
  bool sys_admin = effective(data, CAP_SYS_ADMIN);
  c->setid = effective(data, CAP_SETUID) && effective(data, CAP_SETGID);
  c->setfcap = effective(data, CAP_SETFCAP);
  c->host_privileged = c->initial && sys_admin;
  /* Root of a user namespace with every capability (rootless podman calls its runtime so):
   * it may make the other namespaces itself and honours the config as written. */
  c->privileged = c->host_privileged || (c->euid == 0 && sys_admin && c->setid);
  /* A host's user has a full bounding set in the initial namespace; a CI job's container
   * gives another user namespace or a bounding set without CAP_SYS_ADMIN. */
  c->nested = !c->initial || !bounding(CAP_SYS_ADMIN) || (c->euid == 0 && !c->host_privileged);
  cleanup_free char *um = NULL;
  cleanup_free char *gm = NULL;
  if (rrt_read_file("/proc/self/uid_map", &um, NULL, NULL) == 0)
    rrt_userns_parse_own_map(um, &c->uids);
  if (rrt_read_file("/proc/self/gid_map", &gm, NULL, NULL) == 0)
    rrt_userns_parse_own_map(gm, &c->gids);
  if (!c->nested)
    return;
  c->helpers_work = true;
  const char *names[] = {"newuidmap", "newgidmap"};
  const int needs[] = {CAP_SETUID, CAP_SETGID};
  for (size_t i = 0; i < 2 && c->helpers_work; i++) {
    cleanup_free char *p = rrt_userns_find_helper(names[i]);
    const char *why = "not found";
    if (!p || !helper_gets_privilege(p, needs[i], c, &why)) {
      c->helpers_work = false;
      c->helpers_why = xasprintf("%s: %s", p ? p : names[i], why);
    }
  }
}

void rrt_userns_caller_free(struct rrt_userns_caller *c)
{
  free(c->uids.v);
  free(c->gids.v);
  free(c->helpers_why);
  memset(c, 0, sizeof(*c));
}

/* The namespace's own ids, each mapped to itself: what a holder of CAP_SETUID and CAP_SETGID
 * may write for a child (user_namespaces(7)). */
static void identity(struct rrt_id_mappings *out, const struct rrt_id_mappings *ids)
{
  for (size_t i = 0; i < ids->n; i++) {
    uint32_t lo = ids->v[i].container_id, size = ids->v[i].size;
    /* Never the initial namespace's own map, 0 0 4294967295: that is how a runtime (this one
     * nested again, or the container's init) tells a host from a container. The last id,
     * 4294967294, stays out. */
    if ((uint64_t)lo + size > UINT32_MAX - 1)
      size = UINT32_MAX - 1 - lo;
    if (size > 0)
      ids_add(out, lo, lo, size);
  }
}

/* 0 -> the caller, then each subordinate range after the other, as far as the namespace has
 * those ids: false when it lacks them, or the user has none. */
static bool subordinate(struct rrt_id_mappings *out, uint32_t self,
                        const struct rrt_id_mappings *ids, const char *file, const char *user,
                        unsigned long id, const char **why)
{
  cleanup_free struct rrt_subid_range *r = NULL;
  size_t n = 0;
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_subid_lookup(file, user, id, &r, &n, &err) < 0) {
    rrt_error_clear(&err);
    *why = "cannot read it";
    return false;
  }
  if (n == 0) {
    *why = "no range for the user";
    return false;
  }
  uint64_t next = 1;
  ids_add(out, 0, self, 1);
  for (size_t i = 0; i < n && out->n < MAX_MAP_LINES; i++) {
    if (!rrt_userns_ids_cover(ids, r[i].start, r[i].count)) {
      *why = "its ranges are ids this namespace does not have";
      return false;
    }
    if (next + r[i].count >= UINT32_MAX)
      break;
    ids_add(out, (uint32_t)next, (uint32_t)r[i].start, (uint32_t)r[i].count);
    next += r[i].count;
  }
  return true;
}

void rrt_userns_plan_nested(struct rrt_userns_plan *plan, const struct rrt_userns_caller *c)
{
  if (c->setid && c->uids.n > 0 && c->gids.n > 0) {
    identity(&plan->uid_map, &c->uids);
    identity(&plan->gid_map, &c->gids);
    plan->method = RRT_MAP_DIRECT;
    rrt_debug("user namespace: nested, CAP_SETUID/CAP_SETGID: the namespace's %zu uid and %zu "
              "gid ranges map onto themselves",
              c->uids.n, c->gids.n);
    return;
  }
  const char *why = c->helpers_why ? c->helpers_why : "";
  if (c->helpers_work) {
    struct rrt_id_mappings u = {0}, g = {0};
    const char *uwhy = NULL, *gwhy = NULL;
    if (subordinate(&u, (uint32_t)c->uid, &c->uids, c->subuid_file, c->username, c->uid, &uwhy) &&
        subordinate(&g, (uint32_t)c->gid, &c->gids, c->subgid_file, c->username, c->uid, &gwhy)) {
      plan->uid_map = u;
      plan->gid_map = g;
      plan->method = RRT_MAP_HELPERS;
      return;
    }
    free(u.v);
    free(g.v);
    why = uwhy ? uwhy : gwhy;
  }
  rrt_debug("user namespace: nested, mapping only uid %u and gid %u (%s)", (unsigned)c->uid,
            (unsigned)c->gid, why);
  ids_add(&plan->uid_map, 0, (uint32_t)c->uid, 1);
  ids_add(&plan->gid_map, 0, (uint32_t)c->gid, 1);
  plan->method = RRT_MAP_SELF;
  plan->deny_setgroups = true;
}

int rrt_userns_plan_check_nested(const struct rrt_userns_plan *plan,
                                 const struct rrt_userns_caller *c, bool from_config,
                                 struct rrt_error *err)
{
  if (!c->nested || c->setfcap || plan->method == RRT_MAP_NONE || plan->method == RRT_MAP_HELPERS)
    return 0;
  for (size_t i = 0; i < plan->uid_map.n; i++) {
    if (plan->uid_map.v[i].host_id != 0)
      continue;
    /* The kernel's verify_root_map: uid 0 of the parent namespace goes into a child one only
     * from a writer holding CAP_SETFCAP there, or file capabilities could be forged. */
    return rrt_error_msgf(
        err, EPERM,
        "%suid 0 of this container may map itself into a new user namespace only with "
        "CAP_SETFCAP, which the outer container does not give%s%s%s: add CAP_SETFCAP to the "
        "outer container (Docker's and podman's defaults have it), or run the job as a non-root "
        "user",
        from_config ? "linux.uidMappings: " : "",
        c->helpers_why ? ", and the id-map helpers cannot stand in (" : "",
        c->helpers_why ? c->helpers_why : "", c->helpers_why ? ")" : "");
  }
  return 0;
}
