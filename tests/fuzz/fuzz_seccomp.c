/* fuzz_seccomp.c: libFuzzer harness: config.json (or a bare linux.seccomp object) -> BPF. */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Compiles what the parser accepted; never caches, never loads. */
static void compile_spec(const char *json, size_t len)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *spec = NULL;
  if (rrt_spec_parse(json, len, &spec, &err) < 0) {
    rrt_error_clear(&err);
    return;
  }
  if (spec->lnx.seccomp) {
    struct rrt_seccomp_filter *f = NULL;
    int r = rrt_seccomp_compile(spec->lnx.seccomp, NULL, &f, &err);
    /* Success hands out a filter, failure explains itself and hands out nothing. */
    if ((r == 0) != (f != NULL) || (r < 0 && !err.msg))
      abort();
    rrt_seccomp_filter_free(f);
    rrt_error_clear(&err);
  }
  rrt_spec_free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  /* The whole document, as a runtime would get it. */
  compile_spec((const char *)data, size);

  /* Mutating a full config.json rarely reaches the seccomp rules, so a JSON
   * object on its own is also tried as linux.seccomp of a minimal config. */
  cleanup_free char *text = xstrndup((const char *)data, size);
  struct json_object *sc = json_tokener_parse(text);
  if (!sc)
    return 0;
  if (!json_object_is_type(sc, json_type_object)) {
    json_object_put(sc);
    return 0;
  }
  struct json_object *doc = json_object_new_object();
  struct json_object *root = json_object_new_object();
  struct json_object *lnx = json_object_new_object();
  json_object_object_add(root, "path", json_object_new_string("rootfs"));
  json_object_object_add(doc, "ociVersion", json_object_new_string(RRT_OCI_VERSION));
  json_object_object_add(doc, "root", root);
  json_object_object_add(lnx, "seccomp", sc);
  json_object_object_add(doc, "linux", lnx);
  size_t len = 0;
  const char *s = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &len);
  compile_spec(s, len);
  json_object_put(doc);
  return 0;
}
