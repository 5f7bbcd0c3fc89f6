#ifndef TVIMPORT_CLIBXML2_SHIM_H
#define TVIMPORT_CLIBXML2_SHIM_H
#include <libxml/xmlversion.h>
// Debian's libxml2 pulls in the system ICU, which clashes with Foundation's copy: we need no ICU.
#undef LIBXML_ICU_ENABLED
#include <libxml/xmlreader.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>

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
#endif
