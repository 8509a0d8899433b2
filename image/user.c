/* user.c: -u and the image's User as numeric ids: names looked up in the image's own
 * /etc/passwd and /etc/group, as the container sees them (the merged layers). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/util.h"

/* Field 3 (and 4) of the line whose field 1 is name, or whose field 3 is id when name is NULL. */
static bool lookup(const char *text, const char *name, unsigned long id, unsigned long *f3,
                   unsigned long *f4)
{
  cleanup_free char *copy = xstrdup(text ? text : "");
  char *save = NULL;
  for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *f[5] = {0};
    char *p = line;
    for (int k = 0; k < 5 && p; k++) {
      f[k] = p;
      p = strchr(p, ':');
      if (p)
        *p++ = '\0';
    }
    unsigned long long a, b = 0;
    if (!f[2] || rrt_parse_u64(f[2], &a) < 0 || (f[3] && rrt_parse_u64(f[3], &b) < 0 && f[4]))
      continue;
    if (name ? strcmp(f[0], name) == 0 : a == id) {
      *f3 = (unsigned long)a;
      if (f4)
        *f4 = (unsigned long)b;
      return true;
    }
  }
  return false;
}

int rrt_run_resolve_user(const char *spec, char *const *lowers, uid_t *uid, gid_t *gid,
                         struct rrt_error *err)
{
  cleanup_free char *copy = xstrdup(spec);
  char *grp = strchr(copy, ':');
  if (grp)
    *grp++ = '\0';
  cleanup_free char *passwd = NULL;
  if (rrt_image_read_file(lowers, "/etc/passwd", RRT_IMAGE_TEXT_MAX, &passwd, NULL, err) < 0)
    return -1;
  unsigned long long n;
  unsigned long u, g = 0;
  bool have_g = false;
  if (rrt_parse_u64(copy, &n) == 0 && n < 0xffffffffULL) {
    u = (unsigned long)n;
    have_g = lookup(passwd, NULL, u, &u, &g);
  } else if (!lookup(passwd, copy, 0, &u, &g)) {
    return rrt_error_msgf(err, ENOENT, "user \"%s\": not in the image's /etc/passwd", copy);
  } else {
    have_g = true;
  }
  if (grp && *grp) {
    if (rrt_parse_u64(grp, &n) == 0 && n < 0xffffffffULL) {
      g = (unsigned long)n;
    } else {
      cleanup_free char *group = NULL;
      if (rrt_image_read_file(lowers, "/etc/group", RRT_IMAGE_TEXT_MAX, &group, NULL, err) < 0)
        return -1;
      if (!lookup(group, grp, 0, &g, NULL))
        return rrt_error_msgf(err, ENOENT, "group \"%s\": not in the image's /etc/group", grp);
    }
  } else if (!have_g) {
    g = 0;
  }
  *uid = (uid_t)u;
  *gid = (gid_t)g;
  return 0;
}
