// Test harness only (never part of a package): wine 8.0 has no bcryptprimitives.dll, which every
// Rust >= 1.78 Windows binary imports for ProcessPrng (Windows 10+ has it). This stand-in fills
// the buffer from RtlGenRandom (advapi32's SystemFunction036), as ProcessPrng's documented
// contract asks: it always succeeds. Built by tests/platforms/windows.py with zig cc; loaded under
// WINEDLLOVERRIDES=bcryptprimitives=n from the addon's folder.
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
