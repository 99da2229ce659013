/*
 * hostsns.h - running a command (usually `passavant run`) where our own
 * test names resolve: in a mount namespace of its own where a hosts file of
 * ours is bind-mounted over /etc/hosts. passavant, and the proxy in it,
 * then resolve names such as h2.test to 127.0.0.1, while the clients inside
 * the sandbox use the names (inside, 127.0.0.1 is the sandbox's own
 * loopback). The same technique as the client matrix (test_clients.c).
 */
#ifndef PASSAVANT_TEST_HOSTSNS_H
#define PASSAVANT_TEST_HOSTSNS_H

/*
 * Runs argv (argv[0] a path) with envp in cwd, stdin from /dev/null,
 * stdout and stderr into the files out_path and err_path (created or
 * truncated, 0600), in a new mount namespace where hosts_path is
 * bind-mounted over /etc/hosts. As root a mount namespace is enough;
 * otherwise a user namespace maps our own uid and gid (its capabilities end
 * at exec). Killed (SIGKILL) past timeout_ms. Returns the exit status,
 * 128+N for signal N, or -1 if it could not be started (reason on stderr).
 */
int test_spawn_hosts(char *const argv[], char *const envp[], const char *cwd, const char *hosts_path,
		     const char *out_path, const char *err_path, int timeout_ms);

#endif
