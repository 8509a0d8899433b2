/* names.c: the store's image records: the images it holds by name, so that `run NAME` runs
 * offline and `images`, `rmi` and `store prune` know what each layer is for.
 *
 * STORE/images.json, one json-c document, replaced atomically (a temporary file renamed over
 * it) under the lock STORE/images.lock:
 *   {"images": [{"id": CONFIG_HEX, "manifest": "sha256:HEX", "names": ["HOST/PATH:TAG", ...],
 *                "digests": ["HOST/PATH@sha256:HEX", ...], "created": "RFC 3339",
 *                "size": BYTES, "layers": [DIFF_ID_HEX, ...], "added": UNIX_TIME}]}
 * and each image's manifest and config in STORE/blobs/sha256/HEX, verified whenever read. A name
 * belongs to one image: recording it for another moves it (the old image keeps its other names,
 * or none: `<none>`, as podman shows it). */
#include <ctype.h>
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
#include "manifest.h"
#include "names.h"
#include "rootlessrt/escape.h"
#include "rootlessrt/util.h"

#define RECORDS "images.json"
#define RECORDS_LOCK "images.lock"

/* ---------------------------------------------------------------- the file */

int rrt_names_lock(const char *store, const char *which, int op)
{
  cleanup_free char *path = xasprintf("%s/%s", store, which);
  int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  while (flock(fd, op) < 0) {
    if (errno != EINTR) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

static json_object *empty_doc(void)
{
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "images", json_object_new_array());
  return doc;
}

json_object *rrt_names_load(const char *store, struct rrt_error *err)
{
  cleanup_free char *path = xasprintf("%s/" RECORDS, store);
  cleanup_free char *text = NULL;
  size_t len;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_read_file(path, &text, &len, &e) < 0) {
    if (e.errnum == ENOENT) {
      rrt_error_clear(&e);
      return empty_doc();
    }
    rrt_error_move(err, &e);
    return NULL;
  }
  json_object *doc = json_tokener_parse(text), *arr = NULL;
  if (!doc || !json_object_object_get_ex(doc, "images", &arr) ||
      !json_object_is_type(arr, json_type_array)) {
    json_object_put(doc);
    rrt_error_msgf(err, EINVAL, "%s: not the store's image records (JSON with an \"images\" array)",
                   path);
    return NULL;
  }
  return doc;
}

json_object *rrt_names_images(json_object *doc)
{
  json_object *arr = NULL;
  json_object_object_get_ex(doc, "images", &arr);
  return arr;
}

const char *rrt_names_str(json_object *o, const char *key)
{
  json_object *v;
  if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

json_object *rrt_names_list(json_object *o, const char *key)
{
  json_object *v;
  if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array)) {
    v = json_object_new_array();
    json_object_object_add(o, key, v);
  }
  return v;
}

