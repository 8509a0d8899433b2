/* loaded.c: a container as the verbs after create load it (its state, locked, and its config),
 * its hooks run with its state, and the destruction of everything it has (processes, helpers,
 * cgroups, state); used by create.c, start.c, run.c, kill.c and delete.c. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/container.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/log.h"
#include "rootlessrt/state.h"
#include "rootlessrt/util.h"

bool rrt_kill_and_wait(pid_t pid, unsigned long long start, int timeout_ms)
{
  if (!rrt_proc_same(pid, start))
    return true;
  kill(pid, SIGKILL);
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    /* Our own child (run, failed create) must be reaped to disappear. */
    while (waitpid(pid, NULL, WNOHANG) < 0 && errno == EINTR)
      ;
    if (!rrt_proc_same(pid, start))
      return true;
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return !rrt_proc_same(pid, start);
}

void rrt_loaded_free(struct loaded *l)
{
  free(l->root);
  if (l->dirfd >= 0)
    close(l->dirfd);
  rrt_state_free(&l->st);
  if (!l->spec_borrowed)
    rrt_spec_free(l->spec);
}

/* `known`: the config as create parsed it (run), so the state directory's copy is not parsed
 * again; NULL reads it when want_spec. `broken_ok` (delete --force): a container whose
 * state.json is missing or corrupt loads from its records (l->broken), without a config. */
int rrt_load_container(const struct rrt_global *g, const char *id, bool exclusive, bool want_spec,
                       struct rrt_spec *known, bool broken_ok, struct loaded *l,
                       struct rrt_error *err)
{
  memset(l, 0, sizeof(*l));
  l->dirfd = -1;
  if (rrt_state_root(g->root, false, &l->root, err) < 0)
    return -1;
  if (rrt_state_open(l->root, id, exclusive, &l->dirfd, err) < 0)
    return -1;
  if (rrt_state_read(l->dirfd, &l->st, err) < 0) {
    if (!broken_ok || (err->errnum != ENODATA && err->errnum != EUCLEAN))
      return rrt_error_wrap(err, "container \"%s\"", id);
    rrt_warn("container \"%s\": %s; removing it without its poststop hooks", id,
             rrt_error_msg(err));
    rrt_error_clear(err);
    rrt_state_from_records(l->dirfd, id, &l->st);
    l->broken = true;
    return 0;
  }
  if (want_spec && known) {
    l->spec = known;
    l->spec_borrowed = true;
  } else if (want_spec) {
    cleanup_free char *text = NULL;
    size_t len = 0;
    if (rrt_state_read_file(l->dirfd, "config.json", &text, &len, err) < 0 ||
        rrt_spec_parse(text, len, &l->spec, err) < 0)
      return rrt_error_wrap(err, "container \"%s\"", id);
  }
  return 0;
}

int rrt_loaded_hooks(struct loaded *l, enum rrt_hook_kind kind, const char *status,
                     struct rrt_error *err)
{
  if (!l->spec || l->spec->hooks[kind].n == 0)
    return 0;
  cleanup_free char *json = rrt_state_oci_json(&l->st, status, false);
  return rrt_hooks_run(l->spec, kind, json, err);
}

/* A paused container (delete --force): a frozen task never acts on its SIGKILL under the cgroup
 * v1 freezer, so every process gets it while still frozen (none runs again) and then the
 * cgroup is thawed for it to be delivered. */
static void kill_frozen(const struct rrt_state *st)
{
  struct rrt_cgroup cg;
  rrt_cgroup_load(st, &cg);
  if (rrt_cgroup_exists(&cg) && rrt_cgroup_frozen(&cg)) {
    size_t n = 0;
    struct rrt_error e = RRT_ERROR_INIT;
    if (rrt_cgroup_kill(&cg, SIGKILL, &n, &e) < 0 || rrt_cgroup_freeze(&cg, false, &e) < 0)
      rrt_warn("container \"%s\": killing it frozen: %s", st->id, rrt_error_msg(&e));
    rrt_error_clear(&e);
  }
  rrt_cgroup_free(&cg);
}

/* Stops everything of a container and removes its state; poststop last. */
int rrt_loaded_destroy(struct loaded *l, struct rrt_error *err)
{
  kill_frozen(&l->st);
  if (l->st.pid > 0 && !rrt_kill_and_wait(l->st.pid, l->st.pid_start, 5000))
    return rrt_error_msgf(err, EBUSY, "container \"%s\": init (pid %d) did not die", l->st.id,
                          l->st.pid);
  if (l->st.net_helper > 0)
    rrt_kill_and_wait(l->st.net_helper, l->st.net_helper_start, 2000);
  for (size_t i = 0; i < l->st.n_fuse_helpers; i++)
    rrt_kill_and_wait(l->st.fuse_helper[i], l->st.fuse_helper_start[i], 2000);
  rrt_cgroup_destroy_state(&l->st);
  if (l->broken)
    rrt_state_remove_pending_cgroup(l->dirfd);
  if (rrt_state_remove(l->root, l->st.id, err) < 0)
    return -1;
  struct rrt_error ignored = RRT_ERROR_INIT;
  rrt_loaded_hooks(l, RRT_HOOK_POSTSTOP, "stopped", &ignored);
  rrt_error_clear(&ignored);
  return 0;
}
