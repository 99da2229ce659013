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

enum log_level { LOG_LEVEL_QUIET = 0, LOG_LEVEL_WARN = 1, LOG_LEVEL_INFO = 2, LOG_LEVEL_DEBUG = 3 };

/* Sets the verbosity (default LOG_LEVEL_WARN). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

void log_warn(const char *fmt, ...) PRINTF(1, 2);  /* with ": strerror(errno)" */
void log_warnx(const char *fmt, ...) PRINTF(1, 2);
void log_info(const char *fmt, ...) PRINTF(1, 2);
void log_debug(const char *fmt, ...) PRINTF(1, 2);

#endif
