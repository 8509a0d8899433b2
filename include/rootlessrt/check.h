/* check.h: `rootlessrt check`: what a rootless setup needs, tried for real, with the fix. */
#ifndef ROOTLESSRT_CHECK_H
#define ROOTLESSRT_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rootlessrt/error.h"

/* fail: a default rootless `run` cannot work; warn: a feature is missing (networking, limits,
 * images with other owners); ok: nothing to do. */
enum rrt_check_level { RRT_CHECK_OK, RRT_CHECK_WARN, RRT_CHECK_FAIL };

/* Distribution families: the package names and commands in the fixes. */
enum rrt_distro {
  RRT_DISTRO_OTHER,
  RRT_DISTRO_DEBIAN, /* Debian, Ubuntu and derivatives */
  RRT_DISTRO_FEDORA, /* Fedora, RHEL, CentOS, Rocky, Alma */
  RRT_DISTRO_ARCH,
  RRT_DISTRO_SUSE, /* openSUSE, SLES */
};

struct rrt_check_item {
  const char *name;
  enum rrt_check_level level;
  char *found; /* what was found, one line */
  char *fix;   /* the command that fixes it, or NULL */
};

struct rrt_check {
  /* Inputs. */
  const char *prefix;  /* ROOTLESSRT_CHECK_ROOT (tests): prepended to the files read, or "" */
  const char *storage; /* the storage directory, or NULL for $XDG_DATA_HOME/rootlessrt */
  /* Found. */
  enum rrt_distro distro;
  char *distro_id;   /* os-release ID */
  char *distro_name; /* PRETTY_NAME */
  uid_t uid;
  gid_t gid;
  char *user;
  bool nested; /* inside another engine's container (a CI job's): set by the nested items */
  struct rrt_check_item *items;
  size_t n;
};

/* Runs every check, in a fixed order, filling c->items. Never changes the system: what it tries
 * (a user namespace, mounts, a seccomp filter) happens in short-lived children. */
void rrt_check_run(struct rrt_check *c);
void rrt_check_free(struct rrt_check *c);
const char *rrt_check_level_name(enum rrt_check_level l);
const char *rrt_check_distro_family(enum rrt_distro d);

/* For create and run: when err comes from something `check` diagnoses (user namespaces denied,
 * the id-map helpers, the subordinate ids, /dev/net/tun, the network helper), names the cause
 * and ends the message with "run 'rootlessrt check' for details". Other errors are untouched. */
void rrt_check_explain(struct rrt_error *err);

#endif
