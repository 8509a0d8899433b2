/* cmd_common.c: flag-parsing pieces shared by the verbs, and the container the cgroup verbs load.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/util.h"

int rrt_cmd_one_id(int argc, char **argv, int first, const char **id, struct rrt_error *err)
{
  if (first >= argc)
    return rrt_error_msgf(err, EINVAL, "%s: a container id is required", argv[0]);
  if (first + 1 < argc)
    return rrt_error_msgf(err, EINVAL, "%s: unexpected argument \"%s\" after the container id",
                          argv[0], argv[first + 1]);
  *id = argv[first];
  return 0;
}

int rrt_cmd_cgroup_target_load(const struct rrt_global *g, const char *id,
                               struct rrt_cmd_cgroup_target *t, struct rrt_error *err)
{
  if (rrt_live_load(g, id, true, true, false, &t->l, err) < 0)
    return -1;
  rrt_cgroup_load(&t->l.st, &t->cg);
  return 0;
}

void rrt_cmd_cgroup_target_free(struct rrt_cmd_cgroup_target *t)
{
  rrt_cgroup_free(&t->cg);
  rrt_live_free(&t->l);
}

bool rrt_cmd_listing;

void rrt_cmd_print_flags(const char *shortopts, const struct option *longopts)
{
  static const char *const arg[] = {"none", "arg", "optional"};
  for (const struct option *o = longopts; o->name; o++) {
    if (strcmp(o->name, "list-flags") == 0) /* the listing's own switch */
      continue;
    const char *s = o->val > 0 && o->val < 128 ? strchr(shortopts, o->val) : NULL;
    if (s && o->val != ':' && o->val != '+')
      printf("--%s -%c %s\n", o->name, o->val, arg[o->has_arg]);
    else
      printf("--%s %s\n", o->name, arg[o->has_arg]);
  }
  for (const char *s = shortopts; *s; s++) {
    if (*s == '+' || *s == ':' || *s == '-')
      continue;
    bool has_long = false;
    for (const struct option *o = longopts; o->name; o++)
      has_long |= o->val == *s;
    if (!has_long)
      printf("-%c %s\n", *s, s[1] == ':' ? "arg" : "none");
  }
}

int rrt_cmd_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
  if (rrt_cmd_listing) {
    rrt_cmd_print_flags(shortopts, longopts);
    fflush(stdout);
    exit(0);
  }
  return getopt_long(argc, argv, shortopts, longopts, NULL);
}

int rrt_cmd_parse_flags(int argc, char **argv, const char *shortopts, const struct option *longopts,
                        int (*on_flag)(int c, void *arg, struct rrt_error *err), void *arg,
                        bool *help, struct rrt_error *err)
{
  /* 0, not 1, makes glibc's getopt read shortopts' ordering again: without "+" the flags may
   * come after the operands too (main parsed the global ones with "+"). */
  optind = shortopts[0] == '+' ? 1 : 0;
  opterr = 0;
  int c;
  while ((c = rrt_cmd_getopt(argc, argv, shortopts, longopts)) != -1) {
    if (c == 'h') {
      *help = true;
      return 0;
    }
    if (c == '?' || c == ':')
      return rrt_error_msgf(err, EINVAL, "%s: unknown flag %s (see `rootlessrt help %s`)", argv[0],
                            argv[optind - 1], argv[0]);
    if (on_flag(c, arg, err) < 0)
      return -1;
  }
  return 0;
}

int rrt_cmd_no_flags(int c, void *arg, struct rrt_error *err)
{
  return 0;
}

const struct option rrt_cmd_help_only[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
