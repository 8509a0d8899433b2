/* json.c: typed access to config.json's members, each error naming the JSON path. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "internal.h"
#include "rootlessrt/util.h"

/* ------------------------------------------------------------------------------------------ */
/* Typed access with the JSON path in every message                                           */

char *spec_key_path(const char *parent, const char *key)
{
  return parent[0] ? xasprintf("%s.%s", parent, key) : xstrdup(key);
}

char *spec_idx_path(const char *parent, size_t i)
{
  return xasprintf("%s[%zu]", parent, i);
}

/* A JSON null reads as "not set", the way the Go runtimes (and the tools that write
 * config.json with them) treat it. */
json_object *spec_member(json_object *obj, const char *key)
{
  json_object *v = NULL;
  if (!json_object_object_get_ex(obj, key, &v))
    return NULL;
  return v;
}

int spec_expect(json_object *v, json_type type, const char *path, const char *what,
                struct rrt_error *err)
{
  if (json_object_is_type(v, type))
    return 0;
  return rrt_error_set(err, 0, "%s: expected %s", path, what);
}

static int want_str(json_object *v, const char *path, unsigned flags, char **out,
                    struct rrt_error *err)
{
  if (spec_expect(v, json_type_string, path, "string", err) < 0)
    return -1;
  const char *s = json_object_get_string(v);
  /* "\u0000" would silently cut a path short where C reads it. */
  if ((size_t)json_object_get_string_len(v) != strlen(s))
    return rrt_error_set(err, 0, "%s: must not contain a NUL character", path);
  if ((flags & F_NONEMPTY) && s[0] == '\0')
    return rrt_error_set(err, 0, "%s: must not be empty", path);
  if ((flags & F_ABS) && s[0] != '/')
    return rrt_error_set(err, 0, "%s: must be absolute", path);
  free(*out);
  *out = xstrdup(s);
  return 0;
}

/* How a message shows an integer: json-c saturates one past 64 bits (99999999999999999999999
 * reads as 18446744073709551615), which must not be shown as if it had been written. */
static const char *shown_int(json_object *v)
{
  if (json_object_get_uint64(v) == UINT64_MAX || json_object_get_int64(v) == INT64_MIN)
    return "a number outside the 64-bit range";
  return json_object_to_json_string(v);
}

int spec_want_uint(json_object *v, const char *path, uint64_t max, uint64_t *out,
                   struct rrt_error *err)
{
  if (spec_expect(v, json_type_int, path, "integer", err) < 0)
    return -1;
  /* json-c keeps values above INT64_MAX as uint64; get_int64 clamps those to INT64_MAX. */
  if (json_object_get_int64(v) < 0 || json_object_get_uint64(v) > max)
    return rrt_error_set(err, 0, "%s: expected integer in 0..%" PRIu64 ", got %s", path, max,
                         shown_int(v));
  *out = json_object_get_uint64(v);
  return 0;
}

int spec_want_int(json_object *v, const char *path, int64_t min, int64_t max, int64_t *out,
                  struct rrt_error *err)
{
  if (spec_expect(v, json_type_int, path, "integer", err) < 0)
    return -1;
  int64_t i = json_object_get_int64(v);
  bool huge = i == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX;
  if (huge || i < min || i > max)
    return rrt_error_set(err, 0, "%s: expected integer in %" PRId64 "..%" PRId64 ", got %s", path,
                         min, max, shown_int(v));
  *out = i;
  return 0;
}

static int want_strv(json_object *v, const char *path, unsigned flags, struct rrt_strv *out,
                     struct rrt_error *err)
{
  if (!json_object_is_type(v, json_type_array))
    return rrt_error_set(err, 0, "%s: expected array of strings", path);
  size_t n = json_object_array_length(v);
  for (size_t i = 0; i < n; i++)
    if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
      return rrt_error_set(err, 0, "%s: expected array of strings", path);
  if ((flags & F_NONEMPTY) && n == 0)
    return rrt_error_set(err, 0, "%s: must not be empty", path);
  rrt_strv_free(out->v);
  out->v = xcalloc(n + 1, sizeof(char *));
  out->n = n;
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *ip = spec_idx_path(path, i);
    if (want_str(json_object_array_get_idx(v, i), ip, flags & F_ABS, &out->v[i], err) < 0)
      return -1;
  }
  return 0;
}

/* Looks key up; 1 with *v and *path set when present, 0 when absent and optional. */
int spec_field(json_object *obj, const char *parent, const char *key, unsigned flags,
               json_object **v, char **path, struct rrt_error *err)
{
  *v = spec_member(obj, key);
  *path = spec_key_path(parent, key);
  if (*v)
    return 1;
  if (flags & F_REQ)
    return rrt_error_set(err, 0, "%s: required", *path);
  return 0;
}

int spec_get_str(json_object *obj, const char *parent, const char *key, unsigned flags, char **out,
                 struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  int r = spec_field(obj, parent, key, flags, &v, &p, err);
  return r <= 0 ? r : want_str(v, p, flags, out, err);
}

int spec_get_strv(json_object *obj, const char *parent, const char *key, unsigned flags,
                  struct rrt_strv *out, struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  int r = spec_field(obj, parent, key, flags, &v, &p, err);
  return r <= 0 ? r : want_strv(v, p, flags, out, err);
}

