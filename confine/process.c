/* process.c: the last steps before execve: user, caps, limits, cwd, env, fds,
 * seccomp, and the PATH search inside the container. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/container.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *env_get(const struct rrt_strv *env, const char *name)
{
  size_t n = strlen(name);
  for (size_t i = 0; i < env->n; i++)
    if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=')
      return env->v[i] + n + 1;
  return NULL;
}

void rrt_confine_undumpable(void)
{
  (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/*
 * A file of the container's, read by the runtime before the container's program runs (confine.h,
 * THE REACH RULE): never blocking. O_NONBLOCK makes the open of a FIFO return at once (and the
 * fstat below refuses it), O_NOCTTY keeps a terminal there from becoming ours. Symlinks are
 * followed: this runs chrooted (exec) or pivoted (init), so they resolve inside the container,
 * and images do link /etc/passwd.
 */
static int read_container_file(const char *path, char **out, struct rrt_error *err)
{
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return rrt_error_errno(err, "open %s in the container", path);
  struct stat st;
  if (fstat(fd, &st) < 0)
    return rrt_error_errno(err, "fstat %s in the container", path);
  if (!S_ISREG(st.st_mode))
    return rrt_error_msgf(err, EINVAL, "%s in the container is not a regular file", path);
  if (st.st_size > RRT_CONTAINER_FILE_MAX)
    return rrt_error_msgf(err, EFBIG, "%s in the container is larger than %d bytes", path,
                          RRT_CONTAINER_FILE_MAX);
  /* Read at most the limit, whatever the size said (a file can grow meanwhile). */
  size_t cap = (size_t)st.st_size + 1, n = 0;
  if (cap > RRT_CONTAINER_FILE_MAX + 1)
    cap = RRT_CONTAINER_FILE_MAX + 1;
  cleanup_free char *buf = xmalloc(cap);
  while (n + 1 < cap) {
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return rrt_error_errno(err, "read %s in the container", path);
    if (r == 0)
      break;
    n += (size_t)r;
  }
  buf[n] = '\0';
  *out = steal_ptr(&buf);
  return 0;
}

/* The home directory of uid in the container's /etc/passwd, "/" when it has no entry (or no
 * file), as runc, crun and youki do. Read in the container's mount namespace, before the user
 * switch. A passwd that is not a regular file of at most 1 MiB is not read: "/" too, with a
 * warning (runc does not fail either). */
static char *passwd_home(uid_t uid)
{
  cleanup_free char *text = NULL;
  struct rrt_error err = RRT_ERROR_INIT;
  if (read_container_file("/etc/passwd", &text, &err) < 0) {
    if (err.errnum != ENOENT && err.errnum != ENOTDIR)
      rrt_warn("HOME=/: %s", rrt_error_msg(&err));
    rrt_error_clear(&err);
    return xstrdup("/");
  }
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    /* name:password:uid:gid:gecos:home:shell */
    char *f[7] = {0};
    size_t nf = 0;
    for (char *p = line; nf < 7; p++) {
      f[nf++] = p;
      p = strchr(p, ':');
      if (!p)
        break;
      *p = '\0';
    }
    long long id;
    if (nf >= 6 && rrt_parse_i64(f[2], &id) == 0 && id == (long long)uid && f[5][0] == '/')
      return xstrdup(f[5]);
  }
  return xstrdup("/");
}

