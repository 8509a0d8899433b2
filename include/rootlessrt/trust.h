/* trust.h: whether another user could steer the runtime through what it acts on: the state
 * root and its entries, a hook's path, the listener of a console socket. */
#ifndef ROOTLESSRT_TRUST_H
#define ROOTLESSRT_TRUST_H

#include <stdbool.h>
#include <sys/stat.h>

#include "rootlessrt/error.h"

/*
 * The state root (or the private directory beside it): a real directory (not a symlink),
 * owned by the caller (root's for real root), writable by no one else (no group or other
 * write bit), and every directory above it owned by the caller or root and, when others may
 * write it, sticky (as /tmp). The error says what is wrong and how to fix it; a root that does
 * not exist is errnum ENOENT.
 */
int rrt_trust_root(const char *path, const char *what, struct rrt_error *err);
/* The same without the directories above (a sibling of a root checked already). */
int rrt_trust_dir(const char *path, const char *what, struct rrt_error *err);

/* An entry of the root as fstat saw it: of the type asked for (S_IFDIR, S_IFREG), the
 * caller's, and writable by no one else. shown names it in the error. */
int rrt_trust_stat(const struct stat *st, mode_t type, const char *shown, struct rrt_error *err);

/* The first of path and the directories above it that someone other than the caller or root
 * could change (a malloc'd description: "/opt/hooks (mode 0777)"), or NULL. */
char *rrt_trust_writable_by_others(const char *path);

/* The process listening on a connected unix socket is the caller or root: a --console-socket
 * of another user would receive the container's terminal. */
int rrt_trust_peer(int fd, const char *what, const char *path, struct rrt_error *err);

#endif
