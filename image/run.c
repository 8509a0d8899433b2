/* run.c: the desktop `run`: an image or a root directory on a per-container overlay, through
 * the ordinary create/start/delete path with a generated config.json. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "names.h"
#include "rootlessrt/log.h"
#include "rootlessrt/state.h"
#include "rootlessrt/trust.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

#define RUN_DIR ".run" /* ROOT/.run/ID: the generated bundle */

/* --debug shows where the desktop run spends its time (since the process started). */
static void phase(const char *what)
{
  struct timespec now;
  clock_gettime(CLOCK_BOOTTIME, &now);
  unsigned long long start = rrt_proc_start_time(getpid());
  double t = (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6 -
             (double)start * 1e3 / (double)sysconf(_SC_CLK_TCK);
  rrt_debug("desktop run: %s at ~%.1f ms", what, t);
}

/* Why the last rrt_run_is_desktop chose the desktop form: its first operand named nothing a
 * bundle could run (said in the error, with both readings, when the image is not found either). */
static const char *desktop_no_bundle;

static bool is_image_ref(const char *a)
{
  return strncmp(a, "oci:", 4) == 0 || strncmp(a, "oci-archive:", 12) == 0 ||
         strncmp(a, "docker://", 9) == 0 || strncmp(a, "docker-archive:", 15) == 0 ||
         strchr(a, '/') != NULL || rrt_image_name_like(a);
}

/* Flags of either form that take a value as the next argument. */
static bool takes_value(const char *f)
{
  static const char *const with_value[] = {"-b",
                                           "--bundle",
                                           "--pid-file",
                                           "--console-socket",
                                           "--preserve-fds",
                                           "--network",
                                           "-p",
                                           "--publish",
                                           "--network-opt",
                                           "--mtu",
                                           "--cidr",
                                           "--ports-via",
                                           "--criu",
                                           "--name",
                                           "-e",
                                           "--env",
                                           "--env-file",
                                           "-w",
                                           "--workdir",
                                           "-u",
                                           "--user",
                                           "-v",
                                           "--volume",
                                           "--tmpfs",
                                           "--hostname",
                                           "-h",
                                           "--entrypoint",
                                           "--cap-add",
                                           "--cap-drop",
                                           "--security-opt",
                                           "--userns",
                                           "--overlay",
                                           "--storage",
                                           "--platform",
                                           "--authfile",
                                           "--pull",
                                           NULL};
  for (size_t i = 0; with_value[i]; i++)
    if (strcmp(f, with_value[i]) == 0)
      return true;
  /* A cluster of short flags ending with one that takes a value: -it -e, -de. */
  if (f[0] == '-' && f[1] != '-' && f[1] && f[2]) {
    char last = f[strlen(f) - 1];
    return strchr("bpewuv", last) != NULL && strspn(f + 1, "ditb") == strlen(f + 1) - 1;
  }
  return false;
}

/* A flag only the desktop form has (podman's): --rm, -i, -t, -e, -v, --name, -w, -u, --pull...
 * (-d, -p, --network and -h are flags of both forms). */
static bool desktop_flag(const char *a)
{
  static const char *const only[] = {"--rm",
                                     "--interactive",
                                     "--tty",
                                     "--name",
                                     "--env",
                                     "--env-file",
                                     "--workdir",
                                     "--user",
                                     "--volume",
                                     "--tmpfs",
                                     "--hostname",
                                     "--read-only",
                                     "--read-only-tmpfs",
                                     "--entrypoint",
                                     "--cap-add",
                                     "--cap-drop",
                                     "--security-opt",
                                     "--userns",
                                     "--overlay",
                                     "--storage",
                                     "--print-config",
                                     "--platform",
                                     "--authfile",
                                     "--tls-verify",
                                     "--pull",
                                     NULL};
  size_t n = strcspn(a, "=");
  for (size_t i = 0; only[i]; i++)
    if (strlen(only[i]) == n && strncmp(a, only[i], n) == 0)
      return true;
  /* Short flags, alone or clustered (-it, -dit, -eK=V): i, t, e, v, w, u; a cluster is read
   * up to a flag that takes a value (the rest is that value). */
  if (a[0] != '-' || a[1] == '-')
    return false;
  for (const char *c = a + 1; *c; c++) {
    if (strchr("itevwu", *c))
      return true;
    if (*c != 'd')
      return false;
  }
  return false;
}

/* The runc form's bundle: -b DIR, else the current directory; whether -b was given. */
static bool bundle_has_config(const char *bundle)
{
  cleanup_free char *cfg = xasprintf("%s/config.json", bundle ? bundle : ".");
  return access(cfg, F_OK) == 0;
}

bool rrt_run_is_desktop(int argc, char **argv)
{
  const char *bundle = NULL;
  bool has_b = false;
  desktop_no_bundle = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      a = i + 1 < argc ? argv[i + 1] : NULL;
      if (!a)
        return false;
    } else if (a[0] == '-' && a[1]) {
      if (desktop_flag(a))
        return true;
      bool value = !strchr(a, '=') && takes_value(a);
      if (strcmp(a, "-b") == 0 || strcmp(a, "--bundle") == 0 || strncmp(a, "--bundle=", 9) == 0)
        has_b = true, bundle = strchr(a, '=') ? strchr(a, '=') + 1
                               : i + 1 < argc ? argv[i + 1]
                                              : NULL;
      if (value)
        i++;
      continue;
    }
    if (is_image_ref(a))
      return true;
    /* A plain word: the runc form when there is a bundle to run (or -b says where it is). */
    if (has_b || bundle_has_config(bundle))
      return false;
    desktop_no_bundle = a;
    return true;
  }
  return false;
}

