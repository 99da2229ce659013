/*
 * test_credstores.c - credential stores and secrets in the environment,
 * end to end (SPEC §3.3, §3.6): the real `passavant run` binary under the
 * embedded-like policy "work.yaml", a fake HOME, and a script that tries
 * to read what it must not.
 *
 *  - stores moved by the environment: with XDG_CONFIG_HOME, DOCKER_CONFIG,
 *    AWS_SHARED_CREDENTIALS_FILE, KUBECONFIG (a list), GH_CONFIG_DIR,
 *    GNUPGHOME, CARGO_HOME, npm_config_userconfig and HISTFILE pointing
 *    elsewhere, the store there is unreadable; a plain file beside it is
 *    not;
 *  - stores the table did not list (histories, keys, registries, service
 *    CLIs, desktop applications) are unreadable;
 *  - the host's own secrets (/etc/shadow, /root) are unreadable when
 *    passavant runs as root; otherwise `check` lists them;
 *  - variables holding sessions, authorizations, webhook URLs, URLs with a
 *    credential in their query and registry auth are dropped, and the
 *    masked variable, the proxy and the trust variables still reach the
 *    command;
 *  - stores and denyRead paths the host creates while the command runs
 *    stay unreadable (Landlock); files that existed, and new files in
 *    directories that existed, stay readable; with the test hook that
 *    plays a kernel without Landlock, the store is readable and run warns.
 *
 * Suite "credstores". Without user namespaces every test is skipped with
 * the reason printed, unless PASSAVANT_SANDBOX_MUST_WORK=1. The tree lives
 * under /var/tmp: the sandbox's /tmp is private.
 */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/attrib.h"
#include "tests/support/sbxrun.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

#define RUN_TIMEOUT_MS 60000

static bool skip;           /* no user namespaces */
static bool ready;          /* fixtures up */
static char *root;          /* /var/tmp/pv-cst.XXXXXX */
static unsigned nscript;
static char real_token[41]; /* ghp_ + 36, the masked variable's real value */

/* root/rel into buf (PATH_MAX bytes); "" if it does not fit. */
static char *at(char *buf, const char *rel)
{
	return test_at(buf, root, rel);
}

/* mkdir -p of the directory part of rel under root, then rel holding
 * "PLANTED-" rel. */
static int plant(const char *rel)
{
	char buf[PATH_MAX], text[PATH_MAX + 16], *p;

	at(buf, rel);
	for (p = buf + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	snprintf(text, sizeof(text), "PLANTED-%s\n", rel);
	if (test_write_file(buf, text, strlen(text)) < 0)
		return -1;
	return chmod(buf, 0644);
}

/* Stores moved by variables (relative to root), and the variables. */
static const char *const moved[] = {
	"xdg/gh/hosts.yml", "dock/config.json", "x/awscreds", "x/kc1", "x/kc2", "ghd/hosts.yml",
	"gpg/private-keys-v1.d/k.key", "cargo/credentials.toml", "x/npmrc", "x/hist",
	"xdg/containers/auth.json", "xdg/git/credentials",
};

/* Stores the table did not list before, under the fake HOME. */
static const char *const listed[] = {
	"home/.bash_history", "home/.zsh_history", "home/.local/share/fish/fish_history",
	"home/.psql_history", "home/.python_history", "home/.node_repl_history",
	"home/.config/sops/age/keys.txt", "home/.minikube/profiles/client.key",
	"home/.ollama/id_ed25519", "home/.cloudflared/cert.pem", "home/.pki/nssdb/key4.db",
	"home/.pip/pip.conf", "home/.config/pip/pip.conf", "home/.config/uv/uv.toml",
	"home/.config/pypoetry/auth.toml", "home/.yarnrc", "home/.bunfig.toml",
	"home/.composer/auth.json", "home/.config/composer/auth.json", "home/.bundle/config",
	"home/.nuget/NuGet/NuGet.Config", "home/.ivy2/.credentials", "home/.sbt/.credentials",
	"home/.terraformrc", "home/.config/helm/repositories.yaml", "home/.fly/config.yml",
	"home/.wrangler/config/default.toml", "home/.config/stripe/config.toml",
	"home/.mc/config.json", "home/.boto", "home/.config/openstack/clouds.yaml",
	"home/.config/ngrok/ngrok.yml", "home/.supabase/access-token", "home/.vercel/auth.json",
	"home/.config/hcloud/cli.toml", "home/.talos/config", "home/_netrc", "home/.my.cnf",
	"home/.config/Slack/Cookies", "home/.config/Bitwarden CLI/data.json",
	"home/.config/Code/User/globalStorage/state.vscdb", "home/.aws/sso/cache/t.json",
	/* round 31 */
	"home/.msmtprc", "home/.purple/accounts.xml", "home/.config/filezilla/sitemanager.xml",
	"home/.local/share/TelegramDesktop/tdata/key_datas", "home/.config/Signal/config.json",
	"home/.config/syncthing/key.pem", "home/.wakatime.cfg", "home/.config/tea/config.yml",
	"home/.snowsql/config", "home/.config/aerc/accounts.conf", "home/.weechat/sec.conf", "home/.muttrc",
	"home/.cert/nm-openvpn/k.key", "home/.config/hexchat/servlist.conf", "home/.sentryclirc",
	"home/.config/remmina/remmina.pref", "home/.config/scw/config.yaml", "home/.irssi/config",
	/* round 32: per-application homes (snap, flatpak), more browsers,
	 * wallets, JetBrains' store, model CLIs' keys, chezmoi's copies */
	"home/snap/firefox/common/.mozilla/firefox/p.default/logins.json",
	"home/snap/chromium/common/chromium/Default/Login Data", "home/snap/gh/current/.config/gh/hosts.yml",
	"home/.var/app/org.mozilla.firefox/.mozilla/firefox/p.default/key4.db",
	"home/.var/app/com.slack.Slack/config/Slack/Cookies", "home/.config/vivaldi/Default/Login Data",
	"home/.config/opera/Login Data", "home/.librewolf/p.default/logins.json",
	"home/.local/share/kwalletd/kdewallet.kwl", "home/.local/share/atuin/history.db",
	"home/.bitcoin/wallets/w/wallet.dat", "home/.electrum/wallets/default_wallet",
	"home/.ethereum/keystore/UTC--k", "home/.config/solana/id.json", "home/.config/Exodus/exodus.wallet/s",
	"home/.config/Ledger Live/app.json", "home/.config/JetBrains/IntelliJIdea2025.1/c.kdbx",
	"home/.config/JetBrains/IntelliJIdea2025.1/c.pwd", "home/.local/share/opencode/auth.json",
	"home/.config/io.datasette.llm/keys.json", "home/.continue/config.yaml", "home/.aider.conf.yml",
	"home/.qwen/oauth_creds.json", "home/.env", "home/.local/share/chezmoi/private_dot_ssh/private_id_ed25519",
	/* round 38: access and signing keys, platform CLIs, HTTP and
	 * database clients */
	"home/.tsh/keys/proxy.example.com/alice", "home/.step/secrets/intermediate_ca_key", "home/.chef/client.pem",
	"home/.minisign/minisign.key", "home/.docker/trust/private/k.key", "home/.edgerc", "home/.vault_pass.txt",
	"home/.awsvault/keys/k", "home/.config/keybase/secretkeys.mpack", "home/.config/borg/keys/repo_key",
	"home/.config/fastly/config.toml", "home/.jfrog/jfrog-cli.conf.v6", "home/.mcli/config.json",
	"home/.passwd-s3fs", "home/.expo/state.json", "home/.sfdx/alias.json", "home/.sf/config.json",
	"home/.civo.json", "home/.config/upctl.yaml", "home/.twilio-cli/config.json", "home/.okta/okta.yaml",
	"home/.modal.toml", "home/.megarc", "home/.netlify/config.json", "home/.config/dart/pub-credentials.json",
	"home/.pub-cache/credentials.json", "home/.config/httpie/sessions/api.example.com/s.json",
	"home/.config/Postman/Partitions/x", "home/.config/Insomnia/insomnia.Environment.db",
	"home/.local/share/DBeaverData/workspace6/General/.dbeaver/credentials-config.json",
	"home/.pgadmin/pgadmin4.db",
	/* round 39: API clients, CI agents and CLIs, password managers,
	 * mount credentials, VM keys, VS Code's globalStorage under its
	 * other names, chat applications */
	"home/.config/bruno/environment-secrets.json", "home/.saml2aws", "home/.buildkite-agent/buildkite-agent.cfg",
	"home/.config/bk.yaml", "home/.gitlab-runner/config.toml", "home/.config/argocd/config", "home/.flyrc",
	"home/.spin/config", "home/.cf/config.json", "home/.doppler/.doppler.yaml", "home/.infisical/infisical-config.json",
	"home/.local/share/lpass/session_privatekey", "home/.local/share/rbw/device_id",
	"home/.local/share/gopass/stores/root/.age-ids", "home/.authinfo", "home/.smbcredentials",
	"home/.config/Lens/kubeconfigs/k", "home/.lima/_config/user", "home/.gitkraken/profiles/p/profile",
	"home/.config/GitHub Desktop/Cookies", "home/.config/Code - Insiders/User/globalStorage/state.vscdb",
	"home/.config/VSCodium/User/globalStorage/state.vscdb", "home/.config/Windsurf/User/globalStorage/state.vscdb",
	"home/.vscode-server/data/User/globalStorage/state.vscdb", "home/.config/Element/Local Storage/leveldb/x",
	"home/.config/teams-for-linux/Cookies",
	/* round 39: editors' registers, shells', REPLs' and database
	 * clients' histories the category missed */
	"home/.viminfo", "home/.local/state/nvim/shada/main.shada", "home/.local/share/nvim/shada/main.shada",
	"home/.bash_eternal_history", "home/.config/nushell/history.txt", "home/.local/share/nushell/history.sqlite3",
	"home/.local/share/xonsh/xonsh-1.json", "home/.local/state/elvish/db.bolt", "home/.elvish/db",
	"home/.histdb/zsh-history.db", "home/.local/share/mcfly/history.db",
	"home/.ipython/profile_default/history.sqlite", "home/.pry_history", "home/.ghc/ghci_history",
	"home/.julia/logs/repl_history.jl", "home/.ts_node_repl_history", "home/.cache/deno/deno_history.txt",
	"home/.scala_history", "home/.octave_hist", "home/.gdb_history", "home/.Rhistory",
	"home/.config/pgcli/history", "home/.mycli-history", "home/.config/litecli/history",
	"home/.clickhouse-client-history", "home/.cassandra/cqlsh_history", "home/.influx_history",
	"home/.duckdb_history", "home/.usql_history",
};

static int suite_init(void)
{
	char buf[PATH_MAX];
	int gate;

	if (ready || skip)
		return 0;
	gate = test_sandbox_gate("credstores");
	if (gate <= 0) {
		skip = gate == 0;
		return gate;
	}
	root = strdup("/var/tmp/pv-cst.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0 || test_ghp_token(real_token) < 0)
		return -1;
	if (plant("work/README") < 0 || plant("x/plain.txt") < 0 || plant("scripts/.keep") < 0)
		return -1;
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++)
		if (plant(moved[i]) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(listed) / sizeof(listed[0]); i++)
		if (plant(listed[i]) < 0)
			return -1;
	snprintf(buf, sizeof(buf), "%s/work.yaml", root);
	{
		static const char pol[] = "credentials:\n  envVars:\n"
					  "    - {name: GH_TOKEN, mode: mask}\n";
		if (test_write_file(buf, pol, sizeof(pol) - 1) < 0)
			return -1;
	}
	snprintf(buf, sizeof(buf), "%s/late.yaml", root);
	{
		static const char pol[] = "filesystem:\n  allowWrite: [\".\"]\n"
					  "  denyRead: [\"~/later.txt\"]\n  allowRead: [\"~/.docker\"]\n";
		if (test_write_file(buf, pol, sizeof(pol) - 1) < 0)
			return -1;
	}
	ready = true;
	return 0;
}

static int suite_cleanup(void)
{
	test_root_done(&root, &ready);
	return 0;
}

/* One `passavant run` in root/work with HOME=root/home, PATH=TEST_SAFE_PATH,
 * the extra NAME=value entries of env (NULL-terminated, may be NULL), and
 * script run by sh. Returns the exit status. */
static int run_cst(const char *const *env, const char *script, char **out, char **err)
{
	char home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX];
	struct test_sbx_run r = {at(work, "work"), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env, NULL};

	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	if (test_write_file(sc, script, strlen(script)) < 0)
		return -1;
	return test_sbx_run(&r, out, err, RUN_TIMEOUT_MS);
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

static void show(int st, const char *out, const char *err)
{
	test_show_run(st, out, err);
}

/* A script that cats root/rel for each of rels, then "done". */
static void cat_script(char *script, size_t size, const char *const *rels, size_t n)
{
	size_t off = 0;

	for (size_t i = 0; i < n && off < size; i++)
		off += (size_t)snprintf(script + off, size - off, "cat '%s/%s' 2>/dev/null; echo\n",
					root, rels[i]);
	if (off < size)
		snprintf(script + off, size - off, "cat '%s/x/plain.txt'; echo done\n", root);
}

/* Finding 1: a store is denied where the environment moves it. */
static void test_moved_stores(void)
{
	char e[9][PATH_MAX + 64], script[16384], *out = NULL, *err = NULL;
	const char *env[10];
	int st;

	SKIP_IF_NEEDED();
	snprintf(e[0], sizeof(e[0]), "XDG_CONFIG_HOME=%s/xdg", root);
	snprintf(e[1], sizeof(e[1]), "DOCKER_CONFIG=%s/dock", root);
	snprintf(e[2], sizeof(e[2]), "AWS_SHARED_CREDENTIALS_FILE=%s/x/awscreds", root);
	snprintf(e[3], sizeof(e[3]), "KUBECONFIG=%s/x/kc1:%s/x/kc2", root, root);
	snprintf(e[4], sizeof(e[4]), "GH_CONFIG_DIR=%s/ghd", root);
	snprintf(e[5], sizeof(e[5]), "GNUPGHOME=%s/gpg", root);
	snprintf(e[6], sizeof(e[6]), "CARGO_HOME=%s/cargo", root);
	snprintf(e[7], sizeof(e[7]), "npm_config_userconfig=%s/x/npmrc", root);
	snprintf(e[8], sizeof(e[8]), "HISTFILE=%s/x/hist", root);
	for (size_t i = 0; i < 9; i++)
		env[i] = e[i];
	env[9] = NULL;
	cat_script(script, sizeof(script), moved, sizeof(moved) / sizeof(moved[0]));
	st = run_cst(env, script, &out, &err);
	ROW(st == 0 && test_has(out, "done") && test_has(out, "PLANTED-x/plain.txt"),
	    "moved stores: status %d, or the plain file beside them was not readable", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
		char planted[PATH_MAX];
		snprintf(planted, sizeof(planted), "PLANTED-%s", moved[i]);
		ROW(!test_has(out, planted), "%s/%s (a moved store) was readable in the sandbox", root,
		    moved[i]);
	}
	free(out);
	free(err);
}

/* Finding 2: stores the table did not list. */
static void test_listed_stores(void)
{
	char script[32768], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	cat_script(script, sizeof(script), listed, sizeof(listed) / sizeof(listed[0]));
	st = run_cst(NULL, script, &out, &err);
	ROW(st == 0 && test_has(out, "done"), "stores: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(listed) / sizeof(listed[0]); i++) {
		char planted[PATH_MAX];
		snprintf(planted, sizeof(planted), "PLANTED-%s", listed[i]);
		ROW(!test_has(out, planted), "~/%s was readable in the sandbox", listed[i] + 5);
	}
	free(out);
	free(err);
}

/*
 * More of what only root reads, as rows name them (round 7 of the attack:
 * a root-run sandbox keeps uid 0, the owner): a file the test plants in
 * /var/lib/private (made, 0700, when missing, and removed after) reads
 * empty, and so does every such path this host has, files empty and
 * directories without entries.
 */
static void host_secrets_more(void)
{
	static const char *const paths[] = {"/var/cache/debconf/passwords.dat", "/var/log/btmp",
					    "/var/log/journal", "/var/lib/private", "/var/lib/cloud",
					    "/etc/netplan", "/var/spool/cron", "/var/lib/postgresql",
					    "/var/lib/mysql", "/var/lib/NetworkManager", NULL};
	char planted[128], script[4096], *out = NULL, *err = NULL;
	size_t n = 0;
	bool made = false;
	struct stat sb;
	int st;

	if (stat("/var/lib/private", &sb) != 0) {
		CU_ASSERT_FATAL(mkdir("/var/lib/private", 0700) == 0);
		made = true;
	}
	snprintf(planted, sizeof(planted), "/var/lib/private/pv-credstores-%ld", (long)getpid());
	CU_ASSERT_FATAL(test_write_file(planted, "ROOT-ONLY-SECRET\n", 17) == 0);
	CU_ASSERT(chmod(planted, 0600) == 0);
	n += (size_t)snprintf(script + n, sizeof(script) - n, "echo planted:$(cat %s 2>/dev/null | wc -c)\n",
			      planted);
	for (size_t i = 0; paths[i] != NULL; i++)
		n += (size_t)snprintf(script + n, sizeof(script) - n,
				      "if [ -d %1$s ]; then echo %1$s:$(ls -A %1$s 2>/dev/null | wc -l); "
				      "elif [ -e %1$s ]; then echo %1$s:$(cat %1$s 2>/dev/null | wc -c); fi\n",
				      paths[i]);
	st = run_cst(NULL, script, &out, &err);
	ROW(st == 0 && test_has(out, "planted:0\n"), "a root-only file in /var/lib/private was readable: %s",
	    test_nz(out));
	for (size_t i = 0; paths[i] != NULL; i++) {
		char want[128];

		snprintf(want, sizeof(want), "%s:", paths[i]);
		if (test_has(out, want)) {
			snprintf(want, sizeof(want), "%s:0\n", paths[i]);
			ROW(test_has(out, want), "%s showed content in the sandbox: %s", paths[i], test_nz(out));
		}
	}
	CU_ASSERT(unlink(planted) == 0);
	if (made)
		CU_ASSERT(rmdir("/var/lib/private") == 0);
	free(out);
	free(err);
}

/* mkdir -p of path's parent, remembering in *made the first directory
 * it had to make (NULL when none; malloc'd), then path with text unless
 * it exists. Returns 1 when it wrote path, 0 when path was there, -1 on
 * an error. */
static int plant_abs(const char *path, const char *text, char **made)
{
	char buf[PATH_MAX];
	struct stat sb;

	*made = NULL;
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	for (char *p = buf + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(buf, 0700) == 0) {
			if (*made == NULL && (*made = strdup(buf)) == NULL)
				return -1;
		} else if (errno != EEXIST) {
			return -1;
		}
		*p = '/';
	}
	if (lstat(path, &sb) == 0)
		return 0;
	if (test_write_file(path, text, strlen(text)) < 0 || chmod(path, 0600) < 0)
		return -1;
	return 1;
}

/*
 * Undoes plant_abs(): unlinks the file if it wrote it (wrote == 1), then
 * removes the directories it made, innermost first, up to made (which may
 * be NULL). Frees made.
 */
static void unplant_abs(const char *path, int wrote, char *made)
{
	char dir[PATH_MAX];

	if (wrote == 1)
		CU_ASSERT(unlink(path) == 0);
	if (made != NULL) {
		snprintf(dir, sizeof(dir), "%s", path);
		for (char *sl = strrchr(dir, '/'); sl != NULL && strlen(dir) > strlen(made); sl = strrchr(dir, '/')) {
			*sl = '\0';
			if (strlen(dir) >= strlen(made))
				CU_ASSERT(rmdir(dir) == 0 || errno == ENOTEMPTY);
		}
	}
	free(made);
}

/*
 * Round 32: services' own secret stores a root session read (GitLab,
 * Jenkins, BIND, Ceph, LDAP, nginx, Proxmox, Vault, Grafana, exim). A
 * stand-in is planted where the host has none (its directories made and
 * removed after); a file the host has is only read. Each reads empty.
 */
static void host_service_secrets(void)
{
	static const char *const paths[] = {
		"/etc/gitlab/gitlab-secrets.json", "/var/lib/jenkins/secrets/master.key",
		"/etc/bind/rndc.key", "/etc/ceph/ceph.client.admin.keyring", "/etc/ldap.secret",
		"/etc/chrony/chrony.keys", "/etc/nginx/ssl/site.key", "/etc/vault.d/vault.hcl",
		"/etc/consul.d/consul.hcl", "/var/lib/grafana/grafana.db", "/etc/exim4/passwd.client",
		"/etc/pve/priv/authkey.key",
	};
	enum { NP = sizeof(paths) / sizeof(paths[0]) };
	char *made[NP], script[8192], *out = NULL, *err = NULL;
	int wrote[NP], st;
	size_t n = 0;

	for (size_t i = 0; i < NP; i++) {
		wrote[i] = plant_abs(paths[i], "ROOT-ONLY-SERVICE-SECRET\n", &made[i]);
		ROW(wrote[i] >= 0, "could not plant %s", paths[i]);
		n += (size_t)snprintf(script + n, sizeof(script) - n, "echo %1$s:$(cat %1$s 2>/dev/null | wc -c)\n",
				      paths[i]);
	}
	st = run_cst(NULL, script, &out, &err);
	ROW(st == 0, "service secrets: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < NP; i++) {
		char want[PATH_MAX + 8];

		snprintf(want, sizeof(want), "%s:0\n", paths[i]);
		ROW(test_has(out, want), "%s was readable by root in the sandbox: %s", paths[i], test_nz(out));
	}
	for (size_t i = 0; i < NP; i++)
		unplant_abs(paths[i], wrote[i], made[i]);
	free(out);
	free(err);
}

/*
 * Round 33 of the attack: under WSL, the Windows home at /mnt/c/Users/NAME
 * holds the same stores as $HOME (.ssh, .aws, the GitHub CLI's token in
 * AppData), readable by the user's uid; nothing denied them. Planted at
 * /mnt/pvcstN/Users/pvwin (root: /mnt is root's), with a project there:
 * the stores, AppData and a PowerShell profile are denied, the project
 * stays writable, and a link named like "All Users" is no home.
 */
/* mkdir -p path (each component 0755). 0 or -1. */
static int mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static void test_windows_homes(void)
{
	char base[64], home[128], proj[160], pol[PATH_MAX], *out = NULL, *err = NULL;
	static const char *const files[] = {".aws/credentials", ".ssh/id_ed25519", "AppData/Roaming/GitHub CLI/hosts.yml",
					    "AppData/Local/Google/Chrome/User Data/Default/Login Data",
					    "Documents/WindowsPowerShell/Microsoft.PowerShell_profile.ps1"};
	char script[4096];
	size_t n = 0;
	int st;

	SKIP_IF_NEEDED();
	if (geteuid() != 0) {
		TEST_SKIP("not root: cannot make /mnt/X/Users for the Windows home");
		return;
	}
	snprintf(base, sizeof(base), "/mnt/pvcst%d", (int)getpid());
	snprintf(home, sizeof(home), "%s/Users/pvwin", base);
	snprintf(proj, sizeof(proj), "%s/proj", home);
	CU_ASSERT_EQUAL_FATAL(mkdirs(proj), 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[512], dir[512];

		snprintf(path, sizeof(path), "%s/%s", home, files[i]);
		snprintf(dir, sizeof(dir), "%s", path);
		*strrchr(dir, '/') = '\0';
		CU_ASSERT_EQUAL(mkdirs(dir), 0);
		CU_ASSERT(test_write_file(path, "WINDOWS-HOME-SECRET\n", 20) == 0);
		n += (size_t)snprintf(script + n, sizeof(script) - n,
				      "echo \"%1$s:$(cat '%2$s/%1$s' 2>/dev/null | wc -c)\"\n", files[i], home);
	}
	{
		char link[PATH_MAX];

		snprintf(link, sizeof(link), "%s/Users/All Users", base);
		CU_ASSERT_EQUAL(symlink(home, link), 0);
	}
	n += (size_t)snprintf(script + n, sizeof(script) - n,
			      "echo pwsh:$(echo x 2>/dev/null >> '%s/%s' && echo written)\n"
			      "echo mine > here.txt && echo proj:$(cat here.txt)\n",
			      home, files[4]);
	{
		char sc[PATH_MAX], hh[PATH_MAX];
		/* Run in the Windows home itself, writable: the stores and
		 * the profile are denied in a writable tree too. */
		struct test_sbx_run r = {home, at(hh, "home"), NULL, at(pol, "scripts/win.yaml"), sc, NULL, NULL};
		static const char wpol[] = "filesystem:\n  allowWrite: [\".\"]\n";

		CU_ASSERT_EQUAL_FATAL(test_write_file(pol, wpol, sizeof(wpol) - 1), 0);
		snprintf(sc, sizeof(sc), "%s/scripts/win.sh", root);
		CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
		st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	}
	ROW(st == 0, "Windows home: status %d", st);
	if (st != 0)
		show(st, out, err);
	/* The profile is only kept from being written. */
	for (size_t i = 0; i + 1 < sizeof(files) / sizeof(files[0]); i++) {
		char want[PATH_MAX];

		snprintf(want, sizeof(want), "%s:0\n", files[i]);
		ROW(test_has(out, want), "the Windows home's %s was readable: %s", files[i], test_nz(out));
	}
	ROW(test_has(out, "pwsh:\n"), "the PowerShell profile was written: %s", test_nz(out));
	ROW(test_has(out, "proj:mine\n"), "the project in the Windows home is not writable: %s", test_nz(out));
	test_rmtree(base);
	free(out);
	free(err);
	out = err = NULL;
	/* WSL's drives elsewhere: [automount] root = /X/ in /etc/wsl.conf
	 * (the review of round 33: only /mnt was looked at). Only on a
	 * machine without a wsl.conf of its own. */
	if (access("/etc/wsl.conf", F_OK) != 0) {
		char conf[128], key[256], sc[PATH_MAX], hh[PATH_MAX], wpol[PATH_MAX];
		struct test_sbx_run r = {root, at(hh, "home"), NULL, at(wpol, "work.yaml"), sc, NULL, NULL};

		snprintf(base, sizeof(base), "/pvwsl%d", (int)getpid());
		snprintf(conf, sizeof(conf), "[boot]\nsystemd=true\n[automount]\n  root = %s/\n", base);
		snprintf(home, sizeof(home), "%s/c/Users/pvwin", base);
		snprintf(key, sizeof(key), "%s/.aws", home);
		CU_ASSERT_EQUAL_FATAL(mkdirs(key), 0);
		snprintf(key, sizeof(key), "%s/.aws/credentials", home);
		CU_ASSERT(test_write_file(key, "WINDOWS-HOME-SECRET\n", 20) == 0);
		CU_ASSERT_EQUAL_FATAL(test_write_file("/etc/wsl.conf", conf, strlen(conf)), 0);
		snprintf(script, sizeof(script), "echo \"aws:$(cat '%s' 2>/dev/null | wc -c)\"\n", key);
		snprintf(sc, sizeof(sc), "%s/scripts/wsl.sh", root);
		CU_ASSERT_EQUAL(test_write_file(sc, script, strlen(script)), 0);
		st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
		CU_ASSERT(unlink("/etc/wsl.conf") == 0);
		test_rmtree(base);
		ROW(st == 0 && test_has(out, "aws:0\n"),
		    "a Windows home under wsl.conf's automount root was readable: status %d, %s", st, test_nz(out));
	}
	free(out);
	free(err);
}

