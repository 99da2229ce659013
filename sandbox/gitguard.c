/*
 * gitguard.c - git must not run a program the sandbox planted (SPEC §3.3,
 * issue 13 class 1).
 *
 * Two halves. sbx_git_protect() (gitprotect.c) names, before the sandbox starts, the
 * control files of the repositories the launcher knows about (the working
 * directory's, the allowWrite roots'), which the mount plan then makes
 * read-only or impossible to create. sbx_gitguard_check() (this file, the
 * walk; the rules in gitrules.c, moving aside in gitquarantine.c) runs after the
 * sandbox has ended (every process of it is gone, so nothing changes under
 * it): it walks every writable tree, finds every git directory, and moves
 * aside each control file created or changed during the session that can
 * make git run a program. docs/sandbox.md ("Git control files") explains
 * the rules; this file follows them. The same walk moves aside the
 * editor and agent settings (.vscode, .claude/settings.json, .mcp.json,
 * ...: the caller's list) created or changed during the session in any
 * directory, nested ones included: the mount plan protects them only at
 * the top of each writable tree.
 *
 * "Changed during the session" is the inode's ctime at or after the
 * session start: the kernel sets it on every write, chmod, link and
 * rename, and no unprivileged process can set it back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "base/envnames.h"
#include "base/fileio.h"
#include "sandbox/gitguard_int.h"
#include "sandbox/sandbox.h"


static int open_below_root(const struct gg *g)
{
	return gg_open_below(g, g->path);
}

int gg_open_below(const struct gg *g, const char *abs)
{
	struct open_how how;
	const char *rel = abs + g->rootlen;

	/* Under the root being walked (its path is g->path's first rootlen
	 * bytes; the root "/" holds every absolute path). */
	if (strncmp(abs, g->path, g->rootlen) != 0 ||
	    (g->rootlen > 1 && *rel != '/' && *rel != '\0')) {
		errno = EXDEV;
		return -1;
	}
	while (*rel == '/')
		rel++;
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;
	return (int)syscall(SYS_openat2, g->rootfd, *rel ? rel : ".", &how, sizeof(how));
}

static void free_ents(struct ent *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

/* Directories below this depth keep their descriptor open while their
 * subdirectories are walked (openat from it: one lookup each); deeper
 * ones are closed first and their subdirectories reopened from the root,
 * so the walk never holds more than this many descriptors. */
#define GG_FD_DEPTH 64

/* The type of dfd/name when getdents gave none. */
static unsigned char type_of(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : S_ISREG(st.st_mode) ? DT_REG : DT_FIFO;
}

/*
 * Where the entry name of a directory whose path relative to the
 * directory the rows start in is dirrel (NULL: that directory itself)
 * stands against the settings rows: CTL_IN when dirrel/name is a row,
 * CTL_WAY when it is a directory on a row's way, else CTL_NONE. *row
 * gets the row.
 */
static unsigned char ctl_match(const struct gg *g, const char *dirrel, const char *name,
			       const struct sbx_ctl_path **row)
{
	size_t dl = dirrel != NULL ? strlen(dirrel) : 0, nl = strlen(name);
	unsigned char how = CTL_NONE;

	for (const struct sbx_ctl_path *p = g->ctl; p != NULL && p->path != NULL; p++) {
		const char *r = p->path;

		if (strchr(r, '*') != NULL && strchr(r, '/') == NULL) {
			/* A name pattern ("*.code-workspace", "mise.*.toml"):
			 * one component, in any directory. */
			if (dirrel == NULL && fnmatch(r, name, 0) == 0) {
				*row = p;
				return CTL_IN;
			}
			continue;
		}
		if (dirrel != NULL) {
			if (strncmp(r, dirrel, dl) != 0 || r[dl] != '/')
				continue;
			r += dl + 1;
		}
		/* A pattern in a row's last component ("mise/config.*.toml"):
		 * the directories before it are literal. */
		if (strchr(r, '*') != NULL && strchr(r, '/') == NULL) {
			if (dirrel != NULL && fnmatch(r, name, 0) == 0) {
				*row = p;
				return CTL_IN;
			}
			continue;
		}
		if (strncmp(r, name, nl) != 0)
			continue;
		if (r[nl] == '\0') {
			*row = p;
			return CTL_IN;
		}
		if (r[nl] == '/' && how == CTL_NONE) {
			how = CTL_WAY;
			*row = p;
		}
	}
	return how;
}

/*
 * The settings entries of the directory g->path (open as fd) that are not
 * directories: each created or changed in the session is moved aside. On
 * a row's way only a symlink counts (".claude" pointing at a directory of
 * settings elsewhere); a plain file there is nothing an editor reads.
 */
/*
 * The pointer row (sbx_ctl_path.pointer) whose directory is the entry
 * name of g->path's directory, its path relative to where the rows start
 * at reloff of g->path + "/" + name; NULL if none is.
 */
static const struct sbx_ctl_path *pointer_row(const struct gg *g, const char *name, size_t reloff)
{
	size_t pl = strlen(g->path), nl = strlen(name);

	for (const struct sbx_ctl_path *p = g->ctl; p != NULL && p->path != NULL; p++) {
		const char *r = p->path;

		if (!p->pointer)
			continue;
		/* r is dirrel/name/last, dirrel being g->path from reloff */
		if (reloff <= pl) {
			size_t dl = pl - reloff;

			if (strncmp(r, g->path + reloff, dl) != 0 || r[dl] != '/')
				continue;
			r += dl + 1;
		}
		if (strncmp(r, name, nl) == 0 && r[nl] == '/' && strchr(r + nl + 1, '/') == NULL)
			return p;
	}
	return NULL;
}

static void check_ctl_files(struct gg *g, int fd, const struct ent *ents, size_t n, bool fresh_way)
{
	for (size_t i = 0; i < n; i++) {
		const struct sbx_ctl_path *ptr = NULL;

		/* A file where a pointer row has its directory names that
		 * directory elsewhere (jj's .jj/repo): it counts as the
		 * row itself. */
		if (ents[i].how == CTL_WAY && ents[i].type == DT_REG)
			ptr = pointer_row(g, ents[i].name, ents[i].reloff);
		if (ents[i].how == CTL_NONE || ents[i].type == DT_DIR ||
		    (ents[i].how == CTL_WAY && ents[i].type != DT_LNK && ptr == NULL) ||
		    gg_quarantined(g, fd, ents[i].name, fresh_way))
			continue;
		/* A file written in an earlier session under a harmless
		 * name keeps its ctime when a directory above it is renamed
		 * into a row's place ("stage" -> ".vscode"): a directory on
		 * its row's way changed in the session counts for it. */
		if (fresh_way || gg_changed(g, fd, ents[i].name))
			gg_quarantine_why(g, fd, g->path, ents[i].name,
				   ptr != NULL		     ? "a pointer to a directory of settings that run commands"
				   : ents[i].row->kind != NULL ? ents[i].row->kind
							       : "settings that run commands",
				   ptr != NULL ? NULL : ents[i].row->why);
	}
}

/*
 * Round 36 of the attack (f1): a .env is read into their own
 * environment by the agents and tools the user starts in its directory
 * or below: Gemini CLI and Qwen Code take it when there is no
 * .gemini/.env (whose row is there for BASH_ENV and NODE_OPTIONS: they
 * reach every shell and server the agent starts), aider over the user's
 * own environment, with every AIDER_* option (AIDER_LINT_CMD runs after
 * each edit, .aider.conf.yml's lint-cmd), mise on cd with
 * MISE_ENV_FILE, a tool built with Bun's --compile (.env.local too)
 * unless it opts out. Projects and their agents write .env for the
 * application, so it is no row (docs/config.md): one written in the
 * session is moved aside when it sets a variable that steers those
 * tools rather than the application: where programs and their code come
 * from (PATH, the shells' start-up files, the dynamic linker's, the
 * runtimes' option and module variables, what git, a pager or an editor
 * runs, where the tools' settings live), the agents' own options, and
 * where an agent sends its key or how it trusts the way there.
 */
/* Round 38: the variables `run` reads for a program, a library, a
 * plugin or a start-up file (base/envnames.h: env_code_var_known(),
 * their families by a pattern too: CARGO_TARGET_<triple>_LINKER,
 * CC_<target>, ...) are that one list, no longer copied here by hand
 * (each round added its names in both places); these are the rest. */
static const char *const env_steer_exact[] = {
	/* where programs and their modules come from, the shells' options */
	"PATH", "SHELL", "SHELLOPTS", "BASHOPTS", "HOME", "INPUTRC", "PYTHONPATH", "PYTHONINSPECT", "NODE_PATH",
	"RUBYLIB", "GEM_HOME", "GEM_PATH", "PERL5LIB", "PERLLIB", "CLASSPATH", "GOPATH", "GOFLAGS", "GOENV",
	"GOTOOLCHAIN", "MAKEFILES", "HGRCPATH",
	/* where an agent sends its key, and how it trusts the way there */
	"OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "CODE_ASSIST_ENDPOINT", "HTTPS_PROXY",
	"https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
	"SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	/* review of round 36: the Go and Java toolchains by their homes,
	 * Gradle's init scripts, the JVM's -javaagent in the build tools'
	 * options, what Python imports on a word (a warnings category,
	 * breakpoint()), Jupyter's paths and config files that name commands
	 * (kubectl's exec, the AWS CLI's credential_process, Terraform's
	 * dev_overrides), the .NET runtime (round 39: MAVEN_OPTS, GRADLE_OPTS
	 * and PYTHONBREAKPOINT are base/envnames.h's, read by `run`) */
	"GOROOT", "JAVA_HOME", "GRADLE_USER_HOME", "PYTHONWARNINGS",
	"JUPYTER_PATH", "KUBECONFIG", "AWS_CONFIG_FILE", "TF_CLI_CONFIG_FILE", "DOTNET_ROOT",
	/* the Google auth library runs an external account's command
	 * (GOOGLE_APPLICATION_CREDENTIALS may be the application's) only
	 * with this set; Gemini CLI's sandbox options (its container's
	 * flags, mounts and environment); where aider's litellm and others
	 * send the key (any NAME_API_BASE too, below) */
	"GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES", "SANDBOX_FLAGS", "SANDBOX_MOUNTS", "SANDBOX_ENV",
	"AZURE_OPENAI_ENDPOINT", "OLLAMA_HOST",
	/* how node and Python trust the way there, beside NODE_EXTRA_CA_CERTS:
	 * no certificate checked at all */
	"NODE_TLS_REJECT_UNAUTHORIZED", "PYTHONHTTPSVERIFY",
};
static const char *const env_steer_prefix[] = {
	"LD_",	   "DYLD_",   "LUA_",	   "GIT_",     "XDG_",	       "OPENSSL_",	"NPM_CONFIG_",
	"npm_config_", "PIP_", "UV_",	   "CARGO_",   "RUSTUP_",      "BUN_",		"MISE_",
	"ASDF_",   "DIRENV_", "AIDER_",    "GEMINI_",  "GOOGLE_GEMINI_", "GOOGLE_GENAI_", "GOOGLE_VERTEX_",
	"QWEN_",   "YARN_",   "BUNDLE_",   "CMAKE_",   "CORECLR_",
};

/* Bytes the dotenv readers skip before a name: ASCII white space
 * (python-dotenv's \s takes \v and \f, and the separators 0x1c-0x1f:
 * "<US>AIDER_LINT_CMD=..." set it for aider, review of round 36) and
 * anything not ASCII (a BOM, a no-break space, which python's str regex
 * takes as white space). */
static bool env_blank(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r' && c != '\n') || (c >= 0x1c && c <= 0x1f) || c >= 0x80;
}

/* U+2028 and U+2029 (UTF-8 E2 80 A8/A9) at text: JavaScript's regular
 * expressions take them as line ends, and the dotenv package's LINE is
 * one with the m flag, so a name after one is read as a line's
 * ("# note<U+2028>NODE_OPTIONS=..."; review of round 36). python-dotenv
 * keeps them inside a line: ending the line here too reads more names,
 * never fewer. */
static bool js_line_end(const char *text, size_t left)
{
	return left >= 3 && (unsigned char)text[0] == 0xe2 && (unsigned char)text[1] == 0x80 &&
	       ((unsigned char)text[2] == 0xa8 || (unsigned char)text[2] == 0xa9);
}

/* The length of the variable name ([A-Za-z_][A-Za-z0-9_]*) that the n
 * bytes at t start with, 0 if none: the one reading of a name both .env
 * checks (env_steering(), env_shell_code()) use. */
static size_t env_name_len(const char *t, size_t n)
{
	size_t i = 0;

	while (i < n && (t[i] == '_' || (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z') ||
			 (i > 0 && t[i] >= '0' && t[i] <= '9')))
		i++;
	return i;
}

/* The name of the first variable of the .env text (len bytes) that
 * steers the tools loading it (above), copied into out; false if none.
 * A line (ended by LF, CR or CRLF: both readers take a lone CR as a
 * line end; U+2028 and U+2029 too, js_line_end()) is NAME=VALUE,
 * "export NAME=VALUE", or NAME: VALUE (the dotenv package Gemini CLI
 * uses), blanks around the name, which may be quoted, as python-dotenv
 * and dotenv read it. */
static bool env_steering(const char *text, size_t len, char *out, size_t outlen)
{
	for (size_t i = 0; i < len;) {
		size_t e = i, n0, n1;
		char q;

		while (e < len && text[e] != '\n' && text[e] != '\r' && !js_line_end(text + e, len - e))
			e++;
		while (i < e && env_blank((unsigned char)text[i]))
			i++;
		if (e - i > 7 && memcmp(text + i, "export", 6) == 0 && env_blank((unsigned char)text[i + 6])) {
			i += 7;
			while (i < e && env_blank((unsigned char)text[i]))
				i++;
		}
		/* python-dotenv also takes a quoted name ('NAME'=VALUE) */
		q = i < e && (text[i] == '\'' || text[i] == '"') ? text[i++] : '\0';
		n0 = i;
		i += env_name_len(text + i, e - i);
		n1 = i;
		if (q != '\0' && i < e && text[i] == q)
			i++;
		while (i < e && env_blank((unsigned char)text[i]))
			i++;
		/* The dotenv package's \s* before the '=' spans line ends
		 * ("NODE_OPTIONS\n\n=--require=..." sets NODE_OPTIONS; review
		 * of round 36): a name alone on its line is judged when only
		 * blanks and line ends come before an '='. */
		if (n1 > n0 && i == e) {
			size_t j = e;

			while (j < len && (text[j] == '\n' || text[j] == '\r' || env_blank((unsigned char)text[j])))
				j++;
			if (j < len && text[j] == '=')
				i = e = j;
		}
		if (n1 > n0 && i <= e && i < len && (text[i] == '=' || text[i] == ':')) {
			size_t nl = n1 - n0;
			bool hit = env_code_var_known(text + n0, nl);

			for (size_t k = 0; !hit && k < sizeof(env_steer_exact) / sizeof(env_steer_exact[0]); k++)
				hit = strlen(env_steer_exact[k]) == nl && memcmp(env_steer_exact[k], text + n0, nl) == 0;
			/* A key by a prefix's name (GEMINI_API_KEY) is the
			 * application's as much as the agent's. */
			for (size_t k = 0; !hit && k < sizeof(env_steer_prefix) / sizeof(env_steer_prefix[0]); k++)
				hit = strlen(env_steer_prefix[k]) < nl &&
				      memcmp(env_steer_prefix[k], text + n0, strlen(env_steer_prefix[k])) == 0 &&
				      !(nl > 8 && memcmp(text + n1 - 8, "_API_KEY", 8) == 0);
			/* libuv's (node's) thread pool, not uv's option */
			hit = hit && !(nl == 18 && memcmp(text + n0, "UV_THREADPOOL_SIZE", 18) == 0);
			/* litellm's NAME_API_BASE (AZURE_API_BASE, OLLAMA_API_BASE):
			 * where aider sends that provider's key */
			hit = hit || (nl > 9 && memcmp(text + n1 - 9, "_API_BASE", 9) == 0);
			if (hit) {
				(void)snprintf(out, outlen, "%.*s", (int)(nl < 64 ? nl : 64), text + n0);
				return true;
			}
		}
		i = e + 1;
	}
	return false;
}

/*
 * Whether a POSIX shell sourcing the .env text (len bytes) would run
 * anything but assignments: `set -a; . ./.env` is how Makefiles, entry
 * points and scripts load one, so a line that is a command
 * (`curl x | sh`, `X=1 ./evil`, `f() { ...; }`), a command
 * substitution anywhere but in single quotes (`X=$(./evil)`, a
 * backquote, `${X:-$(...)}`) or a redirection (`X=1 > ~/.bashrc` writes
 * a file) runs on the host when the user's script sources it (the
 * review of round 36: env_steering() reads it as the dotenv loaders
 * do, which run nothing). Each simple command (separated by newlines,
 * `;`, `&` or `|`, so a URL's `&b=2` is one more assignment) must be
 * words of the form NAME=VALUE (or `export NAME`); quotes and
 * backslashes as the shell reads them, a value may span lines in
 * quotes. A quote left open makes the shell fail: nothing runs.
 */
static bool env_shell_code(const char *t, size_t len)
{
	size_t i = 0;

	while (i < len) {
		bool exported = false;
		size_t words = 0;

		/* one simple command: words up to a separator */
		for (;;) {
			size_t n0;

			while (i < len && (t[i] == ' ' || t[i] == '\t'))
				i++;
			if (i >= len || t[i] == '\n' || t[i] == ';' || t[i] == '&' || t[i] == '|') {
				i++;
				break;
			}
			if (t[i] == '#') {
				while (i < len && t[i] != '\n')
					i++;
				continue;
			}
			if (words == 0 && len - i >= 7 && memcmp(t + i, "export", 6) == 0 &&
			    (t[i + 6] == ' ' || t[i + 6] == '\t')) {
				exported = true;
				i += 6;
				words++;
				continue;
			}
			n0 = i;
			i += env_name_len(t + i, len - i);
			if (i > n0 && i < len && t[i] == '+' && i + 1 < len && t[i + 1] == '=')
				i++;
			if (i == n0 || i >= len || t[i] != '=') {
				/* `export NAME` alone is no command */
				if (exported && i > n0 &&
				    (i >= len || t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == ';'))
					continue;
				return true;
			}
			i++;
			words++;
			/* the value: up to an unquoted blank or separator */
			while (i < len && t[i] != ' ' && t[i] != '\t' && t[i] != '\n' && t[i] != ';' && t[i] != '&' &&
			       t[i] != '|') {
				char c = t[i];

				if (c == '<' || c == '>' || c == '(' || c == ')' || c == '`' ||
				    (c == '$' && i + 1 < len && t[i + 1] == '('))
					return true;
				if (c == '\\') {
					i += 2;
				} else if (c == '\'') {
					const char *q = i + 1 < len ? memchr(t + i + 1, '\'', len - i - 1) : NULL;

					if (q == NULL)
						return false;
					i = (size_t)(q - t) + 1;
				} else if (c == '"') {
					for (i++; i < len && t[i] != '"'; i++) {
						if (t[i] == '`' || (t[i] == '$' && i + 1 < len && t[i + 1] == '('))
							return true;
						if (t[i] == '\\')
							i++;
					}
					if (i >= len)
						return false;
					i++;
				} else {
					i++;
				}
			}
		}
	}
	return false;
}

/* The .env files of the directory fd (g->path) (.env, and the
 * .env.local, .env.NODE_ENV and .env.NODE_ENV.local a Bun-built tool
 * also loads), written in the
 * session: moved aside when one steers the tools that load it
 * (env_steering()), runs a command when a shell sources it
 * (env_shell_code()), is a link (made here, whatever it names), a FIFO or
 * a socket, or cannot be read whole (over 1 MiB). */
static void check_dotenv(struct gg *g, int fd, bool fresh_way)
{
	static const char *const names[] = {".env",		   ".env.local",	      ".env.development",
					    ".env.production",	   ".env.test",		      ".env.development.local",
					    ".env.production.local", ".env.test.local"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char var[72], why[256];
		struct stat st;
		size_t len = 0;
		char *text;

		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode) ||
		    gg_quarantined(g, fd, names[i], fresh_way) || !(fresh_way || gg_changed(g, fd, names[i])))
			continue;
		if (S_ISLNK(st.st_mode)) {
			gg_quarantine(g, fd, g->path, names[i],
				      "a link made in the session where agents load an env file (.env: Gemini CLI, aider, mise)");
			continue;
		}
		/* A FIFO or socket: the agent reading it at start waits for
		 * whoever writes it, or fails (review of round 36). */
		if (!S_ISREG(st.st_mode)) {
			gg_quarantine(g, fd, g->path, names[i],
				      "a FIFO or socket made in the session where agents load an env file (.env: Gemini "
				      "CLI, aider, mise)");
			continue;
		}
		text = fileio_read_at(fd, names[i], 1024 * 1024, FILEIO_NOFOLLOW, &len, &st);
		if (text == NULL) {
			gg_quarantine(g, fd, g->path, names[i],
				      "an env file agents load (Gemini CLI, aider, mise) that could not be read to check");
			continue;
		}
		if (env_steering(text, len, var, sizeof(var))) {
			(void)snprintf(why, sizeof(why),
				       "an env file agents load (Gemini CLI, aider, mise) setting %s, which steers the "
				       "programs they run",
				       var);
			gg_quarantine(g, fd, g->path, names[i], why);
		} else if (env_shell_code(text, len)) {
			gg_quarantine(g, fd, g->path, names[i],
				      "an env file that runs a command when a shell sources it (set -a; . ./.env): a "
				      "line that is no assignment, a $(...) or `...`, or a redirection");
		}
		free(text);
	}
}

/* Puts back the mode of the directory parentfd/name (g->path) that the
 * walk opened up; reported when it cannot. */
static void restore_mode(struct gg *g, int parentfd, const char *name, mode_t mode)
{
	if (fchmodat(parentfd, name, mode & 07777, 0) < 0)
		gg_report_error(g, g->path, "", "cannot put back the mode of", errno);
}

/* What one read of a directory found: the git-directory markers, and the
 * entries to look at further (subdirectories, and non-directories on a
 * settings row). */
struct scan {
	bool head, objects, common, refs, config;
	bool objects_dir, refs_dir; /* those two, as directories */
	unsigned char dotgit; /* DT_* of a .git entry, DT_UNKNOWN if none */
	bool notebook;        /* a Jupyter notebook (*.ipynb): its kernel starts here */
	bool pyc;             /* a compiled Python file (*.pyc) or an extension
				 module (*.so), or a link so named */
	bool gitignore;       /* a .gitignore file */
	bool hgignore;        /* a .hgignore file */
	bool dotenv;          /* a .env, .env.local or .env.NODE_ENV (or a link, a FIFO) */
	unsigned venv;        /* GG_PY_*: a pyvenv.cfg, or a bin/, lib/, lib64/,
				 Lib/ or conda-meta/: maybe a Python environment */
	struct ent *ents;
	size_t n, cap;
};

/*
 * Opens the directory name in parentfd (parentfd < 0: g->path below the
 * root). A directory of ours the command made unreadable (chmod 000 stops
 * a user other than root) is read for the walk, its mode put back after:
 * *restore is then set and *dst holds its mode. Returns the fd, or -1
 * after reporting.
 */
static int walk_open(struct gg *g, int parentfd, const char *name, bool *restore, struct stat *dst)
{
	mode_t mode = (mode_t)-1;
	int fd;

	/* the check's one opener (gg_dir_open_up()): u+rx for one of ours,
	 * the mode back once the walk is done with it */
	fd = parentfd >= 0 ? gg_dir_open_up(parentfd, name, true, &mode) : open_below_root(g);
	if (mode != (mode_t)-1) {
		*restore = true;
		dst->st_mode = mode;
	}
	if (fd < 0) {
		int e = errno;

		if (*restore)
			restore_mode(g, parentfd, name, dst->st_mode);
		/* Gone since the directory was read: moved aside by this
		 * check (a package pyshadow.c could not read), nothing left
		 * at the name to walk. */
		if (e == ENOENT && parentfd >= 0)
			return -1;
		gg_report_error(g, g->path, "", "cannot open to check for git repositories", e);
	}
	return fd;
}

/* ".development", ".production" or ".test", each with ".local" or not:
 * the .env.NODE_ENV and .env.NODE_ENV.local a Bun-built tool loads. */
static bool env_mode(const char *s)
{
	static const char *const modes[] = {".development", ".production", ".test"};

	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
		size_t ml = strlen(modes[k]);

		if (strncmp(s, modes[k], ml) == 0 && (s[ml] == '\0' || strcmp(s + ml, ".local") == 0))
			return true;
	}
	return false;
}

