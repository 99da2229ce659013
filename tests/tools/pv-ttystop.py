#!/usr/bin/env python3
"""pv-ttystop.py BINARY POLICY HOW - passavant stopped and continued under
a shell's job control, on a terminal this driver holds (round 38).

A shell of this driver's own (a pty, its session, job control as bash does
it) starts `passavant run` in the foreground; inside, the command turns on
what makes the terminal send what the user did not type, or keys in its
own encoding: mouse reports (?1000), bracketed paste (?2004), the keypad's
application mode (ESC =), kitty's keyboard flags (CSI > 1 u),
modifyOtherKeys (CSI > 4 ; 2 m); says "armed" and waits for a line. Then
passavant is stopped (HOW):
  tstp   SIGTSTP to passavant's process alone (kill PID)
  stop   SIGSTOP to passavant's process alone
  group  SIGSTOP to its whole group (the relay stopped too), then `bg`
         (SIGCONT to the group, the terminal kept by the shell)
  tstp2  SIGTSTP twice in a row to passavant's process, the second while
         it gives the terminal back (round 39: checked, held: one stop,
         and fg continues the run)
  tstppid  SIGTSTP to passavant's process alone, and at fg SIGCONT to that
         process alone (a parent that continues the process it stopped,
         `kill -CONT PID`, not the group): the relay must run on too
  bgtstp SIGSTOP to passavant's process, `bg`, the shell's line editor's
         settings (-icanon -echo, as readline's) on the terminal, then
         SIGTSTP to the job's group (bash's `kill -TSTP %1`): the shell's
         settings must stay ("shell settings kept" line)
  slow   no stop: a terminal that answers 1.5 s after each query (see
         slow() below; prints "answered", "answers left", "status")
  nojc   no job-control shell (round 40): passavant leads the terminal's
         session (as under `script -c`, ssh -t's command, a harness),
         SIGSTOP to its process, then SIGCONT to it; nobody takes the
         terminal meanwhile (see nojc() below: "stopped", "withdrawn"
         and "settings back at the stop" mean every mode off and the
         user's settings back while passavant is stopped, then "again",
         "read", "termios", "status" as below)
The shell takes the terminal (tcsetpgrp, its settings back, as bash does
on a stop) and reads what the terminal got for 1 s: the modes must go off
("withdrawn" line). Then `fg`: the terminal given back and SIGCONT (for
group: given back only, as bash's fg of a running job), the modes must
come on again ("again" line), the line typed must reach the command, the
run end with status 0 and the settings be as before.

Prints:
  withdrawn yes|no   after the stop: ?1000l CSI < 1 u CSI > 4 m (bracketed
                     paste and the keypad left to the shell)
  all off before the prompt yes|no   those and ?2004l, ESC >, before the
                     shell's prompt (tstp: SIGTSTP is caught)
  settings back at the stop yes|no   the user's settings, not raw, when the
                     shell sees the stop (tstp)
  again yes|no       after fg: ?1000h ?2004h ESC = CSI > 1 u CSI > 4 ; 2 m
  read: LINE         the command's line
  termios same|changed
  status N
  terminal: BYTES
"""
import fcntl
import os
import re
import select
import signal
import struct
import sys
import termios
import time
import ctypes

INSIDE = r'''
import os, sys
os.write(1, b'\x1b[?1000;2004h\x1b=\x1b[>1u\x1b[>4;2m')
print('armed', flush=True)
print('read: ' + sys.stdin.readline().strip(), flush=True)
'''

DEADLINE = 40
# bracketed paste and the keypad are left to the shell (its prompt sets
# its own before the relay sees the keys lost): not withdrawn
OFF = (b'\x1b[?1000l', b'\x1b[<1u', b'\x1b[>4m')
OFF_SHELL = (b'\x1b[?2004l', b'\x1b>')
ON = (b'\x1b[?1000h', b'\x1b[?2004h', b'\x1b=', b'\x1b[>1u', b'\x1b[>4;2m')


LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def die_with_parent():
    """SIGKILL to this process when its parent ends, kept through execve:
    a driver (or its shell) that fails or is killed takes the passavant
    it started with it, rather than leave it holding the work tree's lock
    for the tests after (CI, round 46: an orphan of a failed driver failed
    the next one)."""
    if LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        os._exit(126)