static bool is_var(const char *entry, const char *name)
{
  size_t n = strlen(name);
  return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* process.env, with LISTEN_PID fixed up when fds are handed over (sd_listen_fds
 * checks that the pid is its own), and HOME from /etc/passwd when it has none. The runtime's
 * own socket activation (listen_fds) replaces what process.env says of LISTEN_*. */
static char **build_env(const struct rrt_process *proc, int preserve_fds, int listen_fds)
{
  size_t n = proc->env.n;
  char **envp = xcalloc(n + 5, sizeof(char *));
  size_t k = 0;
  if (!env_get(&proc->env, "HOME")) {
    cleanup_free char *home = passwd_home(proc->user.uid);
    envp[k++] = xasprintf("HOME=%s", home);
  }
  bool has_listen_fds = listen_fds > 0 || env_get(&proc->env, "LISTEN_FDS") != NULL;
  for (size_t i = 0; i < n; i++) {
    if (has_listen_fds && is_var(proc->env.v[i], "LISTEN_PID"))
      continue;
    if (listen_fds > 0 &&
        (is_var(proc->env.v[i], "LISTEN_FDS") || is_var(proc->env.v[i], "LISTEN_FDNAMES")))
      continue;
    envp[k++] = xstrdup(proc->env.v[i]);
  }
  if (listen_fds > 0) {
    envp[k++] = xasprintf("LISTEN_FDS=%d", listen_fds);
    const char *names = getenv("LISTEN_FDNAMES"); /* init is a clone of the runtime */
    if (names)
      envp[k++] = xasprintf("LISTEN_FDNAMES=%s", names);
  }
  if (has_listen_fds || preserve_fds > 0) {
    if (!has_listen_fds && preserve_fds > 0)
      envp[k++] = xasprintf("LISTEN_FDS=%d", preserve_fds);
    envp[k++] = xasprintf("LISTEN_PID=%d", getpid());
  }
  envp[k] = NULL;
  return envp;
}

bool rrt_process_keep_groups(const struct rrt_spec *spec)
{
  const char *v = rrt_spec_annotation(spec, "run.oci.keep_original_groups");
  return v && strcmp(v, "0") != 0 && strcmp(v, "false") != 0;
}

static int set_groups(const struct rrt_exec_ctx *x, struct rrt_error *err)
{
  const struct rrt_user *u = &x->proc->user;
  /* Devices reached through a group of the caller's (video, kvm) stay reachable; in a rootless
   * container those groups show as the overflow gid. rrt_process_prepare refused additionalGids
   * with it. */
  if (rrt_process_keep_groups(x->spec))
    return 0;
  if (!x->setgroups_allowed) {
    if (u->n_additional_gids > 0)
      return rrt_error_msgf(err, EPERM,
                            "process.user.additionalGids: setgroups is denied in this user "
                            "namespace (no subordinate gid range for your user)");
    return 0;
  }
  gid_t *groups = xcalloc(u->n_additional_gids + 1, sizeof(gid_t));
  for (size_t i = 0; i < u->n_additional_gids; i++)
    groups[i] = u->additional_gids[i];
  int r = setgroups(u->n_additional_gids, groups);
  free(groups);
  if (r < 0)
    return rrt_error_errno(err, "process.user.additionalGids: setgroups");
  return 0;
}

static int switch_user(const struct rrt_exec_ctx *x, struct rrt_error *err)
{
  const struct rrt_user *u = &x->proc->user;
  if (set_groups(x, err) < 0)
    return -1;
  if (setresgid(u->gid, u->gid, u->gid) < 0)
    return rrt_error_errno(err, "process.user.gid %u: setresgid (is it mapped?)", u->gid);
  if (setresuid(u->uid, u->uid, u->uid) < 0)
    return rrt_error_errno(err, "process.user.uid %u: setresuid (is it mapped?)", u->uid);
  return 0;
}

/* CVE-2024-21626: a leaked directory fd could put cwd outside the container
 * (cwd=/proc/self/fd/N). After chdir, getcwd must name a path inside. */
static int enter_cwd(const char *cwd, bool entered, struct rrt_error *err)
{
  if (!entered && chdir(cwd) < 0)
    return rrt_error_errno(err, "process.cwd %s", cwd);
  char buf[4096];
  if (!getcwd(buf, sizeof(buf))) {
    /* Linux reports a directory that is no longer reachable as ENOENT: the container's root
     * was removed (the bundle deleted between create and start). Anything else is getcwd's. */
    if (errno == ENOENT)
      return rrt_error_msgf(err, ENOENT,
                            "process.cwd %s: the directory was removed (is the bundle's rootfs "
                            "still there?)",
                            cwd);
    return rrt_error_errno(err, "process.cwd %s: getcwd", cwd);
  }
  if (buf[0] != '/')
    return rrt_error_msgf(err, EPERM, "process.cwd %s: resolves outside the container", cwd);
  return 0;
}

static int exec_search(const char *file, char *const argv[], char *const envp[], const char *path)
{
  if (strchr(file, '/')) {
    execve(file, argv, envp);
    return -errno;
  }
  int saved = ENOENT;
  cleanup_free char *copy = xstrdup(path);
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    cleanup_free char *full = xasprintf("%s/%s", *dir ? dir : ".", file);
    execve(full, argv, envp);
    /* Keep looking past missing entries; remember that one was not
     * executable, as a shell does. */
    if (errno == EACCES)
      saved = EACCES;
    else if (errno != ENOENT && errno != ENOTDIR)
      return -errno;
  }
  return -saved;
}

