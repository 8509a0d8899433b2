/* test_state.c: the state root's checks (trust.c), the records create makes before state.json,
 * what a corrupt or missing state.json reads as, and where the private directory is. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootlessrt/state.h"
#include "rootlessrt/trust.h"
#include "rootlessrt/util.h"
#include "tap.h"

static char base[] = "/tmp/rrt-test-state.XXXXXX";

static char *at(const char *name)
{
  return xasprintf("%s/%s", base, name);
}

static void roots(void)
{
  struct rrt_error e = RRT_ERROR_INIT;
  cleanup_free char *good = at("good");
  mkdir(good, 0700);
  ok(rrt_trust_root(good, "state root", &e) == 0, "a private directory of ours is a root");
  rrt_error_clear(&e);

  cleanup_free char *link = at("link");
  if (symlink(good, link) < 0)
    ok(0, "symlink");
  ok(rrt_trust_root(link, "state root", &e) < 0 && strstr(e.msg, "is a symbolic link") &&
         strstr(e.msg, "rm "),
     "a symlink is refused, saying how to fix it: %s", e.msg ? e.msg : "");
  rrt_error_clear(&e);

  cleanup_free char *open_dir = at("open");
  mkdir(open_dir, 0700);
  chmod(open_dir, 0777);
  ok(rrt_trust_root(open_dir, "state root", &e) < 0 && strstr(e.msg, "mode 0777") &&
         strstr(e.msg, "chmod go-w"),
     "mode 0777 is refused: %s", e.msg ? e.msg : "");
  rrt_error_clear(&e);
  chmod(open_dir, 0750);
  ok(rrt_trust_root(open_dir, "state root", &e) == 0, "0750 is fine");
  rrt_error_clear(&e);
  chmod(open_dir, 0770);
  ok(rrt_trust_root(open_dir, "state root", &e) < 0, "group-writable (0770) is refused");
  rrt_error_clear(&e);

  cleanup_free char *file = at("file");
  close(open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  ok(rrt_trust_root(file, "state root", &e) < 0 && e.errnum == ENOTDIR, "a file is refused");
  rrt_error_clear(&e);

  cleanup_free char *missing = at("missing");
  ok(rrt_trust_root(missing, "state root", &e) < 0 && e.errnum == ENOENT,
     "a missing root is ENOENT (no container exists)");
  rrt_error_clear(&e);

  chmod(open_dir, 0777);
  cleanup_free char *under = at("open/root");
  mkdir(under, 0700);
  ok(rrt_trust_root(under, "state root", &e) < 0 && strstr(e.msg, "above it is writable"),
     "a root in a directory anyone can write (not sticky) is refused: %s", e.msg ? e.msg : "");
  rrt_error_clear(&e);
  chmod(open_dir, 01777);
  ok(rrt_trust_root(under, "state root", &e) == 0, "a sticky one above is fine (as /tmp)");
  rrt_error_clear(&e);
  rmdir(under);
}

static void hooks(void)
{
  cleanup_free char *dir = at("hooks");
  cleanup_free char *hook = at("hooks/h");
  mkdir(dir, 0755);
  close(open(hook, O_WRONLY | O_CREAT | O_CLOEXEC, 0755));
  char *who = rrt_trust_writable_by_others(hook);
  ok(who == NULL, "a hook only we can change: no warning (%s)", who ? who : "none");
  free(who);
  chmod(dir, 0777);
  who = rrt_trust_writable_by_others(hook);
  ok(who && strstr(who, dir) && strstr(who, "0777"), "its directory at 0777 is named: %s",
     who ? who : "(none)");
  free(who);
  chmod(dir, 0755);
  chmod(hook, 0666);
  who = rrt_trust_writable_by_others(hook);
  ok(who && strstr(who, hook), "the hook itself writable by others is named");
  free(who);
}

static int state_dir(const char *name)
{
  cleanup_free char *d = at(name);
  mkdir(d, 0700);
  return open(d, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
}

static void write_at(int dirfd, const char *name, const char *text)
{
  int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0) {
    if (rrt_write_all(fd, text, strlen(text)) < 0)
      ok(0, "write %s", name);
    close(fd);
  }
}

static void records(void)
{
  struct rrt_error e = RRT_ERROR_INIT;
  struct rrt_state st = {0};
  int fd = state_dir("c1");
  ok(rrt_state_read(fd, &st, &e) < 0 && e.errnum == ENODATA && strstr(e.msg, "missing"),
     "no state.json: ENODATA, 'missing'");
  rrt_error_clear(&e);
  const char *bad[] = {"", "{", "garbage\x7f", "[1,2]", "{\"id\":\"c1\"}", "{\"pid\":5}"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    write_at(fd, "state.json", bad[i]);
    ok(rrt_state_read(fd, &st, &e) < 0 && e.errnum == EUCLEAN && strstr(e.msg, "corrupt"),
       "state.json '%s': EUCLEAN, 'corrupt'", bad[i]);
    rrt_error_clear(&e);
  }
  write_at(fd, "state.json", "{\"id\":\"c1\",\"pid\":1,\"pidStart\":1,\"initComm\":\"rt\"}");
  ok(rrt_state_read(fd, &st, &e) == 0 && st.pid == 1 && strcmp(st.init_comm, "rt") == 0,
     "a good one reads, initComm included");
  rrt_state_free(&st);
  fchmod(fd, 0700);
  int sfd = openat(fd, "state.json", O_RDONLY | O_CLOEXEC);
  fchmod(sfd, 0666);
  close(sfd);
  ok(rrt_state_read(fd, &st, &e) < 0 && e.errnum == EPERM, "state.json others can write: EPERM");
  rrt_error_clear(&e);

  ok(rrt_state_record_init(fd, 4242, 777, &e) == 0, "the init record");
  struct rrt_state cg = {.cgroup = "/sys/fs/cgroup/x", .cgroups_json = "{\"scope\":\"a.scope\"}"};
  ok(rrt_state_record_cgroup(fd, &cg, &e) == 0, "the cgroup record");
  struct stat lst;
  ok(fstatat(fd, "cgroups", &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode) &&
         fstatat(fd, "cgroup", &lst, AT_SYMLINK_NOFOLLOW) < 0 &&
         fstatat(fd, ".cgroups.new", &lst, AT_SYMLINK_NOFOLLOW) < 0,
     "one record: the symlink cgroups, nothing else (no temporary, no rename)");
  rrt_state_from_records(fd, "c1", &st);
  ok(st.cgroups_json && strstr(st.cgroups_json, "\"scope\":\"a.scope\""),
     "cgroup v1 and systemd are recorded too (%s)", st.cgroups_json ? st.cgroups_json : "-");
  ok(st.pid == 4242 && st.pid_start == 777 && st.cgroup &&
         strcmp(st.cgroup, "/sys/fs/cgroup/x") == 0 && strcmp(st.id, "c1") == 0,
     "read back: pid %d start %llu cgroup %s", st.pid, st.pid_start, st.cgroup ? st.cgroup : "-");
  rrt_state_free(&st);
  ok(rrt_state_record_cgroup(fd, &cg, &e) < 0 && e.errnum == EEXIST,
     "written once: a second record is refused");
  rrt_error_clear(&e);
  close(fd);

  /* Paths that do not fit a symlink's target: an error naming linux.cgroupsPath, no record. */
  fd = state_dir("c2");
  char *longp = xcalloc(PATH_MAX + 1, 1);
  memset(longp, 'a', PATH_MAX);
  longp[0] = '/';
  struct rrt_state big = {.cgroup = longp};
  ok(rrt_state_record_cgroup(fd, &big, &e) < 0 && e.errnum == ENAMETOOLONG &&
         strstr(e.msg, "linux.cgroupsPath") &&
         fstatat(fd, "cgroups", &lst, AT_SYMLINK_NOFOLLOW) < 0,
     "a record too long for a symlink: refused, naming linux.cgroupsPath (%s)",
     e.msg ? e.msg : "-");
  rrt_error_clear(&e);
  free(longp);
  /* An earlier version's records: the v2 directory in "cgroup". */
  ok(symlinkat("/sys/fs/cgroup/old", fd, "cgroup") == 0, "an earlier version's cgroup record");
  rrt_state_from_records(fd, "c2", &st);
  is_str(st.cgroup, "/sys/fs/cgroup/old", "is still read");
  rrt_state_free(&st);
  close(fd);
}

