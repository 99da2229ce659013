/*
 * seccomp.c - the syscall filter of SPEC §7, compiled in the parent,
 * installed last in the child.
 *
 * The parent builds the filter with libseccomp before clone (STYLE.md 12)
 * and exports it as a raw BPF program. The child installs that program
 * with prctl(PR_SET_SECCOMP) instead of calling seccomp_load(): loading
 * through libseccomp generates the program then, with malloc, and the
 * child must not allocate (see sbx_int.h). The effect is the same filter,
 * installed at the same place: the last call before execve.
 *
 * Everything not listed is allowed; listed calls fail with EPERM, except
 * clone3 and openat2 (ENOSYS, below). Socket families are the exception to "not
 * listed is allowed": socket() and socketpair() create only the families
 * of an allowlist (add_socket_rules()). The architecture is the native one; a syscall
 * made through another ABI (int 0x80, x32) kills the process, libseccomp's
 * default for a foreign architecture.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "sandbox/sbx_int.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* Refused outright with EPERM. Names libseccomp does not know on this
 * architecture are skipped (e.g. "umount" on x86_64). */
static const char *const denied_calls[] = {
	/* mounts and the filesystem view */
	"mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount",
	"fspick", "move_mount", "open_tree", "mount_setattr",
	/* other namespaces */
	"setns",
	/* reaching into other processes */
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	/* kernel keyrings */
	"keyctl", "add_key", "request_key",
	/* large kernel attack surface */
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
	"io_uring_register",
	/* watching the host's files (round 46): an unprivileged fanotify
	 * group (Linux 5.13) marks any inode the sandbox can read, and an
	 * inode is the host's whatever mount shows it: a mark on /etc or
	 * the home reported each open the host's processes made there
	 * (/etc/shadow, ~/.npmrc behind its cover's name, ~/.bashrc as a
	 * terminal starts). No coding tool needs it; inotify, which file
	 * watchers use, stays (docs/threat-model.md) */
	"fanotify_init", "fanotify_mark",
	/* modules, kexec */
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	/* bypasses of path checks */
	"open_by_handle_at", "name_to_handle_at",
};

/*
 * Whole families of filesystem-specific ioctls, by their type byte (bits
 * 8-15 of the request; direction and size are ignored), each with the
 * numbers of that type that are generic and kept (round 22 of the
 * attack). What a family can do that the check after the run cannot see:
 * - btrfs (0x94): a subvolume or snapshot keeps its source's times, its
 *   own root directory's too: `.vscode`, `.claude` or `.git/hooks`
 *   snapshotted into place looked old; a read-only subvolume made every
 *   move aside fail (EROFS). Kept: FICLONE (9), FICLONERANGE (13),
 *   FS_IOC_GETFSLABEL (49), FIDEDUPERANGE (54), the VFS's own (cp's
 *   reflink copies).
 * - XFS ('X'): XFS_IOC_SWAPEXT swaps two files' contents and leaves both
 *   ctimes as they were (and XFS_IOC_EXCHANGE_RANGE). Kept:
 *   FS_IOC_FSGETXATTR (31).
 * ext4's EXT4_IOC_MOVE_EXT ('f' 15) moves a donor's blocks into a file,
 * which its times need not show: refused by number below. f2fs (0xf5)
 * and bcachefs (0xbc, subvolumes and snapshots) are types no one may use
 * (allowed_ioctl_types[]).
 * The Linux console ('K', kd.h; 'V', vt.h): its state is the machine's,
 * not the session's, and outlasts the run when the command's terminal is
 * a text console (round 29 of the attack: PIO_SCRNMAP swapped the glyphs
 * of every console, KDSKBMODE K_OFF left tty2's keyboard dead after the
 * run). Kept: the queries a program asks a terminal (KDGETLED 0x31,
 * KDGKBTYPE 0x33, KDGETMODE 0x3b, KDGKBMODE 0x44, KDGKBMETA 0x62,
 * KDGKBLED 0x64; VT_OPENQRY 0, VT_GETMODE 1, VT_GETSTATE 3). Every
 * setter goes, KDFONTOP too (one number for reading and writing fonts).
 * Terminals ('T'): the command shares the user's own terminal (stdio.c
 * passes it as it is), and what it sets there but the settings (termios,
 * flags and output flow, which run_tty_restore() puts back) outlasts the
 * run (round 30 of the attack: TIOCSETD N_NULL left the terminal
 * dropping every key typed after the run, TIOCEXCL made every later open
 * of it fail with EBUSY). So the type is an allowlist too (tty_kept[]):
 * what programs need from a terminal, a pty of their own and an fd.
 */
