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

struct regconf {
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
  char *v = xstrndup(s, (size_t)(*p - s));
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

static void set_key(struct regconf *c, int section, const char *key, const char *val)
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
      c->search = xrealloc(c->search, (c->n_search + 1) * sizeof(char *));
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

static void conf_line(struct regconf *c, char *line, int *section)
{
  char *s = line;
  while (isspace((unsigned char)*s))
    s++;
  if (!*s)
    return;
  if (strncmp(s, "[[registry.mirror]]", 19) == 0) {
    *section = 2;
    if (c->n_regs) {
      struct registry *r = &c->regs[c->n_regs - 1];
      r->mirrors = xrealloc(r->mirrors, (r->n_mirrors + 1) * sizeof(*r->mirrors));
      r->mirrors[r->n_mirrors++] = (struct mirror){0};
    }
    return;
  }
  if (strncmp(s, "[[registry]]", 12) == 0) {
    *section = 1;
    c->regs = xrealloc(c->regs, (c->n_regs + 1) * sizeof(*c->regs));
    c->regs[c->n_regs++] = (struct registry){0};
    return;
  }
  if (*s == '[') {
    *section = 3;
    return;
  }
  char *eq = strchr(s, '=');
  if (!eq || *section == 3)
    return;
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
  set_key(c, *section, k, v);
}

struct regconf *regconf_parse(const char *text, const char *path)
{
  struct regconf *c = xzalloc(sizeof(*c));
  c->path = xstrdup(path ? path : "registries.conf");
  int section = 0; /* 0 top level, 1 [[registry]], 2 [[registry.mirror]], 3 anything else */
  cleanup_free char *acc = NULL; /* an array that goes on over several lines, until its ']' */
  for (const char *p = text ? text : ""; *p;) {
    size_t n = strcspn(p, "\n");
    cleanup_free char *line = xstrndup(p, n);
    p += n + (p[n] == '\n');
    strip_comment(line);
    if (acc || (strchr(line, '=') && strchr(line, '[') && !strchr(line, ']') &&
                strchr(line, '[') > strchr(line, '='))) {
      char *joined = xasprintf("%s%s ", acc ? acc : "", line);
      free(acc);
      acc = joined;
      if (!strchr(line, ']') && *p)
        continue;
      free(line);
      line = acc;
      acc = NULL;
    }
    conf_line(c, line, &section);
  }
  return c;
}

/* A missing file is an empty configuration, as for containers/image. */
static struct regconf *conf_read(void)
{
  cleanup_free char *path = conf_path();
  cleanup_free char *text = NULL;
  FILE *f = fopen(path, "re");
  if (f) {
    size_t len = 0, n;
    char chunk[8192];
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
      text = xrealloc(text, len + n + 1);
      memcpy(text + len, chunk, n);
      len += n;
      text[len] = '\0';
    }
    fclose(f);
  }
  return regconf_parse(text, path);
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
static const struct registry *match(const struct regconf *c, const char *name)
{
  const struct registry *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; c && i < c->n_regs; i++) {
    const char *p = c->regs[i].prefix ? c->regs[i].prefix : c->regs[i].location;
    size_t l = p ? strlen(p) : 0;
    if (l && strncmp(name, p, l) == 0 && (name[l] == '\0' || name[l] == '/') && l > best_len)
      best = &c->regs[i], best_len = l;
  }
  return best;
}

/* The distribution spec's grammar for what goes into a URL: a host (DNS labels, or [IPv6]) and
 * an optional :PORT; a repository of path components [a-z0-9]+ joined by '.', '_', '__' or
 * dashes; a tag [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}. */