/* strerror as Go (runc) spells it: the docker CLI matches "no such file or directory" and
 * "permission denied" case-sensitively in the runtime's error to exit 127 or 126. */
static const char *errno_text(int e, char *buf, size_t len)
{
  snprintf(buf, len, "%s", strerror(e));
  if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
    buf[0] = (char)(buf[0] - 'A' + 'a');
  return buf;
}

/* Is gid the process user's gid or one of its supplementary groups (the runtime's own with
 * run.oci.keep_original_groups, which leaves them)? */
static bool user_in_group(const struct rrt_user *u, bool keep_groups, gid_t gid)
{
  if (gid == u->gid)
    return true;
  if (keep_groups) {
    gid_t groups[256];
    int n = getgroups(256, groups);
    for (int i = 0; i < n; i++)
      if (groups[i] == gid)
        return true;
    return false;
  }
  for (size_t i = 0; i < u->n_additional_gids; i++)
    if (u->additional_gids[i] == gid)
      return true;
  return false;
}

/*
 * Would execve of path, as process.user, be refused with EACCES? Checked at create, in init
 * after the mounts and before the user switch, so that create fails as with runc and crun
 * (podman reports a failed `start` otherwise, not "permission denied"). The mode bits and the
 * mount are read rather than tried: init still has the runtime's credentials here. The reason
 * is written to why; a directory the path crosses is left to execve at start.
 */
static bool exec_denied(const char *path, const struct stat *st, const struct rrt_process *proc,
                        bool keep_groups, char *why, size_t len)
{
  const struct rrt_user *u = &proc->user;
  struct statvfs vfs;
  if (S_ISDIR(st->st_mode)) {
    snprintf(why, len, "is a directory");
    return true;
  }
  if (!S_ISREG(st->st_mode)) {
    snprintf(why, len, "not a regular file");
    return true;
  }
  if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
    snprintf(why, len, "on a noexec mount");
    return true;
  }
  mode_t bit = S_IXOTH;
  if (u->uid == 0)
    bit = S_IXUSR | S_IXGRP | S_IXOTH; /* CAP_DAC_OVERRIDE: any execute bit will do */
  else if (st->st_uid == u->uid)
    bit = S_IXUSR;
  else if (user_in_group(u, keep_groups, st->st_gid))
    bit = S_IXGRP;
  if (st->st_mode & bit)
    return false;
  snprintf(why, len, "no execute permission for uid %u: mode 0%o", u->uid,
           (unsigned)(st->st_mode & 07777));
  return true;
}

