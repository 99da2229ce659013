#!/usr/bin/python3
"""pv-h2-attack.py - attacks on the HTTP/2 side of the proxy (suite h2attack).

Two roles, both over TLS with ALPN h2 only:

    pv-h2-attack.py upstream --cert PEM --key KEY --record FILE [--lag MS]
        An HTTP/2 server on python3-h2 that honours flow control and sends
        its responses in one queue, in order (a chunk of one stream waits
        for every chunk queued before it, whatever the stream): what any
        multiplexing server may do. Prints "listening on 127.0.0.1:PORT".
        --lag MS: every read is handled MS ms after it came (an upstream
        a round trip of MS away: a window we open reaches it late).
        Record (FILE, appended): "stream S headers PATH" per request,
        "stream S reset CODE" per RST_STREAM received.
        Paths (before '?'):
          /split?x=HEX   200; DATA "split:" + the first half of the bytes HEX
                         encodes, then (after anything queued meanwhile)
                         the second half and "\\n"
          /bulk?n=N      200; N bytes of 'b' (queued after what is queued)
          /interim?n=N   N interim heads (103, link: </x>), then 200 "ok\\n"
          /goaway        GOAWAY (NO_ERROR, last stream: this one), then, 300
                         ms later, 200 "after goaway\\n" on this stream (a
                         graceful shutdown: RFC 9113 §6.8)
          /goaway0       GOAWAY (NO_ERROR, last stream 0): this stream was
                         not processed, and is never answered
          /push          a PUSH_PROMISE (stream 2, /pushed) although the proxy
                         disabled push, then 200 "hello\\n"
          /pause?x=HEX&ms=N  200, DATA "pause:" + the bytes HEX encodes, then
                         N ms later "\\n" and the end
          /rst0          200, DATA "partial", then RST_STREAM NO_ERROR: a
                         response cut off without an error code
          anything else  200 "hello\\n"

    pv-h2-attack.py client --proxy HOST:PORT --target HOST:PORT --cafile PEM
                           [--timeout S] MODE [ARG...]
        Through a CONNECT to the proxy (HTTP/1.1), then TLS and HTTP/2.
        Modes:
          split HEX N STALL_S   stream 1: GET /split?x=HEX, stream 3: GET
                                /bulk?n=N, windows of 2^31-1; a receive
                                buffer of 4 KiB and nothing read for STALL_S
                                seconds, then everything; prints
                                "stream 1 body TEXT" (escaped) and ends
          madeyoureset N        N times: HEADERS (POST /hello?t=myrI,
                                content-length: 1), then DATA "xx" with
                                END_STREAM on that stream (a stream error:
                                the server resets it, the client never
                                does), at most 50 streams open at once;
                                then a GET of /hello?t=after
          interim N             GET /interim?n=N; reads all
          get PATH              GET PATH; reads all, printing "stream S data
                                at MS ms: TEXT" per DATA frame
          cut0 PATH             stream 1: HEADERS POST PATH and DATA "xx",
                                neither with END_STREAM; 300 ms later
                                RST_STREAM NO_ERROR on it (a request cut
                                off without an error code); then stream
                                3: GET /hello?t=after-cut0
          cutend0 PATH          stream 1: HEADERS GET PATH with
                                END_STREAM (the request whole); 300 ms
                                later, the response under way, RST_STREAM
                                NO_ERROR on it; then stream 3: GET
                                /hello?t=after-cutend0
          cuthead0 PATH         stream 1: HEADERS GET PATH with END_STREAM
                                but its header block cut (no END_HEADERS,
                                a CONTINUATION due), then RST_STREAM
                                NO_ERROR on it (round 42)
          connect               HEADERS :method CONNECT, :authority (no
                                :path, :scheme), END_STREAM
          protocol              extended CONNECT: :method CONNECT,
                                :protocol websocket, :scheme, :path
                                /hello?t=xconnect, :authority
        Output, one fact per line: "stream S status CODE", "stream S
        interim", "stream S body TEXT", "stream S reset CODE",
        "push_promise on stream S",
        "resets N" (RST_STREAM received in all), "goaway CODE",
        "sent N in S s" (madeyoureset: streams written, and how long),
        "closed", "timeout".
"""
import argparse
import socket
import ssl
import struct
import sys
import threading
import time

