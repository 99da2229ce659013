/*
 * links.c - the refusals of SPEC §3.3 for links the sandbox could have
 * planted: a policy path resolved through a symbolic link in a writable
 * tree, and a file with a second name (a hard link) on the filesystem of
 * a writable tree. Used by the mount plan (mountplan.c) once the
 * writable set is known, before anything is bound or created.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "sandbox/sbx_int.h"

/* What sbx_check_links() tells link_seen(). */
struct link_check {
	struct sbx_builder *b;
	const char *what, *p;
	char *err;
	size_t errlen;
};

/* sbx_memo_walk()'s on_link: a link in a directory the command can write
 * stops the walk (-2, err set). */
static int link_seen(void *arg, const char *dir, const char *lnk)
{
	struct link_check *c = arg;

	if (!sbx_plan_writable(c->b, dir))
		return 0;
	errbuf_set_errno(c->err, c->errlen, 0,
			 "%s path %s goes through %s, a symbolic link in %s, which the "
			 "sandbox can write (an earlier run may have planted it); replace the "
			 "link by what it points to, or do not allow writes to %s",
			 c->what, c->p, lnk, dir, dir);
	return -2;
}

/*
 * SPEC §3.3: no policy path is resolved through a symlink the sandbox
 * could have written. Walks p (absolute) component by component as the
 * kernel would, following each symlink met, and fails when one lies in a
 * directory the command can write (under an allow_write tree): an earlier
 * run may have planted it (an allowWrite path turned into a link to
 * $HOME, an allowRead one into a link to ~/.ssh), and the bind would
 * follow it. Links in read-only directories are followed. A path that
 * stops existing part-way is fine: there is nothing left to follow.
 * Every path is walked from /, each component as the kernel meets it
 * (sbx_memo_walk()): the plan's memo answers the looks at directories an
 * earlier path went through, so no link is judged without its walk.
 * what names the list for the message. 0, or -1 with err set.
 */
int sbx_check_links(struct sbx_builder *b, const char *what, const char *p, char *err,
		       size_t errlen)
{
	struct link_check c = {b, what, p, err, errlen};
	char real[PATH_MAX];
	int rc = sbx_memo_walk(b->memo, p, link_seen, &c, real, NULL);

	if (rc == 0 || rc == SBX_WALK_MISSING)
		return 0;
	if (rc == -1)
		errbuf_set_errno(err, errlen, errno, "%s path %s", what, p);
	return -1;
}

/* sbx_check_links() on every path of a NULL-terminated list. */
int sbx_check_list_links(struct sbx_builder *b, const char *const *list, const char *what,
			    char *err, size_t errlen)
{
	for (size_t i = 0; list != NULL && list[i] != NULL; i++)
		if (sbx_check_links(b, what, list[i], err, errlen) < 0)
			return -1;
	return 0;
}

/*
 * A regular file st (at path p, under the rule what) with more than one
 * name. For a write deny, on the filesystem of a writable tree: another
 * name may lie in that tree, where a write would reach the file past the
 * rule, and no mount can cover a name nobody knows. For a read deny or a
 * substitution (read), anywhere: every name outside the denied ones is
 * readable in the sandbox (round 32 of the attack: a denyRead or masked
 * file's second name in the home, not writable, was read in clear).
 * Fails naming the file; 0 when it is not so.
 */
int sbx_check_hard_links(const struct sbx_builder *b, const char *what, const char *p, const struct stat *st,
			 bool read, char *err, size_t errlen)
{
	struct stat wst;

	if (!S_ISREG(st->st_mode) || st->st_nlink < 2)
		return 0;
	if (read) {
		errbuf_set_errno(err, errlen, 0,
			   "cannot apply %s to %s: it has %lu hard links, and the sandbox reads the file "
			   "by any other name; replace the extra links by copies",
			   what, p, (unsigned long)st->st_nlink);
		return -1;
	}
	for (size_t i = 0; i < b->n_writable; i++) {
		if (sbx_memo_stat(b->memo, b->writable[i], &wst) < 0 || wst.st_dev != st->st_dev)
			continue;
		errbuf_set_errno(err, errlen, 0,
			   "cannot apply %s to %s: it has %lu hard links, and another may lie in %s, which "
			   "the sandbox can write (same filesystem); replace the extra links by copies",
			   what, p, (unsigned long)st->st_nlink, b->writable[i]);
		return -1;
	}
	return 0;
}


/* Contract in sandbox.h. */
int sbx_check_host_path(const char *const *allow_write, const char *what, const char *path,
			char *err, size_t errlen)
{
	struct sbx_builder *b;
	size_t n = 0;
	int rc = -1;

	if (path[0] != '/') {
		errbuf_set_errno(err, errlen, EINVAL, "%s path %s is not absolute", what, path);
		return -1;
	}
	for (size_t i = 0; allow_write != NULL && allow_write[i] != NULL; i++)
		n++;
	b = calloc(1, sizeof(*b));
	if (b == NULL || (b->writable = calloc(n + 1, sizeof(char *))) == NULL) {
		errbuf_set_errno(err, errlen, ENOMEM, "cannot check the %s path %s", what, path);
		goto out;
	}
	/* The same canonical trees the mount plan binds. */
	for (size_t i = 0; i < n; i++) {
		char *real = realpath(allow_write[i], NULL);

		if (real != NULL) {
			b->writable[b->n_writable++] = real;
		} else if (errno != ENOENT && errno != ENOTDIR) {
			/* Fail closed: a tree we cannot resolve may be writable. */
			errbuf_set_errno(err, errlen, errno, "cannot resolve the writable tree %s",
					 allow_write[i]);
			goto out;
		}
	}
	rc = sbx_check_links(b, what, path, err, errlen);
out:
	if (b != NULL) {
		for (size_t i = 0; i < b->n_writable; i++)
			free(b->writable[i]);
		free(b->writable);
		free(b);
	}
	return rc;
}
