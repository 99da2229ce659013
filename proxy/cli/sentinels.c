/*
 * sentinels.c - the host-held state of stable sentinels (SPEC §4.1): the
 * key ($XDG_STATE_HOME/passavant/sentinel.key, else
 * ~/.local/state/passavant/sentinel.key) and the ledger beside it
 * (sentinels). Both are read-denied in the sandbox (policy/bind.c,
 * policy/mandatory.c). docs/masking.md "Stable sentinels" describes the
 * design.
 *
 * The key: 32 bytes from getrandom(), created on first use as a temporary
 * file (O_CREAT|O_EXCL, 0600) linked into place with link(), which never
 * replaces an existing name: of two sessions starting at once, the loser
 * of the link reads the winner's key, and no reader ever sees a partial
 * key. It is read into locked, undumpable memory (base/secmem.h) and
 * wiped after the table is built. A key or ledger file that is a
 * symbolic link, not a regular file, not ours, open to group or others,
 * or (the key) not 32 bytes, is refused: no session.
 *
 * The ledger is read and rewritten (temporary file + rename) under an
 * exclusive flock on the directory, held from before the read until
 * after the rename.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errbuf.h"
#include "base/fileio.h"
#include "proxy/cli/cli.h"

/* What a refused key or ledger message ends with. */
#define SENT_FIX "remove it (or fix it) and run again, or set credentials.sentinels: per-session"

int cli_state_dir(const char *xdg_state_home, const char *home, char *out, size_t outlen,
		  char *err, size_t errlen)
{
	int n;

	/* The XDG base directory spec ignores a relative value. */
	if (xdg_state_home != NULL && xdg_state_home[0] == '/')
		n = snprintf(out, outlen, "%s/passavant", xdg_state_home);
	else if (home != NULL && home[0] == '/')
		n = snprintf(out, outlen, "%s/.local/state/passavant", home);
	else {
		errbuf_set(err, errlen,
			   "no state directory for the sentinel key: neither $XDG_STATE_HOME nor "
			   "$HOME is an absolute path; set one, or set credentials.sentinels: "
			   "per-session");
		return -1;
	}
	if (n < 0 || (size_t)n >= outlen) {
		errbuf_set(err, errlen, "the state directory path is too long");
		return -1;
	}
	return 0;
}

int cli_state_open(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int fd, pfd;

	/* Round 42: made and opened without following a link below the
	 * home (a $XDG_STATE_HOME a session could swap for one: nothing is
	 * made or read through it); the home's own path as it resolves */
	pfd = fileio_mkdirs_nolinks(dir, getenv("HOME"), 0700, true, NULL, 0);
	if (pfd < 0 && errno != ELOOP && errno != ENOTDIR) {
		errbuf_set(err, errlen, "cannot create the state directory %s: %s; create it (mode 0700)", dir,
			   strerror(errno));
		return -1;
	}
	fd = pfd < 0 ? -1 : openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0)
		(void)close(pfd);
	if (fd < 0) {
		errbuf_set(err, errlen, "state directory %s: %s%s", dir, strerror(errno),
			   errno == ELOOP || errno == ENOTDIR
				   ? " (a symbolic link or not a directory); expected a directory "
				     "of yours, mode 0700"
				   : "");
		return -1;
	}
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
		errbuf_set(err, errlen,
			   "state directory %s is not a directory of yours closed to others "
			   "(owner %u, mode %03o); chmod 700 it or remove it",
			   dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		(void)close(fd);
		return -1;
	}
	return fd;
}

/*
 * Opens name in dfd for reading under the rules of the key and the
 * ledger: no symbolic link, a regular file of ours with no group or
 * other permission bits. Returns the fd, -2 when it does not exist, or
 * -1 with a message.
 */
