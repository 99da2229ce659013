/*
 * gitguard_int.h - private interfaces between the files of the git guard
 * (SPEC §3.3): gitprotect.c (the mount plan half, sbx_git_protect()),
 * gitguard.c (the post-run walk, sbx_gitguard_check()), gitrules.c
 * (what in a git directory can make git run a program) and
 * gitquarantine.c (changed since the session start, moved aside,
 * reported). Contracts at the definitions.
 */
#ifndef PASSAVANT_GITGUARD_INT_H
#define PASSAVANT_GITGUARD_INT_H

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "sandbox/sandbox.h"

/* A config larger than this is not parsed but moved aside: no git
 * directory's own config is anywhere near it. */
#define GG_CONFIG_MAX_BYTES (1024 * 1024)
/* Bytes of `git config --list -z` output read at most. */
#define GG_GIT_OUT_MAX_BYTES (4 * 1024 * 1024)
/* Settings named in one report line at most. */
#define GG_SETTINGS_SHOWN 4

/* ------------------------------------------------ the post-run check */

/* Where an entry stands against the settings rows (struct sbx_ctl_path). */
enum { CTL_NONE, CTL_IN, CTL_WAY };

/* One directory entry, as read: a subdirectory, or a non-directory that
 * stands on a settings row. */
struct ent {
	char *name;
	unsigned char type;              /* DT_* (never DT_UNKNOWN) */
	unsigned char how;               /* CTL_*: IN a row (the row or below
					    a directory row), on the WAY to
					    one (".claude" of ".claude/x") */
	const struct sbx_ctl_path *row;  /* the row, with how */
	size_t reloff;                   /* with how: offset in g->path of
					    the entry's path relative to the
					    directory its row starts in */
	bool fresh;                      /* a directory with how: it, or one
					    above it since its row starts,
					    changed in the session (walk()) */
	bool covered;                    /* a directory with how: in a row the
					    mount plan covered read-only (at the
					    top of a root, not if_dir) */
};

/* The state of one check. */
#define GG_GSHARED 8

struct gg {
	struct timespec since;       /* session start (CLOCK_REALTIME_COARSE) */
	bool keep;                   /* report only, move nothing */
	/* group_shared()'s answers, the last GG_GSHARED gids asked (a walk
	 * meets few: the user's own, the directory's, a team's); ngshared
	 * filled, the next one replaced at gshared_next. */
	struct gg_gshared {
		gid_t gid;
		bool shared;
	} gshared[GG_GSHARED];
	unsigned ngshared, gshared_next;
	sbx_git_report_fn report;
	void *arg;
	struct sbx_git_stats *st;
	const char *const *roots;    /* canonical writable roots */
	const struct sbx_ctl_path *ctl; /* settings rows, NULL-path ended; or NULL */
	bool ctl_first[256];         /* first bytes of the rows' paths */
	int rootfd;                  /* the root being walked */
	size_t rootlen;              /* strlen of its path */
	char path[PATH_MAX];         /* absolute path of the directory at hand */
	char git[PATH_MAX];          /* the host's git, "" if none on PATH */
	/* A relative core.hooksPath of the global or system config ("" if
	 * none): git takes it from the top of each work tree. */
	char global_hooks[PATH_MAX];
	/* A relative core.excludesFile and core.attributesFile of the global
	 * or system config ("" if none): git opens them from the top of each
	 * work tree too (round 35 of the attack, e5). */
	char global_rules[2][PATH_MAX];
	/* Configs read for their references in this walk, each once per
	 * work tree (gg_config_once()); and how many git runs that took. */
	struct gg_once {
		uint64_t dev, ino, base;
	} *once;
	size_t nonce, caponce;
	size_t nfiles;               /* distinct configs among them */
	/* What git listed of each of them, once per file (config_listed()). */
	struct gg_listed {
		uint64_t dev, ino;
		char *out;
		size_t len;
	} *listed;
	size_t nlisted, caplisted;
	/* getdents64 buffer, shared: a directory is read to the end before
	 * its subdirectories are walked. */
	_Alignas(8) char dents[32768];
	int rc;                      /* -1 once something could not be checked */
	struct sbx_git_before *record; /* the walk before the session: notes the git
					* directories there, checks nothing */
	const struct sbx_ctl_path *record_ctl; /* its settings rows (ctl stays
						  NULL in it): gg_index_record() */
	const struct sbx_git_before *before; /* git directories at the start; NULL: not known */
	struct timespec links_t0;    /* linkout.c: when it first ran in this walk */
	bool links_late;             /* linkout.c: its time is spent */
	bool activated;              /* the git directory at hand is one a .git
				      * file written in the session points to:
				      * every control file in it counts as new */
	/* What this walk moved aside (device and inode; an open-addressed
	 * set, ino 0 free): a copy the walk itself made is left alone when
	 * a later read shows it, a name of that shape planted in the
	 * session is not (gg_quarantined()). */
	struct gg_moved {
		uint64_t dev, ino;
	} *moved;
	size_t nmoved, capmoved;
	bool moved_lost;             /* a move could not be noted (ENOMEM) */
	/* Top-level module names installed for the host's Python, sorted,
	 * read once per walk when first needed (pyshadow.c). */
	char **py_installed;
	size_t npy_installed;
	bool py_read;
	/* gitobjects.c: bytes of loose objects hashed and of packs verified
	 * in this walk (each bounded). */
	uint64_t obj_loose_spent, obj_pack_spent;
};

