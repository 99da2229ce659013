/*
 * policy.h - the whole public face of policy/ (SPEC §2 lookup, §3).
 *
 * A policy_t is built once by a loader below and is immutable afterwards:
 * every function taking a `const policy_t *` is pure, thread-safe and may be
 * called from event-loop callbacks. Strings and arrays returned by accessors
 * belong to the policy and live as long as it does.
 *
 * Loading collects every error of a file (not just the first) and prints
 * each as "FILE:LINE:COL: error: what was expected" on the diagnostics
 * stream, then returns NULL. Warnings (§3.7, sandbox-runtime keys that
 * passavant does not implement) are kept in the policy and printed by
 * policy_print_warnings().
 */
#ifndef PASSAVANT_POLICY_H
#define PASSAVANT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "base/attrib.h"
#include "base/envnames.h"

typedef struct policy policy_t;

/* ------------------------------------------------------------------ */
/* Lookup and loading                                                  */
/* ------------------------------------------------------------------ */

enum policy_source {
	POLICY_SOURCE_FILE,     /* a file was found; its path is in the buffer */
	POLICY_SOURCE_EMBEDDED, /* nothing configured: use the embedded default */
	POLICY_SOURCE_ERROR     /* -p or $PASSAVANT_POLICY names a missing file, or
				   $PASSAVANT_POLICY is relative */
};

/* What the lookup of SPEC §2 needs to know, read by the caller (the CLI):
 * lookup.c reads nothing of the machine itself. */
struct policy_lookup_env {
	const char *passavant_policy; /* $PASSAVANT_POLICY, or NULL */
	const char *xdg_config_home;  /* $XDG_CONFIG_HOME, or NULL */
	const char *home;             /* $HOME, or NULL */
	const char *pw_home;          /* the password database's home, or NULL */
	/* 0 when path exists, else an errno value (stat(2)'s). */
	int (*probe)(const char *path);
};

/*
 * Applies the lookup order of SPEC §2: cli_path (may be NULL), then
 * $PASSAVANT_POLICY, then $XDG_CONFIG_HOME/passavant/policy.yaml (default
 * ~/.config/passavant/policy.yaml, "~" being $HOME, else pw_home), then the
 * embedded default. Never the working directory by implication. On
 * POLICY_SOURCE_FILE the path is written to buf; on POLICY_SOURCE_ERROR a
 * one-line explanation is. Pure apart from env->probe.
 */
enum policy_source policy_lookup(const char *cli_path, const struct policy_lookup_env *env,
				 char *buf, size_t buflen) NONNULL(2, 3);

/*
 * Loads and validates the policy at path (YAML, or JSON such as a
 * sandbox-runtime settings file). Pure: the result depends on the file's
 * bytes and path only. Paths in it stay as written, normalised ("~/x",
 * "x", "/x"): policy_bind() resolves them. Secret values are not read
 * (mask/ checks them when it reads them). Errors go to diag; *nerrors
 * receives their count. Returns a policy the caller frees with
 * policy_free(), or NULL when there was at least one error.
 */
policy_t *policy_load_file(const char *path, FILE *diag, unsigned *nerrors) NONNULL(1, 2, 3) WUNRES;

/*
 * Same as policy_load_file() on an in-memory document; name is used in
 * diagnostics as the file name. Used by tests and the fuzzer.
 */
policy_t *policy_load_buffer(const char *name, const char *data, size_t len, FILE *diag,
			     unsigned *nerrors) NONNULL(1, 4, 5) WUNRES;

/* The embedded default of SPEC §3.6. Caller frees. NULL only on ENOMEM. */
policy_t *policy_load_default(FILE *diag) NONNULL(1) WUNRES;

/* Frees a policy. NULL is a no-op. */
void policy_free(policy_t *p);

/* What policy_bind() needs to know of the machine, read by the caller
 * (the CLI): nothing of the machine is read by policy/ itself. */
