/* open.c: an image reference to layer directories: a root directory is used in place (the
 * overlay never writes to it); oci:, oci-archive: and docker-archive: go through the store. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "manifest.h"
#include "names.h"
#include "rootlessrt/escape.h"
#include "rootlessrt/log.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

/* The mount points strictly under dir (from /proc/self/mountinfo, as escaped there), ", "-joined
 * (at most three named, then how many more), or NULL when there are none. */
static char *mounts_under(const char *dir)
{
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f)
    return NULL;
  cleanup_free char *prefix = strcmp(dir, "/") == 0 ? xstrdup("/") : xasprintf("%s/", dir);
  char *line = NULL, *names = NULL;
  size_t cap = 0, n = 0;
  while (getline(&line, &cap, f) > 0) {
    char mp[4096];
    if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 || strcmp(mp, dir) == 0 ||
        strncmp(mp, prefix, strlen(prefix)) != 0)
      continue;
    if (n++ < 3) {
      cleanup_free char *shown = rrt_escape(mp); /* a path: UTF-8 stays, as mountinfo escaped it */
      char *m = xasprintf("%s%s%s", names ? names : "", names ? ", " : "", shown);
      free(names);
      names = m;
    }
  }
  free(line);
  fclose(f);
  if (n > 3) {
    char *m = xasprintf("%s and %zu more", names, n - 3);
    free(names);
    names = m;
  }
  return names;
}

static int open_root_dir(const char *path, struct rrt_image *img, struct rrt_error *err)
{
  char real[4096];
  struct stat st;
  if (!realpath(path, real) || stat(real, &st) < 0)
    return rrt_error_errno(err, "run: image or root directory %s", path);
  if (!S_ISDIR(st.st_mode))
    return rrt_error_msgf(err, ENOTDIR,
                          "run: %s is not a root directory (an image needs its transport: "
                          "oci:DIR, oci-archive:FILE or docker-archive:FILE)",
                          path);
  /* In the user namespace of a rootless run, the mounts under the directory are locked to it:
   * the kernel's overlayfs cannot take it as a layer ("failed to clone lowerpath", EINVAL), and
   * fuse-overlayfs's server is given the directory alone. Said before anything is made. */
  cleanup_free char *under = rrt_host_privileged() ? NULL : mounts_under(real);
  if (under) {
    cleanup_free char *shown = rrt_escape(real); /* a path, not a name */
    return rrt_error_msgf(err, EBUSY,
                          "run: %s cannot be a container's copy-on-write root: filesystems are "
                          "mounted under it (%s), and in a rootless run's user namespace those "
                          "mounts are locked to it, so neither overlayfs nor fuse-overlayfs can "
                          "use it as a layer; run a directory with no mounts under it (a copy of "
                          "the tree) or an image",
                          shown, under);
  }
  /* overlayfs takes ':' and ',' as separators in lowerdir. */
  if (strpbrk(real, ":,"))
    return rrt_error_msgf(err, EINVAL,
                          "run: %s: a root directory path with ':' or ',' cannot be "
                          "an overlay layer",
                          real);
  img->lowers = xcalloc(2, sizeof(char *));
  img->lowers[0] = xstrdup(real);
  return 0;
}

/* A stored image is for the platform --platform asks for (OS/ARCH[/VARIANT]), or without it for
 * this machine's (a pull --platform linux/arm64 NAME recorded NAME too). */
static bool platform_fits(const struct rrt_image_config *c, const char *platform)
{
  if (!platform) {
    struct rrt_error e = RRT_ERROR_INIT;
    bool fits = rrt_image_check_platform(c, &e) == 0;
    rrt_error_clear(&e);
    return fits;
  }
  cleanup_free char *want =
      xasprintf("%s/%s%s%s", c->os ? c->os : "linux", c->architecture ? c->architecture : "",
                c->variant && *c->variant ? "/" : "", c->variant ? c->variant : "");
  return strcmp(want, platform) == 0 ||
         (strncmp(want, platform, strlen(platform)) == 0 && want[strlen(platform)] == '/');
}