static const unsigned char console_k_kept[] = {0x31, 0x33, 0x3b, 0x44, 0x62, 0x64};
static const unsigned char console_v_kept[] = {0x00, 0x01, 0x03};
static const unsigned char btrfs_kept[] = {9, 13, 49, 54};
static const unsigned char xfs_kept[] = {31};

/*
 * Type 'T' (asm-generic/ioctls.h), kept by number (round 30):
 *   0x01-0x08  TCGETS TCSETS TCSETSW TCSETSF TCGETA TCSETA TCSETAW TCSETAF
 *   0x09       TCSBRK: tcdrain() (argument not 0) and a timed break (0),
 *              which ends by itself
 *   0x0a       TCXONC: tcflow(); TCOOFF stops output, which
 *              run_tty_restore() restarts (TCOON) after the run
 *   0x0b       TCFLSH
 *   0x0e       TIOCSCTTY: a session leader takes a pty as its controlling
 *              terminal (script, tmux, ssh inside the sandbox). The kernel
 *              refuses a terminal that already controls a session (the
 *              user's does) unless the caller is CAP_SYS_ADMIN in the
 *              initial user namespace, which the sandbox never is
 *   0x0f 0x10  TIOCGPGRP TIOCSPGRP (a shell's job control; run takes the
 *              terminal back after the run: reclaim_terminal())
 *   0x11       TIOCOUTQ
 *   0x13 0x14  TIOCGWINSZ TIOCSWINSZ (the terminal's own emulator sets the
 *              size again at the next resize)
 *   0x15       TIOCMGET   0x19 TIOCGSOFTCAR   0x1b FIONREAD (TIOCINQ)
 *   0x1e       TIOCGSERIAL
 *   0x20       TIOCPKT (a pty master's: the sandbox's own ptys only)
 *   0x21       FIONBIO    0x22 TIOCNOTTY    0x24 TIOCGETD    0x29 TIOCGSID
 *   0x2a-0x2d  TCGETS2 TCSETS2 TCSETSW2 TCSETSF2
 *   0x30-0x32  TIOCGPTN TIOCSPTLCK TIOCGDEV (0x32 is also TCGETX)
 *   0x36       TIOCSIG (a pty master's)
 *   0x38 0x39  TIOCGPKT TIOCGPTLCK   0x40 TIOCGEXCL   0x41 TIOCGPTPEER
 *   0x50-0x52  FIONCLEX FIOCLEX FIOASYNC
 *   0x56       TIOCGLCKTRMIOS
 *   0x60       FIOQSIZE (any file)
 * Refused among the rest: TIOCSETD (the line discipline), TIOCEXCL and
 * TIOCNXCL (exclusive use: nothing needs to clear what it may not set),
 * TIOCCONS (console output), TIOCSBRK and TIOCCBRK (a break held on),
 * TCSBRKP, TIOCSSOFTCAR, TIOCSSERIAL, TIOCMSET, TIOCMBIS, TIOCMBIC
 * (modem lines), TIOCSLCKTRMIOS, TIOCVHANGUP, TIOCSTI and TIOCLINUX (also
 * refused by number, below), the serial drivers' and RS-485's, and every
 * other driver's that took the letter (TUN's TUNSETIFF 0xca...).
 */
static const unsigned char tty_kept[] = {
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0e, 0x0f, 0x10, 0x11, 0x13,
	0x14, 0x15, 0x19, 0x1b, 0x1e, 0x20, 0x21, 0x22, 0x24, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x30, 0x31,
	0x32, 0x36, 0x38, 0x39, 0x40, 0x41, 0x50, 0x51, 0x52, 0x56, 0x60,
};

static const struct {
	unsigned type;
	const unsigned char *kept;
	size_t nkept;
} refused_ioctl_types[] = {
	{0x94, btrfs_kept, ARRAY_LEN(btrfs_kept)},
	{'X', xfs_kept, ARRAY_LEN(xfs_kept)},
	{'K', console_k_kept, ARRAY_LEN(console_k_kept)},
	{'V', console_v_kept, ARRAY_LEN(console_v_kept)},
	{'T', tty_kept, ARRAY_LEN(tty_kept)},
};

