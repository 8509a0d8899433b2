/* names.c: the names config.json spells things with (hook kinds, namespace types), at the bottom
 * of spec/: every other file of it may use them, they use nothing of it. */
#include <sched.h>
#include <stdbool.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------------------------------ */
/* Name tables                                                                                 */

const char *const spec_hook_names[RRT_HOOK__COUNT] = {
    [RRT_HOOK_PRESTART] = "prestart",
    [RRT_HOOK_CREATE_RUNTIME] = "createRuntime",
    [RRT_HOOK_CREATE_CONTAINER] = "createContainer",
    [RRT_HOOK_START_CONTAINER] = "startContainer",
    [RRT_HOOK_POSTSTART] = "poststart",
    [RRT_HOOK_POSTSTOP] = "poststop",
};

static const struct {
  int type;
  const char *name; /* as in config.json */
  const char *proc; /* as in /proc/PID/ns */
} ns_table[] = {
    {CLONE_NEWPID, "pid", "pid"},          {CLONE_NEWNET, "network", "net"},
    {CLONE_NEWNS, "mount", "mnt"},         {CLONE_NEWIPC, "ipc", "ipc"},
    {CLONE_NEWUTS, "uts", "uts"},          {CLONE_NEWUSER, "user", "user"},
    {CLONE_NEWCGROUP, "cgroup", "cgroup"}, {CLONE_NEWTIME, "time", "time"},
};

const char *rrt_hook_kind_name(enum rrt_hook_kind kind)
{
  if ((int)kind < 0 || kind >= RRT_HOOK__COUNT)
    return NULL;
  return spec_hook_names[kind];
}

int rrt_namespace_type_from_name(const char *name)
{
  for (size_t i = 0; name && i < sizeof ns_table / sizeof ns_table[0]; i++)
    if (strcmp(ns_table[i].name, name) == 0)
      return ns_table[i].type;
  return 0;
}

const char *rrt_namespace_type_name(int type)
{
  for (size_t i = 0; i < sizeof ns_table / sizeof ns_table[0]; i++)
    if (ns_table[i].type == type)
      return ns_table[i].name;
  return NULL;
}

const char *rrt_namespace_proc_name(int type)
{
  for (size_t i = 0; i < sizeof ns_table / sizeof ns_table[0]; i++)
    if (ns_table[i].type == type)
      return ns_table[i].proc;
  return NULL;
}

bool spec_in_list(const char *s, const char *const *list)
{
  for (; *list; list++)
    if (strcmp(*list, s) == 0)
      return true;
  return false;
}
