/* interrupt.c: the signals that end a create (an engine giving up, ^C). */
#include <signal.h>
#include <stddef.h>

#include "create.h"

/* SIGTERM/SIGINT/SIGHUP/SIGQUIT during create (an engine giving up, ^C):
 * the handler kills what create started, so the wait in progress fails and
 * the ordinary failure path destroys the rest (state, poststop). Hooks have
 * their own handling (hooks.c), so these handlers are lifted around them. */
volatile sig_atomic_t rrt_create_interrupted;
volatile pid_t rrt_create_child = -1, rrt_create_init = -1;
static const int create_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
#define N_CREATE_SIGNALS (sizeof(create_signals) / sizeof(create_signals[0]))

static void on_create_signal(int sig)
{
  rrt_create_interrupted = sig;
  if (rrt_create_init > 0)
    kill(rrt_create_init, SIGKILL);
  if (rrt_create_child > 0)
    kill(rrt_create_child, SIGKILL);
}

void rrt_create_signals_set(bool catch)
{
  struct sigaction sa = {.sa_handler = catch ? on_create_signal : SIG_DFL};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < N_CREATE_SIGNALS; i++)
    sigaction(create_signals[i], &sa, NULL);
}
