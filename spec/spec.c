/* spec.c: config.json -> struct rrt_spec, every field validated once and named by its JSON path:
 * the entry points, the document's top level, and freeing. The parts are read
 * by process.c, mounts.c, hooks.c and linux.c with json.c's typed readers. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <json-c/json.h>

#include "internal.h"
#include "rootlessrt/util.h"

/* ------------------------------------------------------------------------------------------ */
/* root, version, mounts, hooks                                                                */

static int parse_version(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  if (spec_get_str(doc, "", "ociVersion", F_REQ, &spec->oci_version, err) < 0)
    return -1;
  const char *v = spec->oci_version;
  char *end;
  errno = 0;
  unsigned long major = strtoul(v, &end, 10);
  if (v[0] < '0' || v[0] > '9' || end[0] != '.' || errno != 0)
    return rrt_error_set(err, 0, "ociVersion: \"%s\" is not a SemVer version", v);
  /* 0.x is accepted: the spec's own examples still carry "0.5.0-dev", and 1.x kept every
   * spec_field of those drafts that Linux uses. A 2.x document may mean something else. */
  if (major > 1)
    return rrt_error_set(err, 0,
                         "ociVersion: unsupported major version in \"%s\": this runtime "
                         "implements runtime-spec 1.x (%s)",
                         v, RRT_OCI_VERSION);
  return 0;
}