/* Notes the git-directory markers among the entries (name, type t). */
static void scan_marker(struct scan *sc, const char *name, unsigned char t)
{
	size_t n;

	/* a link too: Jupyter starts the kernel in the link's directory
	 * (review of round 29) */
	if ((t == DT_REG || t == DT_LNK) && (n = strlen(name)) > 6 && memcmp(name + n - 6, ".ipynb", 6) == 0)
		sc->notebook = true;
	if ((t == DT_REG || t == DT_LNK) && (n = strlen(name)) > 3 &&
	    (memcmp(name + n - 3, ".so", 3) == 0 || (n > 4 && memcmp(name + n - 4, ".pyc", 4) == 0)))
		sc->pyc = true;
	switch (name[0]) {
	case 'H':
		sc->head = sc->head || strcmp(name, "HEAD") == 0;
		break;
	case 'o':
		if (strcmp(name, "objects") == 0) {
			sc->objects = true;
			sc->objects_dir = t == DT_DIR || t == DT_LNK; /* git follows a link */
		}
		break;
	case 'c':
		sc->common = sc->common || strcmp(name, "commondir") == 0;
		sc->config = sc->config || strcmp(name, "config") == 0;
		if ((t == DT_DIR || t == DT_LNK) && strcmp(name, "conda-meta") == 0)
			sc->venv |= GG_PY_CONDA;
		break;
	case 'r':
		if (strcmp(name, "refs") == 0) {
			sc->refs = true;
			sc->refs_dir = t == DT_DIR || t == DT_LNK;
		}
		break;
	case '.':
		if (strcmp(name, ".git") == 0)
			sc->dotgit = t;
		sc->gitignore = sc->gitignore || (t == DT_REG && strcmp(name, ".gitignore") == 0);
		sc->hgignore = sc->hgignore || (t == DT_REG && strcmp(name, ".hgignore") == 0);
		sc->dotenv = sc->dotenv || (t != DT_DIR && strncmp(name, ".env", 4) == 0 &&
					    (name[4] == '\0' || strcmp(name + 4, ".local") == 0 || env_mode(name + 4)));
		break;
	case 'p':
		if ((t == DT_REG || t == DT_LNK) && strcmp(name, "pyvenv.cfg") == 0)
			sc->venv |= GG_PY_CFG;
		break;
	case 'b':
	case 'l':
	case 'L':
		/* what may make it a Python environment by its layout
		 * (gitignored.c decides) */
		if (t == DT_DIR || t == DT_LNK)
			sc->venv |= strcmp(name, "bin") == 0	  ? GG_PY_BIN
				    : strcmp(name, "lib") == 0	  ? GG_PY_LIB
				    : strcmp(name, "lib64") == 0 ? GG_PY_LIB64
				    : strcmp(name, "Lib") == 0	  ? GG_PY_WLIB
								  : 0;
		break;
	default:
		break;
	}
}

/*
 * Is the directory g->path, read into sc, a git directory or one in the
 * making? git takes a directory with HEAD, objects and refs (or a
 * commondir standing for the last two); the rule here is wider: any
 * directory named .git, any with two of HEAD, objects, refs and
 * commondir, and any with a config and one of them.
 */
static bool gitdir_candidate(const struct gg *g, const struct scan *sc)
{
	const char *slash = strrchr(g->path, '/');
	unsigned markers = (unsigned)sc->head + (unsigned)sc->objects + (unsigned)sc->refs + (unsigned)sc->common;

	if (sc->head && (sc->objects || sc->common))
		return true;
	if (slash != NULL && strcmp(slash, "/.git") == 0)
		return true;
	return markers >= 2 || (sc->config && markers >= 1);
}

/* Is the directory g->path, read into sc, one git reads or writes as a
 * git directory: HEAD with objects or commondir, a common directory
 * (objects and refs directories: a worktree's needs no HEAD there, and
 * git writes its reflogs into it, round 12 of the attack), or named
 * .git? */
static bool real_gitdir(const struct gg *g, const struct scan *sc)
{
	const char *slash = strrchr(g->path, '/');

	return (sc->head && (sc->objects || sc->common)) || (sc->objects_dir && sc->refs_dir) ||
	       (slash != NULL && strcmp(slash, "/.git") == 0);
}

/* Keeps one entry in sc. 0, or -1 on ENOMEM. */
static int scan_keep(struct scan *sc, const char *name, unsigned char t, unsigned char how,
		     const struct sbx_ctl_path *row, size_t roff)
{
	struct ent *ne;

	if (sc->n == sc->cap) {
		sc->cap = sc->cap ? 2 * sc->cap : 32;
		ne = realloc(sc->ents, sc->cap * sizeof(*ne));
		if (ne == NULL)
			return -1;
		sc->ents = ne;
	}
	sc->ents[sc->n].name = strdup(name);
	if (sc->ents[sc->n].name == NULL)
		return -1;
	sc->ents[sc->n].how = how;
	sc->ents[sc->n].row = how != CTL_NONE ? row : NULL;
	sc->ents[sc->n].reloff = how != CTL_NONE ? roff : 0;
	sc->ents[sc->n].fresh = false;
	sc->ents[sc->n].covered = false;
	sc->ents[sc->n++].type = t;
	return 0;
}

/*
 * Round 46 (owed since round 44): a directory or file of a writable tree
 * that is world-writable (o+w, sticky or not) and was made or changed in
 * the session. The host's other users drop files into such a directory
 * that the host's own tools then read or run (a hook, a script, a config
 * beside the project's), and write into such a file the host runs (a
 * script, a hook, a Makefile): the sandbox would plant for them, and the
 * mount plan leaves a directory every user shares (/var/tmp, a sticky
 * world-writable one) out of the writable trees for that reason (plan.c
 * shared_real()). seccomp cannot refuse the mode (umask 0 then mkdir or
 * open make one without chmod), so the check after the run takes the
 * bit away, whatever made it: o+w cleared, the rest of the mode kept,
 * one line each. Made or changed: its own ctime, as every check here (a
 * directory the user shared on purpose that the session wrote into
 * loses the bit too: said, chmod it back). With --keep-git-config only
 * named. The entry is opened without following a link and changed
 * through that handle: in a directory others can write, the name may be
 * swapped for a link meanwhile.
 */
static const char *ww_kind(uint32_t mode)
{
	if (S_ISDIR(mode))
		return "directory";
	if (S_ISREG(mode))
		return "file";
	if (S_ISFIFO(mode))
		return "FIFO";
	if (S_ISSOCK(mode))
		return "socket";
	return "device node";
}

/*
 * Round 48 (attack48s): whether the group gid may hold other users of
 * the host than the one running passavant, so that its write bit is as
 * good as o+w to them. Private only as a user private group is: its
 * name is the user's own and it lists no other member (a group named
 * so is nobody else's primary group by that convention). Not found, a
 * lookup that fails, another name (`users`, a team's `devs` of a
 * set-group-ID directory, `nogroup`): shared, fail closed. The last
 * GG_GSHARED gids' answers are kept in g (clear_default_acl() asks for
 * two in turn, the directory's and the user's: each looked up once).
 */
static bool group_shared(struct gg *g, gid_t gid)
{
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	size_t cap = 16384;
	char *buf;
	bool shared = true;

	for (unsigned i = 0; i < g->ngshared; i++)
		if (g->gshared[i].gid == gid)
			return g->gshared[i].shared;
	buf = malloc(2 * cap);
	if (buf != NULL && getpwuid_r(geteuid(), &pw, buf, cap, &pwp) == 0 && pwp != NULL &&
	    getgrgid_r(gid, &gr, buf + cap, cap, &grp) == 0 && grp != NULL && strcmp(gr.gr_name, pw.pw_name) == 0) {
		shared = false;
		for (char **m = gr.gr_mem; m != NULL && *m != NULL; m++)
			if (strcmp(*m, pw.pw_name) != 0)
				shared = true;
	}
	free(buf);
	g->gshared[g->gshared_next].gid = gid;
	g->gshared[g->gshared_next].shared = shared;
	g->gshared_next = (g->gshared_next + 1) % GG_GSHARED;
	if (g->ngshared < GG_GSHARED)
		g->ngshared++;
	return shared;
}

