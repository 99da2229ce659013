/*
 * free.c - policy_free(): the one place a loaded policy is released. Every
 * allocation the loader (load.c, keys_*.c, validate.c, bind.c) makes hangs
 * off struct policy and is freed here; a partially filled policy (after
 * load errors) is fine too.
 */
#include <stdlib.h>

#include "policy_int.h"

static void strlist_free(struct policy_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void hostent_free(struct policy_hostent *e)
{
	free(e->text);
	free(e->rule);
}

static void hostlist_free(struct policy_hostlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		hostent_free(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Contract in policy.h: frees p and everything it owns; NULL is a no-op. */
void policy_free(policy_t *p)
{
	if (p == NULL)
		return;
	free(p->file);
	hostlist_free(&p->allowed);
	hostlist_free(&p->denied);
	for (size_t i = 0; i < p->n_methods; i++) {
		hostent_free(&p->methods[i].host);
		for (size_t j = 0; j < p->methods[i].n_methods; j++)
			free(p->methods[i].methods[j]);
		free(p->methods[i].methods);
	}
	free(p->methods);
	for (size_t i = 0; i < p->n_denied_addrs; i++) {
		free(p->denied_addrs[i].text);
		free(p->denied_addrs[i].rule);
	}
	free(p->denied_addrs);
	hostlist_free(&p->tls_exclude);
	strlist_free(&p->extra_ca);
	free(p->extra_ca_marks);
	for (size_t i = 0; i < p->n_creds; i++) {
		struct policy_cred_ent *c = &p->creds[i];
		free(c->name);
		free(c->path);
		free(c->extract);
		hostlist_free(&c->inject_hosts);
		free(c->inject_pats);
	}
	free(p->creds);
	for (int i = 0; i < FS_LIST_COUNT; i++)
		strlist_free(&p->fs[i]);
	strlist_free(&p->path_dirs);
	free(p->audit_path);
	strlist_free(&p->warnings);
	free(p);
}
