/* test_userns.c: subordinate id parsing, user namespace planning and map writing. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"
#include "tap.h"

#define TEST_UID 1000
#define TEST_GID 1001

static char tmpdir[] = "/tmp/rrt-test-userns.XXXXXX";

static char *write_temp(const char *content)
{
  char *path = xasprintf("%s/file.XXXXXX", tmpdir);
  int fd = mkstemp(path);
  if (fd < 0 || rrt_write_all(fd, content, strlen(content)) < 0)
    abort();
  close(fd);
  return path;
}

/* A directory holding fake newuidmap/newgidmap scripts with these bodies. */
static char *make_helpers(const char *gid_body, const char *uid_body)
{
  static int serial;
  char *dir = xasprintf("%s/helpers%d", tmpdir, serial++);
  if (mkdir(dir, 0755) < 0)
    abort();
  const char *names[] = {"newgidmap", "newuidmap"};
  const char *bodies[] = {gid_body, uid_body};
  for (int i = 0; i < 2; i++) {
    cleanup_free char *p = xasprintf("%s/%s", dir, names[i]);
    struct rrt_error err = RRT_ERROR_INIT;
    if (rrt_write_file(p, bodies[i], strlen(bodies[i]), O_CREAT | O_TRUNC, 0755, &err) < 0)
      abort();
  }
  return dir;
}

/* The line as C would spell it, so a TAP description stays on one line. */
static const char *show(const char *s)
{
  static char buf[256];
  size_t o = 0;
  for (; *s && o + 3 < sizeof(buf); s++) {
    if (*s == '\n' || *s == '\r') {
      buf[o++] = '\\';
      buf[o++] = *s == '\n' ? 'n' : 'r';
    } else {
      buf[o++] = *s;
    }
  }
  buf[o] = '\0';
  return buf;
}

static void expect_parse(const char *line, const char *owner, unsigned long start,
                         unsigned long count)
{
  char *got = NULL;
  struct rrt_subid_range r = {0, 0};
  struct rrt_error err = RRT_ERROR_INIT;
  int rc = rrt_subid_parse_line(line, &got, &r, &err);
  ok(rc == 0 && got && strcmp(got, owner) == 0 && r.start == start && r.count == count,
     "parse \"%s\" -> %s %lu %lu", show(line), owner, start, count);
  if (rc < 0)
    printf("#   error: %s\n", rrt_error_msg(&err));
  free(got);
  rrt_error_clear(&err);
}

static void expect_parse_error(const char *line, const char *fragment)
{
  char *got = NULL;
  struct rrt_subid_range r = {0, 0};
  struct rrt_error err = RRT_ERROR_INIT;
  int rc = rrt_subid_parse_line(line, &got, &r, &err);
  ok(rc < 0 && got == NULL && err.msg && strstr(err.msg, fragment),
     "parse \"%s\" fails with \"%s\"", show(line), fragment);
  if (err.msg && !strstr(err.msg, fragment))
    printf("#   got: %s\n", err.msg);
  free(got);
  rrt_error_clear(&err);
}

static void test_parse(void)
{
  expect_parse("alice:100000:65536", "alice", 100000, 65536);
  expect_parse("1000:200000:1000\n", "1000", 200000, 1000);
  expect_parse("  bob:1:2\r\n", "bob", 1, 2);
  expect_parse("alice:4294967294:1", "alice", 4294967294UL, 1);
  expect_parse("alice:0:4294967295", "alice", 0, 4294967295UL);
  expect_parse_error("# alice:1:2", "empty");
  expect_parse_error("", "empty");
  expect_parse_error("   \n", "empty");
  expect_parse_error("alice:-1:10", "invalid start \"-1\"");
  expect_parse_error("alice:+5:10", "invalid start \"+5\"");
  expect_parse_error("alice:0x10:5", "invalid start \"0x10\"");
  expect_parse_error("alice:4294967295:1", "invalid start");
  expect_parse_error("alice:99999999999:1", "invalid start");
  expect_parse_error("alice:1:0", "invalid count 0");
  expect_parse_error("alice:1:4294967296", "invalid count");
  expect_parse_error("alice:1: 2", "invalid count \" 2\"");
  expect_parse_error("alice:1:", "invalid count \"\"");
  expect_parse_error("alice::5", "invalid start \"\"");
  expect_parse_error("alice:4294967290:10", "overflows the 32-bit id space");
  expect_parse_error("alice:1", "missing count");
  expect_parse_error("alice", "missing start and count");
  expect_parse_error("alice:1:2:3", "too many fields");
  expect_parse_error(":1:2", "empty owner");
  expect_parse_error("al ice:1:2", "contains a blank");

  struct rrt_error err = RRT_ERROR_INIT;
  char *owner = NULL;
  struct rrt_subid_range r;
  rrt_subid_parse_line("# x", &owner, &r, &err);
  is_int(err.errnum, 0, "a comment is errnum 0");
  rrt_error_clear(&err);
}

