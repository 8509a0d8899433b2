/* test_spec.c: config.json parsing: the spec's fixtures, field values, error messages, defaults. */
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootlessrt/spec.h"
#include "rootlessrt/util.h"
#include "tap.h"

/* JSON written with single quotes, to keep the test cases readable. */
static char *J(const char *s)
{
  char *out = xstrdup(s);
  for (char *p = out; *p; p++)
    if (*p == '\'')
      *p = '"';
  return out;
}

static struct rrt_spec *parse(const char *sq_json, struct rrt_error *err)
{
  cleanup_free char *json = J(sq_json);
  struct rrt_spec *spec = NULL;
  if (rrt_spec_parse(json, strlen(json), &spec, err) < 0)
    return NULL;
  return spec;
}

/* The parse must fail with exactly this message. */
static void fails_with(const char *sq_json, const char *msg)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *spec = parse(sq_json, &err);
  ok(spec == NULL, "rejected: %s", msg);
  is_str(err.msg, msg, "message: %s", msg);
  rrt_spec_free(spec);
  rrt_error_clear(&err);
}

/* The parse must fail with a message containing this. */
static void fails_like(const char *sq_json, const char *part)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *spec = parse(sq_json, &err);
  ok(spec == NULL && err.msg && strstr(err.msg, part), "rejected with '%s' (got '%s')", part,
     rrt_error_msg(&err));
  rrt_spec_free(spec);
  rrt_error_clear(&err);
}

static bool strv_has(const struct rrt_strv *v, const char *s)
{
  for (size_t i = 0; i < v->n; i++)
    if (strcmp(v->v[i], s) == 0)
      return true;
  return false;
}

static const struct rrt_mount *find_mount(const struct rrt_spec *s, const char *dest)
{
  for (size_t i = 0; i < s->n_mounts; i++)
    if (strcmp(s->mounts[i].destination, dest) == 0)
      return &s->mounts[i];
  return NULL;
}

static const char *spec_dir(void)
{
  const char *d = getenv("RRT_SPEC_DIR");
  return d && d[0] ? d : "tests/spec"; /* the copy in the repository, from its top */
}

static void test_fixtures(void)
{
  cleanup_free char *good = xasprintf("%s/schema/test/config/good", spec_dir());
  cleanup_free char *bad = xasprintf("%s/schema/test/config/bad", spec_dir());
  DIR *d = opendir(good);
  if (!d) {
    ok(1, "# SKIP %s not found (set RRT_SPEC_DIR to the runtime-spec checkout)", good);
    printf("# skip: fixtures absent: %s\n", good);
    return;
  }
  struct dirent *de;
  int n = 0;
  while ((de = readdir(d))) {
    size_t len = strlen(de->d_name);
    if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
      continue;
    cleanup_free char *path = xasprintf("%s/%s", good, de->d_name);
    struct rrt_error err = RRT_ERROR_INIT;
    struct rrt_spec *spec = NULL;
    /* Every good example carries root.path, even the FreeBSD and z/OS ones, whose platform
     * sections are unknown properties here; so all of them must parse. */
    int r = rrt_spec_load(path, &spec, &err);
    ok(r == 0 && spec, "good/%s parses%s%s", de->d_name, err.msg ? ": " : "",
       err.msg ? err.msg : "");
    rrt_spec_free(spec);
    rrt_error_clear(&err);
    n++;
  }
  closedir(d);
  ok(n >= 6, "found %d good fixtures", n);

  const char *bad_files[] = {"invalid-json.json", "linux-hugepage.json", "linux-rdma.json",
                             "linux-netdevice.json"};
  const char *bad_msgs[] = {"invalid JSON", "linux.resources.hugepageLimits[0].pageSize",
                            "linux.resources.rdma.mlx5_1.hcaHandles",
                            "linux.netDevices.eth0.name: expected string"};
  for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
    cleanup_free char *path = xasprintf("%s/%s", bad, bad_files[i]);
    struct rrt_error err = RRT_ERROR_INIT;
    struct rrt_spec *spec = NULL;
    if (access(path, R_OK) != 0) {
      ok(1, "# SKIP bad/%s absent", bad_files[i]);
      continue;
    }
    int r = rrt_spec_load(path, &spec, &err);
    ok(r < 0 && !spec && err.msg && strstr(err.msg, bad_msgs[i]) && strstr(err.msg, path),
       "bad/%s fails: %s", bad_files[i], rrt_error_msg(&err));
    rrt_spec_free(spec);
    rrt_error_clear(&err);
  }
  printf("# skip: bad/freebsd-vnet-disable.json (a FreeBSD-only rule; the freebsd section is "
         "an unknown property on Linux)\n");
  ok(1, "# SKIP bad/freebsd-vnet-disable.json is FreeBSD-only");
}