/* Finding 3: the host's own secrets. Run by root, /etc/shadow and /root
 * (HOME is elsewhere) show nothing; run by anyone, `check` lists them. */
static void test_host_secrets(void)
{
	char pol[PATH_MAX], home[PATH_MAX + 8], *out = NULL, *err = NULL;
	char *argv[] = {"env", "-i", home, "PATH=" TEST_SAFE_PATH, (char *)test_passavant_bin(), "check",
			"-p", at(pol, "work.yaml"), NULL};
	struct stat st_shadow;
	int st;

	SKIP_IF_NEEDED();
	snprintf(home, sizeof(home), "HOME=%s/home", root);
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "\"/etc/shadow\"") && test_has(out, "\"/etc/gshadow\"") &&
		    test_has(out, "\"/etc/ssl/private\"") && test_has(out, "\"/root\""),
	    "check does not list the host's secrets: status %d: %s", st, out ? out : "");
	ROW(test_has(out, "\"/etc/gitlab\"") && test_has(out, "\"/var/lib/jenkins/secrets\"") &&
		    test_has(out, "\"/etc/ceph\"") && test_has(out, "\"/etc/pve/priv\"") &&
		    test_has(out, "\"/etc/nginx/ssl\""),
	    "check does not list the services' secret stores (round 32)");
	free(out);
	free(err);
	out = err = NULL;
	if (geteuid() != 0 || stat("/etc/shadow", &st_shadow) != 0) {
		fprintf(stderr, "credstores: not root or no /etc/shadow: the in-sandbox part skipped\n");
		return;
	}
	st = run_cst(NULL,
		     "echo shadow:$(head -c 5 /etc/shadow 2>/dev/null | wc -c)\n"
		     "echo gshadow:$(head -c 5 /etc/gshadow 2>/dev/null | wc -c)\n"
		     "echo root:$(ls -A /root 2>/dev/null | wc -l)\n",
		     &out, &err);
	ROW(st == 0, "host secrets: status %d", st);
	if (st != 0)
		show(st, out, err);
	ROW(test_has(out, "shadow:0\n"), "/etc/shadow was readable by root in the sandbox: %s",
	    out ? out : "");
	ROW(!test_has(out, "gshadow:5\n"), "/etc/gshadow was readable by root in the sandbox");
	ROW(test_has(out, "root:0\n"), "/root was listable in the sandbox: %s", out ? out : "");
	free(out);
	free(err);
	out = err = NULL;
	host_secrets_more();
	host_service_secrets();
}

/*
 * Round 42 of the attack: run as an ordinary user (the mode the docs
 * recommend), the command kept what the user reads on the host beyond
 * its home: the logs its supplementary group reads (adm, Ubuntu's first
 * user's; an unprivileged user namespace cannot drop a group, setgroups
 * is denied there), the core dumps of its own crashed processes
 * (systemd-coredump's ACL, apport's files in the user's name) and its
 * mailbox. As uid 65534 with group adm (4 when the host has none):
 * each planted file is read outside the sandbox (the control) and
 * reads empty inside; the directories the test made go after.
 */
static void test_user_logs_cores(void)
{
	static const char *const dirs[] = {"/var/log", "/var/lib/systemd/coredump", "/var/crash",
					   "/var/lib/apport/coredump", "/var/mail"};
	enum { NP = sizeof(dirs) / sizeof(dirs[0]) };
	char paths[NP][128], *made[NP], h[PATH_MAX], bin[PATH_MAX], cmd[NP * 128 + 4 * PATH_MAX];
	char *out = NULL, *err = NULL, *argv[] = {"sh", "-c", cmd, NULL};
	int wrote[NP], rc;
	unsigned gid = 4;
	size_t n = 0;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0) {
		TEST_SKIP("an ordinary user's logs and core dumps: needs root and setpriv");
		return;
	}
	{
		struct group *gr = getgrnam("adm");

		if (gr != NULL)
			gid = (unsigned)gr->gr_gid;
	}
	for (size_t i = 0; i < NP; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/pv-cst42-%ld-%zu", dirs[i], (long)getpid(), i);
		wrote[i] = plant_abs(paths[i], "USER-READABLE-HOST-SECRET\n", &made[i]);
		ROW(wrote[i] == 1, "could not plant %s", paths[i]);
		if (made[i] != NULL) {
			/* world-searchable, as the host's own are */
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%s", paths[i]);
			for (char *sl = strrchr(dir, '/'); sl != NULL && strlen(dir) > strlen(made[i]);
			     sl = strrchr(dir, '/')) {
				*sl = '\0';
				CU_ASSERT(chmod(dir, 0755) == 0);
			}
		}
		/* the log by the group, the rest as the user's own */
		CU_ASSERT(i == 0 ? chown(paths[i], 0, gid) == 0 && chmod(paths[i], 0640) == 0
				 : chown(paths[i], 65534, 0) == 0 && chmod(paths[i], 0400) == 0);
	}
	CU_ASSERT_FATAL(mkdirs(at(h, "u42/proj")) == 0);
	(void)at(h, "u42");
	(void)at(bin, "u42/pv");
	n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
			      "cp '%2$s' '%3$s' && chown -R 65534:65534 '%1$s' || exit 9; "
			      "cd '%1$s/proj' && for f in",
			      h, test_passavant_bin(), bin);
	for (size_t i = 0; i < NP; i++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", paths[i]);
	snprintf(cmd + n, sizeof(cmd) - n,
		 "; do printf 'outside %%s:%%s\\n' \"$f\" \"$(setpriv --reuid=65534 --regid=65534 --groups=%2$u "
		 "cat \"$f\" 2>/dev/null | wc -c)\"; done; "
		 "env -i HOME='%1$s' PATH=/usr/bin:/bin TMPDIR=/tmp setpriv --reuid=65534 --regid=65534 "
		 "--groups=%2$u '%3$s' run -q -- sh -c "
		 "'for f in \"$@\"; do printf \"inside %%s:%%s\\n\" \"$f\" \"$(cat \"$f\" 2>/dev/null | wc -c)\"; "
		 "done; echo started' sh",
		 h, gid, bin);
	n = strlen(cmd);
	for (size_t i = 0; i < NP; i++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", paths[i]);
	snprintf(cmd + n, sizeof(cmd) - n, "; echo status=$?");
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "started") && test_has(out, "status=0\n"), "as uid 65534: %d, %s %s", rc,
	    test_nz(out), test_nz(err));
	for (size_t i = 0; i < NP; i++) {
		char want[sizeof(paths) + 32];

		snprintf(want, sizeof(want), "outside %s:26\n", paths[i]);
		ROW(test_has(out, want), "the control: uid 65534 could not read %s outside: %s", paths[i],
		    test_nz(out));
		snprintf(want, sizeof(want), "inside %s:0\n", paths[i]);
		ROW(test_has(out, want), "%s (the user's through %s) was readable in the sandbox: %s", paths[i],
		    i == 0 ? "group adm" : "its owner", test_nz(out));
	}
	for (size_t i = 0; i < NP; i++)
		unplant_abs(paths[i], wrote[i], made[i]);
	free(out);
	free(err);
}

/*
 * Review of round 42, F1's family by another way: a group the user is in
 * grants what the sandbox should not have. The sandbox's /dev binds no
 * disk, input, tty or video node, but the host's tree is bound whole and
 * a device node on any of its file systems (a chroot's or a build root's
 * /dev, a devtmpfs bound for a container) opened as on the host: as uid
 * 65534 with group disk a root:disk 0640 node read the device (here
 * /dev/random's numbers, as the test's stand-in for a disk), a root-run
 * command any node. Controls: each read outside, and the sandbox's own
 * /dev (urandom, a new pty) still working.
 */
static void test_device_nodes(void)
{
	char dir[] = "/var/tmp/pv-cst-dev.XXXXXX", node[64], wnode[64], h[PATH_MAX], bin[PATH_MAX];
	char cmd[8 * PATH_MAX], *out = NULL, *err = NULL;
	static const char probe[] =
		"printf 'grp:%%s\\n' \"$(head -c 16 %1$s 2>/dev/null | wc -c)\"; "
		"(echo x > %2$s) 2>/dev/null; echo wr=$?; "
		"printf 'own:%%s\\n' \"$(head -c 16 /dev/urandom | wc -c)\"; "
		"python3 -c 'import os,pty; m,s=pty.openpty(); print(\"pty\", os.ttyname(s)[:9])'";
	char inner[1024], script[1200];
	unsigned gid = 6;
	int rc;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0) {
		TEST_SKIP("device nodes outside /dev: needs root and setpriv");
		return;
	}
	{
		struct group *gr = getgrnam("disk");

		if (gr != NULL)
			gid = (unsigned)gr->gr_gid;
	}
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL && chmod(dir, 0755) == 0);
	snprintf(node, sizeof(node), "%s/disk", dir);
	snprintf(wnode, sizeof(wnode), "%s/null", dir);
	CU_ASSERT_FATAL(mknod(node, S_IFCHR | 0640, makedev(1, 8)) == 0 && chown(node, 0, gid) == 0 &&
			chmod(node, 0640) == 0);
	CU_ASSERT_FATAL(mknod(wnode, S_IFCHR | 0666, makedev(1, 3)) == 0 && chmod(wnode, 0666) == 0);
	snprintf(inner, sizeof(inner), probe, node, wnode);
	/* as uid 65534 with group disk */
	CU_ASSERT_FATAL(mkdirs(at(h, "u42d/proj")) == 0);
	(void)at(h, "u42d");
	(void)at(bin, "u42d/pv");
	snprintf(cmd, sizeof(cmd),
		 "cp '%2$s' '%3$s' && chown -R 65534:65534 '%1$s' || exit 9; cd '%1$s/proj' || exit 9; "
		 "printf 'outside %%s\\n' \"$(setpriv --reuid=65534 --regid=65534 --groups=%4$u head -c 16 '%5$s' | wc -c)\"; "
		 "env -i HOME='%1$s' PATH=/usr/bin:/bin TMPDIR=/tmp setpriv --reuid=65534 --regid=65534 "
		 "--groups=%4$u '%3$s' run -q -- sh -c \"$0\"; echo status=$?",
		 h, test_passavant_bin(), bin, gid, node);
	{
		char *argv2[] = {"sh", "-c", cmd, inner, NULL};

		rc = test_run_capture(argv2, &out, &err, RUN_TIMEOUT_MS);
	}
	ROW(rc == 0 && test_has(out, "outside 16\n"), "the control: uid 65534 with group disk could not read %s outside: %d, %s %s",
	    node, rc, test_nz(out), test_nz(err));
	ROW(test_has(out, "status=0\n") && test_has(out, "own:16\n") && test_has(out, "pty /dev/pts/"),
	    "the sandbox's own /dev (urandom, a pty) as uid 65534: %s %s", test_nz(out), test_nz(err));
	ROW(test_has(out, "grp:0\n"), "a root:disk device node outside /dev was read through group disk: %s",
	    test_nz(out));
	ROW(test_has(out, "wr=") && !test_has(out, "wr=0\n"),
	    "a 0666 device node outside /dev was opened for writing as uid 65534: %s", test_nz(out));
	free(out);
	free(err);
	out = err = NULL;
	/* root-run: any node */
	snprintf(script, sizeof(script), "%s\necho done\n", inner);
	rc = run_cst(NULL, script, &out, &err);
	ROW(rc == 0 && test_has(out, "done") && test_has(out, "own:16\n") && test_has(out, "pty /dev/pts/"),
	    "root-run: the sandbox's own /dev: %d, %s %s", rc, test_nz(out), test_nz(err));
	ROW(test_has(out, "grp:0\n"), "root-run: a device node outside /dev was read: %s", test_nz(out));
	ROW(test_has(out, "wr=") && !test_has(out, "wr=0\n"), "root-run: a device node outside /dev was opened for writing: %s",
	    test_nz(out));
	CU_ASSERT(unlink(node) == 0 && unlink(wnode) == 0 && rmdir(dir) == 0);
	free(out);
	free(err);
}

/* Finding 4: secrets in the environment by name or value; the masked
 * variable, passavant's proxy and trust variables, and look-alikes stay. */
static void test_env_family(void)
{
	static const char script[] =
		"for v in BW_SESSION OP_SESSION_myacct HTTP_AUTHORIZATION DATABASE_URL "
		"SLACK_WEBHOOK_URL DOCKER_AUTH_CONFIG CI_HOOK SAS_URL CONN HDR XDG_SESSION_TYPE "
		"GIT_AUTHOR_NAME PAGE_URL SSHPASS DBPASS CREDS AUTH BEARER DEPLOY_KEY_B64 SSH_ASKPASS "
		"XAUTHORITY SSH_AUTH_SOCK DEPLOY_KEY_HEX KUBE_GZ SKIP_AUTH APP_CONFIG KEY_COLON KEY_Z; do\n"
		"  eval \"printf '%s=%s\\n' $v \\\"\\${$v-unset}\\\"\"\ndone\n"
		"printf 'GH_TOKEN=%s\\n' \"$GH_TOKEN\"\n"
		"printf 'PROXY=%s\\n' \"${HTTPS_PROXY:+set}\"\n"
		"printf 'TRUST=%s\\n' \"${SSL_CERT_FILE:+set}\"\n"
		"echo x > /dev/null && echo DEVNULL-WRITABLE\n";
	char gh[64], *out = NULL, *err = NULL, want[128];
	const char *env[] = {
		gh,
		"BW_SESSION=bwsessionvalue0123456789",
		"OP_SESSION_myacct=opsessionvalue0123456789",
		"HTTP_AUTHORIZATION=Bearer httpauthvalue0123456789",
		"DATABASE_URL=postgres://db.internal/app?sslmode=require&password=dbpwvalue0123",
		"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T0/B0/slackhookvalue0123",
		"DOCKER_AUTH_CONFIG={\"auths\":{\"r.example\":{\"auth\":\"ZG9ja2VyYXV0aHZhbHVl\"}}}",
		"CI_HOOK=https://discord.com/api/webhooks/1/discordhookvalue0123",
		"SAS_URL=https://acct.blob.example/c/b?sv=2020-08-04&sig=sasvalue0123",
		"CONN=Server=db;User Id=u;Password=connvalue0123;",
		"HDR=Authorization: Basic aGRydmFsdWUwMTIzOnBhc3M=",
		"XDG_SESSION_TYPE=x11",
		"GIT_AUTHOR_NAME=A U Thor",
		"PAGE_URL=https://example.com/search?q=token&page=2",
		"HISTFILE=/dev/null",
		/* round 32 */
		"SSHPASS=sshpassvalue0123",
		"DBPASS=dbpassvalue0123",
		"CREDS=credsvalue0123",
		"AUTH=user:authvalue0123",
		"BEARER=bearervalue0123",
		"DEPLOY_KEY_B64=LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0K",
		"SSH_ASKPASS=/usr/bin/ssh-askpass",
		"XAUTHORITY=/run/user/1000/xauth_pv",
		"SSH_AUTH_SOCK=/run/user/1000/pv-agent.socket",
		/* the review of round 32 */
		"DEPLOY_KEY_HEX=2d2d2d2d2d424547494e204f50454e5353482050524956415445204b45592d2d2d2d2d0a",
		"KUBE_GZ=H4sIAKBdFGsC/9PVBQInV3dPPwX/AFe/4GAPhYAgzzDHEFcFb9dIkKQuV5Kx",
		"SKIP_AUTH=true",
		/* session 34: a key inside a JSON value, as colon hex, as zlib */
		"APP_CONFIG={\"sa\": {\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nappcfgvalue0123\\n\"}}",
		"KEY_COLON=2d:2d:2d:2d:2d:42:45:47:49:4e:20:4f:50:45:4e:53:53:48:20:50:52:49:56:41:54:45",
		"KEY_Z=eJzT1QUCJ1d3Tz8F/wBXv+BgD4WAIM8wxxBXBW/XSJCkLleSsVNOUp5fVaKz",
		NULL,
	};
	static const char *const gone[] = {"BW_SESSION", "OP_SESSION_myacct", "HTTP_AUTHORIZATION",
					   "DATABASE_URL", "SLACK_WEBHOOK_URL", "DOCKER_AUTH_CONFIG",
					   "CI_HOOK", "SAS_URL", "CONN", "HDR", "SSHPASS", "DBPASS",
					   "CREDS", "AUTH", "BEARER", "DEPLOY_KEY_B64",
					   "DEPLOY_KEY_HEX", "KUBE_GZ", "APP_CONFIG", "KEY_COLON", "KEY_Z"};
	static const char *const values[] = {"bwsessionvalue", "opsessionvalue", "httpauthvalue",
					     "dbpwvalue", "slackhookvalue", "ZG9ja2VyYXV0aHZhbHVl",
					     "discordhookvalue", "sasvalue", "connvalue",
					     "aGRydmFsdWUwMTIzOnBhc3M", "sshpassvalue", "dbpassvalue",
					     "credsvalue", "authvalue", "bearervalue",
					     "LS0tLS1CRUdJTiBPUEVOU1NI", "2d2d2d2d2d424547494e",
					     "H4sIAKBdFGsC", "appcfgvalue", "2d:2d:2d:2d:2d:42",
					     "eJzT1QUCJ1d3"};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	st = run_cst(env, script, &out, &err);
	ROW(st == 0, "env: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		snprintf(want, sizeof(want), "%s=unset\n", gone[i]);
		ROW(test_has(out, want), "%s reached the command: %s", gone[i], out ? out : "");
		ROW(test_has(err, gone[i]), "the notice does not name %s", gone[i]);
	}
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		ROW(!test_has(out, values[i]) && !test_has(err, values[i]), "a value leaked: %s",
		    values[i]);
	ROW(test_has(out, "XDG_SESSION_TYPE=x11\n") && test_has(out, "GIT_AUTHOR_NAME=A U Thor\n") &&
		    test_has(out, "PAGE_URL=https://example.com/search?q=token&page=2\n"),
	    "a look-alike was dropped: %s", out ? out : "");
	ROW(test_has(out, "SKIP_AUTH=true\n"), "a flag named like a credential was dropped: %s",
	    out ? out : "");
	ROW(test_has(out, "SSH_ASKPASS=/usr/bin/ssh-askpass\n") &&
		    test_has(out, "XAUTHORITY=/run/user/1000/xauth_pv\n") &&
		    test_has(out, "SSH_AUTH_SOCK=/run/user/1000/pv-agent.socket\n"),
	    "a prompt program, the X authority file or the agent socket was dropped: %s",
	    out ? out : "");
	ROW(test_has(out, "GH_TOKEN=ghp_") && !test_has(out, real_token),
	    "the masked variable did not reach the command as its sentinel");
	ROW(test_has(out, "DEVNULL-WRITABLE"), "HISTFILE=/dev/null made /dev/null unwritable");
	ROW(test_has(out, "PROXY=set\n") && test_has(out, "TRUST=set\n"),
	    "passavant's proxy or trust variable was dropped: %s", out ? out : "");
	free(out);
	free(err);
}

/* What the host creates while the command runs (under root/home-lateN). */
static const char *const late_rels[] = {
	".aws/credentials", ".config/gh/hosts.yml", ".netrc", "later.txt", "newtop.txt",
	"x/new.txt",
};

/* What exists under root/home-lateN before the command starts. */
static const char *const early_rels[] = {
	"notes.txt", "x/old.txt", ".config/old.txt", ".git-credentials", ".docker/config.json",
};

/* Saves text as home-lateN/NAME by writing NAME.new and renaming it
 * over NAME. 0 or -1. */
static int save_by_rename(unsigned n, const char *name, const char *text)
{
	char rel[PATH_MAX], tmp[PATH_MAX], dst[PATH_MAX];

	snprintf(rel, sizeof(rel), "home-late%u/%s.new", n, name);
	at(tmp, rel);
	snprintf(rel, sizeof(rel), "home-late%u/%s", n, name);
	at(dst, rel);
	return test_write_file(tmp, text, strlen(text)) < 0 || rename(tmp, dst) < 0 ? -1 : 0;
}

/* The host's side of test_late_stores(): waits (10 s at most) for the
 * command's root/work/started-N, creates late_rels under home-lateN,
 * then root/work/go-N. Runs in a forked child; exits. */
NORETURN static void late_host(unsigned n)
{
	char flag[PATH_MAX], rel[PATH_MAX];
	struct timespec ts = {0, 20 * 1000 * 1000};

	snprintf(rel, sizeof(rel), "work/started-%u", n);
	for (int i = 0; i < 500 && access(at(flag, rel), F_OK) < 0; i++)
		(void)nanosleep(&ts, NULL);
	for (size_t i = 0; i < sizeof(late_rels) / sizeof(late_rels[0]); i++) {
		snprintf(rel, sizeof(rel), "home-late%u/%s", n, late_rels[i]);
		if (plant(rel) < 0)
			_exit(1);
	}
	/* the store behind the dangling ~/.local */
	snprintf(rel, sizeof(rel), "local-late%u/sub/share/keyrings/login.keyring", n);
	if (plant(rel) < 0)
		_exit(1);
	/* an existing store saved anew by rename, as logins and token
	 * refreshes write: the kernel drops the cover in the sandbox; the
	 * second under an allowRead that names its directory */
	if (save_by_rename(n, ".git-credentials", "REPLACED-STORE\n") < 0 ||
	    save_by_rename(n, ".docker/config.json", "REPLACED-DOCKER\n") < 0)
		_exit(1);
	snprintf(rel, sizeof(rel), "work/go-%u", n);
	_exit(test_write_file(at(flag, rel), "go", 2) < 0 ? 1 : 0);
}

/* One run in root/work with HOME=root/home-lateN while late_host(n) plants
 * late_rels; the script prints REL=content for each, and what existed
 * before. env as run_cst(). Returns the run's status. */
static int late_run(unsigned n, const char *const *env, char **out, char **err)
{
	char script[4096], rel[PATH_MAX], home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX];
	struct test_sbx_run r = {at(work, "work"), home, NULL, at(pol, "late.yaml"), sc, env, NULL};
	int st, hst;
	pid_t pid;

	snprintf(rel, sizeof(rel), "home-late%u", n);
	at(home, rel);
	for (size_t i = 0; i < sizeof(early_rels) / sizeof(early_rels[0]); i++) {
		snprintf(rel, sizeof(rel), "home-late%u/%s", n, early_rels[i]);
		if (plant(rel) < 0)
			return -1;
	}
	/* ~/.local, a dangling link to a directory the host makes later,
	 * on the way to the keyring store */
	{
		char lnk[PATH_MAX], to[PATH_MAX];

		/* its target's directory exists (and is no directory on
		 * the way of any other store): only the link leads there */
		snprintf(rel, sizeof(rel), "local-late%u/.keep", n);
		if (plant(rel) < 0)
			return -1;
		snprintf(rel, sizeof(rel), "local-late%u/sub", n);
		at(to, rel);
		snprintf(rel, sizeof(rel), "home-late%u/.local", n);
		if (symlink(to, at(lnk, rel)) < 0 && errno != EEXIST)
			return -1;
	}
	snprintf(script, sizeof(script),
		 "touch started-%u; i=0; while [ ! -e go-%u ] && [ $i -lt 500 ]; do sleep 0.02; "
		 "i=$((i+1)); done\n"
		 "for f in .aws/credentials .config/gh/hosts.yml .netrc later.txt newtop.txt x/new.txt "
		 "notes.txt x/old.txt .config/old.txt .git-credentials; do printf '%%s=' $f; "
		 "cat \"$HOME/$f\" 2>/dev/null; echo; done\ncat \"$HOME/.docker/config.json\" 2>/dev/null\n"
		 "cat \"$HOME/.local/share/keyrings/login.keyring\" 2>/dev/null\n"
		 "echo mine > mine-%u.txt; cat mine-%u.txt; echo tmp > /tmp/t-%u && cat /tmp/t-%u\n"
		 "mkdir -p d1-%u d2-%u; echo x > d1-%u/f; ln d1-%u/f d2-%u/g && echo linked\necho done\n",
		 n, n, n, n, n, n, n, n, n, n, n);
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	if (test_write_file(sc, script, strlen(script)) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		late_host(n);
	st = test_sbx_run(&r, out, err, RUN_TIMEOUT_MS);
	if (waitpid(pid, &hst, 0) != pid || !WIFEXITED(hst) || WEXITSTATUS(hst) != 0)
		return -1;
	return st;
}

