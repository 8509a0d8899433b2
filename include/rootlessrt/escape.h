/* escape.h: text from outside (an image, a registry, a token server, a container) made safe to
 * print on a terminal or in a log line. */
#ifndef ROOTLESSRT_ESCAPE_H
#define ROOTLESSRT_ESCAPE_H

#include <stddef.h>

/*
 * A malloc'd copy of s where every byte a terminal would act on, and every byte that is not part
 * of valid UTF-8, is written as \xHH (lowercase hex): the C0 controls but tab (newline and CR
 * included: a message is one line), ESC, BEL, DEL, the C1 controls U+0080..U+009F, the
 * bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069: they reorder what the line
 * shows) and invalid, overlong or surrogate sequences. Printable ASCII and other valid UTF-8 stay
 * as they are, backslashes too: the result is made of what is kept, so escaping it again changes
 * nothing (the logger escapes every message, parts of which were escaped where they were read).
 * NULL gives "(null)".
 */
char *rrt_escape(const char *s);
/* The same for n bytes that may hold NULs (shown \x00). */
char *rrt_escape_mem(const void *s, size_t n);
/* Into buf (size > 0), cut at a whole escape or character when it does not fit, always
 * terminated. Returns buf: for fixed buffers and format arguments. */
const char *rrt_escape_buf(const char *s, char *buf, size_t size);
/* Whether rrt_escape(s) would change s (s holds nothing to escape). */
int rrt_escape_needed(const char *s);
/*
 * The stricter form of the same escaping, for text that is only what it looks like when it is
 * plain ASCII: image names and references (their grammar is ASCII, so a byte past it is a
 * look-alike, "docker.io/library/alpine" with a Cyrillic "a", and shown as \xHH it cannot pass for
 * the real one) and file names read from a container's tree. Every byte but printable ASCII is
 * written as \xHH, the backslash too, so that the text "\x1b" cannot pass for an escaped ESC.
 * Not idempotent (a backslash grows), and needs not be: rrt_escape keeps what this makes.
 */
char *rrt_escape_ascii(const char *s);

#endif
