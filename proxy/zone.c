/*
 * zone.c - the upstream side's heap (zone.h): slab pages in one reserved
 * mapping, and the OpenSSL allocator that chooses between it and malloc().
 */
#include "zone.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>

#include <openssl/crypto.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* Under ASan a free slot is poisoned: a use after free, or a second free,
 * is reported with the stacks ASan keeps. */
#define ZONE_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define ZONE_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define ZONE_IS_POISONED(p) (__asan_address_is_poisoned(p) != 0)
/* Freed slots wait poisoned in a ring this long before they can be handed
 * out again, as ASan's own quarantine does for malloc(): a slot reused at
 * once would hide a later use of the old pointer (round 11's review: the
 * upstream side's OpenSSL and libevent objects live here). */
#define ZONE_ASAN_QUARANTINE 4096
#else
#define ZONE_POISON(p, n) ((void)(p), (void)(n))
#define ZONE_UNPOISON(p, n) ((void)(p), (void)(n))
#endif
#include <event2/event.h>

/* Slot sizes, multiples of 16 (alignment), ZONE_SMALL_MAX_BYTES last,
 * and the pages of the span each class is cut from. Steps of at most
 * about a quarter keep the slack per slot small; the spans of the larger
 * classes keep it under 10% (OpenSSL 3.0's SSL object, 7,608 bytes, takes
 * a span of 2 pages). */
static const struct {
	uint16_t size;
	uint8_t pages;
} zone_classes[] = {
	{16, 1},   {32, 1},   {48, 1},   {64, 1},   {80, 1},   {96, 1},   {112, 1},  {128, 1},
	{160, 1},  {192, 1},  {224, 1},  {256, 1},  {320, 1},  {384, 1},  {448, 1},  {512, 1},
	{640, 1},  {816, 1},  {1024, 1}, {1360, 1}, {2048, 1}, {2720, 2}, {4096, 1}, {5456, 4},
	{8192, 2},
};
#define ZONE_CLASSES (sizeof(zone_classes) / sizeof(zone_classes[0]))
/* Pages made writable at a time (their bookkeeping: one page of meta). */
#define ZONE_COMMIT_PAGES 256
/* Written at byte 8 of a free slot (bytes 0-1 link the next): a free of a
 * slot that bears it is checked against the free list (a second free). */
static const uint64_t zone_free_mark = 0x7a6f6e6566726565ULL; /* "zonefree" */
#define ZONE_NONE (-1)
/* Span lengths in pages: 1, 2 and 4 (an empty span is kept whole). */
#define ZONE_SPAN_KINDS 3

/* Where a span is: which list holds it. */
enum zspan_where {
	ZS_FRESH = 0, /* never handed out (beyond z->top) */
	ZS_PARTIAL,   /* in use, with a free slot: in its class's list */
	ZS_FULL,      /* in use, every slot taken: in no list */
	ZS_WARM,      /* empty, resident: in its length's warm list */
	ZS_COLD,      /* empty, returned to the kernel: in its length's cold list */
	ZS_RETURNING, /* empty, being returned outside the lock: in no list */
};

/* One page's bookkeeping, kept apart from the pages (a span is all
 * slots). Only a span's first page's entry is used, except lead. */
struct zpage {
	uint16_t live;      /* slots in use */
	uint16_t carved;    /* slots handed out at least once, in order */
	uint16_t free_head; /* 1 + the first free slot (its first 2 bytes link the next), 0: none */
	uint8_t cls;        /* size class while in use */
	uint8_t where;      /* enum zspan_where */
	uint8_t kind;       /* span length: 1 << kind pages */
	uint8_t lead;       /* pages back to the span's first page */
	int32_t prev, next; /* links in the list that holds the span */
};

