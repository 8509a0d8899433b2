/* terminal_proxy.c: the runtime as the container's terminal: the pty master
 * received over a socket, raw mode on the user's tty, copy loop, SIGWINCH. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "rootlessrt/terminal_proxy.h"
#include "rootlessrt/util.h"

int rrt_send_fd(int sock, int fd, const char *name, struct rrt_error *err)
{
  union rrt_fd_cmsg ctl;
  struct iovec iov = {(void *)name, strlen(name)};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
  rrt_msg_attach_fd(&m, &ctl, fd);
  ssize_t r;
  do
    r = sendmsg(sock, &m, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return rrt_error_errno(err, "send the pty master");
  return 0;
}

int rrt_recv_fd(int sock, int *fd, struct rrt_error *err)
{
  char name[256];
  union rrt_fd_cmsg ctl;
  struct iovec iov = {name, sizeof(name)};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
  rrt_msg_expect_fd(&m, &ctl);
  ssize_t r;
  do
    r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return rrt_error_errno(err, "receive the pty master");
  *fd = r > 0 ? rrt_msg_fd(&m) : -1;
  if (*fd < 0)
    return rrt_error_msgf(err, EPIPE, "the container process did not send its pty master");
  return 0;
}

int rrt_tproxy_open(struct rrt_tproxy *tp, struct rrt_error *err)
{
  tp->master = -1;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, tp->sock) < 0) {
    tp->sock[0] = tp->sock[1] = -1;
    return rrt_error_errno(err, "terminal: socketpair");
  }
  return 0;
}

void rrt_tproxy_child_end_close(struct rrt_tproxy *tp)
{
  if (tp->sock[1] >= 0)
    close(tp->sock[1]);
  tp->sock[1] = -1;
}

int rrt_tproxy_recv_master(struct rrt_tproxy *tp, struct rrt_error *err)
{
  if (rrt_recv_fd(tp->sock[0], &tp->master, err) < 0)
    return rrt_error_wrap(err, "terminal");
  return 0;
}

void rrt_tproxy_close(struct rrt_tproxy *tp)
{
  for (int i = 0; i < 2; i++)
    if (tp->sock[i] >= 0) {
      close(tp->sock[i]);
      tp->sock[i] = -1;
    }
  if (tp->master >= 0) {
    close(tp->master);
    tp->master = -1;
  }
}

/* ---------------------------------------------------------------- raw mode */

/* One saved state for the process: raw mode is a property of the user's tty,
 * and the restore must be reachable from atexit and signal handlers. */
static struct termios saved_tio;
static volatile sig_atomic_t raw_active;
static int winch_pipe[2] = {-1, -1};

static void restore_tty(void)
{
  if (raw_active) {
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
    raw_active = 0;
  }
}

static void fatal_signal(int sig)
{
  restore_tty();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void on_winch(int sig)
{
  int saved = errno;
  if (winch_pipe[1] >= 0)
    (void)!write(winch_pipe[1], "w", 1);
  errno = saved;
}

static void copy_winsize(int master)
{
  struct winsize ws;
  if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
    ioctl(master, TIOCSWINSZ, &ws);
}

static int enter_raw(struct rrt_error *err)
{
  static bool atexit_done;
  if (tcgetattr(STDIN_FILENO, &saved_tio) < 0)
    return rrt_error_errno(err, "terminal: tcgetattr");
  if (!atexit_done) {
    atexit(restore_tty);
    atexit_done = true;
  }
  /* Fatal signals nobody handles must not leave the user's tty raw. */
  static const int fatal[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGALRM};
  for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
    struct sigaction old;
    if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
      struct sigaction sa = {.sa_handler = fatal_signal};
      sigemptyset(&sa.sa_mask);
      sigaction(fatal[i], &sa, NULL);
    }
  }
  struct termios raw = saved_tio;
  cfmakeraw(&raw);
  raw.c_oflag = saved_tio.c_oflag; /* keep output post-processing as the shell had it */
  if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) < 0)
    return rrt_error_errno(err, "terminal: set raw mode");
  raw_active = 1;
  return 0;
}

/* Writes everything; a reader that went away is not our error. */
static int copy_out(int fd, const char *buf, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN) {
        struct pollfd p = {fd, POLLOUT, 0};
        poll(&p, 1, 100);
        continue;
      }
      return -1;
    }
    buf += w;
    n -= (size_t)w;
  }
  return 0;
}

static int copy_loop(int master, bool stdin_open)
{
  char buf[8192];
  for (;;) {
    struct pollfd p[3] = {
        {master, POLLIN, 0},
        {stdin_open ? STDIN_FILENO : -1, POLLIN, 0},
        {winch_pipe[0], POLLIN, 0},
    };
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (p[2].revents & POLLIN) {
      char c[16];
      (void)!read(winch_pipe[0], c, sizeof(c));
      copy_winsize(master);
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t r = read(master, buf, sizeof(buf));
      if (r > 0) {
        if (copy_out(STDOUT_FILENO, buf, (size_t)r) < 0)
          return 0;
        continue; /* drain the output before looking at a hang-up */
      }
      if (r < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      return 0; /* EIO or EOF: every slave is closed */
    }
    if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t r = read(STDIN_FILENO, buf, sizeof(buf));
      if (r < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (r <= 0) {
        /* Input is over: the pty's EOF character tells the program so. */
        char eof = 4;
        copy_out(master, &eof, 1);
        stdin_open = false;
        continue;
      }
      copy_out(master, buf, (size_t)r);
    }
  }
}

int rrt_tproxy_run(struct rrt_tproxy *tp, struct rrt_error *err)
{
  if (tp->master < 0)
    return rrt_error_msgf(err, EBADF, "terminal: no pty master");
  bool tty = isatty(STDIN_FILENO);
  if (pipe2(winch_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return rrt_error_errno(err, "terminal: pipe");
  struct sigaction old_winch, sa = {.sa_handler = on_winch, .sa_flags = SA_RESTART};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGWINCH, &sa, &old_winch);
  int ret = 0;
  if (tty) {
    copy_winsize(tp->master);
    ret = enter_raw(err);
  }
  if (ret == 0 && copy_loop(tp->master, true) < 0)
    ret = rrt_error_errno(err, "terminal: poll");
  restore_tty();
  sigaction(SIGWINCH, &old_winch, NULL);
  close(winch_pipe[0]);
  close(winch_pipe[1]);
  winch_pipe[0] = winch_pipe[1] = -1;
  return ret;
}
