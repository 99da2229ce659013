/*
 * mandatory.c - the rules every policy gets, whatever it says (SPEC §3.3,
 * §3.6), kept in one place so that the loader, `run` and `check -v` read
 * the same list:
 *
 *  - one table of filesystem paths: credential stores (denied for reading
 *    and for writing) and the files through which the host runs code later
 *    (shell start-up files, git's global config, ~/.ssh, autostart
 *    entries, systemd user units, agent and editor settings: denied for
 *    writing, also when they do not exist yet). Each row says whether it
 *    lies under HOME, under each writable workspace, or both;
 *  - the environment rule: a variable the policy does not name is dropped
 *    when its name or its value looks like a credential.
 *
 * policy_bind() (bind.c) expands the HOME rows into the policy's
 * denyRead/denyWrite lists with the home the caller read; `run`
 * (proxy/cli/plan.c) adds the workspace rows under the
 * working directory and each allowWrite directory, and applies the
 * environment rule. Every function here is pure. docs/config.md says why
 * each row is there.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "policy_int.h"

/* Short aliases for the table. */
#define R POLICY_MAND_READ
#define W POLICY_MAND_WRITE
#define H POLICY_MAND_HOME
#define S POLICY_MAND_WORKSPACE

static const struct policy_mandatory mandatory[] = {
	/* Credential stores (§3.6): unreadable, and unwritable too, since
	 * most are also configuration the host trusts: ~/.ssh/config
	 * (ProxyCommand), ~/.aws/config (credential_process), ~/.kube/config
	 * (exec plugins), ~/.docker/config.json (credsStore),
	 * ~/.gnupg/gpg-agent.conf (pinentry-program). */
	{".ssh", R | W, H, "ssh keys; authorized_keys, rc and config run commands"},
	{".aws", R | W, H, "AWS credentials; config can run credential_process"},
	{".gnupg", R | W, H, "GnuPG keys; agent config names programs"},
	{".config/gh", R | W, H, "GitHub CLI token"},
	{".config/hub", R | W, H, "hub (GitHub) token"},
	{".config/glab-cli", R | W, H, "GitLab CLI token"},
	{".docker/config.json", R | W, H, "registry credentials; credsStore names a program"},
	{".config/containers/auth.json", R | W, H, "podman/buildah registry credentials"},
	{".kube", R | W, H, "Kubernetes credentials; exec plugins run commands"},
	{".netrc", R | W, H, "passwords for curl, git, ftp"},
	{".npmrc", R | W, H, "npm token; node-options and script-shell run code"},
	{".yarnrc.yml", R | W, H, "yarn npmAuthToken"},
	{".pypirc", R | W, H, "PyPI upload token"},
	{".gem/credentials", R | W, H, "RubyGems API key"},
	{".cargo/credentials.toml", R | W, H, "cargo registry token"},
	{".cargo/credentials", R | W, H, "cargo registry token (old name)"},
	{".git-credentials", R | W, H, "git credential store"},
	{".config/git/credentials", R | W, H, "git credential store (XDG)"},
	{".pgpass", R | W, H, "PostgreSQL passwords"},
	{".my.cnf", R | W, H, "MySQL password"},
	{".vault-token", R | W, H, "HashiCorp Vault token"},
	{".terraform.d/credentials.tfrc.json", R | W, H, "Terraform Cloud token"},
	{".config/gcloud", R | W, H, "Google Cloud credentials"},
	{".azure", R | W, H, "Azure CLI tokens"},
	{".oci", R | W, H, "Oracle Cloud keys"},
	{".config/doctl", R | W, H, "DigitalOcean token"},
	{".pulumi/credentials.json", R | W, H, "Pulumi token"},
	{".databrickscfg", R | W, H, "Databricks token"},
	{".kaggle/kaggle.json", R | W, H, "Kaggle API key"},
	{".cache/huggingface/token", R | W, H, "Hugging Face token"},
	{".huggingface/token", R | W, H, "Hugging Face token (old place)"},
	{".m2/settings.xml", R | W, H, "Maven server passwords"},
	{".m2/settings-security.xml", R | W, H, "Maven master password"},
	{".gradle/gradle.properties", R | W, H, "Gradle publishing credentials"},
	{".s3cfg", R | W, H, "s3cmd keys"},
	{".config/rclone", R | W, H, "rclone remotes' credentials"},
	{".config/op", R | W, H, "1Password CLI"},
	{".password-store", R | W, H, "pass password store"},
	{".local/share/keyrings", R | W, H, "GNOME keyring"},
	{".claude/.credentials.json", R | W, H, "Claude CLI credentials"},
	{".local/state/passavant", R | W, H, "passavant's sentinel key and ledger (stable sentinels)"},
	{".codex/auth.json", R | W, H, "Codex CLI credentials"},
	{".gemini/oauth_creds.json", R | W, H, "Gemini CLI credentials"},
	{".config/github-copilot", R | W, H, "GitHub Copilot tokens"},
	{".mozilla", R | W, H, "Firefox profiles: cookies, saved passwords"},
	{".config/google-chrome", R | W, H, "Chrome profiles: cookies, saved passwords"},
	{".config/chromium", R | W, H, "Chromium profiles: cookies, saved passwords"},
	{".config/BraveSoftware", R | W, H, "Brave profiles: cookies, saved passwords"},
	{".config/microsoft-edge", R | W, H, "Edge profiles: cookies, saved passwords"},

	/* Shell start-up and logout files (bash, zsh, fish, sh, ksh, csh). */
	{".bashrc", W, H, "bash start-up"},
	{".bash_profile", W, H, "bash login start-up"},
	{".bash_login", W, H, "bash login start-up"},
	{".bash_logout", W, H, "bash logout"},
	{".bash_aliases", W, H, "sourced by the usual .bashrc"},
	{".profile", W, H, "sh/bash/dash login start-up"},
	{".inputrc", W, H, "readline: key bindings type commands"},
	{".bash_completion", W, H, "sourced by bash-completion in every interactive bash"},
	{".local/share/bash-completion", W, H, "bash-completion loads these on demand"},
	{".zshenv", W, H, "zsh start-up (every zsh)"},
	{".zshrc", W, H, "zsh start-up"},
	{".zprofile", W, H, "zsh login start-up"},
	{".zlogin", W, H, "zsh login start-up"},
	{".zlogout", W, H, "zsh logout"},
	{".config/fish", W, H, "fish: config.fish, conf.d, functions"},
	{".kshrc", W, H, "ksh start-up"},
	{".mkshrc", W, H, "mksh start-up"},
	{".shrc", W, H, "sh start-up (via $ENV)"},
	{".cshrc", W, H, "csh start-up"},
	{".tcshrc", W, H, "tcsh start-up"},
	{".login", W, H, "csh login start-up"},
	{".logout", W, H, "csh logout"},
	/* Session start-up: X, PAM and systemd environments, autostart. */
	{".xprofile", W, H, "X session start-up"},
	{".xsession", W, H, "X session start-up"},
	{".xsessionrc", W, H, "X session start-up"},
	{".xinitrc", W, H, "startx start-up"},
	{".pam_environment", W, H, "login environment (LD_PRELOAD...)"},
	{".config/environment.d", W, H, "systemd user environment"},
	{".config/autostart", W, H, "desktop autostart entries"},
	{".config/systemd", W, H, "systemd user units"},
	{".local/share/systemd", W, H, "systemd user units"},
	{".local/share/applications", W, H, "desktop entries: Exec= runs on xdg-open and menus"},
	{".config/plasma-workspace/env", W, H, "KDE: scripts sourced at login"},
	{".mailcap", W, H, "programs run per MIME type (mailers, run-mailcap)"},
	/* Code other programs load from HOME. */
	{".gitconfig", W, H, "git global config (fsmonitor, hooksPath, aliases)"},
	{".config/git", W, H, "git global config, attributes, hooks (XDG)"},
	{".local/lib", W, H, "pip --user packages: a .pth file runs at every python start"},
	{".cargo/config.toml", W, H, "cargo config: runners and rustc wrappers"},
	{".cargo/config", W, H, "cargo config (old name)"},
	{".config/passavant", W, H, "where the policy lookup finds the next policy"},
	{".config/direnv", W, H, "direnvrc runs at every prompt; direnv.toml can trust any .envrc"},
	{".direnvrc", W, H, "direnv: runs at every prompt"},
	{".vimrc", W, H, "vim start-up (runs commands)"},
	{".vim", W, H, "vim plugins and start-up"},
	{".config/nvim", W, H, "neovim start-up and plugins"},
	{".emacs", W, H, "emacs start-up (Lisp)"},
	{".emacs.d", W, H, "emacs start-up (Lisp)"},
	{".config/emacs", W, H, "emacs start-up (Lisp, XDG)"},
	{".tmux.conf", W, H, "tmux: run-shell, if-shell"},
	{".config/tmux", W, H, "tmux: run-shell, if-shell (XDG)"},
	{".gdbinit", W, H, "gdb start-up (shell commands, python)"},
	/* Directories a stock ~/.profile puts on PATH once they exist, and
	 * what it sources (not on PATH when `run` starts, so the PATH rule
	 * does not see them). */
	{"bin", W, H, "~/.profile adds it to PATH once it exists"},
	{".local/bin", W, H, "~/.profile adds it to PATH once it exists"},
	{".cargo/bin", W, H, "rustup puts it on PATH"},
	{".cargo/env", W, H, "sourced by ~/.profile and ~/.bashrc (rustup)"},
	{".cargo/env.fish", W, H, "sourced by fish (rustup)"},
	{".bashrc.d", W, H, "sourced by the usual .bashrc"},
	{".oh-my-zsh", W, H, "oh-my-zsh: custom plugins and themes run in every zsh"},
	{".zsh", W, H, "zsh plugins and functions"},
	{".config/zsh", W, H, "zsh start-up (ZDOTDIR)"},
	/* Editors. */
	{".exrc", W, H | S, "vi and neovim (exrc) start-up"},
	{".nvimrc", W, H | S, "neovim (exrc) start-up"},
	{".nvim.lua", W, S, "neovim (exrc) start-up"},
	{".local/share/nvim/site", W, H, "neovim plugins loaded at start"},
	{".emacs.el", W, H, "emacs start-up (Lisp)"},
	{".spacemacs", W, H, "emacs start-up (Lisp)"},
	{".doom.d", W, H, "emacs start-up (Lisp)"},
	{".config/doom", W, H, "emacs start-up (Lisp)"},
	{".config/VSCodium/User", W, H, "VSCodium user settings and tasks"},
	{".config/Windsurf/User", W, H, "Windsurf user settings and tasks"},
	{".vscode-server/data/Machine", W, H, "VS Code remote machine settings"},
	{".vscode-server/extensions", W, H, "VS Code remote extensions"},
	{".config/helix", W, H, "Helix language server commands"},
	{".helix", W, S, "Helix language server commands"},
	{".theia", W, S, "Theia tasks"},
	{".config/lazygit", W, H, "lazygit custom commands"},
	/* Language and tool start-up. */
	{".ipython", W, H, "IPython start-up scripts and config"},
	{".jupyter", W, H, "Jupyter config (Python)"},
	{".pythonrc.py", W, H, "python start-up"},
	{".pythonrc", W, H, "python start-up"},
	{".Rprofile", W, H, "R start-up"},
	{".irbrc", W, H, "irb start-up"},
	{".pryrc", W, H, "pry start-up"},
	{".hgrc", W, H, "Mercurial hooks and extensions"},
	{".gradle/init.d", W, H, "Gradle init scripts run in every build"},
	{".gradle/init.gradle", W, H, "Gradle init script run in every build"},
	{".gradle/init.gradle.kts", W, H, "Gradle init script run in every build"},
	{".yarnrc", W, H, "yarn 1: yarn-path names the program yarn runs"},
	{".bunfig.toml", W, H, "bun preload scripts"},
	{".psqlrc", W, H, "psql start-up (\\! runs commands)"},
	{".sqliterc", W, H, "sqlite3 start-up (.shell runs commands)"},
	{".lldbinit", W, H, "lldb start-up"},
	{".screenrc", W, H, "screen start-up (runs commands)"},
	{".terraformrc", W, H, "Terraform provider locations"},
	{".docker/cli-plugins", W, H, "docker CLI plugins (programs)"},
	{".config/starship.toml", W, H, "starship prompt custom commands"},
	{".config/mise", W, H, "mise tasks and hooks"},
	{".config/i3", W, H, "i3: exec lines"},
	{".config/sway", W, H, "sway: exec lines"},
	{".config/hypr", W, H, "Hyprland: exec lines"},
	{".config/openbox", W, H, "Openbox autostart"},
	/* Agent and editor settings that run commands (in HOME and in every
	 * writable workspace). */
	{".claude/settings.json", W, H | S, "Claude Code hooks and permissions"},
	{".claude/settings.local.json", W, H | S, "Claude Code hooks and permissions"},
	{".claude/commands", W, H | S, "Claude Code commands"},
	{".claude/agents", W, H | S, "Claude Code agents"},
	{".claude/hooks", W, H | S, "Claude Code hook scripts"},
	{".claude/skills", W, H | S, "Claude Code skills (scripts)"},
	{".claude/plugins", W, H, "Claude Code plugins (hooks, MCP servers)"},
	{".claude.json", W, H, "Claude Code state: user MCP servers run commands"},
	{".cursor", W, H | S, "Cursor settings, rules and MCP servers"},
	{".vscode", W, H | S, "VS Code tasks, settings and extensions"},
	{".config/Code/User", W, H, "VS Code user settings and tasks"},
	{".config/Cursor/User", W, H, "Cursor user settings and tasks"},
	{".idea", W, S, "JetBrains run configurations and tools"},
	{".mcp.json", W, S, "project MCP servers run commands"},
	{".gemini/settings.json", W, H | S, "Gemini CLI MCP servers and tool commands"},
	{".codex/config.toml", W, H | S, "Codex CLI MCP servers and notify command"},
	{".gemini/commands", W, H | S, "Gemini CLI custom commands"},
	{".gemini/extensions", W, H | S, "Gemini CLI extensions (MCP servers)"},
	{".kiro/settings", W, H | S, "Kiro MCP servers"},
	{".kiro/hooks", W, S, "Kiro agent hooks"},
	{".roo/mcp.json", W, S, "Roo Code MCP servers"},
	{".amazonq/mcp.json", W, S, "Amazon Q MCP servers"},
	{".continue", W, H | S, "Continue MCP servers and commands"},
	{"opencode.json", W, S, "opencode MCP servers and commands"},
	{"opencode.jsonc", W, S, "opencode MCP servers and commands"},
	{".opencode", W, S, "opencode plugins and commands"},
	{".config/opencode", W, H, "opencode MCP servers, plugins and commands"},
	{"*.code-workspace", W, S, "VS Code workspace tasks and settings"},
	/* Hook managers: their configs are run by the hooks they install. */
	{".pre-commit-config.yaml", W, S, "pre-commit hook commands"},
	{".pre-commit-config.yml", W, S, "pre-commit hook commands"},
	{"lefthook.yml", W, S, "lefthook hook commands"},
	{"lefthook.yaml", W, S, "lefthook hook commands"},
	{".lefthook.yml", W, S, "lefthook hook commands"},
	{".lefthook.yaml", W, S, "lefthook hook commands"},
	{"lefthook-local.yml", W, S, "lefthook hook commands"},
	{".lefthook-local.yml", W, S, "lefthook hook commands"},
	{".lefthook", W, S, "lefthook hook scripts"},
	{".husky", W, S, "husky hook scripts"},
	{".envrc", W, S, "direnv runs it on cd (once allowed)"},
	{".aider.conf.yml", W, H | S, "aider lint-cmd and test-cmd run after edits"},
	{".devcontainer", W, S, "dev container initializeCommand runs on the host"},
	{".devcontainer.json", W, S, "dev container initializeCommand runs on the host"},
	{".zed", W, S, "Zed tasks and language server commands"},
	{".config/zed", W, H, "Zed tasks and language server commands"},
	{".gitmodules", W, S, "submodule URLs and update commands"},
};

