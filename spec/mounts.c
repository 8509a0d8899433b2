/* mounts.c: config.json's mounts. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "internal.h"
#include "rootlessrt/util.h"

static int parse_mount(json_object *e, const char *ip, struct rrt_mount *m, struct rrt_error *err)
{
  if (spec_expect(e, json_type_object, ip, "object", err) < 0 ||
      spec_get_str(e, ip, "destination", F_REQ | F_NONEMPTY, &m->destination, err) < 0 ||
      spec_get_str(e, ip, "source", 0, &m->source, err) < 0 ||
      spec_get_str(e, ip, "type", 0, &m->type, err) < 0 ||
      spec_get_strv(e, ip, "options", 0, &m->options, err) < 0 ||
      spec_parse_id_mappings(e, ip, "uidMappings", &m->uid_mappings, err) < 0 ||
      spec_parse_id_mappings(e, ip, "gidMappings", &m->gid_mappings, err) < 0)
    return -1;
  if (!m->uid_mappings.v != !m->gid_mappings.v)
    return rrt_error_set(err, 0, "%s: uidMappings and gidMappings must be given together", ip);
  /* config.md lets old configs use a relative destination, meaning relative to "/";
   * normalise here so every consumer sees an absolute path. */
  if (m->destination[0] != '/') {
    char *abs = xasprintf("/%s", m->destination);
    free(m->destination);
    m->destination = abs;
  }
  return 0;
}

int spec_parse_mounts(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *path = NULL;
  if (spec_get_typed(doc, "", "mounts", 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  spec->n_mounts = json_object_array_length(arr);
  spec->mounts = xcalloc(spec->n_mounts, sizeof *spec->mounts);
  for (size_t i = 0; i < spec->n_mounts; i++) {
    cleanup_free char *ip = spec_idx_path(path, i);
    if (parse_mount(json_object_array_get_idx(arr, i), ip, &spec->mounts[i], err) < 0)
      return -1;
  }
  return 0;
}
