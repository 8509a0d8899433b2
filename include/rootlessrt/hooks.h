/* hooks.h: running OCI lifecycle hooks (config.md, runtime.md). */
#ifndef ROOTLESSRT_HOOKS_H
#define ROOTLESSRT_HOOKS_H

#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

/*
 * Runs every hook of `kind` in order, each with state_json on stdin, exactly
 * its env, its args (args[0] included; path when absent), its timeout (kills
 * the hook's whole process group). stdout/stderr go to the runtime log; on
 * failure the tail of stderr is in the message. Stops at the first failure:
 * "createRuntime hook #0 (/path): exited with status 1: <stderr tail>".
 * poststop never stops: failures are logged as warnings and 0 is returned.
 */
int rrt_hooks_run(const struct rrt_spec *spec, enum rrt_hook_kind kind, const char *state_json,
                  struct rrt_error *err);

#endif