#undef R
#undef W
#undef H
#undef S

/* Contract in policy.h. */
size_t policy_mandatory_count(void)
{
	return ARRAY_LEN(mandatory);
}

/* Contract in policy.h. */
const struct policy_mandatory *policy_mandatory_get(size_t i)
{
	return i < ARRAY_LEN(mandatory) ? &mandatory[i] : NULL;
}

/* ------------------------------------------------------------------ */
/* The environment rule (SPEC §3.6)                                     */
/* ------------------------------------------------------------------ */

/* Name patterns, compared without regard to case. */
static const char *const name_contains[] = {
	"SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE_KEY",
	"API_KEY", "APIKEY", "ACCESS_KEY", "_TOKEN_",
};
static const char *const name_suffixes[] = {
	"TOKEN", "_KEY", "_APIKEY", "_PASS", "_PWD", "_AUTH", "_COOKIE",
	"_PAT", "_JWT", "_DSN", "_CREDS", "_BEARER",
};
static const char *const name_exact[] = {
	"APIKEY", "API_KEY",
};
/* A name ending so holds where a credential is, not the credential:
 * passed on (the filesystem rules decide whether it can be read). The
 * value rule still applies. */
static const char *const name_location_suffixes[] = {
	"_FILE", "_FILES", "_PATH", "_DIR", "_DIRS",
};

