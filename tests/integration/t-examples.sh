#!/bin/bash
# t-examples.sh: the shell examples of README.md and docs/ as a user pastes them. Each block is
# marked: ```sh runnable blocks are run here, each in a directory of its own, with a scratch
# HOME and XDG_RUNTIME_DIR, the built rootlessrt first in PATH and the inputs the examples name
# made by the test (alpine.tar: an OCI archive, img.tar and busybox.tar: docker-archives, the
# second tagged busybox:latest, layout/: an OCI layout tagged latest, all of a busybox image
# whose command is /bin/sh, from contrib/mkimage.py; rootfs/: a busybox root directory), on a terminal (ptyrun) whose every shell prompt "# " is
# answered with a command and `exit`; a block right after <!-- not run: REASON --> is not, and
# the reason is printed. A shell block with neither mark, or a block with no language, fails.
# Each run must exit 0, every interactive shell must have run the answer, and nothing may be
# left: no container, process or mount of its directory.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

TOP_DIR=$(cd "$TESTS_DIR/.." && pwd)
PTYRUN=${PTYRUN:-$(dirname "$PROBE")/ptyrun}
if [ ! -f "$TOP_DIR/README.md" ] || [ ! -d "$TOP_DIR/docs" ]; then
  skip "no README.md and docs/ beside tests/"
  done_testing
fi

# ---------------------------------------------------------------- every block is marked

pages=(README.md)
for p in "$TOP_DIR"/docs/*.md; do pages+=("docs/${p##*/}"); done
listing=$(cd "$TOP_DIR" && "$PY" "$TESTS_DIR/doc-examples.py" "$T_WORK/scripts" "${pages[@]}") ||
  bail_out "tests/doc-examples.py failed"
bad=$(awk -F'\t' '$3 == "unmarked" || $3 == "unlabelled" || $3 == "malformed" {print $1 ":" $2 ": " $4}' <<<"$listing")
is "$bad" "" "every shell example in README.md and docs/ is marked runnable or not run, with a reason"
n_run=$(awk -F'\t' '$3 == "runnable"' <<<"$listing" | wc -l)
n_not=$(awk -F'\t' '$3 == "not-run"' <<<"$listing" | wc -l)
if [ "$n_run" -gt 0 ]; then
  pass "$n_run runnable examples, $n_not not run"
else
  fail "some example is runnable" "$listing"
fi
while IFS=$'\t' read -r file line _ reason; do
  diag "not run: $file:$line: $reason"
done < <(awk -F'\t' '$3 == "not-run"' <<<"$listing")

# The check itself: a page with an unmarked shell block, an unlabelled one, a not-run mark
# without a reason, and a marked block of each kind.
cat >"$T_WORK/probe.md" <<'EOF'
```sh
echo unmarked
```

```
echo unlabelled
```

<!-- not run: -->
```sh
echo no reason
```

<!-- not run: needs a registry on the internet -->
```sh
rootlessrt pull docker://example.org/x
```

```sh runnable
echo runs
```
EOF
got=$("$PY" "$TESTS_DIR/doc-examples.py" "$T_WORK/probe-scripts" "$T_WORK/probe.md" | cut -f2,3 | tr '\t\n' ': ')
is "$got" "1:unmarked 5:unlabelled 10:malformed 15:not-run 19:runnable " \
  "doc-examples.py: an unmarked, an unlabelled and a reasonless block are errors, the marked ones are sorted"

# ---------------------------------------------------------------- the runnable ones

if [ ! -x "$PTYRUN" ]; then
  skip "no ptyrun beside rrt-probe (make build/ptyrun)" "$((n_run * 3))"
  done_testing
fi
command -v busybox >/dev/null || bail_out "busybox is not installed (contrib/install-deps.sh installs busybox-static)"

# The inputs: one image in three forms, and a root directory.
IMG=$T_WORK/img
"$PY" "$CONTRIB_DIR/mkimage.py" "$IMG" --shell >"$T_WORK/mkimage.log" 2>&1 ||
  bail_out "contrib/mkimage.py failed: $(cat "$T_WORK/mkimage.log")"
