/*
 * pkgtree.c - the symbolic links at the top of a package tree.
 *
 * The link walks at the start (mountplan.c walk_dir() under each
 * protected directory, proxy/cli/plan.c home_walk_dir() over the home's
 * dot entries) do not descend into package trees (sbx_package_tree():
 * node_modules, npm's _cacache): an editor's extensions hold hundreds of
 * thousands of entries there, 0.5 s and more a start. But a package can
 * be a link: `npm link` makes node_modules/NAME (or node_modules/@scope/
 * NAME) a link to the package's source, a project the user develops, and
 * the editor loads that code from the extension (round 32 of the attack:
 * a session in the library rewrote what ~/.vscode's extension host
 * requires). So a package tree is listed, not walked: its own entries,
 * and those of each @scope directory, one level, and only the links are
 * handed on; a real package directory is never entered.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

/* The listing of dir (scopes: also enter its @scope directories, one
 * level). */
static int list_links(const char *dir, bool scopes, sbx_package_link_fn fn, void *arg)
{
	char path[PATH_MAX];
	struct dirent *de;
	int fd, rc = 0, e;
	DIR *d;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (d == NULL) {
		e = errno;
		(void)close(fd);
		errno = e;
		return -1;
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		unsigned char type = de->d_type;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* Only a link, or a scope, needs a name: d_type spares the
		 * stat of each package where the filesystem gives it. */
		if (type != DT_UNKNOWN && type != DT_LNK && !(scopes && type == DT_DIR && de->d_name[0] == '@'))
			continue;
		if (type == DT_UNKNOWN) {
			struct stat st;

			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				rc = -1;
				break;
			}
			type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
			if (type != DT_LNK && !(scopes && type == DT_DIR && de->d_name[0] == '@'))
				continue;
		}
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path)) {
			errno = ENAMETOOLONG;
			rc = -1;
			break;
		}
		rc = type == DT_LNK ? fn(path, arg) : list_links(path, false, fn, arg);
	}
	e = errno;
	if (rc == 0 && e != 0)
		rc = -1;
	(void)closedir(d);
	errno = e;
	return rc;
}

/* Contract in sandbox.h. */
int sbx_package_links(const char *dir, sbx_package_link_fn fn, void *arg)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return -1;
	/* The tree itself a link (an extension's node_modules -> a
	 * project's): the link is what the host follows. */
	if (S_ISLNK(st.st_mode))
		return fn(dir, arg);
	if (!S_ISDIR(st.st_mode))
		return 0;
	return list_links(dir, true, fn, arg);
}
