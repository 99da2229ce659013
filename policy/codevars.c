/*
 * codevars.c - the paths an interpreter's or a runtime's option variable
 * makes every later program load code from (policy.h
 * policy_code_options()): PERL5OPT, RUBYOPT, NODE_OPTIONS and the JVM's
 * JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS and _JAVA_OPTIONS, and the program
 * a command variable names (GIT_SSH, EDITOR, PAGER, GIT_EXTERNAL_DIFF,
 * LESSOPEN, ...) (round 35).
 *
 * Each variable is split into words as its reader does (perl and ruby
 * on white space; node with '"' quotes, '\' escaping in them; the JVM
 * with '"' and '\'' quotes), and each option that loads code is read:
 * a file loaded into every run (an agent, a preloaded script) is given
 * with loaded true, a directory or list entry searched for modules
 * (perl's -I, the class path) with loaded false. Empty list entries are
 * skipped, as for the module path variables.
 */
#include "policy/policy.h"

#include "base/attrib.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const policy_code_opt_vars[] = {
	"PERL5OPT", "RUBYOPT", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS",
	/* A program run by path (execvp: the whole value is the file). */
	"GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS",
	/* A command a shell runs (sh -c "$EDITOR file"): its first word. */
	"GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL", "GIT_PAGER", "PAGER",
	"MANPAGER", "SUDO_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "SUDO_EDITOR", "SYSTEMD_EDITOR",
	"SYSTEMD_PAGER", "FCEDIT", "RSYNC_RSH", "LESSOPEN", "LESSCLOSE",
	/* A file run before every program of a runtime: lua's "@file"; the
	 * .NET startup hooks (a ':' list of assemblies, by path or name). */
	"LUA_INIT", "LUA_INIT_5_2", "LUA_INIT_5_3", "LUA_INIT_5_4", "DOTNET_STARTUP_HOOKS", NULL,
};

/* The variables of policy_code_opt_vars that name a program: the first
 * word of a shell command, or the whole value. */
static const char *const exec_vars[] = {"GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS"};
static const char *const shell_vars[] = {"GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR",
					 "VISUAL", "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EXTERNAL_DIFF",
					 "GIT_PROXY_COMMAND", "SUDO_EDITOR", "SYSTEMD_EDITOR", "SYSTEMD_PAGER",
					 "FCEDIT", "RSYNC_RSH", "LESSOPEN", "LESSCLOSE"};

struct copt {
	const char *var;
	policy_code_fn fn;
	void *arg;
};

/* Calls fn with (s, len) and, when ext is not NULL and the last name
 * of s has no '.', with s followed by each of ext's suffixes (the
 * names the reader tries). Its result, or -1 (errno ENOMEM). */
static int emit(const struct copt *c, const char *s, size_t len, bool loaded, const char *const *ext)
{
	const char *base;
	char *p;
	int r;

	if (len == 0)
		return 0;
	p = strndup(s, len);
	if (p == NULL)
		return -1;
	r = c->fn(c->arg, c->var, p, loaded);
	base = strrchr(p, '/');
	base = base != NULL ? base + 1 : p;
	for (size_t i = 0; r == 0 && ext != NULL && ext[i] != NULL && strchr(base, '.') == NULL; i++) {
		size_t el = strlen(ext[i]);
		char *q = malloc(len + el + 1);

		if (q == NULL) {
			r = -1;
			break;
		}
		memcpy(q, p, len);
		memcpy(q + len, ext[i], el + 1);
		r = c->fn(c->arg, c->var, q, loaded);
		free(q);
	}
	free(p);
	return r;
}

/* Each non-empty entry of the sep list s (the JVM's ':', lib.pm's ','). */
static int emit_list(const struct copt *c, const char *s, char sep, bool loaded)
{
	for (;;) {
		const char *e = strchr(s, sep);
		size_t len = e != NULL ? (size_t)(e - s) : strlen(s);
		int r = emit(c, s, len, loaded, NULL);

		if (r != 0 || e == NULL)
			return r;
		s = e + 1;
	}
}

/*
 * Splits val into words in t->v (t->buf holds them). quotes: the quote
 * characters that group (a '\' escapes the next character inside '"').
 * 0, or -1 (ENOMEM).
 */
struct words {
	char *buf;
	char **v;
	size_t n;
};