static void private_dir(void)
{
  cleanup_free char *root = at("root");
  mkdir(root, 0700);
  cleanup_free char *priv = rrt_state_private_dir(root, true);
  cleanup_free char *want = at(".root.private");
  is_str(priv, want, "the private directory is a hidden sibling of the root");
  struct stat sb;
  ok(stat(want, &sb) == 0 && (sb.st_mode & 07777) == 0700, "made 0700");
  rmdir(want);
  if (symlink(root, want) < 0)
    ok(0, "symlink");
  char *p = rrt_state_private_dir(root, true);
  ok(p == NULL, "a planted symlink in its place is not used");
  free(p);
}

static void status(void)
{
  struct rrt_state st = {.pid = getpid()};
  char comm[64];
  st.pid_start = rrt_proc_stat(getpid(), comm, sizeof(comm));
  is_str(comm, "test_state", "rrt_proc_stat reads the command name");
  st.init_comm = xstrdup(comm);
  is_str(rrt_state_status(&st), "created", "init with the runtime's name, no mark: created");
  free(st.init_comm);
  st.init_comm = xstrdup("rootlessrt");
  is_str(rrt_state_status(&st), "running", "init with another name (it exec'd): running");
  st.pid_start++;
  is_str(rrt_state_status(&st), "stopped", "another start time (pid reused): stopped");
  free(st.init_comm);
}

