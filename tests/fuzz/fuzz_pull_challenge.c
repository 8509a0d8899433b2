/* fuzz_pull_challenge.c: the WWW-Authenticate parser of the registry client (pull/token.c). */
#include <ctype.h>

#include "../../pull/token.h"
#include "pull_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *v = fuzz_str(data, size);
  struct challenge c;
  int r = challenge_parse(v, &c);
  if (r < 0 && (c.scheme || c.realm || c.service || c.scope))
    abort(); /* a refusal hands out nothing */
  if (r == 0) {
    if (!c.scheme || !*c.scheme)
      abort();
    for (const char *p = c.scheme; *p; p++)
      if (!isalnum((unsigned char)*p) && !strchr("!#$%&'*+-.^_`|~", *p))
        abort(); /* a scheme is a token */
    /* A value is a part of the input: never longer than it. */
    if ((c.realm && strlen(c.realm) > size) || (c.service && strlen(c.service) > size))
      abort();
  }
  challenge_free(&c);
  free(v);
  return 0;
}
