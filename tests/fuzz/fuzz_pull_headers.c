/* fuzz_pull_headers.c: the header lines of a registry's answer as libcurl hands them over
 * (pull/http.c), and the b64token check every bearer token passes before it reaches a header. */
#include "../../pull/http.h"
#include "pull_fuzz.h"

static void value_ok(const char *v)
{
  size_t n = v ? strlen(v) : 0;
  if (n && (v[0] == ' ' || v[0] == '\t' || v[n - 1] == '\r' || v[n - 1] == '\n' ||
            v[n - 1] == ' ' || v[n - 1] == '\t'))
    abort(); /* trimmed */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct response r = {0};
  /* Each line (\n kept, as curl gives it) in turn, NULs and all. */
  for (size_t off = 0; off < size;) {
    const uint8_t *nl = memchr(data + off, '\n', size - off);
    size_t n = nl ? (size_t)(nl - (data + off)) + 1 : size - off;
    char *line = xstrndup((const char *)data + off, n);
    http_header_line(&r, line, strlen(line));
    free(line);
    off += n;
  }
  value_ok(r.ctype);
  value_ok(r.digest);
  value_ok(r.challenge);
  value_ok(r.crange);
  response_free(&r);

  char *s = fuzz_str(data, size);
  if (http_b64token(s)) {
    /* Nothing but the RFC 6750 characters: no byte that could end a header line. */
    size_t k = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/");
    if (k == 0 || strspn(s + k, "=") != strlen(s + k))
      abort();
  }
  free(s);
  return 0;
}