void rrt_run_note_other_reading(int argc, char **argv, const char *storage, struct rrt_error *err)
{
  const char *word = NULL;
  for (int i = 1; i < argc && !word; i++) {
    const char *a = argv[i];
    if (a[0] == '-' && a[1]) {
      if (!strchr(a, '=') && takes_value(a))
        i++;
      continue;
    }
    word = a;
  }
  bool qualified;
  if (!word || !rrt_image_name_parse(word, &qualified))
    return;
  cleanup_free char *store = rrt_store_path(storage);
  cleanup_free char *manifest = NULL, *resolved = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_names_lookup(store, word, false, &manifest, &resolved, &e) == 0) {
    cleanup_free char *shown = rrt_names_shown(resolved);
    cleanup_free char *word_shown = rrt_names_shown(word);
    cleanup_free char *cwd = getcwd(NULL, 0);
    cleanup_free char *m = xstrdup(rrt_error_msg(err));
    rrt_error_msgf(err, err->errnum,
                   "%s (read as the runc form: a container \"%s\" of the bundle in %s, which has a "
                   "config.json; \"%s\" is also the image %s in the store: `rootlessrt run --rm "
                   "%s ...` runs that, as any desktop flag does)",
                   m, word_shown, cwd ? cwd : ".", word_shown, shown, word_shown);
  }
  rrt_error_clear(&e);
}

static char *random_id(void)
{
  unsigned char b[8];
  if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
    for (size_t i = 0; i < sizeof(b); i++)
      b[i] = (unsigned char)(rand() ^ getpid());
  char *s = xzalloc(17);
  for (size_t i = 0; i < sizeof(b); i++)
    snprintf(s + 2 * i, 3, "%02x", b[i]);
  return s;
}

static int mkdir_p(const char *path, mode_t mode, struct rrt_error *err)
{
  cleanup_free char *p = xstrdup(path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(p, 0755) < 0 && errno != EEXIST)
      return rrt_error_errno(err, "mkdir %s", p);
    *s = '/';
  }
  if (mkdir(p, mode) < 0 && errno != EEXIST)
    return rrt_error_errno(err, "mkdir %s", p);
  return 0;
}

/*
 * Spare upper and work directories: on a discard-mounted disk each rmdir costs milliseconds, so
 * the directories of a --rm container that wrote nothing are kept (up to SPARES of them, in
 * STORE/containers/.spare/N) and renamed into place for the next run.
 */
#define SPARES 4

static bool take_spare(const char *store, const char *ctr)
{
  for (int i = 0; i < SPARES; i++) {
    cleanup_free char *p = xasprintf("%s/containers/.spare/%d", store, i);
    if (rename(p, ctr) == 0)
      return true;
  }
  return false;
}

static bool empty_dir(const char *path, const char *except)
{
  DIR *d = opendir(path);
  if (!d)
    return false;
  struct dirent *e;
  bool empty = true;
  while (empty && (e = readdir(d)))
    empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            (except && strcmp(e->d_name, except) == 0);
  closedir(d);
  return empty;
}

