// The calls the Grabber target needs that Swift's Glibc module does not import:
// posix_spawn_file_actions_addchdir_np and pipe2 (GNU extensions) and the variadic prctl.
#ifndef TVIMPORT_CSPAWN_H
#define TVIMPORT_CSPAWN_H
#include <sys/types.h>

/// Starts `path` with `argv` and `envp` in directory `directory`, as the leader of a new process
/// group, with `input`, `output` and `errors` as its descriptors 0, 1 and 2, every signal at its
/// default disposition and none blocked. Returns 0 and sets `pid`, or an errno value.
int tv_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
             int input, int output, int errors, pid_t *pid);

/// A pipe whose two ends are closed on exec (no other child inherits them), holding `capacity`
/// bytes where the system allows it (0: the default). Returns 0 or -1 (errno).
int tv_pipe(int descriptors[2], int capacity);

/// Makes this process the reaper of its orphaned descendants (Linux), so that the grandchildren
/// of a killed command are reaped here rather than left as zombies. Returns 0 or -1 (errno).
int tv_become_subreaper(void);

#endif
