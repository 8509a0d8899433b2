/* name.c: registry image names (distribution's reference grammar: [HOST[:PORT]/]PATH[:TAG]
 * [@ALGO:HEX]) told apart from container ids and root directories, and what a run does with
 * one. */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "rootlessrt/util.h"

/* [a-z0-9]+ ([._]|__|-+ [a-z0-9]+)* */
static bool path_component(const char *s, size_t n)
{
  size_t i = 0;
  while (i < n) {
    size_t run = 0;
    while (i < n && (islower((unsigned char)s[i]) || isdigit((unsigned char)s[i])))
      i++, run++;
    if (run == 0)
      return false;
    if (i == n)
      return true;
    size_t sep = i;
    if (s[i] == '.')
      i++;
    else if (s[i] == '_')
      i += (i + 1 < n && s[i + 1] == '_') ? 2 : 1;
    else
      while (i < n && s[i] == '-')
        i++;
    if (i == sep || i == n)
      return false;
  }
  return n > 0;
}

/* HOST[:PORT], HOST of dot-separated [A-Za-z0-9-] labels not starting or ending with '-'. */
static bool domain(const char *s, size_t n)
{
  const char *colon = memchr(s, ':', n);
  size_t host = colon ? (size_t)(colon - s) : n;
  if (colon && (n - host < 2 || strspn(colon + 1, "0123456789") < n - host - 1))
    return false;
  size_t label = 0;
  for (size_t i = 0; i <= host; i++) {
    if (i == host || s[i] == '.') {
      if (label == 0 || s[i - 1] == '-')
        return false;
      label = 0;
    } else if (isalnum((unsigned char)s[i]) || (s[i] == '-' && label > 0)) {
      label++;
    } else {
      return false;
    }
  }
  return true;
}

/* [\w][\w.-]{0,127} */
static bool tag_ok(const char *t)
{
  size_t n = strlen(t);
  if (n == 0 || n > 128 || t[0] == '.' || t[0] == '-')
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)t[i]) && !strchr("_.-", t[i]))
      return false;
  return true;
}

/* ALGO:HEX, ALGO [A-Za-z][A-Za-z0-9]* joined by [-_+.], HEX at least 32 hex digits. */
static bool digest_ok(const char *d)
{
  const char *colon = strchr(d, ':');
  if (!colon || colon == d || !isalpha((unsigned char)d[0]))
    return false;
  for (const char *p = d; p < colon; p++)
    if (!isalnum((unsigned char)*p) &&
        (!strchr("-_+.", *p) || p + 1 == colon || !isalpha((unsigned char)p[1])))
      return false;
  size_t hex = strlen(colon + 1);
  return hex >= 32 && strspn(colon + 1, "0123456789abcdefABCDEF") == hex;
}

bool rrt_image_name_parse(const char *name, bool *qualified)
{
  *qualified = false;
  if (!*name || strlen(name) > 4096)
    return false;
  cleanup_free char *s = xstrdup(name);
  char *at = strchr(s, '@');
  if (at) {
    *at = '\0';
    if (!digest_ok(at + 1))
      return false;
  }
  char *slash = strrchr(s, '/');
  char *colon = strrchr(slash ? slash : s, ':');
  if (colon) {
    *colon = '\0';
    if (!tag_ok(colon + 1))
      return false;
  }
  /* The first of several components is a host when it has a '.' or a ':', is localhost, or has
   * an upper-case letter (no path component may: docker's and containers/image's rule). */
  const char *p = s;
  bool host = false;
  const char *first_end = strchr(p, '/');
  if (first_end) {
    size_t n = (size_t)(first_end - p);
    bool upper = false;
    for (size_t i = 0; i < n; i++)
      upper = upper || isupper((unsigned char)p[i]);
    if (memchr(p, '.', n) || memchr(p, ':', n) || (n == 9 && strncmp(p, "localhost", 9) == 0) ||
        upper) {
      if (!domain(p, n))
        return false;
      p = first_end + 1, host = true;
    }
  }
  for (;;) {
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (!path_component(p, n))
      return false;
    if (!end)
      break;
    p = end + 1;
  }
  *qualified = colon || at || host;
  return true;
}

bool rrt_image_name_like(const char *arg)
{
  bool qualified;
  return rrt_image_name_parse(arg, &qualified) && qualified;
}

/* The first component is a host when it has a '.' or a ':' or is localhost (distribution's rule).
 */
static bool has_host(const char *s)
{
  const char *slash = strchr(s, '/');
  if (!slash)
    return false;
  size_t n = (size_t)(slash - s);
  return memchr(s, '.', n) || memchr(s, ':', n) || (n == 9 && strncmp(s, "localhost", 9) == 0);
}

char *rrt_image_name_normalize(const char *name, bool docker_hub)
{
  bool qualified;
  if (!name || !rrt_image_name_parse(name, &qualified))
    return NULL;
  cleanup_free char *s = xstrdup(name);
  char *at = strchr(s, '@');
  if (at)
    *at++ = '\0';
  char *slash = strrchr(s, '/');
  char *colon = strrchr(slash ? slash : s, ':');
  if (colon)
    *colon++ = '\0';
  const char *prefix = "";
  if (!has_host(s))
    prefix = !docker_hub ? "localhost/" : strchr(s, '/') ? "docker.io/" : "docker.io/library/";
  else if (strncmp(s, "docker.io/", 10) == 0 && !strchr(s + 10, '/')) {
    memmove(s, s + 10, strlen(s + 10) + 1);
    prefix = "docker.io/library/";
  }
  return xasprintf("%s%s%s%s%s%s", prefix, s, colon || !at ? ":" : "",
                   colon ? colon
                   : !at ? "latest"
                         : "",
                   at ? "@" : "", at ? at : "");
}

bool rrt_image_name_has_host(const char *name)
{
  return has_host(name);
}