/* gitguard.c: whether the directory open as fd was a git directory (or
 * one in the making) when the session started (b: sbx_git_before()). */
bool gg_was_gitdir(const struct sbx_git_before *b, int fd);
/* A place a kept config leads to (a core.hooksPath directory, an included
 * file, what an old hooks link names; resolved, no link left): the walk
 * before the session notes it by identity (gg_ref_note()); after the
 * session, one not noted there (swapped by a rename or a link since, or
 * made in the session) counts as new whole (gg_ref_new(); false when no
 * walk before is known). */
void gg_ref_note(struct gg *g, const char *path);
bool gg_ref_new(const struct gg *g, const char *path);
/* gitrules.c: the walk before the session, in the git directory g->path
 * (open as gfd): notes where its kept config and hooks link lead. */
void gg_record_refs(struct gg *g, int gfd);
/* gitrules.c: the work tree g->path (open as dfd) whose .git is a file (a
 * linked worktree, a submodule, a separate git directory): its git
 * directory's kept configs, with a relative core.hooksPath taken from
 * this work tree as git takes it. Both walks (notes, or checks). */
void gg_check_worktree_side(struct gg *g, int dfd);
/* Whether the config cfg is yet to be read for its references from the
 * work tree hooks_base, nested includes starting in dir, in this walk
 * (then noted): each config once per work tree and start, and
 * GG_CONFIGS_MAX at most in a walk (past it each one is reported, as
 * not checked). */
bool gg_config_once(struct gg *g, const char *cfg, const char *hooks_base, const char *dir);
/* gitrules.c: the config entries of the environment (GIT_CONFIG_COUNT,
 * GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n), which git reads after every
 * file: their core.hooksPath and includes, as the global config's. */
void gg_check_env_config(struct gg *g);
#define GG_CONFIGS_MAX 512
/* Frees what a walk kept of the configs it read (gg_config_once(),
 * and what git listed of them), and its note of what it moved aside. */
void gg_listed_free(struct gg *g);

/* pyshadow.c: where a host Python starts (the top of a writable tree, a
 * directory holding a notebook: g->path, open as fd), the modules it
 * imports from there first are moved aside: named like the standard
 * library, made or changed in the session; named like a tool run with
 * `python3 -m` or a package installed for the host's Python, new at
 * that name in the session (gg_py_old()). */
void gg_check_py_shadow(struct gg *g, int fd);
/* Removes the compiled Python files (*.pyc, or links so named) of the
 * walk's directory fd made or changed in the session; one that cannot be
 * removed moves aside. Moves aside an extension module (NAME*.so) made
 * or changed in the session beside a NAME.py, which Python imports
 * instead. */
