/* import.c: an image reference to layer directories in the store: each layer unpacked once,
 * inside the user namespace, into a temporary directory renamed into place only once complete
 * and verified, so an interrupted unpack is never used.
 *
 * The store keys a layer by its diff_id (the sha256 of its tar uncompressed, the config's
 * rootfs.diff_ids): LAYERS/sha256/DIFF_ID, whichever blob (gzip, zstd, plain) it came from, so an
 * image read as oci-archive and as docker-archive, or pulled after it was imported, is unpacked
 * once. LAYERS/blobs/sha256/BLOB -> ../../sha256/DIFF_ID records which compressed blob unpacked (or
 * a pulled image's config says unpacks) to which layer: for the registry client, which knows
 * blobs only, and `store ls`.
 * A store made before (its OCI layers named by their compressed digest) is not migrated: a layer
 * missing under its diff_id is used under its blob digest when that directory exists, as those
 * versions made it, so nothing is renamed under a container that may be using it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "manifest.h"
#include "names.h"
#include "rootlessrt/log.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"
#include "unpack.h"

struct import {
  const char *store;
  const struct rrt_src *src;
  struct rrt_plan *plan;
  size_t *missing; /* indexes into plan->layers */
  size_t n_missing;
  /* the layer being read */
  size_t cur;
  struct rrt_digest digest, diff; /* of the blob's bytes; of them decompressed */
  char *tmp;
  int tmpfd, lockfd;
  /* progress on a tty */
  bool tty;
  uint64_t layer_bytes, layer_size;
  double last_print;
};

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct rrt_layer_ref *layer_of(struct import *im, size_t idx)
{
  return &im->plan->layers[im->missing[idx]];
}

void rrt_progress_line(char *buf, size_t len, size_t idx, size_t n, const char *hex, uint64_t done,
                       uint64_t size)
{
  double mib = (double)done / 1048576.0;
  if (size > 0) {
    unsigned pct = (unsigned)(done >= size ? 100 : done * 100 / size);
    snprintf(buf, len, "layer %zu/%zu sha256:%.12s\u2026 %.1f MiB / %.1f MiB (%u%%)", idx + 1, n,
             hex, mib, (double)size / 1048576.0, pct);
  } else {
    snprintf(buf, len, "layer %zu/%zu sha256:%.12s\u2026 %.1f MiB", idx + 1, n, hex, mib);
  }
}

/* On a terminal, the layer's line rewritten in place (at most every 0.1 s), ended by a newline
 * when the layer is done. */
static void progress(struct import *im, bool final)
{
  double t = now_s();
  if (!im->tty || (!final && t - im->last_print < 0.1))
    return;
  im->last_print = t;
  char line[160];
  rrt_progress_line(line, sizeof(line), im->cur, im->n_missing, layer_of(im, im->cur)->blob,
                    im->layer_bytes, im->layer_size);
  fprintf(stderr, "\r%s\033[K%s", line, final ? "\n" : "");
}

static void on_begin(void *arg, size_t idx, uint64_t size)
{
  struct import *im = arg;
  im->cur = idx;
  im->layer_bytes = 0;
  im->layer_size = size;
  im->last_print = 0;
  rrt_digest_init(&im->digest);
  rrt_digest_init(&im->diff);
  progress(im, false);
}

static void on_read(void *arg, const void *buf, size_t n)
{
  struct import *im = arg;
  rrt_digest_update(&im->digest, buf, n);
  im->layer_bytes += n;
  progress(im, false);
}

static void on_data(void *arg, const void *buf, size_t n)
{
  struct import *im = arg;
  rrt_digest_update(&im->diff, buf, n);
}

