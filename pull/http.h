/* http.h: one registry connection and its GETs (libcurl), the bodies they fill, the headers
 * read from the answers. */
#ifndef ROOTLESSRT_PULL_HTTP_H
#define ROOTLESSRT_PULL_HTTP_H

#include <nettle/sha2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pull.h"

#define SMALL_MAX (4u << 20) /* manifests, configs, tokens, error bodies */

struct conn {
  const struct endpoint *ep;
  const char *scheme; /* https, or http for an insecure registry that does not speak TLS */
  char *cred;         /* user:password, or NULL */
  char *cred_from;    /* the file it came from */
  char *token;        /* the bearer token (checked: http_b64token), or NULL */
  bool basic;         /* the registry asked for basic auth */
};

struct response {
  long status;
  char *ctype, *digest, *challenge, *crange; /* crange: Content-Range of a 206 */
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
  void *curl;
  char *errbuf; /* a non-2xx body, for the registry's error message */
  size_t errlen;
  /* progress */
  const char *label;
  double last;
  /* A layer's partial download kept for resuming: keep_fd is open only with keep_path set
   * (see body_keeping). from: the bytes it held when the request asked for the rest (Range:
   * bytes=from-); 0 asks for all of it. */
  const char *keep_path;
  int keep_fd;
  uint64_t from, resumed; /* resumed: the kept bytes the import got before the registry's */
  int kerr;               /* the errno of a failed read of the kept bytes */
  bool started;           /* the first byte of a 2xx answer came (on_start ran) */
  bool restart;           /* a 206 for another range than asked: the request is made again */
  /* Called at the first byte of a 2xx answer, before it is taken (blob.c: resuming); -1 stops
   * the transfer. */
  int (*on_start)(struct body *b, long status);
  const struct response *resp;
};

/* libcurl's global set-up, once. */
int http_init(void);
void response_free(struct response *r);
void body_free(struct body *b);

/* One GET. A transport failure (no connection, TLS) is an error; an HTTP status is not. accept:
 * the Accept header's value or NULL; with_auth: the connection's token or credentials. */
int http_get(struct conn *c, const char *url, const char *accept, struct body *b,
             struct response *resp, bool with_auth);
/* https://HOST/v2/REPO (Docker Hub's API host for docker.io). */
char *http_base_url(const struct conn *c);

/* All of data to b->fd (the layer's FIFO, or the config's file); -1 with b->werr set. */
int body_write(struct body *b, const char *data, size_t n);
bool body_keeping(const struct body *b);
void body_drop_keep(struct body *b);
/* Progress on stderr when it is a terminal (popt.tty) and b has a label. */
void body_progress(struct body *b, bool final);

/* A header line as libcurl gives it ("Name: value\r\n", or a status line), into r. */
void http_header_line(struct response *r, const char *line, size_t n);
/* The value of header name in line (n bytes), trimmed, malloc'd; NULL when line is another. */
char *http_header_value(const char *line, size_t n, const char *name);
/* RFC 6750's b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". A bearer
 * token is sent only when it is one: nothing else can reach a header. */
bool http_b64token(const char *s);

/* The registry's own words for an error ({"errors":[{"code":..,"message":..}]}), escaped, as
 * " (MESSAGE)" in out, or "". Returns out. */
const char *registry_says(const struct body *b, char *out, size_t outlen);
const char *what_status(long status);

#endif
