#!/bin/bash
# t-image-names.sh: images kept by name and run offline, as podman users type them: an archive
# imported with a name (`pull docker-archive:FILE`), `images` (REPOSITORY TAG IMAGE ID CREATED
# SIZE, -q, --no-trunc, --format json), bare names (`run --rm busybox echo hi`, `run busybox ...`
# with no bundle here) resolved through the store as podman resolves them, the runc form kept
# where a bundle is, --pull=always|missing|never|newer, rmi, store rm refused for a layer an
# image uses, store prune. All offline: registries.conf lists no search registry.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

use_store
# The default store (no --storage) is this test's: bare `run NAME` uses it.
export XDG_DATA_HOME=$T_WORK/data
STORE=$XDG_DATA_HOME/rootlessrt
printf '' >"$T_WORK/registries.conf"
export CONTAINERS_REGISTRIES_CONF=$T_WORK/registries.conf
# The current directory (the harness's) has no config.json: no bundle to run here.
[ -e config.json ] && bail_out "$PWD has a config.json"

IMG=$T_WORK/img
if ! /usr/bin/python3 "$CONTRIB_DIR/mkimage.py" "$IMG" --probe "$PROBE" >"$T_WORK/mkimage.log" 2>&1; then
  diag "$(cat "$T_WORK/mkimage.log")"
  bail_out "contrib/mkimage.py failed"
