/*
 * test_mandatory.c - policy/mandatory.c: the one table of mandatory
 * filesystem denies (SPEC §3.3, §3.6) and the environment rule.
 *
 * Table rows are checked one CUnit assertion each, with a message naming
 * the row, so a red run says which entry or input broke.
 */
#include "../../../policy/policy_int.h"
#include "../../support/testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The row for path, or NULL. */
static const struct policy_mandatory *row(const char *path)
{
	for (size_t i = 0; i < policy_mandatory_count(); i++)
		if (strcmp(policy_mandatory_get(i)->path, path) == 0)
			return policy_mandatory_get(i);
	return NULL;
}

/* Every entry is relative, normalised, once; has a reason; denies
 * something somewhere. */
static void test_table_shape(void)
{
	size_t n = policy_mandatory_count();

	CU_ASSERT(n > 80);
	CU_ASSERT_PTR_NULL(policy_mandatory_get(n));
	for (size_t i = 0; i < n; i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);
		size_t len = strlen(m->path);
		bool host = (m->where & POLICY_MAND_SYSTEM) != 0;
		/* A host row is absolute and nothing else; the others relative,
		 * or a workspace name pattern (one '*', in the last component;
		 * no other glob character); IF_DIR only with WORKSPACE and a
		 * directory part. */
		ROW(len > 1 && (m->path[0] == '/') == host && m->path[0] != '~' &&
			    m->path[len - 1] != '/' && strstr(m->path, "//") == NULL &&
			    strstr(m->path, "/./") == NULL && strstr(m->path, "..") == NULL &&
			    strpbrk(m->path, "?[]\\") == NULL &&
			    (strchr(m->path, '*') == NULL ||
			     (strchr(strchr(m->path, '*') + 1, '*') == NULL &&
			      (strrchr(m->path, '/') == NULL || strrchr(m->path, '/') < strchr(m->path, '*')) &&
			      (m->where & ~POLICY_MAND_WS_IF_DIR) == POLICY_MAND_WORKSPACE)) &&
			    /* round 44: IF_DIR with HOME too (go/bin) */
			    (!(m->where & POLICY_MAND_WS_IF_DIR) ||
			     ((m->where & (POLICY_MAND_WORKSPACE | POLICY_MAND_HOME)) && strchr(m->path, '/') != NULL)) &&
			    /* round 44: a tool's directory: a HOME row without a '/' */
			    (!(m->where & POLICY_MAND_HOME_DIR) ||
			     ((m->where & POLICY_MAND_HOME) && strchr(m->path, '/') == NULL)) &&
			    /* EXISTING: a workspace row only (HOME rows get
			     * placeholders), not a pattern (which is). */
			    (!(m->where & POLICY_MAND_WS_EXISTING) ||
			     ((m->where & POLICY_MAND_WORKSPACE) && !(m->where & POLICY_MAND_HOME) &&
			      strchr(m->path, '*') == NULL)) &&
			    (!host || m->where == POLICY_MAND_SYSTEM),
		    "row %zu: \"%s\" is not a plain %s path or a workspace name pattern", i, m->path,
		    host ? "absolute" : "relative");
		ROW(m->why != NULL && m->why[0] != '\0', "row %s has no reason", m->path);
		ROW(m->deny != 0 && m->where != 0, "row %s denies nothing or nowhere", m->path);
		/* A store that can be read can be rewritten too. */
		ROW(!(m->deny & POLICY_MAND_READ) || (m->deny & POLICY_MAND_WRITE),
		    "credential store %s is not write-denied", m->path);
		/* Once per place: a path may be a store under HOME and a
		 * write deny in the workspace (.continue, .aider.conf.yml). */
		for (size_t j = 0; j < i; j++)
			ROW(strcmp(policy_mandatory_get(j)->path, m->path) != 0 ||
				    ((policy_mandatory_get(j)->where & m->where) &
				     (POLICY_MAND_HOME | POLICY_MAND_WORKSPACE)) == 0,
			    "%s listed twice", m->path);
	}
}

/* The relocation variables of the home rows (the stores, npx's and pnpm
 * dlx's trees), each item "$NAME", "$NAME:", "$NAME/sub" or "$NAME:/sub" with a NAME of at most
 * 63 bytes and a sub of at most 127 (bind.c's buffers). */
static void test_table_env(void)
{
	size_t with = 0;

	for (size_t i = 0; i < policy_mandatory_count() + 2; i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);
		const char *env = policy_mandatory_env(i);
		if (env == NULL)
			continue;
		with++;
		ROW(m != NULL && (m->where & POLICY_MAND_HOME), "row %zu has variables but is not under HOME", i);
		/* write rows: npx's and pnpm dlx's trees (review of round 42) */
		if (m != NULL && !(m->deny & POLICY_MAND_READ))
			ROW(strcmp(m->path, ".npm/_npx") == 0 || strcmp(m->path, ".cache/pnpm/dlx") == 0 ||
				    /* round 43: the trees of programs on PATH */
				    strstr(".cache/node/corepack .local/share/uv/tools .local/pipx .bun/bin "
					   ".bun/install/global .deno/bin .volta .asdf .local/share/mise .nvm "
					   ".local/share/fnm .local/share/gem "
					   /* round 44 */
					   "go/bin "
					   /* round 45 */
					   ".opam",
					   m->path) != NULL,
			    "write row %s has variables", m->path);
		for (const char *s = env; *s != '\0';) {
			size_t n = strcspn(s, " "), k = strcspn(s + 1, "/: ");
			/* round 44: "$NAME:/sub", sub under each entry */
			ROW(s[0] == '$' && k > 0 && k < 64 && n - 1 - k < 128 &&
				    (s[1 + k] != ':' || n == k + 2 || (s[2 + k] == '/' && n > k + 3)) &&
				    (s[1 + k] != '/' || n > k + 2),
			    "row %s: bad item \"%.*s\"", m ? m->path : "?", (int)n, s);
			s += n;
			if (*s == ' ')
				s++;
		}
	}
	CU_ASSERT(with >= 30);
}

/* The stores and host secrets the report of the second attack round
 * found readable: each a read and write deny. */