struct policy_host {
	const char *home;        /* "~": $HOME, else the password database's; NULL: none */
	const char *pw_home;     /* the password database's home, or NULL */
	const char *cwd;         /* for relative paths; NULL: unknown */
	const char *policy_real; /* the policy file with symlinks resolved, or NULL */
	/* An environment variable (PATH, XDG_CONFIG_HOME, XDG_STATE_HOME, LD_LIBRARY_PATH, ENV,
	 * BASH_ENV, ZDOTDIR, PYTHONSTARTUP, the other code path variables of bind.c and
	 * base/envnames.h's lists), or NULL; env NULL: none is set. */
	const char *(*env)(const char *name);
	/* The i-th "NAME=value" entry of the environment, NULL past the last;
	 * NULL: not listed (only named variables are looked at). */
	const char *(*env_at)(size_t i);
	/* Why path cannot be read as a file now (a short phrase such as
	 * strerror() gives), or NULL when it can; NULL: not checked. */
	const char *(*file_problem)(const char *path);
	/* Whether the host user cannot even look at path (lstat fails with
	 * EACCES: a directory on the way denies search); NULL: never. A
	 * moved store or host secret there gets no write deny, which the
	 * launcher could not plan and the sandbox, with the same user and no
	 * privilege over the host's files, could not use. */
	bool (*unreachable)(const char *path);
	/* Other homes of whoever runs passavant on this machine, absolute
	 * normalised paths: the Windows homes that WSL (or a dual boot)
	 * mounts at /mnt/X/Users/NAME, whose stores (.ssh, .aws, AppData)
	 * the user's uid reads (round 33 of the attack), a Mac's home that a
	 * virtual machine shares at /Users/NAME (round 35; Library).
	 * n_other_homes 0: none. */
	const char *const *other_homes;
	size_t n_other_homes;
	/* The snapshot directories of the file systems mounted here
	 * (round 37 of the attack): ZFS's MOUNT/.zfs, snapper's
	 * MOUNT/.snapshots on btrfs, a filer's MOUNT/.snapshot on NFS and
	 * SMB, absolute normalised paths, existing or not: each holds an
	 * older copy of every file of the mount, the homes' stores and the
	 * host's secrets among them. Denied for reading and writing unless
	 * allowRead names one exactly or it holds the working directory.
	 * n_snapshot_dirs 0: none. */
	const char *const *snapshot_dirs;
	size_t n_snapshot_dirs;
	/* Calls add(add_arg, ALIAS) for each other absolute path where the
	 * file at path is reached too, through another mount of its file
	 * system (a bind mount of a directory above it, the same device
	 * mounted again; round 40 of the attack, f2): existing, the same
	 * file (device and inode). aliases NULL: none looked for. */
	void (*aliases)(void *arg, const char *path, void (*add)(void *add_arg, const char *alias), void *add_arg);
	void *aliases_arg;
};

/*
 * Binds a freshly loaded policy to the machine h describes (SPEC §3.3),
 * once, before it is shared: every "~" and relative path becomes absolute
 * (against h->home and h->cwd), each extraCaCertPaths entry must pass
 * h->file_problem, and the filesystem denies every policy gets are added
 * to denyRead/denyWrite: the HOME rows of the mandatory table under
 * h->home and h->pw_home (and each of h->other_homes, with a Windows
 * home's AppData and PowerShell profiles, a Mac home's Library), each store again where the variables of its
 * row and the XDG bases put it (h->env), the host's own secrets (SYSTEM
 * rows) and /root, the directories of $PATH and the other code
 * paths, the policy file, $XDG_CONFIG_HOME/passavant, $XDG_STATE_HOME/passavant
 * (read and write), the audit log, the
 * extra CA roots, the credential files in mode deny. Pure given h.
 * Errors are printed on diag like the loader's; returns their count (the
 * policy must not be used unless 0). A second call does nothing.
 */
unsigned policy_bind(policy_t *p, const struct policy_host *h, FILE *diag) NONNULL(1, 2, 3) WUNRES;

