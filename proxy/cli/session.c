/*
 * session.c - the session directory and its env file.
 *
 * ca.pem and trust.pem are written by the session CA (proxy/tls.c,
 * ca_write_files()) before env, whose trust variables of SPEC §7
 * (SSL_CERT_FILE, CURL_CA_BUNDLE, ...) name trust.pem. files/ holds the
 * sentinel copies of masked files (mask_table_write_files()); env ends
 * with the sentinels of masked variables. What env holds is the plan's
 * (proxy/cli/plan.c); this file only writes it.
 */
#include "proxy/cli/session.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/log.h"

struct session {
	char *dir;       /* session directory */
	char *files;     /* <dir>/files once session_files_dir() made it */
	char id[17];     /* 16 hex digits */
	bool temporary;  /* we made dir with mkdtemp: remove it at the end */
};

/* Creates dir 0700, or adopts an existing directory that we own. */
static int make_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) == 0)
		return 0;
	if (errno != EEXIST) {
		log_warn("session directory %s", dir);
		return -1;
	}
	if (lstat(dir, &st) < 0) {
		log_warn("session directory %s", dir);
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		log_warnx("session directory %s: not a directory owned by us", dir);
		return -1;
	}
	if ((st.st_mode & 0777) != 0700 && chmod(dir, 0700) < 0) {
		log_warn("session directory %s: chmod 0700", dir);
		return -1;
	}
	return 0;
}

session_t *session_new(const char *dir)
{
	session_t *s = calloc(1, sizeof(*s));
	unsigned char rnd[8];
	size_t i;

	if (s == NULL) {
		log_warn("session");
		return NULL;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		log_warn("session id: getrandom");
		goto fail;
	}
	for (i = 0; i < sizeof(rnd); i++)
		(void)snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
	if (dir != NULL) {
		if (make_dir(dir) < 0)
			goto fail;
		s->dir = strdup(dir);
	} else {
		const char *tmp = getenv("TMPDIR");
		char path[4096];

		if (tmp == NULL || tmp[0] != '/')
			tmp = "/tmp";
		if (snprintf(path, sizeof(path), "%s/passavant-XXXXXX", tmp) >= (int)sizeof(path)) {
			log_warnx("cannot make the session directory (the CA, the policy's secrets): $TMPDIR is "
				  "longer than PATH_MAX; set TMPDIR to a shorter directory, or unset it for /tmp");
			goto fail;
		}
		/* mkdtemp creates it 0700. */
		if (mkdtemp(path) == NULL) {
			int e = errno;

			log_warnx("cannot make the session directory %s (the CA, the policy's secrets): %s; "
				  "set TMPDIR to an existing directory of your own, or unset it for /tmp",
				  path, strerror(e));
			goto fail;
		}
		s->dir = strdup(path);
		s->temporary = true;
	}
	if (s->dir == NULL) {
		log_warn("session");
		goto fail;
	}
	return s;
fail:
	free(s);
	return NULL;
}

/* Unlinks every non-directory entry of dir (the sentinel copies) and
 * removes dir; a subdirectory someone else made keeps it. */
static void remove_files_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		/* unlinkat without AT_REMOVEDIR never removes a directory. */
		(void)unlinkat(dirfd(d), e->d_name, 0);
	}
	(void)closedir(d);
	(void)rmdir(dir);
}

/* nftw() callback: removes what it is given (children first). */
static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

