/*
 * secret.c - storage for real values and sentinels (SPEC §4.4).
 *
 * An append-only arena of anonymous mappings. Each chunk is excluded from
 * core dumps (MADV_DONTDUMP, required), from a forked child that has not
 * exec'd yet (MADV_WIPEONFORK, best effort: the sandbox launcher forks),
 * and locked in RAM (mlock) when the kernel allows it. Freeing wipes
 * every chunk before unmapping it. There are deliberately no helpers that
 * print, format or compare the contents: callers own that and must not
 * log it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mask.h"

/* Smallest chunk mapped; larger allocations get a chunk of their own. */
#define SECRET_CHUNK_BYTES (64u * 1024)
/* Allocation alignment inside a chunk. */
#define SECRET_ALIGN 16u

struct secret_chunk {
	unsigned char *base; /* mmap'd */
	size_t len;          /* mapped length, a page multiple */
	size_t used;         /* bytes handed out (aligned) */
	bool locked;         /* mlock succeeded: munmap unlocks */
};

struct mask_secrets {
	struct secret_chunk *chunk; /* malloc'd array; holds no secret */
	size_t nchunks;
	size_t cap;
	unsigned hygiene; /* MASK_HYG_* true of every chunk so far */
	size_t mapped;    /* sum of chunk lengths */
};

#ifdef MASK_SECRET_TEST_HOOKS
/* Unit tests (which #include this file) see each chunk just after it is
 * wiped and before it is unmapped. */
static void (*secret_wipe_hook)(const void *p, size_t len);
#define SECRET_WIPED(p, len)                                                   \
	do {                                                                   \
		if (secret_wipe_hook != NULL)                                  \
			secret_wipe_hook((p), (len));                          \
	} while (0)
#else
#define SECRET_WIPED(p, len) ((void)0)
#endif

mask_secrets_t *mask_secrets_new(void)
{
	mask_secrets_t *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->hygiene = MASK_HYG_LOCKED | MASK_HYG_DONTDUMP | MASK_HYG_WIPEONFORK;
	return s;
}

/*
 * Maps one protected chunk of at least len bytes and appends it. Returns
 * the chunk, or NULL with errno (ENOMEM, or madvise/mlock's own error
 * when it is not a lack of privilege or quota).
 */
static struct secret_chunk *chunk_add(mask_secrets_t *s, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	struct secret_chunk *c;
	unsigned hyg = MASK_HYG_DONTDUMP;
	void *base;
	int saved;

	if (page <= 0)
		page = 4096;
	if (len < SECRET_CHUNK_BYTES)
		len = SECRET_CHUNK_BYTES;
	if (len > SIZE_MAX - (size_t)page) {
		errno = ENOMEM;
		return NULL;
	}
	len = (len + (size_t)page - 1) & ~((size_t)page - 1);
	if (s->nchunks == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4;
		struct secret_chunk *n = realloc(s->chunk, cap * sizeof(*n));
		if (n == NULL)
			return NULL;
		s->chunk = n;
		s->cap = cap;
	}
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (madvise(base, len, MADV_DONTDUMP) != 0)
		goto fail_unmap;
#ifdef MADV_WIPEONFORK
	/* Linux >= 4.14; an older kernel answers EINVAL: record, go on. */
	if (madvise(base, len, MADV_WIPEONFORK) == 0)
		hyg |= MASK_HYG_WIPEONFORK;
	else if (errno != EINVAL)
		goto fail_unmap;
#endif
	if (mlock(base, len) == 0)
		hyg |= MASK_HYG_LOCKED;
	else if (errno != EPERM && errno != ENOMEM && errno != EAGAIN)
		goto fail_unmap;
	/* else: no CAP_IPC_LOCK and over RLIMIT_MEMLOCK. The arena works
	 * unlocked and says so through mask_secrets_hygiene(). */
	c = &s->chunk[s->nchunks++];
	c->base = base;
	c->len = len;
	c->used = 0;
	c->locked = (hyg & MASK_HYG_LOCKED) != 0;
	s->hygiene &= hyg;
	s->mapped += len;
	return c;

fail_unmap:
	saved = errno;
	(void)munmap(base, len);
	errno = saved;
	return NULL;
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
	if (c == NULL || c->len - c->used < need) {
		c = chunk_add(s, need);
		if (c == NULL)
			return NULL;
	}
	/* Fresh anonymous pages are zero and nothing is ever freed back
	 * into a chunk, so the bytes handed out are zero. */
	p = c->base + c->used;
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
	for (size_t i = 0; i < s->nchunks; i++) {
		struct secret_chunk *c = &s->chunk[i];
		explicit_bzero(c->base, c->len);
		SECRET_WIPED(c->base, c->len);
		/* munmap drops the lock with the mapping; munlock first anyway
		 * so the locked-memory accounting is right even if munmap
		 * were to fail. Neither can fail on a whole mapping of ours. */
		if (c->locked)
			(void)munlock(c->base, c->len);
		(void)munmap(c->base, c->len);
	}
	free(s->chunk);
	free(s);
}
