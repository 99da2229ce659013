/*
 * access.c - read-only accessors of the effective settings of a policy
 * (policy.h "Effective settings", plus the file name and warnings).
 *
 * Every function is a plain read of the immutable struct policy the loader
 * built: pure, thread-safe, callable from callbacks. Strings and arrays
 * returned belong to the policy and live as long as it does. An index out
 * of range returns NULL rather than reading past an array.
 */
#include "policy_int.h"

/* Element i of a string list, or NULL when i is out of range. */
static const char *strlist_at(const struct policy_strlist *l, size_t i)
{
	return i < l->n ? l->v[i] : NULL;
}

/* Contract in policy.h: NULL for the embedded default. */
const char *policy_file(const policy_t *p)
{
	return p->file;
}

/* Contract in policy.h. */
size_t policy_warning_count(const policy_t *p)
{
	return p->warnings.n;
}

/* Contract in policy.h; NULL when i >= policy_warning_count(). */
const char *policy_warning(const policy_t *p, size_t i)
{
	return strlist_at(&p->warnings, i);
}

/* Contract in policy.h: limits with defaults filled in by the loader. */
const struct policy_limits *policy_limits(const policy_t *p)
{
	return &p->limits;
}

/* Contract in policy.h. */
bool policy_tls_terminate(const policy_t *p)
{
	return p->tls_terminate;
}

/* Contract in policy.h. */
size_t policy_allowed_count(const policy_t *p)
{
	return p->allowed.n;
}

/* Contract in policy.h; NULL when i >= policy_allowed_count(). */
const struct policy_hostpat *policy_allowed(const policy_t *p, size_t i)
{
	return i < p->allowed.n ? &p->allowed.v[i].pat : NULL;
}

/* Contract in policy.h. */
size_t policy_extra_ca_count(const policy_t *p)
{
	return p->extra_ca.n;
}

/* Contract in policy.h; NULL when i >= policy_extra_ca_count(). */
const char *policy_extra_ca(const policy_t *p, size_t i)
{
	return strlist_at(&p->extra_ca, i);
}

/* Contract in policy.h. */
bool policy_allow_unix_sockets(const policy_t *p)
{
	return p->allow_unix_sockets;
}

/* Contract in policy.h: NULL when no audit log is configured. */
const char *policy_audit_path(const policy_t *p)
{
	return p->audit_path;
}

/* Contract in policy.h. */
enum policy_audit_bodies policy_audit_bodies(const policy_t *p)
{
	return p->audit_bodies;
}

/* Contract in policy.h. */
size_t policy_cred_count(const policy_t *p)
{
	return p->n_creds;
}

/* Contract in policy.h: the public part the loader filled; NULL when i is
 * out of range. */
const struct policy_cred *policy_cred(const policy_t *p, size_t i)
{
	return i < p->n_creds ? &p->creds[i].pub : NULL;
}

/* Contract in policy.h. */
void policy_cred_where(const policy_t *p, size_t i, unsigned *line, unsigned *col)
{
	*line = i < p->n_creds ? p->creds[i].mark.line : 0;
	*col = i < p->n_creds ? p->creds[i].mark.col : 0;
}

/* Contract in policy.h. */
bool policy_allow_plaintext_inject(const policy_t *p)
{
	return p->allow_plaintext_inject;
}

/* Contract in policy.h. */
enum policy_sentinels policy_sentinels(const policy_t *p)
{
	return p->sentinels;
}

/* Contract in policy.h; 0 for a list value out of range. */
size_t policy_fs_count(const policy_t *p, enum policy_fs_list which)
{
	return (unsigned)which < FS_LIST_COUNT ? p->fs[which].n : 0;
}

/* Contract in policy.h. */
size_t policy_fs_named_count(const policy_t *p, enum policy_fs_list which)
{
	if ((unsigned)which >= FS_LIST_COUNT)
		return 0;
	return p->bound ? p->fs_named[which] : p->fs[which].n;
}

/* Contract in policy.h; NULL when which or i is out of range. */
const char *policy_fs_path(const policy_t *p, enum policy_fs_list which, size_t i)
{
	return (unsigned)which < FS_LIST_COUNT ? strlist_at(&p->fs[which], i) : NULL;
}
