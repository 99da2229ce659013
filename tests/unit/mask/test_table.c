/*
 * test_table.c - mask/table.c and mask/secret.c: the credential table
 * built from a policy, its sandbox-facing outputs, per-host eligibility,
 * remasking, Basic auth and the secret arena's hygiene.
 *
 * Includes both sources to reach the table's values (to compare with the
 * expected sentinels) and the arena's wipe hook. The "real" values here
 * are synthetic, but treated as secrets anyway: no assertion message
 * contains one, only memcmp/memmem results.
 */
#include "../../../mask/secret.c"
#include "../../../mask/table.c"

#include "../../support/testlib.h"

#include <linux/capability.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <event2/buffer.h>
#include <openssl/evp.h>

/* Synthetic secrets. Q has quotes and punctuation a URL encoder escapes. */
#define REAL_GH "ghp_R3alT0kenValue0123456789abcdefABCD"
#define REAL_Q "Qx7'kz\"Pm/9+Lw=Tr4Yb8Nc2Vd6Hs1"
/* The whole file's secret, and the file: the white space around it (a
 * token file's newline) is no part of the secret. */
#define REAL_WHOLE "whole-file-secret-AbCdEf0123456789XyZwVu"
#define WHOLE_FILE " \t" REAL_WHOLE "\r\n"
#define REAL_TOK2 "Zq9Wv8Ut7Sr6Qp5On4Ml3Kj2"
#define CFG_TEXT "# config\nuser=alice\ntoken=" REAL_GH "\nother = 1\ntoken=" REAL_TOK2 "\ntail"

static const char *const reals[] = { REAL_GH, REAL_Q, REAL_WHOLE, REAL_TOK2 };

/* Whether needle occurs in hay (binary-safe). */
static bool contains(const void *hay, size_t hlen, const char *needle)
{
	return memmem(hay, hlen, needle, strlen(needle)) != NULL;
}

/* Asserts that no real value occurs in buf; names only the index. */
static void assert_no_real(const void *buf, size_t len, const char *what)
{
	for (size_t i = 0; i < ARRAY_LEN(reals); i++) {
		if (contains(buf, len, reals[i])) {
			char msg[160];
			snprintf(msg, sizeof(msg), "real value #%zu found in %s", i, what);
			CU_FAIL(msg);
		}
	}
}

/* RFC 3986 unreserved: what a URL encoder leaves alone. */
static bool unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

/* Index of the value equal to real (test access to the table). */
static size_t value_of(const mask_table_t *t, const char *real)
{
	for (size_t i = 0; i < t->nvalues; i++)
		if (t->value[i].len == strlen(real) && memcmp(t->value[i].real, real, t->value[i].len) == 0)
			return i;
	CU_FAIL("value not in the table");
	return SIZE_MAX;
}

/* Test fixture: a temp dir with the two files and a loaded policy. */
struct fx {
	char *dir;
	policy_t *p;
	mask_table_t *t;
};

static int fx_setup(struct fx *f)
{
	char path[512], doc[2048];
	unsigned nerr = 0;
	char err[256];
	int n;

	memset(f, 0, sizeof(*f));
	f->dir = test_mkdtemp();
	if (f->dir == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/whole", f->dir);
	if (test_write_file(path, WHOLE_FILE, strlen(WHOLE_FILE)) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cfg", f->dir);
	if (test_write_file(path, CFG_TEXT, strlen(CFG_TEXT)) != 0)
		return -1;
	setenv("PV_MT_GH", REAL_GH, 1);
	setenv("PV_MT_Q", REAL_Q, 1);
	unsetenv("PV_MT_UNSET");
	setenv("PV_MT_DENY", "whatever", 1);
	n = snprintf(doc, sizeof(doc),
		     "network:\n"
		     "  allowedDomains: [api.github.com, other.example.com, \"*.corp.example\"]\n"
		     "credentials:\n"
		     "  envVars:\n"
		     "    - {name: PV_MT_GH, mode: mask, injectHosts: [api.github.com]}\n"
		     "    - {name: PV_MT_Q, mode: mask, injectHosts: [other.example.com],\n"
		     "       injectIn: [header, query]}\n"
		     "    - {name: PV_MT_UNSET, mode: mask, injectHosts: [api.github.com]}\n"
		     "    - {name: PV_MT_DENY, mode: deny}\n"
		     "  files:\n"
		     "    - {path: %s/whole, mode: mask, injectHosts: [\"*.corp.example\"],\n"
		     "       injectIn: [body]}\n"
		     "    - {path: %s/cfg, mode: mask, extract: \"token=([A-Za-z0-9_]+)\",\n"
		     "       injectHosts: [api.github.com]}\n",
		     f->dir, f->dir);
	if (n < 0 || (size_t)n >= sizeof(doc))
		return -1;
	f->p = policy_load_buffer("t.yaml", doc, (size_t)n, stderr, &nerr);
	if (f->p == NULL)
		return -1;
	f->t = mask_table_new(f->p, err, sizeof(err));
	if (f->t == NULL) {
		fprintf(stderr, "mask_table_new: %s\n", err);
		return -1;
	}
	return 0;
}

static void fx_teardown(struct fx *f)
{
	mask_table_free(f->t);
	policy_free(f->p);
	if (f->dir != NULL)
		test_rmtree(f->dir);
	free(f->dir);
}

/* ------------------------------------------------------------------ */

static void test_build(void)
{
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	/* Unset and deny credentials are not kept. */
	CU_ASSERT_EQUAL(mask_table_cred_count(f.t), 4);
	CU_ASSERT_STRING_EQUAL(mask_table_cred_name(f.t, 0), "PV_MT_GH");
	CU_ASSERT_STRING_EQUAL(mask_table_cred_name(f.t, 1), "PV_MT_Q");
	CU_ASSERT_PTR_NULL(mask_table_cred_name(f.t, 4));
	/* The cfg token equal to PV_MT_GH shares its value and sentinel. */
	CU_ASSERT_EQUAL(mask_table_value_count(f.t), 4);
	for (size_t i = 0; i < ARRAY_LEN(reals); i++) {
		size_t v = value_of(f.t, reals[i]);
		const struct tvalue *tv;
		if (v == SIZE_MAX)
			continue;
		tv = &f.t->value[v];
		/* Same length, never the real value, distinct from others. */
		CU_ASSERT_EQUAL(strlen(tv->sent), tv->len);
		CU_ASSERT_NOT_EQUAL(memcmp(tv->sent, tv->real, tv->len), 0);
		for (size_t j = 0; j < f.t->nvalues; j++)
			if (j != v && f.t->value[j].len == tv->len)
				CU_ASSERT_NOT_EQUAL(memcmp(f.t->value[j].sent, tv->sent, tv->len), 0);
	}
	CU_ASSERT_EQUAL(mask_table_value_cred(f.t, value_of(f.t, REAL_GH)), 0);
	CU_ASSERT_EQUAL(mask_table_value_cred(f.t, value_of(f.t, REAL_TOK2)), 3);
	CU_ASSERT_EQUAL(memcmp(f.t->value[value_of(f.t, REAL_GH)].sent, "ghp_", 4), 0);
	CU_ASSERT(mask_table_hygiene(f.t) & MASK_HYG_DONTDUMP);
	fx_teardown(&f);
}

static void test_env_lines(void)
{
	struct fx f;
	const struct tvalue *vq;
	const char *gh = NULL, *q = NULL, *sent;
	char text[1024];
	size_t len = 0;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	/* The masked variables' name -> sentinel pairs (the session env file
	 * and the sandbox environment are written from these). */
	for (size_t i = 0; i < mask_table_env_count(f.t); i++) {
		const char *name = mask_table_env_get(f.t, i, &sent);

		CU_ASSERT_PTR_NOT_NULL_FATAL(name);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s=%s\n", name, sent);
		CU_ASSERT_FATAL(len < sizeof(text));
		if (strcmp(name, "PV_MT_GH") == 0)
			gh = sent;
		if (strcmp(name, "PV_MT_Q") == 0)
			q = sent;
	}
	assert_no_real(text, len, "env pairs");
	CU_ASSERT(gh != NULL && strncmp(gh, "ghp_", 4) == 0);
	CU_ASSERT_PTR_NULL(strstr(text, "PV_MT_UNSET"));
	CU_ASSERT_PTR_NULL(strstr(text, "PV_MT_DENY"));
	/* Exactly the sentinel, the quote of Q's shape included. */
	vq = &f.t->value[value_of(f.t, REAL_Q)];
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_EQUAL(strlen(q), vq->len);
	CU_ASSERT_EQUAL(memcmp(q, vq->sent, vq->len), 0);
	CU_ASSERT_PTR_NOT_NULL(memchr(q, '\'', strlen(q)));
	fx_teardown(&f);
}

/* Round 32 of the attack, b18: the real value written elsewhere in a
 * file masked through `extract` (a URL's userinfo, its base64 form), and
 * another credential's value in it (raw and percent-encoded), were kept
 * in clear in the sandbox's copy. The copy goes through the re-masker. */
#define REAL_DUP "sk-proj-Dup1icateVALUE0123456789abcdefGHIJ"
#define REAL_DUP_B64 "c2stcHJvai1EdXAxaWNhdGVWQUxVRTAxMjM0NTY3ODlhYmNkZWZHSElK"
#define REAL_Q_PCT "Qx7%27kz%22Pm%2F9%2BLw%3DTr4Yb8Nc2Vd6Hs1"
#define DUP_FILE                                                                                   \
	"OPENAI_API_KEY=" REAL_DUP "\nFALLBACK_URL=https://x:" REAL_DUP "@proxy.example/v1\n"      \
	"KEY_B64=" REAL_DUP_B64 "\nQ_URL=https://h.example/?q=" REAL_Q_PCT "\nQ=" REAL_Q "\nend\n"

static void test_files_other_forms(void)
{
	char *dir = test_mkdtemp(), path[512], doc[1024], err[256];
	const char *copy = NULL;
	const struct tvalue *vd, *vq;
	unsigned char b64[128];
	unsigned nerr = 0;
	policy_t *p;
	mask_table_t *t;
	size_t len;
	char *got;
	int n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	snprintf(path, sizeof(path), "%s/.env", dir);
	CU_ASSERT_EQUAL_FATAL(test_write_file(path, DUP_FILE, strlen(DUP_FILE)), 0);
	setenv("PV_MT_Q", REAL_Q, 1);
	n = snprintf(doc, sizeof(doc),
		     "network:\n  allowedDomains: [api.openai.com, other.example.com]\n"
		     "credentials:\n"
		     "  envVars:\n"
		     "    - {name: PV_MT_Q, mode: mask, injectHosts: [other.example.com]}\n"
		     "  files:\n"
		     "    - {path: %s/.env, mode: mask, extract: \"OPENAI_API_KEY=([A-Za-z0-9_-]+)\",\n"
		     "       injectHosts: [api.openai.com]}\n",
		     dir);
	CU_ASSERT_FATAL(n > 0 && (size_t)n < sizeof(doc));
	p = policy_load_buffer("t.yaml", doc, (size_t)n, stderr, &nerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	t = mask_table_new(p, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	snprintf(path, sizeof(path), "%s/files", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(path, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(mask_table_write_files(t, path, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mask_table_file_copy(t, 0, &copy));
	CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
	got = test_read_file(copy, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	/* Every form is gone... */
	CU_ASSERT(!contains(got, len, REAL_DUP));
	CU_ASSERT(!contains(got, len, REAL_DUP_B64));
	CU_ASSERT(!contains(got, len, REAL_Q));
	CU_ASSERT(!contains(got, len, REAL_Q_PCT));
	/* ... each one replaced by the sentinel in the same form, and the rest
	 * kept byte for byte (sentinels have their value's length). */
	vd = &t->value[value_of(t, REAL_DUP)];
	vq = &t->value[value_of(t, REAL_Q)];
	CU_ASSERT_EQUAL(len, strlen(DUP_FILE));
	CU_ASSERT_EQUAL(memcmp(got, "OPENAI_API_KEY=", 15), 0);
	CU_ASSERT_EQUAL(memcmp(got + 15, vd->sent, vd->len), 0);
	{
		const char *url = memmem(got, len, "https://x:", 10);
		CU_ASSERT_PTR_NOT_NULL_FATAL(url);
		CU_ASSERT_EQUAL(memcmp(url + 10, vd->sent, vd->len), 0);
		CU_ASSERT_EQUAL(memcmp(url + 10 + vd->len, "@proxy.example/v1\n", 18), 0);
	}
	CU_ASSERT_EQUAL(EVP_EncodeBlock(b64, (const unsigned char *)vd->sent, (int)vd->len),
			(int)strlen(REAL_DUP_B64));
	CU_ASSERT(contains(got, len, (const char *)b64));
	CU_ASSERT(memmem(got, len, vq->sent, vq->len) != NULL);
	CU_ASSERT(contains(got, len, "\nend\n"));
	assert_no_real(got, len, "copy with other forms");
	free(got);
	mask_table_free(t);
	policy_free(p);
	test_rmtree(dir);
	free(dir);
}

static void test_files(void)
{
	struct fx f;
	char dir[512], err[256], expect[512];
	const char *copy = NULL, *host;
	size_t len;
	char *got;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	snprintf(dir, sizeof(dir), "%s/files", f.dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
	CU_ASSERT_EQUAL(mask_table_file_count(f.t), 2);
	host = mask_table_file_copy(f.t, 0, &copy);
	CU_ASSERT_PTR_NOT_NULL(host);
	CU_ASSERT_PTR_NULL(copy);
	CU_ASSERT_EQUAL_FATAL(mask_table_write_files(f.t, dir, err, sizeof(err)), 0);
	/* Twice: the copies are replaced, not refused. */
	CU_ASSERT_EQUAL_FATAL(mask_table_write_files(f.t, dir, err, sizeof(err)), 0);

	/* Whole file: exactly its sentinel. */
	host = mask_table_file_copy(f.t, 0, &copy);
	CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
	CU_ASSERT_PTR_NOT_NULL(strstr(host, "/whole"));
	got = test_read_file(copy, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	/* The value is the content without the white space around it (it
	 * would never be injected nor re-masked when a client strips the
	 * newline); the copy keeps that white space byte for byte. */
	CU_ASSERT_EQUAL(f.t->value[value_of(f.t, REAL_WHOLE)].len, strlen(REAL_WHOLE));
	CU_ASSERT_EQUAL_FATAL(len, strlen(WHOLE_FILE));
	CU_ASSERT_EQUAL(memcmp(got, " \t", 2), 0);
	CU_ASSERT_EQUAL(memcmp(got + 2, f.t->value[value_of(f.t, REAL_WHOLE)].sent, strlen(REAL_WHOLE)), 0);
	CU_ASSERT_EQUAL(memcmp(got + len - 2, "\r\n", 2), 0);
	assert_no_real(got, len, "whole copy");
	{
		struct stat st;
		CU_ASSERT_EQUAL(stat(copy, &st), 0);
		CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	}
	free(got);

	/* Extract: everything but the two tokens byte for byte. */
	host = mask_table_file_copy(f.t, 1, &copy);
	CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
	CU_ASSERT_PTR_NOT_NULL(strstr(copy, "/files/3-cfg"));
	CU_ASSERT_PTR_NOT_NULL(strstr(host, "/cfg"));
	snprintf(expect, sizeof(expect), "# config\nuser=alice\ntoken=%s\nother = 1\ntoken=%s\ntail",
		 f.t->value[value_of(f.t, REAL_GH)].sent, f.t->value[value_of(f.t, REAL_TOK2)].sent);
	got = test_read_file(copy, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_EQUAL(len, strlen(CFG_TEXT));
	CU_ASSERT_EQUAL(len, strlen(expect));
	CU_ASSERT_EQUAL(memcmp(got, expect, len), 0);
	assert_no_real(got, len, "cfg copy");
	free(got);
	CU_ASSERT_PTR_NULL(mask_table_file_copy(f.t, 2, &copy));
	CU_ASSERT_PTR_NULL(copy);
	fx_teardown(&f);
}

/* Substitutes in place with the outbound set; returns the total. */
static size_t subst(const struct mask_outbound *ob, char *buf, uint64_t *counts)
{
	size_t total = 0;

	if (counts != NULL)
		memset(counts, 0, ob->npairs * sizeof(uint64_t));
	CU_ASSERT_EQUAL(mask_replace_inplace(ob->set, buf, strlen(buf), counts, &total), 0);
	return total;
}

static void test_outbound(void)
{
	struct fx f;
	struct mask_outbound ob, ob2;
	uint64_t counts[8];
	char buf[256];
	size_t vgh, vq, vwhole, vtok2;
	size_t ncache;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	vgh = value_of(f.t, REAL_GH);
	vq = value_of(f.t, REAL_Q);
	vwhole = value_of(f.t, REAL_WHOLE);
	vtok2 = value_of(f.t, REAL_TOK2);
	const char *sgh = f.t->value[vgh].sent, *sq = f.t->value[vq].sent;

	/* Inject host: the GH sentinel becomes the real value in a header. */
	CU_ASSERT_EQUAL_FATAL(mask_table_outbound(f.t, "api.github.com", 443, true, INJECT_HEADER, &ob), 0);
	CU_ASSERT_EQUAL(ob.npairs, 4);
	CU_ASSERT_TRUE(ob.any);
	CU_ASSERT_EQUAL(ob.inject[vgh], 1);
	CU_ASSERT_EQUAL(ob.inject[vtok2], 1);
	CU_ASSERT_EQUAL(ob.inject[vq], 0);
	CU_ASSERT_EQUAL(ob.inject[vwhole], 0);
	CU_ASSERT_EQUAL(ob.cred[vgh], 0);
	CU_ASSERT_EQUAL(ob.cred[vtok2], 3);
	snprintf(buf, sizeof(buf), "Bearer %s", sgh);
	CU_ASSERT_EQUAL(subst(&ob, buf, counts), 1);
	CU_ASSERT_EQUAL(strcmp(buf + 7, REAL_GH), 0);
	CU_ASSERT_EQUAL(counts[vgh], 1);
	/* Q's sentinel there is counted but stays (detect: refuse). */
	snprintf(buf, sizeof(buf), "X: %s", sq);
	CU_ASSERT_EQUAL(subst(&ob, buf, counts), 1);
	CU_ASSERT_EQUAL(counts[vq], 1);
	CU_ASSERT_EQUAL(strcmp(buf + 3, sq), 0);
	CU_ASSERT_EQUAL(mask_table_find_sentinel(f.t, buf, strlen(buf)), 1);

	/* Cached: the same eligibility gives the same set, no new build;
	 * host spelling is normalised. */
	ncache = f.t->ncache;
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "API.GitHub.com.", 443, true, INJECT_HEADER, &ob2), 0);
	CU_ASSERT_PTR_EQUAL(ob2.set, ob.set);
	CU_ASSERT_EQUAL(f.t->ncache, ncache);

	/* Another allowed host: GH is not injected, its sentinel is seen. */
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "other.example.com", 443, true, INJECT_HEADER, &ob), 0);
	CU_ASSERT_EQUAL(ob.inject[vgh], 0);
	CU_ASSERT_EQUAL(ob.inject[vq], 1);
	snprintf(buf, sizeof(buf), "Bearer %s", sgh);
	CU_ASSERT_EQUAL(subst(&ob, buf, counts), 1);
	CU_ASSERT_EQUAL(counts[vgh], 1);
	CU_ASSERT_EQUAL(strcmp(buf + 7, sgh), 0);
	CU_ASSERT_EQUAL(mask_table_find_sentinel(f.t, buf, strlen(buf)), 0);
	assert_no_real(buf, strlen(buf), "header to a non-inject host");

	/* injectIn: Q is header+query, not body. */
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "other.example.com", 443, true, INJECT_BODY, &ob), 0);
	CU_ASSERT_EQUAL(ob.inject[vq], 0);
	CU_ASSERT_FALSE(ob.any);
	snprintf(buf, sizeof(buf), "data=%s", sq);
	CU_ASSERT_EQUAL(subst(&ob, buf, counts), 1);
	assert_no_real(buf, strlen(buf), "body where injectIn lacks body");
	/* GH is header only: no query injection at its host. */
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "api.github.com", 443, true, INJECT_QUERY, &ob), 0);
	CU_ASSERT_EQUAL(ob.inject[vgh], 0);

	/* Query at Q's host: raw and percent-encoded forms both injected. */
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "other.example.com", 443, true, INJECT_QUERY, &ob), 0);
	CU_ASSERT_EQUAL(ob.inject[vq], 1);
	{
		char enc_s[128], enc_r[128];
		struct evbuffer *eb;
		/* Percent-encode every byte outside the unreserved set. */
		static const char hexd[] = "0123456789ABCDEF";
		size_t k = 0, kr = 0;
		for (const char *c = sq; *c; c++) {
			if (unreserved((unsigned char)*c))
				enc_s[k++] = *c;
			else {
				enc_s[k++] = '%';
				enc_s[k++] = hexd[(unsigned char)*c >> 4];
				enc_s[k++] = hexd[*c & 15];
			}
		}
		enc_s[k] = '\0';
		for (const char *c = REAL_Q; *c; c++) {
			if (unreserved((unsigned char)*c))
				enc_r[kr++] = *c;
			else {
				enc_r[kr++] = '%';
				enc_r[kr++] = hexd[(unsigned char)*c >> 4];
				enc_r[kr++] = hexd[*c & 15];
			}
		}
		enc_r[kr] = '\0';
		snprintf(buf, sizeof(buf), "/x?t=%s&u=1", enc_s);
		CU_ASSERT_EQUAL(subst(&ob, buf, counts), 1);
		CU_ASSERT_EQUAL(counts[vq], 1);
		CU_ASSERT_EQUAL(strncmp(buf + 5, enc_r, kr), 0);
		CU_ASSERT_EQUAL(strcmp(buf + 5 + kr, "&u=1"), 0);
		/* find_sentinel sees the percent form as well. */
		snprintf(buf, sizeof(buf), "/x?t=%s", enc_s);
		CU_ASSERT_EQUAL(mask_table_find_sentinel(f.t, buf, strlen(buf)), 1);
		/* The inbound set turns the encoded real value back. */
		eb = evbuffer_new();
		CU_ASSERT_PTR_NOT_NULL_FATAL(eb);
		CU_ASSERT_EQUAL(mask_replace_buf(mask_table_inbound_set(f.t), enc_r, kr, eb, NULL, NULL), 0);
		CU_ASSERT_EQUAL(evbuffer_get_length(eb), k);
		CU_ASSERT_EQUAL(memcmp(evbuffer_pullup(eb, -1), enc_s, k), 0);
		evbuffer_free(eb);
	}

	/* Wildcard inject host, body only: a subdomain yes, the apex no. */
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "x.corp.example", 443, true, INJECT_BODY, &ob), 0);
	CU_ASSERT_EQUAL(ob.inject[vwhole], 1);
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "x.corp.example", 443, true, INJECT_HEADER, &ob), 0);
	CU_ASSERT_EQUAL(ob.inject[vwhole], 0);
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "corp.example", 443, true, INJECT_BODY, &ob), 0);
	CU_ASSERT_EQUAL(ob.inject[vwhole], 0);

	/* Plain HTTP without allowPlaintextInject: nothing injects. */
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "api.github.com", 80, false, INJECT_HEADER, &ob), 0);
	CU_ASSERT_FALSE(ob.any);
	/* A host that does not normalise: nothing injects. */
	CU_ASSERT_EQUAL(mask_table_outbound(f.t, "api.github.com/x", 443, true, INJECT_HEADER, &ob), 0);
	CU_ASSERT_FALSE(ob.any);

	/* Nothing there: -1. */
	CU_ASSERT_EQUAL(mask_table_find_sentinel(f.t, "plain text", 10), -1);
	fx_teardown(&f);
}