static void check_example_process(const struct rrt_spec *s)
{
  const struct rrt_process *p = s->process;
  ok(p != NULL, "process present");
  if (!p)
    return;
  ok(p->terminal, "process.terminal");
  is_int(p->user.uid, 1, "user.uid");
  is_int(p->user.gid, 1, "user.gid");
  is_int(p->user.n_additional_gids, 2, "two additionalGids");
  is_int(p->user.additional_gids[1], 6, "additionalGids[1]");
  is_int(p->args.n, 1, "one arg");
  is_str(p->args.v[0], "sh", "args[0]");
  ok(p->args.v[1] == NULL, "args NULL-terminated");
  is_int(p->env.n, 2, "two env entries");
  is_str(p->env.v[1], "TERM=xterm", "env[1]");
  is_str(p->cwd, "/", "cwd");
  ok(p->capabilities && p->capabilities->bounding.n == 3 &&
         strv_has(&p->capabilities->bounding, "CAP_NET_BIND_SERVICE"),
     "bounding caps");
  ok(p->capabilities && p->capabilities->effective.n == 2 && p->capabilities->ambient.n == 1 &&
         strcmp(p->capabilities->ambient.v[0], "CAP_NET_BIND_SERVICE") == 0,
     "effective and ambient caps");
  is_int(p->n_rlimits, 2, "two rlimits");
  is_str(p->rlimits[0].type, "RLIMIT_CORE", "rlimits[0].type");
  is_int(p->rlimits[0].resource, RLIMIT_CORE, "rlimits[0] resolved to RLIMIT_CORE");
  is_int(p->rlimits[1].resource, RLIMIT_NOFILE, "rlimits[1] resolved to RLIMIT_NOFILE");
  ok(p->rlimits[1].soft == 1024 && p->rlimits[1].hard == 1024, "rlimits[1] soft/hard");
  is_str(p->apparmor_profile, "acme_secure_profile", "apparmorProfile");
  ok(p->selinux_label && strstr(p->selinux_label, "svirt_lxc_net_t"), "selinuxLabel");
  ok(p->no_new_privileges, "noNewPrivileges");
  ok(!p->has_oom_score_adj, "no process.oomScoreAdj");
}

static void check_example_rest(const struct rrt_spec *s)
{
  ok(s->root_readonly && strcmp(s->root_path, "rootfs") == 0, "root");
  is_str(s->hostname, "slartibartfast", "hostname");
  is_str(s->domainname, "foobarbaz.test", "domainname");
  is_int(s->n_mounts, 7, "seven mounts");
  const struct rrt_mount *pts = find_mount(s, "/dev/pts");
  ok(pts && strcmp(pts->type, "devpts") == 0 && pts->options.n == 6 &&
         strcmp(pts->options.v[5], "gid=5") == 0,
     "/dev/pts options");
  ok(s->mounts[0].options.v == NULL && s->mounts[0].options.n == 0, "/proc has no options");
  is_int(s->hooks[RRT_HOOK_PRESTART].n, 2, "two prestart hooks");
  is_str(s->hooks[RRT_HOOK_PRESTART].v[0].args.v[2], "arg2", "prestart[0].args[2]");
  is_str(s->hooks[RRT_HOOK_PRESTART].v[0].env.v[0], "key1=value1", "prestart[0].env");
  ok(s->hooks[RRT_HOOK_PRESTART].v[1].args.v == NULL, "prestart[1] has no args");
  is_int(s->hooks[RRT_HOOK_POSTSTART].v[0].timeout, 5, "poststart timeout");
  is_int(s->hooks[RRT_HOOK_PRESTART].v[0].timeout, 0, "no timeout = 0");
  is_str(s->hooks[RRT_HOOK_START_CONTAINER].v[0].path, "/usr/bin/refresh-ldcache",
         "startContainer hook");
  is_int(s->hooks[RRT_HOOK_POSTSTOP].n, 1, "poststop hook");
  is_str(rrt_spec_annotation(s, "com.example.key2"), "value2", "annotation");
  ok(rrt_spec_annotation(s, "nope") == NULL, "missing annotation is NULL");
}