/* Whether out shows root/home-lateN/rel's planted content. */
static bool late_read(const char *out, unsigned n, const char *rel)
{
	char want[PATH_MAX + 32];

	snprintf(want, sizeof(want), "%s=PLANTED-home-late%u/%s\n", rel, n, rel);
	return test_has(out, want);
}

/* A store or denyRead path the host creates during the session. */
static void test_late_stores(void)
{
	static const char *const hook[] = {"PASSAVANT_SBX_NO_LANDLOCK=1", NULL};
	static const char *const kube[] = {"KUBECONFIG=/tmp/kc-missing", NULL};
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	/* KUBECONFIG names a missing file in /tmp: the private /tmp stays
	 * the command's (it wrote and read t-1 there) */
	st = late_run(1, kube, &out, &err);
	ROW(st == 0 && test_has(out, "mine\ntmp\nlinked\ndone"),
	    "late stores: status %d, or a link to another directory failed (Landlock's REFER)", st);
	ROW(!test_has(out, "PLANTED-local-late1/"),
	    "~/.local/share/keyrings, behind a dangling ~/.local to a directory the host made, was readable");
	ROW(!test_has(out, "REPLACED-DOCKER"),
	    "~/.docker/config.json, denied under allowRead ~/.docker, saved anew by rename, was readable");
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < 5; i++)
		ROW(!late_read(out, 1, late_rels[i]), "~/%s, created by the host during the session, was "
		    "readable in the sandbox", late_rels[i]);
	ROW(late_read(out, 1, "x/new.txt") && late_read(out, 1, "notes.txt") &&
		    late_read(out, 1, "x/old.txt") && late_read(out, 1, ".config/old.txt"),
	    "a file that existed, or a new one in a directory that existed, was not readable: %s",
	    out ? out : "");
	ROW(!test_has(out, "REPLACED-STORE") && !late_read(out, 1, ".git-credentials"),
	    "~/.git-credentials, saved anew by the host by rename, was readable: %s", out ? out : "");
	ROW(!test_has(err, "Landlock"), "run warned about Landlock on a kernel that has it: %s",
	    err ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	/* The same without Landlock (the hook): the store shows, run warns. */
	st = late_run(2, hook, &out, &err);
	ROW(st == 0 && late_read(out, 2, ".aws/credentials") && test_has(out, "REPLACED-STORE"),
	    "without Landlock the late or replaced store was not readable: the test cannot tell "
	    "(status %d)", st);
	ROW(test_has(err, "this kernel offers no Landlock"), "no warning without Landlock: %s",
	    err ? err : "");
	free(out);
	free(err);
}

/*
 * In a child with a mount namespace of its own (propagation from the
 * host kept, none back): setup (a shell line of mounts), then fill (a
 * shell line that writes into them, or NULL), then run(arg) with its
 * stdout and stderr as *out and *err, then teardown (a shell line, or
 * NULL; run whatever came before it: a FUSE daemon started in the child
 * keeps its namespace alive until its mount goes). The mounts a test
 * makes never reach the host's table, which the run suite compares
 * before and after a session while the other variant (plain or ASan)
 * runs beside it. The status of the run, -2 when setup failed, -3 when
 * fill failed, -1 on an error of the test itself; *torn (may be NULL)
 * false when teardown failed.
 */
static int own_mounts(const char *setup, const char *fill, const char *teardown,
		      int (*run)(const void *arg, char **out, char **err), const void *arg, char **out, char **err,
		      bool *torn)
{
	char fo[PATH_MAX], fe[PATH_MAX], ft[PATH_MAX];
	pid_t pid;
	int ws;

	snprintf(fo, sizeof(fo), "%s/scripts/own-mounts.out", root);
	snprintf(fe, sizeof(fe), "%s/scripts/own-mounts.err", root);
	snprintf(ft, sizeof(ft), "%s/scripts/own-mounts.torn", root);
	(void)unlink(fo);
	(void)unlink(fe);
	(void)unlink(ft);
	if (torn != NULL)
		*torn = true;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *o = NULL, *e = NULL;
		int st = 254;

		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
			_exit(254);
		if (system(setup) == 0) {
			st = fill != NULL && system(fill) != 0 ? 252 : run(arg, &o, &e);
			if (st < 0)
				st = 253;
		}
		if (teardown != NULL && system(teardown) != 0 && test_write_file(ft, "1", 1) < 0)
			st = 253;
		if ((o != NULL && test_write_file(fo, o, strlen(o)) < 0) ||
		    (e != NULL && test_write_file(fe, e, strlen(e)) < 0))
			st = 253;
		free(o);
		free(e);
		_exit(st & 0xff);
	}
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return -1;
	*out = test_read_file(fo, NULL);
	*err = test_read_file(fe, NULL);
	if (torn != NULL)
		*torn = access(ft, F_OK) != 0;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) == 253)
		return -1;
	return WEXITSTATUS(ws) == 254 ? -2 : WEXITSTATUS(ws) == 252 ? -3 : WEXITSTATUS(ws);
}

/* own_mounts()'s run: the prepared run r, or run_cst(script). */
struct cst_run {
	const char *script;
	const struct test_sbx_run *r;
};

static int cst_run(const void *arg, char **out, char **err)
{
	const struct cst_run *c = arg;

	return c->r != NULL ? test_sbx_run(c->r, out, err, RUN_TIMEOUT_MS) : run_cst(NULL, c->script, out, err);
}

/*
 * setup (a shell line of mounts), then script in the sandbox, in a child
 * with a mount namespace of its own (own_mounts()). r: the run (its
 * script written), or NULL for run_cst(script). The status of the run,
 * -2 when setup failed, -1 on an error of the test itself.
 */
static int run_cst_own_mounts(const char *setup, const char *script, const struct test_sbx_run *r, char **out,
			      char **err)
{
	const struct cst_run c = {script, r};

	return own_mounts(setup, NULL, NULL, cst_run, &c, out, err, NULL);
}

/* own_mounts()'s run: late_run()'s session 9, KUBECONFIG naming no file. */
static int late_run_second_mount(const void *arg, char **out, char **err)
{
	static const char *const kube[] = {"KUBECONFIG=/tmp/kc-missing", NULL};

	(void)arg;
	return late_run(9, kube, out, err);
}

/*
 * Review of round 40 (the mount aliases of f2): with / mounted a second
 * time, the aliases' ways run through that mount, and one of their
 * entries is the same directory as / (or the home's parent) under
 * another name; Landlock grants by inode, so its grant granted the
 * ways themselves, and a store the host made during the session read in
 * clear (2 of this test's checks failed; a machine with a second mount
 * of its root file system, as containers and fstab binds give). The
 * mount is made in a child with a mount namespace of its own
 * (own_mounts()).
 */
static void test_late_stores_second_mount(void)
{
	char disk[PATH_MAX], cmd[PATH_MAX + 64], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (geteuid() != 0) {
		TEST_SKIP("not root: cannot mount / a second time");
		return;
	}
	at(disk, "disk-late");
	CU_ASSERT_FATAL(mkdir(disk, 0755) == 0);
	CU_ASSERT_FATAL(snprintf(cmd, sizeof(cmd), "mount --bind / '%s'", disk) < (int)sizeof(cmd));
	st = own_mounts(cmd, NULL, NULL, late_run_second_mount, NULL, &out, &err, NULL);
	(void)rmdir(disk);
	if (st == -2) {
		free(out);
		free(err);
		TEST_SKIP("cannot mount / a second time here");
		return;
	}
	if (st != 0)
		show(st, out, err);
	ROW(st == 0 && test_has(out, "mine\ntmp\nlinked\ndone"), "late stores beside a second mount of /: status %d",
	    st);
	ROW(!test_has(out, "PLANTED-local-late9/"),
	    "~/.local/share/keyrings, made by the host during the session, was readable beside a second mount of /");
	for (size_t i = 0; i < 5; i++)
		ROW(!late_read(out, 9, late_rels[i]), "~/%s, created by the host during the session, was "
		    "readable in the sandbox beside a second mount of /", late_rels[i]);
	ROW(late_read(out, 9, "x/new.txt") && late_read(out, 9, "notes.txt") && late_read(out, 9, "x/old.txt"),
	    "a file that existed, or a new one in a directory that existed, was not readable beside a second "
	    "mount of /: %s", test_nz(out));
	free(out);
	free(err);
}

/* Base64 of the n bytes at in (standard alphabet, padded); malloc'd. */
static char *test_base64(const char *in, size_t n)
{
	static const char d[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = malloc(4 * ((n + 2) / 3) + 1), *p = o;

	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)in[i] << 16 | (i + 1 < n ? (unsigned char)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? (unsigned char)in[i + 2] : 0);
		*p++ = d[v >> 18 & 63];
		*p++ = d[v >> 12 & 63];
		*p++ = i + 1 < n ? d[v >> 6 & 63] : '=';
		*p++ = i + 2 < n ? d[v & 63] : '=';
	}
	*p = '\0';
	return o;
}

/*
 * Round 34 of the attack (M1): what run hands the command besides the
 * masked variable itself holds no real value. The masked GH_TOKEN's real
 * value in another variable (base64 of "deploy:VALUE", which the
 * environment filter keeps), in the command's arguments (a shell expanded
 * $GH_TOKEN into them: /proc/self/cmdline), in ~/.bashrc and in the
 * project's .env: each reaches the command with the sentinel in its place.
 */
static void test_remask_inputs(void)
{
	static const char script[] =
		"printf 'REG=%s\\n' \"$REG_B64\"\n"
		"printf 'REGDEC=%s\\n' \"$(printf %s \"$REG_B64\" | base64 -d)\"\n"
		"printf 'ARG1=%s\\nARG2=%s\\n' \"$1\" \"$2\"\n"
		"printf 'CMDLINE=%s\\n' \"$(tr '\\0' ' ' < /proc/self/cmdline)\"\n"
		"printf 'PCMD=%s\\n' \"$(tr '\\0' ' ' < /proc/$$/cmdline)\"\n"
		"printf 'RC=%s\\n' \"$(grep GH_TOKEN \"$HOME/.bashrc\")\"\n"
		"printf 'DOTENV=%s\\n' \"$(cat .env)\"\n"
		"printf 'REMOTE=%s\\n' \"$(git config -f .git/config remote.origin.url)\"\n"
		"(echo x >> .env) 2>/dev/null && echo ENV-WRITABLE; true\n";
	char gh[64], reg[128], url[128], rc_line[128], dotenv[128], path[PATH_MAX], dec[96], gitcfg[192];
	char *out = NULL, *err = NULL, *b64 = NULL;
	const char *env[] = {gh, reg, NULL};
	const char *args[] = {real_token, url, NULL};
	char home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX];
	struct test_sbx_run r = {at(work, "work"), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env, NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	snprintf(dec, sizeof(dec), "deploy:%s", real_token);
	b64 = test_base64(dec, strlen(dec));
	CU_ASSERT_PTR_NOT_NULL_FATAL(b64);
	snprintf(reg, sizeof(reg), "REG_B64=%s", b64);
	snprintf(url, sizeof(url), "https://x:%s@h.example/", real_token);
	snprintf(rc_line, sizeof(rc_line), "export GH_TOKEN=%s\n", real_token);
	snprintf(dotenv, sizeof(dotenv), "TOKEN=%s\n", real_token);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "home/.bashrc"), rc_line, strlen(rc_line)), 0);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.env"), dotenv, strlen(dotenv)), 0);
	/* the review of round 34 (M2): a clone with $TOKEN wrote it into the
	 * repository's config */
	snprintf(gitcfg, sizeof(gitcfg), "[remote \"origin\"]\n\turl = https://x-access-token:%s@h.example/o/r.git\n",
		 real_token);
	CU_ASSERT_FATAL(mkdir(at(path, "work/.git"), 0755) == 0);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.git/config"), gitcfg, strlen(gitcfg)), 0);
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
	st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0, "status %d", st);
	if (st != 0)
		show(st, out, err);
	ROW(!test_has(out, real_token) && !test_has(err, real_token), "the real value reached the command: %s",
	    out ? out : "");
	ROW(!test_has(out, b64 + 8) && test_has(out, "REGDEC=deploy:ghp_"),
	    "REG_B64 was not re-masked (base64 of user:VALUE): %s", out ? out : "");
	ROW(test_has(out, "ARG1=ghp_") && test_has(out, "ARG2=https://x:ghp_"),
	    "the arguments lost their sentinel form: %s", out ? out : "");
	ROW(test_has(out, "RC=export GH_TOKEN=ghp_") && test_has(out, "DOTENV=TOKEN=ghp_"),
	    "~/.bashrc or .env is not the sentinel copy: %s", out ? out : "");
	ROW(!test_has(out, "ENV-WRITABLE"), "the sentinel copy of .env was writable");
	ROW(test_has(out, "REMOTE=https://x-access-token:ghp_"), "the repository's config is not the sentinel copy: %s",
	    out ? out : "");
	ROW(test_has(err, "REG_B64 held a masked credential's real value") &&
		    test_has(err, "arguments 2, 3 held a masked credential's real value") &&
		    test_has(err, ".bashrc") && test_has(err, "/work/.env") && test_has(err, "/work/.git/config held"),
	    "run did not say what it re-masked: %s", err ? err : "");
	free(out);
	free(err);
	free(b64);
	(void)unlink(at(path, "home/.bashrc"));
	(void)unlink(at(path, "work/.env"));
	(void)unlink(at(path, "work/.git/config"));
	(void)rmdir(at(path, "work/.git"));
}

/*
 * Round 38 of the attack: the search for real values read the table's
 * readable home rows (the top of a directory row), the home's top dot
 * files and what the sh family's start-up files source; the start-up
 * files of shells and terminals with no row (nushell's env.nu, elvish's
 * ~/.elvish/rc.elv, PowerShell's profile, kitty's `env`, wezterm's
 * set_environment_variables), fish's conf.d/ below its row and a plain
 * ~/.config/secrets.env showed the masked GH_TOKEN's real value in
 * clear. Now the files at the top of ~/.config, of each directory in it
 * and of each dot directory of the home, and of the *.d directories in
 * those, are searched too: each shows the sentinel.
 */
static void test_remask_config_dirs(void)
{
	static const char *const files[] = {
		"home/.config/nushell/env.nu", "home/.elvish/rc.elv",
		"home/.config/powershell/Microsoft.PowerShell_profile.ps1", "home/.config/kitty/kitty.conf",
		"home/.config/wezterm/wezterm.lua", "home/.config/fish/conf.d/tokens.fish", "home/.config/secrets.env"};
	char script[4096], line[128], path[PATH_MAX], gh[64];
	char *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	char home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX];
	struct test_sbx_run r = {at(work, "work"), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env, NULL};
	size_t n = 0;
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	snprintf(line, sizeof(line), "GH_TOKEN = \"%s\"\n", real_token);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char dir[PATH_MAX], cmd[PATH_MAX + 16];

		at(path, files[i]);
		snprintf(dir, sizeof(dir), "%s", path);
		*strrchr(dir, '/') = '\0';
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
		CU_ASSERT_FATAL(system(cmd) == 0);
		CU_ASSERT_EQUAL_FATAL(test_write_file(path, line, strlen(line)), 0);
		n += (size_t)snprintf(script + n, sizeof(script) - n, "printf 'F%zu=%%s\\n' \"$(cat '%s')\"\n", i, path);
	}
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0, "status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char want[64], clear[96];

		snprintf(want, sizeof(want), "F%zu=GH_TOKEN = \"ghp_", i);
		snprintf(clear, sizeof(clear), "F%zu=GH_TOKEN = \"%s", i, real_token);
		ROW(test_has(out, want) && !test_has(out, clear), "~/%s was not shown with the sentinel: %s",
		    files[i] + 5, test_nz(out));
	}
	ROW(!test_has(out, real_token) && !test_has(err, real_token),
	    "the real value was read from a configuration directory: %s", test_nz(out));
	free(out);
	free(err);
	/* the files, then the directories made for them that are empty now */
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *slash;

		(void)unlink(at(path, files[i]));
		while ((slash = strrchr(path, '/')) != NULL && strcmp(slash, "/home") != 0) {
			*slash = '\0';
			if (strcmp(strrchr(path, '/'), "/home") == 0 || rmdir(path) < 0)
				break;
		}
	}
}

/*
 * The review of round 38: the search of the home's configuration
 * directories (a46775f) kept fix38m's bounds that refuse the start, made
 * for the session's files: an ordinary home refused to start, on the
 * budget (Electron applications' Cookies and CrashpadMetrics-active.pma
 * at the top of ~/.config/APP: 2 MiB an application), or on a .gz log
 * there inflating past 8 MiB. Now, there and outside the writable trees,
 * a binary file is not searched, a compressed one past the inflation
 * bounds is skipped, and a budget of their own, past which a file is
 * named in a line; a .gz log in a row of the home (~/.emacs.d) past them
 * is named as not searched. The budget lowered to 40,000 bytes (the
 * tests' knob): two 15,000-byte binary files, 9 MB .gz logs and a
 * 41,000-byte text file start, and the real value in nushell's env.nu
 * is still shown as its sentinel; a .gz there holding the real value
 * still refuses.
 */
static void test_remask_config_ordinary(void)
{
	static const char *const made[] = {
		"home/.config/App1/Cookies",	       "home/.config/App2/CrashpadMetrics-active.pma",
		"home/.config/App2/rotated.log.gz",    "home/.config/App3/notes.txt",
		"home/.config/nushell/env.nu",	       "home/.config/App4/tok.gz", "home/.emacs.d/history.gz"};
	static const char *const dirs[] = {"home/.config/App1", "home/.config/App2", "home/.config/App3",
					   "home/.config/App4", "home/.config/nushell"};
	char gh[64], path[PATH_MAX], p2[PATH_MAX], body[41000], cmd[2 * PATH_MAX + 128], clear[96];
	char *out = NULL, *err = NULL;
	const char *env[] = {gh, "PASSAVANT_REMASK_BYTES_MAX=40000", NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	CU_ASSERT_FATAL(mkdir(at(path, "home/.emacs.d"), 0700) == 0 || errno == EEXIST);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", at(path, dirs[i]));
		CU_ASSERT_FATAL(system(cmd) == 0);
	}
	memset(body, 'x', sizeof(body));
	memcpy(body, "SQLite format 3", 16); /* with its NUL */
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, made[0]), body, 15000), 0);
	body[0] = '\0';
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, made[1]), body, 15000), 0);
	snprintf(cmd, sizeof(cmd), "yes 'a log line' 2>/dev/null | head -c 9000000 | gzip -c > '%s'", at(path, made[2]));
	CU_ASSERT_FATAL(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", at(path, made[2]), at(p2, made[6]));
	CU_ASSERT_FATAL(system(cmd) == 0);
	memset(body, 'w', sizeof(body));
	body[sizeof(body) - 1] = '\n';
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, made[3]), body, sizeof(body)), 0);
	snprintf(body, sizeof(body), "$env.GH_TOKEN = \"%s\"\n", real_token);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, made[4]), body, strlen(body)), 0);
	st = run_cst(env, "printf 'E=%s\\n' \"$(cat ~/.config/nushell/env.nu)\"; echo RAN\n", &out, &err);
	snprintf(clear, sizeof(clear), "E=$env.GH_TOKEN = \"ghp_");
	ROW(st == 0 && test_has(out, "RAN"), "an ordinary home's configuration directories refused the start: %s",
	    test_nz(err));
	ROW(test_has(out, clear) && !test_has(out, real_token) && !test_has(err, real_token),
	    "env.nu was not shown with the sentinel: %s", test_nz(out));
	ROW(test_has(err, "budget for the home's files was spent") && test_has(err, "notes.txt") &&
	    !test_has(err, "Cookies") && !test_has(err, "rotated.log.gz"),
	    "the configuration file past the budget was not named alone: %s", test_nz(err));
	ROW(test_has(err, "inflating past 8 MiB): ") && test_has(err, ".emacs.d/history.gz"),
	    "a .gz log in a row of the home was not named as not searched: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	/* the leak stays closed: a .gz there holding the real value refuses */
	snprintf(cmd, sizeof(cmd), "printf 'GH_TOKEN=%s\\n' | gzip -c > '%s'", real_token, at(path, made[5]));
	CU_ASSERT_FATAL(system(cmd) == 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "tok.gz"),
	    "a .gz in a configuration directory holding the real value started: %s", test_nz(err));
	free(out);
	free(err);
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++)
		(void)unlink(at(path, made[i]));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		(void)rmdir(at(path, dirs[i]));
	(void)rmdir(at(path, "home/.emacs.d"));
}

/*
 * Merging the two reviews of round 38: the home's compressed files had a
 * byte budget of their own (review38b) but spent the same inflation
 * bounds (64 MiB, 4,096 streams in one start: review38c) as the
 * session's files, where a bound reached refuses the start. Nine .gz
 * logs in a row of the home (~/.emacs.d), each inflating past 8 MiB,
 * spent the 64 MiB, and an ordinary small .gz in the working directory
 * then refused the start. Now each has its own: the logs are named as
 * not searched, the project's .gz is searched and starts; one holding
 * the real value still refuses.
 */
static void test_remask_inflate_budgets_apart(void)
{
	char gh[64], path[PATH_MAX], cmd[2 * PATH_MAX + 128], name[64], *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	CU_ASSERT_FATAL(mkdir(at(path, "home/.emacs.d"), 0700) == 0 || errno == EEXIST);
	snprintf(cmd, sizeof(cmd), "yes 'a log line' 2>/dev/null | head -c 9000000 | gzip -c > '%s'",
		 at(path, "home/.emacs.d/log0.gz"));
	CU_ASSERT_FATAL(system(cmd) == 0);
	for (int i = 1; i < 9; i++) {
		snprintf(name, sizeof(name), "home/.emacs.d/log%d.gz", i);
		snprintf(cmd, sizeof(cmd), "cp '%s' ", at(path, "home/.emacs.d/log0.gz"));
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), "'%s'", at(path, name));
		CU_ASSERT_FATAL(system(cmd) == 0);
	}
	snprintf(cmd, sizeof(cmd), "printf 'just data\\n' | gzip -c > '%s'", at(path, "work/.env.gz"));
	CU_ASSERT_FATAL(system(cmd) == 0);
	st = run_cst(env, "zcat .env.gz; echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "just data\nRAN"),
	    "the home's .gz logs spent the inflation bounds of the session's files, and a small .gz in the "
	    "working directory refused the start: %s", test_nz(err));
	ROW(test_has(err, ".emacs.d/log8.gz"), "the home's logs past the bound were not named: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	snprintf(cmd, sizeof(cmd), "printf 'GH_TOKEN=%s\\n' | gzip -c > '%s'", real_token, at(path, "work/.env.gz"));
	CU_ASSERT_FATAL(system(cmd) == 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, ".env.gz"),
	    "a .gz in the working directory holding the real value started: %s", test_nz(err));
	free(out);
	free(err);
	(void)unlink(at(path, "work/.env.gz"));
	for (int i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), "home/.emacs.d/log%d.gz", i);
		(void)unlink(at(path, name));
	}
	(void)rmdir(at(path, "home/.emacs.d"));
}

/* A git setup script in root (test_git_sh()). */
#define sh(...) test_git_sh(root, false, __VA_ARGS__)

/*
 * The review of round 35 (F1, F2, F2b): the repository configs git reads
 * from the working directory besides the nearest `.git/config`, each
 * holding a remote URL with the masked value (a clone with $TOKEN wrote
 * it): a linked worktree (its `.git` a file naming
 * `main/.git/worktrees/wt`; the config is the common directory's), a
 * submodule's work tree (`.git/modules/lib/config`, from the submodule
 * and from the superproject; `.git/modules/vendor/lib2/config` of the
 * submodule named vendor/lib2), a repository nested in another (the
 * outer one's), and the repository the host's GIT_DIR names. Real git in
 * the sandbox prints the remote: the sentinel.
 */
