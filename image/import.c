/* import.c: an image reference to layer directories in the store: each layer unpacked once,
 * inside the user namespace, into a temporary directory renamed into place only once complete
 * and verified, so an interrupted unpack is never used. */
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
  struct rrt_digest digest;
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
  rrt_progress_line(line, sizeof(line), im->cur, im->n_missing, layer_of(im, im->cur)->hex,
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
  progress(im, false);
}

static void on_read(void *arg, const void *buf, size_t n)
{
  struct import *im = arg;
  rrt_digest_update(&im->digest, buf, n);
  im->layer_bytes += n;
  progress(im, false);
}

static int on_unpack(void *arg, size_t idx, struct archive *a, struct rrt_error *err)
{
  struct import *im = arg;
  const struct rrt_layer_ref *l = layer_of(im, idx);
  free(im->tmp);
  im->tmp = xasprintf("%s/tmp/%d-%.12s", im->store, getpid(), l->hex);
  if (mkdir(im->tmp, 0755) < 0)
    return rrt_error_errno(err, "mkdir %s", im->tmp);
  /* The lock says the unpack is alive; it goes with the process however it ends. */
  if (im->lockfd >= 0)
    close(im->lockfd);
  im->lockfd = open(im->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (im->lockfd < 0 || flock(im->lockfd, LOCK_EX) < 0)
    return rrt_error_errno(err, "open %s", im->tmp);
  im->tmpfd = open(im->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (im->tmpfd < 0)
    return rrt_error_errno(err, "open %s", im->tmp);
  cleanup_free char *what = xasprintf("layer sha256:%s", l->hex);
  struct rrt_unpack u = {.rootfd = im->tmpfd, .what = what, .privileged = rrt_host_privileged()};
  int r = rrt_unpack_layer(a, &u, err);
  close(im->tmpfd);
  im->tmpfd = -1;
  return r;
}

static int on_verify(void *arg, size_t idx, struct rrt_error *err)
{
  struct import *im = arg;
  progress(im, true);
  const struct rrt_layer_ref *l = layer_of(im, idx);
  cleanup_free char *what = xasprintf("layer %s", l->path);
  return rrt_digest_check(l->hex, &im->digest, what, err);
}

static int on_commit(void *arg, size_t idx, struct rrt_error *err)
{
  struct import *im = arg;
  const struct rrt_layer_ref *l = layer_of(im, idx);
  cleanup_free char *final = xasprintf("%s/layers/sha256/%s", im->store, l->hex);
  if (rename(im->tmp, final) == 0)
    return 0;
  if (errno != EEXIST && errno != ENOTEMPTY)
    return rrt_error_errno(err, "rename %s to %s", im->tmp, final);
  /* Another run unpacked the same layer first: its copy is the one kept, ours goes now. */
  return rrt_remove_tree_userns(im->tmp, err) < 0
             ? rrt_error_wrap(err, "remove the second copy of layer sha256:%s", l->hex)
             : 0;
}

/* STORE/tmp/NAME: what an unpack that was killed left: no process holds its lock any more. Run
 * by every run that reads an image from the store (and by `store ls`), whatever it needs. */
void rrt_store_remove_stale(const char *store)
{
  cleanup_free char *dir = xasprintf("%s/tmp", store);
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
  struct rrt_src_sink sink = {on_begin, on_read, on_unpack, on_verify, on_commit, im};
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
  for (size_t i = 0; i < 4; i++) {
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

/* The layers top first, each once (an empty layer repeated is one directory). */
static char **lowers_of(const char *store, const struct rrt_plan *p)
{
  char **v = xcalloc(p->n + 1, sizeof(char *));
  size_t n = 0;
  for (size_t i = p->n; i-- > 0;) {
    bool seen = false;
    for (size_t k = p->n; k-- > i + 1;)
      seen |= strcmp(p->layers[k].hex, p->layers[i].hex) == 0;
    if (!seen)
      v[n++] = xasprintf("%s/layers/sha256/%s", store, p->layers[i].hex);
  }
  return v;
}

static int import_missing(struct import *im, struct rrt_error *err)
{
  const struct rrt_plan *p = im->plan;
  im->missing = xcalloc(p->n + 1, sizeof(size_t));
  for (size_t i = 0; i < p->n; i++) {
    cleanup_free char *dir = xasprintf("%s/layers/sha256/%s", im->store, p->layers[i].hex);
    bool dup = false;
    for (size_t k = 0; k < im->n_missing; k++)
      dup |= strcmp(p->layers[im->missing[k]].hex, p->layers[i].hex) == 0;
    if (!dup && access(dir, F_OK) < 0)
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

int rrt_image_import(const char *ref, const char *store, struct rrt_image *img,
                     struct rrt_error *err)
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
      /* A layer the store has was verified when it was unpacked; a new one is, now. From a
       * registry (rrt_src_pull_dir) a layer the store has was not fetched, and a new one streams
       * in and can be read once only: it is verified as it streams, by the helper and again
       * here before it is committed (on_verify). */
      cleanup_free char *dir = xasprintf("%s/layers/sha256/%s", store, plan.layers[i].hex);
      bool have = access(dir, F_OK) == 0;
      if (have && rrt_src_pull_dir)
        continue;
      hexes[nn] = !have && !rrt_src_pull_dir ? plan.layers[i].hex : NULL;
      names[nn++] = plan.layers[i].path;
    }
    /* A registry's download directory is the helper's own: it holds each new layer once, as
     * a FIFO that must not be opened but to stream it (a reader gone would cut the helper). */
    r = rrt_src_pull_dir ? 0 : rrt_src_check_set(&src, names, hexes, nn, err);
  }
  if (r == 0)
    r = import_missing(&im, err);
  if (r == 0) {
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
