/*
 * pv-probe - tries one thing inside the sandbox and says through its exit
 * status what happened (nsjail's and bubblewrap's try-syscall style).
 *
 *   pv-probe connect HOST PORT [MSG]  TCP connect; with MSG, send it and
 *                                     print the reply line
 *   pv-probe read PATH                print the file
 *   pv-probe ls DIR                   0 when DIR has entries, 1 when empty
 *   pv-probe kfs-write DIR            mkdir, create, chmod, open for writing in DIR: 0 none worked
 *   pv-probe write PATH               append "probe\n" (O_CREAT)
 *   pv-probe mkdir PATH
 *   pv-probe rename FROM TO
 *   pv-probe socket-unix | unshare-user | clone-newuser | clone3 | mount |
 *            ptrace | keyctl | tiocsti | bpf | io-uring | fanotify | setflags
 *                                     (setflags: FS_IOC_SETFLAGS on the
 *                                     current directory, its own flags)
 *   pv-probe inode-ioctls DIR         tries on DIR (one the sandbox owns)
 *                                     every ioctl that changes what its
 *                                     names mean (fsxattr, fscrypt; and
 *                                     file_setattr; the filesystem
 *                                     families, the console's and the
 *                                     terminal's setters, with the
 *                                     numbers kept; a pty's own;
 *                                     fcntl F_SETLEASE);
 *                                     prints NAME=ok|EPERM|errN each; exit 0
 *   pv-probe sockets                  tries socket()/socketpair() of many
 *                                     families and types; prints one line
 *                                     NAME=ok|EPERM|errN each; exit 0
 *   pv-probe unix-reach PATH...       tries every way it knows to send
 *                                     "reach VARIANT" to the host unix
 *                                     socket at each PATH (socketpair of
 *                                     each type + sendto, sendmsg with a
 *                                     name, connect, connect or sendto
 *                                     after the peer closed; socket());
 *                                     prints
 *                                     VARIANT:PATH=ok|EPERM|errN; exit 0.
 *                                     The host checks what arrived.
 *   pv-probe setid DIR                tries every call that could leave a
 *                                     set-user-ID or set-group-ID file in
 *                                     DIR; prints NAME=ok|EPERM|ENOSYS|errN
 *                                     each, then "setid-files=N" (regular
 *                                     files in DIR with either bit); exit 0
 *   pv-probe getpid                   exit getpid(); prints "pid ppid"
 *   pv-probe pids                     exit the number of /proc/<pid> dirs
 *   pv-probe fds                      exit the number of open fds
 *   pv-probe caps                     0 when CapEff/CapPrm/CapBnd are 0
 *   pv-probe env NAME                 print the value; 1 when unset
 *   pv-probe sigwait FILE             handle INT/TERM/HUP, create FILE,
 *                                     wait; exit 100+signal
 *   pv-probe sleep SECONDS
 *   pv-probe exit N
 *   pv-probe kill-self SIG
 *
 * Exit status: 0 the thing worked; 1 a "negative" outcome named above;
 * 2 usage; otherwise the errno class of the failure:
 *   10 EPERM  11 EACCES  12 EROFS  13 ENOENT  14 ECONNREFUSED
 *   15 ENETUNREACH  16 ENOSYS  17 ENOTDIR/EISDIR  19 EBUSY  18 other errno
 *
 * Results leave through _exit(): under ASan, LeakSanitizer's exit-time
 * check stops the world with ptrace, which the sandbox refuses.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/fanotify.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>

#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

/* Maps errno to the exit status documented above. */
static int errcode(int e)
{
	switch (e) {
	case EPERM:
		return 10;
	case EACCES:
		return 11;
	case EROFS:
		return 12;
	case ENOENT:
		return 13;
	case ECONNREFUSED:
		return 14;
	case ENETUNREACH:
		return 15;
	case ENOSYS:
		return 16;
	case ENOTDIR:
	case EISDIR:
		return 17;
	case EBUSY:
		return 19;
	default:
		return 18;
	}
}

/* Reports a failed call on stderr and exits with its class. */
static void fail(const char *what)
{
	int e = errno;

	fprintf(stderr, "pv-probe: %s: %s\n", what, strerror(e));
	fflush(stderr);
	_exit(errcode(e));
}

/* Exits 0 when rc is not negative, the errno class otherwise. */
static void result(long rc, const char *what)
{
	if (rc < 0)
		fail(what);
	fflush(stdout);
	_exit(0);
}

static int do_connect(const char *host, const char *port, const char *msg)
{
	struct sockaddr_in sin;
	char buf[256];
	ssize_t n;
	int fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
		return 2;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		fail("socket");
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		fail("connect");
	if (msg != NULL) {
		if (write(fd, msg, strlen(msg)) < 0)
			fail("write");
		n = read(fd, buf, sizeof(buf) - 1);
		if (n < 0)
			fail("read");
		buf[n] = '\0';
		printf("%s", buf);
		fflush(stdout);
		_exit(n > 0 ? 0 : 1);
	}
	_exit(0);
}