static void test_remask_git_layouts(void)
{
	static const struct {
		const char *cwd, *script;
		bool git_dir;
	} runs[] = {
		{"g35/wt", "git remote -v\ncat \"$(git rev-parse --git-common-dir)/config\"\n", false},
		{"g35/super/lib", "git remote -v\ncat \"$(git rev-parse --git-dir)/config\"\n", false},
		{"g35/super", "cat .git/modules/lib/config\n", false},
		{"g35/super", "cat .git/modules/vendor/lib2/config\n", false},
		{"g35/outer/vendor/inner", "git -C ../.. remote -v\n", false},
		{"work", "git remote -v\n", true},
	};
	char gh[64], home[PATH_MAX], pol[PATH_MAX], cwd[PATH_MAX], sc[PATH_MAX], gd[PATH_MAX + 16];
	const char *env[] = {gh, "GIT_CONFIG_NOSYSTEM=1", NULL, NULL};

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	CU_ASSERT_EQUAL_FATAL(
		sh("mkdir -p g35 githome && cd g35 && U='https://x-access-token:%s@h.example/o/r.git'\n"
		   "git init -q main && git -C main commit -q --allow-empty -m init && "
		   "git -C main remote add origin \"$U\" && git -C main worktree add -q ../wt 2>/dev/null\n"
		   "git init -q super && mkdir -p super/.git/modules && "
		   "git init -q --separate-git-dir super/.git/modules/lib super/lib && "
		   "git -C super/lib remote add origin \"$U\" && mkdir -p super/.git/modules/vendor && "
		   "git init -q --separate-git-dir super/.git/modules/vendor/lib2 super/vendor/lib2 && "
		   "git -C super/vendor/lib2 remote add origin \"$U\"\n"
		   "git init -q outer && git -C outer remote add origin \"$U\" && git init -q outer/vendor/inner\n",
		   real_token),
		0);
	for (size_t i = 0; i < ARRAY_LEN(runs); i++) {
		struct test_sbx_run r = {at(cwd, runs[i].cwd), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env,
					 NULL};
		char *out = NULL, *err = NULL;
		int st;

		snprintf(gd, sizeof(gd), "GIT_DIR=%s/g35/outer/.git", root);
		env[2] = runs[i].git_dir ? gd : NULL;
		snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
		CU_ASSERT_EQUAL_FATAL(test_write_file(sc, runs[i].script, strlen(runs[i].script)), 0);
		st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
		ROW(st == 0, "%s: status %d", runs[i].cwd, st);
		ROW(!test_has(out, real_token) && !test_has(err, real_token),
		    "%s: the real value reached the command", runs[i].cwd);
		ROW(test_has(out, "https://x-access-token:ghp_"), "%s: no remote URL with the sentinel: %s",
		    runs[i].cwd, test_has(out, real_token) ? "(withheld)" : out ? out : "");
		ROW(test_has(err, "/config") && test_has(err, "held a masked credential's real value"), "%s: run did not say so",
		    runs[i].cwd);
		free(out);
		free(err);
	}
}

/*
 * The review of round 35 (F4): the listing bound cut a directory's
 * listing in its order before the usual names were picked, and planted
 * .env* in one directory used up the bound of every other. 2,100 empty
 * ~/.env.jN leave the project's .env.mine (another .env*) searched; with
 * the listing bound lowered to 4 (the tests' knob), the project's .env
 * behind 40 other dot files is still found by its name.
 */
static void test_remask_bounds(void)
{
	static const char *const knob[] = {NULL, "PASSAVANT_REMASK_LIST_MAX=4"};
	static const char *const file[] = {".env.mine", ".env"};
	char gh[64], path[PATH_MAX], line[128], script[128];
	const char *env[] = {gh, NULL, NULL};

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	snprintf(line, sizeof(line), "TOKEN=%s\n", real_token);
	CU_ASSERT_EQUAL_FATAL(sh("i=0; while [ $i -lt 2100 ]; do : > home/.env.j$i; i=$((i+1)); done\n"
				 "i=0; while [ $i -lt 40 ]; do : > work/.zp$i; i=$((i+1)); done"),
			      0);
	for (size_t i = 0; i < ARRAY_LEN(knob); i++) {
		char *out = NULL, *err = NULL;
		int st;

		env[1] = knob[i];
		CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, i == 0 ? "work/.env.mine" : "work/.env"), line,
						      strlen(line)),
				      0);
		snprintf(script, sizeof(script), "printf 'READ=%%s\\n' \"$(cat %s)\"\n", file[i]);
		st = run_cst(env, script, &out, &err);
		ROW(st == 0, "%s: status %d", file[i], st);
		ROW(!test_has(out, real_token) && !test_has(err, real_token), "%s: the real value reached the command",
		    file[i]);
		ROW(test_has(out, "READ=TOKEN=ghp_"), "%s: not the sentinel copy", file[i]);
		ROW(test_has(err, file[i]) && test_has(err, "held a masked credential's real value"),
		    "%s: run did not say so", file[i]);
		free(out);
		free(err);
		(void)unlink(path);
	}
	CU_ASSERT_EQUAL(sh("rm -f home/.env.j* work/.zp*"), 0);
}

/*
 * fix38m: the search of files had no bound on its work but its file
 * count and size (2,048 of 1 MiB): with 64 credentials masked 1 MiB of
 * adversarial text cost 430 ms, so files planted at the top of a cloned
 * project held the start for minutes. A budget of bytes searched in one
 * start now bounds it, and a file past the budget refuses the start
 * rather than being passed unsearched. The budget lowered to 2,000 bytes
 * (the tests' knob): two plain 1,500-byte dot files refuse the start;
 * with the default budget they start.
 */
static void test_remask_budget(void)
{
	char gh[64], path[PATH_MAX], body[1600], *out = NULL, *err = NULL;
	const char *env[] = {gh, "PASSAVANT_REMASK_BYTES_MAX=2000", NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	memset(body, 'w', 1500);
	body[1500] = '\n';
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.zz1"), body, 1501), 0);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.zz2"), body, 1501), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "not searched for masked credentials' real values: the "
							      "search's budget"),
	    "a file past the search's budget was passed unsearched: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	env[1] = NULL;
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN"), "the default budget refused two small files: %s", test_nz(err));
	free(out);
	free(err);
	(void)unlink(at(path, "work/.zz1"));
	(void)unlink(at(path, "work/.zz2"));
}

/* Upper-case hex, base32 and base64 of UTF-16LE of the n bytes at in;
 * malloc'd. */
static char *test_hex(const char *in, size_t n)
{
	char *o = malloc(2 * n + 1);

	for (size_t i = 0; o != NULL && i < n; i++)
		snprintf(o + 2 * i, 3, "%02X", (unsigned char)in[i]);
	return o;
}

static char *test_base32(const char *in, size_t n)
{
	static const char d[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	char *o = malloc(8 * ((n + 4) / 5) + 1), *p = o;
	size_t bits = 0;
	unsigned acc = 0;

	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		acc = (acc << 8 | (unsigned char)in[i]) & 0xfff;
		bits += 8;
		while (bits >= 5) {
			*p++ = d[acc >> (bits - 5) & 31];
			bits -= 5;
		}
	}
	if (bits > 0)
		*p++ = d[acc << (5 - bits) & 31];
	while ((p - o) % 8 != 0)
		*p++ = '=';
	*p = '\0';
	return o;
}

/* base64 of in's UTF-16LE (be false) or UTF-16BE (be true) */
static char *test_b64_utf16(const char *in, size_t n, bool be)
{
	char wide[256];

	if (2 * n > sizeof(wide))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		wide[2 * i + (be ? 1 : 0)] = in[i];
		wide[2 * i + (be ? 0 : 1)] = 0;
	}
	return test_base64(wide, 2 * n);
}

/*
 * The review of round 35 (F5): other variables holding the masked value
 * in forms the re-masker does not rewrite (hex in upper case, base32,
 * the value upper-cased, base64 of its UTF-16LE, base64 of "user:VALUE"
 * in groups split by spaces, %25-encoded twice, split by a
 * backslash-newline, base64 of "user:" and 31 bytes of the 40) are
 * dropped, named in a line; an argument holding
 * its hex refuses the start, naming the argument's position.
 */
static void test_remask_encoded(void)
{
	char gh[64], vhex[128], vb32[128], vup[64], vu16[160], vsp[128], vpct[400], vcont[80], user[64], vpart[96];
	char *hex = test_hex(real_token, strlen(real_token)), *b32 = test_base32(real_token, strlen(real_token));
	/* round 46 (perf46m): the base64 of the value's UTF-16LE is a form
	 * of the table, re-masked as the value is (V_U16LE below); its
	 * UTF-16BE's is not, and is dropped */
	char *u16 = test_b64_utf16(real_token, strlen(real_token), true), *b64 = NULL, *part = NULL;
	char *u16le = test_b64_utf16(real_token, strlen(real_token), false), vu16le[160];
	const char *env[] = {gh, vhex, vb32, vup, vu16, vsp, vpct, vcont, vpart, NULL};
	const char *args[] = {"x", NULL, NULL};
	char home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX];
	struct test_sbx_run r = {at(work, "work"), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env, NULL};
	static const char script[] = "env | grep -A1 '^V_'\necho RAN\n";
	char *out = NULL, *err = NULL;
	size_t o;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(hex != NULL && b32 != NULL && u16 != NULL && u16le != NULL);
	snprintf(user, sizeof(user), "user:%s", real_token);
	b64 = test_base64(user, strlen(user));
	CU_ASSERT_PTR_NOT_NULL_FATAL(b64);
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	snprintf(vhex, sizeof(vhex), "V_HEX=%s", hex);
	snprintf(vb32, sizeof(vb32), "V_B32=%s", b32);
	o = (size_t)snprintf(vup, sizeof(vup), "V_UP=");
	for (const char *c = real_token; *c != '\0' && o + 1 < sizeof(vup); c++)
		vup[o++] = (char)toupper((unsigned char)*c);
	vup[o] = '\0';
	snprintf(vu16, sizeof(vu16), "V_U16=%s", u16);
	snprintf(vsp, sizeof(vsp), "V_B64SP=%.16s %.16s %s", b64, b64 + 16, b64 + 32);
	o = (size_t)snprintf(vpct, sizeof(vpct), "V_PCT=");
	for (const char *c = real_token; *c != '\0' && o + 6 < sizeof(vpct); c++)
		o += (size_t)snprintf(vpct + o, sizeof(vpct) - o, "%%25%02X", (unsigned char)*c);
	snprintf(vcont, sizeof(vcont), "V_CONT=%.12s\\\n%s", real_token, real_token + 12);
	/* the reproducer's: base64 of "user:" and the value's first 31 bytes */
	snprintf(user, sizeof(user), "user:%.31s", real_token);
	part = test_base64(user, strlen(user));
	CU_ASSERT_PTR_NOT_NULL_FATAL(part);
	snprintf(vpart, sizeof(vpart), "V_PART=%.16s %.16s %s", part, part + 16, part + 32);
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "status %d", st);
	for (size_t i = 1; env[i] != NULL; i++) {
		const char *v = strchr(env[i], '=') + 1;
		char head[40], name[24];

		snprintf(name, sizeof(name), "%.*s", (int)(strchr(env[i], '=') - env[i]), env[i]);
		snprintf(head, sizeof(head), "%s=", name);
		ROW(!test_has(out, head) && !test_has(out, v), "%s reached the command", name);
		ROW(test_has(err, name), "%s was not named", name);
	}
	ROW(!test_has(out, real_token) && !test_has(err, real_token), "the real value reached the command");
	ROW(test_has(err, "encoded") && test_has(err, "not passed to the command"), "no line named the variables");
	free(out);
	free(err);
	out = err = NULL;
	/* the base64 of its UTF-16LE: the command gets the sentinel's */
	snprintf(vu16le, sizeof(vu16le), "V_U16LE=%s", u16le);
	env[1] = vu16le;
	env[2] = NULL;
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN") && test_has(out, "V_U16LE=") && !test_has(out, u16le),
	    "V_U16LE (base64 of the value's UTF-16LE): status %d, not re-masked", st);
	ROW(test_has(err, "V_U16LE held a masked credential's real value: the command gets the sentinel"),
	    "V_U16LE was not named");
	free(out);
	free(err);
	out = err = NULL;
	/* an argument holding its hex refuses the start */
	env[1] = NULL;
	args[1] = hex;
	st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
	ROW(st != 0 && !test_has(out, "RAN"), "the command started with the hex of the value in its arguments");
	ROW(test_has(err, "argument 3 holds a masked credential's real value encoded"),
	    "run did not name the argument: %s", err != NULL && !test_has(err, hex) ? err : "(withheld)");
	ROW(!test_has(err, hex) && !test_has(err, real_token), "run printed the value");
	free(out);
	free(err);
	free(hex);
	free(b32);
	free(u16);
	free(u16le);
	free(b64);
	free(part);
}

/* Each byte of v after lead, in fmt, then tail, into out (size sz). */
static void test_each(char *out, size_t sz, const char *lead, const char *v, const char *fmt, const char *tail)
{
	size_t o = (size_t)snprintf(out, sz, "%s", lead);

	for (; *v != '\0' && o + 16 < sz; v++)
		o += (size_t)snprintf(out + o, sz - o, fmt, (unsigned char)*v);
	snprintf(out + o, sz - o, "%s", tail);
}

/*
 * fix36m: the escapes and quotings a program or a shell carries a value
 * into a variable or an argument in: split by quotes ("ab""cd",
 * 'ab'"cd"), \xHH of $'..', octal, JSON's \u00XX, the same inside a
 * shell's single quotes (\\u), HTML's &#NN;, %uHHHH, a backslash before
 * every byte, rot13, reversed, a part of 14 bytes. Each variable is
 * dropped, and named; an argument split by quotes or in \xHH refuses the
 * start. Left: ordinary arguments full of escapes and quotes, another
 * GitHub token, and (the masked value an AWS session token) another
 * session's token, which shares its first 50 bytes.
 */
static void test_remask_escaped(void)
{
	char gh[1200], e[13][700], rot[48], rev[48], a1[400], a2[400], other[48], aws[2][1100];
	const char *env[15];
	const char *args[] = {"x", NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	char home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX];
	struct test_sbx_run r = {at(work, "work"), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env, NULL};
	static const char script[] = "env | grep '^V_'\nprintf '%s\\n' \"$@\" | grep -c . >/dev/null\necho RAN\n";
	size_t n = strlen(real_token);
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	for (size_t i = 0; i < n; i++) {
		int c = real_token[i];

		rot[i] = (char)(isupper(c) ? 'A' + (c - 'A' + 13) % 26 : islower(c) ? 'a' + (c - 'a' + 13) % 26 : c);
		rev[n - 1 - i] = (char)c;
	}
	rot[n] = rev[n] = '\0';
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	/* pieces of 6 and 7 bytes: none holds a window of the value */
	snprintf(e[0], sizeof(e[0]), "V_QQ=\"%.7s\"\"%.7s\"\"%.7s\"\"%.7s\"\"%.7s\"\"%s\"", real_token,
		 real_token + 7, real_token + 14, real_token + 21, real_token + 28, real_token + 35);
	snprintf(e[1], sizeof(e[1]), "V_SQDQ='%.6s'\"%.6s\"'%.6s'\"%.6s\"$'%.6s'\"%.6s\"%s", real_token,
		 real_token + 6, real_token + 12, real_token + 18, real_token + 24, real_token + 30, real_token + 36);
	test_each(e[2], sizeof(e[2]), "V_ANSI=$'", real_token, "\\x%02x", "'");
	test_each(e[3], sizeof(e[3]), "V_OCT=", real_token, "\\%03o", "");
	test_each(e[4], sizeof(e[4]), "V_JSON={\"token\":\"", real_token, "\\u%04x", "\"}");
	test_each(e[5], sizeof(e[5]), "V_JSONSQ='{\"token\":\"", real_token, "\\\\u%04X", "\"}'");
	test_each(e[6], sizeof(e[6]), "V_HTML=<p>", real_token, "&#%d;", "</p>");
	test_each(e[7], sizeof(e[7]), "V_PCTU=", real_token, "%%u%04X", "");
	test_each(e[8], sizeof(e[8]), "V_BSL=", real_token, "\\%c", "");
	snprintf(e[9], sizeof(e[9]), "V_ROT13=%s", rot);
	snprintf(e[10], sizeof(e[10]), "V_REV=%s", rev);
	snprintf(e[11], sizeof(e[11]), "V_PART14=id:%.14s", real_token + 9);
	test_each(e[12], sizeof(e[12]), "V_XDIGITS=", real_token, "\\x%02X", "");
	env[0] = gh;
	for (size_t i = 0; i < ARRAY_LEN(e); i++)
		env[i + 1] = e[i];
	env[ARRAY_LEN(e) + 1] = NULL;
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "status %d", st);
	for (size_t i = 0; i < ARRAY_LEN(e); i++) {
		char head[24];

		snprintf(head, sizeof(head), "%.*s", (int)(strchr(e[i], '=') - e[i] + 1), e[i]);
		ROW(!test_has(out, head), "%s reached the command", head);
		head[strlen(head) - 1] = '\0';
		ROW(test_has(err, head), "%s was not named", head);
	}
	ROW(!test_has(out, real_token) && !test_has(err, real_token), "the real value reached the command");
	free(out);
	free(err);
	out = err = NULL;
	/* an argument split by quotes, or in \xHH, refuses the start */
	env[1] = NULL;
	for (size_t k = 0; k < 2; k++) {
		args[1] = k == 0 ? e[0] + 5 : e[2] + 7;
		st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
		ROW(st != 0 && !test_has(out, "RAN") &&
			test_has(err, "argument 3 holds a masked credential's real value encoded"),
		    "the command started with the value %s in its arguments", k == 0 ? "split by quotes" : "in \\xHH");
		ROW(!test_has(err, real_token), "run printed the value");
		free(out);
		free(err);
		out = err = NULL;
	}
	/* left: ordinary arguments with escapes and quotes, another token */
	CU_ASSERT_FATAL(test_ghp_token(other) == 0);
	snprintf(a1, sizeof(a1), "{\"msg\":\"caf\\u00e9 \\\"q\\\" \\/x\\n\",\"n\":\"\\x41\\101\"} %s", other);
	snprintf(a2, sizeof(a2), "PS1='\\[\\e[1;32m\\]\\u@\\h:\\w\\$ ' &lt;b&gt;&#169; %%u00e9 \"a\"\"b\" $'\\t'");
	args[1] = a1;
	args[2] = a2;
	args[3] = "https://example.com/search?q=%22hello%20world%22&lang=en";
	args[4] = "--format=%(refname:short) %(objectname)";
	args[5] = "s/\\(foo\\)\\([0-9]*\\)/\\2\\1/g";
	st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "ordinary arguments refused the start: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	/* an AWS session token masked, another session's in an argument */
	for (int i = 0; i < 2; i++) {
		char rnd[1000];

		for (size_t k = 0; k < 900; k += 60)
			CU_ASSERT_FATAL(test_random_alnum(rnd + k, 60) == 0);
		snprintf(aws[i], sizeof(aws[i]), "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD%s", rnd);
	}
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", aws[0]);
	args[1] = aws[1];
	args[2] = NULL;
	st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "another AWS session's token refused the start: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	snprintf(a1, sizeof(a1), "'%.40s'\"%.40s\"", aws[0] + 100, aws[0] + 140);
	args[1] = a1;
	st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
	ROW(st != 0 && !test_has(out, "RAN"), "the masked session token's middle split by quotes started");
	free(out);
	free(err);
}

/*
 * fix36m: a bare repository's config holding a remote URL with the masked
 * value (`git clone --bare https://x:$TOKEN@host/`): git run in the bare
 * repository, or in a directory of it, reads ./config; the command reads
 * the sentinel there.
 */
static void test_remask_bare_repo(void)
{
	static const char *const cwds[] = {"g36/bare.git", "g36/bare.git/refs"};
	char gh[64], home[PATH_MAX], pol[PATH_MAX], cwd[PATH_MAX], sc[PATH_MAX];
	const char *env[] = {gh, "GIT_CONFIG_NOSYSTEM=1", NULL};
	static const char script[] = "git config remote.origin.url\ncat \"$(git rev-parse --git-dir)/config\"\n";

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p g36 && git init -q --bare g36/bare.git && git -C g36/bare.git remote add "
				 "origin 'https://x-access-token:%s@h.example/o/r.git'\n",
				 real_token),
			      0);
	for (size_t i = 0; i < ARRAY_LEN(cwds); i++) {
		struct test_sbx_run r = {at(cwd, cwds[i]), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env, NULL};
		char *out = NULL, *err = NULL;
		int st;

		snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
		CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
		st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
		ROW(st == 0, "%s: status %d", cwds[i], st);
		ROW(!test_has(out, real_token) && !test_has(err, real_token), "%s: the real value reached the command",
		    cwds[i]);
		ROW(test_has(out, "https://x-access-token:ghp_"), "%s: no remote URL with the sentinel", cwds[i]);
		free(out);
		free(err);
	}
}

/*
 * session 36: files a shell start-up file sources hold the masked value
 * (`export GH_TOKEN=...` in ~/.config/secrets/env.sh that ~/.bashrc
 * sources after `[ -f ... ] &&`, in "$HOME/.config/tok.sh" from
 * ~/.zshrc, in /ROOT/etc-tok.sh by its absolute name, and in a file
 * those source in turn): the command reads the sentinel in each. A
 * sourced name built from another variable is not followed (said in
 * docs/masking.md).
 */
static void test_remask_sourced(void)
{
	static const char *const files[] = {"home36/.config/secrets/env.sh", "home36/.config/tok.sh",
					     "etc-tok.sh", "home36/.config/deeper.sh"};
	char gh[64], home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX], body[600], script[1200];
	const char *env[] = {gh, NULL};
	struct test_sbx_run r = {at(work, "work"), at(home, "home36"), NULL, at(pol, "work.yaml"), sc, env, NULL};
	char *out = NULL, *err = NULL;
	size_t o = 0;
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p home36/.config/secrets"), 0);
	snprintf(body, sizeof(body),
		 "# interactive\n[ -f ~/.config/secrets/env.sh ] && . ~/.config/secrets/env.sh\n"
		 "if [ -r %s/etc-tok.sh ]; then source %s/etc-tok.sh; fi\n",
		 root, root);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(sc, "home36/.bashrc"), body, strlen(body)), 0);
	snprintf(body, sizeof(body), "source \"$HOME/.config/tok.sh\"\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(sc, "home36/.zshrc"), body, strlen(body)), 0);
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		snprintf(body, sizeof(body), "export GH_TOKEN='%s'\n%s", real_token,
			 i == 0 ? ". ${HOME}/.config/deeper.sh\n" : "");
		CU_ASSERT_EQUAL_FATAL(test_write_file(at(sc, files[i]), body, strlen(body)), 0);
		o += (size_t)snprintf(script + o, sizeof(script) - o, "cat '%s/%s'\n", root, files[i]);
	}
	snprintf(script + o, sizeof(script) - o, "echo RAN\n");
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "status %d", st);
	ROW(!test_has(out, real_token) && !test_has(err, real_token), "the real value reached the command");
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		const char *name = strrchr(files[i], '/') != NULL ? strrchr(files[i], '/') + 1 : files[i];

		ROW(test_has(err, name), "%s was not named as re-masked", files[i]);
	}
	ROW(test_count(out, "export GH_TOKEN='ghp_") == ARRAY_LEN(files), "not every file was read with the sentinel");
	free(out);
	free(err);
}

/*
 * The review of session 36 (review36b): what a start-up file sources may
 * be no regular file. ~/.bashrc sources a FIFO, /dev/zero and a file
 * that sources itself and .bashrc, then the file holding the value;
 * ~/.zshrc is itself a FIFO. The start neither hangs (fopen() of the
 * FIFO blocked until a writer came, /dev/zero was read for ever) nor
 * misses the file after them.
 */
static void test_remask_sourced_special(void)
{
	char gh[64], home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX], body[600], script[600];
	const char *env[] = {gh, NULL};
	struct test_sbx_run r = {at(work, "work"), at(home, "home36s"), NULL, at(pol, "work.yaml"), sc, env, NULL};
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p home36s/.config && mkfifo home36s/pipe home36s/.zshrc"), 0);
	snprintf(body, sizeof(body),
		 "source ~/pipe\n. /dev/zero\nsource /dev/stdin\nsource ~/loop.sh\nsource ~/.config/tok.sh\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(sc, "home36s/.bashrc"), body, strlen(body)), 0);
	snprintf(body, sizeof(body), "source ~/loop.sh\n. ~/.bashrc\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(sc, "home36s/loop.sh"), body, strlen(body)), 0);
	snprintf(body, sizeof(body), "export GH_TOKEN='%s'\n", real_token);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(sc, "home36s/.config/tok.sh"), body, strlen(body)), 0);
	snprintf(script, sizeof(script), "cat '%s/home36s/.config/tok.sh'\necho RAN\n", root);
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
	st = test_sbx_run(&r, &out, &err, 20000);
	ROW(st == 0 && test_has(out, "RAN"), "status %d (a sourced FIFO or /dev/zero hung the start?)", st);
	ROW(!test_has(out, real_token) && !test_has(err, real_token), "the real value reached the command");
	ROW(test_has(out, "export GH_TOKEN='ghp_"), "tok.sh, sourced after them, was not read with the sentinel");
	free(out);
	free(err);
}

/* base64url of in, no padding: a JWT's segment (malloc'd). */
static char *test_b64url(const char *in)
{
	char *b = test_base64(in, strlen(in));

	for (char *c = b; c != NULL && *c != '\0'; c++) {
		if (*c == '=') {
			*c = '\0';
			break;
		}
		*c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
	}
	return b;
}

/*
 * The review of round 35: a masked JWT (a Supabase service_role key)
 * refused the start of `run -- CMD "$ANON_KEY"`, the project's public
 * anon key in an argument: both are base64 of public JSON with the same
 * header and the same first claims, which the value's 16-byte windows
 * found. The anon key reaches the command as an argument (in a
 * variable the environment rule drops it as a JWT, whatever the
 * masked value); the masked key's signature hex-encoded in a variable
 * is still dropped, and named.
 */
