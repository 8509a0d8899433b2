/* hooks.c: config.json's hooks, each kind in order. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "internal.h"
#include "rootlessrt/util.h"

static int parse_hook(json_object *e, const char *ip, struct rrt_hook *h, struct rrt_error *err)
{
  int64_t timeout = 0;
  bool has_timeout = false;
  if (spec_expect(e, json_type_object, ip, "object", err) < 0 ||
      spec_get_str(e, ip, "path", F_REQ | F_ABS, &h->path, err) < 0 ||
      spec_get_strv(e, ip, "args", 0, &h->args, err) < 0 ||
      spec_get_strv(e, ip, "env", 0, &h->env, err) < 0 ||
      spec_get_int(e, ip, "timeout", 0, INT64_MIN, INT_MAX, &has_timeout, &timeout, err) < 0)
    return -1;
  if (has_timeout && timeout <= 0)
    return rrt_error_set(err, 0, "%s.timeout: must be greater than zero", ip);
  h->timeout = (int)timeout;
  return 0;
}

int spec_parse_hooks(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  if (spec_get_typed(doc, "", "hooks", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  for (int k = 0; obj && k < RRT_HOOK__COUNT; k++) {
    json_object *arr;
    cleanup_free char *kpath = NULL;
    struct rrt_hook_list *list = &spec->hooks[k];
    if (spec_get_typed(obj, path, spec_hook_names[k], 0, json_type_array, &arr, &kpath, err) < 0)
      return -1;
    if (!arr)
      continue;
    list->n = json_object_array_length(arr);
    list->v = xcalloc(list->n, sizeof *list->v);
    for (size_t i = 0; i < list->n; i++) {
      cleanup_free char *ip = spec_idx_path(kpath, i);
      if (parse_hook(json_object_array_get_idx(arr, i), ip, &list->v[i], err) < 0)
        return -1;
    }
  }
  return 0;
}
