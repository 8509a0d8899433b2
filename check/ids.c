/* ids.c: the check's subordinate ids (/etc/subuid, /etc/subgid) and id-map helpers
 * (newuidmap, newgidmap: present, setuid or file capabilities, version, and a real mapping). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "check_internal.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

#define WANT_IDS 65536UL

struct entry {
  char *owner;
  struct rrt_subid_range r;
};

struct subids {
  const char *item;  /* "subuid" */
  const char *file;  /* "/etc/subuid" */
  const char *flag;  /* "subuids" (usermod --add-subuids) */
  unsigned long id;  /* the caller's uid or gid */
  struct entry *all; /* every line of the file */
  size_t n_all;
  struct rrt_subid_range *mine;
  size_t n_mine;
};

/* The caller's ranges, kept for the helpers' trial. */
static struct rrt_subid_range uid_range, gid_range;

static bool is_mine(const struct rrt_check *c, const char *owner)
{
  char num[32];
  snprintf(num, sizeof(num), "%u", (unsigned)c->uid);
  return strcmp(owner, c->user) == 0 || strcmp(owner, num) == 0;
}

static void read_entries(const struct rrt_check *c, struct subids *s)
{
  cleanup_free char *text = check_read(c, s->file);
  char *save = NULL;
  for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
    struct entry e = {0};
    if (rrt_subid_parse_line(l, &e.owner, &e.r, NULL) < 0)
      continue;
    s->all = xrealloc(s->all, (s->n_all + 1) * sizeof(*s->all));
    s->all[s->n_all++] = e;
    if (is_mine(c, e.owner)) {
      s->mine = xrealloc(s->mine, (s->n_mine + 1) * sizeof(*s->mine));
      s->mine[s->n_mine++] = e.r;
    }
  }
}

static void subids_free(struct subids *s)
{
  for (size_t i = 0; i < s->n_all; i++)
    free(s->all[i].owner);
  free(s->all);
  free(s->mine);
}

/* The first multiple of 65536 (at least 100000's) past every range of the file. */
static unsigned long free_start(const struct subids *s)
{
  unsigned long end = 100000;
  for (size_t i = 0; i < s->n_all; i++)
    if (s->all[i].r.start + s->all[i].r.count > end)
      end = s->all[i].r.start + s->all[i].r.count;
  return (end + WANT_IDS - 1) / WANT_IDS * WANT_IDS;
}

static bool local_user(const struct rrt_check *c)
{
  cleanup_free char *pw = check_read(c, "/etc/passwd");
  cleanup_free char *key = xasprintf("\n%s:", c->user);
  return pw && (strncmp(pw, key + 1, strlen(key + 1)) == 0 || strstr(pw, key));
}

/* Adds a free range of 65536 (and removes `drop` when given). */
static char *add_range_fix(const struct rrt_check *c, const struct subids *s,
                           const struct rrt_subid_range *drop)
{
  unsigned long start = free_start(s);
  if (!local_user(c)) /* LDAP, FreeIPA: usermod cannot change them */
    return xasprintf("echo '%s:%lu:%lu' | sudo tee -a %s", c->user, start, WANT_IDS, s->file);
  cleanup_free char *del =
      drop ? xasprintf("--del-%s %lu-%lu ", s->flag, drop->start, drop->start + drop->count - 1)
           : xstrdup("");
  return xasprintf("sudo usermod %s--add-%s %lu-%lu %s", del, s->flag, start, start + WANT_IDS - 1,
                   c->user);
}

static char *ranges_text(const struct subids *s)
{
  char *t = xstrdup("");
  for (size_t i = 0; i < s->n_mine; i++) {
    char *n = xasprintf("%s%s%lu-%lu (%lu ids)", t, i ? ", " : "", s->mine[i].start,
                        s->mine[i].start + s->mine[i].count - 1, s->mine[i].count);
    free(t);
    t = n;
  }
  return t;
}

/* Another owner's range that shares ids with one of ours, or NULL. */
static const struct entry *overlap(const struct rrt_check *c, const struct subids *s,
                                   const struct rrt_subid_range **ours)
{
  for (size_t i = 0; i < s->n_mine; i++)
    for (size_t j = 0; j < s->n_all; j++) {
      const struct entry *e = &s->all[j];
      if (is_mine(c, e->owner))
        continue;
      if (e->r.start < s->mine[i].start + s->mine[i].count &&
          s->mine[i].start < e->r.start + e->r.count) {
        *ours = &s->mine[i];
        return e;
      }
    }
  return NULL;
}

