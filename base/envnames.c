/*
 * envnames.c - the names of the variables that make a later program of
 * the host run or load code from a path (envnames.h).
 */
#include "base/envnames.h"

#include "base/attrib.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

const char *const env_code_opt_vars[] = {
	"PERL5OPT", "RUBYOPT", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS",
	/* A program run by path (execvp: the whole value is the file). */
	"GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS",
	/* A command a shell runs (sh -c "$EDITOR file"): its first word. */
	"GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL", "GIT_PAGER", "PAGER",
	"MANPAGER", "SUDO_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "SUDO_EDITOR", "SYSTEMD_EDITOR",
	"SYSTEMD_PAGER", "FCEDIT", "RSYNC_RSH", "LESSOPEN", "LESSCLOSE",
	/* A file run before every program of a runtime: lua's "@file"; the
	 * .NET startup hooks (a ':' list of assemblies, by path or name). */
	"LUA_INIT", "LUA_INIT_5_2", "LUA_INIT_5_3", "LUA_INIT_5_4", "DOTNET_STARTUP_HOOKS",
	/* Round 36: cargo's wrappers and compilers (run by path, a relative
	 * one from the working directory), the browser list, the prompt's
	 * commands, perl's debugger, GTK's modules, the files loaded whole. */
	"RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER",
	"CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER", "RUSTC", "RUSTDOC", "CARGO_BUILD_RUSTC", "CARGO_BUILD_RUSTDOC",
	"BROWSER", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "PROMPT", "RPROMPT", "RPS1", "RPS2", "PERL5DB", "GTK_MODULES", "GTK3_MODULES",
	"MAKEFLAGS", "GNUMAKEFLAGS", "CMAKE_TOOLCHAIN_FILE", "CORECLR_PROFILER_PATH", "CORECLR_PROFILER_PATH_32",
	"CORECLR_PROFILER_PATH_64", "CORECLR_PROFILER_PATH_ARM32", "CORECLR_PROFILER_PATH_ARM64",
	"COR_PROFILER_PATH", "COR_PROFILER_PATH_32", "COR_PROFILER_PATH_64", "PKCS11_MODULE_PATH",
	"PKCS11_PROVIDER_MODULE", "GDK_PIXBUF_MODULE_FILE",
	/* Round 37: the build tools make, configure, cmake and cargo's cc
	 * run by these names (make through a shell: CC="ccache gcc"). */
	"CC", "CXX", "CPP", "LD", "AR", "AS", "NM", "RANLIB", "STRIP", "OBJCOPY", "OBJDUMP", "READELF", "FC", "F77",
	"HOSTCC", "HOSTCXX", "HOSTLD", "CC_FOR_BUILD", "CXX_FOR_BUILD", "CPP_FOR_BUILD", "PKG_CONFIG", "YACC",
	"LEX", "CUDAHOSTCXX", "CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER",
	"CMAKE_C_LINKER_LAUNCHER", "CMAKE_CXX_LINKER_LAUNCHER",
	/* review of round 37: ccache's programs (its prefix commands, the
	 * compiler, the command run to identify it) */
	"CCACHE_PREFIX", "CCACHE_PREFIX_CPP", "CCACHE_COMPILER", "CCACHE_COMPILERCHECK",
	/* round 38: cmake's other languages' compilers */
	"CUDACXX", "HIPCXX", "OBJC", "OBJCXX",
	/* and the flags they pass the compiler and linker (build_flags()) */
	"CARGO_BUILD_RUSTFLAGS", "CARGO_BUILD_RUSTDOCFLAGS",
	"CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "OBJCFLAGS", "FFLAGS", "FCFLAGS", "CGO_CFLAGS",
	"CGO_CXXFLAGS", "CGO_CPPFLAGS", "CGO_LDFLAGS", "RUSTFLAGS", "RUSTDOCFLAGS", "CARGO_ENCODED_RUSTFLAGS",
	/* Round 38: cargo's host linker and flags (the per-target ones are a
	 * family, env_code_var_as()), the programs cargo runs for a
	 * registry's token and `cargo doc --open`; node's REPL module (the
	 * REPL loads it instead of its own) */
	"CARGO_HOST_LINKER", "CARGO_HOST_RUSTFLAGS", "CARGO_REGISTRY_CREDENTIAL_PROVIDER",
	"CARGO_REGISTRY_GLOBAL_CREDENTIAL_PROVIDERS", "CARGO_DOC_BROWSER", "NODE_REPL_EXTERNAL_MODULE",
	/* Round 39: the JVM options the launchers of the build tools and
	 * servers pass to their JVM (mvn, gradle and gradlew, ant, sbt, and
	 * every script reading JAVA_OPTS), read as JAVA_TOOL_OPTIONS is; and
	 * the module python imports at breakpoint() (looked for first in the
	 * script's directory, the working directory for -c, -m, the REPL) */
	"JAVA_OPTS", "MAVEN_OPTS", "GRADLE_OPTS", "ANT_OPTS", "SBT_OPTS", "PYTHONBREAKPOINT",
	/* Round 40: go's flags for every go command (-toolexec=, -exec=:
	 * programs go runs; -overlay=: a file naming the sources it
	 * compiles instead of the module's) */
	"GOFLAGS",
	/* Round 42: the BEAM's flags from the environment (erl reads
	 * ERL_AFLAGS before, ERL_FLAGS and ERL_ZFLAGS after its command
	 * line's; elixir, iex and mix pass ELIXIR_ERL_OPTIONS to erl):
	 * -pa/-pz/-path code paths, -boot, -config, -args_file, -env, the
	 * modules -s/-run/-S run, -eval's code (policy/codevars.c
	 * erl_flags()); GHC's package environment file (its package
	 * databases and packages every ghc and ghci loads); mix's project
	 * file (MIX_EXS: Elixir code every mix runs) */
	"ERL_FLAGS", "ERL_AFLAGS", "ERL_ZFLAGS", "ELIXIR_ERL_OPTIONS", "GHC_ENVIRONMENT", "MIX_EXS",
	/* Round 43: the options every compile of the BEAM's compiler takes
	 * from the environment (compile:env_compiler_options(): erlc,
	 * rebar3, mix's Erlang sources; {parse_transform, Mod} runs Mod,
	 * from the code path, whose first entry is the working directory;
	 * {i, Dir} the headers included); the emulator erlc and escript
	 * run (the program, by path) and the one erlexec runs detached;
	 * stack's project and user configuration files (the compiler, the
	 * programs and the packages every stack build runs) */
	"ERL_COMPILER_OPTIONS", "ERLC_EMULATOR", "ESCRIPT_EMULATOR", "CERL_DETACHED_PROG", "STACK_YAML",
	"STACK_CONFIG", "STACK_GLOBAL_CONFIG",
	/* Review of round 43: OCaml's options every ocamlc and ocamlopt
	 * adds (ppx=, pp=: commands run through the shell at every
	 * compile; cc=, ccopt=, cclib=: the C compiler and its flags;
	 * plugin=: loaded into the compiler; I=, H=: searched) */
	"OCAMLPARAM",
	/* Round 44: findlib's commands (OCAMLFIND_COMMANDS: "tool=program"
	 * items, each program run in the tool's place by every ocamlfind)
	 * and configuration file (findlib.conf: its ocamlc=, ocamlopt=
	 * programs and the package path whose META files name the ppx
	 * commands every build runs); the .NET SDK's muxer (DOTNET_HOST_PATH:
	 * the dotnet MSBuild runs its tasks and tools with), the MSBuild it
	 * runs (MSBUILD_EXE_PATH), and MSBuild's import files, read from
	 * the environment as properties (every environment variable is one)
	 * and imported into every build (their targets run) */
	"OCAMLFIND_COMMANDS", "OCAMLFIND_CONF", "DOTNET_HOST_PATH", "MSBUILD_EXE_PATH",
	"CustomBeforeMicrosoftCommonTargets", "CustomAfterMicrosoftCommonTargets",
	"CustomBeforeMicrosoftCommonProps", "CustomAfterMicrosoftCommonProps",
	"CustomBeforeMicrosoftCSharpTargets", "CustomAfterMicrosoftCSharpTargets",
	"DirectoryBuildPropsPath", "DirectoryBuildTargetsPath", "DirectoryPackagesPropsPath", NULL,
};