static void test_lookup(void)
{
  cleanup_free char *f = write_temp("# comment\n"
                                    "\n"
                                    "alice:100000:65536\n"
                                    "bob:165536:65536\n"
                                    "1000:300000:10\n"
                                    "alice:400000:5\n");
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_subid_range *r = NULL;
  size_t n = 99;

  int rc = rrt_subid_lookup(f, "alice", 1000, &r, &n, &err);
  ok(rc == 0 && n == 3, "lookup alice/1000: 3 ranges by name and id");
  ok(n == 3 && r[0].start == 100000 && r[1].start == 300000 && r[2].start == 400000 &&
         r[2].count == 5,
     "lookup keeps file order");
  free(r);

  rc = rrt_subid_lookup(f, NULL, 1000, &r, &n, &err);
  ok(rc == 0 && n == 1 && r[0].start == 300000 && r[0].count == 10, "lookup by decimal id only");
  free(r);

  rc = rrt_subid_lookup(f, "carol", 2000, &r, &n, &err);
  ok(rc == 0 && n == 0 && r == NULL, "lookup of an absent user: 0 ranges");

  rc = rrt_subid_lookup("/nonexistent/subuid", "alice", 1000, &r, &n, &err);
  ok(rc == 0 && n == 0 && r == NULL, "missing file: 0 ranges, no error");

  cleanup_free char *bad = write_temp("alice:1:2\nbob:x:2\n");
  rc = rrt_subid_lookup(bad, "alice", 1000, &r, &n, &err);
  cleanup_free char *want = xasprintf("%s:2: invalid start \"x\"", bad);
  ok(rc < 0 && err.msg && strncmp(err.msg, want, strlen(want)) == 0,
     "malformed line: error names file and line");
  if (err.msg)
    printf("#   %s\n", err.msg);
  rrt_error_clear(&err);
}

static void test_format(void)
{
  struct rrt_id_mapping v[] = {{0, 1000, 1}, {1, 100000, 65536}};
  struct rrt_id_mappings m = {v, 2};
  cleanup_free char *s = rrt_idmap_format(&m);
  is_str(s, "0 1000 1\n1 100000 65536\n", "rrt_idmap_format two lines");
  struct rrt_id_mappings empty = {NULL, 0};
  cleanup_free char *e = rrt_idmap_format(&empty);
  is_str(e, "", "rrt_idmap_format empty");
}

/* A spec with only the fields rrt_userns_plan reads. */
static struct rrt_spec make_spec(struct rrt_namespace *ns, size_t n_ns)
{
  struct rrt_spec spec;
  memset(&spec, 0, sizeof(spec));
  spec.has_linux = true;
  spec.lnx.namespaces = ns;
  spec.lnx.n_namespaces = n_ns;
  return spec;
}

static char *fmt_plan_maps(const struct rrt_userns_plan *p)
{
  cleanup_free char *u = rrt_idmap_format(&p->uid_map);
  cleanup_free char *g = rrt_idmap_format(&p->gid_map);
  return xasprintf("uid:%sgid:%s", u, g);
}

static bool system_has_helpers(void)
{
  const char *dirs[] = {"/usr/bin", "/usr/sbin", "/bin"};
  for (int i = 0; i < 3; i++) {
    cleanup_free char *u = xasprintf("%s/newuidmap", dirs[i]);
    cleanup_free char *g = xasprintf("%s/newgidmap", dirs[i]);
    if (access(u, X_OK) == 0 || access(g, X_OK) == 0)
      return true;
  }
  return false;
}

