/* check.c: what every check uses: the items list, host files, the distribution family and its
 * packages, and running a command (run.c says the order the checks run in). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_internal.h"
#include "rootlessrt/util.h"

extern char **environ;

void check_add(struct rrt_check *c, const char *name, enum rrt_check_level level, char *fix,
               const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *found = xvasprintf(fmt, ap);
  va_end(ap);
  c->items = xrealloc(c->items, (c->n + 1) * sizeof(*c->items));
  c->items[c->n++] = (struct rrt_check_item){name, level, found, fix};
}

char *check_path(const struct rrt_check *c, const char *path)
{
  return xasprintf("%s%s", c->prefix ? c->prefix : "", path);
}

char *check_read(const struct rrt_check *c, const char *path)
{
  cleanup_free char *p = check_path(c, path);
  char *text = NULL;
  size_t len;
  if (rrt_read_file(p, &text, &len, NULL) < 0)
    return NULL;
  return text;
}

long long check_read_num(const struct rrt_check *c, const char *path)
{
  cleanup_free char *text = check_read(c, path);
  long long v;
  if (!text)
    return -1;
  text[strcspn(text, " \n")] = '\0';
  return rrt_parse_i64(text, &v) == 0 ? v : -1;
}

const char *rrt_check_level_name(enum rrt_check_level l)
{
  return l == RRT_CHECK_OK ? "ok" : l == RRT_CHECK_WARN ? "warn" : "fail";
}

const char *rrt_check_distro_family(enum rrt_distro d)
{
  static const char *const names[] = {"other", "debian", "fedora", "arch", "suse"};
  return names[d];
}

/* One os-release value, unquoted (malloc'd), or NULL. */
static char *os_release_value(const char *text, const char *key)
{
  size_t klen = strlen(key);
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, key, klen) != 0 || l[klen] != '=')
      continue;
    const char *v = l + klen + 1;
    size_t n = strcspn(v, "\n");
    if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
      v++;
      n -= 2;
    }
    return xstrndup(v, n);
  }
  return NULL;
}

static enum rrt_distro family_of(const char *ids)
{
  static const struct {
    const char *id;
    enum rrt_distro d;
  } known[] = {{"debian", RRT_DISTRO_DEBIAN}, {"ubuntu", RRT_DISTRO_DEBIAN},
               {"fedora", RRT_DISTRO_FEDORA}, {"rhel", RRT_DISTRO_FEDORA},
               {"centos", RRT_DISTRO_FEDORA}, {"arch", RRT_DISTRO_ARCH},
               {"suse", RRT_DISTRO_SUSE},     {"opensuse", RRT_DISTRO_SUSE}};
  cleanup_free char *copy = xstrdup(ids);
  char *save = NULL;
  for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    if (strncmp(w, "opensuse", 8) == 0)
      return RRT_DISTRO_SUSE;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
      if (strcmp(w, known[i].id) == 0)
        return known[i].d;
  }
  return RRT_DISTRO_OTHER;
}

void check_detect_distro(struct rrt_check *c)
{
  cleanup_free char *text = check_read(c, "/etc/os-release");
  if (!text)
    text = check_read(c, "/usr/lib/os-release");
  c->distro_id = text ? os_release_value(text, "ID") : NULL;
  c->distro_name = text ? os_release_value(text, "PRETTY_NAME") : NULL;
  cleanup_free char *like = text ? os_release_value(text, "ID_LIKE") : NULL;
  cleanup_free char *ids = xasprintf("%s %s", c->distro_id ? c->distro_id : "", like ? like : "");
  c->distro = family_of(ids);
  if (!c->distro_id)
    c->distro_id = xstrdup("unknown");
  if (!c->distro_name)
    c->distro_name = xstrdup(c->distro_id);
}

const char *check_pkg_name(const struct rrt_check *c, enum check_pkg p)
{
  /* other, debian, fedora, arch, suse */
  static const char *const names[][5] = {
      [PKG_IDMAP] = {"newuidmap/newgidmap (shadow)", "uidmap", "shadow-utils", "shadow", "shadow"},
      [PKG_SLIRP4NETNS] = {"slirp4netns", "slirp4netns", "slirp4netns", "slirp4netns",
                           "slirp4netns"},
      [PKG_PASST] = {"passt", "passt", "passt", "passt", "passt"},
      [PKG_FUSE_OVERLAYFS] = {"fuse-overlayfs", "fuse-overlayfs", "fuse-overlayfs",
                              "fuse-overlayfs", "fuse-overlayfs"},
      [PKG_LIBSLIRP] = {"libslirp", "libslirp0", "libslirp", "libslirp", "libslirp0"},
      [PKG_FUSE] = {"fuse3", "fuse3", "fuse3", "fuse3", "fuse3"},
  };
  return names[p][c->distro];
}