/*
 * The only ioctl types a request may have (bits 8-15); every other type
 * is refused whole. A list of refusals cannot judge what it has not
 * read: round 22 found two filesystems' primitives the check could not
 * see, and every filesystem has its own type (OCFS2, NILFS, CIFS, ...).
 * What a coding session uses: terminals and the fd-wide FIO* requests
 * ('T': TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO, FIOCLEX; narrowed by
 * refused_ioctl_types[] to tty_kept[]), sockets (0x89, and 0x8b for wireless
 * queries), the VFS's own (0: FIGETBSZ; 0x15: the filesystem's UUID; 'f':
 * flags, FIEMAP, fscrypt and fs-verity queries; 'v': inode version;
 * 0x94: reflink clones and the label; 'X': FS_IOC_FSGETXATTR; both
 * narrowed by refused_ioctl_types[]), console queries and /dev/random
 * ('K' and 'V', narrowed the same way; 'R'), and pidfd queries (0xff).
 */
static const unsigned char allowed_ioctl_types[] = {0x00, 0x15, 'K', 'R', 'T', 'V', 'X', 'f', 'v', 0x89, 0x8b, 0x94, 0xff};

/*
 * Refused too, but newer than the libseccomp we build with (Debian 12's
 * 2.5.4 does not know them): by their numbers in the unified table that
 * x86_64 and aarch64 share, when the name does not resolve (review of
 * round 21). open_tree_attr (6.15) is open_tree with mount_setattr's
 * attributes; file_setattr (6.17) is FS_IOC_FSSETXATTR on a path.
 */
static const struct {
	const char *name;
	int nr;
} denied_new_calls[] = {{"open_tree_attr", 467}, {"file_setattr", 469}};

/*
 * System calls past the newest this filter was written for: ENOSYS, what
 * a kernel without them answers, so libraries fall back as they do there.
 * A denylist cannot judge a call it predates (file_setattr passed the
 * filter that refused FS_IOC_FSSETXATTR), so the next ones are refused
 * until someone reads them.
 */
#define SECCOMP_FUTURE_FIRST 470
#define SECCOMP_FUTURE_LAST 511

/* Namespace flags refused in clone and unshare. CLONE_NEWTIME shares its
 * bit with the exit-signal byte of clone, so it is checked in unshare only;
 * clone cannot create a time namespace anyway. */
static const unsigned long ns_flags[] = {
	CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET,
	CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP,
};

/* Adds "call fails with errnum when (arg & mask) == val". */
static int rule_masked(scmp_filter_ctx ctx, int errnum, const char *call, unsigned arg,
		       uint64_t mask, uint64_t val)
{
	int nr = seccomp_syscall_resolve_name(call);

	if (nr == __NR_SCMP_ERROR)
		return -EINVAL;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(errnum), nr, 1,
				SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, mask, val));
}

/*
 * Socket families (SPEC §7, issue 13 class 3). An allowlist: only what a
 * networked command behind the proxy needs may be created, and every
 * family the kernel adds later is refused too.
 *
 *   AF_INET, AF_INET6    the sandbox's own network namespace, whose only
 *                        way out is the proxy (SOCK_PACKET excepted: the
 *                        kernel turns socket(AF_INET, SOCK_PACKET) into an
 *                        AF_PACKET socket)
 *   AF_NETLINK           NETLINK_ROUTE only (getaddrinfo's AI_ADDRCONFIG,
 *                        getifaddrs, `ip addr`), answered by the sandbox's
 *                        own network namespace
 *   AF_UNIX              socket() only with allowAllUnixSockets;
 *                        socketpair() with SOCK_STREAM or SOCK_SEQPACKET
 *
 * Refused with EPERM: everything else, AF_VSOCK (not network-namespaced:
 * it reaches the hypervisor and the host's vsock services), AF_PACKET,
 * AF_ALG, AF_KEY, AF_XDP, AF_BLUETOOTH, AF_TIPC...
 *
 * Why socketpair(AF_UNIX) only for the connected types: a socket file of
 * the host can lie in any tree the sandbox sees, the working directory
 * included, and no mount plan can foresee them all. The one way to reach
 * such a file without socket() is an unconnected datagram socket from
 * socketpair(SOCK_DGRAM) (or SOCK_RAW, which unix sockets turn into
 * SOCK_DGRAM): sendto()/sendmsg() with a path or connect() to it delivers
 * to any host datagram socket (syslog, journald, notify sockets). A stream
 * or seqpacket pair is connected from birth: connect() fails with EISCONN
 * even after the peer closed (the state stays established),
 * unix_stream_sendmsg() refuses an address (EISCONN), and
 * unix_seqpacket_sendmsg() ignores it and sends to the peer. listen() on
 * either needs an unconnected socket (EINVAL). So the mechanism is closed,
 * not the places.
 *
 * Comparisons are on the full 64-bit argument: a family above
 * AF_NETLINK as a 64-bit number is refused, so upper bits set in the
 * register (the kernel reads an int) cannot smuggle a refused family past
 * an equality test; the type is compared through SOCK_TYPE_MASK (0xf),
 * which also drops SOCK_NONBLOCK and SOCK_CLOEXEC.
 */
