// CRC-32C (Castagnoli) with the processor's instruction: SSE 4.2 `crc32` on x86-64, the CRC32C
// instructions of ARMv8 where the compiler targets them. Only the Swift module `Checksum` uses
// this; it falls back to its own tables when `ccrc32c_hardware_available` returns 0.
#ifndef CCRC32C_H
#define CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// 1 when `ccrc32c_hardware_update` may be called on this processor, 0 otherwise.
int ccrc32c_hardware_available(void);

/// Advances the CRC-32C register `crc` (pre-inverted, as the algorithm keeps it) over `length`
/// bytes at `data` and returns the new register. Call only when `ccrc32c_hardware_available()`.
uint32_t ccrc32c_hardware_update(uint32_t crc, const void *data, size_t length);

#endif
