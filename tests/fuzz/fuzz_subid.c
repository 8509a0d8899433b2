/* fuzz_subid.c: libFuzzer harness for rrt_subid_parse_line (one /etc/subuid line). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  cleanup_free char *line = xstrndup((const char *)data, size);
  char *owner = NULL;
  struct rrt_subid_range r = {0, 0};
  struct rrt_error err = RRT_ERROR_INIT;

  if (rrt_subid_parse_line(line, &owner, &r, &err) < 0) {
    /* A failure always explains itself and hands out nothing. */
    if (owner || !err.msg)
      abort();
    rrt_error_clear(&err);
    return 0;
  }
  /* What the parser accepts must be a range the kernel could map. */
  if (!owner || !*owner || strchr(owner, ':') || strpbrk(owner, " \t\r\n") || r.count == 0 ||
      r.start + r.count > UINT32_MAX)
    abort();

  /* Accepted lines survive a round trip unchanged. */
  cleanup_free char *again = xasprintf("%s:%lu:%lu", owner, r.start, r.count);
  char *owner2 = NULL;
  struct rrt_subid_range r2 = {0, 0};
  if (rrt_subid_parse_line(again, &owner2, &r2, &err) < 0 || strcmp(owner, owner2) != 0 ||
      r.start != r2.start || r.count != r2.count)
    abort();
  free(owner2);
  free(owner);
  rrt_error_clear(&err);
  return 0;
}
