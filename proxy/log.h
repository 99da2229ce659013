/*
 * log.h - diagnostics on stderr. Never pass a secret value to these: there
 * is deliberately no way to format one (SPEC §4.4, STYLE.md 11).
 *
 * Lines look like "passavant: message". log_warn appends strerror(errno).
 * All functions may be called from callbacks.
 */
#ifndef PASSAVANT_LOG_H
#define PASSAVANT_LOG_H

#include "base/attrib.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum log_level { LOG_LEVEL_QUIET = 0, LOG_LEVEL_WARN = 1, LOG_LEVEL_INFO = 2, LOG_LEVEL_DEBUG = 3 };

/* Sets the verbosity (default LOG_LEVEL_WARN). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

void log_warn(const char *fmt, ...) PRINTF(1, 2);  /* with ": strerror(errno)" */
void log_warnx(const char *fmt, ...) PRINTF(1, 2);
void log_info(const char *fmt, ...) PRINTF(1, 2);
void log_debug(const char *fmt, ...) PRINTF(1, 2);

/* The valid UTF-8 sequence at s[0..len): its length (1-4) with its code
 * point in *cp, or 0 when the bytes there are none (overlong forms,
 * surrogates and values past U+10FFFF included). */
size_t log_utf8_seq(const unsigned char *s, size_t len, uint32_t *cp);

/*
 * Whether whoever reads a line acts on the code point cp instead of
 * showing it: C0 and C1 controls and DEL (a terminal runs U+009B as CSI,
 * U+009D as OSC), the line and paragraph separators U+2028, U+2029 and
 * NEL U+0085 (line readers such as Python's splitlines() end a line
 * there), the bidirectional and zero-width format characters and the
 * byte order mark (they reorder or hide what a line shows), and the
 * other code points that show nothing (the soft hyphen, fillers,
 * variation selectors, tag characters: log.c's hidden[]). A client
 * chooses such bytes in a Host, an HTTP/2 :path or a DNS name; every
 * line and audit record that quotes them escapes them (round 36).
 */
bool log_cp_acts(uint32_t cp);

#endif
