/* tmpcopyup.c: a tmpfs mount with the tmpcopyup option starts as a copy of the directory it
 * covers (podman's --tmpfs asks for it by default): files, directories, symlinks and fifos
 * with their owners, modes and times. Inside the container's mount namespace, before
 * pivot_root; every name is opened relative to a directory fd with O_NOFOLLOW, so a symlink in
 * the image is copied as a symlink and never followed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

#define COPY_MAX_DEPTH 64

static int copy_dir(int src, int dst, int depth, struct rrt_error *err);

static int copy_data(int in, int out)
{
  for (;;) {
    ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 20, 0);
    if (n == 0)
      return 0;
    if (n > 0)
      continue;
    if (errno == EINTR)
      continue;
    if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
      return -1;
    break; /* no copy_file_range between these: read and write */
  }
  char buf[65536];
  for (;;) {
    ssize_t n = read(in, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return (int)n;
    if (rrt_write_all(out, buf, (size_t)n) < 0)
      return -1;
  }
}

/* Owner first (chown clears set-id bits), then mode, then times. */
static int set_attrs(int dst, const char *name, const struct stat *st, bool is_link)
{
  int nf = is_link ? AT_SYMLINK_NOFOLLOW : 0;
  if (fchownat(dst, name, st->st_uid, st->st_gid, nf) < 0 && errno != EPERM && errno != EINVAL)
    return -1;
  if (!is_link && fchmodat(dst, name, st->st_mode & 07777, 0) < 0)
    return -1;
  struct timespec t[2] = {st->st_atim, st->st_mtim};
  return utimensat(dst, name, t, nf);
}

static int copy_entry(int src, int dst, const char *name, int depth, struct rrt_error *err)
{
  struct stat st;
  if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return rrt_error_errno(err, "%s", name);
  if (S_ISDIR(st.st_mode)) {
    if (mkdirat(dst, name, 0700) < 0)
      return rrt_error_errno(err, "mkdir %s", name);
    cleanup_close int s = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    cleanup_close int d = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (s < 0 || d < 0)
      return rrt_error_errno(err, "open %s", name);
    if (copy_dir(s, d, depth + 1, err) < 0)
      return rrt_error_wrap(err, "%s", name);
  } else if (S_ISREG(st.st_mode)) {
    cleanup_close int s = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    cleanup_close int d = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (s < 0 || d < 0 || copy_data(s, d) < 0)
      return rrt_error_errno(err, "copy %s", name);
  } else if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlinkat(src, name, target, sizeof(target) - 1);
    if (n < 0)
      return rrt_error_errno(err, "readlink %s", name);
    target[n] = '\0';
    if (symlinkat(target, dst, name) < 0)
      return rrt_error_errno(err, "symlink %s", name);
  } else if (S_ISFIFO(st.st_mode)) {
    if (mkfifoat(dst, name, 0600) < 0)
      return rrt_error_errno(err, "mkfifo %s", name);
  } else {
    rrt_debug("tmpcopyup: %s is a device or socket: not copied", name);
    return 0;
  }
  if (set_attrs(dst, name, &st, S_ISLNK(st.st_mode)) < 0)
    return rrt_error_errno(err, "set the owner, mode and times of %s", name);
  return 0;
}

static int copy_dir(int src, int dst, int depth, struct rrt_error *err)
{
  if (depth > COPY_MAX_DEPTH)
    return rrt_error_set(err, ELOOP, "more than %d levels of directories", COPY_MAX_DEPTH);
  int fd = dup(src);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (!d) {
    if (fd >= 0)
      close(fd);
    return rrt_error_errno(err, "read the directory");
  }
  int r = 0;
  struct dirent *de;
  while (r == 0 && (errno = 0, de = readdir(d))) {
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
      r = copy_entry(src, dst, de->d_name, depth, err);
  }
  if (r == 0 && errno)
    r = rrt_error_errno(err, "read the directory");
  closedir(d);
  return r;
}

int rrt_tmpfs_copyup(int rootfd, const char *dest, const char *source, unsigned long flags,
                     const char *data, struct rrt_error *err)
{
  /* The directory the tmpfs will cover, held open: it stays readable underneath. */
  cleanup_close int under = rrt_open_in_root(rootfd, dest, RRT_CREATE_DIR, err);
  if (under < 0)
    return -1;
  cleanup_close int src = openat(under, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (src < 0)
    return rrt_error_errno(err, "tmpcopyup: open %s", dest);
  /* Writable while it is filled; read-only after, when asked. */
  if (rrt_fs_mount(rootfd, dest, source, "tmpfs", flags & ~MS_RDONLY, data, err) < 0)
    return -1;
  cleanup_close int top = rrt_open_in_root(rootfd, dest, RRT_CREATE_NONE, err);
  if (top < 0)
    return -1;
  cleanup_close int dst = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dst < 0)
    return rrt_error_errno(err, "tmpcopyup: open the tmpfs on %s", dest);
  if (copy_dir(src, dst, 0, err) < 0)
    return rrt_error_wrap(err, "tmpcopyup: copy %s into its tmpfs", dest);
  if ((flags & MS_RDONLY) && rrt_make_readonly(top, false, err) < 0)
    return rrt_error_wrap(err, "tmpcopyup: make the tmpfs on %s read-only", dest);
  return 0;
}
