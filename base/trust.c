/* trust.c: whether another user could steer the runtime: the state root and its entries, hook
 * paths, console socket listeners. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootlessrt/trust.h"
#include "rootlessrt/util.h"

/* Inside a user namespace that does not map every id (rootless podman runs us so), files of
 * unmapped owners (host root's /tmp, for one) show as the overflow uid: nobody can tell whose
 * they are, so directories above the root that show so are taken as the host's. */
static bool unmapped_owner(uid_t uid)
{
  static int in_userns = -1;
  static uid_t overflow = 65534;
  if (in_userns < 0) {
    cleanup_free char *map = NULL;
    cleanup_free char *ov = NULL;
    unsigned long long v;
    in_userns =
        rrt_read_file("/proc/self/uid_map", &map, NULL, NULL) == 0 && !strstr(map, "4294967295");
    if (rrt_read_file("/proc/sys/kernel/overflowuid", &ov, NULL, NULL) == 0) {
      ov[strcspn(ov, "\n")] = '\0';
      if (rrt_parse_u64(ov, &v) == 0)
        overflow = (uid_t)v;
    }
  }
  return in_userns && uid == overflow;
}

static bool owner_trusted(uid_t uid)
{
  return uid == geteuid() || uid == 0 || unmapped_owner(uid);
}

static const char *owner_name(uid_t uid)
{
  const char *n = rrt_user_name(uid);
  return n ? n : "?";
}

/* The flag that chooses another one of what is checked. */
static const char *flag_for(const char *what)
{
  return strncmp(what, "image store", 11) == 0 ? "--storage" : "--root";
}

/* Each directory above path (resolved) and each symlink on the way to it: the caller's or
 * root's, and when others may write a directory, sticky. */
static int check_above(const char *path, const char *what, struct rrt_error *err)
{
  cleanup_free char *copy = xstrdup(path);
  for (char *p = copy + 1; (p = strchr(p, '/')); p++) {
    *p = '\0';
    struct stat st;
    if (lstat(copy, &st) == 0 && S_ISLNK(st.st_mode) && !owner_trusted(st.st_uid))
      return rrt_error_msgf(err, EPERM,
                            "%s %s: %s on its path is a symbolic link owned by %s (uid %u): "
                            "that user decides where the %s is; choose another with %s",
                            what, path, copy, owner_name(st.st_uid), st.st_uid, what,
                            flag_for(what));
    *p = '/';
  }
  char *slash = strrchr(copy, '/');
  if (!slash)
    return 0;
  *slash = '\0';
  char real[PATH_MAX];
  if (!realpath(copy[0] ? copy : "/", real))
    return 0; /* the root itself will not be found either */
  size_t len = strlen(real);
  for (size_t i = len; i > 0; i--) {
    if (i != len && real[i] != '/')
      continue;
    char save = real[i];
    real[i] = '\0';
    const char *dir = real[0] ? real : "/";
    struct stat st;
    if (stat(dir, &st) == 0) {
      if (!owner_trusted(st.st_uid))
        return rrt_error_msgf(err, EPERM,
                              "%s %s: the directory %s above it is owned by %s (uid %u), who "
                              "could replace it; choose a %s elsewhere with %s",
                              what, path, dir, owner_name(st.st_uid), st.st_uid, what,
                              flag_for(what));
      if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        return rrt_error_msgf(err, EPERM,
                              "%s %s: the directory %s above it is writable by others (mode "
                              "%04o) and not sticky, so anyone could replace it; choose a %s "
                              "elsewhere with %s",
                              what, path, dir, st.st_mode & 07777, what, flag_for(what));
    }
    real[i] = save;
  }
  return 0;
}

int rrt_trust_root(const char *path, const char *what, struct rrt_error *err)
{
  if (rrt_trust_dir(path, what, err) < 0)
    return -1;
  return check_above(path, what, err);
}