MAXWIN = 2**31 - 1


def esc(b):
    return ''.join(chr(c) if 0x20 <= c < 0x7f and c != 0x5c else '\\x%02x' % c for c in b)


def out(line):
    sys.stdout.write(line + '\n')
    sys.stdout.flush()


# ---------------------------------------------------------------- upstream

record_lock = threading.Lock()


def record(path, text):
    with record_lock:
        with open(path, 'a') as f:
            f.write(text + '\n')


def serve(raw, ctx, rec, lag):
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions
    import h2.settings

    try:
        sock = ctx.wrap_socket(raw, server_side=True)
    except (OSError, ssl.SSLError):
        raw.close()
        return
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False,
                                                                validate_inbound_headers=False))
    conn.local_settings = h2.settings.Settings(client=False, initial_values={
        h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1000,
        h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: MAXWIN,
    })
    conn.initiate_connection()
    conn.increment_flow_control_window(MAXWIN - 65535)
    queue = []  # [sid, bytes, end]
    closed = set()

    def flush():
        data = conn.data_to_send()
        if data:
            sock.sendall(data)

    def handle(sid, path):
        base, _, query = path.partition('?')
        args = dict(kv.partition('=')[::2] for kv in query.split('&') if kv)
        if base == '/split':
            v = bytes.fromhex(args.get('x', ''))
            h = len(v) // 2
            conn.send_headers(sid, [(':status', '200')])
            queue.append([sid, b'split:' + v[:h], False])
            # the second half waits for what the next requests queue
            return ('split', sid, v[h:] + b'\n')
        if base == '/bulk':
            conn.send_headers(sid, [(':status', '200')])
            queue.append([sid, b'b' * int(args.get('n', '0')), True])
        elif base == '/push':
            import hpack
            blk = hpack.Encoder().encode([hpack.NeverIndexedHeaderTuple(k, v) for k, v in (
                (':method', 'GET'), (':scheme', 'https'), (':authority', 'x'), (':path', '/pushed'))])
            flush()
            sock.sendall(frame(5, 0x4, sid, struct.pack('>I', 2) + blk))
            conn.send_headers(sid, [(':status', '200')])
            queue.append([sid, b'hello\n', True])
        elif base == '/goaway0':
            sock.sendall(frame(7, 0, 0, struct.pack('>II', 0, 0)))
        elif base == '/goaway':
            sock.sendall(frame(7, 0, 0, struct.pack('>II', sid, 0)))
            due.append((time.monotonic() + 0.3, sid))
        elif base == '/pause':
            conn.send_headers(sid, [(':status', '200')])
            conn.send_data(sid, b'pause:' + bytes.fromhex(args.get('x', '')))
            later_data.append((time.monotonic() + int(args.get('ms', '0')) / 1000.0, sid))
        elif base == '/rst0':
            conn.send_headers(sid, [(':status', '200')])
            conn.send_data(sid, b'partial')
            conn.reset_stream(sid, 0)
        elif base == '/interim':
            for _ in range(int(args.get('n', '0'))):
                conn.send_headers(sid, [(':status', '103'), ('link', '</x>')])
                flush()
            conn.send_headers(sid, [(':status', '200')])
            queue.append([sid, b'ok\n', True])
        else:
            conn.send_headers(sid, [(':status', '200')])
            queue.append([sid, b'hello\n', True])
        return None

    later = []
    due = []  # (when, sid) of /goaway answers
    later_data = []  # (when, sid) of /pause ends
    sock.settimeout(0.02)
    try:
        flush()
        while True:
            try:
                data = sock.recv(65536)
                if not data:
                    return
            except (socket.timeout, ssl.SSLWantReadError):
                data = b''
            if data and lag:
                time.sleep(lag / 1000.0)
            for ev in conn.receive_data(data) if data else []:
                if isinstance(ev, h2.events.RequestReceived):
                    path = dict(ev.headers).get(b':path', b'').decode('latin-1')
                    record(rec, 'stream %d headers %s' % (ev.stream_id, path))
                    try:
                        r = handle(ev.stream_id, path)
                    except h2.exceptions.StreamClosedError:
                        r = None  # reset meanwhile
                    if r is not None:
                        later.append(r)
                elif isinstance(ev, h2.events.StreamReset):
                    record(rec, 'stream %d reset %d' % (ev.stream_id, int(ev.error_code)))
                    closed.add(ev.stream_id)
                elif isinstance(ev, h2.events.DataReceived):
                    conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            for when, sid in [d for d in later_data if d[0] <= time.monotonic()]:
                later_data.remove((when, sid))
                queue.append([sid, b'\n', True])
            for when, sid in [d for d in due if d[0] <= time.monotonic()]:
                due.remove((when, sid))
                conn.send_headers(sid, [(':status', '200')])
                queue.append([sid, b'after goaway\n', True])
            # a /split's second half goes after what was queued since
            if later and (data == b'' or len(queue) > 1):
                for _, sid, rest in later:
                    queue.append([sid, rest, True])
                later = []
            while queue:
                sid, chunk, end = queue[0]
                if sid in closed:
                    queue.pop(0)
                    continue
                try:
                    room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
                except Exception:
                    queue.pop(0)
                    continue
                if room <= 0 and chunk:
                    break
                piece = chunk[:room]
                last = len(piece) == len(chunk)
                try:
                    conn.send_data(sid, piece, end_stream=end and last)
                except h2.exceptions.StreamClosedError:
                    queue.pop(0)
                    continue
                flush()
                if last:
                    queue.pop(0)
                else:
                    queue[0][1] = chunk[len(piece):]
            flush()
    except (OSError, ssl.SSLError, Exception) as e:  # noqa: B902 - any end of the peer
        record(rec, 'conn error %s' % esc(str(e).encode()))
    finally:
        try:
            sock.close()
        except OSError:
            pass


