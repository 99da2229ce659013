/*
 * policy_int.h - private to policy/: the body of struct policy, shared by
 * the loader (load.c, keys_*.c, validate.c, bind.c, print.c) and the decision
 * functions (hostpat.c, decide.c, addracl.c). No other module includes it;
 * tests under tests/unit/policy/ may.
 */
#ifndef PASSAVANT_POLICY_INT_H
#define PASSAVANT_POLICY_INT_H

#include "policy.h"

/* Where an entry came from in the policy file, for diagnostics. */
struct policy_mark {
	unsigned line, col; /* 1-based; 0 when built in (defaults) */
};

/* One host pattern as written, with its parsed form. */
struct policy_hostent {
	struct policy_hostpat pat;
	char *text; /* as written, for rule strings ("allowedDomains: TEXT") */
	char *rule; /* "allowedDomains: TEXT" etc., built at load */
	struct policy_mark mark;
};

struct policy_hostlist {
	struct policy_hostent *v;
	size_t n;
};

/* allowedMethods entry: a pattern and its methods ("*" = every method). */
struct policy_method_rule {
	struct policy_hostent host;
	char **methods; /* upper-case tokens */
	size_t n_methods;
	bool any_method; /* the list contains "*" */
};

/* deniedResolvedAddresses entry. */
struct policy_cidr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	unsigned prefix;
	char *text;
	char *rule; /* "deniedResolvedAddresses: TEXT" */
	struct policy_mark mark;
};

struct policy_strlist {
	char **v;
	size_t n;
};

/* A credential, with the storage behind the public struct policy_cred. */
struct policy_cred_ent {
	struct policy_cred pub;
	char *name;
	char *path;
	char *extract;
	struct policy_hostlist inject_hosts; /* empty when defaulted */
	struct policy_mark mark;
	/* Loader additions: pub.inject_hosts points here (a copy of the
	 * patterns of inject_hosts, or of allowedDomains when defaulted). */
	struct policy_hostpat *inject_pats;
	struct policy_mark inject_in_mark; /* the injectIn key, for warnings */
};

struct policy {
	char *file; /* NULL for the embedded default */

	/* network (§3.1) */
	struct policy_hostlist allowed;
	struct policy_hostlist denied;
	struct policy_method_rule *methods;
	size_t n_methods;
	struct policy_cidr *denied_addrs;
	size_t n_denied_addrs;
	bool tls_terminate;
	struct policy_hostlist tls_exclude;
	struct policy_strlist extra_ca; /* absolute once bound */
	struct policy_mark *extra_ca_marks; /* extra_ca.n positions, for policy_bind() */
	struct policy_limits limits;
	bool allow_unix_sockets;

	/* credentials (§3.2) */
	struct policy_cred_ent *creds;
	size_t n_creds;
	bool allow_plaintext_inject;
	enum policy_sentinels sentinels;

	/* filesystem (§3.3): normalised paths as written ("~/x", "x", "/x")
	 * until policy_bind() makes them absolute and adds the mandatory ones */
	struct policy_strlist fs[FS_LIST_COUNT];
	/* how many entries of each fs list the policy itself names (the
	 * first ones), set by policy_bind() before it adds the mandatory
	 * ones */
	size_t fs_named[FS_LIST_COUNT];
	/* the directories of $PATH added to fs[FS_DENY_WRITE] (for check -v) */
	struct policy_strlist path_dirs;

	/* audit (§3.4) */
	char *audit_path;
	enum policy_audit_bodies audit_bodies;

	/* warnings collected at load (§3.7 and unimplemented srt keys) */
	struct policy_strlist warnings;

	/* Loader additions: where allowPlaintextInject was set (warnings). */
	struct policy_mark plaintext_mark;
	bool bound; /* policy_bind() ran */
};

/*
 * Specificity of a pattern for "most specific wins" (§3.1 allowedMethods):
 * a larger value is more specific. Exact names and IP literals beat every
 * wildcard, a longer wildcard suffix beats a shorter one, bare "*" is last,
 * and a pattern with a port beats the same pattern without one. Pure;
 * defined in decide.c, used by validate.c for the enforceability check.
 */
unsigned long policy_hostpat_specificity(const struct policy_hostpat *pat) NONNULL(1);

#endif