def end_all(*pids):
    """SIGKILL to each pid's group and to the pid (a job's passavant, a
    shell), those gone already skipped; then each reaped if it is ours."""
    for pid in pids:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass


def collect(m, secs, out):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if select.select([m], [], [], 0.05)[0]:
            try:
                b = os.read(m, 65536)
            except OSError:
                return out
            out += b
    return out


def until(m, out, what, secs):
    end = time.monotonic() + secs
    while what not in out and time.monotonic() < end:
        out = collect(m, 0.1, out)
    return out


def spawn(s, binary, policy, code):
    """Starts `binary run -p policy -- python3 -c code` as the leader of
    a session of its own, the pty s its controlling terminal and its
    stdio; its pid."""
    pid = os.fork()
    if pid == 0:
        die_with_parent()
        os.setsid()
        fcntl.ioctl(s, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(s, fd)
        os.closerange(3, 1024)
        os.execve(binary, [binary, 'run', '-p', policy, '--', 'python3', '-c', code],
                  dict(os.environ, LC_ALL='C.UTF-8'))
        os._exit(127)
    return pid


def reap(m, pid, out, secs, step, each=None):
    """Collects what the terminal m shows (step seconds at a time, each(out)
    called before each step) until pid ends or secs pass, then kills it
    ("timeout: the run did not end"); its status (None on the timeout)
    and out."""
    st, end = None, time.monotonic() + secs
    while st is None and time.monotonic() < end:
        if each is not None:
            each(out)
        out = collect(m, step, out)
        p, ws = os.waitpid(pid, os.WNOHANG)
        if p:
            st = os.waitstatus_to_exitcode(ws)
    if st is None:
        print('timeout: the run did not end')
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return st, out


def finish(m, s, pid, before, out):
    """Types a line for the command's read, waits for pid to end, then
    prints what it read, whether the terminal's modes are as before,
    its status and all the terminal showed."""
    os.write(m, b'hello keys\r')
    st, out = reap(m, pid, out, DEADLINE / 2, 0.1)
    out = collect(m, 0.3, out)
    text = out.replace(b'\r', b'')
    i = text.find(b'read: ')
    if i >= 0:
        print(text[i:text.find(b'\n', i)].decode(errors='replace'))
    print('termios %s' % ('same' if termios.tcgetattr(s) == before else 'changed'))
    print('status %s' % st)
    print('terminal: %r' % out)


def run():
    binary, policy, how = sys.argv[1:4]
    m, s = os.openpty()
    fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))
    before = termios.tcgetattr(s)
    rep_r, rep_w = os.pipe()
    go_r, go_w = os.pipe()
    pid_r, pid_w = os.pipe()
    shell = os.fork()
    if shell == 0:
        die_with_parent()
        os.close(rep_r)
        os.close(go_w)
        os.close(pid_r)
        os.setsid()
        fcntl.ioctl(s, termios.TIOCSCTTY, 0)
        for sig in (signal.SIGTTOU, signal.SIGTTIN, signal.SIGTSTP):
            signal.signal(sig, signal.SIG_IGN)
        job = os.fork()
        if job == 0:
            die_with_parent()
            os.setpgid(0, 0)
            for sig in (signal.SIGTTOU, signal.SIGTTIN, signal.SIGTSTP):
                signal.signal(sig, signal.SIG_DFL)
            for fd in (0, 1, 2):
                os.dup2(s, fd)
            os.closerange(3, 1024)
            os.execve(binary, [binary, 'run', '-p', policy, '--', 'python3', '-c', INSIDE],
                      dict(os.environ, LC_ALL='C.UTF-8'))
            os._exit(127)
        try:
            shell_job(job, s, rep_w, go_r, pid_w, how)
        except BaseException:
            import traceback
            traceback.print_exc()
            end_all(job)
            os._exit(99)
    os.close(rep_w)
    os.close(go_r)
    os.close(pid_w)
    job = int(os.read(pid_r, 32) or b'0')
    try:
        outer(m, s, shell, before, rep_r, go_w, how)
    except BaseException:
        if job:
            end_all(job)
        end_all(shell)
        raise


