/* spec.h: config.json (OCI runtime-spec v1.3.0, Linux) as typed structs. */
#ifndef ROOTLESSRT_SPEC_H
#define ROOTLESSRT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rootlessrt/error.h"

#define RRT_OCI_VERSION "1.3.0"

/* A NULL-terminated string vector with its length; v is NULL when absent. */
struct rrt_strv {
  char **v;
  size_t n;
};

struct rrt_id_mapping {
  uint32_t container_id;
  uint32_t host_id;
  uint32_t size;
};

struct rrt_id_mappings {
  struct rrt_id_mapping *v;
  size_t n;
};

struct rrt_mount {
  char *destination; /* required, absolute */
  char *source;      /* may be NULL */
  char *type;        /* may be NULL (bind mounts) */
  struct rrt_strv options;
  struct rrt_id_mappings uid_mappings; /* idmapped mounts */
  struct rrt_id_mappings gid_mappings;
};

enum rrt_hook_kind {
  RRT_HOOK_PRESTART,
  RRT_HOOK_CREATE_RUNTIME,
  RRT_HOOK_CREATE_CONTAINER,
  RRT_HOOK_START_CONTAINER,
  RRT_HOOK_POSTSTART,
  RRT_HOOK_POSTSTOP,
  RRT_HOOK__COUNT
};

/* "prestart", "createRuntime", ... as spelled in config.json. */
const char *rrt_hook_kind_name(enum rrt_hook_kind kind);

struct rrt_hook {
  char *path;           /* absolute */
  struct rrt_strv args; /* full argv; v == NULL when absent */
  struct rrt_strv env;  /* exactly this environment; v == NULL when absent */
  int timeout;          /* seconds, > 0; 0 = none */
};

struct rrt_hook_list {
  struct rrt_hook *v;
  size_t n;
};

struct rrt_caps {
  struct rrt_strv bounding, effective, permitted, inheritable, ambient;
};

struct rrt_rlimit {
  char *type;   /* "RLIMIT_NOFILE" */
  int resource; /* RLIMIT_NOFILE; validated at parse time */
  uint64_t soft, hard;
};

struct rrt_user {
  uint32_t uid, gid;
  bool has_umask;
  uint32_t umask;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  char *username;
};

struct rrt_io_priority {
  bool present;
  char *klass; /* IOPRIO_CLASS_RT|BE|IDLE */
  int priority;
};

struct rrt_scheduler {
  bool present;
  char *policy; /* SCHED_OTHER, ... */
  int nice, priority;
  struct rrt_strv flags;
  uint64_t runtime, deadline, period;
};

struct rrt_process {
  bool terminal;
  bool has_console_size;
  uint32_t console_height, console_width;
  struct rrt_user user;
  struct rrt_strv args; /* required, n >= 1 */
  char *command_line;   /* Windows only; kept for completeness */
  struct rrt_strv env;
  char *cwd;                     /* required, absolute */
  struct rrt_caps *capabilities; /* NULL when absent */
  struct rrt_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  char *apparmor_profile;
  bool has_oom_score_adj;
  int oom_score_adj;
  char *selinux_label;
  struct rrt_io_priority io_priority;
  struct rrt_scheduler scheduler;
};

struct rrt_namespace {
  int type;   /* CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUTS,
                 CLONE_NEWUSER, CLONE_NEWCGROUP, CLONE_NEWTIME */
  char *path; /* NULL: create a new one; else join */
};

struct rrt_device {
  char *path;
  char type; /* 'c', 'b', 'u', 'p' */
  int64_t major, minor;
  bool has_file_mode;
  uint32_t file_mode;
  bool has_uid, has_gid;
  uint32_t uid, gid;
};

struct rrt_kv {
  char *key;
  char *value;
};

struct rrt_seccomp_arg {
  uint32_t index;
  uint64_t value;
  uint64_t value_two;
  char *op; /* SCMP_CMP_NE, ... */
};