static void test_remask_jwt_neighbours(void)
{
	char ref[24], sig[2][48], json[256], svc[512], anon[512], genv[600], vhex[300], *hex = NULL;
	char *hdr = test_b64url("{\"alg\":\"HS256\",\"typ\":\"JWT\"}"), *pay[2] = {NULL, NULL};
	const char *env[] = {genv, vhex, NULL, NULL};
	const char *args[] = {"x", anon, NULL};
	char home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX];
	struct test_sbx_run r = {at(work, "work"), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env, NULL};
	static const char script[] = "env | grep '^V_'\necho RAN\n";
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(test_random_alnum(ref, 20) == 0 && test_random_alnum(sig[0], 43) == 0 &&
			test_random_alnum(sig[1], 43) == 0);
	ref[20] = sig[0][43] = sig[1][43] = '\0';
	for (int i = 0; i < 2; i++) {
		snprintf(json, sizeof(json),
			 "{\"iss\":\"supabase\",\"ref\":\"%s\",\"role\":\"%s\",\"iat\":1700000000,"
			 "\"exp\":2015000000}",
			 ref, i == 0 ? "service_role" : "anon");
		pay[i] = test_b64url(json);
	}
	CU_ASSERT_FATAL(hdr != NULL && pay[0] != NULL && pay[1] != NULL);
	snprintf(svc, sizeof(svc), "%s.%s.%s", hdr, pay[0], sig[0]);
	snprintf(anon, sizeof(anon), "%s.%s.%s", hdr, pay[1], sig[1]);
	hex = test_hex(sig[0], strlen(sig[0]));
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	snprintf(genv, sizeof(genv), "GH_TOKEN=%s", svc);
	snprintf(vhex, sizeof(vhex), "V_SIG_HEX=%s", hex);
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "status %d", st);
	ROW(!test_has(out, "V_SIG_HEX") && test_has(err, "V_SIG_HEX"), "the signature's hex reached the command");
	ROW(!test_has(out, svc) && !test_has(err, svc) && !test_has(out, sig[0]), "the masked key reached the command");
	free(out);
	free(err);
	out = err = NULL;
	env[1] = NULL;
	st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "an argument holding the anon key refused the start: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	/* Slack: a masked bot token, another bot's of the same workspace in
	 * an argument (the same "xoxb-TEAM-") starts; the masked one's
	 * secret part hex-encoded still refuses */
	snprintf(genv, sizeof(genv), "GH_TOKEN=xoxb-12345678901-1234567890123-%.24s", sig[0]);
	snprintf(anon, sizeof(anon), "xoxb-12345678901-9876543210987-%.24s", sig[1]);
	st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "an argument holding another bot's token refused the start: %s",
	    test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	free(hex);
	hex = test_hex(sig[0], 24);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	args[1] = hex;
	st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "argument 3 holds a masked credential's real value"),
	    "an argument holding the masked token's secret part in hex started");
	free(out);
	free(err);
	out = err = NULL;
	/* a URL: a masked DATABASE_URL's host in PGHOST and in an argument
	 * reaches the command; its password's hex does not */
	snprintf(genv, sizeof(genv), "GH_TOKEN=postgresql://appuser:%.20s@db-primary.internal.example.com:5432/appdb",
		 sig[0]);
	free(hex);
	hex = test_hex(sig[0], 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	snprintf(vhex, sizeof(vhex), "V_PW_HEX=%s", hex);
	env[1] = "V_PGHOST=db-primary.internal.example.com:5432";
	env[2] = vhex;
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "V_PGHOST=db-primary.internal.example.com:5432\n"),
	    "the masked URL's host did not reach the command: %s", test_nz(err));
	ROW(!test_has(out, "V_PW_HEX") && test_has(err, "V_PW_HEX"), "the password's hex reached the command");
	free(out);
	free(err);
	out = err = NULL;
	env[1] = NULL;
	args[1] = "postgresql://appuser@db-primary.internal.example.com:5432/appdb";
	st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "an argument naming the masked URL's host refused the start: %s",
	    test_nz(err));
	free(out);
	free(err);
	free(hex);
	free(hdr);
	free(pay[0]);
	free(pay[1]);
}


/*
 * The runs of test_remask_key_neighbours() and
 * test_remask_sk_key_neighbours(): dir/mine masked (as GH_TOKEN, less
 * than max bytes), then a command with an argument holding dir/other
 * (other_what: what it is), one holding dir/mine.pub (both start) and one
 * holding dir/mine hex-encoded (refused). key: what dir/mine is.
 */
static void key_neighbours(const char *dir, size_t max, const char *other_what, const char *key)
{
	char genv[1200], path[PATH_MAX], home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX], rel[64];
	char *mine, *other, *pub, *hex;
	const char *env[] = {genv, NULL};
	const char *args[] = {"x", NULL, NULL};
	struct test_sbx_run r = {at(work, "work"), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env, NULL};
	static const char script[] = "echo RAN\n";
	char *out = NULL, *err = NULL;
	int st;

	snprintf(rel, sizeof(rel), "%s/mine", dir);
	mine = test_read_file(at(path, rel), NULL);
	snprintf(rel, sizeof(rel), "%s/other", dir);
	other = test_read_file(at(path, rel), NULL);
	snprintf(rel, sizeof(rel), "%s/mine.pub", dir);
	pub = test_read_file(at(path, rel), NULL);
	CU_ASSERT_FATAL(mine != NULL && other != NULL && pub != NULL && strlen(mine) < max && max < sizeof(genv) - 16);
	hex = test_hex(mine, strlen(mine));
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	snprintf(genv, sizeof(genv), "GH_TOKEN=%s", mine);
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
	for (int i = 0; i < 3; i++) {
		args[1] = i == 0 ? other : i == 1 ? pub : hex;
		st = test_sbx_run_args(&r, args, &out, &err, RUN_TIMEOUT_MS);
		if (i == 0)
			ROW(st == 0 && test_has(out, "RAN"), "an argument holding %s refused the start: %s", other_what,
			    test_nz(err));
		else if (i == 1)
			ROW(st == 0 && test_has(out, "RAN"), "an argument holding %s's .pub refused the start: %s", key,
			    test_nz(err));
		else
			ROW(st != 0 && !test_has(out, "RAN") &&
				    test_has(err, "argument 3 holds a masked credential's real value encoded"),
			    "an argument holding %s hex-encoded started", key);
		free(out);
		free(err);
		out = err = NULL;
	}
	free(mine);
	free(other);
	free(pub);
	free(hex);
}

/*
 * fix37m: a masked OpenSSH private key (an ed25519 key in the masked
 * variable, as `ssh-keygen` writes it) refused the start of a command
 * given another ed25519 key of the same comment, or the key's own .pub,
 * in an argument: the windows of the masked key's public structure
 * ("-----BEGIN OPENSSH PRIVATE KEY-----", "openssh-key-v1 none none",
 * the key type, the public key, the comment) are every such key's. Both
 * now start; the masked key hex-encoded in an argument still refuses.
 */
static void test_remask_key_neighbours(void)
{
	SKIP_IF_NEEDED();
	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p k37 && for k in mine other; do "
				 "ssh-keygen -q -t ed25519 -N '' -C dev@laptop -f k37/$k </dev/null >/dev/null || exit 1; done"),
			      0);
	key_neighbours("k37", 500, "another ed25519 key of the same comment", "the masked key");
}

/*
 * review37b: a masked FIDO key of OpenSSH (sk-ssh-ed25519@openssh.com,
 * ssh-keygen -t ed25519-sk: a flags byte among its private strings) was
 * looked for whole after its checkints, so an argument holding another
 * such key, or its own .pub, refused the start (the key type, the
 * public key and "ssh:" are theirs too). Both start now; the key's hex
 * refuses. The keys are made by a script (OpenSSH's format,
 * PROTOCOL.u2f: no token needed).
 */
static void test_remask_sk_key_neighbours(void)
{
	static const char py[] =
		"import base64, os, struct, sys\n"
		"\n"
		"def s(b):\n"
		"    return struct.pack(\">I\", len(b)) + b\n"
		"\n"
		"kt = b\"sk-ssh-ed25519@openssh.com\"\n"
		"pub = os.urandom(32)\n"
		"app = b\"ssh:\"\n"
		"handle = os.urandom(96)\n"
		"pubblob = s(kt) + s(pub) + s(app)\n"
		"chk = os.urandom(4)\n"
		"priv = chk + chk + s(kt) + s(pub) + s(app) + bytes([0x01]) + s(handle) + s(b\"\") + s(b\"me@host\")\n"
		"i = 1\n"
		"while len(priv) % 8:\n"
		"    priv += bytes([i]); i += 1\n"
		"blob = b\"openssh-key-v1\\0\" + s(b\"none\") + s(b\"none\") + s(b\"\") + struct.pack(\">I\", 1) + s(pubblob) + s(priv)\n"
		"b64 = base64.b64encode(blob).decode()\n"
		"with open(sys.argv[1], \"w\") as f:\n"
		"    f.write(\"-----BEGIN OPENSSH PRIVATE KEY-----\\n\")\n"
		"    for k in range(0, len(b64), 70):\n"
		"        f.write(b64[k:k + 70] + \"\\n\")\n"
		"    f.write(\"-----END OPENSSH PRIVATE KEY-----\\n\")\n"
		"with open(sys.argv[1] + \".pub\", \"w\") as f:\n"
		"    f.write(\"sk-ssh-ed25519@openssh.com \" + base64.b64encode(pubblob).decode() + \" me@host\\n\")\n";
	char path[PATH_MAX];

	SKIP_IF_NEEDED();
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "mksk.py"), py, strlen(py)), 0);
	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p sk37 && python3 mksk.py sk37/mine && python3 mksk.py sk37/other"), 0);
	key_neighbours("sk37", 1000, "another FIDO key of OpenSSH", "the masked FIDO key");
}

/*
 * review37b: a whole file masked holding an SSH public key (a PuTTY
 * key's Public-Lines): its base64 was looked for, which every key of
 * its type begins with and the key's .pub is: a .gitconfig signing with
 * that key (user.signingkey = key::ssh-rsa AAAA...) refused the start.
 * It starts now; the key's private line in the file refuses.
 */
static void test_remask_putty_key_neighbours(void)
{
	char path[PATH_MAX], genv[4096], body[2048], *pk, *b, *e;
	const char *env[] = {genv, NULL};
	char *out = NULL, *err = NULL;
	size_t o;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p pp37 && ssh-keygen -q -t rsa -b 2048 -N '' -C me -f pp37/k </dev/null >/dev/null"),
			      0);
	pk = test_read_file(at(path, "pp37/k.pub"), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pk);
	b = strchr(pk, ' ') + 1;
	e = strchr(b, ' ');
	o = (size_t)snprintf(genv, sizeof(genv),
			     "GH_TOKEN=PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: me\nPublic-Lines: %zu\n",
			     ((size_t)(e - b) + 63) / 64);
	for (const char *c = b; c < e; c += 64)
		o += (size_t)snprintf(genv + o, sizeof(genv) - o, "%.*s\n", (int)(e - c < 64 ? e - c : 64), c);
	snprintf(genv + o, sizeof(genv) - o,
		 "Private-Lines: 1\nAAAAIQDXaq8Zr3vN0pX7sLk2WmT5yHb1cJd4f\nPrivate-MAC: 3f9a1c77e0b24d5a8c6e2f1b9d0a4c7e\n");
	snprintf(body, sizeof(body), "[user]\n\tname = Dev\n\tsigningkey = key::%s[gpg]\n\tformat = ssh\n", pk);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.gitconfig"), body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN"), "a .gitconfig signing with the masked PuTTY key's public key refused the start: %s",
	    test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	(void)unlink(at(path, "work/.gitconfig"));
	snprintf(body, sizeof(body), "KEY_LINE=AAAAIQDXaq8Zr3vN0pX7sLk2WmT5yHb1cJd4f\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.env"), body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "/work/.env held a masked credential's real value"),
	    "the masked PuTTY key's private line in .env started");
	free(out);
	free(err);
	free(pk);
	(void)unlink(at(path, "work/.env"));
}

/* base64url of the n bytes at in without padding (malloc'd). */
static char *test_b64url_n(const char *in, size_t n)
{
	char *b = test_base64(in, n);

	for (char *c = b; c != NULL && *c != '\0'; c++) {
		if (*c == '=') {
			*c = '\0';
			break;
		}
		*c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
	}
	return b;
}

/*
 * fix37m: files the command reads (the dot files of the working
 * directory, searched by the re-masker) holding the masked value in a
 * form the re-masker does not rewrite reached the command: only
 * variables and arguments were searched for encoded forms. Its hex in
 * .env, Python's \N{...} escapes in .secrets.py, unpadded URL-safe
 * base64 of its UTF-16BE in .tokrc (of the value itself, and since
 * round 46 of its UTF-16LE, the re-masker rewrites it), and the value
 * split across two files
 * (.env.one and .env.two, 20 bytes each): the start is refused, naming
 * each file. Left: another token's hex, JSON escapes, \N{DEGREE SIGN}.
 */
static void test_remask_encoded_files(void)
{
	static const char *const names[] = {".env", ".secrets.py", ".tokrc", ".env.one", ".env.two"};
	char gh[64], path[PATH_MAX], body[2048], other[41], user[64], wide[80];
	const char *env[] = {gh, NULL};
	char *hex = test_hex(real_token, strlen(real_token)), *ohex = NULL, *b64 = NULL, *out = NULL, *err = NULL;
	size_t o;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(hex != NULL && test_ghp_token(other) == 0);
	for (size_t i = 0; i < 40; i++) { /* UTF-16BE */
		wide[2 * i] = '\0';
		wide[2 * i + 1] = real_token[i];
	}
	b64 = test_b64url_n(wide, 80);
	ohex = test_hex(other, strlen(other));
	CU_ASSERT_FATAL(b64 != NULL && ohex != NULL);
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		if (i == 0) {
			snprintf(body, sizeof(body), "TOKEN_HEX=%s\n", hex);
		} else if (i == 1) {
			o = (size_t)snprintf(body, sizeof(body), "t = \"");
			for (const char *c = real_token; *c != '\0'; c++)
				o += (size_t)(isdigit((unsigned char)*c)
						      ? snprintf(body + o, sizeof(body) - o, "%c", *c)
						      : snprintf(body + o, sizeof(body) - o, "\\N{LATIN %s LETTER %c}",
								 isupper((unsigned char)*c) ? "CAPITAL" : "SMALL",
								 toupper((unsigned char)*c)));
			snprintf(body + o, sizeof(body) - o, "\"\n");
		} else if (i == 2) {
			snprintf(body, sizeof(body), "auth=%s\n", b64);
		} else {
			snprintf(body, sizeof(body), "PART=%.20s\n", real_token + (i == 3 ? 0 : 20));
		}
		snprintf(user, sizeof(user), "work/%s", names[i]);
		CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, user), body, strlen(body)), 0);
	}
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN"), "the command started with the value encoded in files it reads");
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		snprintf(body, sizeof(body), "/work/%s", names[i]);
		ROW(test_has(err, body), "%s was not named", names[i]);
	}
	ROW(test_has(err, "encoded") && test_has(err, "not starting"), "run did not say why: %s",
	    err != NULL && !test_has(err, real_token) ? err : "(withheld)");
	ROW(!test_has(out, real_token) && !test_has(err, real_token), "the real value was printed");
	free(out);
	free(err);
	out = err = NULL;
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		snprintf(body, sizeof(body), "work/%s", names[i]);
		(void)unlink(at(path, body));
	}
	/* look-alikes start */
	snprintf(body, sizeof(body), "OTHER_HEX=%s\nJSON='{\"a\":\"caf\\u00e9\\n\"}'\n", ohex);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.env"), body, strlen(body)), 0);
	snprintf(body, sizeof(body), "print(\"20\\N{DEGREE SIGN}C \\N{LATIN SMALL LETTER E WITH ACUTE}\")\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.secrets.py"), body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN"), "ordinary files refused the start: %s", test_nz(err));
	free(out);
	free(err);
	(void)unlink(at(path, "work/.env"));
	(void)unlink(at(path, "work/.secrets.py"));
	free(hex);
	free(ohex);
	free(b64);
}

/*
 * review37b (the family of fix37m's Python \N{NAME}): Perl's brace
 * escapes \x{H..}, \o{O..} and \N{U+H..} of the masked value, in the
 * project's dot files, reached the command (they were no escape the
 * search decoded). Each file is named and the start refused; Perl's
 * ordinary escapes ("\x{263A}", "caf\N{U+E9}") start.
 */
static void test_remask_perl_escapes(void)
{
	static const char *const names[] = {".deploy.pl", ".release.pl", ".notify.pl"};
	static const char *const forms[] = {"\\x{%x}", "\\o{%o}", "\\N{U+%04X}"};
	char gh[64], path[PATH_MAX], body[2048], user[64];
	const char *env[] = {gh, NULL};
	char *out = NULL, *err = NULL;
	size_t o;
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		o = (size_t)snprintf(body, sizeof(body), "my $t = \"");
		for (const char *c = real_token; *c != '\0'; c++)
			o += (size_t)snprintf(body + o, sizeof(body) - o, forms[i], (unsigned char)*c);
		snprintf(body + o, sizeof(body) - o, "\";\n");
		snprintf(user, sizeof(user), "work/%s", names[i]);
		CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, user), body, strlen(body)), 0);
	}
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN"), "the command started with the value in Perl's escapes in files it reads");
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		snprintf(body, sizeof(body), "/work/%s held a masked credential", names[i]);
		ROW(test_has(err, body) || (test_has(err, names[i]) && test_has(err, "encoded")), "%s (%s) was not named: %s",
		    names[i], forms[i], err != NULL && !test_has(err, real_token) ? err : "(withheld)");
	}
	ROW(!test_has(out, real_token) && !test_has(err, real_token), "the real value was printed");
	free(out);
	free(err);
	out = err = NULL;
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		snprintf(user, sizeof(user), "work/%s", names[i]);
		(void)unlink(at(path, user));
	}
	snprintf(body, sizeof(body), "print \"\\x{263A} caf\\N{U+E9} \\o{101}\\x{42}\\N{U+43}\\n\";\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.deploy.pl"), body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN"), "Perl's ordinary escapes refused the start: %s", test_nz(err));
	free(out);
	free(err);
	(void)unlink(at(path, "work/.deploy.pl"));
}

/*
 * review37b (the family of Python's \N{NAME}): Ruby's \u{H.. H..}, code
 * points parted by white space in one group, reached the command: the
 * search takes white space out before it decodes escapes, and 3-digit
 * code points run together are no hex. A project's dot file with the
 * masked value so refuses the start; Ruby's ordinary groups start.
 */
static void test_remask_ruby_groups(void)
{
	char gh[64], path[PATH_MAX], body[2048];
	const char *env[] = {gh, NULL};
	char *out = NULL, *err = NULL;
	size_t o, n = strlen(real_token);
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	o = (size_t)snprintf(body, sizeof(body), "TOKEN = \"");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(body + o, sizeof(body) - o, "%s%03x%s", i % 8 == 0 ? "\\u{" : " ",
				      (unsigned char)real_token[i], i % 8 == 7 || i == n - 1 ? "}" : "");
	snprintf(body + o, sizeof(body) - o, "\"\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.deploy.rb"), body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "/work/.deploy.rb held a masked credential's real value"),
	    "the command started with the value in Ruby's \\u{..} groups in a file it reads");
	ROW(!test_has(out, real_token) && !test_has(err, real_token), "the real value was printed");
	free(out);
	free(err);
	out = err = NULL;
	snprintf(body, sizeof(body), "puts \"\\u{1F600 1F601} caf\\u{e9} \\u{41 42 43}\"\n");
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.deploy.rb"), body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN"), "Ruby's ordinary \\u{..} groups refused the start: %s", test_nz(err));
	free(out);
	free(err);
	(void)unlink(at(path, "work/.deploy.rb"));
}


/*
 * fix37m: the masked value in pieces of 12 bytes in separate variables
 * (V_P1, V_P2: bytes 5-16 and 17-28 of the 40, the second hex-encoded)
 * reached the command: a part was found from 14 bytes (12-byte windows
 * every 3rd byte), so a piece not starting on a window passed. Now every
 * 12-byte window is looked for: both are dropped; a piece of 11 bytes
 * still passes (the bound, docs/masking.md).
 */
static void test_remask_pieces(void)
{
	char gh[64], p1[64], p2[64], p3[64];
	const char *env[] = {gh, p1, p2, p3, NULL};
	char home[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX];
	struct test_sbx_run r = {at(work, "work"), at(home, "home"), NULL, at(pol, "work.yaml"), sc, env, NULL};
	static const char script[] = "env | grep '^V_P'\necho RAN\n";
	char *out = NULL, *err = NULL, *hex;
	int st;

	SKIP_IF_NEEDED();
	hex = test_hex(real_token + 17, 12);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	snprintf(p1, sizeof(p1), "V_P1=%.12s", real_token + 5);
	snprintf(p2, sizeof(p2), "V_P2=%s", hex);
	snprintf(p3, sizeof(p3), "V_P3=%.11s", real_token + 29);
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_EQUAL_FATAL(test_write_file(sc, script, strlen(script)), 0);
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "RAN"), "status %d", st);
	ROW(!test_has(out, "V_P1=") && test_has(err, "V_P1"), "a 12-byte piece of the value reached the command");
	ROW(!test_has(out, "V_P2=") && test_has(err, "V_P2"), "a 12-byte piece's hex reached the command");
	ROW(test_has(out, "V_P3="), "an 11-byte piece was dropped (below the bound)");
	free(out);
	free(err);
	free(hex);
}


/*
 * fix37m: a whole AWS credentials file masked (in the masked variable,
 * as a whole-file credential holds it) and a project's .env setting
 * another account's AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: the
 * start was refused (the file's windows "aws_access_k", "[default]" are
 * every such file's, and the .env is searched). It starts; the masked
 * file's secret in hex in the .env still refuses.
 */
static void test_remask_whole_file_neighbours(void)
{
	static const char aws[] = "GH_TOKEN=[default]\naws_access_key_id = AKIA4XQ7Z2M9KD3LP8WQ\n"
				  "aws_secret_access_key = q8Zr3vN0pX7sLk2WmT5yHb1cJd4fGe6iUo9aQw0E\nregion = eu-west-1\n";
	static const char dotenv[] = "AWS_ACCESS_KEY_ID=AKIA7B2N5V8C1X4Z6M3Q\n"
				     "AWS_SECRET_ACCESS_KEY=Zz0Yy9Xx8Ww7Vv6Uu5Tt4Ss3Rr2Qq1Pp0Oo9Nn8Mm\n"
				     "AWS_DEFAULT_REGION=eu-west-1\n";
	const char *env[] = {aws, NULL};
	char path[PATH_MAX], body[256], *hex, *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.env"), dotenv, strlen(dotenv)), 0);
	st = run_cst(env, "cat .env\necho RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN") && test_has(out, "AWS_SECRET_ACCESS_KEY=Zz0Yy9"),
	    "a .env with another account's AWS keys refused the start: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	hex = test_hex("q8Zr3vN0pX7sLk2WmT5yHb1cJd4fGe6iUo9aQw0E", 40);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	snprintf(body, sizeof(body), "%sSECRET_HEX=%s\n", dotenv, hex);
	CU_ASSERT_EQUAL_FATAL(test_write_file(path, body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "/work/.env held a masked credential's real value encoded"),
	    "the masked file's secret in hex in .env started");
	free(out);
	free(err);
	free(hex);
	(void)unlink(path);
}

/*
 * fix38m: a compressed file among those searched was searched as its
 * bytes are, so the real value gzip'd in a project's .env.gz, zlib'd in
 * a dot file, or in gzip's second member reached the command, which
 * only had to inflate it. Each refuses the start now; a file that
 * inflates past the bound (8 MiB) refuses too, and a gzip'd file with
 * no real value is read as it is.
 */
static void test_remask_compressed(void)
{
	static const char *const files[][2] = {
		{".env.gz", "printf 'GH_TOKEN=%s\\n' \"$T\" | gzip -c"},
		{".cfg.z", "printf 'token: %s\\n' \"$T\" | python3 -c 'import sys, zlib; "
			   "sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))'"},
		{".two.gz", "(printf 'first member\\n' | gzip -c; printf 'T=%s\\n' \"$T\" | gzip -c)"},
		{".hex.gz", "printf '%s' \"$T\" | od -An -tx1 | tr -d ' \\n' | gzip -c"},
	};
	char gh[64], path[PATH_MAX], want[PATH_MAX + 64], *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		CU_ASSERT_EQUAL_FATAL(sh("T=%s; %s > work/%s", real_token, files[i][1], files[i][0]), 0);
		st = run_cst(env, "echo RAN\n", &out, &err);
		snprintf(want, sizeof(want), "/work/%s held a masked credential's real value encoded", files[i][0]);
		ROW(st != 0 && !test_has(out, "RAN") && test_has(err, want), "the real value in %s reached the command: %s",
		    files[i][0], test_nz(err));
		free(out);
		free(err);
		out = err = NULL;
		snprintf(want, sizeof(want), "work/%s", files[i][0]);
		(void)unlink(at(path, want));
	}
	/* past the bound: refused, not passed */
	CU_ASSERT_EQUAL_FATAL(sh("head -c 9000000 /dev/zero | gzip -c > work/.big.gz"), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "/work/.big.gz is compressed and inflates past"),
	    "a file inflating past the bound was not refused: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	(void)unlink(at(path, "work/.big.gz"));
	/* no real value: read as it is */
	CU_ASSERT_EQUAL_FATAL(sh("printf 'plain words\\n' | gzip -c > work/.notes.gz"), 0);
	st = run_cst(env, "gzip -dc .notes.gz; echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "plain words") && test_has(out, "RAN"), "a gzip'd file with no real value: %s",
	    test_nz(err));
	free(out);
	free(err);
	(void)unlink(at(path, "work/.notes.gz"));
}

