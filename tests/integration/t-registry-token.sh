#!/bin/bash
# t-registry-token.sh: bearer-token auth against a real registry. Debian's docker-registry runs
# with `auth: token`, so it verifies every token itself (an RS256 JWT whose x5c certificate must
# chain to its rootcertbundle, with the right issuer, audience, expiry and access claims). The
# token server is a small one written here, which signs with `openssl dgst`: alice (right
# password) gets pull and push, bob gets a valid token that grants nothing, a wrong password
# gets a 401. skopeo pushes through the same flow first, as a second client.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "${TESTS_DIR:-$(dirname "$0")/..}/lib.sh"

for c in docker-registry skopeo openssl; do
  if ! command -v "$c" >/dev/null 2>&1; then
    skip "no $c here (contrib/install-deps.sh as root installs docker-registry, skopeo, openssl)" 9
    done_testing
  fi
done

STORE=$T_WORK/store
PIDS=()
tok_cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -d "$STORE" ] && unshare -r --map-auto rm -rf "$STORE" 2>/dev/null
  _cleanup
}
trap tok_cleanup EXIT
export CONTAINERS_REGISTRIES_CONF=$T_WORK/registries.conf
: >"$CONTAINERS_REGISTRIES_CONF"

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T_WORK/key.pem" -out "$T_WORK/cert.pem" \
  -days 2 -subj /CN=rrt-token-issuer >"$T_WORK/openssl.log" 2>&1 ||
  bail_out "openssl cannot make the signing certificate: $(cat "$T_WORK/openssl.log")"

# The token server: GET /token?service=S&scope=repository:NAME:ACTIONS with basic auth.
"$PY" - "$T_WORK" >"$T_WORK/token.log" 2>&1 <<'EOF' &
import base64, http.server, json, os, subprocess, sys, time
from urllib.parse import parse_qs, urlparse
work = sys.argv[1]
der = subprocess.run(["openssl", "x509", "-in", work + "/cert.pem", "-outform", "DER"],
                     capture_output=True, check=True).stdout
