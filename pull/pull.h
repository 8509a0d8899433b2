/* pull.h: what the files of rootlessrt-pull (the registry client) share: the error, the options,
 * references and registries.conf (regconf.c), credentials (auth.c). Memory is base/alloc.c's
 * (x* abort when it runs out), escaping base/escape.c's: the client links both objects. */
#ifndef ROOTLESSRT_PULL_H
#define ROOTLESSRT_PULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rootlessrt/escape.h"
#include "rootlessrt/util.h"

/* ---------------------------------------------------------------- common.c */

/* The one error message of the client: failf sets it; always returns -1. */
int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message failf set last ("" before any). */
const char *pull_error(void);
/* The error to the runtime (--error-fd) or stderr, once, as soon as it is known: the runtime
 * reads it before it sees its import fail on a cut layer. */
void pull_report(void);

/* What the command line and the environment say (helper_main.c fills it). */
struct pull_opts {
  const char *authfile, *have, *partials, *dest, *ref;
  char os[80], arch[80], variant[80];
  bool insecure, short_names;
  int error_fd, ready_fd;
  bool tty;           /* stderr is a terminal: progress lines */
  bool streaming;     /* the runtime's import reads the layers */
  long long max_rate; /* ROOTLESSRT_PULL_MAX_RATE, bytes/s: lets tests interrupt a layer */
  /* ROOTLESSRT_PULL_FIFO_DELAY_MS: a wait before each layer's FIFO is opened, so a test can
   * check that the import waits for the client instead of reading an empty stream. */
  long fifo_delay_ms;
};
extern struct pull_opts popt;

/* "sha256:" and 64 lowercase hex digits. */
bool valid_digest(const char *d);
/* len bytes to a new file path (replacing one); -1 with the error set. */
int write_file(const char *path, const char *data, size_t len);

/* ---------------------------------------------------------------- regconf.c */

/* Where a repository can be fetched from, in order: mirrors first, then the registry itself. */
struct endpoint {
  char *host;    /* registry host[:port] as written in references and auth.json */
  char *repo;    /* the repository's path in that registry */
  bool insecure; /* http allowed, certificates not verified */
  char *name;    /* the image's name (HOST/PATH) this endpoint serves, mirrors included */
};

/* The reference after resolution (registries.conf): where to try, and the tag or digest. */
struct resolved {
  struct endpoint *eps;
  size_t n;
  char *tag;    /* or NULL */
  char *digest; /* "sha256:HEX", or NULL */
  char *conf;   /* the registries.conf read, or NULL */
};

/* registries.conf as read: search registries and [[registry]] entries. */
struct regconf;
/* The text of a registries.conf (a subset of TOML); path names it in errors. */
struct regconf *regconf_parse(const char *text, const char *path);
void regconf_free(struct regconf *c);

/* REF: HOST[:PORT]/PATH[:TAG|@DIGEST] (docker://), or a short name resolved through
 * registries.conf's unqualified-search-registries (short = true: no docker.io default).
 * insecure_flag: --tls-verify=false. Every name that goes into a URL is checked against the
 * distribution spec's grammar here. */
int resolve_ref(const char *ref, bool short_ok, bool insecure_flag, struct resolved *out);
/* The same with a registries.conf already parsed (conf may be NULL: none). */
int resolve_ref_with(const struct regconf *conf, const char *ref, bool short_ok, bool insecure_flag,
                     struct resolved *out);
void resolved_free(struct resolved *r);

/* ---------------------------------------------------------------- auth.c */

/* user:password for host (and the repository, for keys with a path) from the credentials file:
 * authfile if given, else the files podman, skopeo and docker read. NULL when none. */
char *auth_lookup(const char *authfile, const char *host, const char *repo, char **from);
/* The same from the text of such a file. */
char *auth_lookup_in(const char *text, const char *host, const char *repo);
/* Standard base64 (RFC 4648, padding optional) of in[0..n), NUL-terminated; NULL when it is not
 * base64. *outlen: the bytes decoded (they may hold a NUL). */
char *auth_b64_decode(const char *in, size_t n, size_t *outlen);
/* How well an auths key matches host and repo: the length matched, 0 for no match. */
size_t auth_key_matches(const char *key, const char *host, const char *repo);

#endif
