/* layout.h: the OCI image layout a pull writes for the runtime's import. */
#ifndef ROOTLESSRT_PULL_LAYOUT_H
#define ROOTLESSRT_PULL_LAYOUT_H

#include <stddef.h>

/* DEST/oci-layout and DEST/index.json naming the one manifest (media type, digest, size), both
 * built with json-c: nothing the registry sent is pasted into them. mt must be a known manifest
 * media type. */
int layout_write(const char *dest, const char *mt, const char *digest, size_t size);
/* index.json's text for that manifest (malloc'd). */
char *layout_index_json(const char *mt, const char *digest, size_t size);

#endif
