#!/usr/bin/python3
"""pv-h2-client.py - a raw HTTP/2 client for the integration tests (suite h2).

Written on hyperframe and hpack (python3-h2's framing and header
compression) rather than on h2's state machine, so that it can put on the
wire what a well-behaved client never would: connection-specific fields,
CR/LF/NUL in values, a content-length that disagrees with the DATA, more
streams than the peer allows, CONTINUATION floods, rapid resets, DATA frames
of one byte, and a peer that stops reading.

    pv-h2-client.py [--proxy HOST:PORT | --proxy -] --target HOST:PORT
                    --cafile PEM [--sni NAME] [--alpn h2,...] [--timeout S]
                    MODE [ARG...]

--proxy -: connect to the target directly (to prove a test's plumbing
against the upstream alone); otherwise a CONNECT to the proxy first. TLS
verifies the certificate against --cafile; ALPN offers --alpn (default h2).
If the server does not select h2, prints "alpn NAME" and exits 3.

Modes:
  req SPEC...        one stream per SPEC (JSON), all opened on one
                     connection before any response is read:
                       {"method": "GET", "path": "/hello",
                        "authority": "H:P" (default --target),
                        "headers": [["name", "value"], ...] (after the
                                   pseudo-fields; values may hold any byte),
                        "raw": [["name", "value"], ...] (the whole field
                                   list as given, pseudo-fields included),
                        "data": ["piece", ...] (each piece its own DATA
                                   frame, latin-1),
                        "trailers": [["name", "value"], ...] (a HEADERS
                                   frame with END_STREAM after the DATA),
                        "end": true (END_STREAM on the last frame),
                        "wait100": true (after the HEADERS, waits up
                                   to 10 s for an interim response,
                                   printed "stream S interim CODE",
                                   before the DATA),
                        "cancel": true (RST_STREAM CANCEL right after
                                   the stream's frames; not waited for),
                        "after_ms": N (reads what arrives for N ms
                                   before the stream opens)}
  concurrency N PATH N GETs of PATH at once, ignoring the server's
                     SETTINGS_MAX_CONCURRENT_STREAMS
  continuation N PATH  a HEADERS for PATH without END_HEADERS, then N
                     CONTINUATION frames of 64-byte fields, never ending
  rapidreset N PATH  N times: HEADERS (GET PATH, END_STREAM) then RST_STREAM
                     (CANCEL) on the same stream; then a GET of /hello
  noread PATH        a GET with windows of 2^31-1, reads up to the response
                     headers, then stops reading the socket (prints
                     "stalled", then sleeps until killed or --timeout)
  pause FILE SPEC SPEC  a stream per SPEC (as req) on one connection: the
                     first, then once it ended "paused" and a wait until
                     FILE exists (the test acts meanwhile; at most
                     --timeout), then the second
  upload PATH BYTES  a POST of BYTES bytes, sent as fast as the windows
                     allow (prints "sent N" every MiB); blocks when the
                     peer stops reading, until --timeout

Output, one fact per line:
  alpn h2
  settings NAME VALUE           each setting of the server's first SETTINGS
  stream S status CODE
  stream S header NAME: VALUE   response fields (non-printable bytes as \\xHH)
  stream S trailer NAME: VALUE
  stream S body-len N
  stream S body TEXT            the body, escaped like the fields
  stream S end                  END_STREAM received
  stream S reset CODE NAME      RST_STREAM received
  stream S partial-body TEXT    what DATA came before it
  goaway CODE NAME last S debug TEXT
  closed                        the server closed the connection
  timeout                       --timeout passed before everything ended
"""
import argparse
import json
import os
import socket
import ssl
import sys
import time

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame,
                              PingFrame, RstStreamFrame, SettingsFrame, WindowUpdateFrame)

MAXWIN = 2**31 - 1
ERRORS = {0: 'NO_ERROR', 1: 'PROTOCOL_ERROR', 2: 'INTERNAL_ERROR', 3: 'FLOW_CONTROL_ERROR',
          4: 'SETTINGS_TIMEOUT', 5: 'STREAM_CLOSED', 6: 'FRAME_SIZE_ERROR', 7: 'REFUSED_STREAM',
          8: 'CANCEL', 9: 'COMPRESSION_ERROR', 10: 'CONNECT_ERROR', 11: 'ENHANCE_YOUR_CALM',
          12: 'INADEQUATE_SECURITY', 13: 'HTTP_1_1_REQUIRED'}
