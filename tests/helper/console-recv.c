/* console-recv.c: test tool: listens on a unix socket PATH, receives a pty master over
 * SCM_RIGHTS (what --console-socket gets), optionally prints its window size, writes INPUT to it
 * and copies what comes back to stdout until the pty hangs up or TIMEOUT seconds pass.
 * Usage: console-recv PATH [INPUT] [--winsize] [--resize ROWSxCOLS] [--timeout N]
 * It prints "ready" on stderr once listening. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int die(const char *what)
{
  fprintf(stderr, "console-recv: %s: %s\n", what, strerror(errno));
  return 1;
}

int main(int argc, char **argv)
{
  const char *path = NULL, *input = NULL;
  int show_size = 0, timeout = 20;
  unsigned rows = 0, cols = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--winsize") == 0)
      show_size = 1;
    else if (strcmp(argv[i], "--resize") == 0 && i + 1 < argc)
      sscanf(argv[++i], "%ux%u", &rows, &cols);
    else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
      timeout = atoi(argv[++i]);
    else if (!path)
      path = argv[i];
    else
      input = argv[i];
  }
  if (!path) {
    fputs("usage: console-recv PATH [INPUT] [--winsize] [--resize RxC] [--timeout N]\n", stderr);
    return 2;
  }
  int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (ls < 0 || strlen(path) >= sizeof(sa.sun_path))
    return die("socket");
  strcpy(sa.sun_path, path);
  unlink(path);
  if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1) < 0)
    return die(path);
  fputs("ready\n", stderr);
  struct pollfd lp = {ls, POLLIN, 0};
  if (poll(&lp, 1, timeout * 1000) <= 0) {
    fputs("console-recv: nobody connected\n", stderr);
    return 1;
  }
  int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
  if (c < 0)
    return die("accept");
  char name[256], cbuf[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {name, sizeof(name) - 1};
  struct msghdr m = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
  ssize_t r = recvmsg(c, &m, MSG_CMSG_CLOEXEC);
  struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
  if (r < 0 || !cm || cm->cmsg_type != SCM_RIGHTS) {
    fputs("console-recv: no fd received\n", stderr);
    return 1;
  }
  int master;
  memcpy(&master, CMSG_DATA(cm), sizeof(int));
  name[r > 0 ? r : 0] = '\0';
  fprintf(stderr, "got pty master for %s\n", name);
  if (show_size) {
    struct winsize ws;
    if (ioctl(master, TIOCGWINSZ, &ws) < 0)
      return die("TIOCGWINSZ");
    printf("winsize %ux%u\n", ws.ws_row, ws.ws_col);
    fflush(stdout);
  }
  if (rows && cols) {
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    if (ioctl(master, TIOCSWINSZ, &ws) < 0)
      return die("TIOCSWINSZ");
  }
  if (input) {
    size_t n = strlen(input);
    if (write(master, input, n) != (ssize_t)n)
      return die("write to the pty");
  }
  time_t end = time(NULL) + timeout;
  char buf[4096];
  for (;;) {
    struct pollfd p = {master, POLLIN, 0};
    int left = (int)(end - time(NULL));
    if (left <= 0 || poll(&p, 1, left * 1000) <= 0) {
      fputs("console-recv: timed out\n", stderr);
      return 1;
    }
    r = read(master, buf, sizeof(buf));
    if (r <= 0)
      break; /* EIO: every slave closed */
    fwrite(buf, 1, (size_t)r, stdout);
    fflush(stdout);
  }
  return 0;
}
