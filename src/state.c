/* state.c: state directory, locking, the state file and status. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/state.h"
#include "rootlessrt/util.h"

static int ensure_private_dir(const char *path, struct rrt_error *err)
{
  if (mkdir(path, 0700) < 0 && errno != EEXIST)
    return rrt_error_errno(err, "mkdir %s", path);
  struct stat st;
  if (lstat(path, &st) < 0)
    return rrt_error_errno(err, "stat %s", path);
  if (!S_ISDIR(st.st_mode))
    return rrt_error_set(err, ENOTDIR, "state root %s", path);
  if (st.st_uid != geteuid())
    return rrt_error_msgf(err, EPERM, "state root %s is owned by uid %u, not by you (uid %u)", path,
                          st.st_uid, geteuid());
  return 0;
}

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
    else
      path = xasprintf("/tmp/rootlessrt-%u", geteuid());
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
    if (ensure_private_dir(path, err) < 0)
      return -1;
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

static int lock_dir(int fd, bool exclusive, const char *id, struct rrt_error *err)
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
  if (r < 0 && !exclusive && errno == EWOULDBLOCK)
    return 0;
  if (r < 0)
    return rrt_error_errno(err, "lock container \"%s\"", id);
  return 0;
}

/*
 * Spare state directories: up to SPARES emptied ones kept in ROOT/.spare/ by delete and taken
 * back by create, with a rename each way. A directory made and removed per container costs a
 * block allocated and freed every time; on a filesystem mounted with online discard (this
 * machine's ext4) the removal waits for the disk, a tenth to a third of a millisecond of every
 * `run`. The root is the caller's, mode 0700, so nobody else can put anything there.
 */
#define SPARES 4
#define SPARE_DIR ".spare"

static int remove_tree_at(int parent, const char *name, bool park, struct rrt_error *err);

static bool park_dir(int rootfd, const char *name)
{
  if (mkdirat(rootfd, SPARE_DIR, 0700) < 0 && errno != EEXIST)
    return false;
  for (int k = 0; k < SPARES; k++) {
    char spare[32];
    snprintf(spare, sizeof(spare), SPARE_DIR "/%d", k);
    if (renameat2(rootfd, name, rootfd, spare, RENAME_NOREPLACE) == 0)
      return true;
    if (errno != EEXIST)
      return false;
  }
  return false;
}

/* A spare renamed to id: 0; none left: 1; id exists: -1 with errno EEXIST. */
static int take_spare(int rootfd, const char *id)
{
  for (int k = 0; k < SPARES; k++) {
    char spare[32];
    snprintf(spare, sizeof(spare), SPARE_DIR "/%d", k);
    if (renameat2(rootfd, spare, rootfd, id, RENAME_NOREPLACE) == 0)
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
  int spare = take_spare(rootfd, id);
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
    if (remove_tree_at(rootfd, id, false, err) < 0 || mkdirat(rootfd, id, 0700) < 0)
      return rrt_error_errno(err, "mkdir %s/%s", root, id);
    fd = openat(rootfd, id, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
      return rrt_error_errno(err, "open %s/%s", root, id);
  }
  if (lock_dir(fd, true, id, err) < 0)
    return -1;
  *dirfd = steal_fd(&fd);
  return 0;
}

int rrt_state_open(const char *root, const char *id, bool exclusive, int *dirfd,
                   struct rrt_error *err)
{
  if (rrt_state_validate_id(id, err) < 0)
    return -1;
  cleanup_free char *path = xasprintf("%s/%s", root, id);
  cleanup_close int fd = open(path, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT)
      return rrt_error_msgf(err, ENOENT, "container \"%s\" does not exist", id);
    return rrt_error_errno(err, "open %s", path);
  }
  if (lock_dir(fd, exclusive, id, err) < 0)
    return -1;
  /* Deleted while we waited for the lock. */
  struct stat st;
  if (fstat(fd, &st) < 0 || st.st_nlink == 0)
    return rrt_error_msgf(err, ENOENT, "container \"%s\" does not exist", id);
  if (faccessat(fd, "state.json", F_OK, 0) < 0 && errno == ENOENT)
    return rrt_error_msgf(err, ENOENT, "container \"%s\" does not exist", id);
  *dirfd = steal_fd(&fd);
  return 0;
}

