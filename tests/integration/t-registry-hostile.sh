#!/bin/bash
# t-registry-hostile.sh: a registry, a token server and an image that try to reach the terminal,
# the headers of later requests or the image index with bytes of their choosing (issue 27 item 3).
# A Python proxy stands in front of a real registry (Debian's docker-registry, images pushed by
# skopeo) for rrt/bb, serves its own images from a local OCI layout for local/bb and tok/bb
# (tok/: behind a bearer token), does to them what $T_WORK/mode.json says, and logs every request
# with all of its header lines. Checked: a registry's error message and an index's platforms with
# ESC/BEL/newlines come out escaped in one line, in stderr and in the json log; an image config's
# os/architecture likewise; a token outside RFC 6750's b64token is refused naming the token server
# and never sent; a crafted Content-Type cannot change the index.json a pull writes; a reference
# with control bytes is refused before any request.
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2016
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

for c in docker-registry skopeo jq; do
  if ! command -v "$c" >/dev/null 2>&1; then
    skip "no $c here (apt-get install docker-registry skopeo jq: contrib/install-deps.sh as root)"
    done_testing
  fi
done

STORE=$T_WORK/store
PIDS=()
hostile_cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -d "$STORE" ] && unshare -r --map-auto rm -rf "$STORE" 2>/dev/null
  _cleanup
}
trap hostile_cleanup EXIT
export CONTAINERS_REGISTRIES_CONF=$T_WORK/registries.conf
export REGISTRY_AUTH_FILE=$T_WORK/no-auth.json
: >"$CONTAINERS_REGISTRIES_CONF"

# The images, in one OCI layout: plain (busybox + /marker), evilos and evilarch (configs whose
# os and architecture/variant hold escape sequences), evilindex (an index whose platforms do).
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
base = [(d, None, 0o755, None) for d in ("bin", "dev", "etc", "proc", "sys", "tmp")]
base.append(("bin/busybox", open("/bin/busybox", "rb").read(), 0o755, None))
base += [("bin/" + a, None, 0o777, "busybox") for a in ("sh", "cat")]
base_l = layer(base)
def image(extra, **plat):
    ls = [base_l] + [layer(e) for e in extra]
    c = {"architecture": "amd64", "os": "linux", "config": {"Env": ["PATH=/bin"], "Cmd": ["cat", "/marker"]},
         "rootfs": {"type": "layers", "diff_ids": [l["digest"] for l in ls]}}
    c.update(plat)
    cfg = blob(json.dumps(c).encode())
    cfg["mediaType"] = "application/vnd.oci.image.config.v1+json"
    m = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": cfg, "layers": ls}).encode())
    m["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    return m
refs = []
def tag(desc, name):
    d = dict(desc); d["annotations"] = {"org.opencontainers.image.ref.name": name}; refs.append(d)
marker = [("marker", b"plain\n", 0o644, None)]
plain = image([marker])
tag(plain, "plain")
tag(image([marker], os="\x1b]0;owned\x07plan9\x1b[2J"), "evilos")
tag(image([marker], architecture="arm\x1b[31m", variant="v9\x07\n"), "evilarch")
m = dict(plain); m["platform"] = {"os": "linux\x1b[2J", "architecture": "s390x\x07\nrootlessrt: forged"}
idx = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
    "manifests": [m]}).encode())
idx["mediaType"] = "application/vnd.oci.image.index.v1+json"
tag(idx, "evilindex")
json.dump({"schemaVersion": 2, "manifests": refs}, open(out + "/index.json", "w"))
json.dump({"imageLayoutVersion": "1.0.0"}, open(out + "/oci-layout", "w"))
EOF

# docker-registry on 127.0.0.1 with plain pushed as rrt/bb:plain.
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$T_WORK/reg.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $T_WORK/data
http:
  addr: 127.0.0.1:$PORT
EOF
env -u REGISTRY_AUTH_FILE docker-registry serve "$T_WORK/reg.yml" >"$T_WORK/reg.log" 2>&1 &
PIDS+=("$!")
wait_until 20 curl -s -o /dev/null "http://127.0.0.1:$PORT/v2/" ||
  bail_out "docker-registry did not start: $(cat "$T_WORK/reg.log")"