static void test_plan(const char *fake_path, const char *empty_path)
{
  cleanup_free char *subuid = write_temp("other:50000:10\ntester:100000:65536\n");
  cleanup_free char *subgid = write_temp("1000:200000:5000\n");
  cleanup_free char *empty = write_temp("# nobody\n");
  cleanup_free char *huge = write_temp("tester:0:4294967295\n");
  struct rrt_namespace user_ns[] = {{CLONE_NEWNS, NULL}, {CLONE_NEWUSER, NULL}};
  struct rrt_namespace join_ns[] = {{CLONE_NEWUSER, (char *)"/proc/1/ns/user"}};
  struct rrt_namespace mnt_ns[] = {{CLONE_NEWNS, NULL}};
  struct rrt_userns_plan p;
  struct rrt_error err = RRT_ERROR_INIT;
  setenv("PATH", fake_path, 1);

  /* (a) unprivileged, no user namespace in the config: default maps. */
  struct rrt_spec spec = make_spec(mnt_ns, 1);
  int rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, subuid, subgid, &p, &err);
  ok(rc == 0 && p.create && !p.join && p.method == RRT_MAP_HELPERS,
     "(a) unprivileged without userns: create, HELPERS");
  cleanup_free char *a = fmt_plan_maps(&p);
  is_str(a, "uid:0 1000 1\n1 100000 65536\ngid:0 1001 1\n1 200000 5000\n",
         "(a) default maps: self + first subordinate range (subgid keyed by uid)");
  rrt_userns_plan_free(&p);

  rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, empty, subgid, &p, &err);
  cleanup_free char *a2 = fmt_plan_maps(&p);
  ok(rc == 0 && p.create && p.method == RRT_MAP_SELF && p.deny_setgroups,
     "(a) no subuid range: SELF with setgroups denied");
  is_str(a2, "uid:0 1000 1\ngid:0 1001 1\n", "(a) SELF maps only the caller");
  rrt_userns_plan_free(&p);

  rc =
      rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, subuid, "/nonexistent", &p, &err);
  ok(rc == 0 && p.method == RRT_MAP_SELF, "(a) missing subgid file: SELF");
  rrt_userns_plan_free(&p);

  rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, huge, subgid, &p, &err);
  ok(rc == 0 && p.uid_map.n == 2 && p.uid_map.v[1].size == 4294967294U,
     "(a) a huge range is capped so container ids stay below 2^32-1");
  rrt_userns_plan_free(&p);

  if (system_has_helpers()) {
    printf("ok %d # SKIP newuidmap is installed in a system directory\n", ++tap_n);
  } else {
    setenv("PATH", empty_path, 1);
    rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, subuid, subgid, &p, &err);
    ok(rc == 0 && p.method == RRT_MAP_SELF, "(a) no helpers: SELF");
    rrt_userns_plan_free(&p);
    setenv("PATH", fake_path, 1);
  }

  /* (b) unprivileged, user namespace with mappings from the config. */
  spec = make_spec(user_ns, 2);
  struct rrt_id_mapping self_u[] = {{0, TEST_UID, 1}}, self_g[] = {{5, TEST_GID, 1}};
  spec.lnx.uid_mappings = (struct rrt_id_mappings){self_u, 1};
  spec.lnx.gid_mappings = (struct rrt_id_mappings){self_g, 1};
  rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, subuid, subgid, &p, &err);
  ok(rc == 0 && p.create && p.method == RRT_MAP_SELF && p.deny_setgroups,
     "(b) config maps of only the caller's ids: SELF");
  cleanup_free char *b = fmt_plan_maps(&p);
  is_str(b, "uid:0 1000 1\ngid:5 1001 1\n", "(b) config maps are used as written");
  rrt_userns_plan_free(&p);

  struct rrt_id_mapping wide[] = {{0, TEST_UID, 1}, {1, 100000, 65536}};
  spec.lnx.uid_mappings = (struct rrt_id_mappings){wide, 2};
  rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, subuid, subgid, &p, &err);
  ok(rc == 0 && p.method == RRT_MAP_HELPERS && !p.deny_setgroups && p.uid_map.n == 2 &&
         p.uid_map.v != wide,
     "(b) wider config maps: HELPERS, maps copied");
  rrt_userns_plan_free(&p);

  if (system_has_helpers()) {
    printf("ok %d # SKIP newuidmap is installed in a system directory\n", ++tap_n);
  } else {
    setenv("PATH", empty_path, 1);
    rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, subuid, subgid, &p, &err);
    ok(rc < 0 && err.msg && strstr(err.msg, "newuidmap, not found"),
       "(b) wider maps without helpers: error names newuidmap");
    rrt_error_clear(&err);
    setenv("PATH", fake_path, 1);
  }

  struct rrt_id_mapping zero[] = {{0, TEST_UID, 0}};
  spec.lnx.uid_mappings = (struct rrt_id_mappings){zero, 1};
  rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, subuid, subgid, &p, &err);
  is_str(rc < 0 ? err.msg : NULL, "linux.uidMappings[0].size: must be > 0",
         "(b) size 0 is rejected, naming the entry");
  ok(p.uid_map.v == NULL && p.method == RRT_MAP_NONE, "a failed plan is left empty");
  rrt_error_clear(&err);

  spec.lnx.uid_mappings = (struct rrt_id_mappings){self_u, 1};
  spec.lnx.gid_mappings = (struct rrt_id_mappings){NULL, 0};
  rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, subuid, subgid, &p, &err);
  is_str(rc < 0 ? err.msg : NULL, "linux.gidMappings: required with a new user namespace",
         "(b) uidMappings without gidMappings is an error");
  rrt_error_clear(&err);

  /* (c) privileged with a new user namespace. */
  spec.lnx.uid_mappings = (struct rrt_id_mappings){wide, 2};
  spec.lnx.gid_mappings = (struct rrt_id_mappings){self_g, 1};
  rc = rrt_userns_plan(&spec, 0, 0, "root", true, subuid, subgid, &p, &err);
  cleanup_free char *c = fmt_plan_maps(&p);
  ok(rc == 0 && p.create && p.method == RRT_MAP_DIRECT && !p.deny_setgroups,
     "(c) privileged with config maps: DIRECT");
  is_str(c, "uid:0 1000 1\n1 100000 65536\ngid:5 1001 1\n", "(c) DIRECT uses the config maps");
  rrt_userns_plan_free(&p);

  spec.lnx.uid_mappings = (struct rrt_id_mappings){NULL, 0};
  spec.lnx.gid_mappings = (struct rrt_id_mappings){NULL, 0};
  rc = rrt_userns_plan(&spec, 0, 0, "root", true, subuid, subgid, &p, &err);
  is_str(rc < 0 ? err.msg : NULL,
         "linux.uidMappings: required when running as root with a new user namespace",
         "(c) privileged without mappings: error");
  rrt_error_clear(&err);

  /* (d) privileged, no user namespace: run in ours. */
  spec = make_spec(mnt_ns, 1);
  rc = rrt_userns_plan(&spec, 0, 0, "root", true, subuid, subgid, &p, &err);
  ok(rc == 0 && !p.create && !p.join && p.method == RRT_MAP_NONE && p.uid_map.n == 0,
     "(d) privileged without userns: none");
  rrt_userns_plan_free(&p);

  /* (e) join by path, whoever calls. */
  spec = make_spec(join_ns, 1);
  for (int priv = 0; priv < 2; priv++) {
    rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", priv, subuid, subgid, &p, &err);
    ok(rc == 0 && !p.create && p.join && strcmp(p.join, "/proc/1/ns/user") == 0 &&
           p.method == RRT_MAP_NONE,
       "(e) userns path: join, no maps (privileged=%d)", priv);
    rrt_userns_plan_free(&p);
  }

  /* Mappings without a user namespace cannot mean anything. */
  spec = make_spec(mnt_ns, 1);
  spec.lnx.uid_mappings = (struct rrt_id_mappings){wide, 2};
  rc = rrt_userns_plan(&spec, TEST_UID, TEST_GID, "tester", false, subuid, subgid, &p, &err);
  ok(rc < 0 && err.msg && strstr(err.msg, "no user namespace"),
     "mappings without a user namespace: error");
  rrt_error_clear(&err);
}