/*
 * Where a library loads plugins, drivers or modules into every program
 * using it (round 36: GTK, GStreamer, Qt, GIO, gdk-pixbuf, Mesa, VA-API,
 * VDPAU, EGL, Vulkan's driver and layer manifests): base/envnames.h
 * env_plugin_path_vars, the one list both policy_bind() (write denies)
 * and `run` (a relative entry refuses the start) read, as they read
 * env_code_path_vars and env_code_opt_vars; policy_bind() reads
 * env_startup_vars (round 38: R_PROFILE_USER, PHPRC, ...) as these.
 */

/*
 * The option variables of interpreters and runtimes (PERL5OPT, RUBYOPT,
 * NODE_OPTIONS, JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, _JAVA_OPTIONS) whose
 * options make every later program of the host load code from a path,
 * and the command variables naming a program later ones run (GIT_SSH,
 * GIT_ASKPASS, SSH_ASKPASS, SUDO_ASKPASS: the value; GIT_SSH_COMMAND,
 * GIT_EDITOR, GIT_SEQUENCE_EDITOR, EDITOR, VISUAL, GIT_PAGER, PAGER,
 * MANPAGER: the first word; only a path with a '/', not "~/"), and
 * the build tools' (CC, CFLAGS, ...): base/envnames.h env_code_opt_vars,
 * and the families of env_code_var_as() (CARGO_TARGET_<triple>_LINKER,
 * CC_<target>, ...; round 38), read as the variable named there.
 * policy_code_options() calls fn for each such
 * path in val, the value of var, as given (absolute or not): loaded
 * true for a file loaded into every run (an agent, a preloaded script:
 * policy_bind() makes it read-only), false for a directory or list
 * entry searched for modules (perl's -I, the class path: as the module
 * path variables, only a relative one is refused, by `run`). A non-zero
 * result of fn stops the walk and is returned; -1 with errno ENOMEM.
 */
typedef int (*policy_code_fn)(void *arg, const char *var, const char *path, bool loaded);
int policy_code_options(const char *var, const char *val, policy_code_fn fn, void *arg) NONNULL(1, 2, 3) WUNRES;
/*
 * policy_code_options() for a value read as the variable as reads it,
 * fn called with var (round 39: git's config entries in the
 * environment, read as GIT_SSH_COMMAND, ..., are named by the variable
 * the user set, GIT_CONFIG_VALUE_<n> or GIT_CONFIG_PARAMETERS; cargo's
 * --config KEY=VALUE in an alias by CARGO_ALIAS_<name>).
 */
int policy_code_options_as(const char *var, const char *as, const char *val, policy_code_fn fn, void *arg)
	NONNULL(1, 2, 3, 4) WUNRES;

/* The file the policy came from, or NULL for the embedded default. */
const char *policy_file(const policy_t *p) NONNULL(1);

/* Prints the effective policy (defaults filled in) as YAML. Never prints a
 * secret value. Returns 0, or -1 on a write error. */
int policy_print(const policy_t *p, FILE *out) NONNULL(1, 2);

/* Number of warnings, and each one as a line without "warning: " prefix
 * (e.g. "FILE:LINE:COL: allowPlaintextInject lets ..."). */
size_t policy_warning_count(const policy_t *p) NONNULL(1);
const char *policy_warning(const policy_t *p, size_t i) NONNULL(1);
/* Prints every warning as "warning: ..." lines. Returns their count. */
size_t policy_print_warnings(const policy_t *p, FILE *out) NONNULL(1, 2);

/* ------------------------------------------------------------------ */
/* Host patterns (SPEC §3.1)                                           */
/* ------------------------------------------------------------------ */

#define POLICY_HOST_MAX 253 /* longest DNS name, without trailing dot */

