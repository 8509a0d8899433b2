/* config.c: the ordinary OCI config.json a desktop `run` generates from its flags and the
 * image's config, on the default rootless config `spec --rootless` writes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <sys/capability.h>

#include "internal.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/util.h"

/* podman's default capabilities: what desktop users expect a container's root to hold. */
static const char *const default_caps[] = {
    "CAP_CHOWN",   "CAP_DAC_OVERRIDE",     "CAP_FOWNER",     "CAP_FSETID",
    "CAP_KILL",    "CAP_NET_BIND_SERVICE", "CAP_SETFCAP",    "CAP_SETGID",
    "CAP_SETPCAP", "CAP_SETUID",           "CAP_SYS_CHROOT", NULL};

static size_t strv_n(char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

/* Entrypoint + Cmd, as podman combines them: --entrypoint replaces the image's entrypoint (and
 * drops its Cmd), a command replaces Cmd. */
static int build_args(const struct rrt_run_image_opts *o, const struct rrt_image_config *ic,
                      json_object *proc, struct rrt_error *err)
{
  json_object *a = json_object_new_array();
  if (o->entrypoint_set) {
    if (*o->entrypoint)
      json_object_array_add(a, json_object_new_string(o->entrypoint));
  } else {
    for (size_t i = 0; ic->entrypoint && ic->entrypoint[i]; i++)
      json_object_array_add(a, json_object_new_string(ic->entrypoint[i]));
  }
  if (o->n_cmd) {
    for (size_t i = 0; i < o->n_cmd; i++)
      json_object_array_add(a, json_object_new_string(o->cmd[i]));
  } else if (!o->entrypoint_set) {
    for (size_t i = 0; ic->cmd && ic->cmd[i]; i++)
      json_object_array_add(a, json_object_new_string(ic->cmd[i]));
  }
  json_object_object_add(proc, "args", a);
  if (json_object_array_length(a) == 0)
    return rrt_error_msgf(err, EINVAL,
                          "run: no command: give one after the image (the image "
                          "has no Entrypoint or Cmd)");
  return 0;
}

/* The environment being built: the array in order, and where each KEY is in it, so building it
 * stays linear in the number of entries (an image may carry 100,000). */
struct env {
  json_object *arr;
  json_object *where; /* KEY -> index in arr */
};

/* KEY=VALUE into env, replacing an earlier KEY. A bare KEY takes the caller's value (podman). */
static void env_set(struct env *env, const char *kv)
{
  const char *eq = strchr(kv, '=');
  cleanup_free char *full = NULL;
  if (!eq) {
    const char *v = getenv(kv);
    if (!v)
      return;
    full = xasprintf("%s=%s", kv, v);
    kv = full;
    eq = strchr(kv, '=');
  }
  cleanup_free char *key = xstrndup(kv, (size_t)(eq - kv));
  json_object *idx;
  if (json_object_object_get_ex(env->where, key, &idx)) {
    json_object_array_put_idx(env->arr, (size_t)json_object_get_int64(idx),
                              json_object_new_string(kv));
    return;
  }
  json_object_object_add(env->where, key,
                         json_object_new_int64((int64_t)json_object_array_length(env->arr)));
  json_object_array_add(env->arr, json_object_new_string(kv));
}

static int env_file(struct env *env, const char *path, struct rrt_error *err)
{
  cleanup_free char *text = NULL;
  if (rrt_read_file(path, &text, NULL, err) < 0)
    return rrt_error_wrap(err, "--env-file");
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    while (*line == ' ' || *line == '\t')
      line++;
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
      line[--n] = '\0';
    if (*line && *line != '#')
      env_set(env, line);
  }
  return 0;
}

