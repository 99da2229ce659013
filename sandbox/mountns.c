/*
 * mountns.c - the sandbox's filesystem view (SPEC §3.3, §7).
 *
 * Runs in the child, in its new mount namespace, with the capabilities of
 * its new user namespace. The order:
 *
 *  1. "/" becomes a private mount tree: nothing we mount propagates back
 *     to the host, and nothing the host mounts or unmounts later reaches
 *     us (a mount the host removes stays busy until the run ends).
 *  2. A setup tmpfs on /tmp becomes the root (pivot_root), with the host
 *     root under /oldroot. The host's /tmp is visible again there, which
 *     is what lets an allow_write path under /tmp be bound in.
 *  3. /oldroot is bound recursively on /newroot and made read-only, every
 *     submount included (mount_setattr AT_RECURSIVE; a remount walk of
 *     /proc/self/mountinfo on kernels before 5.12).
 *  4. Fresh /proc (we are already PID 1 of the new PID namespace), a
 *     minimal /dev, a private /tmp, a private /run.
 *  5. The plan's operations, in the parent's order: by path depth,
 *     parents first, so the most specific path decides; substituted
 *     files after (a substituted directory is an overlayfs union, or a
 *     union in a tmpfs); the
 *     write protections last, so that deny wins over allow.
 *  5b. Every mount of a kernel file system, wherever it is, by a rule
 *     on its type: the secret ones (debugfs, tracefs, pstore, ...) and
 *     any type not known are covered by empty read-only mounts, the
 *     machine's state (sysfs, cgroup, mqueue, ...) is made read-only;
 *     the firmware's root-only tables in /sys are covered
 *     (cover_kernel_fs()). Every mount outside the sandbox's /dev is
 *     nodev (nodev_view()). Round 43: each mount reached by a handle
 *     (open_mount()), the view checked again after (kernel_fs_settled()).
 *  6. The deny_read tmpfs covers turn read-only (they stay writable until
 *     here so that allow_read mount points can be made inside them).
 *  7. pivot_root into /newroot; the setup tmpfs and the host root under it
 *     are detached; chdir to the working directory.
 *
 * No allocation anywhere (see sbx_int.h): paths are built in stack buffers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "base/pathwalk.h"
#include "sandbox/sbx_int.h"

/* The empty file bound over denied files (made in the setup tmpfs). */
#define EMPTY_FILE "/.empty"

/* Joins prefix and an absolute path into buf. -1 (ENAMETOOLONG) if it
 * does not fit. */
