/*
 * test_plan.c - proxy/cli/plan.c: the policy-to-sandbox plan, given a
 * policy text bound to a fake machine (no namespaces): the deny lists
 * with `~` and the HOME rows expanded under that home, the workspace protections,
 * the SPEC §7 variables and the environment rule. Suite "cli_plan".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proxy/cli/plan.c"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

/* The SPEC §7 table (moved from sandbox_env with the table itself). */
static void test_proxy_env(void)
{
	static const char *const proxy[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "GRPC_PROXY",
					     "http_proxy", "https_proxy", "all_proxy", "grpc_proxy" };
	static const char *const trust[] = {
		"SSL_CERT_FILE", "NIX_SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
		"PIP_CERT", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS", "AWS_CA_BUNDLE",
		"CARGO_HTTP_CAINFO", "DENO_CERT", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
		"NPM_CONFIG_CAFILE", "npm_config_cafile", "YARN_CA_FILE_PATH",
		"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", "HTTPLIB2_CA_CERTS",
	};
	struct strv sv = {0};
	char **env;
	size_t i;
	int k;

	CU_ASSERT_FATAL(plan_env_vars(&sv, "127.0.0.1", 3128, "/s/trust.pem") == 0);
	env = sv.v;
	CU_ASSERT_FATAL(env != NULL);
	for (i = 0; i < ARRAY_LEN(proxy); i++) {
		k = test_envv_find(env, proxy[i]);
		CU_ASSERT(k >= 0 && strcmp(strchr(env[k], '=') + 1, "http://127.0.0.1:3128") == 0);
	}
	for (i = 0; i < ARRAY_LEN(trust); i++) {
		k = test_envv_find(env, trust[i]);
		CU_ASSERT(k >= 0 && strcmp(strchr(env[k], '=') + 1, "/s/trust.pem") == 0);
	}
	k = test_envv_find(env, "NO_PROXY");
	CU_ASSERT(k >= 0 && strcmp(env[k], "NO_PROXY=localhost,127.0.0.1,::1") == 0);
	CU_ASSERT(test_envv_find(env, "no_proxy") >= 0);
	k = test_envv_find(env, "NODE_USE_ENV_PROXY");
	CU_ASSERT(k >= 0 && strcmp(env[k], "NODE_USE_ENV_PROXY=1") == 0);
	CU_ASSERT_EQUAL(test_envv_count(env), (int)(ARRAY_LEN(proxy) + ARRAY_LEN(trust) + 3));
	strv_free(&sv);
	/* The session's env file: an IPv6 listener, no trust file known. */
	CU_ASSERT_FATAL(plan_env_vars(&sv, "::1", 8080, NULL) == 0);
	CU_ASSERT(test_envv_find(sv.v, "HTTPS_PROXY") >= 0 &&
		  strcmp(sv.v[test_envv_find(sv.v, "HTTPS_PROXY")], "HTTPS_PROXY=http://[::1]:8080") == 0);
	CU_ASSERT(test_envv_find(sv.v, "SSL_CERT_FILE") < 0);
	CU_ASSERT_EQUAL(test_envv_count(sv.v), (int)(ARRAY_LEN(proxy) + 3));
	strv_free(&sv);
}

/* The test's host environment, for policy_host.env. */
static char **t_env;

