#ifndef TVIMPORT_CLIBCRYPTO_SHIM_H
#define TVIMPORT_CLIBCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian libssl-dev), only for the digests that object storage checks:
// MD5 (Content-MD5, and the ETag of a single-part upload) and SHA-256 (x-amz-content-sha256).
#include <openssl/evp.h>
#endif