/*
 * review38c: fix38m inflated a file only when it began as gzip or zlib
 * data, so the same stream after a line of text (a self-extracting
 * script: `tail -c +N "$0" | gunzip`), after a byte of garbage behind
 * gzip's first member, or written in base64 (H4sI..., as Kubernetes and
 * Helm keep gzip'd data in YAML) still reached the command, which only
 * had to skip a line or decode base64 first. Each refuses the start now;
 * a value split across two gzip members refuses (held before); a
 * script carrying a gzip'd payload with no real value is read.
 */
static void test_remask_compressed_inside(void)
{
	static const char *const files[][2] = {
		{".selfx", "printf '#!/bin/sh\\ntail -c +42 \"$0\" | gunzip\\nexit\\n'; (yes 'export PATH=$PATH:/opt/bin' | head -50; printf 'T=%s\\n' \"$T\") | gzip -c"},
		{".junk.gz", "(printf 'first\\n' | gzip -c; printf 'X'; printf 'T=%s\\n' \"$T\" | gzip -c)"},
		{".env.b64", "printf 'BLOB=%s\\n' \"$(printf 'T=%s\\n' \"$T\" | gzip -c | base64 -w0)\""},
		{".vals.yaml", "printf 'data:\\n  release: %s\\n' \"$(printf 'token: %s\\n' \"$T\" | gzip -9 -c | "
			       "base64 -w 76 | tr -d '\\n')\""},
		{".zlib.b64", "printf 'Z=%s\\n' \"$(printf 'T=%s\\n' \"$T\" | python3 -c 'import sys, zlib, base64; "
			      "sys.stdout.write(base64.b64encode(zlib.compress(sys.stdin.buffer.read())).decode())')\""},
		{".split.gz", "(printf 'T=%.20s' \"$T\" | gzip -c; printf '%s\\n' \"${T#????????????????????}\" | gzip -c)"},
	};
	char gh[64], path[PATH_MAX], want[PATH_MAX + 64], *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		CU_ASSERT_EQUAL_FATAL(sh("T=%s; %s > work/%s", real_token, files[i][1], files[i][0]), 0);
		st = run_cst(env, "echo RAN\n", &out, &err);
		snprintf(want, sizeof(want), "/work/%s held a masked credential's real value encoded", files[i][0]);
		ROW(st != 0 && !test_has(out, "RAN") && test_has(err, want), "the real value in %s reached the command: %s",
		    files[i][0], test_nz(err));
		free(out);
		free(err);
		out = err = NULL;
		snprintf(want, sizeof(want), "work/%s", files[i][0]);
		(void)unlink(at(path, want));
	}
	/* 5,000 gzip headers: past the streams tried in one start, refused */
	CU_ASSERT_EQUAL_FATAL(sh("i=0; while [ $i -lt 5000 ]; do printf '\\037\\213\\010\\001'; i=$((i+1)); done > "
				 "work/.hdrs"),
			      0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "/work/.hdrs is compressed and inflates past"),
	    "5,000 gzip headers were not refused: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	(void)unlink(at(path, "work/.hdrs"));
	/* no real value: read as it is */
	CU_ASSERT_EQUAL_FATAL(sh("(printf '#!/bin/sh\\ntail -c +42 \"$0\" | gunzip\\nexit\\n'; printf 'plain words\\n' | "
				 "gzip -c) > work/.selfx; printf 'BLOB=%%s\\n' \"$(printf 'plain words\\n' | gzip -c | "
				 "base64 -w0)\" > work/.env.b64"),
			      0);
	st = run_cst(env, "sh .selfx; echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "plain words") && test_has(out, "RAN"),
	    "a script with a gzip'd payload and no real value: %s", test_nz(err));
	free(out);
	free(err);
	(void)unlink(at(path, "work/.selfx"));
	(void)unlink(at(path, "work/.env.b64"));
}

/*
 * fix39m: a binary over 1 MiB and a file over 8 MiB were named as not
 * searched and passed as they were, so an executable in ~/.local/bin
 * with the token built in, a 2 MiB binary dot file or a 9 MB log in the
 * project holding it (one of its base64 forms too, past 4 MiB, across
 * a chunk's edge) put the real value in the sandbox. They are searched
 * for the re-masker's forms now (64 MiB in one start): a real value
 * refuses the start; one without is named as searched in part.
 */
static void test_remask_big_literal(void)
{
	static const char *const files[][2] = {
		{"work/.tool", "(printf '\\177ELF'; head -c 2000000 /dev/zero; printf 'tok=%s' \"$T\"; head -c 1000 "
			       "/dev/zero) > work/.tool"},
		{"work/.big.log", "(yes 'a log line' | head -c 4194290; printf 'auth %s\\n' \"$(printf 'x:%s' \"$T\" | "
				  "base64 -w0)\"; yes 'a log line' | head -c 5000000) > work/.big.log"},
		{"home/.local/bin/tool", "mkdir -p home/.local/bin && (printf '\\177ELF'; head -c 1500000 /dev/zero; "
					 "printf '%s' \"$T\"; head -c 100 /dev/zero) > home/.local/bin/tool"},
	};
	char gh[64], path[PATH_MAX], want[PATH_MAX + 64], *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		CU_ASSERT_EQUAL_FATAL(sh("T=%s; %s", real_token, files[i][1]), 0);
		st = run_cst(env, "echo RAN\n", &out, &err);
		snprintf(want, sizeof(want), "/%s held a masked credential's real value and is a binary over 1 MiB",
			 files[i][0]);
		ROW(st != 0 && !test_has(out, "RAN") && test_has(err, want), "the real value in %s reached the command: %s",
		    files[i][0], test_nz(err));
		free(out);
		free(err);
		out = err = NULL;
		(void)unlink(at(path, files[i][0]));
	}
	/* none: named as searched in part, the start goes on */
	CU_ASSERT_EQUAL_FATAL(sh("(printf '\\177ELF'; head -c 2000000 /dev/urandom) > work/.tool"), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN") && test_has(err, "only as they are, in JSON and in base64") &&
		test_has(err, "/work/.tool"),
	    "a 2 MB binary with no real value: status %d, err %s", st, test_nz(err));
	free(out);
	free(err);
	(void)unlink(at(path, "work/.tool"));
	CU_ASSERT_EQUAL(sh("rm -rf home/.local/bin"), 0);
}

/*
 * fix39m: the search of the files the command reads inflated gzip
 * wherever it was and zlib at a file's or a base64 run's start only, and
 * searched what came out as text: a zip's deflated member, zlib after a
 * line of text or a few bytes of a base64 run, gzip in base64 in gzip,
 * gzip in hex (xxd -p, od) reached the command, and xz, bzip2 and zstd
 * were read as their bytes are. Each refuses the start now: the first as
 * a real value encoded, the formats zlib does not read as packed in a
 * form not searched (fail closed). A zip, an executable and random bytes
 * with no real value start.
 */
static void test_remask_packed_more(void)
{
	static const char *const found[][2] = {
		{".keys.zip", "printf 'T=%s\\n' \"$T\" | python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "
			      "\"w\", zipfile.ZIP_DEFLATED); z.writestr(\"a.txt\", \"x\" * 100); z.writestr(\"env\", "
			      "sys.stdin.read()); z.close()' /dev/stdout | cat"},
		{".mid.z", "printf 'header line\\n'; printf 'T=%s\\n' \"$T\" | python3 -c 'import sys, zlib; "
			   "sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))'"},
		{".mid.b64", "printf 'Z=%s\\n' \"$(printf 'T=%s\\n' \"$T\" | python3 -c 'import sys, zlib, base64; "
			     "sys.stdout.write(base64.b64encode(b\"abc\" + zlib.compress(sys.stdin.buffer.read())).decode())')\""},
		{".nest.gz", "printf 'BLOB=%s\\n' \"$(printf 'T=%s\\n' \"$T\" | gzip -c | base64 -w0)\" | gzip -c"},
		{".dump.hex", "printf 'T=%s\\n' \"$T\" | gzip -c | xxd -p"},
		{".od.hex", "printf 'T=%s\\n' \"$T\" | gzip -c | od -An -tx1"},
	};
	static const char *const unread[][2] = {
		{".env.xz", "printf 'T=%s\\n' \"$T\" | xz -c"},
		{".env.bz2", "printf 'T=%s\\n' \"$T\" | bzip2 -c"},
		{".env.zst", "printf 'T=%s\\n' \"$T\" | zstd -q -c"},
		{".bz.zip", "printf 'T=%s\\n' \"$T\" | python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "
			    "\"w\", zipfile.ZIP_BZIP2); z.writestr(\"env\", sys.stdin.read()); z.close()' /dev/stdout | cat"},
	};
	char gh[64], path[PATH_MAX], want[PATH_MAX + 64], *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	for (size_t u = 0; u < 2; u++) {
		const char *const(*files)[2] = u ? unread : found;
		size_t nf = u ? ARRAY_LEN(unread) : ARRAY_LEN(found);

		for (size_t i = 0; i < nf; i++) {
			CU_ASSERT_EQUAL_FATAL(sh("T=%s; (%s) > work/%s", real_token, files[i][1], files[i][0]), 0);
			st = run_cst(env, "echo RAN\n", &out, &err);
			snprintf(want, sizeof(want),
				 u ? "/work/%s holds data packed in a form not searched"
				   : "/work/%s held a masked credential's real value encoded",
				 files[i][0]);
			ROW(st != 0 && !test_has(out, "RAN") && test_has(err, want),
			    "the real value in %s reached the command: %s", files[i][0], test_nz(err));
			free(out);
			free(err);
			out = err = NULL;
			snprintf(want, sizeof(want), "work/%s", files[i][0]);
			(void)unlink(at(path, want));
		}
	}
	/* no real value: a zip, an executable, random bytes start */
	CU_ASSERT_EQUAL_FATAL(sh("printf 'plain words\\n' | python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "
				 "\"w\", zipfile.ZIP_DEFLATED); z.writestr(\"notes\", sys.stdin.read()); z.close()' "
				 "work/.notes.zip && cp /bin/ls work/.tool && head -c 900000 /dev/urandom > work/.rand"),
			      0);
	st = run_cst(env, "python3 -c 'import zipfile; print(zipfile.ZipFile(\".notes.zip\").read(\"notes\").decode())'; "
			  "echo RAN\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "plain words") && test_has(out, "RAN"),
	    "a zip, an executable and random bytes with no real value: %s", test_nz(err));
	free(out);
	free(err);
	(void)unlink(at(path, "work/.notes.zip"));
	(void)unlink(at(path, "work/.tool"));
	(void)unlink(at(path, "work/.rand"));
}

/*
 * review39b: fix39m refused the start for a signature of a format zlib
 * does not read found anywhere in a file searched: the 4-byte zstd or
 * lz4 magic, or "PK 3 4" followed by any method number, is a constant in
 * the programs that read those formats (tar, sqlite3, gpg, libzstd,
 * libarchive: 42 of the 3,454 binaries under 1 MiB in /usr/bin and
 * /usr/lib of a Debian system), so one of them at the top of the
 * project refused every start as "packed in a form not searched". Now a
 * stream counts when what follows the signature is what a compressor
 * writes (remask_unread_at()), and a zip header when its method is
 * defined; a real stream of those formats, and of the ones not named
 * before (lzma, lz4's legacy frame), still refuses, as does zstd inside
 * a tar written in base64 (04f94e8 looked at a decoded run's start only).
 */
static void test_remask_unread_false(void)
{
	static const char *const ordinary[] = {"/usr/bin/tar", "/usr/bin/sqlite3", "/usr/bin/gpgv",
					       "/usr/lib/x86_64-linux-gnu/libzstd.so.1", "/usr/bin/lz4",
					       "/usr/lib/x86_64-linux-gnu/liblzma.so.5"};
	static const char *const unread[][2] = {
		{".env.lzma", "printf 'T=%s\\n' \"$T\" | xz --format=lzma -c"},
		{".env.lz4", "printf 'T=%s\\n' \"$T\" | lz4 -q -c"},
		{".legacy.lz4", "printf 'T=%s\\n' \"$T\" | lz4 -q -l -c"},
		{".env.19.zst", "(head -c 3000 /dev/urandom | base64; printf 'T=%s\\n' \"$T\") | zstd -q -19 --no-check -c"},
		{".mid.xz", "printf 'a line\\n'; printf 'T=%s\\n' \"$T\" | xz -c"},
		{".tar.b64", "mkdir -p tz && (head -c 3000 /dev/urandom | base64; printf 'T=%s\\n' \"$T\") | zstd -q -c > tz/env.zst && printf 'B=%s\\n' "
			     "\"$(tar -cf - -C tz env.zst | base64 -w0)\"; rm -rf tz"},
	};
	char gh[64], path[PATH_MAX], want[PATH_MAX + 64], *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	size_t copied = 0;
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	for (size_t i = 0; i < ARRAY_LEN(ordinary); i++) {
		struct stat sb;

		if (stat(ordinary[i], &sb) < 0 || sb.st_size > 1024 * 1024)
			continue;
		CU_ASSERT_EQUAL_FATAL(sh("cp -L %s work/.tool%zu", ordinary[i], i), 0);
		copied++;
	}
	CU_ASSERT(copied >= 3);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN") && !test_has(err, "packed in a form not searched"),
	    "ordinary programs (tar, sqlite3, gpgv, libzstd, lz4, liblzma) refused the start: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	CU_ASSERT_EQUAL(sh("rm -f work/.tool*"), 0);
	for (size_t i = 0; i < ARRAY_LEN(unread); i++) {
		CU_ASSERT_EQUAL_FATAL(sh("cd work && T=%s; (%s) > %s", real_token, unread[i][1], unread[i][0]), 0);
		st = run_cst(env, "echo RAN\n", &out, &err);
		snprintf(want, sizeof(want), "/work/%s holds data packed in a form not searched", unread[i][0]);
		ROW(st != 0 && !test_has(out, "RAN") && test_has(err, want), "the real value in %s reached the command: %s",
		    unread[i][0], test_nz(err));
		free(out);
		free(err);
		out = err = NULL;
		snprintf(want, sizeof(want), "work/%s", unread[i][0]);
		(void)unlink(at(path, want));
	}
}

/*
 * For each row ({a file in work/, a kind, what the refusal says of it}):
 * py (saved at the top of the tree as name) run with the kind and the
 * real token writes the file; the start is refused, naming /work/FILE
 * and the row's text. kind: the rows name the kind too.
 */
static void refused_files(const char *name, const char *py, const char *const (*rows)[3], size_t n, bool kind)
{
	char gh[64], path[PATH_MAX], want[PATH_MAX + 64], *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	FILE *f;
	int st;

	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	f = fopen(at(path, name), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT(fputs(py, f) >= 0);
	CU_ASSERT_EQUAL(fclose(f), 0);
	for (size_t i = 0; i < n; i++) {
		CU_ASSERT_EQUAL_FATAL(sh("python3 %s %s %s > work/%s", name, rows[i][1], real_token, rows[i][0]), 0);
		st = run_cst(env, "echo RAN\n", &out, &err);
		snprintf(want, sizeof(want), "/work/%s %s", rows[i][0], rows[i][2]);
		ROW(st != 0 && !test_has(out, "RAN") && test_has(err, want), "the real value in %s%s%s%s reached the "
		    "command: %s", rows[i][0], kind ? " (" : "", kind ? rows[i][1] : "", kind ? ")" : "", test_nz(err));
		free(out);
		free(err);
		out = err = NULL;
		snprintf(want, sizeof(want), "work/%s", rows[i][0]);
		(void)unlink(at(path, want));
	}
	(void)unlink(at(path, name));
}

/*
 * Round 40: the search of the files the command reads skipped past a
 * stream that ended cleanly, so a gzip header's extra field (or a
 * crafted deflate stream) swallowed the gzip stream inside it; it tried
 * zlib in the middle with the default window's header only (78 ..), and
 * raw deflate (no header) nowhere: PHP's base64_encode(gzdeflate()) and a
 * .NET DeflateStream's file. Each refuses the start now; a Unix compress
 * (.Z) file refuses as packed in a form not searched.
 */
static void test_remask_round40(void)
{
	static const char *const pre =
		"import sys, zlib, gzip, base64, struct\n"
		"v = ('T=' + sys.argv[2] + '\\n').encode()\n"
		"k = sys.argv[1]\n"
		"def raw(b):\n"
		"    o = zlib.compressobj(9, zlib.DEFLATED, -15)\n"
		"    return o.compress(b) + o.flush()\n"
		"if k == 'decoy':\n"
		"    inner = gzip.compress(v)\n"
		"    body = b'x' * 100\n"
		"    out = b'\\x1f\\x8b\\x08\\x04\\0\\0\\0\\0\\0\\xff' + struct.pack('<H', len(inner)) + inner + raw(body) + "
		"struct.pack('<II', zlib.crc32(body), len(body))\n"
		"elif k == 'wbits': out = b'a line of text\\n' + zlib.compress(v, 9, 9)\n"
		"elif k == 'php': out = b'Z=' + base64.b64encode(raw(v)) + b'\\n'\n"
		"elif k == 'rawfile': out = raw(v)\n"
		"else:\n"
		"    bits = 0; n = 0; out = bytearray(b'\\x1f\\x9d\\x90')\n"
		"    for ch in v:\n"
		"        bits |= ch << n; n += 9\n"
		"        while n >= 8: out.append(bits & 255); bits >>= 8; n -= 8\n"
		"    if n: out.append(bits & 255)\n"
		"    out = bytes(out)\n"
		"sys.stdout.buffer.write(out)\n";
	static const char *const rows[][3] = {
		{".decoy.gz", "decoy", "held a masked credential's real value encoded"},
		{".wbits.z", "wbits", "held a masked credential's real value encoded"},
		{".php.env", "php", "held a masked credential's real value encoded"},
		{".env.deflate", "rawfile", "held a masked credential's real value encoded"},
		{".env.Z", "lzw", "holds data packed in a form not searched"},
	};

	SKIP_IF_NEEDED();
	refused_files("r40.py", pre, rows, ARRAY_LEN(rows), false);
}

/*
 * review39b: zip archives as writers make them: a deflated member after
 * a data descriptor's member, zip64 headers, a zip in a zip, a member
 * encrypted with a password (zip -P), a zip of 20 MB of zeros (a bomb
 * past 8 MiB a stream) and zips nested past four levels: each holding
 * the real value refuses the start; checked and held on fix39m's code.
 */
static void test_remask_zip_shapes(void)
{
	static const char *const py = "import sys, zipfile, io\n"
				      "def z(name, data, **kw):\n"
				      "    b = io.BytesIO()\n"
				      "    with zipfile.ZipFile(b, 'w', zipfile.ZIP_DEFLATED, **kw) as f:\n"
				      "        f.writestr('pad', 'x' * 300)\n"
				      "        with f.open(name, 'w', force_zip64=kw.get('allowZip64', False)) as m:\n"
				      "            m.write(data)\n"
				      "    return b.getvalue()\n"
				      "v = ('T=' + sys.argv[2] + '\\n').encode()\n"
				      "k = sys.argv[1]\n"
				      "if k == 'zip64': out = z('env', v, allowZip64=True)\n"
				      "elif k == 'nested': out = z('in.zip', z('env', v))\n"
				      "elif k == 'deep':\n"
				      "    out = v\n"
				      "    for i in range(6): out = z('l%d' % i, out)\n"
				      "else: out = z('zeros', b'\\0' * 20000000 + v)\n"
				      "sys.stdout.buffer.write(out)\n";
	static const char *const rows[][3] = {
		{".z64.zip", "zip64", "held a masked credential's real value encoded"},
		{".nested.zip", "nested", "held a masked credential's real value encoded"},
		{".deep.zip", "deep", "is compressed and inflates past what is searched"},
		{".bomb.zip", "bomb", "is compressed and inflates past what is searched"},
	};
	char gh[64], path[PATH_MAX], *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	refused_files("zipshapes.py", py, rows, ARRAY_LEN(rows), true);
	if (access("/usr/bin/zip", X_OK) == 0) {
		CU_ASSERT_EQUAL_FATAL(sh("cd work && printf 'T=%%s\\n' %s > env && zip -q -P pw .enc.zip env && rm env",
					 real_token),
				      0);
		st = run_cst(env, "echo RAN\n", &out, &err);
		ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "/work/.enc.zip holds data packed in a form not searched"),
		    "an encrypted zip member started: %s", test_nz(err));
		free(out);
		free(err);
		(void)unlink(at(path, "work/.enc.zip"));
	}
}

/*
 * review38c: a dot file over 1 MiB was named as not searched and passed
 * to the command as it was, so a 2 MiB .viminfo or notes file at the top
 * of the home or project holding `export GH_TOKEN=...` put the real value
 * in the sandbox (the shell histories are denied by the mandatory table,
 * not this). Text files up to 8 MiB are searched now (within the
 * 32 MiB budget): the command reads the sentinel. Binaries over 1 MiB
 * are still only named: five of 7 MB in ~/.local/bin (a row of the
 * mandatory table searched whole) start rather than spend the budget.
 */
static void test_remask_big_file(void)
{
	char gh[64], path[PATH_MAX], *out = NULL, *err = NULL;
	const char *env[] = {gh, NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	CU_ASSERT_EQUAL_FATAL(sh("yes 'set number | cd ~/src/project && make -j8 test' | head -c 2200000 > work/.notes; "
				 "printf 'export GH_TOKEN=%s\\n' %s >> work/.notes",
				 "%s", real_token),
			      0);
	st = run_cst(env, "grep -o 'GH_TOKEN=[A-Za-z0-9_]*' .notes; echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN") && !test_has(out, real_token) && test_has(out, "GH_TOKEN=ghp_") &&
		test_has(err, "/work/.notes held a masked credential's real value"),
	    "a 2 MiB dot file with the real value: status %d, out %s, err %s", st, test_nz(out), test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	(void)unlink(at(path, "work/.notes"));
	/* binaries of 1 to 8 MiB in ~/.local/bin (a row searched whole) are
	 * not searched: five of 7 MB would spend the budget and refuse */
	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p home/.local/bin && for i in 1 2 3 4 5; do (printf '\\177ELF'; "
				 "head -c 7000000 /dev/zero) > home/.local/bin/tool$i; done"),
			      0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN") && test_has(err, "binary over 1 MiB"),
	    "five 7 MB binaries in ~/.local/bin: status %d, err %s", st, test_nz(err));
	free(out);
	free(err);
	CU_ASSERT_EQUAL(sh("rm -rf home/.local/bin"), 0);
}

/*
 * review37b: a whole AWS credentials file masked written without spaces
 * around its = (aws_access_key_id=AKIA...): the name and the value were
 * one run, whose window aws_access_k is every such file's and a .env's
 * AWS_ACCESS_KEY_ID= without case: a project's .env with another
 * account's keys refused the start. It starts now; the secret's hex
 * refuses.
 */
static void test_remask_whole_file_assign(void)
{
	static const char aws[] = "GH_TOKEN=[default]\naws_access_key_id=AKIA4XQ7Z2M9KD3LP8WQ\n"
				  "aws_secret_access_key=q8Zr3vN0pX7sLk2WmT5yHb1cJd4fGe6iUo9aQw0E\n";
	static const char dotenv[] = "AWS_ACCESS_KEY_ID=AKIA7B2N5V8C1X4Z6M3Q\n"
				     "AWS_SECRET_ACCESS_KEY=Zz0Yy9Xx8Ww7Vv6Uu5Tt4Ss3Rr2Qq1Pp0Oo9Nn8Mm\n";
	const char *env[] = {aws, NULL};
	char path[PATH_MAX], body[256], *hex, *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.env"), dotenv, strlen(dotenv)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN"), "a .env with another account's AWS keys refused the start: %s",
	    test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	hex = test_hex("q8Zr3vN0pX7sLk2WmT5yHb1cJd4fGe6iUo9aQw0E", 40);
	CU_ASSERT_PTR_NOT_NULL_FATAL(hex);
	snprintf(body, sizeof(body), "%sSECRET_HEX=%s\n", dotenv, hex);
	CU_ASSERT_EQUAL_FATAL(test_write_file(path, body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "/work/.env held a masked credential's real value encoded"),
	    "the masked file's secret in hex in .env started");
	free(out);
	free(err);
	free(hex);
	(void)unlink(path);
}

/* A service account's JSON around the PKCS#8 key file at path (its lines
 * joined by JSON's \n) for the account name (malloc'd), or NULL. */
static char *sa_json_of(const char *path, const char *name, const char *id)
{
	char *key = test_read_file(path, NULL), *pem, *out = NULL;
	size_t o = 0;

	if (key == NULL)
		return NULL;
	pem = malloc(2 * strlen(key) + 1);
	for (size_t i = 0; pem != NULL && key[i] != '\0'; i++) {
		if (key[i] == '\n')
			pem[o++] = '\\';
		pem[o++] = key[i] == '\n' ? 'n' : key[i];
	}
	if (pem != NULL) {
		pem[o] = '\0';
		out = malloc(o + 2048);
	}
	if (out != NULL)
		snprintf(out, o + 2048,
			 "{\"type\": \"service_account\", \"project_id\": \"acme-prod\", \"private_key_id\": \"%s\", "
			 "\"private_key\": \"%s\", \"client_email\": \"%s@acme-prod.iam.gserviceaccount.com\", "
			 "\"client_id\": \"104598223467781234567\", "
			 "\"auth_uri\": \"https://accounts.google.com/o/oauth2/auth\", "
			 "\"token_uri\": \"https://oauth2.googleapis.com/token\", "
			 "\"auth_provider_x509_cert_url\": \"https://www.googleapis.com/oauth2/v1/certs\", "
			 "\"client_x509_cert_url\": \"https://www.googleapis.com/robot/v1/metadata/x509/"
			 "%s%%40acme-prod.iam.gserviceaccount.com\"}",
			 id, pem, name, name);
	free(key);
	free(pem);
	return out;
}

