/*
 * test_bind.c - policy_bind() (policy/bind.c) on a made-up machine: the
 * loader is pure (the same bytes give the same policy anywhere, paths as
 * written), and binding with a given home, working directory, environment
 * and file check gives the same absolute policy whatever this process's
 * own environment is.
 *
 * Suite: policy_bind.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../policy/policy.h"
#include "../../support/testlib.h"

/* The made-up machine. */
static const char *fake_env(const char *name)
{
	if (strcmp(name, "PATH") == 0)
		return "/usr/bin:bin::/opt/w/bin";
	if (strcmp(name, "XDG_CONFIG_HOME") == 0)
		return "/h/u/xdg";
	if (strcmp(name, "XDG_STATE_HOME") == 0)
		return "/h/u/state";
	if (strcmp(name, "BASH_ENV") == 0)
		return "/h/u/env.sh";
	if (strcmp(name, "LD_PRELOAD") == 0)
		return "libshim0.so /w/proj/lib/libshim.so::";
	if (strcmp(name, "LD_AUDIT") == 0)
		return "/w/proj/aud.so";
	if (strcmp(name, "NODE_OPTIONS") == 0)
		return "--max-old-space-size=64 --require /w/proj/boot -r=/w/proj/r.js --import x";
	if (strcmp(name, "JAVA_TOOL_OPTIONS") == 0)
		return "-Xmx1g \"-javaagent:/w/proj/agent.jar=opt\" -cp /w/proj/classes -XX:VMOptionsFile=/w/proj/jvm.opts";
	if (strcmp(name, "RUBYOPT") == 0)
		return "-w -r /w/proj/boot -rjson";
	if (strcmp(name, "PERL5OPT") == 0)
		return "-I/w/proj/lib -Mstrict";
	if (strcmp(name, "PYTHONUSERBASE") == 0)
		return "/w/proj/.pyub";
	if (strcmp(name, "GIT_EXEC_PATH") == 0)
		return "/w/proj/gx";
	if (strcmp(name, "OPENSSL_CONF") == 0)
		return "/w/proj/ssl.cnf";
	if (strcmp(name, "GIT_SSH_COMMAND") == 0)
		return "/w/proj/ssh-wrap -i key";
	if (strcmp(name, "GCONV_PATH") == 0)
		return "/w/proj/gconv:/usr/lib/gconv";
	return NULL;
}

static const char *fake_file_problem(const char *path)
{
	return strstr(path, "missing") != NULL ? "No such file or directory" : NULL;
}

static const struct policy_host fake = {
	.home = "/h/u",
	.pw_home = "/pw/u",
	.cwd = "/w/proj",
	.policy_real = "/real/p.yaml",
	.env = fake_env,
	.file_problem = fake_file_problem,
};

/* Loads doc as "p.yaml" without errors. */
static policy_t *load_pure(const char *doc)
{
	unsigned n = 0;
	policy_t *p = policy_load_buffer("p.yaml", doc, strlen(doc), stderr, &n);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(n, 0);
	return p;
}

static bool has(const policy_t *p, enum policy_fs_list w, const char *path)
{
	for (size_t i = 0; i < policy_fs_count(p, w); i++)
		if (strcmp(policy_fs_path(p, w, i), path) == 0)
			return true;
	return false;
}

/* Before binding: paths as written (normalised), no mandatory entry. */
static void test_pure_forms(void)
{
	policy_t *p = load_pure("filesystem:\n  denyRead: [~/.ssh/, ./a/../b, /srv//x/]\n"
				"  allowWrite: [., \"~\"]\n"
				"credentials: {files: [{path: ~/tok, mode: deny}]}\n"
				"audit: {path: logs/../a.jsonl}\n");

	CU_ASSERT_EQUAL(policy_fs_count(p, FS_DENY_READ), 3);
	CU_ASSERT_EQUAL(policy_fs_named_count(p, FS_DENY_READ), 3);
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "~/.ssh"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "b"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/srv/x"));
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "."));
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "~"));
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_DENY_WRITE), 0);
	CU_ASSERT_STRING_EQUAL(policy_cred(p, 0)->path, "~/tok");
	CU_ASSERT_STRING_EQUAL(policy_audit_path(p), "a.jsonl");
	policy_free(p);
}