static int do_read(const char *path)
{
	char buf[4096];
	ssize_t n;
	size_t total = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fail("open");
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, (size_t)n, stdout);
		total += (size_t)n;
	}
	if (n < 0)
		fail("read");
	fflush(stdout);
	_exit(total > 0 ? 0 : 1);
}

static int do_ls(const char *path)
{
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir(path);

	if (dir == NULL)
		fail("opendir");
	while ((d = readdir(dir)) != NULL)
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0) {
			printf("%s\n", d->d_name);
			n++;
		}
	fflush(stdout);
	_exit(n > 0 ? 0 : 1);
}

/*
 * Round 42: every way the command could change what a mount of the
 * kernel's state at dir holds, without writing a byte to the kernel:
 * mkdir and a new file in it (removed again), chmod of dir to its own
 * mode, and each regular file of it opened for writing (closed unwritten).
 * Prints one "WRITABLE what" line per way that worked; exit 0 when none
 * did, 3 otherwise, 1 when dir cannot be read.
 */
static int do_kfs_write(const char *dir)
{
	char path[4096];
	struct dirent *d;
	struct stat st;
	int n = 0, fd;
	DIR *dp;

	if (stat(dir, &st) < 0 || (dp = opendir(dir)) == NULL)
		fail("opendir");
	snprintf(path, sizeof(path), "%s/pv-kfs-dir", dir);
	if (mkdir(path, 0755) == 0) {
		printf("WRITABLE mkdir %s\n", path);
		(void)rmdir(path);
		n++;
	}
	snprintf(path, sizeof(path), "%s/pv-kfs-file", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0) {
		printf("WRITABLE create %s\n", path);
		close(fd);
		(void)unlink(path);
		n++;
	}
	if (chmod(dir, st.st_mode & 07777) == 0) {
		printf("WRITABLE chmod %s\n", dir);
		n++;
	}
	while ((d = readdir(dp)) != NULL) {
		struct stat fs;

		if (snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) >= (int)sizeof(path) ||
		    lstat(path, &fs) < 0 || !S_ISREG(fs.st_mode))
			continue;
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			printf("WRITABLE open %s\n", path);
			close(fd);
			n++;
		}
	}
	closedir(dp);
	fflush(stdout);
	_exit(n > 0 ? 3 : 0);
}

static int do_pids(void)
{
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc");

	if (dir == NULL)
		fail("opendir /proc");
	while ((d = readdir(dir)) != NULL)
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9') {
			printf("%s\n", d->d_name);
			n++;
		}
	fflush(stdout);
	_exit(n > 99 ? 99 : n);
}

/* Exits with the number of open fds, not counting the one reading
 * /proc/self/fd; prints them. */
static int do_fds(void)
{
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");

	if (dir == NULL)
		fail("opendir /proc/self/fd");
	while ((d = readdir(dir)) != NULL)
		if (d->d_name[0] >= '0' && d->d_name[0] <= '9' && atoi(d->d_name) != dirfd(dir)) {
			printf("%s\n", d->d_name);
			n++;
		}
	fflush(stdout);
	_exit(n);
}

/* 0 when CapEff, CapPrm and CapBnd of /proc/self/status are all zero. */
static int do_caps(void)
{
	char line[256];
	int bad = 0, seen = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		fail("fopen /proc/self/status");
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "CapEff:", 7) == 0 || strncmp(line, "CapPrm:", 7) == 0 ||
		    strncmp(line, "CapBnd:", 7) == 0 || strncmp(line, "CapAmb:", 7) == 0) {
			seen++;
			printf("%s", line);
			if (strtoull(line + 7, NULL, 16) != 0)
				bad = 1;
		}
		if (strncmp(line, "Seccomp:", 8) == 0 || strncmp(line, "NoNewPrivs:", 11) == 0)
			printf("%s", line);
	}
	fclose(f);
	fflush(stdout);
	_exit(bad || seen != 4 ? 1 : 0);
}

/* "ok" for rc >= 0, else the errno as EPERM or errN (static). */
static const char *outcome(long rc)
{
	static char buf[16];

	if (rc >= 0)
		return "ok";
	if (errno == EPERM)
		return "EPERM";
	snprintf(buf, sizeof(buf), "err%d", errno);
	return buf;
}

/* One socket() try through the raw system call, so that the test controls
 * all 64 bits of each argument; closes what it got. */
static void try_socket(const char *name, long fam, long type, long proto)
{
	long fd = syscall(SYS_socket, fam, type, proto);

	printf("%s=%s\n", name, outcome(fd));
	if (fd >= 0)
		close((int)fd);
}

