/* test_image.c: the desktop `run` form is told from the runc form; digests; the generated
 * config. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "../../image/digest.h"
#include "../../image/internal.h"
#include "rootlessrt/image.h"
#include "rootlessrt/util.h"
#include "tap.h"

static bool desktop(const char *line)
{
  char *copy = strdup(line), *argv[32], *save = NULL;
  int argc = 0;
  for (char *t = strtok_r(copy, " ", &save); t && argc < 31; t = strtok_r(NULL, " ", &save))
    argv[argc++] = t;
  argv[argc] = NULL;
  bool r = rrt_run_is_desktop(argc, argv);
  free(copy);
  return r;
}

/* The runc form's cases run in a directory with a config.json (a bundle here), the no-bundle
 * cases in one without. */
static char bundle_dir[] = "/tmp/rrt-test-image-XXXXXX", empty_dir[] = "/tmp/rrt-test-empty-XXXXXX";

static void die(const char *what)
{
  printf("Bail out! %s\n", what);
  exit(1);
}

static void in_dir(const char *d)
{
  if (chdir(d) < 0)
    die("chdir");
}

static void test_forms(void)
{
  if (!mkdtemp(bundle_dir) || !mkdtemp(empty_dir))
    die("mkdtemp");
  char *cfg = xasprintf("%s/config.json", bundle_dir);
  FILE *f = fopen(cfg, "w");
  if (!f)
    die("config.json");
  fclose(f);
  in_dir(bundle_dir);
  ok(!desktop("run myid"), "run ID with a config.json here: the runc form");
  ok(!desktop("run -b ./bundle myid"), "run -b ./bundle ID: the bundle's '/' is a flag value");
  ok(!desktop("run --bundle=./b -d myid"), "run --bundle=./b -d ID");
  ok(!desktop("run --pid-file /tmp/p --console-socket /s/sock myid"), "values of runc flags");
  ok(!desktop("run"), "no operand: the runc form (and its error)");
  ok(desktop("run ./rootfs sh"), "run ./rootfs CMD");
  ok(desktop("run --rm -it /abs/rootfs"), "run --rm -it /abs/rootfs");
  ok(desktop("run --rm oci:img"), "oci:NAME without a '/'");
  ok(desktop("run oci-archive:img.tar"), "oci-archive:");
  ok(desktop("run docker-archive:img.tar"), "docker-archive:");
  ok(desktop("run -e A=1 -v /a:/b -w /x --name n ./r"), "values of desktop flags skipped");
  ok(desktop("run -ite FOO=1 ./r"), "a cluster of short flags ending with one that takes a value");
  ok(desktop("run -e ./notimage myid"),
     "-e: a desktop flag (its value with '/' is not the operand)");
  ok(!desktop("run -d -p 8080:80 myid"), "-d, -p: flags of both forms");
  ok(desktop("run -- ./r cmd"), "-- then the image");
  ok(desktop("run debian:12"), "run NAME:TAG: a registry name");
  ok(desktop("run --rm -it -e A=1 debian:12 true"), "desktop flags before a registry name");
  ok(desktop("run --read-only --read-only-tmpfs=false x:1"), "--read-only-tmpfs=V before it");
  ok(!desktop("run my-container_1.2"), "a container id with '.', '-', '_' stays the runc form");
  ok(desktop("run --rm busybox echo hi"), "--rm: a flag only the desktop form has");
  ok(desktop("run -it alpine"), "-it: likewise");
  ok(desktop("run --pull=never alpine"), "--pull=V: likewise");
  in_dir(empty_dir);
  ok(desktop("run busybox echo hi"), "no config.json here: a bare word is an image");
  ok(desktop("run -d myid"), "... also after -d");
  ok(!desktop("run -b ./bundle myid"), "-b names the bundle: the runc form");
  ok(!desktop("run --bundle=/x myid"), "--bundle=DIR: the runc form");
  ok(!desktop("run"), "no operand: the runc form (and its error)");
  unlink(cfg);
  free(cfg);
  rmdir(bundle_dir);
  rmdir(empty_dir);
}

