/* rmtree.h: removal of a directory tree that someone else may be changing (a container's upper
 * directory, an image's unpacked layers): fd-relative, never through a symlink, never into
 * another mount. */
#ifndef ROOTLESSRT_RMTREE_H
#define ROOTLESSRT_RMTREE_H

#include "rootlessrt/error.h"

/* Keep the top directory itself (emptied): the caller reuses it. */
#define RRT_RMTREE_KEEP_TOP 1u

/*
 * Removes name (relative to dirfd, or a path with AT_FDCWD) and everything under it. The walk
 * holds a directory fd at each level (openat O_DIRECTORY|O_NOFOLLOW), lists it, and removes each
 * entry with unlinkat after an fstatat(AT_SYMLINK_NOFOLLOW): a symlink is removed, never
 * followed, and a directory swapped for a symlink or a file during the walk is removed as what it
 * has become. A directory on another mount (st_dev or the mount id differs from the top's) is
 * neither entered nor removed: the error names it and the rest is still removed. name itself
 * must not be a symlink (it is removed, not followed, if it is one). Directories the caller owns
 * but cannot list or write (mode 0, 0555) are made 0700 first. 0 when the tree is gone (or was
 * never there); -1 with the first problem in err otherwise, after removing all it could.
 */
int rrt_remove_tree_at(int dirfd, const char *name, unsigned flags, struct rrt_error *err);
int rrt_remove_tree(const char *path, struct rrt_error *err);

#endif
