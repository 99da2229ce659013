/*
 * pathwalk.h - the one walk of a path a component at a time (round 44:
 * it was written three times, in the sandbox's mount set-up and in
 * fileio_mkdirs_nolinks()). Each component is opened O_PATH|O_NOFOLLOW
 * from the directory before it and fstat'ed; a symbolic link anywhere
 * stops the walk (unless the caller's step takes it), a component that
 * is not a directory stops it unless it is the last. The walk ends with
 * a typed result that holds the handle of the last component reached,
 * so that a caller decides on that handle, once, and never walks the
 * same path again for a second look (which another program could have
 * changed in between).
 */
#ifndef PASSAVANT_PATHWALK_H
#define PASSAVANT_PATHWALK_H

#include <stdbool.h>
#include <sys/stat.h>

#include "base/attrib.h"

/* How a walk ended (pathwalk_result.end). */
enum pathwalk_end {
	PATHWALK_REACHED, /* every component opened: fd is the path's last */
	PATHWALK_LINK,    /* a component is a symbolic link (err ELOOP) */
	PATHWALK_NOTDIR,  /* a component before the last (or the last, with
			   * PATHWALK_DIR) is not a directory (err ENOTDIR) */
	PATHWALK_BADNAME, /* a component "..", "." (without PATHWALK_DOT) or
			   * longer than NAME_MAX (err EINVAL, ENAMETOOLONG) */
	PATHWALK_FAILED,  /* the start or a component could not be opened or
			   * fstat'ed: err is that errno (EACCES, ENOENT, ...) */
	PATHWALK_STOPPED, /* the step function stopped the walk */
};

/* One component, given to the step function after the walker's open. */
struct pathwalk_step {
	int dfd;          /* the directory it is in (the walker's: not closed by the step) */
	const char *name; /* the component, NUL-terminated */
	const char *end;  /* in the path: just past the component */
	unsigned depth;   /* directories passed from the start: 0 for the first component */
	bool last;        /* the path's last component */
	bool before;      /* PATHWALK_BEFORE's call: nothing opened yet (fd -1,
			   * err 0); GO opens it, STOP ends the walk before
			   * anything of the component is looked up */
	int fd;           /* the component, opened O_PATH|O_NOFOLLOW (O_DIRECTORY
			   * too when it is to be passed through), or -1 */
	int err;          /* fd -1: the open's errno */
	bool have_st;     /* st holds: the last component's fstat; or, fd -1
			   * with ENOTDIR or ELOOP, the entry's lstat (a link,
			   * a file in the way). A directory passed through
			   * is not fstat'ed (have_st false). */
	struct stat st;
};

/* What the step function asks for. */
enum pathwalk_act {
	PATHWALK_GO,    /* judge s->fd (or s->err) and go on: a step may put
			 * another handle in s->fd (closing the one it replaces)
			 * with its fstat in s->st (have_st), or set fd -1 and err */
	PATHWALK_AGAIN, /* open the component once more (the step made it):
			 * once per component, a second AGAIN is a GO */
	PATHWALK_STOP,  /* end the walk here (PATHWALK_STOPPED) */
};

typedef enum pathwalk_act (*pathwalk_fn)(void *ctx, struct pathwalk_step *s);

/* pathwalk() flags */
#define PATHWALK_DIR 1u /* the last component must be a directory too */
#define PATHWALK_DOT 2u /* a "." component is passed over (else BADNAME) */
/* The step is called once more for each component, before the walker
 * looks it up (s->before): a caller that must not look at a component at
 * all (round 46, fix46h: path_look(), a component on a mount of NFS or
 * autofs, whose lookup waits on a server or mounts) stops there. */
#define PATHWALK_BEFORE 4u
/* Every component is opened O_PATH|O_NOFOLLOW without O_DIRECTORY, as the
 * last one is, and fstat'ed (have_st): an automount point not mounted yet
 * is not mounted by the walk (open(2), O_PATH; fstatat's AT_NO_AUTOMOUNT),
 * where O_DIRECTORY asks for the mount. One fstat more a directory. */
#define PATHWALK_NOAUTOMOUNT 8u

struct pathwalk_result {
	enum pathwalk_end end;
	int err;        /* not REACHED: the errno that says why */
	int fd;         /* REACHED: the path's last component; else the last
			 * directory reached, the one the walk stopped in (-1
			 * when the start did not open). O_PATH; the caller
			 * closes it. */
	struct stat st; /* fd >= 0: fd's fstat */
	unsigned depth; /* components passed to reach fd */
	const char *at; /* not REACHED: the component of path the walk stopped at */
};

/*
 * Walks path (its components, leading and repeated slashes passed over)
 * from the directory start, opened as it resolves (links followed: the
 * caller's trusted base, or "/"). step (may be NULL) is called for each
 * component once the walker has opened it (or failed to). res is always
 * filled. Returns res->fd when REACHED, else -1 with errno = res->err
 * (ECANCELED for STOPPED).
 */
int pathwalk(const char *start, const char *path, unsigned flags, pathwalk_fn step, void *ctx,
	     struct pathwalk_result *res) NONNULL(1, 2, 6) WUNRES;

/* pathwalk() of the absolute path from "/" without a step, when only the
 * handle is wanted: the fd, or -1 with errno (ELOOP: a link on the way;
 * ENOTDIR; EINVAL: a "." or ".."; the open's errno). */
int pathwalk_open(const char *path) NONNULL(1) WUNRES;

#endif