/* Round 46: a home that is / ($HOME=/ in a container run with --user,
 * the database's / of a daemon's account) binds no policy: its rows
 * would be the system's own directories (~/bin is /bin), and the start
 * was refused over a hard link of the loader with nothing said of why.
 * Each is an error naming the home; "//" and "/." are / too. */
static void test_bound_root_home(void)
{
	static const char *const homes[] = {"/", "//", "/.", "/h/..", NULL};
	struct policy_host h = fake;
	char *text = NULL;
	size_t len = 0;

	for (size_t i = 0; homes[i] != NULL; i++) {
		policy_t *p = load_pure("filesystem:\n  allowWrite: [.]\n");
		FILE *f = open_memstream(&text, &len);

		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		h.home = homes[i];
		h.pw_home = "/pw/u";
		CU_ASSERT_NOT_EQUAL(policy_bind(p, &h, f), 0);
		CU_ASSERT_EQUAL(fclose(f), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(text, "the home directory is / (HOME=/"));
		free(text);
		text = NULL;
		policy_free(p);
	}
	/* HOME is the user's own, the database says / */
	{
		policy_t *p = load_pure("filesystem:\n  allowWrite: [.]\n");
		FILE *f = open_memstream(&text, &len);

		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		h.home = "/h/u";
		h.pw_home = "/";
		CU_ASSERT_NOT_EQUAL(policy_bind(p, &h, f), 0);
		CU_ASSERT_EQUAL(fclose(f), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(text, "the password database gives / as this user's home"));
		free(text);
		policy_free(p);
	}
}

/* After binding: absolute paths, the mandatory denies of this machine. */
static void test_bound(void)
{
	policy_t *p = load_pure("network:\n  tlsTerminate: {extraCaCertPaths: [~/ca.pem]}\n"
				"filesystem:\n  denyRead: [~/.ssh/, ./a/../b]\n"
				"  allowRead: [~/.aws]\n  allowWrite: [., \"~\", /opt/w/bin]\n"
				"credentials: {files: [{path: ~/tok, mode: deny}]}\n"
				"audit: {path: logs/../a.jsonl}\n");

	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &fake, stderr), 0);
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/.ssh"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/w/proj/b"));
	/* The policy's own entries first, then the mandatory ones. */
	CU_ASSERT_EQUAL(policy_fs_named_count(p, FS_DENY_READ), 2);
	CU_ASSERT_STRING_EQUAL(policy_fs_path(p, FS_DENY_READ, 0), "/h/u/.ssh");
	CU_ASSERT_STRING_EQUAL(policy_fs_path(p, FS_DENY_READ, 1), "/w/proj/b");
	CU_ASSERT_TRUE(policy_fs_count(p, FS_DENY_READ) > 2);
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "/w/proj"));
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "/h/u"));
	CU_ASSERT_STRING_EQUAL(policy_cred(p, 0)->path, "/h/u/tok");
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/tok")); /* a mode: deny file */
	CU_ASSERT_STRING_EQUAL(policy_audit_path(p), "/w/proj/a.jsonl");
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/a.jsonl"));
	CU_ASSERT_STRING_EQUAL(policy_extra_ca(p, 0), "/h/u/ca.pem");
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/ca.pem"));
	/* The HOME rows under both homes; an allowRead store stays readable. */
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/pw/u/.ssh"));
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/h/u/.aws"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/pw/u/.aws"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/.bashrc"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/pw/u/.bashrc"));
	/* PATH (relative and empty entries from the working directory), an
	 * allowWrite directory excepted; the other code paths. */
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/usr/bin"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/bin"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/w/proj")); /* "" is ".", allowWrite */
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/opt/w/bin"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/env.sh"));
	/* The preload lists (round 34 of the attack, P2): ' ' or ':'
	 * separated; a bare name is searched in the library path, not "." */
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/lib/libshim.so"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/aud.so"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/w/proj/libshim0.so"));
	/* The files an option variable loads into every run (round 35):
	 * node's preloaded modules (and the names node tries), the JVM's
	 * agent and options file, ruby's -r path (and x.rb). The searched
	 * directories (-cp, perl's -I) and bare names are not. */
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/boot"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/boot.js"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/boot.rb"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/r.js"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/w/proj/r.js.js"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/agent.jar"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/w/proj/agent.jar=opt"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/jvm.opts"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/w/proj/classes"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/w/proj/lib"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/w/proj/json"));
	/* Where a runtime loads code from whatever program starts it
	 * (round 35): python's user base, git's exec path, OpenSSL's
	 * configuration, glibc's iconv modules. */
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/.pyub"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/gx"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/ssl.cnf"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/gconv"));
	/* The program a command variable names by a path (round 35). */
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/ssh-wrap"));
	/* The policy file as named and as resolved; both lookup places. */
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/w/proj/p.yaml"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/real/p.yaml"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/xdg/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/.config/passavant"));
	/* The sentinel key and ledger (SPEC §4.1): unreadable and unwritable
	 * in both places, under both homes. */
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/state/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/state/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/.local/state/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/h/u/.local/state/passavant"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/pw/u/.local/state/passavant"));
	/* Bound once: a second call changes nothing. */
	size_t n = policy_fs_count(p, FS_DENY_WRITE);
	CU_ASSERT_EQUAL(policy_bind(p, &fake, stderr), 0);
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_DENY_WRITE), n);
	policy_free(p);
}

