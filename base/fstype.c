/*
 * fstype.c - the local filesystem types (contract in fstype.h).
 */
#include <string.h>

#include "base/fstype.h"

bool fstype_local(const char *type)
{
	/* Disk filesystems (a kernel driver on a block device), memory
	 * ones, and the kernel's own (proc, sysfs, cgroup, ...: answered by
	 * the kernel). Not here on purpose: autofs (a lookup mounts), every
	 * network and cluster filesystem, fuse, fuseblk and fuse.* (a
	 * daemon answers, and may hang: ntfs-3g too), 9p and virtiofs (a
	 * hypervisor's share, or a network one), ecryptfs (stacked on
	 * anything). */
	static const char *const local[] = {
		"ext2",	      "ext3",	    "ext4",	   "xfs",	 "btrfs",     "zfs",	   "f2fs",
		"bcachefs",   "jfs",	    "reiserfs",	   "nilfs2",	 "hfs",	      "hfsplus",   "apfs",
		"vfat",	      "msdos",	    "exfat",	   "ntfs",	 "ntfs3",     "udf",	   "iso9660",
		"squashfs",   "erofs",	    "cramfs",	   "romfs",	 "minix",     "ufs",	   "zonefs",
		"tmpfs",      "ramfs",	    "overlay",	   "devtmpfs",	 "proc",      "sysfs",	   "cgroup",
		"cgroup2",    "devpts",	    "mqueue",	   "hugetlbfs",	 "debugfs",   "tracefs",   "securityfs",
		"pstore",     "bpf",	    "configfs",	   "efivarfs",	 "fusectl",   "binfmt_misc", "nsfs",
		"rpc_pipefs", "nfsd",	    "selinuxfs",   "smackfs",	 "resctrl",
		NULL};

	for (size_t i = 0; local[i] != NULL; i++)
		if (strcmp(type, local[i]) == 0)
			return true;
	return false;
}