void gg_py_drop_compiled(struct gg *g, int fd);
/* pyshadow.c: the walk before the session notes the entries of such a
 * directory and the __init__ files of its packages (gg_py_note()). */
void gg_py_note_dir(struct gg *g, int fd);
/* pyshadow.c: frees the installed names a walk read. */
void gg_py_free(struct gg *g);
/* gitguard.c: notes (walk before the session) that an entry was at the
 * place g->path[/sub]/name; and whether one was there then, by its name
 * whatever its inode (false when not known): a project's own module,
 * replaced (sed -i, git checkout) or edited, was its code before too. */
void gg_py_note(struct gg *g, const char *sub, const char *name);
bool gg_py_old(const struct gg *g, const char *sub, const char *name);
/* linkout.c: links made in the session from the directory at hand (fd,
 * g->path) out of the writable trees to where the host reads at start-up
 * move aside. */
void gg_check_links_out(struct gg *g, int fd, struct ent *ents, size_t n);
/* gitguard.c: whether the link fd/name was there at the walk before the
 * session (by device, inode and birth time; false when not known). */
bool gg_link_old(const struct gg *g, int fd, const char *name);
/* gitguard.c: whether an entry so named is on a settings row or on the
 * way to one, in any directory. */
bool gg_name_on_row(const struct gg *g, const char *name);
/* Whether name (relative to a root; several components allowed) is itself
 * a settings row's path, or its last component a row of one component:
 * a path the mount plan covers with an empty placeholder when missing. */
bool gg_name_is_row(const struct gg *g, const char *name);
/* The settings row a path of a tree (relative to a work tree's top:
 * "a/.vscode/tasks.json") stands on, a row starting in any of its
 * directories; NULL when none. For what a ref brings in (gitrefs.c). */
const struct sbx_ctl_path *gg_path_row(const struct gg *g, const char *path);

/* gitviews.c: in the git directory g->path (open as gfd; all: every
 * file in it counts as new), what makes git show the user something
 * other than the objects and the work tree hold, made or changed in the
 * session, moves aside: replace refs (loose, packed), info/grafts,
 * objects/info/alternates, an index hiding changed files (skip-worktree,
 * assume-unchanged), info/exclude rules, caches git trusts (commit-graph,
 * multi-pack-index, .bitmap, .rev) (an index's optional extensions, the
 * untracked cache and fsmonitor data among them, are gitindex.c's); and HEAD or a stopped
 * rebase's files that git's prompt prints, holding control characters.
 * Names .git/shallow written in the session, and (gitrefs.c) the refs
 * moved since the start. */
void gg_check_views(struct gg *g, int gfd, bool all);

/* gitobjects.c: in the git directory g->path (open as gfd; all: every
 * file in it counts as new), loose objects written in the session whose
 * content does not hash to their name, and packs written in it that do
 * not verify against their index (git index-pack --verify), move aside;
 * what is past the check's bounds is named as not verified. */
void gg_check_objects(struct gg *g, int gfd, bool all);
/* gitobjects.c, also for gitcopies.c: the loose object open as fd,
 * inflated, its "TYPE SIZE\0" header parsed (one of git's four types,
 * SIZE the bytes that follow), the whole hashed into out (hsz 20: SHA-1,
 * 32: SHA-256); the inflated bytes added to *inflated. 1: hashed; 0:
 * corrupt (does not inflate, a bad header, a size that does not match,
 * bytes after the end); -1: a read error (errno). */
int gg_loose_hash(int fd, size_t hsz, unsigned char *out, uint64_t *inflated);

/* gitrefs.c: one ref as read, offsets into its list's text. */
struct gg_refent {
	size_t name, val;
	unsigned char loose; /* 1: a loose file, which git reads over packed-refs */
};
/* Which packed-refs was read. */
struct gg_pkid {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec ctime;
};
/* The refs of one git directory at the start of the session, sorted by
 * name: its loose refs and packed-refs, a loose one over a packed one. */
