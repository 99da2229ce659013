/*
 * gitindex.c - an index (or a Mercurial dirstate) written in the session
 * is not trusted by the host (round 33 of the attack, family R1). Part of
 * the post-run check (SPEC §3.3), after gitviews.c's check_index().
 *
 * Git takes a file for unchanged, without reading it, from what its index
 * records: the stat data of each entry (times, size), the skip-worktree
 * and assume-unchanged bits, a sparse index's directory entries, the
 * cache-tree (TREE: diff-index skips a subtree it says is HEAD's), the
 * untracked cache (UNTR: a directory whose stat data match is not read
 * again), the fsmonitor token (FSMN). Each of these is the session's to
 * write. Rather than judge each trick, an index written in the session is
 * rewritten after the run:
 *
 *  - every file and link entry's recorded size is set to 0: git's own
 *    "racily clean" smudge (read-cache.c, ie_modified(); Documentation/
 *    technical/racy-git.txt): git then compares the content of that
 *    file at its next status and writes the index again with true stat
 *    data. The cost is one read of every tracked file at the host's next
 *    `git status`;
 *  - the optional extensions (a signature whose first letter is upper
 *    case: TREE, UNTR, FSMN, EOIE, IEOT, ...) are dropped: git rebuilds
 *    what it needs of them. REUC stays: the resolve-undo record of the
 *    conflicts resolved (`git checkout -m FILE` makes a conflict again
 *    from it) is no cache, git cannot rebuild it, and no status or diff
 *    reads it (the review of round 33);
 *  - the trailing checksum is computed again (SHA-1 or SHA-256, after the
 *    repository's extensions.objectFormat), and the new file replaces the
 *    old one by rename (same mode, no link followed).
 *
 * What a smudge cannot undo moves aside whole (gg_quarantine(); `git
 * reset` makes an index from HEAD): a sparse index's directory entry
 * whose directory is in the work tree with entries the session wrote
 * below it (git expands it into skip-worktree entries, which it never
 * compares), or is absent from it outside a sparse checkout set up
 * before the session (round 34's d1: a tracked package removed whole;
 * gg_absent_hides()), and, when the work tree of the git directory cannot be
 * found, any skip-worktree or assume-unchanged bit (gitviews.c's check of
 * those bits needs the work tree: fail closed). A split index moves aside
 * in gitviews.c already.
 *
 * An index written in the session that holds an empty file at a path the
 * mount plan covered with a placeholder, gone from the work tree after
 * the run, is named (name_placeholders(): `git add -f` took it; round 34);
 * any other file at a settings row's path the work tree has not as
 * staged, too (name_staged(): `git restore .` writes it; round 40;
 * round 41: below a link, or other content, in a linked worktree's
 * index too: stage_differs()).
 *
 * Mercurial's .hg/dirstate (v1) is the same family: hg trusts an entry
 * whose size and mtime match the file. One written in the session gets
 * every normal entry's mtime set to -1 ("look it up"), which makes hg
 * compare the content; a dirstate-v2 docket moves aside
 * (`hg debugrebuilddirstate` makes a new one).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/fileio.h"
#include "sandbox/gitguard_int.h"

/* An index or dirstate larger than this is not rewritten (gitviews.c
 * moves a larger index aside as unreadable). */
#define GI_MAX_BYTES (256u * 1024 * 1024)
/* Entries looked at, at most, below a sparse index's directory entries
 * in one index (a real sparse checkout has no files there). Past it the
 * index moves aside, and the line says why. */
#define GI_SPARSE_WALK_MAX 20000

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/*
 * Replaces dfd/name by [buf, buf + len): written to a temporary name in
 * dfd (a link planted there is removed, never followed), given the mode
 * (and, for root, the owner) of old, then renamed over name, but only if
 * name is still the file old describes. With git_lock the temporary name
 * is git's own lock, NAME.lock, taken as git takes it (O_EXCL): a git on
 * the host writing the index meanwhile keeps its lock and its write (the
 * review of round 33), and the rewrite fails with EBUSY (a lock the
 * session left behind too: the caller moves the index aside). 0, or -1
 * with errno.
 */
static int replace_file(int dfd, const char *name, const struct stat *old, const unsigned char *buf, size_t len,
			bool git_lock)
{
	char tmp[NAME_MAX + 1];
	struct stat now;
	int fd, e;

	if ((git_lock ? snprintf(tmp, sizeof(tmp), "%s.lock", name)
		      : snprintf(tmp, sizeof(tmp), "%s.passavant-tmp.%ld", name, (long)getpid())) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!git_lock)
		(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (git_lock && errno == EEXIST)
			errno = EBUSY;
		return -1;
	}
	if (geteuid() == 0 && fchown(fd, old->st_uid, old->st_gid) < 0)
		goto fail;
	if (fchmod(fd, old->st_mode & 07777) < 0)
		goto fail;
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			goto fail;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	/* The file read is the file replaced (the host's git may have
	 * written one meanwhile: then it is left to git). */
	if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_ino != old->st_ino ||
	    now.st_dev != old->st_dev) {
		errno = EAGAIN;
		goto fail;
	}
	if (renameat(dfd, tmp, dfd, name) < 0)
		goto fail;
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		(void)close(fd);
	(void)unlinkat(dfd, tmp, 0);
	errno = e;
	return -1;
}