static void test_helpers(void)
{
  cleanup_free char *log = xasprintf("%s/helpers.log", tmpdir);
  cleanup_free char *ok_gid = xasprintf("#!/bin/sh\necho \"gid $*\" >> %s\n", log);
  cleanup_free char *ok_uid = xasprintf("#!/bin/sh\necho \"uid $*\" >> %s\n", log);
  struct rrt_id_mapping u[] = {{0, 1000, 1}, {1, 100000, 65536}}, g[] = {{0, 1001, 1}};
  struct rrt_userns_plan p;
  memset(&p, 0, sizeof(p));
  p.create = true;
  p.method = RRT_MAP_HELPERS;
  p.uid_map = (struct rrt_id_mappings){u, 2};
  p.gid_map = (struct rrt_id_mappings){g, 1};
  struct rrt_error err = RRT_ERROR_INIT;

  cleanup_free char *d1 = make_helpers(ok_gid, ok_uid);
  setenv("PATH", d1, 1);
  int rc = rrt_userns_write_maps(1234, &p, &err);
  cleanup_free char *got = NULL;
  struct rrt_error rerr = RRT_ERROR_INIT;
  rrt_read_file(log, &got, NULL, &rerr);
  rrt_error_clear(&rerr);
  ok(rc == 0, "HELPERS: both helpers succeed");
  /* The two helpers run side by side: either may log first. */
  ok(got && (strcmp(got, "gid 1234 0 1001 1\nuid 1234 0 1000 1 1 100000 65536\n") == 0 ||
             strcmp(got, "uid 1234 0 1000 1 1 100000 65536\ngid 1234 0 1001 1\n") == 0),
     "HELPERS: argv built from the maps, both helpers ran: %s", got ? got : "(nothing)");
  rrt_error_clear(&err);

  cleanup_free char *d2 = make_helpers(
      ok_gid, "#!/bin/sh\necho 'newuidmap: write to uid_map failed: Operation not permitted' >&2\n"
              "exit 1\n");
  setenv("PATH", d2, 1);
  rc = rrt_userns_write_maps(1234, &p, &err);
  is_str(rc < 0 ? err.msg : NULL,
         "newuidmap 1234 0 1000 1 1 100000 65536: exited with status 1: newuidmap: write to "
         "uid_map failed: Operation not permitted",
         "HELPERS: failure carries the command, status and the helper's stderr");
  rrt_error_clear(&err);

  cleanup_free char *d3 = make_helpers("#!/nonexistent/interpreter\n", ok_uid);
  setenv("PATH", d3, 1);
  rc = rrt_userns_write_maps(1234, &p, &err);
  cleanup_free char *want = xasprintf("newgidmap: exec %s/newgidmap: %s", d3, strerror(ENOENT));
  is_str(rc < 0 ? err.msg : NULL, want, "HELPERS: exec failure is reported with its errno");
  is_int(err.errnum, ENOENT, "HELPERS: exec failure keeps errno");
  rrt_error_clear(&err);

  cleanup_free char *d4 = make_helpers("#!/bin/sh\nkill -TERM $$\n", ok_uid);
  setenv("PATH", d4, 1);
  rc = rrt_userns_write_maps(1234, &p, &err);
  is_str(rc < 0 ? err.msg : NULL, "newgidmap 1234 0 1001 1: killed by signal 15 SIGTERM",
         "HELPERS: a helper killed by a signal");
  rrt_error_clear(&err);

  p.method = RRT_MAP_NONE;
  ok(rrt_userns_write_maps(1234, &p, &err) == 0, "NONE writes nothing");
}

