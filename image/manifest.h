/* manifest.h: an image's layers and config from its manifests (image/ only). */
#ifndef ROOTLESSRT_IMAGE_MANIFEST_H
#define ROOTLESSRT_IMAGE_MANIFEST_H

#include "internal.h"
#include "source.h"

struct rrt_layer_ref {
  char *path;    /* in the source: "blobs/sha256/HEX", "ID/layer.tar" */
  char blob[65]; /* the sha256 its bytes (compressed or not) must have: checked as they stream */
  char diff[65]; /* the sha256 of its tar uncompressed (the config's rootfs.diff_ids, in order):
                  * checked as it is unpacked, and the store's name for it */
};

struct rrt_plan {
  struct rrt_layer_ref *layers; /* bottom first */
  size_t n;
  struct rrt_image_config config;
  char id[65]; /* the config's digest: the image id */
  /* What the store records of it (names.c): the manifest's and the config's bytes, the
   * manifest's digest (a docker-archive's: of the OCI manifest made for it), the config's
   * created, and the names the source gives it (NULL-terminated, or NULL). */
  char *manifest_raw, *config_raw;
  size_t manifest_len, config_len;
  char manifest[65];
  char *created;
  char **names;
};
void rrt_plan_free(struct rrt_plan *p);
/* The config's os, architecture and variant against this machine's: a mismatch is an error
 * naming both (ENOEXEC). A config without them runs. */
int rrt_image_check_platform(const struct rrt_image_config *c, struct rrt_error *err);
/* Set around registry.c's imports of a pull with --platform: that image was asked for, and
 * rrt_image_check_platform lets any platform through. */
extern bool rrt_image_platform_chosen;

/* index.json -> (tag) -> manifest -> config and layers; every small blob verified, the config's
 * rootfs.diff_ids one per layer. */
int rrt_plan_oci(struct rrt_src *s, const char *tag, struct rrt_plan *p, struct rrt_error *err);
/* manifest.json -> (tag) -> config (named by its digest) and layers (docker-archive layers are
 * plain tars: their blob digest is their diff_id). */
int rrt_plan_docker(struct rrt_src *s, const char *tag, struct rrt_plan *p, struct rrt_error *err);

/* The image the store recorded under the manifest sha256:MANIFEST_HEX (STORE/blobs/sha256/:
 * the manifest and the config, each verified as it is read). */
int rrt_plan_stored(const char *store, const char *manifest_hex, struct rrt_plan *p,
                    struct rrt_error *err);

#endif
