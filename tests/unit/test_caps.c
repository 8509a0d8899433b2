/* test_caps.c: capabilities validated, then applied in a child (as root in a user namespace, and
 * across a switch to uid 1000). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>

#include "confine_child.h"
#include "rootlessrt/confine.h"
#include "tap.h"

static void test_caps_validate(void)
{
  struct rrt_error e = RRT_ERROR_INIT;
  struct rrt_caps good = {.bounding = STRV("CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"),
                          .effective = STRV("cap_chown")};
  is_int(rrt_caps_validate(&good, &e), 0, "caps: valid names accepted");
  is_int(rrt_caps_validate(NULL, &e), 0, "caps: NULL accepted");

  /* config.md: a value that cannot be mapped is a warning, not a failure. */
  struct rrt_caps bad = {.bounding = STRV("CAP_CHOWN", "CAP_KILL", "CAP_FOO")};
  is_int(rrt_caps_validate(&bad, &e), 0, "caps: CAP_FOO is skipped (a warning), not an error");
  struct rrt_caps num = {.ambient = STRV("12")};
  is_int(rrt_caps_validate(&num, &e), 0, "caps: a bare number is skipped as unknown");
  rrt_error_clear(&e);
}

struct caps_case {
  const struct rrt_caps *caps;
  uid_t switch_to; /* 0 = stay root */
};

/* The five masks of /proc/self/status, as "Bnd Eff Prm Inh Amb" hex. */
static void say_status_caps(int out)
{
  FILE *f = fopen("/proc/self/status", "re");
  char line[256];
  const char *keys[] = {"CapBnd:", "CapEff:", "CapPrm:", "CapInh:", "CapAmb:"};
  unsigned long long v[5] = {0};
  while (f && fgets(line, sizeof(line), f))
    for (int i = 0; i < 5; i++)
      if (strncmp(line, keys[i], strlen(keys[i])) == 0)
        v[i] = strtoull(line + strlen(keys[i]), NULL, 16);
  if (f)
    fclose(f);
  say(out, "%llx %llx %llx %llx %llx", v[0], v[1], v[2], v[3], v[4]);
}

static int caps_child(int out, void *arg)
{
  const struct caps_case *c = arg;
  struct rrt_error e = RRT_ERROR_INIT;
  if (c->switch_to == 0 && enter_self_userns() < 0)
    return say(out, "userns: %s", strerror(errno)), 2;
  if (rrt_caps_prepare(c->caps, &e) < 0)
    return say(out, "prepare: %s", rrt_error_msg(&e)), 3;
  if (c->switch_to != 0 && (setresgid(c->switch_to, c->switch_to, c->switch_to) < 0 ||
                            setresuid(c->switch_to, c->switch_to, c->switch_to) < 0))
    return say(out, "setresuid: %s", strerror(errno)), 4;
  if (rrt_caps_apply(c->caps, &e) < 0)
    return say(out, "apply: %s", rrt_error_msg(&e)), 5;
  say_status_caps(out);
  return 0;
}

/* For the uid switch the parent maps 0 and 1000 (only a privileged parent
 * can map two ids), then lets the child go on. */
struct mapped_child {
  const struct caps_case *c;
  int go[2];
  int ready[2];
};

static int mapped_caps_child(int out, void *arg)
{
  struct mapped_child *m = arg;
  char b = 0;
  if (unshare(CLONE_NEWUSER) < 0)
    return say(out, "unshare: %s", strerror(errno)), 2;
  if (write(m->ready[1], "r", 1) != 1 || read(m->go[0], &b, 1) != 1 || b != 'g')
    return say(out, "sync failed"), 2;
  if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
    return say(out, "become root: %s", strerror(errno)), 2;
  return caps_child(out, (void *)m->c);
}

static int fork_mapped(struct mapped_child *m, char **out)
{
  if (pipe2(m->go, O_CLOEXEC) < 0 || pipe2(m->ready, O_CLOEXEC) < 0)
    abort();
  pid_t pid;
  int rfd = child_start(mapped_caps_child, m, &pid);
  char b;
  if (read(m->ready[0], &b, 1) == 1) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
    write_str(path, "0 0 1\n1000 1000 1");
    snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
    write_str(path, "0 0 1\n1000 1000 1");
    (void)!write(m->go[1], "g", 1);
  }
  int st = child_finish(pid, rfd, out);
  close(m->go[0]);
  close(m->go[1]);
  close(m->ready[0]);
  close(m->ready[1]);
  return st;
}