/* The container dir as a spare when nothing was written (an empty upper directory). */
static bool put_spare(const char *ctr)
{
  cleanup_free char *upper = xasprintf("%s/upper", ctr);
  cleanup_free char *work = xasprintf("%s/work", ctr);
  /* work/work is overlayfs' scratch space (mode 0), emptied by every mount. */
  if (!empty_dir(upper, NULL) || !empty_dir(work, "work"))
    return false;
  const char *slash = strrchr(ctr, '/');
  cleanup_free char *parent = xstrndup(ctr, slash ? (size_t)(slash - ctr) : 0);
  cleanup_free char *dir = xasprintf("%s/.spare", parent);
  if (mkdir(dir, 0700) < 0 && errno != EEXIST)
    return false;
  for (int i = 0; i < SPARES; i++) {
    cleanup_free char *p = xasprintf("%s/%d", dir, i);
    if (access(p, F_OK) < 0 && rename(ctr, p) == 0)
      return true;
  }
  return false;
}

/* What one run made, for the cleanup. */
struct run_dirs {
  char *bundle; /* ROOT/.run/ID */
  char *ctr;    /* STORE/containers/ID: upper and work */
  bool made_ctr;
  int lock; /* BUNDLE/lock, locked (F_SETLK) while this run may need the bundle; -1 when none */
};

static void run_dirs_remove(struct run_dirs *d, bool ctr)
{
  struct rrt_error e = RRT_ERROR_INIT;
  if (ctr && d->made_ctr && !put_spare(d->ctr) && rrt_remove_tree_userns(d->ctr, &e) < 0)
    rrt_warn("remove %s: %s", d->ctr, rrt_error_msg(&e));
  rrt_error_clear(&e);
  if (d->bundle && rrt_remove_tree_userns(d->bundle, &e) < 0)
    rrt_warn("remove %s: %s", d->bundle, rrt_error_msg(&e));
  rrt_error_clear(&e);
}

static void run_dirs_free(struct run_dirs *d)
{
  free(d->bundle);
  free(d->ctr);
  if (d->lock >= 0)
    close(d->lock);
  d->lock = -1;
}

/* STORE/containers/ID/{upper,work}: fresh, or an error when a kept one is in the way. The
 * upper directory takes the mode of the image's root (it is the container's /). */
static int make_container_dirs(const char *store, const struct rrt_image *img, struct run_dirs *d,
                               struct rrt_error *err)
{
  const char *id = strrchr(d->ctr, '/') + 1;
  cleanup_free char *parent = xasprintf("%s/containers", store);
  if (mkdir_p(parent, 0700, err) < 0)
    return -1;
  struct stat st;
  mode_t mode = stat(img->lowers[0], &st) == 0 ? (st.st_mode & 07777) : 0755;
  cleanup_free char *upper = xasprintf("%s/upper", d->ctr);
  if (access(d->ctr, F_OK) < 0 && take_spare(store, d->ctr)) {
    d->made_ctr = true;
    return chmod(upper, mode) < 0 ? rrt_error_errno(err, "chmod %s", upper) : 0;
  }
  if (mkdir(d->ctr, 0700) < 0) {
    if (errno == EEXIST)
      return rrt_error_msgf(err, EEXIST,
                            "run: the changes of a container named \"%s\" are kept in %s: remove "
                            "them with `rootlessrt store rm %s`, or choose another --name",
                            id, d->ctr, id);
    return rrt_error_errno(err, "mkdir %s", d->ctr);
  }
  d->made_ctr = true;
  cleanup_free char *work = xasprintf("%s/work", d->ctr);
  if (mkdir(upper, 0700) < 0 || chmod(upper, mode) < 0 || mkdir(work, 0700) < 0)
    return rrt_error_errno(err, "make %s", d->ctr);
  return 0;
}

/* BUNDLE/lock write-locked with F_SETLK: a process-associated lock, which the forked children
 * of this run (init before its execve, the unpack helper) do not inherit, and which goes when
 * this process dies. Returns the fd, or -1 when another live run holds it (or on error). */