/* Whether the len bytes of name end with suffix (case-insensitive). */
static bool ends_with(const char *name, size_t len, const char *suffix)
{
	size_t s = strlen(suffix);

	return len >= s && strncasecmp(name + len - s, suffix, s) == 0;
}

/* Whether the len bytes of name contain needle (case-insensitive). */
static bool contains(const char *name, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp(name + i, needle, n) == 0)
			return true;
	return false;
}

/* A byte that may appear in a token after its prefix. */
static bool token_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == '/' || c == '+' || c == '=';
}

/* Minimum length of what follows a known prefix for the value to count as
 * a token ("sk-" alone or "AKIA" in a word is not one). */
#define ENV_TOKEN_MIN_TAIL 8

/* Bytes after which a token may start inside a value ("Bearer ghp_...",
 * "--token=ghp_...", "'ghp_...'", "a:ghp_..."), and bytes at which one
 * may end. */
#define TOKEN_BEFORE " \t\"':=,"
#define TOKEN_AFTER " \t\"',;"

/* Where in value a known token prefix (tokens.c, the table sentinels
 * keep) starts a token: at the start or after a TOKEN_BEFORE byte, then at
 * least ENV_TOKEN_MIN_TAIL token bytes up to the end or a TOKEN_AFTER
 * byte. -1 when nowhere. */