/*
 * Round 49: mask_table_outbound() remembers the last host's cache entry
 * for each (verified, place). Its answers, in an order that asks the same
 * host again with another port, verification or place, then another host
 * (one differing only by case, by a byte, by its end), must equal a
 * second table's computed fresh each time (another host asked between
 * two questions forgets the memo). A memo keyed without the port, the
 * verification or the place, or kept across hosts, fails here.
 */
static void test_outbound_memo(void)
{
	static const char *const hosts[] = {"api.github.com", "API.GitHub.com.", "other.example.com",
					     "x.corp.example", "corp.example", "api.github.com/x",
					     "api.github.co", "api.github.comm", "api.github.com"};
	static const uint16_t ports[] = {443, 80, 443, 8443};
	static const unsigned wheres[] = {INJECT_HEADER, INJECT_QUERY, INJECT_BODY, INJECT_HEADER};
	/* one inject host on a port: a memo without the port fails */
	static const char doc[] =
		"network:\n"
		"  allowedDomains: [api.github.com, other.example.com, \"*.corp.example\"]\n"
		"credentials:\n"
		"  envVars:\n"
		"    - {name: PV_MT_GH, mode: mask, injectHosts: [\"api.github.com:8443\"],\n"
		"       injectIn: [header, body]}\n"
		"    - {name: PV_MT_Q, mode: mask, injectHosts: [other.example.com, \"*.corp.example\"],\n"
		"       injectIn: [query]}\n";
	struct fx f;
	policy_t *p2;
	mask_table_t *t, *fresh;
	char err[256];
	unsigned bad = 0, injecting = 0, nerr = 0;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0); /* its environment */
	p2 = policy_load_buffer("memo.yaml", doc, strlen(doc), stderr, &nerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p2);
	t = mask_table_new(p2, err, sizeof(err));
	fresh = mask_table_new(p2, err, sizeof(err));
	CU_ASSERT_FATAL(t != NULL && fresh != NULL);
	CU_ASSERT_EQUAL_FATAL(fresh->nvalues, t->nvalues);
	for (int order = 0; order < 2; order++)
		for (size_t a = 0; a < ARRAY_LEN(hosts) * ARRAY_LEN(ports) * 2 * ARRAY_LEN(wheres); a++) {
			/* order 0: the host changes slowest; 1: fastest */
			size_t n = a, h, p, v, w;

			if (order == 0) {
				w = n % ARRAY_LEN(wheres), n /= ARRAY_LEN(wheres);
				v = n % 2, n /= 2;
				p = n % ARRAY_LEN(ports), n /= ARRAY_LEN(ports);
				h = n;
			} else {
				h = n % ARRAY_LEN(hosts), n /= ARRAY_LEN(hosts);
				w = n % ARRAY_LEN(wheres), n /= ARRAY_LEN(wheres);
				v = n % 2, n /= 2;
				p = n;
			}
			struct mask_outbound ob, ref;

			if (mask_table_outbound(t, hosts[h], ports[p], v != 0, wheres[w], &ob) != 0 ||
			    mask_table_outbound(fresh, "memo.reset.example", 1, true, INJECT_BODY, &ref) != 0 ||
			    mask_table_outbound(fresh, hosts[h], ports[p], v != 0, wheres[w], &ref) != 0) {
				bad++;
				continue;
			}
			if (ob.any != ref.any || ob.npairs != ref.npairs ||
			    memcmp(ob.inject, ref.inject, ob.npairs) != 0 ||
			    memcmp(ob.cred, ref.cred, ob.npairs * sizeof(*ob.cred)) != 0)
				bad++;
			injecting += ob.any;
		}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(injecting > 0); /* some answers inject, some do not */
	CU_ASSERT(injecting < 2 * ARRAY_LEN(hosts) * ARRAY_LEN(ports) * 2 * ARRAY_LEN(wheres));
	mask_table_free(fresh);
	mask_table_free(t);
	policy_free(p2);
	fx_teardown(&f);
}

/* A hex digit's value, or -1. */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* mask_table_find_real() as it was before round 49: the detect set alone
 * over the text as it is, then with every %XX decoded. */
static long find_real_reference(mask_table_t *t, const char *text, size_t len)
{
	size_t np = mask_set_npairs(t->detect), nf = np - t->nvalues - t->nstale, total;
	uint64_t *counts = calloc(np, sizeof(*counts));
	char *copy = malloc(len + 1);
	long found = -1;

	CU_ASSERT_FATAL(counts != NULL && copy != NULL);
	for (int pass = 0; pass < 2 && found < 0; pass++) {
		size_t n = 0;

		for (size_t i = 0; i < len; i++) {
			int hi, lo;

			if (pass == 1 && text[i] == '%' && i + 2 < len && (hi = hexval(text[i + 1])) >= 0 &&
			    (lo = hexval(text[i + 2])) >= 0) {
				copy[n++] = (char)(hi << 4 | lo);
				i += 2;
			} else {
				copy[n++] = text[i];
			}
		}
		memset(counts, 0, np * sizeof(*counts));
		CU_ASSERT_FATAL(mask_replace_inplace(t->detect, copy, n, counts, &total) == 0);
		for (size_t k = 0; k < nf && found < 0; k++)
			if (counts[t->nvalues + k] != 0)
				found = (long)t->value[t->form_value[k]].cred;
	}
	free(counts);
	free(copy);
	return found;
}

/*
 * Round 49: mask_table_find_real() runs the detect set only when the
 * remask set finds a form in the copy first, and then over a fresh copy.
 * Texts with sentinels next to, before and around real values in their
 * raw, percent, decoded, base64 and line-broken forms give the detect
 * set's answer. A pre-check that missed a form (one set for the other)
 * or a detect pass over the copy the remask set changed (the form
 * turned into its sentinel) answers -1 where the reference names the
 * credential: the found cases below fail.
 */
static void test_find_real_precheck(void)
{
	struct fx f;
	char texts[16][600], b64[128], pct[200], allpct[200], broken[100];
	size_t nt = 0, vgh, vq;
	unsigned found = 0;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	vgh = value_of(f.t, REAL_GH);
	vq = value_of(f.t, REAL_Q);
	const char *sgh = f.t->value[vgh].sent, *sq = f.t->value[vq].sent;

	CU_ASSERT_FATAL(mask_b64_encode((const unsigned char *)REAL_GH, strlen(REAL_GH), b64, sizeof(b64)) > 0);
	{
		static const char hexd[] = "0123456789ABCDEF";
		size_t k = 0, a = 0;

		for (const char *c = REAL_Q; *c; c++) {
			if (unreserved((unsigned char)*c)) {
				pct[k++] = *c;
			} else {
				pct[k++] = '%', pct[k++] = hexd[(unsigned char)*c >> 4], pct[k++] = hexd[*c & 15];
			}
			allpct[a++] = '%', allpct[a++] = hexd[(unsigned char)*c >> 4], allpct[a++] = hexd[*c & 15];
		}
		pct[k] = allpct[a] = '\0';
	}
	snprintf(broken, sizeof(broken), "%.20s\n%s", REAL_GH, REAL_GH + 20);
#define TEXT(...) snprintf(texts[nt++], sizeof(texts[0]), __VA_ARGS__)
	TEXT("GET /x HTTP/1.1\r\nHost: api.github.com\r\nAuthorization: Bearer %s\r\n", sgh);
	TEXT("GET /x HTTP/1.1\r\nAuthorization: Bearer %s\r\n", REAL_GH);
	TEXT("Authorization: Bearer %s%s", sgh, REAL_GH);
	TEXT("X: ghp_%s and %s", REAL_GH, sgh);
	TEXT("X: %.30s%s", sgh, REAL_GH);
	TEXT("/q?a=%s&b=%s", sq, pct);
	TEXT("/q?a=%s", allpct);
	TEXT("X-B: %s %s", sgh, b64);
	TEXT("{\"k\": \"%s\"}", broken);
	TEXT("%s %s %s", sgh, sq, sgh);
	TEXT("%s", REAL_TOK2);
	TEXT("token=%.10s", REAL_GH);
#undef TEXT
	for (size_t i = 0; i < nt; i++) {
		long want = find_real_reference(f.t, texts[i], strlen(texts[i]));
		long got = mask_table_find_real(f.t, texts[i], strlen(texts[i]));

		if (got != want)
			fprintf(stderr, "find_real text %zu: %ld, the detect set alone %ld\n", i, got, want);
		CU_ASSERT_EQUAL(got, want);
		found += want >= 0;
	}
	/* the real value, beside a sentinel, its percent forms, base64,
	 * broken, TOK2: found; sentinels and a piece: not */
	CU_ASSERT(found >= 8);
	CU_ASSERT_EQUAL(mask_table_find_real(f.t, texts[0], strlen(texts[0])), -1);
	CU_ASSERT_EQUAL(mask_table_find_real(f.t, texts[9], strlen(texts[9])), -1);
	fx_teardown(&f);
}

static void test_inbound(void)
{
	struct fx f;
	char buf[512];
	size_t total = 0;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	snprintf(buf, sizeof(buf), "{\"a\":\"%s\",\"b\":\"%s\",\"c\":\"%s\"}", REAL_GH, REAL_Q, REAL_TOK2);
	CU_ASSERT_EQUAL(mask_replace_inplace(mask_table_inbound_set(f.t), buf, strlen(buf), NULL, &total), 0);
	CU_ASSERT_EQUAL(total, 3);
	assert_no_real(buf, strlen(buf), "remasked response");
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, f.t->value[value_of(f.t, REAL_GH)].sent));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, f.t->value[value_of(f.t, REAL_Q)].sent));
	fx_teardown(&f);
}

/* The forms mask_table_encoded_real() finds (the review of round 35, F5),
 * at every base64 offset and in either alphabet, and what it leaves. */
