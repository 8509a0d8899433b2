/* manifest.c: manifests from the registry: which media type each is (the Content-Type is the
 * registry's word, checked against the known types and the document), the platform's manifest of
 * an index, the config and layers of an image manifest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "manifest.h"
#include "token.h"

static bool in(const char *mt, const char *const *list)
{
  for (; mt && *list; list++)
    if (strcmp(mt, *list) == 0)
      return true;
  return false;
}

bool mt_is_manifest(const char *mt)
{
  static const char *const l[] = {MT_OCI_MANIFEST, MT_DOCKER_MANIFEST, NULL};
  return in(mt, l);
}

bool mt_is_index(const char *mt)
{
  static const char *const l[] = {MT_OCI_INDEX, MT_DOCKER_LIST, NULL};
  return in(mt, l);
}

bool mt_is_config(const char *mt)
{
  static const char *const l[] = {"application/vnd.oci.image.config.v1+json",
                                  "application/vnd.docker.container.image.v1+json", NULL};
  return in(mt, l);
}

bool mt_is_layer(const char *mt)
{
  static const char *const l[] = {
      "application/vnd.oci.image.layer.v1.tar",
      "application/vnd.oci.image.layer.v1.tar+gzip",
      "application/vnd.oci.image.layer.v1.tar+zstd",
      "application/vnd.oci.image.layer.nondistributable.v1.tar",
      "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
      "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
      "application/vnd.docker.image.rootfs.diff.tar.gzip",
      "application/vnd.docker.image.rootfs.diff.tar", /* uncompressed, as skopeo may push it */
      "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
      NULL,
  };
  return in(mt, l);
}

const char *str_of(json_object *o, const char *key)
{
  json_object *v;
  if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

static const char *known(const char *mt)
{
  return mt_is_manifest(mt) || mt_is_index(mt) ? mt : NULL;
}

/* The known type of that name (a static string), or NULL. */
static const char *canonical(const char *mt)
{
  static const char *const all[] = {MT_OCI_MANIFEST, MT_OCI_INDEX, MT_DOCKER_MANIFEST,
                                    MT_DOCKER_LIST, NULL};
  for (const char *const *p = all; mt && *p; p++)
    if (strcmp(mt, *p) == 0)
      return *p;
  return NULL;
}

const char *manifest_media_type(const char *ctype, json_object *doc, const char *what)
{
  char ct[256] = "", esc[512];
  if (ctype) {
    size_t n = strcspn(ctype, ";");
    while (n > 0 && (ctype[n - 1] == ' ' || ctype[n - 1] == '\t'))
      n--;
    if (n < sizeof(ct)) {
      memcpy(ct, ctype, n);
      ct[n] = '\0';
    }
  }
  const char *from_header = canonical(known(ct));
  const char *own = str_of(doc, "mediaType");
  if (own && !canonical(own)) {
    failf("%s: its mediaType \"%s\" is not an image manifest or index", what,
          rrt_escape_buf(own, esc, sizeof(esc)));
    return NULL;
  }
  if (from_header && own && strcmp(own, from_header) != 0) {
    failf("%s: the registry sent it as %s, its mediaType says %s", what, from_header, own);
    return NULL;
  }
  if (from_header)
    return from_header;
  if (own)
    return canonical(own);
  /* No type anywhere that says it (Content-Type application/json, or none): OCI's, by what it
   * holds. */
  json_object *v;
  if (json_object_object_get_ex(doc, "manifests", &v))
    return MT_OCI_INDEX;
  if (json_object_object_get_ex(doc, "config", &v) && json_object_object_get_ex(doc, "layers", &v))
    return MT_OCI_MANIFEST;
  failf("%s: the registry sent \"%s\", which is not an image manifest or index", what,
        rrt_escape_buf(ctype ? ctype : "no Content-Type", esc, sizeof(esc)));
  return NULL;
}

json_object *pick_platform(json_object *idx, const char *os, const char *arch, const char *variant,
                           const char *what)
{
  json_object *ms;
  if (!json_object_object_get_ex(idx, "manifests", &ms) ||
      !json_object_is_type(ms, json_type_array)) {
    failf("%s: an index without manifests", what);
    return NULL;
  }
  char seen[512] = "";
  size_t n = json_object_array_length(ms);
  for (size_t i = 0; i < n; i++) {
    json_object *m = json_object_array_get_idx(ms, i), *p = NULL;
    json_object_object_get_ex(m, "platform", &p);
    const char *mos = str_of(p, "os"), *march = str_of(p, "architecture"),
               *mvar = str_of(p, "variant");
    if (mos && march && strlen(seen) < sizeof(seen) - 64) {
      /* The index's words: escaped, each cut to fit. */
      char a[64], b[64], c[64];
      snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%s/%s%s%s", *seen ? ", " : "",
               rrt_escape_buf(mos, a, sizeof(a)), rrt_escape_buf(march, b, sizeof(b)),
               mvar ? "/" : "", mvar ? rrt_escape_buf(mvar, c, sizeof(c)) : "");
    }
    if (mos && march && strcmp(mos, os) == 0 && strcmp(march, arch) == 0 &&
        (!variant[0] || (mvar && strcmp(mvar, variant) == 0)) &&
        valid_digest(str_of(m, "digest")) &&
        (!str_of(m, "mediaType") || mt_is_manifest(str_of(m, "mediaType"))))
      return m;
  }
  failf("%s: no image for %s/%s%s%s (the index has: %s)", what, os, arch, variant[0] ? "/" : "",
        variant, *seen ? seen : "no platforms");
  return NULL;
}