struct zone {
	unsigned char *base;                   /* the pages; npages * ZONE_PAGE_BYTES reserved */
	struct zpage *meta;                    /* one per page, in its own reservation */
	size_t npages, meta_bytes;             /* reserved sizes */
	size_t top;                            /* pages below it were handed out once */
	size_t committed;                      /* pages below it (and their meta) are writable */
	int32_t partial[ZONE_CLASSES];         /* per class: spans with a free slot */
	int32_t warm[ZONE_SPAN_KINDS];         /* empty spans, resident, per length */
	int32_t cold[ZONE_SPAN_KINDS];         /* empty spans, returned, per length */
	size_t nwarm, npages_used, objects;    /* pages warm, pages in spans in use, slots in use */
	uint8_t class_of[ZONE_SMALL_MAX_BYTES / 16 + 1]; /* (n + 15) / 16 -> class */
	uint16_t slots[ZONE_CLASSES];          /* per class: slots in one span */
	uint32_t recip[ZONE_CLASSES];          /* per class: 2^32 / size + 1 (slot_of()) */
	pthread_mutex_t lock;
#if defined(__SANITIZE_ADDRESS__)
	void *held[ZONE_ASAN_QUARANTINE];      /* freed, poisoned, not yet reusable */
	size_t held_first, held_n;
#endif
};

#if defined(__SANITIZE_ADDRESS__)
static void release_held(struct zone *z, bool all, bool held);
#endif

/*
 * The lock, unless the process has a single thread: glibc's own test for
 * its malloc's locks (__libc_single_threaded, set false before a second
 * thread starts). No other thread can then be in the zone, and none can
 * start while this one is in it. With one event loop the proxy is a
 * single thread, and the lock pair was about a third of each allocation's
 * cost (docs/architecture.md "The upstream zone"). This relies on threads
 * coming only from pthread_create()/thrd_create() (never a raw
 * clone(CLONE_VM)) and on no signal handler allocating through OpenSSL or
 * libevent. zone_trim(), zone_stats() and the fork handlers always lock.
 * glibc 2.32 or later (<sys/single_threaded.h>). Returns whether it was
 * taken, for zone_unlock().
 */
static bool zone_lock(struct zone *z)
{
	if (__libc_single_threaded)
		return false;
	(void)pthread_mutex_lock(&z->lock);
	return true;
}

static void zone_unlock(struct zone *z, bool held)
{
	if (held)
		(void)pthread_mutex_unlock(&z->lock);
}

static unsigned char *page_addr(const struct zone *z, int32_t pg)
{
	return z->base + (size_t)pg * ZONE_PAGE_BYTES;
}

static unsigned kind_of(unsigned pages)
{
	return pages == 1 ? 0 : pages == 2 ? 1 : 2;
}

/* Doubly linked lists threaded through meta (prev/next page numbers). */
static void list_push(struct zone *z, int32_t *head, int32_t pg)
{
	struct zpage *m = &z->meta[pg];

	m->prev = ZONE_NONE;
	m->next = *head;
	if (*head != ZONE_NONE)
		z->meta[*head].prev = pg;
	*head = pg;
}

static void list_remove(struct zone *z, int32_t *head, int32_t pg)
{
	struct zpage *m = &z->meta[pg];

	if (m->prev != ZONE_NONE)
		z->meta[m->prev].next = m->next;
	else
		*head = m->next;
	if (m->next != ZONE_NONE)
		z->meta[m->next].prev = m->prev;
	m->prev = m->next = ZONE_NONE;
}

static int32_t list_pop(struct zone *z, int32_t *head)
{
	int32_t pg = *head;

	if (pg != ZONE_NONE)
		list_remove(z, head, pg);
	return pg;
}

static void span_return(struct zone *z, int32_t pg, unsigned pages)
{
	/* MADV_DONTNEED on private anonymous pages: the next touch gets a
	 * zero page. Refused only for a bad range, which this is not; a
	 * refusal would only leave the pages resident. */
	(void)madvise(page_addr(z, pg), (size_t)pages * ZONE_PAGE_BYTES, MADV_DONTNEED);
}

