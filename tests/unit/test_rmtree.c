/* test_rmtree.c: rrt_remove_tree_at: a tree is removed whole (modes 0 and 0555, fifos, symlinks
 * to elsewhere, 300 levels deep), a symlink is never followed, a mount inside is not entered,
 * KEEP_TOP keeps the top, no fd is left open, and a process swapping directories for symlinks
 * to a canary during the removal never gets the canary touched (a sweep of timings). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rootlessrt/rmtree.h"
#include "rootlessrt/util.h"
#include "tap.h"

/* On /dev/shm where there is one: the race runs make and remove thousands of files, which a disk
 * with online discard makes slow. */
static char base[64];

static char *at(const char *rel)
{
  return xasprintf("%s/%s", base, rel);
}

static void put(const char *rel, const char *text)
{
  cleanup_free char *p = at(rel);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    (void)rrt_write_all(fd, text, strlen(text));
    close(fd);
  }
}

static void mk(const char *rel, mode_t mode)
{
  cleanup_free char *p = at(rel);
  mkdir(p, 0755);
  chmod(p, mode);
}

static void link_rel(const char *target, const char *rel)
{
  cleanup_free char *p = at(rel);
  (void)symlink(target, p);
}

static bool exists(const char *rel)
{
  cleanup_free char *p = at(rel);
  struct stat st;
  return lstat(p, &st) == 0;
}

/* A tree of DIRS directories of FILES files each: enough work for a swap to land mid-walk. */
#define DIRS 8
#define FILES 40

/* The user's own directory, with the very names the tree has (what a walk by path would delete
 * through a swapped-in symlink). */
static void make_canary(void)
{
  mk("canary", 0755);
  mk("canary/sub", 0755);
  put("canary/keep", "mine");
  put("canary/sub/f", "mine too");
  for (int f = 0; f < FILES; f++) {
    char rel[64];
    snprintf(rel, sizeof(rel), "canary/f%d", f);
    put(rel, "mine");
  }
}

static bool canary_ok(void)
{
  cleanup_free char *p = at("canary/keep");
  cleanup_free char *text = NULL;
  size_t len;
  if (!exists("canary/sub/f") || rrt_read_file(p, &text, &len, NULL) < 0 ||
      strcmp(text, "mine") != 0)
    return false;
  for (int f = 0; f < FILES; f++) {
    char rel[64];
    snprintf(rel, sizeof(rel), "canary/f%d", f);
    if (!exists(rel))
      return false;
  }
  return true;
}