/* The write bits of sx's mode that other users of the host hold: o+w,
 * and g+w when its group is shared (group_shared()). */
static mode_t ww_bits(struct gg *g, const struct statx *sx)
{
	mode_t bits = (mode_t)(sx->stx_mode & S_IWOTH);

	if ((sx->stx_mode & S_IWGRP) != 0 && group_shared(g, (gid_t)sx->stx_gid))
		bits |= S_IWGRP;
	return bits;
}

static void clear_world_writable(struct gg *g, int dfd, const char *name, const struct statx *sx, mode_t bits)
{
	char path[PATH_MAX], proc[64], why[320];
	struct sbx_git_finding f = {0};
	mode_t mode = (mode_t)(sx->stx_mode & 07777) & (mode_t)~bits;
	const char *what = (bits & S_IWOTH) == 0 ? "g+w" : (bits & S_IWGRP) != 0 ? "o+w and g+w" : "o+w";
	char hint[64];
	struct stat st;
	int fd = -1;

	if (name[0] == '\0')
		(void)snprintf(path, sizeof(path), "%s", g->path);
	else if (!gg_join(path, sizeof(path), g->path, name))
		(void)snprintf(path, sizeof(path), "%.256s/...", g->path);
	if ((bits & S_IWOTH) != 0)
		(void)snprintf(why, sizeof(why),
			       "a world-writable %s made or changed in the session (other users of the host "
			       "could write what the host reads or runs there)%s%s%s",
			       ww_kind(sx->stx_mode), g->keep ? "" : ": ", g->keep ? "" : what,
			       g->keep ? "" : " cleared");
	else
		(void)snprintf(why, sizeof(why),
			       "a group-writable %s made or changed in the session, of group %lu, which is not "
			       "the user's own alone (its other members could write what the host reads or runs "
			       "there)%s",
			       ww_kind(sx->stx_mode), (unsigned long)sx->stx_gid, g->keep ? "" : ": g+w cleared");
	(void)snprintf(hint, sizeof(hint), "cannot clear %s (chmod %s it by hand) of", what,
		       (bits & S_IWGRP) == 0 ? "o-w" : (bits & S_IWOTH) == 0 ? "g-w" : "go-w");
	f.path = path;
	f.setting = why;
	f.named = !g->keep;
	/* umask 000, `npm install`: thousands of them. The first lines
	 * name entries, the rest only counted (and in the audit). */
	f.quiet = g->st->ww++ >= SBX_WW_LINES;
	if (!g->keep) {
		fd = name[0] == '\0' ? fcntl(dfd, F_DUPFD_CLOEXEC, 0)
				     : openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			gg_report_error(g, g->path, name, hint, errno);
			if (fd >= 0)
				(void)close(fd);
			return;
		}
		/* swapped since the walk read it: not what was judged */
		if (st.st_ino != sx->stx_ino || (st.st_mode & S_IFMT) != (sx->stx_mode & S_IFMT)) {
			gg_report_error(g, g->path, name,
					"replaced while checked for o+w (another user of the host; look at it) at", 0);
			(void)close(fd);
			return;
		}
		(void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (chmod(proc, mode) < 0) {
			gg_report_error(g, g->path, name, hint, errno);
			(void)close(fd);
			return;
		}
		(void)close(fd);
	}
	g->report(g->arg, &f);
}

/*
 * Round 47: a default ACL made or changed in the session on a directory
 * of a writable tree whose "other" entry grants write (`setfacl -d -m
 * o::rwx dir`, or setxattr(system.posix_acl_default) directly: no
 * capability, an owner may). The directory's own mode shows nothing
 * (0755 stays 0755), but everything the host creates there later is
 * world-writable whatever its umask: a later `git init` there made
 * .git/config 0666 and its directories 0777, a new hook 0666, and other
 * users of the host wrote them. The write bit of that entry is taken
 * away (the rest of the ACL kept), one line; with --keep-git-config
 * only named. Named user and group entries can name only the ids the
 * sandbox maps (the user's own); group write goes too where the group
 * may hold other users (round 48, below). The xattr's layout (linux/posix_acl_xattr.h): a 4-byte version
 * (2), then entries of tag (2 bytes), perm (2), id (4), little-endian.
 */
static void clear_default_acl(struct gg *g, int dfd, const char *name, const struct statx *sx)
{
	char path[PATH_MAX], proc[64], why[320];
	unsigned char acl[8 * 64 + 4];
	struct sbx_git_finding f = {0};
	bool grants = false, ggrants = false, gsh;
	struct stat st;
	ssize_t n;
	int fd;

	fd = name[0] == '\0' ? fcntl(dfd, F_DUPFD_CLOEXEC, 0)
			     : openat(dfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			gg_report_error(g, g->path, name, "cannot check the default ACL (world-writable?) of", errno);
		return;
	}
	(void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = getxattr(proc, "system.posix_acl_default", acl, sizeof(acl));
	if (n < 0) {
		/* none, or a file system without ACLs */
		if (errno != ENODATA && errno != EOPNOTSUPP && errno != ENOTSUP)
			gg_report_error(g, g->path, name, "cannot check the default ACL (world-writable?) of", errno);
		(void)close(fd);
		return;
	}
	/* Round 48: the group entries too when the group of what the host
	 * creates there (the directory's, set-group-ID, or the creator's)
	 * may hold other users (group_shared()). */
	gsh = group_shared(g, (gid_t)sx->stx_gid) || group_shared(g, getegid());
	for (ssize_t off = 4; off + 8 <= n; off += 8) {
		unsigned tag = (unsigned)acl[off] | (unsigned)acl[off + 1] << 8;

		/* ACL_OTHER; ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK; ACL_WRITE */
		if (tag == 0x20 && (acl[off + 2] & 2) != 0) {
			acl[off + 2] &= (unsigned char)~2;
			grants = true;
		}
		if (gsh && (tag == 0x04 || tag == 0x08 || tag == 0x10) && (acl[off + 2] & 2) != 0) {
			acl[off + 2] &= (unsigned char)~2;
			ggrants = true;
		}
	}
	if (!grants && !ggrants) {
		(void)close(fd);
		return;
	}
	if (name[0] == '\0')
		(void)snprintf(path, sizeof(path), "%s", g->path);
	else if (!gg_join(path, sizeof(path), g->path, name))
		(void)snprintf(path, sizeof(path), "%.256s/...", g->path);
	(void)snprintf(why, sizeof(why),
		       "a default ACL made or changed in the session that makes what the host creates there "
		       "%s (other users of the host could write it)%s%s",
		       grants ? "world-writable" : "writable by a group that is not the user's own alone",
		       g->keep ? "" : ggrants ? (grants ? ": its o+w and g+w" : ": its g+w") : ": its o+w",
		       g->keep ? "" : " cleared");
	f.path = path;
	f.setting = why;
	f.named = !g->keep;
	f.quiet = g->st->ww++ >= SBX_WW_LINES;
	if (!g->keep) {
		/* still the directory judged (another user may swap names) */
		if (fstat(fd, &st) < 0 || st.st_ino != sx->stx_ino || !S_ISDIR(st.st_mode)) {
			gg_report_error(g, g->path, name,
					"replaced while checked for a default ACL (another user of the host; look at it) at",
					0);
			(void)close(fd);
			return;
		}
		if (setxattr(proc, "system.posix_acl_default", acl, (size_t)n, XATTR_REPLACE) < 0) {
			gg_report_error(g, g->path, name,
					"cannot clear o+w from the default ACL (setfacl -d -m o::r-x it by hand) of", errno);
			(void)close(fd);
			return;
		}
	}
	(void)close(fd);
	g->report(g->arg, &f);
}

/* The entry name of fd ("": fd itself, the root), of any type but a
 * symbolic link (whose own mode means nothing): judged and cleared as
 * above. Round 47: FIFOs and sockets too, and device nodes. A FIFO the
 * session left world-writable (mkfifo -m 666, umask 0) let another user
 * of the host feed whatever host tool later opens it by name (a named
 * pipe a build or a log reader reads), and one moved aside keeps its
 * mode. A socket the session bound is dead after it (connect() is
 * refused) and a server binds a new inode there, so no harm is known:
 * cleared all the same, so that the rule knows no type but the link's. */
static void ww_entry(struct gg *g, int fd, const char *name)
{
	struct statx sx;

	if (gg_statx(fd, name, name[0] == '\0' ? AT_EMPTY_PATH : AT_SYMLINK_NOFOLLOW, &sx) < 0) {
		if (errno != ENOENT)
			gg_report_error(g, g->path, name, "cannot check (world-writable?)", errno);
		return;
	}
	if (!S_ISLNK(sx.stx_mode) && (sx.stx_mode & (S_IWOTH | S_IWGRP)) != 0 &&
	    gg_ts_fresh(g, &sx.stx_ctime)) {
		mode_t bits = ww_bits(g, &sx);

		if (bits != 0)
			clear_world_writable(g, fd, name, &sx, bits);
	}
	if (S_ISDIR(sx.stx_mode) && gg_ts_fresh(g, &sx.stx_ctime))
		clear_default_acl(g, fd, name, &sx);
}

/*
 * Reads the directory fd (g->path) to the end into sc: the markers, and
 * each subdirectory and each entry on a settings row (reloff, inrow: as
 * walk()). getdents64 directly: no DIR allocation per directory. 0, or
 * -1 on ENOMEM (a read error is reported and ends the read).
 */
static int walk_scan(struct gg *g, int fd, size_t reloff, const struct sbx_ctl_path *inrow,
		     struct scan *sc)
{
	char *buf = g->dents;
	size_t dlen = strlen(g->path);
	ssize_t got;

	while ((got = getdents64(fd, buf, sizeof(g->dents))) > 0) {
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			unsigned char t = de->d_type, how = CTL_NONE;
			const struct sbx_ctl_path *row = inrow;
			size_t roff = reloff;

			off += de->d_reclen;
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			g->st->entries++;
			if (t == DT_UNKNOWN)
				t = type_of(fd, de->d_name);
			scan_marker(sc, de->d_name, t);
			/* The settings rows: one first-byte test per entry
			 * outside them. */
			if (inrow != NULL)
				how = CTL_IN;
			else if (reloff != 0)
				how = ctl_match(g, g->path + reloff, de->d_name, &row);
			if (how == CTL_NONE && inrow == NULL &&
			    (g->ctl_first[(unsigned char)de->d_name[0]] || g->ctl_first['*'])) {
				how = ctl_match(g, NULL, de->d_name, &row);
				roff = dlen + 1;
			}
			/* Kept: directories, entries on a row, and whatever is
			 * neither a file nor a directory (a symlink inside a
			 * git directory is checked: check_git_odd()). */
			/* After the session: a world-writable file, FIFO,
			 * socket or device node made or changed in it
			 * (clear_world_writable()), here where every entry
			 * is seen, before any check moves it aside. */
			if (t != DT_DIR && t != DT_LNK && g->record == NULL)
				ww_entry(g, fd, de->d_name);
			if (t == DT_REG && how == CTL_NONE)
				continue;
			if (scan_keep(sc, de->d_name, t, how, row, roff) < 0)
				return -1;
		}
	}
	if (got < 0)
		gg_report_error(g, g->path, "", "cannot read to check for git repositories", errno);
	return 0;
}

/* The git directories before the session, by device, inode and birth
 * time (sorted once the walk is over). The birth time (zero where the
 * filesystem keeps none) tells a directory made in the session on an
 * inode number a removed one freed (ext4 and tmpfs hand them out again
 * at once) from the one noted. */
struct dev_ino {
	uint64_t dev;
	uint64_t ino;
	int64_t btime_s;
	uint32_t btime_ns;
};
struct dev_ino_set {
	struct dev_ino *v;
	size_t n, cap;
};
struct sbx_git_before {
	struct dev_ino_set dirs; /* git directories and candidates */
	struct dev_ino_set odd;  /* entries inside them neither file nor directory */
	struct dev_ino_set ifdirs; /* directories at a root's top (those on
				    * the way of rows covered only where they
				    * exist were covered) */
	struct dev_ino_set links; /* symbolic links outside them (linkout.c) */
	struct dev_ino_set refs; /* where kept configs lead (gg_ref_note()) */
	struct dev_ino_set py;   /* entries where a host Python starts, keyed by
				  * place too (gg_py_note()) */
	struct dev_ino_set places; /* every directory walked: its identity at
				      its place (gg_dir_whole()) */
	struct gg_refsnap *refsnaps; /* each git directory's refs (gitrefs.c),
				      * sorted by identity once the walk is over */
	size_t nrefsnaps, caprefsnaps;
	bool nomem;              /* the walk ran out of memory: incomplete */
};

static int cmp_dev_ino(const void *a, const void *b)
{
	const struct dev_ino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->btime_s != y->btime_s)
		return x->btime_s < y->btime_s ? -1 : 1;
	return x->btime_ns < y->btime_ns ? -1 : x->btime_ns > y->btime_ns ? 1 : 0;
}

/* The identity of the entry name in fd ("": fd itself), not followed;
 * false when statx fails. */
static bool ent_id(int fd, const char *name, struct dev_ino *k)
{
	struct statx sx;

	if (gg_statx(fd, name, name[0] == '\0' ? AT_EMPTY_PATH : AT_SYMLINK_NOFOLLOW, &sx) < 0)
		return false;
	memset(k, 0, sizeof(*k));
	k->dev = ((uint64_t)sx.stx_dev_major << 32) | sx.stx_dev_minor;
	k->ino = sx.stx_ino;
	if (sx.stx_mask & STATX_BTIME) {
		k->btime_s = sx.stx_btime.tv_sec;
		k->btime_ns = sx.stx_btime.tv_nsec;
	}
	return true;
}

/* Appends k to set. 0, or -1 (ENOMEM). */
static int set_add(struct dev_ino_set *set, const struct dev_ino *k)
{
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 64;
		struct dev_ino *nv = realloc(set->v, cap * sizeof(*nv));

		if (nv == NULL)
			return -1;
		set->v = nv;
		set->cap = cap;
	}
	set->v[set->n++] = *k;
	return 0;
}

/* Notes the entry name in fd ("": fd itself) in set. 0, or -1 (ENOMEM).
 * One statx cannot take is not noted (checked as new after the session). */
static int note_id(struct dev_ino_set *set, int fd, const char *name)
{
	struct dev_ino k;

	if (!ent_id(fd, name, &k))
		return 0; /* not noted: checked as new after the session */
	return set_add(set, &k);
}

/* Whether the entry name in fd ("": fd itself) is in the sorted set. */
static bool noted(const struct dev_ino_set *set, int fd, const char *name)
{
	struct dev_ino k;

	if (set->n == 0 || !ent_id(fd, name, &k))
		return false;
	return bsearch(&k, set->v, set->n, sizeof(k), cmp_dev_ino) != NULL;
}

