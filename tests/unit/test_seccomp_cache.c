/* test_seccomp_cache.c: a podman-sized seccomp profile, compiled and cached (hits, misses, a
 * damaged file), and a planted cache entry of another profile never loaded. */
#include <dirent.h>
#include <json-c/json.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "confine_child.h"
#include "rootlessrt/confine.h"
#include "seccomp_probe.h"
#include "tap.h"

/* A podman-shaped profile: default ERRNO, one big ALLOW entry. Built from
 * libseccomp's table so it stays valid; mkdir/mkdirat/acct are left out. */
struct big_profile {
  struct rrt_seccomp sc;
  struct rrt_seccomp_syscall allow;
  char **names;
};

static void big_profile_init(struct big_profile *b, const char *tag)
{
  /* static: the profile outlives this function */
  static char *archs[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", NULL};
  size_t n = 0;
  b->names = xcalloc(600, sizeof(char *));
  uint32_t arch = seccomp_arch_native();
  for (int nr = 0; nr < 460 && n < 590; nr++) {
    char *name = seccomp_syscall_resolve_num_arch(arch, nr);
    if (!name)
      continue;
    if (strcmp(name, "mkdir") && strcmp(name, "mkdirat") && strcmp(name, "acct") &&
        strcmp(name, "close_range"))
      b->names[n++] = xstrdup(name);
    free(name);
  }
  b->names[n++] = xstrdup("fake_syscall_xyz");
  b->names[n++] = xstrdup("another_fake_syscall");
  b->allow = (struct rrt_seccomp_syscall){.names = {b->names, n}, .action = "SCMP_ACT_ALLOW"};
  b->sc = (struct rrt_seccomp){.default_action = "SCMP_ACT_ERRNO",
                               .architectures = {archs, 3},
                               .syscalls = &b->allow,
                               .n_syscalls = 1};
  /* The cache key: json-c writes what spec.c would. */
  struct json_object *o = json_object_new_object();
  struct json_object *arr = json_object_new_array();
  for (size_t i = 0; i < n; i++)
    json_object_array_add(arr, json_object_new_string(b->names[i]));
  json_object_object_add(o, "defaultAction", json_object_new_string("SCMP_ACT_ERRNO"));
  json_object_object_add(o, "names", arr);
  json_object_object_add(o, "tag", json_object_new_string(tag));
  b->sc.canonical_json = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
}

static void big_profile_free(struct big_profile *b)
{
  rrt_strv_free(b->names);
  free(b->sc.canonical_json);
}

static double now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int count_files(const char *dir, ino_t *ino)
{
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (de->d_name[0] != '.') {
      n++;
      if (ino)
        *ino = de->d_ino;
    }
  if (d)
    closedir(d);
  return n;
}

static void test_seccomp_big_and_cache(void)
{
  struct big_profile b;
  big_profile_init(&b, "one");
  ok(b.allow.names.n >= 300, "seccomp: the big profile has %zu names", b.allow.names.n);

  struct capture cap;
  capture_begin(&cap);
  struct rrt_seccomp_filter *f = compile_ok(&b.sc, NULL, "300-name allow list");
  char *warned = capture_end(&cap);
  ok(strstr(warned, "names[") && strstr(warned, "unknown syscall fake_syscall_xyz, skipped") &&
         strstr(warned, "another_fake_syscall"),
     "seccomp: fake syscalls skipped with a warning");
  ok(!strstr(warned, "unknown syscall read,"), "seccomp: real syscalls are not warned about");
  free(warned);

  char *out = NULL;
  struct probe p = {f, &b.sc, probe_mkdir};
  int st = in_child(load_child, &p, &out);
  ok(exited0(st), "seccomp: child runs under the default-ERRNO profile");
  is_str(out, "open=ok mkdir=EPERM getpid=ok", "seccomp: unlisted mkdir -> EPERM, listed work");
  free(out);
  rrt_seccomp_filter_free(f);

  char dir[] = "/tmp/rrt-confine-cache-XXXXXX";
  if (!mkdtemp(dir))
    abort();
  ino_t ino1 = 0, ino2 = 0;
  double t0 = now_ms();
  f = compile_ok(&b.sc, dir, "cold compile with cache");
  double cold = now_ms() - t0;
  is_int(count_files(dir, &ino1), 1, "seccomp cache: one file after the first compile");
  struct stat sb;
  char path[512];
  snprintf(path, sizeof(path), "%s/", dir);
  DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (de->d_name[0] != '.')
      snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
  if (d)
    closedir(d);
  ok(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600 && strstr(path, ".bpf"),
     "seccomp cache: %s is a 0600 .bpf file", path);

  struct rrt_seccomp_filter *g = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  t0 = now_ms();
  int r = rrt_seccomp_compile(&b.sc, dir, &g, &e);
  double hot = now_ms() - t0;
  ok(r == 0, "seccomp cache: second compile succeeds");
  ok(count_files(dir, &ino2) == 1 && ino1 == ino2, "seccomp cache: second compile is a hit");

  /* Averages over a few rounds, for the report. */
  double cold_sum = 0, hot_sum = 0;
  for (int i = 0; i < 10; i++) {
    struct rrt_seccomp_filter *x = NULL;
    capture_begin(&cap);
    t0 = now_ms();
    rrt_seccomp_compile(&b.sc, NULL, &x, &e);
    cold_sum += now_ms() - t0;
    free(capture_end(&cap));
    rrt_seccomp_filter_free(x);
    x = NULL;
    t0 = now_ms();
    rrt_seccomp_compile(&b.sc, dir, &x, &e);
    hot_sum += now_ms() - t0;
    rrt_seccomp_filter_free(x);
  }
  printf("# seccomp compile, %zu names: first %.2f ms, hit %.3f ms; mean of 10: cold %.2f ms, "
         "cached %.3f ms\n",
         b.allow.names.n, cold, hot, cold_sum / 10, hot_sum / 10);

  p = (struct probe){g, &b.sc, probe_mkdir};
  st = in_child(load_child, &p, &out);
  is_str(out, "open=ok mkdir=EPERM getpid=ok", "seccomp cache: the cached filter behaves the same");
  free(out);
  rrt_seccomp_filter_free(g);
  rrt_seccomp_filter_free(f);

  struct big_profile b2;
  big_profile_init(&b2, "two");
  capture_begin(&cap);
  f = compile_ok(&b2.sc, dir, "changed profile");
  free(capture_end(&cap));
  is_int(count_files(dir, NULL), 2, "seccomp cache: a changed profile is a miss");
  rrt_seccomp_filter_free(f);

  /* A damaged file (a crash mid-write) is recompiled, not loaded. */
  (void)!truncate(path, 20);
  capture_begin(&cap);
  f = compile_ok(&b.sc, dir, "over a damaged cache file");
  warned = capture_end(&cap);
  ok(strstr(warned, "is damaged, recompiling") != NULL, "seccomp cache: damage is noticed");
  free(warned);
  p = (struct probe){f, &b.sc, probe_mkdir};
  in_child(load_child, &p, &out);
  is_str(out, "open=ok mkdir=EPERM getpid=ok", "seccomp cache: recompiled filter works");
  free(out);
  rrt_seccomp_filter_free(f);

  big_profile_free(&b);
  big_profile_free(&b2);
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  (void)!system(cmd);
}

/* The one .bpf file of dir, as a path (malloc'd), or NULL. */
static char *only_file(const char *dir)
{
  char *path = NULL;
  DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d)))
    if (de->d_name[0] != '.') {
      free(path);
      path = xasprintf("%s/%s", dir, de->d_name);
    }
  if (d)
    closedir(d);
  return path;
}

