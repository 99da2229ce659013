#!/usr/bin/python3
"""pv-h2-upstream.py - the HTTP/2 upstream of the integration tests (suite h2).

An HTTP/2 server over TLS (ALPN h2 only), written on python3-h2, that
records every frame-level event it receives, complete request or not, so a
test can say "nothing of this stream reached the upstream".

    pv-h2-upstream.py --cert PEM --key KEY --record FILE [--listen 127.0.0.1:0]
                      [--max-streams N]

Prints "listening on 127.0.0.1:PORT" once it accepts connections.

Record (FILE, appended, flushed per event; N the connection number from 1,
S the stream id):
    === conn N alpn PROTO            the TLS handshake's ALPN ("none": not h2,
                                     the connection is closed)
    === conn N stream S headers      then one "name: value" line per field as
                                     received (bytes other than printable
                                     ASCII written as \\xHH), then an empty line
    === conn N stream S data LEN     then the first bytes of the frame (at most
                                     64 KiB per stream in all, escaped as
                                     above), then "\\n"
    === conn N stream S trailers     fields as for headers
    === conn N stream S end          END_STREAM: the request is complete
    === conn N stream S reset CODE   RST_STREAM from the peer
    === conn N stream S sent N       every 4 MiB of a response body written
    === conn N stream S response-sent  the whole response was written to the
                                     socket (the kernel took it)
    === conn N goaway CODE           GOAWAY from the peer
    === conn N closed                the connection ended
Inbound header validation is off: whatever the proxy sends is recorded.

Endpoints (the path before '?'); every response has x-upstream-conn: N and
x-upstream-stream: S:
    /hello            200 "hello\\n"
    /echo             after END_STREAM: 200, body = each request field as
                      "name: value\\n", an empty line, then the request body
    /sink             reads the body (any size), replies "N\\n" (its length)
    /bytes/N          N bytes of the pattern 0-9a-zA-Z\\n, content-length N
    /status/N         status N, body "status N\\n"
    /delay/MS         200 "delayed MS\\n" after MS ms
    /cut?x=HEX        200, content-length for more than comes: "cut:", the
                      bytes HEX encodes, then right away (no pause)
                      RST_STREAM INTERNAL_ERROR
    /reflect?x=HEX    VALUE = the bytes HEX encodes: 200 with header
                      x-reflect: VALUE, content-length, the body
                      "reflect:VALUE\\n" in DATA frames of one byte each for
                      VALUE, and the trailer x-reflect-trailer: VALUE
    /drip?x=HEX&ms=N&k=K
                      200, content-length, the body "drip:VALUE\n" (VALUE
                      as for /reflect) with VALUE in DATA frames of K bytes
                      sent N ms apart: a streaming upstream whose pauses
                      are shorter than the proxy's hold; &fill=N: VALUE is
                      N bytes of the pattern of /bytes/N instead
    /fields?k=v..     200 "ok\\n" with a field k: v per pair (percent-decoded,
                      names lowered)
    /fieldname?x=HEX  200 "ok\\n" with the field x-VALUE: 1, VALUE the bytes HEX
                      encodes in lower case (a value echoed in a name);
                      &in=trailer: in a trailer block instead, &in=interim:
                      as link: <https://VALUE.example/> of a 103 first
    /coded?enc=E&x=HEX[&field=F]
                      200 with content-encoding: E (or the field F, such
                      as grpc-encoding; %20 in E a space) and
                      the body "coded:VALUE\\n" (VALUE as for /reflect),
                      gzip-compressed unless E is identity: an upstream that
                      codes although asked for identity
    /charset?cs=NAME&x=HEX
                      200 with content-type: text/plain; charset=NAME and the
                      body "charset:VALUE\n" (VALUE as for /reflect) in that
                      charset (Python's codec of that name): a server that
                      answers in the charset the client's Accept named;
                      &label=0: content-type text/plain, no charset named
    /slowecho?n=N&ms=M
                      200 at once (no content-length), then the request
                      body echoed as it comes, N bytes at a time, each
                      piece M ms after the one before (the last one at
                      END_STREAM, which ends the response): an upstream
                      that reads its input slowly, in pieces of its size
    /stall            stops reading the connection (for 30 s): an upstream
                      that does not read a large upload
    anything else     404
The server's SETTINGS: MAX_CONCURRENT_STREAMS 1000 (--max-streams N: N), INITIAL_WINDOW_SIZE
2^31-1 and a connection window of 2^31-1, and it acknowledges every DATA
frame at once: only TCP back-pressure limits a sender (/stall stops even
that).
"""
import argparse
import faulthandler
import gzip
import os
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