/* "         0     100000      65536\n" -> "0 100000 65536\n" */
static void squeeze(char *s)
{
  char *o = s;
  bool line_start = true;
  for (char *p = s; *p; p++) {
    if (*p == ' ' && (line_start || p[1] == ' ' || p[1] == '\n'))
      continue;
    *o++ = *p;
    line_start = *p == '\n';
  }
  *o = '\0';
}

/* In a child that unshared a user namespace, waits for the maps, then reports
 * "uid_map|gid_map|setgroups|in_initial" back. */
static int run_in_new_userns(const struct rrt_userns_plan *plan, char **report,
                             struct rrt_error *err)
{
  int ready[2], go[2], back[2];
  if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 || pipe2(back, O_CLOEXEC) < 0)
    abort();
  pid_t pid = fork();
  if (pid < 0)
    abort();
  if (pid == 0) {
    char c = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    if (c != 'y' || read(go[0], &c, 1) != 1)
      _exit(1);
    char *u = NULL, *g = NULL, *sg = NULL;
    struct rrt_error e = RRT_ERROR_INIT;
    rrt_read_file("/proc/self/uid_map", &u, NULL, &e);
    rrt_read_file("/proc/self/gid_map", &g, NULL, &e);
    rrt_read_file("/proc/self/setgroups", &sg, NULL, &e);
    if (u)
      squeeze(u);
    if (g)
      squeeze(g);
    char *out = xasprintf("%s|%s|%s|%d%d", u ? u : "", g ? g : "", sg ? sg : "",
                          rrt_in_initial_userns(), rrt_host_privileged());
    (void)!rrt_write_all(back[1], out, strlen(out));
    _exit(0);
  }
  close(ready[1]);
  close(go[0]);
  close(back[1]);
  char c = 'n';
  int rc = -1;
  if (read(ready[0], &c, 1) == 1 && c == 'y') {
    rc = rrt_userns_write_maps(pid, plan, err);
    /* A map can be written once: a second attempt must fail, naming it. */
    if (rc == 0 && plan->method == RRT_MAP_DIRECT) {
      struct rrt_error again = RRT_ERROR_INIT;
      int rc2 = rrt_userns_write_maps(pid, plan, &again);
      ok(rc2 < 0 && again.msg && strstr(again.msg, "write \"0 200000 1000\" to /proc/") &&
             again.errnum == EPERM,
         "DIRECT: writing a map twice fails, naming the file and map");
      if (again.msg)
        printf("#   %s\n", again.msg);
      rrt_error_clear(&again);
    }
    (void)!write(go[1], "g", 1);
    rrt_read_fd(back[0], report, NULL, err);
  } else {
    rc = -2;
  }
  close(go[1]);
  close(ready[0]);
  close(back[0]);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  return rc;
}