/* Two spellings of one path are one entry once bound. */
static void test_bound_dedup(void)
{
	policy_t *p = load_pure("filesystem: {allowWrite: [~/w, /h/u/w, ../proj/w/.]}\n");

	CU_ASSERT_EQUAL(policy_fs_count(p, FS_ALLOW_WRITE), 3);
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &fake, stderr), 0);
	CU_ASSERT_EQUAL(policy_fs_count(p, FS_ALLOW_WRITE), 2);
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "/h/u/w"));
	CU_ASSERT_TRUE(has(p, FS_ALLOW_WRITE, "/w/proj/w"));
	policy_free(p);
}

/* A machine whose environment moves the credential stores. */
static const char *moved_env(const char *name)
{
	static const struct {
		const char *name, *value;
	} vars[] = {
		{"GNUPGHOME", "/g/gnupg"},
		{"DOCKER_CONFIG", "/d"},
		{"AWS_SHARED_CREDENTIALS_FILE", "/x/awscreds"},
		{"AWS_CONFIG_FILE", "/x/../x/awsconfig"},
		{"KUBECONFIG", "/k/a::/k/b:rel/c"},
		{"XDG_CONFIG_HOME", "/x"},
		{"XDG_DATA_HOME", "/xd"},
		{"GH_CONFIG_DIR", "/ghd"},
		{"CARGO_HOME", "/c/"},
		{"npm_config_userconfig", "/n/npmrc"},
		{"HISTFILE", "relative/hist"},
		{"PSQL_HISTORY", "/dev/null"},
		{"LESSHISTFILE", "/proc/self/fd/1"},
		{"CLOUDSDK_CONFIG", "/gc"},
		{"PATH", "/usr/bin"},
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (strcmp(name, vars[i].name) == 0)
			return vars[i].value;
	return NULL;
}

/* SPEC §3.6: a store is denied where the environment moves it (absolute
 * values only, each entry of KUBECONFIG, the XDG bases), for reading and
 * writing; an allowRead entry naming that exact place keeps it readable. */
static void test_bound_relocated(void)
{
	static const char *const denied[] = {
		"/g/gnupg", "/d/config.json", "/x/awscreds", "/x/awsconfig", "/k/a", "/k/b",
		"/x/gh", "/ghd", "/c/credentials.toml", "/c/credentials", "/n/npmrc",
		"/x/containers/auth.json", "/x/git/credentials", "/xd/keyrings", "/gc",
		"/xd/fish/fish_history",
	};
	struct policy_host h = fake;
	policy_t *p = load_pure("filesystem: {allowRead: [/x/awscreds]}\n");

	h.env = moved_env;
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &h, stderr), 0);
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		bool allowed = strcmp(denied[i], "/x/awscreds") == 0;
		ROW(has(p, FS_DENY_READ, denied[i]) != allowed, "%s: read deny %s", denied[i],
		    allowed ? "despite allowRead" : "missing");
		ROW(has(p, FS_DENY_WRITE, denied[i]), "%s: no write deny", denied[i]);
	}
	/* Relative values and empty list entries name nothing. */
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/w/proj/rel/c"));
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/w/proj/relative/hist"));
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/w/proj"));
	/* HISTFILE=/dev/null and the like turn a history off: /dev/null
	 * stays usable. */
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/dev/null"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/dev/null"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/proc/self/fd/1"));
	/* Start-up files the host runs move with XDG_CONFIG_HOME too:
	 * write-denied there, still readable. */
	ROW(has(p, FS_DENY_WRITE, "/x/fish") && has(p, FS_DENY_WRITE, "/x/autostart"),
	    "$XDG_CONFIG_HOME/fish or /autostart is writable");
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/x/fish"));
	/* The defaults stay. */
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/.gnupg"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/.config/gh"));
	policy_free(p);
}

