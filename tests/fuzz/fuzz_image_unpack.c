/* fuzz_image_unpack.c: libFuzzer harness for a layer (tar, gzip or zstd) over raw bytes, unpacked
 * into a scratch directory. */
#include <stddef.h>
#include <stdint.h>

#include "image_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  return fuzz_image_unpack(data, size);
}