/*
 * The dynamic linker's library path, and the start-up files and
 * directory of sh, bash, zsh and interactive python, and the libraries
 * the dynamic linker loads into every program, the places a runtime
 * takes code from whatever program starts it (policy/bind.c).
 */
const char *const env_code_path_vars[] = {
	"LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT", "ENV", "BASH_ENV", "ZDOTDIR", "PYTHONSTARTUP",
	"PYTHONUSERBASE", "PYTHONHOME", "PYTHONPYCACHEPREFIX", "GIT_EXEC_PATH", "GCONV_PATH",
	"OPENSSL_CONF", "OPENSSL_MODULES", "OPENSSL_ENGINES",
	/* review of round 37: where every gcc takes as, ld and cc1 from */
	"COMPILER_PATH", "GCC_EXEC_PREFIX", NULL,
};

const struct env_plugin_var env_plugin_path_vars[] = {
	{"GTK_PATH", false},
	{"GTK_EXE_PREFIX", true},
	{"GST_PLUGIN_PATH", false},
	{"GST_PLUGIN_PATH_1_0", false},
	{"GST_PLUGIN_SYSTEM_PATH", false},
	{"GST_PLUGIN_SYSTEM_PATH_1_0", false},
	{"QT_PLUGIN_PATH", false},
	{"QT_QPA_PLATFORM_PLUGIN_PATH", true},
	{"GIO_MODULE_DIR", true},
	{"GIO_EXTRA_MODULES", false},
	{"GDK_PIXBUF_MODULEDIR", true},
	{"LIBGL_DRIVERS_PATH", false},
	{"LIBVA_DRIVERS_PATH", false},
	{"VDPAU_DRIVER_PATH", true},
	{"__EGL_VENDOR_LIBRARY_DIRS", false},
	{"__EGL_VENDOR_LIBRARY_FILENAMES", false},
	{"VK_ICD_FILENAMES", false},
	{"VK_DRIVER_FILES", false},
	{"VK_ADD_DRIVER_FILES", false},
	{"VK_LAYER_PATH", false},
	{"VK_ADD_LAYER_PATH", false},
	{"VK_IMPLICIT_LAYER_PATH", false},
	{"VK_ADD_IMPLICIT_LAYER_PATH", false},
	{NULL, false},
};