/*
 * The attack on a shared cache: profile B (allows everything) is crafted so that its entry lands
 * under profile A's name. Planted here by copying B's cache file to the name A's compile uses; A
 * must still get A's filter (mkdir denied), never B's.
 */
static void test_seccomp_cache_collision(void)
{
  struct rrt_seccomp_syscall deny_mkdir[] = {
      {.names = STRV("mkdir", "mkdirat"), .action = "SCMP_ACT_ERRNO"}};
  struct rrt_seccomp a = {.default_action = "SCMP_ACT_ALLOW",
                          .syscalls = deny_mkdir,
                          .n_syscalls = 1,
                          .canonical_json =
                              "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"deny\":\"mkdir\"}"};
  struct rrt_seccomp_syscall allow_getpid[] = {
      {.names = STRV("getpid"), .action = "SCMP_ACT_ALLOW"}};
  struct rrt_seccomp b = {.default_action = "SCMP_ACT_ALLOW",
                          .syscalls = allow_getpid,
                          .n_syscalls = 1,
                          .canonical_json = "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}"};
  char da[] = "/tmp/rrt-confine-ca-XXXXXX", db[] = "/tmp/rrt-confine-cb-XXXXXX";
  if (!mkdtemp(da) || !mkdtemp(db))
    abort();
  rrt_seccomp_filter_free(compile_ok(&a, da, "profile A into its cache"));
  rrt_seccomp_filter_free(compile_ok(&b, db, "profile B into its cache"));
  char *pa = only_file(da), *pb = only_file(db);
  ok(pa && pb && strcmp(strrchr(pa, '/'), strrchr(pb, '/')) != 0 &&
         strlen(strrchr(pa, '/') + 1) == 64 + 4,
     "seccomp cache: A and B have their own entries, named by a sha256 (%s)", pa ? pa : "none");
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "cp %s %s", pb ? pb : "/nonexistent", pa ? pa : "/nonexistent");
  ok(system(cmd) == 0, "seccomp cache: B's entry planted under A's name");

  struct capture cap;
  capture_begin(&cap);
  struct rrt_seccomp_filter *f = compile_ok(&a, da, "profile A over B's planted entry");
  char *warned = capture_end(&cap);
  ok(strstr(warned, "holds the filter of another profile, recompiling") != NULL,
     "seccomp cache: the planted entry is noticed (%s)", warned);
  free(warned);
  char *out = NULL;
  struct probe p = {f, &a, probe_mkdir};
  in_child(load_child, &p, &out);
  is_str(out, "open=ok mkdir=EPERM getpid=ok",
         "seccomp cache: A's filter is what loads (mkdir denied), not B's");
  free(out);
  rrt_seccomp_filter_free(f);

  /* The miss rewrote the entry: the next compile of A is a hit on A's own filter. */
  capture_begin(&cap);
  f = compile_ok(&a, da, "profile A again");
  warned = capture_end(&cap);
  is_str(warned, "", "seccomp cache: the rewritten entry is A's (no warning)");
  free(warned);
  p = (struct probe){f, &a, probe_mkdir};
  in_child(load_child, &p, &out);
  is_str(out, "open=ok mkdir=EPERM getpid=ok", "seccomp cache: the hit loads A's filter");
  free(out);
  rrt_seccomp_filter_free(f);
  free(pa);
  free(pb);
  snprintf(cmd, sizeof(cmd), "rm -rf %s %s", da, db);
  (void)!system(cmd);
}

int main(void)
{
  test_seccomp_big_and_cache();
  test_seccomp_cache_collision();
  return tap_done();
}
