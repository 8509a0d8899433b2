/* digest.c: sha256 digests (nettle) of blobs as they stream by, and "sha256:HEX" strings. */
#include <errno.h>
#include <string.h>

#include "digest.h"
#include "rootlessrt/util.h"

void rrt_digest_init(struct rrt_digest *d)
{
  sha256_init(&d->ctx);
  d->bytes = 0;
}

void rrt_digest_update(struct rrt_digest *d, const void *buf, size_t n)
{
  sha256_update(&d->ctx, n, buf);
  d->bytes += n;
}

void rrt_digest_hex(struct rrt_digest *d, char hex[65])
{
  uint8_t raw[SHA256_DIGEST_SIZE];
  sha256_digest(&d->ctx, sizeof(raw), raw);
  for (size_t i = 0; i < sizeof(raw); i++) {
    static const char x[] = "0123456789abcdef";
    hex[2 * i] = x[raw[i] >> 4];
    hex[2 * i + 1] = x[raw[i] & 15];
  }
  hex[64] = '\0';
}

void rrt_digest_buf(const void *buf, size_t n, char hex[65])
{
  struct rrt_digest d;
  rrt_digest_init(&d);
  rrt_digest_update(&d, buf, n);
  rrt_digest_hex(&d, hex);
}

int rrt_digest_parse(const char *s, const char **hex, struct rrt_error *err)
{
  if (!s || strncmp(s, "sha256:", 7) != 0)
    return rrt_error_msgf(err, EINVAL, "digest \"%s\": only sha256 digests are supported",
                          s ? s : "(none)");
  const char *h = s + 7;
  if (strlen(h) != 64 || strspn(h, "0123456789abcdef") != 64)
    return rrt_error_msgf(err, EINVAL, "digest \"%s\": not 64 lowercase hex digits", s);
  *hex = h;
  return 0;
}

int rrt_digest_check(const char *want_hex, struct rrt_digest *d, const char *what,
                     struct rrt_error *err)
{
  char got[65];
  rrt_digest_hex(d, got);
  if (strcmp(got, want_hex) != 0)
    return rrt_error_msgf(err, EBADMSG,
                          "%s: digest mismatch: expected sha256:%s, the content is sha256:%s", what,
                          want_hex, got);
  return 0;
}