static int join(char *buf, size_t len, const char *prefix, const char *path)
{
	int n = snprintf(buf, len, "%s%s", prefix, strcmp(path, "/") == 0 ? "" : path);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* mount(2) with the error message naming what and where. */
static int do_mount(const char *src, const char *dst, const char *type, unsigned long flags,
		    const char *data, const char *what, char *err, size_t errlen)
{
	if (mount(src, dst, type, flags, data) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot %s %s", what, dst);
		return -1;
	}
	return 0;
}

/*
 * Handles on planned paths (round 42 of the attack). The plan looked at
 * each path in the parent; the child mounts later, and meanwhile another
 * session sharing a writable tree (or a program of the user's one of them
 * steers) may swap a directory of a planned path for a symbolic link, or
 * back. mount(2) given a path follows every link in it: a read-only bind
 * of ~/proj/.git/hooks then landed on the link's target and left
 * .git/hooks itself writable. So every mount on a planned path acts on a
 * handle: the path opened once, component by component, with
 * O_PATH|O_NOFOLLOW (a link anywhere on it: ELOOP, the start refused),
 * then mounted on through the handle (open_tree() and move_mount() with
 * AT_EMPTY_PATH; mount(2) on /proc/self/fd/N where those calls are not
 * there), and looked at again once mounted (landed()).
 */

/* Opens full (an absolute path in this namespace: /newroot/..., /oldroot/...)
 * without following a symbolic link anywhere on it: O_PATH, one
 * component at a time. The fd, or -1 with errno (ELOOP: a component is a
 * link; ENOENT, ENOTDIR, EACCES: not there in this view). */
static int open_view(const char *full)
{
	return pathwalk_open(full);
}

/*
 * The walk res (of a mount point, open_mount_walk()) ended out of this
 * user namespace's reach for good: it stopped with EACCES at a
 * directory whose owner is not this namespace's user. Review43a: a
 * directory of the user's own (its group not the user's, so the
 * set-up's DAC override in the namespace does not apply) with mode 000
 * stops the set-up with EACCES too, and the command, its owner, chmods
 * it back once started: a kernel mount below it would keep the host's
 * view (its proc, its debugfs). Only a directory of another owner,
 * which no one in the sandbox may chmod, is out of reach. Round 44:
 * judged on the handle the walk stopped in (res->fd, res->st), not on
 * a second walk of the path, where a directory swapped in between
 * (another owner's at the second look) made a mount the command could
 * reach pass as out of reach.
 */
static bool out_of_reach(const struct pathwalk_result *res)
{
	return res->end == PATHWALK_FAILED && res->err == EACCES && res->fd >= 0 && S_ISDIR(res->st.st_mode) &&
	       res->st.st_uid != geteuid();
}

/* The name of fd for mount(2): the host's proc under /oldroot (our own
 * root has none until the end; "self" is us in every ancestor PID
 * namespace). */
static void fd_name(char *buf, size_t len, int fd)
{
	snprintf(buf, len, SBX_OLDROOT "/proc/self/fd/%d", fd);
}

/* Is fd the root of a mount? statx's STATX_ATTR_MOUNT_ROOT (Linux 5.8);
 * without it, false. */
static bool fd_mount_root(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, &stx) < 0)
		return false;
	return (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

/* The refusal of a planned path changed under us: err names it. */
static int changed(const char *full, const char *how, char *err, size_t errlen)
{
	errbuf_set_errno(err, errlen, 0,
			 "cannot set up %s in the sandbox: %s since the plan looked at it (another program "
			 "changed it during the start); nothing was run, start again",
			 strncmp(full, SBX_NEWROOT, sizeof(SBX_NEWROOT) - 1) == 0 ? full + sizeof(SBX_NEWROOT) - 1
			 : strncmp(full, SBX_OLDROOT, sizeof(SBX_OLDROOT) - 1) == 0 ? full + sizeof(SBX_OLDROOT) - 1
										 : full,
			 how);
	errno = ESTALE;
	return -1;
}

/* A protection found wrong at the last look before the command runs
 * (recheck_protections()): err names it. */
static int protection_gone(const char *full, const char *how, char *err, size_t errlen)
{
	errbuf_set_errno(err, errlen, 0,
			 "cannot start the sandbox: the protection of %s is not in place at the last look before the "
			 "command runs (%s; another program changed the path during the start, or a mount of the "
			 "plan hid it); nothing was run, start again",
			 strncmp(full, SBX_NEWROOT, sizeof(SBX_NEWROOT) - 1) == 0 ? full + sizeof(SBX_NEWROOT) - 1 : full,
			 how);
	errno = ESTALE;
	return -1;
}

/*
 * Looked at again once mounted: full must lead, with no link on the way,
 * to the root of a mount (nothing in a writable tree is one but what we
 * mounted) that shows the object dev/ino, or, dev 0, a tmpfs on
 * another device than under (a cover). The fd of it, or -1 with errno
 * ESTALE (something else is there now), or the open's errno.
 */
static int landed(const char *full, dev_t dev, ino_t ino, dev_t under)
{
	struct statfs sf;
	struct stat st;
	int fd = open_view(full);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !fd_mount_root(fd) ||
	    (dev != 0 ? st.st_dev != dev || st.st_ino != ino
		      : st.st_dev == under || fstatfs(fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/* Maps statvfs flags to the mount flags a remount must keep: the kernel
 * refuses to clear nosuid/nodev/noexec/atime flags it locked when the
 * mount was inherited into our user namespace. */
static unsigned long kept_flags(const char *path)
{
	struct statvfs sv;
	unsigned long f = 0;

	if (statvfs(path, &sv) < 0)
		return 0;
	if (sv.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *w = s;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else
			*w++ = *s++;
	}
	*w = '\0';
}

/* mountinfo copy (static: the child must not allocate, and its stack
 * should stay small). One reader at a time: make_ro_fallback() reads it
 * only for a recursive remount, which cover_kernel_fs() (reading it over
 * its loop) never asks for. */
static char mountinfo[1 << 20];

/* Reads the file path into buf (NUL-terminated). 0 or -1 with err set. */
static int read_whole(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	size_t used = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot open %s", path);
		return -1;
	}
	while ((n = read(fd, buf + used, len - 1 - used)) > 0)
		used += (size_t)n;
	close(fd);
	if (n < 0 || used >= len - 1) {
		errbuf_set_errno(err, errlen, n < 0 ? errno : EFBIG, "cannot read %s", path);
		return -1;
	}
	buf[used] = '\0';
	return 0;
}

/* Reads this namespace's /proc/self/mountinfo into mountinfo[]: the
 * host's proc under /oldroot (until the final pivot our own root has no
 * /proc). It lists our namespace's mounts, relative to our root, since
 * "self" is us in every ancestor PID namespace. 0 or -1 with err set. */
static int read_mountinfo(char *err, size_t errlen)
{
	return read_whole(SBX_OLDROOT "/proc/self/mountinfo", mountinfo, sizeof(mountinfo), err, errlen);
}

/* One line of mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...
 * - TYPE SOURCE SUPEROPTIONS". */
struct mount_line {
	unsigned long id;
	char *point; /* unescaped */
	char *opts;  /* the per-mount options (ro or rw, nodev, ...) */
	char *type;
};

/* Splits the next line of mountinfo[] at *cursor into m (in place) and
 * moves *cursor past it. false at the end; a line not of that form is
 * skipped. */
static bool mountinfo_next(char **cursor, struct mount_line *m)
{
	char *line, *next, *f[6], *type, *sp;
	int i;

	for (line = *cursor; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next == NULL)
			next = line + strlen(line);
		else
			*next++ = '\0';
		type = strstr(line, " - ");
		if (type == NULL)
			continue;
		*type = '\0';
		type += 3;
		sp = strchr(type, ' ');
		if (sp != NULL)
			*sp = '\0';
		f[0] = line;
		for (i = 1; i < 6 && f[i - 1] != NULL; i++) {
			f[i] = strchr(f[i - 1], ' ');
			if (f[i] != NULL)
				*f[i]++ = '\0';
		}
		if (i < 6 || f[5] == NULL)
			continue;
		sp = strchr(f[5], ' ');
		if (sp != NULL)
			*sp = '\0';
		unescape(f[4]);
		m->id = strtoul(f[0], NULL, 10);
		m->point = f[4];
		m->opts = f[5];
		m->type = type;
		*cursor = next;
		return true;
	}
	*cursor = line;
	return false;
}

/*
 * Fallback of make_ro() for kernels without mount_setattr: remounts
 * read-only the mount at path and, when recursive, each mount below it,
 * as listed in /proc/self/mountinfo. A submount hidden under a later mount
 * at the same place is not reachable by path; the visible one is what the
 * command can use, and that one is covered.
 */
static int make_ro_fallback(const char *name, const char *path, bool recursive, char *err,
			    size_t errlen)
{
	size_t plen = strlen(path);
	struct mount_line m;
	char *cursor, *mp;
	char fdn[64];
	int fd;

	if (mount(NULL, name, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags(name), NULL) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot remount read-only %s", path);
		return -1;
	}
	if (!recursive)
		return 0;
	if (read_mountinfo(err, errlen) < 0)
		return -1;
	for (cursor = mountinfo; mountinfo_next(&cursor, &m);) {
		mp = m.point;
		if (strncmp(mp, path, plen) != 0 || mp[plen] != '/')
			continue;
		/* Reached without following a link (round 42): a link
		 * swapped in on the way would take the remount elsewhere
		 * and leave this mount writable. */
		fd = open_view(mp);
		if (fd < 0) {
			/* A mount point we cannot reach (EACCES, ENOENT
			 * under another mount) is not visible either. */
			if (errno == ENOENT || errno == EACCES)
				continue;
			if (errno == ELOOP || errno == ENOTDIR)
				return changed(mp, "a symbolic link is on its path", err, errlen);
			errbuf_set_errno(err, errlen, errno, "cannot open %s", mp);
			return -1;
		}
		fd_name(fdn, sizeof(fdn), fd);
		if (!fd_mount_root(fd)) {
			close(fd);
			return changed(mp, "it is no longer a mount", err, errlen);
		}
		if (mount(NULL, fdn, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | kept_flags(fdn), NULL) < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot remount read-only %s", mp);
			close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* Makes the mount at path (and, if recursive, every mount below it)
 * read-only. */
static int make_ro(const struct sbx_plan *pl, const char *path, bool recursive, char *err,
		   size_t errlen)
{
#ifdef SYS_mount_setattr
	struct mount_attr attr;

	if (!pl->no_mount_setattr) {
		memset(&attr, 0, sizeof(attr));
		attr.attr_set = MOUNT_ATTR_RDONLY;
		if (syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr,
			    sizeof(attr)) == 0)
			return 0;
		if (errno != ENOSYS) {
			errbuf_set_errno(err, errlen, errno, "cannot make %s read-only", path);
			return -1;
		}
	}
#else
	(void)pl;
#endif
	return make_ro_fallback(path, path, recursive, err, errlen);
}

/* make_ro() of the mount fd is the root of (full: its path in this
 * view, for the messages and the fallback's walk of the mounts below). */
static int make_ro_fd(const struct sbx_plan *pl, int fd, const char *full, bool recursive, char *err,
		      size_t errlen)
{
	char name[64];

#ifdef SYS_mount_setattr
	struct mount_attr attr;

	if (!pl->no_mount_setattr) {
		memset(&attr, 0, sizeof(attr));
		attr.attr_set = MOUNT_ATTR_RDONLY;
		if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
			    sizeof(attr)) == 0)
			return 0;
		if (errno != ENOSYS) {
			errbuf_set_errno(err, errlen, errno, "cannot make %s read-only", full);
			return -1;
		}
	}
#else
	(void)pl;
#endif
	fd_name(name, sizeof(name), fd);
	return make_ro_fallback(name, full, recursive, err, errlen);
}

/*
 * Binds the object of the handle src on the object of the handle dst
 * (full: dst's path in this view), recursively when rec, read-only when
 * ro: a detached copy (open_tree()), made read-only before it is attached
 * (mount_setattr()), moved onto dst (move_mount()). Where the kernel has
 * not those calls (or the test hook no_mount_setattr): mount(2) given the
 * handles' /proc/self/fd names, then the remount of what landed at full
 * (landed()), never of a path looked up again with links followed.
 */
static int bind_fd(const struct sbx_plan *pl, int src, int dst, const char *full, bool rec, bool ro,
		   char *err, size_t errlen)
{
	char from[64], to[64];
	struct stat st;
	int top, rc;

#if defined(SYS_open_tree) && defined(SYS_move_mount) && defined(SYS_mount_setattr)
	if (!pl->no_mount_setattr) {
		int tree = (int)syscall(SYS_open_tree, src, "",
					OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (rec ? AT_RECURSIVE : 0));

		if (tree >= 0) {
			struct mount_attr attr;

			memset(&attr, 0, sizeof(attr));
			attr.attr_set = MOUNT_ATTR_RDONLY;
			if (ro && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | (rec ? AT_RECURSIVE : 0), &attr,
					  sizeof(attr)) < 0) {
				const int e = errno;

				close(tree);
				if (e != ENOSYS) {
					errbuf_set_errno(err, errlen, e, "cannot make the bind of %s read-only", full);
					return -1;
				}
				goto by_name; /* Linux 5.2 to 5.11 */
			}
			if (syscall(SYS_move_mount, tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
				errbuf_set_errno(err, errlen, errno, "cannot bind %s", full);
				close(tree);
				return -1;
			}
			close(tree);
			return 0;
		}
		if (errno != ENOSYS) {
			errbuf_set_errno(err, errlen, errno, "cannot bind %s", full);
			return -1;
		}
	}
by_name:
#endif
	fd_name(from, sizeof(from), src);
	fd_name(to, sizeof(to), dst);
	if (mount(from, to, NULL, MS_BIND | (rec ? MS_REC : 0), NULL) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot bind %s", full);
		return -1;
	}
	if (!ro)
		return 0;
	if (fstat(src, &st) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot read %s", full);
		return -1;
	}
	top = landed(full, st.st_dev, st.st_ino, 0);
	if (top < 0)
		return changed(full, "it was moved while it was mounted", err, errlen);
	fd_name(to, sizeof(to), top);
	rc = make_ro_fallback(to, full, rec, err, errlen);
	close(top);
	return rc;
}

/*
 * The kernel's own file systems, wherever the host mounted them (round 41
 * of the attack; a rule since round 42): they are the machine's state,
 * not files, and what they hold is root's. With root mapped to root the
 * command passed their permission checks (the owner's bits; none of them
 * asks for a capability to read or, for many files, to write). Every
 * mount in the view is judged by its type in mountinfo, not by a path
 * (/sys/kernel/debug is only where systemd puts it):
 *
 * - storage (fs_storage()): a type the kernel lists in /proc/filesystems
 *   without "nodev" (it needs a block device: ext4, xfs, btrfs, ...), and
 *   the named ones whose files are files (tmpfs, overlay, fuse, the
 *   network file systems): left as the plan made them;
 * - secret or commanding (fs_hidden_types[]): covered by an empty
 *   read-only tmpfs: debugfs (0700: mac80211's Wi-Fi keys, the physical
 *   memory map), tracefs (the trace buffers), securityfs (IMA's log, the
 *   LSMs' policies), pstore (the logs of past crashes), efivarfs,
 *   configfs, bpf's pinned objects; binfmt_misc (review of round 41: a
 *   mount in the working directory took `echo 1 > bm/status`, and its
 *   `register` would have made the host run a program of the session's
 *   for every matching exec), fusectl (`abort` of the host's FUSE
 *   connections), nfsd and rpc_pipefs, xenfs (privcmd), binder;
 * - the machine's state, readable (fs_state_types[]): sysfs, proc,
 *   cgroup and cgroup2 hierarchies, mqueue, hugetlbfs, devpts, devtmpfs,
 *   autofs, nsfs, resctrl, selinuxfs, smackfs (libselinux reads
 *   whether SELinux is on there): read-only wherever they are (round 42: a
 *   cgroup2 hierarchy, an mqueue, a hugetlbfs or a second devpts inside
 *   an allowWrite tree came in with the host's writable flags: new
 *   queues and huge-page files, `chmod` of the host's queues, ptys and
 *   sysfs directories, cgroup and sysfs knobs opened for writing,
 *   power/state would be one), but the sandbox's own /proc and
 *   /dev/pts, which are ours;
 * - any other type (a kernel newer than this list, a module of the
 *   host's): covered, as the secret ones (fail closed). A storage file
 *   system of a name not listed here shows empty: name it in
 *   fs_storage_types[].
 * A mount hidden under a later one at the same place (its mount ID is not
 * the one statx sees there) is not reachable and is left alone; a mount
 * below a covered one is hidden with it (ENOENT: skipped).
 *
 * And the firmware's tables in sysfs, root's alone (0400): ACPI's (MSDM
 * holds the machine's Windows product key), the raw DMI tables, the old
 * sysfs view of the EFI variables, and the DMI serial numbers and UUID.
 */
static const char *const fs_hidden_types[] = {
	"debugfs", "tracefs", "securityfs", "pstore",	  "efivarfs", "configfs",
	"bpf",	   "binfmt_misc", "fusectl", "nfsd",	"rpc_pipefs", "xenfs",
	"binder",
};
static const char *const fs_state_types[] = {
	"sysfs",  "proc",     "cgroup", "cgroup2", "cpuset", "mqueue",    "hugetlbfs",
	"devpts", "devtmpfs", "autofs", "nsfs",	   "resctrl", "selinuxfs", "smackfs",
};
static const char *const fs_storage_types[] = {
	"tmpfs",  "ramfs",     "overlay",   "fuse",	"fuseblk", "rootfs", "nfs",	"nfs4",
	"cifs",	  "smb3",      "smbfs",	    "9p",	"virtiofs", "ceph",   "afs",	"lustre",
	"gpfs",	  "beegfs",    "orangefs",  "pvfs2",	"glusterfs", "zfs",   "aufs",	"ecryptfs",
	"vboxsf", "vmhgfs",    "prl_fs",    "drvfs",	"lxfs",	    "shiftfs", "coda",	"ncpfs",
	"squashfs", "erofs",   "nilfs2",    "ocfs2",	"gfs2",	    "incremental-fs",
};
static const char *const firmware_paths[] = {
	"/sys/firmware/acpi/tables",		   "/sys/firmware/dmi/tables",
	"/sys/firmware/dmi/entries",		   "/sys/firmware/efi/vars",
	"/sys/devices/virtual/dmi/id/product_serial", "/sys/devices/virtual/dmi/id/board_serial",
	"/sys/devices/virtual/dmi/id/chassis_serial", "/sys/devices/virtual/dmi/id/product_uuid",
};

enum fs_rule { FS_LEAVE, FS_READ_ONLY, FS_COVER };

static bool in_list(const char *type, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(type, list[i]) == 0)
			return true;
	return false;
}

/* /proc/filesystems as read at the start of cover_kernel_fs() (static: the
 * child does not allocate). */
static char filesystems[8192];

/* Is type a storage file system: listed in /proc/filesystems without
 * "nodev" (it needs a block device), a FUSE one ("fuse.sshfs"), or named
 * in fs_storage_types[]? */
static bool fs_storage(const char *type)
{
	size_t tl = strlen(type);
	const char *p;

	if (in_list(type, fs_storage_types, ARRAY_LEN(fs_storage_types)) || strncmp(type, "fuse.", 5) == 0 ||
	    strncmp(type, "fuseblk.", 8) == 0)
		return true;
	/* Lines are "nodev\tNAME" or "\tNAME". */
	for (p = filesystems; (p = strstr(p, type)) != NULL; p += tl) {
		if (p > filesystems && p[-1] == '\t' && (p[tl] == '\n' || p[tl] == '\0'))
			return p - 1 == filesystems || p[-2] == '\n';
	}
	return false;
}

static enum fs_rule fs_rule(const char *type)
{
	if (in_list(type, fs_hidden_types, ARRAY_LEN(fs_hidden_types)))
		return FS_COVER;
	if (in_list(type, fs_state_types, ARRAY_LEN(fs_state_types)))
		return FS_READ_ONLY;
	if (fs_storage(type))
		return FS_LEAVE;
	return FS_COVER;
}

/*
 * An empty read-only tmpfs on the directory of the handle fd, or the
 * empty file bound read-only on a file (label: its path, for the
 * messages). Round 43: on the handle, never on a path looked up again
 * (a directory above it swapped for a link took the cover elsewhere).
 * 0 or -1 with err set.
 */
static int cover_kernel_fd(const struct sbx_plan *pl, int fd, const char *label, char *err, size_t errlen)
{
	char name[64];
	struct stat st;
	int e, rc;

	if (fstat(fd, &st) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot read %s", label);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		fd_name(name, sizeof(name), fd);
		if (mount("tmpfs", name, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=4k") < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot cover the kernel file system at %s", label);
			return -1;
		}
		return 0;
	}
	e = open_view(EMPTY_FILE);
	if (e < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot open %s", EMPTY_FILE);
		return -1;
	}
	rc = bind_fd(pl, e, fd, label, false, true, err, errlen);
	close(e);
	return rc;
}

/* cover_kernel_fd() of the entry name of the directory dfd, not following
 * a link there (label: its path). 0, 1 when it is gone, -1 with err set. */
static int cover_at(const struct sbx_plan *pl, int dfd, const char *name, const char *label, char *err,
		    size_t errlen)
{
	int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), rc;

	if (fd < 0)
		return 1;
	rc = cover_kernel_fd(pl, fd, label, err, errlen);
	close(fd);
	return rc;
}

