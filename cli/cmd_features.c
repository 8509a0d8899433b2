/* cmd_features.c: `features`: the runtime-spec features document (features.md). */
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/rootfs.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/util.h"

/* Every option mount.c knows. Each is passed through rrt_mount_opts_parse
 * before it is listed, so the document never claims more than the parser
 * accepts; idmap and ridmap are the idmapped mounts of rootfs/idmap.c. */
static const char *const mount_options[] = {
    "async",       "atime",       "bind",           "defaults",      "dev",
    "diratime",    "dirsync",     "exec",           "lazytime",      "loud",
    "mand",        "noatime",     "nodev",          "nodiratime",    "noexec",
    "nolazytime",  "nomand",      "norelatime",     "nostrictatime", "nosuid",
    "idmap",       "ridmap",      "nosymfollow",    "notmpcopyup",   "private",
    "rbind",       "ratime",      "rdev",           "rdiratime",     "relatime",
    "remount",     "rexec",       "rnoatime",       "rnodev",        "rnodiratime",
    "rnoexec",     "rnorelatime", "rnostrictatime", "rnosuid",       "rnosymfollow",
    "ro",          "rprivate",    "rrelatime",      "rro",           "rrw",
    "rshared",     "rslave",      "rstrictatime",   "rsuid",         "rsymfollow",
    "runbindable", "rw",          "shared",         "silent",        "slave",
    "strictatime", "suid",        "symfollow",      "sync",          "tmpcopyup",
    "unbindable",
};

static const char *const seccomp_actions[] = {
    "SCMP_ACT_ALLOW",        "SCMP_ACT_ERRNO",       "SCMP_ACT_KILL",
    "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG",
    "SCMP_ACT_NOTIFY",       "SCMP_ACT_TRACE",       "SCMP_ACT_TRAP",
};

static const char *const seccomp_operators[] = {
    "SCMP_CMP_EQ", "SCMP_CMP_GE",        "SCMP_CMP_GT", "SCMP_CMP_LE",
    "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE",
};

/* The spec's architecture names and libseccomp's spelling of each. */
static const char *const seccomp_archs[][2] = {
    {"SCMP_ARCH_X86", "x86"},
    {"SCMP_ARCH_X86_64", "x86_64"},
    {"SCMP_ARCH_X32", "x32"},
    {"SCMP_ARCH_ARM", "arm"},
    {"SCMP_ARCH_AARCH64", "aarch64"},
    {"SCMP_ARCH_LOONGARCH64", "loongarch64"},
    {"SCMP_ARCH_M68K", "m68k"},
    {"SCMP_ARCH_MIPS", "mips"},
    {"SCMP_ARCH_MIPS64", "mips64"},
    {"SCMP_ARCH_MIPS64N32", "mips64n32"},
    {"SCMP_ARCH_MIPSEL", "mipsel"},
    {"SCMP_ARCH_MIPSEL64", "mipsel64"},
    {"SCMP_ARCH_MIPSEL64N32", "mipsel64n32"},
    {"SCMP_ARCH_PPC", "ppc"},
    {"SCMP_ARCH_PPC64", "ppc64"},
    {"SCMP_ARCH_PPC64LE", "ppc64le"},
    {"SCMP_ARCH_S390", "s390"},
    {"SCMP_ARCH_S390X", "s390x"},
    {"SCMP_ARCH_SH", "sh"},
    {"SCMP_ARCH_SHEB", "sheb"},
    {"SCMP_ARCH_PARISC", "parisc"},
    {"SCMP_ARCH_PARISC64", "parisc64"},
    {"SCMP_ARCH_RISCV64", "riscv64"},
};

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

static const struct {
  const char *name;
  unsigned long flag;
} seccomp_flags[] = {
    {"SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC},
    {"SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG},
    {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW},
    {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV},
};

static json_object *strings(const char *const *v, size_t n)
{
  json_object *a = json_object_new_array();
  for (size_t i = 0; i < n; i++)
    json_object_array_add(a, json_object_new_string(v[i]));
  return a;
}

#define STRINGS(v) strings((v), sizeof(v) / sizeof((v)[0]))

static json_object *mount_options_json(void)
{
  json_object *a = json_object_new_array();
  for (size_t i = 0; i < sizeof(mount_options) / sizeof(mount_options[0]); i++) {
    char *one[] = {(char *)mount_options[i], NULL};
    struct rrt_strv sv = {one, 1};
    struct rrt_mount_opts o;
    if (rrt_mount_opts_parse(&sv, &o, NULL) == 0) {
      json_object_array_add(a, json_object_new_string(mount_options[i]));
      rrt_mount_opts_free(&o);
    }
  }
  return a;
}

static json_object *capabilities_json(void)
{
  json_object *a = json_object_new_array();
  int last = (int)cap_max_bits() - 1;
  for (int c = 0; c <= last; c++) {
    char *name = cap_to_name((cap_value_t)c);
    if (!name)
      continue;
    /* libcap spells unknown ones as numbers: they have no name to offer. */
    if (strncmp(name, "cap_", 4) == 0) {
      for (char *p = name; *p; p++)
        *p = (char)toupper((unsigned char)*p);
      json_object_array_add(a, json_object_new_string(name));
    }
    cap_free(name);
  }
  return a;
}

/* A flag is supported when the kernel knows it: with a NULL program,
 * seccomp(2) answers EFAULT for a known flag and EINVAL for an unknown one
 * (the check runc does). */
static bool kernel_knows_flag(unsigned long flag)
{
  /* The kernel takes this one only together with a listener. */
  if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
    flag |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flag, NULL);
  return r < 0 && errno == EFAULT;
}

static json_object *seccomp_json(void)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "enabled", json_object_new_boolean(1));
  json_object_object_add(o, "actions", STRINGS(seccomp_actions));
  json_object_object_add(o, "operators", STRINGS(seccomp_operators));
  json_object *archs = json_object_new_array();
  for (size_t i = 0; i < sizeof(seccomp_archs) / sizeof(seccomp_archs[0]); i++)
    if (seccomp_arch_resolve_name(seccomp_archs[i][1]) != 0)
      json_object_array_add(archs, json_object_new_string(seccomp_archs[i][0]));
  json_object_object_add(o, "archs", archs);
  json_object *known = json_object_new_array();
  json_object *supported = json_object_new_array();
  for (size_t i = 0; i < sizeof(seccomp_flags) / sizeof(seccomp_flags[0]); i++) {
    json_object_array_add(known, json_object_new_string(seccomp_flags[i].name));
    if (kernel_knows_flag(seccomp_flags[i].flag))
      json_object_array_add(supported, json_object_new_string(seccomp_flags[i].name));
  }
  json_object_object_add(o, "knownFlags", known);
  json_object_object_add(o, "supportedFlags", supported);
  return o;
}

