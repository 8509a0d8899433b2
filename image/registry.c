/* registry.c: docker://HOST/NAME:TAG (and `pull REF`): rootlessrt-pull, the dynamically linked
 * registry client, fetches the image into an OCI layout under STORE/tmp/ (every layer not
 * already in the store), and the layout is imported as oci: is, so every digest is checked
 * again by the runtime's own code and each layer is unpacked once, keyed by its digest. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/reexec.h"
#include "rootlessrt/util.h"

#define PULL_PREFIX "pull-"

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

/* The download directory is the caller's own files: a plain depth-first removal. */
static void remove_dir(const char *path)
{
  nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* STORE/tmp/pull-*: what a pull that was killed left (its lock is free): removed, so a killed
 * pull keeps nothing half-fetched. */
static void remove_stale_pulls(const char *tmp)
{
  DIR *d = opendir(tmp);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, PULL_PREFIX, strlen(PULL_PREFIX)) != 0)
      continue;
    cleanup_free char *p = xasprintf("%s/%s", tmp, e->d_name);
    cleanup_close int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
      remove_dir(p);
  }
  closedir(d);
}

static int mkdirs(const char *store, struct rrt_error *err)
{
  const char *subs[] = {"/layers", "/layers/sha256", "/tmp"};
  for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
    cleanup_free char *p = xasprintf("%s%s", store, subs[i]);
    if (mkdir(p, 0700) < 0 && errno != EEXIST)
      return rrt_error_errno(err, "mkdir %s", p);
  }
  return 0;
}

static char **helper_argv(const char *helper, const char *ref, bool short_names,
                          const struct rrt_pull_opts *po, const char *have, const char *dir)
{
  char **argv = xcalloc(16, sizeof(char *));
  size_t n = 0;
  argv[n++] = xstrdup(helper);
  if (po && po->platform)
    argv[n++] = xstrdup("--platform"), argv[n++] = xstrdup(po->platform);
  if (po && po->authfile)
    argv[n++] = xstrdup("--authfile"), argv[n++] = xstrdup(po->authfile);
  if (po && po->tls_verify_off)
    argv[n++] = xstrdup("--tls-verify=false");
  if (short_names)
    argv[n++] = xstrdup("--short-names");
  argv[n++] = xstrdup("--have"), argv[n++] = xstrdup(have);
  argv[n++] = xstrdup("--error-fd"), argv[n++] = xstrdup("3");
  argv[n++] = xstrdup(dir);
  argv[n++] = xstrdup(ref);
  return argv;
}

/* Runs the helper; its one-line error (on fd 3) becomes err. */
static int run_helper(char **argv, struct rrt_error *err)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "pipe");
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]), close(p[1]);
    return rrt_error_errno(err, "fork");
  }
  if (pid == 0) {
    close(p[0]);
    if (p[1] != 3 && (dup2(p[1], 3) < 0 || close(p[1]) < 0))
      _exit(127);
    if (p[1] == 3)
      fcntl(3, F_SETFD, 0);
    rrt_reset_signals();
    /* A pull killed with the runtime stops fetching: its directory is then swept as stale. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
      _exit(127);
    execv(argv[0], argv);
    int e = errno;
    cleanup_free char *m = xasprintf("cannot run the registry client %s: %s", argv[0], strerror(e));
    (void)!write(3, m, strlen(m));
    _exit(127);
  }
  close(p[1]);
  cleanup_free char *msg = NULL;
  size_t len = 0;
  struct rrt_error rerr = RRT_ERROR_INIT;
  rrt_read_fd(p[0], &msg, &len, &rerr);
  rrt_error_clear(&rerr);
  close(p[0]);
  int status = rrt_wait_reaping(pid);
  if (status == 0)
    return 0;
  while (msg && len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
    msg[--len] = '\0';
  if (msg && *msg)
    return rrt_error_msgf(err, EIO, "%s", msg);
  return rrt_error_msgf(err, EIO, "the registry client %s failed (exit status %d)", argv[0],
                        status);
}

int rrt_image_pull(const char *ref, bool short_names, const struct rrt_pull_opts *po,
                   const char *store, struct rrt_image *img, struct rrt_error *err)
{
  if (strpbrk(store, ":,"))
    return rrt_error_msgf(err, EINVAL,
                          "the store %s: a path with ':' or ',' cannot hold overlay "
                          "layers (use --storage)",
                          store);
  if (!*ref)
    return rrt_error_msgf(err, EINVAL, "no image name after docker://");
  if (mkdirs(store, err) < 0)
    return -1;
  cleanup_free char *tmp = xasprintf("%s/tmp", store);
  remove_stale_pulls(tmp);
  cleanup_free char *dir = xasprintf("%s/" PULL_PREFIX "XXXXXX", tmp);
  if (!mkdtemp(dir))
    return rrt_error_errno(err, "mkdtemp %s", dir);
  /* The lock says the pull is alive; it goes with the process however it ends. */
  cleanup_close int lock = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock < 0 || flock(lock, LOCK_EX) < 0) {
    rrt_error_errno(err, "lock %s", dir);
    remove_dir(dir);
    return -1;
  }
  cleanup_free char *helper = rrt_helper_path("rootlessrt-pull", "ROOTLESSRT_PULL_HELPER");
  cleanup_free char *have = xasprintf("%s/layers/sha256", store);
  cleanup_strv char **argv = helper_argv(helper, ref, short_names, po, have, dir);
  int r = run_helper(argv, err);
  if (r == 0) {
    cleanup_free char *layout = xasprintf("oci:%s", dir);
    r = rrt_image_import(layout, store, img, err);
    /* The download directory means nothing to the user: the reference is said by the caller. */
    cleanup_free char *said = xasprintf("run: %s: ", layout);
    if (r < 0 && err && err->msg && strncmp(err->msg, said, strlen(said)) == 0)
      memmove(err->msg, err->msg + strlen(said), strlen(err->msg + strlen(said)) + 1);
  }
  remove_dir(dir);
  return r;
}

int rrt_pull_opt_parse(const char *name, const char *value, struct rrt_pull_opts *po,
                       struct rrt_error *err)
{
  if (strcmp(name, "platform") == 0) {
    const char *slash = value ? strchr(value, '/') : NULL;
    if (!slash || slash == value || !slash[1] || strchr(slash + 1, '/') == slash + 1)
      return rrt_error_msgf(err, EINVAL,
                            "--platform \"%s\": not OS/ARCH[/VARIANT] (e.g. linux/arm64)",
                            value ? value : "");
    po->platform = value;
  } else if (strcmp(name, "authfile") == 0) {
    if (access(value, R_OK) < 0)
      return rrt_error_errno(err, "--authfile %s", value);
    po->authfile = value;
  } else if (!value || strcmp(value, "true") == 0) {
    po->tls_verify_off = false;
  } else if (strcmp(value, "false") == 0) {
    po->tls_verify_off = true;
  } else {
    return rrt_error_msgf(err, EINVAL, "--tls-verify=%s: true or false", value);
  }
  return 0;
}

int rrt_pull(const char *ref, const struct rrt_pull_opts *po, const char *storage,
             struct rrt_error *err)
{
  cleanup_free char *store = rrt_store_path(storage);
  if (rrt_store_trust(store, true, err) < 0)
    return -1;
  bool docker = strncmp(ref, "docker://", 9) == 0;
  struct rrt_image img = {0};
  int r = rrt_image_pull(docker ? ref + 9 : ref, !docker, po, store, &img, err);
  rrt_image_free(&img);
  return r < 0 ? rrt_error_wrap(err, "pull: %s", ref) : 0;
}