/* Makes the pages below want (and their bookkeeping) writable; the rest
 * of the reservation stays PROT_NONE, so only what is used counts against
 * the commit limit. 0 or -1. */
static int commit_to(struct zone *z, size_t want)
{
	size_t page = ZONE_PAGE_BYTES, mfrom, mto;

	want = (want + ZONE_COMMIT_PAGES - 1) / ZONE_COMMIT_PAGES * ZONE_COMMIT_PAGES;
	if (want > z->npages)
		want = z->npages;
	if (want <= z->committed)
		return 0;
	mfrom = z->committed * sizeof(struct zpage) / page * page;
	mto = (want * sizeof(struct zpage) + page - 1) / page * page;
	if (mto > z->meta_bytes)
		mto = z->meta_bytes;
	if (mprotect((unsigned char *)z->meta + mfrom, mto - mfrom, PROT_READ | PROT_WRITE) < 0 ||
	    mprotect(z->base + z->committed * page, (want - z->committed) * page, PROT_READ | PROT_WRITE) < 0)
		return -1;
	z->committed = want;
	return 0;
}

/* An empty span for class cls: warm first (no fault), then cold, then
 * fresh pages; ZONE_NONE when the reservation is used up. */
static int32_t span_take(struct zone *z, unsigned cls)
{
	unsigned pages = zone_classes[cls].pages, kind = kind_of(pages);
	int32_t pg = list_pop(z, &z->warm[kind]);

	if (pg != ZONE_NONE)
		z->nwarm -= pages;
	else
		pg = list_pop(z, &z->cold[kind]);
	if (pg == ZONE_NONE) {
		if (z->npages - z->top < pages || commit_to(z, z->top + pages) < 0)
			return ZONE_NONE;
		pg = (int32_t)z->top;
		z->top += pages;
		for (unsigned i = 1; i < pages; i++)
			z->meta[pg + (int32_t)i].lead = (uint8_t)i;
	}
	z->meta[pg] = (struct zpage){.cls = (uint8_t)cls, .where = ZS_PARTIAL, .kind = (uint8_t)kind};
	list_push(z, &z->partial[cls], pg);
	z->npages_used += pages;
	return pg;
}

/*
 * A span's last slot went: cached (ZONE_NONE), or taken out of every list
 * and returned, to be handed back to the kernel by the caller after it
 * let go of the lock (span_returned()): an madvise() under the lock would
 * hold up every loop's allocations.
 */
static int32_t span_give(struct zone *z, int32_t pg)
{
	struct zpage *m = &z->meta[pg];
	unsigned pages = 1u << m->kind;

	list_remove(z, &z->partial[m->cls], pg);
	z->npages_used -= pages;
	if (z->nwarm + pages <= ZONE_WARM_PAGES) {
		m->where = ZS_WARM;
		list_push(z, &z->warm[m->kind], pg);
		z->nwarm += pages;
		return ZONE_NONE;
	}
	m->where = ZS_RETURNING;
	return pg;
}

/* Returns the span pg (ZS_RETURNING: no one else touches it) to the
 * kernel, then files it as cold. Called without the lock. */
static void span_returned(struct zone *z, int32_t pg)
{
	bool held;

	span_return(z, pg, 1u << z->meta[pg].kind);
	held = zone_lock(z);
	z->meta[pg].where = ZS_COLD;
	list_push(z, &z->cold[z->meta[pg].kind], pg);
	zone_unlock(z, held);
}

struct zone *zone_new(size_t bytes)
{
	struct zone *z;
	size_t npages = (bytes + ZONE_PAGE_BYTES - 1) / ZONE_PAGE_BYTES;
	unsigned cls = 0;
	int rc;

