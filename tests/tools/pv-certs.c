/*
 * pv-certs - writes the test certificates of tests/support/certs.h.
 *
 *   pv-certs DIR NAME...     e.g. pv-certs /tmp/x 127.0.0.1 localhost
 *
 * DIR must exist. Exit 0 on success, 1 on failure, 2 on usage.
 */
#include <stdio.h>

#include "tests/support/certs.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: pv-certs DIR NAME...\n");
		return 2;
	}
	if (test_certs_make(argv[1], (const char *const *)(argv + 2)) < 0)
		return 1;
	return 0;
}
