/* cmd_ps.c: `ps [-f table|json] ID [PS_ARGS...]`: the container's processes; the table is the
 * host's ps(1) output (PS_ARGS, default -ef) cut to them, as runc prints it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* ps(1)'s whole output (stdout and stderr) and exit status; -1 when it cannot be run at all. */
static int run_ps(char **args, char **out, struct rrt_error *err)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "ps: pipe");
  pid_t pid = fork();
  if (pid < 0) {
    close(p[0]);
    close(p[1]);
    return rrt_error_errno(err, "ps: fork");
  }
  if (pid == 0) {
    dup2(p[1], STDOUT_FILENO);
    dup2(p[1], STDERR_FILENO);
    execvp("ps", args);
    _exit(127);
  }
  close(p[1]);
  size_t len = 0;
  int r = rrt_read_fd(p[0], out, &len, err);
  close(p[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (r < 0)
    return -1;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
    return rrt_error_msgf(err, ENOENT, "ps: cannot run ps(1) (install procps), or use -f json");
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    (*out)[strcspn(*out, "\n")] = '\0';
    return rrt_error_msgf(err, EINVAL, "ps: ps(1) failed: %s", *out);
  }
  return 0;
}

static bool has_pid(const pid_t *pids, size_t n, long v)
{
  for (size_t i = 0; i < n; i++)
    if (pids[i] == v)
      return true;
  return false;
}

/* The header line and each line whose PID column names one of pids. */
static int print_table(char **ps_args, const pid_t *pids, size_t n, struct rrt_error *err)
{
  size_t na = 0;
  while (ps_args[na])
    na++;
  cleanup_free char **args = xcalloc(na + 2, sizeof(char *));
  args[0] = "ps";
  for (size_t i = 0; i < na; i++)
    args[i + 1] = ps_args[i];
  if (na == 0)
    args[1] = "-ef";
  cleanup_free char *out = NULL;
  if (run_ps(args, &out, err) < 0)
    return -1;
  char *save = NULL;
  char *header = strtok_r(out, "\n", &save);
  if (!header)
    return rrt_error_msgf(err, EINVAL, "ps: ps(1) printed nothing");
  int col = -1, i = 0;
  cleanup_free char *h = xstrdup(header);
  char *hs = NULL;
  for (char *w = strtok_r(h, " \t", &hs); w; w = strtok_r(NULL, " \t", &hs), i++)
    if (strcmp(w, "PID") == 0 && col < 0)
      col = i;
  if (col < 0)
    return rrt_error_msgf(err, EINVAL, "ps: no PID column in ps(1)'s header \"%s\"", header);
  printf("%s\n", header);
  for (char *line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    cleanup_free char *l = xstrdup(line);
    char *ls = NULL, *w = strtok_r(l, " \t", &ls);
    for (int k = 0; w && k < col; k++)
      w = strtok_r(NULL, " \t", &ls);
    char *end = NULL;
    long v = w ? strtol(w, &end, 10) : -1;
    if (w && *end == '\0' && has_pid(pids, n, v))
      printf("%s\n", line);
  }
  return 0;
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
  /* As runc: what follows the id goes to ps(1). */
  if (optind >= argc)
    return rrt_error_msgf(err, EINVAL, "ps: a container id is required");
  id = argv[optind];
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
  } else if (print_table(argv + optind + 1, pids, n, err) < 0) {
    goto out;
  }
  ret = 0;
out:
  free(pids);
  rrt_live_free(&l);
  return ret;
}
