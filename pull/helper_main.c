/* rootlessrt-pull: fetches an image from a registry (OCI distribution spec) into an OCI image
 * layout directory, which rootlessrt then imports into its store. A separate program linked
 * with libcurl: rootlessrt is a static binary and Debian has no static libcurl with all of its
 * dependencies, so all HTTP and TLS live here and the runtime never maps them.
 *
 *   rootlessrt-pull [--platform OS/ARCH[/VARIANT]] [--authfile F] [--tls-verify=BOOL]
 *                   [--have DIR] [--partials DIR] [--short-names] --error-fd N --ready-fd M
 *                   DEST REF
 *
 * DEST gets oci-layout, index.json (the one manifest for the platform), the manifest and the
 * config, and a FIFO for every layer not already in DIR (STORE/layers/sha256: unpacked layers,
 * named by digest, are never fetched again); then a byte on fd M says the runtime can start
 * its import, which reads each FIFO in the manifest's order while the layer streams in, so a
 * layer is unpacked as it arrives (its compressed bytes kept only until then: --partials). Every
 * blob is checked against its digest while it streams (the runtime checks it again and commits
 * nothing that fails). With --partials (STORE/tmp), the compressed bytes of each layer received so
 * far are kept in DIR/partial-sha256-HEX (locked while written) until the layer arrived whole: a
 * pull cut there (the registry gone, the pull killed) is resumed by the next one with Range:
 * bytes=N-, the kept bytes sent to the import first, hashed on the way, then the rest (see
 * begin_body). Progress goes to stderr when it is a terminal; the error, one line, to fd N, as soon
 * as it happens (before the layer's FIFO is closed, so it is there before the import fails on it).
 * Exit status: 0 done, 1 failed. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <nettle/sha2.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "pull.h"

#define SMALL_MAX (4u << 20) /* manifests, configs, tokens, error bodies */
#define ACCEPT_MANIFESTS                                                                           \
  "Accept: application/vnd.oci.image.manifest.v1+json, "                                           \
  "application/vnd.oci.image.index.v1+json, "                                                      \
  "application/vnd.docker.distribution.manifest.v2+json, "                                         \
  "application/vnd.docker.distribution.manifest.list.v2+json"

/* ---------------------------------------------------------------- errors and memory */

static char g_err[4096];

int failf(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_err, sizeof(g_err), fmt, ap);
  va_end(ap);
  return -1;
}

void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p)
    abort();
  return p;
}

char *xstrdup(const char *s)
{
  char *p = strdup(s);
  if (!p)
    abort();
  return p;
}

char *xasprintf(const char *fmt, ...)
{
  va_list ap;
  char *s;
  va_start(ap, fmt);
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (n < 0)
    abort();
  return s;
}

/* ---------------------------------------------------------------- options */

static struct {
  const char *authfile, *have, *partials, *dest, *ref;
  char os[80], arch[80], variant[80];
  bool insecure, short_names;
  int error_fd, ready_fd;
  bool tty, streaming, reported;
  curl_off_t max_rate; /* ROOTLESSRT_PULL_MAX_RATE, bytes/s: lets tests interrupt a layer */
  /* ROOTLESSRT_PULL_FIFO_DELAY_MS: a wait before each layer's FIFO is opened, so a test can
   * check that the import waits for the client instead of reading an empty stream. */
  long fifo_delay_ms;
} opt = {.error_fd = -1, .ready_fd = -1};

/* The error, now: the runtime reads it before it sees the import fail on the cut layer. */
static void report(void)
{
  if (opt.reported)
    return;
  opt.reported = true;
  if (opt.error_fd >= 0)
    (void)!write(opt.error_fd, g_err, strlen(g_err));
  else
    fprintf(stderr, "rootlessrt-pull: %s\n", g_err);
}

/* ---------------------------------------------------------------- one registry connection */

struct conn {
  const struct endpoint *ep;
  const char *scheme; /* https, or http for an insecure registry that does not speak TLS */
  char *cred;         /* user:password, or NULL */
  char *cred_from;    /* the file it came from */
  char *bearer;       /* "Authorization: Bearer TOKEN", or NULL */
  bool basic;         /* the registry asked for basic auth */
};

/* What a response's body goes to: memory (small documents) or a file, hashed either way. */
struct body {
  char *buf;
  size_t len, limit;
  int fd;           /* or -1 */
  const char *path; /* fd's, for errors */
  int werr;         /* the errno of a failed write to fd */
  struct sha256_ctx sha;
  uint64_t got, size; /* size: what the descriptor says, 0 when unknown */
  CURL *curl;
  char *errbuf; /* a non-2xx body, for the registry's error message */
  size_t errlen;
  /* progress */
  const char *label;
  double last;
  /* A layer's partial download kept for resuming: keep_fd is open only with keep_path set
   * (see keeping). from: the bytes it held when the request asked for the rest (Range:
   * bytes=from-); 0 asks for all of it. */
  const char *keep_path;
  int keep_fd;
  uint64_t from, resumed; /* resumed: the kept bytes the import got before the registry's */
  int kerr;               /* the errno of a failed read of the kept bytes */
  bool started;           /* the first byte of a 2xx answer came (begin_body ran) */
  bool restart;           /* a 206 for another range than asked: the request is made again */
  const struct response *resp;
};