	/* Page numbers are int32_t. */
	if (npages == 0 || npages > INT32_MAX / 2) {
		errno = EINVAL;
		return NULL;
	}
	z = calloc(1, sizeof(*z));
	if (z == NULL)
		return NULL;
	z->npages = npages;
	z->meta_bytes = npages * sizeof(struct zpage);
	/* Reserved, not committed: commit_to() makes what is used writable. */
	z->base = mmap(NULL, npages * ZONE_PAGE_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (z->base == MAP_FAILED)
		goto fail_base;
	z->meta = mmap(NULL, z->meta_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (z->meta == MAP_FAILED)
		goto fail_meta;
	rc = pthread_mutex_init(&z->lock, NULL);
	if (rc != 0) {
		errno = rc;
		goto fail_lock;
	}
	for (size_t i = 0; i < ZONE_CLASSES; i++)
		z->partial[i] = ZONE_NONE;
	for (size_t i = 0; i < ZONE_SPAN_KINDS; i++)
		z->warm[i] = z->cold[i] = ZONE_NONE;
	for (size_t u = 0; u <= ZONE_SMALL_MAX_BYTES / 16; u++) {
		while (zone_classes[cls].size < u * 16)
			cls++;
		z->class_of[u] = (uint8_t)cls;
	}
	for (size_t i = 0; i < ZONE_CLASSES; i++) {
		z->slots[i] = (uint16_t)((size_t)zone_classes[i].pages * ZONE_PAGE_BYTES / zone_classes[i].size);
		z->recip[i] = (uint32_t)((UINT64_C(1) << 32) / zone_classes[i].size + 1);
	}
	return z;

fail_lock:
	(void)munmap(z->meta, z->meta_bytes);
fail_meta:
	(void)munmap(z->base, npages * ZONE_PAGE_BYTES);
fail_base:
	free(z);
	return NULL;
}

void zone_free(struct zone *z)
{
	if (z == NULL)
		return;
	(void)pthread_mutex_destroy(&z->lock);
	/* ASan keeps the shadow of an unmapped range: whatever is mapped
	 * there next must not find free slots' poison. */
	ZONE_UNPOISON(z->base, z->committed * ZONE_PAGE_BYTES);
	(void)munmap(z->meta, z->meta_bytes);
	(void)munmap(z->base, z->npages * ZONE_PAGE_BYTES);
	free(z);
}

void *zone_alloc(struct zone *z, size_t n)
{
	unsigned cls;
	int32_t pg;
	struct zpage *m;
	unsigned char *p;
	size_t size;
	bool held;

	if (n == 0 || n > ZONE_SMALL_MAX_BYTES)
		return NULL;
	cls = z->class_of[(n + 15) / 16];
	size = zone_classes[cls].size;
	held = zone_lock(z);
	pg = z->partial[cls];
	if (pg == ZONE_NONE)
		pg = span_take(z, cls);
#if defined(__SANITIZE_ADDRESS__)
	if (pg == ZONE_NONE && z->held_n > 0) {
		/* Full: what waits in the ring makes room, as it would
		 * have without the ring. */
		release_held(z, true, held);
		held = zone_lock(z);
		pg = z->partial[cls];
		if (pg == ZONE_NONE)
			pg = span_take(z, cls);
	}
#endif
	if (pg == ZONE_NONE) {
		zone_unlock(z, held);
		return NULL;
	}
	m = &z->meta[pg];
	if (m->free_head != 0) {
		p = page_addr(z, pg) + (size_t)(m->free_head - 1) * size;
		ZONE_UNPOISON(p, size);
		memcpy(&m->free_head, p, sizeof(m->free_head));
		memset(p + 8, 0, sizeof(zone_free_mark));
	} else {
		p = page_addr(z, pg) + (size_t)m->carved * size;
		/* A span taken again may have been cut for another class:
		 * a free mark of its old slots may lie where this slot's
		 * is, and a free that finds one walks the free list
		 * (freed_before()): clear it, as for a reused slot. */
		ZONE_UNPOISON(p, size);
		memset(p + 8, 0, sizeof(zone_free_mark));
		m->carved++;
	}
	m->live++;
	z->objects++;
	if (m->live == z->slots[cls]) {
		list_remove(z, &z->partial[cls], pg);
		m->where = ZS_FULL;
	}
	zone_unlock(z, held);
	return p;
}

bool zone_owns(const struct zone *z, const void *p)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)z->base;