fi
# retag IN OUT TAG...: the docker-archive IN with its manifest.json's RepoTags set to TAG...
retag() {
  /usr/bin/python3 - "$@" <<'PYEOF'
import io, json, sys, tarfile
src, dst, tags = sys.argv[1], sys.argv[2], sys.argv[3:]
with tarfile.open(src) as i, tarfile.open(dst, "w") as o:
    for m in i.getmembers():
        data = i.extractfile(m).read() if m.isfile() else None
        if m.name == "manifest.json":
            j = json.loads(data)
            j[0]["RepoTags"] = tags
            data = json.dumps(j).encode()
            m.size = len(data)
        o.addfile(m, io.BytesIO(data) if data is not None else None)
PYEOF
}
retag "$IMG/docker.tar" "$T_WORK/busybox.tar" busybox:latest || bail_out "retag failed"
id=$(tar -xOf "$IMG/docker.tar" manifest.json | jq -r '.[0].Config | sub("\\.json$"; "")')
layers() { find "$STORE/layers/sha256" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# ---------------------------------------------------------------- an archive imported by name

run rrt pull "docker-archive:$T_WORK/busybox.tar"
is "$rc:$out" "0:Loaded image: docker.io/library/busybox:latest" \
  "pull docker-archive:FILE: imported, recorded by its RepoTags (busybox:latest: Docker Hub's)"
ok "the record is one JSON file in the store" jq -e '.images | length == 1' "$STORE/images.json"
run rrt images
head=$(head -1 <<<"$out") row=$(sed -n 2p <<<"$out")
like "$rc:$head" "^0:REPOSITORY {17}TAG {9}IMAGE ID {6}CREATED {2,}SIZE$" \
  "images: podman's header, its columns as wide as their widest cell plus 2, at least 12"
like "$row" "^docker\.io/library/busybox  latest      ${id:0:12}  (Less than a second|[0-9]+ seconds?|About a minute|[0-9]+ minutes) ago +[0-9.]+ MB$" \
  "images: REPOSITORY TAG IMAGE ID (12 digits of the config's digest) CREATED SIZE"
created=${head%%SIZE*} when=${row:53}
when=${when%%  *}
is "${#created}" "$((53 + (${#when} + 2 > 12 ? ${#when} + 2 : 12)))" "... CREATED as wide as its cell plus 2"
run rrt images -q
is "$rc:$out" "0:${id:0:12}" "images -q: the ids"
run rrt images --no-trunc --noheading
like "$out" "^docker\.io/library/busybox +latest +sha256:$id " "images --no-trunc -n: the whole id, no header"
run rrt images --format json
is "$rc:$(jq -r '.[0].Id, .[0].Names[0], (.[0].Size > 0), (.[0].RepoDigests[0] | test("^docker.io/library/busybox@sha256:[0-9a-f]{64}$"))' <<<"$out" | tr '\n' ' ')" \
  "0:$id docker.io/library/busybox:latest true true " "images --format json: Id, Names, Size, RepoDigests"
run rrt images --format '{{.ID}}'
fails_naming 'images: --format "\{\{\.ID\}\}": json or table' "images: a Go template is refused, saying what is taken"

# ---------------------------------------------------------------- bare names, offline

before=$(layers)
run rrt run --rm busybox echo hi
is "$rc:$out" "0:entry echo hi" "run --rm busybox echo hi: the stored image, by a bare name, offline"
is "$(layers)" "$before" "... nothing unpacked again"
run rrt run busybox echo hi
is "$rc:$out" "0:entry echo hi" "run busybox echo hi (no flag, no config.json here): the desktop form"
run rrt run --rm docker.io/library/busybox echo qualified
is "$rc:$out" "0:entry echo qualified" "a qualified name without a tag: :latest"
run rrt run --rm "${id:0:12}" echo by-id
is "$rc:$out" "0:entry echo by-id" "an image id's first 12 digits"
run rrt run --rm --pull=never busybox echo never
is "$rc:$out" "0:entry echo never" "--pull=never: the stored image"
run rrt run --rm --pull=missing busybox echo missing
is "$rc:$out" "0:entry echo missing" "--pull=missing (podman's default): the stored image"
run rrt run --rm --pull=newer busybox echo newer
is "$rc:$out" "0:entry echo newer" "--pull=newer, the registry cannot be asked: the stored image runs"
like "$err" "warning: run: busybox: the registry could not be asked \(.*\): running the stored docker\.io/library/busybox:latest" \
  "... saying so"
run rrt run --rm --pull=always busybox echo always
fails_naming "^rootlessrt: run: busybox: a short name needs a registry" \
  "--pull=always: the registry is asked (here none is configured: refused in one line)"
run rrt run --rm --pull=sometimes busybox true
fails_naming '--pull "sometimes": always, missing, never or newer' "--pull with a bad value"
run rrt run --rm --pull=never nosuch true
fails_naming '^rootlessrt: run: nosuch: no such image in the store \(--pull=never\)' \
  "--pull=never and a name the store does not have"
run rrt run nosuch
fails_naming '^rootlessrt: run: nosuch: a short name needs a registry: .*\(nor is "nosuch" a container to run from a bundle: .* has no config\.json\)$' \
  "a word that is neither an image nor a bundle here: both readings named"
is "$(printf '%s\n' "$err" | wc -l)" 1 "... in one line"
is "$(ls -A "$RRT_ROOT/.run" 2>/dev/null)" "" "... and no bundle left"

# Where both readings fit (a config.json here and a stored image of that name), the runc form
# stays for engines; its error names the other reading.
B=$(mkbundle both true)
pushd "$B" >/dev/null || bail_out "cd $B"
run rrt run busybox
is "$rc:$(rrt list -q | grep -cx busybox)" "0:0" "run busybox with a config.json here: the runc form (the bundle's process ran)"
run rrt run busybox echo hi
fails_naming '^rootlessrt: run: unexpected argument "echo" after the container id \(read as the runc form: a container "busybox" of the bundle in .*both, which has a config\.json; "busybox" is also the image docker\.io/library/busybox:latest in the store: `rootlessrt run --rm busybox \.\.\.` runs that' \
  "... whose error names the image reading too"
run rrt run --rm busybox echo desktop
is "$rc:$out" "0:entry echo desktop" "... and a desktop flag there runs the image"
popd >/dev/null || bail_out "cd -"

# ---------------------------------------------------------------- names: another, rmi, store rm, prune

run rrt pull "docker-archive:$IMG/docker.tar"
is "$rc:$out" "0:Loaded image: localhost/rrt-test:latest" "the same image by another name"
run rrt images -q
is "$out" "${id:0:12}" "... one image, two names"
run rrt run --rm rrt-test echo local
is "$rc:$out" "0:entry echo local" "a short name found as localhost/NAME"

ctr=$(new_id user)
run rrt run -d --name "$ctr" busybox sleep 60
is "$rc:$out" "0:$ctr" "a detached container of the image"
top=$(jq -r '.images[0].layers[-1]' "$STORE/images.json")
run rrt store rm "sha256:$top"
fails_naming "^rootlessrt: store rm: layer sha256:$top is used by the image docker\.io/library/busybox:latest: \`rootlessrt rmi docker\.io/library/busybox:latest\`" \
  "store rm of a layer an image uses: refused, naming the image"
ok "... and the layer stays" test -d "$STORE/layers/sha256/$top"
run rrt store rm --force "sha256:$top"
fails_naming "^rootlessrt: store rm: layer sha256:$top is used by the container \"$ctr\": delete it first" \
  "store rm --force of a layer a container uses: refused, naming the container"
run rrt rmi localhost/rrt-test
is "$rc:$out" "0:Untagged: localhost/rrt-test:latest" "rmi of one of two names: that name goes"
run rrt rmi busybox
fails_naming "^rootlessrt: rmi: busybox: image in use by container \"$ctr\": delete it first" \
  "rmi of an image a container uses: refused, naming the container"
rrt delete -f "$ctr" >/dev/null 2>&1
rrt store rm "$ctr" >/dev/null 2>&1

# A layer no image uses (another image's, run from its layout, not recorded) goes with prune.
/usr/bin/python3 "$CONTRIB_DIR/mkimage.py" "$T_WORK/x" --probe "$PROBE" --xattr >>"$T_WORK/mkimage.log" 2>&1 ||
  bail_out "mkimage.py --xattr failed"
run rrt run --rm "oci:$T_WORK/x/oci" true
with_x=$(layers)
run rrt store prune
like "$rc:$(tail -1 <<<"$out")" "^0:store prune: 1 layers, 0 images removed" "store prune: the layer no image uses goes"
is "$(layers)" "$((with_x - 1))" "... only that one"
run rrt run --rm busybox echo still
is "$rc:$out" "0:entry echo still" "... the image's stay"

run rrt rmi busybox
like "$rc:$out" "^0:Untagged: docker\.io/library/busybox:latest
Deleted: $id$" "rmi: the image and its record go (podman's lines)"
is "$(layers)" 0 "... with the layers only it used"
run rrt images --noheading
is "$rc:$out" "0:" "images: none left"
run rrt run --rm --pull=never busybox true
fails_naming 'busybox: no such image in the store' "the name is gone"
run rrt rmi busybox
fails_naming '^rootlessrt: rmi: busybox: no such image in the store' "rmi of an unknown name"
run rrt rmi --storage "$T_WORK/never" busybox
fails_naming '^rootlessrt: rmi: busybox: no such image in the store .*never \(it is empty\)$' \
  "rmi in a store that was never made: no such image"
run rrt store --storage "$T_WORK/never" prune
is "$rc:$out:$(test -e "$T_WORK/never" && echo made)" "0:store prune: the store $T_WORK/never is empty:" \
  "store prune of a store that was never made: nothing to do, nothing made"

# ---------------------------------------------------------------- names from outside

# RepoTags are text from an archive: what is not an image name is not recorded (the image is kept
# by its id), and nothing of it reaches the terminal raw.
retag "$IMG/docker.tar" "$T_WORK/bad.tar" $'evil\e]0;x\a:latest' 'UPPER:latest' || bail_out "retag failed"
run rrt pull "docker-archive:$T_WORK/bad.tar"
is "$rc:$out" "0:$id" "RepoTags that are not image names: kept by the id, which is printed"
run rrt images
like "$(sed -n 2p <<<"$out")" "^<none> +<none> +${id:0:12} " "images: <none> <none>"
unlike "$out$err" $'\e' "no escape byte of the archive is printed"
run rrt rmi "${id:0:12}"
like "$rc:$out" "^0:Deleted: $id$" "rmi by id"

# A name given with control bytes as the archive's NAME:TAG: no such image, said escaped.
run rrt pull "docker-archive:$T_WORK/busybox.tar:ev"$'\e]0;x\a'"il:t"$'\r'"ag"
fails_naming 'busybox\.tar: no image tagged "ev\\x1b\]0;x\\x07il:t\\x0dag"$' \
  "pull docker-archive:FILE:NAME:TAG with ESC, BEL and CR in it: refused, the name shown escaped"
unlike "$out$err" $'[\e\a\r]' "... and none of those bytes is printed"

# A guard: a record holding ESC, BEL and CR in a name (names are checked before they are
# recorded, above, but the store's file is the user's and an earlier version wrote it) is shown
# escaped by images, store ls and rmi: every name printed goes through rrt_escape_ascii (the one
# escaping, base/escape.c). main's own escaper showed these escaped already.
run rrt pull "docker-archive:$T_WORK/busybox.tar"
evil=$'localhost/ev\e]0;x\ail:t\rag'
shown='localhost/ev\\x1b\]0;x\\x07il'
jq --arg n "$evil" '.images[0].names = [$n] + .images[0].names' "$STORE/images.json" >"$T_WORK/images.json" &&
  cat "$T_WORK/images.json" >"$STORE/images.json" || bail_out "could not edit $STORE/images.json"
run rrt images
unlike "$out$err" $'[\e\a\r]' "images: no ESC, BEL or CR of a recorded name is printed"
like "$(sed -n 2p <<<"$out")" "^$shown +t\\\\x0dag +${id:0:12} " "... the name and tag shown escaped"
run rrt store ls
unlike "$out$err" $'[\e\a\r]' "store ls: none printed"
like "$out" "image +$shown:t\\\\x0dag " "... the name shown escaped"
run rrt rmi "${id:0:12}"
unlike "$out$err" $'[\e\a\r]' "rmi: none printed"
like "$rc:$out" "^0:Untagged: $shown:t\\\\x0dag
Untagged: docker\.io/library/busybox:latest
Deleted: $id$" "... each name untagged, shown escaped"

done_testing