static void test_normalize(void)
{
  static const struct {
    const char *in;
    bool hub;
    const char *want;
  } cases[] = {
      {"busybox", true, "docker.io/library/busybox:latest"},
      {"busybox:1.36", true, "docker.io/library/busybox:1.36"},
      {"team/app", true, "docker.io/team/app:latest"},
      {"docker.io/alpine", false, "docker.io/library/alpine:latest"},
      {"latest", false, "localhost/latest:latest"},
      {"localhost/rrt-test:latest", true, "localhost/rrt-test:latest"},
      {"quay.io:443/x/y", false, "quay.io:443/x/y:latest"},
      {"a@sha256:0123456789abcdef0123456789abcdef", false,
       "localhost/a@sha256:0123456789abcdef0123456789abcdef"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *got = rrt_image_name_normalize(cases[i].in, cases[i].hub);
    ok(got && strcmp(got, cases[i].want) == 0, "normalize %s (%s): %s", cases[i].in,
       cases[i].hub ? "Docker's" : "podman's", got ? got : "(null)");
    free(got);
  }
  ok(rrt_image_name_normalize("UPPER:1", true) == NULL, "not a name: NULL");
  ok(rrt_image_name_normalize("evil\x1b]0;x\a:latest", true) == NULL, "control bytes: NULL");
}

static bool name(const char *s, bool want_qualified)
{
  bool q;
  return rrt_image_name_parse(s, &q) && q == want_qualified;
}

static void test_names(void)
{
  ok(name("debian:12", true), "NAME:TAG");
  ok(name("localhost/foo:1", true), "localhost/NAME:TAG");
  ok(name("quay.io:443/x/y@sha256:0123456789abcdef0123456789abcdef", true), "HOST:PORT/P/N@DIGEST");
  ok(name("library/debian", false), "PATH/NAME without a tag: a name, not qualified");
  ok(name("debian", false), "a bare NAME: not qualified (it could be a container id)");
  bool q;
  ok(!rrt_image_name_parse("Debian:12", &q), "an upper-case path is not a name");
  ok(!rrt_image_name_parse("./rootfs", &q), "./rootfs is not a name");
  ok(!rrt_image_name_parse("/abs/r:1", &q), "an absolute path is not a name");
  ok(!rrt_image_name_parse("a:-x", &q), "a tag starting with '-'");
  ok(!rrt_image_name_parse("a@sha256:12", &q), "a short digest");
  ok(!rrt_image_name_parse("a//b:1", &q), "an empty component");
  ok(!rrt_image_name_parse("a..b:1", &q), "two dots in a component");
  /* docker's split: a first component that is not all lower case is a host (the fuzzer's
   * regression input, tests/fuzz/corpus/image_name/upper-case-first-component). */
  ok(name("loPalhost/test", true), "an upper-case first component is a host");
  ok(!rrt_image_name_parse("Registry/Test", &q), "but the path after it stays lower case");
}

static void test_progress(void)
{
  char line[160];
  const char *hex = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789";
  rrt_progress_line(line, sizeof(line), 1, 3, hex, 3u << 20, 12u << 20);
  is_str(line, "layer 2/3 sha256:abcdef012345\u2026 3.0 MiB / 12.0 MiB (25%)",
         "layer N/M, a short digest, MiB done / total, percentage");
  rrt_progress_line(line, sizeof(line), 0, 1, hex, 5u << 20, 0);
  is_str(line, "layer 1/1 sha256:abcdef012345\u2026 5.0 MiB", "no total: no percentage");
}

static void test_digest(void)
{
  char hex[65];
  rrt_digest_buf("abc", 3, hex);
  is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "sha256(abc)");
  const char *h = NULL;
  struct rrt_error err = RRT_ERROR_INIT;
  ok(rrt_digest_parse("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", &h,
                      &err) == 0 &&
         strcmp(h, hex) == 0,
     "sha256:HEX parses");
  ok(rrt_digest_parse("sha512:00", &h, &err) < 0 && strstr(rrt_error_msg(&err), "only sha256"),
     "other algorithms are refused");
  ok(rrt_digest_parse("sha256:../../etc/passwd", &h, &err) < 0, "a digest is hex, never a path");
  ok(rrt_digest_parse("sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", &h,
                      &err) < 0,
     "uppercase hex is refused (the spec's form is lowercase)");
  rrt_error_clear(&err);
}

static void test_config(void)
{
  char *lowers[] = {"/store/l2", "/store/l1", NULL};
  char *entry[] = {"/bin/echo", "e", NULL}, *cmd[] = {"c", NULL}, *env[] = {"A=image", NULL};
  struct rrt_image img = {.lowers = lowers,
                          .config = {.entrypoint = entry, .cmd = cmd, .env = env}};
  char *e[] = {"A=flag", "B=2"};
  struct rrt_run_image_opts o = {.env = {e, 2}, .hostname = "h"};
  struct rrt_run_plan p = {.id = "abc", .image = &img, .upper = "/u", .work = "/w"};
  char *json = NULL;
  struct rrt_error err = RRT_ERROR_INIT;
  ok(rrt_run_config(&o, &p, &json, &err) == 0, "a config is generated");
  json_object *doc = json_tokener_parse(json), *v;
  json_object_object_get_ex(doc, "mounts", &v);
  json_object *m0 = json_object_array_get_idx(v, 0), *opts;
  json_object_object_get_ex(m0, "options", &opts);
  is_str(json_object_get_string(json_object_array_get_idx(opts, 0)), "lowerdir=/store/l2:/store/l1",
         "the overlay on / lists the layers top first");
  json_object *proc, *args, *envs;
  json_object_object_get_ex(doc, "process", &proc);
  json_object_object_get_ex(proc, "args", &args);
  json_object_object_get_ex(proc, "env", &envs);
  is_str(json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN),
         "[\"\\/bin\\/echo\",\"e\",\"c\"]", "args: Entrypoint + Cmd");
  ok(strstr(json_object_to_json_string(envs), "A=flag") &&
         !strstr(json_object_to_json_string(envs), "A=image"),
     "-e replaces the image's value");
  json_object_put(doc);
  free(json);
  rrt_error_clear(&err);
}

int main(void)
{
  test_forms();
  test_names();
  test_normalize();
  test_progress();
  test_digest();
  test_config();
  return tap_done();
}