static int open_private(int dfd, const char *dir, const char *name, struct stat *st, char *err,
			size_t errlen)
{
	const char *what = strcmp(name, CLI_SENTINEL_KEY) == 0 ? "sentinel key" : "sentinel ledger";

	int fd = fileio_open_regular_at(dfd, name, FILEIO_NOFOLLOW, st);

	if (fd < 0) {
		if (errno == ENOENT)
			return -2;
		errbuf_set(err, errlen, "%s %s/%s: %s; expected a regular file of yours, mode 0600; %s",
			   what, dir, name,
			   errno == ELOOP	? "is a symbolic link"
			   : errno == EINVAL ? "is not a regular file"
					     : strerror(errno),
			   SENT_FIX);
		return -1;
	}
	if (st->st_uid != geteuid() || (st->st_mode & 077) != 0) {
		errbuf_set(err, errlen,
			   "%s %s/%s: owner %u, mode %03o; expected a file of yours (uid %u) that "
			   "only you can read (mode 0600); %s",
			   what, dir, name, (unsigned)st->st_uid, (unsigned)(st->st_mode & 0777),
			   (unsigned)geteuid(), SENT_FIX);
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* Reads the key at dfd/sentinel.key into key. 0, -2 (does not exist) or
 * -1 with a message. */
static int key_read(int dfd, const char *dir, unsigned char *key, char *err, size_t errlen)
{
	struct stat st;
	ssize_t n;
	int fd = open_private(dfd, dir, CLI_SENTINEL_KEY, &st, err, errlen);

	if (fd < 0)
		return fd;
	if (st.st_size != MASK_KEY_BYTES) {
		errbuf_set(err, errlen, "sentinel key %s/%s: %lld bytes, expected %d; %s", dir,
			   CLI_SENTINEL_KEY,
			   (long long)st.st_size, MASK_KEY_BYTES, SENT_FIX);
		(void)close(fd);
		return -1;
	}
	n = fileio_read_full(fd, key, MASK_KEY_BYTES);
	(void)close(fd);
	if (n != MASK_KEY_BYTES) {
		explicit_bzero(key, MASK_KEY_BYTES);
		errbuf_set(err, errlen, "sentinel key %s/%s: cannot read it: %s; %s", dir,
			   CLI_SENTINEL_KEY,
			   n < 0 ? strerror(errno) : "short read", SENT_FIX);
		return -1;
	}
	return 0;
}

/* Creates the key: a temporary file with fresh random bytes, linked into
 * place (never replacing one). 0, 1 (another process won: read its key)
 * or -1 with a message. */
static int key_create(int dfd, const char *dir, char *err, size_t errlen)
{
	unsigned char fresh[MASK_KEY_BYTES];
	char tmp[64];
	size_t off = 0;
	int fd, rc = -1;

	while (off < sizeof(fresh)) {
		ssize_t n = getrandom(fresh + off, sizeof(fresh) - off, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errbuf_set(err, errlen, "cannot draw the sentinel key: getrandom: %s",
				   strerror(errno));
			return -1;
		}
		off += (size_t)n;
	}
	(void)snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", CLI_SENTINEL_KEY, (long)getpid());
	(void)unlinkat(dfd, tmp, 0); /* a stale one of ours */
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		errbuf_set(err, errlen, "cannot create the sentinel key in %s: %s", dir,
			   strerror(errno));
		goto out;
	}
	if (write(fd, fresh, sizeof(fresh)) != (ssize_t)sizeof(fresh) || fsync(fd) != 0) {
		errbuf_set(err, errlen, "cannot write the sentinel key in %s: %s", dir,
			   strerror(errno));
		(void)close(fd);
		(void)unlinkat(dfd, tmp, 0);
		goto out;
	}
	(void)close(fd);
	if (linkat(dfd, tmp, dfd, CLI_SENTINEL_KEY, 0) == 0)
		rc = 0;
	else if (errno == EEXIST)
		rc = 1;
	else
		errbuf_set(err, errlen, "cannot put the sentinel key in place in %s: %s", dir,
			   strerror(errno));
	(void)unlinkat(dfd, tmp, 0);
out:
	explicit_bzero(fresh, sizeof(fresh));
	return rc;
}

int cli_sentinel_key(int dfd, const char *dir, struct secmem *key, char *err, size_t errlen)
{
	enum secmem_result sr = secmem_map(key, MASK_KEY_BYTES, 0);
	int rc;

	if (sr != SECMEM_OK) {
		errbuf_set(err, errlen, "cannot allocate locked memory for the sentinel key: %s",
			   strerror(errno));
		return -1;
	}
	rc = key_read(dfd, dir, key->base, err, errlen);
	if (rc == -2) {
		rc = key_create(dfd, dir, err, errlen);
		/* Created, or another session linked its key first: read what
		 * is in place now (the same for both). */
		if (rc >= 0)
			rc = key_read(dfd, dir, key->base, err, errlen);
		if (rc == -2) {
			errbuf_set(err, errlen, "%s/%s vanished while it was created", dir,
				   CLI_SENTINEL_KEY);
			rc = -1;
		}
	}
	if (rc != 0)
		secmem_unmap(key);
	return rc;
}

mask_ledger_t *cli_ledger_read(int dfd, const char *dir, char *err, size_t errlen)
{
	char perr[256];
	struct stat st;
	mask_ledger_t *lg;
	size_t len = 0;
	char *text;
	int fd = open_private(dfd, dir, CLI_SENTINEL_LEDGER, &st, err, errlen);

	if (fd == -2) {
		lg = mask_ledger_new();
		if (lg == NULL)
			errbuf_set(err, errlen, "out of memory");
		return lg;
	}
	if (fd < 0)
		return NULL;
	(void)close(fd);
	text = fileio_read_at(dfd, CLI_SENTINEL_LEDGER, MASK_LEDGER_FILE_MAX, FILEIO_NOFOLLOW, &len,
			      &st);
	if (text == NULL) {
		errbuf_set(err, errlen, "sentinel ledger %s/%s: cannot read it: %s; %s", dir,
			   CLI_SENTINEL_LEDGER,
			   errno == EFBIG ? "larger than the ledger can be" : strerror(errno),
			   SENT_FIX);
		return NULL;
	}
	lg = mask_ledger_parse(text, len, perr, sizeof(perr));
	free(text);
	if (lg == NULL)
		errbuf_set(err, errlen,
			   "sentinel ledger %s/%s: %s; remove it (stale sentinels are then no longer "
			   "recognised) and run again",
			   dir, CLI_SENTINEL_LEDGER, perr);
	return lg;
}

int cli_ledger_write(int dfd, const char *dir, const mask_ledger_t *lg, char *err, size_t errlen)
{
	char tmp[64];
	size_t len = 0, off = 0;
	char *text = mask_ledger_format(lg, &len);
	int fd;

	if (text == NULL) {
		errbuf_set(err, errlen, "out of memory");
		return -1;
	}
	(void)snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", CLI_SENTINEL_LEDGER, (long)getpid());
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			(void)close(fd);
			goto fail_unlink;
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0) {
		(void)close(fd);
		goto fail_unlink;
	}
	if (close(fd) != 0 || renameat(dfd, tmp, dfd, CLI_SENTINEL_LEDGER) != 0)
		goto fail_unlink;
	free(text);
	return 0;
fail_unlink:
	{
		int saved = errno;
		(void)unlinkat(dfd, tmp, 0);
		errno = saved;
	}
fail:
	errbuf_set(err, errlen, "cannot write the sentinel ledger %s/%s: %s", dir,
		   CLI_SENTINEL_LEDGER, strerror(errno));
	free(text);
	return -1;
}

