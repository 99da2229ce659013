/*
 * test_codevars.c - policy_code_options(): the paths each option
 * variable's reader loads code from, split as that reader splits.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "policy/policy.h"
#include "tests/support/testlib.h"

/* The paths of one walk, "L:path" (loaded) or "S:path" (searched), ' '
 * separated. */
static char got[2048];

static int collect(void *arg, const char *var, const char *path, bool loaded)
{
	size_t n = strlen(got);

	(void)arg;
	(void)var;
	(void)snprintf(got + n, sizeof(got) - n, "%s%c:%s", n > 0 ? " " : "", loaded ? 'L' : 'S', path);
	return 0;
}

static int stop(void *arg, const char *var, const char *path, bool loaded)
{
	(void)var;
	(void)loaded;
	++*(int *)arg;
	return path[0] == '/' ? 0 : 7;
}

/* The variable fn is called with, in *(const char **)arg. */
static int name_of(void *arg, const char *var, const char *path, bool loaded)
{
	(void)path;
	(void)loaded;
	*(const char **)arg = var;
	return 0;
}

/* The entry env_list_entry() reads in val, var's value (NULL: none). */
static const char *entry_of(const char *var, const char *val)
{
	static char buf[256];
	const char *e = val;
	size_t len = strlen(val);

	if (!env_list_entry(var, strlen(var), &e, &len))
		return NULL;
	(void)snprintf(buf, sizeof(buf), "%.*s", (int)len, e);
	return buf;
}

static bool entry_is(const char *var, const char *val, const char *want)
{
	const char *got_entry = entry_of(var, val);

	return got_entry != NULL && strcmp(got_entry, want) == 0;
}

/* Each row's variable, value and the walk's paths as collect() writes them. */
static void check_rows(const char *const (*rows)[3], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		got[0] = '\0';
		CU_ASSERT(policy_code_options(rows[i][0], rows[i][1], collect, NULL) == 0);
		if (strcmp(got, rows[i][2]) != 0) {
			fprintf(stderr, "%s=%s:\n  got  %s\n  want %s\n", rows[i][0], rows[i][1], got, rows[i][2]);
			CU_FAIL("the paths of an option variable");
		}
	}
}

