/* token.c: the registry's authentication: its challenge (WWW-Authenticate), a bearer token from
 * the token server it names (checked before it can reach a header), or basic auth with the
 * credentials from auth.json. */
#include <ctype.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "token.h"

void challenge_free(struct challenge *c)
{
  free(c->scheme);
  free(c->realm);
  free(c->service);
  free(c->scope);
  *c = (struct challenge){0};
}

/* RFC 7230's tchar. */
static bool tchar(char c)
{
  return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *skip_ws(const char *p)
{
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

/* A token or a quoted-string at p, malloc'd into *out; the end of it, or NULL. */
static const char *param_value(const char *p, char **out)
{
  if (*p != '"') {
    const char *s = p;
    while (tchar(*p) || *p == '/' || *p == '=') /* token68-like values: base64, URLs */
      p++;
    if (p == s)
      return NULL;
    *out = xstrndup(s, (size_t)(p - s));
    return p;
  }
  p++;
  size_t n = strlen(p);
  char *v = xmalloc(n + 1);
  size_t k = 0;
  for (; *p && *p != '"'; p++) {
    if (*p == '\\' && p[1])
      p++;
    v[k++] = *p;
  }
  v[k] = '\0';
  if (*p != '"') {
    free(v);
    return NULL; /* unterminated */
  }
  *out = v;
  return p + 1;
}

int challenge_parse(const char *value, struct challenge *out)
{
  *out = (struct challenge){0};
  const char *p = skip_ws(value ? value : ""), *s = p;
  while (tchar(*p))
    p++;
  if (p == s)
    return -1;
  out->scheme = xstrndup(s, (size_t)(p - s));
  for (;;) {
    p = skip_ws(p);
    while (*p == ',' || *p == ' ' || *p == '\t')
      p++;
    if (!*p)
      return 0;
    s = p;
    while (tchar(*p))
      p++;
    if (p == s)
      return 0; /* not a parameter: what follows is not read */
    size_t kl = (size_t)(p - s);
    p = skip_ws(p);
    if (*p != '=')
      return 0; /* a token alone: the next challenge's scheme */
    p = skip_ws(p + 1);
    char *v = NULL;
    if (!(p = param_value(p, &v)))
      return 0;
    char **slot = kl == 5 && strncasecmp(s, "realm", 5) == 0     ? &out->realm
                  : kl == 7 && strncasecmp(s, "service", 7) == 0 ? &out->service
                  : kl == 5 && strncasecmp(s, "scope", 5) == 0   ? &out->scope
                                                                 : NULL;
    if (slot && !*slot)
      *slot = v;
    else
      free(v);
  }
}

int token_of_answer(const char *body, size_t len, const char *registry, const char *server,
                    char **token)
{
  *token = NULL;
  json_tokener *tok = json_tokener_new();
  json_object *doc = json_tokener_parse_ex(tok, body ? body : "", (int)(len < SMALL_MAX ? len : 0));
  json_tokener_free(tok);
  const char *t = NULL;
  json_object *v;
  if (doc && json_object_is_type(doc, json_type_object)) {
    if (json_object_object_get_ex(doc, "token", &v) && json_object_is_type(v, json_type_string) &&
        json_object_get_string_len(v) > 0)
      t = json_object_get_string(v);
    else if (json_object_object_get_ex(doc, "access_token", &v) &&
             json_object_is_type(v, json_type_string))
      t = json_object_get_string(v);
  }
  int r = 0;
  char esc[512];
  if (!t || !*t)
    r = failf("registry %s: the token server %s gave no token", registry,
              rrt_escape_buf(server, esc, sizeof(esc)));
  else if (!http_b64token(t) || strlen(t) != (size_t)json_object_get_string_len(v))
    r = failf("registry %s: the token server %s gave a token that is not an RFC 6750 b64token "
              "(letters, digits, -._~+/ then =): refused",
              registry, rrt_escape_buf(server, esc, sizeof(esc)));
  else
    *token = xstrdup(t);
  json_object_put(doc);
  return r;
}

/* An http(s) URL of printable ASCII without spaces: what the token request is built from. */
static bool realm_ok(const char *realm)
{
  if (strncmp(realm, "https://", 8) != 0 && strncmp(realm, "http://", 7) != 0)
    return false;
  for (const unsigned char *p = (const unsigned char *)realm; *p; p++)
    if (*p <= 0x20 || *p >= 0x7f)
      return false;
  return true;
}

/* The distribution spec's token flow: GET realm?service=..&scope=repository:REPO:pull, with
 * the credentials when there are some; the answer's token (or access_token). */
static int fetch_token(struct conn *c, const struct challenge *ch)
{
  char esc[512];
  if (!ch->realm)
    return failf("registry %s: a Bearer challenge without a realm", c->ep->host);
  if (!realm_ok(ch->realm))
    return failf("registry %s: its token server \"%s\" is not an http(s) URL: refused", c->ep->host,
                 rrt_escape_buf(ch->realm, esc, sizeof(esc)));
  const char *realm = ch->realm;
  CURL *e = curl_easy_init();
  if (!e)
    return failf("curl_easy_init failed");
  char *s = ch->service ? curl_easy_escape(e, ch->service, 0) : NULL;
  cleanup_free char *scope_raw = xasprintf("repository:%s:pull", c->ep->repo);
  char *scope = curl_easy_escape(e, scope_raw, 0);
  cleanup_free char *url = xasprintf("%s%sscope=%s%s%s", realm, strchr(realm, '?') ? "&" : "?",
                                     scope ? scope : "", s ? "&service=" : "", s ? s : "");
  curl_free(s);
  curl_free(scope);
  curl_easy_cleanup(e);
  struct conn tc = *c;
  tc.basic = c->cred != NULL;
  tc.token = NULL;
  struct body b = {.fd = -1, .limit = SMALL_MAX};
  struct response resp = {0};
  int r = http_get(&tc, url, NULL, &b, &resp, true);
  char says[512];
  if (r == 0 && resp.status == 401)
    r = c->cred ? failf("registry %s: the token server %s refused the credentials from %s",
                        c->ep->host, realm, c->cred_from)
                : failf("registry %s: authentication required: no credentials for it in %s",
                        c->ep->host, c->cred_from ? c->cred_from : "any auth.json");
  else if (r == 0 && (resp.status < 200 || resp.status > 299))
    r = failf("registry %s: the token server %s answered HTTP %ld%s", c->ep->host, realm,
              resp.status, registry_says(&b, says, sizeof(says)));
  if (r == 0)
    r = token_of_answer(b.buf, b.len, c->ep->host, realm, &c->token);
  body_free(&b);
  response_free(&resp);
  return r;
}

int reg_get(struct conn *c, const char *url, const char *accept, struct body *b,
            struct response *resp)
{
  if (http_get(c, url, accept, b, resp, true) < 0)
    return -1;
  if (resp->status != 401 || c->token || (c->basic && c->cred))
    return 0;
  struct challenge ch;
  bool bearer = challenge_parse(resp->challenge, &ch) == 0 && strcasecmp(ch.scheme, "Bearer") == 0;
  int r = bearer ? fetch_token(c, &ch) : 0;
  challenge_free(&ch);
  if (r < 0)
    return -1;
  if (!bearer) {
    if (!c->cred)
      return failf("registry %s: authentication required: no credentials for it in %s "
                   "(or give --authfile)",
                   c->ep->host, c->cred_from ? c->cred_from : "any auth.json");
    c->basic = true;
  }
  response_free(resp);
  body_free(b);
  /* Nothing of a 401's body reached b->fd or the kept partial (on_body): no truncation. */
  return http_get(c, url, accept, b, resp, true);
}