static void check_example_linux(const struct rrt_spec *s)
{
  const struct rrt_linux *l = &s->lnx;
  ok(s->has_linux, "has linux");
  is_int(l->n_namespaces, 8, "eight namespaces");
  ok(rrt_spec_namespace(s, CLONE_NEWTIME) && !rrt_spec_namespace(s, CLONE_NEWTIME)->path,
     "time namespace, new");
  is_int(l->namespaces[1].type, CLONE_NEWNET, "namespaces[1] is network");
  ok(l->uid_mappings.n == 1 && l->uid_mappings.v[0].host_id == 1000 &&
         l->uid_mappings.v[0].size == 32000,
     "uidMappings");
  ok(l->gid_mappings.n == 1 && l->gid_mappings.v[0].container_id == 0, "gidMappings");
  is_int(l->n_devices, 2, "two devices");
  ok(l->devices[0].type == 'c' && l->devices[0].major == 10 && l->devices[0].minor == 229 &&
         l->devices[0].has_file_mode && l->devices[0].file_mode == 438 && l->devices[0].has_uid,
     "/dev/fuse device");
  is_str(l->devices[1].path, "/dev/sda", "devices[1].path");
  is_int(l->n_sysctl, 2, "two sysctls");
  ok(strcmp(l->sysctl[0].key, "net.ipv4.ip_forward") == 0 && strcmp(l->sysctl[0].value, "1") == 0,
     "sysctl[0]");
  is_str(l->cgroups_path, "/myRuntime/myContainer", "cgroupsPath");
  ok(l->resources_json && strstr(l->resources_json, "\"pids\":{\"limit\":32771}"),
     "resources_json re-serialised");
  ok(l->has_resource_limits, "has_resource_limits");
  is_str(l->rootfs_propagation, "slave", "rootfsPropagation");
  ok(l->masked_paths.n == 4 && strcmp(l->masked_paths.v[3], "/proc/sched_debug") == 0,
     "maskedPaths");
  ok(l->readonly_paths.n == 6 && strv_has(&l->readonly_paths, "/proc/sysrq-trigger"),
     "readonlyPaths");
  ok(l->mount_label && strstr(l->mount_label, "svirt_sandbox_file_t"), "mountLabel");
  ok(l->seccomp && strcmp(l->seccomp->default_action, "SCMP_ACT_ALLOW") == 0 &&
         l->seccomp->architectures.n == 2 && l->seccomp->n_syscalls == 1 &&
         l->seccomp->syscalls[0].names.n == 2 &&
         strcmp(l->seccomp->syscalls[0].action, "SCMP_ACT_ERRNO") == 0,
     "seccomp");
  ok(l->seccomp && l->seccomp->canonical_json &&
         strncmp(l->seccomp->canonical_json, "{\"defaultAction\":\"SCMP_ACT_ALLOW\",", 34) == 0,
     "seccomp canonical_json is plain");
  ok(l->n_time_offsets == 2 && strcmp(l->time_offsets[0].clock, "monotonic") == 0 &&
         l->time_offsets[0].secs == 172800 && l->time_offsets[1].secs == 604800,
     "timeOffsets");
  ok(l->personality == NULL, "no personality");
}

static void test_spec_example(void)
{
  cleanup_free char *path = xasprintf("%s/schema/test/config/good/spec-example.json", spec_dir());
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *s = NULL;
  if (access(path, R_OK) != 0) {
    ok(1, "# SKIP %s not found (set RRT_SPEC_DIR)", path);
    printf("# skip: spec-example.json field checks: fixture absent\n");
    return;
  }
  ok(rrt_spec_load(path, &s, &err) == 0, "spec-example.json loads: %s", err.msg ? err.msg : "ok");
  if (!s)
    return;
  is_str(s->oci_version, "0.5.0-dev", "pre-1.0 ociVersion accepted");
  check_example_process(s);
  check_example_rest(s);
  check_example_linux(s);
  rrt_spec_free(s);
}