/* cover_kernel_fd() of the path dst, opened without following a link
 * (open_view()). 0, 1 when dst is not there (hidden by a cover above
 * it), -1 with err set (a link on its path: the change named). */
static int cover_kernel(const struct sbx_plan *pl, const char *dst, char *err, size_t errlen)
{
	int fd = open_view(dst), rc;

	if (fd < 0) {
		if (errno == ENOENT || errno == EACCES)
			return 1;
		if (errno == ELOOP || errno == ENOTDIR)
			return changed(dst, "a symbolic link is on its path", err, errlen);
		errbuf_set_errno(err, errlen, errno, "cannot read %s", dst);
		return -1;
	}
	rc = cover_kernel_fd(pl, fd, dst, err, errlen);
	close(fd);
	return rc;
}

/*
 * The handle of the root of the mount id (mountinfo's ID) at its mount
 * point mp, opened without following a link (round 43: a path followed
 * again took the mount_setattr() or the cover of the kernel's mount
 * elsewhere), or -1 with errno: ENOENT when mp does not reach that mount
 * now (hidden under a later mount or a cover, or moved: the check after
 * the pass tells, kernel_fs_settled()), ELOOP or ENOTDIR when a link is
 * on its path now.
 */
static int open_mount_walk(const char *mp, unsigned long id, struct pathwalk_result *res)
{
	struct statx stx;
	int fd = pathwalk("/", mp, 0, NULL, NULL, res);

	if (fd < 0)
		return -1;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) == 0 &&
	    (((stx.stx_mask & STATX_MNT_ID) != 0 && stx.stx_mnt_id != id) ||
	     ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
	      (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) == 0))) {
		close(fd);
		res->fd = -1;
		res->end = PATHWALK_FAILED;
		res->err = ENOENT;
		errno = ENOENT;
		return -1;
	}
	return fd;
}

/* open_mount_walk() where only the handle is wanted. */
static int open_mount(const char *mp, unsigned long id)
{
	struct pathwalk_result res;
	int fd = open_mount_walk(mp, id, &res);

	if (fd < 0 && res.fd >= 0) {
		close(res.fd);
		errno = res.err;
	}
	return fd;
}

/* The sandbox's own mounts of a state type: its fresh proc and devpts. */
static bool ours(const char *mp)
{
	return strcmp(mp, SBX_NEWROOT "/proc") == 0 || strcmp(mp, SBX_NEWROOT "/dev/pts") == 0;
}

/* Is mp the directory dir of the view or below it? */
static bool at_or_below(const char *mp, const char *dir)
{
	size_t dl = strlen(dir);

	return strncmp(mp, dir, dl) == 0 && (mp[dl] == '\0' || mp[dl] == '/');
}

/* Has the per-mount option list opts (mountinfo's field 6) the option? */
static bool has_opt(const char *opts, const char *opt)
{
	size_t ol = strlen(opt);

	for (const char *p = opts; p != NULL; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, opt, ol) == 0 && (p[ol] == ',' || p[ol] == '\0'))
			return true;
	}
	return false;
}

/*
 * Review of round 42 (review42b): a device node anywhere in the view but
 * the sandbox's own /dev opens as the host's device. A read-only mount
 * does not stop that (the kernel checks nodev for device nodes, not ro),
 * and with root mapped to root the command is their owner: a devtmpfs
 * the host mounted outside /dev (a chroot's or a build root's /dev: its
 * disks read raw past every deny, kmsg written into the host's log), a
 * second devpts (another instance's ptys), or a node mknod'ed on a disk.
 * Every mount of the view outside /dev becomes nodev.
 *
 * Round 43: by one recursive mount_setattr() on the view's root, then
 * nodev cleared again on the sandbox's /dev tree (its tmpfs, the devices
 * bound in, its devpts): no mount is looked for by a path (make_nodev()
 * set it mount by mount at the paths mountinfo gave, and a directory
 * above a devtmpfs in a writable tree swapped for a link took it
 * elsewhere: EINVAL, "not reachable", the devtmpfs left with its
 * devices), and a mount hidden under another gets it too. It costs one
 * call instead of one per mount. 0, 1 when the kernel has not
 * mount_setattr() (the caller then sets it mount by mount, nodev_fd()),
 * -1 with err set.
 */
static int nodev_view(const struct sbx_plan *pl, char *err, size_t errlen)
{
#ifdef SYS_mount_setattr
	struct mount_attr attr;
	int fd, rc;

	if (pl->no_mount_setattr)
		return 1;
	fd = open(SBX_NEWROOT, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot open %s", SBX_NEWROOT);
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_NODEV;
	rc = (int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr));
	close(fd);
	if (rc < 0 && errno == ENOSYS)
		return 1;
	if (rc < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot make the sandbox's mounts mounts without devices");
		return -1;
	}
	/* The sandbox's /dev: our tmpfs (a link there is ELOOP). */
	fd = open_view(SBX_NEWROOT "/dev");
	if (fd < 0 || !fd_mount_root(fd)) {
		errbuf_set_errno(err, errlen, fd < 0 ? errno : ESTALE, "cannot open the sandbox's /dev");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.attr_clr = MOUNT_ATTR_NODEV;
	rc = (int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr));
	close(fd);
	if (rc < 0 && errno != EPERM) {
		errbuf_set_errno(err, errlen, errno, "cannot give the sandbox's /dev its devices");
		return -1;
	}
	/* EPERM: a host mount bound below /dev (allowWrite /dev/shm) whose
	 * nodev the host's namespace locked: cleared mount by mount, that
	 * one left nodev (it was). */
	if (rc < 0) {
		struct mount_line m;
		char *cursor;

		if (read_mountinfo(err, errlen) < 0)
			return -1;
		for (cursor = mountinfo; mountinfo_next(&cursor, &m);) {
			if (!at_or_below(m.point, SBX_NEWROOT "/dev"))
				continue;
			fd = open_mount(m.point, m.id);
			if (fd < 0)
				continue;
			(void)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof(attr));
			close(fd);
		}
	}
	/* /dev/shm was made nodev and stays so. */
	fd = open_view(SBX_NEWROOT "/dev/shm");
	if (fd >= 0) {
		memset(&attr, 0, sizeof(attr));
		attr.attr_set = MOUNT_ATTR_NODEV;
		rc = (int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof(attr));
		close(fd);
		if (rc < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot make %s/dev/shm a mount without devices", SBX_NEWROOT);
			return -1;
		}
	}
	return 0;
#else
	(void)pl;
	(void)err;
	(void)errlen;
	return 1;
#endif
}

/* Where mount_setattr() is not (Linux before 5.12, or the test hook): the
 * mount of the handle fd (mp: its path, for the message) remounted nodev
 * through its /proc/self/fd name, keeping its flags. 0 or -1 with err. */
static int nodev_fd(int fd, const char *mp, char *err, size_t errlen)
{
	char name[64];
	struct statvfs sv;

	fd_name(name, sizeof(name), fd);
	if (statvfs(name, &sv) < 0 ||
	    mount(NULL, name, NULL,
		  MS_BIND | MS_REMOUNT | MS_NODEV | kept_flags(name) | ((sv.f_flag & ST_RDONLY) != 0 ? MS_RDONLY : 0),
		  NULL) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot make %s a mount without devices", mp);
		return -1;
	}
	return 0;
}

/*
 * sysfs's root-only files (round 42): kernfs checks only the owner's bits,
 * and the command, root mapped to root, is their owner: a PCI device's
 * resourceN BARs (0600: mapped for reading, a GPU's memory), the 0400
 * module parameters, /sys/kernel/slab's statistics (0400), vmcoreinfo.
 * Every regular file of a sysfs mount in the view that its owner may read
 * and the others may not is hidden, judged by its mode at each start, not
 * by a name: a directory holding such files and nothing else the others
 * may read (its subdirectories alike, links aside) gets one empty
 * read-only tmpfs (/sys/kernel/slab: one mount for some seven thousand
 * files), any other such file the empty file bound read-only. Other file
 * systems mounted below (cgroup hierarchies, covered debugfs) are not
 * entered. Static buffers: the child does not allocate.
 */
#define SYS_WALK_DEPTH 32
#define SYS_WALK_DIRS 8192 /* subdirectories of one directory remembered */
static char sys_dents[SYS_WALK_DEPTH][4096] __attribute__((aligned(8)));
static unsigned char sys_hidden_dirs[SYS_WALK_DEPTH][SYS_WALK_DIRS / 8];
static char sys_path[PATH_MAX];

static bool root_only(const struct stat *st)
{
	return S_ISREG(st->st_mode) && (st->st_mode & S_IRUSR) != 0 && (st->st_mode & S_IROTH) == 0;
}

/* sys_path + "/" + name at plen; false when it does not fit. */
static bool sys_path_at(size_t plen, const char *name)
{
	size_t nl = strlen(name);

	if (plen + 1 + nl >= sizeof(sys_path))
		return false;
	sys_path[plen] = '/';
	memcpy(sys_path + plen + 1, name, nl + 1);
	return true;
}

/*
 * Walks the directory dfd at sys_path (length plen), depth deep, and closes
 * dfd. 1 when all of it is to be hidden (nothing mounted inside: the
 * caller covers it whole), 0 when its hidden parts were covered one by
 * one, -1 with err set.
 */
static int sys_walk(const struct sbx_plan *pl, int dfd, size_t plen, dev_t dev, int depth, char *err,
		    size_t errlen)
{
	size_t reg = 0, hidden = 0, whole = 0, idx;
	unsigned char *bits = sys_hidden_dirs[depth];
	char *buf = sys_dents[depth];
	bool shown = false;
	struct stat st;
	ssize_t got;
	int rc, cfd;

	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			if (!shown && reg == hidden && hidden + whole > 0) {
				close(dfd);
				return 1;
			}
			if (hidden + whole == 0)
				break;
			if (lseek(dfd, 0, SEEK_SET) < 0)
				goto whole; /* cannot go over it again */
		}
		idx = 0;
		while ((got = getdents64(dfd, buf, sizeof(sys_dents[0]))) > 0) {
			for (ssize_t off = 0; off < got;) {
				struct dirent64 *de = (struct dirent64 *)(buf + off);

				off += de->d_reclen;
				if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
				    (de->d_type != DT_REG && de->d_type != DT_DIR))
					continue;
				if (de->d_type == DT_DIR) {
					size_t i = idx++;

					if (pass == 1) {
						if (i < SYS_WALK_DIRS && (bits[i / 8] & (1u << (i % 8))) != 0 &&
						    sys_path_at(plen, de->d_name) &&
						    cover_at(pl, dfd, de->d_name, sys_path, err, errlen) < 0)
							goto fail;
						sys_path[plen] = '\0';
						continue;
					}
					if (i < SYS_WALK_DIRS)
						bits[i / 8] &= (unsigned char)~(1u << (i % 8));
					if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
						continue; /* gone */
					if (st.st_dev != dev || !sys_path_at(plen, de->d_name)) {
						shown = true; /* not entered */
						continue;
					}
					/* deeper than the walk goes: hidden whole
					 * (review42b: it was shown unwalked) */
					cfd = -1;
					if (depth + 1 >= SYS_WALK_DEPTH)
						rc = 1;
					else if ((cfd = openat(dfd, de->d_name,
							       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
						rc = 0;
					else
						rc = sys_walk(pl, cfd, plen + 1 + strlen(de->d_name), dev,
							      depth + 1, err, errlen);
					if (rc < 0)
						goto fail;
					if (rc == 1 && i < SYS_WALK_DIRS) {
						bits[i / 8] |= (unsigned char)(1u << (i % 8));
						whole++;
					} else if (rc == 1) {
						/* not remembered: covered now */
						if (cover_at(pl, dfd, de->d_name, sys_path, err, errlen) < 0)
							goto fail;
						shown = true;
					} else
						shown = true;
					sys_path[plen] = '\0';
					continue;
				}
				if (pass == 1 && hidden == 0)
					continue;
				if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
					continue; /* gone */
				if (pass == 0) {
					reg++;
					hidden += root_only(&st);
					continue;
				}
				if (root_only(&st) && sys_path_at(plen, de->d_name) &&
				    cover_at(pl, dfd, de->d_name, sys_path, err, errlen) < 0)
					goto fail;
				sys_path[plen] = '\0';
			}
		}
		if (got < 0 && pass == 0)
			goto whole; /* not read whole: hidden whole (fail closed) */
		if (got < 0)
			break;
	}
	close(dfd);
	return 0;
whole:
	close(dfd);
	return 1;
fail:
	close(dfd);
	return -1;
}