/* A line about g->path/name that is neither a move nor a failure. */
static void note(struct gg *g, const char *name, const char *what)
{
	struct sbx_git_finding f = {0};
	char path[PATH_MAX];

	if (!gg_join(path, sizeof(path), g->path, name))
		return;
	f.path = path;
	f.error = what;
	g->report(g->arg, &f);
}

/* ----------------------------------------------------------- git's index */

/* The hash of the git directory gfd's repository (gg_hash_size()). */
static const EVP_MD *repo_hash(int gfd)
{
	return gg_hash_size(gfd) == 32 ? EVP_sha256() : EVP_sha1();
}

/* The digest of [b, b + len) by md into out: 0, or -1. */
static int digest(const EVP_MD *md, const unsigned char *b, size_t len, unsigned char *out)
{
	unsigned int n = 0;

	return EVP_Digest(b, len, out, &n, md, NULL) == 1 && n == (unsigned int)EVP_MD_size(md) ? 0 : -1;
}

/* What one pass over an index found. */
struct ix {
	unsigned long bits;        /* entries with skip-worktree or assume-unchanged */
	char bits_first[PATH_MAX];
	bool judge_bits;           /* compare those with their files here (the
				      work tree found by find_worktree()) */
	bool sparse;               /* a sparse checkout set up before the
				      session (gg_sparse_before()) */
	unsigned long hidden;      /* of those, files changed in the session or
				      differing from the entry */
	char hidden_first[PATH_MAX];
	unsigned long sparse_hit;  /* sparse directory entries with entries the
				      session wrote below them in the work tree */
	char sparse_first[PATH_MAX];
	bool sparse_cut;           /* GI_SPARSE_WALK_MAX reached */
	unsigned long walked;      /* entries looked at below sparse directories */
	unsigned long smudged;     /* entries whose size was set to 0 */
	bool split;                /* a "link" extension */
	const unsigned char *empty; /* the empty blob's object name */
	unsigned long ph;          /* empty files at a row's path missing from
				      the work tree: placeholders added */
	char ph_names[1024];       /* the first of them, ", "-separated */
	unsigned long staged;      /* other files at a row's path the work
				      tree has not as staged (round 40, f4;
				      round 41: stage_differs()) */
	char staged_names[1024];   /* the first of them, ", "-separated */
	const struct gg_refsnap *snap; /* the git directory at the start (its
					  index's settings entries), or NULL */
	int swfd;                  /* the work tree the settings entries are
				      compared with (may lie outside the root
				      walked: stage_wt()); -1: not found, each
				      one is named */
	bool unknown_ext;          /* a required extension (lower case) other
				      than link and sdir: kept as is */
};

/*
 * Whether the directory wfd/name (name: relative, may end in '/') holds,
 * at any depth, an entry changed in the session (or is itself one). Each
 * entry looked at counts in x->walked; past GI_SPARSE_WALK_MAX it stops
 * and answers true (x->sparse_cut): the check fails closed.
 */
