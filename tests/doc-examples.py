#!/usr/bin/python3
"""doc-examples.py OUTDIR FILE...: the fenced code blocks of the Markdown FILEs, sorted out for
tests/integration/t-examples.sh. One line per block, tab-separated: FILE, the line of its
opening fence, its kind, and the script's path or the reason:

  runnable   info string "sh runnable": the block is written to OUTDIR/N.sh, run by the test
  not-run    a shell block right after a line "<!-- not run: REASON -->": the REASON
  other      a block of another language (json, toml, text, ...)
  unmarked   a shell block (sh, bash, shell, console, zsh) with neither mark: an error
  unlabelled a block without an info string: an error (say what it holds, so that a shell
             example cannot go unmarked)
  malformed  a "not run" comment without a reason, or both marks: an error
"""
import os
import re
import sys

FENCE = re.compile(r"^ {0,3}(```+|~~~+)\s*(.*)$")
NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(.*?)\s*-->\s*$")
SHELLS = {"sh", "bash", "shell", "console", "zsh", "shell-session"}


def blocks(path):
    """(line, info string, the line before the fence, body) of each fenced block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(1), m.group(2).strip(), i
        body = []
        i += 1
        while i < len(lines):
            c = FENCE.match(lines[i])
            if c and c.group(1)[0] == fence[0] and len(c.group(1)) >= len(fence) and not c.group(2).strip():
                break
            body.append(lines[i])
            i += 1
        yield start + 1, info, lines[start - 1] if start > 0 else "", "\n".join(body) + "\n"
        i += 1


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    n = 0
    for path in argv[2:]:
        for line, info, before, body in blocks(path):
            words = info.split()
            lang = words[0] if words else ""
            nr = NOT_RUN.match(before)
            if not lang:
                kind, detail = "unlabelled", "a block without an info string (sh, json, text, ...)"
            elif lang not in SHELLS:
                kind, detail = "other", lang
            elif "runnable" in words[1:] and nr:
                kind, detail = "malformed", "marked both runnable and not run"
            elif "runnable" in words[1:]:
                n += 1
                script = os.path.join(outdir, "%d.sh" % n)
                with open(script, "w", encoding="utf-8") as f:
                    f.write(body)
                kind, detail = "runnable", script
            elif nr and nr.group(1):
                kind, detail = "not-run", nr.group(1)
            elif nr:
                kind, detail = "malformed", "a not-run mark without a reason"
            else:
                kind, detail = "unmarked", "neither ```sh runnable nor <!-- not run: REASON --> before it"
            print("%s\t%d\t%s\t%s" % (path, line, kind, detail))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