static long value_token_at(const char *v)
{
	size_t len = strlen(v), pre, end;

	for (size_t i = 0; i < len; i++) {
		if (i > 0 && strchr(TOKEN_BEFORE, v[i - 1]) == NULL)
			continue;
		pre = policy_token_prefix_len(v + i, len - i);
		if (pre == 0)
			continue;
		for (end = i + pre; end < len && token_char((unsigned char)v[end]); end++)
			;
		if (end - i - pre >= ENV_TOKEN_MIN_TAIL && (end == len || strchr(TOKEN_AFTER, v[end]) != NULL))
			return (long)i;
	}
	return -1;
}

/* Whether value is a JSON Web Token: "eyJ" (a base64url '{"'), then three
 * base64url parts separated by dots. */
static bool value_jwt(const char *v)
{
	unsigned dots = 0;
	size_t i;

	if (strncmp(v, "eyJ", 3) != 0)
		return false;
	for (i = 0; v[i] != '\0'; i++) {
		if (v[i] == '.')
			dots++;
		else if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
			   (v[i] >= '0' && v[i] <= '9') || v[i] == '-' || v[i] == '_' || v[i] == '='))
			return false;
	}
	return dots == 2 && i >= 20;
}

/* Whether value is a URL whose user information holds a password
 * ("postgres://user:pass@host/db"). */
