/*
 * tablepriv.h - the credential table's layout, private to mask/: table.c
 * reads the sources and writes the sandbox-facing outputs, tablesets.c
 * builds and caches the sets and answers the detection questions.
 * Nothing outside mask/ includes this.
 */
#ifndef PASSAVANT_MASK_TABLEPRIV_H
#define PASSAVANT_MASK_TABLEPRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mask.h"

/* A distinct real value and its sentinel, both in the secret arena. */
struct tvalue {
	char *real;    /* len bytes + NUL */
	char *sent;    /* len bytes + NUL */
	size_t len;
	uint32_t cred; /* first credential holding it */
	char *dname;   /* malloc'd: its name for derivation and the ledger
			* ("env:VAR", "file:PATH", "file:PATH#N"), the first
			* holder's; not secret */
	bool small;    /* over 4 KiB, its base64 forms and the pieces of its
			* joined form left out of the sets (forms_fit()) */
	bool wide;     /* its UTF-16 and UTF-32 forms are in the remask set and,
			* folded, in the folded set (form_wide(), build_folded()) */
	bool nowide;   /* they were left out: the sets passed their bound with them */
	bool url_raw;  /* holds a '#' or a %XX escape: not injected raw into a request
			* target (mask_table_value_url_raw()) */
};

/* A stale sentinel (SPEC §4.1): one the ledger recorded for a value's
 * name that is not its sentinel now. Refused in request heads on every
 * host (outbound sets only, after the forms). In the secret arena. */
struct tstale {
	char *s;
	size_t len;
	uint32_t value; /* the value whose name it was recorded under */
};

/* One secret inside a file's content. */
struct tspan {
	size_t off;
	size_t len;
	uint32_t value;
};

/* One kept credential. Strings are malloc'd copies (not secret). */
struct tcred {
	enum policy_cred_kind kind;
	char *name;                   /* env name, or the path as written */
	char *path;                   /* CRED_FILE: absolute path */
	char *canon;                  /* CRED_FILE: realpath() of it (else path) */
	unsigned inject_in;           /* INJECT_* */
	struct policy_hostpat *hosts; /* [nhosts] copy of injectHosts */
	size_t nhosts;
	uint32_t *vals;               /* [nvals] values it holds (may repeat) */
	size_t nvals;
	/* CRED_FILE only: */
	char *content;                /* arena: the whole file + NUL */
	size_t content_len;
	struct tspan *spans;          /* [nvals] in file order; vals[i] == spans[i].value */
	char *copy;                   /* path of the sentinel copy, once written */
};

/* One cached outbound eligibility. */
struct tcache {
	uint64_t *key;          /* [nwords] eligible credential bits */
	bool percent;           /* built with MASK_SET_PERCENT */
	mask_set_t *set;        /* pair i = value i */
	unsigned char *inject;  /* [nvalues] */
	uint32_t *cred;         /* [nvalues] */
	bool any;
};

struct enc_cache;

struct mask_table {
	mask_secrets_t *sec;    /* real values, sentinels, file contents */
	struct tcred *cred;     /* [ncreds] */
	size_t ncreds;
	struct tvalue *value;   /* [nvalues] */
	size_t nvalues;
	size_t vcap;
	bool plaintext_ok;      /* credentials.allowPlaintextInject */
	size_t nwords;          /* words of a credential bitset */
	uint64_t *tmpkey;       /* [nwords] lookup scratch */
	struct tcache *cache;   /* [ncache] */
	size_t ncache;
	size_t cachecap;
	/* mask_table_outbound()'s last host, as passed, with its port, and
	 * the cache entry it found for each (verified, where): a request
	 * asks up to ten times for the same host (issue 16, round 49).
	 * Eligibility depends on nothing else, and entries are only ever
	 * appended, so an index stays true. */
	char memo_host[POLICY_HOST_MAX + 1];
	size_t memo_hlen;       /* 0: no memo */
	uint16_t memo_port;
	long memo_entry[2][3];  /* [tls_verified][where: header, query, body], -1 unknown */
	struct mask_pair *form; /* [nform] the real-value forms the remasker knows
				 * (raw first, pair i = value i), -> sentinel forms */
	uint32_t *form_value;   /* [nform] value of each form */
	unsigned char *form_drop;/* [nform] a form its value goes without when small */
	size_t nform;
	bool forms_small;       /* some value's big forms left out of the sets (tvalue small; fix39m:
				 * they passed MASK_SET_MAX_BYTES; table_build_sets()) */
	mask_set_t *inbound;    /* real -> sentinel forms, percent forms */
	mask_set_t *detect;     /* sentinel -> sentinel, then the forms; percent forms */
	uint64_t *detect_counts;/* [nvalues + nform] */
	size_t min_len;         /* shortest value or form the detect set holds: shorter text holds none */
	mask_set_t *folded;     /* each raw value of at most FOLD_VALUE_MAX bytes and its form
				 * reader's pieces, folded (mask_fold()), to itself:
				 * mask_table_find_real_name(), the body fold */
	uint32_t *folded_value; /* [pairs of folded] the value of each pair */
	uint64_t *folded_counts;/* [pairs of folded] */
	size_t folded_rawmax;   /* the most input bytes a match of folded takes
				 * (mask_fold_rawmax() of its longest pattern) */
	size_t folded_min;      /* its shortest pattern: shorter text holds none (may be
				 * under min_len: edge, core and decoded forms) */
	bool wide_all;          /* every value is wide (struct tvalue): mask_table_wide_forms() */
	struct enc_cache *enc;  /* arena: mask_table_encoded_real()'s needles, built
				 * at its first call (start-up, one thread) */
	unsigned char *scratch; /* find_sentinel copy; wiped after use */
	size_t scratch_cap;
	bool stable;            /* sentinels derived from a key (not per-session) */
	bool space_value;       /* some real value holds a space (find_real's '+' pass) */
	struct tstale *stale;   /* [nstale] */
	size_t nstale;
	uint32_t *stale_value;  /* [nstale] stale[k].value (struct mask_outbound) */
	unsigned set_hygiene;   /* MASK_HYG_* common to every set built */
	enum mask_set_result set_res; /* why the last set build failed */
};

/*
 * Builds the sets that do not depend on the request (remask, detect, the
 * real-value forms) and warms the outbound cache for every exact inject
 * host and IP literal (tablesets.c). Returns 0, or -1 with t->set_res.
 */
int table_build_sets(mask_table_t *t) NONNULL(1) WUNRES;

/* Frees what table_build_sets() and mask_table_outbound() built. */
void table_free_sets(mask_table_t *t) NONNULL(1);

#endif
