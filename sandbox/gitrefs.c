/*
 * gitrefs.c - refs the session moved, made or removed (round 33 of the
 * attack, family R). Part of the post-run check (SPEC §3.3): the walk
 * before the session notes the refs of each git directory (its loose
 * refs under refs/ and its packed-refs, by name and value); after the
 * session, those of the same git directory are read again and every
 * difference is named in a line (old -> new), by kind: a tag moved or
 * removed (what the host checks out or releases under that name is no
 * longer what it was), a remote-tracking ref (git status says "up to
 * date with origin/main" against it while git push sends the session's
 * commits), notes (git log shows refs/notes/commits under each commit),
 * a branch or another ref. Nothing is moved: a session may fetch through
 * the proxy and commit. Replace refs are gitviews.c's (moved aside).
 * A notes ref changed in the session whose new notes hold control
 * characters (git log prints them raw to the terminal, as git's prompt
 * does HEAD) moves aside when loose (to the top of the git directory
 * first, as a replace ref), or is named as to remove when packed: the
 * host's git lists what the session added (`git diff OLD NEW`, no
 * external diff, no textconv, within GG_GIT_DEADLINE_MS).
 *
 * The cost: packed-refs read and refs/ walked once at start and once
 * after, in each git directory of the writable trees (no object read).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio.h"
#include "sandbox/gitguard_int.h"

/* Refs read in one git directory at most (loose and packed); past it
 * the list is cut and the line says the comparison may be incomplete. */
#define GR_REFS_MAX 200000
/* A packed-refs larger than this is not read (cut). */
#define GR_PACKED_MAX ((size_t)256 * 1024 * 1024)
/* Directory depth below refs/ walked. */
#define GR_DEPTH 16
/* The bytes of a loose ref's value kept (an object name, or "ref: ..."). */
#define GR_VALUE_MAX 256
/* Notes refs whose new notes git lists, in one git directory at most. */
#define GR_NOTES_CHECKED 8
/* Refs named in one line at most. */
#define GR_SHOWN 4

/* The refs of one git directory as read: packed ones point into the
 * packed-refs text (split in place), loose ones into text. */
struct gr_list {
	char *packed;      /* packed-refs, its separators made NULs */
	bool borrowed;     /* packed is the start's (not to free) */
	struct gg_pkid pk; /* which packed-refs that was */
	char *text;        /* loose refs: "name\0value\0"... */
	size_t len, cap;
	struct gg_refent *v; /* sorted by name, merged (gr_name()) */
	size_t n, capn;
	struct gg_refent *lv; /* loose ones, as read */
	size_t ln, lcap;
	bool cut;          /* not every ref read (GR_REFS_MAX, depth, size) */
	bool nomem;
};

static const char *gr_str(const char *packed, const char *text, const struct gg_refent *e, size_t off)
{
	return (e->loose ? text : packed) + off;
}

static size_t gr_put(struct gr_list *l, const char *s, size_t n)
{
	size_t at = l->len;

	if (l->len + n + 1 > l->cap) {
		size_t cap = l->cap ? l->cap : 4096;
		char *t;

		while (cap < l->len + n + 1)
			cap *= 2;
		t = realloc(l->text, cap);
		if (t == NULL) {
			l->nomem = true;
			return (size_t)-1;
		}
		l->text = t;
		l->cap = cap;
	}
	memcpy(l->text + l->len, s, n);
	l->text[l->len + n] = '\0';
	l->len += n + 1;
	return at;
}

/* Appends e to the array *v (*n, *cap); false on ENOMEM or past
 * GR_REFS_MAX (then cut). */
static bool gr_push(struct gr_list *l, struct gg_refent **v, size_t *n, size_t *cap, const struct gg_refent *e)
{
	if (l->nomem)
		return false;
	if (l->n + l->ln >= GR_REFS_MAX) {
		l->cut = true;
		return false;
	}
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct gg_refent *nv = realloc(*v, c * sizeof(*nv));

		if (nv == NULL) {
			l->nomem = true;
			return false;
		}
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *e;
	return true;
}

static void gr_free(struct gr_list *l)
{
	if (!l->borrowed)
		free(l->packed);
	free(l->text);
	free(l->v);
	free(l->lv);
	memset(l, 0, sizeof(*l));
}

/* packed-refs of gfd: "HASH SP NAME" lines; "#" (the header) lines are
 * no refs. A "^PEELED" line (what a tag peels to: git describe, show-ref
 * -d and the advertisement to a fetch take it from there without reading
 * the tag) belongs to the ref above it, whose value becomes "HASH^PEELED"
 * (the review of round 33: a peeled line rewritten in the session made
 * the host's git describe name another commit v1.0, and no line). Read
 * into l->packed, split there (no copy: a packed-refs of 20,000 refs is a
 * MiB): "NAME\0HASH^PEELED\0" fits where "HASH NAME\n^PEELED\n" was. */