static void check_subid_file(struct rrt_check *c, struct subids *s, struct rrt_subid_range *keep)
{
  read_entries(c, s);
  if (s->n_mine == 0) {
    check_add(c, s->item, RRT_CHECK_WARN, add_range_fix(c, s, NULL),
              "no range for %s in %s: containers get your own id alone (images whose files "
              "belong to other ids fail)",
              c->user, s->file);
    return;
  }
  cleanup_free char *ranges = ranges_text(s);
  const struct rrt_subid_range *ours = NULL;
  const struct entry *other = overlap(c, s, &ours);
  unsigned long total = 0;
  for (size_t i = 0; i < s->n_mine; i++)
    total += s->mine[i].count;
  *keep = s->mine[0];
  if (other)
    check_add(c, s->item, RRT_CHECK_FAIL, add_range_fix(c, s, ours),
              "%s: %s in %s overlaps %s's %lu-%lu: their containers share ids with yours", c->user,
              ranges, s->file, other->owner, other->r.start, other->r.start + other->r.count - 1);
  else if (total < WANT_IDS)
    check_add(c, s->item, RRT_CHECK_WARN, add_range_fix(c, s, NULL),
              "%s: %s in %s, fewer than %lu: images with ids up to 65535 fail", c->user, ranges,
              s->file, WANT_IDS);
  else
    check_add(c, s->item, RRT_CHECK_OK, NULL, "%s: %s in %s", c->user, ranges, s->file);
}

void check_subids(struct rrt_check *c)
{
  struct subids u = {"subuid", "/etc/subuid", "subuids", c->uid, NULL, 0, NULL, 0};
  struct subids g = {"subgid", "/etc/subgid", "subgids", c->gid, NULL, 0, NULL, 0};
  uid_range = gid_range = (struct rrt_subid_range){0, 0};
  check_subid_file(c, &u, &uid_range);
  check_subid_file(c, &g, &gid_range);
  subids_free(&u);
  subids_free(&g);
}

/* ---------------------------------------------------------------- newuidmap, newgidmap */

struct helper {
  const char *name; /* newuidmap */
  int cap;          /* CAP_SETUID or CAP_SETGID */
  char *path;
  char *how; /* "setuid root", "file capability cap_setuid", or NULL: neither */
  int trial; /* wait status of the trial mapping; -2 not tried */
  char *trial_out;
};

/* Whether the file capability xattr grants `cap` (permitted). */
static bool file_cap(const char *path, int cap)
{
  unsigned int data[5] = {0}; /* magic_etc, then permitted/inheritable pairs */
  ssize_t n = getxattr(path, "security.capability", data, sizeof(data));
  return n >= 12 && cap < 32 && (data[1] & (1U << cap));
}

static char *version_in_dpkg(const char *pkg)
{
  cleanup_free char *st = NULL;
  size_t len;
  if (rrt_read_file("/var/lib/dpkg/status", &st, &len, NULL) < 0)
    return NULL;
  cleanup_free char *key = xasprintf("Package: %s\n", pkg);
  char *p = strstr(st, key);
  if (p != st && p && p[-1] != '\n')
    p = NULL;
  char *end = p ? strstr(p, "\n\n") : NULL;
  char *v = p ? strstr(p, "\nVersion: ") : NULL;
  if (!v || (end && v > end))
    return NULL;
  v += strlen("\nVersion: ");
  return xasprintf("%s %.*s", pkg, (int)strcspn(v, "\n"), v);
}

/* The version of the package that owns path, from the package manager ("uidmap 1:4.13-1"). */
static char *package_version(const struct rrt_check *c, const char *path)
{
  if (strncmp(path, "/usr/", 5) != 0 && strncmp(path, "/bin/", 5) != 0)
    return NULL;
  if (c->distro == RRT_DISTRO_DEBIAN)
    return version_in_dpkg(check_pkg_name(c, PKG_IDMAP));
  char *out = NULL;
  if (c->distro == RRT_DISTRO_FEDORA || c->distro == RRT_DISTRO_SUSE) {
    char *argv[] = {"/usr/bin/rpm", "-qf", "--qf", "%{NAME} %{VERSION}-%{RELEASE}",
                    (char *)path,   NULL};
    if (access(argv[0], X_OK) == 0 && check_spawn(argv, &out) == 0)
      return out;
  } else if (c->distro == RRT_DISTRO_ARCH) {
    char *argv[] = {"/usr/bin/pacman", "-Qqo", (char *)path, NULL};
    if (access(argv[0], X_OK) == 0 && check_spawn(argv, &out) == 0)
      return out;
  }
  free(out);
  return NULL;
}

static void find_helper(struct helper *h)
{
  h->path = check_which(h->name);
  if (!h->path) {
    char *p = xasprintf("/usr/bin/%s", h->name);
    if (access(p, X_OK) == 0)
      h->path = p;
    else
      free(p);
  }
  struct stat st;
  if (!h->path || stat(h->path, &st) < 0)
    return;
  if ((st.st_mode & S_ISUID) && st.st_uid == 0)
    h->how = xstrdup("setuid root");
  else if (file_cap(h->path, h->cap))
    h->how = xasprintf("file capability %s", h->cap == 7 ? "cap_setuid" : "cap_setgid");
}

