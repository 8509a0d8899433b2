/* merged.c: a path of an image read as the container will see it: the layers merged top first,
 * whiteouts (0:0 character devices) and opaque directories honoured, symlinks followed across
 * layers (absolute ones against the merged root, never the host), as overlayfs does. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/image.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

#define MAX_LINKS 40 /* as the kernel's path walk */

/* One directory of the merged view: an O_PATH fd per layer that contributes to it, -1 for one
 * that does not. */
struct mdir {
  int *fds;
  size_t n;
};

static void mdir_close(struct mdir *d)
{
  for (size_t i = 0; d->fds && i < d->n; i++)
    if (d->fds[i] >= 0)
      close(d->fds[i]);
  free(d->fds);
  d->fds = NULL;
}

/* Whether the unpacker marked the directory opaque (user.overlay.opaque, or trusted.* as real
 * root). An attribute that cannot be read is an error: guessing would show hidden files. */
static int is_opaque(int fd, const char *where, struct rrt_error *err)
{
  char path[64], val[4];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  const char *const attrs[] = {"user.overlay.opaque", "trusted.overlay.opaque"};
  for (size_t i = 0; i < 2; i++) {
    ssize_t n = getxattr(path, attrs[i], val, sizeof(val));
    if (n == 1 && val[0] == 'y')
      return 1;
    if (n < 0 && errno != ENODATA && errno != ENOTSUP && !(i == 1 && errno == EPERM))
      return rrt_error_errno(err, "%s: read %s", where, attrs[i]);
  }
  return 0;
}

enum kind { ABSENT, DIR_, FILE_, LINK_, OTHER_ };

struct found {
  enum kind kind;
  size_t layer; /* FILE_, LINK_, OTHER_: the layer that has it */
};

/* name in the merged directory d: the top layer that has it decides; a directory merges with the
 * directories below it until an opaque one, a whiteout or a non-directory. */
