/*
 * fileio.h - reading whole regular files: the policy, secret files, trust
 * bundles, git control files. One way to do it, with the same care
 * everywhere: a FIFO or device named by a user never blocks or triggers
 * anything, the size is capped, EINTR is retried, a file that grows while
 * being read is cut at the size first seen.
 */
#ifndef PASSAVANT_FILEIO_H
#define PASSAVANT_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/attrib.h"

/* fileio flags */
#define FILEIO_NOFOLLOW 1u /* a symbolic link as the last component: ELOOP */
#define FILEIO_SECRET 2u   /* fileio_read(): wipe the buffer on every error path */

/*
 * Opens path read-only if it is a regular file: stat() first (opening a
 * FIFO or a device can block or have effects), then open with O_NONBLOCK,
 * O_CLOEXEC and O_NOCTTY, then fstat() again (the name may have changed
 * meanwhile). st receives the fstat result. Returns the fd (the caller
 * closes it) or -1 with errno (EINVAL: not a regular file).
 */
int fileio_open_regular(const char *path, unsigned flags, struct stat *st) NONNULL(1, 3) WUNRES;

/* The same, with name relative to the directory dfd (openat()'s rules;
 * AT_FDCWD for the working directory). */
int fileio_open_regular_at(int dfd, const char *name, unsigned flags, struct stat *st)
	NONNULL(2, 4) WUNRES;

/*
 * Opens the absolute path with oflags (and mode, with O_CREAT) without
 * following a symbolic link anywhere: each directory is opened from the
 * one before with O_NOFOLLOW, the last component with O_NOFOLLOW too.
 * For the files passavant itself creates or writes (the audit log): give
 * it a canonical path (the parent through realpath()), and a link put in
 * its way after that (by a sandbox of another session) fails the open
 * instead of sending the write elsewhere. Returns the fd (the caller
 * closes it), or -1 with errno: ELOOP when a component is a symbolic
 * link, EINVAL when path is not absolute.
 */
int fileio_open_nolinks(const char *path, int oflags, mode_t mode) NONNULL(1) WUNRES;

/*
 * Round 42: mkdir -p of the absolute path (mode for each directory made,
 * none when !create) without following a symbolic link below trusted:
 * when path is trusted or under it (the user's home, reached as the
 * system gives it: a /home linked elsewhere), trusted is opened as it
 * resolves and the rest walked; else the walk starts at "/". Each
 * component is made (mkdirat) and opened from the one before with
 * O_NOFOLLOW, so that a directory a session could swap for a link (a
 * $XDG_STATE_HOME in a writable tree) makes nothing and opens nothing
 * through it. made (when not NULL, madelen bytes): the first directory
 * made, "" when none. Outside trusted, a link the system itself keeps is
 * followed (round 43: owned by root in a directory only root may write,
 * such as Debian's /var/run -> /run; for a caller that is root, only in
 * "/" or a directory right below it). Returns an O_PATH descriptor of
 * path (the caller closes it), or -1 with errno: ELOOP at a link, EINVAL
 * when path is not absolute.
 */
int fileio_mkdirs_nolinks(const char *path, const char *trusted, mode_t mode, bool create, char *made,
			  size_t madelen) NONNULL(1) WUNRES;

/*
 * Reads from fd into buf until len bytes or end of file, retrying EINTR.
 * Returns the bytes read (fewer than len when the file is shorter) or -1
 * with errno.
 */
ssize_t fileio_read_full(int fd, void *buf, size_t len) NONNULL(2) WUNRES;

/*
 * Reads the regular file at path into a malloc'd buffer with a NUL after
 * the content; *len gets the content's length. A file over max bytes is
 * refused with EFBIG (st->st_size then says its size). st, when not NULL,
 * receives the file's fstat. Returns the buffer (the caller frees it;
 * with FILEIO_SECRET the caller also wipes it first) or NULL with errno.
 */
char *fileio_read(const char *path, size_t max, unsigned flags, size_t *len, struct stat *st) MALLOC
	NONNULL(1, 4) WUNRES;

/* fileio_read() with name relative to the directory dfd. */
char *fileio_read_at(int dfd, const char *name, size_t max, unsigned flags, size_t *len,
		     struct stat *st) MALLOC NONNULL(2, 5) WUNRES;

#endif
