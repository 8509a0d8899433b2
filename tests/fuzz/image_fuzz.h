/* image_fuzz.h: the entry points the image fuzz harnesses (fuzz_image_*.c) and the corpus
 * regression (tests/unit/test_image_corpus.c) share: an image's JSON (index, manifest, config,
 * docker manifest.json) over bytes, an archive over bytes, a layer tar unpacked into a scratch
 * directory. Each returns 0 and traps on a broken invariant (a failure without a message). */
#ifndef ROOTLESSRT_IMAGE_FUZZ_H
#define ROOTLESSRT_IMAGE_FUZZ_H

#include <archive.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../image/digest.h"
#include "../../image/manifest.h"
#include "../../image/source.h"
#include "../../image/unpack.h"
#include "rootlessrt/rmtree.h"

static inline void fuzz_check(int r, struct rrt_error *err)
{
  if (r < 0 && !err->msg)
    __builtin_trap();
  rrt_error_clear(err);
}

/* An in-memory "tar" source: the files a pass over the archive would have kept. */
static inline void fuzz_add(struct rrt_src *s, const char *name, const void *data, size_t len)
{
  s->files = realloc(s->files, (s->n_files + 1) * sizeof(*s->files));
  struct rrt_src_file *f = &s->files[s->n_files++];
  f->name = strdup(name);
  f->data = malloc(len + 1);
  memcpy(f->data, data, len);
  f->data[len] = '\0';
  f->len = len;
}

static inline char *fuzz_blob(struct rrt_src *s, const void *data, size_t len)
{
  char hex[65], name[80];
  rrt_digest_buf(data, len, hex);
  snprintf(name, sizeof(name), "blobs/sha256/%s", hex);
  fuzz_add(s, name, data, len);
  char *d = malloc(72);
  snprintf(d, 72, "sha256:%s", hex);
  return d;
}

static inline void fuzz_free_src(struct rrt_src *s)
{
  for (size_t i = 0; i < s->n_files; i++) {
    free(s->files[i].name);
    free(s->files[i].data);
  }
  free(s->files);
}

/* The first byte picks which document the rest is; the documents that lead to it are made
 * here with the right digests, so the fuzzer reaches every parser. */
static inline int fuzz_image_json(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  unsigned mode = data[0] % 5;
  const char *doc = (const char *)data + 1;
  size_t len = size - 1;
  struct rrt_src s = {.path = (char *)"fuzz", .tar = true, .dirfd = -1};
  struct rrt_plan p = {0};
  struct rrt_error err = RRT_ERROR_INIT;
  char buf[512];
  int r;
  if (mode == 0) { /* index.json */
    fuzz_add(&s, "index.json", doc, len);
    r = rrt_plan_oci(&s, NULL, &p, &err);
  } else if (mode == 1 || mode == 2) { /* a manifest (or nested index); a config */
    char *cfg = NULL, *man;
    if (mode == 2) {
      cfg = fuzz_blob(&s, doc, len);
      snprintf(buf, sizeof(buf),
               "{\"schemaVersion\":2,\"config\":{\"digest\":\"%s\"},\"layers\":[{\"digest\":"
               "\"sha256:%064d\"}]}",
               cfg, 0);
      man = fuzz_blob(&s, buf, strlen(buf));
    } else {
      man = fuzz_blob(&s, doc, len);
    }
    snprintf(buf, sizeof(buf), "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"%s\"}]}", man);
    fuzz_add(&s, "index.json", buf, strlen(buf));
    r = rrt_plan_oci(&s, mode == 1 ? "latest" : NULL, &p, &err);
    fuzz_check(r, &err);
    rrt_plan_free(&p);
    r = rrt_plan_oci(&s, NULL, &p, &err);
    free(cfg);
    free(man);
  } else if (mode == 3) { /* docker manifest.json */
    fuzz_add(&s, "manifest.json", doc, len);
    r = rrt_plan_docker(&s, NULL, &p, &err);
  } else { /* a docker-archive's config */
    char hex[65];
    rrt_digest_buf(doc, len, hex);
    char name[80];
    snprintf(name, sizeof(name), "%s.json", hex);
    fuzz_add(&s, name, doc, len);
    snprintf(buf, sizeof(buf), "[{\"Config\":\"%s\",\"Layers\":[\"a/layer.tar\"]}]", name);
    fuzz_add(&s, "manifest.json", buf, strlen(buf));
    r = rrt_plan_docker(&s, NULL, &p, &err);
  }
  fuzz_check(r, &err);
  rrt_plan_free(&p);
  fuzz_free_src(&s);
  return 0;
}

/* The bytes as an oci-archive and as a docker-archive: the small files found by a pass over
 * the headers, the layers checked as a set. */
static inline int fuzz_image_archive(const uint8_t *data, size_t size)
{
  static char path[64];
  if (!*path)
    snprintf(path, sizeof(path), "/tmp/rrt-fuzz-archive-%d.tar", (int)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
    if (fd >= 0)
      close(fd);
    return 0;
  }
  close(fd);
  for (int docker = 0; docker < 2; docker++) {
    struct rrt_src s;
    struct rrt_plan p = {0};
    struct rrt_error err = RRT_ERROR_INIT;
    int r = rrt_src_open(&s, path, true, &err);
    if (r == 0)
      r = docker ? rrt_plan_docker(&s, NULL, &p, &err) : rrt_plan_oci(&s, NULL, &p, &err);
    if (r == 0 && p.n) {
      char **names = calloc(p.n + 1, sizeof(char *));
      for (size_t i = 0; i < p.n; i++)
        names[i] = p.layers[i].path;
      r = rrt_src_check_set(&s, names, NULL, p.n, &err);
      free(names);
    }
    fuzz_check(r, &err);
    rrt_plan_free(&p);
    rrt_src_close(&s);
  }
  unlink(path);
  return 0;
}

/* The bytes as a layer (tar, gzip or zstd) unpacked into a fresh scratch directory. */
static inline int fuzz_image_unpack(const uint8_t *data, size_t size)
{
  char dir[] = "/tmp/rrt-fuzz-unpack.XXXXXX";
  if (!mkdtemp(dir))
    return 0;
  struct archive *a = archive_read_new();
  archive_read_support_format_tar(a);
  archive_read_support_filter_gzip(a);
  archive_read_support_filter_zstd(a);
  archive_read_support_filter_none(a);
  struct rrt_error err = RRT_ERROR_INIT;
  int rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd >= 0 && archive_read_open_memory(a, data, size) == ARCHIVE_OK) {
    struct rrt_unpack u = {.rootfd = rootfd, .what = "layer fuzz", .privileged = false};
    fuzz_check(rrt_unpack_layer(a, &u, &err), &err);
  }
  if (rootfd >= 0)
    close(rootfd);
  archive_read_free(a);
  /* What the layer made, removed as the runtime removes such trees. */
  (void)rrt_remove_tree(dir, NULL);
  return 0;
}

#endif
