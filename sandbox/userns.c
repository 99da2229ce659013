/*
 * userns.c - the parent's half of the user namespace: the id maps.
 *
 * The parent writes the maps because it is still in the initial user
 * namespace (bubblewrap.c 3161-3185); the child cannot map ids it does
 * not hold. Each id maps to itself, so files keep their owners on both
 * sides, and root stays root (SPEC §7). Also the child's OOM score
 * (sbx_oom_first()), another /proc file only the parent may write for
 * good.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"

/* Writes text into /proc/PID/name in one write. 0 or -1 (errno). */
static int write_proc(pid_t pid, const char *name, const char *text)
{
	char path[64];
	size_t len = strlen(text);
	ssize_t n;
	int fd, saved;

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, text, len);
	saved = errno;
	if (close(fd) < 0 && n >= 0)
		return -1;
	if (n < 0) {
		errno = saved;
		return -1;
	}
	if ((size_t)n != len) {
		errno = EIO;
		return -1;
	}
	return 0;
}

int sbx_userns_write_maps(pid_t pid, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	char line[64];

	/* setgroups must be denied before an unprivileged parent may write
	 * gid_map; we deny it for root too, so the command cannot drop a
	 * supplementary group that a file's permissions exclude. */
	if (write_proc(pid, "setgroups", "deny") < 0 && errno != ENOENT) {
		errbuf_set_errno(err, errlen, errno, "cannot write setgroups of the user namespace");
		return -1;
	}
	snprintf(line, sizeof(line), "%lu %lu 1\n", (unsigned long)uid, (unsigned long)uid);
	if (write_proc(pid, "uid_map", line) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot write uid_map of the user namespace");
		return -1;
	}
	snprintf(line, sizeof(line), "%lu %lu 1\n", (unsigned long)gid, (unsigned long)gid);
	if (write_proc(pid, "gid_map", line) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot write gid_map of the user namespace");
		return -1;
	}
	return 0;
}

int sbx_oom_first(pid_t pid, char *err, size_t errlen)
{
	/* Ours lower where we may (CAP_SYS_RESOURCE; EACCES without it):
	 * when the init has gone, a command still filling memory in the few
	 * milliseconds before it is killed too could make the kernel pick
	 * the biggest process left, which is passavant (seen under ASan). */
	if (geteuid() == 0 && write_proc(getpid(), "oom_score_adj", SBX_OOM_SELF) < 0 && errno != EACCES &&
	    errno != EPERM) {
		errbuf_set_errno(err, errlen, errno, "cannot lower passavant's own OOM score");
		return -1;
	}
	if (write_proc(pid, "oom_score_adj", "1000") < 0) {
		errbuf_set_errno(err, errlen, errno,
				 "cannot raise the sandbox's OOM score (/proc/%ld/oom_score_adj): the command "
				 "could make the kernel kill passavant instead of itself",
				 (long)pid);
		return -1;
	}
	return 0;
}
