/* check_internal.h: what the check files share: adding an item, the test root prefix, the
 * distribution's packages and commands, running a program. */
#ifndef ROOTLESSRT_CHECK_INTERNAL_H
#define ROOTLESSRT_CHECK_INTERNAL_H

#include <stdbool.h>

#include "rootlessrt/check.h"

/* Adds an item; fix may be NULL. */
void check_detect_distro(struct rrt_check *c);
void check_add(struct rrt_check *c, const char *name, enum rrt_check_level level, char *fix,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A file the check reads, under the test root prefix (malloc'd). */
char *check_path(const struct rrt_check *c, const char *path);
/* The whole file (prefixed), NUL-terminated, or NULL. */
char *check_read(const struct rrt_check *c, const char *path);
/* A number from a file such as /proc/sys/user/max_user_namespaces; -1 when unreadable. */
long long check_read_num(const struct rrt_check *c, const char *path);

/* Packages, by what they provide, named for this distribution family. */
enum check_pkg {
  PKG_IDMAP, /* newuidmap, newgidmap */
  PKG_SLIRP4NETNS,
  PKG_PASST,
  PKG_FUSE_OVERLAYFS,
  PKG_LIBSLIRP,
  PKG_FUSE,
};
const char *check_pkg_name(const struct rrt_check *c, enum check_pkg p);
/* "sudo apt-get install -y uidmap" and the like (malloc'd). */
char *check_install(const struct rrt_check *c, enum check_pkg p);
/* "sudo apt-get install --reinstall uidmap" and the like (malloc'd). */
char *check_reinstall(const struct rrt_check *c, enum check_pkg p);
/* A sysctl set now and at boot (malloc'd). */
char *check_sysctl_fix(const char *key, const char *value);

/* A filesystem's name from statfs f_type ("tmpfs", "ext4", ...; "0x..." when unknown). */
const char *check_fs_name(long f_type, char buf[32]);

/* The first executable NAME on PATH (malloc'd), or NULL. */
char *check_which(const char *name);
/* Runs argv (stdin /dev/null), its stdout and stderr together in *out (malloc'd, at most 4 KiB,
 * trailing newlines cut); its wait status, or -1 when it could not start. */
int check_spawn(char *const argv[], char **out);
/* The first line of a program's --version output (malloc'd), or NULL. */
char *check_version(const char *path);

/* The items, by file. */
void check_subids(struct rrt_check *c);         /* ids.c: subuid, subgid */
void check_helpers(struct rrt_check *c);        /* ids.c: newuidmap, newgidmap */
void check_userns(struct rrt_check *c);         /* kernel.c: userns, apparmor, overlay, seccomp */
void check_runtime_dir(struct rrt_check *c);    /* host.c */
void check_cgroups(struct rrt_check *c);        /* host.c: cgroup, user-bus */
void check_devices(struct rrt_check *c);        /* host.c: tun, fuse */
void check_net_helpers(struct rrt_check *c);    /* host.c: rootlessrt-net, slirp4netns, pasta */
void check_fuse_overlayfs(struct rrt_check *c); /* host.c */
void check_storage(struct rrt_check *c);        /* storage.c */
void check_nested(struct rrt_check *c);         /* nested.c: nested, nested-ids, -seccomp, ... */

/* explain.c: whether a seccomp filter (an outer container's) refuses clone and unshare of a user
 * namespace; each probe is a call the kernel itself refuses as EINVAL. */
bool check_seccomp_refuses_userns(void);

/* kernel.c, for storage.c: overlay with upper and work on dir's filesystem, in a throwaway user
 * and mount namespace; 0 or the errno of the mount (-1 when the namespace itself failed). */
int check_try_overlay(const char *dir);
/* Whether the kernel overlay in a user namespace worked (kernel.c sets it). */
extern int check_overlay_errno;

#endif
