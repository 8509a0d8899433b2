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
  for (size_t i = 0; i < n; i++) {
    struct rrt_state st;
    int fd = -1;
    /* Containers removed in the meantime are not listed. */
    if (rrt_state_open(root, ids[i], false, &fd, NULL) < 0)
      continue;
    if (rrt_state_read(fd, &st, NULL) == 0) {
      const char *status = rrt_state_status(&st);
      if (quiet) {
        if (!json)
          printf("%s\n", ids[i]);
      }
      if (json) {
        char *s = rrt_state_oci_json(&st, status, false);
        json_object_array_add(arr, json_tokener_parse(s));
        free(s);
      } else if (!quiet) {
        const char *owner = rrt_user_name(st.owner);
        printf("%-24s %-8d %-10s %-40s %-30s %s\n", ids[i], strcmp(status, "stopped") ? st.pid : 0,
               status, st.bundle ? st.bundle : "", st.created ? st.created : "",
               owner ? owner : "");
      }
      rrt_state_free(&st);
    }
    close(fd);
  }
  if (json)
    printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(arr);
  for (size_t i = 0; i < n; i++)
    free(ids[i]);
  free(ids);
  return 0;
}