#define BASE "'ociVersion':'1.0.0','root':{'path':'rootfs'}"

static void test_required_and_types(void)
{
  fails_with("{'root':{'path':'r'}}", "ociVersion: required");
  fails_with("{'ociVersion':1,'root':{'path':'r'}}", "ociVersion: expected string");
  fails_like("{'ociVersion':'2.0.0','root':{'path':'r'}}",
             "unsupported major version in \"2.0.0\"");
  fails_with("{'ociVersion':'abc','root':{'path':'r'}}",
             "ociVersion: \"abc\" is not a SemVer version");
  fails_with("{'ociVersion':'1.0.0'}", "root: required");
  fails_with("{'ociVersion':'1.0.0','root':{}}", "root.path: required");
  fails_with("{'ociVersion':'1.0.0','root':[]}", "root: expected object");
  fails_with("{" BASE ",'process':{'cwd':'/','args':'sh'}}",
             "process.args: expected array of strings");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh',1]}}",
             "process.args: expected array of strings");
  fails_with("{" BASE ",'process':{'cwd':'/'}}", "process.args: required");
  fails_with("{" BASE ",'process':{'cwd':'/','args':[]}}", "process.args: must not be empty");
  fails_with("{" BASE ",'process':{'args':['sh']}}", "process.cwd: required");
  fails_with("{" BASE ",'process':{'cwd':'tmp','args':['sh']}}", "process.cwd: must be absolute");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'terminal':'yes'}}",
             "process.terminal: expected boolean");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'user':{'gid':0}}}",
             "process.user.uid: required");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'user':{'uid':0}}}",
             "process.user.gid: required");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'user':{'uid':-1,'gid':0}}}",
             "process.user.uid: expected integer in 0..4294967295, got -1");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'user':{'uid':1.5,'gid':0}}}",
             "process.user.uid: expected integer");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'oomScoreAdj':1001}}",
             "process.oomScoreAdj: expected integer in -1000..1000, got 1001");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['s\\u0000h']}}",
             "process.args[0]: must not contain a NUL character");
  fails_with("[1]", "config.json: expected a JSON object at the top level");
  fails_with("{" BASE ",'annotations':{'a':1}}", "annotations.a: expected string");
  fails_with("{" BASE ",'annotations':{'':'x'}}", "annotations: keys must not be empty");
}

static void test_rlimits_and_process(void)
{
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'rlimits':[{'type':'RLIMIT_FOO',"
             "'soft':1,'hard':1}]}}",
             "process.rlimits[0].type: unknown resource \"RLIMIT_FOO\"");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'rlimits':[{'type':'RLIMIT_NOFILE',"
             "'soft':1,'hard':1},{'type':'RLIMIT_NOFILE','soft':2,'hard':2}]}}",
             "process.rlimits[1].type: duplicate \"RLIMIT_NOFILE\"");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'rlimits':[{'type':'RLIMIT_NOFILE',"
             "'soft':1}]}}",
             "process.rlimits[0].hard: required");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'rlimits':[{'type':'RLIMIT_NOFILE',"
             "'soft':2048,'hard':1024}]}}",
             "process.rlimits[0]: soft limit 2048 exceeds hard limit 1024");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'ioPriority':{'class':'X'}}}",
             "process.ioPriority.class: unknown class \"X\"");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'scheduler':{}}}",
             "process.scheduler.policy: required");
  fails_with("{" BASE ",'process':{'cwd':'/','args':['sh'],'consoleSize':{'height':1}}}",
             "process.consoleSize.width: required");

  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *s =
      parse("{" BASE ",'process':{'cwd':'/','args':['sh'],'consoleSize':{'height':24,'width':80},"
            "'user':{'uid':5,'gid':6,'umask':18,'username':'u'},'oomScoreAdj':-500,"
            "'ioPriority':{'class':'IOPRIO_CLASS_IDLE','priority':7},'scheduler':{'policy':'SCHED_"
            "BATCH','nice':5,'flags':['SCHED_FLAG_RESET_ON_FORK']},'rlimits':[{'type':'RLIMIT_AS',"
            "'soft':18446744073709551615,'hard':18446744073709551615}]}}",
            &err);
  ok(s != NULL, "full process parses: %s", rrt_error_msg(&err));
  if (s) {
    const struct rrt_process *p = s->process;
    ok(p->has_console_size && p->console_height == 24 && p->console_width == 80, "consoleSize");
    ok(p->user.has_umask && p->user.umask == 18 && strcmp(p->user.username, "u") == 0, "umask");
    ok(p->has_oom_score_adj && p->oom_score_adj == -500, "oomScoreAdj");
    ok(p->io_priority.present && p->io_priority.priority == 7, "ioPriority");
    ok(p->scheduler.present && p->scheduler.nice == 5 && p->scheduler.flags.n == 1, "scheduler");
    ok(p->rlimits[0].hard == UINT64_MAX, "rlimit of RLIM_INFINITY as uint64");
  }
  rrt_spec_free(s);
  rrt_error_clear(&err);
}

