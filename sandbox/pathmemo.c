/*
 * pathmemo.c - what the mount plan has seen of the host's filesystem,
 * kept for the one plan (sbx_int.h struct sbx_memo).
 *
 * The plan looks at the same paths many times: every row of the
 * mandatory table is walked for links from / down (links.c), then
 * stat'ed, canonicalised and lstat'ed again (mountplan.c), and the rows
 * share HOME, ~/.config, the working directory. The memo answers each
 * repeated lstat(), stat(), readlink() and realpath() of one plan from
 * the first look, so every directory is looked at once per launch.
 *
 * What it may answer, and why that decides nothing a second look would
 * have decided otherwise:
 *  - A look that found something (an lstat, the target of a link) is
 *    kept for the whole plan. Only the plan itself changes the host while
 *    it is built, and only by creating placeholders where nothing was;
 *    that changes no existing entry's kind, device, inode or link target.
 *    Someone else changing the host meanwhile is the race docs/sandbox.md
 *    already names ("Symlinks": another sandbox on the same writable tree
 *    could race the check, not covered): the child binds by path well
 *    after the plan's last look, with or without the memo.
 *  - A look that failed (ENOENT, ENOTDIR, ...) is kept only until the plan
 *    creates something (sbx_memo_changed(): a new generation). A
 *    placeholder can fill a failed look under any spelling (a link or a
 *    bind mount may alias it), so every failed look is redone once after
 *    it, not only the ones under the placeholder's own name.
 *  - A path under one found missing (ENOENT, ENOTDIR) in this
 *    generation is missing the same way: the kernel fails at that
 *    ancestor before it gets further.
 *  - stat(p) is answered from lstat(p) only when p is not a link: the
 *    kernel walks the same directories for both, so they fail alike and,
 *    for a non-link, succeed alike. A link's stat() is a look of its own.
 *
 * Not thread-safe: the plan is built by one thread, before the clone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"

/* Links followed in one path before ELOOP (the kernel's limit). */
#define MEMO_MAX_LINKS 40

/* One path looked at, under its spelling (the key). */
struct memo_ent {
	uint64_t hash;      /* of path */
	int lerr;           /* lstat(): 0, or its errno */
	unsigned lgen;      /* the generation a failed lstat() was made in */
	struct stat lst;    /* lstat() when lerr is 0 */
	/* Only for a link (S_ISLNK(lst.st_mode)): */
	bool have_stat;     /* stat() looked at */
	int serr;           /* stat(): 0, or its errno */
	unsigned sgen;      /* the generation a failed stat() was made in */
	struct stat sst;    /* stat() when serr is 0 */
	char *target;       /* readlink(), NUL-terminated; NULL: not read */
	char path[];        /* the key, NUL-terminated */
};

/* Contract in sbx_int.h. */
struct sbx_memo {
	struct memo_ent **slot; /* open addressing, linear probing; NULL free */
	size_t cap;             /* a power of two; n stays under cap / 2 */
	size_t n;               /* entries held */
	unsigned gen;           /* bumped by sbx_memo_changed() */
	size_t calls;           /* lstat/stat/readlink calls made (tests) */
};

/* FNV-1a, 64 bits. */
static uint64_t memo_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

struct sbx_memo *sbx_memo_new(void)
{
	struct sbx_memo *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	m->cap = 256;
	m->slot = calloc(m->cap, sizeof(*m->slot));
	if (m->slot == NULL) {
		free(m);
		return NULL;
	}
	return m;
}

void sbx_memo_free(struct sbx_memo *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slot[i] != NULL) {
			free(m->slot[i]->target);
			free(m->slot[i]);
		}
	}
	free(m->slot);
	free(m);
}

void sbx_memo_changed(struct sbx_memo *m)
{
	if (m != NULL)
		m->gen++;
}

size_t sbx_memo_calls(const struct sbx_memo *m)
{
	return m != NULL ? m->calls : 0;
}

/* The slot of key (hash h) in slots[0..cap): its entry's, or the free
 * one where it would go. */
static size_t memo_find(struct memo_ent *const *slots, size_t cap, uint64_t h, const char *key)
{
	size_t i = (size_t)h & (cap - 1);

	while (slots[i] != NULL && (slots[i]->hash != h || strcmp(slots[i]->path, key) != 0))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Doubles the table. false when out of memory (the table stays). */
static bool memo_grow(struct sbx_memo *m)
{
	size_t cap = 2 * m->cap;
	struct memo_ent **slots = calloc(cap, sizeof(*slots));

	if (slots == NULL)
		return false;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i] != NULL)
			slots[memo_find(slots, cap, m->slot[i]->hash, m->slot[i]->path)] = m->slot[i];
	free(m->slot);
	m->slot = slots;
	m->cap = cap;
	return true;
}

