#include <unistd.h>
#include <sys/types.h>

/* glibc declares syncfs(2) only under _GNU_SOURCE, which Swift's Glibc module is built without.
   The same prototype as glibc's, so the two agree wherever both are seen. */
int syncfs(int fd);

/* sync_file_range(2), likewise: starts writing a range of a file back to disk without waiting,
   so that a large file's final fsync has little left to wait for. */
int sync_file_range(int fd, __off64_t offset, __off64_t count, unsigned int flags);