skopeo copy -q --dest-tls-verify=false "oci:$T_WORK/layout:plain" "docker://127.0.0.1:$PORT/rrt/bb:plain" \
  >"$T_WORK/skopeo.log" 2>&1 || bail_out "skopeo copy: $(cat "$T_WORK/skopeo.log")"

# The proxy. mode.json: {"ctype": {MANIFEST-DIGEST: CONTENT-TYPE}, "say": MESSAGE (a 404 for
# tag nosuch, with this error message), "token": TOKEN (what /token gives, for tok/)}. Every
# request is logged in requests.log as one JSON line: path and header lines as received.
echo '{}' >"$T_WORK/mode.json"
: >"$T_WORK/requests.log"
"$PY" - "$PORT" "$T_WORK" >"$T_WORK/proxy.err" 2>&1 <<'EOF' &
import http.client, http.server, json, os, sys
up, work = int(sys.argv[1]), sys.argv[2]
layout = work + "/layout"
tags = {m["annotations"]["org.opencontainers.image.ref.name"]: m
        for m in json.load(open(layout + "/index.json"))["manifests"]}
def local(name):
    try:
        return open(layout + "/blobs/sha256/" + name, "rb").read()
    except OSError:
        return None
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, code, body=b"", ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype); self.send_header("Content-Length", str(len(body)))
        for k, v in extra: self.send_header(k, v)
        self.end_headers(); self.wfile.write(body)
    def do_GET(self):
        mode = json.load(open(work + "/mode.json"))
        with open(work + "/requests.log", "a") as f:
            f.write(json.dumps({"path": self.path, "headers": self.headers.as_string()}) + "\n")
        port = self.server.server_address[1]
        if self.path.startswith("/token"):
            return self.send(200, json.dumps({"token": mode.get("token", "")}).encode())
        if self.path.startswith("/v2/tok/"):
            if self.headers.get("Authorization") != "Bearer " + mode.get("token", ""):
                ch = 'Bearer realm="http://127.0.0.1:%d/token",service="hostile"' % port
                return self.send(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"token"}]}',
                                 extra=[("WWW-Authenticate", ch)])
            self.path = self.path.replace("/v2/tok/", "/v2/local/", 1)
        if self.path.startswith("/v2/local/bb/"):
            kind, ref = self.path[len("/v2/local/bb/"):].split("/", 1)
            if kind == "manifests" and ref == "nosuch" and "say" in mode:
                body = json.dumps({"errors": [{"code": "MANIFEST_UNKNOWN", "message": mode["say"]}]})
                return self.send(404, body.encode())
            d = tags[ref] if kind == "manifests" and ref in tags else {"digest": ref, "mediaType": "application/octet-stream"}
            data = local(d["digest"][7:]) if d["digest"].startswith("sha256:") else None
            if data is None:
                return self.send(404, b'{"errors":[{"code":"BLOB_UNKNOWN","message":"unknown"}]}')
            return self.send(200, data, d["mediaType"], [("Docker-Content-Digest", d["digest"])])
        c = http.client.HTTPConnection("127.0.0.1", up)
        c.request("GET", self.path, headers={k: v for k, v in self.headers.items()
                                             if k.lower() not in ("host", "connection")})
        r = c.getresponse()
        body = r.read()
        hdrs = [(k, v) for k, v in r.getheaders()
                if k.lower() not in ("connection", "transfer-encoding", "server", "date", "content-length")]
        digest = r.getheader("Docker-Content-Digest", "")
        if "/manifests/" in self.path and digest in mode.get("ctype", {}):
            hdrs = [(k, v) for k, v in hdrs if k.lower() != "content-type"]
            hdrs.append(("Content-Type", mode["ctype"][digest]))
        self.send_response(r.status)
        for k, v in hdrs: self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(work + "/proxy.port.tmp", "w").write(str(srv.server_address[1]))
os.rename(work + "/proxy.port.tmp", work + "/proxy.port")
srv.serve_forever()
EOF
PIDS+=("$!")
wait_until 20 test -s "$T_WORK/proxy.port" || bail_out "the proxy did not start: $(cat "$T_WORK/proxy.err")"
P=127.0.0.1:$(cat "$T_WORK/proxy.port")

