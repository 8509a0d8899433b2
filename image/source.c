/* source.c: where an image's files are: an OCI layout directory, or a tar (oci-archive,
 * docker-archive) read with libarchive: a small file (index, manifest, config) found by a pass
 * over the headers, layer data skipped by seeking; the layers streamed from one more pass. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "digest.h"
#include "source.h"
#include "rootlessrt/util.h"

#define SMALL_MAX (4u << 20) /* index, manifests and configs are far smaller */

static const char *strip_dot(const char *name)
{
  while (name[0] == '.' && name[1] == '/')
    name += 2;
  while (name[0] == '/')
    name++;
  return name;
}

/* The entry's name in whichever form libarchive has it (a non-UTF-8 or PAX name may have only
 * one), "" when none. */
static const char *entry_name(struct archive_entry *e)
{
  const char *n = archive_entry_pathname(e);
  if (!n)
    n = archive_entry_pathname_utf8(e);
  return n ? strip_dot(n) : "";
}

/* One pass over the tar's headers (data skipped by seeking) for the file `name`, kept. The size
 * the header states is checked against the limit before anything is allocated, and the data
 * read must be exactly that size. */
static int fetch(struct rrt_src *s, const char *name, struct rrt_error *err)
{
  struct archive *a = archive_read_new();
  archive_read_support_format_tar(a);
  archive_read_support_filter_none(a);
  if (archive_read_open_filename(a, s->path, 1 << 16) != ARCHIVE_OK) {
    rrt_error_msgf(err, EIO, "%s: %s", s->path, archive_error_string(a));
    archive_read_free(a);
    return -1;
  }
  struct archive_entry *e;
  int r;
  while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
    if (archive_entry_filetype(e) != AE_IFREG || strcmp(entry_name(e), name) != 0)
      continue;
    la_int64_t size = archive_entry_size(e);
    if (!archive_entry_size_is_set(e) || size < 0 || size > SMALL_MAX) {
      archive_read_free(a);
      if (size > SMALL_MAX)
        return rrt_error_msgf(err, EFBIG, "%s: %s is %lld bytes: more than the %u MiB limit",
                              s->path, name, (long long)size, SMALL_MAX >> 20);
      return rrt_error_msgf(err, EINVAL, "%s: %s: the archive states an invalid size (%lld)",
                            s->path, name, (long long)size);
    }
    struct rrt_src_file f = {
        .name = xstrdup(name), .data = xmalloc((size_t)size + 1), .len = (size_t)size};
    size_t got = 0;
    la_ssize_t n = 1;
    while (got < f.len && (n = archive_read_data(a, f.data + got, f.len - got)) > 0)
      got += (size_t)n;
    char extra;
    bool ok = got == f.len && n >= 0 && archive_read_data(a, &extra, 1) == 0;
    f.data[f.len] = '\0';
    archive_read_free(a);
    if (!ok) {
      free(f.name);
      free(f.data);
      return rrt_error_msgf(err, EIO, "%s: %s: its data is not the %lld bytes its header states",
                            s->path, name, (long long)size);
    }
    s->files = xrealloc(s->files, (s->n_files + 1) * sizeof(*s->files));
    s->files[s->n_files++] = f;
    return 0;
  }
  if (r != ARCHIVE_EOF)
    rrt_error_msgf(err, EIO, "%s: not a readable tar: %s", s->path, archive_error_string(a));
  else
    rrt_error_msgf(err, ENOENT, "%s: no %s in the archive", s->path, name);
  archive_read_free(a);
  return -1;
}

