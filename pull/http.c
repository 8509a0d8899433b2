/* http.c: the client's HTTP (libcurl): one GET with the connection's authentication, its body
 * into memory or a file (hashed, and for a layer kept for resuming), the headers it reads, the
 * registry's error message. */
#include <curl/curl.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "http.h"

int http_init(void)
{
  return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : failf("curl_global_init failed");
}

void response_free(struct response *r)
{
  free(r->ctype);
  free(r->digest);
  free(r->challenge);
  free(r->crange);
  *r = (struct response){0};
}

void body_free(struct body *b)
{
  free(b->buf);
  free(b->errbuf);
  b->buf = b->errbuf = NULL;
  b->len = b->errlen = 0;
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void body_progress(struct body *b, bool final)
{
  if (!popt.tty || !b->label)
    return;
  double t = now_s();
  if (!final && t - b->last < 0.1)
    return;
  b->last = t;
  fprintf(stderr, "\r%s: %.1f/%.1f MiB%s", b->label, (double)b->got / 1048576.0,
          (double)b->size / 1048576.0, final ? "\n" : "   ");
}

int body_write(struct body *b, const char *data, size_t n)
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
bool body_keeping(const struct body *b)
{
  return b->keep_path && b->keep_fd >= 0;
}

/* The partial download cannot be kept (a full disk, say): it goes, and the layer streams on
 * without it. Keeping it is for a later pull's sake; this pull's only errors are its own. */
void body_drop_keep(struct body *b)
{
  if (!body_keeping(b))
    return;
  unlink(b->keep_path);
  close(b->keep_fd);
  b->keep_fd = -1;
}

static size_t on_body(char *data, size_t sz, size_t nm, void *arg)
{
  struct body *b = arg;
  size_t n = sz * nm;
  long status = 0;
  curl_easy_getinfo(b->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    size_t keep = b->errlen + n < SMALL_MAX ? n : 0;
    b->errbuf = xrealloc(b->errbuf, b->errlen + keep + 1);
    memcpy(b->errbuf + b->errlen, data, keep);
    b->errlen += keep;
    b->errbuf[b->errlen] = '\0';
    return n;
  }
  if (!b->started) {
    b->started = true;
    if (b->on_start && b->on_start(b, status) < 0)
      return 0;
  }
  if ((b->size && b->got + n > b->size) || (b->fd < 0 && b->len + n > b->limit))
    return 0; /* more than the descriptor said: stop here */
  sha256_update(&b->sha, n, (const uint8_t *)data);
  if (body_keeping(b)) { /* registry bytes, kept before the import sees them */
    for (size_t off = 0; off < n;) {
      ssize_t w = pwrite(b->keep_fd, data + off, n - off, (off_t)(b->got + off));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0) {
        body_drop_keep(b);
        break;
      }
      off += (size_t)w;
    }
  }
  b->got += n;
  if (b->fd >= 0) {
    if (body_write(b, data, n) < 0)
      return 0;
  } else {
    b->buf = xrealloc(b->buf, b->len + n + 1);
    memcpy(b->buf + b->len, data, n);
    b->len += n;
    b->buf[b->len] = '\0';
  }
  body_progress(b, false);
  return n;
}

char *http_header_value(const char *line, size_t n, const char *name)
{
  size_t l = strlen(name);
  if (n <= l || strncasecmp(line, name, l) != 0 || line[l] != ':')
    return NULL;
  const char *v = line + l + 1, *end = line + n;
  while (v < end && (*v == ' ' || *v == '\t'))
    v++;
  while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
    end--;
  return xstrndup(v, (size_t)(end - v));
}

void http_header_line(struct response *r, const char *data, size_t n)
{
  char *v;
  if (n > 5 && strncmp(data, "HTTP/", 5) == 0) { /* a new response (after a redirect) */
    long status = r->status;
    response_free(r);
    r->status = status;
  }
  if ((v = http_header_value(data, n, "Content-Type")))
    free(r->ctype), r->ctype = v;
  else if ((v = http_header_value(data, n, "Docker-Content-Digest")))
    free(r->digest), r->digest = v;
  else if ((v = http_header_value(data, n, "WWW-Authenticate")))
    free(r->challenge), r->challenge = v;
  else if ((v = http_header_value(data, n, "Content-Range")))
    free(r->crange), r->crange = v;
}

static size_t on_header(char *data, size_t sz, size_t nm, void *arg)
{
  http_header_line(arg, data, sz * nm);
  return sz * nm;
}

bool http_b64token(const char *s)
{
  static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/";
  size_t n = s ? strspn(s, ok) : 0;
  return n > 0 && strspn(s + n, "=") == strlen(s + n);
}

const char *registry_says(const struct body *b, char *out, size_t outlen)
{
  snprintf(out, outlen, "%s", "");
  json_object *doc = b->errbuf ? json_tokener_parse(b->errbuf) : NULL, *errs, *e, *m;
  if (doc && json_object_object_get_ex(doc, "errors", &errs) &&
      json_object_is_type(errs, json_type_array) && json_object_array_length(errs) > 0 &&
      (e = json_object_array_get_idx(errs, 0)) && json_object_object_get_ex(e, "message", &m) &&
      json_object_is_type(m, json_type_string)) {
    char said[400];
    snprintf(out, outlen, " (%s)", rrt_escape_buf(json_object_get_string(m), said, sizeof(said)));
  }
  json_object_put(doc);
  return out;
}

const char *what_status(long status)
{
  return status == 404 ? "not found" : status == 401 ? "unauthorized" : "refused";
}

char *http_base_url(const struct conn *c)
{
  /* Docker Hub's API host is not its name. */
  const char *host = strcmp(c->ep->host, "docker.io") == 0 ? "registry-1.docker.io" : c->ep->host;
  return xasprintf("%s://%s/v2/%s", c->scheme, host, c->ep->repo);
}

int http_get(struct conn *c, const char *url, const char *accept, struct body *b,
             struct response *resp, bool with_auth)
{
  CURL *curl = curl_easy_init();
  if (!curl)
    return failf("curl_easy_init failed");
  struct curl_slist *hdrs = NULL;
  cleanup_free char *accept_h = accept ? xasprintf("Accept: %s", accept) : NULL;
  cleanup_free char *auth_h = NULL;
  if (accept_h)
    hdrs = curl_slist_append(hdrs, accept_h);
  /* Checked when it came (token.c) and again here, where the header is made. */
  if (with_auth && c->token && http_b64token(c->token)) {
    auth_h = xasprintf("Authorization: Bearer %s", c->token);
    hdrs = curl_slist_append(hdrs, auth_h);
  }
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
  if (popt.max_rate > 0)
    curl_easy_setopt(curl, CURLOPT_MAX_RECV_SPEED_LARGE, (curl_off_t)popt.max_rate);
  if (c->ep->insecure) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (with_auth && c->basic && c->cred && !c->token) {
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
  char said[CURL_ERROR_SIZE * 4];
  const char *why = rrt_escape_buf(errbuf[0] ? errbuf : curl_easy_strerror(rc), said, sizeof(said));
  if (rc != CURLE_OK && !c->ep->insecure &&
      (rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION))
    return failf("%s: %s (TLS is verified; --tls-verify=false, or insecure = true in "
                 "registries.conf, allows an unverified certificate or plain http)",
                 url, why);
  if (rc != CURLE_OK)
    return failf("%s: %s", url, why);
  return 0;
}
