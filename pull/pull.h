/* pull.h: what the files of rootlessrt-pull (the registry client) share. */
#ifndef ROOTLESSRT_PULL_H
#define ROOTLESSRT_PULL_H

#include <stdbool.h>
#include <stddef.h>

/* The one error message of the helper: failf sets it; always returns -1. */
int failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xmalloc(size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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

/* REF: HOST[:PORT]/PATH[:TAG|@DIGEST] (docker://), or a short name resolved through
 * registries.conf's unqualified-search-registries (short = true: no docker.io default).
 * insecure_flag: --tls-verify=false. */
int resolve_ref(const char *ref, bool short_ok, bool insecure_flag, struct resolved *out);
void resolved_free(struct resolved *r);

/* user:password for host (and the repository, for keys with a path) from the credentials file:
 * authfile if given, else the files podman, skopeo and docker read. NULL when none. */
char *auth_lookup(const char *authfile, const char *host, const char *repo, char **from);

#endif