static void test_mounts_and_hooks(void)
{
  fails_with("{" BASE ",'mounts':[{'destination':'/a'},{'destination':'/b'},{'type':'tmpfs'}]}",
             "mounts[2].destination: required");
  fails_with("{" BASE ",'mounts':[{'destination':'/a','options':'ro'}]}",
             "mounts[0].options: expected array of strings");
  fails_with("{" BASE ",'mounts':[{'destination':'/a','uidMappings':[{'containerID':0,"
             "'hostID':1,'size':1}]}]}",
             "mounts[0]: uidMappings and gidMappings must be given together");
  fails_with("{" BASE ",'mounts':{}}", "mounts: expected array");
  fails_with("{" BASE ",'hooks':{'prestart':[{'path':'hook'}]}}",
             "hooks.prestart[0].path: must be absolute");
  fails_with("{" BASE ",'hooks':{'createRuntime':[{'args':['x']}]}}",
             "hooks.createRuntime[0].path: required");
  fails_with("{" BASE ",'hooks':{'poststart':[{'path':'/h','timeout':0}]}}",
             "hooks.poststart[0].timeout: must be greater than zero");
  fails_with("{" BASE ",'hooks':{'poststop':[{'path':'/h'},{'path':'/h','timeout':-3}]}}",
             "hooks.poststop[1].timeout: must be greater than zero");

  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *s =
      parse("{" BASE ",'mounts':[{'destination':'data','type':'none','source':'/src','options':"
            "['rbind','idmap'],'uidMappings':[{'containerID':0,'hostID':1000,'size':1}],"
            "'gidMappings':[{'containerID':0,'hostID':1000,'size':1}]}]}",
            &err);
  ok(s && strcmp(s->mounts[0].destination, "/data") == 0,
     "relative mount destination read relative to /");
  ok(s && s->mounts[0].uid_mappings.n == 1 && s->mounts[0].gid_mappings.v[0].host_id == 1000,
     "idmapped mount mappings");
  rrt_spec_free(s);
  rrt_error_clear(&err);
}

