/*
 * test_sentinels.c - proxy/cli/sentinels.c: the state directory, the
 * sentinel key and the ledger file (SPEC §4.1). Suite "cli_sentinels".
 *  - the directory: $XDG_STATE_HOME/passavant when absolute, else
 *    ~/.local/state/passavant; created 0700;
 *  - the key: created on first use (32 bytes, 0600), read back the same;
 *    refused when a symbolic link, not a regular file, open to group or
 *    others, of another owner (as root: chowned to 65534), of the wrong
 *    size; two processes creating it at once end with one key;
 *  - the ledger: missing is empty; written 0600 and read back; the key's
 *    refusals; a corrupt one refused with its line;
 *  - cli_stable_table(): the same sentinel in two "sessions", the ledger
 *    recorded, a changed value makes the old one stale.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proxy/cli/cli.h"
#include "tests/support/testlib.h"

/* dir/name with the given content and mode (0 or -1). */
static int put(const char *dir, const char *name, const void *data, size_t len, mode_t mode)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	(void)unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	if (fd < 0)
		return -1;
	if (write(fd, data, len) != (ssize_t)len || fchmod(fd, mode) != 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* cli_sentinel_key() on dir: 0 with the key in out, or -1 with err. */
static int key_of(const char *dir, unsigned char *out, char *err, size_t errlen)
{
	struct secmem key = {0};
	int dfd = cli_state_open(dir, err, errlen), rc;

	if (dfd < 0)
		return -1;
	rc = cli_sentinel_key(dfd, dir, &key, err, errlen);
	if (rc == 0) {
		memcpy(out, key.base, MASK_KEY_BYTES);
		secmem_unmap(&key);
	}
	close(dfd);
	return rc;
}

static void test_state_dir(void)
{
	char out[256], err[256];

	CU_ASSERT_EQUAL(cli_state_dir("/x/state", "/home/u", out, sizeof(out), err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/x/state/passavant");
	/* A relative XDG_STATE_HOME is ignored (XDG base directory spec). */
	CU_ASSERT_EQUAL(cli_state_dir("rel", "/home/u", out, sizeof(out), err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/home/u/.local/state/passavant");
	CU_ASSERT_EQUAL(cli_state_dir(NULL, "/home/u", out, sizeof(out), err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(out, "/home/u/.local/state/passavant");
	CU_ASSERT_EQUAL(cli_state_dir(NULL, NULL, out, sizeof(out), err, sizeof(err)), -1);
	CU_ASSERT(strstr(err, "per-session") != NULL);
}

static void test_key_created_and_read(void)
{
	char *tmp = test_mkdtemp(), dir[4096], path[4200], err[512];
	unsigned char k1[MASK_KEY_BYTES], k2[MASK_KEY_BYTES], zero[MASK_KEY_BYTES] = {0};
	struct stat st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	snprintf(dir, sizeof(dir), "%s/a/b/passavant", tmp);
	CU_ASSERT_EQUAL_FATAL(key_of(dir, k1, err, sizeof(err)), 0);
	CU_ASSERT(memcmp(k1, zero, sizeof(zero)) != 0);
	CU_ASSERT_EQUAL(stat(dir, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/a", tmp);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);
	snprintf(path, sizeof(path), "%s/sentinel.key", dir);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == MASK_KEY_BYTES);
	CU_ASSERT_EQUAL(key_of(dir, k2, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(memcmp(k1, k2, sizeof(k1)), 0);
	/* No temporary left behind. */
	snprintf(path, sizeof(path), "%s/.sentinel.key.%ld.tmp", dir, (long)getpid());
	CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
	test_rmtree(tmp);
	free(tmp);
}

static void test_key_refused(void)
{
	char *tmp = test_mkdtemp(), dir[4096], path[4200], other[4200], err[512];
	unsigned char k[MASK_KEY_BYTES], bytes[MASK_KEY_BYTES + 1];

	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	memset(bytes, 'k', sizeof(bytes));
	snprintf(dir, sizeof(dir), "%s/passavant", tmp);
	CU_ASSERT_FATAL(mkdir(dir, 0700) == 0);
	snprintf(path, sizeof(path), "%s/sentinel.key", dir);
	/* A symbolic link (to a good key). */
	snprintf(other, sizeof(other), "%s/elsewhere", tmp);
	CU_ASSERT_FATAL(put(tmp, "elsewhere", bytes, MASK_KEY_BYTES, 0600) == 0);
	CU_ASSERT_FATAL(symlink(other, path) == 0);
	CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
	CU_ASSERT(strstr(err, "symbolic link") != NULL);
	CU_ASSERT(unlink(path) == 0);
	/* Group or other bits. */
	CU_ASSERT_FATAL(put(dir, "sentinel.key", bytes, MASK_KEY_BYTES, 0640) == 0);
	CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
	CU_ASSERT(strstr(err, "mode 640") != NULL);
	CU_ASSERT_FATAL(put(dir, "sentinel.key", bytes, MASK_KEY_BYTES, 0604) == 0);
	CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
	/* Wrong sizes. */
	CU_ASSERT_FATAL(put(dir, "sentinel.key", bytes, MASK_KEY_BYTES - 1, 0600) == 0);
	CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
	CU_ASSERT(strstr(err, "31 bytes, expected 32") != NULL);
	CU_ASSERT_FATAL(put(dir, "sentinel.key", bytes, MASK_KEY_BYTES + 1, 0600) == 0);
	CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
	CU_ASSERT_FATAL(put(dir, "sentinel.key", bytes, 0, 0600) == 0);
	CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
	/* Not a regular file. */
	CU_ASSERT(unlink(path) == 0);
	CU_ASSERT_FATAL(mkfifo(path, 0600) == 0);
	CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
	CU_ASSERT(strstr(err, "not a regular file") != NULL);
	CU_ASSERT(unlink(path) == 0);
	/* Another owner (needs root to chown). */
	CU_ASSERT_FATAL(put(dir, "sentinel.key", bytes, MASK_KEY_BYTES, 0600) == 0);
	if (geteuid() == 0 && chown(path, 65534, 65534) == 0) {
		CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
		CU_ASSERT(strstr(err, "owner 65534") != NULL);
		/* A state directory of another owner, or open to others. */
		CU_ASSERT(unlink(path) == 0);
		CU_ASSERT(chown(dir, 65534, 65534) == 0);
		CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
		CU_ASSERT(chown(dir, 0, 0) == 0);
	} else {
		TEST_SKIP("not root: the wrong-owner case needs chown");
	}
	CU_ASSERT(chmod(dir, 0777) == 0);
	CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), -1);
	CU_ASSERT(strstr(err, "chmod 700") != NULL);
	CU_ASSERT(chmod(dir, 0700) == 0);
	/* The good one is then accepted. */
	CU_ASSERT_FATAL(put(dir, "sentinel.key", bytes, MASK_KEY_BYTES, 0600) == 0);
	CU_ASSERT_EQUAL(key_of(dir, k, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(memcmp(k, bytes, MASK_KEY_BYTES), 0);
	test_rmtree(tmp);
	free(tmp);
}

/* Several processes create the key at once: all read the same one. */
static void test_key_race(void)
{
	enum { N = 6 };
	char *tmp = test_mkdtemp(), dir[4096], err[512];
	unsigned char k[N][MASK_KEY_BYTES], mine[MASK_KEY_BYTES];
	int pipes[N][2];
	pid_t pid[N];

	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	snprintf(dir, sizeof(dir), "%s/passavant", tmp);
	for (int r = 0; r < 5; r++) {
		test_rmtree(dir);
		for (int i = 0; i < N; i++) {
			CU_ASSERT_FATAL(pipe(pipes[i]) == 0);
			pid[i] = fork();
			CU_ASSERT_FATAL(pid[i] >= 0);
			if (pid[i] == 0) {
				ssize_t w;
				close(pipes[i][0]);
				if (key_of(dir, mine, err, sizeof(err)) != 0)
					_exit(1);
				w = write(pipes[i][1], mine, sizeof(mine));
				_exit(w == (ssize_t)sizeof(mine) ? 0 : 2);
			}
			close(pipes[i][1]);
		}
		for (int i = 0; i < N; i++) {
			int status = -1;
			ssize_t n = read(pipes[i][0], k[i], MASK_KEY_BYTES);
			close(pipes[i][0]);
			CU_ASSERT(waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status) &&
				  WEXITSTATUS(status) == 0);
			CU_ASSERT_EQUAL(n, MASK_KEY_BYTES);
			if (i > 0)
				CU_ASSERT_EQUAL(memcmp(k[0], k[i], MASK_KEY_BYTES), 0);
		}
	}
	test_rmtree(tmp);
	free(tmp);
}

static void test_ledger_file(void)
{
	char *tmp = test_mkdtemp(), dir[4096], path[4200], err[512];
	mask_ledger_t *lg;
	struct stat st;
	int dfd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	snprintf(dir, sizeof(dir), "%s/passavant", tmp);
	dfd = cli_state_open(dir, err, sizeof(err));
	CU_ASSERT_FATAL(dfd >= 0);
	/* Missing: empty. */
	lg = cli_ledger_read(dfd, dir, err, sizeof(err));
	CU_ASSERT_FATAL(lg != NULL);
	CU_ASSERT_EQUAL(mask_ledger_names(lg), 0);
	mask_ledger_free(lg);
	/* Written 0600, read back. */
	CU_ASSERT_FATAL(put(dir, "sentinels", "656e763a41 6161616161\n", 22, 0600) == 0);
	lg = cli_ledger_read(dfd, dir, err, sizeof(err));
	CU_ASSERT_FATAL(lg != NULL);
	CU_ASSERT_EQUAL(mask_ledger_count(lg, "env:A"), 1);
	CU_ASSERT_EQUAL(cli_ledger_write(dfd, dir, lg, err, sizeof(err)), 0);
	mask_ledger_free(lg);
	snprintf(path, sizeof(path), "%s/sentinels", dir);
	CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	lg = cli_ledger_read(dfd, dir, err, sizeof(err));
	CU_ASSERT(lg != NULL && mask_ledger_count(lg, "env:A") == 1);
	mask_ledger_free(lg);
	/* Refused: open to others, a symbolic link, corrupt. */
	CU_ASSERT(chmod(path, 0644) == 0);
	CU_ASSERT_PTR_NULL(cli_ledger_read(dfd, dir, err, sizeof(err)));
	CU_ASSERT(strstr(err, "mode 644") != NULL);
	CU_ASSERT(unlink(path) == 0);
	CU_ASSERT(symlink("/etc/hostname", path) == 0);
	CU_ASSERT_PTR_NULL(cli_ledger_read(dfd, dir, err, sizeof(err)));
	CU_ASSERT(strstr(err, "symbolic link") != NULL);
	CU_ASSERT(unlink(path) == 0);
	CU_ASSERT_FATAL(put(dir, "sentinels", "# x\nnot hex\n", 12, 0600) == 0);
	CU_ASSERT_PTR_NULL(cli_ledger_read(dfd, dir, err, sizeof(err)));
	CU_ASSERT(strstr(err, "line 2:") != NULL && strstr(err, "remove it") != NULL);
	close(dfd);
	test_rmtree(tmp);
	free(tmp);
}

/* Two sessions through cli_stable_table(): the same sentinel; a new value
 * makes the old one stale; the ledger holds sentinels only. */
static void test_stable_table(void)
{
	static const char doc[] = "credentials:\n  envVars:\n    - {name: PV_CS_TOK, mode: mask}\n";
	static const char v1[] = "ghp_Cs1Ab2Cd3Ef4Gh5Ij6Kl7Mn8Op9Qr0St1Uv2W";
	static const char v2[] = "ghp_Cs1Ab2Cd3Ef4Gh5Ij6Kl7Mn8Op9Qr0St1Uv2Z";
	char *tmp = test_mkdtemp(), dir[4096], path[4200], err[512], s[3][64], *led;
	unsigned nerr = 0;
	policy_t *p = policy_load_buffer("t.yaml", doc, sizeof(doc) - 1, stderr, &nerr);
	const char *vals[3] = {v1, v1, v2};

	CU_ASSERT_FATAL(tmp != NULL && p != NULL);
	snprintf(dir, sizeof(dir), "%s/passavant", tmp);
	for (int i = 0; i < 3; i++) {
		mask_table_t *t;
		const char *sent = NULL;

		setenv("PV_CS_TOK", vals[i], 1);
		t = cli_stable_table(p, dir, err, sizeof(err));
		unsetenv("PV_CS_TOK");
		CU_ASSERT_FATAL(t != NULL);
		CU_ASSERT(mask_table_env_get(t, 0, &sent) != NULL && sent != NULL);
		snprintf(s[i], sizeof(s[i]), "%s", sent != NULL ? sent : "");
		CU_ASSERT_EQUAL(mask_table_stale_count(t), i == 2 ? 1 : 0);
		mask_table_free(t);
	}
	CU_ASSERT_STRING_EQUAL(s[0], s[1]);
	CU_ASSERT(strcmp(s[0], s[2]) != 0);
	snprintf(path, sizeof(path), "%s/sentinels", dir);
	led = test_read_file(path, NULL);
	CU_ASSERT_FATAL(led != NULL);
	/* The real values are in the ledger neither raw nor in hex. */
	for (int i = 0; i < 3; i++) {
		char hex[2 * sizeof(v1)];
		for (size_t k = 0; k < sizeof(v1) - 1; k++)
			snprintf(hex + 2 * k, 3, "%02x", (unsigned char)vals[i][k]);
		CU_ASSERT(strstr(led, vals[i]) == NULL && strstr(led, hex) == NULL);
	}
	free(led);
	policy_free(p);
	test_rmtree(tmp);
	free(tmp);
}

/*
 * Round 42: the state directory through a symbolic link ($XDG_STATE_HOME
 * in a writable tree, swapped for a link by a session): nothing is made
 * through it and it is refused by name; the home's own path may be
 * reached through one (a linked /home).
 */
static void test_state_dir_link(void)
{
	char *tmp = test_mkdtemp(), lnk[4096], dir[8400], made[8400], home[4200], err[512];
	char *old_home = getenv("HOME") != NULL ? strdup(getenv("HOME")) : NULL;
	struct stat st;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
	snprintf(made, sizeof(made), "%s/else", tmp);
	CU_ASSERT_FATAL(mkdir(made, 0700) == 0);
	snprintf(lnk, sizeof(lnk), "%s/state", tmp);
	CU_ASSERT_FATAL(symlink(made, lnk) == 0);
	snprintf(dir, sizeof(dir), "%s/passavant", lnk);
	fd = cli_state_open(dir, err, sizeof(err));
	CU_ASSERT(fd < 0);
	if (fd >= 0)
		close(fd);
	else
		CU_ASSERT(strstr(err, "symbolic link") != NULL);
	snprintf(made, sizeof(made), "%s/else/passavant", tmp);
	CU_ASSERT(stat(made, &st) != 0);
	/* a deeper one: not made either */
	snprintf(dir, sizeof(dir), "%s/x/passavant", lnk);
	fd = cli_state_open(dir, err, sizeof(err));
	CU_ASSERT(fd < 0);
	if (fd >= 0)
		close(fd);
	snprintf(made, sizeof(made), "%s/else/x", tmp);
	CU_ASSERT(stat(made, &st) != 0);
	/* the home reached through a link: its state directory is made */
	snprintf(home, sizeof(home), "%s/state", tmp);
	CU_ASSERT(setenv("HOME", home, 1) == 0);
	snprintf(dir, sizeof(dir), "%s/.local/state/passavant", home);
	fd = cli_state_open(dir, err, sizeof(err));
	CU_ASSERT(fd >= 0);
	if (fd >= 0)
		close(fd);
	snprintf(made, sizeof(made), "%s/else/.local/state/passavant", tmp);
	CU_ASSERT(stat(made, &st) == 0 && S_ISDIR(st.st_mode));
	if (old_home != NULL)
		CU_ASSERT(setenv("HOME", old_home, 1) == 0);
	free(old_home);
	test_rmtree(tmp);
	free(tmp);
}

TEST_REGISTRAR(register_cli_sentinels)
{
	CU_pSuite s = test_suite("cli_sentinels", NULL, NULL);

	test_add(s, "state directory: XDG_STATE_HOME, else ~/.local/state", test_state_dir);
	test_add(s, "round 42: state directory through a link: nothing made there, refused; a linked home's made",
		 test_state_dir_link);
	test_add(s, "key: created 0600 in a 0700 directory, read back", test_key_created_and_read);
	test_add(s, "key: symlink, mode, owner, size, FIFO refused", test_key_refused);
	test_add(s, "key: concurrent creators end with one key", test_key_race);
	test_add(s, "ledger file: missing, round trip, refusals", test_ledger_file);
	test_add(s, "two sessions: same sentinel; new value: old one stale", test_stable_table);
}