int rrt_names_save(const char *store, json_object *doc, struct rrt_error *err)
{
  cleanup_free char *path = xasprintf("%s/" RECORDS, store);
  cleanup_free char *tmp = xasprintf("%s/.%s.XXXXXX", store, RECORDS);
  cleanup_close int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0)
    return rrt_error_errno(err, "write %s", path);
  const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY);
  if (rrt_write_all(fd, text, strlen(text)) < 0 || rrt_write_all(fd, "\n", 1) < 0 ||
      fsync(fd) < 0 || rename(tmp, path) < 0) {
    rrt_error_errno(err, "write %s", path);
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- blobs */

static int write_blob(const char *store, const char *hex, const char *data, size_t len,
                      struct rrt_error *err)
{
  cleanup_free char *dir = xasprintf("%s/blobs", store);
  cleanup_free char *sub = xasprintf("%s/sha256", dir);
  cleanup_free char *path = xasprintf("%s/%s", sub, hex);
  if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || (mkdir(sub, 0700) < 0 && errno != EEXIST))
    return rrt_error_errno(err, "mkdir %s", sub);
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len)
    return 0; /* named by its digest: the same bytes (verified when read) */
  cleanup_free char *tmp = xasprintf("%s/.%s.XXXXXX", sub, hex);
  cleanup_close int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0)
    return rrt_error_errno(err, "write %s", path);
  if (rrt_write_all(fd, data, len) < 0 || fchmod(fd, 0600) < 0 || rename(tmp, path) < 0) {
    rrt_error_errno(err, "write %s", path);
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- layer sizes */

void rrt_layer_size_note(const char *store, const char *diff_hex, uint64_t bytes)
{
  cleanup_free char *dir = xasprintf("%s/layers/sizes", store);
  cleanup_free char *path = xasprintf("%s/%s", dir, diff_hex);
  cleanup_free char *text = xasprintf("%llu\n", (unsigned long long)bytes);
  struct rrt_error e = RRT_ERROR_INIT;
  if ((mkdir(dir, 0700) == 0 || errno == EEXIST) &&
      rrt_write_file(path, text, strlen(text), O_CREAT | O_TRUNC, 0600, &e) < 0)
    rrt_error_clear(&e);
}

/* The layer's uncompressed size as its unpack counted it; 0 when not known (a layer unpacked by
 * an earlier version). */
static uint64_t layer_size(const char *store, const char *diff_hex)
{
  cleanup_free char *path = xasprintf("%s/layers/sizes/%s", store, diff_hex);
  cleanup_free char *text = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  unsigned long long n = 0;
  if (rrt_read_file(path, &text, NULL, &e) == 0)
    n = strtoull(text, NULL, 10);
  rrt_error_clear(&e);
  return n;
}

/* ---------------------------------------------------------------- names */

/* "HOST/PATH:TAG" -> "HOST/PATH" (malloc'd); the same for "HOST/PATH@DIGEST". */
char *rrt_names_repo(const char *name)
{
  const char *at = strchr(name, '@');
  size_t n = at ? (size_t)(at - name) : strlen(name);
  const char *slash = memrchr(name, '/', n);
  const char *colon =
      memrchr(slash ? slash : name, ':', n - (size_t)((slash ? slash : name) - name));
  if (colon)
    n = (size_t)(colon - name);
  return xstrndup(name, n);
}

static bool list_has(json_object *arr, const char *s)
{
  for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
    if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), s) == 0)
      return true;
  return false;
}

static void list_del(json_object *arr, const char *s)
{
  for (size_t i = json_object_array_length(arr); i-- > 0;)
    if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), s) == 0)
      json_object_array_del_idx(arr, i, 1);
}

static void list_add(json_object *arr, const char *s)
{
  if (!list_has(arr, s))
    json_object_array_add(arr, json_object_new_string(s));
}

json_object *rrt_names_by_id(json_object *doc, const char *id)
{
  json_object *arr = rrt_names_images(doc);
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *e = json_object_array_get_idx(arr, i);
    const char *eid = rrt_names_str(e, "id");
    if (eid && strcmp(eid, id) == 0)
      return e;
  }
  return NULL;
}

