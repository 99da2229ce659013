/*
 * test_zone.c - proxy/zone: every size from 1 to ZONE_SMALL_MAX_BYTES gets
 * an aligned slot of its own that holds its bytes; a zone that empties
 * gives its pages back (they read zero again); a full zone says so and
 * serves again after a free (spans keep their length); a pointer that is
 * no slot, or a slot freed twice, aborts; two
 * threads allocating and freeing at once leave nothing behind; the
 * OpenSSL hooks send small requests of a selecting thread to the zone,
 * the rest to malloc(), and realloc() moves between the two whole.
 *
 * Includes zone.c to reach the hooks (this file is the only one that
 * does).
 */
#include "../../../proxy/zone.c"

#include "../../support/testlib.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every size: aligned, owned, usable at least as asked, and its bytes
 * stay its own while all the others are written. */
static void test_sizes(void)
{
	struct zone *z = zone_new(64u << 20);
	static unsigned char *p[ZONE_SMALL_MAX_BYTES + 1];
	struct zone_stats st;
	size_t bad = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	CU_ASSERT_PTR_NULL(zone_alloc(z, 0));
	CU_ASSERT_PTR_NULL(zone_alloc(z, ZONE_SMALL_MAX_BYTES + 1));
	for (size_t n = 1; n <= ZONE_SMALL_MAX_BYTES; n++) {
		p[n] = zone_alloc(z, n);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p[n]);
		CU_ASSERT_EQUAL((uintptr_t)p[n] % 16, 0);
		CU_ASSERT(zone_owns(z, p[n]));
		CU_ASSERT(zone_usable(z, p[n]) >= n);
		memset(p[n], (int)(n & 0xff), zone_usable(z, p[n]));
	}
	for (size_t n = 1; n <= ZONE_SMALL_MAX_BYTES; n++)
		for (size_t i = 0; i < zone_usable(z, p[n]); i++)
			bad += p[n][i] != (unsigned char)(n & 0xff);
	CU_ASSERT_EQUAL(bad, 0);
	zone_stats(z, &st);
	CU_ASSERT_EQUAL(st.objects, ZONE_SMALL_MAX_BYTES);
	CU_ASSERT(!zone_owns(z, &st));
	for (size_t n = 1; n <= ZONE_SMALL_MAX_BYTES; n += 2)
		zone_dealloc(z, p[n]);
	for (size_t n = 2; n <= ZONE_SMALL_MAX_BYTES; n += 2)
		zone_dealloc(z, p[n]);
	zone_stats(z, &st);
	CU_ASSERT_EQUAL(st.objects, 0);
	CU_ASSERT_EQUAL(st.pages, 0);
	zone_free(z);
}

/* Pages whose objects all went are cached (ZONE_WARM_PAGES at most),
 * then returned: what was written there reads zero once taken again. */
static void test_pages_return(void)
{
	struct zone *z = zone_new(64u << 20);
	enum { N = 20000 };
	static void *p[N];
	struct zone_stats st;
	unsigned char *q;
	size_t nonzero = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	for (size_t i = 0; i < N; i++) {
		p[i] = zone_alloc(z, 16 + (i * 37) % 700);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p[i]);
		memset(p[i], 0xa5, 16);
	}
	zone_stats(z, &st);
	CU_ASSERT(st.pages > 2 * ZONE_WARM_PAGES);
	for (size_t i = 0; i < N; i++)
		zone_dealloc(z, p[i]);
	zone_stats(z, &st);
	CU_ASSERT_EQUAL(st.objects, 0);
	CU_ASSERT_EQUAL(st.pages, 0);
	CU_ASSERT(st.warm > 0 && st.warm <= ZONE_WARM_PAGES);
	zone_trim(z);
	zone_stats(z, &st);
	CU_ASSERT_EQUAL(st.warm, 0);
	/* Every span is cold now: a new slot lies in a returned page. */
	for (size_t i = 0; i < 64; i++) {
		q = zone_alloc(z, 16 + (i * 37) % 700);
		CU_ASSERT_PTR_NOT_NULL_FATAL(q);
		for (size_t k = 0; k < 16; k++)
			nonzero += q[k] != 0;
		p[i] = q;
	}
	CU_ASSERT_EQUAL(nonzero, 0);
	for (size_t i = 0; i < 64; i++)
		zone_dealloc(z, p[i]);
	zone_free(z);
}