pull() { rrt pull --storage "$STORE" --tls-verify=false "$@"; }
mode() { printf '%s\n' "$1" >"$T_WORK/mode.json"; }
# no_raw TEXT NAME: none of the bytes a terminal acts on (ESC, BEL, CR, C1 CSI) is in TEXT, and
# it is one line.
no_raw() {
  if [[ $1 == *[$'\e\a\r\x9b']* ]] || [ "$(printf '%s\n' "$1" | wc -l)" != 1 ]; then
    fail "$2" "got: $(printf '%s' "$1" | od -c | head -n 12)"
  else
    pass "$2"
  fi
}

# ---------------------------------------------------------------- a registry's error message

say=$'\e]0;owned\a\e[2J\e[Hgone\nrootlessrt: forged\r\xc2\x9b31m'
mode "$(jq -cn --arg s "$say" '{say: $s}')"
run pull "docker://$P/local/bb:nosuch"
fails_naming "^rootlessrt: pull: docker://$P/local/bb:nosuch: $P/local/bb:nosuch: no such image or tag in the registry \(\\\\x1b\]0;owned\\\\x07\\\\x1b\[2J\\\\x1b\[Hgone\\\\x0arootlessrt: forged\\\\x0d\\\\xc2\\\\x9b31m\)$" \
  "a registry's error message with ESC, BEL, newline, CR and C1 CSI: shown escaped"
no_raw "$err" "... none of those bytes reaches stderr, and the error is one line"
run rrt --log "$T_WORK/log.json" --log-format json pull --storage "$STORE" --tls-verify=false "docker://$P/local/bb:nosuch"
msg=$(jq -r 'select(.level == "error") | .msg' "$T_WORK/log.json" 2>/dev/null)
like "$msg" 'registry \(\\x1b\]0;owned\\x07\\x1b\[2J\\x1b\[Hgone\\x0arootlessrt: forged\\x0d\\xc2\\x9b31m\)$' \
  "... and the json log's msg escaped the same way"
no_raw "$msg" "... whose msg holds none of those bytes either"

# ---------------------------------------------------------------- an image config's platform

run rrt run --rm --storage "$STORE" "oci:$T_WORK/layout:evilos"
fails_naming '^rootlessrt: run: oci:[^ ]*:evilos: the image is for \\x1b\]0;owned\\x07plan9\\x1b\[2J, this machine is linux$' \
  "an image config's os with escape sequences: shown escaped"
no_raw "$err" "... none of its bytes reaches stderr"
run rrt run --rm --storage "$STORE" "oci:$T_WORK/layout:evilarch"
fails_naming '^rootlessrt: run: oci:[^ ]*:evilarch: the image is for arm\\x1b\[31m/v9\\x07\\x0a, this machine is ' \
  "an image config's architecture and variant with escape sequences: shown escaped"
no_raw "$err" "... in one line, none of their bytes raw"
run pull "docker://$P/local/bb:evilindex"
fails_naming 'no image for linux/amd64 \(the index has: linux\\x1b\[2J/s390x\\x07\\x0arootlessrt: forged\)$' \
  "an index's platforms with escape sequences: listed escaped"
no_raw "$err" "... in one line"

# ---------------------------------------------------------------- bearer tokens

# Tokens outside RFC 6750's b64token: each is refused in one line naming the token server, and
# no request after the token's carries any of it.
tok_bad=""
for t in $'abc\r\nX-Injected: yes' 'abc def' 'abc:def' $'tok\xc3\xa9n' 'abc=def' '=abc' 'abc"' ''; do
  mode "$(jq -cn --arg t "$t" '{token: $t}')"
  : >"$T_WORK/requests.log"
  run pull "docker://$P/tok/bb:plain"
  want="^rootlessrt: pull: docker://$P/tok/bb:plain: registry $P: the token server http://$P/token (gave a token that is not an RFC 6750 b64token|gave no token)"
  [ "$rc" = 1 ] && [[ $err =~ $want ]] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] ||
    tok_bad+="token $(printf %q "$t"): $rc: $err; "
  # Every request to the registry after the token was fetched: none has an Authorization header.
  after=$(jq -r 'select(.path | startswith("/v2/tok/")) | .headers' "$T_WORK/requests.log" | grep -ci '^authorization:\|^x-injected')
  [ "$after" = 0 ] || tok_bad+="token $(printf %q "$t"): $after requests carried it; "
