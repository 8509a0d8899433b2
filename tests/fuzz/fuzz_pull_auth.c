/* fuzz_pull_auth.c: auth.json (pull/auth.c): its base64 and the matching of its keys. The
 * input's first line is the registry host, the second the repository, the rest the file. */
#include "pull_fuzz.h"

static char *b64(const char *s, size_t n)
{
  static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = xmalloc((n + 2) / 3 * 4 + 1);
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)(unsigned char)s[i] << 16;
    if (i + 1 < n)
      v |= (uint32_t)(unsigned char)s[i + 1] << 8;
    if (i + 2 < n)
      v |= (unsigned char)s[i + 2];
    out[o++] = tbl[v >> 18 & 63];
    out[o++] = tbl[v >> 12 & 63];
    out[o++] = i + 1 < n ? tbl[v >> 6 & 63] : '=';
    out[o++] = i + 2 < n ? tbl[v & 63] : '=';
  }
  out[o] = '\0';
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *parts[3];
  fuzz_split(data, size, parts, 2);
  char *cred = auth_lookup_in(parts[2], parts[0], parts[1]);
  if (cred) {
    if (!strchr(cred, ':'))
      abort();
    for (const char *p = cred; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f)
        abort(); /* nothing that is not text reaches a header */
  }
  free(cred);
  /* The decoder reads back what an encoder wrote, and nothing it refuses has a valid form. */
  size_t n;
  char *enc = b64((const char *)data, size);
  char *dec = auth_b64_decode(enc, strlen(enc), &n);
  if (!dec || n != size || memcmp(dec, data, size) != 0)
    abort();
  free(dec);
  free(enc);
  dec = auth_b64_decode(parts[2], strlen(parts[2]), &n);
  if (dec) {
    /* Re-encoded and decoded again, the same bytes. */
    char *again = b64(dec, n);
    size_t n2;
    char *dec2 = auth_b64_decode(again, strlen(again), &n2);
    if (!dec2 || n2 != n || memcmp(dec2, dec, n) != 0)
      abort();
    free(dec2);
    free(again);
  }
  free(dec);
  size_t m = auth_key_matches(parts[2], parts[0], parts[1]);
  if (m > strlen(parts[2]))
    abort();
  for (int i = 0; i < 3; i++)
    free(parts[i]);
  return 0;
}