int rrt_src_open(struct rrt_src *s, const char *path, bool tar, struct rrt_error *err)
{
  char real[4096];
  *s = (struct rrt_src){.dirfd = -1, .tar = tar};
  if (!realpath(path, real))
    return rrt_error_errno(err, "%s", path);
  s->path = xstrdup(real);
  if (tar) {
    /* One header pass tells a tar from anything else early. */
    /* Opened without blocking (a FIFO named as the archive would hang) and only a regular
     * file: libarchive opens it again by name, so a FIFO never reaches it. */
    cleanup_close int fd = open(real, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
      return rrt_error_errno(err, "%s", path);
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
      return rrt_error_msgf(err, EINVAL, "%s: not a regular file: an archive must be one", path);
    return 0;
  }
  s->dirfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (s->dirfd < 0)
    return rrt_error_errno(err, "%s: not an OCI layout directory", path);
  return 0;
}

void rrt_src_close(struct rrt_src *s)
{
  for (size_t i = 0; i < s->n_files; i++) {
    free(s->files[i].name);
    free(s->files[i].data);
  }
  free(s->files);
  free(s->path);
  if (s->dirfd >= 0)
    close(s->dirfd);
  *s = (struct rrt_src){.dirfd = -1};
}

bool rrt_src_pull_dir;

/* A file of the layout directory: a regular file only, opened without blocking (a FIFO or a
 * device would hang the run), then read as usual. */
static int open_file(const struct rrt_src *s, const char *name, struct rrt_error *err)
{
  struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                         .resolve = RESOLVE_IN_ROOT};
  cleanup_close int fd = (int)syscall(SYS_openat2, s->dirfd, name, &how, sizeof(how));
  struct stat st;
  if (fd < 0)
    return rrt_error_errno(err, "%s/%s", s->path, name);
  if (fstat(fd, &st) < 0)
    return rrt_error_errno(err, "%s/%s", s->path, name);
  bool fifo_ok = rrt_src_pull_dir && S_ISFIFO(st.st_mode) && strncmp(name, "blobs/", 6) == 0;
  if (!S_ISREG(st.st_mode) && !fifo_ok)
    return rrt_error_msgf(err, EINVAL, "%s/%s: not a regular file", s->path, name);
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
    return rrt_error_errno(err, "%s/%s", s->path, name);
  return steal_fd(&fd);
}

int rrt_src_read(struct rrt_src *s, const char *name, char **data, size_t *len,
                 struct rrt_error *err)
{
  name = strip_dot(name);
  if (s->tar) {
    size_t i = 0;
    while (i < s->n_files && strcmp(s->files[i].name, name) != 0)
      i++;
    if (i == s->n_files && fetch(s, name, err) < 0)
      return -1;
    *data = xmalloc(s->files[i].len + 1);
    memcpy(*data, s->files[i].data, s->files[i].len + 1);
    *len = s->files[i].len;
    return 0;
  }
  cleanup_close int fd = open_file(s, name, err);
  if (fd < 0)
    return -1;
  struct stat st;
  if (fstat(fd, &st) < 0)
    return rrt_error_errno(err, "%s/%s", s->path, name);
  if (st.st_size > SMALL_MAX)
    return rrt_error_msgf(err, EFBIG, "%s/%s is %lld bytes: more than the %u MiB limit", s->path,
                          name, (long long)st.st_size, SMALL_MAX >> 20);
  if (rrt_read_fd(fd, data, len, err) < 0)
    return rrt_error_wrap(err, "%s/%s", s->path, name);
  if (*len > SMALL_MAX) { /* it grew while read */
    free(*data);
    *data = NULL;
    return rrt_error_msgf(err, EFBIG, "%s/%s: more than the %u MiB limit", s->path, name,
                          SMALL_MAX >> 20);
  }
  return 0;
}

/* ---------------------------------------------------------------- streaming blobs */

struct stream {
  int fd;                /* a file of the layout directory, or -1 */
  struct archive *outer; /* or the tar's current entry */
  struct archive *raw;   /* the blob decompressed (libarchive's raw format), which the tar reads */
  uint64_t size;         /* of the blob being read, 0 when unknown */
  char buf[1 << 16];
  char plain[1 << 16];
  void (*on_read)(void *arg, const void *buf, size_t n);
  void (*on_data)(void *arg, const void *buf, size_t n);
  void *arg;
};