int rrt_names_record(const char *store, const struct rrt_plan *p, char *const *names,
                     struct rrt_error *err)
{
  if (!p->manifest_raw || !p->config_raw)
    return 0; /* nothing to keep it by */
  if (write_blob(store, p->manifest, p->manifest_raw, p->manifest_len, err) < 0 ||
      write_blob(store, p->id, p->config_raw, p->config_len, err) < 0)
    return rrt_error_wrap(err, "record the image in the store");
  cleanup_close int lock = rrt_names_lock(store, RECORDS_LOCK, LOCK_EX);
  if (lock < 0)
    return rrt_error_errno(err, "lock %s/" RECORDS_LOCK, store);
  json_object *doc = rrt_names_load(store, err);
  if (!doc)
    return rrt_error_wrap(err, "record the image in the store");
  json_object *arr = rrt_names_images(doc);
  json_object *e = rrt_names_by_id(doc, p->id);
  if (!e) {
    e = json_object_new_object();
    json_object_object_add(e, "id", json_object_new_string(p->id));
    json_object_array_add(arr, e);
  }
  cleanup_free char *manifest = xasprintf("sha256:%s", p->manifest);
  json_object_object_add(e, "manifest", json_object_new_string(manifest));
  if (p->created)
    json_object_object_add(e, "created", json_object_new_string(p->created));
  json_object *layers = json_object_new_array();
  uint64_t size = 0;
  for (size_t i = 0; i < p->n; i++) {
    list_add(layers, p->layers[i].diff);
    size += layer_size(store, p->layers[i].diff);
  }
  json_object_object_add(e, "layers", layers);
  json_object_object_add(e, "size", json_object_new_int64((int64_t)size));
  json_object_object_add(e, "added", json_object_new_int64((int64_t)time(NULL)));
  json_object *mine = rrt_names_list(e, "names"), *digests = rrt_names_list(e, "digests");
  for (size_t k = 0; names && names[k]; k++) {
    bool digested = strchr(names[k], '@') != NULL;
    /* A tag moves to this image; a digest names one image only. */
    for (size_t i = 0; !digested && i < json_object_array_length(arr); i++) {
      json_object *o = json_object_array_get_idx(arr, i);
      if (o != e)
        list_del(rrt_names_list(o, "names"), names[k]);
    }
    list_add(digested ? digests : mine, names[k]);
    cleanup_free char *repo = rrt_names_repo(names[k]);
    cleanup_free char *d = xasprintf("%s@%s", repo, manifest);
    list_add(digests, d);
  }
  int r = rrt_names_save(store, doc, err);
  json_object_put(doc);
  return r < 0 ? rrt_error_wrap(err, "record the image in the store") : 0;
}

/* ---------------------------------------------------------------- lookup */

/* e answers to candidate: one of its names, or (NAME@DIGEST) one of its digests, or its
 * manifest's digest under one of its repositories. */
static bool answers(json_object *e, const char *cand)
{
  if (list_has(rrt_names_list(e, "names"), cand) || list_has(rrt_names_list(e, "digests"), cand))
    return true;
  const char *at = strchr(cand, '@');
  const char *manifest = rrt_names_str(e, "manifest");
  if (!at || !manifest || strcmp(at + 1, manifest) != 0)
    return false;
  cleanup_free char *repo = rrt_names_repo(cand);
  json_object *names = rrt_names_list(e, "names");
  for (size_t i = 0; i < json_object_array_length(names); i++) {
    cleanup_free char *r =
        rrt_names_repo(json_object_get_string(json_object_array_get_idx(names, i)));
    if (strcmp(r, repo) == 0)
      return true;
  }
  return false;
}

static json_object *find_answering(json_object *doc, const char *cand)
{
  json_object *arr = rrt_names_images(doc);
  for (size_t i = 0; cand && i < json_object_array_length(arr); i++)
    if (answers(json_object_array_get_idx(arr, i), cand))
      return json_object_array_get_idx(arr, i);
  return NULL;
}

/* A stored name whose path ends with "/" + the short name's path and whose tag (or digest) is
 * the same: podman's last resort for a short name (alpine -> quay.io/libpod/alpine:latest). */
static json_object *find_by_suffix(json_object *doc, const char *short_norm, char **matched)
{
  /* short_norm is localhost/PATH:TAG or localhost/PATH@DIGEST */
  const char *rest = short_norm + strlen("localhost");
  json_object *arr = rrt_names_images(doc);
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *e = json_object_array_get_idx(arr, i);
    const char *keys[] = {"names", "digests"};
    for (size_t k = 0; k < 2; k++) {
      json_object *l = rrt_names_list(e, keys[k]);
      for (size_t j = 0; j < json_object_array_length(l); j++) {
        const char *n = json_object_get_string(json_object_array_get_idx(l, j));
        size_t nl = strlen(n), rl = strlen(rest);
        if (nl > rl && strcmp(n + nl - rl, rest) == 0) {
          *matched = xstrdup(n);
          return e;
        }
      }
    }
  }
  return NULL;
}

