/* internal.h: what the files of container/ share about a container the verbs after create
 * load (loaded.c). Nothing outside container/ includes it. */
#ifndef ROOTLESSRT_CONTAINER_INTERNAL_H
#define ROOTLESSRT_CONTAINER_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/state.h"

struct loaded {
  char *root;
  int dirfd;
  struct rrt_state st;
  struct rrt_spec *spec;
  bool spec_borrowed; /* run's own parse, not ours to free */
  bool broken;        /* state.json missing or corrupt: st is what the records say */
};

void rrt_loaded_free(struct loaded *l);
/* `known`: the config as create parsed it (run), so the state directory's copy is not parsed
 * again; NULL reads it when want_spec. `broken_ok` (delete --force): a container whose
 * state.json is missing or corrupt loads from its records (l->broken), without a config. */
int rrt_load_container(const struct rrt_global *g, const char *id, bool exclusive, bool want_spec,
                       struct rrt_spec *known, bool broken_ok, struct loaded *l,
                       struct rrt_error *err);
int rrt_loaded_hooks(struct loaded *l, enum rrt_hook_kind kind, const char *status,
                     struct rrt_error *err);
/* Stops everything of a container and removes its state; poststop last. */
int rrt_loaded_destroy(struct loaded *l, struct rrt_error *err);
/* SIGKILL to pid (if it is still the process that started at start), waited for up to
 * timeout_ms: false when it did not die. */
bool rrt_kill_and_wait(pid_t pid, unsigned long long start, int timeout_ms);
/* delete (delete.c), with the config run already parsed (known) or NULL. */
int rrt_container_delete_known(const struct rrt_global *g, const char *id, bool force,
                               struct rrt_spec *known, struct rrt_error *err);

#endif