mask_table_t *cli_stable_table(const policy_t *p, const char *dir, char *err, size_t errlen)
{
	struct secmem key = {0};
	mask_ledger_t *lg = NULL;
	mask_table_t *t = NULL;
	char e2[512];
	int dfd = cli_state_open(dir, err, errlen);

	if (dfd < 0)
		return NULL;
	/* One session at a time from the ledger's read to its rewrite. */
	while (flock(dfd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			errbuf_set(err, errlen, "cannot lock the state directory %s: %s", dir,
				   strerror(errno));
			goto out;
		}
	}
	if (cli_sentinel_key(dfd, dir, &key, err, errlen) != 0)
		goto out;
	lg = cli_ledger_read(dfd, dir, err, errlen);
	if (lg == NULL)
		goto out;
	t = mask_table_new_stable(p, &(struct mask_stable){.key = key.base, .ledger = lg}, err,
				  errlen);
	if (t == NULL)
		goto out;
	if (mask_ledger_record(lg, t) != 0)
		errbuf_set(err, errlen, "sentinel ledger: out of memory");
	else if (cli_ledger_write(dfd, dir, lg, e2, sizeof(e2)) != 0)
		errbuf_set(err, errlen, "%s", e2);
	else
		goto out;
	mask_table_free(t);
	t = NULL;
out:
	if (key.base != NULL)
		secmem_unmap(&key);
	mask_ledger_free(lg);
	(void)close(dfd); /* releases the lock */
	return t;
}
