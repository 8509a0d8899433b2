/* state.c: state directory, locking, the state file and status. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/log.h"
#include "rootlessrt/state.h"
#include "rootlessrt/trust.h"
#include "rootlessrt/util.h"

int rrt_state_root(const char *flag_root, bool create, char **out, struct rrt_error *err)
{
  cleanup_free char *path = NULL;
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  if (flag_root && *flag_root) {
    path = xstrdup(flag_root);
  } else if (xdg && *xdg && access(xdg, W_OK | X_OK) == 0) {
    path = xasprintf("%s/rootlessrt", xdg);
  } else {
    cleanup_free char *run_user = xasprintf("/run/user/%u", geteuid());
    if (geteuid() == 0 && access("/run", W_OK) == 0)
      path = xstrdup("/run/rootlessrt");
    else if (access(run_user, W_OK | X_OK) == 0)
      path = xasprintf("%s/rootlessrt", run_user);
    else if (access("/tmp", W_OK | X_OK) == 0 || access("/dev/shm", W_OK | X_OK) < 0)
      path = xasprintf("/tmp/rootlessrt-%u", geteuid());
    else /* a CI job's container with a read-only root and no tmpfs on /tmp */
      path = xasprintf("/dev/shm/rootlessrt-%u", geteuid());
    if (create && strncmp(path, "/tmp/", 5) == 0 && access("/tmp", W_OK | X_OK) < 0 &&
        access(path, W_OK | X_OK) < 0)
      return rrt_error_msgf(err, EROFS,
                            "no writable state directory: XDG_RUNTIME_DIR is not set and "
                            "none of %s, /tmp, /dev/shm is writable: set XDG_RUNTIME_DIR to a "
                            "writable directory, or pass --root DIR",
                            geteuid() == 0 ? "/run" : run_user);
  }
  if (create) {
    /* --root may name a path whose parents do not exist yet, like runc. */
    for (char *p = path + 1; (p = strchr(p, '/')); p++) {
      *p = '\0';
      if (mkdir(path, 0700) < 0 && errno != EEXIST) {
        int e = errno;
        *p = '/';
        return rrt_error_msgf(err, e, "mkdir %s", path);
      }
      *p = '/';
    }
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
      return rrt_error_errno(err, "mkdir %s", path);
  }
  /* Every verb, not only create: a root someone else made or can write is theirs to fill
   * with containers whose pids, hooks and cgroups this user would then act on. */
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_trust_root(path, "state root", &e) < 0) {
    if (create || e.errnum != ENOENT) {
      if (err)
        rrt_error_move(err, &e);
      rrt_error_clear(&e);
      return -1;
    }
    rrt_error_clear(&e); /* nothing there yet: no container exists */
  }
  *out = steal_ptr(&path);
  return 0;
}

/* An id as a message may show it: at most 64 characters, any byte that is not printable ASCII
 * as \xNN (an id is bytes from the command line; half a UTF-8 character would make the message,
 * and a JSON log line, invalid). */
static char *printable_id(const char *id)
{
  size_t n = strlen(id);
  char *out = xmalloc(64 * 4 + 4);
  size_t k = 0;
  for (size_t i = 0; i < n && i < 64; i++) {
    unsigned char c = (unsigned char)id[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
      out[k++] = (char)c;
    else
      k += (size_t)sprintf(out + k, "\\x%02x", c);
  }
  if (n > 64)
    k += (size_t)sprintf(out + k, "...");
  out[k] = '\0';
  return out;
}

/* The id names ROOT/ID and the cgroup "rootlessrt-ID": both must be one file name (255 bytes). */
#define MAX_ID_LEN (255 - sizeof("rootlessrt-") + 1)

int rrt_state_validate_id(const char *id, struct rrt_error *err)
{
  if (!id || !*id)
    return rrt_error_msgf(err, EINVAL, "container id: must not be empty");
  cleanup_free char *shown = printable_id(id);
  if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0 || strchr(id, '/'))
    return rrt_error_msgf(err, EINVAL,
                          "container id \"%s\": must not be \".\", \"..\" or contain \"/\"", shown);
  if (strlen(id) > MAX_ID_LEN)
    return rrt_error_msgf(err, EINVAL, "container id \"%s\": %zu bytes, longer than %zu", shown,
                          strlen(id), MAX_ID_LEN);
  for (const char *p = id; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.' || c == '+')) {
      char what[8];
      snprintf(what, sizeof(what), c > 0x20 && c < 0x7f ? "'%c'" : "\\x%02x", c);
      return rrt_error_msgf(err, EINVAL,
                            "container id \"%s\": invalid character %s (allowed: letters, digits, "
                            "'_', '-', '.', '+')",
                            shown, what);
    }
  }
  return 0;
}