static int split_words(const char *val, const char *quotes, struct words *t)
{
	size_t len = strlen(val);
	char *w;

	t->n = 0;
	t->buf = malloc(len + 1);
	t->v = malloc((len / 2 + 2) * sizeof(*t->v));
	if (t->buf == NULL || t->v == NULL) {
		free(t->buf);
		free(t->v);
		errno = ENOMEM;
		return -1;
	}
	w = t->buf;
	for (const char *s = val; *s != '\0';) {
		char q = 0;

		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			break;
		t->v[t->n++] = w;
		for (; *s != '\0' && (q != 0 || !isspace((unsigned char)*s)); s++) {
			if (q == 0 && *s != '\0' && strchr(quotes, *s) != NULL) {
				q = *s;
				continue;
			}
			if (q != 0 && *s == q) {
				q = 0;
				continue;
			}
			if (q == '"' && *s == '\\' && s[1] != '\0')
				s++;
			*w++ = *s;
		}
		*w++ = '\0';
	}
	return 0;
}

/*
 * PERL5OPT: perl reads one switch per word, its leading '-' optional
 * (a second switch in the same word is not read): -Idir (no space: "-I
 * dir" is an error) is searched, and -Mlib=a,b (or -mlib=) adds a and b
 * as use lib does. -MModule names a module, found in @INC.
 */
static int perl_opts(const struct copt *c, const struct words *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const char *s = t->v[i] + (t->v[i][0] == '-');
		int r = 0;

		if (s[0] == 'I')
			r = emit(c, s + 1, strlen(s + 1), false, NULL);
		else if ((s[0] == 'M' || s[0] == 'm') && strncmp(s + 1, "lib=", 4) == 0)
			r = emit_list(c, s + 5, ',', false);
		if (r != 0)
			return r;
	}
	return 0;
}

/*
 * RUBYOPT: ruby reads each word as a cluster of switches (the first
 * word's '-' optional): d v w y U take nothing, W and T a level (W:cat
 * the rest), E and K the rest; I and r take the rest of the word or the
 * next one. -I dir is searched; -r feature loads a file when it is a
 * path (./x, ../x, /x, ~/x: x, x.rb or x.so), a bare name is searched
 * in $LOAD_PATH (which holds no "." since ruby 1.9).
 */
static int ruby_opts(const struct copt *c, const struct words *t)
{
	static const char *const ext[] = {".rb", ".so", NULL};

	for (size_t i = 0; i < t->n; i++) {
		const char *s = t->v[i];

		if (s[0] == '-')
			s++;
		else if (i > 0)
			continue;
		if (s[0] == '-')
			continue; /* --enable=..., --disable=... */
		while (*s != '\0') {
			char o = *s++;
			const char *a;
			int r;

			if (strchr("dvwyU", o) != NULL)
				continue;
			if (o == 'W' && *s == ':')
				break;
			if (o == 'W' || o == 'T') {
				while (isdigit((unsigned char)*s))
					s++;
				continue;
			}
			if (o != 'I' && o != 'r')
				break;
			a = *s != '\0' ? s : i + 1 < t->n ? t->v[++i] : "";
			if (o == 'I')
				r = emit(c, a, strlen(a), false, NULL);
			else if (a[0] == '/' || a[0] == '~' || strncmp(a, "./", 2) == 0 || strncmp(a, "../", 3) == 0)
				r = emit(c, a, strlen(a), true, ext);
			else
				r = 0;
			if (r != 0)
				return r;
			break;
		}
	}
	return 0;
}

/*
 * A file: URL's path (after "file://": "/x" or "localhost/x"), its %XX
 * decoded, as a file loaded: yarn's PnP puts its ESM loader in
 * NODE_OPTIONS so (--experimental-loader file:///PROJECT/.pnp.loader.mjs)
 * for every script `yarn run` starts. Another host than localhost is
 * passed as it is (not absolute: refused).
 */
static int emit_file_url(const struct copt *c, const char *u)
{
	size_t n = strlen(u), k = 0;
	char *p;
	int r;

	if (strncmp(u, "localhost/", 10) == 0)
		u += 9, n -= 9;
	p = malloc(n + 1);
	if (p == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (u[i] == '%' && isxdigit((unsigned char)u[i + 1]) && isxdigit((unsigned char)u[i + 2])) {
			char hex[3] = {u[i + 1], u[i + 2], '\0'};

			p[k++] = (char)strtol(hex, NULL, 16);
			i += 2;
		} else {
			p[k++] = u[i];
		}
	}
	r = emit(c, p, k, true, NULL);
	free(p);
	return r;
}

