/*
 * pyscript.c - the shared prelude of the Python test helpers (pyscript.h).
 */
#include "pyscript.h"

#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static const char prelude[] =
	"import socket, ssl, sys\n"
	"mode, proxy, target, cafile = sys.argv[1:5]\n"
	"ph, pp = proxy.rsplit(':', 1); th, _, tp = target.rpartition(':')\n"
	"def tunnel(first=b''):\n"
	"    s = socket.create_connection((ph, int(pp)), timeout=20)\n"
	"    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
	"    s.sendall(b'CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (target.encode(), target.encode()) + first)\n"
	"    head = b''\n"
	"    while not head.endswith(b'\\r\\n\\r\\n'):\n"
	"        c = s.recv(1)\n"
	"        if not c: raise SystemExit('proxy closed')\n"
	"        head += c\n"
	"    assert head.startswith(b'HTTP/1.1 200'), head\n"
	"    return s\n";

int test_write_py(const char *path, const char *body, size_t len)
{
	size_t n = sizeof(prelude) - 1;
	char *all = malloc(n + len);
	int r;

	if (all == NULL)
		return -1;
	memcpy(all, prelude, n);
	memcpy(all + n, body, len);
	r = test_write_file(path, all, n + len);
	free(all);
	return r;
}