static int basefd(void)
{
  return open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void test_whole_tree(void)
{
  cleanup_free char *canary = at("canary");
  cleanup_free char *canary_keep = at("canary/keep");
  cleanup_free char *fifo = at("t/fifo");
  mk("t", 0755);
  mk("t/a", 0755);
  mk("t/a/b", 0755);
  put("t/a/b/f", "x");
  put("t/top", "x");
  mk("t/ro", 0755);
  put("t/ro/f", "x");
  mk("t/ro", 0555);
  mk("t/zero", 0755);
  mk("t/zero/in", 0755);
  mk("t/zero", 0);
  mkfifo(fifo, 0600);
  link_rel(canary, "t/to-canary-dir");
  link_rel(canary_keep, "t/a/to-canary-file");
  link_rel("../../canary", "t/a/rel-canary");
  link_rel("/", "t/root");
  int fd = basefd(), before = tap_count_fds();
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_remove_tree_at(fd, "t", 0, &err);
  ok(r == 0, "a tree with 0555 and mode-0 directories, a fifo and symlinks out is removed (%s)",
     err.msg ? err.msg : "no error");
  ok(!exists("t"), "nothing of it is left");
  ok(canary_ok(), "what its symlinks pointed to is untouched");
  is_int(tap_count_fds(), before, "no fd left open");
  is_int(rrt_remove_tree_at(fd, "t", 0, &err), 0, "a tree that is not there: 0");
  close(fd);
  rrt_error_clear(&err);
}

static void test_top_symlink_and_keep(void)
{
  cleanup_free char *canary = at("canary");
  cleanup_free char *p = at("top-link");
  link_rel(canary, "top-link");
  struct rrt_error err = RRT_ERROR_INIT;
  ok(rrt_remove_tree(p, &err) == 0 && !exists("top-link") && canary_ok(),
     "a top that is a symlink is removed, not followed");
  mk("keep", 0755);
  mk("keep/d", 0755);
  put("keep/d/f", "x");
  put("keep/g", "x");
  int fd = basefd();
  ok(rrt_remove_tree_at(fd, "keep", RRT_RMTREE_KEEP_TOP, &err) == 0 && exists("keep") &&
         !exists("keep/d") && !exists("keep/g"),
     "RRT_RMTREE_KEEP_TOP empties the top and keeps it");
  unlinkat(fd, "keep", AT_REMOVEDIR);
  close(fd);
  rrt_error_clear(&err);
}

/* Deeper than the fd window: the shallow levels are reopened through "..". */
static void test_deep(void)
{
  int fd = basefd();
  mkdirat(fd, "deep", 0755);
  int cur = openat(fd, "deep", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (int i = 0; i < 300 && cur >= 0; i++) {
    mkdirat(cur, "d", 0755);
    int fd2 = openat(cur, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd2 >= 0)
      close(fd2);
    int next = openat(cur, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    close(cur);
    cur = next;
  }
  if (cur >= 0)
    close(cur);
  int before = tap_count_fds();
  struct rrt_error err = RRT_ERROR_INIT;
  ok(rrt_remove_tree_at(fd, "deep", 0, &err) == 0 && !exists("deep"),
     "a tree 300 levels deep is removed (%s)", err.msg ? err.msg : "no error");
  is_int(tap_count_fds(), before, "no fd left open after the deep walk");
  close(fd);
  rrt_error_clear(&err);
}

/* A tmpfs mounted inside the tree (in a mount namespace of a child: as root, or as root of a
 * user namespace): left alone, its files untouched, the rest removed, the error names it. */
static void test_mount_inside(void)
{
  mk("m", 0755);
  mk("m/a", 0755);
  put("m/a/f", "x");
  mk("m/mnt", 0755);
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) < 0)
    return;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[0]);
    char res[600] = "skip cannot make a mount namespace";
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWNS | (uid == 0 ? 0 : CLONE_NEWUSER)) == 0) {
      if (uid != 0) {
        char m[64];
        snprintf(m, sizeof(m), "0 %u 1", (unsigned)uid);
        rrt_write_file("/proc/self/uid_map", m, strlen(m), O_TRUNC, 0, NULL);
        rrt_write_file("/proc/self/setgroups", "deny", 4, O_TRUNC, 0, NULL);
        snprintf(m, sizeof(m), "0 %u 1", (unsigned)gid);
        rrt_write_file("/proc/self/gid_map", m, strlen(m), O_TRUNC, 0, NULL);
      }
      cleanup_free char *mnt = at("m/mnt");
      cleanup_free char *top = at("m");
      mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
      if (mount("tmpfs", mnt, "tmpfs", 0, "mode=0755") == 0) {
        put("m/mnt/inside", "mounted");
        struct rrt_error err = RRT_ERROR_INIT;
        int r = rrt_remove_tree(top, &err);
        snprintf(res, sizeof(res), "%d %d %d %s", r, exists("m/mnt/inside"), exists("m/a"),
                 err.msg ? err.msg : "-");
        rrt_error_clear(&err);
      } else {
        snprintf(res, sizeof(res), "skip mount tmpfs: %s", strerror(errno));
      }
    }
    (void)rrt_write_all(pipefd[1], res, strlen(res));
    _exit(0);
  }
  close(pipefd[1]);
  cleanup_free char *out = NULL;
  size_t len = 0;
  rrt_read_fd(pipefd[0], &out, &len, NULL);
  close(pipefd[0]);
  waitpid(pid, NULL, 0);
  int r = 0, inside = 0, a = 1, n = 0;
  if (out && strncmp(out, "skip", 4) == 0) {
    printf("ok %d # SKIP %s\n", ++tap_n, out + 5);
  } else {
    if (!out || sscanf(out, "%d %d %d %n", &r, &inside, &a, &n) < 3)
      n = 0;
    ok(r == -1, "a mount inside the tree: an error");
    ok(inside == 1, "the mount's files are untouched");
    ok(a == 0, "the rest of the tree is removed");
    ok(n && strstr(out + n, "m/mnt: a mount point: not crossed"), "the error names it: %s",
       out ? out + n : "(nothing)");
  }
  cleanup_free char *p = at("m");
  rrt_remove_tree(p, NULL);
}