def shell_job(job, s, rep_w, go_r, pid_w, how):
    """The shell's side: job (passavant) to the foreground, stopped as
    HOW says, then fg; exits with the job's status."""
    os.write(pid_w, b'%d' % job)
    os.close(pid_w)
    try:
        os.setpgid(job, job)
    except PermissionError:
        # EACCES: the job has exec'd already, after its own setpgid(0, 0)
        # (as bash, which makes the same call on both sides of the fork)
        pass
    shell_tio = termios.tcgetattr(s)
    os.tcsetpgrp(s, job)
    signal.signal(signal.SIGALRM, lambda *_: os.killpg(job, signal.SIGKILL))
    signal.alarm(DEADLINE - 5)
    os.read(go_r, 1)
    if how in ('group',):
        os.killpg(job, signal.SIGSTOP)
    elif how == 'tstp2':
        # the second while passavant gives the terminal back (its
        # relay's pause takes some 10 ms): caught, not yet read
        os.kill(job, signal.SIGTSTP)
        time.sleep(0.004)
        os.kill(job, signal.SIGTSTP)
    else:
        os.kill(job, signal.SIGTSTP if how in ('tstp', 'tstppid') else signal.SIGSTOP)
    _, ws = os.waitpid(job, os.WUNTRACED)
    # the settings as the stop left them, before the shell's own
    same = termios.tcgetattr(s) == shell_tio
    # as bash does on a stop: the terminal back, its settings, its
    # prompt
    os.tcsetpgrp(s, os.getpgrp())
    termios.tcsetattr(s, termios.TCSADRAIN, shell_tio)
    os.write(s, b'PROMPT$ ')
    if how in ('group',):
        os.killpg(job, signal.SIGCONT)  # bg: runs on, the terminal the shell's
    os.write(rep_w, (b'S' if os.WIFSTOPPED(ws) else b'X') + (b'1' if same else b'0'))
    if how == 'bgtstp':
        # bg; the shell's line editor on the terminal (readline:
        # -icanon -echo); once the relay has seen the keys lost, the
        # job stopped again, its group (bash's kill -TSTP %1)
        os.killpg(job, signal.SIGCONT)
        rl = termios.tcgetattr(s)
        rl[3] &= ~(termios.ICANON | termios.ECHO)
        termios.tcsetattr(s, termios.TCSADRAIN, rl)
        rl = termios.tcgetattr(s)  # as read back (VMIN, VTIME: numbers now)
        time.sleep(0.8)
        os.killpg(job, signal.SIGTSTP)
        _, ws = os.waitpid(job, os.WUNTRACED)
        kept = termios.tcgetattr(s) == rl
        termios.tcsetattr(s, termios.TCSADRAIN, shell_tio)
        os.write(rep_w, b'K' if kept and os.WIFSTOPPED(ws) else b'k')
    os.read(go_r, 1)
    # fg: the terminal given back; SIGCONT to a stopped job only
    # (tstppid: to passavant's process alone)
    os.tcsetpgrp(s, job)
    if how == 'tstppid':
        os.kill(job, signal.SIGCONT)
    elif how != 'group':
        os.killpg(job, signal.SIGCONT)
    os.write(rep_w, b'F')
    _, ws = os.waitpid(job, 0)
    os.tcsetpgrp(s, os.getpgrp())
    os._exit(os.waitstatus_to_exitcode(ws) & 0xff)


def outer(m, s, shell, before, rep_r, go_w, how):
    """The terminal's side: what the job showed at each step."""
    out = until(m, b'', b'armed', DEADLINE / 2)
    if b'armed' not in out:
        print('timeout: the command never said armed')
    time.sleep(0.3)
    out = collect(m, 0.1, out)
    os.write(go_w, b'g')
    stopped = os.read(rep_r, 2)
    print('stopped %s' % ('yes' if stopped[:1] == b'S' else 'no'))
    at = len(out)
    out = collect(m, 1.0, out)
    got = out[at:]
    print('withdrawn %s' % ('yes' if all(x in got for x in OFF) else 'no'))
    # SIGTSTP is caught: everything off, and the user's settings back,
    # before the shell sees the stop (before its prompt)
    pre = out[:out.find(b'PROMPT$ ', at)] if b'PROMPT$ ' in out[at:] else b''
    print('all off before the prompt %s' % ('yes' if all(x in pre[at:] for x in OFF + OFF_SHELL) else 'no'))
    print('settings back at the stop %s' % ('yes' if stopped[1:] == b'1' else 'no'))
    if how == 'bgtstp':
        print('shell settings kept %s' % ('yes' if os.read(rep_r, 1) == b'K' else 'no'))
    # what the shell reads meanwhile: nothing the command's modes sent
    os.write(go_w, b'g')
    os.read(rep_r, 1)
    at = len(out)
    out = collect(m, 1.0, out)
    got = out[at:]
    print('again %s' % ('yes' if all(x in got for x in ON) else 'no'))
    finish(m, s, shell, before, out)


