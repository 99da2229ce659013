#!/usr/bin/env python3
"""pv-ttysession.py BINARY POLICY HOW - whose keys does `passavant run` read
when its terminal is not its controlling one (review of round 39)?
  setsid       a shell's session owns the terminal and reads it at its
               prompt; passavant leads a session of its own, without a
               controlling terminal (`setsid passavant run ...` typed at
               an interactive shell): the line typed is the shell's;
  setsidchild  the same, passavant a child in that session, not its leader
               (`setsid sh -c 'passavant run ...'`);
  fresh        a harness: a new pty of no session, passavant started in a
               session of its own with the slave as its stdio
               (start_new_session): the keys are the command's;
  freshchild   the same, passavant not the session's leader;
  freshreader, freshchildreader  fresh and freshchild, another program
               of the harness's reading the same terminal (its standard
               input) all along (round 40): the line typed is its.
Prints "shell got: ..." (setsid*), "reader got: ..." (*reader), the
terminal's output (the command's "read: ...") and "status N"."""
import fcntl, os, select, signal, sys, termios, time

binary, policy, how = sys.argv[1:4]
CMD = [binary, 'run', '-q', '-p', policy, '--', 'python3', '-c',
       "import sys; print('read: ' + sys.stdin.readline().strip(), flush=True)"]
m, s = os.openpty()


def start_passavant(leader):
    """Forks passavant in a session of its own without a controlling
    terminal (leading it, or as a child of its leader); its pid."""
    pv = os.fork()
    if pv == 0:
        os.setsid()
        if not leader and os.fork() != 0:
            os._exit(0 if os.wait()[1] == 0 else 1)
        for fd in (0, 1, 2):
            os.dup2(s, fd)
        os.closerange(3, 1024)
        os.execv(binary, CMD)
    return pv


def read_all(fd, secs):
    got = b''
    end = time.time() + secs
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                b = os.read(fd, 4096)
            except BlockingIOError:
                continue
            except OSError:
                break
            if not b:
                break
            got += b
    return got


if how in ('setsid', 'setsidchild'):
    rfd, wfd = os.pipe()
    shell = os.fork()
    if shell == 0:
        os.close(rfd)
        os.setsid()
        fcntl.ioctl(s, termios.TIOCSCTTY, 0)
        pv = start_passavant(how == 'setsid')
        # the shell reads its terminal, as at its prompt (a description
        # of its own, non-blocking: the relay may take what select saw)
        t = os.open(os.ttyname(s), os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        got = read_all(t, 7)
        os.write(wfd, b'shell got: %r\n' % got)
        try:
            os.kill(pv, signal.SIGKILL)
        except OSError:
            pass
        os._exit(0)
    os.close(wfd)
    time.sleep(3)
    os.write(m, b'secret\r')
    out = read_all(m, 5)
    os.waitpid(shell, 0)
    print(os.read(rfd, 4096).decode(), end='')
    print('terminal: %r' % out)
else:
    reader = None
    if how.endswith('reader'):
        rfd, wfd = os.pipe()
        reader = os.fork()
        if reader == 0:
            os.close(rfd)
            os.dup2(s, 0)
            os.closerange(3, wfd)
            got = read_all(0, 9)
            os.write(wfd, b'reader got: %r\n' % got)
            os._exit(0)
        os.close(wfd)
        time.sleep(0.5)
    pv = start_passavant(how in ('fresh', 'freshreader'))
    os.close(s)
    time.sleep(3)
    os.write(m, b'hello keys\r')
    out = read_all(m, 8)
    _, st = os.waitpid(pv, 0)
    if reader is not None:
        os.waitpid(reader, 0)
        print(os.read(rfd, 4096).decode(), end='')
    print('terminal: %r' % out)
    print('status %d' % (os.waitstatus_to_exitcode(st)))