int spec_get_bool(json_object *obj, const char *parent, const char *key, bool *out,
                  struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  if (spec_field(obj, parent, key, 0, &v, &p, err) == 0)
    return 0;
  if (spec_expect(v, json_type_boolean, p, "boolean", err) < 0)
    return -1;
  *out = json_object_get_boolean(v);
  return 0;
}

int spec_get_uint(json_object *obj, const char *parent, const char *key, unsigned flags,
                  uint64_t max, bool *has, uint64_t *out, struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  int r = spec_field(obj, parent, key, flags, &v, &p, err);
  if (r <= 0)
    return r;
  if (spec_want_uint(v, p, max, out, err) < 0)
    return -1;
  if (has)
    *has = true;
  return 0;
}

int spec_get_u32(json_object *obj, const char *parent, const char *key, unsigned flags, bool *has,
                 uint32_t *out, struct rrt_error *err)
{
  uint64_t u = 0;
  bool present = false;
  if (spec_get_uint(obj, parent, key, flags, UINT32_MAX, &present, &u, err) < 0)
    return -1;
  if (present) {
    *out = (uint32_t)u;
    if (has)
      *has = true;
  }
  return 0;
}

int spec_get_int(json_object *obj, const char *parent, const char *key, unsigned flags, int64_t min,
                 int64_t max, bool *has, int64_t *out, struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  int r = spec_field(obj, parent, key, flags, &v, &p, err);
  if (r <= 0)
    return r;
  if (spec_want_int(v, p, min, max, out, err) < 0)
    return -1;
  if (has)
    *has = true;
  return 0;
}

int spec_get_i32(json_object *obj, const char *parent, const char *key, int min, int max, bool *has,
                 int *out, struct rrt_error *err)
{
  int64_t i = 0;
  bool present = false;
  if (spec_get_int(obj, parent, key, 0, min, max, &present, &i, err) < 0)
    return -1;
  if (present) {
    *out = (int)i;
    if (has)
      *has = true;
  }
  return 0;
}

/* Object- or array-valued spec_member: *out stays NULL when absent; *path is always set. */
int spec_get_typed(json_object *obj, const char *parent, const char *key, unsigned flags,
                   json_type type, json_object **out, char **path, struct rrt_error *err)
{
  json_object *v;
  *out = NULL;
  int r = spec_field(obj, parent, key, flags, &v, path, err);
  if (r <= 0)
    return r;
  if (spec_expect(v, type, *path, type == json_type_object ? "object" : "array", err) < 0)
    return -1;
  *out = v;
  return 0;
}

int spec_want_enum(const char *s, const char *const *names, const char *path, const char *what,
                   struct rrt_error *err)
{
  if (spec_in_list(s, names))
    return 0;
  return rrt_error_set(err, 0, "%s: unknown %s \"%s\"", path, what, s);
}

int spec_want_enum_strv(const struct rrt_strv *v, const char *const *names, const char *path,
                        const char *what, struct rrt_error *err)
{
  for (size_t i = 0; i < v->n; i++) {
    if (!spec_in_list(v->v[i], names)) {
      cleanup_free char *ip = spec_idx_path(path, i);
      return spec_want_enum(v->v[i], names, ip, what, err);
    }
  }
  return 0;
}

/* A JSON object of strings as key/value pairs (annotations, sysctl). */
int spec_get_kv(json_object *obj, const char *parent, const char *key, struct rrt_kv **out,
                size_t *n_out, struct rrt_error *err)
{
  json_object *map;
  cleanup_free char *path = NULL;
  if (spec_get_typed(obj, parent, key, 0, json_type_object, &map, &path, err) < 0)
    return -1;
  if (!map)
    return 0;
  *out = xcalloc((size_t)json_object_object_length(map), sizeof **out);
  *n_out = 0;
  json_object_object_foreach(map, k, val)
  {
    struct rrt_kv *kv = &(*out)[(*n_out)++];
    kv->key = xstrdup(k);
    cleanup_free char *kp = spec_key_path(path, k);
    if (k[0] == '\0')
      return rrt_error_set(err, 0, "%s: keys must not be empty", path);
    if (want_str(val, kp, 0, &kv->value, err) < 0)
      return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
int spec_parse_id_mappings(json_object *obj, const char *parent, const char *key,
                           struct rrt_id_mappings *out, struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *path = NULL;
  if (spec_get_typed(obj, parent, key, 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  out->n = json_object_array_length(arr);
  out->v = xcalloc(out->n, sizeof *out->v);
  for (size_t i = 0; i < out->n; i++) {
    cleanup_free char *ip = spec_idx_path(path, i);
    json_object *e = json_object_array_get_idx(arr, i);
    struct rrt_id_mapping *m = &out->v[i];
    if (spec_expect(e, json_type_object, ip, "object", err) < 0 ||
        spec_get_u32(e, ip, "containerID", F_REQ, NULL, &m->container_id, err) < 0 ||
        spec_get_u32(e, ip, "hostID", F_REQ, NULL, &m->host_id, err) < 0 ||
        spec_get_u32(e, ip, "size", F_REQ, NULL, &m->size, err) < 0)
      return -1;
    if (m->size == 0)
      return rrt_error_set(err, 0, "%s.size: must be greater than zero", ip);
  }
  return 0;
}
