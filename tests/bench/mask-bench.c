/*
 * mask-bench - throughput of the mask stream (mask/stream.c).
 *
 *   mask-bench [MIB]     (default 64)
 *
 * Feeds MIB MiB of data in 16 KiB chunks through mask_stream_feed() and
 * mask_stream_feed_buffer() into an evbuffer that is drained after each
 * chunk, as the proxy's output would be, with 1 and with 10 sentinel-like
 * patterns; and, as the baseline, plain evbuffer_add() of the same chunks.
 * Data sets: "nomatch" is random printable ASCII (so pattern first bytes
 * and short partial matches occur all the time, but no pattern), "matches"
 * is the same with one pattern planted every 4 KiB across chunk edges,
 * "bytes63" is pv-upstream's /bytes pattern (the 62 alphanumerics and a
 * newline, repeated: "gh" every 63 bytes) and "english" is words of
 * English text (with "right", "through", ...). The "ghp" set is the one the
 * proxy remasks a response with for one GitHub token: the 40-byte ghp_
 * value compiled with MASK_SET_PERCENT. The ghp cases also run through
 * mask_replace_buf() on each chunk.
 * Best of 3 runs; prints one line per case with MB/s (10^6 bytes/s) and
 * exits 0. Not part of `make test`.
 *
 *   mask-bench --table [NPEM]   (default 2)
 *
 * The cost of the forms a credential table compiles (mask/tablesets.c):
 * a table of 20 masked variables, 20 - NPEM of them 48-byte keys drawn
 * from letters, digits and the bytes URL encoders treat differently
 * ("/+=:@;,!*$&'()?#[]~" and space), NPEM of them 4 KiB PEM keys. Prints
 * the table's build time (best of 3), its number of real-value forms, the
 * longest pattern, the resident memory the table adds, and the inbound
 * (remask) stream's throughput on English text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "../../mask/mask.h"
#include "../../policy/policy.h"

#define CHUNK_BYTES 16384
#define NPAT_MAX 10
#define PAT_LEN 40

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sentinel-shaped patterns with realistic type prefixes. */
static void make_patterns(unsigned char from[NPAT_MAX][PAT_LEN], unsigned char to[NPAT_MAX][PAT_LEN])
{
	static const char *prefixes[NPAT_MAX] = { "ghp_", "sk-proj-", "xoxb-", "AKIA", "glpat-",
						  "npm_", "hf_", "AIza", "pypi-", "github_pat_" };
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int i = 0; i < NPAT_MAX; i++) {
		size_t pl = strlen(prefixes[i]);
		memcpy(from[i], prefixes[i], pl);
		memcpy(to[i], prefixes[i], pl);
		for (size_t j = pl; j < PAT_LEN; j++) {
			from[i][j] = (unsigned char)alnum[next_rand() % 62];
			to[i][j] = (unsigned char)alnum[next_rand() % 62];
		}
	}
}

/* English-like text: words separated by spaces, punctuation, newlines. */
static void make_english(unsigned char *p, size_t len)
{
	static const char *words[] = {
		"the", "right", "through", "night", "thought", "high", "enough", "light",
		"of", "and", "a", "to", "in", "is", "you", "that", "it", "he", "was", "for",
		"on", "are", "as", "with", "his", "they", "at", "be", "this", "have", "from",
		"or", "one", "had", "by", "word", "but", "not", "what", "all", "were", "we",
		"when", "your", "can", "said", "there", "use", "an", "each", "which", "she",
		"do", "how", "their", "if", "will", "up", "other", "about", "out", "many",
		"then", "them", "these", "so", "some", "her", "would", "make", "like", "him",
		"into", "time", "has", "look", "two", "more", "write", "go", "see", "number",
		"no", "way", "could", "people", "my", "than", "first", "water", "been",
		"call", "who", "oil", "its", "now", "find", "long", "down", "day", "did",
		"get", "come", "made", "may", "part", "although", "laugh", "weight", "fight",
		"daughter", "brought", "eight", "tough", "sigh", "straight", "GitHub",
	};
	size_t i = 0;

	while (i < len) {
		const char *w = words[next_rand() % (sizeof(words) / sizeof(words[0]))];
		size_t wl = strlen(w);
		uint64_t r = next_rand() % 20;

		for (size_t k = 0; k < wl && i < len; k++)
			p[i++] = (unsigned char)w[k];
		if (i < len)
			p[i++] = r == 0 ? '\n' : r == 1 ? '.' : r == 2 ? ',' : ' ';
	}
}

/* One timed pass; mode 0: baseline copy, 1: feed, 2: feed_buffer,
 * 3: mask_replace_buf() on each chunk. */
