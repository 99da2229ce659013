/*
 * audit.c - JSON Lines writer. Each line is built in a buffer owned by the
 * audit_t (grown as needed, reused, so no allocation per line once warm)
 * and written with one write(2): O_APPEND makes each line land whole even
 * when two processes share the file. The buffer is shared by the proxy's
 * event loops: a lock makes building and writing a line one step (held
 * for a line's formatting and its write(2), never across a wait).
 */
#include "audit.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"

struct audit {
	int fd;          /* O_APPEND file */
	char *session;   /* session id */
	char *buf;       /* line being built */
	size_t cap;      /* bytes allocated in buf */
	bool torn;       /* a short write left part of a line: the next starts with "\n" */
	pthread_mutex_t lock; /* guards buf, cap, torn (audit_write() from several loops) */
};

/*
 * Opens (creating 0600) the audit file at path for appending, following
 * no symbolic link (SPEC §3.3: the file may lie in a tree a sandbox can
 * write, and a link planted there would make us append, as the host
 * user, to whatever it names): the directory is resolved once
 * (realpath), then the canonical path is opened with no link followed,
 * the file's own name included. O_NONBLOCK: a FIFO put there neither
 * blocks us nor takes the log (ENXIO, or EINVAL below). Under /dev and
 * /proc (kernel-made names: /dev/stderr, /dev/fd/63), opened as named.
 * The fd, or -1 with errno (ELOOP: a link; EINVAL: not a regular file).
 */
static int open_log(const char *path)
{
	char dir[PATH_MAX], real[PATH_MAX], canon[PATH_MAX];
	const char *slash = strrchr(path, '/'), *base = slash != NULL ? slash + 1 : path;
	struct stat st;
	int fd, saved;

	if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		errno = EISDIR;
		return -1;
	}
	if (slash == NULL)
		memcpy(dir, ".", 2);
	else if (slash == path)
		memcpy(dir, "/", 2);
	else if ((size_t)(slash - path) < sizeof(dir))
		(void)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (realpath(dir, real) == NULL)
		return -1;
	/* A stream the kernel names (/dev/stdout, /dev/stderr, /dev/fd/N
	 * of a shell's >(jq ...), /proc/self/fd/N): no sandbox can plant a
	 * link there, and a pipe or terminal is what is asked for. */
	if (strcmp(real, "/dev") == 0 || strncmp(real, "/dev/", 5) == 0 || strncmp(real, "/proc/", 6) == 0)
		return open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
	if (snprintf(canon, sizeof(canon), "%s/%s", strcmp(real, "/") == 0 ? "" : real, base) >=
	    (int)sizeof(canon)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = fileio_open_nolinks(canon, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_NONBLOCK, 0600);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		saved = errno;
	else if (!S_ISREG(st.st_mode))
		saved = EINVAL;
	else
		return fd;
	(void)close(fd);
	errno = saved;
	return -1;
}

audit_t *audit_open(const char *path, const char *session)
{
	audit_t *a = calloc(1, sizeof(*a));
	int saved;

	if (a == NULL)
		return NULL;
	a->fd = open_log(path);
	if (a->fd < 0)
		goto fail_free;
	a->session = strdup(session);
	if (a->session == NULL)
		goto fail_close;
	if ((saved = pthread_mutex_init(&a->lock, NULL)) != 0) {
		free(a->session);
		errno = saved;
		goto fail_close;
	}
	return a;
fail_close:
	saved = errno;
	(void)close(a->fd);
	errno = saved;
fail_free:
	saved = errno;
	free(a);
	errno = saved;
	return NULL;
}

void audit_free(audit_t *a)
{
	if (a == NULL)
		return;
	if (a->fd >= 0)
		(void)close(a->fd);
	free(a->session);
	free(a->buf);
	(void)pthread_mutex_destroy(&a->lock);
	free(a);
}