/* Round 33 of the attack: the Windows homes WSL mounts get the HOME
 * rows, AppData whole and PowerShell's profiles (write); round 35: a
 * Mac's home (/Users/NAME) Library whole. */
static void test_bound_other_homes(void)
{
	static const char *const homes[] = {"/mnt/c/Users/me", "/Users/Other One", "relative/x"};
	struct policy_host h = fake;
	policy_t *p = load_pure("filesystem: {allowRead: [\"/mnt/c/Users/me/.aws\"]}\n");

	h.other_homes = homes;
	h.n_other_homes = 3;
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &h, stderr), 0);
	for (size_t i = 0; i < 2; i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/.ssh", homes[i]);
		ROW(has(p, FS_DENY_READ, path) && has(p, FS_DENY_WRITE, path), "%s not denied", path);
		snprintf(path, sizeof(path), "%s/AppData", homes[i]);
		ROW(has(p, FS_DENY_READ, path) && has(p, FS_DENY_WRITE, path), "%s not denied", path);
		/* round 35, e4: a Mac's home shared into a virtual machine */
		snprintf(path, sizeof(path), "%s/Library", homes[i]);
		ROW(has(p, FS_DENY_READ, path) && has(p, FS_DENY_WRITE, path), "%s not denied", path);
		snprintf(path, sizeof(path), "%s/Documents/WindowsPowerShell", homes[i]);
		ROW(!has(p, FS_DENY_READ, path) && has(p, FS_DENY_WRITE, path), "%s: write only", path);
		snprintf(path, sizeof(path), "%s/Documents/PowerShell", homes[i]);
		ROW(has(p, FS_DENY_WRITE, path), "%s not write-denied", path);
	}
	/* allowRead of an exact row is honoured as in $HOME; a relative
	 * home names nothing; $HOME's rows stay. */
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/mnt/c/Users/me/.aws"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/mnt/c/Users/me/.aws"));
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "relative/x/.ssh"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/h/u/.ssh"));
	policy_free(p);
}

/* A store moved to "/" or to a directory that holds the working
 * directory cannot be denied without hiding the work: an error naming
 * the variable, the place and the way out. */
