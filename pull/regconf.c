/* regconf.c: references and registries.conf (containers-registries.conf(5)): short names
 * through unqualified-search-registries, [[registry]] prefix/location/insecure/blocked and its
 * [[registry.mirror]] entries, as containers/image reads them (a subset of TOML). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pull.h"

struct mirror {
  char *location;
  bool insecure;
};

struct registry {
  char *prefix, *location;
  bool insecure, blocked;
  struct mirror *mirrors;
  size_t n_mirrors;
};

struct conf {
  char *path;
  char **search;
  size_t n_search;
  struct registry *regs;
  size_t n_regs;
};

static char *conf_path(void)
{
  const char *env = getenv("CONTAINERS_REGISTRIES_CONF");
  if (env && *env)
    return xstrdup(env);
  const char *home = getenv("HOME");
  if (home && *home) {
    char *p = xasprintf("%s/.config/containers/registries.conf", home);
    if (access(p, R_OK) == 0)
      return p;
    free(p);
  }
  return xstrdup("/etc/containers/registries.conf");
}

/* A quoted string at *p (basic "..." or literal '...'), malloc'd; *p moves past it. */
static char *toml_string(const char **p)
{
  char q = **p;
  if (q != '"' && q != '\'')
    return NULL;
  const char *s = ++*p;
  while (**p && **p != q) {
    if (q == '"' && **p == '\\' && (*p)[1])
      (*p)++;
    (*p)++;
  }
  char *v = strndup(s, (size_t)(*p - s));
  if (**p)
    (*p)++;
  return v;
}

static void strip_comment(char *line)
{
  char q = 0;
  for (char *c = line; *c; c++) {
    if (q) {
      if (*c == q)
        q = 0;
    } else if (*c == '"' || *c == '\'') {
      q = *c;
    } else if (*c == '#') {
      *c = '\0';
      return;
    }
  }
}

static void set_key(struct conf *c, int section, const char *key, const char *val)
{
  const char *p = val;
  bool truth = strncmp(val, "true", 4) == 0;
  if (section == 0 && strcmp(key, "unqualified-search-registries") == 0 && *p == '[') {
    p++;
    for (;;) {
      while (*p && (isspace((unsigned char)*p) || *p == ','))
        p++;
      char *s = toml_string(&p);
      if (!s)
        break;
      c->search = realloc(c->search, (c->n_search + 1) * sizeof(char *));
      c->search[c->n_search++] = s;
    }
    return;
  }
  if (section == 0 || c->n_regs == 0)
    return;
  struct registry *r = &c->regs[c->n_regs - 1];
  if (section == 2) {
    if (r->n_mirrors == 0)
      return;
    struct mirror *m = &r->mirrors[r->n_mirrors - 1];
    if (strcmp(key, "location") == 0)
      free(m->location), m->location = toml_string(&p);
    else if (strcmp(key, "insecure") == 0)
      m->insecure = truth;
    return;
  }
  if (strcmp(key, "location") == 0)
    free(r->location), r->location = toml_string(&p);
  else if (strcmp(key, "prefix") == 0)
    free(r->prefix), r->prefix = toml_string(&p);
  else if (strcmp(key, "insecure") == 0)
    r->insecure = truth;
  else if (strcmp(key, "blocked") == 0)
    r->blocked = truth;
}