int rrt_process_find_exec(const struct rrt_process *proc, bool keep_groups, char **found,
                          struct rrt_error *err)
{
  const char *file = proc->args.v[0];
  struct stat st;
  char why[96];
  if (found)
    *found = NULL;
  /* The texts are runc's (Go's exec.LookPath): engines map them to exit statuses 127 and 126. */
  if (strchr(file, '/')) {
    cleanup_free char *full = file[0] == '/' ? xstrdup(file) : xasprintf("%s/%s", proc->cwd, file);
    if (stat(full, &st) < 0) {
      int e = errno;
      char text[128];
      return rrt_error_msgf(err, e, "exec: \"%s\": stat %s: %s", file, file,
                            errno_text(e, text, sizeof(text)));
    }
    if (exec_denied(full, &st, proc, keep_groups, why, sizeof(why)))
      return rrt_error_msgf(err, EACCES, "exec: \"%s\": permission denied (%s)", file, why);
    return 0;
  }
  const char *path = env_get(&proc->env, "PATH");
  cleanup_free char *copy = xstrdup(path ? path : DEFAULT_PATH);
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    cleanup_free char *full =
        dir[0] == '/' ? xasprintf("%s/%s", dir, file) : xasprintf("%s/%s/%s", proc->cwd, dir, file);
    if (stat(full, &st) == 0 && !exec_denied(full, &st, proc, keep_groups, why, sizeof(why))) {
      if (found)
        *found = steal_ptr(&full);
      return 0;
    }
  }
  return rrt_error_msgf(err, ENOENT, "exec: \"%s\": executable file not found in $PATH", file);
}

static int apply_limits(const struct rrt_spec *spec, struct rrt_error *err)
{
  if (rrt_process_limits_apply(spec->process, err) < 0)
    return -1;
  if (spec->lnx.personality && rrt_personality_apply(spec->lnx.personality, err) < 0)
    return -1;
  return 0;
}

/* Is id inside one of the ranges of /proc/self/{uid,gid}_map? */
static bool id_mapped(const char *file, uint32_t id)
{
  cleanup_free char *text = NULL;
  if (rrt_read_file(file, &text, NULL, NULL) < 0)
    return true; /* cannot tell: setresuid will say */
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    unsigned long inside, outside, count;
    if (sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3 && id >= inside &&
        id - inside < count)
      return true;
  }
  return false;
}

