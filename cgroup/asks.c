/* asks.c: what a linux.resources value asks for (nothing, the kernel's default, or a limit),
 * decided in this one place for the cgroupfs writers (resources.c) and the systemd driver's unit
 * properties (systemd.c) alike. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "rootlessrt/cgroup.h"

/*
 * What a linux.resources value asks for, decided once for every resource. Engines send some
 * members with every container: Docker "blockIO.weight": 0 and "cpu.shares": 0 ("not set", as
 * runc, crun and the kernel read them), ctr "cpu.shares": 1024 (the kernel's default), podman
 * "pids.limit": -1, the containerd shim "cpu.period"/"cpu.quota" 0 on update ("unchanged").
 * field is the config path without the "linux.resources." prefix and without an index.
 */
enum rrt_cg_ask rrt_cgroup_asks(const char *field, const char *value)
{
  static const struct {
    const char *field;
    const char *unset;  /* the value meaning "not set": never written */
    const char *dflt;   /* the kernel's default, written only where the file is */
    bool negative_dflt; /* any negative number is "no limit" (-1, unlimited) */
  } table[] = {
      {"memory.limit", "0", NULL, true},
      {"memory.reservation", "0", NULL, true},
      {"memory.swap", "0", NULL, true},
      {"cpu.shares", "0", "1024", false},
      {"cpu.quota", "0", NULL, true},
      {"cpu.period", "0", "100000", false},
      {"cpu.burst", NULL, "0", false},
      {"cpu.realtimeRuntime", "0", NULL, false},
      {"cpu.realtimePeriod", "0", NULL, false},
      {"cpu.cpus", "", NULL, false},
      {"cpu.mems", "", NULL, false},
      {"cpu.idle", NULL, "0", false},
      {"blockIO.weight", "0", NULL, false},
      {"blockIO.leafWeight", "0", NULL, false},
      {"blockIO.weightDevice", "0", NULL, false},
      {"blockIO.throttleReadBpsDevice", NULL, "0", false},
      {"blockIO.throttleWriteBpsDevice", NULL, "0", false},
      {"blockIO.throttleReadIOPSDevice", NULL, "0", false},
      {"blockIO.throttleWriteIOPSDevice", NULL, "0", false},
      /* -1 is none. config-linux.md (1.3.0) would have 0 a real limit of 0, but the engines of
       * this generation send 0 meaning "none" (podman 4 with --pids-limit=-1, as runc 1.1 reads
       * it), and a container that can fork nothing is never what they asked for (issue 21:
       * what engines always send is no limit). */
      {"pids.limit", "0", NULL, true},
      {"network.classID", "0", NULL, false},
  };
  if (!value)
    return RRT_CG_UNSET;
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    if (strcmp(table[i].field, field) != 0)
      continue;
    if (table[i].unset && strcmp(value, table[i].unset) == 0)
      return RRT_CG_UNSET;
    if (table[i].dflt && strcmp(value, table[i].dflt) == 0)
      return RRT_CG_DEFAULT;
    if (table[i].negative_dflt && value[0] == '-' && value[1] >= '1' && value[1] <= '9')
      return RRT_CG_DEFAULT;
    return RRT_CG_LIMIT;
  }
  return RRT_CG_LIMIT;
}
