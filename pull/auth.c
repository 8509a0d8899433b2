/* auth.c: registry credentials from the file podman, skopeo and docker share
 * (containers-auth.json(5)): {"auths": {"HOST[/PATH]": {"auth": base64("user:password")}}}. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pull.h"

char *auth_b64_decode(const char *in, size_t n, size_t *outlen)
{
  static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  /* Padding only at the end, at most two, and only where a group is short. */
  size_t data = n;
  while (data > 0 && n - data < 2 && in[data - 1] == '=')
    data--;
  if ((n != data && n % 4 != 0) || data % 4 == 1)
    return NULL;
  char *out = xmalloc(data / 4 * 3 + 3);
  size_t o = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < data; i++) {
    const char *p = in[i] ? strchr(tbl, in[i]) : NULL;
    if (!p) {
      free(out);
      return NULL;
    }
    acc = (acc << 6) | (uint32_t)(p - tbl);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (char)((acc >> bits) & 0xff);
    }
  }
  out[o] = '\0';
  *outlen = o;
  return out;
}

/* The files containers/image reads, in its order; the first that exists is used. */
static char *default_file(void)
{
  const char *env = getenv("REGISTRY_AUTH_FILE");
  if (env && *env)
    return xstrdup(env);
  const char *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
  char *cands[3] = {
      xdg && *xdg ? xasprintf("%s/containers/auth.json", xdg) : NULL,
      home && *home ? xasprintf("%s/.config/containers/auth.json", home) : NULL,
      home && *home ? xasprintf("%s/.docker/config.json", home) : NULL,
  };
  char *found = NULL;
  for (size_t i = 0; i < 3; i++) {
    if (!found && cands[i] && access(cands[i], R_OK) == 0)
      found = cands[i];
    else
      free(cands[i]);
  }
  return found;
}

/* A key names the host, maybe with a scheme ("https://host/v1/", docker's old form), or a
 * host and a repository prefix: the longest matching one wins. */
size_t auth_key_matches(const char *key, const char *host, const char *repo)
{
  if (strncmp(key, "https://", 8) == 0)
    key += 8;
  else if (strncmp(key, "http://", 7) == 0)
    key += 7;
  size_t hl = strlen(host);
  if (strncmp(key, host, hl) != 0)
    return 0;
  const char *path = key + hl;
  if (*path == '\0' || strcmp(path, "/") == 0 || strcmp(path, "/v1/") == 0 ||
      strcmp(path, "/v2/") == 0)
    return hl;
  if (*path != '/')
    return 0;
  size_t pl = strlen(path + 1);
  if (strncmp(repo, path + 1, pl) == 0 && (repo[pl] == '\0' || repo[pl] == '/'))
    return hl + 1 + pl;
  return 0;
}

/* The best key's credentials as user:password: decoded, one ':' at least, no control bytes
 * (they would go into an Authorization header: libcurl encodes them, but none of them is ever a
 * real user's or password's). */
static char *best_cred(json_object *doc, const char *host, const char *repo)
{
  json_object *auths;
  if (!doc || !json_object_object_get_ex(doc, "auths", &auths) ||
      !json_object_is_type(auths, json_type_object))
    return NULL;
  /* docker.io's credentials are under its old name too. */
  const char *alias = strcmp(host, "docker.io") == 0 ? "index.docker.io" : host;
  const char *best = NULL;
  size_t best_len = 0;
  json_object_object_foreach(auths, k, v)
  {
    size_t l = auth_key_matches(k, host, repo);
    if (!l)
      l = auth_key_matches(k, alias, repo);
    json_object *a;
    if (l > best_len && json_object_object_get_ex(v, "auth", &a) &&
        json_object_is_type(a, json_type_string))
      best = json_object_get_string(a), best_len = l;
  }
  size_t n = 0;
  char *cred = best ? auth_b64_decode(best, strlen(best), &n) : NULL;
  bool ok = cred && strlen(cred) == n && strchr(cred, ':');
  for (size_t i = 0; ok && i < n; i++)
    ok = (unsigned char)cred[i] >= 0x20 && cred[i] != 0x7f;
  if (!ok) {
    free(cred);
    return NULL;
  }
  return cred;
}

char *auth_lookup_in(const char *text, const char *host, const char *repo)
{
  json_object *doc = json_tokener_parse(text ? text : "");
  char *cred = best_cred(doc, host, repo);
  json_object_put(doc);
  return cred;
}

char *auth_lookup(const char *authfile, const char *host, const char *repo, char **from)
{
  char *file = authfile ? xstrdup(authfile) : default_file();
  *from = file;
  if (!file)
    return NULL;
  json_object *doc = json_object_from_file(file);
  char *cred = best_cred(doc, host, repo);
  json_object_put(doc);
  return cred;
}
