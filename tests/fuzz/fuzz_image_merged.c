/* fuzz_image_merged.c: libFuzzer harness for image/merged.c's layer walk (rrt_image_read_file):
 * a path of an image read as the container will see it, the layers merged top first, whiteouts,
 * opaque directories and symlinks across layers honoured. The input is text, one entry a line:
 *   L               the next layer (at most 4; the first lines make layer 0, the top)
 *   d PATH          a directory          o PATH   an opaque directory
 *   f PATH TEXT     a file holding TEXT  w PATH   a whiteout
 *   l PATH TARGET   a symlink            r PATH   the path to read (/etc/passwd if none)
 *   m MAX           the size limit (default 4096)
 * Whatever it reads must be the TEXT of some f line (never a file outside the layers: the
 * scratch directory holds canaries beside them); a failure must say why. Seeds: the layouts of
 * real images (tests/fuzz/corpus/image_merged/). */
#include <stdint.h>
#include <string.h>

#include "../../image/internal.h"
#include "layers_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 16384)
    return 0;
  struct fuzz_layers *fl = fuzz_layers_get();
  cleanup_free char *text = xstrndup((const char *)data, size);
  /* First pass: how many layers. */
  size_t n = 1;
  for (const char *p = text; (p = strchr(p, '\n')); p++)
    if (p[1] == 'L' && (p[2] == '\n' || p[2] == '\0') && n < LAYERS)
      n++;
  if (text[0] == 'L' && (text[1] == '\n' || text[1] == '\0') && n > 1)
    n--; /* a leading L starts layer 0 */
  fuzz_layers_reset(fl, n);
  cleanup_free char *readpath = xstrdup("/etc/passwd");
  size_t max = 4096;
  cleanup_free char **texts = xcalloc(size + 1, sizeof(char *));
  size_t nt = 0, layer = 0;
  bool first = true;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (strcmp(line, "L") == 0) {
      if (!first && layer + 1 < n)
        layer++;
      first = false;
      continue;
    }
    first = false;
    if (strlen(line) < 3 || line[1] != ' ')
      continue;
    char *path = line + 2, *arg = strchr(path, ' ');
    if (arg)
      *arg++ = '\0';
    switch (line[0]) {
    case 'd':
      fuzz_make(fl->fds[layer], FUZZ_DIR, path, NULL);
      break;
    case 'o':
      fuzz_make(fl->fds[layer], FUZZ_OPAQUE, path, NULL);
      break;
    case 'w':
      fuzz_make(fl->fds[layer], FUZZ_WHITEOUT, path, NULL);
      break;
    case 'f':
      fuzz_make(fl->fds[layer], FUZZ_FILE, path, arg ? arg : "");
      texts[nt++] = arg ? arg : (char *)"";
      break;
    case 'l':
      if (arg)
        fuzz_make(fl->fds[layer], FUZZ_LINK, path, arg);
      break;
    case 'r':
      free(readpath);
      readpath = xasprintf("%s%s%s", path, arg ? " " : "", arg ? arg : "");
      break;
    case 'm':
      max = (size_t)strtoul(path, NULL, 10) % 65536;
      break;
    default:
      break;
    }
  }
  char *got = NULL;
  size_t len = 0;
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_image_read_file(fl->lowers, readpath, max, &got, &len, &err);
  if (r < 0 && !err.msg)
    __builtin_trap();
  if (r == 0 && got) {
    if (len > max || strlen(got) != len)
      __builtin_trap();
    bool known = false;
    for (size_t i = 0; i < nt && !known; i++)
      known = strcmp(texts[i], got) == 0;
    if (!known)
      __builtin_trap(); /* read something no layer holds (a canary outside them) */
  }
  free(got);
  rrt_error_clear(&err);
  return 0;
}