/* A missing file is an empty configuration, as for containers/image. */
static void conf_read(struct conf *c)
{
  c->path = conf_path();
  FILE *f = fopen(c->path, "re");
  if (!f)
    return;
  char line[16384], acc[16384];
  int section = 0; /* 0 top level, 1 [[registry]], 2 [[registry.mirror]], 3 anything else */
  acc[0] = '\0';
  while (fgets(line, sizeof(line), f)) {
    strip_comment(line);
    /* An array may go on over several lines: gather until its ']'. */
    if (acc[0] || (strchr(line, '=') && strchr(line, '[') && !strchr(line, ']') &&
                   strchr(line, '[') > strchr(line, '='))) {
      if (strlen(acc) + strlen(line) + 1 < sizeof(acc))
        strcat(acc, line);
      if (!strchr(line, ']'))
        continue;
      snprintf(line, sizeof(line), "%s", acc);
      acc[0] = '\0';
      for (char *n = line; *n; n++)
        if (*n == '\n')
          *n = ' ';
    }
    char *s = line;
    while (isspace((unsigned char)*s))
      s++;
    if (!*s)
      continue;
    if (strncmp(s, "[[registry.mirror]]", 19) == 0) {
      section = 2;
      if (c->n_regs) {
        struct registry *r = &c->regs[c->n_regs - 1];
        r->mirrors = realloc(r->mirrors, (r->n_mirrors + 1) * sizeof(*r->mirrors));
        r->mirrors[r->n_mirrors++] = (struct mirror){0};
      }
      continue;
    }
    if (strncmp(s, "[[registry]]", 12) == 0) {
      section = 1;
      c->regs = realloc(c->regs, (c->n_regs + 1) * sizeof(*c->regs));
      c->regs[c->n_regs++] = (struct registry){0};
      continue;
    }
    if (*s == '[') {
      section = 3;
      continue;
    }
    char *eq = strchr(s, '=');
    if (!eq || section == 3)
      continue;
    char *k = s, *kend = eq;
    while (kend > k && isspace((unsigned char)kend[-1]))
      kend--;
    *kend = '\0';
    if (*k == '"' || *k == '\'') { /* a quoted key */
      k++;
      size_t l = strlen(k);
      if (l)
        k[l - 1] = '\0';
    }
    char *v = eq + 1;
    while (isspace((unsigned char)*v))
      v++;
    set_key(c, section, k, v);
  }
  fclose(f);
}

/* "host[:port]/..." has a registry when its first component has a '.' or ':' or is
 * "localhost" (the rule of docker/distribution's reference package). */
static bool has_registry(const char *name)
{
  const char *slash = strchr(name, '/');
  if (!slash)
    return false;
  size_t n = (size_t)(slash - name);
  return memchr(name, '.', n) || memchr(name, ':', n) ||
         (n == 9 && strncmp(name, "localhost", 9) == 0);
}

/* The registry entry whose prefix (or location) is the longest match of name: "example.com/ns"
 * matches "example.com/ns/img" but not "example.com/nsx". */
static struct registry *match(struct conf *c, const char *name)
{
  struct registry *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; i < c->n_regs; i++) {
    const char *p = c->regs[i].prefix ? c->regs[i].prefix : c->regs[i].location;
    size_t l = p ? strlen(p) : 0;
    if (l && strncmp(name, p, l) == 0 && (name[l] == '\0' || name[l] == '/') && l > best_len)
      best = &c->regs[i], best_len = l;
  }
  return best;
}

static void add_ep(struct resolved *out, const char *full, bool insecure)
{
  const char *slash = strchr(full, '/');
  out->eps = realloc(out->eps, (out->n + 1) * sizeof(*out->eps));
  out->eps[out->n++] = (struct endpoint){.host = strndup(full, (size_t)(slash - full)),
                                         .repo = xstrdup(slash + 1),
                                         .insecure = insecure};
}

/* Every place name (HOST/PATH) can come from: its registry entry's mirrors, then its location
 * (the prefix replaced by it). */
static int endpoints_for_1(struct conf *c, const char *name, bool insecure_flag,
                           struct resolved *out);

/* ... each endpoint knowing the name it serves (the runtime records the image by it). */
static int endpoints_for(struct conf *c, const char *name, bool insecure_flag, struct resolved *out)
{
  size_t first = out->n;
  int r = endpoints_for_1(c, name, insecure_flag, out);
  for (size_t i = first; i < out->n; i++)
    out->eps[i].name = xstrdup(name);
  return r;
}