static void try_socketpair(const char *name, long fam, long type)
{
	int sv[2];
	long rc = syscall(SYS_socketpair, fam, type, 0L, sv);

	printf("%s=%s\n", name, outcome(rc));
	if (rc >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
}

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif

/* Families and types a sandboxed command might reach for. */
/* One line NAME=ok|EPERM|ENOSYS|errN for a call's result. */
static void setid_line(const char *name, long rc)
{
	int e = errno;

	if (rc >= 0)
		printf("%s=ok\n", name);
	else if (e == EPERM)
		printf("%s=EPERM\n", name);
	else if (e == ENOSYS)
		printf("%s=ENOSYS\n", name);
	else
		printf("%s=err%d\n", name, e);
}

/*
 * The terminal requests programs need (round 30), on a pty of the
 * probe's own: each must work ("ok"), and never answer EPERM. Without a
 * pty (no /dev/ptmx), each line says why.
 */
static void do_tty_kept(void)
{
	struct termios tio;
	struct winsize ws;
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), s = -1, n = 0, one = 1;
	char *name = NULL;

	if (m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0 && (name = ptsname(m)) != NULL)
		s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	memset(&tio, 0, sizeof(tio));
	memset(&ws, 0, sizeof(ws));
	setid_line("kept-tcgets", s < 0 ? -1 : ioctl(s, TCGETS, &tio));
	setid_line("kept-tcsets", s < 0 ? -1 : ioctl(s, TCSETS, &tio));
	setid_line("kept-tcsetsw", s < 0 ? -1 : ioctl(s, TCSETSW, &tio));
	setid_line("kept-tiocgwinsz", s < 0 ? -1 : ioctl(s, TIOCGWINSZ, &ws));
	setid_line("kept-tiocswinsz", s < 0 ? -1 : ioctl(s, TIOCSWINSZ, &ws));
	setid_line("kept-tiocoutq", s < 0 ? -1 : ioctl(s, TIOCOUTQ, &n));
	setid_line("kept-tiocgetd", s < 0 ? -1 : ioctl(s, TIOCGETD, &n));
	setid_line("kept-tiocgexcl", s < 0 ? -1 : ioctl(s, TIOCGEXCL, &n));
	setid_line("kept-tcflsh", s < 0 ? -1 : ioctl(s, TCFLSH, TCIFLUSH));
	setid_line("kept-tcsbrk-drain", s < 0 ? -1 : ioctl(s, TCSBRK, 1));
	setid_line("kept-tiocgptn", m < 0 ? -1 : ioctl(m, TIOCGPTN, &n));
	setid_line("kept-tiocpkt", m < 0 ? -1 : ioctl(m, TIOCPKT, &one));
	if (s >= 0)
		close(s);
	if (m >= 0)
		close(m);
}

/*
 * Each ioctl that changes what the names in dir mean, with harmless
 * arguments (its own fsxattr again, a policy and keys of zeros). dir is
 * the sandbox's own, so the owner check passes: only EPERM proves the
 * filter, a filesystem without the feature answers ENOTTY, EOPNOTSUPP or
 * EINVAL.
 */
