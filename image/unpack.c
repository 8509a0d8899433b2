/* unpack.c: one layer tar into a directory, as root of the user namespace: every path resolved
 * inside the layer (openat2 RESOLVE_IN_ROOT, so a symlink cannot lead a write out of it), ".."
 * and absolute names refused, device nodes skipped, whiteouts and opaque directories turned
 * into what overlayfs reads (0:0 character devices, user.overlay.opaque). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <wchar.h>

#include "unpack.h"
#include "rootlessrt/log.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

#define WHITEOUT ".wh."
#define OPAQUE ".wh..wh..opq"

/* A wide string (what libarchive keeps when neither the locale's form nor UTF-8 converts) as
 * UTF-8 bytes, malloc'd. */
static char *utf8_of_wide(const wchar_t *w)
{
  size_t n = wcslen(w), k = 0;
  char *out = xmalloc(4 * n + 1);
  for (size_t i = 0; i < n; i++) {
    unsigned long c = (unsigned long)w[i];
    if (c < 0x80) {
      out[k++] = (char)c;
    } else if (c < 0x800) {
      out[k++] = (char)(0xc0 | (c >> 6));
      out[k++] = (char)(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      out[k++] = (char)(0xe0 | (c >> 12));
      out[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
      out[k++] = (char)(0x80 | (c & 0x3f));
    } else {
      out[k++] = (char)(0xf0 | ((c >> 18) & 0x07));
      out[k++] = (char)(0x80 | ((c >> 12) & 0x3f));
      out[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
      out[k++] = (char)(0x80 | (c & 0x3f));
    }
  }
  out[k] = '\0';
  return out;
}

enum which { NAME, SYMLINK, HARDLINK };

/* The entry's name or link target in whichever form libarchive gives it: the locale's (raw
 * bytes), UTF-8, or wide (a PAX path or a non-UTF-8 name can lack the first); NULL when the
 * entry has none. *owned holds what must be freed. */
static const char *entry_str(struct archive_entry *e, enum which w, char **owned)
{
  const char *s = w == NAME      ? archive_entry_pathname(e)
                  : w == SYMLINK ? archive_entry_symlink(e)
                                 : archive_entry_hardlink(e);
  if (!s)
    s = w == NAME      ? archive_entry_pathname_utf8(e)
        : w == SYMLINK ? archive_entry_symlink_utf8(e)
                       : archive_entry_hardlink_utf8(e);
  if (!s) {
    const wchar_t *ws = w == NAME      ? archive_entry_pathname_w(e)
                        : w == SYMLINK ? archive_entry_symlink_w(e)
                                       : archive_entry_hardlink_w(e);
    if (ws)
      s = *owned = utf8_of_wide(ws);
  }
  return s;
}

/* The entry's name for messages. */
static const char *shown(struct archive_entry *e)
{
  const char *s = archive_entry_pathname(e);
  if (!s)
    s = archive_entry_pathname_utf8(e);
  return s ? s : "(an entry without a readable name)";
}

/* The entry's name as components joined by '/': "./a//b/" -> "a/b"; "" is the layer's root.
 * ".." anywhere and absolute names are refused. */
static int clean_path(const char *in, const char *what, char **out, struct rrt_error *err)
{
  if (!in)
    return rrt_error_msgf(err, EINVAL, "%s: an entry without a name", what);
  if (in[0] == '/')
    return rrt_error_msgf(err, EPERM, "%s: entry \"%s\" has an absolute name: refused", what, in);
  char *res = xzalloc(strlen(in) + 1);
  const char *p = in;
  while (*p) {
    const char *end = strchrnul(p, '/');
    size_t n = (size_t)(end - p);
    if (n == 2 && p[0] == '.' && p[1] == '.') {
      free(res);
      return rrt_error_msgf(err, EPERM, "%s: entry \"%s\" leads out of the layer (..): refused",
                            what, in);
    }
    if (n && !(n == 1 && p[0] == '.')) {
      if (*res)
        strcat(res, "/");
      strncat(res, p, n);
    }
    p = *end ? end + 1 : end;
  }
  *out = res;
  return 0;
}

static int open_in(int rootfd, const char *path, struct rrt_error *err)
{
  struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                         .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
  int fd = (int)syscall(SYS_openat2, rootfd, *path ? path : ".", &how, sizeof(how));
  if (fd < 0)
    return rrt_error_errno(err, "open %s in the layer", *path ? path : "/");
  return fd;
}

/* Makes every missing directory of dir (inside the layer), root-owned 0755: a tar need not
 * have entries for the parents of its files. */
static int mkdirs_in(int rootfd, char *dir, struct rrt_error *err)
{
  size_t len = strlen(dir);
  for (size_t i = 1; i <= len; i++) {
    if (dir[i] != '/' && dir[i] != '\0')
      continue;
    char saved = dir[i];
    dir[i] = '\0';
    char *last = strrchr(dir, '/');
    int pfd = rootfd, r = 0;
    if (last) {
      *last = '\0';
      pfd = open_in(rootfd, dir, err);
      *last = '/';
    }
    if (pfd < 0 || (mkdirat(pfd, last ? last + 1 : dir, 0755) < 0 && errno != EEXIST))
      r = pfd < 0 ? -1 : rrt_error_errno(err, "mkdir %s", dir);
    if (last && pfd >= 0)
      close(pfd);
    dir[i] = saved;
    if (r < 0)
      return -1;
  }
  return 0;
}

/* The parent directory of path inside the layer (made when missing); *base is the last
 * component. */
static int open_parent(int rootfd, char *path, const char **base, struct rrt_error *err)
{
  char *slash = strrchr(path, '/');
  *base = slash ? slash + 1 : path;
  if (!slash)
    return fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
  *slash = '\0';
  int fd = open_in(rootfd, path, NULL);
  if (fd < 0 && errno == ENOENT && mkdirs_in(rootfd, path, err) == 0)
    fd = open_in(rootfd, path, err);
  else if (fd < 0 && !err->msg)
    rrt_error_errno(err, "open %s in the layer", path);
  *slash = '/';
  return fd;
}

/* Makes room for a new entry: a non-directory of that name goes; a directory stays for a
 * directory entry (which then only updates its attributes). */
static int make_room(int dirfd, const char *name, bool for_dir, bool *is_dir)
{
  struct stat st;
  *is_dir = false;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : -1;
  if (S_ISDIR(st.st_mode)) {
    if (for_dir) {
      *is_dir = true;
      return 0;
    }
    return unlinkat(dirfd, name, AT_REMOVEDIR);
  }
  return unlinkat(dirfd, name, 0);
}

static bool xattr_wanted(const char *name)
{
  /* Overlay's own attributes from a tar could redirect lookups or fake whiteouts. */
  return strncmp(name, "user.overlay.", 13) != 0 && strncmp(name, "trusted.", 8) != 0 &&
         strncmp(name, "security.selinux", 16) != 0 &&
         (strncmp(name, "user.", 5) == 0 || strcmp(name, "security.capability") == 0);
}

/* An attribute this filesystem or namespace cannot hold (user.* on a filesystem without them,
 * security.capability without the right) is skipped, as tar does; one it had no room for (a full
 * disk) fails the unpack: a layer committed without it would be trusted as whole. */
static int apply_xattrs(int fd, struct archive_entry *e, const char *what, struct rrt_error *err)
{
  const char *name;
  const void *val;
  size_t size;
  archive_entry_xattr_reset(e);
  while (archive_entry_xattr_next(e, &name, &val, &size) == ARCHIVE_OK) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    if (!xattr_wanted(name) || setxattr(path, name, val, size, 0) == 0)
      continue;
    if (errno == ENOSPC || errno == EDQUOT || errno == EIO)
      return rrt_error_errno(err, "%s: %s: set %s", what, shown(e), name);
    rrt_debug("xattr %s on %s: %s", name, shown(e), strerror(errno));
  }
  return 0;
}

static int set_owner_mode(int fd, struct archive_entry *e, const struct rrt_unpack *u,
                          const char *name, struct rrt_error *err)
{
  uid_t uid = (uid_t)archive_entry_uid(e);
  gid_t gid = (gid_t)archive_entry_gid(e);
  if (fchown(fd, uid, gid) < 0) {
    if (errno == EINVAL)
      return rrt_error_msgf(err, EOVERFLOW,
                            "%s: \"%s\" belongs to %u:%u, which your subordinate ids do not map "
                            "(see /etc/subuid)",
                            u->what, name, (unsigned)uid, (unsigned)gid);
    return rrt_error_errno(err, "%s: chown %s", u->what, name);
  }
  /* After chown, which clears the set-id bits. */
  if (fchmod(fd, archive_entry_perm(e) & 07777) < 0)
    return rrt_error_errno(err, "%s: chmod %s", u->what, name);
  return apply_xattrs(fd, e, u->what, err);
}

static int write_data(struct archive *a, int fd, struct archive_entry *e, const char *what,
                      struct rrt_error *err)
{
  const void *buf;
  size_t size;
  la_int64_t off;
  int r;
  while ((r = archive_read_data_block(a, &buf, &size, &off)) == ARCHIVE_OK) {
    const char *p = buf;
    while (size) {
      ssize_t w = pwrite(fd, p, size, (off_t)off);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        return rrt_error_errno(err, "%s: write %s", what, shown(e));
      p += w, size -= (size_t)w, off += w;
    }
  }
  if (r != ARCHIVE_EOF)
    return rrt_error_msgf(err, EIO, "%s: %s: %s", what, shown(e), archive_error_string(a));
  if (ftruncate(fd, (off_t)archive_entry_size(e)) < 0)
    return rrt_error_errno(err, "%s: truncate %s", what, shown(e));
  return 0;
}

/* ".wh.NAME": NAME is deleted by this layer (a 0:0 character device, overlayfs' whiteout);
 * ".wh..wh..opq": the directory hides what the layers below have in it. */
static int whiteout(int pfd, const char *base, const struct rrt_unpack *u, const char *name,
                    struct rrt_error *err)
{
  if (strcmp(base, OPAQUE) == 0) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
    cleanup_close int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const char *attr = u->privileged ? "trusted.overlay.opaque" : "user.overlay.opaque";
    if (dfd < 0 || fsetxattr(dfd, attr, "y", 1, 0) < 0)
      return rrt_error_errno(err, "%s: %s: set %s", u->what, name, attr);
    return 0;
  }
  bool is_dir;
  const char *target = base + strlen(WHITEOUT);
  if (!*target || strcmp(target, ".") == 0 || strcmp(target, "..") == 0)
    return rrt_error_msgf(err, EINVAL, "%s: entry \"%s\": a whiteout names no file: refused",
                          u->what, name);
  if (make_room(pfd, target, false, &is_dir) < 0)
    return rrt_error_errno(err, "%s: whiteout %s", u->what, name);
  if (mknodat(pfd, target, S_IFCHR | 0, makedev(0, 0)) < 0)
    return rrt_error_errno(err, "%s: whiteout %s (mknod 0:0)", u->what, name);
  return 0;
}

static int hardlink(int rootfd, int pfd, const char *base, const char *link, const char *path,
                    const struct rrt_unpack *u, struct rrt_error *err)
{
  cleanup_free char *target = NULL;
  if (clean_path(link, u->what, &target, err) < 0)
    return -1;
  if (!*target)
    return rrt_error_msgf(err, EINVAL, "%s: hard link %s to the layer's root: refused", u->what,
                          path);
  const char *tbase;
  cleanup_close int tfd = open_parent(rootfd, target, &tbase, err);
  if (tfd < 0)
    return rrt_error_wrap(err, "%s: hard link %s", u->what, path);
  bool is_dir;
  if (make_room(pfd, base, false, &is_dir) < 0 || linkat(tfd, tbase, pfd, base, 0) < 0)
    return rrt_error_errno(err, "%s: hard link %s to %s", u->what, path, link);
  return 0;
}

/* A path-only handle on pfd/base for chown and chmod of what cannot be opened for writing. */
static int open_entry(int pfd, const char *base, int flags)
{
  return openat(pfd, base, flags | O_NOFOLLOW | O_CLOEXEC);
}

static int one_entry(struct archive *a, struct archive_entry *e, const struct rrt_unpack *u,
                     struct rrt_error *err)
{
  cleanup_free char *path = NULL, *name_owned = NULL, *link_owned = NULL;
  if (clean_path(entry_str(e, NAME, &name_owned), u->what, &path, err) < 0)
    return -1;
  mode_t type = archive_entry_filetype(e);
  if (!*path) /* the layer's root: its owner and mode */
    return type == AE_IFDIR ? set_owner_mode(u->rootfd, e, u, "/", err) : 0;
  const char *base;
  cleanup_close int pfd = open_parent(u->rootfd, path, &base, err);
  if (pfd < 0)
    return rrt_error_wrap(err, "%s", u->what);
  if (strncmp(base, WHITEOUT, strlen(WHITEOUT)) == 0)
    return whiteout(pfd, base, u, path, err);
  /* A hard link whatever its file type field says (libarchive gives 0 for some PAX ones). */
  const char *hard = entry_str(e, HARDLINK, &link_owned);
  if (hard)
    return hardlink(u->rootfd, pfd, base, hard, path, u, err);
  bool is_dir;
  if (make_room(pfd, base, type == AE_IFDIR, &is_dir) < 0)
    return rrt_error_errno(err, "%s: replace %s", u->what, path);
  cleanup_close int fd = -1;
  switch (type) {
  case AE_IFDIR:
    if (!is_dir && mkdirat(pfd, base, 0700) < 0)
      return rrt_error_errno(err, "%s: mkdir %s", u->what, path);
    fd = open_entry(pfd, base, O_RDONLY | O_DIRECTORY);
    break;
  case AE_IFREG:
    fd = open_entry(pfd, base, O_WRONLY | O_CREAT | O_EXCL);
    if (fd >= 0 && write_data(a, fd, e, u->what, err) < 0)
      return -1;
    break;
  case AE_IFLNK: {
    const char *target = entry_str(e, SYMLINK, &link_owned);
    if (!target || !*target)
      return rrt_error_msgf(err, EINVAL, "%s: symlink %s has no target", u->what, path);
    if (symlinkat(target, pfd, base) < 0)
      return rrt_error_errno(err, "%s: symlink %s", u->what, path);
    if (fchownat(pfd, base, (uid_t)archive_entry_uid(e), (gid_t)archive_entry_gid(e),
                 AT_SYMLINK_NOFOLLOW) < 0)
      return rrt_error_errno(err, "%s: chown %s", u->what, path);
    return 0;
  }
  case AE_IFIFO:
    if (mknodat(pfd, base, S_IFIFO | 0600, 0) < 0)
      return rrt_error_errno(err, "%s: mkfifo %s", u->what, path);
    fd = open_entry(pfd, base, O_PATH);
    break;
  case AE_IFCHR:
    if (archive_entry_rdev(e) == 0) /* a whiteout already in overlayfs' form */
      return mknodat(pfd, base, S_IFCHR, 0) < 0
                 ? rrt_error_errno(err, "%s: whiteout %s", u->what, path)
                 : 0;
    /* fallthrough */
  case AE_IFBLK:
  case AE_IFSOCK:
    rrt_debug("%s: %s: device nodes and sockets are not unpacked", u->what, path);
    return 0;
  default:
    return rrt_error_msgf(err, EINVAL, "%s: entry \"%s\" has an unknown file type (0%o)", u->what,
                          path, (unsigned)type);
  }
  if (fd < 0)
    return rrt_error_errno(err, "%s: create %s", u->what, path);
  if (type == AE_IFIFO) {
    /* An O_PATH fd cannot fchown: go through /proc, which follows it. */
    char p[64];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
    if (chown(p, (uid_t)archive_entry_uid(e), (gid_t)archive_entry_gid(e)) < 0 ||
        chmod(p, archive_entry_perm(e) & 07777) < 0)
      return rrt_error_errno(err, "%s: %s", u->what, path);
    return 0;
  }
  if (set_owner_mode(fd, e, u, path, err) < 0)
    return -1;
  if (type == AE_IFREG) {
    struct timespec ts[2] = {{.tv_sec = archive_entry_mtime(e), .tv_nsec = 0},
                             {.tv_sec = archive_entry_mtime(e), .tv_nsec = 0}};
    futimens(fd, ts);
  }
  return 0;
}

int rrt_unpack_layer(struct archive *a, const struct rrt_unpack *u, struct rrt_error *err)
{
  struct archive_entry *e;
  int r;
  while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
    if (one_entry(a, e, u, err) < 0)
      return -1;
  }
  if (r != ARCHIVE_EOF)
    return rrt_error_msgf(err, EIO, "%s: %s", u->what, archive_error_string(a));
  return 0;
}
