/* manifest.c: which blobs make an image and what its config says: an OCI layout's index.json,
 * manifest and config, or a docker-archive's manifest.json and config, every blob's digest
 * verified (docker-archive layers against the config's diff_ids). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <json-c/json.h>

#include "digest.h"
#include "manifest.h"
#include "rootlessrt/escape.h"
#include "rootlessrt/util.h"

#define REF_NAME "org.opencontainers.image.ref.name"
#define INDEX_DEPTH 4 /* index.json -> index -> index -> index -> manifest */

/* The image config is read here (rrt_plan_*), and freed with the image. */
void rrt_image_config_free(struct rrt_image_config *c)
{
  rrt_strv_free(c->entrypoint);
  rrt_strv_free(c->cmd);
  rrt_strv_free(c->env);
  rrt_strv_free(c->exposed_ports);
  free(c->workdir);
  free(c->user);
  free(c->stop_signal);
  free(c->os);
  free(c->architecture);
  free(c->variant);
  *c = (struct rrt_image_config){0};
}

void rrt_image_free(struct rrt_image *img)
{
  rrt_strv_free(img->lowers);
  rrt_image_config_free(&img->config);
  img->lowers = NULL;
}

void rrt_plan_free(struct rrt_plan *p)
{
  for (size_t i = 0; i < p->n; i++)
    free(p->layers[i].path);
  free(p->layers);
  rrt_image_config_free(&p->config);
  free(p->manifest_raw);
  free(p->config_raw);
  free(p->created);
  rrt_strv_free(p->names);
  *p = (struct rrt_plan){0};
}

static json_object *parse(const char *text, const char *what, struct rrt_error *err)
{
  json_object *o = json_tokener_parse(text);
  if (!o ||
      (!json_object_is_type(o, json_type_object) && !json_object_is_type(o, json_type_array))) {
    json_object_put(o);
    rrt_error_msgf(err, EINVAL, "%s: not valid JSON", what);
    return NULL;
  }
  return o;
}