static void make_race_tree(void)
{
  mk("race", 0755);
  for (int d = 0; d < DIRS; d++) {
    char rel[64];
    snprintf(rel, sizeof(rel), "race/d%d", d);
    mk(rel, 0755);
    for (int f = 0; f < FILES; f++) {
      snprintf(rel, sizeof(rel), "race/d%d/f%d", d, f);
      put(rel, "x");
    }
    snprintf(rel, sizeof(rel), "race/d%d/sub", d);
    mk(rel, 0755);
    snprintf(rel, sizeof(rel), "race/d%d/sub/f", d);
    put(rel, "x");
  }
}

/* The attacker: after delay_us, swaps each directory of the tree in turn for a symlink to the
 * canary (the directory moved aside within the tree), the way a process that outlives the
 * container's init would during --rm; `rounds` rounds, then exits. */
static pid_t start_swapper(long delay_us, int rounds)
{
  fflush(stdout);
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  cleanup_free char *canary = at("canary");
  cleanup_free char *sub = at("canary/sub");
  struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
  nanosleep(&ts, NULL);
  for (int round = 0; round < rounds; round++) {
    for (int d = 0; d < DIRS; d++) {
      char rel[64], moved[64];
      snprintf(rel, sizeof(rel), "race/d%d", d);
      snprintf(moved, sizeof(moved), "race/moved%d-%d", d, round);
      cleanup_free char *p = at(rel);
      cleanup_free char *m = at(moved);
      /* Only real directories are moved: the swapper must not move the canary's own. */
      struct stat st;
      if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode) || rename(p, m) < 0)
        continue;
      (void)symlink(canary, p);
      /* and one level down, under a directory the walk may be in already */
      int mfd = open(m, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (mfd >= 0 && renameat(mfd, "sub", mfd, "sub-aside") == 0)
        (void)symlinkat(sub, mfd, "sub");
      if (mfd >= 0)
        close(mfd);
    }
  }
  _exit(0);
}

static void test_race(void)
{
  make_canary();
  int bad = 0, left = 0, runs = 0;
  cleanup_free char *first_bad = NULL;
  /* The delay sweeps from before the walk starts to after it ends. */
  for (long delay = 0; delay <= 3000; delay += delay < 200 ? 20 : 200, runs++) {
    make_race_tree();
    pid_t pid = start_swapper(delay, 3);
    struct rrt_error err = RRT_ERROR_INIT;
    cleanup_free char *top = at("race");
    (void)rrt_remove_tree(top, &err);
    int status;
    waitpid(pid, &status, 0);
    rrt_error_clear(&err);
    if (!canary_ok()) {
      bad++;
      if (!first_bad)
        first_bad = xasprintf("%ld us", delay);
      make_canary();
    }
    /* What the swapper made after the walk passed is removed by the next removal, which no one
     * disturbs. */
    if (rrt_remove_tree(top, &err) < 0 || exists("race"))
      left++;
    rrt_error_clear(&err);
  }
  ok(bad == 0, "the canary is untouched in every one of %d runs (first touched at %s)", runs,
     first_bad ? first_bad : "none");
  ok(left == 0, "the tree is gone after every run (%d left)", left);
}

int main(void)
{
  snprintf(base, sizeof(base), "%s/rrt-test-rmtree.XXXXXX",
           access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  if (!mkdtemp(base)) {
    perror("mkdtemp");
    return 1;
  }
  make_canary();
  test_whole_tree();
  test_top_symlink_and_keep();
  test_deep();
  test_mount_inside();
  test_race();
  ok(canary_ok(), "the canary is untouched at the end");
  rrt_remove_tree(base, NULL);
  ok(!exists(""), "the scratch directory is gone");
  return tap_done();
}