static void test_encoded_real(void)
{
	struct fx f;
	const char *sent;
	char buf[1024], enc[512];
	unsigned char raw[256];
	size_t n = strlen(REAL_GH), o;
	long el;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	sent = f.t->value[value_of(f.t, REAL_GH)].sent;
	for (size_t pad = 0; pad < 3; pad++) {
		memcpy(raw, "ab", pad);
		memcpy(raw + pad, REAL_GH, n);
		el = mask_b64_encode(raw, pad + n, enc, sizeof(enc));
		CU_ASSERT_FATAL(el > 0);
		enc[el] = '\0';
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, enc, (size_t)el), 1);
		for (char *c = enc; *c != '\0'; c++)
			*c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
		snprintf(buf, sizeof(buf), "Basic %s", enc);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	}
	for (size_t i = 0; i < n; i++) { /* UTF-16LE */
		raw[2 * i] = (unsigned char)REAL_GH[i];
		raw[2 * i + 1] = 0;
	}
	el = mask_b64_encode(raw, 2 * n, enc, sizeof(enc));
	CU_ASSERT_FATAL(el > 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, enc, (size_t)el), 1);
	for (size_t i = 0; i < n; i++) /* hex, upper case */
		snprintf(buf + 2 * i, 3, "%02X", (unsigned char)REAL_GH[i]);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, 2 * n), 1);
	for (size_t i = 0; i < n; i++) /* %25-encoded twice */
		snprintf(buf + 5 * i, 6, "%%25%02x", (unsigned char)REAL_GH[i]);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, 5 * n), 1);
	for (size_t i = 0; i <= n; i++) /* upper case */
		buf[i] = (char)toupper((unsigned char)REAL_GH[i]);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, n), 1);
	snprintf(buf, sizeof(buf), "%.10s\\\n%s", REAL_GH, REAL_GH + 10);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	snprintf(buf, sizeof(buf), "part=%.20s", REAL_GH + 7); /* 20 bytes of 38 */
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	for (size_t off = 4; off + 12 <= n; off++) { /* every part of 12 bytes (fix37m: 14) */
		snprintf(buf, sizeof(buf), "part=%.12s", REAL_GH + off);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
		snprintf(buf, sizeof(buf), "p=%.6s%.6s", REAL_GH + off, REAL_GH + off + 6);
		for (size_t i = 0; i < 12; i++) /* hex */
			snprintf(buf + 2 * i, 3, "%02x", (unsigned char)REAL_GH[off + i]);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, 24), 1);
	}
	/* a backslash before each byte, as a shell reads it: \7 is "7",
	 * not byte 7 (REAL_TOK2 has a digit 2-7 in every 12-byte window:
	 * with C's reading alone no window was left; the integration row
	 * with a random token failed 1 run in ~5) */
	for (size_t i = 0; i < strlen(REAL_TOK2); i++)
		snprintf(buf + 2 * i, 3, "\\%c", REAL_TOK2[i]);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, 2 * strlen(REAL_TOK2)), 1);
	/* fix37m: Python's \N{...} escapes; base64url without padding */
	o = 0;
	for (size_t i = 0; i < n; i++)
		o += (size_t)(isalpha((unsigned char)REAL_GH[i])
				      ? snprintf(buf + o, sizeof(buf) - o, "\\N{latin %s letter %c}",
						 isupper((unsigned char)REAL_GH[i]) ? "capital" : "small", REAL_GH[i])
				      : snprintf(buf + o, sizeof(buf) - o, REAL_GH[i] == '_' ? "\\N{LOW LINE}" : "%c",
						 REAL_GH[i]));
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, o), 1);
	snprintf(buf, sizeof(buf), "print(\"20\\N{DEGREE SIGN}C \\N{LATIN SMALL LETTER E WITH ACUTE}\")");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 0);
	for (size_t pad = 0; pad < 3; pad++) {
		memcpy(raw, "ab", pad);
		memcpy(raw + pad, REAL_GH, n);
		el = mask_b64_encode(raw, pad + n, enc, sizeof(enc));
		CU_ASSERT_FATAL(el > 0);
		while (el > 0 && enc[el - 1] == '=')
			el--;
		for (long i = 0; i < el; i++)
			enc[i] = enc[i] == '+' ? '-' : enc[i] == '/' ? '_' : enc[i];
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, enc, (size_t)el), 1);
	}
	/* left: the sentinel in every form, a short part, other text */
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, sent, strlen(sent)), 0);
	el = mask_b64_encode((const unsigned char *)sent, strlen(sent), enc, sizeof(enc));
	CU_ASSERT_FATAL(el > 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, enc, (size_t)el), 0);
	snprintf(buf, sizeof(buf), "x %.10s y", REAL_GH + 4);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 0);
	snprintf(buf, sizeof(buf), "PATH=/usr/bin:/bin LANG=C.UTF-8 %%2520 ghp_ %%2567hp_ 0123 abcdef ABCD");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 0);
	fx_teardown(&f);
}

/*
 * The review of round 36 (review36b): mask_table_encoded_real() on text
 * of escape fragments cut at every length, each in a buffer of its exact
 * size (ASan sees a byte read past the end of enc_unescape()'s input),
 * and on 1 MB of backslashes, of "\x" and of "&#" (bounded time: one
 * pass per round).
 */
static void test_encoded_fuzz(void)
{
	static const char *const frag[] = {"\\", "x", "u", "U", "{", "}", "%", "&", "#", ";", "$", "'", "\"", "0",
					   "7", "f", "F", "\\u{", "\\x", "%u", "&#x", "&#", "\\\n", " ", "1", "g"};
	static const char *const big[] = {"\\", "\\x", "&#", "%u", "\\u{1", "$'"};
	unsigned int seed = 36;
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	for (int it = 0; it < 1500; it++) {
		char text[96];
		size_t n = 0, want = (size_t)rand_r(&seed) % 40;

		while (n < want) {
			const char *w = frag[(size_t)rand_r(&seed) % ARRAY_LEN(frag)];
			size_t l = strlen(w);

			if (n + l >= sizeof(text))
				break;
			memcpy(text + n, w, l);
			n += l;
		}
		for (size_t cut = 1; cut <= n; cut++) {
			char *exact = malloc(cut);

			CU_ASSERT_PTR_NOT_NULL_FATAL(exact);
			memcpy(exact, text, cut);
			CU_ASSERT(mask_table_encoded_real(f.t, exact, cut) >= 0);
			free(exact);
		}
	}
	for (size_t b = 0; b < ARRAY_LEN(big); b++) {
		size_t l = strlen(big[b]), n = 1024 * 1024 / l * l;
		char *text = malloc(n);
		struct timespec t0, t1;

		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		for (size_t i = 0; i < n; i += l)
			memcpy(text + i, big[b], l);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, text, n), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CU_ASSERT((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 5000);
		free(text);
	}
	fx_teardown(&f);
}

static int fx_retable(struct fx *f, const char *value);

/*
 * The review of round 36 (review36b): a masked connection string's
 * keys and public values are another account's too; its secret values
 * (AccountKey, Password, SharedAccessKey) are found in every form.
 */
static void test_encoded_connstr(void)
{
	static const char az[] = "DefaultEndpointsProtocol=https;AccountName=prodacct;"
				 "AccountKey=q8Zr3vN0pX7sLk2WmT5yHb1cJd4fGe6iUo9aQw0ErTy1uIo2pAs3dFg4hJk5lZx6cVb7nM8Qw9Er0Ty1Ui==;"
				 "EndpointSuffix=core.windows.net";
	static const char sql[] = "Server=db.example.com;Database=app;User Id=app;Password=Xk29vLq7Rt55Mz;";
	const char *other[] = {
		"DefaultEndpointsProtocol=https;AccountName=devacct;AccountKey=Zz0Yy9Xx8Ww7Vv6Uu5Tt4Ss3Rr2Qq1Pp0Oo9Nn8"
		"Mm7Ll6Kk5Jj4Ii3Hh2Gg1Ff0Ee9Dd8Cc7Bb6Aa5==;EndpointSuffix=core.windows.net",
		"az storage blob list --connection-string 'DefaultEndpointsProtocol=https;AccountName=prodacct;'",
		"Server=db.example.com;Database=app;User Id=app;Password=other-password-1",
	};
	char buf[512];
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, az), 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other[0], strlen(other[0])), 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other[1], strlen(other[1])), 0);
	snprintf(buf, sizeof(buf), "key=%.20s", strstr(az, "AccountKey=") + 11);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	snprintf(buf, sizeof(buf), "'%.30s'\"%s\"", az, az + 30);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, sql), 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other[2], strlen(other[2])), 0);
	snprintf(buf, sizeof(buf), "PGPASSWORD=\"%.7s\"\"%s\"", "Xk29vLq7Rt55Mz", "Xk29vLq7Rt55Mz" + 7);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	fx_teardown(&f);
}

/* The inbound set's count of real-value forms in text (rewritten in a
 * copy), and whether what is left holds needle. */
static size_t remask_count(const mask_table_t *t, const char *text, const char *needle, bool *left)
{
	char buf[1024];
	size_t total = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	CU_ASSERT_EQUAL(mask_replace_inplace(mask_table_inbound_set(t), buf, strlen(buf), NULL, &total), 0);
	if (left != NULL)
		*left = needle != NULL && strstr(buf, needle) != NULL;
	return total;
}

/*
 * review40b (of round 40's F2): the pieces of a value split at its '&'
 * and ';' are forms only when secret (64 random bits, not words), each
 * piece's name and value as a form reader splits it at '=' too, with its
 * '+' as spaces, wherever it is in the value. The connection string's
 * public pieces ("DefaultEndpointsProtocol=https", a SAS token's
 * "sv=2021-06-08") were forms of the real value: any response holding
 * them rewritten, any request refused; its secret, the piece after '='
 * with '+' as a space, or the eighth piece, was not.
 */
static void test_split_pieces(void)
{
	static const char az[] = "DefaultEndpointsProtocol=https;AccountName=prodacct;"
				 "AccountKey=q8Zr3vN0pX7s+k2WmT5yHb1cJd4fGe6iUo9aQw0ErTy1uIo2pAs3dFg4/Jk5lZx6cVb7nM8Qw9Er0Ty1Ui==;"
				 "EndpointSuffix=core.windows.net";
	static const char sas[] = "sv=2021-06-08&ss=b&srt=sco&sp=rwdlacupitfx&se=2026-12-31T00:00:00Z&"
				  "st=2026-01-01T00:00:00Z&spr=https&sig=Zk3+Qw9Er0Ty1Ui8Op7As6Df5Gh4Jk3Lz2Xc1Vb0Nm9Qa";
	static const char sql[] = "Server=localhost;Database=myDataBase;User Id=sa;Password=Xk29vLq7Rt55Mz8wQp;"
				  "MultipleActiveResultSets=true;TrustServerCertificate=True";
	const char *pub[] = {
		"{\"args\": \"DefaultEndpointsProtocol=https;AccountName=devacct;EndpointSuffix=core.windows.net\"}",
		"https://devacct.blob.core.windows.net/c?sv=2021-06-08&ss=b&srt=sco&sp=rwdlacupitfx&se=2026-12-31T00:00:00Z",
		"Server=localhost;Database=myDataBase;User Id=sa;MultipleActiveResultSets=true;TrustServerCertificate=True",
	};
	struct mask_outbound ob;
	char buf[1024];
	bool left;

	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, az), 0);
	CU_ASSERT_EQUAL(remask_count(f.t, pub[0], NULL, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mask_table_outbound(f.t, "other.example.com", 443, true, INJECT_HEADER, &ob), 0);
	snprintf(buf, sizeof(buf), "%s", pub[0]);
	CU_ASSERT_EQUAL(subst(&ob, buf, NULL), 0);
	/* parse_qs of ?k=<az>: the key's value, '+' as a space */
	CU_ASSERT(remask_count(f.t,
			       "{\"AccountKey\": [\"q8Zr3vN0pX7s k2WmT5yHb1cJd4fGe6iUo9aQw0ErTy1uIo2pAs3dFg4/Jk5lZx6cVb7nM8Qw9Er0"
			       "Ty1Ui==\"]}",
			       "q8Zr3vN0pX7s k2Wm", &left) >= 1);
	CU_ASSERT_FALSE(left);

	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, sas), 0);
	CU_ASSERT_EQUAL(remask_count(f.t, pub[1], NULL, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mask_table_outbound(f.t, "other.example.com", 443, true, INJECT_HEADER, &ob), 0);
	snprintf(buf, sizeof(buf), "%s", pub[1]);
	CU_ASSERT_EQUAL(subst(&ob, buf, NULL), 0);
	/* the eighth piece, its value read with '+' as a space */
	CU_ASSERT(remask_count(f.t, "{\"sig\": [\"Zk3 Qw9Er0Ty1Ui8Op7As6Df5Gh4Jk3Lz2Xc1Vb0Nm9Qa\"]}", "Zk3 Qw9", &left) >= 1);
	CU_ASSERT_FALSE(left);
	CU_ASSERT(remask_count(f.t, "sig=Zk3+Qw9Er0Ty1Ui8Op7As6Df5Gh4Jk3Lz2Xc1Vb0Nm9Qa", "Zk3+Qw9", &left) >= 1);
	CU_ASSERT_FALSE(left);

	/* a 2 KiB token on one line with '+' (review40b: over 1 KiB it had
	 * no form with spaces) */
	{
		char *big = malloc(2049), *echo = malloc(2100);

		CU_ASSERT_PTR_NOT_NULL_FATAL(big);
		CU_ASSERT_PTR_NOT_NULL_FATAL(echo);
		for (size_t k = 0; k < 2048; k++)
			big[k] = k % 37 == 5 ? '+' : "Qw9Er0Ty1Ui8Op7As6Df5Gh4Jk3Lz2Xc1Vb0Nm"[(k * 7 + k / 13) % 38];
		big[2048] = '\0';
		CU_ASSERT_EQUAL_FATAL(fx_retable(&f, big), 0);
		for (size_t k = 0; k <= 2048; k++)
			big[k] = big[k] == '+' ? ' ' : big[k];
		snprintf(echo, 2100, "{\"k\": [\"%s\"]}", big);
		big[40] = '\0';
		{
			size_t total = 0;

			CU_ASSERT_EQUAL(mask_replace_inplace(mask_table_inbound_set(f.t), echo, strlen(echo), NULL, &total), 0);
			CU_ASSERT(total >= 1);
			CU_ASSERT_PTR_NULL(strstr(echo, big));
		}
		free(big);
		free(echo);
	}

	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, sql), 0);
	CU_ASSERT_EQUAL(remask_count(f.t, pub[2], NULL, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(mask_table_outbound(f.t, "other.example.com", 443, true, INJECT_HEADER, &ob), 0);
	snprintf(buf, sizeof(buf), "%s", pub[2]);
	CU_ASSERT_EQUAL(subst(&ob, buf, NULL), 0);
	CU_ASSERT(remask_count(f.t, "{\"Password\": [\"Xk29vLq7Rt55Mz8wQp\"]}", "Xk29vLq7Rt55Mz8wQp", &left) >= 1);
	CU_ASSERT_FALSE(left);
	fx_teardown(&f);
}

/* f's table again, with PV_MT_UNSET set to value. 0 or -1. */
static int fx_retable(struct fx *f, const char *value)
{
	char err[256];

	mask_table_free(f->t);
	setenv("PV_MT_UNSET", value, 1);
	f->t = mask_table_new(f->p, err, sizeof(err));
	unsetenv("PV_MT_UNSET");
	if (f->t == NULL)
		fprintf(stderr, "mask_table_new: %s\n", err);
	return f->t != NULL ? 0 : -1;
}

/*
 * fix37m: a whole file masked (an AWS credentials file, a service
 * account's JSON) is mostly text every such file holds: another
 * account's file, a .env naming the same variables are left; its key id
 * and secret in hex, and a 12-byte part of its secret, are found.
 */
static void test_encoded_whole_files(void)
{
	static const char aws[] = "[default]\naws_access_key_id = AKIA4XQ7Z2M9KD3LP8WQ\n"
				  "aws_secret_access_key = q8Zr3vN0pX7sLk2WmT5yHb1cJd4fGe6iUo9aQw0E\nregion = eu-west-1\n";
	static const char sa[] = "{\n  \"type\": \"service_account\",\n  \"project_id\": \"acme-prod\",\n"
				 "  \"private_key_id\": \"3f9a1c77e0b24d5a8c6e2f1b9d0a4c7e5b3f8a21\",\n"
				 "  \"client_email\": \"deployer@acme-prod.iam.gserviceaccount.com\",\n"
				 "  \"token_uri\": \"https://oauth2.googleapis.com/token\"\n}\n";
	const char *other[] = {
		"[default]\naws_access_key_id = AKIA7B2N5V8C1X4Z6M3Q\naws_secret_access_key = "
		"Zz0Yy9Xx8Ww7Vv6Uu5Tt4Ss3Rr2Qq1Pp0Oo9Nn8Mm\nregion = eu-west-1\n",
		"AWS_ACCESS_KEY_ID=AKIA7B2N5V8C1X4Z6M3Q\nAWS_SECRET_ACCESS_KEY=Zz0Yy9Xx8Ww7Vv6Uu5Tt4Ss3Rr2Qq1Pp0Oo9Nn8Mm\n"
		"AWS_DEFAULT_REGION=eu-west-1\n",
		"{\n  \"type\": \"service_account\",\n  \"project_id\": \"acme-prod\",\n"
		"  \"private_key_id\": \"0d2b6e8f1a3c5e7092b4d6f8a1c3e5f7092b4d6f\",\n"
		"  \"client_email\": \"ci@acme-prod.iam.gserviceaccount.com\",\n"
		"  \"token_uri\": \"https://oauth2.googleapis.com/token\"\n}\n",
	};
	char buf[512];
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, aws), 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other[0], strlen(other[0])), 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other[1], strlen(other[1])), 0);
	for (size_t i = 0; i < 20; i++)
		snprintf(buf + 2 * i, 3, "%02X", (unsigned char)"q8Zr3vN0pX7sLk2WmT5y"[i]);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, 40), 1);
	snprintf(buf, sizeof(buf), "k=%.12s", "Lk2WmT5yHb1cJd4f");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	snprintf(buf, sizeof(buf), "ID=\"AKIA4XQ7\"'Z2M9KD3LP8WQ'");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, sa), 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other[2], strlen(other[2])), 0);
	snprintf(buf, sizeof(buf), "%s", "3f9a1c77e0b24d5a8c6e2f1b9d0a4c7e5b3f8a21");
	for (char *c = buf; *c != '\0'; c++)
		*c = (char)toupper((unsigned char)*c);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	fx_teardown(&f);
}

