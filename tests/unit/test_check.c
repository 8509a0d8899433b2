/* test_check.c: rrt_check_explain (create's errors pointing at `rootlessrt check`), the
 * distribution families from os-release, and the storage item on a filesystem without user
 * xattrs (ramfs, as root). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "rootlessrt/check.h"
#include "rootlessrt/util.h"
#include "tap.h"

static char *explained(int errnum, const char *msg)
{
  struct rrt_error err = RRT_ERROR_INIT;
  rrt_error_msgf(&err, errnum, "%s", msg);
  rrt_check_explain(&err);
  return err.msg;
}

static void test_explain(void)
{
  static const char *const tail = "; run 'rootlessrt check' for details";
  struct {
    int e;
    const char *msg, *cause;
  } cases[] = {
      {EPERM, "clone(CLONE_NEWUSER): Operation not permitted",
       "user namespaces are denied to this user"},
      {ENOSPC, "clone(CLONE_NEWUSER): No space left on device",
       "no user namespace may be created (user.max_user_namespaces)"},
      {0, "newuidmap: exit status 1: newuidmap: write to uid_map failed",
       "the id-map helpers (newuidmap/newgidmap) failed"},
      {0, "no subordinate uid range for bob in /etc/subuid",
       "the subordinate ids (/etc/subuid, /etc/subgid) do not allow the maps"},
      {EACCES, "network: open /dev/net/tun: Permission denied", "/dev/net/tun is not usable"},
      {0, "network helper: exited before it was ready", "the network helper rootlessrt-net failed"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cleanup_free char *got = explained(cases[i].e, cases[i].msg);
    cleanup_free char *want = xasprintf("%s (%s)%s", cases[i].msg, cases[i].cause, tail);
    is_str(got, want, "explain: %s", cases[i].msg);
  }
  cleanup_free char *other = explained(ENOENT, "process.args[0]: /bin/nope: not found");
  is_str(other, "process.args[0]: /bin/nope: not found", "explain: other errors are untouched");
  /* AppArmor's restriction (given through the test root): a denied operation names it, unless
   * rootlessrt runs under its own profile. */
  char dir[] = "/tmp/rrt-test-check-aa.XXXXXX";
  if (!mkdtemp(dir)) {
    ok(0, "mkdtemp: %s", strerror(errno));
    return;
  }
  static const char *const made[] = {"/proc", "/proc/sys", "/proc/sys/kernel", "/proc/self",
                                     "/proc/self/attr"};
  for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
    cleanup_free char *d = xasprintf("%s%s", dir, made[i]);
    mkdir(d, 0755);
  }
  cleanup_free char *sysctl =
      xasprintf("%s/proc/sys/kernel/apparmor_restrict_unprivileged_userns", dir);
  cleanup_free char *label = xasprintf("%s/proc/self/attr/current", dir);
  rrt_write_file(sysctl, "1\n", 2, O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
  rrt_write_file(label, "unconfined\n", 11, O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
  setenv("ROOTLESSRT_CHECK_ROOT", dir, 1);
  cleanup_free char *aa = explained(EPERM, "mount proc on /proc: Operation not permitted");
  is_str(aa,
         "mount proc on /proc: Operation not permitted (AppArmor restricts unprivileged user "
         "namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)); run 'rootlessrt check' "
         "for details",
         "explain: EPERM under AppArmor's restriction names it");
  rrt_write_file(label, "rootlessrt (unconfined)\n", 24, O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
  cleanup_free char *own = explained(EPERM, "mount proc on /proc: Operation not permitted");
  is_str(own, "mount proc on /proc: Operation not permitted",
         "explain: not under rootlessrt's own profile");
  unsetenv("ROOTLESSRT_CHECK_ROOT");
  unlink(sysctl);
  unlink(label);
  for (size_t i = sizeof(made) / sizeof(made[0]); i-- > 0;) {
    cleanup_free char *d = xasprintf("%s%s", dir, made[i]);
    rmdir(d);
  }
  rmdir(dir);
}

/* Issue 29's causes, given through the test root: an outer seccomp filter ("Seccomp: 2"; the
 * probes themselves are nested.sh's, for real), an LSM's EACCES, user.max_user_namespaces 0. */
static void put_file(const char *path, const char *text)
{
  rrt_write_file(path, text, strlen(text), O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
}

static void test_explain_nested(void)
{
  char dir[] = "/tmp/rrt-test-check-nested.XXXXXX";
  if (!mkdtemp(dir)) {
    ok(0, "mkdtemp: %s", strerror(errno));
    return;
  }
  static const char *const made[] = {
      "/proc", "/proc/self",  "/proc/sys",           "/proc/sys/user",
      "/sys",  "/sys/kernel", "/sys/kernel/security"};
  for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
    cleanup_free char *d = xasprintf("%s%s", dir, made[i]);
    mkdir(d, 0755);
  }
  cleanup_free char *status = xasprintf("%s/proc/self/status", dir);
  cleanup_free char *lsm = xasprintf("%s/sys/kernel/security/lsm", dir);
  cleanup_free char *max = xasprintf("%s/proc/sys/user/max_user_namespaces", dir);
  put_file(status, "Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t1\n");
  put_file(max, "15000\n");
  setenv("ROOTLESSRT_CHECK_ROOT", dir, 1);
  static const char *const tail = "; run 'rootlessrt check' for details";
  static const char *const seccomp =
      "the outer container's seccomp profile refuses user namespaces: run it with "
      "--security-opt seccomp=unconfined, or a profile that allows them";
  cleanup_free char *a = explained(EPERM, "clone(CLONE_NEWUSER): Operation not permitted");
  cleanup_free char *wa =
      xasprintf("clone(CLONE_NEWUSER): Operation not permitted (%s)%s", seccomp, tail);
  is_str(a, wa, "explain: EPERM under a seccomp filter names the outer profile and the option");
  /* The desktop form relays its child's error as text (EIO). */
  cleanup_free char *b =
      explained(EIO, "run: oci-archive:x: unshare(CLONE_NEWUSER): Operation not permitted");
  cleanup_free char *wb = xasprintf(
      "run: oci-archive:x: unshare(CLONE_NEWUSER): Operation not permitted (%s)%s", seccomp, tail);
  is_str(b, wb, "explain: the desktop form's relayed EPERM too");

  put_file(status, "Name:\tx\nSeccomp:\t0\n");
  put_file(lsm, "capability,selinux\n");
  cleanup_free char *c = explained(EACCES, "clone(CLONE_NEWUSER): Permission denied");
  ok(c && strstr(c, "(SELinux refuses user namespaces to this domain: allow it user_namespace "
                    "create, or run the outer container with --security-opt label=disable)"),
     "explain: EACCES under SELinux names it and the fix (%s)", c);
  put_file(lsm, "capability,apparmor\n");
  cleanup_free char *d = explained(EACCES, "clone(CLONE_NEWUSER): Permission denied");
  ok(d && strstr(d, "(AppArmor refuses user namespaces to this profile: allow them in it (a "
                    "\"userns,\" rule), or run the outer container with --security-opt "
                    "apparmor=unconfined)"),
     "explain: EACCES under AppArmor names it and the fix (%s)", d);
  put_file(max, "0\n");
  cleanup_free char *e = explained(ENOSPC, "clone(CLONE_NEWUSER): No space left on device");
  ok(e && strstr(e, "(no user namespace may be created (user.max_user_namespaces = 0 here: raise "
                    "it where it is 0, on the host or in the outer container, sysctl -w "
                    "user.max_user_namespaces=15000))"),
     "explain: user.max_user_namespaces = 0 names the fix (%s)", e);
  cleanup_free char *f = explained(
      EPERM, "user namespace: uid 0 of this container may map itself into a new user "
             "namespace only with CAP_SETFCAP, ...: add CAP_SETFCAP to the outer container");
  ok(f && !strstr(f, "rootlessrt check"), "explain: the CAP_SETFCAP refusal is left as it is");
  unsetenv("ROOTLESSRT_CHECK_ROOT");
  unlink(status);
  unlink(lsm);
  unlink(max);
  for (size_t i = sizeof(made) / sizeof(made[0]); i-- > 0;) {
    cleanup_free char *p = xasprintf("%s%s", dir, made[i]);
    rmdir(p);
  }
  rmdir(dir);
}

static const struct rrt_check_item *item(const struct rrt_check *c, const char *name)
{
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->items[i].name, name) == 0)
      return &c->items[i];
  return NULL;
}