enum policy_hostpat_kind {
	HOSTPAT_ANY,      /* bare "*" */
	HOSTPAT_EXACT,    /* example.com */
	HOSTPAT_WILDCARD, /* *.example.com: any subdomain, not the apex */
	HOSTPAT_IPV4,     /* 192.0.2.1 */
	HOSTPAT_IPV6      /* [2001:db8::1] */
};

struct policy_hostpat {
	enum policy_hostpat_kind kind;
	/* EXACT: lower-case name without trailing dot; WILDCARD: the suffix
	 * after "*." ; IPV4/IPV6: canonical text of the address (no brackets). */
	char host[POLICY_HOST_MAX + 1];
	uint8_t addr[16]; /* IPV4: first 4 bytes; IPV6: 16 bytes */
	uint16_t port;    /* 0: every port */
};

/*
 * Parses one pattern. allow_any: whether bare "*" is accepted. Returns NULL
 * on success, else a static message saying what was expected.
 */
const char *policy_hostpat_parse(const char *text, bool allow_any, struct policy_hostpat *out)
	NONNULL(1, 3) WUNRES;

/*
 * Normalises a host as a client sent it (CONNECT authority, URL host, Host
 * header): lower-case, trailing dot removed, IPv6 brackets removed and the
 * address in canonical form. Refuses what is not a valid DNS name or IP
 * literal, including the ambiguous numeric forms inet_aton() accepts
 * ("127.1", "0x7f.0.0.1", "2130706433"). Returns NULL on success, else a
 * static message. out must hold POLICY_HOST_MAX + 1 bytes.
 */
const char *policy_host_normalize(const char *in, size_t len, char *out, size_t outlen)
	NONNULL(1, 3) WUNRES;

/* Whether a normalised host and port match a pattern. Pure. */
bool policy_hostpat_match(const struct policy_hostpat *pat, const char *host, uint16_t port)
	NONNULL(1, 2);

/* ------------------------------------------------------------------ */
/* Decisions (SPEC §3.5): pure functions, hosts already normalised      */
/* ------------------------------------------------------------------ */

enum policy_verdict { POLICY_DENY = 0, POLICY_ALLOW = 1 };

struct policy_method_rule; /* policy_int.h */

struct policy_decision {
	enum policy_verdict verdict;
	/* Which rule decided, e.g. "deniedDomains: *.example.com",
	 * "allowedDomains: api.github.com", "allowedDomains (no entry matches)".
	 * Points into the policy or to static storage. */
	const char *rule;
	/* Whether TLS on this connection is to be terminated (false when
	 * tlsTerminate is off or the host is in excludeDomains). */
	bool terminate_tls;
	/* Whether allowedMethods restricts this host (then a CONNECT that does
	 * not carry TLS, or an excluded host, cannot be enforced: refuse). */
	bool method_restricted;
	/* The allowedMethods rule that applies to the host (the most specific
	 * pattern matching it), or NULL when none does; filled only on ALLOW.
	 * Points into the policy: for policy_decision_method_allowed(). */
	const struct policy_method_rule *methods;
};

/* Connection decision for host:port (steps 1 and 2 of §3.5). The host is
 * normalised again (policy_host_normalize()); one that does not normalise
 * is denied, rule "host is not a valid DNS name or IP literal". */
void policy_decide(const policy_t *p, const char *host, uint16_t port, struct policy_decision *out)
	NONNULL(1, 2, 4);

/*
 * allowedMethods decision (step 3 of §3.5): the most specific matching
 * pattern decides (exact > longest wildcard > "*"); no match allows every
 * method. *rule (may be NULL) receives the deciding entry, e.g.
 * "allowedMethods: *" or NULL when no pattern matched. A host that does
 * not normalise is refused.
 */
bool policy_method_allowed(const policy_t *p, const char *host, uint16_t port, const char *method,
			   const char **rule) NONNULL(1, 2, 4);

/* policy_method_allowed() for the host and port an ALLOW decision d was
 * made for, under the same policy, without looking the host up again: a
 * connection that makes many requests to one host decides it once. A
 * DENY decision allows no method (*rule gets its rule). */