static int lock_dir(int fd, bool exclusive, const char *id, bool *busy, struct rrt_error *err)
{
  int r;
  do
    r = flock(fd, exclusive ? LOCK_EX : LOCK_SH | LOCK_NB);
  while (r < 0 && errno == EINTR);
  /* Readers (state, list, kill, ps, exec) do not wait for create, start or
   * delete: those hold the lock while hooks run, and a hook asking the runtime
   * for its container's state would wait for itself until its timeout.
   * state.json is replaced by rename, so an unlocked read is of one whole
   * version; "does not exist" is still checked below. */
  if (r < 0 && !exclusive && errno == EWOULDBLOCK) {
    if (busy)
      *busy = true;
    return 0;
  }
  if (r < 0)
    return rrt_error_errno(err, "lock container \"%s\"", id);
  return 0;
}

/*
 * The runtime's private data (spare state directories, the seccomp cache) lives beside the
 * root, in DIR/.NAME.private for a root DIR/NAME, not in it: the root is shared with runc and
 * other tools under containerd, which take every directory in it for a container and warn
 * about the rest. The same checks as for the root; one that fails them (another user's, or
 * planted) is not used, and its optimisations are skipped.
 */
char *rrt_state_private_dir(const char *root, bool make)
{
  const char *slash = strrchr(root, '/');
  const char *name = slash ? slash + 1 : root;
  if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
    return NULL;
  cleanup_free char *path = slash ? xasprintf("%.*s/.%s.private", (int)(slash - root), root, name)
                                  : xasprintf(".%s.private", name);
  if (make && mkdir(path, 0700) < 0 && errno != EEXIST)
    return NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_trust_dir(path, "private directory", &e) < 0) {
    if (e.errnum != ENOENT)
      rrt_debug("%s: not used", rrt_error_msg(&e));
    rrt_error_clear(&e);
    return NULL;
  }
  return steal_ptr(&path);
}

/*
 * Spare state directories: up to SPARES emptied ones kept in the private directory by delete
 * and taken back by create, with a rename each way. A directory made and removed per container
 * costs a block allocated and freed every time; on a filesystem mounted with online discard
 * (this machine's ext4) the removal waits for the disk, a tenth to a third of a millisecond of
 * every `run`. The private directory is the caller's, mode 0700, so nobody else can put
 * anything there; another filesystem than the root's (EXDEV) means no spares.
 */
#define SPARES 4

static int remove_tree_at(int parent, const char *name, bool park, const char *root,
                          struct rrt_error *err);

static bool park_dir(int rootfd, const char *name, const char *root)
{
  cleanup_free char *priv = rrt_state_private_dir(root, true);
  if (!priv)
    return false;
  for (int k = 0; k < SPARES; k++) {
    cleanup_free char *spare = xasprintf("%s/spare-%d", priv, k);
    if (renameat2(rootfd, name, AT_FDCWD, spare, RENAME_NOREPLACE) == 0)
      return true;
    if (errno != EEXIST)
      return false;
  }
  return false;
}

/* A spare renamed to id: 0; none left: 1; id exists: -1 with errno EEXIST. */
static int take_spare(int rootfd, const char *id, const char *root)
{
  cleanup_free char *priv = rrt_state_private_dir(root, false);
  if (!priv)
    return 1;
  for (int k = 0; k < SPARES; k++) {
    cleanup_free char *spare = xasprintf("%s/spare-%d", priv, k);
    if (renameat2(AT_FDCWD, spare, rootfd, id, RENAME_NOREPLACE) == 0)
      return 0;
    if (errno == EEXIST)
      return -1;
  }
  return 1;
}

