/*
 * secret.c - storage for real values and sentinels (SPEC §4.4).
 *
 * An append-only arena of base/secmem.h mappings: each chunk is excluded
 * from core dumps, from a forked child that has not exec'd yet, and locked
 * in RAM when the kernel allows it; freeing wipes every chunk before
 * unmapping it. There are deliberately no helpers that
 * print, format or compare the contents: callers own that and must not
 * log it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/secmem.h"
#include "mask.h"

/* Smallest chunk mapped; larger allocations get a chunk of their own. */
#define SECRET_CHUNK_BYTES (64u * 1024)
/* Allocation alignment inside a chunk. */
#define SECRET_ALIGN 16u

_Static_assert((unsigned)SECMEM_LOCKED == (unsigned)MASK_HYG_LOCKED &&
		       (unsigned)SECMEM_DONTDUMP == (unsigned)MASK_HYG_DONTDUMP &&
		       (unsigned)SECMEM_WIPEONFORK == (unsigned)MASK_HYG_WIPEONFORK,
	       "MASK_HYG_* are the SECMEM_* bits");

struct secret_chunk {
	struct secmem mem; /* the mapping (base/secmem.h) */
	size_t used;       /* bytes handed out (aligned) */
};

struct mask_secrets {
	struct secret_chunk *chunk; /* malloc'd array; holds no secret */
	size_t nchunks;
	size_t cap;
	unsigned hygiene; /* MASK_HYG_* true of every chunk so far */
	size_t mapped;    /* sum of chunk lengths */
};

mask_secrets_t *mask_secrets_new(void)
{
	mask_secrets_t *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->hygiene = MASK_HYG_LOCKED | MASK_HYG_DONTDUMP | MASK_HYG_WIPEONFORK;
	return s;
}

/*
 * Maps one protected chunk of at least len bytes (secmem_map()) and
 * appends it. Returns the chunk, or NULL with errno (ENOMEM, or madvise's
 * or mlock's own error when it is not a lack of privilege or quota).
 */
static struct secret_chunk *chunk_add(mask_secrets_t *s, size_t len)
{
	struct secret_chunk *c;

	if (len < SECRET_CHUNK_BYTES)
		len = SECRET_CHUNK_BYTES;
	if (s->nchunks == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4;
		struct secret_chunk *n = realloc(s->chunk, cap * sizeof(*n));
		if (n == NULL)
			return NULL;
		s->chunk = n;
		s->cap = cap;
	}
	c = &s->chunk[s->nchunks];
	if (secmem_map(&c->mem, len, 0) != SECMEM_OK)
		return NULL;
	/* Without SECMEM_LOCKED (no CAP_IPC_LOCK and over RLIMIT_MEMLOCK)
	 * the arena works unlocked and says so through
	 * mask_secrets_hygiene(). */
	s->nchunks++;
	c->used = 0;
	s->hygiene &= c->mem.hygiene;
	s->mapped += c->mem.len;
	return c;
}

void *mask_secrets_alloc(mask_secrets_t *s, size_t len)
{
	struct secret_chunk *c = s->nchunks ? &s->chunk[s->nchunks - 1] : NULL;
	size_t need;
	void *p;

	if (len == 0)
		len = 1;
	if (len > SIZE_MAX - SECRET_ALIGN) {
		errno = ENOMEM;
		return NULL;
	}
	need = (len + SECRET_ALIGN - 1) & ~(size_t)(SECRET_ALIGN - 1);
	if (c == NULL || c->mem.len - c->used < need) {
		c = chunk_add(s, need);
		if (c == NULL)
			return NULL;
	}
	/* Fresh anonymous pages are zero and nothing is ever freed back
	 * into a chunk, so the bytes handed out are zero. */
	p = c->mem.base + c->used;
	c->used += need;
	return p;
}

unsigned mask_secrets_hygiene(const mask_secrets_t *s)
{
	return s->hygiene;
}

size_t mask_secrets_mapped(const mask_secrets_t *s)
{
	return s->mapped;
}

void mask_secrets_free(mask_secrets_t *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nchunks; i++)
		secmem_unmap(&s->chunk[i].mem);
	free(s->chunk);
	free(s);
}
