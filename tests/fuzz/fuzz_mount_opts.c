/* fuzz_mount_opts.c: libFuzzer harness: config.json mount options -> rrt_mount_opts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "rootlessrt/rootfs.h"
#include "rootlessrt/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is the options array with ',' or NUL between entries, so empty
 * entries and embedded separators both get exercised. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *buf = xstrndup((const char *)data, size);
  size_t len = strlen(buf);
  struct rrt_strv opts = {xcalloc(len + 2, sizeof(char *)), 0};
  char *start = buf;
  for (size_t i = 0; i <= len; i++) {
    if (buf[i] == ',' || buf[i] == '\0') {
      buf[i] = '\0';
      opts.v[opts.n++] = start;
      start = buf + i + 1;
    }
  }

  struct rrt_mount_opts o;
  struct rrt_error err = RRT_ERROR_INIT;
  /* Parsing is total: every list of strings is accepted. */
  if (rrt_mount_opts_parse(&opts, &o, &err) < 0)
    abort();
  /* Whatever reaches the kernel as data is a comma list of the inputs that
   * were not flags, never an empty entry nor a propagation or bind flag. */
  if (o.data && (o.data[0] == ',' || strstr(o.data, ",,") || o.data[strlen(o.data) - 1] == ','))
    abort();
  if (o.flags & (MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE))
    abort();
  if (o.rbind && !o.bind)
    abort();
  rrt_mount_opts_free(&o);
  rrt_error_clear(&err);
  free(opts.v);
  free(buf);
  return 0;
}
