/* registry.c: docker://HOST/NAME:TAG (and `pull REF`): rootlessrt-pull, the dynamically linked
 * registry client, writes the image's manifest and config into an OCI layout under STORE/tmp/
 * and streams every layer not already in the store through a FIFO there, which the layout's
 * import (as for oci:) reads as it arrives: every digest is checked again by the runtime's own
 * code and each layer is unpacked once, keyed by its diff_id. Only its compressed bytes are
 * kept beside, until it arrived whole: STORE/tmp/partial-sha256-HEX, from which a cut pull is
 * resumed (the client's --partials; old ones are swept here).
 *
 * The client knows blobs by their (compressed) digests, the store layers by their diff_ids: its
 * --have directory names the blobs the store is known to hold; when the config it fetched first
 * shows a layer the store has under another blob (imported from a docker-archive, say), or a
 * record that does not hold for this image, the client is stopped before it fetched any layer
 * and started once more with --have put right (and the blob recorded for the next pull). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "manifest.h"
#include "names.h"
#include "source.h"
#include "rootlessrt/reexec.h"
#include "rootlessrt/rmtree.h"
#include "rootlessrt/util.h"

#define PULL_PREFIX "pull-"
#define PARTIAL_PREFIX "partial-sha256-" /* the client's kept partial downloads (--partials) */
#define PARTIAL_MAX_AGE (24 * 3600)      /* seconds since a partial download last grew */
#define IMPORT_GRACE_MS 10000
#define HELPER_GRACE_MS 200 /* after the import is done, for the client to exit by itself */

/* The download directory is the caller's own files; removed as every tree is (rrt_remove_tree). */
static void remove_dir(const char *path)
{
  (void)rrt_remove_tree(path, NULL);
}

/* STORE/tmp/partial-sha256-HEX: a layer's compressed bytes as far as a cut pull got, which the
 * next pull of that layer resumes from. One no pull is writing (its lock is free) goes once it
 * is PARTIAL_MAX_AGE old or empty; the client removes one whose layer arrived whole. */
static void remove_old_partial(const char *tmp, const char *name)
{
  cleanup_free char *p = xasprintf("%s/%s", tmp, name);
  cleanup_close int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || flock(fd, LOCK_EX | LOCK_NB) < 0)
    return;
  if (st.st_size == 0 || time(NULL) - st.st_mtime > PARTIAL_MAX_AGE)
    unlink(p);
}

/* STORE/tmp/pull-*: what a pull that was killed left (its lock is free): removed, so a killed
 * pull keeps nothing half-unpacked; old partial downloads too (remove_old_partial). */
static void remove_stale_pulls(const char *tmp)
{
  cleanup_close int hold = rrt_store_tmp_hold(tmp, LOCK_EX); /* see rrt_store_tmp_hold */
  if (hold < 0)
    return;
  DIR *d = opendir(tmp);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, PARTIAL_PREFIX, strlen(PARTIAL_PREFIX)) == 0)
      remove_old_partial(tmp, e->d_name);
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
                          const struct rrt_pull_opts *po, const char *have, const char *tmp,
                          const char *dir)
{
  char **argv = xcalloc(20, sizeof(char *));
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
  argv[n++] = xstrdup("--partials"), argv[n++] = xstrdup(tmp);
  argv[n++] = xstrdup("--error-fd"), argv[n++] = xstrdup("3");
  argv[n++] = xstrdup("--ready-fd"), argv[n++] = xstrdup("4");
  argv[n++] = xstrdup(dir);
  argv[n++] = xstrdup(ref);
  return argv;
}

