/* store.c: what the per-user store holds (unpacked layers, the kept upper directories of
 * containers), with sizes, and removing it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/state.h"
#include "rootlessrt/trust.h"
#include "rootlessrt/util.h"

static unsigned long long du_total;

static int du_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
  (void)path;
  (void)type;
  (void)f;
  du_total += (unsigned long long)st->st_blocks * 512ULL;
  return 0;
}

/* Disk usage of a tree (what can be read of it without entering the user namespace). */
static unsigned long long disk_usage(const char *path)
{
  du_total = 0;
  nftw(path, du_one, 32, FTW_PHYS | FTW_MOUNT);
  return du_total;
}

static void human(unsigned long long n, char buf[32])
{
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)n;
  size_t i = 0;
  while (v >= 1024 && i < 4)
    v /= 1024, i++;
  snprintf(buf, 32, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

/* LAYERS/blobs/sha256/BLOB -> ../../sha256/KEY: the blobs known to unpack to the layer KEY,
 * ", "-joined (malloc'd), or NULL when none is known (a layer unpacked by an earlier version). */
static char *blobs_of(const char *store, const char *key)
{
  cleanup_free char *dir = xasprintf("%s/layers/blobs/sha256", store);
  DIR *d = opendir(dir);
  if (!d)
    return NULL;
  char *v = NULL;
  struct dirent *e;
  while ((e = readdir(d))) {
    char target[256];
    ssize_t n = e->d_name[0] == '.' ? -1 : readlinkat(dirfd(d), e->d_name, target, 255);
    if (n < 0)
      continue;
    target[n] = '\0';
    const char *base = strrchr(target, '/');
    if (strcmp(base ? base + 1 : target, key) != 0)
      continue;
    char *m = xasprintf("%s%ssha256:%s", v ? v : "", v ? ", " : "", e->d_name);
    free(v);
    v = m;
  }
  closedir(d);
  return v;
}

/* What a layer's key is and which blobs it came from. */
static char *layer_digests(const char *store, const char *key)
{
  cleanup_free char *blobs = blobs_of(store, key);
  if (!blobs)
    return xstrdup("(unpacked by an earlier version: named by its blob digest, or by its diff_id "
                   "from a docker-archive)");
  if (strcmp(blobs + 7, key) == 0)
    return xasprintf("diff_id sha256:%s (a plain tar: its blob digest)", key);
  return xasprintf("diff_id sha256:%s, blob %s", key, blobs);
}

static void list_dir(const char *store, const char *sub, const char *kind, bool *any)
{
  cleanup_free char *dir = xasprintf("%s/%s", store, sub);
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    cleanup_free char *p = xasprintf("%s/%s", dir, e->d_name);
    char size[32];
    human(disk_usage(p), size);
    if (!*any)
      printf("%-10s %-72s %s\n", "KIND", "NAME", "SIZE");
    *any = true;
    cleanup_free char *digests =
        strcmp(kind, "layer") == 0 ? layer_digests(store, e->d_name) : NULL;
    printf("%-10s %-72s %s%s%s\n", kind, e->d_name, size, digests ? "  " : "",
           digests ? digests : "");
  }
  closedir(d);
}

/* STORE/tmp/partial-sha256-HEX: a registry layer's download cut short, which the next pull of
 * it resumes (image/registry.c); its size is the bytes received. */
static void list_partials(const char *store, bool *any)
{
  cleanup_free char *dir = xasprintf("%s/tmp", store);
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    struct stat st;
    if (strncmp(e->d_name, "partial-sha256-", 15) != 0 ||
        fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
      continue;
    cleanup_free char *name = xasprintf("sha256:%s", e->d_name + 15);
    char size[32];
    human((unsigned long long)st.st_size, size);
    if (!*any)
      printf("%-10s %-72s %s\n", "KIND", "NAME", "SIZE");
    *any = true;
    printf("%-10s %-72s %s\n", "partial", name, size);
  }
  closedir(d);
}

int rrt_store_list(const char *store, struct rrt_error *err)
{
  (void)err;
  bool any = false;
  rrt_store_remove_stale(store);
  list_dir(store, "images", "image", &any);
  list_dir(store, "layers/sha256", "layer", &any);
  list_dir(store, "containers", "container", &any);
  list_partials(store, &any);
  char size[32];
  human(disk_usage(store), size);
  if (!any)
    printf("the store %s is empty\n", store);
  else
    printf("%-10s %-72s %s\n", "total", store, size);
  return 0;
}

/* The blob records of layers no longer in the store. */
static void forget_blobs(const char *store)
{
  cleanup_free char *dir = xasprintf("%s/layers/blobs/sha256", store);
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    struct stat st;
    if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) < 0 && errno == ENOENT)
      unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
}

static bool valid_name(const char *s)
{
  return *s && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/');
}

/* NAME: a container's kept changes; sha256:HEX or HEX: a layer; an image name: its record. A
 * container that exists (in ROOT) keeps its upper directory. */
int rrt_store_remove(const char *store, const char *root, const char *name, struct rrt_error *err)
{
  const char *n = strncmp(name, "sha256:", 7) == 0 ? name + 7 : name;
  if (!valid_name(n))
    return rrt_error_msgf(err, EINVAL, "store rm: \"%s\" is not a name in the store", name);
  const char *subs[] = {"containers", "layers/sha256", "images"};
  for (size_t i = 0; i < 3; i++) {
    cleanup_free char *p = xasprintf("%s/%s/%s", store, subs[i], n);
    if (access(p, F_OK) < 0)
      continue;
    if (i == 0 && root) {
      cleanup_free char *st = xasprintf("%s/%s", root, n);
      if (access(st, F_OK) == 0)
        return rrt_error_msgf(err, EBUSY, "store rm: container \"%s\" exists: delete it first", n);
    }
    if (rrt_remove_tree_userns(p, err) < 0)
      return rrt_error_wrap(err, "store rm %s", name);
    if (i == 1)
      forget_blobs(store);
    return 0;
  }
  return rrt_error_msgf(err, ENOENT, "store rm: nothing named \"%s\" in %s", name, store);
}

/* Where the store is, and whether it can be trusted (the same checks as the state root). */
char *rrt_store_path(const char *flag)
{
  if (flag && *flag)
    return xstrdup(flag);
  const char *data = getenv("XDG_DATA_HOME");
  if (data && *data == '/')
    return xasprintf("%s/rootlessrt", data);
  const char *home = getenv("HOME");
  if (home && *home == '/')
    return xasprintf("%s/.local/share/rootlessrt", home);
  return xasprintf("/tmp/rootlessrt-store-%u", getuid());
}

int rrt_store_trust(const char *store, bool make, struct rrt_error *err)
{
  if (make) {
    cleanup_free char *p = xstrdup(store);
    for (char *s = p + 1; *s; s++)
      if (*s == '/') {
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
      }
    if (mkdir(p, 0700) < 0 && errno != EEXIST)
      return rrt_error_errno(err, "mkdir %s", p);
  }
  if (rrt_trust_root(store, "image store", err) == 0)
    return 0;
  if (make || err->errnum != ENOENT)
    return -1;
  rrt_error_clear(err);
  return 0;
}