static bool valid_host(const char *h, size_t n)
{
  size_t i = 0;
  if (n && h[0] == '[') { /* [IPv6] */
    const char *end = memchr(h, ']', n);
    if (!end || end - h < 3 || strspn(h + 1, "0123456789abcdefABCDEF:.") != (size_t)(end - h - 1))
      return false;
    i = (size_t)(end - h) + 1;
  } else {
    /* DNS labels: [A-Za-z0-9], dashes inside, joined by dots. */
    for (;;) {
      size_t s = i;
      while (i < n && (isalnum((unsigned char)h[i]) || h[i] == '-'))
        i++;
      if (i == s || h[s] == '-' || h[i - 1] == '-')
        return false;
      if (i < n && h[i] == '.') {
        i++;
        continue;
      }
      break;
    }
  }
  if (i == n)
    return true;
  if (h[i] != ':' || n - i < 2 || n - i > 6)
    return false;
  for (i++; i < n; i++)
    if (!isdigit((unsigned char)h[i]))
      return false;
  return true;
}

static bool lower_alnum(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool valid_repo(const char *r)
{
  if (!*r || strlen(r) > 255)
    return false;
  for (const char *p = r;;) {
    if (!lower_alnum(*p))
      return false; /* a component starts with [a-z0-9] */
    while (lower_alnum(*p))
      p++;
    if (*p == '\0')
      return true;
    if (*p == '/') {
      p++;
      continue;
    }
    if (*p == '.' || (*p == '_' && p[1] != '_'))
      p++;
    else if (*p == '_')
      p += 2;
    else if (*p == '-')
      while (*p == '-')
        p++;
    else
      return false;
  }
}

static bool valid_tag(const char *t)
{
  size_t n = strlen(t);
  if (n == 0 || n > 128 || !(isalnum((unsigned char)t[0]) || t[0] == '_'))
    return false;
  for (size_t i = 1; i < n; i++)
    if (!isalnum((unsigned char)t[i]) && !strchr("_.-", t[i]))
      return false;
  return true;
}

/* HOST/REPO as an endpoint, both checked: from = where it came from, for the error. */
static int add_ep(struct resolved *out, const char *full, bool insecure, const char *from)
{
  const char *slash = strchr(full, '/');
  char esc[512];
  if (!slash || !valid_host(full, (size_t)(slash - full)))
    return failf("%s%s%s: not a registry host (HOST[:PORT]/NAME)",
                 rrt_escape_buf(full, esc, sizeof(esc)), from ? ", from " : "", from ? from : "");
  if (!valid_repo(slash + 1))
    return failf(
        "%s%s%s: not a repository name (lowercase letters and digits, separated by /, ., _, "
        "__ or dashes)",
        rrt_escape_buf(full, esc, sizeof(esc)), from ? ", from " : "", from ? from : "");
  out->eps = xrealloc(out->eps, (out->n + 1) * sizeof(*out->eps));
  out->eps[out->n++] = (struct endpoint){.host = xstrndup(full, (size_t)(slash - full)),
                                         .repo = xstrdup(slash + 1),
                                         .insecure = insecure};
  return 0;
}

/* Every place name (HOST/PATH) can come from: its registry entry's mirrors, then its location
 * (the prefix replaced by it). */
static int endpoints_for_1(const struct regconf *c, const char *name, bool insecure_flag,
                           struct resolved *out);

/* ... each endpoint knowing the name it serves (the runtime records the image by it). */
static int endpoints_for(const struct regconf *c, const char *name, bool insecure_flag,
                         struct resolved *out)
{
  size_t first = out->n;
  int r = endpoints_for_1(c, name, insecure_flag, out);
  for (size_t i = first; i < out->n; i++)
    out->eps[i].name = xstrdup(name);
  return r;
}

static int endpoints_for_1(const struct regconf *c, const char *name, bool insecure_flag,
                           struct resolved *out)
{
  const struct registry *r = match(c, name);
  if (!r)
    return add_ep(out, name, insecure_flag, NULL);
  char esc[512];
  if (r->blocked)
    return failf("%s: blocked by %s", rrt_escape_buf(name, esc, sizeof(esc)), c->path);
  const char *prefix = r->prefix ? r->prefix : r->location;
  const char *rest = name + strlen(prefix);
  for (size_t i = 0; i < r->n_mirrors; i++) {
    if (!r->mirrors[i].location)
      continue;
    cleanup_free char *full = xasprintf("%s%s", r->mirrors[i].location, rest);
    if (strchr(full, '/') &&
        add_ep(out, full, insecure_flag || r->mirrors[i].insecure, c->path) < 0)
      return -1;
  }
  cleanup_free char *full = xasprintf("%s%s", r->location ? r->location : prefix, rest);
  if (strchr(full, '/') && add_ep(out, full, insecure_flag || r->insecure, c->path) < 0)
    return -1;
  return out->n ? 0
                : failf("%s: %s gives no location for it", rrt_escape_buf(name, esc, sizeof(esc)),
                        c->path);
}

/* NAME[:TAG][@DIGEST] -> name, tag, digest (a ':' after the last '/' starts the tag). */
static int split(const char *ref, char **name, struct resolved *out)
{
  cleanup_free char *s = xstrdup(ref);
  char esc[512];
  rrt_escape_buf(ref, esc, sizeof(esc));
  char *at = strchr(s, '@');
  if (at) {
    *at = '\0';
    if (!valid_digest(at + 1))
      return failf("%s: a digest is sha256: and 64 lowercase hex digits", esc);
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
  if (!*s || (out->tag && !*out->tag))
    return failf("%s: not an image reference (HOST[:PORT]/NAME[:TAG|@sha256:DIGEST])", esc);
  if (out->tag && !valid_tag(out->tag))
    return failf("%s: not a tag (letters, digits, _ . -, at most 128, not starting with . or -)",
                 esc);
  for (char *c = s; *c; c++)
    if (isupper((unsigned char)*c))
      return failf("%s: a repository name is lowercase", esc);
  *name = steal_ptr(&s);
  return 0;
}

void regconf_free(struct regconf *c)
{
  if (!c)
    return;
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
  free(c->path);
  free(c);
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

int resolve_ref_with(const struct regconf *c, const char *ref, bool short_ok, bool insecure_flag,
                     struct resolved *out)
{
  *out = (struct resolved){0};
  cleanup_free char *name = NULL;
  if (split(ref, &name, out) < 0)
    return -1;
  /* The name as written is checked before registries.conf sees it: HOST/REPO, or a REPO that
   * a search registry or docker.io goes before. */
  const char *slash = strchr(name, '/');
  bool qualified = has_registry(name);
  if ((qualified && !valid_host(name, (size_t)(slash - name))) ||
      !valid_repo(qualified ? slash + 1 : name)) {
    char esc[512];
    return failf("%s: not a repository name (lowercase letters and digits, separated by /, ., _, "
                 "__ or dashes)",
                 rrt_escape_buf(ref, esc, sizeof(esc)));
  }
  out->conf = c ? xstrdup(c->path) : NULL;
  const char *path = c ? c->path : "registries.conf";
  int r = 0;
  if (has_registry(name)) {
    r = endpoints_for(c, name, insecure_flag, out);
  } else if (!short_ok) {
    /* docker://NAME: Docker Hub, as skopeo and containers/image read it. */
    cleanup_free char *full = strchr(name, '/') ? xasprintf("docker.io/%s", name)
                                                : xasprintf("docker.io/library/%s", name);
    r = endpoints_for(c, full, insecure_flag, out);
  } else if (!c || c->n_search == 0) {
    char esc[512];
    r = failf("a short name needs a registry: %s lists no unqualified-search-registries "
              "(write docker://HOST/%s)",
              path, rrt_escape_buf(name, esc, sizeof(esc)));
  } else {
    for (size_t i = 0; r == 0 && i < c->n_search; i++) {
      cleanup_free char *full = xasprintf("%s/%s", c->search[i], name);
      r = endpoints_for(c, full, insecure_flag, out);
    }
  }
  return r;
}

int resolve_ref(const char *ref, bool short_ok, bool insecure_flag, struct resolved *out)
{
  struct regconf *c = conf_read();
  int r = resolve_ref_with(c, ref, short_ok, insecure_flag, out);
  regconf_free(c);
  return r;
}
