/* rmtree.c: removing a tree that a container (or an image) wrote, and that a process of it may
 * still be changing while we remove it: every step relative to a directory fd we hold, nothing
 * followed, nothing on another mount entered. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootlessrt/escape.h"
#include "rootlessrt/rmtree.h"
#include "rootlessrt/util.h"

/* Levels of the walk that keep their directory fd open; a deeper tree closes the shallowest and
 * reopens it through ".." (checked to be the same directory) on the way back up, so any depth
 * fits in a few fds. */
#define FD_WINDOW 64
/* How often a directory that is not empty after its listing was removed is listed again (a
 * process still writing into it): past that, the error says so. */
#define MAX_PASSES 32

struct level {
  int fd;
  dev_t dev;
  ino_t ino;
  char *name; /* in the level above */
  char **names;
  size_t n, next;
  int passes;
  bool kept; /* something in it was left on purpose (a mount) or could not be removed */
};

struct rmtree {
  const char *top;
  dev_t dev;
  uint64_t mnt_id;
  bool have_mnt_id;
  struct level *lv;
  size_t depth, cap;
  struct rrt_error *err;
  bool failed;
};

/* A name from the tree as it may be printed: a container wrote it, so rrt_escape_ascii's form. */
static void append_escaped(char **out, size_t *len, const char *s)
{
  cleanup_free char *e = rrt_escape_ascii(s);
  size_t n = strlen(e);
  *out = xrealloc(*out, *len + n + 1);
  memcpy(*out + *len, e, n + 1);
  *len += n;
}

/* top/a/b/name: where in the tree a problem is. */
static char *shown_path(const struct rmtree *t, const char *name)
{
  char *out = xstrdup(t->top);
  size_t len = strlen(out);
  for (size_t i = 1; i < t->depth; i++) {
    append_escaped(&out, &len, "/");
    append_escaped(&out, &len, t->lv[i].name);
  }
  if (name) {
    append_escaped(&out, &len, "/");
    append_escaped(&out, &len, name);
  }
  return out;
}

/* The first problem is the one reported; the walk goes on. */
__attribute__((format(printf, 4, 5))) static void problem(struct rmtree *t, const char *name,
                                                          int errnum, const char *fmt, ...)
{
  if (t->failed)
    return;
  t->failed = true;
  if (!t->err)
    return;
  cleanup_free char *where = shown_path(t, name);
  va_list ap;
  va_start(ap, fmt);
  cleanup_free char *what = xvasprintf(fmt, ap);
  va_end(ap);
  rrt_error_set(t->err, errnum, "remove %s: %s", where, what);
}

static bool mnt_id_of(int fd, uint64_t *id)
{
  struct statx stx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 ||
      !(stx.stx_mask & STATX_MNT_ID))
    return false;
  *id = stx.stx_mnt_id;
  return true;
}

/* Whether the directory open at fd is on the top's mount. */
static bool same_mount(const struct rmtree *t, int fd, const struct stat *st)
{
  if (st->st_dev != t->dev)
    return false;
  uint64_t id;
  return !t->have_mnt_id || !mnt_id_of(fd, &id) || id == t->mnt_id;
}

static void free_names(struct level *l)
{
  for (size_t i = 0; i < l->n; i++)
    free(l->names[i]);
  free(l->names);
  l->names = NULL;
  l->n = l->next = 0;
}

/* The entries of the level's directory, read now (later changes are seen by the next pass). */
static int list_level(struct level *l)
{
  free_names(l);
  int dfd = openat(l->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return -1;
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return -1;
  }
  size_t cap = 0;
  struct dirent *de;
  errno = 0;
  while ((de = readdir(d))) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    if (l->n == cap) {
      cap = cap ? cap * 2 : 16;
      l->names = xrealloc(l->names, cap * sizeof(char *));
    }
    l->names[l->n++] = xstrdup(de->d_name);
    errno = 0;
  }
  int saved = errno;
  closedir(d);
  errno = saved;
  return saved ? -1 : 0;
}

/* A directory we own but may not list or change (an image's 0555, overlayfs' mode-0 work/work):
 * made 0700 through an O_PATH fd of it, never by name (the name may be a symlink by now). */
