/* usage.c: each verb's synopsis and one-line description, for `help VERB`, `--help` and the man
 * pages, and the printer of `help VERB` (with the paragraphs and flags of flag_docs.c). Text only:
 * the verb files print their usage from here, and main.c's dispatch table (which points at the verb
 * files) is kept apart, so that no file of cli/ calls back into main. */
#include <stdio.h>
#include <string.h>

#include "rootlessrt/cmd.h"

const struct rrt_verb_doc rrt_verb_docs[] = {
    {"create",
     "create [-b|--bundle DIR] [--pid-file F] [--console-socket S] [--preserve-fds N]\n"
     "       [--no-pivot] [--no-new-keyring] [--network none|host|slirp] [-p|--publish P]...\n"
     "       [--mtu N] [--ipv6] [--host-loopback] [--cidr CIDR] [--ports-via splice|slirp]\n"
     "       [--network-opt KEY=VALUE]... ID",
     "create a container; its init waits, blocked, for `start`"},
    {"start", "start ID", "run the user process of a created container"},
    {"run",
     "run [create flags] [-d|--detach | --keep] ID\n"
     "   or: run [--rm] [-d] [-i] [-t] [--name N] [-e K=V]... [--env-file F]... [-w DIR]\n"
     "       [-u USER[:GROUP]] [-v SRC:DST[:ro]]... [--tmpfs DST[:OPTS]]... [-p P]...\n"
     "       [--network none|host|slirp] [--hostname H] [--read-only]\n"
     "       [--read-only-tmpfs[=true|false]] [--entrypoint CMD]\n"
     "       [--cap-add C]... [--cap-drop C]... [--security-opt OPT]... [--userns keep-id]\n"
     "       [--overlay auto|kernel|fuse] [--storage DIR] [--print-config]\n"
     "       [--platform OS/ARCH[/VARIANT]] [--authfile F] [--tls-verify=false]\n"
     "       [--pull always|missing|never|newer] IMAGE|ROOTDIR [CMD ARGS...]\n"
     "  IMAGE: oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME:TAG],\n"
     "  docker://HOST[:PORT]/NAME[:TAG|@sha256:DIGEST] (a registry), or a registry name\n"
     "  (alpine, debian:12: the store's image of that name, else pulled, a short name\n"
     "  through registries.conf); ROOTDIR: a path with a '/' (./rootfs): it runs on a\n"
     "  copy-on-write overlay and is never modified. The desktop form is taken with a flag\n"
     "  only it has (--rm, -i, -t, -e, -v, --name, -w, -u, --pull...), an IMAGE or ROOTDIR\n"
     "  as above, or any first operand when there is no bundle (no config.json here)",
     "create and start; in the foreground, forward signals and exit with the container's status"},
    {"state", "state ID", "print the container's state JSON"},
    {"kill", "kill [-a|--all] ID [SIGNAL]",
     "send a signal (name with or without SIG, or number; default TERM; 0: only check that "
     "the container is running)"},
    {"delete", "delete [-f|--force] ID", "delete a stopped container (--force: kill it first)"},
    {"list", "list [-f|--format table|json] [-q|--quiet]", "list containers"},
    {"spec", "spec [--rootless] [-b|--bundle DIR]", "write a default config.json into the bundle"},
    {"exec",
     "exec [--process FILE] [-t|--tty] [--console-socket S] [-d|--detach] [--pid-file F]\n"
     "     [-e|--env K=V]... [--cwd DIR] [-u|--user UID[:GID]] [--cap CAP]... [--no-new-privs]\n"
     "     [--preserve-fds N] [--cgroup [CONTROLLER[,CONTROLLER]:]PATH]... [--ignore-paused]\n"
     "     [--additional-gids GID]... ID [CMD ARGS...]",
     "run another process in a running container"},
    {"ps", "ps [-f|--format table|json] ID [PS_ARGS...]",
     "list the container's processes (the table: ps(1) PS_ARGS, default -ef, as runc)"},
    {"events", "events [--interval DURATION] [--stats] ID",
     "resource usage (every 5s, or once with --stats) and OOM kills, as JSON lines"},
    {"pause", "pause ID", "freeze every process (cgroup v2 freezer)"},
    {"resume", "resume ID", "thaw a paused container"},
    {"update",
     "update [-r|--resources FILE|-] ID\n"
     "   or: update [--memory B] [--memory-reservation B] [--memory-swap B] [--cpu-share N]\n"
     "       [--cpu-period US] [--cpu-quota US] [--cpu-rt-period US] [--cpu-rt-runtime US]\n"
     "       [--cpuset-cpus L] [--cpuset-mems L] [--pids-limit N] [--blkio-weight N] ID",
     "change the resources of a container, all or nothing"},
    {"store", "store [--storage DIR] ls | rm [--force] NAME... | prune",
     "list (with sizes) or remove what the image store holds: images, layers, containers' "
     "kept changes (a layer an image uses stays unless --force); prune: what no image and no "
     "container uses"},
    {"pull",
     "pull [--storage DIR] [--platform OS/ARCH[/VARIANT]] [--authfile F] [--tls-verify=false]\n"
     "     docker://HOST[:PORT]/NAME[:TAG|@sha256:DIGEST] | NAME[:TAG]\n"
     "     | docker-archive:FILE[:NAME:TAG] | oci-archive:FILE | oci:DIR[:NAME]",
     "fetch an image from a registry (a NAME without a registry: registries.conf), or import an\n"
     "  archive, into the store, recorded by its name for `run NAME` offline"},
    {"images", "images [--storage DIR] [-q|--quiet] [--no-trunc] [-n|--noheading] [--format json]",
     "list the store's images by name: REPOSITORY TAG IMAGE ID CREATED SIZE, as podman"},
    {"rmi", "rmi [--storage DIR] [-f|--force] [-a|--all] NAME|ID...",
     "remove images (a name of an image with others: that name only) and the layers only they "
     "use; refused while a container uses one, unless --force"},
    {"features", "features", "print the features JSON document"},
    {"check", "check [--json] [--storage DIR]",
     "check what rootless containers need here; each problem with the command that fixes it"},
    {"checkpoint", "checkpoint [runc's flags] ID",
     "not supported (no CRIU): an error, nothing done"},
    {"restore", "restore [runc's flags] ID", "not supported (no CRIU): an error, nothing done"},
};

