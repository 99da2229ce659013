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
#include "base/envnames.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The variables of env_code_opt_vars that name a program: the first
 * word of a shell command, or the whole value. */
static const char *const exec_vars[] = {"GIT_SSH",
					"GIT_ASKPASS",
					"SSH_ASKPASS",
					"SUDO_ASKPASS",
					"RUSTC_WRAPPER",
					"RUSTC_WORKSPACE_WRAPPER",
					"CARGO_BUILD_RUSTC_WRAPPER",
					"CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
					"RUSTC",
					"RUSTDOC",
					"CARGO_BUILD_RUSTC",
					"CARGO_BUILD_RUSTDOC",
					/* round 38: cargo's linkers (run by path, a
					 * relative one with a '/' from the working
					 * directory; CARGO_TARGET_<triple>_LINKER) */
					"CARGO_HOST_LINKER",
					/* round 43: the program erlexec runs as the
					 * emulator of a detached node */
					"CERL_DETACHED_PROG",
					/* round 44: the dotnet the .NET SDK and
					 * MSBuild run tasks and tools with */
					"DOTNET_HOST_PATH"};
static const char *const shell_vars[] = {"GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR",
					 "VISUAL", "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EXTERNAL_DIFF",
					 "GIT_PROXY_COMMAND", "SUDO_EDITOR", "SYSTEMD_EDITOR", "SYSTEMD_PAGER",
					 "FCEDIT", "RSYNC_RSH", "LESSOPEN", "LESSCLOSE", "PROMPT_COMMAND",
					 /* round 37: the build tools */
					 "CC", "CXX", "CPP", "LD", "AR", "AS", "NM", "RANLIB", "STRIP", "OBJCOPY",
					 "OBJDUMP", "READELF", "FC", "F77", "HOSTCC", "HOSTCXX", "HOSTLD", "CC_FOR_BUILD",
					 "CXX_FOR_BUILD", "CPP_FOR_BUILD", "PKG_CONFIG", "YACC", "LEX", "CUDAHOSTCXX",
					 "CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER",
					 "CMAKE_C_LINKER_LAUNCHER", "CMAKE_CXX_LINKER_LAUNCHER", "CCACHE_PREFIX",
					 "CCACHE_PREFIX_CPP", "CCACHE_COMPILER", "CCACHE_COMPILERCHECK",
					 /* round 38 */
					 "CUDACXX", "HIPCXX", "OBJC", "OBJCXX"};
/* The prompts of bash (PS0, PS1, PS2, PS4: PS4 at every `set -x` line)
 * and zsh (PROMPT, RPROMPT, RPS1, RPS2, with PROMPT_SUBST), whose
 * command substitutions the shell runs at each prompt it shows. */
static const char *const prompt_vars[] = {"PS0", "PS1", "PS2", "PS4", "PROMPT", "RPROMPT", "RPS1", "RPS2"};
/* One file loaded whole, read from the working directory when relative
 * (cmake's toolchain file from the build directory, then the source's;
 * "~" is not expanded): every value not absolute is given. */
static const char *const file_vars[] = {"CMAKE_TOOLCHAIN_FILE",       "CORECLR_PROFILER_PATH",
					"CORECLR_PROFILER_PATH_32",   "CORECLR_PROFILER_PATH_64",
					"CORECLR_PROFILER_PATH_ARM32", "CORECLR_PROFILER_PATH_ARM64",
					"COR_PROFILER_PATH",          "COR_PROFILER_PATH_32",
					"COR_PROFILER_PATH_64",       "PKCS11_MODULE_PATH",
					"PKCS11_PROVIDER_MODULE",     "GDK_PIXBUF_MODULE_FILE",
					/* round 38: node's REPL loads it in its place
					 * (a bare name from node_modules of the working
					 * directory and each one above) */
					"NODE_REPL_EXTERNAL_MODULE",
					/* round 42: mix's project file (Elixir code run
					 * by every mix, from the working directory when
					 * relative) */
					"MIX_EXS",
					/* round 43: stack's user and global
					 * configuration (the GHC, the programs and
					 * the package indexes every stack build
					 * uses) */
					"STACK_CONFIG", "STACK_GLOBAL_CONFIG",
					/* round 44: findlib's configuration (its
					 * programs and package path), the MSBuild the
					 * SDK runs, MSBuild's import files (environment
					 * variables are its properties) */
					"OCAMLFIND_CONF", "MSBUILD_EXE_PATH",
					"CustomBeforeMicrosoftCommonTargets", "CustomAfterMicrosoftCommonTargets",
					"CustomBeforeMicrosoftCommonProps", "CustomAfterMicrosoftCommonProps",
					"CustomBeforeMicrosoftCSharpTargets", "CustomAfterMicrosoftCSharpTargets",
					"DirectoryBuildPropsPath", "DirectoryBuildTargetsPath",
					"DirectoryPackagesPropsPath"};
/* A program and its arguments split on white space, as cargo reads a
 * runner, a credential provider or doc.browser (round 38: the value of
 * CARGO_TARGET_<triple>_RUNNER, CARGO_REGISTRIES_<name>_CREDENTIAL_PROVIDER,
 * CARGO_CREDENTIAL_ALIAS_<name>): no shell, no "~" expanded; a program
 * with a '/' from the working directory, a precommand's or an
 * interpreter's words read as program_words() reads them ("sudo -E",
 * "python3 ./run.py"). cargo's own providers ("cargo:token") name none. */
static const char *const argv_vars[] = {"CARGO_REGISTRY_CREDENTIAL_PROVIDER", "CARGO_DOC_BROWSER",
					/* round 43: the emulator erlc and escript
					 * start (a program's path; older releases
					 * split it into words) */
					"ERLC_EMULATOR", "ESCRIPT_EMULATOR"};