#define BIT(c) (1ULL << (c))

static void test_caps_apply(bool have_userns)
{
  if (!have_userns) {
    for (int i = 0; i < 9; i++)
      ok(1, "# SKIP user namespaces unavailable");
    return;
  }
  char *out = NULL;
  char expect[128];
  struct rrt_caps caps = {
      .bounding = STRV("CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SETPCAP"),
      .effective = STRV("CAP_CHOWN", "CAP_NET_BIND_SERVICE"),
      .permitted = STRV("CAP_CHOWN", "CAP_NET_BIND_SERVICE", "CAP_KILL"),
      .inheritable = STRV("CAP_NET_BIND_SERVICE"),
      .ambient = STRV("CAP_NET_BIND_SERVICE"),
  };
  struct caps_case c = {&caps, 0};
  int st = in_child(caps_child, &c, &out);
  ok(exited0(st), "caps: applied as root in a user namespace (%s)", out);
  snprintf(expect, sizeof(expect), "%llx %llx %llx %llx %llx",
           BIT(CAP_CHOWN) | BIT(CAP_KILL) | BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_SETPCAP),
           BIT(CAP_CHOWN) | BIT(CAP_NET_BIND_SERVICE),
           BIT(CAP_CHOWN) | BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_KILL), BIT(CAP_NET_BIND_SERVICE),
           BIT(CAP_NET_BIND_SERVICE));
  is_str(out, expect, "caps: CapBnd/CapEff/CapPrm/CapInh/CapAmb exactly as configured");
  free(out);

  struct caps_case none = {NULL, 0};
  st = in_child(caps_child, &none, &out);
  ok(exited0(st), "caps: NULL caps applied");
  is_str(out, "0 0 0 0 0", "caps: NULL caps = every set empty");
  free(out);

  struct rrt_caps amb_bad = {.bounding = STRV("CAP_KILL"),
                             .permitted = STRV("CAP_KILL"),
                             .effective = STRV("CAP_KILL"),
                             .ambient = STRV("CAP_KILL")};
  struct caps_case ab = {&amb_bad, 0};
  st = in_child(caps_child, &ab, &out);
  ok(exited0(st), "caps: an ambient capability without inheritable is skipped (buildah's configs)");
  snprintf(expect, sizeof(expect), "%llx %llx %llx 0 0", BIT(CAP_KILL), BIT(CAP_KILL),
           BIT(CAP_KILL));
  is_str(out, expect, "caps: the rest applied, the ambient one not raised");
  free(out);

  if (getuid() != 0) {
    for (int i = 0; i < 3; i++)
      ok(1, "# SKIP mapping uid 1000 needs a privileged parent");
    return;
  }
  struct rrt_caps user = {
      .bounding = STRV("CAP_NET_BIND_SERVICE", "CAP_NET_RAW"),
      .effective = STRV("CAP_NET_BIND_SERVICE"),
      .permitted = STRV("CAP_NET_BIND_SERVICE", "CAP_NET_RAW"),
      .inheritable = STRV("CAP_NET_BIND_SERVICE"),
      .ambient = STRV("CAP_NET_BIND_SERVICE"),
  };
  struct caps_case uc = {&user, 1000};
  struct mapped_child m = {.c = &uc};
  st = fork_mapped(&m, &out);
  ok(exited0(st), "caps: applied across setresuid(1000) (%s)", out);
  snprintf(expect, sizeof(expect), "%llx %llx %llx %llx %llx",
           BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_NET_RAW), BIT(CAP_NET_BIND_SERVICE),
           BIT(CAP_NET_BIND_SERVICE) | BIT(CAP_NET_RAW), BIT(CAP_NET_BIND_SERVICE),
           BIT(CAP_NET_BIND_SERVICE));
  is_str(out, expect, "caps: uid 1000 keeps exactly the configured sets (KEEPCAPS worked)");
  free(out);

  uc.caps = NULL;
  st = fork_mapped(&m, &out);
  is_str(out, "0 0 0 0 0", "caps: uid 1000 with NULL caps has nothing");
  free(out);
}

int main(void)
{
  bool have_userns = userns_works();
  test_caps_validate();
  test_caps_apply(have_userns);
  return tap_done();
}