/* A child: the helper with its error pipe on fd 3 and its ready pipe on fd 4. */
static pid_t start_helper(char **argv, int errw, int readyw)
{
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  /* Both to fresh numbers first, so that neither dup2 clobbers the other; those copies close
   * at the execv (only 3 and 4, made by dup2, are inherited). */
  int e = fcntl(errw, F_DUPFD_CLOEXEC, 10), r = fcntl(readyw, F_DUPFD_CLOEXEC, 10);
  if (e < 0 || r < 0 || dup2(e, 3) < 0 || dup2(r, 4) < 0)
    _exit(127);
  rrt_reset_signals();
  /* A pull killed with the runtime stops fetching: its directory is then swept as stale. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
    _exit(127);
  execv(argv[0], argv);
  int en = errno;
  cleanup_free char *m = xasprintf("cannot run the registry client %s: %s", argv[0], strerror(en));
  (void)!write(3, m, strlen(m));
  _exit(127);
}

static char *read_all(int fd)
{
  char *msg = NULL;
  size_t len = 0;
  struct rrt_error ignored = RRT_ERROR_INIT;
  if (rrt_read_fd(fd, &msg, &len, &ignored) < 0)
    msg = NULL;
  rrt_error_clear(&ignored);
  while (msg && len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
    msg[--len] = '\0';
  if (msg && !*msg) {
    free(msg);
    msg = NULL;
  }
  return msg;
}

/* A child: the import of the layout (the layers read from their FIFOs as they stream in); its
 * error goes back on errw. */
static pid_t start_import(const char *layout, const char *store, int errw)
{
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct rrt_image img = {0};
  struct rrt_error err = RRT_ERROR_INIT;
  rrt_src_pull_dir = true; /* this child's layout is the helper's download directory */
  int r = rrt_image_import(layout, store, NULL, &img, &err);
  if (r < 0)
    (void)!write(errw, rrt_error_msg(&err), strlen(rrt_error_msg(&err)));
  _exit(r < 0 ? 1 : 0);
}

static int pidfd_of(pid_t pid)
{
  return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int exit_code(pid_t pid)
{
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The helper and the import run side by side; whichever fails first stops the other. The
 * helper's error wins (it says why a layer was cut: the registry, its digest, the disk), the
 * import's otherwise. */
static int fetch_and_import(char **argv, const char *layout, const char *store, const char *have,
                            struct rrt_error *err)
{
  int herr[2] = {-1, -1}, ready[2] = {-1, -1}, ierr[2] = {-1, -1};
  if (pipe2(herr, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0 || pipe2(ierr, O_CLOEXEC) < 0) {
    rrt_error_errno(err, "pipe");
    for (int k = 0; k < 2; k++)
      close(herr[k]), close(ready[k]), close(ierr[k]);
    return -1;
  }
  pid_t helper = start_helper(argv, herr[1], ready[1]);
  close(herr[1]), close(ready[1]);
  if (helper < 0) {
    close(herr[0]), close(ready[0]), close(ierr[0]), close(ierr[1]);
    return rrt_error_errno(err, "fork");
  }
  char byte;
  ssize_t n;
  do
    n = read(ready[0], &byte, 1);
  while (n < 0 && errno == EINTR);
  close(ready[0]);
  /* The client waits to open the first layer's FIFO, which nothing reads yet: no layer was
   * requested. A --have that turns out wrong for this image's config (a layer the store has by
   * its diff_id under another blob, or a record that does not hold) means starting again
   * (return 1) with it put right. */
  if (n == 1 && have && rrt_pull_have_fix(layout + strlen("oci:"), store, have)) {
    kill(helper, SIGKILL);
    exit_code(helper);
    close(herr[0]), close(ierr[0]), close(ierr[1]);
    return 1;
  }
  pid_t import = -1;
  int istatus = -1, hstatus = -1;
  if (n == 1) {
    import = start_import(layout, store, ierr[1]);
    close(ierr[1]);
    ierr[1] = -1;
    int hfd = pidfd_of(helper), ifd = import > 0 ? pidfd_of(import) : -1;
    bool hdone = false, idone = import < 0;
    while (!hdone || !idone) {
      struct pollfd pf[2] = {{.fd = hdone ? -1 : hfd, .events = POLLIN},
                             {.fd = idone ? -1 : ifd, .events = POLLIN}};
      /* A helper that failed closed the layer's FIFO: the import then fails on that layer by
       * itself and removes its half-unpacked directory. It is killed only if it waits on a
       * FIFO no one will ever write (the next import sweeps what it leaves). */
      /* Likewise a helper still there once the import read every layer it needed waits on a
       * layer someone else put in the store meanwhile: what it would fetch is not needed, and
       * it holds no partial download's lock (it takes one once the FIFO is open), so it goes
       * as soon as it had a moment to exit by itself. */
      int timeout = hdone && hstatus != 0             ? IMPORT_GRACE_MS
                    : idone && istatus == 0 && !hdone ? HELPER_GRACE_MS
                                                      : -1;
      int pr = hfd < 0 || ifd < 0 ? -1 : poll(pf, 2, timeout);
      if (pr == 0 && !idone) {
        kill(import, SIGKILL);
        continue;
      }
      if (pr == 0) {
        kill(helper, SIGKILL);
        exit_code(helper);
        hdone = true;
        hstatus = 0;
        continue;
      }
      if (pr < 0 && errno == EINTR)
        continue;
      if (pr < 0) {
        /* No pidfds: wait for the import, then the helper (the import reads every FIFO). */
        istatus = idone ? istatus : exit_code(import);
        if (istatus != 0)
          kill(helper, SIGKILL);
        hstatus = exit_code(helper);
        break;
      }
      if (!hdone && (pf[0].revents & POLLIN)) {
        hdone = true;
        hstatus = exit_code(helper);
      }
      if (!idone && (pf[1].revents & POLLIN)) {
        idone = true;
        istatus = exit_code(import);
        if (istatus != 0 && !hdone)
          kill(helper, SIGKILL);
      }
    }
    if (hfd >= 0)
      close(hfd);
    if (ifd >= 0)
      close(ifd);
  } else {
    hstatus = exit_code(helper); /* it failed before any layer */
  }
  if (ierr[1] >= 0)
    close(ierr[1]);
  cleanup_free char *hmsg = read_all(herr[0]);
  cleanup_free char *imsg = read_all(ierr[0]);
  close(herr[0]), close(ierr[0]);
  if (hstatus == 0 && istatus == 0)
    return 0;
  if (hmsg)
    return rrt_error_msgf(err, EIO, "%s", hmsg);
  if (imsg)
    return rrt_error_msgf(err, EIO, "%s", imsg);
  return rrt_error_msgf(err, EIO, "the registry client %s failed (exit status %d)", argv[0],
                        hstatus);
}

/* The name a pulled image is recorded by: the reference as given (docker://'s reading: Docker
 * Hub for a name without a host), a short name as the client resolved it (its DEST/rootlessrt-name:
 * the search registry's name it was found under). */
static char *pulled_name(const char *ref, bool short_names, const char *dest)
{
  if (!short_names || rrt_image_name_has_host(ref))
    return rrt_image_name_normalize(ref, !short_names);
  cleanup_free char *path = xasprintf("%s/rootlessrt-name", dest);
  cleanup_free char *text = NULL;
  size_t len = 0;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_read_file(path, &text, &len, &e) < 0) {
    rrt_error_clear(&e);
    return NULL;
  }
  while (len && text[len - 1] == '\n')
    text[--len] = '\0';
  /* Its repository, with the tag or digest the user gave. */
  cleanup_free char *repo = rrt_names_repo(ref);
  const char *suffix = ref + strlen(repo);
  cleanup_free char *full = xasprintf("%s%s", text, suffix);
  return rrt_image_name_has_host(full) ? rrt_image_name_normalize(full, false) : NULL;
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
  /* The lock says the pull is alive; it goes with the process however it ends. It is taken
   * under the shared hold on tmp/, so no other run's sweep takes the new directory for stale. */
  cleanup_close int hold = rrt_store_tmp_hold(tmp, LOCK_SH);
  if (!mkdtemp(dir))
    return rrt_error_errno(err, "mkdtemp %s", dir);
  cleanup_close int lock = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock < 0 || flock(lock, LOCK_EX) < 0) {
    rrt_error_errno(err, "lock %s", dir);
    remove_dir(dir);
    return -1;
  }
  if (hold >= 0)
    close(steal_fd(&hold));
  cleanup_free char *helper = rrt_helper_path("rootlessrt-pull", "ROOTLESSRT_PULL_HELPER");
  /* DIR/layout the client's download directory, DIR/have its --have. */
  cleanup_free char *have = xasprintf("%s/have", dir), *dest = xasprintf("%s/layout", dir);
  if (mkdir(have, 0700) < 0 || mkdir(dest, 0700) < 0) {
    rrt_error_errno(err, "mkdir in %s", dir);
    remove_dir(dir);
    return -1;
  }
  rrt_pull_have_fill(store, have);
  cleanup_strv char **argv = helper_argv(helper, ref, short_names, po, have, tmp, dest);
  cleanup_free char *layout = xasprintf("oci:%s", dest);
  rrt_image_platform_chosen = po && po->platform; /* the import child inherits it */
  int r = fetch_and_import(argv, layout, store, have, err);
  if (r == 1) { /* once more, skipping what the store turned out to have */
    remove_dir(dest);
    r = mkdir(dest, 0700) < 0 ? rrt_error_errno(err, "mkdir %s", dest)
                              : fetch_and_import(argv, layout, store, NULL, err);
  }
  /* Every layer is in the store now: this import only reads the manifest and the config, and
   * records the image by its name (the one the client resolved a short name to). */
  if (r == 0) {
    cleanup_free char *name = pulled_name(ref, short_names, dest);
    char *names[] = {name, NULL};
    struct rrt_record rec = {.names = names, .warn_only = true};
    rrt_src_pull_dir = true;
    r = rrt_image_import(layout, store, name ? &rec : NULL, img, err);
    rrt_src_pull_dir = false;
  }
  rrt_image_platform_chosen = false;
  /* The download directory means nothing to the user: the reference is said by the caller. */
  cleanup_free char *said = xasprintf("run: %s: ", layout);
  if (r < 0 && err && err->msg && strncmp(err->msg, said, strlen(said)) == 0)
    memmove(err->msg, err->msg + strlen(said), strlen(err->msg + strlen(said)) + 1);
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

int rrt_pull_policy_parse(const char *s, enum rrt_pull_policy *p, struct rrt_error *err)
{
  static const char *const names[] = {"missing", "always", "never", "newer"};
  for (size_t i = 0; i < 4; i++)
    if (s && strcmp(s, names[i]) == 0) {
      *p = (enum rrt_pull_policy)i;
      return 0;
    }
  if (s && strcmp(s, "true") == 0) { /* podman takes these too */
    *p = RRT_PULL_ALWAYS;
    return 0;
  }
  if (s && strcmp(s, "false") == 0) {
    *p = RRT_PULL_NEVER;
    return 0;
  }
  cleanup_free char *shown = rrt_names_shown(s ? s : "");
  return rrt_error_msgf(err, EINVAL, "--pull \"%s\": always, missing, never or newer", shown);
}

int rrt_pull(const char *ref, const struct rrt_pull_opts *po, const char *storage,
             struct rrt_error *err)
{
  cleanup_free char *store = rrt_store_path(storage);
  if (rrt_store_trust(store, true, err) < 0)
    return -1;
  struct rrt_image img = {0};
  int r;
  if (strncmp(ref, "oci:", 4) == 0 || strncmp(ref, "oci-archive:", 12) == 0 ||
      strncmp(ref, "docker-archive:", 15) == 0) {
    /* An import into the store, recorded by the names the source gives (podman pull's). */
    char **names = NULL;
    struct rrt_record rec = {.names_out = &names};
    r = rrt_image_import(ref, store, &rec, &img, err);
    if (r == 0 && !names)
      printf("%s\n", img.id); /* kept by its id only, as podman prints it */
    for (size_t i = 0; r == 0 && names && names[i]; i++) {
      cleanup_free char *shown = rrt_names_shown(names[i]);
      printf("Loaded image: %s\n", shown);
    }
    rrt_strv_free(names);
  } else {
    bool docker = strncmp(ref, "docker://", 9) == 0;
    r = rrt_image_pull(docker ? ref + 9 : ref, !docker, po, store, &img, err);
  }
  rrt_image_free(&img);
  if (r < 0 && err->msg && strncmp(err->msg, "run: ", 5) == 0) {
    /* The import says what it read as run does: "run: REF: ...", here a pull's. */
    cleanup_free char *m = xstrdup(err->msg + 5);
    return rrt_error_msgf(err, err->errnum, "pull: %s", m);
  }
  if (r < 0) {
    cleanup_free char *shown = rrt_names_shown(ref);
    return rrt_error_wrap(err, "pull: %s", shown);
  }
  return 0;
}
