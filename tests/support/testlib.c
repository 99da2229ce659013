/*
 * testlib.c - CUnit runner and small process/file helpers shared by tests.
 */
#include "testlib.h"
#include "proc.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <poll.h>
#include <stdarg.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TEST_MAX_REGISTRARS 256

static struct {
	test_registrar_fn fn;
	const char *name;
} registrars[TEST_MAX_REGISTRARS];
static size_t n_registrars;
static unsigned n_skipped; /* tests that called test_skip_at() */

void test_add_registrar(test_registrar_fn fn, const char *name)
{
	if (n_registrars == TEST_MAX_REGISTRARS) {
		fprintf(stderr, "testlib: too many registrars (%s)\n", name);
		abort();
	}
	registrars[n_registrars].fn = fn;
	registrars[n_registrars].name = name;
	n_registrars++;
}

int test_suite_fixtures(bool *ready, const char *suite, int (*up)(void), int (*cleanup)(void))
{
	if (*ready)
		return 0;
	if (up() < 0) {
		fprintf(stderr, "%s: the fixtures could not be set up (the lines above say why)\n", suite);
		(void)cleanup();
		return -1;
	}
	*ready = true;
	return 0;
}

CU_pSuite test_suite(const char *name, CU_InitializeFunc init, CU_CleanupFunc cleanup)
{
	const char *filter = getenv("TEST_FILTER");
	CU_pSuite s;

	s = CU_add_suite(name, init, cleanup);
	if (s == NULL) {
		fprintf(stderr, "testlib: CU_add_suite(%s): %s\n", name, CU_get_error_msg());
		abort();
	}
	if (filter != NULL && *filter != '\0' && strstr(name, filter) == NULL)
		CU_set_suite_active(s, CU_FALSE);
	return s;
}

void test_add(CU_pSuite s, const char *name, CU_TestFunc fn)
{
	const char *only = getenv("TEST_ONLY");

	/* TEST_ONLY=TEXT: only the tests whose name holds TEXT (one case
	 * of a long suite while working on it) */
	if (only != NULL && *only != '\0' && strstr(name, only) == NULL)
		return;
	if (CU_add_test(s, name, fn) == NULL) {
		fprintf(stderr, "testlib: CU_add_test(%s): %s\n", name, CU_get_error_msg());
		abort();
	}
}

/* The failures again, after CUnit's summary: a log read from its end
 * (CI keeps the tail) still says which test failed and where. */
static void print_failures(const char *title)
{
	const CU_FailureRecord *f = CU_get_failure_list();

	for (; f != NULL; f = f->pNext)
		if (f->type != CUF_SuiteInactive && f->type != CUF_TestInactive)
			printf("%s: FAILED %s / %s: %s:%u: %s\n", title,
			       f->pSuite != NULL && f->pSuite->pName != NULL ? f->pSuite->pName : "?",
			       f->pTest != NULL && f->pTest->pName != NULL ? f->pTest->pName : "?",
			       f->strFileName != NULL ? f->strFileName : "?", f->uiLineNumber,
			       f->strCondition != NULL ? f->strCondition : "?");
}

void test_skip_at(const char *file, unsigned line, const char *fmt, ...)
{
	const char *must = getenv("PASSAVANT_SANDBOX_MUST_WORK");
	const char *logpath = getenv("TEST_SKIP_LOG");
	CU_pSuite s = CU_get_current_suite();
	CU_pTest t = CU_get_current_test();
	char why[512], msg[768];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	(void)vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	(void)snprintf(msg, sizeof(msg), "%s / %s: %s", s != NULL && s->pName != NULL ? s->pName : "?",
		       t != NULL && t->pName != NULL ? t->pName : "?", why);
	if (must != NULL && strcmp(must, "1") == 0) {
		/* CUnit copies the condition text into its failure record. */
		CU_assertImplementation(CU_FALSE, line, msg, file, "", CU_FALSE);
		fprintf(stderr, "SKIP refused (PASSAVANT_SANDBOX_MUST_WORK=1): %s\n", msg);
		return;
	}
	n_skipped++;
	fprintf(stderr, "SKIP: %s\n", msg);
	if (logpath != NULL && *logpath != '\0') {
		f = fopen(logpath, "a");
		if (f == NULL) {
			fprintf(stderr, "testlib: cannot append to %s (TEST_SKIP_LOG): %s\n", logpath,
				strerror(errno));
			return;
		}
		fprintf(f, "%s\n", msg);
		if (fclose(f) != 0)
			fprintf(stderr, "testlib: cannot write %s (TEST_SKIP_LOG): %s\n", logpath,
				strerror(errno));
	}
}

