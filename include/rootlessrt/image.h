/* image.h: the desktop `run` (an image or a root directory on a copy-on-write root), the
 * per-user image store, and overlay mounts (kernel overlayfs in the user namespace, or
 * fuse-overlayfs). */
#ifndef ROOTLESSRT_IMAGE_H
#define ROOTLESSRT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "rootlessrt/container.h"
#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

/* ---------------------------------------------------------------- overlay mounts */

/* How an overlay is mounted: the annotation rootlessrt.overlay (auto|kernel|fuse), auto when
 * absent. auto tries the kernel first and falls back to fuse-overlayfs. */
enum rrt_overlay_mode { RRT_OVERLAY_AUTO, RRT_OVERLAY_KERNEL, RRT_OVERLAY_FUSE };
int rrt_overlay_mode_parse(const char *s, enum rrt_overlay_mode *mode, struct rrt_error *err);

/* The config's overlay mount on "/", or NULL: it replaces the bind of root.path onto itself. */
const struct rrt_mount *rrt_overlay_root_mount(const struct rrt_spec *spec);

/* Mounts an overlay on target (a path; relative lowerdir/upperdir/workdir are resolved against
 * the cwd, the bundle), in the caller's mount namespace. data is the mount's option string
 * ("lowerdir=A:B,upperdir=U,workdir=W"); userns adds userxattr for the kernel. For
 * fuse-overlayfs the caller (init) mounts the /dev/fuse fd and the runtime serves it
 * (rrt_fuse_serve), asked over the socket rrt_overlay_set_runtime gave. */
int rrt_overlay_mount(const struct rrt_spec *spec, bool userns, const char *target,
                      unsigned long flags, const char *data, struct rrt_error *err);

/* In init: the sync socket to the runtime, which serves fuse-overlayfs mounts. */
void rrt_overlay_set_runtime(int sync_fd);

/* In the runtime, for init's RRT_SYNC_FUSE: the sync socket it came with (a private one) carries
 * the mounted /dev/fuse fd and the options, then init's user namespace fd; serves it and answers.
 * *helper: the server's pid. */
int rrt_overlay_serve_request(pid_t init, int sock, pid_t *helper, struct rrt_error *err);

/* Starts fuse-overlayfs (prog_path) on the mounted /dev/fuse fd `fuse` of init's container,
 * outside the container: in its own pid namespace, in a mount namespace holding only its
 * absolute lower/upper/work directories, the system libraries and /dev/fuse, with only the
 * file capabilities it needs, in init's user namespace (init_userns, the fd init sent: the
 * runtime may not open an undumpable init's /proc entries). It ends when init does. *helper: its
 * pid 1, for delete. */
int rrt_fuse_serve(pid_t init, int fuse, int init_userns, const char *prog_path, const char *opts,
                   pid_t *helper, struct rrt_error *err);

/* ---------------------------------------------------------------- running in the user namespace */

/* Runs fn(arg) in a child inside a new user namespace with the caller's default maps (0 -> the
 * caller, 1..N -> its subordinate range), as root there: how the store's files get the ids a
 * container sees. fn returns 0 or -1 with err set; its message comes back in err. */
int rrt_userns_call(int (*fn)(void *arg, struct rrt_error *err), void *arg, struct rrt_error *err);
/* Removes a tree whose files belong to subordinate ids (inside the user namespace). A missing
 * path is not an error. */
int rrt_remove_tree_userns(const char *path, struct rrt_error *err);

/* ---------------------------------------------------------------- the desktop `run` */

struct rrt_kv_list {
  char **v;
  size_t n;
};

/* How a registry image is fetched (docker://, `pull`): --platform OS/ARCH[/VARIANT],
 * --authfile FILE, --tls-verify=false. NULL/false: this machine's platform, the usual
 * credentials files, TLS verified. */
/* --pull (podman's): when a registry image is asked of the registry. missing (the default): only
 * when the store has no image of that name (then it runs offline); always; never (only the
 * store's); newer: asked each time, the stored image run when the registry cannot be asked. */
enum rrt_pull_policy { RRT_PULL_MISSING, RRT_PULL_ALWAYS, RRT_PULL_NEVER, RRT_PULL_NEWER };
int rrt_pull_policy_parse(const char *s, enum rrt_pull_policy *p, struct rrt_error *err);

struct rrt_pull_opts {
  const char *platform, *authfile;
  bool tls_verify_off;
  enum rrt_pull_policy policy;
  bool policy_set; /* --pull was given: docker://REF is asked of its registry each time otherwise */
};

/* One of the flags above (name without "--"; value NULL for a bare --tls-verify). */
int rrt_pull_opt_parse(const char *name, const char *value, struct rrt_pull_opts *po,
                       struct rrt_error *err);