static const char *t_getenv(const char *name)
{
	size_t n = strlen(name);

	for (char **e = t_env; e != NULL && *e != NULL; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* Loads doc and binds it to the fake machine h (policy_bind()). */
static policy_t *load_bound(const char *doc, size_t len, const struct plan_host *h)
{
	struct policy_host ph = {.home = h->home, .pw_home = h->pw_home, .cwd = h->cwd,
				 .env = t_getenv};
	unsigned nerr = 0;
	policy_t *p = policy_load_buffer("plan.yaml", doc, len, stderr, &nerr);

	if (p != NULL && policy_bind(p, &ph, stderr) != 0) {
		policy_free(p);
		return NULL;
	}
	return p;
}

/* A scratch tree: <t>/home (the fake home), <t>/work (cwd, writable),
 * <t>/sess (the session directory). */
static char t_root[64], t_home[96], t_work[96], t_sess[96];

static int plan_setup(void)
{
	snprintf(t_root, sizeof(t_root), "/tmp/pv-plan-XXXXXX");
	if (mkdtemp(t_root) == NULL)
		return -1;
	snprintf(t_home, sizeof(t_home), "%s/home", t_root);
	snprintf(t_work, sizeof(t_work), "%s/work", t_root);
	snprintf(t_sess, sizeof(t_sess), "%s/sess", t_root);
	return mkdir(t_home, 0700) == 0 && mkdir(t_work, 0700) == 0 && mkdir(t_sess, 0700) == 0
		       ? 0
		       : -1;
}

static int plan_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t_root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_plan_build(void)
{
	char doc[1024], path[PATH_MAX];
	char pathvar[200];
	char *env[] = {pathvar, "GITHUB_TOKEN=ghp_0123456789abcdefABCDEF0123456789abcd",
		       "FOO=bar", "DENIED=x", "XDG_CONFIG_HOME=/xdg", "LD_LIBRARY_PATH=lib", NULL, NULL, NULL};
	struct plan_host h = {.home = t_home, .pw_home = "/nonexistent-pw-home", .cwd = t_work,
			      .self_exe = "/usr/bin/passavant-test", .env = env};
	struct plan_sys_paths none = {0};
	struct plan_session s = {.dir = t_sess, .quiet = true, .sys = &none};
	struct run_plan pl;
	struct sbx_config cfg;
	char *argv[] = {"true", NULL};
	policy_t *p;
	int n;

	snprintf(pathvar, sizeof(pathvar), "PATH=/bin::%s", t_work);
	n = snprintf(doc, sizeof(doc),
		     "filesystem:\n"
		     "  allowWrite: [\"%s\", \"%s/missing\"]\n"
		     "  denyRead: [\"~/secret-dir\"]\n"
		     "credentials:\n"
		     "  envVars:\n"
		     "    - name: DENIED\n"
		     "      mode: deny\n",
		     t_work, t_root);
	t_env = env;
	p = load_bound(doc, (size_t)n, &h);
	CU_ASSERT_FATAL(p != NULL);
	/* An empty PATH entry, a relative LD_LIBRARY_PATH one: `run`
	 * refuses to start (round 32 of the attack, b9); the policy (what
	 * `check` prints) still takes them from the working directory. */
	CU_ASSERT(plan_build(&pl, p, NULL, &h, &s) == -1);
	snprintf(pathvar, sizeof(pathvar), "PATH=/bin:%s", t_work);
	CU_ASSERT(plan_build(&pl, p, NULL, &h, &s) == -1);
	env[5] = "LD_LIBRARY_PATH=/usr/lib";
	/* LD_PRELOAD and LD_AUDIT (round 34 of the attack, P2): an entry
	 * with a '/' that is relative, ' ' or ':' separated; a bare name
	 * (searched in the library path) and an empty entry are not (the
	 * build below starts with one). */
	{
		static const char *const preload[] = {
			"LD_PRELOAD=./libshim.so",
			"LD_PRELOAD=/usr/lib/x.so lib/libshim.so",
			"LD_PRELOAD=/usr/lib/x.so:sub/y.so",
			"LD_AUDIT=./aud.so",
		};

		for (size_t i = 0; i < sizeof(preload) / sizeof(preload[0]); i++) {
			env[6] = (char *)preload[i];
			CU_ASSERT(plan_build(&pl, p, NULL, &h, &s) == -1);
			plan_free(&pl);
		}
		env[6] = "LD_PRELOAD=libshim.so /usr/lib/x.so::";
	}
	/* The interpreters' module paths (P3): a relative entry, PYTHONPATH's
	 * empty one, a relative Lua template, NODE_OPTIONS' module options.
	 * Other empty entries, Lua's ";;" and absolute ones start (below). */
	{
		static const char *const mod[] = {
			"PERL5LIB=lib", "PERLLIB=/usr/lib:lib", "PYTHONPATH=/usr/lib::/x", "PYTHONPATH=src",
			"RUBYLIB=./lib", "NODE_PATH=nm", "GEM_PATH=/g:vendor", "CLASSPATH=.", "GOPATH=go",
			"LUA_PATH=/u/?.lua;./?.lua;;", "LUA_CPATH_5_4=?.so", "NODE_OPTIONS=--require ./x.js",
			"NODE_OPTIONS=-r x", "NODE_OPTIONS=--trace-warnings --import=./h.mjs",
			"NODE_OPTIONS=--loader \"./l.mjs\"", "NODE_OPTIONS=-r./x",
		};

		for (size_t i = 0; i < sizeof(mod) / sizeof(mod[0]); i++) {
			env[7] = (char *)mod[i];
			CU_ASSERT(plan_build(&pl, p, NULL, &h, &s) == -1);
			plan_free(&pl);
		}
		env[7] = "NODE_OPTIONS=--max-old-space-size=64 --require /usr/lib/x.js -r=/y.js";
	}
	/* The option variables (round 35): a path given to an option that
	 * loads or searches code, not absolute; the forms that name none, a
	 * bare module name or an absolute path start. */
	{
		static const char *const opt[] = {
			"PERL5OPT=-Ilib", "PERL5OPT=-w -Mlib=/x,lib", "PERL5OPT=Isub/lib", "RUBYOPT=-r ./boot",
			"RUBYOPT=-r../x.rb", "RUBYOPT=-w -I lib", "RUBYOPT=-wIlib", "RUBYOPT=Ilib",
			"JAVA_TOOL_OPTIONS=-javaagent:agent.jar", "JDK_JAVA_OPTIONS=-cp .:/usr/share/java",
			"_JAVA_OPTIONS=-Xmx1g -agentpath:lib/a.so=x", "JAVA_TOOL_OPTIONS=-Djava.class.path=lib",
			"JDK_JAVA_OPTIONS=@opts.txt", "JAVA_TOOL_OPTIONS=-XX:VMOptionsFile=jvm.opts",
			"JAVA_TOOL_OPTIONS=\"-javaagent:a b.jar\"", "JDK_JAVA_OPTIONS=--module-path=/m:mods",
			"NODE_OPTIONS=--openssl-config=ssl.cnf", "NODE_OPTIONS=--require=./x.js",
			/* Round 35's single paths and lists. */
			"PYTHONUSERBASE=.pyub", "PYTHONHOME=/usr:", "PYTHONHOME=venv", "GCONV_PATH=/usr/lib/gconv:gconv",
			"GIT_EXEC_PATH=gx", "OPENSSL_CONF=ssl.cnf", "OPENSSL_MODULES=./m", "OPENSSL_ENGINES=e",
			"GEM_HOME=vendor/gems", "PYTHONPYCACHEPREFIX=.cache",
			/* Round 36: the six this table owns alone (plan_relative_config
			 * left them, below), GEM_HOME's empty value ("."); the plugin
			 * paths, Tcl's list; the command variables' new members. */
			"GEM_HOME=", "GEM_HOME=.gems", "GIT_EXEC_PATH=libexec", "PYTHONUSERBASE=.local",
			"GCONV_PATH=gconv", "PYTHONHOME=.py", "PYTHONPYCACHEPREFIX=~/.cache", "GTK_PATH=gtk",
			"GST_PLUGIN_PATH_1_0=/usr/lib:gst", "VK_ICD_FILENAMES=./icd.json", "TCLLIBPATH=/usr/share/tcltk lib",
			"GIT_SSH=~/bin/ssh", "RUSTC_WRAPPER=./w", "CMAKE_TOOLCHAIN_FILE=tc.cmake", "BROWSER=ff:./b",
			"PS1=$(./p) ", "PROMPT_COMMAND=a; ./b", "JAVA_TOOL_OPTIONS=-agentlib:../x",
			"MAKEFLAGS=--eval=include\\ x.mk",
			/* Command variables naming a program by a relative path. */
			"EDITOR=./ed.sh", "GIT_SSH=bin/ssh", "GIT_SSH_COMMAND=tools/ssh -i k", "PAGER=\"./p\" -R",
		};
		static const char *const fine[] = {
			"PERL5OPT=-Mstrict -w -I/usr/share/perl5 -Mlib=/opt/lib",
			"RUBYOPT=-W:no-deprecated -rjson -I/usr/lib/ruby -r/opt/boot.rb",
			"JAVA_TOOL_OPTIONS=-Xmx512m -javaagent:/opt/a.jar=x=y -Dfoo=bar -cp /usr/share/java",
			"NODE_OPTIONS=--openssl-config=/etc/ssl/openssl.cnf --trace-warnings",
			"PYTHONUSERBASE=/opt/pyub", "GIT_EXEC_PATH=/usr/lib/git-core", "GCONV_PATH=/usr/lib/gconv",
			"PAGER=less -R", "EDITOR=~/bin/ed", "GIT_ASKPASS=/usr/lib/askpass", "VISUAL=code --wait",
			"GEM_HOME=/g", "GST_PLUGIN_PATH=/usr/lib::", "QT_PLUGIN_PATH=", "TCLLIBPATH=/a /b",
			"RUSTC_WRAPPER=sccache", "PS1=\\u $(__git_ps1) ", "BROWSER=/usr/bin/xdg-open:firefox",
			"JAVA_TOOL_OPTIONS=-agentlib:jdwp=transport=dt_socket,address=*:5005",
		};

		for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++) {
			env[7] = (char *)opt[i];
			if (plan_relative_path(&h) != -1) {
				fprintf(stderr, "started: %s\n", opt[i]);
				CU_FAIL("a relative option path started");
			}
		}
		for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
			env[7] = (char *)fine[i];
			if (plan_relative_path(&h) != 0) {
				fprintf(stderr, "refused: %s\n", fine[i]);
				CU_FAIL("an absolute option path refused");
			}
		}
		/* The dynamic linker's tokens, in an absolute entry too (the
		 * slots of LD_LIBRARY_PATH and LD_PRELOAD above, restored). */
		{
			static const char *const tok[] = {
				"LD_LIBRARY_PATH=/usr/lib:$ORIGIN/../lib", "LD_PRELOAD=${ORIGIN}/x.so",
				"LD_AUDIT=/opt/$PLATFORM/a.so", "LD_LIBRARY_PATH=/opt/w/$LIB",
				"LD_PRELOAD=/usr/lib/x.so lib$LIB.so",
			};
			char *ld = env[5], *pre = env[6];

			for (size_t i = 0; i < sizeof(tok) / sizeof(tok[0]); i++) {
				size_t slot = strncmp(tok[i], "LD_LIBRARY_PATH=", 16) == 0 ? 5
					      : strncmp(tok[i], "LD_PRELOAD=", 11) == 0	 ? 6
											 : 7;

				env[slot] = (char *)tok[i];
				if (plan_relative_path(&h) != -1) {
					fprintf(stderr, "started: %s\n", tok[i]);
					CU_FAIL("a dynamic linker token started");
				}
				env[5] = ld;
				env[6] = pre;
			}
		}
		env[7] = (char *)opt[0];
		CU_ASSERT(plan_build(&pl, p, NULL, &h, &s) == -1);
		plan_free(&pl);
		env[7] = "PYTHONUSERBASE=.pyub";
		CU_ASSERT(plan_build(&pl, p, NULL, &h, &s) == -1);
		plan_free(&pl);
		env[7] = "NODE_OPTIONS=--max-old-space-size=64 --require /usr/lib/x.js -r=/y.js";
	}
	CU_ASSERT_FATAL(plan_build(&pl, p, NULL, &h, &s) == 0);
	/* `~` and the HOME rows under the fake home, and under the password
	 * database's home too. */
	snprintf(path, sizeof(path), "%s/secret-dir", t_home);
	CU_ASSERT(strv_has(&pl.deny_read, path));
	snprintf(path, sizeof(path), "%s/.ssh", t_home);
	CU_ASSERT(strv_has(&pl.deny_read, path));
	CU_ASSERT(strv_has(&pl.deny_write, path));
	CU_ASSERT(strv_has(&pl.deny_read, "/nonexistent-pw-home/.ssh"));
	snprintf(path, sizeof(path), "%s/.bashrc", t_home);
	CU_ASSERT(strv_has(&pl.deny_write, path));
	CU_ASSERT(!strv_has(&pl.deny_read, path));
	/* The host's PATH (an empty entry: the working directory) and
	 * start-up variables, unless allowWrite names the directory; the
	 * place the next lookup would find a policy. */
	CU_ASSERT(strv_has(&pl.deny_write, "/bin"));
	CU_ASSERT(!strv_has(&pl.deny_write, t_work));
	snprintf(path, sizeof(path), "%s/lib", t_work);
	CU_ASSERT(strv_has(&pl.deny_write, path));
	CU_ASSERT(strv_has(&pl.deny_write, "/xdg/passavant"));
	/* The existing allowWrite only; the session dir read-only. */
	CU_ASSERT_EQUAL(pl.allow_write.n, 1);
	CU_ASSERT(strv_has(&pl.allow_write, t_work));
	CU_ASSERT(strv_has(&pl.allow_read, t_sess));
	CU_ASSERT(strv_has(&pl.protect, t_sess));
	CU_ASSERT(strv_has(&pl.protect, "/usr/bin/passavant-test"));
	/* The workspace rows and git control files of the writable dir. */
	snprintf(path, sizeof(path), "%s/.git/hooks", t_work);
	CU_ASSERT(strv_has(&pl.protect, path));
	snprintf(path, sizeof(path), "%s/.vscode", t_work);
	CU_ASSERT(strv_has(&pl.protect, path));
	/* Environment: §7 for the in-sandbox listener, the denied variable
	 * and the unnamed token removed, the rest left. */
	snprintf(path, sizeof(path), "SSL_CERT_FILE=%s/trust.pem", t_sess);
	CU_ASSERT(strv_has(&pl.env_add, path));
	CU_ASSERT(strv_has(&pl.env_add, "HTTPS_PROXY=http://127.0.0.1:3128"));
	CU_ASSERT(strv_has(&pl.env_remove, "DENIED"));
	CU_ASSERT(strv_has(&pl.env_remove, "GITHUB_TOKEN"));
	CU_ASSERT(!strv_has(&pl.env_remove, "FOO"));
	CU_ASSERT(!strv_has(&pl.env_remove, "PATH"));
	CU_ASSERT_EQUAL(pl.n_files, 0);
	plan_sbx_config(&pl, p, argv, &cfg);
	CU_ASSERT(cfg.argv == argv && cfg.listen_port == SBX_DEFAULT_PORT);
	CU_ASSERT(cfg.deny_read == strv_list(&pl.deny_read) && cfg.files == NULL);
	plan_free(&pl);
	policy_free(p);
	/* No home at all: the policy cannot be bound, so no plan is made. */
	h.home = NULL;
	CU_ASSERT(load_bound(doc, (size_t)n, &h) == NULL);
	t_env = NULL;
}

