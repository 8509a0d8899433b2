/* tap.h: a tiny TAP producer for the C unit tests. */
#ifndef RRT_TAP_H
#define RRT_TAP_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                                              \
  do {                                                                                             \
    int ok_c_ = (cond) ? 1 : 0;                                                                    \
    tap_n++;                                                                                       \
    if (!ok_c_)                                                                                    \
      tap_failed++;                                                                                \
    printf("%sok %d - ", ok_c_ ? "" : "not ", tap_n);                                              \
    printf(__VA_ARGS__);                                                                           \
    printf("\n");                                                                                  \
    if (!ok_c_)                                                                                    \
      printf("# failed at %s:%d\n", __FILE__, __LINE__);                                           \
  } while (0)

#define is_str(a, b, ...)                                                                          \
  do {                                                                                             \
    const char *is_a_ = (a), *is_b_ = (b);                                                         \
    ok(is_a_ &&is_b_ &&strcmp(is_a_, is_b_) == 0, __VA_ARGS__);                                    \
    if (!(is_a_ && is_b_ && strcmp(is_a_, is_b_) == 0))                                            \
      printf("#   got: '%s'\n#   expected: '%s'\n", is_a_ ? is_a_ : "(null)",                      \
             is_b_ ? is_b_ : "(null)");                                                            \
  } while (0)

#define is_int(a, b, ...)                                                                          \
  do {                                                                                             \
    long long is_a_ = (long long)(a), is_b_ = (long long)(b);                                      \
    ok(is_a_ == is_b_, __VA_ARGS__);                                                               \
    if (is_a_ != is_b_)                                                                            \
      printf("#   got: %lld\n#   expected: %lld\n", is_a_, is_b_);                                 \
  } while (0)

/* Open descriptors of this process (with the one opendir adds): for "nothing leaked" checks. */
static inline int tap_count_fds(void)
{
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return -1;
  while (readdir(d))
    n++;
  closedir(d);
  return n;
}

static inline int tap_done(void)
{
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

#endif
