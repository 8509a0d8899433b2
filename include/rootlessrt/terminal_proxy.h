/* terminal_proxy.h: the runtime's side of a container pty when the runtime
 * itself is the terminal (foreground `run` / `exec -t` without
 * --console-socket), and the pty helpers exec needs. */
#ifndef ROOTLESSRT_TERMINAL_PROXY_H
#define ROOTLESSRT_TERMINAL_PROXY_H

#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

struct rrt_tproxy {
  int sock[2]; /* sock[1] goes to the container as its console fd */
  int master;  /* received pty master, or -1 */
};

/*
 * Use:
 *   struct rrt_tproxy tp;
 *   rrt_tproxy_open(&tp, err);          before the container process exists
 *   ... pass tp.sock[1] as the console fd (the child sends the master there)
 *   rrt_tproxy_child_end_close(&tp);    in the runtime, once the child has it
 *   rrt_tproxy_recv_master(&tp, err);   once the child has sent it
 *   rrt_tproxy_run(&tp, err);           raw mode, copy until the pty hangs up
 *   rrt_tproxy_close(&tp);
 */
int rrt_tproxy_open(struct rrt_tproxy *tp, struct rrt_error *err);
void rrt_tproxy_child_end_close(struct rrt_tproxy *tp);
int rrt_tproxy_recv_master(struct rrt_tproxy *tp, struct rrt_error *err);
/* When stdin is a tty: raw mode (restored on every return, at exit and on a
 * fatal signal), its window size copied to the pty now and on SIGWINCH.
 * Copies stdin -> master and master -> stdout until the master hangs up
 * (every slave fd closed: the container's processes are gone). */
int rrt_tproxy_run(struct rrt_tproxy *tp, struct rrt_error *err);
void rrt_tproxy_close(struct rrt_tproxy *tp);

/* Receives one fd over a unix socket (SCM_RIGHTS); the fd is O_CLOEXEC. */
int rrt_recv_fd(int sock, int *fd, struct rrt_error *err);
int rrt_send_fd(int sock, int fd, const char *name, struct rrt_error *err);

/* A new pty from /dev/ptmx of the current mount namespace (exec's: no
 * /dev/console bind, unlike rrt_terminal_setup), consoleSize applied, the
 * master sent over console_fd, the slave made the controlling terminal and
 * stdio of the calling process (which becomes a session leader). */
int rrt_pty_for_exec(const struct rrt_process *proc, int console_fd, struct rrt_error *err);

/* Connects to a --console-socket and checks who listens there: the caller or root only, since
 * whoever it is receives the container's terminal. */
int rrt_console_socket_connect(const char *path, struct rrt_error *err);

#endif