struct response {
  long status;
  char *ctype, *digest, *challenge, *crange; /* crange: Content-Range of a 206 */
};

static void response_free(struct response *r)
{
  free(r->ctype);
  free(r->digest);
  free(r->challenge);
  free(r->crange);
  *r = (struct response){0};
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show_progress(struct body *b, bool final)
{
  if (!opt.tty || !b->label)
    return;
  double t = now_s();
  if (!final && t - b->last < 0.1)
    return;
  b->last = t;
  fprintf(stderr, "\r%s: %.1f/%.1f MiB%s", b->label, (double)b->got / 1048576.0,
          (double)b->size / 1048576.0, final ? "\n" : "   ");
}

/* All of buf to fd (the layer's FIFO, or the config's file); -1 with b->werr set. */
static int write_out(struct body *b, const char *data, size_t n)
{
  for (size_t off = 0; off < n;) {
    ssize_t w = write(b->fd, data + off, n - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      b->werr = w < 0 ? errno : ENOSPC;
      return -1;
    }
    off += (size_t)w;
  }
  return 0;
}

/* Whether a partial download is kept: bodies that are not a layer's (manifests, tokens) are
 * initialised without a keep_path, and their zeroed keep_fd means nothing. */
static bool keeping(const struct body *b)
{
  return b->keep_path && b->keep_fd >= 0;
}

/* The partial download cannot be kept (a full disk, say): it goes, and the layer streams on
 * without it. Keeping it is for a later pull's sake; this pull's only errors are its own. */
static void drop_keep(struct body *b)
{
  if (!keeping(b))
    return;
  unlink(b->keep_path);
  close(b->keep_fd);
  b->keep_fd = -1;
}

/* What a 206 continues: "bytes FROM-LAST/TOTAL". */
static bool range_starts_at(const char *crange, uint64_t from)
{
  unsigned long long start;
  return crange && sscanf(crange, "bytes %llu-", &start) == 1 && start == from;
}

/* The first bytes of a layer's 2xx answer decide what its kept partial download is worth. A 206
 * from where it ends continues it: the kept bytes go to the import first, hashed on the way (the
 * blob's digest is checked over all of them at the end). A 200 means the registry ignored the
 * Range: the download starts again from nothing. Nothing has reached the import before this. */
static int begin_body(struct body *b, long status)
{
  b->started = true;
  if (b->from == 0)
    return 0;
  if (status != 206) {
    b->from = 0;
    if (ftruncate(b->keep_fd, 0) < 0)
      drop_keep(b);
    return 0;
  }
  if (!range_starts_at(b->resp ? b->resp->crange : NULL, b->from)) {
    b->restart = true;
    return -1;
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
    if (write_out(b, buf, (size_t)n) < 0)
      return -1;
    off += (uint64_t)n;
  }
  b->got = b->resumed = b->from;
  return 0;
}

static size_t on_body(char *data, size_t sz, size_t nm, void *arg)
{
  struct body *b = arg;
  size_t n = sz * nm;
  long status = 0;
  curl_easy_getinfo(b->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    size_t keep = b->errlen + n < SMALL_MAX ? n : 0;
    b->errbuf = realloc(b->errbuf, b->errlen + keep + 1);
    memcpy(b->errbuf + b->errlen, data, keep);
    b->errlen += keep;
    b->errbuf[b->errlen] = '\0';
    return n;
  }
  if (!b->started && begin_body(b, status) < 0)
    return 0;
  if ((b->size && b->got + n > b->size) || (b->fd < 0 && b->len + n > b->limit))
    return 0; /* more than the descriptor said: stop here */
  sha256_update(&b->sha, n, (const uint8_t *)data);
  if (keeping(b)) { /* registry bytes, kept before the import sees them */
    for (size_t off = 0; off < n;) {
      ssize_t w = pwrite(b->keep_fd, data + off, n - off, (off_t)(b->got + off));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0) {
        drop_keep(b);
        break;
      }
      off += (size_t)w;
    }
  }
  b->got += n;
  if (b->fd >= 0) {
    if (write_out(b, data, n) < 0)
      return 0;
  } else {
    b->buf = realloc(b->buf, b->len + n + 1);
    memcpy(b->buf + b->len, data, n);
    b->len += n;
    b->buf[b->len] = '\0';
  }
  show_progress(b, false);
  return n;
}

