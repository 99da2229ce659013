/*
 * test_pathwalk.c - the one component walker (suite "pathwalk", round
 * 44): its typed results, the handle it stops in, its step function, and
 * fileio_mkdirs_nolinks() built on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/pathwalk.h"
#include "tests/support/testlib.h"

/* dir/a/b (directories), dir/a/f (a file), dir/a/l -> b (a link). */
static void make_tree(char *dir, size_t len, const char *tmpl)
{
	char p[PATH_MAX];

	snprintf(dir, len, "%s", tmpl);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/a", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/a/b", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/a/f", dir);
	CU_ASSERT_EQUAL_FATAL(close(open(p, O_WRONLY | O_CREAT | O_EXCL, 0644)), 0);
	snprintf(p, sizeof(p), "%s/a/l", dir);
	CU_ASSERT_EQUAL_FATAL(symlink("b", p), 0);
}

static void rm_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* One walk of dir + rest: the end, the errno, the depth of the handle. */
static void expect(const char *dir, const char *rest, unsigned flags, enum pathwalk_end end, int err)
{
	char p[PATH_MAX];
	struct pathwalk_result res;
	int fd;

	snprintf(p, sizeof(p), "%s%s", dir, rest);
	fd = pathwalk("/", p, flags, NULL, NULL, &res);
	CU_ASSERT_EQUAL(res.end, end);
	if (res.end != end)
		fprintf(stderr, "pathwalk %s: end %d, not %d\n", p, (int)res.end, (int)end);
	if (end == PATHWALK_REACHED) {
		CU_ASSERT(fd >= 0);
		CU_ASSERT_EQUAL(fd, res.fd);
	} else {
		CU_ASSERT_EQUAL(fd, -1);
		CU_ASSERT_EQUAL(res.err, err);
		CU_ASSERT_EQUAL(errno, err);
		/* the handle of the directory it stopped in */
		CU_ASSERT(res.fd >= 0 && S_ISDIR(res.st.st_mode));
	}
	if (res.fd >= 0)
		CU_ASSERT_EQUAL(close(res.fd), 0);
}

static void test_pathwalk_ends(void)
{
	char dir[64];

	make_tree(dir, sizeof(dir), "/tmp/pv-walk-XXXXXX");
	expect(dir, "/a/b", 0, PATHWALK_REACHED, 0);
	expect(dir, "//a///b/", 0, PATHWALK_REACHED, 0);
	expect(dir, "/a/f", 0, PATHWALK_REACHED, 0);
	expect(dir, "/a/f", PATHWALK_DIR, PATHWALK_NOTDIR, ENOTDIR);
	expect(dir, "/a/f/x", 0, PATHWALK_NOTDIR, ENOTDIR);
	expect(dir, "/a/l", 0, PATHWALK_LINK, ELOOP);
	expect(dir, "/a/l/x", 0, PATHWALK_LINK, ELOOP);
	expect(dir, "/a/../a", 0, PATHWALK_BADNAME, EINVAL);
	expect(dir, "/a/./b", 0, PATHWALK_BADNAME, EINVAL);
	expect(dir, "/a/./b", PATHWALK_DOT, PATHWALK_REACHED, 0);
	expect(dir, "/a/nothere/b", 0, PATHWALK_FAILED, ENOENT);
	{
		char p[PATH_MAX];
		struct pathwalk_result res;
		int fd;

		/* The handle a failed walk gives is the directory it stopped
		 * in, its depth and stat with it: a caller decides there. */
		snprintf(p, sizeof(p), "%s/a/b/nothere/x", dir);
		fd = pathwalk("/", p, 0, NULL, NULL, &res);
		CU_ASSERT_EQUAL(fd, -1);
		CU_ASSERT_STRING_EQUAL(res.at, "nothere/x");
		CU_ASSERT_EQUAL(res.depth, 4); /* tmp, pv-walk-, a, b */
		{
			struct stat b;

			snprintf(p, sizeof(p), "%s/a/b", dir);
			CU_ASSERT_EQUAL(stat(p, &b), 0);
			CU_ASSERT(res.st.st_dev == b.st_dev && res.st.st_ino == b.st_ino);
		}
		CU_ASSERT_EQUAL(close(res.fd), 0);
		/* From another start; the start missing: no handle. */
		snprintf(p, sizeof(p), "%s/a", dir);
		fd = pathwalk(p, "b", PATHWALK_DIR, NULL, NULL, &res);
		CU_ASSERT(fd >= 0 && res.end == PATHWALK_REACHED && res.depth == 1);
		if (fd >= 0)
			CU_ASSERT_EQUAL(close(fd), 0);
		fd = pathwalk("/nonexistent/pv-walk", "b", 0, NULL, NULL, &res);
		CU_ASSERT(fd == -1 && res.fd == -1 && res.end == PATHWALK_FAILED && res.err == ENOENT);
	}
	errno = 0;
	{
		char p[PATH_MAX + 300];

		snprintf(p, sizeof(p), "%s/%0300d", dir, 0);
		CU_ASSERT_EQUAL(pathwalk_open(p), -1);
		CU_ASSERT_EQUAL(errno, ENAMETOOLONG);
	}
	rm_tree(dir);
}

