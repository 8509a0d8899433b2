/* main.c: global flags, dispatch to one cmd_*.c per verb; the only printer of errors. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/log.h"
#include "rootlessrt/reexec.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/util.h"

struct verb {
  const char *name;
  rrt_cmd_fn fn;
};

/* Every verb in rrt_verb_docs (usage.c), in the same order. */
static const struct verb verbs[] = {
    {"create", rrt_cmd_create},
    {"start", rrt_cmd_start},
    {"run", rrt_cmd_run},
    {"state", rrt_cmd_state},
    {"kill", rrt_cmd_kill},
    {"delete", rrt_cmd_delete},
    {"list", rrt_cmd_list},
    {"spec", rrt_cmd_spec},
    {"exec", rrt_cmd_exec},
    {"ps", rrt_cmd_ps},
    {"events", rrt_cmd_events},
    {"pause", rrt_cmd_pause},
    {"resume", rrt_cmd_resume},
    {"update", rrt_cmd_update},
    {"store", rrt_cmd_store},
    {"pull", rrt_cmd_pull},
    {"images", rrt_cmd_images},
    {"rmi", rrt_cmd_rmi},
    {"features", rrt_cmd_features},
    {"check", rrt_cmd_check},
    {"checkpoint", rrt_cmd_checkpoint},
    {"restore", rrt_cmd_restore},
};

static const struct verb *find_verb(const char *name)
{
  for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
    if (strcmp(verbs[i].name, name) == 0)
      return &verbs[i];
  return NULL;
}

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: rootlessrt [global flags] VERB [flags] [ID]\n\n"
          "A rootless, user-namespace-first OCI container runtime (runtime-spec " RRT_OCI_VERSION
          ").\n\nVerbs:\n");
  for (size_t i = 0; i < rrt_verb_docs_len; i++)
    fprintf(out, "  %-8s %s\n", rrt_verb_docs[i].name, rrt_verb_docs[i].what);
  fprintf(out,
          "  help     help VERB: the flags of a verb\n\n"
          "Global flags:\n"
          "  --root DIR              state directory (default $XDG_RUNTIME_DIR/rootlessrt)\n"
          "  --log FILE              log to FILE (then only errors also go to stderr)\n"
          "  --log-format text|json  format of the --log lines\n"
          "  --debug                 log debug messages\n"
          "  --rootless true|false|auto   accepted for runc compatibility\n"
          "  --systemd-cgroup        the systemd cgroup driver (cgroupsPath slice:prefix:name)\n"
          "  --cgroup-manager cgroupfs|systemd|disabled\n"
          "  --version, --help\n");
}

static void version(void)
{
  printf("rootlessrt version %s\ncommit: %s\nspec: %s\n", RRT_VERSION, RRT_COMMIT, RRT_OCI_VERSION);
}

enum {
  OPT_ROOT = 256,
  OPT_LOG,
  OPT_LOG_FORMAT,
  OPT_DEBUG,
  OPT_ROOTLESS,
  OPT_SYSTEMD_CGROUP,
  OPT_CGROUP_MANAGER,
  OPT_VERSION,
  OPT_HELP,
  OPT_IGNORED_ARG,
  OPT_LIST_FLAGS,
};

#define GLOBAL_SHORTOPTS "+:vh"
static const struct option global_opts[] = {
    {"root", required_argument, NULL, OPT_ROOT},
    {"log", required_argument, NULL, OPT_LOG},
    {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
    {"debug", no_argument, NULL, OPT_DEBUG},
    {"rootless", required_argument, NULL, OPT_ROOTLESS},
    {"systemd-cgroup", no_argument, NULL, OPT_SYSTEMD_CGROUP},
    {"cgroup-manager", required_argument, NULL, OPT_CGROUP_MANAGER},
    {"criu", required_argument, NULL, OPT_IGNORED_ARG},
    {"version", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"list-flags", no_argument, NULL, OPT_LIST_FLAGS}, /* hidden: tests, shell completion */
    {NULL, 0, NULL, 0},
};

static int parse_global(int argc, char **argv, struct rrt_global *g, bool *exit_now,
                        struct rrt_error *err)
{
  const char *log_format = "text";
  const char *log_file = NULL;
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, GLOBAL_SHORTOPTS, global_opts, NULL)) != -1) {
    switch (c) {
    case OPT_ROOT:
      /* Made absolute now: create changes into the bundle before it makes the state. */
      if (optarg[0] != '/') {
        cleanup_free char *cwd = getcwd(NULL, 0);
        if (!cwd)
          return rrt_error_errno(err, "--root %s: getcwd", optarg);
        static char *abs_root;
        free(abs_root);
        abs_root = xasprintf("%s/%s", cwd, optarg);
        g->root = abs_root;
      } else {
        g->root = optarg;
      }
      break;
    case OPT_LOG:
      log_file = optarg;
      break;
    case OPT_LOG_FORMAT:
      if (strcmp(optarg, "text") != 0 && strcmp(optarg, "json") != 0)
        return rrt_error_msgf(err, EINVAL, "--log-format: \"%s\" is not text or json", optarg);
      log_format = optarg;
      break;
    case OPT_DEBUG:
      g->debug = true;
      break;
    case OPT_ROOTLESS:
      if (strcmp(optarg, "true") && strcmp(optarg, "false") && strcmp(optarg, "auto"))
        return rrt_error_msgf(err, EINVAL, "--rootless: \"%s\" is not true, false or auto", optarg);
      g->rootless = optarg;
      break;
    case OPT_SYSTEMD_CGROUP:
      g->systemd_cgroup = true;
      break;
    case OPT_CGROUP_MANAGER:
      g->cgroup_disabled = strcmp(optarg, "disabled") == 0;
      g->systemd_cgroup = strcmp(optarg, "systemd") == 0;
      if (!g->cgroup_disabled && !g->systemd_cgroup && strcmp(optarg, "cgroupfs") != 0)
        return rrt_error_msgf(
            err, EINVAL, "--cgroup-manager: \"%s\" is not cgroupfs, systemd or disabled", optarg);
      break;
    case OPT_IGNORED_ARG:
      break;
    case OPT_LIST_FLAGS:
      rrt_cmd_listing = true;
      break;
    case 'v':
      version();
      *exit_now = true;
      return 0;
    case 'h':
      usage(stdout);
      *exit_now = true;
      return 0;
    case ':':
      return rrt_error_msgf(err, EINVAL, "%s needs a value", argv[optind - 1]);
    default:
      return rrt_error_msgf(err, EINVAL, "unknown global flag %s (see rootlessrt --help)",
                            argv[optind - 1]);
    }
  }
  g->log = log_file;
  g->log_json = strcmp(log_format, "json") == 0;
  return rrt_log_init(log_file, g->log_json, g->debug, err);
}