static char *header_value(const char *line, size_t n, const char *name)
{
  size_t l = strlen(name);
  if (n <= l || strncasecmp(line, name, l) != 0 || line[l] != ':')
    return NULL;
  const char *v = line + l + 1, *end = line + n;
  while (v < end && (*v == ' ' || *v == '\t'))
    v++;
  while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
    end--;
  return strndup(v, (size_t)(end - v));
}

static size_t on_header(char *data, size_t sz, size_t nm, void *arg)
{
  struct response *r = arg;
  size_t n = sz * nm;
  char *v;
  if (n > 5 && strncmp(data, "HTTP/", 5) == 0) { /* a new response (after a redirect) */
    free(r->ctype), free(r->digest), free(r->challenge), free(r->crange);
    r->ctype = r->digest = r->challenge = r->crange = NULL;
  }
  if ((v = header_value(data, n, "Content-Type")))
    free(r->ctype), r->ctype = v;
  else if ((v = header_value(data, n, "Docker-Content-Digest")))
    free(r->digest), r->digest = v;
  else if ((v = header_value(data, n, "WWW-Authenticate")))
    free(r->challenge), r->challenge = v;
  else if ((v = header_value(data, n, "Content-Range")))
    free(r->crange), r->crange = v;
  return n;
}

/* The registry's own words for an error: {"errors":[{"code":..,"message":..}]}. */
static const char *registry_says(struct body *b, char *out, size_t outlen)
{
  snprintf(out, outlen, "%s", "");
  json_object *doc = b->errbuf ? json_tokener_parse(b->errbuf) : NULL, *errs, *e, *m;
  if (doc && json_object_object_get_ex(doc, "errors", &errs) &&
      json_object_is_type(errs, json_type_array) && json_object_array_length(errs) > 0 &&
      (e = json_object_array_get_idx(errs, 0)) && json_object_object_get_ex(e, "message", &m))
    snprintf(out, outlen, " (%s)", json_object_get_string(m));
  json_object_put(doc);
  return out;
}

