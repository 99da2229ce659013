/*
 * gitobjects.c - objects whose stored bytes are not the bytes that hash
 * to their name (round 33 of the attack, family R: c5, c5b). Part of the
 * post-run check (SPEC §3.3), called for each git directory from
 * gg_check_views(). Git never hashes an object again when it reads it:
 * a loose object rewritten in place, or a new pack whose .idx claims an
 * object's name for other content, changes what checkout, archive, reset
 * --hard, worktree add and a local clone give, while status, diff and
 * log -p (which compare names) stay clean.
 *
 * Only what the session wrote is looked at, known by the kernel's ctime
 * (which no process sets back): in objects/, every loose object file
 * (objects/XX/REST, REST of 38 or 62 lower-case hex digits) whose ctime
 * is in the session is inflated and hashed (SHA-1, or SHA-256 with
 * extensions.objectFormat) with its "TYPE SIZE\0" header, and compared
 * with its name; a mismatch, a file that does not inflate or parse, a
 * link or a non-regular file moves aside. A fan-out directory made a
 * link moves aside. In objects/pack, a pack any of whose files (.pack,
 * .idx, .rev, .bitmap, .keep, .promisor, .mtimes) was written in the
 * session is verified against its index by the host's git (`git
 * index-pack --verify`, run outside any repository: it hashes every
 * object of the pack, resolves its deltas, and compares the index it
 * would write with the .idx, byte for byte); a pack that fails moves
 * aside with its .idx. A .pack or .idx made a link moves aside.
 *
 * What git does not read when it looks an object up is not looked at:
 * objects/info/packs (dumb HTTP clients of this repository only),
 * fan-out directories of another case or length, tmp_obj_*, tmp_pack_*,
 * tmp_idx_*, incoming-* (a push's quarantine, read only during that push)
 * and a .pack without .idx (gitcopies.c looks for hidden files' content
 * there at start). objects/info/alternates, the commit-graph, the
 * multi-pack-index, .bitmap and .rev are gitviews.c's (moved aside).
 *
 * The cost is bounded by what the session wrote: a stat of each loose
 * object file (no read unless written in the session), GO_LOOSE_BYTES_MAX
 * inflated in one walk, GO_PACK_BYTES_MAX of packs verified in one walk
 * (each within GO_PACK_DEADLINE_MS). What is past a bound is named as not
 * verified (fail loud): `git fsck` checks it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "sandbox/gitguard_int.h"

/* Inflated bytes of loose objects written in the session hashed in one
 * walk at most (about 2 s of SHA-1 and inflate here). */
#define GO_LOOSE_BYTES_MAX ((uint64_t)1 << 30)
/* Pack bytes verified in one walk at most (git index-pack --verify:
 * about 1 s per 50 MB here). */
#define GO_PACK_BYTES_MAX ((uint64_t)1 << 30)
/* How long one verification may take. */
#define GO_PACK_DEADLINE_MS 120000
/* Loose object files stat'ed in one git directory at most. */
#define GO_LOOSE_STAT_MAX 1000000
/* Pack files named in one objects/pack at most (distinct bases). */
#define GO_PACKS_MAX 4096

/* What one git directory's look did not verify (named at its end). */
struct go_state {
	size_t hsz;
	unsigned long loose_skipped; /* past GO_LOOSE_BYTES_MAX */
	bool stat_cut;               /* past GO_LOOSE_STAT_MAX */
	unsigned long nstat;
};

/* Names dir/name (dir alone with name "") with what: a line, nothing
 * moved, the status unchanged (as .git/shallow's). */
static void go_name(struct gg *g, const char *dir, const char *name, const char *what)
{
	struct sbx_git_finding f = {0};
	char path[PATH_MAX];

	if (name[0] == '\0')
		snprintf(path, sizeof(path), "%s", dir);
	else if (!gg_join(path, sizeof(path), dir, name))
		snprintf(path, sizeof(path), "%.256s/...", dir);
	f.path = path;
	f.setting = what;
	f.named = true;
	g->report(g->arg, &f);
}