static const char *cwd_store_env(const char *name)
{
	if (strcmp(name, "PASSWORD_STORE_DIR") == 0)
		return "/w";
	if (strcmp(name, "GNUPGHOME") == 0)
		return "/";
	return NULL;
}

static void test_bound_relocated_errors(void)
{
	struct policy_host h = fake;
	char *diag = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&diag, &len);
	policy_t *p = load_pure("network: {}\n");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	h.env = cwd_store_env;
	CU_ASSERT_EQUAL(policy_bind(p, &h, f), 2);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "$PASSWORD_STORE_DIR puts a credential store (pass "
					    "password store) at \"/w\", which holds the working directory"));
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "set PASSWORD_STORE_DIR to the store's own place or unset it"));
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "$GNUPGHOME puts a credential store"));
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/"));
	free(diag);
	policy_free(p);
}

/* SPEC §3.3: the host's own secrets are denied whoever runs passavant,
 * and /root whole unless HOME, the working directory, a PATH directory or
 * an allowed path is in it. */
static const char *root_path_env(const char *name)
{
	return strcmp(name, "PATH") == 0 ? "/usr/bin:/root/.cargo/bin" : NULL;
}

/* The made-up user cannot look into /var/lib/kubelet or /secret. */
static bool fake_unreachable(const char *path)
{
	return strncmp(path, "/var/lib/kubelet/", 17) == 0 || strncmp(path, "/secret/", 8) == 0;
}

static const char *secret_env(const char *name)
{
	return strcmp(name, "TF_CLI_CONFIG_FILE") == 0 ? "/secret/.terraformrc" : NULL;
}

static void test_bound_system(void)
{
	struct policy_host h = fake;
	policy_t *p = load_pure("network: {}\n");

	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &fake, stderr), 0);
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/etc/shadow"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/etc/gshadow"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/etc/ssh/ssh_host_ed25519_key"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/etc/ssl/private"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/root"));
	policy_free(p);
	/* HOME is /root: its own rows decide. */
	p = load_pure("network: {}\n");
	h.home = "/root";
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &h, stderr), 0);
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/root"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/root/.ssh"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/etc/shadow"));
	policy_free(p);
	/* The working directory, a PATH directory, an allowRead path in it. */
	p = load_pure("network: {}\n");
	h = fake;
	h.cwd = "/root/proj";
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &h, stderr), 0);
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/root"));
	policy_free(p);
	p = load_pure("network: {}\n");
	h = fake;
	h.env = root_path_env;
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &h, stderr), 0);
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/root"));
	policy_free(p);
	p = load_pure("filesystem: {allowRead: [/root/data]}\n");
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &fake, stderr), 0);
	CU_ASSERT_FALSE(has(p, FS_DENY_READ, "/root"));
	policy_free(p);
	/* A place the user cannot look at gets its read deny only (the
	 * launcher could not plan a write deny there, and needs none). */
	p = load_pure("network: {}\n");
	h = fake;
	h.env = secret_env;
	h.unreachable = fake_unreachable;
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &h, stderr), 0);
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/var/lib/kubelet/pki"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/var/lib/kubelet/pki"));
	CU_ASSERT_TRUE(has(p, FS_DENY_WRITE, "/etc/shadow"));
	CU_ASSERT_TRUE(has(p, FS_DENY_READ, "/secret/.terraformrc"));
	CU_ASSERT_FALSE(has(p, FS_DENY_WRITE, "/secret/.terraformrc"));
	policy_free(p);
}

/* An environment listed entry by entry: variables that name credential
 * files, and others that must stay alone. */