SETTINGS = {1: 'header_table_size', 2: 'enable_push', 3: 'max_concurrent_streams',
            4: 'initial_window_size', 5: 'max_frame_size', 6: 'max_header_list_size'}


def esc(b):
    return ''.join(chr(c) if 0x20 <= c < 0x7f and c != 0x5c else '\\x%02x' % c for c in b)


def out(line):
    sys.stdout.write(line + '\n')
    sys.stdout.flush()


class Closed(Exception):
    pass


class Client:
    def __init__(self, sock, authority, huge=False):
        self.sock = sock
        self.authority = authority
        self.enc = hpack.Encoder()
        # No dynamic table: every block stands alone, so a stream the peer
        # refuses cannot leave the two tables out of step.
        self.enc.header_table_size = 0
        self.dec = hpack.Decoder()
        self.dec.max_header_list_size = 1 << 24
        self.buf = b''
        self.conn_win = 65535
        self.peer_initial = 65535
        self.max_frame = 16384
        self.win = {}
        self.streams = {}
        self.next_sid = 1
        self.goaway = None
        self.closed = False
        self.got_settings = False
        self.peer_max_streams = None  # the server's SETTINGS_MAX_CONCURRENT_STREAMS
        self.block = None  # (sid, flags, bytes) of HEADERS awaiting END_HEADERS
        self.read_enabled = True
        self.huge = huge
        self.write_timeout = 20
        settings = {2: 0, 4: MAXWIN if huge else 65535}
        self.send_raw(b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' + SettingsFrame(0, settings=settings).serialize())
        if huge:
            self.send(WindowUpdateFrame(0, window_increment=MAXWIN - 65535))

    def send_raw(self, data):
        try:
            self.sock.settimeout(self.write_timeout)
            self.sock.sendall(data)
        except (OSError, ssl.SSLError) as e:
            raise Closed(str(e))

    def send(self, frame):
        self.send_raw(frame.serialize())

    def new_stream(self):
        sid = self.next_sid
        self.next_sid += 2
        self.win[sid] = self.peer_initial
        self.streams[sid] = {'status': None, 'body': b'', 'ended': False, 'reset': None}
        return sid

    def fields(self, spec):
        if 'raw' in spec:
            f = [(n.encode('latin-1'), v.encode('latin-1')) for n, v in spec['raw']]
        else:
            f = [(b':method', spec.get('method', 'GET').encode()), (b':scheme', b'https'),
                 (b':authority', spec.get('authority', self.authority).encode('latin-1')),
                 (b':path', spec.get('path', '/').encode('latin-1'))]
            f += [(n.encode('latin-1'), v.encode('latin-1')) for n, v in spec.get('headers', [])]
        return f

    def send_headers(self, sid, fields, end_stream, end_headers=True):
        block = self.enc.encode(fields, huffman=True)
        flags = (['END_STREAM'] if end_stream else []) + (['END_HEADERS'] if end_headers else [])
        self.send(HeadersFrame(sid, data=block, flags=flags))

    def send_data(self, sid, data, end_stream, one_frame=False, deadline=None):
        """One frame if one_frame (the windows permitting), else as many as needed."""
        while True:
            room = min(self.conn_win, self.win.get(sid, 0), self.max_frame)
            if self.streams[sid]['reset'] is not None or self.goaway is not None or self.closed:
                return False
            if room <= 0 or (one_frame and room < len(data)):
                if deadline is not None and time.monotonic() > deadline:
                    return False
                self.read(0.5)
                continue
            n = min(room, len(data))
            last = end_stream and n == len(data)
            self.send(DataFrame(sid, data=data[:n], flags=['END_STREAM'] if last else []))
            self.conn_win -= n
            self.win[sid] -= n
            data = data[n:]
            if not data:
                return True

    def request(self, spec):
        if spec.get('after_ms'):
            deadline = time.monotonic() + spec['after_ms'] / 1000.0
            while not self.closed and time.monotonic() < deadline:
                self.read(max(0.01, deadline - time.monotonic()))
        sid = self.new_stream()
        data = [d.encode('latin-1') for d in spec.get('data', [])]
        trailers = [(n.encode('latin-1'), v.encode('latin-1')) for n, v in spec.get('trailers', [])]
        end = spec.get('end', True)
        self.send_headers(sid, self.fields(spec), end_stream=end and not data and not trailers)
        if spec.get('wait100'):
            deadline = time.monotonic() + 10
            while (not self.streams[sid].get('interim') and self.streams[sid]['reset'] is None and
                   not self.streams[sid]['ended'] and not self.closed and time.monotonic() < deadline):
                self.read(0.2)
        for i, d in enumerate(data):
            if not self.send_data(sid, d, end and not trailers and i == len(data) - 1, one_frame=True,
                                  deadline=time.monotonic() + 10):
                return sid
        if trailers and self.streams[sid]['reset'] is None and not self.closed:
            self.send_headers(sid, trailers, end_stream=True)
        if spec.get('cancel'):
            self.send(RstStreamFrame(sid, error_code=8))
            self.streams[sid]['ended'] = True
        return sid

    # -- reading ---------------------------------------------------------
    def read(self, timeout):
        """Reads and handles what arrives within timeout seconds (at least one recv)."""
        if self.closed or not self.read_enabled:
            time.sleep(timeout)
            return
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except (socket.timeout, ssl.SSLWantReadError):
            return
        except (OSError, ssl.SSLError):
            data = b''
        if not data:
            self.closed = True
            return
        self.buf += data
        while len(self.buf) >= 9:
            length = int.from_bytes(self.buf[:3], 'big')
            if len(self.buf) < 9 + length:
                break
            frame, _ = Frame.parse_frame_header(memoryview(self.buf[:9]))
            frame.parse_body(memoryview(self.buf[9:9 + length]))
            self.buf = self.buf[9 + length:]
            self.on_frame(frame)

    def on_frame(self, f):
        if isinstance(f, SettingsFrame):
            if 'ACK' in f.flags:
                return
            for k, v in f.settings.items():
                if not self.got_settings:
                    out('settings %s %d' % (SETTINGS.get(k, str(k)), v))
                if k == 3:
                    self.peer_max_streams = v
                if k == 4:
                    for sid in self.win:
                        self.win[sid] += v - self.peer_initial
                    self.peer_initial = v
                elif k == 5:
                    self.max_frame = v
            self.got_settings = True
            self.send(SettingsFrame(0, flags=['ACK']))
        elif isinstance(f, PingFrame):
            if 'ACK' not in f.flags:
                self.send(PingFrame(0, opaque_data=f.opaque_data, flags=['ACK']))
        elif isinstance(f, WindowUpdateFrame):
            if f.stream_id == 0:
                self.conn_win += f.window_increment
            elif f.stream_id in self.win:
                self.win[f.stream_id] += f.window_increment
        elif isinstance(f, HeadersFrame):
            self.block = (f.stream_id, set(f.flags), f.data)
            if 'END_HEADERS' in f.flags:
                self.end_block()
        elif isinstance(f, ContinuationFrame):
            if self.block is not None:
                self.block = (self.block[0], self.block[1], self.block[2] + f.data)
                if 'END_HEADERS' in f.flags:
                    self.end_block()
        elif isinstance(f, DataFrame):
            st = self.streams.get(f.stream_id)
            if st is not None:
                st['body'] += f.data
            if f.flow_controlled_length and not self.huge:
                self.send(WindowUpdateFrame(0, window_increment=f.flow_controlled_length))
                if 'END_STREAM' not in f.flags:
                    self.send(WindowUpdateFrame(f.stream_id, window_increment=f.flow_controlled_length))
            if 'END_STREAM' in f.flags and st is not None:
                self.finish(f.stream_id)
        elif isinstance(f, RstStreamFrame):
            st = self.streams.get(f.stream_id)
            out('stream %d reset %d %s' % (f.stream_id, f.error_code, ERRORS.get(f.error_code, '?')))
            if st is not None:
                st['reset'] = f.error_code
                if st['body']:
                    out('stream %d partial-body %s' % (f.stream_id, esc(st['body'])))
        elif isinstance(f, GoAwayFrame):
            self.goaway = f.error_code
            out('goaway %d %s last %d debug %s' % (f.error_code, ERRORS.get(f.error_code, '?'),
                                                   f.last_stream_id, esc(f.additional_data)))

    def end_block(self):
        sid, flags, data = self.block
        self.block = None
        fields = self.dec.decode(data, raw=True)
        st = self.streams.get(sid)
        if st is None:
            return
        status = dict(fields).get(b':status')
        if st['status'] is None and status is not None:
            if status.startswith(b'1'):
                st['interim'] = True
                out('stream %d interim %s' % (sid, status.decode('latin-1')))
                return
            st['status'] = int(status)
            out('stream %d status %d' % (sid, st['status']))
            for n, v in fields:
                if not n.startswith(b':'):
                    out('stream %d header %s: %s' % (sid, esc(n), esc(v)))
        else:
            for n, v in fields:
                out('stream %d trailer %s: %s' % (sid, esc(n), esc(v)))
        if 'END_STREAM' in flags:
            self.finish(sid)

    def finish(self, sid):
        st = self.streams[sid]
        st['ended'] = True
        out('stream %d body-len %d' % (sid, len(st['body'])))
        out('stream %d body %s' % (sid, esc(st['body'])))
        out('stream %d end' % sid)

    def wait(self, sids, timeout):
        deadline = time.monotonic() + timeout
        while True:
            pending = [s for s in sids if not self.streams[s]['ended'] and self.streams[s]['reset'] is None]
            if not pending or self.closed:
                break
            if self.goaway is not None and all(s > 0 for s in pending):
                # streams above last_stream_id will not be answered; give
                # the others a moment, then stop
                self.read(0.2)
                if self.closed:
                    break
            if time.monotonic() > deadline:
                out('timeout')
                return
            self.read(0.2)

    def drain(self, timeout):
        """Reads until the connection closes or timeout passes."""
        deadline = time.monotonic() + timeout
        while not self.closed and time.monotonic() < deadline:
            self.read(0.2)


def connect(a):
    if a.proxy == '-':
        host, port = a.target.rsplit(':', 1)
        s = socket.create_connection((host, int(port)), timeout=20)
    else:
        ph, pp = a.proxy.rsplit(':', 1)
        s = socket.create_connection((ph, int(pp)), timeout=20)
        s.sendall(b'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' % (a.target.encode(), a.target.encode()))
        head = b''
        while not head.endswith(b'\r\n\r\n'):
            c = s.recv(1)
            if not c:
                raise SystemExit('the proxy closed the connection during CONNECT: %r' % head)
            head += c
        if not head.startswith(b'HTTP/1.1 200'):
            raise SystemExit('CONNECT %s was answered %r' % (a.target, head))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ctx = ssl.create_default_context(cafile=a.cafile)
    ctx.set_alpn_protocols(a.alpn.split(','))
    sni = a.sni or a.target.rsplit(':', 1)[0]
    t = ctx.wrap_socket(s, server_hostname=sni)
    proto = t.selected_alpn_protocol()
    out('alpn %s' % (proto or 'none'))
    if proto != 'h2':
        sys.exit(3)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--proxy', required=True)
    ap.add_argument('--target', required=True)
    ap.add_argument('--cafile', required=True)
    ap.add_argument('--sni')
    ap.add_argument('--alpn', default='h2')
    ap.add_argument('--timeout', type=float, default=10)
    ap.add_argument('--queue', action='store_true',
                    help='req: keep at most the server\'s SETTINGS_MAX_CONCURRENT_STREAMS open, '
                         'queueing the others (as browsers and nghttp2 do); prints "max-open N"')
    ap.add_argument('mode')
    ap.add_argument('args', nargs='*')
    a = ap.parse_args()
    t = connect(a)
    huge = a.mode in ('noread',)
    c = Client(t, a.target, huge=huge)
    try:
        if a.mode == 'req' and a.queue:
            deadline = time.monotonic() + 5
            while not c.got_settings and time.monotonic() < deadline and not c.closed:
                c.read(0.2)
            specs, sids, most = list(a.args), [], 0
            deadline = time.monotonic() + a.timeout
            while (specs or any(not c.streams[s]['ended'] and c.streams[s]['reset'] is None for s in sids)) \
                    and not c.closed:
                if time.monotonic() > deadline:
                    out('timeout')
                    break
                limit = c.peer_max_streams if c.peer_max_streams is not None else 1 << 31
                live = sum(1 for s in sids if not c.streams[s]['ended'] and c.streams[s]['reset'] is None)
                while specs and live < limit:
                    sids.append(c.request(json.loads(specs.pop(0))))
                    live += 1
                most = max(most, live)
                c.read(0.05)
            out('max-open %d' % most)
        elif a.mode == 'req':
            sids = [c.request(json.loads(spec)) for spec in a.args]
            c.wait(sids, a.timeout)
        elif a.mode == 'concurrency':
            n, path = int(a.args[0]), a.args[1]
            # the server's SETTINGS first, so that the output names them
            deadline = time.monotonic() + 5
            while not c.got_settings and time.monotonic() < deadline and not c.closed:
                c.read(0.2)
            sids = [c.request({'path': path}) for _ in range(n)]
            c.wait(sids, a.timeout)
            ok = sum(1 for s in sids if c.streams[s]['status'] == 200 and c.streams[s]['ended'])
            refused = sum(1 for s in sids if c.streams[s]['reset'] is not None)
            out('summary ok %d reset %d of %d' % (ok, refused, n))
        elif a.mode == 'continuation':
            n, path = int(a.args[0]), a.args[1]
            sid = c.new_stream()
            c.send_headers(sid, c.fields({'path': path}), end_stream=True, end_headers=False)
            filler = hpack.Encoder()
            filler.header_table_size = 0
            try:
                for i in range(n):
                    blk = filler.encode([(b'x-flood-%d' % i, b'a' * 64)], huffman=False)
                    c.send(ContinuationFrame(sid, data=blk))
                    if i % 200 == 0:
                        c.read(0.001)
                        if c.closed:
                            break
            except Closed as e:
                out('write-failed after CONTINUATION frames: %s' % e)
            c.drain(a.timeout)
        elif a.mode == 'rapidreset':
            n, path = int(a.args[0]), a.args[1]
            sent = 0
            try:
                for i in range(n):
                    sid = c.new_stream()
                    c.send_headers(sid, c.fields({'path': path}), end_stream=True)
                    c.send(RstStreamFrame(sid, error_code=8))
                    sent += 1
                    if i % 100 == 99:
                        c.read(0.001)
                        if c.closed or c.goaway is not None:
                            break
            except Closed as e:
                out('write-failed: %s' % e)
            out('sent %d resets' % sent)
            if not c.closed and c.goaway is None:
                try:
                    sid = c.request({'path': '/hello'})
                    c.wait([sid], a.timeout)
                except Closed as e:
                    out('write-failed: %s' % e)
            c.drain(2)
        elif a.mode == 'noread':
            sid = c.request({'path': a.args[0]})
            deadline = time.monotonic() + a.timeout
            while c.streams[sid]['status'] is None and time.monotonic() < deadline and not c.closed:
                c.read(0.2)
            out('stalled')
            c.read_enabled = False
            time.sleep(max(0.0, deadline - time.monotonic()))
        elif a.mode == 'pause':
            go, first, second = a.args[0], json.loads(a.args[1]), json.loads(a.args[2])
            sid = c.request(first)
            c.wait([sid], a.timeout)
            out('paused')
            deadline = time.monotonic() + a.timeout
            while not os.path.exists(go) and time.monotonic() < deadline and not c.closed:
                c.read(0.05)
            if not c.closed:
                sid = c.request(second)
                c.wait([sid], a.timeout)
        elif a.mode == 'upload':
            path, size = a.args[0], int(a.args[1])
            sid = c.new_stream()
            c.send_headers(sid, c.fields({'method': 'POST', 'path': path,
                                          'headers': [['content-length', str(size)]]}), end_stream=False)
            chunk = b'u' * (1 << 20)
            sent = 0
            deadline = time.monotonic() + a.timeout
            while sent < size:
                piece = chunk[:min(len(chunk), size - sent)]
                c.sock.settimeout(max(0.1, deadline - time.monotonic()))
                if not c.send_data(sid, piece, sent + len(piece) == size, deadline=deadline):
                    break
                sent += len(piece)
                out('sent %d' % sent)
            c.wait([sid], max(0.1, deadline - time.monotonic()))
        else:
            raise SystemExit('unknown mode %s' % a.mode)
    except Closed as e:
        out('write-failed: %s' % e)
    except (socket.timeout, TimeoutError):
        out('timeout')
    if c.closed:
        out('closed')


if __name__ == '__main__':
    main()