/* FNV-1a of the place dir[/sub]/name. */
static uint64_t place_hash(const char *dir, const char *sub, const char *name)
{
	uint64_t h = 1469598103934665603ULL;

	for (const char *p = dir; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	if (sub != NULL) {
		h = (h ^ '/') * 1099511628211ULL;
		for (const char *p = sub; *p != '\0'; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	}
	h = (h ^ '/') * 1099511628211ULL;
	for (const char *p = name; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

/* An entry's key: its identity and where it is (the place hashed into
 * the inode: a relative link moved elsewhere, its directory moved with
 * it, leads elsewhere; round 18). False when statx fails. */
static bool place_key(const char *dir, const char *sub, int fd, const char *name, struct dev_ino *k)
{
	if (!ent_id(fd, name, k))
		return false;
	k->ino ^= place_hash(dir, sub, name);
	return true;
}

/* A link's key (place_key() in g->path). */
static bool link_key(const struct gg *g, int fd, const char *name, struct dev_ino *k)
{
	return place_key(g->path, NULL, fd, name, k);
}

/* The key of a place alone, g->path[/sub]/name: what was there before
 * the session counts by its name, whatever its inode (gg_py_old()). */
static void py_place(const struct gg *g, const char *sub, const char *name, struct dev_ino *k)
{
	memset(k, 0, sizeof(*k));
	k->ino = place_hash(g->path, sub, name);
}

void gg_py_note(struct gg *g, const char *sub, const char *name)
{
	struct dev_ino k;

	py_place(g, sub, name, &k);
	if (g->record != NULL && set_add(&g->record->py, &k) < 0)
		g->record->nomem = true;
}

/* The key of the directory open as fd at the place path: its identity
 * (device, inode, birth time) with the place hashed in. */
static bool dir_place_key(int fd, const char *path, struct dev_ino *k)
{
	if (!ent_id(fd, "", k))
		return false;
	k->ino ^= place_hash(path, NULL, "");
	return true;
}

/* Was the directory name of fd (in g->path) there, itself, when the
 * session started (the walk before noted it at that place)? True when
 * that walk is not known whole. */
static bool dir_was_here(const struct gg *g, int fd, const char *name)
{
	char path[PATH_MAX];
	struct dev_ino k;

	if (g->before == NULL || g->before->nomem)
		return true;
	if (!gg_join(path, sizeof(path), g->path, name) || !ent_id(fd, name, &k))
		return false;
	k.ino ^= place_hash(path, NULL, "");
	return bsearch(&k, g->before->places.v, g->before->places.n, sizeof(k), cmp_dev_ino) != NULL;
}

bool gg_dir_whole(const struct gg *g, int fd, const char *path)
{
	struct dev_ino k;

	if (!gg_dir_fresh(g, fd))
		return false;
	/* Not known: its ctime alone. */
	if (g->before == NULL || !dir_place_key(fd, path, &k))
		return true;
	return bsearch(&k, g->before->places.v, g->before->places.n, sizeof(k), cmp_dev_ino) == NULL;
}

bool gg_py_old(const struct gg *g, const char *sub, const char *name)
{
	struct dev_ino k;

	if (g->before == NULL || g->before->py.n == 0)
		return false;
	py_place(g, sub, name, &k);
	return bsearch(&k, g->before->py.v, g->before->py.n, sizeof(k), cmp_dev_ino) != NULL;
}

static int note_link(struct gg *g, int fd, const char *name)
{
	struct dev_ino k;

	return link_key(g, fd, name, &k) ? set_add(&g->record->links, &k) : 0;
}

static int cmp_refsnap(const void *a, const void *b)
{
	const struct gg_refsnap *x = a, *y = b;
	struct dev_ino kx = {x->dev, x->ino, x->btime_s, x->btime_ns}, ky = {y->dev, y->ino, y->btime_s, y->btime_ns};

	return cmp_dev_ino(&kx, &ky);
}

bool gg_refsnap_add(struct gg *g, int gfd, const struct gg_refsnap *s)
{
	struct sbx_git_before *b = g->record;
	struct dev_ino k;

	if (b == NULL)
		return false;
	if (s == NULL) {
		b->nomem = true;
		return false;
	}
	if (!ent_id(gfd, "", &k))
		return false;
	if (b->nrefsnaps == b->caprefsnaps) {
		size_t cap = b->caprefsnaps ? 2 * b->caprefsnaps : 16;
		struct gg_refsnap *nv = realloc(b->refsnaps, cap * sizeof(*nv));

		if (nv == NULL) {
			b->nomem = true;
			return false;
		}
		b->refsnaps = nv;
		b->caprefsnaps = cap;
	}
	b->refsnaps[b->nrefsnaps] = *s;
	b->refsnaps[b->nrefsnaps].dev = k.dev;
	b->refsnaps[b->nrefsnaps].ino = k.ino;
	b->refsnaps[b->nrefsnaps].btime_s = k.btime_s;
	b->refsnaps[b->nrefsnaps].btime_ns = k.btime_ns;
	b->nrefsnaps++;
	return true;
}

const struct gg_refsnap *gg_refsnap_find(const struct gg *g, int gfd)
{
	struct gg_refsnap key = {0};
	struct dev_ino k;

	if (g->before == NULL || g->before->nrefsnaps == 0 || !ent_id(gfd, "", &k))
		return NULL;
	key.dev = k.dev;
	key.ino = k.ino;
	key.btime_s = k.btime_s;
	key.btime_ns = k.btime_ns;
	return bsearch(&key, g->before->refsnaps, g->before->nrefsnaps, sizeof(key), cmp_refsnap);
}

bool gg_was_gitdir(const struct sbx_git_before *b, int fd)
{
	return noted(&b->dirs, fd, "");
}

void gg_ref_note(struct gg *g, const char *path)
{
	if (g->record != NULL && note_id(&g->record->refs, AT_FDCWD, path) < 0)
		g->record->nomem = true;
}

bool gg_ref_new(const struct gg *g, const char *path)
{
	return g->before != NULL && !noted(&g->before->refs, AT_FDCWD, path);
}

/* Whether an entry of a git directory's tree is neither a file nor a
 * directory (what check_git_odd() looks at). */
static bool odd_type(unsigned char t)
{
	return t != DT_DIR && t != DT_REG;
}

/* Is the directory g->path a refs directory of a git directory, or below
 * one? */
static bool ingit_refs(const struct gg *g)
{
	for (const char *p = g->path; (p = strstr(p, "/refs")) != NULL; p += 5)
		if (p[5] == '/' || p[5] == '\0')
			return true;
	return false;
}

/*
 * The entries of the directory fd (g->path, inside a git directory) that
 * are neither files nor directories, made in the session: a symlink (git
 * writes a reflog, FETCH_HEAD, COMMIT_EDITMSG, a loose ref through it,
 * appending a branch name or a commit subject to whatever it points at:
 * round 10, `ln -s ~/.bashrc .git/logs/HEAD`; a linked directory takes
 * the files git creates), a FIFO or a socket (git hangs on it). Made in
 * the session: its own ctime, or (with the walk before the session) not
 * there inside a git directory then, so that a directory of links staged
 * in an earlier session and moved in keeps none. A HEAD, or a ref,
 * linking to refs/... is git's own (core.preferSymlinkRefs).
 */
static void check_git_odd(struct gg *g, int fd, struct ent *ents, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct statx sx;
		char to[PATH_MAX];
		ssize_t len;

		/* No name is exempt, the quarantine's suffix included: git
		 * makes reflog and ref names of branch names, which may end
		 * so. What an earlier session moved aside is old; what this
		 * check moved (by identity: a hook link whose target changed)
		 * is not moved twice (round 31: pre-commit.passavant-
		 * quarantine.passavant-quarantine). */
		if (!odd_type(ents[i].type) || gg_quarantined(g, fd, ents[i].name, true))
			continue;
		if (gg_statx(fd, ents[i].name, AT_SYMLINK_NOFOLLOW, &sx) < 0) {
			if (errno != ENOENT)
				gg_report_error(g, g->path, ents[i].name, "cannot check (inside a git directory)", errno);
			continue;
		}
		if (!gg_ts_fresh(g, &sx.stx_ctime) && (g->before == NULL || noted(&g->before->odd, fd, ents[i].name)))
			continue;
		/* git's own symbolic refs (core.preferSymlinkRefs): HEAD or a
		 * ref linking to refs/..., which stays below the directory
		 * the link is in. */
		if (ents[i].type == DT_LNK && (len = readlinkat(fd, ents[i].name, to, sizeof(to) - 1)) > 5) {
			to[len] = '\0';
			if (strncmp(to, "refs/", 5) == 0 && strstr(to, "..") == NULL &&
			    (strcmp(ents[i].name, "HEAD") == 0 || ingit_refs(g)))
				continue;
		}
		gg_quarantine(g, fd, g->path, ents[i].name,
			      ents[i].type == DT_LNK
				      ? "a symbolic link inside a git directory (git writes through it: a reflog, "
					"FETCH_HEAD or a commit message would land where it points)"
				      : "neither a file nor a directory inside a git directory");
		/* Gone: no row check of it after this. */
		ents[i].how = CTL_NONE;
	}
}

/*
 * The entries of the directory fd (g->path, in a work tree, outside a
 * git directory) that are FIFOs, sockets or device nodes made in the
 * session (round 45 of the attack). Nothing of the project needs one,
 * and the host's tools open files by name without asking what they
 * are: a FIFO at .gitignore (or .gitattributes, in any directory) made
 * the host's `git status` wait for ever in open() (and every shell
 * prompt that shows it, every editor's git view), one at .editorconfig
 * or a source file every editor that opens it. Moved aside, whatever
 * the name (.env's were since round 36, check_dotenv()). Made in the
 * session: its own ctime (a rename sets it too).
 *
 * Not a socket (round 46): the harm is not there. open() of one fails at
 * once (ENXIO), and one the session bound is dead when it ends (its
 * processes are gone), so a host tool that connects to it fails at once
 * too (ECONNREFUSED); moved aside, a project that keeps its dev server's
 * socket in the tree (tmp/sockets/puma.sock) lost it after every session.
 * A link to one is judged below as before.
 *
 * The same through a symbolic link made in the session (review of round
 * 45): linkout.c lets a link to /dev/zero, /dev/tty or /dev/stdin stay
 * (writing there does nothing), but a host tool reading package.json or
 * .editorconfig through it reads zeros until its memory runs out or
 * waits on the user's terminal. Such a link is moved aside when it leads
 * to anything but a file, a directory or /dev/null, or through /dev/std*,
 * /dev/fd or /proc (the reader's own descriptors; a NAME.log to
 * /dev/stdout or /dev/stderr stays, a log's usual link).
 */
static bool link_to_odd(int fd, const char *name)
{
	char body[PATH_MAX];
	struct stat st;
	size_t nlen;
	ssize_t len;

	len = readlinkat(fd, name, body, sizeof(body) - 1);
	if (len < 0)
		return errno != ENOENT; /* cannot tell: fail closed */
	body[len] = '\0';
	/* A log written to the reader's output (access.log -> /dev/stdout,
	 * a container's logging pattern) is no name a tool reads unasked. */
	nlen = strlen(name);
	if ((strcmp(body, "/dev/stdout") == 0 || strcmp(body, "/dev/stderr") == 0) && nlen > 4 &&
	    strcmp(name + nlen - 4, ".log") == 0)
		return false;
	if (strncmp(body, "/dev/std", 8) == 0 || strncmp(body, "/dev/fd", 7) == 0 || strncmp(body, "/proc/", 6) == 0)
		return true;
	/* Where it leads, followed: nowhere (dangling) is nothing to open. */
	if (fstatat(fd, name, &st, 0) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return false;
	return !(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
}

static void check_work_odd(struct gg *g, int fd, struct ent *ents, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *why = "a FIFO or device node made in the session (the host's git status, editors "
				  "and shell prompts that open it by name wait for ever)";
		struct statx sx;

		if (ents[i].type == DT_DIR || ents[i].type == DT_REG || gg_quarantined(g, fd, ents[i].name, false))
			continue;
		if (gg_statx(fd, ents[i].name, AT_SYMLINK_NOFOLLOW, &sx) < 0) {
			if (errno != ENOENT)
				gg_report_error(g, g->path, ents[i].name, "cannot check (a FIFO?)", errno);
			continue;
		}
		if (S_ISLNK(sx.stx_mode)) {
			/* new in the session as gg_check_links_out() tells it */
			if ((!gg_ts_fresh(g, &sx.stx_ctime) && (g->before == NULL || gg_link_old(g, fd, ents[i].name))) ||
			    !link_to_odd(fd, ents[i].name))
				continue;
			why = "a symbolic link made in the session to a device, FIFO or socket (the host's tools that "
			      "read it by name read for ever or wait on the terminal)";
		} else if (S_ISDIR(sx.stx_mode) || S_ISREG(sx.stx_mode) || S_ISSOCK(sx.stx_mode) ||
			   !gg_ts_fresh(g, &sx.stx_ctime)) {
			continue;
		}
		gg_quarantine(g, fd, g->path, ents[i].name, why);
		/* Gone: no row check of it after this. */
		ents[i].how = CTL_NONE;
	}
}

bool gg_link_old(const struct gg *g, int fd, const char *name)
{
	struct dev_ino k;

	if (g->before == NULL || g->before->links.n == 0 || !link_key(g, fd, name, &k))
		return false;
	return bsearch(&k, g->before->links.v, g->before->links.n, sizeof(k), cmp_dev_ino) != NULL;
}

bool gg_name_on_row(const struct gg *g, const char *name)
{
	const struct sbx_ctl_path *row = NULL;

	return ctl_match(g, NULL, name, &row) != CTL_NONE;
}

const struct sbx_ctl_path *gg_path_row(const struct gg *g, const char *path)
{
	/* From each component on: the rows start in any directory. */
	for (const char *start = path; start != NULL && *start != '\0';) {
		const char *last = strrchr(start, '/');

		for (const struct sbx_ctl_path *p = g->ctl; p != NULL && p->path != NULL; p++) {
			const char *r = p->path, *rl = strrchr(r, '/');
			size_t n = strlen(r);

			if (strchr(r, '*') != NULL) {
				/* A pattern in the last component, the directories
				 * before it literal. */
				size_t dl = rl != NULL ? (size_t)(rl - r) : 0;

				if ((rl == NULL && last == NULL && fnmatch(r, start, 0) == 0) ||
				    (rl != NULL && last != NULL && (size_t)(last - start) == dl &&
				     strncmp(start, r, dl) == 0 && fnmatch(rl + 1, last + 1, 0) == 0))
					return p;
				continue;
			}
			if (strncmp(start, r, n) == 0 && (start[n] == '\0' || start[n] == '/'))
				return p;
		}
		start = strchr(start, '/');
		if (start != NULL)
			start++;
	}
	return NULL;
}

bool gg_name_is_row(const struct gg *g, const char *name)
{
	const struct sbx_ctl_path *row = NULL;
	const char *base = strrchr(name, '/');

	if (ctl_match(g, NULL, name, &row) == CTL_IN)
		return true;
	if (base == NULL)
		return false;
	row = NULL;
	return ctl_match(g, NULL, base + 1, &row) == CTL_IN && strchr(row->path, '/') == NULL;
}

/* Whether g->path is one of the roots (a nested one included). */
static bool is_root(const struct gg *g)
{
	for (const char *const *r = g->roots; *r != NULL; r++)
		if (strcmp(*r, g->path) == 0)
			return true;
	return false;
}

/*
 * Walks the directory g->path (parentfd/name when parentfd >= 0, else
 * reopened from the root): checks it if it is a git directory, checks a
 * .git file in it and its settings entries, then descends into each
 * subdirectory, never through a symlink. reloff: 0, or the offset in
 * g->path of its path relative to the directory a settings row starts in
 * (it is on that row's way); inrow: the directory row it is in (every
 * entry counts), or NULL. Depth is bounded by PATH_MAX, descriptors by
 * GG_FD_DEPTH.
 */
static void walk(struct gg *g, int parentfd, const char *name, unsigned depth, size_t reloff,
		 const struct sbx_ctl_path *inrow, bool fresh_way, bool covered, bool ingit)
{
	struct scan sc = {.dotgit = DT_UNKNOWN};
	bool restore = false, candidate;
	struct stat dst;
	size_t i, len;
	int fd;

	fd = walk_open(g, parentfd, name, &restore, &dst);
	if (fd < 0)
		return;
	g->st->dirs++;
	if (walk_scan(g, fd, reloff, inrow, &sc) < 0) {
		gg_report_error(g, g->path, "", "cannot check for git repositories", ENOMEM);
		if (g->record != NULL)
			g->record->nomem = true;
		(void)close(fd);
		goto out;
	}
	candidate = gitdir_candidate(g, &sc);
	/* What git takes for a git directory (or one named .git) makes its
	 * whole tree one for check_git_odd(); not the wider candidates, so
	 * a work tree with config/ and refs/ directories keeps its links. */
	ingit = ingit || real_gitdir(g, &sc);
	/* A git directory, or one that a single file or directory more
	 * would make one (docs/sandbox.md "Git control files"): checked
	 * alike, so a control file staged in one session before git would
	 * take the directory (HEAD written in the next one) is caught in
	 * the session that wrote it. */
	if (g->record != NULL) {
		/* The walk before the session: only which directories are
		 * git directories now. */
		if (candidate && note_id(&g->record->dirs, fd, "") < 0) {
			g->record->nomem = true;
			(void)close(fd);
			goto out;
		}
		if (candidate)
			gg_record_refs(g, fd);
		/* The refs of a git directory git takes (not a wider
		 * candidate), to name after the session those it moved. */
		if (candidate && real_gitdir(g, &sc))
			gg_refs_record(g, fd);
		if (is_root(g) || sc.notebook)
			gg_py_note_dir(g, fd);
		/* each directory where it is (gg_dir_whole()) */
		{
			struct dev_ino k;

			if (dir_place_key(fd, g->path, &k) && set_add(&g->record->places, &k) < 0) {
				g->record->nomem = true;
				(void)close(fd);
				goto out;
			}
		}
		/* where a .gitignore was (gg_check_gitignore()) */
		if (sc.gitignore)
			gg_py_note(g, NULL, ".gitignore");
		if (sc.dotgit == DT_REG)
			gg_check_worktree_side(g, fd);
		for (i = 0; i < sc.n; i++) {
			/* The directories at the top of a root: those on the
			 * way of rows covered only where they exist (.hg,
			 * .config, mise) the mount plan covers now (its mount
			 * pins such a directory: it cannot be renamed away).
			 * All noted: this walk has no rows. */
			if (depth == 0 && sc.ents[i].type == DT_DIR &&
			    note_id(&g->record->ifdirs, fd, sc.ents[i].name) < 0) {
				g->record->nomem = true;
				(void)close(fd);
				goto out;
			}
			sc.ents[i].how = CTL_NONE;
			if (((ingit && odd_type(sc.ents[i].type) &&
			      note_id(&g->record->odd, fd, sc.ents[i].name) < 0)) ||
			    (!ingit && sc.ents[i].type == DT_LNK && note_link(g, fd, sc.ents[i].name) < 0)) {
				g->record->nomem = true;
				(void)close(fd);
				goto out;
			}
		}
		goto descend;
	}
	/* First: what the checks below move aside keeps its mode (the
	 * files were judged by walk_scan()). */
	if (is_root(g))
		ww_entry(g, fd, "");
	for (i = 0; i < sc.n; i++)
		if (sc.ents[i].type == DT_DIR)
			ww_entry(g, fd, sc.ents[i].name);
	if (candidate)
		gg_check_gitdir(g, fd);
	if (ingit)
		check_git_odd(g, fd, sc.ents, sc.n);
	else
		gg_check_links_out(g, fd, sc.ents, sc.n);
	if (sc.dotgit != DT_UNKNOWN && sc.dotgit != DT_DIR)
		gg_check_dotgit_file(g, fd, sc.dotgit);
	if (sc.dotgit == DT_REG)
		gg_check_worktree_side(g, fd);
	check_ctl_files(g, fd, sc.ents, sc.n, fresh_way);
	if (is_root(g) || sc.notebook)
		gg_check_py_shadow(g, fd);
	if (sc.pyc)
		gg_py_drop_compiled(g, fd);
	/* What git status does not show (gitignored.c): a .gitignore
	 * written in the session, a virtual environment's files. */
	/* In what the walk takes for a git directory too: git status walks
	 * a directory holding HEAD, objects/ and refs/ as any other, and
	 * its .gitignore hid what the session wrote beside it (review of
	 * round 36). */
	if (sc.gitignore)
		gg_check_gitignore(g, fd);
	if (sc.hgignore)
		gg_check_hgignore(g, fd);
	/* In a git directory too: HEAD, objects/ and refs/ made beside a
	 * .env made the walk take the directory for one, and the .env
	 * there stayed (review of round 36); agents load it all the same. */
	if (sc.dotenv)
		check_dotenv(g, fd, fresh_way);
	/* After the rows' and .env's own checks, which name theirs. */
	if (!ingit)
		check_work_odd(g, fd, sc.ents, sc.n);
	if (sc.venv != 0)
		gg_check_venv(g, fd, sc.venv);
	gg_check_hg(g, fd); /* a .hg's dirstate (gitindex.c) */
	gg_check_hg_prompt(g, fd); /* its branch and bookmarks (githg.c) */
	gg_check_hg_includes(g, fd); /* what its hgrc includes (githg.c) */
	/* Directories on a row's way or in a directory row: changed in the
	 * session, or below one that was since the row starts. Not in a row
	 * the mount plan covered read-only: the command could not write
	 * there, and the host's own changes (an IDE saving its workspace)
	 * must not move the rest aside. */
	for (i = 0; i < sc.n; i++) {
		if (sc.ents[i].type != DT_DIR || sc.ents[i].how == CTL_NONE)
			continue;
		/* A row's directory at the top was covered when it was
		 * there at the start: a row covered only where it exists
		 * (.run, .externalToolBuilders: round 36 of the attack) made
		 * or renamed there in the session was not ("stage" with an
		 * earlier session's file renamed to ".run" kept the file's
		 * ctime). */
		sc.ents[i].covered = covered || (depth == 0 && sc.ents[i].row != NULL && !sc.ents[i].row->if_dir &&
						 sc.ents[i].row->path[0] != '*' && dir_was_here(g, fd, sc.ents[i].name));
		/* Rows covered only where their directory exists: covered
		 * when that directory was there at the start (the placeholders
		 * the plan made in it change its ctime: round 34, an untouched
		 * .hg/hgrc at the top was moved aside after every session). */
		if (!sc.ents[i].covered && depth == 0 && sc.ents[i].type == DT_DIR && sc.ents[i].row != NULL &&
		    sc.ents[i].row->if_dir && g->before != NULL && noted(&g->before->ifdirs, fd, sc.ents[i].name))
			sc.ents[i].covered = true;
		sc.ents[i].fresh = !sc.ents[i].covered &&
				   ((fresh_way && (reloff != 0 || inrow != NULL)) || gg_changed(g, fd, sc.ents[i].name));
	}
descend:
	if (depth >= GG_FD_DEPTH) {
		(void)close(fd);
		fd = -1;
	}
	len = strlen(g->path);
	/* A directory's .git first: its repository's configs are followed
	 * before any other's in the walk's budget (gg_config_once()). */
	for (size_t k = 1; k < sc.n; k++)
		if (strcmp(sc.ents[k].name, ".git") == 0) {
			struct ent t = sc.ents[k];

			sc.ents[k] = sc.ents[0];
			sc.ents[0] = t;
			break;
		}
	for (i = 0; i < sc.n; i++) {
		if (sc.ents[i].type != DT_DIR)
			continue;
		if (!gg_join(g->path + len, sizeof(g->path) - len, "", sc.ents[i].name)) {
			g->path[len] = '\0';
			if (g->record != NULL) {
				gg_report_error(g, g->path, sc.ents[i].name, "path too long to check", 0);
				continue;
			}
			/* What the check cannot read moves aside (round 20 of
			 * the attack): settings staged below PATH_MAX in one
			 * session, the directory renamed up in the next, kept
			 * their ctimes and passed as old. */
			{
				int pfd = fd >= 0 ? fd : gg_open_below(g, g->path);

				if (pfd < 0) {
					gg_report_error(g, g->path, sc.ents[i].name, "path too long to check", errno);
					continue;
				}
				/* An earlier check's copy, untouched since, stays
				 * (review: moved again every session). */
				if (!gg_quarantined(g, pfd, sc.ents[i].name, false))
					gg_quarantine(g, pfd, g->path, sc.ents[i].name,
						      "a directory too deep to check (its path passes PATH_MAX)");
				if (pfd != fd)
					(void)close(pfd);
			}
			continue;
		}
		/* gg_join() with "" wrote "/name": the plain append. */
		walk(g, fd, sc.ents[i].name, depth + 1, sc.ents[i].how == CTL_WAY ? sc.ents[i].reloff : 0,
		     sc.ents[i].how == CTL_IN ? sc.ents[i].row : NULL,
		     sc.ents[i].how != CTL_NONE && sc.ents[i].fresh, sc.ents[i].how != CTL_NONE && sc.ents[i].covered,
		     ingit);
		g->path[len] = '\0';
	}
	if (fd >= 0)
		(void)close(fd);
out:
	free_ents(sc.ents, sc.n);
	if (restore)
		restore_mode(g, parentfd, name, dst.st_mode);
}

/*
 * The global and system configs the host's git reads (GIT_CONFIG_GLOBAL,
 * or ~/.gitconfig and $XDG_CONFIG_HOME/git/config; /etc/gitconfig) stay
 * as they are, but their includes and core.hooksPath may name a file or
 * directory in a writable tree (a team config in the work tree, hooks
 * kept in a dotfiles checkout): checked like a repository's kept config.
 */
static void check_global_configs(struct gg *g)
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME"), *glob = getenv("GIT_CONFIG_GLOBAL");
	const char *sys = getenv("GIT_CONFIG_SYSTEM");
	char files[4][PATH_MAX], dir[PATH_MAX];
	const char *slash;
	size_t i, n = 0;

	/* Both: the one git reads, and the usual one (round 13 of the
	 * attack: GIT_CONFIG_SYSTEM was not followed). */
	snprintf(files[n++], PATH_MAX, "/etc/gitconfig");
	if (sys != NULL && sys[0] == '/' && strlen(sys) < PATH_MAX && strcmp(sys, files[0]) != 0)
		snprintf(files[n++], PATH_MAX, "%s", sys);
	if (glob != NULL && glob[0] == '/' && strlen(glob) < PATH_MAX) {
		snprintf(files[n++], PATH_MAX, "%s", glob);
	} else if (glob == NULL && home != NULL && home[0] == '/') {
		if (snprintf(files[n], PATH_MAX, "%s/.gitconfig", home) < PATH_MAX)
			n++;
		if (xdg != NULL && xdg[0] == '/' ? snprintf(files[n], PATH_MAX, "%s/git/config", xdg) < PATH_MAX
						 : snprintf(files[n], PATH_MAX, "%s/.config/git/config", home) < PATH_MAX)
			n++;
	}
	for (i = 0; i < n; i++) {
		slash = strrchr(files[i], '/');
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - files[i]), files[i]);
		gg_check_kept_config(g, AT_FDCWD, files[i], true, files[i], dir[0] ? dir : "/", NULL);
	}
	gg_check_env_config(g);
}

/*
 * The repository a root lies in, when its git directory is above the
 * root (outside the tree the walk sees): its config stays, but its
 * core.hooksPath or an include may name a directory or file inside the
 * root (hooks kept in the subproject the session ran in). Checked like a
 * kept config; a worktree's config is its common directory's.
 */
static void check_enclosing_repo(struct gg *g, const char *root)
{
	char up[PATH_MAX], gitdir[PATH_MAX], text[PATH_MAX], common[PATH_MAX], cfg[PATH_MAX];
	struct stat st;
	char *slash;
	int fd;

	if (strlen(root) >= sizeof(up))
		return;
	strcpy(up, root);
	while ((slash = strrchr(up, '/')) != NULL && slash != up) {
		*slash = '\0';
		if (!gg_join(gitdir, sizeof(gitdir), up, ".git") || lstat(gitdir, &st) < 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			ssize_t n;

			fd = open(up, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0) {
				gg_report_unread(g, up, "", "cannot open to follow the repository it lies in", errno);
				return;
			}
			n = gg_read_small(fd, ".git", text, sizeof(text));
			if (n < 0)
				/* round 30: unread is not "no repository" */
				gg_report_unread(g, up, ".git",
						 "cannot read the .git file to follow its git directory's config", errno);
			if (n <= 8 || strncmp(text, "gitdir: ", 8) != 0 || !gg_resolve_pointer(up, text + 8, gitdir)) {
				(void)close(fd);
				return;
			}
			(void)close(fd);
		}
		fd = open(gitdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && gg_read_small(fd, "commondir", text, sizeof(text)) > 0 &&
		    gg_resolve_pointer(gitdir, text, common))
			memcpy(gitdir, common, strlen(common) + 1);
		if (fd >= 0)
			(void)close(fd);
		if (gg_under_roots(g, gitdir) || !gg_join(cfg, sizeof(cfg), gitdir, "config"))
			return; /* walked with its root */
		gg_check_kept_config(g, AT_FDCWD, cfg, false, cfg, gitdir, up);
		gg_check_global_hooks(g, up);
		return;
	}
}

/* Whether dfd/name holds nothing: an empty file or directory (the mount
 * plan's placeholders are such; an empty entry runs nothing, and one that
 * exists at the next run's start is covered read-only then). */
static bool entry_empty(int dfd, const char *name)
{
	struct dirent *de;
	struct stat st;
	bool empty = true;
	DIR *d;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	/* An empty file with another name elsewhere is what that name will
	 * hold (round 8 of the attack: an empty ~/.tclshrc linked to a
	 * project file, filled by a later session that may write only the
	 * project). */
	if (S_ISREG(st.st_mode))
		return st.st_size == 0 && st.st_nlink == 1;
	if (!S_ISDIR(st.st_mode) ||
	    (fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return false;
	d = fdopendir(fd);
	if (d == NULL) {
		(void)close(fd);
		return false;
	}
	while (empty && (de = readdir(d)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	(void)closedir(d);
	return empty;
}

/* Whether path is a root, or holds one (an allowWrite entry inside it). */
static bool names_or_holds_root(const char *const *roots, const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; roots[i] != NULL; i++)
		if (strncmp(roots[i], path, n) == 0 && (roots[i][n] == '\0' || roots[i][n] == '/'))
			return true;
	return false;
}

/* Whether the canonical path p lies in (or is) one of roots. */
static bool in_roots(const char *const *roots, const char *p)
{
	for (size_t i = 0; roots != NULL && roots[i] != NULL; i++) {
		size_t n = strlen(roots[i]);

		if (strcmp(roots[i], "/") == 0 ||
		    (strncmp(p, roots[i], n) == 0 && (p[n] == '\0' || p[n] == '/')))
			return true;
	}
	return false;
}

/*
 * The directories whose new entries the check after the run looks at:
 * each home (canonical, once) that lies under one of roots, and the
 * configuration and data directories of the host's programs under roots:
 * each home's .config and .local/share, and xdg ($XDG_CONFIG_HOME and
 * $XDG_DATA_HOME, when absolute). Everything there is read by some
 * program later (a shell's rc, a terminal's "shell =", an editor's
 * plugins, a Jupyter kernel's command line, a D-Bus service): there the
 * class rule of the home directory applies to every entry, not only to
 * dot ones. Each goes into dirs with its kind in cfg; returns how many.
 */
/* Adds the canonical form of p to dirs (of kind config) when it exists,
 * lies under roots and is not there yet. */
static void add_class_dir(const char *const *roots, const char *p, bool config, char dirs[][PATH_MAX],
			  char *kind, size_t *n)
{
	char real[PATH_MAX], parent[PATH_MAX];
	const char *slash;
	char k = config ? 'C' : 'H';

	if (p == NULL || p[0] != '/' || *n >= SBX_CLASS_DIRS)
		return;
	if (realpath(p, real) == NULL) {
		/* Missing: created in the session, it is new as a whole
		 * (kind 'M', where its parent, canonical, lies in roots). */
		if (!config || errno != ENOENT || (slash = strrchr(p, '/')) == NULL || slash[1] == '\0' ||
		    snprintf(parent, sizeof(parent), "%.*s", (int)(slash - p), slash == p ? "/" : p) >=
			    (int)sizeof(parent) ||
		    realpath(parent, real) == NULL || strlen(real) + strlen(slash) >= sizeof(real))
			return;
		strcat(real, strcmp(real, "/") == 0 ? slash + 1 : slash);
		k = 'M';
	}
	if (!in_roots(roots, real))
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp(dirs[i], real) == 0) {
			/* A home that is also a configuration directory
			 * (XDG_CONFIG_HOME=$HOME): all of its entries. */
			if (k == 'C')
				kind[i] = 'C';
			return;
		}
	memcpy(dirs[*n], real, sizeof(real));
	kind[(*n)++] = k;
}

static size_t class_dirs(const char *const *roots, const char *const *homes, const char *const *xdg,
			 char dirs[SBX_CLASS_DIRS][PATH_MAX], char kind[SBX_CLASS_DIRS])
{
	static const char *const subs[] = {"", "/.config", "/.local/share"};
	char p[PATH_MAX];
	size_t n = 0;

	for (size_t s = 0; s < ARRAY_LEN(subs); s++)
		for (size_t k = 0; homes != NULL && homes[k] != NULL; k++)
			if (snprintf(p, sizeof(p), "%s%s", homes[k], subs[s]) < (int)sizeof(p))
				add_class_dir(roots, p, s > 0, dirs, kind, &n);
	for (size_t i = 0; xdg != NULL && xdg[i] != NULL; i++)
		add_class_dir(roots, xdg[i], true, dirs, kind, &n);
	return n;
}

/* The directories without a dot a tool reads from HOME with no start-up
 * file of the home naming them (sbx_home_class_entry()). */
static const char *const home_tool_roots[] = {
	"node_modules", /* require() from any script under HOME */
	"go",		/* GOPATH's default: module cache, go install */
	"R",		/* R_LIBS_USER's default, first in .libPaths() */
	"texmf",	/* TEXMFHOME's default (TeX Live) */
	"bin",		/* on PATH by /etc/profile (openSUSE), Debian's and Fedora's skeletons */
	"snap",		/* each snap's HOME (~/snap/APP/current) */
	"sdk",		/* golang.org/dl's goX.Y commands run ~/sdk/goX.Y/bin/go */
	"public_html",	/* Apache's UserDir: served, its scripts run where CGI or PHP is on */
	"objects",	/* with refs and a HEAD: HOME a bare git directory */
	"refs",		/* for every directory under it (round 31 of the attack) */
};

bool sbx_home_class_entry(const char *name)
{
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	if (name[0] == '.')
		return true;
	for (size_t i = 0; i < ARRAY_LEN(home_tool_roots); i++)
		if (strcmp(name, home_tool_roots[i]) == 0)
			return true;
	return false;
}

void sbx_home_before_free(char **names)
{
	for (size_t i = 0; names != NULL && names[i] != NULL; i++)
		free(names[i]);
	free(names);
}

/* Appends one string to *v (*n of them, NULL-terminated). 0, or -1
 * (ENOMEM; str freed, *v unchanged). */
static int push(char ***v, size_t *n, char *str)
{
	char **nv = str != NULL ? realloc(*v, (*n + 2) * sizeof(**v)) : NULL;

	if (nv == NULL) {
		free(str);
		errno = ENOMEM;
		return -1;
	}
	*v = nv;
	(*v)[(*n)++] = str;
	(*v)[*n] = NULL;
	return 0;
}

/* Appends the marker of dir: its kind (H, C, or M for a directory that
 * does not exist yet: then its parent's), the device and inode of the
 * directory (of its parent for M), its path; then its entries as
 * absolute paths: a home's class entries, a configuration directory's
 * all. 0, or -1 (errno). */
static int list_entries(const char *dir, char kind, char ***v, size_t *n)
{
	char parent[PATH_MAX];
	struct dirent *de;
	struct stat st, est;
	char *str;
	DIR *d;
	int fd;

	if (kind == 'M') {
		const char *slash = strrchr(dir, '/');

		(void)snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dir), slash == dir ? "/" : dir);
		if (stat(parent, &st) < 0)
			return -1;
	}
	fd = kind == 'M' ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (kind != 'M' && (fd < 0 || fstat(fd, &st) < 0)) {
		if (fd >= 0)
			(void)close(fd);
		return -1;
	}
	if (asprintf(&str, "%c:%lu:%lu:%s", kind, (unsigned long)st.st_dev, (unsigned long)st.st_ino, dir) < 0)
		str = NULL;
	if (push(v, n, str) < 0) {
		if (fd >= 0)
			(void)close(fd);
		return -1;
	}
	if (kind == 'M')
		return 0;
	d = fdopendir(fd);
	if (d == NULL) {
		(void)close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		/* A home's every entry: a new one without a dot is looked
		 * for in its start-up files after the run. */
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (asprintf(&str, "%s/%s", dir, de->d_name) < 0)
			str = NULL;
		if (push(v, n, str) < 0) {
			(void)closedir(d);
			return -1;
		}
		/* A home's entry without a dot that is a symbolic link or a
		 * file with another hard link: the mount plan leaves it
		 * writable (protect_home_entries()), its identity is noted
		 * for check_home_links(). A symbolic link cannot be changed
		 * in place (a new one is a new inode, its ctime the
		 * session's); a file's writes and chmod move its ctime. */
		if (kind == 'H' && de->d_name[0] != '.' &&
		    fstatat(dirfd(d), de->d_name, &est, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (S_ISLNK(est.st_mode) || (!S_ISDIR(est.st_mode) && est.st_nlink > 1))) {
			if (asprintf(&str, "L:%lu:%lu:%lld:%ld:%s/%s", (unsigned long)est.st_dev,
				     (unsigned long)est.st_ino, (long long)est.st_ctim.tv_sec,
				     (long)est.st_ctim.tv_nsec, dir, de->d_name) < 0)
				str = NULL;
			if (push(v, n, str) < 0) {
				(void)closedir(d);
				return -1;
			}
		}
	}
	(void)closedir(d);
	return 0;
}

int sbx_home_before(const char *const *roots, const char *const *homes, const char *const *xdg, char ***out)
{
	char dirs[SBX_CLASS_DIRS][PATH_MAX], kind[SBX_CLASS_DIRS], **v = NULL;
	size_t n = 0, nd = class_dirs(roots, homes, xdg, dirs, kind);

	*out = NULL;
	if (nd == 0)
		return 0;
	for (size_t i = 0; i < nd; i++)
		if (list_entries(dirs[i], kind[i], &v, &n) < 0) {
			sbx_home_before_free(v);
			return -1;
		}
	*out = v;
	return 0;
}

/*
 * The after-run search of a writable home's start-up files for the new
 * entries without a dot that they name (round 30's review: a tool's
 * block left in .bashrc, ~/.zsh/conda.zsh, oh-my-zsh's custom/ after the
 * tool was removed: conda's runs ~/miniconda3/etc/profile.d/conda.sh,
 * gcloud's sources ~/google-cloud-sdk/path.bash.inc; a session that made
 * the entry plants code for the next shell). What is read: the home's
 * dot files that existed at the start (read-only in the session: the
 * session cannot add or change a line), and the regular files of its dot
 * directories, breadth first, within the bounds below; not a history
 * (it names what was, not what runs), not ~/.cache.
 *
 * Round 31 of the attack: then, transitively (a queue, within the same
 * bounds), each existing regular file a file read names through a
 * spelling of the home outside the dot tree (.bashrc sourcing
 * ~/dotfiles/shell.sh, which puts $HOME/sdk-tools/bin on PATH), the
 * files a glob of such a name matches (the *.sh of ~/dotfiles), the target of a
 * link in the dot tree (a stowed ~/.bashrc -> dotfiles/bash/.bashrc),
 * and the system's start-up files every login shell reads
 * (/etc/profile, the *.sh of /etc/profile.d, /etc/bash.bashrc, zsh's). The
 * spellings of the home: $HOME, ${HOME}, ${HOME:-...} (any ${HOME...}),
 * ~, ~user, its path (canonical, HOME as given, the password
 * database's), and its parent with the user's name as a variable
 * (/home/$USER, /home/${USER}, /home/$LOGNAME, /home/$(whoami)), each
 * quoted or not ("$HOME"/x, $HOME/"x"). A named file in a tree the
 * session could write (allowWrite ~/proj, the working directory) is
 * read only when the session did not change it: one it changed is
 * itself the plant (the next shell runs it); it is not moved aside (the
 * user's file, in a tree the user let the session write) but reported
 * unread (run's status 1), to be checked before a new shell.
 */
#define HOME_REFS_FILE_MAX_BYTES (256 * 1024)
#define HOME_REFS_TOTAL_MAX_BYTES (32 * 1024 * 1024)
#define HOME_REFS_MAX_FILES 8192
#define HOME_REFS_MAX_DEPTH 5
/* How far back a ${...} before a "/" is looked for. */
#define HOME_REFS_BRACE_MAX_BYTES 256

/** A file (or a directory's files by a glob) to read next. */
struct refnext {
	char *path;  /**< canonical absolute path (with glob: the directory) */
	char *glob;  /**< the pattern of the directory's files to read, or NULL */
	char *shown; /**< as named: ~/dotfiles/shell.sh, /etc/profile */
	char *via;   /**< shown of the file that named it, or NULL */
	bool fresh;  /**< in a tree the session could write, and changed */
};

/** One search: the new entries and what names them. */
struct refscan {
	struct gg *g;		  /**< the check: what it cannot read is unread */
	const char *home;	  /**< canonical path of the home */
	const char *given[2];	  /**< HOME and the password database's home as
				       given (a link to it: conda init writes
				       $HOME as given), or NULL */
	char given_buf[2][PATH_MAX];
	/** ~NAME for the users whose home this is (the home's owner, the
	 * running user), "" if none */
	char tilde[2][64];
	/** the parents of the home's spellings whose last component is
	 * such a user's name (/home for /home/att31), "" if none */
	char parent[3][PATH_MAX];
	char **names;		  /**< the new entries without a dot */
	const char **by;	  /**< per name: the file naming it (in files), or NULL */
	size_t n;		  /**< how many names */
	size_t files, bytes;	  /**< what was read so far */
	bool cut;		  /**< a bound stopped the search */
	char **dirs;		  /**< the queue of directories, relative to home */
	size_t ndirs, head;	  /**< its length and next one */
	struct refnext *next;	  /**< the queue of named files, each once */
	size_t nnext, hnext;	  /**< its length and next one */
	char **files_seen;	  /**< how the files that named one are shown */
	size_t nseen;		  /**< how many files_seen */
};

/* Whether a file named name names what was, not what runs: a shell's,
 * an interpreter's or an editor's history. */
static bool history_like(const char *name)
{
	return strcasestr(name, "history") != NULL || strcmp(name, ".viminfo") == 0 ||
	       strcmp(name, ".lesshst") == 0 || strstr(name, "_hist") != NULL || strcmp(name, ".zhistory") == 0;
}

/* Whether c may be part of an entry's name as a start-up file writes it
 * after "$HOME/". */
static bool ref_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("._+@-", c) != NULL);
}