/* Nothing in it but "." and "..": a spare that is not empty is not used. */
static bool dir_is_empty(int fd)
{
  int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  DIR *d = dup < 0 ? NULL : fdopendir(dup);
  if (!d) {
    if (dup >= 0)
      close(dup);
    return false;
  }
  struct dirent *de;
  bool empty = true;
  while (empty && (de = readdir(d)))
    empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
  closedir(d);
  return empty;
}

int rrt_state_create_dir(const char *root, const char *id, int *dirfd, struct rrt_error *err)
{
  cleanup_close int rootfd = open(root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (rootfd < 0)
    return rrt_error_errno(err, "open state root %s", root);
  int spare = take_spare(rootfd, id, root);
  if (spare < 0)
    return rrt_error_msgf(err, EEXIST, "container \"%s\" already exists", id);
  if (spare > 0 && mkdirat(rootfd, id, 0700) < 0) {
    if (errno == EEXIST)
      return rrt_error_msgf(err, EEXIST, "container \"%s\" already exists", id);
    return rrt_error_errno(err, "mkdir %s/%s", root, id);
  }
  cleanup_close int fd = openat(rootfd, id, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return rrt_error_errno(err, "open %s/%s", root, id);
  if (spare == 0 && !dir_is_empty(fd)) {
    /* Not what delete leaves: out of the way, and a new one. */
    close(steal_fd(&fd));
    if (remove_tree_at(rootfd, id, false, root, err) < 0 || mkdirat(rootfd, id, 0700) < 0)
      return rrt_error_errno(err, "mkdir %s/%s", root, id);
    fd = openat(rootfd, id, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
      return rrt_error_errno(err, "open %s/%s", root, id);
  }
  if (lock_dir(fd, true, id, NULL, err) < 0)
    return -1;
  *dirfd = steal_fd(&fd);
  return 0;
}

/* ROOT/ID opened and locked (see lock_dir; *busy: a shared lock was not to be had, another
 * runtime holds it exclusively), and checked: a real directory of the caller's. */
static int open_entry(const char *root, const char *id, bool exclusive, int *dirfd, bool *busy,
                      struct rrt_error *err)
{
  if (rrt_state_validate_id(id, err) < 0)
    return -1;
  cleanup_free char *path = xasprintf("%s/%s", root, id);
  cleanup_close int fd = open(path, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT)
      return rrt_error_msgf(err, ENOENT, "container \"%s\" does not exist", id);
    struct stat lst;
    if (errno == ELOOP || errno == ENOTDIR)
      return rrt_error_msgf(
          err, EPERM, "%s is %s, not a container directory: refusing it; remove it (rm %s)", path,
          lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) ? "a symbolic link" : "not a directory",
          path);
    return rrt_error_errno(err, "open %s", path);
  }
  struct stat st;
  if (fstat(fd, &st) < 0)
    return rrt_error_errno(err, "stat %s", path);
  if (rrt_trust_stat(&st, S_IFDIR, path, err) < 0)
    return -1;
  if (lock_dir(fd, exclusive, id, busy, err) < 0)
    return -1;
  /* Deleted (or parked as a spare) while we waited for the lock. */
  struct stat now;
  if (fstat(fd, &st) < 0 || st.st_nlink == 0 || stat(path, &now) < 0 || now.st_ino != st.st_ino ||
      now.st_dev != st.st_dev)
    return rrt_error_msgf(err, ENOENT, "container \"%s\" does not exist", id);
  *dirfd = steal_fd(&fd);
  return 0;
}

int rrt_state_open(const char *root, const char *id, bool exclusive, int *dirfd,
                   struct rrt_error *err)
{
  return open_entry(root, id, exclusive, dirfd, NULL, err);
}

int rrt_state_read_file(int dirfd, const char *name, char **out, size_t *len, struct rrt_error *err)
{
  cleanup_close int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 && errno == ELOOP)
    return rrt_error_msgf(err, EPERM, "%s is a symbolic link: refusing it", name);
  if (fd < 0)
    return rrt_error_errno(err, "%s", name);
  struct stat st;
  if (fstat(fd, &st) < 0)
    return rrt_error_errno(err, "%s", name);
  if (rrt_trust_stat(&st, S_IFREG, name, err) < 0)
    return -1;
  if (rrt_read_fd(fd, out, len, err) < 0)
    return rrt_error_wrap(err, "%s", name);
  return 0;
}