static json_object *enabled(bool on)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "enabled", json_object_new_boolean(on));
  return o;
}

static json_object *linux_json(void)
{
  json_object *l = json_object_new_object();
  static const int ns_types[] = {CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET,  CLONE_NEWUTS,
                                 CLONE_NEWIPC, CLONE_NEWCGROUP, CLONE_NEWUSER, CLONE_NEWTIME};
  json_object *ns = json_object_new_array();
  for (size_t i = 0; i < sizeof(ns_types) / sizeof(ns_types[0]); i++)
    json_object_array_add(ns, json_object_new_string(rrt_namespace_type_name(ns_types[i])));
  json_object_object_add(l, "namespaces", ns);
  json_object_object_add(l, "capabilities", capabilities_json());

  json_object *cg = json_object_new_object();
  json_object_object_add(cg, "v1", json_object_new_boolean(1)); /* as real root */
  json_object_object_add(cg, "v2", json_object_new_boolean(1));
  json_object_object_add(cg, "systemd", json_object_new_boolean(1));
  json_object_object_add(cg, "systemdUser", json_object_new_boolean(1));
  json_object_object_add(cg, "rdma", json_object_new_boolean(0));
  json_object_object_add(l, "cgroup", cg);
  json_object_object_add(l, "seccomp", seccomp_json());
  json_object_object_add(l, "apparmor", enabled(false));
  json_object_object_add(l, "selinux", enabled(false));
  json_object_object_add(l, "intelRdt", enabled(false));
  json_object *ext = json_object_new_object();
  json_object_object_add(ext, "idmap", enabled(true));
  json_object_object_add(l, "mountExtensions", ext);
  return l;
}

static json_object *features_json(void)
{
  json_object *o = json_object_new_object();
  json_object_object_add(o, "ociVersionMin", json_object_new_string("1.0.0"));
  json_object_object_add(o, "ociVersionMax", json_object_new_string(RRT_OCI_VERSION));
  json_object *hooks = json_object_new_array();
  for (int k = 0; k < RRT_HOOK__COUNT; k++)
    json_object_array_add(hooks, json_object_new_string(rrt_hook_kind_name(k)));
  json_object_object_add(o, "hooks", hooks);
  json_object_object_add(o, "mountOptions", mount_options_json());
  json_object_object_add(o, "linux", linux_json());

  json_object *ann = json_object_new_object();
  const struct scmp_version *v = seccomp_version();
  char ver[64];
  snprintf(ver, sizeof(ver), "%u.%u.%u", v->major, v->minor, v->micro);
  json_object_object_add(ann, "io.github.seccomp.libseccomp.version", json_object_new_string(ver));
  json_object_object_add(ann, "dev.rootlessrt.network.slirp", json_object_new_string("true"));
  json_object_object_add(o, "annotations", ann);
  /* The rootlessrt.* annotations choose the network mode and publish ports. */
  static const char *const unsafe[] = {"rootlessrt."};
  json_object_object_add(o, "potentiallyUnsafeConfigAnnotations", STRINGS(unsafe));
  return o;
}

int rrt_cmd_features(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  bool help = false;
  if (rrt_cmd_parse_flags(argc, argv, "+h", rrt_cmd_help_only, rrt_cmd_no_flags, NULL, &help, err) <
      0)
    return -1;
  if (help) {
    rrt_cmd_usage("features");
    return 0;
  }
  if (optind < argc)
    return rrt_error_msgf(err, EINVAL, "features: unexpected argument \"%s\"", argv[optind]);
  json_object *o = features_json();
  printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(o);
  if (fflush(stdout) != 0)
    return rrt_error_errno(err, "features: write");
  return 0;
}
