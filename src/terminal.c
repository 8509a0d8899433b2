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
#include "rootlessrt/util.h"

static int send_fd(int sock, int fd, const char *name, struct rrt_error *err)
{
  char cbuf[CMSG_SPACE(sizeof(int))];
  memset(cbuf, 0, sizeof(cbuf));
  struct iovec iov = {(void *)name, strlen(name)};
  struct msghdr m = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t r;
  do
    r = sendmsg(sock, &m, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return rrt_error_errno(err, "send the pty master to --console-socket");
  return 0;
}

int rrt_terminal_setup(const struct rrt_process *proc, int console_fd, struct rrt_error *err)
{
  /* The container's own devpts instance, so the slave is visible inside. */
  cleanup_close int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return rrt_error_errno(err, "open /dev/ptmx");
  if (unlockpt(master) < 0)
    return rrt_error_errno(err, "unlockpt");
  char name[64];
  if (ptsname_r(master, name, sizeof(name)) != 0)
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
  if (send_fd(console_fd, master, name, err) < 0)
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