/* A key ssh-keygen or openssl writes into f's directory as name (cmd's
 * %s), read back (malloc'd), or NULL. */
static char *fx_key(struct fx *f, const char *cmd, const char *name)
{
	char path[600], sh[1400];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	snprintf(sh, sizeof(sh), cmd, path, path);
	if (system(sh) != 0)
		return NULL;
	return test_read_file(path, NULL);
}

/* The hex of the text t (malloc'd). */
static char *hex_of(const char *t)
{
	size_t n = strlen(t);
	char *o = malloc(2 * n + 1);

	for (size_t i = 0; o != NULL && i < n; i++)
		snprintf(o + 2 * i, 3, "%02x", (unsigned char)t[i]);
	return o;
}

/*
 * fix37m: a masked private key refused another key of its kind (the
 * PEM lines, OpenSSH's "openssh-key-v1 none none", the key type, a
 * shared comment, DER's headers: public structure every such key
 * holds) and its own public key. Of a key only its secret parts are
 * looked for: another key of each kind, the key's .pub and its public
 * key in PEM are left; the key hex-encoded, its private part in
 * another case and base64 of its private section's digits are found.
 */
static void test_encoded_keys(void)
{
	static const struct {
		const char *gen, *pub;
	} kinds[] = {
		{"ssh-keygen -q -t ed25519 -N '' -C me@host -f %s </dev/null >/dev/null", "%s.pub"},
		{"ssh-keygen -q -t rsa -b 2048 -N '' -C me@host -f %s </dev/null >/dev/null", "%s.pub"},
		{"ssh-keygen -q -t ecdsa -N '' -C me@host -f %s </dev/null >/dev/null", "%s.pub"},
		{"ssh-keygen -q -t ed25519 -N pw -C me@host -f %s </dev/null >/dev/null", "%s.pub"},
		{"openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out %s 2>/dev/null", NULL},
		{"openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out %s 2>/dev/null", NULL},
		{"openssl genpkey -algorithm ED25519 -out %s 2>/dev/null", NULL},
		{"openssl ecparam -name prime256v1 -genkey -noout -out %s 2>/dev/null", NULL},
	};
	struct fx f;

	if (system("command -v ssh-keygen >/dev/null && command -v openssl >/dev/null") != 0) {
		fprintf(stderr, "(skipped: no ssh-keygen or openssl) ");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	for (size_t k = 0; k < ARRAY_LEN(kinds); k++) {
		char n1[16], n2[16], pubcmd[700], *mine = NULL, *other = NULL, *pub = NULL, *hex = NULL, *up = NULL;
		const char *body;

		snprintf(n1, sizeof(n1), "k%zu", k);
		snprintf(n2, sizeof(n2), "o%zu", k);
		mine = fx_key(&f, kinds[k].gen, n1);
		other = fx_key(&f, kinds[k].gen, n2);
		CU_ASSERT_FATAL(mine != NULL && other != NULL);
		if (kinds[k].pub != NULL) {
			snprintf(pubcmd, sizeof(pubcmd), "%s/%s.pub", f.dir, n1);
			pub = test_read_file(pubcmd, NULL);
		} else {
			snprintf(pubcmd, sizeof(pubcmd), "openssl pkey -in %%s -pubout -out %%s.pub 2>/dev/null");
			free(fx_key(&f, pubcmd, n1));
			snprintf(pubcmd, sizeof(pubcmd), "%s/%s.pub", f.dir, n1);
			pub = test_read_file(pubcmd, NULL);
		}
		CU_ASSERT_FATAL(pub != NULL);
		CU_ASSERT_EQUAL_FATAL(fx_retable(&f, mine), 0);
		if (mask_table_encoded_real(f.t, other, strlen(other)) != 0)
			fprintf(stderr, "\n  kind %zu: another key of its kind found\n", k);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other, strlen(other)), 0);
		if (mask_table_encoded_real(f.t, pub, strlen(pub)) != 0)
			fprintf(stderr, "\n  kind %zu: its public key found\n", k);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, pub, strlen(pub)), 0);
		/* still found: hex of the file, its body upper-cased */
		hex = hex_of(mine);
		CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, hex, strlen(hex)), 1);
		up = strdup(mine);
		CU_ASSERT_PTR_NOT_NULL_FATAL(up);
		for (char *c = up; *c != '\0'; c++)
			*c = (char)toupper((unsigned char)*c);
		body = strchr(up, '\n');
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, body, strlen(body)), 1);
		free(mine);
		free(other);
		free(pub);
		free(hex);
		free(up);
	}
	fx_teardown(&f);
}

/*
 * fix38m: a multi-line value over 4 KiB (a PEM bundle, a kubeconfig
 * masked whole) got no joined form, so a response holding it joined
 * onto one line, or wrapped at other columns, went to the sandbox with
 * the real value. Values of 6 KiB and 12 KiB: joined onto one line,
 * re-masked; the 6 KiB one rewrapped at 76 columns with CRLF too (a gap
 * pair up to 8 KiB).
 */
static void test_remask_big_joined(void)
{
	static const size_t sizes[] = {6000, 12000};
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	srand(38);
	for (size_t z = 0; z < ARRAY_LEN(sizes); z++) {
		size_t n = sizes[z], o = 0, jn = 0, outlen = 0, k;
		char *v = malloc(n + 128), *j = malloc(n + 1), *wrap = malloc(2 * n), *out = NULL;

		CU_ASSERT_FATAL(v != NULL && j != NULL && wrap != NULL);
		o = (size_t)sprintf(v, "-----BEGIN BUNDLE-----\n");
		while (o < n) {
			for (k = 0; k < 64; k++)
				v[o++] = b64[rand() % 64];
			v[o++] = '\n';
		}
		o += (size_t)sprintf(v + o, "-----END BUNDLE-----\n");
		for (k = 0; k < o; k++)
			if (v[k] != '\n')
				j[jn++] = v[k];
		CU_ASSERT_EQUAL_FATAL(fx_retable(&f, v), 0);
		CU_ASSERT_EQUAL(mask_table_remask(f.t, j, jn, &out, &outlen), 1);
		if (out != NULL)
			CU_ASSERT_PTR_NULL(memmem(out, outlen, j + 100, 200));
		free(out);
		out = NULL;
		if (n <= 8000) {
			size_t w = 0, on = 0;

			for (k = 0; k < jn; k++) {
				wrap[w++] = j[k];
				if (k % 76 == 75) {
					wrap[w++] = '\r';
					wrap[w++] = '\n';
				}
			}
			CU_ASSERT_EQUAL(mask_table_remask(f.t, wrap, w, &out, &outlen), 1);
			for (k = 0; out != NULL && k < outlen; k++) /* joined again to compare */
				if (out[k] != '\r' && out[k] != '\n')
					out[on++] = out[k];
			if (out != NULL)
				CU_ASSERT_PTR_NULL(memmem(out, on, j + 100, 200));
			free(out);
			out = NULL;
		}
		explicit_bzero(v, o);
		explicit_bzero(j, jn);
		free(v);
		free(j);
		free(wrap);
	}
	fx_teardown(&f);
}

/* Whether out[0..n), with every CR, LF and JSON "\\n" / "\\r" taken out,
 * holds any 64 bytes of joined[0..jn) (at each 64th offset). */
static bool holds_part(const char *out, size_t n, const char *joined, size_t jn)
{
	char *flat = malloc(n + 1);
	size_t fl = 0;
	bool found = false;

	CU_ASSERT_FATAL(flat != NULL);
	for (size_t k = 0; k < n; k++) {
		if (out[k] == '\\' && k + 1 < n && (out[k + 1] == 'n' || out[k + 1] == 'r'))
			k++;
		else if (out[k] != '\r' && out[k] != '\n')
			flat[fl++] = out[k];
	}
	for (size_t o = 0; o + 64 <= jn && !found; o += 64)
		found = memmem(flat, fl, joined + o, 64) != NULL;
	free(flat);
	return found;
}

/*
 * fix39m: a value over 4 KiB got no base64 forms, and its joined form
 * was found with line breaks inside only up to 8 KiB (a gap pair), so a
 * response with the base64 of a 6 KiB value, or a 12 to 16 KiB key file
 * written in JSON (`\n`) or with CRLF, reached the sandbox with the real
 * value. Values of 6, 12 and 16 KiB: each form re-masked, no 64 bytes of
 * the value left.
 */
static void test_remask_big_forms(void)
{
	static const size_t sizes[] = {6000, 12000, 16000};
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	srand(39);
	for (size_t z = 0; z < ARRAY_LEN(sizes); z++) {
		size_t n = sizes[z], o = 0, jn = 0, k, w;
		char *v = malloc(n + 128), *j = malloc(n + 128), *form = malloc(3 * n + 256), *out = NULL;
		size_t outlen = 0;

		CU_ASSERT_FATAL(v != NULL && j != NULL && form != NULL);
		o = (size_t)sprintf(v, "-----BEGIN BUNDLE-----\n");
		while (o + 65 + 21 < n) {
			for (k = 0; k < 64; k++)
				v[o++] = b64[rand() % 64];
			v[o++] = '\n';
		}
		o += (size_t)sprintf(v + o, "-----END BUNDLE-----\n");
		for (k = 0; k < o; k++)
			if (v[k] != '\n')
				j[jn++] = v[k];
		CU_ASSERT_EQUAL_FATAL(fx_retable(&f, v), 0);
		CU_ASSERT(!mask_table_forms_small(f.t)); /* review39b: one big value, all its forms */
		/* in JSON: {"key":"...\n..."} */
		w = (size_t)sprintf(form, "{\"key\":\"");
		for (k = 0; k < o; k++) {
			if (v[k] == '\n') {
				form[w++] = '\\';
				form[w++] = 'n';
			} else {
				form[w++] = v[k];
			}
		}
		w += (size_t)sprintf(form + w, "\"}");
		CU_ASSERT_EQUAL(mask_table_remask(f.t, form, w, &out, &outlen), 1);
		if (out != NULL && holds_part(out, outlen, j, jn))
			fprintf(stderr, "\n  %zu bytes in JSON: a part of the value left\n", n);
		CU_ASSERT(out != NULL && !holds_part(out, outlen, j, jn));
		free(out);
		out = NULL;
		/* round 40: as PHP's json_encode() writes it ('/' as \/ too),
		 * looked at with the escapes taken out again */
		w = (size_t)sprintf(form, "{\"key\":\"");
		for (k = 0; k < o; k++) {
			if (v[k] == '\n' || v[k] == '/')
				form[w++] = '\\';
			form[w++] = v[k] == '\n' ? 'n' : v[k];
		}
		w += (size_t)sprintf(form + w, "\"}");
		CU_ASSERT_EQUAL(mask_table_remask(f.t, form, w, &out, &outlen), 1);
		if (out != NULL) {
			size_t m = 0;

			for (k = 0; k < outlen; k++) {
				if (out[k] == '\\' && k + 1 < outlen && (out[k + 1] == '/' || out[k + 1] == 'n')) {
					if (out[++k] == '/')
						out[m++] = '/';
					continue;
				}
				out[m++] = out[k];
			}
			if (holds_part(out, m, j, jn))
				fprintf(stderr, "\n  %zu bytes in PHP's JSON: a part of the value left\n", n);
			CU_ASSERT(!holds_part(out, m, j, jn));
		}
		free(out);
		out = NULL;
		/* with CRLF */
		for (k = w = 0; k < o; k++) {
			if (v[k] == '\n')
				form[w++] = '\r';
			form[w++] = v[k];
		}
		CU_ASSERT_EQUAL(mask_table_remask(f.t, form, w, &out, &outlen), 1);
		if (out != NULL && holds_part(out, outlen, j, jn))
			fprintf(stderr, "\n  %zu bytes with CRLF: a part of the value left\n", n);
		CU_ASSERT(out != NULL && !holds_part(out, outlen, j, jn));
		free(out);
		out = NULL;
		/* its base64, on one line and wrapped at 76 with CRLF */
		for (int wrapped = 0; wrapped < 2; wrapped++) {
			char *e = malloc(o / 3 * 4 + 8), *plain = malloc(o / 3 * 4 + 8);
			long en = e != NULL ? mask_b64_encode((const unsigned char *)v, o, e, o / 3 * 4 + 8) : -1;

			CU_ASSERT_FATAL(en > 0 && plain != NULL);
			for (k = w = 0; k < (size_t)en; k++) {
				form[w++] = e[k];
				if (wrapped && k % 76 == 75) {
					form[w++] = '\r';
					form[w++] = '\n';
				}
			}
			CU_ASSERT_EQUAL(mask_table_remask(f.t, form, w, &out, &outlen), 1);
			if (out != NULL && holds_part(out, outlen, e, (size_t)en))
				fprintf(stderr, "\n  %zu bytes, base64%s: a part of it left\n", n,
					wrapped ? " wrapped" : "");
			CU_ASSERT(out != NULL && !holds_part(out, outlen, e, (size_t)en));
			free(out);
			out = NULL;
			explicit_bzero(e, (size_t)en);
			free(e);
			free(plain);
		}
		explicit_bzero(v, o);
		explicit_bzero(j, jn);
		explicit_bzero(form, 3 * n + 256);
		free(v);
		free(j);
		free(form);
	}
	fx_teardown(&f);
}

/*
 * Round 45: mask_table_wide_forms(): true for the fixture (ASCII values,
 * its UTF-16 and UTF-32 forms re-masked, mask_table_remask() too); false
 * with a value holding a byte of 0x80 or more (its UTF-16 is no
 * interleaving of its UTF-8: the proxy keeps cutting a body of an
 * inject host that begins as UTF-16 text, proxy/cmask.c lead_wide()).
 */