MAXWIN = 2**31 - 1
RECORD_CAP = 65536

record_lock = threading.Lock()
record_file = None
max_streams = 1000
conn_counter = [0]


def esc(b):
    out = []
    for c in b:
        if 0x20 <= c < 0x7f and c != 0x5c:
            out.append(chr(c))
        else:
            out.append('\\x%02x' % c)
    return ''.join(out)


def record(text):
    with record_lock:
        record_file.write(text)
        record_file.flush()


def fields_text(headers):
    return ''.join('%s: %s\n' % (esc(n), esc(v)) for n, v in headers) + '\n'


def pattern(n):
    base = b'0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\n'
    return (base * (n // len(base) + 1))[:n]


class Stream:
    def __init__(self, sid, headers):
        self.sid = sid
        self.headers = headers
        self.body = bytearray()
        self.recorded = 0
        self.ended = False
        self.responded = False
        # outgoing: list of (bytes, one_frame_each) pieces, then trailers
        self.out = []
        self.trailers = None
        self.done = False
        self.due = None  # time.monotonic() of a delayed response
        self.sent = 0  # body bytes handed to the socket
        self.cut_after = None  # /cut: reset the stream after this many pieces
        self.gap = 0.0  # /drip: seconds between two frames of its value
        self.next_t = 0.0  # /drip: time.monotonic() of the next frame
        self.last_t = None  # /drip: time.monotonic() of the value's last frame
        self.drip_k = 1  # /drip: bytes of the value per frame
        self.slow = None  # /slowecho: (bytes per piece, seconds between pieces)
        self.echoed = 0  # /slowecho: body bytes echoed so far

    def get(self, name):
        for n, v in self.headers:
            if n == name:
                return v
        return None


class Conn:
    def __init__(self, sock, n):
        self.sock = sock
        self.n = n
        cfg = h2.config.H2Configuration(client_side=False, header_encoding=None,
                                        validate_inbound_headers=False,
                                        normalize_inbound_headers=False,
                                        validate_outbound_headers=False)
        self.h2 = h2.connection.H2Connection(config=cfg)
        self.streams = {}
        self.stalled = False

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            # blocking: a peer that does not read holds this thread here
            # (the read timeout must not cut a frame in two)
            self.sock.settimeout(None)
            try:
                self.sock.sendall(data)
            finally:
                self.sock.settimeout(0.05)

    def respond(self, st, status, body=b'', extra=(), trailers=None, one_byte=None):
        hdrs = [(b':status', str(status).encode()), (b'content-type', b'text/plain'),
                (b'x-upstream-conn', str(self.n).encode()),
                (b'x-upstream-stream', str(st.sid).encode())] + list(extra)
        if one_byte is None:
            pieces = [(body, False)]
            length = len(body)
        else:
            pieces = one_byte
            length = sum(len(p) for p, _ in pieces)
        hdrs.append((b'content-length', str(length).encode()))
        st.responded = True
        self.h2.send_headers(st.sid, hdrs, end_stream=(length == 0 and trailers is None))
        if length == 0 and trailers is None:
            st.done = True
            self.flush()
            record('=== conn %d stream %d response-sent\n' % (self.n, st.sid))
            return
        # memoryviews: taking a frame off a 64 MiB body must not copy the rest
        st.out = [(memoryview(p), one) for p, one in pieces if p]
        st.trailers = trailers

    def pump(self):
        """Sends what the flow-control windows allow."""
        for st in list(self.streams.values()):
            if st.done or not st.responded:
                continue
            try:
                while st.out:
                    if st.cut_after is not None and st.cut_after == 0:
                        # at once: after a pause of 100 ms at a frame
                        # boundary the proxy may release what it holds
                        self.h2.reset_stream(st.sid, error_code=2)
                        st.out = []
                        st.trailers = None
                        record('=== conn %d stream %d cut\n' % (self.n, st.sid))
                        break
                    data, one = st.out[0]
                    win = min(self.h2.local_flow_control_window(st.sid),
                              self.h2.max_outbound_frame_size)
                    if win <= 0:
                        break
                    if one and st.gap > 0:
                        # /drip: one frame of the value, then a pause
                        now = time.monotonic()
                        if now < st.next_t:
                            break
                        # A pause this long is not the pacing but this
                        # process not run (a loaded machine): said in the
                        # record, so a test can tell the proxy releasing
                        # held bytes after a real pause of the upstream
                        # (100 ms) from one that cut a value without it.
                        if st.last_t is not None and now - st.last_t >= 0.08:
                            record('=== conn %d stream %d drip paused %d ms\n'
                                   % (self.n, st.sid, int((now - st.last_t) * 1000)))
                        st.last_t = now
                        st.next_t = now + st.gap
                    n = (st.drip_k if st.gap > 0 else 1) if one else min(win, len(data))
                    # a frame of K bytes waits for a window that takes it
                    # (more than the window is a flow-control error)
                    n = min(n, len(data), win)
                    last = n == len(data) and len(st.out) == 1 and st.trailers is None
                    self.h2.send_data(st.sid, bytes(data[:n]), end_stream=last)
                    before, st.sent = st.sent, st.sent + n
                    if before >> 22 != st.sent >> 22:
                        record('=== conn %d stream %d sent %d\n' % (self.n, st.sid, st.sent))
                    if n == len(data):
                        st.out.pop(0)
                        if st.cut_after is not None:
                            st.cut_after -= 1
                    else:
                        st.out[0] = (data[n:], one)
                    self.flush()
                if not st.out and st.cut_after == 0:
                    st.done = True
                elif not st.out:
                    if st.trailers is not None:
                        self.h2.send_headers(st.sid, st.trailers, end_stream=True)
                    st.done = True
                    self.flush()
                    record('=== conn %d stream %d response-sent\n' % (self.n, st.sid))
            except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError, KeyError):
                st.done = True
        self.flush()

    def slow_pump(self):
        """/slowecho: the next piece of each stream's body, when its time came."""
        now = time.monotonic()
        for st in self.streams.values():
            if st.slow is None or st.done or now < st.next_t:
                continue
            size, gap = st.slow
            left = len(st.body) - st.echoed
            if left >= size or (st.ended and left > 0):
                piece = bytes(st.body[st.echoed:st.echoed + size])
                st.echoed += len(piece)
                st.next_t = now + gap
                self.h2.send_data(st.sid, piece, end_stream=st.ended and st.echoed == len(st.body))
            elif st.ended:
                self.h2.send_data(st.sid, b'', end_stream=True)
            else:
                continue
            if st.ended and st.echoed == len(st.body):
                st.done = True
                record('=== conn %d stream %d response-sent\n' % (self.n, st.sid))
            self.flush()

    def handle_request(self, st):
        path = (st.get(b':path') or b'').decode('latin-1')
        base, _, query = path.partition('?')
        args = dict(kv.partition('=')[::2] for kv in query.split('&') if kv)
        if base == '/hello':
            self.respond(st, 200, b'hello\n')
        elif base == '/echo':
            self.respond(st, 200, fields_text(st.headers).encode('latin-1') + bytes(st.body))
        elif base == '/sink':
            self.respond(st, 200, b'%d\n' % len(st.body))
        elif base.startswith('/bytes/'):
            self.respond(st, 200, pattern(int(base[7:])))
        elif base.startswith('/status/'):
            code = int(base[8:])
            self.respond(st, code, b'status %d\n' % code)
        elif base == '/cut':
            # 200 with a content-length for more than is sent: "cut:" then
            # the bytes HEX encodes, then RST_STREAM (an upstream that ends
            # in the middle of a value)
            value = bytes.fromhex(args.get('x', ''))
            self.respond(st, 200, extra=[], one_byte=[(b'cut:', False), (value, False), (b'never sent', False)])
            st.cut_after = 2
        elif base == '/drip':
            value = pattern(int(args['fill'])) if 'fill' in args else bytes.fromhex(args.get('x', ''))
            st.gap = int(args.get('ms', '10')) / 1000.0
            st.drip_k = max(1, int(args.get('k', '1')))
            self.respond(st, 200, one_byte=[(b'drip:', False), (value, True), (b'\n', False)])
        elif base == '/coded':
            value = bytes.fromhex(args.get('x', ''))
            enc = args.get('enc', 'gzip').replace('%20', ' ')
            body = b'coded:' + value + b'\n'
            if enc != 'identity':
                body = gzip.compress(body)
            field = args.get('field', 'content-encoding').encode('latin-1')
            self.respond(st, 200, body, extra=[(field, enc.encode('latin-1'))])
        elif base == '/charset':
            cs = args.get('cs', 'utf-8')
            body = (b'charset:' + bytes.fromhex(args.get('x', '')) + b'\n').decode('latin-1').encode(cs)
            label = b'' if args.get('label') == '0' else b'; charset=' + cs.encode('latin-1')
            self.respond(st, 200, body, extra=[(b'content-type', b'text/plain' + label)])
        elif base == '/fields':
            extra = []
            for kv in query.split('&'):
                k, _, v = kv.partition('=')
                if k:
                    extra.append((urllib.parse.unquote(k).lower().encode('latin-1'),
                                  urllib.parse.unquote(v).encode('latin-1')))
            self.respond(st, 200, b'ok\n', extra=extra)
        elif base == '/fieldname':
            # the bytes HEX encodes, lower-cased, in a field's name (as an
            # HTTP/2 server writes every name): x-VALUE: 1, body "ok\n"
            # in=trailer: in a trailer block instead; in=interim: in a 103
            # before the final head
            value = bytes.fromhex(args.get('x', '')).lower()
            where = args.get('in', '')
            if where == 'trailer':
                self.respond(st, 200, b'ok\n', trailers=[(b'x-' + value, b'1')])
            elif where == 'interim':
                self.h2.send_headers(st.sid, [(b':status', b'103'), (b'link', b'<https://' + value + b'.example/>')])
                self.respond(st, 200, b'ok\n')
            else:
                self.respond(st, 200, b'ok\n', extra=[(b'x-' + value, b'1')])
        elif base.startswith('/reflect'):
            value = bytes.fromhex(args.get('x', ''))
            pieces = [(b'reflect:', False)] + [(bytes([c]), True) for c in value] + [(b'\n', False)]
            self.respond(st, 200, extra=[(b'x-reflect', value)],
                         trailers=[(b'x-reflect-trailer', value)], one_byte=pieces)
        else:
            self.respond(st, 404, b'not found\n')

    def on_headers(self, ev):
        sid = ev.stream_id
        if sid in self.streams:
            record('=== conn %d stream %d trailers\n%s' % (self.n, sid, fields_text(ev.headers)))
            return
        st = Stream(sid, ev.headers)
        self.streams[sid] = st
        record('=== conn %d stream %d headers\n%s' % (self.n, sid, fields_text(ev.headers)))
        path = (st.get(b':path') or b'').decode('latin-1')
        if (st.get(b'expect') or b'').lower() == b'100-continue' and not ev.stream_ended:
            # an interim 100 before the body, as pv-upstream answers one
            self.h2.send_headers(sid, [(b':status', b'100')])
            self.flush()
        if path.startswith('/slowecho'):
            args = dict(kv.partition('=')[::2] for kv in path.partition('?')[2].split('&') if kv)
            st.slow = (max(1, int(args.get('n', '16384'))), int(args.get('ms', '250')) / 1000.0)
            st.next_t = time.monotonic()
            self.h2.send_headers(sid, [(b':status', b'200'), (b'content-type', b'application/octet-stream'),
                                       (b'x-upstream-conn', str(self.n).encode()),
                                       (b'x-upstream-stream', str(sid).encode())])
            self.flush()
        elif path.startswith('/stall'):
            self.stalled = True
        elif path.startswith('/delay/'):
            st.due = time.monotonic() + int(path[7:].partition('?')[0]) / 1000.0

    def on_end(self, sid):
        st = self.streams.get(sid)
        record('=== conn %d stream %d end\n' % (self.n, sid))
        if st is None:
            return
        st.ended = True
        if st.due is None and st.slow is None and not (st.get(b':path') or b'').startswith(b'/stall'):
            self.handle_request(st)

    def events(self, evs):
        for ev in evs:
            if isinstance(ev, h2.events.RequestReceived):
                self.on_headers(ev)
            elif isinstance(ev, h2.events.TrailersReceived):
                record('=== conn %d stream %d trailers\n%s' % (self.n, ev.stream_id, fields_text(ev.headers)))
            elif isinstance(ev, h2.events.DataReceived):
                st = self.streams.get(ev.stream_id)
                room = 0
                if st is not None:
                    st.body += ev.data
                    room = max(0, RECORD_CAP - st.recorded)
                    st.recorded += min(room, len(ev.data))
                record('=== conn %d stream %d data %d\n%s\n' % (self.n, ev.stream_id, len(ev.data),
                                                               esc(ev.data[:room])))
                if ev.flow_controlled_length:
                    try:
                        self.h2.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                    except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                        pass
            elif isinstance(ev, h2.events.StreamEnded):
                self.on_end(ev.stream_id)
            elif isinstance(ev, h2.events.StreamReset):
                record('=== conn %d stream %d reset %d\n' % (self.n, ev.stream_id, int(ev.error_code)))
                st = self.streams.get(ev.stream_id)
                if st is not None:
                    st.done = True
            elif isinstance(ev, h2.events.ConnectionTerminated):
                record('=== conn %d goaway %d\n' % (self.n, int(ev.error_code)))

    def run(self):
        self.h2.local_settings = h2.settings.Settings(client=False, initial_values={
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: max_streams,
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: MAXWIN,
            h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: 1 << 20,
        })
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(MAXWIN - 65535)
        self.flush()
        self.sock.settimeout(0.05)
        while True:
            if self.stalled:
                time.sleep(30)
                return
            # a paced /drip stream needs the loop more often than 50 ms
            self.sock.settimeout(0.002 if any((st.gap > 0 and st.out) or (st.slow and not st.done)
                                              for st in self.streams.values()) else 0.05)
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, ssl.SSLWantReadError):
                data = None
            if data is not None and not data:
                return
            if data:
                try:
                    self.events(self.h2.receive_data(data))
                except h2.exceptions.ProtocolError as e:
                    record('=== conn %d protocol-error %s\n' % (self.n, esc(str(e).encode())))
                    self.flush()
                    return
            now = time.monotonic()
            for st in list(self.streams.values()):
                if st.due is not None and now >= st.due and not st.responded:
                    st.due = None
                    ms = (st.get(b':path') or b'').decode('latin-1')[7:].partition('?')[0]
                    self.respond(st, 200, b'delayed %s\n' % ms.encode())
            self.pump()
            self.slow_pump()
            for sid in [s for s, st in self.streams.items() if st.done]:
                del self.streams[sid]