	return a >= b && a - b < z->npages * ZONE_PAGE_BYTES;
}

/* The span of p (its first page) and its slot index; aborts on a pointer
 * that is not a slot's start in a span in use (a corrupted or foreign
 * free). */
static int32_t slot_of(const struct zone *z, const void *p, size_t *slot)
{
	size_t off = (size_t)((const unsigned char *)p - z->base);
	int32_t pg = (int32_t)(off / ZONE_PAGE_BYTES);
	const struct zpage *m;
	size_t size, in, q;

	if (off / ZONE_PAGE_BYTES >= z->top)
		goto bad;
	pg -= z->meta[pg].lead;
	m = &z->meta[pg];
	if (m->where != ZS_PARTIAL && m->where != ZS_FULL)
		goto bad;
	size = zone_classes[m->cls].size;
	in = off - (size_t)pg * ZONE_PAGE_BYTES;
	/* in / size without a division, exact: recip exceeds 2^32 / size by
	 * at most 1, so in * recip / 2^32 exceeds in / size by at most
	 * in / 2^32 < 2^-18 (in is below a span's 16 KiB), less than the
	 * 1 / size by which a fraction of in / size stays below the next
	 * whole number. */
	q = (size_t)(((uint64_t)in * z->recip[m->cls]) >> 32);
	if (in != q * size || q >= m->carved)
		goto bad;
	*slot = q;
	return pg;
bad:
	(void)fprintf(stderr, "passavant: zone: free of %p, which is no allocation (heap corrupted)\n", p);
	abort();
}

/* Whether slot is on pg's free list already (a second free). Only asked
 * when the slot bears the free mark, which live data may by chance. */
static bool on_free_list(const struct zone *z, int32_t pg, size_t slot) UNUSED;
static bool on_free_list(const struct zone *z, int32_t pg, size_t slot)
{
	const struct zpage *m = &z->meta[pg];
	size_t size = zone_classes[m->cls].size, n = 0;
	uint16_t at = m->free_head;

	while (at != 0 && n++ <= m->carved) {
		if ((size_t)(at - 1) == slot)
			return true;
		memcpy(&at, page_addr(z, pg) + (size_t)(at - 1) * size, sizeof(at));
	}
	return false;
}

/* Whether p (slot of pg) is free already: under ASan its poison says so
 * exactly (the free list's links are poisoned too); else its mark, then
 * the list. */
static bool freed_before(const struct zone *z, int32_t pg, size_t slot, const void *p)
{
#if defined(__SANITIZE_ADDRESS__)
	(void)z;
	(void)pg;
	(void)slot;
	return ZONE_IS_POISONED(p);
#else
	return memcmp((const unsigned char *)p + 8, &zone_free_mark, sizeof(zone_free_mark)) == 0 &&
	       on_free_list(z, pg, slot);
#endif
}

/* Puts the slot p back on its span's free list, under the lock; the span
 * to return when it emptied, or ZONE_NONE. */
static int32_t release_slot(struct zone *z, void *p)
{
	size_t slot, size;
	int32_t pg, back = ZONE_NONE;
	struct zpage *m;
	uint16_t link;

	pg = slot_of(z, p, &slot);
	m = &z->meta[pg];
	size = zone_classes[m->cls].size;
	if (freed_before(z, pg, slot, p)) {
		(void)fprintf(stderr, "passavant: zone: %p freed twice (heap corrupted)\n", p);
		abort();
	}
	link = m->free_head;
	memcpy(p, &link, sizeof(link));
	memcpy((unsigned char *)p + 8, &zone_free_mark, sizeof(zone_free_mark));
	ZONE_POISON(p, size);
	m->free_head = (uint16_t)(slot + 1);
	if (m->where == ZS_FULL) {
		m->where = ZS_PARTIAL;
		list_push(z, &z->partial[m->cls], pg);
	}
	m->live--;
	z->objects--;
	if (m->live == 0)
		back = span_give(z, pg);
	return back;
}

