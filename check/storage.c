/* storage.c: the check's storage directory item: its filesystem, user xattrs, and overlayfs
 * with its upper directory there, tried in a throwaway directory removed afterwards. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "check_internal.h"
#include "rootlessrt/util.h"

static char *storage_dir(const struct rrt_check *c)
{
  if (c->storage && *c->storage)
    return xstrdup(c->storage);
  const char *data = getenv("XDG_DATA_HOME");
  if (data && data[0] == '/')
    return xasprintf("%s/rootlessrt", data);
  const char *home = getenv("HOME");
  return xasprintf("%s/.local/share/rootlessrt", home && *home ? home : "/");
}

/* The directory itself, or its nearest existing ancestor (malloc'd). */
static char *existing(const char *dir)
{
  char *d = xstrdup(dir);
  struct stat st;
  while (stat(d, &st) < 0 || !S_ISDIR(st.st_mode)) {
    char *slash = strrchr(d, '/');
    if (!slash || slash == d) {
      strcpy(d, "/");
      break;
    }
    *slash = '\0';
  }
  return d;
}

/* 0, or why a user.* xattr cannot be set on a new file in dir. */
static int try_xattr(const char *dir)
{
  cleanup_close int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
    return errno;
  if (fd < 0) { /* no O_TMPFILE here (NFS, vfat): a named file, removed at once */
    cleanup_free char *tmp = xasprintf("%s/.rootlessrt-check-XXXXXX", dir);
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
      return errno;
    unlink(tmp);
  }
  if (fsetxattr(fd, "user.rootlessrt.check", "1", 1, 0) < 0)
    return errno;
  return 0;
}

/* Removes what the overlay trial made (a few levels of directories). */
static void remove_tree(int parent, const char *name, int depth)
{
  if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || depth > 4)
    return;
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return;
  fchmod(fd, 0700);
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      e->d_type == DT_DIR ? remove_tree(dirfd(d), e->d_name, depth + 1)
                          : (void)unlinkat(dirfd(d), e->d_name, 0);
  closedir(d);
  unlinkat(parent, name, AT_REMOVEDIR);
}

/* errno of an overlay mount with its upper directory in dir; -1 not tried; -2 no tmp dir. */
static int try_upper(const char *dir)
{
  cleanup_free char *tmp = xasprintf("%s/.rootlessrt-check-XXXXXX", dir);
  if (!mkdtemp(tmp))
    return -2;
  int r = check_try_overlay(tmp);
  remove_tree(AT_FDCWD, tmp, 0);
  return r;
}

static char *storage_fix(const struct rrt_check *c)
{
  return xasprintf("mkdir -m 0700 -p /var/tmp/%s && export XDG_DATA_HOME=/var/tmp/%s  # a local "
                   "disk",
                   c->user, c->user);
}

void check_storage(struct rrt_check *c)
{
  cleanup_free char *dir = storage_dir(c);
  cleanup_free char *at = existing(dir);
  cleanup_free char *where =
      strcmp(at, dir) == 0 ? xstrdup(dir) : xasprintf("%s (not made yet; tried in %s)", dir, at);
  struct statfs fs;
  char buf[32];
  const char *type = statfs(at, &fs) == 0 ? check_fs_name((long)fs.f_type, buf) : "?";
  if (access(at, W_OK | X_OK) < 0) {
    check_add(c, "storage", RRT_CHECK_WARN, NULL, "%s on %s: not writable by you: %s", where, type,
              strerror(errno));
    return;
  }
  int x = try_xattr(at);
  int o = try_upper(at);
  if (x)
    check_add(c, "storage", RRT_CHECK_WARN, storage_fix(c),
              "%s on %s: user xattrs: %s: image layers lose their owners and modes", where, type,
              strerror(x));
  else if (o > 0)
    check_add(c, "storage", RRT_CHECK_WARN, storage_fix(c),
              "%s on %s: user xattrs work; overlayfs upper directory there: %s", where, type,
              strerror(o));
  else
    check_add(c, "storage", RRT_CHECK_OK, NULL, "%s on %s: user xattrs work; overlayfs upper %s",
              where, type,
              o == 0    ? "works"
              : o == -2 ? "not tried (cannot make a directory)"
                        : "not tried (no user namespace)");
}