/*
 * review37b: a service account's JSON masked whole (its key in PEM with
 * JSON's \n, the public URLs and key names every such file holds) was
 * looked for by its runs, the key's first lines among them (every RSA
 * key of its size's PKCS#8 header) and the x509 URLs: a project's .env
 * holding its dev account's JSON, or naming the certificate URL, refused
 * the start. Both start now; a line of the key's secret digits in .env
 * still refuses.
 */
static void test_remask_service_account_neighbours(void)
{
	char path[PATH_MAX], *mine, *other, *genv, *body, *key, *line;
	const char *env[] = {NULL, NULL};
	char *out = NULL, *err = NULL;
	size_t cap;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p sa37 && for k in prod dev; do openssl genpkey -algorithm RSA -pkeyopt "
				 "rsa_keygen_bits:2048 -out sa37/$k 2>/dev/null || exit 1; done"),
			      0);
	mine = sa_json_of(at(path, "sa37/prod"), "deployer", "3f9a1c77e0b24d5a8c6e2f1b9d0a4c7e5b3f8a21");
	other = sa_json_of(at(path, "sa37/dev"), "ci", "0d2b6e8f1a3c5e7092b4d6f8a1c3e5f7092b4d6f");
	key = test_read_file(at(path, "sa37/prod"), NULL);
	CU_ASSERT_FATAL(mine != NULL && other != NULL && key != NULL);
	cap = strlen(mine) + strlen(other) + 256;
	genv = malloc(cap);
	body = malloc(cap);
	CU_ASSERT_FATAL(genv != NULL && body != NULL);
	snprintf(genv, cap, "GH_TOKEN=%s", mine);
	env[0] = genv;
	snprintf(body, cap,
		 "FIREBASE_SERVICE_ACCOUNT='%s'\nCERTS_URL=https://www.googleapis.com/oauth2/v1/certs\n"
		 "ROBOT=https://www.googleapis.com/robot/v1/metadata/x509/ci%%40acme-prod.iam.gserviceaccount.com\n",
		 other);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.env"), body, strlen(body)), 0);
	st = run_cst(env, "grep -c FIREBASE .env\necho RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN"),
	    "a .env holding another service account's JSON and its public URLs refused the start: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	line = key;
	for (int k = 0; k < 9 && line != NULL; k++) /* the 9th line of digits: the private exponent */
		line = strchr(line + 1, '\n');
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	snprintf(body, cap, "PART=%.64s\n", line + 1);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.env"), body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "/work/.env held a masked credential's real value encoded"),
	    "a line of the masked account's private key in .env started");
	free(out);
	free(err);
	free(mine);
	free(other);
	free(key);
	free(genv);
	free(body);
	(void)unlink(at(path, "work/.env"));
}

/*
 * review37b: a masked kubeconfig (base64 of its cluster's CA certificate
 * and its own certificate and key): a project's .env holding the
 * cluster's CA data (every user's kubeconfig of the cluster holds it)
 * refused the start, and the client key decoded into a PEM file the
 * command reads started. Now the first starts and the second refuses.
 */
static void test_remask_kubeconfig_neighbours(void)
{
	char path[PATH_MAX], *kc = NULL, *genv = NULL, *body = NULL, *ca, *key = NULL;
	const char *env[] = {NULL, NULL};
	char *out = NULL, *err = NULL;
	size_t cap;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_EQUAL_FATAL(
		sh("mkdir -p kc37 && cd kc37 && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt "
		   "-subj /CN=ca -days 2 >/dev/null 2>&1 && openssl req -newkey rsa:2048 -nodes -keyout me.key -subj /CN=me "
		   "-out me.csr >/dev/null 2>&1 && openssl x509 -req -in me.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
		   "-out me.crt -days 2 >/dev/null 2>&1 && { printf 'apiVersion: v1\\nclusters:\\n- cluster:\\n"
		   "    certificate-authority-data: %%s\\n    server: https://10.0.0.1:6443\\n  name: prod\\nusers:\\n"
		   "- name: me\\n  user:\\n    client-certificate-data: %%s\\n    client-key-data: %%s\\n' "
		   "\"$(base64 -w0 ca.crt)\" \"$(base64 -w0 me.crt)\" \"$(base64 -w0 me.key)\"; } > config && "
		   "base64 -w0 ca.crt > ca.b64"),
		0);
	kc = test_read_file(at(path, "kc37/config"), NULL);
	ca = test_read_file(at(path, "kc37/ca.b64"), NULL);
	key = test_read_file(at(path, "kc37/me.key"), NULL);
	CU_ASSERT_FATAL(kc != NULL && ca != NULL && key != NULL);
	cap = strlen(kc) + strlen(ca) + strlen(key) + 64;
	genv = malloc(cap);
	body = malloc(cap);
	CU_ASSERT_FATAL(genv != NULL && body != NULL);
	snprintf(genv, cap, "GH_TOKEN=%s", kc);
	env[0] = genv;
	snprintf(body, cap, "K8S_CA_DATA=%s\nK8S_SERVER=https://10.0.0.1:6443\n", ca);
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.env"), body, strlen(body)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st == 0 && test_has(out, "RAN"), "a .env holding the cluster's CA data refused the start: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	(void)unlink(at(path, "work/.env"));
	CU_ASSERT_EQUAL_FATAL(test_write_file(at(path, "work/.k8s-key.pem"), key, strlen(key)), 0);
	st = run_cst(env, "echo RAN\n", &out, &err);
	ROW(st != 0 && !test_has(out, "RAN") && test_has(err, "/work/.k8s-key.pem held a masked credential's real value"),
	    "the masked kubeconfig's client key decoded into a file started");
	free(out);
	free(err);
	(void)unlink(at(path, "work/.k8s-key.pem"));
	free(kc);
	free(ca);
	free(key);
	free(genv);
	free(body);
}

/*
 * Appends to the shell line sh (size bytes, *n of them used), joined by
 * " && ", what writes text to path, its directories made first; text
 * NULL: what makes the directory path. *n past size: the line was too
 * long.
 */
static void sh_write(char *sh, size_t size, size_t *n, const char *path, const char *text)
{
	if (*n < size && text == NULL)
		*n += (size_t)snprintf(sh + *n, size - *n, "%smkdir -p '%s'", *n > 0 ? " && " : "", path);
	else if (*n < size)
		*n += (size_t)snprintf(sh + *n, size - *n, "%smkdir -p \"$(dirname '%s')\" && printf '%%s' '%s' > '%s'",
				       *n > 0 ? " && " : "", path, text, path);
}

/*
 * Round 34 of the attack (d7): a Windows volume mounted by an fstab line
 * where its owner chose (/media/windows, /windows, /data): no fixed
 * pattern reached it, its home's stores were read in clear. A real NTFS
 * volume (mkntfs on a loop device, mounted by ntfs-3g: fuseblk, as a dual
 * boot's is) mounted where no pattern looks (the test's directory, "win
 * vol": a space, which mountinfo escapes): its Users/NAME is found from
 * /proc/self/mountinfo. And a plain directory /media/pvdataPID/Users/NAME
 * (the reproducer's form, an fstab place): found by the pattern
 * /media/X/Users/NAME.
 * The stores of both are denied.
 */
static void test_windows_volume_mounted(void)
{
	char img[PATH_MAX], mnt[PATH_MAX], home[PATH_MAX + 16], sc[PATH_MAX], hh[PATH_MAX], wpol[PATH_MAX];
	char cmd[4 * PATH_MAX], fill[8192], down[4 * PATH_MAX], data[64], script[4096], *out = NULL, *err = NULL;
	static const char *const files[] = {".aws/credentials", ".ssh/id_ed25519",
					    "AppData/Roaming/GitHub CLI/hosts.yml"};
	size_t n = 0, nf = 0;
	bool torn;
	int st, rm;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/usr/bin/ntfs-3g", X_OK) != 0 || access("/usr/sbin/mkntfs", X_OK) != 0 ||
	    access("/dev/fuse", R_OK | W_OK) != 0) {
		TEST_SKIP("not root, or no ntfs-3g, mkntfs or /dev/fuse: cannot mount an NTFS volume");
		return;
	}
	at(mnt, "win vol");
	snprintf(home, sizeof(home), "%s/Users/pvwin", mnt);
	snprintf(data, sizeof(data), "/media/pvdata%d", (int)getpid());
	at(img, "ntfs.img");
	if (snprintf(cmd, sizeof(cmd),
		     "set -e; truncate -s 8M '%1$s'; mkntfs -F -Q -q '%1$s' >/dev/null 2>&1; mkdir -p '%2$s'; "
		     "d=$(losetup -f --show '%1$s'); ntfs-3g \"$d\" '%2$s' || { losetup -d \"$d\"; exit 1; }; "
		     "grep -q ' fuseblk ' /proc/self/mountinfo",
		     img, mnt) >= (int)sizeof(cmd) ||
	    snprintf(down, sizeof(down),
		     "d=$(findmnt -n -o SOURCE --target '%1$s') && mountpoint -q '%1$s' && umount '%1$s' && "
		     "losetup -d \"$d\"",
		     mnt) >= (int)sizeof(down)) {
		CU_FAIL("a path too long for the test");
		return;
	}
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			char path[PATH_MAX * 2], dir[PATH_MAX * 2], top[PATH_MAX + 64];

			snprintf(top, sizeof(top), "%s%s", k == 0 ? home : data, k == 0 ? "" : "/Users/pvwin");
			snprintf(path, sizeof(path), "%s/%s", top, files[i]);
			if (k == 0) {
				/* on the volume, mounted in own_mounts()'s child */
				sh_write(fill, sizeof(fill), &nf, path, "WINDOWS-HOME-SECRET\n");
			} else {
				snprintf(dir, sizeof(dir), "%s", path);
				*strrchr(dir, '/') = '\0';
				CU_ASSERT_EQUAL(mkdirs(dir), 0);
				CU_ASSERT(test_write_file(path, "WINDOWS-HOME-SECRET\n", 20) == 0);
			}
			n += (size_t)snprintf(script + n, sizeof(script) - n,
					      "echo \"%3$s%1$s:$(cat '%2$s/%1$s' 2>/dev/null | wc -c)\"\n", files[i], top,
					      k == 0 ? "ntfs:" : "data:");
		}
	CU_ASSERT_FATAL(nf < sizeof(fill));
	{
		struct test_sbx_run r = {root, at(hh, "home"), NULL, at(wpol, "work.yaml"), sc, NULL, NULL};
		const struct cst_run c = {NULL, &r};

		snprintf(sc, sizeof(sc), "%s/scripts/ntfs.sh", root);
		CU_ASSERT_EQUAL(test_write_file(sc, script, strlen(script)), 0);
		/* the volume in a child's own mount namespace (own_mounts()) */
		st = own_mounts(cmd, fill, down, cst_run, &c, &out, &err, &torn);
	}
	CU_ASSERT(snprintf(cmd, sizeof(cmd), "rmdir '%s' 2>/dev/null; rm -f '%s'", mnt, img) < (int)sizeof(cmd));
	rm = system(cmd);
	test_rmtree(data);
	if (st == -2) {
		free(out);
		free(err);
		TEST_SKIP("cannot mount an NTFS volume here (loop device or FUSE refused)");
		return;
	}
	CU_ASSERT(st != -3 && torn && rm == 0);
	ROW(st == 0, "NTFS volume: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char want[PATH_MAX];

		snprintf(want, sizeof(want), "ntfs:%s:0\n", files[i]);
		ROW(test_has(out, want), "the mounted NTFS volume's home %s was readable: %s", files[i], test_nz(out));
		snprintf(want, sizeof(want), "data:%s:0\n", files[i]);
		ROW(test_has(out, want), "the home under /media/X/Users %s was readable: %s", files[i], test_nz(out));
	}
	free(out);
	free(err);
}

/*
 * Round 35 of the attack (e4): a Linux virtual machine on a Mac (Lima,
 * Colima, Podman machine, UTM) shares the Mac user's HOME itself at
 * /Users/NAME; the look of round 34 built MOUNT/Users/NAME for such a
 * mount and found nothing there, and /Users was no fixed place: the Mac's
 * ~/.ssh, ~/.aws, gh's token and the Keychains were read in clear. Three
 * homes, each with those four stores:
 *  - a real NTFS volume (ntfs-3g: fuseblk) mounted AT /Users/pvmacPID;
 *  - a plain directory /Users/pvdirPID (a share whose type no list
 *    names);
 *  - a tmpfs mounted at the test's "mac home" (no fixed place, a type no
 *    list names): a home because it holds .ssh and Library/Keychains.
 * The stores of all three are denied; a tmpfs mounted beside it that
 * holds none of the marks is read as before.
 */
