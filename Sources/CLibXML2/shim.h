#ifndef TVIMPORT_CLIBXML2_SHIM_H
#define TVIMPORT_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
// Debian's libxml2 pulls in the system ICU, which clashes with Foundation's copy: we need no ICU.
#undef LIBXML_ICU_ENABLED
#include <libxml/parserInternals.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
// zlib (libxml2's own compression library): the reader inflates gzip itself, because libxml2's
// gzip input stops after the first member of a multi-member file.
#include <zlib.h>

// Swift 6 refuses C global variables such as xmlFree: call it through a function.
static inline void tv_xmlFree(void *pointer) { xmlFree(pointer); }

// Some libxml2 errors (gzip and other I/O failures) bypass a reader's error handler and go to the
// per-thread generic handler, which prints to stderr; the reader reports failures itself.
// Swift cannot define the variadic callback, hence this C helper.
static inline void tv_ignoreGenericError(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}
static inline void tv_silenceGenericErrors(void) { xmlSetGenericErrorFunc(NULL, tv_ignoreGenericError); }
// inflateInit2 is a macro (it passes the library version and struct size): Swift cannot call it.
static inline int tv_inflateInit2(z_streamp stream, int windowBits) { return inflateInit2(stream, windowBits); }
#endif
