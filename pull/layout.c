/* layout.c: the OCI image layout of a pull (oci-layout, index.json), written with json-c. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "pull.h"

static char *to_text(json_object *o)
{
  char *s = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
  return s;
}

char *layout_index_json(const char *mt, const char *digest, size_t size)
{
  json_object *m = json_object_new_object();
  json_object_object_add(m, "mediaType", json_object_new_string(mt));
  json_object_object_add(m, "digest", json_object_new_string(digest));
  json_object_object_add(m, "size", json_object_new_int64((int64_t)size));
  json_object *ms = json_object_new_array();
  json_object_array_add(ms, m);
  json_object *idx = json_object_new_object();
  json_object_object_add(idx, "schemaVersion", json_object_new_int(2));
  json_object_object_add(idx, "mediaType",
                         json_object_new_string("application/vnd.oci.image.index.v1+json"));
  json_object_object_add(idx, "manifests", ms);
  return to_text(idx);
}

int layout_write(const char *dest, const char *mt, const char *digest, size_t size)
{
  json_object *lo = json_object_new_object();
  json_object_object_add(lo, "imageLayoutVersion", json_object_new_string("1.0.0"));
  cleanup_free char *layout = to_text(lo);
  cleanup_free char *index = layout_index_json(mt, digest, size);
  cleanup_free char *lpath = xasprintf("%s/oci-layout", dest);
  cleanup_free char *ipath = xasprintf("%s/index.json", dest);
  if (write_file(lpath, layout, strlen(layout)) < 0 || write_file(ipath, index, strlen(index)) < 0)
    return -1;
  return 0;
}
