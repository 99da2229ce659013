#!/usr/bin/env python3
"""pv-tty.py - `passavant run` on a terminal, as a user's terminal sees it.

Usage: pv-tty.py PASSAVANT POLICY MODE
  MODE tty: fds 0-2 are the terminal (an interactive run);
  MODE out: standard input is /dev/null, output and error the terminal;
  MODE bg: as tty, started in the background while a line editor has
  the terminal, then brought to the foreground as bash's fg does it.

The caller's terminal is a pseudo-terminal this driver holds the master
of; it is passavant's controlling terminal. The command (python3, inside
the sandbox) writes what a hostile program would put on a terminal: OSC
52 (clipboard) in its 7-bit, C1 and split forms, iTerm's file transfer,
tmux passthrough, kitty's graphics file read, reports the terminal would
type back (title, DECRQSS), the keyboard lock (KAM), a charset switch out
of UTF-8, a hyperlink, its title pushed on the user's title stack, mouse
reports on through XTSAVE/XTRESTORE, in X10 form and as 66536 (1000 on
16 bits), the screen's checksum (DECRQCRA), a resize, a keyboard
emulation, VT52 mode; U+00DD ... U+00DC (an OSC 52 to a terminal in
8-bit mode: passavant runs with LC_ALL=C), 132 columns, xterm's logging,
DECBKM, CRM, DEC locator reports, the tab stops cleared, G1 shifted in,
queries nothing inside reads the answers of; and what an honest one
does: colours, a title, the alternate screen. It then prints its window size, waits for a
resize, reads a line of keys, leaves its terminal in raw mode, and counts
the ^C it gets.

Prints one line per fact, for tests/integration/test_run.c:
  violations N          bytes outside the allowlist below (each shown)
  size R C / resized R C / read: LINE / ints N
  termios same|changed  the caller's terminal after the run
  answers left: B       what the shell would read next: the answers of
                        this driver (a terminal, 0.3 s late) to queries
  status N
The allowlist is this file's own reading of what a terminal may safely
receive (independent of sandbox/ttyfilter.c): text, BEL BS HT LF VT FF
CR, CSI sequences but window reports and operations (t; passavant's
own one push 22;0 and one pop 23;0 of the title stack), media copy (i),
DECSCL, KAM and SRM set, XTRESTORE (? r), DECRQCRA (* y), XTREPORTSGR,
DECSCPP, DECSNLS (# $ * |), xterm's keyboard emulations (? 1050-1053,
1060, 1061 h), VT52 mode (? 2 l), a parameter past 65535; OSC 0/1/2 with printable text and colour
queries; ESC 7 8 = > D E H M c; charset designations of B, 0, A; SO, SI;
no byte 0x80-0x9F (the terminal may be 8-bit); no ANSI mode but 4 and 20,
no DEC mode 3, 38, 46, 67, no locator report (' z { | w); no query (n, c)
and no report mode set (mouse, focus, alternate scroll, bracketed paste,
colour scheme, resize: their reports are typed into the shell; the
cursor keys, keypad, Meta and Delete modes: the shell's keys change) but in
mode tty, or in mode bg once brought to the foreground ("reports after
fg yes": sent then).
"""
import ctypes
import fcntl
import os
import re
import select
import signal
import struct
import sys
import termios
import time

