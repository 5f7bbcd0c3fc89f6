#include <unistd.h>

/* glibc declares syncfs(2) only under _GNU_SOURCE, which Swift's Glibc module is built without.
   The same prototype as glibc's, so the two agree wherever both are seen. */
int syncfs(int fd);