static int parse_root(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  /* Optional in the schema, but required on Linux (config.md). */
  if (spec_get_typed(doc, "", "root", F_REQ, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (spec_get_str(obj, path, "path", F_REQ | F_NONEMPTY, &spec->root_path, err) < 0 ||
      spec_get_bool(obj, path, "readonly", &spec->root_readonly, err) < 0)
    return -1;
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Entry points                                                                                */

static int parse_document(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  if (parse_version(doc, spec, err) < 0 || parse_root(doc, spec, err) < 0 ||
      spec_get_str(doc, "", "hostname", 0, &spec->hostname, err) < 0 ||
      spec_get_str(doc, "", "domainname", 0, &spec->domainname, err) < 0 ||
      spec_parse_process(doc, spec, err) < 0 || spec_parse_mounts(doc, spec, err) < 0 ||
      spec_parse_hooks(doc, spec, err) < 0 ||
      spec_get_kv(doc, "", "annotations", &spec->annotations, &spec->n_annotations, err) < 0 ||
      spec_parse_linux(doc, spec, err) < 0)
    return -1;
  return 0;
}

static void json_tokener_freep(struct json_tokener **tok)
{
  if (*tok)
    json_tokener_free(*tok);
}

static void json_object_putp(json_object **obj)
{
  if (*obj)
    json_object_put(*obj);
}

static int syntax_error(const char *json, size_t offset, const char *name, const char *what,
                        struct rrt_error *err)
{
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset; i++) {
    col++;
    if (json[i] == '\n') {
      line++;
      col = 1;
    }
  }
  return rrt_error_set(err, 0, "%s: invalid JSON: %s at line %zu, column %zu", name, what, line,
                       col);
}

/* Parses text into a json-c tree; `name` labels syntax errors. */
static int tokenize(const char *json, size_t len, const char *name, json_object **out,
                    struct rrt_error *err)
{
  __attribute__((cleanup(json_tokener_freep))) struct json_tokener *tok = json_tokener_new();
  if (!tok)
    abort();
  if (len > INT_MAX)
    return rrt_error_set(err, 0, "%s: too large (%zu bytes)", name, len);
  *out = json_tokener_parse_ex(tok, json, (int)len);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  if (jerr == json_tokener_continue)
    return syntax_error(json, len, name, "unexpected end of input", err);
  if (jerr != json_tokener_success)
    return syntax_error(json, end, name, json_tokener_error_desc(jerr), err);
  for (size_t i = end; i < len; i++) {
    if (!strchr(" \t\r\n", json[i])) {
      json_object_put(steal_ptr(out));
      return syntax_error(json, i, name, "trailing data after the document", err);
    }
  }
  return 0;
}

/* file == NULL: rrt_spec_parse, messages are bare JSON paths; else they start with file. */
static int parse_named(const char *json, size_t len, const char *file, struct rrt_spec **out,
                       struct rrt_error *err)
{
  __attribute__((cleanup(json_object_putp))) json_object *doc = NULL;
  *out = NULL;
  if (tokenize(json ? json : "", json ? len : 0, file ? file : "config.json", &doc, err) < 0)
    return -1;
  if (!json_object_is_type(doc, json_type_object))
    return rrt_error_set(err, 0, "%s: expected a JSON object at the top level",
                         file ? file : "config.json");
  struct rrt_spec *spec = xzalloc(sizeof *spec);
  if (parse_document(doc, spec, err) < 0) {
    rrt_spec_free(spec);
    return file ? rrt_error_wrap(err, "%s", file) : -1;
  }
  *out = spec;
  return 0;
}

int rrt_spec_parse(const char *json, size_t len, struct rrt_spec **out, struct rrt_error *err)
{
  return parse_named(json, len, NULL, out, err);
}

int rrt_spec_parse_file(const char *json, size_t len, const char *path, struct rrt_spec **out,
                        struct rrt_error *err)
{
  return parse_named(json, len, path, out, err);
}

int rrt_spec_load(const char *path, struct rrt_spec **out, struct rrt_error *err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  *out = NULL;
  if (rrt_read_file(path, &text, &len, err) < 0)
    return -1;
  return parse_named(text, len, path, out, err);
}

const char *rrt_spec_annotation(const struct rrt_spec *spec, const char *key)
{
  for (size_t i = 0; spec && key && i < spec->n_annotations; i++)
    if (spec->annotations[i].key && strcmp(spec->annotations[i].key, key) == 0)
      return spec->annotations[i].value;
  return NULL;
}

const struct rrt_namespace *rrt_spec_namespace(const struct rrt_spec *spec, int type)
{
  for (size_t i = 0; spec && i < spec->lnx.n_namespaces; i++)
    if (spec->lnx.namespaces[i].type == type)
      return &spec->lnx.namespaces[i];
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Freeing: every array is allocated zeroed at full length before it is filled, so a spec     */
/* abandoned half-way through parsing frees like a complete one.                               */

static void strv_clear(struct rrt_strv *v)
{
  rrt_strv_free(v->v);
}

static void kv_free(struct rrt_kv *kv, size_t n)
{
  for (size_t i = 0; kv && i < n; i++) {
    free(kv[i].key);
    free(kv[i].value);
  }
  free(kv);
}

static void process_free(struct rrt_process *p)
{
  if (!p)
    return;
  free(p->user.additional_gids);
  free(p->user.username);
  strv_clear(&p->args);
  free(p->command_line);
  strv_clear(&p->env);
  free(p->cwd);
  if (p->capabilities) {
    strv_clear(&p->capabilities->bounding);
    strv_clear(&p->capabilities->effective);
    strv_clear(&p->capabilities->permitted);
    strv_clear(&p->capabilities->inheritable);
    strv_clear(&p->capabilities->ambient);
    free(p->capabilities);
  }
  for (size_t i = 0; p->rlimits && i < p->n_rlimits; i++)
    free(p->rlimits[i].type);
  free(p->rlimits);
  free(p->apparmor_profile);
  free(p->selinux_label);
  free(p->io_priority.klass);
  free(p->scheduler.policy);
  strv_clear(&p->scheduler.flags);
  free(p);
}

static void seccomp_free(struct rrt_seccomp *s)
{
  if (!s)
    return;
  free(s->default_action);
  strv_clear(&s->architectures);
  strv_clear(&s->flags);
  free(s->listener_path);
  free(s->listener_metadata);
  for (size_t i = 0; s->syscalls && i < s->n_syscalls; i++) {
    struct rrt_seccomp_syscall *sc = &s->syscalls[i];
    strv_clear(&sc->names);
    free(sc->action);
    for (size_t j = 0; sc->args && j < sc->n_args; j++)
      free(sc->args[j].op);
    free(sc->args);
  }
  free(s->syscalls);
  free(s->canonical_json);
  free(s);
}

static void linux_free(struct rrt_linux *l)
{
  for (size_t i = 0; l->namespaces && i < l->n_namespaces; i++)
    free(l->namespaces[i].path);
  free(l->namespaces);
  free(l->uid_mappings.v);
  free(l->gid_mappings.v);
  for (size_t i = 0; l->devices && i < l->n_devices; i++)
    free(l->devices[i].path);
  free(l->devices);
  kv_free(l->sysctl, l->n_sysctl);
  free(l->resources_json);
  free(l->cgroups_path);
  strv_clear(&l->masked_paths);
  strv_clear(&l->readonly_paths);
  free(l->rootfs_propagation);
  free(l->mount_label);
  seccomp_free(l->seccomp);
  for (size_t i = 0; l->time_offsets && i < l->n_time_offsets; i++)
    free(l->time_offsets[i].clock);
  free(l->time_offsets);
  if (l->personality) {
    free(l->personality->domain);
    strv_clear(&l->personality->flags);
    free(l->personality);
  }
}

void rrt_spec_free(struct rrt_spec *spec)
{
  if (!spec)
    return;
  free(spec->oci_version);
  free(spec->root_path);
  free(spec->hostname);
  free(spec->domainname);
  process_free(spec->process);
  for (size_t i = 0; spec->mounts && i < spec->n_mounts; i++) {
    struct rrt_mount *m = &spec->mounts[i];
    free(m->destination);
    free(m->source);
    free(m->type);
    strv_clear(&m->options);
    free(m->uid_mappings.v);
    free(m->gid_mappings.v);
  }
  free(spec->mounts);
  for (int k = 0; k < RRT_HOOK__COUNT; k++) {
    for (size_t i = 0; spec->hooks[k].v && i < spec->hooks[k].n; i++) {
      free(spec->hooks[k].v[i].path);
      strv_clear(&spec->hooks[k].v[i].args);
      strv_clear(&spec->hooks[k].v[i].env);
    }
    free(spec->hooks[k].v);
  }
  kv_free(spec->annotations, spec->n_annotations);
  linux_free(&spec->lnx);
  free(spec);
}