static la_ssize_t stream_read(struct archive *a, void *p, const void **buf)
{
  (void)a;
  struct stream *st = p;
  la_ssize_t n;
  if (st->fd >= 0) {
    do
      n = read(st->fd, st->buf, sizeof(st->buf));
    while (n < 0 && errno == EINTR);
  } else {
    n = archive_read_data(st->outer, st->buf, sizeof(st->buf));
  }
  if (n > 0 && st->on_read)
    st->on_read(st->arg, st->buf, (size_t)n);
  *buf = st->buf;
  return n;
}

/* The tar's reader: the blob's bytes as they are decompressed, each seen by on_data once, so the
 * diff_id is hashed in the same pass as the unpack. */
static la_ssize_t plain_read(struct archive *a, void *p, const void **buf)
{
  struct stream *st = p;
  la_ssize_t n = archive_read_data(st->raw, st->plain, sizeof(st->plain));
  if (n > 0 && st->on_data)
    st->on_data(st->arg, st->plain, (size_t)n);
  if (n < 0 && a)
    archive_set_error(a, EIO, "%s", archive_error_string(st->raw));
  *buf = st->plain;
  return n;
}

static struct archive *decompressor(void)
{
  struct archive *raw = archive_read_new();
  archive_read_support_format_raw(raw);
  archive_read_support_filter_gzip(raw);
  archive_read_support_filter_zstd(raw);
  archive_read_support_filter_none(raw);
  return raw;
}

static int with_stream(struct stream *st, const struct rrt_src_sink *sink, size_t idx,
                       struct rrt_error *err)
{
  struct archive *in = archive_read_new();
  archive_read_support_format_tar(in);
  archive_read_support_filter_none(in);
  st->raw = decompressor();
  int r = -1;
  struct archive_entry *re;
  sink->begin(sink->arg, idx, st->size);
  bool raw_open = archive_read_open(st->raw, st, NULL, stream_read, NULL) == ARCHIVE_OK &&
                  archive_read_next_header(st->raw, &re) == ARCHIVE_OK;
  if (!raw_open)
    rrt_error_msgf(err, EIO, "not a tar (plain, gzip or zstd): %s", archive_error_string(st->raw));
  else if (archive_read_open(in, st, NULL, plain_read, NULL) != ARCHIVE_OK)
    rrt_error_msgf(err, EIO, "not a tar (plain, gzip or zstd): %s", archive_error_string(in));
  else
    r = sink->unpack(sink->arg, idx, in, err);
  /* The rest of the blob (a tar's padding, or all of it after an error) counts for its digests:
   * a corrupted blob is reported by its digest whatever the unpacker tripped over. */
  const void *b;
  while (raw_open && plain_read(NULL, st, &b) > 0)
    ;
  while (stream_read(NULL, st, &b) > 0)
    ;
  struct rrt_error verr = RRT_ERROR_INIT;
  if (sink->verify(sink->arg, idx, &verr) < 0) {
    /* Streamed from a registry, the blob's digest is the pull helper's to check as it arrives:
     * when the unpack failed first (a full disk), its error is the one that says what happened,
     * the stream having been cut after it. */
    if (r == 0 || !rrt_src_pull_dir)
      rrt_error_move(err, &verr);
    else
      rrt_error_clear(&verr);
    r = -1;
  }
  if (r == 0)
    r = sink->verify_diff(sink->arg, idx, err);
  if (r == 0)
    r = sink->commit(sink->arg, idx, err);
  archive_read_free(in);
  archive_read_free(st->raw);
  st->raw = NULL;
  return r;
}

/* sha256 of the rest of what read gives into d; -1 on a read error. */
static int hash_rest(struct rrt_digest *d, la_ssize_t (*rd)(void *, void *, size_t), void *arg)
{
  static char buf[1 << 16];
  la_ssize_t n;
  while ((n = rd(arg, buf, sizeof(buf))) > 0)
    rrt_digest_update(d, buf, (size_t)n);
  return n < 0 ? -1 : 0;
}