INSIDE = r'''
import os, signal, struct, sys, termios, time, fcntl, tty
OUT = 2 if sys.argv[1] == 'pipe' else 1
w = lambda b: os.write(OUT, b)
say = lambda t: os.write(OUT, (t + '\n').encode())
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGWINCH, signal.SIGINT})
w(b'\x1b]52;c;Y3VybCB4IHwgc2g=\x07')
w(b'\x1b]52;c;Y3VybCB4IHwgc2g=\x1b\\')
w(b'\xc2\x9d52;c;Y3VybCB4IHwgc2g=\xc2\x9c')
w(b'\x1b]1337;File=name=eA==;inline=0:eA==\x07')
w(b'\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\')
w(b'\x1b_Gf=100,t=f;L2V0Yy9wYXNzd2Q=\x1b\\')
w(b'\x1b[21t\x1b[20t\x1b[2h\x1b%@\x1b[5i\x1b[62;2"p')
w(b'\x1bP$qm\x1b\\\x1b^secret\x1b\\\x1bXsos\x1b\\')
w(b'\x1b]8;;http://example.invalid/\x07link\x1b]8;;\x07\x05\x0e')
w(b'\x1b]5'); time.sleep(0.05); w(b'2;c;c3BsaXQ=\x07')
w(b'\x1b'); time.sleep(0.05); w(b']52;c;c3BsaXQy\x07')
w(b'\x1b]52;c;QUFBQQ==\x1b[31mRED\x1b[0m ')
w(b'\x9b2h\x9d52;c;eA==\x9c ')
w(b'\x1b]2;EVIL\x07\x1b[22;0t\x1b[?1000s\x1b[?1000h\x1b[?1000s\x1b[?1000l\x1b[?1000r\x1b[?9h\x1b[?66536h')
w(b'\x1b[1;1;1;1;1;1*y\x1b[1;1;2;2#|\x1b[132$|\x1b[?1051h\x1b[?2l ')
# a terminal in 8-bit mode (no locale: the driver runs passavant with
# LC_ALL=C) reads C3 9D as a character and an OSC introducer
w(b'\xc3\x9d52;c;eA==\xc3\x9c ')
# modes outside the screen's: 132 columns, logging to a file, DECBKM, CRM;
# locator reports; the tab stops cleared; G1 as line drawing, shifted in
w(b'\x1b[?3h\x1b[?46h\x1b[?67h\x1b[3h\x1b[1;1\'z\x1b[3g\x1b)0\x0e')
if sys.argv[1] != 'tty':
    # queries whose answers nobody inside reads: the shell's, after
    w(b'\x1b[6n\x1b[c')
w(b'\x1b]2;a title\x07 plain \x1b[1mbold\x1b[0m \x1b[?1049h\x1b[?1000h\x1b[?25l\x1b[?1;1036h\r\n')
# what keys send beyond the DEC modes (round 38): the keypad's application
# mode, kitty's keyboard flags, modifyOtherKeys
w(b'\x1b=\x1b[>1u\x1b[>4;2m')
def size():
    r, c, _, _ = struct.unpack('HHHH', fcntl.ioctl(OUT, termios.TIOCGWINSZ, b'\0' * 8))
    return '%d %d' % (r, c)
say('size ' + size())
if sys.argv[1] != 'bg' and signal.sigtimedwait({signal.SIGWINCH}, 10) is not None:
    say('resized ' + size())
if sys.argv[1] == 'pipe':
    if os.isatty(0):
        say('stdin tty')
    else:
        say('stdin notty, %d bytes' % len(sys.stdin.buffer.read()))
    print('through the pipe', flush=True)
if sys.argv[1] in ('tty', 'bg'):
    print('ready-read', flush=True)
    print('read: ' + sys.stdin.readline().strip(), flush=True)
if sys.argv[1] == 'tty':
    tty.setraw(0)
    a = termios.tcgetattr(0)
    a[3] |= termios.TOSTOP | termios.ISIG
    termios.tcsetattr(0, termios.TCSANOW, a)
    print('armed', flush=True)
    n, t = 0, 10
    while signal.sigtimedwait({signal.SIGINT}, t) is not None:
        n, t = n + 1, 1.5
    print('ints %d' % n, flush=True)
    # queries as the command ends: their answers come after it
    w(b'\x1b[6n\x1b[c')
'''

ALLOWED = re.compile(
    rb'\x1b\[[0-?]*[ -/]*[@-~]'
    rb'|\x1b\][012];[^\x00-\x1f\x7f]*(?:\x07|\x1b\\)'
    rb'|\x1b\](?:1[0-9]|4;[0-9]+);\?(?:\x07|\x1b\\)'
    rb'|\x1b[78=>DEHMc]'
    rb'|\x1b[()*+][0AB]')


REPORTS = (1, 9, 66, 1000, 1001, 1002, 1003, 1004, 1007, 1034, 1036, 1037, 1039, 2004, 2031, 2048)