/* The package manager's command; the package name follows it. */
static char *pkg_command(const struct rrt_check *c, const char *const cmd[5], enum check_pkg p,
                         const char *after)
{
  return xasprintf("%s%s%s", cmd[c->distro], check_pkg_name(c, p), after);
}

char *check_install(const struct rrt_check *c, enum check_pkg p)
{
  static const char *const cmd[] = {"install ", "sudo apt-get install -y ", "sudo dnf install -y ",
                                    "sudo pacman -S --needed ", "sudo zypper install -y "};
  return pkg_command(c, cmd, p, c->distro ? "" : " with your package manager");
}

char *check_reinstall(const struct rrt_check *c, enum check_pkg p)
{
  static const char *const cmd[] = {"reinstall ", "sudo apt-get install --reinstall -y ",
                                    "sudo dnf reinstall -y ", "sudo pacman -S ",
                                    "sudo zypper install -f -y "};
  return pkg_command(c, cmd, p, c->distro ? "" : " with your package manager");
}

char *check_sysctl_fix(const char *key, const char *value)
{
  return xasprintf("sudo sysctl -w %s=%s && echo '%s=%s' | sudo tee "
                   "/etc/sysctl.d/90-rootlessrt.conf",
                   key, value, key, value);
}

const char *check_fs_name(long f_type, char buf[32])
{
  static const struct {
    unsigned long magic;
    const char *name;
  } fs[] = {{0x01021994, "tmpfs"},   {0xEF53, "ext4"},        {0x9123683E, "btrfs"},
            {0x58465342, "xfs"},     {0x6969, "nfs"},         {0xFF534D42, "cifs"},
            {0xFE534D42, "smb2"},    {0x858458f6, "ramfs"},   {0x794c7630, "overlay"},
            {0x4d44, "vfat"},        {0x2fc12fc1, "zfs"},     {0x65735546, "fuse"},
            {0x01021997, "9p"},      {0x63677270, "cgroup2"}, {0x27e0eb, "cgroup"},
            {0xF2F52010, "f2fs"},    {0x5346544e, "ntfs"},    {0x3153464a, "jfs"},
            {0x52654973, "reiserfs"}};
  for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
    if ((unsigned long)f_type == fs[i].magic)
      return fs[i].name;
  snprintf(buf, 32, "0x%lx", (unsigned long)f_type);
  return buf;
}

char *check_which(const char *name)
{
  const char *path = getenv("PATH");
  cleanup_free char *copy = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
  char *save = NULL;
  for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    char *p = xasprintf("%s/%s", *d ? d : ".", name);
    if (access(p, X_OK) == 0)
      return p;
    free(p);
  }
  return NULL;
}

/* Reads what the program writes until EOF (at most 4 KiB kept) or 3 s, then reaps it. */
static int collect(pid_t pid, int fd, char **out)
{
  char buf[4096];
  size_t len = 0;
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, 3000);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    char tmp[1024];
    ssize_t n = read(fd, tmp, sizeof(tmp));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    size_t take = (size_t)n < sizeof(buf) - 1 - len ? (size_t)n : sizeof(buf) - 1 - len;
    memcpy(buf + len, tmp, take);
    len += take;
  }
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
    len--;
  buf[len] = '\0';
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  if (out)
    *out = xstrdup(buf);
  return status;
}

int check_spawn(char *const argv[], char **out)
{
  int p[2];
  if (out)
    *out = NULL;
  if (pipe2(p, O_CLOEXEC) < 0)
    return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, p[1], 2);
  pid_t pid;
  int r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  cleanup_close int rd = p[0];
  if (r != 0)
    return -1;
  return collect(pid, rd, out);
}

/* The line naming the program and a version, else the first line. */
char *check_version(const char *path)
{
  char *argv[] = {(char *)path, (char *)"--version", NULL};
  cleanup_free char *out = NULL;
  int st = check_spawn(argv, &out);
  if (st < 0 || !out || !*out)
    return NULL;
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  for (char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] ? 1 : 0)) {
    size_t n = strcspn(l, "\n");
    cleanup_free char *line = xstrndup(l, n);
    if (strstr(line, base) && strstr(line, "version"))
      return steal_ptr(&line);
  }
  return xstrndup(out, strcspn(out, "\n"));
}
