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
 * (each within GO_PACK_DEADLINE_MS). The session cannot choose what the
 * bounds are spent on (review of round 34, A1 and A5): an .idx and .pack
 * that do not agree (object count, the pack checksum the .idx records)
 * move aside without the pack being read; a loose object's header is
 * read first, one inflating past the size it declares stops there; both
 * kinds go smallest first; and what is past a bound moves aside
 * unverified (fail closed), with a line saying how to get it back. A
 * session that fetches more than 1 GiB of packs has those past it moved
 * aside too (the cost of failing closed). Named only: git failing or
 * late on a pack, and past GO_LOOSE_STAT_MAX or GO_PACKS_MAX.
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

#include "base/hex.h"
#include "base/knob.h"
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

/* The bounds, lowered (never raised) by PASSAVANT_SBX_OBJ_BYTES_MAX
 * in passavant's own environment (the tests' knob, as the other
 * PASSAVANT_SBX_* ones; the session does not set it). */
static uint64_t go_knob(uint64_t dflt)
{
	return knob_lowered("PASSAVANT_SBX_OBJ_BYTES_MAX", dflt);
}

static uint64_t go_pack_max(void)
{
	return go_knob(GO_PACK_BYTES_MAX);
}

static uint64_t go_loose_max(void)
{
	return go_knob(GO_LOOSE_BYTES_MAX);
}

/* A loose object written in the session, to hash: its fan-out
 * directory, its name there, and the size its header declares. */
struct go_loose {
	char xx[3];
	char name[65];
	uint64_t size;
};