/*
 * The first record of a container, made as soon as its directory exists, before state.json:
 * a symlink "init" whose target is init's "PID STARTTIME" (atomic, and on ext4 kept in the
 * inode: no data block to discard at delete). Whatever instant create dies at, delete --force
 * finds init through it, as it does when state.json is corrupt. A cgroup gets one too.
 */
int rrt_state_record_init(int dirfd, pid_t pid, unsigned long long start, struct rrt_error *err)
{
  char target[64];
  snprintf(target, sizeof(target), "%d %llu", pid, start);
  if (symlinkat(target, dirfd, "init") < 0 && errno != EEXIST)
    return rrt_error_errno(err, "write the init record");
  return 0;
}

/*
 * The container's cgroups, one symlink "cgroups" made once (rrt_cgroup_opts.record, before the
 * first directory is made): its target is the JSON state.json has for them (v1 directories, the
 * systemd scope) with the cgroup2 directory as "v2". Before, a record per directory was replaced
 * by rename as each was made: on ext4 under load those renames were most of a create's time.
 */
int rrt_state_record_cgroup(int dirfd, const struct rrt_state *st, struct rrt_error *err)
{
  json_object *o = st->cgroups_json ? json_tokener_parse(st->cgroups_json) : NULL;
  if (!o)
    o = json_object_new_object();
  if (st->cgroup)
    json_object_object_add(o, "v2", json_object_new_string(st->cgroup));
  const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
  int r = 0;
  if (strlen(text) >= PATH_MAX)
    r = rrt_error_msgf(err, ENAMETOOLONG,
                       "linux.cgroupsPath: the container's cgroup directories (%zu bytes) do not "
                       "fit in its cgroup record (%d)",
                       strlen(text), PATH_MAX - 1);
  else if (symlinkat(text, dirfd, "cgroups") < 0)
    r = rrt_error_errno(err, "write the cgroups record");
  json_object_put(o);
  return r;
}

/* A record's target, when it is a symlink of ours. */
static char *read_record(int dirfd, const char *name)
{
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode) ||
      st.st_uid != geteuid())
    return NULL;
  char buf[PATH_MAX];
  ssize_t n = readlinkat(dirfd, name, buf, sizeof(buf) - 1);
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  return xstrdup(buf);
}

void rrt_state_remove_pending_cgroup(int dirfd)
{
  /* Recorded before its mkdir, and superseded before anything went into it: if it exists it is
   * empty, or it is not the container's, and rmdir leaves a cgroup with processes alone. */
  cleanup_free char *dir = read_record(dirfd, "cgroup-new");
  struct statfs sf;
  if (dir && dir[0] == '/' && statfs(dir, &sf) == 0 &&
      (sf.f_type == CGROUP2_SUPER_MAGIC || sf.f_type == CGROUP_SUPER_MAGIC) && rmdir(dir) == 0)
    rrt_debug("delete: removed %s, which a killed create had just made", dir);
}

void rrt_state_from_records(int dirfd, const char *id, struct rrt_state *st)
{
  rrt_state_free(st);
  st->id = xstrdup(id);
  st->owner = geteuid();
  cleanup_free char *init = read_record(dirfd, "init");
  int pid = 0;
  unsigned long long start = 0;
  if (init && sscanf(init, "%d %llu", &pid, &start) == 2 && pid > 0) {
    st->pid = pid;
    st->pid_start = start;
  }
  char *cgs = read_record(dirfd, "cgroups");
  if (cgs && cgs[0] == '{') {
    json_object *o = json_tokener_parse(cgs), *v2 = NULL;
    if (o && json_object_object_get_ex(o, "v2", &v2) && json_object_is_type(v2, json_type_string) &&
        json_object_get_string(v2)[0] == '/')
      st->cgroup = xstrdup(json_object_get_string(v2));
    json_object_put(o);
    st->cgroups_json = steal_ptr(&cgs);
  }
  free(cgs);
  /* A state directory an earlier version made: its v2 directory in a record of its own. */
  char *cg = st->cgroup ? NULL : read_record(dirfd, "cgroup");
  if (cg && cg[0] == '/')
    st->cgroup = steal_ptr(&cg);
  free(cg);
}