int rrt_trust_dir(const char *path, const char *what, struct rrt_error *err)
{
  struct stat st;
  if (lstat(path, &st) < 0)
    return rrt_error_errno(err, "%s %s", what, path);
  if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    target[n < 0 ? 0 : n] = '\0';
    return rrt_error_msgf(err, EPERM,
                          "%s %s is a symbolic link (to %s, made by %s, uid %u), not a directory "
                          "of yours: another user may have planted it; remove it (rm %s) or "
                          "choose another with %s",
                          what, path, target, owner_name(st.st_uid), st.st_uid, path,
                          flag_for(what));
  }
  if (!S_ISDIR(st.st_mode))
    return rrt_error_msgf(err, ENOTDIR,
                          "%s %s is not a directory: remove it (rm %s) or choose another with %s",
                          what, path, path, flag_for(what));
  if (st.st_uid != geteuid())
    return rrt_error_msgf(err, EPERM,
                          "%s %s is owned by %s (uid %u), not by you (uid %u): its owner could "
                          "steer this runtime through it; remove it (as its owner or root: rm "
                          "-rf %s) or choose another with %s",
                          what, path, owner_name(st.st_uid), st.st_uid, geteuid(), path,
                          flag_for(what));
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return rrt_error_msgf(err, EPERM,
                          "%s %s is writable by others (mode %04o): anyone who can write it "
                          "could plant what it runs in it; make it private (chmod go-w %s)",
                          what, path, st.st_mode & 07777, path);
  return 0;
}

int rrt_trust_stat(const struct stat *st, mode_t type, const char *shown, struct rrt_error *err)
{
  if ((st->st_mode & S_IFMT) != type)
    return rrt_error_msgf(err, EPERM, "%s is not a %s: refusing it; remove it (rm -rf %s)", shown,
                          type == S_IFDIR ? "directory" : "regular file", shown);
  if (st->st_uid != geteuid())
    return rrt_error_msgf(err, EPERM,
                          "%s is owned by %s (uid %u), not by you (uid %u): refusing it; remove "
                          "it (as its owner or root: rm -rf %s)",
                          shown, owner_name(st->st_uid), st->st_uid, geteuid(), shown);
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return rrt_error_msgf(err, EPERM,
                          "%s is writable by others (mode %04o): refusing it; chmod go-w %s", shown,
                          st->st_mode & 07777, shown);
  return 0;
}

/* Someone other than the caller or root may change what st describes. */
static bool others_may_write(const struct stat *st)
{
  if (st->st_uid != geteuid() && st->st_uid != 0)
    return true;
  /* In a sticky directory (/tmp) others may add entries but not replace ours. */
  if (S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))
    return false;
  return (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

char *rrt_trust_writable_by_others(const char *path)
{
  char real[PATH_MAX];
  if (!realpath(path, real))
    return NULL; /* a missing hook fails on its own */
  struct stat st;
  if (stat(real, &st) == 0 && others_may_write(&st))
    return xasprintf("%s (owner %s, mode %04o)", real, owner_name(st.st_uid), st.st_mode & 07777);
  for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
    *slash = '\0';
    const char *dir = real[0] ? real : "/";
    if (stat(dir, &st) == 0 && others_may_write(&st))
      return xasprintf("%s (owner %s, mode %04o)", dir, owner_name(st.st_uid), st.st_mode & 07777);
    if (!real[0])
      break;
  }
  return NULL;
}

int rrt_trust_peer(int fd, const char *what, const char *path, struct rrt_error *err)
{
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
    return rrt_error_errno(err, "%s %s: SO_PEERCRED", what, path);
  if (cred.uid == geteuid() || cred.uid == 0)
    return 0;
  return rrt_error_msgf(err, EPERM,
                        "%s %s: the listener (pid %d) runs as %s (uid %u), not as you (uid %u): "
                        "it would receive the container's terminal; use a socket of your own",
                        what, path, cred.pid, owner_name(cred.uid), cred.uid, geteuid());
}