void session_free(session_t *s)
{
	char path[4096];

	if (s == NULL)
		return;
	/* A directory we invented is ours to remove; only the files we wrote
	 * are unlinked, so rmdir fails (and keeps it) if anything else is
	 * there. A directory the user named is left alone. */
	if (s->temporary && s->dir != NULL) {
		static const char *const files[] = {"env", "ca.pem", "trust.pem"};
		size_t i;

		for (i = 0; i < ARRAY_LEN(files); i++)
			if (snprintf(path, sizeof(path), "%s/%s", s->dir, files[i]) < (int)sizeof(path))
				(void)unlink(path);
		if (snprintf(path, sizeof(path), "%s/files", s->dir) < (int)sizeof(path))
			remove_files_dir(path);
		/* The run plan's trust and resolver files (plan.h
		 * PLAN_SYS_SUBDIR: cacerts.p12, certs/HASH.N, resolv.conf,
		 * hosts), all ours; links never followed (FTW_PHYS). */
		if (snprintf(path, sizeof(path), "%s/sys", s->dir) < (int)sizeof(path))
			(void)nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		(void)rmdir(s->dir);
	}
	free(s->files);
	free(s->dir);
	free(s);
}

const char *session_files_dir(session_t *s)
{
	char path[4096];

	if (s->files != NULL)
		return s->files;
	if (snprintf(path, sizeof(path), "%s/files", s->dir) >= (int)sizeof(path)) {
		log_warnx("session directory path too long");
		return NULL;
	}
	/* Same rules as the session directory: 0700, ours, not a link. */
	if (make_dir(path) < 0)
		return NULL;
	s->files = strdup(path);
	if (s->files == NULL)
		log_warn("session");
	return s->files;
}

const char *session_dir(const session_t *s)
{
	return s->dir;
}

const char *session_id(const session_t *s)
{
	return s->id;
}

/* Writes "NAME=value" as a shell line: inside single quotes only the
 * quote itself needs care (close, an escaped quote, reopen). A value of
 * letters and digits only goes unquoted unless always_quote. */
static int write_export(FILE *f, const char *entry, bool always_quote)
{
	size_t len = strcspn(entry, "=");
	const char *v = entry + len + (entry[len] == '=');
	bool bare = !always_quote && v[0] != '\0' && v[strspn(v, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")] == '\0';

	if (fprintf(f, "export %.*s=%s", (int)len, entry, bare ? "" : "'") < 0)
		return -1;
	for (; *v != '\0'; v++)
		if ((*v == '\'' ? fputs("'\\''", f) : putc(*v, f)) == EOF)
			return -1;
	return fputs(bare ? "\n" : "'\n", f) == EOF ? -1 : 0;
}

/* The lines of env, to f: the header, vars, sentinels. 0 or -1. */
static int write_env_lines(FILE *f, const char *id, const char *const *vars,
			   const char *const *sentinels)
{
	if (fprintf(f, "# passavant session %s: source this file to use the proxy\n", id) < 0)
		return -1;
	for (size_t i = 0; vars != NULL && vars[i] != NULL; i++)
		if (write_export(f, vars[i], false) < 0)
			return -1;
	/* SPEC §2: the sentinel of every masked variable (the file is 0600
	 * and holds no real value). */
	for (size_t i = 0; sentinels != NULL && sentinels[i] != NULL; i++)
		if (write_export(f, sentinels[i], true) < 0)
			return -1;
	return 0;
}

int session_write_env(session_t *s, const char *const *vars, const char *const *sentinels)
{
	char path[4096], tmp[4096];
	FILE *f;
	int fd;

	if (snprintf(path, sizeof(path), "%s/env", s->dir) >= (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/.env.tmp", s->dir) >= (int)sizeof(tmp)) {
		log_warnx("session directory path too long");
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		log_warn("%s", tmp);
		return -1;
	}
	f = fdopen(fd, "w");
	if (f == NULL) {
		log_warn("%s", tmp);
		(void)close(fd);
		goto fail_unlink;
	}
	if (write_env_lines(f, s->id, vars, sentinels) < 0 || fflush(f) != 0 || ferror(f)) {
		log_warn("%s", tmp);
		(void)fclose(f);
		goto fail_unlink;
	}
	if (fclose(f) != 0) {
		log_warn("%s", tmp);
		goto fail_unlink;
	}
	if (rename(tmp, path) < 0) {
		log_warn("%s", path);
		goto fail_unlink;
	}
	return 0;
fail_unlink:
	(void)unlink(tmp);
	return -1;
}