static int step(char *const *lowers, const struct mdir *d, const char *dpath, const char *name,
                struct mdir *out, struct found *f, struct rrt_error *err)
{
  *f = (struct found){ABSENT, 0};
  out->n = d->n;
  out->fds = xcalloc(d->n + 1, sizeof(int));
  for (size_t i = 0; i < d->n; i++)
    out->fds[i] = -1;
  for (size_t i = 0; i < d->n; i++) {
    if (d->fds[i] < 0)
      continue;
    struct stat st;
    if (fstatat(d->fds[i], name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      if (errno == ENOENT || errno == ENOTDIR)
        continue;
      return rrt_error_errno(err, "%s%s/%s", lowers[i], dpath, name);
    }
    if (S_ISCHR(st.st_mode) && st.st_rdev == 0)
      break; /* a whiteout: nothing below shows */
    if (!S_ISDIR(st.st_mode)) {
      if (f->kind == DIR_)
        break; /* a directory above hides it and what is below it */
      f->kind = S_ISLNK(st.st_mode) ? LINK_ : S_ISREG(st.st_mode) ? FILE_ : OTHER_;
      f->layer = i;
      return 0;
    }
    out->fds[i] = openat(d->fds[i], name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (out->fds[i] < 0)
      return rrt_error_errno(err, "%s%s/%s", lowers[i], dpath, name);
    f->kind = DIR_;
    cleanup_free char *where = xasprintf("%s%s/%s", lowers[i], dpath, name);
    int op = is_opaque(out->fds[i], where, err);
    if (op < 0)
      return -1;
    if (op)
      break;
  }
  return 0;
}

/* The merged directory at the components comps[0..n) (each a directory of the merged view). */
static int open_mdir(char *const *lowers, size_t nl, char **comps, size_t n, struct mdir *d,
                     char **dpath, struct rrt_error *err)
{
  d->n = nl;
  d->fds = xcalloc(nl + 1, sizeof(int));
  for (size_t i = 0; i < nl; i++)
    d->fds[i] = -1;
  for (size_t i = 0; i < nl; i++) {
    d->fds[i] = open(lowers[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (d->fds[i] < 0)
      return rrt_error_errno(err, "the image's layer %s", lowers[i]);
  }
  *dpath = xstrdup("");
  for (size_t k = 0; k < n; k++) {
    struct mdir next = {0};
    struct found f;
    int r = step(lowers, d, *dpath, comps[k], &next, &f, err);
    mdir_close(d);
    *d = next;
    if (r < 0)
      return -1;
    char *p = xasprintf("%s/%s", *dpath, comps[k]);
    free(*dpath);
    *dpath = p;
    if (f.kind != DIR_) /* resolved earlier as one: the layers changed under us */
      return rrt_error_msgf(err, ENOTDIR, "%s: not a directory", p);
  }
  return 0;
}

/* Puts the components of path at the front of the queue q, in order. */
static void push_front(char ***q, size_t *nq, const char *path)
{
  cleanup_free char *copy = xstrdup(path);
  char *save = NULL, **add = NULL;
  size_t na = 0;
  for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
    add = xrealloc(add, (na + 1) * sizeof(char *));
    add[na++] = xstrdup(t);
  }
  *q = xrealloc(*q, (*nq + na + 1) * sizeof(char *));
  /* The queue is kept reversed (the next component last), so prepend = append reversed. */
  for (size_t i = na; i-- > 0;)
    (*q)[(*nq)++] = add[i];
  free(add);
}

static void strv_n_free(char **v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

/* "8 MiB", or "100 bytes" for a limit that is not whole MiB. */
static char *limit_str(size_t max)
{
  return max >= (1u << 20) && max % (1u << 20) == 0 ? xasprintf("%zu MiB", max >> 20)
                                                    : xasprintf("%zu bytes", max);
}

/* Reads the regular file at fd/name, at most max bytes. */
static int read_bounded(int dirfd, const char *name, const char *shown, const char *where,
                        size_t max, char **data, size_t *len, struct rrt_error *err)
{
  cleanup_close int fd =
      openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0)
    return rrt_error_errno(err, "the image's %s (%s)", shown, where);
  if (!S_ISREG(st.st_mode))
    return rrt_error_msgf(err, EINVAL, "the image's %s (%s): not a regular file", shown, where);
  cleanup_free char *lim = limit_str(max);
  if ((unsigned long long)st.st_size > max)
    return rrt_error_msgf(err, EFBIG, "the image's %s (%s) is %lld bytes: more than the %s limit",
                          shown, where, (long long)st.st_size, lim);
  char *buf = xmalloc(max + 2);
  size_t n = 0;
  for (;;) {
    ssize_t r = read(fd, buf + n, max + 1 - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      free(buf);
      return rrt_error_errno(err, "the image's %s (%s)", shown, where);
    }
    if (r == 0 || (n += (size_t)r) > max)
      break;
  }
  if (n > max) {
    free(buf);
    return rrt_error_msgf(err, EFBIG, "the image's %s (%s): more than the %s limit", shown, where,
                          lim);
  }
  buf[n] = '\0';
  *data = buf;
  if (len)
    *len = n;
  return 0;
}

/* A path's walk through the merged view: the directory reached (its layers, its path, the
 * components that lead to it) and the components still to walk, the next one last. */
struct walk {
  char *const *lowers;
  size_t nl;
  struct mdir d;
  char *dpath;
  char **done;
  size_t nd;
  char **q;
  size_t nq;
  int links;
};

static void walk_free(struct walk *w)
{
  mdir_close(&w->d);
  free(w->dpath);
  strv_n_free(w->done, w->nd);
  strv_n_free(w->q, w->nq);
}

/* Opens the merged directory at done[] again: at the start, after "..", after an absolute link. */
static int walk_reopen(struct walk *w, struct rrt_error *err)
{
  mdir_close(&w->d);
  free(w->dpath);
  w->dpath = NULL;
  return open_mdir(w->lowers, w->nl, w->done, w->nd, &w->d, &w->dpath, err);
}

/* Into name, a directory of the merged view whose layers step() opened in next. */
static void walk_enter(struct walk *w, struct mdir *next, char *name)
{
  mdir_close(&w->d);
  w->d = *next;
  char *p = xasprintf("%s/%s", w->dpath, name);
  free(w->dpath);
  w->dpath = p;
  w->done = xrealloc(w->done, (w->nd + 1) * sizeof(char *));
  w->done[w->nd++] = name;
}

/* name, a symlink in the layer `layer`: its target is walked next, from the image's root (never
 * the host's) when it is absolute. */
static int walk_link(struct walk *w, const char *path, const char *name, size_t layer,
                     const char *where, struct rrt_error *err)
{
  char target[4096];
  ssize_t n = readlinkat(w->d.fds[layer], name, target, sizeof(target) - 1);
  if (n < 0)
    return rrt_error_errno(err, "the image's %s: readlink %s", path, where);
  target[n] = '\0';
  if (++w->links > MAX_LINKS)
    return rrt_error_msgf(err, ELOOP, "the image's %s: more than %d symlinks", path, MAX_LINKS);
  if (target[0] == '/') {
    strv_n_free(w->done, w->nd);
    w->done = NULL;
    w->nd = 0;
    if (walk_reopen(w, err) < 0)
      return -1;
  }
  push_front(&w->q, &w->nq, target);
  return 0;
}

/* Walks what is left of path and reads the file it ends at; 0 with *data NULL when the image has
 * no such file. */
static int walk_to_file(struct walk *w, const char *path, size_t max, char **data, size_t *len,
                        struct rrt_error *err)
{
  while (w->nq) {
    cleanup_free char *name = w->q[--w->nq];
    if (strcmp(name, ".") == 0)
      continue;
    if (strcmp(name, "..") == 0) {
      if (w->nd)
        free(w->done[--w->nd]);
      if (walk_reopen(w, err) < 0)
        return -1;
      continue;
    }
    struct mdir next = {0};
    struct found f;
    if (step(w->lowers, &w->d, w->dpath, name, &next, &f, err) < 0) {
      mdir_close(&next);
      return -1;
    }
    if (f.kind == DIR_) {
      walk_enter(w, &next, steal_ptr(&name));
      continue;
    }
    mdir_close(&next);
    cleanup_free char *where =
        xasprintf("%s%s/%s", f.kind == ABSENT ? "" : w->lowers[f.layer], w->dpath, name);
    if (f.kind == ABSENT || (f.kind != LINK_ && w->nq))
      return 0; /* not in the image (or a file used as a directory, ENOTDIR): absent */
    if (f.kind == LINK_) {
      if (walk_link(w, path, name, f.layer, where, err) < 0)
        return -1;
      continue;
    }
    if (f.kind == OTHER_)
      return rrt_error_msgf(err, EINVAL, "the image's %s (%s): not a regular file", path, where);
    return read_bounded(w->d.fds[f.layer], name, path, where, max, data, len, err);
  }
  return rrt_error_msgf(err, EISDIR, "the image's %s: a directory", path);
}

static int read_merged(char *const *lowers, const char *path, size_t max, char **data, size_t *len,
                       struct rrt_error *err)
{
  *data = NULL;
  struct walk w = {.lowers = lowers};
  while (lowers && lowers[w.nl])
    w.nl++;
  push_front(&w.q, &w.nq, path);
  int r = walk_reopen(&w, err) < 0 ? -1 : walk_to_file(&w, path, max, data, len, err);
  walk_free(&w);
  return r;
}

/* The read again as root of the user namespace (rrt_userns_call): 'A' (absent) or 'F' and the
 * file's bytes into the memfd out. */
struct userns_read {
  char *const *lowers;
  const char *path;
  size_t max;
  int out;
};

static int read_in_userns(void *arg, struct rrt_error *err)
{
  const struct userns_read *a = arg;
  cleanup_free char *data = NULL;
  size_t len = 0;
  if (read_merged(a->lowers, a->path, a->max, &data, &len, err) < 0)
    return -1;
  if (rrt_write_all(a->out, data ? "F" : "A", 1) < 0 ||
      (data && rrt_write_all(a->out, data, len) < 0))
    return rrt_error_errno(err, "the image's %s: pass it on", a->path);
  return 0;
}

int rrt_image_read_file(char *const *lowers, const char *path, size_t max, char **data, size_t *len,
                        struct rrt_error *err)
{
  if (read_merged(lowers, path, max, data, len, err) == 0)
    return 0;
  /* A layer's file owned by a subordinate id and not readable by others (a 0600 /etc/passwd of
   * uid 5) is what the container's root reads, as podman does: read it as root of the user
   * namespace rather than refuse the image. */
  if (!err || err->errnum != EACCES || rrt_host_privileged())
    return -1;
  cleanup_close int fd = memfd_create("rrt-image-file", MFD_CLOEXEC);
  if (fd < 0)
    return -1; /* the EACCES error stands */
  struct rrt_error uerr = RRT_ERROR_INIT;
  struct userns_read a = {.lowers = lowers, .path = path, .max = max, .out = fd};
  if (rrt_userns_call(read_in_userns, &a, &uerr) < 0) {
    rrt_error_move(err, &uerr);
    return -1;
  }
  rrt_error_clear(err);
  cleanup_free char *buf = NULL;
  size_t n = 0;
  if (lseek(fd, 0, SEEK_SET) < 0 || rrt_read_fd(fd, &buf, &n, err) < 0 || n == 0)
    return rrt_error_msgf(err, EIO, "the image's %s: read in the user namespace: no answer", path);
  if (buf[0] == 'A')
    return 0;
  *data = xmalloc(n);
  memcpy(*data, buf + 1, n - 1);
  (*data)[n - 1] = '\0';
  if (len)
    *len = n - 1;
  return 0;
}
