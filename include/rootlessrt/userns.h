/* userns.h: subordinate ids, id-map planning and writing (newuidmap/newgidmap). */
#ifndef ROOTLESSRT_USERNS_H
#define ROOTLESSRT_USERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

/* One /etc/subuid or /etc/subgid line: "name_or_id:start:count". */
struct rrt_subid_range {
  unsigned long start;
  unsigned long count;
};

/* Parses one line; 0 on success, -1 (err filled, naming the problem) otherwise.
 * Comments and blank lines are -1 with errnum 0 and a message "empty". */
int rrt_subid_parse_line(const char *line, char **owner, struct rrt_subid_range *range,
                         struct rrt_error *err);

/* Every range of the file whose owner is `user` or the decimal `id`, in file
 * order. A missing file is not an error (0 ranges). */
int rrt_subid_lookup(const char *file, const char *user, unsigned long id,
                     struct rrt_subid_range **ranges, size_t *n, struct rrt_error *err);

/* How the maps reach the kernel. */
enum rrt_map_method {
  RRT_MAP_NONE,    /* no new user namespace */
  RRT_MAP_DIRECT,  /* we are privileged over the parent userns: write the files */
  RRT_MAP_HELPERS, /* newuidmap/newgidmap (setuid, check /etc/subuid) */
  RRT_MAP_SELF     /* a single self map, setgroups denied */
};

struct rrt_userns_plan {
  bool create;      /* clone a new user namespace */
  const char *join; /* or join this path (spec-owned) */
  enum rrt_map_method method;
  struct rrt_id_mappings uid_map; /* owned by the plan */
  struct rrt_id_mappings gid_map;
  bool deny_setgroups; /* RRT_MAP_SELF */
};

/* Privilege = CAP_SYS_ADMIN in the initial user namespace, not uid 0. */
bool rrt_in_initial_userns(void);
bool rrt_host_privileged(void);

/*
 * Decides what the container's user namespace is:
 * - the config lists a user namespace with a path: join it (no maps);
 * - the config lists one without path: its uid/gidMappings (config), or, when
 *   absent, the default maps below;
 * - the config lists none: privileged (real root, or uid 0 in a non-initial
 *   userns as rootless podman calls us) -> no user namespace; unprivileged ->
 *   one is added with the default maps.
 * Default maps: container 0 -> caller, 1..N -> the caller's first subordinate
 * range (subuid_file / subgid_file, normally /etc/subuid, /etc/subgid).
 * Method: DIRECT when privileged over the current userns; else HELPERS when
 * newuidmap and newgidmap exist (PATH or /usr/bin) and the maps need more than
 * the caller's own id; else SELF when the maps are exactly {0 -> caller, 1};
 * else an error naming what is missing (no subuid range for USER in FILE,
 * newuidmap not found, ...).
 */
int rrt_userns_plan(const struct rrt_spec *spec, uid_t uid, gid_t gid, const char *username,
                    bool privileged, const char *subuid_file, const char *subgid_file,
                    struct rrt_userns_plan *plan, struct rrt_error *err);
void rrt_userns_plan_free(struct rrt_userns_plan *plan);

/*
 * Where the runtime runs, as far as ids go (nested.c reads it from /proc/self): a host, or a CI
 * job's container made by another engine or by rootlessrt itself.
 */
struct rrt_userns_caller {
  uid_t uid, euid;
  gid_t gid;
  const char *username;
  bool initial;         /* in the initial user namespace */
  bool host_privileged; /* CAP_SYS_ADMIN there */
  /* May make its namespaces without a user namespace: host root, or uid 0 holding
   * CAP_SYS_ADMIN, CAP_SETUID and CAP_SETGID in its own user namespace (rootless podman). */
  bool privileged;
  /* In another engine's container: a user namespace other than the initial one, a bounding set
   * without CAP_SYS_ADMIN, or uid 0 without CAP_SYS_ADMIN. */
  bool nested;
  bool setid;                  /* CAP_SETUID and CAP_SETGID effective */
  bool setfcap;                /* CAP_SETFCAP effective: may map uid 0 (Linux 5.12) */
  struct rrt_id_mappings uids; /* the ids its namespace has (its uid_map), owned */
  struct rrt_id_mappings gids; /* and gid_map */
  bool helpers_work;           /* nested: newuidmap/newgidmap get their privilege here */
  char *helpers_why;           /* why not (malloc'd), or NULL */
  const char *subuid_file, *subgid_file;
};

void rrt_userns_caller_read(struct rrt_userns_caller *c);
void rrt_userns_caller_free(struct rrt_userns_caller *c);

/*
 * rrt_userns_plan for the caller as it is. Not privileged and not nested: as rrt_userns_plan
 * unprivileged. Host root: as rrt_userns_plan privileged. Nested, the default maps (a user
 * namespace without mappings in the config, or added) are rrt_userns_plan_nested's.
 */
int rrt_userns_plan_caller(const struct rrt_spec *spec, const struct rrt_userns_caller *c,
                           struct rrt_userns_plan *plan, struct rrt_error *err);

/* The default maps nested: the namespace's ids onto themselves with CAP_SETUID and CAP_SETGID
 * (DIRECT); else 0 -> the caller and every subordinate range through newuidmap/newgidmap, when
 * they work here and the namespace has those ids (HELPERS); else the caller alone (SELF). */
void rrt_userns_plan_nested(struct rrt_userns_plan *plan, const struct rrt_userns_caller *c);

/* Nested, a plan the kernel would refuse for a reason the caller can name: uid 0 of this
 * namespace mapped without CAP_SETFCAP. -1 with the cause and the fix in err. */
int rrt_userns_plan_check_nested(const struct rrt_userns_plan *plan,
                                 const struct rrt_userns_caller *c, bool from_config,
                                 struct rrt_error *err);

/* The ranges of a /proc/PID/uid_map text as {first id inside, outside, count}: 0, or -1 when it
 * has none. */
int rrt_userns_parse_own_map(const char *text, struct rrt_id_mappings *ids);
/* Whether ids (container_id .. + size) hold every id of start .. start + count - 1. */
bool rrt_userns_ids_cover(const struct rrt_id_mappings *ids, unsigned long start,
                          unsigned long count);
/* The full path of newuidmap or newgidmap (PATH, then /usr/bin, /usr/sbin, /bin), malloc'd. */
char *rrt_userns_find_helper(const char *name);

/* Writes the plan's maps for process pid (which must be in the new userns and
 * waiting). Errors carry the helper's stderr. */
int rrt_userns_write_maps(pid_t pid, const struct rrt_userns_plan *plan, struct rrt_error *err);

/* The same in two halves, so the caller can work while newuidmap and newgidmap run: begin
 * starts them (or writes the maps itself when no helper is needed) and sets *job; end waits
 * for them and frees it. rrt_userns_maps_abort kills and reaps them (NULL is fine). */
struct rrt_maps_job;
int rrt_userns_maps_begin(pid_t pid, const struct rrt_userns_plan *plan, struct rrt_maps_job **job,
                          struct rrt_error *err);
int rrt_userns_maps_end(struct rrt_maps_job *job, struct rrt_error *err);
void rrt_userns_maps_abort(struct rrt_maps_job *job);
/* The helpers' pids (0 to 2 of them) while they run. */
size_t rrt_userns_maps_pids(const struct rrt_maps_job *job, pid_t pids[2]);

/* Formats maps as "0 1000 1\n1 100000 65536\n" (malloc'd). */
char *rrt_idmap_format(const struct rrt_id_mappings *maps);

#endif
