#ifndef WHEREABOUTS_CLIBFUZZER_SHIM_H
#define WHEREABOUTS_CLIBFUZZER_SHIM_H
#include <stddef.h>
#include <stdint.h>
// Provided by libFuzzer when the target is built with -sanitize=fuzzer.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif
