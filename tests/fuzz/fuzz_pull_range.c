/* fuzz_pull_range.c: Content-Range (pull/blob.c): what a 206 says it continues. */
#include <inttypes.h>
#include <stdio.h>

#include "../../pull/blob.h"
#include "pull_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *v = fuzz_str(data, size);
  uint64_t f, l, t;
  if (content_range_parse(v, &f, &l, &t) == 0) {
    if (f > l || (t != RANGE_TOTAL_UNKNOWN && l >= t))
      abort();
    /* What it read is what it says: printed back, it parses to the same. */
    char again[96];
    if (t == RANGE_TOTAL_UNKNOWN)
      snprintf(again, sizeof(again), "bytes %" PRIu64 "-%" PRIu64 "/*", f, l);
    else
      snprintf(again, sizeof(again), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, f, l, t);
    uint64_t f2, l2, t2;
    if (content_range_parse(again, &f2, &l2, &t2) < 0 || f2 != f || l2 != l || t2 != t)
      abort();
  }
  free(v);
  return 0;
}