static bool ref_quote(char c)
{
	return c == '"' || c == '\'';
}

/* Whether text[0, *at) ends with form; if so *at moves before it. */
static bool strip_form(const char *text, size_t *at, const char *form)
{
	size_t fl = strlen(form);

	if (fl == 0 || *at < fl || memcmp(text + *at - fl, form, fl) != 0)
		return false;
	*at -= fl;
	return true;
}

/* Whether text[0, *at) ends with a ${VAR...} whose VAR is var (${HOME},
 * ${HOME:-/x}, ${HOME%/}); if so *at moves before it. Nested braces
 * count; a line break ends the look. */
static bool strip_brace_var(const char *text, size_t *at, const char *var)
{
	size_t vl = strlen(var), depth = 0, i = *at;

	if (i == 0 || text[i - 1] != '}')
		return false;
	while (i > 0 && *at - i < HOME_REFS_BRACE_MAX_BYTES && text[i - 1] != '\n') {
		char c;

		i--;
		if (text[i] == '}')
			depth++;
		if (text[i] != '{' || --depth > 0)
			continue;
		/* The brace that opens the last one: ${VAR then no name
		 * character. */
		if (i == 0 || text[i - 1] != '$' || i + 1 + vl >= *at || strncmp(text + i + 1, var, vl) != 0)
			return false;
		c = text[i + 1 + vl];
		if (c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			return false;
		*at = i - 1;
		return true;
	}
	return false;
}

/* Whether text[0, *at) ends with the user's name as the shell spells it
 * at run time ($USER, ${USER}, $LOGNAME, $(whoami), ...). */
static bool strip_user_var(const char *text, size_t *at)
{
	static const char *const plain[] = {"$USER", "$LOGNAME", "$(whoami)", "`whoami`", "$(id -un)", "`id -un`",
					    "$(id -nu)"};

	for (size_t i = 0; i < ARRAY_LEN(plain); i++)
		if (strip_form(text, at, plain[i]))
			return true;
	return strip_brace_var(text, at, "USER") || strip_brace_var(text, at, "LOGNAME");
}

/* Whether text[0, at) ends with a spelling of the home (the comment
 * above), then an optional quote: the "/" at text[at] starts a path in
 * the home. *from: where the spelling starts. */
static bool home_before(const struct refscan *rs, const char *text, size_t at, size_t *from)
{
	/* @{HOME}: pam_env's spelling (/etc/security/pam_env.conf, its review) */
	const char *forms[] = {"$HOME", "~", "@{HOME}", rs->home, rs->given[0] != NULL ? rs->given[0] : "",
			       rs->given[1] != NULL ? rs->given[1] : "", rs->tilde[0], rs->tilde[1]};
	size_t a;

	if (at > 0 && ref_quote(text[at - 1]))
		at--;
	for (size_t f = 0; f < ARRAY_LEN(forms); f++) {
		a = at;
		if (strip_form(text, &a, forms[f])) {
			*from = a;
			return true;
		}
	}
	a = at;
	if (strip_brace_var(text, &a, "HOME")) {
		*from = a;
		return true;
	}
	/* PARENT/$USER, quoted in parts or not. */
	a = at;
	if (!strip_user_var(text, &a))
		return false;
	if (a > 0 && ref_quote(text[a - 1]))
		a--;
	if (a == 0 || text[a - 1] != '/')
		return false;
	a--;
	if (a > 0 && ref_quote(text[a - 1]))
		a--;
	for (size_t p = 0; p < ARRAY_LEN(rs->parent); p++) {
		size_t b = a;

		if (strip_form(text, &b, rs->parent[p])) {
			*from = b;
			return true;
		}
	}
	return false;
}

/* Notes that the file shown as shown (named by via, or NULL) names the
 * new entry k; *copy: the note's string, made once per file. 0, or -1
 * (ENOMEM). */
static int ref_mark(struct refscan *rs, size_t k, const char *shown, const char *via, char **copy)
{
	if (rs->by[k] != NULL)
		return 0;
	if (*copy == NULL) {
		char **nv = realloc(rs->files_seen, (rs->nseen + 1) * sizeof(*nv));

		if (nv == NULL)
			goto nomem;
		rs->files_seen = nv;
		if (via != NULL ? asprintf(copy, "%s (which %s names)", shown, via) < 0
				: (*copy = strdup(shown)) == NULL) {
			*copy = NULL;
			goto nomem;
		}
		rs->files_seen[rs->nseen++] = *copy;
	}
	rs->by[k] = *copy;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

/* Whether path lies in (or is) a root of roots strictly inside home: a
 * tree the session could write. */
static bool in_writable_below(const char *const *roots, const char *home, const char *path)
{
	size_t hl = strlen(home);

	for (size_t i = 0; roots != NULL && roots[i] != NULL; i++) {
		const char *r = roots[i];
		size_t rl = strlen(r);

		if (rl > hl && strncmp(r, home, hl) == 0 && r[hl] == '/' && strncmp(path, r, rl) == 0 &&
		    (path[rl] == '\0' || path[rl] == '/'))
			return true;
	}
	return false;
}

/* Whether the canonical path (a named file) lies where the session could
 * write: a root strictly inside the home, or any root outside it. */
static bool ref_writable(const struct refscan *rs, const char *path)
{
	size_t hl = strlen(rs->home);

	if (strncmp(path, rs->home, hl) == 0 && (path[hl] == '/' || path[hl] == '\0'))
		return in_writable_below(rs->g->roots, rs->home, path);
	for (size_t i = 0; rs->g->roots != NULL && rs->g->roots[i] != NULL; i++) {
		const char *r = rs->g->roots[i];
		size_t rl = strlen(r);

		if (strncmp(path, r, rl) == 0 && (path[rl] == '\0' || path[rl] == '/' || strcmp(r, "/") == 0))
			return true;
	}
	return false;
}

/*
 * Queues the file at path (absolute, or relative to the home when
 * in_home; a glob in its last component: the directory's files it
 * matches), shown as shown, named by via (or NULL), unless read or
 * queued already. A path that resolves into a new entry (through a
 * link) marks that entry instead; one missing, or not a regular file,
 * is left out. 0, or -1 (ENOMEM).
 */
static int ref_follow(struct refscan *rs, const char *path, bool in_home, const char *shown, const char *via)
{
	char full[PATH_MAX], canon[PATH_MAX], *glob = NULL, *slash, *wild;
	size_t hl = strlen(rs->home);
	struct refnext *nq, e = {0};
	struct stat st;

	if (in_home ? !gg_join(full, sizeof(full), rs->home, path)
		    : snprintf(full, sizeof(full), "%s", path) >= (int)sizeof(full))
		return 0;
	slash = strrchr(full, '/');
	if ((wild = strpbrk(full, "*?[")) != NULL) {
		/* A glob in the last component only: for f in ~/x/ *.sh. */
		if (slash == NULL || wild < slash)
			return 0;
		*slash = '\0';
		glob = slash + 1;
	}
	if (realpath(full[0] != '\0' ? full : "/", canon) == NULL || stat(canon, &st) < 0 ||
	    !(glob != NULL ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
		return 0;
	/* Written in the session where it could write: the named path
	 * (a link it put there) or what it resolves to. */
	e.fresh = glob == NULL && ((ref_writable(rs, full) && gg_changed(rs->g, AT_FDCWD, full)) ||
				   (ref_writable(rs, canon) && gg_changed(rs->g, AT_FDCWD, canon)));
	if (strncmp(canon, rs->home, hl) == 0 && canon[hl] == '/') {
		/* Through a link into a new entry: that entry is named. */
		const char *first = canon + hl + 1;
		size_t fl = strcspn(first, "/");
		char *copy = NULL;

		for (size_t k = 0; k < rs->n; k++)
			if (strlen(rs->names[k]) == fl && memcmp(rs->names[k], first, fl) == 0)
				return ref_mark(rs, k, via != NULL ? via : shown, NULL, &copy);
	}
	for (size_t i = 0; i < rs->nnext; i++)
		if (strcmp(rs->next[i].path, canon) == 0 &&
		    (glob == NULL ? rs->next[i].glob == NULL
				  : rs->next[i].glob != NULL && strcmp(rs->next[i].glob, glob) == 0))
			return 0;
	if (rs->nnext >= HOME_REFS_MAX_FILES) {
		rs->cut = true;
		return 0;
	}
	nq = realloc(rs->next, (rs->nnext + 1) * sizeof(*nq));
	if (nq == NULL)
		goto nomem;
	rs->next = nq;
	if ((e.path = strdup(canon)) == NULL || (glob != NULL && (e.glob = strdup(glob)) == NULL) ||
	    (e.shown = strdup(shown)) == NULL || (via != NULL && (e.via = strdup(via)) == NULL)) {
		free(e.path);
		free(e.glob);
		free(e.shown);
		goto nomem;
	}
	rs->next[rs->nnext++] = e;
	return 0;
nomem:
	errno = ENOMEM;
	return -1;
}

/* Marks each name of rs that text (len bytes; shown: how its file is
 * named to the user, via: the file naming it or NULL) names through a
 * spelling of the home (home_before()), and queues the existing files
 * outside the dot tree it names so (ref_follow()). 0, or -1 (ENOMEM). */
static int scan_text(struct refscan *rs, const char *shown, const char *via, const char *text, size_t len)
{
	char *copy = NULL, path[PATH_MAX], named[PATH_MAX + 2];

	for (size_t i = 0; i + 1 < len; i++) {
		size_t j = i + 1, pl = 0, nl, from = 0;
		bool marked = false, whole = true;

		if (text[i] != '/')
			continue;
		if (ref_quote(text[j]) && j + 1 < len)
			j++; /* $HOME/"x" */
		if (!ref_name_char(text[j]) || !home_before(rs, text, i, &from))
			continue;
		/* The path as the shell takes it: quotes inside it dropped
		 * ($HOME/"x"/y.sh), a glob kept (~/dotfiles/ *.sh). */
		for (; j < len; j++) {
			char c = text[j];

			if (pl + 1 >= sizeof(path)) {
				whole = false;
				break;
			}
			if (ref_name_char(c) || (c != '\0' && strchr("/*?[]", c) != NULL))
				path[pl++] = c;
			else if (!(ref_quote(c) && j + 1 < len && (ref_name_char(text[j + 1]) || text[j + 1] == '/')))
				break;
		}
		path[pl] = '\0';
		while (pl > 1 && path[pl - 1] == '/')
			path[--pl] = '\0';
		nl = strcspn(path, "/");
		for (size_t k = 0; k < rs->n; k++)
			if (strlen(rs->names[k]) == nl && memcmp(rs->names[k], path, nl) == 0) {
				if (ref_mark(rs, k, shown, via, &copy) < 0)
					return -1;
				marked = true;
			}
		/* The dot tree is read anyway; a new entry is not read (the
		 * session wrote it); a file:// address is a document an
		 * editor or a file manager lists (recently-used.xbel: a
		 * start-up file never sources one, and hundreds of them
		 * would use the bounds up). */
		if (!marked && whole && path[0] != '.' &&
		    !(from >= 7 && memcmp(text + from - 7, "file://", 7) == 0) &&
		    snprintf(named, sizeof(named), "~/%s", path) < (int)sizeof(named) &&
		    ref_follow(rs, path, true, named, shown) < 0)
			return -1;
	}
	return 0;
}

/* HOME as given (src), without its trailing slashes, into buf when it
 * is another path of home (canonical); else NULL. */
static const char *given_home(const char *src, const char *home, char *buf, size_t len)
{
	char real[PATH_MAX];
	size_t n;

	if (src == NULL || src[0] != '/' || (n = strlen(src)) >= len)
		return NULL;
	memcpy(buf, src, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	if (strcmp(buf, home) == 0 || realpath(buf, real) == NULL || strcmp(real, home) != 0)
		return NULL;
	return buf;
}

/* Fills rs->tilde (slot i) for the user uid when the password database
 * gives that user this home, and rs->parent when a spelling of the home
 * ends in the user's name. */
static void ref_user_forms(struct refscan *rs, uid_t uid, size_t i)
{
	const char *homes[] = {rs->home, rs->given[0], rs->given[1]};
	char real[PATH_MAX];
	struct passwd *pw;
	size_t nl;

	errno = 0;
	pw = getpwuid(uid);
	if (pw == NULL || pw->pw_name == NULL || (nl = strlen(pw->pw_name)) == 0)
		return;
	if (pw->pw_dir != NULL && nl + 2 <= sizeof(rs->tilde[i]) && realpath(pw->pw_dir, real) != NULL &&
	    strcmp(real, rs->home) == 0)
		(void)snprintf(rs->tilde[i], sizeof(rs->tilde[i]), "~%s", pw->pw_name);
	/* /home/$USER: a spelling of the home whose last component is the
	 * name ($USER at the next shell is the home's user, whatever the
	 * password database says of its home). */
	for (size_t h = 0; h < ARRAY_LEN(homes); h++) {
		const char *s = homes[h], *slash = s != NULL ? strrchr(s, '/') : NULL;

		if (slash == NULL || slash == s || strcmp(slash + 1, pw->pw_name) != 0 ||
		    (size_t)(slash - s) >= sizeof(rs->parent[h]))
			continue;
		memcpy(rs->parent[h], s, (size_t)(slash - s));
		rs->parent[h][slash - s] = '\0';
	}
}

/* Reads the directory home/rel (rel "" for the home: only its dot
 * entries that before lists) into rs: its regular files scanned, its
 * directories queued, the targets of its links queued as named files.
 * 0, or -1 (ENOMEM). */
static int scan_dir(struct refscan *rs, int hfd, const char *rel, unsigned depth, const char *const *before)
{
	char sub[PATH_MAX], path[PATH_MAX], shown[PATH_MAX + 2];
	struct dirent *de;
	struct stat st;
	int fd, rc = 0;
	DIR *d;

	struct gg_dir gd = {.pfd = hfd, .dir = rs->home, .name = rel[0] == '\0' ? "." : rel, .nofollow = true,
			    .what = "cannot open to search the start-up files it holds for the new entries they name"};

	/* Not dup(hfd): a duplicate shares the listing's offset. The one
	 * opener: a directory the session made 0300 is opened up, and one
	 * still unreadable is counted as unread (run's status 1), not
	 * "nothing to read there". */
	fd = gg_dir_open(rs->g, &gd);
	if (fd < 0)
		return 0; /* gone (or reported) */
	if ((d = fdopendir(fd)) == NULL) {
		gg_report_unread(rs->g, rs->home, rel, "cannot list to search the start-up files it holds", errno);
		gg_dir_close(rs->g, &gd, fd);
		return 0;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		bool old = false;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || history_like(de->d_name) ||
		    gg_is_quarantine_name(de->d_name))
			continue;
		if (rel[0] == '\0') {
			/* A new dot entry is moved aside anyway; ~/.cache is
			 * a cache. */
			if (de->d_name[0] != '.' || strcmp(de->d_name, ".cache") == 0 ||
			    !gg_join(path, sizeof(path), rs->home, de->d_name))
				continue;
			for (size_t i = 0; before[i] != NULL && !old; i++)
				old = strcmp(before[i], path) == 0;
			if (!old)
				continue;
		}
		if (snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] != '\0' ? "/" : "", de->d_name) >=
			    (int)sizeof(sub) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		/* A writable tree (allowWrite ~/.npm): the session could
		 * write its files, so they are no start-up file the user
		 * wrote, and could use up the bounds below (round 30's
		 * review). */
		if (gg_join(path, sizeof(path), rs->home, sub) && in_writable_below(rs->g->roots, rs->home, path))
			continue;
		(void)snprintf(shown, sizeof(shown), "~/%s", sub);
		if (S_ISDIR(st.st_mode)) {
			char **nq, *s;

			if (depth + 1 >= HOME_REFS_MAX_DEPTH)
				continue; /* deeper: a tool's own tree, no start-up file */
			nq = realloc(rs->dirs, (rs->ndirs + 1) * sizeof(*nq));
			if (nq == NULL || (s = strdup(sub)) == NULL) {
				if (nq != NULL)
					rs->dirs = nq;
				errno = ENOMEM;
				rc = -1;
				break;
			}
			rs->dirs = nq;
			rs->dirs[rs->ndirs++] = s;
		} else if (S_ISLNK(st.st_mode)) {
			/* A stowed ~/.bashrc -> dotfiles/bash/.bashrc: the
			 * shell reads the target (a regular file only). */
			rc = ref_follow(rs, sub, true, shown, NULL);
		} else if (S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= HOME_REFS_FILE_MAX_BYTES) {
			size_t len;
			char *text;

			if (rs->files >= HOME_REFS_MAX_FILES ||
			    rs->bytes + (size_t)st.st_size > HOME_REFS_TOTAL_MAX_BYTES) {
				rs->cut = true;
				continue;
			}
			text = fileio_read_at(dirfd(d), de->d_name, HOME_REFS_FILE_MAX_BYTES, 0, &len, &st);
			if (text == NULL)
				continue; /* changed or unreadable: left out */
			rs->files++;
			rs->bytes += len;
			/* A binary file (a compiled cache, a database) is
			 * no start-up file. */
			if (memchr(text, '\0', len < 4096 ? len : 4096) == NULL)
				rc = scan_text(rs, shown, NULL, text, len);
			free(text);
		}
	}
	(void)closedir(d);
	gg_dir_close(rs->g, &gd, -1);
	return rc;
}

/* Reads the named file rs->next[i] (a glob: queues the directory's files
 * it matches). A file in a tree the session could write is read only
 * when the session did not change it; one it changed is reported unread.
 * 0, or -1 (ENOMEM). */
static int scan_next(struct refscan *rs, size_t i)
{
	struct refnext e = rs->next[i]; /* the strings stay; the array may move */
	char child[PATH_MAX], shown[PATH_MAX + 2];
	struct dirent *de;
	struct stat st;
	size_t len;
	char *text;
	int rc = 0;
	DIR *d;

	if (e.glob != NULL) {
		const char *sl = strrchr(e.shown, '/');
		int dl = sl != NULL ? (int)(sl - e.shown + 1) : 0;

		if ((d = opendir(e.path)) == NULL)
			return 0; /* gone, or not ours to read: nothing runs from it then */
		while (rc == 0 && (de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
			    fnmatch(e.glob, de->d_name, FNM_PERIOD) == 0 &&
			    gg_join(child, sizeof(child), e.path, de->d_name) &&
			    snprintf(shown, sizeof(shown), "%.*s%s", dl, e.shown, de->d_name) < (int)sizeof(shown))
				rc = ref_follow(rs, child, false, shown, e.via);
		(void)closedir(d);
		return rc;
	}
	if (e.fresh) {
		char what[PATH_MAX + 160];

		(void)snprintf(what, sizeof(what),
			       "changed in the session, in a tree it could write; the start-up file %s runs it: "
			       "check it before opening a new shell",
			       e.via != NULL ? e.via : e.shown);
		gg_report_unread(rs->g, e.path, "", what, 0);
		return 0;
	}
	if (rs->files >= HOME_REFS_MAX_FILES) {
		rs->cut = true;
		return 0;
	}
	text = fileio_read(e.path, HOME_REFS_FILE_MAX_BYTES, 0, &len, &st);
	if (text == NULL)
		return 0; /* over the size (a tool's binary), gone, unreadable: left out */
	if (rs->bytes + len > HOME_REFS_TOTAL_MAX_BYTES) {
		rs->cut = true;
		free(text);
		return 0;
	}
	rs->files++;
	rs->bytes += len;
	if (memchr(text, '\0', len < 4096 ? len : 4096) == NULL) {
		rc = scan_text(rs, e.shown, e.via, text, len);
	}
	free(text);
	return rc;
}

/* The system's start-up files every login or interactive shell of the
 * user reads, and what sets a login's environment; they name the home
 * as $HOME, ~ or @{HOME} (read-only in the session: what they name is
 * the user's to plant). fish, csh, pam_env, systemd's environment.d and
 * the X session's scripts: the review of round 31's fixes. */
static int ref_follow_system(struct refscan *rs)
{
	static const char *const sys[] = {
		"/etc/profile",		    "/etc/profile.d/*.sh",	"/etc/bash.bashrc",
		"/etc/bashrc",		    "/etc/zshenv",		"/etc/zprofile",
		"/etc/zshrc",		    "/etc/zlogin",		"/etc/zsh/zshenv",
		"/etc/zsh/zprofile",	    "/etc/zsh/zshrc",		"/etc/zsh/zlogin",
		"/etc/fish/config.fish",    "/etc/fish/conf.d/*.fish", "/etc/csh.cshrc",
		"/etc/csh.login",	    "/etc/profile.d/*.csh",	"/etc/environment",
		"/etc/environment.d/*.conf", "/etc/security/pam_env.conf", "/etc/X11/Xsession.d/*",
	};

	for (size_t i = 0; i < ARRAY_LEN(sys); i++)
		if (ref_follow(rs, sys[i], false, sys[i], NULL) < 0)
			return -1;
	return 0;
}

/*
 * Moves aside each new entry without a dot of the home dir (fd, its
 * canonical path) in names (n of them) that a start-up file of the home
 * names, and reports the search cut short by a bound.
 */
static void check_home_refs(struct gg *g, int fd, const char *dir, char **names, size_t n,
			    const char *const *before)
{
	struct refscan rs = {.g = g, .home = dir, .names = names, .n = n};
	struct passwd *pw;
	struct stat hst;
	bool own;
	int rc = 0;

	if (n == 0 || strcmp(dir, "/") == 0)
		return;
	rs.given[0] = given_home(getenv("HOME"), dir, rs.given_buf[0], sizeof(rs.given_buf[0]));
	errno = 0;
	pw = getpwuid(geteuid());
	rs.given[1] = pw != NULL ? given_home(pw->pw_dir, dir, rs.given_buf[1], sizeof(rs.given_buf[1])) : NULL;
	/* ~att31/ and /home/$USER/: the home's owner, and the running user
	 * (root with HOME=/root). */
	own = fstat(fd, &hst) == 0;
	if (own)
		ref_user_forms(&rs, hst.st_uid, 0);
	if (!own || hst.st_uid != geteuid())
		ref_user_forms(&rs, geteuid(), 1);
	rs.by = calloc(n, sizeof(*rs.by));
	if (rs.by == NULL) {
		gg_report_error(g, dir, "", "cannot search the start-up files for the new entries they name", ENOMEM);
		return;
	}
	rc = ref_follow_system(&rs);
	if (rc == 0)
		rc = scan_dir(&rs, fd, "", 0, before);
	for (; rc == 0 && rs.head < rs.ndirs; rs.head++) {
		unsigned depth = 1;

		for (const char *c = rs.dirs[rs.head]; *c != '\0'; c++)
			depth += *c == '/';
		rc = scan_dir(&rs, fd, rs.dirs[rs.head], depth, before);
	}
	/* The named files last: each may name more (within the bounds). */
	for (; rc == 0 && rs.hnext < rs.nnext; rs.hnext++)
		rc = scan_next(&rs, rs.hnext);
	if (rc < 0)
		gg_report_error(g, dir, "", "cannot search the start-up files for the new entries they name", errno);
	for (size_t k = 0; k < n; k++) {
		char why[2 * PATH_MAX + 160];

		if (rs.by[k] == NULL)
			continue;
		(void)snprintf(why, sizeof(why),
			       "a new entry of the home directory that its start-up file %s names (the host's "
			       "next shell would run what it holds)",
			       rs.by[k]);
		gg_quarantine(g, fd, dir, names[k], why);
	}
	if (rs.cut) {
		/* Unread (run's status 1): what was left out may name one
		 * (round 30's review: a session that filled a writable tree
		 * here used the bounds up; those trees are skipped now). */
		gg_report_unread(g, dir, "",
				 "has more files in its dot directories and the files its start-up files name than "
				 "the search for the new entries they name reads (8192 files, 32 MiB); the new "
				 "entries without a dot that stayed were not looked for in the rest: check that no "
				 "start-up file runs what they hold before opening a new shell",
				 0);
	}
	for (size_t i = 0; i < rs.ndirs; i++)
		free(rs.dirs[i]);
	free(rs.dirs);
	for (size_t i = 0; i < rs.nnext; i++) {
		free(rs.next[i].path);
		free(rs.next[i].glob);
		free(rs.next[i].shown);
		free(rs.next[i].via);
	}
	free(rs.next);
	for (size_t i = 0; i < rs.nseen; i++)
		free(rs.files_seen[i]);
	free(rs.files_seen);
	free(rs.by);
}

/*
 * A writable tree that holds a home directory: the mount plan covered
 * the entries that existed (read-only: they cannot be removed or
 * replaced), but a new dot entry can be anything the host's shell,
 * editor or tools read later (~/.mavenrc, ~/.lessfilter, ~/.pdbrc, a new
 * tool's rc file), and a new ~/node_modules or ~/go is code tools run
 * from HOME by default: each non-empty entry sbx_home_class_entry()
 * names, not in before, that no root names or lies in, is moved aside
 * and reported (~/objects and ~/refs even empty); every new entry that
 * is not a directory too, empty or not, dot or not (round 31 of the
 * attack: tools walk up from the directory they run in, and HOME is
 * above every project: ~/go.work, ~/Cargo.toml, an empty ~/pytest.ini
 * sets pytest's rootdir); another new directory (~/newproject) stays,
 * unless a start-up file of the home names it (check_home_refs()). In a
 * configuration directory, every new non-empty entry.
 */
static void check_new_entries(struct gg *g, const char *const *before, int fd, const char *dir, bool config)
{
	char path[PATH_MAX], **names = NULL;
	size_t nnames = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	d = fdopendir(fd);
	if (d == NULL) {
		gg_report_error(g, dir, "", "cannot list to check for new start-up files", errno);
		(void)close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		bool old = false, plain;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    gg_quarantined(g, fd, de->d_name, true) || !gg_join(path, sizeof(path), dir, de->d_name))
			continue;
		plain = !config && !sbx_home_class_entry(de->d_name);
		for (size_t i = 0; before[i] != NULL && !old; i++)
			old = strcmp(before[i], path) == 0;
		if (old || names_or_holds_root(g->roots, path))
			continue;
		if (!config && fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				gg_report_error(g, dir, de->d_name, "cannot tell whether the new entry is a file",
						errno);
			continue;
		}
		if (!config && !S_ISDIR(st.st_mode)) {
			/* A file, empty or not (round 31 of the attack). */
			gg_quarantine(g, fd, dir, de->d_name,
				      "a new file at the top of the home directory (tools look for their "
				      "project files in every directory above the one they run in, and the "
				      "home is above every project: go.work, Cargo.toml, pytest.ini, "
				      "package.json, a bare repository's HEAD)");
			continue;
		}
		/* An empty directory runs nothing, except git's two: with a
		 * HEAD they make HOME a git directory. */
		if (entry_empty(fd, de->d_name) &&
		    (config || (strcmp(de->d_name, "objects") != 0 && strcmp(de->d_name, "refs") != 0)))
			continue;
		if (plain) {
			/* Looked for in the start-up files below. */
			char **nv = realloc(names, (nnames + 1) * sizeof(*nv));

			if (nv == NULL || (nv[nnames] = strdup(de->d_name)) == NULL) {
				if (nv != NULL)
					names = nv;
				gg_report_error(g, dir, de->d_name,
						"cannot note the new entry to search the start-up files for it", ENOMEM);
				continue;
			}
			names = nv;
			nnames++;
			continue;
		}
		gg_quarantine(g, fd, dir, de->d_name,
			      config ? "a new entry of a configuration or data directory (programs on the host read it)"
				     : "a new entry of the home directory (the host runs start-up files and "
				       "the code in ~/node_modules, ~/go, ~/R, ~/texmf, ~/bin; ~/objects and "
				       "~/refs make the home a git directory)");
	}
	check_home_refs(g, dirfd(d), dir, names, nnames, before);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	(void)closedir(d);
}

/* Opens dir (no link as its last component) when it is still the
 * directory dev:ino: a class directory swapped for a link or another
 * directory in the session (~/.local/share -> ~/Documents) must not have
 * the entries it now shows moved. -1 otherwise (reported). Through the
 * one opener (round 30's review: `chmod 0300 ~` as the command's last
 * step made the open fail, and every home check was skipped with status
 * 0): one of ours is opened up, its mode put back by gg_dir_close(gd)
 * (also when -1); one still unreadable is counted as unread. */
static int open_same(struct gg *g, const char *dir, unsigned long dev, unsigned long ino, struct gg_dir *gd)
{
	struct stat st;
	int fd, e;

	*gd = (struct gg_dir){.pfd = AT_FDCWD, .dir = dir, .name = dir, .nofollow = true,
			      .what = "cannot open to check for new start-up files"};
	fd = gg_dir_open(g, gd);
	if (fd < 0) {
		e = errno;
		/* Else gg_dir_open() reported it unread. */
		if (e == ENOENT || e == ENOTDIR || e == ELOOP)
			gg_report_error(g, dir, "",
					"was replaced during the session; not checked for new start-up files", ENOTDIR);
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		(void)close(fd);
		gg_report_unread(g, dir, "", "cannot check for new start-up files", e);
		return -1;
	}
	if ((unsigned long)st.st_dev == dev && (unsigned long)st.st_ino == ino)
		return fd;
	(void)close(fd);
	gg_report_error(g, dir, "", "was replaced during the session; not checked for new start-up files", ENOTDIR);
	return -1;
}

/*
 * A home's entry without a dot that was a symbolic link or a file with
 * another hard link at the start, by its marker "L:DEV:INO:CSEC:CNSEC:PATH":
 * the mount plan could not cover it read-only (the link itself, or the
 * file's other name, can be replaced or written), so it was writable in
 * the session. One replaced, retargeted or written (another inode, or
 * another ctime) is moved aside; one removed is reported.
 */
static void check_home_link(struct gg *g, const char *m)
{
	unsigned long dev, ino;
	long long csec;
	long cnsec;
	char parent[PATH_MAX];
	const char *path, *slash;
	struct stat st;
	int off = 0, fd;

	if (sscanf(m + 2, "%lu:%lu:%lld:%ld:%n", &dev, &ino, &csec, &cnsec, &off) != 4 || off == 0)
		return;
	path = m + 2 + off;
	slash = strrchr(path, '/');
	if (slash == NULL || slash == path ||
	    snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path) >= (int)sizeof(parent))
		return;
	struct gg_dir gd = {.pfd = AT_FDCWD, .dir = parent, .name = parent, .nofollow = true,
			    .what = "cannot open to check the links it had"};

	/* The one opener: a home the command made 0300 is opened up; one
	 * still unreadable is counted as unread. Gone or replaced:
	 * check_home_entries() reports it. */
	fd = gg_dir_open(g, &gd);
	if (fd < 0)
		return;
	if (fstatat(fd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT) {
			struct sbx_git_finding f = {
				.path = path,
				.error = "was a symbolic link or a file with several hard links of the home "
					 "directory, and the session removed it (links there cannot be protected: "
					 "restore it if it was yours)"};

			g->report(g->arg, &f);
		} else {
			gg_report_error(g, parent, slash + 1, "cannot check whether the session replaced it", errno);
		}
	} else if ((unsigned long)st.st_dev != dev || (unsigned long)st.st_ino != ino ||
		   (long long)st.st_ctim.tv_sec != csec || (long)st.st_ctim.tv_nsec != cnsec) {
		gg_quarantine(g, fd, parent, slash + 1,
			      "a symbolic link or a file with several hard links of the home directory, replaced, "
			      "retargeted or written in the session (links there cannot be covered read-only; the "
			      "host may run what it now holds)");
	}
	gg_dir_close(g, &gd, fd);
}

/*
 * The directories sbx_home_before() listed, by their markers
 * "K:DEV:INO:PATH". A configuration or data directory that did not exist
 * (M) is new as a whole: moved aside when it holds anything.
 */
static void check_home_entries(struct gg *g, const char *const *before)
{
	for (size_t i = 0; before != NULL && before[i] != NULL; i++) {
		const char *m = before[i], *dir, *slash;
		struct gg_dir gd = {.mode = (mode_t)-1};
		unsigned long dev, ino;
		char parent[PATH_MAX];
		int fd, off = 0;

		if (m[0] == 'L' && m[1] == ':') {
			check_home_link(g, m);
			continue;
		}
		if (m[0] == '/' || m[1] != ':' || sscanf(m + 2, "%lu:%lu:%n", &dev, &ino, &off) != 2 || off == 0)
			continue;
		dir = m + 2 + off;
		if (m[0] != 'M') {
			if ((fd = open_same(g, dir, dev, ino, &gd)) >= 0)
				check_new_entries(g, before, fd, dir, m[0] == 'C');
			gg_dir_close(g, &gd, -1); /* the fd: closed by check_new_entries() */
			continue;
		}
		slash = strrchr(dir, '/');
		if (slash == NULL ||
		    snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dir), slash == dir ? "/" : dir) >=
			    (int)sizeof(parent) ||
		    (fd = open_same(g, parent, dev, ino, &gd)) < 0) {
			gg_dir_close(g, &gd, -1);
			continue;
		}
		if (faccessat(fd, slash + 1, F_OK, AT_SYMLINK_NOFOLLOW) == 0 && !entry_empty(fd, slash + 1) &&
		    !names_or_holds_root(g->roots, dir))
			gg_quarantine(g, fd, parent, slash + 1,
				      "a configuration or data directory created in the session (programs on the "
				      "host read it)");
		gg_dir_close(g, &gd, fd);
	}
}

