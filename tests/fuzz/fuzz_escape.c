/* fuzz_escape.c: rrt_escape (base/escape.c): its output holds nothing a terminal acts on, is
 * valid UTF-8, and escaping it again changes nothing; rrt_escape_ascii's (names) is printable
 * ASCII, a backslash only where an escape starts, read back to the bytes it was given, and
 * rrt_escape keeps it. */
#include <stdint.h>
#include <stdio.h>
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
  /* The strict form: printable ASCII only, \xHH for every other byte, so it reads back. */
  cleanup_free char *a = rrt_escape_ascii(s);
  cleanup_free char *kept = rrt_escape(a);
  if (strcmp(kept, a) != 0)
    abort();
  size_t k = 0;
  for (const char *p = a; *p; k++) {
    if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
      abort();
    if (*p != '\\') {
      if (s[k] != *p++)
        abort();
      continue;
    }
    unsigned v;
    if (p[1] != 'x' || sscanf(p + 2, "%2x", &v) != 1 || !p[2] || !p[3] || s[k] != (char)v)
      abort();
    p += 4;
  }
  if (s[k] != '\0')
    abort();
  free(again);
  free(e);
  return 0;
}