static void test_families(void)
{
  static const struct {
    const char *os_release, *family, *fix;
  } cases[] = {
      {"ID=ubuntu\nID_LIKE=debian\n", "debian", "sudo apt-get install -y slirp4netns"},
      {"ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n", "fedora",
       "sudo dnf install -y slirp4netns"},
      {"ID=arch\n", "arch", "sudo pacman -S --needed slirp4netns"},
      {"ID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\n", "suse",
       "sudo zypper install -y slirp4netns"},
      {"ID=gentoo\n", "other", "install slirp4netns with your package manager"},
  };
  /* Neither slirp4netns nor pasta on PATH: the slirp4netns item names the install command. */
  cleanup_free char *path = xstrdup(getenv("PATH") ? getenv("PATH") : "");
  setenv("PATH", "/nonexistent", 1);
  char dir[] = "/tmp/rrt-test-check.XXXXXX";
  if (!mkdtemp(dir)) {
    ok(0, "mkdtemp: %s", strerror(errno));
    return;
  }
  cleanup_free char *etc = xasprintf("%s/etc", dir);
  cleanup_free char *osr = xasprintf("%s/etc/os-release", dir);
  mkdir(etc, 0755);
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    rrt_write_file(osr, cases[i].os_release, strlen(cases[i].os_release),
                   O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
    struct rrt_check c = {.prefix = dir};
    rrt_check_run(&c);
    is_str(rrt_check_distro_family(c.distro), cases[i].family, "os-release family %s",
           cases[i].family);
    const struct rrt_check_item *s = item(&c, "slirp4netns");
    is_str(s ? s->fix : NULL, cases[i].fix, "%s: slirp4netns fix", cases[i].family);
    rrt_check_free(&c);
  }
  setenv("PATH", path, 1);
  unlink(osr);
  rmdir(etc);
  rmdir(dir);
}