/* Walks each root of g->roots not inside another (the check after the
 * session, or the walk before it when g->record). */
static void walk_roots(struct gg *g)
{
	const char *const *roots = g->roots;
	mode_t mode;
	size_t i, j;

	for (i = 0; roots[i] != NULL; i++) {
		bool nested = false;

		/* A root inside another is walked with it. */
		for (j = 0; roots[j] != NULL; j++) {
			size_t n = strlen(roots[j]);
			if (j != i && strcmp(roots[i], roots[j]) != 0 &&
			    (strcmp(roots[j], "/") == 0 ||
			     (strncmp(roots[i], roots[j], n) == 0 && roots[i][n] == '/')))
				nested = true;
			if (j < i && strcmp(roots[i], roots[j]) == 0)
				nested = true;
		}
		if (nested || strlen(roots[i]) >= sizeof(g->path))
			continue;
		/* A root of ours the command made unreadable (chmod 0300 .,
		 * round 13 of the attack): opened up for the walk by the one
		 * opener, its mode put back after (and said when it cannot
		 * be), as walk_open() does below it. */
		g->rootfd = gg_dir_open_up(AT_FDCWD, roots[i], false, &mode);
		if (g->rootfd < 0) {
			int e = errno;
			struct stat st;

			gg_dir_mode_back(g, AT_FDCWD, roots[i], roots[i], mode);
			/* A file named by allowWrite: nothing below it to walk
			 * (its mount point cannot be replaced); the repository
			 * it may lie in is checked. */
			if (e == ENOTDIR && stat(roots[i], &st) == 0 && !S_ISDIR(st.st_mode)) {
				check_enclosing_repo(g, roots[i]);
				continue;
			}
			if (e != ENOENT)
				gg_report_error(g, roots[i], "", "cannot open to check for git repositories", e);
			continue;
		}
		strcpy(g->path, strcmp(roots[i], "/") == 0 ? "" : roots[i]);
		g->rootlen = strlen(g->path);
		walk(g, -1, NULL, 0, 0, NULL, false, false, false);
		(void)close(g->rootfd);
		gg_dir_mode_back(g, AT_FDCWD, roots[i], roots[i], mode);
		check_enclosing_repo(g, roots[i]);
	}
}

