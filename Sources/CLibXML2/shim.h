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
#endif
