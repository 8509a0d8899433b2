/* subid.c: /etc/subuid and /etc/subgid parsing ("owner:start:count" lines). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

static bool is_blank(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Digits only: strtoul would accept leading blanks, a sign and wrap "-1" to
 * ULONG_MAX, and a subordinate range must never be silently reinterpreted. */
static int parse_decimal(const char *s, size_t len, uint64_t max, uint64_t *out)
{
  uint64_t v = 0;
  if (len == 0)
    return -1;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (uint64_t)(s[i] - '0');
    if (v > max)
      return -1;
  }
  *out = v;
  return 0;
}

int rrt_subid_parse_line(const char *line, char **owner, struct rrt_subid_range *range,
                         struct rrt_error *err)
{
  *owner = NULL;
  if (!line)
    return rrt_error_set(err, 0, "empty");
  /* Trim both ends so getline()'s newline and CRLF files are accepted; blanks
   * inside a field are still rejected below. */
  while (is_blank(*line))
    line++;
  size_t len = strlen(line);
  while (len > 0 && is_blank(line[len - 1]))
    len--;
  if (len == 0 || line[0] == '#')
    return rrt_error_set(err, 0, "empty");

  const char *c1 = memchr(line, ':', len);
  if (!c1)
    return rrt_error_set(err, 0, "missing start and count (expected owner:start:count)");
  const char *c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line));
  if (!c2)
    return rrt_error_set(err, 0, "missing count (expected owner:start:count)");
  const char *end = line + len;
  if (memchr(c2 + 1, ':', (size_t)(end - (c2 + 1))))
    return rrt_error_set(err, 0, "too many fields (expected owner:start:count)");

  size_t owner_len = (size_t)(c1 - line);
  if (owner_len == 0)
    return rrt_error_set(err, 0, "empty owner (expected owner:start:count)");
  for (size_t i = 0; i < owner_len; i++)
    if (is_blank(line[i]))
      return rrt_error_set(err, 0, "invalid owner \"%.*s\": contains a blank", (int)owner_len,
                           line);

  /* (uid_t)-1 is never a valid id, so the highest usable id is UINT32_MAX - 1
   * and a range may reach up to, but not include, UINT32_MAX. */
  uint64_t start, count;
  const char *s = c1 + 1, *n = c2 + 1;
  size_t slen = (size_t)(c2 - s), nlen = (size_t)(end - n);
  if (parse_decimal(s, slen, UINT32_MAX - 1, &start) < 0)
    return rrt_error_set(err, 0, "invalid start \"%.*s\": expected a decimal id below %u",
                         (int)slen, s, (unsigned)UINT32_MAX);
  if (parse_decimal(n, nlen, UINT32_MAX, &count) < 0)
    return rrt_error_set(err, 0, "invalid count \"%.*s\": expected a decimal number up to %u",
                         (int)nlen, n, (unsigned)UINT32_MAX);
  if (count == 0)
    return rrt_error_set(err, 0, "invalid count 0: a range must hold at least one id");
  if (start + count > UINT32_MAX)
    return rrt_error_set(err, 0, "range %llu:%llu overflows the 32-bit id space",
                         (unsigned long long)start, (unsigned long long)count);

  *owner = xstrndup(line, owner_len);
  range->start = (unsigned long)start;
  range->count = (unsigned long)count;
  return 0;
}

static bool owner_matches(const char *owner, const char *user, unsigned long id)
{
  uint64_t v;
  if (user && strcmp(owner, user) == 0)
    return true;
  return parse_decimal(owner, strlen(owner), UINT32_MAX, &v) == 0 && v == id;
}

int rrt_subid_lookup(const char *file, const char *user, unsigned long id,
                     struct rrt_subid_range **ranges, size_t *n, struct rrt_error *err)
{
  *ranges = NULL;
  *n = 0;
  cleanup_fclose FILE *f = fopen(file, "re");
  if (!f) {
    /* No file simply means nobody has subordinate ids. */
    if (errno == ENOENT)
      return 0;
    return rrt_error_errno(err, "open %s", file);
  }

  cleanup_free char *line = NULL;
  cleanup_free struct rrt_subid_range *found = NULL;
  size_t cap = 0, nfound = 0, lineno = 0;
  ssize_t got;
  errno = 0;
  while ((got = getline(&line, &cap, f)) >= 0) {
    lineno++;
    if (memchr(line, '\0', (size_t)got))
      return rrt_error_set(err, 0, "%s:%zu: NUL byte in line", file, lineno);
    char *owner = NULL;
    struct rrt_subid_range r;
    struct rrt_error perr = RRT_ERROR_INIT;
    if (rrt_subid_parse_line(line, &owner, &r, &perr) < 0) {
      bool empty = perr.errnum == 0 && perr.msg && strcmp(perr.msg, "empty") == 0;
      if (empty) {
        rrt_error_clear(&perr);
        continue;
      }
      rrt_error_move(err, &perr);
      return rrt_error_wrap(err, "%s:%zu", file, lineno);
    }
    bool match = owner_matches(owner, user, id);
    free(owner);
    if (!match)
      continue;
    found = xrealloc(found, (nfound + 1) * sizeof(*found));
    found[nfound++] = r;
  }
  if (ferror(f))
    return rrt_error_errno(err, "read %s", file);

  *ranges = steal_ptr(&found);
  *n = nfound;
  return 0;
}