int check_image_manifest(json_object *man, const char *what, json_object **config,
                         json_object **layers)
{
  char esc[512];
  json_object *cfg = NULL, *ls = NULL;
  if (!json_object_object_get_ex(man, "config", &cfg) ||
      !json_object_is_type(cfg, json_type_object) || !valid_digest(str_of(cfg, "digest")) ||
      !json_object_object_get_ex(man, "layers", &ls) || !json_object_is_type(ls, json_type_array))
    return failf("%s: not an image manifest with a config and layers", what);
  const char *cmt = str_of(cfg, "mediaType");
  if (cmt && !mt_is_config(cmt))
    return failf("%s: its config's media type \"%s\" is not an image config", what,
                 rrt_escape_buf(cmt, esc, sizeof(esc)));
  size_t n = json_object_array_length(ls);
  for (size_t i = 0; i < n; i++) {
    json_object *l = json_object_array_get_idx(ls, i);
    if (!valid_digest(str_of(l, "digest")))
      return failf("%s: layer %zu has no sha256 digest", what, i);
    const char *lmt = str_of(l, "mediaType");
    if (lmt && !mt_is_layer(lmt))
      return failf("%s: layer %zu's media type \"%s\" is not a layer", what, i,
                   rrt_escape_buf(lmt, esc, sizeof(esc)));
  }
  *config = cfg;
  *layers = ls;
  return 0;
}

int get_manifest(struct conn *c, const char *ref, const char *want_digest, char **doc, size_t *len,
                 char **ctype, char digest[72])
{
  char *base = http_base_url(c);
  char *url = xasprintf("%s/manifests/%s", base, ref);
  free(base);
  struct body b = {.fd = -1, .limit = SMALL_MAX};
  struct response resp = {0};
  int r = reg_get(c, url, ACCEPT_MANIFESTS, &b, &resp);
  char says[512];
  if (r == 0 && resp.status == 401)
    r = c->cred ? failf("registry %s: authentication failed with the credentials for %s in %s",
                        c->ep->host, c->ep->host, c->cred_from)
                : failf("registry %s: unauthorized%s", c->ep->host,
                        registry_says(&b, says, sizeof(says)));
  else if (r == 0 && resp.status == 404)
    r = failf("%s/%s%s%s: no such image or tag in the registry%s", c->ep->host, c->ep->repo,
              strchr(ref, ':') ? "@" : ":", ref, registry_says(&b, says, sizeof(says)));
  else if (r == 0 && (resp.status < 200 || resp.status > 299))
    r = failf("%s: HTTP %ld%s", url, resp.status, registry_says(&b, says, sizeof(says)));
  if (r == 0) {
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(&b.sha, sizeof(d), d);
    memcpy(digest, "sha256:", 7);
    for (size_t i = 0; i < sizeof(d); i++)
      snprintf(digest + 7 + 2 * i, 3, "%02x", d[i]);
    const char *expect = want_digest ? want_digest : resp.digest;
    if (expect && valid_digest(expect) && strcmp(expect, digest) != 0)
      r = failf("manifest %s: digest mismatch: the registry sent %s", expect, digest);
  }
  if (r == 0) {
    *doc = b.buf ? b.buf : xstrdup("");
    *len = b.len;
    b.buf = NULL;
    *ctype = resp.ctype ? xstrdup(resp.ctype) : NULL;
  }
  body_free(&b);
  response_free(&resp);
  free(url);
  return r;
}