static void test_linux_errors(void)
{
  fails_with("{" BASE ",'linux':{'namespaces':[{'type':'pid'},{'type':'foo'}]}}",
             "linux.namespaces[1].type: unknown namespace type \"foo\"");
  fails_with("{" BASE ",'linux':{'namespaces':[{'type':'pid'},{'type':'ipc'},{'type':'pid'}]}}",
             "linux.namespaces[2].type: duplicate namespace type \"pid\"");
  fails_with("{" BASE ",'linux':{'namespaces':[{}]}}", "linux.namespaces[0].type: required");
  fails_with("{" BASE ",'linux':{'namespaces':[{'type':'net','path':'/x'}]}}",
             "linux.namespaces[0].type: unknown namespace type \"net\"");
  fails_with("{" BASE ",'linux':{'namespaces':[{'type':'network','path':'proc/1/ns/net'}]}}",
             "linux.namespaces[0].path: must be absolute");
  fails_with("{" BASE ",'linux':{'uidMappings':[{'hostID':1,'size':1}]}}",
             "linux.uidMappings[0].containerID: required");
  fails_with("{" BASE ",'linux':{'gidMappings':[{'containerID':0,'hostID':1,'size':0}]}}",
             "linux.gidMappings[0].size: must be greater than zero");
  fails_with("{" BASE ",'linux':{'devices':[{'path':'/dev/x','type':'x','major':1,'minor':1}]}}",
             "linux.devices[0].type: expected one of c, b, u, p, got \"x\"");
  fails_with("{" BASE ",'linux':{'devices':[{'path':'/dev/x','type':'c','minor':1}]}}",
             "linux.devices[0].major: required");
  fails_with("{" BASE ",'linux':{'sysctl':{'kernel.x':1}}}",
             "linux.sysctl.kernel.x: expected string");
  fails_with("{" BASE ",'linux':{'seccomp':{'syscalls':[]}}}",
             "linux.seccomp.defaultAction: required");
  fails_with("{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_NOPE'}}}",
             "linux.seccomp.defaultAction: unknown action \"SCMP_ACT_NOPE\"");
  fails_with("{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{"
             "'names':['read'],'action':'SCMP_ACT_ERRNO','args':[{'index':0,'value':1,'op':'EQ'"
             "}]}]}}}",
             "linux.seccomp.syscalls[0].args[0].op: unknown operator \"EQ\"");
  fails_with("{" BASE ",'linux':{'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','architectures':["
             "'SCMP_ARCH_X86_64','x86'],'listenerMetadata':'m'}}}",
             "linux.seccomp.architectures[1]: unknown architecture \"x86\"");
  fails_with("{" BASE ",'linux':{'timeOffsets':{'realtime':{'secs':1}}}}",
             "linux.timeOffsets: unknown clock \"realtime\" (expected monotonic or boottime)");
  fails_with("{" BASE ",'linux':{'timeOffsets':{'boottime':{'nanosecs':1000000000}}}}",
             "linux.timeOffsets.boottime.nanosecs: must be less than 1000000000");
  fails_with("{" BASE ",'linux':{'personality':{'domain':'BSD'}}}",
             "linux.personality.domain: unknown domain \"BSD\"");
  fails_with("{" BASE ",'linux':{'rootfsPropagation':'weird'}}",
             "linux.rootfsPropagation: unknown propagation \"weird\"");
  fails_with("{" BASE ",'linux':{'maskedPaths':['/proc/kcore','proc/keys']}}",
             "linux.maskedPaths[1]: must be absolute");
  fails_with("{" BASE ",'linux':{'resources':{'pids':{}}}}",
             "linux.resources.pids.limit: required");
  fails_with("{" BASE ",'linux':{'resources':{'memory':{'limit':'1G'}}}}",
             "linux.resources.memory.limit: expected integer");
}

static bool limits_of(const char *resources)
{
  struct rrt_error err = RRT_ERROR_INIT;
  cleanup_free char *doc = xasprintf("{" BASE ",'linux':{'resources':%s}}", resources);
  struct rrt_spec *s = parse(doc, &err);
  bool r = s && s->lnx.has_resource_limits;
  if (!s)
    printf("# parse failed: %s\n", rrt_error_msg(&err));
  rrt_spec_free(s);
  rrt_error_clear(&err);
  return r;
}

static void test_resources(void)
{
  ok(!limits_of("{}"), "empty resources: no limits");
  ok(!limits_of("{'devices':[{'allow':false,'access':'rwm'}]}"), "device rules alone: no limits");
  ok(!limits_of("{'cpu':{'cpus':''},'unified':{}}"), "empty cpus and unified: no limits");
  ok(limits_of("{'pids':{'limit':100}}"), "pids.limit is a limit");
  ok(limits_of("{'memory':{'swap':-1}}"), "memory.swap is a limit");
  ok(limits_of("{'cpu':{'mems':'0'}}"), "cpu.mems is a limit");
  ok(limits_of("{'unified':{'memory.max':'1G'}}"), "unified entry is a limit");
  ok(limits_of("{'blockIO':{'throttleReadBpsDevice':[{'major':8,'minor':0,'rate':1}]}}"),
     "blockIO throttle is a limit");
  ok(limits_of("{'network':{'classID':1}}"), "network classID is a limit");
  ok(limits_of("{'hugepageLimits':[{'pageSize':'2MB','limit':1}]}"), "hugepage limit");

  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *s = parse("{" BASE ",'linux':{}}", &err);
  ok(s && s->has_linux && !s->lnx.resources_json && !s->lnx.has_resource_limits,
     "no resources: resources_json NULL");
  rrt_spec_free(s);
  s = parse("{" BASE "}", &err);
  ok(s && !s->has_linux && !s->process && s->n_mounts == 0, "minimal: no linux, no process");
  rrt_spec_free(s);
  rrt_error_clear(&err);
}