#if defined(__SANITIZE_ADDRESS__)
/* Releases the slots held in the ring (all, or the oldest when full),
 * under the lock; spans that emptied are returned one at a time. */
static void release_held(struct zone *z, bool all, bool held)
{
	while (z->held_n > 0 && (all || z->held_n == ZONE_ASAN_QUARANTINE)) {
		void *q = z->held[z->held_first];
		int32_t back;
		size_t slot;
		int32_t pg = slot_of(z, q, &slot);

		z->held_first = (z->held_first + 1) % ZONE_ASAN_QUARANTINE;
		z->held_n--;
		ZONE_UNPOISON(q, zone_classes[z->meta[pg].cls].size);
		back = release_slot(z, q);
		if (back != ZONE_NONE) {
			zone_unlock(z, held);
			span_returned(z, back);
			held = zone_lock(z);
		}
	}
	zone_unlock(z, held);
}
#endif

void zone_dealloc(struct zone *z, void *p)
{
	int32_t back;
	bool held;

	held = zone_lock(z);
#if defined(__SANITIZE_ADDRESS__)
	{
		size_t slot;
		int32_t pg = slot_of(z, p, &slot);

		if (ZONE_IS_POISONED(p)) {
			(void)fprintf(stderr, "passavant: zone: %p freed twice (heap corrupted)\n", p);
			abort();
		}
		ZONE_POISON(p, zone_classes[z->meta[pg].cls].size);
		z->held[(z->held_first + z->held_n) % ZONE_ASAN_QUARANTINE] = p;
		z->held_n++;
		release_held(z, false, held);
		return;
	}
#endif
	back = release_slot(z, p);
	zone_unlock(z, held);
	if (back != ZONE_NONE)
		span_returned(z, back);
}

size_t zone_usable(const struct zone *z, const void *p)
{
	size_t pg = (size_t)((const unsigned char *)p - z->base) / ZONE_PAGE_BYTES;

	/* A live slot's span keeps its class until it empties. */
	return zone_classes[z->meta[pg - z->meta[pg].lead].cls].size;
}

void zone_trim(struct zone *z)
{
	int32_t pg, chain = ZONE_NONE, next;

	/* Out of every list under the lock, chained through their own
	 * links (ZS_RETURNING: no one else touches them), returned without
	 * it, filed as cold under it again. */
#if defined(__SANITIZE_ADDRESS__)
	(void)pthread_mutex_lock(&z->lock);
	release_held(z, true, true);
#endif
	(void)pthread_mutex_lock(&z->lock);
	for (unsigned k = 0; k < ZONE_SPAN_KINDS; k++)
		while ((pg = list_pop(z, &z->warm[k])) != ZONE_NONE) {
			z->meta[pg].where = ZS_RETURNING;
			z->meta[pg].next = chain;
			chain = pg;
		}
	z->nwarm = 0;
	(void)pthread_mutex_unlock(&z->lock);
	for (pg = chain; pg != ZONE_NONE; pg = next) {
		next = z->meta[pg].next;
		z->meta[pg].next = ZONE_NONE;
		span_returned(z, pg);
	}
}

void zone_stats(struct zone *z, struct zone_stats *st)
{
#if defined(__SANITIZE_ADDRESS__)
	/* What waits in the ring counts as freed. */
	(void)pthread_mutex_lock(&z->lock);
	release_held(z, true, true);
#endif
	(void)pthread_mutex_lock(&z->lock);
	st->objects = z->objects;
	st->pages = z->npages_used;
	st->warm = z->nwarm;
	st->touched = z->top;
	(void)pthread_mutex_unlock(&z->lock);
}