/* Round 38: the interpreters' start-up files and the directories
 * holding them, read as code at every start (R's profile, and its
 * environ files, which set R_PROFILE_USER; PHP's php.ini and scan
 * directory: auto_prepend_file; Julia's depots' config/startup.jl;
 * IPython's profile startup/ and Jupyter's *_config.py; git's
 * template directory, whose hooks `git init` and `clone` copy, and its
 * system config (core.fsmonitor); vim's and ex's start-up commands are
 * EXINIT/VIMINIT, text, not read) */
const struct env_plugin_var env_startup_vars[] = {
	{"R_PROFILE_USER", true},
	{"R_PROFILE", true},
	{"R_ENVIRON_USER", true},
	{"R_ENVIRON", true},
	{"PHPRC", true},
	{"PHP_INI_SCAN_DIR", false},
	{"JULIA_DEPOT_PATH", false},
	{"IPYTHONDIR", true},
	{"JUPYTER_CONFIG_DIR", true},
	{"GIT_TEMPLATE_DIR", true},
	{"GIT_CONFIG_SYSTEM", true},
	/* Round 39 of the attack: the search lists and runtime directories
	 * whose files shells and editors run at their start (fish's
	 * vendor_conf.d and bash-completion's completions under each
	 * XDG_DATA_DIRS entry, neovim's site/plugin there and nvim/plugin
	 * under each XDG_CONFIG_DIRS entry, the desktop's autostart and
	 * systemd's user units and environment.d there; vim's runtime
	 * plugins and system vimrc; bash-completion's user directories;
	 * Emacs' site-start.el on its load path) */
	{"XDG_CONFIG_DIRS", false},
	{"XDG_DATA_DIRS", false},
	{"VIMRUNTIME", true},
	{"VIM", true},
	{"BASH_COMPLETION_USER_DIR", false},
	{"EMACSLOADPATH", false},
	/* and the start-up files a variable moves out of the home, whose
	 * rows (~/.hgrc, ~/.inputrc, ~/.psqlrc, ...) name the home only:
	 * hg's hooks, readline's macros, psql's \!, screen's exec,
	 * starship's custom commands at every prompt, ripgrep's --pre and
	 * bat's --pager, go's GOFLAGS=-toolexec, npm's global script-shell,
	 * the terminals' and multiplexers' shells and Lua, lesskey's #env
	 * LESSOPEN, tig's bindings (GIT_CONFIG_GLOBAL: policy/bind.c) */
	{"HGRCPATH", false},
	{"INPUTRC", true},
	{"PSQLRC", true},
	{"SCREENRC", true},
	{"SYSSCREENRC", true},
	{"STARSHIP_CONFIG", true},
	{"RIPGREP_CONFIG_PATH", true},
	{"BAT_CONFIG_PATH", true},
	{"GOENV", true},
	{"NPM_CONFIG_GLOBALCONFIG", true},
	{"npm_config_globalconfig", true},
	{"WEZTERM_CONFIG_FILE", true},
	{"KITTY_CONFIG_DIRECTORY", true},
	{"ZELLIJ_CONFIG_DIR", true},
	{"ZELLIJ_CONFIG_FILE", true},
	{"LESSKEYIN", true},
	{"LESSKEY", true},
	{"TIGRC_USER", true},
	/* Round 40: the homes of the toolchains and package managers whose
	 * code the host's next build runs: cargo's config.toml, bin/ (its
	 * subcommands) and registry/src/ (build scripts), rustup's
	 * toolchains, gradle's init.d/ and wrapper/dists/, the maven
	 * wrapper's distributions, go's module cache and build cache
	 * (objects linked as they are) and GOPATH's bin/ and pkg/mod/, the
	 * user's cache (go-build, pre-commit's environments, playwright's
	 * browsers), coursier's jars, deno's modules, the version managers'
	 * interpreters and shims, bun's and pnpm's global installs; and the
	 * search lists a shell or an interpreter loads code from by a name
	 * (zsh's autoloaded functions, pwsh's modules, R's libraries,
	 * Julia's load path: its "@" entries name no place) */
	{"CARGO_HOME", true},
	{"RUSTUP_HOME", true},
	{"GRADLE_USER_HOME", true},
	{"MAVEN_USER_HOME", true},
	{"GOPATH", false},
	{"GOMODCACHE", true},
	{"GOCACHE", true},
	/* Round 45 (fix45v): go's own tree (bin/go, pkg/tool/, and go.env:
	 * GOFLAGS and GOTOOLCHAIN for every go it runs) where it is not
	 * the system's; opam's root (~/.opam: policy/mandatory.c) */
	{"GOROOT", true},
	{"OPAMROOT", true},
	{"XDG_CACHE_HOME", true},
	{"COURSIER_CACHE", true},
	{"DENO_DIR", true},
	{"PYENV_ROOT", true},
	{"RBENV_ROOT", true},
	{"NVM_DIR", true},
	{"VOLTA_HOME", true},
	{"SDKMAN_DIR", true},
	{"ASDF_DATA_DIR", true},
	{"BUN_INSTALL", true},
	{"BUN_INSTALL_CACHE_DIR", true},
	{"BUN_INSTALL_GLOBAL_DIR", true},
	{"PNPM_HOME", true},
	{"FPATH", false},
	{"PSModulePath", false},
	{"R_LIBS", false},
	{"R_LIBS_USER", false},
	{"R_LIBS_SITE", false},
	{"JULIA_LOAD_PATH", false},
	/* Round 41: TeX's trees (kpathsea's ':' lists, an entry's "!!"
	 * and "//" its own marks): the user's and the site's texmf trees,
	 * searched before the distribution's (a hyperref.sty or a .lua
	 * there loads into every document), the trees of the formats
	 * every latex run loads (TEXMFVAR/web2c/: \everyjob, and LuaTeX's
	 * bytecode) and of texmf.cnf (TEXMFCNF: shell_escape = t, which
	 * lets every document run \write18 commands); bun's global bin
	 * directory and its cache of transpiled modules (run as they are) */
	{"TEXMFHOME", false},
	{"TEXMFVAR", false},
	{"TEXMFCONFIG", false},
	{"TEXMFCNF", false},
	{"TEXMFLOCAL", false},
	{"TEXMFSYSVAR", false},
	{"TEXMFSYSCONFIG", false},
	{"TEXMFAUXTREES", false},
	/* review 41e: the list of every tree (its value replaces
	 * texmf.cnf's, whose entries name the others) and the
	 * distribution's own trees */
	{"TEXMF", false},
	{"TEXMFDIST", false},
	{"TEXMFMAIN", false},
	{"BUN_INSTALL_BIN", true},
	{"BUN_RUNTIME_TRANSPILER_CACHE_PATH", true},
	/* Round 42: the other ecosystems' homes of code. Elixir: mix's
	 * home (archives/ load into every mix: a task there runs; escripts/
	 * on PATH), its archives directory alone, hex's home (the package
	 * cache every `mix deps.get` unpacks and compiles); Racket: the
	 * user's add-on directory (its collections and installed packages
	 * load before the installation's) and the home it defaults under;
	 * Haskell: cabal's directory (config: the compiler and programs it
	 * runs; store/ and packages/: built and linked into every build),
	 * its config file alone, stack's root (config.yaml, programs/: the
	 * GHC every stack build runs); Dart's package cache (hosted/:
	 * packages every `dart run` compiles; bin/ on PATH); deno's
	 * installed scripts' root (bin/ on PATH); Nix's configuration
	 * (plugin-files, post-build-hook: programs every nix command runs)
	 * and its search path for <nixpkgs> (NIX_PATH: "name=" prefixes,
	 * URLs and channel:/flake: entries name no place here,
	 * env_list_entry()); Octave's site and version start-up files; and
	 * make's MAKEFILES (' ' list of makefiles every make reads first:
	 * their recipes run) */
	{"MIX_HOME", true},
	{"MIX_ARCHIVES", true},
	{"HEX_HOME", true},
	{"PLTADDONDIR", true},
	{"PLTUSERHOME", true},
	{"CABAL_DIR", true},
	{"CABAL_CONFIG", true},
	{"STACK_ROOT", true},
	{"PUB_CACHE", true},
	{"DENO_INSTALL_ROOT", true},
	{"NIX_CONF_DIR", true},
	{"NIX_USER_CONF_FILES", false},
	{"NIX_PATH", false},
	{"OCTAVE_SITE_INITFILE", true},
	{"OCTAVE_VERSION_INITFILE", true},
	{"MAKEFILES", false},
	/* Round 43: what round 42 left of those. mix's dependencies and
	 * build directories (every dependency's mix.exs runs at every mix;
	 * _build's ebin/ is the code path of every mix run), the root they
	 * default under, its extra code paths and Mix.install's cache;
	 * Racket's roots of compiled code (a .zo there loads in place of
	 * the source's; "same" and a relative root without ".." name the
	 * source's own directory, env_list_entry()) and its configuration
	 * directory (config.rktd: the collection and library directories);
	 * the Erlang installation erl starts from (its bin/ and lib/) */
	{"MIX_DEPS_PATH", true},
	{"MIX_BUILD_PATH", true},
	{"MIX_BUILD_ROOT", true},
	{"MIX_PATH", false},
	{"MIX_INSTALL_DIR", true},
	{"PLTCOMPILEDROOTS", false},
	{"PLTCONFIGDIR", true},
	{"ERL_ROOTDIR", true},
	/* Review of round 43: .NET's. The installation apphost and dotnet
	 * load hostfxr and the runtime from (DOTNET_ROOT, and the
	 * architecture's DOTNET_ROOT_<ARCH>), the extra .deps.json files
	 * (or the directories of them) every app's host reads (their
	 * assemblies load into it), the runtime package stores probed for
	 * them, NuGet's global packages folder (every restore's packages:
	 * their build/ .props and .targets run in every build, their
	 * assemblies load) and its credential plugins (programs every
	 * restore runs). The lists are ':' on Linux (the host's
	 * PATH_SEPARATOR); ';' is read as one too (env_list_seps()) */
	{"DOTNET_ROOT", true},
	{"DOTNET_ROOT_X64", true},
	{"DOTNET_ROOT_X86", true},
	{"DOTNET_ROOT_ARM64", true},
	{"DOTNET_ROOT_ARM", true},
	{"DOTNET_ADDITIONAL_DEPS", false},
	{"DOTNET_SHARED_STORE", false},
	{"NUGET_PACKAGES", true},
	{"NUGET_PLUGIN_PATHS", false},
	/* Round 44: OCaml's. findlib's package search path (each package's
	 * META names the archives loaded and the ppx commands run at every
	 * build) and the ld.conf naming the stub libraries' directories;
	 * ocamlrun's stub directories (dll*.so loaded by every bytecode
	 * program), the standard library, the toplevel's include path and
	 * topfind's directory (#use "topfind" runs it). .NET's others: the
	 * CLI directory the SDK resolver takes the SDK from, MSBuild's SDKs
	 * and extension directories (their .props and .targets imported
	 * into every build), the CLI's home (.dotnet/tools: global tools on
	 * PATH) and where single-file apps extract the libraries they run */
	{"OCAMLPATH", false},
	{"OCAMLFIND_LDCONF", true},
	{"CAML_LD_LIBRARY_PATH", false},
	{"OCAMLLIB", true},
	{"CAMLLIB", true},
	{"OCAMLTOP_INCLUDE_PATH", false},
	{"OCAML_TOPLEVEL_PATH", true},
	{"DOTNET_MSBUILD_SDK_RESOLVER_CLI_DIR", true},
	{"MSBuildSDKsPath", true},
	{"MSBuildExtensionsPath", true},
	{"MSBuildUserExtensionsPath", true},
	{"DOTNET_CLI_HOME", true},
	{"DOTNET_BUNDLE_EXTRACT_BASE_DIR", true},
	{NULL, false},
};

