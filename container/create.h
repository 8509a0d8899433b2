/* create.h: what the files of create and run share (create.c, plan.c, statedir.c,
 * handshake.c, interrupt.c, start.c, run.c). Nothing outside container/ includes it. */
#ifndef ROOTLESSRT_CONTAINER_CREATE_H
#define ROOTLESSRT_CONTAINER_CREATE_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/cmd.h"
#include "rootlessrt/container.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/hostfds.h"
#include "rootlessrt/init.h"
#include "rootlessrt/log.h"
#include "rootlessrt/net.h"
#include "rootlessrt/notify.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/state.h"
#include "rootlessrt/userns.h"

struct loaded;
struct sockaddr_un;

/* --debug shows where create/run spend their time (log.h). */
#define PHASE(...) rrt_phase(__VA_ARGS__)

struct create_ctx {
  const struct rrt_global *g;
  struct rrt_cgroup cg_made; /* only made_v2 and made_v1: what a failed create removes */
  const struct rrt_create_opts *o;
  struct rrt_spec *spec;
  char *config_text;
  char *bundle;
  char *rootfs;
  char *root;
  char *pid_file;
  bool pid_file_written; /* by this create: the only pid file a failed one removes */
  char *resolv_conf;     /* the generated resolv.conf, slirp mode */
  char *seccomp_cache;   /* in the private directory beside ROOT, or NULL */
  int dirfd;
  int listen_fd;
  int console_fd;
  int terminal_fd; /* foreground run: our end of the socket init sends its pty to */
  int sync_fd;     /* run: the sync socket, kept to send START on */
  bool for_run;
  bool hooks_done_sent; /* HOOKS_DONE went with CONTINUE: nothing to do at NS_READY */
  bool start_sent;      /* run: START queued behind it, init does not wait for us */
  struct rrt_userns_plan plan;
  struct rrt_net_config net;
  struct rrt_hostfds hostfds; /* real root with a user namespace; released at NS_READY */
  struct rrt_notify notify;   /* NOTIFY_SOCKET relayed, when the caller set it */
  struct rrt_init_args init;
  struct rrt_state st;
  bool dir_created;
  bool cgroup_made;            /* before the clone: init joins it itself (init_joins_cgroup) */
  struct rrt_cgroup_join join; /* what init joins with */
};

/* What run goes on with after create: no need to read it back from disk. */
struct created {
  pid_t init;
  int terminal_fd;       /* see create_ctx.terminal_fd; -1 when none */
  struct rrt_spec *spec; /* the config create parsed: the state directory's copy of it */
  char *root;
  int dirfd;       /* the state directory, still locked: no `start` from elsewhere between */
  int sync_fd;     /* init listens on it for START as well as on its start socket */
  bool start_sent; /* and has START already */
  struct rrt_state st;
};

/* create.c */
/* out NULL: create; otherwise run, which goes on with what create made (out). */
int rrt_create_container(const struct rrt_global *g, const struct rrt_create_opts *o,
                         struct created *out, struct rrt_error *err);
void rrt_created_free(struct created *cr);
/* Waits for the intermediate child when init is a grandchild. */
void rrt_reap_quietly(pid_t pid);

/* plan.c: everything create decides and prepares before the clone. */
int rrt_create_prepare(struct create_ctx *c, struct rrt_error *err);

/* handshake.c */
/* init 0: made before the clone, init joins it (c->join). */
int rrt_create_setup_cgroup(struct create_ctx *c, pid_t init, struct rrt_error *err);
int rrt_create_while_helpers_run(struct create_ctx *c, int sync_fd, pid_t init,
                                 const struct rrt_maps_job *maps, struct rrt_error *err);
int rrt_create_after_init(struct create_ctx *c, int sync_fd, pid_t init, struct rrt_error *err);

/* statedir.c */
int rrt_create_make_state(struct create_ctx *c, struct rrt_error *err);
int rrt_create_in_state_dir(const struct create_ctx *c, struct rrt_error *err);
int rrt_start_socket_addr(int dirfd, struct sockaddr_un *sa);

/* interrupt.c: set by the handler; it kills create_child and create_init when they are > 0. */
extern volatile sig_atomic_t rrt_create_interrupted;
extern volatile pid_t rrt_create_child, rrt_create_init;
void rrt_create_signals_set(bool catch);

/* start.c: sync_fd: run's socket to init (taken and closed), or -1 to connect to the start
 * socket; sent: START went already. */
int rrt_start_loaded(struct loaded *l, int sync_fd, bool sent, struct rrt_error *err);

#endif