static void test_table_stores(void)
{
	static const char *const want[] = {
		".bash_history", ".zsh_history", ".local/share/fish/fish_history", ".psql_history",
		".mysql_history", ".python_history", ".node_repl_history", ".sqlite_history",
		".lesshst", ".config/sops/age/keys.txt", ".minikube", ".ollama/id_ed25519",
		".cloudflared", ".pki/nssdb", ".pip/pip.conf", ".config/pip/pip.conf",
		".config/uv/uv.toml", ".config/pypoetry/auth.toml", ".yarnrc", ".yarnrc.yml",
		".bunfig.toml", ".composer/auth.json", ".config/composer/auth.json", ".bundle/config",
		".nuget/NuGet/NuGet.Config", ".ivy2/.credentials", ".sbt/.credentials",
		".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties",
		".terraformrc", ".terraform.d/credentials.tfrc.json", ".config/helm/repositories.yaml",
		".fly", ".wrangler", ".config/.wrangler", ".config/stripe", ".mc", ".boto",
		".config/openstack/clouds.yaml", ".config/ngrok", ".ngrok2", ".supabase", ".vercel",
		".local/share/com.vercel.cli", ".config/hcloud", ".talos", ".oci", ".databrickscfg",
		".config/doctl", ".config/heroku", ".netrc", "_netrc", ".pgpass", ".my.cnf", ".s3cfg",
		".config/rclone", ".aws", ".config/Slack", ".config/Bitwarden CLI",
		".config/Code/User/globalStorage", ".mozilla", ".config/google-chrome",
		".config/chromium", ".local/share/keyrings", ".password-store", ".gnupg", ".vault",
		"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-",
		"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
		"/etc/ssh/ssh_host_ed25519_key", "/etc/ssl/private",
		/* round 32: per-application homes, wallets, model CLIs' keys */
		"snap", ".var/app", ".config/JetBrains", ".local/share/kwalletd", ".bitcoin",
		".electrum", ".ethereum/keystore", ".local/share/opencode/auth.json",
		".config/io.datasette.llm/keys.json", ".local/share/chezmoi", ".env",
		/* round 42: logs, core dumps and mail an ordinary user reads */
		"/var/log", "/var/lib/systemd/coredump", "/var/crash", "/var/lib/apport/coredump",
		"/var/spool/abrt", "/var/mail", "/var/spool/mail",
		/* round 43: dial-up, VPN and Wi-Fi secrets a group or everyone
		 * reads, LXD and Incus, CUPS */
		"/etc/ppp/peers", "/etc/chatscripts", "/etc/ppp/srp-secrets", "/etc/network/interfaces",
		"/etc/network/interfaces.d", "/etc/wpa_supplicant.conf", "/etc/vpnc", "/etc/swanctl",
		"/var/lib/lxd", "/var/snap/lxd/common/lxd", "/var/lib/incus", "/etc/cups/printers.conf",
		"/etc/cups/ssl", "/var/spool/cups", ".config/lxc", ".config/incus",
		/* review43f: networkd's WireGuard keys, OpenFortiVPN, mail relays */
		"/etc/systemd/network", "/etc/openfortivpn", "/etc/nullmailer/remotes", "/etc/dma/auth.conf",
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct policy_mandatory *m = row(want[i]);
		ROW(m != NULL && m->deny == (POLICY_MAND_READ | POLICY_MAND_WRITE),
		    "%s is not a read and write deny of the table", want[i]);
	}
}

/* Round 43: npx's and pnpm dlx's trees, wherever a variable or an
 * npmrc puts them, get a directory of the session; nothing else does. */
static void test_session_rows(void)
{
	ROW(policy_mandatory_session("/home/u/.npm/_npx"), "~/.npm/_npx is not a session tree");
	ROW(policy_mandatory_session("/srv/cache/npm/_npx"), "a moved _npx is not a session tree");
	ROW(policy_mandatory_session("/home/u/.cache/pnpm/dlx"), "pnpm's dlx is not a session tree");
	ROW(policy_mandatory_session("/home/u/.cache/node/corepack"), "corepack's cache is not a session tree");
	{
		static const char *const want[] = {".local/share/uv/tools", ".local/pipx", ".local/share/pipx",
						   ".bun/bin", ".bun/install/global", ".deno/bin", ".volta", ".asdf",
						   ".local/share/mise", ".nvm", ".local/share/fnm", ".local/share/gem",
						   ".gem/ruby", ".smartcd", ".lvimrc",
						   ".local.vimrc", "_vimrc_local.vim"};

		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			const struct policy_mandatory *m = row(want[i]);

			ROW(m != NULL && m->deny == POLICY_MAND_WRITE, "%s is not a write row", want[i]);
		}
	}
	ROW(!policy_mandatory_session("/home/u/.npm") && !policy_mandatory_session("/home/u/.bashrc") &&
		!policy_mandatory_session("/home/u/.local/bin"),
	    "another row is a session tree");
	for (size_t i = 0; i < policy_mandatory_count(); i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);

		if (m->where & POLICY_MAND_SESSION)
			ROW((m->where & POLICY_MAND_HOME) && m->deny == POLICY_MAND_WRITE,
			    "session row %s is not a write row under HOME", m->path);
	}
}