static void test_options(void)
{
	static const char *const rows[][3] = {
		/* perl: one switch per word, '-' optional; no space after -I. */
		{"PERL5OPT", "-Ilib -w -Mstrict -Mlib=/a,b -mlib=c Id -I e -wIf", "S:lib S:/a S:b S:c S:d"},
		/* ruby: clusters, -I/-r take the rest or the next word; a bare
		 * -r name is searched; W:category ends the word. */
		{"RUBYOPT", "-W:no-deprecated-r -wIa -I b -rjson -r ./x -r/o/y.rb -r /o/z",
		 "S:a S:b L:./x L:./x.rb L:./x.so L:/o/y.rb L:/o/z L:/o/z.rb L:/o/z.so"},
		{"RUBYOPT", "Ic -W2 -T1rd/e -Ebinary:utf-8", "S:c"},
		/* node: '"' groups, the module options and two file options. */
		{"NODE_OPTIONS", "--require \"/a b/x\" -r=./y -rz --import=/m.mjs --openssl-config /s.cnf --inspect",
		 "L:/a b/x L:/a b/x.js L:/a b/x.cjs L:/a b/x.mjs L:/a b/x.json L:/a b/x.node L:./y L:z L:/m.mjs "
		 "L:/s.cnf"},
		{"NODE_OPTIONS", "--require=", "L:"},
		/* yarn PnP's loader as a file: URL (every `yarn run`); data:, node: */
		{"NODE_OPTIONS", "--require /p/.pnp.cjs --experimental-loader file:///p/a%20b/.pnp.loader.mjs",
		 "L:/p/.pnp.cjs L:/p/a b/.pnp.loader.mjs"},
		{"NODE_OPTIONS", "--import=file://localhost/m.mjs --import data:text/javascript,1 -r node:x",
		 "L:/m.mjs"},
		{"NODE_OPTIONS", "--loader file:./l.mjs --import=file://h/m.mjs", "L:file:./l.mjs L:h/m.mjs"},
		/* the JVM: agents up to '=', option files, the lists. */
		{"JAVA_TOOL_OPTIONS",
		 "-Xmx1g '-javaagent:/a b.jar=x=y' -agentpath:l.so -agentlib:jdwp=x -cp a::/b -XX:VMOptionsFile=o "
		 "-Djava.library.path=/n --patch-module m=/p:q @f",
		 "L:/a b.jar L:l.so S:a S:/b L:o S:/n S:/p S:q L:f"},
		{"JDK_JAVA_OPTIONS", "--class-path=c --module-path m -Xbootclasspath/a:/bo -Dfoo=bar", "S:c S:m S:/bo"},
		{"_JAVA_OPTIONS", "-Djava.class.path=/x:y", "S:/x S:y"},
		/* Command variables: the program, when named by a path. */
		{"GIT_SSH", "/w/p/ssh wrap", "L:/w/p/ssh wrap"},
		{"GIT_SSH_COMMAND", "/w/p/s -i key", "L:/w/p/s"},
		{"EDITOR", "'./ed.sh' -w", "L:./ed.sh"},
		{"PAGER", "less -R", ""},
		{"VISUAL", "~/bin/ed", ""},
		{"GIT_ASKPASS", "bin/askpass", "L:bin/askpass"},
		/* The same family (review of round 35): git diff, less, sudoedit. */
		{"GIT_EXTERNAL_DIFF", "/w/p/tools/d.sh", "L:/w/p/tools/d.sh"},
		{"LESSOPEN", "|/w/p/lp.sh %s", "L:/w/p/lp.sh"},
		{"LESSOPEN", "||-./lp.sh %s", "L:./lp.sh"},
		{"LESSOPEN", "| /usr/bin/lesspipe %s", "L:/usr/bin/lesspipe"},
		{"LESSCLOSE", "/usr/bin/lesspipe %s %s", "L:/usr/bin/lesspipe"},
		{"SUDO_EDITOR", "bin/ed -w", "L:bin/ed"},
		{"RSYNC_RSH", "ssh -p 2222", ""},
		/* lua's "@file" (any other value is code); .NET's hooks by path */
		{"LUA_INIT", "@./init.lua", "L:./init.lua"},
		{"LUA_INIT_5_4", "@/w/p/i.lua", "L:/w/p/i.lua"},
		{"LUA_INIT", "print('@x')", ""},
		{"DOTNET_STARTUP_HOOKS", "/w/p/Hook.dll:Named.Hook:h/x.dll", "L:/w/p/Hook.dll L:h/x.dll"},
		/* Round 36: execvp() leaves "~" as it is (a directory "~" in the
		 * working directory); cargo's wrappers; the files loaded whole. */
		{"GIT_SSH", "~/bin/ssh", "L:~/bin/ssh"},
		{"RUSTC_WRAPPER", "./w/sccache", "L:./w/sccache"},
		{"CARGO_BUILD_RUSTC_WRAPPER", "sccache", ""},
		{"CMAKE_TOOLCHAIN_FILE", "tc.cmake", "L:tc.cmake"},
		{"CORECLR_PROFILER_PATH_64", "/p/prof.so", "L:/p/prof.so"},
		/* every command a shell value starts, a prompt's substitutions */
		{"EDITOR", "vi; ./x", "L:./x"},
		{"PROMPT_COMMAND", "history -a; A=1 ./p.sh && x|/q/r", "L:./p.sh L:/q/r"},
		{"PS1", "\\u@\\h $(./g.sh) `/b/t` ${debian_chroot:+($debian_chroot)} \"$(y/z)\"", "L:./g.sh L:/b/t L:y/z"},
		{"RPROMPT", "%~ $(./rp.sh)", "L:./rp.sh"},
		/* a quote left open ends with the value */
		{"EDITOR", "vi 'x", ""},
		{"PROMPT_COMMAND", "./a \"b", "L:./a"},
		{"PS1", "$(./c '", "L:./c"},
		{"PROMPT", "$P$G", ""},
		{"PS1", "$(__git_ps1 \" (%s)\") \\w/x; ./not", ""},
		{"GIT_SSH_COMMAND", "ssh -o 'SendEnv=a;b' -i ./k", ""},
		/* ssh's -F file, -I library, -o commands and providers */
		{"GIT_SSH_COMMAND",
		 "ssh -F ./ssh_config -o 'ProxyCommand=./pc %h' -oLocalCommand=/l/c -I p11.so -o PKCS11Provider=none -F none",
		 "L:./ssh_config L:./pc L:/l/c L:p11.so"},
		{"RSYNC_RSH", "/usr/bin/ssh -o \"ProxyCommand ssh -W %h:%p jump\" -o SecurityKeyProvider=sk/x.so",
		 "L:/usr/bin/ssh L:sk/x.so"},
		{"BROWSER", "firefox:./b.sh %s:/o/br --new:~/bin/br", "L:./b.sh L:/o/br L:~/bin/br"},
		{"PERL5DB", "BEGIN { require './db.pl'; require Devel::NYTProf; do(\"/x/d.pl\"); }", "L:./db.pl L:/x/d.pl"},
		{"PERL5DB", "BEGIN { require \"perl5db.pl\" }", ""},
		{"GTK_MODULES", "canberra-gtk-module:./m.so:/o/n.so", "L:./m.so L:/o/n.so"},
		{"MAKEFLAGS", "s -j4 --eval=include\\ ./x.mk --eval=$(shell\\ /p/s.sh) -E x:;t/r", "L:./x.mk L:/p/s.sh L:t/r"},
		{"GNUMAKEFLAGS", " -j4 --jobserver-auth=3,4 -- V=1", ""},
		{"JAVA_TOOL_OPTIONS", "-agentlib:../x=y -agentlib:jdwp=transport=dt_socket,address=a/b -Xrun../z \"-XX:OnError=./e.sh %p;/bin/gdb\"",
		 "L:lib../x.so L:lib../z.so L:./e.sh L:/bin/gdb"},
		{"OTHER", "-I/x", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	/* A non-zero result stops the walk and is returned. */
	{
		int n = 0;

		CU_ASSERT(policy_code_options("PERL5OPT", "-I/a -Ib -Ic", stop, &n) == 7);
		CU_ASSERT(n == 2);
	}
	CU_ASSERT(strcmp(env_code_opt_vars[0], "PERL5OPT") == 0);
}

/*
 * The review of round 36 (review36b): a command's program behind the
 * words that run the next one (exec, eval, command, env, sudo, nohup,
 * time, '!', '{', if/then, timeout, ...) and a shell's or an
 * interpreter's script or -c string are read as the program itself;
 * the prompts, pagers, editors and ssh commands of real environments
 * name nothing.
 */
static void test_command_words(void)
{
	static const char *const rows[][3] = {
		{"PROMPT_COMMAND", "exec ./x", "L:./x"},
		{"PROMPT_COMMAND", "eval ./x", "L:./x"},
		{"EDITOR", "eval '/bin/true;./x'", "L:/bin/true L:./x"},
		{"EDITOR", "env A=1 -u B ./x", "L:./x"},
		{"EDITOR", "/usr/bin/env ./x", "L:/usr/bin/env L:./x"},
		{"EDITOR", "command ./x", "L:./x"},
		{"EDITOR", "nohup ./x", "L:./x"},
		{"EDITOR", "{ ./x; }", "L:./x"},
		{"EDITOR", "if true; then ./x; fi", "L:./x"},
		{"EDITOR", "! ./x", "L:./x"},
		{"EDITOR", "time -p ./x", "L:./x"},
		{"EDITOR", "sudo -u me ./x", "L:./x"},
		{"EDITOR", "timeout 5 ./x", "L:./x"},
		{"EDITOR", "bash x", "L:x"},
		{"EDITOR", "python3 -u ed.py", "L:ed.py"},
		{"PROMPT_COMMAND", "sh -c ./x", "L:./x"},
		{"GIT_PAGER", "bash -lc 'cd /; ./x'", "L:./x"},
		{"PS1", "$(exec ./g.sh)", "L:./g.sh"},
		{"GIT_SSH_COMMAND", "env ssh -o ProxyCommand=./p", "L:./p"},
		/* bash 5.3's and mksh's "${ cmd; }", "${| cmd; }" */
		{"PS1", "\\w ${ ./x; } ${|./y; }$ ", "L:./x L:./y"},
		{"PROMPT_COMMAND", "${ ./x; }", "L:./x"},
		{"PS1", "${debian_chroot:+($debian_chroot)}\\u ${HOME}/a ${X:-b/c} ${#Y}$ ", ""},
		/* ordinary values */
		{"MANPAGER", "sh -c 'col -bx | bat -l man -p'", ""},
		{"EDITOR", "code --wait", ""},
		{"EDITOR", "emacsclient -t -a \"\"", ""},
		{"EDITOR", "env TERM=xterm-256color vim", ""},
		{"SUDO_EDITOR", "sudo -e", ""},
		{"PAGER", "less -R", ""},
		{"PROMPT_COMMAND", "_direnv_hook;__vte_prompt_command", ""},
		{"PROMPT_COMMAND", "starship_precmd; history -a; history -n", ""},
		{"PS1", "$(git branch 2>/dev/null | sed -n \"s/* \\(.*\\)/ (\\1)/p\")$ ", ""},
		{"GIT_SSH_COMMAND", "ssh -i ~/.ssh/k -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null", ""},
		{"BROWSER", "wslview:xdg-open", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
}

/*
 * Round 37: a precommand's options read as it reads them, so that the
 * program it runs is the word judged (env -S's words, script's and
 * flock's -c command lines; an option's argument is not a program:
 * `sudo -u node vim`, `env -C /w/p vim`, `env -i PATH=/usr/bin make`);
 * python's -m module from the working directory; the build tools'
 * variables (CC=./cc).
 */
static void test_precommands(void)
{
	static const char *const rows[][3] = {
		/* caught */
		{"EDITOR", "env -S 'sh x'", "L:x"},
		{"EDITOR", "env -S'python3 ed.py' -w", "L:ed.py"},
		{"EDITOR", "env --split-string='-i ./x'", "L:./x"},
		{"EDITOR", "script -qc 'sh x' /dev/null", "L:x"},
		{"EDITOR", "flock /w/p/.lock -c 'bash x'", "L:x"},
		{"EDITOR", "python3 -m myeditor", "L:./myeditor.py"},
		{"PAGER", "python3 -u -mrich.pager", "L:./rich.py"},
		{"EDITOR", "python3 -W ignore ed.py", "L:ed.py"},
		{"EDITOR", "python3 -c 'import sys, json as j, a.b; from rich.pager import x' f", "L:./json.py L:./a.py L:./rich.py"},
		{"PAGER", "python3 -uc 'import pager_v;pager_v.run()'", "L:./pager_v.py"},
		{"EDITOR", "node -r /usr/lib/x.js ./ed.js", "L:/usr/lib/x.js L:./ed.js"},
		{"EDITOR", "node --import=/m.mjs -C dev --title t ed.js", "L:/m.mjs L:ed.js"},
		{"EDITOR", "ruby -I /usr/lib/r -r /o/y.rb ./ed.rb", "S:/usr/lib/r L:/o/y.rb L:./ed.rb"},
		{"EDITOR", "ruby -w -rjson -C /tmp ed.rb", "L:ed.rb"},
		{"CC", "./cc", "L:./cc"},
		{"CC", "ccache ./cc -m32", "L:./cc"},
		{"CXX", "/w/p/bin/c++ -std=c++17", "L:/w/p/bin/c++"},
		{"AR", "tools/ar", "L:tools/ar"},
		{"CMAKE_C_COMPILER_LAUNCHER", "ccache;./l", "L:./l"},
		/* the program behind options that take an argument */
		{"EDITOR", "env -u X ./x", "L:./x"},
		{"EDITOR", "sudo -u user ./x", "L:./x"},
		{"EDITOR", "timeout -s KILL 5 ./x", "L:./x"},
		{"EDITOR", "nice -n 5 ./x", "L:./x"},
		{"EDITOR", "nice -5 sh x", "L:x"},
		{"EDITOR", "stdbuf -o L ./x", "L:./x"},
		{"EDITOR", "chrt 10 ./x", "L:./x"},
		{"EDITOR", "taskset -c 0-3 ./x", "L:./x"},
		{"EDITOR", "ionice -c 3 ./x", "L:./x"},
		{"EDITOR", "time -o /w/p/t.log ./x", "L:./x"},
		{"EDITOR", "exec -a vim ./x", "L:./x"},
		{"EDITOR", "sudo -u me env -C /w/p ./x", "L:./x"},
		{"EDITOR", "env -- ./x", "L:./x"},
		{"EDITOR", "timeout -- 5 ./x", "L:./x"},
		{"EDITOR", "timeout -k 1 -- 5 sh x", "L:x"},
		/* round 37's review: the other programs that run their operand */
		{"EDITOR", "firejail --private=/tmp --net=none ./x", "L:./x"},
		{"EDITOR", "valgrind --tool=memcheck -q ./x", "L:./x"},
		{"EDITOR", "strace -f -o /tmp/l ./x", "L:./x"},
		{"EDITOR", "unshare -r ./x", "L:./x"},
		{"EDITOR", "setarch x86_64 -R ./x", "L:./x"},
		{"EDITOR", "su - root -c './x'", "L:./x"},
		{"EDITOR", "sg grp -c 'sh x'", "L:x"},
		{"EDITOR", "watch -n 1 ./x", "L:./x"},
		{"EDITOR", "/lib64/ld-linux-x86-64.so.2 ./x", "L:/lib64/ld-linux-x86-64.so.2 L:./x"},
		{"EDITOR", "nice -n 5 rlwrap -a ./x", "L:./x"},
		/* the shell's builtins that read a file or a text as commands */
		{"PROMPT_COMMAND", "source prompt.sh", "L:prompt.sh"},
		{"PROMPT_COMMAND", ". ./x", "L:./x"},
		{"PROMPT_COMMAND", "trap -- 'sh x' EXIT", "L:x"},
		{"PROMPT_COMMAND", "function f { ./x; }; f", "L:./x"},
		{"PROMPT_COMMAND", "enable -f ./b.so b", "L:./b.so"},
		/* round 37's review: inline code naming a file it reads or runs */
		{"PAGER", "python3 -c 'exec(open(\"e.py\").read())'", "L:e.py"},
		{"EDITOR", "python3 -I -c \"import os; os.system('./x')\"", "L:./x"},
		{"EDITOR", "node -e 'require(\"./ed\")'", "L:./ed"},
		{"EDITOR", "node --eval \"require('ed')\"", "L:ed"},
		{"EDITOR", "perl -we 'do \"./x\"'", "L:./x"},
		{"EDITOR", "ruby -e 'load \"x.rb\"'", "L:x.rb"},
		{"EDITOR", "php -r 'include \"x.php\";'", "L:x.php"},
		{"EDITOR", "lua -e 'dofile(\"x.lua\")'", "L:x.lua"},
		/* an option not known: every later word with a '/' */
		{"EDITOR", "sudo --weird /w/p/x ./y", "L:/w/p/x L:./y"},
		{"EDITOR", "timeout -Z a/b c", "L:a/b"},
		/* legitimate look-alikes */
		{"EDITOR", "sudo -u node vim", ""},
		{"EDITOR", "exec -a sh vim", ""},
		{"EDITOR", "env -C /w/p vim", ""},
		{"EDITOR", "env -i PATH=/usr/bin make", ""},
		{"EDITOR", "flock /w/p/.lock vim", ""},
		{"EDITOR", "xargs -a /w/p/list vim", ""},
		{"EDITOR", "sudo -e /w/p/f", ""},
		{"EDITOR", "firejail --noprofile vim", ""},
		{"PAGER", "perl -pe 's/\\e\\[?.*?[\\@-~]//g'", ""},
		{"PAGER", "perl -lne 'print'", ""},
		{"EDITOR", "ruby -ne 'puts $_'", ""},
		{"PAGER", "python3 -c 'print(\"hello world\"); import sys; sys.stdout.write(sys.stdin.read())'", ""},
		{"EDITOR", "perl -we 'print \"hi\"' ./arg", ""},
		{"EDITOR", "strace -e trace=file vim", ""},
		{"EDITOR", "su - me", ""},
		{"PROMPT_COMMAND", "history -a; echo -ne \"\\033]0;${USER}@${HOSTNAME}: ${PWD/$HOME/~}\\007\"", ""},
		{"PROMPT_COMMAND", "source ~/.bash_prompt; trap - DEBUG", ""},
		{"EDITOR", "python3 -I -m myeditor", ""},
		{"EDITOR", "python3 -P -m myeditor", ""},
		{"EDITOR", "python3 -I -c 'import x'", ""},
		{"PAGER", "python3 -c 'import sys, builtins; from . import z; print(1)'", ""},
		{"EDITOR", "node --inspect -e 'require(1)'", ""},
		{"EDITOR", "ruby -e 'puts 1'", ""},
		{"CC", "gcc", ""},
		{"CC", "ccache gcc", ""},
		{"CC", "zig cc -target x86_64-linux-gnu", ""},
		{"PKG_CONFIG", "pkg-config --static", ""},
		{"CMAKE_CXX_COMPILER_LAUNCHER", "ccache", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
}

/*
 * Round 37: the compiler's and linker's flags that run or load a
 * program: -B and -specs= whatever their value, the plugins, wrappers,
 * linkers and backends with a '/'; the flags real builds set name
 * nothing.
 */
static void test_build_flags(void)
{
	static const char *const rows[][3] = {
		{"CFLAGS", "-O2 -fplugin=./p.so -g", "L:./p.so"},
		{"CXXFLAGS", "-B tools -Bbin/ -specs=my.specs", "L:tools L:bin/ L:my.specs"},
		{"LDFLAGS", "-fuse-ld=./ld -Wl,-O1 --ld-path=bin/ld", "L:./ld L:bin/ld"},
		{"CFLAGS", "-wrapper ./w,-v -Xclang -load -Xclang ./pl.so -fpass-plugin=x/p.so", "L:./w L:./pl.so L:x/p.so"},
		{"RUSTFLAGS", "-C linker=./cc -Clinker=/w/p/ld -Z codegen-backend=b/x.so", "L:./cc L:/w/p/ld L:b/x.so"},
		{"CARGO_ENCODED_RUSTFLAGS", "-C\x1flinker=./cc", "L:./cc"},
		{"CGO_LDFLAGS", "\"-B./t\"", "L:./t"},
		/* round 37's review: the other spellings, gcc's, the linker's, rustc's */
		{"CFLAGS", "@opts --prefix=./a --prefix b --specs ./s -iplugindir=p -fplugin=x", "L:opts L:./a L:b "
			"L:./s L:p"},
		{"LDFLAGS", "-Bstatic -Bdynamic -Bsymbolic-functions", "L:static L:dynamic L:symbolic-functions"},
		{"LDFLAGS", "-Wl,-O1,-plugin,./p.so -Xlinker --plugin=/w/p/q.so -Wl,@lf -Xlinker -plugin -Xlinker "
			"x/r.so",
		 "L:./p.so L:/w/p/q.so L:lf L:x/r.so"},
		{"CPPFLAGS", "-C -B./t", "L:./t"},
		{"RUSTFLAGS", "--codegen linker=./a --codegen=linker=./b -C link-arg=-B./t @rf", "L:./a L:./b L:./t "
			"L:rf"},
		{"RUSTFLAGS", "-Clink-args=\"-fuse-ld=./ld -Wl,-plugin,./p.so\" -Z llvm-plugins=./q.so,/r.so,s",
		 "L:./ld L:./p.so L:./q.so L:/r.so"},
		{"RUSTDOCFLAGS", "-Z pre-link-arg=-specs=x.specs", "L:x.specs"},
		{"CC", "gcc -B./tools", "L:./tools"},
		{"CXX", "ccache g++ -specs=./s -fplugin=./p.so", "L:./s L:./p.so"},
		{"LD", "ld -plugin ./p.so", "L:./p.so"},
		{"CCACHE_PREFIX", "./distcc-wrap", "L:./distcc-wrap"},
		{"CCACHE_COMPILERCHECK", "tools/ck %compiler%", "L:tools/ck"},
		{"CARGO_BUILD_RUSTFLAGS", "-C linker=./cc", "L:./cc"},
		/* what builds set */
		{"CFLAGS", "-O2 -g -pipe -Wall -Iinclude -I../lib -isystem /opt/conda/include -march=native -fPIC", ""},
		{"LDFLAGS", "-L../lib -Wl,-rpath,$ORIGIN -fuse-ld=lld -Wl,-Bstatic -Wl,-Bdynamic "
			"-Wl,-Bsymbolic-functions", ""},
		{"LDFLAGS", "-Wl,-Bsymbolic-functions -flto=auto -ffat-lto-objects -Wl,-z,relro -Wl,-z,now "
			"-Wl,--as-needed", ""},
		{"CFLAGS", "-g -O2 -ffile-prefix-map=/build/p=. -fstack-protector-strong -Wformat "
			"-Werror=format-security", ""},
		{"CPPFLAGS", "-Wdate-time -D_FORTIFY_SOURCE=2 -C", ""},
		{"RUSTFLAGS", "-C link-arg=-fuse-ld=mold -Clink-arg=-Wl,--as-needed -Zshare-generics=y --cfg "
			"tokio_unstable", ""},
		{"LDFLAGS", "-Wl,-plugin-opt=O3 -Xlinker -plugin-opt=mcpu=x -Wl,-plugin,liblto_plugin.so", ""},
		{"CC", "ccache gcc -std=gnu11 -m32", ""},
		{"CCACHE_PREFIX", "distcc", ""},
		{"CCACHE_COMPILERCHECK", "content", ""},
		{"CARGO_BUILD_RUSTFLAGS", "-C target-cpu=native", ""},
		{"CXX", "clang++ -stdlib=libc++ -fuse-ld=lld", ""},
		{"CFLAGS", "-fplugin=annobin -specs=/usr/share/dpkg/no-pie-compile.specs -B/usr/libexec/mold",
		 "L:/usr/share/dpkg/no-pie-compile.specs L:/usr/libexec/mold"},
		{"RUSTFLAGS", "-C target-cpu=native -C linker=clang -C link-arg=-fuse-ld=mold", ""},
		{"CARGO_ENCODED_RUSTFLAGS", "-Dwarnings", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
}

/*
 * Round 37's review: precommands nested by a long value (sudo sudo
 * ... ./x recursed once a word: ASan's stack overflowed; env -Senv
 * -S... held a copy of the rest at each level: 1.5 GB, 16 s) are read
 * loosely past 32: ./x still named, in well under a second.
 */
static void test_nested_precommands(void)
{
	static const char *const unit[] = {"sudo ", "env ", "env -S", "nice -n 1 "};
	static char val[130000];

	for (size_t u = 0; u < sizeof(unit) / sizeof(unit[0]); u++) {
		size_t ul = strlen(unit[u]), n = 0;
		struct timespec a, b;
		long ms;
		int r;

		while (n + ul + 4 < sizeof(val)) {
			memcpy(val + n, unit[u], ul);
			n += ul;
		}
		memcpy(val + n, "./x", 4);
		got[0] = '\0';
		(void)clock_gettime(CLOCK_MONOTONIC, &a);
		r = policy_code_options("EDITOR", val, collect, NULL);
		(void)clock_gettime(CLOCK_MONOTONIC, &b);
		CU_ASSERT(r == 0);
		ms = (long)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
		if (strstr(got, "./x") == NULL || ms > 1000) {
			fprintf(stderr, "%.20s x %zu: got %.80s in %ld ms\n", unit[u], n / ul, got, ms);
			CU_FAIL("nested precommands: ./x named in a second");
		}
	}
}

/*
 * Round 38: the variables known by a pattern (cargo's per-target linker,
 * runner and flags, its credential providers, the cc crate's per-target
 * tools and flags, cmake's launchers of every language), a
 * precommand's options whose argument is code (su -s, fakeroot -l,
 * ld.so --library-path/--preload/--audit, unshare -R, nsenter -r),
 * perl -c (BEGIN blocks run) and -I, php -c/-z/-d, clang's toolchain,
 * sysroot and config file; and what builds and shells set, nothing.
 */
static void test_families_r38(void)
{
	static const char *const rows[][3] = {
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER", "./ld", "L:./ld"},
		{"CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER", "qemu-aarch64 -L /usr/aarch64-linux-gnu", ""},
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "sudo -E ./r", "L:./r"},
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "python3 run.py", "L:run.py"},
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS", "-C linker=./cc", "L:./cc"},
		{"CARGO_HOST_LINKER", "tools/ld", "L:tools/ld"},
		{"CARGO_REGISTRIES_MY_CREDENTIAL_PROVIDER", "./cred --x", "L:./cred"},
		{"CARGO_REGISTRY_CREDENTIAL_PROVIDER", "cargo:token", ""},
		{"CARGO_REGISTRY_GLOBAL_CREDENTIAL_PROVIDERS", "cargo:token ./cred", "L:./cred"},
		{"CARGO_CREDENTIAL_ALIAS_MINE", "/w/p/cred", "L:/w/p/cred"},
		{"CC_x86_64-unknown-linux-gnu", "./cc", "L:./cc"},
		{"CC_x86_64_unknown_linux_gnu", "ccache ./cc", "L:./cc"},
		{"TARGET_CC", "gcc -B./t", "L:./t"},
		{"HOST_CXX", "tools/c++", "L:tools/c++"},
		{"CFLAGS_aarch64_unknown_linux_gnu", "-fplugin=./p.so", "L:./p.so"},
		{"CC_FOR_TARGET", "./cc", "L:./cc"},
		{"CC_EMAIL", "a/b", ""},
		{"CMAKE_CUDA_COMPILER_LAUNCHER", "./l", "L:./l"},
		{"CUDACXX", "./nvcc", "L:./nvcc"},
		{"NODE_REPL_EXTERNAL_MODULE", "repl.js", "L:repl.js"},
		{"CARGO_TARGET_DIR", "./target", ""},
		/* precommands' options that run or load code */
		{"EDITOR", "su -s ./sh root", "L:./sh"},
		{"EDITOR", "su -s sh-v root -c vim", "L:sh-v"},
		{"EDITOR", "su -c vim -s ./sh root", "L:./sh"},
		{"EDITOR", "su --shell=./sh root", "L:./sh"},
		{"EDITOR", "su -c '/bin/true; ./x' root", "L:/bin/true L:./x"},
		{"EDITOR", "su root x", "L:x"},
		{"EDITOR", "runuser -u me -- ./x", "L:./x"},
		{"EDITOR", "fakeroot -l ./lib.so vim", "L:./lib.so"},
		{"EDITOR", "fakeroot --faked ./faked vim", "L:./faked"},
		{"EDITOR", "ld.so --library-path lib /usr/bin/vim", "L:lib L:/usr/bin/vim"},
		{"EDITOR", "/lib64/ld-linux-x86-64.so.2 --preload './a.so b.so' --audit x/au.so /usr/bin/vim",
		 "L:/lib64/ld-linux-x86-64.so.2 L:./a.so L:x/au.so L:/usr/bin/vim"},
		{"EDITOR", "unshare -r -R ./root /bin/sh", "L:./root L:/bin/sh"},
		{"EDITOR", "nsenter -r./root -t 1 /bin/sh", "L:./root L:/bin/sh"},
		{"EDITOR", "nsenter -r -t 1 vim", ""},
		/* interpreters */
		{"EDITOR", "perl -c ./x.pl", "L:./x.pl"},
		{"EDITOR", "perl -I. -MEd -e1", "S:."},
		{"EDITOR", "php -c ./php.ini x.php", "L:./php.ini L:x.php"},
		{"EDITOR", "php -d auto_prepend_file=p.php -r 1", "L:p.php"},
		{"EDITOR", "php -z ./ext.so -d extension=./e.so -d memory_limit=1G -r 1", "L:./ext.so L:./e.so"},
		/* clang's toolchain, sysroot and config file */
		{"CC", "clang --gcc-toolchain=./t", "L:./t"},
		{"CFLAGS", "--sysroot=./s --config x.cfg --gcc-install-dir=g", "L:./s L:x.cfg L:g"},
		/* what builds and shells set */
		{"CFLAGS", "-isysroot /opt/sdk -O2", ""},
		{"CC_x86_64_unknown_linux_gnu", "x86_64-linux-gnu-gcc", ""},
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER", "clang", ""},
		{"EDITOR", "su - me -c vim", ""},
		{"EDITOR", "fakeroot vim", ""},
		{"EDITOR", "perl -c -w", ""},
		{"EDITOR", "php -d memory_limit=-1 -r 1", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	/* the names: a family is read as its kind, an application's own is not */
	CU_ASSERT(env_code_var_as("CARGO_TARGET_X_LINKER", 21) != NULL);
	CU_ASSERT(env_code_var_as("CC_EMAIL", 8) == NULL);
	CU_ASSERT(env_code_var_known("R_PROFILE_USER", 14));
	CU_ASSERT(env_code_var_known("JULIA_DEPOT_PATH", 16));
	CU_ASSERT(!env_code_var_known("CARGO_TARGET_DIR", 16));
}

/*
 * Round 39: a module imported by its name (PYTHONBREAKPOINT), the JVM
 * options of the launchers (MAVEN_OPTS, GRADLE_OPTS, JAVA_OPTS, ...),
 * cargo's aliases from the environment (--config KEY=VALUE read as the
 * variable cargo reads, --config FILE), npm's settings naming a program
 * (npm_config_script_shell, ...), find's -exec, chroot's root and
 * envdir's directory, and the supervisors and launchers that run their
 * operand; what developers set, nothing.
 */
static void test_families_r39(void)
{
	static const char *const rows[][3] = {
		{"PYTHONBREAKPOINT", "evm.f", "L:./evm.py"},
		{"PYTHONBREAKPOINT", "ipdb.set_trace", "L:./ipdb.py"},
		{"MAVEN_OPTS", "-Xmx2g -javaagent:./ag.jar", "L:./ag.jar"},
		{"GRADLE_OPTS", "-Dorg.gradle.daemon=false -Dgradle.user.home=gh", "L:gh"},
		{"JAVA_OPTS", "-agentpath:./a.so", "L:./a.so"},
		{"SBT_OPTS", "-cp lib", "S:lib"},
		{"ANT_OPTS", "-Dmaven.repo.local=./r -Dmaven.ext.class.path=/e.jar:x.jar", "L:./r S:/e.jar S:x.jar"},
		{"CARGO_ALIAS_B", "build --config build.rustc-wrapper=\"./w\"", "L:./w"},
		{"CARGO_ALIAS_T", "test --config 'target.x86_64-unknown-linux-gnu.runner=[\"./r\", \"-q\"]'", "L:./r"},
		{"CARGO_ALIAS_X", "run --config=cfg.toml", "L:cfg.toml"},
		{"CARGO_ALIAS_Y", "build --config build.rustflags=[\"-Clinker=./cc\"]", "L:./cc"},
		{"npm_config_script_shell", "./sh", "L:./sh"},
		{"NPM_CONFIG_SCRIPT_SHELL", "tools/sh", "L:tools/sh"},
		{"npm_config_script-shell", "./sh", "L:./sh"},
		{"npm_config_git", "./git", "L:./git"},
		{"npm_config_node_options", "--require ./hook.js", "L:./hook.js"},
		{"npm_config_editor", "./ed -w", "L:./ed"},
		{"npm_config_onload_script", "on.js", "L:on.js"},
		{"EDITOR", "find . -name x -exec ./x {} \\;", "L:./x"},
		{"EDITOR", "find . -execdir sh ./y {} + -print", "L:./y"},
		{"EDITOR", "find . -exec {} ;", "L:{}"},
		{"EDITOR", "chroot ./r /bin/sh", "L:./r L:/bin/sh"},
		{"EDITOR", "chroot --userspec=u:g r vim", "L:r"},
		{"EDITOR", "envdir ./env vim", "L:./env"},
		{"EDITOR", "gosu me ./x", "L:./x"},
		{"EDITOR", "tini -s -- ./x", "L:./x"},
		{"EDITOR", "dumb-init ./x", "L:./x"},
		{"EDITOR", "mpirun -np 4 ./x", "L:./x"},
		{"EDITOR", "busybox sh ./x", "L:./x"},
		{"EDITOR", "nice -n 5 ionice -c2 -n7 taskset -c 0,1 timeout 5 stdbuf -o0 ./x", "L:./x"},
		{"EDITOR", "xargs -0 ./x", "L:./x"},
		/* what developers set */
		{"PYTHONBREAKPOINT", "0", ""},
		{"PYTHONBREAKPOINT", "pdb.set_trace", ""},
		{"PYTHONBREAKPOINT", "", ""},
		{"MAVEN_OPTS", "-Xmx2g -Dmaven.repo.local=/home/u/.m2/repository", "L:/home/u/.m2/repository"},
		{"GRADLE_OPTS", "-Dorg.gradle.jvmargs=-Xmx2g", ""},
		{"CARGO_ALIAS_B", "build --release --config profile.release.lto=true", ""},
		{"CARGO_ALIAS_XTASK", "run --package xtask --", ""},
		{"npm_config_script_shell", "/bin/bash", "L:/bin/bash"},
		{"npm_config_script_shell", "bash", ""},
		{"npm_config_registry", "./x", ""},
		{"EDITOR", "find . -name '*.o' -delete", ""},
		{"EDITOR", "find /w -exec grep -l x {} +", ""},
		{"EDITOR", "gosu me vim", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	CU_ASSERT(env_code_var_known("CARGO_ALIAS_B", 13));
	CU_ASSERT(env_code_var_known("Npm_Config_Script_Shell", 23));
	CU_ASSERT(!env_code_var_known("npm_config_registry", 19));
	CU_ASSERT(env_code_var_known("MAVEN_OPTS", 10));
	{
		/* named by the variable set, read as the one given */
		const char *seen = NULL;

		got[0] = '\0';
		CU_ASSERT(policy_code_options_as("GIT_CONFIG_VALUE_0", "GIT_SSH_COMMAND", "ssh -F ./c", collect, NULL) == 0);
		CU_ASSERT(strcmp(got, "L:./c") == 0);
		CU_ASSERT(policy_code_options_as("GIT_CONFIG_PARAMETERS", "GIT_PAGER", "./p", name_of, &seen) == 0);
		CU_ASSERT(seen != NULL && strcmp(seen, "GIT_CONFIG_PARAMETERS") == 0);
	}
}

/*
 * Review of round 39: the launchers' other variables of the JVM family:
 * JAVACMD (the java program mvn, gradle, ant run), MAVEN_ARGS (maven
 * 3.9's arguments from the environment: -s settings, the local
 * repository), ANT_ARGS (-lib: jars loaded); what builds set, nothing.
 */
static void test_families_r39_review(void)
{
	static const char *const rows[][3] = {
		{"JAVACMD", "./jdk/bin/java", "L:./jdk/bin/java"},
		{"JAVACMD", "/usr/lib/jvm/java-17/bin/java", "L:/usr/lib/jvm/java-17/bin/java"},
		{"MAVEN_ARGS", "-B -s ./ci/settings.xml", "S:./ci/settings.xml"},
		{"MAVEN_ARGS", "--settings=x -Dmaven.repo.local=.m2/repository", "S:x L:.m2/repository"},
		{"MAVEN_ARGS", "-gs g.xml -t tc.xml", "S:g.xml S:tc.xml"},
		{"ANT_ARGS", "-lib lib -logger org.apache.tools.ant.NoBannerLogger", "S:lib"},
		/* what builds set */
		{"MAVEN_ARGS", "-B -ntp -Dstyle.color=always -T 1C", ""},
		{"ANT_ARGS", "-logger org.apache.tools.ant.listener.AnsiColorLogger", ""},
		{"JAVACMD", "java", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	CU_ASSERT(env_code_var_known("JAVACMD", 7));
	CU_ASSERT(env_code_var_known("MAVEN_ARGS", 10));
	CU_ASSERT(env_code_var_known("ANT_ARGS", 8));
}

/*
 * Round 40: the launchers' JVM options as a family by their name's end
 * (CATALINA_OPTS, KAFKA_OPTS, HADOOP_OPTS, SPARK_SUBMIT_OPTS,
 * ES_JAVA_OPTS, JENKINS_JAVA_OPTIONS, SERVER_JVMFLAGS), read for what a
 * JVM loads only; the homes of JVM tools a property names (loaded:
 * read-only), gradle's daemon options and JDK; GOFLAGS' programs and
 * overlay; cargo's aliases' manifests, -C, scripts and included
 * configs, a profile's codegen backend; yarn's script shell; npm's,
 * pnpm's and yarn's places of code, any case; what CI images set,
 * nothing.
 */
static void test_families_r40(void)
{
	static const char *const rows[][3] = {
		{"CATALINA_OPTS", "-Xmx1g -javaagent:./ag.jar", "L:./ag.jar"},
		{"KAFKA_OPTS", "-Djava.security.auth.login.config=/etc/k.conf -agentpath:/w/a.so", "L:/w/a.so"},
		{"HADOOP_OPTS", "-XX:OnOutOfMemoryError=./oom.sh", "L:./oom.sh"},
		{"SPARK_SUBMIT_OPTS", "-cp lib", "S:lib"},
		{"ES_JAVA_OPTS", "-Xms512m -XX:VMOptionsFile=./jvm.args", "L:./jvm.args"},
		{"JENKINS_JAVA_OPTIONS", "-javaagent:/w/x.jar", "L:/w/x.jar"},
		{"SERVER_JVMFLAGS", "-javaagent:x.jar", "L:x.jar"},
		{"SBT_OPTS", "-Dsbt.global.base=/w/sbt -Divy.home=iv -Dsbt.boot.directory=b", "L:/w/sbt L:iv L:b"},
		{"JAVA_OPTS", "-Dcatalina.base=/w/tc -Dcoursier.cache=/w/cs", "L:/w/tc L:/w/cs"},
		{"GRADLE_OPTS", "-Dorg.gradle.jvmargs=\"-Xmx2g -javaagent:./d.jar\"", "L:./d.jar"},
		{"GRADLE_OPTS", "-Dorg.gradle.java.home=/w/jdk", "L:/w/jdk/bin/java"},
		{"GOFLAGS", "-mod=mod -toolexec=./te", "L:./te"},
		{"GOFLAGS", "-toolexec='/w/te -v' -exec=bin/run -overlay=ov.json", "L:/w/te L:bin/run L:ov.json"},
		{"CARGO_ALIAS_X", "-Zunstable-options --config include=\"./x.toml\"", "L:./x.toml"},
		{"CARGO_ALIAS_Y", "build --manifest-path ../w/Cargo.toml", "L:../w/Cargo.toml"},
		{"CARGO_ALIAS_Z", "-Zscript ./s.rs", "L:./s.rs"},
		{"CARGO_ALIAS_C", "-C /w/p build", "L:/w/p"},
		{"CARGO_PROFILE_DEV_CODEGEN_BACKEND", "./libcg.so", "L:./libcg.so"},
		{"Yarn_Script_Shell", "./sh", "L:./sh"},
		/* what CI images and developers set */
		{"SSH_OPTS", "-p 2222 -o StrictHostKeyChecking=no", ""},
		{"RSYNC_OPTS", "-av -s --delete", ""},
		{"FZF_DEFAULT_OPTS", "--height 40% --layout=reverse -p 80%", ""},
		{"KAFKA_OPTS", "-Xmx1g -Dlog4j.configuration=file:/etc/kafka/log4j.properties", ""},
		{"ES_JAVA_OPTS", "-Xms512m -Xmx512m", ""},
		{"CATALINA_OPTS", "-Dfile.encoding=UTF-8 -Djava.awt.headless=true -XX:+UseG1GC", ""},
		{"GOFLAGS", "-mod=vendor -buildvcs=false -trimpath", ""},
		{"CARGO_PROFILE_RELEASE_CODEGEN_BACKEND", "cranelift", ""},
		{"CARGO_ALIAS_B", "build --release -Zunstable-options", ""},
		{"Yarn_Script_Shell", "bash", ""},
		{"FOO_OPTS", "@scope/pkg -p 80", ""},
		/* review of round 40: the java launcher reads an @argfile
		 * on its command line, where the start scripts put these */
		{"ES_JAVA_OPTS", "-Xms512m @/w/jvm.args", "L:/w/jvm.args"},
		{"KAFKA_OPTS", "@/w/kafka.args -Xmx1g", "L:/w/kafka.args"},
		/* review of round 40: the external linker go runs */
		{"GOFLAGS", "-ldflags=-extld=/w/ld -mod=vendor", "L:/w/ld"},
		{"GOFLAGS", "\"-ldflags=all=-s -w -extld /w/cc\"", "L:/w/cc"},
		{"GOFLAGS", "-ldflags=-s -mod=vendor -trimpath", ""},
		{"GOFLAGS", "-ldflags=-extld=gcc", ""},
		{"CARGO_ALIAS_R", "run --bin x -- src/main.rs", ""},
		{"GOFLAGS", "-toolexec=gotestsum", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	CU_ASSERT(env_code_var_as("CATALINA_OPTS", 13) != NULL);
	CU_ASSERT(!env_code_var_known("CELERY_OPTS", 11));
	CU_ASSERT(env_code_var_known("GOFLAGS", 7));
	CU_ASSERT(!env_code_var_known("my_opts", 7));
	CU_ASSERT(env_code_var_known("npm_Config_UserConfig", 21));
	CU_ASSERT(env_code_var_known("YARN_YARN_PATH", 14));
	CU_ASSERT(env_code_var_known("yarn_global-folder", 18));
	CU_ASSERT(env_code_var_known("PNPM_CONFIG_STORE_DIR", 21));
	CU_ASSERT(env_code_var_known("CARGO_HOME", 10));
	CU_ASSERT(env_code_var_known("GRADLE_USER_HOME", 16));
	CU_ASSERT(env_code_var_known("FPATH", 5));
	CU_ASSERT(env_code_var_known("PSModulePath", 12));
	CU_ASSERT(!env_code_var_known("YARN_ENABLE_TELEMETRY", 21));
	CU_ASSERT(!env_code_var_known("npm_config_registry", 19));
}

/*
 * Round 41: bun's options (BUN_OPTIONS: --preload, -r, --config, read as
 * node's), node's --env-file (its NODE_OPTIONS apply), the list helpers
 * (yarn's plugins at ';', a TeX tree's "!!" and "//") and the TeX trees'
 * and bun's homes named.
 */
static void test_families_r41(void)
{
	static const char *const rows[][3] = {
		{"BUN_OPTIONS", "--preload ./pre.ts", "L:./pre.ts"},
		{"BUN_OPTIONS", "--config=/w/bunfig.toml --smol", "L:/w/bunfig.toml"},
		{"BUN_OPTIONS", "-r /w/x.ts", "L:/w/x.ts"},
		{"NODE_OPTIONS", "--env-file=.env.local", "L:.env.local"},
		/* what CI images and developers set */
		{"BUN_OPTIONS", "--smol --silent", ""},
		{"NODE_OPTIONS", "--max-old-space-size=4096 --enable-source-maps", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	CU_ASSERT(env_code_var_known("TEXMFHOME", 9));
	CU_ASSERT(env_code_var_known("TEXMFCNF", 8));
	CU_ASSERT(env_code_var_known("BUN_OPTIONS", 11));
	CU_ASSERT(env_code_var_known("BUN_RUNTIME_TRANSPILER_CACHE_PATH", 33));
	CU_ASSERT(strcmp(env_list_seps("Yarn_Plugins", 12), ":;") == 0);
	CU_ASSERT(strcmp(env_list_seps("GOPATH", 6), ":") == 0);
	CU_ASSERT(entry_is("TEXMFHOME", "!!/w/texmf//", "/w/texmf"));
	CU_ASSERT(entry_of("TEXMFHOME", "$HOME/texmf") == NULL);
	CU_ASSERT(entry_is("GOPATH", "/w/x//", "/w/x//"));
}

/*
 * Review 41e: kpathsea's trees by program (VAR.progname, VAR_progname,
 * read before VAR) are the family's, lists; a name only starting like
 * one is not.
 */
static void test_families_r41e(void)
{
	bool one = true;

	CU_ASSERT(env_startup_family("TEXMFHOME_pdflatex", 18, &one) && !one);
	CU_ASSERT(env_startup_family("TEXMFCNF.lualatex", 17, NULL));
	CU_ASSERT(env_startup_family("TEXMF_xetex", 11, NULL));
	CU_ASSERT(env_code_var_known("TEXMF", 5));
	CU_ASSERT(env_code_var_known("TEXMFDIST", 9));
	CU_ASSERT(env_code_var_known("TEXMFVAR.latex", 14));
	CU_ASSERT(!env_startup_family("TEXMFHOME_", 10, NULL));
	CU_ASSERT(!env_startup_family("TEXMFHOME", 9, NULL));
	CU_ASSERT(!env_startup_family("TEXMFHOMEX", 10, NULL));
	CU_ASSERT(!env_code_var_known("TEXINPUTS_latex", 15));
}

/*
 * Round 42: the BEAM's flags (ERL_FLAGS, ERL_AFLAGS, ERL_ZFLAGS,
 * ELIXIR_ERL_OPTIONS: -pa/-pz code paths, -boot, -config, -args_file,
 * -s/-run/-S modules, -eval's files, -env), GHC's package environment,
 * mix's project file, bun's -c; the homes of Elixir, Racket, Haskell,
 * Dart, Nix, Octave and MAKEFILES named; a TeX tree's "//" inside an
 * entry and nix's "name=" entries read as their readers do.
 */
static void test_families_r42(void)
{
	static const char *const rows[][3] = {
		{"ERL_FLAGS", "-pa ebin /w/deps/x/ebin +S 4 -pz /z", "S:ebin S:/w/deps/x/ebin S:/z"},
		{"ERL_AFLAGS", "-boot /w/start -config sys", "L:/w/start L:/w/start.boot L:sys L:sys.config"},
		{"ERL_ZFLAGS", "-args_file \"/w/vm args\" -boot_var LIB /w/lib", "L:/w/vm args S:/w/lib"},
		{"ERL_FLAGS", "-s mymod start -run other", "L:./mymod.beam L:./other.beam"},
		{"ERL_FLAGS", "-S /w/m.beam x y -pa ignored", "L:/w/m.beam"},
		{"ERL_FLAGS", "-eval 'c:c(\"x.erl\"), code:add_patha(\"./e\")'", "L:x.erl L:./e"},
		{"ERL_FLAGS", "-env LD_PRELOAD /w/x.so -env PERL5OPT -Ilib", "L:/w/x.so S:lib"},
		{"ERL_FLAGS", "-extra -pa ./x", ""},
		{"ELIXIR_ERL_OPTIONS", "-pa _build/dev/lib/x/ebin", "S:_build/dev/lib/x/ebin"},
		{"GHC_ENVIRONMENT", "/w/.ghc.environment.x86_64-linux-9.4.8", "L:/w/.ghc.environment.x86_64-linux-9.4.8"},
		{"GHC_ENVIRONMENT", "default", "L:default"},
		{"MIX_EXS", "mix.exs", "L:mix.exs"},
		{"BUN_OPTIONS", "-c ./bunfig.toml", "L:./bunfig.toml"},
		{"BUN_OPTIONS", "-c=/w/b.toml --smol -c/w/c.toml", "L:/w/b.toml L:/w/c.toml"},
		/* what CI images and developers set */
		{"ERL_AFLAGS", "-kernel shell_history enabled", ""},
		{"ERL_FLAGS", "+S 4:4 +A 16 -sname ci -setcookie x +pc unicode", ""},
		{"ELIXIR_ERL_OPTIONS", "+fnu +sbwt none", ""},
		{"GHC_ENVIRONMENT", "-", ""},
		{"NODE_OPTIONS", "-c", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	CU_ASSERT(env_code_var_known("ERL_FLAGS", 9));
	CU_ASSERT(env_code_var_known("ELIXIR_ERL_OPTIONS", 18));
	CU_ASSERT(env_code_var_known("MIX_HOME", 8));
	CU_ASSERT(env_code_var_known("HEX_HOME", 8));
	CU_ASSERT(env_code_var_known("PLTADDONDIR", 11));
	CU_ASSERT(env_code_var_known("CABAL_DIR", 9));
	CU_ASSERT(env_code_var_known("STACK_ROOT", 10));
	CU_ASSERT(env_code_var_known("PUB_CACHE", 9));
	CU_ASSERT(env_code_var_known("NIX_PATH", 8));
	CU_ASSERT(env_code_var_known("MAKEFILES", 9));
	CU_ASSERT(env_code_var_known("GHC_ENVIRONMENT", 15));
	CU_ASSERT(strcmp(env_list_seps("MAKEFILES", 9), " \t\n") == 0);
	CU_ASSERT(entry_is("TEXMFHOME", "/w//texmf", "/w"));
	CU_ASSERT(entry_is("TEXMF", "!!//x", "/"));
	CU_ASSERT(entry_is("NIX_PATH", "nixpkgs=/w/nixpkgs", "/w/nixpkgs"));
	CU_ASSERT(entry_is("NIX_PATH", "nixpkgs=channel:nixos-24.05", ""));
	CU_ASSERT(entry_is("NIX_PATH", "nixpkgs=https://x/y.tar.gz", ""));
	CU_ASSERT(env_list_len("NIX_PATH", 8, "nixpkgs=channel:nixos-24.05:/b") == 27);
	CU_ASSERT(env_list_len("NIX_PATH", 8, "n=https://x/y.tar.gz:/b") == 20);
	CU_ASSERT(env_list_len("NIX_PATH", 8, "flake:nixpkgs") == 13);
	CU_ASSERT(env_list_len("NIX_PATH", 8, "/a:/b") == 2);
	CU_ASSERT(env_list_len("MAKEFILES", 9, "/a.mk /b.mk") == 5);
	CU_ASSERT(entry_is("NIX_PATH", "/nix/var/nix/profiles/per-user/root/channels",
			   "/nix/var/nix/profiles/per-user/root/channels"));
}

/*
 * Review 42f: erl_flags() as erlexec and init read the words: "--" ends
 * a flag's words, not the flags; the '+' flags (and their values) are
 * taken out of a -pa list, which goes on after them; a backslash outside
 * quotes escapes ("-p\a" is -pa); -eval's code is every word up to the
 * next flag; -epmd's program is run by erlexec.
 */
static void test_families_r42f(void)
{
	static const char *const rows[][3] = {
		{"ERL_FLAGS", "-- -pa ./x", "S:./x"},
		{"ERL_FLAGS", "-s mod -- -s other", "L:./mod.beam L:./other.beam"},
		{"ERL_FLAGS", "-pa /a +S 4:4 ./b +fnu ebin", "S:/a S:./b S:ebin"},
		{"ERL_AFLAGS", "-pz /a +MBas aobf /b", "S:/a S:aobf S:/b"},
		{"ERL_FLAGS", "-p\\a ./ebin", "S:./ebin"},
		{"ERL_ZFLAGS", "-\\s evil", "L:./evil.beam"},
		{"ELIXIR_ERL_OPTIONS", "-sname n -epmd '/w/ep -d'", "L:/w/ep"},
		{"ERL_FLAGS", "-eval ok. 'c:c(\"x.erl\")'", "L:x.erl"},
		{"ERL_FLAGS", "-config /w/a +A 4 /w/b", "L:/w/a L:/w/a.config L:/w/b L:/w/b.config"},
		/* what CI images and developers set */
		{"ERL_FLAGS", "-enable-feature all", ""},
		{"ERL_FLAGS", "+B i -pa /a +c true -pz /z", "S:/a S:/z"},
		{"ELIXIR_ERL_OPTIONS", "+fnu +sbwt none -epmd epmd", ""},
		{"ERL_AFLAGS", "-kernel shell_history enabled -- +pc unicode", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
}

/*
 * Round 43: what round 42 left, by family. The BEAM's compiler options
 * from the environment (a parse or core transform runs; an include
 * directory), erlexec's ERL_OTP<release>_FLAGS, the emulators erlc,
 * escript and a detached erlexec run, stack's configuration files, bun's
 * -e/--eval/-p/--print code, node's --test-reporter module (not its own
 * reporters); node's --import, --require, --loader and
 * --experimental-loader; mix's, Racket's and Erlang's places named;
 * Racket's "same" and relative roots none.
 */
static void test_families_r43(void)
{
	static const char *const rows[][3] = {
		{"ERL_COMPILER_OPTIONS", "[{parse_transform, evil_pt}]", "L:./evil_pt.beam"},
		{"ERL_COMPILER_OPTIONS", "[debug_info,{core_transform,'ct_x'}, {i, \"/w/inc\"}]",
		 "L:./ct_x.beam S:/w/inc"},
		{"ERL_COMPILER_OPTIONS", "{parse_transform,'/w/pt'}", "L:/w/pt.beam"},
		{"ERL_COMPILER_OPTIONS", "[{i,\"include\"}, {d, i}, {parse_transform, \"a\\\"b\"}]",
		 "S:include L:./a\"b.beam"},
		{"ERL_OTP27_FLAGS", "-pa ./x -s m", "S:./x L:./m.beam"},
		{"ERL_R16B_FLAGS", "-boot /w/b", "L:/w/b L:/w/b.boot"},
		{"ERLC_EMULATOR", "/w/erl", "L:/w/erl"},
		{"ESCRIPT_EMULATOR", "./emu -pa x", "L:./emu"},
		{"CERL_DETACHED_PROG", "/w/beam", "L:/w/beam"},
		{"STACK_YAML", "/w/stack.yaml", "L:/w/stack.yaml"},
		{"STACK_CONFIG", "cfg.yaml", "L:cfg.yaml"},
		{"STACK_GLOBAL_CONFIG", "/w/g.yaml", "L:/w/g.yaml"},
		{"BUN_OPTIONS", "-e \"require('./x')\"", "L:./x"},
		{"BUN_OPTIONS", "--eval=import('/w/y.js') --print \"load('z.js')\" -pa.js", "L:/w/y.js L:z.js"},
		{"NODE_OPTIONS", "--test-reporter=./rep.mjs --test-reporter /w/r2", "L:./rep.mjs L:/w/r2 L:/w/r2.js "
		 "L:/w/r2.cjs L:/w/r2.mjs L:/w/r2.json L:/w/r2.node"},
		{"NODE_OPTIONS", "--import=./a.mjs --loader ./b.mjs --experimental-loader=./c.mjs --require ./d.js -r./e.js",
		 "L:./a.mjs L:./b.mjs L:./c.mjs L:./d.js L:./e.js"},
		/* what CI images and developers set */
		{"ERL_COMPILER_OPTIONS", "[debug_info, deterministic, {d, 'TEST'}, warnings_as_errors]", ""},
		{"ERL_COMPILER_OPTIONS", "deterministic", ""},
		{"ERL_COMPILER_OPTIONS", "[{d,'VSN',\"1.0\"}, {outdir, \"/tmp/x\"}]", ""},
		{"ERL_OTP27_FLAGS", "+S 4", ""},
		{"STACK_YAML", "stack-9.4.yaml", ""},
		{"ESCRIPT_EMULATOR", "erl", ""},
		{"NODE_OPTIONS", "--test-reporter=spec --test-reporter-destination=stdout --test-reporter tap", ""},
		{"BUN_OPTIONS", "--smol -p 1+1", ""},
		/* node's -p and -e are not allowed in NODE_OPTIONS: not read */
		{"NODE_OPTIONS", "-e require('./x')", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	CU_ASSERT(env_code_var_as("ERL_OTP27_FLAGS", 15) != NULL);
	CU_ASSERT(env_code_var_as("ERL_OTPX_FLAGS", 14) == NULL);
	CU_ASSERT(env_code_var_as("ERL_OTP_FLAGS", 13) == NULL);
	CU_ASSERT(env_code_var_as("ERL_CRASH_FLAGS", 15) == NULL);
	CU_ASSERT(env_code_var_known("ERL_COMPILER_OPTIONS", 20));
	CU_ASSERT(env_code_var_known("STACK_YAML", 10));
	CU_ASSERT(env_code_var_known("MIX_DEPS_PATH", 13));
	CU_ASSERT(env_code_var_known("MIX_BUILD_PATH", 14));
	CU_ASSERT(env_code_var_known("MIX_PATH", 8));
	CU_ASSERT(env_code_var_known("MIX_INSTALL_DIR", 15));
	CU_ASSERT(env_code_var_known("PLTCOMPILEDROOTS", 16));
	CU_ASSERT(env_code_var_known("PLTCONFIGDIR", 12));
	CU_ASSERT(env_code_var_known("ERL_ROOTDIR", 11));
	CU_ASSERT(entry_is("PLTCOMPILEDROOTS", "same", ""));
	CU_ASSERT(entry_is("PLTCOMPILEDROOTS", "compiled/@(version)", ""));
	CU_ASSERT(entry_is("PLTCOMPILEDROOTS", "/w/zo/@(version)", "/w/zo"));
	CU_ASSERT(entry_is("PLTCOMPILEDROOTS", "../../zo", "../../zo"));
	CU_ASSERT(entry_is("PLTCOMPILEDROOTS", "a..b", ""));
}

/*
 * Review of round 43: erl_token() read the term as erl_scan does but for
 * its escapes (copied as their letter: 'parse_tr\x61nsform' was another
 * option), its comments ('%' to the end of the line: a transform after
 * one was passed over), its character literals ($' and $" opened an atom
 * or a string that hid what followed) and the atoms erl_scan starts with
 * a letter over 0x7f (évil); a transform's or an include's value it does
 * not read (a number, a tuple, a binary) was passed over. node's
 * --test-reporter=dots is a package's name (node's own is dot). OCaml's
 * OCAMLPARAM was read by no rule: its commands (ppx=, pp=, cc=), flags
 * (ccopt=, cclib=), plugin= and searched directories (I=, H=), with its
 * separator rule (the first character when one of ":|; ,", else ',').
 * .NET's and NuGet's places: known, their lists split at ':' and ';'.
 */
static void test_review_r43(void)
{
	static const char *const rows[][3] = {
		{"ERL_COMPILER_OPTIONS", "[{'parse_tr\\x61nsform', evil}]", "L:./evil.beam"},
		{"ERL_COMPILER_OPTIONS", "[{'\\160arse_transform', evil}]", "L:./evil.beam"},
		{"ERL_COMPILER_OPTIONS", "{'\\x{70}arse_transform', '/w/\\x65vil'}", "L:/w/evil.beam"},
		{"ERL_COMPILER_OPTIONS", "[{parse_transform, % a note\n evil}]", "L:./evil.beam"},
		{"ERL_COMPILER_OPTIONS", "[deterministic % don't\n, {core_transform, ct}]", "L:./ct.beam"},
		{"ERL_COMPILER_OPTIONS", "[$', {parse_transform, '/w/pt'}, $']", "L:/w/pt.beam"},
		{"ERL_COMPILER_OPTIONS", "[$\", {core_transform, ct}]", "L:./ct.beam"},
		{"ERL_COMPILER_OPTIONS", "[$%, {parse_transform, '/w/p2'}]", "L:/w/p2.beam"},
		{"ERL_COMPILER_OPTIONS", "[$\\', {parse_transform, p3}]", "L:./p3.beam"},
		{"ERL_COMPILER_OPTIONS", "[{parse_transform, \xc3\xa9vil}]", "L:./\xc3\xa9vil.beam"},
		{"ERL_COMPILER_OPTIONS", "[{parse_transform, ''}]", "L:./.beam"},
		/* erl_scan's white space: up to ' ', and 0x80 to 0xa0 (NBSP) */
		{"ERL_COMPILER_OPTIONS", "{\x01parse_transform, evil}", "L:./evil.beam"},
		{"ERL_COMPILER_OPTIONS", "{\xc2\xa0parse_transform,\xc2\xa0'/w/nb'}", "L:/w/nb.beam"},
		{"ERL_COMPILER_OPTIONS", "{parse_transform\xa0, evil}", "L:./evil.beam"},
		{"ERL_COMPILER_OPTIONS", "[{parse_transform, 42}]", "L:42"},
		{"ERL_COMPILER_OPTIONS", "[{i, <<\"inc\">>}]", "L:<<\"inc\">>"},
		{"ERL_COMPILER_OPTIONS", "[{i, \"/w/i\\x6ec\"}]", "S:/w/inc"},
		/* what CI images and developers set: none */
		{"ERL_COMPILER_OPTIONS", "[debug_info, % CI\n deterministic, {d, 'S', $'}, {d, 'P', \"%\"}]", ""},
		{"ERL_COMPILER_OPTIONS", "[$a, {d, 'T', 'a\\'b'}, warnings_as_errors]", ""},
		{"NODE_OPTIONS", "--test-reporter=dots --test-reporter=dot", "L:dots"},
		/* OCaml */
		{"OCAMLPARAM", "ppx=./ppx.exe --as-ppx,_,plugin=/w/p.cmxs", "L:./ppx.exe L:/w/p.cmxs"},
		{"OCAMLPARAM", "|pp=/w/pp.sh -x|I=lib,x|H=/w/h", "L:/w/pp.sh S:lib,x S:/w/h"},
		{"OCAMLPARAM", ":cc=./mycc:plugin=pl.cma", "L:./mycc L:pl.cma"},
		{"OCAMLPARAM", " ppx=a/b.exe I=+compiler-libs", "L:a/b.exe"},
		{"OCAMLPARAM", ";ccopt=-fplugin=./gp.so;_", "L:./gp.so"},
		{"OCAMLPARAM", "_,g=1,bin-annot=1,w=+a-4,I=+unix,ppx=ppx_deriving", ""},
		{"OCAMLPARAM", "", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	CU_ASSERT(env_code_var_known("OCAMLPARAM", 10));
	CU_ASSERT(env_code_var_known("DOTNET_ROOT", 11));
	CU_ASSERT(env_code_var_known("DOTNET_ADDITIONAL_DEPS", 22));
	CU_ASSERT(env_code_var_known("DOTNET_SHARED_STORE", 19));
	CU_ASSERT(env_code_var_known("NUGET_PACKAGES", 14));
	CU_ASSERT(env_code_var_known("NUGET_PLUGIN_PATHS", 18));
	CU_ASSERT(strcmp(env_list_seps("DOTNET_ADDITIONAL_DEPS", 22), ":;") == 0);
	CU_ASSERT(env_list_len("DOTNET_SHARED_STORE", 19, "/a;/b") == 2);
	CU_ASSERT(env_list_len("NUGET_PLUGIN_PATHS", 18, "/a/p.dll;/b") == 8);
}

/*
 * Round 44: the variables and options that name code, left by round 43:
 * findlib's commands and configuration and its siblings (OCAMLPATH, the
 * stub and standard library directories, the toplevel's paths), the
 * .NET SDK's muxer and MSBuild's files and directories, node's
 * --experimental-config-file, --experimental-default-config-file,
 * --test-global-setup (also on a node command line, as --snapshot-blob).
 * ERL_COMPILER_OPTIONS_APPEND is no variable OTP reads (compile.erl
 * reads ERL_COMPILER_OPTIONS alone): not known.
 */
static void test_families_r44(void)
{
	static const char *const rows[][3] = {
		{"OCAMLFIND_COMMANDS", "ocamlc=/w/occ ocamlopt=ocamlopt.opt ocamldep=./dep", "L:/w/occ L:./dep"},
		{"OCAMLFIND_CONF", "/w/findlib.conf", "L:/w/findlib.conf"},
		{"DOTNET_HOST_PATH", "/w/dotnet", "L:/w/dotnet"},
		{"MSBUILD_EXE_PATH", "/w/MSBuild.dll", "L:/w/MSBuild.dll"},
		{"CustomBeforeMicrosoftCommonTargets", "/w/b.targets", "L:/w/b.targets"},
		{"DirectoryBuildPropsPath", "/w/D.props", "L:/w/D.props"},
		{"NODE_OPTIONS", "--experimental-config-file=/w/n.json --test-global-setup ./g.mjs",
		 "L:/w/n.json L:./g.mjs"},
		{"NODE_OPTIONS", "--experimental-config-file ./n.json --test-global-setup=/w/g", "L:./n.json L:/w/g "
		 "L:/w/g.js L:/w/g.cjs L:/w/g.mjs L:/w/g.json L:/w/g.node"},
		{"NODE_OPTIONS", "--experimental-default-config-file", "L:node.config.json"},
		{"EDITOR", "node --snapshot-blob /w/s.blob ./ed.js", "L:/w/s.blob L:./ed.js"},
		{"EDITOR", "node --experimental-config-file /w/n.json --test-global-setup=/w/g.mjs ./ed.js",
		 "L:/w/n.json L:/w/g.mjs L:./ed.js"},
		/* what developers set */
		{"OCAMLFIND_COMMANDS", "ocamlc=ocamlc.opt ocamlopt=ocamlopt.opt", ""},
		{"DOTNET_HOST_PATH", "dotnet", ""},
		{"NODE_OPTIONS", "--max-old-space-size=4096 --enable-source-maps", ""},
	};

	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
	CU_ASSERT(env_code_var_known("OCAMLFIND_COMMANDS", 18));
	CU_ASSERT(env_code_var_known("OCAMLFIND_CONF", 14));
	CU_ASSERT(env_code_var_known("OCAMLFIND_LDCONF", 16));
	CU_ASSERT(env_code_var_known("OCAMLPATH", 9));
	CU_ASSERT(env_code_var_known("CAML_LD_LIBRARY_PATH", 20));
	CU_ASSERT(env_code_var_known("OCAMLLIB", 8));
	CU_ASSERT(env_code_var_known("CAMLLIB", 7));
	CU_ASSERT(env_code_var_known("OCAMLTOP_INCLUDE_PATH", 21));
	CU_ASSERT(env_code_var_known("OCAML_TOPLEVEL_PATH", 19));
	CU_ASSERT(env_code_var_known("DOTNET_HOST_PATH", 16));
	CU_ASSERT(env_code_var_known("DOTNET_MSBUILD_SDK_RESOLVER_CLI_DIR", 35));
	CU_ASSERT(env_code_var_known("MSBuildSDKsPath", 15));
	CU_ASSERT(env_code_var_known("MSBuildExtensionsPath", 21));
	CU_ASSERT(env_code_var_known("DOTNET_CLI_HOME", 15));
	CU_ASSERT(env_code_var_known("DOTNET_BUNDLE_EXTRACT_BASE_DIR", 30));
	CU_ASSERT(env_code_var_known("CustomAfterMicrosoftCSharpTargets", 33));
	CU_ASSERT(!env_code_var_known("ERL_COMPILER_OPTIONS_APPEND", 27));
	CU_ASSERT(strcmp(env_list_seps("OCAMLPATH", 9), ":") == 0);
	CU_ASSERT(entry_is("OCAMLTOP_INCLUDE_PATH", "/w/top", "/w/top"));
}

/*
 * Round 45 (fix45v): MSBuild reads an environment variable as a property
 * whatever its case: its import files and directories, and NuGet's
 * RestorePackagesPath, are known in any case, read as the canonical
 * name; the .NET host's and NuGet's own getenv() names are not.
 */
static void test_msbuild_case_r45(void)
{
	static const char *const rows[][3] = {
		{"custombeforemicrosoftcommontargets", "/w/b.targets", "L:/w/b.targets"},
		{"DIRECTORYPACKAGESPROPSPATH", "./P.props", "L:./P.props"},
	};
	const char *as = env_code_var_as("custombeforemicrosoftcommontargets", 34);
	bool one = false;

	CU_ASSERT(as != NULL && strcmp(as, "CustomBeforeMicrosoftCommonTargets") == 0);
	as = env_code_var_as("DIRECTORYBUILDPROPSPATH", 23);
	CU_ASSERT(as != NULL && strcmp(as, "DirectoryBuildPropsPath") == 0);
	CU_ASSERT(env_startup_family("msbuildextensionspath", 21, &one) == 1 && one);
	CU_ASSERT(env_startup_family("MSBUILDSDKSPATH", 15, NULL) == 1);
	CU_ASSERT(env_startup_family("restorepackagespath", 19, NULL) == 1);
	CU_ASSERT(env_startup_family("RestorePackagesPath", 19, NULL) == 1);
	/* the canonical ones are the tables' own */
	CU_ASSERT(env_startup_family("MSBuildExtensionsPath", 21, NULL) == 0);
	CU_ASSERT(env_startup_family("customBeforeMicrosoftCommonTargets", 34, NULL) == 0);
	CU_ASSERT(env_code_var_known("msbuilduserextensionspath", 25));
	CU_ASSERT(!env_code_var_known("nuget_packages", 14));
	CU_ASSERT(!env_code_var_known("dotnet_root", 11));
	CU_ASSERT(!env_code_var_known("MSBuildExtensionsPathX", 22));
	check_rows(rows, sizeof(rows) / sizeof(rows[0]));
}

TEST_REGISTRAR(policy_codevars_register)
{
	CU_pSuite s = test_suite("policy_codevars", NULL, NULL);

	test_add(s, "option variables: the paths each reader loads", test_options);
	test_add(s, "command variables: the program behind exec, env, sudo, eval, a shell's script", test_command_words);
	test_add(s, "round 37: a precommand's options and -c, env -S, python -m, the build tools (CC=./cc)",
		 test_precommands);
	test_add(s, "round 37: the compiler's and linker's flags that run or load a program (CFLAGS=-B tools)",
		 test_build_flags);
	test_add(s, "round 37's review: precommands nested by a long value (sudo sudo ..., env -Senv -S...): "
		    "./x named, bounded", test_nested_precommands);
	test_add(s, "round 38: CARGO_TARGET_<triple>_LINKER/_RUNNER, CC_<target>, su -s, fakeroot -l, ld.so "
		    "--preload, perl -c, php -c, clang --gcc-toolchain: named; what builds set, nothing",
		 test_families_r38);
	test_add(s, "round 39: PYTHONBREAKPOINT, MAVEN_OPTS, CARGO_ALIAS_*, npm_config_script_shell, find -exec, "
		    "chroot's root, envdir, gosu, tini: named; what developers set, nothing", test_families_r39);
	test_add(s, "review of round 39: JAVACMD, MAVEN_ARGS, ANT_ARGS: named; what builds set, nothing",
		 test_families_r39_review);
	test_add(s, "round 40: <NAME>_OPTS of the JVM launchers, the JVM tools' homes, GOFLAGS, cargo's aliases' "
		    "manifests and includes, npm's, pnpm's and yarn's places: named; what CI images set, nothing",
		 test_families_r40);
	test_add(s, "round 41: BUN_OPTIONS (--preload, --config), node's --env-file, TeX's trees and bun's homes "
		    "named, yarn's plugins at ';', a TeX tree's marks; what CI images set, nothing",
		 test_families_r41);
	test_add(s, "review 41e: TeX's trees by program (TEXMFHOME_pdflatex, TEXMFCNF.lualatex) and TEXMF named",
		 test_families_r41e);
	test_add(s, "round 42: ERL_FLAGS and its kin (-pa, -boot, -config, -s, -eval, -env), GHC_ENVIRONMENT, "
		    "MIX_EXS, bun's -c; Elixir's, Racket's, Haskell's, Dart's, Nix's homes, MAKEFILES; a TeX tree's "
		    "inner \"//\", NIX_PATH's entries; what CI images set, nothing",
		 test_families_r42);
	test_add(s, "review 42f: erl's -- and '+' flags inside a -pa list, a backslash, -eval's words, -epmd",
		 test_families_r42f);
	test_add(s, "round 43: ERL_COMPILER_OPTIONS's transforms and includes, ERL_OTP<release>_FLAGS, the BEAM's "
		    "emulator programs, stack's files, bun's -e/-p, node's --test-reporter; mix's, Racket's, Erlang's "
		    "places; what CI images set, nothing",
		 test_families_r43);
	test_add(s, "review of round 43: ERL_COMPILER_OPTIONS's escapes, comments, $' and non-ASCII atoms, a value not "
		    "read refused; --test-reporter=dots; OCAMLPARAM's commands, flags, plugins, directories; "
		    ".NET's and NuGet's places",
		 test_review_r43);
	test_add(s, "round 44: findlib's commands and places, OCaml's library paths, the .NET SDK's muxer and MSBuild's "
		    "files, node's --experimental-config-file and --test-global-setup (also on node's command line); "
		    "ERL_COMPILER_OPTIONS_APPEND not known",
		 test_families_r44);
	test_add(s, "round 45: MSBuild's import files and directories and RestorePackagesPath in any case; the "
		    "host's getenv() names exact",
		 test_msbuild_case_r45);
}
