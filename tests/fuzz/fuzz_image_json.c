/* fuzz_image_json.c: libFuzzer harness for an image's JSON: index.json, a manifest or nested index,
 * a config, a docker-archive's manifest.json and config (the first byte picks which; the documents
 * leading to it are made with the right digests). */
#include <stddef.h>
#include <stdint.h>

#include "image_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  return fuzz_image_json(data, size);
}