/*
 * Round 40: the package managers' settings from the environment that
 * name a place of code, read whatever the name's case and '-' or '_'
 * (npm and pnpm: npm_config_<key>, pnpm_config_<key>; yarn classic and
 * berry: YARN_<KEY>, lower-cased by both): npm's user and global
 * config files (script-shell, node-options) and global prefix (its
 * bin/ and lib/node_modules/), pnpm's pnpmfile (hooks run at every
 * install), global directories and store (files hard-linked into every
 * project), yarn's yarnPath (the program every yarn runs instead of
 * itself), plugins, cache, global folder and prefix.
 */
static const struct {
	const char *prefix, *key;
	bool one;
} startup_family[] = {
	{"npm_config_", "userconfig", true},	  {"npm_config_", "globalconfig", true},
	{"npm_config_", "prefix", true},	  {"npm_config_", "pnpmfile", true},
	{"npm_config_", "global_pnpmfile", true}, {"npm_config_", "global_dir", true},
	{"npm_config_", "global_bin_dir", true},  {"npm_config_", "store_dir", true},
	{"pnpm_config_", "userconfig", true},	  {"pnpm_config_", "globalconfig", true},
	{"pnpm_config_", "prefix", true},	  {"pnpm_config_", "pnpmfile", true},
	{"pnpm_config_", "global_pnpmfile", true}, {"pnpm_config_", "global_dir", true},
	{"pnpm_config_", "global_bin_dir", true}, {"pnpm_config_", "store_dir", true},
	{"yarn_", "yarn_path", true},		  {"yarn_", "plugins", false},
	{"yarn_", "cache_folder", true},	  {"yarn_", "global_folder", true},
	{"yarn_", "prefix", true},
};