static int do_inode_ioctls(const char *dir)
{
	struct fsxattr fx;
	struct fscrypt_policy_v2 pol;
	struct fscrypt_remove_key_arg rk;
	union {
		struct fscrypt_add_key_arg arg;
		unsigned char room[sizeof(struct fscrypt_add_key_arg) + 64];
	} ak;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0) {
		fprintf(stderr, "pv-probe: open %s: %s\n", dir, strerror(errno));
		return 1;
	}
	memset(&fx, 0, sizeof(fx));
	(void)ioctl(dfd, FS_IOC_FSGETXATTR, &fx);
	setid_line("fssetxattr", ioctl(dfd, FS_IOC_FSSETXATTR, &fx));
	/* file_setattr (Linux 6.17, 469 on x86_64 and aarch64): the same on
	 * a path; an older kernel answers ENOSYS outside the sandbox. */
	{
		struct {
			unsigned long long xflags;
			unsigned int extsize, nextents, projid, cowextsize;
		} fa = {fx.fsx_xflags, fx.fsx_extsize, fx.fsx_nextents, fx.fsx_projid, fx.fsx_cowextsize};

		setid_line("file-setattr", syscall(469, dfd, "", &fa, sizeof(fa), AT_EMPTY_PATH));
	}
	memset(&pol, 0, sizeof(pol));
	pol.version = FSCRYPT_POLICY_V2;
	pol.contents_encryption_mode = FSCRYPT_MODE_AES_256_XTS;
	pol.filenames_encryption_mode = FSCRYPT_MODE_AES_256_CTS;
	setid_line("set-encryption-policy", ioctl(dfd, FS_IOC_SET_ENCRYPTION_POLICY, &pol));
	memset(&ak, 0, sizeof(ak));
	ak.arg.key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
	ak.arg.raw_size = 64;
	setid_line("add-encryption-key", ioctl(dfd, FS_IOC_ADD_ENCRYPTION_KEY, &ak));
	memset(&rk, 0, sizeof(rk));
	rk.key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
	setid_line("remove-encryption-key", ioctl(dfd, FS_IOC_REMOVE_ENCRYPTION_KEY, &rk));
	setid_line("remove-encryption-key-all-users", ioctl(dfd, FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, &rk));
	/* Round 22: filesystem families by type, on a file of dir's own
	 * and on dir; arguments of zeros (the request's size bits are the
	 * probe's, the filter ignores them: sizes no filesystem takes, so
	 * outside the sandbox none answers EPERM; ext4 does for its own
	 * MOVE_EXT size). Kept: the VFS's clone and the
	 * flag and fsxattr readers, which must not answer EPERM. */
	{
		char big[256];
		long fl = 0;
		int ffd = openat(dfd, "inode-ioctls.f", O_RDWR | O_CREAT | O_CLOEXEC, 0600);

		memset(big, 0, sizeof(big));
		setid_line("btrfs-snap-create-v2", ioctl(dfd, _IOW(0x94, 23, char[4096]), big));
		setid_line("btrfs-subvol-create", ioctl(dfd, _IOW(0x94, 14, char[4096]), big));
		setid_line("btrfs-subvol-setflags", ioctl(dfd, _IOW(0x94, 26, unsigned long long), big));
		setid_line("xfs-swapext", ioctl(ffd, _IOWR('X', 109, char[128]), big));
		setid_line("xfs-exchange-range", ioctl(ffd, _IOWR('X', 129, char[64]), big));
		setid_line("ext4-move-ext", ioctl(ffd, _IOWR('f', 15, char[48]), big));
		setid_line("f2fs-move-range", ioctl(ffd, _IOWR(0xf5, 9, char[32]), big));
		setid_line("bcachefs-subvolume-create", ioctl(dfd, _IOW(0xbc, 16, char[32]), big));
		/* Types no one may use: nsfs (0xb7) answers outside. */
		{
			int nfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
			int pfd[2] = {-1, -1}, avail = 0;

			setid_line("nsfs-get-nstype", nfd < 0 ? -1 : ioctl(nfd, NS_GET_NSTYPE));
			if (nfd >= 0)
				close(nfd);
			setid_line("kept-fionread", pipe(pfd) < 0 ? -1 : ioctl(pfd[0], FIONREAD, &avail));
			if (pfd[0] >= 0) {
				close(pfd[0]);
				close(pfd[1]);
			}
		}
		/* Round 29: the console's setters (on a regular file: ENOTTY
		 * outside), its queries kept. */
		setid_line("console-kdskbmode", ioctl(ffd, 0x4B45, 0));   /* KDSKBMODE */
		setid_line("console-pio-scrnmap", ioctl(ffd, 0x4B41, big)); /* PIO_SCRNMAP */
		setid_line("console-kdsetmode", ioctl(ffd, 0x4B3A, 0));   /* KDSETMODE */
		setid_line("console-kdfontop", ioctl(ffd, 0x4B72, big));  /* KDFONTOP */
		setid_line("console-kdskbent", ioctl(ffd, 0x4B47, big));  /* KDSKBENT */
		setid_line("vt-activate", ioctl(ffd, 0x5606, 1));         /* VT_ACTIVATE */
		setid_line("vt-lockswitch", ioctl(ffd, 0x560B, 0));       /* VT_LOCKSWITCH */
		setid_line("kept-kdgkbtype", ioctl(ffd, 0x4B33, big));    /* KDGKBTYPE */
		setid_line("kept-vt-getstate", ioctl(ffd, 0x5603, big));  /* VT_GETSTATE */
		/* Round 30: terminal requests that outlast the run, on the
		 * regular file (ENOTTY outside, where TIOCCONS's and
		 * TIOCVHANGUP's capability checks are never reached); and a
		 * write lease on the file (ok outside: its owner, no other
		 * open). */
		setid_line("tty-tiocsetd", ioctl(ffd, 0x5423, big));      /* TIOCSETD */
		setid_line("tty-tiocexcl", ioctl(ffd, 0x540C));           /* TIOCEXCL */
		setid_line("tty-tiocnxcl", ioctl(ffd, 0x540D));           /* TIOCNXCL */
		setid_line("tty-tioccons", ioctl(ffd, 0x541D));           /* TIOCCONS */
		setid_line("tty-tiocsbrk", ioctl(ffd, 0x5427));           /* TIOCSBRK */
		setid_line("tty-tioccbrk", ioctl(ffd, 0x5428));           /* TIOCCBRK */
		setid_line("tty-tcsbrkp", ioctl(ffd, 0x5425, 0));         /* TCSBRKP */
		setid_line("tty-tiocsserial", ioctl(ffd, 0x541F, big));   /* TIOCSSERIAL */
		setid_line("tty-tiocmset", ioctl(ffd, 0x5418, big));      /* TIOCMSET */
		setid_line("tty-tiocmbis", ioctl(ffd, 0x5416, big));      /* TIOCMBIS */
		setid_line("tty-tiocmbic", ioctl(ffd, 0x5417, big));      /* TIOCMBIC */
		setid_line("tty-tiocssoftcar", ioctl(ffd, 0x541A, big));  /* TIOCSSOFTCAR */
		setid_line("tty-tiocslcktrmios", ioctl(ffd, 0x5457, big)); /* TIOCSLCKTRMIOS */
		setid_line("tty-tiocvhangup", ioctl(ffd, 0x5437));        /* TIOCVHANGUP */
		setid_line("tty-tunsetiff", ioctl(ffd, 0x400454ca, big)); /* TUNSETIFF */
		setid_line("fcntl-setlease", ffd < 0 ? -1 : fcntl(ffd, F_SETLEASE, F_WRLCK));
		setid_line("kept-getlease", ffd < 0 ? -1 : fcntl(ffd, F_GETLEASE));
		setid_line("kept-fioqsize", ioctl(ffd, 0x5460, big));     /* FIOQSIZE */
		setid_line("kept-fionbio", ioctl(ffd, FIONBIO, &(int){0}));
		setid_line("kept-fioclex", ioctl(ffd, FIOCLEX));
		do_tty_kept();
		setid_line("kept-ficlone", ioctl(ffd, FICLONE, ffd));
		setid_line("kept-getflags", ioctl(ffd, FS_IOC_GETFLAGS, &fl));
		setid_line("kept-fsgetxattr", ioctl(ffd, FS_IOC_FSGETXATTR, &fx));
		if (ffd >= 0)
			close(ffd);
		(void)unlinkat(dfd, "inode-ioctls.f", 0);
	}
	close(dfd);
	/* _exit: LeakSanitizer's exit check needs ptrace, refused here. */
	_exit(fflush(stdout) == 0 ? 0 : 1);
}

