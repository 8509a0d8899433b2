/* cmd_ps.c: `ps [-f table|json] ID`: the container's processes. */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/util.h"

static int ps_flag(int c, void *arg, struct rrt_error *err)
{
  const char **format = arg;
  if (c == 'f') {
    if (strcmp(optarg, "table") != 0 && strcmp(optarg, "json") != 0)
      return rrt_error_msgf(err, EINVAL, "ps: --format \"%s\" is not table or json", optarg);
    *format = optarg;
  }
  return 0;
}

/* /proc/PID/cmdline with spaces, or (comm) for a kernel-side empty one. */
static char *command_of(pid_t pid)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
  char *text = NULL;
  size_t len = 0;
  if (rrt_read_file(path, &text, &len, NULL) == 0 && len > 0) {
    for (size_t i = 0; i + 1 < len; i++)
      if (text[i] == '\0')
        text[i] = ' ';
    return text;
  }
  free(text);
  snprintf(path, sizeof(path), "/proc/%d/comm", pid);
  if (rrt_read_file(path, &text, NULL, NULL) == 0) {
    text[strcspn(text, "\n")] = '\0';
    char *r = xasprintf("[%s]", text);
    free(text);
    return r;
  }
  return xstrdup("?");
}

int rrt_cmd_ps(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *format = "table";
  bool help = false;
  const char *id = NULL;
  if (rrt_cmd_parse_flags(argc, argv, "+f:h", opts, ps_flag, &format, &help, err) < 0)
    return -1;
  if (help) {
    rrt_cmd_usage("ps");
    return 0;
  }
  /* runc passes anything after the id on to ps(1); we have no such thing. */
  if (rrt_cmd_one_id(argc, argv, optind, &id, err) < 0)
    return -1;
  struct rrt_live l;
  int ret = -1;
  pid_t *pids = NULL;
  size_t n = 0;
  if (rrt_live_load(g, id, false, false, false, &l, err) < 0)
    goto out;
  if (strcmp(rrt_state_status(&l.st), "stopped") == 0) {
    /* runc prints an empty list for a stopped container. */
    n = 0;
  } else if (rrt_live_pids(&l.st, &pids, &n, err) < 0) {
    goto out;
  }
  if (strcmp(format, "json") == 0) {
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
      json_object_array_add(a, json_object_new_int(pids[i]));
    printf("%s\n", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
    json_object_put(a);
  } else {
    printf("%-8s %s\n", "PID", "CMD");
    for (size_t i = 0; i < n; i++) {
      cleanup_free char *cmd = command_of(pids[i]);
      printf("%-8d %s\n", pids[i], cmd);
    }
  }
  ret = 0;
out:
  free(pids);
  rrt_live_free(&l);
  return ret;
}