/* Is path -> source among the plan's substitutions? */
static bool has_file(const struct run_plan *pl, const char *path, const char *source)
{
	for (size_t i = 0; i < pl->n_files; i++)
		if (strcmp(pl->files[i].path, path) == 0 && strcmp(pl->files[i].source, source) == 0)
			return true;
	return false;
}

/* How many substitutions cover path? */
static int count_path(const struct run_plan *pl, const char *path)
{
	int n = 0;

	for (size_t i = 0; i < pl->n_files; i++)
		n += strcmp(pl->files[i].path, path) == 0;
	return n;
}

/* SPEC §7 Trust and the resolver files, on a fake system tree:
 *   etc/certs/bundle.crt        a bundle (also reached through a link)
 *   etc/cert.pem -> certs/bundle.crt
 *   etc/certs/java/cacerts      a JDK truststore, also reached by
 *   jvm/a/lib/security/cacerts -> ../../../etc/certs/java/cacerts
 *   jvm/b/lib/security/cacerts  a JDK's own
 *   etc/resolv.conf -> ../run/resolv.conf (exists), etc/hosts
 * Each real file is covered once, with the right session file; the
 * hashed directory with the session CA's entry; missing paths skipped; the resolver
 * files only when intercepting. */
static void test_plan_trust(void)
{
	char fake[160], sess[160], pat_bundle[PATH_MAX], pat_link[PATH_MAX], pat_missing[PATH_MAX];
	char pat_dir[PATH_MAX], pat_jdk[PATH_MAX], pat_deb[PATH_MAX], resolv[PATH_MAX];
	char hosts[PATH_MAX], path[PATH_MAX], src[PATH_MAX];
	static char cmd[3 * PATH_MAX];
	const char *bundles[] = {pat_bundle, pat_link, pat_missing, NULL};
	const char *dirs[] = {pat_dir, pat_dir, NULL};
	const char *cacerts[] = {pat_deb, pat_jdk, NULL};
	struct plan_sys_paths sys = {.bundles = bundles, .cert_dirs = dirs, .cacerts = cacerts,
				     .resolv_conf = resolv, .hosts = hosts};
	char *env[] = {NULL};
	struct plan_host h = {.home = t_home, .cwd = t_work, .env = env};
	struct plan_session s = {.dir = sess, .quiet = true, .sys = &sys, .intercept = true};
	struct ca_config cc = {.allow_any = true};
	struct run_plan pl;
	struct sbx_config cfg;
	struct stat st0, st1;
	char err[256], *text;
	size_t len;
	policy_t *p;
	ca_t *ca;

	snprintf(fake, sizeof(fake), "%s/fake", t_root);
	snprintf(sess, sizeof(sess), "%s/sess-trust", t_root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/etc/certs/java %s/run %s/jvm/a/lib/security "
		 "%s/jvm/b/lib/security %s", fake, fake, fake, fake, sess);
	CU_ASSERT_FATAL(system(cmd) == 0);
	ca = ca_new(&cc, err, sizeof(err));
	CU_ASSERT_FATAL(ca != NULL && ca_write_files(ca, sess, NULL, 0, err, sizeof(err)) == 0);
	snprintf(path, sizeof(path), "%s/etc/certs/bundle.crt", fake);
	CU_ASSERT_FATAL(test_write_file(path, "B\n", 2) == 0);
	snprintf(path, sizeof(path), "%s/etc/certs/java/cacerts", fake);
	CU_ASSERT_FATAL(test_write_file(path, "J\n", 2) == 0);
	snprintf(path, sizeof(path), "%s/jvm/b/lib/security/cacerts", fake);
	CU_ASSERT_FATAL(test_write_file(path, "K\n", 2) == 0);
	snprintf(path, sizeof(path), "%s/run/resolv.conf", fake);
	CU_ASSERT_FATAL(test_write_file(path, "nameserver 192.0.2.53\n", 22) == 0);
	snprintf(path, sizeof(path), "%s/etc/hosts", fake);
	CU_ASSERT_FATAL(test_write_file(path, "192.0.2.9 other\n", 16) == 0);
	snprintf(path, sizeof(path), "%s/etc/cert.pem", fake);
	CU_ASSERT_FATAL(symlink("certs/bundle.crt", path) == 0);
	snprintf(path, sizeof(path), "%s/jvm/a/lib/security/cacerts", fake);
	CU_ASSERT_FATAL(symlink("../../../../etc/certs/java/cacerts", path) == 0);
	snprintf(path, sizeof(path), "%s/etc/resolv.conf", fake);
	CU_ASSERT_FATAL(symlink("../run/resolv.conf", path) == 0);
	snprintf(pat_bundle, sizeof(pat_bundle), "%s/etc/certs/bundle.crt", fake);
	snprintf(pat_link, sizeof(pat_link), "%s/etc/cert.pem", fake);
	snprintf(pat_missing, sizeof(pat_missing), "%s/etc/pki/missing.crt", fake);
	snprintf(pat_dir, sizeof(pat_dir), "%s/etc/certs", fake);
	snprintf(pat_deb, sizeof(pat_deb), "%s/etc/certs/java/cacerts", fake);
	snprintf(pat_jdk, sizeof(pat_jdk), "%s/jvm/*/lib/security/cacerts", fake);
	snprintf(resolv, sizeof(resolv), "%s/etc/resolv.conf", fake);
	snprintf(hosts, sizeof(hosts), "%s/etc/hosts", fake);

	t_env = env;
	p = load_bound("network: {}\n", 12, &h);
	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(plan_build(&pl, p, NULL, &h, &s) == 0);
	/* The bundle once (two patterns reach it), with trust.pem. */
	snprintf(src, sizeof(src), "%s/trust.pem", sess);
	CU_ASSERT(has_file(&pl, pat_bundle, src));
	CU_ASSERT_EQUAL(count_path(&pl, pat_bundle), 1);
	/* Each cacerts once, with the truststore, which exists. */
	snprintf(src, sizeof(src), "%s/sys/cacerts.p12", sess);
	CU_ASSERT(has_file(&pl, pat_deb, src));
	CU_ASSERT_EQUAL(count_path(&pl, pat_deb), 1);
	snprintf(path, sizeof(path), "%s/jvm/b/lib/security/cacerts", fake);
	CU_ASSERT(has_file(&pl, path, src));
	/* Made empty; its content comes from plan_fill(), the config's
	 * meanwhile, written in place (the inode the sandbox shows). */
	CU_ASSERT_STRING_EQUAL(pl.truststore, src);
	CU_ASSERT(stat(src, &st0) == 0 && st0.st_size == 0 && (st0.st_mode & 07777) == 0644);
	plan_sbx_config(&pl, p, (char *[]){"true", NULL}, &cfg);
	CU_ASSERT(cfg.meanwhile == plan_fill && cfg.meanwhile_arg == &pl);
	CU_ASSERT_FATAL(cfg.meanwhile(cfg.meanwhile_arg, err, sizeof(err)) == 0);
	CU_ASSERT(stat(src, &st1) == 0 && st1.st_size > 0 && st1.st_ino == st0.st_ino);
	/* The hashed directory once, with the session CA's entry (the
	 * sandbox shows the union); one file in it. */
	snprintf(src, sizeof(src), "%s/sys/certs", sess);
	CU_ASSERT(has_file(&pl, pat_dir, src));
	CU_ASSERT_EQUAL(count_path(&pl, pat_dir), 1);
	snprintf(cmd, sizeof(cmd), "test $(ls %s | wc -l) = 1 && grep -q 'BEGIN CERT' %s/*.0", src,
		 src);
	CU_ASSERT(system(cmd) == 0);
	/* The resolver files at the link's real place, with our text. */
	snprintf(path, sizeof(path), "%s/run/resolv.conf", fake);
	snprintf(src, sizeof(src), "%s/sys/resolv.conf", sess);
	CU_ASSERT(has_file(&pl, path, src));
	CU_ASSERT_EQUAL(count_path(&pl, resolv), 0);
	text = test_read_file(src, &len);
	CU_ASSERT(text != NULL && strstr(text, "\nnameserver 127.0.0.1\n") != NULL &&
		  strstr(text, "192.0.2.53") == NULL && strstr(text, "search") == NULL);
	free(text);
	snprintf(src, sizeof(src), "%s/sys/hosts", sess);
	CU_ASSERT(has_file(&pl, hosts, src));
	text = test_read_file(src, &len);
	CU_ASSERT(text != NULL && strcmp(text, "127.0.0.1 localhost\n"
					       "::1 localhost ip6-localhost ip6-loopback\n") == 0);
	free(text);
	/* bundle + 2 cacerts + dir + resolv + hosts, all public content (a
	 * hard link to one is no reason to refuse the run). */
	CU_ASSERT_EQUAL(pl.n_files, 6);
	for (size_t i = 0; i < pl.n_files; i++)
		CU_ASSERT(pl.files[i].public_content);
	plan_free(&pl);

	/* Without interception: the resolver files stay the host's. */
	snprintf(cmd, sizeof(cmd), "rm -rf %s/sys", sess);
	CU_ASSERT_FATAL(system(cmd) == 0);
	s.intercept = false;
	CU_ASSERT_FATAL(plan_build(&pl, p, NULL, &h, &s) == 0);
	CU_ASSERT_EQUAL(count_path(&pl, hosts), 0);
	snprintf(path, sizeof(path), "%s/run/resolv.conf", fake);
	CU_ASSERT_EQUAL(count_path(&pl, path), 0);
	CU_ASSERT_EQUAL(pl.n_files, 4);
	plan_free(&pl);

	/* No JDK: no truststore, nothing for the sandbox to wait for. */
	snprintf(cmd, sizeof(cmd), "rm -rf %s/sys", sess);
	CU_ASSERT_FATAL(system(cmd) == 0);
	sys.cacerts = NULL;
	CU_ASSERT_FATAL(plan_build(&pl, p, NULL, &h, &s) == 0);
	CU_ASSERT_EQUAL(pl.truststore[0], '\0');
	plan_sbx_config(&pl, p, (char *[]){"true", NULL}, &cfg);
	CU_ASSERT(cfg.meanwhile == NULL);
	CU_ASSERT_EQUAL(pl.n_files, 2);
	snprintf(path, sizeof(path), "%s/sys/cacerts.p12", sess);
	CU_ASSERT(access(path, F_OK) < 0);
	plan_free(&pl);

	/* A session directory without ca.pem: the entry cannot be made, so
	 * the plan fails (naming the file) instead of a sandbox without the
	 * session CA in its hashed directory. */
	snprintf(cmd, sizeof(cmd), "rm -rf %s/sys %s/ca.pem", sess, sess);
	CU_ASSERT_FATAL(system(cmd) == 0);
	CU_ASSERT(plan_build(&pl, p, NULL, &h, &s) == -1);
	plan_free(&pl);
	policy_free(p);
	ca_free(ca);
	t_env = NULL;
}

