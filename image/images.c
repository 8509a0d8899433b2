/* images.c: `images` (the store's images by name, as `podman images` lists them), `rmi` and
 * `store prune`. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "names.h"
#include "rootlessrt/util.h"

/* ---------------------------------------------------------------- `images` */

/* config.created (RFC 3339) as seconds since the epoch; when the config has none (or an
 * unreadable one), when the store recorded the image, as podman falls back to its storage's. */
static time_t created_of(json_object *e)
{
  const char *s = rrt_names_str(e, "created");
  struct tm tm = {0};
  const char *rest = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
  if (!rest) {
    json_object *added = NULL;
    json_object_object_get_ex(e, "added", &added);
    return (time_t)json_object_get_int64(added);
  }
  time_t t = timegm(&tm);
  if (*rest == '.')
    rest += 1 + strspn(rest + 1, "0123456789");
  int sign = *rest == '+' ? 1 : *rest == '-' ? -1 : 0, hh = 0, mm = 0;
  if (sign && sscanf(rest + 1, "%2d:%2d", &hh, &mm) == 2)
    t -= sign * (hh * 3600 + mm * 60);
  return t;
}

/* How long ago, in the words `podman images` uses (the thresholds of Docker's go-units). */
static void ago(time_t then, char *buf, size_t len)
{
  double d = difftime(time(NULL), then);
  long s = (long)d, m = (long)(d / 60), h = (long)(d / 3600 + 0.5);
  if (then == 0)
    snprintf(buf, len, "%s", "");
  else if (s < 1)
    snprintf(buf, len, "Less than a second ago");
  else if (s == 1)
    snprintf(buf, len, "1 second ago");
  else if (s < 60)
    snprintf(buf, len, "%ld seconds ago", s);
  else if (m == 1)
    snprintf(buf, len, "About a minute ago");
  else if (m < 60)
    snprintf(buf, len, "%ld minutes ago", m);
  else if (h == 1)
    snprintf(buf, len, "About an hour ago");
  else if (h < 48)
    snprintf(buf, len, "%ld hours ago", h);
  else if (h < 24 * 7 * 2)
    snprintf(buf, len, "%ld days ago", h / 24);
  else if (h < 24 * 30 * 2)
    snprintf(buf, len, "%ld weeks ago", h / 24 / 7);
  else if (h < 24 * 365 * 2)
    snprintf(buf, len, "%ld months ago", h / 24 / 30);
  else
    snprintf(buf, len, "%ld years ago", (long)(d / 3600) / 24 / 365);
}

