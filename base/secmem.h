/*
 * secmem.h - memory for secrets (SPEC §4.4): one anonymous mapping that
 * is excluded from core dumps, wiped in a child forked before exec, locked
 * in RAM when the kernel allows it, and wiped before it is unmapped.
 *
 * The one mapper of the project: mask/'s secret arena (real values,
 * sentinels, file contents) and every compiled pattern set map their
 * memory here. There is deliberately no function that prints, formats or
 * compares the contents.
 */
#ifndef PASSAVANT_BASE_SECMEM_H
#define PASSAVANT_BASE_SECMEM_H

#include <stddef.h>

#include "base/attrib.h"

/* secmem_map() flags. */
enum {
	/* Do not mlock (tests, `check`); MADV_DONTDUMP and wiping still apply. */
	SECMEM_NO_MLOCK = 1u << 0,
};

/* What protection a mapping really has (struct secmem.hygiene bits). The
 * values are the MASK_HYG_* bits of mask.h. */
enum {
	SECMEM_LOCKED = 1u << 0,     /* mlock succeeded */
	SECMEM_DONTDUMP = 1u << 1,   /* MADV_DONTDUMP applied (always, once mapped) */
	SECMEM_WIPEONFORK = 1u << 2, /* MADV_WIPEONFORK applied (Linux >= 4.14) */
};

/* One mapping. Plain data, owned by whoever holds it; all zero: unmapped. */
struct secmem {
	unsigned char *base; /* page aligned, len zero bytes when mapped */
	size_t len;          /* mapped length: the request rounded up to pages */
	unsigned hygiene;    /* SECMEM_* bits achieved */
};

/* Why secmem_map() failed (errno is kept from the failing call). */
enum secmem_result {
	SECMEM_OK = 0,
	SECMEM_ERR_MAP,     /* mmap failed, or len too large (ENOMEM) */
	SECMEM_ERR_MADVISE, /* madvise(MADV_DONTDUMP or MADV_WIPEONFORK) refused */
	SECMEM_ERR_MLOCK,   /* mlock failed other than EPERM/ENOMEM/EAGAIN */
};

/*
 * Maps at least len bytes (len 0: one page) of zeroed anonymous memory
 * into *m: MADV_DONTDUMP (required), MADV_WIPEONFORK (best effort: an
 * older kernel leaves the bit clear), then mlock unless SECMEM_NO_MLOCK.
 * When mlock is refused for lack of privilege or quota (EPERM, ENOMEM,
 * EAGAIN) the mapping is kept without SECMEM_LOCKED: the caller must
 * warn. Returns SECMEM_OK, or why not with errno kept and *m zeroed.
 * The caller releases it with secmem_unmap(). Setup code: not for
 * event-loop callbacks (mapping and locking may take milliseconds).
 */
enum secmem_result secmem_map(struct secmem *m, size_t len, unsigned flags) NONNULL(1) WUNRES;

/* Wipes every byte (explicit_bzero), unlocks and unmaps, then zeroes *m.
 * An unmapped (all zero) *m is a no-op. */
void secmem_unmap(struct secmem *m) NONNULL(1);

#endif
