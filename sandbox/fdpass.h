/*
 * fdpass.h - passing the sandbox's sockets and namespaces over a
 * SOCK_SEQPACKET socketpair with SCM_RIGHTS (STYLE.md 14). The sandbox
 * child sends what it created inside its network namespace in one
 * message; the launcher outside receives and checks each fd against the
 * kind the message declares for it.
 */
#ifndef PASSAVANT_FDPASS_H
#define PASSAVANT_FDPASS_H

#include "base/attrib.h"

/* What an fd of the message is, and what the receiver checks it is. */
enum fdpass_kind {
	FDPASS_LISTENER,   /* the proxy listener: listening AF_INET stream on 127/8 */
	FDPASS_INTERCEPT4, /* interception: listening AF_INET stream on 127/8 */
	FDPASS_INTERCEPT6, /* interception: listening AF_INET6 stream on ::1 */
	FDPASS_RESOLVER,   /* the resolver: bound AF_INET UDP socket on 127/8 */
	FDPASS_USERNS,     /* the sandbox's user namespace (nsfs) */
	FDPASS_NETNS,      /* the sandbox's network namespace (nsfs) */
	FDPASS_NKINDS
};

/* One fd per kind; -1 where there is none. */
struct fdpass_set {
	int fd[FDPASS_NKINDS];
};

/* Sets every slot of set to -1. */
void fdpass_set_init(struct fdpass_set *set) NONNULL(1);

/* Closes every fd of set and sets its slot to -1. */
void fdpass_set_close(struct fdpass_set *set) NONNULL(1);

/*
 * Sends every fd of set that is not -1 over sock (a SOCK_SEQPACKET
 * socket) as one message: one data byte per fd naming its kind, the fds
 * in one SCM_RIGHTS block in the same order. The caller keeps the fds and
 * closes them when done. Returns 0, or -1 with errno set (EINVAL: the set
 * is empty). Allocates nothing (the sandbox child calls it).
 */
int fdpass_send(int sock, const struct fdpass_set *set) NONNULL(2) WUNRES;

/*
 * Receives one message from sock into out (every slot set: the fd, or -1
 * when the message had none of that kind). Each fd is checked against
 * its declared kind (see enum fdpass_kind); sockets are made non-blocking,
 * all are close-on-exec. On any failure every fd received is closed and
 * out holds only -1. Returns 0 (the caller owns the fds), or -1 with errno
 * set: ECONNRESET if the peer closed without sending; EBADMSG if the
 * message carried no fd, more or fewer fds than kind bytes, an unknown or
 * repeated kind, or was truncated; ENOTSOCK if a socket kind is not a
 * socket; EINVAL if an fd is not what its kind says. Blocks until a
 * message comes.
 */
int fdpass_recv(int sock, struct fdpass_set *out) NONNULL(2) WUNRES;

#endif