/* A fresh regular file DIR/NAME with mode 0755, or -1. */
/* chmod to the mode it has: 0 when the kernel would have taken any mode
 * (the inode's owner on a writable mount), else -1. */
static int chmod_same(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0 || S_ISLNK(st.st_mode))
		return -1;
	if (chmod(path, st.st_mode & 07777) < 0)
		return -1;
	printf("CHANGED %s\n", path);
	return 0;
}

/*
 * The kernel's objects the sandbox shows (round 41 of the attack): the
 * devices bound from the host and every top-level entry of /proc that is
 * not a process's. Each is chmod'ed to the mode it has; a success means
 * any mode would have been taken, on an inode (or proc entry) the host
 * shares. Then what must still work: writing /dev/null, a process's own
 * /proc/self/oom_score_adj. Exit: 0, or 1 with the CHANGED lines, 2 when
 * what must work does not.
 */
static int do_kernel_chmod(void)
{
	static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					   "/dev/urandom", "/dev/tty", "/dev/console"};
	char path[PATH_MAX];
	struct dirent *de;
	int changed = 0, fd;
	DIR *d;

	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		if (access(devs[i], F_OK) == 0 && chmod_same(devs[i]) == 0)
			changed++;
	d = opendir("/proc");
	if (d == NULL)
		fail("/proc");
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strspn(de->d_name, "0123456789") == strlen(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s", de->d_name);
		if (chmod_same(path) == 0)
			changed++;
	}
	(void)closedir(d);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "x", 1) != 1) {
		printf("cannot write /dev/null: %s\n", strerror(errno));
		fflush(stdout);
		_exit(2);
	}
	(void)close(fd);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1000", 4) != 4) {
		printf("cannot write /proc/self/oom_score_adj: %s\n", strerror(errno));
		fflush(stdout);
		_exit(2);
	}
	(void)close(fd);
	printf("%d changed\n", changed);
	/* _exit: an ASan build's leak check at exit needs ptrace, which
	 * the sandbox refuses */
	fflush(stdout);
	_exit(changed > 0 ? 1 : 0);
}

static int setid_file(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	if (fd >= 0 && fchmod(fd, 0755) < 0) {
		(void)close(fd);
		return -1;
	}
	return fd;
}