/* An image id, or the start of one (at least 4 hex digits), of exactly one image. */
static json_object *find_by_id(json_object *doc, const char *ref)
{
  const char *hex = strncmp(ref, "sha256:", 7) == 0 ? ref + 7 : ref;
  size_t n = strlen(hex);
  if (n < 4 || n > 64 || strspn(hex, "0123456789abcdef") != n)
    return NULL;
  json_object *arr = rrt_names_images(doc), *found = NULL;
  for (size_t i = 0; i < json_object_array_length(arr); i++) {
    json_object *e = json_object_array_get_idx(arr, i);
    const char *id = rrt_names_str(e, "id");
    if (id && strncmp(id, hex, n) == 0) {
      if (found)
        return NULL; /* ambiguous */
      found = e;
    }
  }
  return found;
}

json_object *rrt_names_find(json_object *doc, const char *ref, bool docker_hub, char **resolved)
{
  *resolved = NULL;
  json_object *e = NULL;
  if (strncmp(ref, "sha256:", 7) == 0 || (!docker_hub && strlen(ref) == 64)) {
    e = find_by_id(doc, ref);
    if (e)
      *resolved = xstrdup(rrt_names_str(e, "id"));
    return e;
  }
  if (docker_hub || rrt_image_name_has_host(ref)) {
    cleanup_free char *n = rrt_image_name_normalize(ref, docker_hub);
    e = find_answering(doc, n);
    if (e)
      *resolved = steal_ptr(&n);
    return e;
  }
  /* A short name: localhost/NAME first, then docker.io/library/NAME (podman's candidates from
   * the store), then any stored name ending with it, then the start of an image id. */
  cleanup_free char *local = rrt_image_name_normalize(ref, false);
  cleanup_free char *hub = rrt_image_name_normalize(ref, true);
  if (!local)
    return NULL;
  if ((e = find_answering(doc, local))) {
    *resolved = steal_ptr(&local);
    return e;
  }
  if ((e = find_answering(doc, hub))) {
    *resolved = steal_ptr(&hub);
    return e;
  }
  if ((e = find_by_suffix(doc, local, resolved)))
    return e;
  e = find_by_id(doc, ref);
  if (e)
    *resolved = xstrdup(rrt_names_str(e, "id"));
  return e;
}

int rrt_names_lookup(const char *store, const char *ref, bool docker_hub, char **manifest_hex,
                     char **resolved, struct rrt_error *err)
{
  *manifest_hex = NULL;
  *resolved = NULL;
  cleanup_free char *path = xasprintf("%s/" RECORDS, store);
  if (access(path, F_OK) < 0)
    return 1; /* nothing recorded: no need to take the lock */
  json_object *doc = rrt_names_load(store, err);
  if (!doc)
    return -1;
  json_object *e = rrt_names_find(doc, ref, docker_hub, resolved);
  const char *m = e ? rrt_names_str(e, "manifest") : NULL;
  int r = 1;
  if (m && strncmp(m, "sha256:", 7) == 0) {
    *manifest_hex = xstrdup(m + 7);
    r = 0;
  } else {
    free(*resolved);
    *resolved = NULL;
  }
  json_object_put(doc);
  return r;
}

/* ---------------------------------------------------------------- printing names */

/* The one escaping, in its stricter form: a name is ASCII by the reference grammar, so whatever
 * is past ASCII in one is shown as bytes, and cannot pass for a real name (escape.h). */
char *rrt_names_shown(const char *s)
{
  return rrt_escape_ascii(s);
}