size_t audit_json_escape(char *out, size_t outlen, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0, i = 0;

	if (outlen == 0)
		return 0;
	while (i < len) {
		char esc[16];
		const char *piece = esc;
		size_t plen, adv = 1;
		uint32_t cp = 0;

		if (u[i] == '"' || u[i] == '\\') {
			esc[0] = '\\', esc[1] = (char)u[i], plen = 2;
		} else if (u[i] == '\n') {
			memcpy(esc, "\\n", 2), plen = 2;
		} else if (u[i] == '\r') {
			memcpy(esc, "\\r", 2), plen = 2;
		} else if (u[i] == '\t') {
			memcpy(esc, "\\t", 2), plen = 2;
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			(void)snprintf(esc, sizeof(esc), "\\u%04x", u[i]);
			plen = 6;
		} else if (u[i] < 0x80) {
			piece = s + i, plen = 1;
		} else if ((adv = log_utf8_seq(u + i, len - i, &cp)) != 0 && log_cp_acts(cp)) {
			/* C1 controls, U+2028 and its kin, bidi overrides: valid
			 * JSON raw, but a terminal showing the file, or a reader
			 * splitting it with splitlines(), would act on them
			 * (round 36). Escaped, they parse to the same text. */
			if (cp < 0x10000) {
				(void)snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
				plen = 6;
			} else { /* a tag character: its UTF-16 pair */
				(void)snprintf(esc, sizeof(esc), "\\u%04x\\u%04x", 0xd800u + ((cp - 0x10000) >> 10),
					       0xdc00u + ((cp - 0x10000) & 0x3ffu));
				plen = 12;
			}
		} else if (adv != 0) {
			piece = s + i, plen = adv;
		} else {
			/* Invalid byte: U+FFFD keeps the line valid JSON. */
			piece = "\xef\xbf\xbd", plen = 3, adv = 1;
		}
		if (o + plen > outlen - 1)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
		i += adv;
	}
	out[o] = '\0';
	return o;
}

/* Makes room for len more bytes (plus a NUL) at pos. -1 on ENOMEM. */
static int reserve(audit_t *a, size_t pos, size_t len)
{
	if (pos + len + 1 > a->cap) {
		size_t cap = a->cap ? a->cap : 1024;
		char *nb;

		while (cap < pos + len + 1)
			cap *= 2;
		nb = realloc(a->buf, cap);
		if (nb == NULL)
			return -1;
		a->buf = nb;
		a->cap = cap;
	}
	return 0;
}

/* Appends text to a->buf at *pos, growing it. -1 on ENOMEM. */
static int put(audit_t *a, size_t *pos, const char *text, size_t len)
{
	if (reserve(a, *pos, len) < 0)
		return -1;
	memcpy(a->buf + *pos, text, len);
	*pos += len;
	return 0;
}

/* Appends "key":"escaped" or "key":null. */
static int put_str(audit_t *a, size_t *pos, const char *key, const char *v, size_t vlen)
{
	char head[32];
	int n;

	n = snprintf(head, sizeof(head), ",\"%s\":", key);
	if (put(a, pos, head, (size_t)n) < 0)
		return -1;
	if (v == NULL)
		return put(a, pos, "null", 4);
	/* Reserve the worst case, then escape in place. */
	if (put(a, pos, "\"", 1) < 0 || reserve(a, *pos, 6 * vlen + 2) < 0)
		return -1;
	*pos += audit_json_escape(a->buf + *pos, 6 * vlen + 1, v, vlen);
	return put(a, pos, "\"", 1);
}

static int put_num(audit_t *a, size_t *pos, const char *key, int64_t v, bool is_null)
{
	char tmp[64];
	int n;

	if (is_null)
		n = snprintf(tmp, sizeof(tmp), ",\"%s\":null", key);
	else
		n = snprintf(tmp, sizeof(tmp), ",\"%s\":%" PRId64, key, v);
	return put(a, pos, tmp, (size_t)n);
}

static int put_cstr(audit_t *a, size_t *pos, const char *key, const char *v)
{
	return put_str(a, pos, key, v, v != NULL ? strlen(v) : 0);
}

/* Appends "injected":[names...], or null when the request was not seen
 * in clear. */
