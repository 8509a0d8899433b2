/* source.h: an image's files, from a layout directory or a tar (image/ only). */
#ifndef ROOTLESSRT_IMAGE_SOURCE_H
#define ROOTLESSRT_IMAGE_SOURCE_H

#include <archive.h>
#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#include "rootlessrt/error.h"

struct rrt_src_file {
  char *name;
  char *data;
  size_t len;
};

struct rrt_src {
  char *path; /* absolute */
  bool tar;
  int dirfd;                  /* the layout directory, or -1 */
  struct rrt_src_file *files; /* a tar's small files, read so far */
  size_t n_files;
};

int rrt_src_open(struct rrt_src *s, const char *path, bool tar, struct rrt_error *err);
/* Set only around registry.c's imports, whose layout is the pull helper's download directory:
 * a layer blob there may be a FIFO the helper made, through which the layer streams as it is
 * fetched, and a layer the store already has is not there at all (nothing is fetched twice).
 * Anywhere else a layout file must be a regular file, and every layer must be in it. */
extern bool rrt_src_pull_dir;
void rrt_src_close(struct rrt_src *s);
/* A small file ("index.json", "blobs/sha256/HEX"), NUL-terminated, malloc'd. */
int rrt_src_read(struct rrt_src *s, const char *name, char **data, size_t *len,
                 struct rrt_error *err);
/* What is done with each streamed blob: begin first, on_read sees every byte of it (digest,
 * progress), on_data every byte of it decompressed (the diff_id), unpack reads that as a tar
 * (the blob plain, gzip or zstd); verify and commit run once all of it was read. */
struct rrt_src_sink {
  void (*begin)(void *arg, size_t idx, uint64_t size); /* size: the blob's bytes, 0 unknown */
  void (*on_read)(void *arg, const void *buf, size_t n);
  void (*on_data)(void *arg, const void *buf, size_t n);
  int (*unpack)(void *arg, size_t idx, struct archive *a, struct rrt_error *err);
  int (*verify)(void *arg, size_t idx, struct rrt_error *err);      /* the blob's digest, always */
  int (*verify_diff)(void *arg, size_t idx, struct rrt_error *err); /* once unpacked */
  int (*commit)(void *arg, size_t idx, struct rrt_error *err);      /* once unpacked and verified */
  void *arg;
};
/* Every one of names (layer blobs) present once in the source, and each whose hexes[i] is not
 * NULL (hexes may be NULL) of that sha256: a tar holding one twice or missing one is refused
 * with each named, before anything is unpacked. */
int rrt_src_check_set(const struct rrt_src *s, char *const *names, const char *const *hexes,
                      size_t n, struct rrt_error *err);
/* Streams each of names (layer blobs) into sink; a tar source is read once, in its order. */
int rrt_src_stream(const struct rrt_src *s, char *const *names, size_t n,
                   const struct rrt_src_sink *sink, struct rrt_error *err);

#endif