/* What one git directory's look did not verify (named at its end). */
struct go_state {
	size_t hsz;
	struct go_loose *loose; /* to hash, smallest first */
	size_t nloose, loose_cap;
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
			if (!in_head && got > want)
				goto out; /* more than its header says: corrupt, and no more inflated */
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

/*
 * The size the header of the loose object open as fd declares, inflating
 * its first bytes only. 1: *size; 0: no "TYPE SIZE\0" header git reads;
 * -1: read error.
 */
static int loose_declared(int fd, uint64_t *size)
{
	unsigned char in[512], out[128];
	z_stream z = {0};
	ssize_t r;
	int zr, rc = 0;
	size_t have;
	char *nul, *sp, *end;
	unsigned long long n;

	do
		r = read(fd, in, sizeof(in));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (inflateInit(&z) != Z_OK)
		return -1;
	z.next_in = in;
	z.avail_in = (uInt)r;
	z.next_out = out;
	z.avail_out = sizeof(out) - 1;
	zr = inflate(&z, Z_SYNC_FLUSH);
	have = sizeof(out) - 1 - z.avail_out;
	(void)inflateEnd(&z);
	if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
		return 0;
	out[have] = '\0';
	nul = memchr(out, '\0', have + 1);
	if (nul == NULL || (size_t)(nul - (char *)out) >= have || (sp = memchr(out, ' ', (size_t)(nul - (char *)out))) == NULL ||
	    sp[1] < '0' || sp[1] > '9')
		return 0;
	errno = 0;
	n = strtoull(sp + 1, &end, 10);
	if (errno == 0 && end == nul) {
		*size = n;
		rc = 1;
	}
	return rc;
}

static int cmp_loose(const void *a, const void *b)
{
	const struct go_loose *x = a, *y = b;
	int c;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	c = strcmp(x->xx, y->xx);
	return c != 0 ? c : strcmp(x->name, y->name);
}

/* One fan-out directory objects/XX (open as dfd, its path dir): links
 * and other non-regular files, and files whose header git cannot read,
 * move aside; the rest written in the session are listed to hash. */
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
		struct statx sx;
		uint64_t size = 0;
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
		fd = openat(dirfd(dp), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			gg_quarantine(g, dirfd(dp), dir, de->d_name,
				      "a loose object written in the session that the check cannot read to hash");
			continue;
		}
		r = loose_declared(fd, &size);
		(void)close(fd);
		if (r < 0) {
			gg_quarantine(g, dirfd(dp), dir, de->d_name,
				      "a loose object written in the session that the check cannot read to hash");
			continue;
		}
		if (r == 0) {
			gg_quarantine(g, dirfd(dp), dir, de->d_name,
				      "a loose object written in the session that does not inflate or parse (git "
				      "fsck: corrupt)");
			continue;
		}
		if (s->nloose == s->loose_cap) {
			size_t c = s->loose_cap ? 2 * s->loose_cap : 64;
			struct go_loose *nv = realloc(s->loose, c * sizeof(*nv));

			if (nv == NULL) {
				gg_quarantine(g, dirfd(dp), dir, de->d_name,
					      "a loose object written in the session that the check has no memory "
					      "to list: moved aside unverified (git cat-file -p of its name from the "
					      "moved file's content checks it)");
				continue;
			}
			s->loose = nv;
			s->loose_cap = c;
		}
		memcpy(s->loose[s->nloose].xx, xx, 3);
		/* An object's name (38 or 62 hex digits) fits; a longer name
		 * git never reads as an object. */
		if (strlen(de->d_name) >= sizeof(s->loose[s->nloose].name))
			continue;
		memcpy(s->loose[s->nloose].name, de->d_name, strlen(de->d_name) + 1);
		s->loose[s->nloose].size = size;
		s->nloose++;
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

/* A pack to verify: its base name (owned by the list of bases) and the
 * size of its .pack. */
struct go_pack {
	const char *base;
	uint64_t size;
};

static int cmp_pack(const void *a, const void *b)
{
	const struct go_pack *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return strcmp(x->base, y->base);
}

/* n bytes at off of the file name in dfd into buf; false short. */
static bool read_at(int dfd, const char *name, off_t off, void *buf, size_t n)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return false;
	do
		r = pread(fd, buf, n, off);
	while (r < 0 && errno == EINTR);
	(void)close(fd);
	return r == (ssize_t)n;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * Whether the .idx and .pack agree as git checks when it opens a pack
 * (a few bytes of each, the pack not read): the .idx's header (v2, or
 * v1's bare fan-out table) and a size that fits its object count, the
 * pack's "PACK" header with the same count, and the pack's trailing
 * checksum equal to the one the .idx records. git does not read objects
 * of a pack that fails this, so moving it aside costs the user nothing.
 */
static bool pack_agrees(int dfd, const char *idx, const char *pack, uint64_t psize, size_t hsz)
{
	unsigned char h[8], fan[4], ph[12], a[32], b[32];
	struct stat st;
	uint64_t isize, nr, min;
	off_t fo;
	int fd;

	fd = openat(dfd, idx, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0) {
		(void)close(fd);
		return false;
	}
	(void)close(fd);
	isize = (uint64_t)st.st_size;
	if (!read_at(dfd, idx, 0, h, sizeof(h)))
		return false;
	if (memcmp(h, "\377tOc", 4) == 0) {
		if (be32(h + 4) != 2)
			return false;
		fo = 8 + 255 * 4;
	} else {
		fo = 255 * 4;
	}
	if (!read_at(dfd, idx, fo, fan, sizeof(fan)))
		return false;
	nr = be32(fan);
	min = fo == 8 + 255 * 4 ? 8 + 1024 + nr * (hsz + 8) + 2 * hsz : 1024 + nr * (hsz + 4) + 2 * hsz;
	if (isize < min || (fo == 255 * 4 && isize != min) || (isize - min) % 8 != 0)
		return false;
	if (psize < 12 + hsz || !read_at(dfd, pack, 0, ph, sizeof(ph)) || memcmp(ph, "PACK", 4) != 0 ||
	    (be32(ph + 4) != 2 && be32(ph + 4) != 3) || be32(ph + 8) != nr)
		return false;
	if (!read_at(dfd, pack, (off_t)(psize - hsz), a, hsz) || !read_at(dfd, idx, (off_t)(isize - 2 * hsz), b, hsz))
		return false;
	return memcmp(a, b, hsz) == 0;
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
	struct go_pack *packs = NULL;
	size_t nb = 0, cap = 0, np = 0;
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
	/* Each pack (its .idx and .pack regular files) with its size, then
	 * smallest first: the session cannot choose what the bound is spent
	 * on before its forged pack by a name that sorts first. */
	if (nb > 0 && (packs = calloc(nb, sizeof(*packs))) == NULL)
		cut = true;
	for (size_t i = 0; packs != NULL && i < nb; i++) {
		char pack[NAME_MAX + 1], idx[NAME_MAX + 1];
		struct stat ps, is;

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
		packs[np].base = bases[i];
		packs[np].size = (uint64_t)ps.st_size;
		np++;
	}
	if (np > 0)
		qsort(packs, np, sizeof(*packs), cmp_pack);
	for (size_t i = 0; i < np; i++) {
		char pack[NAME_MAX + 1], idx[NAME_MAX + 1], path[PATH_MAX], what[1024];
		const char *why = NULL;
		int r;

		(void)snprintf(pack, sizeof(pack), "%s.pack", packs[i].base);
		(void)snprintf(idx, sizeof(idx), "%s.idx", packs[i].base);
		if (!gg_join(path, sizeof(path), dir, pack))
			continue;
		/* An .idx and .pack that do not agree (object count, the pack's
		 * checksum the .idx records): git does not use the pack either;
		 * moved aside without reading the pack, nothing spent. */
		if (!pack_agrees(dirfd(dp), idx, pack, packs[i].size, s->hsz)) {
			gg_quarantine(g, dirfd(dp), dir, idx,
				      "the index of a pack written in the session that does not agree with its pack "
				      "(object count or checksum; checked without reading the pack)");
			gg_quarantine(g, dirfd(dp), dir, pack, "a pack written in the session that does not agree with its index");
			continue;
		}
		if (g->obj_pack_spent + packs[i].size > go_pack_max()) {
			/* Fail closed: named only, the pack stayed, and a session
			 * could pass a forged one by writing enough before it. */
			snprintf(what, sizeof(what),
				 "a pack written in the session past the %llu bytes of packs the check verifies in "
				 "one run, moved aside unverified (git reads its objects without hashing them "
				 "again); to get it back: git index-pack --verify %s, and if it says nothing, "
				 "rename its .idx and .pack back",
				 (unsigned long long)go_pack_max(), pack);
			gg_quarantine(g, dirfd(dp), dir, idx, what);
			gg_quarantine(g, dirfd(dp), dir, pack, "a pack moved aside unverified, with its index");
			continue;
		}
		g->obj_pack_spent += packs[i].size;
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
	free(packs);
	if (cut)
		go_name(g, dir, "",
			"pack files written in the session past the " GG_STR(GO_PACKS_MAX) " the check lists (or "
			"out of memory): those are not verified (git fsck checks them)");
	for (size_t i = 0; i < nb; i++)
		free(bases[i]);
	free(bases);
	(void)closedir(dp);
}

/*
 * The loose objects listed, smallest declared size first (the session
 * cannot choose what the bound is spent on before its rewrite by the
 * order readdir gives), inflated and hashed. One whose declared size is
 * past what is left of the bound moves aside unverified without being
 * inflated (git writes a loose object that large only for a file that
 * large added in the session; `git hash-object -w` of the file writes it
 * again); one that inflates to more than it declares stops there.
 */
static void hash_loose(struct gg *g, struct go_state *s, int ofd, const char *odir)
{
	if (s->nloose > 0)
		qsort(s->loose, s->nloose, sizeof(*s->loose), cmp_loose);
	for (size_t i = 0; i < s->nloose; i++) {
		const struct go_loose *l = &s->loose[i];
		unsigned char want[32], got[32];
		char dir[PATH_MAX], what[512];
		uint64_t inflated = 0, max = go_loose_max();
		int dfd, fd, r;

		if (!gg_join(dir, sizeof(dir), odir, l->xx))
			continue;
		dfd = openat(ofd, l->xx, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		if (g->obj_loose_spent > max || l->size > max - g->obj_loose_spent) {
			snprintf(what, sizeof(what),
				 "a loose object written in the session whose header declares %llu bytes, past the "
				 "%llu the check inflates in one run: moved aside unverified (git reads it without "
				 "hashing it again); to get it back: rename it back and run git fsck (which hashes it), "
				 "or git hash-object -w the file it held",
				 (unsigned long long)l->size, (unsigned long long)max);
			gg_quarantine(g, dfd, dir, l->name, what);
			(void)close(dfd);
			continue;
		}
		fd = openat(dfd, l->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			gg_quarantine(g, dfd, dir, l->name,
				      "a loose object written in the session that the check cannot read to hash");
			(void)close(dfd);
			continue;
		}
		r = gg_loose_hash(fd, s->hsz, got, &inflated);
		(void)close(fd);
		g->obj_loose_spent += inflated;
		want[0] = (unsigned char)(hex_digit((unsigned char)l->xx[0]) << 4 | hex_digit((unsigned char)l->xx[1]));
		for (size_t k = 0; k + 1 < s->hsz; k++)
			want[k + 1] = (unsigned char)(hex_digit((unsigned char)l->name[2 * k]) << 4 | hex_digit((unsigned char)l->name[2 * k + 1]));
		if (r < 0)
			gg_quarantine(g, dfd, dir, l->name,
				      "a loose object written in the session that the check cannot read to hash");
		else if (r == 0)
			gg_quarantine(g, dfd, dir, l->name,
				      "a loose object written in the session that does not inflate or parse (git "
				      "fsck: corrupt)");
		else if (memcmp(want, got, s->hsz) != 0)
			gg_quarantine(g, dfd, dir, l->name,
				      "a loose object rewritten in the session: its content does not hash to its name "
				      "(checkout, archive and reset --hard would give the new content while status "
				      "and diff show none)");
		(void)close(dfd);
	}
	free(s->loose);
	s->loose = NULL;
	s->nloose = s->loose_cap = 0;
}

void gg_check_objects(struct gg *g, int gfd, bool all)
{
	struct go_state s = {0};
	char odir[PATH_MAX], sub[PATH_MAX];
	int ofd, ofd2, pfd;
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
	ofd2 = fcntl(ofd, F_DUPFD_CLOEXEC, 0);
	if (ofd2 < 0) {
		(void)close(ofd);
		return;
	}
	dp = fdopendir(ofd);
	if (dp == NULL) {
		(void)close(ofd);
		(void)close(ofd2);
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
	hash_loose(g, &s, ofd2, odir);
	(void)close(ofd2);
}
