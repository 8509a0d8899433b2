/* fuzz_image_archive.c: libFuzzer harness for an oci-archive or docker-archive over raw bytes: the
 * header pass for index/manifest/config, the plan, the layers checked as a set. */
#include <stddef.h>
#include <stdint.h>

#include "image_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  return fuzz_image_archive(data, size);
}
