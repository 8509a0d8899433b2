/* blob.c: blobs from the registry, each checked against its digest while it streams (into the
 * runtime's FIFO for a layer, a file for the config), and a layer's partial download kept in
 * --partials DIR (locked while written) so that the next pull resumes it with Range: bytes=N-:
 * the kept bytes go to the import first, hashed on the way, then the registry's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blob.h"
#include "token.h"

/* Decimal digits at *p, no sign, no overflow; *p moves past them. */
static bool read_u64(const char **p, uint64_t *out)
{
  const char *s = *p;
  uint64_t v = 0;
  for (; **p >= '0' && **p <= '9'; (*p)++) {
    unsigned d = (unsigned)(**p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = v;
  return *p > s;
}

int content_range_parse(const char *v, uint64_t *first, uint64_t *last, uint64_t *total)
{
  if (!v || strncmp(v, "bytes ", 6) != 0)
    return -1;
  const char *p = v + 6;
  while (*p == ' ')
    p++;
  if (!read_u64(&p, first) || *p++ != '-' || !read_u64(&p, last) || *p++ != '/')
    return -1;
  if (strcmp(p, "*") == 0)
    *total = RANGE_TOTAL_UNKNOWN;
  else if (!read_u64(&p, total) || *p || *total == RANGE_TOTAL_UNKNOWN)
    return -1;
  if (*first > *last || (*total != RANGE_TOTAL_UNKNOWN && *last >= *total))
    return -1;
  return 0;
}

enum resume_step resume_decide(long status, const char *crange, uint64_t from, uint64_t size)
{
  if (from == 0)
    return RESUME_FRESH;
  if (status != 206)
    return RESUME_FROM_ZERO;
  uint64_t first, last, total;
  if (content_range_parse(crange, &first, &last, &total) < 0 || first != from)
    return RESUME_ASK_AGAIN;
  /* The rest of this blob, to its end: anything else cannot complete it. */
  if (size && (last != size - 1 || (total != RANGE_TOTAL_UNKNOWN && total != size)))
    return RESUME_ASK_AGAIN;
  return RESUME_CONTINUE;
}

/* The first bytes of a layer's 2xx answer decide what its kept partial download is worth. A 206
 * from where it ends continues it: the kept bytes go to the import first, hashed on the way (the
 * blob's digest is checked over all of them at the end). A 200 means the registry ignored the
 * Range: the download starts again from nothing. Nothing has reached the import before this. */
static int begin_body(struct body *b, long status)
{
  switch (resume_decide(status, b->resp ? b->resp->crange : NULL, b->from, b->size)) {
  case RESUME_FRESH:
    return 0;
  case RESUME_FROM_ZERO:
    b->from = 0;
    if (ftruncate(b->keep_fd, 0) < 0)
      body_drop_keep(b);
    return 0;
  case RESUME_ASK_AGAIN:
    b->restart = true;
    return -1;
  case RESUME_CONTINUE:
    break;
  }
  static char buf[1 << 16];
  for (uint64_t off = 0; off < b->from;) {
    size_t want = b->from - off < sizeof(buf) ? (size_t)(b->from - off) : sizeof(buf);
    ssize_t n = pread(b->keep_fd, buf, want, (off_t)off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      b->kerr = n < 0 ? errno : EIO;
      return -1;
    }
    sha256_update(&b->sha, (size_t)n, (const uint8_t *)buf);
    if (body_write(b, buf, (size_t)n) < 0)
      return -1;
    off += (uint64_t)n;
  }
  b->got = b->resumed = b->from;
  return 0;
}

static char *keep_path_of(const char *digest)
{
  return xasprintf("%s/partial-sha256-%s", popt.partials, digest + 7);
}

/* The layer's partial download, locked (another pull fetching the same blob now keeps none);
 * *have: the bytes it holds, 0 for a new one. -1 when none can be kept (no --partials, locked,
 * not a regular file): the layer is then fetched without. */
static int open_keep(const char *path, uint64_t size, uint64_t *have)
{
  *have = 0;
  int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  struct stat st, now;
  if (fd < 0)
    return -1;
  /* Locked, and still the file of that name: a pull that finished may have removed it. */
  if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      stat(path, &now) < 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
    close(fd);
    return -1;
  }
  *have = (uint64_t)st.st_size;
  /* As long as the blob or longer: nothing to ask the rest of; fetched again. */
  if (*have > 0 && (!size || *have >= size)) {
    if (ftruncate(fd, 0) < 0) {
      unlink(path);
      close(fd);
      return -1;
    }
    *have = 0;
  }
  return fd;
}

void remove_done_partial(const char *digest)
{
  if (!popt.partials)
    return;
  char *path = keep_path_of(digest);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
    unlink(path);
  if (fd >= 0)
    close(fd);
  free(path);
}

bool have_layer(const char *digest)
{
  if (!popt.have)
    return false;
  char *p = xasprintf("%s/%s", popt.have, digest + 7);
  bool yes = access(p, F_OK) == 0;
  free(p);
  return yes;
}

/* The same request again, for all of the blob: the kept bytes were of no use (a 416, or a 206
 * for another range). Nothing reached the import yet. */
static void start_over(struct body *b, struct response *resp)
{
  if (b->keep_fd >= 0 && ftruncate(b->keep_fd, 0) < 0)
    body_drop_keep(b);
  free(b->errbuf);
  b->errbuf = NULL;
  b->errlen = 0;
  b->from = b->got = 0;
  b->started = b->restart = false;
  response_free(resp);
}

static void hex_of(struct sha256_ctx *sha, char out[65])
{
  uint8_t d[SHA256_DIGEST_SIZE];
  sha256_digest(sha, sizeof(d), d);
  for (size_t i = 0; i < sizeof(d); i++)
    snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* fifo: into the FIFO DEST/blobs/sha256/HEX that the runtime's import reads (opening it waits
 * for the import to get there), the bytes kept as they come (see open_keep); otherwise into
 * HEX.partial, renamed once verified. */
int get_blob(struct conn *c, const char *digest, uint64_t size, const char *label, bool fifo)
{
  const char *hex = digest + 7;
  char *final = xasprintf("%s/blobs/sha256/%s", popt.dest, hex);
  char *part = fifo ? xstrdup(final) : xasprintf("%s.partial", final);
  char *keep = fifo && popt.partials ? keep_path_of(digest) : NULL;
  char *base = http_base_url(c);
  char *url = xasprintf("%s/blobs/%s", base, digest);
  free(base);
  int r = 0;
  struct body b = {.size = size,
                   .label = label,
                   .path = part,
                   .keep_fd = -1,
                   .keep_path = keep,
                   .on_start = begin_body};
  struct response resp = {0};
  if (fifo && popt.fifo_delay_ms > 0)
    nanosleep(&(struct timespec){popt.fifo_delay_ms / 1000, (popt.fifo_delay_ms % 1000) * 1000000},
              NULL);
  b.fd = fifo ? open(part, O_WRONLY | O_CLOEXEC)
              : open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (b.fd < 0)
    r = failf("%s: %s", part, strerror(errno));
  /* Once the import reads the FIFO: a pull waiting for it holds no partial's lock. */
  if (r == 0 && keep)
    b.keep_fd = open_keep(keep, size, &b.from);
  if (r == 0)
    r = reg_get(c, url, NULL, &b, &resp);
  if (r == 0 && b.from > 0 && (b.restart || resp.status == 416)) {
    start_over(&b, &resp);
    r = reg_get(c, url, NULL, &b, &resp);
  }
  body_progress(&b, true);
  char says[512];
  bool bad = false; /* what was received is wrong: nothing of it is kept */
  if (r == 0 && (resp.status < 200 || resp.status > 299))
    r = failf("blob %s: %s (HTTP %ld)%s", digest, what_status(resp.status), resp.status,
              registry_says(&b, says, sizeof(says)));
  if (r == 0) {
    char got[65];
    hex_of(&b.sha, got);
    bad = strcmp(got, hex) != 0 || (size && b.got != size);
    if (strcmp(got, hex) != 0 && b.resumed)
      r = failf("blob %s: digest mismatch after resuming a partial download at byte %llu: the "
                "registry and the kept bytes make sha256:%s; the partial download %s is "
                "discarded (the next pull fetches all of it)",
                digest, (unsigned long long)b.resumed, got, keep);
    else if (strcmp(got, hex) != 0)
      r = failf("blob %s: digest mismatch: the registry sent sha256:%s", digest, got);
    else if (size && b.got != size)
      r = failf("blob %s: %llu bytes, its descriptor says %llu", digest, (unsigned long long)b.got,
                (unsigned long long)size);
  } else {
    char why[4096];
    snprintf(why, sizeof(why), "%s", pull_error());
    bad = b.kerr || (size && b.got >= size && !b.werr);
    struct stat st;
    bool kept = b.keep_fd >= 0 && !bad && fstat(b.keep_fd, &st) == 0 && st.st_size > 0;
    if (b.werr)
      r = failf("blob %s: %s", digest, why);
    else if (b.got > 0 && strstr(why, url))
      r = failf("blob %s: interrupted after %llu of %llu bytes: %s%s", digest,
                (unsigned long long)b.got, (unsigned long long)size, why,
                kept ? " (the bytes received are kept: the next pull resumes from there)" : "");
  }
  /* Whole and verified, or wrong: the partial download has done its work either way. */
  if (b.keep_fd >= 0 && (r == 0 || bad))
    body_drop_keep(&b);
  /* The import going away (EPIPE) is its error to tell, not this one. */
  if (r < 0 && b.werr != EPIPE)
    pull_report();
  if (b.fd >= 0 && close(b.fd) < 0 && r == 0)
    r = failf("%s: %s", part, strerror(errno));
  if (r == 0 && !fifo && rename(part, final) < 0)
    r = failf("rename %s: %s", part, strerror(errno));
  if (r < 0 && !fifo)
    unlink(part);
  /* An empty one is worth nothing to the next pull. */
  struct stat st;
  if (b.keep_fd >= 0 && fstat(b.keep_fd, &st) == 0 && st.st_size == 0)
    body_drop_keep(&b);
  if (b.keep_fd >= 0)
    close(b.keep_fd);
  body_free(&b);
  response_free(&resp);
  free(url);
  free(part);
  free(keep);
  free(final);
  return r;
}
