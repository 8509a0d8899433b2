/* fuzz_pull_platform.c: a manifest or index from a registry (pull/manifest.c): its media type
 * from the Content-Type (the input's first line) and the document (the rest), the platform's
 * manifest of an index, the config and layers of a manifest. */
#include "../../pull/manifest.h"
#include "pull_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *parts[2];
  fuzz_split(data, size, parts, 1);
  json_object *doc = json_tokener_parse(parts[1]);
  if (doc && json_object_is_type(doc, json_type_object)) {
    const char *mt = manifest_media_type(*parts[0] ? parts[0] : NULL, doc, "manifest m");
    if (!mt)
      fuzz_check_error();
    else if (!mt_is_manifest(mt) && !mt_is_index(mt))
      abort(); /* only a known type comes out */
    static const char *const plats[][3] = {
        {"linux", "amd64", ""}, {"linux", "arm", "v7"}, {"linux", "arm64", "v8"}};
    for (size_t i = 0; i < 3; i++) {
      json_object *m = pick_platform(doc, plats[i][0], plats[i][1], plats[i][2], "idx");
      if (!m)
        fuzz_check_error();
      else if (!valid_digest(str_of(m, "digest")))
        abort();
    }
    json_object *cfg, *layers;
    if (check_image_manifest(doc, "manifest m", &cfg, &layers) < 0) {
      fuzz_check_error();
    } else {
      if (!valid_digest(str_of(cfg, "digest")))
        abort();
      for (size_t i = 0; i < json_object_array_length(layers); i++)
        if (!valid_digest(str_of(json_object_array_get_idx(layers, i), "digest")))
          abort();
    }
  }
  json_object_put(doc);
  free(parts[0]);
  free(parts[1]);
  return 0;
}
