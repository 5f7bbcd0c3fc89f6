#ifndef TVIMPORT_CCURL_SHIM_H
#define TVIMPORT_CCURL_SHIM_H
#include <curl/curl.h>
// Swift cannot call the variadic curl_easy_setopt: typed wrappers, one per argument kind.
static inline CURLcode tv_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode tv_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode tv_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode tv_curl_setopt_offset(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode tv_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode tv_curl_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
// Fetch: callbacks and 64-bit info, typed so Swift can pass a @convention(c) closure.
typedef size_t (*tv_curl_data_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode tv_curl_setopt_callback(CURL *h, CURLoption o, tv_curl_data_callback f) { return curl_easy_setopt(h, o, f); }
static inline CURLcode tv_curl_getinfo_offset(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
// CURL_GLOBAL_DEFAULT is a macro of macros that Swift does not import.
static inline CURLcode tv_curl_global_init_default(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }
#endif
