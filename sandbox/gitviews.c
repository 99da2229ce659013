/*
 * gitviews.c - what in a git directory makes git show the user something
 * other than what the objects and the work tree hold (round 32 of the
 * attack, family R: the review on the host shows nothing while the host
 * pushes or runs planted code). Part of the post-run check (SPEC §3.3),
 * called for each git directory from gg_check_gitdir():
 *
 *  - replace refs (refs/replace/NAME, loose or in packed-refs), info/grafts
 *    and objects/info/alternates made or changed in the session: git log,
 *    show and diff read the replacement, `git push` sends the original;
 *  - HEAD, and the files git's prompt (__git_ps1) prints, holding control
 *    characters: printed raw to the host terminal at every prompt;
 *  - an index whose skip-worktree or assume-unchanged bits hide a file
 *    the session changed: git status and diff skip it; or an entry that
 *    records a written file's times with another object (named only);
 *  - info/exclude given rules in the session: git status hides what they
 *    match;
 *  - (round 33) caches git trusts without reading the objects again: a
 *    commit-graph (chain), a multi-pack-index, a pack's .bitmap or .rev
 *    (an index's untracked cache and fsmonitor data go with every other
 *    optional extension when gitindex.c rewrites an index).
 *
 * Each one made or changed in the session moves aside (gg_quarantine(),
 * reported); what git needs to go on working is put back in a clean form
 * where there is one (packed-refs without its replace refs, HEAD cut at
 * its first control character, the index without UNTR and FSMN).
 * .git/shallow written in the session is named (a shallow fetch writes
 * it too); refs moved since the start are gitrefs.c's (named).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/fileio.h"
#include "sandbox/gitguard_int.h"

/* An index larger than this is not parsed (moved aside when changed in
 * the session and its flags cannot be read). 256 MiB: the largest
 * monorepos' indexes are a few tens of MiB. */
#define GV_INDEX_MAX_BYTES (256u * 1024 * 1024)
/* A packed-refs larger than this, changed in the session, is scanned
 * all the same, line by line: no limit is needed there. */

/* Contract in gitguard_int.h. */
char *gg_read_all(int dfd, const char *name, size_t max, size_t *len)
{
	struct stat st;

	return gg_read_all_st(dfd, name, max, len, &st);
}

