/* hostfds.c: bind sources and device nodes opened with the runtime's own credentials, for
 * real root's containers that have a user namespace (see hostfds.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rootlessrt/hostfds.h"
#include "rootlessrt/log.h"
#include "rootlessrt/rootfs.h"
#include "rootlessrt/util.h"

static bool has_opt(const struct rrt_mount *m, const char *name)
{
  for (size_t i = 0; i < m->options.n && m->options.v[i]; i++)
    if (strcmp(m->options.v[i], name) == 0)
      return true;
  return false;
}

/* The idmapping of mounts[i] as a user namespace fd: the mount's own mappings, else the
 * container's (the user namespace it joins, or the maps the one it creates will have). */
static int idmap_userns(const struct rrt_mount *m, size_t i, const struct rrt_userns_plan *plan,
                        struct rrt_error *err)
{
  int fd;
  if (m->uid_mappings.n) {
    fd = rrt_idmap_userns(&m->uid_mappings, &m->gid_mappings, err);
  } else if (plan->join) {
    fd = open(plan->join, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      rrt_error_errno(err, "open %s", plan->join);
  } else if (plan->create) {
    fd = rrt_idmap_userns(&plan->uid_map, &plan->gid_map, err);
  } else {
    fd = rrt_error_set(err, EINVAL,
                       "no uidMappings and gidMappings, and the container has no user "
                       "namespace whose mapping it could take");
  }
  if (fd < 0)
    rrt_error_wrap(err, "mounts[%zu] (%s): idmap", i, m->destination);
  return fd;
}

static int open_bind_sources(const struct rrt_spec *spec, const struct rrt_userns_plan *plan,
                             struct rrt_hostfds *h, struct rrt_error *err)
{
  h->n_mounts = spec->n_mounts;
  h->mount_fds = xmalloc((spec->n_mounts ? spec->n_mounts : 1) * sizeof(int));
  for (size_t i = 0; i < spec->n_mounts; i++)
    h->mount_fds[i] = -1;
  for (size_t i = 0; i < spec->n_mounts; i++) {
    const struct rrt_mount *m = &spec->mounts[i];
    bool rbind = has_opt(m, "rbind");
    bool bind = rbind || has_opt(m, "bind") || (m->type && strcmp(m->type, "bind") == 0);
    if (!bind || !m->source)
      continue;
    if (rrt_mount_idmapped(m)) {
      cleanup_close int ns = idmap_userns(m, i, plan, err);
      if (ns < 0)
        return -1;
      h->mount_fds[i] = rrt_idmap_clone(m->source, rbind, rrt_mount_idmap_recursive(m), ns, err);
      if (h->mount_fds[i] < 0)
        return rrt_error_wrap(err, "mounts[%zu] (%s)", i, m->destination);
      continue;
    }
    if (!plan->create)
      continue; /* without a user namespace of its own, init opens what it binds itself */
    unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (rbind ? AT_RECURSIVE : 0);
    h->mount_fds[i] = open_tree(AT_FDCWD, m->source, flags);
    if (h->mount_fds[i] < 0)
      rrt_debug("mounts[%zu]: open_tree %s: %s; init opens it", i, m->source, strerror(errno));
  }
  return 0;
}

bool rrt_hostfds_needed(const struct rrt_spec *spec, const struct rrt_userns_plan *plan)
{
  if (!rrt_host_privileged())
    return false;
  if (plan->create)
    return true;
  for (size_t i = 0; i < spec->n_mounts; i++)
    if (rrt_mount_idmapped(&spec->mounts[i]))
      return true;
  return false;
}

/* The host id a container id maps to; (uint32_t)-1 when the maps do not cover it. */
static uint32_t to_host(const struct rrt_id_mappings *maps, uint32_t id)
{
  for (size_t i = 0; i < maps->n; i++) {
    const struct rrt_id_mapping *m = &maps->v[i];
    if (id >= m->container_id && id - m->container_id < m->size)
      return m->host_id + (id - m->container_id);
  }
  return (uint32_t)-1;
}

static int make_node(const struct rrt_device *d, const struct rrt_userns_plan *plan, int dirfd,
                     const char *name, struct rrt_error *err)
{
  mode_t type = d->type == 'b' ? S_IFBLK : S_IFCHR;
  mode_t perm = d->has_file_mode ? (d->file_mode & 07777) : 0666;
  dev_t dev = makedev((unsigned int)d->major, (unsigned int)d->minor);
  if (mknodat(dirfd, name, type | perm, dev) < 0)
    return rrt_error_errno(err, "mknod");
  if (fchmodat(dirfd, name, perm, 0) < 0) /* mknod honours the umask */
    return rrt_error_errno(err, "chmod");
  uint32_t uid = to_host(&plan->uid_map, d->has_uid ? d->uid : 0);
  uint32_t gid = to_host(&plan->gid_map, d->has_gid ? d->gid : 0);
  if (uid == (uint32_t)-1 || gid == (uint32_t)-1)
    return rrt_error_msgf(err, EINVAL, "uid %u or gid %u is not mapped in the user namespace",
                          d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0);
  if (fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
    return rrt_error_errno(err, "chown");
  return 0;
}

/* The node directories of creates that were killed before they removed theirs (.devices-PID-*,
 * PID gone): device nodes, however private the directory, are not left on the host's disk. */
static void sweep_stale(const char *dir_parent)
{
  DIR *d = opendir(dir_parent);
  if (!d)
    return;
  struct dirent *de;
  while ((de = readdir(d))) {
    char *end = NULL;
    if (strncmp(de->d_name, ".devices-", 9) != 0)
      continue;
    long pid = strtol(de->d_name + 9, &end, 10);
    if (pid <= 0 || *end != '-' || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *sub = fd < 0 ? NULL : fdopendir(fd);
    if (!sub) {
      if (fd >= 0)
        close(fd);
      continue;
    }
    struct dirent *n;
    while ((n = readdir(sub)))
      if (strcmp(n->d_name, ".") && strcmp(n->d_name, ".."))
        (void)unlinkat(dirfd(sub), n->d_name, 0);
    closedir(sub);
    if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
      rrt_debug("linux.devices: removed %s/%s, a killed create's", dir_parent, de->d_name);
  }
  closedir(d);
}

static int make_device_nodes(const struct rrt_spec *spec, const struct rrt_userns_plan *plan,
                             const char *dir_parent, struct rrt_hostfds *h, struct rrt_error *err)
{
  h->n_devices = spec->has_linux ? spec->lnx.n_devices : 0;
  h->device_fds = xmalloc((h->n_devices ? h->n_devices : 1) * sizeof(int));
  for (size_t i = 0; i < h->n_devices; i++)
    h->device_fds[i] = -1;
  for (size_t i = 0; i < h->n_devices; i++) {
    const struct rrt_device *d = &spec->lnx.devices[i];
    if (d->type != 'c' && d->type != 'u' && d->type != 'b')
      continue; /* FIFOs are made inside; unknown types are init's error */
    if (!h->dev_dir) {
      sweep_stale(dir_parent);
      h->dev_dir = xasprintf("%s/.devices-%d-XXXXXX", dir_parent, (int)getpid());
      if (!mkdtemp(h->dev_dir)) {
        int e = errno;
        free(h->dev_dir);
        h->dev_dir = NULL;
        errno = e;
        return rrt_error_errno(err, "linux.devices: a private directory in %s", dir_parent);
      }
      h->dev_dirfd = open(h->dev_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (h->dev_dirfd < 0)
        return rrt_error_errno(err, "open %s", h->dev_dir);
    }
    char name[32];
    snprintf(name, sizeof(name), "%zu", i);
    if (make_node(d, plan, h->dev_dirfd, name, err) < 0)
      return rrt_error_wrap(err, "linux.devices[%zu] (%s)", i, d->path ? d->path : "");
    h->device_fds[i] = open_tree(h->dev_dirfd, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (h->device_fds[i] < 0)
      return rrt_error_errno(err, "linux.devices[%zu] (%s): open_tree", i, d->path);
    /* The state root is often on a nodev /run: the bind must open the device all the same. */
    struct mount_attr attr = {.attr_clr = MOUNT_ATTR_NODEV};
    if (mount_setattr(h->device_fds[i], "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
      return rrt_error_errno(err, "linux.devices[%zu] (%s): clear nodev", i, d->path);
  }
  return 0;
}

int rrt_hostfds_open(const struct rrt_spec *spec, const struct rrt_userns_plan *plan,
                     const char *dir_parent, struct rrt_hostfds *out, struct rrt_error *err)
{
  memset(out, 0, sizeof(*out));
  out->dev_dirfd = -1;
  if (open_bind_sources(spec, plan, out, err) < 0 ||
      (plan->create && make_device_nodes(spec, plan, dir_parent, out, err) < 0)) {
    rrt_hostfds_release(out);
    return -1;
  }
  return 0;
}

static void close_all(int *fds, size_t n)
{
  for (size_t i = 0; fds && i < n; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  free(fds);
}

void rrt_hostfds_release(struct rrt_hostfds *h)
{
  if (h->dev_dir && h->dev_dirfd >= 0) {
    /* The detached binds keep their nodes; the names go. */
    for (size_t i = 0; i < h->n_devices; i++) {
      char name[32];
      snprintf(name, sizeof(name), "%zu", i);
      (void)unlinkat(h->dev_dirfd, name, 0);
    }
    close(h->dev_dirfd);
    h->dev_dirfd = -1;
  }
  if (h->dev_dir && rmdir(h->dev_dir) < 0 && errno != ENOENT)
    rrt_warn("linux.devices: cannot remove %s: %s", h->dev_dir, strerror(errno));
  free(h->dev_dir);
  h->dev_dir = NULL;
  close_all(h->mount_fds, h->n_mounts);
  close_all(h->device_fds, h->n_devices);
  h->mount_fds = h->device_fds = NULL;
  h->n_mounts = h->n_devices = 0;
}
