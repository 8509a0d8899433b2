/* manifest.h: manifests from the registry: their media types, the platform's manifest of an
 * index. */
#ifndef ROOTLESSRT_PULL_MANIFEST_H
#define ROOTLESSRT_PULL_MANIFEST_H

#include <json-c/json.h>
#include <stdbool.h>

#include "http.h"

/* The media types an image is made of: the four kinds of manifest the client asks for (the
 * Accept header), configs, layers. */
#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define ACCEPT_MANIFESTS                                                                           \
  MT_OCI_MANIFEST ", " MT_OCI_INDEX ", " MT_DOCKER_MANIFEST ", " MT_DOCKER_LIST

bool mt_is_manifest(const char *mt);
bool mt_is_index(const char *mt);
bool mt_is_config(const char *mt);
bool mt_is_layer(const char *mt);

/* The media type of a manifest the registry sent: its Content-Type (parameters dropped) when it
 * is a known one, else the document's own mediaType, else what its fields make it (OCI, which
 * may leave mediaType out). The two must agree when both are known. NULL with the error set
 * (naming what), and everything from the registry in it escaped. */
const char *manifest_media_type(const char *ctype, json_object *doc, const char *what);

/* The descriptor of the manifest for os/arch[/variant] in an index (variant "" for any); NULL with
 * the error set, listing the platforms it has. */
json_object *pick_platform(json_object *idx, const char *os, const char *arch, const char *variant,
                           const char *what);

/* An image manifest's config and layers, every media type and digest checked: 0, or -1 with the
 * error set. */
int check_image_manifest(json_object *man, const char *what, json_object **config,
                         json_object **layers);

/* GET /v2/REPO/manifests/REF: the document, its digest (checked when asked for by digest, or
 * against Docker-Content-Digest when the registry sends one), the Content-Type as sent. */
int get_manifest(struct conn *c, const char *ref, const char *want_digest, char **doc, size_t *len,
                 char **ctype, char digest[72]);

/* A string member of o, or NULL. */
const char *str_of(json_object *o, const char *key);

#endif
