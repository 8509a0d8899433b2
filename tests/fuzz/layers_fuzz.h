/* layers_fuzz.h: image layers made on disk from a fuzz input, for the harnesses of image/merged.c
 * (fuzz_image_merged) and image/user.c (fuzz_image_user): up to LAYERS directories, top first,
 * in a scratch directory (on /dev/shm where there is one) that also holds a canary file outside
 * the layers. Everything is made relative to directory fds opened without following links, so a
 * symlink the input made never sends the harness itself outside its layers. */
#ifndef ROOTLESSRT_LAYERS_FUZZ_H
#define ROOTLESSRT_LAYERS_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "rootlessrt/rmtree.h"
#include "rootlessrt/util.h"

#define LAYERS 4
#define CANARY_TEXT "CANARY-OUTSIDE-THE-LAYERS"

struct fuzz_layers {
  char dir[64];             /* the scratch directory */
  char *lowers[LAYERS + 1]; /* DIR/layers/N, NULL-terminated after n */
  int fds[LAYERS];
  size_t n;
};

/* The scratch directory, its canary (DIR/outside/etc/passwd and DIR/etc/passwd), made once. */
static inline struct fuzz_layers *fuzz_layers_get(void)
{
  static struct fuzz_layers fl;
  if (fl.dir[0])
    return &fl;
  snprintf(fl.dir, sizeof(fl.dir), "%s/rrt-fuzz-layers.XXXXXX",
           access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  if (!mkdtemp(fl.dir))
    abort();
  const char *const canaries[] = {"outside", "outside/etc", "etc"};
  for (size_t i = 0; i < 3; i++) {
    cleanup_free char *p = xasprintf("%s/%s", fl.dir, canaries[i]);
    mkdir(p, 0755);
  }
  const char *const files[] = {"outside/etc/passwd", "etc/passwd", "etc/group"};
  for (size_t i = 0; i < 3; i++) {
    cleanup_free char *p = xasprintf("%s/%s", fl.dir, files[i]);
    rrt_write_file(p, CANARY_TEXT, strlen(CANARY_TEXT), O_CREAT | O_TRUNC, 0644, NULL);
  }
  return &fl;
}

/* Fresh empty layers 0..n-1. */
static inline void fuzz_layers_reset(struct fuzz_layers *fl, size_t n)
{
  for (size_t i = 0; i < fl->n; i++) {
    close(fl->fds[i]);
    free(fl->lowers[i]);
    fl->lowers[i] = NULL;
  }
  cleanup_close int dfd = open(fl->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || rrt_remove_tree_at(dfd, "layers", 0, NULL) < 0 || mkdirat(dfd, "layers", 0755) < 0)
    abort();
  fl->n = n;
  for (size_t i = 0; i < n; i++) {
    fl->lowers[i] = xasprintf("%s/layers/%zu", fl->dir, i);
    if (mkdir(fl->lowers[i], 0755) < 0)
      abort();
    fl->fds[i] = open(fl->lowers[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fl->fds[i] < 0)
      abort();
  }
  fl->lowers[n] = NULL;
}

/* The directory that holds path's last component, inside layer fd (parents made as
 * directories), and that component; -1 when the path leaves the layer or crosses a non-directory.
 */
static inline int fuzz_parent_of(int layer, const char *path, char **last)
{
  cleanup_free char *copy = xstrdup(path);
  int cur = dup(layer);
  char *save = NULL, *prev = NULL;
  for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
    if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0) {
      close(cur);
      return -1;
    }
    if (prev) {
      mkdirat(cur, prev, 0755);
      int next = openat(cur, prev, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close(cur);
      if (next < 0)
        return -1;
      cur = next;
    }
    prev = c;
  }
  if (!prev) {
    close(cur);
    return -1;
  }
  *last = xstrdup(prev);
  return cur;
}

enum fuzz_kind { FUZZ_DIR, FUZZ_FILE, FUZZ_LINK, FUZZ_WHITEOUT, FUZZ_OPAQUE };

/* One entry in layer fd: a directory, a file of text, a symlink to text, a whiteout (a 0:0
 * character device, where mknod is allowed), an opaque directory (user.overlay.opaque). */
static inline void fuzz_make(int layer, enum fuzz_kind kind, const char *path, const char *text)
{
  char *last = NULL;
  int dir = fuzz_parent_of(layer, path, &last);
  if (dir < 0)
    return;
  if (kind == FUZZ_DIR || kind == FUZZ_OPAQUE) {
    mkdirat(dir, last, 0755);
    if (kind == FUZZ_OPAQUE) {
      int fd = openat(dir, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) {
        (void)fsetxattr(fd, "user.overlay.opaque", "y", 1, 0);
        close(fd);
      }
    }
  } else if (kind == FUZZ_FILE) {
    int fd = openat(dir, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      (void)rrt_write_all(fd, text, strlen(text));
      close(fd);
    }
  } else if (kind == FUZZ_LINK) {
    (void)symlinkat(text, dir, last);
  } else {
    (void)mknodat(dir, last, S_IFCHR | 0600, makedev(0, 0));
  }
  free(last);
  close(dir);
}

#endif
