/* cmd.h: one entry point per verb (cli/cmd_<verb>.c). */
#ifndef ROOTLESSRT_CMD_H
#define ROOTLESSRT_CMD_H

#include <getopt.h>
#include <stdbool.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/container.h"
#include "rootlessrt/error.h"
#include "rootlessrt/exec.h"

/* argv[0] is the verb. Returns the exit status (>= 0) or -1 with err set. */
typedef int (*rrt_cmd_fn)(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);

int rrt_cmd_create(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_run(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
/* The desktop form of run (an image or root directory and a command): cmd_run_image.c. */
int rrt_cmd_run_image(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_start(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_state(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_kill(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_delete(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_list(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_spec(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_exec(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_ps(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_events(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_pause(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_resume(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_update(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_store(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_pull(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_images(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_rmi(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_check(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_checkpoint(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_restore(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);
int rrt_cmd_features(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err);

/* Shared by the verbs: exactly one positional argument, the container id. */
int rrt_cmd_one_id(int argc, char **argv, int first, const char **id, struct rrt_error *err);
/* The container a cgroup verb (pause, resume, update) acts on: its state, locked until freed,
 * and its cgroup. Declared with cleanup_cgroup_target and RRT_CMD_CGROUP_TARGET_INIT. */
struct rrt_cmd_cgroup_target {
  struct rrt_live l;
  struct rrt_cgroup cg;
};
#define RRT_CMD_CGROUP_TARGET_INIT                                                                 \
  {                                                                                                \
    .l = {.dirfd = -1 }                                                                            \
  }
int rrt_cmd_cgroup_target_load(const struct rrt_global *g, const char *id,
                               struct rrt_cmd_cgroup_target *t, struct rrt_error *err);
void rrt_cmd_cgroup_target_free(struct rrt_cmd_cgroup_target *t);
#define cleanup_cgroup_target __attribute__((cleanup(rrt_cmd_cgroup_target_free)))
/* getopt_long, for every verb's flag parsing. Under the hidden `rootlessrt --list-flags VERB`
 * (rrt_cmd_listing set: the tests and shell completions read it) it prints the verb's flags
 * instead, one a line ("--bundle -b arg", "--quiet -q none"), and exits 0. */
extern bool rrt_cmd_listing;
int rrt_cmd_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);
void rrt_cmd_print_flags(const char *shortopts, const struct option *longopts);
/* getopt_long over a verb's flags: -h/--help sets *help; each other flag goes
 * to on_flag; an unknown flag is an error naming it. */
int rrt_cmd_parse_flags(int argc, char **argv, const char *shortopts, const struct option *longopts,
                        int (*on_flag)(int c, void *arg, struct rrt_error *err), void *arg,
                        bool *help, struct rrt_error *err);
int rrt_cmd_no_flags(int c, void *arg, struct rrt_error *err);
extern const struct option rrt_cmd_help_only[];
/* --help on a verb prints its usage (main.c). */
void rrt_cmd_usage(const char *verb);

/* Each verb's synopsis and description (cli/usage.c). */
struct rrt_verb_doc {
  const char *name;
  const char *usage;
  const char *what;
};
extern const struct rrt_verb_doc rrt_verb_docs[];
extern const size_t rrt_verb_docs_len;
const struct rrt_verb_doc *rrt_verb_doc_find(const char *name);

/* One flag of a verb as `help VERB` and the verb's man page describe it (cli/flag_docs.c): the
 * flag as typed ("-b, --bundle DIR") and one paragraph. An entry without a flag is a heading
 * for the flags after it (run's two forms). */
struct rrt_flag_doc {
  const char *flag;
  const char *text;
};
/* What `help VERB` says after the synopsis and the one-line summary: paragraphs about the verb
 * (separated by "\n\n"; NULL: none), then its flags (ended by an entry of NULLs; NULL: none but
 * -h, --help). A verb without an entry has only the synopsis, the summary and -h. */
struct rrt_verb_help {
  const char *name;
  const char *about;
  const struct rrt_flag_doc *flags;
};
extern const struct rrt_verb_help rrt_verb_helps[];
extern const size_t rrt_verb_helps_len;

#endif
