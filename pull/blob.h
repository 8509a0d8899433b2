/* blob.h: blobs streamed from the registry, verified while they come; a layer's partial download
 * kept and resumed (HTTP Range). */
#ifndef ROOTLESSRT_PULL_BLOB_H
#define ROOTLESSRT_PULL_BLOB_H

#include <stdbool.h>
#include <stdint.h>

#include "http.h"

#define RANGE_TOTAL_UNKNOWN UINT64_MAX

/* A Content-Range value "bytes FIRST-LAST/TOTAL" (TOTAL "*": RANGE_TOTAL_UNKNOWN), decimal
 * digits only, FIRST <= LAST < TOTAL. -1 when it is not one. */
int content_range_parse(const char *v, uint64_t *first, uint64_t *last, uint64_t *total);

/* What the first bytes of a layer's 2xx answer make of its kept partial download (from bytes; 0:
 * none was asked for) given the status and the Content-Range. */
enum resume_step {
  RESUME_FRESH,     /* nothing was kept: the body is the blob */
  RESUME_FROM_ZERO, /* a 200: the registry ignored the Range, the body is all of it */
  RESUME_CONTINUE,  /* a 206 from where the kept bytes end, to the blob's end */
  RESUME_ASK_AGAIN, /* a 206 for another range: the request is made again, for all of it */
};
enum resume_step resume_decide(long status, const char *crange, uint64_t from, uint64_t size);

/* GET /v2/REPO/blobs/DIGEST. fifo: into the FIFO DEST/blobs/sha256/HEX that the runtime's
 * import reads, kept for resuming with --partials; otherwise into DEST/blobs/sha256/HEX. */
int get_blob(struct conn *c, const char *digest, uint64_t size, const char *label, bool fifo);
/* A layer the store has (--have). */
bool have_layer(const char *digest);
/* Its partial download, unless a pull is writing it. */
void remove_done_partial(const char *digest);

#endif
