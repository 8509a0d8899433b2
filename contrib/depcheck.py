#!/usr/bin/python3
"""depcheck.py OBJDIR: the dependency rules of the source tree, checked on the built objects.

Who uses whom is read from the objects themselves (nm: each undefined symbol is a use of the
object that defines it), so nothing in the sources can hide a dependency. Two rules:

1. No circle: no file depends, through any chain, on a file that depends on it. Files that call
   each other want a third, lower file holding what they share.
2. Layers: a folder may only use its own files and the folders below it in LAYERS. The command
   line is on top, base/ at the bottom; a folder on the same level as another does not use it.

Exit status 1 with every circle and every upward use named (file, file, symbols).
"""
import collections
import os
import subprocess
import sys

# Lower number, lower layer. The programs (cli/, the helpers' main files) are on top.
LAYERS = {
    "base": 0,
    "spec": 1,
    "userns": 1,
    "cgroup": 2,
    "confine": 2,
    "net": 2,
    "rootfs": 3,
    "container": 4,
    "image": 5,
    "check": 5,
    "cli": 6,
    "systemd": 6,
    "pull": 6,  # the registry client (rootlessrt-pull): base/ only
}
PROGRAMS = {"net/helper_main", "pull/helper_main"}  # a main() of its own: on top, like cli/


def read_objects(objdir):
    defs, uses = {}, collections.defaultdict(set)
    for root, _, files in os.walk(objdir):
        for f in sorted(files):
            if not f.endswith(".o"):
                continue
            path = os.path.join(root, f)
            name = os.path.relpath(path, objdir)[:-2]
            out = subprocess.run(["nm", "-P", path], capture_output=True, text=True, check=True)
            for line in out.stdout.splitlines():
                p = line.split()
                if len(p) < 2:
                    continue
                if p[1] == "U":
                    uses[name].add(p[0])
                elif p[1] in "TDBRGSVW":
                    defs.setdefault(p[0], name)
            uses.setdefault(name, set())
    return defs, uses


def graph(defs, uses):
    g = collections.defaultdict(lambda: collections.defaultdict(set))
    for name, syms in uses.items():
        g[name]
        for s in syms:
            d = defs.get(s)
            if d and d != name:
                g[name][d].add(s)
    return g


def circles(g):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = n[0]
        n[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def layer(name):
    if name in PROGRAMS:
        return 99
    return LAYERS.get(name.split("/")[0])


def main():
    if len(sys.argv) != 2:
        print("usage: depcheck.py OBJDIR", file=sys.stderr)
        return 2
    defs, uses = read_objects(sys.argv[1])
    if not uses:
        print(f"depcheck: no objects under {sys.argv[1]}", file=sys.stderr)
        return 1
    g = graph(defs, uses)
    bad = 0
    for comp in circles(g):
        bad += 1
        print("depcheck: these files depend on each other in a circle:", " ".join(comp))
        for a in comp:
            for b in comp:
                if b in g[a]:
                    print(f"  {a} -> {b}: {' '.join(sorted(g[a][b])[:5])}")
    for a in sorted(g):
        la = layer(a)
        if la is None:
            bad += 1
            print(f"depcheck: {a}: its folder has no layer in contrib/depcheck.py LAYERS")
            continue
        for b in sorted(g[a]):
            lb = layer(b)
            if lb is None or a.split("/")[0] == b.split("/")[0]:
                continue
            if lb >= la:
                bad += 1
                print(f"depcheck: {a} (layer {la}) uses {b} (layer {lb}), which is not below it:"
                      f" {' '.join(sorted(g[a][b])[:5])}")
    if bad:
        return 1
    print(f"depcheck: {len(g)} objects, no circle, every use points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