struct rrt_seccomp_syscall {
  struct rrt_strv names;
  char *action; /* SCMP_ACT_... */
  bool has_errno_ret;
  uint32_t errno_ret;
  struct rrt_seccomp_arg *args;
  size_t n_args;
};

struct rrt_seccomp {
  char *default_action;
  bool has_default_errno_ret;
  uint32_t default_errno_ret;
  struct rrt_strv architectures;
  struct rrt_strv flags;
  char *listener_path;
  char *listener_metadata;
  struct rrt_seccomp_syscall *syscalls;
  size_t n_syscalls;
  char *canonical_json; /* the object re-serialised; a stable key for caching */
};

struct rrt_time_offset {
  char *clock; /* "monotonic" or "boottime" */
  int64_t secs;
  uint32_t nanosecs;
};

struct rrt_personality {
  char *domain; /* LINUX or LINUX32 */
  struct rrt_strv flags;
};

struct rrt_linux {
  struct rrt_namespace *namespaces;
  size_t n_namespaces;
  struct rrt_id_mappings uid_mappings, gid_mappings;
  struct rrt_device *devices;
  size_t n_devices;
  struct rrt_kv *sysctl;
  size_t n_sysctl;
  char *resources_json;     /* linux.resources re-serialised, NULL when absent */
  bool has_resource_limits; /* resources asks for a limit a cgroup must enforce */
  char *cgroups_path;
  struct rrt_strv masked_paths;
  struct rrt_strv readonly_paths;
  char *rootfs_propagation; /* shared, slave, private, unbindable, ... or NULL */
  char *mount_label;
  struct rrt_seccomp *seccomp; /* NULL when absent */
  struct rrt_time_offset *time_offsets;
  size_t n_time_offsets;
  struct rrt_personality *personality; /* NULL when absent */
};

struct rrt_spec {
  char *oci_version; /* required */
  char *root_path;   /* required on Linux; as written (may be relative to the bundle) */
  bool root_readonly;
  char *hostname;
  char *domainname;
  struct rrt_process *process; /* NULL when absent (create only) */
  struct rrt_mount *mounts;
  size_t n_mounts;
  struct rrt_hook_list hooks[RRT_HOOK__COUNT];
  struct rrt_kv *annotations;
  size_t n_annotations;
  bool has_linux;
  struct rrt_linux lnx; /* `linux` is a predefined macro in gnu11 */
};

/* Parses and validates; errors name the JSON path ("process.args: expected
 * array of strings"). Unknown properties are ignored. */
int rrt_spec_parse(const char *json, size_t len, struct rrt_spec **out, struct rrt_error *err);
int rrt_spec_load(const char *path, struct rrt_spec **out, struct rrt_error *err);
/* rrt_spec_parse of text read from path: every message starts with path, once. */
int rrt_spec_parse_file(const char *json, size_t len, const char *path, struct rrt_spec **out,
                        struct rrt_error *err);
void rrt_spec_free(struct rrt_spec *spec);

/* Lookup helpers. */
const char *rrt_spec_annotation(const struct rrt_spec *spec, const char *key);
/* The namespace entry of that CLONE_NEW* type, or NULL when not listed. */
const struct rrt_namespace *rrt_spec_namespace(const struct rrt_spec *spec, int type);

/* Namespace names as in config.json ("pid", "network", "mount", "ipc", "uts",
 * "user", "cgroup", "time") <-> CLONE_NEW*; 0 / NULL when unknown. */
int rrt_namespace_type_from_name(const char *name);
const char *rrt_namespace_type_name(int type);
/* The name of /proc/PID/ns/<name> for a CLONE_NEW* type ("net", "mnt", ...). */
const char *rrt_namespace_proc_name(int type);

/* A default config.json (malloc'd, pretty printed) that `run` accepts
 * unchanged: busybox sh, the usual mounts, masked paths, all namespaces;
 * rootless adds a user namespace and drops what an unprivileged user cannot do. */
char *rrt_spec_default_json(bool rootless);

#endif