static const char *cred_env_at(size_t i)
{
	static const char *const list[] = {
		"GOOGLE_APPLICATION_CREDENTIALS=/s/gac.json",
		"RESTIC_PASSWORD_FILE=/s/restic-pass",
		"ANSIBLE_VAULT_PASSWORD_FILE=/s/vault-pass",
		"CONSUL_HTTP_TOKEN_FILE=/s/consul",
		"CREDENTIALS_DIRECTORY=/run/credentials/x.service",
		"deploy_key_path=/s/deploy",
		"TOKENIZER_PATH=/models/tok",
		"SSH_PUBKEY_FILE=/s/id.pub",
		"DOCKER_CREDENTIALS=/q3ZkSecretBase64Value",
		"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
		"XAUTHORITY=/h/u/.Xauthority",
		"SECRET_NAME=/not/a/file/variable",
		"RELATIVE_TOKEN_FILE=rel/token",
		"EMPTY_TOKEN_FILE=",
		NULL,
	};

	return i < sizeof(list) / sizeof(list[0]) ? list[i] : NULL;
}

/* SPEC §3.6, moved stores as a family: a variable whose name says it
 * names a credential file (or directory) and whose value is absolute gets
 * that place denied, read and write; trust bundles, X authority, names
 * without a file suffix and relative values are left alone. */
static void test_bound_credential_vars(void)
{
	static const char *const denied[] = {"/s/gac.json", "/s/restic-pass", "/s/vault-pass", "/s/consul",
					     "/run/credentials/x.service", "/s/deploy"};
	static const char *const kept[] = {"/etc/ssl/certs/ca-certificates.crt", "/h/u/.Xauthority",
					   "/not/a/file/variable", "/w/proj/rel/token", "/models/tok", "/s/id.pub",
					   "/q3ZkSecretBase64Value"};
	struct policy_host h = fake;
	policy_t *p = load_pure("network: {}\n");

	h.env_at = cred_env_at;
	CU_ASSERT_EQUAL_FATAL(policy_bind(p, &h, stderr), 0);
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++)
		ROW(has(p, FS_DENY_READ, denied[i]) && has(p, FS_DENY_WRITE, denied[i]),
		    "%s: the file a credential variable names is not denied", denied[i]);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		ROW(!has(p, FS_DENY_READ, kept[i]), "%s: denied, but no credential variable names it", kept[i]);
	policy_free(p);
}

/* Binding errors: "FILE:LINE:COL: error:" like the loader's. */
static void test_bind_errors(void)
{
	struct policy_host nohome = fake;
	char *diag = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&diag, &len);
	policy_t *p = load_pure("network:\n  tlsTerminate: {extraCaCertPaths: [/x/missing.pem]}\n");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(policy_bind(p, &fake, f), 1);
	policy_free(p);
	p = load_pure("filesystem: {denyRead: [~/x]}\n");
	nohome.home = "relative";
	CU_ASSERT(policy_bind(p, &nohome, f) >= 1);
	policy_free(p);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "p.yaml:2:37: error: \"/x/missing.pem\" in "
					    "network.tlsTerminate.extraCaCertPaths (No such file or "
					    "directory), expected a readable PEM file"));
	CU_ASSERT_PTR_NOT_NULL(strstr(diag, "expected $HOME to be an absolute path"));
	free(diag);
}

TEST_REGISTRAR(register_policy_bind)
{
	CU_pSuite s = test_suite("policy_bind", NULL, NULL);

	test_add(s, "pure: paths as written", test_pure_forms);
	test_add(s, "bound: absolute paths and the machine's denies", test_bound);
	test_add(s, "bound: two spellings, one entry", test_bound_dedup);
	test_add(s, "bind errors with FILE:LINE:COL", test_bind_errors);
	test_add(s, "stores where the environment moves them", test_bound_relocated);
	test_add(s, "Windows and Mac homes: the HOME rows, AppData, Library, PowerShell profiles", test_bound_other_homes);
	test_add(s, "a moved store that holds the working directory is an error",
		 test_bound_relocated_errors);
	test_add(s, "the host's own secrets and /root", test_bound_system);
	test_add(s, "round 46: a home that is / binds no policy, with an error naming it", test_bound_root_home);
	test_add(s, "files that credential variables name", test_bound_credential_vars);
}