static bool value_url_password(const char *v)
{
	const char *p = v, *colon, *at;
	size_t auth;

	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
	       *p == '+' || *p == '-' || *p == '.')
		p++;
	if (p == v || strncmp(p, "://", 3) != 0)
		return false;
	p += 3;
	auth = strcspn(p, "/?#");
	at = memchr(p, '@', auth);
	if (at == NULL)
		return false;
	colon = memchr(p, ':', (size_t)(at - p));
	return colon != NULL && colon + 1 < at;
}

/* Contract in policy.h. */
const char *policy_env_secret_reason(const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t len = eq != NULL ? (size_t)(eq - entry) : strlen(entry);
	bool location = false;
	long at;

	if (len == 0 || eq == NULL)
		return NULL;
	if (strncmp(entry, "PASSAVANT_", 10) == 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(name_location_suffixes) && !location; i++)
		location = ends_with(entry, len, name_location_suffixes[i]);
	if (!location) {
		for (size_t i = 0; i < ARRAY_LEN(name_contains); i++)
			if (contains(entry, len, name_contains[i]))
				return "its name looks like a credential";
		for (size_t i = 0; i < ARRAY_LEN(name_suffixes); i++)
			if (ends_with(entry, len, name_suffixes[i]))
				return "its name looks like a credential";
		for (size_t i = 0; i < ARRAY_LEN(name_exact); i++)
			if (strlen(name_exact[i]) == len && strncasecmp(entry, name_exact[i], len) == 0)
				return "its name looks like a credential";
	}
	at = value_token_at(eq + 1);
	if (at == 0)
		return "its value starts with a known token prefix";
	if (at > 0)
		return "its value holds a token with a known prefix";
	if (value_jwt(eq + 1))
		return "its value is a JSON Web Token";
	if (strncmp(eq + 1, "-----BEGIN", 10) == 0)
		return "its value is a PEM block";
	if (value_url_password(eq + 1))
		return "its value is a URL with a password";
	return NULL;
}

