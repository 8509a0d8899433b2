/* sysctl.c: linux.sysctl: which namespace each key belongs to, the check at create that the
 * container has its own, and the writes inside init. A key outside every namespace, or one
 * whose namespace is the host's, would change the host: refused, as runc and crun do. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rootlessrt/sysctl.h"
#include "rootlessrt/util.h"

/* The key with '.' as the separator ("net/ipv4/ip_forward" -> "net.ipv4.ip_forward"); NULL
 * when malformed. */
static char *dotted(const char *key)
{
  if (!key[0] || key[0] == '.' || key[0] == '/')
    return NULL;
  char *d = xstrdup(key);
  for (char *p = d; *p; p++)
    if (*p == '/')
      *p = '.';
  /* An empty component ("a..b", "a.") or a ".." one would leave /proc/sys. */
  size_t n = strlen(d);
  if (strstr(d, "..") || d[n - 1] == '.') {
    free(d);
    return NULL;
  }
  return d;
}

int rrt_sysctl_namespace(const char *key)
{
  cleanup_free char *d = dotted(key);
  if (!d)
    return -1;
  static const char *const ipc_exact[] = {
      "kernel.sem",    "kernel.shmall",          "kernel.shmmax",
      "kernel.shmmni", "kernel.shm_rmid_forced", NULL};
  static const char *const ipc_prefix[] = {"fs.mqueue.", "kernel.msg", NULL};
  static const char *const uts_exact[] = {"kernel.hostname", "kernel.domainname", NULL};
  for (size_t i = 0; ipc_exact[i]; i++)
    if (strcmp(d, ipc_exact[i]) == 0)
      return CLONE_NEWIPC;
  for (size_t i = 0; ipc_prefix[i]; i++)
    if (strncmp(d, ipc_prefix[i], strlen(ipc_prefix[i])) == 0 && d[strlen(ipc_prefix[i])])
      return CLONE_NEWIPC;
  for (size_t i = 0; uts_exact[i]; i++)
    if (strcmp(d, uts_exact[i]) == 0)
      return CLONE_NEWUTS;
  if (strncmp(d, "net.", 4) == 0 && d[4])
    return CLONE_NEWNET;
  return 0;
}

/* Whether `path` names the namespace the runtime itself is in, or pid 1's (the host's, for a
 * runtime started in a private one, as a service with PrivateMounts= is); unknown (an error)
 * counts as ours, so that a check never passes on a guess. Pid 1's that cannot be looked at
 * (a user's runtime) is one the caller cannot join either. */
static bool is_own_namespace(const char *path, int type)
{
  const char *name = rrt_namespace_proc_name(type);
  cleanup_free char *own = xasprintf("/proc/self/ns/%s", name);
  cleanup_free char *host = xasprintf("/proc/1/ns/%s", name);
  struct stat a, b, h;
  if (stat(path, &a) < 0 || stat(own, &b) < 0)
    return true;
  if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    return true;
  return stat(host, &h) == 0 && a.st_dev == h.st_dev && a.st_ino == h.st_ino;
}

bool rrt_ns_private(const struct rrt_ns_plan *plan, int type)
{
  if (plan->ns_flags & type)
    return true;
  for (size_t i = 0; i < plan->n_join; i++)
    if (plan->join_types[i] == type)
      return !is_own_namespace(plan->join_paths[i], type);
  return false;
}

static const char *missing_reason(const struct rrt_ns_plan *plan, int type)
{
  for (size_t i = 0; i < plan->n_join; i++)
    if (plan->join_types[i] == type)
      return "the namespace joined by path is the runtime's (the host's) own";
  return "linux.namespaces has none";
}

/*
 * kernel.hostname and kernel.domainname are what `hostname` and `domainname` set: written after
 * them, a different value would silently replace what config.md says the container sees. A value
 * that says the same (as the kernel keeps it: up to a newline) changes nothing and is taken, as
 * is either key without its field (Docker sets its --domainname so); runc and crun refuse
 * kernel.hostname even then, which the runtime-spec does not ask for.
 */
static int check_uts_names(const struct rrt_spec *spec, const char *key, const char *value,
                           struct rrt_error *err)
{
  cleanup_free char *d = dotted(key);
  const char *field = NULL, *set = NULL;
  if (d && strcmp(d, "kernel.hostname") == 0)
    field = "hostname", set = spec->hostname;
  else if (d && strcmp(d, "kernel.domainname") == 0)
    field = "domainname", set = spec->domainname;
  if (!set)
    return 0;
  size_t n = strcspn(value, "\n");
  if (strlen(set) == n && strncmp(set, value, n) == 0)
    return 0;
  return rrt_error_msgf(err, EINVAL,
                        "linux.sysctl \"%s\": \"%.*s\" contradicts %s \"%s\" (set one of them)",
                        key, (int)n, value, field, set);
}

int rrt_sysctl_check(const struct rrt_spec *spec, const struct rrt_ns_plan *plan,
                     struct rrt_error *err)
{
  if ((spec->hostname || spec->domainname) && !rrt_ns_private(plan, CLONE_NEWUTS))
    return rrt_error_msgf(err, EINVAL, "%s: the container has no uts namespace of its own (%s)",
                          spec->hostname ? "hostname" : "domainname",
                          missing_reason(plan, CLONE_NEWUTS));
  for (size_t i = 0; spec->has_linux && i < spec->lnx.n_sysctl; i++) {
    const char *key = spec->lnx.sysctl[i].key;
    int type = rrt_sysctl_namespace(key);
    if (type < 0)
      return rrt_error_msgf(err, EINVAL, "linux.sysctl: invalid key \"%s\"", key);
    if (type == 0)
      return rrt_error_msgf(err, EINVAL,
                            "linux.sysctl \"%s\": not a namespaced sysctl; writing it would "
                            "change the host's",
                            key);
    if (!rrt_ns_private(plan, type))
      return rrt_error_msgf(err, EINVAL,
                            "linux.sysctl \"%s\": the container has no %s namespace of its own "
                            "(%s); writing it would change the host's",
                            key, rrt_namespace_type_name(type), missing_reason(plan, type));
    if (type == CLONE_NEWUTS && check_uts_names(spec, key, spec->lnx.sysctl[i].value, err) < 0)
      return -1;
  }
  return 0;
}

int rrt_sysctl_apply(const struct rrt_spec *spec, struct rrt_error *err)
{
  for (size_t i = 0; spec->has_linux && i < spec->lnx.n_sysctl; i++) {
    const struct rrt_kv *kv = &spec->lnx.sysctl[i];
    if (rrt_sysctl_namespace(kv->key) <= 0)
      return rrt_error_msgf(err, EINVAL, "linux.sysctl: refusing \"%s\"", kv->key);
    /* '/' in a dotted key is part of a name ("net.ipv4.conf.eth0/1.rp_filter" names eth0.1);
     * a key written with '/' keeps its dots. */
    bool slashes = kv->key[strcspn(kv->key, "./")] == '/';
    cleanup_free char *path = xasprintf("/proc/sys/%s", kv->key);
    for (char *p = path + strlen("/proc/sys/"); *p && !slashes; p++)
      *p = *p == '.' ? '/' : *p == '/' ? '.' : *p;
    if (rrt_write_file(path, kv->value, strlen(kv->value), O_TRUNC, 0, err) < 0)
      return rrt_error_wrap(err, "linux.sysctl \"%s\"", kv->key);
  }
  return 0;
}