/*
 * EACCES (a directory the walker may not search): the walk stops in the
 * directory above with its owner, the one handle a caller decides on
 * (sandbox/mountns.c out_of_reach() decided on a second walk of the
 * path, round 44). Run as nobody, in a child: root searches anything.
 */
static void test_pathwalk_eacces(void)
{
	char dir[64], p[PATH_MAX];
	pid_t pid;
	int status;

	make_tree(dir, sizeof(dir), "/tmp/pv-walk-XXXXXX");
	CU_ASSERT_EQUAL_FATAL(chmod(dir, 0755), 0);
	snprintf(p, sizeof(p), "%s/a", dir);
	CU_ASSERT_EQUAL_FATAL(chmod(p, 0700), 0); /* root's, others may not search */
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		struct pathwalk_result res;
		int fd, bad = 0;

		if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
			_exit(3);
		snprintf(p, sizeof(p), "%s/a/b/c", dir);
		fd = pathwalk("/", p, 0, NULL, NULL, &res);
		bad |= fd != -1 || res.end != PATHWALK_FAILED || res.err != EACCES;
		bad |= res.fd < 0 || !S_ISDIR(res.st.st_mode) || res.st.st_uid != 0 || strcmp(res.at, "b/c") != 0;
		_exit(bad ? 1 : 0);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	rm_tree(dir);
}

struct step_log {
	unsigned calls, made;
	bool stop_at_f;
};

/* Makes a missing directory (AGAIN), stops at "f", counts its calls. */
static enum pathwalk_act step_fn(void *ctx, struct pathwalk_step *s)
{
	struct step_log *l = ctx;

	l->calls++;
	if (l->stop_at_f && strcmp(s->name, "f") == 0)
		return PATHWALK_STOP;
	if (s->fd < 0 && s->err == ENOENT) {
		if (mkdirat(s->dfd, s->name, 0700) == 0)
			l->made++;
		return PATHWALK_AGAIN;
	}
	return PATHWALK_GO;
}

static void test_pathwalk_step(void)
{
	struct step_log log = {0};
	struct pathwalk_result res;
	char dir[64], p[PATH_MAX];
	int fd;

	make_tree(dir, sizeof(dir), "/tmp/pv-walk-XXXXXX");
	snprintf(p, sizeof(p), "%s/a", dir);
	fd = pathwalk(p, "b/x/y", PATHWALK_DIR, step_fn, &log, &res);
	CU_ASSERT(fd >= 0 && res.end == PATHWALK_REACHED && S_ISDIR(res.st.st_mode));
	CU_ASSERT_EQUAL(log.made, 2);
	CU_ASSERT_EQUAL(log.calls, 5); /* b; x twice; y twice */
	if (fd >= 0)
		CU_ASSERT_EQUAL(close(fd), 0);
	log.stop_at_f = true;
	fd = pathwalk(p, "f", 0, step_fn, &log, &res);
	CU_ASSERT(fd == -1 && res.end == PATHWALK_STOPPED && res.err == ECANCELED && res.fd >= 0);
	if (res.fd >= 0)
		CU_ASSERT_EQUAL(close(res.fd), 0);
	rm_tree(dir);
}

