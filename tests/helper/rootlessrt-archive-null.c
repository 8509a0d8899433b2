/* rootlessrt-archive-null.c: for tests only: rootlessrt whose unpacker (image/unpack.o, its
 * libarchive calls renamed rrt_null_* by objcopy, see the Makefile) sees libarchive give NULL
 * for the link target forms RRT_ARCHIVE_NULL names, so the fallbacks of image/unpack.c run on
 * real archives. rootlessrt is static-pie with libarchive.a inside: LD_PRELOAD cannot reach it,
 * and --wrap would also catch libarchive's own calls between its objects, so the renaming is
 * done on unpack.o alone.
 *
 * RRT_ARCHIVE_NULL: a comma-separated list of symlink, symlink_utf8, symlink_w, hardlink,
 * hardlink_utf8, hardlink_w (that form is NULL) and filetype (a hard link's file type is 0, as
 * libarchive 3.6.2 gives for every hard link anyway). Unset: libarchive's own answers.
 * RRT_ARCHIVE_NULL_LOG: a file that gets a line per call of a link target form, "FORM" or
 * "FORM NULL", so a test knows the fallback was asked. */
#include <archive_entry.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

const char *rrt_null_archive_entry_symlink(struct archive_entry *e);
const char *rrt_null_archive_entry_symlink_utf8(struct archive_entry *e);
const wchar_t *rrt_null_archive_entry_symlink_w(struct archive_entry *e);
const char *rrt_null_archive_entry_hardlink(struct archive_entry *e);
const char *rrt_null_archive_entry_hardlink_utf8(struct archive_entry *e);
const wchar_t *rrt_null_archive_entry_hardlink_w(struct archive_entry *e);
__LA_MODE_T rrt_null_archive_entry_filetype(struct archive_entry *e);

static bool listed(const char *form)
{
  const char *list = getenv("RRT_ARCHIVE_NULL");
  size_t n = strlen(form);
  while (list && *list) {
    const char *end = strchrnul(list, ',');
    if ((size_t)(end - list) == n && strncmp(list, form, n) == 0)
      return true;
    list = *end ? end + 1 : end;
  }
  return false;
}

/* Whether RRT_ARCHIVE_NULL lists form; the call goes to RRT_ARCHIVE_NULL_LOG. */
static bool null_for(const char *form)
{
  bool null = listed(form);
  const char *log = getenv("RRT_ARCHIVE_NULL_LOG");
  int fd = log ? open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
  if (fd >= 0) {
    char line[64];
    int n = snprintf(line, sizeof(line), "%s%s\n", form, null ? " NULL" : "");
    if (write(fd, line, (size_t)n) != n) {
      /* nothing to do: the test sees the line missing */
    }
    close(fd);
  }
  return null;
}

const char *rrt_null_archive_entry_symlink(struct archive_entry *e)
{
  return null_for("symlink") ? NULL : archive_entry_symlink(e);
}

const char *rrt_null_archive_entry_symlink_utf8(struct archive_entry *e)
{
  return null_for("symlink_utf8") ? NULL : archive_entry_symlink_utf8(e);
}

const wchar_t *rrt_null_archive_entry_symlink_w(struct archive_entry *e)
{
  return null_for("symlink_w") ? NULL : archive_entry_symlink_w(e);
}

const char *rrt_null_archive_entry_hardlink(struct archive_entry *e)
{
  return null_for("hardlink") ? NULL : archive_entry_hardlink(e);
}

const char *rrt_null_archive_entry_hardlink_utf8(struct archive_entry *e)
{
  return null_for("hardlink_utf8") ? NULL : archive_entry_hardlink_utf8(e);
}

const wchar_t *rrt_null_archive_entry_hardlink_w(struct archive_entry *e)
{
  return null_for("hardlink_w") ? NULL : archive_entry_hardlink_w(e);
}

__LA_MODE_T rrt_null_archive_entry_filetype(struct archive_entry *e)
{
  /* libarchive's own answer to "is it a hard link", whatever the list says of the forms. */
  if (listed("filetype") &&
      (archive_entry_hardlink(e) || archive_entry_hardlink_utf8(e) || archive_entry_hardlink_w(e)))
    return 0;
  return archive_entry_filetype(e);
}