/* Contract in policy.h. */
bool policy_env_named(const policy_t *p, const char *name, size_t len)
{
	for (size_t i = 0; i < p->n_creds; i++) {
		const struct policy_cred_ent *c = &p->creds[i];
		if (c->pub.kind == CRED_ENV && c->name != NULL && strlen(c->name) == len &&
		    strncmp(c->name, name, len) == 0)
			return true;
	}
	return false;
}

/* Writes the patterns of one list, "A, B, C". */
static void put_list(FILE *out, const char *const *v, size_t n, const char *pre, const char *post)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s%s%s", i ? ", " : "", pre, v[i], post);
}

/* Contract in policy.h. */
void policy_print_env_rule(FILE *out, const char *lead)
{
	fprintf(out, "%sa variable credentials.envVars does not name is dropped when its name\n", lead);
	fprintf(out, "%s(any case) contains ", lead);
	put_list(out, name_contains, ARRAY_LEN(name_contains), "", "");
	fprintf(out, ",\n%sor ends with ", lead);
	put_list(out, name_suffixes, ARRAY_LEN(name_suffixes), "", "");
	fprintf(out, ",\n%sor is ", lead);
	put_list(out, name_exact, ARRAY_LEN(name_exact), "", "");
	fprintf(out, " (not when it ends with ");
	put_list(out, name_location_suffixes, ARRAY_LEN(name_location_suffixes), "", "");
	fprintf(out, "),\n%sor when its value holds a known token prefix (ghp_, github_pat_, "
		     "glpat-, sk-, sk-ant-,\n%sxoxb-, AKIA, ASIA, AIza, npm_, pypi-, hf_, ...) followed "
		     "by at least %d token characters,\n%sat its start or after a space, quote, ':', '=' "
		     "or ',' (\"Bearer ghp_...\"),\n%sis a JSON Web Token (eyJ...), a PEM block "
		     "(-----BEGIN) or a URL with a\n%spassword (scheme://user:pass@host); PASSAVANT_* "
		     "variables are kept.\n",
		lead, lead, ENV_TOKEN_MIN_TAIL, lead, lead, lead);
}

