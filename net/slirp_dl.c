/* slirp_dl.c: libslirp, loaded at run time by the network helper and by nothing else. */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#include "net_internal.h"

/* The ABI name, stable since libslirp 4.0 (Debian's libslirp0). */
#define SLIRP_SONAME "libslirp.so.0"

struct net_slirp_api net_slirp;

/*
 * Why not link it: libslirp brings GLib, PCRE2 and libm, and their loading,
 * relocation and constructors cost more than the rest of a `run` start-up
 * (measured in `make bench`). Only a container with the built-in network
 * needs them, and then only in its helper process; the runtime, init and
 * every engine call stay free of them. The pointers keep the header's types,
 * so a changed prototype is still a compile error.
 */
int net_slirp_load(struct rrt_error *err)
{
  if (net_slirp.handle)
    return 0;
  void *h = dlopen(SLIRP_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return rrt_error_msgf(err, ENOENT,
                          "%s: %s (the built-in network needs Debian's libslirp0; or use "
                          "--network none)",
                          SLIRP_SONAME, dlerror());
  struct {
    const char *name;
    void **slot;
  } syms[] = {
#define SYM(f) {#f, (void **)&net_slirp.f}
      SYM(slirp_new),          SYM(slirp_cleanup),        SYM(slirp_input),
      SYM(slirp_add_hostfwd),  SYM(slirp_handle_timer),   SYM(slirp_pollfds_fill),
      SYM(slirp_pollfds_poll), SYM(slirp_version_string),
#undef SYM
  };
  for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
    *syms[i].slot = dlsym(h, syms[i].name);
    if (!*syms[i].slot) {
      rrt_error_msgf(err, ENOSYS, "%s: no symbol %s (libslirp 4.7 or newer is needed)",
                     SLIRP_SONAME, syms[i].name);
      dlclose(h);
      return -1;
    }
  }
  net_slirp.handle = h;
  return 0;
}