bool policy_decision_method_allowed(const struct policy_decision *d, const char *method, const char **rule)
	NONNULL(1, 2);

/* What the in-sandbox resolver may say about a name (SPEC §3.5, §7). */
enum policy_name_verdict {
	POLICY_NAME_ALLOWED = 0,  /* an allowedDomains entry matches it on a port no deny covers */
	POLICY_NAME_DENIED,       /* deniedDomains covers it on every port an allow matches */
	POLICY_NAME_NOT_ALLOWED,  /* no allowedDomains entry matches it on any port */
	POLICY_NAME_INVALID       /* not a DNS name (does not normalise, or an IP literal) */
};

/*
 * The DNS decision for a name, whatever the port (a resolver is asked for
 * a name, never a port): ALLOWED when some allowedDomains entry matches
 * the name on its port (every port for an entry without one) and no
 * deniedDomains entry matches the name on that port; so a port-less deny
 * (or a bare "*") denies the name, a deny with a port does not, and
 * "api.test:8443" alone allows the name api.test. IP literals are not
 * names: INVALID. *rule (may be NULL) gets the deciding entry: the
 * allowing one, the deny that covered the last allowing entry, "network.
 * allowedDomains (no entry matches)" or the invalid-host rule. Pure;
 * callable from callbacks.
 */
enum policy_name_verdict policy_name_decide(const policy_t *p, const char *host, const char **rule)
	NONNULL(1, 2);

/* Classes of resolved addresses that are always denied (SPEC §3.1). */
enum policy_addr_class {
	ADDR_PUBLIC = 0, /* none of the below */
	ADDR_LOOPBACK,
	ADDR_UNSPECIFIED,
	ADDR_LINK_LOCAL,
	ADDR_MULTICAST,
	ADDR_BROADCAST,
	ADDR_METADATA
};

/* The always-denied class of an address; IPv4 embedded in IPv6 (mapped,
 * SIIT, compatible, NAT64, 6to4; Teredo server and client) is classified
 * by its IPv4 part (Teredo: the first of the two not public). Pure. */
enum policy_addr_class policy_addr_classify(const struct sockaddr *sa) NONNULL(1);

/* Human name of a class ("loopback", ...). */
const char *policy_addr_class_name(enum policy_addr_class c);

/*
 * Resolved-address guard (step 4 of §3.5) for an address a name resolved
 * to (port in the sockaddr). Refused: an always-denied class, a
 * deniedResolvedAddresses CIDR, an IP literal in deniedDomains; unless the
 * address (with its port) is an IP literal listed in allowedDomains, the one
 * explicit exception. *rule (may be NULL) receives the deciding rule.
 */
bool policy_addr_allowed(const policy_t *p, const struct sockaddr *sa, const char **rule)
	NONNULL(1, 2);

/* Addresses this machine delivers to itself: family AF_INET (addr holds 4
 * bytes, prefix 0-32) or AF_INET6 (16, 0-128). An interface address is a
 * /32 or /128; a route of type local or anycast in the kernel's local
 * table can be a wider prefix (AnyIP: `ip route add local 10.0.0.0/8 dev
 * lo`; the IPv6 subnet-router anycast address). */
struct policy_ipaddr {
	int family;
	uint8_t addr[16];
	unsigned prefix;
};

/* This machine's own addresses, as the caller last read them (the proxy:
 * getifaddrs() and the local routing table, kept current from netlink).
 * The policy module keeps no copy: the set is passed in on every call. */
struct policy_addrset {
	size_t n;
	const struct policy_ipaddr *v;
};

/* The refusal rule for one of this machine's own addresses. */
#define POLICY_RULE_LOCAL_ADDR "resolved address is one of this machine's own addresses"

/*
 * Whether sa is covered by an entry of local: an IPv4 entry covers the
 * IPv4 address in every form (IPv4-mapped, NAT64, 6to4, either part of
 * Teredo... IPv6 addresses embedding it, as in policy_addr_classify()),
 * an IPv6 entry the IPv6
 * address. local may be NULL (no address). Pure.
 */