/* fix46h: what path_look() (proxy/cli/plan.c) needs of the walker, and
 * why it had a walk of its own: a look at each component BEFORE it is
 * looked up (a component on an NFS or autofs mount is never opened: the
 * step stops there), and no O_DIRECTORY open of a directory passed
 * through (it mounts an automount point; O_PATH alone does not):
 * PATHWALK_NOAUTOMOUNT fstats each instead. */
struct before_log {
	unsigned before, after, after_dir_st;
	const char *refuse;
};

static enum pathwalk_act before_fn(void *ctx, struct pathwalk_step *s)
{
	struct before_log *l = ctx;

	if (s->before) {
		l->before++;
		CU_ASSERT(s->fd == -1 && s->err == 0);
		return l->refuse != NULL && strcmp(s->name, l->refuse) == 0 ? PATHWALK_STOP : PATHWALK_GO;
	}
	l->after++;
	if (s->fd >= 0 && !s->last && s->have_st && S_ISDIR(s->st.st_mode))
		l->after_dir_st++;
	return PATHWALK_GO;
}

static void test_pathwalk_before(void)
{
	struct before_log log = {0};
	struct pathwalk_result res;
	char dir[64], p[PATH_MAX];
	int fd;

	make_tree(dir, sizeof(dir), "/tmp/pv-walk-XXXXXX");
	snprintf(p, sizeof(p), "%s/a", dir);
	/* refused before its lookup: STOPPED at it, never opened (a
	 * missing name: an open would have failed ENOENT) */
	log.refuse = "missing";
	fd = pathwalk(p, "b/missing/deeper", PATHWALK_BEFORE | PATHWALK_NOAUTOMOUNT, before_fn, &log, &res);
	CU_ASSERT(fd == -1 && res.end == PATHWALK_STOPPED && res.err == ECANCELED);
	CU_ASSERT(res.at != NULL && strcmp(res.at, "missing/deeper") == 0);
	CU_ASSERT(log.before == 2 && log.after == 1);
	CU_ASSERT(res.fd >= 0 && S_ISDIR(res.st.st_mode));
	if (res.fd >= 0)
		CU_ASSERT_EQUAL(close(res.fd), 0);
	/* NOAUTOMOUNT: each directory passed through fstat'ed (opened
	 * without O_DIRECTORY); a link or a file in the way: typed as
	 * before */
	memset(&log, 0, sizeof(log));
	fd = pathwalk("/", dir, PATHWALK_BEFORE | PATHWALK_NOAUTOMOUNT, before_fn, &log, &res);
	CU_ASSERT(fd >= 0 && res.end == PATHWALK_REACHED && S_ISDIR(res.st.st_mode));
	CU_ASSERT(log.before == log.after && log.after_dir_st + 1 == log.after);
	if (fd >= 0)
		CU_ASSERT_EQUAL(close(fd), 0);
	snprintf(p, sizeof(p), "%s/a/l/x", dir);
	fd = pathwalk("/", p, PATHWALK_NOAUTOMOUNT, NULL, NULL, &res);
	CU_ASSERT(fd == -1 && res.end == PATHWALK_LINK && res.err == ELOOP && strcmp(res.at, "l/x") == 0);
	if (res.fd >= 0)
		CU_ASSERT_EQUAL(close(res.fd), 0);
	snprintf(p, sizeof(p), "%s/a/f/x", dir);
	fd = pathwalk("/", p, PATHWALK_NOAUTOMOUNT, NULL, NULL, &res);
	CU_ASSERT(fd == -1 && res.end == PATHWALK_NOTDIR && res.err == ENOTDIR);
	if (res.fd >= 0)
		CU_ASSERT_EQUAL(close(res.fd), 0);
	snprintf(p, sizeof(p), "%s/a/l", dir);
	fd = pathwalk("/", p, PATHWALK_NOAUTOMOUNT, NULL, NULL, &res);
	CU_ASSERT(fd == -1 && res.end == PATHWALK_LINK);
	if (res.fd >= 0)
		CU_ASSERT_EQUAL(close(res.fd), 0);
	rm_tree(dir);
}