SLOW = r'''
import os, termios, tty
a = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b'\x1b[6n')
r = b''
while not r.endswith(b'R'):
    r += os.read(0, 1)
termios.tcsetattr(0, termios.TCSANOW, a)
print('answered', flush=True)
os.write(1, b'\x1b[6n\x1b[c')
'''
ANSWERS = {b'c': b'\x1b[?62;22c', b'6n': b'\x1b[7;1R', b'5n': b'\x1b[0n'}
QUERY = re.compile(rb'\x1b\[(c|6n|5n)')


def slow():
    """HOW slow: a terminal that answers each query 1.5 s after it (over
    ssh, say). The command asks once and reads the answer, then asks again
    as it ends: those answers, and the relay's own status question's,
    must not be left for the shell."""
    binary, policy = sys.argv[1:3]
    m, s = os.openpty()
    fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))
    pid = spawn(s, binary, policy, SLOW)
    scanned, pending = 0, []

    def answer(out):
        nonlocal scanned
        for q in QUERY.finditer(out, scanned):
            pending.append((time.monotonic() + 1.5, ANSWERS[q.group(1)]))
            scanned = q.end()
        while pending and pending[0][0] <= time.monotonic():
            os.write(m, pending.pop(0)[1])

    st, out = reap(m, pid, b'', DEADLINE, 0.05, answer)
    out = collect(m, 0.1, out)
    for q in QUERY.finditer(out, scanned):
        pending.append((time.monotonic() + 1.5, ANSWERS[q.group(1)]))
    for at, b in pending:
        time.sleep(max(0, at - time.monotonic()))
        os.write(m, b)
    time.sleep(0.3)
    a = termios.tcgetattr(s)
    a[3] &= ~termios.ICANON
    a[6][termios.VMIN], a[6][termios.VTIME] = 0, 0
    termios.tcsetattr(s, termios.TCSANOW, a)
    try:
        left = os.read(s, 1000)
    except OSError:
        left = b''
    print('answered %s' % ('yes' if b'answered' in out else 'no'))
    print('answers left: %r' % left)
    print('status %s' % st)
    print('terminal: %r' % out)


def state(pid):
    with open('/proc/%d/stat' % pid) as f:
        return f.read().rsplit(')', 1)[1].split()[0]


def nojc():
    """HOW nojc: passavant leads a session of its own with the terminal as
    its controlling one, its parent this driver, which takes no stops
    (not a job-control shell). SIGSTOP to passavant: the terminal must be
    given back while it is stopped (every mode of the command's off, the
    user's settings, not raw), and taken again at SIGCONT."""
    binary, policy = sys.argv[1:3]
    m, s = os.openpty()
    fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))
    before = termios.tcgetattr(s)
    pid = spawn(s, binary, policy, INSIDE)
    out = until(m, b'', b'armed', DEADLINE / 2)
    if b'armed' not in out:
        print('timeout: the command never said armed')
    time.sleep(0.3)
    out = collect(m, 0.1, out)
    raw = termios.tcgetattr(s) != before
    os.kill(pid, signal.SIGSTOP)
    at = len(out)
    out = collect(m, 1.0, out)
    got = out[at:]
    print('stopped %s' % ('yes' if state(pid) == 'T' else 'no'))
    print('withdrawn %s' % ('yes' if all(x in got for x in OFF + OFF_SHELL) else 'no'))
    print('settings back at the stop %s' % ('yes' if raw and termios.tcgetattr(s) == before else 'no'))
    os.kill(pid, signal.SIGCONT)
    at = len(out)
    out = collect(m, 1.0, out)
    got = out[at:]
    print('again %s' % ('yes' if all(x in got for x in ON) and termios.tcgetattr(s) != before else 'no'))
    finish(m, s, pid, before, out)


if sys.argv[3] == 'slow':
    slow()
elif sys.argv[3] == 'nojc':
    nojc()
else:
    run()
