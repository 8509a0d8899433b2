/* fuzz_pull_token.c: a token server's answer (pull/token.c): the token taken is a b64token, and
 * a refusal is one escaped line naming the server. */
#include "../../pull/http.h"
#include "../../pull/token.h"
#include "pull_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *body = fuzz_str(data, size);
  char *t = NULL;
  if (token_of_answer(body, strlen(body), "registry.example", "https://auth.example/token", &t) ==
      0) {
    if (!t || !http_b64token(t))
      abort();
  } else {
    if (t || !strstr(pull_error(), "https://auth.example/token"))
      abort();
    fuzz_check_error();
  }
  free(t);
  free(body);
  return 0;
}