/* fileio_mkdirs_nolinks() on the walker: made, links, "." and "..". */
static void test_mkdirs_nolinks(void)
{
	char dir[64], p[PATH_MAX], made[PATH_MAX];
	struct stat st;
	int fd;

	make_tree(dir, sizeof(dir), "/tmp/pv-walk-XXXXXX");
	snprintf(p, sizeof(p), "%s/a/b/n1/n2", dir);
	fd = fileio_mkdirs_nolinks(p, NULL, 0700, true, made, sizeof(made));
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	CU_ASSERT_EQUAL(close(fd), 0);
	snprintf(p, sizeof(p), "%s/a/b/n1", dir);
	CU_ASSERT_STRING_EQUAL(made, p);
	/* again: nothing made */
	snprintf(p, sizeof(p), "%s/a/b/./n1/n2", dir);
	fd = fileio_mkdirs_nolinks(p, NULL, 0700, true, made, sizeof(made));
	CU_ASSERT(fd >= 0);
	if (fd >= 0)
		CU_ASSERT_EQUAL(close(fd), 0);
	CU_ASSERT_STRING_EQUAL(made, "");
	/* a link on the way, also below trusted: ELOOP, nothing made */
	snprintf(p, sizeof(p), "%s/a/l/n3", dir);
	errno = 0;
	CU_ASSERT_EQUAL(fileio_mkdirs_nolinks(p, NULL, 0700, true, made, sizeof(made)), -1);
	CU_ASSERT_EQUAL(errno, ELOOP);
	CU_ASSERT_STRING_EQUAL(made, "");
	CU_ASSERT(lstat(p, &st) < 0);
	errno = 0;
	CU_ASSERT_EQUAL(fileio_mkdirs_nolinks(p, dir, 0700, true, made, sizeof(made)), -1);
	CU_ASSERT_EQUAL(errno, ELOOP);
	/* Refusals, nothing made: a file on the way or as the last (ENOTDIR),
	 * ".." (EINVAL), missing without create (ENOENT), relative (EINVAL). */
	static const struct {
		const char *rel; /* below dir; NULL: the relative "tmp/x" */
		bool create;
		int err;
	} refused[] = {
		{"a/f/n3", true, ENOTDIR}, {"a/f", false, ENOTDIR}, {"a/../a/n4", true, EINVAL},
		{"a/n5", false, ENOENT}, {NULL, false, EINVAL},
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (refused[i].rel != NULL)
			snprintf(p, sizeof(p), "%s/%s", dir, refused[i].rel);
		else
			snprintf(p, sizeof(p), "tmp/x");
		errno = 0;
		CU_ASSERT_EQUAL(fileio_mkdirs_nolinks(p, NULL, 0700, refused[i].create, NULL, 0), -1);
		CU_ASSERT_EQUAL(errno, refused[i].err);
	}
	/* A link the system keeps (Debian's /var/run -> /run: root's, in
	 * root's /var that no one else may write) is taken outside trusted. */
	if (lstat("/var/run", &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid == 0) {
		fd = fileio_mkdirs_nolinks("/var/run", NULL, 0755, false, NULL, 0);
		CU_ASSERT(fd >= 0);
		if (fd >= 0)
			CU_ASSERT_EQUAL(close(fd), 0);
	}
	/* trusted itself, with trailing slashes */
	snprintf(p, sizeof(p), "%s/a/", dir);
	fd = fileio_mkdirs_nolinks(p, p, 0700, false, NULL, 0);
	CU_ASSERT(fd >= 0);
	if (fd >= 0)
		CU_ASSERT_EQUAL(close(fd), 0);
	rm_tree(dir);
}

TEST_REGISTRAR(pathwalk_suite)
{
	CU_pSuite s = test_suite("pathwalk", NULL, NULL);

	test_add(s, "pathwalk: typed ends, handle where it stops", test_pathwalk_ends);
	test_add(s, "pathwalk: EACCES stops in the directory above, its owner", test_pathwalk_eacces);
	test_add(s, "pathwalk: step makes, retries once, stops", test_pathwalk_step);
	test_add(s, "fix46h: pathwalk BEFORE a lookup, and NOAUTOMOUNT (path_look's walk)", test_pathwalk_before);
	test_add(s, "fileio_mkdirs_nolinks: made, links, dots", test_mkdirs_nolinks);
}
