#!/bin/bash
# t-registry.sh: `pull` and `run docker://` against a real registry (Debian's docker-registry) on
# 127.0.0.1, run by the test user in its own directory, with images pushed by skopeo (built here
# from busybox-static): a pull and a run, nothing fetched twice, a manifest list with two
# platforms (--platform), basic auth from auth.json (wrong password, right one, none), bearer
# tokens (against a stand-in token server), a
# registries.conf short name and mirror, a corrupted blob, a registry killed mid-layer, a pull
# killed mid-layer, a disk that fills (a tmpfs from root-setup/t-registry.sh), and the clear
# one-line errors of bad input, with nothing left in the store. Resumed layers (HTTP Range)
# through a proxy in front of the registry that cuts a blob, ignores Range or answers 416, and
# logs what it was asked and sent; a pull killed at 8 points, each followed by one that resumes.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

for c in docker-registry skopeo; do
  if ! command -v "$c" >/dev/null 2>&1; then
    skip "no $c here (apt-get install docker-registry skopeo: contrib/install-deps.sh as root)"
    done_testing
  fi
done

STORE=$T_WORK/store
# The registry clients of this file's pulls (their --partials is this store's tmp/), for pgrep -f:
# other tests run pulls as the same user at the same time. [r]: the sh -c that passes the pattern
# on must not match it.
MY_PULLS="^[^ ]*[r]ootlessrt-pull .*--partials $STORE/tmp "
REGS=() # pids of the registries started here
reg_cleanup() {
  local p
  for p in "${REGS[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -d "$STORE" ] && unshare -r --map-auto rm -rf "$STORE" 2>/dev/null
  _cleanup
}
trap reg_cleanup EXIT
export CONTAINERS_REGISTRIES_CONF=$T_WORK/registries.conf # none: no search registries
export REGISTRY_AUTH_FILE=$T_WORK/no-auth.json
: >"$CONTAINERS_REGISTRIES_CONF"

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_registry NAME PORT [htpasswd FILE]: docker-registry on 127.0.0.1:PORT serving the one
# storage directory $T_WORK/data; REG_PID is its pid. Waits until it answers. With REG_ACCESSLOG
# set, every request is logged in $T_WORK/NAME.log.
start_registry() {
  local name=$1 port=$2 auth="" quiet=true
  [ -n "${REG_ACCESSLOG:-}" ] && quiet=false
  if [ "${3:-}" = htpasswd ]; then
    auth="auth:
  htpasswd:
    realm: rrt-test
    path: $4"
  fi
  cat >"$T_WORK/$name.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: $quiet
storage:
  filesystem:
    rootdirectory: $T_WORK/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
$auth
EOF
  # REGISTRY_* variables are its configuration: REGISTRY_AUTH_FILE is not for it.
  env -u REGISTRY_AUTH_FILE docker-registry serve "$T_WORK/$name.yml" >>"$T_WORK/$name.log" 2>&1 &
  REG_PID=$!
  REGS+=("$REG_PID")
  wait_until 20 curl -s -o /dev/null "http://127.0.0.1:$port/v2/" ||
    bail_out "docker-registry did not start: $(cat "$T_WORK/$name.log")"
}

