/* reexec.c: re-execute from a sealed memfd copy of the binary (CVE-2019-5736). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootlessrt/log.h"
#include "rootlessrt/reexec.h"
#include "rootlessrt/util.h"

#define SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

int rrt_exe_is_sealed(void)
{
  cleanup_close int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  int seals = fcntl(fd, F_GET_SEALS);
  return seals >= 0 && (seals & SEALS) == SEALS;
}

/* The attack needs write access to the binary from inside the container. The
 * container's users are the caller (as root) and the caller's subordinate
 * ids; a binary owned by another user (root, typically, installed in
 * /usr/local/bin) with no group or other write bit is out of their reach, and
 * then the copy (a second dynamic load, ~1 ms) is not worth paying. */
static bool exe_out_of_reach(const struct stat *st)
{
  return st->st_uid != getuid() && st->st_uid != geteuid() && (st->st_mode & 0022) == 0 &&
         st->st_nlink > 0 && st->st_uid == 0;
}

/*
 * How much of the binary the copy needs: up to the end of the last part a program header names
 * (what the kernel maps and the loader reads). The rest is section headers and debug
 * information, 44% of a build tree's binary (1.6 of 3.6 MB; copying it was 0.7 ms of a 1.5 ms
 * copy here). The copy's ELF header then names no section table. The whole file when it is not
 * a 64-bit ELF file this can read.
 */
static off_t exec_size(int fd, off_t size, Elf64_Ehdr *eh)
{
  if (pread(fd, eh, sizeof(*eh), 0) != (ssize_t)sizeof(*eh) ||
      memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 || eh->e_phnum > 64)
    return size;
  Elf64_Phdr ph[64];
  size_t len = (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
  if ((off_t)eh->e_phoff <= 0 || pread(fd, ph, len, (off_t)eh->e_phoff) != (ssize_t)len)
    return size;
  uint64_t end = eh->e_phoff + len;
  for (size_t i = 0; i < eh->e_phnum; i++)
    if (ph[i].p_offset + ph[i].p_filesz > end)
      end = ph[i].p_offset + ph[i].p_filesz;
  return end < (uint64_t)size ? (off_t)end : size;
}

int rrt_reexec_sealed(char **argv, struct rrt_error *err)
{
  if (rrt_exe_is_sealed())
    return 0;
  cleanup_close int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (src < 0)
    return rrt_error_errno(err, "open /proc/self/exe");
  struct stat st;
  if (fstat(src, &st) < 0)
    return rrt_error_errno(err, "stat /proc/self/exe");
  if (exe_out_of_reach(&st) && !getenv("ROOTLESSRT_ALWAYS_SEAL"))
    return 0;
  /* Not MFD_CLOEXEC: fexecve of a script would need the fd, but ours is an
   * ELF binary; CLOEXEC keeps the copy from leaking into the container. */
  cleanup_close int mfd = memfd_create("rootlessrt", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (mfd < 0)
    return rrt_error_errno(err, "memfd_create");
  Elf64_Ehdr eh;
  off_t size = exec_size(src, st.st_size, &eh), off = 0;
  while (off < size) {
    ssize_t n = sendfile(mfd, src, &off, (size_t)(size - off));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return rrt_error_errno(err, "copy /proc/self/exe to a memfd");
  }
  if (size < st.st_size) {
    eh.e_shoff = 0;
    eh.e_shnum = 0;
    eh.e_shstrndx = SHN_UNDEF;
    if (pwrite(mfd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
      return rrt_error_errno(err, "copy /proc/self/exe to a memfd");
  }
  if (fcntl(mfd, F_ADD_SEALS, SEALS) < 0)
    return rrt_error_errno(err, "seal the memfd");
  /* The copy's /proc/self/exe names the memfd: where the binary is stays known for what is
   * found beside it (the network helper, rootlessrt-net). */
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (len > 0 && self[0] == '/') {
    self[len] = '\0';
    setenv(RRT_EXE_ENV, self, 1);
  }
  rrt_phase_export();
  fexecve(mfd, argv, environ);
  return rrt_error_errno(err, "fexecve the sealed copy");
}

char *rrt_helper_path(const char *name, const char *env_var)
{
  const char *env = getenv(env_var);
  if (env && *env)
    return xstrdup(env);
  char self[PATH_MAX];
  const char *exe = getenv(RRT_EXE_ENV); /* a sealed copy's original */
  ssize_t len = -1;
  if (exe && exe[0] == '/' && strlen(exe) < sizeof(self)) {
    strcpy(self, exe);
    len = (ssize_t)strlen(self);
  } else {
    len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len > 0)
      self[len] = '\0';
  }
  char *slash = len > 0 && self[0] == '/' ? strrchr(self, '/') : NULL;
  if (slash) {
    *slash = '\0';
    /* Beside it (a build tree), or PREFIX/libexec for PREFIX/bin, whatever PREFIX was. */
    const char *rel[] = {"", "../libexec/rootlessrt/"};
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
      char *p = xasprintf("%s/%s%s", self, rel[i], name);
      if (access(p, X_OK) == 0)
        return p;
      free(p);
    }
  }
  return xasprintf("%s/%s", RRT_LIBEXECDIR, name);
}