/*
 * The failure an lstat() of p must give, known without asking: the
 * nearest ancestor of p the memo holds was looked at in this generation
 * and is missing (ENOENT) or under a non-directory (ENOTDIR). The kernel
 * walks p through that ancestor and fails there the same way (the
 * mandatory table's rows under a missing ~/.config, say). 0: not known.
 */
static int memo_known_missing(const struct sbx_memo *m, const char *p)
{
	char q[PATH_MAX];
	size_t len = strlen(p);
	char *slash;

	if (len >= sizeof(q))
		return 0;
	memcpy(q, p, len + 1);
	while ((slash = strrchr(q, '/')) != NULL && slash != q) {
		const struct memo_ent *a;

		*slash = '\0';
		a = m->slot[memo_find(m->slot, m->cap, memo_hash(q), q)];
		if (a == NULL)
			continue;
		if ((a->lerr == ENOENT || a->lerr == ENOTDIR) && a->lgen == m->gen)
			return a->lerr;
		return 0; /* the nearest one known exists (or failed otherwise) */
	}
	return 0;
}

/*
 * The kernel's lstat() and stat(), with AT_NO_AUTOMOUNT (round 46,
 * fix46h): plain stat(2) and lstat(2) mount an automount point they end
 * on (an autofs map's /home/bob, a browsed /net/srv), and the plan looks
 * at every denied path, the homes of other users among them. A path
 * through one (a component before the last) is still mounted by the
 * kernel's walk: the plan's paths stop at such a mount (plan.c
 * path_look()).
 */
static int memo_sys_lstat(const char *p, struct stat *st)
{
	return fstatat(AT_FDCWD, p, st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT);
}

static int memo_sys_stat(const char *p, struct stat *st)
{
	return fstatat(AT_FDCWD, p, st, AT_NO_AUTOMOUNT);
}

/* lstat() of e's path into e, in this generation. */
static void memo_look(struct sbx_memo *m, struct memo_ent *e)
{
	e->lerr = memo_known_missing(m, e->path);
	if (e->lerr == 0) {
		m->calls++;
		e->lerr = memo_sys_lstat(e->path, &e->lst) == 0 ? 0 : errno;
	}
	e->lgen = m->gen;
	e->have_stat = false;
	free(e->target);
	e->target = NULL;
}

/*
 * The entry of p, looked at (lstat) when new, or again when its failed
 * look is of an earlier generation. NULL when there is no memo or no
 * memory for the entry: the caller then asks the kernel itself.
 */
static struct memo_ent *memo_get(struct sbx_memo *m, const char *p)
{
	uint64_t h;
	size_t i, len;
	struct memo_ent *e;

	if (m == NULL)
		return NULL;
	h = memo_hash(p);
	i = memo_find(m->slot, m->cap, h, p);
	e = m->slot[i];
	if (e != NULL) {
		if (e->lerr != 0 && e->lgen != m->gen)
			memo_look(m, e);
		return e;
	}
	if (2 * (m->n + 1) > m->cap) {
		if (!memo_grow(m))
			return NULL;
		i = memo_find(m->slot, m->cap, h, p);
	}
	len = strlen(p);
	e = calloc(1, sizeof(*e) + len + 1);
	if (e == NULL)
		return NULL;
	memcpy(e->path, p, len + 1);
	e->hash = h;
	memo_look(m, e);
	m->slot[i] = e;
	m->n++;
	return e;
}

int sbx_memo_lstat(struct sbx_memo *m, const char *p, struct stat *st)
{
	struct memo_ent *e = memo_get(m, p);

	if (e == NULL)
		return memo_sys_lstat(p, st);
	if (e->lerr != 0) {
		errno = e->lerr;
		return -1;
	}
	*st = e->lst;
	return 0;
}

int sbx_memo_stat(struct sbx_memo *m, const char *p, struct stat *st)
{
	struct memo_ent *e = memo_get(m, p);

	if (e == NULL)
		return memo_sys_stat(p, st);
	/* The same walk fails the same way, and finds the same non-link. */
	if (e->lerr != 0) {
		errno = e->lerr;
		return -1;
	}
	if (!S_ISLNK(e->lst.st_mode)) {
		*st = e->lst;
		return 0;
	}
	if (!e->have_stat || (e->serr != 0 && e->sgen != m->gen)) {
		m->calls++;
		e->serr = memo_sys_stat(p, &e->sst) == 0 ? 0 : errno;
		e->sgen = m->gen;
		e->have_stat = true;
	}
	if (e->serr != 0) {
		errno = e->serr;
		return -1;
	}
	*st = e->sst;
	return 0;
}