static void test_real_maps(void)
{
  if (geteuid() != 0 || !rrt_in_initial_userns()) {
    printf("ok %d # SKIP real map writing needs root in the initial user namespace\n", ++tap_n);
    return;
  }
  struct rrt_id_mapping u[] = {{0, 100000, 65536}, {65536, 0, 1}}, g[] = {{0, 200000, 1000}};
  struct rrt_userns_plan p;
  memset(&p, 0, sizeof(p));
  p.create = true;
  p.method = RRT_MAP_DIRECT;
  p.uid_map = (struct rrt_id_mappings){u, 2};
  p.gid_map = (struct rrt_id_mappings){g, 1};
  struct rrt_error err = RRT_ERROR_INIT;
  cleanup_free char *report = NULL;
  int rc = run_in_new_userns(&p, &report, &err);
  if (rc == -2) {
    printf("ok %d # SKIP unshare(CLONE_NEWUSER) is not permitted here\n", ++tap_n);
    return;
  }
  ok(rc == 0, "DIRECT write_maps succeeds");
  if (rc < 0)
    printf("#   %s\n", rrt_error_msg(&err));
  is_str(report, "0 100000 65536\n65536 0 1\n|0 200000 1000\n|allow\n|00",
         "DIRECT: the child sees the maps; setgroups allowed; not initial, not host-privileged");
  rrt_error_clear(&err);

  struct rrt_id_mapping su[] = {{0, (uint32_t)getuid(), 1}}, sgm[] = {{0, (uint32_t)getgid(), 1}};
  p.method = RRT_MAP_SELF;
  p.deny_setgroups = true;
  p.uid_map = (struct rrt_id_mappings){su, 1};
  p.gid_map = (struct rrt_id_mappings){sgm, 1};
  cleanup_free char *report2 = NULL;
  rc = run_in_new_userns(&p, &report2, &err);
  ok(rc == 0, "SELF write_maps succeeds");
  cleanup_free char *want =
      xasprintf("0 %u 1\n|0 %u 1\n|deny\n|00", (unsigned)getuid(), (unsigned)getgid());
  is_str(report2, want, "SELF: one self map each, setgroups denied");
  rrt_error_clear(&err);
}

