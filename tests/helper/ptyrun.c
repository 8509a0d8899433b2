/* ptyrun.c: test tool: runs CMD as a session leader whose controlling terminal, stdin, stdout and
 * stderr are a new pty, copies what the pty prints to stdout, and exits with CMD's status.
 * Nothing is ever written to the pty: unlike script(1), no end of file is forwarded when ptyrun's
 * own stdin ends, so CMD sees a terminal that simply stays quiet; but with --reply PROMPT TEXT,
 * each time what the pty printed since the last reply ends with PROMPT (a shell waiting, "# "),
 * TEXT is typed (the documentation examples' interactive shells are answered so), and at the
 * end "ptyrun: N replies" is printed on stderr.
 * Usage: ptyrun [--timeout SECONDS] [--reply PROMPT TEXT] CMD [ARG...]   (default 60 s; on
 * timeout the process group is killed, ptyrun says so on stderr and exits 124). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int die(const char *what)
{
  fprintf(stderr, "ptyrun: %s: %s\n", what, strerror(errno));
  return 125;
}

/* --reply: the prompt, the text, and the tail of what the pty printed since the last reply,
 * without its escape sequences (a line editor's cursor queries and redraws). After a reply,
 * prompts are not answered again until the text typed has been echoed: a shell that redraws
 * its prompt (on SIGWINCH, say) before it reads the reply is not answered twice. */
static const char *prompt, *reply;
static char tail[256];
static size_t tail_len;
static unsigned replies;
static bool awaiting_echo;
static enum { TEXT, ESC, CSI } esc_state;

static bool tail_ends_with(const char *s, size_t len)
{
  return tail_len >= len && memcmp(tail + tail_len - len, s, len) == 0;
}

static void watch_prompt(int master, const char *buf, size_t n)
{
  if (!prompt)
    return;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)buf[i];
    if (esc_state == ESC) {
      esc_state = c == '[' ? CSI : TEXT;
      continue;
    }
    if (esc_state == CSI) {
      if (c >= 0x40 && c <= 0x7e)
        esc_state = TEXT;
      continue;
    }
    if (c == 0x1b) {
      esc_state = ESC;
      continue;
    }
    if (tail_len == sizeof(tail))
      memmove(tail, tail + 1, --tail_len);
    tail[tail_len++] = (char)c;
    /* The echo of the reply, up to its newline (the pty prints that as "\r\n"). */
    size_t echo_len = strcspn(reply, "\n");
    if (awaiting_echo && tail_ends_with(reply, echo_len)) {
      awaiting_echo = false;
      tail_len = 0;
    }
  }
  if (awaiting_echo || !tail_ends_with(prompt, strlen(prompt)))
    return;
  tail_len = 0;
  awaiting_echo = true;
  replies++;
  for (size_t off = 0, len = strlen(reply); off < len;) {
    ssize_t w = write(master, reply + off, len - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    off += (size_t)w;
  }
}

static void copy_out(int master)
{
  char buf[4096];
  ssize_t n;
  while ((n = read(master, buf, sizeof(buf))) > 0) {
    watch_prompt(master, buf, (size_t)n);
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(STDOUT_FILENO, buf + off, (size_t)(n - off));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return;
      off += w;
    }
  }
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
  int timeout = 60, i = 1;
  if (i + 1 < argc && strcmp(argv[i], "--timeout") == 0) {
    timeout = atoi(argv[i + 1]);
    i += 2;
  }
  if (i + 2 < argc && strcmp(argv[i], "--reply") == 0) {
    prompt = argv[i + 1];
    reply = argv[i + 2];
    i += 3;
  }
  if (i >= argc || timeout <= 0 || (prompt && !*prompt)) {
    fputs("usage: ptyrun [--timeout SECONDS] [--reply PROMPT TEXT] CMD [ARG...]\n", stderr);
    return 2;
  }
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
    return die("open a pty");
  const char *name = ptsname(master);
  if (!name)
    return die("ptsname");
  /* ptyrun keeps a slave open until CMD is gone: reads of the master block instead of failing
   * with EIO in the moments no other slave is open. */
  int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return die(name);
  struct winsize ws = {.ws_row = 24, .ws_col = 80};
  ioctl(slave, TIOCSWINSZ, &ws);

  pid_t pid = fork();
  if (pid < 0)
    return die("fork");
  if (pid == 0) {
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0)
      _exit(die("make the pty the controlling terminal"));
    for (int fd = 0; fd < 3; fd++)
      if (dup2(slave, fd) < 0)
        _exit(die("dup2"));
    execvp(argv[i], argv + i);
    int e = errno;
    die(argv[i]);
    _exit(e == ENOENT ? 127 : 126);
  }

  int status = 0;
  double deadline = now() + timeout;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      break;
    if (r < 0 && errno != EINTR)
      return die("waitpid");
    if (now() > deadline) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      fprintf(stderr, "ptyrun: %s timed out after %d s\n", argv[i], timeout);
      close(slave);
      fcntl(master, F_SETFL, O_NONBLOCK);
      copy_out(master);
      return 124;
    }
    struct pollfd p = {master, POLLIN, 0};
    if (poll(&p, 1, 50) > 0 && (p.revents & POLLIN)) {
      fcntl(master, F_SETFL, O_NONBLOCK);
      copy_out(master);
      fcntl(master, F_SETFL, 0);
    }
  }
  /* CMD is gone: what it and anything it left behind already wrote is in the pty's buffer. */
  close(slave);
  fcntl(master, F_SETFL, O_NONBLOCK);
  copy_out(master);
  if (prompt)
    fprintf(stderr, "ptyrun: %u replies\n", replies);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