def upstream(a):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ctx.set_alpn_protocols(['h2'])
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('127.0.0.1', 0))
    ls.listen(64)
    out('listening on 127.0.0.1:%d' % ls.getsockname()[1])
    while True:
        raw, _ = ls.accept()
        threading.Thread(target=serve, args=(raw, ctx, a.record, a.lag), daemon=True).start()


# ---------------------------------------------------------------- client

def frame(ftype, flags, sid, payload=b''):
    return struct.pack('>I', len(payload))[1:] + bytes([ftype, flags]) + struct.pack('>I', sid) + payload


def connect(a, rcvbuf=None):
    host, port = a.proxy.rsplit(':', 1)
    raw = socket.socket()
    if rcvbuf:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    raw.settimeout(10)
    raw.connect((host, int(port)))
    raw.sendall(b'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' % (a.target.encode(), a.target.encode()))
    head = b''
    while b'\r\n\r\n' not in head:
        d = raw.recv(1)
        if not d:
            out('closed')
            sys.exit(2)
        head += d
    if b' 200' not in head.split(b'\r\n')[0]:
        out('connect %s' % esc(head.split(b'\r\n')[0]))
        sys.exit(2)
    ctx = ssl.create_default_context(cafile=a.cafile)
    ctx.set_alpn_protocols(['h2'])
    sock = ctx.wrap_socket(raw, server_hostname=a.target.rsplit(':', 1)[0])
    if sock.selected_alpn_protocol() != 'h2':
        out('alpn %s' % sock.selected_alpn_protocol())
        sys.exit(3)
    return sock