/* uid 0 is not privilege: without CAP_SYS_ADMIN root is not host-privileged. */
static void test_privileged(void)
{
  if (geteuid() != 0 || !rrt_in_initial_userns()) {
    printf("ok %d # SKIP needs root in the initial user namespace\n", ++tap_n);
    return;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    abort();
  pid_t pid = fork();
  if (pid == 0) {
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    char r[2] = {(char)('0' + rrt_host_privileged()), 'x'};
    if (syscall(SYS_capget, &hdr, data) == 0) {
      data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
      if (syscall(SYS_capset, &hdr, data) == 0)
        r[1] = (char)('0' + rrt_host_privileged());
    }
    (void)!write(fds[1], r, 2);
    _exit(0);
  }
  close(fds[1]);
  char r[3] = {0};
  rrt_read_all(fds[0], r, 2);
  close(fds[0]);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  is_str(r, "10", "host root is privileged; uid 0 without CAP_SYS_ADMIN is not");
}

/* The owner's name, for its /etc/subuid entry: /etc/passwd read directly. */
static void test_user_name(void)
{
  const char *pw = "root:x:0:0:root:/root:/bin/bash\n"
                   "# a comment:x:1000:1000::/:/bin/sh\n"
                   "+nis:x:1001:1001::/:\n"
                   "broken-line-without-colons\n"
                   "alice:x:10000:10000:Alice:/home/alice:/bin/bash\n"
                   "bob::1000x:1:::\n"
                   "carol:x:1002:1002::/home/carol:/bin/sh";
  cleanup_free char *a = rrt_passwd_lookup(pw, 10000);
  is_str(a, "alice", "passwd: uid 10000 is alice");
  cleanup_free char *r = rrt_passwd_lookup(pw, 0);
  is_str(r, "root", "passwd: uid 0 is root");
  cleanup_free char *c = rrt_passwd_lookup(pw, 1002);
  is_str(c, "carol", "passwd: the last line needs no newline");
  ok(rrt_passwd_lookup(pw, 1000) == NULL, "passwd: comments and a bad uid field match nothing");
  ok(rrt_passwd_lookup(pw, 1001) == NULL, "passwd: NIS compat lines are left to NSS");
  ok(rrt_passwd_lookup(pw, 1) == NULL, "passwd: uid 1 is nobody here");
  ok(rrt_passwd_lookup("", 0) == NULL, "passwd: empty text");
  struct passwd *me = getpwuid(getuid());
  const char *name = rrt_user_name(getuid());
  is_str(name, me ? me->pw_name : NULL, "rrt_user_name agrees with getpwuid for uid %u",
         (unsigned)getuid());
  ok(rrt_user_name(getuid()) == name, "and is remembered");
  ok(rrt_user_name(3999999) == NULL, "a uid nobody has: no name (getent asked, said nothing)");
}

/* Nested (a CI job's container): the caller as rrt_userns_caller_read would find it. */
static struct rrt_userns_caller nested_caller(uid_t uid, const char *uid_map, bool setid,
                                              bool setfcap, bool helpers_work)
{
  struct rrt_userns_caller c = {.uid = uid,
                                .euid = uid,
                                .gid = uid,
                                .username = "tester",
                                .initial = strncmp(uid_map, "0 0 4294967295", 14) == 0,
                                .nested = true,
                                .setid = setid,
                                .setfcap = setfcap,
                                .helpers_work = helpers_work,
                                .subuid_file = "/nonexistent",
                                .subgid_file = "/nonexistent"};
  rrt_userns_parse_own_map(uid_map, &c.uids);
  rrt_userns_parse_own_map(uid_map, &c.gids);
  if (!helpers_work)
    c.helpers_why = xstrdup("/usr/bin/newuidmap: it lies on a nosuid mount");
  return c;
}

static void test_plan_nested(void)
{
  struct rrt_namespace user_ns[] = {{CLONE_NEWNS, NULL}, {CLONE_NEWUSER, NULL}};
  struct rrt_namespace mnt_ns[] = {{CLONE_NEWNS, NULL}};
  struct rrt_spec spec = make_spec(user_ns, 2);
  struct rrt_userns_plan p;
  struct rrt_error err = RRT_ERROR_INIT;
  const char *podman_map = "         0       1000          1\n         1     100000      65536\n";

  struct rrt_id_mappings ids = {0};
  ok(rrt_userns_parse_own_map(podman_map, &ids) == 0 && ids.n == 2 && ids.v[1].container_id == 1 &&
         ids.v[1].host_id == 100000 && ids.v[1].size == 65536,
     "nested: /proc/self/uid_map's columns are parsed");
  ok(rrt_userns_ids_cover(&ids, 0, 65537) && rrt_userns_ids_cover(&ids, 1000, 10) &&
         !rrt_userns_ids_cover(&ids, 100000, 1) && !rrt_userns_ids_cover(&ids, 65530, 10),
     "nested: a range is covered across lines, not beyond them");
  free(ids.v);

  /* Root of a job container with CAP_SETUID/CAP_SETGID (Docker's, podman's defaults): every id
   * of its namespace onto itself, written directly. */
  struct rrt_userns_caller c = nested_caller(0, podman_map, true, true, false);
  int rc = rrt_userns_plan_caller(&spec, &c, &p, &err);
  cleanup_free char *a = rc == 0 ? fmt_plan_maps(&p) : xstrdup(rrt_error_msg(&err));
  is_str(a, "uid:0 0 1\n1 1 65536\ngid:0 0 1\n1 1 65536\n",
         "nested root with CAP_SETUID: the namespace's ids onto themselves");
  ok(rc == 0 && p.method == RRT_MAP_DIRECT && !p.deny_setgroups,
     "nested root: DIRECT, setgroups kept");
  rrt_userns_plan_free(&p);
  /* The same without a user namespace in the config (Docker's job root has no CAP_SYS_ADMIN: it
   * cannot make the other namespaces without one). */
  struct rrt_spec nouser = make_spec(mnt_ns, 1);
  rc = rrt_userns_plan_caller(&nouser, &c, &p, &err);
  ok(rc == 0 && p.create && p.method == RRT_MAP_DIRECT,
     "nested root, no userns in the config: one is added");
  rrt_userns_plan_free(&p);
  rrt_userns_caller_free(&c);

  /* Docker's root in the initial namespace: 0 0 4294967295 stays below (uid_t)-1. */
  c = nested_caller(0, "0 0 4294967295\n", true, true, false);
  rc = rrt_userns_plan_caller(&spec, &c, &p, &err);
  cleanup_free char *b = rc == 0 ? fmt_plan_maps(&p) : xstrdup(rrt_error_msg(&err));
  is_str(b, "uid:0 0 4294967294\ngid:0 0 4294967294\n",
         "nested in Docker: every id but the last, so the container's map is not the host's");
  rrt_userns_plan_free(&p);
  rrt_userns_caller_free(&c);

  /* Rootless podman's runtime call: root with CAP_SYS_ADMIN in its namespace, a config user
   * namespace without maps: rootless, so its ids (not the old "required" error). */
  c = nested_caller(0, podman_map, true, true, false);
  c.privileged = true;
  rc = rrt_userns_plan_caller(&spec, &c, &p, &err);
  ok(rc == 0 && p.method == RRT_MAP_DIRECT && p.uid_map.n == 2,
     "root with every capability of its namespace, no maps: the namespace's ids");
  rrt_userns_plan_free(&p);
  rc = rrt_userns_plan_caller(&nouser, &c, &p, &err);
  ok(rc == 0 && !p.create && p.method == RRT_MAP_NONE,
     "root with every capability of its namespace, no userns in the config: none added");
  rrt_userns_plan_free(&p);
  rrt_userns_caller_free(&c);

  /* uid 1000 without capabilities and no working helper: itself alone, setgroups denied. */
  c = nested_caller(1000, podman_map, false, false, false);
  rc = rrt_userns_plan_caller(&spec, &c, &p, &err);
  cleanup_free char *d = rc == 0 ? fmt_plan_maps(&p) : xstrdup(rrt_error_msg(&err));
  is_str(d, "uid:0 1000 1\ngid:0 1000 1\n", "nested uid 1000, no helper: itself alone");
  ok(rc == 0 && p.method == RRT_MAP_SELF && p.deny_setgroups,
     "nested uid 1000: SELF, setgroups denied");
  rrt_userns_plan_free(&p);
  rrt_userns_caller_free(&c);

  /* Working helpers and the podman/stable layout (two ranges around the user's own id): every
   * range, one after the other; a range the namespace lacks: itself alone. */
  cleanup_free char *sub = write_temp("tester:1:999\ntester:1001:64535\n");
  cleanup_free char *far = write_temp("tester:200000:65536\n");
  c = nested_caller(1000, "0 1000 1\n1 100000 65536\n", false, false, true);
  c.subuid_file = c.subgid_file = sub;
  rc = rrt_userns_plan_caller(&spec, &c, &p, &err);
  cleanup_free char *e = rc == 0 ? fmt_plan_maps(&p) : xstrdup(rrt_error_msg(&err));
  is_str(e, "uid:0 1000 1\n1 1 999\n1000 1001 64535\ngid:0 1000 1\n1 1 999\n1000 1001 64535\n",
         "nested with working helpers: 0 -> itself, then every subordinate range");
  ok(rc == 0 && p.method == RRT_MAP_HELPERS, "nested with working helpers: HELPERS");
  rrt_userns_plan_free(&p);
  c.subuid_file = c.subgid_file = far;
  rc = rrt_userns_plan_caller(&spec, &c, &p, &err);
  ok(rc == 0 && p.method == RRT_MAP_SELF && p.uid_map.n == 1,
     "nested, subordinate ids the namespace lacks (the host's /etc/subuid): itself alone");
  rrt_userns_plan_free(&p);
  c.subuid_file = c.subgid_file = "/nonexistent";
  rrt_userns_caller_free(&c);

  /* uid 0 without CAP_SETFCAP: the kernel refuses to map it (verify_root_map): one line with
   * the cause and the fix, before anything is made. */
  c = nested_caller(0, podman_map, false, false, false);
  rc = rrt_userns_plan_caller(&spec, &c, &p, &err);
  const char *m = rc < 0 ? err.msg : "";
  const char *head = "uid 0 of this container may map itself into a new user namespace only with "
                     "CAP_SETFCAP";
  ok(strncmp(m, head, strlen(head)) == 0 && strstr(m, "it lies on a nosuid mount") &&
         strstr(m, "add CAP_SETFCAP to the outer container") &&
         strstr(m, "or run the job as a non-root user"),
     "nested root without CAP_SETFCAP: the cause and the fix (%s)", m);
  ok(rc < 0 && p.method == RRT_MAP_NONE && p.uid_map.n == 0,
     "nested root without CAP_SETFCAP: no plan");
  rrt_error_clear(&err);
  /* With CAP_SETFCAP but not CAP_SETUID: itself alone is fine. */
  c.setfcap = true;
  rc = rrt_userns_plan_caller(&spec, &c, &p, &err);
  ok(rc == 0 && p.method == RRT_MAP_SELF, "nested root with CAP_SETFCAP only: itself alone");
  rrt_userns_plan_free(&p);
  rrt_userns_caller_free(&c);
}

int main(void)
{
  if (!mkdtemp(tmpdir))
    abort();
  cleanup_free char *empty_path = xasprintf("%s/empty", tmpdir);
  mkdir(empty_path, 0755);
  cleanup_free char *fake = make_helpers("#!/bin/sh\nexit 0\n", "#!/bin/sh\nexit 0\n");
  const char *env_path = getenv("PATH");
  cleanup_free char *saved_path = xstrdup(env_path ? env_path : "/usr/bin:/bin");

  test_parse();
  test_lookup();
  test_user_name();
  test_format();
  test_plan(fake, empty_path);
  test_plan_nested();
  test_helpers();
  test_real_maps();
  test_privileged();

  setenv("PATH", saved_path, 1);
  cleanup_free char *rm = xasprintf("rm -rf '%s'", tmpdir);
  if (system(rm) != 0)
    printf("# could not remove %s\n", tmpdir);
  return tap_done();
}