static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[n] == '\0';
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* Contract in gitguard_int.h. */
int gg_loose_hash(int fd, size_t hsz, unsigned char *out, uint64_t *inflated)
{
	unsigned char in[65536], buf[65536];
	z_stream z = {0};
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	char head[64];
	size_t hl = 0;
	bool in_head = true, ended = false;
	uint64_t want = 0, got = 0;
	unsigned int n = 0;
	int rc = 0, zr = Z_OK;

	if (ctx == NULL || inflateInit(&z) != Z_OK ||
	    EVP_DigestInit_ex(ctx, hsz == 32 ? EVP_sha256() : EVP_sha1(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		ssize_t r = read(fd, in, sizeof(in));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -1;
			goto out;
		}
		if (r == 0)
			break;
		if (ended)
			goto out; /* bytes after the stream: corrupt */
		z.next_in = in;
		z.avail_in = (uInt)r;
		while (z.avail_in > 0 && !ended) {
			size_t have, off = 0;

			z.next_out = buf;
			z.avail_out = sizeof(buf);
			zr = inflate(&z, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
				goto out;
			have = sizeof(buf) - z.avail_out;
			*inflated += have;
			if (zr == Z_STREAM_END)
				ended = true;
			while (in_head && off < have) {
				char c = (char)buf[off++];

				if (hl >= sizeof(head) - 1)
					goto out;
				head[hl++] = c;
				if (c == '\0') {
					char *sp = memchr(head, ' ', hl), *end;
					unsigned long long sz;

					if (sp == NULL || sp[1] < '0' || sp[1] > '9' || (sp[1] == '0' && sp[2] != '\0'))
						goto out;
					*sp = '\0';
					if (strcmp(head, "blob") != 0 && strcmp(head, "tree") != 0 &&
					    strcmp(head, "commit") != 0 && strcmp(head, "tag") != 0)
						goto out;
					errno = 0;
					sz = strtoull(sp + 1, &end, 10);
					if (errno != 0 || *end != '\0')
						goto out;
					want = sz;
					*sp = ' ';
					in_head = false;
				}
			}
			got += have - off;
			if (EVP_DigestUpdate(ctx, buf, have) != 1) {
				errno = ENOMEM;
				rc = -1;
				goto out;
			}
			if (zr == Z_BUF_ERROR && z.avail_in > 0)
				goto out;
		}
		if (ended && z.avail_in > 0)
			goto out;
	}
	if (ended && !in_head && got == want && EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == hsz)
		rc = 1;
out:
	(void)inflateEnd(&z);
	EVP_MD_CTX_free(ctx);
	return rc;
}

/* One fan-out directory objects/XX (open as dfd, its path dir). */
static void check_fanout(struct gg *g, struct go_state *s, int dfd, const char *dir, const char *xx, bool all)
{
	DIR *dp = fdopendir(dfd);
	struct dirent *de;

	if (dp == NULL) {
		(void)close(dfd);
		return;
	}
	while ((de = readdir(dp)) != NULL) {
		size_t n = strlen(de->d_name);
		unsigned char want[32], got[32];
		struct statx sx;
		uint64_t inflated = 0;
		int fd, r;

		if (n != s->hsz * 2 - 2 || !lower_hex(de->d_name, n))
			continue; /* not a name git looks up */
		if (++s->nstat > GO_LOOSE_STAT_MAX) {
			s->stat_cut = true;
			break;
		}
		if (gg_statx(dirfd(dp), de->d_name, AT_SYMLINK_NOFOLLOW, &sx) < 0)
			continue;
		if (!all && !gg_ts_fresh(g, &sx.stx_ctime) &&
		    !(S_ISLNK(sx.stx_mode) && gg_changed(g, dirfd(dp), de->d_name)))
			continue;
		if (S_ISLNK(sx.stx_mode)) {
			gg_quarantine(g, dirfd(dp), dir, de->d_name,
				      "a link where git keeps a loose object (git reads what it points to as the object)");
			continue;
		}
		if (!S_ISREG(sx.stx_mode)) {
			gg_quarantine(g, dirfd(dp), dir, de->d_name, "not a regular file where git keeps a loose object");
			continue;
		}
		if (g->obj_loose_spent >= GO_LOOSE_BYTES_MAX) {
			s->loose_skipped++;
			continue;
		}
		fd = openat(dirfd(dp), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			gg_quarantine(g, dirfd(dp), dir, de->d_name,
				      "a loose object written in the session that the check cannot read to hash");
			continue;
		}
		r = gg_loose_hash(fd, s->hsz, got, &inflated);
		(void)close(fd);
		g->obj_loose_spent += inflated;
		want[0] = (unsigned char)(hexval(xx[0]) << 4 | hexval(xx[1]));
		for (size_t i = 0; i + 1 < s->hsz; i++)
			want[i + 1] = (unsigned char)(hexval(de->d_name[2 * i]) << 4 | hexval(de->d_name[2 * i + 1]));
		if (r < 0)
			gg_quarantine(g, dirfd(dp), dir, de->d_name,
				      "a loose object written in the session that the check cannot read to hash");
		else if (r == 0)
			gg_quarantine(g, dirfd(dp), dir, de->d_name,
				      "a loose object written in the session that does not inflate or parse (git "
				      "fsck: corrupt)");
		else if (memcmp(want, got, s->hsz) != 0)
			gg_quarantine(g, dirfd(dp), dir, de->d_name,
				      "a loose object rewritten in the session: its content does not hash to its name "
				      "(checkout, archive and reset --hard would give the new content while status "
				      "and diff show none)");
	}
	(void)closedir(dp);
}

/* Pack suffixes whose file, written in the session, has the pack verified. */
static const char *const go_suffixes[] = {".pack", ".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes"};

/* base of name (a pack file's name without its suffix) into out; false
 * for no pack file. The base may start with '.' or be empty: git's walk
 * of objects/pack skips only . and .., and takes any NAME.idx (".idx"
 * and ".pack-x.idx" included) with its NAME.pack. */
static bool pack_base(const char *name, char *out, size_t len)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(go_suffixes) / sizeof(go_suffixes[0]); i++) {
		size_t sl = strlen(go_suffixes[i]);

		if (n >= sl && strcmp(name + n - sl, go_suffixes[i]) == 0 && n - sl < len) {
			memcpy(out, name, n - sl);
			out[n - sl] = '\0';
			return true;
		}
	}
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * git index-pack --verify of the pack at path (hsz: its object format),
 * within GO_PACK_DEADLINE_MS. 1: it verified; 0: git said no; -1: not
 * verified (*why).
 */
static int verify_pack(const struct gg *g, const char *path, size_t hsz, const char **why)
{
	char *argv[] = {"git", "index-pack", "--verify", hsz == 32 ? "--object-format=sha256" : "--object-format=sha1",
			(char *)path, NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"LC_ALL=C", "HOME=/nonexistent", NULL};
	struct gg_run r;
	struct timespec t0, now;
	char sink[4096];
	int st;

	if (g->git[0] == '\0') {
		*why = "git is not on PATH to verify it";
		return -1;
	}
	if (gg_git_spawn(g, argv, envp, &r) < 0) {
		*why = "cannot run git to verify it";
		return -1;
	}
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pf = {.fd = r.fd, .events = POLLIN};
		long left;
		int pr;
		ssize_t n;

		(void)clock_gettime(CLOCK_MONOTONIC, &now);
		left = GO_PACK_DEADLINE_MS - ((now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000L);
		if (left <= 0 || (pr = poll(&pf, 1, (int)left)) == 0) {
			gg_config_abandon(&r);
			*why = "git did not verify it within " GG_STR(GO_PACK_DEADLINE_MS) " ms";
			return -1;
		}
		if (pr < 0 && errno == EINTR)
			continue;
		n = read(r.fd, sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
	}
	(void)close(r.fd);
	r.fd = -1;
	while (waitpid(r.pid, &st, 0) < 0 && errno == EINTR)
		;
	r.pid = -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		*why = "cannot run git to verify it";
		return -1;
	}
	return WIFEXITED(st) ? 0 : -1;
}

/* objects/pack (open as pfd, its path dir): each pack a file of which
 * was written in the session, verified. */
static void check_packs(struct gg *g, struct go_state *s, int pfd, const char *dir, bool all)
{
	DIR *dp = fdopendir(pfd);
	struct dirent *de;
	char **bases = NULL, base[NAME_MAX + 1];
	size_t nb = 0, cap = 0;
	bool cut = false;

	if (dp == NULL) {
		(void)close(pfd);
		return;
	}
	while ((de = readdir(dp)) != NULL) {
		if (gg_is_quarantine_name(de->d_name) || !pack_base(de->d_name, base, sizeof(base)) ||
		    (!all && !gg_changed(g, dirfd(dp), de->d_name)))
			continue;
		if (nb == GO_PACKS_MAX) {
			cut = true;
			break;
		}
		if (nb == cap) {
			size_t c = cap ? 2 * cap : 16;
			char **nv = realloc(bases, c * sizeof(*nv));

			if (nv == NULL) {
				cut = true;
				break;
			}
			bases = nv;
			cap = c;
		}
		if ((bases[nb] = strdup(base)) == NULL) {
			cut = true;
			break;
		}
		nb++;
	}
	if (nb > 0)
		qsort(bases, nb, sizeof(*bases), cmp_str);
	for (size_t i = 0; i < nb; i++) {
		char pack[NAME_MAX + 1], idx[NAME_MAX + 1], path[PATH_MAX], what[320];
		struct stat ps, is;
		const char *why = NULL;
		int r;

		if (i > 0 && strcmp(bases[i], bases[i - 1]) == 0)
			continue;
		if ((size_t)snprintf(pack, sizeof(pack), "%s.pack", bases[i]) >= sizeof(pack) ||
		    (size_t)snprintf(idx, sizeof(idx), "%s.idx", bases[i]) >= sizeof(idx))
			continue;
		/* git takes a pack by its .idx; none: no object of it is read */
		if (fstatat(dirfd(dp), idx, &is, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(is.st_mode) || !S_ISREG(is.st_mode)) {
			gg_quarantine(g, dirfd(dp), dir, idx,
				      "a pack index that is a link or not a regular file, written in the session");
			continue;
		}
		if (fstatat(dirfd(dp), pack, &ps, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(ps.st_mode) || !S_ISREG(ps.st_mode)) {
			gg_quarantine(g, dirfd(dp), dir, pack,
				      "a pack that is a link or not a regular file, written in the session");
			gg_quarantine(g, dirfd(dp), dir, idx, "the index of a pack moved aside");
			continue;
		}
		if (!gg_join(path, sizeof(path), dir, pack))
			continue;
		if (g->obj_pack_spent + (uint64_t)ps.st_size > GO_PACK_BYTES_MAX) {
			go_name(g, dir, pack,
				"a pack written in the session, not verified: past the 1 GiB of packs the check "
				"verifies in one run (git reads its objects without hashing them again; git fsck or "
				"git index-pack --verify checks it)");
			continue;
		}
		g->obj_pack_spent += (uint64_t)ps.st_size;
		r = verify_pack(g, path, s->hsz, &why);
		if (r == 1)
			continue;
		if (r < 0) {
			snprintf(what, sizeof(what),
				 "a pack written in the session, not verified: %s (git reads its objects without "
				 "hashing them again; git fsck checks it)",
				 why != NULL ? why : "git failed");
			go_name(g, dir, pack, what);
			continue;
		}
		gg_quarantine(g, dirfd(dp), dir, idx,
			      "the index of a pack written in the session that does not verify (git index-pack "
			      "--verify: its objects do not hash to the names the index gives them, or the pack is "
			      "corrupt): git would read other content under those names");
		gg_quarantine(g, dirfd(dp), dir, pack, "a pack written in the session that does not verify against its index");
	}
	if (cut)
		go_name(g, dir, "",
			"pack files written in the session past the " GG_STR(GO_PACKS_MAX) " the check lists (or "
			"out of memory): those are not verified (git fsck checks them)");
	for (size_t i = 0; i < nb; i++)
		free(bases[i]);
	free(bases);
	(void)closedir(dp);
}

void gg_check_objects(struct gg *g, int gfd, bool all)
{
	struct go_state s = {0};
	char odir[PATH_MAX], sub[PATH_MAX];
	int ofd, pfd;
	DIR *dp;
	struct dirent *de;

	if (g->record != NULL)
		return;
	ofd = openat(gfd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ofd < 0)
		return;
	if (!gg_join(odir, sizeof(odir), g->path, "objects")) {
		(void)close(ofd);
		return;
	}
	s.hsz = gg_hash_size(gfd);
	pfd = openat(ofd, "pack", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd >= 0 && gg_join(sub, sizeof(sub), odir, "pack"))
		check_packs(g, &s, pfd, sub, all);
	else if (pfd >= 0)
		(void)close(pfd);
	dp = fdopendir(ofd);
	if (dp == NULL) {
		(void)close(ofd);
		return;
	}
	while ((de = readdir(dp)) != NULL && !s.stat_cut) {
		struct stat st;
		int dfd;

		if (strlen(de->d_name) != 2 || !lower_hex(de->d_name, 2) ||
		    fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			if (all || gg_changed(g, dirfd(dp), de->d_name))
				gg_quarantine(g, dirfd(dp), odir, de->d_name,
					      "a link where git keeps loose objects (git reads objects from where it "
					      "points)");
			continue;
		}
		if (!S_ISDIR(st.st_mode) || !gg_join(sub, sizeof(sub), odir, de->d_name))
			continue;
		dfd = openat(dirfd(dp), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		check_fanout(g, &s, dfd, sub, de->d_name, all);
	}
	(void)closedir(dp);
	if (s.stat_cut)
		go_name(g, odir, "",
			"more than " GG_STR(GO_LOOSE_STAT_MAX) " loose objects: those past them were not checked for "
			"rewrites in the session (git fsck checks them)");
	if (s.loose_skipped > 0) {
		char what[256];

		snprintf(what, sizeof(what),
			 "%lu loose objects written in the session not verified: past the 1 GiB the check hashes "
			 "in one run (git fsck checks them)",
			 s.loose_skipped);
		go_name(g, odir, "", what);
	}
}