bool policy_addr_is_local(const struct sockaddr *sa, const struct policy_addrset *local)
	NONNULL(1);

/*
 * policy_addr_allowed() that also treats every address of this machine's
 * interfaces (local, may be NULL) like loopback (issue 13 class 4): a
 * service bound to all interfaces is reached through any of them, so an
 * allowed name resolving to one, or allowedDomains ["*"], must not reach
 * it. Refused with *rule POLICY_RULE_LOCAL_ADDR, unless the address is an
 * IP literal listed in allowedDomains (the same exception as for
 * loopback); a deniedDomains literal still wins. Pure; callable from
 * callbacks.
 */
bool policy_addr_allowed_local(const policy_t *p, const struct sockaddr *sa,
			       const struct policy_addrset *local, const char **rule) NONNULL(1, 2);

/* ------------------------------------------------------------------ */
/* Effective settings                                                  */
/* ------------------------------------------------------------------ */

struct policy_limits {
	unsigned max_tunnels;
	unsigned handshake_timeout_ms;
	unsigned idle_timeout_ms;
	unsigned upstream_keepalive_ms; /* 0: an idle upstream is kept until idle_timeout_ms */
	size_t max_header_bytes;
};
const struct policy_limits *policy_limits(const policy_t *p) NONNULL(1);

bool policy_tls_terminate(const policy_t *p) NONNULL(1);
/* allowedDomains entries in file order (for the session CA's name
 * constraints): their count, and entry i (NULL when i is out of range). */
size_t policy_allowed_count(const policy_t *p) NONNULL(1);
const struct policy_hostpat *policy_allowed(const policy_t *p, size_t i) NONNULL(1);
size_t policy_extra_ca_count(const policy_t *p) NONNULL(1);
const char *policy_extra_ca(const policy_t *p, size_t i) NONNULL(1); /* absolute once bound */
bool policy_allow_unix_sockets(const policy_t *p) NONNULL(1);

enum policy_audit_bodies { AUDIT_BODIES_NONE, AUDIT_BODIES_HEADERS };
const char *policy_audit_path(const policy_t *p) NONNULL(1); /* NULL: none */
enum policy_audit_bodies policy_audit_bodies(const policy_t *p) NONNULL(1);

/* Credentials (SPEC §3.2). */
enum policy_cred_kind { CRED_ENV, CRED_FILE };
enum policy_cred_mode { CRED_DENY, CRED_MASK };
enum {
	INJECT_HEADER = 1u << 0,
	INJECT_QUERY = 1u << 1,
	INJECT_BODY = 1u << 2
};
struct policy_cred {
	enum policy_cred_kind kind;
	const char *name;    /* env var name, or the file path as written */
	const char *path;    /* CRED_FILE: the path, absolute once bound; else NULL */
	enum policy_cred_mode mode;
	const char *extract; /* CRED_FILE: POSIX ERE or NULL */
	unsigned inject_in;  /* INJECT_* bits; default INJECT_HEADER */
	/* injectHosts; when the key was absent these are allowedDomains. */
	size_t n_inject_hosts;
	const struct policy_hostpat *inject_hosts;
	bool inject_hosts_defaulted;
};
size_t policy_cred_count(const policy_t *p) NONNULL(1);
const struct policy_cred *policy_cred(const policy_t *p, size_t i) NONNULL(1);
/* Where credential i was written in the policy file (1-based line and
 * column; 0 and 0 for the embedded default or an index out of range), for
 * messages about it that other modules make. */
void policy_cred_where(const policy_t *p, size_t i, unsigned *line, unsigned *col) NONNULL(1, 3, 4);
bool policy_allow_plaintext_inject(const policy_t *p) NONNULL(1);

/* credentials.sentinels (SPEC §4.1): derived from the host-held key, so
 * they survive a session (the default), or drawn per session. */