def b64(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def basic(u, p): return "Basic " + base64.b64encode(("%s:%s" % (u, p)).encode()).decode()
USERS = {basic("alice", "s3cret"): ("alice", True), basic("bob", "bobpw"): ("bob", False)}
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *a): sys.stderr.write("GET %s\n" % self.path)
    def do_GET(self):
        u = urlparse(self.path)
        who = USERS.get(self.headers.get("Authorization", ""))
        if u.path != "/token" or who is None:
            self.send_response(401); self.send_header("Content-Length", "0"); self.end_headers()
            return
        q = parse_qs(u.query)
        access = []
        for s in q.get("scope", []):
            kind, name, acts = s.rsplit(":", 2)
            access.append({"type": kind, "name": name, "actions": acts.split(",") if who[1] else []})
        now = int(time.time())
        head = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(der).decode()]}
        claims = {"iss": "rrt-issuer", "sub": who[0], "aud": q.get("service", [""])[0],
                  "exp": now + 300, "nbf": now - 10, "iat": now, "jti": os.urandom(8).hex(),
                  "access": access}
        signing = b64(json.dumps(head).encode()) + "." + b64(json.dumps(claims).encode())
        sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", work + "/key.pem"],
                             input=signing.encode(), capture_output=True, check=True).stdout
        body = json.dumps({"token": signing + "." + b64(sig), "expires_in": 300}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(work + "/token.port.tmp", "w").write(str(srv.server_address[1]))
os.rename(work + "/token.port.tmp", work + "/token.port")
srv.serve_forever()
EOF
PIDS+=("$!")
wait_until 20 test -s "$T_WORK/token.port" || bail_out "the token server did not start: $(cat "$T_WORK/token.log")"
TOKEN_URL=http://127.0.0.1:$(cat "$T_WORK/token.port")/token

PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
R=127.0.0.1:$PORT
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
  addr: $R
auth:
  token:
    realm: $TOKEN_URL
    service: rrt-registry
    issuer: rrt-issuer
    rootcertbundle: $T_WORK/cert.pem
EOF
env -u REGISTRY_AUTH_FILE docker-registry serve "$T_WORK/reg.yml" >"$T_WORK/reg.log" 2>&1 &
PIDS+=("$!")
wait_until 20 curl -s -o /dev/null "http://$R/v2/" || bail_out "docker-registry did not start: $(cat "$T_WORK/reg.log")"
run curl -s -D - -o /dev/null "http://$R/v2/"
has_line "$out" "^Www-Authenticate: Bearer realm=\"$TOKEN_URL\",service=\"rrt-registry\"" \
  "the registry asks for a bearer token from the token server"

# One image: busybox and a marker, pushed by skopeo through the token flow as alice.
"$PY" - "$T_WORK/layout" <<'EOF' || bail_out "cannot build the test image"
import hashlib, io, json, os, sys, tarfile
out = sys.argv[1]
os.makedirs(out + "/blobs/sha256")
def blob(data, mt):
    d = hashlib.sha256(data).hexdigest()
    open(out + "/blobs/sha256/" + d, "wb").write(data)
    return {"mediaType": mt, "digest": "sha256:" + d, "size": len(data)}
b = io.BytesIO()
with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
    data = open("/bin/busybox", "rb").read()
    i = tarfile.TarInfo("bin/busybox"); i.size = len(data); i.mode = 0o755; t.addfile(i, io.BytesIO(data))
    i = tarfile.TarInfo("marker"); i.size = 6; i.mode = 0o644; t.addfile(i, io.BytesIO(b"token\n"))
layer = blob(b.getvalue(), "application/vnd.oci.image.layer.v1.tar")
cfg = blob(json.dumps({"architecture": "amd64", "os": "linux",
    "config": {"Cmd": ["/bin/busybox", "cat", "/marker"]},
    "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]}}).encode(),
    "application/vnd.oci.image.config.v1+json")
m = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": cfg, "layers": [layer]}).encode(), "application/vnd.oci.image.manifest.v1+json")
m["annotations"] = {"org.opencontainers.image.ref.name": "t"}
json.dump({"schemaVersion": 2, "manifests": [m]}, open(out + "/index.json", "w"))
json.dump({"imageLayoutVersion": "1.0.0"}, open(out + "/oci-layout", "w"))
EOF
run skopeo copy -q --dest-tls-verify=false --dest-creds alice:s3cret "oci:$T_WORK/layout:t" "docker://$R/rrt/tok:t"
is "$rc" 0 "skopeo pushes through the token flow (the registry accepts the server's tokens)"
[ "$rc" = 0 ] || diag "$out" "$err"

auth_file() { # auth_file NAME USER:PASSWORD
  printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$R" "$(printf %s "$2" | base64)" >"$T_WORK/$1.json"
}
auth_file good alice:s3cret
auth_file wrong alice:nope
auth_file bob bob:bobpw
echo '{"auths": {}}' >"$T_WORK/none.json"
store_empty() { [ -z "$(find "$STORE/layers" "$STORE/tmp" -mindepth 2 2>/dev/null)" ]; }
IMG=docker://$R/rrt/tok:t

run rrt pull --storage "$STORE" --tls-verify=false --authfile "$T_WORK/none.json" "$IMG"
fails_naming "^rootlessrt: pull: $IMG: registry $R: authentication required: no credentials for it in $T_WORK/none.json$" \
  "no credentials: one line naming the registry and the file looked in"
run rrt pull --storage "$STORE" --tls-verify=false --authfile "$T_WORK/wrong.json" "$IMG"
fails_naming "^rootlessrt: pull: $IMG: registry $R: the token server $TOKEN_URL refused the credentials from $T_WORK/wrong.json$" \
  "a wrong password: one line naming the token server and the file"
run rrt pull --storage "$STORE" --tls-verify=false --authfile "$T_WORK/bob.json" "$IMG"
fails_naming "^rootlessrt: pull: $IMG: registry $R: authentication failed with the credentials for $R in $T_WORK/bob.json$" \
  "a token that grants no pull (the registry refuses it): one line naming the credentials"
ok "nothing is left in the store after the refusals" store_empty

run rrt run --rm --storage "$STORE" --tls-verify=false --authfile "$T_WORK/good.json" "$IMG"
is "$rc:$out" "0:token" "the right password: the registry takes the signed token and the image runs"
like "$(grep -c '^GET /token' "$T_WORK/token.log")" '^[1-9]' "the token came from the token server"
DIGEST=$(curl -s -o /dev/null -w '%header{docker-content-digest}' \
  -H "Authorization: Bearer $(curl -s -u alice:s3cret "$TOKEN_URL?service=rrt-registry&scope=repository:rrt/tok:pull" | jq -r .token)" \
  -H 'Accept: application/vnd.oci.image.manifest.v1+json' "http://$R/v2/rrt/tok/manifests/t")
run rrt run --rm --storage "$STORE" --tls-verify=false --authfile "$T_WORK/good.json" "docker://$R/rrt/tok@$DIGEST"
is "$rc:$out" "0:token" "by digest, through the same token flow"

done_testing