static void test_wide_forms(void)
{
	static const char doc[] = "network:\n  allowedDomains: [api.example.com]\ncredentials:\n  envVars:\n"
				  "    - {name: PV_MT_WIDE, mode: mask, injectHosts: [api.example.com]}\n";
	struct fx f;
	unsigned nerr = 0;
	char err[256], in[512], *out = NULL;
	size_t n = 0, outlen = 0;
	policy_t *p;
	mask_table_t *t;

	CU_ASSERT_FATAL(fx_setup(&f) == 0);
	CU_ASSERT(mask_table_wide_forms(f.t));
	memcpy(in, "\x7f" "ELF\x02\x01", 6);
	n = 6;
	for (size_t k = 0; k < strlen(REAL_Q); k++) {
		in[n++] = REAL_Q[k];
		in[n++] = 0;
	}
	CU_ASSERT_EQUAL(mask_table_remask(f.t, in, n, &out, &outlen), 1);
	CU_ASSERT(out != NULL && outlen == n && memcmp(out, in, 6) == 0 && memcmp(out, in, n) != 0);
	free(out);
	fx_teardown(&f);
	/* a value that is no UTF-8 (a lone 0xff) has no UTF-16: none, the
	 * proxy keeps its sniff */
	setenv("PV_MT_WIDE", "tok-\xff\xfe-Zq9Wv8Ut7Sr6Qp5On4Ml3", 1);
	p = policy_load_buffer("t.yaml", doc, sizeof(doc) - 1, stderr, &nerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	t = mask_table_new(p, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL(t);
	if (t != NULL)
		CU_ASSERT_FALSE(mask_table_wide_forms(t));
	mask_table_free(t);
	policy_free(p);
	unsetenv("PV_MT_WIDE");
}

/* UTF-8 s (at most 4-byte characters) as UTF-16 (w 2) or UTF-32 (w 4),
 * LE or BE, into out; a second encoder, the test's own. */
static size_t t_wide(const unsigned char *s, size_t n, unsigned w, bool be, unsigned char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		uint32_t cp, u[2];
		size_t nu = 1;

		if (s[i] < 0x80)
			cp = s[i], i += 1;
		else if (s[i] < 0xe0)
			cp = (uint32_t)(s[i] & 0x1f) << 6 | (s[i + 1] & 0x3f), i += 2;
		else if (s[i] < 0xf0)
			cp = (uint32_t)(s[i] & 0x0f) << 12 | (uint32_t)(s[i + 1] & 0x3f) << 6 | (s[i + 2] & 0x3f), i += 3;
		else
			cp = (uint32_t)(s[i] & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3f) << 12 |
			     (uint32_t)(s[i + 2] & 0x3f) << 6 | (s[i + 3] & 0x3f), i += 4;
		u[0] = cp;
		if (w == 2 && cp > 0xffff) {
			u[0] = 0xd800 + ((cp - 0x10000) >> 10);
			u[1] = 0xdc00 + (cp & 0x3ff);
			nu = 2;
		}
		for (size_t x = 0; x < nu; x++, o += w)
			for (unsigned b = 0; b < w; b++)
				out[o + (be ? w - 1 - b : b)] = (unsigned char)(u[x] >> (8 * b));
	}
	return o;
}

/* Whether out has none of the windows of 8 characters of w bytes (every
 * 2 characters) of form[0..fn) that hold 6 ASCII letters or digits or
 * more. The sentinel draws each letter and digit at random, so it keeps
 * one by chance (1 in 26 or 10): a window with one letter among
 * punctuation and non-ASCII characters it keeps ("-\u00e9t\u00e9-\u20ac-")
 * came back whole in about 9% of runs (round 47); six or more drawn the
 * same, about 1 in 10^6 at worst. */
static bool form_gone(const char *out, size_t outlen, const unsigned char *form, size_t fn, size_t w)
{
	for (size_t k = 0; k + 8 * w <= fn; k += 2 * w) {
		unsigned drawn = 0;

		for (size_t b = k; b < k + 8 * w; b++)
			drawn += isalnum(form[b]) && form[b] < 0x80 ? 1u : 0u;
		if (drawn >= 6 && memmem(out, outlen, form + k, 8 * w) != NULL)
			return false;
	}
	return true;
}

/*
 * perf46m (round 45's not-done): the UTF-16 and UTF-32 of a value with
 * non-ASCII characters (é, a 3-byte €, a 4-byte character: a UTF-16
 * surrogate pair), of a value over 1 KiB (in pieces; over 4 KiB none,
 * the sniff stays) are re-masked, and such tables keep mask_table_wide_forms() (fails before:
 * wide forms false, nothing re-masked). A form split by the table's
 * pieces at no matter which character still goes whole.
 */
static void test_wide_more(void)
{
	static const char doc[] = "network:\n  allowedDomains: [api.example.com]\ncredentials:\n  envVars:\n"
				  "    - {name: PV_MT_W1, mode: mask, injectHosts: [api.example.com]}\n"
				  "    - {name: PV_MT_W2, mode: mask, injectHosts: [api.example.com]}\n";
	static const char v1[] = "tok-\xc3\xa9t\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x94\x91-Zq9Wv8Ut7Sr6Qp5On4Ml3";
	char *v2 = malloc(2501), err[256], *out = NULL;
	unsigned char *in = malloc(16 * 2600);
	size_t n, outlen = 0;
	unsigned nerr = 0;
	policy_t *p;
	mask_table_t *t;

	CU_ASSERT_FATAL(v2 != NULL && in != NULL);
	for (size_t k = 0; k < 2500; k++)
		v2[k] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(k * 7 + k / 64) % 64];
	v2[2500] = '\0';
	setenv("PV_MT_W1", v1, 1);
	setenv("PV_MT_W2", v2, 1);
	p = policy_load_buffer("t.yaml", doc, sizeof(doc) - 1, stderr, &nerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	t = mask_table_new(p, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT(mask_table_wide_forms(t));
	for (int v = 0; v < 2; v++) {
		const unsigned char *val = (const unsigned char *)(v == 0 ? v1 : v2);
		size_t vl = strlen((const char *)val);

		for (unsigned w = 2; w <= 4; w += 2) {
			for (int be = 0; be < 2; be++) {
				memcpy(in, "\x89PNG\0\x01", 6);
				n = 6 + t_wide(val, vl, w, be, in + 6);
				memcpy(in + n, "\x02\0", 2);
				n += 2;
				out = NULL;
				CU_ASSERT_EQUAL(mask_table_remask(t, in, n, &out, &outlen), 1);
				if (out == NULL || !form_gone(out, outlen, in + 6, n - 8, w))
					fprintf(stderr, "\n  value %d, UTF-%u%s: left", v + 1, w * 8, be ? "BE" : "LE");
				CU_ASSERT(out != NULL && outlen == n && form_gone(out, outlen, in + 6, n - 8, w));
				free(out);
			}
		}
	}
	mask_table_free(t);
	policy_free(p);
	unsetenv("PV_MT_W1");
	unsetenv("PV_MT_W2");
	explicit_bzero(v2, 2501);
	free(v2);
	free(in);
}

/* The base64 forms of REAL_GH's UTF-16LE through the fixture (fails
 * before: nothing re-masked); its UTF-16 in JSON (a NUL as \u0000) is
 * not re-masked (docs/masking.md: seven bytes a value byte held back). */
static void test_wide_encoded(void)
{
	struct fx f;
	unsigned char w[256];
	char js[1024], e[512], *out = NULL;
	size_t wn, jn, outlen = 0;
	long en;

	CU_ASSERT_FATAL(fx_setup(&f) == 0);
	wn = t_wide((const unsigned char *)REAL_GH, strlen(REAL_GH), 2, false, w);
	jn = 0;
	for (size_t k = 0; k < wn; k++) {
		if (w[k] == 0) {
			memcpy(js + jn, "\\u0000", 6);
			jn += 6;
		} else {
			js[jn++] = (char)w[k];
		}
	}
	CU_ASSERT_EQUAL(mask_table_remask(f.t, js, jn, &out, &outlen), 0);
	free(out);
	/* base64 of its UTF-16LE at each alignment, in the middle of text */
	for (size_t lead = 0; lead < 3; lead++) {
		unsigned char buf[300];

		memcpy(buf, "xyz", lead);
		wn = lead + t_wide((const unsigned char *)REAL_GH, strlen(REAL_GH), 2, false, buf + lead);
		memcpy(buf + wn, "!!!", 3);
		wn += 3;
		en = mask_b64_encode(buf, wn, e, sizeof(e));
		CU_ASSERT_FATAL(en > 0);
		out = NULL;
		CU_ASSERT_EQUAL(mask_table_remask(f.t, e, (size_t)en, &out, &outlen), 1);
		CU_ASSERT(out != NULL && outlen == (size_t)en && memmem(out, outlen, e + 8, 40) == NULL);
		free(out);
	}
	fx_teardown(&f);
}

/*
 * review45m: many values. Each value's four wide forms (round 45) grew
 * the remask set's pairs by four a value: a table past
 * MASK_SET_MAX_PAIRS with them was refused (ERR_ARGS, no fallback),
 * and one just below it left its outbound sets with the raw values only
 * (set_forms()), so a base64 or JSON form of a real value on its way to
 * another host was no longer found. The wide forms go first.
 */
static void many_values(unsigned nv, bool *built, bool *all_forms, bool *wide)
{
	size_t cap = 256 + nv * 96, n;
	char *doc = malloc(cap), name[32], val[64];
	unsigned nerr = 0;
	char err[256];
	policy_t *p;
	mask_table_t *t;
	struct mask_outbound ob;

	*built = *all_forms = *wide = false;
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	n = (size_t)snprintf(doc, cap, "network:\n  allowedDomains: [api.example.com]\ncredentials:\n  envVars:\n");
	for (unsigned i = 0; i < nv; i++) {
		(void)snprintf(name, sizeof(name), "PV_MT_MANY%u", i);
		(void)snprintf(val, sizeof(val), "tok-%u-Zq9Wv8Ut7Sr6Qp5On4Ml3Kj2Ih1Gf0", i);
		CU_ASSERT_EQUAL(setenv(name, val, 1), 0);
		n += (size_t)snprintf(doc + n, cap - n, "    - {name: %s, mode: mask, injectHosts: [api.example.com]}\n",
				      name);
	}
	p = policy_load_buffer("t.yaml", doc, n, stderr, &nerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	t = mask_table_new(p, err, sizeof(err));
	if (t != NULL) {
		*built = true;
		*wide = mask_table_wide_forms(t);
		if (mask_table_outbound(t, "api.example.com", 443, true, INJECT_BODY, &ob) == 0)
			*all_forms = ob.nforms > ob.npairs;
	}
	mask_table_free(t);
	policy_free(p);
	for (unsigned i = 0; i < nv; i++) {
		(void)snprintf(name, sizeof(name), "PV_MT_MANY%u", i);
		(void)unsetenv(name);
	}
	free(doc);
}

static void test_wide_many_values(void)
{
	bool built, all, wide;

	/* 20 values: their wide forms fit */
	many_values(20, &built, &all, &wide);
	CU_ASSERT(built && all && wide);
	/* with their wide forms, 360 values left the outbound sets the raw
	 * values only, 390 built no table */
	many_values(360, &built, &all, &wide);
	CU_ASSERT(built);
	CU_ASSERT(all);
	many_values(390, &built, &all, &wide);
	CU_ASSERT(built);
	CU_ASSERT(all);
	CU_ASSERT_FALSE(wide);
}

/*
 * perf46m: the matcher's cost per byte (docs/architecture.md "The
 * masking cost"): the remask set of a table of 1, 10 and 100 ASCII
 * values of 40 bytes (each with its four wide forms) fed 4 MiB in 16 KiB
 * chunks of English-like text, random binary and that text in UTF-16LE;
 * prints ns/byte (best of 3) with PV_MT_TIMING set, else runs once
 * (smaller) and checks only that nothing was found in data holding none.
 */
static void timing_values(unsigned nv)
{
	static const char *const words[] = { "the ", "right ", "through ", "token ", "value ", "and ",
					     "of ", "a ", "request\n", "Zebra, ", "quick ", "0x1f ", "json: " };
	size_t total = getenv("PV_MT_TIMING") != NULL ? (size_t)4 << 20 : (size_t)256 << 10;
	size_t cap = 256 + nv * 96, dl, k;
	char *doc = malloc(cap), name[32], val[64], err[256];
	unsigned char *text = malloc(total), *bin = malloc(total), *u16 = malloc(total);
	unsigned nerr = 0;
	uint64_t r = 0x9e3779b97f4a7c15ull;
	policy_t *p;
	mask_table_t *t;

	CU_ASSERT_FATAL(doc != NULL && text != NULL && bin != NULL && u16 != NULL);
	dl = (size_t)snprintf(doc, cap, "network:\n  allowedDomains: [api.example.com]\ncredentials:\n  envVars:\n");
	for (unsigned i = 0; i < nv; i++) {
		(void)snprintf(name, sizeof(name), "PV_MT_TIME%u", i);
		(void)snprintf(val, sizeof(val), "tok%03u-Zq9Wv8Ut7Sr6Qp5On4Ml3Kj2Ih1Gf0Ed", i);
		CU_ASSERT_EQUAL(setenv(name, val, 1), 0);
		dl += (size_t)snprintf(doc + dl, cap - dl,
				       "    - {name: %s, mode: mask, injectHosts: [api.example.com]}\n", name);
	}
	for (k = 0; k < total;) {
		const char *w;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		w = words[r % ARRAY_LEN(words)];
		for (size_t x = 0; w[x] != '\0' && k < total; x++)
			text[k++] = (unsigned char)w[x];
	}
	for (k = 0; k < total; k++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		bin[k] = (unsigned char)(r >> 24);
		u16[k] = k % 2 == 0 ? text[k / 2] : 0;
	}
	p = policy_load_buffer("t.yaml", doc, dl, stderr, &nerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	t = mask_table_new(p, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	if (getenv("PV_MT_TIMING") != NULL)
		fprintf(stderr, "\n  %3u values (wide forms %s):", nv, mask_table_wide_forms(t) ? "on" : "off");
	for (int d = 0; d < 3; d++) {
		const unsigned char *data = d == 0 ? text : d == 1 ? bin : u16;
		double best = 1e9;

		for (int run = 0; run < (getenv("PV_MT_TIMING") != NULL ? 3 : 1); run++) {
			mask_stream_t *st = mask_stream_new(mask_table_inbound_set(t));
			struct evbuffer *out = evbuffer_new();
			struct timespec a, b;
			double ns;

			CU_ASSERT_FATAL(st != NULL && out != NULL);
			clock_gettime(CLOCK_MONOTONIC, &a);
			for (k = 0; k < total; k += 16384) {
				CU_ASSERT_EQUAL(mask_stream_feed(st, data + k, 16384, out), 0);
				(void)evbuffer_drain(out, evbuffer_get_length(out));
			}
			CU_ASSERT_EQUAL(mask_stream_finish(st, out), 0);
			clock_gettime(CLOCK_MONOTONIC, &b);
			ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)total;
			if (ns < best)
				best = ns;
			CU_ASSERT_EQUAL(mask_stream_total(st), 0);
			mask_stream_free(st);
			evbuffer_free(out);
		}
		if (getenv("PV_MT_TIMING") != NULL)
			fprintf(stderr, " %s %.2f", d == 0 ? "text" : d == 1 ? "binary" : "utf16", best);
	}
	mask_table_free(t);
	policy_free(p);
	for (unsigned i = 0; i < nv; i++) {
		(void)snprintf(name, sizeof(name), "PV_MT_TIME%u", i);
		(void)unsetenv(name);
	}
	free(doc);
	free(text);
	free(bin);
	free(u16);
}

static void test_matcher_timing(void)
{
	timing_values(1);
	timing_values(10);
	timing_values(100);
}

/*
 * fix39m: the pieces and base64 forms of values over 4 KiB fill the
 * sets' 4 MiB sooner; a table of seven values of 16,000 bytes, which
 * built before them, still builds (their forms left out), and re-masks
 * each value as it is.
 */
static void big_forms_bound(int nv)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char doc[2048], name[32], err[256];
	char *v[7];
	size_t dl;
	unsigned nerr = 0;
	policy_t *p;
	mask_table_t *t;

	srand(391);
	dl = (size_t)snprintf(doc, sizeof(doc), "network:\n  allowedDomains: [api.example.com]\ncredentials:\n  envVars:\n");
	for (int i = 0; i < nv; i++) {
		size_t o = 0;

		v[i] = malloc(16100);
		CU_ASSERT_FATAL(v[i] != NULL);
		o = (size_t)sprintf(v[i], "-----BEGIN BUNDLE-----\n");
		while (o + 65 + 21 < 16000) {
			for (int k = 0; k < 64; k++)
				v[i][o++] = b64[rand() % 64];
			v[i][o++] = '\n';
		}
		o += (size_t)sprintf(v[i] + o, "-----END BUNDLE-----\n");
		snprintf(name, sizeof(name), "PV_MT_BIG%d", i);
		setenv(name, v[i], 1);
		dl += (size_t)snprintf(doc + dl, sizeof(doc) - dl,
				       "    - {name: %s, mode: mask, injectHosts: [api.example.com]}\n", name);
	}
	p = policy_load_buffer("t.yaml", doc, dl, stderr, &nerr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	t = mask_table_new(p, err, sizeof(err));
	if (t == NULL)
		fprintf(stderr, "\n  mask_table_new: %s\n", err);
	CU_ASSERT_PTR_NOT_NULL(t);
	/* review39b: said at start (proxy/cli/setup.c masks_setup()) */
	CU_ASSERT(t != NULL && mask_table_forms_small(t));
	for (int i = 0; t != NULL && i < nv; i++) {
		char *out = NULL;
		size_t outlen = 0;

		CU_ASSERT_EQUAL(mask_table_remask(t, v[i], strlen(v[i]), &out, &outlen), 1);
		if (out != NULL)
			CU_ASSERT_PTR_NULL(memmem(out, outlen, v[i] + 1000, 64));
		free(out);
	}
	/* round 40: only the largest values go without their base64 (all
	 * seven did), and start-up names them (credential names, no value) */
	if (t != NULL) {
		size_t nsmall = 0, found = 0;
		const char *nm;
		char *enc = malloc(16100 / 3 * 4 + 8);

		CU_ASSERT_FATAL(enc != NULL);
		while ((nm = mask_table_forms_small_cred(t, nsmall)) != NULL) {
			CU_ASSERT(strncmp(nm, "PV_MT_BIG", 9) == 0);
			nsmall++;
		}
		for (int i = 0; i < nv; i++) {
			char *out = NULL;
			size_t outlen = 0;
			long w = mask_b64_encode((const unsigned char *)v[i], strlen(v[i]), enc, 16100 / 3 * 4 + 8);

			CU_ASSERT_FATAL(w > 0);
			if (mask_table_remask(t, enc, (size_t)w, &out, &outlen) == 1 &&
			    memmem(out, outlen, enc + 2000, 64) == NULL)
				found++;
			free(out);
		}
		free(enc);
		/* seven: on the bound's edge, one more form (PHP's) and all go;
		 * six: half of them keep theirs */
		CU_ASSERT(nsmall >= 1 && nsmall <= (nv == 7 ? 7u : 4u));
		CU_ASSERT_EQUAL(found, (size_t)nv - nsmall);
		if (found != (size_t)nv - nsmall || nsmall < 1 || nsmall > (nv == 7 ? 7u : 4u))
			fprintf(stderr, "\n  %zu values without their big forms, %zu base64 found\n", nsmall, found);
	}
	mask_table_free(t);
	policy_free(p);
	for (int i = 0; i < nv; i++) {
		snprintf(name, sizeof(name), "PV_MT_BIG%d", i);
		unsetenv(name);
		explicit_bzero(v[i], strlen(v[i]));
		free(v[i]);
	}
}

static void test_big_forms_bound(void)
{
	big_forms_bound(7);
	big_forms_bound(6);
}

/*
 * fix38m: of a whole file masked, a run with no capital letter and no
 * part of over 10 letters and digits with a digit was public text (a
 * key name, a URL's host and path), so a lower-case secret in short
 * groups (a recovery code, a license key) was looked for nowhere: its
 * hex reached the command (a file with no other token was looked for
 * whole: its public lines found another such file). Three groups of 4
 * or more letters and digits mixed make it a secret now; a file of
 * names, hosts, paths, versions and targets with one such group or
 * none is still left.
 */
static void test_encoded_whole_files_lower_groups(void)
{
	static const char cfg[] = "[license]\nowner = dev team\nkey = x7k2m-9pq4r-tz81b-0wq3e\n"
				  "api = Zq9Wv8Ut7Sr6Qp5On4Ml3\n";
	static const char other[] =
		"[license]\nowner = dev team\nkey = see vault\nhost = api2.example.com\n"
		"target = x86_64-linux-gnu\ncerts = //www.googleapis.com/oauth2/v1/certs\ntool = i686-w64-mingw32\n"
		"image = ubuntu-22.04-amd64 python3.12-slim\nurl = auth_provider_x509_cert_url\n";
	char *hex;
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, cfg), 0);
	if (mask_table_encoded_real(f.t, other, strlen(other)) != 0)
		fprintf(stderr, "\n  the public file found\n");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other, strlen(other)), 0);
	hex = hex_of("x7k2m-9pq4r-tz81b-0wq3e");
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, hex, strlen(hex)), 1);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, "K=X7K2M-9PQ4R-TZ81B", 19), 1);
	free(hex);
	fx_teardown(&f);
}

