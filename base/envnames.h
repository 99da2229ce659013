/*
 * envnames.h - the names of the environment variables that make a later
 * program of the host run or load code from a path (round 38: the one
 * list policy/ binds and `run` judges, and sandbox/gitguard.c's .env
 * check reads; it held a copy of them before). Names only: how each
 * value is read is policy/codevars.c's and policy/bind.c's. Pure.
 */
#ifndef PASSAVANT_ENVNAMES_H
#define PASSAVANT_ENVNAMES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The option and command variables whose value policy_code_options()
 * reads (PERL5OPT, NODE_OPTIONS, EDITOR, CC, CFLAGS, ...). NULL-terminated.
 */
extern const char *const env_code_opt_vars[];

/*
 * The variables naming where every later process loads code from, a
 * ':' list or one path, an empty entry taken as "." (LD_LIBRARY_PATH,
 * LD_PRELOAD, BASH_ENV, PYTHONSTARTUP, ...). NULL-terminated.
 */
extern const char *const env_code_path_vars[];

/*
 * Where a library loads plugins into every program using it (round 36):
 * one path (one), else a ':' list whose empty entry is none; `run`
 * refuses a relative entry. Ends with a NULL name.
 */
struct env_plugin_var {
	const char *name;
	bool one;
};
extern const struct env_plugin_var env_plugin_path_vars[];

/*
 * The start-up files and directories an interpreter reads as code at
 * its start (round 38: R_PROFILE_USER, PHPRC, PHP_INI_SCAN_DIR,
 * JULIA_DEPOT_PATH, IPYTHONDIR, GIT_TEMPLATE_DIR, ...), as
 * env_plugin_path_vars; their relative values are judged by `run`'s
 * table of settings places (proxy/cli/plan.c plan_relative_config(),
 * which knows the readers that expand "~/"). Ends with a NULL name.
 */
extern const struct env_plugin_var env_startup_vars[];

/*
 * The variable of env_code_opt_vars whose reading applies to the
 * variable name (len bytes): itself, or for the families known by a
 * pattern (round 38) the one they are read as: cargo's per-target
 * CARGO_TARGET_<triple>_LINKER as CARGO_HOST_LINKER, _RUNNER and the
 * credential providers as CARGO_REGISTRY_CREDENTIAL_PROVIDER,
 * _RUSTFLAGS as RUSTFLAGS; the cc crate's and go's CC_<target>,
 * TARGET_CC, HOST_CXX, CFLAGS_<target>, ... (a target in lower case,
 * or FOR_<...>: not CC_EMAIL) as CC, CXX, AR, RANLIB, CFLAGS, CXXFLAGS; cmake's CMAKE_<LANG>_COMPILER_LAUNCHER and
 * _LINKER_LAUNCHER as CMAKE_C_COMPILER_LAUNCHER; round 39: cargo's
 * CARGO_ALIAS_<name> as "CARGO_ALIAS_" (cargo's words, read by
 * policy_code_options()), npm's npm_config_<key> (any case, '-' or
 * '_') for the keys naming a program (script-shell, shell, git,
 * node-gyp: GIT_SSH; editor: EDITOR; browser, viewer: BROWSER), node's
 * options (NODE_OPTIONS) or a module loaded (onload-script:
 * NODE_REPL_EXTERNAL_MODULE); round 40: the launchers' JVM options by
 * their name's end (<NAME>_OPTS, _JAVA_OPTIONS, _JVMFLAGS, _JVM_OPTS,
 * _JVM_OPTIONS: CATALINA_OPTS, KAFKA_OPTS, ES_JAVA_OPTS, ...) as
 * "_OPTS", read as a JVM reads its options, and yarn's script shell as
 * GIT_SSH; round 43: erlexec's ERL_OTP<release>_FLAGS (ERL_R16B_FLAGS
 * before OTP 17) as ERL_FLAGS. NULL: none.
 */
const char *env_code_var_as(const char *name, size_t len);

/*
 * Round 40: whether the variable name (len bytes) is a package manager's
 * setting from the environment naming a place of code, read whatever
 * its case and '-' or '_' (npm_config_userconfig, _globalconfig,
 * _prefix; pnpm's pnpmfile, global and store directories, also as
 * pnpm_config_<key>; yarn's YARN_YARN_PATH, _PLUGINS, _CACHE_FOLDER,
 * _GLOBAL_FOLDER, _PREFIX); review 41e: kpathsea's TeX trees by
 * program, read before the plain variable (TEXMFHOME_pdflatex,
 * TEXMFCNF.lualatex: <tree>.<progname>, <tree>_<progname>, a list): 1, and *one (when not NULL) whether its
 * value is one path (else a ':' list), as env_startup_vars'; or 0.
 */
int env_startup_family(const char *name, size_t len, bool *one);

/*
 * Round 41: the separators of a list variable's entries (name, len
 * bytes): ":", or for yarn's plugins (YARN_PLUGINS, any case) ":;"
 * (yarn splits it at ';'), for make's MAKEFILES white space (round 42).
 * And an entry (*e, *len) as the variable's reader takes it: kpathsea's
 * TEXMF* lists mark an entry "!!" (its ls-R database only) and "//"
 * (its subdirectories too, at the end or inside: /a//tex searches
 * every directory under /a, round 42): trimmed to the directory; false
 * when the entry holds a '$' or a '{' (kpathsea expands them: no place
 * passavant can judge before TeX runs). Round 42: nix's NIX_PATH entry
 * "name=place" is trimmed to its place, and one that names no place
 * here (a URL, channel:, flake:) has *len set to 0: skipped. Round 43:
 * Racket's PLTCOMPILEDROOTS entry is cut before its "@(version)", and
 * "same" or a relative root without a ".." component (under each
 * source's own directory) has *len set to 0.
 */
const char *env_list_seps(const char *name, size_t len);
bool env_list_entry(const char *name, size_t nlen, const char **e, size_t *len);
/* Round 42: the length of the entry at s of the list variable (name,
 * nlen bytes): up to its next separator (env_list_seps()), but for
 * NIX_PATH as nix splits it (nixpkgs=channel:nixos-24.05 and
 * nixpkgs=https://x/y.tar.gz are one entry each). */
size_t env_list_len(const char *name, size_t nlen, const char *s);

/* Whether the variable name (len bytes) is one of the four lists or a
 * family of env_code_var_as() (but its "_OPTS", known by a name's end
 * only) or env_startup_family(). */
bool env_code_var_known(const char *name, size_t len);

#endif