/* Contract in policy.h. */
void policy_print_mandatory(const policy_t *p, FILE *out)
{
	fputs("# Mandatory rules, added to every policy (SPEC 3.3, 3.6; docs/config.md):\n", out);
	fputs("#   deny   where        path                                 what\n", out);
	for (size_t i = 0; i < ARRAY_LEN(mandatory); i++) {
		const struct policy_mandatory *m = &mandatory[i];
		char where[32];
		(void)snprintf(where, sizeof(where), "%s%s%s",
			       (m->where & POLICY_MAND_HOME) ? "~" : "",
			       (m->where & POLICY_MAND_HOME) && (m->where & POLICY_MAND_WORKSPACE)
				       ? "+"
				       : "",
			       (m->where & POLICY_MAND_WORKSPACE) ? "workspace" : "");
		fprintf(out, "#   %-6s %-12s %-36s %s\n",
			(m->deny & POLICY_MAND_READ) ? "read+w" : "write", where, m->path, m->why);
	}
	fputs("#   (~: under $HOME and under the home directory of the password database;\n"
	      "#    workspace: under the working directory, each allowWrite directory and\n"
	      "#    the git repository each is in, and, created or changed in the run, in\n"
	      "#    every directory below them (moved aside); \"*.x\": any name ending so.\n"
	      "#    A credential store named by an allowRead entry stays readable.)\n",
	      out);
	fputs("#   write  PATH         each directory on $PATH, unless an allowWrite entry names it\n",
	      out);
	for (size_t i = 0; i < p->path_dirs.n; i++)
		fprintf(out, "#            %s\n", p->path_dirs.v[i]);
	fputs("#   write  each entry of $LD_LIBRARY_PATH, and $ENV, $BASH_ENV, $ZDOTDIR,\n"
	      "#          $PYTHONSTARTUP, the same way (code every later process loads)\n",
	      out);
	fputs("#   write  ~/.*, ~/bin  when a writable tree holds HOME: each existing dot entry\n"
	      "#          of HOME and ~/bin, unless an allowWrite entry names it exactly (one\n"
	      "#          holding an allowWrite entry: its own entries, the same way)\n",
	      out);
	fputs("#   write  $XDG_CONFIG_HOME/git, $GIT_CONFIG_GLOBAL, $GIT_TEMPLATE_DIR, git's default\n"
	      "#          templates, and what the global and system git configs name:\n"
	      "#          init.templateDir, core.hooksPath, include.path, includeIf.*.path\n",
	      out);
	fputs("#   write  the policy file, the audit file, extraCaCertPaths, the session\n"
	      "#          directory and, in every repository, git's control files\n",
	      out);
	fputs("# Environment:\n", out);
	policy_print_env_rule(out, "#   ");
}
