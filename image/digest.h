/* digest.h: sha256 of a stream, and "sha256:HEX" strings (image/ only). */
#ifndef ROOTLESSRT_IMAGE_DIGEST_H
#define ROOTLESSRT_IMAGE_DIGEST_H

#include <nettle/sha2.h>
#include <stddef.h>
#include <stdint.h>

#include "rootlessrt/error.h"

struct rrt_digest {
  struct sha256_ctx ctx;
  uint64_t bytes;
};
void rrt_digest_init(struct rrt_digest *d);
void rrt_digest_update(struct rrt_digest *d, const void *buf, size_t n);
/* Finishes d: 64 lowercase hex digits. */
void rrt_digest_hex(struct rrt_digest *d, char hex[65]);
void rrt_digest_buf(const void *buf, size_t n, char hex[65]);
/* "sha256:" + 64 lowercase hex digits; *hex points into s. Other algorithms are an error. */
int rrt_digest_parse(const char *s, const char **hex, struct rrt_error *err);
/* Finishes d and compares: the error names what, both digests. */
int rrt_digest_check(const char *want_hex, struct rrt_digest *d, const char *what,
                     struct rrt_error *err);

#endif