/*
 * review37b: a whole file masked written without spaces around its
 * = (aws_access_key_id=AKIA..., an .npmrc's _authToken=npm_...): the
 * name and the value were one run, and its windows over the name and
 * the value's first bytes (aws_access_k, _authToken=n) are every such
 * file's. Another account's file is left; the values are found.
 */
static void test_encoded_whole_files_assign(void)
{
	static const char aws[] = "[default]\naws_access_key_id=AKIA4XQ7Z2M9KD3LP8WQ\n"
				  "aws_secret_access_key=q8Zr3vN0pX7sLk2WmT5yHb1cJd4fGe6iUo9aQw0E\n";
	static const char npmrc[] = "registry=https://registry.example.com/\n"
				    "//registry.example.com/:_authToken=npm_AbCdEf123456GhIjKl7890MnOpQrSt12wx\n";
	const char *other[] = {
		"[ci]\naws_access_key_id=AKIA7B2N5V8C1X4Z6M3Q\naws_secret_access_key=Zz0Yy9Xx8Ww7Vv6Uu5Tt4Ss3Rr2Qq1Pp0Oo9Nn8Mm\n",
		"AWS_ACCESS_KEY_ID=AKIA7B2N5V8C1X4Z6M3Q\n",
		"//registry.example.com/:_authToken=npm_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0PpOo99\n",
	};
	char buf[256];
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, aws), 0);
	for (size_t i = 0; i < 2; i++) {
		if (mask_table_encoded_real(f.t, other[i], strlen(other[i])) != 0)
			fprintf(stderr, "\n  other[%zu] found\n", i);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other[i], strlen(other[i])), 0);
	}
	snprintf(buf, sizeof(buf), "k=%.12s", "Lk2WmT5yHb1cJd4f");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	snprintf(buf, sizeof(buf), "ID=\"AKIA4XQ7\"'Z2M9KD3LP8WQ'");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, npmrc), 0);
	if (mask_table_encoded_real(f.t, other[2], strlen(other[2])) != 0)
		fprintf(stderr, "\n  other[2] found\n");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other[2], strlen(other[2])), 0);
	snprintf(buf, sizeof(buf), "T=%s", "GhIjKl7890MnOpQr");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	fx_teardown(&f);
}

/* A realistic service account JSON (private key in PEM with JSON's \n,
 * the public URLs every such file holds) around the PKCS#8 key file key
 * (malloc'd), or NULL. */
static char *sa_json(const char *key, const char *email, const char *id)
{
	size_t n = strlen(key), o = 0;
	char *pem = malloc(2 * n + 1), *out;

	if (pem == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (key[i] == '\n') {
			pem[o++] = '\\';
			pem[o++] = 'n';
		} else
			pem[o++] = key[i];
	}
	pem[o] = '\0';
	out = malloc(o + 2048);
	if (out != NULL)
		snprintf(out, o + 2048,
			 "{\n  \"type\": \"service_account\",\n  \"project_id\": \"acme-prod\",\n"
			 "  \"private_key_id\": \"%s\",\n  \"private_key\": \"%s\",\n"
			 "  \"client_email\": \"%s@acme-prod.iam.gserviceaccount.com\",\n"
			 "  \"client_id\": \"104598223467781234567\",\n"
			 "  \"auth_uri\": \"https://accounts.google.com/o/oauth2/auth\",\n"
			 "  \"token_uri\": \"https://oauth2.googleapis.com/token\",\n"
			 "  \"auth_provider_x509_cert_url\": \"https://www.googleapis.com/oauth2/v1/certs\",\n"
			 "  \"client_x509_cert_url\": \"https://www.googleapis.com/robot/v1/metadata/x509/"
			 "%s%%40acme-prod.iam.gserviceaccount.com\",\n  \"universe_domain\": \"googleapis.com\"\n}\n",
			 id, pem, email, email);
	free(pem);
	return out;
}

/*
 * review37b: a whole file masked that holds a private key (a service
 * account's JSON, its key in PEM with JSON's \n) or public text with
 * digits (the x509 URLs and key names every such file holds, a
 * kubeconfig's CA certificate): another account's file, the public
 * lines a client library or a README holds, are left; its key's secret
 * parts, in hex or as they are, are found.
 */
static void test_encoded_whole_files_keys(void)
{
	static const char *const left[] = {
		"AUTH_PROVIDER_X509_CERT_URL=https://www.googleapis.com/oauth2/v1/certs\n",
		"client_x509_cert_url: https://www.googleapis.com/robot/v1/metadata/x509/ci%40acme-prod.iam.gserviceaccount.com\n",
		"\"auth_provider_x509_cert_url\": \"https://www.googleapis.com/oauth2/v1/certs\"",
	};
	char *k1 = NULL, *k2 = NULL, *mine = NULL, *other = NULL, *hex = NULL, *line;
	struct fx f;

	if (system("command -v openssl >/dev/null") != 0) {
		fprintf(stderr, "(skipped: no openssl) ");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	k1 = fx_key(&f, "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out %s 2>/dev/null", "sa1");
	k2 = fx_key(&f, "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out %s 2>/dev/null", "sa2");
	CU_ASSERT_FATAL(k1 != NULL && k2 != NULL);
	mine = sa_json(k1, "deployer", "3f9a1c77e0b24d5a8c6e2f1b9d0a4c7e5b3f8a21");
	other = sa_json(k2, "ci", "0d2b6e8f1a3c5e7092b4d6f8a1c3e5f7092b4d6f");
	CU_ASSERT_FATAL(mine != NULL && other != NULL);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, mine), 0);
	if (mask_table_encoded_real(f.t, other, strlen(other)) != 0)
		fprintf(stderr, "\n  another service account's JSON found\n");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other, strlen(other)), 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, k2, strlen(k2)), 0);
	for (size_t i = 0; i < ARRAY_LEN(left); i++) {
		if (mask_table_encoded_real(f.t, left[i], strlen(left[i])) != 0)
			fprintf(stderr, "\n  left[%zu] found\n", i);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, left[i], strlen(left[i])), 0);
	}
	/* found: the key as a PEM file, a line of its secret digits, hex of the file */
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, k1, strlen(k1)), 1);
	line = strchr(k1, '\n');
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	line = strchr(line + 1, '\n');
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	line = strchr(line + 1, '\n');
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	for (int k = 0; k < 6; k++) { /* the 9th line of digits: in the private exponent */
		line = strchr(line + 1, '\n');
		CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	}
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, line + 1, 64), 1);
	hex = hex_of(mine);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, hex, strlen(hex)), 1);
	free(k1);
	free(k2);
	free(mine);
	free(other);
	free(hex);
	fx_teardown(&f);
}

/* A kubeconfig of user with the base64 of the files ca, crt and key
 * in f's directory (malloc'd), or NULL. */
static char *kubeconfig(struct fx *f, const char *user)
{
	char sh[2400], path[600];

	snprintf(path, sizeof(path), "%s/kc-%s", f->dir, user);
	snprintf(sh, sizeof(sh),
		 "cd '%s' && { printf 'apiVersion: v1\\nkind: Config\\nclusters:\\n- cluster:\\n"
		 "    certificate-authority-data: %%s\\n    server: https://10.0.0.1:6443\\n  name: prod\\n"
		 "users:\\n- name: %s\\n  user:\\n    client-certificate-data: %%s\\n    client-key-data: %%s\\n' "
		 "\"$(base64 -w0 ca.crt)\" \"$(base64 -w0 %s.crt)\" \"$(base64 -w0 %s.key)\"; } > '%s'",
		 f->dir, user, user, user, path);
	if (system(sh) != 0)
		return NULL;
	return test_read_file(path, NULL);
}

/*
 * review37b: a masked kubeconfig holds its cluster's CA certificate and
 * its own certificate and key as base64 of PEM (LS0tLS1CRUdJTi...): the
 * runs' first digits are every such block's, and the CA's whole run is
 * another user's kubeconfig of the same cluster too. Another user's
 * kubeconfig and the CA certificate are left; the client key's secret
 * digits, and its client-key-data as it is, are found.
 */
static void test_encoded_kubeconfig(void)
{
	static const char gen[] =
		"cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -subj /CN=ca -days 2 "
		">/dev/null 2>&1 && for u in me you; do openssl req -newkey rsa:2048 -nodes -keyout $u.key -subj /CN=$u "
		"-out $u.csr >/dev/null 2>&1 && openssl x509 -req -in $u.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
		"-out $u.crt -days 2 >/dev/null 2>&1 || exit 1; done";
	char sh[1400], path[600], *mine = NULL, *other = NULL, *ca = NULL, *key = NULL, *line, *data;
	struct fx f;

	if (system("command -v openssl >/dev/null && command -v base64 >/dev/null") != 0) {
		fprintf(stderr, "(skipped: no openssl or base64) ");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	snprintf(sh, sizeof(sh), gen, f.dir);
	CU_ASSERT_EQUAL_FATAL(system(sh), 0);
	mine = kubeconfig(&f, "me");
	other = kubeconfig(&f, "you");
	snprintf(path, sizeof(path), "%s/ca.crt", f.dir);
	ca = test_read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/me.key", f.dir);
	key = test_read_file(path, NULL);
	CU_ASSERT_FATAL(mine != NULL && other != NULL && ca != NULL && key != NULL);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, mine), 0);
	if (mask_table_encoded_real(f.t, other, strlen(other)) != 0)
		fprintf(stderr, "\n  another user's kubeconfig found\n");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other, strlen(other)), 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, ca, strlen(ca)), 0);
	line = key;
	for (int k = 0; k < 9 && line != NULL; k++) /* the 9th line of digits: the private exponent */
		line = strchr(line + 1, '\n');
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, line + 1, 64), 1);
	data = strstr(mine, "client-key-data: ");
	CU_ASSERT_PTR_NOT_NULL_FATAL(data);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, data + 17, strlen(data + 17)), 1);
	free(mine);
	free(other);
	free(ca);
	free(key);
	fx_teardown(&f);
}

/*
 * review37b: a masked FIDO key of OpenSSH (sk-ssh-ed25519@openssh.com:
 * a flags byte among its private strings) was looked for whole after
 * its checkints, key type, public key and "ssh:" too, which every such
 * key and its .pub hold. Only its key handle is now: another such key
 * and its .pub are left, the key's hex is found. The keys are made
 * here (no token needed: OpenSSH's format, PROTOCOL.u2f).
 */
static void test_encoded_sk_keys(void)
{
	static const char py[] =
		"import base64, os, struct, sys\n"
		"\n"
		"def s(b):\n"
		"    return struct.pack(\">I\", len(b)) + b\n"
		"\n"
		"ec = sys.argv[2] == \"ecdsa\"\n"
		"kt = b\"sk-ecdsa-sha2-nistp256@openssh.com\" if ec else b\"sk-ssh-ed25519@openssh.com\"\n"
		"pub = (b\"\\x04\" + os.urandom(64)) if ec else os.urandom(32)\n"
		"curve = s(b\"nistp256\") if ec else b\"\"\n"
		"app = b\"ssh:\"\n"
		"handle = os.urandom(96)\n"
		"pubblob = s(kt) + curve + s(pub) + s(app)\n"
		"chk = os.urandom(4)\n"
		"priv = chk + chk + s(kt) + curve + s(pub) + s(app) + bytes([0x01]) + s(handle) + s(b\"\") + s(b\"me@host\")\n"
		"i = 1\n"
		"while len(priv) % 8:\n"
		"    priv += bytes([i]); i += 1\n"
		"blob = b\"openssh-key-v1\\0\" + s(b\"none\") + s(b\"none\") + s(b\"\") + struct.pack(\">I\", 1) + s(pubblob) + s(priv)\n"
		"b64 = base64.b64encode(blob).decode()\n"
		"with open(sys.argv[1], \"w\") as f:\n"
		"    f.write(\"-----BEGIN OPENSSH PRIVATE KEY-----\\n\")\n"
		"    for k in range(0, len(b64), 70):\n"
		"        f.write(b64[k:k + 70] + \"\\n\")\n"
		"    f.write(\"-----END OPENSSH PRIVATE KEY-----\\n\")\n"
		"with open(sys.argv[1] + \".pub\", \"w\") as f:\n"
		"    f.write(kt.decode() + \" \" + base64.b64encode(pubblob).decode() + \" me@host\\n\")\n";
	static const char *const kinds[] = {"ed25519", "ecdsa"};
	char sh[4096], path[600];
	struct fx f;

	if (system("command -v python3 >/dev/null") != 0) {
		fprintf(stderr, "(skipped: no python3) ");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	/* fix38m: the ECDSA kind (its curve's name before the point) was
	 * not tested */
	for (size_t kd = 0; kd < ARRAY_LEN(kinds); kd++) {
		char *mine = NULL, *other = NULL, *pub = NULL, *hex = NULL;

		for (int k = 0; k < 2; k++) {
			snprintf(path, sizeof(path), "%s/sk%zu%d", f.dir, kd, k);
			snprintf(sh, sizeof(sh), "python3 -c '%s' '%s' %s", py, path, kinds[kd]);
			CU_ASSERT_EQUAL_FATAL(system(sh), 0);
			if (k == 0)
				mine = test_read_file(path, NULL);
			else
				other = test_read_file(path, NULL);
		}
		snprintf(path, sizeof(path), "%s/sk%zu0.pub", f.dir, kd);
		pub = test_read_file(path, NULL);
		CU_ASSERT_FATAL(mine != NULL && other != NULL && pub != NULL);
		CU_ASSERT_EQUAL_FATAL(fx_retable(&f, mine), 0);
		if (mask_table_encoded_real(f.t, other, strlen(other)) != 0)
			fprintf(stderr, "\n  %s: another sk key found\n", kinds[kd]);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other, strlen(other)), 0);
		if (mask_table_encoded_real(f.t, pub, strlen(pub)) != 0)
			fprintf(stderr, "\n  %s: its .pub found\n", kinds[kd]);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, pub, strlen(pub)), 0);
		hex = hex_of(mine);
		CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, hex, strlen(hex)), 1);
		free(mine);
		free(other);
		free(pub);
		free(hex);
	}
	fx_teardown(&f);
}

/*
 * fix38m: a masked OpenPGP secret key (gpg --armor --export-secret-keys:
 * -----BEGIN PGP PRIVATE KEY BLOCK-----) was read as no key (its armor
 * line is not "PRIVATE KEY-----") and looked for by every window of its
 * body, the public key packet, the user ID and the self-signatures
 * included: the key's own public export (a KEYS file, a project's
 * signing key) refused the start. Of the block only the secret part of
 * each secret key and subkey packet is looked for now: its public
 * export and another key are left; its hex, and its body joined and
 * upper-cased are found, also inside a whole file masked. Keys made
 * with gpg in a scratch home.
 */
static void test_encoded_pgp_keys(void)
{
	static const char *const algos[] = {"future-default", "rsa2048"};
	char sh[4096], g[400], path[600], *sec[2] = {NULL, NULL}, *pub = NULL, *hex = NULL, *up = NULL;
	struct fx f;

	if (system("command -v gpg >/dev/null && command -v gpgconf >/dev/null") != 0) {
		fprintf(stderr, "(skipped: no gpg) ");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	for (size_t a = 0; a < ARRAY_LEN(algos); a++) {
		for (int k = 0; k < 2; k++) {
			snprintf(g, sizeof(g), "%s/gpg%zu%d", f.dir, a, k);
			snprintf(sh, sizeof(sh),
				 "mkdir -m 700 %s && g() { gpg --batch --quiet --homedir %s --pinentry-mode loopback "
				 "--passphrase '' \"$@\"; } && g --quick-gen-key 'me <me@host>' %s default never "
				 "2>/dev/null && g --armor --export-secret-keys > %s/sec && g --armor --export > %s/pub; "
				 "r=$?; gpgconf --homedir %s --kill all 2>/dev/null; exit $r",
				 g, g, algos[a], g, g, g);
			CU_ASSERT_EQUAL_FATAL(system(sh), 0);
			snprintf(path, sizeof(path), "%s/sec", g);
			sec[k] = test_read_file(path, NULL);
			if (k == 0) {
				snprintf(path, sizeof(path), "%s/pub", g);
				pub = test_read_file(path, NULL);
			}
		}
		CU_ASSERT_FATAL(sec[0] != NULL && sec[1] != NULL && pub != NULL);
		CU_ASSERT_EQUAL_FATAL(fx_retable(&f, sec[0]), 0);
		if (mask_table_encoded_real(f.t, pub, strlen(pub)) != 0)
			fprintf(stderr, "\n  %s: its public key found\n", algos[a]);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, pub, strlen(pub)), 0);
		if (mask_table_encoded_real(f.t, sec[1], strlen(sec[1])) != 0)
			fprintf(stderr, "\n  %s: another key found\n", algos[a]);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, sec[1], strlen(sec[1])), 0);
		hex = hex_of(sec[0]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, hex, strlen(hex)), 1);
		/* the body joined onto one line and upper-cased */
		up = strdup(strstr(sec[0], "\n\n") + 2);
		CU_ASSERT_PTR_NOT_NULL_FATAL(up);
		{
			size_t o = 0;

			for (char *c = up; *c != '\0'; c++)
				if (*c != '\n')
					up[o++] = (char)toupper((unsigned char)*c);
			up[o] = '\0';
		}
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, up, strlen(up)), 1);
		/* inside a whole file masked, too (a config holding the block) */
		free(hex);
		hex = malloc(strlen(sec[0]) + 64);
		CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
		sprintf(hex, "signing:\n  key: |\n%s  owner: me\n", sec[0]);
		CU_ASSERT_EQUAL_FATAL(fx_retable(&f, hex), 0);
		if (mask_table_encoded_real(f.t, pub, strlen(pub)) != 0)
			fprintf(stderr, "\n  %s: in a file, its public key found\n", algos[a]);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, pub, strlen(pub)), 0);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, up, strlen(up)), 1);
		for (int k = 0; k < 2; k++) {
			free(sec[k]);
			sec[k] = NULL;
		}
		free(pub);
		free(hex);
		free(up);
		pub = hex = up = NULL;
	}
	fx_teardown(&f);
}