/* Long-lived objects allocated among short-lived ones of another class:
 * once the short-lived go, only the pages the long-lived fill stay in use
 * (a class's pages hold that class only; full pages become partial and
 * then empty as their slots go). */
static void test_interleaved(void)
{
	struct zone *z = zone_new(64u << 20);
	enum { N = 4000 };
	static void *keep[N], *drop[N * 8];
	struct zone_stats st;

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	for (size_t i = 0; i < N; i++) {
		for (size_t k = 0; k < 8; k++)
			drop[i * 8 + k] = zone_alloc(z, 200);
		keep[i] = zone_alloc(z, 100);
		CU_ASSERT_PTR_NOT_NULL_FATAL(keep[i]);
	}
	for (size_t i = 0; i < N * 8; i++)
		zone_dealloc(z, drop[i]);
	zone_stats(z, &st);
	CU_ASSERT_EQUAL(st.objects, N);
	/* 100 bytes: class 112, 36 per page. */
	CU_ASSERT_EQUAL(st.pages, (N + 35) / 36);
	for (size_t i = 0; i < N; i++)
		zone_dealloc(z, keep[i]);
	zone_free(z);
}

/* A zone of 4 pages: full after its slots, NULL then; a free makes room. */
static void test_full(void)
{
	struct zone *z = zone_new(4 * ZONE_PAGE_BYTES);
	void *p[64], *q;
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	while (n < 64 && (p[n] = zone_alloc(z, 2048)) != NULL)
		n++;
	CU_ASSERT_EQUAL(n, 8);
	/* No span of 2 pages is left for 8,192 bytes either. */
	CU_ASSERT_PTR_NULL(zone_alloc(z, 8000));
	zone_dealloc(z, p[3]);
	q = zone_alloc(z, 2000);
	CU_ASSERT_PTR_EQUAL(q, p[3]);
	for (size_t i = 0; i < n; i++)
		zone_dealloc(z, i == 3 ? q : p[i]);
	/* All free, but spans keep their length: the 1-page ones serve
	 * 1-page classes again, none becomes a 2-page span. */
	CU_ASSERT_PTR_NULL(zone_alloc(z, 8000));
	q = zone_alloc(z, 16);
	CU_ASSERT_PTR_NOT_NULL(q);
	if (q != NULL)
		zone_dealloc(z, q);
	zone_free(z);
	CU_ASSERT_PTR_NULL(zone_new(0));
}

/*
 * A freed slot is not handed out again at once under ASan: it waits,
 * poisoned, so that a use of the old pointer is reported rather than
 * hidden behind the next object (round 11's review). Without ASan the
 * slot is reused first (the cache-friendly order). A use of it is caught
 * in a child: ASan ends the process with an error.
 */
static void use_after_free(struct zone *z)
{
	volatile unsigned char *p = zone_alloc(z, 100);

	zone_dealloc(z, (void *)p);
	for (int i = 0; i < 200; i++)
		if (zone_alloc(z, 100) == NULL)
			_exit(4);
	p[5] = 1;
}

static void test_freed_slot_waits(void)
{
	struct zone *z = zone_new(64 * ZONE_PAGE_BYTES);
	void *p, *q[200];
	bool reused = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	p = zone_alloc(z, 100);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	zone_dealloc(z, p);
	for (int i = 0; i < 200; i++) {
		q[i] = zone_alloc(z, 100);
		reused = reused || q[i] == p;
	}
#if defined(__SANITIZE_ADDRESS__)
	CU_ASSERT(!reused);
	{
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			if (freopen("/dev/null", "w", stderr) == NULL)
				_exit(3);
			use_after_free(z);
			_exit(0);
		}
		CU_ASSERT_FATAL(pid > 0 && waitpid(pid, &st, 0) == pid);
		CU_ASSERT(!(WIFEXITED(st) && WEXITSTATUS(st) == 0));
	}
#else
	CU_ASSERT(reused);
	(void)use_after_free;
#endif
	for (int i = 0; i < 200; i++)
		if (q[i] != NULL)
			zone_dealloc(z, q[i]);
	zone_free(z);
}

/* Runs fn in a child; whether it died of SIGABRT. */
static bool aborts(void (*fn)(struct zone *), struct zone *z)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		/* The message goes to stderr: keep the test output clean. */
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(3);
		fn(z);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void free_inside(struct zone *z)
{
	unsigned char *p = zone_alloc(z, 64);

	zone_dealloc(z, p + 16);
}

