/* fuzz_image_name.c: libFuzzer harness for image/name.c (rrt_image_name_parse, which tells an
 * image name from a container id or a root directory). An accepted name must match distribution's
 * reference grammar (written here again as POSIX regular expressions) with docker's split of the
 * domain, and the other way round (names with an IPv6 host in brackets aside: name.c takes none);
 * rrt_image_name_like must be "accepted and qualified". Seeds: real image references
 * (tests/fuzz/corpus/image_name/). */
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../image/internal.h"
#include "rootlessrt/image.h"
#include "rootlessrt/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ALNUM "[a-z0-9]+"
#define SEP "([._]|__|-+)"
#define PATH_COMP ALNUM "(" SEP ALNUM ")*"
#define DOMAIN_COMP "([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
#define DOMAIN DOMAIN_COMP "(\\." DOMAIN_COMP ")*(:[0-9]+)?"
#define TAG "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"
#define DIGEST "[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
#define REST PATH_COMP "(/" PATH_COMP ")*(:" TAG ")?(@" DIGEST ")?$"

/* docker's split (distribution's splitDockerDomain): the first of several components is the
 * domain when it has a '.' or a ':', is localhost, or is not all lower case. */
static regex_t with_domain, without_domain;

static bool first_is_domain(const char *name)
{
  const char *slash = strchr(name, '/');
  if (!slash)
    return false;
  size_t n = (size_t)(slash - name);
  bool upper = false;
  for (size_t i = 0; i < n; i++)
    upper = upper || (name[i] >= 'A' && name[i] <= 'Z');
  return memchr(name, '.', n) || memchr(name, ':', n) ||
         (n == 9 && strncmp(name, "localhost", 9) == 0) || upper;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static bool ready;
  if (!ready) {
    if (regcomp(&with_domain, "^" DOMAIN "/" REST, REG_EXTENDED | REG_NOSUB) != 0 ||
        regcomp(&without_domain, "^" REST, REG_EXTENDED | REG_NOSUB) != 0)
      __builtin_trap();
    ready = true;
  }
  if (size > 8192)
    return 0;
  cleanup_free char *name = xstrndup((const char *)data, size);
  if (strlen(name) != size)
    return 0; /* a NUL inside: no command line holds one */
  bool qualified = false;
  bool accepted = rrt_image_name_parse(name, &qualified);
  if (rrt_image_name_like(name) != (accepted && qualified))
    __builtin_trap();
  if (!accepted && qualified)
    __builtin_trap();
  if (size == 0 || size > 4096 || strchr(name, '['))
    return 0;
  bool grammar =
      regexec(first_is_domain(name) ? &with_domain : &without_domain, name, 0, NULL, 0) == 0;
  if (accepted != grammar)
    __builtin_trap();
  return 0;
}