/* The entries issue 13 and SPEC §3.3/§3.6 name, with their bits. */
static void test_table_required(void)
{
	static const struct {
		const char *path;
		unsigned deny, where;
	} want[] = {
		/* §3.6 credential stores */
		{".ssh", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".aws", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".gnupg", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".config/gh", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".docker/config.json", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".config/containers/auth.json", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".kube", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".netrc", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".npmrc", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".pypirc", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".git-credentials", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".config/git/credentials", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".cargo/credentials.toml", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".pgpass", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".vault-token", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".config/gcloud", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".azure", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".claude/.credentials.json", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME},
		/* round 42: package runners' install trees */
		{".npm/_npx", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".cache/pnpm/dlx", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		/* §3.3 shell start-up and logout */
		{".bashrc", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".bash_profile", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".bash_login", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".bash_logout", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".profile", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".zshenv", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".zshrc", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".zprofile", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".zlogin", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".zlogout", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".config/fish", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		/* git, autostart, systemd */
		{".gitconfig", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".config/git", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".config/autostart", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".config/systemd", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".local/share/systemd", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		{".config/passavant", POLICY_MAND_WRITE, POLICY_MAND_HOME},
		/* agent and editor settings */
		{".claude/settings.json", POLICY_MAND_WRITE, POLICY_MAND_HOME | POLICY_MAND_WORKSPACE},
		{".claude/commands", POLICY_MAND_WRITE, POLICY_MAND_HOME | POLICY_MAND_WORKSPACE},
		{".claude/agents", POLICY_MAND_WRITE, POLICY_MAND_HOME | POLICY_MAND_WORKSPACE},
		{".cursor", POLICY_MAND_WRITE, POLICY_MAND_HOME | POLICY_MAND_WORKSPACE},
		{".vscode", POLICY_MAND_WRITE, POLICY_MAND_HOME | POLICY_MAND_WORKSPACE},
		{".idea", POLICY_MAND_WRITE, POLICY_MAND_WORKSPACE},
		{".mcp.json", POLICY_MAND_WRITE, POLICY_MAND_WORKSPACE},
		{".gitmodules", POLICY_MAND_WRITE, POLICY_MAND_WORKSPACE},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct policy_mandatory *m = row(want[i].path);
		ROW(m != NULL, "%s is not in the mandatory table", want[i].path);
		if (m == NULL)
			continue;
		ROW(m->deny == want[i].deny, "%s: deny bits %u, expected %u", want[i].path, m->deny,
		    want[i].deny);
		ROW((m->where & want[i].where) == want[i].where, "%s: where bits %u, expected %u",
		    want[i].path, m->where, want[i].where);
	}
}

/* The environment rule: NULL (kept) or a reason (dropped). */
static void test_env_rule(void)
{
	static const struct {
		const char *entry;
		bool dropped;
	} cases[] = {
		/* names */
		{"GITHUB_TOKEN=x", true},
		{"GH_TOKEN=x", true},
		{"AWS_SESSION_TOKEN=x", true},
		{"npm_token=x", true},
		{"SLACKTOKEN=x", true},
		{"FOO_SECRET=x", true},
		{"SECRET=x", true},
		{"MySecretThing=x", true},
		{"AWS_SECRET_ACCESS_KEY=x", true},
		{"DB_PASSWORD=x", true},
		{"password=x", true},
		{"PGPASSWD=x", true},
		{"GPG_PASSPHRASE=x", true},
		{"OPENAI_API_KEY=x", true},
		{"STRIPE_APIKEY=x", true},
		{"APIKEY=x", true},
		{"api_key=x", true},
		{"SIGNING_KEY=x", true},
		{"GIT_CREDENTIALS=x", true},
		{"AZURE_CREDENTIAL=x", true},
		{"DEPLOY_PRIVATE_KEY=x", true},
		{"DB_PASS=x", true},
		{"DB_PWD=x", true},
		{"NPM_CONFIG__AUTH=x", true},
		{"SESSION_COOKIE=x", true},
		{"GITHUB_PAT=x", true},
		{"CI_JOB_JWT=x", true},
		{"SENTRY_DSN=x", true},
		{"REGISTRY_CREDS=x", true},
		{"OPENAI_API_KEY_2=x", true},
		{"NPM_TOKEN_PROD=x", true},
		{"AWS_ACCESS_KEY_ID=x", true},
		/* names that only look alike */
		{"PWD=/home/u", false},
		{"OLDPWD=/home/u", false},
		{"TOKENIZERS_PARALLELISM=false", false},
		{"SSH_AUTH_SOCK=/run/user/1000/ssh", false},
		{"GIT_ASKPASS=/usr/bin/ksshaskpass", false},
		{"KEYBOARD=us", false},
		{"HOME=/home/u", false},
		{"PATH=/usr/bin:/bin", false},
		{"LANG=C.UTF-8", false},
		{"XDG_SESSION_TYPE=x11", false},
		{"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", false},
		{"XDG_SESSION_ID=3", false},
		{"DESKTOP_SESSION=gnome", false},
		{"SESSION_MANAGER=local/host:@/tmp/.ICE-unix/1", false},
		{"GOPRIVATE=example.com/org/*", false},
		{"GIT_AUTHOR_NAME=A U Thor", false},
		{"GIT_AUTHOR_EMAIL=a@example.com", false},
		{"XAUTHORITY=/run/user/1000/xauth", false},
		{"AUTHOR=me", false},
		/* sessions, authorizations, webhooks, cookies, signing keys */
		{"BW_SESSION=x", true},
		{"OP_SESSION_myaccount=x", true},
		{"HTTP_AUTHORIZATION=x", true},
		{"DOCKER_AUTH_CONFIG=x", true},
		{"AUTH_HEADER=x", true},
		{"SLACK_WEBHOOK_URL=x", true},
		{"DISCORD_WEBHOOK=x", true},
		{"BROWSER_COOKIES=x", true},
		{"COSIGN_SIGNING_MATERIAL=x", true},
		{"GITHUB_APP_PRIVATE=x", true},
		{"AZURE_STORAGE_CONNECTION_STRING=x", true},
		{"XDG_SESSION_COOKIE=x", true},
		/* a location, not the credential */
		{"GOOGLE_APPLICATION_CREDENTIALS_FILE=/k.json", false},
		{"PASSWORD_STORE_DIR=/home/u/.password-store", false},
		{"SECRETS_PATH=/srv/s", false},
		{"ANSIBLE_VAULT_PASSWORD_FILE=/home/u/.vault", false},
		/* ours */
		{"PASSAVANT_POLICY=/etc/p.yaml", false},
		{"PASSAVANT_SECRET=x", false},
		/* values */
		{"X=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", true},
		{"X=github_pat_11ABCDEFG0abcdefghijkl_mnopqrstu", true},
		{"X=glpat-abcdefghij0123456789", true},
		{"X=sk-ant-api03-abcdefghijklmnop", true},
		{"X=sk-proj-abcdefghijklmnop", true},
		{"X=xoxb-1234567890-abcdefghij", true},
		{"X=AKIAIOSFODNN7EXAMPLE", true},
		{"X=ASIAIOSFODNN7EXAMPLE", true},
		{"X=AIzaSyA-abcdefghijklmnopqrstuv", true},
		{"X=npm_abcdefghijklmnopqrstuvwxyz0123456789", true},
		{"X=pypi-AgEIcHlwaS5vcmcCJGFiY2Rl", true},
		{"X=hf_abcdefghijklmnopqrstuvwxyz", true},
		{"KEYLIKE=-----BEGIN OPENSSH PRIVATE KEY-----", true},
		{"DATABASE_URL=postgres://app:pw@db/app", true},
		{"REDIS=redis://:pw@localhost:6379", true}, /* an empty user, a password */
		/* a token inside a value, a JSON Web Token */
		{"HDR=Authorization: Bearer ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", true},
		{"ARGS=--token=glpat-abcdefghij0123456789 -v", true},
		{"CFG={\"auth\":\"npm_abcdefghijklmnopqrstuvwxyz0123456789\"}", true},
		{"X=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl", true},
		/* credentials in URL queries, connection strings, webhooks,
		 * HTTP authorizations */
		{"DATABASE_URL=postgres://db/app?sslmode=require&password=pw", true},
		{"DB=mysql://db/app?user=u&pass=x", true},
		{"U=https://api.example/v1?access_token=abc", true},
		{"U=https://api.example/v1?api-key=abc", true},
		{"U=https://acct.blob.example/c/b?sv=2020&sig=abc%3D", true},
		{"U=https://bucket.example/o?X-Amz-Credential=AK/x&X-Amz-Signature=ab12", true},
		{"U=https://maps.example/api?key=abc", true},
		{"U=https://app.example/cb#id_token=abc", true},
		{"CS=Server=db;Database=app;User Id=u;Password=pw;", true},
		{"CS=DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==", true},
		{"PGOPTS=host=db user=u password=pw", true},
		{"HOOK=https://hooks.slack.com/services/T000/B000/XXXX", true},
		{"HOOK=https://discord.com/api/webhooks/123/abc", true},
		{"HOOK=https://acme.webhook.office.com/webhookb2/abc", true},
		/* a token in a URL's path: a bot key, a capability link */
		{"TG=https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe", true},
		{"NOTIFY=https://maker.ifttt.com/trigger/deploy/with/key/dR8kQ2mZx9LpVb3NcW7yTa", true},
		{"ARGS=--mirror https://example.com/ --url https://dl.example/s/Xy7kP2qLm9RtV4bN8wZc1/f.tgz", true},
		{"H=Bearer abcdefghijklmnop1234", true},
		{"H=Authorization: Basic dXNlcjpwYXNzd29yZA==", true},
		{"H=authorization:bearer AbCdEfGhIjKlMn", true},
		/* values that only look alike */
		{"U=https://example.com/search?q=token&page=2", false},
		{"U=https://example.com/x?password=", false},
		{"U=https://hooks.example.com/", false},
		{"U=https://bucket.example/o?X-Amz-Credential=AKIDEXAMPLE/x", false},
		{"MSG=basic settings apply", false},
		{"MSG=Bearer of news", false},
		{"LESS=-R --use-color", false},
		{"CFLAGS=-O2 -DKEY=1", false},
		{"X=sk-", false},
		{"X=sk-short", false},
		{"X=ASIAN_FOOD", false},
		{"X=ghp_ has a space in it", false},
		{"X=AKIA", false},
		{"CACHE=/data/hf_datasets_cache", false},
		{"LS_COLORS=di=01;34:ln=01;36:*.sk=01;31", false},
		{"MSG=a task-runner-sk-thing here", false},
		{"X=eyJ.not.a.token", false},
		{"X=eyJhbGciOiJIUzI1NiJ9", false},
		{"URL=https://example.com/a@b", false},
		{"URL=https://user@example.com/", false},
		{"URL=https://example.com:8443/x", false},
		/* hashes, UUIDs, slugs, a short mixed segment, a token-like host or query */
		{"U=https://github.com/o/r/commit/9fceb02d0ae598e95dc970b74767f19372d61af8", false},
		{"U=https://api.example/projects/eb095278-f28d-448d-87fb-7b75c171a6aa/builds", false},
		{"U=https://example.com/docs/getting-started-with-the-new-release-2024", false},
		{"U=https://example.com/repo/MyProject2Docs/x", false},
		{"U=https://Ab3dEfGhIjKlMnOpQrStUv.example.com/", false},
		{"U=https://example.com/s?q=Ab3dEfGhIjKlMnOpQrStUv", false},
		{"P=/srv/Ab3dEfGhIjKlMnOpQrStUv/data", false},
		{"JDK_URL=https://example/OpenJDK17U-jdk_x64_linux_hotspot_17.0.9_9.tar.gz", false},
		{"M=https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct", false},
		{"M=https://huggingface.co/Qwen/Qwen2.5-Coder-32B-Instruct/resolve/main/x", false},
		{"D=file:///home/dev/Projects/Ab3dEfGhIjKlMnOpQrStUv/", false},
		{"D=https://dev.azure.com/ContosoEngineering01/", false},
		{"D=https://bucket.s3.example/ImageNet2012Validation/x", false},
		{"W=https://en.wikipedia.org/wiki/Windows_Server_2019_Datacenter", false},
		{"P=https://example.com/MyAwesomeProject2024/", false},
		/* round 32: PASS, CREDS, AUTH, BEARER at either end of a name;
		 * a PEM block in base64 (either alphabet); the password prompt
		 * programs and the variables every shell has stay */
		{"SSHPASS=x", true},
		{"DBPASS=x", true},
		{"PASS=x", true},
		{"PASS_DB=x", true},
		{"CREDS=x", true},
		{"CREDS_JSON=x", true},
		{"AUTH=user:x", true},
		{"GITHUB_OAUTH=x", true},
		{"BEARER=x", true},
		{"BEARER_VALUE=x", true},
		{"K=LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0K", true},
		{"K=LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t", true},
		{"K=LS0tLS1CRUdJTi", false},
		{"K=LS0tLS1FTkQgQ0VSVElGSUNBVEU=", false},
		/* the review of round 32: a PEM block as hex (either case), gzip
		 * data as base64 or hex, a PEM under two layers of encoding;
		 * a commit id, a SHA-256 and a flag-valued name stay */
		{"K=2d2d2d2d2d424547494e204f50454e5353482050524956415445204b45592d2d2d2d2d0a", true},
		{"K=2D2D2D2D2D424547494E204F50454E5353482050524956415445204B45592D2D2D2D2D0A", true},
		{"K=H4sIAKBdFGsC/9PVBQInV3dPPwX/AFe/4GAPhYAgzzDHEFcFb9dIkKQuV5Kx", true},
		{"K=1f8b0800a05d146b02ffd3d505022757774f3f05ff0057bfe0600f858020cf30c71057056fd74890", true},
		{"K=TFMwdExTMUNSVWRKVGlCUFVFVk9VMU5JSUZCU1NWWkJWRVVnUzBWWkxTMHRM", true},
		{"K=MmQyZDJkMmQyZDQyNDU0NzQ5NGUyMDRmNTA0NTRlNTM1MzQ4MjA1MDUyNDk1", true},
		{"GITHUB_SHA=1f8b08aa0d16b02ffd3d505022757774f3f05ff0", false},
		{"DIGEST=1f8b08aa0d16b02ffd3d505022757774f3f05ff01f8b08aa0d16b02ffd3d5050", false},
		{"K=2d2d2d2d2d424547", false},
		{"SKIP_AUTH=true", false},
		{"NO_AUTH=1", false},
		{"USE_PASS=off", false},
		{"GITHUB_TOKEN=", false},
		{"AUTH_MODE=truex", true},
		/* the review of round 33: a key without its PEM lines (PKCS#8,
		 * PKCS#1, SEC1, PKCS#12 DER in base64, an OpenSSH key's body), a
		 * PEM after white space or a quote, bzip2 and xz data; a
		 * certificate's or a public key's DER stays */
		{"K=MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", true},
		{"K=MIIEowIBAAKCAQEAwJ5pQ3xa", true},
		{"K=MHcCAQEEIJrWt1JpLTmezPOYSNoO", true},
		{"K=MIIJzwIBAzCCCYUGCSqGSIb3DQEH", true},
		{"K=b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAA", true},
		{"K=Ci0tLS0tQkVHSU4gUFJJVkFURSBLRVktLS0tLQ==", true},
		{"K= LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0K", true},
		{"K=\"LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0K\"", true},
		{"K=\n-----BEGIN PRIVATE KEY-----", true},
		{"K=QlpoOTFBWSZTWfDXhTQAACffgCAQQAr/4j////A/", true},
		{"K=/Td6WFoAAATm1rRGAgAhARYAAAB0L+Wj4AanBXld", true},
		{"K=MIIC+TCCAeGgAwIBAgIUbzdf0N8k", false},
		{"K=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A", false},
		{"K=3082010a0282010100c3", false},
		/* the review of round 33 (E2): a service-account JSON file or a
		 * kubeconfig as one base64 line, the key further in; an
		 * ordinary JSON in base64 stays */
		{"SA_B64=eyJ0eXBlIjogInNlcnZpY2VfYWNjb3VudCIsICJwcm9qZWN0X2lkIjogInAiLCAicHJpdmF0ZV9rZXlfaWQiOiAiYWJjIiwgInByaXZhdGVfa2V5IjogIi0tLS0tQkVHSU4gUFJJVkFURSBLRVktLS0tLVxuTUlJRXZRSUJBREFOQmdrcVxuLS0tLS1FTkQgUFJJVkFURSBLRVktLS0tLVxuIiwgImNsaWVudF9lbWFpbCI6ICJ4QHAuaWFtLmdzZXJ2aWNlYWNjb3VudC5jb20ifQ==", true},
		{"KC_B64=YXBpVmVyc2lvbjogdjEKY2x1c3RlcnM6Ci0gY2x1c3RlcjoKICAgIHNlcnZlcjogaHR0cHM6Ly9rCnVzZXJzOgotIG5hbWU6IHUKICB1c2VyOgogICAgY2xpZW50LWNlcnRpZmljYXRlLWRhdGE6IFFVSkQKICAgIGNsaWVudC1rZXktZGF0YTogUkVWRwo=", true},
		{"CFG_B64=eyJ0eXBlIjogImNvbmZpZyIsICJuYW1lIjogImhlbGxvIHdvcmxkLCB0aGlzIGlzIGFuIG9yZGluYXJ5IGpzb24gYmxvYiJ9", false},
		/* the review of round 33 (E2) as a family: zlib data, base32,
		 * hex with separators or escapes ("2d:2d", "0x2d, ", "\\x2d",
		 * "%2D"), a PEM or service-account key further into a value's
		 * text, as it is or escaped, or in a whole hex or base32 value;
		 * PGP and PuTTY keys. A MAC address, a key fingerprint, a
		 * percent-encoded URL or message, a commit id or SHA-256
		 * starting zlib's bytes, a JSON with escapes and a TOTP-like
		 * base32 value stay */
		{"K=eJzT1QUCJ1d3Tz8F/wBXv+BgD4WAIM8wxxBXBW/XSJCkLleSsVNOUp5fVaKz", true},
		{"K=789cd3d505022757774f3f05ff0057bfe0600f858020cf30c71057056fd74890a42e5792b1534e529e5f55a2b3", true},
		{"K=FUWS2LJNIJCUOSKOEBHVARKOKNJUQICQKJEVMQKUIUQEWRKZFUWS2LJNBJRDGQTM", true},
		{"K=fuws2ljnijcuoskoebhvarkoknjuqicqkjevmqkuiuqewrkzfuws2ljnbjrdgqtm", true},
		{"K=2d:2d:2d:2d:2d:42:45:47:49:4e:20:4f:50:45:4e:53:53:48:20:50:52:49:56:41:54:45:20:4b:45:59:2d:2d:2d:2d:2d:0a:62:33:42:6c", true},
		{"K=2D 2D 2D 2D 2D 42 45 47 49 4E 20 4F 50 45 4E 53 53 48 20 50 52 49 56 41 54 45 20 4B 45 59 2D 2D 2D 2D 2D 0A 62 33 42 6C", true},
		{"K=0x2d, 0x2d, 0x2d, 0x2d, 0x2d, 0x42, 0x45, 0x47, 0x49, 0x4e, 0x20, 0x4f, 0x50, 0x45, 0x4e, 0x53, 0x53, 0x48, 0x20, 0x50, 0x52, 0x49, 0x56, 0x41, 0x54, 0x45, 0x20, 0x4b, 0x45, 0x59, 0x2d, 0x2d, 0x2d, 0x2d, 0x2d, 0x0a, 0x62, 0x33, 0x42, 0x6c", true},
		{"K=\\x2d\\x2d\\x2d\\x2d\\x2d\\x42\\x45\\x47\\x49\\x4e\\x20\\x4f\\x50\\x45\\x4e\\x53\\x53\\x48\\x20\\x50\\x52\\x49\\x56\\x41\\x54\\x45\\x20\\x4b\\x45\\x59\\x2d\\x2d\\x2d\\x2d\\x2d\\x0a\\x62\\x33\\x42\\x6c", true},
		{"K=%2D%2D%2D%2D%2D%42%45%47%49%4E%20%4F%50%45%4E%53%53%48%20%50%52%49%56%41%54%45%20%4B%45%59%2D%2D%2D%2D%2D%0A%62%33%42%6C", true},
		{"K=RlVXUzJMSk5JSkNVT1NLT0VCSFZBUktPS05KVVFJQ1FLSkVWTVFLVUlVUUVXUktaRlVXUzJMSk5CSlJE", true},
		{"APP_CONFIG={\"type\": \"service_account\", \"project_id\": \"p\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIE\\n\"}", true},
		{"APP_CONFIG={\"type\": \"service_account\", \"project_id\": \"p\", \"private_key\": \"\\u002d\\u002d\\u002d\\u002d\\u002dBEGIN PRIVATE KEY\\u002d\\u002d\\u002d\\u002d\\u002d\\nMIIE\\n\"}", true},
		{"APP_CONFIG=key%3D-----BEGIN%20RSA%20PRIVATE%20KEY-----%0AMIIE", true},
		{"APP_CONFIG=x -----BEGIN PGP PRIVATE KEY BLOCK-----", true},
		{"K=UHVUVFktVXNlci1LZXktRmlsZS0zOiBzc2gtZWQyNTUxOQpFbmNyeXB0aW9uOiBub25lCg==", true},
		{"SA_HEX=7b2274797065223a2022736572766963655f6163636f756e74222c202270726f6a6563745f6964223a202270222c2022707269766174655f6b6579223a20222d2d2d2d2d424547494e2050524956415445204b45592d2d2d2d2d5c6e4d4949455c6e227d", true},
		{"SA_B32=PMRHI6LQMURDUIBCONSXE5TJMNSV6YLDMNXXK3TUEIWCAITQOJXWUZLDORPWSZBCHIQCE4BCFQQCE4DSNF3GC5DFL5VWK6JCHIQCELJNFUWS2QSFI5EU4ICQKJEVMQKUIUQEWRKZFUWS2LJNLRXE2SKJIVOG4IT5", true},
		{"SA_HEXC=7b:22:74:79:70:65:22:3a:20:22:73:65:72:76:69:63:65:5f:61:63:63:6f:75:6e:74:22:2c:20:22:70:72:6f:6a:65:63:74:5f:69:64:22:3a:20:22:70:22:2c:20:22:70:72:69:76:61:74:65:5f:6b:65:79:22:3a:20:22:2d:2d:2d:2d:2d:42:45:47:49:4e:20:50:52:49:56:41:54:45:20:4b:45:59:2d:2d:2d:2d:2d:5c:6e:4d:49:49:45:5c:6e:22:7d", true},
		{"TOTP_ISSUER_ID=FVYRMQVXE2YEIALCPSU7XLBS6XEFGD5RSA6MJWYCEWDRPEQ2JCAQ====", false},
		{"GIT_COMMIT=789c0a1f8b3de4c2a9b1f07e5d3c2b1a09f8e7d6", false},
		{"DIGEST=789cd3d505022757774f3f05ff0057bfe0600f858020cf30c71057056fd74890", false},
		{"MAC=aa:bb:cc:dd:ee:ff", false},
		{"FP=SHA256:2d:2d:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22", false},
		{"MSG=see docs%20for%20the%20key%20format", false},
		{"U=https://example.com/a%2Fb%3Fc%3Dd", false},
		{"JSON={\"name\": \"x\", \"path\": \"C:\\\\Users\\\\x\", \"n\": \"\\u00e9\"}", false},
		{"B32=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", false},
		/* round 34 of the attack (E1-E5, d6): base64 wrapped at 76
		 * columns; credential files without a key (AWS, docker auths,
		 * .npmrc, .netrc, a kubeconfig token), as they are or in
		 * base64; a PEM as hex after one 0x, base85, ascii85; settings
		 * written as a header, YAML, JSON, a command line; the names
		 * _PW, MNEMONIC, SEED_PHRASE, *_SEED of OTP/MFA, SALT, HMAC,
		 * KEY. A YAML without secrets, a reference, a JSON "key", a
		 * token file's path, a random seed and a masked value stay */
		{"CFG=eyJ0eXBlIjogInNlcnZpY2VfYWNjb3VudCIsICJwcm9qZWN0X2lkIjogImRlbW8iLCAicHJpdmF0\nZV9rZXkiOiAiLS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tXG5NSUlFdlFJQkFEQU5CZ2txaGtp\nRzl3MEJBUUVGQUFTQ0JLY3dnZ1NqQWdFQUFvSUJBUUM3XG4tLS0tLUVORCBQUklWQVRFIEtFWS0t\nLS0tXG4ifQ==", true},
		{"CFG=[default]\naws_access_key_id = AKIAZZZZEXAMPLE00001\naws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYzzSECRET01\n", true},
		{"CFG=W2RlZmF1bHRdCmF3c19hY2Nlc3Nfa2V5X2lkID0gQUtJQVpaWlpFWEFNUExFMDAwMDEKYXdzX3NlY3JldF9hY2Nlc3Nfa2V5ID0gd0phbHJYVXRuRkVNSUs3TURFTkdiUHhSZmlDWXp6U0VDUkVUMDEK", true},
		{"CFG={\"auths\":{\"r.example.com\":{\"auth\":\"ZGVwbG95Olp4OXZRMnBMN3RSNG1OOGtXM3lC\"}}}", true},
		{"CFG=Ly9yLmV4YW1wbGUuY29tLzpfYXV0aFRva2VuPVp4OXZRMnBMN3RSNG1OOGtXM3lCcTFTRUNSRVQwMgo=", true},
		{"CFG=bWFjaGluZSBhcGkuZXhhbXBsZS5jb20gbG9naW4gZGVwbG95IHBhc3N3b3JkIFp4OXZRMnBMN3RSNG1OOGtTRUNSRVQwMwo=", true},
		{"CFG=YXBpVmVyc2lvbjogdjEKdXNlcnM6Ci0gbmFtZTogdQogIHVzZXI6CiAgICB0b2tlbjoga1p4OXZRMnBMN3RSNG1OOGtXM3lCcTFTRUNSRVQwNAo=", true},
		{"CFG=0x2d2d2d2d2d424547494e2050524956415445204b45592d2d2d2d2d0a4d494945765149424144414e42676b71686b6947397730424151454641415343424b63776767536a41674541416f4942415143370a2d2d2d2d2d454e442050524956415445204b45592d2d2d2d2d0a", true},
		{"CFG=EiElAEkZ>{NlqY8Qb|@pR7D_5MOiH^EiEkyO-V^bc2P+}K}11LLT77nXlrRlId?EZK~Y6UK|xbPLQ7+JXJ=DtL1#rlL2pSyK~Y0D3N0-yEiFY(L?BR7NmfBrMIcK>SuHIsEiDQ", true},
		{"CFG=/M/P+/ODlr8PUC);FsnT<(.p&79M2o/M/O]9h@oFG#:gt5t\"\"66>((RBPV<P3Hm/D5uC'?5s\\F:6;(g4B4k.X6\"`VP6#T=]5uC!.$8!h]/M0Cd6m,<(8QJ,V73G5l=Y23W/M.;", true},
		{"CFG=Authorization: Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b", true},
		{"CFG=X-API-Key: 8f3a9c2d7e1b4a6f9c0d2e5b7a1c3f8e", true},
		{"CFG=password: Zx9vQ2pL7tR4mN8kSECRET05", true},
		{"CFG={\"password\":\"Zx9vQ2pL7tR4mN8kSECRET06\"}", true},
		{"CFG=--password Zx9vQ2pL7tR4mN8kSECRET07", true},
		{"CFG=-u admin:Zx9vQ2pL7tR4mN8kSECRET08", true},
		{"LDAP_BIND_PW=x", true},
		{"MNEMONIC=x", true},
		{"SEED_PHRASE=x", true},
		{"TOTP_SEED=x", true},
		{"MFA_SEED=x", true},
		{"PASSWORD_SALT=x", true},
		{"KEY=x", true},
		{"CFG=name: build\nimage: debian:12\n", false},
		{"CFG=password: ${DB_PASSWORD}", false},
		{"CFG={\"key\": \"primary\", \"mode\": \"fast\"}", false},
		{"CFG=Authorization: none", false},
		{"CFG=--token-file /run/secrets/t", false},
		{"RANDOM_SEED=42", false},
		{"PYTHONHASHSEED=0", false},
		{"CFG=see https://example.com/docs#password-reset", false},
		{"CFG=token: ***", false},
		/* the review of round 34: prose about options (E3), an
		 * algorithm's name, a colon fingerprint starting gzip's bytes,
		 * ascii85's z in ordinary words (E1: wrote past the buffer) */
		{"CI_COMMIT_DESCRIPTION=Adds --password-file option; password = read from file", false},
		{"CI_MERGE_REQUEST_TITLE=Add --token flag to CLI (token: stored in keyring)", false},
		{"HELP_TEXT=Usage: tool --password PASSWORD --user USER", false},
		{"HMAC=sha256", false},
		{"CERT_FP=1f:8b:08:12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0:12:34:56:78:9a", false},
		{"X=z", false},
		{"THEME=zen", false},
		{"SNORE=zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", false},
		{"CMD=-u%20ab:cdefgh", true},
		{"CFG=password: hunter22", true},
		{"CFG=Authorization: Bearer 9944b09199c62bcf9418ad846dd0e4bb", true},
		/* the review of round 34 (E4): a PEM in UTF-16 then base64,
		 * as octal escapes, as HTML character references, in a zip
		 * archive (base64), its first line without dashes */
		{"K_UTF16_B64=//4tAC0ALQAtAC0AQgBFAEcASQBOACAAUABSAEkAVgBBAFQARQAgAEsARQBZAC0ALQAtAC0ALQAKAE0AQwA0AEMAQQBRAEEAdwBCAFEAWQBEAEsAMgBWAHcAQgBDAEkARQBJAEcATwBOAHcAbQBHAE8AeQBTAGcAaAByADAARwBFAHgATABoAFQASwA0AFoAZQA1ADcAVgBYADEAOABkAEkATwB0AGUAcwBMAHIAZgA0AEUAMQBHAEcACgAtAC0ALQAtAC0ARQBOAEQAIABQAFIASQBWAEEAVABFACAASwBFAFkALQAtAC0ALQAtAAoA", true},
		{"K_OCTAL=\\055\\055\\055\\055\\055\\102\\105\\107\\111\\116\\040\\120\\122\\111\\126\\101\\124\\105\\040\\113\\105\\131\\055\\055\\055\\055\\055\\012\\115\\103\\064\\103\\101\\121\\101\\167\\102\\121\\131\\104\\113\\062\\126\\167\\102\\103\\111\\105\\111\\107\\117\\116\\167\\155\\107\\117\\171\\123\\147\\150\\162\\060\\107\\105\\170\\114\\150\\124\\113\\064\\132\\145\\065\\067\\126\\130\\061\\070\\144\\111\\117\\164\\145\\163\\114\\162\\146\\064\\105\\061\\107\\107\\012\\055\\055\\055\\055\\055\\105\\116\\104\\040\\120\\122\\111\\126\\101\\124\\105\\040\\113\\105\\131\\055\\055\\055\\055\\055\\012", true},
		{"K_HTMLENT=&#45;&#45;&#45;&#45;&#45;&#66;&#69;&#71;&#73;&#78;&#32;&#80;&#82;&#73;&#86;&#65;&#84;&#69;&#32;&#75;&#69;&#89;&#45;&#45;&#45;&#45;&#45;&#10;&#77;&#67;&#52;&#67;&#65;&#81;&#65;&#119;&#66;&#81;&#89;&#68;&#75;&#50;&#86;&#119;&#66;&#67;&#73;&#69;&#73;&#71;&#79;&#78;&#119;&#109;&#71;&#79;&#121;&#83;&#103;&#104;&#114;&#48;&#71;&#69;&#120;&#76;&#104;&#84;&#75;&#52;&#90;&#101;&#53;&#55;&#86;&#88;&#49;&#56;&#100;&#73;&#79;&#116;&#101;&#115;&#76;&#114;&#102;&#52;&#69;&#49;&#71;&#71;&#10;&#45;&#45;&#45;&#45;&#45;&#69;&#78;&#68;&#32;&#80;&#82;&#73;&#86;&#65;&#84;&#69;&#32;&#75;&#69;&#89;&#45;&#45;&#45;&#45;&#45;&#10;", true},
		{"K_ZIP_B64=UEsDBBQAAAAIAKC2hV1lu+S5YgAAAHcAAAAFAAAAay5wZW3T1QUCJ1d3Tz+FgCDPMMcQVwVv10iQoC6Xr7OJs2OgY7lTYKSLt1FYuZOzp6unu79fea67f2VwekaRgbtrhU9GiLdJVKqpeViEoUWKp39JarFPUZqJq6G7OxfYGFc/F0yjAVBLAQIUAxQAAAAIAKC2hV1lu+S5YgAAAHcAAAAFAAAAAAAAAAAAAACAAQAAAABrLnBlbVBLBQYAAAAAAQABADMAAACFAAAAAAA=", true},
		{"K_PEM_SPACES_NO_DASH=BEGIN PRIVATE KEY MC4CAQAwBQYDK2VwBCIEIGONwmGOySghr0GExLhTK4Ze57VX18dIOtesLrf4E1GG END PRIVATE KEY ", true},
		{"SSH_ASKPASS=/usr/bin/ksshaskpass", false},
		{"GIT_ASKPASS=/usr/share/code/askpass.sh", false},
		{"SUDO_ASKPASS=/usr/bin/ssh-askpass", false},
		{"PROXY_BYPASS=localhost", false},
		{"PATH=/usr/bin:/bin", false},
		{"PWD=/home/u/p", false},
		{"OLDPWD=/home/u", false},
		{"XAUTHORITY=/run/user/1000/xauth_abc", false},
		{"SSH_AUTH_SOCK=/run/user/1000/ssh-agent.socket", false},
		{"PASSAVANT_SESSION=x", false},
		{"X=", false},
		{"=x", false},
		{"NOEQUALS", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = policy_env_secret_reason(cases[i].entry);
		ROW((why != NULL) == cases[i].dropped, "\"%s\": %s, expected %s", cases[i].entry,
		    why ? why : "kept", cases[i].dropped ? "dropped" : "kept");
		/* The reason never quotes the value. */
		if (why != NULL && strchr(cases[i].entry, '=') != NULL &&
		    strlen(strchr(cases[i].entry, '=') + 1) > 3)
			ROW(strstr(why, strchr(cases[i].entry, '=') + 1) == NULL,
			    "the reason quotes the value of %s", cases[i].entry);
	}
}

/* policy_env_named: credentials.envVars names, either mode, exact length. */
static void test_env_named(void)
{
	unsigned nerr = 0;
	char *diag = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&diag, &len);
	static const char doc[] = "credentials:\n  envVars:\n"
				  "    - {name: NAMED_DENY, mode: deny}\n";
	policy_t *p = policy_load_buffer("t.yaml", doc, sizeof(doc) - 1, f, &nerr);

	fclose(f);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_TRUE(policy_env_named(p, "NAMED_DENY=x", 10));
	CU_ASSERT_FALSE(policy_env_named(p, "NAMED_DENY_2=x", 12));
	CU_ASSERT_FALSE(policy_env_named(p, "NAMED", 5));
	policy_free(p);
	free(diag);
}

/* check -v's text: every row, the PATH part and the environment rule. */
static void test_print(void)
{
	char *text = NULL, *diag = NULL;
	size_t len = 0, dlen = 0;
	FILE *d = open_memstream(&diag, &dlen), *f;
	policy_t *p = policy_load_default(d);

	fclose(d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	f = open_memstream(&text, &len);
	policy_print_mandatory(p, f);
	fclose(f);
	for (size_t i = 0; i < policy_mandatory_count(); i++)
		ROW(strstr(text, policy_mandatory_get(i)->path) != NULL, "check -v misses %s",
		    policy_mandatory_get(i)->path);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "$PATH"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "Environment:"));
	/* Comment lines only: the output stays a loadable policy. */
	for (char *l = text; l != NULL && *l != '\0';) {
		ROW(l[0] == '#', "not a comment line: %.60s", l);
		l = strchr(l, '\n');
		if (l != NULL)
			l++;
	}
	policy_free(p);
	free(text);
	free(diag);
}

TEST_REGISTRAR(policy_mandatory_register)
{
	CU_pSuite s = test_suite("policy_mandatory", NULL, NULL);

	test_add(s, "table: shape of every row", test_table_shape);
	test_add(s, "table: the rows SPEC 3.3/3.6 and issue 13 name", test_table_required);
	test_add(s, "table: variables that move a store", test_table_env);
	test_add(s, "table: histories, keys, registries, services, desktop, host secrets",
		 test_table_stores);
	test_add(s, "round 43: the package runners' trees are the session's", test_session_rows);
	test_add(s, "environment rule table", test_env_rule);
	test_add(s, "policy_env_named", test_env_named);
	test_add(s, "check -v text", test_print);
}