static bool fresh_below(const struct gg *g, int wfd, const char *name, struct ix *x, unsigned depth)
{
	struct statx sx;
	struct dirent *d;
	DIR *dir;
	bool hit = false;
	int fd;

	if (gg_statx(wfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0 || !S_ISDIR(sx.stx_mode))
		return false; /* gone meanwhile (scan() judges an absent one) */
	if (gg_ts_fresh(g, &sx.stx_ctime))
		return true;
	if (depth > 64) {
		x->sparse_cut = true;
		return true;
	}
	fd = openat(wfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return true; /* there, and cannot be read: not judged */
	dir = fdopendir(fd);
	if (dir == NULL) {
		(void)close(fd);
		return true;
	}
	while (!hit && (d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (++x->walked > GI_SPARSE_WALK_MAX) {
			x->sparse_cut = true;
			hit = true;
			break;
		}
		if (gg_statx(fd, d->d_name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
			continue;
		if (gg_ts_fresh(g, &sx.stx_ctime))
			hit = true;
		else if (S_ISDIR(sx.stx_mode))
			hit = fresh_below(g, fd, d->d_name, x, depth + 1);
	}
	(void)closedir(dir);
	return hit;
}

/*
 * Whether the index of the git directory snap describes held the entry e
 * (mode, object) at name at the start of the session; false when that
 * is not known.
 */
static bool staged_before(const struct gg_refsnap *snap, const char *name, const unsigned char *e, size_t hsz)
{
	size_t nl = strlen(name) + 1;

	if (snap == NULL || !snap->staged_known)
		return false;
	for (size_t off = 0; off + 36 < snap->staged_len;) {
		const unsigned char *r = snap->staged + off;
		size_t rl = strnlen((const char *)r + 36, snap->staged_len - off - 36) + 1;

		if (rl == nl && memcmp(r + 36, name, nl) == 0 && be32(r) == be32(e + 24) &&
		    memcmp(r + 4, e + 40, hsz) == 0)
			return true;
		off += 36 + rl;
	}
	return false;
}

/*
 * How the work tree wfd holds the index entry e at name (a settings
 * row's path), as `git restore .` would leave it (round 41, f4's
 * family): 0 as staged, or the entry is one the index held (path, mode,
 * object) at the start (snap: the walk before the session; NULL, not
 * known: none), whatever the work tree holds: what git writes from it
 * is the user's own (a change staged before the session; a sparse
 * checkout's skip-worktree entries, absent by design, were named at
 * every session: the review of round 41); 1 absent (ENOENT, every
 * directory above it a real one: the placeholder case); 2 otherwise: a
 * directory above it is a link or no directory (git replaces it and
 * writes the entry), the entry's type differs, or its content does. Not
 * by the times the entry records (round 41 hashed only an entry whose
 * ctime was after the start: its review wrote an old one into an entry
 * staged with other content, and no line came). wfd -1 (no work tree
 * found): 2.
 */
static int stage_differs(const struct gg_refsnap *snap, int wfd, const char *name, const unsigned char *e,
			 size_t hsz)
{
	char dir[PATH_MAX], target[PATH_MAX], hdr[32];
	const char *slash = strrchr(name, '/');
	unsigned char got[EVP_MAX_MD_SIZE];
	uint32_t mode = be32(e + 24) & 0170000;
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH};
	struct stat st;
	int dfd = wfd, rc = 2, fd;

	if (staged_before(snap, name, e, hsz))
		return 0;
	if (wfd < 0)
		return 2;
	if (slash != NULL) {
		if ((size_t)(slash - name) >= sizeof(dir))
			return 2;
		memcpy(dir, name, (size_t)(slash - name));
		dir[slash - name] = '\0';
		dfd = (int)syscall(SYS_openat2, wfd, dir, &how, sizeof(how));
		if (dfd < 0) /* none (1), or a link or no directory on the way */
			return errno == ENOENT ? 1 : 2;
		slash++;
	} else {
		slash = name;
	}
	if (fstatat(dfd, slash, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = errno == ENOENT ? 1 : 2;
		goto out;
	}
	if ((st.st_mode & S_IFMT) != mode)
		goto out;
	if (mode == 0100000) {
		fd = fileio_open_regular_at(dfd, slash, FILEIO_NOFOLLOW, &st);
		if (fd >= 0) {
			if (gg_blob_id(fd, (uint64_t)st.st_size, hsz, got) == 0 && memcmp(got, e + 40, hsz) == 0)
				rc = 0;
			(void)close(fd);
		}
	} else {
		ssize_t n = readlinkat(dfd, slash, target, sizeof(target));
		const EVP_MD *md = hsz == 32 ? EVP_sha256() : EVP_sha1();
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		int hl;

		if (n >= 0 && (size_t)n < sizeof(target) && ctx != NULL &&
		    (hl = snprintf(hdr, sizeof(hdr), "blob %zd", n)) > 0 &&
		    EVP_DigestInit_ex(ctx, md, NULL) == 1 && EVP_DigestUpdate(ctx, hdr, (size_t)hl + 1) == 1 &&
		    EVP_DigestUpdate(ctx, target, (size_t)n) == 1 && EVP_DigestFinal_ex(ctx, got, NULL) == 1 &&
		    memcmp(got, e + 40, hsz) == 0)
			rc = 0;
		EVP_MD_CTX_free(ctx);
	}
out:
	if (dfd != wfd)
		(void)close(dfd);
	return rc;
}

/*
 * Parses the index [b, b + len) (versions 2 to 4, object names hsz
 * bytes, the trailing checksum included in len): smudges every file and
 * link entry in place (size 0), notes the bits and the sparse directory
 * entries (judged against the work tree wfd, -1 when not known), and
 * returns the offset where the extensions start; 0 when it does not
 * parse.
 */
static size_t scan(const struct gg *g, unsigned char *b, size_t len, size_t hsz, int wfd, struct ix *x)
{
	size_t off = 12, fixed = 40 + hsz + 2, prev = 0;
	char name[PATH_MAX];
	uint32_t ver, count;

	if (len < 12 + hsz || memcmp(b, "DIRC", 4) != 0)
		return 0;
	ver = be32(b + 4);
	count = be32(b + 8);
	if (ver < 2 || ver > 4)
		return 0;
	len -= hsz;
	for (uint32_t i = 0; i < count; i++) {
		unsigned char *e = b + off;
		uint16_t flags, ext = 0;
		uint32_t type;
		size_t at, nl;

		if (off + fixed > len)
			return 0;
		flags = (uint16_t)(e[40 + hsz] << 8 | e[41 + hsz]);
		at = off + fixed;
		if (flags & 0x4000) {
			if (ver < 3 || at + 2 > len)
				return 0;
			ext = (uint16_t)(b[at] << 8 | b[at + 1]);
			at += 2;
		}
		if (ver == 4) {
			uint64_t strip;
			unsigned char c;
			size_t k = at;

			if (k >= len)
				return 0;
			c = b[k++];
			strip = c & 0x7f;
			while (c & 0x80) {
				if (k >= len || strip > PATH_MAX)
					return 0;
				c = b[k++];
				strip = ((strip + 1) << 7) | (c & 0x7f);
			}
			if (strip > prev)
				return 0;
			nl = strnlen((const char *)b + k, len - k);
			if (k + nl >= len || prev - strip + nl >= sizeof(name))
				return 0;
			memcpy(name + prev - strip, b + k, nl);
			prev = prev - strip + nl;
			name[prev] = '\0';
			off = k + nl + 1;
		} else {
			nl = strnlen((const char *)b + at, len - at);
			if (at + nl >= len || nl >= sizeof(name))
				return 0;
			memcpy(name, b + at, nl);
			name[nl] = '\0';
			off = off + ((at - off + nl + 8) & ~(size_t)7);
		}
		type = be32(e + 24) & 0170000;
		if ((flags & 0x8000) || (ext & 0x4000)) {
			struct statx sx;

			if (x->bits++ == 0)
				snprintf(x->bits_first, sizeof(x->bits_first), "%s", name);
			/* as gitviews.c's flagged(): changed in the session, or
			 * not what the entry records */
			if (x->judge_bits && wfd >= 0 && (type == 0100000 || type == 0120000) &&
			    (gg_statx(wfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0
				     ? gg_absent_hides(g, wfd, name, x->sparse)
				     : gg_ts_fresh(g, &sx.stx_ctime) || (uint32_t)sx.stx_size != be32(e + 36) ||
					       (uint32_t)sx.stx_mtime.tv_sec != be32(e + 8)) &&
			    x->hidden++ == 0)
				snprintf(x->hidden_first, sizeof(x->hidden_first), "%s", name);
		}
		/* A sparse index's directory entry ("dir/", 040000,
		 * skip-worktree): host git expands it into skip-worktree
		 * entries of HEAD's files, never compared. One whose
		 * directory is not in the work tree is a deletion git does
		 * not show, but in a sparse checkout set up before the
		 * session (round 34's d1: a tracked package removed whole). */
		if (type == 0040000 && wfd >= 0) {
			struct statx sx;
			bool hit = gg_statx(wfd, name, AT_SYMLINK_NOFOLLOW, &sx) < 0
					   ? gg_absent_hides(g, wfd, name, x->sparse)
					   : fresh_below(g, wfd, name, x, 0);

			if (hit && x->sparse_hit++ == 0)
				snprintf(x->sparse_first, sizeof(x->sparse_first), "%s", name);
		}
		/* A file at a settings row's path, gone from the work tree:
		 * empty, a placeholder the mount plan covered the path with,
		 * removed after the run (the session's `git add -f`, a `!`
		 * rule, `update-index --add` took it); else (round 40 of the
		 * attack, f4) staged in the session with `git update-index
		 * --add --cacheinfo` and never written, or its copy moved
		 * aside: `git restore .` writes the index's copy. Round 41:
		 * below a link to a directory (git replaces the link), or
		 * staged with other content than the work tree's, in any
		 * worktree's index (stage_differs()). */
		if ((type == 0100000 || type == 0120000) &&
		    (gg_name_is_row(g, name) || gg_path_row(g, name) != NULL)) {
			int how = stage_differs(x->snap, x->swfd, name, e, hsz);
			bool ph = how == 1 && type == 0100000 && x->empty != NULL &&
				  memcmp(e + 40, x->empty, hsz) == 0 && gg_name_is_row(g, name);
			char *names = ph ? x->ph_names : x->staged_names;
			size_t cap = ph ? sizeof(x->ph_names) : sizeof(x->staged_names);
			size_t at2 = strlen(names);

			if (how > 0 && (ph ? x->ph++ : x->staged++) < 8)
				snprintf(names + at2, cap - at2, "%s%s", at2 > 0 ? ", " : "", name);
		}
		if ((type == 0100000 || type == 0120000) && be32(e + 36) != 0) {
			put_be32(e + 36, 0);
			x->smudged++;
		}
	}
	return off;
}

/*
 * Names the settings files an index written in the session holds that
 * the work tree has not (x->staged; round 40 of the attack, f4: an entry
 * for .vscode/tasks.json and .envrc added with `git update-index --add
 * --cacheinfo`, the files never written: no line, and the host's `git
 * restore .` wrote both). Named, not dropped: the entry may be the
 * user's own tracked file whose changed copy the check moved aside.
 */
static void name_staged(struct gg *g, const struct ix *x)
{
	struct sbx_git_finding f = {0};
	char path[PATH_MAX], setting[1536];

	if (!gg_join(path, sizeof(path), g->path, "index"))
		return;
	snprintf(setting, sizeof(setting),
		 "an index written in the session holds %lu settings file%s the work tree has not as staged "
		 "(missing, below a link, or other content: %s%s): git "
		 "restore ., git checkout -- . or git stash writes %s from the index (look first: git diff "
		 "--cached --stat; git show :PATH); `git rm --cached` %s you did not stage",
		 x->staged, x->staged == 1 ? "" : "s", x->staged_names, x->staged > 8 ? ", ..." : "",
		 x->staged == 1 ? "it" : "them", x->staged == 1 ? "it if" : "those");
	f.path = path;
	f.setting = setting;
	f.named = true;
	g->report(g->arg, &f);
}

/*
 * Names the placeholders an index written in the session holds (x->ph:
 * round 34). The sandbox covers a missing protected path (`.envrc`,
 * `.gitmodules`) with an empty file it removes after the run; the
 * working tree's repository lists them in the session's info/exclude,
 * but `git add -f`, a `!` rule or `git update-index --add` still stage
 * them, and a commit takes them. Named, not dropped: the entry may be in
 * a commit the session made too, and an index without it would show that
 * commit's file deleted all the same.
 */
static void name_placeholders(struct gg *g, const struct ix *x)
{
	struct sbx_git_finding f = {0};
	char path[PATH_MAX], setting[1536];

	if (!gg_join(path, sizeof(path), g->path, "index"))
		return;
	snprintf(setting, sizeof(setting),
		 "an index written in the session holds %lu empty file%s at %s the sandbox covered with an empty "
		 "placeholder (%s%s), removed after the run: git status shows %s deleted; the session staged "
		 "%s (git add -f, a ! rule in a .gitignore, git update-index --add) and a commit it made may "
		 "hold %s: `git rm --cached` each (and amend or drop that commit) before you push",
		 x->ph, x->ph == 1 ? "" : "s", x->ph == 1 ? "a path" : "paths", x->ph_names,
		 x->ph > 8 ? ", ..." : "", x->ph == 1 ? "it" : "them", x->ph == 1 ? "it" : "them",
		 x->ph == 1 ? "it" : "them");
	f.path = path;
	f.setting = setting;
	f.named = true;
	g->report(g->arg, &f);
}

/*
 * The work tree of the linked worktree whose admin directory is g->path
 * (open as gfd), when gitviews.c could not take it from the admin
 * directory's gitdir file as written: git finds the admin directory from
 * the worktree's own .git file and never reads that text to run there.
 * The text (spaces trimmed, relative to g->path as git 2.48 writes it)
 * names either WT/.git or WT; WT is taken only when its .git file points
 * back at g->path. False when none is found.
 */
static bool find_worktree(const struct gg *g, int gfd, char out[PATH_MAX])
{
	char text[PATH_MAX], cand[PATH_MAX], dotgit[PATH_MAX], back[PATH_MAX], self[PATH_MAX];
	char *t = text, *slash;
	ssize_t n = gg_read_small(gfd, "gitdir", text, sizeof(text));
	struct stat st;

	if (n <= 0 || realpath(g->path, self) == NULL)
		return false;
	while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
		text[--n] = '\0';
	while (*t == ' ' || *t == '\t')
		t++;
	if (*t == '\0' || !gg_resolve_pointer(g->path, t, cand))
		return false;
	/* WT/.git (realpath of a file), or WT */
	if (stat(cand, &st) < 0)
		return false;
	if (S_ISREG(st.st_mode)) {
		slash = strrchr(cand, '/');
		if (slash == NULL || strcmp(slash, "/.git") != 0)
			return false;
		*slash = '\0';
	} else if (!S_ISDIR(st.st_mode)) {
		return false;
	}
	if (!gg_join(dotgit, sizeof(dotgit), cand, ".git"))
		return false;
	{
		int dfd = open(cand, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0)
			return false;
		n = gg_read_small(dfd, ".git", text, sizeof(text));
		(void)close(dfd);
	}
	if (n <= 8 || strncmp(text, "gitdir: ", 8) != 0 || !gg_resolve_pointer(cand, text + 8, back) ||
	    strcmp(back, self) != 0)
		return false;
	snprintf(out, PATH_MAX, "%s", cand);
	return true;
}

/*
 * The work tree wt (an absolute path, NULL: not known) to compare the
 * index's settings entries with, opened for reading even outside the
 * root walked (a linked worktree beside the project: round 41, where the
 * check opened none and so compared nothing); wfd when open already. A
 * linked worktree's or submodule's (g->path not a .git directory) is
 * taken only when its own .git file points back at g->path: the
 * admin directory's gitdir file is the session's to write. Nor when that
 * gitdir file of an admin directory older than the session was written
 * in it (the review of round 41: pointed at a directory the session made
 * whose .git file points back too, holding the staged content: the
 * worktree git runs in was never looked at). -1 when none.
 */
static int stage_wt(const struct gg *g, int gfd, const char *wt, int wfd)
{
	char text[PATH_MAX], back[PATH_MAX], self[PATH_MAX];
	const char *slash = strrchr(g->path, '/');
	ssize_t n;
	int fd;

	if (wt == NULL)
		return -1;
	fd = wfd >= 0 ? fcntl(wfd, F_DUPFD_CLOEXEC, 0) : open(wt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (slash != NULL && strcmp(slash, "/.git") == 0))
		return fd;
	if (gg_changed(g, gfd, "gitdir") && (g->before == NULL || gg_was_gitdir(g->before, gfd))) {
		(void)close(fd);
		return -1;
	}
	n = gg_read_small(fd, ".git", text, sizeof(text));
	if (n > 8 && strncmp(text, "gitdir: ", 8) == 0 && realpath(g->path, self) != NULL &&
	    gg_resolve_pointer(wt, text + 8, back) && strcmp(back, self) == 0)
		return fd;
	(void)close(fd);
	return -1;
}

void gg_index_settle(struct gg *g, int gfd, const char *wt, int wfd, bool sparse)
{
	char found[PATH_MAX];
	bool wt_known = wt != NULL;
	int own = -1;
	char setting[PATH_MAX + 512];
	unsigned char sum[EVP_MAX_MD_SIZE], empty[EVP_MAX_MD_SIZE], *b, *out = NULL;
	const EVP_MD *md;
	struct ix x = {0};
	struct stat st;
	size_t len, hsz, end, olen, dropped = 0;

	b = (unsigned char *)gg_read_all_st(gfd, "index", GI_MAX_BYTES, &len, &st);
	if (b == NULL)
		return; /* gone (moved aside) or unreadable: gitviews.c said so */
	x.swfd = -1;
	if (!wt_known && find_worktree(g, gfd, found)) {
		/* gitviews.c did not look at the bits: judged here */
		own = wfd = gg_open_below(g, found);
		wt_known = true;
		wt = found;
		x.judge_bits = true;
	}
	x.swfd = stage_wt(g, gfd, wt, wfd);
	x.snap = gg_refsnap_find(g, gfd);
	x.sparse = sparse;
	md = repo_hash(gfd);
	hsz = (size_t)EVP_MD_size(md);
	if (len < 12 + hsz || digest(md, b, len - hsz, sum) < 0)
		goto out;
	/* A checksum that does not match (all zeros is index.skipHash's):
	 * git reads such an index all the same (read-cache.c checks the
	 * checksum only for fsck), trusting what it records: moved aside,
	 * not mended (the review of round 33: a forged cache-tree with
	 * one byte of the checksum changed hid a staged edit). */
	if (memcmp(sum, b + len - hsz, hsz) != 0 &&
	    memcmp(b + len - hsz, (const unsigned char[EVP_MAX_MD_SIZE]){0}, hsz) != 0) {
		gg_quarantine(g, gfd, g->path, "index",
			      "an index written in the session whose checksum does not match (git reads it "
			      "anyway and trusts the times and caches it records); `git reset` makes an index "
			      "from HEAD");
		goto out;
	}
	{
		static const char blob0[] = "blob 0";

		if (digest(md, (const unsigned char *)blob0, sizeof(blob0), empty) == 0)
			x.empty = empty;
	}
	end = scan(g, b, len, hsz, wfd, &x);
	if (end == 0) {
		/* gitviews.c moved one that does not parse, but not when it
		 * found no work tree (it does not read that index): a name
		 * past PATH_MAX, which git reads, hid the rest (the review of
		 * round 41). */
		gg_quarantine(g, gfd, g->path, "index",
			      "an index written in the session that the check cannot parse (git may read it "
			      "all the same and write the files it holds); `git reset` makes an index from HEAD");
		goto out;
	}
	if (x.ph > 0)
		name_placeholders(g, &x);
	if (x.staged > 0)
		name_staged(g, &x);
	if (x.sparse_hit > 0) {
		snprintf(setting, sizeof(setting),
			 "an index with a sparse directory entry (%s%s) over a directory the session wrote in or "
			 "removed%s: "
			 "git takes every file below it for HEAD's and shows no change there; `git reset` makes "
			 "an index from HEAD",
			 x.sparse_first, x.sparse_hit > 1 ? ", ..." : "",
			 x.sparse_cut ? " (or too large to look through: " GG_STR(GI_SPARSE_WALK_MAX) " entries)" : "");
		gg_quarantine(g, gfd, g->path, "index", setting);
		goto out;
	}
	if (x.hidden > 0) {
		snprintf(setting, sizeof(setting),
			 "an index marking %lu file%s the session changed or removed skip-worktree or "
			 "assume-unchanged (git status and diff do not show %s: %s%s); its work tree found from "
			 "its own .git file, not "
			 "the gitdir file; `git reset` makes an index from HEAD, then every change shows",
			 x.hidden, x.hidden == 1 ? "" : "s", x.hidden == 1 ? "it" : "them", x.hidden_first,
			 x.hidden > 1 ? ", ..." : "");
		gg_quarantine(g, gfd, g->path, "index", setting);
		goto out;
	}
	if (x.bits > 0 && (!wt_known || wfd < 0)) {
		/* gitviews.c could not compare the marked entries with their
		 * files (a linked worktree's gitdir file edited, a work tree
		 * it cannot open): fail closed. */
		snprintf(setting, sizeof(setting),
			 "an index marking %lu entr%s skip-worktree or assume-unchanged (%s%s) whose work tree "
			 "the check cannot find or open to compare them: git status and diff do not show a "
			 "change there; `git reset` makes an index from HEAD",
			 x.bits, x.bits == 1 ? "y" : "ies", x.bits_first, x.bits > 1 ? ", ..." : "");
		gg_quarantine(g, gfd, g->path, "index", setting);
		goto out;
	}
	/* The extensions after the entries: a required one (lower case
	 * first letter) stays, an optional one (upper case) goes, but for
	 * the resolve-undo record (REUC). */
	out = malloc(len);
	if (out == NULL) {
		gg_report_error(g, g->path, "index", "cannot rewrite the index written in the session", ENOMEM);
		goto out;
	}
	memcpy(out, b, end);
	olen = end;
	for (size_t off = end; off + 8 <= len - hsz;) {
		uint32_t sz = be32(b + off + 4);

		if (sz > len - hsz - off - 8)
			goto out; /* gitviews.c moved it aside */
		if (memcmp(b + off, "link", 4) == 0)
			x.split = true;
		if (b[off] >= 'A' && b[off] <= 'Z' && memcmp(b + off, "REUC", 4) != 0) {
			dropped++;
		} else {
			memcpy(out + olen, b + off, 8 + sz);
			olen += 8 + sz;
		}
		off += 8 + sz;
	}
	if (x.split)
		goto out; /* gitviews.c moved it aside (keep-git-config: kept) */
	if (x.smudged == 0 && dropped == 0)
		goto out; /* nothing git trusts without reading */
	if (g->keep) {
		note(g, "index",
		     "an index written in the session, kept as it is (--keep-git-config): git trusts the times "
		     "and caches it records without reading the files; `rm INDEX && git reset` makes one that "
		     "shows every change");
		goto out;
	}
	if (digest(md, out, olen, out + olen) < 0) {
		gg_report_error(g, g->path, "index", "cannot rewrite the index written in the session (hash)", 0);
		goto out;
	}
	olen += hsz;
	if (replace_file(gfd, "index", &st, out, olen, true) < 0) {
		if (errno == EAGAIN)
			goto out; /* replaced meanwhile by someone else */
		/* Fail closed: an index git would trust as written. */
		snprintf(setting, sizeof(setting),
			 "an index written in the session that the check could not rewrite for git to compare "
			 "every file again (%s); `git reset` makes an index from HEAD",
			 errno == EBUSY ? "index.lock exists: a git on the host is writing it, or the session left "
					  "it; remove it when no git runs"
					: strerror(errno));
		gg_quarantine(g, gfd, g->path, "index", setting);
	}
out:
	if (own >= 0)
		(void)close(own);
	if (x.swfd >= 0)
		(void)close(x.swfd);
	free(out);
	free(b);
}

/* Bytes of settings entries kept, at most, per index at the start. */
#define GI_STAGED_MAX (256u * 1024)

/* What gg_index_record() hands gg_index_scan()'s callback. */
struct staged_rec {
	const struct gg *g;
	struct gg_refsnap *s;
	size_t hsz, cap;
	bool cut;
};

static int staged_entry(void *arg, const char *name, const unsigned char *e, uint16_t flags, uint16_t ext)
{
	struct staged_rec *r = arg;
	uint32_t type = be32(e + 24) & 0170000;
	size_t nl = strlen(name) + 1;
	unsigned char *at;

	(void)flags;
	(void)ext;
	if ((type != 0100000 && type != 0120000) || (!gg_name_is_row(r->g, name) && gg_path_row(r->g, name) == NULL))
		return 0;
	if (r->s->staged_len + 36 + nl > GI_STAGED_MAX) {
		r->cut = true;
		return -1;
	}
	if (r->s->staged_len + 36 + nl > r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 1024;
		unsigned char *nv;

		while (cap < r->s->staged_len + 36 + nl)
			cap *= 2;
		nv = realloc(r->s->staged, cap);
		if (nv == NULL) {
			r->cut = true;
			return -1;
		}
		r->s->staged = nv;
		r->cap = cap;
	}
	at = r->s->staged + r->s->staged_len;
	memcpy(at, e + 24, 4);
	memset(at + 4, 0, 32);
	memcpy(at + 4, e + 40, r->hsz);
	memcpy(at + 36, name, nl);
	r->s->staged_len += 36 + nl;
	return 0;
}

void gg_index_record(struct gg *g, int gfd, struct gg_refsnap *s)
{
	struct staged_rec r = {g, s, gg_hash_size(gfd), 0, false};
	unsigned char shared[32];
	struct stat st;
	size_t len;
	unsigned char *b;

	s->staged = NULL;
	s->staged_len = 0;
	s->staged_known = false;
	if (g->record_ctl == NULL)
		return;
	b = (unsigned char *)gg_read_all_st(gfd, "index", GI_MAX_BYTES, &len, &st);
	if (b == NULL) {
		s->staged_known = errno == ENOENT; /* none: nothing staged */
		return;
	}
	/* the rows, for this read only (the walk before checks nothing);
	 * a split index's entries lie partly in the shared one: not known */
	g->ctl = g->record_ctl;
	s->staged_known = gg_index_scan(b, len, r.hsz, staged_entry, NULL, &r, shared) == 0 && !r.cut;
	g->ctl = NULL;
	free(b);
	if (!s->staged_known) {
		free(s->staged);
		s->staged = NULL;
		s->staged_len = 0;
	}
}

/* ---------------------------------------------------- Mercurial's dirstate */

void gg_check_hg(struct gg *g, int fd)
{
	static const char v2[] = "dirstate-v2\n";
	const char *slash = strrchr(g->path, '/');
	unsigned char *b;
	unsigned long marked = 0;
	struct stat st;
	size_t len, off;

	if (slash == NULL || strcmp(slash, "/.hg") != 0 || !gg_changed(g, fd, "dirstate"))
		return;
	b = (unsigned char *)gg_read_all_st(fd, "dirstate", GI_MAX_BYTES, &len, &st);
	if (b == NULL) {
		if (errno != ENOENT)
			gg_quarantine(g, fd, g->path, "dirstate",
				      "a Mercurial dirstate written in the session that the check cannot read (hg "
				      "takes the files it records for unchanged by their size and time); `hg "
				      "debugrebuilddirstate` makes one");
		return;
	}
	if (len >= sizeof(v2) - 1 && memcmp(b, v2, sizeof(v2) - 1) == 0) {
		gg_quarantine(g, fd, g->path, "dirstate",
			      "a Mercurial dirstate-v2 written in the session (hg takes the files it records for "
			      "unchanged by their size and time; the check rewrites only v1); `hg "
			      "debugrebuilddirstate -r REV` (the revision checked out) makes one");
		goto out;
	}
	/* v1: two parents (40 bytes), then per file: state (1), mode, size,
	 * mtime, name length (4 each, big-endian), the name (with a copy
	 * source after a NUL). */
	for (off = 40; len >= 40 && off + 17 <= len;) {
		uint32_t nl = be32(b + off + 13);

		if (nl > len - off - 17)
			break;
		/* A normal entry with a real size: its mtime -1 makes hg
		 * read the file (it then records the times again). */
		if (b[off] == 'n' && (int32_t)be32(b + off + 5) >= 0 && be32(b + off + 9) != 0xffffffffu) {
			put_be32(b + off + 9, 0xffffffffu);
			marked++;
		}
		off += 17 + nl;
	}
	if (len < 40 || off != len) {
		gg_quarantine(g, fd, g->path, "dirstate",
			      "a Mercurial dirstate written in the session that the check cannot parse (hg takes the "
			      "files it records for unchanged by their size and time); `hg debugrebuilddirstate` "
			      "makes one");
		goto out;
	}
	if (marked == 0)
		goto out;
	if (g->keep) {
		note(g, "dirstate",
		     "a Mercurial dirstate written in the session, kept as it is (--keep-git-config): hg trusts "
		     "the sizes and times it records; `hg debugrebuilddirstate` makes one");
		goto out;
	}
	if (replace_file(fd, "dirstate", &st, b, len, false) < 0 && errno != EAGAIN)
		gg_quarantine(g, fd, g->path, "dirstate",
			      "a Mercurial dirstate written in the session that the check could not rewrite for hg "
			      "to compare every file again; `hg debugrebuilddirstate` makes one");
out:
	free(b);
}
