/* test_escape.c: rrt_escape (text from outside made safe to print) and the logger using it. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rootlessrt/escape.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"
#include "tap.h"

static void is_escaped(const char *in, const char *want, const char *what)
{
  char *got = rrt_escape(in);
  is_str(got, want, "%s", what);
  char *again = rrt_escape(got);
  is_str(again, got, "%s: escaping it again changes nothing", what);
  free(again);
  free(got);
}

static char *read_all(const char *path)
{
  size_t len;
  char *data = NULL;
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_read_file(path, &data, &len, &err) < 0)
    rrt_error_clear(&err);
  return data;
}

int main(void)
{
  is_escaped("plain text, a/b:c@sha256 ~ \\ \"q\"", "plain text, a/b:c@sha256 ~ \\ \"q\"",
             "printable ASCII is kept, backslash and quotes too");
  is_escaped("\x1b]0;owned\x07", "\\x1b]0;owned\\x07", "ESC and BEL (a window title)");
  is_escaped("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H", "clear screen and cursor home");
  is_escaped("line\nrootlessrt: forged\r", "line\\x0arootlessrt: forged\\x0d",
             "newline and carriage return: one line stays one line");
  is_escaped("a\tb\x7f\x01\x1f", "a\tb\\x7f\\x01\\x1f",
             "DEL and the other C0 controls; a tab is kept");
  is_escaped("\xc2\x9b"
             "31m",
             "\\xc2\\x9b31m", "the C1 control CSI in UTF-8 (U+009B)");
  is_escaped("\x9b"
             "31m",
             "\\x9b31m", "a lone C1 byte (invalid UTF-8)");
  is_escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3",
             "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3", "valid UTF-8 is kept (é, €, a whale)");
  is_escaped("\xe2\x80\xae"
             "gnp.exe",
             "\\xe2\\x80\\xaegnp.exe", "a right-to-left override (U+202E) is escaped");
  is_escaped("\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80",
             "\\xc0\\xaf \\xed\\xa0\\x80 \\xf4\\x90\\x80\\x80",
             "overlong, surrogate, past U+10FFFF: each byte escaped");
  is_escaped("\xe2\x82", "\\xe2\\x82", "a sequence cut at the end of the string");
  is_escaped("", "", "the empty string");
  char *n = rrt_escape(NULL);
  is_str(n, "(null)", "NULL");
  free(n);
  char *mem = rrt_escape_mem("a\0b", 3);
  is_str(mem, "a\\x00b", "rrt_escape_mem shows a NUL");
  free(mem);

  char buf[8];
  is_str(rrt_escape_buf("abc\x1b"
                        "def",
                        buf, sizeof(buf)),
         "abc\\x1b", "rrt_escape_buf cuts at a whole escape");
  is_str(rrt_escape_buf("ab\x1b"
                        "def",
                        buf, 6),
         "ab", "... never half of one");
  is_str(rrt_escape_buf("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", buf, sizeof(buf)),
         "\xe2\x82\xac\xe2\x82\xac", "... nor half of a character");
  ok(!rrt_escape_needed("plain") && rrt_escape_needed("a\x1b"), "rrt_escape_needed");

  /* The stricter form for names (image/names.c's rrt_names_shown, base/rmtree.c's paths). */
  struct {
    const char *in, *want, *what;
  } strict[] = {
      {"docker.io/library/alpine:3.19", "docker.io/library/alpine:3.19", "a name stays as it is"},
      {"evil\x1b]0;x\x07:t\rag", "evil\\x1b]0;x\\x07:t\\x0dag", "ESC, BEL and CR escaped"},
      {"a\\x1b", "a\\x5cx1b", "a backslash escaped: the text \\x1b is not an ESC"},
      {"\xd0\xb0lpine", "\\xd0\\xb0lpine", "UTF-8 (a Cyrillic a) shown as bytes"},
      {"x\x7f\xc2\x9b\xff", "x\\x7f\\xc2\\x9b\\xff", "DEL, C1 CSI, an invalid byte"},
      {"tab\there", "tab\\x09here", "even a tab"},
  };
  for (size_t i = 0; i < sizeof(strict) / sizeof(strict[0]); i++) {
    char *a = rrt_escape_ascii(strict[i].in), *again = rrt_escape(a);
    is_str(a, strict[i].want, "rrt_escape_ascii: %s", strict[i].what);
    is_str(again, a, "... and rrt_escape (the logger's) keeps it as it is");
    free(a);
    free(again);
  }
  n = rrt_escape_ascii(NULL);
  is_str(n, "(null)", "rrt_escape_ascii(NULL)");
  free(n);

  /* The logger: a text and a json log file, and stderr, get the escaped message. */
  char dir[] = "/tmp/rrt-escape-XXXXXX";
  ok(mkdtemp(dir) != NULL, "a scratch directory");
  char *text = xasprintf("%s/text.log", dir), *json = xasprintf("%s/json.log", dir);
  struct rrt_error err = RRT_ERROR_INIT;
  ok(rrt_log_init(text, false, false, &err) == 0, "a text log");
  rrt_warn("registry says \x1b]0;t\x07 and\nerror: forged");
  char *got = read_all(text);
  is_str(got, "warning: registry says \\x1b]0;t\\x07 and\\x0aerror: forged\n",
         "the text log line is escaped and one line");
  free(got);
  int fd = open(json, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  rrt_log_init_fd(fd, true, false);
  rrt_warn("bad \x1b[31m\xff");
  got = read_all(json);
  ok(got && strstr(got, "\"msg\":\"bad \\\\x1b[31m\\\\xff\"") && !strchr(got, '\x1b'),
     "the json log's msg is escaped the same way (and valid UTF-8): %s", got ? got : "");
  free(got);
  unlink(text);
  unlink(json);
  rmdir(dir);
  free(text);
  free(json);
  return tap_done();
}