static void test_unknown_and_null(void)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *s = parse("{" BASE ",'vendor.x':{'deep':[1,2]},'process':{'cwd':'/','args':["
                             "'sh'],'futureField':true,'user':{'uid':0,'gid':0,'extra':'x'}},"
                             "'linux':{'notYet':1,'memoryPolicy':{'mode':'MPOL_BIND'},"
                             "'namespaces':[{'type':'user','hint':1}]},'hostname':null}",
                             &err);
  ok(s != NULL, "unknown properties ignored: %s", rrt_error_msg(&err));
  ok(s && s->hostname == NULL, "null reads as absent");
  ok(s && rrt_spec_namespace(s, CLONE_NEWUSER) && !rrt_spec_namespace(s, CLONE_NEWPID),
     "rrt_spec_namespace");
  ok(s && s->process->user.uid == 0 && s->process->args.n == 1, "known fields still read");
  rrt_spec_free(s);
  rrt_error_clear(&err);
}

static void test_invalid_json(void)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *s = NULL;
  const char *bad = "{\n  \"ociVersion\": \"1.0.0\",\n  \"root\" {}\n}";
  ok(rrt_spec_parse(bad, strlen(bad), &s, &err) < 0 && !s, "syntax error rejected");
  ok(err.msg && strncmp(err.msg, "config.json: invalid JSON: ", 27) == 0 &&
         strstr(err.msg, " at line 3"),
     "syntax error names line 3: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  ok(rrt_spec_parse("{\"ociVersion\":", 14, &s, &err) < 0 && err.msg &&
         strstr(err.msg, "config.json: invalid JSON: unexpected end of input at line 1"),
     "truncated document: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  ok(rrt_spec_parse("{} x", 4, &s, &err) < 0 && err.msg &&
         strstr(err.msg, "trailing data after the document at line 1, column 4"),
     "trailing data: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  ok(rrt_spec_parse("", 0, &s, &err) < 0 && s == NULL, "empty input rejected");
  rrt_error_clear(&err);
}

static void test_load(void)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *s = NULL;
  ok(rrt_spec_load("/nonexistent/config.json", &s, &err) < 0 && err.msg &&
         strstr(err.msg, "/nonexistent/config.json") && !s,
     "missing file names the path: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);

  char tmpl[] = "/tmp/test_spec.XXXXXX";
  int fd = mkstemp(tmpl);
  const char *doc =
      "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},\"process\":{\"cwd\":\"/\"}}";
  ok(fd >= 0 && rrt_write_all(fd, doc, strlen(doc)) == 0, "wrote temp config");
  if (fd >= 0)
    close(fd);
  cleanup_free char *want = xasprintf("%s: process.args: required", tmpl);
  ok(rrt_spec_load(tmpl, &s, &err) < 0, "load of a bad file fails");
  is_str(err.msg, want, "load errors start with the file");
  unlink(tmpl);
  rrt_error_clear(&err);
}