/* The fuse-overlayfs servers (image/fuse_serve.c) that delete must kill, written and read back. */
static void fuse_helpers(void)
{
  struct rrt_error e = RRT_ERROR_INIT;
  int fd = state_dir("c2");
  fchmod(fd, 0700);
  struct rrt_state w = {.id = "c2", .pid = 7, .pid_start = 8, .n_fuse_helpers = 2};
  w.fuse_helper[0] = 100;
  w.fuse_helper_start[0] = 1001;
  w.fuse_helper[1] = 200;
  w.fuse_helper_start[1] = 2002;
  ok(rrt_state_write(fd, &w, &e) == 0, "state.json with two fuse-overlayfs servers written");
  struct rrt_state st = {0};
  ok(rrt_state_read(fd, &st, &e) == 0 && st.n_fuse_helpers == 2 && st.fuse_helper[0] == 100 &&
         st.fuse_helper_start[0] == 1001 && st.fuse_helper[1] == 200 &&
         st.fuse_helper_start[1] == 2002,
     "read back: %zu servers", st.n_fuse_helpers);
  rrt_state_free(&st);
  write_at(fd, "state.json", "{\"id\":\"c2\",\"pid\":1,\"pidStart\":1}");
  ok(rrt_state_read(fd, &st, &e) == 0 && st.n_fuse_helpers == 0,
     "a state.json without fuseHelpers: none");
  rrt_state_free(&st);
  rrt_error_clear(&e);
  close(fd);
}

int main(void)
{
  umask(022);
  if (!mkdtemp(base))
    return 1;
  roots();
  hooks();
  records();
  private_dir();
  status();
  fuse_helpers();
  cleanup_free char *cmd = xasprintf("rm -rf %s", base);
  if (system(cmd) != 0)
    return 1;
  return tap_done();
}
