/*
 * mask.h - credential masking (SPEC §4). For now only what the policy
 * loader needs at load time: the table of well-known token prefixes a
 * sentinel keeps, and how many random bits a sentinel for a value would
 * carry, so a value too short to mask is refused before anything runs.
 * The sentinel table and the streaming substituter come later.
 */
#ifndef PASSAVANT_MASK_H
#define PASSAVANT_MASK_H

#include <stddef.h>

#include "../proxy/attrib.h"

/* SPEC §4.1: fewer random bits than this and the value is refused. */
#define MASK_MIN_SENTINEL_BITS 64

/*
 * Length of the well-known type prefix at the start of value ("ghp_",
 * "github_pat_", "sk-", "xoxb-", "AKIA", ...), longest match first; 0 when
 * there is none. A sentinel keeps this prefix verbatim. Pure.
 */
size_t mask_known_prefix(const char *value, size_t len) NONNULL(1);

/*
 * Random bits a sentinel for value would carry: after the known prefix,
 * each lower-case letter and each upper-case letter is replaced by one of
 * 26, each digit by one of 10, everything else is kept. Returns the floor
 * of the sum of log2 of those choices. Pure; never stores or prints value.
 */
unsigned mask_sentinel_bits(const char *value, size_t len) NONNULL(1);

#endif
