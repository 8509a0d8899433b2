/* fuzz_image_user.c: libFuzzer harness for image/user.c (-u and the image's User resolved
 * against the image's own /etc/passwd and /etc/group). The input is SPEC NUL PASSWD NUL GROUP:
 * the two files are written into a one-layer image, SPEC is resolved. A failure must say why; a
 * numeric user alone always resolves, to itself. Seeds: real passwd and group files (Debian's
 * base-passwd masters, a Debian 12 system's, Alpine's and busybox's layout) with the specs
 * engines pass (tests/fuzz/corpus/image_user/). */
#include <stdint.h>
#include <string.h>

#include "../../image/internal.h"
#include "layers_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size > 65536)
    return 0;
  /* SPEC, PASSWD and GROUP: the parts between NULs (missing ones empty). */
  const char *parts[3] = {"", "", ""};
  cleanup_free char *buf = xmalloc(size + 1);
  memcpy(buf, data, size);
  buf[size] = '\0';
  size_t k = 0;
  parts[0] = buf;
  for (size_t i = 0; i < size && k < 2; i++)
    if (buf[i] == '\0')
      parts[++k] = buf + i + 1;
  struct fuzz_layers *fl = fuzz_layers_get();
  fuzz_layers_reset(fl, 1);
  fuzz_make(fl->fds[0], FUZZ_DIR, "etc", NULL);
  if (k >= 1)
    fuzz_make(fl->fds[0], FUZZ_FILE, "etc/passwd", parts[1]);
  if (k >= 2)
    fuzz_make(fl->fds[0], FUZZ_FILE, "etc/group", parts[2]);
  uid_t uid = 12345;
  gid_t gid = 12345;
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_run_resolve_user(parts[0], fl->lowers, &uid, &gid, &err);
  if (r < 0 && !err.msg)
    __builtin_trap();
  /* A number alone (below 2^32 - 1) needs no file: it is the uid. */
  unsigned long long n;
  if (*parts[0] && !strchr(parts[0], ':') && rrt_parse_u64(parts[0], &n) == 0 &&
      n < 0xffffffffULL && (r < 0 || uid != (uid_t)n))
    __builtin_trap();
  rrt_error_clear(&err);
  return 0;
}