static void free_twice_empty(struct zone *z)
{
	void *p = zone_alloc(z, 64);

	zone_dealloc(z, p);
	zone_dealloc(z, p); /* its page went empty with the first */
}

static void free_twice_live(struct zone *z)
{
	void *a = zone_alloc(z, 64), *b = zone_alloc(z, 64);

	zone_dealloc(z, a);
	zone_dealloc(z, a); /* b keeps the page in use */
	zone_dealloc(z, b);
}

static void free_untouched(struct zone *z)
{
	zone_dealloc(z, z->base + 100 * ZONE_PAGE_BYTES);
}

/* Live data that happens to bear the free mark frees as any other. */
static void test_mark_in_data(void)
{
	struct zone *z = zone_new(1u << 20);
	unsigned char *a, *b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	a = zone_alloc(z, 32);
	b = zone_alloc(z, 32);
	CU_ASSERT_FATAL(a != NULL && b != NULL);
	memcpy(a + 8, &zone_free_mark, sizeof(zone_free_mark));
	zone_dealloc(z, b);
	memcpy(b = zone_alloc(z, 32), "x", 1);
	memcpy(b + 8, &zone_free_mark, sizeof(zone_free_mark));
	zone_dealloc(z, a);
	zone_dealloc(z, b);
	{
		struct zone_stats st;

		zone_stats(z, &st);
		CU_ASSERT_EQUAL(st.objects, 0);
	}
	zone_free(z);
}

static void test_bad_free(void)
{
	struct zone *z = zone_new(1u << 20);

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	CU_ASSERT(aborts(free_inside, z));
	CU_ASSERT(aborts(free_twice_empty, z));
	CU_ASSERT(aborts(free_twice_live, z));
	CU_ASSERT(aborts(free_untouched, z));
	zone_free(z);
}

struct churn {
	struct zone *z;
	unsigned seed;
	size_t failed;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	void *p[256] = {0};

	for (size_t i = 0; i < 200000; i++) {
		size_t k = rand_r(&c->seed) % 256;

		if (p[k] != NULL) {
			zone_dealloc(c->z, p[k]);
			p[k] = NULL;
		} else {
			p[k] = zone_alloc(c->z, 1 + rand_r(&c->seed) % ZONE_SMALL_MAX_BYTES);
			c->failed += p[k] == NULL;
			if (p[k] != NULL)
				memset(p[k], 0x5a, 8);
		}
	}
	for (size_t k = 0; k < 256; k++)
		if (p[k] != NULL)
			zone_dealloc(c->z, p[k]);
	return NULL;
}

/* Two threads allocating and freeing at once. */
static void test_threads(void)
{
	struct zone *z = zone_new(256u << 20);
	struct churn a = {z, 1, 0}, b = {z, 2, 0};
	struct zone_stats st;
	pthread_t ta, tb;

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&ta, NULL, churn_main, &a), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&tb, NULL, churn_main, &b), 0);
	CU_ASSERT_EQUAL(pthread_join(ta, NULL), 0);
	CU_ASSERT_EQUAL(pthread_join(tb, NULL), 0);
	CU_ASSERT_EQUAL(a.failed + b.failed, 0);
	zone_stats(z, &st);
	CU_ASSERT_EQUAL(st.objects, 0);
	CU_ASSERT_EQUAL(st.pages, 0);
	zone_free(z);
}

/* The hooks: a selecting thread's small requests go to the zone, large
 * ones and a non-selecting thread's to malloc(); realloc() keeps the
 * bytes whichever way it moves; 0 bytes is NULL, as OpenSSL's own. */
