/* token.h: the registry's authentication: its WWW-Authenticate challenge, the distribution spec's
 * token flow (a bearer token from the token server), basic auth. */
#ifndef ROOTLESSRT_PULL_TOKEN_H
#define ROOTLESSRT_PULL_TOKEN_H

#include "http.h"

/* A WWW-Authenticate challenge (RFC 7235): its scheme and the parameters a registry gives. */
struct challenge {
  char *scheme; /* "Bearer", "Basic", ... */
  char *realm, *service, *scope;
};
/* The first challenge of a WWW-Authenticate value: auth-params token=token or token="quoted"
 * (backslash escapes), separated by commas. -1 when it is not one (no scheme). */
int challenge_parse(const char *value, struct challenge *out);
void challenge_free(struct challenge *c);

/* The token of a token server's answer: {"token": T} or {"access_token": T} (the first when both
 * are there and it is not empty). -1 with the error set, naming server, when there is none or
 * it is not an RFC 6750 b64token. */
int token_of_answer(const char *body, size_t len, const char *registry, const char *server,
                    char **token);

/* GET with the registry's authentication: a 401 is answered once, as its challenge asks. */
int reg_get(struct conn *c, const char *url, const char *accept, struct body *b,
            struct response *resp);

#endif
