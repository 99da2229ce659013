/*
 * leafcache.c - bounded LRU cache of forged leaves, keyed by normalised
 * host, each entry a server SSL_CTX.
 *
 * Sharing is by OpenSSL's own reference count on the SSL_CTX: the cache
 * holds one reference per entry, each caller takes its own, and every SSL
 * made from the context holds another. Evicting an entry only drops the
 * cache's reference, so live connections are never disturbed.
 *
 * The proxy's event loops share one cache (one forge per host, not one
 * per loop): a lock guards it, held for a lookup or an insertion only
 * (forging happens outside it), and a lookup takes the caller's
 * reference under it, so an eviction on another loop cannot free the
 * context in between.
 *
 * Layout: a chained hash table for lookup plus a doubly linked list in
 * recency order (head = most recent). Lookups are O(1) on average; an
 * adversary choosing host names (with an allow-any policy) can at worst
 * make chains as long as the whole cache, which the capacity bounds.
 */
#include "ca_int.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct leafcache_entry {
	struct leafcache_entry *hnext; /**< next in the same hash bucket */
	struct leafcache_entry *prev;  /**< more recently used neighbour */
	struct leafcache_entry *next;  /**< less recently used neighbour */
	SSL_CTX *ctx;                  /**< the cache's reference */
	uint32_t hash;                 /**< hash of key */
	char key[CA_HOST_MAX + 1];     /**< normalised host */
};

struct leafcache {
	struct leafcache_entry **buckets; /**< nbuckets chains */
	size_t nbuckets;                  /**< a power of two */
	size_t cap;                       /**< most entries kept */
	size_t count;                     /**< entries now */
	size_t evictions;                 /**< entries dropped for space */
	struct leafcache_entry *head;     /**< most recently used */
	struct leafcache_entry *tail;     /**< least recently used */
	pthread_mutex_t lock;             /**< guards everything above */
};

/* FNV-1a, 32-bit. Keys are short host names. */
static uint32_t key_hash(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key != '\0'; key++) {
		h ^= (unsigned char)*key;
		h *= 16777619u;
	}
	return h;
}

struct leafcache *leafcache_new(size_t cap)
{
	struct leafcache *lc;
	size_t nb = 16;

	if (cap == 0)
		return NULL;
	/* About two buckets per entry, capped so a huge cap cannot
	 * overflow the allocation size. */
	while (nb < cap * 2 && nb < ((size_t)1 << 24))
		nb <<= 1;
	lc = calloc(1, sizeof(*lc));
	if (lc == NULL)
		return NULL;
	lc->buckets = calloc(nb, sizeof(*lc->buckets));
	if (lc->buckets == NULL) {
		free(lc);
		return NULL;
	}
	if (pthread_mutex_init(&lc->lock, NULL) != 0) {
		free(lc->buckets);
		free(lc);
		return NULL;
	}
	lc->nbuckets = nb;
	lc->cap = cap;
	return lc;
}

void leafcache_free(struct leafcache *lc)
{
	struct leafcache_entry *e, *next;

	if (lc == NULL)
		return;
	for (e = lc->head; e != NULL; e = next) {
		next = e->next;
		SSL_CTX_free(e->ctx);
		free(e);
	}
	free(lc->buckets);
	(void)pthread_mutex_destroy(&lc->lock);
	free(lc);
}

static void list_unlink(struct leafcache *lc, struct leafcache_entry *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		lc->head = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	else
		lc->tail = e->prev;
	e->prev = e->next = NULL;
}

static void list_push_front(struct leafcache *lc, struct leafcache_entry *e)
{
	e->prev = NULL;
	e->next = lc->head;
	if (lc->head != NULL)
		lc->head->prev = e;
	lc->head = e;
	if (lc->tail == NULL)
		lc->tail = e;
}

/* Removes e from its hash chain (it must be there). */
static void bucket_unlink(struct leafcache *lc, struct leafcache_entry *e)
{
	struct leafcache_entry **pp = &lc->buckets[e->hash & (lc->nbuckets - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	e->hnext = NULL;
}

/* The entry for key, or NULL. Under the lock. */
static struct leafcache_entry *find(struct leafcache *lc, const char *key, uint32_t h)
{
	struct leafcache_entry *e;

	for (e = lc->buckets[h & (lc->nbuckets - 1)]; e != NULL; e = e->hnext)
		if (e->hash == h && strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

SSL_CTX *leafcache_get(struct leafcache *lc, const char *key)
{
	uint32_t h = key_hash(key);
	struct leafcache_entry *e;
	SSL_CTX *ctx = NULL;

	(void)pthread_mutex_lock(&lc->lock);
	e = find(lc, key, h);
	if (e != NULL && SSL_CTX_up_ref(e->ctx) == 1) {
		if (lc->head != e) {
			list_unlink(lc, e);
			list_push_front(lc, e);
		}
		ctx = e->ctx;
	}
	(void)pthread_mutex_unlock(&lc->lock);
	return ctx;
}

int leafcache_put(struct leafcache *lc, const char *key, SSL_CTX *ctx)
{
	struct leafcache_entry *e, *n;
	size_t klen = strlen(key), b;
	uint32_t h = key_hash(key);

	if (klen > CA_HOST_MAX)
		return -1;
	/* Allocated before the lock: nothing slow is done under it. */
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return -1;
	memcpy(n->key, key, klen + 1);
	n->hash = h;
	n->ctx = ctx;
	(void)pthread_mutex_lock(&lc->lock);
	/* Another loop forged the same host meanwhile: keep its entry and
	 * drop the reference we were given. */
	if (find(lc, key, h) != NULL) {
		(void)pthread_mutex_unlock(&lc->lock);
		free(n);
		SSL_CTX_free(ctx);
		return 0;
	}
	/* Make room first: drop the least recently used entry. */
	e = NULL;
	if (lc->count >= lc->cap && lc->tail != NULL) {
		e = lc->tail;
		list_unlink(lc, e);
		bucket_unlink(lc, e);
		lc->count--;
		lc->evictions++;
	}
	b = h & (lc->nbuckets - 1);
	n->hnext = lc->buckets[b];
	lc->buckets[b] = n;
	list_push_front(lc, n);
	lc->count++;
	(void)pthread_mutex_unlock(&lc->lock);
	if (e != NULL) {
		SSL_CTX_free(e->ctx);
		free(e);
	}
	return 0;
}

size_t leafcache_count(struct leafcache *lc)
{
	size_t n;

	(void)pthread_mutex_lock(&lc->lock);
	n = lc->count;
	(void)pthread_mutex_unlock(&lc->lock);
	return n;
}

size_t leafcache_evictions(struct leafcache *lc)
{
	size_t n;

	(void)pthread_mutex_lock(&lc->lock);
	n = lc->evictions;
	(void)pthread_mutex_unlock(&lc->lock);
	return n;
}
