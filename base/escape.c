/* escape.c: the one escaping of text from outside before it is printed (escape.h). Only libc and
 * alloc.c: the registry client (rootlessrt-pull) links this object as it is. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/escape.h"
#include "rootlessrt/util.h"

/* The length of the valid UTF-8 sequence at s (n bytes left), 0 when it is not one: overlong
 * forms, surrogates and code points past U+10FFFF are not. *cp: the code point. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
  if (s[0] < 0x80) {
    *cp = s[0];
    return 1;
  }
  size_t l = s[0] >= 0xc2 && s[0] <= 0xdf   ? 2
             : s[0] >= 0xe0 && s[0] <= 0xef ? 3
             : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                            : 0;
  if (l == 0 || l > n)
    return 0;
  uint32_t c = s[0] & (0xff >> (l + 1));
  for (size_t i = 1; i < l; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    c = (c << 6) | (s[i] & 0x3f);
  }
  if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
      (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
    return 0;
  *cp = c;
  return l;
}

/* A tab is kept: it moves to the next tab stop of the same line and nothing else (a hook's
 * "SigBlk:\t..." stays readable); every other control is escaped. ascii: the stricter form
 * (rrt_escape_ascii), printable ASCII but the backslash only. */
static bool shown_as_is(uint32_t c, bool ascii)
{
  if (ascii)
    return c >= 0x20 && c < 0x7f && c != '\\';
  if ((c < 0x20 && c != '\t') || c == 0x7f || (c >= 0x80 && c <= 0x9f))
    return false;
  if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069))
    return false;
  return true;
}

/* The escaped form of s[0..n) into out (room for 4 * n + 1), or its length when out is NULL.
 * stop: the length of out at most (without the NUL), cut at a whole unit. */
static size_t escape_into(const unsigned char *s, size_t n, char *out, size_t stop, bool ascii)
{
  static const char hex[] = "0123456789abcdef";
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp = 0;
    size_t l = utf8_seq(s + i, n - i, &cp);
    if (l > 0 && shown_as_is(cp, ascii)) {
      if (k + l > stop)
        break;
      if (out)
        memcpy(out + k, s + i, l);
      k += l;
      i += l;
      continue;
    }
    /* Every byte of the sequence (or the one invalid byte) as \xHH. */
    size_t m = l > 0 ? l : 1;
    if (k + 4 * m > stop)
      break;
    for (size_t j = 0; j < m; j++, k += 4)
      if (out) {
        out[k] = '\\';
        out[k + 1] = 'x';
        out[k + 2] = hex[s[i + j] >> 4];
        out[k + 3] = hex[s[i + j] & 0xf];
      }
    i += m;
  }
  if (out)
    out[k] = '\0';
  return k;
}

static char *escape_dup(const void *s, size_t n, bool ascii)
{
  if (!s)
    return xstrdup("(null)");
  if (n > (SIZE_MAX - 1) / 4)
    abort();
  char *out = xmalloc(4 * n + 1);
  escape_into(s, n, out, 4 * n, ascii);
  return out;
}

char *rrt_escape_mem(const void *s, size_t n)
{
  return escape_dup(s, n, false);
}

char *rrt_escape(const char *s)
{
  return escape_dup(s, s ? strlen(s) : 0, false);
}

char *rrt_escape_ascii(const char *s)
{
  return escape_dup(s, s ? strlen(s) : 0, true);
}

const char *rrt_escape_buf(const char *s, char *buf, size_t size)
{
  if (!s)
    s = "(null)";
  if (size == 0)
    return buf;
  escape_into((const unsigned char *)s, strlen(s), buf, size - 1, false);
  return buf;
}

int rrt_escape_needed(const char *s)
{
  size_t n = s ? strlen(s) : 0;
  return s && escape_into((const unsigned char *)s, n, NULL, SIZE_MAX, false) != n;
}