static void test_storage_without_xattrs(void)
{
  if (geteuid() != 0) {
    printf("# skip: mounting a ramfs (no user xattrs) needs root\n");
    return;
  }
  char dir[] = "/tmp/rrt-test-check-ramfs.XXXXXX";
  if (!mkdtemp(dir) || mount("none", dir, "ramfs", 0, "mode=0755") < 0) {
    printf("# skip: cannot mount a ramfs: %s\n", strerror(errno));
    rmdir(dir);
    return;
  }
  struct rrt_check c = {.storage = dir};
  rrt_check_run(&c);
  const struct rrt_check_item *s = item(&c, "storage");
  cleanup_free char *want =
      xasprintf("%s on ramfs: user xattrs: Operation not supported: image layers lose their "
                "owners and modes",
                dir);
  is_str(s ? s->found : NULL, want, "storage on a ramfs: no user xattrs, said");
  ok(s && s->level == RRT_CHECK_WARN, "storage on a ramfs: a warning");
  ok(s && s->fix && strstr(s->fix, "export XDG_DATA_HOME=/var/tmp/"), "storage: the fix: %s",
     s && s->fix ? s->fix : "(none)");
  rrt_check_free(&c);
  umount2(dir, MNT_DETACH);
  rmdir(dir);
}

int main(void)
{
  test_explain();
  test_explain_nested();
  test_families();
  test_storage_without_xattrs();
  return tap_done();
}
