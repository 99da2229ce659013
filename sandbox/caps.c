/*
 * caps.c - the last privilege cuts before seccomp and execve.
 *
 * The child is root of its user namespace with every capability there.
 * Before the command runs it loses all of them for good: the bounding set
 * (so execve cannot grant them back, even to uid 0), the ambient set, the
 * three process sets, and securebits are locked so that uid 0 gets nothing
 * at execve either. No libcap: the raw capset call is a few lines.
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/sbx_int.h"

int sbx_caps_nnp_pdeathsig(char *err, size_t errlen)
{
	/* No setuid or file-capability binary may raise privileges from here
	 * on; seccomp also requires it of an unprivileged loader. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot set no_new_privs");
		return -1;
	}
	/* If whoever forked us dies, so do we: a sandbox never outlives the
	 * proxy that is its only way out. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot set the parent-death signal");
		return -1;
	}
	return 0;
}

int sbx_caps_drop(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	unsigned long cap;

	/* Bounding set first: it needs CAP_SETPCAP, which capset removes.
	 * Drop up to the first cap the kernel does not know (EINVAL), so a
	 * kernel newer than our headers loses its new caps too. */
	for (cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;
			errbuf_set_errno(err, errlen, errno, "cannot drop capability %lu from the bounding set", cap);
			return -1;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) {
		errbuf_set_errno(err, errlen, errno, "cannot clear the ambient capabilities");
		return -1;
	}
	/* uid 0 (root mapped to root) would regain a full permitted set at
	 * execve; NOROOT (locked) switches that rule off. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
				      SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED,
		  0, 0, 0) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot lock the securebits");
		return -1;
	}
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = 0;
	if (syscall(SYS_capset, &hdr, data) < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot drop capabilities");
		return -1;
	}
	return 0;
}

int sbx_close_stray_fds(int keep, char *err, size_t errlen)
{
	int rc;

	/* Only stdin, stdout, stderr (and the CLOEXEC report pipe, which
	 * execve closes) cross into the command: not the proxy's sockets,
	 * not a test runner's files. */
	if (keep < 3)
		rc = close_range(3, ~0U, 0);
	else if (keep == 3)
		rc = close_range(4, ~0U, 0);
	else {
		rc = close_range(3, (unsigned)keep - 1, 0);
		if (rc == 0)
			rc = close_range((unsigned)keep + 1, ~0U, 0);
	}
	if (rc < 0) {
		errbuf_set_errno(err, errlen, errno, "cannot close inherited file descriptors");
		return -1;
	}
	return 0;
}