static void test_hooks(void)
{
	struct zone *z = zone_new(16u << 20);
	unsigned char *a, *b, *c;

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	proc_zone = z;
	proc_usable = true;
	CU_ASSERT_EQUAL(zone_select(true), false);
	CU_ASSERT_PTR_NULL(hook_malloc(0, __FILE__, __LINE__));
	a = hook_malloc(100, __FILE__, __LINE__);
	b = hook_malloc(ZONE_SMALL_MAX_BYTES + 1, __FILE__, __LINE__);
	CU_ASSERT_FATAL(a != NULL && b != NULL);
	CU_ASSERT(zone_owns(z, a));
	CU_ASSERT(!zone_owns(z, b));
	memset(a, 0x11, 100);
	/* Grows within its slot (112): the same pointer. */
	CU_ASSERT_PTR_EQUAL(hook_realloc(a, 110, __FILE__, __LINE__), a);
	/* Beyond the zone's largest: to malloc(), bytes kept. */
	c = hook_realloc(a, 20000, __FILE__, __LINE__);
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT(!zone_owns(z, c));
	CU_ASSERT(c[0] == 0x11 && c[99] == 0x11);
	hook_free(c, __FILE__, __LINE__);
	CU_ASSERT_EQUAL(zone_select(false), true);
	a = hook_malloc(100, __FILE__, __LINE__);
	CU_ASSERT_FATAL(a != NULL);
	CU_ASSERT(!zone_owns(z, a));
	memset(a, 0x22, 100);
	(void)zone_select(true);
	/* A malloc() block grows in malloc(). */
	a = hook_realloc(a, 300, __FILE__, __LINE__);
	CU_ASSERT_FATAL(a != NULL);
	CU_ASSERT(!zone_owns(z, a));
	CU_ASSERT(a[99] == 0x22);
	hook_free(a, __FILE__, __LINE__);
	/* A zone block moves to a larger slot whole. */
	a = hook_malloc(40, __FILE__, __LINE__);
	CU_ASSERT_FATAL(a != NULL && zone_owns(z, a));
	memset(a, 0x33, 40);
	c = hook_realloc(a, 1000, __FILE__, __LINE__);
	CU_ASSERT_FATAL(c != NULL && zone_owns(z, c));
	CU_ASSERT(c[0] == 0x33 && c[39] == 0x33);
	CU_ASSERT_PTR_NULL(hook_realloc(c, 0, __FILE__, __LINE__));
	hook_free(b, __FILE__, __LINE__);
	hook_free(NULL, __FILE__, __LINE__);
	(void)zone_select(false);
	{
		struct zone_stats st;

		zone_process_stats(&st);
		CU_ASSERT_EQUAL(st.objects, 0);
	}
	proc_usable = false;
	proc_zone = NULL;
	/* Without a usable zone, selecting selects nothing. */
	(void)zone_select(true);
	CU_ASSERT_EQUAL(zone_select(false), false);
	zone_free(z);
}

/* A full process zone: the hooks fall back to malloc(), and the blocks
 * they gave from either heap are freed and moved where they belong. */
static void test_hooks_full(void)
{
	struct zone *z = zone_new(2 * ZONE_PAGE_BYTES);
	void *p[64];
	size_t in_zone = 0, n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	proc_zone = z;
	proc_usable = true;
	(void)zone_select(true);
	for (n = 0; n < 64; n++) {
		p[n] = hook_malloc(1000, __FILE__, __LINE__);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p[n]);
		in_zone += zone_owns(z, p[n]);
	}
	/* 1,000 bytes: class 1024, 4 per page, 2 pages. */
	CU_ASSERT_EQUAL(in_zone, 8);
	/* A zone block grown past the zone's room moves to malloc(). */
	p[0] = hook_realloc(p[0], 1500, __FILE__, __LINE__);
	CU_ASSERT_FATAL(p[0] != NULL);
	for (n = 0; n < 64; n++)
		hook_free(p[n], __FILE__, __LINE__);
	{
		struct zone_stats st;

		zone_stats(z, &st);
		CU_ASSERT_EQUAL(st.objects, 0);
	}
	(void)zone_select(false);
	proc_usable = false;
	proc_zone = NULL;
	zone_free(z);
}

TEST_REGISTRAR(register_proxy_zone)
{
	CU_pSuite s = test_suite("proxy_zone", NULL, NULL);

	test_add(s, "every size: aligned, owned, its bytes its own", test_sizes);
	test_add(s, "emptied pages are cached, then returned (read zero)", test_pages_return);
	test_add(s, "another class's short-lived objects leave no page behind", test_interleaved);
	test_add(s, "a full zone says so and serves again after a free", test_full);
	test_add(s, "a freed slot waits before reuse under ASan (a use after free is seen)", test_freed_slot_waits);
	test_add(s, "a pointer that is no slot, or a slot freed twice, aborts", test_bad_free);
	test_add(s, "live data bearing the free mark frees as any other", test_mark_in_data);
	test_add(s, "two threads at once leave nothing behind", test_threads);
	test_add(s, "OpenSSL hooks: zone or malloc, realloc keeps the bytes", test_hooks);
	test_add(s, "a full zone: the hooks fall back to malloc()", test_hooks_full);
}
