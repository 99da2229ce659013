/*
 * secmem.c - memory for secrets: see secmem.h.
 */
#include "base/secmem.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef SECMEM_TEST_HOOKS
/* Unit tests (tests/unit/base/test_secmem.c includes this file) see each
 * mapping just after it is wiped and before it is unmapped. */
void (*secmem_wipe_hook)(const void *p, size_t len);
#define SECMEM_WIPED(p, len)                                                   \
	do {                                                                   \
		if (secmem_wipe_hook != NULL)                                  \
			secmem_wipe_hook((p), (len));                          \
	} while (0)
#else
#define SECMEM_WIPED(p, len) ((void)0)
#endif

/* Unmaps a mapping that failed half-way, keeping errno; returns res. */
static enum secmem_result map_fail(struct secmem *m, enum secmem_result res)
{
	int saved = errno;

	(void)munmap(m->base, m->len);
	memset(m, 0, sizeof(*m));
	errno = saved;
	return res;
}

enum secmem_result secmem_map(struct secmem *m, size_t len, unsigned flags)
{
	long page = sysconf(_SC_PAGESIZE);
	void *base;

	memset(m, 0, sizeof(*m));
	if (page <= 0)
		page = 4096;
	if (len == 0)
		len = 1;
	if (len > SIZE_MAX - (size_t)page) {
		errno = ENOMEM;
		return SECMEM_ERR_MAP;
	}
	len = (len + (size_t)page - 1) & ~((size_t)page - 1);
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return SECMEM_ERR_MAP;
	m->base = base;
	m->len = len;
	if (madvise(base, len, MADV_DONTDUMP) != 0)
		return map_fail(m, SECMEM_ERR_MADVISE);
	m->hygiene = SECMEM_DONTDUMP;
#ifdef MADV_WIPEONFORK
	/* A forked child that has not exec'd yet (the sandbox launcher
	 * forks) must not inherit the secrets. Linux >= 4.14; an older
	 * kernel answers EINVAL: recorded by the missing bit. */
	if (madvise(base, len, MADV_WIPEONFORK) == 0)
		m->hygiene |= SECMEM_WIPEONFORK;
	else if (errno != EINVAL)
		return map_fail(m, SECMEM_ERR_MADVISE);
#endif
	if ((flags & SECMEM_NO_MLOCK) != 0)
		return SECMEM_OK;
	if (mlock(base, len) == 0) {
		m->hygiene |= SECMEM_LOCKED;
		return SECMEM_OK;
	}
	/* No CAP_IPC_LOCK and over RLIMIT_MEMLOCK, or transiently short of
	 * lockable pages: degrade, visibly (no SECMEM_LOCKED). */
	if (errno == EPERM || errno == ENOMEM || errno == EAGAIN)
		return SECMEM_OK;
	return map_fail(m, SECMEM_ERR_MLOCK);
}

void secmem_unmap(struct secmem *m)
{
	if (m->base == NULL)
		return;
	explicit_bzero(m->base, m->len);
	SECMEM_WIPED(m->base, m->len);
	/* munmap drops the lock with the mapping; munlock first anyway so
	 * the locked-memory accounting is right even if munmap were to
	 * fail. Neither can fail on a whole mapping of ours; if one did,
	 * the pages are zero already. */
	if ((m->hygiene & SECMEM_LOCKED) != 0)
		(void)munlock(m->base, m->len);
	(void)munmap(m->base, m->len);
	memset(m, 0, sizeof(*m));
}