struct gg_refsnap {
	uint64_t dev, ino;          /* the git directory (gitguard.c) */
	int64_t btime_s;
	uint32_t btime_ns;
	char *packed;               /* packed-refs, split (entries not loose) */
	struct gg_pkid pk;
	char *text;                 /* loose: "name\0value\0"... */
	struct gg_refent *v;
	size_t n;
	bool cut;                   /* not every ref could be read */
	/* The index's file and link entries at a settings row's path at the
	 * start (gg_index_record()): records of a 4-byte mode, a 32-byte
	 * object name and the NUL-ended path, back to back; staged_known
	 * false: not read (none, too many, or it did not parse). */
	unsigned char *staged;
	size_t staged_len;
	bool staged_known;
};
/* gitrefs.c: the walk before the session notes the refs of the git
 * directory g->path (open as gfd); after it, gg_refs_compare() names
 * each ref moved, made or removed since (old -> new), by kind, in a
 * line: nothing is moved (a session may fetch and commit). */
void gg_refs_record(struct gg *g, int gfd);
void gg_refs_compare(struct gg *g, int gfd);
void gg_refsnap_free(struct gg_refsnap *s);
/* gitguard.c: keeps s (its buffers taken over: true) as the refs of the
 * git directory gfd in the walk before the session; s NULL: they could
 * not be read (out of memory). And the one kept for gfd, or NULL. */
bool gg_refsnap_add(struct gg *g, int gfd, const struct gg_refsnap *s);
const struct gg_refsnap *gg_refsnap_find(const struct gg *g, int gfd);

/* gitviews.c, also for gitcopies.c (the start-up check of copies of
 * hidden files in git's object stores). */
/* Reads the whole regular file dfd/name (no link followed), at most max
 * bytes, into a buffer to free (NUL-ended); its length in *len. NULL with
 * errno (EFBIG past max). */
char *gg_read_all(int dfd, const char *name, size_t max, size_t *len);
/* The same, with the file's stat in *st. */
char *gg_read_all_st(int dfd, const char *name, size_t max, size_t *len, struct stat *st);
/* The object name size of the repository whose common git directory is
 * open as gfd: 32 with extensions.objectFormat = sha256 in its config,
 * else 20. */
size_t gg_hash_size(int gfd);
/* The object name (hsz 20: SHA-1, 32: SHA-256) of the blob of the size
 * bytes read from fd to its end into out: the hash of "blob SIZE\0" and
 * the content. 0, or -1 with errno (a read error, another size). */
int gg_blob_id(int fd, uint64_t size, size_t hsz, unsigned char *out);
/* One entry of an index: its path (prefix compression undone), the
 * entry's bytes (ctime at 0, mode at 24, object name at 40), its flags
 * and extended flags (0 before version 3). -1 stops the scan. */
typedef int (*gg_index_fn)(void *arg, const char *name, const unsigned char *e, uint16_t flags, uint16_t ext);
/* One extension of an index: its 4-byte signature at b + off, its size
 * sz (after the 8-byte header). -1 stops the scan. */
typedef int (*gg_index_ext_fn)(void *arg, const unsigned char *b, size_t off, size_t sz);
/* Parses the index [b, b + len) (versions 2 to 4, object names of hsz
 * bytes), each entry to fn, each extension to efn when not NULL. 1 for a
 * split index (a "link" extension: the shared index's name, hsz bytes,
 * into shared), 0 for a whole one, -1 when it does not parse or fn or
 * efn stopped it. */
int gg_index_scan(const unsigned char *b, size_t len, size_t hsz, gg_index_fn fn, gg_index_ext_fn efn, void *arg,
		  unsigned char *shared);

/* gitignored.c: the directory g->path (open as fd) holds a .gitignore:
 * written in the session, it is reported with the entries beside it the
 * session wrote (git status does not show what its rules ignore). */
void gg_check_gitignore(struct gg *g, int fd);
/* gitignored.c: the directory g->path (open as fd) holds a .hgignore:
 * written in the session, it is reported with the files below it the
 * session wrote (hg status does not show what its rules ignore; they
 * reach the whole repository). */