def serve(raw, ctx):
    with record_lock:
        conn_counter[0] += 1
        n = conn_counter[0]
    try:
        raw.settimeout(10)
        sock = ctx.wrap_socket(raw, server_side=True)
    except (OSError, ssl.SSLError) as e:
        record('=== conn %d tls-error %s\n' % (n, esc(str(e).encode())))
        raw.close()
        return
    proto = sock.selected_alpn_protocol()
    record('=== conn %d alpn %s\n' % (n, proto or 'none'))
    try:
        if proto == 'h2':
            Conn(sock, n).run()
    except (OSError, ssl.SSLError, h2.exceptions.ProtocolError) as e:
        record('=== conn %d error %s\n' % (n, esc(str(e).encode())))
    finally:
        record('=== conn %d closed\n' % n)
        try:
            sock.close()
        except OSError:
            pass


def main():
    global record_file, max_streams
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # where a thread is stuck
    ap = argparse.ArgumentParser()
    ap.add_argument('--cert', required=True)
    ap.add_argument('--key', required=True)
    ap.add_argument('--record', required=True)
    ap.add_argument('--listen', default='127.0.0.1:0')
    ap.add_argument('--max-streams', type=int, default=1000)
    a = ap.parse_args()
    max_streams = a.max_streams
    record_file = open(a.record, 'a', encoding='latin-1')
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ctx.set_alpn_protocols(['h2'])
    host, port = a.listen.rsplit(':', 1)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, int(port)))
    ls.listen(128)
    print('listening on %s:%d' % ls.getsockname(), flush=True)
    while True:
        raw, _ = ls.accept()
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve, args=(raw, ctx), daemon=True).start()


if __name__ == '__main__':
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