/* Decimal units, three significant digits: "2.95 MB", as podman prints sizes. */
static void size_shown(uint64_t n, char *buf, size_t len)
{
  static const char *const u[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double v = (double)n;
  size_t i = 0;
  while (v >= 1000 && i < 5)
    v /= 1000, i++;
  snprintf(buf, len, "%.3g %s", v, u[i]);
}

struct row {
  char *cell[5];
};

static int by_created(const void *a, const void *b)
{
  time_t ta = created_of(*(json_object *const *)a), tb = created_of(*(json_object *const *)b);
  return ta < tb ? 1 : ta > tb ? -1 : 0;
}

static void add_row(struct row **rows, size_t *n, char *repo, char *tag, const char *id,
                    json_object *e, const struct rrt_images_opts *o)
{
  *rows = xrealloc(*rows, (*n + 1) * sizeof(**rows));
  struct row *r = &(*rows)[(*n)++];
  char when[64], size[32];
  ago(created_of(e), when, sizeof(when));
  json_object *sz = NULL;
  json_object_object_get_ex(e, "size", &sz);
  size_shown((uint64_t)json_object_get_int64(sz), size, sizeof(size));
  r->cell[0] = repo;
  r->cell[1] = tag;
  r->cell[2] = o->no_trunc ? xasprintf("sha256:%s", id) : xasprintf("%.12s", id);
  r->cell[3] = xstrdup(when);
  r->cell[4] = xstrdup(size);
}

/* The rows of one image: one per name (REPOSITORY, TAG), a digest's repository with <none>, or
 * <none> <none>. */
static void rows_of(json_object *e, struct row **rows, size_t *n, const struct rrt_images_opts *o)
{
  const char *id = rrt_names_str(e, "id");
  json_object *names = rrt_names_list(e, "names"), *digests = rrt_names_list(e, "digests");
  size_t k = json_object_array_length(names);
  for (size_t i = 0; i < k; i++) {
    const char *name = json_object_get_string(json_object_array_get_idx(names, i));
    cleanup_free char *repo = rrt_names_repo(name);
    add_row(rows, n, rrt_names_shown(repo), rrt_names_shown(name + strlen(repo) + 1), id, e, o);
  }
  if (k == 0) {
    cleanup_free char *repo =
        json_object_array_length(digests)
            ? rrt_names_repo(json_object_get_string(json_object_array_get_idx(digests, 0)))
            : xstrdup("<none>");
    add_row(rows, n, rrt_names_shown(repo), xstrdup("<none>"), id, e, o);
  }
}

static json_object *json_of(json_object *e)
{
  json_object *j = json_object_new_object();
  const char *id = rrt_names_str(e, "id");
  json_object *names = rrt_names_list(e, "names"), *digests = rrt_names_list(e, "digests"), *sz;
  json_object_object_add(j, "Id", json_object_new_string(id));
  json_object_object_add(j, "ParentId", json_object_new_string(""));
  json_object_object_add(j, "RepoTags", json_object_get(names));
  json_object_object_add(j, "RepoDigests", json_object_get(digests));
  json_object_object_get_ex(e, "size", &sz);
  json_object_object_add(j, "Size", json_object_new_int64(json_object_get_int64(sz)));
  json_object_object_add(j, "SharedSize", json_object_new_int64(0));
  json_object_object_add(j, "VirtualSize", json_object_new_int64(json_object_get_int64(sz)));
  json_object_object_add(j, "Names", json_object_get(names));
  const char *m = rrt_names_str(e, "manifest");
  json_object_object_add(j, "Digest", json_object_new_string(m ? m : ""));
  time_t t = created_of(e);
  json_object_object_add(j, "Created", json_object_new_int64((int64_t)t));
  char at[32] = "";
  struct tm tm;
  if (t && gmtime_r(&t, &tm))
    strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
  json_object_object_add(j, "CreatedAt", json_object_new_string(at));
  return j;
}

int rrt_images_print(const char *store, const struct rrt_images_opts *o, struct rrt_error *err)
{
  json_object *doc = rrt_names_load(store, err);
  if (!doc)
    return -1;
  json_object *arr = rrt_names_images(doc);
  size_t n = json_object_array_length(arr);
  cleanup_free json_object **v = xcalloc(n + 1, sizeof(*v));
  for (size_t i = 0; i < n; i++)
    v[i] = json_object_array_get_idx(arr, i);
  qsort(v, n, sizeof(*v), by_created);
  if (o->json) {
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < n; i++)
      json_object_array_add(out, json_of(v[i]));
    printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(out);
    json_object_put(doc);
    return 0;
  }
  if (o->quiet) {
    for (size_t i = 0; i < n; i++) {
      const char *id = rrt_names_str(v[i], "id");
      if (o->no_trunc)
        printf("sha256:%s\n", id);
      else
        printf("%.12s\n", id);
    }
    json_object_put(doc);
    return 0;
  }
  struct row *rows = NULL;
  size_t nr = 0;
  for (size_t i = 0; i < n; i++)
    rows_of(v[i], &rows, &nr, o);
  static const char *const head[] = {"REPOSITORY", "TAG", "IMAGE ID", "CREATED", "SIZE"};
  /* A tab writer's columns, as podman's: each as wide as its widest cell plus 2, at least 12. */
  size_t w[5];
  for (size_t c = 0; c < 5; c++) {
    w[c] = o->noheading ? 0 : strlen(head[c]);
    for (size_t i = 0; i < nr; i++)
      if (strlen(rows[i].cell[c]) > w[c])
        w[c] = strlen(rows[i].cell[c]);
    w[c] = w[c] + 2 < 12 ? 12 : w[c] + 2;
  }
  if (!o->noheading)
    printf("%-*s%-*s%-*s%-*s%s\n", (int)w[0], head[0], (int)w[1], head[1], (int)w[2], head[2],
           (int)w[3], head[3], head[4]);
  for (size_t i = 0; i < nr; i++) {
    printf("%-*s%-*s%-*s%-*s%s\n", (int)w[0], rows[i].cell[0], (int)w[1], rows[i].cell[1],
           (int)w[2], rows[i].cell[2], (int)w[3], rows[i].cell[3], rows[i].cell[4]);
    for (size_t c = 0; c < 5; c++)
      free(rows[i].cell[c]);
  }
  free(rows);
  json_object_put(doc);
  return 0;
}

/* ---------------------------------------------------------------- removing */