enum policy_sentinels { POLICY_SENTINELS_STABLE = 0, POLICY_SENTINELS_PER_SESSION };
enum policy_sentinels policy_sentinels(const policy_t *p) NONNULL(1);

/* Filesystem lists (SPEC §3.3): absolute once bound (policy_bind()), as
 * written ("~/x", "x") before. */
enum policy_fs_list { FS_DENY_READ, FS_ALLOW_READ, FS_ALLOW_WRITE, FS_DENY_WRITE, FS_LIST_COUNT };
size_t policy_fs_count(const policy_t *p, enum policy_fs_list which) NONNULL(1);
/* How many of a list's entries the policy names itself: the first ones
 * (policy_bind() appends the mandatory ones after them). */
size_t policy_fs_named_count(const policy_t *p, enum policy_fs_list which) NONNULL(1);
const char *policy_fs_path(const policy_t *p, enum policy_fs_list which, size_t i) NONNULL(1);

/* ------------------------------------------------------------------ */
/* Token shapes (SPEC §4.1): tokens.c, used by mask/ for sentinels      */
/* ------------------------------------------------------------------ */

/* SPEC §4.1: a masked value whose sentinel would carry fewer random bits
 * than this is refused. */
#define POLICY_MIN_SENTINEL_BITS 64

/*
 * Length of the well-known type prefix at the start of value ("ghp_",
 * "github_pat_", "sk-", "xoxb-", "AKIA", ...), longest match first; 0 when
 * there is none (or when the value is nothing but the prefix). A sentinel
 * keeps this prefix verbatim. Pure.
 */
size_t policy_token_prefix_len(const char *value, size_t len) NONNULL(1);

/*
 * Random bits a sentinel for value would carry: after the known prefix,
 * each lower-case letter and each upper-case letter is replaced by one of
 * 26, each digit by one of 10, everything else is kept. Returns the floor
 * of the sum of log2 of those choices. Pure; never stores or prints value.
 */
unsigned policy_sentinel_bits(const char *value, size_t len) NONNULL(1);

/* ------------------------------------------------------------------ */
/* Mandatory rules (SPEC §3.3, §3.6): one table, mandatory.c           */
/* ------------------------------------------------------------------ */

/* What a mandatory row denies. */
enum { POLICY_MAND_READ = 1u << 0, POLICY_MAND_WRITE = 1u << 1 };
/* Where its path is taken from: under HOME (both $HOME and the password
 * database's home; policy_bind() adds these to denyRead/denyWrite), under
 * each writable workspace (`run` adds these: the working directory, each
 * allowWrite directory and the repository each is in), or the host's
 * own (SYSTEM: the path is absolute; policy_bind() adds it). */
enum { POLICY_MAND_HOME = 1u << 0, POLICY_MAND_WORKSPACE = 1u << 1, POLICY_MAND_SYSTEM = 1u << 2 };
/* With WORKSPACE: in a workspace only where the row's first directory
 * already exists (".config", ".hg", "mise"): where it does not, the
 * mount plan's placeholder would be that directory, read-only, and a
 * project's own files there (.config/nextest.toml) could not be
 * written; a row created in the session is moved aside after it
 * instead (`run`'s post-run check). */
/* Round 44: with HOME the same: a row under the home only where its first
 * directory exists there (go/bin: ~/go, which go makes in a writable home
 * and `run`'s post-run check moves aside when new). */
enum { POLICY_MAND_WS_IF_DIR = 1u << 3 };
/* With WORKSPACE: covered only where it exists, never by a placeholder,
 * because an empty file there is itself read (an empty readline.py hides
 * Python's own module from every python3 started in that directory); one
 * created in the session is moved aside after it. */
enum { POLICY_MAND_WS_EXISTING = 1u << 4 };
/* With WORKSPACE: the row's directory may be a file naming that directory
 * elsewhere (Jujutsu's `.jj/repo` in a second workspace): such a file made
 * or changed in the session is moved aside too (`run`'s post-run check),
 * where another file on a row's way is nothing any tool reads. */