static int lock_bundle(const char *bundle, bool create)
{
  cleanup_free char *path = xasprintf("%s/lock", bundle);
  int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  if (fd >= 0 && fcntl(fd, F_SETLK, &fl) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/*
 * ROOT/.run/ID, made whole in ROOT/.run/.new-ID.XXXXXX and renamed into place: a bundle under
 * its name always has its lock, its container-dir and its config. The lock is held until this
 * run ends (or, detached, until its container exists), so sweep_orphans leaves it alone.
 */
static int make_bundle(const char *root, const char *id, const char *config, bool rm,
                       const char *image_id, struct run_dirs *d, struct rrt_error *err)
{
  cleanup_free char *runs = xasprintf("%s/" RUN_DIR, root);
  if (mkdir(runs, 0700) < 0 && errno != EEXIST)
    return rrt_error_errno(err, "mkdir %s", runs);
  cleanup_free char *state = xasprintf("%s/%s", root, id);
  if (access(state, F_OK) == 0)
    return rrt_error_msgf(err, EEXIST, "run: a container \"%s\" exists already", id);
  cleanup_free char *final = xasprintf("%s/%s", runs, id);
  cleanup_free char *tmp = xasprintf("%s/.new-%s.XXXXXX", runs, id);
  if (!mkdtemp(tmp))
    return rrt_error_errno(err, "mkdir %s", tmp);
  d->bundle = xstrdup(tmp);
  d->lock = lock_bundle(d->bundle, true);
  if (d->lock < 0)
    return rrt_error_errno(err, "lock %s", d->bundle);
  cleanup_free char *cfg = xasprintf("%s/config.json", d->bundle);
  cleanup_free char *ctr = xasprintf("%s/container-dir", d->bundle);
  cleanup_free char *body = xasprintf("%s\n", config);
  if (rrt_write_file(cfg, body, strlen(body), O_CREAT | O_EXCL, 0600, err) < 0 ||
      rrt_write_file(ctr, d->ctr, strlen(d->ctr), O_CREAT | O_EXCL, 0600, err) < 0)
    return -1;
  if (rm) {
    cleanup_free char *mark = xasprintf("%s/remove-on-delete", d->bundle);
    if (rrt_write_file(mark, "", 0, O_CREAT | O_EXCL, 0600, err) < 0)
      return -1;
  }
  /* The image it runs, for rmi (its layers are the config's lowerdir, for store rm and prune). */
  if (image_id && *image_id) {
    cleanup_free char *path = xasprintf("%s/image", d->bundle);
    if (rrt_write_file(path, image_id, strlen(image_id), O_CREAT | O_EXCL, 0600, err) < 0)
      return -1;
  }
  /* One under the name already: a live run of the same name, or what a killed one left. */
  int held = lock_bundle(final, false);
  if (held < 0 && (errno == EAGAIN || errno == EACCES))
    return rrt_error_msgf(err, EEXIST, "run: a run of \"%s\" is still at work", id);
  if (access(final, F_OK) == 0)
    rrt_remove_tree_userns(final, NULL);
  if (held >= 0)
    close(held);
  if (rename(d->bundle, final) < 0)
    return rrt_error_errno(err, "rename %s to %s", d->bundle, final);
  free(d->bundle);
  d->bundle = steal_ptr(&final);
  return 0;
}

/* An entry of ROOT/.run a killed run left: ID with no live run and no container, or a
 * .new-ID.XXXXXX whose run is gone (made with the lock already taken, but for an instant). An ID
 * without a lock file is half removed: a bundle gets its name with the lock in it. */
static bool orphan(const char *root, const char *name, const char *bundle, int *lock)
{
  struct stat st;
  bool tmp = name[0] == '.';
  if (tmp &&
      (strncmp(name, ".new-", 5) != 0 || lstat(bundle, &st) < 0 || st.st_mtime > time(NULL) - 60))
    return false;
  *lock = lock_bundle(bundle, false);
  if (*lock < 0 && errno != ENOENT)
    return false; /* a live run holds it */
  cleanup_free char *state = xasprintf("%s/%s", root, name);
  return tmp || access(state, F_OK) < 0;
}

/*
 * What a runtime killed during a desktop run left (kill -9, a crash, the machine off): bundles
 * no live run holds and whose container does not exist. Their --rm changes go with them; a
 * kept container's changes stay for `store rm`.
 */
static void sweep_orphans(const char *root)
{
  cleanup_free char *runs = xasprintf("%s/" RUN_DIR, root);
  DIR *dir = opendir(runs);
  if (!dir)
    return;
  struct dirent *e;
  while ((e = readdir(dir))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    struct run_dirs d = {.bundle = xasprintf("%s/%s", runs, e->d_name), .lock = -1};
    if (orphan(root, e->d_name, d.bundle, &d.lock)) {
      cleanup_free char *ctr_file = xasprintf("%s/container-dir", d.bundle);
      cleanup_free char *mark = xasprintf("%s/remove-on-delete", d.bundle);
      bool rm = access(mark, F_OK) == 0 && rrt_read_file(ctr_file, &d.ctr, NULL, NULL) == 0;
      d.made_ctr = rm;
      rrt_debug("run: removing what a killed run left: %s%s", d.bundle,
                rm ? " and its changes" : "");
      run_dirs_remove(&d, rm);
    }
    run_dirs_free(&d);
  }
  closedir(dir);
}

void rrt_run_sweep(const char *root)
{
  sweep_orphans(root);
}

static int keep_id_plan(struct rrt_run_plan *p, struct rrt_error *err)
{
  struct rrt_subid_range *ranges = NULL;
  size_t n = 0;
  p->keep_uid = getuid();
  p->keep_gid = getgid();
  if (rrt_subid_lookup("/etc/subuid", rrt_user_name(getuid()), getuid(), &ranges, &n, err) < 0)
    return rrt_error_wrap(err, "--userns keep-id");
  if (n == 0 || ranges[0].count <= p->keep_uid || ranges[0].count <= p->keep_gid) {
    free(ranges);
    return rrt_error_msgf(err, EINVAL,
                          "--userns keep-id: needs a subordinate range in /etc/subuid larger "
                          "than your uid %u",
                          (unsigned)getuid());
  }
  p->sub_start = ranges[0].start;
  p->sub_count = ranges[0].count;
  free(ranges);
  return 0;
}

/* Without -i (and no terminal) the container reads /dev/null, as with podman; detached, its
 * output goes to BUNDLE/output. *out_fd keeps the caller's stdout for the id. */
static int setup_stdio(const struct rrt_run_image_opts *o, const char *bundle, int *out_fd,
                       struct rrt_error *err)
{
  if (!o->interactive && !o->tty) {
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0)
      return rrt_error_errno(err, "/dev/null");
    close(null);
  }
  if (!o->detach)
    return 0;
  cleanup_free char *path = xasprintf("%s/output", bundle);
  int log = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0)
    return rrt_error_errno(err, "open %s", path);
  *out_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (*out_fd < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0) {
    close(log);
    return rrt_error_errno(err, "redirect the output to %s", path);
  }
  close(log);
  return 0;
}