class Reader:
    """Reads frames, prints facts, acknowledges DATA with big windows."""

    def __init__(self, sock):
        import hpack
        self.sock = sock
        self.dec = hpack.Decoder()
        self.dec.max_header_list_size = 1 << 24
        self.buf = b''
        self.body = {}
        self.ended = set()
        self.resets = 0
        self.done = False
        self.block = None
        self.timed = False
        self.t0 = time.monotonic()

    def step(self, timeout):
        self.sock.settimeout(timeout)
        try:
            d = self.sock.recv(65536)
        except (socket.timeout, ssl.SSLWantReadError):
            return
        except (OSError, ssl.SSLError):
            d = b''
        if not d:
            out('closed')
            self.done = True
            return
        self.buf += d
        while len(self.buf) >= 9:
            n = int.from_bytes(self.buf[:3], 'big')
            if len(self.buf) < 9 + n:
                break
            ftype, flags = self.buf[3], self.buf[4]
            sid = int.from_bytes(self.buf[5:9], 'big') & 0x7fffffff
            p = self.buf[9:9 + n]
            self.buf = self.buf[9 + n:]
            self.on(ftype, flags, sid, p)

    def on(self, ftype, flags, sid, p):
        if ftype == 0:  # DATA
            if flags & 0x8:
                p = p[1:len(p) - p[0]]
            self.body[sid] = self.body.get(sid, b'') + p
            if self.timed and p:
                out('stream %d data at %d ms: %s' % (sid, (time.monotonic() - self.t0) * 1000, esc(p)))
            if n := len(p):
                self.sock.sendall(frame(8, 0, 0, struct.pack('>I', n)) + frame(8, 0, sid, struct.pack('>I', n)))
            if flags & 1:
                self.end(sid)
        elif ftype in (1, 9):  # HEADERS, CONTINUATION
            if ftype == 1:
                if flags & 0x8:
                    p = p[1:len(p) - p[0]]
                if flags & 0x20:
                    p = p[5:]
                self.block = (sid, flags, p)
            else:
                self.block = (sid, self.block[1], self.block[2] + p)
            if flags & 0x4:
                bsid, bflags, blk = self.block
                fields = dict(self.dec.decode(blk, raw=True))
                st = fields.get(b':status')
                if st is not None and st.startswith(b'1'):
                    out('stream %d interim' % bsid)
                elif st is not None:
                    out('stream %d status %s' % (bsid, st.decode()))
                if bflags & 1:
                    self.end(bsid)
        elif ftype == 5:  # PUSH_PROMISE
            out('push_promise on stream %d' % sid)
        elif ftype == 3:  # RST_STREAM
            self.resets += 1
            out('stream %d reset %d' % (sid, int.from_bytes(p[:4], 'big')))
            self.ended.add(sid)
        elif ftype == 4 and not flags & 1:  # SETTINGS
            self.sock.sendall(frame(4, 1, 0))
        elif ftype == 6 and not flags & 1:  # PING
            self.sock.sendall(frame(6, 1, 0, p))
        elif ftype == 7:  # GOAWAY
            out('goaway %d %s' % (int.from_bytes(p[4:8], 'big'), esc(p[8:])))

    def end(self, sid):
        self.ended.add(sid)
        out('stream %d body %s' % (sid, esc(self.body.get(sid, b''))))
        out('stream %d end' % sid)