/* Hides the root-only files of the sysfs whose mount's root is the handle
 * mfd (mp: its mount point, for the messages; sys_walk()). Every cover
 * inside is made on a handle opened from the directory above it, link
 * free (round 43: by the path sys_path, a directory above the sysfs
 * mount swapped for a link took the covers elsewhere). */
static int hide_sys_root_only(const struct sbx_plan *pl, int mfd, const char *mp, char *err, size_t errlen)
{
	size_t plen = strlen(mp);
	struct stat st, slab;
	int fd, rc;

	if (plen >= sizeof(sys_path) || fstat(mfd, &st) < 0)
		return 0;
	/* A single file of sysfs bound elsewhere (review42b): judged alone.
	 * O_PATH: a 0600 resourceN is not opened for real. */
	if (S_ISREG(st.st_mode))
		return root_only(&st) && cover_kernel_fd(pl, mfd, mp, err, errlen) < 0 ? -1 : 0;
	if (!S_ISDIR(st.st_mode))
		return 0;
	fd = openat(mfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* /sys/kernel/slab (7,381 of this VM's 16,395 entries, its files
	 * 0400 on this kernel, slab statistics being an aid to the
	 * kernel's exploits when they are not): covered whole without a
	 * look, which halves the walk's cost (review42b: ~70-90 ms of
	 * system time to ~30-40). The walk then does not enter it (another
	 * file system's device). */
	if (join(sys_path, sizeof(sys_path), mp, "/kernel/slab") == 0 &&
	    fstatat(fd, "kernel/slab", &slab, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(slab.st_mode) &&
	    slab.st_dev == st.st_dev) {
		int k = openat(fd, "kernel", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (k < 0 || cover_at(pl, k, "slab", sys_path, err, errlen) < 0) {
			if (k < 0)
				errbuf_set_errno(err, errlen, errno, "cannot open %s/kernel", mp);
			else
				close(k);
			close(fd);
			return -1;
		}
		close(k);
	}
	memcpy(sys_path, mp, plen + 1);
	rc = sys_walk(pl, fd, plen, st.st_dev, 0, err, errlen);
	if (rc == 1)
		return cover_kernel_fd(pl, mfd, mp, err, errlen) < 0 ? -1 : 0;
	return rc;
}

/* Every mount of this namespace, as mountinfo lists them (the later ones
 * on top of the earlier), for cover_kernel_fs() and its check. */
#define MAX_MOUNTS 8192
static struct mount_line mounts[MAX_MOUNTS];
static size_t n_mounts;

static int list_mounts(char *err, size_t errlen)
{
	char *cursor;

	if (read_mountinfo(err, errlen) < 0)
		return -1;
	for (n_mounts = 0, cursor = mountinfo; mountinfo_next(&cursor, &mounts[n_mounts]);) {
		if (++n_mounts == MAX_MOUNTS) {
			errbuf_set_errno(err, errlen, EFBIG, "more than %d mounts in the sandbox's view", MAX_MOUNTS);
			return -1;
		}
	}
	return 0;
}

/* The rule for mounts[i]: FS_LEAVE for one outside the view or its root. */
static enum fs_rule rule_of(size_t i)
{
	const struct mount_line *m = &mounts[i];
	size_t plen = strlen(SBX_NEWROOT);

	if (strncmp(m->point, SBX_NEWROOT, plen) != 0 || m->point[plen] != '/')
		return FS_LEAVE;
	/* A proc other than the sandbox's own shows the host's PID
	 * namespace (review42b): every host process's command line, and
	 * the root-only files setup_proc() hid in ours. */
	if (strcmp(m->type, "proc") == 0 && !at_or_below(m->point, SBX_NEWROOT "/proc"))
		return FS_COVER;
	return fs_rule(m->type);
}

/* Is mounts[i] hidden: a later mount on its mount point or on a directory
 * above it (a cover, another bind) stacked over it? */
static bool hidden_later(size_t i)
{
	for (size_t j = i + 1; j < n_mounts; j++)
		if (mounts[j].id != mounts[i].id && at_or_below(mounts[i].point, mounts[j].point))
			return true;
	return false;
}

/* Does mounts[i] still need its rule (a cover; a remount read-only; a
 * sysfs walk, walked[] holding the IDs walked; nodev when each)? */
static bool needs_rule(size_t i, const unsigned long *walked, size_t n_walked, bool nodev_each)
{
	const struct mount_line *m = &mounts[i];
	enum fs_rule rule = rule_of(i);

	if (nodev_each && at_or_below(m->point, SBX_NEWROOT) && !at_or_below(m->point, SBX_NEWROOT "/dev") && !has_opt(m->opts, "nodev"))
		return true;
	if (rule == FS_COVER)
		return true;
	if (rule != FS_READ_ONLY)
		return false;
	if (strcmp(m->type, "sysfs") == 0 && getuid() == 0) {
		size_t k = 0;

		while (k < n_walked && walked[k] != m->id)
			k++;
		if (k == n_walked)
			return true;
	}
	return !has_opt(m->opts, "ro") && !ours(m->point);
}

/*
 * One pass of cover_kernel_fs() over the mounts listed now: each reached
 * through open_mount() (its handle, no link followed, its mount ID
 * checked) and judged on that handle. A mount not reached is left to the
 * check after the pass.
 */
static int kernel_fs_pass(const struct sbx_plan *pl, unsigned long *walked, size_t *n_walked, bool nodev_each,
			  char *err, size_t errlen)
{
	if (list_mounts(err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < n_mounts; i++) {
		const struct mount_line *m = &mounts[i];
		enum fs_rule rule = rule_of(i);
		int fd, rc = 0;

		if (!needs_rule(i, walked, *n_walked, nodev_each))
			continue;
		fd = open_mount(m->point, m->id);
		if (fd < 0) {
			if (errno == ELOOP || errno == ENOTDIR)
				return changed(m->point, "a symbolic link is on its path", err, errlen);
			continue; /* hidden, or moved: the check after the pass */
		}
		if (nodev_each && !at_or_below(m->point, SBX_NEWROOT "/dev") && !has_opt(m->opts, "nodev"))
			rc = nodev_fd(fd, m->point, err, errlen);
		/* Only root mapped to root owns sysfs's root-only files: for
		 * any other user they are unreadable already and the walk is
		 * only its cost (review42b). */
		if (rc == 0 && rule == FS_READ_ONLY && strcmp(m->type, "sysfs") == 0 && getuid() == 0 &&
		    *n_walked < MAX_MOUNTS) {
			rc = hide_sys_root_only(pl, fd, m->point, err, errlen);
			walked[(*n_walked)++] = m->id;
		}
		if (rc == 0 && rule == FS_COVER)
			rc = cover_kernel_fd(pl, fd, m->point, err, errlen);
		else if (rc == 0 && rule == FS_READ_ONLY && !has_opt(m->opts, "ro") && !ours(m->point))
			rc = make_ro_fd(pl, fd, m->point, false, err, errlen);
		close(fd);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* After a pass: is every mount that needs its rule hidden (under a later
 * mount: a cover) or out of reach (EACCES at a directory on its path of
 * another owner, which the command cannot pass or chmod either:
 * out_of_reach(); at one of the user's own the start is refused)? One reached, or not reached and not hidden (moved since
 * mountinfo was read), is not settled. */
static bool kernel_fs_settled(const unsigned long *walked, size_t n_walked, bool nodev_each, char *err,
			      size_t errlen, const char **which)
{
	if (list_mounts(err, errlen) < 0)
		return false;
	for (size_t i = 0; i < n_mounts; i++) {
		struct pathwalk_result res;
		bool far;
		int fd;

		if (!needs_rule(i, walked, n_walked, nodev_each))
			continue;
		/* One walk, decided on where it stopped (round 44). */
		fd = open_mount_walk(mounts[i].point, mounts[i].id, &res);
		far = fd < 0 && out_of_reach(&res);
		if (fd < 0 && res.fd >= 0)
			close(res.fd);
		if (fd < 0)
			errno = res.err;
		if (far)
			continue;
		if (fd < 0 && errno == EACCES) {
			errbuf_set_errno(err, errlen, EACCES,
					 "cannot protect the kernel's mount at %s: a directory of yours above it cannot be "
					 "searched (the command, its owner, could open it again); give it the search "
					 "permission (chmod u+x) or unmount what is below it, then start again",
					 mounts[i].point + strlen(SBX_NEWROOT));
			*which = NULL;
			return false;
		}
		if (fd >= 0 || errno == ELOOP || errno == ENOTDIR || !hidden_later(i)) {
			if (fd >= 0)
				close(fd);
			*which = mounts[i].point;
			return false;
		}
	}
	return true;
}

static unsigned long sys_walked[MAX_MOUNTS];

static int cover_kernel_fs(const struct sbx_plan *pl, char *err, size_t errlen)
{
	char dst[PATH_MAX], which_path[PATH_MAX];
	const char *which = NULL;
	size_t n_walked = 0;
	bool nodev_each;
	int rc;

	if (read_whole(SBX_OLDROOT "/proc/filesystems", filesystems, sizeof(filesystems), err, errlen) < 0)
		return -1;
	/* Devices only in the sandbox's /dev: one call (nodev_view()), or
	 * mount by mount in the passes below. */
	rc = nodev_view(pl, err, errlen);
	if (rc < 0)
		return -1;
	nodev_each = rc == 1;
	/* Passes until every kernel mount is covered, read-only (and nodev)
	 * or hidden: a directory above one renamed or swapped during a pass
	 * moves it out of the pass's reach, and the next pass finds it at
	 * its new place; still moving after four, the start is refused. */
	for (int tries = 0;; tries++) {
		which = NULL;
		if (kernel_fs_pass(pl, sys_walked, &n_walked, nodev_each, err, errlen) < 0)
			return -1;
		if (kernel_fs_settled(sys_walked, n_walked, nodev_each, err, errlen, &which))
			break;
		if (which == NULL)
			return -1; /* mountinfo not read: err set */
		if (tries >= 3) {
			snprintf(which_path, sizeof(which_path), "%s", which);
			return changed(which_path, "a directory above this kernel mount kept moving", err, errlen);
		}
	}
	for (size_t k = 0; k < ARRAY_LEN(firmware_paths); k++) {
		int fd;

		if (join(dst, sizeof(dst), SBX_NEWROOT, firmware_paths[k]) < 0)
			continue;
		/* In the host's sysfs, which no one writes: a link on the
		 * way is the kernel's own (O_PATH follows it). */
		fd = open(dst, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		rc = cover_kernel_fd(pl, fd, dst, err, errlen);
		close(fd);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/*
 * The mount point full (/newroot/...), made where it is missing: each
 * directory on the way opened in turn without following a link
 * (O_PATH|O_NOFOLLOW) and made with mkdirat() where absent, full itself
 * a directory or an empty file. Round 43: mkdir(2) given the path
 * (ensure_mountpoint()) followed a link swapped in above it and made the
 * directories at the link's target, in a writable tree of the host's.
 * The handle of full, or -1 with err set (errno ELOOP or ENOTDIR: a link
 * or a file on the way, the change named).
 */
static enum pathwalk_act mountpoint_step(void *ctx, struct pathwalk_step *s)
{
	const bool *is_dir = ctx;
	int r;

	if (s->fd >= 0 || s->err != ENOENT)
		return PATHWALK_GO;
	if (!s->last || *is_dir)
		r = mkdirat(s->dfd, s->name, 0755);
	else if ((r = openat(s->dfd, s->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444)) >= 0)
		r = close(r);
	if (r < 0 && errno != EEXIST) {
		s->err = errno;
		return PATHWALK_GO;
	}
	return PATHWALK_AGAIN;
}

static int mountpoint_fd(const char *full, bool is_dir, char *err, size_t errlen)
{
	struct pathwalk_result res;
	int fd = pathwalk("/", full, 0, mountpoint_step, &is_dir, &res);

	if (fd >= 0)
		return fd;
	if (res.fd >= 0)
		close(res.fd);
	if (res.end == PATHWALK_LINK || res.end == PATHWALK_NOTDIR)
		return changed(full, "a symbolic link is on its path", err, errlen);
	errbuf_set_errno(err, errlen, res.err, "cannot create the mount point %s", full);
	errno = res.err;
	return -1;
}

/* mountpoint_fd() where the handle is not needed: the sandbox's own
 * trees (its /dev). 0 or -1 with err set. */
static int ensure_mountpoint(const char *path, bool is_dir, char *err, size_t errlen)
{
	int fd = mountpoint_fd(path, is_dir, err, errlen);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Binds path on itself read-only (the whole tree below it). */
static int bind_ro(const struct sbx_plan *pl, const char *path, char *err, size_t errlen)
{
	if (do_mount(path, path, NULL, MS_BIND | MS_REC, NULL, "bind", err, errlen) < 0)
		return -1;
	return make_ro(pl, path, true, err, errlen);
}

/* True for a name of digits only: a process's directory. */
static bool all_digits(const char *name)
{
	if (*name == '\0')
		return false;
	for (; *name != '\0'; name++)
		if (*name < '0' || *name > '9')
			return false;
	return true;
}

/*
 * A top-level /proc entry the command is shown empty (round 42): a file
 * only its owner may read (0400: kmsg, slabinfo, timer_list, vmallocinfo,
 * pagetypeinfo, kpageflags ...), which the command, root mapped to root,
 * read as that owner, whatever its name, a module's later included if it
 * is there at the start; and keys and key-users, the keys of the host's
 * uid 0 and their quotas (the command may make no key: seccomp refuses
 * keyctl and add_key, so every key it could see is the host's).
 */
static bool proc_hidden(int dfd, const char *name)
{
	struct stat st;

	if (strcmp(name, "keys") == 0 || strcmp(name, "key-users") == 0)
		return true;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false; /* gone: bound as it was (ENOENT there) */
	return S_ISREG(st.st_mode) && (st.st_mode & S_IROTH) == 0;
}

/* The error of halve_inotify_budget() when the limit cannot be set:
 * what, why it matters, and what to do. own is "sys/user/NAME", value
 * the text written (its newline cut). Returns -1. */
static int budget_refused(const char *own, const char *value, int e, char *err, size_t errlen)
{
	errbuf_set_errno(err, errlen, e,
			 "cannot set user.%s of the sandbox's user namespace to %.*s: without it the command "
			 "could use up the user's inotify budget on the host. A container's security profile "
			 "(AppArmor denying writes below /proc/sys) or a read-only /proc/sys is the usual "
			 "cause: let the container write /proc/sys/user",
			 own + strlen("sys/user/"), (int)strcspn(value, "\n"), value);
	return -1;
}

/*
 * The user's inotify budget (round 46 of the attack). The kernel counts
 * inotify instances and watches per user in each user namespace and
 * charges every namespace above too, so the sandbox's count is the host
 * user's: a command that opened 128 instances (the usual
 * fs.inotify.max_user_instances) left the user's editor, file watchers
 * and `tail -f` on the host without one ("Too many open files") for as
 * long as it ran. Our user namespace's own limits (/proc/sys/user, ours
 * to set while we hold CAP_SYS_RESOURCE in it) are set to half the
 * machine's, so the host keeps the other half. proc is the fresh proc
 * of the sandbox, mounted and not yet made read-only. A kernel without
 * inotify (no such file) has nothing to share; any other failure
 * refuses the start.
 */
static int halve_inotify_budget(const char *proc, char *err, size_t errlen)
{
	static const struct {
		const char *machine, *own;
	} lim[] = {
		{"sys/fs/inotify/max_user_instances", "sys/user/max_inotify_instances"},
		{"sys/fs/inotify/max_user_watches", "sys/user/max_inotify_watches"},
	};
	char path[PATH_MAX], buf[32];
	size_t i;

	for (i = 0; i < ARRAY_LEN(lim); i++) {
		long v;
		char *end;
		ssize_t n;
		int fd, len;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", proc, lim[i].machine) >= sizeof(path)) {
			errbuf_set_errno(err, errlen, ENAMETOOLONG, "cannot read %s/%s", proc, lim[i].machine);
			return -1;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot read %s", path);
			return -1;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0) {
			errbuf_set_errno(err, errlen, n < 0 ? errno : EIO, "cannot read %s", path);
			return -1;
		}
		buf[n] = '\0';
		errno = 0;
		v = strtol(buf, &end, 10);
		if (errno != 0 || end == buf || v < 0 || v > INT_MAX) {
			errbuf_set_errno(err, errlen, EINVAL, "%s holds no limit", path);
			return -1;
		}
		/* 0 (inotify switched off for every user) stays 0; 1 cannot
		 * be shared and stays 1. */
		len = snprintf(buf, sizeof(buf), "%ld\n", v > 1 ? v / 2 : v);
		if (len < 0 || (size_t)len >= sizeof(buf) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", proc, lim[i].own) >= sizeof(path)) {
			errbuf_set_errno(err, errlen, ENAMETOOLONG, "cannot write %s/%s", proc, lim[i].own);
			return -1;
		}
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return budget_refused(lim[i].own, buf, errno, err, errlen);
		n = write(fd, buf, (size_t)len);
		if (n != len) {
			int e = n < 0 ? errno : EIO;

			close(fd);
			return budget_refused(lim[i].own, buf, e, err, errlen);
		}
		if (close(fd) < 0)
			return budget_refused(lim[i].own, buf, errno, err, errlen);
	}
	return 0;
}

/*
 * Replaces /newroot/proc with a proc of our PID namespace, and makes every
 * part of it that is not a process's read-only (round 41 of the attack).
 * Those entries are the kernel's, one object for every proc mount of the
 * machine, and with root mapped to root the command is their owner:
 * - writes: some sysctls and /proc/sysrq-trigger check only the uid
 *   (bubblewrap binds /proc/sys and the trigger read-only too);
 * - chmod and utimes: an owner may change a proc entry's mode without
 *   any capability, and the kernel keeps the new mode in the entry
 *   itself, so every proc mounted afterwards (the host's own once its
 *   inode is read again, each new container's) has it: `chmod 0000
 *   /proc/meminfo` took `free` from every other user of the host, `chmod
 *   0444 /proc/timer_list` opened a root-only file to them, after the run.
 * So every top-level entry but the processes' directories and the links
 * to them (self, thread-self, mounts, net: the sandbox's own namespaces)
 * is bound on itself read-only, whatever it is called: a list of names
 * (sys, sysrq-trigger, irq, bus before) cannot judge an entry it did not
 * read (/proc/acpi, /proc/driver, /proc/fs, /proc/tty ...). What goes
 * with it: writes to /proc/pressure (a PSI trigger) fail with EROFS.
 * The init's OOM score files too (we are PID 1): it keeps the 1000 the
 * parent gave it (sbx_oom_first()), which the command, a process of the
 * same uid, could otherwise lower; a sandbox filling memory then loses
 * its init, and with it everything, before the kernel turns to
 * passavant.
 */
static int setup_proc(const struct sbx_plan *pl, char *err, size_t errlen)
{
	static const char *const ro_paths[] = { "1/oom_score_adj", "1/oom_adj",
						"1/task/1/oom_score_adj", "1/task/1/oom_adj" };
	char path[PATH_MAX];
	char dents[4096] __attribute__((aligned(8)));
	ssize_t got;
	size_t i;
	int fd;

	if (do_mount("proc", SBX_NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL,
		     "mount a fresh proc on", err, errlen) < 0 ||
	    halve_inotify_budget(SBX_NEWROOT "/proc", err, errlen) < 0)
		return -1;
	fd = open(SBX_NEWROOT "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot open %s", SBX_NEWROOT "/proc");
		return -1;
	}
	while ((got = getdents64(fd, dents, sizeof(dents))) > 0) {
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *de = (struct dirent64 *)(dents + off);

			off += de->d_reclen;
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
			    de->d_type == DT_LNK || all_digits(de->d_name))
				continue;
			if (snprintf(path, sizeof(path), SBX_NEWROOT "/proc/%s", de->d_name) >=
			    (int)sizeof(path)) {
				errbuf_set_errno(err, errlen, ENAMETOOLONG, "cannot bind /proc/%s", de->d_name);
				close(fd);
				return -1;
			}
			if ((proc_hidden(fd, de->d_name) ? cover_kernel(pl, path, err, errlen)
							 : bind_ro(pl, path, err, errlen)) < 0) {
				close(fd);
				return -1;
			}
		}
	}
	if (got < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot list %s", SBX_NEWROOT "/proc");
		close(fd);
		return -1;
	}
	close(fd);
	for (i = 0; i < ARRAY_LEN(ro_paths); i++) {
		snprintf(path, sizeof(path), SBX_NEWROOT "/proc/%s", ro_paths[i]);
		if (access(path, F_OK) < 0)
			continue;
		if (bind_ro(pl, path, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/*
 * A minimal /dev: a tmpfs with the harmless character devices bound from
 * the host (null, zero, full, random, urandom, tty), a new devpts instance
 * for terminals, a private /dev/shm and the usual symlinks. No disks, no
 * /dev/mem, no host ptys. The tmpfs itself is read-only at the end, and
 * so is each device bound in, the terminal at /dev/console too (round 41
 * of the attack): a bind is the host's own inode, whose owner (root,
 * mapped to root) may chmod and touch it without a capability, and did:
 * `chmod 0600 /dev/null` in the sandbox took /dev/null from every other
 * user of the host until its next boot. A read-only mount refuses that
 * (EROFS) and still lets a device be opened for writing.
 */
static int setup_dev(const struct sbx_plan *pl, char *err, size_t errlen)
{
	static const char *const devs[] = { "null", "zero", "full", "random", "urandom", "tty" };
	static const char *const links[][2] = {
		{ "/proc/self/fd", "fd" },	   { "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" },
		{ "pts/ptmx", "ptmx" },
	};
	char src[PATH_MAX], dst[PATH_MAX];
	size_t i;

	if (do_mount("tmpfs", SBX_NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755",
		     "mount a tmpfs on", err, errlen) < 0)
		return -1;
	for (i = 0; i < ARRAY_LEN(devs); i++) {
		snprintf(src, sizeof(src), SBX_OLDROOT "/dev/%s", devs[i]);
		snprintf(dst, sizeof(dst), SBX_NEWROOT "/dev/%s", devs[i]);
		if (access(src, F_OK) < 0)
			continue;
		if (ensure_mountpoint(dst, false, err, errlen) < 0 ||
		    do_mount(src, dst, NULL, MS_BIND, NULL, "bind the device", err, errlen) < 0 ||
		    make_ro(pl, dst, false, err, errlen) < 0)
			return -1;
	}
	for (i = 0; i < ARRAY_LEN(links); i++) {
		snprintf(dst, sizeof(dst), SBX_NEWROOT "/dev/%s", links[i][1]);
		if (symlink(links[i][0], dst) < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot create %s", dst);
			return -1;
		}
	}
	if (ensure_mountpoint(SBX_NEWROOT "/dev/pts", true, err, errlen) < 0 ||
	    ensure_mountpoint(SBX_NEWROOT "/dev/shm", true, err, errlen) < 0)
		return -1;
	if (do_mount("devpts", SBX_NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		     "newinstance,ptmxmode=0666,mode=620", "mount a devpts on", err, errlen) < 0)
		return -1;
	if (do_mount("tmpfs", SBX_NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777",
		     "mount a tmpfs on", err, errlen) < 0)
		return -1;
	/* The command's terminal (ttyrelay.c) is a pty of the host's devpts,
	 * which the new instance above does not show: ttyname() found no
	 * name for it (`tty` said "not a tty", GPG_TTY=$(tty) was empty,
	 * sudo and pinentry had no terminal name). It is bound at
	 * /dev/console, as LXC and systemd-nspawn give a container its
	 * terminal: glibc's ttyname() finds it there by its inode. */
	if (pl->ctty_fd >= 0) {
		struct stat want, got;
		ssize_t n;

		/* by its path in this namespace (a bind of the fd itself
		 * is EINVAL: its mount is the parent's), checked to be it */
		snprintf(dst, sizeof(dst), SBX_OLDROOT "/proc/self/fd/%d", pl->ctty_fd);
		memcpy(src, SBX_OLDROOT, sizeof(SBX_OLDROOT) - 1);
		n = readlink(dst, src + sizeof(SBX_OLDROOT) - 1, sizeof(src) - sizeof(SBX_OLDROOT));
		if (n > 0 && src[sizeof(SBX_OLDROOT) - 1] == '/')
			src[sizeof(SBX_OLDROOT) - 1 + (size_t)n] = '\0';
		/* best effort: a host whose pty is not where its name says
		 * (its devpts not mounted in this view) runs without it */
		if (n > 0 && src[sizeof(SBX_OLDROOT) - 1] == '/' && fstat(pl->ctty_fd, &want) == 0 &&
		    stat(src, &got) == 0 && got.st_ino == want.st_ino && got.st_dev == want.st_dev &&
		    got.st_rdev == want.st_rdev &&
		    (ensure_mountpoint(SBX_NEWROOT "/dev/console", false, err, errlen) < 0 ||
		     do_mount(src, SBX_NEWROOT "/dev/console", NULL, MS_BIND, NULL, "bind the terminal on", err,
			      errlen) < 0 ||
		     make_ro(pl, SBX_NEWROOT "/dev/console", false, err, errlen) < 0))
			return -1;
	}
	return make_ro(pl, SBX_NEWROOT "/dev", false, err, errlen);
}

/*
 * A private /run (and /var/run when it is a directory of its own rather
 * than the usual symlink to /run): the host's runtime sockets and state
 * (the D-Bus and systemd sockets, /run/user/UID with the user's agents,
 * docker.sock, the syslog socket /run/systemd/journal/dev-log that
 * /dev/log names) are not even visible. Hygiene, not the defence: a
 * socket file can lie in any tree the sandbox sees, so the seccomp filter
 * closes the mechanism itself (seccomp.c, add_socket_rules()). /dev/log
 * needs nothing: the minimal /dev has no such entry. Mounted before the
 * plan's operations, so that an allowRead or allowWrite under /run still
 * binds what it names. A symlink is left alone: what it points to is
 * covered or is a path of the plan.
 */
static int setup_run(char *err, size_t errlen)
{
	static const char *const dirs[] = { SBX_NEWROOT "/run", SBX_NEWROOT "/var/run" };
	struct stat st;
	size_t i;

	for (i = 0; i < ARRAY_LEN(dirs); i++) {
		if (lstat(dirs[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (do_mount("tmpfs", dirs[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			     "mode=0755,size=1m", "mount a private tmpfs on", err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* Is the directory holding path on a writable mount? */
static bool parent_writable(const char *path)
{
	char buf[PATH_MAX];
	struct statvfs sv;
	char *slash;

	if (join(buf, sizeof(buf), "", path) < 0)
		return true;
	slash = strrchr(buf, '/');
	if (slash == NULL || slash == buf)
		return true;
	*slash = '\0';
	if (statvfs(buf, &sv) < 0)
		return true; /* unknown: treat as writable, pin anyway */
	return (sv.f_flag & ST_RDONLY) == 0;
}

/*
 * "Pins" each ancestor of path (prefixed with /newroot) whose own parent
 * is writable by binding it onto itself: a mount point cannot be renamed
 * or removed (EBUSY). Every mount that hides or replaces host content
 * inside a writable tree needs it, not only a write protection: a cover
 * or a substituted file stays on its directory when the command renames
 * that directory (or one above it), and the next session, which looks
 * for the path by name, finds the host file at its new name uncovered
 * (round 29 of the attack: a denyRead key and a masked .env read in
 * clear one session later). The self-bind is recursive, so it copies the
 * sandbox's current view under it.
 */
static int pin_ancestors(const struct sbx_plan *pl, const char *path, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	size_t root = strlen(SBX_NEWROOT), top, end, last;
	bool writable;

	if (join(buf, sizeof(buf), "", path) < 0) {
		errbuf_set_errno(err, errlen, errno, "path too long: %s", path);
		return -1;
	}
	/* Up from path: the shallowest ancestor whose own parent and every
	 * one's below it are writable (each cut put back as it is left). */
	last = (size_t)(strrchr(buf, '/') - buf);
	top = strlen(buf);
	for (end = last; end > root; end--) {
		if (buf[end] != '/')
			continue;
		buf[end] = '\0';
		writable = parent_writable(buf);
		buf[end] = '/';
		if (!writable)
			break;
		top = end;
	}
	/* Down from there, shallowest first: each recursive self-bind copies
	 * the mounts below it, so pinning the deepest first made every level
	 * copy the pins of the levels under it, twice (the pin and what it
	 * hides): 2^depth mounts, and a start that failed (ENOSPC) past 16
	 * levels (review of round 29). This way a pin copies only what the
	 * plan mounted below it. One already a mount point (pinned for an
	 * earlier path, or a bind of the plan: fd_mount_root()) is not pinned
	 * again. */
	for (end = top; end <= last; end++) {
		struct stat st;
		int fd, pin;

		if (buf[end] != '/')
			continue;
		buf[end] = '\0';
		/* By a handle opened without following links (round 42): a
		 * pin through a link swapped in would pin its target and
		 * leave this directory free to be renamed. */
		fd = open_view(buf);
		if (fd < 0) {
			if (errno == ELOOP || errno == ENOTDIR)
				return changed(buf, "a symbolic link is on its path", err, errlen);
			errbuf_set_errno(err, errlen, errno, "cannot pin %s", buf);
			return -1;
		}
		if (!fd_mount_root(fd)) {
			if (fstat(fd, &st) < 0 || bind_fd(pl, fd, fd, buf, true, false, err, errlen) < 0) {
				close(fd);
				return -1;
			}
			pin = landed(buf, st.st_dev, st.st_ino, 0);
			if (pin < 0) {
				close(fd);
				return changed(buf, "it was moved while it was pinned", err, errlen);
			}
			close(pin);
		}
		close(fd);
		buf[end] = '/';
	}
	return 0;
}

/*
 * A write protection of path (already prefixed with /newroot): a
 * read-only self-bind that copies the sandbox's current view under it
 * (so deny_read covers inside stay covered), then its ancestors pinned
 * (pin_ancestors()), so the command cannot move .git aside and make a
 * new .git with hooks, nor replace ~/.bashrc.
 */
static int protect(const struct sbx_plan *pl, const char *path, char *err, size_t errlen)
{
	for (int tries = 0;; tries++) {
		struct stat st;
		int fd, top;

		/* A handle on what is at path now, no link followed (round
		 * 42): the bind and the check below act on it. */
		fd = open_view(path);
		if (fd < 0) {
			if (errno == ELOOP || errno == ENOTDIR)
				return changed(path, "a symbolic link is on its path", err, errlen);
			return 0; /* not in the sandbox's view (private /tmp, cover) */
		}
		if (fstat(fd, &st) == 0 && bind_fd(pl, fd, fd, path, true, true, err, errlen) == 0) {
			top = landed(path, st.st_dev, st.st_ino, 0);
			close(fd);
			if (top >= 0) {
				close(top);
				return pin_ancestors(pl, path, err, errlen);
			}
			/* Moved away while it was bound: the bind went with
			 * it (a read-only copy more, elsewhere), and what is
			 * at path now is looked at again. */
			if (tries < 3)
				continue;
			return changed(path, "it kept moving while it was mounted", err, errlen);
		}
		close(fd);
		/* Removed (and perhaps made anew, ext4 giving the same inode
		 * back) on the host since the look, a snapshot rotated: the
		 * bind left this view with it (ENOENT), or the path is a
		 * plain directory again (EINVAL: not a mount). Looked at
		 * again, as at the plan's look, a few times; absent, nothing
		 * to protect. Anything else, or still so, refuses. */
		if (tries < 3 && (errno == ENOENT || errno == EINVAL)) {
			if (errlen > 0)
				err[0] = '\0';
			continue;
		}
		return -1;
	}
}

/* getdents64 records for union_dir() (static: the child must not
 * allocate, and its stack should stay small). */
static char dents[32768];

struct linux_dirent64 {
	ino64_t d_ino;
	off64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * Adds to the directory tfd (the root of a fresh tmpfs of ours, dst its
 * path for the messages) one entry per entry of the directory sfd (a
 * handle, src its path) that tfd has no entry of that name for: a
 * symbolic link as a symbolic link with the same target; a regular file
 * or a directory as an empty mount point with src's own bound read-only
 * on it (the bytes stay the host's: nothing is copied); other kinds left
 * out. Each entry is opened without following a link and its kind taken
 * from that handle, not from the directory record (review of round 42:
 * an entry swapped for a link between the read and the bind had the
 * bind follow it and show the link's target, a denied file). 0 or -1
 * with err set.
 */
static int union_entries(const struct sbx_plan *pl, int sfd, const char *src, int tfd, const char *dst,
			 char *err, size_t errlen)
{
	char to[PATH_MAX], target[PATH_MAX];
	struct stat st, tst;
	long n;
	int fd, f, m, rc;

	fd = openat(sfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot open %s", src);
		return -1;
	}
	while ((n = syscall(SYS_getdents64, fd, dents, sizeof(dents))) > 0) {
		for (long off = 0; off < n;) {
			const struct linux_dirent64 *d = (const void *)(dents + off);
			const char *name = d->d_name;

			off += d->d_reclen;
			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				continue;
			if ((size_t)snprintf(to, sizeof(to), "%s/%s", dst, name) >= sizeof(to)) {
				errbuf_set_errno(err, errlen, ENAMETOOLONG, "path too long: %s/%s", src, name);
				goto fail;
			}
			/* The session has that name: ours win. */
			if (fstatat(tfd, name, &tst, AT_SYMLINK_NOFOLLOW) == 0)
				continue;
			f = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (f < 0)
				continue; /* gone meanwhile */
			if (fstat(f, &st) < 0) {
				errbuf_set_errno(err, errlen, errno, "cannot read %s/%s", src, name);
				close(f);
				goto fail;
			}
			if (S_ISLNK(st.st_mode)) {
				ssize_t t = readlinkat(f, "", target, sizeof(target) - 1);

				close(f);
				if (t < 0) {
					errbuf_set_errno(err, errlen, errno, "cannot read the link %s/%s", src, name);
					goto fail;
				}
				target[t] = '\0';
				if (symlinkat(target, tfd, name) < 0 && errno != EEXIST) {
					errbuf_set_errno(err, errlen, errno, "cannot create %s", to);
					goto fail;
				}
				continue;
			}
			if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
				close(f);
				continue;
			}
			if (S_ISDIR(st.st_mode) ? mkdirat(tfd, name, 0755) < 0
						: (m = openat(tfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444)) < 0 ||
							  close(m) < 0) {
				errbuf_set_errno(err, errlen, errno, "cannot create the mount point %s", to);
				close(f);
				goto fail;
			}
			m = openat(tfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (m < 0) {
				errbuf_set_errno(err, errlen, errno, "cannot open the mount point %s", to);
				close(f);
				goto fail;
			}
			rc = bind_fd(pl, f, m, to, true, true, err, errlen);
			close(f);
			close(m);
			if (rc < 0)
				goto fail;
		}
	}
	if (n < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot read the directory %s", src);
		goto fail;
	}
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

/* overlayfs's magic (linux/magic.h has it from Linux 4.x on). */
#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

/*
 * Looked at again once a file system was mounted on the handle of full
 * (a tmpfs, an overlay): full must lead, link free, to the root of a
 * mount of type magic on another device than under. Its fd, or -1.
 */
static int landed_fs(const char *full, dev_t under, long magic)
{
	struct statfs sf;
	struct stat st;
	int fd = open_view(full);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !fd_mount_root(fd) || st.st_dev == under || fstatfs(fd, &sf) < 0 ||
	    (long)sf.f_type != magic) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/*
 * The overlay way of union_dir(): one read-only overlayfs mount on the
 * handle dfd whose lower layers are the handles sfd (first: its entries
 * win) and hfd, no upper layer, so nothing can be written through it.
 * Overlayfs mounts in a user namespace since Linux 5.11. The layers are
 * named by their /proc/self/fd names (review of round 42: by path, a link
 * swapped in took the overlay's layer, or the overlay itself, elsewhere).
 * 0 when mounted, -1 when not (the caller makes the union; err untouched).
 */
static int overlay_dir(const struct sbx_plan *pl, int sfd, int hfd, int dfd)
{
	char opts[160], s[64], h[64], d[64];

	if (pl->no_overlay)
		return -1;
	fd_name(s, sizeof(s), sfd);
	fd_name(h, sizeof(h), hfd);
	fd_name(d, sizeof(d), dfd);
	if ((size_t)snprintf(opts, sizeof(opts), "lowerdir=%s:%s", s, h) >= sizeof(opts))
		return -1;
	return mount("overlay", d, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, opts) == 0 ? 0 : -1;
}

/* Opens the directory full for union_dir() without following a link; the
 * handle, or -1 with err set (a link or another kind: the change named). */
static int open_union_dir(const char *full, struct stat *st, char *err, size_t errlen)
{
	int fd = open_view(full);

	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return changed(full, "a symbolic link is on its path", err, errlen);
		errbuf_set_errno(err, errlen, errno, "cannot open %s", full);
		return -1;
	}
	if (fstat(fd, st) < 0 || !S_ISDIR(st->st_mode)) {
		close(fd);
		return changed(full, "it is no longer a directory", err, errlen);
	}
	return fd;
}

/*
 * A directory substitution (SBX_OP_FILE on a directory): dst shows the
 * union of src's entries (the session's: they win) and path's own (the
 * host's, at host), read-only. A hashed certificate directory keeps its
 * few hundred links and gains the session CA's entry without a file
 * written on the host. First as one overlayfs mount (overlay_dir());
 * where the kernel refuses it, in a tmpfs of this namespace made
 * read-only at the end: links cost a few microseconds each there, files
 * and subdirectories a bind. All three by handles opened without
 * following links, host checked against the plan's look (op), the mount
 * looked at again (review of round 42: by path, .git/info swapped for a
 * link to a denied directory had the union land there and show it).
 */
static int union_dir(const struct sbx_plan *pl, const struct sbx_op *op, const char *src, const char *host,
		     const char *dst, char *err, size_t errlen)
{
	struct stat sst, hst, dst_st;
	int s, h, d = -1, t = -1, rc = -1;

	s = open_union_dir(src, &sst, err, errlen);
	if (s < 0)
		return -1;
	h = open_union_dir(host, &hst, err, errlen);
	if (h < 0)
		goto out;
	if (op->looked && (hst.st_dev != op->dev || hst.st_ino != op->ino)) {
		changed(host, "it is another file or directory", err, errlen);
		goto out;
	}
	d = open_union_dir(dst, &dst_st, err, errlen);
	if (d < 0)
		goto out;
	if (overlay_dir(pl, s, h, d) == 0) {
		t = landed_fs(dst, dst_st.st_dev, OVERLAYFS_SUPER_MAGIC);
		if (t < 0)
			changed(dst, "it was moved while it was mounted", err, errlen);
		else
			rc = 0;
		goto out;
	}
	{
		char name[64];

		fd_name(name, sizeof(name), d);
		if (mount("tmpfs", name, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot mount a tmpfs on %s", dst);
			goto out;
		}
	}
	t = landed_fs(dst, dst_st.st_dev, TMPFS_MAGIC);
	if (t < 0) {
		changed(dst, "it was moved while it was mounted", err, errlen);
		goto out;
	}
	/* Not recursive: the binds inside are read-only already. */
	if (union_entries(pl, s, src, t, dst, err, errlen) == 0 &&
	    union_entries(pl, h, host, t, dst, err, errlen) == 0 &&
	    make_ro_fd(pl, t, dst, false, err, errlen) == 0)
		rc = 0;
out:
	close(s);
	if (h >= 0)
		close(h);
	if (d >= 0)
		close(d);
	if (t >= 0)
		close(t);
	return rc;
}

/*
 * A deny_read cover on the handle fd of dst (its lstat st): an empty
 * tmpfs on a directory (writable until step 6), the empty file bound
 * read-only on anything else. 0, 1 when what was at dst moved away
 * meanwhile (the caller looks again), -1 with err set.
 */
static int cover_fd(const struct sbx_plan *pl, int fd, const struct stat *st, const char *dst, char *err,
		    size_t errlen)
{
	char name[64];
	struct stat est;
	int e, top;

	if (S_ISDIR(st->st_mode)) {
		fd_name(name, sizeof(name), fd);
		if (mount("tmpfs", name, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=1m") < 0) {
			/* ENOENT: removed on the host since the handle was
			 * opened (round 41's snapshots): looked at again. */
			if (errno == ENOENT)
				return 1;
			errbuf_set_errno(err, errlen, errno, "cannot cover with a tmpfs %s", dst);
			return -1;
		}
		top = landed(dst, 0, 0, st->st_dev);
	} else {
		e = open_view(EMPTY_FILE);
		if (e < 0 || fstat(e, &est) < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot open %s", EMPTY_FILE);
			if (e >= 0)
				close(e);
			return -1;
		}
		if (bind_fd(pl, e, fd, dst, false, true, err, errlen) < 0) {
			const int why = errno;

			close(e);
			return why == ESTALE || why == ENOENT ? 1 : -1;
		}
		close(e);
		top = landed(dst, est.st_dev, est.st_ino, 0);
	}
	if (top < 0)
		return 1;
	close(top);
	return 0;
}

/* SBX_OP_DENY_READ on dst (/newroot and the planned path). */
static int deny_read(const struct sbx_plan *pl, const char *dst, char *err, size_t errlen)
{
	for (int tries = 0;; tries++) {
		struct stat st;
		int fd, rc;

		fd = open_view(dst);
		if (fd < 0) {
			if (errno == ELOOP || errno == ENOTDIR)
				return changed(dst, "a symbolic link is on its path", err, errlen);
			/* Removed on the host between the look and the mount
			 * (a snapshot rotated, another program's temporary
			 * directory): nothing there to hide, as when it was
			 * absent at the look. */
			return 0;
		}
		if (fstat(fd, &st) < 0) {
			errbuf_set_errno(err, errlen, errno, "cannot read %s", dst);
			close(fd);
			return -1;
		}
		rc = cover_fd(pl, fd, &st, dst, err, errlen);
		close(fd);
		if (rc <= 0)
			return rc;
		/* Moved away while it was covered: the cover went with it,
		 * what is at dst now is looked at again. */
		if (tries >= 3)
			return changed(dst, "it kept moving while it was covered", err, errlen);
		if (errlen > 0)
			err[0] = '\0';
	}
}

/*
 * A bind of host content into the view (allow_write, allow_read, a
 * substituted file): src (/oldroot and the path) opened without following
 * links and checked to be the object the plan looked at (op->dev,
 * op->ino: what the plan judged is what is bound, round 42), dst opened
 * the same way once its mount point exists; the bind acts on the two
 * handles and is looked at again (landed()).
 */
static int bind_op(const struct sbx_plan *pl, const struct sbx_op *op, const char *src, const char *dst,
		   bool ro, char *err, size_t errlen)
{
	struct stat st;
	int s, d, top;

	s = open_view(src);
	if (s < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return changed(src, "a symbolic link is on its path", err, errlen);
		errbuf_set_errno(err, errlen, errno, "cannot bind %s", src + sizeof(SBX_OLDROOT) - 1);
		return -1;
	}
	if (fstat(s, &st) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot read %s", src);
		close(s);
		return -1;
	}
	if (op->kind != SBX_OP_FILE && op->looked && (st.st_dev != op->dev || st.st_ino != op->ino)) {
		close(s);
		return changed(src, "it is another file or directory", err, errlen);
	}
	/* Made where missing, no link followed (round 43). */
	d = mountpoint_fd(dst, S_ISDIR(st.st_mode), err, errlen);
	if (d < 0) {
		close(s);
		return -1;
	}
	if (bind_fd(pl, s, d, dst, true, ro, err, errlen) < 0) {
		close(s);
		close(d);
		return -1;
	}
	close(s);
	close(d);
	top = landed(dst, st.st_dev, st.st_ino, 0);
	if (top < 0)
		return changed(dst, "it was moved while it was mounted", err, errlen);
	close(top);
	return 0;
}

/*
 * SBX_OP_SCRATCH on dst: an empty tmpfs the command may write, over the
 * protection of the same path (a package runner's install tree, round
 * 43): what the command writes there is gone with the sandbox, the
 * host's tree stays as it was. Owned by the command's user (the user
 * namespace maps it to itself), mode 0700.
 */
static int scratch(const char *dst, char *err, size_t errlen)
{
	char name[64];
	struct stat st;
	int fd, top;

	fd = open_view(dst);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return changed(dst, "a symbolic link is on its path", err, errlen);
		errbuf_set_errno(err, errlen, errno, "cannot open %s for the session's directory", dst);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return changed(dst, "it is no longer a directory", err, errlen);
	}
	fd_name(name, sizeof(name), fd);
	if (mount("tmpfs", name, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot mount the session's directory on %s", dst);
		close(fd);
		return -1;
	}
	close(fd);
	top = landed(dst, 0, 0, st.st_dev);
	if (top < 0)
		return changed(dst, "it was moved while it was mounted", err, errlen);
	close(top);
	return 0;
}

/* Applies one operation of the plan. */
static int apply_op(const struct sbx_plan *pl, const struct sbx_op *op, char *err, size_t errlen)
{
	char src[PATH_MAX], dst[PATH_MAX];

	if (join(dst, sizeof(dst), SBX_NEWROOT, op->path) < 0 ||
	    join(src, sizeof(src), SBX_OLDROOT, op->kind == SBX_OP_FILE ? op->src : op->path) < 0) {
		errbuf_set_errno(err, errlen, errno, "path too long: %s", op->path);
		return -1;
	}
	switch (op->kind) {
	case SBX_OP_ALLOW_WRITE:
		/* From the host tree: the host mount's own flags (writable),
		 * not the read-only copy. */
		return bind_op(pl, op, src, dst, false, err, errlen);
	case SBX_OP_DENY_READ:
		return deny_read(pl, dst, err, errlen);
	case SBX_OP_FILE:
		if (op->is_dir) {
			char host[PATH_MAX];

			if (join(host, sizeof(host), SBX_OLDROOT, op->path) < 0) {
				errbuf_set_errno(err, errlen, errno, "path too long: %s", op->path);
				return -1;
			}
			return union_dir(pl, op, src, host, dst, err, errlen);
		}
		/* fall through */
	case SBX_OP_ALLOW_READ:
		return bind_op(pl, op, src, dst, true, err, errlen);
	case SBX_OP_PROTECT:
		return protect(pl, dst, err, errlen);
	case SBX_OP_SCRATCH:
		return scratch(dst, err, errlen);
	}
	errbuf_set_errno(err, errlen, EINVAL, "unknown mount operation");
	return -1;
}

/*
 * Round 44: the protections looked at once more, all mounts made, just
 * before pivot_root (step 6c). Each mount was looked at as it was made
 * (landed()), but later steps (the kernel's covers, the read-only
 * remounts, the pins of step 6b, another program renaming a directory
 * of a shared tree meanwhile) came after that look. Every deny_read,
 * allow_read, substituted file and protection of the plan is reached
 * again by a handle (pathwalk(), no link followed) and must still be the
 * root of a mount, read-only, showing what it was made of: a tmpfs or
 * the empty file for a cover, the host's object (dev/ino) for a bind.
 * One superseded by a later operation on the same path, or under a
 * session's scratch directory, is passed over; a cover or protection of
 * a path that is absent (as at its operation: nothing to hide) too.
 * Anything else refuses the start (125, the path named).
 */
static bool superseded(const struct sbx_plan *pl, size_t i)
{
	for (size_t j = i + 1; j < pl->n_ops; j++) {
		const struct sbx_op *o = &pl->ops[j];

		if (strcmp(o->path, pl->ops[i].path) == 0 ||
		    (o->kind == SBX_OP_SCRATCH && at_or_below(pl->ops[i].path, o->path)))
			return true;
	}
	return false;
}

/* The host's object op->path (or op->src) is now: dev/ino by a walk of
 * /oldroot, no link followed. false when it cannot be reached. */
static bool host_object(const char *path, struct stat *st)
{
	char host[PATH_MAX];
	int fd;

	if (join(host, sizeof(host), SBX_OLDROOT, path) < 0)
		return false;
	fd = open_view(host);
	if (fd < 0)
		return false;
	if (fstat(fd, st) < 0) {
		close(fd);
		return false;
	}
	close(fd);
	return true;
}

/*
 * What is wrong with the mount of pl->ops[i] at the handle fd (its stat
 * st), or NULL. A protection self-binds what is at its path at its
 * operation: an earlier operation's mount on the same path (a deny_read
 * cover, a bind) when there is one, so that one's content is expected;
 * under a substituted directory's union (an overlay: its own device
 * numbers) only read-only is checked.
 */
static const char *protection_wrong(const struct sbx_plan *pl, size_t i, int fd, const struct stat *st,
				    const struct stat *empty)
{
	const struct sbx_op *op = &pl->ops[i], *shown = op;
	struct statfs sf;
	struct stat want;
	bool ro, in_union = false;

	for (size_t j = i; j-- > 0;) {
		const struct sbx_op *o = &pl->ops[j];

		if (op->kind == SBX_OP_PROTECT && shown == op && strcmp(o->path, op->path) == 0 &&
		    o->kind != SBX_OP_PROTECT && o->kind != SBX_OP_SCRATCH)
			shown = o;
		if (o->kind == SBX_OP_FILE && o->is_dir && strcmp(o->path, op->path) != 0 &&
		    at_or_below(op->path, o->path))
			in_union = true;
	}
	if (!fd_mount_root(fd))
		return "it is no longer the mount made there";
	/* statfs's f_flags: the mount's flags, ST_RDONLY among them */
	if (fstatfs(fd, &sf) < 0)
		return "it cannot be looked at";
	ro = (sf.f_flags & ST_RDONLY) != 0;
	/* Read-only: all but a cover of a path the plan saw as a file that
	 * is a directory now (step 6 makes the planned directories' covers
	 * read-only; with nothing inside, an empty writable tmpfs). */
	if (!ro && (op->kind != SBX_OP_DENY_READ || op->is_dir || !S_ISDIR(st->st_mode)))
		return "it is writable";
	if (in_union)
		return NULL;
	switch (shown->kind) {
	case SBX_OP_DENY_READ:
		if (S_ISDIR(st->st_mode))
			return sf.f_type != TMPFS_MAGIC ? "its cover is gone" : NULL;
		return st->st_dev != empty->st_dev || st->st_ino != empty->st_ino ? "its cover is gone" : NULL;
	case SBX_OP_FILE:
		if (shown->is_dir)
			return NULL; /* a union: an overlay or a tmpfs of its own */
		if (!host_object(shown->src, &want))
			return NULL; /* the source moved on: read-only is what counts */
		break;
	case SBX_OP_ALLOW_READ:
	case SBX_OP_ALLOW_WRITE:
	case SBX_OP_PROTECT:
		/* The plan's look (a bind checked it); a protection binds
		 * what is there at its operation, so one that is not the
		 * plan's look is compared with the host's object now. */
		if (shown->looked && (shown->kind != SBX_OP_PROTECT || (st->st_dev == shown->dev && st->st_ino == shown->ino))) {
			want.st_dev = shown->dev;
			want.st_ino = shown->ino;
		} else if (!host_object(shown->path, &want))
			return NULL; /* the host's moved on (a rotated snapshot): read-only is what counts */
		break;
	case SBX_OP_SCRATCH:
		return NULL;
	}
	return st->st_dev != want.st_dev || st->st_ino != want.st_ino ? "it shows another file or directory" : NULL;
}

static int recheck_protections(const struct sbx_plan *pl, char *err, size_t errlen)
{
	char dst[PATH_MAX];
	struct stat empty;
	int e = open_view(EMPTY_FILE);

	if (e < 0 || fstat(e, &empty) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot open %s", EMPTY_FILE);
		if (e >= 0)
			close(e);
		return -1;
	}
	close(e);
	for (size_t i = 0; i < pl->n_ops; i++) {
		const struct sbx_op *op = &pl->ops[i];
		struct pathwalk_result res;
		const char *why;
		int fd;

		if (op->kind == SBX_OP_ALLOW_WRITE || op->kind == SBX_OP_SCRATCH || superseded(pl, i))
			continue;
		if (join(dst, sizeof(dst), SBX_NEWROOT, op->path) < 0) {
			errbuf_set_errno(err, errlen, ENAMETOOLONG, "path too long: %s", op->path);
			return -1;
		}
		fd = pathwalk("/", dst, 0, NULL, NULL, &res);
		if (fd < 0) {
			const bool far = out_of_reach(&res);

			if (res.fd >= 0)
				close(res.fd);
			if (res.end == PATHWALK_LINK || res.end == PATHWALK_NOTDIR)
				return protection_gone(dst, "a symbolic link is on its path", err, errlen);
			if (far || (res.err == ENOENT && (op->kind == SBX_OP_DENY_READ || op->kind == SBX_OP_PROTECT)))
				continue;
			return protection_gone(dst, res.err == ENOENT ? "it is missing" : "it cannot be reached", err,
					       errlen);
		}
		why = fstat(fd, &res.st) < 0 ? "it cannot be looked at" : protection_wrong(pl, i, fd, &res.st, &empty);
		close(fd);
		if (why != NULL)
			return protection_gone(dst, why, err, errlen);
	}
	return 0;
}

/* Step 2: the setup tmpfs becomes the root, the host root goes to
 * /oldroot (bubblewrap's base directory). */
static int setup_base(char *err, size_t errlen)
{
	int fd;

	if (do_mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755",
		     "mount the setup tmpfs on", err, errlen) < 0)
		return -1;
	if (chdir("/tmp") < 0 || mkdir("newroot", 0755) < 0 || mkdir("oldroot", 0755) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot prepare the setup tmpfs");
		return -1;
	}
	fd = open(".empty", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot create the empty cover file");
		return -1;
	}
	close(fd);
	if (syscall(SYS_pivot_root, ".", "oldroot") < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot pivot_root into the setup tmpfs");
		return -1;
	}
	if (chdir("/") < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot chdir to the setup root");
		return -1;
	}
	return 0;
}

int sbx_mountns_setup(const struct sbx_plan *pl, char *err, size_t errlen)
{
	char dst[PATH_MAX], name[64];
	struct stat st;
	size_t i;
	int fd, rc;

	/* 1. Nothing propagates either way: not what we do to the host, and
	 * not what the host mounts later into the view (a USB stick, an
	 * sshfs or an unlocked vault under a read-only or denied path would
	 * arrive with its own flags: writable, uncovered; round 7 of the
	 * attack). The view is the host's as it was at the start. */
	if (do_mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL, "make a private mount of", err,
		     errlen) < 0)
		return -1;
	/* 2. */
	if (setup_base(err, errlen) < 0)
		return -1;
	/* 3. The read-only view of the host. */
	if (do_mount(SBX_OLDROOT, SBX_NEWROOT, NULL, MS_BIND | MS_REC, NULL, "bind the host root on",
		     err, errlen) < 0 ||
	    make_ro(pl, SBX_NEWROOT, true, err, errlen) < 0)
		return -1;
	/* 4. /proc, /dev, /tmp: before the plan's operations, so that an
	 * allow_write under the host's /tmp lands inside the private one. */
	if (setup_proc(pl, err, errlen) < 0 || setup_dev(pl, err, errlen) < 0)
		return -1;
	if (do_mount("tmpfs", SBX_NEWROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777",
		     "mount the private tmpfs on", err, errlen) < 0)
		return -1;
	if (setup_run(err, errlen) < 0)
		return -1;
	/* 5. */
	for (i = 0; i < pl->n_ops; i++)
		if (apply_op(pl, &pl->ops[i], err, errlen) < 0)
			return -1;
	/* 5b. The kernel's file systems, after the plan's binds: a tree
	 * bound recursively (allow_write, allow_read) brings the ones
	 * mounted inside it along. */
	if (cover_kernel_fs(pl, err, errlen) < 0)
		return -1;
	/* 6. Each cover (a tmpfs on a deny_read directory) becomes read-only
	 * now that every mount point inside it exists. If a later operation
	 * mounted at the same place, this reaches that mount instead, which
	 * is read-only already. */
	for (i = 0; i < pl->n_ops; i++) {
		if (pl->ops[i].kind != SBX_OP_DENY_READ || !pl->ops[i].is_dir)
			continue;
		if (join(dst, sizeof(dst), SBX_NEWROOT, pl->ops[i].path) < 0)
			continue;
		/* By a handle, no link followed (round 42). */
		fd = open_view(dst);
		if (fd < 0) {
			if (errno == ELOOP || errno == ENOTDIR)
				return changed(dst, "a symbolic link is on its path", err, errlen);
			continue;
		}
		if (fd_mount_root(fd)) {
			rc = make_ro_fd(pl, fd, dst, false, err, errlen);
			close(fd);
			if (rc < 0)
				return -1;
			continue;
		}
		/* The host removed the directory since step 5 (a snapshot
		 * rotated): the cover left this view with it, and what is
		 * there now is a plain directory made anew (not a mount).
		 * Covered again, read-only at once. */
		fd_name(name, sizeof(name), fd);
		if (fstat(fd, &st) < 0 ||
		    mount("tmpfs", name, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=4k") < 0) {
			const int why = errno;

			close(fd);
			/* ENOENT: removed again, nothing to hide. */
			if (why == ENOENT) {
				if (errlen > 0)
					err[0] = '\0';
				continue;
			}
			errbuf_set_errno(err, errlen, why, "cannot cover with a tmpfs %s", dst);
			return -1;
		}
		close(fd);
		fd = landed(dst, 0, 0, st.st_dev);
		if (fd < 0)
			return changed(dst, "it was moved while it was covered", err, errlen);
		close(fd);
	}
	/* 6b. What a cover or a substituted file hides stays hidden in
	 * later sessions only while its directory keeps its name: their
	 * writable ancestors are pinned (pin_ancestors()), after every
	 * mount exists, so each pin copies the finished view. A write
	 * protection pinned its own in step 5. */
	for (i = 0; i < pl->n_ops; i++) {
		if (pl->ops[i].kind != SBX_OP_DENY_READ && pl->ops[i].kind != SBX_OP_FILE)
			continue;
		if (join(dst, sizeof(dst), SBX_NEWROOT, pl->ops[i].path) < 0 || access(dst, F_OK) < 0)
			continue;
		if (pin_ancestors(pl, dst, err, errlen) < 0)
			return -1;
	}
	/* 6c. (round 44) */
	if (recheck_protections(pl, err, errlen) < 0)
		return -1;
	/* 7. pivot_root(".", ".") stacks the old root on the new one; the
	 * detach then drops the setup tmpfs with the host tree under it. */
	if (chdir(SBX_NEWROOT) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot chdir to the new root");
		return -1;
	}
	if (syscall(SYS_pivot_root, ".", ".") < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot pivot_root into the new root");
		return -1;
	}
	if (umount2(".", MNT_DETACH) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot detach the old root");
		return -1;
	}
	if (chdir("/") < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot chdir to /");
		return -1;
	}
	if (pl->cwd != NULL && chdir(pl->cwd) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot chdir to %s in the sandbox", pl->cwd);
		return -1;
	}
	return 0;
}
