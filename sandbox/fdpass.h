/*
 * fdpass.h - passing one listening socket over a SOCK_SEQPACKET socketpair
 * with SCM_RIGHTS (STYLE.md 14). The sandbox child sends the socket it
 * created inside its network namespace; the proxy outside receives it.
 */
#ifndef PASSAVANT_FDPASS_H
#define PASSAVANT_FDPASS_H

#include "base/attrib.h"

/*
 * Sends fd over sock (a SOCK_SEQPACKET socket) as one message of one byte
 * with one SCM_RIGHTS fd. The caller keeps fd and closes it when done.
 * Returns 0, or -1 with errno set. Allocates nothing (the sandbox child
 * calls it).
 */
int fdpass_send(int sock, int fd) WUNRES;

/*
 * Receives one message from sock and returns the one fd it carried, made
 * non-blocking and close-on-exec, after checking that it is a listening
 * (SO_ACCEPTCONN) AF_INET stream socket. Any extra fds in the message are
 * closed. Returns the fd (the caller owns it), or -1 with errno set:
 * ECONNRESET if the peer closed without sending, EBADMSG if the message
 * carried no fd, several fds or was truncated, ENOTSOCK/EINVAL if the fd
 * is not a listening AF_INET stream socket. Blocks until a message comes.
 */
int fdpass_recv(int sock) WUNRES;

#endif
