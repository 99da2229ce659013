/*
 * pyscript.c - the shared prelude of the Python test helpers (pyscript.h).
 */
#include "pyscript.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	"    return s\n"
	"def read_all(t, also=()):\n"
	"    data = b''\n"
	"    while True:\n"
	"        try: c = t.recv(65536)\n"
	"        except (ssl.SSLEOFError, ConnectionResetError) + also: break\n"
	"        if not c: break\n"
	"        data += c\n"
	"    return data\n"
	"import fcntl, os, struct, termios, time\n"
	"def activity(pids):\n"
	"    busy, ns = False, 0\n"
	"    for p in pids:\n"
	"        try: tids = os.listdir('/proc/%s/task' % p)\n"
	"        except OSError: continue\n"
	"        for t in tids:\n"
	"            try:\n"
	"                with open('/proc/%s/task/%s/stat' % (p, t)) as f: st = f.read()\n"
	"                with open('/proc/%s/task/%s/schedstat' % (p, t)) as f: ns += int(f.read().split()[0])\n"
	"            except (OSError, ValueError, IndexError): continue\n"
	"            busy = busy or st[st.rindex(')') + 2] in 'RD'\n"
	"    return busy, ns\n"
	"def settle(s, cap):\n"
	"    pids = os.environ.get('PV_SETTLE_PIDS', '').split()\n"
	"    end, last, calm = time.monotonic() + cap, None, 0\n"
	"    while calm < 3 and time.monotonic() < end:\n"
	"        time.sleep(0.01)\n"
	"        busy, ns = activity(pids)\n"
	"        now = (struct.unpack('i', fcntl.ioctl(s, termios.FIONREAD, b'\\0' * 4))[0], ns)\n"
	"        calm = calm + 1 if now == last and not busy else 0\n"
	"        last = now\n";

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

int test_py_settle_pids(pid_t a, pid_t b, pid_t c)
{
	const pid_t pids[] = {a, b, c};
	char buf[64];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(pids) / sizeof(pids[0]); i++)
		if (pids[i] > 0)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d", n ? " " : "", (int)pids[i]);
	return setenv("PV_SETTLE_PIDS", buf, 1) == 0 ? 0 : -1;
}

const char *test_python(void)
{
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}
