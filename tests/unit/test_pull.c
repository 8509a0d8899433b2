/* test_pull.c: the registry client's parsers of bytes from outside (pull/): WWW-Authenticate,
 * header lines, Content-Range and the resume decision, the token server's answer, media types
 * and the platform choice, auth.json's base64 and keys, registries.conf and references. Each
 * regression input a fuzzer found is here too. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "../../pull/blob.h"
#include "../../pull/layout.h"
#include "../../pull/manifest.h"
#include "../../pull/pull.h"
#include "../../pull/token.h"
#include "tap.h"

static void challenges(void)
{
  struct challenge c;
  ok(challenge_parse("Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\","
                     "scope=\"repository:library/busybox:pull\"",
                     &c) == 0,
     "Docker Hub's challenge");
  is_str(c.scheme, "Bearer", "... scheme");
  is_str(c.realm, "https://auth.docker.io/token", "... realm");
  is_str(c.service, "registry.docker.io", "... service");
  is_str(c.scope, "repository:library/busybox:pull", "... scope");
  challenge_free(&c);
  ok(challenge_parse("Bearer realm = \"https://r/t\" , service=plain-token", &c) == 0 && c.realm &&
         !strcmp(c.realm, "https://r/t") && c.service && !strcmp(c.service, "plain-token"),
     "spaces around '=' and ',', an unquoted value");
  challenge_free(&c);
  ok(challenge_parse("Bearer xrealm=\"https://evil/\",realm=\"https://good/\"", &c) == 0 &&
         c.realm && !strcmp(c.realm, "https://good/"),
     "a parameter whose name ends in realm is not the realm");
  challenge_free(&c);
  ok(challenge_parse("Bearer realm=\"a\\\"b\\\\c\"", &c) == 0 && c.realm &&
         !strcmp(c.realm, "a\"b\\c"),
     "quoted-pair escapes in a quoted value");
  challenge_free(&c);
  ok(challenge_parse("Bearer realm=\"unterminated", &c) == 0 && !c.realm,
     "an unterminated quoted value is not taken");
  challenge_free(&c);
  ok(challenge_parse("Basic realm=\"Registry Realm\"", &c) == 0 && !strcmp(c.scheme, "Basic"),
     "basic");
  challenge_free(&c);
  ok(challenge_parse("", &c) < 0 && challenge_parse(NULL, &c) < 0 && challenge_parse(" =x", &c) < 0,
     "no scheme: not a challenge");
  challenge_free(&c);
}

static void headers(void)
{
  struct response r = {0};
  const char *lines[] = {"HTTP/1.1 401 Unauthorized\r\n",
                         "content-type: application/json; charset=utf-8\r\n",
                         "Docker-Content-Digest:\tsha256:abc \r\n",
                         "WWW-Authenticate: Bearer realm=\"x\"\r\n",
                         "Content-Range: bytes 5-9/10\r\n",
                         "Content-Typo: no\r\n",
                         "Content-Type\r\n",
                         "\r\n"};
  for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
    http_header_line(&r, lines[i], strlen(lines[i]));
  is_str(r.ctype, "application/json; charset=utf-8", "Content-Type, any case, trimmed");
  is_str(r.digest, "sha256:abc", "Docker-Content-Digest after a tab, trailing space dropped");
  is_str(r.challenge, "Bearer realm=\"x\"", "WWW-Authenticate");
  is_str(r.crange, "bytes 5-9/10", "Content-Range");
  http_header_line(&r, "HTTP/1.1 200 OK\r\n", 17);
  ok(!r.ctype && !r.digest && !r.challenge && !r.crange,
     "a new status line (a redirect) clears them");
  response_free(&r);
  ok(http_b64token("eyJhbGciOi.J9-_~+/x==") && http_b64token("a") && http_b64token("a="),
     "b64token: the RFC 6750 characters, then '='");
  ok(!http_b64token("") && !http_b64token("=") && !http_b64token("a=b") &&
         !http_b64token("a\r\nX: y") && !http_b64token("a b") && !http_b64token("a:b") &&
         !http_b64token("t\xc3\xa9") && !http_b64token(NULL),
     "not b64token: empty, '=' first or inside, CR LF, space, ':', non-ASCII, NULL");
}

static void ranges(void)
{
  uint64_t f, l, t;
  ok(content_range_parse("bytes 3000000-25165823/25165824", &f, &l, &t) == 0 && f == 3000000 &&
         l == 25165823 && t == 25165824,
     "docker-registry's Content-Range");
  ok(content_range_parse("bytes 0-0/*", &f, &l, &t) == 0 && t == RANGE_TOTAL_UNKNOWN,
     "an unknown total");
  ok(content_range_parse("bytes -1-5/10", &f, &l, &t) < 0 &&
         content_range_parse("bytes 5-4/10", &f, &l, &t) < 0 &&
         content_range_parse("bytes 5-10/10", &f, &l, &t) < 0 &&
         content_range_parse("bytes 18446744073709551616-1/2", &f, &l, &t) < 0 &&
         content_range_parse("bytes 1-2/3 ", &f, &l, &t) < 0 &&
         content_range_parse("items 1-2/3", &f, &l, &t) < 0 &&
         content_range_parse("bytes +1-2/3", &f, &l, &t) < 0 &&
         content_range_parse(NULL, &f, &l, &t) < 0,
     "refused: a sign, first > last, last >= total, overflow, trailing bytes, another unit");
  is_int(resume_decide(200, NULL, 0, 10), RESUME_FRESH, "nothing kept: fresh");
  is_int(resume_decide(200, NULL, 5, 10), RESUME_FROM_ZERO, "a 200 to a Range: from zero");
  is_int(resume_decide(206, "bytes 5-9/10", 5, 10), RESUME_CONTINUE, "a 206 from the kept end");
  is_int(resume_decide(206, "bytes 5-9/*", 5, 10), RESUME_CONTINUE, "... total unknown");
  is_int(resume_decide(206, "bytes 4-9/10", 5, 10), RESUME_ASK_AGAIN, "another start: again");
  is_int(resume_decide(206, "bytes 5-8/10", 5, 10), RESUME_ASK_AGAIN, "not to the end: again");
  is_int(resume_decide(206, "bytes 5-9/11", 5, 10), RESUME_ASK_AGAIN, "another total: again");
  is_int(resume_decide(206, NULL, 5, 10), RESUME_ASK_AGAIN, "no Content-Range: again");
}

static void tokens(void)
{
  char *t = NULL;
  const char *a = "{\"token\":\"eyJ0.eXA-_\",\"access_token\":\"other\",\"expires_in\":300}";
  ok(token_of_answer(a, strlen(a), "reg", "https://ts/token", &t) == 0 && t &&
         !strcmp(t, "eyJ0.eXA-_"),
     "token before access_token");
  free(t);
  a = "{\"token\":\"\",\"access_token\":\"abc\"}";
  ok(token_of_answer(a, strlen(a), "reg", "https://ts/token", &t) == 0 && t && !strcmp(t, "abc"),
     "an empty token: access_token");
  free(t);
  a = "{\"token\":\"abc\\r\\nX-Injected: 1\"}";
  ok(token_of_answer(a, strlen(a), "reg", "https://ts/token", &t) < 0 && !t, "CR LF: refused");
  is_str(pull_error(),
         "registry reg: the token server https://ts/token gave a token that is not an RFC 6750 "
         "b64token (letters, digits, -._~+/ then =): refused",
         "... in one line naming the token server");
  a = "{\"token\":\"ab\\u0000cd\"}";
  ok(token_of_answer(a, strlen(a), "reg", "https://ts/token", &t) < 0, "a NUL inside: refused");
  a = "{\"token\":12345}";
  ok(token_of_answer(a, strlen(a), "reg", "https://ts/\x1b[2J", &t) < 0 &&
         strstr(pull_error(), "https://ts/\\x1b[2J gave no token"),
     "a number is no token; the server's name is escaped");
  ok(token_of_answer("[\"a\"]", 5, "reg", "s", &t) < 0 &&
         token_of_answer("", 0, "reg", "s", &t) < 0 && token_of_answer(NULL, 0, "reg", "s", &t) < 0,
     "not an object, empty, none");
}

static json_object *j(const char *s)
{
  return json_tokener_parse(s);
}

static void media_types(void)
{
  json_object *man =
      j("{\"schemaVersion\":2,\"mediaType\":\"" MT_OCI_MANIFEST "\",\"config\":{},\"layers\":[]}");
  json_object *bare = j("{\"schemaVersion\":2,\"config\":{},\"layers\":[]}");
  json_object *idx = j("{\"schemaVersion\":2,\"manifests\":[]}");
  is_str(manifest_media_type(MT_OCI_MANIFEST "; charset=utf-8", man, "m"), MT_OCI_MANIFEST,
         "a known Content-Type, parameters dropped");
  is_str(manifest_media_type(MT_OCI_MANIFEST "\",\"digest\":\"sha256:x", man, "m"), MT_OCI_MANIFEST,
         "a crafted Content-Type: the document's own mediaType");
  ok(manifest_media_type(MT_OCI_INDEX, man, "m") == NULL &&
         strstr(pull_error(), "the registry sent it as " MT_OCI_INDEX ", its mediaType says"),
     "a Content-Type that contradicts the document: refused");
  is_str(manifest_media_type("application/json", bare, "m"), MT_OCI_MANIFEST,
         "no type anywhere: a manifest by its fields");
  is_str(manifest_media_type(NULL, idx, "m"), MT_OCI_INDEX, "... an index by its fields");
  json_object *empty = j("{}"), *evil = j("{\"mediaType\":\"application/vnd.evil\"}");
  ok(manifest_media_type("text/html\x1b[2J", empty, "m") == NULL &&
         strstr(pull_error(), "text/html\\x1b[2J") && !strchr(pull_error(), '\x1b'),
     "an unknown one, nothing to go by: refused, escaped");
  ok(manifest_media_type(MT_OCI_MANIFEST, evil, "m") == NULL,
     "an unknown mediaType in the document: refused");
  json_object_put(empty);
  json_object_put(evil);
  char *index = layout_index_json("a\"b", "sha256:00", 12);
  json_object *back = json_tokener_parse(index);
  json_object *ms = NULL;
  json_object_object_get_ex(back, "manifests", &ms);
  ok(ms && json_object_array_length(ms) == 1 &&
         !strcmp(str_of(json_object_array_get_idx(ms, 0), "mediaType"), "a\"b") &&
         !strcmp(str_of(json_object_array_get_idx(ms, 0), "digest"), "sha256:00"),
     "index.json by json-c: a quote in a value stays in it");
  free(index);
  json_object_put(back);
  json_object_put(man);
  json_object_put(bare);
  json_object_put(idx);

  ok(mt_is_layer("application/vnd.oci.image.layer.v1.tar+zstd") &&
         mt_is_layer("application/vnd.docker.image.rootfs.diff.tar.gzip") &&
         mt_is_layer("application/vnd.docker.image.rootfs.diff.tar") &&
         !mt_is_layer("application/vnd.oci.image.config.v1+json") && !mt_is_layer(NULL),
     "layer media types");
  const char *z64 = "0000000000000000000000000000000000000000000000000000000000000000";
  char *mtext =
      xasprintf("{\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\","
                "\"digest\":\"sha256:%s\"},\"layers\":[{\"mediaType\":"
                "\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"sha256:%s\"}]}",
                z64, z64);
  json_object *mj = j(mtext), *mc, *ml;
  ok(check_image_manifest(mj, "m", &mc, &ml) == 0 && json_object_array_length(ml) == 1,
     "an image manifest's config and layers");
  json_object_put(mj);
  free(mtext);
  mtext = xasprintf("{\"config\":{\"mediaType\":\"application/vnd.cncf.helm.config.v1+json\","
                    "\"digest\":\"sha256:%s\"},\"layers\":[]}",
                    z64);
  mj = j(mtext);
  ok(check_image_manifest(mj, "m", &mc, &ml) < 0 &&
         strstr(pull_error(), "config's media type \"application/vnd.cncf.helm.config.v1+json\""),
     "an artifact's config: not an image");
  json_object_put(mj);
  free(mtext);
  mtext = xasprintf("{\"config\":{\"digest\":\"sha256:%s\"},\"layers\":[{\"mediaType\":"
                    "\"text/x\x1b[2J\",\"digest\":\"sha256:%s\"}]}",
                    z64, z64);
  mj = j(mtext);
  ok(check_image_manifest(mj, "m", &mc, &ml) < 0 && strstr(pull_error(), "layer 0's media type") &&
         !rrt_escape_needed(pull_error()),
     "an unknown layer media type: refused, escaped");
  json_object_put(mj);
  free(mtext);
  const char *d = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
  char *text = xasprintf(
      "{\"manifests\":[{\"digest\":\"%s\",\"platform\":{\"os\":\"linux\",\"architecture\":"
      "\"arm64\"}},{\"digest\":\"%s\",\"mediaType\":\"" MT_OCI_INDEX "\",\"platform\":{\"os\":"
      "\"linux\",\"architecture\":\"amd64\"}},{\"digest\":\"%s\",\"platform\":{\"os\":"
      "\"linux\",\"architecture\":\"arm\",\"variant\":\"v7\"}}]}",
      d, d, d);
  json_object *list = j(text);
  ok(pick_platform(list, "linux", "arm64", "", "x") ==
         json_object_array_get_idx(json_object_object_get(list, "manifests"), 0),
     "the platform's manifest");
  ok(pick_platform(list, "linux", "arm", "v7", "x") != NULL, "... with its variant");
  ok(pick_platform(list, "linux", "amd64", "", "x") == NULL &&
         strstr(pull_error(), "no image for linux/amd64 (the index has: linux/arm64, linux/amd64, "
                              "linux/arm/v7)"),
     "an index as the platform's manifest is not taken");
  json_object_put(list);
  free(text);
}

static void auth(void)
{
  size_t n;
  char *s = auth_b64_decode("YWxpY2U6czNjcmV0", 16, &n);
  is_str(s, "alice:s3cret", "base64 without padding");
  free(s);
  s = auth_b64_decode("YTpi", 4, &n);
  is_str(s, "a:b", "a whole group");
  free(s);
  s = auth_b64_decode("YTpiYw==", 8, &n);
  is_str(s, "a:bc", "with padding");
  free(s);
  ok(!auth_b64_decode("YTpi=YTpi", 9, &n) && !auth_b64_decode("YTpiY===", 8, &n) &&
         !auth_b64_decode("Y", 1, &n) && !auth_b64_decode("YTp!", 4, &n) &&
         !auth_b64_decode("YTpiYw=", 7, &n),
     "refused: '=' inside, three '=', a lone sextet, a bad character, a short padded group");
  is_int(auth_key_matches("https://index.docker.io/v1/", "index.docker.io", "library/x"), 15,
         "docker's old key form");
  is_int(auth_key_matches("quay.io/org", "quay.io", "org/img"), 11, "a key with a path");
  is_int(auth_key_matches("quay.io/org", "quay.io", "orgx/img"), 0,
         "... not a prefix of a component");
  is_int(auth_key_matches("quay.io", "quay.io:443", "a"), 0, "a host is not a prefix of another");
  const char *file = "{\"auths\":{\"r.io\":{\"auth\":\"YTpi\"},\"r.io/ns\":{\"auth\":\"Yzpk\"},"
                     "\"bad.io\":{\"auth\":\"YQ1iOmM=\"}}}";
  char *c = auth_lookup_in(file, "r.io", "ns/img");
  is_str(c, "c:d", "the longest matching key wins");
  free(c);
  c = auth_lookup_in(file, "r.io", "other/img");
  is_str(c, "a:b", "... else the host's");
  free(c);
  ok(!auth_lookup_in(file, "bad.io", "x"), "credentials with a control byte are not used");
  ok(!auth_lookup_in("not json", "r.io", "x") && !auth_lookup_in("{\"auths\":[]}", "r.io", "x"),
     "a file that is not auth.json: none");
}

static void references(void)
{
  const char *conf = "# a comment\n"
                     "unqualified-search-registries = [\"quay.io\",\n  'docker.io'] # two\n"
                     "[[registry]]\n"
                     "prefix = \"example.com/ns\"\n"
                     "location = \"mirror.local:5000/other\"\n"
                     "insecure = true\n"
                     "[[registry.mirror]]\n"
                     "location = \"fast.local/m\"\n"
                     "[[registry]]\n"
                     "location = \"blocked.io\"\n"
                     "blocked = true\n"
                     "[aliases]\n"
                     "\"x\" = \"y\"\n";
  struct regconf *c = regconf_parse(conf, "/etc/r.conf");
  struct resolved r;
  ok(resolve_ref_with(c, "alpine", true, false, &r) == 0 && r.n == 2 &&
         !strcmp(r.eps[0].host, "quay.io") && !strcmp(r.eps[0].repo, "alpine") &&
         !strcmp(r.eps[1].host, "docker.io") && !strcmp(r.tag, "latest"),
     "a short name through both search registries");
  resolved_free(&r);
  ok(resolve_ref_with(c, "example.com/ns/img:1.0", false, false, &r) == 0 && r.n == 2 &&
         !strcmp(r.eps[0].host, "fast.local") && !strcmp(r.eps[0].repo, "m/img") &&
         !strcmp(r.eps[1].host, "mirror.local:5000") && !strcmp(r.eps[1].repo, "other/img") &&
         r.eps[1].insecure && !strcmp(r.tag, "1.0"),
     "a prefix: its mirror, then its location");
  resolved_free(&r);
  ok(resolve_ref_with(c, "blocked.io/x/y", false, false, &r) < 0 &&
         strstr(pull_error(), "blocked by /etc/r.conf"),
     "a blocked registry");
  resolved_free(&r);
  ok(resolve_ref_with(NULL, "busybox", false, false, &r) == 0 &&
         !strcmp(r.eps[0].host, "docker.io") && !strcmp(r.eps[0].repo, "library/busybox"),
     "docker://busybox: Docker Hub's library");
  resolved_free(&r);
  const char *bad[] = {"r.io/a:b\r\nX: y", "r.io/a\x1b]0;t\a", "r.io/a..b",        "r.io/-a",
                       "r.io/a_",          "r.io/a:-t",        "r-.io/a",          "r..io/a",
                       "r.io:99999999/a",  "[zz]:5/a",         "r.io/a@sha256:00", "r.io/A"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    int rr = resolve_ref_with(NULL, bad[i], false, false, &r);
    ok(rr < 0 && !strchr(pull_error(), '\x1b') && !strchr(pull_error(), '\n'),
       "refused in one escaped line: %s", pull_error());
    resolved_free(&r);
  }
  const char *good[] = {
      "localhost:5000/a/b__c-d.e:v1.2_3", "[::1]:5000/a", "a.b-c.io/x--y",
      "r.io/a@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"};
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    ok(resolve_ref_with(NULL, good[i], false, false, &r) == 0, "taken: %s", good[i]);
    resolved_free(&r);
  }
  regconf_free(c);
  /* fuzz_pull_regconf: a short name of invalid bytes reached "blocked by" unescaped. */
  c = regconf_parse("[[registry]]\nprefix = \"docker.io\"\nblocked = true\n", "f");
  ok(resolve_ref_with(c, "doc\xff\xff~io/le hub", false, false, &r) < 0 &&
         !rrt_escape_needed(pull_error()) && strstr(pull_error(), "not a repository name"),
     "a name of invalid bytes is refused, escaped, before registries.conf: %s", pull_error());
  resolved_free(&r);
  ok(resolve_ref_with(c, "busybox", false, false, &r) < 0 &&
         strstr(pull_error(), "docker.io/library/busybox: blocked by f"),
     "... a valid one blocked by it");
  resolved_free(&r);
  regconf_free(c);
  c = regconf_parse("[[registry]]\nprefix = \"a.io\"\nlocation = \"bad host/x\"\n", "f");
  ok(resolve_ref_with(c, "a.io/img", false, false, &r) < 0 && strstr(pull_error(), "from f"),
     "a location from registries.conf that is no host: refused naming the file");
  resolved_free(&r);
  regconf_free(c);
}

int main(void)
{
  challenges();
  headers();
  ranges();
  tokens();
  media_types();
  auth();
  references();
  return tap_done();
}