/* Review 41e: kpathsea reads a variable by program before the plain one
 * (kpathsea_var_value(): VAR.progname, then VAR_progname, then VAR; a
 * $VAR in texmf.cnf: VAR_progname first), so TEXMFHOME_pdflatex or
 * TEXMFHOME.lualatex names the tree that program loads from. */
static const char *const kpse_trees[] = {"TEXMF",	"TEXMFHOME",   "TEXMFVAR",	 "TEXMFCONFIG",
					 "TEXMFCNF",	"TEXMFLOCAL",  "TEXMFSYSVAR",	 "TEXMFSYSCONFIG",
					 "TEXMFAUXTREES", "TEXMFDIST", "TEXMFMAIN"};

/*
 * Round 45 (fix45v): MSBuild reads every environment variable as a
 * property, and a property's name is read whatever its case: on Linux
 * MSBUILDEXTENSIONSPATH or msbuildextensionspath set in the environment
 * is $(MSBuildExtensionsPath) in every build. The properties of the
 * tables above (env_code_opt_vars' import files, env_startup_vars'
 * directories) and NuGet's RestorePackagesPath (the packages folder a
 * restore fills, as NUGET_PACKAGES: their build/ .props and .targets
 * are imported into every later build) are matched so; the canonical
 * spelling is left to the tables. The .NET host's DOTNET_* and NuGet's
 * own NUGET_* are read by getenv(), whose case counts on Linux.
 */
static const char *const msbuild_props[] = {
	"CustomBeforeMicrosoftCommonTargets", "CustomAfterMicrosoftCommonTargets",
	"CustomBeforeMicrosoftCommonProps",   "CustomAfterMicrosoftCommonProps",
	"CustomBeforeMicrosoftCSharpTargets", "CustomAfterMicrosoftCSharpTargets",
	"DirectoryBuildPropsPath",	      "DirectoryBuildTargetsPath",
	"DirectoryPackagesPropsPath",	      "MSBuildSDKsPath",
	"MSBuildExtensionsPath",	      "MSBuildUserExtensionsPath",
	"RestorePackagesPath",
};