/*
 * plan_relative_config() (round 35 of the attack, e1/e1b/e2/e2b): the
 * table of variables naming where a later program reads its settings or
 * code (a relative value, or list entry, refuses; GEM_HOME's empty value
 * too; GOFLAGS' -toolexec= and -exec= with a relative program), and the
 * suffix rule (a name ending in HOME, PATH, RC, CONFIG, _CONFIG_FILE,
 * _CONFIG_DIR or _DIRS, a value or entry starting with '.' or '~').
 */
static void test_relative_config(void)
{
	static const char *const refused[] = {
		"XDG_CONFIG_HOME=.config", "XDG_CONFIG_HOME=config", "XDG_DATA_DIRS=/usr/share:share",
		"GIT_CONFIG_GLOBAL=.gitconfig.local", "GIT_CONFIG_SYSTEM=etc/gitconfig", "GIT_TEMPLATE_DIR=tpl",
		"HGRCPATH=/etc/mercurial/hgrc:.hgrc.local", "PHPRC=.php",
		"PHP_INI_SCAN_DIR=:conf.d", "GOENV=.goenv", "GOFLAGS=-mod=mod -toolexec=./tx",
		"GOFLAGS=--exec=bin/run", "INPUTRC=.inputrc", "NPM_CONFIG_USERCONFIG=.npmrc.x",
		"npm_config_globalconfig=etc/npmrc", "NPM_CONFIG_INIT-MODULE=init.js", "PIP_CONFIG_FILE=pip.conf",
		"CARGO_HOME=.cargo", "R_PROFILE_USER=.Rprofile", "R_ENVIRON_USER=renv", "MAKEFILES=/a.mk b.mk",
		"KUBECONFIG=/k:kube/config", "LESSKEY=.less",
		/* the suffix rule */
		"GRADLE_USER_HOME=./gradle", "WORKON_HOME=~/envs", "SOMETOOL_CONFIG=.toolrc",
		"FOO_CONFIG_FILE=./foo.toml", "BAR_CONFIG_DIR=.bar", "PKG_CONFIG_PATH=/usr/lib/pkgconfig:./pc",
		"MYTOOLRC=.mytoolrc", "QUX_DIRS=/a:../b",
		/* "~/" kept where the reader does not expand it (cargo joins it
		 * to the working directory), or after a relative entry */
		"CARGO_HOME=~/.cargo", "KUBECONFIG=~/.kube/config", "R_LIBS_USER=~/R:lib", "INPUTRC=~x",
		"GIT_CONFIG_GLOBAL=~/.gitconfig", "CI_CONFIG=./ci",
	};
	static const char *const started[] = {
		"XDG_CONFIG_HOME=/home/u/.config", "XDG_CONFIG_HOME=", "XDG_DATA_DIRS=/usr/share::/usr/local/share",
		"GIT_CONFIG_GLOBAL=/home/u/.gitconfig", "HGRCPATH=", "PHP_INI_SCAN_DIR=", "GEM_HOME=/g",
		"GOFLAGS=-mod=mod -toolexec=mytool", "GOFLAGS=-toolexec=/usr/bin/tx -exec=run",
		"npm_config_registry=https://example.invalid/", "npm_config_cache=.npm",
		/* outside the suffix rule: no '.' or '~' first, a URL, options,
		 * an empty entry, a name it does not cover, CDPATH */
		"SOMETOOL_CONFIG=pkg-config", "FOO_HOME=lib/foo", "BAR_PATH=s3://b/x", "BAZ_CONFIG=--x=./y",
		"MANPATH=:/opt/man", "DATA_DIR=./data", "LOG_FILE=./app.log", "CDPATH=.:~:/usr",
		"XDG_RUNTIME_DIR=/run/user/1000", "OLDPWD=/tmp", "TERMINFO_DIRS=/usr/share/terminfo:",
		"APP_CONFIG=eyJhIjoiYi9jIn0", "PATH=/usr/bin:/bin",
		/* GitLab CI's, in every job; a "~/" the reader takes as the home
		 * (R sets R_LIBS_USER so for the programs it starts) */
		"CI_CONFIG_PATH=.gitlab-ci.yml", "INPUTRC=~/.inputrc", "R_LIBS_USER=~/R/x86_64-pc-linux-gnu-library/4.3",
		"R_LIBS=~/R/lib:/opt/R", "R_PROFILE_USER=~/.Rprofile", "HGRCPATH=~/.hgrc:/etc/mercurial/hgrc",
		"GNUPGHOME=~/.gnupg", "GNUPGHOME=~",
		/* Round 36: code paths, plan_relative_path()'s alone (its rows
		 * refuse them); one table owns each variable. */
		"GIT_EXEC_PATH=libexec", "PYTHONUSERBASE=.local", "GCONV_PATH=gconv", "GEM_HOME=",
		"PYTHONPYCACHEPREFIX=cache",
	};
	char *env[2] = {NULL, NULL};
	struct plan_host h = {.home = t_home, .cwd = t_work, .env = env};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		env[0] = (char *)refused[i];
		if (plan_relative_config(&h) != -1)
			CU_FAIL(refused[i]);
	}
	for (size_t i = 0; i < sizeof(started) / sizeof(started[0]); i++) {
		env[0] = (char *)started[i];
		if (plan_relative_config(&h) != 0)
			CU_FAIL(started[i]);
	}
}