/* A registry image (docker://REF, or a name that is not a path) by podman's --pull policy: the
 * store's record of it when there is one (missing, never), else (or always, newer) from the
 * registry, recorded for the next run; newer runs the stored one when the registry cannot be
 * asked, saying so. docker://REF names its registry: asked each time (always) unless --pull
 * says otherwise. */
static int open_registry(const char *ref, bool docker, const char *store,
                         const struct rrt_pull_opts *given, struct rrt_image *img,
                         struct rrt_error *err)
{
  struct rrt_pull_opts opts = *given;
  const struct rrt_pull_opts *po = &opts;
  if (docker && !given->policy_set)
    opts.policy = RRT_PULL_ALWAYS;
  const char *name = docker ? ref + 9 : ref;
  cleanup_free char *shown = rrt_names_shown(ref);
  cleanup_free char *manifest = NULL, *resolved = NULL;
  struct rrt_image stored = {0};
  bool have = false;
  struct rrt_error why = RRT_ERROR_INIT; /* why a record could not be used */
  if (po->policy != RRT_PULL_ALWAYS) {
    int f = rrt_names_lookup(store, name, docker, &manifest, &resolved, err);
    if (f < 0)
      return rrt_error_wrap(err, "run: %s", shown);
    have = f == 0 && rrt_image_open_stored(store, manifest, &stored, &why) == 0;
    if (have && !platform_fits(&stored.config, po->platform)) {
      rrt_error_msgf(&why, ENOENT, "it is for another platform than %s",
                     po->platform ? po->platform : "this machine's");
      rrt_image_free(&stored);
      have = false;
    }
    if (f == 0 && !have)
      rrt_debug("run: %s: the store's record of it cannot be used (%s): pulled again", shown,
                rrt_error_msg(&why));
  }
  if (have && po->policy != RRT_PULL_NEWER) {
    rrt_debug("run: %s: the store's %s", shown, resolved);
    *img = stored;
    rrt_error_clear(&why);
    return 0;
  }
  if (po->policy == RRT_PULL_NEVER) {
    int r = rrt_error_msgf(err, ENOENT,
                           "run: %s: no such image in the store (--pull=never)%s%s%s: `rootlessrt "
                           "images` lists what it holds",
                           shown, why.msg ? " (its record: " : "", why.msg ? why.msg : "",
                           why.msg ? ")" : "");
    rrt_error_clear(&why);
    return r;
  }
  rrt_error_clear(&why);
  bool short_names = !docker;
  int r = rrt_image_pull(name, short_names, po, store, img, err);
  if (r < 0 && have) { /* newer: the registry could not be asked */
    rrt_warn("run: %s: the registry could not be asked (%s): running the stored %s", shown,
             rrt_error_msg(err), resolved);
    rrt_error_clear(err);
    rrt_image_free(img);
    *img = stored;
    return 0;
  }
  rrt_image_free(&stored);
  return r < 0 ? rrt_error_wrap(err, "run: %s", shown) : 0;
}

int rrt_image_open(const char *ref, const char *store, const struct rrt_pull_opts *po,
                   struct rrt_image *img, struct rrt_error *err)
{
  static const struct rrt_pull_opts none = {0};
  if (!po)
    po = &none;
  if (strncmp(ref, "docker://", 9) == 0)
    return open_registry(ref, true, store, po, img, err);
  if (strncmp(ref, "oci:", 4) == 0 || strncmp(ref, "oci-archive:", 12) == 0 ||
      strncmp(ref, "docker-archive:", 15) == 0)
    return rrt_image_import(ref, store, NULL, img, err);
  /* A registry image name that is not a path (debian:12, localhost/foo:1, alpine): from the
   * store, or pulled as podman would, a short name through registries.conf. */
  /* A path with '/' and neither host, tag nor digest (rootfs/x) stays a directory. */
  bool qualified;
  if (access(ref, F_OK) < 0 && errno == ENOENT && rrt_image_name_parse(ref, &qualified) &&
      (qualified || !strchr(ref, '/')))
    return open_registry(ref, false, store, po, img, err);
  return open_root_dir(ref, img, err);
}