# busybox.tar: the docker-archive with the RepoTags `docker save busybox` writes.
"$PY" - "$IMG/docker.tar" "$IMG/busybox.tar" <<'EOF' || bail_out "cannot retag the docker-archive"
import io, json, sys, tarfile
with tarfile.open(sys.argv[1]) as src, tarfile.open(sys.argv[2], "w") as dst:
    for m in src.getmembers():
        data = src.extractfile(m).read()
        if m.name == "manifest.json":
            j = json.loads(data)
            j[0]["RepoTags"] = ["busybox:latest"]
            data = json.dumps(j).encode()
            m.size = len(data)
        dst.addfile(m, io.BytesIO(data))
EOF
ROOTFS=$T_WORK/rootfs
mkdir -p "$ROOTFS/bin" "$ROOTFS/etc" "$ROOTFS/tmp" "$ROOTFS/proc" "$ROOTFS/dev" "$ROOTFS/sys"
cp "$(command -v busybox)" "$ROOTFS/bin/busybox"
for a in $("$ROOTFS/bin/busybox" --list); do
  [ "$a" = busybox ] || ln -s busybox "$ROOTFS/bin/$a"
done
echo 'root:x:0:0:root:/root:/bin/sh' >"$ROOTFS/etc/passwd"

bin_dir=$(dirname "$RRT")
ANSWER='echo example-ran-$((6 * 7)); exit'
n=0
while IFS=$'\t' read -r file line _ script; do
  n=$((n + 1))
  d=$T_WORK/ex$n
  mkdir -p "$d/home" "$d/run"
  chmod 0700 "$d/run"
  cp "$IMG/oci.tar" "$d/alpine.tar"
  cp "$IMG/docker.tar" "$d/img.tar"
  cp "$IMG/busybox.tar" "$d/busybox.tar"
  cp -r "$IMG/oci" "$d/layout"
  cp -a "$ROOTFS" "$d/rootfs"
  run env -i -C "$d" HOME="$d/home" XDG_RUNTIME_DIR="$d/run" LC_ALL=C TERM=dumb \
    PATH="$bin_dir:/usr/sbin:/usr/bin:/sbin:/bin" \
    "$PTYRUN" --timeout 100 --reply "# " "$ANSWER"$'\n' sh -e "$script"
  replies=$(sed -n 's/^ptyrun: \([0-9]*\) replies$/\1/p' <<<"$err")
  if [ "$rc" -eq 0 ]; then
    pass "$file:$line runs (exit 0)"
  else
    fail "$file:$line runs (exit 0)" "exit status $rc" "the block:" "$(cat "$script")" "output: $out" "stderr: $err"
  fi
  ran=$(grep -c 'example-ran-42' <<<"$out")
  is "$ran" "${replies:-?}" "$file:$line: every shell it opened ran what was typed ($ran)"
  # Nothing left: containers under its state root, processes or mounts of its directory.
  left=$("$RRT" --root "$d/run/rootlessrt" list -q 2>/dev/null)
  procs=$(procs_referencing "$d")
  mounts=$(mounts_referencing "$d")
  if [ -z "$left$procs$mounts" ]; then
    pass "$file:$line leaves nothing behind"
  else
    fail "$file:$line leaves nothing behind" ${left:+"containers: $left"} ${procs:+"processes: $procs"} \
      ${mounts:+"mounts: $mounts"}
  fi
  for id in $left; do "$RRT" --root "$d/run/rootlessrt" delete -f "$id" >/dev/null 2>&1; done
  store=$d/home/.local/share/rootlessrt
  for s in "$store"/containers/* "$store"/layers/sha256/* "$store"/tmp/*; do
    [ -e "$s" ] && "$RRT" --root "$d/run/rootlessrt" store --storage "$store" rm "$(basename "$s")" >/dev/null 2>&1
  done
  [ -d "$store/tmp" ] && unshare -r --map-auto rm -rf "$store/tmp" 2>/dev/null
done < <(awk -F'\t' '$3 == "runnable"' <<<"$listing")

done_testing
