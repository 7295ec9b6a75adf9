/* SPDX-License-Identifier: MIT */
/*
 * posix-spawn-wrap.c - posix_spawn() and posix_spawnp() for rule 7
 * (spawn.c), in the static library only. A static link cannot hold
 * libc's definitions and ours side by side (posix-spawn.c does it for
 * the shared library), so a static program links with the linker's
 * `--wrap=posix_spawn --wrap=posix_spawnp`, which
 * `pkg-config --static --libs rgroup` gives: its calls reach these, and
 * these reach libc's as __real_*. Without the options nothing refers to
 * this file and the linker leaves it out.
 */
#include "tree.h"

int __real_posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
int __real_posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
int __wrap_posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
int __wrap_posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);

int __wrap_posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return rgroup__spawn(__real_posix_spawn, pid, path, actions, attr, argv, envp);
}

int __wrap_posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return rgroup__spawn(__real_posix_spawnp, pid, file, actions, attr, argv, envp);
}