static int open_forced(struct rmtree *t, int parent, const char *name)
{
  cleanup_close int pfd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (pfd < 0 || fstat(pfd, &st) < 0)
    return -1;
  if (!same_mount(t, pfd, &st)) {
    errno = EXDEV;
    return -1;
  }
  if (st.st_uid != geteuid()) {
    errno = EACCES;
    return -1;
  }
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
  if (chmod(proc, 0700) < 0)
    return -1;
  return openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* One entry of the current level: removed if it is not a directory; a directory is opened (fd
 * and stat into *cfd, *cst) and 1 returned, for the caller to walk into. */
static int remove_entry(struct rmtree *t, struct level *l, const char *name, int *cfd,
                        struct stat *cst)
{
  /* Each retry follows a change of what name is (a directory became a symlink, a file a
   * directory); a process that keeps swapping it wins only a "could not" in the error. */
  for (int tries = 0; tries < 16; tries++) {
    struct stat st;
    if (fstatat(l->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      if (errno == ENOENT)
        return 0;
      problem(t, name, errno, "stat");
      l->kept = true;
      return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (unlinkat(l->fd, name, 0) == 0 || errno == ENOENT)
        return 0;
      if (errno == EISDIR)
        continue;
      problem(t, name, errno, "unlink");
      l->kept = true;
      return 0;
    }
    if (st.st_dev != t->dev) {
      problem(t, name, 0, "a mount point: not crossed");
      l->kept = true;
      return 0;
    }
    int fd = openat(l->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES)
      fd = open_forced(t, l->fd, name);
    if (fd < 0) {
      if (errno == ENOENT)
        return 0;
      if (errno == ENOTDIR || errno == ELOOP)
        continue; /* no longer a directory */
      problem(t, name, errno == EXDEV ? 0 : errno,
              errno == EXDEV ? "a mount point: not crossed" : "open");
      l->kept = true;
      return 0;
    }
    if (fstat(fd, cst) < 0 || !same_mount(t, fd, cst)) {
      close(fd);
      problem(t, name, 0, "a mount point: not crossed");
      l->kept = true;
      return 0;
    }
    if ((cst->st_mode & 0700) != 0700 && cst->st_uid == geteuid())
      (void)fchmod(fd, 0700);
    *cfd = fd;
    return 1;
  }
  problem(t, name, 0, "changed type 16 times while being removed");
  l->kept = true;
  return 0;
}

static void push(struct rmtree *t, int fd, const struct stat *st, char *name)
{
  if (t->depth == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 16;
    t->lv = xrealloc(t->lv, t->cap * sizeof(*t->lv));
  }
  t->lv[t->depth++] = (struct level){.fd = fd, .dev = st->st_dev, .ino = st->st_ino, .name = name};
  if (t->depth > FD_WINDOW) {
    struct level *old = &t->lv[t->depth - 1 - FD_WINDOW];
    if (old->fd >= 0) {
      close(old->fd);
      old->fd = -1;
    }
  }
}

/* The level above the deepest one, its fd open again if the window closed it: through "..",
 * which must be the very directory we came from (a rename of ours away stops the walk). */
static int parent_fd(struct rmtree *t)
{
  struct level *child = &t->lv[t->depth - 1], *up = &t->lv[t->depth - 2];
  if (up->fd >= 0)
    return up->fd;
  int fd = openat(child->fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == up->dev && st.st_ino == up->ino) {
    up->fd = fd;
    return fd;
  }
  if (fd >= 0)
    close(fd);
  return -1;
}

static void pop(struct rmtree *t)
{
  struct level *l = &t->lv[--t->depth];
  if (l->fd >= 0)
    close(l->fd);
  free_names(l);
  free(l->name);
}

/* The deepest level is listed through: remove its directory from the level above, or list it
 * again if a process put something in it meanwhile. Returns 1 when it was listed again. */
static int finish_level(struct rmtree *t, int top_dirfd, const char *top_name, unsigned flags)
{
  struct level *l = &t->lv[t->depth - 1];
  bool top = t->depth == 1;
  int r;
  if (top && (flags & RRT_RMTREE_KEEP_TOP)) {
    /* Empty when a fresh listing finds nothing. */
    if (l->kept)
      return 0;
    if (list_level(l) < 0) {
      problem(t, NULL, errno, "list");
      return 0;
    }
    if (l->n == 0)
      return 0;
    r = -1;
    errno = ENOTEMPTY;
  } else {
    int pfd = top ? top_dirfd : parent_fd(t);
    if (pfd == -1 && !top) {
      problem(t, NULL, 0, "moved while being removed: stopped");
      return 0;
    }
    r = unlinkat(pfd, top ? top_name : l->name, AT_REMOVEDIR);
    if (r == 0 || errno == ENOENT)
      return 0;
    /* Its name is something else now: the directory was moved (within the level above, or the
     * level above will not be empty and is listed again). */
    if (!top && errno == ENOTDIR)
      return 0;
  }
  if (errno == ENOTEMPTY && !l->kept && l->passes + 1 < MAX_PASSES) {
    l->passes++;
    if (top && (flags & RRT_RMTREE_KEEP_TOP))
      return 1; /* listed just now */
    if (list_level(l) == 0)
      return 1;
  }
  if (!l->kept)
    problem(t, NULL, errno, "rmdir");
  return 0;
}

int rrt_remove_tree_at(int dirfd, const char *name, unsigned flags, struct rrt_error *err)
{
  struct rmtree t = {.top = name, .err = err};
  struct stat st;
  for (int tries = 0;; tries++) {
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      return errno == ENOENT ? 0 : rrt_error_errno(err, "remove %s: stat", name);
    if (S_ISDIR(st.st_mode))
      break;
    if (flags & RRT_RMTREE_KEEP_TOP)
      return rrt_error_msgf(err, ENOTDIR, "remove %s: not a directory", name);
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
      return 0;
    if (errno != EISDIR || tries > 8)
      return rrt_error_errno(err, "remove %s", name);
  }
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES) {
    /* The top's mount is whatever it is on: nothing to compare with yet. */
    t.dev = st.st_dev;
    fd = open_forced(&t, dirfd, name);
  }
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    return rrt_error_errno(err, "remove %s: open", name);
  }
  if (fstat(fd, &st) < 0) {
    close(fd);
    return rrt_error_errno(err, "remove %s: stat", name);
  }
  t.dev = st.st_dev;
  t.have_mnt_id = mnt_id_of(fd, &t.mnt_id);
  if ((st.st_mode & 0700) != 0700 && st.st_uid == geteuid())
    (void)fchmod(fd, 0700);
  push(&t, fd, &st, xstrdup(name));
  if (list_level(&t.lv[0]) < 0)
    problem(&t, NULL, errno, "list");

  while (t.depth) {
    struct level *l = &t.lv[t.depth - 1];
    if (l->next < l->n) {
      char *entry = l->names[l->next];
      l->names[l->next++] = NULL;
      int cfd = -1;
      struct stat cst;
      if (remove_entry(&t, l, entry, &cfd, &cst) == 1) {
        push(&t, cfd, &cst, entry);
        if (list_level(&t.lv[t.depth - 1]) < 0) {
          problem(&t, NULL, errno, "list");
          t.lv[t.depth - 1].kept = true;
        }
      } else {
        free(entry);
      }
      continue;
    }
    if (finish_level(&t, dirfd, name, flags) == 1)
      continue;
    if (t.depth > 1 && t.lv[t.depth - 1].kept)
      t.lv[t.depth - 2].kept = true; /* it cannot be empty either */
    if (t.depth > 1 && parent_fd(&t) < 0) {
      /* The way back up is gone: what is left stays, and the error says where. */
      problem(&t, NULL, 0, "moved while being removed: stopped");
      while (t.depth)
        pop(&t);
      break;
    }
    pop(&t);
  }
  free(t.lv);
  return t.failed ? -1 : 0;
}

int rrt_remove_tree(const char *path, struct rrt_error *err)
{
  return rrt_remove_tree_at(AT_FDCWD, path, 0, err);
}