ssize_t sbx_memo_readlink(struct sbx_memo *m, const char *p, char *buf, size_t len)
{
	struct memo_ent *e = memo_get(m, p);
	char target[PATH_MAX];
	size_t n;
	ssize_t r;

	if (e == NULL)
		return readlink(p, buf, len);
	if (e->lerr != 0) {
		errno = e->lerr;
		return -1;
	}
	if (!S_ISLNK(e->lst.st_mode)) {
		errno = EINVAL; /* readlink(2) of what is not a link */
		return -1;
	}
	if (e->target == NULL) {
		m->calls++;
		r = readlink(p, target, sizeof(target) - 1);
		if (r < 0)
			return -1; /* not kept: the caller fails on it anyway */
		target[r] = '\0';
		e->target = strdup(target);
		if (e->target == NULL) {
			n = (size_t)r < len ? (size_t)r : len;
			memcpy(buf, target, n);
			return (ssize_t)n;
		}
	}
	/* As readlink(2): at most len bytes, no NUL. */
	n = strlen(e->target);
	if (n > len)
		n = len;
	memcpy(buf, e->target, n);
	return (ssize_t)n;
}

/* Contract in sbx_int.h. */
int sbx_memo_walk(struct sbx_memo *m, const char *p, sbx_link_seen_fn on_link, void *arg,
		  char out[PATH_MAX], size_t *existing)
{
	char rest[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
	size_t clen = 0;
	unsigned links = 0;
	struct stat st;
	ssize_t n;
	char *comp, *tail;
	int rc;

	if (snprintf(rest, sizeof(rest), "%s", p) >= (int)sizeof(rest))
		goto toolong;
	out[0] = '\0'; /* "" is "/": out never ends with a slash */
	tail = rest;
	for (;;) {
		bool slash;

		/* out: an existing directory, every component a non-link. */
		while (*tail == '/')
			tail++;
		if (*tail == '\0')
			break;
		comp = tail;
		tail += strcspn(tail, "/");
		slash = *tail == '/';
		if (slash)
			*tail++ = '\0';
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *s = strrchr(out, '/');

			if (s != NULL)
				*s = '\0';
			clen = strlen(out);
			continue;
		}
		if (snprintf(next, sizeof(next), "%s/%s", out, comp) >= (int)sizeof(next))
			goto toolong;
		if (sbx_memo_lstat(m, next, &st) < 0) {
			int e = errno;

			/* What would be created: the existing part, then the rest
			 * as written (after every link followed so far). */
			if (existing != NULL) {
				*existing = clen;
				if (snprintf(out + clen, PATH_MAX - clen, "/%s%s%s", comp, slash ? "/" : "", tail) >=
				    (int)(PATH_MAX - clen))
					goto toolong;
			}
			errno = e;
			return SBX_WALK_MISSING; /* errno: the look's */
		}
		if (!S_ISLNK(st.st_mode)) {
			/* A non-directory with more after it (even a '/'). */
			if (slash && !S_ISDIR(st.st_mode)) {
				errno = ENOTDIR;
				return SBX_WALK_MISSING;
			}
			clen = strlen(next);
			memcpy(out, next, clen + 1);
			continue;
		}
		if (on_link != NULL && (rc = on_link(arg, clen ? out : "/", next)) != 0)
			return rc;
		if (++links > MEMO_MAX_LINKS) {
			errno = ELOOP;
			return -1;
		}
		n = sbx_memo_readlink(m, next, target, sizeof(target) - 1);
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = ENOENT; /* the kernel's answer for an empty link */
			return SBX_WALK_MISSING;
		}
		target[n] = '\0';
		/* The rest of the walk: the link's target, then what followed. */
		if (snprintf(next, sizeof(next), "%s%s%s", target, slash ? "/" : "", tail) >=
		    (int)sizeof(next))
			goto toolong;
		memcpy(rest, next, strlen(next) + 1);
		tail = rest;
		if (target[0] == '/') {
			out[0] = '\0';
			clen = 0;
		}
	}
	if (clen == 0)
		memcpy(out, "/", 2);
	return 0;
toolong:
	errno = ENAMETOOLONG;
	return -1;
}

char *sbx_memo_realpath(struct sbx_memo *m, const char *p)
{
	char real[PATH_MAX], *out;

	if (m == NULL || p[0] != '/')
		return realpath(p, NULL);
	if (sbx_memo_walk(m, p, NULL, NULL, real, NULL) != 0)
		return NULL; /* errno: realpath(3)'s */
	out = strdup(real);
	if (out == NULL)
		errno = ENOMEM;
	return out;
}