static la_ssize_t read_archive(void *a, void *buf, size_t n)
{
  return archive_read_data(a, buf, n);
}

static la_ssize_t read_fd(void *fdp, void *buf, size_t n)
{
  la_ssize_t r;
  do
    r = read(*(int *)fdp, buf, n);
  while (r < 0 && errno == EINTR);
  return r;
}

/* The first entry of each of names that hexes[i] names is hashed. */
struct set_check {
  char *const *names;
  const char *const *hexes;
  size_t n;
  size_t *count;
  char *bad; /* the first digest mismatch */
};

static void hashed(struct set_check *c, size_t i, struct rrt_digest *d, int rr,
                   const struct rrt_src *s)
{
  struct rrt_error e = RRT_ERROR_INIT;
  cleanup_free char *what = xasprintf("layer %s", strip_dot(c->names[i]));
  if (c->bad)
    return;
  if (rr < 0)
    c->bad = xasprintf("%s: %s: read error", s->path, what);
  else if (rrt_digest_check(c->hexes[i], d, what, &e) < 0)
    c->bad = xstrdup(rrt_error_msg(&e));
  rrt_error_clear(&e);
}

/* Which of names the tar holds, counted in one pass over its headers (data skipped but for
 * the layers to verify). */
static int count_entries(const struct rrt_src *s, struct set_check *c, struct rrt_error *err)
{
  struct archive *a = archive_read_new();
  archive_read_support_format_tar(a);
  archive_read_support_filter_none(a);
  struct archive_entry *e;
  int r = archive_read_open_filename(a, s->path, 1 << 16);
  if (r != ARCHIVE_OK) {
    rrt_error_msgf(err, EIO, "%s: %s", s->path, archive_error_string(a));
    archive_read_free(a);
    return -1;
  }
  while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
    const char *name = entry_name(e);
    for (size_t i = 0; i < c->n; i++) {
      if (strcmp(strip_dot(c->names[i]), name) != 0)
        continue;
      if (c->count[i]++ == 0 && c->hexes && c->hexes[i]) {
        struct rrt_digest d;
        rrt_digest_init(&d);
        hashed(c, i, &d, hash_rest(&d, read_archive, a), s);
      }
    }
  }
  if (r != ARCHIVE_EOF)
    rrt_error_msgf(err, EIO, "%s: not a readable tar: %s", s->path, archive_error_string(a));
  archive_read_free(a);
  return r == ARCHIVE_EOF ? 0 : -1;
}

/* Every blob once, the new ones verified, before anything is unpacked: a tar holding one layer
 * twice and another not at all is refused with both named, not found out half way through. */
int rrt_src_check_set(const struct rrt_src *s, char *const *names, const char *const *hexes,
                      size_t n, struct rrt_error *err)
{
  cleanup_free size_t *count = xcalloc(n + 1, sizeof(size_t));
  struct set_check c = {names, hexes, n, count, NULL};
  cleanup_free char *bad = NULL;
  if (!s->tar) {
    for (size_t i = 0; i < n; i++) {
      cleanup_close int fd = open_file(s, names[i], err);
      if (fd < 0)
        return rrt_error_wrap(err, "layer %zu", i);
      if (hexes && hexes[i]) {
        struct rrt_digest d;
        rrt_digest_init(&d);
        hashed(&c, i, &d, hash_rest(&d, read_fd, &fd), s);
      }
    }
    bad = c.bad;
    return bad ? rrt_error_msgf(err, EBADMSG, "%s", bad) : 0;
  }
  int r = count_entries(s, &c, err);
  bad = c.bad;
  if (r < 0)
    return -1;
  /* Every problem in the one line: the missing layers, then those present more than once. */
  cleanup_free char *msg = xstrdup("");
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n; i++) {
      if (pass == 0 ? count[i] != 0 : count[i] < 2)
        continue;
      char *m = pass == 0 ? xasprintf("%s%slayer %s is missing from the archive", msg,
                                      *msg ? "; " : "", strip_dot(names[i]))
                          : xasprintf("%s%slayer %s is in the archive %zu times", msg,
                                      *msg ? "; " : "", strip_dot(names[i]), count[i]);
      free(msg);
      msg = m;
    }
  if (*msg)
    return rrt_error_msgf(err, EINVAL, "%s: %s", s->path, msg);
  return bad ? rrt_error_msgf(err, EBADMSG, "%s", bad) : 0;
}