static int endpoints_for_1(struct conf *c, const char *name, bool insecure_flag,
                           struct resolved *out)
{
  struct registry *r = match(c, name);
  if (!r) {
    add_ep(out, name, insecure_flag);
    return 0;
  }
  if (r->blocked)
    return failf("%s: blocked by %s", name, c->path);
  const char *prefix = r->prefix ? r->prefix : r->location;
  const char *rest = name + strlen(prefix);
  for (size_t i = 0; i < r->n_mirrors; i++) {
    if (!r->mirrors[i].location)
      continue;
    char *full = xasprintf("%s%s", r->mirrors[i].location, rest);
    if (strchr(full, '/'))
      add_ep(out, full, insecure_flag || r->mirrors[i].insecure);
    free(full);
  }
  char *full = xasprintf("%s%s", r->location ? r->location : prefix, rest);
  if (strchr(full, '/'))
    add_ep(out, full, insecure_flag || r->insecure);
  free(full);
  return out->n ? 0 : failf("%s: %s gives no location for it", name, c->path);
}

/* NAME[:TAG][@DIGEST] -> name, tag, digest (a ':' after the last '/' starts the tag). */
static int split(const char *ref, char **name, struct resolved *out)
{
  char *s = xstrdup(ref);
  char *at = strchr(s, '@');
  if (at) {
    *at = '\0';
    if (strncmp(at + 1, "sha256:", 7) != 0 || strlen(at + 8) != 64 ||
        strspn(at + 8, "0123456789abcdef") != 64) {
      free(s);
      return failf("%s: a digest is sha256: and 64 lowercase hex digits", ref);
    }
    out->digest = xstrdup(at + 1);
  }
  char *slash = strrchr(s, '/');
  char *colon = strchr(slash ? slash : s, ':');
  if (colon) {
    *colon = '\0';
    out->tag = xstrdup(colon + 1);
  }
  if (!out->tag && !out->digest)
    out->tag = xstrdup("latest");
  if (!*s || (out->tag && !*out->tag)) {
    free(s);
    return failf("%s: not an image reference (HOST[:PORT]/NAME[:TAG|@sha256:DIGEST])", ref);
  }
  for (char *c = s; *c; c++)
    if (isupper((unsigned char)*c)) {
      free(s);
      return failf("%s: a repository name is lowercase", ref);
    }
  *name = s;
  return 0;
}

static void conf_free(struct conf *c)
{
  for (size_t i = 0; i < c->n_search; i++)
    free(c->search[i]);
  free(c->search);
  for (size_t i = 0; i < c->n_regs; i++) {
    for (size_t k = 0; k < c->regs[i].n_mirrors; k++)
      free(c->regs[i].mirrors[k].location);
    free(c->regs[i].mirrors);
    free(c->regs[i].prefix);
    free(c->regs[i].location);
  }
  free(c->regs);
  *c = (struct conf){0};
}

void resolved_free(struct resolved *r)
{
  for (size_t i = 0; i < r->n; i++) {
    free(r->eps[i].host);
    free(r->eps[i].repo);
    free(r->eps[i].name);
  }
  free(r->eps);
  free(r->tag);
  free(r->digest);
  free(r->conf);
  *r = (struct resolved){0};
}

int resolve_ref(const char *ref, bool short_ok, bool insecure_flag, struct resolved *out)
{
  *out = (struct resolved){0};
  char *name = NULL;
  if (split(ref, &name, out) < 0)
    return -1;
  struct conf c = {0};
  conf_read(&c);
  out->conf = c.path;
  int r = 0;
  if (has_registry(name)) {
    r = endpoints_for(&c, name, insecure_flag, out);
  } else if (!short_ok) {
    /* docker://NAME: Docker Hub, as skopeo and containers/image read it. */
    char *full = strchr(name, '/') ? xasprintf("docker.io/%s", name)
                                   : xasprintf("docker.io/library/%s", name);
    r = endpoints_for(&c, full, insecure_flag, out);
    free(full);
  } else if (c.n_search == 0) {
    r = failf("a short name needs a registry: %s lists no unqualified-search-registries "
              "(write docker://HOST/%s)",
              c.path, name);
  } else {
    for (size_t i = 0; r == 0 && i < c.n_search; i++) {
      char *full = xasprintf("%s/%s", c.search[i], name);
      r = endpoints_for(&c, full, insecure_flag, out);
      free(full);
    }
  }
  free(name);
  conf_free(&c);
  return r;
}