#define SOCK_TYPE_BITS 0xfULL

static bool family_allowed(unsigned fam, bool allow_unix)
{
	return fam == AF_INET || fam == AF_INET6 || fam == AF_NETLINK ||
	       (fam == AF_UNIX && allow_unix);
}

static int add_socket_rules(scmp_filter_ctx ctx, bool allow_unix, const char **what)
{
	unsigned fam, type;
	int rc;

	*what = "socket";
	/* Families 0..AF_NETLINK one by one, every family above at once. */
	for (fam = 0; fam <= AF_NETLINK; fam++) {
		if (family_allowed(fam, allow_unix))
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_EQ, fam));
		if (rc < 0)
			return rc;
	}
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
			      SCMP_A0(SCMP_CMP_GT, AF_NETLINK));
	if (rc < 0)
		return rc;
	/* Netlink: the routing family only. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
			      SCMP_A0(SCMP_CMP_EQ, AF_NETLINK), SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE));
	if (rc < 0)
		return rc;
	/* SOCK_PACKET on an inet family is a packet socket. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
			      SCMP_A0(SCMP_CMP_EQ, AF_INET),
			      SCMP_A1(SCMP_CMP_MASKED_EQ, SOCK_TYPE_BITS, SOCK_PACKET));
	if (rc < 0)
		return rc;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
			      SCMP_A0(SCMP_CMP_EQ, AF_INET6),
			      SCMP_A1(SCMP_CMP_MASKED_EQ, SOCK_TYPE_BITS, SOCK_PACKET));
	if (rc < 0)
		return rc;
	/* socketpair: AF_UNIX only (the other family that implements it,
	 * AF_TIPC, is refused above) and, unless the policy opened AF_UNIX as
	 * a whole, only the connected types. */
	*what = "socketpair";
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 1,
			      SCMP_A0(SCMP_CMP_NE, AF_UNIX));
	if (rc < 0)
		return rc;
	if (allow_unix)
		return 0;
	for (type = 0; type <= SOCK_TYPE_BITS; type++) {
		if (type == SOCK_STREAM || type == SOCK_SEQPACKET)
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 2,
				      SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
				      SCMP_A1(SCMP_CMP_MASKED_EQ, SOCK_TYPE_BITS, type));
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Builds the rules into ctx. 0 or a negative errno with *what naming the
 * call that failed. */

/*
 * ioctl requests refused: TIOCSTI and TIOCLINUX type into the terminal.
 * The rest change what a name in a shared tree means to the host later,
 * while the checks after the run read names byte for byte as they are
 * then:
 * - FS_IOC_SETFLAGS (and its 32-bit twin) and FS_IOC_FSSETXATTR set inode
 *   flags (chattr), among them casefold (+F), which makes a new directory
 *   case-insensitive: ".GIT" or ".VSCODE" there is what the host's git
 *   and editor open as ".git" and ".vscode";
 * - fscrypt (round 21 of the attack): a directory given an encryption
 *   policy, filled, then its key removed shows the check only encrypted
 *   names; the key added back in a later session reveals ".vscode" and
 *   ".claude" files with old ctimes. None of these needs a capability.
 *   Reading a policy or a key's status stays allowed.
 */