int rrt_state_inspect(const char *root, const char *id, struct rrt_state *st, const char **status,
                      char **why, struct rrt_error *err)
{
  memset(st, 0, sizeof(*st));
  *why = NULL;
  bool busy = false;
  cleanup_close int fd = -1;
  if (open_entry(root, id, false, &fd, &busy, err) < 0)
    return -1;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_state_read(fd, st, &e) == 0) {
    *status = rrt_state_status(st);
    return 0;
  }
  rrt_state_from_records(fd, id, st);
  bool missing = e.errnum == ENODATA;
  /* No state.json while create holds the lock: it is still being made. */
  *status = missing && busy ? "creating" : "broken";
  *why = steal_ptr(&e.msg);
  rrt_error_clear(&e);
  return 0;
}

/* park: the emptied top directory may be kept as a spare (see park_dir) instead of removed. */
static int remove_tree_at(int parent, const char *name, bool park, const char *root,
                          struct rrt_error *err)
{
  cleanup_close int fd = openat(parent, name, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOTDIR || errno == ELOOP) {
      if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
        return rrt_error_errno(err, "unlink %s", name);
      return 0;
    }
    if (errno == ENOENT)
      return 0;
    return rrt_error_errno(err, "open %s", name);
  }
  DIR *d = fdopendir(fd);
  if (!d)
    return rrt_error_errno(err, "opendir %s", name);
  fd = -1; /* owned by d now */
  struct dirent *de;
  int ret = 0;
  while ((de = readdir(d))) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    /* A file (state.json, the start socket...) needs no look inside. */
    if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN && unlinkat(dirfd(d), de->d_name, 0) == 0)
      continue;
    if (remove_tree_at(dirfd(d), de->d_name, false, NULL, err) < 0) {
      ret = -1;
      break;
    }
  }
  closedir(d);
  if (ret < 0)
    return ret;
  if (park && park_dir(parent, name, root))
    return 0;
  if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return rrt_error_errno(err, "rmdir %s", name);
  return 0;
}

int rrt_state_remove(const char *root, const char *id, struct rrt_error *err)
{
  cleanup_close int rootfd = open(root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (rootfd < 0)
    return rrt_error_errno(err, "open state root %s", root);
  if (remove_tree_at(rootfd, id, true, root, err) < 0)
    return rrt_error_wrap(err, "remove state of \"%s\"", id);
  return 0;
}

static void add_str(json_object *o, const char *k, const char *v)
{
  if (v)
    json_object_object_add(o, k, json_object_new_string(v));
}

int rrt_state_write(int dirfd, const struct rrt_state *st, struct rrt_error *err)
{
  json_object *o = json_object_new_object();
  add_str(o, "id", st->id);
  add_str(o, "bundle", st->bundle);
  add_str(o, "rootfs", st->rootfs);
  json_object_object_add(o, "pid", json_object_new_int64(st->pid));
  json_object_object_add(o, "pidStart", json_object_new_uint64(st->pid_start));
  add_str(o, "initComm", st->init_comm);
  add_str(o, "created", st->created);
  json_object_object_add(o, "owner", json_object_new_int64(st->owner));
  json_object_object_add(o, "netHelper", json_object_new_int64(st->net_helper));
  json_object_object_add(o, "netHelperStart", json_object_new_uint64(st->net_helper_start));
  if (st->n_fuse_helpers > 0) {
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < st->n_fuse_helpers; i++) {
      json_object *h = json_object_new_object();
      json_object_object_add(h, "pid", json_object_new_int64(st->fuse_helper[i]));
      json_object_object_add(h, "start", json_object_new_uint64(st->fuse_helper_start[i]));
      json_object_array_add(a, h);
    }
    json_object_object_add(o, "fuseHelpers", a);
  }
  add_str(o, "cgroup", st->cgroup);
  if (st->cgroups_json) {
    json_object *c = json_tokener_parse(st->cgroups_json);
    if (c)
      json_object_object_add(o, "cgroups", c);
  }
  if (st->annotations_json) {
    json_object *a = json_tokener_parse(st->annotations_json);
    if (a)
      json_object_object_add(o, "annotations", a);
  }
  const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
  int ret = 0;
  /* Atomic: readers see the old or the new file, never half of one. */
  cleanup_close int fd =
      openat(dirfd, "state.json.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    ret = rrt_error_errno(err, "write state.json.tmp");
  else if (rrt_write_all(fd, s, strlen(s)) < 0)
    ret = rrt_error_errno(err, "write state.json.tmp");
  else if (renameat(dirfd, "state.json.tmp", dirfd, "state.json") < 0)
    ret = rrt_error_errno(err, "rename state.json.tmp to state.json");
  /* Out of space (or anything else): state.json stays as it was, and no half file beside it. */
  if (ret < 0 && fd >= 0)
    unlinkat(dirfd, "state.json.tmp", 0);
  json_object_put(o);
  return ret;
}

/*
 * Not a second state.json: the start socket, which init closed at its execve and nothing
 * connects to again, renamed to "started". A rename needs no new inode nor data block, so a
 * start on a full disk is marked as surely as anywhere (an empty file made here needed an
 * inode: with none free, start failed although the program ran). A directory made by an older
 * version without the socket gets an empty file, created atomically: it never owns a data block,
 * and on a filesystem mounted with -o discard, as here, deleting blocks waits for the disk.
 */
int rrt_state_mark_started(int dirfd, struct rrt_error *err)
{
  if (renameat(dirfd, "start.sock", dirfd, "started") == 0)
    return 0;
  int fd = openat(dirfd, "started", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno != EEXIST)
    return rrt_error_errno(err, "write the started mark");
  if (fd >= 0)
    close(fd);
  return 0;
}

static char *get_str(json_object *o, const char *k)
{
  json_object *v;
  if (json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string))
    return xstrdup(json_object_get_string(v));
  return NULL;
}

