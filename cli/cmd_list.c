/* cmd_list.c: `list [-f table|json] [-q]`: every container under the root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/log.h"
#include "rootlessrt/state.h"
#include "rootlessrt/util.h"

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Container ids under root, sorted; an absent root is an empty list. */
static int list_ids(const char *root, char ***ids, size_t *n, struct rrt_error *err)
{
  *ids = NULL;
  *n = 0;
  DIR *d = opendir(root);
  if (!d) {
    if (errno == ENOENT)
      return 0;
    return rrt_error_errno(err, "open %s", root);
  }
  struct dirent *de;
  size_t cap = 0;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.' || rrt_state_validate_id(de->d_name, NULL) < 0)
      continue;
    if (*n + 1 >= cap) {
      cap = cap ? cap * 2 : 16;
      *ids = xrealloc(*ids, cap * sizeof(char *));
    }
    (*ids)[(*n)++] = xstrdup(de->d_name);
  }
  closedir(d);
  if (*n)
    qsort(*ids, *n, sizeof(char *), cmp_str);
  return 0;
}

/*
 * One entry: whatever state it is in, half-made ("creating", or "broken" once its create died,
 * or with a corrupt state.json) included, so that what exists is seen and can be deleted. An
 * entry that is not to be trusted (another user's, a symlink) is not a container of ours: a
 * warning says so and how to remove it. One removed meanwhile is not listed.
 */
/* runc's key order (its list prints pid before status, unlike state): tools that read the text
 * rather than the JSON, runc's own tests among them, expect it. */
static json_object *runc_order(json_object *o)
{
  static const char *const first[] = {"ociVersion", "id",     "pid",     "status",
                                      "bundle",     "rootfs", "created", "owner"};
  json_object *r = json_object_new_object(), *v = NULL;
  for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
    if (json_object_object_get_ex(o, first[i], &v))
      json_object_object_add(r, first[i], json_object_get(v));
  json_object_object_foreach(o, key, val)
  {
    if (!json_object_object_get_ex(r, key, NULL))
      json_object_object_add(r, key, json_object_get(val));
  }
  json_object_put(o);
  return r;
}

static void list_one(const char *root, const char *id, bool json, bool quiet, json_object *arr)
{
  struct rrt_state st;
  const char *status = NULL;
  cleanup_free char *why = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_state_inspect(root, id, &st, &status, &why, &e) < 0) {
    if (e.errnum != ENOENT)
      rrt_warn("list: %s", rrt_error_msg(&e));
    rrt_error_clear(&e);
    return;
  }
  bool gone = strcmp(status, "stopped") == 0 || (why && !rrt_proc_same(st.pid, st.pid_start));
  if (quiet && !json)
    printf("%s\n", id);
  if (json) {
    char *s = rrt_state_oci_json(&st, status, false);
    json_object *o = json_tokener_parse(s);
    free(s);
    if (o && gone)
      json_object_object_add(o, "pid", json_object_new_int64(0));
    if (o && why)
      json_object_object_add(o, "reason", json_object_new_string(why));
    json_object_array_add(arr, o ? runc_order(o) : NULL);
  } else if (!quiet) {
    const char *owner = rrt_user_name(st.owner);
    printf("%-24s %-8d %-10s %-40s %-30s %s\n", id, gone ? 0 : st.pid, status,
           st.bundle ? st.bundle : "", st.created ? st.created : "", owner ? owner : "");
  }
  rrt_state_free(&st);
}

int rrt_cmd_list(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  bool json = false, quiet = false;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = rrt_cmd_getopt(argc, argv, "+f:qh", opts)) != -1) {
    if (c == 'f' && strcmp(optarg, "json") == 0)
      json = true;
    else if (c == 'f' && strcmp(optarg, "table") == 0)
      json = false;
    else if (c == 'f')
      return rrt_error_msgf(err, EINVAL, "list --format: \"%s\" is not table or json", optarg);
    else if (c == 'q')
      quiet = true;
    else if (c == 'h') {
      rrt_cmd_usage("list");
      return 0;
    } else
      return rrt_error_msgf(err, EINVAL, "list: unknown flag %s", argv[optind - 1]);
  }
  if (optind < argc)
    return rrt_error_msgf(err, EINVAL, "list: unexpected argument \"%s\"", argv[optind]);

  cleanup_free char *root = NULL;
  if (rrt_state_root(g->root, false, &root, err) < 0)
    return -1;
  char **ids = NULL;
  size_t n = 0;
  if (list_ids(root, &ids, &n, err) < 0)
    return -1;
  json_object *arr = json_object_new_array();
  if (!json && !quiet)
    printf("%-24s %-8s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED",
           "OWNER");
  for (size_t i = 0; i < n; i++)
    list_one(root, ids[i], json, quiet, arr);
  if (json)
    printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(arr);
  for (size_t i = 0; i < n; i++)
    free(ids[i]);
  free(ids);
  return 0;
}
