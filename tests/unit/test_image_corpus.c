/* test_image_corpus.c: the image fuzz targets' seed corpus (tests/fuzz/corpus/image_*) as a
 * regression: every hostile case fed to the same entry points the harnesses use, built with the
 * normal compiler; a crash, a hang or an error without a message fails it. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fuzz/image_fuzz.h"
#include "rootlessrt/util.h"
#include "tap.h"

/* RRT_CORPUS_DIR, or tests/fuzz/corpus of the tree this binary was built in (BUILD/tests/..),
 * or of the current directory. */
static char *corpus_dir(void)
{
  const char *env = getenv("RRT_CORPUS_DIR");
  if (env)
    return strdup(env);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    for (int up = 0; up < 3; up++) {
      char *slash = strrchr(exe, '/');
      if (!slash)
        break;
      *slash = '\0';
      char *c = xasprintf("%s/tests/fuzz/corpus", exe);
      if (access(c, F_OK) == 0)
        return c;
      free(c);
    }
  }
  return strdup("tests/fuzz/corpus");
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
  return strcmp((*a)->d_name, (*b)->d_name);
}

static void run_dir(const char *root, const char *target, int (*fn)(const uint8_t *, size_t))
{
  char *dir = xasprintf("%s/%s", root, target);
  struct dirent **ents = NULL;
  int n = scandir(dir, &ents, NULL, by_name);
  if (n < 0) {
    ok(0, "%s: the corpus directory %s can be read", target, dir);
    free(dir);
    return;
  }
  int files = 0;
  for (int i = 0; i < n; i++) {
    if (ents[i]->d_name[0] != '.') {
      char *p = xasprintf("%s/%s", dir, ents[i]->d_name), *data = NULL;
      size_t len = 0;
      if (rrt_read_file(p, &data, &len, NULL) == 0) {
        fn((const uint8_t *)data, len);
        ok(1, "%s/%s: handled", target, ents[i]->d_name);
        files++;
      } else {
        ok(0, "%s/%s: readable", target, ents[i]->d_name);
      }
      free(data);
      free(p);
    }
    free(ents[i]);
  }
  free(ents);
  ok(files > 0, "%s: the corpus has cases (%d)", target, files);
  free(dir);
}

int main(void)
{
  char *root = corpus_dir();
  run_dir(root, "image_json", fuzz_image_json);
  run_dir(root, "image_archive", fuzz_image_archive);
  run_dir(root, "image_unpack", fuzz_image_unpack);
  free(root);
  return tap_done();
}
