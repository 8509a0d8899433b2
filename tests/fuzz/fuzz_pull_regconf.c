/* fuzz_pull_regconf.c: registries.conf (pull/regconf.c, a subset of TOML) and the resolution of
 * references through it: the input's first line is the reference, the rest the file. Every
 * endpoint that comes out is a host and a repository of the distribution spec's grammar. */
#include <ctype.h>

#include "pull_fuzz.h"

static void endpoint_ok(const struct endpoint *e)
{
  if (!*e->host || !*e->repo)
    abort();
  for (const char *p = e->host; *p; p++)
    if (!isalnum((unsigned char)*p) && !strchr(".-:[]", *p))
      abort();
  for (const char *p = e->repo; *p; p++)
    if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && !strchr("._-/", *p))
      abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *parts[2];
  fuzz_split(data, size, parts, 1);
  struct regconf *c = regconf_parse(parts[1], "registries.conf");
  static const char *const fixed[] = {"busybox", "example.com/ns/img:1",
                                      "localhost:5000/a@sha256:"
                                      "0123456789abcdef0123456789"
                                      "abcdef0123456789abcdef0123"
                                      "456789abcdef"};
  for (size_t i = 0; i < 4; i++) {
    const char *ref = i < 3 ? fixed[i] : parts[0];
    for (int short_ok = 0; short_ok < 2; short_ok++) {
      struct resolved r;
      if (resolve_ref_with(c, ref, short_ok, false, &r) < 0) {
        fuzz_check_error();
      } else {
        if (r.n == 0 || (!r.tag && !r.digest))
          abort();
        for (size_t k = 0; k < r.n; k++)
          endpoint_ok(&r.eps[k]);
      }
      resolved_free(&r);
    }
  }
  regconf_free(c);
  free(parts[0]);
  free(parts[1]);
  return 0;
}