char *gg_read_all_st(int dfd, const char *name, size_t max, size_t *len, struct stat *st)
{
	char *buf;
	ssize_t n;
	int fd = fileio_open_regular_at(dfd, name, FILEIO_NOFOLLOW, st);

	if (fd < 0)
		return NULL;
	if (st->st_size < 0 || (size_t)st->st_size > max) {
		(void)close(fd);
		errno = EFBIG;
		return NULL;
	}
	buf = malloc((size_t)st->st_size + 1);
	if (buf == NULL) {
		(void)close(fd);
		errno = ENOMEM;
		return NULL;
	}
	n = fileio_read_full(fd, buf, (size_t)st->st_size);
	if (n < 0) {
		int e = errno;

		(void)close(fd);
		free(buf);
		errno = e;
		return NULL;
	}
	(void)close(fd);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* Writes all of [buf, buf + len) to fd: 0, or -1 with errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---------------------------------------------------------- replace refs */

/*
 * Moves the replace ref rfd/name (rfd: refs/replace of g->path, open as
 * gfd) out of refs/ first: git takes any name there that starts with an
 * object name for a replace ref (it reads the first 40 hex digits), the
 * quarantine's suffix included. To replace-NAME at the top of the git
 * directory, which gg_quarantine() then moves aside as it does any
 * control file (under --keep-git-config: kept where it is, reported).
 */
static void replace_aside(struct gg *g, int gfd, int rfd, const char *rdir, const char *name)
{
	static const char what[] = "a replace ref made in the session (git log, show and diff show the "
				   "replacement commit while git push sends the replaced one)";
	char top[NAME_MAX + 1], setting[2 * NAME_MAX + 256];

	if (g->keep) {
		gg_quarantine(g, rfd, rdir, name, what);
		return;
	}
	if (snprintf(top, sizeof(top), "replace-%s", name) >= (int)sizeof(top) ||
	    renameat2(rfd, name, gfd, top, RENAME_NOREPLACE) < 0) {
		/* Moved aside where it is, under a name that starts with
		 * the suffix's dot when it would start with hex digits. */
		gg_quarantine(g, rfd, rdir, name, what);
		return;
	}
	snprintf(setting, sizeof(setting), "%s: refs/replace/%s, moved to the top of the git directory first", what,
		 name);
	gg_quarantine(g, gfd, g->path, top, setting);
}

/*
 * refs/replace of the git directory g->path (open as gfd): every loose
 * replace ref made or changed in the session (or in a directory that
 * was: a staged directory renamed in keeps its files' times) moves
 * aside. git then warns of a bad replace ref name at the copy, which
 * does not replace anything.
 */
static void check_loose_replace(struct gg *g, int gfd, bool all)
{
	char rdir[PATH_MAX];
	struct gg_dir d = {.pfd = gfd, .dir = g->path, .name = "refs/replace", .nofollow = true, .is_new = all,
			   .setting = "a replace refs directory the check cannot read (git shows a replacement "
				      "for each object named there)",
			   .what = "cannot open refs/replace to check for replace refs"};
	bool dir_new;
	int fd;
	DIR *dp;
	struct dirent *de;

	if (faccessat(gfd, "refs/replace", F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	dir_new = all || gg_changed(g, gfd, "refs/replace");
	fd = gg_dir_open(g, &d);
	if (fd < 0)
		return;
	if (!gg_join(rdir, sizeof(rdir), g->path, "refs/replace")) {
		gg_dir_close(g, &d, fd);
		return;
	}
	{
		int dfd = dup(fd);

		dp = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (dp == NULL) {
			if (dfd >= 0)
				(void)close(dfd);
			gg_report_error(g, rdir, "", "cannot read to check for replace refs", errno);
			gg_dir_close(g, &d, fd);
			return;
		}
	}
	while ((errno = 0, de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (gg_quarantined(g, fd, de->d_name, dir_new))
			continue;
		if (dir_new || gg_changed(g, fd, de->d_name))
			replace_aside(g, gfd, fd, rdir, de->d_name);
	}
	if (errno != 0)
		gg_report_error(g, rdir, "", "cannot read to check for replace refs", errno);
	(void)closedir(dp);
	gg_dir_close(g, &d, fd);
}

/* Does the packed-refs line [l, l + n) name a replace ref ("HASH
 * refs/replace/...")? */
static bool packed_replace(const char *l, size_t n)
{
	const char *sp = memchr(l, ' ', n);

	return l[0] != '#' && l[0] != '^' && sp != NULL && (size_t)(l + n - (sp + 1)) >= 13 &&
	       strncmp(sp + 1, "refs/replace/", 13) == 0;
}

/*
 * packed-refs of g->path (gfd), changed in the session (or all), holding
 * replace refs: moved aside, and a copy without them (nor their peeled
 * lines) put in its place, so that the branches stay.
 */
static void check_packed_replace(struct gg *g, int gfd, bool all)
{
	static const char tmp[] = "packed-refs.passavant-new";
	struct stat st;
	size_t len, i, kept = 0;
	bool found = false, dropping = false;
	char *text, *out;

	if (!all && !gg_changed(g, gfd, "packed-refs"))
		return;
	text = gg_read_all(gfd, "packed-refs", (size_t)1 << 31, &len);
	if (text == NULL) {
		if (errno != ENOENT)
			gg_report_unread(g, g->path, "packed-refs", "cannot read to check for replace refs", errno);
		return;
	}
	out = malloc(len + 1);
	if (out == NULL) {
		free(text);
		gg_report_error(g, g->path, "packed-refs", "cannot check for replace refs", ENOMEM);
		return;
	}
	for (i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl != NULL ? (size_t)(nl - (text + i)) + 1 : len - i;

		if (n > 0 && packed_replace(text + i, n)) {
			found = dropping = true;
		} else if (!(dropping && text[i] == '^')) {
			dropping = false;
			memcpy(out + kept, text + i, n);
			kept += n;
		}
		i += n;
	}
	free(text);
	if (!found || fstatat(gfd, "packed-refs", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		free(out);
		return;
	}
	if (!g->keep) {
		int fd = openat(gfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0644);

		if (fd < 0 || write_all(fd, out, kept) < 0 || close(fd) < 0) {
			int e = errno;

			if (fd >= 0)
				(void)unlinkat(gfd, tmp, 0);
			free(out);
			gg_report_error(g, g->path, "packed-refs", "cannot write a copy without its replace refs", e);
			/* Still moved aside: no replace ref stays. */
			gg_quarantine(g, gfd, g->path, "packed-refs",
				      "packed-refs holding replace refs made in the session (git log, show and diff "
				      "show the replacement while git push sends the replaced commit)");
			return;
		}
	}
	free(out);
	gg_quarantine(g, gfd, g->path, "packed-refs",
		      "packed-refs holding replace refs made in the session (git log, show and diff show the "
		      "replacement while git push sends the replaced commit); a copy without them is put in its "
		      "place");
	if (g->keep)
		return;
	if (faccessat(gfd, "packed-refs", F_OK, AT_SYMLINK_NOFOLLOW) == 0 || renameat(gfd, tmp, gfd, "packed-refs") < 0) {
		gg_report_error(g, g->path, "packed-refs",
				"cannot put the copy without replace refs in place (it is packed-refs.passavant-new)",
				errno);
	}
}

/*
 * Files that make git read other objects, or other parents, than the
 * repository's own: info/grafts (every commit's parents, read while git
 * still supports it) and objects/info/alternates (objects from another
 * store), made or changed in the session, move aside.
 */
static void check_object_sources(struct gg *g, int gfd, bool all)
{
	static const struct {
		const char *dir, *name, *what;
	} files[] = {
		{"info", "grafts", "info/grafts (git log and show take other parents for commits named there)"},
		{"objects/info", "alternates",
		 "objects/info/alternates (git reads objects from another store)"},
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char dir[PATH_MAX];
		int fd = openat(gfd, files[i].dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (faccessat(fd, files[i].name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (all || gg_changed(g, fd, files[i].name)) && !gg_quarantined(g, fd, files[i].name, false) &&
		    gg_join(dir, sizeof(dir), g->path, files[i].dir))
			gg_quarantine(g, fd, dir, files[i].name, files[i].what);
		(void)close(fd);
	}
}

/*
 * Caches git derives from the objects and then trusts without checking
 * them against the objects (round 33, family R): a commit-graph (every
 * commit's parents and tree, read by git log, merge-base and status's
 * ahead/behind), a multi-pack-index, a pack's reachability bitmap (.bitmap)
 * or reverse index (.rev). A forged commit-graph gives git log other
 * parents than the commits hold, as grafts do. Made or changed in the
 * session, they move aside: git works without them (only slower) and
 * writes them again (`git commit-graph write`, `git gc`).
 */
static void check_caches(struct gg *g, int gfd, bool all)
{
	static const struct {
		const char *dir, *name, *what;
	} files[] = {
		{"objects/info", "commit-graph",
		 "a commit-graph written in the session (git log takes commits' parents from it without reading "
		 "the commits; git rebuilds it: git commit-graph write)"},
		{"objects/info", "commit-graphs",
		 "a commit-graph chain written in the session (git log takes commits' parents from it without "
		 "reading the commits; git rebuilds it: git commit-graph write)"},
		{"objects/pack", "multi-pack-index",
		 "a multi-pack-index written in the session (git finds objects through it without checking; git "
		 "rebuilds it: git multi-pack-index write)"},
	};
	char dir[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int fd = openat(gfd, files[i].dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		bool changed;

		if (fd < 0)
			continue;
		if (fstatat(fd, files[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !gg_quarantined(g, fd, files[i].name, false)) {
			changed = all || gg_changed(g, fd, files[i].name);
			/* The chain's directory: a graph file written in it,
			 * or its chain file rewritten, leaves the directory's
			 * own times as they were when only a file changed. */
			if (!changed && S_ISDIR(st.st_mode)) {
				int cfd = openat(fd, files[i].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				DIR *dp = cfd >= 0 ? fdopendir(cfd) : NULL;
				struct dirent *de;

				if (dp == NULL && cfd >= 0)
					(void)close(cfd);
				while (dp != NULL && !changed && (de = readdir(dp)) != NULL)
					changed = de->d_name[0] != '.' && gg_changed(g, dirfd(dp), de->d_name);
				if (dp != NULL)
					(void)closedir(dp);
			}
			if (changed && gg_join(dir, sizeof(dir), g->path, files[i].dir))
				gg_quarantine(g, fd, dir, files[i].name, files[i].what);
		}
		(void)close(fd);
	}
	/* objects/pack: a .bitmap or a .rev beside its pack (a readdir, and
	 * a stat of those alone: a file rewritten in place leaves the
	 * directory's times). */
	{
		int fd = openat(gfd, "objects/pack", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *dp;
		struct dirent *de;

		if (fd < 0)
			return;
		if (!gg_join(dir, sizeof(dir), g->path, "objects/pack") || (dp = fdopendir(fd)) == NULL) {
			(void)close(fd);
			return;
		}
		while ((de = readdir(dp)) != NULL) {
			size_t n = strlen(de->d_name);
			bool bitmap = n > 7 && strcmp(de->d_name + n - 7, ".bitmap") == 0;
			bool rev = n > 4 && strcmp(de->d_name + n - 4, ".rev") == 0;

			if ((!bitmap && !rev) || gg_quarantined(g, dirfd(dp), de->d_name, all) ||
			    (!all && !gg_changed(g, dirfd(dp), de->d_name)))
				continue;
			gg_quarantine(g, dirfd(dp), dir, de->d_name,
				      bitmap ? "a pack bitmap written in the session (git counts and sends objects by "
					       "it without checking; git rebuilds it: git repack -adb)"
					     : "a pack's reverse index written in the session (git trusts it; git "
					       "rebuilds it)");
		}
		(void)closedir(dp);
	}
}

/* --------------------------------------------- what the prompt prints */

/* Does [s, s + n) hold a byte a terminal takes for a control: C0, DEL,
 * or a C1 control as UTF-8 (0xc2 0x80-0x9f)? A final newline is not. */
static bool has_control(const char *s, size_t n)
{
	if (n > 0 && s[n - 1] == '\n')
		n--;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f || (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
					      (unsigned char)s[i + 1] <= 0x9f))
			return true;
	}
	return false;
}

/* Is [s, s + n) a ref name HEAD may hold ("refs/" and bytes git allows
 * in a ref name), or an object name (40 or 64 lower-case hex digits)? */
static bool head_value_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 40 || n == 64) {
		for (i = 0; i < n && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')); i++)
			;
		if (i == n)
			return true;
	}
	if (n < 6 || strncmp(s, "refs/", 5) != 0)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= 0x20 || c == 0x7f || strchr("~^:?*[\\", c) != NULL)
			return false;
	}
	return !has_control(s, n) && s[n - 1] != '/' && s[n - 1] != '.';
}

/*
 * HEAD of g->path (gfd), written in the session: one that is neither
 * "ref: REF" nor an object name (a control character, an escape sequence
 * after the branch name: git's prompt prints it raw at every prompt in
 * the repository) moves aside, and HEAD is written again with the ref it
 * started with when that one is valid (else git no longer takes the
 * directory for a repository: the report says where HEAD went).
 */
static void check_head(struct gg *g, int gfd, bool all)
{
	char *text, fixed[PATH_MAX + 8];
	size_t len, end, good = 0;

	if (!all && !gg_changed(g, gfd, "HEAD"))
		return;
	text = gg_read_all(gfd, "HEAD", 64 * 1024, &len);
	if (text == NULL) {
		/* A link (core.preferSymlinkRefs) is check_git_odd()'s. */
		if (errno != ENOENT && errno != ELOOP)
			gg_report_unread(g, g->path, "HEAD", "cannot read to check it", errno);
		return;
	}
	end = len > 0 && text[len - 1] == '\n' ? len - 1 : len;
	if (end > 5 && strncmp(text, "ref: ", 5) == 0 && head_value_ok(text + 5, end - 5)) {
		free(text);
		return;
	}
	if (head_value_ok(text, end) && strncmp(text, "refs/", 5) != 0) {
		free(text);
		return;
	}
	/* The ref it started with: up to the first byte a ref cannot hold. */
	if (len > 5 && strncmp(text, "ref: ", 5) == 0) {
		size_t k = 5;

		while (k < len && k - 5 < PATH_MAX && (unsigned char)text[k] > 0x20 && text[k] != 0x7f &&
		       strchr("~^:?*[\\", text[k]) == NULL)
			k++;
		if (head_value_ok(text + 5, k - 5)) {
			memcpy(fixed, text, k);
			fixed[k] = '\n';
			good = k + 1;
		}
	}
	free(text);
	gg_quarantine(g, gfd, g->path, "HEAD",
		      good > 0 ? "HEAD holding control characters or more than a ref (git's prompt prints it raw "
				 "to the terminal); HEAD is written again with the ref it starts with"
			       : "HEAD holding control characters or neither a ref nor an object name (git's prompt "
				 "prints it raw to the terminal)");
	if (g->keep || good == 0 || faccessat(gfd, "HEAD", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return;
	{
		int fd = openat(gfd, "HEAD", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

		if (fd < 0 || write_all(fd, fixed, good) < 0 || close(fd) < 0) {
			int e = errno;

			if (fd >= 0)
				(void)unlinkat(gfd, "HEAD", 0);
			gg_report_error(g, g->path, "HEAD", "cannot write HEAD again", e);
		}
	}
}

/* The files of a stopped rebase that git's prompt prints (branch name,
 * step numbers), written in the session with control characters: moved
 * aside. */
static void check_prompt_files(struct gg *g, int gfd, bool all)
{
	static const char *const files[] = {"rebase-merge/head-name", "rebase-merge/msgnum", "rebase-merge/end",
					    "rebase-apply/head-name", "rebase-apply/next",  "rebase-apply/last"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *slash = strchr(files[i], '/');
		char dname[32], dir[PATH_MAX], *text;
		size_t len;
		int fd;

		snprintf(dname, sizeof(dname), "%.*s", (int)(slash - files[i]), files[i]);
		fd = openat(gfd, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if ((all || gg_changed(g, fd, slash + 1)) && (text = gg_read_all(fd, slash + 1, 64 * 1024, &len)) != NULL) {
			if (has_control(text, len) && gg_join(dir, sizeof(dir), g->path, dname))
				gg_quarantine(g, fd, dir, slash + 1,
					      "a stopped rebase's file holding control characters (git's prompt "
					      "prints it raw to the terminal)");
			free(text);
		}
		(void)close(fd);
	}
}

/* ------------------------------------------------ the object name of a blob */

/* Contract in gitguard_int.h. SHA-1 or SHA-256 by OpenSSL's EVP (git's
 * choice of hash, not a security use). */
int gg_blob_id(int fd, uint64_t size, size_t hsz, unsigned char *out)
{
	char head[40], buf[65536];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int n = 0;
	uint64_t total = 0;
	ssize_t r = 0;
	bool ok;

	ok = ctx != NULL && (hsz == 20 || hsz == 32) &&
	     EVP_DigestInit_ex(ctx, hsz == 32 ? EVP_sha256() : EVP_sha1(), NULL) == 1 &&
	     EVP_DigestUpdate(ctx, head,
			      (size_t)snprintf(head, sizeof(head), "blob %llu", (unsigned long long)size) + 1) == 1;
	while (ok && (r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ok = false;
			break;
		}
		ok = EVP_DigestUpdate(ctx, buf, (size_t)r) == 1;
		total += (uint64_t)r;
	}
	ok = ok && total == size && EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == hsz;
	EVP_MD_CTX_free(ctx);
	if (!ok && errno == 0)
		errno = EIO;
	return ok ? 0 : -1;
}

/* Whether the regular file wfd/name (size bytes) hashes, as a git blob
 * of its raw bytes, to oid (SHA-1). -1 when it cannot be read. */
static int blob_is(int wfd, const char *name, uint64_t size, const unsigned char oid[20])
{
	unsigned char got[32];
	struct stat st;
	int rc, fd = fileio_open_regular_at(wfd, name, FILEIO_NOFOLLOW, &st);

	if (fd < 0)
		return -1;
	rc = gg_blob_id(fd, size, 20, got);
	(void)close(fd);
	if (rc < 0)
		return -1;
	return memcmp(got, oid, 20) == 0;
}

/* ------------------------------------------------------------ the index */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The last value of key in section sect ("[core]") of the config text
 * cfg into val (len bytes), quotes stripped. A plain reading: section
 * headers and "key = VALUE" lines, names compared without case. False
 * when there is none (or it does not fit). */
static bool config_value(const char *cfg, const char *sect, const char *key, char *val, size_t len)
{
	size_t sl = strlen(sect), kl = strlen(key);
	bool in = false, found = false;

	for (const char *l = cfg; *l != '\0';) {
		const char *e = strchrnul(l, '\n'), *k = l;

		while (k < e && (*k == ' ' || *k == '\t'))
			k++;
		if (k < e && *k == '[') {
			in = (size_t)(e - k) >= sl && strncasecmp(k, sect, sl) == 0;
		} else if (in && (size_t)(e - k) > kl && strncasecmp(k, key, kl) == 0) {
			const char *v = k + kl;
			size_t n;

			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			if (v < e && *v == '=') {
				v++;
				while (v < e && (*v == ' ' || *v == '\t'))
					v++;
				n = (size_t)(e - v);
				while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
					n--;
				if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
					v++;
					n -= 2;
				}
				if (n > 0 && n < len) {
					memcpy(val, v, n);
					val[n] = '\0';
					found = true; /* the last one counts, as in git */
				}
			}
		}
		l = *e ? e + 1 : e;
	}
	return found;
}

/* Contract in gitguard_int.h: extensions.objectFormat of the config. */
size_t gg_hash_size(int gfd)
{
	size_t len;
	char *cfg = gg_read_all(gfd, "config", GG_CONFIG_MAX_BYTES, &len), val[16];
	bool sha256 = cfg != NULL && config_value(cfg, "[extensions]", "objectformat", val, sizeof(val)) &&
		      strcasecmp(val, "sha256") == 0;

	free(cfg);
	return sha256 ? 32 : 20;
}

/* core.worktree of the config text cfg (a submodule's git directory in
 * .git/modules holds one), resolved from gitdir into out. */
static bool config_worktree(const char *cfg, const char *gitdir, char out[PATH_MAX])
{
	char val[PATH_MAX];

	return config_value(cfg, "[core]", "worktree", val, sizeof(val)) && gg_resolve_pointer(gitdir, val, out);
}

/* The work tree of the git directory g->path: the directory of a .git,
 * the one a linked worktree's gitdir file names, or its core.worktree (a
 * submodule's). False for a bare repository. */
static bool work_tree(const struct gg *g, int gfd, char out[PATH_MAX])
{
	const char *slash = strrchr(g->path, '/');
	char text[PATH_MAX], *cfg;
	size_t len;
	bool ok;
	ssize_t n;

	if (slash != NULL && strcmp(slash, "/.git") == 0) {
		snprintf(out, PATH_MAX, "%.*s", (int)(slash - g->path), g->path);
		return true;
	}
	n = gg_read_small(gfd, "gitdir", text, sizeof(text));
	if (n > 5 && text[0] == '/' && strcmp(text + n - 5, "/.git") == 0) {
		snprintf(out, PATH_MAX, "%.*s", (int)(n - 5), text);
		return true;
	}
	cfg = gg_read_all(gfd, "config", GG_CONFIG_MAX_BYTES, &len);
	if (cfg == NULL)
		return false;
	ok = config_worktree(cfg, g->path, out);
	free(cfg);
	return ok;
}

/* Contract in gitguard_int.h. */
bool gg_sparse_before(const struct gg *g, int gfd, bool all)
{
	static const char *const files[] = {"config", "config.worktree"};
	bool on = false;
	char val[16];

	/* What the session wrote cannot make it one: a config (or the
	 * patterns) written in the session, or a git directory new whole. */
	if (all || gg_changed(g, gfd, "config") || gg_changed(g, gfd, "config.worktree") ||
	    gg_changed(g, gfd, "info/sparse-checkout"))
		return false;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len;
		char *cfg = gg_read_all(gfd, files[i], GG_CONFIG_MAX_BYTES, &len);

		if (cfg != NULL && config_value(cfg, "[core]", "sparsecheckout", val, sizeof(val)))
			on = strcasecmp(val, "true") == 0 || strcasecmp(val, "yes") == 0 ||
			     strcasecmp(val, "on") == 0 || strcmp(val, "1") == 0;
		free(cfg);
	}
	return on;
}

/* Contract in gitguard_int.h. */
bool gg_absent_hides(const struct gg *g, int wfd, const char *name, bool sparse)
{
	char parent[PATH_MAX];
	struct statx sx;
	size_t n = strlen(name);
	const char *slash;

	if (!sparse)
		return true;
	/* a sparse checkout leaves out what its patterns do not hold; one
	 * file gone from a directory it holds is a deletion */
	while (n > 0 && name[n - 1] == '/')
		n--;
	slash = memrchr(name, '/', n);
	if (slash == NULL)
		snprintf(parent, sizeof(parent), ".");
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - name), name);
	return gg_statx(wfd, parent, AT_SYMLINK_NOFOLLOW, &sx) == 0 && S_ISDIR(sx.stx_mode) &&
	       gg_ts_fresh(g, &sx.stx_ctime);
}

/* Work tree files hashed at most in one index (those git trusts by their
 * times alone although written in the session), and their size each. */
#define GV_HASH_FILES_MAX 2000
#define GV_HASH_BYTES_MAX (64u * 1024 * 1024)

/* What an index check found. */
struct hidden {
	unsigned long n;        /* entries hiding a changed file */
	char first[PATH_MAX];   /* the first one's path */
	unsigned long forged;   /* entries whose recorded times match a file
				   the session wrote while its content is
				   not the entry's object */
	char forged_first[PATH_MAX];
	unsigned long hashed;   /* files hashed (GV_HASH_FILES_MAX) */
	size_t hsz;             /* object name size */
	bool split;             /* a split index: its entries' flags live in
				   a sharedindex.* file this check does not
				   read (the "link" extension) */
	bool sparse;            /* a sparse checkout set up before the
				   session (gg_sparse_before()) */
};

/* One flagged entry: does the work tree file name (below wfd) differ
 * from the entry (size, mtime seconds), or was it changed in the
 * session? One not in the work tree is a deletion git does not show
 * (round 34's d1: a tracked file removed and its entry marked), but in
 * a sparse checkout set up before the session (gg_absent_hides()). */
static void flagged(const struct gg *g, int wfd, const char *name, const unsigned char *e, struct hidden *h)
{
	uint32_t type = be32(e + 24) & 0170000;
	struct statx sx;

	/* Files and links only: a sparse index's directory entries (040000)
	 * are gitindex.c's, submodules (0160000) are not files git
	 * compares. */
	if ((type != 0100000 && type != 0120000) || wfd < 0)
		return;
	if (gg_statx(wfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0 ? gg_absent_hides(g, wfd, name, h->sparse)
							       : gg_ts_fresh(g, &sx.stx_ctime) ||
									 (uint32_t)sx.stx_size != be32(e + 36) ||
									 (uint32_t)sx.stx_mtime.tv_sec != be32(e + 8)) {
		if (h->n++ == 0)
			snprintf(h->first, sizeof(h->first), "%s", name);
	}
}

/*
 * An entry with no such bit: git takes the file for unchanged when the
 * times, size and inode the entry records match it (it hashes nothing
 * then). A file the session wrote whose entry records exactly its
 * present change time is one git (or the session) recorded after that
 * write: its content must be the entry's object. One that is not was
 * recorded by hand to hide the change (the index is the session's to
 * write). Hashed raw, without git's filters (LFS, end-of-line
 * conversion), which a mismatch may also mean: reported, not moved.
 */
static void trusted(const struct gg *g, int wfd, const char *name, const unsigned char *e, struct hidden *h)
{
	uint32_t type = be32(e + 24) & 0170000;
	struct statx_timestamp rec = {.tv_sec = be32(e), .tv_nsec = be32(e + 4)};
	struct statx sx;

	/* An entry recorded before the session is not stat'ed: one stat for
	 * each entry git (or the session) wrote in it, not one per file. */
	if (type != 0100000 || !gg_ts_fresh(g, &rec) || h->hsz != 20 || wfd < 0 || h->hashed >= GV_HASH_FILES_MAX ||
	    gg_statx(wfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0 || !S_ISREG(sx.stx_mode) ||
	    !gg_ts_fresh(g, &sx.stx_ctime) || sx.stx_size > GV_HASH_BYTES_MAX)
		return;
	if ((uint32_t)sx.stx_ctime.tv_sec != be32(e) || (uint32_t)sx.stx_ctime.tv_nsec != be32(e + 4) ||
	    (uint32_t)sx.stx_mtime.tv_sec != be32(e + 8) || (uint32_t)sx.stx_size != be32(e + 36))
		return;
	h->hashed++;
	if (blob_is(wfd, name, sx.stx_size, e + 40) == 0 && h->forged++ == 0)
		snprintf(h->forged_first, sizeof(h->forged_first), "%s", name);
}

/* Contract in gitguard_int.h. */
int gg_index_scan(const unsigned char *b, size_t len, size_t hsz, gg_index_fn fn, gg_index_ext_fn efn, void *arg,
		  unsigned char *shared)
{
	uint32_t ver, count;
	size_t off = 12, fixed = 40 + hsz + 2;
	char name[PATH_MAX];
	size_t prev = 0;
	int ret = 0;

	if (len < 12 + hsz || memcmp(b, "DIRC", 4) != 0)
		return -1;
	ver = be32(b + 4);
	count = be32(b + 8);
	if (ver < 2 || ver > 4)
		return -1;
	len -= hsz; /* the trailing checksum */
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *e = b + off;
		uint16_t flags, ext = 0;
		size_t at, nl;

		if (off + fixed > len)
			return -1;
		flags = (uint16_t)(e[40 + hsz] << 8 | e[41 + hsz]);
		at = off + fixed;
		if (flags & 0x4000) {
			if (ver < 3 || at + 2 > len)
				return -1;
			ext = (uint16_t)(b[at] << 8 | b[at + 1]);
			at += 2;
		}
		if (ver == 4) {
			/* prefix-compressed: N (varint) bytes off the end of the
			 * previous name, then this one's NUL-ended rest */
			uint64_t strip = 0;
			unsigned char c;
			size_t k = at;

			if (k >= len)
				return -1;
			c = b[k++];
			strip = c & 0x7f;
			while (c & 0x80) {
				if (k >= len || strip > PATH_MAX)
					return -1;
				c = b[k++];
				strip = ((strip + 1) << 7) | (c & 0x7f);
			}
			if (strip > prev)
				return -1;
			nl = strnlen((const char *)b + k, len - k);
			if (k + nl >= len || prev - strip + nl >= sizeof(name))
				return -1;
			memcpy(name + prev - strip, b + k, nl);
			prev = prev - strip + nl;
			name[prev] = '\0';
			off = k + nl + 1;
		} else {
			nl = strnlen((const char *)b + at, len - at);
			if (at + nl >= len || nl >= sizeof(name))
				return -1;
			memcpy(name, b + at, nl);
			name[nl] = '\0';
			/* padded with 1 to 8 NULs to a multiple of 8 */
			off = off + ((at - off + nl + 8) & ~(size_t)7);
		}
		if (fn(arg, name, e, flags, ext) < 0)
			return -1;
	}
	/* The extensions: a 4-byte signature and a 4-byte size each. */
	while (off + 8 <= len) {
		uint32_t sz = be32(b + off + 4);

		if (sz > len - off - 8)
			return -1;
		if (memcmp(b + off, "link", 4) == 0) {
			if (sz < hsz || shared == NULL)
				return -1;
			memcpy(shared, b + off + 8, hsz);
			ret = 1;
		}
		if (efn != NULL && efn(arg, b, off, sz) < 0)
			return -1;
		off += 8 + sz;
	}
	return ret;
}

/* What check_index() hands gg_index_scan()'s callback. */
struct index_walk {
	const struct gg *g;
	int wfd;
	struct hidden *h;
};

/* gg_index_scan()'s callback for check_index(): an entry with
 * assume-unchanged or skip-worktree goes to flagged(), one at stage 0
 * without to trusted(). */
static int index_entry(void *arg, const char *name, const unsigned char *e, uint16_t flags, uint16_t ext)
{
	struct index_walk *w = arg;

	if ((flags & 0x8000) || (ext & 0x4000))
		flagged(w->g, w->wfd, name, e, w->h);
	else if ((flags & 0x3000) == 0) /* stage 0: not a conflict */
		trusted(w->g, w->wfd, name, e, w->h);
	return 0;
}

/*
 * The index of g->path (gfd), written in the session: an entry marked
 * assume-unchanged or skip-worktree whose file in the work tree the
 * session changed (or that differs from the entry) is hidden from git
 * status, diff and commit -a. Such an index moves aside whole (git
 * reset rebuilds one from HEAD, every change then shows); one that does
 * not parse moves aside too. An entry recording a written file's times
 * with another object (trusted()) is named in a line.
 */
static void check_index(struct gg *g, int gfd, bool all)
{
	char wt[PATH_MAX], setting[PATH_MAX + 400];
	struct hidden h = {0};
	size_t len;
	unsigned char *b;
	int wfd;

	if (!all && !gg_changed(g, gfd, "index"))
		return;
	h.sparse = gg_sparse_before(g, gfd, all);
	if (!work_tree(g, gfd, wt)) {
		gg_index_settle(g, gfd, NULL, -1, h.sparse); /* gitindex.c */
		return;
	}
	b = (unsigned char *)gg_read_all(gfd, "index", GV_INDEX_MAX_BYTES, &len);
	if (b == NULL) {
		if (errno != ENOENT)
			gg_quarantine(g, gfd, g->path, "index",
				      "an index the check cannot read to look for skip-worktree and "
				      "assume-unchanged entries (they hide changed files from git status)");
		return;
	}
	wfd = gg_open_below(g, wt);
	h.hsz = gg_hash_size(gfd);
	struct index_walk w = {g, wfd, &h};
	unsigned char shared[32];
	int rc = gg_index_scan(b, len, h.hsz, index_entry, NULL, &w, shared);

	h.split = rc == 1;
	if (rc < 0) {
		gg_quarantine(g, gfd, g->path, "index",
			      "an index the check cannot parse to look for skip-worktree and assume-unchanged "
			      "entries (they hide changed files from git status)");
	} else if (h.split) {
		/* Round 32's review: `git update-index --split-index`, then
		 * --skip-worktree on a changed file: the flag went to the
		 * shared index, and the check saw none. */
		gg_quarantine(g, gfd, g->path, "index",
			      "a split index written in the session (its entries, and their skip-worktree and "
			      "assume-unchanged bits, lie in a sharedindex file the check does not read); `git "
			      "reset` makes an index from HEAD, then every change shows");
	} else if (h.n > 0) {
		snprintf(setting, sizeof(setting),
			 "an index marking %lu file%s the session changed or removed skip-worktree or "
			 "assume-unchanged (git status and diff do not show %s: %s%s); `git reset` makes an "
			 "index from HEAD, "
			 "then every change shows",
			 h.n, h.n == 1 ? "" : "s", h.n == 1 ? "it" : "them", h.first, h.n > 1 ? ", ..." : "");
		gg_quarantine(g, gfd, g->path, "index", setting);
	}
	if (h.forged > 0 && faccessat(gfd, "index", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		struct sbx_git_finding f = {0};
		char path[PATH_MAX];

		snprintf(setting, sizeof(setting),
			 "an index recording %lu file%s the session wrote (%s%s) as unchanged by its times, "
			 "while %s content is not the object the index names: git status and diff do not show "
			 "the change unless a filter (git-lfs, end-of-line conversion) explains it; `rm "
			 ".git/index && git reset` makes an index that shows it",
			 h.forged, h.forged == 1 ? "" : "s", h.forged_first, h.forged > 1 ? ", ..." : "",
			 h.forged == 1 ? "its" : "their");
		if (gg_join(path, sizeof(path), g->path, "index")) {
			f.path = path;
			f.error = setting;
			g->report(g->arg, &f);
		}
	}
	/* What is left: rewritten for git to read every file (gitindex.c). */
	gg_index_settle(g, gfd, wt, wfd, h.sparse);
	if (wfd >= 0)
		(void)close(wfd);
	free(b);
}

/* ------------------------------------------------------- ignore rules */

/* Does [s, s + n) hold a line that is neither blank nor a comment? */
static bool has_rule(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t e = nl != NULL ? (size_t)(nl - s) : n, k = i;

		while (k < e && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
			k++;
		if (k < e && s[k] != '#')
			return true;
		i = e + 1;
	}
	return false;
}

/* info/exclude of g->path (gfd), given rules in the session: git status
 * hides every file they match (git init writes only comments there). */
static void check_exclude(struct gg *g, int gfd, bool all)
{
	char dir[PATH_MAX], *text;
	size_t len;
	int fd = openat(gfd, "info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	if ((all || gg_changed(g, fd, "exclude")) && !gg_quarantined(g, fd, "exclude", false)) {
		text = gg_read_all(fd, "exclude", 1024 * 1024, &len);
		if ((text == NULL && errno != ENOENT) || (text != NULL && has_rule(text, len))) {
			if (gg_join(dir, sizeof(dir), g->path, "info"))
				gg_quarantine(g, fd, dir, "exclude",
					      "info/exclude given rules in the session (git status does not show "
					      "the files they match)");
		}
		free(text);
	}
	(void)close(fd);
}

/*
 * .git/shallow written in the session: git log, blame and merge-base stop
 * at the commits it names as if they had no parents (as grafts make
 * them), so the history behind them is not shown. A shallow fetch or
 * clone writes it too: named, not moved (moved aside, git would look for
 * parents the repository does not hold).
 */
static void check_shallow(struct gg *g, int gfd, bool all)
{
	struct sbx_git_finding f = {0};
	char path[PATH_MAX];

	if (faccessat(gfd, "shallow", F_OK, AT_SYMLINK_NOFOLLOW) < 0 || (!all && !gg_changed(g, gfd, "shallow")) ||
	    gg_quarantined(g, gfd, "shallow", all) || g->record != NULL || !gg_join(path, sizeof(path), g->path, "shallow"))
		return;
	f.path = path;
	f.setting = "written in the session: git log and blame stop at the commits it names, as if they had no "
		    "parents, so the history behind them is not shown (a shallow fetch writes it too; `git fetch "
		    "--unshallow` or removing the file shows the whole history)";
	f.named = true;
	g->report(g->arg, &f);
}

void gg_check_views(struct gg *g, int gfd, bool all)
{
	/* A git directory git takes (HEAD, and objects or commondir), not a
	 * wider candidate: .git/logs holds HEAD and refs/ too. A candidate
	 * made whole in a later session counts as new whole then. */
	if (faccessat(gfd, "HEAD", F_OK, AT_SYMLINK_NOFOLLOW) < 0 ||
	    (faccessat(gfd, "objects", F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
	     faccessat(gfd, "commondir", F_OK, AT_SYMLINK_NOFOLLOW) < 0))
		return;
	check_loose_replace(g, gfd, all);
	check_packed_replace(g, gfd, all);
	check_object_sources(g, gfd, all);
	check_caches(g, gfd, all);
	gg_check_objects(g, gfd, all);
	check_head(g, gfd, all);
	check_prompt_files(g, gfd, all);
	check_index(g, gfd, all);
	check_exclude(g, gfd, all);
	check_shallow(g, gfd, all);
	/* Refs moved since the start (a git directory known then). */
	if (!all)
		gg_refs_compare(g, gfd);
}

/* Contract in gitguard_int.h (githg.c's test of Mercurial's prompt
 * files). */
bool gg_has_control(const char *s, size_t n)
{
	return has_control(s, n);
}
