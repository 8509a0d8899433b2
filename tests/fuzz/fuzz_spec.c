/* fuzz_spec.c: libFuzzer harness for the config.json parser (rrt_spec_parse + rrt_spec_free).
 * The input is parsed as a whole document, and, when it is a JSON object, also merged over the
 * default config (rrt_spec_default_json, root and rootless by the input's length): a mutated
 * fragment ("linux": {"resources": ...}) then reaches its own parser instead of stopping at a
 * missing ociVersion or root. Seeds: real config.json files (tests/fuzz/corpus/spec/); the
 * schema's names are in fuzz_spec.dict. */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/spec.h"
#include "rootlessrt/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_one(const char *json, size_t len)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_spec *spec = NULL;
  /* Both outcomes are interesting: success must yield a spec, failure a message and no spec;
   * the sanitizers catch leaks and bad accesses on either path. */
  int r = rrt_spec_parse(json, len, &spec, &err);
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
}

/* Every member of OVER into BASE: objects merge, anything else replaces. */
static void merge(struct json_object *base, struct json_object *over, int depth)
{
  json_object_object_foreach(over, key, val)
  {
    struct json_object *old = NULL;
    if (depth < 8 && json_object_object_get_ex(base, key, &old) &&
        json_object_is_type(old, json_type_object) && json_object_is_type(val, json_type_object))
      merge(old, val, depth + 1);
    else
      json_object_object_add(base, key, json_object_get(val));
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  parse_one((const char *)data, size);

  cleanup_free char *text = xstrndup((const char *)data, size);
  struct json_object *over = json_tokener_parse(text);
  if (!over)
    return 0;
  if (json_object_is_type(over, json_type_object)) {
    cleanup_free char *def = rrt_spec_default_json(size % 2 == 1);
    struct json_object *base = json_tokener_parse(def);
    if (!base)
      __builtin_trap(); /* the default config is always JSON */
    merge(base, over, 0);
    size_t len = 0;
    const char *s = json_object_to_json_string_length(base, JSON_C_TO_STRING_PLAIN, &len);
    parse_one(s, len);
    json_object_put(base);
  }
  json_object_put(over);
  return 0;
}