static int do_setid(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, n = 0;
	struct open_how how;
	DIR *d;
	struct dirent *de;

	if (dfd < 0)
		fail(dir);
	if (fchdir(dfd) < 0)
		fail("fchdir");
	fd = setid_file(dfd, "f");
	if (fd < 0)
		fail("f");
	setid_line("chmod-suid", chmod("f", 04755));
	setid_line("chmod-sgid", chmod("f", 02755));
	setid_line("chmod-suid-high", syscall(SYS_chmod, "f", 04755UL | (1UL << 32)));
	setid_line("fchmod-suid", fchmod(fd, 04755));
	setid_line("fchmodat-sgid", fchmodat(AT_FDCWD, "f", 02755, 0));
#ifdef SYS_fchmodat2
	setid_line("fchmodat2-suid", syscall(SYS_fchmodat2, AT_FDCWD, "f", 04755, 0));
#else
	setid_line("fchmodat2-suid", syscall(452, AT_FDCWD, "f", 04755, 0));
#endif
	setid_line("chmod-plain", chmod("f", 0700));
	(void)close(fd);
	fd = open("g", O_WRONLY | O_CREAT | O_CLOEXEC, 04755);
	setid_line("open-suid", fd);
	if (fd >= 0)
		(void)close(fd);
	fd = openat(AT_FDCWD, "h", O_WRONLY | O_CREAT | O_CLOEXEC, 02755);
	setid_line("openat-sgid", fd);
	if (fd >= 0)
		(void)close(fd);
	fd = creat("i", 04755);
	setid_line("creat-suid", fd);
	if (fd >= 0)
		(void)close(fd);
	setid_line("mknod-suid", mknod("j", S_IFREG | 04755, 0));
	setid_line("mknodat-sgid", mknodat(AT_FDCWD, "k", S_IFREG | 02755, 0));
	memset(&how, 0, sizeof(how));
	how.flags = O_WRONLY | O_CREAT | O_CLOEXEC;
	how.mode = 04755;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, "l", &how, sizeof(how));
	setid_line("openat2-suid", fd);
	if (fd >= 0)
		(void)close(fd);
	/* allowed: a set-group-ID directory (mkdir), a plain file */
	setid_line("mkdir-sgid", mkdir("m", 02775));
	fd = open("n", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	setid_line("open-plain", fd);
	if (fd >= 0)
		(void)close(fd);
	d = fdopendir(dfd);
	if (d == NULL)
		fail("fdopendir");
	while ((de = readdir(d)) != NULL) {
		struct stat st;

		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    (st.st_mode & (S_ISUID | S_ISGID)) != 0) {
			printf("setid file %s %o\n", de->d_name, (unsigned)(st.st_mode & 07777));
			n++;
		}
	}
	(void)closedir(d);
	printf("setid-files=%d\n", n);
	fflush(stdout);
	_exit(0);
}

static int do_sockets(void)
{
	try_socket("inet", AF_INET, SOCK_STREAM, 0);
	try_socket("inet6", AF_INET6, SOCK_DGRAM, 0);
	try_socket("netlink-route", AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0 /* NETLINK_ROUTE */);
	try_socket("netlink-audit", AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */);
	try_socket("netlink-uevent", AF_NETLINK, SOCK_DGRAM, 15 /* NETLINK_KOBJECT_UEVENT */);
	try_socket("netlink-diag", AF_NETLINK, SOCK_RAW, 4 /* NETLINK_SOCK_DIAG */);
	try_socket("netlink-route-hi", AF_NETLINK, SOCK_RAW, 0x100000000L);
	try_socket("unix", AF_UNIX, SOCK_STREAM, 0);
	try_socket("unix-dgram", AF_UNIX, SOCK_DGRAM, 0);
	try_socket("unix-hi", 0x100000000L | AF_UNIX, SOCK_DGRAM, 0);
	try_socket("vsock", AF_VSOCK, SOCK_STREAM, 0);
	try_socket("vsock-hi", 0x100000000L | AF_VSOCK, SOCK_STREAM, 0);
	try_socket("packet", AF_PACKET, SOCK_RAW, 0);
	try_socket("inet-sock-packet", AF_INET, SOCK_PACKET, 0x0300 /* htons(ETH_P_ALL) */);
	try_socket("alg", AF_ALG, SOCK_SEQPACKET, 0);
	try_socket("key", AF_KEY, SOCK_RAW, 2 /* PF_KEY_V2 */);
	try_socket("bluetooth", AF_BLUETOOTH, SOCK_STREAM, 0);
	try_socket("xdp", AF_XDP, SOCK_RAW, 0);
	try_socket("tipc", AF_TIPC, SOCK_RDM, 0);
	try_socket("can", AF_CAN, SOCK_RAW, 1);
	try_socket("unspec", AF_UNSPEC, SOCK_STREAM, 0);
	try_socket("family-63", 63, SOCK_STREAM, 0);
	try_socket("family-neg", -1L, SOCK_STREAM, 0);
	try_socketpair("pair-stream", AF_UNIX, SOCK_STREAM);
	try_socketpair("pair-stream-flags", AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC);
	try_socketpair("pair-seqpacket", AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC);
	try_socketpair("pair-dgram", AF_UNIX, SOCK_DGRAM);
	try_socketpair("pair-dgram-flags", AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK);
	try_socketpair("pair-raw", AF_UNIX, SOCK_RAW);
	try_socketpair("pair-dgram-hi", AF_UNIX, 0x100000000L | SOCK_DGRAM);
	try_socketpair("pair-tipc", AF_TIPC, SOCK_SEQPACKET);
	try_socketpair("pair-vsock", AF_VSOCK, SOCK_STREAM);
	fflush(stdout);
	_exit(0);
}

/* Fills sun with path; false when it does not fit. */
static bool unix_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path))
		return false;
	memcpy(sun->sun_path, path, strlen(path));
	return true;
}