static int on_unpack(void *arg, size_t idx, struct archive *a, struct rrt_error *err)
{
  struct import *im = arg;
  const struct rrt_layer_ref *l = layer_of(im, idx);
  free(im->tmp);
  im->tmp = xasprintf("%s/tmp/%d-%.12s", im->store, getpid(), l->diff);
  /* The lock says the unpack is alive; it goes with the process however it ends. */
  if (im->lockfd >= 0)
    close(im->lockfd);
  im->lockfd = rrt_store_tmp_make(im->tmp, err);
  if (im->lockfd < 0)
    return -1;
  im->tmpfd = open(im->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (im->tmpfd < 0)
    return rrt_error_errno(err, "open %s", im->tmp);
  cleanup_free char *what = xasprintf("layer sha256:%s", l->blob);
  struct rrt_unpack u = {.rootfd = im->tmpfd, .what = what, .privileged = rrt_host_privileged()};
  int r = rrt_unpack_layer(a, &u, err);
  close(im->tmpfd);
  im->tmpfd = -1;
  /* A full disk is the store's: said with its path, so the user knows which filesystem. */
  if (r < 0 && err && (err->errnum == ENOSPC || err->errnum == EDQUOT))
    rrt_error_wrap(err, "unpack into the store %s", im->store);
  return r;
}

static int on_verify(void *arg, size_t idx, struct rrt_error *err)
{
  struct import *im = arg;
  progress(im, true);
  const struct rrt_layer_ref *l = layer_of(im, idx);
  cleanup_free char *what = xasprintf("layer %s", l->path);
  return rrt_digest_check(l->blob, &im->digest, what, err);
}

/* The tar the blob decompressed to is the one the config names at that position. */
static int on_verify_diff(void *arg, size_t idx, struct rrt_error *err)
{
  struct import *im = arg;
  const struct rrt_layer_ref *l = layer_of(im, idx);
  char got[65];
  uint64_t bytes = im->diff.bytes;
  rrt_digest_hex(&im->diff, got);
  if (strcmp(got, l->diff) == 0) {
    rrt_layer_size_note(im->store, l->diff, bytes); /* for `images` */
    return 0;
  }
  return rrt_error_msgf(err, EBADMSG,
                        "layer %zu (sha256:%s): its uncompressed tar is sha256:%s, but the "
                        "config's rootfs.diff_ids[%zu] is sha256:%s: refused",
                        im->missing[idx], l->blob, got, im->missing[idx], l->diff);
}

/* LAYERS/blobs/sha256/BLOB -> the layer it unpacks to (best effort: only a hint). The directory
 * is made with the first record, so a store nothing was unpacked into holds nothing. */
static void note_blob(const char *store, const struct rrt_layer_ref *l)
{
  cleanup_free char *dir = xasprintf("%s/layers/blobs", store);
  cleanup_free char *sub = xasprintf("%s/sha256", dir);
  cleanup_free char *link = xasprintf("%s/%s", sub, l->blob);
  cleanup_free char *target = xasprintf("../../sha256/%s", l->diff);
  if (symlink(target, link) == 0)
    return;
  if (errno == ENOENT && (mkdir(dir, 0700) == 0 || errno == EEXIST) &&
      (mkdir(sub, 0700) == 0 || errno == EEXIST) && symlink(target, link) == 0)
    return;
  if (errno == EEXIST && unlink(link) == 0)
    (void)!symlink(target, link);
}

static int on_commit(void *arg, size_t idx, struct rrt_error *err)
{
  struct import *im = arg;
  const struct rrt_layer_ref *l = layer_of(im, idx);
  cleanup_free char *final = xasprintf("%s/layers/sha256/%s", im->store, l->diff);
  if (rename(im->tmp, final) == 0) {
    note_blob(im->store, l);
    return 0;
  }
  if (errno != EEXIST && errno != ENOTEMPTY)
    return rrt_error_errno(err, "rename %s to %s", im->tmp, final);
  /* Another run unpacked the same layer first: its copy is the one kept, ours goes now. */
  note_blob(im->store, l);
  return rrt_remove_tree_userns(im->tmp, err) < 0
             ? rrt_error_wrap(err, "remove the second copy of layer sha256:%s", l->diff)
             : 0;
}

/* STORE/tmp itself locks the making of what is in it. A run holds it shared from the mkdir of
 * its directory until that directory is locked; the removal of stale directories holds it
 * exclusive. So a directory made a moment ago, not yet locked, is never taken for one a killed
 * run left (two runs at once lost a layer that way). -1 when tmp cannot be opened or locked. */
int rrt_store_tmp_hold(const char *tmpdir, int op)
{
  int fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 && flock(fd, op) < 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

int rrt_store_tmp_make(const char *path, struct rrt_error *err)
{
  cleanup_free char *tmpdir = xstrdup(path);
  char *slash = strrchr(tmpdir, '/');
  if (slash)
    *slash = '\0';
  cleanup_close int hold = rrt_store_tmp_hold(tmpdir, LOCK_SH);
  (void)hold; /* held (a shared lock on tmp/) until return */
  if (mkdir(path, 0755) < 0)
    return rrt_error_errno(err, "mkdir %s", path);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || flock(fd, LOCK_EX) < 0) {
    rrt_error_errno(err, "lock %s", path);
    if (fd >= 0)
      close(fd);
    rmdir(path);
    return -1;
  }
  return fd;
}

/* STORE/tmp/NAME: what an unpack that was killed left: no process holds its lock any more. Run
 * by every run that reads an image from the store (and by `store ls`), whatever it needs. */
void rrt_store_remove_stale(const char *store)
{
  cleanup_free char *dir = xasprintf("%s/tmp", store);
  cleanup_close int hold = rrt_store_tmp_hold(dir, LOCK_EX);
  if (hold < 0)
    return;
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    cleanup_free char *p = xasprintf("%s/%s", dir, e->d_name);
    cleanup_close int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
      rrt_remove_tree_userns(p, NULL);
  }
  closedir(d);
}