static void read_packed(int gfd, struct gr_list *l)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd = fileio_open_regular_at(gfd, "packed-refs", FILEIO_NOFOLLOW, &st);

	if (fd < 0)
		return;
	l->pk.dev = st.st_dev;
	l->pk.ino = st.st_ino;
	l->pk.size = st.st_size;
	l->pk.ctime = st.st_ctim;
	if (st.st_size < 0 || (size_t)st.st_size > GR_PACKED_MAX) {
		l->cut = true;
		(void)close(fd);
		return;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		l->nomem = true;
		(void)close(fd);
		return;
	}
	n = fileio_read_full(fd, buf, (size_t)st.st_size);
	(void)close(fd);
	if (n < 0) {
		l->cut = true;
		free(buf);
		return;
	}
	buf[n] = '\0';
	l->packed = buf;
	for (size_t i = 0; i < (size_t)n;) {
		char *nl = memchr(buf + i, '\n', (size_t)n - i);
		size_t e = nl != NULL ? (size_t)(nl - buf) : (size_t)n;
		char *sp = memchr(buf + i, ' ', e - i);

		buf[e] = '\0';
		if (buf[i] != '#' && buf[i] != '^' && sp != NULL && sp > buf + i && (size_t)(sp - buf) + 1 < e) {
			struct gg_refent r = {.name = (size_t)(sp + 1 - buf), .val = i, .loose = 0};

			*sp = '\0';
			if (e + 1 < (size_t)n && buf[e + 1] == '^') {
				/* the peeled line joins this ref's value */
				char *pnl = memchr(buf + e + 1, '\n', (size_t)n - e - 1);
				size_t e2 = pnl != NULL ? (size_t)(pnl - buf) : (size_t)n;
				size_t hl = (size_t)(sp - (buf + i)), ml = e - r.name, pl = e2 - e - 1;
				char *tmp = malloc(hl + ml + pl + 3);

				if (tmp == NULL) {
					l->nomem = true;
					break;
				}
				memcpy(tmp, buf + r.name, ml);
				tmp[ml] = '\0';
				memcpy(tmp + ml + 1, buf + i, hl);
				memcpy(tmp + ml + 1 + hl, buf + e + 1, pl); /* "^PEELED" */
				tmp[ml + 1 + hl + pl] = '\0';
				memcpy(buf + i, tmp, ml + hl + pl + 2);
				free(tmp);
				r.name = i;
				r.val = i + ml + 1;
				e = e2;
				if (e < (size_t)n)
					buf[e] = '\0';
			}
			if (!gr_push(l, &l->v, &l->n, &l->capn, &r))
				break;
		}
		i = e + 1;
	}
}

/* The loose refs below dir (open as fd; its name relative to the git
 * directory in name[0, nlen)): each regular file is a ref, its first
 * line its value. Links are check_git_odd()'s. */