static void test_names(void)
{
  is_int(rrt_namespace_type_from_name("network"), CLONE_NEWNET, "network -> CLONE_NEWNET");
  is_int(rrt_namespace_type_from_name("mount"), CLONE_NEWNS, "mount -> CLONE_NEWNS");
  is_int(rrt_namespace_type_from_name("bogus"), 0, "unknown -> 0");
  is_str(rrt_namespace_type_name(CLONE_NEWCGROUP), "cgroup", "CLONE_NEWCGROUP -> cgroup");
  is_str(rrt_namespace_proc_name(CLONE_NEWNET), "net", "proc name net");
  is_str(rrt_namespace_proc_name(CLONE_NEWNS), "mnt", "proc name mnt");
  is_str(rrt_namespace_proc_name(CLONE_NEWTIME), "time", "proc name time");
  ok(rrt_namespace_proc_name(0) == NULL, "proc name of 0 is NULL");
  is_str(rrt_hook_kind_name(RRT_HOOK_CREATE_CONTAINER), "createContainer", "hook kind name");
  is_str(rrt_hook_kind_name(RRT_HOOK_POSTSTOP), "poststop", "poststop name");
  ok(rrt_hook_kind_name(RRT_HOOK__COUNT) == NULL, "out of range hook kind");
}

static void test_default(bool rootless)
{
  const char *mode = rootless ? "rootless" : "root";
  cleanup_free char *json = rrt_spec_default_json(rootless);
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *s = NULL;
  ok(json && strchr(json, '\n'), "%s default is pretty printed", mode);
  ok(rrt_spec_parse(json, strlen(json), &s, &err) == 0, "%s default parses: %s", mode,
     rrt_error_msg(&err));
  if (!s)
    return;
  is_str(s->oci_version, RRT_OCI_VERSION, "%s ociVersion", mode);
  ok(s->root_readonly && strcmp(s->root_path, "rootfs") == 0, "%s root", mode);
  is_str(s->hostname, "rootlessrt", "%s hostname", mode);
  /* runc's and crun's spec: an interactive shell on a terminal. */
  ok(s->process->terminal && s->process->no_new_privileges, "%s terminal/noNewPrivileges", mode);
  ok(s->process->capabilities->bounding.n == 3 && s->process->capabilities->ambient.v == NULL &&
         s->process->capabilities->inheritable.v == NULL,
     "%s capabilities", mode);
  ok(s->process->n_rlimits == 1 && s->process->rlimits[0].resource == RLIMIT_NOFILE &&
         s->process->rlimits[0].soft == 1024,
     "%s rlimits", mode);
  is_int(s->process->env.n, 2, "%s env", mode);
  const struct rrt_mount *pts = find_mount(s, "/dev/pts");
  ok(pts && strv_has(&pts->options, "gid=5") == !rootless, "%s /dev/pts gid=5 only as root", mode);
  const struct rrt_mount *sys = find_mount(s, "/sys");
  ok(sys && strcmp(sys->type, rootless ? "none" : "sysfs") == 0 && strv_has(&sys->options, "ro") &&
         strv_has(&sys->options, "rbind") == rootless,
     "%s /sys", mode);
  ok((find_mount(s, "/sys/fs/cgroup") == NULL) == rootless, "%s cgroup mount", mode);
  is_int(s->n_mounts, rootless ? 6 : 7, "%s mount count", mode);
  ok((rrt_spec_namespace(s, CLONE_NEWUSER) != NULL) == rootless, "%s user namespace", mode);
  /* As root runc's list: no user or cgroup namespace. */
  is_int(s->lnx.n_namespaces, rootless ? 7 : 5, "%s namespace count", mode);
  ok((rrt_spec_namespace(s, CLONE_NEWCGROUP) != NULL) == rootless, "%s cgroup namespace", mode);
  ok(s->lnx.uid_mappings.v == NULL && s->lnx.gid_mappings.v == NULL, "%s no id mappings", mode);
  ok(s->lnx.masked_paths.n == 11 && strv_has(&s->lnx.masked_paths, "/sys/firmware"),
     "%s maskedPaths", mode);
  ok(s->lnx.readonly_paths.n == 5, "%s readonlyPaths", mode);
  ok(!s->lnx.has_resource_limits, "%s no resource limits", mode);
  rrt_spec_free(s);
}

int main(void)
{
  test_fixtures();
  test_spec_example();
  test_required_and_types();
  test_rlimits_and_process();
  test_mounts_and_hooks();
  test_linux_errors();
  test_resources();
  test_unknown_and_null();
  test_invalid_json();
  test_load();
  test_names();
  test_default(false);
  test_default(true);
  return tap_done();
}