#define EXT4_IOC_MOVE_EXT_NR 15 /* _IOWR('f', 15, struct move_extent) */

static const unsigned long refused_ioctls[] = {TIOCSTI,
					       TIOCLINUX,
					       FS_IOC_SETFLAGS,
					       FS_IOC32_SETFLAGS,
					       FS_IOC_FSSETXATTR,
					       FS_IOC_SET_ENCRYPTION_POLICY,
					       FS_IOC_ADD_ENCRYPTION_KEY,
					       FS_IOC_REMOVE_ENCRYPTION_KEY,
					       FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS};

/*
 * Set-user-ID and set-group-ID files (round 20 of the attack). The command
 * keeps its uid, and an owner may set S_ISUID (and S_ISGID for a group it
 * is in) without any capability: `cp /bin/sh x; chmod 4755 x` in a tree
 * the host shares left a program that runs as the sandbox's user for
 * anyone who starts it, root's when `run` runs as root. nosuid and
 * no_new_privs only hold inside the sandbox. So every call that sets mode
 * bits refuses the two bits: the mode changes and every creation that
 * takes a mode (a regular file by open, creat or mknod). openat2 passes
 * its mode in a struct a filter cannot read: ENOSYS, which callers take
 * as "fall back to openat". mkdir keeps neither bit of its mode (a
 * directory inherits set-group-ID from its parent); chmod cannot tell a
 * directory from a file, so `chmod g+s DIR` is refused too. The
 * comparison is on the low bits only: upper bits of the register (the
 * kernel reads a umode_t) cannot hide them.
 */
static const struct {
	const char *call;
	unsigned arg; /* the mode's argument */
} setid_modes[] = {
	{"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2}, {"open", 2}, {"openat", 3},
	{"creat", 1}, {"mknod", 1},  {"mknodat", 2},
};

static int add_setid_rules(scmp_filter_ctx ctx, const char **what)
{
	static const uint64_t bits[] = {S_ISUID, S_ISGID};
	size_t i, b;
	int rc;

	for (i = 0; i < ARRAY_LEN(setid_modes); i++) {
		int nr = seccomp_syscall_resolve_name(setid_modes[i].call);

		*what = setid_modes[i].call;
		/* An older libseccomp than the kernel does not know fchmodat2
		 * (Linux 6.6, libseccomp 2.5.5): by its number, which the
		 * unified syscall table gives every architecture built here
		 * (review of round 20: skipped, the call passed the filter). */
#if defined(__x86_64__) || defined(__aarch64__)
		if (nr == __NR_SCMP_ERROR && strcmp(setid_modes[i].call, "fchmodat2") == 0)
			nr = 452;
#endif
		/* any other name unknown on this architecture (chmod, open,
		 * creat, mknod on aarch64) is not a call the kernel has there */
		if (nr == __NR_SCMP_ERROR)
			continue;
		for (b = 0; b < ARRAY_LEN(bits); b++) {
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					      SCMP_CMP(setid_modes[i].arg, SCMP_CMP_MASKED_EQ, bits[b], bits[b]));
			if (rc < 0)
				return rc;
		}
	}
	*what = "openat2";
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
}

/*
 * Refuses the ioctl requests whose byte at bit `shift` of the request (8:
 * the type, 0: the number) is in [start, start + size) (size a power of
 * two, start aligned to it) but not in kept, among those matching
 * fixed_val under fixed_mask (the type, for numbers; nothing, for types):
 * one masked rule per largest aligned block holding no kept byte, so a
 * family costs a handful of rules, not 256.
 */
static int add_ioctl_block(scmp_filter_ctx ctx, uint64_t fixed_mask, uint64_t fixed_val, unsigned shift,
			   unsigned start, unsigned size, const unsigned char *kept, size_t nkept)
{
	bool holds = false;
	int rc;

	for (size_t k = 0; k < nkept; k++)
		if (kept[k] >= start && kept[k] < start + size)
			holds = true;
	if (!holds)
		return rule_masked(ctx, EPERM, "ioctl", 1, fixed_mask | ((0xffULL & ~(uint64_t)(size - 1)) << shift),
				   fixed_val | ((uint64_t)start << shift));
	if (size == 1)
		return 0;
	rc = add_ioctl_block(ctx, fixed_mask, fixed_val, shift, start, size / 2, kept, nkept);
	return rc < 0 ? rc : add_ioctl_block(ctx, fixed_mask, fixed_val, shift, start + size / 2, size / 2, kept, nkept);
}