/* One socketpair of type, then how: "sendto", "sendmsg", "connect" (then
 * send), "closed-connect" or "closed-sendto" (close the peer and send
 * once first). Prints the outcome of the step that decided. */
static void reach(const char *tname, int type, const char *how, const char *path)
{
	struct sockaddr_un sun;
	char msg[160];
	struct iovec iov;
	struct msghdr mh;
	int sv[2];
	long rc;

	snprintf(msg, sizeof(msg), "reach %s-%s\n", tname, how);
	if (!unix_addr(&sun, path)) {
		printf("%s-%s:%s=toolong\n", tname, how, path);
		return;
	}
	rc = socketpair(AF_UNIX, type | SOCK_NONBLOCK, 0, sv);
	if (rc < 0) {
		printf("%s-%s:%s=%s\n", tname, how, path, outcome(rc));
		return;
	}
	if (strcmp(how, "sendto") == 0) {
		rc = sendto(sv[0], msg, strlen(msg), 0, (struct sockaddr *)&sun, sizeof(sun));
	} else if (strcmp(how, "sendmsg") == 0) {
		iov.iov_base = msg;
		iov.iov_len = strlen(msg);
		memset(&mh, 0, sizeof(mh));
		mh.msg_name = &sun;
		mh.msg_namelen = sizeof(sun);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		rc = sendmsg(sv[0], &mh, 0);
	} else if (strcmp(how, "closed-sendto") == 0) {
		/* Peer gone, one send to make the kernel notice, then an
		 * address: a socket that forgot its peer must not take one. */
		close(sv[1]);
		sv[1] = -1;
		(void)send(sv[0], msg, strlen(msg), MSG_NOSIGNAL);
		rc = sendto(sv[0], msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sun, sizeof(sun));
	} else {
		if (strcmp(how, "closed-connect") == 0) {
			close(sv[1]);
			sv[1] = -1;
			(void)send(sv[0], msg, strlen(msg), MSG_NOSIGNAL);
		}
		rc = connect(sv[0], (struct sockaddr *)&sun, sizeof(sun));
		if (rc == 0)
			rc = send(sv[0], msg, strlen(msg), MSG_NOSIGNAL);
	}
	printf("%s-%s:%s=%s\n", tname, how, path, outcome(rc));
	close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
}

