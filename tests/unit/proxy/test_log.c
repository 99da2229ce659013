/*
 * test_log.c - proxy/log.c (suite "proxy_log"): every line has one
 * "passavant: " prefix, also when the message is a refusal reason that
 * is a whole line already; errno text and truncation of long lines.
 *
 * Includes the source to reach its statics (STYLE.md 18).
 */
#include "../../../proxy/log.c"
#include "../../support/testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs emit with stderr sent to a temporary file; returns what it wrote
 * (malloc'd), or NULL. */
static char *captured(void (*emit)(void))
{
	char path[] = "/tmp/pv-log.XXXXXX", *text = NULL;
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);

	if (fd < 0 || saved < 0) {
		if (fd >= 0)
			close(fd);
		if (saved >= 0)
			close(saved);
		return NULL;
	}
	fflush(stderr);
	if (dup2(fd, STDERR_FILENO) >= 0) {
		emit();
		fflush(stderr);
		(void)dup2(saved, STDERR_FILENO);
		text = test_read_file(path, NULL);
	}
	close(saved);
	close(fd);
	unlink(path);
	return text;
}

static void emit_plain(void)
{
	log_info("%s", "session 1 in dir");
}

static void emit_reason(void)
{
	log_info("%s", "passavant: GET http://x/ refused by network.allowedDomains");
}

static void emit_errno(void)
{
	errno = ENOENT;
	log_warn("cannot open %s", "f");
}

static void emit_long_reason(void)
{
	char big[3000];

	memcpy(big, "passavant: ", 11);
	memset(big + 11, 'a', sizeof(big) - 12);
	big[sizeof(big) - 1] = '\0';
	log_info("%s", big);
}

/* Round 36: a reason quoting what a client sent (a Host, an HTTP/2
 * :path) with C1 controls, U+2028, a bidi override, ESC, DEL and a byte
 * that begins no UTF-8. */
static void emit_acting(void)
{
	log_info("%s", "passavant: GET https://h/x\xc2\x9b" "31m\xc2\x9d" "52;c;QQ\xe2\x80\xa8\xe2\x80\xae"
		       "caf\xc3\xa9" "\x1b[2J\x7f\xff refused");
}

/* What emit writes at level info is want. */
static void check_emitted(void (*emit)(void), const char *want)
{
	enum log_level was = log_get_level();
	char *t;

	log_set_level(LOG_LEVEL_INFO);
	t = captured(emit);
	CU_ASSERT_FATAL(t != NULL);
	if (strcmp(t, want) != 0)
		fprintf(stderr, "got [%s]\n", t);
	CU_ASSERT(strcmp(t, want) == 0);
	free(t);
	log_set_level(was);
}

static void test_acting(void)
{
	check_emitted(emit_acting, "passavant: GET https://h/x\\xc2\\x9b31m\\xc2\\x9d52;c;QQ\\xe2\\x80\\xa8"
				   "\\xe2\\x80\\xae" "caf\xc3\xa9\\x1b[2J\\x7f\\xff refused\n");
}

/* Round 36 review: code points that show nothing (a soft hyphen, a tag
 * character, a variation selector) are written \xNN too. */
static void emit_hidden(void)
{
	log_info("%s", "passavant: GET https://h/v1\xc2\xad" "x\xf3\xa0\x81\x81\xef\xb8\x80 refused");
}

static void test_hidden(void)
{
	check_emitted(emit_hidden,
		      "passavant: GET https://h/v1\\xc2\\xadx\\xf3\\xa0\\x81\\x81\\xef\\xb8\\x80 refused\n");
}

static void test_prefix(void)
{
	enum log_level was = log_get_level();
	char *t;

	log_set_level(LOG_LEVEL_INFO);
	t = captured(emit_plain);
	CU_ASSERT(t != NULL && strcmp(t, "passavant: session 1 in dir\n") == 0);
	free(t);
	/* A refusal reason is a whole line: one prefix, not two. */
	t = captured(emit_reason);
	CU_ASSERT(t != NULL && strcmp(t, "passavant: GET http://x/ refused by network.allowedDomains\n") == 0);
	free(t);
	t = captured(emit_errno);
	CU_ASSERT(t != NULL && strcmp(t, "passavant: cannot open f: No such file or directory\n") == 0);
	free(t);
	/* Cut to the line buffer: one prefix, one newline, nothing of the
	 * cut tail repeated. */
	t = captured(emit_long_reason);
	CU_ASSERT_FATAL(t != NULL);
	CU_ASSERT(strncmp(t, "passavant: aaa", 14) == 0);
	CU_ASSERT(strstr(t + 1, "passavant: ") == NULL);
	CU_ASSERT(strlen(t) < 1024 && t[strlen(t) - 1] == '\n' && strchr(t, '\n') == t + strlen(t) - 1);
	CU_ASSERT(strspn(t + 11, "a") == strlen(t) - 12);
	free(t);
	log_set_level(was);
}

TEST_REGISTRAR(proxy_log_register)
{
	CU_pSuite s = test_suite("proxy_log", NULL, NULL);

	test_add(s, "one prefix per line, reasons included; errno; long lines cut", test_prefix);
	test_add(s, "code points a reader acts on (C1, U+2028, bidi, ESC) written \\xNN; other text kept", test_acting);
	test_add(s, "code points that show nothing (soft hyphen, tags, variation selectors) written \\xNN",
		 test_hidden);
}