size_t test_file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

char *test_file_since(const char *path, size_t mark)
{
	size_t len = 0;
	char *s = test_read_file(path, &len), *r;

	r = strdup(s != NULL && mark <= len ? s + mark : "");
	free(s);
	if (r == NULL)
		abort();
	return r;
}

int test_copy_file(const char *src, const char *dst, mode_t mode)
{
	size_t len = 0;
	char *data = test_read_file(src, &len);
	int rc;

	if (data == NULL)
		return -1;
	rc = test_write_file(dst, data, len);
	free(data);
	if (rc < 0 || chmod(dst, mode) < 0)
		return -1;
	return 0;
}

bool test_userns_available(char *why, size_t len)
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return false;
	}
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
			      CLONE_NEWUTS) == 0 ? 0 : errno);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st)) {
		snprintf(why, len, "probe child failed");
		return false;
	}
	if (WEXITSTATUS(st) != 0) {
		snprintf(why, len, "unshare(CLONE_NEWUSER|...): %s", strerror(WEXITSTATUS(st)));
		return false;
	}
	return true;
}

int test_run_all(const char *title)
{
	unsigned failed, ran;
	size_t i;

	signal(SIGPIPE, SIG_IGN);
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "testlib: CU_initialize_registry: %s\n", CU_get_error_msg());
		return 2;
	}
	for (i = 0; i < n_registrars; i++)
		registrars[i].fn();
	printf("%s: %zu suite files\n", title, n_registrars);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	ran = CU_get_number_of_tests_run();
	print_failures(title);
	printf("\n%s: %u tests run, %u asserts, %u failures, %u skipped\n", title, ran,
	       CU_get_number_of_asserts(), CU_get_number_of_tests_failed(), n_skipped);
	CU_cleanup_registry();
	if (ran == 0 && (getenv("TEST_FILTER") == NULL || *getenv("TEST_FILTER") == '\0')) {
		fprintf(stderr, "%s: no test ran\n", title);
		return 1;
	}
	return failed == 0 ? 0 : 1;
}

static const char *test_env(const char *name)
{
	const char *v = getenv(name);

	if (v == NULL || *v == '\0') {
		fprintf(stderr, "testlib: %s is not set (run the tests through make test)\n", name);
		abort();
	}
	return v;
}

const char *test_passavant_bin(void)
{
	return test_env("PASSAVANT_BIN");
}

const char *test_tools_dir(void)
{
	return test_env("PASSAVANT_TOOLS");
}

const char *test_srcdir(void)
{
	return test_env("PASSAVANT_SRCDIR");
}

char *test_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char *path;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	if (asprintf(&path, "%s/pv-test.XXXXXX", tmp) < 0)
		return NULL;
	if (mkdtemp(path) == NULL) {
		free(path);
		return NULL;
	}
	return path;
}

static int rmtree_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 ? 0 : 0;
}

void test_rmtree(const char *path)
{
	if (path != NULL)
		nftw(path, rmtree_cb, 16, FTW_DEPTH | FTW_PHYS);
}

void test_root_done(char **root, bool *ready)
{
	if (*ready)
		test_rmtree(*root);
	free(*root);
	*root = NULL;
	*ready = false;
}

int test_write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	return close(fd);
}