done
is "$tok_bad" "" "8 tokens outside b64token (CR LF, space, ':', non-ASCII, '=' inside or first, '\"', empty): each refused in one line naming the token server, none sent"
ok "... the proxy saw the token requests (the check above looked at real traffic)" \
  grep -q '"path": "/token?' "$T_WORK/requests.log"
mode '{"token": "A-._~+/z09=="}'
: >"$T_WORK/requests.log"
run rrt run --rm --storage "$STORE" --tls-verify=false "docker://$P/tok/bb:plain"
is "$rc:$out" "0:plain" "a token with every b64token character and padding is taken, and the image runs"
ok "... sent as Authorization: Bearer with nothing else on its line" \
  grep -q '"headers": "[^"]*Authorization: Bearer A-._~+/z09==\\n' "$T_WORK/requests.log"

# ---------------------------------------------------------------- a crafted Content-Type

# The manifest pinned by its digest, served as it is but with a Content-Type that, pasted into
# index.json, would close the manifest list on a descriptor of the config blob.
R=127.0.0.1:$PORT
man=$(curl -s -H 'Accept: application/vnd.oci.image.manifest.v1+json' "http://$R/v2/rrt/bb/manifests/plain")
mdig=sha256:$(printf '%s' "$man" | sha256sum | cut -d' ' -f1)
cdig=$(jq -r .config.digest <<<"$man")
csize=$(jq -r .config.size <<<"$man")
ct="application/vnd.oci.image.manifest.v1+json\",\"digest\":\"$cdig\",\"size\":$csize}],\"x\":[{\"y\":\""
mode "$(jq -cn --arg d "$mdig" --arg c "$ct" '{ctype: {($d): $c}}')"
run rrt run --rm --storage "$STORE" --tls-verify=false "docker://$P/rrt/bb@$mdig"
is "$rc:$out" "0:plain" "a crafted Content-Type on a digest-pinned manifest: the import takes the manifest, not the config, and runs"
ok "... the proxy did serve that Content-Type" grep -q "/v2/rrt/bb/manifests/$mdig" "$T_WORK/requests.log"
mode "$(jq -cn --arg d "$mdig" '{ctype: {($d): "application/vnd.oci.image.index.v1+json"}}')"
run pull "docker://$P/rrt/bb@$mdig"
fails_naming "^rootlessrt: pull: docker://$P/rrt/bb@$mdig: manifest $mdig: the registry sent it as application/vnd.oci.image.index.v1\+json, its mediaType says application/vnd.oci.image.manifest.v1\+json$" \
  "a Content-Type that contradicts the manifest's own mediaType: refused, naming both"
mode "$(jq -cn --arg d "$mdig" '{ctype: {($d): "text/html\u001b[2J"}}')"
drop="$(find "$STORE/layers/sha256" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null)"
for l in $drop; do rrt store --storage "$STORE" rm "sha256:$l" >/dev/null 2>&1; done
run rrt run --rm --storage "$STORE" --tls-verify=false "docker://$P/rrt/bb@$mdig"
is "$rc:$out" "0:plain" "an unknown Content-Type: the manifest's own (known) mediaType is used"
mode '{}'

# ---------------------------------------------------------------- references

: >"$T_WORK/requests.log"
bad_ref=""
for ref in $'local/bb:plain\r\nX-Injected: yes' $'local/bb\e]0;x\a:plain' 'local/bb:-dash' 'local/b..b:plain' \
  "local/bb:$(printf 'a%.0s' {1..129})"; do
  run pull "docker://$P/$ref"
  [ "$rc" = 1 ] && [[ $err != *$'\e'* ]] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] &&
    [[ $err =~ (not a tag|not a repository name) ]] || bad_ref+="$(printf %q "$ref"): $rc: $err; "
done
is "$bad_ref" "" "references with CR LF, ESC, a bad tag or repository, a 129-byte tag: one escaped line each"
is "$(wc -l <"$T_WORK/requests.log")" 0 "... refused before any request"
is "$(find "$STORE/tmp" -mindepth 1 -maxdepth 1 2>/dev/null)" "" "... and nothing is left in the store's tmp/"

done_testing