static int64_t get_int(json_object *o, const char *k)
{
  json_object *v;
  if (json_object_object_get_ex(o, k, &v))
    return json_object_get_int64(v);
  return 0;
}

int rrt_state_read(int dirfd, struct rrt_state *st, struct rrt_error *err)
{
  cleanup_free char *buf = NULL;
  memset(st, 0, sizeof(*st));
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_state_read_file(dirfd, "state.json", &buf, NULL, &e) < 0) {
    if (e.errnum == ENOENT) {
      rrt_error_clear(&e);
      return rrt_error_msgf(err, ENODATA,
                            "state.json is missing (create did not finish): `delete --force` "
                            "removes what is left");
    }
    if (err)
      rrt_error_move(err, &e);
    rrt_error_clear(&e);
    return -1;
  }
  json_object *o = json_tokener_parse(buf);
  if (!o || !json_object_is_type(o, json_type_object)) {
    json_object_put(o);
    return rrt_error_msgf(err, EUCLEAN,
                          "state.json is corrupt (%zu bytes, not a JSON object): `delete "
                          "--force` removes the container",
                          strlen(buf));
  }
  st->id = get_str(o, "id");
  st->bundle = get_str(o, "bundle");
  st->rootfs = get_str(o, "rootfs");
  st->pid = (pid_t)get_int(o, "pid");
  json_object *v;
  if (json_object_object_get_ex(o, "pidStart", &v))
    st->pid_start = json_object_get_uint64(v);
  st->init_comm = get_str(o, "initComm");
  st->started = faccessat(dirfd, "started", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
  st->created = get_str(o, "created");
  st->owner = (uid_t)get_int(o, "owner");
  st->net_helper = (pid_t)get_int(o, "netHelper");
  if (json_object_object_get_ex(o, "netHelperStart", &v))
    st->net_helper_start = json_object_get_uint64(v);
  if (json_object_object_get_ex(o, "fuseHelpers", &v) && json_object_is_type(v, json_type_array))
    for (size_t i = 0; i < json_object_array_length(v) && i < RRT_MAX_FUSE_HELPERS; i++) {
      json_object *h = json_object_array_get_idx(v, i), *f;
      st->fuse_helper[i] = (pid_t)get_int(h, "pid");
      if (json_object_object_get_ex(h, "start", &f))
        st->fuse_helper_start[i] = json_object_get_uint64(f);
      st->n_fuse_helpers = i + 1;
    }
  st->cgroup = get_str(o, "cgroup");
  if (json_object_object_get_ex(o, "cgroups", &v))
    st->cgroups_json = xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
  if (json_object_object_get_ex(o, "annotations", &v))
    st->annotations_json = xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
  if (!st->id || st->pid <= 0) {
    rrt_state_free(st);
    return rrt_error_msgf(err, EUCLEAN,
                          "state.json is corrupt (no id or pid): `delete --force` removes the "
                          "container");
  }
  return 0;
}