enum { POLICY_MAND_WS_POINTER = 1u << 5 };
/* With HOME, a write row: a tree of code a package runner installs and
 * runs as found at its next call (npx's _npx, pnpm dlx's dlx, uv's
 * cache). Where a writable tree holds it (the tool's cache made
 * writable), the command gets an empty directory of its own there for
 * the session (a tmpfs, sandbox.h scratch): the runner works inside, and
 * the host's tree stays read-only and as it was (round 43). */
enum { POLICY_MAND_SESSION = 1u << 6 };
/* Round 44: with HOME, a write row without a '/' that is a tool's
 * directory (~/.nvm, ~/.volta), made at the tool's first use: where a
 * writable home lacks it, `run` names its placeholder at the start (a row
 * with a '/' names its first directory so already). */
enum { POLICY_MAND_HOME_DIR = 1u << 7 };

struct policy_mandatory {
	const char *path;  /* relative, e.g. ".ssh", ".config/git", ".vscode" */
	unsigned deny;     /* POLICY_MAND_READ | POLICY_MAND_WRITE bits */
	unsigned where;    /* POLICY_MAND_HOME | POLICY_MAND_WORKSPACE bits */
	const char *why;   /* one phrase for `check -v` */
};

/* The table: its size, and row i (NULL past the end). Static storage. */
size_t policy_mandatory_count(void);
const struct policy_mandatory *policy_mandatory_get(size_t i);

/*
 * The variables through which the tool of home row i (a credential store,
 * or a write row such as npx's install tree) finds it elsewhere, as a
 * static string of space-separated items: "$NAME" (the variable names the
 * place), "$NAME/sub" (the place is sub under the directory it names) or
 * "$NAME:" (a colon-separated list of places); NULL when none.
 * policy_bind() denies the row at each place the host's environment
 * names.
 */
const char *policy_mandatory_env(size_t i);

/*
 * Whether path (absolute, as bound) is the place of a POLICY_MAND_SESSION
 * row: its last component is the last one of such a row's path (_npx,
 * dlx, uv), the row's own place or where a variable of its moves it.
 * Only for the mandatory entries of denyWrite (a session directory never
 * writes the host, so a match too many costs nothing but the host's
 * tree hidden there). Pure.
 */
bool policy_mandatory_session(const char *path) NONNULL(1);

/*
 * For a HOME row under an XDG base directory's default (~/.config,
 * ~/.local/share, ~/.local/state, ~/.cache): the variable that moves that
 * base ("XDG_CONFIG_HOME", ...), with *rest set to the row's path below
 * it; NULL otherwise. Pure.
 */
const char *policy_mandatory_xdg(const struct policy_mandatory *m, const char **rest) NONNULL(1, 2);

/*
 * The environment rule of SPEC §3.6 for one "NAME=value" entry: NULL when
 * it may pass, else a static phrase saying why it is dropped ("its name
 * looks like a credential", "its value starts with a known token prefix",
 * "its value holds a token with a known prefix", "its value is a JSON Web
 * Token", ...), never quoting the value. Names are matched without regard to case;
 * PASSAVANT_* is always kept. Whether the policy names the variable is the
 * caller's question (policy_env_named()). Pure.
 */
const char *policy_env_secret_reason(const char *entry) NONNULL(1);

/* Whether credentials.envVars names the variable name[0..len). Pure. */
bool policy_env_named(const policy_t *p, const char *name, size_t len) NONNULL(1, 2);

/* Prints the environment rule in words, each line starting with lead. */
void policy_print_env_rule(FILE *out, const char *lead) NONNULL(1, 2);

/* `check -v`: the mandatory table, the PATH directories denied for
 * writing in p (policy_bind() finds them), and the environment rule, as YAML comment lines (the
 * output stays a loadable policy). */
void policy_print_mandatory(const policy_t *p, FILE *out) NONNULL(1, 2);

#endif