int rrt_process_prepare_cwd(const struct rrt_process *proc, struct rrt_error *err)
{
  const char *cwd = proc->cwd;
  struct stat st;
  if (stat(cwd, &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      return rrt_error_msgf(err, ENOTDIR, "process.cwd %s: not a directory", cwd);
    return 0;
  }
  if (errno != ENOENT)
    return rrt_error_errno(err, "process.cwd %s", cwd);
  /* Like runc and crun: a missing working directory is made. */
  cleanup_free char *path = xstrdup(cwd);
  for (char *p = path + 1;; p++) {
    char c = *p;
    if (c == '/' || c == '\0') {
      *p = '\0';
      if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return rrt_error_errno(err, "process.cwd %s: mkdir %s", cwd, path);
      *p = c;
    }
    if (c == '\0')
      break;
  }
  return 0;
}

/* The container's processes have a session of their own, as with runc and crun: left in the
 * caller's process group (conmon's), a kill(-pgid) of the caller's would reach them. With a
 * terminal, the terminal code makes the session (the pty becomes its controlling terminal). */
static int own_session(struct rrt_error *err)
{
  if (getsid(0) == getpid())
    return 0;
  if (setsid() < 0)
    return rrt_error_errno(err, "setsid");
  return 0;
}

int rrt_process_prepare(const struct rrt_spec *spec, struct rrt_error *err)
{
  const struct rrt_user *u = &spec->process->user;
  if (!id_mapped("/proc/self/uid_map", u->uid))
    return rrt_error_msgf(
        err, EINVAL, "process.user.uid %u: not mapped in the container's user namespace", u->uid);
  if (!id_mapped("/proc/self/gid_map", u->gid))
    return rrt_error_msgf(
        err, EINVAL, "process.user.gid %u: not mapped in the container's user namespace", u->gid);
  /* With run.oci.keep_original_groups the list is ignored, as crun ignores it: podman 4.3
   * sends both with --userns=keep-id (every distrobox and toolbox), the list from the image's
   * /etc/group, and the user asked for the groups they have. */
  bool keep_groups = rrt_process_keep_groups(spec);
  if (keep_groups && u->n_additional_gids > 0)
    rrt_debug("process.user.additionalGids: %zu ignored, run.oci.keep_original_groups keeps "
              "the runtime's groups",
              u->n_additional_gids);
  for (size_t i = 0; !keep_groups && i < u->n_additional_gids; i++)
    if (!id_mapped("/proc/self/gid_map", u->additional_gids[i]))
      return rrt_error_msgf(err, EINVAL,
                            "process.user.additionalGids[%zu] %u: not mapped in the container's "
                            "user namespace",
                            i, u->additional_gids[i]);
  if (rrt_caps_check_held(spec->process->capabilities, err) < 0)
    return -1;
  /* At create already: between create and start, init is what an engine's kill(-pgid) of
   * its own group must not reach. */
  if (!spec->process->terminal && own_session(err) < 0)
    return -1;
  return apply_limits(spec, err);
}

static bool needs_caps_for_seccomp(const struct rrt_process *proc)
{
  if (proc->no_new_privileges)
    return false;
  if (proc->user.uid != 0 || !proc->capabilities)
    return true;
  for (size_t i = 0; i < proc->capabilities->effective.n; i++)
    if (strcmp(proc->capabilities->effective.v[i], "CAP_SYS_ADMIN") == 0)
      return false;
  return true;
}

/* After the switch to a non-root uid (KEEPCAPS kept the permitted set), the effective set is
 * empty: loading a filter without no_new_privs needs CAP_SYS_ADMIN there, so it is made
 * effective again for that one call; rrt_caps_apply then sets the configured sets. */
static int effective_admin(struct rrt_error *err)
{
  cap_t c = cap_get_proc();
  cap_value_t admin = CAP_SYS_ADMIN;
  int r = c ? cap_set_flag(c, CAP_EFFECTIVE, 1, &admin, CAP_SET) : -1;
  if (r == 0)
    r = cap_set_proc(c);
  int saved = errno;
  if (c)
    cap_free(c);
  errno = saved;
  if (r < 0)
    return rrt_error_errno(err, "keep CAP_SYS_ADMIN to load the filter (noNewPrivileges is "
                                "false)");
  return 0;
}

/*
 * The console becomes process.user's, as runc does, so that a non-root user can use its pty (init
 * made the slave as root): the owner only, the group stays (devpts may give it tty). Only a
 * terminal: runc changes any stdio, but rootless a file of the caller's given to uid 1000 would
 * be a subordinate uid's, no longer the caller's to write. What is already the user's is left; a
 * refusal (an unmapped owner or group, a read-only /dev) leaves it as it was.
 */
static int give_console(uid_t uid, struct rrt_error *err)
{
  for (int fd = 0; fd < 3; fd++) {
    struct stat st;
    if (!isatty(fd) || fstat(fd, &st) < 0 || st.st_uid == uid)
      continue;
    if (fchown(fd, uid, (gid_t)-1) < 0 && errno != EINVAL && errno != EPERM && errno != EROFS)
      return rrt_error_errno(err, "process.user.uid %u: chown stdio fd %d", uid, fd);
  }
  return 0;
}

/* Everything but the capabilities, the filter and execve: none of it may run under the
 * container's seccomp filter, which may deny what the runtime itself needs (getcwd, close_range,
 * rt_sigaction...). */
static int before_filter(const struct rrt_exec_ctx *x, char ***envp, struct rrt_error *err)
{
  const struct rrt_process *proc = x->proc;
  /* Already so for exec's process; init is dumpable until start (confine.h). */
  rrt_confine_undumpable();
  if (!x->limits_applied && apply_limits(x->spec, err) < 0)
    return -1;
  if (!proc->terminal && own_session(err) < 0)
    return -1;
  *envp = build_env(proc, x->preserve_fds,
                    x->listen_fds); /* as root: /etc/passwd may be unreadable after */
  /* As runc: the working directory is entered before the user switch, so that one only the
   * runtime may enter (a 0700 volume of root's) still works; refused then (root squashed on
   * NFS), it is tried again as process.user. */
  bool entered = chdir(proc->cwd) == 0;
  if (!entered && errno != EACCES)
    return rrt_error_errno(err, "process.cwd %s", proc->cwd);
  if ((proc->terminal && give_console(proc->user.uid, err) < 0) ||
      rrt_caps_prepare(proc->capabilities, err) < 0 || switch_user(x, err) < 0)
    return -1;
  /* The uid switch set dumpable to fs.suid_dumpable, which may be 1 or 2. */
  rrt_confine_undumpable();
  if (enter_cwd(proc->cwd, entered, err) < 0)
    return -1;
  umask(proc->user.has_umask ? proc->user.umask : 0022);
  /* The startContainer hooks run after this (before_execve): their output goes to the --log
   * file, which stays open (O_CLOEXEC) until the execve; the hooks themselves get none of it. */
  int keep[3] = {x->report_fd};
  size_t n_keep = 1;
  if (rrt_seccomp_filter_listener_fd(x->filter) >= 0)
    keep[n_keep++] = rrt_seccomp_filter_listener_fd(x->filter);
  if (x->before_execve && rrt_log_fd() >= 0)
    keep[n_keep++] = rrt_log_fd();
  if (rrt_close_fds_from(3 + x->preserve_fds, keep, n_keep, err) < 0)
    return -1;
  /* Preserved fds are the container's: they must survive execve. */
  for (int fd = 3; fd < 3 + x->preserve_fds; fd++) {
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0)
      fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
  }
  if (rrt_lsm_apply(proc, err) < 0)
    return -1;
  if (proc->no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return rrt_error_errno(err, "process.noNewPrivileges");
  /* Nothing of the runtime's signal handling reaches the program. */
  rrt_reset_signals();
  return 0;
}

int rrt_process_exec(const struct rrt_exec_ctx *x, struct rrt_error *err)
{
  const struct rrt_process *proc = x->proc;
  const struct rrt_seccomp *sc = x->spec->lnx.seccomp;
  cleanup_strv char **envp = NULL;
  if (before_filter(x, &envp, err) < 0)
    return -1;
  /* The filter goes on as late as it can: with no_new_privs (or CAP_SYS_ADMIN in the final
   * sets) after the capabilities, just before execve; without, loading it needs CAP_SYS_ADMIN,
   * so it goes on just before the capabilities are set, and capset and prctl are all the
   * runtime still does under it. */
  bool early_seccomp = x->filter && needs_caps_for_seccomp(proc);
  if (early_seccomp &&
      (effective_admin(err) < 0 || rrt_seccomp_load(x->filter, sc, x->state_json, err) < 0))
    return rrt_error_wrap(err, "linux.seccomp");
  if (rrt_caps_apply(proc->capabilities, err) < 0)
    return -1;
  rrt_confine_undumpable(); /* capset is a credential change too */
  if (x->filter && !early_seccomp && rrt_seccomp_load(x->filter, sc, x->state_json, err) < 0)
    return rrt_error_wrap(err, "linux.seccomp");
  /* Confined now exactly as the program will be: what is forked from here (the startContainer
   * hooks) is too, under the same filter (and its notify agent), as with runc. */
  if (x->before_execve && x->before_execve(x->before_execve_arg, err) < 0)
    return -1;
  const char *path = env_get(&proc->env, "PATH");
  /* Where create found it: no failed execve per PATH entry before it. Should it be gone or
   * changed since, the search below decides, as if nothing had been found. */
  if (x->exec_path)
    execve(x->exec_path, proc->args.v, envp);
  int r = exec_search(proc->args.v[0], proc->args.v, envp, path ? path : DEFAULT_PATH);
  char text[128];
  return rrt_error_msgf(err, -r, "exec: \"%s\": %s", proc->args.v[0],
                        errno_text(-r, text, sizeof(text)));
}
