/* tests/integration/main.c - runs every integration suite (real sockets,
 * the real passavant binary, real clients). */
#include "../support/testlib.h"

int main(void)
{
	return test_run_all("integration");
}
