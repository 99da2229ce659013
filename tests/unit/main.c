/* tests/unit/main.c - runs every unit suite registered with TEST_REGISTRAR. */
#include "../support/testlib.h"

int main(void)
{
	return test_run_all("unit");
}