static void test_ctl_paths(void)
{
	struct sbx_ctl_path *ctl = plan_ctl_paths();
	size_t n = 0, rows = 0;

	CU_ASSERT_FATAL(ctl != NULL);
	for (size_t i = 0; i < policy_mandatory_count(); i++)
		rows += (policy_mandatory_get(i)->where & POLICY_MAND_WORKSPACE) != 0;
	for (; ctl[n].path != NULL; n++)
		CU_ASSERT(ctl[n].kind != NULL);
	CU_ASSERT_EQUAL(n, rows);
	free(ctl);
}

/* Round 35 of the attack, e3: the names of the copies beside a hidden
 * file, told by their shape (sib_copy_name()), and the neighbours that
 * are no copies. */
static void test_copy_names(void)
{
	static const struct {
		const char *e, *base;
		bool copy;
	} rows[] = {
	    {".env~", ".env", true},		   {"#.env#", ".env", true},
	    {".env.swn", ".env", true},		   {".env.swa", ".env", true},
	    {".env.kate-swp", ".env", true},	   {".env.rej", ".env", true},
	    {".env_BACKUP_12345", ".env", true},   {".env_REMOTE_1", ".env", true},
	    {".env___jb_old___", ".env", true},	   {".env___jb_tmp___", ".env", true},
	    {".env.backup", ".env", true},	   {".env.BAK", ".env", true},
	    {".ENV", ".env", true},		   {".env2", ".env", true},
	    {".~lock..env#", ".env", true},	   {".~lock.env#", ".env", true},
	    {".#.env", ".env", true},		   {"..env.un~", ".env", true},
	    {".creds.json.swp", "creds.json", true}, {"creds_LOCAL_7.json", "creds.json", true},
	    {"creds.old.json", "creds.json", true}, {"creds copy.json", "creds.json", true},
	    {"creds (1).json", "creds.json", true}, {"CREDS-old.JSON", "creds.json", true},
	    {"config-old", "config", true},	   {"shadow-", "shadow", true},
	    {".env", ".env", false},		   {".envrc", ".env", false},
	    {".environment", ".env", false},	   {".env.example", ".env", false},
	    {".env.sample", ".env", false},	   {".env.Template", ".env", false},
	    {".env.dist", ".env", false},	   {"env", ".env", false},
	    {"creds.example.json", "creds.json", false}, {"creds.yaml", "creds.json", false},
	    {"credsx.json", "creds.json", false},  {"creds.json", "creds.json", false},
	    {"configure", "config", false},	   {"my.env", ".env", false},
	    {"ssh_host_ed25519_key.pub", "ssh_host_ed25519_key", false},
	    {".env.development", ".env", false},   {".env.local", ".env", false},
	    {".env.production.local", ".env", false}, {".env.lock", ".env", false},
	    {"appsettings.Development.json", "appsettings.json", false},
	    {".env.production.bak", ".env", true}, {".env.bak2", ".env", true},
	    {".env.new", ".env", true},		   {".env.1", ".env", true},
	    {".env.local~", ".env", true},	   {".env.swp", ".env", true},
	    {".env.dpkg-old", ".env", true},	   {"config.production.json", "config.json", false},
	    {"ssh_host_ed25519_key.pub~", "ssh_host_ed25519_key", true},
	    /* the review of round 35: a project's variants named by a word
	     * after _ or -, and the copies sync tools leave */
	    {"config_test.json", "config.json", false}, {"config-dev.json", "config.json", false},
	    {"config_local.json", "config.json", false}, {".env-sample", ".env", false},
	    {".env_test", ".env", false},	   {"config-prod", "config", false},
	    {"id_ed25519-cert.pub", "id_ed25519", false}, {".env.ci", ".env", false},
	    {".env.test", ".env", false},	   {".env.docker", ".env", false},
	    {".env.defaults", ".env", false},	   {".env.schema", ".env", false},
	    {"settings.json.schema", "settings.json", false},
	    {".env.sync-conflict-20240101-120000-ABCDEFG", ".env", true},
	    {"config.sync-conflict-20240101-120000-ABCDEFG.json", "config.json", true},
	    {".env-host-safeBackup-0001", ".env", true}, {"config_BASE_99.json", "config.json", true},
	    {".env.dpkg-dist", ".env", true},	   {".env.ucf-dist", ".env", true},
	    {"config-2.json", "config.json", true}, {".env (conflicted copy 2024-01-01)", ".env", true},
	    {"config_old.json", "config.json", true}, {".env.kate-swp", ".env", true},
	};

	for (size_t i = 0; i < ARRAY_LEN(rows); i++)
		ROW(sib_copy_name(rows[i].e, rows[i].base) == rows[i].copy, "%s beside %s: %s expected", rows[i].e,
		    rows[i].base, rows[i].copy ? "a copy" : "no copy");
}

