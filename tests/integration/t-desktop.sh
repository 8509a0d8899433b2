#!/bin/bash
# t-desktop.sh: the desktop `run` as a podman user expects it: registry image names (with the
# desktop flags before them) take the desktop form and say what to write instead, a
# docker-archive NAME with '/' (podman saves localhost/NAME:TAG), --read-only-tmpfs, exit
# statuses 127/126 for a missing or non-executable command (and only for it), `run --rm / sh`
# refused saying why, and an image of another architecture refused with both names.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

use_store

# ---------------------------------------------------------------- registry image names

# A name without a transport is pulled as podman would (a short name through registries.conf):
# here with no search registry configured, and registries that refuse on loopback.
printf '' >"$T_WORK/registries.conf"
export CONTAINERS_REGISTRIES_CONF=$T_WORK/registries.conf
run drun --rm -it -e A=1 debian:12 true
like "$rc:$err" "^1:rootlessrt: run: debian:12: a short name needs a registry: .*unqualified-search-registries" \
  "run --rm -it -e A=1 debian:12: the desktop form, a short name needing a registry, saying so"
is "$(printf '%s\n' "$err" | wc -l)" 1 "debian:12: one line"
for name in 127.0.0.1:1/foo:1 "127.0.0.1:1/x/y@sha256:$(printf '%064d' 0)"; do
  run drun --rm -it -e A=1 --tls-verify=false "$name" true
  like "$rc:$err" "^1:rootlessrt: run: ${name//./\\.}: .*127\\.0\\.0\\.1.*1" \
    "run --rm -it -e A=1 $name: the desktop form, pulled from that registry (refused: one line)"
  is "$(printf '%s\n' "$err" | wc -l)" 1 "$name: one line"
done
is "$(ls -A "$RRT_ROOT/.run" 2>/dev/null)" "" "a registry name leaves no bundle"
run rrt run --rm debian:12
like "$rc:$err" "^1:.*debian:12: a short name needs a registry" "run --rm debian:12 (no command) too"
run rrt run -b "$T_WORK/nope" plainid
unlike "$err" "registry" "a plain container id stays the runc form"

base=$(mkbundle base true)/rootfs

# ---------------------------------------------------------------- --read-only-tmpfs

run drun --rm --read-only "$base" sh -c 'for d in /tmp /run /var/tmp /etc; do rrt-probe write $d/x y; done 2>&1; stat -c %a /tmp'
is "$rc:$out" "0:ok
ok
ok
EROFS
1777" "--read-only: /tmp, /run and /var/tmp are writable tmpfs (podman's --read-only-tmpfs default)"
run drun --rm --read-only --read-only-tmpfs=false "$base" sh -c 'for d in /tmp /run /var/tmp; do rrt-probe write $d/x y; done; true'
is "$rc:$out" "0:EROFS
EROFS
EROFS" "--read-only --read-only-tmpfs=false: all read-only"
run drun --rm --read-only --read-only-tmpfs --tmpfs /tmp:size=1m "$base" sh -c 'grep " /tmp " /proc/mounts | grep -c size=1024k'
is "$rc:$out" "0:1" "a --tmpfs of the same destination wins over --read-only-tmpfs"
run drun --rm --read-only-tmpfs=maybe "$base" true
fails_naming '--read-only-tmpfs="maybe": true or false' "--read-only-tmpfs with a bad value"

# ---------------------------------------------------------------- exit statuses

run drun --rm "$base" /no/such
like "$rc:$err" '^127:rootlessrt: run: the container.s command was not found: .*/no/such.*(no such file|No such file)' "a missing command exits 127 and names it"
run drun --rm "$base" /etc/passwd
like "$rc:$err" '^126:rootlessrt: run: the container.s command cannot be executed: .*/etc/passwd.*ermission denied' "a non-executable command exits 126 and names it"
is "$(ls -A "$RRT_ROOT/.run" 2>/dev/null)" "" "they leave no bundle"

# The host's root as a toolbox: its mounts are locked to it in the user namespace, so no overlay
# can take it as a layer; said plainly (it was "the container's command was not found", 127).
run drun --rm / sh -c true
fails_naming "^rootlessrt: run: / cannot be a container's copy-on-write root: filesystems are mounted under it \(/[^)]*\), and in a rootless run's user namespace those mounts are locked to it" \
  "run --rm / sh: refused, saying why (the mounts under /), exit 1"
is "$(printf '%s\n' "$err" | wc -l):$(ls -A "$RRT_ROOT/.run" 2>/dev/null)" "1:" "... one line, no bundle left"

# ---------------------------------------------------------------- images

IMG=$T_WORK/img
if ! /usr/bin/python3 "$CONTRIB_DIR/mkimage.py" "$IMG" --probe "$PROBE" >"$T_WORK/mkimage.log" 2>&1; then
  diag "$(cat "$T_WORK/mkimage.log")"
  bail_out "contrib/mkimage.py failed"
fi
machine=$(uname -m)
case $machine in
  x86_64) here=amd64 other=arm64 ;;
  aarch64) here=arm64 other=amd64 ;;
  *) here="" ;;
