/*
 * treelock.c - one session's hold on its writable trees (sandbox.h,
 * sbx_tree_lock()): the walk before the session and the check after it
 * see no other session's writes in between.
 */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct sbx_tree_lock {
	int *fds;
	size_t n, cap;
};

/* Whether fd's directory is one held already (the same directory reached
 * by two paths, a bind mount: a second lock of ours would conflict with
 * the first). */
static bool held_already(const struct sbx_tree_lock *l, int fd)
{
	struct stat a, b;

	if (fstat(fd, &a) < 0)
		return false;
	for (size_t i = 0; i < l->n; i++)
		if (fstat(l->fds[i], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return true;
	return false;
}

/* Is path (canonical) root or below it? */
static bool within(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Whether path is strictly below one of roots. */
static bool inside_other(const char *const *roots, const char *path)
{
	for (size_t i = 0; roots[i] != NULL; i++)
		if (strcmp(path, roots[i]) != 0 && within(path, roots[i]))
			return true;
	return false;
}

/* Locks path (op: LOCK_EX or LOCK_SH), never waiting. 0, 1 (held by
 * another session), -1 (errno). */
static int lock_one(struct sbx_tree_lock *l, const char *path, int op)
{
	int fd, *nf;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;

		nf = realloc(l->fds, cap * sizeof(*nf));
		if (nf == NULL)
			return -1;
		l->fds = nf;
		l->cap = cap;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && op == LOCK_EX) {
		/* A tree of ours an earlier command made unreadable (chmod
		 * 0300): opened up for the lock, its mode put back (the walk
		 * after the session does the same). */
		struct stat st;

		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		    chmod(path, (st.st_mode & 07777) | S_IRUSR | S_IXUSR) == 0) {
			fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			(void)chmod(path, st.st_mode & 07777);
			if (fd < 0)
				errno = EACCES;
		} else {
			errno = EACCES;
		}
	}
	/* A directory above that we may not read (a 0711 parent): no
	 * session of this user can have it as a tree either. A root that is
	 * a file (allowWrite names one) holds no tree. */
	if (fd < 0 && ((op == LOCK_SH && (errno == EACCES || errno == EPERM)) || errno == ENOTDIR))
		return 0;
	if (fd < 0)
		return -1;
	if (held_already(l, fd)) {
		(void)close(fd);
		return 0;
	}
	if (flock(fd, op | LOCK_NB) < 0) {
		int e = errno;

		(void)close(fd);
		errno = e;
		return e == EWOULDBLOCK ? 1 : -1;
	}
	l->fds[l->n++] = fd;
	return 0;
}

/* Whether path is in list (n entries). */
static bool listed(char (*list)[PATH_MAX], size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], path) == 0)
			return true;
	return false;
}

int sbx_tree_lock(const char *const *roots, sbx_tree_lock_t **out, char *busy, size_t busylen)
{
	/* The exclusive set: the roots that are not inside another, each
	 * once; the shared set: every directory above them, each once
	 * (none of them is in the first: a root above another is not in
	 * it). Locked in that order, never waiting. */
	char(*ex)[PATH_MAX] = NULL, (*sh)[PATH_MAX] = NULL;
	size_t nex = 0, nsh = 0, nroots = 0, nabove = 1;
	struct sbx_tree_lock *l;
	int rc = 0;

	*out = NULL;
	busy[0] = '\0';
	/* Directories above a root: one per slash in it. */
	for (; roots != NULL && roots[nroots] != NULL; nroots++)
		for (const char *c = roots[nroots]; *c != '\0'; c++)
			nabove += *c == '/';
	l = calloc(1, sizeof(*l));
	ex = calloc(nroots + 1, sizeof(*ex));
	sh = calloc(nabove, sizeof(*sh));
	if (l == NULL || ex == NULL || sh == NULL) {
		free(l);
		free(ex);
		free(sh);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < nroots; i++) {
		char up[PATH_MAX], *slash;

		if (inside_other(roots, roots[i]) || strlen(roots[i]) >= PATH_MAX || listed(ex, nex, roots[i]))
			continue;
		strcpy(ex[nex++], roots[i]);
		strcpy(up, roots[i]);
		while (strcmp(up, "/") != 0 && (slash = strrchr(up, '/')) != NULL) {
			if (slash == up)
				slash[1] = '\0';
			else
				*slash = '\0';
			if (!listed(sh, nsh, up) && nsh < nabove)
				strcpy(sh[nsh++], up);
		}
	}
	for (size_t i = 0; rc == 0 && i < nex; i++)
		if ((rc = lock_one(l, ex[i], LOCK_EX)) != 0)
			snprintf(busy, busylen, "%s", ex[i]);
	for (size_t i = 0; rc == 0 && i < nsh; i++)
		if ((rc = lock_one(l, sh[i], LOCK_SH)) != 0)
			snprintf(busy, busylen, "%s", sh[i]);
	free(ex);
	free(sh);
	if (rc != 0) {
		int e = errno;

		sbx_tree_unlock(l);
		errno = e;
		return rc;
	}
	*out = l;
	return 0;
}

void sbx_tree_unlock(sbx_tree_lock_t *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++)
		(void)close(l->fds[i]);
	free(l->fds);
	free(l);
}