void gg_check_hgignore(struct gg *g, int fd);
/* gitignored.c: the directory g->path (open as fd) may be a Python
 * environment (marks: a pyvenv.cfg, conda-meta/, lib/, lib64/, Lib/ or
 * bin/ in it): one by its layout, made in the session, is reported as such;
 * else its activation scripts rewritten in the session move aside, and
 * what the session wrote that its python runs (bin/, lib/'s Python
 * directories whole, conda's activate.d) is reported (a bounded walk,
 * links followed while they stay in the tree). */
void gg_check_venv(struct gg *g, int fd, unsigned marks);
/* What the walk's read of a directory saw of a Python environment's
 * layout (gg_check_venv()'s marks). */
#define GG_PY_CFG 1u    /* pyvenv.cfg */
#define GG_PY_CONDA 2u  /* conda-meta/ */
#define GG_PY_BIN 4u    /* bin/ */
#define GG_PY_LIB 8u    /* lib/ */
#define GG_PY_LIB64 16u /* lib64/ */
#define GG_PY_WLIB 32u  /* Lib/ */

/* gitprotect.c: small helpers shared by both halves. */
bool gg_join(char *out, size_t len, const char *dir, const char *name);
ssize_t gg_read_small(int dfd, const char *name, char *buf, size_t len);
bool gg_resolve_pointer(const char *base, const char *text, char *out);

/* gitquarantine.c */
bool gg_changed(const struct gg *g, int dfd, const char *name);
/* Whether the directory open as fd was itself changed in the session
 * (made, renamed, an entry added, removed or renamed): then every entry
 * in it counts as written in the session, whatever its own ctime, for a
 * check keyed on an entry's ctime (round 34's d10: a directory renamed
 * into place keeps its entries' old ctimes, and those of everything
 * below it). One statx of the directory. */
bool gg_dir_fresh(const struct gg *g, int fd);
/* gitguard.c: gg_dir_fresh(), and (when the walk before the session is
 * known) the directory was not at the place path then with this
 * identity: made or renamed there, not one that only had an entry added
 * (pip writing in site-packages, a file saved beside a .gitignore). */
bool gg_dir_whole(const struct gg *g, int fd, const char *path);
/* The directory abs, under the root being walked, opened beneath its
 * descriptor through no link (openat2 RESOLVE_BENEATH, no symlinks):
 * what the check moves aside stays in the writable tree. -1 (EXDEV
 * when abs is not under that root). */
int gg_open_below(const struct gg *g, const char *abs);
int gg_statx(int dfd, const char *name, int flags, struct statx *sx);
void gg_quarantine(struct gg *g, int dfd, const char *dir, const char *name, const char *setting);
void gg_quarantine_why(struct gg *g, int dfd, const char *dir, const char *name, const char *setting,
		       const char *why);
/* Whether name has exactly one of the shapes gg_quarantine() gives a
 * copy it moves aside: NAME.passavant-quarantine, NAME.passavant-
 * quarantine.N (N from 2 to 99, as printed), NAME.passavant-quarantine.H
 * or .passavant-quarantine.H (H: 16 lower-case hex digits). The suffix
 * anywhere else (x.passavant-quarantine.js) is no such copy. */
bool gg_is_quarantine_name(const char *name);
/* Whether the entry dfd/name is a copy the check moved aside, which the
 * check skips: of such a shape, and either moved there by this walk, or
 * (unless all_new: the caller counts every entry there as new whatever
 * its ctime) not changed in the session. */
bool gg_quarantined(const struct gg *g, int dfd, const char *name, bool all_new);
void gg_report_error(struct gg *g, const char *dir, const char *name, const char *what, int errnum);
/* gg_report_error() of a file the check had to read to follow what it
 * names and could not (round 30 of the attack: a lease made the open
 * fail with EWOULDBLOCK, and "unreadable" had meant "nothing to
 * follow"), counted in g->st->unread, which makes run's status not 0.
 * errnum ENOENT or ENOTDIR (no such file: nothing to follow) reports
 * nothing. */
void gg_report_unread(struct gg *g, const char *dir, const char *name, const char *what, int errnum);
bool gg_ts_fresh(const struct gg *g, const struct statx_timestamp *t);

