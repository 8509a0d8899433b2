/* fuzz_escape.c: rrt_escape (base/escape.c): its output holds nothing a terminal acts on, is
 * valid UTF-8, and escaping it again changes nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/escape.h"
#include "rootlessrt/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *e = rrt_escape_mem(data, size);
  for (const unsigned char *p = (const unsigned char *)e; *p; p++)
    if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
      abort();
  if (rrt_escape_needed(e))
    abort(); /* valid UTF-8 without controls: nothing left to escape */
  char *again = rrt_escape(e);
  if (strcmp(again, e) != 0)
    abort();
  /* A cut copy is a prefix of the whole. */
  char buf[37];
  cleanup_free char *s = xstrndup((const char *)data, size);
  cleanup_free char *whole = rrt_escape(s);
  rrt_escape_buf(s, buf, sizeof(buf));
  if (strncmp(whole, buf, strlen(buf)) != 0 || strlen(buf) >= sizeof(buf))
    abort();
  free(again);
  free(e);
  return 0;
}