static void test_mac_home_shared(void)
{
	static const char *const files[] = {".ssh/id_ed25519", ".aws/credentials", ".config/gh/hosts.yml",
					    "Library/Keychains/login.keychain-db"};
	char img[PATH_MAX], ntfs[64], dir[64], tmh[PATH_MAX], plain[PATH_MAX], sc[PATH_MAX], hh[PATH_MAX];
	char wpol[PATH_MAX], p[PATH_MAX], cmd[4 * PATH_MAX], down[4 * PATH_MAX], fill[8192], script[4096];
	char *out = NULL, *err = NULL;
	const char *tops[3];
	bool made_users, torn;
	size_t n = 0, nf = 0;
	int st, rm;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/usr/bin/ntfs-3g", X_OK) != 0 || access("/usr/sbin/mkntfs", X_OK) != 0 ||
	    access("/dev/fuse", R_OK | W_OK) != 0) {
		TEST_SKIP("not root, or no ntfs-3g, mkntfs or /dev/fuse: cannot mount an NTFS volume");
		return;
	}
	made_users = access("/Users", F_OK) != 0;
	snprintf(ntfs, sizeof(ntfs), "/Users/pvmac%d", (int)getpid());
	snprintf(dir, sizeof(dir), "/Users/pvdir%d", (int)getpid());
	at(tmh, "mac home");
	at(plain, "plain vol");
	at(img, "mac.img");
	if (snprintf(cmd, sizeof(cmd),
		     "set -e; truncate -s 8M '%1$s'; mkntfs -F -Q -q '%1$s' >/dev/null 2>&1; mkdir -p '%2$s' '%3$s' "
		     "'%4$s' '%5$s'; d=$(losetup -f --show '%1$s'); ntfs-3g \"$d\" '%2$s' || { losetup -d \"$d\"; "
		     "exit 1; }; mount -t tmpfs pvmachome '%4$s'; mount -t tmpfs pvplain '%5$s'; "
		     "mkdir -p '%5$s/proj' && mount --bind '%5$s/proj' '%5$s/proj'",
		     img, ntfs, dir, tmh, plain) >= (int)sizeof(cmd) ||
	    snprintf(down, sizeof(down),
		     "umount '%3$s/proj' 2>/dev/null; umount '%3$s' 2>/dev/null; umount '%2$s' 2>/dev/null; "
		     "d=$(findmnt -n -o SOURCE --target '%1$s') && mountpoint -q '%1$s' && umount '%1$s' && "
		     "losetup -d \"$d\"",
		     ntfs, tmh, plain) >= (int)sizeof(down)) {
		CU_FAIL("a path too long for the test");
		return;
	}
	tops[0] = ntfs;
	tops[1] = dir;
	tops[2] = tmh;
	/* Written in own_mounts()'s child, where the volumes are mounted. */
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			char path[PATH_MAX * 2];

			snprintf(path, sizeof(path), "%s/%s", tops[k], files[i]);
			sh_write(fill, sizeof(fill), &nf, path, "MAC-HOME-SECRET\n");
			n += (size_t)snprintf(script + n, sizeof(script) - n,
					      "echo \"%3$zu:%1$s:$(cat '%2$s/%1$s' 2>/dev/null | wc -c)\"\n", files[i],
					      tops[k], k);
		}
	sh_write(fill, sizeof(fill), &nf, at(p, "plain vol/.config/notes.txt"), "plain-visible\n");
	n += (size_t)snprintf(script + n, sizeof(script) - n, "cat '%s/.config/notes.txt'\n", plain);
	/* The review of round 35: a project's checkout mounted on its own
	 * (a container's bind mount) holding .ssh (its deploy keys) is no
	 * home: its .npmrc and .kube/config read as before; a home that is a
	 * dotfiles repository (.git and .bashrc) is still one. */
	sh_write(fill, sizeof(fill), &nf, at(p, "plain vol/proj/.git"), NULL);
	sh_write(fill, sizeof(fill), &nf, at(p, "plain vol/proj/.npmrc"), "npmrc-visible\n");
	sh_write(fill, sizeof(fill), &nf, at(p, "plain vol/proj/.kube/config"), "kube-visible\n");
	sh_write(fill, sizeof(fill), &nf, at(p, "plain vol/proj/.ssh/deploy.pub"), "x\n");
	sh_write(fill, sizeof(fill), &nf, at(p, "mac home/.git"), NULL);
	sh_write(fill, sizeof(fill), &nf, at(p, "mac home/.bashrc"), "\n");
	CU_ASSERT_FATAL(nf < sizeof(fill));
	n += (size_t)snprintf(script + n, sizeof(script) - n, "cat '%1$s/proj/.npmrc' '%1$s/proj/.kube/config'\n",
			      plain);
	{
		struct test_sbx_run r = {root, at(hh, "home"), NULL, at(wpol, "work.yaml"), sc, NULL, NULL};
		const struct cst_run c = {NULL, &r};

		snprintf(sc, sizeof(sc), "%s/scripts/machome.sh", root);
		CU_ASSERT_EQUAL(test_write_file(sc, script, strlen(script)), 0);
		/* the volumes in a child's own mount namespace (own_mounts()) */
		st = own_mounts(cmd, fill, down, cst_run, &c, &out, &err, &torn);
	}
	CU_ASSERT(snprintf(cmd, sizeof(cmd), "rmdir '%1$s' '%3$s' '%4$s' 2>/dev/null; rm -rf '%2$s'; rm -f '%5$s'",
			   ntfs, dir, tmh, plain, img) < (int)sizeof(cmd));
	rm = system(cmd);
	if (made_users)
		CU_ASSERT(rmdir("/Users") == 0);
	if (st == -2) {
		free(out);
		free(err);
		TEST_SKIP("cannot mount an NTFS volume or a tmpfs here (loop device or FUSE refused)");
		return;
	}
	CU_ASSERT(st != -3 && torn && rm == 0);
	ROW(st == 0, "Mac homes: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			char want[PATH_MAX];

			snprintf(want, sizeof(want), "%zu:%s:0\n", k, files[i]);
			ROW(test_has(out, want), "the Mac home %s: %s was readable: %s", tops[k], files[i], test_nz(out));
		}
	ROW(test_has(out, "plain-visible"), "a mount with no home's marks was not read: %s", test_nz(out));
	ROW(test_has(out, "npmrc-visible") && test_has(out, "kube-visible"),
	    "a project's checkout mounted on its own with a .ssh was taken for a home: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * A shell line for own_mounts()'s setup: a new root for the child's
 * mount namespace, a tmpfs at nr (made unbindable while it is filled, so
 * that no bind below copies it), every entry of the host's / and /home
 * in it (directories bound recursively, links copied) but the snapshot
 * places of test_snapshots() (/.snapshots, /timeshift, /home/.zfs), /home
 * a tmpfs of its own; then each of the n paths of sys planted there
 * (SNAPSHOT-COPY, 0600), and the root pivoted to nr (the old one detached). The host's
 * /, /home and mount table are never written to. 0, or -1 when cmd is
 * too small.
 */
static int snap_root_setup(char *cmd, size_t size, const char *nr, const char *const *sys, size_t n)
{
	size_t off;

	off = (size_t)snprintf(
		cmd, size,
		"set -e; nr='%s'; mkdir -p \"$nr\"; mount -t tmpfs -o mode=0755 pvroot \"$nr\"; "
		"mount --make-unbindable \"$nr\"; "
		"graft() { for e in \"$1\"/* \"$1\"/.[!.]* \"$1\"/..?*; do "
		"[ -e \"$e\" ] || [ -L \"$e\" ] || continue; "
		"case \"$e\" in /.snapshots|/timeshift|/home|/home/.zfs) continue;; esac; n=${e##*/}; "
		"if [ -L \"$e\" ]; then cp -P \"$e\" \"$2/$n\"; "
		"elif [ -d \"$e\" ]; then mkdir \"$2/$n\"; mount --rbind \"$e\" \"$2/$n\"; "
		"else : > \"$2/$n\"; mount --bind \"$e\" \"$2/$n\"; fi; done; }; "
		"graft '' \"$nr\"; mkdir \"$nr/home\"; mount -t tmpfs -o mode=0755 pvhome \"$nr/home\"; "
		"graft /home \"$nr/home\"; ",
		nr);
	for (size_t i = 0; i < n && off < size; i++)
		off += (size_t)snprintf(cmd + off, size - off,
					"p=\"$nr%s\"; (umask 077; mkdir -p \"${p%%/*}\"); printf 'SNAPSHOT-COPY\\n' > \"$p\"; "
					"chmod 600 \"$p\"; ",
					sys[i]);
	if (off < size)
		off += (size_t)snprintf(cmd + off, size - off,
					"mount --make-private \"$nr\"; mkdir \"$nr/.oldroot\"; cd \"$nr\"; "
					"pivot_root . .oldroot; umount -l /.oldroot; rmdir /.oldroot");
	return off < size ? 0 : -1;
}

/* own_mounts()'s run for test_snapshots(): back to the test's working
 * directory (by name: the pivot left the old one behind), then cst_run(). */
struct snap_run {
	const char *cwd;
	struct cst_run c;
};

static int snap_run(const void *arg, char **out, char **err)
{
	const struct snap_run *sr = arg;

	if (chdir(sr->cwd) < 0)
		return -1;
	return cst_run(&sr->c, out, err);
}

/*
 * Round 37 of the attack (family: a copy of the home or of the system
 * that the file system keeps beside it). Under the fake HOME, the places
 * ZFS (.zfs at a dataset's top), a filer (.snapshot, in every directory)
 * and snapper (.snapshots) show older copies, as plain directories: the
 * sandbox denies by path, so these stand for the real ones. As root, a
 * real btrfs (a loop image) mounted under the tree with snapper's
 * MOUNT/.snapshots/1/snapshot, found from mountinfo; and stand-ins at
 * the system's places (/.snapshots, /home/.zfs, /timeshift). Both in a
 * child with a mount namespace and a root of its own (snap_root_setup();
 * before dedupe42 the stand-ins were planted at the host's real places
 * while the test ran): the host's places and mount table are the same
 * after. Every copy of a store reads empty; a project's jest
 * __snapshots__ and a home's own "snapshots" folder read as before.
 */
static void test_snapshots(void)
{
	static const char *const homes[] = {
		"home/.zfs/snapshot/daily-2026-12-01/.ssh/id_ed25519",
		"home/.snapshot/hourly.0/.aws/credentials",
		"home/.snapshots/12/snapshot/.config/gh/hosts.yml",
		"home/.config/.snapshot/nightly.1/gh/hosts.yml",
	};
	static const char *const sys[] = {
		"/.snapshots/7/snapshot/etc/shadow",
		"/home/.zfs/snapshot/s1/pvsnap/.ssh/id_ed25519",
		"/timeshift/snapshots/2026-12-01_00-00-01/localhost/root/.ssh/id_ed25519",
	};
	enum { NS = sizeof(sys) / sizeof(sys[0]) };
	/* sys, and beside them a control that is no snapshot: the command
	 * reads it (the stand-ins are where the command looks) */
	const char *const stand[NS + 1] = {sys[0], sys[1], sys[2], "/pv-snapctl/notes.txt"};
	char script[8192], cmd[8 * PATH_MAX], fill[4 * PATH_MAX], down[PATH_MAX + 64], bt[PATH_MAX], img[PATH_MAX];
	char nr[PATH_MAX], cwd[PATH_MAX], *out = NULL, *err = NULL;
	static const char *const tops[] = {"/.snapshots", "/home/.zfs", "/timeshift", "/pv-snapctl"};
	bool btrfs = false, own = false, had[4];
	char *mi, *mi2;
	size_t n = 0;
	int st = -1;

	SKIP_IF_NEEDED();
	for (size_t i = 0; i < 4; i++)
		had[i] = access(tops[i], F_OK) == 0;
	mi = test_read_file("/proc/self/mountinfo", NULL);
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		CU_ASSERT_FATAL(plant(homes[i]) == 0);
		n += (size_t)snprintf(script + n, sizeof(script) - n, "echo \"h%zu:$(cat '%s/%s' 2>/dev/null | wc -c)\"\n",
				      i, root, homes[i]);
	}
	CU_ASSERT_FATAL(plant("work/__snapshots__/app.test.js.snap") == 0);
	CU_ASSERT_FATAL(plant("home/snapshots/notes.txt") == 0);
	n += (size_t)snprintf(script + n, sizeof(script) - n,
			      "cat __snapshots__/app.test.js.snap '%s/home/snapshots/notes.txt'\n", root);
	/* the stand-ins at the system's places and the btrfs in a child's
	 * own mount namespace, under a root of its own (snap_root_setup()):
	 * the host's / and /home are not written to */
	if (geteuid() == 0 && snap_root_setup(cmd, sizeof(cmd), at(nr, "nr"), stand, NS + 1) == 0 &&
	    getcwd(cwd, sizeof(cwd)) != NULL) {
		const struct snap_run sr = {cwd, {script, NULL}};
		size_t ns = n, nb;
		bool torn;

		for (size_t i = 0; i <= NS; i++)
			n += (size_t)snprintf(script + n, sizeof(script) - n,
					      "echo \"s%zu:$(cat '%s' 2>/dev/null | wc -c)\"\n", i, stand[i]);
		nb = n;
		at(bt, "bt");
		at(img, "bt.img");
		btrfs = access("/usr/sbin/mkfs.btrfs", X_OK) == 0 && access("/usr/bin/btrfs", X_OK) == 0 &&
			snprintf(fill, sizeof(fill),
				 "set -e; truncate -s 128M '%1$s'; mkfs.btrfs -q '%1$s' >/dev/null 2>&1; mkdir -p '%2$s'; "
				 "mount -o loop '%1$s' '%2$s'; mkdir -p '%2$s/u/.ssh'; "
				 "echo BTRFS-SNAP-KEY > '%2$s/u/.ssh/id_ed25519'; btrfs -q subvolume create '%2$s/.snapshots'; "
				 "mkdir '%2$s/.snapshots/1'; btrfs -q subvolume snapshot -r '%2$s' '%2$s/.snapshots/1/snapshot'",
				 img, bt) < (int)sizeof(fill) &&
			snprintf(down, sizeof(down), "! mountpoint -q '%1$s' || umount '%1$s'", bt) < (int)sizeof(down);
		if (btrfs)
			n += (size_t)snprintf(script + n, sizeof(script) - n,
					      "echo \"bt:$(cat '%s/.snapshots/1/snapshot/u/.ssh/id_ed25519' 2>/dev/null | "
					      "wc -c)\"\n",
					      bt);
		st = own_mounts(cmd, btrfs ? fill : NULL, btrfs ? down : NULL, snap_run, &sr, &out, &err, &torn);
		if (st == -3) {
			/* the btrfs could not be made: the rest without it */
			btrfs = false;
			free(out);
			free(err);
			out = err = NULL;
			script[nb] = '\0';
			n = nb;
			st = own_mounts(cmd, NULL, NULL, snap_run, &sr, &out, &err, &torn);
		} else if (btrfs && st != -2) {
			CU_ASSERT(torn);
		}
		own = st != -2;
		if (!own) {
			btrfs = false;
			free(out);
			free(err);
			out = err = NULL;
			script[ns] = '\0';
			n = ns;
			fprintf(stderr, "\n  no root of its own for a child here: the system's places are not tried\n");
		} else if (!btrfs) {
			fprintf(stderr, "\n  no btrfs here (mkfs.btrfs, a loop device): its row is not tried\n");
		}
		CU_ASSERT(snprintf(cmd, sizeof(cmd), "rmdir '%s' '%s' 2>/dev/null; rm -f '%s'", nr, bt, img) <
				  (int)sizeof(cmd) &&
			  system(cmd) == 0);
	}
	if (!own)
		st = run_cst(NULL, script, &out, &err);
	/* the host's places and mount table: as before (its mounts at the
	 * places, the child's root or the btrfs; the table as a whole is
	 * not compared: other runs on the machine mount beside this one) */
	mi2 = test_read_file("/proc/self/mountinfo", NULL);
	CU_ASSERT(mi != NULL && mi2 != NULL);
	for (size_t i = 0; i < 4; i++) {
		char mp[64];

		snprintf(mp, sizeof(mp), " %s ", tops[i]);
		ROW((access(tops[i], F_OK) == 0) == had[i] && (mi2 == NULL || strstr(mi2, mp) == NULL ||
							       (mi != NULL && strstr(mi, mp) != NULL)),
		    "the test changed the host's %s", tops[i]);
	}
	ROW(mi2 == NULL || (strstr(mi2, root) == NULL && strstr(mi2, "pvroot") == NULL && strstr(mi2, "pvhome") == NULL),
	    "a mount of the test's reached the host's table: %s", test_nz(mi2));
	free(mi);
	free(mi2);
	ROW(st == 0, "snapshots: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		char want[32];

		snprintf(want, sizeof(want), "h%zu:0\n", i);
		ROW(test_has(out, want), "a snapshot of the home was readable: %s: %s", homes[i], test_nz(out));
	}
	for (size_t i = 0; own && i < NS; i++) {
		char want[32];

		snprintf(want, sizeof(want), "s%zu:0\n", i);
		ROW(test_has(out, want), "a snapshot at the system's place was readable: %s: %s", sys[i],
		    test_nz(out));
	}
	if (own)
		ROW(test_has(out, "s3:14\n"), "the control beside the stand-ins (%s) did not read: %s", stand[NS],
		    test_nz(out));
	if (btrfs)
		ROW(test_has(out, "bt:0\n"), "snapper's .snapshots on a mounted btrfs was readable: %s", test_nz(out));
	ROW(test_has(out, "PLANTED-work/__snapshots__/app.test.js.snap") &&
		test_has(out, "PLANTED-home/snapshots/notes.txt"),
	    "a project's __snapshots__ or the home's snapshots folder was hidden: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * Round 40 of the attack (sandbox, f2; round 20's "second mount of a
 * denied tree"): the stores were denied at their paths only. As root, the
 * test tree bind-mounted at TREE/b (a directory above the home mounted
 * again, as a container volume or an fstab bind line does) and / at
 * TREE/disk (the same device mounted twice): TREE/b/home/.ssh/id_ed25519,
 * TREE/b/home/.aws/credentials and TREE/disk/etc/shadow were read in
 * clear. Each reads empty now; a plain file through the same mount reads
 * as before.
 */
static void test_second_mounts(void)
{
	char script[8192], cmd[4 * PATH_MAX], b[PATH_MAX], disk[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (geteuid() != 0) {
		TEST_SKIP("not root: cannot bind-mount a second place of the home");
		return;
	}
	CU_ASSERT_FATAL(plant("home/.ssh/id_ed25519") == 0);
	CU_ASSERT_FATAL(plant("home/.aws/credentials") == 0);
	at(b, "b");
	at(disk, "disk");
	if (snprintf(cmd, sizeof(cmd), "mkdir -p '%1$s' '%2$s' && mount --bind '%3$s' '%1$s' && mount --bind / '%2$s'",
		     b, disk, root) >= (int)sizeof(cmd)) {
		CU_FAIL("command too long");
		return;
	}
	if (snprintf(script, sizeof(script),
		 "echo \"k:$(cat '%1$s/home/.ssh/id_ed25519' 2>/dev/null | wc -c)\"\n"
		 "echo \"a:$(cat '%1$s/home/.aws/credentials' 2>/dev/null | wc -c)\"\n"
		 "echo \"d:$(cat '%2$s%3$s/home/.ssh/id_ed25519' 2>/dev/null | wc -c)\"\n"
		 "test -e /etc/shadow && echo \"s:$(cat '%2$s/etc/shadow' 2>/dev/null | wc -c)\"\n"
		 "cat '%1$s/x/plain.txt' '%2$s%3$s/x/plain.txt'\n",
		 b, disk, root) >= (int)sizeof(script))
		CU_FAIL("a path too long for the test");
	st = run_cst_own_mounts(cmd, script, NULL, &out, &err);
	snprintf(cmd, sizeof(cmd), "rmdir '%s' '%s' 2>/dev/null; true", b, disk);
	CU_ASSERT(system(cmd) == 0);
	if (st == -2) {
		free(out);
		free(err);
		TEST_SKIP("cannot bind-mount here");
		return;
	}
	ROW(st == 0, "second mounts: status %d", st);
	if (st != 0)
		show(st, out, err);
	ROW(test_has(out, "k:0\n") && test_has(out, "a:0\n"),
	    "the home's stores were readable through a bind mount of a directory above it: %s", test_nz(out));
	ROW(test_has(out, "d:0\n"), "the home's key was readable through a second mount of /: %s", test_nz(out));
	ROW(!test_has(out, "s:") || test_has(out, "s:0\n"), "/etc/shadow was readable through a second mount of /: %s",
	    test_nz(out));
	ROW(test_count(out, "PLANTED-x/plain.txt") == 2, "a plain file through the second mounts was not read: %s",
	    test_nz(out));
	free(out);
	free(err);
}

/*
 * Review of round 40's f2: the aliases were looked for by the path as
 * written and only where a mount's root holds the denied path. A home
 * reached through a link into another mount (HOME=TREE/lnk/home,
 * TREE/lnk -> a tmpfs mounted at TREE/fs whose directory is bound again
 * at TREE/b2, as /home -> var/home with /sysroot showing the disk on
 * Fedora's atomic desktops) had its mount taken as the test tree's, and
 * TREE/b2/home/.ssh/id_ed25519 was read; a mount of a directory INSIDE
 * its store (TREE/k showing .ssh/keys, as a container's volume of
 * ~/.ssh/keys) showed TREE/k/id_work in clear. Both read empty now.
 */
static void test_second_mounts_below_and_linked(void)
{
	char script[8192], cmd[8 * PATH_MAX], k[PATH_MAX], fs[PATH_MAX], b2[PATH_MAX], lnk[PATH_MAX],
		lhome[PATH_MAX], work[PATH_MAX], pol[PATH_MAX], sc[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (geteuid() != 0) {
		TEST_SKIP("not root: cannot bind-mount a second place of the home");
		return;
	}
	at(k, "k");
	at(fs, "fs");
	at(b2, "b2");
	at(lnk, "lnk");
	if (snprintf(lhome, sizeof(lhome), "%s/home", lnk) >= (int)sizeof(lhome))
		CU_FAIL("a path too long for the test");
	if (snprintf(cmd, sizeof(cmd),
		     "mkdir -p '%1$s' '%2$s' '%3$s' && mount -t tmpfs pvtest '%2$s' && "
		     "mkdir -p '%2$s/real/home/.ssh/keys' && "
		     "echo PLANTED-linked-key > '%2$s/real/home/.ssh/id_ed25519' && "
		     "echo PLANTED-linked-work-key > '%2$s/real/home/.ssh/keys/id_work' && "
		     "echo PLANTED-linked-plain > '%2$s/real/home/plain.txt' && "
		     "mount --bind '%2$s/real/home/.ssh/keys' '%1$s' && "
		     "mount --bind '%2$s/real' '%3$s' && ln -sfn '%2$s/real' '%4$s'",
		     k, fs, b2, lnk) >= (int)sizeof(cmd)) {
		CU_FAIL("command too long");
		return;
	}
	if (snprintf(script, sizeof(script),
		 "echo \"w:$(cat '%1$s/id_work' 2>/dev/null | wc -c)\"\n"
		 "echo \"l:$(cat '%2$s/home/.ssh/id_ed25519' 2>/dev/null | wc -c)\"\n"
		 "cat '%2$s/home/plain.txt'\n",
		 k, b2) >= (int)sizeof(script))
		CU_FAIL("a path too long for the test");
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_FATAL(test_write_file(sc, script, strlen(script)) == 0);
	{
		struct test_sbx_run r = {at(work, "work"), lhome, NULL, at(pol, "work.yaml"), sc, NULL, NULL};

		/* the mounts in a child's own mount namespace (run_cst_own_mounts()) */
		st = run_cst_own_mounts(cmd, NULL, &r, &out, &err);
	}
	snprintf(cmd, sizeof(cmd), "rm -f '%4$s'; rmdir '%1$s' '%2$s' '%3$s' 2>/dev/null; true", k, b2, fs, lnk);
	CU_ASSERT(system(cmd) == 0);
	if (st == -2) {
		free(out);
		free(err);
		TEST_SKIP("cannot mount here");
		return;
	}
	ROW(st == 0, "second mounts below and linked: status %d", st);
	if (st != 0)
		show(st, out, err);
	ROW(test_has(out, "w:0\n"), "a key was readable through a mount of a directory inside ~/.ssh: %s", test_nz(out));
	ROW(test_has(out, "l:0\n"), "the key of a home reached through a link was readable through another mount: %s",
	    test_nz(out));
	ROW(test_has(out, "PLANTED-linked-plain"), "a plain file of the linked home's mount was not read: %s",
	    test_nz(out));
	free(out);
	free(err);
}

/*
 * Round 39 of the attack (family S, a copy the file system keeps beside
 * a store): a filer shows ".snapshot" in every directory of an NFS or
 * SMB share, and rows named it at the home's top and in ~/.config only:
 * ~/.local/share/.snapshot/hourly.0/keyrings/login.keyring read in
 * clear. Stand-ins as plain directories (the sandbox denies by path):
 * every directory on a store's way has its .snapshot denied; one that
 * is on no store's way (~/notes/.snapshot) reads as before.
 */
static void test_snapshots_every_dir(void)
{
	static const char *const copies[] = {
		"home/.local/share/.snapshot/hourly.0/keyrings/login.keyring",
		"home/.local/.snapshot/hourly.0/share/keyrings/login.keyring",
		"home/.docker/.snapshot/nightly.1/config.json",
		"home/.cargo/.snapshot/hourly.2/credentials.toml",
		"home/.config/Code/User/.snapshot/hourly.0/globalStorage/state.vscdb",
		"home/.config/helm/.snapshot/hourly.0/repositories.yaml",
		/* review of round 39: SMB's name of the same directory, there
		 * in every directory of a filer's share too, and at the
		 * home's own top */
		"home/.docker/~snapshot/nightly.1/config.json",
		"home/.local/share/~snapshot/hourly.0/keyrings/login.keyring",
		"home/~snapshot/hourly.0/.ssh/id_ed25519",
	};
	char script[8192], *out = NULL, *err = NULL;
	size_t n = 0;
	int st;

	SKIP_IF_NEEDED();
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		CU_ASSERT_FATAL(plant(copies[i]) == 0);
		n += (size_t)snprintf(script + n, sizeof(script) - n, "echo \"c%zu:$(cat '%s/%s' 2>/dev/null | wc -c)\"\n",
				      i, root, copies[i]);
	}
	CU_ASSERT_FATAL(plant("home/notes/.snapshot/hourly.0/todo.txt") == 0);
	n += (size_t)snprintf(script + n, sizeof(script) - n, "cat '%s/home/notes/.snapshot/hourly.0/todo.txt'\n", root);
	st = run_cst(NULL, script, &out, &err);
	ROW(st == 0, "snapshots in every directory: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		char want[32];

		snprintf(want, sizeof(want), "c%zu:0\n", i);
		ROW(test_has(out, want), "a filer's snapshot of a store's directory was readable: %s: %s", copies[i],
		    test_nz(out));
	}
	ROW(test_has(out, "PLANTED-home/notes/.snapshot/hourly.0/todo.txt"),
	    "a .snapshot on no store's way was hidden: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * Round 41 (the lead, from dedupe41's run of two suites side by side): a
 * denied directory of the home that comes and goes on the host while
 * passavant starts (a snapshot rotated, another program's temporary
 * directory) refused the start (status 125: "cannot list ... to check
 * its symbolic links", "cannot read the symbolic link", "cannot cover
 * with a tmpfs") when it went between the plan's look and its walk or
 * mount. Gone, it is absent as at the look: the start goes on. A child
 * makes and removes home/.zfs (a directory) and home/.aws/a (a directory
 * holding a link) in a loop while the command starts 24 times; each
 * start must run the command, and the .aws file the child writes is
 * never read.
 */
static void test_paths_gone_during_start(void)
{
	char home[PATH_MAX], cmd[3 * PATH_MAX + 256];
	int fails = 0, leaks = 0, st0 = 0;
	pid_t loop;

	SKIP_IF_NEEDED();
	at(home, "home");
	CU_ASSERT_FATAL(snprintf(cmd, sizeof(cmd),
				 "while :; do mkdir '%1$s/.zfs' '%1$s/.aws' '%1$s/.aws/a' 2>/dev/null; "
				 "ln -sf /etc/hostname '%1$s/.aws/a/l'; echo GONE-KEY > '%1$s/.aws/credentials'; "
				 "rm -rf '%1$s/.aws/a' '%1$s/.aws/credentials'; rmdir '%1$s/.zfs'; done 2>/dev/null",
				 home) < (int)sizeof(cmd));
	loop = fork();
	CU_ASSERT_FATAL(loop >= 0);
	if (loop == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 24; i++) {
		char *out = NULL, *err = NULL;
		int st = run_cst(NULL, "cat ~/.aws/credentials 2>/dev/null; echo started\n", &out, &err);

		if (st != 0 || !test_has(out, "started")) {
			if (fails++ == 0) {
				st0 = st;
				show(st, out, err);
			}
		}
		if (test_has(out, "GONE-KEY"))
			leaks++;
		free(out);
		free(err);
	}
	(void)kill(loop, SIGKILL);
	(void)waitpid(loop, NULL, 0);
	ROW(fails == 0, "a denied directory removed during the start refused it: %d of 24 starts (first status %d)",
	    fails, st0);
	ROW(leaks == 0, "a store written during the start was read: %d of 24", leaks);
}

TEST_REGISTRAR(register_credstores)
{
	CU_pSuite s = test_suite("credstores", suite_init, suite_cleanup);

	test_add(s, "stores moved by XDG_CONFIG_HOME, DOCKER_CONFIG, AWS_*, KUBECONFIG list, "
		 "GH_CONFIG_DIR, GNUPGHOME, CARGO_HOME, npm_config_userconfig, HISTFILE",
		 test_moved_stores);
	test_add(s, "histories, keys, registries, service CLIs, desktop stores, snap and flatpak homes, "
		 "wallets, model CLIs' keys",
		 test_listed_stores);
	test_add(s, "host secrets: /etc/shadow, /root, services' secret stores", test_host_secrets);
	test_add(s, "round 42: an ordinary user (group adm): the host's logs, its core dumps and mail unreadable",
		 test_user_logs_cores);
	test_add(s, "round 42 review: device nodes outside the sandbox's /dev (group disk, root-run) cannot be opened",
		 test_device_nodes);
	test_add(s, "Windows homes under /mnt/X/Users (WSL): stores, AppData and PowerShell profiles denied",
		 test_windows_homes);
	test_add(s, "environment: sessions, authorizations, webhooks, URL and connection-string "
		 "credentials; masked, proxy and trust variables kept",
		 test_env_family);
	test_add(s, "a masked value in another variable, the arguments, ~/.bashrc or .env reaches the "
		 "command as its sentinel",
		 test_remask_inputs);
	test_add(s, "a masked value in the start-up files of shells and terminals without a row (nushell, elvish, "
		 "PowerShell, kitty, wezterm, fish's conf.d, ~/.config/secrets.env) reaches the command as its sentinel",
		 test_remask_config_dirs);
	test_add(s, "the home's .gz logs spend inflation bounds of their own: a small .gz in the working directory "
		    "starts",
		 test_remask_inflate_budgets_apart);
	test_add(s, "an ordinary home's configuration directories (applications' databases, a .gz log, files past "
		 "the budget) start; the real value there is still shown as its sentinel",
		 test_remask_config_ordinary);
	test_add(s, "a masked value in the config of a linked worktree, a submodule, an outer repository or "
		 "GIT_DIR's reaches the command as its sentinel",
		 test_remask_git_layouts);
	test_add(s, "planted dot files hide no .env from the re-masker (listing bound, other .env* of "
		 "another directory)",
		 test_remask_bounds);
	test_add(s, "a masked value hex, base32, UTF-16, upper-cased, %25-encoded twice or split in another "
		 "variable is dropped; in an argument it refuses the start",
		 test_remask_encoded);
	test_add(s, "a masked value split by quotes, in C, JSON, HTML or shell escapes, rot13, reversed or a part of 14 "
		    "bytes dropped or refused; ordinary escapes and another session's token start",
		 test_remask_escaped);
	test_add(s, "a bare repository's config holding the masked value shows the sentinel", test_remask_bare_repo);
	test_add(s, "files a shell start-up file sources (and those they source) show the sentinel",
		 test_remask_sourced);
	test_add(s, "a FIFO, /dev/zero, /dev/stdin or a loop sourced by a start-up file does not hang the start",
		 test_remask_sourced_special);
	test_add(s, "a masked JWT, Slack token or URL: another token of its issuer (an anon key beside a service key, "
		 "another bot's), the URL's host in a variable or an argument starts; its secret part's hex is "
		 "dropped or refused",
		 test_remask_jwt_neighbours);
	test_add(s, "a masked OpenSSH key: another key of its kind and comment, its .pub in an argument start; "
		 "its hex refuses",
		 test_remask_key_neighbours);
	test_add(s, "a FIDO key of OpenSSH masked: another such key and its .pub in an argument start; its hex refuses",
		 test_remask_sk_key_neighbours);
	test_add(s, "a PuTTY key masked: a .gitconfig signing with its public key starts; its private line refuses",
		 test_remask_putty_key_neighbours);
	test_add(s, "files the command reads holding the masked value hex, as Python's \\N{...}, unpadded base64url of UTF-16 or "
		 "split across two refuse the start; another token's hex and ordinary escapes start",
		 test_remask_encoded_files);
	test_add(s, "files the command reads holding the masked value in Perl's \\x{..}, \\o{..}, \\N{U+..} refuse the "
		 "start; Perl's ordinary escapes start",
		 test_remask_perl_escapes);
	test_add(s, "a file the command reads holding the masked value in Ruby's \\u{.. ..} groups refuses the start; "
		 "Ruby's ordinary groups start",
		 test_remask_ruby_groups);
	test_add(s, "the masked value in 12-byte pieces in separate variables (raw, hex) is dropped; an 11-byte piece passes",
		 test_remask_pieces);
	test_add(s, "a whole AWS credentials file masked: a .env with another account's keys starts; its secret's hex "
		 "refuses",
		 test_remask_whole_file_neighbours);
	test_add(s, "a masked value in a compressed file (gzip, zlib, gzip's second member, hex gzip'd) refuses the "
		    "start; one inflating past the bound refuses; a gzip'd file with no value is read",
		 test_remask_compressed);
	test_add(s, "a masked value gzip'd after a line of text, after garbage behind a member, in base64 (H4sI), "
		    "zlib in base64, or split across members refuses the start; a script with a clean payload is read",
		 test_remask_compressed_inside);
	test_add(s, "a masked value in a zip's deflated member, zlib in the middle, gzip in base64 in gzip, gzip in hex "
		 "refuses the start; xz, bzip2, zstd and a zip's bzip2 member refuse as not searched",
		 test_remask_packed_more);
	test_add(s, "a masked value in a binary over 1 MiB or a file over 8 MiB (a chunk's edge, base64) refuses the "
		 "start; one without is named as searched in part",
		 test_remask_big_literal);
	test_add(s, "a masked value in gzip inside a gzip header's extra field, zlib with a 512-byte window after a line, "
		    "raw deflate in base64 (PHP gzdeflate) or alone refuses the start; a .Z refuses as not searched",
		 test_remask_round40);
	test_add(s, "ordinary programs holding a format's signature (tar, sqlite3, gpgv, libzstd) start; lzma, lz4, "
		    "legacy lz4, xz after a line, zstd in a tar in base64 refuse as not searched",
		 test_remask_unread_false);
	test_add(s, "a masked value in a zip64 member, a zip in a zip, an encrypted member refuses the start; a zip bomb "
		    "and zips nested six deep refuse as past the bounds",
		 test_remask_zip_shapes);
	test_add(s, "a dot file of 2 MiB holding the real value is searched: the command reads the sentinel; "
		    "binaries of 7 MB in ~/.local/bin start",
		 test_remask_big_file);
	test_add(s, "the search of files has a budget of bytes; a file past it refuses the start", test_remask_budget);
	test_add(s, "a whole AWS credentials file masked with NAME=VALUE lines: a .env with another account's keys "
		 "starts; its secret's hex refuses",
		 test_remask_whole_file_assign);
	test_add(s, "a service account's JSON masked: a .env with another account's JSON and the public x509 URLs "
		 "starts; a line of its key's secret digits refuses",
		 test_remask_service_account_neighbours);
	test_add(s, "a kubeconfig masked: a .env with its cluster's CA data starts; its client key decoded into a file "
		 "refuses",
		 test_remask_kubeconfig_neighbours);
	test_add(s, "a store or denyRead path created by the host during the session stays "
		 "unreadable (Landlock); old files and new ones in old directories stay readable",
		 test_late_stores);
	test_add(s, "review of round 40: a store the host makes during the session stays unreadable beside a second "
		    "mount of / (Landlock grants by inode)",
		 test_late_stores_second_mount);
	test_add(s, "a Windows home on an NTFS volume mounted anywhere (from mountinfo), or at /media/X/Users: denied",
		 test_windows_volume_mounted);
	test_add(s, "a Mac's home shared into a virtual machine at /Users/NAME (an NTFS volume, a plain "
		 "directory) or mounted anywhere holding .ssh and Library/Keychains (tmpfs): denied",
		 test_mac_home_shared);
	test_add(s, "snapshots of the home and of the system (ZFS .zfs, a filer's .snapshot, snapper's .snapshots "
		 "on a mounted btrfs, Timeshift): denied; __snapshots__ and ~/snapshots read",
		 test_snapshots);
	test_add(s, "round 39: a filer's .snapshot in every directory on a store's way: denied",
		 test_snapshots_every_dir);
	test_add(s, "round 40: the home and /etc/shadow through a bind mount above them or a second mount of /: denied",
		 test_second_mounts);
	test_add(s, "round 40 review: a mount of a directory inside ~/.ssh, and a home through a link into another mount: denied",
		 test_second_mounts_below_and_linked);
	test_add(s, "round 41: denied directories of the home made and removed on the host during the start: the "
		 "start goes on, nothing read",
		 test_paths_gone_during_start);
}