/* The review of round 35: the copies editors keep in the home named by
 * the file's whole path (central_copy_name()). */
static void test_central_copy_names(void)
{
	static const struct {
		const char *e, *path;
		bool copy;
	} rows[] = {
	    {"%home%u%p%.env.swp", "/home/u/p/.env", true}, {"%home%u%p%.env", "/home/u/p/.env", true},
	    {"%home%u%p%.env~", "/home/u/p/.env", true},    {"!home!u!p!.env~", "/home/u/p/.env", true},
	    {"!home!u!p!.env.~3~", "/home/u/p/.env", true}, {"#!home!u!p!.env#", "/home/u/p/.env", true},
	    {"!home!u!a!!b!.env~", "/home/u/a!b/.env", true}, {"%home%u%p%.envrc", "/home/u/p/.env", false},
	    {"%home%u%p%.env.local", "/home/u/p/.env", false}, {"%home%u%q%.env.swp", "/home/u/p/.env", false},
	    {"%home%u%p%x%.env.swp", "/home/u/p/.env", false}, {"!home!u!a!b!.env~", "/home/u/a!b/.env", false},
	};

	for (size_t i = 0; i < ARRAY_LEN(rows); i++)
		ROW(central_copy_name(rows[i].e, rows[i].path, false) == rows[i].copy, "%s for %s: %s expected", rows[i].e,
		    rows[i].path, rows[i].copy ? "a copy" : "no copy");
	/* under a denied directory */
	ROW(central_copy_name("%home%u%.aws%credentials", "/home/u/.aws", true), "an undo file under ~/.aws");
	ROW(central_copy_name("!home!u!.aws!credentials~", "/home/u/.aws", true), "a backup under ~/.aws");
	ROW(!central_copy_name("%home%u%.aws", "/home/u/.aws", true), "the directory's own name");
	ROW(!central_copy_name("%home%u%.awsx%y", "/home/u/.aws", true), "a neighbour of ~/.aws");
}

/* fix45h: the homes of others on mounts not cheap to look at. The
 * mountinfo classification (types, the longest mount point above a path,
 * the top one of a stack, an unreadable table) and path_look(), which
 * stops at such a mount before looking at anything of it: the "remote"
 * paths below do not exist, and are reported, not looked up. */
static void test_remote_mounts(void)
{
	static const char info[] =
		"22 1 0:21 / / rw - ext4 /dev/vda rw\n"
		"30 22 0:40 / /net rw,relatime - autofs /etc/auto.net rw,fd=7\n"
		"31 22 0:41 / /home/bob rw shared:5 - nfs4 srv:/bob rw\n"
		"32 31 0:42 / /home/bob/local rw - tmpfs tmpfs rw\n"
		"33 22 0:43 / /home/c\\040d rw - fuse.sshfs x@y: rw\n"
		"34 22 0:44 / /home/over rw - nfs srv:/o rw\n"
		"35 34 0:45 / /home/over rw - ext4 /dev/vdb rw\n";
	char dir[PATH_MAX], lnk[PATH_MAX + 16], tgt[PATH_MAX + 32], out[PATH_MAX], entry[PATH_MAX + 8];
	struct host_mounts m = {0}, none = {.unread = true};
	struct stat st;
	FILE *f = fmemopen((void *)info, sizeof(info) - 1, "r");

	CU_ASSERT(fs_type_remote("nfs") && fs_type_remote("autofs") && fs_type_remote("fuse.sshfs") &&
		  fs_type_remote("cifs") && !fs_type_remote("ext4") && !fs_type_remote("tmpfs") &&
		  !fs_type_remote("fusectl"));
	/* fix46h: an allowlist of the local types; every other one, an
	 * unknown one included, is not cheap to look at */
	ROW(fs_type_remote("orangefs2") && fs_type_remote("fuseblk") && fs_type_remote("9p") &&
		    fs_type_remote("virtiofs") && fs_type_remote("ecryptfs") && fs_type_remote("") &&
		    fs_type_remote("ext4x"),
	    "an unknown or network filesystem type taken as local");
	ROW(!fs_type_remote("xfs") && !fs_type_remote("btrfs") && !fs_type_remote("zfs") && !fs_type_remote("overlay") &&
		    !fs_type_remote("f2fs") && !fs_type_remote("vfat") && !fs_type_remote("exfat") &&
		    !fs_type_remote("bcachefs") && !fs_type_remote("ext3") && !fs_type_remote("proc"),
	    "a local filesystem type taken as remote");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(host_mounts_parse(&m, f), 0);
	(void)fclose(f);
	CU_ASSERT_EQUAL(m.at.n, 7);
	CU_ASSERT(!host_mounts_remote(&m, "/home/alice"));
	CU_ASSERT(host_mounts_remote(&m, "/net/srv/alice"));
	CU_ASSERT(host_mounts_remote(&m, "/home/bob") && host_mounts_remote(&m, "/home/bob/.netrc"));
	CU_ASSERT(!host_mounts_remote(&m, "/home/bob/local/x") && !host_mounts_remote(&m, "/home/bobby"));
	CU_ASSERT(host_mounts_remote(&m, "/home/c d/.ssh"));
	CU_ASSERT(!host_mounts_remote(&m, "/home/over/.netrc")); /* the top one of the stack */
	CU_ASSERT(host_mounts_remote(&none, "/home/alice"));      /* unread: nothing is cheap */
	CU_ASSERT(!host_mounts_remote(NULL, "/net/x"));
	/* path_look(): a link in a local tree into a "remote" mount */
	snprintf(dir, sizeof(dir), "%s/remote-look", t_root);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	snprintf(entry, sizeof(entry), "R%s/nfs", dir);
	CU_ASSERT_EQUAL_FATAL(strv_add(&m.at, entry), 0);
	snprintf(lnk, sizeof(lnk), "%s/home", dir);
	snprintf(tgt, sizeof(tgt), "%s/nfs/bob/../carol", dir);
	CU_ASSERT_EQUAL_FATAL(symlink(tgt, lnk), 0);
	snprintf(tgt, sizeof(tgt), "%s/nfs/carol/.ssh", dir);
	CU_ASSERT_EQUAL(path_look(&m, strcat(strcpy(out, lnk), "/.ssh"), out, &st), LOOK_REMOTE);
	/* not resolved further: nothing there looked at; review45h: but
	 * lexically, no "..", "." or empty component (the sandbox refuses
	 * a denied path with one, and the run with it) */
	CU_ASSERT_STRING_EQUAL(out, tgt);
	snprintf(lnk, sizeof(lnk), "%s/home2", dir);
	snprintf(tgt, sizeof(tgt), "%s/nfs//bob/./x/../.ssh/", dir);
	CU_ASSERT_EQUAL_FATAL(symlink(tgt, lnk), 0);
	snprintf(tgt, sizeof(tgt), "%s/nfs/bob/.ssh", dir);
	CU_ASSERT_EQUAL(path_look(&m, lnk, out, &st), LOOK_REMOTE);
	CU_ASSERT_STRING_EQUAL(out, tgt);
	/* ".." after a link is the parent of where it leads (here: the
	 * "remote" mount, not looked at), after a directory its parent */
	snprintf(lnk, sizeof(lnk), "%s/home/../x", dir);
	CU_ASSERT_EQUAL(path_look(&m, lnk, out, &st), LOOK_REMOTE);
	snprintf(lnk, sizeof(lnk), "%s/sub", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(lnk, 0755), 0);
	snprintf(lnk, sizeof(lnk), "%s/./sub/../", dir);
	CU_ASSERT_EQUAL(path_look(&m, lnk, out, &st), LOOK_LOCAL);
	CU_ASSERT_STRING_EQUAL(out, dir);
	CU_ASSERT(S_ISDIR(st.st_mode));
	snprintf(lnk, sizeof(lnk), "%s/missing", dir);
	CU_ASSERT_EQUAL(path_look(&m, lnk, out, &st), LOOK_NONE);
	strv_free(&m.at);
}