esac
if [ -n "$here" ]; then
  /usr/bin/python3 "$CONTRIB_DIR/mkimage.py" "$T_WORK/foreign" --probe "$PROBE" --arch "$other" >>"$T_WORK/mkimage.log" 2>&1 ||
    bail_out "contrib/mkimage.py --arch failed"
  layers_before=$(ls "$STORE/layers/sha256" 2>/dev/null | wc -l)
  for ref in "oci:$T_WORK/foreign/oci" "docker-archive:$T_WORK/foreign/docker.tar"; do
    run drun --rm "$ref" /bin/true
    fails_naming "^rootlessrt: run: ${ref//./\\.}: the image is for $other, this machine is $here: an image of another architecture is not run" \
      "$ref: another architecture is refused, naming both"
  done
  is "$(ls "$STORE/layers/sha256" 2>/dev/null | wc -l)" "$layers_before" "nothing of it is unpacked"
else
  skip "the architecture test knows x86_64 and aarch64 machines, not $machine" 3
fi


run drun --rm "docker-archive:$IMG/docker.tar:localhost/rrt-test:latest" named
is "$rc:$out" "0:entry named" "docker-archive:FILE:localhost/NAME:TAG: a NAME with '/' (as podman saves it)"
run drun --rm "docker-archive:$IMG/docker.tar:localhost/rrt-test:other" /bin/true
fails_naming 'no image tagged "localhost/rrt-test:other"' "docker-archive: a NAME:TAG it does not hold is named"

# ---------------------------------------------------------------- the unpack's progress

PTYRUN=${PTYRUN:-$(dirname "$PROBE")/ptyrun}
if [ -x "$PTYRUN" ]; then
  PSTORE=$T_WORK/pstore
  run "$PTYRUN" --timeout 60 "$RRT" --root "$RRT_ROOT" run --rm --storage "$PSTORE" "oci-archive:$IMG/oci.tar" finished
  lines=$(printf '%s\n' "$out" | tr '\r' '\n' | sed 's/\x1b\[K//g')
  first=$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$IMG/oci/index.json")
  hex=$(jq -r '.layers[0].digest | sub("sha256:"; "") | .[0:12]' "$IMG/oci/blobs/sha256/$first")
  has_line "$lines" "^layer 1/3 sha256:$hex… [0-9.]+ MiB / [0-9.]+ MiB \(100%\)$" \
    "on a terminal: layer N/M, its digest, MiB done / total and the percentage"
  has_line "$lines" '^layer 3/3 sha256:[0-9a-f]{12}… [0-9.]+ MiB / [0-9.]+ MiB \(100%\)$' "every layer counted"
  has_line "$lines" "entry finished" "then the container runs ($rc)"
  [ -d "$PSTORE" ] && for n in "$PSTORE"/layers/sha256/*; do
    [ -e "$n" ] && rrt store --storage "$PSTORE" rm "$(basename "$n")" >/dev/null 2>&1
  done
else
  skip "no ptyrun helper beside rrt-probe (make build/ptyrun)" 3
fi

done_testing