# The images: an OCI layout with tags plain (busybox + /marker), twice (its marker layer listed
# twice), bad (one more small layer),
# big (one more 24 MiB layer of random bytes) and multi (an index: linux/amd64 and linux/arm64,
# whose /marker says which).
"$PY" - "$T_WORK/layout" <<'EOF' || bail_out "cannot build the test images"
import hashlib, io, json, os, subprocess, sys, tarfile
out = sys.argv[1]
os.makedirs(out + "/blobs/sha256")
def blob(data):
    d = hashlib.sha256(data).hexdigest()
    with open(out + "/blobs/sha256/" + d, "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + d, "size": len(data)}
def layer(files):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data, mode, link in files:
            i = tarfile.TarInfo(name); i.mtime = 0; i.mode = mode
            if data is None and link is None:
                i.type = tarfile.DIRTYPE; t.addfile(i)
            elif link is not None:
                i.type = tarfile.SYMTYPE; i.linkname = link; t.addfile(i)
            else:
                i.size = len(data); t.addfile(i, io.BytesIO(data))
    d = blob(b.getvalue()); d["mediaType"] = "application/vnd.oci.image.layer.v1.tar"
    return d
applets = subprocess.run(["/bin/busybox", "--list"], capture_output=True, text=True, check=True).stdout.split()
base = [(d, None, 0o755, None) for d in ("bin", "dev", "etc", "proc", "sys", "tmp", "run")]
base.append(("bin/busybox", open("/bin/busybox", "rb").read(), 0o755, None))
base += [("bin/" + a, None, 0o777, "busybox") for a in applets if a != "busybox"]
base.append(("etc/passwd", b"root:x:0:0:root:/:/bin/sh\n", 0o644, None))
base_l = layer(base)
def image(arch, extra):
    ls = [base_l] + [layer(e) for e in extra]
    cfg = blob(json.dumps({"architecture": arch, "os": "linux",
        "config": {"Env": ["PATH=/bin"], "Cmd": ["cat", "/marker"]},
        "rootfs": {"type": "layers", "diff_ids": [l["digest"] for l in ls]}}).encode())
    cfg["mediaType"] = "application/vnd.oci.image.config.v1+json"
    m = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": cfg, "layers": ls}).encode())
    m["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    return m
def marker(text):
    return [("marker", text.encode() + b"\n", 0o644, None)]
refs = []
def tag(desc, name):
    d = dict(desc); d["annotations"] = {"org.opencontainers.image.ref.name": name}; refs.append(d)
tag(image("amd64", [marker("plain")]), "plain")
tag(image("amd64", [marker("bad")]), "bad")
tag(image("amd64", [marker("twice"), marker("twice")]), "twice")
big = os.urandom(24 << 20)
open(out + "/../big.sha256", "w").write(hashlib.sha256(big).hexdigest())
tag(image("amd64", [marker("big"), [("big.bin", big, 0o644, None)]]), "big")
plats = []
for arch in ("amd64", "arm64"):
    m = image(arch, [marker(arch)]); m["platform"] = {"os": "linux", "architecture": arch}; plats.append(m)
idx = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": plats}).encode())
idx["mediaType"] = "application/vnd.oci.image.index.v1+json"
tag(idx, "multi")
json.dump({"schemaVersion": 2, "manifests": refs}, open(out + "/index.json", "w"))
json.dump({"imageLayoutVersion": "1.0.0"}, open(out + "/oci-layout", "w"))
EOF

PORT=$(free_port)
start_registry reg "$PORT"
MAIN_PID=$REG_PID
R=127.0.0.1:$PORT
for t in plain bad big multi twice; do
  skopeo copy --all -q --dest-tls-verify=false "oci:$T_WORK/layout:$t" "docker://$R/rrt/bb:$t" \
    >"$T_WORK/skopeo.log" 2>&1 || bail_out "skopeo copy $t: $(cat "$T_WORK/skopeo.log")"
done

pull() { rrt pull --storage "$STORE" "$@"; }
drun() { rrt run --rm --storage "$STORE" "$@"; }
layers_in_store() { find "$STORE/layers/sha256" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
drop_layer() { rrt store --storage "$STORE" rm --force "sha256:$1" >/dev/null 2>&1; }
drop_layers() {
  local l
  for l in "$STORE"/layers/sha256/*; do [ -e "$l" ] && drop_layer "$(basename "$l")"; done
}
tmp_left() { find "$STORE/tmp" -mindepth 1 -maxdepth 1 2>/dev/null; }
# The layer digests of TAG as the registry has them (skopeo compresses plain tars), top last.
layers_of() {
  curl -s -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$R/v2/rrt/bb/manifests/$1" | jq -r '[.layers[].digest | sub("sha256:"; "")] | join(" ")'
}
# Their diff_ids (the sha256 of each tar uncompressed: the store's names), from TAG's config.
diffs_of() {
  local c
  c=$(curl -s -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "http://$R/v2/rrt/bb/manifests/$1" | jq -r .config.digest)
  curl -sL "http://$R/v2/rrt/bb/blobs/$c" | jq -r '[.rootfs.diff_ids[] | sub("sha256:"; "")] | join(" ")'
}

# ---------------------------------------------------------------- pull and run

run drun --tls-verify=false "docker://$R/rrt/bb:plain"
is "$rc:$out" "0:plain" "run docker://HOST:PORT/NAME:TAG: pulled over http (--tls-verify=false) and run"
is "$(layers_in_store)" 2 "its two layers are in the store, unpacked"
is "$(tmp_left)" "" "nothing is left in the store's tmp/"
mtimes() { find "$STORE/layers/sha256" -mindepth 1 -maxdepth 1 -printf '%f %T@\n' | sort; }
before=$(mtimes)
run drun --tls-verify=false "docker://$R/rrt/bb:plain"
is "$rc:$out:$(mtimes)" "0:plain:$before" "a second run fetches and unpacks no layer again"
run pull --tls-verify=false "docker://$R/rrt/bb:bad" # shares the base layer
is "$rc:$err:$(layers_in_store)" "0::3" "pull: only the one missing layer is added, silently off a terminal"

PTYRUN=$(dirname "$RRT")/ptyrun
if [ -x "$PTYRUN" ]; then
  drop_layers
  run "$PTYRUN" "$RRT" --root "$RRT_ROOT" pull --storage "$STORE" --tls-verify=false "docker://$R/rrt/bb:plain"
  has_line "$(tr '\r' '\n' <<<"$out")" '^layer 2/2 sha256:[0-9a-f]{12}: [0-9.]+/[0-9.]+ MiB' \
    "on a terminal: a progress line per layer fetched"
else
  skip "no ptyrun beside the runtime (make build/ptyrun)"
fi

run drun --tls-verify=false "docker://$R/rrt/bb:twice"
is "$rc:$out" "0:twice" "an image that lists one layer twice is pulled and run"

# The import opens each layer's FIFO as soon as it gets to it; a client slower to open its end
# (here 300 ms, every layer) used to leave it reading an empty stream: "not a tar".
drop_layers
run env ROOTLESSRT_PULL_FIFO_DELAY_MS=300 "$RRT" --root "$RRT_ROOT" run --rm --storage "$STORE" \
  --tls-verify=false "docker://$R/rrt/bb:plain"
is "$rc:$out$err" "0:plain" "a client slow to open a layer's FIFO: the import waits for it"

digest=$(curl -s -o /dev/null -w '%header{docker-content-digest}' \
  -H 'Accept: application/vnd.oci.image.manifest.v1+json' "http://$R/v2/rrt/bb/manifests/plain")
run drun --tls-verify=false "docker://$R/rrt/bb@$digest"
is "$rc:$out" "0:plain" "run docker://HOST/NAME@sha256:DIGEST"

# ---------------------------------------------------------------- layers keyed by diff_id

# The image imported from a docker-archive first (skopeo writes its layers uncompressed: other
# blobs than the registry's gzip ones, the same diff_ids), then pulled: no layer blob is fetched,
# as the access log of a registry started for this says.
skopeo copy -q --src-tls-verify=false "docker://$R/rrt/bb:plain" "docker-archive:$T_WORK/plain-docker.tar" \
  >"$T_WORK/skopeo.log" 2>&1 || bail_out "skopeo copy to a docker-archive: $(cat "$T_WORK/skopeo.log")"
DSTORE=$T_WORK/dstore
run rrt run --rm --storage "$DSTORE" "docker-archive:$T_WORK/plain-docker.tar"
is "$rc:$out" "0:plain" "the image run from a docker-archive"
LPORT=$(free_port)
REG_ACCESSLOG=1 start_registry logged "$LPORT"
run rrt run --rm --storage "$DSTORE" --tls-verify=false "docker://127.0.0.1:$LPORT/rrt/bb:plain"
is "$rc:$out" "0:plain" "then pulled from a registry and run"
blob_gets() { # blob_gets LOG DIGEST...: the GETs of those blobs in an access log
  local n=0 d
  for d in "${@:2}"; do n=$((n + $(grep -c "\"GET /v2/rrt/bb/blobs/sha256:$d " "$1"))); done
  echo "$n"
}
read -r -a plain_blobs <<<"$(layers_of plain)"
mgets=$(grep -c '"GET /v2/rrt/bb/manifests/plain ' "$T_WORK/logged.log")
is "$((mgets > 0)):$(blob_gets "$T_WORK/logged.log" "${plain_blobs[@]}")" "1:0" \
  "... without fetching a layer blob (the registry logged the manifest's GET, none of a layer's)"
is "$(find "$DSTORE/layers/sha256" -mindepth 1 -maxdepth 1 | wc -l)" 2 "... one directory per layer in the store"
run rrt run --rm --storage "$DSTORE" --tls-verify=false "docker://127.0.0.1:$LPORT/rrt/bb:plain"
is "$rc:$(grep -c '"GET /v2/rrt/bb/manifests/plain ' "$T_WORK/logged.log"):$(blob_gets "$T_WORK/logged.log" "${plain_blobs[@]}")" \
  "0:$((mgets + 1)):0" "the next pull of it knows its blobs from the start: one manifest request, no layer"
read -r -a bad_blobs <<<"$(layers_of bad)"
read -r -a plain_diffs <<<"$(diffs_of plain)"
# A record that the bad image's own layer is the base layer: wrong, so not believed.
ln -s "../../sha256/${plain_diffs[0]}" "$DSTORE/layers/blobs/sha256/${bad_blobs[-1]}"
run rrt run --rm --storage "$DSTORE" --tls-verify=false "docker://127.0.0.1:$LPORT/rrt/bb:bad"
is "$rc:$out:$(blob_gets "$T_WORK/logged.log" "${plain_blobs[0]}"):$(blob_gets "$T_WORK/logged.log" "${bad_blobs[-1]}")" \
  "0:bad:0:1" "an image on the same base: only its own layer is fetched (a wrong blob record in the store is checked against its config)"
kill -9 "$REG_PID"
unshare -r --map-auto rm -rf "$DSTORE" 2>/dev/null

# ---------------------------------------------------------------- TLS on by default

run pull "docker://$R/rrt/bb:plain"
fails_naming "^rootlessrt: pull: docker://$R/rrt/bb:plain: .*TLS is verified.*--tls-verify=false" \
  "TLS is verified by default: an http registry is refused with what to do"
is "$(echo "$err" | wc -l)" 1 "... in one line"

# ---------------------------------------------------------------- a manifest list

run drun --tls-verify=false "docker://$R/rrt/bb:multi"
case "$(uname -m)" in
  x86_64) want=amd64 ;;
  aarch64) want=arm64 ;;
  *) want="" ;;
esac
if [ -n "$want" ]; then
  is "$rc:$out" "0:$want" "a manifest list: this machine's platform ($want) is picked"
else
  skip "this machine is neither amd64 nor arm64"
fi
run drun --tls-verify=false --platform linux/arm64 "docker://$R/rrt/bb:multi"
# The arm64 image's busybox is this machine's (the test builds both from it): only the marker
# says which was picked.
is "$rc:$out" "0:arm64" "--platform linux/arm64 picks that image of the list"
run pull --tls-verify=false --platform linux/s390x "docker://$R/rrt/bb:multi"
fails_naming 'no image for linux/s390x \(the index has: linux/amd64, linux/arm64\)' \
  "a platform the list does not have: an error naming what it has"
run pull --platform s390x "docker://$R/rrt/bb:multi"
fails_naming '^rootlessrt: pull: --platform "s390x": not OS/ARCH' "--platform without an OS"

# ---------------------------------------------------------------- bad input

n0=$(layers_in_store)
run pull --tls-verify=false "docker://$R/rrt/bb:nosuchtag"
fails_naming "^rootlessrt: pull: docker://$R/rrt/bb:nosuchtag: $R/rrt/bb:nosuchtag: no such image or tag in the registry" \
  "a missing tag: one clear error"
is "$(echo "$err" | wc -l)" 1 "... in one line"
run pull --tls-verify=false "docker://$R/rrt/nosuchrepo:plain"
fails_naming "no such image or tag in the registry" "a missing repository"
dead=$(free_port)
run drun --tls-verify=false "docker://127.0.0.1:$dead/rrt/bb:plain"
fails_naming "^rootlessrt: run: docker://127.0.0.1:$dead/rrt/bb:plain: .*127.0.0.1:$dead.*(Couldn't connect|Connection refused)" \
  "an unreachable registry: one clear error naming it"
run pull busybox
fails_naming "^rootlessrt: pull: busybox: a short name needs a registry: $CONTAINERS_REGISTRIES_CONF lists no unqualified-search-registries" \
  "a short name with no search registry configured"
run pull --tls-verify=false "docker://$R/rrt/BB:plain"
fails_naming "lowercase" "an upper-case repository name"
is "$(layers_in_store):$(tmp_left)" "$n0:" "bad input leaves nothing in the store"
is "$(find "$RRT_ROOT" -mindepth 1 -not -name '.*' 2>/dev/null)" "" "... nor in the state root"

# ---------------------------------------------------------------- registries.conf

cat >"$CONTAINERS_REGISTRIES_CONF" <<EOF
unqualified-search-registries = ["$R"]

[[registry]]
location = "$R"
insecure = true

[[registry]]
prefix = "example.invalid/mirrored"
location = "$R/rrt"
insecure = true
[[registry.mirror]]
location = "127.0.0.1:$dead/nothing-here"
insecure = true
EOF
run pull rrt/bb:plain
is "$rc:$err" "0:" "a short name through unqualified-search-registries (insecure = true: http)"
run rrt images --storage "$STORE"
has_line "$out" "^${R//./\\.}/rrt/bb +plain +[0-9a-f]{12} " \
  "... recorded by the name it was found under (the search registry's)"
run drun "docker://example.invalid/mirrored/bb:plain"
is "$rc:$out$err" "0:plain" "[[registry]] prefix/location, after a mirror that is down"
: >"$CONTAINERS_REGISTRIES_CONF"

# ---------------------------------------------------------------- authentication

if command -v htpasswd >/dev/null 2>&1; then
  htpasswd -Bbn alice s3cret >"$T_WORK/htpasswd" 2>/dev/null
  APORT=$(free_port)
  start_registry areg "$APORT" htpasswd "$T_WORK/htpasswd"
  A=127.0.0.1:$APORT
  drop_layers
  run pull --tls-verify=false "docker://$A/rrt/bb:plain"
  fails_naming "^rootlessrt: pull: docker://$A/rrt/bb:plain: registry $A: authentication required: no credentials for it" \
    "basic auth, no credentials: one clear error"
  printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$A" "$(printf alice:wrong | base64)" >"$T_WORK/bad.json"
  run pull --tls-verify=false --authfile "$T_WORK/bad.json" "docker://$A/rrt/bb:plain"
  fails_naming "^rootlessrt: pull: docker://$A/rrt/bb:plain: registry $A: authentication failed with the credentials for $A in $T_WORK/bad.json$" \
    "a wrong password: one clear error naming the registry and the file"
  is "$(layers_in_store):$(tmp_left)" "0:" "... and nothing in the store"
  mkdir -p "$T_WORK/xdg/containers"
  printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$A" "$(printf alice:s3cret | base64)" \
    >"$T_WORK/xdg/containers/auth.json"
  unset REGISTRY_AUTH_FILE
  run env XDG_RUNTIME_DIR="$T_WORK/xdg" "$RRT" --root "$RRT_ROOT" run --rm --storage "$STORE" \
    --tls-verify=false "docker://$A/rrt/bb:plain"
  is "$rc:$out" "0:plain" "the right password from \$XDG_RUNTIME_DIR/containers/auth.json"
  export REGISTRY_AUTH_FILE=$T_WORK/no-auth.json
else
  skip "no htpasswd (apache2-utils) to write the registry's password file" 5
fi
# Bearer tokens (the distribution spec's token flow): docker-registry needs a signing
# certificate for that, so a small stand-in serves the layout's "plain" image behind a token
# endpoint that takes alice:s3cret by basic auth.
"$PY" - "$T_WORK/layout" "$T_WORK/bearer.port" >"$T_WORK/bearer.log" 2>&1 <<'EOF' &
import base64, http.server, json, os, sys
layout, portfile = sys.argv[1], sys.argv[2]
idx = json.load(open(layout + "/index.json"))
plain = [m for m in idx["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == "plain"][0]
# An RFC 6750 b64token (letters, digits, -._~+/): the client refuses anything else.
TOKEN = "tok-repository.rrt.bb.pull"
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, code, body=b"", ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype); self.send_header("Content-Length", str(len(body)))
        for k, v in extra: self.send_header(k, v)
        self.end_headers(); self.wfile.write(body)
    def do_GET(self):
        port = self.server.server_address[1]
        if self.path.startswith("/token?"):
            want = "Basic " + base64.b64encode(b"alice:s3cret").decode()
            if self.headers.get("Authorization") != want or "scope=repository%3Arrt%2Fbb%3Apull" not in self.path:
                return self.send(401, b'{"details":"bad credentials"}')
            return self.send(200, json.dumps({"token": TOKEN}).encode())
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            ch = 'Bearer realm="http://127.0.0.1:%d/token",service="stand-in",scope="repository:rrt/bb:pull"' % port
            return self.send(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"token needed"}]}', extra=[("WWW-Authenticate", ch)])
        if self.path == "/v2/rrt/bb/manifests/plain":
            data = open(layout + "/blobs/sha256/" + plain["digest"][7:], "rb").read()
            return self.send(200, data, plain["mediaType"], [("Docker-Content-Digest", plain["digest"])])
        if self.path.startswith("/v2/rrt/bb/blobs/sha256:"):
            try:
                data = open(layout + "/blobs/sha256/" + self.path.rsplit(":", 1)[1], "rb").read()
            except OSError:
                return self.send(404)
            return self.send(200, data, "application/octet-stream")
        self.send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}')
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(portfile + ".tmp", "w").write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
EOF
REGS+=("$!")
if wait_until 20 test -s "$T_WORK/bearer.port"; then
  B=127.0.0.1:$(cat "$T_WORK/bearer.port")
  drop_layers
  run pull --tls-verify=false "docker://$B/rrt/bb:plain"
  fails_naming "^rootlessrt: pull: docker://$B/rrt/bb:plain: registry $B: authentication required: no credentials for it" \
    "bearer auth, no credentials: one clear error"
  printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$B" "$(printf alice:wrong | base64)" >"$T_WORK/bbad.json"
  run pull --tls-verify=false --authfile "$T_WORK/bbad.json" "docker://$B/rrt/bb:plain"
  fails_naming "^rootlessrt: pull: docker://$B/rrt/bb:plain: registry $B: the token server http://$B/token refused the credentials from $T_WORK/bbad.json$" \
    "bearer auth, a wrong password: one clear error naming the token server and the file"
  printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$B" "$(printf alice:s3cret | base64)" >"$T_WORK/bgood.json"
  run drun --tls-verify=false --authfile "$T_WORK/bgood.json" "docker://$B/rrt/bb:plain"
  is "$rc:$out" "0:plain" "bearer auth: a token from the token endpoint with the right password"
else
  fail "the bearer-token stand-in did not start" "$(cat "$T_WORK/bearer.log")"
fi

# ---------------------------------------------------------------- a corrupted blob

read -r -a bad_layers <<<"$(layers_of bad)"
top=${bad_layers[-1]}
read -r -a bad_diffs <<<"$(diffs_of bad)"
topd=${bad_diffs[-1]}
drop_layer "$topd"
data=$T_WORK/data/docker/registry/v2/blobs/sha256/${top:0:2}/$top/data
# The last byte is tar padding: the tar still reads, only its digest tells.
printf '\001' | dd of="$data" bs=1 seek=$(($(stat -c %s "$data") - 1)) conv=notrunc 2>/dev/null
run drun --tls-verify=false "docker://$R/rrt/bb:bad"
fails_naming "^rootlessrt: run: docker://$R/rrt/bb:bad: blob sha256:$top: digest mismatch: the registry sent sha256:[0-9a-f]{64}$" \
  "a corrupted blob: the digest mismatch names the blob, in one line"
is "$([ -e "$STORE/layers/sha256/$topd" ] && echo kept):$(tmp_left)" ":" "... and nothing of it is in the store"

# ---------------------------------------------------------------- interrupted transfers

read -r -a big_layers <<<"$(layers_of big)"
bigl=${big_layers[-1]}
read -r -a big_diffs <<<"$(diffs_of big)"
bigd=${big_diffs[-1]}
partial() { # the big layer half unpacked as it streams in: more than 256 KiB of its file
  local f
  for f in "$STORE"/tmp/*-"${bigd:0:12}"/big.bin; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 262144 ] && return 0
  done
  return 1
}
# The transfer is slowed down (1 MiB/s) so that it is surely under way when the kill comes.
ROOTLESSRT_PULL_MAX_RATE=1048576 rrt_bg "$T_WORK/bg.out" pull --storage "$STORE" --tls-verify=false "docker://$R/rrt/bb:big"
pull_pid=$RRT_BG_PID
if wait_until 30 partial; then
  kill -9 "$MAIN_PID"
  wait_pid "$pull_pid" 60
  prc=$?
  is "$prc" 1 "the registry killed mid-layer: the pull fails"
  like "$(cat "$T_WORK/bg.out")" "^rootlessrt: pull: docker://$R/rrt/bb:big: blob sha256:$bigl: interrupted after [0-9]+ of [0-9]+ bytes: .*\(the bytes received are kept: the next pull resumes from there\)$" \
    "... with an error naming the blob and how far it got"
  got_n=$(sed -n 's/.*interrupted after \([0-9]*\) of.*/\1/p' "$T_WORK/bg.out")
  is "$([ -e "$STORE/layers/sha256/$bigd" ] && echo kept):$(tmp_left | sed 's|.*/||'):$(stat -c %s "$STORE/tmp/partial-sha256-$bigl" 2>/dev/null)" \
    ":partial-sha256-$bigl:$got_n" "... nothing half-unpacked is kept, only the bytes received, under the blob's digest"
else
  fail "the big layer's download never started" "$(cat "$T_WORK/bg.out")"
fi
start_registry reg "$PORT"
run drun --tls-verify=false "docker://$R/rrt/bb:big"
is "$rc:$out:$(tmp_left)" "0:big:" "after a restart of the registry the next pull resumes the layer, and tmp/ is empty"

drop_layer "$bigd"
ROOTLESSRT_PULL_MAX_RATE=1048576 rrt_bg "$T_WORK/bg.out" pull --storage "$STORE" --tls-verify=false "docker://$R/rrt/bb:big"
pull_pid=$RRT_BG_PID
if wait_until 30 partial; then
  ok "the registry client of a pull under way is found by this store's --partials (MY_PULLS)" \
    pgrep -u "$(id -u)" -f -- "$MY_PULLS"
  kill -9 "$pull_pid"
  wait "$pull_pid" 2>/dev/null
  # The registry client dies with the runtime (PDEATHSIG): nothing writes the partial any more.
  wait_until 10 sh -c '! pgrep -u "$(id -u)" -f -- "$1"' sh "$MY_PULLS" || fail "the registry client outlived the killed pull"
  run pull --tls-verify=false "docker://$R/rrt/bb:big"
  is "$rc:$err:$(tmp_left)" "0::" "a pull killed mid-layer: the next one removes its leftover and completes"
  ok "... with the layer in the store" test -d "$STORE/layers/sha256/$bigd"
else
  fail "the big layer's download never started" "$(cat "$T_WORK/bg.out")"
fi

# ---------------------------------------------------------------- resumed layers (HTTP Range)

# A proxy in front of the registry. $T_WORK/proxy.mode says what it does to blob HEX: "cut HEX N"
# (the first GET of it stops after N bytes of its body, then the mode is cleared), "norange HEX"
# (the Range header is dropped: the registry answers 200), "416 HEX" (a GET with Range is
# answered 416). Every blob GET is logged: "HEX range=RANGE status=STATUS sent=BYTES".
: >"$T_WORK/proxy.mode"
: >"$T_WORK/proxy.log"
"$PY" - "$PORT" "$T_WORK/proxy.port" "$T_WORK/proxy.mode" "$T_WORK/proxy.log" >"$T_WORK/proxy.err" 2>&1 <<'EOF' &
import http.client, http.server, os, socket, sys
up, portfile, modefile, logfile = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        mode = open(modefile).read().split()
        hexd = self.path.rsplit("/blobs/sha256:", 1)[1] if "/blobs/sha256:" in self.path else None
        mine = hexd is not None and len(mode) > 1 and mode[1] == hexd
        rng = self.headers.get("Range", "-")
        hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        if mine and mode[0] == "416" and rng != "-":
            self.send_response(416); self.send_header("Content-Length", "0"); self.end_headers()
            return self.log(hexd, rng, 416, 0)
        if mine and mode[0] == "norange":
            hdrs.pop("Range", None)
        c = http.client.HTTPConnection("127.0.0.1", up)
        c.request("GET", self.path, headers=hdrs)
        r = c.getresponse()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("connection", "transfer-encoding", "server", "date"):
                self.send_header(k, v)
        self.end_headers()
        limit = int(mode[2]) if mine and mode[0] == "cut" else None
        sent = 0
        while True:
            chunk = r.read(65536)
            if limit is not None and sent + len(chunk) >= limit:
                chunk = chunk[:limit - sent]
            if not chunk:
                break
            self.wfile.write(chunk)
            sent += len(chunk)
            if sent == limit:
                break
        if hexd is not None:
            self.log(hexd, rng, r.status, sent)
        if limit is not None and sent == limit:
            open(modefile, "w").close()
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
    def log(self, hexd, rng, status, sent):
        with open(logfile, "a") as f:
            f.write("%s range=%s status=%d sent=%d\n" % (hexd, rng, status, sent))
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(portfile + ".tmp", "w").write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
EOF
REGS+=("$!")
# blob_size HEX: its size in the big image's manifest.
blob_size() {
  curl -s -H 'Accept: application/vnd.oci.image.manifest.v1+json' "http://$R/v2/rrt/bb/manifests/big" |
    jq -r --arg d "sha256:$1" '[.layers[] | select(.digest == $d) | .size][0]'
}
partial_of() { echo "$STORE/tmp/partial-sha256-$1"; }
plog() { grep "^$1 " "$T_WORK/proxy.log"; }
big_sum=$(cat "$T_WORK/big.sha256")
# cut_big N: a pull through the proxy whose big layer is cut at N bytes (the partial is then N).
# Once in about a dozen full CI runs the cut did not take (the pull after it found the layer in
# the store); what happened is not known yet, so it is shown, and the cut is made once more.
cut_big() {
  local try
  for try in 1 2; do
    drop_layer "$bigd"
    echo "cut $bigl $1" >"$T_WORK/proxy.mode"
    run pull --tls-verify=false "docker://$P/rrt/bb:big"
    [ "$(stat -c %s "$(partial_of "$bigl")" 2>/dev/null)" = "$1" ] && return 0
    diag "cut_big $1, try $try: the pull exited $rc, stderr: $err" \
      "layer in the store: $([ -e "$STORE/layers/sha256/$bigd" ] && echo yes || echo no); tmp/: $(tmp_left)" \
      "proxy mode now: $(cat "$T_WORK/proxy.mode"); proxy log: $(tail -n 4 "$T_WORK/proxy.log")"
  done
}
# big_runs NAME: the big image through the proxy; its big.bin is what the test wrote.
big_runs() {
  run drun --tls-verify=false "docker://$P/rrt/bb:big" sha256sum /big.bin
  is "$rc:${out%% *}:$(tmp_left)" "0:$big_sum:" "$1"
}
if wait_until 20 test -s "$T_WORK/proxy.port"; then
  P=127.0.0.1:$(cat "$T_WORK/proxy.port")
  bigsz=$(blob_size "$bigl")
  N=3000000
  cut_big "$N"
  fails_naming "^rootlessrt: pull: docker://$P/rrt/bb:big: blob sha256:$bigl: interrupted after $N of $bigsz bytes: .*\(the bytes received are kept: the next pull resumes from there\)$" \
    "a registry that cuts a layer at $N bytes: the pull fails naming the blob and how far it got"
  is "$(stat -c %s "$(partial_of "$bigl")" 2>/dev/null)" "$N" "... and keeps those $N bytes in tmp/, named by the blob's digest"
  run rrt store --storage "$STORE" ls
  has_line "$out" "^partial +sha256:$bigl +2\.9 MiB$" "store ls shows the partial download and its size"
  run pull --tls-verify=false "docker://$R/rrt/bb:plain"
  ok "... which a pull of another image leaves alone" test -f "$(partial_of "$bigl")"
  : >"$T_WORK/proxy.log"
  big_runs "the next pull resumes it: the image runs with the right content, tmp/ is empty"
  is "$(plog "$bigl")" "$bigl range=bytes=$N- status=206 sent=$((bigsz - N))" \
    "... having asked Range: bytes=$N- and received only the other $((bigsz - N)) bytes"

  cut_big "$N"
  echo "norange $bigl" >"$T_WORK/proxy.mode"
  : >"$T_WORK/proxy.log"
  big_runs "a registry that ignores Range: the layer is fetched again from its first byte and runs"
  is "$(plog "$bigl")" "$bigl range=bytes=$N- status=200 sent=$bigsz" "... from the 200 answer to the Range request"

  cut_big "$N"
  echo "416 $bigl" >"$T_WORK/proxy.mode"
  : >"$T_WORK/proxy.log"
  big_runs "a registry that answers 416: the pull starts over cleanly and runs"
  is "$(plog "$bigl" | tr '\n' ';')" "$bigl range=bytes=$N- status=416 sent=0;$bigl range=- status=200 sent=$bigsz;" \
    "... asking for all of the layer after the 416"

  cut_big "$N"
  : >"$T_WORK/proxy.mode"
  # One byte of the kept part changed (inverted: writing a fixed byte left it as it was once in
  # 256 runs, the layer's bytes being random): only the digest over all of it can tell.
  "$PY" -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(1000000); b = f.read(1); f.seek(1000000); f.write(bytes([b[0] ^ 0xff]))' "$(partial_of "$bigl")" ||
    diag "the partial $(partial_of "$bigl") could not be changed"
  run pull --tls-verify=false "docker://$P/rrt/bb:big"
  fails_naming "^rootlessrt: pull: docker://$P/rrt/bb:big: blob sha256:$bigl: digest mismatch after resuming a partial download at byte $N: the registry and the kept bytes make sha256:[0-9a-f]{64}; the partial download $(partial_of "$bigl") is discarded \(the next pull fetches all of it\)$" \
    "a kept partial download whose digest ends wrong: a clear error"
  is "$([ -e "$STORE/layers/sha256/$bigd" ] && echo kept):$(tmp_left)" ":" "... the partial is discarded and nothing is kept"
  : >"$T_WORK/proxy.log"
  big_runs "... and the next pull fetches the layer whole and runs"
  is "$(plog "$bigl")" "$bigl range=- status=200 sent=$bigsz" "... without a Range"

  cut_big "$N"
  touch -d '2 days ago' "$(partial_of "$bigl")"
  run pull --tls-verify=false "docker://$R/rrt/bb:plain"
  is "$rc:$(tmp_left)" "0:" "a partial download older than 24 hours is removed by the next pull"

  # A pull killed at 8 points of its transfer (8 MiB/s: the big layer takes about 3 s), each
  # followed by one that resumes every layer it had kept: Range from the partial's size, only
  # the rest sent; the image then runs with the right content and tmp/ is empty.
  sweep_bad="" sweep_kept=""
  for d in 0.3 0.9 1.3 1.7 2.1 2.5 2.9 3.3; do
    drop_layers
    ROOTLESSRT_PULL_MAX_RATE=8388608 rrt_bg "$T_WORK/bg.out" pull --storage "$STORE" --tls-verify=false "docker://$P/rrt/bb:big"
    sleep "$d"
    kill -9 "$RRT_BG_PID"
    wait "$RRT_BG_PID" 2>/dev/null
    wait_until 10 sh -c '! pgrep -u "$(id -u)" -f -- "$1"' sh "$MY_PULLS" || sweep_bad+="$d: the client outlived the pull; "
    want=""
    for f in "$STORE"/tmp/partial-sha256-*; do
      [ -s "$f" ] || continue
      h=${f##*partial-sha256-} n=$(stat -c %s "$f")
      want+="$h range=bytes=$n- status=206 sent=$(($(blob_size "$h") - n));"
      sweep_kept+="${h:0:12}@$n "
    done
    : >"$T_WORK/proxy.log"
    run drun --tls-verify=false "docker://$P/rrt/bb:big" sha256sum /big.bin
    [ "$rc:${out%% *}:$(tmp_left)" = "0:$big_sum:" ] || sweep_bad+="$d: $rc:$out:$err:$(tmp_left); "
    got=$(grep "range=bytes=" "$T_WORK/proxy.log" | tr '\n' ';')
    [ "$got" = "$want" ] || sweep_bad+="$d: Range asked: '$got', expected '$want'; "
    sweep_kept+="(after ${d}s); "
  done
  is "$sweep_bad" "" "a pull killed -9 at 8 points: each next pull resumes what was kept, runs the right content, leaves tmp/ empty"
  diag "partial downloads resumed (layer@bytes): $sweep_kept"
  like "$sweep_kept" "@[0-9]+" "... and at least one of those kills left a partial download to resume"

  # Two pulls of the same image at once: one keeps the partial downloads (their lock), the other
  # streams without; both complete, whichever commits a layer second drops its copy.
  drop_layers
  t0=$SECONDS
  rrt_bg "$T_WORK/c1.out" pull --storage "$STORE" --tls-verify=false "docker://$P/rrt/bb:big"
  c1=$RRT_BG_PID
  rrt_bg "$T_WORK/c2.out" pull --storage "$STORE" --tls-verify=false "docker://$P/rrt/bb:big"
  c2=$RRT_BG_PID
  wait "$c1"
  s1=$?
  wait "$c2"
  s2=$?
  is "$s1:$s2:$(cat "$T_WORK/c1.out" "$T_WORK/c2.out"):$(tmp_left)" "0:0::" \
    "two pulls of one image at once: both complete, tmp/ is empty"
  diag "the two pulls took $((SECONDS - t0)) s"
else
  fail "the proxy did not start" "$(cat "$T_WORK/proxy.err")"
  skip "no proxy" 17
fi

# ---------------------------------------------------------------- a disk that fills

if [ -n "${RRT_ROOT_SETUP:-}" ] && [ -r "$RRT_ROOT_SETUP/env" ]; then
  # shellcheck source=/dev/null
  source "$RRT_ROOT_SETUP/env"
  SMALL=$FULL_FS/store # 8 MiB (root-setup/t-registry.sh): the 24 MiB layer cannot fit
  # FULL_RUNS times (RRT_REGISTRY_FULL_RUNS for root-setup/t-registry.sh): the error used to be
  # now and then the import's "not a tar" of a layer whose FIFO it read before the client had
  # opened it, instead of the unpack's ENOSPC.
  full_bad="" full_left="" full_ok=0
  full_re="^rootlessrt: run: docker://$R/rrt/bb:big: unpack into the store $SMALL: [^\"]*sha256:${bigl}[^\"]*No space left on device\$"
  small_clear() {
    local l
    for l in "$SMALL"/layers/sha256/*; do
      [ -e "$l" ] && rrt store --storage "$SMALL" rm --force "sha256:$(basename "$l")" >/dev/null 2>&1
    done
  }
  for ((k = 1; k <= ${FULL_RUNS:-1}; k++)); do
    small_clear # each run as the first: all three layers streamed into an empty store
    run rrt run --rm --storage "$SMALL" --tls-verify=false "docker://$R/rrt/bb:big"
    # Under ASan, LeakSanitizer's notes ("==PID==Unable to get registers from thread ...", the
    # client's curl threads ending) are not the runtime's output.
    [ "${RRT_ASAN:-0}" = 1 ] && err=$(grep -v '^==[0-9]*==' <<<"$err")
    if [ "$rc" = 1 ] && [ "$(echo "$err" | wc -l)" = 1 ] && [[ $err =~ $full_re ]]; then
      full_ok=$((full_ok + 1))
    else
      full_bad+="run $k: status $rc: $err"$'\n'
    fi
    # The layers before it arrived whole and verified: those stay, as any unpacked layer does.
    left="$([ -e "$SMALL/layers/sha256/$bigd" ] && echo kept):$(find "$SMALL/tmp" -mindepth 1 -maxdepth 1 2>/dev/null)"
    [ "$left" = ":" ] || full_left+="run $k: $left"$'\n'
  done
  is "$full_ok/${FULL_RUNS:-1}${full_bad:+ $full_bad}" "${FULL_RUNS:-1}/${FULL_RUNS:-1}" \
    "a disk that fills during a pull: one error naming the layer, ENOSPC and the store, every time"
  is "$full_left" "" "... and nothing of that layer is left on that disk"
  run rrt run --rm --storage "$SMALL" --tls-verify=false "docker://$R/rrt/bb:plain"
  is "$rc:$out" "0:plain" "... whose room is back: an image that fits pulls and runs there"
  small_clear
else
  skip "no small filesystem to fill: ${RRT_ROOT_SETUP_SKIP:-the tests do not run as root, so the harness cannot mount one (root-setup/t-registry.sh)}" 3
fi

# ---------------------------------------------------------------- kept by name, run offline

run pull --tls-verify=false "docker://$R/rrt/bb:plain"
run rrt images --storage "$STORE"
has_line "$out" "^${R//./\\.}/rrt/bb +plain +[0-9a-f]{12} " "images: a pull is recorded by its name"
kill -9 "$REG_PID" 2>/dev/null
wait "$REG_PID" 2>/dev/null
run drun "$R/rrt/bb:plain"
is "$rc:$out" "0:plain" "run NAME with the registry gone: the stored image (podman's --pull=missing)"
run drun --pull=newer "$R/rrt/bb:plain"
is "$rc:$out" "0:plain" "--pull=newer with the registry gone: the stored image..."
like "$err" "warning: run: .*the registry could not be asked" "... saying so"
run drun --tls-verify=false "docker://$R/rrt/bb:plain"
fails_naming "^rootlessrt: run: docker://${R//./\\.}/rrt/bb:plain: " \
  "docker://REF names its registry: asked each time (here gone: refused)"
run drun --pull=missing --tls-verify=false "docker://$R/rrt/bb:plain"
is "$rc:$out" "0:plain" "docker://REF --pull=missing: the stored image"

done_testing