/*
 * The one way the check opens a directory it must read (round 30's
 * review: a hooks, info, rebase-merge, sequencer, include or package
 * directory made 0100 or 0300 by the command as a user other than root
 * is still one git or Python goes through, and a failed open had meant
 * "nothing there"). gg_dir_open_up(): openat(pfd, name, O_DIRECTORY, and
 * O_NOFOLLOW when nofollow); on EACCES, one of ours (owned by the
 * session's uid) gets u+rx and is opened again: *mode then holds the
 * mode to put back with gg_dir_mode_back() (path: for its report; also
 * when the second open fails), else is (mode_t)-1. -1 with errno.
 */
int gg_dir_open_up(int pfd, const char *name, bool nofollow, mode_t *mode);
void gg_dir_mode_back(struct gg *g, int pfd, const char *name, const char *path, mode_t mode);
/* A directory the check must read, for gg_dir_open(). */
struct gg_dir {
	int pfd;             /* where name is (AT_FDCWD for an absolute name) */
	const char *dir;     /* pfd's path, for reports ("" or the name itself
				with an absolute name) */
	const char *name;    /* the directory in pfd, or an absolute path */
	bool nofollow;       /* a final link is not followed (ELOOP: nothing) */
	bool is_new;         /* new whatever its ctime (the caller knows) */
	const char *setting; /* why it moves aside when it cannot be read and
				is new or changed in the session; NULL: never
				moved, only counted */
	const char *what;    /* the unread report ("cannot open the hooks
				directory"); NULL: the caller reports */
	mode_t mode;         /* set by gg_dir_open(): to put back */
};
/*
 * gg_dir_open_up() of d, and when that still fails (but for ENOENT,
 * ENOTDIR, and ELOOP: a link under nofollow, or a loop: nothing there
 * to go through), fail closed: one
 * changed in the session (is_new or its ctime) with a setting moves
 * aside whole (gg_quarantine()); else it is reported as unread
 * (gg_report_unread(), when what), which makes run's status 1. The fd,
 * or -1 with errno. gg_dir_close() closes the fd (if >= 0) and puts the
 * mode back.
 */
int gg_dir_open(struct gg *g, struct gg_dir *d);
void gg_dir_close(struct gg *g, const struct gg_dir *d, int fd);

/* gitrules.c */
void gg_check_dotgit_file(struct gg *g, int dfd, unsigned char type);
void gg_check_gitdir(struct gg *g, int gfd);
void gg_check_kept_config(struct gg *g, int dfd, const char *name, bool follow, const char *cfg,
			  const char *dir, const char *hooks_base);
void gg_find_git(struct gg *g);
void gg_check_global_hooks(struct gg *g, const char *base);
char *gg_config_list(const struct gg *g, const char *file, size_t *len, const char **why);
/* One git config run under way (gg_config_start()). */
struct gg_run {
	pid_t pid; /* git, -1 once reaped */
	int fd;    /* the read end of its stdout, -1 once closed */
};
int gg_config_start(const struct gg *g, const char *file, struct gg_run *r, const char **why);
/* Starts the host's git (g->git) with argv and envp in /, its stdin and
 * stderr /dev/null, its stdout a pipe: r filled, 0 (then one
 * gg_config_finish() or gg_config_abandon() of r), or -1 with errno.
 * Only async-signal-safe calls in the child. */
int gg_git_spawn(const struct gg *g, char *const argv[], char *const envp[], struct gg_run *r);
char *gg_config_finish(struct gg_run *r, size_t *len, const char **why);
void gg_config_abandon(struct gg_run *r);
/* gg_config_list()'s reasons (compare the pointers). */
#define GG_WHY_NO_GIT "git is not on PATH to check it"
#define GG_WHY_NO_GIT_RUN "cannot run git to check it"
#define GG_WHY_TOO_BIG "too large for git to list"
#define GG_WHY_UNPARSED "git cannot parse it"
#define GG_WHY_SLOW "git did not list it within 10 s"
/* How long one git run of the check may take (a FIFO or a device the
 * session made would block it for ever; round 17 of the attack). */
