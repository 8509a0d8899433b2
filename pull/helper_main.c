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
 * blob.c). Its files: http.c (the GETs), token.c (authentication), manifest.c (media types,
 * platforms), blob.c (streaming and resuming), layout.c (index.json), regconf.c and auth.c
 * (registries.conf, auth.json), common.c (the error, the options). Progress goes to stderr when it
 * is a terminal; the error, one line, to fd N, as soon as it happens (before the layer's FIFO is
 * closed, so it is there before the import fails on it). Exit status: 0 done, 1 failed. */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "blob.h"
#include "layout.h"
#include "manifest.h"
#include "pull.h"
#include "token.h"

/* A manifest as fetched: its bytes (the digest is over them), parsed, its media type. */
struct manifest {
  char *doc;
  size_t len;
  json_object *j;
  const char *mt; /* a known manifest or index type (manifest.h) */
  char digest[72];
};

static void manifest_free(struct manifest *m)
{
  free(m->doc);
  json_object_put(m->j);
  *m = (struct manifest){0};
}

static int get_parsed(struct conn *c, const char *ref, const char *want_digest, struct manifest *m)
{
  cleanup_free char *ctype = NULL;
  if (get_manifest(c, ref, want_digest, &m->doc, &m->len, &ctype, m->digest) < 0)
    return -1;
  cleanup_free char *what = xasprintf("manifest %s", m->digest);
  m->j = json_tokener_parse(m->doc);
  if (!m->j || !json_object_is_type(m->j, json_type_object))
    return failf("%s: not valid JSON", what);
  m->mt = manifest_media_type(ctype, m->j, what);
  return m->mt ? 0 : -1;
}

/* The image manifest at ref (a tag or digest): a manifest list or image index is followed to the
 * platform's manifest, fetched by its digest. */
static int fetch_manifest(struct conn *c, const char *ref, const char *want_digest,
                          struct manifest *m)
{
  if (get_parsed(c, ref, want_digest, m) < 0)
    return -1;
  if (!mt_is_index(m->mt))
    return 0;
  cleanup_free char *where = xasprintf("%s/%s:%s", c->ep->host, c->ep->repo, ref);
  json_object *d = pick_platform(m->j, popt.os, popt.arch, popt.variant, where);
  cleanup_free char *digest = d ? xstrdup(str_of(d, "digest")) : NULL;
  manifest_free(m);
  if (!digest || get_parsed(c, digest, digest, m) < 0)
    return -1;
  if (mt_is_index(m->mt))
    return failf("manifest %s: an index inside an index", m->digest);
  return 0;
}

/* A FIFO for each layer to fetch, then the runtime may start reading them in order. Each FIFO
 * made is served, even if the layer reaches the store meanwhile: the import, which decides what
 * it reads once it starts, may be waiting on it (when it reads none, it stops this client once
 * it is done). */
static int stream_layers(struct conn *c, json_object *layers)
{
  size_t n = json_object_array_length(layers);
  int r = 0;
  bool *fifo = xcalloc(n + 1, sizeof(bool));
  for (size_t i = 0; r == 0 && i < n; i++) {
    const char *d = str_of(json_object_array_get_idx(layers, i), "digest");
    cleanup_free char *path = xasprintf("%s/blobs/sha256/%s", popt.dest, d + 7);
    fifo[i] = !have_layer(d);
    if (!fifo[i])
      remove_done_partial(d);
    else if (mkfifo(path, 0600) < 0 && errno != EEXIST)
      r = failf("mkfifo %s: %s", path, strerror(errno));
  }
  if (r == 0 && popt.ready_fd >= 0) {
    popt.streaming = true;
    if (write(popt.ready_fd, "R", 1) != 1 || close(popt.ready_fd) < 0)
      r = failf("the runtime went away (ready fd: %s)", strerror(errno));
    popt.ready_fd = -1;
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
    cleanup_free char *label = xasprintf("layer %zu/%zu %.19s", i + 1, n, d);
    r = get_blob(c, d, size, label, true);
  }
  free(fifo);
  return r;
}

static int fetch_image(struct conn *c, const char *ref, const char *want_digest)
{
  struct manifest m = {0};
  json_object *cfg = NULL, *layers = NULL, *sz;
  int r = fetch_manifest(c, ref, want_digest, &m);
  cleanup_free char *what = r == 0 ? xasprintf("manifest %s", m.digest) : NULL;
  if (r == 0)
    r = check_image_manifest(m.j, what, &cfg, &layers);
  if (r == 0) {
    cleanup_free char *path = xasprintf("%s/blobs/sha256/%s", popt.dest, m.digest + 7);
    r = write_file(path, m.doc, m.len);
  }
  if (r == 0) {
    uint64_t size =
        json_object_object_get_ex(cfg, "size", &sz) ? (uint64_t)json_object_get_int64(sz) : 0;
    r = get_blob(c, str_of(cfg, "digest"), size, NULL, false);
  }
  if (r == 0)
    r = layout_write(popt.dest, m.mt, m.digest, m.len);
  if (r == 0)
    r = stream_layers(c, layers);
  manifest_free(&m);
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
  if (http_get(c, url, NULL, &b, &resp, false) < 0)
    c->scheme = "http";
  body_free(&b);
  response_free(&resp);
  free(url);
  return 0;
}