static int build_env(const struct rrt_run_image_opts *o, const struct rrt_image_config *ic,
                     const char *hostname, json_object *proc, struct rrt_error *err)
{
  json_object *arr = json_object_new_array();
  json_object_object_add(proc, "env", arr);
  struct env e = {arr, json_object_new_object()}, *env = &e;
  env_set(env, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  if (o->tty)
    env_set(env, "TERM=xterm");
  cleanup_free char *host = xasprintf("HOSTNAME=%s", hostname);
  env_set(env, host);
  for (size_t i = 0; ic->env && ic->env[i]; i++)
    if (strchr(ic->env[i], '='))
      env_set(env, ic->env[i]);
  int r = 0;
  for (size_t i = 0; r == 0 && i < o->env_files.n; i++)
    r = env_file(env, o->env_files.v[i], err);
  for (size_t i = 0; r == 0 && i < o->env.n; i++)
    env_set(env, o->env.v[i]);
  json_object_put(e.where);
  return r;
}

static int cap_name(const char *in, char **out, struct rrt_error *err)
{
  cleanup_free char *up = xasprintf("%s%s", strncasecmp(in, "CAP_", 4) ? "CAP_" : "", in);
  for (char *p = up; *p; p++)
    *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
  if (!*in)
    return rrt_error_msgf(err, EINVAL, "run: an empty capability name");
  *out = steal_ptr(&up);
  return 0;
}

static bool list_has(json_object *a, const char *s)
{
  for (size_t i = 0; i < json_object_array_length(a); i++)
    if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s) == 0)
      return true;
  return false;
}

/* --cap-add / --cap-drop over podman's default list; ALL means every one the runtime knows. */
static int build_caps(const struct rrt_run_image_opts *o, json_object *proc, struct rrt_error *err)
{
  json_object *set = json_object_new_array();
  bool drop_all = false;
  for (size_t i = 0; i < o->cap_drop.n; i++)
    drop_all |= strcasecmp(o->cap_drop.v[i], "all") == 0;
  for (size_t i = 0; !drop_all && default_caps[i]; i++)
    json_object_array_add(set, json_object_new_string(default_caps[i]));
  for (size_t i = 0; i < o->cap_add.n; i++) {
    if (strcasecmp(o->cap_add.v[i], "all") == 0) {
      for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++) {
        char *lower = cap_to_name(c);
        cleanup_free char *n = NULL;
        if (lower && cap_name(lower, &n, NULL) == 0 && !list_has(set, n))
          json_object_array_add(set, json_object_new_string(n));
        cap_free(lower);
      }
      continue;
    }
    cleanup_free char *n = NULL;
    if (cap_name(o->cap_add.v[i], &n, err) < 0)
      goto fail;
    if (!list_has(set, n))
      json_object_array_add(set, json_object_new_string(n));
  }
  for (size_t i = 0; i < o->cap_drop.n && !drop_all; i++) {
    cleanup_free char *n = NULL;
    if (cap_name(o->cap_drop.v[i], &n, err) < 0)
      goto fail;
    for (size_t k = json_object_array_length(set); k-- > 0;)
      if (strcmp(json_object_get_string(json_object_array_get_idx(set, k)), n) == 0)
        json_object_array_del_idx(set, k, 1);
  }
  json_object *caps = json_object_new_object();
  const char *const sets[] = {"bounding", "effective", "permitted"};
  for (size_t i = 0; i < 3; i++)
    json_object_object_add(caps, sets[i], json_object_get(set));
  json_object_put(set);
  json_object_object_add(proc, "capabilities", caps);
  return 0;
fail:
  json_object_put(set);
  return -1;
}

/* -v SRC:DST[:OPTS] (ro, rw; SELinux z/Z accepted and ignored) and --tmpfs DST[:OPTS]. */
static int add_volume(json_object *mounts, const char *spec, struct rrt_error *err)
{
  cleanup_free char *copy = xstrdup(spec);
  char *dst = strchr(copy, ':');
  if (!dst || dst == copy || dst[1] != '/')
    return rrt_error_msgf(err, EINVAL, "-v \"%s\": expected SRC:DST[:ro] with an absolute DST",
                          spec);
  *dst++ = '\0';
  char *opts = strchr(dst, ':');
  if (opts)
    *opts++ = '\0';
  char real[4096];
  if (!realpath(copy, real))
    return rrt_error_errno(err, "-v \"%s\": source %s", spec, copy);
  json_object *m = json_object_new_object();
  json_object *o = json_object_new_array();
  json_object_array_add(o, json_object_new_string("rbind"));
  char *save = NULL;
  for (char *t = opts ? strtok_r(opts, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "ro") == 0 || strcmp(t, "rw") == 0)
      json_object_array_add(o, json_object_new_string(t));
    else if (strcmp(t, "z") && strcmp(t, "Z"))
      return json_object_put(m), json_object_put(o),
             rrt_error_msgf(err, EINVAL, "-v \"%s\": unknown option \"%s\" (ro, rw)", spec, t);
  }
  json_object_object_add(m, "destination", json_object_new_string(dst));
  json_object_object_add(m, "type", json_object_new_string("bind"));
  json_object_object_add(m, "source", json_object_new_string(real));
  json_object_object_add(m, "options", o);
  json_object_array_add(mounts, m);
  return 0;
}

