/* spec_default.c: the config.json `rootlessrt spec` writes, built with json-c. */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "rootlessrt/spec.h"
#include "rootlessrt/util.h"

static json_object *str(const char *s)
{
  return json_object_new_string(s);
}

/* A JSON array of a NULL-terminated list; STRS() builds the list in place. */
static json_object *strs(const char *const *v)
{
  json_object *arr = json_object_new_array();
  for (; *v; v++)
    json_object_array_add(arr, str(*v));
  return arr;
}
#define STRS(...) strs((const char *const[]){__VA_ARGS__, NULL})

static json_object *caps(void)
{
  json_object *c = json_object_new_object();
  /* The short list runc and crun grant by default; no inheritable or ambient set, so an
   * exec'd program gains nothing it was not given by file capabilities. */
  const char *const sets[] = {"bounding", "effective", "permitted"};
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
    json_object_object_add(c, sets[i], STRS("CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"));
  return c;
}

static json_object *process(void)
{
  json_object *p = json_object_new_object();
  json_object *user = json_object_new_object();
  json_object *rlimit = json_object_new_object();
  json_object *rlimits = json_object_new_array();

  /* An interactive shell, as runc's and crun's spec: runc's own tests start from this file and
   * hand the terminal to a --console-socket. */
  json_object_object_add(p, "terminal", json_object_new_boolean(1));
  json_object_object_add(user, "uid", json_object_new_int(0));
  json_object_object_add(user, "gid", json_object_new_int(0));
  json_object_object_add(p, "user", user);
  json_object_object_add(p, "args", STRS("sh"));
  json_object_object_add(
      p, "env",
      STRS("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"));
  json_object_object_add(p, "cwd", str("/"));
  json_object_object_add(p, "capabilities", caps());
  json_object_object_add(rlimit, "type", str("RLIMIT_NOFILE"));
  json_object_object_add(rlimit, "hard", json_object_new_int(1024));
  json_object_object_add(rlimit, "soft", json_object_new_int(1024));
  json_object_array_add(rlimits, rlimit);
  json_object_object_add(p, "rlimits", rlimits);
  json_object_object_add(p, "noNewPrivileges", json_object_new_boolean(1));
  return p;
}

static json_object *mount(const char *destination, const char *type, const char *source,
                          json_object *options)
{
  json_object *m = json_object_new_object();
  json_object_object_add(m, "destination", str(destination));
  json_object_object_add(m, "type", str(type));
  json_object_object_add(m, "source", str(source));
  if (options)
    json_object_object_add(m, "options", options);
  return m;
}

static json_object *mounts(bool rootless)
{
  json_object *arr = json_object_new_array();
  json_object_array_add(arr, mount("/proc", "proc", "proc", NULL));
  json_object_array_add(arr, mount("/dev", "tmpfs", "tmpfs",
                                   STRS("nosuid", "strictatime", "mode=755", "size=65536k")));
  /* gid=5 (tty) is usually unmapped in a user namespace, and devpts refuses an unmapped gid. */
  json_object_array_add(
      arr, mount("/dev/pts", "devpts", "devpts",
                 rootless ? STRS("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620")
                          : STRS("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620",
                                 "gid=5")));
  json_object_array_add(arr, mount("/dev/shm", "tmpfs", "shm",
                                   STRS("nosuid", "noexec", "nodev", "mode=1777", "size=65536k")));
  json_object_array_add(
      arr, mount("/dev/mqueue", "mqueue", "mqueue", STRS("nosuid", "noexec", "nodev")));
  /* The kernel mounts sysfs only for the owner of the current network namespace; a rootless
   * container that shares the host's network is not, so bind the host's /sys read-only.
   * Rootless there is usually no delegated cgroup either, so no cgroup mount. "ro" is the
   * bind's top mount only: "rro" makes the host's mounts under /sys read-only too. */
  if (rootless) {
    json_object_array_add(arr, mount("/sys", "none", "/sys",
                                     STRS("rbind", "nosuid", "noexec", "nodev", "ro", "rro")));
  } else {
    json_object_array_add(arr,
                          mount("/sys", "sysfs", "sysfs", STRS("nosuid", "noexec", "nodev", "ro")));
    json_object_array_add(arr, mount("/sys/fs/cgroup", "cgroup", "cgroup",
                                     STRS("nosuid", "noexec", "nodev", "relatime", "ro")));
  }
  return arr;
}

static json_object *linux_section(bool rootless)
{
  json_object *l = json_object_new_object();
  json_object *namespaces = json_object_new_array();
  const char *const types[] = {"pid", "network", "ipc", "uts", "mount", "cgroup", "user"};
  /* The user namespace comes last and only rootless: as root it is an opt-in. Its id
   * mappings stay out of the file because the runtime derives them from the caller's ids
   * and /etc/subuid at create time. As root the cgroup namespace is an opt-in too, as in
   * runc's spec (whose tests add it themselves, and read the host's paths in
   * /proc/self/cgroup without it). */
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
    if (!rootless && (strcmp(types[i], "cgroup") == 0 || strcmp(types[i], "user") == 0))
      continue;
    json_object *ns = json_object_new_object();
    json_object_object_add(ns, "type", str(types[i]));
    json_object_array_add(namespaces, ns);
  }
  json_object_object_add(l, "namespaces", namespaces);
  /* As root, runc's device rule: deny everything but the devices every container gets. Tools
   * that edit the file add their limits next to it (runc's tests select the object holding
   * "resources"), and a missing one would leave such a limit unwritten. */
  if (!rootless) {
    json_object *res = json_object_new_object(), *devs = json_object_new_array();
    json_object *deny = json_object_new_object();
    json_object_object_add(deny, "allow", json_object_new_boolean(0));
    json_object_object_add(deny, "access", str("rwm"));
    json_object_array_add(devs, deny);
    json_object_object_add(res, "devices", devs);
    json_object_object_add(l, "resources", res);
  }
  json_object_object_add(l, "maskedPaths",
                         STRS("/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                              "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                              "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
                              "/sys/devices/virtual/powercap"));
  json_object_object_add(
      l, "readonlyPaths",
      STRS("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"));
  return l;
}

char *rrt_spec_default_json(bool rootless)
{
  json_object *doc = json_object_new_object();
  json_object *root = json_object_new_object();
  if (!doc || !root)
    abort();
  json_object_object_add(doc, "ociVersion", str(RRT_OCI_VERSION));
  json_object_object_add(doc, "process", process());
  json_object_object_add(root, "path", str("rootfs"));
  json_object_object_add(root, "readonly", json_object_new_boolean(1));
  json_object_object_add(doc, "root", root);
  json_object_object_add(doc, "hostname", str("rootlessrt"));
  json_object_object_add(doc, "mounts", mounts(rootless));
  json_object_object_add(doc, "linux", linux_section(rootless));
  char *out = xstrdup(json_object_to_json_string_ext(
      doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(doc);
  return out;
}