/* The walk before the session reports nothing: what it could not read
 * is not noted, and so checked as new after the session. */
static void report_none(void *arg, const struct sbx_git_finding *f)
{
	(void)arg;
	(void)f;
}

int sbx_git_before(const char *const *roots, const struct sbx_ctl_path *ctl, sbx_git_before_t **out)
{
	struct sbx_git_stats st;
	struct sbx_git_before *b;
	struct gg *g;

	*out = NULL;
	g = calloc(1, sizeof(*g));
	b = calloc(1, sizeof(*b));
	if (g == NULL || b == NULL) {
		free(g);
		free(b);
		errno = ENOMEM;
		return -1;
	}
	memset(&st, 0, sizeof(st));
	g->report = report_none;
	g->st = &st;
	g->roots = roots;
	g->record = b;
	g->record_ctl = ctl;
	if (roots != NULL) {
		/* Where the kept configs lead now: the host's git lists them,
		 * the global configs first (a relative core.hooksPath of
		 * theirs applies in every work tree). */
		gg_find_git(g);
		check_global_configs(g);
		walk_roots(g);
	}
	gg_listed_free(g);
	gg_py_free(g);
	free(g);
	if (b->nomem) {
		sbx_git_before_free(b);
		errno = ENOMEM;
		return -1;
	}
	if (b->dirs.n > 1)
		qsort(b->dirs.v, b->dirs.n, sizeof(*b->dirs.v), cmp_dev_ino);
	if (b->odd.n > 1)
		qsort(b->odd.v, b->odd.n, sizeof(*b->odd.v), cmp_dev_ino);
	if (b->ifdirs.n > 1)
		qsort(b->ifdirs.v, b->ifdirs.n, sizeof(*b->ifdirs.v), cmp_dev_ino);
	if (b->links.n > 1)
		qsort(b->links.v, b->links.n, sizeof(*b->links.v), cmp_dev_ino);
	if (b->refs.n > 1)
		qsort(b->refs.v, b->refs.n, sizeof(*b->refs.v), cmp_dev_ino);
	if (b->py.n > 1)
		qsort(b->py.v, b->py.n, sizeof(*b->py.v), cmp_dev_ino);
	if (b->places.n > 1)
		qsort(b->places.v, b->places.n, sizeof(*b->places.v), cmp_dev_ino);
	if (b->nrefsnaps > 1)
		qsort(b->refsnaps, b->nrefsnaps, sizeof(*b->refsnaps), cmp_refsnap);
	*out = b;
	return 0;
}

