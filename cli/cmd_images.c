/* cmd_images.c: `images` and `rmi`: the store's images by name, as podman lists and removes
 * them. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/image.h"
#include "rootlessrt/state.h"
#include "rootlessrt/util.h"

enum { OPT_NO_TRUNC = 256, OPT_FORMAT, OPT_STORAGE };

int rrt_cmd_images(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  (void)g;
  static const struct option opts[] = {{"storage", required_argument, NULL, OPT_STORAGE},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"no-trunc", no_argument, NULL, OPT_NO_TRUNC},
                                       {"noheading", no_argument, NULL, 'n'},
                                       {"all", no_argument, NULL, 'a'},
                                       {"format", required_argument, NULL, OPT_FORMAT},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  struct rrt_images_opts o = {0};
  const char *storage = NULL;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = rrt_cmd_getopt(argc, argv, "+:qnah", opts)) != -1) {
    switch (c) {
    case OPT_STORAGE:
      storage = optarg;
      break;
    case 'q':
      o.quiet = true;
      break;
    case OPT_NO_TRUNC:
      o.no_trunc = true;
      break;
    case 'n':
      o.noheading = true;
      break;
    case 'a': /* no intermediate images here: all of them are listed anyway */
      break;
    case OPT_FORMAT:
      if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0)
        return rrt_error_msgf(err, EINVAL,
                              "images: --format \"%s\": json or table (no Go templates)", optarg);
      o.json = strcmp(optarg, "json") == 0;
      break;
    case 'h':
      rrt_cmd_usage("images");
      return 0;
    case ':':
      return rrt_error_msgf(err, EINVAL, "images: %s needs a value", argv[optind - 1]);
    default:
      return rrt_error_msgf(err, EINVAL, "images: unknown flag %s (see `rootlessrt help images`)",
                            argv[optind - 1]);
    }
  }
  if (optind < argc)
    return rrt_error_msgf(err, EINVAL, "images: unexpected argument \"%s\"", argv[optind]);
  cleanup_free char *store = rrt_store_path(storage);
  if (rrt_store_trust(store, false, err) < 0)
    return -1;
  return rrt_images_print(store, &o, err) < 0 ? -1 : 0;
}

int rrt_cmd_rmi(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {{"storage", required_argument, NULL, OPT_STORAGE},
                                       {"force", no_argument, NULL, 'f'},
                                       {"all", no_argument, NULL, 'a'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *storage = NULL;
  bool force = false, all = false;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = rrt_cmd_getopt(argc, argv, "+:fah", opts)) != -1) {
    switch (c) {
    case OPT_STORAGE:
      storage = optarg;
      break;
    case 'f':
      force = true;
      break;
    case 'a':
      all = true;
      break;
    case 'h':
      rrt_cmd_usage("rmi");
      return 0;
    case ':':
      return rrt_error_msgf(err, EINVAL, "rmi: %s needs a value", argv[optind - 1]);
    default:
      return rrt_error_msgf(err, EINVAL, "rmi: unknown flag %s (see `rootlessrt help rmi`)",
                            argv[optind - 1]);
    }
  }
  if (all && optind < argc)
    return rrt_error_msgf(err, EINVAL, "rmi: --all and names: one or the other");
  if (!all && optind >= argc)
    return rrt_error_msgf(err, EINVAL, "rmi: name an image (see `rootlessrt images`)");
  cleanup_free char *store = rrt_store_path(storage);
  if (rrt_store_trust(store, false, err) < 0)
    return -1;
  cleanup_free char *root = NULL;
  struct rrt_error ignored = RRT_ERROR_INIT;
  rrt_state_root(g->root, false, &root, &ignored);
  rrt_error_clear(&ignored);
  return rrt_images_remove(store, root, argv + optind, (size_t)(argc - optind), all, force, err) < 0
             ? -1
             : 0;
}
