/* internal.h: what the files of image/ share and nobody else needs. */
#ifndef ROOTLESSRT_IMAGE_INTERNAL_H
#define ROOTLESSRT_IMAGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rootlessrt/error.h"
#include "rootlessrt/image.h"

/* The parts of an image's config (image-spec config.md) a run applies; NULL when absent. */
struct rrt_image_config {
  char **entrypoint, **cmd, **env; /* NULL-terminated */
  char *workdir, *user, *stop_signal;
  char **exposed_ports;
  char *os, *architecture, *variant; /* the platform it was built for */
};
void rrt_image_config_free(struct rrt_image_config *c);

/* An image made ready to run: its layer directories in the store, top first. */
struct rrt_image {
  char **lowers; /* NULL-terminated, absolute, top layer first */
  struct rrt_image_config config;
  char id[65];       /* the config's digest ("" for a root directory) */
  char manifest[65]; /* the manifest's (the store's record of it) */
};
void rrt_image_free(struct rrt_image *img);

/* What the generated config needs beyond the flags. */
struct rrt_run_plan {
  const char *id;
  const struct rrt_image *image;
  const char *upper, *work; /* absolute */
  uid_t keep_uid;           /* --userns keep-id: the caller's ids */
  gid_t keep_gid;
  unsigned long sub_start, sub_count; /* the caller's first subordinate range (keep-id) */
};

/* The OCI config.json text for a run (malloc'd). */
int rrt_run_config(const struct rrt_run_image_opts *o, const struct rrt_run_plan *p, char **json,
                   struct rrt_error *err);

/* A file the runtime reads from the image (/etc/passwd, /etc/group), as the container will see
 * it: the layers (top first) merged, whiteouts and opaque directories honoured, symlinks followed
 * across layers against the image's root. A regular file of at most max bytes, read without
 * blocking; *data is NULL (and 0 returned) when the image has no such file. An unreadable layer,
 * a non-regular file or one over the limit is an error naming it. */
int rrt_image_read_file(char *const *lowers, const char *path, size_t max, char **data, size_t *len,
                        struct rrt_error *err);
#define RRT_IMAGE_TEXT_MAX (8u << 20) /* /etc/passwd, /etc/group */

/* process.user from -u / the image's User: "uid[:gid]" or names looked up in the image's
 * /etc/passwd and /etc/group (rrt_image_read_file). */
int rrt_run_resolve_user(const char *spec, char *const *lowers, uid_t *uid, gid_t *gid,
                         struct rrt_error *err);

/* Opens an image reference: a root directory (used in place), or an OCI layout / archive whose
 * layers are unpacked into the store once. */
int rrt_image_open(const char *ref, const char *store, const struct rrt_pull_opts *po,
                   struct rrt_image *img, struct rrt_error *err);

/* docker://REF (without the transport; short_names: a name without a registry goes through
 * registries.conf): fetched by rootlessrt-pull, then imported as an OCI layout. */
int rrt_image_pull(const char *ref, bool short_names, const struct rrt_pull_opts *po,
                   const char *store, struct rrt_image *img, struct rrt_error *err);

/* A registry pull's --have directory for rootlessrt-pull (blob digests it need not fetch): first
 * filled from the store, then, once the manifest and config are in LAYOUT (a directory), made to
 * name exactly the blobs of the image's layers the store has: true when that changed it. */
void rrt_pull_have_fill(const char *store, const char *have);
bool rrt_pull_have_fix(const char *layout, const char *store, const char *have);

/* Whether an import records the image in the store (names.c): by names (normalized), or by
 * those its source gives when names is NULL; *names_out (when not NULL) gets those. */
struct rrt_record {
  char *const *names;
  char ***names_out;
  bool warn_only; /* a record that cannot be written is a warning (a pull: the image is there) */
};

/* oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME:TAG]: the layers are
 * unpacked into the store (once each, in the user namespace), verified; recorded when rec. */
int rrt_image_import(const char *ref, const char *store, const struct rrt_record *rec,
                     struct rrt_image *img, struct rrt_error *err);
/* The image the store recorded with the manifest sha256:MANIFEST_HEX: an error when it or one
 * of its layers is gone. */
int rrt_image_open_stored(const char *store, const char *manifest_hex, struct rrt_image *img,
                          struct rrt_error *err);

/* A registry image name ([HOST[:PORT]/]PATH[:TAG][@ALGO:HEX], distribution's grammar):
 * true when name is one; *qualified when it has a tag, a digest or a host, which neither a
 * container id nor (usually) a directory has. */
bool rrt_image_name_parse(const char *name, bool *qualified);
/* name as the store records it (malloc'd; NULL when it is not an image name): HOST/PATH:TAG, a
 * name without a host under docker.io (docker_hub: Docker's reading, for docker-archive RepoTags
 * and docker://) or localhost (podman's reading of a name it made), docker.io/NAME as
 * docker.io/library/NAME, :latest when it has neither tag nor digest. */
char *rrt_image_name_normalize(const char *name, bool docker_hub);
/* name's first component is a registry host (has '.' or ':', or is localhost). */
bool rrt_image_name_has_host(const char *name);

/* The unpack's progress line for a terminal: "layer N/M sha256:HEX12… X MiB / Y MiB (P%)" (no
 * total when size is 0). */
void rrt_progress_line(char *buf, size_t len, size_t idx, size_t n, const char *hex, uint64_t done,
                       uint64_t size);

/* Removes the bundles of ROOT/.run that runs killed at any point left (and their --rm changes). */
void rrt_run_sweep(const char *root);
/* The blob records (STORE/layers/blobs/sha256) of layers no longer in the store. */
void rrt_store_forget_blobs(const char *store);

/* Removes what killed unpacks left in STORE/tmp/ (directories no live run holds the lock of). */
void rrt_store_remove_stale(const char *store);
/* The shared/exclusive hold on STORE/tmp (flock op) that orders the making of a directory in it
 * against the removal of stale ones: an fd to close, -1 when it cannot be had. */
int rrt_store_tmp_hold(const char *tmpdir, int op);
/* mkdir PATH (in STORE/tmp) and lock it, under the shared hold: the lock's fd, -1 and err. */
int rrt_store_tmp_make(const char *path, struct rrt_error *err);

#endif
