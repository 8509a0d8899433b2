/* reexec.h: run from a sealed in-memory copy of ourselves (CVE-2019-5736). */
#ifndef ROOTLESSRT_REEXEC_H
#define ROOTLESSRT_REEXEC_H

#include "rootlessrt/error.h"

/*
 * A container process that can reach /proc/PID/exe of a runtime process
 * (init before its execve, an exec joining the container) could open the
 * runtime binary for writing; rootless, that binary may well be owned by the
 * user the container's root maps to. Before any of that, the verbs that put
 * processes into a container re-execute themselves from a sealed memfd copy
 * (F_SEAL_WRITE|SHRINK|GROW|SEAL): /proc/PID/exe then names that copy, which
 * nobody can modify. Skipped when the binary is root's and not group/other
 * writable: no user of the container can write it then (ROOTLESSRT_ALWAYS_SEAL=1
 * forces the copy). Returns 0 when sealed or not needed; otherwise does not
 * return unless it fails (then the caller goes on, with a debug log line).
 */
int rrt_reexec_sealed(char **argv, struct rrt_error *err);

/* True when /proc/self/exe is a sealed memfd. */
int rrt_exe_is_sealed(void);

/* The binary's own path, set in the environment of the sealed copy. */
#define RRT_EXE_ENV "_ROOTLESSRT_EXE"

/* A helper program (rootlessrt-net, rootlessrt-systemd): $env_var when set, else beside this
 * binary, else ../libexec/rootlessrt/ from it, else where this build's `make install` puts it. */
char *rrt_helper_path(const char *name, const char *env_var);

#endif