/* The canonical name of the MSBuild property name (len bytes) is, in
 * another case, or NULL (also for the canonical spelling itself). */
static const char *msbuild_prop_other_case(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_LEN(msbuild_props); i++)
		if (strlen(msbuild_props[i]) == len && strncasecmp(name, msbuild_props[i], len) == 0 &&
		    memcmp(name, msbuild_props[i], len) != 0)
			return msbuild_props[i];
	return NULL;
}

int env_startup_family(const char *name, size_t len, bool *one)
{
	const char *prop = msbuild_prop_other_case(name, len);

	/* round 45: MSBuild's directories in any case (the import files
	 * are env_code_var_as()'s); RestorePackagesPath in any case, as
	 * the canonical one is not in env_startup_vars */
	if ((prop != NULL && env_code_var_as(prop, strlen(prop)) == NULL) ||
	    (len == 19 && memcmp(name, "RestorePackagesPath", 19) == 0)) {
		if (one != NULL)
			*one = true;
		return 1;
	}
	for (size_t i = 0; i < ARRAY_LEN(kpse_trees); i++) {
		size_t kl = strlen(kpse_trees[i]);

		if (len > kl + 1 && memcmp(name, kpse_trees[i], kl) == 0 && (name[kl] == '.' || name[kl] == '_')) {
			if (one != NULL)
				*one = false;
			return 1;
		}
	}
	for (size_t i = 0; i < ARRAY_LEN(startup_family); i++) {
		size_t pl = strlen(startup_family[i].prefix), kl = strlen(startup_family[i].key), k = 0;

		if (len != pl + kl || strncasecmp(name, startup_family[i].prefix, pl) != 0)
			continue;
		while (k < kl && (tolower((unsigned char)name[pl + k]) == startup_family[i].key[k] ||
				  (name[pl + k] == '-' && startup_family[i].key[k] == '_')))
			k++;
		if (k == kl) {
			if (one != NULL)
				*one = startup_family[i].one;
			return 1;
		}
	}
	return 0;
}

const char *env_list_seps(const char *name, size_t len)
{
	if (len == 9 && memcmp(name, "MAKEFILES", 9) == 0)
		return " \t\n";
	/* review of round 43: .NET's lists, ':' on Linux, ';' where
	 * written as on Windows (read as a separator too: every part is
	 * then protected or refused) */
	if ((len == 22 && memcmp(name, "DOTNET_ADDITIONAL_DEPS", 22) == 0) ||
	    (len == 19 && memcmp(name, "DOTNET_SHARED_STORE", 19) == 0) ||
	    (len == 18 && memcmp(name, "NUGET_PLUGIN_PATHS", 18) == 0))
		return ":;";
	return len == 12 && strncasecmp(name, "yarn_plugins", 12) == 0 ? ":;" : ":";
}

size_t env_list_len(const char *name, size_t nlen, const char *s)
{
	const char *v = s;
	size_t k, skip = 0;

	if (nlen != 8 || memcmp(name, "NIX_PATH", 8) != 0)
		return strcspn(s, env_list_seps(name, nlen));
	/* nix's own splitting: a place's ':' after a URL's scheme or
	 * channel:, flake: is the place's, not a separator */
	k = strcspn(s, "=:/");
	if (s[k] == '=')
		v = s + k + 1;
	if (strncmp(v, "channel:", 8) == 0) {
		skip = 8;
	} else if (strncmp(v, "flake:", 6) == 0) {
		skip = 6;
	} else {
		k = strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789+.-");
		if (k > 0 && strncmp(v + k, "://", 3) == 0)
			skip = k + 3;
	}
	return (size_t)(v - s) + skip + strcspn(v + skip, ":");
}

/* Whether the path (p, len) has a ".." component. */
static bool dotdot(const char *p, size_t len)
{
	for (size_t k = 0; k + 1 < len; k++)
		if (p[k] == '.' && p[k + 1] == '.' && (k == 0 || p[k - 1] == '/') && (k + 2 == len || p[k + 2] == '/'))
			return true;
	return false;
}

bool env_list_entry(const char *name, size_t nlen, const char **e, size_t *len)
{
	/* Round 42: nix's search path: "name=place" or "place"; a URL
	 * (fetched to nix's own store), "channel:x" and "flake:x" name no
	 * place here */
	if (nlen == 8 && memcmp(name, "NIX_PATH", 8) == 0) {
		const char *eq = memchr(*e, '=', *len);

		if (eq != NULL && memchr(*e, '/', (size_t)(eq - *e)) == NULL)
			*len -= (size_t)(eq + 1 - *e), *e = eq + 1;
		if (memmem(*e, *len, "://", 3) != NULL || (*len >= 8 && strncmp(*e, "channel:", 8) == 0) ||
		    (*len >= 6 && strncmp(*e, "flake:", 6) == 0))
			*len = 0;
		return true;
	}
	/* Round 43: Racket's compiled-file roots: "same" and a relative
	 * root are under each source file's own directory (where compiled/
	 * is by default): no other place, but for a root climbing out of
	 * it with ".."; "@(version)" is Racket's: the place is the
	 * directory before it */
	if (nlen == 16 && memcmp(name, "PLTCOMPILEDROOTS", 16) == 0) {
		const char *at = memmem(*e, *len, "@(", 2);

		if (at != NULL) {
			*len = (size_t)(at - *e);
			while (*len > 1 && (*e)[*len - 1] == '/')
				(*len)--;
		}
		if ((*len == 4 && strncmp(*e, "same", 4) == 0) ||
		    (*len > 0 && (*e)[0] != '/' && !dotdot(*e, *len)))
			*len = 0;
		return true;
	}
	if (nlen < 5 || strncmp(name, "TEXMF", 5) != 0)
		return true;
	if (*len >= 2 && (*e)[0] == '!' && (*e)[1] == '!')
		*e += 2, *len -= 2;
	while (*len > 1 && (*e)[*len - 1] == '/')
		(*len)--;
	/* Round 42: "//" inside an entry (/a//tex) searches every
	 * subdirectory of /a for tex/: the place is /a */
	for (size_t k = 0; k + 1 < *len; k++)
		if ((*e)[k] == '/' && (*e)[k + 1] == '/') {
			*len = k > 0 ? k : 1;
			break;
		}
	return memchr(*e, '$', *len) == NULL && memchr(*e, '{', *len) == NULL;
}