/* Removes the layers of the store that neither a record of doc nor a container of root uses,
 * and the blobs no record names: what `store prune` and `rmi` leave behind otherwise. only:
 * when not NULL, just these layers (an image's, at rmi). Prints what went with `say`. */
static int remove_unused(const char *store, const char *root, json_object *doc, json_object *only,
                         bool say, uint64_t *freed, size_t *n_layers, struct rrt_error *err)
{
  cleanup_free char *dir = xasprintf("%s/layers/sha256", store);
  DIR *d = opendir(dir);
  struct dirent *e;
  int r = 0;
  while (d && r == 0 && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    if (only && !json_object_is_type(only, json_type_array))
      break;
    bool wanted = !only;
    for (size_t i = 0; only && i < json_object_array_length(only); i++)
      wanted |= strcmp(json_object_get_string(json_object_array_get_idx(only, i)), e->d_name) == 0;
    if (!wanted)
      continue;
    cleanup_free char *img = rrt_store_user_image(doc, e->d_name);
    cleanup_free char *ctr = img ? NULL : rrt_store_user_container(store, root, e->d_name, NULL);
    if (img || ctr)
      continue;
    cleanup_free char *p = xasprintf("%s/%s", dir, e->d_name);
    cleanup_free char *sz = xasprintf("%s/layers/sizes/%s", store, e->d_name);
    struct stat st;
    if (freed && stat(sz, &st) == 0) {
      cleanup_free char *text = NULL;
      struct rrt_error ig = RRT_ERROR_INIT;
      if (rrt_read_file(sz, &text, NULL, &ig) == 0)
        *freed += strtoull(text, NULL, 10);
      rrt_error_clear(&ig);
    }
    if (rrt_remove_tree_userns(p, err) < 0) {
      r = rrt_error_wrap(err, "remove layer sha256:%s", e->d_name);
      break;
    }
    unlink(sz);
    if (n_layers)
      (*n_layers)++;
    if (say)
      printf("removed layer sha256:%s\n", e->d_name);
  }
  if (d)
    closedir(d);
  rrt_store_forget_blobs(store);
  /* The manifests and configs no record names. */
  cleanup_free char *bdir = xasprintf("%s/blobs/sha256", store);
  DIR *b = opendir(bdir);
  while (b && (e = readdir(b))) {
    if (e->d_name[0] == '.')
      continue;
    bool named = false;
    json_object *arr = rrt_names_images(doc);
    for (size_t i = 0; !named && i < json_object_array_length(arr); i++) {
      json_object *o = json_object_array_get_idx(arr, i);
      const char *id = rrt_names_str(o, "id"), *m = rrt_names_str(o, "manifest");
      named = (id && strcmp(id, e->d_name) == 0) || (m && strcmp(m + 7, e->d_name) == 0);
    }
    if (!named)
      unlinkat(dirfd(b), e->d_name, 0);
  }
  if (b)
    closedir(b);
  return r;
}

/* The record of an image, out of doc; its blobs and layers go with the next remove_unused. */
static void drop_record(json_object *doc, json_object *e)
{
  json_object *arr = rrt_names_images(doc);
  for (size_t i = 0; i < json_object_array_length(arr); i++)
    if (json_object_array_get_idx(arr, i) == e) {
      json_object_array_del_idx(arr, i, 1);
      return;
    }
}