const size_t rrt_verb_docs_len = sizeof(rrt_verb_docs) / sizeof(rrt_verb_docs[0]);

const struct rrt_verb_doc *rrt_verb_doc_find(const char *name)
{
  for (size_t i = 0; i < rrt_verb_docs_len; i++)
    if (strcmp(rrt_verb_docs[i].name, name) == 0)
      return &rrt_verb_docs[i];
  return NULL;
}

/* Prints the LEN bytes of TEXT from column INDENT, its words (runs of spaces and newlines
 * between them count as one space) wrapped before column 80. */
static void wrap(const char *text, size_t len, int indent)
{
  const char *p = text, *end = text + len;
  int col = 0;
  for (;;) {
    while (p < end && (*p == ' ' || *p == '\n'))
      p++;
    if (p >= end)
      break;
    int n = 0;
    while (p + n < end && p[n] != ' ' && p[n] != '\n')
      n++;
    if (col > indent && col + 1 + n > 79) {
      putchar('\n');
      col = 0;
    }
    if (col == 0)
      col = printf("%*s", indent, "");
    else
      col += printf(" ");
    col += printf("%.*s", n, p);
    p += n;
  }
  if (col > 0)
    putchar('\n');
}

static const struct rrt_verb_help *verb_help_find(const char *name)
{
  for (size_t i = 0; i < rrt_verb_helps_len; i++)
    if (strcmp(rrt_verb_helps[i].name, name) == 0)
      return &rrt_verb_helps[i];
  return NULL;
}

/* The layout man/mkman.sh reads: the usage lines, a blank line, the summary, then blank-line
 * separated blocks: paragraphs, then the flags: a heading ending in ':', each flag on a line of
 * its own indented by 2, its text indented by 6. */
void rrt_cmd_usage(const char *name)
{
  const struct rrt_verb_doc *v = rrt_verb_doc_find(name);
  if (!v)
    return;
  const struct rrt_verb_help *h = verb_help_find(name);
  printf("Usage: rootlessrt [global flags] %s\n\n", v->usage);
  wrap(v->what, strlen(v->what), 0);
  for (const char *p = h ? h->about : NULL; p && *p;) {
    const char *next = strstr(p, "\n\n");
    size_t len = next ? (size_t)(next - p) : strlen(p);
    putchar('\n');
    wrap(p, len, 0);
    p = next ? next + 2 : p + len;
  }
  const struct rrt_flag_doc *f = h && h->flags ? h->flags : NULL;
  printf("\n");
  if (!f || f->flag)
    printf("Flags:\n");
  for (; f && (f->flag || f->text); f++) {
    if (!f->flag) {
      printf("%s%s:\n", f == h->flags ? "" : "\n", f->text);
      continue;
    }
    printf("  %s\n", f->flag);
    wrap(f->text, strlen(f->text), 6);
  }
  printf("  -h, --help\n");
  wrap("Print this help.", strlen("Print this help."), 6);
}
