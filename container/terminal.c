/* terminal.c: the container's pty, its master handed to --console-socket. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "rootlessrt/init.h"
#include "rootlessrt/terminal_proxy.h"
#include "rootlessrt/trust.h"
#include "rootlessrt/util.h"

/* A pty from /dev/ptmx of the current mount namespace (the container's
 * devpts instance, so the slave is visible inside), consoleSize applied. */
static int pty_open(const struct rrt_process *proc, int *master_out, int *slave_out, char *name,
                    size_t name_len, struct rrt_error *err)
{
  cleanup_close int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return rrt_error_errno(err, "open /dev/ptmx");
  if (unlockpt(master) < 0)
    return rrt_error_errno(err, "unlockpt");
  if (ptsname_r(master, name, name_len) != 0)
    return rrt_error_errno(err, "ptsname");
  cleanup_close int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return rrt_error_errno(err, "open %s", name);
  if (proc->has_console_size) {
    struct winsize ws = {.ws_row = (unsigned short)proc->console_height,
                         .ws_col = (unsigned short)proc->console_width};
    if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
      return rrt_error_errno(err, "process.consoleSize");
  }
  *master_out = steal_fd(&master);
  *slave_out = steal_fd(&slave);
  return 0;
}

/* The master to the console socket; the slave becomes the controlling
 * terminal and stdio of this process (a new session leader). */
static int pty_hand_over(int master, int slave, const char *name, int console_fd,
                         struct rrt_error *err)
{
  if (rrt_send_fd(console_fd, master, name, err) < 0)
    return -1;
  if (setsid() < 0)
    return rrt_error_errno(err, "setsid");
  if (ioctl(slave, TIOCSCTTY, 0) < 0)
    return rrt_error_errno(err, "TIOCSCTTY");
  for (int fd = 0; fd < 3; fd++)
    if (dup2(slave, fd) < 0)
      return rrt_error_errno(err, "dup2 pty to %d", fd);
  return 0;
}

int rrt_pty_for_exec(const struct rrt_process *proc, int console_fd, struct rrt_error *err)
{
  cleanup_close int master = -1;
  cleanup_close int slave = -1;
  char name[64];
  if (pty_open(proc, &master, &slave, name, sizeof(name), err) < 0)
    return -1;
  return pty_hand_over(master, slave, name, console_fd, err);
}

int rrt_terminal_setup(const struct rrt_process *proc, int console_fd, struct rrt_error *err)
{
  cleanup_close int master = -1;
  cleanup_close int slave = -1;
  char name[64];
  if (pty_open(proc, &master, &slave, name, sizeof(name), err) < 0)
    return -1;
  /* /dev/console: an empty regular file bound to the slave. What the rootfs
   * put there is looked at through an O_PATH fd, never opened: a symlink
   * would redirect the bind (CVE-2025-52565) and opening a FIFO blocks. */
  int created = open("/dev/console", O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (created >= 0)
    close(created);
  cleanup_close int cfd = open("/dev/console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (cfd >= 0) {
    struct stat st;
    char target[64];
    snprintf(target, sizeof(target), "/proc/self/fd/%d", cfd);
    if (fstat(cfd, &st) < 0)
      return rrt_error_errno(err, "stat /dev/console");
    if (S_ISLNK(st.st_mode))
      return rrt_error_set(err, ELOOP, "/dev/console in the container is a symlink: refusing");
    if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
      return rrt_error_set(err, EINVAL,
                           "/dev/console in the container is not a file or a character device "
                           "(mode 0%o): refusing",
                           (unsigned)(st.st_mode & S_IFMT));
    if (mount(name, target, NULL, MS_BIND, NULL) < 0)
      return rrt_error_errno(err, "bind %s onto /dev/console", name);
  }
  return pty_hand_over(master, slave, name, console_fd, err);
}

int rrt_console_socket_connect(const char *path, struct rrt_error *err)
{
  cleanup_close int fd = rrt_connect_unix(path, "--console-socket", err);
  if (fd < 0)
    return -1;
  if (rrt_trust_peer(fd, "--console-socket", path, err) < 0)
    return -1;
  return steal_fd(&fd);
}
