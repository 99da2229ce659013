/*
 * attrib.h - compiler attributes used on every prototype (STYLE.md 9).
 *
 * NONNULL(...)  the listed pointer arguments must not be NULL.
 * WUNRES        the caller must use the result (errors are returned).
 * MALLOC        the result is freshly allocated; the caller owns it.
 * PRINTF(f, a)  printf-style format at argument f, varargs from a.
 * UNUSED        intentionally unused parameter or variable.
 */
#ifndef PASSAVANT_ATTRIB_H
#define PASSAVANT_ATTRIB_H

#define NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#define WUNRES __attribute__((warn_unused_result))
#define MALLOC __attribute__((malloc))
#define PRINTF(f, a) __attribute__((format(printf, f, a)))
#define UNUSED __attribute__((unused))
#define NORETURN __attribute__((noreturn))

/* Setup code only (config, CA loading, sandbox): never in event-loop code,
 * where ownership crosses callbacks (STYLE.md 9). */
#define cleanup_free __attribute__((cleanup(attrib_cleanup_free)))
static inline void attrib_cleanup_free(void *p)
{
	void **pp = (void **)p;
	extern void free(void *);
	free(*pp);
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
