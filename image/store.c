/* store.c: what the per-user store holds (unpacked layers, the kept upper directories of
 * containers), with sizes, and removing it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "names.h"
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

/* The listing's header, before its first row (*any: a row was printed). */
static void header_once(bool *any)
{
  if (!*any)
    printf("%-10s %-72s %s\n", "KIND", "NAME", "SIZE");
  *any = true;
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
    header_once(any);
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
    header_once(any);
    printf("%-10s %-72s %s\n", "partial", name, size);
  }
  closedir(d);
}

/* The recorded images: by their first name (escaped), with the size of their layers. */
static void list_images(const char *store, bool *any)
{
  struct rrt_error e = RRT_ERROR_INIT;
  json_object *doc = rrt_names_load(store, &e);
  rrt_error_clear(&e);
  json_object *arr = doc ? rrt_names_images(doc) : NULL;
  for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
    json_object *o = json_object_array_get_idx(arr, i), *names = rrt_names_list(o, "names"), *sz;
    const char *n = json_object_array_length(names)
                        ? json_object_get_string(json_object_array_get_idx(names, 0))
                        : rrt_names_str(o, "id");
    cleanup_free char *shown = rrt_names_shown(n ? n : "");
    char size[32];
    json_object_object_get_ex(o, "size", &sz);
    human((unsigned long long)json_object_get_int64(sz), size);
    header_once(any);
    const char *id = rrt_names_str(o, "id");
    printf("%-10s %-72s %s  id sha256:%.12s\n", "image", shown, size, id ? id : "?");
  }
  json_object_put(doc);
}

int rrt_store_list(const char *store, struct rrt_error *err)
{
  (void)err;
  bool any = false;
  rrt_store_remove_stale(store);
  list_images(store, &any);
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
void rrt_store_forget_blobs(const char *store)
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

/* A layer an image record or a container uses stays: the error names who (force: only a
 * container keeps it). */
static int layer_in_use(const char *store, const char *root, const char *name, const char *n,
                        bool force, struct rrt_error *err)
{
  cleanup_free char *shown = rrt_names_shown(name);
  if (!force) {
    json_object *doc = rrt_names_load(store, err);
    if (!doc)
      return rrt_error_wrap(err, "store rm %s", shown);
    cleanup_free char *img = rrt_store_user_image(doc, n);
    json_object_put(doc);
    if (img)
      return rrt_error_msgf(err, EBUSY,
                            "store rm: layer %s is used by the image %s: `rootlessrt rmi %s` "
                            "removes the image and the layers only it uses (or store rm --force)",
                            shown, img, img);
  }
  cleanup_free char *ctr = rrt_store_user_container(store, root, n, NULL);
  if (ctr)
    return rrt_error_msgf(err, EBUSY,
                          "store rm: layer %s is used by the container \"%s\": delete it first",
                          shown, ctr);
  return 0;
}

/* NAME: a container's kept changes; sha256:HEX or HEX: a layer; an image name: its record. A
 * container that exists (in ROOT) keeps its upper directory. */
int rrt_store_remove(const char *store, const char *root, const char *name, bool force,
                     struct rrt_error *err)
{
  const char *n = strncmp(name, "sha256:", 7) == 0 ? name + 7 : name;
  if (!valid_name(n)) {
    cleanup_free char *shown = rrt_names_shown(name);
    return rrt_error_msgf(err, EINVAL, "store rm: \"%s\" is not a name in the store", shown);
  }
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
    cleanup_close int gc = i == 1 ? rrt_names_lock(store, RRT_GC_LOCK, LOCK_EX) : -1;
    (void)gc; /* held (no run may take the layer meanwhile) until return */
    if (i == 1 && layer_in_use(store, root, name, n, force, err) < 0)
      return -1;
    if (rrt_remove_tree_userns(p, err) < 0)
      return rrt_error_wrap(err, "store rm %s", name);
    if (i == 1) {
      cleanup_free char *size = xasprintf("%s/layers/sizes/%s", store, n);
      unlink(size);
      rrt_store_forget_blobs(store);
    }
    return 0;
  }
  cleanup_free char *shown = rrt_names_shown(name);
  return rrt_error_msgf(err, ENOENT, "store rm: nothing named \"%s\" in %s", shown, store);
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