def violations(out, mode, fg_at):
    """The spans of out a terminal should not have received (fg_at: where
    the keys began to be read, in mode bg)."""
    bad, i, stack = [], 0, {}
    while i < len(out):
        c = out[i]
        if c == 0x1b:
            m = ALLOWED.match(out, i)
            ok = m is not None
            if ok and m.group(0)[1:2] == b'[' and mode != 'tty' and (mode != 'bg' or i < fg_at) and re.fullmatch(rb'\x1b\[[0-9;?]*n|\x1b\[[>=]?[0-9;]*c', m.group(0)):
                ok = False  # a query: its answer typed to the user's shell
            if ok and m.group(0)[1:2] == b'[':
                seq = m.group(0)
                final = seq[-1:]
                params = seq[2:-1]
                if final == b'i' or (final == b'p' and b'"' in params):
                    ok = False
                if final == b't' and params not in (b'22;0', b'23;0'):
                    ok = False  # the title stack is passavant's: one push, one pop
                if final == b't':
                    stack[params[:2]] = stack.get(params[:2], 0) + 1
                    if stack[params[:2]] > 1:
                        ok = False
                if final == b'r' and params[:1] == b'?':
                    ok = False  # XTRESTORE: modes set unseen by the reset
                if (final, seq[-2:-1]) in ((b'y', b'*'), (b'|', b'#'), (b'|', b'$'), (b'|', b'*')):
                    ok = False  # DECRQCRA reads the screen; XTREPORTSGR; resizes
                if final == b'h' and params[:1] == b'?' and re.search(rb'(?<![0-9])(105[0-3]|106[01])(?![0-9])', params):
                    ok = False  # the keyboard emulations: what the keys send
                if final == b'l' and params[:1] == b'?' and re.search(rb'(?<![0-9])0*2(?![0-9])', params):
                    ok = False  # DECANM reset: VT52 mode after the run
                if any(int(x) > 65535 for x in re.findall(rb'[0-9]+', params)):
                    ok = False  # read capped, or wrapped (66536: 1000)
                if final == b'h' and re.fullmatch(rb'([0-9;]*;)?(2|12)(;[0-9;]*)?', params):
                    ok = False  # KAM locks the keyboard, SRM echoes keys
                if final in b'hl' and params[:1] != b'?' and re.search(rb'[0-9]+', params) and any(int(x) not in (4, 20) for x in re.findall(rb'[0-9]+', params)):
                    ok = False  # ANSI modes: insert and LNM only (CRM shows controls)
                if final in b'hl' and params[:1] == b'?' and any(int(x) in (3, 38, 46, 67) for x in re.findall(rb'[0-9]+', params)):
                    ok = False  # 132 columns, Tektronix, logging, backarrow
                if final == b'h' and params[:1] == b'?' and mode != 'tty' and (mode != 'bg' or i < fg_at) and any(int(x) in REPORTS for x in re.findall(rb'[0-9]+', params)):
                    ok = False  # a report mode while nothing reads the keys: the shell's input
                if mode != 'tty' and (mode != 'bg' or i < fg_at) and (re.fullmatch(rb'\x1b\[>[0-9]*u|\x1b\[=0*[1-9][0-9;]*u|\x1b\[>[0-9]+;[0-9]+m|\x1b\[>[0-9]*n', seq)):
                    ok = False  # kitty's flags, modifyOtherKeys while nothing reads the keys
                if seq[-2:-1] == b"'" and final in b'z{|w':
                    ok = False  # DEC locator reports
            if ok and m.group(0) == b'\x1b=' and mode != 'tty' and (mode != 'bg' or i < fg_at):
                ok = False  # the keypad's application mode while nothing reads the keys
            if not ok:
                bad.append(out[i:i + 24])
                i += 1
                continue
            i = m.end()
            continue
        if c < 0x20 and c not in b'\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f':
            bad.append(out[i:i + 8])
        elif 0x80 <= c <= 0x9f:
            bad.append(out[i:i + 8])  # C1 to a terminal that may be 8-bit
        i += 1
    return bad


def session_pids(sid):
    """The processes of session sid still alive (field 6 of stat)."""
    pids = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            pids.append(int(d))
    return pids


def stage(mode, out, resized, typed, interrupted):
    """What the run was waiting for: printed when it did not end."""
    if not re.search(rb'size \d+ \d+', out):
        return 'the command\'s first output (size line)'
    if mode != 'bg' and not resized:
        return 'the resize'
    if mode in ('tty', 'bg') and not typed:
        return 'ready-read'
    if mode in ('tty', 'bg') and b'read: ' not in out:
        return 'the keys typed to reach the command'
    if mode == 'tty' and not interrupted:
        return 'armed'
    return 'the end of the run'


