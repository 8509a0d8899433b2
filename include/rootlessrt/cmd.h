/* cmd.h: one entry point per verb (src/cmd_<verb>.c). */
#ifndef ROOTLESSRT_CMD_H
#define ROOTLESSRT_CMD_H

#include "rootlessrt/container.h"
#include "rootlessrt/error.h"

/* argv[0] is the verb. Returns the exit status (>= 0) or -1 with err set. */
typedef int (*rrt_cmd_fn)(const struct rrt_global *g, int argc, char **argv,
                          struct rrt_error *err);

int rrt_cmd_create(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_run(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_start(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_state(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_kill(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_delete(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_list(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_spec(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);

/* Shared by the verbs: exactly one positional argument, the container id. */
int rrt_cmd_one_id(int argc, char **argv, int first, const char **id, struct rrt_error *err);
/* --help on a verb prints its usage (main.c). */
void rrt_cmd_usage(const char *verb);

#endif