char *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (f == NULL)
		return NULL;
	for (;;) {
		size_t r;
		if (n + 4096 + 1 > cap) {
			char *nb;
			cap = cap ? cap * 2 : 8192;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

long test_rss_kib(pid_t pid)
{
	char path[64], *s, *p;
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = test_read_file(path, NULL);
	if (s != NULL && (p = strstr(s, "VmRSS:")) != NULL)
		v = strtol(p + 6, NULL, 10);
	free(s);
	return v;
}

bool test_vmflags(const void *addr, char *flags, size_t cap)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false, found = false;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t n = strspn(line, "0123456789abcdef");

		/* a mapping header: "start-end perms offset dev inode path" */
		if (n > 0 && line[n] == '-') {
			in = strtoul(line, NULL, 16) == (unsigned long)(uintptr_t)addr;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(flags, cap, "%s", line + 8);
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

struct capture {
	int fd;
	char *buf;
	size_t len, cap;
};

static int capture_read(struct capture *c)
{
	char tmp[4096];
	ssize_t n = read(c->fd, tmp, sizeof(tmp));

	if (n <= 0) {
		if (n < 0 && errno == EINTR)
			return 1;
		close(c->fd);
		c->fd = -1;
		return 0;
	}
	if (c->len + (size_t)n + 1 > c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 8192;
		char *nb;
		while (ncap < c->len + (size_t)n + 1)
			ncap *= 2;
		nb = realloc(c->buf, ncap);
		if (nb == NULL)
			abort();
		c->buf = nb;
		c->cap = ncap;
	}
	memcpy(c->buf + c->len, tmp, (size_t)n);
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	return 1;
}

int test_run_capture(char *const argv[], char **out, char **err, int timeout_ms)
{
	int po[2], pe[2], status;
	struct capture c[2];
	long long deadline = timeout_ms > 0 ? test_mono_ms() + timeout_ms : 0;
	pid_t pid;
	bool killed = false;

	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	memset(c, 0, sizeof(c));
	c[0].fd = po[0];
	c[1].fd = pe[0];
	while (c[0].fd >= 0 || c[1].fd >= 0) {
		struct pollfd pfd[2];
		int wait_ms = -1;
		for (int i = 0; i < 2; i++) {
			pfd[i].fd = c[i].fd;
			pfd[i].events = POLLIN;
		}
		if (deadline) {
			long long left = deadline - test_mono_ms();
			if (left <= 0) {
				kill(pid, SIGKILL);
				killed = true;
				deadline = 0;
				continue;
			}
			wait_ms = (int)left;
		}
		if (poll(pfd, 2, wait_ms) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++)
			if (c[i].fd >= 0 && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				capture_read(&c[i]);
	}
	for (int i = 0; i < 2; i++)
		if (c[i].fd >= 0)
			close(c[i].fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (out != NULL)
		*out = c[0].buf ? c[0].buf : strdup("");
	else
		free(c[0].buf);
	if (err != NULL)
		*err = c[1].buf ? c[1].buf : strdup("");
	else
		free(c[1].buf);
	if (killed)
		fprintf(stderr, "testlib: %s killed after %d ms\n", argv[0], timeout_ms);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

void test_row_check(bool ok, const char *file, unsigned line, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (ok) {
		CU_assertImplementation(CU_TRUE, line, "row", file, "", CU_FALSE);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	CU_assertImplementation(CU_FALSE, line, msg, file, "", CU_FALSE);
}

int test_git_sh(const char *root, bool show, const char *fmt, ...)
{
	char script[8192], full[9000];
	char *argv[] = {"sh", "-ec", full, NULL};
	char *out = NULL, *err = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vsnprintf(script, sizeof(script), fmt, ap);
	va_end(ap);
	if (rc < 0 || (size_t)rc >= sizeof(script))
		return -1;
	if (snprintf(full, sizeof(full),
		     "export HOME='%s/githome' GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t "
		     "GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t; cd '%s'\n%s",
		     root, root, script) >= (int)sizeof(full))
		return -1;
	rc = test_run_capture(argv, &out, &err, 60000);
	if (rc != 0 && show)
		fprintf(stderr, "\n  setup script failed (%d): %s\n  %s %s\n", rc, script, out ? out : "", err ? err : "");
	else if (rc != 0)
		fprintf(stderr, "\n  setup script failed (%d)\n", rc);
	free(out);
	free(err);
	return rc;
}

bool test_exists_at(const char *root, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	return lstat(test_at(p, root, rel), &st) == 0;
}

int test_mkdirs_at(const char *root, const char *rel)
{
	char p[PATH_MAX];

	if (test_at(p, root, rel)[0] == '\0')
		return -1;
	for (char *s = p + strlen(root) + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -1;
			*s = c;
			if (c == '\0')
				return 0;
		}
	}
}

int test_put_at(const char *root, const char *rel, const char *text)
{
	char p[PATH_MAX];

	if (test_at(p, root, rel)[0] == '\0' || test_write_file(p, text, strlen(text)) < 0)
		return -1;
	return chmod(p, 0644);
}

void test_show_run(int st, const char *out, const char *err)
{
	fprintf(stderr, "\n  status %d\n  stdout: %s\n  stderr: %s\n", st, out ? out : "(null)",
		err ? err : "(null)");
}