/* In the user namespace: every missing layer, from one pass over the source. */
static int import_fn(void *arg, struct rrt_error *err)
{
  struct import *im = arg;
  rrt_store_remove_stale(im->store);
  cleanup_free char **names = xcalloc(im->n_missing + 1, sizeof(char *));
  for (size_t i = 0; i < im->n_missing; i++)
    names[i] = layer_of(im, i)->path;
  struct rrt_src_sink sink = {on_begin,  on_read,        on_data,   on_unpack,
                              on_verify, on_verify_diff, on_commit, im};
  im->tty = isatty(2);
  int r = rrt_src_stream(im->src, names, im->n_missing, &sink, err);
  if (r < 0 && im->tmp)
    rrt_remove_tree_userns(im->tmp, NULL);
  if (im->lockfd >= 0)
    close(im->lockfd);
  free(im->tmp);
  return r;
}

/* "oci:PATH[:TAG]", "docker-archive:PATH[:NAME:TAG]": PATH is the longest prefix ending before a
 * ':' that exists, so paths with ':' work and NAME may hold '/' and ':' (localhost/debian:12).
 * When no prefix exists, the tag follows the first ':' after the last '/' (for the error). */
static void split_ref(const char *rest, char **path, char **tag)
{
  *tag = NULL;
  *path = xstrdup(rest);
  if (access(*path, F_OK) == 0)
    return;
  for (char *c = strrchr(*path, ':'); c;
       c = c > *path ? memrchr(*path, ':', (size_t)(c - *path)) : NULL) {
    *c = '\0';
    if (c > *path && access(*path, F_OK) == 0) {
      *tag = xstrdup(c + 1);
      return;
    }
    *c = ':';
  }
  char *slash = strrchr(*path, '/');
  char *colon = strchr(slash ? slash : *path, ':');
  if (colon) {
    *colon = '\0';
    *tag = xstrdup(colon + 1);
  }
}

static int mkdirs(const char *store, struct rrt_error *err)
{
  const char *subs[] = {"", "/layers", "/layers/sha256", "/tmp"};
  for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
    cleanup_free char *p = xasprintf("%s%s", store, subs[i]);
    if (i == 0) {
      /* The store's parents, as mkdir -p. */
      for (char *s = p + 1; *s; s++)
        if (*s == '/') {
          *s = '\0';
          mkdir(p, 0755);
          *s = '/';
        }
    }
    if (mkdir(p, 0700) < 0 && errno != EEXIST)
      return rrt_error_errno(err, "mkdir %s", p);
  }
  return 0;
}

/* The layer's directory in the store (malloc'd), or NULL: by its diff_id, else (a store made by
 * an earlier version, which named OCI layers by their compressed digest) by its blob digest. */
static char *layer_dir(const char *store, const struct rrt_layer_ref *l)
{
  char *dir = xasprintf("%s/layers/sha256/%s", store, l->diff);
  if (access(dir, F_OK) == 0)
    return dir;
  free(dir);
  if (strcmp(l->blob, l->diff) == 0)
    return NULL;
  dir = xasprintf("%s/layers/sha256/%s", store, l->blob);
  if (access(dir, F_OK) == 0)
    return dir;
  free(dir);
  return NULL;
}

/* The layers top first, each once (an empty layer repeated is one directory). */
static char **lowers_of(const char *store, const struct rrt_plan *p)
{
  char **v = xcalloc(p->n + 1, sizeof(char *));
  size_t n = 0;
  for (size_t i = p->n; i-- > 0;) {
    bool seen = false;
    for (size_t k = p->n; k-- > i + 1;)
      seen |= strcmp(p->layers[k].diff, p->layers[i].diff) == 0;
    if (seen)
      continue;
    /* One gone since (store rm meanwhile) is named all the same: its mount then fails, loudly. */
    char *dir = layer_dir(store, &p->layers[i]);
    v[n++] = dir ? dir : xasprintf("%s/layers/sha256/%s", store, p->layers[i].diff);
  }
  return v;
}

