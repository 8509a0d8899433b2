/* host.c: the host's mounts around the rootfs: the one it lies on made private for a
 * shared rootfsPropagation, and nothing of them left beside it with --no-pivot. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

struct host_mount {
  char *point;
  bool proc_or_sysfs;
  bool keep; /* not to be detached */
};

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s)
{
  char *out = xstrdup(s), *o = out;
  for (; *s; s++) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
        s[3] <= '7') {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 3;
    } else {
      *o++ = *s;
    }
  }
  *o = '\0';
  return out;
}

/* "/a/b" is "/a/b" or below "/a" (dir "/" holds everything). */
static bool at_or_below(const char *path, const char *dir)
{
  size_t n = strlen(dir);
  while (n > 0 && dir[n - 1] == '/')
    n--;
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void free_mounts(struct host_mount *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free(v[i].point);
  free(v);
}

/* The mount points of this mount namespace, in mountinfo's order. */
static int read_mounts(int procfd, struct host_mount **out, size_t *n_out, struct rrt_error *err)
{
  int fd = openat(procfd, "self/mountinfo", O_RDONLY | O_CLOEXEC);
  cleanup_fclose FILE *f = fd < 0 ? NULL : fdopen(fd, "re");
  if (!f) {
    if (fd >= 0)
      close(fd);
    return rrt_error_errno(err, "open /proc/self/mountinfo");
  }
  struct host_mount *v = NULL;
  size_t n = 0;
  cleanup_free char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    char point[4096], type[64];
    const char *sep = strstr(line, " - ");
    if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
        sscanf(sep + 3, "%63s", type) != 1)
      continue;
    v = xrealloc(v, (n + 1) * sizeof(*v));
    v[n].point = unescape(point);
    v[n].proc_or_sysfs = strcmp(type, "proc") == 0 || strcmp(type, "sysfs") == 0;
    v[n].keep = false;
    n++;
  }
  *out = v;
  *n_out = n;
  return 0;
}

/* Not the rootfs, nothing in it, and not a mount it lies on. */
static bool beside(const char *point, const char *rootfs)
{
  return !at_or_below(point, rootfs) && !at_or_below(rootfs, point);
}

/*
 * pivot_root takes the old root away with everything on it; chroot leaves it all in the mount
 * namespace, and a fully visible proc (or sysfs) there lets a nested user namespace mount a new
 * one, maskedPaths and all (the kernel's mount_too_revealing). Every mount beside the rootfs is
 * detached (made a slave first, so no unmount reaches a peer of it); one that cannot be (a
 * user namespace locks the host's) is covered, when it is a proc or sysfs, by an empty
 * read-only tmpfs, which a nested user namespace sees locked over it: no longer fully visible.
 * The mounts the rootfs lies on go hidden under it by the MS_MOVE that follows.
 */
int rrt_rootfs_detach_host(const char *rootfs_path, struct rrt_error *err)
{
  /* mountinfo names canonical paths: so must the rootfs, or a mount it lies on would look
   * like one beside it. */
  cleanup_free char *rootfs = realpath(rootfs_path, NULL);
  if (!rootfs)
    return rrt_error_errno(err, "--no-pivot: resolve %s", rootfs_path);
  /* The host's /proc may be among the mounts detached: its fd still reads our mountinfo. */
  cleanup_close int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (procfd < 0)
    return rrt_error_errno(err, "--no-pivot: open /proc");
  struct host_mount *v = NULL;
  size_t n = 0;
  if (read_mounts(procfd, &v, &n, err) < 0)
    return -1;
  /* An unmount propagates to the peers of the parent: every parent of a mount to detach, the
   * mounts the rootfs lies on included, stops sending first (slave: a private one stays so). */
  for (size_t i = 0; i < n; i++) {
    bool above = at_or_below(rootfs, v[i].point) && !at_or_below(v[i].point, rootfs);
    if (!above && !beside(v[i].point, rootfs))
      continue;
    if (mount(NULL, v[i].point, NULL, MS_SLAVE | (above ? 0 : MS_REC), NULL) == 0)
      continue;
    if (!above) { /* out of our reach (a directory we may not enter): left alone */
      rrt_debug("no-pivot: make %s a slave: %s", v[i].point, strerror(errno));
      v[i].keep = true;
    } else {
      int e = errno;
      free_mounts(v, n);
      errno = e;
      return rrt_error_errno(err, "--no-pivot: make %s a slave", v[i].point);
    }
  }
  /* Deepest last in mountinfo: children go before their parents. One already gone with its
   * parent, or locked, stays as it is. */
  for (size_t i = n; i-- > 0;)
    if (!v[i].keep && beside(v[i].point, rootfs) &&
        umount2(v[i].point, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
      rrt_debug("no-pivot: detach %s: %s", v[i].point, strerror(errno));
  free_mounts(v, n);

  /* What is left: the locked ones. */
  if (read_mounts(procfd, &v, &n, err) < 0)
    return -1;
  int r = 0;
  for (size_t i = n; r == 0 && i-- > 0;) {
    if (!v[i].proc_or_sysfs || !beside(v[i].point, rootfs))
      continue;
    rrt_debug("no-pivot: %s cannot be detached: covering it", v[i].point);
    if (mount("tmpfs", v[i].point, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=4k,mode=0555") < 0)
      r = rrt_error_errno(err, "--no-pivot: cover the host's %s", v[i].point);
  }
  free_mounts(v, n);
  return r;
}

int rrt_rootfs_parent_private(const char *rootfs_path, struct rrt_error *err)
{
  cleanup_free char *rootfs = realpath(rootfs_path, NULL);
  if (!rootfs)
    return rrt_error_errno(err, "resolve %s", rootfs_path);
  cleanup_close int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (procfd < 0)
    return rrt_error_errno(err, "open /proc");
  struct host_mount *v = NULL;
  size_t n = 0;
  if (read_mounts(procfd, &v, &n, err) < 0)
    return -1;
  const char *parent = "/";
  for (size_t i = 0; i < n; i++)
    if (at_or_below(rootfs, v[i].point) && strlen(v[i].point) > strlen(parent))
      parent = v[i].point;
  int r = 0;
  if (mount(NULL, parent, NULL, MS_PRIVATE, NULL) < 0)
    r = rrt_error_errno(err, "make %s (the mount holding the rootfs) private", parent);
  else if (strcmp(parent, "/") != 0 && mount(NULL, "/", NULL, MS_PRIVATE, NULL) < 0)
    r = rrt_error_errno(err, "make / private");
  free_mounts(v, n);
  return r;
}

size_t rrt_rootfs_mounts_below(const char *dir)
{
  cleanup_close int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct host_mount *v = NULL;
  size_t n = 0, below = 0;
  if (procfd < 0 || read_mounts(procfd, &v, &n, NULL) < 0)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (at_or_below(v[i].point, dir) && strcmp(v[i].point, dir) != 0)
      below++;
  free_mounts(v, n);
  return below;
}