/* Runs both helpers on a throwaway user namespace with the caller's first ranges. */
static void trial(struct rrt_check *c, struct helper *h)
{
  int ready[2], hold[2];
  if (pipe2(ready, O_CLOEXEC) < 0)
    return;
  if (pipe2(hold, O_CLOEXEC) < 0) {
    close(ready[0]);
    close(ready[1]);
    return;
  }
  pid_t child = fork();
  if (child == 0) {
    close(hold[1]);
    close(ready[0]);
    char r = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
    (void)!write(ready[1], &r, 1);
    (void)!read(hold[0], &r, 1);
    _exit(0);
  }
  close(ready[1]);
  close(hold[0]);
  char r = 'n';
  if (child > 0 && read(ready[0], &r, 1) == 1 && r == 'y') {
    const struct rrt_subid_range *rg[2] = {&uid_range, &gid_range};
    unsigned long self[2] = {c->uid, c->gid};
    for (int i = 0; i < 2; i++) {
      if (!h[i].how || rg[i]->count == 0)
        continue;
      char pid[16], own[16], start[32], count[32];
      snprintf(pid, sizeof(pid), "%d", (int)child);
      snprintf(own, sizeof(own), "%lu", self[i]);
      snprintf(start, sizeof(start), "%lu", rg[i]->start);
      snprintf(count, sizeof(count), "%lu", rg[i]->count < WANT_IDS ? rg[i]->count : WANT_IDS);
      char *argv[] = {h[i].path, pid, "0", own, "1", "1", start, count, NULL};
      h[i].trial = check_spawn(argv, &h[i].trial_out);
    }
  }
  close(ready[0]);
  close(hold[1]);
  if (child > 0)
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
      ;
}

/* PATH without dir, for a broken helper copy found ahead of the distribution's. */
static char *path_without(const char *dir)
{
  const char *path = getenv("PATH");
  cleanup_free char *copy = xstrdup(path ? path : "");
  char *out = xstrdup("");
  char *save = NULL;
  for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    if (strcmp(d, dir) == 0)
      continue;
    char *n = xasprintf("%s%s%s", out, *out ? ":" : "", d);
    free(out);
    out = n;
  }
  return out;
}

static bool system_path(const char *p)
{
  static const char *const dirs[] = {"/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/"};
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
    if (strncmp(p, dirs[i], strlen(dirs[i])) == 0 && !strchr(p + strlen(dirs[i]), '/'))
      return true;
  return false;
}

static char *broken_helper_fix(const struct rrt_check *c, const struct helper *h)
{
  if (system_path(h->path))
    return check_reinstall(c, PKG_IDMAP);
  cleanup_free char *dir = xstrdup(h->path);
  *strrchr(dir, '/') = '\0';
  cleanup_free char *path = path_without(dir);
  return xasprintf("export PATH=%s  # %s is a copy without privileges", path, h->path);
}

static void report_helper(struct rrt_check *c, const struct helper *h, bool have_ranges)
{
  enum rrt_check_level bad = have_ranges ? RRT_CHECK_FAIL : RRT_CHECK_WARN;
  const char *without = have_ranges ? "create fails (you have subordinate ids to map)"
                                    : "only your own id can be mapped";
  if (!h->path) {
    check_add(c, h->name, bad, check_install(c, PKG_IDMAP), "not found on PATH: %s", without);
    return;
  }
  if (!h->how) {
    check_add(c, h->name, bad, broken_helper_fix(c, h),
              "%s is neither setuid root nor has file capability %s: %s", h->path,
              h->cap == 7 ? "cap_setuid" : "cap_setgid", without);
    return;
  }
  cleanup_free char *ver = package_version(c, h->path);
  cleanup_free char *what =
      xasprintf("%s (%s%s%s)", h->path, h->how, ver ? ", " : "", ver ? ver : "");
  if (!have_ranges)
    check_add(c, h->name, RRT_CHECK_OK, NULL, "%s; not tried: no subordinate range", what);
  else if (h->trial == -2)
    check_add(c, h->name, RRT_CHECK_WARN, NULL, "%s; not tried (see userns, subuid and subgid)",
              what);
  else if (h->trial != 0)
    check_add(c, h->name, RRT_CHECK_FAIL, NULL, "%s; mapping a test user namespace failed: %s",
              what, h->trial_out && *h->trial_out ? h->trial_out : "(no output)");
  else
    check_add(c, h->name, RRT_CHECK_OK, NULL, "%s; mapped a test user namespace", what);
}

void check_helpers(struct rrt_check *c)
{
  struct helper h[2] = {{"newuidmap", 7, NULL, NULL, -2, NULL},
                        {"newgidmap", 6, NULL, NULL, -2, NULL}};
  find_helper(&h[0]);
  find_helper(&h[1]);
  if ((uid_range.count > 0 && h[0].how) || (gid_range.count > 0 && h[1].how))
    trial(c, h);
  for (int i = 0; i < 2; i++) {
    report_helper(c, &h[i], (i == 0 ? uid_range.count : gid_range.count) > 0);
    free(h[i].path);
    free(h[i].how);
    free(h[i].trial_out);
  }
}
