/* test_cgroup.c: linux.resources as interface file writes (cgroup v2 and v1), all or nothing,
 * against plain files standing for a cgroup's interface files; the state record round trip. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/util.h"
#include "tap.h"

static char tmpdir[] = "/tmp/rrt-test-cgroup-XXXXXX";

/* A directory holding empty interface files. */
static char *fake_cgroup(const char *name, const char *const *files)
{
  char *dir = xasprintf("%s/%s", tmpdir, name);
  mkdir(dir, 0755);
  for (; *files; files++) {
    cleanup_free char *p = xasprintf("%s/%s", dir, *files);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0)
      close(fd);
  }
  return dir;
}

static char *content(const char *dir, const char *file)
{
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  char *text = NULL;
  if (rrt_read_file(p, &text, NULL, NULL) < 0)
    return xstrdup("(missing)");
  return text;
}

static void test_v2(void)
{
  static const char *const files[] = {"memory.max", "memory.swap.max",        "pids.max", "cpu.max",
                                      "cpu.weight", "cgroup.max.descendants", NULL};
  struct rrt_cgroup cg = {.v2 = fake_cgroup("v2", files)};
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_cgroup_update(&cg,
                            "{\"memory\":{\"limit\":67108864,\"swap\":100663296},"
                            "\"pids\":{\"limit\":7},\"cpu\":{\"quota\":50000,\"period\":"
                            "100000,\"shares\":1024}}",
                            false, &err);
  is_int(r, 0, "v2: memory, swap, pids, cpu applied");
  cleanup_free char *mem = content(cg.v2, "memory.max");
  cleanup_free char *swap = content(cg.v2, "memory.swap.max");
  cleanup_free char *pids = content(cg.v2, "pids.max");
  cleanup_free char *cpu = content(cg.v2, "cpu.max");
  cleanup_free char *w = content(cg.v2, "cpu.weight");
  is_str(mem, "67108864", "memory.limit -> memory.max");
  is_str(swap, "33554432", "memory.swap (memory+swap) -> memory.swap.max (the swap alone)");
  is_str(pids, "7", "pids.limit -> pids.max");
  is_str(cpu, "50000 100000", "cpu quota and period -> cpu.max");
  is_str(w, "39", "cpu.shares 1024 -> cpu.weight 39");

  /* All or nothing: io.weight is missing, so not even cgroup.max.descendants is written. */
  r = rrt_cgroup_update(&cg,
                        "{\"unified\":{\"cgroup.max.descendants\":\"3\"},\"blockIO\":"
                        "{\"weight\":500}}",
                        false, &err);
  is_int(r, -1, "a limit whose controller file is missing fails the update");
  ok(strstr(rrt_error_msg(&err), "blockIO.weight: the io controller is not enabled") &&
         strstr(rrt_error_msg(&err), "Delegate="),
     "naming the limit and how to delegate the controller: %s", rrt_error_msg(&err));
  cleanup_free char *desc = content(cg.v2, "cgroup.max.descendants");
  is_str(desc, "", "and nothing else was written");
  rrt_error_clear(&err);

  r = rrt_cgroup_update(&cg, "{\"unified\":{\"nosuch.file\":\"1\"}}", false, &err);
  ok(r < 0 && strstr(rrt_error_msg(&err), "unified.nosuch.file: unknown interface file"),
     "an unknown unified key is an error: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  r = rrt_cgroup_update(&cg, "{\"memory\":{\"swappiness\":10}}", false, &err);
  ok(r < 0 && strstr(rrt_error_msg(&err), "memory.swappiness: has no cgroup v2 equivalent"),
     "memory.swappiness on cgroup v2 is an error: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  r = rrt_cgroup_update(&cg, "{}", false, &err);
  is_int(r, 0, "no limit: nothing to do");
  rrt_cgroup_free(&cg);
}

static void test_v1(void)
{
  static const char *const mem[] = {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes",
                                    "memory.swappiness", NULL};
  static const char *const cpu[] = {"cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.shares", NULL};
  static const char *const pids[] = {"pids.max", NULL};
  struct rrt_cgroup cg = {0};
  cg.v1[RRT_CG_MEMORY] = fake_cgroup("memory", mem);
  cg.v1[RRT_CG_CPU] = fake_cgroup("cpu", cpu);
  cg.v1[RRT_CG_PIDS] = fake_cgroup("pids", pids);
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_cgroup_update(&cg,
                            "{\"memory\":{\"limit\":67108864,\"swap\":100663296,\"swappiness\":"
                            "10},\"pids\":{\"limit\":20},\"cpu\":{\"quota\":50000,\"period\":"
                            "100000,\"shares\":512}}",
                            false, &err);
  is_int(r, 0, "v1: memory, swap, swappiness, pids, cpu applied");
  cleanup_free char *m = content(cg.v1[RRT_CG_MEMORY], "memory.limit_in_bytes");
  cleanup_free char *sw = content(cg.v1[RRT_CG_MEMORY], "memory.memsw.limit_in_bytes");
  cleanup_free char *q = content(cg.v1[RRT_CG_CPU], "cpu.cfs_quota_us");
  cleanup_free char *s = content(cg.v1[RRT_CG_CPU], "cpu.shares");
  cleanup_free char *p = content(cg.v1[RRT_CG_PIDS], "pids.max");
  is_str(m, "67108864", "memory.limit -> memory.limit_in_bytes");
  is_str(sw, "100663296", "memory.swap -> memory.memsw.limit_in_bytes as it is");
  is_str(q, "50000", "cpu.quota -> cpu.cfs_quota_us");
  is_str(s, "512", "cpu.shares as it is");
  is_str(p, "20", "pids.limit -> pids.max");
  r = rrt_cgroup_update(&cg, "{\"cpu\":{\"cpus\":\"0\"}}", false, &err);
  ok(r < 0 && strstr(rrt_error_msg(&err), "cpu.cpus"),
     "no cpuset controller here: cpu.cpus is an error: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);

  struct rrt_state st = {0};
  cg.unit = xstrdup("x.scope");
  rrt_cgroup_store(&cg, &st);
  struct rrt_cgroup back;
  rrt_cgroup_load(&st, &back);
  is_str(back.v1[RRT_CG_MEMORY], cg.v1[RRT_CG_MEMORY], "the state records the v1 directories");
  is_str(back.unit, "x.scope", "and the systemd scope");
  ok(back.v2 == NULL && back.v1[RRT_CG_BLKIO] == NULL, "and nothing else");
  rrt_cgroup_free(&back);
  rrt_state_free(&st);
  rrt_cgroup_free(&cg);
}

/* Every resource: which values ask for nothing (never written), the kernel's default (written
 * only where the file is) or a limit. */
static void test_asks(void)
{
  static const struct {
    const char *field, *value;
    enum rrt_cg_ask want;
  } table[] = {
      {"memory.limit", "0", RRT_CG_UNSET},
      {"memory.limit", "-1", RRT_CG_DEFAULT},
      {"memory.limit", "1048576", RRT_CG_LIMIT},
      {"memory.reservation", "0", RRT_CG_UNSET},
      {"memory.reservation", "-1", RRT_CG_DEFAULT},
      {"memory.reservation", "4096", RRT_CG_LIMIT},
      {"memory.swap", "0", RRT_CG_UNSET},
      {"memory.swap", "-1", RRT_CG_DEFAULT},
      {"memory.swap", "2097152", RRT_CG_LIMIT},
      {"memory.swappiness", "60", RRT_CG_LIMIT},
      {"cpu.shares", "0", RRT_CG_UNSET},
      {"cpu.shares", "1024", RRT_CG_DEFAULT},
      {"cpu.shares", "512", RRT_CG_LIMIT},
      {"cpu.quota", "0", RRT_CG_UNSET},
      {"cpu.quota", "-1", RRT_CG_DEFAULT},
      {"cpu.quota", "50000", RRT_CG_LIMIT},
      {"cpu.period", "0", RRT_CG_UNSET},
      {"cpu.period", "100000", RRT_CG_DEFAULT},
      {"cpu.period", "50000", RRT_CG_LIMIT},
      {"cpu.burst", "0", RRT_CG_DEFAULT},
      {"cpu.burst", "1000", RRT_CG_LIMIT},
      {"cpu.realtimeRuntime", "0", RRT_CG_UNSET},
      {"cpu.realtimeRuntime", "950000", RRT_CG_LIMIT},
      {"cpu.realtimePeriod", "0", RRT_CG_UNSET},
      {"cpu.realtimePeriod", "1000000", RRT_CG_LIMIT},
      {"cpu.cpus", "", RRT_CG_UNSET},
      {"cpu.cpus", "0", RRT_CG_LIMIT},
      {"cpu.mems", "", RRT_CG_UNSET},
      {"cpu.mems", "0", RRT_CG_LIMIT},
      {"cpu.idle", "0", RRT_CG_DEFAULT},
      {"cpu.idle", "1", RRT_CG_LIMIT},
      {"blockIO.weight", "0", RRT_CG_UNSET},
      {"blockIO.weight", "500", RRT_CG_LIMIT},
      {"blockIO.leafWeight", "0", RRT_CG_UNSET},
      {"blockIO.leafWeight", "300", RRT_CG_LIMIT},
      {"blockIO.weightDevice", "0", RRT_CG_UNSET},
      {"blockIO.weightDevice", "200", RRT_CG_LIMIT},
      {"blockIO.throttleReadBpsDevice", "0", RRT_CG_DEFAULT},
      {"blockIO.throttleReadBpsDevice", "1048576", RRT_CG_LIMIT},
      {"blockIO.throttleWriteBpsDevice", "0", RRT_CG_DEFAULT},
      {"blockIO.throttleReadIOPSDevice", "0", RRT_CG_DEFAULT},
      {"blockIO.throttleWriteIOPSDevice", "0", RRT_CG_DEFAULT},
      {"blockIO.throttleWriteIOPSDevice", "10", RRT_CG_LIMIT},
      {"pids.limit", "-1", RRT_CG_DEFAULT},
      {"pids.limit", "0", RRT_CG_UNSET},
      {"pids.limit", "100", RRT_CG_LIMIT},
      {"network.classID", "0", RRT_CG_UNSET},
      {"network.classID", "1048577", RRT_CG_LIMIT},
      {"hugepageLimits", "1048576", RRT_CG_LIMIT},
      {"unified.memory.high", "max", RRT_CG_LIMIT},
  };
  static const char *const names[] = {"unset", "default", "limit"};
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    enum rrt_cg_ask got = rrt_cgroup_asks(table[i].field, table[i].value);
    ok(got == table[i].want, "%s %s asks: %s (got %s)", table[i].field, table[i].value,
       names[table[i].want], names[got]);
  }

  /* What Docker and ctr send with every container, where the host has neither file: root on a
   * cgroup v1 host without CFQ (no blkio.weight) and a user without a delegated cgroup. */
  static const char *const blk[] = {"blkio.throttle.read_bps_device", NULL};
  static const char *const cpu[] = {"cpu.shares", NULL};
  struct rrt_cgroup cg = {0};
  cg.v1[RRT_CG_BLKIO] = fake_cgroup("blkio-nocfq", blk);
  cg.v1[RRT_CG_CPU] = fake_cgroup("cpu-noquota", cpu);
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_cgroup_update(&cg,
                            "{\"blockIO\":{\"weight\":0},\"cpu\":{\"shares\":0,\"quota\":0,"
                            "\"period\":0,\"cpus\":\"\",\"mems\":\"\"},\"memory\":{\"swap\":0}}",
                            false, &err);
  ok(r == 0, "Docker's zeros are no limit, on a host without blkio.weight: %s",
     r < 0 ? rrt_error_msg(&err) : "ok");
  rrt_error_clear(&err);
  cleanup_free char *shares = content(cg.v1[RRT_CG_CPU], "cpu.shares");
  is_str(shares, "", "and nothing was written for them");
  r = rrt_cgroup_update(&cg, "{\"blockIO\":{\"weight\":500}}", false, &err);
  ok(r < 0 && strstr(rrt_error_msg(&err), "blockIO.weight") &&
         strstr(rrt_error_msg(&err), "blkio.weight does not exist"),
     "a real weight there is an error naming it: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  cg.limits_warn = true;
  r = rrt_cgroup_update(&cg, "{\"blockIO\":{\"weight\":500},\"cpu\":{\"shares\":512}}", false,
                        &err);
  shares = (free(shares), content(cg.v1[RRT_CG_CPU], "cpu.shares"));
  ok(r == 0 && strcmp(shares, "512") == 0,
     RRT_LIMITS_ANNOTATION "=warn: a warning, and what can be applied is (cpu.shares %s)", shares);
  rrt_error_clear(&err);
  cg.limits_warn = false;
  rrt_cgroup_free(&cg);

  /* BFQ (kernels >= 5.0): blkio.bfq.weight where there is no blkio.weight. */
  static const char *const bfq[] = {"blkio.bfq.weight", "blkio.bfq.weight_device", NULL};
  cg.v1[RRT_CG_BLKIO] = fake_cgroup("blkio-bfq", bfq);
  r = rrt_cgroup_update(&cg, "{\"blockIO\":{\"weight\":300}}", false, &err);
  cleanup_free char *bw = content(cg.v1[RRT_CG_BLKIO], "blkio.bfq.weight");
  ok(r == 0 && strcmp(bw, "300") == 0, "blockIO.weight -> blkio.bfq.weight under BFQ (%s)", bw);
  rrt_error_clear(&err);
  rrt_cgroup_free(&cg);
  bool warn = true;
  ok(rrt_cgroup_limits_mode(NULL, &warn, &err) == 0 && !warn &&
         rrt_cgroup_limits_mode("warn", &warn, &err) == 0 && warn,
     "the annotation: absent is error, warn is warn");
  r = rrt_cgroup_limits_mode("loud", &warn, &err);
  ok(r < 0 && strstr(rrt_error_msg(&err), RRT_LIMITS_ANNOTATION),
     "any other value is an error naming the annotation: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
}

/* update: cpu.max keeps what is not set; a failed write puts back what was written. */
static void test_update_all_or_nothing(void)
{
  static const char *const files[] = {"memory.max", "cpu.max", "pids.max", NULL};
  struct rrt_cgroup cg = {.v2 = fake_cgroup("v2-update", files)};
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_cgroup_update(&cg, "{\"cpu\":{\"quota\":20000,\"period\":50000}}", false, &err);
  is_int(r, 0, "cpu.max set");
  r = rrt_cgroup_update(&cg, "{\"cpu\":{\"quota\":0,\"period\":0},\"memory\":{\"limit\":1048576}}",
                        false, &err);
  cleanup_free char *cpu = content(cg.v2, "cpu.max");
  ok(r == 0 && strcmp(cpu, "20000 50000") == 0,
     "quota and period 0 (the shim's \"unchanged\") leave cpu.max as it was: %s", cpu);
  rrt_error_clear(&err);
  r = rrt_cgroup_update(&cg, "{\"cpu\":{\"quota\":30000}}", false, &err);
  cpu = (free(cpu), content(cg.v2, "cpu.max"));
  ok(r == 0 && strcmp(cpu, "30000 50000") == 0, "a quota alone keeps the period: %s", cpu);
  rrt_error_clear(&err);

  /* pids.max made a directory: its write fails after memory.max was written. */
  cleanup_free char *pids = xasprintf("%s/pids.max", cg.v2);
  unlink(pids);
  mkdir(pids, 0755);
  r = rrt_cgroup_update(&cg, "{\"memory\":{\"limit\":2097152},\"pids\":{\"limit\":10}}", false,
                        &err);
  cleanup_free char *mem = content(cg.v2, "memory.max");
  ok(r < 0 && strstr(rrt_error_msg(&err), "pids.limit"), "a failed write fails the update: %s",
     rrt_error_msg(&err));
  is_str(mem, "1048576", "and memory.max written before it has its old value again");
  rrt_error_clear(&err);
  rmdir(pids);
  rrt_cgroup_free(&cg);
}

static void test_none(void)
{
  struct rrt_cgroup cg = {0};
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_cgroup_update(&cg, "{\"pids\":{\"limit\":10}}", false, &err);
  ok(r < 0 && strstr(rrt_error_msg(&err), "pids.limit: no delegated cgroup v2 pids controller"),
     "no cgroup at all: a limit is an error naming it: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  /* What engines pass for every container asks for no limit: nothing to enforce, no error. */
  r = rrt_cgroup_update(&cg,
                        "{\"pids\":{\"limit\":-1},\"memory\":{\"limit\":-1,\"swap\":-1},"
                        "\"cpu\":{\"shares\":0,\"quota\":-1}}",
                        false, &err);
  ok(r == 0, "no cgroup at all: unlimited pids, memory, swap and cpu are accepted: %s",
     r < 0 ? rrt_error_msg(&err) : "ok");
  rrt_error_clear(&err);
  r = rrt_cgroup_update(&cg, "{\"pids\":{\"limit\":-1},\"memory\":{\"limit\":1048576}}", false,
                        &err);
  ok(r < 0 && strstr(rrt_error_msg(&err), "memory.limit") && !strstr(rrt_error_msg(&err), "pids"),
     "but a real limit beside them is still an error, naming only it: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  ok(rrt_cgroup_has_device_rules("{\"devices\":[{\"allow\":false}]}") &&
         !rrt_cgroup_has_device_rules("{\"devices\":[]}") && !rrt_cgroup_has_device_rules(NULL),
     "device rules are seen");
}

/* What init joins with: one tasks file per distinct v1 directory (co-mounted hierarchies share
 * one), its own pid in cgroup.procs unless it was cloned into the v2 directory. */
static void test_join(void)
{
  static const char *const files[] = {"tasks", "cgroup.procs", NULL};
  cleanup_free char *v2 = fake_cgroup("join-v2", files);
  cleanup_free char *cpu = fake_cgroup("join-cpu", files);
  cleanup_free char *pids = fake_cgroup("join-pids", files);
  struct rrt_cgroup cg = {0};
  cg.v2 = v2;
  cg.v1[RRT_CG_CPU] = cpu;
  cg.v1[RRT_CG_CPUACCT] = cpu; /* cpu,cpuacct */
  cg.v1[RRT_CG_PIDS] = pids;
  struct rrt_cgroup_join j;
  struct rrt_error err = RRT_ERROR_INIT;
  is_int(rrt_cgroup_join_prepare(&cg, &j, &err), 0, "join: prepared");
  ok(j.v2_fd >= 0 && fcntl(j.v2_fd, F_GETFD) == FD_CLOEXEC, "join: the v2 directory, O_CLOEXEC");
  ok(j.v1_tasks[RRT_CG_CPU] && !j.v1_tasks[RRT_CG_CPUACCT] && j.v1_tasks[RRT_CG_PIDS],
     "join: a co-mounted hierarchy's directory is joined once");
  is_int(rrt_cgroup_join_self(&j, true, &err), 0, "join: cloned into v2, moves into v1 itself");
  cleanup_free char *t1 = content(cpu, "tasks");
  cleanup_free char *t2 = content(pids, "tasks");
  cleanup_free char *p1 = content(v2, "cgroup.procs");
  ok(strcmp(t1, "0") == 0 && strcmp(t2, "0") == 0 && !*p1,
     "join: \"0\" (itself alone) to each v1 tasks file, v2 left alone (tasks %s %s, procs '%s')",
     t1, t2, p1);
  /* A directory that is no cgroup: the clone3 is refused, a plain fork and cgroup.procs. */
  bool in_v2 = true;
  pid_t pid = rrt_cgroup_fork_into(&j, &in_v2);
  if (pid == 0)
    _exit(in_v2 || rrt_cgroup_join_self(&j, in_v2, NULL) < 0 ? 1 : 0);
  int st = -1;
  waitpid(pid, &st, 0);
  cleanup_free char *p2 = content(v2, "cgroup.procs");
  char want[32];
  snprintf(want, sizeof(want), "%d", (int)pid);
  ok(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && strcmp(p2, want) == 0,
     "join: no CLONE_INTO_CGROUP there: fork, and the child writes its pid to cgroup.procs (%s)",
     p2);
  rrt_cgroup_join_free(&j);
  cg.v2 = xasprintf("%s/join-none", tmpdir);
  is_int(rrt_cgroup_join_prepare(&cg, &j, &err), -1, "join: a v2 directory that is not there");
  ok(strstr(rrt_error_msg(&err), "join-none") != NULL, "join: the error names it: %s",
     rrt_error_msg(&err));
  rrt_error_clear(&err);
  rrt_cgroup_join_free(&j);
  free(cg.v2);
}

int main(void)
{
  if (!mkdtemp(tmpdir))
    return 1;
  test_v2();
  test_v1();
  test_none();
  test_asks();
  test_update_all_or_nothing();
  test_join();
  cleanup_free char *cmd = xasprintf("rm -rf %s", tmpdir);
  if (system(cmd) != 0)
    printf("# cannot remove %s\n", tmpdir);
  return tap_done();
}
