/* names.h: the store's image records (names.c), image/ only. */
#ifndef ROOTLESSRT_IMAGE_NAMES_H
#define ROOTLESSRT_IMAGE_NAMES_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "manifest.h"

/* STORE/WHICH (images.lock, gc.lock) flocked with op: the fd, or -1 (errno). images.lock orders
 * the writers of the records; gc.lock is held shared by a run from the moment it resolves its
 * image until its bundle names the layers, and exclusive by what removes layers and records
 * (rmi, store rm, store prune), so nothing is removed under a run that is about to mount it. */
int rrt_names_lock(const char *store, const char *which, int op);
#define RRT_GC_LOCK "gc.lock"

/* The records (an empty document when there are none yet), or NULL and err. */
json_object *rrt_names_load(const char *store, struct rrt_error *err);
/* Writes them atomically; the caller holds images.lock. */
int rrt_names_save(const char *store, json_object *doc, struct rrt_error *err);
json_object *rrt_names_images(json_object *doc);
const char *rrt_names_str(json_object *o, const char *key);
/* o's array KEY, made empty when absent. */
json_object *rrt_names_list(json_object *o, const char *key);
json_object *rrt_names_by_id(json_object *doc, const char *id);
/* "HOST/PATH:TAG" or "HOST/PATH@DIGEST" -> "HOST/PATH" (malloc'd). */
char *rrt_names_repo(const char *name);

/* Records the image of plan p (its manifest and config into STORE/blobs) under names (normalized,
 * NULL-terminated; may be NULL: the image is kept by its id). */
int rrt_names_record(const char *store, const struct rrt_plan *p, char *const *names,
                     struct rrt_error *err);

/* The record ref names, as podman looks an image up in its store: an id (or its start), a
 * qualified name, or a short name (localhost/NAME, docker.io/library/NAME, a stored name ending
 * with /NAME). docker_hub: ref is docker://'s (a name without a host is Docker Hub's). *resolved:
 * the name (or id) it matched. NULL when none. */
json_object *rrt_names_find(json_object *doc, const char *ref, bool docker_hub, char **resolved);
/* The same from the store: 0 and the record's manifest digest (hex) and the name it matched, 1
 * when none, -1 on an error (an unreadable record file). */
int rrt_names_lookup(const char *store, const char *ref, bool docker_hub, char **manifest_hex,
                     char **resolved, struct rrt_error *err);

/* The unpack notes a layer's uncompressed size (STORE/layers/sizes/DIFF_ID), for `images`. */
void rrt_layer_size_note(const char *store, const char *diff_hex, uint64_t bytes);

/* A desktop container of root whose bundle uses the layer STORE/layers/sha256/HEX (hex) or the
 * image id (id): its id (malloc'd), or NULL. The caller swept what killed runs left first
 * (rrt_run_sweep). */
char *rrt_store_user_container(const char *store, const char *root, const char *hex,
                               const char *id);
/* An image of doc whose layers include HEX: its first name (escaped) or short id; or NULL. */
char *rrt_store_user_image(json_object *doc, const char *hex);

/* s with every byte that is not printable ASCII, and '\\', as \xHH (malloc'd): a name from an
 * archive, a registry or the store's records printed. rrt_escape_ascii (base/escape.c). */
char *rrt_names_shown(const char *s);

#endif
