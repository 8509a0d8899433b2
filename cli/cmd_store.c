/* cmd_store.c: `store [--storage DIR] ls|rm [--force] NAME...|prune`: the image store's
 * contents. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/image.h"
#include "rootlessrt/state.h"
#include "rootlessrt/util.h"

int rrt_cmd_store(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {{"storage", required_argument, NULL, 's'},
                                       {"force", no_argument, NULL, 'f'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *storage = NULL;
  bool force = false;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = rrt_cmd_getopt(argc, argv, "+:fh", opts)) != -1) {
    if (c == 's') {
      storage = optarg;
    } else if (c == 'f') {
      force = true;
    } else if (c == 'h') {
      rrt_cmd_usage("store");
      return 0;
    } else if (c == ':') {
      return rrt_error_msgf(err, EINVAL, "store: %s needs a value", argv[optind - 1]);
    } else {
      return rrt_error_msgf(err, EINVAL, "store: unknown flag %s", argv[optind - 1]);
    }
  }
  cleanup_free char *store = rrt_store_path(storage);
  if (rrt_store_trust(store, false, err) < 0)
    return -1;
  const char *what = optind < argc ? argv[optind] : "ls";
  if (strcmp(what, "ls") == 0 || strcmp(what, "list") == 0) {
    if (optind + 1 < argc)
      return rrt_error_msgf(err, EINVAL, "store ls: unexpected argument \"%s\"", argv[optind + 1]);
    return rrt_store_list(store, err) < 0 ? -1 : 0;
  }
  bool prune = strcmp(what, "prune") == 0;
  if (strcmp(what, "rm") != 0 && !prune)
    return rrt_error_msgf(err, EINVAL, "store: \"%s\" is not ls, rm or prune", what);
  if (prune && optind + 1 < argc)
    return rrt_error_msgf(err, EINVAL, "store prune: unexpected argument \"%s\"", argv[optind + 1]);
  if (!prune && optind + 1 >= argc)
    return rrt_error_msgf(err, EINVAL, "store rm: name what to remove (see `rootlessrt store ls`)");
  cleanup_free char *root = NULL;
  struct rrt_error ignored = RRT_ERROR_INIT;
  rrt_state_root(g->root, false, &root, &ignored);
  rrt_error_clear(&ignored);
  if (prune)
    return rrt_store_prune(store, root, err) < 0 ? -1 : 0;
  /* store rm [-f|--force] NAME...: the flag may follow rm too. */
  int first = optind + 1;
  for (int i = first; i < argc; i++)
    if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--force") == 0)
      force = true;
  for (int i = first; i < argc; i++)
    if (strcmp(argv[i], "-f") != 0 && strcmp(argv[i], "--force") != 0 &&
        rrt_store_remove(store, root, argv[i], force, err) < 0)
      return -1;
  return 0;
}
