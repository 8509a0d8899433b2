/* cmd_check.c: `check [--json] [--storage DIR]`: what a rootless setup needs, one line per item
 * with the fix; exit status 1 when an item fails. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "rootlessrt/check.h"
#include "rootlessrt/cmd.h"
#include "rootlessrt/util.h"

struct check_flags {
  bool json;
  const char *storage;
};

static int check_flag(int c, void *arg, struct rrt_error *err)
{
  struct check_flags *f = arg;
  if (c == 'j')
    f->json = true;
  else if (c == 's')
    f->storage = optarg;
  return 0;
}

static void print_text(const struct rrt_check *c, const int count[3])
{
  printf("rootlessrt check: %s (%s family), user %s (uid %u)\n", c->distro_name,
         rrt_check_distro_family(c->distro), c->user, (unsigned)c->uid);
  for (size_t i = 0; i < c->n; i++) {
    const struct rrt_check_item *it = &c->items[i];
    printf("%-4s  %-14s  %s%s%s\n", rrt_check_level_name(it->level), it->name, it->found,
           it->fix ? "  -> fix: " : "", it->fix ? it->fix : "");
  }
  printf("%d ok, %d warn, %d fail\n", count[RRT_CHECK_OK], count[RRT_CHECK_WARN],
         count[RRT_CHECK_FAIL]);
}

static void print_json(const struct rrt_check *c, const int count[3])
{
  json_object *root = json_object_new_object();
  json_object *d = json_object_new_object();
  json_object_object_add(d, "id", json_object_new_string(c->distro_id));
  json_object_object_add(d, "name", json_object_new_string(c->distro_name));
  json_object_object_add(d, "family", json_object_new_string(rrt_check_distro_family(c->distro)));
  json_object_object_add(root, "distribution", d);
  json_object *u = json_object_new_object();
  json_object_object_add(u, "name", json_object_new_string(c->user));
  json_object_object_add(u, "uid", json_object_new_int64(c->uid));
  json_object_object_add(u, "gid", json_object_new_int64(c->gid));
  json_object_object_add(root, "user", u);
  json_object *items = json_object_new_array();
  for (size_t i = 0; i < c->n; i++) {
    const struct rrt_check_item *it = &c->items[i];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(it->name));
    json_object_object_add(o, "status", json_object_new_string(rrt_check_level_name(it->level)));
    json_object_object_add(o, "found", json_object_new_string(it->found));
    json_object_object_add(o, "fix", it->fix ? json_object_new_string(it->fix) : NULL);
    json_object_array_add(items, o);
  }
  json_object_object_add(root, "items", items);
  json_object *s = json_object_new_object();
  json_object_object_add(s, "ok", json_object_new_int(count[RRT_CHECK_OK]));
  json_object_object_add(s, "warn", json_object_new_int(count[RRT_CHECK_WARN]));
  json_object_object_add(s, "fail", json_object_new_int(count[RRT_CHECK_FAIL]));
  json_object_object_add(root, "summary", s);
  puts(json_object_to_json_string_ext(root,
                                      JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(root);
}

int rrt_cmd_check(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                       {"storage", required_argument, NULL, 's'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  struct check_flags f = {0};
  bool help = false;
  if (rrt_cmd_parse_flags(argc, argv, "+h", opts, check_flag, &f, &help, err) < 0)
    return -1;
  if (help) {
    rrt_cmd_usage("check");
    return 0;
  }
  if (optind < argc)
    return rrt_error_msgf(err, EINVAL, "check: unexpected argument \"%s\"", argv[optind]);
  struct rrt_check c = {.prefix = getenv("ROOTLESSRT_CHECK_ROOT"), .storage = f.storage};
  rrt_check_run(&c);
  int count[3] = {0, 0, 0};
  for (size_t i = 0; i < c.n; i++)
    count[c.items[i].level]++;
  if (f.json)
    print_json(&c, count);
  else
    print_text(&c, count);
  fflush(stdout);
  rrt_check_free(&c);
  return count[RRT_CHECK_FAIL] ? 1 : 0;
}
