/*
 * pyscript.h - the Python helper scripts of the integration tests (TLS
 * clients, edge cases) share one prelude: their argument convention and a
 * CONNECT through the proxy.
 */
#ifndef PASSAVANT_TEST_PYSCRIPT_H
#define PASSAVANT_TEST_PYSCRIPT_H

#include <stddef.h>

/*
 * Writes test_py_prelude then body (len bytes) to path. The prelude
 * imports socket, ssl and sys, reads `mode, proxy, target, cafile` from
 * argv[1:5], splits them into ph, pp (proxy) and th, tp (target; th is ""
 * when target has no ':'), and defines tunnel(first=b''): a TCP socket
 * (TCP_NODELAY) that sent "CONNECT target" with first appended in the same
 * write, read the proxy's head a byte at a time (nothing after it is
 * consumed) and asserted a 200. Returns 0 or -1.
 */
int test_write_py(const char *path, const char *body, size_t len);

#endif