/* A layer's FIFO in a pull's download directory, opened (without blocking) before the client
 * opened its end: a read now would see no writer and return end-of-file, an empty layer ("not
 * a tar"), which is what a pull sometimes reported instead of its real error. Until a writer
 * has come, the FIFO is neither readable nor hung up, so poll waits for the client to write or
 * to close it (the runtime stops this import if the client dies first). */
static int wait_writer(int fd, const char *path, const char *name, struct rrt_error *err)
{
  struct stat sb;
  if (fstat(fd, &sb) < 0)
    return rrt_error_errno(err, "%s/%s", path, name);
  if (!S_ISFIFO(sb.st_mode))
    return 0;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  while (poll(&p, 1, -1) < 0)
    if (errno != EINTR)
      return rrt_error_errno(err, "poll %s/%s", path, name);
  return 0;
}

int rrt_src_stream(const struct rrt_src *s, char *const *names, size_t n,
                   const struct rrt_src_sink *sink, struct rrt_error *err)
{
  cleanup_free struct stream *st = xzalloc(sizeof(*st));
  st->on_read = sink->on_read;
  st->on_data = sink->on_data;
  st->arg = sink->arg;
  if (!s->tar) {
    for (size_t i = 0; i < n; i++) {
      st->fd = open_file(s, names[i], err);
      if (st->fd < 0)
        return -1;
      if (wait_writer(st->fd, s->path, names[i], err) < 0) {
        close(st->fd);
        return -1;
      }
      struct stat sb;
      st->size = fstat(st->fd, &sb) == 0 && sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
      int r = with_stream(st, sink, i, err);
      close(st->fd);
      if (r < 0)
        return -1;
    }
    return 0;
  }
  st->fd = -1;
  st->outer = archive_read_new();
  archive_read_support_format_tar(st->outer);
  archive_read_support_filter_none(st->outer);
  int r = 0, hr = ARCHIVE_OK;
  size_t done = 0;
  cleanup_free bool *seen = xcalloc(n + 1, sizeof(bool));
  struct archive_entry *e;
  if (archive_read_open_filename(st->outer, s->path, 1 << 16) != ARCHIVE_OK)
    r = rrt_error_msgf(err, EIO, "%s: %s", s->path, archive_error_string(st->outer));
  while (r == 0 && done < n &&
         ((hr = archive_read_next_header(st->outer, &e)) == ARCHIVE_OK || hr == ARCHIVE_WARN)) {
    const char *name = entry_name(e);
    for (size_t i = 0; r == 0 && i < n; i++)
      if (!seen[i] && strcmp(strip_dot(names[i]), name) == 0) {
        seen[i] = true;
        st->size = archive_entry_size(e) > 0 ? (uint64_t)archive_entry_size(e) : 0;
        r = with_stream(st, sink, i, err);
        done++;
        break;
      }
  }
  if (r == 0 && done < n && hr != ARCHIVE_EOF)
    r = rrt_error_msgf(err, EIO, "%s: not a readable tar: %s", s->path,
                       archive_error_string(st->outer));
  archive_read_free(st->outer);
  for (size_t i = 0; r == 0 && i < n; i++)
    if (!seen[i])
      r = rrt_error_msgf(err, ENOENT, "%s: layer %s is missing from the archive", s->path,
                         strip_dot(names[i]));
  return r;
}