/* review45h: a home of another user on a mount not cheap to look at
 * that an allowRead holds (allowRead: ["/home"], the home on NFS) was
 * left readable whole, its ~/.netrc and ~/.ssh with it; a local home
 * under the same allowRead has its stores denied (round 44). Now its
 * stores are checked one by one, as for one that holds the work. */
static void test_remote_home_allow_read(void)
{
	char home[PATH_MAX], f[PATH_MAX + 16];
	struct strv denied = {0};
	struct run_plan pl;

	memset(&pl, 0, sizeof(pl));
	snprintf(home, sizeof(home), "%s/rhome-ar", t_root);
	CU_ASSERT_EQUAL_FATAL(mkdir(home, 0755), 0);
	snprintf(f, sizeof(f), "%s/.netrc", home);
	CU_ASSERT_EQUAL_FATAL(test_write_file(f, "machine x password y\n", 21), 0);
	CU_ASSERT_EQUAL_FATAL(strv_add(&pl.allow_read, t_root), 0);
	CU_ASSERT_EQUAL(other_user_remote(&pl, home, "/", &denied), 0);
	ROW(denied.n == 0, "a remote home under an allowRead: named as denied whole");
	strv_free(&denied);
	ROW(strv_has(&pl.deny_read, f), "a remote home under an allowRead: its ~/.netrc not denied");
	ROW(!strv_has(&pl.deny_read, home), "a remote home under an allowRead: denied whole");
	plan_free(&pl);
}

/* review45h: a remote home inside another (/home/x -> /home/bob/sub,
 * both on NFS) was skipped as held by the outer one, denied whole; but
 * the outer one in the session's use (root run from /home/bob/proj) is
 * not denied, and the inner one's stores were left readable. */