#define GG_GIT_DEADLINE_MS 10000
/* New or changed configs the check has git list in one walk; past it
 * they move aside unread (round 17: 10,000 new repositories made the
 * check take 47 s, a git run each). About 5 ms each here. */
#define GG_NEW_CONFIGS_MAX 2000
#define GG_STR_(x) #x
#define GG_STR(x) GG_STR_(x)
/* One record of gg_config_list()'s output: key [key, key + klen) (lower
 * case, as git lists it), value [val, val + vlen) (NULL: a key without a
 * value). */
struct gg_rec {
	const char *key, *val;
	size_t klen, vlen;
};
bool gg_config_next(const char *out, size_t len, const char **pos, struct gg_rec *r);

/* Whether r's key is k. */
static inline bool gg_rec_is(const struct gg_rec *r, const char *k)
{
	return r->klen == strlen(k) && memcmp(r->key, k, r->klen) == 0;
}

/* Whether r's key names a config file to include (include.path,
 * includeif.COND.path). */
static inline bool gg_rec_is_include(const struct gg_rec *r)
{
	return gg_rec_is(r, "include.path") ||
	       (r->klen > 15 && strncmp(r->key, "includeif.", 10) == 0 &&
		memcmp(r->key + r->klen - 5, ".path", 5) == 0);
}
bool gg_under_roots(const struct gg *g, const char *path);

/* gitindex.c: the index of the git directory g->path (open as gfd),
 * written in the session and left in place by gitviews.c: rewritten for
 * git to compare every file again (sizes 0, optional extensions dropped,
 * checksum new), or moved aside when that cannot undo what it hides (a
 * sparse directory entry over files the session wrote; bits whose work
 * tree is not known). wt: the work tree's path (NULL: not found); wfd:
 * it, open (-1: not opened, outside the root walked); sparse:
 * gg_sparse_before(). Settings files the index holds otherwise than wt
 * are named. */
void gg_index_settle(struct gg *g, int gfd, const char *wt, int wfd, bool sparse);
/* gitindex.c: the walk before the session: the settings entries of the
 * index of the git directory gfd into s (staged, staged_len,
 * staged_known), for stage_differs() to know an entry the user staged
 * before the session by what it holds, not by the times it records (the
 * session writes those too: the review of round 41). */
void gg_index_record(struct gg *g, int gfd, struct gg_refsnap *s);
/* gitviews.c: whether the git directory gfd is a sparse checkout set up
 * before the session: core.sparseCheckout true in its config or
 * config.worktree, and neither of them nor info/sparse-checkout written
 * in the session (all: its files count as new; then never). */
bool gg_sparse_before(const struct gg *g, int gfd, bool all);
/* gitviews.c: whether an entry marked skip-worktree or assume-unchanged,
 * or a sparse directory entry, whose path name is not in the work tree
 * wfd, hides a deletion from git status (round 34's d1): always, but in
 * a sparse checkout set up before the session (sparse), where only one
 * whose parent directory is there and changed in the session does (a
 * file removed from a directory the checkout holds). */
bool gg_absent_hides(const struct gg *g, int wfd, const char *name, bool sparse);
/* gitindex.c: the directory g->path (open as fd), when it is a .hg: its
 * dirstate written in the session gets every normal entry set to be
 * looked up again (v1), or moves aside (v2, or unparsed). */
void gg_check_hg(struct gg *g, int fd);
/* githg.c: the directory g->path (open as fd), when it is a .hg: the
 * files a shell prompt prints (branch, bookmarks, bookmarks.current,
 * topic) written in the session holding control characters move aside. */
void gg_check_hg_prompt(struct gg *g, int fd);
/* githg.c: the directory g->path (open as fd), when it is a .hg: the
 * files its hgrc and hgrc-not-shared %include, in a writable tree and
 * written in the session, move aside; kept ones are followed. */
void gg_check_hg_includes(struct gg *g, int fd);
/* gitviews.c: does [s, s + n) hold a byte a terminal takes for a control
 * (C0, DEL, C1 as UTF-8)? A final newline is not one. */
bool gg_has_control(const char *s, size_t n);

#endif
