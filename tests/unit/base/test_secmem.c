/*
 * test_secmem.c - base/secmem: a mapping is zeroed, page-rounded,
 * excluded from dumps, locked exactly when it says so (and not when told
 * not to), and wiped before it is unmapped.
 *
 * The wipe hook defined here (SECMEM_TEST_HOOKS) is also the one the mask
 * tests use for the secret arena and the pattern sets: this file is the
 * only one that includes base/secmem.c.
 */
#define SECMEM_TEST_HOOKS 1
#include "../../../base/secmem.c"

#include "../../support/testlib.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t sm_wipes, sm_dirty, sm_len;

static void sm_probe(const void *p, size_t len)
{
	const unsigned char *b = p;

	sm_wipes++;
	sm_len = len;
	for (size_t i = 0; i < len; i++)
		if (b[i] != 0) {
			sm_dirty++;
			return;
		}
}

/* Zeroed, page-rounded, usable; unmap clears the descriptor; unmapping
 * an unmapped one is a no-op. */
static void test_map(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct secmem m;

	CU_ASSERT_EQUAL_FATAL(secmem_map(&m, 100, SECMEM_NO_MLOCK), SECMEM_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m.base);
	CU_ASSERT_EQUAL(m.len, (size_t)page);
	CU_ASSERT_EQUAL((uintptr_t)m.base % (uintptr_t)page, 0);
	for (size_t i = 0; i < m.len; i++)
		if (m.base[i] != 0) {
			CU_FAIL("fresh mapping not zero");
			break;
		}
	memset(m.base, 0x5A, m.len);
	secmem_unmap(&m);
	CU_ASSERT_PTR_NULL(m.base);
	CU_ASSERT_EQUAL(m.len, 0);
	secmem_unmap(&m);
	CU_ASSERT_EQUAL_FATAL(secmem_map(&m, (size_t)page + 1, SECMEM_NO_MLOCK), SECMEM_OK);
	CU_ASSERT_EQUAL(m.len, 2 * (size_t)page);
	secmem_unmap(&m);
	CU_ASSERT_EQUAL(secmem_map(&m, SIZE_MAX - 1, 0), SECMEM_ERR_MAP);
	CU_ASSERT_PTR_NULL(m.base);
}

/* Every byte is zero when the hook sees it, just before munmap. */
static void test_wipe(void)
{
	struct secmem m;

	CU_ASSERT_EQUAL_FATAL(secmem_map(&m, 3 * 4096 + 7, 0), SECMEM_OK);
	memset(m.base, 0xA5, m.len);
	sm_wipes = sm_dirty = sm_len = 0;
	secmem_wipe_hook = sm_probe;
	secmem_unmap(&m);
	secmem_wipe_hook = NULL;
	CU_ASSERT_EQUAL(sm_wipes, 1);
	CU_ASSERT_EQUAL(sm_dirty, 0);
	CU_ASSERT(sm_len >= 3 * 4096 + 7);
}

/* The hygiene bits say what the kernel applied: dontdump always; locked
 * exactly when the mapping is locked (and never with SECMEM_NO_MLOCK). */
static void test_hygiene(void)
{
	struct secmem m;
	char flags[512];

	CU_ASSERT_EQUAL_FATAL(secmem_map(&m, 4096, 0), SECMEM_OK);
	CU_ASSERT((m.hygiene & SECMEM_DONTDUMP) != 0);
	if (test_vmflags(m.base, flags, sizeof(flags))) {
		CU_ASSERT(strstr(flags, " dd") != NULL);
		/* ASan's mlock() is a no-op that returns 0: there only "not
		 * locked" can be checked against the kernel. */
#if defined(__SANITIZE_ADDRESS__)
		if ((m.hygiene & SECMEM_LOCKED) == 0)
			CU_ASSERT(strstr(flags, " lo") == NULL);
#else
		CU_ASSERT(((m.hygiene & SECMEM_LOCKED) != 0) == (strstr(flags, " lo") != NULL));
#endif
		if ((m.hygiene & SECMEM_WIPEONFORK) != 0)
			CU_ASSERT(strstr(flags, " wf") != NULL);
	}
	if ((m.hygiene & SECMEM_LOCKED) == 0)
		fprintf(stderr, "base_secmem: note: mlock refused here (the mapping says so)\n");
	secmem_unmap(&m);
	CU_ASSERT_EQUAL_FATAL(secmem_map(&m, 4096, SECMEM_NO_MLOCK), SECMEM_OK);
	CU_ASSERT((m.hygiene & SECMEM_LOCKED) == 0);
	CU_ASSERT((m.hygiene & SECMEM_DONTDUMP) != 0);
	if (test_vmflags(m.base, flags, sizeof(flags)))
		CU_ASSERT(strstr(flags, " lo") == NULL);
	secmem_unmap(&m);
}

TEST_REGISTRAR(register_base_secmem)
{
	CU_pSuite s = test_suite("base_secmem", NULL, NULL);

	test_add(s, "map: zeroed, page-rounded, unmap clears", test_map);
	test_add(s, "unmap wipes every byte first", test_wipe);
	test_add(s, "hygiene: dontdump, locked flag as the kernel says", test_hygiene);
}