int rrt_images_remove(const char *store, const char *root, char *const *refs, size_t n, bool all,
                      bool force, struct rrt_error *err)
{
  if (access(store, F_OK) < 0) { /* nothing was ever stored */
    cleanup_free char *shown = rrt_names_shown(all || n == 0 ? "--all" : refs[0]);
    if (all)
      return 0;
    return rrt_error_msgf(err, ENOENT, "rmi: %s: no such image in the store %s (it is empty)",
                          shown, store);
  }
  if (root)
    rrt_run_sweep(root);
  cleanup_close int gc = rrt_names_lock(store, RRT_GC_LOCK, LOCK_EX);
  cleanup_close int lock = rrt_names_lock(store, "images.lock", LOCK_EX);
  if (gc < 0 || lock < 0)
    return rrt_error_errno(err, "rmi: lock the store %s", store);
  json_object *doc = rrt_names_load(store, err);
  if (!doc)
    return rrt_error_wrap(err, "rmi");
  json_object *layers = json_object_new_array();
  int r = 0;
  bool changed = false;
  size_t count = all ? json_object_array_length(rrt_names_images(doc)) : n;
  for (size_t i = 0; r == 0 && i < count; i++) {
    cleanup_free char *resolved = NULL;
    json_object *e = all ? json_object_array_get_idx(rrt_names_images(doc), 0)
                         : rrt_names_find(doc, refs[i], false, &resolved);
    if (!e) {
      cleanup_free char *shown = rrt_names_shown(refs[i]);
      r = rrt_error_msgf(err, ENOENT,
                         "rmi: %s: no such image in the store %s (`rootlessrt images` lists them)",
                         shown, store);
      break;
    }
    const char *id = rrt_names_str(e, "id");
    json_object *names = rrt_names_list(e, "names");
    /* A name of an image that has others: only that name goes (podman's untag). */
    if (!all && resolved && strcmp(resolved, id) != 0 && json_object_array_length(names) > 1) {
      for (size_t k = json_object_array_length(names); k-- > 0;)
        if (strcmp(json_object_get_string(json_object_array_get_idx(names, k)), resolved) == 0)
          json_object_array_del_idx(names, k, 1);
      cleanup_free char *shown = rrt_names_shown(resolved);
      printf("Untagged: %s\n", shown);
      changed = true;
      continue;
    }
    cleanup_free char *ctr = rrt_store_user_container(store, root, NULL, id);
    if (ctr && !force) {
      cleanup_free char *shown = rrt_names_shown(all ? id : refs[i]);
      r = rrt_error_msgf(err, EBUSY,
                         "rmi: %s: image in use by container \"%s\": delete it first (or "
                         "rmi --force: the record goes, the layers stay while it uses them)",
                         shown, ctr);
      break;
    }
    for (size_t k = 0; k < json_object_array_length(names); k++) {
      cleanup_free char *shown =
          rrt_names_shown(json_object_get_string(json_object_array_get_idx(names, k)));
      printf("Untagged: %s\n", shown);
    }
    json_object *ls = rrt_names_list(e, "layers");
    for (size_t k = 0; k < json_object_array_length(ls); k++)
      json_object_array_add(layers, json_object_get(json_object_array_get_idx(ls, k)));
    printf("Deleted: %s\n", id);
    drop_record(doc, e);
    changed = true;
  }
  /* What was untagged or removed before an error stays so (podman goes on with the others). */
  struct rrt_error e2 = RRT_ERROR_INIT;
  if (changed && rrt_names_save(store, doc, r == 0 ? err : &e2) < 0)
    r = -1;
  if (changed && remove_unused(store, root, doc, layers, false, NULL, NULL, r == 0 ? err : &e2) < 0)
    r = -1;
  rrt_error_clear(&e2);
  json_object_put(layers);
  json_object_put(doc);
  return r;
}

int rrt_store_prune(const char *store, const char *root, struct rrt_error *err)
{
  if (access(store, F_OK) < 0) {
    printf("store prune: the store %s is empty\n", store);
    return 0;
  }
  if (root)
    rrt_run_sweep(root);
  cleanup_close int gc = rrt_names_lock(store, RRT_GC_LOCK, LOCK_EX);
  cleanup_close int lock = rrt_names_lock(store, "images.lock", LOCK_EX);
  if (gc < 0 || lock < 0)
    return rrt_error_errno(err, "store prune: lock the store %s", store);
  json_object *doc = rrt_names_load(store, err);
  if (!doc)
    return rrt_error_wrap(err, "store prune");
  /* Images with neither a name nor a digest (a name that moved to another image) first, as
   * podman's image prune removes dangling images; then what no image and no container uses. */
  json_object *arr = rrt_names_images(doc);
  size_t dropped = 0;
  for (size_t i = json_object_array_length(arr); i-- > 0;) {
    json_object *e = json_object_array_get_idx(arr, i);
    const char *id = rrt_names_str(e, "id");
    cleanup_free char *ctr = rrt_store_user_container(store, root, NULL, id);
    if (json_object_array_length(rrt_names_list(e, "names")) == 0 && !ctr) {
      printf("removed image %s (no name)\n", id);
      json_object_array_del_idx(arr, i, 1);
      dropped++;
    }
  }
  int r = dropped ? rrt_names_save(store, doc, err) : 0;
  uint64_t freed = 0;
  size_t nl = 0;
  if (r == 0)
    r = remove_unused(store, root, doc, NULL, true, &freed, &nl, err);
  json_object_put(doc);
  if (r == 0) {
    char size[32];
    size_shown(freed, size, sizeof(size));
    printf("store prune: %zu layers, %zu images removed (%s of layers)\n", nl, dropped, size);
  }
  return r < 0 ? rrt_error_wrap(err, "store prune") : 0;
}
