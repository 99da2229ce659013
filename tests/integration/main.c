/* tests/integration/main.c - runs every integration suite (real sockets,
 * the real passavant binary, real clients). */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../support/testlib.h"

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 ? 0 : -1;
}

int main(void)
{
	/* Stable sentinels (SPEC §4.1): every passavant started here keeps
	 * its key and ledger in a temporary state directory, never in the
	 * user's; suites that need their own set XDG_STATE_HOME per run.
	 * 0755: a run as another user (run_unprivileged) must be able to
	 * check the path its policy denies there. */
	char state[] = "/tmp/pv-itest-state-XXXXXX";
	int rc;

	if (mkdtemp(state) == NULL || chmod(state, 0755) != 0 ||
	    setenv("XDG_STATE_HOME", state, 1) != 0) {
		perror("integration: temporary XDG_STATE_HOME");
		return 1;
	}
	rc = test_run_all("integration");
	(void)nftw(state, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
