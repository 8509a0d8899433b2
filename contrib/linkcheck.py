#!/usr/bin/python3
"""linkcheck.py [--man DIR] FILE...: every relative link of the Markdown FILEs resolves.

A link is [text](target), [text]: target (a reference definition) or <a href="target">, outside
code blocks and code spans. http:, https: and mailto: targets are not followed (the network is
not the repository's). A relative target must name a file or folder that exists, relative to
the page; a "#anchor" (alone or after a .md page) must be a heading of that page, spelled as
GitHub makes it (lower case, punctuation dropped, spaces as hyphens, -1, -2 ... for repeats), or
an explicit <a id="..."> / <a name="...">.

With --man DIR, the built man pages there (*.1) are checked too: every page that one of them
refers to as rootlessrt...(1) must be a page of DIR.

Exit status 1 with each broken link named as FILE:LINE: target: why.
"""
import os
import re
import sys

FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HREF = re.compile(r"<a\s[^>]*href=\"([^\"]+)\"", re.I)
ANCHOR = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"", re.I)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODESPAN = re.compile(r"(`+)(.+?)\1")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def prose_lines(path):
    """(line number, text, text with its code spans blanked) of the lines outside fenced code
    blocks."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    fence = None
    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
                continue
            if mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip()[len(mark):]:
                fence = None
                continue
        if fence is not None:
            continue
        yield n, line, CODESPAN.sub(lambda c: " " * len(c.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, found = {}, set()
        for _, line, prose in prose_lines(path):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else "%s-%d" % (base, n))
            found.update(ANCHOR.findall(prose))
        _anchors[path] = found
    return _anchors[path]


def check_markdown(path):
    problems = []
    for n, _, line in prose_lines(path):
        targets = [m.group(1) for m in INLINE.finditer(line)] + HREF.findall(line)
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                problems.append("%s:%d: %s: no such file or folder (%s)" % (path, n, target, dest))
                continue
            if not anchor:
                continue
            if os.path.isdir(dest) or not dest.endswith(".md"):
                problems.append("%s:%d: %s: an anchor into something that is not a page" % (path, n, target))
            elif anchor not in anchors(dest):
                problems.append("%s:%d: %s: %s has no heading with the anchor #%s" % (path, n, target, dest, anchor))
    return problems


MANREF = re.compile(r"(rootlessrt(?:\\?-[a-z0-9]+)*)(?:\\f[RP])?\s*\(1\)")


def check_man(mandir):
    problems = []
    pages = {f[:-2] for f in os.listdir(mandir) if f.endswith(".1")}
    if not pages:
        return ["%s: no man pages (*.1): run make man" % mandir]
    for page in sorted(pages):
        path = os.path.join(mandir, page + ".1")
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for m in MANREF.finditer(line):
                    name = m.group(1).replace("\\-", "-")
                    if name not in pages:
                        problems.append("%s:%d: %s(1): no such page in %s" % (path, n, name, mandir))
    return problems


def main(argv):
    mandir = None
    if len(argv) > 2 and argv[1] == "--man":
        mandir = argv[2]
        argv = argv[2:]
    files = argv[1:]
    if not files and mandir is None:
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    problems = []
    for path in files:
        problems += check_markdown(path)
    if mandir is not None:
        problems += check_man(mandir)
    for p in problems:
        print("linkcheck: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