static void test_remote_home_inside(void)
{
	char outer[PATH_MAX], inner[PATH_MAX + 8], cwd[PATH_MAX + 8], f[PATH_MAX + 24];
	struct strv remote = {0}, denied = {0};
	struct run_plan pl;

	memset(&pl, 0, sizeof(pl));
	snprintf(outer, sizeof(outer), "%s/rhome-out", t_root);
	snprintf(inner, sizeof(inner), "%s/sub", outer);
	snprintf(cwd, sizeof(cwd), "%s/proj", outer);
	CU_ASSERT_EQUAL_FATAL(mkdir(outer, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(inner, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(cwd, 0755), 0);
	snprintf(f, sizeof(f), "%s/.netrc", inner);
	CU_ASSERT_EQUAL_FATAL(test_write_file(f, "machine x password y\n", 21), 0);
	/* the inner one first, as /home's listing may give them */
	CU_ASSERT_EQUAL_FATAL(strv_add(&remote, inner), 0);
	CU_ASSERT_EQUAL_FATAL(strv_add(&remote, outer), 0);
	CU_ASSERT_EQUAL(plan_remote_homes(&pl, &remote, cwd, &denied), 0);
	ROW(denied.n == 0, "a remote home that holds the work: named as denied whole");
	strv_free(&denied);
	ROW(strv_has(&pl.deny_read, f), "a remote home inside one that holds the work: its ~/.netrc not denied");
	ROW(!under_deny_read(&pl, cwd), "a remote home that holds the work: denied");
	plan_free(&pl);
	strv_free(&remote);
}

/* base/rel made: a directory (0755), or with link a symbolic link to it.
 * What mkdir() or symlink() returns; -1 when the path does not fit. */
static int make_at(const char *base, const char *rel, const char *link)
{
	char p[PATH_MAX + 64];
	int n = snprintf(p, sizeof(p), "%s/%s", base, rel);

	if (n < 0 || (size_t)n >= sizeof(p))
		return -1;
	return link == NULL ? mkdir(p, 0755) : symlink(link, p);
}

/* fix46h: the user's own home reached through a link onto a mount not
 * cheap to look at (HOME=/home/alice -> <nfs>/a-link, a link on that
 * mount to <nfs>/a/alice): realpath() of HOME went through both links,
 * path_look() of the candidate /home/alice stops at the mount, and the
 * two differed: the user's own home was taken for another's, denied
 * whole. And a remote candidate that holds the user's home (a shared NFS
 * /home listed as a home itself) is not denied whole: its stores are,
 * where path_look() stops. */
static void test_own_home_remote(void)
{
	char dir[PATH_MAX], nfs[PATH_MAX + 8], home[PATH_MAX + 16], t[PATH_MAX + 32], entry[PATH_MAX + 16];
	struct host_mounts m = {0};
	struct plan_host h = {0};
	struct strv cands = {0}, out = {0}, remote = {0};
	struct own_homes own;
	bool over = false, holds;

	snprintf(dir, sizeof(dir), "%s/own-remote", t_root);
	snprintf(nfs, sizeof(nfs), "%s/nfs", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(nfs, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(nfs, "a", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(nfs, "a/alice", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(nfs, "a-link", "a/alice"), 0);
	snprintf(home, sizeof(home), "%s/alice", dir);
	snprintf(t, sizeof(t), "%s/a-link", nfs);
	CU_ASSERT_EQUAL_FATAL(symlink(t, home), 0);
	snprintf(entry, sizeof(entry), "L/");
	CU_ASSERT_EQUAL_FATAL(strv_add(&m.at, entry), 0);
	snprintf(entry, sizeof(entry), "R%s", nfs);
	CU_ASSERT_EQUAL_FATAL(strv_add(&m.at, entry), 0);
	h.home = home;
	own_homes_get(&own, &m, &h);
	CU_ASSERT_EQUAL_FATAL(strv_add(&cands, home), 0);
	CU_ASSERT_EQUAL_FATAL(strv_add(&cands, nfs), 0); /* holds it */
	CU_ASSERT_EQUAL_FATAL(strv_add(&cands, dir), 0); /* local, holds it: as before */
	CU_ASSERT_EQUAL(other_user_sort(&out, &remote, &m, &own, &cands, &over), 0);
	snprintf(t, sizeof(t), "%s/a-link", nfs);
	ROW(!strv_has(&remote, t) && !strv_has(&out, t), "the user's own home through a link onto NFS: taken for another's");
	ROW(!strv_has(&remote, nfs), "a remote home that holds the user's own: denied whole");
	ROW(strv_has(&out, nfs), "a remote home that holds the user's own: its stores not denied");
	ROW(own_home_is(&own, t, &holds) && !own_home_is(&own, nfs, &holds) && holds, "own_home_is()");
	strv_free(&cands);
	strv_free(&out);
	strv_free(&remote);
	strv_free(&m.at);
}

/* fix46h: path_look() on pathwalk(): a link on the way into a mount not
 * cheap to look at, relative or absolute, "..", "." and "//" on the
 * local part, a path to "/", a file as the last component, a link loop,
 * a file in the middle. */
static void test_path_look_walk(void)
{
	char dir[PATH_MAX], p[PATH_MAX + 32], q[PATH_MAX + 32], out[PATH_MAX], entry[PATH_MAX + 8];
	struct host_mounts m = {0};
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/look-walk", t_root);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(dir, "r", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(dir, "l", NULL), 0);
	snprintf(p, sizeof(p), "%s/l/f", dir);
	CU_ASSERT_EQUAL_FATAL(test_write_file(p, "x", 1), 0);
	snprintf(entry, sizeof(entry), "R%s/r", dir);
	CU_ASSERT_EQUAL_FATAL(strv_add(&m.at, entry), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(dir, "l/rel", "../r/x"), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(dir, "l/loop", "loop"), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(dir, "l/up", ".."), 0);
	/* relative link into the "remote" mount: stopped there */
	snprintf(p, sizeof(p), "%s//l/./rel/.ssh", dir);
	snprintf(q, sizeof(q), "%s/r/x/.ssh", dir);
	ROW(path_look(&m, p, out, &st) == LOOK_REMOTE && strcmp(out, q) == 0, "a relative link onto a remote mount: %s",
	    out);
	/* a link to "..", then a file */
	snprintf(p, sizeof(p), "%s/l/up/l/f", dir);
	snprintf(q, sizeof(q), "%s/l/f", dir);
	ROW(path_look(&m, p, out, &st) == LOOK_LOCAL && strcmp(out, q) == 0 && S_ISREG(st.st_mode),
	    "a link to .., then a file: %s", out);
	snprintf(p, sizeof(p), "%s/l/f/x", dir);
	ROW(path_look(&m, p, out, &st) == LOOK_NONE, "a file in the middle");
	snprintf(p, sizeof(p), "%s/l/loop", dir);
	ROW(path_look(&m, p, out, &st) == LOOK_NONE, "a loop of links");
	ROW(path_look(&m, "/..//./", out, &st) == LOOK_LOCAL && strcmp(out, "/") == 0 && S_ISDIR(st.st_mode),
	    "the root: %s", out);
	ROW(path_look(&m, "relative", out, &st) == LOOK_NONE, "a relative path");
	/* the "remote" mount's own root: not looked at */
	snprintf(p, sizeof(p), "%s/l/../r", dir);
	snprintf(q, sizeof(q), "%s/r", dir);
	ROW(path_look(&m, p, out, &st) == LOOK_REMOTE && strcmp(out, q) == 0, "the remote mount itself: %s", out);
	strv_free(&m.at);
}

/* review46h: other_user_home()'s one listing of a home (fix46h) skipped
 * the rows whose first component it did not list byte for byte; on a
 * case-insensitive home (casefold, vfat, XFS ascii-ci, ZFS) ~bob/.SSH is
 * what the lookup of ~bob/.ssh finds, and Unicode folding finds ASCII
 * letters for others ("\xc5\xbf", U+017F LONG S, for "s"): such a row
 * was not walked, the store not denied. */
static void test_home_entries_fold(void)
{
	char dir[PATH_MAX];
	struct strv names = {0};

	snprintf(dir, sizeof(dir), "%s/home-fold", t_root);
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(dir, ".SSH", NULL), 0);
	CU_ASSERT_EQUAL_FATAL(make_at(dir, "AppDATA", NULL), 0);
	ROW(home_entries(dir, &names), "a home of ASCII names: not listed");
	ROW(home_has_entry(&names, ".ssh/id_rsa") && home_has_entry(&names, "AppData/Roaming/x") &&
		    home_has_entry(&names, ".Ssh"),
	    "a case-insensitive home: ~/.SSH not taken for the row .ssh");
	ROW(!home_has_entry(&names, ".aws/credentials"), "a row whose first component is not listed: walked");
	strv_free(&names);
	CU_ASSERT_EQUAL_FATAL(make_at(dir, ".\xc5\xbf\xc5\xbfh", NULL), 0);
	ROW(!home_entries(dir, &names), "a home with a name not ASCII: listed (Unicode folding unseen)");
	strv_free(&names);
}

TEST_REGISTRAR(cli_plan_register)
{
	CU_pSuite s = test_suite("cli_plan", plan_setup, plan_teardown);

	test_add(s, "plan_env_vars lists every SPEC 7 variable", test_proxy_env);
	test_add(s, "fix45h: homes on mounts not cheap to look at: mountinfo types, longest mount, path_look",
		 test_remote_mounts);
	test_add(s, "fix46h: the user's own home through a link onto a remote mount: not another's",
		 test_own_home_remote);
	test_add(s, "fix46h: path_look() on pathwalk(): links, dots, root, loops", test_path_look_walk);
	test_add(s, "review46h: a home's listing: case folded, a name not ASCII walks every row",
		 test_home_entries_fold);
	test_add(s, "review45h: a remote home an allowRead holds: its stores denied one by one",
		 test_remote_home_allow_read);
	test_add(s, "review45h: a remote home inside another that holds the work: its stores denied",
		 test_remote_home_inside);
	test_add(s, "plan_build: home rows, protections, environment", test_plan_build);
	test_add(s, "plan_build: trust and resolver files over the system paths", test_plan_trust);
	test_add(s, "plan_ctl_paths: the workspace rows", test_ctl_paths);
	test_add(s, "plan_relative_config: the config-location table and the suffix rule", test_relative_config);
	test_add(s, "the copies beside a hidden file: .env.swn, .env_BACKUP_N, creds_LOCAL_N.json; not .envrc, "
		 ".env.example", test_copy_names);
	test_add(s, "copies editors keep in the home named by the file's path (%home%u%p%.env.swp, "
		 "!home!u!p!.env~): by the path, not a neighbour's",
		 test_central_copy_names);
}