/* `rootlessrt --list-flags`: "verb NAME" lines, then the global flags (as the verbs' flags). */
static void list_verbs_and_flags(void)
{
  for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
    printf("verb %s\n", verbs[i].name);
  printf("verb help\n");
  rrt_cmd_print_flags(GLOBAL_SHORTOPTS, global_opts);
}

/* `rootlessrt --list-flags VERB`: the verb prints its flags at its first rrt_cmd_getopt and
 * exits; run has two forms, each with its table: the runc form's is printed by a child. */
static void list_flags_of(const struct verb *v, const struct rrt_global *g, char *name)
{
  char *only_verb[] = {name, NULL};
  struct rrt_error e = RRT_ERROR_INIT;
  if (v->fn == rrt_cmd_run) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      (void)v->fn(g, 1, only_verb, &e);
      _exit(1); /* it returned: it printed nothing */
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
      return;
    (void)rrt_cmd_run_image(g, 1, only_verb, &e);
  } else {
    (void)v->fn(g, 1, only_verb, &e);
  }
  rrt_error_clear(&e);
}

int main(int argc, char **argv)
{
  struct rrt_global g = {0};
  struct rrt_error err = RRT_ERROR_INIT;
  bool exit_now = false;
  int status = 1;
  /* A runtime error of exec exits 255, as runc's: its process's own status is anything else (a
   * process exiting 1 is common). docs/cli.md, "Exit status". Every other verb exits 1. */
  int failed = 1;

  rrt_phase_start();
  if (parse_global(argc, argv, &g, &exit_now, &err) < 0)
    goto fail;
  if (exit_now)
    return 0;
  if (rrt_cmd_listing && optind >= argc) {
    list_verbs_and_flags();
    return 0;
  }
  if (optind >= argc) {
    usage(stderr);
    return 1;
  }
  const char *name = argv[optind];
  if (strcmp(name, "help") == 0) {
    if (optind + 1 < argc && !find_verb(argv[optind + 1])) {
      rrt_error_msgf(&err, EINVAL, "help: unknown verb \"%s\"", argv[optind + 1]);
      goto fail;
    }
    if (optind + 1 < argc)
      rrt_cmd_usage(argv[optind + 1]);
    else
      usage(stdout);
    return 0;
  }
  const struct verb *v = find_verb(name);
  if (!v) {
    rrt_error_msgf(&err, EINVAL, "unknown verb \"%s\" (see rootlessrt --help)", name);
    goto fail;
  }
  if (rrt_cmd_listing) {
    list_flags_of(v, &g, argv[optind]);
    rrt_error_msgf(&err, EINVAL, "%s: parses no flags through rrt_cmd_getopt", name);
    goto fail;
  }
  /* The verbs that put a process into a container run from a sealed copy. */
  if (v->fn == rrt_cmd_create || v->fn == rrt_cmd_run || v->fn == rrt_cmd_exec) {
    struct rrt_error e = RRT_ERROR_INIT;
    if (rrt_reexec_sealed(argv, &e) < 0)
      rrt_debug("running unsealed: %s", rrt_error_msg(&e));
    rrt_error_clear(&e);
    rrt_phase("%s: %s", name,
              rrt_exe_is_sealed() ? "running from a sealed copy of the binary" : "started");
  }
  if (v->fn == rrt_cmd_exec)
    failed = 255;
  status = v->fn(&g, argc - optind, argv + optind, &err);
  if (status >= 0)
    return status;
fail:
  rrt_log(RRT_LOG_ERROR, "%s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  return failed;
}