static int put_injected(audit_t *a, size_t *pos, const struct audit_rec *r)
{
	size_t i, len;

	if (!r->inspected)
		return put(a, pos, ",\"injected\":null", 16);
	if (put(a, pos, ",\"injected\":[", 13) < 0)
		return -1;
	for (i = 0; i < r->n_injected; i++) {
		len = strlen(r->injected[i]);
		if ((i > 0 && put(a, pos, ",", 1) < 0) || put(a, pos, "\"", 1) < 0 ||
		    reserve(a, *pos, 6 * len + 2) < 0)
			return -1;
		*pos += audit_json_escape(a->buf + *pos, 6 * len + 1, r->injected[i], len);
		if (put(a, pos, "\"", 1) < 0)
			return -1;
	}
	return put(a, pos, "]", 1);
}

static int write_line(audit_t *a, const struct audit_rec *r)
{
	struct timespec ts;
	struct tm tm;
	char tsbuf[64];
	size_t pos = 0, off;
	ssize_t w;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0 || gmtime_r(&ts.tv_sec, &tm) == NULL)
		return -1;
	off = strftime(tsbuf, sizeof(tsbuf), "{\"ts\":\"%Y-%m-%dT%H:%M:%S", &tm);
	(void)snprintf(tsbuf + off, sizeof(tsbuf) - off, ".%03ldZ\"", ts.tv_nsec / 1000000);
	/* After a short write (a full disk), the fragment it left ends
	 * here: the next record starts a line of its own. */
	if ((a->torn && put(a, &pos, "\n", 1) < 0) || put(a, &pos, tsbuf, strlen(tsbuf)) < 0 ||
	    put_cstr(a, &pos, "session", a->session) < 0 ||
	    put_cstr(a, &pos, "kind", r->kind) < 0 || put_cstr(a, &pos, "method", r->method) < 0 ||
	    put_cstr(a, &pos, "scheme", r->scheme) < 0 || put_cstr(a, &pos, "host", r->host) < 0 ||
	    put_num(a, &pos, "port", r->port, r->port == 0) < 0 ||
	    put_str(a, &pos, "target", r->target, r->target_len) < 0 ||
	    put_num(a, &pos, "status", r->status, r->status == 0) < 0 ||
	    put_cstr(a, &pos, "decision", r->decision) < 0 ||
	    put_cstr(a, &pos, "reason", r->reason) < 0 || put_cstr(a, &pos, "rule", r->rule) < 0 ||
	    put_injected(a, &pos, r) < 0 ||
	    put_num(a, &pos, "remasked", (int64_t)r->remasked, !r->inspected) < 0 ||
	    put_num(a, &pos, "bytesUp", r->bytes_up, r->bytes_up < 0) < 0 ||
	    put_num(a, &pos, "bytesDown", r->bytes_down, r->bytes_down < 0) < 0 ||
	    put_num(a, &pos, "ms", r->ms, r->ms < 0) < 0 || put_cstr(a, &pos, "tls", r->tls) < 0 ||
	    put_cstr(a, &pos, "proto", r->proto) < 0 || put(a, &pos, "}\n", 2) < 0) {
		errno = ENOMEM;
		return -1;
	}
	/* One write: a short write on a regular file means the disk is full. */
	w = write(a->fd, a->buf, pos);
	if (w < 0)
		return -1;
	if ((size_t)w != pos) {
		if (w > 0)
			a->torn = true;
		errno = ENOSPC;
		return -1;
	}
	a->torn = false;
	return 0;
}

void audit_sum_record(struct audit_rec *r, char *why, size_t cap, const char *kind, const char *what, uint64_t n,
		      unsigned per_s)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->decision = "deny";
	(void)snprintf(why, cap,
		       "passavant: %" PRIu64 " more %s came within a second and were not recorded one by one "
		       "(at most %u a second are)",
		       n, what, per_s);
	r->reason = why;
	r->summed = n;
	r->bytes_up = r->bytes_down = r->ms = -1;
}

int audit_write(audit_t *a, const struct audit_rec *r)
{
	int rc, saved;

	(void)pthread_mutex_lock(&a->lock);
	rc = write_line(a, r);
	saved = errno;
	(void)pthread_mutex_unlock(&a->lock);
	errno = saved;
	return rc;
}