# The driver's own limit: below the test's (tests/integration/test_run.c),
# so a run that hangs is reported here, with where it stood, and killed
# with every process of its session (a passavant left running would hold
# the test's work directory, and each later test would be refused).
DEADLINE = 40

# No locale: the terminal may read UTF-8 or 8 bits, passavant cannot know.
ENV = dict(os.environ, LC_ALL='C')

# The answers of the terminal this driver plays, each 0.3 s after its
# query (a terminal over ssh, or a slow one): device attributes, the
# cursor's position, the status (passavant's own question, DSR 5).
ANSWERS = {b'c': b'\x1b[?62;22c', b'6n': b'\x1b[7;1R', b'5n': b'\x1b[0n'}
QUERY = re.compile(rb'\x1b\[(c|6n|5n)')


def die_with_parent():
    """SIGKILL to this process when its parent ends (kept through execve):
    a driver that fails or is killed leaves no passavant holding the work
    tree's lock for the tests after it."""
    if ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
        os._exit(126)


def main():
    binary, policy, mode = sys.argv[1:4]
    m, s = os.openpty()
    fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack('HHHH', 31, 97, 0, 0))
    before = termios.tcgetattr(s)
    fg_r, fg_w = os.pipe()
    # pipe: standard output a pipe (`run -- CMD | pager`), read here
    pipe_r, pipe_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        die_with_parent()
        os.setsid()
        fcntl.ioctl(s, termios.TIOCSCTTY, 0)
        if mode == 'bg':
            # a shell: passavant started in the background (`CMD &`)
            # while the line editor has the terminal (readline: -icanon
            # -echo -icrnl), then `fg` as bash does it for a running job:
            # its settings put back, the terminal given, no SIGCONT
            ed = termios.tcgetattr(s)
            ed[0] &= ~termios.ICRNL
            ed[3] &= ~(termios.ICANON | termios.ECHO)
            termios.tcsetattr(s, termios.TCSANOW, ed)
            job = os.fork()
            if job == 0:
                die_with_parent()
                os.setpgid(0, 0)
                for fd in (0, 1, 2):
                    os.dup2(s, fd)
                os.execve(binary, [binary, 'run', '-p', policy, '--', 'python3', '-c', INSIDE, mode], ENV)
                os._exit(127)
            try:
                os.setpgid(job, job)
            except PermissionError:
                pass  # EACCES: the job exec'd already, after its own setpgid
            # a run that never ends is killed before the driver's own
            # limit, its group with it (it holds the terminal)
            signal.signal(signal.SIGALRM, lambda *_: os.killpg(job, signal.SIGKILL))
            signal.alarm(DEADLINE - 5)
            os.read(fg_r, 1)
            termios.tcsetattr(s, termios.TCSANOW, before)
            os.tcsetpgrp(s, job)
            _, ws = os.waitpid(job, 0)
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            os.tcsetpgrp(s, os.getpgrp())
            os._exit(os.waitstatus_to_exitcode(ws))
        os.dup2(os.open('/dev/null', os.O_RDONLY) if mode == 'out' else s, 0)
        os.dup2(pipe_w if mode == 'pipe' else s, 1)
        os.dup2(s, 2)
        os.execve(binary, [binary, 'run', '-p', policy, '--', 'python3', '-c', INSIDE, mode], ENV)
        os._exit(127)
    os.close(pipe_w)
    piped = b''
    out, st, t0 = b'', None, time.monotonic()
    resized = typed = interrupted = False
    scanned, pending = 0, []
    fg_at = len(out)

    def answer(until_all):
        while pending and (until_all or pending[0][0] <= time.monotonic()):
            time.sleep(max(0, pending[0][0] - time.monotonic()))
            os.write(m, pending.pop(0)[1])

    while st is None and time.monotonic() - t0 < DEADLINE:
        for q in QUERY.finditer(out, scanned):
            pending.append((time.monotonic() + 0.3, ANSWERS[q.group(1)]))
            scanned = q.end()
        answer(False)
        if not resized and mode != 'bg' and re.search(rb'size \d+ \d+\r?\n', out):
            fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack('HHHH', 41, 123, 0, 0))
            resized = True
            if mode == 'pipe':
                os.write(m, b'zzz\n')  # keys for the pager, not the relay
        if not typed and b'ready-read' in out:
            if mode == 'bg':
                fg_at = len(out)
                os.write(fg_w, b'f')
                time.sleep(0.5)
            os.write(m, b'hello keys\r')
            typed = True
        if not interrupted and b'armed' in out:
            os.write(m, b'\x03')
            interrupted = True
        for fd in select.select([m, pipe_r], [], [], 0.1)[0]:
            try:
                b = os.read(fd, 65536)
            except OSError:
                b = b''
            if fd == m:
                out += b
            else:
                piped += b
        p, ws = os.waitpid(pid, os.WNOHANG)
        if p:
            st = os.waitstatus_to_exitcode(ws)
    if st is None:
        print('timeout: after %d s, waiting for %s' % (DEADLINE, stage(mode, out, resized, typed, interrupted)))
    # whatever the run left in its session (bg: the job), then the child
    for p in session_pids(pid):
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    if st is None:
        os.waitpid(pid, 0)
    # the answers still on their way after the run, as a terminal sends them
    answer(True)
    while select.select([m], [], [], 0.3)[0]:
        try:
            b = os.read(m, 65536)
        except OSError:
            break
        if not b:
            break
        out += b
    bad = violations(out, mode, fg_at)
    for b in bad:
        print('bad %r' % b)
    print('violations %d' % len(bad))
    text = out.replace(b'\r', b'')
    for key in (rb'size \d+ \d+', rb'resized \d+ \d+', rb'read: [^\n]*', rb'ints \d+', rb'stdin [^\n]*'):
        found = re.search(key, text)
        if found:
            print(found.group(0).decode(errors='replace'))
    print('termios %s' % ('same' if termios.tcgetattr(s) == before else 'changed'))
    tail = out[out.rfind(b'resized'):]
    # the report modes (mouse ?1000, X10 ?9) turned off only where the
    # terminal got them (tty, bg); never else (round 39: the end of a run
    # with no keys read turned off the mouse of the program in the
    # foreground)
    sent = mode in ('tty', 'bg')
    print('reset %s' % ('yes' if all(x in tail for x in (b'\x1b[?1049l', b'\x1b[?25h', b'\x1b[0m', b'\x1b[23;0t', b'\x1b[3g', b'\x1bH', b'\x0f', b'\x1b)B')) and (b'\x1b[?1000l' in tail) == sent and (b'\x1b[?9l' in tail) == sent else 'no'))
    # modifyOtherKeys put back, kitty's flags popped and the keypad put
    # back where they were sent to the terminal (tty, bg), never else (a
    # shell's own; review of round 38: ESC > went over the shell's keypad;
    # round 39: CSI > 4 m over a foreground vim's modifyOtherKeys)
    ktail = out[out.rfind(b'read: '):] if mode == 'bg' else tail  # bg: no resize
    print('keys reset %s' % ('yes' if (b'\x1b[>4m' in ktail) == sent and (b'\x1b[<1u' in ktail) == sent and (b'\x1b>' in ktail) == sent else 'no'))
    if mode == 'bg':
        # the report modes withheld in the background, sent once the
        # relay reads the keys
        print('reports after fg %s' % ('yes' if b'\x1b[?1000h' in out[fg_at:] else 'no'))
        print('keys after fg %s' % ('yes' if all(x in out[fg_at:] for x in (b'\x1b=', b'\x1b[>1u', b'\x1b[>4;2m')) else 'no'))
    if mode == 'pipe':
        try:
            os.set_blocking(s, False)
            left = os.read(s, 100)
        except OSError:
            left = b''
        print('keys left for the pager: %r' % left)
        print('piped: %r' % piped)
    # what the user's shell would read next: no answer to the command's
    # queries (keys left for a pager are counted above)
    a = termios.tcgetattr(s)
    a[3] &= ~termios.ICANON
    a[6][termios.VMIN], a[6][termios.VTIME] = 0, 0
    termios.tcsetattr(s, termios.TCSANOW, a)
    try:
        left = os.read(s, 1000)
    except OSError:
        left = b''
    print('answers left: %r' % left)
    print('status %s' % st)
    print('terminal: %r' % out)


main()