/* One GET. A transport failure (no connection, TLS) is an error; an HTTP status is not. */
static int get(struct conn *c, const char *url, const char *accept, struct body *b,
               struct response *resp, bool with_auth)
{
  CURL *curl = curl_easy_init();
  if (!curl)
    return failf("curl_easy_init failed");
  struct curl_slist *hdrs = NULL;
  if (accept)
    hdrs = curl_slist_append(hdrs, accept);
  if (with_auth && c->bearer)
    hdrs = curl_slist_append(hdrs, c->bearer);
  char errbuf[CURL_ERROR_SIZE] = "", range[32];
  b->curl = curl;
  b->resp = resp;
  sha256_init(&b->sha);
  if (b->from > 0) {
    snprintf(range, sizeof(range), "%llu-", (unsigned long long)b->from);
    curl_easy_setopt(curl, CURLOPT_RANGE, range);
  }
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, c->ep->insecure ? "http,https" : "https");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, b);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, resp);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "rootlessrt/" RRT_VERSION);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
  /* A stalled transfer (under 1 byte/s for 60 s) is a failure, not a hang. */
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  if (opt.max_rate > 0)
    curl_easy_setopt(curl, CURLOPT_MAX_RECV_SPEED_LARGE, opt.max_rate);
  if (c->ep->insecure) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (with_auth && c->basic && c->cred && !c->bearer) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERPWD, c->cred);
  }
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp->status);
  curl_easy_cleanup(curl);
  curl_slist_free_all(hdrs);
  b->curl = NULL;
  b->resp = NULL;
  if (rc == CURLE_WRITE_ERROR && b->restart)
    return 0; /* the caller asks again, for all of it */
  if (rc == CURLE_WRITE_ERROR && b->kerr)
    return failf("read %s (the partial download to resume): %s", b->keep_path, strerror(b->kerr));
  if (rc == CURLE_WRITE_ERROR && b->werr)
    return failf("write %s: %s", b->path ? b->path : "the download", strerror(b->werr));
  if (rc == CURLE_WRITE_ERROR && b->size && b->got >= b->size)
    return failf("%s: more data than the %llu bytes its descriptor says", url,
                 (unsigned long long)b->size);
  if (rc != CURLE_OK && !c->ep->insecure &&
      (rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION))
    return failf("%s: %s (TLS is verified; --tls-verify=false, or insecure = true in "
                 "registries.conf, allows an unverified certificate or plain http)",
                 url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
  if (rc != CURLE_OK)
    return failf("%s: %s", url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
  return 0;
}

/* A challenge's parameter: realm="...", service="...", scope="...". */
static char *challenge_param(const char *ch, const char *key)
{
  size_t kl = strlen(key);
  for (const char *p = ch; (p = strstr(p, key)); p += kl) {
    if ((p == ch || p[-1] == ' ' || p[-1] == ',') && p[kl] == '=' && p[kl + 1] == '"') {
      const char *v = p + kl + 2, *end = strchr(v, '"');
      return end ? strndup(v, (size_t)(end - v)) : NULL;
    }
  }
  return NULL;
}

/* The distribution spec's token flow: GET realm?service=..&scope=repository:REPO:pull, with
 * the credentials when there are some; the answer's token (or access_token). */
static int fetch_token(struct conn *c, const char *challenge)
{
  char *realm = challenge_param(challenge, "realm");
  char *service = challenge_param(challenge, "service");
  if (!realm) {
    free(service);
    return failf("registry %s: a Bearer challenge without a realm", c->ep->host);
  }
  CURL *esc = curl_easy_init();
  char *s = service ? curl_easy_escape(esc, service, 0) : NULL;
  char *scope_raw = xasprintf("repository:%s:pull", c->ep->repo);
  char *scope = curl_easy_escape(esc, scope_raw, 0);
  char *url = xasprintf("%s%sscope=%s%s%s", realm, strchr(realm, '?') ? "&" : "?", scope,
                        s ? "&service=" : "", s ? s : "");
  curl_free(s);
  curl_free(scope);
  curl_easy_cleanup(esc);
  free(scope_raw);
  struct conn tc = *c;
  tc.basic = c->cred != NULL;
  tc.bearer = NULL;
  struct body b = {.fd = -1, .limit = SMALL_MAX};
  struct response resp = {0};
  int r = get(&tc, url, NULL, &b, &resp, true);
  char says[512];
  if (r == 0 && resp.status == 401)
    r = c->cred ? failf("registry %s: the token server %s refused the credentials from %s",
                        c->ep->host, realm, c->cred_from)
                : failf("registry %s: authentication required: no credentials for it in %s",
                        c->ep->host, c->cred_from ? c->cred_from : "any auth.json");
  else if (r == 0 && (resp.status < 200 || resp.status > 299))
    r = failf("registry %s: the token server %s answered HTTP %ld%s", c->ep->host, realm,
              resp.status, registry_says(&b, says, sizeof(says)));
  if (r == 0) {
    json_object *doc = json_tokener_parse(b.buf ? b.buf : ""), *t;
    if (doc && (json_object_object_get_ex(doc, "token", &t) ||
                json_object_object_get_ex(doc, "access_token", &t)))
      c->bearer = xasprintf("Authorization: Bearer %s", json_object_get_string(t));
    else
      r = failf("registry %s: the token server %s gave no token", c->ep->host, realm);
    json_object_put(doc);
  }
  free(b.buf);
  free(b.errbuf);
  response_free(&resp);
  free(url);
  free(realm);
  free(service);
  return r;
}

/* GET with the registry's authentication: a 401 is answered once, as its challenge asks. */
static int reg_get(struct conn *c, const char *url, const char *accept, struct body *b,
                   struct response *resp)
{
  if (get(c, url, accept, b, resp, true) < 0)
    return -1;
  if (resp->status != 401 || c->bearer || (c->basic && c->cred))
    return 0;
  char *ch = resp->challenge ? xstrdup(resp->challenge) : xstrdup("");
  if (strncasecmp(ch, "Bearer", 6) == 0) {
    int r = fetch_token(c, ch);
    free(ch);
    if (r < 0)
      return -1;
  } else {
    free(ch);
    if (!c->cred)
      return failf("registry %s: authentication required: no credentials for it in %s "
                   "(or give --authfile)",
                   c->ep->host, c->cred_from ? c->cred_from : "any auth.json");
    c->basic = true;
  }
  response_free(resp);
  free(b->buf), free(b->errbuf);
  b->buf = b->errbuf = NULL;
  b->len = b->errlen = 0;
  /* Nothing of a 401's body reached b->fd or the kept partial (on_body): no truncation. */
  return get(c, url, accept, b, resp, true);
}

/* ---------------------------------------------------------------- digests and files */

static void hex_of(struct sha256_ctx *sha, char out[65])
{
  uint8_t d[SHA256_DIGEST_SIZE];
  sha256_digest(sha, sizeof(d), d);
  for (size_t i = 0; i < sizeof(d); i++)
    snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int valid_digest(const char *d)
{
  return d && strncmp(d, "sha256:", 7) == 0 && strlen(d + 7) == 64 &&
         strspn(d + 7, "0123456789abcdef") == 64;
}

static int write_file(const char *path, const char *data, size_t len)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return failf("%s: %s", path, strerror(errno));
  ssize_t w = write(fd, data, len);
  int e = errno;
  if (close(fd) < 0 && w == (ssize_t)len)
    return failf("%s: %s", path, strerror(errno));
  return w == (ssize_t)len ? 0 : failf("%s: %s", path, w < 0 ? strerror(e) : "short write");
}

static const char *what_status(long status)
{
  return status == 404 ? "not found" : status == 401 ? "unauthorized" : "refused";
}

/* ---------------------------------------------------------------- manifests */

static char *base_url(const struct conn *c)
{
  /* Docker Hub's API host is not its name. */
  const char *host = strcmp(c->ep->host, "docker.io") == 0 ? "registry-1.docker.io" : c->ep->host;
  return xasprintf("%s://%s/v2/%s", c->scheme, host, c->ep->repo);
}

/* GET /v2/REPO/manifests/REF: the document, its media type, its digest (checked when asked for
 * by digest, or against Docker-Content-Digest when the registry sends one). */
static int get_manifest(struct conn *c, const char *ref, const char *want_digest, char **doc,
                        size_t *len, char **mtype, char digest[72])
{
  char *base = base_url(c);
  char *url = xasprintf("%s/manifests/%s", base, ref);
  free(base);
  struct body b = {.fd = -1, .limit = SMALL_MAX};
  struct response resp = {0};
  int r = reg_get(c, url, ACCEPT_MANIFESTS, &b, &resp);
  char says[512];
  if (r == 0 && resp.status == 401)
    r = c->cred ? failf("registry %s: authentication failed with the credentials for %s in %s",
                        c->ep->host, c->ep->host, c->cred_from)
                : failf("registry %s: unauthorized%s", c->ep->host,
                        registry_says(&b, says, sizeof(says)));
  else if (r == 0 && resp.status == 404)
    r = failf("%s/%s%s%s: no such image or tag in the registry%s", c->ep->host, c->ep->repo,
              strchr(ref, ':') ? "@" : ":", ref, registry_says(&b, says, sizeof(says)));
  else if (r == 0 && (resp.status < 200 || resp.status > 299))
    r = failf("%s: HTTP %ld%s", url, resp.status, registry_says(&b, says, sizeof(says)));
  if (r == 0) {
    char hex[65];
    hex_of(&b.sha, hex);
    snprintf(digest, 72, "sha256:%s", hex);
    const char *expect = want_digest ? want_digest : resp.digest;
    if (expect && valid_digest(expect) && strcmp(expect, digest) != 0)
      r = failf("manifest %s: digest mismatch: the registry sent %s", expect, digest);
  }
  if (r == 0) {
    *doc = b.buf ? b.buf : xstrdup("");
    *len = b.len;
    b.buf = NULL;
    char *semi = resp.ctype ? strchr(resp.ctype, ';') : NULL;
    if (semi)
      *semi = '\0';
    *mtype = resp.ctype ? xstrdup(resp.ctype) : xstrdup("");
  }
  free(b.buf);
  free(b.errbuf);
  response_free(&resp);
  free(url);
  return r;
}

static const char *str_of(json_object *o, const char *key)
{
  json_object *v;
  if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
    return NULL;
  return json_object_get_string(v);
}

static bool is_index(const char *mtype, json_object *doc)
{
  json_object *m;
  return strstr(mtype, "index") || strstr(mtype, "manifest.list") ||
         json_object_object_get_ex(doc, "manifests", &m);
}

/* The index's manifest for opt.os/arch[/variant]. */
static const char *pick_platform(json_object *idx, const char *what)
{
  json_object *ms;
  if (!json_object_object_get_ex(idx, "manifests", &ms) ||
      !json_object_is_type(ms, json_type_array)) {
    failf("%s: an index without manifests", what);
    return NULL;
  }
  char seen[512] = "";
  for (size_t i = 0; i < json_object_array_length(ms); i++) {
    json_object *m = json_object_array_get_idx(ms, i), *p = NULL;
    json_object_object_get_ex(m, "platform", &p);
    const char *os = str_of(p, "os"), *arch = str_of(p, "architecture"),
               *var = str_of(p, "variant");
    if (os && arch && strlen(seen) < sizeof(seen) - 64)
      snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%s/%s%s%s", *seen ? ", " : "",
               os, arch, var ? "/" : "", var ? var : "");
    if (os && arch && strcmp(os, opt.os) == 0 && strcmp(arch, opt.arch) == 0 &&
        (!opt.variant[0] || (var && strcmp(var, opt.variant) == 0)) &&
        valid_digest(str_of(m, "digest")))
      return str_of(m, "digest");
  }
  failf("%s: no image for %s/%s%s%s (the index has: %s)", what, opt.os, opt.arch,
        opt.variant[0] ? "/" : "", opt.variant, *seen ? seen : "no platforms");
  return NULL;
}