/* ---------------------------------------------------------------- process */

/* Set once by zone_install(), before any other thread exists; read-only
 * after. */
static struct zone *proc_zone;
/* Whether threads may select it: the fork handlers are in place. */
static bool proc_usable;
/* The calling thread's choice (zone_select()). */
static __thread bool proc_selected;

static void *hook_malloc(size_t n, const char *file, int line)
{
	void *p;

	(void)file;
	(void)line;
	/* As OpenSSL's own CRYPTO_malloc(): nothing for 0 bytes. */
	if (n == 0)
		return NULL;
	if (proc_selected && n <= ZONE_SMALL_MAX_BYTES) {
		p = zone_alloc(proc_zone, n);
		if (p != NULL)
			return p;
	}
	return malloc(n);
}

static void hook_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	if (p != NULL && zone_owns(proc_zone, p))
		zone_dealloc(proc_zone, p);
	else
		free(p);
}

static void *hook_realloc(void *p, size_t n, const char *file, int line)
{
	size_t have;
	void *q;

	if (p == NULL)
		return hook_malloc(n, file, line);
	if (n == 0) {
		hook_free(p, file, line);
		return NULL;
	}
	if (!zone_owns(proc_zone, p))
		return realloc(p, n);
	have = zone_usable(proc_zone, p);
	if (n <= have)
		return p;
	q = hook_malloc(n, file, line);
	if (q == NULL)
		return NULL;
	memcpy(q, p, have);
	zone_dealloc(proc_zone, p);
	return q;
}

/* libevent's allocator: the same choice. The upstream's bufferevent,
 * its events and buffers are the upstream half's too (made while the
 * zone is selected: tls_wrap_upstream(), the upstream's BIO callbacks). */
static void *ev_malloc(size_t n)
{
	return hook_malloc(n, NULL, 0);
}

static void ev_free(void *p)
{
	hook_free(p, NULL, 0);
}

static void *ev_realloc(void *p, size_t n)
{
	return hook_realloc(p, n, NULL, 0);
}

/* A child forked while another thread held the lock would find it held
 * forever: the lock is taken around fork() and released on both sides. */
static void atfork_prepare(void)
{
	(void)pthread_mutex_lock(&proc_zone->lock);
}

static void atfork_release(void)
{
	(void)pthread_mutex_unlock(&proc_zone->lock);
}

int zone_install(void)
{
	struct zone *z;

	if (proc_zone != NULL)
		return 0;
	z = zone_new(ZONE_PROCESS_BYTES);
	if (z == NULL)
		return -1;
	proc_zone = z;
	if (CRYPTO_set_mem_functions(hook_malloc, hook_realloc, hook_free) != 1) {
		proc_zone = NULL;
		zone_free(z);
		return -1;
	}
	/* Before anything allocates through libevent too (no return value:
	 * libevent takes it whenever it is called). */
	event_set_mem_functions(ev_malloc, ev_realloc, ev_free);
	if (pthread_atfork(atfork_prepare, atfork_release, atfork_release) != 0) {
		/* The hooks stay (they cannot be taken back) and free what
		 * the zone holds, which is nothing: no thread may select a
		 * zone whose lock is not safe across fork(). */
		return -1;
	}
	proc_usable = true;
	return 0;
}

bool zone_select(bool zone)
{
	bool was = proc_selected;

	proc_selected = zone && proc_usable;
	return was;
}

void zone_process_trim(void)
{
	if (proc_zone != NULL)
		zone_trim(proc_zone);
}

void zone_process_stats(struct zone_stats *st)
{
	if (proc_zone == NULL) {
		*st = (struct zone_stats){0};
		return;
	}
	zone_stats(proc_zone, st);
}