/*
 * NODE_OPTIONS: the modules loaded before every script (--require, -r,
 * --import, --loader, --experimental-loader: a value that is not
 * absolute is resolved from the working directory, a bare name in its
 * node_modules; x, x.js, x.cjs, x.mjs, x.json, x.node are tried), and the
 * files read at start that load code (--openssl-config: an engine or a
 * provider; --snapshot-blob). "--opt value", "--opt=value", "-rvalue".
 * A file: URL is read as its path; data: and node: name no file.
 */
static int node_opts(const struct copt *c, const struct words *t)
{
	static const char *const mods[] = {"--require", "-r", "--import", "--loader", "--experimental-loader"};
	static const char *const files[] = {"--openssl-config", "--snapshot-blob"};
	static const char *const ext[] = {".js", ".cjs", ".mjs", ".json", ".node", NULL};

	for (size_t i = 0; i < t->n; i++) {
		const char *s = t->v[i], *a = NULL;
		bool mod = false;

		for (size_t k = 0; k < ARRAY_LEN(mods) + ARRAY_LEN(files) && a == NULL; k++) {
			const char *o = k < ARRAY_LEN(mods) ? mods[k] : files[k - ARRAY_LEN(mods)];
			size_t ol = strlen(o);

			if (strncmp(s, o, ol) != 0)
				continue;
			if (s[ol] == '\0' && i + 1 < t->n)
				a = t->v[++i];
			else if (s[ol] == '=')
				a = s + ol + 1;
			else if (ol == 2 && s[ol] != '\0')
				a = s + ol; /* -r./x */
			mod = k < ARRAY_LEN(mods);
		}
		if (a != NULL) {
			/* An empty value is not "."; named for the refusal. */
			int r = a[0] == '\0' ? c->fn(c->arg, c->var, "", true)
				: strncmp(a, "file://", 7) == 0 ? emit_file_url(c, a + 7)
				: strncmp(a, "data:", 5) == 0 || strncmp(a, "node:", 5) == 0
				    ? 0
				    : emit(c, a, strlen(a), true, mod && a[0] == '/' ? ext : NULL);

			if (r != 0)
				return r;
		}
	}
	return 0;
}

/*
 * The JVM's three variables (JAVA_TOOL_OPTIONS and _JAVA_OPTIONS read by
 * every JVM, JDK_JAVA_OPTIONS by the java launcher): the agents loaded
 * into every JVM (-javaagent:jar[=options], -agentpath:lib[=options]),
 * the files of more options (-XX:VMOptionsFile=, -XX:Flags=, @argfile),
 * and the class, module and library paths (-cp, -classpath,
 * --class-path, -p, --module-path, --upgrade-module-path,
 * --patch-module m=list, -Xbootclasspath[/a|/p]:, -Djava.class.path=,
 * -Djava.library.path=, -Djava.ext.dirs=, -Djava.endorsed.dirs=).
 */