void sbx_git_before_free(sbx_git_before_t *b)
{
	if (b == NULL)
		return;
	free(b->dirs.v);
	free(b->odd.v);
	free(b->ifdirs.v);
	free(b->links.v);
	free(b->refs.v);
	free(b->py.v);
	free(b->places.v);
	for (size_t i = 0; i < b->nrefsnaps; i++)
		gg_refsnap_free(&b->refsnaps[i]);
	free(b->refsnaps);
	free(b);
}

int sbx_gitguard_check(const char *const *roots, const struct timespec *since, bool keep,
		       const struct sbx_ctl_path *ctl, const char *const *home_before,
		       const sbx_git_before_t *git_before, sbx_git_report_fn report, void *arg,
		       struct sbx_git_stats *stats)
{
	struct sbx_git_stats local;
	struct gg *g;
	size_t i;
	int rc;

	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -1;
	if (stats == NULL)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	g->since = *since;
	g->keep = keep;
	g->report = report;
	g->arg = arg;
	g->st = stats;
	g->roots = roots;
	g->ctl = ctl;
	g->before = git_before;
	for (i = 0; ctl != NULL && ctl[i].path != NULL; i++)
		g->ctl_first[(unsigned char)ctl[i].path[0]] = true;
	gg_find_git(g);
	/* First: a relative core.hooksPath there applies to every work tree
	 * the walk finds. */
	check_global_configs(g);
	walk_roots(g);
	check_home_entries(g, home_before);
	rc = g->rc;
	gg_listed_free(g);
	gg_py_free(g);
	free(g);
	return rc;
}

