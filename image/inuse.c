/* inuse.c: what keeps an image or a layer in the store: an image record that names the layer, or
 * a desktop container's bundle (its image id, its config's lowerdir). */
#include <dirent.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "rootlessrt/error.h"
#include "rootlessrt/util.h"

/* The image id and the layer directories (lowerdir) of the desktop container whose bundle is
 * DIR/config.json: true when it uses the layer STORE/layers/sha256/HEX (hex non-NULL) or the
 * image id (id non-NULL). */
static bool bundle_uses(const char *dir, const char *store, const char *hex, const char *id)
{
  if (id) {
    cleanup_free char *path = xasprintf("%s/image", dir);
    cleanup_free char *text = NULL;
    struct rrt_error e = RRT_ERROR_INIT;
    bool same = rrt_read_file(path, &text, NULL, &e) == 0 && strncmp(text, id, 64) == 0;
    rrt_error_clear(&e);
    return same;
  }
  cleanup_free char *cfg = xasprintf("%s/config.json", dir);
  cleanup_free char *text = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_read_file(cfg, &text, NULL, &e) < 0) {
    rrt_error_clear(&e);
    return false;
  }
  cleanup_free char *want = xasprintf("%s/layers/sha256/%s", store, hex);
  json_object *doc = json_tokener_parse(text), *mounts = NULL;
  bool used = false;
  json_object_object_get_ex(doc, "mounts", &mounts);
  for (size_t i = 0; !used && json_object_is_type(mounts, json_type_array) &&
                     i < json_object_array_length(mounts);
       i++) {
    json_object *m = json_object_array_get_idx(mounts, i), *opts = NULL;
    json_object_object_get_ex(m, "options", &opts);
    for (size_t k = 0;
         !used && json_object_is_type(opts, json_type_array) && k < json_object_array_length(opts);
         k++) {
      const char *o = json_object_get_string(json_object_array_get_idx(opts, k));
      if (!o || strncmp(o, "lowerdir=", 9) != 0)
        continue;
      cleanup_free char *l = xstrdup(o + 9);
      for (char *save = NULL, *p = strtok_r(l, ":", &save); p && !used;
           p = strtok_r(NULL, ":", &save))
        used = strcmp(p, want) == 0;
    }
  }
  json_object_put(doc);
  return used;
}

char *rrt_store_user_container(const char *store, const char *root, const char *hex, const char *id)
{
  if (!root)
    return NULL;
  cleanup_free char *runs = xasprintf("%s/.run", root);
  DIR *d = opendir(runs);
  if (!d)
    return NULL;
  char *who = NULL;
  struct dirent *e;
  while (!who && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    cleanup_free char *dir = xasprintf("%s/%s", runs, e->d_name);
    if (bundle_uses(dir, store, hex, id))
      who = xstrdup(e->d_name);
  }
  closedir(d);
  return who;
}

char *rrt_store_user_image(json_object *doc, const char *hex)
{
  json_object *arr = rrt_names_images(doc);
  for (size_t i = 0; doc && i < json_object_array_length(arr); i++) {
    json_object *e = json_object_array_get_idx(arr, i), *layers = rrt_names_list(e, "layers");
    for (size_t k = 0; k < json_object_array_length(layers); k++)
      if (strcmp(json_object_get_string(json_object_array_get_idx(layers, k)), hex) == 0) {
        json_object *names = rrt_names_list(e, "names");
        const char *n = json_object_array_length(names)
                            ? json_object_get_string(json_object_array_get_idx(names, 0))
                            : NULL;
        return n ? rrt_names_shown(n) : xasprintf("%.12s", rrt_names_str(e, "id"));
      }
  }
  return NULL;
}