def client(a):
    import hpack

    enc = hpack.Encoder()
    enc.header_table_size = 0
    rcvbuf = 4096 if a.mode == 'split' else None
    sock = connect(a, rcvbuf)
    preface = b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' + frame(4, 0, 0, struct.pack('>HI', 2, 0) + struct.pack('>HI', 4, MAXWIN))
    preface += frame(8, 0, 0, struct.pack('>I', MAXWIN - 65535))
    sock.sendall(preface)
    r = Reader(sock)

    def get(sid, path, end=True, method='GET', extra=()):
        blk = enc.encode([(':method', method), (':scheme', 'https'), (':authority', a.target),
                          (':path', path)] + list(extra))
        return frame(1, 0x4 | (1 if end else 0), sid, blk)

    deadline = time.monotonic() + a.timeout
    want = []
    if a.mode == 'split':
        sock.sendall(get(1, '/split?x=' + a.args[0]) + get(3, '/bulk?n=' + a.args[1]))
        time.sleep(float(a.args[2]))
        want = [1, 3]
    elif a.mode == 'madeyoureset':
        n = int(a.args[0])
        sid = 1
        t0 = time.monotonic()
        sent = 0
        for i in range(n):
            try:
                sock.sendall(get(sid, '/hello?t=myr%d' % i, False, 'POST', [('content-length', '1')]) +
                             frame(0, 1, sid, b'xx'))
            except (OSError, ssl.SSLError):
                out('closed')
                break
            sid += 2
            sent += 1
            # at most 50 open at once (the server allows 100)
            while not r.done and i + 1 - len(r.ended) >= 50 and time.monotonic() < deadline:
                r.step(0.05)
            if r.done:
                break
        # how fast the streams went (a loaded machine can pace them
        # below the limit being tested)
        out('sent %d in %.2f s' % (sent, time.monotonic() - t0))
        if not r.done:
            try:
                sock.sendall(get(sid, '/hello?t=after'))
                want = [sid]
            except (OSError, ssl.SSLError):
                r.done = True
    elif a.mode == 'interim':
        sock.sendall(get(1, '/interim?n=' + a.args[0]))
        want = [1]
    elif a.mode == 'get':
        r.timed = True
        sock.sendall(get(1, a.args[0]))
        want = [1]
    elif a.mode == 'cut0':
        sock.sendall(get(1, a.args[0], False, 'POST') + frame(0, 0, 1, b'xx'))
        end = time.monotonic() + 0.3
        while not r.done and time.monotonic() < end:
            r.step(0.05)
        sock.sendall(frame(3, 0, 1, struct.pack('>I', 0)) + get(3, '/hello?t=after-cut0'))
        want = [3]
    elif a.mode == 'cutend0':
        sock.sendall(get(1, a.args[0]))
        end = time.monotonic() + 0.3
        while not r.done and time.monotonic() < end:
            r.step(0.05)
        sock.sendall(frame(3, 0, 1, struct.pack('>I', 0)) + get(3, '/hello?t=after-cutend0'))
        want = [3]
    elif a.mode == 'cuthead0':
        blk = get(1, a.args[0])[9:]
        sock.sendall(frame(1, 0x1, 1, blk[:len(blk) // 2]) + frame(3, 0, 1, struct.pack('>I', 0)))
        want = [1]
    elif a.mode == 'connect':
        blk = enc.encode([(':method', 'CONNECT'), (':authority', a.target)])
        sock.sendall(frame(1, 0x5, 1, blk))
        want = [1]
    elif a.mode == 'protocol':
        blk = enc.encode([(':method', 'CONNECT'), (':protocol', 'websocket'), (':scheme', 'https'),
                          (':path', '/hello?t=xconnect'), (':authority', a.target)])
        sock.sendall(frame(1, 0x5, 1, blk))
        want = [1]
    while not r.done and not all(s in r.ended for s in want):
        if time.monotonic() > deadline:
            out('timeout')
            break
        r.step(0.2)
    if a.mode == 'madeyoureset':
        end = time.monotonic() + 1
        while not r.done and time.monotonic() < end:
            r.step(0.1)
    out('resets %d' % r.resets)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='role', required=True)
    u = sub.add_parser('upstream')
    u.add_argument('--cert', required=True)
    u.add_argument('--key', required=True)
    u.add_argument('--record', required=True)
    u.add_argument('--lag', type=int, default=0)
    c = sub.add_parser('client')
    c.add_argument('--proxy', required=True)
    c.add_argument('--target', required=True)
    c.add_argument('--cafile', required=True)
    c.add_argument('--timeout', type=float, default=30)
    c.add_argument('mode')
    c.add_argument('args', nargs='*')
    a = ap.parse_args()
    if a.role == 'upstream':
        upstream(a)
    else:
        client(a)


if __name__ == '__main__':
    main()
