/*
 * default.c - the embedded default policy of SPEC §3.6: no network, writes
 * only to the working directory (and the private /tmp every sandbox has),
 * reads everywhere except the credential stores. It goes through the same
 * loader as a file, and policy_bind() adds the stores and mandatory write
 * denies to it as to every policy.
 */
#include <string.h>

#include "loader_int.h"

static const char embedded_default[] =
	"# passavant embedded default (SPEC 3.6)\n"
	"network:\n"
	"  allowedDomains: []\n"
	"filesystem:\n"
	"  allowWrite: [\".\"]\n";

/* Contract in policy.h: caller frees; NULL only if it cannot be built. */
policy_t *policy_load_default(FILE *diag)
{
	unsigned nerrors = 0;

	return ldr_load(NULL, "<embedded default>", embedded_default, strlen(embedded_default),
			diag, &nerrors);
}