/* ---------------------------------------------------------------- blobs */

/* ---------------------------------------------------------------- partial downloads */

static char *keep_path_of(const char *digest)
{
  return xasprintf("%s/partial-sha256-%s", opt.partials, digest + 7);
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

/* A partial download of a layer the store has now (a pull that finished it left it, or the
 * layer came another way): removed, unless a pull is writing it. */
static void remove_done_partial(const char *digest)
{
  if (!opt.partials)
    return;
  char *path = keep_path_of(digest);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
    unlink(path);
  if (fd >= 0)
    close(fd);
  free(path);
}

/* ---------------------------------------------------------------- blobs */

/* The same request again, for all of the blob: the kept bytes were of no use (a 416, or a 206
 * for another range). Nothing reached the import yet. */
static void start_over(struct body *b, struct response *resp)
{
  if (b->keep_fd >= 0 && ftruncate(b->keep_fd, 0) < 0)
    drop_keep(b);
  free(b->errbuf);
  b->errbuf = NULL;
  b->errlen = 0;
  b->from = b->got = 0;
  b->started = b->restart = false;
  response_free(resp);
}

/* GET /v2/REPO/blobs/DIGEST into DEST/blobs/sha256/HEX, verified while it streams. */
/* fifo: into the FIFO DEST/blobs/sha256/HEX that the runtime's import reads (opening it waits
 * for the import to get there), the bytes kept as they come (see open_keep); otherwise into
 * HEX.partial, renamed once verified. */
static int get_blob(struct conn *c, const char *digest, uint64_t size, const char *label, bool fifo)
{
  const char *hex = digest + 7;
  char *final = xasprintf("%s/blobs/sha256/%s", opt.dest, hex);
  char *part = fifo ? xstrdup(final) : xasprintf("%s.partial", final);
  char *keep = fifo && opt.partials ? keep_path_of(digest) : NULL;
  char *base = base_url(c);
  char *url = xasprintf("%s/blobs/%s", base, digest);
  free(base);
  int r = 0;
  struct body b = {.size = size, .label = label, .path = part, .keep_fd = -1, .keep_path = keep};
  struct response resp = {0};
  if (fifo && opt.fifo_delay_ms > 0)
    nanosleep(&(struct timespec){opt.fifo_delay_ms / 1000, (opt.fifo_delay_ms % 1000) * 1000000},
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
  show_progress(&b, true);
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
    char why[sizeof(g_err)];
    snprintf(why, sizeof(why), "%s", g_err);
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
    drop_keep(&b);
  /* The import going away (EPIPE) is its error to tell, not this one. */
  if (r < 0 && b.werr != EPIPE)
    report();
  if (b.fd >= 0 && close(b.fd) < 0 && r == 0)
    r = failf("%s: %s", part, strerror(errno));
  if (r == 0 && !fifo && rename(part, final) < 0)
    r = failf("rename %s: %s", part, strerror(errno));
  if (r < 0 && !fifo)
    unlink(part);
  /* An empty one is worth nothing to the next pull. */
  struct stat st;
  if (b.keep_fd >= 0 && fstat(b.keep_fd, &st) == 0 && st.st_size == 0)
    drop_keep(&b);
  if (b.keep_fd >= 0)
    close(b.keep_fd);
  free(b.errbuf);
  response_free(&resp);
  free(url);
  free(part);
  free(keep);
  free(final);
  return r;
}

static bool have_layer(const char *digest)
{
  if (!opt.have)
    return false;
  char *p = xasprintf("%s/%s", opt.have, digest + 7);
  bool yes = access(p, F_OK) == 0;
  free(p);
  return yes;
}

static int fetch_image(struct conn *c, const char *ref, const char *want_digest)
{
  char *doc = NULL, *mtype = NULL;
  size_t len = 0;
  char digest[72];
  if (get_manifest(c, ref, want_digest, &doc, &len, &mtype, digest) < 0)
    return -1;
  json_object *j = json_tokener_parse(doc);
  int r = 0;
  if (!j || !json_object_is_type(j, json_type_object))
    r = failf("manifest %s: not valid JSON", digest);
  /* A manifest list or image index: the platform's manifest, fetched by its digest. */
  if (r == 0 && is_index(mtype, j)) {
    char *what = xasprintf("%s/%s:%s", c->ep->host, c->ep->repo, ref);
    const char *d = pick_platform(j, what);
    char *dd = d ? xstrdup(d) : NULL;
    free(what);
    json_object_put(j);
    j = NULL;
    free(doc), free(mtype);
    doc = mtype = NULL;
    r = dd ? get_manifest(c, dd, dd, &doc, &len, &mtype, digest) : -1;
    free(dd);
    if (r == 0 && !(j = json_tokener_parse(doc)))
      r = failf("manifest %s: not valid JSON", digest);
    if (r == 0 && is_index(mtype, j))
      r = failf("manifest %s: an index inside an index", digest);
  }
  json_object *cfg = NULL, *layers = NULL;
  if (r == 0 &&
      (!json_object_object_get_ex(j, "config", &cfg) || !valid_digest(str_of(cfg, "digest")) ||
       !json_object_object_get_ex(j, "layers", &layers) ||
       !json_object_is_type(layers, json_type_array)))
    r = failf("manifest %s (%s): not an image manifest with a config and layers", digest,
              *mtype ? mtype : "no media type");
  char *path = NULL;
  if (r == 0) {
    path = xasprintf("%s/blobs/sha256/%s", opt.dest, digest + 7);
    r = write_file(path, doc, len);
  }
  if (r == 0) {
    json_object *sz;
    uint64_t size =
        json_object_object_get_ex(cfg, "size", &sz) ? (uint64_t)json_object_get_int64(sz) : 0;
    r = get_blob(c, str_of(cfg, "digest"), size, NULL, false);
  }
  size_t n = r == 0 ? json_object_array_length(layers) : 0;
  for (size_t i = 0; r == 0 && i < n; i++) {
    const char *d = str_of(json_object_array_get_idx(layers, i), "digest");
    if (!valid_digest(d))
      r = failf("manifest %s: layer %zu has no sha256 digest", digest, i);
  }
  if (r == 0) {
    free(path);
    path = xasprintf("%s/oci-layout", opt.dest);
    r = write_file(path, "{\"imageLayoutVersion\":\"1.0.0\"}", 30);
  }
  if (r == 0) {
    char *index =
        xasprintf("{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"%s\","
                  "\"digest\":\"%s\",\"size\":%zu}]}",
                  *mtype ? mtype : "application/vnd.oci.image.manifest.v1+json", digest, len);
    free(path);
    path = xasprintf("%s/index.json", opt.dest);
    r = write_file(path, index, strlen(index));
    free(index);
  }
  /* A FIFO for each layer to fetch, then the runtime may start reading them in order. Each
   * FIFO made is served, even if the layer reaches the store meanwhile: the import, which
   * decides what it reads once it starts, may be waiting on it (when it reads none, it stops
   * this client once it is done). */
  bool *fifo = xmalloc((n + 1) * sizeof(bool));
  for (size_t i = 0; r == 0 && i < n; i++) {
    const char *d = str_of(json_object_array_get_idx(layers, i), "digest");
    free(path);
    path = xasprintf("%s/blobs/sha256/%s", opt.dest, d + 7);
    fifo[i] = !have_layer(d);
    if (!fifo[i])
      remove_done_partial(d);
    else if (mkfifo(path, 0600) < 0 && errno != EEXIST)
      r = failf("mkfifo %s: %s", path, strerror(errno));
  }
  if (r == 0 && opt.ready_fd >= 0) {
    opt.streaming = true;
    if (write(opt.ready_fd, "R", 1) != 1 || close(opt.ready_fd) < 0)
      r = failf("the runtime went away (ready fd: %s)", strerror(errno));
    opt.ready_fd = -1;
  }
  for (size_t i = 0; r == 0 && i < n; i++) {
    json_object *l = json_object_array_get_idx(layers, i), *sz;
    const char *d = str_of(l, "digest");
    /* The import reads a layer listed twice (an empty layer, say) once. */
    bool again = false;
    for (size_t k = 0; k < i; k++)
      again |= strcmp(str_of(json_object_array_get_idx(layers, k), "digest"), d) == 0;
    if (again || !fifo[i])
      continue;
    uint64_t size =
        json_object_object_get_ex(l, "size", &sz) ? (uint64_t)json_object_get_int64(sz) : 0;
    char *label = xasprintf("layer %zu/%zu %.19s", i + 1, n, d);
    r = get_blob(c, d, size, label, true);
    free(label);
  }
  free(fifo);
  free(path);
  json_object_put(j);
  free(doc);
  free(mtype);
  return r;
}

/* https, or for an insecure registry http when it does not answer TLS (as containers/image). */
static int connect_ep(struct conn *c)
{
  c->scheme = "https";
  if (!c->ep->insecure)
    return 0;
  const char *host = strcmp(c->ep->host, "docker.io") == 0 ? "registry-1.docker.io" : c->ep->host;
  char *url = xasprintf("https://%s/v2/", host);
  struct body b = {.fd = -1, .limit = SMALL_MAX};
  struct response resp = {0};
  if (get(c, url, NULL, &b, &resp, false) < 0)
    c->scheme = "http";
  free(b.buf);
  free(b.errbuf);
  response_free(&resp);
  free(url);
  return 0;
}

static int pull(void)
{
  struct resolved res;
  if (resolve_ref(opt.ref, opt.short_names, opt.insecure, &res) < 0) {
    resolved_free(&res);
    return -1;
  }
  char *sub = xasprintf("%s/blobs/sha256", opt.dest), *blobs = xasprintf("%s/blobs", opt.dest);
  int mk = (mkdir(blobs, 0755) < 0 && errno != EEXIST) || (mkdir(sub, 0755) < 0 && errno != EEXIST)
               ? failf("mkdir %s: %s", sub, strerror(errno))
               : 0;
  free(sub);
  free(blobs);
  if (mk < 0) {
    resolved_free(&res);
    return -1;
  }
  const char *ref = res.digest ? res.digest : res.tag;
  int r = -1;
  char first[sizeof(g_err)] = "";
  /* Mirrors (and search registries) in order; the first error is the one reported when all fail
   * unless a later one got further than "not there". */
  /* Once the import reads the layers, another endpoint cannot start them again. */
  for (size_t i = 0; i < res.n && r < 0 && !opt.streaming; i++) {
    struct conn c = {.ep = &res.eps[i]};
    c.cred = auth_lookup(opt.authfile, c.ep->host, c.ep->repo, &c.cred_from);
    if (connect_ep(&c) == 0)
      r = fetch_image(&c, ref, res.digest);
    /* Which name a short name was found under (its search registry), for the runtime to
     * record the image by: a hint, whose loss (a full disk) costs the record, not the pull. */
    char *named =
        r == 0 && opt.short_names && c.ep->name ? xasprintf("%s/rootlessrt-name", opt.dest) : NULL;
    if (named) {
      char saved[sizeof(g_err)];
      snprintf(saved, sizeof(saved), "%s", g_err);
      (void)write_file(named, c.ep->name, strlen(c.ep->name));
      snprintf(g_err, sizeof(g_err), "%s", saved);
    }
    free(named);
    if (r < 0 && !first[0])
      snprintf(first, sizeof(first), "%s", g_err);
    free(c.cred);
    free(c.cred_from);
    free(c.bearer);
  }
  if (r < 0 && res.n > 1)
    snprintf(g_err, sizeof(g_err), "%s", first);
  resolved_free(&res);
  return r;
}

/* ---------------------------------------------------------------- main */

static void default_platform(void)
{
  struct utsname u;
  const char *arch = "amd64", *variant = "";
  if (uname(&u) == 0) {
    if (strcmp(u.machine, "x86_64") == 0)
      arch = "amd64";
    else if (strcmp(u.machine, "aarch64") == 0)
      arch = "arm64";
    else if (strncmp(u.machine, "armv7", 5) == 0)
      arch = "arm", variant = "v7";
    else if (strcmp(u.machine, "i686") == 0 || strcmp(u.machine, "i386") == 0)
      arch = "386";
    else
      arch = u.machine;
  }
  snprintf(opt.os, sizeof(opt.os), "linux");
  snprintf(opt.arch, sizeof(opt.arch), "%s", arch);
  snprintf(opt.variant, sizeof(opt.variant), "%s", variant);
}

static int parse_platform(const char *p)
{
  char os[80] = "", arch[80] = "", var[80] = "";
  int n = sscanf(p, "%79[^/]/%79[^/]/%79s", os, arch, var);
  if (n < 2 || !*os || !*arch)
    return failf("--platform %s: not OS/ARCH[/VARIANT] (e.g. linux/arm64)", p);
  snprintf(opt.os, sizeof(opt.os), "%s", os);
  snprintf(opt.arch, sizeof(opt.arch), "%s", arch);
  snprintf(opt.variant, sizeof(opt.variant), "%s", var);
  return 0;
}

static int parse_args(int argc, char **argv)
{
  int i = 1;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--platform") == 0 && next) {
      if (parse_platform(next) < 0)
        return -1;
      i++;
    } else if (strcmp(a, "--authfile") == 0 && next) {
      opt.authfile = argv[++i];
    } else if (strcmp(a, "--have") == 0 && next) {
      opt.have = argv[++i];
    } else if (strcmp(a, "--partials") == 0 && next) {
      opt.partials = argv[++i];
    } else if (strcmp(a, "--error-fd") == 0 && next) {
      opt.error_fd = atoi(argv[++i]);
    } else if (strcmp(a, "--ready-fd") == 0 && next) {
      opt.ready_fd = atoi(argv[++i]);
    } else if (strcmp(a, "--short-names") == 0) {
      opt.short_names = true;
    } else if (strcmp(a, "--tls-verify=false") == 0) {
      opt.insecure = true;
    } else if (strcmp(a, "--tls-verify=true") == 0 || strcmp(a, "--tls-verify") == 0) {
      opt.insecure = false;
    } else {
      return failf("rootlessrt-pull: unknown option %s", a);
    }
  }
  if (argc - i != 2)
    return failf("usage: rootlessrt-pull [OPTIONS] --error-fd N DEST REF");
  opt.dest = argv[i];
  opt.ref = argv[i + 1];
  return 0;
}

int main(int argc, char **argv)
{
  signal(SIGPIPE, SIG_IGN); /* a FIFO whose reader is gone: EPIPE */
  default_platform();
  opt.tty = isatty(2);
  const char *rate = getenv("ROOTLESSRT_PULL_MAX_RATE");
  if (rate && *rate)
    opt.max_rate = (curl_off_t)strtoll(rate, NULL, 10);
  const char *delay = getenv("ROOTLESSRT_PULL_FIFO_DELAY_MS");
  if (delay && *delay)
    opt.fifo_delay_ms = strtol(delay, NULL, 10);
  int r = parse_args(argc, argv);
  if (r == 0 && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    r = failf("curl_global_init failed");
  if (r == 0)
    r = pull();
  if (r < 0) {
    report();
    return 1;
  }
  return 0;
}