static double run_once(const mask_set_t *set, const unsigned char *data, size_t len, int mode,
		       uint64_t *replaced)
{
	struct evbuffer *out = evbuffer_new(), *in = evbuffer_new();
	mask_stream_t *st = set != NULL ? mask_stream_new(set) : NULL;
	double t0, t1;

	if (out == NULL || in == NULL || (set != NULL && st == NULL)) {
		fprintf(stderr, "mask-bench: out of memory\n");
		exit(1);
	}
	t0 = now_s();
	for (size_t off = 0; off < len; off += CHUNK_BYTES) {
		size_t n = len - off < CHUNK_BYTES ? len - off : CHUNK_BYTES;
		int rc;

		if (mode == 0) {
			rc = evbuffer_add(out, data + off, n);
		} else if (mode == 1) {
			rc = mask_stream_feed(st, data + off, n, out);
		} else if (mode == 3) {
			rc = mask_replace_buf(set, data + off, n, out, NULL, NULL);
		} else {
			/* as a socket read would leave it: one chain per read */
			rc = evbuffer_add(in, data + off, n);
			if (rc == 0)
				rc = mask_stream_feed_buffer(st, in, n, out);
		}
		if (rc != 0 || evbuffer_drain(out, evbuffer_get_length(out)) != 0) {
			fprintf(stderr, "mask-bench: append failed\n");
			exit(1);
		}
	}
	if (st != NULL && mask_stream_finish(st, out) != 0) {
		fprintf(stderr, "mask-bench: finish failed\n");
		exit(1);
	}
	t1 = now_s();
	if (replaced != NULL)
		*replaced = st != NULL ? mask_stream_total(st) : 0;
	mask_stream_free(st);
	evbuffer_free(out);
	evbuffer_free(in);
	return t1 - t0;
}

static void bench(const char *name, const mask_set_t *set, const unsigned char *data, size_t len, int mode)
{
	double best = 1e9;
	uint64_t replaced = 0;

	for (int r = 0; r < 3; r++) {
		double t = run_once(set, data, len, mode, &replaced);
		if (t < best)
			best = t;
	}
	printf("%-34s %8.0f MB/s  replaced=%llu\n", name, (double)len / best / 1e6,
	       (unsigned long long)replaced);
}

/* VmRSS of this process in KiB, or 0. */
static long rss_kib(void)
{
	char line[256];
	long kib = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

/* A random PEM private key of 4084 bytes (64-character lines): just
 * under the 4 KiB up to which a value gets its JSON and base64 forms. */
static void make_pem(char *out, size_t cap)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = (size_t)snprintf(out, cap, "-----BEGIN PRIVATE KEY-----\n");

	for (size_t i = 0; i < 3966 && n + 80 < cap; i++) {
		out[n++] = b64[next_rand() % 64];
		if (i % 64 == 63)
			out[n++] = '\n';
	}
	n += (size_t)snprintf(out + n, cap - n, "==\n-----END PRIVATE KEY-----\n");
}