/* park: the emptied top directory may be kept as a spare (see park_dir) instead of removed. */
static int remove_tree_at(int parent, const char *name, bool park, struct rrt_error *err)
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
    if (remove_tree_at(dirfd(d), de->d_name, false, err) < 0) {
      ret = -1;
      break;
    }
  }
  closedir(d);
  if (ret < 0)
    return ret;
  if (park && park_dir(parent, name))
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
  if (remove_tree_at(rootfd, id, true, err) < 0)
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
  add_str(o, "created", st->created);
  json_object_object_add(o, "owner", json_object_new_int64(st->owner));
  json_object_object_add(o, "netHelper", json_object_new_int64(st->net_helper));
  json_object_object_add(o, "netHelperStart", json_object_new_uint64(st->net_helper_start));
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
    ret = rrt_error_errno(err, "write state");
  else if (rrt_write_all(fd, s, strlen(s)) < 0)
    ret = rrt_error_errno(err, "write state");
  else if (renameat(dirfd, "state.json.tmp", dirfd, "state.json") < 0)
    ret = rrt_error_errno(err, "rename state");
  json_object_put(o);
  return ret;
}

/*
 * Not a second state.json: an empty file is created atomically, and it never owns a data block.
 * Replacing a file by rename makes ext4 allocate the new one's blocks at once (auto_da_alloc), and
 * on a filesystem mounted with -o discard, as here, deleting those blocks later waits for a
 * synchronous discard: up to a millisecond of every `run`.
 */
int rrt_state_mark_started(int dirfd, struct rrt_error *err)
{
  int fd = openat(dirfd, "started", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno != EEXIST)
    return rrt_error_errno(err, "write state: started");
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
  if (rrt_read_file_at(dirfd, "state.json", &buf, NULL, err) < 0)
    return -1;
  json_object *o = json_tokener_parse(buf);
  if (!o || !json_object_is_type(o, json_type_object)) {
    json_object_put(o);
    return rrt_error_msgf(err, EINVAL, "state.json: corrupt");
  }
  st->id = get_str(o, "id");
  st->bundle = get_str(o, "bundle");
  st->rootfs = get_str(o, "rootfs");
  st->pid = (pid_t)get_int(o, "pid");
  json_object *v;
  if (json_object_object_get_ex(o, "pidStart", &v))
    st->pid_start = json_object_get_uint64(v);
  st->started = faccessat(dirfd, "started", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
  st->created = get_str(o, "created");
  st->owner = (uid_t)get_int(o, "owner");
  st->net_helper = (pid_t)get_int(o, "netHelper");
  if (json_object_object_get_ex(o, "netHelperStart", &v))
    st->net_helper_start = json_object_get_uint64(v);
  st->cgroup = get_str(o, "cgroup");
  if (json_object_object_get_ex(o, "cgroups", &v))
    st->cgroups_json = xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
  if (json_object_object_get_ex(o, "annotations", &v))
    st->annotations_json = xstrdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
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
  memset(st, 0, sizeof(*st));
}

unsigned long long rrt_proc_start_time(pid_t pid)
{
  char path[64];
  char buf[1024];
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
  char *p = strrchr(buf, ')');
  if (!p || p[1] != ' ')
    return 0;
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

const char *rrt_state_status(const struct rrt_state *st)
{
  if (!rrt_proc_same(st->pid, st->pid_start))
    return "stopped";
  if (cgroup_frozen(st))
    return "paused";
  return st->started ? "running" : "created";
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