/*
 * review38c: a masked OpenPGP block from gpg --export-secret-subkeys
 * (the primary key kept offline: its secret part a gnu-dummy stub of a
 * few bytes) had the stub's packet looked for whole, its public key
 * material with it, so the key's own public export refused the start,
 * the false refusal fix38m meant to end. The stub is no secret now:
 * the public export and another key are left; the subkey's secret part
 * (hex of the block) is found; a block of stubs only finds nothing in
 * the public export.
 */
static void test_encoded_pgp_stub(void)
{
	char sh[8192], g[400], path[600], *sub = NULL, *pub = NULL, *other = NULL, *hex = NULL;
	struct fx f;

	if (system("command -v gpg >/dev/null && command -v gpgconf >/dev/null") != 0) {
		fprintf(stderr, "(skipped: no gpg) ");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	snprintf(g, sizeof(g), "%s/gpgstub", f.dir);
	snprintf(sh, sizeof(sh),
		 "mkdir -m 700 %s %s2 && g() { gpg --batch --quiet --homedir %s --pinentry-mode loopback "
		 "--passphrase '' \"$@\"; } && g --quick-gen-key 'me <me@host>' future-default default never "
		 "2>/dev/null && g --armor --export-secret-subkeys > %s/sub && g --armor --export > %s/pub && "
		 "gpg --batch --quiet --homedir %s2 --pinentry-mode loopback --passphrase '' --quick-gen-key "
		 "'me <me@host>' future-default default never 2>/dev/null && gpg --batch --quiet --homedir %s2 "
		 "--armor --export-secret-subkeys > %s/other; r=$?; gpgconf --homedir %s --kill all 2>/dev/null; "
		 "gpgconf --homedir %s2 --kill all 2>/dev/null; exit $r",
		 g, g, g, g, g, g, g, g, g, g);
	CU_ASSERT_FATAL(strlen(sh) < sizeof(sh) - 1);
	CU_ASSERT_EQUAL_FATAL(system(sh), 0);
	snprintf(path, sizeof(path), "%s/sub", g);
	sub = test_read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/pub", g);
	pub = test_read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/other", g);
	other = test_read_file(path, NULL);
	CU_ASSERT_FATAL(sub != NULL && pub != NULL && other != NULL);
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, sub), 0);
	if (mask_table_encoded_real(f.t, pub, strlen(pub)) != 0)
		fprintf(stderr, "\n  a stub primary: its public key found\n");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, pub, strlen(pub)), 0);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other, strlen(other)), 0);
	hex = hex_of(sub);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, hex, strlen(hex)), 1);
	free(sub);
	free(pub);
	free(other);
	free(hex);
	fx_teardown(&f);
}

/*
 * review37b: a whole file masked holding an SSH public key (a PuTTY
 * key's Public-Lines, wrapped at 64 columns; a config's authorized or
 * signing key): its base64 begins as every key's of its type does
 * (AAAAC3NzaC1lZDI1NTE5, AAAAB3NzaC1yc2E) and is the key's .pub and a
 * .gitconfig's signingkey. Another key's PuTTY file, the key's own
 * public key and a .gitconfig signing with it are left; its private
 * line is found.
 */
static void test_encoded_whole_files_pubkeys(void)
{
	char path[600], *pk[2] = {NULL, NULL}, *ppk[2] = {NULL, NULL}, buf[2048], priv[64];
	struct fx f;

	if (system("command -v ssh-keygen >/dev/null && command -v base64 >/dev/null") != 0) {
		fprintf(stderr, "(skipped: no ssh-keygen or base64) ");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	for (int k = 0; k < 2; k++) {
		char sh[1400], *b, *e;
		size_t o;

		snprintf(path, sizeof(path), "%s/pk%d", f.dir, k);
		snprintf(sh, sizeof(sh), "ssh-keygen -q -t rsa -b 2048 -N '' -C me -f %s </dev/null >/dev/null", path);
		CU_ASSERT_EQUAL_FATAL(system(sh), 0);
		snprintf(path, sizeof(path), "%s/pk%d.pub", f.dir, k);
		pk[k] = test_read_file(path, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(pk[k]);
		b = strchr(pk[k], ' ') + 1;
		e = strchr(b, ' ');
		/* a PuTTY key's shape: the public key at 64 columns, a private line */
		snprintf(priv, sizeof(priv), "AAAAIQD%s", k == 0 ? "Xaq8Zr3vN0pX7sLk2WmT5yHb1cJd4f" : "Zz0Yy9Xx8Ww7Vv6Uu5Tt4Ss3Rr2Qq");
		o = (size_t)snprintf(buf, sizeof(buf), "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: me\n"
						       "Public-Lines: %zu\n", ((size_t)(e - b) + 63) / 64);
		for (const char *c = b; c < e; c += 64)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%.*s\n", (int)(e - c < 64 ? e - c : 64), c);
		snprintf(buf + o, sizeof(buf) - o, "Private-Lines: 1\n%s\nPrivate-MAC: %s\n", priv,
			 k == 0 ? "3f9a1c77e0b24d5a8c6e2f1b9d0a4c7e5b3f8a21" : "0d2b6e8f1a3c5e7092b4d6f8a1c3e5f7092b4d6f");
		ppk[k] = strdup(buf);
		CU_ASSERT_PTR_NOT_NULL_FATAL(ppk[k]);
	}
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, ppk[0]), 0);
	if (mask_table_encoded_real(f.t, ppk[1], strlen(ppk[1])) != 0)
		fprintf(stderr, "\n  another PuTTY key found\n");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, ppk[1], strlen(ppk[1])), 0);
	if (mask_table_encoded_real(f.t, pk[0], strlen(pk[0])) != 0)
		fprintf(stderr, "\n  its public key found\n");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, pk[0], strlen(pk[0])), 0);
	snprintf(buf, sizeof(buf), "[user]\n\tsigningkey = key::%s[gpg]\n\tformat = ssh\n", pk[0]);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 0);
	snprintf(buf, sizeof(buf), "K=%s", "AAAAIQDXaq8Zr3vN0pX7sLk2WmT5yHb1cJd4f");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	for (int k = 0; k < 2; k++) {
		free(pk[k]);
		free(ppk[k]);
	}
	fx_teardown(&f);
}

/* The escapes and quotings a program or a shell carries a value in
 * (fix36m): the value, and a value of 8 to 15 bytes, found; ordinary text
 * with escapes and quotes, and tokens that share a vendor's public
 * prefix with the masked one, left. */
static void test_encoded_escapes(void)
{
	static const char *const vendor[][2] = {
		{"ghp_", "ghp_"},
		{"github_pat_11ABCDEFG0", "github_pat_11ABCDEFG0"},
		{"sk-ant-api03-", "sk-ant-api03-"},
		{"IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD", "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD"},
		{"pypi-AgEIcHlwaS5vcmcCJDA", "pypi-AgEIcHlwaS5vcmcCJDA"},
	};
	const char *forms[] = {"\\x%02x", "\\%03o", "\\u%04x", "\\u{%x}", "\\U%08X", "%%u%04X", "&#%d;",
			       "&#x%x;", "\\%c", "\\x{%x}", "\\o{%o}", "\\N{U+%04X}"};
	char buf[2048], v[256];
	size_t n = strlen(REAL_GH), o;
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	for (size_t k = 0; k < ARRAY_LEN(forms); k++) {
		o = 0;
		for (size_t i = 0; i < n; i++) /* every byte, or every other */
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, forms[k], (unsigned char)REAL_GH[i]);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, o), 1);
		o = 0;
		for (size_t i = 0; i < n; i++)
			o += (size_t)(i % 2 ? snprintf(buf + o, sizeof(buf) - o, "%c", REAL_GH[i])
					    : snprintf(buf + o, sizeof(buf) - o, forms[k], (unsigned char)REAL_GH[i]));
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, o), 1);
	}
	/* review37b: Ruby's \u{H.. H..}, the value in one group (its hex
	 * once the spaces go), and in groups of 7 with a tab among the
	 * spaces, 3 digits each (no hex form then) */
	for (int g = 0; g < 2; g++) {
		size_t per = g == 0 ? n : 7;

		o = (size_t)snprintf(buf, sizeof(buf), "t = \"");
		for (size_t i = 0; i < n; i++)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, g == 0 ? "%s%x%s" : "%s%03x%s",
					      i % per == 0 ? "\\u{" : i % per == 3 ? "\t" : " ", (unsigned char)REAL_GH[i],
					      i % per == per - 1 || i == n - 1 ? "}" : "");
		snprintf(buf + o, sizeof(buf) - o, "\"");
		if (mask_table_encoded_real(f.t, buf, strlen(buf)) != 1)
			fprintf(stderr, "\n  Ruby group %d not found\n", g);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	}
	/* quotes: "ab""cd", 'ab'"cd", $'ab'cd, "a\"b" inside JSON in a shell's quotes */
	snprintf(buf, sizeof(buf), "T=\"%.9s\"\"%s\"", REAL_GH, REAL_GH + 9);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	snprintf(buf, sizeof(buf), "'%.7s'\"%.7s\"%s", REAL_GH, REAL_GH + 7, REAL_GH + 14);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	snprintf(buf, sizeof(buf), "$'%.11s'%s", REAL_GH, REAL_GH + 11);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	o = (size_t)snprintf(buf, sizeof(buf), "'{\"t\":\"");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "\\\\u%04x", (unsigned char)REAL_GH[i]);
	snprintf(buf + o, sizeof(buf) - o, "\"}'");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	/* rot13 and reversed, the whole value or a part */
	for (size_t i = 0; i < n; i++) {
		int c = REAL_GH[i];

		buf[i] = (char)(isupper(c) ? 'A' + (c - 'A' + 13) % 26 : islower(c) ? 'a' + (c - 'a' + 13) % 26 : c);
		v[n - 1 - i] = (char)c;
	}
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, n), 1);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf + 10, 16), 1);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, v, n), 1);
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, v + 3, 16), 1);
	/* a value of 8 to 15 bytes (its own case has no window) split */
	CU_ASSERT_EQUAL_FATAL(fx_retable(&f, "KpqZWxLmRtYvNs"), 0);
	snprintf(buf, sizeof(buf), "x=\"KpqZWxL\"'mRtYvNs'");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	snprintf(buf, sizeof(buf), "x=KpqZWxL\\\nmRtYvNs");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 1);
	fx_teardown(&f);
	/* left: ordinary text with escapes, quotes and entities */
	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	snprintf(buf, sizeof(buf), "PS1='\\[\\e[1;32m\\]\\u@\\h:\\w\\$ ' LS_COLORS='di=01;34:ln=01;36' "
		 "J='{\"a\":\"\\u00e9\\n\\t\\/x\"}' H='&lt;b&gt;&#169;&#x263a;' P=\"a\"\"b\" "
		 "$'\\x41\\101\\0' %%u00e9 \\U0001F600");
	CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, buf, strlen(buf)), 0);
	fx_teardown(&f);
	/* left: another token of the vendor's, a masked one's public prefix
	 * in front of other random bytes */
	for (size_t i = 0; i < ARRAY_LEN(vendor); i++) {
		char mine[256], other[256], r1[64], r2[64];

		for (size_t k = 0; k < 48; k++) {
			r1[k] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[(k * 7 + i) % 62];
			r2[k] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[(k * 11 + 5 + i) % 62];
		}
		r1[48] = r2[48] = '\0';
		snprintf(mine, sizeof(mine), "%s%s%s", vendor[i][0], i == 1 ? "AbCdEfGhIjKl_" : "", r1);
		snprintf(other, sizeof(other), "%s%s%s", vendor[i][1], i == 1 ? "ZyXwVuTsRqPo_" : "", r2);
		CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
		CU_ASSERT_EQUAL_FATAL(fx_retable(&f, mine), 0);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, other, strlen(other)), 0);
		o = 0; /* the masked one's hex still found */
		for (size_t k = 0; mine[k] != '\0'; k++)
			o += (size_t)snprintf(v + 2 * k, 3, "%02x", (unsigned char)mine[k]);
		CU_ASSERT_EQUAL(mask_table_encoded_real(f.t, v, o), 1);
		fx_teardown(&f);
	}
}

static void test_b64(void)
{
	static const char *const vec[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	unsigned char dec[64];
	char enc[64];

	for (size_t i = 0; i < ARRAY_LEN(vec); i++) {
		size_t pl = strlen(vec[i][0]), el = strlen(vec[i][1]);
		CU_ASSERT_EQUAL(mask_b64_encode((const unsigned char *)vec[i][0], pl, enc, sizeof(enc)), (long)el);
		CU_ASSERT_EQUAL(memcmp(enc, vec[i][1], el), 0);
		CU_ASSERT_EQUAL(mask_b64_decode(vec[i][1], el, dec, sizeof(dec)), (long)pl);
		CU_ASSERT_EQUAL(memcmp(dec, vec[i][0], pl), 0);
	}
	CU_ASSERT_EQUAL(mask_b64_decode("Zg=", 3, dec, sizeof(dec)), -1);
	CU_ASSERT_EQUAL(mask_b64_decode("Z===", 4, dec, sizeof(dec)), -1);
	CU_ASSERT_EQUAL(mask_b64_decode("Zg=a", 4, dec, sizeof(dec)), -1);
	CU_ASSERT_EQUAL(mask_b64_decode("Zg==Zg==", 8, dec, sizeof(dec)), -1);
	CU_ASSERT_EQUAL(mask_b64_decode("Zm 9", 4, dec, sizeof(dec)), -1);
	CU_ASSERT_EQUAL(mask_b64_decode("Zm9vYmFy", 8, dec, 5), -1);
	CU_ASSERT_EQUAL(mask_b64_encode((const unsigned char *)"foo", 3, enc, 3), -1);
}

static void test_basic(void)
{
	struct fx f;
	struct mask_outbound ob;
	char user[256], b64[400], want[400];
	unsigned char dec[300];
	uint64_t counts[8] = { 0 };
	size_t total = 0;
	long n, el;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	/* git-style https://x-access-token:SENTINEL@api.github.com/ */
	snprintf(user, sizeof(user), "x-access-token:%s", f.t->value[value_of(f.t, REAL_GH)].sent);
	el = mask_b64_encode((unsigned char *)user, strlen(user), b64, sizeof(b64));
	CU_ASSERT_FATAL(el > 0);
	b64[el] = '\0';
	CU_ASSERT_EQUAL_FATAL(mask_table_outbound(f.t, "api.github.com", 443, true, INJECT_HEADER, &ob), 0);
	CU_ASSERT_EQUAL(mask_basic_replace(ob.set, b64, (size_t)el, counts, &total), 0);
	CU_ASSERT_EQUAL(total, 1);
	CU_ASSERT_EQUAL(counts[value_of(f.t, REAL_GH)], 1);
	CU_ASSERT_EQUAL(strlen(b64), (size_t)el);
	n = mask_b64_decode(b64, (size_t)el, dec, sizeof(dec));
	CU_ASSERT_EQUAL_FATAL(n, (long)strlen(user));
	snprintf(want, sizeof(want), "x-access-token:%s", REAL_GH);
	CU_ASSERT_EQUAL(memcmp(dec, want, (size_t)n), 0);
	/* Elsewhere: untouched (the sentinel is counted, for the 403). */
	el = mask_b64_encode((unsigned char *)user, strlen(user), b64, sizeof(b64));
	b64[el] = '\0';
	strcpy(want, b64);
	CU_ASSERT_EQUAL_FATAL(mask_table_outbound(f.t, "other.example.com", 443, true, INJECT_HEADER, &ob), 0);
	memset(counts, 0, sizeof(counts));
	CU_ASSERT_EQUAL(mask_basic_replace(ob.set, b64, (size_t)el, counts, &total), 0);
	CU_ASSERT_EQUAL(strcmp(b64, want), 0);
	CU_ASSERT_EQUAL(counts[value_of(f.t, REAL_GH)], 1);
	/* Not base64: 1, untouched. */
	strcpy(b64, "not base64!!");
	CU_ASSERT_EQUAL(mask_basic_replace(ob.set, b64, strlen(b64), NULL, &total), 1);
	CU_ASSERT_EQUAL(strcmp(b64, "not base64!!"), 0);
	CU_ASSERT_EQUAL(mask_basic_replace(ob.set, b64, 3, NULL, NULL), 1);
	fx_teardown(&f);
}

static void test_refusals(void)
{
	struct fx f;
	char err[256];
	mask_table_t *t;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	/* The policy was loaded with a long value; at start it is short. */
	setenv("PV_MT_Q", "short6", 1);
	t = mask_table_new(f.p, err, sizeof(err));
	CU_ASSERT_PTR_NULL(t);
	mask_table_free(t);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "PV_MT_Q"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "too short to mask; use mode: deny"));
	CU_ASSERT_PTR_NULL(strstr(err, "short6"));
	setenv("PV_MT_Q", REAL_Q, 1);
	/* A missing file is skipped (the loader warned), not an error. */
	{
		char path[512];
		snprintf(path, sizeof(path), "%s/whole", f.dir);
		CU_ASSERT_EQUAL(unlink(path), 0);
		t = mask_table_new(f.p, err, sizeof(err));
		CU_ASSERT_PTR_NOT_NULL(t);
		if (t != NULL)
			CU_ASSERT_EQUAL(mask_table_cred_count(t), 3);
		mask_table_free(t);
	}
	fx_teardown(&f);
}

