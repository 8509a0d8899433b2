/* fuzz_pull_resume.c: the resume decision (pull/blob.c): what the first bytes of a layer's 2xx
 * answer make of its kept partial download. Input: status (2 bytes), kept bytes (8), the
 * blob's size (8), then the Content-Range. */
#include "../../pull/blob.h"
#include "pull_fuzz.h"

static uint64_t u64(const uint8_t *p)
{
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = v << 8 | p[i];
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 18)
    return 0;
  long status = 200 + (long)((data[0] << 8 | data[1]) % 100);
  uint64_t from = u64(data + 2), blob = u64(data + 10);
  char *crange = fuzz_str(data + 18, size - 18);
  enum resume_step s = resume_decide(status, *crange ? crange : NULL, from, blob);
  uint64_t f, l, t;
  switch (s) {
  case RESUME_FRESH:
    if (from != 0)
      abort();
    break;
  case RESUME_FROM_ZERO:
    if (from == 0 || status == 206)
      abort();
    break;
  case RESUME_CONTINUE:
    /* Only a 206 that starts where the kept bytes end and runs to the blob's end. */
    if (from == 0 || status != 206 || content_range_parse(crange, &f, &l, &t) < 0 || f != from ||
        (blob && (l != blob - 1 || (t != RANGE_TOTAL_UNKNOWN && t != blob))))
      abort();
    break;
  case RESUME_ASK_AGAIN:
    if (from == 0 || status != 206)
      abort();
    break;
  default:
    abort();
  }
  free(crange);
  return 0;
}
