/* test_image_merged.c: files read from an image as the container sees them (image/merged.c):
 * the layers merged top first, symlinks across layers against the image's root, whiteouts and
 * opaque directories, bounded regular files only. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../image/internal.h"
#include "rootlessrt/util.h"
#include "tap.h"

static char top[256], low[256];

static void put(const char *layer, const char *path, const char *text)
{
  char *p = xasprintf("%s/%s", layer, path);
  for (char *s = p + strlen(layer) + 1; *s; s++)
    if (*s == '/') {
      *s = '\0';
      mkdir(p, 0755);
      *s = '/';
    }
  FILE *f = fopen(p, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  free(p);
}

static void link_in(const char *layer, const char *path, const char *target)
{
  char *p = xasprintf("%s/%s", layer, path);
  if (symlink(target, p) < 0)
    perror(p);
  free(p);
}

/* The text of path in the merged image, "(absent)", or "error: MESSAGE". */
static char *read_merged(const char *path)
{
  char *lowers[] = {top, low, NULL}, *data = NULL;
  struct rrt_error err = RRT_ERROR_INIT;
  char *r;
  if (rrt_image_read_file(lowers, path, 64, &data, NULL, &err) < 0)
    r = xasprintf("error: %s", rrt_error_msg(&err));
  else
    r = data ? xstrdup(data) : xstrdup("(absent)");
  free(data);
  rrt_error_clear(&err);
  return r;
}

static void is_merged(const char *path, const char *want, const char *name)
{
  char *got = read_merged(path);
  is_str(got, want, "%s", name);
  free(got);
}

static void like_merged(const char *path, const char *part, const char *name)
{
  char *got = read_merged(path);
  ok(strstr(got, part) != NULL, "%s", name);
  if (!strstr(got, part))
    printf("#   got: %s\n#   expected to contain: %s\n", got, part);
  free(got);
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
  (void)st;
  (void)f;
  return type == FTW_DP ? rmdir(path) : unlink(path);
}

int main(void)
{
  char base[] = "/tmp/rrt-merged.XXXXXX";
  if (!mkdtemp(base))
    return 1;
  snprintf(top, sizeof(top), "%s/top", base);
  snprintf(low, sizeof(low), "%s/low", base);
  mkdir(top, 0755);
  mkdir(low, 0755);
  put(low, "etc/passwd", "low passwd");
  put(low, "etc/real", "real");
  put(low, "d/only-low", "from low");
  put(low, "file", "a file");
  put(low, "shadowed/x", "hidden by a file above");
  put(top, "d/only-top", "from top");
  put(top, "etc/group", "top group");
  put(top, "shadowed", "a file over a directory");
  link_in(top, "etc/abs", "/etc/real");
  link_in(top, "etc/up", "../../../../etc/real");
  link_in(top, "etc/loop1", "loop2");
  link_in(top, "etc/loop2", "loop1");
  link_in(top, "etc/dir", "/d");
  put(top, "big", "0123456789012345678901234567890123456789012345678901234567890123456789");
  char *fifo = xasprintf("%s/fifo", top);
  mkfifo(fifo, 0644);
  free(fifo);

  is_merged("/etc/passwd", "low passwd", "a file only a lower layer has");
  is_merged("etc/group", "top group", "a file of the top layer (a relative path from the root)");
  is_merged("/d/only-low", "from low", "a directory of both layers merges: the lower file");
  is_merged("/d/only-top", "from top", "... and the upper one");
  is_merged("/etc/abs", "real", "an absolute symlink in the top layer to a lower file");
  is_merged("/etc/up", "real", "a symlink with more .. than depth stops at the image's root");
  is_merged("/etc/dir/only-low", "from low", "a symlink to a merged directory");
  is_merged("/nothing/here", "(absent)", "a missing file is absent, not an error");
  is_merged("/file/x", "(absent)", "a file used as a directory is absent");
  is_merged("/shadowed/x", "(absent)", "a file above hides the directory below");
  like_merged("/etc/loop1", "more than 40 symlinks", "a symlink loop: an error");
  like_merged("/big", "more than the 64 bytes limit", "over the limit: an error naming it");
  like_merged("/fifo", "not a regular file", "a FIFO: refused, not opened blocking");
  like_merged("/etc", "a directory", "a directory is not a file");

  /* Opaque directories (user.overlay.opaque, what the unpacker sets) and whiteouts (0:0
   * character devices, which only a privileged mknod makes). */
  char *od = xasprintf("%s/d", top);
  if (setxattr(od, "user.overlay.opaque", "y", 1, 0) == 0) {
    is_merged("/d/only-low", "(absent)", "an opaque directory hides the lower one's files");
    is_merged("/d/only-top", "from top", "... not its own");
  } else {
    printf("ok %d # skip user xattrs on %s: %s\n", ++tap_n, base, strerror(errno));
    printf("ok %d # skip user xattrs on %s\n", ++tap_n, base);
  }
  free(od);
  char *wh = xasprintf("%s/etc/passwd", top);
  if (mknod(wh, S_IFCHR | 0, makedev(0, 0)) == 0) {
    is_merged("/etc/passwd", "(absent)", "a whiteout hides the lower layer's file");
  } else {
    printf("ok %d # skip mknod of a whiteout needs privilege: %s\n", ++tap_n, strerror(errno));
  }
  free(wh);
  if (getuid() != 0) {
    char *locked = xasprintf("%s/etc", top);
    chmod(locked, 0);
    like_merged("/etc/real", "Permission denied", "an unreadable directory of a layer: an error");
    chmod(locked, 0755);
    free(locked);
  } else {
    printf("ok %d # skip as root every layer directory is readable\n", ++tap_n);
  }
  nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  return tap_done();
}
