#define _GNU_SOURCE
#include "CSpawn.h"
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <spawn.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

int tv_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
             int input, int output, int errors, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) { posix_spawn_file_actions_destroy(&actions); return result; }

    if (result == 0) result = posix_spawn_file_actions_adddup2(&actions, input, 0);
    if (result == 0) result = posix_spawn_file_actions_adddup2(&actions, output, 1);
    if (result == 0) result = posix_spawn_file_actions_adddup2(&actions, errors, 2);
    if (result == 0 && directory != NULL) result = posix_spawn_file_actions_addchdir_np(&actions, directory);

    // A group of its own, so that a time-out can kill the command and everything it started.
    // Signals this process ignores or blocks (SIGPIPE above all) are not the command's business.
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    if (result == 0) result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (result == 0) result = posix_spawnattr_setpgroup(&attributes, 0);
    if (result == 0) result = posix_spawnattr_setsigmask(&attributes, &none);
    if (result == 0) result = posix_spawnattr_setsigdefault(&attributes, &all);

    if (result == 0) result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

int tv_pipe(int descriptors[2], int capacity) {
    if (pipe2(descriptors, O_CLOEXEC) != 0) return -1;
#if defined(F_SETPIPE_SZ)
    // Best effort: a larger pipe lets the command run ahead of the reader (fewer switches between
    // the two on a busy machine). The default limit for unprivileged processes is 1 MiB.
    if (capacity > 0) (void)fcntl(descriptors[0], F_SETPIPE_SZ, capacity);
#endif
    return 0;
}

int tv_become_subreaper(void) {
#if defined(__linux__)
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}
