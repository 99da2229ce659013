/*
 * fstype.h - which filesystem types are cheap to look at (round 46,
 * fix46h). A lookup on a mount of another kind may mount something
 * (autofs), wait on another machine (NFS, CIFS, Ceph, ...) or on a
 * process (FUSE): the launcher's look at other users' homes
 * (proxy/cli/plan.c path_look()) and at the mounts that might be homes
 * (proxy/cli/setup.c mount_is_home()) stops before such a mount.
 *
 * An allowlist: the disk, memory and kernel filesystems of the kernel
 * are local; every other type, one unknown included (a new network
 * filesystem, a FUSE mount of any name), is taken as not cheap to look
 * at: the caller then fails closed (denies the path whole, without a
 * look). docs/sandbox.md "Other users' homes on network and automounted
 * filesystems".
 */
#ifndef PASSAVANT_FSTYPE_H
#define PASSAVANT_FSTYPE_H

#include <stdbool.h>

#include "base/attrib.h"

/* Whether mountinfo's type (field after " - ") is of a local filesystem
 * whose lookups neither mount nor wait on anything but the kernel and
 * its disks. */
bool fstype_local(const char *type) NONNULL(1) WUNRES;

#endif