/*
 * Round 49 (attack49s): RLIMIT_CORE is not the command's to set. The
 * sandbox starts it at 1, soft and hard (child.c no_core_dumps()),
 * because the host kernel honours a limit for a pipe core_pattern
 * ('|/usr/lib/systemd/systemd-coredump ...', apport, ABRT) at that one
 * value only: 1 aborts the dump. The hard limit could not be raised, but
 * the soft one could be lowered, and 0 is a limit the kernel ignores for
 * a pipe: `ulimit -S -c 0; kill -SEGV $$` inside had the host kernel run
 * the helper as root in the host's namespaces. So a new RLIMIT_CORE is
 * not set, whatever its value: setrlimit(RLIMIT_CORE) and
 * prlimit64(pid, RLIMIT_CORE, new, NULL) (glibc's setrlimit()) return 0
 * and change nothing, and prlimit64 with an old limit to fill as well
 * fails with EPERM (0 would leave it unfilled). Not EPERM for the first
 * two: the sanitizers' runtimes (ASan, TSan, MSan, LSan) set RLIMIT_CORE
 * 0 at start (disable_coredump) and die when that fails, so every
 * sanitized build run inside would have; they want no core dump, and
 * at 1 there is none. Reading it (getrlimit, prlimit64 with no new
 * limit) is untouched. The kernel reads the resource as 32 bits.
 */
static int add_rlimit_rules(scmp_filter_ctx ctx, const char **what)
{
	int nr = seccomp_syscall_resolve_name("setrlimit"), rc;

	*what = "setrlimit";
	/* unknown on an architecture that has prlimit64 alone */
	if (nr != __NR_SCMP_ERROR) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), nr, 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffULL, RLIMIT_CORE));
		if (rc < 0)
			return rc;
	}
	*what = "prlimit64";
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(0), SCMP_SYS(prlimit64), 3,
			      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, RLIMIT_CORE), SCMP_A2(SCMP_CMP_NE, 0),
			      SCMP_A3(SCMP_CMP_EQ, 0));
	if (rc < 0)
		return rc;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 3,
				SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, RLIMIT_CORE), SCMP_A2(SCMP_CMP_NE, 0),
				SCMP_A3(SCMP_CMP_NE, 0));
}