struct copt {
	const char *var;
	policy_code_fn fn;
	void *arg;
	unsigned *nest; /* precommands nested (precmd_words()) */
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

/* Room in t for the words of val (none yet). 0, or -1 (ENOMEM). */
static int words_alloc(const char *val, struct words *t)
{
	size_t len = strlen(val);

	t->n = 0;
	t->buf = malloc(len + 1);
	t->v = malloc((len / 2 + 2) * sizeof(*t->v));
	if (t->buf == NULL || t->v == NULL) {
		free(t->buf);
		free(t->v);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static int split_words(const char *val, const char *quotes, struct words *t)
{
	char *w;

	if (words_alloc(val, t) < 0)
		return -1;
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
 * provider; --snapshot-blob; round 41: --env-file, whose NODE_OPTIONS
 * node applies; round 44: --experimental-config-file, whose nodeOptions
 * node applies, and --experimental-default-config-file's
 * node.config.json, and the module --test-global-setup runs). Round 41: bun's (BUN_OPTIONS, read as these): its
 * --preload modules and --config (round 42: and -c), the bunfig.toml
 * whose preload runs.
 * "--opt value", "--opt=value", "-rvalue".
 * A file: URL is read as its path; data: and node: name no file.
 */
static int code_literals(const struct copt *c, const char *code);

static int node_opts(const struct copt *c, const struct words *t)
{
	static const char *const mods[] = {"--require", "-r", "--import", "--loader", "--experimental-loader",
					   "--preload", "--test-global-setup"};
	static const char *const files[] = {"--openssl-config", "--snapshot-blob", "--env-file",
					    "--env-file-if-exists", "--config", "--experimental-config-file"};
	static const char *const ext[] = {".js", ".cjs", ".mjs", ".json", ".node", NULL};
	bool bun = strcmp(c->var, "BUN_OPTIONS") == 0;

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
		/* Round 42: bun's -c is its --config (node's -c, --check,
		 * takes no value and is not allowed in NODE_OPTIONS) */
		if (a == NULL && bun && strncmp(s, "-c", 2) == 0)
			a = s[2] == '=' ? s + 3 : s[2] != '\0' ? s + 2 : i + 1 < t->n ? t->v[++i] : NULL;
		/* Round 43: bun's -e/--eval and -p/--print run their code in
		 * every bun (node allows neither in NODE_OPTIONS): the files
		 * it names (code_literals()) */
		if (a == NULL && bun) {
			static const char *const evals[] = {"--eval", "--print", "-e", "-p"};
			const char *code = NULL;

			for (size_t k = 0; k < ARRAY_LEN(evals) && code == NULL; k++) {
				size_t ol = strlen(evals[k]);

				if (strncmp(s, evals[k], ol) != 0)
					continue;
				code = s[ol] == '=' ? s + ol + 1
				       : s[ol] != '\0' ? (ol == 2 ? s + ol : NULL)
				       : i + 1 < t->n ? t->v[++i]
						      : NULL;
			}
			if (code != NULL) {
				int r = code_literals(c, code);

				if (r != 0)
					return r;
				continue;
			}
		}
		/* Round 44: node reads node.config.json of the working
		 * directory (its nodeOptions: --import, --require) */
		if (a == NULL && strcmp(s, "--experimental-default-config-file") == 0) {
			int r = emit(c, "node.config.json", 16, true, NULL);

			if (r != 0)
				return r;
			continue;
		}
		/* Round 43: node's (and bun's) --test-reporter loads a module
		 * (but for node's own reporters) into every `node --test` */
		if (a == NULL && strncmp(s, "--test-reporter", 15) == 0 && (s[15] == '\0' || s[15] == '=')) {
			static const char *const own[] = {"spec", "tap", "dot", "junit", "lcov"};
			const char *m = s[15] == '=' ? s + 16 : i + 1 < t->n ? t->v[++i] : NULL;
			bool builtin = false;

			for (size_t k = 0; m != NULL && k < ARRAY_LEN(own); k++)
				builtin = builtin || strcmp(m, own[k]) == 0;
			if (m != NULL && !builtin && m[0] != '\0') {
				a = m;
				mod = true;
			}
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

/* How command_opt() reads a value: the whole value one program (run
 * by execvp: "~" is not expanded), or shell commands; of these, in a
 * prompt (PS1, ...) only the command substitutions run, in make's text
 * a leading "shell" word is make's and include's words are files. */
enum cmd_kind { CMD_EXEC, CMD_SHELL, CMD_PROMPT, CMD_MAKE };
static int command_opt(const struct copt *c, const char *val, enum cmd_kind k);

/*
 * The JVM's three variables (JAVA_TOOL_OPTIONS and _JAVA_OPTIONS read by
 * every JVM, JDK_JAVA_OPTIONS by the java launcher): the agents loaded
 * into every JVM (-javaagent:jar[=options], -agentpath:lib[=options]),
 * the files of more options (-XX:VMOptionsFile=, -XX:Flags=, @argfile),
 * and the class, module and library paths (-cp, -classpath,
 * --class-path, -p, --module-path, --upgrade-module-path,
 * --patch-module m=list, -Xbootclasspath[/a|/p]:, -Djava.class.path=,
 * -Djava.library.path=, -Djava.ext.dirs=, -Djava.endorsed.dirs=).
 * Round 40: the homes of code a JVM tool takes from a property (gradle's
 * user home: init.d/; sbt's global base, boot directory and ivy home;
 * coursier's cache; maven's local repository and home; tomcat's
 * catalina.home and .base: lib/ and conf/), loaded, as the homes of
 * env_startup_vars; gradle's JDK (org.gradle.java.home: its bin/java);
 * gradle's org.gradle.jvmargs, the daemon's own JVM options, read as
 * these. Generic (a launcher's variable known by its name's end only,
 * "_OPTS"): only what a JVM reads, none of maven's and ant's words nor
 * java's -p, so that SSH_OPTS="-p 2222" or RSYNC_OPTS="-s" names nothing.
 */
static int java_opts_at(const struct copt *c, const struct words *t, bool generic, unsigned depth)
{
	static const char *const homes[] = {"-Dgradle.user.home=", "-Dsbt.global.base=", "-Dsbt.boot.directory=",
					    "-Dsbt.ivy.home=", "-Divy.home=", "-Dsbt.coursier.home=",
					    "-Dcoursier.cache=", "-Dmaven.repo.local=", "-Dmaven.home=",
					    "-Dcatalina.home=", "-Dcatalina.base="};
	static const char *const agents[] = {"-javaagent:", "-agentpath:"};
	static const char *const files[] = {"-XX:VMOptionsFile=", "-XX:Flags="};
	static const char *const libs[] = {"-agentlib:", "-Xrun"};
	static const char *const cmds[] = {"-XX:OnError=", "-XX:OnOutOfMemoryError="};
	static const char *const lists[] = {"-Xbootclasspath/a:", "-Xbootclasspath/p:", "-Xbootclasspath:",
					    "-Djava.class.path=", "-Djava.library.path=", "-Djava.ext.dirs=",
					    "-Djava.endorsed.dirs=", "--class-path=", "--module-path=",
					    "--upgrade-module-path=", "--patch-module=",
					    /* round 39: maven's extensions */
					    "-Dmaven.ext.class.path=",
					    /* review of round 39: MAVEN_ARGS's (not generic) */
					    "--settings=", "--global-settings=", "--toolchains="};
	size_t nlists = ARRAY_LEN(lists) - (generic ? 3 : 0);
	static const char *const next[] = {"-cp", "-classpath", "--class-path", "-p", "--module-path",
					   "--upgrade-module-path", "--patch-module",
					   /* review of round 39: MAVEN_ARGS's settings
					    * and toolchains files (a settings file names
					    * the local repository plugins load from),
					    * ANT_ARGS's -lib (jars loaded): no JVM
					    * option is so spelt */
					   "-s", "--settings", "-gs", "--global-settings", "-t", "--toolchains",
					   "-lib"};
	/* generic: -cp, -classpath, --class-path, then no -p nor the
	 * launchers' words */
	size_t nnext = generic ? 3 : ARRAY_LEN(next);

	if (depth > 2)
		return 0;
	for (size_t i = 0; i < t->n; i++) {
		const char *s = t->v[i], *a = NULL;
		bool patch = false;
		int r = 0;

		for (size_t k = 0; k < ARRAY_LEN(agents); k++)
			if (strncmp(s, agents[k], strlen(agents[k])) == 0) {
				a = s + strlen(agents[k]);
				r = emit(c, a, strcspn(a, "="), true, NULL);
			}
		/* -agentlib:NAME and -XrunNAME: the JVM loads libNAME.so from its
		 * own directory, then dlopen()s "libNAME.so" itself, which with
		 * a '/' in NAME is a path from the working directory
		 * (-agentlib:../x is ./lib../x.so). */
		for (size_t k = 0; k < ARRAY_LEN(libs); k++)
			if (strncmp(s, libs[k], strlen(libs[k])) == 0) {
				const char *n = s + strlen(libs[k]);
				size_t nl = strcspn(n, "=");
				char lib[PATH_MAX];

				if (memchr(n, '/', nl) != NULL && nl + 7 < sizeof(lib)) {
					(void)snprintf(lib, sizeof(lib), "lib%.*s.so", (int)nl, n);
					r = emit(c, lib, strlen(lib), true, NULL);
				}
			}
		/* The commands the JVM runs with /bin/sh on a crash or an
		 * OutOfMemoryError, ';' separated. */
		for (size_t k = 0; k < ARRAY_LEN(cmds) && r == 0; k++)
			if (strncmp(s, cmds[k], strlen(cmds[k])) == 0)
				r = command_opt(c, s + strlen(cmds[k]), CMD_SHELL);
		for (size_t k = 0; k < ARRAY_LEN(files); k++)
			if (strncmp(s, files[k], strlen(files[k])) == 0)
				r = emit(c, s + strlen(files[k]), strlen(s + strlen(files[k])), true, NULL);
		/* an @argfile: the java launcher reads one on its command
		 * line, where every start script puts <NAME>_OPTS; generic,
		 * only an absolute one ("@scope/pkg" is npm's, an
		 * application's own variable's: review of round 40) */
		if (s[0] == '@' && (!generic || s[1] == '/'))
			r = emit(c, s + 1, strlen(s + 1), true, NULL);
		for (size_t k = 0; k < ARRAY_LEN(homes) && r == 0; k++)
			if (strncmp(s, homes[k], strlen(homes[k])) == 0)
				r = emit(c, s + strlen(homes[k]), strlen(s + strlen(homes[k])), true, NULL);
		if (r == 0 && strncmp(s, "-Dorg.gradle.java.home=", 23) == 0 && s[23] != '\0') {
			char *java;

			if (asprintf(&java, "%s/bin/java", s + 23) < 0)
				return -1;
			r = emit(c, java, strlen(java), true, NULL);
			free(java);
		}
		if (r == 0 && strncmp(s, "-Dorg.gradle.jvmargs=", 21) == 0) {
			struct words sub;

			if (split_words(s + 21, "\"'", &sub) < 0)
				return -1;
			r = java_opts_at(c, &sub, true, depth + 1);
			free(sub.buf);
			free(sub.v);
		}
		for (size_t k = 0; k < nlists && a == NULL; k++)
			if (strncmp(s, lists[k], strlen(lists[k])) == 0) {
				a = s + strlen(lists[k]);
				patch = strcmp(lists[k], "--patch-module=") == 0;
			}
		for (size_t k = 0; k < nnext && a == NULL; k++)
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
 * ssh's arguments (t->v[i...]) that make it run or load something
 * (GIT_SSH_COMMAND="ssh -F ./ssh_config", RSYNC_RSH, -o ProxyCommand):
 * the config file of -F (read from the working directory when
 * relative: its ProxyCommand or Match exec runs), the PKCS#11 library of
 * -I, and of -o, the commands of ProxyCommand, LocalCommand and
 * KnownHostsCommand and the libraries of PKCS11Provider and
 * SecurityKeyProvider ("none" and "internal" name none).
 */
static int ssh_args(const struct copt *c, const struct words *t, size_t i)
{
	static const char *const cmds[] = {"ProxyCommand", "LocalCommand", "KnownHostsCommand"};
	static const char *const libs[] = {"PKCS11Provider", "SecurityKeyProvider"};
	int r = 0;

	for (; i < t->n && r == 0; i++) {
		const char *w = t->v[i], *a;
		char o;

		if (w[0] != '-' || (o = w[1]) == '\0' || strchr("FIo", o) == NULL)
			continue;
		a = w[2] != '\0' ? w + 2 : i + 1 < t->n ? t->v[++i] : "";
		if (o != 'o') {
			if (strcmp(a, "none") != 0)
				r = emit(c, a, strlen(a), true, NULL);
			continue;
		}
		for (size_t k = 0; k < ARRAY_LEN(cmds) + ARRAY_LEN(libs) && r == 0; k++) {
			const char *key = k < ARRAY_LEN(cmds) ? cmds[k] : libs[k - ARRAY_LEN(cmds)];
			size_t kl = strlen(key);
			const char *v = a + kl;

			if (strncasecmp(a, key, kl) != 0 || (*v != '=' && *v != ' ' && *v != '\t'))
				continue;
			v += strspn(v, " \t=");
			if (strcmp(v, "none") == 0 || strcmp(v, "internal") == 0)
				continue;
			r = k < ARRAY_LEN(cmds) ? command_opt(c, v, CMD_SHELL) : emit(c, v, strlen(v), true, NULL);
		}
	}
	return r;
}

/* Whether w (its last name) is one of the n words of set. */
static bool word_in(const char *w, const char *const *set, size_t n)
{
	const char *base = strrchr(w, '/');

	base = base != NULL ? base + 1 : w;
	for (size_t i = 0; i < n; i++)
		if (strcmp(base, set[i]) == 0)
			return true;
	return false;
}

/*
 * python -c CODE (without -I or -P): each module CODE imports ("import
 * a.b, c as d", "from e import f") is looked for first in the working
 * directory, as -m's: given as "./TOP.py". sys and builtins are
 * python's own (never read from a file); a relative "from . import" is
 * none.
 */
static int py_imports(const struct copt *c, const char *code)
{
	static const char *const own[] = {"sys", "builtins"};

	for (const char *s = code; *s != '\0'; s++) {
		bool from = strncmp(s, "from", 4) == 0, imp = strncmp(s, "import", 6) == 0;
		const char *n;

		if ((!from && !imp) || (s > code && (isalnum((unsigned char)s[-1]) || s[-1] == '_' || s[-1] == '.')))
			continue;
		n = s + (from ? 4 : 6);
		if (*n != ' ' && *n != '\t')
			continue;
		for (;;) {
			size_t len;
			char mod[256];
			bool skip = false;
			int r;

			n += strspn(n, " \t(");
			len = strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
			for (size_t k = 0; k < ARRAY_LEN(own); k++)
				skip = skip || (strlen(own[k]) == len && strncmp(n, own[k], len) == 0);
			if (len > 0 && len < 200 && !skip) {
				(void)snprintf(mod, sizeof(mod), "./%.*s.py", (int)len, n);
				if ((r = emit(c, mod, strlen(mod), true, NULL)) != 0)
					return r;
			}
			if (from) {
				/* the names after its "import" are not modules */
				const char *im = strstr(n, "import");

				if (im == NULL)
					return 0;
				s = im + 5;
				break;
			}
			/* import a.b as c, d: past "a.b as c" to the ',' */
			n += len;
			n += strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_. \t");
			if (*n != ',')
				break;
			n++;
		}
	}
	return 0;
}

/*
 * An interpreter's inline code (python -c, node -e, perl -e, ruby -e,
 * php -r, lua -e; round 37's review): the files it names by a quoted
 * literal (' " `) that reads or runs code (exec(open("e.py").read()),
 * require("./ed"), do "./x", load "x.rb", include "x.php",
 * dofile("x.lua"), os.system("./x")): a literal with a '/' or a code
 * file's suffix, or after a word that loads or runs one. A literal
 * with white space is text, not a file.
 */
static int code_literals(const struct copt *c, const char *code)
{
	static const char *const sfx[] = {".py", ".pyc", ".js", ".mjs", ".cjs", ".node", ".pl", ".pm", ".rb", ".so",
					  ".lua", ".php", ".sh", ".R", ".tcl", ".erl", ".beam", ".exs", ".ez"};
	static const char *const loaders[] = {"require", "require_relative", "load", "import", "__import__",
					      "import_module", "run_path", "run_module", "dofile", "loadfile", "do",
					      "include", "include_once", "require_once", "source", "system", "popen",
					      "exec", "execfile", "spawn", "execSync", "execFile", "spawnSync", "Popen",
					      "call", "run", "check_call", "check_output", "execv", "execvp", "execl",
					      "execlp"};

	for (const char *s = code; *s != '\0'; s++) {
		const char *e, *b = s;
		size_t len;
		bool emit_it = false;

		if (*s != '\'' && *s != '"' && *s != '`')
			continue;
		for (e = s + 1; *e != '\0' && *e != *s; e++)
			if (*e == '\\' && e[1] != '\0')
				e++;
		if (*e == '\0')
			return 0;
		len = (size_t)(e - s - 1);
		/* the word before the literal: past blanks, '(' and '[' */
		while (b > code && strchr(" \t([", b[-1]) != NULL)
			b--;
		for (size_t k = 0; k < ARRAY_LEN(loaders) && !emit_it; k++) {
			size_t kl = strlen(loaders[k]);

			emit_it = (size_t)(b - code) >= kl && strncmp(b - kl, loaders[k], kl) == 0 &&
				  (b - kl == code || !(isalnum((unsigned char)b[-kl - 1]) || b[-kl - 1] == '_'));
		}
		emit_it = emit_it || memchr(s + 1, '/', len) != NULL;
		for (size_t k = 0; k < ARRAY_LEN(sfx) && !emit_it; k++)
			emit_it = len > strlen(sfx[k]) && strncmp(e - strlen(sfx[k]), sfx[k], strlen(sfx[k])) == 0;
		for (size_t k = 0; k < len && emit_it; k++)
			emit_it = !isspace((unsigned char)s[1 + k]);
		if (emit_it && len > 0) {
			int r = emit(c, s + 1, len, true, NULL);

			if (r != 0)
				return r;
		}
		s = e;
	}
	return 0;
}

/*
 * One cluster of python's short options at t->v[*i] (round 37): -W and
 * -X take an argument (attached or the next word, not the script), -I
 * and -P keep the working directory off sys.path (safe), -c runs inline
 * code, and -m MOD runs a module python looks for first in the working
 * directory (sys.path[0] is "" with -m and -c): without -I or -P,
 * EDITOR="python3 -m myeditor" runs ./myeditor.py of whatever directory
 * git starts the editor in, so MOD's top name is given as "./TOP.py"
 * (a file loaded, relative: `run` refuses); -c's code, the same for
 * each module it imports (py_imports()). 1: go on; 0 or fn's result:
 * done.
 */
static int py_cluster(const struct copt *c, const struct words *t, size_t *i, bool *safe)
{
	for (const char *o = t->v[*i] + 1; *o != '\0'; o++) {
		const char *a;
		char mod[256];

		if (*o == 'I' || *o == 'P')
			*safe = true;
		if (*o != 'W' && *o != 'X' && *o != 'm' && *o != 'c')
			continue;
		a = o[1] != '\0' ? o + 1 : *i + 1 < t->n ? t->v[++*i] : "";
		if (*o == 'c') {
			int r = *safe ? 0 : py_imports(c, a);

			return r != 0 ? r : code_literals(c, a);
		}
		if (*o != 'm')
			return 1;
		if (*safe || a[0] == '\0')
			return 0;
		(void)snprintf(mod, sizeof(mod), "./%.*s.py", (int)(strcspn(a, ".") > 200 ? 200 : strcspn(a, ".")), a);
		return emit(c, mod, strlen(mod), true, NULL);
	}
	return 1;
}

/*
 * One option of node or ruby at t->v[*i] (round 37) that takes an
 * argument, which is not the script: node's --require, -r, --import,
 * --loader, --experimental-loader (the module, read as NODE_OPTIONS'
 * are: node_opts()), -C, --conditions, --title, --input-type; ruby's -r
 * and -I (ruby_opts()) and -C (a directory). EDITOR="node -r
 * /usr/lib/x.js ./ed.js" read /usr/lib/x.js as the script, not ./ed.js.
 * 1: go on (*i past what it took); 0: inline code, no script (-e, -p,
 * --eval, --print); or fn's result.
 */
static int interp_opt(const struct copt *c, const struct words *t, size_t *i, bool rb)
{
	/* round 44: and the files node_opts() reads (--snapshot-blob's
	 * start-up snapshot, --experimental-config-file's options, the
	 * global setup module of `node --test`) */
	static const char *const js_mod[] = {"--require", "-r", "--import", "--loader", "--experimental-loader",
					     "--snapshot-blob", "--experimental-config-file", "--test-global-setup",
					     "--env-file", "--env-file-if-exists", "--openssl-config", "--test-reporter"};
	static const char *const js_arg[] = {"-C", "--conditions", "--title", "--input-type"};
	static const char *const js_inline[] = {"-e", "--eval", "-p", "--print"};
	const char *w = t->v[*i];
	bool mod = false, arg = false;
	struct words one;
	int r;

	if (!rb) {
		for (size_t k = 0; k < ARRAY_LEN(js_inline); k++)
			if (strcmp(w, js_inline[k]) == 0)
				return 0;
		for (size_t k = 0; k < ARRAY_LEN(js_mod); k++) {
			size_t l = strlen(js_mod[k]);

			if (strncmp(w, js_mod[k], l) == 0 && (w[l] == '\0' || w[l] == '=' || l == 2))
				mod = true, arg = w[l] == '\0';
		}
		for (size_t k = 0; k < ARRAY_LEN(js_arg); k++)
			arg = arg || strcmp(w, js_arg[k]) == 0;
	} else {
		if (strcmp(w, "-e") == 0)
			return 0;
		mod = w[1] == 'r' || w[1] == 'I';
		arg = strcmp(w, "-r") == 0 || strcmp(w, "-I") == 0 || strcmp(w, "-C") == 0;
	}
	one.buf = NULL;
	one.v = (char **)&t->v[*i];
	one.n = arg && *i + 1 < t->n ? 2 : 1;
	r = mod ? (rb ? ruby_opts(c, &one) : node_opts(c, &one)) : 0;
	if (arg && *i + 1 < t->n)
		++*i;
	return r != 0 ? r : 1;
}

/*
 * A shell's or an interpreter's arguments (t->v[i...]): the script it
 * reads, its first word not an option, is a file loaded (from the
 * working directory when relative, even without a '/': `bash x` reads
 * ./x); a shell's -c string (also in a cluster: -lc, -ec) is a command
 * line read as one; an interpreter's code given inline (-e, -E, -m,
 * --eval, -p, "-"; python's -c, py_cluster()) names no file here. Round
 * 38: perl's -c compiles the script, running its BEGIN blocks and every
 * module it uses (the script is read, not skipped), perl's -I dir is
 * searched, php's -c INI (a file, or the directory of php.ini: its
 * auto_prepend_file runs), -z EXT and -d auto_prepend_file=, -d
 * extension= load code (php_opt()).
 */
static int php_opt(const struct copt *c, const struct words *t, size_t *i)
{
	static const char *const any[] = {"auto_prepend_file=", "auto_append_file="};
	static const char *const named[] = {"extension=", "zend_extension="};
	const char *w = t->v[*i], *a = w[2] != '\0' ? w + 2 : *i + 1 < t->n ? t->v[++*i] : "";

	if (w[1] != 'd')
		return a[0] != '\0' ? emit(c, a, strlen(a), true, NULL) : 0;
	for (size_t k = 0; k < ARRAY_LEN(any); k++)
		if (strncmp(a, any[k], strlen(any[k])) == 0 && a[strlen(any[k])] != '\0')
			return emit(c, a + strlen(any[k]), strlen(a + strlen(any[k])), true, NULL);
	for (size_t k = 0; k < ARRAY_LEN(named); k++)
		if (strncmp(a, named[k], strlen(named[k])) == 0 && strchr(a, '/') != NULL)
			return emit(c, a + strlen(named[k]), strlen(a + strlen(named[k])), true, NULL);
	return 0;
}

static int interp_args(const struct copt *c, const struct words *t, size_t i, bool shell, bool tilde)
{
	static const char *const inline_code[] = {"-e", "-E", "-m", "--eval", "-p", "--print", "-"};
	const char *base = strrchr(t->v[i - 1], '/');
	const char *name = base != NULL ? base + 1 : t->v[i - 1];
	bool py = strncmp(name, "python", 6) == 0, safe = false;
	bool js = strcmp(name, "node") == 0, rb = strcmp(name, "ruby") == 0;
	bool pl = strcmp(name, "perl") == 0, php = strncmp(name, "php", 3) == 0;
	/* the short options whose argument is inline code, also last in a
	 * cluster (perl -pe CODE, -lne, ruby -ne, node -pe, php -r) */
	const char *il = strcmp(name, "perl") == 0 ? "eE"
		: rb || strcmp(name, "lua") == 0 || strcmp(name, "Rscript") == 0 ? "e"
		: js ? "ep"
		: strncmp(name, "php", 3) == 0 ? "rRBE"
		: "";
	bool cmd = false;

	for (; i < t->n; i++) {
		const char *w = t->v[i];

		if (cmd)
			return command_opt(c, w, CMD_SHELL);
		if (php && w[0] == '-' && (w[1] == 'c' || w[1] == 'z' || w[1] == 'd')) {
			int r = php_opt(c, t, &i);

			if (r != 0)
				return r;
			continue;
		}
		if (pl && strncmp(w, "-I", 2) == 0) {
			const char *a = w[2] != '\0' ? w + 2 : i + 1 < t->n ? t->v[++i] : "";
			int r = a[0] != '\0' ? emit(c, a, strlen(a), false, NULL) : 0;

			if (r != 0)
				return r;
			continue;
		}
		if (!shell && !py && w[0] == '-' && w[1] != '-' && w[1] != '\0' && strchr(il, w[strlen(w) - 1]) != NULL)
			return i + 1 < t->n ? code_literals(c, t->v[i + 1]) : 0;
		if (js && (strcmp(w, "--eval") == 0 || strcmp(w, "--print") == 0))
			return i + 1 < t->n ? code_literals(c, t->v[i + 1]) : 0;
		if (shell && w[0] == '-' && w[1] != '-' && strchr(w, 'c') != NULL) {
			cmd = true;
			continue;
		}
		if (py && w[0] == '-' && w[1] != '-' && w[1] != '\0') {
			int r = py_cluster(c, t, &i, &safe);

			if (r != 1)
				return r;
			continue;
		}
		if ((js || rb) && w[0] == '-') {
			int r = interp_opt(c, t, &i, rb);

			if (r != 1)
				return r;
			continue;
		}
		for (size_t k = 0; !shell && k < ARRAY_LEN(inline_code); k++)
			if (strcmp(w, inline_code[k]) == 0)
				return 0;
		if (w[0] == '-' || w[0] == '+')
			continue;
		return tilde && w[0] == '~' ? 0 : emit(c, w, strlen(w), true, NULL);
	}
	return 0;
}

static int program_words(const struct copt *c, const struct words *t, size_t i, bool tilde);

/*
 * A word that runs the next one (a precommand) and how it reads its
 * options, so that the program it runs is the word judged, not an
 * option's argument (`sudo -u node vim`, `env -C /w/p vim`, `flock
 * /w/p/.lock vim`: round 37). flags: short options taking nothing; args:
 * taking an argument (attached or the next word); rest: an optional
 * argument, attached only (xargs -i[R]); cmd: its argument is a shell
 * command line run (script -c, flock -c); split: its argument is split
 * into words read in its place (env -S, as a "#!/usr/bin/env -S" line);
 * stop: no program follows (sudo -e, chrt -p, command -v). longs: ' '
 * separated long options, "name=" taking an argument ("--name x",
 * "--name=x"); "command=" is cmd, "split-string=" split. operands: the
 * words before the program (timeout's duration, flock's file, chrt's
 * priority, taskset's mask); noprog: it runs no program of its words
 * (script: only -c). assign: NAME=value words before the program are
 * skipped (env, sudo). An option not listed makes the rest read as the
 * review of round 36 did: every later word with a '/' is a program
 * (loose_words(): fail closed).
 */
struct precmd {
	const char *name, *flags, *args, *rest, *cmd, *split, *stop, *longs;
	unsigned operands;
	bool noprog, assign, digits;
};

#define LDSO_LONGS                                                                                          \
	"list verify inhibit-cache library-path= inhibit-rpath= audit= preload= argv0= glibc-hwcaps-prepend= "   \
	"glibc-hwcaps-mask= list-tunables list-diagnostics help version"

static const struct precmd precmds[] = {
	{"env", "i0v", "uCS", "", "", "S", "", "ignore-environment null debug unset= chdir= split-string= "
	 "default-signal ignore-signal block-signal list-signal-handling", 0, false, true, false},
	{"sudo", "AbEHiKknPSsBN", "CDghpRrTUuc", "", "", "", "elvV", "askpass background bell close-from= chdir= "
	 "preserve-env edit group= set-home host= login remove-timestamp reset-timestamp list non-interactive "
	 "preserve-groups prompt= chroot= role= stdin shell type= command-timeout= other-user= user= validate "
	 "version help", 0, false, true, false},
	{"doas", "Lns", "u", "", "", "", "C", "", 0, false, false, false},
	{"run0", "", "ugD", "", "", "", "", "user= group= chdir= setenv= unit= property= description= slice= "
	 "slice-inherit nice= background= machine= no-ask-password pty pipe via-shell", 0, false, false, false},
	{"pkexec", "", "", "", "", "", "", "user= keep-cwd disable-internal-agent", 0, false, false, false},
	{"nice", "", "n", "", "", "", "", "adjustment=", 0, false, false, true},
	{"nohup", "", "", "", "", "", "", "", 0, false, false, false},
	{"setsid", "cfw", "", "", "", "", "", "ctty fork wait", 0, false, false, false},
	{"stdbuf", "", "ioe", "", "", "", "", "input= output= error=", 0, false, false, false},
	{"timeout", "v", "sk", "", "", "", "", "signal= kill-after= preserve-status foreground verbose", 1, false,
	 false, false},
	{"xargs", "0prtx", "aEILnPsd", "eil", "", "", "", "arg-file= delimiter= eof max-lines max-args= max-procs= "
	 "max-chars= replace process-slot-var= null interactive no-run-if-empty verbose exit show-limits open-tty",
	 0, false, false, false},
	{"ionice", "t", "cn", "", "", "", "pPu", "class= classdata= ignore pid pgid uid", 0, false, false, false},
	{"chrt", "abdfiomRrv", "TPD", "", "", "", "p", "all-tasks batch deadline fifo idle other rr reset-on-fork "
	 "verbose sched-runtime= sched-period= sched-deadline= max", 1, false, false, false},
	{"taskset", "acv", "", "", "", "", "p", "all-tasks cpu-list verbose", 1, false, false, false},
	{"flock", "sexnoFuv", "wEc", "", "c", "", "", "shared exclusive unlock nonblock close no-fork verbose "
	 "timeout= conflict-exit-code= command=", 1, false, false, false},
	{"unbuffer", "p", "", "", "", "", "", "", 0, false, false, false},
	{"caffeinate", "dimsu", "tw", "", "", "", "", "", 0, false, false, false},
	{"chronic", "ev", "", "", "", "", "", "", 0, false, false, false},
	{"script", "aefqhV", "cEIOBTmo", "t", "c", "", "", "append command= echo= return flush force quiet log-in= "
	 "log-out= log-io= log-timing= logging-format= output-limit= timing", 0, true, false, false},
	{"time", "pvqa", "of", "", "", "", "", "output= format= append portability verbose quiet", 0, false, false,
	 false},
	{"exec", "cl", "a", "", "", "", "", "", 0, false, false, false},
	{"command", "p", "", "", "", "", "vV", "", 0, false, false, false},
	/* the compiler wrappers of CC="ccache gcc" */
	{"ccache", "", "", "", "", "", "", "", 0, false, false, false},
	{"sccache", "", "", "", "", "", "", "", 0, false, false, false},
	{"distcc", "", "", "", "", "", "", "", 0, false, false, false},
	{"icecc", "", "", "", "", "", "", "", 0, false, false, false},
	/* Round 37's review: the other programs that run their operands.
	 * No table of long options: any one reads the rest loosely (fail
	 * closed); "*": every long option takes its argument attached only
	 * (--name=value: firejail's, valgrind's). */
	{"firejail", "", "", "", "", "", "", "*", 0, false, false, false},
	{"valgrind", "qv", "", "", "", "", "", "*", 0, false, false, false},
	{"strace", "cdfFhiqrtTvVwxyzZCDkn", "abeEIoOpPsSuUX", "", "", "", "", "", 0, false, false, false},
	{"ltrace", "bcCfhiLrStTV", "aADeFlnopsuwx", "", "", "", "", "", 0, false, false, false},
	{"unshare", "mUuinpCTfrc", "wSGR", "", "", "", "", "", 0, false, false, false},
	/* round 38: nsenter's -r[DIR] and -w[DIR] take theirs attached only */
	{"nsenter", "mUuinpCTFZae", "tSG", "rw", "", "", "", "", 0, false, false, false},
	{"chroot", "", "", "", "", "", "", "userspec= groups= skip-chdir", 1, false, false, false},
	/* Round 39: the programs that run their operand after a user, a
	 * directory (envdir's files are the environment: read as code, as
	 * chroot's root is, precmd_words_at()) or a lock; the process
	 * supervisors; and the launchers whose options are read loosely */
	{"gosu", "", "", "", "", "", "", "", 1, false, false, false},
	{"su-exec", "", "", "", "", "", "", "", 1, false, false, false},
	{"setuidgid", "", "", "", "", "", "", "", 1, false, false, false},
	{"envuidgid", "", "", "", "", "", "", "", 1, false, false, false},
	{"envdir", "", "", "", "", "", "", "", 1, false, false, false},
	{"setlock", "nNxX", "", "", "", "", "", "", 1, false, false, false},
	{"lckdo", "q", "w", "", "", "", "", "", 1, false, false, false},
	{"ifne", "n", "", "", "", "", "", "", 0, false, false, false},
	{"tini", "svgwl", "pe", "", "", "", "", "", 0, false, false, false},
	{"dumb-init", "cv", "r", "", "", "", "", "", 0, false, false, false},
	{"catatonit", "gP", "", "", "", "", "", "", 0, false, false, false},
	{"runcon", "c", "turl", "", "", "", "", "", 0, false, false, false},
	{"cpulimit", "kfqvz", "lpe", "", "", "", "", "", 0, false, false, false},
	{"fakechroot", "", "", "", "", "", "", "", 0, false, false, false},
	{"mpirun", "", "", "", "", "", "", "", 0, false, false, false},
	{"mpiexec", "", "", "", "", "", "", "", 0, false, false, false},
	{"srun", "", "", "", "", "", "", "", 0, false, false, false},
	{"capsh", "", "", "", "", "", "", "", 0, false, false, false},
	{"proot", "", "", "", "", "", "", "", 0, false, false, false},
	{"nsjail", "", "", "", "", "", "", "", 0, false, false, false},
	{"setpriv", "d", "", "", "", "", "", "", 0, false, false, false},
	{"prlimit", "", "p", "", "", "", "", "", 0, false, false, false},
	{"systemd-run", "qGPSdtr", "pEuM", "", "", "", "", "", 0, false, false, false},
	{"numactl", "lsHab", "CNmipP", "", "", "", "", "", 0, false, false, false},
	{"faketime", "mf", "", "", "", "", "", "", 1, false, false, false},
	{"fakeroot", "uhv", "lsifb", "", "", "", "", "lib= faked= unknown-is-real fd-base= help version", 0, false, false,
	 false},
	{"torsocks", "diq", "upaP", "", "", "", "", "", 0, false, false, false},
	{"proxychains", "q", "f", "", "", "", "", "", 0, false, false, false},
	{"proxychains4", "q", "f", "", "", "", "", "", 0, false, false, false},
	{"tsocks", "", "", "", "", "", "", "", 0, false, false, false},
	{"catchsegv", "", "", "", "", "", "", "", 0, false, false, false},
	{"eatmydata", "", "", "", "", "", "", "", 0, false, false, false},
	{"nocache", "", "", "", "", "", "", "", 0, false, false, false},
	{"trickle", "sVv", "dumnwtl", "", "", "", "", "", 0, false, false, false},
	{"dbus-run-session", "", "", "", "", "", "", "", 0, false, false, false},
	{"dbus-launch", "", "", "", "", "", "", "", 0, false, false, false},
	{"xvfb-run", "al", "efnpsw", "", "", "", "", "", 0, false, false, false},
	{"ssh-agent", "cDdks", "aEOPt", "", "", "", "", "", 0, false, false, false},
	{"sg", "", "c", "", "c", "", "", "", 1, false, false, false},
	/* round 38: su's and runuser's options; the words after the user
	 * are the shell's (precmd_words_at()) */
	{"su", "lmpfPhV", "gGswc", "", "c", "", "", "login preserve-environment shell= command= session-command= "
	 "group= supp-group= fast pty whitelist-environment= help version", 1, false, false, false},
	{"runuser", "lmpfPhV", "gGswcu", "", "c", "", "", "login preserve-environment shell= command= "
	 "session-command= group= supp-group= fast pty whitelist-environment= user= help version", 1, false, false,
	 false},
	{"setarch", "vRFZLXBIST3", "", "", "", "", "", "", 1, false, false, false},
	{"linux32", "vRFZLXBIST3", "", "", "", "", "", "", 0, false, false, false},
	{"linux64", "vRFZLXBIST3", "", "", "", "", "", "", 0, false, false, false},
	{"cgexec", "", "g", "", "", "", "", "", 0, false, false, false},
	{"rlwrap", "", "", "", "", "", "", "", 0, false, false, false},
	{"watch", "bcdegtx", "nq", "", "", "", "", "", 0, false, false, false},
	{"hyperfine", "", "", "", "", "", "", "", 0, false, false, false},
	{"entr", "acdnprsz", "", "", "", "", "", "", 0, false, false, false},
	{"perf", "", "", "", "", "", "", "", 1, false, false, false},
	{"busybox", "", "", "", "", "", "", "", 0, false, false, false},
	{"parallel", "", "", "", "", "", "", "", 0, false, false, false},
	{"screen", "", "", "", "", "", "", "", 0, false, false, false},
	{"bwrap", "", "", "", "", "", "", "", 0, false, false, false},
	{"flatpak-spawn", "", "", "", "", "", "", "", 0, false, false, false},
	{"systemd-inhibit", "", "", "", "", "", "", "", 0, false, false, false},
	/* the dynamic linker run as a program runs its operand (round 38:
	 * its options read, code_opt()) */
	{"ld.so", "", "", "", "", "", "", LDSO_LONGS, 0, false, false, false},
	{"ld-linux.so.2", "", "", "", "", "", "", LDSO_LONGS, 0, false, false, false},
	{"ld-linux-x86-64.so.2", "", "", "", "", "", "", LDSO_LONGS, 0, false, false, false},
	{"ld-linux-aarch64.so.1", "", "", "", "", "", "", LDSO_LONGS, 0, false, false, false},
	{"ld-linux-armhf.so.3", "", "", "", "", "", "", LDSO_LONGS, 0, false, false, false},
	{"ld-musl-x86_64.so.1", "", "", "", "", "", "", LDSO_LONGS, 0, false, false, false},
	{"ld-musl-aarch64.so.1", "", "", "", "", "", "", LDSO_LONGS, 0, false, false, false},
};

/* The shell's words that run the next one: no options. */
static const char *const keywords[] = {"builtin", "!", "{", "then", "do", "else", "elif", "if", "while", "until",
				       "nocorrect", "noglob", "coproc"};
static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish"};
static const char *const interps[] = {"python", "python2", "python3", "perl", "ruby", "node",
				      "lua", "php", "Rscript", "tclsh"};

/* The precommand w names (its last name), or NULL. */
static const struct precmd *precmd_of(const char *w)
{
	const char *base = strrchr(w, '/');

	base = base != NULL ? base + 1 : w;
	for (size_t k = 0; k < ARRAY_LEN(precmds); k++)
		if (strcmp(base, precmds[k].name) == 0)
			return &precmds[k];
	return NULL;
}

/* Whether the long option (name, len) is one of pc's longs; *arg: it
 * takes an argument. */
static bool long_known(const struct precmd *pc, const char *name, size_t len, bool *arg)
{
	if (strcmp(pc->longs, "*") == 0) {
		*arg = false;
		return true;
	}
	for (const char *l = pc->longs; *l != '\0';) {
		size_t n = strcspn(l, " ");
		bool eq = n > 0 && l[n - 1] == '=';

		if ((eq ? n - 1 : n) == len && strncmp(l, name, len) == 0) {
			*arg = eq;
			return true;
		}
		l += n + (l[n] == ' ');
	}
	return false;
}

/*
 * The words past a precommand, as the review of round 36 read them
 * when an option is not known: every word with a '/' is a program, a
 * shell's, an interpreter's or ssh's words read as theirs.
 */
static int loose_words(const struct copt *c, const struct words *t, size_t i, bool tilde)
{
	int r = 0;

	for (; i < t->n && r == 0; i++) {
		const char *w = t->v[i];

		if (strchr(w, '/') != NULL && (!tilde || w[0] != '~'))
			r = emit(c, w, strlen(w), true, NULL);
		if (r != 0)
			break;
		if (word_in(w, shells, ARRAY_LEN(shells)) || word_in(w, interps, ARRAY_LEN(interps)))
			return interp_args(c, t, i + 1, word_in(w, shells, ARRAY_LEN(shells)), tilde);
		if (word_in(w, (const char *const[]){"ssh"}, 1))
			return ssh_args(c, t, i + 1);
	}
	return r;
}

static int precmd_words(const struct copt *c, const struct precmd *pc, const struct words *t, size_t i,
			bool tilde);

/* env -S's text split into words (quotes as env reads them) and read
 * in its place, before t->v[i...]. */
static int split_in_place(const struct copt *c, const struct precmd *pc, const char *text, const struct words *t,
			  size_t i, bool tilde)
{
	struct words s, all;
	int r;

	if (split_words(text, "\"'", &s) < 0)
		return -1;
	all.buf = NULL;
	all.n = s.n + (t->n - i);
	all.v = malloc((all.n + 1) * sizeof(*all.v));
	if (all.v == NULL) {
		free(s.buf);
		free(s.v);
		errno = ENOMEM;
		return -1;
	}
	memcpy(all.v, s.v, s.n * sizeof(*all.v));
	memcpy(all.v + s.n, t->v + i, (t->n - i) * sizeof(*all.v));
	r = precmd_words(c, pc, &all, 0, tilde);
	free(all.v);
	free(s.buf);
	free(s.v);
	return r;
}

/*
 * Round 38: a precommand's options whose argument is itself code run
 * or loaded, by the short option or the long one (cmd "ld": every
 * dynamic linker's name). kind 'x': a program or a root run by its
 * path, whatever the value (su's -s SHELL is execv()ed: "sh-v" is
 * ./sh-v; unshare -R and nsenter -r DIR: the program is looked up in
 * it); 'p': a program or library named with a '/' (fakeroot's -l LIB
 * is LD_PRELOAD, its -f FAKED run by a shell: a bare name is
 * searched); 'l': a ':' or ' ' list of those (ld.so --preload, --audit);
 * 'd': a ':' list of directories libraries are loaded from, every entry
 * (ld.so --library-path lib: ./lib, an empty entry ".").
 */
static const struct {
	const char *cmd;
	char opt;
	const char *lng;
	char kind;
} code_opts[] = {
	{"su", 's', "shell", 'x'},	  {"runuser", 's', "shell", 'x'}, {"fakeroot", 'l', "lib", 'p'},
	{"fakeroot", 'f', "faked", 'p'},  {"ld", 0, "library-path", 'd'}, {"ld", 0, "preload", 'l'},
	{"ld", 0, "audit", 'l'},	  {"unshare", 'R', "root", 'x'},   {"nsenter", 'r', "root", 'x'},
};

/* The argument a of pc's option (so, or the long one ln of lnl bytes)
 * read as code_opts says: 0, or fn's result. */
static int code_opt(const struct copt *c, const struct precmd *pc, char so, const char *ln, size_t lnl, const char *a)
{
	for (size_t k = 0; k < ARRAY_LEN(code_opts); k++) {
		bool cmd = strcmp(pc->name, code_opts[k].cmd) == 0 ||
			   (strcmp(code_opts[k].cmd, "ld") == 0 && strncmp(pc->name, "ld", 2) == 0);
		bool opt = so != 0 ? so == code_opts[k].opt
				   : ln != NULL && strlen(code_opts[k].lng) == lnl && strncmp(ln, code_opts[k].lng, lnl) == 0;
		char kind = code_opts[k].kind;

		if (!cmd || !opt)
			continue;
		if (kind == 'x')
			return a[0] == '\0' ? 0 : emit(c, a, strlen(a), true, NULL);
		if (kind == 'p')
			return strchr(a, '/') != NULL ? emit(c, a, strlen(a), true, NULL) : 0;
		for (const char *e = a;;) {
			size_t len = strcspn(e, kind == 'l' ? ": " : ":");
			int r = kind == 'd' && len == 0 ? emit(c, ".", 1, true, NULL)
				: memchr(e, '/', len) != NULL || kind == 'd' ? emit(c, e, len, true, NULL)
									      : 0;

			if (r != 0 || e[len] == '\0')
				return r;
			e += len + 1;
		}
	}
	return 0;
}

/*
 * The words t->v[i...] after the precommand pc: its options (and their
 * arguments) and operands passed over, the program word read by
 * program_words(); a command line an option runs (-c) read as one, the
 * options' code by code_opt() (round 38). su's and runuser's words
 * after the user are the shell's (a script, -c): interp_args(); with
 * runuser -u, a program follows.
 */
static int precmd_words_at(const struct copt *c, const struct precmd *pc, const struct words *t, size_t i,
			   bool tilde)
{
	unsigned operands = pc->operands;
	bool opts_done = false, ran = false;
	bool su = strcmp(pc->name, "su") == 0 || strcmp(pc->name, "runuser") == 0;

	for (; i < t->n; i++) {
		const char *w = t->v[i], *a = NULL, *ln = NULL;
		char kind = 0; /* 'c': a command line; 's': words to split */
		char so = 0;
		size_t lnl = 0;
		int r;

		/* "--" ends the options, not the operands (timeout -- 5 ./x) */
		if (!opts_done && strcmp(w, "--") == 0) {
			opts_done = true;
			continue;
		}
		/* flock FILE -c CMD: its -c after the file. */
		if (opts_done || w[0] != '-' || w[1] == '\0') {
			if (pc->assign && w[0] != '=' &&
			    w[strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")] == '=')
				continue;
			/* env's "-" is -i; su's and runuser's "-" is -l */
			if (strcmp(w, "-") == 0 && (strcmp(pc->name, "env") == 0 || strcmp(pc->name, "su") == 0 ||
						   strcmp(pc->name, "runuser") == 0))
				continue;
			if (operands > 0) {
				/* round 39: chroot's root (the program is looked up
				 * in it: `chroot ./r /bin/sh` runs ./r/bin/sh) and
				 * envdir's directory (its files set the program's
				 * environment: LD_PRELOAD) are code */
				if ((strcmp(pc->name, "chroot") == 0 || strcmp(pc->name, "envdir") == 0) &&
				    (r = emit(c, w, strlen(w), true, NULL)) != 0)
					return r;
				operands--;
				continue;
			}
			break;
		}
		if (w[1] == '-') {
			const char *name = w + 2;
			size_t nl = strcspn(name, "=");
			bool takes;

			if (!long_known(pc, name, nl, &takes))
				return loose_words(c, t, i, tilde);
			if (takes)
				a = name[nl] == '=' ? name + nl + 1 : i + 1 < t->n ? t->v[++i] : "";
			ln = name;
			lnl = nl;
			if ((nl == 7 && strncmp(name, "command", 7) == 0) ||
			    (nl == 15 && strncmp(name, "session-command", 15) == 0))
				kind = 'c';
			else if (nl == 12 && strncmp(name, "split-string", 12) == 0)
				kind = 's';
		} else {
			for (const char *o = w + 1; *o != '\0' && a == NULL; o++) {
				if (strchr(pc->stop, *o) != NULL)
					return 0;
				if (strchr(pc->rest, *o) != NULL) {
					a = o[1] != '\0' ? o + 1 : NULL;
					so = *o;
					break;
				}
				if (strchr(pc->args, *o) != NULL) {
					a = o[1] != '\0' ? o + 1 : i + 1 < t->n ? t->v[++i] : "";
					kind = strchr(pc->cmd, *o) != NULL ? 'c' : strchr(pc->split, *o) != NULL ? 's' : 0;
					so = *o;
					break;
				}
				if (strchr(pc->flags, *o) == NULL && !(pc->digits && isdigit((unsigned char)*o)))
					return loose_words(c, t, i, tilde);
			}
		}
		/* runuser -u USER: no shell, the program follows */
		if (su && pc->args[strlen(pc->args) - 1] == 'u' &&
		    (so == 'u' || (lnl == 4 && ln != NULL && strncmp(ln, "user", 4) == 0))) {
			operands = 0;
			su = false;
		}
		if (a != NULL && (r = code_opt(c, pc, so, ln, lnl, a)) != 0)
			return r;
		/* a -c after it (su -c CMD -s ./sh) is read too */
		if (kind == 'c' && (r = command_opt(c, a, CMD_SHELL)) != 0)
			return r;
		ran = ran || kind == 'c';
		if (kind == 's')
			return split_in_place(c, pc, a, t, i + 1, tilde);
	}
	if (ran || i >= t->n || pc->noprog)
		return 0;
	return su && i > 0 ? interp_args(c, t, i, true, tilde) : program_words(c, t, i, tilde);
}

/*
 * precmd_words_at(), past PRECMD_NEST precommands nested (round 37's
 * review: EDITOR="sudo sudo ... ./x" recursed once a word, and
 * "env -Senv -S...", each level holding a copy of the rest, took 1.5 GB
 * and 16 s for a value of 120 KB; under ASan the stack overflowed) the
 * rest read loosely: every word with a '/' a program (fail closed).
 */
#define PRECMD_NEST 32

static int precmd_words(const struct copt *c, const struct precmd *pc, const struct words *t, size_t i,
			bool tilde)
{
	int r;

	if (*c->nest >= PRECMD_NEST)
		return loose_words(c, t, i, tilde);
	++*c->nest;
	r = precmd_words_at(c, pc, t, i, tilde);
	--*c->nest;
	return r;
}

/*
 * Round 39: find's -exec, -execdir, -ok and -okdir run the words up to
 * the ';' or '+' that ends them (`find . -exec ./x {} ;`; a "{}" first
 * runs each file found, `-exec {} ;`: a relative name), each read as a
 * command's program words. 0, or fn's result, or -1 (ENOMEM).
 */
static int find_exec(const struct copt *c, const struct words *t, size_t i, bool tilde)
{
	static const char *const acts[] = {"-exec", "-execdir", "-ok", "-okdir"};

	for (; i < t->n; i++) {
		struct words sub;
		size_t e;
		bool act = false;
		int r;

		for (size_t k = 0; k < ARRAY_LEN(acts); k++)
			act = act || strcmp(t->v[i], acts[k]) == 0;
		if (!act)
			continue;
		for (e = i + 1; e < t->n && strcmp(t->v[e], ";") != 0 && strcmp(t->v[e], "\\;") != 0 &&
				strcmp(t->v[e], "+") != 0;
		     e++)
			;
		if (e > i + 1 && strcmp(t->v[i + 1], "{}") == 0 && (r = emit(c, "{}", 2, true, NULL)) != 0)
			return r;
		sub.buf = NULL;
		sub.v = t->v + i + 1;
		sub.n = e - i - 1;
		if (sub.n > 0 && (r = program_words(c, &sub, 0, tilde)) != 0)
			return r;
		i = e;
	}
	return 0;
}

/*
 * The program words of one command from t->v[i]: the program (a path
 * with a '/' is a file loaded), and past the words that run the next
 * one (the shell's exec, command, builtin, time, '!', '{', if/then/do/
 * ..., and env, sudo, nohup, nice, timeout, xargs, ...: the review of
 * round 36 ran EDITOR="env ./x", PROMPT_COMMAND="exec ./x", "{ ./x; }",
 * "if :; then ./x; fi") the program they run, their options read as
 * each reads them (precmd_words(); round 37), eval's words read as
 * commands, a shell's or an interpreter's script or -c string
 * (interp_args(): "bash ./x", "sh -c ./x"), and ssh's arguments.
 */
static int program_words(const struct copt *c, const struct words *t, size_t i, bool tilde)
{
	const struct precmd *pc;
	int r = 0;

	for (; i < t->n; i++) {
		const char *w = t->v[i];

		if (strchr(w, '/') != NULL && (!tilde || w[0] != '~') && (r = emit(c, w, strlen(w), true, NULL)) != 0)
			return r;
		/* "function f { ./x; }": the name is no program */
		if (strcmp(w, "function") == 0 && i + 1 < t->n) {
			i++;
			continue;
		}
		if (!word_in(w, keywords, ARRAY_LEN(keywords)))
			break;
	}
	if (i >= t->n)
		return 0;
	/* the shell's builtins that read a file or a text as commands
	 * (round 37's review): ". x" and "source x" (a bare name looked for
	 * in PATH, then in the working directory), trap's command line,
	 * enable -f's library */
	if (strcmp(t->v[i], ".") == 0 || strcmp(t->v[i], "source") == 0)
		return interp_args(c, t, i + 1, true, tilde);
	if (strcmp(t->v[i], "trap") == 0) {
		for (i++; i < t->n && t->v[i][0] == '-' && strcmp(t->v[i], "-") != 0; i++)
			;
		return i < t->n && strcmp(t->v[i], "-") != 0 ? command_opt(c, t->v[i], CMD_SHELL) : 0;
	}
	if (strcmp(t->v[i], "enable") == 0) {
		for (i++; i < t->n && r == 0; i++)
			if (strcmp(t->v[i], "-f") == 0 && i + 1 < t->n && strchr(t->v[i + 1], '/') != NULL)
				r = emit(c, t->v[i + 1], strlen(t->v[i + 1]), true, NULL);
		return r;
	}
	if ((pc = precmd_of(t->v[i])) != NULL)
		return precmd_words(c, pc, t, i + 1, tilde);
	if (word_in(t->v[i], (const char *const[]){"find"}, 1))
		return find_exec(c, t, i + 1, tilde);
	if (strcmp(t->v[i], "eval") == 0) {
		for (i++; i < t->n && r == 0; i++)
			r = command_opt(c, t->v[i], CMD_SHELL);
		return r;
	}
	if (word_in(t->v[i], shells, ARRAY_LEN(shells)) || word_in(t->v[i], interps, ARRAY_LEN(interps)))
		return interp_args(c, t, i + 1, word_in(t->v[i], shells, ARRAY_LEN(shells)), tilde);
	if (word_in(t->v[i], (const char *const[]){"ssh"}, 1))
		return ssh_args(c, t, i + 1);
	return 0;
}

/* The first word of one command (s, len), after its NAME=value
 * assignments, when it is a path (with a '/'); a "~/" one only where
 * nothing expands it (tilde false). In make's text, a "shell" word
 * first is passed over and every word after include, -include or
 * sinclude is a file. 0, or fn's result, or -1 (ENOMEM). */
static int command_word(const struct copt *c, const char *s, size_t len, bool tilde, enum cmd_kind k)
{
	struct words t;
	char *seg = strndup(s, len);
	size_t i = 0;
	int r = 0;

	if (seg == NULL)
		return -1;
	if (split_words(seg, "\"'", &t) < 0) {
		free(seg);
		return -1;
	}
	free(seg);
	while (i < t.n && t.v[i][0] != '=' && t.v[i][strspn(t.v[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")] == '=')
		i++;
	if (k == CMD_MAKE && i < t.n && strcmp(t.v[i], "shell") == 0)
		i++;
	if (k == CMD_MAKE && i < t.n &&
	    (strcmp(t.v[i], "include") == 0 || strcmp(t.v[i], "-include") == 0 || strcmp(t.v[i], "sinclude") == 0)) {
		for (i++; i < t.n && r == 0; i++)
			r = emit(c, t.v[i], strlen(t.v[i]), true, NULL);
	} else if (i < t.n) {
		r = program_words(c, &t, i, tilde);
	}
	free(t.buf);
	free(t.v);
	return r;
}

/*
 * The program a command variable runs, when it is named by a path (with
 * a '/'): a bare name is looked for in PATH, whose directories are
 * protected already; "~/x" is in the home (a shell expands it), which
 * is not writable unless a tree holds it, and then its bin and dot
 * entries are protected (not read here). Read as a file loaded. A
 * shell's value is cut into commands where a shell starts one (';', '&',
 * '|', a newline, '(', "$(", '`', outside '\'' quotes): each command's
 * program is read (EDITOR="vi; ./x" runs ./x too; a prompt's
 * "$(./x)").
 */
static int command_opt(const struct copt *c, const char *val, enum cmd_kind k)
{
	const char *seg = val;
	unsigned depth = 0;
	bool bq = false;
	char q = 0;

	if (k == CMD_EXEC)
		return strchr(val, '/') != NULL ? emit(c, val, strlen(val), true, NULL) : 0;
	for (const char *s = val;; s++) {
		bool cut, funsub;

		if (*s == '\\' && q != '\'' && s[1] != '\0') {
			s++;
			continue;
		}
		if (*s != '\0' && (q == '\'' || (q == 0 && (*s == '\'' || *s == '"')) || (q == '"' && *s == '"'))) {
			if (*s == q || q == 0)
				q = q != 0 ? 0 : *s;
			continue;
		}
		/* bash 5.3's and mksh's "${ cmd; }" and "${| cmd; }" run cmd
		 * as "$(cmd)" does (its '}' is not looked for: what follows is
		 * read as commands too, in a prompt). */
		funsub = *s == '$' && s[1] == '{' && s[2] != '\0' && strchr(" \t\n|", s[2]) != NULL;
		cut = *s == '\0' || *s == '`' || (*s == '$' && s[1] == '(') || funsub || (*s == ')' && depth > 0) ||
		      (q == 0 && strchr(";&|\n()", *s) != NULL);
		if (!cut)
			continue;
		/* A prompt's text outside "$(...)" and `...` is no command. */
		if (k != CMD_PROMPT || depth > 0 || bq) {
			int r = command_word(c, seg, (size_t)(s - seg), k == CMD_SHELL || k == CMD_PROMPT, k);

			if (r != 0)
				return r;
		}
		if (*s == '\0')
			return 0;
		if (*s == '$') {
			depth++;
			s++;
		} else if (*s == ')' && depth > 0) {
			depth--;
		} else if (*s == '`') {
			bq = !bq;
		}
		seg = s + 1;
	}
}

/*
 * BROWSER: a ':' list of commands, each tried in turn (python's
 * webbrowser splits each as a shell would and runs it without one: "~"
 * stays as it is); GTK_MODULES, GTK3_MODULES: a ':' list of modules
 * loaded into every GTK program, a bare name from GTK's own path.
 */
static int colon_list(const struct copt *c, const char *val, bool commands)
{
	for (const char *e = val;;) {
		size_t len = strcspn(e, ":");
		int r = commands ? command_word(c, e, len, false, CMD_SHELL)
			: memchr(e, '/', len) != NULL ? emit(c, e, len, true, NULL)
						       : 0;

		if (r != 0 || e[len] == '\0')
			return r;
		e += len + 1;
	}
}

/*
 * PERL5DB: the code `perl -d` runs instead of require 'perl5db.pl'. Each
 * require or do of a quoted path read from the working directory ("./x",
 * "../x") or from "/" is a file loaded; a bare name is found in @INC.
 */
static int perl5db(const struct copt *c, const char *val)
{
	for (const char *s = val; *s != '\0'; s++) {
		size_t kw = strncmp(s, "require", 7) == 0 ? 7 : strncmp(s, "do", 2) == 0 ? 2 : 0;
		const char *a;
		size_t len;

		if (kw == 0 || (s > val && (isalnum((unsigned char)s[-1]) || s[-1] == '_')))
			continue;
		a = s + kw + strspn(s + kw, " \t\n(");
		if (*a != '"' && *a != '\'')
			continue;
		len = strcspn(a + 1, *a == '"' ? "\"" : "'");
		if ((a[1] == '/' || strncmp(a + 1, "./", 2) == 0 || strncmp(a + 1, "../", 3) == 0)) {
			int r = emit(c, a + 1, len, true, NULL);

			if (r != 0)
				return r;
		}
	}
	return 0;
}

/*
 * MAKEFLAGS, GNUMAKEFLAGS: every later make reads their --eval=TEXT
 * (-E TEXT, -ETEXT) as a makefile's line (words split on blanks, a '\'
 * keeps the next character): an include's files and the programs of
 * $(shell ...) and of a recipe are read by command_opt(). -f is not
 * read from the environment.
 */
static int make_opts(const struct copt *c, const char *val)
{
	size_t len = strlen(val);
	char *buf = malloc(len + 1), *w = buf;
	bool eval_next = false;
	int r = 0;

	if (buf == NULL)
		return -1;
	for (const char *s = val; r == 0;) {
		char *word = w;
		const char *text = NULL;

		s += strspn(s, " \t\n");
		if (*s == '\0')
			break;
		for (; *s != '\0' && strchr(" \t\n", *s) == NULL; s++) {
			if (*s == '\\' && s[1] != '\0')
				s++;
			*w++ = *s;
		}
		*w++ = '\0';
		if (eval_next)
			text = word;
		else if (strncmp(word, "--eval=", 7) == 0)
			text = word + 7;
		else if (strncmp(word, "-E", 2) == 0 && word[2] != '\0')
			text = word + 2;
		eval_next = strcmp(word, "-E") == 0 || strcmp(word, "--eval") == 0;
		if (text != NULL)
			r = command_opt(c, text, CMD_MAKE);
	}
	free(buf);
	return r;
}

/*
 * The linker's words a compiler passes on (-Wl,a,b and -Xlinker a, in
 * order) in l (l->buf holds them): 0, or -1 (ENOMEM).
 */
static int linker_words(const struct words *t, struct words *l)
{
	size_t len = 1, n = 1;
	char *w;

	for (size_t i = 0; i < t->n; i++)
		if (strncmp(t->v[i], "-Wl,", 4) == 0 || (strcmp(t->v[i], "-Xlinker") == 0 && i + 1 < t->n)) {
			const char *a = t->v[i][1] == 'W' ? t->v[i] + 4 : t->v[++i];

			len += strlen(a) + 1;
			n += strlen(a) + 1;
		}
	l->n = 0;
	l->buf = malloc(len);
	l->v = malloc(n * sizeof(*l->v));
	if (l->buf == NULL || l->v == NULL) {
		free(l->buf);
		free(l->v);
		errno = ENOMEM;
		return -1;
	}
	w = l->buf;
	for (size_t i = 0; i < t->n; i++) {
		bool wl = strncmp(t->v[i], "-Wl,", 4) == 0;
		const char *a;

		if (!wl && (strcmp(t->v[i], "-Xlinker") != 0 || i + 1 >= t->n))
			continue;
		a = wl ? t->v[i] + 4 : t->v[++i];
		for (;;) {
			size_t k = wl ? strcspn(a, ",") : strlen(a);

			if (k > 0) {
				l->v[l->n++] = w;
				memcpy(w, a, k);
				w += k;
				*w++ = '\0';
			}
			if (a[k] == '\0')
				break;
			a += k + 1;
		}
	}
	return 0;
}

/*
 * The linker's options that load a program (round 37's review): a
 * plugin (bfd's and gold's -plugin and --plugin, lld's
 * --load-pass-plugin; -plugin-opt is its argument, not a file) with a
 * '/', and an @file of more options, read from the working directory.
 */
static int linker_flags(const struct copt *c, const struct words *t)
{
	static const char *const plugins[] = {"-plugin", "--plugin", "--load-pass-plugin", "-load-pass-plugin"};
	int r = 0;

	for (size_t i = 0; i < t->n && r == 0; i++) {
		const char *w = t->v[i], *a = NULL;

		if (w[0] == '@') {
			r = emit(c, w + 1, strlen(w + 1), true, NULL);
			continue;
		}
		for (size_t k = 0; k < ARRAY_LEN(plugins) && a == NULL; k++) {
			size_t l = strlen(plugins[k]);

			if (strncmp(w, plugins[k], l) == 0 && w[l] == '=')
				a = w + l + 1;
			else if (strcmp(w, plugins[k]) == 0 && i + 1 < t->n)
				a = t->v[++i];
		}
		if (a != NULL && strchr(a, '/') != NULL)
			r = emit(c, a, strlen(a), true, NULL);
	}
	return r;
}

static int build_flags(const struct copt *c, const struct words *t, unsigned depth);

/*
 * rustc's -C KEY=VALUE (-CKEY=, --codegen KEY=, --codegen=KEY=) and -Z
 * KEY=VALUE at t->v[*i] (round 37's review): the linker and the
 * codegen backend with a '/' (the linker is run by execvp(), the
 * backend dlopen()ed), -Z llvm-plugins' ',' list, and the words
 * passed on to the linker, the C compiler (-C link-arg=, link-args=,
 * -Z pre-link-arg=, pre-link-args=: "-C link-arg=-B./t" is cc's -B)
 * read as build_flags() reads CFLAGS. 1: not one of these (*i as it
 * was); 0 or fn's result.
 */
static int rustc_opt(const struct copt *c, const struct words *t, size_t *i, unsigned depth)
{
	static const char *const keys[] = {"linker=", "codegen-backend=", "llvm-plugins=", "link-arg=",
					   "link-args=", "pre-link-arg=", "pre-link-args="};
	const char *w = t->v[*i], *kv = NULL, *a;
	bool next = false;
	size_t k;

	if ((strcmp(w, "-C") == 0 || strcmp(w, "-Z") == 0 || strcmp(w, "--codegen") == 0) && *i + 1 < t->n)
		kv = t->v[*i + 1], next = true;
	else if (strncmp(w, "--codegen=", 10) == 0)
		kv = w + 10;
	else if (w[0] == '-' && (w[1] == 'C' || w[1] == 'Z') && w[2] != '\0')
		kv = w + 2;
	if (kv == NULL)
		return 1;
	for (k = 0; k < ARRAY_LEN(keys); k++)
		if (strncmp(kv, keys[k], strlen(keys[k])) == 0)
			break;
	if (k == ARRAY_LEN(keys))
		return 1;
	if (next)
		++*i;
	a = kv + strlen(keys[k]);
	if (k == 0 || k == 1)
		return strchr(a, '/') != NULL ? emit(c, a, strlen(a), true, NULL) : 0;
	if (k == 2) {
		for (;;) {
			size_t len = strcspn(a, ",");
			int r = memchr(a, '/', len) != NULL ? emit(c, a, len, true, NULL) : 0;

			if (r != 0 || a[len] == '\0')
				return r;
			a += len + 1;
		}
	}
	if (k == 3 || k == 5) {
		char *one = (char *)a;
		const struct words w1 = {.buf = NULL, .v = &one, .n = 1};

		return build_flags(c, &w1, depth + 1);
	} else {
		struct words s;
		int r;

		if (split_words(a, "", &s) < 0)
			return -1;
		r = build_flags(c, &s, depth + 1);
		free(s.buf);
		free(s.v);
		return r;
	}
}

/*
 * The compiler's and linker's flags (CFLAGS, CXXFLAGS, CPPFLAGS,
 * LDFLAGS, go's CGO_*FLAGS, make and cargo's cc pass them to every
 * compile; RUSTFLAGS, RUSTDOCFLAGS, CARGO_ENCODED_RUSTFLAGS, its words
 * 0x1f separated, to every rustc; and the words after a build tool's
 * program, CC="gcc -B./t"): the options that run or load a program or
 * a library (round 37): -B and its long form --prefix (the prefix cc1,
 * as and ld are taken from, relative to the working directory; gcc
 * reads "-Bstatic" as the prefix "static" too: ./static/as, ./staticas
 * run), -specs= and --specs (a spec file can name any program), clang's
 * --gcc-toolchain=, --gcc-install-dir=, --sysroot= (clang runs the ld
 * of the GCC installation it finds there) and --config= (a file of
 * more options: -B, -fplugin=) (round 38; -isysroot names headers only),
 * -iplugindir= (where -fplugin=NAME is looked for) and an @file of more
 * options (gcc's, clang's and rustc's, from the working directory)
 * whatever their value; and with a '/' (a bare name is searched in the
 * system's places), gcc's and clang's -fplugin=, -fpass-plugin=,
 * -wrapper PROG,..., -fuse-ld=, --ld-path=, -Xclang -load -Xclang LIB,
 * the linker's (-Wl, and -Xlinker: linker_flags()) and rustc's
 * (rustc_opt()). A header or library directory (-I, -L, -isystem) is
 * searched, not run: not given. depth: link-arg='s nesting (past 8,
 * the word itself is given).
 */
static int build_flags(const struct copt *c, const struct words *t, unsigned depth)
{
	/* dlopen()ed or run by execvp(): a name without '/' is searched in
	 * the system's places, not the working directory */
	static const char *const named[] = {"-fplugin=", "-fpass-plugin=", "--ld-path=", "-fuse-ld="};
	static const char *const prefixed[] = {"-specs=", "--specs=", "--prefix=", "-iplugindir=",
					       /* round 38: clang's */
					       "--gcc-toolchain=", "--gcc-install-dir=", "--sysroot=", "--config=",
					       "--config-user-dir=", "--config-system-dir="};
	/* the same, their value the next word */
	static const char *const prefixed_next[] = {"--prefix", "--specs", "--gcc-toolchain", "-gcc-toolchain",
						    "--sysroot", "--config"};
	struct words l;
	int r = 0;

	if (depth > 8)
		return t->n > 0 ? emit(c, t->v[0], strlen(t->v[0]), true, NULL) : 0;
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const char *w = t->v[i], *a = NULL;
		bool path = false; /* a file or prefix read from the working directory */

		if ((r = rustc_opt(c, t, &i, depth)) != 1)
			continue;
		r = 0;
		for (size_t k = 0; k < ARRAY_LEN(named) && a == NULL; k++)
			if (strncmp(w, named[k], strlen(named[k])) == 0)
				a = w + strlen(named[k]);
		for (size_t k = 0; k < ARRAY_LEN(prefixed) && a == NULL; k++)
			if (strncmp(w, prefixed[k], strlen(prefixed[k])) == 0) {
				a = w + strlen(prefixed[k]);
				path = true;
			}
		if (a == NULL && w[0] == '@') {
			a = w + 1;
			path = true;
		}
		for (size_t k = 0; k < ARRAY_LEN(prefixed_next) && a == NULL; k++)
			if (strcmp(w, prefixed_next[k]) == 0) {
				a = i + 1 < t->n ? t->v[++i] : "";
				path = true;
			}
		if (a == NULL && w[0] == '-' && w[1] == 'B') {
			bool attached = w[2] != '\0';

			a = attached ? w + 2 : i + 1 < t->n ? t->v[++i] : "";
			path = true;
		}
		if (a == NULL && strcmp(w, "-wrapper") == 0 && i + 1 < t->n) {
			a = t->v[++i];
			if (memchr(a, '/', strcspn(a, ",")) != NULL)
				r = emit(c, a, strcspn(a, ","), true, NULL);
			continue;
		}
		if (a == NULL && strcmp(w, "-load") == 0 && i >= 1 && strcmp(t->v[i - 1], "-Xclang") == 0 &&
		    i + 2 < t->n && strcmp(t->v[i + 1], "-Xclang") == 0) {
			i += 2;
			a = t->v[i];
		}
		if (a != NULL && (path || strchr(a, '/') != NULL))
			r = emit(c, a, strlen(a), true, NULL);
	}
	if (r != 0)
		return r;
	if (linker_words(t, &l) < 0)
		return -1;
	r = linker_flags(c, &l);
	free(l.buf);
	free(l.v);
	return r;
}

/*
 * Round 39: PYTHONBREAKPOINT's "module.callable", the module imported
 * at the first breakpoint() from sys.path, whose first entry is the
 * script's directory (the working directory for -c, -m and the REPL):
 * its top name given as "./TOP.py", as python -m's. "0", "" and
 * pdb.set_trace (breakpoint() without it) import none of their own; a
 * name without a '.' is a builtin.
 */
static int py_breakpoint(const struct copt *c, const char *val)
{
	char mod[256];
	size_t top = strcspn(val, ".");

	if (strcmp(val, "0") == 0 || strcmp(val, "pdb.set_trace") == 0 || val[top] == '\0' || top == 0 ||
	    top > 200)
		return 0;
	(void)snprintf(mod, sizeof(mod), "./%.*s.py", (int)top, val);
	return emit(c, mod, strlen(mod), true, NULL);
}

/*
 * Round 39: cargo's alias from the environment (CARGO_ALIAS_<name>, its
 * words cargo's arguments after `cargo NAME`): --config KEY=VALUE (and
 * --config=...) sets one of cargo's settings, read as the variable cargo
 * reads it from (build.rustc-wrapper as CARGO_BUILD_RUSTC_WRAPPER,
 * target.<triple>.runner as CARGO_TARGET_<TRIPLE>_RUNNER: env_code_var_as()),
 * its TOML value's quotes, brackets and commas taken as blanks;
 * --config FILE reads a file of settings (from the working directory
 * when relative). Another alias set so is not followed (cargo's own
 * alias loop check).
 */
static int cargo_alias(const struct copt *c, const char *val)
{
	struct words t;
	int r = 0;

	if (split_words(val, "\"'", &t) < 0)
		return -1;
	for (size_t i = 0; i < t.n && r == 0; i++) {
		const char *a = strncmp(t.v[i], "--config=", 9) == 0 ? t.v[i] + 9
			: strcmp(t.v[i], "--config") == 0 && i + 1 < t.n ? t.v[++i]
									: NULL;
		const char *eq, *as;
		char name[256], *v;
		size_t k = 0;

		/* Round 40: the manifest built (its build.rs runs), the
		 * directory cargo starts in (-C: its .cargo/config.toml and
		 * manifest), a script run (-Zscript FILE.rs) */
		if (a == NULL) {
			const char *m = strncmp(t.v[i], "--manifest-path=", 16) == 0 ? t.v[i] + 16
				: strcmp(t.v[i], "--manifest-path") == 0 && i + 1 < t.n ? t.v[++i]
				: strcmp(t.v[i], "-C") == 0 && i + 1 < t.n		? t.v[++i]
				: strncmp(t.v[i], "-C", 2) == 0				? t.v[i] + 2
				: strlen(t.v[i]) > 3 && strcmp(t.v[i] + strlen(t.v[i]) - 3, ".rs") == 0 &&
						(i == 0 || strncmp(t.v[i - 1], "-Z", 2) == 0)
					? t.v[i]
					: NULL;

			if (m != NULL)
				r = emit(c, m, strlen(m), true, NULL);
			continue;
		}
		eq = strchr(a, '=');
		if (eq == NULL) {
			r = emit(c, a, strlen(a), true, NULL);
			continue;
		}
		memcpy(name, "CARGO_", 6);
		for (const char *p = a; p < eq && k + 7 < sizeof(name); p++)
			if (*p != ' ' && *p != '\t' && *p != '"' && *p != '\'')
				name[6 + k++] = *p == '.' || *p == '-' ? '_' : (char)toupper((unsigned char)*p);
		name[6 + k] = '\0';
		as = env_code_var_as(name, 6 + k);
		/* Round 40: -Zconfig-include's files of more settings */
		if (strcmp(name, "CARGO_INCLUDE") == 0)
			as = "CARGO_INCLUDE";
		if (as == NULL || strcmp(as, "CARGO_ALIAS_") == 0)
			continue;
		if ((v = strdup(eq + 1 + strspn(eq + 1, " \t"))) == NULL) {
			r = -1;
			break;
		}
		for (char *p = v; *p != '\0'; p++)
			if (strchr("\"'[],", *p) != NULL)
				*p = ' ';
		if (strcmp(as, "CARGO_INCLUDE") == 0) {
			struct words f;

			if (split_words(v, "", &f) < 0) {
				free(v);
				r = -1;
				break;
			}
			for (size_t k2 = 0; k2 < f.n && r == 0; k2++)
				if (strncmp(f.v[k2], "path=", 5) != 0 && strcmp(f.v[k2], "path") != 0 &&
				    strcmp(f.v[k2], "=") != 0 && strchr("{}", f.v[k2][0]) == NULL &&
				    strcmp(f.v[k2], "optional=true") != 0 && strcmp(f.v[k2], "optional") != 0 &&
				    strcmp(f.v[k2], "true") != 0 && strcmp(f.v[k2], "false") != 0)
					r = emit(c, f.v[k2], strlen(f.v[k2]), true, NULL);
			free(f.buf);
			free(f.v);
		} else {
			r = policy_code_options_as(c->var, as, v, c->fn, c->arg);
		}
		free(v);
	}
	free(t.buf);
	free(t.v);
	return r;
}

/*
 * Round 40: GOFLAGS, the flags every go command takes (' ' separated,
 * each -flag=value, quotes as go's quoted.Split): the program and
 * arguments of -toolexec= (run for every compile and link) and -exec=
 * (go run, go test), read as cargo's runner (a program with a '/'
 * from the working directory, a bare name from PATH), and -overlay='s
 * file, whose JSON names the sources go compiles instead of the
 * module's.
 */
static int go_flags(const struct copt *c, const char *val)
{
	struct words t;
	int r = 0;

	if (split_words(val, "\"'", &t) < 0)
		return -1;
	for (size_t i = 0; i < t.n && r == 0; i++) {
		const char *w = t.v[i];

		if (w[0] == '-' && w[1] == '-')
			w++;
		if (strncmp(w, "-toolexec=", 10) == 0 || strncmp(w, "-exec=", 6) == 0) {
			struct words p;

			if (split_words(strchr(w, '=') + 1, "\"'", &p) < 0) {
				r = -1;
				break;
			}
			r = p.n > 0 ? program_words(c, &p, 0, false) : 0;
			free(p.buf);
			free(p.v);
		} else if (strncmp(w, "-overlay=", 9) == 0) {
			r = emit(c, w + 9, strlen(w + 9), true, NULL);
		} else if (strncmp(w, "-ldflags=", 9) == 0) {
			/* Review of round 40: the linker's flags name the
			 * external linker and archiver go runs at every
			 * cgo link (-extld=, -extar=, "-extld PATH"), after
			 * a package pattern's "PATTERN=" if any */
			const char *v = w + 9, *eq = strchr(v, '=');
			struct words f;

			if (v[0] != '-' && eq != NULL && (strchr(v, '-') == NULL || eq < strchr(v, '-')))
				v = eq + 1;
			if (split_words(v, "\"'", &f) < 0) {
				r = -1;
				break;
			}
			for (size_t k = 0; k < f.n && r == 0; k++) {
				const char *x = f.v[k], *prog = NULL;

				if (x[0] == '-' && x[1] == '-')
					x++;
				if (strncmp(x, "-extld=", 7) == 0 || strncmp(x, "-extar=", 7) == 0)
					prog = x + 7;
				else if ((strcmp(x, "-extld") == 0 || strcmp(x, "-extar") == 0) && k + 1 < f.n)
					prog = f.v[++k];
				if (prog != NULL && strchr(prog, '/') != NULL)
					r = emit(c, prog, strlen(prog), true, NULL);
			}
			free(f.buf);
			free(f.v);
		}
	}
	free(t.buf);
	free(t.v);
	return r;
}

/*
 * Review 42f: erlexec's own splitting of a flags variable
 * (build_args_from_string()): white space ends a word; a double or a
 * single quote quotes (nothing is escaped inside either); a backslash
 * outside quotes takes the next character as it is ("-p\a" is -pa).
 * split_words() (a backslash escapes only inside double quotes) read
 * "-p\a ./ebin" as no flag at all.
 */
static int erl_split(const char *val, struct words *t)
{
	char *w;

	if (words_alloc(val, t) < 0)
		return -1;
	w = t->buf;
	for (const char *s = val; *s != '\0';) {
		while (*s != '\0' && strchr(" \t\n\v\f\r", *s) != NULL)
			s++;
		if (*s == '\0')
			break;
		t->v[t->n++] = w;
		while (*s != '\0' && strchr(" \t\n\v\f\r", *s) == NULL) {
			if (*s == '"' || *s == '\'') {
				char q = *s++;

				while (*s != '\0' && *s != q)
					*w++ = *s++;
				if (*s == q)
					s++;
			} else if (*s == '\\') {
				if (*++s != '\0')
					*w++ = *s++;
			} else {
				*w++ = *s++;
			}
		}
		*w++ = '\0';
	}
	return 0;
}

/*
 * Review 42f: whether erlexec takes the word after the emulator flag w
 * ("+...") as its value (erlexec.c's '+' switch): +a +A +C +e +i +n +P
 * +Q +t +T +R +W +K +S +SP +SDcpu +SDPcpu +SDio +IOt +IOp +IOPt +IOPp
 * +pc always, +B an 'i...' word, +c true or false. The +M, +h, +r, +s
 * and +z families take one for some of their sub-switches only: false
 * here, so that the word after is read as a flag's own (in a -pa list:
 * a directory; refused when relative) rather than skipped.
 */
static bool erl_plus_takes(const char *w, const char *next)
{
	static const char *const two[] = {"+S",	 "+SP",	 "+SDcpu", "+SDPcpu", "+SDio",
					  "+IOt", "+IOp", "+IOPt",  "+IOPp",   "+pc"};

	if (next == NULL)
		return false;
	if (w[1] != '\0' && w[2] == '\0' && strchr("aACeinPQtTRWK", w[1]) != NULL)
		return true;
	for (size_t k = 0; k < ARRAY_LEN(two); k++)
		if (strcmp(w, two[k]) == 0)
			return true;
	if (strcmp(w, "+B") == 0)
		return next[0] == 'i';
	if (strcmp(w, "+c") == 0)
		return strcmp(next, "true") == 0 || strcmp(next, "false") == 0;
	return false;
}

/*
 * Round 42: the BEAM's flags from the environment (ERL_AFLAGS, ERL_FLAGS,
 * ERL_ZFLAGS, elixir's ELIXIR_ERL_OPTIONS), split as erlexec splits them
 * (erl_split()): -pa, -pz and -path add each directory after them to
 * the code path (searched); -boot FILE (FILE.boot: a relative one is
 * looked for in the working directory first, then in the installation's
 * bin/), -config FILE... (FILE.config: its settings name the handlers
 * and applications started), -args_file FILE (more flags) are read at
 * every start; -boot_var's directory stands in the boot script's paths;
 * -s, -run and -S MOD run MOD at start, loaded from the code path, whose
 * first entry is the working directory: given as "./MOD.beam" (relative:
 * `run` refuses); -eval's code as an interpreter's inline code
 * (code_literals(), every word up to the next flag: init joins them);
 * -env VAR VALUE sets a variable of the emulator and the programs it
 * starts: read as that variable's when it is one of envnames.h's.
 * -extra ends erl's own flags (its scope is the variable's end).
 * Review 42f: "--" does not: init reads it as the end of the words of
 * the flag before, and reads the flags after it ("-- -pa ./x" adds
 * ./x). erlexec takes the '+' flags (and the value of those that have
 * one, erl_plus_takes()) out of the words it gives init, so a -pa list
 * goes on after them ("-pa /a +S 4:4 ./b" adds ./b). -epmd PROG: the
 * command erlexec runs (system()) to start epmd for a distributed node:
 * its program is loaded.
 */
static int erl_flags(const struct copt *c, const char *val)
{
	static const char *const dirs[] = {"-pa", "-pz", "-path", "-config"};
	static const char *const boot_ext[] = {".boot", NULL}, *const config_ext[] = {".config", NULL};
	struct words t;
	int r = 0;

	if (erl_split(val, &t) < 0)
		return -1;
	for (size_t i = 0; i < t.n && r == 0; i++) {
		const char *w = t.v[i];
		bool list = false, config = false;

		if (strcmp(w, "-extra") == 0)
			break;
		for (size_t k = 0; k < ARRAY_LEN(dirs); k++)
			if (strcmp(w, dirs[k]) == 0) {
				list = true;
				config = k == 3;
			}
		if (list) {
			/* the words up to the next flag of init's ('-'); the
			 * '+' flags erlexec takes out */
			while (r == 0 && i + 1 < t.n && t.v[i + 1][0] != '-') {
				i++;
				if (t.v[i][0] == '+') {
					if (erl_plus_takes(t.v[i], i + 1 < t.n ? t.v[i + 1] : NULL))
						i++;
					continue;
				}
				r = emit(c, t.v[i], strlen(t.v[i]), config, config ? config_ext : NULL);
			}
		} else if (w[0] == '+') {
			if (erl_plus_takes(w, i + 1 < t.n ? t.v[i + 1] : NULL))
				i++;
		} else if ((strcmp(w, "-boot") == 0 || strcmp(w, "-args_file") == 0) && i + 1 < t.n) {
			i++;
			r = emit(c, t.v[i], strlen(t.v[i]), true, w[1] == 'b' ? boot_ext : NULL);
		} else if (strcmp(w, "-boot_var") == 0 && i + 2 < t.n) {
			i += 2;
			r = emit(c, t.v[i], strlen(t.v[i]), false, NULL);
		} else if ((strcmp(w, "-s") == 0 || strcmp(w, "-run") == 0 || strcmp(w, "-S") == 0) && i + 1 < t.n) {
			char mod[300];

			i++;
			if (strchr(t.v[i], '/') != NULL || strlen(t.v[i]) > 255)
				r = emit(c, t.v[i], strlen(t.v[i]), true, NULL);
			else if (snprintf(mod, sizeof(mod), "./%s.beam", t.v[i]) > 0)
				r = emit(c, mod, strlen(mod), true, NULL);
			/* -S takes every word after it */
			if (w[1] == 'S')
				break;
		} else if (strcmp(w, "-eval") == 0) {
			while (r == 0 && i + 1 < t.n && t.v[i + 1][0] != '-') {
				i++;
				if (t.v[i][0] != '+')
					r = code_literals(c, t.v[i]);
				else if (erl_plus_takes(t.v[i], i + 1 < t.n ? t.v[i + 1] : NULL))
					i++;
			}
		} else if (strcmp(w, "-epmd") == 0 && i + 1 < t.n) {
			const char *p = t.v[++i];
			size_t pl;

			p += strspn(p, " \t\n");
			pl = strcspn(p, " \t\n");
			if (memchr(p, '/', pl) != NULL)
				r = emit(c, p, pl, true, NULL);
		} else if (strcmp(w, "-env") == 0 && i + 2 < t.n) {
			const char *var = t.v[i + 1], *v = t.v[i + 2], *as = env_code_var_as(var, strlen(var));

			i += 2;
			if (as != NULL)
				r = policy_code_options_as(c->var, as, v, c->fn, c->arg);
			else if (env_code_var_known(var, strlen(var)))
				r = emit_list(c, v, ':', true);
		}
	}
	free(t.buf);
	free(t.v);
	return r;
}

/* Appends the code point v to buf (n its length, cut at size - 1): as
 * itself below 0x80, else as UTF-8 (the name a module's file has). */
static void erl_put(char *buf, size_t *n, size_t size, unsigned long v)
{
	unsigned char u[4];
	size_t k;

	if (v < 0x80) {
		u[0] = (unsigned char)v;
		k = 1;
	} else if (v < 0x800) {
		u[0] = (unsigned char)(0xc0 | (v >> 6));
		u[1] = (unsigned char)(0x80 | (v & 0x3f));
		k = 2;
	} else if (v < 0x10000) {
		u[0] = (unsigned char)(0xe0 | (v >> 12));
		u[1] = (unsigned char)(0x80 | ((v >> 6) & 0x3f));
		u[2] = (unsigned char)(0x80 | (v & 0x3f));
		k = 3;
	} else {
		v = v > 0x10ffff ? 0xfffd : v;
		u[0] = (unsigned char)(0xf0 | (v >> 18));
		u[1] = (unsigned char)(0x80 | ((v >> 12) & 0x3f));
		u[2] = (unsigned char)(0x80 | ((v >> 6) & 0x3f));
		u[3] = (unsigned char)(0x80 | (v & 0x3f));
		k = 4;
	}
	for (size_t i = 0; i < k && *n + 1 < size; i++)
		buf[(*n)++] = (char)u[i];
}

/*
 * The escape after a '\' at *p, as erl_scan reads it: \b \d \e \f \n \r
 * \s \t \v, \^C (a control character), \x followed by two hex digits or
 * {hex digits}, one to three octal digits, and any other character
 * itself. Its value; *p moved past it.
 */
static unsigned long erl_escape(const char **p)
{
	static const char named[] = "b\bd\x7f" "e\x1b" "f\fn\nr\rs t\tv\v";
	const char *s = *p;
	unsigned long v = 0;

	if (*s == '\0')
		return '\\';
	for (size_t i = 0; named[i] != '\0'; i += 2)
		if (*s == named[i]) {
			*p = s + 1;
			return (unsigned char)named[i + 1];
		}
	if (*s == '^' && s[1] != '\0') {
		*p = s + 2;
		return (unsigned char)s[1] & 0x1f;
	}
	if (*s >= '0' && *s <= '7') {
		for (int k = 0; k < 3 && *s >= '0' && *s <= '7'; k++)
			v = v * 8 + (unsigned long)(*s++ - '0');
		*p = s;
		return v;
	}
	if (*s == 'x' && s[1] == '{') {
		const char *q = s + 2;

		for (; isxdigit((unsigned char)*q) && v <= 0x10ffff; q++)
			v = v * 16 + (unsigned long)(isdigit((unsigned char)*q) ? *q - '0' : (*q | 0x20) - 'a' + 10);
		if (*q == '}') {
			*p = q + 1;
			return v;
		}
	} else if (*s == 'x' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
		for (int k = 1; k <= 2; k++)
			v = v * 16 + (unsigned long)(isdigit((unsigned char)s[k]) ? s[k] - '0' : (s[k] | 0x20) - 'a' + 10);
		*p = s + 3;
		return v;
	}
	*p = s + 1;
	return (unsigned char)*s;
}

/*
 * The length of the white space at p as erl_scan reads it: every
 * character up to ' ' and 0x80 to 0xa0 (NBSP), as UTF-8 (C2 80 to C2
 * A0, the BEAM reading the environment as UTF-8) or as bytes (as Latin-1).
 */
static size_t erl_space(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t n = 0;

	for (;;) {
		if ((u[n] >= 1 && u[n] <= ' ') || (u[n] >= 0x80 && u[n] <= 0xa0))
			n++;
		else if (u[n] == 0xc2 && u[n + 1] >= 0x80 && u[n + 1] <= 0xa0)
			n += 2;
		else
			return n;
	}
}

/*
 * One token of an Erlang term at *s, as erl_scan reads it: an atom, bare
 * ([a-z][A-Za-z0-9_@]*, a byte over 0x7f a letter: Latin-1's and
 * Unicode's lower-case letters start one) or in '' ('a'), a string in ""
 * ('"'), their escapes decoded (erl_escape()), copied into buf (cut at
 * size - 1); a character literal ($c, $\n, $\x{41}: '$', so that $' and
 * $" open nothing); else the punctuation character itself ('{', ',',
 * ...). White space and comments ('%' to the end of the line, which
 * erl_scan drops) are skipped; 0 at the end. *s is moved past it.
 * Review of round 43: the escapes were copied as their letter
 * ('parse_tr\x61nsform' read as "parse_trx61nsform"), a comment, $' or a
 * module's name starting with 'é' hid the transform.
 */
static char erl_token(const char **s, char *buf, size_t size)
{
	const char *p = *s;
	size_t n = 0;
	char kind;

	for (;;) {
		p += erl_space(p);
		if (*p != '%')
			break;
		p += strcspn(p, "\n");
	}
	if (*p == '\0') {
		*s = p;
		buf[0] = '\0';
		return 0;
	}
	if (*p == '\'' || *p == '"') {
		char q = *p++;

		kind = q == '"' ? '"' : 'a';
		while (*p != '\0' && *p != q) {
			if (*p == '\\') {
				p++;
				erl_put(buf, &n, size, erl_escape(&p));
			} else if (n + 1 < size) {
				buf[n++] = *p++;
			} else {
				p++;
			}
		}
		if (*p == q)
			p++;
	} else if (*p == '$') {
		kind = '$';
		p++;
		if (*p == '\\') {
			p++;
			(void)erl_escape(&p);
		} else if (*p != '\0') {
			/* one character: a UTF-8 sequence whole */
			for (p++; ((unsigned char)*p & 0xc0) == 0x80; p++)
				;
		}
	} else if ((*p >= 'a' && *p <= 'z') || (unsigned char)*p >= 0x80) {
		kind = 'a';
		for (; isalnum((unsigned char)*p) || *p == '_' || *p == '@' || (unsigned char)*p >= 0x80; p++)
			if (n + 1 < size)
				buf[n++] = *p;
	} else {
		kind = *p++;
	}
	buf[n] = '\0';
	*s = p;
	return kind;
}

/*
 * Round 43: ERL_COMPILER_OPTIONS, the options every compile of the
 * BEAM's compiler adds (compile:env_compiler_options(): erlc, rebar3,
 * mix compiling a project's Erlang sources, c:c/1), an Erlang term: a
 * list of options or one. {parse_transform, Mod} and {core_transform,
 * Mod} load Mod and run it on every module compiled; Mod is looked for
 * on the code path, whose first entry is the working directory: given
 * as "./Mod.beam" (relative: `run` refuses), or Mod.beam when Mod is a
 * path from '/'. {i, Dir}: a directory searched for the headers every
 * compile includes (-include("x.hrl"): code). Atoms such as
 * debug_info, deterministic, warnings_as_errors, {d, 'TEST'} name none.
 */
static int erl_compiler_opts(const struct copt *c, const char *val)
{
	char key[64], tok[PATH_MAX];
	/* the tokens read of "{ key ," so far: 0 none, 1 '{', 2 its atom,
	 * 3 the ',' after it */
	int at = 0;

	for (const char *s = val;;) {
		const char *from = s;
		char kind = erl_token(&s, tok, sizeof(tok));
		bool transform = at == 3 && (strcmp(key, "parse_transform") == 0 || strcmp(key, "core_transform") == 0);
		int r = 0;

		if (kind == 0)
			return 0;
		if (transform && (kind == 'a' || kind == '"')) {
			/* '' too: the module '' is ".beam" on the code path */
			char mod[PATH_MAX + 16];
			int n = snprintf(mod, sizeof(mod), "%s%s.beam", tok[0] == '/' ? "" : "./", tok);

			if (n > 0 && (size_t)n < sizeof(mod))
				r = emit(c, mod, (size_t)n, true, NULL);
			at = 0;
		} else if (at == 3 && strcmp(key, "i") == 0 && (kind == 'a' || kind == '"')) {
			r = emit(c, tok, strlen(tok), false, NULL);
			at = 0;
		} else if (transform || (at == 3 && strcmp(key, "i") == 0)) {
			/* review of round 43: a value this reading does not
			 * take (a number, a tuple, a binary) is given as its
			 * text, not passed over: refused as a relative one */
			const char *raw = from;
			size_t len;

			for (;;) {
				raw += strspn(raw, " \t\r\n\f\v");
				if (*raw != '%')
					break;
				raw += strcspn(raw, "\n");
			}
			len = strcspn(raw, ",}]\n");
			r = emit(c, raw, len > 0 ? len : 1, true, NULL);
			at = 0;
		} else if (kind == '{') {
			at = 1;
		} else if (at == 1 && kind == 'a') {
			/* its bytes over 0x7f left out: white space to erl_scan
			 * read as Latin-1 (NBSP) or letters (then no option's
			 * name: refusing is the safe side) */
			size_t kn = 0;

			for (size_t k = 0; tok[k] != '\0' && kn + 1 < sizeof(key); k++)
				if ((unsigned char)tok[k] < 0x80)
					key[kn++] = tok[k];
			key[kn] = '\0';
			at = 2;
		} else if (at == 2 && kind == ',') {
			at = 3;
		} else {
			at = 0;
		}
		if (r != 0)
			return r;
	}
}

/*
 * Review of round 43: OCaml's OCAMLPARAM, the options every ocamlc and
 * ocamlopt adds (compenv.ml parse_args()): "name=value" items separated
 * by ',', or by the value's first character when it is one of ":|; ,"
 * (then not an item's); "_" marks where the command line's go. ppx= and
 * pp= are commands run through the shell on every source compiled (as
 * GIT_SSH_COMMAND's words), cc= the C compiler and its words (as CC's),
 * ccopt= and cclib= the C compiler's and linker's flags (as CFLAGS':
 * -B, -fplugin=, -Wl,-plugin), plugin= a file dynlinked into the
 * compiler, I= and H= directories searched for the compiled interfaces
 * and libraries (searched; "+dir" is under the standard library's).
 */
static int ocaml_param(const struct copt *c, const char *val)
{
	static const char *const as_of[][2] = {
		{"ppx", "GIT_SSH_COMMAND"}, {"pp", "GIT_SSH_COMMAND"}, {"cc", "CC"},
		{"ccopt", "CFLAGS"},        {"cclib", "CFLAGS"},
	};
	char seps[2] = {',', '\0'};

	if (val[0] != '\0' && strchr(":|; ,", val[0]) != NULL)
		seps[0] = *val++;
	for (const char *e = val;;) {
		size_t len = strcspn(e, seps);
		const char *eq = memchr(e, '=', len);
		int r = 0;

		if (eq != NULL) {
			size_t kl = (size_t)(eq - e);
			char *v = strndup(eq + 1, len - kl - 1);

			if (v == NULL)
				return -1;
			for (size_t i = 0; i < ARRAY_LEN(as_of); i++)
				if (strlen(as_of[i][0]) == kl && strncmp(e, as_of[i][0], kl) == 0)
					r = policy_code_options_as(c->var, as_of[i][1], v, c->fn, c->arg);
			if (kl == 6 && strncmp(e, "plugin", 6) == 0)
				r = emit(c, v, strlen(v), true, NULL);
			if (kl == 1 && (e[0] == 'I' || e[0] == 'H') && v[0] != '+')
				r = emit(c, v, strlen(v), false, NULL);
			free(v);
		}
		if (r != 0 || e[len] == '\0')
			return r;
		e += len + 1;
	}
}

/*
 * Round 44: findlib's OCAMLFIND_COMMANDS, "tool=program" items separated
 * by white space (ocamlc=/w/cc ocamlopt=ocamlopt.opt): every ocamlfind
 * runs the program in the tool's place, by path, a bare name from PATH
 * (read as GIT_SSH's value).
 */
static int ocamlfind_commands(const struct copt *c, const char *val)
{
	struct words t;
	int r = 0;

	if (split_words(val, "", &t) < 0)
		return -1;
	for (size_t i = 0; i < t.n && r == 0; i++) {
		const char *eq = strchr(t.v[i], '=');

		if (eq != NULL && eq[1] != '\0')
			r = command_opt(c, eq + 1, CMD_EXEC);
	}
	free(t.buf);
	free(t.v);
	return r;
}

/* The JVM's option variables: JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS,
 * _JAVA_OPTIONS, and the launchers' JAVA_OPTS, MAVEN_OPTS, ... */
static bool jvm_var(const char *as)
{
	size_t n = strlen(as);

	return strstr(as, "JAVA_") != NULL || (n >= 5 && strcmp(as + n - 5, "_OPTS") == 0);
}

int policy_code_options(const char *var, const char *val, policy_code_fn fn, void *arg)
{
	/* the variable read as: itself, or its family's (round 38) */
	const char *as = env_code_var_as(var, strlen(var));

	return policy_code_options_as(var, as != NULL ? as : var, val, fn, arg);
}

int policy_code_options_as(const char *var, const char *as, const char *val, policy_code_fn fn, void *arg)
{
	unsigned nest = 0;
	struct copt c = {.var = var, .fn = fn, .arg = arg, .nest = &nest};
	bool node = strcmp(as, "NODE_OPTIONS") == 0;
	bool java = jvm_var(as);
	size_t first_tool = 0;
	struct words t;
	int r;

	var = as;
	if (strcmp(var, "PYTHONBREAKPOINT") == 0)
		return py_breakpoint(&c, val);
	if (strcmp(var, "CARGO_ALIAS_") == 0)
		return cargo_alias(&c, val);
	if (strcmp(var, "GOFLAGS") == 0)
		return go_flags(&c, val);
	if (strcmp(var, "ERL_COMPILER_OPTIONS") == 0)
		return erl_compiler_opts(&c, val);
	if (strcmp(var, "OCAMLPARAM") == 0)
		return ocaml_param(&c, val);
	if (strcmp(var, "OCAMLFIND_COMMANDS") == 0)
		return ocamlfind_commands(&c, val);
	if (strncmp(var, "ERL_", 4) == 0 || strcmp(var, "ELIXIR_ERL_OPTIONS") == 0)
		return erl_flags(&c, val);
	/* Round 43: stack's project file, found by stack in the working
	 * directory and each one above it when unset: a relative value is
	 * one more name there (the session could leave a stack.yaml in any
	 * directory it writes as well), an absolute one a file every stack
	 * reads wherever it starts */
	if (strcmp(var, "STACK_YAML") == 0)
		return val[0] == '/' ? emit(&c, val, strlen(val), true, NULL) : 0;
	/* Round 42: GHC's package environment: "-" is none; any other
	 * value is read as a file first (from the working directory when
	 * relative), a name under ~/.ghc only when no such file exists */
	if (strcmp(var, "GHC_ENVIRONMENT") == 0)
		return strcmp(val, "-") != 0 ? emit(&c, val, strlen(val), true, NULL) : 0;
	if (strcmp(var, "CARGO_PROFILE_CODEGEN_BACKEND") == 0)
		return strchr(val, '/') != NULL ? emit(&c, val, strlen(val), true, NULL) : 0;

	while (strcmp(shell_vars[first_tool], "CC") != 0)
		first_tool++;

	for (size_t i = 0; i < ARRAY_LEN(exec_vars); i++)
		if (strcmp(var, exec_vars[i]) == 0)
			return command_opt(&c, val, CMD_EXEC);
	for (size_t i = 0; i < ARRAY_LEN(file_vars); i++)
		if (strcmp(var, file_vars[i]) == 0)
			return emit(&c, val, strlen(val), true, NULL);
	for (size_t i = 0; i < ARRAY_LEN(prompt_vars); i++)
		if (strcmp(var, prompt_vars[i]) == 0)
			return command_opt(&c, val, CMD_PROMPT);
	if (strcmp(var, "BROWSER") == 0 || strcmp(var, "GTK_MODULES") == 0 || strcmp(var, "GTK3_MODULES") == 0)
		return colon_list(&c, val, var[0] == 'B');
	if (strcmp(var, "PERL5DB") == 0)
		return perl5db(&c, val);
	for (size_t i = 0; i < ARRAY_LEN(argv_vars); i++)
		if (strcmp(var, argv_vars[i]) == 0 && strncmp(val, "cargo:", 6) != 0) {
			if (split_words(val, "", &t) < 0)
				return -1;
			r = t.n > 0 ? program_words(&c, &t, 0, false) : 0;
			free(t.buf);
			free(t.v);
			return r;
		}
	/* the global providers: a ' ' list, each a provider's name or path */
	if (strcmp(var, "CARGO_REGISTRY_GLOBAL_CREDENTIAL_PROVIDERS") == 0) {
		if (split_words(val, "", &t) < 0)
			return -1;
		r = loose_words(&c, &t, 0, false);
		free(t.buf);
		free(t.v);
		return r;
	}
	if (strcmp(var, "MAKEFLAGS") == 0 || strcmp(var, "GNUMAKEFLAGS") == 0)
		return make_opts(&c, val);
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
	for (size_t i = 0; i < ARRAY_LEN(shell_vars); i++) {
		if (strcmp(var, shell_vars[i]) != 0)
			continue;
		r = command_opt(&c, val, CMD_SHELL);
		if (r != 0 || i < first_tool)
			return r;
		/* a build tool's flags are the compiler's: CC="gcc -B./t" */
		if (split_words(val, "\"'", &t) < 0)
			return -1;
		r = build_flags(&c, &t, 0);
		/* and the linker's its own: LD="ld -plugin ./p.so" */
		if (r == 0 && (strcmp(var, "LD") == 0 || strcmp(var, "HOSTLD") == 0))
			r = linker_flags(&c, &t);
		free(t.buf);
		free(t.v);
		return r;
	}
	if (strstr(var, "FLAGS") != NULL) {
		/* cargo's encoded flags: one word per 0x1f-separated field */
		char *sep = strcmp(var, "CARGO_ENCODED_RUSTFLAGS") == 0 ? strdup(val) : NULL;

		if (sep != NULL)
			for (char *p = sep; *p != '\0'; p++)
				*p = *p == '\x1f' ? ' ' : *p;
		if (strcmp(var, "CARGO_ENCODED_RUSTFLAGS") == 0 && sep == NULL)
			return -1;
		r = split_words(sep != NULL ? sep : val, "\"'", &t);
		free(sep);
		if (r < 0)
			return -1;
		r = build_flags(&c, &t, 0);
		free(t.buf);
		free(t.v);
		return r;
	}
	if (split_words(val, node ? "\"" : java ? "\"'" : "", &t) < 0)
		return -1;
	if (strcmp(var, "PERL5OPT") == 0)
		r = perl_opts(&c, &t);
	else if (strcmp(var, "RUBYOPT") == 0)
		r = ruby_opts(&c, &t);
	else if (node)
		r = node_opts(&c, &t);
	else if (java)
		r = java_opts_at(&c, &t, strcmp(var, "_OPTS") == 0, 0);
	else
		r = 0;
	free(t.buf);
	free(t.v);
	return r;
}