static int do_unix_reach(int n, char **paths)
{
	static const struct {
		const char *name;
		int type;
	} types[] = { { "dgram", SOCK_DGRAM }, { "raw", SOCK_RAW }, { "stream", SOCK_STREAM },
		      { "seqpacket", SOCK_SEQPACKET } };
	static const char *const hows[] = { "sendto", "sendmsg", "connect", "closed-connect",
					    "closed-sendto" };
	struct sockaddr_un sun;
	size_t t, h;
	long fd;
	int i;

	for (i = 0; i < n; i++) {
		for (t = 0; t < sizeof(types) / sizeof(types[0]); t++)
			for (h = 0; h < sizeof(hows) / sizeof(hows[0]); h++)
				reach(types[t].name, types[t].type, hows[h], paths[i]);
		/* And a socket of its own, for each type. */
		for (t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			fd = socket(AF_UNIX, types[t].type, 0);
			if (fd >= 0 && unix_addr(&sun, paths[i]))
				fd = connect((int)fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ? -1 : fd;
			printf("socket-%s:%s=%s\n", types[t].name, paths[i], outcome(fd));
		}
	}
	fflush(stdout);
	_exit(0);
}

static volatile sig_atomic_t got_sig;

static void on_sig(int sig)
{
	got_sig = sig;
}

/* The signals stay blocked until sigsuspend() unblocks them and waits in
 * one step: one that came between a check of got_sig and pause() would be
 * handled there and pause() would wait for ever (a test that hung under
 * load). */
static int do_sigwait(const char *file)
{
	struct sigaction sa;
	sigset_t set, old;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &old) < 0)
		fail("sigprocmask");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0 ||
	    sigaction(SIGHUP, &sa, NULL) < 0)
		fail("sigaction");
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail("open ready file");
	close(fd);
	sigdelset(&old, SIGINT);
	sigdelset(&old, SIGTERM);
	sigdelset(&old, SIGHUP);
	while (got_sig == 0)
		(void)sigsuspend(&old);
	_exit(100 + got_sig);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	static char params[256];
	struct clone_args ca;
	union bpf_attr attr;
	char c = 'x';
	int fd;

	if (strcmp(cmd, "connect") == 0 && argc >= 4)
		return do_connect(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
	if (strcmp(cmd, "read") == 0 && argc == 3)
		return do_read(argv[2]);
	if (strcmp(cmd, "ls") == 0 && argc == 3)
		return do_ls(argv[2]);
	if (strcmp(cmd, "kfs-write") == 0 && argc == 3)
		return do_kfs_write(argv[2]);
	if (strcmp(cmd, "write") == 0 && argc == 3) {
		fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd < 0)
			fail("open");
		result(write(fd, "probe\n", 6), "write");
	}
	if (strcmp(cmd, "rename") == 0 && argc == 4)
		result(rename(argv[2], argv[3]), "rename");
	if (strcmp(cmd, "mkdir") == 0 && argc == 3)
		result(mkdir(argv[2], 0755), "mkdir");
	if (strcmp(cmd, "socket-unix") == 0)
		result(socket(AF_UNIX, SOCK_STREAM, 0), "socket(AF_UNIX)");
	if (strcmp(cmd, "unshare-user") == 0)
		result(unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER)");
	if (strcmp(cmd, "clone-newuser") == 0) {
		long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);

		if (pid == 0)
			_exit(0);
		result(pid, "clone(CLONE_NEWUSER)");
	}
	if (strcmp(cmd, "clone3") == 0) {
		memset(&ca, 0, sizeof(ca));
		ca.exit_signal = SIGCHLD;
		long pid = syscall(SYS_clone3, &ca, sizeof(ca));

		if (pid == 0)
			_exit(0);
		result(pid, "clone3");
	}
	if (strcmp(cmd, "mount") == 0)
		result(mount("none", "/tmp", "tmpfs", 0, NULL), "mount");
	if (strcmp(cmd, "ptrace") == 0)
		result(ptrace(PTRACE_ATTACH, 1, NULL, NULL), "ptrace(PTRACE_ATTACH, 1)");
	if (strcmp(cmd, "keyctl") == 0)
		result(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0),
		       "keyctl");
	if (strcmp(cmd, "tiocsti") == 0)
		/* On stdin; the test passes a tty or not: only EPERM proves
		 * the filter, ENOTTY would mean it let the call through. */
		result(ioctl(0, TIOCSTI, &c), "ioctl(TIOCSTI)");
	if (strcmp(cmd, "setflags") == 0) {
		/* Its own flags again: only EPERM proves the filter (a
		 * filesystem without flags answers ENOTTY or EOPNOTSUPP). */
		int dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		long fl = 0;

		if (dfd >= 0)
			(void)ioctl(dfd, FS_IOC_GETFLAGS, &fl);
		result(dfd < 0 ? -1 : ioctl(dfd, FS_IOC_SETFLAGS, &fl), "ioctl(FS_IOC_SETFLAGS)");
	}
	if (strcmp(cmd, "inode-ioctls") == 0 && argc >= 3)
		return do_inode_ioctls(argv[2]);
	if (strcmp(cmd, "bpf") == 0) {
		memset(&attr, 0, sizeof(attr));
		result(syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr)), "bpf");
	}
	if (strcmp(cmd, "io-uring") == 0)
		result(syscall(SYS_io_uring_setup, 1, params), "io_uring_setup");
	if (strcmp(cmd, "fanotify") == 0)
		/* An unprivileged group (FAN_REPORT_FID, Linux 5.13): it
		 * works outside the sandbox as any user. */
		result(syscall(SYS_fanotify_init, FAN_CLASS_NOTIF | FAN_REPORT_FID, O_RDONLY), "fanotify_init");
	if (strcmp(cmd, "sockets") == 0)
		return do_sockets();
	if (strcmp(cmd, "kernel-chmod") == 0)
		return do_kernel_chmod();
	if (strcmp(cmd, "setid") == 0 && argc >= 3)
		return do_setid(argv[2]);
	if (strcmp(cmd, "unix-reach") == 0 && argc >= 3)
		return do_unix_reach(argc - 2, argv + 2);
	if (strcmp(cmd, "getpid") == 0) {
		printf("%ld %ld\n", (long)getpid(), (long)getppid());
		fflush(stdout);
		_exit(getpid() > 250 ? 250 : getpid());
	}
	if (strcmp(cmd, "pids") == 0)
		return do_pids();
	if (strcmp(cmd, "fds") == 0)
		return do_fds();
	if (strcmp(cmd, "caps") == 0)
		return do_caps();
	if (strcmp(cmd, "env") == 0 && argc == 3) {
		const char *v = getenv(argv[2]);

		if (v != NULL)
			printf("%s\n", v);
		fflush(stdout);
		_exit(v != NULL ? 0 : 1);
	}
	if (strcmp(cmd, "sigwait") == 0 && argc == 3)
		return do_sigwait(argv[2]);
	if (strcmp(cmd, "sleep") == 0 && argc == 3) {
		sleep((unsigned)atoi(argv[2]));
		_exit(0);
	}
	if (strcmp(cmd, "exit") == 0 && argc == 3)
		_exit(atoi(argv[2]));
	if (strcmp(cmd, "kill-self") == 0 && argc == 3) {
		kill(getpid(), atoi(argv[2]));
		pause();
		_exit(1);
	}
	fprintf(stderr, "pv-probe: bad usage (see the comment at the top of pv-probe.c)\n");
	_exit(2);
}
