/* replay.c: a main() for the fuzz harnesses without libFuzzer (any compiler): every file named,
 * and every regular file of every directory named, is passed once to LLVMFuzzerTestOneInput, in
 * name order. Each name is printed before its run, so after a crash the last one names the input.
 * tests/fuzz/smoke.sh runs it on each harness's corpus (make check). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path, unsigned *count)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  /* One byte more than the file, so an empty input is still a valid pointer. */
  size_t size = (size_t)st.st_size;
  uint8_t *data = malloc(size + 1);
  size_t got = 0;
  while (data && got < size) {
    ssize_t n = read(fd, data + got, size - got);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  close(fd);
  if (!data || got != size) {
    fprintf(stderr, "replay: %s: short read\n", path);
    free(data);
    return -1;
  }
  fprintf(stderr, "replay: %s\n", path);
  /* A copy of exactly SIZE bytes, as libFuzzer passes, so ASan sees a read past the end. */
  uint8_t *exact = malloc(size ? size : 1);
  if (!exact) {
    free(data);
    return -1;
  }
  memcpy(exact, data, size);
  free(data);
  LLVMFuzzerTestOneInput(exact, size);
  free(exact);
  (*count)++;
  return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int run_path(const char *path, unsigned *count)
{
  struct stat st;
  if (stat(path, &st) < 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode))
    return run_file(path, count);
  struct dirent **ents;
  int n = scandir(path, &ents, NULL, by_name);
  if (n < 0) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  int r = 0;
  for (int i = 0; i < n; i++) {
    char sub[4096];
    snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name);
    if (ents[i]->d_name[0] != '.' && stat(sub, &st) == 0 && S_ISREG(st.st_mode) &&
        run_file(sub, count) < 0)
      r = -1;
    free(ents[i]);
  }
  free(ents);
  return r;
}

int main(int argc, char **argv)
{
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  unsigned count = 0;
  int r = 0;
  for (int i = 1; i < argc; i++)
    if (run_path(argv[i], &count) < 0)
      r = 1;
  printf("replay: %u inputs\n", count);
  return r;
}
