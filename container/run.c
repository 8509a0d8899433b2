/* run.c: run: create, start, the terminal, the wait for the container and its delete. */
#include <errno.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "create.h"
#include "internal.h"
#include "rootlessrt/container.h"
#include "rootlessrt/log.h"
#include "rootlessrt/terminal_proxy.h"
#include "rootlessrt/util.h"

/* run: what create made, still locked, so nothing is read back from disk and no start socket
 * is needed. l keeps it for delete, unlocked meanwhile. */
static int start_created(struct created *cr, struct loaded *l, struct rrt_error *err)
{
  *l = (struct loaded){.root = steal_ptr(&cr->root),
                       .dirfd = steal_fd(&cr->dirfd),
                       .st = cr->st,
                       .spec = cr->spec,
                       .spec_borrowed = true};
  memset(&cr->st, 0, sizeof(cr->st));
  int ret = rrt_start_loaded(l, steal_fd(&cr->sync_fd), cr->start_sent, err);
  (void)flock(l->dirfd, LOCK_UN);
  return ret;
}

/* run, once the container is gone: its state as start left it, locked again. Gone already
 * (`delete` from elsewhere: the directory has no link left) is fine, as for delete --force. */
static int delete_started(struct loaded *l, struct rrt_error *err)
{
  int r;
  do
    r = flock(l->dirfd, LOCK_EX);
  while (r < 0 && errno == EINTR);
  struct stat sb;
  if (r < 0 || fstat(l->dirfd, &sb) < 0)
    return rrt_error_errno(err, "lock container \"%s\"", l->st.id);
  if (sb.st_nlink == 0)
    return 0;
  return rrt_loaded_destroy(l, err);
}

int rrt_container_run(const struct rrt_global *g, const struct rrt_create_opts *o, int *status,
                      struct rrt_error *err)
{
  PHASE("run");
  struct created cr = {.init = -1, .terminal_fd = -1, .dirfd = -1, .sync_fd = -1};
  struct loaded l = {.dirfd = -1};
  if (rrt_create_container(g, o, &cr, err) < 0)
    return -1;
  pid_t init = cr.init;
  /* With a terminal and no --console-socket, run is the terminal. */
  bool proxy = cr.terminal_fd >= 0;
  struct rrt_tproxy tp = {.sock = {steal_fd(&cr.terminal_fd), -1}, .master = -1};
  int ret = -1;
  if (proxy) {
    if (rrt_tproxy_recv_master(&tp, err) < 0) {
      struct rrt_error ignored = RRT_ERROR_INIT;
      close(steal_fd(&cr.dirfd)); /* the lock, for delete */
      rrt_container_delete_known(g, o->id, true, cr.spec, &ignored);
      rrt_error_clear(&ignored);
      goto out;
    }
  }
  if (!o->detach)
    rrt_forward_signals(init, false);
  if (start_created(&cr, &l, err) < 0) {
    struct rrt_error ignored = RRT_ERROR_INIT;
    delete_started(&l, &ignored);
    rrt_error_clear(&ignored);
    if (!o->detach)
      rrt_reap_quietly(init);
    goto out;
  }
  *status = 0;
  if (o->detach) {
    ret = 0;
    goto out;
  }
  /* The copy loop ends when every slave fd is closed: the container is gone
   * or has let go of its terminal; its status comes from wait. */
  if (proxy && rrt_tproxy_run(&tp, err) < 0)
    rrt_warn("terminal: %s", rrt_error_msg(err));
  rrt_error_clear(err);
  PHASE("started");
  *status = rrt_wait_reaping(init);
  if (*status < 0) {
    rrt_error_errno(err, "wait for the container");
    goto out;
  }
  PHASE("container exited");
  rrt_forward_signals_stop();
  ret = o->keep ? 0 : delete_started(&l, err);
  PHASE("deleted");
out:
  rrt_loaded_free(&l);
  if (proxy)
    rrt_tproxy_close(&tp);
  rrt_created_free(&cr);
  return ret;
}