/* ------------------------------------------------------------------ */
/* Secret storage                                                       */
/* ------------------------------------------------------------------ */

/* VmLck of this process in kB, from /proc/self/status; -1 if unknown. */
static long vmlck_kb(void)
{
	FILE *fp = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	fclose(fp);
	return kb;
}

static size_t wiped_chunks, dirty_chunks;

/* Chunks are base/secmem.h mappings: their wipe is seen by the hook
 * tests/unit/base/test_secmem.c defines. */
extern void (*secmem_wipe_hook)(const void *p, size_t len);

static void wipe_check(const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != 0) {
			dirty_chunks++;
			return;
		}
	wiped_chunks++;
}

static void test_secrets(void)
{
	mask_secrets_t *s = mask_secrets_new();
	long before = vmlck_kb(), after;
	unsigned char *a, *b, *c;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	a = mask_secrets_alloc(s, 100);
	b = mask_secrets_alloc(s, 0);
	c = mask_secrets_alloc(s, 200 * 1024); /* its own chunk */
	CU_ASSERT_FATAL(a != NULL && b != NULL && c != NULL);
	CU_ASSERT_EQUAL((uintptr_t)a % 16, 0);
	CU_ASSERT_EQUAL((uintptr_t)b % 16, 0);
	CU_ASSERT(b >= a + 100);
	CU_ASSERT_EQUAL(a[99], 0);
	memset(a, 0xA5, 100);
	memset(c, 0x5A, 200 * 1024);
	CU_ASSERT(mask_secrets_mapped(s) >= 264 * 1024);
	CU_ASSERT(mask_secrets_hygiene(s) & MASK_HYG_DONTDUMP);
	after = vmlck_kb();
#if defined(__SANITIZE_ADDRESS__)
	/* ASan intercepts mlock() as a no-op returning 0: VmLck says nothing. */
	(void)before;
	(void)after;
#else
	if (mask_secrets_hygiene(s) & MASK_HYG_LOCKED) {
		CU_ASSERT(after - before >= (long)(mask_secrets_mapped(s) / 1024));
	} else {
		fprintf(stderr, "mask_table: note: mlock refused here (the arena says so)\n");
	}
#endif
	wiped_chunks = dirty_chunks = 0;
	secmem_wipe_hook = wipe_check;
	mask_secrets_free(s);
	secmem_wipe_hook = NULL;
	CU_ASSERT_EQUAL(wiped_chunks, 2);
	CU_ASSERT_EQUAL(dirty_chunks, 0);
#if !defined(__SANITIZE_ADDRESS__)
	if (before >= 0)
		CU_ASSERT_EQUAL(vmlck_kb(), before);
#endif
	mask_secrets_free(NULL);
}

/* The table's arena is wiped at free, real values included. */
static void test_table_wiped(void)
{
	struct fx f;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	CU_ASSERT(mask_secrets_mapped(f.t->sec) > 0);
	wiped_chunks = dirty_chunks = 0;
	secmem_wipe_hook = wipe_check;
	mask_table_free(f.t);
	f.t = NULL;
	secmem_wipe_hook = NULL;
	CU_ASSERT(wiped_chunks >= 1);
	CU_ASSERT_EQUAL(dirty_chunks, 0);
	fx_teardown(&f);
	mask_table_free(NULL);
}

/* A body fed one byte at a time through a stream on the outbound set. */
static void test_body_stream(void)
{
	struct fx f;
	struct mask_outbound ob;
	mask_stream_t *st;
	struct evbuffer *out;
	char body[256];
	size_t vw;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	vw = value_of(f.t, REAL_WHOLE);
	CU_ASSERT_EQUAL_FATAL(mask_table_outbound(f.t, "up.corp.example", 443, true, INJECT_BODY, &ob), 0);
	snprintf(body, sizeof(body), "key=%s&x=%s", f.t->value[vw].sent,
		 f.t->value[value_of(f.t, REAL_GH)].sent);
	st = mask_stream_new(ob.set);
	out = evbuffer_new();
	CU_ASSERT_FATAL(st != NULL && out != NULL);
	for (size_t i = 0; body[i] != '\0'; i++)
		CU_ASSERT_EQUAL(mask_stream_feed(st, body + i, 1, out), 0);
	CU_ASSERT_EQUAL(mask_stream_finish(st, out), 0);
	CU_ASSERT_EQUAL(evbuffer_get_length(out), strlen(body));
	/* The whole-file secret went in; GH (not eligible here) was seen. */
	CU_ASSERT_EQUAL(mask_stream_count(st, vw), 1);
	CU_ASSERT_EQUAL(mask_stream_count(st, value_of(f.t, REAL_GH)), 1);
	CU_ASSERT_EQUAL(ob.inject[vw], 1);
	CU_ASSERT_EQUAL(ob.inject[value_of(f.t, REAL_GH)], 0);
	CU_ASSERT(contains(evbuffer_pullup(out, -1), strlen(body), REAL_WHOLE));
	CU_ASSERT_FALSE(contains(evbuffer_pullup(out, -1), strlen(body), REAL_GH));
	mask_stream_free(st);
	evbuffer_free(out);
	fx_teardown(&f);
}

/* More than 64 credentials: the eligibility bitset spans words. */
static void test_many_creds(void)
{
	enum { N = 70 };
	char *doc = malloc(N * 160 + 256);
	char name[32], val[64], err[256], buf[128];
	size_t off = 0;
	unsigned nerr = 0;
	policy_t *p;
	mask_table_t *t;
	struct mask_outbound ob;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	off += (size_t)sprintf(doc + off, "network:\n  allowedDomains: [\"*.example.com\"]\n"
					  "credentials:\n  envVars:\n");
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "PV_MB_%d", i);
		/* Distinct synthetic values, long enough to mask. */
		snprintf(val, sizeof(val), "tok%02dAbCdEfGhIjKlMnOpQrStUvWx", i);
		setenv(name, val, 1);
		off += (size_t)sprintf(doc + off, "    - {name: %s, mode: mask, injectHosts: [h%d.example.com]}\n",
				       name, i);
	}
	p = policy_load_buffer("many.yaml", doc, off, stderr, &nerr);
	free(doc);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	t = mask_table_new(p, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL(mask_table_cred_count(t), N);
	CU_ASSERT_EQUAL(t->nwords, 2);
	for (int i = 0; i < N; i += 23) {
		snprintf(buf, sizeof(buf), "h%d.example.com", i);
		CU_ASSERT_EQUAL_FATAL(mask_table_outbound(t, buf, 443, true, INJECT_HEADER, &ob), 0);
		for (int k = 0; k < N; k++)
			CU_ASSERT_EQUAL(ob.inject[k], k == i);
		CU_ASSERT_EQUAL(ob.cred[i], (uint32_t)i);
	}
	/* Credential 69 lives in the second word. */
	CU_ASSERT_EQUAL_FATAL(mask_table_outbound(t, "h69.example.com", 443, true, INJECT_HEADER, &ob), 0);
	CU_ASSERT_EQUAL(ob.inject[69], 1);
	CU_ASSERT_EQUAL(ob.inject[5], 0);
	mask_table_free(t);
	policy_free(p);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "PV_MB_%d", i);
		unsetenv(name);
	}
}

static void test_scrub_environ(void)
{
	struct fx f;
	const struct tvalue *v;
	const char *e;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	v = &f.t->value[value_of(f.t, REAL_GH)];
	CU_ASSERT_EQUAL(mask_table_scrub_environ(f.t), 2);
	e = getenv("PV_MT_GH");
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(strlen(e), v->len);
	CU_ASSERT_EQUAL(memcmp(e, v->sent, v->len), 0);
	CU_ASSERT_NOT_EQUAL(strcmp(getenv("PV_MT_Q"), REAL_Q), 0);
	/* Already scrubbed: nothing left to rewrite. */
	CU_ASSERT_EQUAL(mask_table_scrub_environ(f.t), 0);
	/* A child inherits only sentinels. */
	{
		char *out = NULL;
		char *const argv[] = { "sh", "-c", "printf %s \"$PV_MT_GH$PV_MT_Q\"", NULL };
		CU_ASSERT_EQUAL(test_run_capture(argv, &out, NULL, 10000), 0);
		CU_ASSERT_PTR_NOT_NULL(out);
		if (out != NULL)
			assert_no_real(out, strlen(out), "a child's environment");
		free(out);
	}
	fx_teardown(&f);
}

/* A child forked before exec (the sandbox launcher) sees zeros where the
 * real values are, when the kernel knows MADV_WIPEONFORK. */
static void test_wipe_on_fork(void)
{
	struct fx f;
	pid_t pid;
	int st = 0;

	CU_ASSERT_EQUAL_FATAL(fx_setup(&f), 0);
	if ((mask_secrets_hygiene(f.t->sec) & MASK_HYG_WIPEONFORK) == 0) {
		fprintf(stderr, "mask_table: note: no MADV_WIPEONFORK here\n");
		fx_teardown(&f);
		return;
	}
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		for (size_t i = 0; i < f.t->nvalues; i++)
			for (size_t k = 0; k < f.t->value[i].len; k++)
				if (f.t->value[i].real[k] != 0)
					_exit(1);
		_exit(0);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
	CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* The parent still has them. */
	CU_ASSERT_EQUAL(memcmp(f.t->value[value_of(f.t, REAL_GH)].real, REAL_GH, strlen(REAL_GH)), 0);
	fx_teardown(&f);
}

/* Without CAP_IPC_LOCK and with RLIMIT_MEMLOCK 0, mlock is refused: the
 * arena still works and says it is not locked (the caller warns). */
static void test_mlock_refused(void)
{
#if defined(__SANITIZE_ADDRESS__)
	/* ASan's mlock() is a no-op that succeeds: nothing to observe. */
	return;
#else
	pid_t pid = fork();
	int st = 0;

	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		struct rlimit rl = { 0, 0 };
		mask_secrets_t *s;
		void *p;

		if (syscall(SYS_capget, &h, d) != 0)
			_exit(10);
		d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
		if (syscall(SYS_capset, &h, d) != 0 || setrlimit(RLIMIT_MEMLOCK, &rl) != 0)
			_exit(11);
		s = mask_secrets_new();
		if (s == NULL)
			_exit(12);
		p = mask_secrets_alloc(s, 64);
		if (p == NULL)
			_exit(13);
		if (mask_secrets_hygiene(s) & MASK_HYG_LOCKED)
			_exit(14);
		if ((mask_secrets_hygiene(s) & MASK_HYG_DONTDUMP) == 0)
			_exit(15);
		mask_secrets_free(s);
		_exit(0);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
	CU_ASSERT(WIFEXITED(st));
	CU_ASSERT_EQUAL(WEXITSTATUS(st), 0);
#endif
}

TEST_REGISTRAR(register_mask_table)
{
	CU_pSuite s = test_suite("mask_table", NULL, NULL);

	test_add(s, "built from a policy: creds, values, sentinels", test_build);
	test_add(s, "env pairs: sentinels only, exact", test_env_lines);
	test_add(s, "a value split at its '&', ';' and '=': secret pieces only, anywhere, '+' as a space (review40b)",
		 test_split_pieces);
	test_add(s, "sentinel copies of files byte for byte", test_files);
	test_add(s, "sentinel copies: other forms of real values re-masked (b18)", test_files_other_forms);
	test_add(s, "outbound eligibility: host, injectIn, TLS, cache", test_outbound);
	test_add(s, "outbound: the last host's memo answers as a fresh lookup", test_outbound_memo);
	test_add(s, "find_real: the remask pre-check answers as the detect set", test_find_real_precheck);
	test_add(s, "inbound remask", test_inbound);
	test_add(s, "inbound remask: a multi-line value of 6 and 12 KiB joined onto one line, and rewrapped",
		 test_remask_big_joined);
	test_add(s, "base64", test_b64);
	test_add(s, "encoded forms of real values found (hex, base64 in either alphabet at every offset, UTF-16, case, %25, parts)",
		 test_encoded_real);
	test_add(s, "escaped, quoted in pieces, rot13 and reversed values found; ordinary escapes and a vendor's "
		    "other tokens left",
		 test_encoded_escapes);
	test_add(s, "Authorization: Basic substitution", test_basic);
	test_add(s, "refusals: short at start, missing file", test_refusals);
	test_add(s, "secret arena: locked, aligned, wiped", test_secrets);
	test_add(s, "table arena wiped at free", test_table_wiped);
	test_add(s, "body streamed a byte at a time", test_body_stream);
	test_add(s, "more than 64 credentials", test_many_creds);
	test_add(s, "encoded-value search: a connection string's public keys and values", test_encoded_connstr);
	test_add(s, "encoded-value search: escape fragments cut at every length, 1 MB of backslashes", test_encoded_fuzz);
	test_add(s, "encoded-value search: a private key's public structure and public key left, its secret found",
		 test_encoded_keys);
	test_add(s, "encoded-value search: a whole file masked, another account's file and a .env naming its "
		    "variables left, its secrets found",
		 test_encoded_whole_files);
	test_add(s, "encoded-value search: a whole file masked with NAME=VALUE lines, another account's file left, its "
		    "values found",
		 test_encoded_whole_files_assign);
	test_add(s, "encoded-value search: a whole file masked holding a lower-case secret in short groups, found; "
		    "names, hosts, paths and targets left",
		 test_encoded_whole_files_lower_groups);
	test_add(s, "encoded-value search: a whole file holding a key masked (a service account's JSON), another "
		    "account's file and its public URLs left, its key's secret parts found",
		 test_encoded_whole_files_keys);
	test_add(s, "encoded-value search: a kubeconfig masked (base64 of PEM blocks), another user's kubeconfig and the "
		    "CA certificate left, its key's secret parts found",
		 test_encoded_kubeconfig);
	test_add(s, "encoded-value search: FIDO keys of OpenSSH (ed25519, ECDSA) masked, another and its .pub left, its hex found",
		 test_encoded_sk_keys);
	test_add(s, "encoded-value search: an OpenPGP secret key block masked, its public key and another key left, "
		    "its secret parts found",
		 test_encoded_pgp_keys);
	test_add(s, "encoded-value search: an OpenPGP block of secret subkeys masked (a gnu-dummy primary), its public "
		    "key and another such block left, its subkey's secret found",
		 test_encoded_pgp_stub);
	test_add(s, "encoded-value search: a whole file holding an SSH public key masked (a PuTTY key), another and its "
		    "public key left, its private line found",
		 test_encoded_whole_files_pubkeys);
	test_add(s, "remask: values of 6 to 16 KiB in base64, in JSON (PHP's too) and with CRLF (pieces of 8 KiB found broken)",
		 test_remask_big_forms);
	test_add(s, "remask: seven values of 16 KiB still build a table (the largest's big forms left out past the sets' bound, named)",
		 test_big_forms_bound);
	test_add(s, "wide forms: UTF-16/32 of ASCII values re-masked, none for a non-ASCII value", test_wide_forms);
	test_add(s, "wide forms: many values, the wide forms go first (table built, outbound forms kept)", test_wide_many_values);
	test_add(s, "wide forms: non-ASCII values and values over 1 KiB (pieces) in UTF-16/32 re-masked", test_wide_more);
	test_add(s, "wide forms: the base64 forms of a value's UTF-16LE re-masked (its JSON, \\u0000, not)", test_wide_encoded);
	test_add(s, "matcher timing: ns/byte on text, binary, UTF-16 text, 1/10/100 values (PV_MT_TIMING=1 prints)", test_matcher_timing);
	test_add(s, "environment scrubbed to sentinels", test_scrub_environ);
	test_add(s, "real values wiped in a forked child", test_wipe_on_fork);
	test_add(s, "mlock refused: flagged, still works", test_mlock_refused);
}
