#!/usr/bin/python3
"""pv-grpc.py - a gRPC server and client for the integration tests (suite h2).

python3-grpcio with generic handlers and bytes in and out (no protoc, no
generated code). Service pv.Echo:
  Unary  request "fail:TEXT": the call ends with status PERMISSION_DENIED
         and message TEXT; otherwise the response is "echo:" + request, and
         the trailing metadata carries x-echo-auth: the request's
         authorization metadata (empty if none)
  Bidi   each request message is answered at once with "echo:" + message

    pv-grpc.py server --cert PEM --key KEY --record FILE [--listen 127.0.0.1:0]
        prints "listening on 127.0.0.1:PORT"; appends one line per RPC to
        FILE: "rpc METHOD" and the received metadata as " key=value"
    pv-grpc.py client --target HOST:PORT [--cafile PEM] [--auth VALUE]
                      unary TEXT | bidi COUNT PAUSE_MS
        the trust comes from --cafile, else from gRPC's own roots
        (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH); the proxy from gRPC's variables
        (grpc_proxy, https_proxy). Prints
          unary ok RESPONSE auth AUTH          or
          unary status CODE message TEXT
          bidi recv N RESPONSE                 per message, then
          bidi done N ms MS                    (MS: how long the call was open)
        and exits 0 when the call completed (whatever its status), 1 when
        the transport failed (UNAVAILABLE and the like: printed too).
"""
import argparse
import queue
import signal
import sys
import threading
import time
from concurrent import futures

import grpc

SERVICE = 'pv.Echo'


def server(a):
    lock = threading.Lock()
    rec = open(a.record, 'a')

    def log(method, ctx):
        meta = ''.join(' %s=%s' % (m.key, m.value) for m in ctx.invocation_metadata()
                       if not m.key.endswith('-bin'))
        with lock:
            rec.write('rpc %s%s\n' % (method, meta))
            rec.flush()

    def unary(req, ctx):
        log('Unary', ctx)
        if req.startswith(b'fail:'):
            ctx.abort(grpc.StatusCode.PERMISSION_DENIED, req[5:].decode())
        auth = dict((m.key, m.value) for m in ctx.invocation_metadata()).get('authorization', '')
        ctx.set_trailing_metadata((('x-echo-auth', auth),))
        return b'echo:' + req

    def bidi(it, ctx):
        log('Bidi', ctx)
        for msg in it:
            yield b'echo:' + msg

    handler = grpc.method_handlers_generic_handler(SERVICE, {
        'Unary': grpc.unary_unary_rpc_method_handler(unary),
        'Bidi': grpc.stream_stream_rpc_method_handler(bidi),
    })
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    srv.add_generic_rpc_handlers((handler,))
    with open(a.key, 'rb') as f:
        key = f.read()
    with open(a.cert, 'rb') as f:
        cert = f.read()
    port = srv.add_secure_port(a.listen, grpc.ssl_server_credentials(((key, cert),)))
    if port == 0:
        raise SystemExit('pv-grpc: cannot listen on %s' % a.listen)
    srv.start()
    print('listening on %s:%d' % (a.listen.rsplit(':', 1)[0], port), flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    done.wait()
    srv.stop(0)


def client(a):
    roots = None
    if a.cafile:
        with open(a.cafile, 'rb') as f:
            roots = f.read()
    ch = grpc.secure_channel(a.target, grpc.ssl_channel_credentials(root_certificates=roots))
    meta = (('authorization', a.auth),) if a.auth else None
    try:
        if a.mode == 'unary':
            call = ch.unary_unary('/%s/Unary' % SERVICE)
            try:
                resp, c = call.with_call(a.args[0].encode(), timeout=20, metadata=meta)
                auth = dict((m.key, m.value) for m in c.trailing_metadata()).get('x-echo-auth', '')
                print('unary ok %s auth %s' % (resp.decode(), auth))
            except grpc.RpcError as e:
                print('unary status %s message %s' % (e.code().name, e.details()))
                if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                                grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
                    return 1
        elif a.mode == 'bidi':
            n, pause = int(a.args[0]), int(a.args[1]) / 1000.0
            q = queue.Queue()

            def reqs():
                while True:
                    m = q.get()
                    if m is None:
                        return
                    yield m

            call = ch.stream_stream('/%s/Bidi' % SERVICE)
            t0 = time.monotonic()
            it = call(reqs(), timeout=60, metadata=meta)
            try:
                for i in range(n):
                    if i:
                        time.sleep(pause)
                    q.put(b'm%d' % i)
                    print('bidi recv %d %s' % (i, next(it).decode()), flush=True)
                q.put(None)
                for extra in it:
                    print('bidi extra %s' % extra.decode())
                print('bidi done %d ms %d' % (n, (time.monotonic() - t0) * 1000))
            except grpc.RpcError as e:
                print('bidi status %s message %s' % (e.code().name, e.details()))
                return 1
        else:
            raise SystemExit('unknown mode %s' % a.mode)
    finally:
        ch.close()
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='role', required=True)
    s = sub.add_parser('server')
    s.add_argument('--cert', required=True)
    s.add_argument('--key', required=True)
    s.add_argument('--record', required=True)
    s.add_argument('--listen', default='127.0.0.1:0')
    c = sub.add_parser('client')
    c.add_argument('--target', required=True)
    c.add_argument('--cafile')
    c.add_argument('--auth')
    c.add_argument('mode')
    c.add_argument('args', nargs='*')
    a = ap.parse_args()
    if a.role == 'server':
        server(a)
        return 0
    return client(a)


if __name__ == '__main__':
    sys.exit(main())