/* mask-bench --table [NPEM]: see the header. */
static int table_bench(int npem, const unsigned char *english, size_t len)
{
	static const char opt[] = "/+=:@;,!*$&'()?#[]~ ";
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char doc[8192], name[32], val[8192];
	size_t dl;
	unsigned nerr = 0;
	policy_t *p;
	double best = 1e9;
	long rss0, rss1 = 0;
	size_t nforms = 0, maxlen = 0;
	mask_table_t *keep = NULL;

	dl = (size_t)snprintf(doc, sizeof(doc), "network:\n  allowedDomains: [api.example.com]\n"
						"credentials:\n  envVars:\n");
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "PV_BENCH_K%02d", i);
		if (i < npem) {
			make_pem(val, sizeof(val));
		} else {
			/* letters and digits, with one of each optional byte
			 * at random places among them */
			for (size_t j = 0; j < 48; j++)
				val[j] = alnum[next_rand() % 62];
			for (size_t j = 0; j + 1 < sizeof(opt); j++)
				val[4 + (j * 7 + (size_t)i) % 42] = opt[j];
			val[48] = '\0';
		}
		if (setenv(name, val, 1) != 0)
			return 1;
		dl += (size_t)snprintf(doc + dl, sizeof(doc) - dl,
				       "    - {name: %s, mode: mask, injectHosts: [api.example.com]}\n", name);
	}
	p = policy_load_buffer("bench.yaml", doc, dl, stderr, &nerr);
	if (p == NULL) {
		fprintf(stderr, "mask-bench: policy refused\n");
		return 1;
	}
	rss0 = rss_kib();
	for (int r = 0; r < 3; r++) {
		char err[256];
		double t0 = now_s(), t;
		mask_table_t *t1 = mask_table_new(p, err, sizeof(err));

		t = now_s() - t0;
		if (t1 == NULL) {
			fprintf(stderr, "mask-bench: table: %s\n", err);
			policy_free(p);
			return 1;
		}
		if (t < best)
			best = t;
		if (keep == NULL) {
			keep = t1;
			rss1 = rss_kib();
			nforms = mask_table_form_count(t1);
			maxlen = mask_set_maxlen(mask_table_inbound_set(t1));
		} else {
			mask_table_free(t1);
		}
	}
	printf("mask-bench --table: 20 values (%d PEM of ~4 KiB, %d keys of 48 bytes with 20 optional bytes)\n",
	       npem, 20 - npem);
	printf("table build (best of 3)             %8.1f ms\n", best * 1e3);
	printf("real-value forms (remask pairs)     %8zu\n", nforms);
	printf("longest pattern                     %8zu bytes\n", maxlen);
	printf("resident memory of one table        %8ld KiB\n", rss1 - rss0);
	bench("feed remask set english", mask_table_inbound_set(keep), english, len, 1);
	mask_table_free(keep);
	policy_free(p);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char from[NPAT_MAX][PAT_LEN], to[NPAT_MAX][PAT_LEN];
	struct mask_pair pairs[NPAT_MAX];
	bool table = argc > 1 && strcmp(argv[1], "--table") == 0;
	size_t mib = argc > 1 && !table ? strtoul(argv[1], NULL, 10) : 64, len;
	unsigned char *nomatch, *matches, *bytes63, *english;
	static const char alnum63[] =
		"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n";
	mask_set_t *set1, *set10, *setghp;
	enum mask_set_result res;
	char name[64];

	if (mib == 0 || mib > 4096) {
		fprintf(stderr, "usage: mask-bench [MIB]\n");
		return 2;
	}
	len = mib << 20;
	nomatch = malloc(len);
	matches = malloc(len);
	bytes63 = malloc(len);
	english = malloc(len);
	if (nomatch == NULL || matches == NULL || bytes63 == NULL || english == NULL) {
		fprintf(stderr, "mask-bench: out of memory\n");
		return 1;
	}
	make_patterns(from, to);
	for (int i = 0; i < NPAT_MAX; i++)
		pairs[i] = (struct mask_pair){ .from = from[i], .from_len = PAT_LEN, .to = to[i], .to_len = PAT_LEN, .pct = MASK_PCT_ALL, .gaps = true };
	for (size_t i = 0; i < len; i++)
		nomatch[i] = (unsigned char)(' ' + next_rand() % 95);
	memcpy(matches, nomatch, len);
	for (size_t off = 4096, k = 0; off + PAT_LEN < len; off += 4096, k++)
		memcpy(matches + off - k % PAT_LEN, from[k % NPAT_MAX], PAT_LEN);

	for (size_t i = 0; i < len; i++)
		bytes63[i] = (unsigned char)alnum63[i % 63];
	make_english(english, len);
	if (table) {
		int rc = table_bench(argc > 2 ? atoi(argv[2]) : 2, english, len);

		free(nomatch);
		free(matches);
		free(bytes63);
		free(english);
		return rc;
	}

	set1 = mask_set_new(pairs, 1, MASK_SET_NO_MLOCK, &res);
	set10 = set1 != NULL ? mask_set_new(pairs, NPAT_MAX, MASK_SET_NO_MLOCK, &res) : NULL;
	/* pairs[0] is the ghp_ token */
	setghp = set10 != NULL ? mask_set_new(pairs, 1, MASK_SET_NO_MLOCK | MASK_SET_PERCENT, &res)
			       : NULL;
	if (setghp == NULL) {
		fprintf(stderr, "mask-bench: %s\n", mask_set_strerror(res));
		return 1;
	}
	printf("mask-bench: %zu MiB in %d KiB chunks, patterns of %d bytes, best of 3\n", mib,
	       CHUNK_BYTES / 1024, PAT_LEN);
	bench("baseline evbuffer_add", NULL, nomatch, len, 0);
	for (int m = 1; m <= 2; m++) {
		const char *api = m == 1 ? "feed" : "feed_buffer";

		snprintf(name, sizeof(name), "%s  1 pattern  nomatch", api);
		bench(name, set1, nomatch, len, m);
		snprintf(name, sizeof(name), "%s 10 patterns nomatch", api);
		bench(name, set10, nomatch, len, m);
		snprintf(name, sizeof(name), "%s 10 patterns matches", api);
		bench(name, set10, matches, len, m);
		snprintf(name, sizeof(name), "%s 10 patterns english", api);
		bench(name, set10, english, len, m);
	}
	for (int m = 1; m <= 3; m++) {
		const char *api = m == 1 ? "feed" : m == 2 ? "feed_buffer" : "replace_buf";

		snprintf(name, sizeof(name), "%s ghp+pct bytes63", api);
		bench(name, setghp, bytes63, len, m);
		snprintf(name, sizeof(name), "%s ghp+pct english", api);
		bench(name, setghp, english, len, m);
	}
	mask_set_free(set1);
	mask_set_free(set10);
	mask_set_free(setghp);
	free(nomatch);
	free(matches);
	free(bytes63);
	free(english);
	return 0;
}
