#ifndef TVIMPORT_CZLIB_SHIM_H
#define TVIMPORT_CZLIB_SHIM_H
// zlib for gzip output (Sources/Primitives/Gzip.swift; the reader inflates through CLibXML2).
#include <zlib.h>

// deflateInit2 is a macro (it passes the library version and struct size): Swift cannot call it.
static inline int tv_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
#endif