static int add_rules(scmp_filter_ctx ctx, bool allow_unix, const char **what)
{
	size_t i;
	int nr, rc;

	for (i = 0; i < ARRAY_LEN(denied_calls); i++) {
		*what = denied_calls[i];
		nr = seccomp_syscall_resolve_name(denied_calls[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (rc < 0)
			return rc;
	}
#if defined(__x86_64__) || defined(__aarch64__)
	for (i = 0; i < ARRAY_LEN(denied_new_calls); i++) {
		*what = denied_new_calls[i].name;
		nr = seccomp_syscall_resolve_name(denied_new_calls[i].name);
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
				      nr != __NR_SCMP_ERROR ? nr : denied_new_calls[i].nr, 0);
		if (rc < 0)
			return rc;
	}
	*what = "a system call newer than the filter";
	for (nr = SECCOMP_FUTURE_FIRST; nr <= SECCOMP_FUTURE_LAST; nr++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
		if (rc < 0)
			return rc;
	}
#endif
	/* clone3 passes its flags in a struct in memory, which a seccomp
	 * filter cannot read. ENOSYS (not EPERM) makes glibc and other libcs
	 * fall back to clone, whose flags are a register we can check. */
	*what = "clone3";
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (rc < 0)
		return rc;
	for (i = 0; i < ARRAY_LEN(ns_flags); i++) {
		*what = "clone";
		rc = rule_masked(ctx, EPERM, "clone", 0, ns_flags[i], ns_flags[i]);
		if (rc < 0)
			return rc;
		*what = "unshare";
		rc = rule_masked(ctx, EPERM, "unshare", 0, ns_flags[i], ns_flags[i]);
		if (rc < 0)
			return rc;
	}
	rc = rule_masked(ctx, EPERM, "unshare", 0, CLONE_NEWTIME, CLONE_NEWTIME);
	if (rc < 0)
		return rc;
	/* The kernel reads the ioctl request as 32 bits; compare only those,
	 * or TIOCSTI | 1<<32 would pass the filter and still inject input
	 * (CVE-2017-5226). */
	*what = "ioctl";
	for (i = 0; i < ARRAY_LEN(refused_ioctls); i++) {
		rc = rule_masked(ctx, EPERM, "ioctl", 1, 0xffffffffULL, refused_ioctls[i]);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < ARRAY_LEN(refused_ioctl_types); i++) {
		rc = add_ioctl_block(ctx, 0xff00ULL, (uint64_t)refused_ioctl_types[i].type << 8, 0, 0, 256,
				     refused_ioctl_types[i].kept, refused_ioctl_types[i].nkept);
		if (rc < 0)
			return rc;
	}
	rc = rule_masked(ctx, EPERM, "ioctl", 1, 0xffffULL, ((unsigned long)'f' << 8) | EXT4_IOC_MOVE_EXT_NR);
	if (rc < 0)
		return rc;
	rc = add_ioctl_block(ctx, 0, 0, 8, 0, 256, allowed_ioctl_types, ARRAY_LEN(allowed_ioctl_types));
	if (rc < 0)
		return rc;
	/* Leases (round 30 of the attack): an owner may take a write lease
	 * on its own file whatever the mount (a read-only view too), and
	 * every open of it elsewhere then fails with EWOULDBLOCK (O_NONBLOCK)
	 * or waits up to lease-break-time (45 s). Kept past the sandbox in
	 * an unreachable SCM_RIGHTS cycle, one on .git/config made the check
	 * after the run read nothing there, and an include it names was not
	 * followed. Nothing in a coding session takes leases (Samba does);
	 * F_GETLEASE stays. Byte-range locks and flock() are advisory: they
	 * block no read of the check's. The kernel reads cmd as 32 bits. */
	*what = "fcntl";
	rc = rule_masked(ctx, EPERM, "fcntl", 1, 0xffffffffULL, F_SETLEASE);
	if (rc < 0)
		return rc;
	rc = add_setid_rules(ctx, what);
	if (rc < 0)
		return rc;
	rc = add_rlimit_rules(ctx, what);
	if (rc < 0)
		return rc;
	return add_socket_rules(ctx, allow_unix, what);
}

int sbx_seccomp_compile(bool allow_unix, struct sock_fprog *out, char *err, size_t errlen)
{
	scmp_filter_ctx ctx;
	const char *what = "init";
	struct stat st;
	void *buf = NULL;
	ssize_t n;
	int fd = -1, rc;

	memset(out, 0, sizeof(*out));
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL) {
		errbuf_set_errno(err, errlen, ENOMEM, "cannot create the seccomp filter");
		return -1;
	}
	rc = add_rules(ctx, allow_unix, &what);
	if (rc < 0) {
		errbuf_set_errno(err, errlen, -rc, "cannot add the seccomp rule for %s", what);
		goto fail;
	}
	/* Export into an anonymous file and read it back: libseccomp 2.5 has
	 * no export-to-memory call. */
	fd = memfd_create("passavant-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot create a memfd for the seccomp filter");
		goto fail;
	}
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		errbuf_set_errno(err, errlen, -rc, "cannot export the seccomp filter");
		goto fail;
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		errbuf_set_errno(err, errlen, errno ? errno : EINVAL, "exported seccomp filter has a bad size");
		goto fail;
	}
	buf = malloc((size_t)st.st_size);
	if (buf == NULL) {
		errbuf_set_errno(err, errlen, ENOMEM, "cannot allocate the seccomp filter");
		goto fail;
	}
	n = pread(fd, buf, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		errbuf_set_errno(err, errlen, n < 0 ? errno : EIO, "cannot read back the seccomp filter");
		goto fail;
	}
	close(fd);
	seccomp_release(ctx);
	out->filter = buf;
	out->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	return 0;
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return -1;
}

void sbx_seccomp_free(struct sock_fprog *prog)
{
	free(prog->filter);
	prog->filter = NULL;
	prog->len = 0;
}

int sbx_seccomp_install(const struct sock_fprog *prog, char *err, size_t errlen)
{
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot install the seccomp filter");
		return -1;
	}
	return 0;
}