static int prepare(const struct rrt_run_image_opts *o, const char *root, const char *store,
                   const char *id, struct rrt_image *img, struct run_dirs *d, char **config,
                   struct rrt_error *err)
{
  if (rrt_image_open(o->ref, store, &o->pull, img, err) < 0) {
    if (desktop_no_bundle && strcmp(desktop_no_bundle, o->ref) == 0) {
      /* Neither reading fits: say both. */
      cleanup_free char *cwd = getcwd(NULL, 0);
      cleanup_free char *m = xstrdup(rrt_error_msg(err));
      cleanup_free char *shown = rrt_names_shown(o->ref);
      rrt_error_msgf(err, err->errnum,
                     "%s (nor is \"%s\" a container to run from a bundle: %s has no config.json)",
                     m, shown, cwd ? cwd : ".");
    }
    return -1;
  }
  struct rrt_run_plan plan = {.id = id, .image = img};
  if (o->keep_id && keep_id_plan(&plan, err) < 0)
    return -1;
  /* The config is made before anything is written, so bad flags leave nothing behind. */
  d->ctr = xasprintf("%s/containers/%s", store, id);
  plan.upper = xasprintf("%s/upper", d->ctr);
  plan.work = xasprintf("%s/work", d->ctr);
  int r = rrt_run_config(o, &plan, config, err);
  free((char *)plan.upper);
  free((char *)plan.work);
  free(steal_ptr(&d->ctr));
  if (r < 0 || o->print_config)
    return r;
  /* The bundle first: from then on a run killed at any instant is found by the next one. */
  d->ctr = xasprintf("%s/containers/%s", store, id);
  if (make_bundle(root, id, *config, o->rm, img->id, d, err) < 0)
    return -1;
  return make_container_dirs(store, img, d, err);
}

