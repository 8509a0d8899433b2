/* internal.h: what the files of spec/ share: the typed JSON readers (json.c), each naming the
 * JSON path of what it reads in its errors, and the parsers of the document's parts. Nothing
 * outside spec/ includes it: include/rootlessrt/spec.h is the folder's interface. */
#ifndef ROOTLESSRT_SPEC_INTERNAL_H
#define ROOTLESSRT_SPEC_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "rootlessrt/spec.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080 /* headers older than Linux 5.6 */
#endif

/* Flags of the readers: the member is required, an absolute path, not empty. */
enum { F_REQ = 1, F_ABS = 2, F_NONEMPTY = 4 };

/* Names of the hook kinds as config.json spells them (names.c). */
extern const char *const spec_hook_names[RRT_HOOK__COUNT];

/* json.c: paths ("process.args[0]") and typed members; a JSON null reads as absent. */
bool spec_in_list(const char *s, const char *const *list);
char *spec_key_path(const char *parent, const char *key);
char *spec_idx_path(const char *parent, size_t i);
json_object *spec_member(json_object *obj, const char *key);
int spec_expect(json_object *v, json_type type, const char *path, const char *what,
                struct rrt_error *err);
int spec_want_uint(json_object *v, const char *path, uint64_t max, uint64_t *out,
                   struct rrt_error *err);
int spec_want_int(json_object *v, const char *path, int64_t min, int64_t max, int64_t *out,
                  struct rrt_error *err);
int spec_field(json_object *obj, const char *parent, const char *key, unsigned flags,
               json_object **v, char **path, struct rrt_error *err);
int spec_get_str(json_object *obj, const char *parent, const char *key, unsigned flags, char **out,
                 struct rrt_error *err);
int spec_get_strv(json_object *obj, const char *parent, const char *key, unsigned flags,
                  struct rrt_strv *out, struct rrt_error *err);
int spec_get_bool(json_object *obj, const char *parent, const char *key, bool *out,
                  struct rrt_error *err);
int spec_get_uint(json_object *obj, const char *parent, const char *key, unsigned flags,
                  uint64_t max, bool *has, uint64_t *out, struct rrt_error *err);
int spec_get_u32(json_object *obj, const char *parent, const char *key, unsigned flags, bool *has,
                 uint32_t *out, struct rrt_error *err);
int spec_get_int(json_object *obj, const char *parent, const char *key, unsigned flags, int64_t min,
                 int64_t max, bool *has, int64_t *out, struct rrt_error *err);
int spec_get_i32(json_object *obj, const char *parent, const char *key, int min, int max, bool *has,
                 int *out, struct rrt_error *err);
int spec_get_typed(json_object *obj, const char *parent, const char *key, unsigned flags,
                   json_type type, json_object **out, char **path, struct rrt_error *err);
int spec_want_enum(const char *s, const char *const *names, const char *path, const char *what,
                   struct rrt_error *err);
int spec_want_enum_strv(const struct rrt_strv *v, const char *const *names, const char *path,
                        const char *what, struct rrt_error *err);
int spec_get_kv(json_object *obj, const char *parent, const char *key, struct rrt_kv **out,
                size_t *n_out, struct rrt_error *err);
int spec_parse_id_mappings(json_object *obj, const char *parent, const char *key,
                           struct rrt_id_mappings *out, struct rrt_error *err);

/* The document, part by part (process.c, mounts.c, hooks.c, linux.c). */
int spec_parse_process(json_object *doc, struct rrt_spec *spec, struct rrt_error *err);
int spec_parse_mounts(json_object *doc, struct rrt_spec *spec, struct rrt_error *err);
int spec_parse_hooks(json_object *doc, struct rrt_spec *spec, struct rrt_error *err);
int spec_parse_linux(json_object *doc, struct rrt_spec *spec, struct rrt_error *err);

#endif
