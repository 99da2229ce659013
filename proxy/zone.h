/*
 * zone.h - a second heap for what OpenSSL allocates on the upstream side
 * of a connection (private to proxy/; docs/architecture.md "Memory per
 * tunnel: a burst and a ramp").
 *
 * Why: the two halves of a terminated tunnel live for different times.
 * The upstream half (its SSL object, certificate chain, session, cipher
 * contexts) goes at upstreamKeepAliveMs; the client half stays as long as
 * the client keeps the connection. In one heap, when many tunnels open at
 * once, the halves interleave page by page, and when the upstream halves
 * go, what they free lies in pages that still hold client objects: the
 * kernel cannot take it back. Here the upstream half's small allocations
 * come from pages of their own, and a page whose last object goes is
 * returned.
 *
 * A zone is a slab heap in one private anonymous mapping reserved at
 * start: spans of 1 to 4 pages of 4 KiB, each cut into slots of one
 * size class (16 to 8,192 bytes); larger requests (record buffers) are
 * not the zone's. An emptied page goes to a
 * small cache (ZONE_WARM_PAGES, no system call to take it back), beyond
 * that it is returned with MADV_DONTNEED, as zone_trim() returns the
 * cache. Thread-safe (one mutex; allocations and frees take it once the
 * process has a second thread, trims and the fork handlers always; frees
 * may come from any thread).
 *
 * The process zone: zone_install() makes OpenSSL and libevent allocate
 * through it (CRYPTO_set_mem_functions(), event_set_mem_functions()); each
 * thread chooses with zone_select() whether their small allocations go
 * to the zone or to malloc(). The
 * one piece of process-wide state of proxy/ besides the event bases: the
 * allocator is process-wide by nature, like malloc's own.
 */
#ifndef PASSAVANT_PROXY_ZONE_H
#define PASSAVANT_PROXY_ZONE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/attrib.h"

/* The page of a zone; the largest request a zone serves. */
#define ZONE_PAGE_BYTES 4096
#define ZONE_SMALL_MAX_BYTES 8192
/* Emptied pages kept resident for reuse before they are returned. */
#define ZONE_WARM_PAGES 256
/* The process zone's reservation: address space, PROT_NONE until used
 * (1 MiB at a time); about 20,000 upstream halves at once. Beyond, the
 * zone says full and OpenSSL and libevent get malloc(). */
#define ZONE_PROCESS_BYTES ((size_t)256 << 20)

struct zone;

struct zone_stats {
	size_t objects;  /* live allocations */
	size_t pages;    /* pages of spans holding at least one */
	size_t warm;     /* pages of empty spans still resident (the cache) */
	size_t touched;  /* pages ever handed out */
};

/* A zone reserving bytes (rounded up to pages); NULL with errno set when
 * the mapping is refused. Freed with zone_free(). Setup code. */
struct zone *zone_new(size_t bytes) WUNRES;
void zone_free(struct zone *z);

/* n bytes (1 to ZONE_SMALL_MAX_BYTES), 16-byte aligned; NULL when n is
 * out of that range or the zone is full (the caller uses malloc()). */
void *zone_alloc(struct zone *z, size_t n) NONNULL(1) WUNRES;

/* Whether p lies in z (then only zone_dealloc() may free it). */
bool zone_owns(const struct zone *z, const void *p) NONNULL(1);

/* Frees p, which z owns; a pointer that is not a slot's start aborts. */
void zone_dealloc(struct zone *z, void *p) NONNULL(1, 2);

/* Bytes usable at p (its slot's size), which z owns. */
size_t zone_usable(const struct zone *z, const void *p) NONNULL(1, 2);

/* Returns the cached empty pages to the kernel (MADV_DONTNEED). */
void zone_trim(struct zone *z) NONNULL(1);

void zone_stats(struct zone *z, struct zone_stats *st) NONNULL(1, 2);

/*
 * Makes the process zone OpenSSL's and libevent's allocator. Must run
 * before anything allocates through either (first thing in main()).
 * Returns 0, or -1 when OpenSSL refuses (it already allocated) or the
 * zone cannot be reserved: then both keep malloc() and everything works
 * as before. Memory libevent hands to its caller to free() (none of
 * which passavant uses: evbuffer_readln() and the like) would have to be
 * freed with libevent's own allocator.
 */
int zone_install(void) WUNRES;

/* From now on the calling thread's OpenSSL and libevent allocations of at most
 * ZONE_SMALL_MAX_BYTES go to the process zone (true) or to malloc()
 * (false). Returns the previous choice. Any thread, any time. */
bool zone_select(bool zone);

/* zone_trim() and zone_stats() of the process zone (all zero without). */
void zone_process_trim(void);
void zone_process_stats(struct zone_stats *st) NONNULL(1);

#endif