static int import_missing(struct import *im, struct rrt_error *err)
{
  const struct rrt_plan *p = im->plan;
  im->missing = xcalloc(p->n + 1, sizeof(size_t));
  for (size_t i = 0; i < p->n; i++) {
    bool dup = false;
    for (size_t k = 0; k < im->n_missing; k++)
      dup |= strcmp(p->layers[im->missing[k]].diff, p->layers[i].diff) == 0;
    cleanup_free char *dir = dup ? NULL : layer_dir(im->store, &p->layers[i]);
    if (!dup && !dir)
      im->missing[im->n_missing++] = i;
  }
  if (im->n_missing == 0) {
    rrt_store_remove_stale(im->store);
    return 0;
  }
  if (mkdirs(im->store, err) < 0)
    return -1;
  return rrt_userns_call(import_fn, im, err);
}

/* The registry client's --have directory (HAVE, the pull's own): an empty file named by every
 * blob digest it need not fetch: the layers in the store by their names (a plain layer's blob
 * digest is its diff_id; an earlier version's OCI layers are named by their blob digest), and
 * every blob seen to unpack to a layer the store still has. */
void rrt_pull_have_fill(const char *store, const char *have)
{
  const char *subs[] = {"layers/sha256", "layers/blobs/sha256"};
  for (size_t i = 0; i < 2; i++) {
    cleanup_free char *dir = xasprintf("%s/%s", store, subs[i]);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (strspn(e->d_name, "0123456789abcdef") != 64 || e->d_name[64])
        continue;
      cleanup_free char *p = xasprintf("%s/%s", dir, e->d_name);
      cleanup_free char *h = xasprintf("%s/%s", have, e->d_name);
      int fd = access(p, F_OK) == 0 ? open(h, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
      if (fd >= 0)
        close(fd);
    }
    if (d)
      closedir(d);
  }
}

/* After the client wrote the manifest and the config into LAYOUT, HAVE is made to name exactly
 * the blobs of this image's layers the store has (by diff_id, or by an earlier version's name):
 * one added is a layer the client would fetch needlessly, one removed (a record that does not
 * hold for this image's config) a layer it would not fetch at all. True when HAVE changed: the
 * client, which made its FIFOs by the old HAVE and waits to fetch the first, must start again.
 * A layer the store has under another blob gets that blob recorded, so that the next pull of
 * the image knows it from the start: a record is only a hint, checked against each image's config
 * here before the client is told, so a wrong one costs a restart, never a wrong layer. */
bool rrt_pull_have_fix(const char *layout, const char *store, const char *have)
{
  struct rrt_src src;
  struct rrt_plan plan = {0};
  struct rrt_error err = RRT_ERROR_INIT;
  bool changed = false;
  if (rrt_src_open(&src, layout, false, &err) == 0 && rrt_plan_oci(&src, NULL, &plan, &err) == 0)
    for (size_t i = 0; i < plan.n; i++) {
      const struct rrt_layer_ref *l = &plan.layers[i];
      cleanup_free char *dir = layer_dir(store, l);
      cleanup_free char *h = xasprintf("%s/%s", have, l->blob);
      cleanup_free char *by_diff = xasprintf("%s/layers/sha256/%s", store, l->diff);
      bool told = access(h, F_OK) == 0;
      if (dir && strcmp(dir, by_diff) == 0 && strcmp(l->blob, l->diff) != 0) {
        cleanup_free char *link = xasprintf("%s/layers/blobs/sha256/%s", store, l->blob);
        if (access(link, F_OK) < 0)
          note_blob(store, l);
      }
      if (dir && !told) {
        int fd = open(h, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0)
          close(fd);
        changed = true;
      } else if (!dir && told) {
        unlink(h);
        changed = true;
      }
    }
  rrt_error_clear(&err); /* the import that follows says what is wrong with the image */
  rrt_plan_free(&plan);
  rrt_src_close(&src);
  return changed;
}

static char **strv_dup(char *const *v)
{
  size_t n = rrt_strv_len(v);
  char **d = xcalloc(n + 1, sizeof(char *));
  for (size_t i = 0; i < n; i++)
    d[i] = xstrdup(v[i]);
  return d;
}

/* What an import tells the run and the records: the image id and manifest. */
static void identify(struct rrt_image *img, const struct rrt_plan *p)
{
  memcpy(img->id, p->id, sizeof(img->id));
  memcpy(img->manifest, p->manifest, sizeof(img->manifest));
}