/* The start's value of the loose ref name in s, or NULL. */
static const char *start_loose(const struct gg_refsnap *s, const char *name)
{
	size_t lo = 0, hi = s != NULL ? s->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(gr_str(s->packed, s->text, &s->v[mid], s->v[mid].name), name);

		if (c == 0)
			return s->v[mid].loose ? gr_str(s->packed, s->text, &s->v[mid], s->v[mid].val) : NULL;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void read_loose(const struct gg *g, const struct gg_refsnap *s, int fd, char *name, size_t nlen,
		       unsigned depth, struct gr_list *l)
{
	DIR *dp = fdopendir(fd);
	struct dirent *de;

	if (dp == NULL) {
		(void)close(fd);
		l->cut = true;
		return;
	}
	while (!l->nomem && (de = readdir(dp)) != NULL) {
		size_t dl = strlen(de->d_name);
		unsigned char t = de->d_type;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (nlen + 1 + dl >= PATH_MAX) {
			l->cut = true;
			continue;
		}
		if (t == DT_UNKNOWN) {
			if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
		}
		name[nlen] = '/';
		memcpy(name + nlen + 1, de->d_name, dl + 1);
		if (t == DT_DIR) {
			int cfd;

			if (depth >= GR_DEPTH) {
				l->cut = true;
				continue;
			}
			cfd = openat(dirfd(dp), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0) {
				l->cut = true;
				continue;
			}
			read_loose(g, s, cfd, name, nlen + 1 + dl, depth + 1, l);
		} else if (t == DT_REG) {
			char val[GR_VALUE_MAX];
			const char *was = start_loose(s, name);
			struct gg_refent r = {.loose = 1};
			struct statx sx;
			ssize_t n;

			/* After the session, a loose ref the start read whose
			 * file the session did not write (its change time: a
			 * write, a rename in) is what it was: not read. */
			if (was != NULL && gg_statx(dirfd(dp), de->d_name, AT_SYMLINK_NOFOLLOW, &sx) == 0 &&
			    S_ISREG(sx.stx_mode) && !gg_ts_fresh(g, &sx.stx_ctime) && strlen(was) < sizeof(val)) {
				n = (ssize_t)strlen(was);
				memcpy(val, was, (size_t)n + 1);
			} else {
				n = gg_read_small(dirfd(dp), de->d_name, val, sizeof(val));
			}
			if (n < 0) {
				if (errno != ENOENT)
					l->cut = true;
				continue;
			}
			/* gg_read_small() cut the final newline */
			r.name = gr_put(l, name, nlen + 1 + dl);
			r.val = r.name == (size_t)-1 ? (size_t)-1 : gr_put(l, val, strnlen(val, (size_t)n));
			if (r.val != (size_t)-1)
				(void)gr_push(l, &l->lv, &l->ln, &l->lcap, &r);
		}
	}
	name[nlen] = '\0';
	(void)closedir(dp);
}

/*
 * Round 39 of the attack (family R, round 37's "Not done"): the
 * pseudo-refs at the top of the git directory, which no walk of refs/
 * reads. ORIG_HEAD set in the session to a commit holding
 * .vscode/tasks.json is written into the work tree by the host's `git
 * reset --hard ORIG_HEAD` (the usual undo of a rebase, merge or reset),
 * FETCH_HEAD's by `git merge FETCH_HEAD`, MERGE_HEAD's and the others'
 * by the commit or the --continue of what they leave in progress. Each
 * is read as a loose ref of its own name (FETCH_HEAD: the object name
 * of its first line), so that what it brings is named; its change alone
 * is not (every fetch, pull, rebase and reset sets them).
 */
static const char *const pseudo_refs[] = {"AUTO_MERGE", "CHERRY_PICK_HEAD", "FETCH_HEAD", "MERGE_HEAD",
					  "ORIG_HEAD",  "REBASE_HEAD",      "REVERT_HEAD"};

static bool is_pseudo(const char *name)
{
	return strncmp(name, "refs/", 5) != 0;
}

/* One pseudo-ref's entry: name, the object name at val (len bytes). */
static void pseudo_push(struct gr_list *l, const char *name, const char *val, size_t len)
{
	struct gg_refent r = {.loose = 1};

	r.name = gr_put(l, name, strlen(name));
	r.val = r.name == (size_t)-1 ? (size_t)-1 : gr_put(l, val, len);
	if (r.val != (size_t)-1)
		(void)gr_push(l, &l->lv, &l->ln, &l->lcap, &r);
}

/*
 * FETCH_HEAD (review of round 39): `git merge FETCH_HEAD` merges the
 * object of EVERY line not marked not-for-merge (an octopus when there
 * are several), not only the first's: a first line naming HEAD and a
 * second naming a commit that holds .vscode/tasks.json got no line. Each
 * such line is an entry ("FETCH_HEAD" for the file's first line,
 * "FETCH_HEAD line N" for line N); a
 * file past GR_FETCH_MAX bytes or GR_FETCH_LINES such lines is cut.
 */
#define GR_FETCH_MAX ((size_t)1024 * 1024)
#define GR_FETCH_LINES 64

static void read_fetch_head(int gfd, struct gr_list *l)
{
	size_t len, k = 0, no = 1;
	char *text = fileio_read_at(gfd, "FETCH_HEAD", GR_FETCH_MAX, FILEIO_NOFOLLOW, &len, NULL);

	if (text == NULL) {
		if (errno != ENOENT)
			l->cut = true;
		return;
	}
	for (char *line = text; *line != '\0' && !l->nomem; no++) {
		size_t ll = strcspn(line, "\n");
		size_t on = strcspn(line, " \t\r\n");
		char name[48];

		if (ll > 0 && memmem(line, ll, "\tnot-for-merge\t", 15) == NULL && on > 0 && on < GR_VALUE_MAX) {
			if (k == GR_FETCH_LINES) {
				l->cut = true;
				break;
			}
			if (no == 1)
				snprintf(name, sizeof(name), "FETCH_HEAD");
			else
				snprintf(name, sizeof(name), "FETCH_HEAD line %zu", no);
			pseudo_push(l, name, line, on);
			k++;
		}
		line += ll;
		if (*line == '\n')
			line++;
	}
	free(text);
}

/*
 * The HEAD of each linked worktree (review of round 40, f3's family): a
 * session in the main work tree writes .git/worktrees/NAME/HEAD and its
 * index (`git update-ref --no-deref worktrees/wt/HEAD C`), and the
 * host's `git restore .` in that worktree wrote what C brings, with no
 * line. Each is an entry "worktrees/NAME/HEAD" (git's own name for it),
 * compared as HEAD is; past GR_WORKTREES the list is cut.
 */
#define GR_WORKTREES 256

static void read_worktree_heads(int gfd, struct gr_list *l)
{
	int fd = openat(gfd, "worktrees", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	size_t k = 0;

	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			l->cut = true;
		return;
	}
	if ((d = fdopendir(fd)) == NULL) {
		(void)close(fd);
		l->cut = true;
		return;
	}
	while ((de = readdir(d)) != NULL && !l->nomem) {
		char path[NAME_MAX + 32], val[GR_VALUE_MAX];
		ssize_t n;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		if (k++ == GR_WORKTREES) {
			l->cut = true;
			break;
		}
		snprintf(path, sizeof(path), "%s/HEAD", de->d_name);
		n = gg_read_small(dirfd(d), path, val, sizeof(val));
		if (n < 0) {
			if (errno != ENOENT && errno != ENOTDIR && errno != EFBIG)
				l->cut = true;
			continue;
		}
		len = strcspn(val, "\r\n");
		snprintf(path, sizeof(path), "worktrees/%s/HEAD", de->d_name);
		pseudo_push(l, path, val, len > (size_t)n ? (size_t)n : len);
	}
	(void)closedir(d);
}

static bool worktree_head(const char *name)
{
	size_t n = strlen(name);

	return strncmp(name, "worktrees/", 10) == 0 && n > 15 && strcmp(name + n - 5, "/HEAD") == 0 &&
	       memchr(name + 10, '/', n - 15) == NULL;
}

static void read_pseudo(int gfd, struct gr_list *l)
{
	for (size_t i = 0; i < sizeof(pseudo_refs) / sizeof(pseudo_refs[0]) && !l->nomem; i++) {
		char val[GR_VALUE_MAX];
		ssize_t n;
		size_t len;

		if (strcmp(pseudo_refs[i], "FETCH_HEAD") == 0) {
			read_fetch_head(gfd, l);
			continue;
		}
		n = gg_read_small(gfd, pseudo_refs[i], val, sizeof(val));
		if (n < 0) {
			if (errno != ENOENT && errno != EFBIG)
				l->cut = true;
			continue;
		}
		len = strncmp(val, "ref: ", 5) == 0 ? strcspn(val, "\r\n") : strcspn(val, " \t\r\n");
		if (len > (size_t)n)
			len = (size_t)n;
		pseudo_push(l, pseudo_refs[i], val, len);
	}
	/* HEAD too (round 40 of the attack, f3): gg_refs_compare() checks
	 * what it brings when the session moved it off its branch or
	 * detached it, not as one of these. */
	if (!l->nomem) {
		char val[GR_VALUE_MAX];
		ssize_t n = gg_read_small(gfd, "HEAD", val, sizeof(val));

		size_t len;

		if (n >= 0) {
			len = strcspn(val, "\r\n");
			pseudo_push(l, "HEAD", val, len > (size_t)n ? (size_t)n : len);
		} else if (errno != ENOENT && errno != EFBIG) {
			l->cut = true;
		}
	}
	read_worktree_heads(gfd, l);
}

/*
 * The object name a value of list (packed, text, v[0, n), sorted) comes
 * to: itself, or through "ref: NAME" (a few levels), NULL when a ref it
 * names is not in the list (unborn).
 */
static const char *resolve_value(const char *packed, const char *text, const struct gg_refent *v, size_t n,
				 const char *val)
{
	for (int depth = 0; val != NULL && strncmp(val, "ref: ", 5) == 0; depth++) {
		const char *want = val + 5;
		size_t lo = 0, hi = n;

		if (depth == 5)
			return NULL;
		val = NULL;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int c = strcmp(gr_str(packed, text, &v[mid], v[mid].name), want);

			if (c == 0) {
				val = gr_str(packed, text, &v[mid], v[mid].val);
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return val;
}

static const char *cmp_packed, *cmp_loose;

static int cmp_ent(const void *a, const void *b)
{
	const struct gg_refent *x = a, *y = b;

	return strcmp(gr_str(cmp_packed, cmp_loose, x, x->name), gr_str(cmp_packed, cmp_loose, y, y->name));
}

/* The refs of the git directory gfd, sorted by name, one each (a loose
 * ref over a packed one of the same name, as git reads them). With s
 * (the start's) and a packed-refs the session did not write (same file,
 * size and change time, not changed in the session), the start's packed
 * refs are taken as they are, not read again. */
static void read_refs(const struct gg *g, int gfd, const struct gg_refsnap *s, struct gr_list *l)
{
	char name[PATH_MAX] = "refs";
	struct gg_refent *m;
	struct stat st;
	size_t i, j, k = 0;
	bool sorted = true;
	int fd;

	if (s != NULL && s->packed != NULL && fstatat(gfd, "packed-refs", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode) && st.st_dev == s->pk.dev && st.st_ino == s->pk.ino && st.st_size == s->pk.size &&
	    st.st_ctim.tv_sec == s->pk.ctime.tv_sec && st.st_ctim.tv_nsec == s->pk.ctime.tv_nsec &&
	    !gg_changed(g, gfd, "packed-refs")) {
		l->packed = s->packed;
		l->borrowed = true;
		l->pk = s->pk;
		for (i = 0; i < s->n && !l->nomem; i++)
			if (!s->v[i].loose)
				(void)gr_push(l, &l->v, &l->n, &l->capn, &s->v[i]);
		l->cut = l->cut || s->cut;
	} else {
		read_packed(gfd, l);
	}
	fd = openat(gfd, "refs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		read_loose(g, s, fd, name, 4, 0, l);
	read_pseudo(gfd, l);
	if (l->nomem)
		return;
	cmp_packed = l->packed;
	cmp_loose = l->text;
	/* git writes packed-refs sorted: checked, sorted when not */
	for (i = 1; i < l->n && sorted; i++)
		sorted = cmp_ent(&l->v[i - 1], &l->v[i]) < 0;
	if (!sorted)
		qsort(l->v, l->n, sizeof(*l->v), cmp_ent);
	if (l->ln > 1)
		qsort(l->lv, l->ln, sizeof(*l->lv), cmp_ent);
	if (l->ln == 0)
		return;
	m = malloc((l->n + l->ln) * sizeof(*m));
	if (m == NULL) {
		l->nomem = true;
		return;
	}
	for (i = j = 0; i < l->n || j < l->ln;) {
		int c = i == l->n ? 1 : j == l->ln ? -1 : cmp_ent(&l->v[i], &l->lv[j]);

		if (c < 0) {
			m[k++] = l->v[i++];
		} else {
			if (c == 0)
				i++; /* the loose one wins */
			m[k++] = l->lv[j++];
		}
	}
	free(l->v);
	l->v = m;
	l->n = k;
	l->capn = l->n;
	free(l->lv);
	l->lv = NULL;
	l->ln = l->lcap = 0;
}

void gg_refs_record(struct gg *g, int gfd)
{
	struct gr_list l = {0};
	struct gg_refsnap s = {0};

	read_refs(g, gfd, NULL, &l);
	if (l.nomem) {
		gr_free(&l);
		gg_refsnap_add(g, gfd, NULL);
		return;
	}
	s.packed = l.packed;
	s.pk = l.pk;
	s.text = l.text;
	s.v = l.v;
	s.n = l.n;
	s.cut = l.cut;
	free(l.lv);
	gg_index_record(g, gfd, &s); /* gitindex.c */
	if (!gg_refsnap_add(g, gfd, &s)) {
		l.lv = NULL;
		gr_free(&l);
		free(s.staged);
	}
}

void gg_refsnap_free(struct gg_refsnap *s)
{
	free(s->packed);
	free(s->text);
	free(s->v);
	free(s->staged);
}

/* Kinds of ref, each its own line. */
enum { K_TAG, K_REMOTE, K_NOTES, K_BRANCH, K_OTHER, K_N };

static int kind_of(const char *name)
{
	if (strncmp(name, "refs/tags/", 10) == 0)
		return K_TAG;
	if (strncmp(name, "refs/remotes/", 13) == 0)
		return K_REMOTE;
	if (strncmp(name, "refs/notes/", 11) == 0)
		return K_NOTES;
	if (strncmp(name, "refs/heads/", 11) == 0)
		return K_BRANCH;
	return K_OTHER;
}

static const char *const kind_what[K_N] = {
	[K_TAG] = "tags moved, made or removed in the session (a tag names a release: git checkout, a build or "
		  "a signature check of that name no longer gets what it did; git fetch does not move a tag "
		  "the repository has): ",
	[K_REMOTE] = "remote-tracking refs set in the session (git status says \"up to date\" against them and "
		     "git log origin/... shows them, while git push sends what the branch holds: run git fetch "
		     "before trusting them): ",
	[K_NOTES] = "notes refs changed in the session (git log shows the notes of refs/notes/commits under "
		    "each commit, as if part of it): ",
	[K_BRANCH] = "branches moved, made or removed in the session (what git push would send): ",
	[K_OTHER] = "other refs moved, made or removed in the session: ",
};

struct kline {
	unsigned long n;
	char text[1024];
	size_t len;
};

/* A ref's value as shown: an object name cut to 12 hex digits, "(none)" for
 * none, a symbolic ref whole; control characters as '?'. */
static void short_val(const char *v, char *out, size_t cap)
{
	size_t n = v == NULL ? 0 : strlen(v), i;

	if (v == NULL) {
		snprintf(out, cap, "(none)");
		return;
	}
	if (strncmp(v, "ref: ", 5) != 0 && n > 12)
		n = 12;
	for (i = 0; i < n && i + 1 < cap; i++)
		out[i] = ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) ? '?' : v[i];
	out[i] = '\0';
}

static void kline_add(struct kline *k, const char *name, const char *old, const char *new)
{
	char o[GR_VALUE_MAX], n[GR_VALUE_MAX], safe[256];
	size_t i;
	int w;

	if (k->n++ >= GR_SHOWN)
		return;
	for (i = 0; name[i] != '\0' && i + 1 < sizeof(safe); i++)
		safe[i] = ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) ? '?' : name[i];
	safe[i] = '\0';
	short_val(old, o, sizeof(o));
	short_val(new, n, sizeof(n));
	w = snprintf(k->text + k->len, sizeof(k->text) - k->len, "%s%s %s -> %s", k->len ? ", " : "", safe, o, n);
	if (w > 0)
		k->len = (size_t)w < sizeof(k->text) - k->len ? k->len + (size_t)w : sizeof(k->text) - 1;
}

/* Whether two values of a ref are the same: equal, or the same object
 * name where one has no peeled value (a tag packed or unpacked by git gc
 * or pack-refs in the session: git peels it again from the tag). */
static bool same_value(const char *a, const char *b)
{
	size_t ha = strcspn(a, "^"), hb = strcspn(b, "^");

	if (strcmp(a, b) == 0)
		return true;
	return ha == hb && strncmp(a, b, ha) == 0 && (a[ha] == '\0' || b[hb] == '\0');
}

/*
 * Whether the ref e (name, set in the session) is a copy this walk
 * moved aside in refs/ (loose, noted by gg_quarantined()): left alone.
 * Round 40 of the attack (sandbox, f1): a copy's name alone was enough,
 * so a branch or tag the session named like one
 * (refs/heads/ci.passavant-quarantine, loose or packed, HEAD on it) was
 * never named, nor what it brings, while the host's `git push --all`,
 * `--tags` or a checkout of it takes it like any other. A copy left by
 * an earlier session was there at the start with its value: same_value()
 * passes it.
 */
static bool walk_copy(const struct gg *g, int gfd, const struct gg_refent *e, const char *name)
{
	const char *slash = strrchr(name, '/');
	char dir[PATH_MAX];
	bool ours;
	int dfd;

	if (slash == NULL || !e->loose || is_pseudo(name) || !gg_is_quarantine_name(slash + 1) ||
	    (size_t)(slash - name) >= sizeof(dir))
		return false;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
	dfd = openat(gfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return false;
	ours = gg_quarantined(g, dfd, slash + 1, true);
	(void)close(dfd);
	return ours;
}

/* Does the diff line [s, s + n) add a byte a terminal takes for a
 * control (C0 but a tab, DEL, C1 as UTF-8)? */
static bool added_control(const char *s, size_t n)
{
	if (n < 1 || s[0] != '+' || (n >= 4 && strncmp(s, "+++ ", 4) == 0))
		return false;
	for (size_t i = 1; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f ||
		    (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f))
			return true;
	}
	return false;
}

/*
 * The environment of the check's git runs on the repository (what notes
 * or a ref bring). Its config is read, and may be the session's (kept
 * with --keep-git-config, a file of the tree its include names): a
 * promisor remote there (remote.NAME.promisor) made git fetch an object
 * missing from the session's commit, and a protocol.NAME.allow there
 * overrode `-c protocol.allow=never` (an ext:: remote ran its command on
 * the host, review of round 37). GIT_ALLOW_PROTOCOL set empty refuses
 * every transport whatever the config says; GIT_NO_LAZY_FETCH (git 2.45
 * on) stops the fetch before it.
 */
static char *const gr_git_env[] = {"PATH=/usr/bin:/bin",
				   "GIT_CONFIG_NOSYSTEM=1",
				   "GIT_CONFIG_GLOBAL=/dev/null",
				   "HOME=/nonexistent",
				   "GIT_NO_REPLACE_OBJECTS=1",
				   "GIT_ALLOW_PROTOCOL=",
				   "GIT_NO_LAZY_FETCH=1",
				   "LC_ALL=C",
				   NULL};

/* 1: the notes the ref gained from old (NULL: none) to new hold control
 * characters; 0: not; -1: git could not tell. */
static int notes_controls(const struct gg *g, const char *old, const char *new)
{
	static const char empty1[] = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
	static const char empty2[] = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321";
	char *const *envp = gr_git_env;
	char gitdir[PATH_MAX + 16], from[GR_VALUE_MAX], to[GR_VALUE_MAX];
	/* protocol.allow=never: an object missing from a partial clone is
	 * not fetched (git 2.39 has no GIT_NO_LAZY_FETCH), no transport runs. */
	char *argv[] = {(char *)"git", gitdir, "-c", "protocol.allow=never", "diff", "--no-ext-diff", "--no-textconv",
			"--text", "--no-color", "--no-renames", from, to, "--", NULL};
	const char *why = NULL;
	struct gg_run r = {.pid = -1, .fd = -1};
	int found = 0;
	size_t len;
	char *out;

	if (g->git[0] == '\0' || strlen(new) >= sizeof(to))
		return -1;
	snprintf(gitdir, sizeof(gitdir), "--git-dir=%s", g->path);
	/* A symbolic ref's value is read by the name it holds. */
	if (old != NULL && strncmp(old, "ref: ", 5) == 0)
		old += 5;
	if (strncmp(new, "ref: ", 5) == 0)
		new += 5;
	snprintf(from, sizeof(from), "%s", old != NULL ? old : strlen(new) == 64 ? empty2 : empty1);
	snprintf(to, sizeof(to), "%s", new);
	if (from[0] == '-' || to[0] == '-')
		return -1;
	if (gg_git_spawn(g, argv, envp, &r) < 0)
		return -1;
	out = gg_config_finish(&r, &len, &why);
	if (out == NULL)
		return -1;
	for (size_t i = 0; i < len && !found;) {
		const char *nl = memchr(out + i, '\n', len - i);
		size_t e = nl != NULL ? (size_t)(nl - out) : len;

		found = added_control(out + i, e - i);
		i = e + 1;
	}
	free(out);
	return found;
}

/* The notes ref name (changed in the session, value new, old before)
 * of g->path (gfd): its new notes holding control characters, it moves
 * aside when loose, else is named. */
static void check_notes(struct gg *g, int gfd, const char *name, const char *old, const char *new)
{
	static const char what[] = "a notes ref whose notes, added in the session, hold control characters (git log "
				   "prints them raw to the terminal under each commit)";
	char top[NAME_MAX + 1], setting[PATH_MAX + 256];
	const char *slash = strrchr(name, '/');
	struct sbx_git_finding f = {0};
	int rc = notes_controls(g, old, new), dfd;
	size_t dl;

	if (rc == 0)
		return;
	if (rc < 0) {
		gg_report_unread(g, g->path, name, "cannot have git list the notes added in the session to check them "
				 "for control characters", EIO);
		return;
	}
	dl = (size_t)(slash - name);
	snprintf(setting, sizeof(setting), "%.*s", (int)dl, name);
	dfd = openat(gfd, setting, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0 && faccessat(dfd, slash + 1, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		char dir[PATH_MAX];

		if (!g->keep && snprintf(top, sizeof(top), "notes-%s", slash + 1) < (int)sizeof(top) &&
		    renameat2(dfd, slash + 1, gfd, top, RENAME_NOREPLACE) == 0) {
			snprintf(setting, sizeof(setting), "%s: %s, moved to the top of the git directory first", what,
				 name);
			gg_quarantine(g, gfd, g->path, top, setting);
		} else if (gg_join(dir, sizeof(dir), g->path, setting)) {
			gg_quarantine(g, dfd, dir, slash + 1, what);
		}
		(void)close(dfd);
		return;
	}
	if (dfd >= 0)
		(void)close(dfd);
	/* Packed: named, for the user to remove. */
	snprintf(setting, sizeof(setting), "%s: %s, in packed-refs (remove it: git update-ref -d %s)", what, name, name);
	f.path = g->path;
	f.setting = setting;
	f.named = true;
	g->report(g->arg, &f);
}

/* Refs of one git directory whose new content is listed at most (about
 * 5 ms of git each); past it a line counts the others (round 38: the
 * eighth was the last, and a ninth said nothing). */
#define GR_BRINGS_CHECKED 64
/* Settings files named in one line at most. */
#define GR_BRINGS_SHOWN 4

/*
 * Round 37 of the attack: a branch or another ref (refs/stash) set in the
 * session was named by name and value only; round 38: a tag (`git
 * checkout v9`) and a remote-tracking ref (`git switch fix` makes the
 * branch from origin/fix) the same, a packed annotated tag by its tag
 * object (its value "TAG^PEELED": git peels it to the tree). A stash stored in the
 * session holding .vscode/tasks.json (a folder-open task) was written
 * by the host's `git stash pop`, a branch's by `git checkout` or `git
 * merge`: a settings file the check moves aside when the session writes
 * it in the tree came in through git. The files of the ref's new commit
 * that differ from its old value (or, for a new ref, from HEAD; for a
 * stash, also its untracked files' commit) are matched against the
 * settings rows; those on one are named, with the row's reason. With
 * the host's git (diff --name-only, no external diff, no renames);
 * nothing is moved.
 */
static void git_names(const struct gg *g, const char *from, const char *to, bool tree, char *names, size_t cap,
		      size_t *nlen, unsigned *n)
{
	char *const *envp = gr_git_env;
	char gitdir[PATH_MAX + 16], a[GR_VALUE_MAX + 8], b[GR_VALUE_MAX + 8];
	char *diff[] = {(char *)"git", gitdir, "-c", "protocol.allow=never", "diff", "--no-ext-diff", "--no-textconv",
			"--no-renames", "--name-only", "-z", a, b, "--", NULL};
	char *ls[] = {(char *)"git", gitdir, "-c", "protocol.allow=never", "ls-tree", "-r", "-z", "--name-only", b,
		      "--", NULL};
	struct gg_run r = {.pid = -1, .fd = -1};
	const char *why = NULL;
	size_t len;
	char *out;

	if (g->git[0] == '\0' || to[0] == '-' || (from != NULL && from[0] == '-'))
		return;
	snprintf(gitdir, sizeof(gitdir), "--git-dir=%s", g->path);
	snprintf(a, sizeof(a), "%s", from != NULL ? from : "");
	snprintf(b, sizeof(b), "%s", to);
	if (gg_git_spawn(g, tree ? ls : diff, envp, &r) < 0)
		return;
	out = gg_config_finish(&r, &len, &why);
	if (out == NULL)
		return;
	for (size_t i = 0; i < len;) {
		const char *z = memchr(out + i, '\0', len - i);
		size_t e = z != NULL ? (size_t)(z - out) : len;
		const struct sbx_ctl_path *row;
		char *path = out + i;

		out[e < len ? e : len - 1] = '\0';
		i = e + 1;
		if (path[0] == '\0' || (row = gg_path_row(g, path)) == NULL || strstr(names, path) != NULL)
			continue;
		if ((*n)++ < GR_BRINGS_SHOWN) {
			int w = snprintf(names + *nlen, cap - *nlen, "%s%s (%s)", *nlen ? ", " : "", path,
					 row->why != NULL ? row->why : row->kind);

			if (w > 0)
				*nlen = (size_t)w < cap - *nlen ? *nlen + (size_t)w : cap - 1;
		}
	}
	free(out);
}

static void check_brings(struct gg *g, const char *name, const char *old, const char *new)
{
	char names[2048] = "", setting[3072], safe[256], to[GR_VALUE_MAX + 4];
	char nv[GR_VALUE_MAX + 1], ov[GR_VALUE_MAX + 1];
	struct sbx_git_finding f = {0};
	size_t nlen = 0, i;
	unsigned n = 0;

	/* A packed tag's "TAG^PEELED": the tag object itself. */
	if (strncmp(new, "ref: ", 5) == 0 || strcspn(new, "^") + 1 > sizeof(nv))
		return;
	snprintf(nv, sizeof(nv), "%.*s", (int)strcspn(new, "^"), new);
	new = nv;
	if (old != NULL && (strncmp(old, "ref: ", 5) == 0 || strcspn(old, "^") + 1 > sizeof(ov)))
		old = NULL;
	if (old != NULL) {
		snprintf(ov, sizeof(ov), "%.*s", (int)strcspn(old, "^"), old);
		old = ov;
	}
	git_names(g, old != NULL ? old : "HEAD", new, false, names, sizeof(names), &nlen, &n);
	if (strcmp(name, "refs/stash") == 0) {
		snprintf(to, sizeof(to), "%s^3", new);
		git_names(g, NULL, to, true, names, sizeof(names), &nlen, &n);
	}
	if (n == 0)
		return;
	for (i = 0; name[i] != '\0' && i + 1 < sizeof(safe); i++)
		safe[i] = ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) ? '?' : name[i];
	safe[i] = '\0';
	for (i = 0; names[i] != '\0'; i++)
		if ((unsigned char)names[i] < 0x20 || names[i] == 0x7f)
			names[i] = '?';
	snprintf(setting, sizeof(setting),
		 "%s, set in the session, brings settings files the check moves aside when the session writes them "
		 "in the tree: %s%s; %s writes them into the work tree (look at them first: git show %.12s)",
		 safe, names, n > GR_BRINGS_SHOWN ? ", ..." : "",
		 strcmp(safe, "refs/stash") == 0		? "git stash pop or apply"
		 : strncmp(safe, "refs/remotes/", 13) == 0 ? "git switch of its branch name, merge or rebase of it"
		 : strcmp(safe, "ORIG_HEAD") == 0	? "git reset --hard ORIG_HEAD (the undo of a rebase or merge)"
		 : strncmp(safe, "FETCH_HEAD", 10) == 0	? "git merge FETCH_HEAD"
		 : strcmp(safe, "HEAD") == 0 ? "git restore ., git checkout -- . or git reset --hard (HEAD moved in the "
					       "session; the work tree is restored to it)"
		 : worktree_head(safe) ? "git restore ., git checkout -- . or git reset --hard in that linked worktree "
					 "(its HEAD moved in the session; its work tree is restored to it)"
		 : is_pseudo(safe)			? "git commit or --continue of what it leaves in progress"
							     : "git checkout, merge or rebase of it",
		 new);
	f.path = g->path;
	f.setting = setting;
	f.named = true;
	g->report(g->arg, &f);
}

void gg_refs_compare(struct gg *g, int gfd)
{
	const struct gg_refsnap *s = gg_refsnap_find(g, gfd);
	struct gr_list l = {0};
	struct kline k[K_N];
	size_t i = 0, j = 0;
	unsigned notes_checked = 0, brings_checked = 0, brings_past = 0;
	const char *head_old = NULL, *head_new = NULL;
	bool any = false;

	if (s == NULL)
		return;
	read_refs(g, gfd, s, &l);
	if (l.nomem) {
		gg_report_error(g, g->path, "", "cannot compare its refs with the start of the session", ENOMEM);
		gr_free(&l);
		return;
	}
	memset(k, 0, sizeof(k));
	while (i < s->n || j < l.n) {
		const char *on = i < s->n ? gr_str(s->packed, s->text, &s->v[i], s->v[i].name) : NULL;
		const char *nn = j < l.n ? gr_str(l.packed, l.text, &l.v[j], l.v[j].name) : NULL;
		int c = on == NULL ? 1 : nn == NULL ? -1 : strcmp(on, nn);
		const char *name = c <= 0 ? on : nn;
		const char *ov = c <= 0 ? gr_str(s->packed, s->text, &s->v[i], s->v[i].val) : NULL;
		const char *nv = c >= 0 ? gr_str(l.packed, l.text, &l.v[j], l.v[j].val) : NULL;

		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
		if (strcmp(name, "HEAD") == 0) {
			head_old = ov;
			head_new = nv;
			continue;
		}
		/* a linked worktree's HEAD moved: against its start */
		if (worktree_head(name)) {
			const char *o = ov != NULL ? resolve_value(s->packed, s->text, s->v, s->n, ov) : NULL;
			const char *nw = nv != NULL ? resolve_value(l.packed, l.text, l.v, l.n, nv) : NULL;

			if (o != NULL && nw != NULL && strcmp(ov, nv) != 0 && !same_value(o, nw)) {
				if (brings_checked++ < GR_BRINGS_CHECKED)
					check_brings(g, name, o, nw);
				else
					brings_past++;
			}
			continue;
		}
		/* Review of round 39: a pseudo-ref holding "ref: TARGET" (a
		 * symbolic ref, which git follows: `git reset --hard
		 * ORIG_HEAD` wrote what the branch it named held) is given
		 * to git by its own name, whatever it held before: no
		 * ordinary git writes one. */
		if (is_pseudo(name) && strncmp(name, "FETCH_HEAD", 10) != 0 && nv != NULL &&
		    strncmp(nv, "ref: ", 5) == 0) {
			if (brings_checked++ < GR_BRINGS_CHECKED)
				check_brings(g, name, NULL, name);
			else
				brings_past++;
			continue;
		}
		/* replace refs: gitviews.c moves them aside */
		if (strncmp(name, "refs/replace/", 13) == 0 || (ov != NULL && nv != NULL && same_value(ov, nv)) ||
		    (nv != NULL && walk_copy(g, gfd, &l.v[j - 1], name)))
			continue;
		if (is_pseudo(name)) {
			/* What it writes is against HEAD, whatever it held. */
			if (nv != NULL && brings_checked++ < GR_BRINGS_CHECKED)
				check_brings(g, name, NULL, nv);
			else if (nv != NULL)
				brings_past++;
			continue;
		}
		if (ov != NULL && nv != NULL && strchr(ov, '^') != NULL && strchr(nv, '^') != NULL &&
		    strcspn(ov, "^") == strcspn(nv, "^") && strncmp(ov, nv, strcspn(ov, "^")) == 0)
			kline_add(&k[kind_of(name)], name, strchr(ov, '^'), strchr(nv, '^')); /* peeled only */
		else
			kline_add(&k[kind_of(name)], name, ov, nv);
		any = true;
		if (nv != NULL && kind_of(name) == K_NOTES && notes_checked++ < GR_NOTES_CHECKED)
			check_notes(g, gfd, name, ov, nv);
		if (nv != NULL && kind_of(name) != K_NOTES) {
			if (brings_checked++ < GR_BRINGS_CHECKED)
				check_brings(g, name, ov, nv);
			else
				brings_past++;
		}
	}
	/*
	 * Round 40 of the attack (sandbox, f3): HEAD moved in the session
	 * off its branch (detached at a commit, or on another branch) to a
	 * commit holding .vscode/tasks.json, with the index read from it and
	 * the work tree left alone. What a ref brings was measured against
	 * HEAD, which was now that commit: no line; the host's `git status`
	 * showed the file deleted and `git restore .` wrote it. What HEAD
	 * brings is measured against the start's HEAD. HEAD that stayed on
	 * its branch is that branch's check.
	 */
	if (head_old != NULL && head_new != NULL && strcmp(head_old, head_new) != 0) {
		const char *o = resolve_value(s->packed, s->text, s->v, s->n, head_old);
		const char *nw = resolve_value(l.packed, l.text, l.v, l.n, head_new);

		if (o != NULL && nw != NULL && !same_value(o, nw)) {
			if (brings_checked++ < GR_BRINGS_CHECKED)
				check_brings(g, "HEAD", o, nw);
			else
				brings_past++;
		}
	}
	if (brings_past > 0) {
		char msg[512];
		struct sbx_git_finding f = {0};

		snprintf(msg, sizeof(msg),
			 "%u more refs set in the session were not looked at for the settings files they bring (%d "
			 "were): a checkout, switch, merge or stash pop of one may write a settings file into the "
			 "work tree (look first: git diff --name-only HEAD REF)",
			 brings_past, GR_BRINGS_CHECKED);
		f.path = g->path;
		f.setting = msg;
		f.named = true;
		g->report(g->arg, &f);
	}
	for (int kind = 0; any && kind < K_N; kind++) {
		char msg[2048];
		struct sbx_git_finding f = {0};

		if (k[kind].n == 0)
			continue;
		snprintf(msg, sizeof(msg), "%s%s%s%s", kind_what[kind], k[kind].text, k[kind].n > GR_SHOWN ? ", ..." : "",
			 s->cut || l.cut ? " (not every ref could be read: the list may be short)" : "");
		f.path = g->path;
		f.setting = msg;
		f.named = true;
		g->report(g->arg, &f);
	}
	gr_free(&l);
}