static int pull(void)
{
  struct resolved res;
  if (resolve_ref(popt.ref, popt.short_names, popt.insecure, &res) < 0) {
    resolved_free(&res);
    return -1;
  }
  char *sub = xasprintf("%s/blobs/sha256", popt.dest), *blobs = xasprintf("%s/blobs", popt.dest);
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
  char first[4096] = "";
  /* Mirrors (and search registries) in order; the first error is the one reported when all fail
   * unless a later one got further than "not there". */
  /* Once the import reads the layers, another endpoint cannot start them again. */
  for (size_t i = 0; i < res.n && r < 0 && !popt.streaming; i++) {
    struct conn c = {.ep = &res.eps[i]};
    c.cred = auth_lookup(popt.authfile, c.ep->host, c.ep->repo, &c.cred_from);
    if (connect_ep(&c) == 0)
      r = fetch_image(&c, ref, res.digest);
    /* Which name a short name was found under (its search registry), for the runtime to
     * record the image by: a hint, whose loss (a full disk) costs the record, not the pull. */
    char *named = r == 0 && popt.short_names && c.ep->name
                      ? xasprintf("%s/rootlessrt-name", popt.dest)
                      : NULL;
    if (named)
      (void)write_file(named, c.ep->name, strlen(c.ep->name)); /* its error is never reported */
    free(named);
    if (r < 0 && !first[0])
      snprintf(first, sizeof(first), "%s", pull_error());
    free(c.cred);
    free(c.cred_from);
    free(c.token);
  }
  if (r < 0 && res.n > 1)
    failf("%s", first);
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
  snprintf(popt.os, sizeof(popt.os), "linux");
  snprintf(popt.arch, sizeof(popt.arch), "%s", arch);
  snprintf(popt.variant, sizeof(popt.variant), "%s", variant);
}

static int parse_platform(const char *p)
{
  char os[80] = "", arch[80] = "", var[80] = "";
  int n = sscanf(p, "%79[^/]/%79[^/]/%79s", os, arch, var);
  if (n < 2 || !*os || !*arch)
    return failf("--platform %s: not OS/ARCH[/VARIANT] (e.g. linux/arm64)", p);
  snprintf(popt.os, sizeof(popt.os), "%s", os);
  snprintf(popt.arch, sizeof(popt.arch), "%s", arch);
  snprintf(popt.variant, sizeof(popt.variant), "%s", var);
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
      popt.authfile = argv[++i];
    } else if (strcmp(a, "--have") == 0 && next) {
      popt.have = argv[++i];
    } else if (strcmp(a, "--partials") == 0 && next) {
      popt.partials = argv[++i];
    } else if (strcmp(a, "--error-fd") == 0 && next) {
      popt.error_fd = atoi(argv[++i]);
    } else if (strcmp(a, "--ready-fd") == 0 && next) {
      popt.ready_fd = atoi(argv[++i]);
    } else if (strcmp(a, "--short-names") == 0) {
      popt.short_names = true;
    } else if (strcmp(a, "--tls-verify=false") == 0) {
      popt.insecure = true;
    } else if (strcmp(a, "--tls-verify=true") == 0 || strcmp(a, "--tls-verify") == 0) {
      popt.insecure = false;
    } else {
      return failf("rootlessrt-pull: unknown option %s", a);
    }
  }
  if (argc - i != 2)
    return failf("usage: rootlessrt-pull [OPTIONS] --error-fd N DEST REF");
  popt.dest = argv[i];
  popt.ref = argv[i + 1];
  return 0;
}

int main(int argc, char **argv)
{
  signal(SIGPIPE, SIG_IGN); /* a FIFO whose reader is gone: EPIPE */
  default_platform();
  popt.tty = isatty(2);
  const char *rate = getenv("ROOTLESSRT_PULL_MAX_RATE");
  if (rate && *rate)
    popt.max_rate = strtoll(rate, NULL, 10);
  const char *delay = getenv("ROOTLESSRT_PULL_FIFO_DELAY_MS");
  if (delay && *delay)
    popt.fifo_delay_ms = strtol(delay, NULL, 10);
  int r = parse_args(argc, argv);
  if (r == 0)
    r = http_init();
  if (r == 0)
    r = pull();
  if (r < 0) {
    pull_report();
    return 1;
  }
  return 0;
}