static int add_tmpfs(json_object *mounts, const char *spec, struct rrt_error *err)
{
  if (spec[0] != '/')
    return rrt_error_msgf(err, EINVAL, "--tmpfs \"%s\": the destination must be absolute", spec);
  cleanup_free char *copy = xstrdup(spec);
  char *opts = strchr(copy, ':');
  if (opts)
    *opts++ = '\0';
  json_object *m = json_object_new_object();
  json_object *o = json_object_new_array();
  json_object_array_add(o, json_object_new_string("nosuid"));
  json_object_array_add(o, json_object_new_string("nodev"));
  char *save = NULL;
  for (char *t = opts ? strtok_r(opts, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
    json_object_array_add(o, json_object_new_string(t));
  json_object_object_add(m, "destination", json_object_new_string(copy));
  json_object_object_add(m, "type", json_object_new_string("tmpfs"));
  json_object_object_add(m, "source", json_object_new_string("tmpfs"));
  json_object_object_add(m, "options", o);
  json_object_array_add(mounts, m);
  return 0;
}

static bool has_destination(json_object *mounts, const char *dst)
{
  for (size_t i = 0; i < json_object_array_length(mounts); i++) {
    json_object *d;
    if (json_object_object_get_ex(json_object_array_get_idx(mounts, i), "destination", &d) &&
        strcmp(json_object_get_string(d), dst) == 0)
      return true;
  }
  return false;
}

/* --read-only with --read-only-tmpfs (podman's default): /run, /tmp and /var/tmp stay
 * writable, as tmpfs, unless a volume or --tmpfs has that destination. */
static int read_only_tmpfs(const struct rrt_run_image_opts *o, json_object *mounts,
                           struct rrt_error *err)
{
  static const char *const dirs[] = {"/run:mode=755", "/tmp:mode=1777", "/var/tmp:mode=1777"};
  if (!o->read_only || o->no_read_only_tmpfs)
    return 0;
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    cleanup_free char *dst = xstrndup(dirs[i], (size_t)(strchr(dirs[i], ':') - dirs[i]));
    if (!has_destination(mounts, dst) && add_tmpfs(mounts, dirs[i], err) < 0)
      return -1;
  }
  return 0;
}

/* The overlay on "/" first, the config's defaults, then volumes and tmpfs in flag order. */
static int build_mounts(const struct rrt_run_image_opts *o, const struct rrt_run_plan *p,
                        json_object *doc, struct rrt_error *err)
{
  json_object *old = NULL, *mounts = json_object_new_array();
  json_object_object_get_ex(doc, "mounts", &old);
  json_object *ov = json_object_new_object();
  size_t n = strv_n(p->image->lowers);
  size_t len = 1;
  for (size_t i = 0; i < n; i++)
    len += strlen(p->image->lowers[i]) + 1;
  cleanup_free char *lower = xzalloc(len + 16);
  for (size_t i = 0; i < n; i++) {
    strcat(lower, i ? ":" : "");
    strcat(lower, p->image->lowers[i]);
  }
  json_object *opts = json_object_new_array();
  cleanup_free char *l = xasprintf("lowerdir=%s", lower);
  json_object_array_add(opts, json_object_new_string(l));
  cleanup_free char *u = xasprintf("upperdir=%s", p->upper);
  cleanup_free char *w = xasprintf("workdir=%s", p->work);
  json_object_array_add(opts, json_object_new_string(u));
  json_object_array_add(opts, json_object_new_string(w));
  json_object_object_add(ov, "destination", json_object_new_string("/"));
  json_object_object_add(ov, "type", json_object_new_string("overlay"));
  json_object_object_add(ov, "source", json_object_new_string("overlay"));
  json_object_object_add(ov, "options", opts);
  json_object_array_add(mounts, ov);
  for (size_t i = 0; old && i < json_object_array_length(old); i++)
    json_object_array_add(mounts, json_object_get(json_object_array_get_idx(old, i)));
  json_object_object_add(doc, "mounts", mounts);
  for (size_t i = 0; i < o->volumes.n; i++)
    if (add_volume(mounts, o->volumes.v[i], err) < 0)
      return -1;
  for (size_t i = 0; i < o->tmpfs.n; i++)
    if (add_tmpfs(mounts, o->tmpfs.v[i], err) < 0)
      return -1;
  return read_only_tmpfs(o, mounts, err);
}

static json_object *idmap(unsigned long ctr, unsigned long host, unsigned long size)
{
  json_object *m = json_object_new_object();
  json_object_object_add(m, "containerID", json_object_new_int64((int64_t)ctr));
  json_object_object_add(m, "hostID", json_object_new_int64((int64_t)host));
  json_object_object_add(m, "size", json_object_new_int64((int64_t)size));
  return m;
}

/* --userns keep-id: the caller's id inside is its own, every other id is where the store put
 * it (container k -> the k-th subordinate id), so the image's files keep their owners; the
 * image's root files (the caller's on the host) appear as the caller's id, as in podman. */
static json_object *keep_id_maps(unsigned long self, unsigned long id, unsigned long start,
                                 unsigned long count)
{
  json_object *a = json_object_new_array();
  json_object_array_add(a, idmap(0, start + id - 1, 1));
  if (id > 1)
    json_object_array_add(a, idmap(1, start, id - 1));
  json_object_array_add(a, idmap(id, self, 1));
  if (count > id)
    json_object_array_add(a, idmap(id + 1, start + id, count - id));
  return a;
}

static int apply_security_opts(const struct rrt_run_image_opts *o, json_object *doc,
                               json_object *proc, json_object *lnx, struct rrt_error *err)
{
  for (size_t i = 0; i < o->security_opts.n; i++) {
    const char *s = o->security_opts.v[i];
    if (strcmp(s, "no-new-privileges") == 0 || strcmp(s, "no-new-privileges=true") == 0) {
      json_object_object_add(proc, "noNewPrivileges", json_object_new_boolean(1));
    } else if (strcmp(s, "seccomp=unconfined") == 0 || strcmp(s, "label=disable") == 0 ||
               strcmp(s, "apparmor=unconfined") == 0 || strncmp(s, "label=", 6) == 0) {
      continue;
    } else if (strncmp(s, "seccomp=", 8) == 0) {
      json_object *prof = json_object_from_file(s + 8);
      if (!prof)
        return rrt_error_msgf(err, EINVAL, "--security-opt %s: cannot read a JSON profile from %s",
                              s, s + 8);
      json_object_object_add(lnx, "seccomp", prof);
    } else if (strncmp(s, "apparmor=", 9) == 0) {
      json_object_object_add(proc, "apparmorProfile", json_object_new_string(s + 9));
    } else if (strncmp(s, "mask=", 5) == 0 || strncmp(s, "unmask=", 7) == 0) {
      return rrt_error_msgf(err, ENOTSUP, "--security-opt %s: not supported", s);
    } else {
      return rrt_error_msgf(err, EINVAL,
                            "--security-opt \"%s\": unknown (no-new-privileges, "
                            "seccomp=FILE|unconfined, apparmor=P, label=disable)",
                            s);
    }
  }
  (void)doc;
  return 0;
}

static int build_user(const struct rrt_run_image_opts *o, const struct rrt_run_plan *p,
                      json_object *proc, struct rrt_error *err)
{
  const char *u = o->user ? o->user : p->image->config.user;
  uid_t uid = 0;
  gid_t gid = 0;
  if (o->keep_id && !o->user) {
    uid = p->keep_uid;
    gid = p->keep_gid;
  } else if (u && *u && rrt_run_resolve_user(u, p->image->lowers, &uid, &gid, err) < 0) {
    return rrt_error_wrap(err, "run: %s: %s", o->ref, o->user ? "-u" : "the image's User");
  }
  json_object *user = json_object_new_object();
  json_object_object_add(user, "uid", json_object_new_int64(uid));
  json_object_object_add(user, "gid", json_object_new_int64(gid));
  json_object_object_add(proc, "user", user);
  return 0;
}

static void add_annotation(json_object *doc, const char *k, const char *v)
{
  json_object *a = NULL;
  if (!json_object_object_get_ex(doc, "annotations", &a)) {
    a = json_object_new_object();
    json_object_object_add(doc, "annotations", a);
  }
  json_object_object_add(a, k, json_object_new_string(v));
}

static void build_annotations(const struct rrt_run_image_opts *o, const struct rrt_run_plan *p,
                              json_object *doc)
{
  add_annotation(doc, "rootlessrt.overlay", o->overlay ? o->overlay : "auto");
  const char *net = o->network ? o->network : (o->publish.n ? "slirp" : "none");
  add_annotation(doc, "rootlessrt.network", net);
  if (o->publish.n) {
    size_t len = 1;
    for (size_t i = 0; i < o->publish.n; i++)
      len += strlen(o->publish.v[i]) + 1;
    cleanup_free char *all = xzalloc(len);
    for (size_t i = 0; i < o->publish.n; i++) {
      strcat(all, i ? "," : "");
      strcat(all, o->publish.v[i]);
    }
    add_annotation(doc, "rootlessrt.publish", all);
  }
  if (p->image->config.stop_signal)
    add_annotation(doc, "org.opencontainers.image.stopSignal", p->image->config.stop_signal);
}

static int build_process(const struct rrt_run_image_opts *o, const struct rrt_run_plan *p,
                         json_object *doc, const char *hostname, struct rrt_error *err)
{
  json_object *proc = NULL, *lnx = NULL;
  json_object_object_get_ex(doc, "process", &proc);
  json_object_object_get_ex(doc, "linux", &lnx);
  const struct rrt_image_config *ic = &p->image->config;
  json_object_object_add(proc, "terminal", json_object_new_boolean(o->tty));
  const char *cwd = o->workdir ? o->workdir : (ic->workdir && *ic->workdir ? ic->workdir : "/");
  if (cwd[0] != '/' && o->workdir)
    return rrt_error_msgf(err, EINVAL, "-w \"%s\": the working directory must be absolute", cwd);
  if (cwd[0] != '/')
    return rrt_error_msgf(err, EINVAL,
                          "run: %s: the image's WorkingDir \"%s\" is not absolute (give one "
                          "with -w)",
                          o->ref, cwd);
  json_object_object_add(proc, "cwd", json_object_new_string(cwd));
  json_object_object_add(proc, "noNewPrivileges", json_object_new_boolean(0));
  json_object_object_del(proc, "rlimits"); /* the caller's, as podman's rootless default */
  if (build_args(o, ic, proc, err) < 0 || build_env(o, ic, hostname, proc, err) < 0 ||
      build_caps(o, proc, err) < 0 || build_user(o, p, proc, err) < 0 ||
      apply_security_opts(o, doc, proc, lnx, err) < 0)
    return -1;
  if (o->keep_id) {
    json_object_object_add(lnx, "uidMappings",
                           keep_id_maps(p->keep_uid, p->keep_uid, p->sub_start, p->sub_count));
    json_object_object_add(lnx, "gidMappings",
                           keep_id_maps(p->keep_gid, p->keep_gid, p->sub_start, p->sub_count));
  }
  return 0;
}

int rrt_run_config(const struct rrt_run_image_opts *o, const struct rrt_run_plan *p, char **json,
                   struct rrt_error *err)
{
  cleanup_free char *base = rrt_spec_default_json(true);
  json_object *doc = json_tokener_parse(base);
  if (!doc)
    return rrt_error_msgf(err, EINVAL, "run: the default config does not parse");
  cleanup_free char *short_id = xstrndup(p->id, 12);
  const char *hostname = o->hostname ? o->hostname : short_id;
  json_object *root = json_object_new_object();
  /* The overlay on / is mounted on the bundle directory itself: no directory to make. */
  json_object_object_add(root, "path", json_object_new_string("."));
  json_object_object_add(root, "readonly", json_object_new_boolean(o->read_only));
  json_object_object_add(doc, "root", root);
  json_object_object_add(doc, "hostname", json_object_new_string(hostname));
  if (build_process(o, p, doc, hostname, err) < 0 || build_mounts(o, p, doc, err) < 0) {
    json_object_put(doc);
    return -1;
  }
  build_annotations(o, p, doc);
  *json = xstrdup(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(doc);
  return 0;
}