static const char *str_of(json_object *o, const char *key)
{
  json_object *v;
  if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

/* blobs/sha256/HEX, its digest checked, parsed; its bytes kept in *raw when raw is not NULL. */
static json_object *read_blob(struct rrt_src *s, const char *digest, const char *what,
                              char hex_out[65], char **raw, size_t *raw_len, struct rrt_error *err)
{
  const char *hex;
  if (rrt_digest_parse(digest, &hex, err) < 0) {
    rrt_error_wrap(err, "%s", what);
    return NULL;
  }
  cleanup_free char *name = xasprintf("blobs/sha256/%s", hex);
  cleanup_free char *data = NULL;
  size_t len;
  if (rrt_src_read(s, name, &data, &len, err) < 0)
    return NULL;
  char got[65];
  rrt_digest_buf(data, len, got);
  if (strcmp(got, hex) != 0) {
    rrt_error_msgf(err, EBADMSG, "%s %s: digest mismatch: the content is sha256:%s", what, digest,
                   got);
    return NULL;
  }
  if (hex_out)
    memcpy(hex_out, hex, 65);
  json_object *o = parse(data, what, err);
  if (o && raw) {
    free(*raw);
    *raw = steal_ptr(&data);
    *raw_len = len;
  }
  return o;
}

static char **strv_of(json_object *o, const char *key)
{
  json_object *a;
  if (!o || !json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
    return NULL;
  size_t n = json_object_array_length(a);
  char **v = xcalloc(n + 1, sizeof(char *));
  for (size_t i = 0; i < n; i++) {
    const char *s = json_object_get_string(json_object_array_get_idx(a, i));
    v[i] = xstrdup(s ? s : "");
  }
  return v;
}

static char *dup_or_null(const char *s)
{
  return s ? xstrdup(s) : NULL;
}

/* image-spec config.md: the fields a run applies. */
static void read_config(json_object *doc, struct rrt_image_config *c)
{
  json_object *cfg = NULL, *ports;
  c->os = dup_or_null(str_of(doc, "os"));
  c->architecture = dup_or_null(str_of(doc, "architecture"));
  c->variant = dup_or_null(str_of(doc, "variant"));
  json_object_object_get_ex(doc, "config", &cfg);
  if (!cfg || !json_object_is_type(cfg, json_type_object))
    return;
  c->entrypoint = strv_of(cfg, "Entrypoint");
  c->cmd = strv_of(cfg, "Cmd");
  c->env = strv_of(cfg, "Env");
  c->workdir = dup_or_null(str_of(cfg, "WorkingDir"));
  c->user = dup_or_null(str_of(cfg, "User"));
  c->stop_signal = dup_or_null(str_of(cfg, "StopSignal"));
  if (json_object_object_get_ex(cfg, "ExposedPorts", &ports) &&
      json_object_is_type(ports, json_type_object)) {
    size_t n = 0;
    c->exposed_ports = xcalloc((size_t)json_object_object_length(ports) + 1, sizeof(char *));
    json_object_object_foreach(ports, k, v)
    {
      (void)v;
      c->exposed_ports[n++] = xstrdup(k);
    }
  }
}

static json_object *annotations_of(json_object *m)
{
  json_object *a = NULL;
  json_object_object_get_ex(m, "annotations", &a);
  return a;
}

/* The names a source gives an image, normalized (rrt_image_name_normalize), those that are not
 * image names left out: one (an OCI ref.name), or an array (a docker-archive's RepoTags). NULL
 * when none. */
static char **names_of(const char *one, json_object *arr, bool docker_hub)
{
  size_t n = arr && json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
  char **v = xcalloc(n + 2, sizeof(char *));
  size_t k = 0;
  if (one)
    v[k] = rrt_image_name_normalize(one, docker_hub), k += v[k] != NULL;
  for (size_t i = 0; i < n; i++) {
    const char *t = json_object_get_string(json_object_array_get_idx(arr, i));
    if (t)
      v[k] = rrt_image_name_normalize(t, docker_hub), k += v[k] != NULL;
  }
  if (k == 0) {
    free(v);
    return NULL;
  }
  return v;
}

static void add_layer(struct rrt_plan *p, const char *path, const char *blob, const char *diff)
{
  p->layers = xrealloc(p->layers, (p->n + 1) * sizeof(*p->layers));
  p->layers[p->n].path = xstrdup(path);
  memcpy(p->layers[p->n].blob, blob, 65);
  memcpy(p->layers[p->n].diff, diff, 65);
  p->n++;
}

/* The config's rootfs.diff_ids: one "sha256:HEX" per layer, in order. */
static int diff_ids_of(json_object *cfg, size_t n, const char *what, json_object **diff,
                       struct rrt_error *err)
{
  json_object *rootfs = NULL;
  *diff = NULL;
  json_object_object_get_ex(cfg, "rootfs", &rootfs);
  json_object_object_get_ex(rootfs, "diff_ids", diff);
  if (!json_object_is_type(*diff, json_type_array) || json_object_array_length(*diff) != n)
    return rrt_error_msgf(
        err, EINVAL, "%s: the config's rootfs.diff_ids (%zu) do not match the %zu layers", what,
        json_object_is_type(*diff, json_type_array) ? json_object_array_length(*diff) : 0, n);
  return 0;
}

static int diff_id_at(json_object *diff, size_t i, const char *what, const char **hex,
                      struct rrt_error *err)
{
  if (rrt_digest_parse(json_object_get_string(json_object_array_get_idx(diff, i)), hex, err) < 0)
    return rrt_error_wrap(err, "%s: rootfs.diff_ids[%zu]", what, i);
  return 0;
}

static bool tar_media_type(const char *mt)
{
  return !mt || strstr(mt, "tar") != NULL;
}

/* This machine as the image-spec names platforms (GOARCH, and the variant for arm). */
static const char *goarch_variant(const char **variant)
{
  static const struct {
    const char *machine, *arch, *variant;
  } names[] = {
      {"x86_64", "amd64", NULL},        {"aarch64", "arm64", NULL}, {"armv7l", "arm", "v7"},
      {"armv6l", "arm", "v6"},          {"i686", "386", NULL},      {"i386", "386", NULL},
      {"ppc64le", "ppc64le", NULL},     {"s390x", "s390x", NULL},   {"riscv64", "riscv64", NULL},
      {"loongarch64", "loong64", NULL},
  };
  static struct utsname u;
  if (uname(&u) < 0)
    snprintf(u.machine, sizeof(u.machine), "x86_64");
  *variant = NULL;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(u.machine, names[i].machine) == 0) {
      *variant = names[i].variant;
      return names[i].arch;
    }
  return u.machine;
}

static const char *goarch(void)
{
  const char *variant;
  return goarch_variant(&variant);
}

bool rrt_image_platform_chosen;

int rrt_image_check_platform(const struct rrt_image_config *c, struct rrt_error *err)
{
  if (rrt_image_platform_chosen)
    return 0; /* --platform: the user asked for that image, whatever this machine runs */
  const char *variant, *arch = goarch_variant(&variant);
  /* The config's words are the image's: escaped where they are printed (escape.h). */
  if (c->os && *c->os && strcmp(c->os, "linux") != 0) {
    cleanup_free char *os = rrt_escape(c->os);
    return rrt_error_msgf(err, ENOEXEC, "the image is for %s, this machine is linux", os);
  }
  if (!c->architecture || !*c->architecture)
    return 0;
  /* An arm image of an older variant runs on a newer arm (v6 on v7); arm64's v8/v9 alike. */
  bool same = strcmp(c->architecture, arch) == 0 &&
              (!variant || !c->variant || !*c->variant || strcmp(c->variant, variant) <= 0);
  if (same)
    return 0;
  cleanup_free char *ia = rrt_escape(c->architecture);
  cleanup_free char *iv = c->variant && *c->variant ? rrt_escape(c->variant) : NULL;
  return rrt_error_msgf(err, ENOEXEC,
                        "the image is for %s%s%s, this machine is %s%s%s: an image of another "
                        "architecture is not run (no binfmt emulation)",
                        ia, iv ? "/" : "", iv ? iv : "", arch, variant ? "/" : "",
                        variant ? variant : "");
}

/* An index's manifest: the one whose ref.name is tag (or ends with ":tag"), the only one, or the
 * one for this platform. */
static json_object *pick(json_object *idx, const char *tag, const char *what, struct rrt_error *err)
{
  json_object *ms;
  if (!json_object_object_get_ex(idx, "manifests", &ms) ||
      !json_object_is_type(ms, json_type_array) || json_object_array_length(ms) == 0) {
    rrt_error_msgf(err, EINVAL, "%s: no manifests", what);
    return NULL;
  }
  size_t n = json_object_array_length(ms);
  for (size_t i = 0; i < n; i++) {
    json_object *m = json_object_array_get_idx(ms, i), *ann = NULL, *plat = NULL;
    json_object_object_get_ex(m, "annotations", &ann);
    json_object_object_get_ex(m, "platform", &plat);
    const char *ref = str_of(ann, REF_NAME);
    if (tag) {
      size_t rl = ref ? strlen(ref) : 0, tl = strlen(tag);
      if (ref && (strcmp(ref, tag) == 0 ||
                  (rl > tl && ref[rl - tl - 1] == ':' && strcmp(ref + rl - tl, tag) == 0)))
        return m;
    } else if (n == 1 || (plat && str_of(plat, "architecture") &&
                          strcmp(str_of(plat, "architecture"), goarch()) == 0)) {
      return m;
    }
  }
  if (tag)
    rrt_error_msgf(err, ENOENT, "%s: no image tagged \"%s\"", what, tag);
  else
    rrt_error_msgf(err, EINVAL, "%s: %zu images: name one with :TAG", what, n);
  return NULL;
}

static int oci_layers(json_object *man, json_object *cfg, struct rrt_plan *p, const char *what,
                      struct rrt_error *err)
{
  json_object *ls, *diff;
  if (!json_object_object_get_ex(man, "layers", &ls) || !json_object_is_type(ls, json_type_array))
    return rrt_error_msgf(err, EINVAL, "%s: the manifest has no layers", what);
  if (diff_ids_of(cfg, json_object_array_length(ls), what, &diff, err) < 0)
    return -1;
  for (size_t i = 0; i < json_object_array_length(ls); i++) {
    json_object *l = json_object_array_get_idx(ls, i);
    const char *mt = str_of(l, "mediaType"), *hex, *dhex;
    if (!tar_media_type(mt))
      return rrt_error_msgf(err, ENOTSUP, "%s: layer %zu: media type %s is not a tar", what, i, mt);
    if (rrt_digest_parse(str_of(l, "digest"), &hex, err) < 0)
      return rrt_error_wrap(err, "%s: layer %zu", what, i);
    if (diff_id_at(diff, i, what, &dhex, err) < 0)
      return -1;
    cleanup_free char *path = xasprintf("blobs/sha256/%s", hex);
    add_layer(p, path, hex, dhex);
  }
  return 0;
}

int rrt_plan_oci(struct rrt_src *s, const char *tag, struct rrt_plan *p, struct rrt_error *err)
{
  cleanup_free char *text = NULL;
  size_t len;
  const char *what = s->path;
  if (rrt_src_read(s, "index.json", &text, &len, err) < 0)
    return rrt_error_wrap(err, "not an OCI image layout");
  json_object *doc = parse(text, "index.json", err);
  if (!doc)
    return rrt_error_wrap(err, "%s", what);
  json_object *m = pick(doc, tag, what, err);
  /* Nested indexes (a multi-platform image) down to a manifest, at most INDEX_DEPTH deep. */
  for (int depth = 0; m; depth++) {
    if (depth == 0) /* the name the layout gives the image is on index.json's entry */
      p->names = names_of(str_of(annotations_of(m), REF_NAME), NULL, false);
    json_object *next = read_blob(s, str_of(m, "digest"), "manifest", p->manifest, &p->manifest_raw,
                                  &p->manifest_len, err);
    json_object_put(doc);
    doc = next;
    if (!doc)
      return rrt_error_wrap(err, "%s", what);
    json_object *ms;
    if (!json_object_object_get_ex(doc, "manifests", &ms))
      break;
    if (depth + 1 >= INDEX_DEPTH) {
      json_object_put(doc);
      return rrt_error_msgf(err, ELOOP, "%s: indexes nested more than %d deep", what, INDEX_DEPTH);
    }
    m = pick(doc, NULL, what, err);
  }
  if (!m) {
    json_object_put(doc);
    return -1;
  }
  json_object *cd = NULL;
  json_object_object_get_ex(doc, "config", &cd);
  json_object *cfg =
      read_blob(s, str_of(cd, "digest"), "config", p->id, &p->config_raw, &p->config_len, err);
  int r = cfg ? oci_layers(doc, cfg, p, what, err) : rrt_error_wrap(err, "%s", what);
  if (cfg) {
    read_config(cfg, &p->config);
    p->created = dup_or_null(str_of(cfg, "created"));
  }
  json_object_put(cfg);
  json_object_put(doc);
  return r;
}

static json_object *pick_docker(json_object *arr, const char *tag, const char *what,
                                struct rrt_error *err)
{
  size_t n = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
  if (n == 0) {
    rrt_error_msgf(err, EINVAL, "%s: manifest.json lists no image", what);
    return NULL;
  }
  if (!tag && n == 1)
    return json_object_array_get_idx(arr, 0);
  for (size_t i = 0; tag && i < n; i++) {
    json_object *m = json_object_array_get_idx(arr, i), *tags;
    if (!json_object_object_get_ex(m, "RepoTags", &tags) ||
        !json_object_is_type(tags, json_type_array))
      continue;
    for (size_t k = 0; k < json_object_array_length(tags); k++) {
      const char *t = json_object_get_string(json_object_array_get_idx(tags, k));
      size_t tl = strlen(tag), l = t ? strlen(t) : 0;
      if (t &&
          (strcmp(t, tag) == 0 || (l > tl && t[l - tl - 1] == ':' && !strcmp(t + l - tl, tag)) ||
           (l > tl && t[l - tl - 1] == '/' && !strcmp(t + l - tl, tag))))
        return m;
    }
  }
  if (tag)
    rrt_error_msgf(err, ENOENT, "%s: no image tagged \"%s\"", what, tag);
  else
    rrt_error_msgf(err, EINVAL, "%s: %zu images: name one with :NAME:TAG", what, n);
  return NULL;
}

/* Config "HEX.json" or "blobs/sha256/HEX": its name is its digest; its bytes kept in the plan. */
static json_object *docker_config(struct rrt_src *s, const char *path, struct rrt_plan *p,
                                  struct rrt_error *err)
{
  char *hex = p->id;
  const char *base = path ? strrchr(path, '/') : NULL;
  base = base ? base + 1 : path;
  if (!base || strspn(base, "0123456789abcdef") != 64 || (base[64] && strcmp(base + 64, ".json"))) {
    rrt_error_msgf(err, EINVAL, "manifest.json: config \"%s\" is not named by its digest",
                   path ? path : "");
    return NULL;
  }
  cleanup_free char *data = NULL;
  size_t len;
  if (rrt_src_read(s, path, &data, &len, err) < 0)
    return NULL;
  memcpy(hex, base, 64);
  hex[64] = '\0';
  char got[65];
  rrt_digest_buf(data, len, got);
  if (strcmp(got, hex) != 0) {
    rrt_error_msgf(err, EBADMSG, "config sha256:%s: digest mismatch: the content is sha256:%s", hex,
                   got);
    return NULL;
  }
  json_object *o = parse(data, "config", err);
  if (o) {
    p->config_len = len;
    p->config_raw = steal_ptr(&data);
  }
  return o;
}

static json_object *descriptor(const char *media_type, const char *hex, size_t size)
{
  json_object *d = json_object_new_object();
  json_object_object_add(d, "mediaType", json_object_new_string(media_type));
  cleanup_free char *digest = xasprintf("sha256:%s", hex);
  json_object_object_add(d, "digest", json_object_new_string(digest));
  json_object_object_add(d, "size", json_object_new_int64((int64_t)size));
  return d;
}

/* A docker-archive has no OCI manifest: the store records the image by one made for it (its
 * layers are plain tars named by their diff_ids; their sizes are not known here, so 0). */
static void docker_manifest(struct rrt_plan *p)
{
  json_object *m = json_object_new_object(), *layers = json_object_new_array();
  json_object_object_add(m, "schemaVersion", json_object_new_int(2));
  json_object_object_add(m, "mediaType",
                         json_object_new_string("application/vnd.oci.image.manifest.v1+json"));
  json_object_object_add(
      m, "config", descriptor("application/vnd.oci.image.config.v1+json", p->id, p->config_len));
  for (size_t i = 0; i < p->n; i++)
    json_object_array_add(
        layers, descriptor("application/vnd.oci.image.layer.v1.tar", p->layers[i].diff, 0));
  json_object_object_add(m, "layers", layers);
  const char *text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
  free(p->manifest_raw);
  p->manifest_raw = xstrdup(text);
  p->manifest_len = strlen(text);
  rrt_digest_buf(p->manifest_raw, p->manifest_len, p->manifest);
  json_object_put(m);
}

int rrt_plan_docker(struct rrt_src *s, const char *tag, struct rrt_plan *p, struct rrt_error *err)
{
  cleanup_free char *text = NULL;
  size_t len;
  if (rrt_src_read(s, "manifest.json", &text, &len, err) < 0)
    return rrt_error_wrap(err, "not a docker-archive");
  json_object *arr = parse(text, "manifest.json", err);
  json_object *m = arr ? pick_docker(arr, tag, s->path, err) : NULL;
  json_object *cfg = m ? docker_config(s, str_of(m, "Config"), p, err) : NULL;
  json_object *diff = NULL, *layers = NULL;
  int r = -1;
  if (!cfg)
    goto out;
  read_config(cfg, &p->config);
  p->created = dup_or_null(str_of(cfg, "created"));
  json_object *tags = NULL;
  json_object_object_get_ex(m, "RepoTags", &tags);
  /* docker-archive:FILE:NAME:TAG names the image; otherwise its entry's RepoTags do. */
  bool named = tag && strchr(tag, ':');
  p->names = names_of(named ? tag : NULL, named ? NULL : tags, true);
  json_object_object_get_ex(m, "Layers", &layers);
  size_t n = json_object_is_type(layers, json_type_array) ? json_object_array_length(layers) : 0;
  if (diff_ids_of(cfg, n, s->path, &diff, err) < 0)
    goto out;
  for (size_t i = 0; i < n; i++) {
    const char *hex, *path = json_object_get_string(json_object_array_get_idx(layers, i));
    if (diff_id_at(diff, i, s->path, &hex, err) < 0)
      goto out;
    add_layer(p, path ? path : "", hex, hex); /* a plain tar: its bytes are its diff_id's */
  }
  docker_manifest(p);
  r = 0;
out:
  if (r < 0 && arr && !err->msg)
    rrt_error_msgf(err, EINVAL, "%s: not a docker-archive", s->path);
  if (r < 0 && err->msg && strstr(err->msg, s->path) == NULL)
    rrt_error_wrap(err, "%s", s->path);
  json_object_put(cfg);
  json_object_put(arr);
  return r;
}

int rrt_plan_stored(const char *store, const char *manifest_hex, struct rrt_plan *p,
                    struct rrt_error *err)
{
  struct rrt_src s;
  if (rrt_src_open(&s, store, false, err) < 0)
    return -1;
  cleanup_free char *digest = xasprintf("sha256:%s", manifest_hex);
  json_object *man = read_blob(&s, digest, "manifest", p->manifest, NULL, NULL, err), *cd = NULL;
  json_object_object_get_ex(man, "config", &cd);
  json_object *cfg =
      man ? read_blob(&s, str_of(cd, "digest"), "config", p->id, NULL, NULL, err) : NULL;
  int r = cfg ? oci_layers(man, cfg, p, "the store's record", err) : -1;
  if (cfg) {
    read_config(cfg, &p->config);
    p->created = dup_or_null(str_of(cfg, "created"));
  }
  json_object_put(cfg);
  json_object_put(man);
  rrt_src_close(&s);
  return r;
}