void rrt_state_free(struct rrt_state *st)
{
  free(st->id);
  free(st->bundle);
  free(st->rootfs);
  free(st->created);
  free(st->cgroup);
  free(st->cgroups_json);
  free(st->annotations_json);
  free(st->init_comm);
  memset(st, 0, sizeof(*st));
}

unsigned long long rrt_proc_stat(pid_t pid, char *comm, size_t comm_len)
{
  char path[64];
  char buf[1024];
  if (comm && comm_len)
    comm[0] = '\0';
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: fields start after the last ')'. */
  char *open_paren = strchr(buf, '(');
  char *p = strrchr(buf, ')');
  if (!open_paren || !p || p < open_paren || p[1] != ' ')
    return 0;
  if (comm && comm_len)
    snprintf(comm, comm_len, "%.*s", (int)(p - open_paren - 1), open_paren + 1);
  p += 2;
  char state = *p;
  if (state == 'Z' || state == 'X')
    return 0;
  /* p is field 3; starttime is field 22. */
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p)
      return 0;
    p++;
  }
  return strtoull(p, NULL, 10);
}

unsigned long long rrt_proc_start_time(pid_t pid)
{
  return rrt_proc_stat(pid, NULL, 0);
}

bool rrt_proc_same(pid_t pid, unsigned long long start)
{
  if (pid <= 0)
    return false;
  unsigned long long now = rrt_proc_start_time(pid);
  return now != 0 && now == start;
}

static bool cgroup_frozen(const struct rrt_state *st)
{
  if (!st->cgroup && !st->cgroups_json)
    return false;
  struct rrt_cgroup cg;
  rrt_cgroup_load(st, &cg);
  bool r = rrt_cgroup_frozen(&cg);
  rrt_cgroup_free(&cg);
  return r;
}

/*
 * Running once init has exec'd the program: start marks it (the "started" file), but a start
 * killed between the execve and that mark leaves no mark, so the exec is also read off init
 * itself: until it, init is a fork of the runtime with the runtime's command name (recorded at
 * create); execve gives it the program's.
 */
const char *rrt_state_status(const struct rrt_state *st)
{
  if (st->pid <= 0)
    return "stopped";
  char comm[64];
  unsigned long long now = rrt_proc_stat(st->pid, comm, sizeof(comm));
  if (now == 0 || now != st->pid_start)
    return "stopped";
  if (cgroup_frozen(st))
    return "paused";
  bool exec_done = st->init_comm && *st->init_comm && strcmp(comm, st->init_comm) != 0;
  return st->started || exec_done ? "running" : "created";
}

char *rrt_state_oci_json(const struct rrt_state *st, const char *status, bool pretty)
{
  const char *s = status ? status : rrt_state_status(st);
  json_object *o = json_object_new_object();
  json_object_object_add(o, "ociVersion", json_object_new_string(RRT_OCI_VERSION));
  add_str(o, "id", st->id);
  json_object_object_add(o, "status", json_object_new_string(s));
  /* runtime.md: pid is required while created or running. */
  if (strcmp(s, "stopped") != 0)
    json_object_object_add(o, "pid", json_object_new_int64(st->pid));
  else
    json_object_object_add(o, "pid", json_object_new_int64(0));
  add_str(o, "bundle", st->bundle);
  add_str(o, "rootfs", st->rootfs);
  add_str(o, "created", st->created);
  const char *owner = rrt_user_name(st->owner);
  json_object_object_add(o, "owner", json_object_new_string(owner ? owner : ""));
  json_object *a = st->annotations_json ? json_tokener_parse(st->annotations_json) : NULL;
  json_object_object_add(o, "annotations", a ? a : json_object_new_object());
  char *r = xstrdup(json_object_to_json_string_ext(
      o, pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE
                : JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(o);
  return r;
}