/* `pull REF`: docker://HOST/NAME:TAG (or @sha256:DIGEST), or a short name through
 * registries.conf: every layer not yet in the store (--storage, or the default) is fetched,
 * verified and unpacked into it, and the image recorded by its name (`images`). REF may also be
 * an archive or a layout (docker-archive:FILE[:NAME:TAG], oci-archive:FILE, oci:DIR[:NAME]): it is
 * imported and recorded by the names it gives (RepoTags, ref.name) or the NAME:TAG given. */
int rrt_pull(const char *ref, const struct rrt_pull_opts *po, const char *storage,
             struct rrt_error *err);

struct rrt_run_image_opts {
  const char *ref; /* oci:DIR[:TAG], oci-archive:FILE, docker-archive:FILE, docker://REF, or a
                      root dir */
  char **cmd;      /* the command after the image (may be empty) */
  size_t n_cmd;
  bool rm, detach, interactive, tty, tty_set, read_only, print_config, keep_id;
  const char *name, *workdir, *user, *hostname, *entrypoint, *network, *storage, *overlay;
  bool entrypoint_set;
  bool no_read_only_tmpfs; /* --read-only-tmpfs=false: /run, /tmp, /var/tmp read-only too */
  struct rrt_kv_list env, env_files, volumes, tmpfs, publish, cap_add, cap_drop, security_opts;
  struct rrt_pull_opts pull; /* for docker:// */
};

/* True when argv (the `run` verb's arguments, argv[0] = "run") is the desktop form: a flag only
 * it has (--rm, -i, -t, -e, -v, --name, -w, -u, --pull...), or a first operand that is an image
 * reference (a transport prefix), a path containing '/', or a registry image name with a tag or
 * digest (debian:12, x@sha256:...), none of which a container id can be; or any first operand
 * when there is no bundle to run (no -b, no config.json in the current directory). */
bool rrt_run_is_desktop(int argc, char **argv);
/* After the runc form of `run` failed: when its operand is also an image in the store (the
 * default one, or storage), err says both readings and how to run the image. */
void rrt_run_note_other_reading(int argc, char **argv, const char *storage, struct rrt_error *err);
/* A registry image name with a tag, a digest or a host (debian:12, localhost/foo:1). */
bool rrt_image_name_like(const char *arg);

/* Runs the image: makes the bundle (a generated config.json) under ROOT/.run/ID, the
 * container's upper and work directories under the store, and calls the ordinary
 * create/start/delete path. *status is the container's exit status; on an error, 127 when the
 * command was not found, 126 when it could not be executed (podman's), 1 otherwise. */
int rrt_image_run(const struct rrt_global *g, const struct rrt_run_image_opts *o, int *status,
                  struct rrt_error *err);

/* After `delete ID`: removes what the desktop run made for ID (its bundle and, when run with
 * --rm, its upper directory). Nothing to do for other containers. */
int rrt_image_forget(const struct rrt_global *g, const char *id, struct rrt_error *err);

/* `images`: the recorded images, as `podman images` prints them. */
struct rrt_images_opts {
  bool quiet, no_trunc, json, noheading;
};
int rrt_images_print(const char *store, const struct rrt_images_opts *o, struct rrt_error *err);
/* `rmi NAME...` (or all): a name of an image that has others is untagged; otherwise the image's
 * record goes, with its layers no other image and no container (of root) uses. An image a
 * container uses is refused, naming it, unless force (then its layers stay while used). */
int rrt_images_remove(const char *store, const char *root, char *const *refs, size_t n, bool all,
                      bool force, struct rrt_error *err);
/* `store prune`: the images without a name, then the layers and blobs no image and no container
 * (of root) uses. */
int rrt_store_prune(const char *store, const char *root, struct rrt_error *err);

/* `store ls`: what the store holds (images, layers, containers' kept changes) with sizes. */
int rrt_store_list(const char *store, struct rrt_error *err);
/* `store rm NAME`: a container's kept changes, or a layer (sha256:HEX). A container that still
 * exists under root keeps its directory; a layer an image record or a container uses is refused
 * naming it (force: an image's layer goes all the same; the image then counts as missing, and
 * the next run pulls or imports it again). */
int rrt_store_remove(const char *store, const char *root, const char *name, bool force,
                     struct rrt_error *err);

/* The store directory: --storage, else $XDG_DATA_HOME/rootlessrt, else ~/.local/share/rootlessrt.
 */
char *rrt_store_path(const char *flag);
/* The store is the caller's and no one else can write it or what is above it (trust.h): whoever
 * could would choose the layers a container runs. make: created (0700, parents 0755) first;
 * otherwise a store that does not exist is fine. */
int rrt_store_trust(const char *store, bool make, struct rrt_error *err);

#endif