static int java_opts(const struct copt *c, const struct words *t)
{
	static const char *const agents[] = {"-javaagent:", "-agentpath:"};
	static const char *const files[] = {"-XX:VMOptionsFile=", "-XX:Flags="};
	static const char *const lists[] = {"-Xbootclasspath/a:", "-Xbootclasspath/p:", "-Xbootclasspath:",
					    "-Djava.class.path=", "-Djava.library.path=", "-Djava.ext.dirs=",
					    "-Djava.endorsed.dirs=", "--class-path=", "--module-path=",
					    "--upgrade-module-path=", "--patch-module="};
	static const char *const next[] = {"-cp", "-classpath", "--class-path", "-p", "--module-path",
					   "--upgrade-module-path", "--patch-module"};

	for (size_t i = 0; i < t->n; i++) {
		const char *s = t->v[i], *a = NULL;
		bool patch = false;
		int r = 0;

		for (size_t k = 0; k < ARRAY_LEN(agents); k++)
			if (strncmp(s, agents[k], strlen(agents[k])) == 0) {
				a = s + strlen(agents[k]);
				r = emit(c, a, strcspn(a, "="), true, NULL);
			}
		for (size_t k = 0; k < ARRAY_LEN(files); k++)
			if (strncmp(s, files[k], strlen(files[k])) == 0)
				r = emit(c, s + strlen(files[k]), strlen(s + strlen(files[k])), true, NULL);
		if (s[0] == '@')
			r = emit(c, s + 1, strlen(s + 1), true, NULL);
		for (size_t k = 0; k < ARRAY_LEN(lists) && a == NULL; k++)
			if (strncmp(s, lists[k], strlen(lists[k])) == 0) {
				a = s + strlen(lists[k]);
				patch = strcmp(lists[k], "--patch-module=") == 0;
			}
		for (size_t k = 0; k < ARRAY_LEN(next) && a == NULL; k++)
			if (strcmp(s, next[k]) == 0 && i + 1 < t->n) {
				a = t->v[++i];
				patch = strcmp(next[k], "--patch-module") == 0;
			}
		if (r == 0 && a != NULL && strncmp(s, "-javaagent:", 11) != 0 && strncmp(s, "-agentpath:", 11) != 0) {
			if (patch)
				a = strchr(a, '=') != NULL ? strchr(a, '=') + 1 : "";
			r = emit_list(c, a, ':', false);
		}
		if (r != 0)
			return r;
	}
	return 0;
}

/*
 * The program a command variable runs, when it is named by a path (with
 * a '/'): a bare name is looked for in PATH, whose directories are
 * protected already; "~/x" is in the home (a shell expands it), which
 * is not writable unless a tree holds it, and then its bin and dot
 * entries are protected (not read here). Read as a file loaded.
 */
static int command_opt(const struct copt *c, const char *val, bool shell)
{
	struct words t;
	const char *w = val;
	int r = 0;

	if (shell) {
		if (split_words(val, "\"'", &t) < 0)
			return -1;
		w = t.n > 0 ? t.v[0] : "";
	}
	if (strchr(w, '/') != NULL && w[0] != '~')
		r = emit(c, w, strlen(w), true, NULL);
	if (shell) {
		free(t.buf);
		free(t.v);
	}
	return r;
}

int policy_code_options(const char *var, const char *val, policy_code_fn fn, void *arg)
{
	struct copt c = {.var = var, .fn = fn, .arg = arg};
	bool node = strcmp(var, "NODE_OPTIONS") == 0;
	bool java = strstr(var, "JAVA_") != NULL;
	struct words t;
	int r;

	for (size_t i = 0; i < ARRAY_LEN(exec_vars); i++)
		if (strcmp(var, exec_vars[i]) == 0)
			return command_opt(&c, val, false);
	/* lua runs LUA_INIT's "@file" before every chunk, its other values
	 * are code themselves (and name no file). */
	if (strncmp(var, "LUA_INIT", 8) == 0)
		return val[0] == '@' ? emit(&c, val + 1, strlen(val + 1), true, NULL) : 0;
	/* Every .NET program loads each hook, a path (with a '/') or an
	 * assembly's name (looked for beside the program). */
	if (strcmp(var, "DOTNET_STARTUP_HOOKS") == 0) {
		for (const char *e = val;;) {
			size_t len = strcspn(e, ":");

			if (memchr(e, '/', len) != NULL && (r = emit(&c, e, len, true, NULL)) != 0)
				return r;
			if (e[len] == '\0')
				return 0;
			e += len + 1;
		}
	}
	/* less's input preprocessor: "|cmd %s", "||cmd %s", "|-cmd %s". */
	if (strcmp(var, "LESSOPEN") == 0)
		val += strspn(val, "|-");
	for (size_t i = 0; i < ARRAY_LEN(shell_vars); i++)
		if (strcmp(var, shell_vars[i]) == 0)
			return command_opt(&c, val, true);
	if (split_words(val, node ? "\"" : java ? "\"'" : "", &t) < 0)
		return -1;
	if (strcmp(var, "PERL5OPT") == 0)
		r = perl_opts(&c, &t);
	else if (strcmp(var, "RUBYOPT") == 0)
		r = ruby_opts(&c, &t);
	else if (node)
		r = node_opts(&c, &t);
	else if (java)
		r = java_opts(&c, &t);
	else
		r = 0;
	free(t.buf);
	free(t.v);
	return r;
}