int rrt_image_open_stored(const char *store, const char *manifest_hex, struct rrt_image *img,
                          struct rrt_error *err)
{
  struct rrt_plan plan = {0};
  int r = rrt_plan_stored(store, manifest_hex, &plan, err);
  for (size_t i = 0; r == 0 && i < plan.n; i++) {
    cleanup_free char *dir = layer_dir(store, &plan.layers[i]);
    if (!dir)
      r = rrt_error_msgf(err, ENOENT, "its layer %zu (sha256:%s) is no longer in the store", i,
                         plan.layers[i].diff);
  }
  if (r == 0) {
    img->lowers = lowers_of(store, &plan);
    img->config = plan.config;
    plan.config = (struct rrt_image_config){0};
    identify(img, &plan);
  }
  rrt_plan_free(&plan);
  return r;
}

int rrt_image_import(const char *ref, const char *store, const struct rrt_record *rec,
                     struct rrt_image *img, struct rrt_error *err)
{
  bool docker = strncmp(ref, "docker-archive:", 15) == 0;
  bool tar = docker || strncmp(ref, "oci-archive:", 12) == 0;
  cleanup_free char *path = NULL, *tag = NULL;
  split_ref(strchr(ref, ':') + 1, &path, &tag);
  if (!*path)
    return rrt_error_msgf(err, EINVAL, "run: %s: no path after the transport", ref);
  if (strpbrk(store, ":,"))
    return rrt_error_msgf(err, EINVAL,
                          "the store %s: a path with ':' or ',' cannot hold overlay "
                          "layers (use --storage)",
                          store);
  struct rrt_src src;
  struct rrt_plan plan = {0};
  struct import im = {.store = store, .src = &src, .plan = &plan, .tmpfd = -1, .lockfd = -1};
  int r = rrt_src_open(&src, path, tar, err);
  if (r == 0)
    r = docker ? rrt_plan_docker(&src, tag, &plan, err) : rrt_plan_oci(&src, tag, &plan, err);
  if (r == 0 && plan.n == 0)
    r = rrt_error_msgf(err, EINVAL, "%s: the image has no layers", path);
  if (r == 0) /* before anything is unpacked */
    r = rrt_image_check_platform(&plan.config, err);
  if (r == 0) { /* all of them, also those the store has: the image is what its source holds */
    cleanup_free char **names = xcalloc(plan.n + 1, sizeof(char *));
    cleanup_free const char **hexes = xcalloc(plan.n + 1, sizeof(char *));
    size_t nn = 0;
    for (size_t i = 0; i < plan.n; i++) {
      bool dup = false;
      for (size_t k = 0; k < nn; k++)
        dup |= strcmp(names[k], plan.layers[i].path) == 0;
      if (dup)
        continue;
      /* Every layer of a layout or an archive is verified, also one the store has: the run
       * uses the stored copy, and it may do so only if the source's bytes are that layer (a
       * docker-archive whose layer.tar is not its diff_id ran from the stored layer once). From a
       * registry (rrt_src_pull_dir) a layer the store has was not fetched, and a new one streams
       * in and can be read once only: it is verified as it streams, by the helper and again
       * here before it is committed (on_verify). */
      if (rrt_src_pull_dir) {
        cleanup_free char *dir = layer_dir(store, &plan.layers[i]);
        if (dir)
          continue;
      }
      hexes[nn] = !rrt_src_pull_dir ? plan.layers[i].blob : NULL;
      names[nn++] = plan.layers[i].path;
    }
    /* A registry's download directory is the helper's own: it holds each new layer once, as
     * a FIFO that must not be opened but to stream it (a reader gone would cut the helper). */
    r = rrt_src_pull_dir ? 0 : rrt_src_check_set(&src, names, hexes, nn, err);
  }
  if (r == 0)
    r = import_missing(&im, err);
  if (r == 0 && rec) {
    r = rrt_names_record(store, &plan, rec->names ? rec->names : plan.names, err);
    if (r < 0 && rec->warn_only) { /* the image is whole in the store: only its name is not */
      rrt_warn("%s", rrt_error_msg(err));
      rrt_error_clear(err);
      r = 0;
    }
  }
  if (r == 0) {
    identify(img, &plan);
    if (rec && rec->names_out)
      *rec->names_out = plan.names ? strv_dup(plan.names) : NULL;
    img->lowers = lowers_of(store, &plan);
    img->config = plan.config;
    plan.config = (struct rrt_image_config){0};
  } else {
    rrt_error_wrap(err, "run: %s", ref);
  }
  free(im.missing);
  rrt_plan_free(&plan);
  rrt_src_close(&src);
  return r;
}