static bool is(const char *name, size_t len, const char *s)
{
	return strlen(s) == len && memcmp(name, s, len) == 0;
}

static bool starts(const char *name, size_t len, const char *p)
{
	return len > strlen(p) && memcmp(name, p, strlen(p)) == 0;
}

static bool ends(const char *name, size_t len, const char *s)
{
	return len > strlen(s) && memcmp(name + len - strlen(s), s, strlen(s)) == 0;
}

static bool has_upper(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			return true;
	return false;
}

/* Whether name holds a character other than an upper-case letter, a
 * digit or '_' (an application's own variable, not a launcher's). */
static bool has_upper_not(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return true;
	return false;
}

const char *env_code_var_as(const char *name, size_t len)
{
	/* the cc crate's (and autoconf's, go's) per-target tools and flags:
	 * CC_x86_64-unknown-linux-gnu, CC_FOR_TARGET, TARGET_CC, HOST_CXX */
	static const char *const tools[] = {"CC", "CXX", "AR", "RANLIB", "CFLAGS", "CXXFLAGS"};
	const char *as;

	for (size_t i = 0; env_code_opt_vars[i] != NULL; i++)
		if (is(name, len, env_code_opt_vars[i]))
			return env_code_opt_vars[i];
	/* Round 45: MSBuild's import files in any case (msbuild_props) */
	if ((as = msbuild_prop_other_case(name, len)) != NULL && env_code_var_as(as, strlen(as)) != NULL)
		return as;
	/* Review of round 39: the java program the JVM launchers run (mvn,
	 * gradle and gradlew, ant, and most JVM scripts: exec "$JAVACMD"),
	 * a program run by path; maven's (3.9) and ant's own arguments from
	 * the environment, before the command line's (MAVEN_ARGS:
	 * -Dmaven.repo.local=, -s/--settings FILE; ANT_ARGS: -lib DIR, whose
	 * jars load), read as the launchers' JVM options are */
	if (is(name, len, "JAVACMD"))
		return "GIT_SSH";
	/* Round 43: erlexec reads ERL_OTP<release>_FLAGS before ERL_AFLAGS
	 * (undocumented; ERL_<release>_FLAGS before OTP 17: ERL_R16B_FLAGS),
	 * the release's digits in the name */
	if (starts(name, len, "ERL_") && ends(name, len, "_FLAGS") && len > 10) {
		const char *m = name + 4;
		size_t ml = len - 10, k = 0;

		if (ml > 3 && memcmp(m, "OTP", 3) == 0)
			k = 3;
		else if (m[0] == 'R')
			k = 1;
		if (k < ml && m[k] >= '0' && m[k] <= '9') {
			while (k < ml && ((m[k] >= '0' && m[k] <= '9') || m[k] == 'A' || m[k] == 'B' || m[k] == '_'))
				k++;
			if (k == ml)
				return "ERL_FLAGS";
		}
	}
	if (is(name, len, "MAVEN_ARGS"))
		return "MAVEN_OPTS";
	if (is(name, len, "ANT_ARGS"))
		return "ANT_OPTS";
	/* Round 41: the arguments bun puts before every bun command's own
	 * (--preload ./x.ts, -r, --config FILE: a bunfig whose preload
	 * runs), read as node's options */
	if (is(name, len, "BUN_OPTIONS"))
		return "NODE_OPTIONS";
	/* cargo's [target.<triple>] and [registries.<name>] tables */
	if (starts(name, len, "CARGO_TARGET_")) {
		if (ends(name, len, "_LINKER"))
			return "CARGO_HOST_LINKER";
		if (ends(name, len, "_RUNNER"))
			return "CARGO_REGISTRY_CREDENTIAL_PROVIDER";
		if (ends(name, len, "_RUSTFLAGS"))
			return "RUSTFLAGS";
	}
	/* Round 40: a profile's codegen backend (-Zcodegen-backend: rustc
	 * dlopen()s one named with a '/') */
	if (starts(name, len, "CARGO_PROFILE_") && ends(name, len, "_CODEGEN_BACKEND"))
		return "CARGO_PROFILE_CODEGEN_BACKEND";
	if ((starts(name, len, "CARGO_REGISTRIES_") && ends(name, len, "_CREDENTIAL_PROVIDER")) ||
	    starts(name, len, "CARGO_CREDENTIAL_ALIAS_"))
		return "CARGO_REGISTRY_CREDENTIAL_PROVIDER";
	/* Round 39: cargo's aliases from the environment (the words after
	 * `cargo NAME`: --config KEY=VALUE sets any of cargo's settings,
	 * --config FILE reads a file of them) */
	if (starts(name, len, "CARGO_ALIAS_"))
		return "CARGO_ALIAS_";
	/* npm's settings from the environment, any case, '-' or '_' (and
	 * pnpm's, which reads them): the programs npm runs (the shell of
	 * every `npm run` script, git, node-gyp, the editor, the browser),
	 * node's options for every script, the module loaded at npm's start */
	if (len > 11 && strncasecmp(name, "npm_config_", 11) == 0) {
		static const struct {
			const char *key, *as;
		} npm[] = {{"script_shell", "GIT_SSH"}, {"shell", "GIT_SSH"},		 {"git", "GIT_SSH"},
			   {"node_gyp", "GIT_SSH"},	    {"editor", "EDITOR"},		 {"browser", "BROWSER"},
			   {"viewer", "BROWSER"},	    {"node_options", "NODE_OPTIONS"}, {"onload_script", "NODE_REPL_EXTERNAL_MODULE"}};

		for (size_t i = 0; i < ARRAY_LEN(npm); i++) {
			size_t k = 0;

			if (strlen(npm[i].key) != len - 11)
				continue;
			while (k < len - 11 && (tolower((unsigned char)name[11 + k]) == npm[i].key[k] ||
						(name[11 + k] == '-' && npm[i].key[k] == '_')))
				k++;
			if (k == len - 11)
				return npm[i].as;
		}
	}
	/* Round 40: yarn classic's shell of every `yarn run` script
	 * (YARN_SCRIPT_SHELL, any case), a program as npm's */
	if (len == 17 && strncasecmp(name, "yarn_script", 11) == 0 && (name[11] == '_' || name[11] == '-') &&
	    strncasecmp(name + 12, "shell", 5) == 0)
		return "GIT_SSH";
	/* Round 40: the launchers' JVM options, a family by its name: every
	 * server's and tool's start script passes <NAME>_OPTS or
	 * <NAME>_JAVA_OPTS to its java (CATALINA_OPTS, KAFKA_OPTS,
	 * HADOOP_OPTS, SPARK_SUBMIT_OPTS, ES_JAVA_OPTS, JENKINS_JAVA_OPTIONS,
	 * ZOOKEEPER's SERVER_JVMFLAGS, ...). Read as "_OPTS" (policy/codevars.c
	 * java_opts(): only what a JVM reads as code, none of the launchers'
	 * own words, so that SSH_OPTS="-p 2222" names nothing) */
	if ((ends(name, len, "_OPTS") || ends(name, len, "_JAVA_OPTIONS") || ends(name, len, "_JVMFLAGS") ||
	     ends(name, len, "_JVM_OPTS") || ends(name, len, "_JVM_OPTIONS")) &&
	    !has_upper_not(name, len))
		return "_OPTS";
	if (starts(name, len, "CMAKE_") && (ends(name, len, "_COMPILER_LAUNCHER") || ends(name, len, "_LINKER_LAUNCHER")))
		return "CMAKE_C_COMPILER_LAUNCHER";
	for (size_t i = 0; i < ARRAY_LEN(tools); i++) {
		size_t tl = strlen(tools[i]);

		for (size_t k = 0; k < 2; k++) {
			const char *pre = k == 0 ? "TARGET_" : "HOST_";

			if (len == strlen(pre) + tl && memcmp(name, pre, strlen(pre)) == 0 &&
			    memcmp(name + strlen(pre), tools[i], tl) == 0)
				return tools[i];
		}
		/* a target is a lower-case triple (x86_64-unknown-linux-gnu,
		 * or with '_'), or go's and autoconf's FOR_<...>: not
		 * CC_EMAIL, an application's own */
		if (len > tl + 1 && memcmp(name, tools[i], tl) == 0 && name[tl] == '_' &&
		    (starts(name + tl + 1, len - tl - 1, "FOR_") || !has_upper(name + tl + 1, len - tl - 1)))
			return tools[i];
	}
	return NULL;
}

bool env_code_var_known(const char *name, size_t len)
{
	const char *as = env_code_var_as(name, len);

	/* a launcher's JVM options known by the name's end only (round
	 * 40): an application's own .env holds CELERY_OPTS, UVICORN_OPTS,
	 * which `run` reads for what a JVM loads, but a .env setting one is
	 * not taken as steering a program */
	if (as != NULL)
		return strcmp(as, "_OPTS") != 0;
	for (size_t i = 0; env_code_path_vars[i] != NULL; i++)
		if (is(name, len, env_code_path_vars[i]))
			return true;
	for (size_t i = 0; env_plugin_path_vars[i].name != NULL; i++)
		if (is(name, len, env_plugin_path_vars[i].name))
			return true;
	for (size_t i = 0; env_startup_vars[i].name != NULL; i++)
		if (is(name, len, env_startup_vars[i].name))
			return true;
	return env_startup_family(name, len, NULL) != 0;
}
