/* fuzz_spec.c: libFuzzer harness for the config.json parser (rrt_spec_parse + rrt_spec_free). */
#include <stddef.h>
#include <stdint.h>

#include "rootlessrt/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *spec = NULL;
  /* Both outcomes are interesting: success must yield a spec, failure a message and no spec;
   * the sanitizers catch leaks and bad accesses on either path. */
  int r = rrt_spec_parse((const char *)data, size, &spec, &err);
  if ((r == 0) != (spec != NULL) || (r < 0 && !err.msg))
    __builtin_trap();
  if (spec) {
    /* Exercise the lookup helpers on whatever was parsed. */
    (void)rrt_spec_annotation(spec, "org.opencontainers.image.os");
    for (size_t i = 0; i < spec->lnx.n_namespaces; i++)
      if (!rrt_namespace_proc_name(spec->lnx.namespaces[i].type) ||
          rrt_spec_namespace(spec, spec->lnx.namespaces[i].type) == NULL)
        __builtin_trap();
  }
  rrt_spec_free(spec);
  rrt_error_clear(&err);
  return 0;
}
