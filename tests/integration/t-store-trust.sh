#!/bin/bash
# t-store-trust.sh: no other user may steer the image store of the desktop `run` (issue 11,
# items 8-9, for the store). Whoever can write the store chooses what a container runs: a layer
# directory planted under layers/sha256/HEX is used as that layer without being unpacked again.
# Written as the attack: a store others can write holding a planted top layer; a store that is a
# symlink; a store in a directory anyone can replace. `run` and `store` refuse each, saying why,
# and the planted layer never reaches a container.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

IMG=$T_WORK/img
if ! /usr/bin/python3 "$CONTRIB_DIR/mkimage.py" "$IMG" --probe "$PROBE" >"$T_WORK/mkimage.log" 2>&1; then
  diag "$(cat "$T_WORK/mkimage.log")"
  bail_out "contrib/mkimage.py failed"
fi
m=$(jq -r '.manifests[0].digest | sub("sha256:"; "")' "$IMG/oci/index.json")
top=$(jq -r '.layers[-1].digest | sub("sha256:"; "")' "$IMG/oci/blobs/sha256/$m")
[ -n "$top" ] || bail_out "no layer in the test image"

# plant STORE: what another user with write access to STORE leaves there: the image's top layer,
# already "unpacked", with a file of theirs.
plant() {
  mkdir -p "$1/layers/sha256/$top" && echo planted >"$1/layers/sha256/$top/planted"
}

# ---------------------------------------------------------------- a store anyone can write

shared=$T_WORK/shared
mkdir "$shared" && plant "$shared" && chmod 0777 "$shared" "$shared/layers" "$shared/layers/sha256"
run rrt run --rm --storage "$shared" --entrypoint /bin/sh "oci:$IMG/oci" -c 'cat /planted'
fails_naming 'image store .*/shared is writable by others \(mode 0777\).*chmod go-w' \
  "run with a store of mode 0777: refused, saying why"
unlike "$out" planted "the planted layer never reached a container"
ok "nothing of the container was made in it" test ! -e "$shared/containers"
run rrt store --storage "$shared" ls
fails_naming 'writable by others \(mode 0777\)' "store ls refuses it too"
run rrt store --storage "$shared" rm "sha256:$top"
fails_naming 'writable by others \(mode 0777\)' "and store rm"
ok "store rm left the planted layer alone" test -e "$shared/layers/sha256/$top/planted"
chmod 0770 "$shared"
run rrt run --rm --storage "$shared" "oci:$IMG/oci" true
fails_naming 'writable by others \(mode 0770\)' "a group-writable store (0770) is refused"

# ---------------------------------------------------------------- a symlinked store

mkdir -m 0700 "$T_WORK/elsewhere" && plant "$T_WORK/elsewhere"
ln -s "$T_WORK/elsewhere" "$T_WORK/linkstore"
run rrt run --rm --storage "$T_WORK/linkstore" --entrypoint /bin/sh "oci:$IMG/oci" -c 'cat /planted'
fails_naming 'image store .*linkstore is a symbolic link .*choose another with --storage' \
  "a store that is a symbolic link is refused, naming --storage"
unlike "$out" planted "the layer behind the link never reached a container"
run rrt store --storage "$T_WORK/linkstore" ls
fails_naming 'is a symbolic link' "store ls refuses it too"

# ---------------------------------------------------------------- a store others could replace

mkdir -m 0777 "$T_WORK/open"
run rrt run --rm --storage "$T_WORK/open/store" --entrypoint /bin/sh "oci:$IMG/oci" -c true
fails_naming 'directory .*/open above it is writable by others .*not sticky' \
  "a store in a directory anyone can write (not sticky) is refused"

# ---------------------------------------------------------------- a private store works

mine=$T_WORK/mine
run rrt run --rm --storage "$mine" --entrypoint /bin/sh "oci:$IMG/oci" -c 'test -e /planted || echo clean'
is "$rc:$out" "0:clean" "a store made by run itself is private and used"
is "$(stat -c %a "$mine")" 700 "run made the store 0700"
run rrt store --storage "$T_WORK/none" ls
is "$rc" 0 "store ls of a store that does not exist yet is not an error"
for n in "$mine"/layers/sha256/*; do
  [ -e "$n" ] && rrt store --storage "$mine" rm "$(basename "$n")" >/dev/null 2>&1
done

done_testing
