/* pull_fuzz.h: what the fuzz_pull_* harnesses share: the input as a string, and the checks
 * every error of the registry client must pass (one line, nothing a terminal acts on). */
#ifndef RRT_PULL_FUZZ_H
#define RRT_PULL_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../pull/pull.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (cut at its first NUL, as a C string from curl or json-c
 * would be). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
  return xstrndup((const char *)data, size);
}

/* An error message of the client: escaped where the outside's words went in. */
static inline void fuzz_check_error(void)
{
  if (rrt_escape_needed(pull_error()))
    abort();
}

/* Splits the input at its first n newlines: parts[0..n], each a malloc'd string. */
static inline void fuzz_split(const uint8_t *data, size_t size, char **parts, size_t n)
{
  const char *p = (const char *)data, *end = p + size;
  for (size_t i = 0; i <= n; i++) {
    const char *nl = i < n ? memchr(p, '\n', (size_t)(end - p)) : NULL;
    const char *stop = nl ? nl : end;
    parts[i] = xstrndup(p, (size_t)(stop - p));
    p = nl ? nl + 1 : end;
  }
}

#endif