/* podman's statuses for a command create could not execute: 127 not found (ENOENT), 126 not
 * executable (EACCES); 1 for any other failure, also one with those errnos that is not about the
 * command (an overlay whose /dev/fuse cannot be opened was "cannot be executed", 126). */
static int exec_failure_status(struct rrt_error *err)
{
  int e = err->errnum;
  if ((e != ENOENT && e != EACCES) || !err->msg || strncmp(err->msg, "exec: \"", 7) != 0)
    return 1;
  rrt_error_wrap(err, e == ENOENT ? "run: the container's command was not found"
                                  : "run: the container's command cannot be executed");
  return e == ENOENT ? 127 : 126;
}

int rrt_image_run(const struct rrt_global *g, const struct rrt_run_image_opts *o, int *status,
                  struct rrt_error *err)
{
  cleanup_free char *id = o->name ? xstrdup(o->name) : random_id();
  if (rrt_state_validate_id(id, err) < 0)
    return rrt_error_wrap(err, "--name");
  if (o->detach && o->tty)
    return rrt_error_msgf(err, EINVAL, "run: -d with -t is not supported (no terminal to attach)");
  cleanup_free char *root = NULL;
  if (rrt_state_root(g->root, true, &root, err) < 0)
    return -1;
  cleanup_free char *store = rrt_store_path(o->storage);
  if (rrt_store_trust(store, true, err) < 0)
    return -1;
  struct rrt_image img = {0};
  struct run_dirs d = {.lock = -1};
  cleanup_free char *config = NULL;
  int ret = -1, out_fd = -1;
  sweep_orphans(root);
  phase("start");
  /* Shared from the image's lookup until its bundle names its layers: rmi, store rm and store
   * prune, which hold it exclusive, remove nothing this run is about to mount. */
  int gc = rrt_names_lock(store, RRT_GC_LOCK, LOCK_SH);
  int pr = prepare(o, root, store, id, &img, &d, &config, err);
  if (gc >= 0)
    close(gc);
  if (pr < 0)
    goto out;
  phase("image opened, config and directories made");
  if (o->print_config) {
    printf("%s\n", config);
    ret = 0;
    goto out;
  }
  if (setup_stdio(o, d.bundle, &out_fd, err) < 0)
    goto out;
  struct rrt_create_opts co = {
      .id = id, .bundle = d.bundle, .detach = o->detach, .foreground = !o->detach};
  ret = rrt_container_run(g, &co, status, err);
  phase("container run returned");
  if (ret < 0)
    *status = exec_failure_status(err);
  if (ret < 0 && err->msg && strncmp(err->msg, "the overlay on / ", 17) == 0)
    rrt_error_wrap(err, "run: the container's copy-on-write root could not be mounted");
  if (ret == 0 && o->detach) {
    dprintf(out_fd, "%s\n", id);
    goto keep; /* the container exists now: the lock goes with run_dirs_free */
  }
out:
  /* Foreground (or failed): the container is gone; its changes stay only without --rm. */
  run_dirs_remove(&d, ret < 0 || o->rm);
  phase("cleaned up");
keep:
  if (out_fd >= 0)
    close(out_fd);
  run_dirs_free(&d);
  rrt_image_free(&img);
  return ret;
}

int rrt_image_forget(const struct rrt_global *g, const char *id, struct rrt_error *err)
{
  cleanup_free char *root = NULL;
  if (rrt_state_root(g->root, false, &root, err) < 0)
    return -1;
  struct run_dirs d = {.bundle = xasprintf("%s/" RUN_DIR "/%s", root, id), .lock = -1};
  cleanup_free char *ctr_file = xasprintf("%s/container-dir", d.bundle);
  cleanup_free char *mark = xasprintf("%s/remove-on-delete", d.bundle);
  int ret = 0;
  if (access(d.bundle, F_OK) == 0) {
    bool rm = access(mark, F_OK) == 0;
    if (rm && rrt_read_file(ctr_file, &d.ctr, NULL, NULL) == 0)
      d.made_ctr = true;
    run_dirs_remove(&d, rm);
  }
  run_dirs_free(&d);
  return ret;
}
