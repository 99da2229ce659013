/*
 * test_fsharden.c - issue 13, classes 2, 5 and 6, end to end: the real
 * `passavant run` binary, then checks on the host's filesystem.
 *
 *  - symlinks (SPEC §3.3): a link planted by one session in a writable
 *    tree makes the next session refuse to start (125, naming the link)
 *    when a policy path goes through it: allowWrite, allowRead (to
 *    ~/.ssh), a link in an intermediate component, a link reached through
 *    a host-made link; a host-made link in a read-only directory is still
 *    followed;
 *  - persistence (§3.3): with HOME writable, every shell start-up and
 *    logout file, git's global config, autostart, systemd user units,
 *    ~/.ssh (missing), agent and editor settings cannot be created or
 *    changed, nor any entry HOME had at start (~/miniconda3, ~/go)
 *    unless allowWrite names it or it is the working directory; the same agent/editor files in the writable working
 *    directory; a directory on PATH cannot be written unless allowWrite
 *    names it exactly;
 *  - credential stores (§3.6): the newly listed stores cannot be read;
 *  - links under protected directories (round 31): a link in ~/.ssh,
 *    ~/.aws or ~/.kube has an unreadable target, one in a write-denied
 *    row (or a stow'd dot entry) pointing into the project a read-only
 *    one; a link to the project or an ancestor refuses the start;
 *  - environment (§3.6): variables whose name or value looks like a
 *    credential are dropped, with one notice naming them and no value;
 *    policy-named ones are kept (masked) or removed as the policy says;
 *  - `check -v` prints the mandatory table and the environment rule.
 *
 * Suite "fsharden". Without user namespaces every test is skipped with
 * the reason printed, unless PASSAVANT_SANDBOX_MUST_WORK=1. The tree lives
 * under /var/tmp: the sandbox's /tmp is private.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/fuse.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/sbxrun.h"
#include "tests/support/testlib.h"
#include "tests/support/textutil.h"

#define RUN_TIMEOUT_MS 60000

static bool skip;          /* no user namespaces */
static bool ready;         /* fixtures up */
static char *root;         /* /var/tmp/pv-fsh.XXXXXX */
static unsigned nscript;
static char real_token[41]; /* ghp_ + 36, the masked variable's real value */

/* root/rel into buf (PATH_MAX bytes); "" if it does not fit. */
static char *at(char *buf, const char *rel)
{
	return test_at(buf, root, rel);
}

static int mkfile(const char *path, const char *text)
{
	if (test_write_file(path, text, strlen(text)) < 0)
		return -1;
	return chmod(path, 0644);
}

/* mkdir -p of rel under root. */
static int mkdirs(const char *rel)
{
	return test_mkdirs_at(root, rel);
}

/* Writes policy rel under root from a printf format; %1$s in it is root. */
static int write_policy(const char *rel, const char *fmt)
{
	char buf[PATH_MAX], text[8192];

	snprintf(text, sizeof(text), fmt, root);
	return mkfile(at(buf, rel), text);
}

/* The files stores.sh reads back: each holds PLANTED-<its name>. */
static const char *const new_stores[] = {
	".config/git/credentials", ".config/containers/auth.json", ".cargo/credentials.toml",
	".pgpass", ".vault-token", ".claude/.credentials.json", ".config/hub",
	".terraform.d/credentials.tfrc.json", ".gradle/gradle.properties", ".m2/settings.xml",
	".config/op/config", ".password-store/site.gpg", ".local/share/keyrings/login.keyring",
	".mozilla/firefox/profile/logins.json", ".config/google-chrome/Default/Cookies",
	".docker/config.json", ".kube/config",
};

static int suite_init(void)
{
	char buf[PATH_MAX], path[PATH_MAX];
	int gate;

	if (ready || skip)
		return 0;
	gate = test_sandbox_gate("fsharden");
	if (gate <= 0) {
		skip = gate == 0;
		return gate;
	}
	root = strdup("/var/tmp/pv-fsh.XXXXXX");
	if (root == NULL || mkdtemp(root) == NULL || chmod(root, 0755) < 0 || test_ghp_token(real_token) < 0)
		return -1;
	/* home: the symlink and store tests (a ~/.ssh with a key);
	 * home2: the persistence tests (writable, no ~/.ssh). */
	/* home2's parents of protected paths exist: a missing ~/.local
	 * would get a read-only placeholder as a whole and hide a gap. */
	if (mkdirs("home2/.local/share") < 0 || mkdirs("home2/.cargo") < 0 ||
	    mkdirs("home2/.docker") < 0 || mkdirs("home2/.gradle") < 0 ||
	    mkdirs("home2/.claude") < 0 || mkdirs("home2/.gemini") < 0 ||
	    mkdirs("home2/.someapp") < 0 || mkdirs("home2/.cache") < 0 ||
	    mkfile(at(buf, "home2/.someapprc"), "original someapprc\n") < 0)
		return -1;
	if (mkdirs("home/.ssh") < 0 || mkdirs("home2/.config") < 0 || mkdirs("work") < 0 ||
	    mkdirs("work/bin") < 0 || mkdirs("scripts") < 0 || mkdirs("ro") < 0 ||
	    mkdirs("plain") < 0)
		return -1;
	if (mkfile(at(buf, "home/.ssh/id_rsa"), "PLANTED-PRIVATE-KEY\n") < 0 ||
	    mkfile(at(buf, "home2/.bashrc"), "original bashrc\n") < 0 ||
	    mkfile(at(buf, "home2/.config/app.conf"), "x\n") < 0 ||
	    mkfile(at(buf, "work/.mcp.json"), "{}\n") < 0 ||
	    mkfile(at(buf, "plain/file.txt"), "plain file\n") < 0)
		return -1;
	for (size_t i = 0; i < sizeof(new_stores) / sizeof(new_stores[0]); i++) {
		char rel[PATH_MAX], text[PATH_MAX], *slash;
		snprintf(rel, sizeof(rel), "home/%s", new_stores[i]);
		slash = strrchr(rel, '/');
		*slash = '\0';
		if (mkdirs(rel) < 0)
			return -1;
		*slash = '/';
		snprintf(text, sizeof(text), "PLANTED-%s\n", new_stores[i]);
		if (mkfile(at(buf, rel), text) < 0)
			return -1;
	}
	/* Host-made links in a read-only directory: one to a plain
	 * directory (followed), one into the writable work tree (where the
	 * next link is what counts). */
	if (symlink(at(path, "plain"), at(buf, "ro/okl")) < 0 ||
	    symlink(at(path, "work/x"), at(buf, "ro/link")) < 0)
		return -1;
	if (write_policy("work.yaml", "filesystem:\n  allowWrite: [\"%1$s/work\"]\n") < 0 ||
	    write_policy("aw-link.yaml",
			 "filesystem:\n  allowWrite: [\"%1$s/work\", \"%1$s/work/out\"]\n") < 0 ||
	    write_policy("ar-link.yaml", "filesystem:\n  allowWrite: [\"%1$s/work\"]\n"
					 "  allowRead: [\"%1$s/work/data\"]\n") < 0 ||
	    write_policy("mid-link.yaml",
			 "filesystem:\n  allowWrite: [\"%1$s/work\", \"%1$s/work/sub/.ssh\"]\n") < 0 ||
	    write_policy("chain.yaml",
			 "filesystem:\n  allowWrite: [\"%1$s/work\", \"%1$s/ro/link/.ssh\"]\n") < 0 ||
	    write_policy("ro-ok.yaml", "filesystem:\n  allowWrite: [\"%1$s/work\"]\n"
				       "  allowRead: [\"%1$s/ro/okl\"]\n") < 0 ||
	    write_policy("home.yaml",
			 "filesystem:\n  allowWrite: [\"%1$s/home2\", \"%1$s/work\"]\n") < 0 ||
	    write_policy("config.yaml",
			 "filesystem:\n  allowWrite: [\"%1$s/home3/.config\", \"%1$s/home3/.config/mine\", "
			 "\"%1$s/home3/.local/share\", \"%1$s/work\"]\n") < 0 ||
	    write_policy("home-cache.yaml",
			 "filesystem:\n  allowWrite: [\"%1$s/home2\", \"%1$s/home2/.cache\", "
			 "\"%1$s/work\"]\n") < 0 ||
	    write_policy("bin.yaml",
			 "filesystem:\n  allowWrite: [\"%1$s/work\", \"%1$s/work/bin\"]\n") < 0 ||
	    write_policy("env.yaml", "credentials:\n  envVars:\n"
				     "    - {name: GH_TOKEN, mode: mask}\n"
				     "    - {name: NAMED_SECRET, mode: deny}\n"
				     "filesystem:\n  allowWrite: [\"%1$s/work\"]\n") < 0)
		return -1;
	ready = true;
	return 0;
}

static int suite_cleanup(void)
{
	test_root_done(&root, &ready);
	return 0;
}

/* One `passavant run` in root/work: HOME=home (relative to root), PATH=path
 * (NULL: TEST_SAFE_PATH), the extra NAME=value entries of env
 * (NULL-terminated, may be NULL), options opts (may be NULL), policy rel
 * under root, and script run by sh. Returns the exit status. */
static int run_fsh(const char *home, const char *path, const char *const *env,
		   const char *const *opts, const char *policy, const char *script, char **out,
		   char **err)
{
	char h[PATH_MAX], pol[PATH_MAX], work[PATH_MAX], sc[PATH_MAX];
	struct test_sbx_run r = {at(work, "work"), at(h, home), path, at(pol, policy), sc, env, opts};

	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	if (mkfile(sc, script) < 0)
		return -1;
	return test_sbx_run(&r, out, err, RUN_TIMEOUT_MS);
}

/* A session with the environment entries env (what developers set)
 * starts; what names them in the row. */
static void everyday_starts(const char *const *env, const char *what)
{
	char *out = NULL, *err = NULL;
	int st = run_fsh("home", NULL, env, NULL, "work.yaml", "echo started\n", &out, &err);

	ROW(st == 0 && test_has(out, "started"), "%s: status %d, %s", what, st, err ? err : "");
	free(out);
	free(err);
}

#define SKIP_IF_NEEDED() TEST_SKIP_UNLESS_SANDBOX(skip, ready)

static bool exists(const char *rel)
{
	return test_exists_at(root, rel);
}

static void show(int st, const char *out, const char *err)
{
	test_show_run(st, out, err);
}

/* Removes rel under root if it is there (a link or a file). */
static void drop(const char *rel)
{
	char buf[PATH_MAX];

	(void)unlink(at(buf, rel));
}

/* ------------------------------------------------------------------ */
/* Class 2: symlinks                                                    */
/* ------------------------------------------------------------------ */

/* A host link on the way to a protected path, dangling into the writable
 * tree (~/.config -> work/cfg, HOME read-only): creating work/cfg/git/
 * config would give the host's git a config it reads. */
static void test_link_dangling_way(void)
{
	char lnk[PATH_MAX], to[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home-dl") == 0);
	drop("home-dl/.config");
	CU_ASSERT_FATAL(symlink(at(to, "work/cfg"), at(lnk, "home-dl/.config")) == 0);
	st = run_fsh("home-dl", NULL, NULL, NULL, "work.yaml",
		     "mkdir -p cfg/git 2>/dev/null; echo '[core] fsmonitor = planted' > cfg/git/config "
		     "2>/dev/null; echo w=$?; echo ok > ok-dl.txt; echo done\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "done") && test_has(out, "w=") && !test_has(out, "w=0"),
	    "status %d, or work/cfg/git/config (the host's ~/.config/git/config) could be written", st);
	if (st != 0)
		show(st, out, err);
	ROW(!exists("work/cfg/git/config") && !exists("work/cfg"),
	    "~/.config/git/config exists on the host through the link, or a placeholder was left");
	ROW(exists("work/ok-dl.txt"), "the control write did not reach the host");
	drop("work/ok-dl.txt");
	drop("home-dl/.config");
	free(out);
	free(err);
}

/* Session 1 (work writable) plants work/NAME as a link to ROOT/TO; then
 * session 2 under policy runs a script that would exploit the link.
 * Session 2 must refuse with 125, name the link, and not run. The link
 * is removed at the end. */
static void planted_then_refused(const char *to, const char *name, const char *policy, const char *exploit,
				 const char *label)
{
	char link[PATH_MAX], plant[2 * PATH_MAX], rel[64];
	char *out = NULL, *err = NULL;
	int st;

	snprintf(plant, sizeof(plant), "ln -s %s/%s %s\n", root, to, name);
	snprintf(rel, sizeof(rel), "work/%s", name);
	at(link, rel);
	st = run_fsh("home", NULL, NULL, NULL, "work.yaml", plant, &out, &err);
	ROW(st == 0, "%s: planting session: status %d", label, st);
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;
	/* A link out of the writable trees is moved aside after the session
	 * that made it (round 17, linkout.c); made again on the host (an
	 * older passavant's session, another tool), the next session must
	 * still refuse it. */
	{
		char q[96], qp[PATH_MAX], tp[PATH_MAX];

		snprintf(q, sizeof(q), "%s.passavant-quarantine", rel);
		if (exists(q)) {
			drop(q);
			snprintf(tp, sizeof(tp), "%s/%s", root, to);
			ROW(symlink(tp, at(qp, rel)) == 0, "%s: cannot plant the link again", label);
		}
	}
	st = run_fsh("home", NULL, NULL, NULL, policy, exploit, &out, &err);
	ROW(st == 125, "%s: next session: status %d, expected 125", label, st);
	ROW(!test_has(out, "RAN"), "%s: the command ran through the planted link", label);
	ROW(test_has(err, link) && test_has(err, "symbolic link"), "%s: the refusal does not name %s: %s",
	    label, link, err ? err : "");
	if (st != 125)
		show(st, out, err);
	free(out);
	free(err);
	drop(rel);
}

/* allowWrite: work/out created as a link to $HOME; the next session
 * would bind $HOME writable. */
static void test_link_allow_write(void)
{
	SKIP_IF_NEEDED();
	planted_then_refused("home", "out", "aw-link.yaml",
			     "echo RAN; echo evil > out/planted.txt; echo evil >> out/.bashrc\n",
			     "allowWrite link");
	ROW(!exists("home/planted.txt") && !exists("home/.bashrc"), "a file was written into HOME");
}

/* allowRead: work/data created as a link to ~/.ssh; the next session
 * would bind the key store back over its cover. */
static void test_link_allow_read(void)
{
	SKIP_IF_NEEDED();
	planted_then_refused("home/.ssh", "data", "ar-link.yaml",
			     "echo RAN; cat data/id_rsa ~/.ssh/id_rsa 2>/dev/null\n",
			     "allowRead link to ~/.ssh");
}

/* A link in an intermediate component: work/sub -> $HOME, policy
 * allowWrite work/sub/.ssh (~/.ssh writable: authorized_keys). */
static void test_link_intermediate(void)
{
	SKIP_IF_NEEDED();
	planted_then_refused("home", "sub", "mid-link.yaml",
			     "echo RAN; echo ssh-ed25519 AAAA evil >> sub/.ssh/authorized_keys\n",
			     "intermediate link");
	ROW(!exists("home/.ssh/authorized_keys"), "authorized_keys was planted in ~/.ssh");
}

/* A chain: ro/link (host-made, read-only directory) -> work/x, and
 * work/x planted as a link to $HOME: the planted one is named. */
static void test_link_chain(void)
{
	SKIP_IF_NEEDED();
	planted_then_refused("home", "x", "chain.yaml",
			     "echo RAN; echo ssh-ed25519 AAAA evil >> /dev/null\n",
			     "link to a planted link");
	ROW(!exists("home/.ssh/authorized_keys"), "authorized_keys was planted in ~/.ssh");
}

/* A host-made link in a directory the sandbox cannot write is followed:
 * the session starts and reads through it. */
static void test_link_read_only_followed(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_fsh("home", NULL, NULL, NULL, "ro-ok.yaml", "cat ../ro/okl/file.txt\n", &out, &err);
	ROW(st == 0 && test_has(out, "plain file"), "a link in a read-only directory: status %d", st);
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
}

/* ------------------------------------------------------------------ */
/* Class 5: persistence                                                  */
/* ------------------------------------------------------------------ */

/* Persistence files under a writable HOME (home2, no ~/.ssh): none may
 * be created or changed. */
static const char *const home_files[] = {
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshenv",
	".zshrc", ".zprofile", ".zlogin", ".zlogout", ".config/fish/config.fish",
	".config/fish/conf.d/x.fish", ".gitconfig", ".config/git/config", ".config/git/hooks/x",
	".config/autostart/x.desktop", ".config/systemd/user/x.service",
	".local/share/systemd/user/x.service", ".ssh/authorized_keys", ".ssh/rc",
	".claude/settings.json", ".claude/commands/x.md", ".claude/agents/x.md", ".cursor/mcp.json",
	".vscode/tasks.json", ".claude.json", ".pam_environment", ".xsession",
	".local/lib/python3/site-packages/x.pth", ".aws/config", ".kube/config",
	".local/share/applications/x.desktop", ".bash_completion",
	".local/share/bash-completion/completions/git", ".config/direnv/direnvrc", ".direnvrc",
	".vimrc", ".config/nvim/init.lua", ".emacs.d/init.el", ".tmux.conf", ".gdbinit", ".mailcap",
	".config/plasma-workspace/env/x.sh", ".gemini/settings.json", ".codex/config.toml",
	/* PATH candidates a login shell adds later, what it sources, and
	 * more start-up files (their parents exist: see suite_init()). */
	"bin/git", ".local/bin/git", ".cargo/bin/cargo", ".cargo/env", ".bashrc.d/x.sh",
	".oh-my-zsh/custom/x.zsh", ".zsh/x.zsh", ".local/share/nvim/site/plugin/x.lua",
	".config/VSCodium/User/settings.json", ".config/Windsurf/User/settings.json",
	".vscode-server/data/Machine/settings.json", ".ipython/profile_default/startup/x.py",
	".jupyter/jupyter_config.py", ".Rprofile", ".irbrc", ".pythonrc.py", ".hgrc",
	".gradle/init.d/x.gradle", ".yarnrc", ".bunfig.toml", ".psqlrc", ".sqliterc", ".lldbinit",
	".screenrc", ".terraformrc", ".config/i3/config", ".config/starship.toml",
	".config/mise/config.toml", ".config/lazygit/config.yml", ".claude/hooks/x.sh",
	".claude/skills/x/SKILL.md", ".gemini/commands/x.toml", ".docker/cli-plugins/docker-x",
	".emacs.el", ".pdbrc", ".gvimrc", ".jjconfig.toml", ".config/jj/config.toml",
	/* No row names these: the HOME class rule covers existing dot
	 * entries. */
	".someapprc", ".someapp/init.sh",
};

/* The same for the writable working directory. */
static const char *const work_files[] = {
	".claude/settings.json", ".claude/settings.local.json", ".claude/commands/x.md",
	".claude/agents/x.md", ".cursor/rules", ".vscode/tasks.json", ".idea/workspace.xml",
	".mcp.json", ".gitmodules", ".gemini/settings.json", ".aider.conf.yml",
	".devcontainer/devcontainer.json", ".devcontainer.json", ".zed/tasks.json",
	".codex/config.toml", ".kiro/settings/mcp.json", ".roo/mcp.json", ".amazonq/mcp.json",
	".continue/config.yaml", "opencode.json", ".gemini/commands/x.toml",
	".claude/skills/x/SKILL.md", ".claude/hooks/x.sh", ".nvim.lua", ".exrc",
	".helix/languages.toml", ".envrc", ".theia/tasks.json", ".pre-commit-config.yaml",
	"lefthook.yml", ".husky/pre-commit", "lefthook.toml", ".lefthook.json", ".huskyrc",
	".simple-git-hooks.json", ".overcommit.yml", "mise.toml", ".mise.toml", ".lazy.lua",
	".windsurf/mcp.json", ".trae/mcp.json", ".qwen/settings.json", ".crush.json",
	".lazygit.yml", ".lintstagedrc", ".nanostagedrc", ".commitlintrc", "crush.json", ".envrc.local",
	"husky.config.js", ".huskyrc.js",
	/* Start-up files tools also read from the current directory, and
	 * more names of mise's (round 3 of the attack). */
	".pdbrc", ".vimrc", ".gvimrc", "_vimrc", "_exrc", ".gdbinit", ".lldbinit", ".Rprofile",
	".irbrc", ".pryrc", ".dir-locals.el", ".dir-locals-2.el", "mise.local.toml",
	".mise.local.toml", ".mise/config.toml", ".mise/tasks/x", ".rtx.toml", ".rtx.local.toml",
};

/* A script that tries to create or append to each file (mkdir -p of its
 * directory first) and prints "w:<file>=<status>". */
static void try_writes(char *script, size_t len, const char *base, const char *const *files,
		       size_t n)
{
	size_t off = 0;

	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(script + off, len - off,
					"f=%s/%s; mkdir -p \"$(dirname \"$f\")\" 2>/dev/null; "
					"echo evil >> \"$f\" 2>/dev/null; echo \"w:%s=$?\"\n",
					base, files[i], files[i]);
	if (off < len)
		off += (size_t)snprintf(script + off, len - off,
					"mkdir -p %1$s/ctl && echo ok > %1$s/ctl/ok.txt; echo \"ok=$?\"\n", base);
	/* A script cut short would test less than it says, and the
	 * caller's commands behind it would be lost. */
	CU_ASSERT_FATAL(off + 256 < len);
}

static void test_persistence_home(void)
{
	char script[16384], line[PATH_MAX], rel[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	try_writes(script, sizeof(script), "~", home_files, sizeof(home_files) / sizeof(home_files[0]));
	/* Around the protections: move the existing ~/.config aside (then
	 * ~/.config/git would be free), or put a link where ~/.ssh goes. */
	strncat(script,
		"mv ~/.config ~/.cfg-old 2>/dev/null; echo mv=$?\n"
		"rm -rf ~/.ssh 2>/dev/null; ln -s /tmp ~/.ssh 2>/dev/null; echo ln=$?\n",
		sizeof(script) - strlen(script) - 1);
	st = run_fsh("home2", NULL, NULL, NULL, "home.yaml", script, &out, &err);
	ROW(test_has(out, "mv=") && !test_has(out, "mv=0"), "~/.config could be moved aside");
	ROW(test_has(out, "ln=") && !test_has(out, "ln=0"), "~/.ssh could be replaced by a link");
	ROW(!exists("home2/.cfg-old"), "~/.config was moved on the host");
	ROW(st == 0 && test_has(out, "ok=0"), "writable HOME: status %d, control write failed", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(home_files) / sizeof(home_files[0]); i++) {
		snprintf(line, sizeof(line), "w:%s=0\n", home_files[i]);
		ROW(!test_has(out, line), "~/%s could be written in the sandbox", home_files[i]);
		snprintf(rel, sizeof(rel), "home2/%s", home_files[i]);
		if (strcmp(home_files[i], ".bashrc") == 0 || strcmp(home_files[i], ".someapprc") == 0) {
			char want[64];
			snprintf(want, sizeof(want), "original %s\n", home_files[i] + 1);
			text = test_read_file(at(line, rel), NULL);
			ROW(text && strcmp(text, want) == 0, "~/%s changed", home_files[i]);
			free(text);
		} else {
			ROW(!exists(rel), "~/%s exists on the host afterwards", home_files[i]);
		}
	}
	/* Placeholders are gone, the control file stayed. */
	ROW(!exists("home2/.ssh") && !exists("home2/.config/git") && !exists("home2/.bash_login"),
	    "a placeholder was left in HOME");
	ROW(exists("home2/.config/app.conf"), "~/.config lost its file");
	/* In a directory: a new file at the top of HOME moves aside (round 31). */
	ROW(exists("home2/ctl/ok.txt"), "the control write did not reach the host");
	drop("home2/ctl/ok.txt");
	(void)rmdir(at(line, "home2/ctl"));
	free(out);
	free(err);
}

static void test_persistence_workspace(void)
{
	char script[16384], line[PATH_MAX], rel[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	try_writes(script, sizeof(script), ".", work_files, sizeof(work_files) / sizeof(work_files[0]));
	strncat(script, "mv .claude .claude-old 2>/dev/null; echo mv=$?\n",
		sizeof(script) - strlen(script) - 1);
	st = run_fsh("home", NULL, NULL, NULL, "work.yaml", script, &out, &err);
	ROW(test_has(out, "mv=") && !test_has(out, "mv=0"), "./.claude could be moved aside");
	ROW(st == 0 && test_has(out, "ok=0"), "workspace: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(work_files) / sizeof(work_files[0]); i++) {
		snprintf(line, sizeof(line), "w:%s=0\n", work_files[i]);
		ROW(!test_has(out, line), "./%s could be written in the sandbox", work_files[i]);
		snprintf(rel, sizeof(rel), "work/%s", work_files[i]);
		if (strcmp(work_files[i], ".mcp.json") == 0) {
			text = test_read_file(at(line, rel), NULL);
			ROW(text && strcmp(text, "{}\n") == 0, "./.mcp.json changed");
			free(text);
		} else {
			ROW(!exists(rel), "./%s exists on the host afterwards", work_files[i]);
		}
	}
	ROW(exists("work/ctl/ok.txt"), "the control write did not reach the host");
	drop("work/ctl/ok.txt");
	free(out);
	free(err);
}

/* The HOME class rule: with HOME writable, a dot directory no row names
 * is read-only, one allowWrite names exactly stays writable, and so do
 * HOME's other entries. */
static void test_home_dot_rule(void)
{
	const char *script = "echo x > ~/.cache/c 2>/dev/null; echo c=$?\n"
			     "echo x > ~/.someapp/y 2>/dev/null; echo s=$?\n"
			     "echo x > ~/node_modules/y 2>/dev/null; echo nm=$?\n"
			     "echo x > ~/plain.txt 2>/dev/null; echo p=$?\n";
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home2/node_modules") == 0);
	st = run_fsh("home2", NULL, NULL, NULL, "home-cache.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "c=0\n") && test_has(out, "p=0\n"),
	    "allowWrite ~/.cache or ~/plain.txt not writable: status %d, %s", st, out ? out : "");
	ROW(test_has(out, "s=") && !test_has(out, "s=0"), "~/.someapp was writable");
	ROW(!exists("home2/.someapp/y"), "~/.someapp/y reached the host");
	ROW(test_has(out, "\nnm=") && !test_has(out, "\nnm=0"), "an existing ~/node_modules was writable");
	ROW(!exists("home2/node_modules/y"), "~/node_modules/y reached the host");
	if (st != 0)
		show(st, out, err);
	/* A new file at the top of HOME: moved aside (round 31). */
	ROW(!exists("home2/plain.txt") && exists("home2/plain.txt.passavant-quarantine"),
	    "a new ~/plain.txt was not moved aside: %s", err ? err : "");
	drop("home2/.cache/c");
	drop("home2/plain.txt");
	drop("home2/plain.txt.passavant-quarantine");
	(void)rmdir(at(buf, "home2/node_modules"));
	free(out);
	free(err);
}

/* Re-test: a writable HOME and a dot entry no row names that does not
 * exist yet (~/.mavenrc, ~/.newtool/rc): created in the session, moved
 * aside after it and reported; an allowWrite entry inside HOME
 * (~/.cache), the existing dot entries (with the mount plan's
 * placeholders made inside them) and an empty new entry stay. */
static void test_home_new_entries(void)
{
	const char *script = "echo 'mvn() { touch /tmp/x; }' > ~/.mavenrc; echo m=$?\n"
			     "mkdir -p ~/.newtool && echo run > ~/.newtool/rc; echo n=$?\n"
			     "echo x > ~/.cache/kept; echo c=$?\n"
			     ": > ~/.hushlogin; echo h=$?\n"
			     "mkdir -p ~/node_modules/x && echo 'module.exports=1' > ~/node_modules/x/index.js; "
			     "echo nm=$?\n"
			     "mkdir -p ~/proj-hl && : > ~/proj-hl/notes.txt && ln ~/proj-hl/notes.txt ~/.tclshrc; "
			     "echo hl=$?\n";
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_fsh("home2", NULL, NULL, NULL, "home-cache.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "m=0\n") && test_has(out, "n=0\n") && test_has(out, "c=0\n"),
	    "the writes inside the session: status %d, %s", st, out ? out : "");
	ROW(!exists("home2/.mavenrc") && exists("home2/.mavenrc.passavant-quarantine") &&
		    test_has(err, ".mavenrc"),
	    "a new ~/.mavenrc was not moved aside: %s", err ? err : "");
	ROW(!exists("home2/.newtool") && exists("home2/.newtool.passavant-quarantine"),
	    "a new ~/.newtool was not moved aside: %s", err ? err : "");
	ROW(exists("home2/.cache/kept"), "~/.cache/kept (allowWrite ~/.cache) was moved");
	/* Empty, but a file (round 31: it hides the last login's line). */
	ROW(!exists("home2/.hushlogin") && exists("home2/.hushlogin.passavant-quarantine"),
	    "an empty new ~/.hushlogin was not moved aside: %s", err ? err : "");
	ROW(test_has(out, "nm=0\n") && !exists("home2/node_modules") &&
		    exists("home2/node_modules.passavant-quarantine/x/index.js") && test_has(err, "node_modules"),
	    "a new ~/node_modules was not moved aside: %s", err ? err : "");
	ROW(exists("home2/.config") && !exists("home2/.config.passavant-quarantine"),
	    "an existing dot directory was moved aside: %s", err ? err : "");
	/* Empty, but a second name of a project file a later session may
	 * write (round 8 of the attack). */
	ROW(test_has(out, "hl=0\n") && !exists("home2/.tclshrc") && exists("home2/.tclshrc.passavant-quarantine"),
	    "an empty ~/.tclshrc linked to a project file was left: %s", err ? err : "");
	if (st != 0)
		show(st, out, err);
	drop("home2/.mavenrc.passavant-quarantine");
	drop("home2/.tclshrc.passavant-quarantine");
	drop("home2/proj-hl/notes.txt");
	(void)rmdir(at(buf, "home2/proj-hl"));
	drop("home2/.newtool.passavant-quarantine/rc");
	(void)rmdir(at(buf, "home2/.newtool.passavant-quarantine"));
	drop("home2/.cache/kept");
	drop("home2/.hushlogin");
	drop("home2/.hushlogin.passavant-quarantine");
	drop("home2/node_modules.passavant-quarantine/x/index.js");
	(void)rmdir(at(buf, "home2/node_modules.passavant-quarantine/x"));
	(void)rmdir(at(buf, "home2/node_modules.passavant-quarantine"));
	free(out);
	free(err);
}

/*
 * Round 30 of the attack: the HOME class rule covered only dot entries
 * (and ~/bin, ~/node_modules), so in a writable HOME a tool root with no
 * dot stayed writable: a .pth planted in ~/miniconda3's site-packages ran
 * at the user's next shell (conda's .bashrc block), a module in
 * ~/go/pkg/mod ran in the user's other projects. Every existing entry of
 * a writable HOME is read-only unless allowWrite names it or it is (or
 * holds) the working directory; a new one stays, except a new ~/go (the
 * module cache GOPATH's default puts there), which is moved aside after
 * the run as a new dot entry is.
 */
static void test_home_every_entry(void)
{
	const char *script = "echo 'import os' >> ~/miniconda3/lib/site-packages/zz.pth 2>/dev/null; echo pth=$?\n"
			     "echo 'func init(){}' >> ~/go/pkg/mod/ex/lib.go 2>/dev/null; echo go=$?\n"
			     "echo x >> ~/notes.txt 2>/dev/null; echo notes=$?\n"
			     "echo x > ~/perl5/lib/X.pm 2>/dev/null; echo perl=$?\n"
			     "mv ~/miniconda3 ~/mc-old 2>/dev/null; echo mv=$?\n"
			     "echo x >> ~/proj/f 2>/dev/null; echo proj=$?\n"
			     "mkdir -p ~/newproj && echo x >> ~/newproj/f; echo new=$?\n";
	char h[PATH_MAX], home[PATH_MAX], pol[PATH_MAX], cwd[PATH_MAX], sc[PATH_MAX], *out = NULL, *err = NULL,
		*text;
	struct test_sbx_run r = {cwd, home, NULL, pol, sc, NULL, NULL};
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home5/miniconda3/lib/site-packages") == 0 && mkdirs("home5/go/pkg/mod/ex") == 0 &&
			mkdirs("home5/perl5/lib") == 0 && mkdirs("home5/proj") == 0 && mkdirs("home6") == 0);
	CU_ASSERT_FATAL(mkfile(at(h, "home5/go/pkg/mod/ex/lib.go"), "package ex\n") == 0 &&
			mkfile(at(h, "home5/notes.txt"), "notes\n") == 0 &&
			mkfile(at(h, "home5/.bashrc"), "original bashrc\n") == 0);
	CU_ASSERT_FATAL(write_policy("home5.yaml", "filesystem:\n  allowWrite: [\"%1$s/home5\", \"%1$s/work\"]\n") == 0 &&
			write_policy("dot.yaml", "filesystem:\n  allowWrite: [\".\"]\n") == 0 &&
			write_policy("home5-go.yaml",
				     "filesystem:\n  allowWrite: [\"%1$s/home5\", \"%1$s/home5/go\"]\n") == 0 &&
			write_policy("home6.yaml", "filesystem:\n  allowWrite: [\"%1$s/home6\", \"%1$s/work\"]\n") == 0);

	/* allowWrite "~", run from elsewhere. */
	st = run_fsh("home5", NULL, NULL, NULL, "home5.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "new=0\n"), "allowWrite ~: status %d, a new ~/newproj not writable: %s", st,
	    out ? out : "");
	ROW(test_has(out, "pth=") && !test_has(out, "pth=0"), "~/miniconda3's site-packages was writable");
	ROW(!exists("home5/miniconda3/lib/site-packages/zz.pth"), "the planted .pth reached the host");
	ROW(test_has(out, "\ngo=") && !test_has(out, "\ngo=0"), "the module cache ~/go/pkg/mod was writable");
	text = test_read_file(at(h, "home5/go/pkg/mod/ex/lib.go"), NULL);
	ROW(text != NULL && strcmp(text, "package ex\n") == 0, "a module in ~/go/pkg/mod changed on the host");
	free(text);
	ROW(test_has(out, "notes=") && !test_has(out, "notes=0"), "an existing ~/notes.txt was writable");
	ROW(test_has(out, "perl=") && !test_has(out, "perl=0"), "~/perl5 was writable");
	ROW(test_has(out, "mv=") && !test_has(out, "mv=0") && exists("home5/miniconda3"),
	    "~/miniconda3 could be moved aside");
	ROW(test_has(out, "proj=") && !test_has(out, "proj=0"), "~/proj (not the working directory) was writable");
	ROW(exists("home5/newproj/f") && !exists("home5/newproj.passavant-quarantine"),
	    "a new ~/newproj did not stay: %s", err ? err : "");
	ROW(test_has(err, "~/miniconda3") && test_has(err, "filesystem.allowWrite"),
	    "no notice names the read-only entries and what to do: %s", err ? err : "");
	if (st != 0 || !test_has(out, "new=0\n"))
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;
	/* Each run makes its own new ~/newproj. */
	drop("home5/newproj/f");
	(void)rmdir(at(h, "home5/newproj"));

	/* The default policy, run from ~ itself: the working directory is
	 * HOME, whose existing entries are read-only all the same. */
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_FATAL(mkfile(sc, script) == 0);
	at(home, "home5");
	at(cwd, "home5");
	at(pol, "dot.yaml");
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "new=0\n"), "run from ~: status %d, ~/newproj not writable: %s", st,
	    out ? out : "");
	ROW(test_has(out, "pth=") && !test_has(out, "pth=0"), "run from ~: ~/miniconda3 was writable");
	ROW(test_has(out, "\ngo=") && !test_has(out, "\ngo=0"), "run from ~: ~/go was writable");
	ROW(test_has(out, "proj=") && !test_has(out, "proj=0"), "run from ~: ~/proj was writable");
	ROW(!exists("home5/miniconda3/lib/site-packages/zz.pth"), "run from ~: the planted .pth reached the host");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;
	drop("home5/newproj/f");
	(void)rmdir(at(h, "home5/newproj"));

	/* allowWrite "~" and "~/go", run from ~/proj: both stay writable. */
	snprintf(sc, sizeof(sc), "%s/scripts/%u.sh", root, nscript++);
	CU_ASSERT_FATAL(mkfile(sc, script) == 0);
	at(cwd, "home5/proj");
	at(pol, "home5-go.yaml");
	st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && test_has(out, "\ngo=0\n") && test_has(out, "proj=0\n"),
	    "~/go named by allowWrite, or the working directory ~/proj, not writable: status %d, %s", st,
	    out ? out : "");
	ROW(test_has(out, "pth=") && !test_has(out, "pth=0"), "~/miniconda3 was writable beside a named ~/go");
	ROW(!test_has(err, "~/proj") && test_has(err, "~/miniconda3"),
	    "the notice names the working directory, or misses ~/miniconda3: %s", err ? err : "");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* A new ~/go (a module cache Go would use on the host) is moved
	 * aside after the run; another new entry stays, unless a start-up
	 * file names it already (a tool's block left in .bashrc, or in a
	 * file of a dot directory that .zshrc sources, after the tool was
	 * removed: its next shell would run what the session put there).
	 * Such an entry can be made in the session (no placeholder) and is
	 * moved aside after the run; one a history names stays. */
	snprintf(sc, sizeof(sc),
		 "__conda_setup=\"$('%s/conda3/bin/conda' 'shell.bash' 'hook')\"\n"
		 "if [ -f \"$HOME/gsdk/path.bash.inc\" ]; then . \"$HOME/gsdk/path.bash.inc\"; fi\n"
		 "[ -d ~/perl5x ] && eval \"$(perl -I${HOME}/perl5x/lib/perl5 -Mlocal::lib)\"\n",
		 at(h, "home6"));
	CU_ASSERT_FATAL(mkfile(at(h, "home6/.bashrc"), sc) == 0);
	CU_ASSERT_FATAL(mkdirs("home6/.zsh") == 0 &&
			mkfile(at(h, "home6/.zsh/conda.zsh"),
			       "[ -f ~/mc3/etc/profile.d/conda.sh ] && . ~/mc3/etc/profile.d/conda.sh\n") == 0 &&
			mkfile(at(h, "home6/.viminfo"), "> ~/scratch/notes.txt\n") == 0 &&
			mkfile(at(h, "home6/.zsh_history"), ": 1:0;cd ~/oldproj\n") == 0);
	st = run_fsh("home6", NULL, NULL, NULL, "home6.yaml",
		     "mkdir -p ~/go/pkg/mod/ex && echo 'package ex' > ~/go/pkg/mod/ex/lib.go; echo go=$?\n"
		     "mkdir -p ~/newproj && echo x > ~/newproj/f; echo new=$?\n"
		     "mkdir -p ~/conda3/bin && echo x > ~/conda3/bin/conda; echo conda=$?\n"
		     "mkdir -p ~/gsdk && echo x > ~/gsdk/path.bash.inc; echo gsdk=$?\n"
		     "mkdir -p ~/perl5x/lib; echo perl=$?\n"
		     "mkdir -p ~/mc3/etc/profile.d && echo x > ~/mc3/etc/profile.d/conda.sh; echo mc3=$?\n"
		     "mkdir ~/scratch && echo x > ~/scratch/f; echo scratch=$?\n"
		     "mkdir ~/oldproj && echo x > ~/oldproj/f; echo oldproj=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "go=0\n") && test_has(out, "new=0\n"), "new entries: status %d, %s", st,
	    out ? out : "");
	ROW(test_has(out, "conda=0\n") && test_has(out, "gsdk=0\n") && test_has(out, "perl=0\n") &&
		    test_has(out, "mc3=0\n") && test_has(out, "scratch=0\n") && test_has(out, "oldproj=0\n"),
	    "an entry a start-up file or a history names could not be created in the session: %s",
	    out ? out : "");
	ROW(!exists("home6/conda3") && exists("home6/conda3.passavant-quarantine/bin/conda") &&
		    !exists("home6/gsdk") && exists("home6/gsdk.passavant-quarantine/path.bash.inc") &&
		    !exists("home6/perl5x") && exists("home6/perl5x.passavant-quarantine/lib"),
	    "an entry .bashrc names was not moved aside after the run: %s", err ? err : "");
	ROW(!exists("home6/mc3") && exists("home6/mc3.passavant-quarantine/etc/profile.d/conda.sh") &&
		    test_has(err, ".zsh/conda.zsh"),
	    "an entry ~/.zsh/conda.zsh names was not moved aside after the run: %s", err ? err : "");
	ROW(exists("home6/scratch/f") && exists("home6/oldproj/f"),
	    "an entry only .viminfo or a history names was moved aside: %s", err ? err : "");
	ROW(!exists("home6/go") && exists("home6/go.passavant-quarantine/pkg/mod/ex/lib.go") && test_has(err, "go"),
	    "a new ~/go was not moved aside: %s", err ? err : "");
	ROW(exists("home6/newproj/f"), "a new ~/newproj did not stay: %s", err ? err : "");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
}

/*
 * Round 31 of the attack: in a writable HOME a new entry without a dot
 * stayed unless a start-up file named it, but tools walk up from the
 * directory they run in, and HOME is above every project: a planted
 * ~/go.work made `go run .` in ~/gproj build ~/evil, a ~/Cargo.toml
 * workspace ran a planted build.rs, ~/pytest.ini and ~/conftest.py ran
 * in every project's tests; ~/R (R's user library) and ~/texmf are read
 * with no start-up file; ~/HEAD, ~/objects, ~/refs made HOME a bare git
 * directory for every directory under it. Every new entry at the top
 * of HOME that is not a directory is moved aside now, empty or not,
 * unless a root names it; a new directory stays (~/proj), except the
 * tool roots read by default and git's objects and refs. Not tested: an
 * allowWrite entry naming a file of HOME (such a file is read-only in
 * the sandbox on the old code too, and the check reports it unread).
 */
static void test_home_new_files(void)
{
	const char *script =
		"printf 'go 1.21\\nuse (\\n\\t./gproj\\n\\t./evil\\n)\\n' > ~/go.work; echo gw=$?\n"
		"mkdir -p ~/evil && echo 'module evil' > ~/evil/go.mod\n"
		"printf '[workspace]\\nmembers = [\\\"crate\\\"]\\n' > ~/Cargo.toml; echo cargo=$?\n"
		": > ~/pytest.ini; echo 'import os' > ~/conftest.py; echo py=$?\n"
		"mkdir -p ~/R/x86_64-pc-linux-gnu-library/4.2/utils/R && "
		"echo 'system(\\\"id\\\")' > ~/R/x86_64-pc-linux-gnu-library/4.2/utils/R/utils; echo r=$?\n"
		"mkdir -p ~/texmf/tex/latex && echo x > ~/texmf/tex/latex/article.cls; echo tex=$?\n"
		"mkdir -p ~/public_html && echo '<?php system(\\\"id\\\"); ?>' > ~/public_html/i.php\n"
		"echo 'ref: refs/heads/master' > ~/HEAD && mkdir -p ~/objects ~/refs/heads; echo bare=$?\n"
		"echo notes > ~/notes.txt; ln -s /etc/passwd ~/link; mkfifo ~/fifo; echo notes=$?\n"
		"mkdir -p ~/proj && echo x > ~/proj/f; echo proj=$?\n";
	static const char *const gone[] = {"go.work", "Cargo.toml", "pytest.ini", "conftest.py", "R", "texmf",
					   "HEAD", "objects", "refs", "notes.txt", "link", "fifo", "public_html"};
	char h[PATH_MAX], buf[PATH_MAX], *out = NULL, *err = NULL, *gw = NULL, *gerr = NULL;
	char hv[PATH_MAX + 8], gp[PATH_MAX];
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home14/gproj") == 0 &&
			mkfile(at(h, "home14/gproj/go.mod"), "module gproj\n\ngo 1.21\n") == 0 &&
			mkfile(at(h, "home14/.bashrc"), "original bashrc\n") == 0 &&
			write_policy("home14.yaml", "filesystem:\n  allowWrite: [\"%1$s/home14\", \"%1$s/work\"]\n") == 0);
	st = run_fsh("home14", NULL, NULL, NULL, "home14.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "gw=0\n") && test_has(out, "cargo=0\n") && test_has(out, "py=0\n") &&
		    test_has(out, "r=0\n") && test_has(out, "tex=0\n") && test_has(out, "bare=0\n") &&
		    test_has(out, "notes=0\n") && test_has(out, "proj=0\n"),
	    "the writes in the session: status %d, %s", st, out ? out : "");
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		char q[PATH_MAX];

		snprintf(buf, sizeof(buf), "home14/%s", gone[i]);
		snprintf(q, sizeof(q), "home14/%s.passavant-quarantine", gone[i]);
		ROW(!exists(buf) && exists(q), "a new ~/%s was not moved aside: %s", gone[i], err ? err : "");
	}
	ROW(test_has(err, "a new file at the top of the home directory"), "no report of the new files: %s",
	    err ? err : "");
	ROW(exists("home14/proj/f") && !exists("home14/proj.passavant-quarantine"),
	    "a new ~/proj directory did not stay: %s", err ? err : "");
	ROW(test_has(err, "a new file at its top") || st != 0, "the notice does not say new files move aside: %s",
	    err ? err : "");
	/* Go on the host: no go.work above ~/gproj any more. */
	snprintf(hv, sizeof(hv), "HOME=%s", at(h, "home14"));
	at(gp, "home14/gproj");
	char *goenv[] = {"env", "-C", gp, hv, "GOTOOLCHAIN=local", "GOFLAGS=", "GOWORK=", "go", "env", "GOWORK",
			 NULL};

	if (access("/usr/bin/go", X_OK) == 0 || access("/usr/local/go/bin/go", X_OK) == 0) {
		int gst = test_run_capture(goenv, &gw, &gerr, 60000);

		ROW(gst == 0 && gw != NULL && !test_has(gw, "go.work"), "go on the host still finds a go.work: %d %s %s",
		    gst, gw ? gw : "", gerr ? gerr : "");
	}
	if (st != 0)
		show(st, out, err);
	free(gw);
	free(gerr);
	free(out);
	free(err);
}

/*
 * Round 30's review: an entry of a writable HOME without a dot that is a
 * symbolic link (~/Downloads -> /mnt/x) or a file with a second hard link
 * refused the start, with a message about a planted link; run from ~ was
 * impossible for an ordinary home. Such an entry stays writable now (its
 * target keeps its own protections) and is moved aside after the run
 * when the session replaced, retargeted or wrote it.
 */
static void test_home_links(void)
{
	char h[PATH_MAX], t[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home7") == 0 && mkdirs("ext7") == 0 &&
			mkfile(at(h, "ext7/f"), "theirs\n") == 0 && mkfile(at(h, "home7/hl.txt"), "notes\n") == 0 &&
			write_policy("home7.yaml", "filesystem:\n  allowWrite: [\"%1$s/home7\", \"%1$s/work\"]\n") == 0);
	CU_ASSERT_FATAL(symlink(at(t, "ext7"), at(h, "home7/dl")) == 0 &&
			symlink(at(t, "ext7"), at(h, "home7/dl2")) == 0 &&
			link(at(t, "home7/hl.txt"), at(h, "ext7/hl-backup.txt")) == 0);
	st = run_fsh("home7", NULL, NULL, NULL, "home7.yaml",
		     "cat ~/dl/f; echo read=$?\necho x >> ~/dl/f 2>/dev/null; echo through=$?\n", &out, &err);
	ROW(st == 0 && test_has(out, "theirs\nread=0\n"), "a HOME with a link ~/dl and a hard-linked ~/hl.txt: "
	    "status %d, %s %s", st, out ? out : "", err ? err : "");
	ROW(test_has(out, "through=") && !test_has(out, "through=0"), "the link's target was writable through it");
	ROW(readlink(at(h, "home7/dl"), t, sizeof(t)) > 0 && exists("home7/hl.txt") &&
		    !exists("home7/dl.passavant-quarantine") && !exists("home7/hl.txt.passavant-quarantine"),
	    "an untouched link or hard-linked file was moved aside: %s", err ? err : "");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	st = run_fsh("home7", NULL, NULL, NULL, "home7.yaml",
		     "rm ~/dl && mkdir ~/dl && echo planted > ~/dl/f; echo replace=$?\n"
		     "ln -sfn /tmp ~/dl2; echo retarget=$?\n"
		     "echo planted >> ~/hl.txt; echo write=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "replace=0\n") && test_has(out, "retarget=0\n") && test_has(out, "write=") &&
		    !test_has(out, "write=0\n"),
	    "the session could not change the links, or wrote the hard-linked file: status %d, %s", st,
	    out ? out : "");
	ROW(!exists("home7/dl") && exists("home7/dl.passavant-quarantine/f"),
	    "a link replaced by a directory was not moved aside: %s", err ? err : "");
	ROW(!exists("home7/dl2") && exists("home7/dl2.passavant-quarantine"),
	    "a retargeted link was not moved aside: %s", err ? err : "");
	/* A hard-linked file without a dot is read-only now (its other
	 * name may be a start-up file: test_home_hard_link_read_only()). */
	ROW(exists("home7/hl.txt") && !exists("home7/hl.txt.passavant-quarantine"),
	    "a hard-linked file was moved aside: %s", err ? err : "");
	text = test_read_file(at(h, "ext7/f"), NULL);
	ROW(text != NULL && strcmp(text, "theirs\n") == 0, "the link's target changed");
	free(text);
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* TMPDIR (and TMP) at an existing entry of the writable HOME, which
	 * is read-only: mktemp failed (round 30's review); the command gets
	 * the sandbox's /tmp, and one notice says so. */
	{
		char tmpv[PATH_MAX + 16], tmpw[PATH_MAX + 16];
		const char *env[3] = {tmpv, tmpw, NULL};

		CU_ASSERT_FATAL(mkdirs("home7/tmp") == 0);
		snprintf(tmpv, sizeof(tmpv), "TMPDIR=%s", at(t, "home7/tmp"));
		snprintf(tmpw, sizeof(tmpw), "TMP=%s", at(t, "home7/tmp"));
		st = run_fsh("home7", NULL, env, NULL, "home7.yaml",
			     "echo T=$TMPDIR U=$TMP; mktemp >/dev/null; echo mktemp=$?\n", &out, &err);
		ROW(st == 0 && test_has(out, "T=/tmp U=/tmp\n") && test_has(out, "mktemp=0\n") &&
			    test_has(err, "TMPDIR=") && test_has(err, "the command's TMPDIR is /tmp"),
		    "TMPDIR in a read-only entry of HOME: status %d, %s %s", st, out ? out : "", err ? err : "");
		if (st != 0)
			show(st, out, err);
		free(out);
		free(err);
		out = err = NULL;
	}

	/* A dot entry that is a link still refuses the start, saying so
	 * about the home, and without the notice before it (whose advice
	 * the refusal contradicted). */
	CU_ASSERT_FATAL(mkdirs("home8/proj") == 0 && symlink(at(t, "ext7"), at(h, "home8/.nix-x")) == 0 &&
			write_policy("home8.yaml", "filesystem:\n  allowWrite: [\"%1$s/home8\", \"%1$s/work\"]\n") == 0);
	st = run_fsh("home8", NULL, NULL, NULL, "home8.yaml", "echo ran\n", &out, &err);
	ROW(st == 125 && !test_has(out, "ran") &&
		    test_has(err, "~/.nix-x is a symbolic link among the dot entries of the home directory") &&
		    !test_has(err, "to write one, name it in filesystem.allowWrite"),
	    "a dot link of a writable HOME: status %d, %s", st, err ? err : "");
	free(out);
	free(err);
}

/*
 * A writable ~/.config (allowWrite naming it), and ~/.local/share:
 * everything there is some program's configuration or data it runs (a
 * Jupyter kernel's command line), so the class rule of HOME applies to
 * all of their entries, dot or not. An existing one is read-only unless named
 * (~/.config/mine is), a new non-empty one is moved aside after the run,
 * an empty one stays. Round 7 of the attack planted 19 start-up files no
 * row names (nushell, kitty, ranger, a VS Code OSS profile...; since
 * round 39 nushell's history and "Code - OSS/User/globalStorage" are
 * store rows, whose directories a placeholder keeps, so the test plants
 * ranger's and an editor's no row names, lapce-stable).
 */
static void test_config_dir(void)
{
	const char *script = "c=$HOME/.config\n"
			     "echo evil >> $c/existing/cfg 2>/dev/null; echo ex=$?\n"
			     "mkdir -p $c/ranger && echo 'map x shell touch y' > $c/ranger/rc.conf; echo nu=$?\n"
			     "mkdir -p \"$c/lapce-stable/User\" && echo '{}' > \"$c/lapce-stable/User/settings.json\"; "
			     "echo code=$?\n"
			     "echo 'shell /bin/evil' > $c/kitty.conf; echo k=$?\n"
			     "echo ok > $c/mine/ok.conf; echo m=$?\n"
			     ": > $c/empty; echo z=$?\n"
			     "d=$HOME/.local/share/jupyter/kernels/x; mkdir -p $d && echo '{\"argv\": [\"sh\"]}' > $d/kernel.json; "
			     "echo j=$?\n";
	char buf[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home3/.config/existing") == 0 && mkdirs("home3/.config/mine") == 0 &&
			mkdirs("home3/.local/share") == 0);
	CU_ASSERT_FATAL(mkfile(at(buf, "home3/.config/existing/cfg"), "kept\n") == 0);
	st = run_fsh("home3", NULL, NULL, NULL, "config.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "nu=0\n") && test_has(out, "code=0\n") && test_has(out, "k=0\n") &&
		    test_has(out, "m=0\n") && test_has(out, "ex=") && !test_has(out, "ex=0\n"),
	    "the writes inside the session: status %d, %s", st, test_nz(out));
	text = test_read_file(at(buf, "home3/.config/existing/cfg"), NULL);
	ROW(text != NULL && strcmp(text, "kept\n") == 0, "an existing entry of ~/.config changed");
	free(text);
	ROW(!exists("home3/.config/ranger") && exists("home3/.config/ranger.passavant-quarantine") &&
		    !exists("home3/.config/lapce-stable") && exists("home3/.config/lapce-stable.passavant-quarantine") &&
		    !exists("home3/.config/kitty.conf") && exists("home3/.config/kitty.conf.passavant-quarantine") &&
		    test_has(err, "a new entry of a configuration or data directory"),
	    "new entries of a writable ~/.config were not moved aside: %s", test_nz(err));
	ROW(test_has(out, "j=0\n") && !exists("home3/.local/share/jupyter") &&
		    exists("home3/.local/share/jupyter.passavant-quarantine"),
	    "a new Jupyter kernel in a writable ~/.local/share was not moved aside: %s", test_nz(err));
	ROW(exists("home3/.config/mine/ok.conf") && exists("home3/.config/empty"),
	    "a named entry's file or an empty new entry was moved: %s", test_nz(err));
	if (st != 0)
		show(st, out, err);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", at(buf, "home3"));
		CU_ASSERT(system(cmd) == 0);
	}
	free(out);
	free(err);
}

/*
 * A configuration or data directory the environment puts in a writable
 * tree (the review of round 8): $XDG_DATA_HOME missing at the start is
 * new as a whole, so one created in the session is moved aside with what
 * it holds (a Jupyter kernel); $XDG_CONFIG_HOME swapped for a link to a
 * directory the command could not write (~/Documents) is not checked
 * through the link: nothing there is moved, and the swap is reported.
 * (~/.config and ~/.local/share themselves hold the rows' placeholders:
 * the command can neither create nor move them.)
 */
static void test_xdg_dirs_missing_or_swapped(void)
{
	char buf[PATH_MAX], data[PATH_MAX + 16], cfg[PATH_MAX + 16], cmd[2 * PATH_MAX], *out = NULL, *err = NULL;
	const char *env[3] = {data, cfg, NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(data, sizeof(data), "XDG_DATA_HOME=%s", at(buf, "work/xdg-data"));
	snprintf(cfg, sizeof(cfg), "XDG_CONFIG_HOME=%s", at(buf, "work/xdg-cfg"));
	CU_ASSERT_FATAL(mkdirs("work/xdg-cfg") == 0 && mkdirs("home/Documents") == 0);
	CU_ASSERT_FATAL(mkfile(at(buf, "home/Documents/thesis.txt"), "mine\n") == 0);
	st = run_fsh("home", NULL, env, NULL, "work.yaml",
		     "d=$XDG_DATA_HOME/jupyter/kernels/x; mkdir -p $d && echo '{}' > $d/kernel.json; echo j=$?\n"
		     "mv $XDG_CONFIG_HOME $XDG_CONFIG_HOME-old && ln -s $HOME/Documents $XDG_CONFIG_HOME; echo s=$?\n",
		     &out, &err);
	/* Either way closed: the mount plan's placeholders for the rows
	 * under them make both directories (read-only where missing, busy
	 * mount holders where present), and the check after the run moves a
	 * new one aside and checks one only while it is the same directory. */
	ROW(st == 0 && !exists("work/xdg-data/jupyter/kernels/x/kernel.json") &&
		    (!test_has(out, "j=0\n") || exists("work/xdg-data.passavant-quarantine/jupyter/kernels/x/kernel.json")),
	    "a Jupyter kernel planted under a new XDG_DATA_HOME stayed: status %d, %s %s", st, test_nz(out),
	    test_nz(err));
	ROW(exists("home/Documents/thesis.txt") && !exists("home/Documents/thesis.txt.passavant-quarantine") &&
		    (!test_has(out, "s=0\n") || test_has(err, "was replaced")),
	    "an XDG_CONFIG_HOME swapped for a link: %s %s", test_nz(out), test_nz(err));
	free(out);
	free(err);
	snprintf(cmd, sizeof(cmd), "cd %s && rm -rf xdg-data xdg-data.passavant-quarantine xdg-cfg xdg-cfg-old ../home/Documents",
		 at(buf, "work"));
	CU_ASSERT(system(cmd) == 0);
}

/*
 * Start-up code interactive tools read from the directory they start in,
 * at the top of the workspace (read-only) and nested (moved aside after
 * the run): Perl's debugger runs ./.perldb, Python's REPL imports
 * readline and rlcompleter with the current directory first (a .py, a
 * compiled module, a package), GHCi reads ./.ghci, Octave ./.octaverc.
 * Then, on the host, the real programs are started in those directories:
 * nothing planted runs.
 */
static void test_cwd_startup(void)
{
	char buf[PATH_MAX], mark[PATH_MAX], cmd[4 * PATH_MAX], script[6 * PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(mark, "cwd-pwn");
	snprintf(script, sizeof(script),
		 "pl='system(\"touch %1$s.perl\"); 1;'\n"
		 "py='import os; os.system(\"touch %1$s.py\")'\n"
		 "[ -e readline.py ] && echo placeholder-readline.py\n"
		 "echo \"$pl\" > .perldb 2>/dev/null; echo tp=$?\n"
		 "echo \"$py\" >> rlcompleter.py 2>/dev/null; echo tc=$?\n"
		 "echo \"$py\" > readline.py; echo tr=$?\n"
		 "mkdir -p n1 n2/readline n3 && echo \"$pl\" > n1/.perldb && echo \"$py\" > n1/readline.py && "
		 "echo \"$py\" > n2/readline/__init__.py && echo \"$py\" > n3/rlcompleter.py && "
		 "echo ':! touch %1$s.ghci' > n3/.ghci && echo 'system(\"touch %1$s.oct\")' > n3/.octaverc && "
		 "echo nested=$?\n",
		 mark);
	/* An existing one, harmless (the project's own). */
	CU_ASSERT_FATAL(mkfile(at(buf, "work/rlcompleter.py"), "harmless = 1\n") == 0);
	st = run_fsh("home", NULL, NULL, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "tp=") && !test_has(out, "tp=0\n") && test_has(out, "tc=") &&
		    !test_has(out, "tc=0\n") && test_has(out, "tr=0\n") && test_has(out, "nested=0\n"),
	    "an existing top-level start-up file was writable, or new ones not written: status %d, %s", st,
	    test_nz(out));
	/* No empty placeholder: an empty readline.py would hide Python's
	 * own module from every python3 started there (pdb, the REPL). */
	ROW(!test_has(out, "placeholder-"), "a placeholder readline.py was made: %s", test_nz(out));
	ROW(!exists("work/readline.py") && exists("work/readline.py.passavant-quarantine") &&
		    exists("work/rlcompleter.py") && test_has(err, "/work/readline.py"),
	    "a new top-level readline.py was not moved aside, or the existing rlcompleter.py was: %s", test_nz(err));
	ROW(test_has(err, "/work/n1/.perldb") && test_has(err, "/work/n1/readline.py") &&
		    test_has(err, "/work/n2/readline/__init__.py") && test_has(err, "/work/n3/rlcompleter.py") &&
		    test_has(err, "/work/n3/.ghci") && test_has(err, "/work/n3/.octaverc"),
	    "nested start-up files were not moved aside: %s", test_nz(err));
	/* The real programs, on the host, in each directory. */
	snprintf(cmd, sizeof(cmd),
		 "cd %1$s && for d in . n1 n2 n3; do (cd $d && python3 -i </dev/null >/dev/null 2>&1; "
		 "echo 1 > /tmp/pv-cwd-t.pl; PERLDB_OPTS=NonStop=1 perl -d /tmp/pv-cwd-t.pl >/dev/null 2>&1); done; "
		 "rm -f /tmp/pv-cwd-t.pl; true",
		 at(buf, "work"));
	CU_ASSERT(system(cmd) == 0);
	ROW(!exists("cwd-pwn.perl") && !exists("cwd-pwn.py"), "a planted start-up file ran on the host");
	if (st != 0)
		show(st, out, err);
	snprintf(cmd, sizeof(cmd), "cd %s && rm -rf n1 n2 n3 %s.perl %s.py rlcompleter.py readline.py.passavant-quarantine",
		 at(buf, "work"), mark, mark);
	CU_ASSERT(system(cmd) == 0);
	free(out);
	free(err);
}

/* Workspace settings named by a pattern (*.code-workspace, mise.*.toml,
 * .mise.*.toml): an existing one is read-only; a new one is moved aside
 * after the run. */
static void test_workspace_pattern(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL, *text;
	const char *script = "echo evil >> old.code-workspace 2>/dev/null; echo cwo=$?\n"
			     "echo evil > new.code-workspace; echo cwn=$?\n"
			     "echo evil >> mise.ci.toml 2>/dev/null; echo mo=$?\n"
			     "echo evil > .mise.dev.toml; echo mn=$?\n";
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkfile(at(buf, "work/old.code-workspace"), "{}\n") == 0);
	CU_ASSERT_FATAL(mkfile(at(buf, "work/mise.ci.toml"), "[tools]\n") == 0);
	st = run_fsh("home", NULL, NULL, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "cwo=") && !test_has(out, "cwo=0"),
	    "an existing *.code-workspace was writable: status %d, %s", st, out ? out : "");
	text = test_read_file(at(buf, "work/old.code-workspace"), NULL);
	ROW(text != NULL && strcmp(text, "{}\n") == 0, "old.code-workspace changed");
	free(text);
	ROW(!exists("work/new.code-workspace") && exists("work/new.code-workspace.passavant-quarantine") &&
		    test_has(err, "new.code-workspace"),
	    "a new *.code-workspace was not moved aside: %s", err ? err : "");
	ROW(test_has(out, "mo=") && !test_has(out, "mo=0"), "an existing mise.*.toml was writable: %s",
	    out ? out : "");
	text = test_read_file(at(buf, "work/mise.ci.toml"), NULL);
	ROW(text != NULL && strcmp(text, "[tools]\n") == 0, "mise.ci.toml changed");
	free(text);
	ROW(!exists("work/.mise.dev.toml") && exists("work/.mise.dev.toml.passavant-quarantine") &&
		    test_has(err, ".mise.dev.toml"),
	    "a new .mise.*.toml was not moved aside: %s", err ? err : "");
	drop("work/old.code-workspace");
	drop("work/new.code-workspace.passavant-quarantine");
	drop("work/mise.ci.toml");
	drop("work/.mise.dev.toml.passavant-quarantine");
	free(out);
	free(err);
}

/* Rows under a generic directory (.config/mise.toml, .hg/hgrc,
 * mise/config.*.toml): protected where that directory exists at start;
 * where it does not, the directory stays the project's (no read-only
 * placeholder: .config/nextest.toml can be written) and a row made in
 * the session is moved aside after it. */
static void test_workspace_if_dir(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	const char *script = "echo x > .config/nextest.toml; echo cn=$?\n"
			     "echo x > .config/mise.toml 2>/dev/null; echo cm=$?\n"
			     "mkdir -p .config/mise 2>/dev/null; echo x > .config/mise/config.toml 2>/dev/null; "
			     "echo cmd=$?\n"
			     "mkdir .hg && printf '[hooks]\\npre-status = touch /tmp/x\\n' > .hg/hgrc; echo hg=$?\n"
			     "mkdir mise && echo x > mise/config.dev.toml && echo x > mise/notes.txt; echo md=$?\n";
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("work/.config") == 0 && mkfile(at(buf, "work/.config/keep"), "k\n") == 0);
	st = run_fsh("home", NULL, NULL, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "cn=0\n") && test_has(out, "hg=0\n") && test_has(out, "md=0\n"),
	    "a project's .config, .hg or mise directory was not writable: status %d, %s", st, out ? out : "");
	ROW(test_has(out, "\ncm=") && !test_has(out, "\ncm=0"), "./.config/mise.toml was writable");
	ROW(test_has(out, "\ncmd=") && !test_has(out, "\ncmd=0"), "./.config/mise/config.toml was writable");
	ROW(exists("work/.config/nextest.toml") && !exists("work/.config/mise.toml") &&
		    !exists("work/.config/mise"),
	    "./.config afterwards: nextest.toml lost, or a mise file or placeholder left");
	ROW(!exists("work/.hg/hgrc") && exists("work/.hg/hgrc.passavant-quarantine") && test_has(err, ".hg/hgrc"),
	    "a new .hg/hgrc was not moved aside: %s", err ? err : "");
	ROW(!exists("work/mise/config.dev.toml") && exists("work/mise/config.dev.toml.passavant-quarantine") &&
		    exists("work/mise/notes.txt"),
	    "mise/config.dev.toml was not moved aside, or mise/notes.txt was: %s", err ? err : "");
	if (st != 0)
		show(st, out, err);
	drop("work/.config/keep");
	drop("work/.config/nextest.toml");
	(void)rmdir(at(buf, "work/.config"));
	drop("work/.hg/hgrc.passavant-quarantine");
	(void)rmdir(at(buf, "work/.hg"));
	drop("work/mise/config.dev.toml.passavant-quarantine");
	drop("work/mise/notes.txt");
	(void)rmdir(at(buf, "work/mise"));
	free(out);
	free(err);
}

/* A directory on PATH inside the writable tree (and a missing one) cannot
 * be written unless allowWrite names it exactly. */
static void test_path_dirs(void)
{
	char path[4 * PATH_MAX], b1[PATH_MAX], b2[PATH_MAX], *out = NULL, *err = NULL;
	const char *script = "echo evil > bin/ls 2>/dev/null; echo bin=$?\n"
			     "mkdir -p bin2 2>/dev/null; echo evil > bin2/git 2>/dev/null; "
			     "echo bin2=$?\necho x > other.txt; echo other=$?\n";
	int st;

	SKIP_IF_NEEDED();
	snprintf(path, sizeof(path), "%s:%s:" TEST_SAFE_PATH, at(b1, "work/bin"), at(b2, "work/bin2"));
	st = run_fsh("home", path, NULL, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "other=0"), "PATH dirs: status %d", st);
	ROW(test_has(out, "bin=") && !test_has(out, "bin=0"), "a PATH directory was writable: %s",
	    out ? out : "");
	ROW(test_has(out, "bin2=") && !test_has(out, "bin2=0"), "a missing PATH directory could be created");
	ROW(!exists("work/bin/ls") && !exists("work/bin2"), "a PATH program reached the host");
	free(out);
	free(err);
	out = err = NULL;
	/* Named exactly by allowWrite: writable. */
	st = run_fsh("home", path, NULL, NULL, "bin.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "bin=0"), "allowWrite naming the PATH dir: status %d, %s", st,
	    out ? out : "");
	ROW(exists("work/bin/ls"), "the allowed PATH write did not reach the host");
	drop("work/bin/ls");
	drop("work/other.txt");
	free(out);
	free(err);
}

/* Runs cmd with sh on the host; its status, or -1. */
static int host_sh(const char *cmd)
{
	int st = system(cmd);

	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/*
 * Round 35 of the attack, e1/e1b/e2/e2b: a relative value in a variable
 * naming where a later host program reads its settings (or code): git
 * opens a relative $XDG_CONFIG_HOME/git/config, $GIT_CONFIG_GLOBAL or
 * $GIT_CONFIG_SYSTEM from the work tree's top; the session wrote
 * core.fsmonitor there in work/sub-e1 (a repository), and the host's
 * `git status` in it ran the program. The same for HGRCPATH, PHPRC,
 * PHP_INI_SCAN_DIR, GEM_HOME (its empty value too: rubygems reads "."),
 * GOENV, GOFLAGS' -toolexec, PYTHONHOME, INPUTRC, and a name the table
 * does not know by its ending (WORKON_HOME=./envs). The start is
 * refused, naming the variable and the value; absolute values, CDPATH's
 * ".", MANPATH's empty entry and names the rules do not cover start.
 */
static void test_config_location_relative(void)
{
	static const char *const rel[][3] = {
		{"XDG_CONFIG_HOME=.config", "\".config\"", "git"},
		{"GIT_CONFIG_GLOBAL=.gitconfig.local", "\".gitconfig.local\"", "git"},
		{"GIT_CONFIG_SYSTEM=.gitconfig.sys", "\".gitconfig.sys\"", "git"},
		{"HGRCPATH=/etc/mercurial/hgrc:.hgrc.local", "\".hgrc.local\"", NULL},
		{"PHPRC=.php", "\".php\"", NULL},
		{"PHP_INI_SCAN_DIR=.php.d", "\".php.d\"", NULL},
		{"GEM_HOME=.gems", "\".gems\"", NULL},
		{"GEM_HOME=", "empty value", NULL},
		{"GOENV=.goenv", "\".goenv\"", NULL},
		{"GOFLAGS=-mod=mod -toolexec=./tx", "\"./tx\"", NULL},
		{"PYTHONHOME=.py", "\".py\"", NULL},
		{"INPUTRC=.inputrc", "\".inputrc\"", NULL},
		{"WORKON_HOME=./envs", "\"./envs\"", NULL},
	};
	char cmd[3 * PATH_MAX], work[PATH_MAX], mark[PATH_MAX], script[2 * PATH_MAX];
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(mark, "mark-e1");
	/* What the session plants: git's three global files at the
	 * repository's top, each with a core.fsmonitor that leaves a mark. */
	snprintf(script, sizeof(script),
		 "cd sub-e1 && mkdir -p .config/git && "
		 "printf '[core]\\n\\tfsmonitor = \"touch %s #\"\\n' > .config/git/config && "
		 "cp .config/git/config .gitconfig.local && cp .config/git/config .gitconfig.sys && echo planted\n",
		 mark);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && rm -rf sub-e1 && mkdir sub-e1 && cd sub-e1 && git init -q . && echo x > a.txt && "
		 "git add a.txt && git -c user.email=t@e -c user.name=t commit -qm init",
		 at(work, "work"));
	CU_ASSERT_FATAL(host_sh(cmd) == 0);
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		const char *env[] = {rel[i][0], NULL};
		char var[64];

		snprintf(var, sizeof(var), "%.*s holds", (int)strcspn(rel[i][0], "="), rel[i][0]);
		(void)unlink(mark);
		st = run_fsh("home", NULL, env, NULL, "work.yaml", script, &out, &err);
		ROW(st == 125 && !test_has(out, "planted"), "%s: status %d, the command ran: %s", rel[i][0], st,
		    out ? out : "");
		ROW(test_has(err, var) && test_has(err, rel[i][1]) && test_has(err, "absolute path") &&
			    test_has(err, "not started"),
		    "%s: the refusal does not name the variable and value: %s", rel[i][0], err ? err : "");
		if (rel[i][2] != NULL) {
			/* The host's git in the repository, the variable as the
			 * user's (a prompt runs git status). */
			snprintf(cmd, sizeof(cmd), "cd '%s/sub-e1' && %s git status --short >/dev/null 2>&1", work,
				 rel[i][0]);
			(void)host_sh(cmd);
			ROW(access(mark, F_OK) != 0, "%s: the host's git status in work/sub-e1 ran the session's "
						     "core.fsmonitor", rel[i][0]);
		}
		if (st != 125)
			show(st, out, err);
		free(out);
		free(err);
		out = err = NULL;
		snprintf(cmd, sizeof(cmd), "cd '%s/sub-e1' && rm -rf .config .gitconfig.local .gitconfig.sys", work);
		(void)host_sh(cmd);
	}
	/* Absolute values, an empty HGRCPATH, CDPATH's ".", MANPATH's empty
	 * entry, GOFLAGS without a relative program, names no rule covers:
	 * started. */
	{
		const char *env[] = {"HGRCPATH=", "CDPATH=.:~:/usr", "MANPATH=:/opt/man", "DATA_DIR=./data",
				     "GOFLAGS=-mod=mod -toolexec=mytool", "PHPRC=/etc/php", NULL};

		everyday_starts(env, "absolute or uncovered values");
	}
	snprintf(cmd, sizeof(cmd), "%s/sub-e1", work);
	test_rmtree(cmd);
}

/* Round 32 of the attack, b9: a relative PATH entry ("./node_modules/.bin",
 * ".", "bin", an empty one) makes every directory of the writable tree a
 * PATH directory once the host's shell enters it: the session planted
 * sub/node_modules/.bin/git (git-ignored) and the host's `git status`
 * there ran it. The start is refused, naming the entry; an absolute PATH
 * starts as before. */
static void test_path_relative_entries(void)
{
	static const char *const paths[][2] = {
		{"./node_modules/.bin:" TEST_SAFE_PATH, "\"./node_modules/.bin\""},
		{".:" TEST_SAFE_PATH, "\".\""},
		{"bin:" TEST_SAFE_PATH, "\"bin\""},
		{"/usr/bin::" TEST_SAFE_PATH, "empty entry"},
		{TEST_SAFE_PATH ":", "empty entry"},
	};
	const char *script = "mkdir -p sub-b9/node_modules/.bin sub-b9/bin && "
			     "printf '#!/bin/sh\\necho PLANTED-GIT-RAN\\n' > sub-b9/node_modules/.bin/git && "
			     "chmod +x sub-b9/node_modules/.bin/git && cp sub-b9/node_modules/.bin/git sub-b9/bin/git && "
			     "cp sub-b9/bin/git sub-b9/git && echo planted\n";
	char cmd[2 * PATH_MAX], work[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		st = run_fsh("home", paths[i][0], NULL, NULL, "work.yaml", script, &out, &err);
		ROW(st == 125 && !test_has(out, "planted"), "PATH=%s: status %d, the command ran: %s", paths[i][0],
		    st, out ? out : "");
		ROW(test_has(err, paths[i][1]) && test_has(err, "not started"),
		    "PATH=%s: the refusal does not name the entry: %s", paths[i][0], err ? err : "");
		/* The host's shell in the subdirectory, PATH as the user's. */
		snprintf(cmd, sizeof(cmd), "cd '%s/sub-b9' 2>/dev/null && PATH='%s' git --version 2>&1",
			 at(work, "work"), paths[i][0]);
		{
			FILE *f = popen(cmd, "r");
			char line[256] = "";

			if (f != NULL) {
				if (fgets(line, sizeof(line), f) == NULL)
					line[0] = '\0';
				(void)pclose(f);
			}
			ROW(strstr(line, "PLANTED-GIT-RAN") == NULL,
			    "PATH=%s: the host's git in work/sub-b9 ran the session's plant", paths[i][0]);
		}
		if (st != 125)
			show(st, out, err);
		free(out);
		free(err);
		out = err = NULL;
		snprintf(cmd, sizeof(cmd), "%s/sub-b9", work);
		test_rmtree(cmd);
	}
	/* LD_LIBRARY_PATH and BASH_ENV: the same family. */
	{
		const char *env1[] = {"LD_LIBRARY_PATH=/usr/lib::/lib", NULL};
		const char *env2[] = {"BASH_ENV=.bashenv", NULL};

		st = run_fsh("home", NULL, env1, NULL, "work.yaml", "echo planted\n", &out, &err);
		ROW(st == 125 && test_has(err, "LD_LIBRARY_PATH") && !test_has(out, "planted"),
		    "LD_LIBRARY_PATH with an empty entry: status %d", st);
		free(out);
		free(err);
		out = err = NULL;
		st = run_fsh("home", NULL, env2, NULL, "work.yaml", "echo planted\n", &out, &err);
		ROW(st == 125 && test_has(err, "BASH_ENV") && test_has(err, "\".bashenv\"") && !test_has(out, "planted"),
		    "BASH_ENV relative: status %d", st);
		free(out);
		free(err);
		out = err = NULL;
	}
	/* Absolute entries only: started. */
	st = run_fsh("home", TEST_SAFE_PATH, NULL, NULL, "work.yaml", "echo started\n", &out, &err);
	ROW(st == 0 && test_has(out, "started"), "an absolute PATH: status %d", st);
	free(out);
	free(err);
}

/* Round 34 of the attack, P2: LD_PRELOAD (and LD_AUDIT, which the dynamic
 * linker loads too) naming a library in the writable tree: the session
 * rewrote it and the host's next program ran it. An absolute entry
 * (':' or ' ' separated) is read-only, missing or not; a relative one
 * refuses the start, named; a bare name (searched in the library path)
 * does not. The libraries named are missing: nothing is preloaded. */
static void test_ld_preload(void)
{
	const char *script = "printf x > libshim-p2.so 2>/dev/null; echo w1=$?\n"
			     "printf x > libaud-p2.so 2>/dev/null; echo w2=$?\n"
			     "printf x > ok-p2.txt; echo ok=$?\n";
	char e[2][PATH_MAX + 64], w[PATH_MAX], *out = NULL, *err = NULL;
	const char *env[3];
	int st;

	SKIP_IF_NEEDED();
	snprintf(e[0], sizeof(e[0]), "LD_PRELOAD=libnone-p2.so %s/libshim-p2.so", at(w, "work"));
	snprintf(e[1], sizeof(e[1]), "LD_AUDIT=/usr/lib/none-p2.so:%s/libaud-p2.so", at(w, "work"));
	env[0] = e[0];
	env[1] = e[1];
	env[2] = NULL;
	st = run_fsh("home", NULL, env, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "ok=0"), "LD_PRELOAD absolute: status %d", st);
	ROW(test_has(out, "w1=") && !test_has(out, "w1=0"), "the LD_PRELOAD library in the tree was writable: %s",
	    out ? out : "");
	ROW(test_has(out, "w2=") && !test_has(out, "w2=0"), "the LD_AUDIT library in the tree was writable: %s",
	    out ? out : "");
	ROW(!exists("work/libshim-p2.so") && !exists("work/libaud-p2.so"), "a preloaded library reached the host");
	if (st != 0)
		show(st, out, err);
	drop("work/libshim-p2.so");
	drop("work/libaud-p2.so");
	drop("work/ok-p2.txt");
	free(out);
	free(err);
	out = err = NULL;
	{
		static const char *const rel[][2] = {
			{"LD_PRELOAD=./libshim-p2.so", "\"./libshim-p2.so\""},
			{"LD_PRELOAD=/usr/lib/none-p2.so sub/libshim-p2.so", "\"sub/libshim-p2.so\""},
			{"LD_AUDIT=./libaud-p2.so", "\"./libaud-p2.so\""},
		};

		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			const char *env1[] = {rel[i][0], NULL};

			st = run_fsh("home", NULL, env1, NULL, "work.yaml", script, &out, &err);
			ROW(st == 125 && !test_has(out, "ok=") && test_has(err, rel[i][1]) && test_has(err, "not started"),
			    "%s: status %d, not refused by name: %s", rel[i][0], st, err ? err : "");
			ROW(!exists("work/libshim-p2.so") && !exists("work/libaud-p2.so"),
			    "%s: a preloaded library reached the host", rel[i][0]);
			drop("work/libshim-p2.so");
			drop("work/libaud-p2.so");
			drop("work/ok-p2.txt");
			free(out);
			free(err);
			out = err = NULL;
		}
	}
	/* A bare name: looked for in the library path, started. */
	{
		const char *env2[] = {"LD_PRELOAD=libnone-p2.so", NULL};

		st = run_fsh("home", NULL, env2, NULL, "work.yaml", "echo started\n", &out, &err);
		ROW(st == 0 && test_has(out, "started"), "LD_PRELOAD with a bare name: status %d", st);
		free(out);
		free(err);
	}
}

/* Round 34 of the attack, P3: a relative entry in an interpreter's module
 * path (PERL5LIB=lib, PYTHONPATH=lib, RUBYLIB=lib, NODE_OPTIONS
 * --require ./x.js, ...) names a directory of wherever the host's next
 * perl, python, ruby or node starts: the session planted a git-ignored
 * sub-p3/lib/strict.pm and the host's perl in sub-p3 loaded it. The
 * start is refused, naming the variable and the entry; absolute entries
 * start as before. */
static void test_module_path_relative(void)
{
	static const char *const rel[][2] = {
		{"PERL5LIB=lib", "\"lib\""},
		{"PERLLIB=/usr/share/perl5:lib", "\"lib\""},
		{"PYTHONPATH=lib", "\"lib\""},
		{"PYTHONPATH=/usr/lib/python3/dist-packages:", "empty entry"},
		{"RUBYLIB=./lib", "\"./lib\""},
		{"NODE_PATH=node_modules", "\"node_modules\""},
		{"GEM_PATH=vendor/gems", "\"vendor/gems\""},
		{"CLASSPATH=.:/usr/share/java", "\".\""},
		{"GOPATH=go", "\"go\""},
		{"LUA_PATH=./?.lua;;", "\"./?.lua\""},
		{"LUA_CPATH=/usr/lib/lua/?.so;lib/?.so", "\"lib/?.so\""},
		{"LUA_PATH_5_4=?.lua", "\"?.lua\""},
		{"NODE_OPTIONS=--require ./x.js", "\"./x.js\""},
		{"NODE_OPTIONS=--max-old-space-size=100 -r x", "\"x\""},
		{"NODE_OPTIONS=--import=./hook.mjs", "\"./hook.mjs\""},
		{"NODE_OPTIONS=--experimental-loader \"./l.mjs\"", "\"./l.mjs\""},
	};
	const char *script = "mkdir -p sub-p3/lib && printf 'print \"PLANTED-PERL\\\\n\"; 1;\\n' > sub-p3/lib/strict.pm "
			     "&& echo planted\n";
	char cmd[2 * PATH_MAX], work[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		const char *env[] = {rel[i][0], NULL};
		char var[64];

		snprintf(var, sizeof(var), "%.*s", (int)strcspn(rel[i][0], "="), rel[i][0]);
		st = run_fsh("home", NULL, env, NULL, "work.yaml", script, &out, &err);
		ROW(st == 125 && !test_has(out, "planted"), "%s: status %d, the command ran: %s", rel[i][0], st,
		    out ? out : "");
		ROW(test_has(err, var) && test_has(err, rel[i][1]) && test_has(err, "not started"),
		    "%s: the refusal does not name the variable and entry: %s", rel[i][0], err ? err : "");
		if (i == 0) {
			/* The host's perl in the subdirectory, PERL5LIB as the user's. */
			FILE *f;
			char line[256] = "";

			snprintf(cmd, sizeof(cmd),
				 "cd '%s/sub-p3' 2>/dev/null && PERL5LIB=lib perl -e 'use strict; print \"ran\\n\"' 2>&1",
				 at(work, "work"));
			f = popen(cmd, "r");
			if (f != NULL) {
				if (fgets(line, sizeof(line), f) == NULL)
					line[0] = '\0';
				(void)pclose(f);
			}
			ROW(strstr(line, "PLANTED-PERL") == NULL,
			    "PERL5LIB=lib: the host's perl in work/sub-p3 ran the session's plant");
		}
		if (st != 125)
			show(st, out, err);
		free(out);
		free(err);
		out = err = NULL;
		snprintf(cmd, sizeof(cmd), "%s/sub-p3", at(work, "work"));
		test_rmtree(cmd);
	}
	/* Absolute entries, Lua's default ";;", node options that load nothing
	 * or an absolute module: started. */
	{
		const char *env[] = {"PERL5LIB=/usr/share/perl5:", "PYTHONPATH=/usr/lib/python3/dist-packages",
				     "LUA_PATH=/usr/share/lua/5.4/?.lua;;",
				     "NODE_OPTIONS=--max-old-space-size=100 --require /usr/lib/none-p3.js", NULL};

		everyday_starts(env, "absolute module paths");
	}
}

/* The first line the host's shell command cmd prints ("" if none). */
static void host_line(const char *cmd, char *line, size_t size)
{
	FILE *f = popen(cmd, "r");

	line[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(line, (int)size, f) == NULL)
		line[0] = '\0';
	(void)pclose(f);
}

/* Round 35: the option variables of the interpreters and the JVM load
 * code from a path given as an option: NODE_OPTIONS=--require
 * $PROJECT/boot.js, RUBYOPT=-r $PROJECT/boot, JAVA_TOOL_OPTIONS=
 * -javaagent:$PROJECT/agent.jar. The session rewrote the file and the
 * host's next node or ruby ran it. Such a file in the tree is read-only
 * (missing or not); a relative path in any of them (PERL5OPT=-Ilib,
 * RUBYOPT=-r ./x, -javaagent:a.jar, -cp .) refuses the start, named; an
 * absolute searched directory, a bare module name start. */
static void test_option_vars(void)
{
	const char *script = "printf 'console.log(\"PLANTED-NODE\")\\n' > boot-o1.js 2>/dev/null; echo w1=$?\n"
			     "printf 'puts \"PLANTED-RUBY\"\\n' > rboot-o1.rb 2>/dev/null; echo w2=$?\n"
			     "printf x > agent-o1.jar 2>/dev/null; echo w3=$?\n"
			     "printf x > ok-o1.txt; echo ok=$?\n"
			     "printf x > pnp-o1.loader.mjs 2>/dev/null; echo w4=$?\n";
	char e[3][2 * PATH_MAX + 96], w[PATH_MAX], cmd[2 * PATH_MAX + 128], line[256], *out = NULL, *err = NULL;
	const char *env[4];
	int st;

	SKIP_IF_NEEDED();
	/* with yarn PnP's loader as a file: URL (review of round 35: every
	 * `yarn run` sets it so, and the start was refused) */
	snprintf(e[0], sizeof(e[0]),
		 "NODE_OPTIONS=--max-old-space-size=512 --require %s/boot-o1.js --experimental-loader "
		 "file://%s/pnp-o1.loader.mjs",
		 at(w, "work"), w);
	snprintf(e[1], sizeof(e[1]), "RUBYOPT=-w -r %s/rboot-o1", at(w, "work"));
	snprintf(e[2], sizeof(e[2]), "JAVA_TOOL_OPTIONS=-Xmx64m -javaagent:%s/agent-o1.jar=x", at(w, "work"));
	env[0] = e[0];
	env[1] = e[1];
	env[2] = e[2];
	env[3] = NULL;
	st = run_fsh("home", NULL, env, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "ok=0"), "absolute option paths: status %d", st);
	ROW(test_has(out, "w1=") && !test_has(out, "w1=0"), "NODE_OPTIONS' --require file in the tree was writable: %s",
	    out ? out : "");
	ROW(test_has(out, "w2=") && !test_has(out, "w2=0"), "RUBYOPT's -r file (x.rb) in the tree was writable: %s",
	    out ? out : "");
	ROW(test_has(out, "w3=") && !test_has(out, "w3=0"), "JAVA_TOOL_OPTIONS' -javaagent jar in the tree was "
	    "writable: %s", out ? out : "");
	ROW(test_has(out, "w4=") && !test_has(out, "w4=0"), "NODE_OPTIONS' file: URL loader in the tree was "
	    "writable: %s", out ? out : "");
	/* The host's next node and ruby, with the user's variables. */
	snprintf(cmd, sizeof(cmd), "cd / && NODE_OPTIONS='--require %s/boot-o1.js' node -e 0 2>/dev/null",
		 at(w, "work"));
	host_line(cmd, line, sizeof(line));
	ROW(strstr(line, "PLANTED-NODE") == NULL, "the host's next node ran the session's --require file");
	snprintf(cmd, sizeof(cmd), "cd / && RUBYOPT='-r %s/rboot-o1' ruby -e 0 2>/dev/null", at(w, "work"));
	host_line(cmd, line, sizeof(line));
	ROW(strstr(line, "PLANTED-RUBY") == NULL, "the host's next ruby ran the session's -r file");
	if (st != 0)
		show(st, out, err);
	drop("work/boot-o1.js");
	drop("work/rboot-o1.rb");
	drop("work/agent-o1.jar");
	drop("work/ok-o1.txt");
	drop("work/pnp-o1.loader.mjs");
	free(out);
	free(err);
	out = err = NULL;
	{
		static const char *const rel[][2] = {
			{"PERL5OPT=-Ilib", "\"lib\""},
			{"PERL5OPT=-w -Mlib=/usr/share/perl5,sublib", "\"sublib\""},
			{"RUBYOPT=-r ./boot-o1", "\"./boot-o1\""},
			{"RUBYOPT=-w -I lib", "\"lib\""},
			{"NODE_OPTIONS=--require=./boot-o1.js", "\"./boot-o1.js\""},
			{"NODE_OPTIONS=--openssl-config=ssl-o1.cnf", "\"ssl-o1.cnf\""},
			{"JAVA_TOOL_OPTIONS=-javaagent:agent-o1.jar", "\"agent-o1.jar\""},
			{"_JAVA_OPTIONS=-agentpath:lib/a-o1.so=x", "\"lib/a-o1.so\""},
			{"JDK_JAVA_OPTIONS=-cp .:/usr/share/java", "\".\""},
			{"JDK_JAVA_OPTIONS=@opts-o1.txt", "\"opts-o1.txt\""},
			{"JAVA_TOOL_OPTIONS=-Djava.class.path=classes", "\"classes\""},
		};
		const char *plant = "mkdir -p sub-o1/lib && printf 'print \"PLANTED-PERL\\\\n\"; 1;\\n' > "
				    "sub-o1/lib/strict.pm && echo planted\n";

		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			const char *env1[] = {rel[i][0], NULL};
			char var[64];

			snprintf(var, sizeof(var), "%.*s", (int)strcspn(rel[i][0], "="), rel[i][0]);
			st = run_fsh("home", NULL, env1, NULL, "work.yaml", plant, &out, &err);
			ROW(st == 125 && !test_has(out, "planted"), "%s: status %d, the command ran: %s", rel[i][0], st,
			    out ? out : "");
			ROW(test_has(err, var) && test_has(err, rel[i][1]) && test_has(err, "not started"),
			    "%s: the refusal does not name the variable and entry: %s", rel[i][0], err ? err : "");
			if (i == 0) {
				snprintf(cmd, sizeof(cmd),
					 "cd '%s/sub-o1' 2>/dev/null && PERL5OPT=-Ilib perl -e 'use strict; print "
					 "\"ran\\n\"' 2>&1",
					 at(w, "work"));
				host_line(cmd, line, sizeof(line));
				ROW(strstr(line, "PLANTED-PERL") == NULL,
				    "PERL5OPT=-Ilib: the host's perl in work/sub-o1 ran the session's plant");
			}
			if (st != 125)
				show(st, out, err);
			free(out);
			free(err);
			out = err = NULL;
			snprintf(cmd, sizeof(cmd), "%s/sub-o1", at(w, "work"));
			test_rmtree(cmd);
		}
	}
	/* Absolute searched directories, bare module names, options that
	 * name no path: started. */
	{
		const char *env2[] = {"PERL5OPT=-Mstrict -I/usr/share/perl5", "RUBYOPT=-W:no-deprecated -rjson",
				      "JDK_JAVA_OPTIONS=-Xmx64m -cp /usr/share/java", NULL};

		st = run_fsh("home", NULL, env2, NULL, "work.yaml", "echo started\n", &out, &err);
		ROW(st == 0 && test_has(out, "started"), "absolute option paths, bare names: status %d, %s", st,
		    err ? err : "");
		free(out);
		free(err);
	}
}

/* Round 35: the places a runtime loads code from whatever program
 * starts it: PYTHONUSERBASE (a .pth file in its site-packages runs at
 * every python start), GIT_EXEC_PATH (git runs git-remote-https from
 * it), OPENSSL_CONF (loads engines and providers), GCONV_PATH (iconv's
 * modules). Named absolutely in the tree they are read-only, missing
 * or not: the session had planted a .pth and a git-remote-https, and
 * the host's next python and git ran them; a relative one (and an
 * empty GCONV_PATH or PYTHONHOME entry) refuses the start, named. */
static void test_runtime_paths(void)
{
	char site[PATH_MAX], w[PATH_MAX], cmd[3 * PATH_MAX], line[256], *out = NULL, *err = NULL;
	char e[4][PATH_MAX + 64], script[2 * PATH_MAX + 512];
	const char *env[5];
	int st;

	SKIP_IF_NEEDED();
	snprintf(e[0], sizeof(e[0]), "PYTHONUSERBASE=%s/pyub-o2", at(w, "work"));
	snprintf(e[1], sizeof(e[1]), "GIT_EXEC_PATH=%s/gx-o2", at(w, "work"));
	snprintf(e[2], sizeof(e[2]), "OPENSSL_CONF=%s/ssl-o2.cnf", at(w, "work"));
	snprintf(e[3], sizeof(e[3]), "GCONV_PATH=/usr/lib/none-o2:%s/gconv-o2", at(w, "work"));
	for (int i = 0; i < 4; i++)
		env[i] = e[i];
	env[4] = NULL;
	/* Where the host's python reads the user base's .pth files. */
	snprintf(cmd, sizeof(cmd), "cd / && %s python3 -c 'import site; print(site.getusersitepackages())' 2>/dev/null",
		 e[0]);
	host_line(cmd, site, sizeof(site));
	site[strcspn(site, "\n")] = '\0';
	ROW(site[0] == '/', "no user site-packages from the host's python3");
	snprintf(script, sizeof(script),
		 "mkdir -p '%s' 2>/dev/null && printf 'import sys; print(\"PLANTED-PY\")\\n' > '%s/o2.pth' 2>/dev/null; "
		 "echo w1=$?\n"
		 "mkdir -p gx-o2 2>/dev/null && printf '#!/bin/sh\\necho PLANTED-GIT >&2\\n' > gx-o2/git-remote-https "
		 "2>/dev/null && chmod +x gx-o2/git-remote-https; echo w2=$?\n"
		 "printf 'x\\n' > ssl-o2.cnf 2>/dev/null; echo w3=$?\n"
		 "mkdir -p gconv-o2 2>/dev/null && printf 'x\\n' > gconv-o2/gconv-modules 2>/dev/null; echo w4=$?\n"
		 "printf x > ok-o2.txt; echo ok=$?\n",
		 site, site);
	st = run_fsh("home", NULL, env, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "ok=0"), "absolute runtime paths: status %d", st);
	ROW(test_has(out, "w1=") && !test_has(out, "w1=0"), "PYTHONUSERBASE's site-packages in the tree was writable: %s",
	    out ? out : "");
	ROW(test_has(out, "w2=") && !test_has(out, "w2=0"), "GIT_EXEC_PATH in the tree was writable: %s", out ? out : "");
	ROW(test_has(out, "w3=") && !test_has(out, "w3=0"), "OPENSSL_CONF in the tree was writable: %s", out ? out : "");
	ROW(test_has(out, "w4=") && !test_has(out, "w4=0"), "GCONV_PATH's directory in the tree was writable: %s",
	    out ? out : "");
	/* The host's next python and git, with the user's variables. */
	snprintf(cmd, sizeof(cmd), "cd / && %s python3 -c 0 2>&1", e[0]);
	host_line(cmd, line, sizeof(line));
	ROW(strstr(line, "PLANTED-PY") == NULL, "the host's next python ran the session's .pth");
	snprintf(cmd, sizeof(cmd), "cd / && %s git ls-remote https://o2.invalid/r 2>&1 | grep PLANTED", e[1]);
	host_line(cmd, line, sizeof(line));
	ROW(strstr(line, "PLANTED-GIT") == NULL, "the host's next git ran the session's git-remote-https");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;
	{
		static const char *const names[] = {"pyub-o2", "gx-o2", "gconv-o2"};

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(cmd, sizeof(cmd), "%s/%s", at(w, "work"), names[i]);
			test_rmtree(cmd);
		}
		drop("work/ssl-o2.cnf");
		drop("work/ok-o2.txt");
	}
	{
		static const char *const rel[][2] = {
			{"PYTHONUSERBASE=.pyub", "\".pyub\""},
			{"PYTHONHOME=/usr:", "empty entry"},
			{"GIT_EXEC_PATH=gx", "\"gx\""},
			{"OPENSSL_CONF=./ssl.cnf", "\"./ssl.cnf\""},
			{"GCONV_PATH=gconv", "\"gconv\""},
			{"GEM_HOME=vendor/gems", "\"vendor/gems\""},
		};

		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			const char *env1[] = {rel[i][0], NULL};
			char var[64];

			snprintf(var, sizeof(var), "%.*s", (int)strcspn(rel[i][0], "="), rel[i][0]);
			st = run_fsh("home", NULL, env1, NULL, "work.yaml", "echo planted\n", &out, &err);
			ROW(st == 125 && !test_has(out, "planted") && test_has(err, var) && test_has(err, rel[i][1]) &&
				    test_has(err, "not started"),
			    "%s: status %d, not refused by name: %s", rel[i][0], st, err ? err : "");
			free(out);
			free(err);
			out = err = NULL;
		}
	}
}

/* Round 35: the dynamic linker's tokens in LD_LIBRARY_PATH, LD_PRELOAD
 * and LD_AUDIT. $LIB (lib/x86_64-linux-gnu, lib64) and $PLATFORM name
 * directories the protection of the literal text missed: with
 * LD_LIBRARY_PATH='$PROJECT/o3/$LIB' (absolute, so started; o3 there),
 * the session planted o3/lib/x86_64-linux-gnu/libo3.so and the host's
 * next run of the project's real-o3/prog loaded it instead of its own. $ORIGIN (the
 * directory of each program loaded) was refused as a relative entry,
 * with advice that does not apply. An entry with a token refuses the
 * start, named, saying what to write instead. */
static void test_ld_tokens(void)
{
	static const char *const rows[][2] = {
		{"LD_LIBRARY_PATH=@W@/o3/$LIB", "/o3/$LIB\""},
		{"LD_LIBRARY_PATH=/usr/lib:@W@/o3/${LIB}", "/o3/${LIB}\""},
		{"LD_PRELOAD=@W@/o3/$PLATFORM/libo3.so", "/o3/$PLATFORM/libo3.so\""},
		{"LD_AUDIT=@W@/o3/$LIB/libo3.so", "/o3/$LIB/libo3.so\""},
		{"LD_PRELOAD=$ORIGIN/../o3/libo3.so", "\"$ORIGIN/../o3/libo3.so\""},
		{"LD_LIBRARY_PATH=/usr/lib:${ORIGIN}/../o3", "\"${ORIGIN}/../o3\""},
	};
	const char *script = "for d in o3/lib/x86_64-linux-gnu o3/lib64 o3/lib o3/x86_64; do mkdir -p $d && "
			     "cp prebuilt-o3.so $d/libo3.so || exit 1; done; echo planted\n";
	char w[PATH_MAX], cmd[3 * PATH_MAX], line[256], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	/* The project's program and its library (found through RUNPATH, after
	 * LD_LIBRARY_PATH), and a library of the same name with a constructor. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir -p real-o3 && cd real-o3 && printf 'void o3(void) {}\\n' > real.c && "
		 "cc -shared -fPIC -o libo3.so real.c && printf 'void o3(void);\\nint main(void) { o3(); return 0; }\\n' "
		 "> p.c && cc -o prog p.c -L. -lo3 -Wl,-rpath,\"$PWD\" && printf '#include <unistd.h>\\nvoid o3(void) {}\\n"
		 "__attribute__((constructor)) static void f(void) { (void)!write(2, \"PLANTED-LD\\\\n\", 11); }\\n' "
		 "> shim.c && cc -shared -fPIC -o ../prebuilt-o3.so shim.c && chmod -R a+rX . && echo built",
		 at(w, "work"));
	host_line(cmd, line, sizeof(line));
	ROW(strstr(line, "built") != NULL, "cannot build the program and libraries on the host: %s", line);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char var[64], val[PATH_MAX + 128];
		const char *env[2] = {val, NULL};
		const char *tpl = rows[i][0], *sub = strstr(tpl, "@W@");

		if (sub != NULL)
			snprintf(val, sizeof(val), "%.*s%s%s", (int)(sub - tpl), tpl, at(w, "work"), sub + 3);
		else
			snprintf(val, sizeof(val), "%s", tpl);
		snprintf(var, sizeof(var), "%.*s", (int)strcspn(tpl, "="), tpl);
		/* The project's o3 is there before (a missing one would be
		 * protected whole, as the parent of a missing protected path). */
		ROW(mkdirs("work/o3") == 0, "mkdir work/o3");
		st = run_fsh("home", NULL, env, NULL, "work.yaml", script, &out, &err);
		ROW(st == 125 && !test_has(out, "planted") && test_has(err, var) && test_has(err, rows[i][1]) &&
			    test_has(err, "not started"),
		    "%s: status %d, not refused by name: %s", val, st, err ? err : "");
		if (i == 0) {
			/* The host's next run of the project's program, as the user's. */
			snprintf(cmd, sizeof(cmd), "cd / && LD_LIBRARY_PATH='%s/o3/$LIB' '%s/real-o3/prog' 2>&1",
				 at(w, "work"), w);
			host_line(cmd, line, sizeof(line));
			ROW(strstr(line, "PLANTED-LD") == NULL,
			    "LD_LIBRARY_PATH=$PROJECT/o3/$LIB: the host's real-o3/prog loaded the session's library");
		}
		if (st != 125)
			show(st, out, err);
		free(out);
		free(err);
		out = err = NULL;
		snprintf(cmd, sizeof(cmd), "%s/o3", at(w, "work"));
		test_rmtree(cmd);
	}
	snprintf(cmd, sizeof(cmd), "%s/real-o3", at(w, "work"));
	test_rmtree(cmd);
	drop("work/prebuilt-o3.so");
}

/* Round 35: the program a command variable names by a path
 * (GIT_SSH_COMMAND, GIT_SSH, GIT_ASKPASS, EDITOR, PAGER, ...). With
 * GIT_SSH_COMMAND=$PROJECT/ssh-o4 the session rewrote the wrapper and
 * the host's next git over ssh ran it; such a file in the tree is
 * read-only, missing or not; a relative one (EDITOR=./ed-o4.sh) refuses
 * the start, named; a bare name (PATH's) starts. */
static void test_command_vars(void)
{
	const char *script = "printf '#!/bin/sh\\necho PLANTED-SSH >&2\\n' > ssh-o4 2>/dev/null && chmod +x ssh-o4; "
			     "echo w1=$?\n"
			     "printf x > askpass-o4 2>/dev/null; echo w2=$?\n"
			     "printf x > ok-o4.txt; echo ok=$?\n"
			     "printf x > diff-o4 2>/dev/null; echo w3=$?\n"
			     "printf x > lp-o4.sh 2>/dev/null; echo w4=$?\n"
			     "printf x > init-o5.lua 2>/dev/null; echo w5=$?\n";
	char e[5][PATH_MAX + 64], w[PATH_MAX], cmd[2 * PATH_MAX + 128], line[256], *out = NULL, *err = NULL;
	const char *env[6];
	int st;

	SKIP_IF_NEEDED();
	snprintf(e[0], sizeof(e[0]), "GIT_SSH_COMMAND=%s/ssh-o4 -o BatchMode=yes", at(w, "work"));
	snprintf(e[1], sizeof(e[1]), "GIT_ASKPASS=%s/askpass-o4", at(w, "work"));
	/* The same family, missed by round 35 (its review): git diff runs
	 * GIT_EXTERNAL_DIFF, less runs LESSOPEN's program, lua LUA_INIT's
	 * "@file" before every script. */
	snprintf(e[2], sizeof(e[2]), "GIT_EXTERNAL_DIFF=%s/diff-o4", at(w, "work"));
	snprintf(e[3], sizeof(e[3]), "LESSOPEN=|%s/lp-o4.sh %%s", at(w, "work"));
	snprintf(e[4], sizeof(e[4]), "LUA_INIT=@%s/init-o5.lua", at(w, "work"));
	env[0] = e[0];
	env[1] = e[1];
	env[2] = e[2];
	env[3] = e[3];
	env[4] = e[4];
	env[5] = NULL;
	st = run_fsh("home", NULL, env, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "ok=0"), "absolute command paths: status %d", st);
	ROW(test_has(out, "w1=") && !test_has(out, "w1=0"), "GIT_SSH_COMMAND's program in the tree was writable: %s",
	    out ? out : "");
	ROW(test_has(out, "w2=") && !test_has(out, "w2=0"), "GIT_ASKPASS in the tree was writable: %s", out ? out : "");
	ROW(test_has(out, "w3=") && !test_has(out, "w3=0"), "GIT_EXTERNAL_DIFF in the tree was writable: %s",
	    out ? out : "");
	ROW(test_has(out, "w4=") && !test_has(out, "w4=0"), "LESSOPEN's program in the tree was writable: %s",
	    out ? out : "");
	ROW(test_has(out, "w5=") && !test_has(out, "w5=0"), "LUA_INIT's file in the tree was writable: %s",
	    out ? out : "");
	snprintf(cmd, sizeof(cmd), "cd / && GIT_SSH_COMMAND='%s/ssh-o4' git ls-remote ssh://o4.invalid/r 2>&1 | grep PLANTED",
		 at(w, "work"));
	host_line(cmd, line, sizeof(line));
	ROW(strstr(line, "PLANTED-SSH") == NULL, "the host's next git over ssh ran the session's GIT_SSH_COMMAND");
	if (st != 0)
		show(st, out, err);
	drop("work/ssh-o4");
	drop("work/askpass-o4");
	drop("work/ok-o4.txt");
	drop("work/diff-o4");
	drop("work/lp-o4.sh");
	drop("work/init-o5.lua");
	free(out);
	free(err);
	out = err = NULL;
	{
		static const char *const rel[][2] = {
			{"EDITOR=./ed-o4.sh", "\"./ed-o4.sh\""},
			{"GIT_SSH=bin/ssh-o4", "\"bin/ssh-o4\""},
			{"PAGER=tools/pager-o4 -R", "\"tools/pager-o4\""},
			{"LESSOPEN=||./lp-o4.sh %s", "\"./lp-o4.sh\""},
			{"SUDO_EDITOR=bin/ed-o4", "\"bin/ed-o4\""},
			{"LUA_INIT=@./init-o5.lua", "\"./init-o5.lua\""},
		};

		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			const char *env1[] = {rel[i][0], NULL};
			char var[64];

			snprintf(var, sizeof(var), "%.*s", (int)strcspn(rel[i][0], "="), rel[i][0]);
			st = run_fsh("home", NULL, env1, NULL, "work.yaml", "echo planted\n", &out, &err);
			ROW(st == 125 && !test_has(out, "planted") && test_has(err, var) && test_has(err, rel[i][1]) &&
				    test_has(err, "not started"),
			    "%s: status %d, not refused by name: %s", rel[i][0], st, err ? err : "");
			free(out);
			free(err);
			out = err = NULL;
		}
	}
	{
		/* and, from the review of round 35, what a normal shell or CI
		 * job holds: GitLab's CI_CONFIG_PATH, R's R_LIBS_USER="~/...",
		 * a quoted INPUTRC="~/..." (readline expands it), Debian's
		 * LESSOPEN */
		const char *env2[] = {"PAGER=less -R",
				      "EDITOR=vi",
				      "GIT_SSH_COMMAND=ssh -o BatchMode=yes",
				      "CI_CONFIG_PATH=.gitlab-ci.yml",
				      "R_LIBS_USER=~/R/x86_64-pc-linux-gnu-library/4.3",
				      "INPUTRC=~/.inputrc",
				      "HGRCPATH=~/.hgrc",
				      "LESSOPEN=| /usr/bin/lesspipe %s",
				      NULL};

		st = run_fsh("home", NULL, env2, NULL, "work.yaml", "echo started\n", &out, &err);
		ROW(st == 0 && test_has(out, "started"), "bare command names: status %d, %s", st, err ? err : "");
		free(out);
		free(err);
	}
}

/*
 * Round 39 of the attack: the search lists and runtime directories whose
 * files shells and editors run at their start were on no rule when
 * absolute. With VIMRUNTIME naming a vim checkout's runtime in the
 * project, XDG_DATA_DIRS a pixi or conda environment's share/ there
 * (glib's activation puts it first), XDG_CONFIG_DIRS, BASH_COMPLETION_
 * USER_DIR, EMACSLOADPATH and VIM the same, the session wrote
 * plugin/x.vim, fish/vendor_conf.d/x.fish, autostart/x.desktop,
 * completions/git, site-start.el, vimrc, nothing was moved or named, and
 * the host's next vim, anywhere, ran the plugin. Each entry is read-only
 * now, missing or not (PATH's rule); a relative VIMRUNTIME refuses the
 * start; the rest of the tree stays writable.
 */
static void test_startup_dirs_r39(void)
{
	static const char *const vars[][2] = {
		{"VIMRUNTIME=@W@/vim-v/runtime", "vim-v/runtime/plugin/x.vim"},
		{"XDG_DATA_DIRS=@W@/.pixi-v/share:/usr/local/share:/usr/share", ".pixi-v/share/fish/vendor_conf.d/x.fish"},
		{"XDG_CONFIG_DIRS=@W@/etc-v/xdg:/etc/xdg", "etc-v/xdg/autostart/x.desktop"},
		{"BASH_COMPLETION_USER_DIR=@W@/bc-v", "bc-v/completions/git"},
		{"EMACSLOADPATH=@W@/el-v:", "el-v/site-start.el"},
		{"VIM=@W@/vimsys-v", "vimsys-v/vimrc"},
	};
	enum { NV = sizeof(vars) / sizeof(vars[0]) };
	char e[NV][2 * PATH_MAX], w[PATH_MAX], script[4096], cmd[4 * PATH_MAX], line[256], *out = NULL, *err = NULL;
	const char *env[NV + 1];
	size_t n;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	script[0] = '\0';
	/* The runtime exists (a checkout), the others are made by the
	 * session. */
	ROW(mkdirs("work/vim-v/runtime") == 0 && mkdirs("work/.pixi-v/share") == 0, "mkdir work/vim-v/runtime");
	for (size_t i = 0; i < NV; i++) {
		const char *tpl = vars[i][0], *sub = strstr(tpl, "@W@");

		snprintf(e[i], sizeof(e[i]), "%.*s%s%s", (int)(sub - tpl), tpl, w, sub + 3);
		env[i] = e[i];
		n = strlen(script);
		snprintf(script + n, sizeof(script) - n,
			 "f='%s'; mkdir -p \"${f%%/*}\" 2>/dev/null; "
			 "echo 'call writefile([\"PLANTED-V\"], \"%s/ran-v\")' > \"$f\" 2>/dev/null; echo w%zu=$?\n",
			 vars[i][1], w, i);
	}
	env[NV] = NULL;
	n = strlen(script);
	snprintf(script + n, sizeof(script) - n, "printf x > ok-v.txt; echo ok=$?\n");
	st = run_fsh("home", NULL, env, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "ok=0"), "start-up directories: status %d, %s", st, err ? err : "");
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < NV; i++) {
		char want[32];

		snprintf(want, sizeof(want), "w%zu=0", i);
		ROW(!test_has(out, want), "%s: %s in the tree was writable: %s", e[i], vars[i][1], out ? out : "");
	}
	/* The host's vim, elsewhere, with the user's VIMRUNTIME. */
	if (access("/usr/bin/vim", X_OK) == 0) {
		snprintf(cmd, sizeof(cmd),
			 "cd / && VIMRUNTIME='%s/vim-v/runtime' HOME='%s/home' timeout 10 vim -N -i NONE -c q -T dumb "
			 "</dev/null >/dev/null 2>&1; cat '%s/ran-v' 2>/dev/null",
			 w, root, w);
		host_line(cmd, line, sizeof(line));
		ROW(strstr(line, "PLANTED-V") == NULL, "the host's vim ran the session's plugin from VIMRUNTIME");
	}
	free(out);
	free(err);
	out = err = NULL;
	/* Relative: refused, named. */
	{
		const char *rel[] = {"VIMRUNTIME=vim-v/runtime", NULL};

		st = run_fsh("home", NULL, rel, NULL, "work.yaml", "echo started\n", &out, &err);
		ROW(st == 125 && !test_has(out, "started") && test_has(err, "VIMRUNTIME holds"),
		    "a relative VIMRUNTIME: status %d, not refused by name: %s", st, err ? err : "");
		free(out);
		free(err);
	}
	drop("work/ok-v.txt");
	drop("work/ran-v");
	for (size_t i = 0; i < NV; i++) {
		char top[PATH_MAX];

		if (snprintf(top, sizeof(top), "%s/%.*s", w, (int)strcspn(vars[i][1], "/"), vars[i][1]) <
		    (int)sizeof(top))
			test_rmtree(top);
	}
}

/*
 * A session (its home the tree's home, its policy the tree's policy)
 * started with each of vars ({"NAME=value", a file}; @W@ in the value
 * stands for the writable tree) runs plant (a printf format, %1$s the
 * file, relative to the tree) for each file, then writes into each of
 * oks (NULL-terminated, relative to the tree): it starts (what: the
 * rows' name of the case), every ok is written, and no file of vars was
 * writable.
 */
static void plant_rows_in(const char *home, const char *policy, const char *const (*vars)[2], size_t nv,
			  const char *plant, const char *const *oks, const char *what)
{
	char w[PATH_MAX], script[16384], *out = NULL, *err = NULL;
	char(*e)[2 * PATH_MAX] = calloc(nv, sizeof(*e));
	const char **env = calloc(nv + 1, sizeof(*env));
	bool written = true;
	size_t n;
	int st;

	CU_ASSERT_FATAL(e != NULL && env != NULL);
	at(w, "work");
	script[0] = '\0';
	for (size_t i = 0; i < nv; i++) {
		const char *tpl = vars[i][0], *sub = strstr(tpl, "@W@");

		if (sub != NULL)
			snprintf(e[i], sizeof(e[i]), "%.*s%s%s", (int)(sub - tpl), tpl, w, sub + 3);
		else
			snprintf(e[i], sizeof(e[i]), "%s", tpl);
		env[i] = e[i];
		n = strlen(script);
		snprintf(script + n, sizeof(script) - n, plant, vars[i][1]);
		n = strlen(script);
		snprintf(script + n, sizeof(script) - n, "; echo w%zu=$?\n", i);
	}
	env[nv] = NULL;
	for (size_t k = 0; oks[k] != NULL; k++) {
		n = strlen(script);
		if (snprintf(script + n, sizeof(script) - n, "printf x > %s; echo ok%zu=$?\n", oks[k], k) >=
		    (int)(sizeof(script) - n))
			CU_FAIL("a script too long for the test");
	}
	st = run_fsh(home, NULL, env, NULL, policy, script, &out, &err);
	for (size_t k = 0; oks[k] != NULL; k++) {
		char want[32];

		snprintf(want, sizeof(want), "ok%zu=0\n", k);
		written = written && test_has(out, want);
	}
	ROW(st == 0 && written, "%s: status %d, %s %s", what, st, out ? out : "", err ? err : "");
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < nv; i++) {
		char want[32];

		snprintf(want, sizeof(want), "w%zu=0\n", i);
		ROW(!test_has(out, want), "%s: %s in the tree was writable: %s", e[i], vars[i][1], out ? out : "");
	}
	free(out);
	free(err);
	free(env);
	free(e);
}

/* plant_rows_in() with the tree's home and work.yaml, and one file ok. */
static void plant_rows(const char *const (*vars)[2], size_t nv, const char *plant, const char *ok, const char *what)
{
	const char *const oks[] = {ok, NULL};

	plant_rows_in("home", "work.yaml", vars, nv, plant, oks, what);
}

/*
 * Round 39 of the attack: a start-up file moved out of the home by a
 * variable had its row at the home only (~/.hgrc, ~/.inputrc, ~/.psqlrc,
 * ...), and only a relative value refused the start: with
 * HGRCPATH=$PWD/.hgrc.local the session wrote a hook into it and the
 * host's next hg, in any repository, ran it; RIPGREP_CONFIG_PATH's
 * --pre, STARSHIP_CONFIG's custom command, PSQLRC's \! and the others
 * the same. Each such file is read-only now, missing or not; the host's
 * hg runs no hook; a relative STARSHIP_CONFIG refuses the start.
 */
static void test_moved_startup_files_r39(void)
{
	static const char *const vars[][2] = {
		{"HGRCPATH=@W@/.hgrc-v", ".hgrc-v"},
		{"INPUTRC=@W@/inputrc-v", "inputrc-v"},
		{"PSQLRC=@W@/psqlrc-v", "psqlrc-v"},
		{"SCREENRC=@W@/screenrc-v", "screenrc-v"},
		{"STARSHIP_CONFIG=@W@/starship-v.toml", "starship-v.toml"},
		{"RIPGREP_CONFIG_PATH=@W@/ripgreprc-v", "ripgreprc-v"},
		{"BAT_CONFIG_PATH=@W@/bat-v.conf", "bat-v.conf"},
		{"GOENV=@W@/goenv-v", "goenv-v"},
		{"NPM_CONFIG_GLOBALCONFIG=@W@/npmrc-v", "npmrc-v"},
		{"WEZTERM_CONFIG_FILE=@W@/wezterm-v.lua", "wezterm-v.lua"},
		{"ZELLIJ_CONFIG_FILE=@W@/zellij-v.kdl", "zellij-v.kdl"},
		{"LESSKEYIN=@W@/lesskey-v", "lesskey-v"},
	};
	enum { NV = sizeof(vars) / sizeof(vars[0]) };
	char w[PATH_MAX], cmd[4 * PATH_MAX], line[256], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	plant_rows(vars, NV, "printf '[hooks]\\npre-status = echo PLANTED-V >&2\\n' > %1$s 2>/dev/null", "ok-v.txt",
		   "moved start-up files");
	/* The host's hg in another repository, with the user's HGRCPATH. */
	if (access("/usr/bin/hg", X_OK) == 0) {
		snprintf(cmd, sizeof(cmd),
			 "d=$(mktemp -d /tmp/pv-fsh-hg.XXXXXX) && cd \"$d\" && HGRCPATH='%s/.hgrc-v' HOME='%s/home' "
			 "hg init -q . && HGRCPATH='%s/.hgrc-v' HOME='%s/home' hg status 2>&1 | grep PLANTED-V; "
			 "rm -rf \"$d\"",
			 w, root, w, root);
		host_line(cmd, line, sizeof(line));
		ROW(strstr(line, "PLANTED-V") == NULL, "the host's hg ran the session's hook from HGRCPATH");
	}
	{
		const char *rel[] = {"STARSHIP_CONFIG=cfg/starship-v.toml", NULL};

		st = run_fsh("home", NULL, rel, NULL, "work.yaml", "echo started\n", &out, &err);
		ROW(st == 125 && !test_has(out, "started") && test_has(err, "STARSHIP_CONFIG holds"),
		    "a relative STARSHIP_CONFIG: status %d, not refused by name: %s", st, err ? err : "");
		free(out);
		free(err);
	}
	drop("work/ok-v.txt");
	for (size_t i = 0; i < NV; i++) {
		char rel[PATH_MAX];

		snprintf(rel, sizeof(rel), "work/%s", vars[i][1]);
		drop(rel);
	}
}

static void refused_rows(const char *const (*rel)[4], size_t n, const char *plant, const char *marker,
			 bool host_plants, const char *cleanup);

/*
 * Each everyday setting of ok (NULL-ended), one at a time, starts a
 * session in work.yaml that says "started": what CI images and
 * developers set is not refused.
 */
static void everyday_rows(const char *const *ok)
{
	char *out = NULL, *err = NULL;
	int st;

	for (size_t i = 0; ok[i] != NULL; i++) {
		const char *one[] = {ok[i], NULL};

		st = run_fsh("home", NULL, one, NULL, "work.yaml", "echo started\n", &out, &err);
		ROW(st == 0 && test_has(out, "started"), "everyday %s: status %d, %s", ok[i], st, err ? err : "");
		free(out);
		free(err);
		out = err = NULL;
	}
}

/*
 * Round 40: the homes of code a variable names in the writable tree
 * (CARGO_HOME's config.toml, GRADLE_USER_HOME's init.d/, GOMODCACHE, the
 * user's cache, zsh's FPATH, pwsh's modules, R's and Julia's libraries,
 * npm's user config in any case, yarn's yarnPath, pnpm's pnpmfile),
 * GOFLAGS' -toolexec, the launchers' JVM options known by their name's
 * end (CATALINA_OPTS, KAFKA_OPTS, ES_JAVA_OPTS) and the JVM tools' homes
 * as properties (-Dsbt.global.base=): each file the host's next build or
 * shell runs from there was writable. Read-only now, missing or not; a
 * relative one refuses the start; what CI images set starts.
 */
static void test_code_homes_r40(void)
{
	static const char *const vars[][2] = {
		{"CARGO_HOME=@W@/cargo-w", "cargo-w/config.toml"},
		{"RUSTUP_HOME=@W@/rustup-w", "rustup-w/settings.toml"},
		{"GRADLE_USER_HOME=@W@/gradle-w", "gradle-w/init.d/x.gradle"},
		{"MAVEN_USER_HOME=@W@/m2-w", "m2-w/wrapper.jar"},
		{"GOPATH=/nonexistent-w:@W@/gopath-w", "gopath-w/bin/go"},
		{"GOMODCACHE=@W@/gomod-w", "gomod-w/x.go"},
		/* GOCACHE: the session's own since round 44 (run_tools) */
		{"XDG_CACHE_HOME=@W@/cache-w", "cache-w/x"},
		{"FPATH=/usr/share/zsh/functions:@W@/fpath-w", "fpath-w/compinit"},
		{"PSModulePath=@W@/psm-w", "psm-w/x.psm1"},
		{"R_LIBS_USER=@W@/rlib-w", "rlib-w/x"},
		{"JULIA_LOAD_PATH=@:@W@/jl-w:@stdlib", "jl-w/x.jl"},
		{"npm_Config_UserConfig=@W@/npmrc-w", "npmrc-w"},
		{"YARN_YARN_PATH=@W@/yarn-w.cjs", "yarn-w.cjs"},
		{"pnpm_config_pnpmfile=@W@/pnpmfile-w.cjs", "pnpmfile-w.cjs"},
		{"GOFLAGS=-toolexec=@W@/te-w", "te-w"},
		{"CATALINA_OPTS=-Xmx1g -javaagent:@W@/ag-w.jar", "ag-w.jar"},
		{"ES_JAVA_OPTS=-XX:OnError=@W@/oe-w.sh", "oe-w.sh"},
		{"SBT_OPTS=-Dsbt.global.base=@W@/sbt-w", "sbt-w/plugins/x.sbt"},
		{"GRADLE_OPTS=-Dorg.gradle.jvmargs=-javaagent:@W@/gd-w.jar", "gd-w.jar"},
	};
	enum { NV = sizeof(vars) / sizeof(vars[0]) };
	static const char *const rel[][4] = {
		{"YARN_YARN_PATH=./y-w.cjs", "YARN_YARN_PATH holds", "\"./y-w.cjs\"", NULL},
		{"Yarn_Global_Folder=gl-w", "Yarn_Global_Folder holds", "\"gl-w\"", NULL},
		{"YARN_RC_FILENAME=../w/.yarnrc-w.yml", "YARN_RC_FILENAME holds", "\"../w/.yarnrc-w.yml\"", NULL},
		{"KAFKA_OPTS=-javaagent:./ag-w.jar", "KAFKA_OPTS holds", "\"./ag-w.jar\"", NULL},
		{"GOFLAGS=-overlay=ov-w.json", "GOFLAGS holds", "\"ov-w.json\"", NULL},
		{"FPATH=fn-w", "FPATH holds", "\"fn-w\"", NULL},
		{"CARGO_ALIAS_X=-Zunstable-options --config include=\"./x-w.toml\"", "CARGO_ALIAS_X holds",
		 "\"./x-w.toml\"", NULL},
		{"CARGO_ALIAS_Y=build --manifest-path w-w/Cargo.toml", "CARGO_ALIAS_Y holds", "\"w-w/Cargo.toml\"",
		 NULL},
	};
	char w[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	plant_rows(vars, NV, "{ mkdir -p \"$(dirname %1$s)\" && echo 'echo PLANTED-W' > %1$s; } 2>/dev/null",
		   "ok-w.txt", "homes of code");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), "echo planted\n", "PLANTED-W", false, "ok-w.txt");
	/* What CI images and developers set: started. */
	{
		const char *ok[] = {"CARGO_HOME=/usr/local/cargo", "RUSTUP_HOME=/usr/local/rustup", "GOPATH=/go",
				    "GRADLE_USER_HOME=/home/gradle/.gradle", "XDG_CACHE_HOME=/tmp/pv-cache-w",
				    "JULIA_LOAD_PATH=@:@v#.#:@stdlib", "JULIA_DEPOT_PATH=:/opt/julia",
				    "YARN_CACHE_FOLDER=/usr/local/share/.cache/yarn", "YARN_ENABLE_IMMUTABLE_INSTALLS=false",
				    "YARN_RC_FILENAME=.yarnrc-ci.yml", "npm_config_cache=/tmp/npm-w",
				    "KAFKA_OPTS=-Xmx1g -Dlog4j.configuration=file:/etc/kafka/log4j.properties",
				    "ES_JAVA_OPTS=-Xms512m -Xmx512m", "SSH_OPTS=-p 2222", "RSYNC_OPTS=-av -s",
				    "FZF_DEFAULT_OPTS=--height 40% --layout=reverse", "GOFLAGS=-mod=mod -buildvcs=false",
				    "TEXINPUTS=.:./styles//:", "PSModulePath=/opt/microsoft/powershell/7/Modules",
				    "Yarn_Script_Shell=bash", NULL};

		st = run_fsh("home", NULL, ok, NULL, "work.yaml", "echo started\n", &out, &err);
		ROW(st == 0 && test_has(out, "started"), "everyday values: status %d, %s", st, err ? err : "");
		free(out);
		free(err);
	}
	/* Review of round 39's "Not done": a namespace package (no
	 * __init__) named like the breakpoint module's top: python imports
	 * top.sub of "top.sub.f" from the directory it starts in, where no
	 * installed package of that name wins; its sub.py (and a package
	 * sub/) moves aside as the top's __init__ would. */
	{
		static const char *const bp[][3] = {
			{"PYTHONBREAKPOINT=evn_w.sub.f", "evn_w/sub.py", "mkdir -p evn_w && "},
			{"PYTHONBREAKPOINT=evn_w.pk.f", "evn_w/pk/__init__.py", "mkdir -p evn_w/pk && "},
		};
		char cmd[2 * PATH_MAX], line[256], q[PATH_MAX], sc[1024];

		for (size_t i = 0; i < sizeof(bp) / sizeof(bp[0]); i++) {
			const char *bpenv[] = {bp[i][0], NULL};

			snprintf(sc, sizeof(sc),
				 "%sprintf 'import sys\\nprint(\"PLANTED-W\", file=sys.stderr)\\ndef f(*a): pass\\n' > %s "
				 "&& echo planted\n",
				 bp[i][2], bp[i][1]);
			st = run_fsh("home", NULL, bpenv, NULL, "work.yaml", sc, &out, &err);
			ROW(st == 0 && test_has(out, "planted"), "%s: status %d, not started: %s", bp[i][0], st,
			    err ? err : "");
			snprintf(cmd, sizeof(cmd), "work/%s", bp[i][1]);
			if (snprintf(q, sizeof(q), "%s/%s", w, bp[i][1]) >= (int)sizeof(q))
				CU_FAIL("a path too long for the test");
			ROW(!exists(cmd), "%s: the session's %s was not moved aside: %s", bp[i][0], bp[i][1],
			    err ? err : "");
			snprintf(cmd, sizeof(cmd), "cd '%s' && env '%s' python3 -c 'breakpoint()' 2>&1 | grep PLANTED-W",
				 w, bp[i][0]);
			host_line(cmd, line, sizeof(line));
			ROW(strstr(line, "PLANTED-W") == NULL, "%s: the host's breakpoint() ran the session's module",
			    bp[i][0]);
			free(out);
			free(err);
			out = err = NULL;
			snprintf(cmd, sizeof(cmd), "cd '%s' && rm -rf evn_w*", w);
			(void)host_sh(cmd);
		}
	}
	drop("work/ok-w.txt");
	for (size_t i = 0; i < NV; i++) {
		char top[PATH_MAX];

		if (snprintf(top, sizeof(top), "%s/%.*s", w, (int)strcspn(vars[i][1], "/"), vars[i][1]) >= (int)sizeof(top))
			CU_FAIL("a path too long for the test");
		test_rmtree(top);
	}
}

/*
 * Round 41 (fix41v): the families round 40 left. TeX's trees (TEXMFHOME's
 * tex/latex/ .sty files load before the distribution's, TEXMFCNF's texmf.cnf
 * sets shell_escape = t, TEXMFVAR's formats load at every latex run),
 * yarn's plugins as a ';' list, bun's global bin and transpiler cache,
 * bun's BUN_OPTIONS=--preload, a bare YARN_RC_FILENAME's file in a
 * writable home (yarn reads it there for every project under the home):
 * in a writable tree read-only; the other interpreters' module search
 * lists (Guile, OCaml, Erlang, Raku) and TeX's trees refuse a relative
 * entry; the values CI images set start. And the notice of the homes of
 * code names each entry once: a second run with the same says nothing,
 * -v names it again.
 */
static void test_code_homes_r41(void)
{
	static const char *const vars[][2] = {
		{"TEXMFHOME=@W@/texmf-x", "texmf-x/tex/latex/hyperref.sty"},
		{"TEXMFCNF=!!@W@/cnf-x//:", "cnf-x/texmf.cnf"},
		{"TEXMFVAR=/nonexistent-x:@W@/tvar-x", "tvar-x/web2c/pdftex/pdflatex.fmt"},
		{"YARN_PLUGINS=/nonexistent-x/a.cjs;@W@/yp-x.cjs", "yp-x.cjs"},
		{"BUN_RUNTIME_TRANSPILER_CACHE_PATH=@W@/bunc-x", "bunc-x/x.pile"},
		{"BUN_INSTALL_BIN=@W@/bunbin-x", "bunbin-x/tool"},
		{"BUN_OPTIONS=--smol --preload @W@/pre-x.ts", "pre-x.ts"},
		{"YARN_RC_FILENAME=.yarnrc-x.yml", "../home41/.yarnrc-x.yml"},
	};
	enum { NV = sizeof(vars) / sizeof(vars[0]) };
	static const char *const rel[][4] = {
		{"TEXMFHOME=texmf-x", "TEXMFHOME holds", "\"texmf-x\"", NULL},
		{"TEXMFCNF=$SELFAUTOLOC/x", "TEXMFCNF holds", "kpathsea expands", NULL},
		{"GUILE_LOAD_PATH=/usr/share/guile:lib-x", "GUILE_LOAD_PATH holds", "\"lib-x\"", NULL},
		{"ERL_LIBS=./deps-x", "ERL_LIBS holds", "\"./deps-x\"", NULL},
		{"OCAMLPATH=_opam-x/lib", "OCAMLPATH holds", "\"_opam-x/lib\"", NULL},
		{"RAKULIB=inst#lib-x", "RAKULIB holds", "\"inst#lib-x\"", NULL},
		{"YARN_PLUGINS=/nonexistent-x/a.cjs;./p-x.cjs", "YARN_PLUGINS holds", "\"./p-x.cjs\"", NULL},
		{"BUN_OPTIONS=--preload ./pre-x.ts", "BUN_OPTIONS holds", "\"./pre-x.ts\"", NULL},
	};
	static const char *const oks[] = {"ok-x.txt", "../home41/ok-x.txt", NULL};
	char w[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	CU_ASSERT_FATAL(mkdirs("home41") == 0);
	CU_ASSERT_FATAL(write_policy("home41.yaml", "filesystem:\n  allowWrite: [\"%1$s/home41\", \"%1$s/work\"]\n") == 0);
	plant_rows_in("home41", "home41.yaml", vars, NV,
		      "{ mkdir -p \"$(dirname %1$s)\" && echo 'echo PLANTED-X' > %1$s; } 2>/dev/null", oks,
		      "round 41 homes");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), "echo planted\n", "PLANTED-X", false, "ok-x.txt");
	/* What CI images and developers set: started. */
	{
		const char *ok[] = {"TEXMFHOME=~/texmf", "TEXMFHOME=/root/texmf", "TEXINPUTS=.:./styles//:",
				    "BIBINPUTS=.:./bib//:", "LUAINPUTS=.:", "TEXMFCNF=/usr/share/texmf/web2c:",
				    "TEXMFVAR=/root/.texlive2023/texmf-var", "GUILE_LOAD_PATH=/usr/share/guile/site/3.0",
				    "OCAMLPATH=/root/.opam/default/lib", "ERL_LIBS=/usr/lib/erlang/lib",
				    "RAKULIB=inst#/opt/rakudo/share/perl6/site,/opt/lib",
				    "YARN_PLUGINS=/opt/yarn/plugin-a.cjs;/opt/yarn/plugin-b.cjs", "BUN_OPTIONS=--smol",
				    "BUN_INSTALL_BIN=/usr/local/bin", "YARN_RC_FILENAME=.yarnrc-ci.yml",
				    "NODE_OPTIONS=--max-old-space-size=4096", NULL};

		/* one at a time: TEXMFHOME twice */
		everyday_rows(ok);
	}
	/* The notice names each entry once; -v every time. */
	{
		char g[2 * PATH_MAX], want[3 * PATH_MAX];
		const char *genv[] = {g, NULL}, *verbose[] = {"-v", NULL};

		snprintf(g, sizeof(g), "GOMODCACHE=%s/.go-cache-o%ld", w, (long)getpid());
		snprintf(want, sizeof(want), "GOMODCACHE=%s/.go-cache-o%ld", w, (long)getpid());
		for (int k = 0; k < 3; k++) {
			st = run_fsh("home", NULL, genv, k == 2 ? verbose : NULL, "work.yaml", "echo started\n", &out, &err);
			ROW(st == 0 && test_has(out, "started"), "notice run %d: status %d, %s", k, st, err ? err : "");
			if (k == 1)
				ROW(!test_has(err, want), "the second run named %s again: %s", want, err ? err : "");
			else
				ROW(test_has(err, want), "run %d did not name %s: %s", k, want, err ? err : "");
			free(out);
			free(err);
			out = err = NULL;
		}
	}
	drop("work/ok-x.txt");
	drop("home41/ok-x.txt");
	drop("home41/.yarnrc-x.yml");
	for (size_t i = 0; i < NV; i++) {
		char top[PATH_MAX];

		if (strncmp(vars[i][1], "../", 3) == 0)
			continue;
		if (snprintf(top, sizeof(top), "%s/%.*s", w, (int)strcspn(vars[i][1], "/"), vars[i][1]) >= (int)sizeof(top))
			CU_FAIL("a path too long for the test");
		test_rmtree(top);
	}
}

/*
 * Review 41e of fix41v. kpathsea reads a variable by program before the
 * plain one (TEXMFHOME_pdflatex, TEXMFCNF.lualatex: kpathsea_var_value()),
 * and TEXMF, the list of every tree, replaces texmf.cnf's: in a writable
 * tree they were writable and a relative one started, as TEXMFHOME was
 * before round 41. And the notice's state directory: a $XDG_STATE_HOME a
 * session could swap for a link made passavant mkdir through it
 * (stelse-x/passavant appeared); now nothing is made there, the start
 * goes on and the entry is named on each run.
 */
static void test_code_homes_r41e(void)
{
	static const char *const vars[][2] = {
		{"TEXMFHOME_pdflatex=@W@/texmf-p", "texmf-p/tex/latex/hyperref.sty"},
		{"TEXMFCNF.lualatex=!!@W@/cnf-p//", "cnf-p/texmf.cnf"},
		{"TEXMF=/nonexistent-x:@W@/texmf-all", "texmf-all/tex/latex/x.sty"},
		{"TEXMFDIST=@W@/tdist-p", "tdist-p/tex/latex/y.sty"},
		{"TEXMFVAR_latex=@W@/tvar-p", "tvar-p/web2c/pdftex/latex.fmt"},
	};
	enum { NV = sizeof(vars) / sizeof(vars[0]) };
	static const char *const rel[][4] = {
		{"TEXMFHOME_pdflatex=texmf-rel", "TEXMFHOME_pdflatex holds", "\"texmf-rel\"", NULL},
		{"TEXMFCNF.lualatex=$SELFAUTOLOC/x", "TEXMFCNF.lualatex holds", "kpathsea expands", NULL},
		{"TEXMF=./texmf-rel", "TEXMF holds", "\"./texmf-rel\"", NULL},
	};
	char w[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	plant_rows(vars, NV, "{ mkdir -p \"$(dirname %1$s)\" && echo 'PLANTED-X' > %1$s; } 2>/dev/null", "ok-x.txt",
		   "review 41e trees");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), "echo planted\n", "PLANTED-X", false, "ok-x.txt");
	{
		const char *ok[] = {"TEXMFHOME_pdflatex=~/texmf", "TEXMFVAR=~/.texlive/texmf-var",
				    "TEXMF.lualatex=/usr/share/texmf:/usr/share/texlive/texmf-dist", NULL};

		everyday_rows(ok);
	}
	/* The state directory through a link: nothing made there. */
	{
		char lnk[PATH_MAX], to[PATH_MAX], made[PATH_MAX], x[2 * PATH_MAX], g[2 * PATH_MAX], want[2 * PATH_MAX];
		const char *genv[] = {x, g, NULL};

		CU_ASSERT_FATAL(mkdirs("stelse-x") == 0);
		drop("stlink-x");
		CU_ASSERT_FATAL(symlink(at(to, "stelse-x"), at(lnk, "stlink-x")) == 0);
		snprintf(x, sizeof(x), "XDG_STATE_HOME=%s", lnk);
		snprintf(g, sizeof(g), "GOMODCACHE=%s/.go-cache-l%ld", w, (long)getpid());
		snprintf(want, sizeof(want), "%s", g);
		for (int k = 0; k < 2; k++) {
			st = run_fsh("home", NULL, genv, NULL, "work.yaml", "echo started\n", &out, &err);
			ROW(st == 0 && test_has(out, "started"), "state link run %d: status %d, %s", k, st, err ? err : "");
			ROW(test_has(err, want), "state link run %d did not name %s: %s", k, want, err ? err : "");
			free(out);
			free(err);
			out = err = NULL;
		}
		ROW(!exists("stelse-x/passavant"), "passavant made %s through the link %s", at(made, "stelse-x/passavant"),
		    lnk);
		drop("stlink-x");
		test_rmtree(at(made, "stelse-x"));
	}
	drop("work/ok-x.txt");
	for (size_t i = 0; i < NV; i++) {
		char top[PATH_MAX];

		if (snprintf(top, sizeof(top), "%s/%.*s", w, (int)strcspn(vars[i][1], "/"), vars[i][1]) >= (int)sizeof(top))
			CU_FAIL("a path too long for the test");
		test_rmtree(top);
	}
}

/*
 * Round 42 (fix42v): the ecosystems round 41 left. The BEAM's flags from
 * the environment (ERL_FLAGS -boot, ERL_AFLAGS -config, ELIXIR_ERL_OPTIONS
 * -args_file: read at every erl start), GHC's package environment file,
 * mix's project file, bun's -c; the homes of Elixir (MIX_HOME, HEX_HOME),
 * Racket (PLTADDONDIR), Haskell (CABAL_DIR, STACK_ROOT), Dart (PUB_CACHE),
 * Nix (NIX_PATH's "name=place", NIX_USER_CONF_FILES), Octave's site
 * start-up file, make's MAKEFILES, and a TeX tree with "//" inside
 * (TEXMFHOME=/w/tm//tex searches every directory under /w/tm): in a
 * writable tree read-only; relative ones (-pa ./ebin, -s MOD: loaded
 * from the working directory first, a bare -boot, MIX_HOME=mix, a
 * NIX_PATH entry, GHC_ENVIRONMENT=default, bun's -c ./x) refuse the
 * start; what CI images set starts. The notice of the homes of code on a
 * start then refused names them again on the next start. And the
 * unchecked marks' state directory through a link: nothing made there.
 */
static void test_code_homes_r42(void)
{
	static const char *const vars[][2] = {
		{"ERL_FLAGS=+S 2 -boot @W@/boot-x", "boot-x.boot"},
		{"ERL_AFLAGS=-config @W@/sys-x", "sys-x.config"},
		{"ELIXIR_ERL_OPTIONS=-args_file @W@/args-x", "args-x"},
		{"GHC_ENVIRONMENT=@W@/ghcenv-x", "ghcenv-x"},
		{"MIX_EXS=@W@/mix-x.exs", "mix-x.exs"},
		{"BUN_OPTIONS=-c @W@/bunfig-x.toml", "bunfig-x.toml"},
		{"MIX_HOME=@W@/mixh-x", "mixh-x/archives/x.ez"},
		{"HEX_HOME=@W@/hex-x", "hex-x/packages/x.tar"},
		{"PLTADDONDIR=@W@/plt-x", "plt-x/collects/x/main.rkt"},
		{"CABAL_DIR=@W@/cabal-x", "cabal-x/config"},
		{"STACK_ROOT=@W@/stack-x", "stack-x/config.yaml"},
		{"PUB_CACHE=@W@/pub-x", "pub-x/bin/tool"},
		{"NIX_PATH=nixpkgs=channel:nixos-24.05:nixx=@W@/nixpkgs-x", "nixpkgs-x/default.nix"},
		{"NIX_USER_CONF_FILES=/nonexistent-x/nix.conf:@W@/nix-x.conf", "nix-x.conf"},
		{"OCTAVE_SITE_INITFILE=@W@/octave-x.m", "octave-x.m"},
		{"MAKEFILES=/nonexistent-x.mk @W@/mk-x.mk", "mk-x.mk"},
		{"TEXMFHOME=@W@/tm-x//tex", "tm-x/a/tex/latex/x.sty"},
	};
	enum { NV = sizeof(vars) / sizeof(vars[0]) };
	static const char *const rel[][4] = {
		{"ERL_FLAGS=-pa ./ebin-x", "ERL_FLAGS holds", "\"./ebin-x\"", NULL},
		{"ERL_AFLAGS=-s evil_x", "ERL_AFLAGS holds", "\"./evil_x.beam\"", NULL},
		{"ELIXIR_ERL_OPTIONS=-boot start_x", "ELIXIR_ERL_OPTIONS holds", "\"start_x\"", NULL},
		{"ERL_ZFLAGS=-eval 'code:add_patha(\"ebin-x/x\")'", "ERL_ZFLAGS holds", "\"ebin-x/x\"", NULL},
		{"GHC_ENVIRONMENT=default", "GHC_ENVIRONMENT holds", "\"default\"", NULL},
		{"MIX_EXS=mix-x.exs", "MIX_EXS holds", "\"mix-x.exs\"", NULL},
		{"BUN_OPTIONS=-c ./bunfig-x.toml", "BUN_OPTIONS holds", "\"./bunfig-x.toml\"", NULL},
		{"MIX_HOME=mix-x", "MIX_HOME holds", "\"mix-x\"", NULL},
		{"STACK_ROOT=stack-x", "STACK_ROOT holds", "\"stack-x\"", NULL},
		{"PUB_CACHE=pub-x", "PUB_CACHE holds", "\"pub-x\"", NULL},
		{"NIX_PATH=nixpkgs=nixpkgs-x", "NIX_PATH holds", "\"nixpkgs=nixpkgs-x\"", NULL},
		{"CABAL_CONFIG=cabal-x.config", "CABAL_CONFIG holds", "\"cabal-x.config\"", NULL},
	};
	char w[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	/* existing, as a used tree is: a missing home is held whole */
	CU_ASSERT_FATAL(mkdirs("work/tm-x/a/tex/latex") == 0);
	CU_ASSERT_FATAL(mkdirs("work/pub-x/bin") == 0);
	plant_rows(vars, NV, "{ mkdir -p \"$(dirname %1$s)\" && echo 'PLANTED-X' > %1$s; } 2>/dev/null", "ok-x.txt",
		   "round 42 homes");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), "echo planted\n", "PLANTED-X", false, "ok-x.txt");
	/* What CI images and developers set: started. */
	{
		const char *ok[] = {"ERL_AFLAGS=-kernel shell_history enabled", "ERL_FLAGS=+S 4:4 +A 16 -sname ci",
				    "ELIXIR_ERL_OPTIONS=+fnu", "MIX_HOME=/root/.mix", "HEX_HOME=/root/.hex",
				    "GHC_ENVIRONMENT=-", "CABAL_DIR=/root/.cabal", "STACK_ROOT=/root/.stack",
				    "PUB_CACHE=/root/.pub-cache", "MAKEFILES=", "BUN_OPTIONS=--smol",
				    "NIX_PATH=nixpkgs=/nix/var/nix/profiles/per-user/root/channels/nixpkgs:"
				    "/nix/var/nix/profiles/per-user/root/channels",
				    "NIX_PATH=nixpkgs=channel:nixos-24.05",
				    "NIX_PATH=nixpkgs=https://github.com/NixOS/nixpkgs/archive/master.tar.gz",
				    "TEXMFHOME=/usr/share/texmf//", NULL};

		everyday_rows(ok);
	}
	/* The notice on a start then refused: named again on the next. */
	{
		char g[2 * PATH_MAX];
		const char *refused[] = {g, "MIX_HOME=mix-x", NULL}, *genv[] = {g, NULL};

		snprintf(g, sizeof(g), "GOMODCACHE=%s/.go-cache-r%ld", w, (long)getpid());
		for (int k = 0; k < 3; k++) {
			st = run_fsh("home", NULL, k == 0 ? refused : genv, NULL, "work.yaml", "echo started\n", &out,
				     &err);
			if (k == 0)
				ROW(st == 125 && test_has(err, g) && test_has(err, "MIX_HOME holds"),
				    "refused start: status %d, %s", st, err ? err : "");
			else
				ROW(st == 0 && test_has(out, "started"), "notice run %d: status %d, %s", k, st,
				    err ? err : "");
			if (k == 1)
				ROW(test_has(err, g), "the start after a refused one did not name %s: %s", g,
				    err ? err : "");
			if (k == 2)
				ROW(!test_has(err, g), "the third start named %s again: %s", g, err ? err : "");
			free(out);
			free(err);
			out = err = NULL;
		}
	}
	/* The unchecked marks' state directory through a link: nothing made
	 * there while the command runs (the marks are made before it). */
	{
		char lnk[PATH_MAX], to[PATH_MAX], x[2 * PATH_MAX], sc[2 * PATH_MAX];
		const char *xenv[] = {x, NULL};

		CU_ASSERT_FATAL(mkdirs("stelse42-x") == 0);
		drop("stlink42-x");
		CU_ASSERT_FATAL(symlink(at(to, "stelse42-x"), at(lnk, "stlink42-x")) == 0);
		snprintf(x, sizeof(x), "XDG_STATE_HOME=%s", lnk);
		snprintf(sc, sizeof(sc), "test -e '%s/passavant' && echo MADE-THROUGH; echo started\n", to);
		st = run_fsh("home", NULL, xenv, NULL, "work.yaml", sc, &out, &err);
		ROW(st == 0 && test_has(out, "started"), "state link: status %d, %s", st, err ? err : "");
		ROW(!test_has(out, "MADE-THROUGH") && !exists("stelse42-x/passavant"),
		    "passavant made %s/passavant through the link %s: %s", to, lnk, out ? out : "");
		free(out);
		free(err);
		out = err = NULL;
		drop("stlink42-x");
		test_rmtree(to);
	}
	drop("work/ok-x.txt");
	for (size_t i = 0; i < NV; i++) {
		char top[PATH_MAX];

		if (snprintf(top, sizeof(top), "%s/%.*s", w, (int)strcspn(vars[i][1], "/"), vars[i][1]) >= (int)sizeof(top))
			CU_FAIL("a path too long for the test");
		test_rmtree(top);
	}
}

/*
 * Round 43 (fix43v): what round 42 left, by family. The BEAM's compiler
 * options from the environment (ERL_COMPILER_OPTIONS: a parse transform
 * runs at every compile), erlexec's ERL_OTP<release>_FLAGS (read before
 * ERL_AFLAGS), the emulators erlc, escript and a detached erlexec run,
 * stack's project and user files, bun's -e code, node's --test-reporter
 * module; the homes mix's dependencies and builds, its extra code path,
 * Racket's compiled-file roots and configuration directory, the Erlang
 * installation (ERL_ROOTDIR): in a writable tree read-only; relative
 * ones refuse the start; what CI images set starts.
 */
static void test_code_homes_r43(void)
{
	static const char *const vars[][2] = {
		{"ERL_OTP27_FLAGS=+S 2 -boot @W@/boot43-x", "boot43-x.boot"},
		{"ERL_COMPILER_OPTIONS=[debug_info, {parse_transform, '@W@/pt43-x'}]", "pt43-x.beam"},
		{"ERLC_EMULATOR=@W@/erlcemu43-x", "erlcemu43-x"},
		{"ESCRIPT_EMULATOR=@W@/escemu43-x", "escemu43-x"},
		{"CERL_DETACHED_PROG=@W@/cerl43-x", "cerl43-x"},
		{"STACK_YAML=@W@/stack43-x.yaml", "stack43-x.yaml"},
		{"STACK_CONFIG=@W@/stackcfg43-x.yaml", "stackcfg43-x.yaml"},
		{"BUN_OPTIONS=-e \"require('@W@/bunev43-x.js')\"", "bunev43-x.js"},
		{"NODE_OPTIONS=--test-reporter=@W@/rep43-x.mjs", "rep43-x.mjs"},
		{"MIX_DEPS_PATH=@W@/deps43-x", "deps43-x/x/mix.exs"},
		{"MIX_BUILD_PATH=@W@/build43-x", "build43-x/lib/x/ebin/x.beam"},
		{"MIX_PATH=/nonexistent-x:@W@/mixpath43-x", "mixpath43-x/x.beam"},
		{"MIX_INSTALL_DIR=@W@/mixinst43-x", "mixinst43-x/x/x.beam"},
		{"PLTCOMPILEDROOTS=same:@W@/zo43-x/@(version)", "zo43-x/8.0/x_rkt.zo"},
		{"PLTCONFIGDIR=@W@/pltcfg43-x", "pltcfg43-x/config.rktd"},
		{"ERL_ROOTDIR=@W@/otp43-x", "otp43-x/bin/erl"},
	};
	enum { NV = sizeof(vars) / sizeof(vars[0]) };
	static const char *const rel[][4] = {
		{"ERL_OTP27_FLAGS=-pa ./ebin43-x", "ERL_OTP27_FLAGS holds", "\"./ebin43-x\"", NULL},
		{"ERL_COMPILER_OPTIONS=[{parse_transform, evil43_x}]", "ERL_COMPILER_OPTIONS holds",
		 "\"./evil43_x.beam\"", NULL},
		{"ERL_COMPILER_OPTIONS=[{i, \"inc43-x\"}]", "ERL_COMPILER_OPTIONS holds", "\"inc43-x\"", NULL},
		{"ESCRIPT_EMULATOR=./emu43-x", "ESCRIPT_EMULATOR holds", "\"./emu43-x\"", NULL},
		{"BUN_OPTIONS=-e \"require('./bunev43-x')\"", "BUN_OPTIONS holds", "\"./bunev43-x\"", NULL},
		{"NODE_OPTIONS=--test-reporter=./rep43-x.mjs", "NODE_OPTIONS holds", "\"./rep43-x.mjs\"", NULL},
		{"STACK_CONFIG=stackcfg43-x.yaml", "STACK_CONFIG holds", "\"stackcfg43-x.yaml\"", NULL},
		{"MIX_DEPS_PATH=deps43-x", "MIX_DEPS_PATH holds", "\"deps43-x\"", NULL},
		{"PLTCOMPILEDROOTS=same:../zo43-x", "PLTCOMPILEDROOTS holds", "\"../zo43-x\"", NULL},
		{"PLTCONFIGDIR=pltcfg43-x", "PLTCONFIGDIR holds", "\"pltcfg43-x\"", NULL},
		{"ERL_ROOTDIR=otp43-x", "ERL_ROOTDIR holds", "\"otp43-x\"", NULL},
	};
	char w[PATH_MAX];

	SKIP_IF_NEEDED();
	at(w, "work");
	/* existing, as a used tree is */
	CU_ASSERT_FATAL(mkdirs("work/zo43-x/8.0") == 0);
	CU_ASSERT_FATAL(mkdirs("work/deps43-x/x") == 0);
	plant_rows(vars, NV, "{ mkdir -p \"$(dirname %1$s)\" && echo 'PLANTED-X' > %1$s; } 2>/dev/null", "ok-x.txt",
		   "round 43 homes");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), "echo planted\n", "PLANTED-X", false, "ok-x.txt");
	/* What CI images and developers set: started. */
	{
		const char *ok[] = {"ERL_COMPILER_OPTIONS=[debug_info, deterministic, {d, 'TEST'}]",
				    "ERL_COMPILER_OPTIONS=deterministic", "ERL_OTP27_FLAGS=+S 4",
				    "ERLC_EMULATOR=/usr/bin/erl", "ESCRIPT_EMULATOR=erl", "STACK_YAML=stack-9.4.yaml",
				    "STACK_YAML=/nonexistent-x/stack.yaml", "MIX_DEPS_PATH=/opt/mix/deps",
				    "MIX_BUILD_PATH=/opt/mix/_build", "PLTCOMPILEDROOTS=compiled/@(version):same",
				    "NODE_OPTIONS=--test-reporter=spec --test-reporter-destination=stdout",
				    "BUN_OPTIONS=--smol -p 1+1", "ERL_ROOTDIR=/usr/lib/erlang", NULL};

		everyday_rows(ok);
	}
	drop("work/ok-x.txt");
	for (size_t i = 0; i < NV; i++) {
		char top[PATH_MAX];

		if (snprintf(top, sizeof(top), "%s/%.*s", w, (int)strcspn(vars[i][1], "/"), vars[i][1]) >= (int)sizeof(top))
			CU_FAIL("a path too long for the test");
		test_rmtree(top);
	}
}

/*
 * Review of round 43 (review43d): the transforms ERL_COMPILER_OPTIONS
 * hid from erl_token() (an escape in the option's name or the module's,
 * a comment, $' before it, an atom starting with 'é': the host's next
 * erlc in the tree ran what the session wrote), node's
 * --test-reporter=dots (a package's name: node's own is dot), OCaml's
 * OCAMLPARAM (ppx=, pp=, cc= run at every ocamlc/ocamlopt; plugin=
 * loaded into it; I= searched), .NET's DOTNET_ROOT (hostfxr and the
 * runtime every apphost loads), DOTNET_ADDITIONAL_DEPS (.deps.json:
 * assemblies every app loads), DOTNET_SHARED_STORE, NuGet's
 * NUGET_PACKAGES (every restore's packages: their .props and .targets
 * run in every build) and NUGET_PLUGIN_PATHS (programs every restore
 * runs): in a writable tree read-only; relative ones refuse the start;
 * what CI images set starts.
 */
static void test_code_homes_r43r(void)
{
	static const char *const vars[][2] = {
		{"ERL_COMPILER_OPTIONS=[{'parse_tr\\x61nsform', '@W@/ptesc43r'}]", "ptesc43r.beam"},
		{"OCAMLPARAM=_,g=1,ppx=@W@/ppx43r.exe --as-ppx", "ppx43r.exe"},
		{"DOTNET_ROOT=@W@/dotnet43r", "dotnet43r/host/fxr/8.0.0/libhostfxr.so"},
		{"DOTNET_ADDITIONAL_DEPS=/nonexistent-x.json;@W@/deps43r.json", "deps43r.json"},
		{"DOTNET_SHARED_STORE=@W@/store43r", "store43r/x64/net8.0/x/1.0/x.dll"},
		{"NUGET_PACKAGES=@W@/nuget43r", "nuget43r/x/1.0.0/build/x.targets"},
		{"NUGET_PLUGIN_PATHS=/nonexistent-x/p.dll:@W@/nugetplug43r.dll", "nugetplug43r.dll"},
	};
	enum { NV = sizeof(vars) / sizeof(vars[0]) };
	static const char *const rel[][4] = {
		{"ERL_COMPILER_OPTIONS=[{parse_transform, % the CI's\n evil43r}]", "ERL_COMPILER_OPTIONS holds",
		 "\"./evil43r.beam\"", NULL},
		{"ERL_COMPILER_OPTIONS=[$', {parse_transform, evil43r}, $']", "ERL_COMPILER_OPTIONS holds",
		 "\"./evil43r.beam\"", NULL},
		{"ERL_COMPILER_OPTIONS=[{parse_transform, \xc3\xa9vil43r}]", "ERL_COMPILER_OPTIONS holds",
		 "\"./\xc3\xa9vil43r.beam\"", NULL},
		{"NODE_OPTIONS=--test-reporter=dots", "NODE_OPTIONS loads the module", "\"dots\"", NULL},
		{"OCAMLPARAM=ppx=./ppx43r.exe", "OCAMLPARAM holds", "\"./ppx43r.exe\"", NULL},
		{"OCAMLPARAM=:g=1:plugin=plug43r.cmxs", "OCAMLPARAM holds", "\"plug43r.cmxs\"", NULL},
		{"OCAMLPARAM=I=inc43r", "OCAMLPARAM holds", "\"inc43r\"", NULL},
		{"DOTNET_ROOT=dotnet43r", "DOTNET_ROOT holds", "\"dotnet43r\"", NULL},
		{"DOTNET_ADDITIONAL_DEPS=/x.json;deps43r.json", "DOTNET_ADDITIONAL_DEPS holds", "\"deps43r.json\"",
		 NULL},
		{"NUGET_PACKAGES=.nuget/packages", "NUGET_PACKAGES holds", "\".nuget/packages\"", NULL},
	};
	char w[PATH_MAX];

	SKIP_IF_NEEDED();
	at(w, "work");
	plant_rows(vars, NV, "{ mkdir -p \"$(dirname %1$s)\" && echo 'PLANTED-X' > %1$s; } 2>/dev/null",
		   "ok-x.txt", "review 43 homes");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), "echo planted\n", "PLANTED-X", false, "ok-x.txt");
	/* What CI images and developers set: started. */
	{
		const char *ok[] = {"ERL_COMPILER_OPTIONS=[debug_info, % CI\n deterministic, {d, 'S', $'}]",
				    "OCAMLPARAM=_,g=1,bin-annot=1,I=+compiler-libs,w=+a-4", "DOTNET_ROOT=/usr/share/dotnet",
				    "DOTNET_ADDITIONAL_DEPS=/opt/deps/x.deps.json", "NUGET_PACKAGES=/opt/nuget/packages",
				    "NODE_OPTIONS=--test-reporter=dot --test-reporter=junit", NULL};

		everyday_rows(ok);
	}
	drop("work/ok-x.txt");
	for (size_t i = 0; i < NV; i++) {
		char top[PATH_MAX];

		if (snprintf(top, sizeof(top), "%s/%.*s", w, (int)strcspn(vars[i][1], "/"), vars[i][1]) >= (int)sizeof(top))
			CU_FAIL("a path too long for the test");
		test_rmtree(top);
	}
}

/*
 * Review of round 40 (fix40v): a home of code in the tree is read-only,
 * and a build filling it (GitLab's GOCACHE=$CI_PROJECT_DIR/.go-cache,
 * CARGO_HOME=$CI_PROJECT_DIR/.cargo) failed with a bare "Read-only file
 * system" on a file of the cache, or, the home missing and held by an
 * empty file, "mkdir ...: not a directory". The start names the variables and
 * their values, and the two ways out; the real go shows that the build
 * fails with the host's cache and passes with the command's own for the
 * run (env GOCACHE=/tmp/...). A home outside the writable trees is not
 * named.
 */
static void test_code_homes_notice_r40(void)
{
	char w[PATH_MAX], e1[2 * PATH_MAX], e2[2 * PATH_MAX], want[3 * PATH_MAX], *out = NULL, *err = NULL;
	const char *env[] = {e1, e2, "RUSTUP_HOME=/usr/local/rustup", NULL};
	bool go = host_sh("command -v go >/dev/null 2>&1") == 0;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	snprintf(e1, sizeof(e1), "GOCACHE=%s/.go-cache-n", w);
	snprintf(e2, sizeof(e2), "CARGO_HOME=%s/.cargo-n", w);
	st = run_fsh("home", NULL, env, NULL, "work.yaml",
		     "mkdir -p gomod-n && cd gomod-n && printf 'module n\\ngo 1.18\\n' > go.mod &&\n"
		     "printf 'package main\\nfunc main() { println(\"hi\") }\\n' > main.go && echo src=ok\n"
		     "if command -v go >/dev/null; then\n"
		     "  GOTOOLCHAIN=local go build -buildvcs=false -o /tmp/n1 . >/tmp/b1.err 2>&1; echo b1=$?\n"
		     "  grep -qiE 'read-only file system|not a directory' /tmp/b1.err && echo b1ro\n"
		     "  env GOCACHE=/tmp/go-build GOTOOLCHAIN=local go build -buildvcs=false -o /tmp/n2 . && echo b2=0\n"
		     "fi\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "src=ok"), "homes notice: status %d, %s", st, err ? err : "");
	if (st != 0)
		show(st, out, err);
	ROW(test_has(err, "read-only in the sandbox, as the host's next build or shell runs the code they hold"),
	    "no notice of the read-only homes of code: %s", err ? err : "");
	/* round 44 (fix44c): GOCACHE in the tree is the session's own
	 * (proxy/cli/plan.c plan_session_homes()): not named, go build
	 * works, the host's cache stays as it was */
	snprintf(want, sizeof(want), "GOCACHE=%s/.go-cache-n", w);
	ROW(!test_has(err, want), "the notice names the session's own %s: %s", want, err ? err : "");
	snprintf(want, sizeof(want), "CARGO_HOME=%s/.cargo-n", w);
	ROW(test_has(err, want), "the notice does not name %s: %s", want, err ? err : "");
	ROW(test_has(err, "filesystem.allowWrite") && test_has(err, "env VAR=/tmp/NAME"),
	    "the notice does not say what to do: %s", err ? err : "");
	ROW(!test_has(err, "RUSTUP_HOME="), "a home outside the tree was named: %s", err ? err : "");
	if (go) {
		ROW(test_has(out, "b1=0") && !test_has(out, "b1ro"),
		    "go build failed with GOCACHE in the tree: %s", out ? out : "");
		ROW(!exists("work/.go-cache-n/trim.txt"), "go build wrote the host's GOCACHE in the tree");
		ROW(test_has(out, "b2=0"), "go build with the command's own GOCACHE failed: %s %s", out ? out : "",
		    err ? err : "");
	}
	free(out);
	free(err);
	out = err = NULL;
	/* Outside the tree: no notice. */
	{
		const char *ok[] = {"CARGO_HOME=/usr/local/cargo", "GOCACHE=/tmp/pv-gocache-n", NULL};

		st = run_fsh("home", NULL, ok, NULL, "work.yaml", "echo started\n", &out, &err);
		ROW(st == 0 && test_has(out, "started"), "homes outside: status %d, %s", st, err ? err : "");
		ROW(!test_has(err, "runs the code they hold"), "a notice for homes outside the tree: %s", err ? err : "");
		free(out);
		free(err);
	}
	{
		char top[PATH_MAX];

		if (snprintf(top, sizeof(top), "%s/gomod-n", w) >= (int)sizeof(top))
			CU_FAIL("a path too long for the test");
		test_rmtree(top);
		if (snprintf(top, sizeof(top), "%s/.go-cache-n", w) >= (int)sizeof(top))
			CU_FAIL("a path too long for the test");
		test_rmtree(top);
		if (snprintf(top, sizeof(top), "%s/.cargo-n", w) >= (int)sizeof(top))
			CU_FAIL("a path too long for the test");
		test_rmtree(top);
	}
}

/*
 * Round 36: the rest of the family of variables that name where a later
 * program reads code or a command to run. A relative value refuses the
 * start, named: the session planted the file at that name in the
 * project, and the host's next program started there ran it (shown by
 * the real program: git over ssh runs GIT_SSH="~/ssh-v" as a path from
 * the working directory, and ssh's -F file and -o ProxyCommand from it,
 * the JVM dlopen()s "lib../ja.so" for
 * -agentlib:../ja, python's webbrowser runs BROWSER's ./br-v.sh, make
 * reads MAKEFLAGS' --eval=include, bash runs PROMPT_COMMAND's and PS1's
 * commands). An absolute one in the tree is read-only, missing or not;
 * the values real shells, CI jobs and IDE terminals hold start.
 */
static void test_code_vars_r36(void)
{
	static const char *const rel[][3] = {
		{"GIT_SSH=~/ssh-v", "\"~/ssh-v\"", "git ls-remote ssh://v.invalid/r"},
		{"GIT_SSH_COMMAND=ssh -F ./ssh-v.conf", "\"./ssh-v.conf\"", "git ls-remote ssh://v.invalid/r"},
		{"GIT_SSH_COMMAND=ssh -o ProxyCommand=./pc-v.sh", "\"./pc-v.sh\"", "git ls-remote ssh://v.invalid/r"},
		{"JAVA_TOOL_OPTIONS=-Xmx64m -agentlib:../ja", "\"lib../ja.so\"",
		 "java -version"},
		{"BROWSER=nonesuch-v:./br-v.sh", "\"./br-v.sh\"",
		 "python3 -c 'import webbrowser; webbrowser.open(\"http://v.invalid/\")'"},
		{"MAKEFLAGS=-s --eval=include\\ ./x-v.mk", "\"./x-v.mk\"", "make -s"},
		{"PROMPT_COMMAND=history -a; ./pc-v.sh", "\"./pc-v.sh\"", "bash --norc -i </dev/null"},
		{"PS1=$(./pc-v.sh)\\$ ", "\"./pc-v.sh\"", "bash --norc -i </dev/null"},
		{"PS4=+ `bin/t-v` ", "\"bin/t-v\"", NULL},
		{"EDITOR=true; ./pc-v.sh", "\"./pc-v.sh\"", NULL},
		{"RUSTC_WRAPPER=./tools/wrap-v", "\"./tools/wrap-v\"", NULL},
		{"CARGO_BUILD_RUSTC_WRAPPER=bin/wrap-v", "\"bin/wrap-v\"", NULL},
		{"RUSTC_WORKSPACE_WRAPPER=./wrap-v", "\"./wrap-v\"", NULL},
		{"CMAKE_TOOLCHAIN_FILE=toolchain-v.cmake", "\"toolchain-v.cmake\"", NULL},
		{"CORECLR_PROFILER_PATH=./prof-v.so", "\"./prof-v.so\"", NULL},
		{"COR_PROFILER_PATH_64=prof-v.so", "\"prof-v.so\"", NULL},
		{"GTK_MODULES=canberra-gtk-module:./gm-v.so", "\"./gm-v.so\"", NULL},
		{"PERL5DB=BEGIN { require './db-v.pl' }", "\"./db-v.pl\"", NULL},
		{"_JAVA_OPTIONS=-XX:OnError=./pc-v.sh", "\"./pc-v.sh\"", NULL},
		{"GTK_PATH=gtk-v", "\"gtk-v\"", NULL},
		{"GST_PLUGIN_PATH=/usr/lib/gst-none:gst-v", "\"gst-v\"", NULL},
		{"QT_PLUGIN_PATH=./qt-v", "\"./qt-v\"", NULL},
		{"GIO_MODULE_DIR=gio-v", "\"gio-v\"", NULL},
		{"LIBGL_DRIVERS_PATH=dri-v", "\"dri-v\"", NULL},
		{"VK_ICD_FILENAMES=./icd-v.json", "\"./icd-v.json\"", NULL},
		{"VK_LAYER_PATH=layers-v", "\"layers-v\"", NULL},
		{"TCLLIBPATH=/usr/share/tcltk lib/tcl-v", "\"lib/tcl-v\"", NULL},
		/* The review of round 36 (review36b): the program behind a word
		 * that runs the next one, a shell's script and -c string. */
		{"PROMPT_COMMAND=command ./pc-v.sh", "\"./pc-v.sh\"", "bash --norc -i </dev/null"},
		{"PS1=$(env ./pc-v.sh)\\$ ", "\"./pc-v.sh\"", "bash --norc -i </dev/null"},
		{"GIT_SSH_COMMAND=env ./pc-v.sh", "\"./pc-v.sh\"", "git ls-remote ssh://v.invalid/r"},
		{"GIT_SSH_COMMAND=sh ./pc-v.sh", "\"./pc-v.sh\"", "git ls-remote ssh://v.invalid/r"},
		{"EDITOR=sh -c ./pc-v.sh", "\"./pc-v.sh\"", NULL},
	};
	const char *plant = "mkdir -p 'lib..' '~' sub-v && cp prebuilt-v.so 'lib../ja.so' && "
			    "printf '#!/bin/sh\\necho PLANTED-V >&2\\n' > '~/ssh-v' && chmod +x '~/ssh-v' && "
			    "cp '~/ssh-v' br-v.sh && cp '~/ssh-v' pc-v.sh && "
			    "printf '$(info PLANTED-V)\\n' > x-v.mk && "
			    "printf 'Host *\\n  ProxyCommand ./pc-v.sh\\n' > ssh-v.conf && echo planted\n";
	char w[PATH_MAX], cmd[4 * PATH_MAX], line[256], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && printf '#include <stdio.h>\\nint Agent_OnLoad(void *v, char *o, void *r) { "
		 "(void)v; (void)o; (void)r; fputs(\"PLANTED-V\\\\n\", stderr); return 0; }\\n' > agent-v.c && "
		 "cc -shared -fPIC -o prebuilt-v.so agent-v.c && chmod a+r prebuilt-v.so && echo built",
		 at(w, "work"));
	host_line(cmd, line, sizeof(line));
	ROW(strstr(line, "built") != NULL, "cannot build the agent on the host: %s", line);
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		const char *env[] = {rel[i][0], NULL};
		char var[64];

		snprintf(var, sizeof(var), "%.*s holds", (int)strcspn(rel[i][0], "="), rel[i][0]);
		st = run_fsh("home", NULL, env, NULL, "work.yaml", plant, &out, &err);
		ROW(st == 125 && !test_has(out, "planted") && test_has(err, var) && test_has(err, rel[i][1]) &&
			    test_has(err, "not started"),
		    "%s: status %d, not refused by name: %s", rel[i][0], st, err ? err : "");
		if (rel[i][2] != NULL) {
			/* The host's program in the project, the variable as the
			 * user's. */
			snprintf(cmd, sizeof(cmd), "cd '%s' && env '%s' %s 2>&1 | grep PLANTED-V", w, rel[i][0],
				 rel[i][2]);
			host_line(cmd, line, sizeof(line));
			ROW(strstr(line, "PLANTED-V") == NULL, "%s: the host's `%s` in the project ran the session's plant",
			    rel[i][0], rel[i][2]);
		}
		free(out);
		free(err);
		out = err = NULL;
		snprintf(cmd, sizeof(cmd), "cd '%s' && rm -rf 'lib..' '~' sub-v br-v.sh pc-v.sh x-v.mk ssh-v.conf", w);
		(void)host_sh(cmd);
	}
	drop("work/prebuilt-v.so");
	drop("work/agent-v.c");
	/* Absolute in the tree: read-only, missing or not. */
	{
		static const char *const abs[][2] = {
			{"RUSTC_WRAPPER=@W@/wrap-v", "wrap-v"},
			{"GIT_SSH_COMMAND=ssh -F @W@/ssh-v.conf", "ssh-v.conf"},
			{"CMAKE_TOOLCHAIN_FILE=@W@/tc-v.cmake", "tc-v.cmake"},
			{"CORECLR_PROFILER_PATH_64=@W@/prof-v.so", "prof-v.so"},
			{"BROWSER=firefox:@W@/br-v.sh %s", "br-v.sh"},
			{"GTK_MODULES=@W@/gm-v.so", "gm-v.so"},
			{"PROMPT_COMMAND=history -a; @W@/pc-v.sh", "pc-v.sh"},
			{"PS1=$(@W@/ps-v.sh) \\w$ ", "ps-v.sh"},
			{"JDK_JAVA_OPTIONS=-XX:OnOutOfMemoryError=@W@/oom-v.sh", "oom-v.sh"},
			{"MAKEFLAGS=--eval=include\\ @W@/inc-v.mk", "inc-v.mk"},
			{"PERL5DB=BEGIN { require '@W@/db-v.pl' }", "db-v.pl"},
			{"VK_ICD_FILENAMES=/usr/share/none.json::@W@/icd-v.json", "icd-v.json"},
			{"GST_PLUGIN_PATH=@W@/gst-v", "gst-v/libx.so"},
		};
		char e[sizeof(abs) / sizeof(abs[0])][2 * PATH_MAX], script[4096];
		const char *env[sizeof(abs) / sizeof(abs[0]) + 1];
		size_t n = 0;

		script[0] = '\0';
		at(w, "work");
		ROW(mkdirs("work/gst-v") == 0, "mkdir work/gst-v");
		for (size_t i = 0; i < sizeof(abs) / sizeof(abs[0]); i++) {
			const char *tpl = abs[i][0], *sub = strstr(tpl, "@W@");

			snprintf(e[i], sizeof(e[i]), "%.*s%s%s", (int)(sub - tpl), tpl, w, sub + 3);
			env[i] = e[i];
			n = strlen(script);
			snprintf(script + n, sizeof(script) - n, "printf x > %s 2>/dev/null; echo w%zu=$?\n", abs[i][1],
				 i);
		}
		env[sizeof(abs) / sizeof(abs[0])] = NULL;
		n = strlen(script);
		snprintf(script + n, sizeof(script) - n, "printf x > ok-v.txt; echo ok=$?\n");
		st = run_fsh("home", NULL, env, NULL, "work.yaml", script, &out, &err);
		ROW(st == 0 && test_has(out, "ok=0"), "absolute code variables: status %d, %s", st, err ? err : "");
		for (size_t i = 0; i < sizeof(abs) / sizeof(abs[0]); i++) {
			char want[32];

			snprintf(want, sizeof(want), "w%zu=0", i);
			ROW(!test_has(out, want), "%s: %s in the tree was writable: %s", e[i], abs[i][1], out ? out : "");
			snprintf(cmd, sizeof(cmd), "work/%s", abs[i][1]);
			drop(cmd);
		}
		if (st != 0)
			show(st, out, err);
		free(out);
		free(err);
		out = err = NULL;
		drop("work/ok-v.txt");
		snprintf(cmd, sizeof(cmd), "%s/gst-v", w);
		test_rmtree(cmd);
	}
	/* What real shells, CI runners, IDE terminals, version managers
	 * hold: started. */
	{
		const char *env[] = {"PROMPT_COMMAND=__vte_prompt_command; _direnv_hook;history -a",
				     "PS1=${debian_chroot:+($debian_chroot)}\\u@\\h:\\w$(__git_ps1 \" (%s)\")\\$ ",
				     "PS4=+ ${BASH_SOURCE}:${LINENO}: ",
				     "BROWSER=/usr/bin/xdg-open:firefox",
				     "RUSTC_WRAPPER=sccache",
				     "MAKEFLAGS= -j4 --jobserver-auth=fifo:/tmp/GMfifo1",
				     "GTK_MODULES=gail:atk-bridge:canberra-gtk-module",
				     "JAVA_TOOL_OPTIONS=-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=*:5005 "
				     "-Dfile.encoding=UTF-8",
				     "GIT_SSH=/usr/bin/ssh",
				     "EDITOR=code --wait",
				     "GIT_EDITOR=vim -c 'set ft=gitcommit'",
				     "QT_PLUGIN_PATH=",
				     "GST_PLUGIN_PATH=/usr/lib/x86_64-linux-gnu/gstreamer-1.0::",
				     "XDG_DATA_DIRS=/usr/local/share:/usr/share:/var/lib/snapd/desktop",
				     "TCLLIBPATH=/usr/share/tcltk /usr/lib/tcltk",
				     "GEM_HOME=/opt/gems",
				     "PYTHONHOME=/usr",
				     "CONDA_PREFIX=/opt/conda",
				     "NVM_DIR=/opt/nvm",
				     "PYENV_ROOT=/opt/pyenv",
				     "SDKMAN_DIR=/opt/sdkman",
				     "RUSTUP_HOME=/opt/rustup",
				     "CARGO_HOME=/opt/cargo",
				     "DIRENV_DIR=-/opt/proj",
				     "GITHUB_WORKSPACE=/opt/proj",
				     "CI_PROJECT_DIR=/opt/proj",
				     "TERM_PROGRAM=vscode",
				     "VSCODE_GIT_ASKPASS_NODE=/opt/code/code",
				     "GIT_ASKPASS=/opt/code/askpass.sh",
				     "SSH_ASKPASS_REQUIRE=prefer",
				     "PERL5DB=BEGIN { require \"perl5db.pl\" }",
				     NULL};

		everyday_starts(env, "everyday values");
	}
	/* The same with the review's (review36b) words read past: a shell's
	 * -c string, env's assignments, ssh's options with a "~/" key. */
	{
		const char *env[] = {"MANPAGER=sh -c 'col -bx | bat -l man -p'", "GIT_PAGER=env LESS=FRX less",
				     "SUDO_EDITOR=nvim",
				     "GIT_SSH_COMMAND=ssh -i ~/.ssh/deploy -o StrictHostKeyChecking=no -o "
				     "UserKnownHostsFile=/dev/null",
				     "PROMPT_COMMAND=starship_precmd; __bp_precmd_invoke_cmd", NULL};

		everyday_starts(env, "everyday values (2)");
	}
}

/*
 * The rows of a variables test, each {VAR=VALUE, what the refusal says,
 * the file it names, a host command or NULL}: `run` with VAR set in the
 * working directory refuses (125, both named, "not started", the
 * session's plant script never ran). With a host command, the command
 * is run with VAR set in the working directory: host_plants, after the
 * host made the plant itself, and it must print marker (the test's
 * premise: that value does run the plant); else, after the refusal
 * alone, it must not (nothing of the session's is there to run).
 * cleanup removes the plant's files (a shell list of names).
 */
static void refused_rows(const char *const (*rel)[4], size_t n, const char *plant, const char *marker,
			 bool host_plants, const char *cleanup)
{
	char w[PATH_MAX], cmd[4 * PATH_MAX], line[256], *out = NULL, *err = NULL;
	int st;

	at(w, "work");
	for (size_t i = 0; i < n; i++) {
		const char *env[] = {rel[i][0], NULL};

		st = run_fsh("home", NULL, env, NULL, "work.yaml", plant, &out, &err);
		ROW(st == 125 && !test_has(out, "planted") && test_has(err, rel[i][1]) && test_has(err, rel[i][2]) &&
			    test_has(err, "not started"),
		    "%s: status %d, not refused by name: %s", rel[i][0], st, err ? err : "");
		if (rel[i][3] != NULL) {
			if (host_plants) {
				/* the plant made by the host, as the session would */
				snprintf(cmd, sizeof(cmd), "cd '%s' && { %s} >/dev/null", w, plant);
				(void)host_sh(cmd);
			}
			snprintf(cmd, sizeof(cmd), "cd '%s' && env '%s' %s 2>&1 | grep %s", w, rel[i][0], rel[i][3],
				 marker);
			host_line(cmd, line, sizeof(line));
			if (host_plants)
				ROW(strstr(line, marker) != NULL,
				    "%s: the host's `%s` did not run the plant (test premise)", rel[i][0], rel[i][3]);
			else
				ROW(strstr(line, marker) == NULL,
				    "%s: the host's `%s` in the project ran the session's plant", rel[i][0], rel[i][3]);
		}
		free(out);
		free(err);
		out = err = NULL;
		snprintf(cmd, sizeof(cmd), "cd '%s' && rm -rf %s", w, cleanup);
		(void)host_sh(cmd);
	}
}

/*
 * Round 37 (fix37v): the build tools' variables (CC=./cc, as make runs
 * it; CFLAGS=-B dir, gcc's prefix of as and cc1), the program behind a precommand's options (env -S's words,
 * script's and flock's -c), python's -m module (run from the working
 * directory first) and a bare module name in NODE_OPTIONS: refused,
 * named, with the host's program shown to run the plant otherwise; an
 * absolute CC in the tree read-only; and what developers set (CC=gcc,
 * CC="ccache gcc", env -i PATH=/usr/bin, sudo -u node, env -C DIR,
 * flock FILE, python3 -P -m) started, the tree writable.
 */
static void test_code_vars_r37(void)
{
	static const char *const rel[][4] = {
		{"CC=./cc-v", "CC holds", "\"./cc-v\"", "make -s -f mk-v"},
		{"CC=ccache ./cc-v", "CC holds", "\"./cc-v\"", NULL},
		{"CXX=tools-v/c++ -std=c++17", "CXX holds", "\"tools-v/c++\"", NULL},
		{"CMAKE_C_COMPILER_LAUNCHER=./cc-v", "CMAKE_C_COMPILER_LAUNCHER holds", "\"./cc-v\"", NULL},
		{"EDITOR=env -S\"sh cc-v\"", "EDITOR holds", "\"cc-v\"", "sh -c 'eval \"$EDITOR f\"'"},
		{"EDITOR=script -qc \"sh cc-v\" /dev/null", "EDITOR holds", "\"cc-v\"", NULL},
		{"GIT_EDITOR=flock /tmp/fix37v-lock-v -c \"sh cc-v\"", "GIT_EDITOR holds", "\"cc-v\"", NULL},
		{"EDITOR=python3 -m myed_v", "EDITOR runs python with the module myed_v", "-P or -I",
		 "sh -c '$EDITOR f'"},
		{"PAGER=python3 -c \"import myed_v\"", "PAGER runs python with the module myed_v", "-P or -I",
		 "sh -c 'eval \"$PAGER\"'"},
		{"NODE_OPTIONS=-r tsv-v", "NODE_OPTIONS loads the module \"tsv-v\"", "require.resolve('tsv-v')",
		 "node -e 0"},
		/* an interpreter's option argument is not its script */
		{"EDITOR=node -r /dev/null ./ed-v.js", "EDITOR holds", "\"./ed-v.js\"", "sh -c '$EDITOR f'"},
		/* the compiler's flags: gcc takes as, cc1, ld from -B's prefix */
		{"CFLAGS=-O2 -B tools-v", "CFLAGS holds", "\"tools-v\"", "sh -c 'cc $CFLAGS -c m-v.c -o /dev/null'"},
		{"LDFLAGS=-fuse-ld=./cc-v", "LDFLAGS holds", "\"./cc-v\"", NULL},
		{"RUSTFLAGS=-C linker=./cc-v", "RUSTFLAGS holds", "\"./cc-v\"", NULL},
	};
	const char *plant = "printf '#!/bin/sh\\necho PLANTED-V >&2\\n' > cc-v && chmod +x cc-v && "
			    "printf 'all:\\n\\t$(CC) x\\n' > mk-v && mkdir -p node_modules/tsv-v && "
			    "echo 'console.error(\"PLANTED-V\")' > node_modules/tsv-v/index.js && "
			    "echo 'import sys; print(\"PLANTED-V\", file=sys.stderr)' > myed_v.py && mkdir -p tools-v && "
			    "cp cc-v tools-v/as && echo 'int main(void) { return 0; }' > m-v.c && "
			    "echo 'console.error(\"PLANTED-V\")' > ed-v.js && echo planted\n";
	char w[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), plant, "PLANTED-V", false,
		     "cc-v mk-v node_modules myed_v.py tools-v m-v.c ed-v.js");
	/* Absolute in the tree: read-only; an option's argument is not a
	 * program: the tree env -C names stays writable. */
	{
		static const char *const tpl[] = {"CC=@W@/cc-abs-v", "CXX=ccache @W@/cxx-abs-v -O2",
						  "GIT_EDITOR=env -C @W@ vim", "PAGER=flock @W@/lock-v less",
						  "VISUAL=xargs -a @W@/list-v vim"};
		char e[sizeof(tpl) / sizeof(tpl[0])][2 * PATH_MAX];
		const char *env[sizeof(tpl) / sizeof(tpl[0]) + 1];

		for (size_t i = 0; i < sizeof(tpl) / sizeof(tpl[0]); i++) {
			const char *sub = strstr(tpl[i], "@W@");

			snprintf(e[i], sizeof(e[i]), "%.*s%s%s", (int)(sub - tpl[i]), tpl[i], w, sub + 3);
			env[i] = e[i];
		}
		env[sizeof(tpl) / sizeof(tpl[0])] = NULL;
		st = run_fsh("home", NULL, env, NULL, "work.yaml",
			     "printf x > cc-abs-v 2>/dev/null; echo a=$?; printf x > cxx-abs-v 2>/dev/null; echo b=$?; "
			     "printf x > lock-v; echo c=$?; printf x > list-v; echo d=$?; printf x > ok-v.txt; echo ok=$?\n",
			     &out, &err);
		ROW(st == 0 && test_has(out, "ok=0") && test_has(out, "c=0") && test_has(out, "d=0"),
		    "env -C, flock, xargs -a naming the tree: status %d, %s %s", st, out ? out : "", err ? err : "");
		ROW(!test_has(out, "a=0") && !test_has(out, "b=0"), "CC, CXX in the tree were writable: %s",
		    out ? out : "");
		free(out);
		free(err);
		out = err = NULL;
		drop("work/cc-abs-v");
		drop("work/cxx-abs-v");
		drop("work/lock-v");
		drop("work/list-v");
		drop("work/ok-v.txt");
	}
	/* What developers set: started. */
	{
		const char *env[] = {"CC=gcc", "CXX=ccache g++", "CC_FOR_BUILD=cc", "LD=ld.lld", "AR=gcc-ar",
				     "PKG_CONFIG=pkg-config --static", "CMAKE_CXX_COMPILER_LAUNCHER=ccache",
				     "EDITOR=env -i PATH=/usr/bin vim", "VISUAL=sudo -u node vim",
				     "SUDO_EDITOR=timeout -s KILL 60 nano", "MANPAGER=nice -n 5 less -R",
				     "GIT_PAGER=python3 -P -m pager_v", "PAGER=python3 -I -c \"import pager_v\"", "NODE_OPTIONS=--max-old-space-size=4096",
				     "CFLAGS=-O2 -g -Iinclude -I../lib -isystem /usr/include -fPIC",
				     "LDFLAGS=-L../lib -Wl,-rpath,$ORIGIN -fuse-ld=lld -Wl,-Bsymbolic-functions",
				     "RUSTFLAGS=-C target-cpu=native -C linker=clang", NULL};

		everyday_starts(env, "everyday values");
	}
}
/*
 * Round 37's review (review37c): the build flags' other spellings and
 * places: a build tool's own words (CC="gcc -B./t"), gcc's @file of
 * options, --prefix (-B's long form), "-Bstatic" (gcc's prefix
 * "static", not the linker's), the linker's plugin through -Wl, and
 * -Xlinker, rustc's --codegen and -C link-arg= (cc's words): refused,
 * named, with the host's gcc shown to run the plant otherwise; and the
 * flags dpkg-buildflags and cargo users set: started.
 */
static void test_build_flags_r37c(void)
{
	static const char *const rel[][4] = {
		{"CC=gcc -B./tools-c", "CC holds", "\"./tools-c\"", "sh -c '$CC -c m-c.c -o /dev/null'"},
		{"CXX=ccache g++ -specs=./cc-c", "CXX holds", "\"./cc-c\"", NULL},
		{"CFLAGS=-O2 @opts-c", "CFLAGS holds", "\"opts-c\"", "sh -c 'cc $CFLAGS -c m-c.c -o /dev/null'"},
		{"CFLAGS=--prefix=./tools-c", "CFLAGS holds", "\"./tools-c\"",
		 "sh -c 'cc $CFLAGS -c m-c.c -o /dev/null'"},
		{"LDFLAGS=-Bstatic", "gcc reads as the prefix", "-Wl,-Bstatic", "sh -c 'cc $LDFLAGS -c m-c.c -o "
			"/dev/null'"},
		{"LDFLAGS=-Wl,-plugin,./cc-c", "LDFLAGS holds", "\"./cc-c\"", NULL},
		{"LDFLAGS=-Xlinker --plugin=./cc-c", "LDFLAGS holds", "\"./cc-c\"", NULL},
		{"RUSTFLAGS=--codegen linker=./cc-c", "RUSTFLAGS holds", "\"./cc-c\"", NULL},
		{"RUSTFLAGS=-C link-arg=-B./tools-c", "RUSTFLAGS holds", "\"./tools-c\"", NULL},
		/* gcc's -B in the environment */
		{"COMPILER_PATH=./tools-c", "COMPILER_PATH holds", "\"./tools-c\"", "sh -c 'cc -c m-c.c -o /dev/null'"},
		{"COMPILER_PATH=/usr/bin:", "COMPILER_PATH holds", "an empty entry", NULL},
		{"GCC_EXEC_PREFIX=tools-c/", "GCC_EXEC_PREFIX holds", "\"tools-c/\"", NULL},
		/* ccache's programs, cargo's flags by their config name */
		{"CCACHE_PREFIX=./cc-c", "CCACHE_PREFIX holds", "\"./cc-c\"", NULL},
		{"CARGO_BUILD_RUSTFLAGS=-C linker=./cc-c", "CARGO_BUILD_RUSTFLAGS holds", "\"./cc-c\"", NULL},
	};
	const char *plant = "printf '#!/bin/sh\\necho PLANTED-C >&2\\nexit 1\\n' > cc-c && chmod +x cc-c && "
			    "mkdir -p tools-c static && cp cc-c tools-c/as && cp cc-c static/as && "
			    "echo -B./tools-c > opts-c && echo 'int main(void) { return 0; }' > m-c.c && echo "
				"planted\n";
	char w[PATH_MAX];

	SKIP_IF_NEEDED();
	at(w, "work");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), plant, "PLANTED-C", true,
		     "cc-c tools-c static opts-c m-c.c");
	/* What builds set: started. */
	{
		const char *env[] = {"CC=ccache gcc -std=gnu11", "CXX=clang++ -stdlib=libc++ -fuse-ld=lld",
				     "CFLAGS=-g -O2 -ffile-prefix-map=/build/p=. -fstack-protector-strong -Wformat "
				     "-Werror=format-security",
				     "CPPFLAGS=-Wdate-time -D_FORTIFY_SOURCE=2",
				     "LDFLAGS=-Wl,-Bsymbolic-functions -flto=auto -ffat-lto-objects -Wl,-z,relro "
					"-Wl,-z,now",
				     "RUSTFLAGS=-C target-cpu=native -C link-arg=-fuse-ld=mold "
					"-Clink-arg=-Wl,--as-needed",
				     "MAKEFLAGS=-j8", "COMPILER_PATH=/usr/lib/gcc/x86_64-linux-gnu",
				     "CCACHE_PREFIX=distcc", NULL};

		everyday_starts(env, "everyday build flags");
	}
}

/*
 * Round 37's review (review37c): the other words that run the next one
 * (firejail, strace, valgrind, unshare, setarch, linux64, su, the
 * dynamic linker, ... read as precommands: their program was not read)
 * and the shell's builtins that read a file or a text as commands (".
 * ./x", "source x" from the working directory, trap's command line,
 * "function f { ./x; }"): refused, named, with the host's shell shown
 * to run the plant otherwise; a prompt's title escape, firejail's and
 * strace's own options started.
 */
static void test_precmds_r37c(void)
{
	static const char *const rel[][4] = {
		{"EDITOR=setarch x86_64 ./ed-c", "EDITOR holds", "\"./ed-c\"", "sh -c '$EDITOR f'"},
		{"VISUAL=linux64 ./ed-c", "VISUAL holds", "\"./ed-c\"", "sh -c '$VISUAL f'"},
		{"PROMPT_COMMAND=source ed-c", "PROMPT_COMMAND holds", "\"ed-c\"", "bash -c 'eval "
			"\"$PROMPT_COMMAND\"'"},
		{"PROMPT_COMMAND=. ./ed-c", "PROMPT_COMMAND holds", "\"./ed-c\"", "bash -c 'eval \"$PROMPT_COMMAND\"'"},
		{"PROMPT_COMMAND=trap ./ed-c EXIT", "PROMPT_COMMAND holds", "\"./ed-c\"",
		 "bash -c 'eval \"$PROMPT_COMMAND\"'"},
		{"PROMPT_COMMAND=function f { ./ed-c; }; f", "PROMPT_COMMAND holds", "\"./ed-c\"",
		 "bash -c 'eval \"$PROMPT_COMMAND\"'"},
		{"EDITOR=firejail --noprofile ./ed-c", "EDITOR holds", "\"./ed-c\"", NULL},
		{"EDITOR=strace -f -o /dev/null ./ed-c", "EDITOR holds", "\"./ed-c\"", NULL},
		{"EDITOR=valgrind --tool=none ./ed-c", "EDITOR holds", "\"./ed-c\"", NULL},
		{"GIT_EDITOR=su - root -c ./ed-c", "GIT_EDITOR holds", "\"./ed-c\"", NULL},
		{"EDITOR=/lib64/ld-linux-x86-64.so.2 ./ed-c", "EDITOR holds", "\"./ed-c\"", NULL},
	};
	const char *plant = "printf '#!/bin/sh\\necho PLANTED-P\\n' > ed-c && chmod +x ed-c && echo planted\n";
	char w[PATH_MAX];

	SKIP_IF_NEEDED();
	at(w, "work");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), plant, "PLANTED-P", true, "ed-c");
	/* What developers set: started. */
	{
		const char *env[] = {"PROMPT_COMMAND=history -a; echo -ne \"\\033]0;${USER}@${HOSTNAME}: "
				     "${PWD/$HOME/~}\\007\"",
				     "EDITOR=firejail --noprofile --net=none vim", "VISUAL=code --wait",
				     "GIT_EDITOR=vim -c 'set tw=72'", "PAGER=less -R", "SUDO_EDITOR=emacsclient -t",
				     "MANPAGER=strace -o /dev/null less", NULL};

		everyday_starts(env, "everyday values");
	}
}

/*
 * Round 37's review (review37c): an interpreter's inline code naming a
 * file it reads or runs (python -c 'exec(open("e.py").read())', perl
 * -e 'do "./x"', node -e 'require("./x")', os.system('./x') even with
 * -I): refused, named, with the host's shell shown to run the plant
 * otherwise; and perl -pe's code is no script (PAGER="perl -pe
 * 's/.../g'" refused the start as a relative file), a python -c that
 * names no file, ruby -ne: started.
 */
static void test_inline_code_r37c(void)
{
	static const char *const rel[][4] = {
		{"PAGER=python3 -c 'exec(open(\"ed_c.py\").read())'", "PAGER holds", "\"ed_c.py\"",
		 "sh -c 'eval \"$PAGER\" </dev/null'"},
		{"EDITOR=perl -e 'do \"./ed-c.pl\"'", "EDITOR holds", "\"./ed-c.pl\"", "sh -c 'eval \"$EDITOR\"'"},
		{"EDITOR=node -e 'require(\"./ed-c.js\")'", "EDITOR holds", "\"./ed-c.js\"",
		 "sh -c 'eval \"$EDITOR\"'"},
		{"EDITOR=python3 -I -c \"import os; os.system('./ed-c')\"", "EDITOR holds", "\"./ed-c\"",
		 "sh -c 'eval \"$EDITOR\"'"},
	};
	const char *plant = "printf '#!/bin/sh\\necho PLANTED-I\\n' > ed-c && chmod +x ed-c && "
			    "echo 'print(\"PLANTED-I\")' > ed_c.py && echo 'print \"PLANTED-I\\n\"; 1;' > ed-c.pl && "
			    "echo 'console.log(\"PLANTED-I\")' > ed-c.js && echo planted\n";
	char w[PATH_MAX], cmd[4 * PATH_MAX], line[256], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		const char *env[] = {rel[i][0], NULL};

		st = run_fsh("home", NULL, env, NULL, "work.yaml", plant, &out, &err);
		ROW(st == 125 && !test_has(out, "planted") && test_has(err, rel[i][1]) && test_has(err, rel[i][2]) &&
			    test_has(err, "not started"),
		    "%s: status %d, not refused by name: %s", rel[i][0], st, err ? err : "");
		snprintf(cmd, sizeof(cmd), "cd '%s' && { %s} >/dev/null", w, plant);
		(void)host_sh(cmd);
		{
			/* the variable set in this process's environment: its
			 * value holds both quotes */
			char name[32];
			const char *eq = strchr(rel[i][0], '=');

			snprintf(name, sizeof(name), "%.*s", (int)(eq - rel[i][0]), rel[i][0]);
			CU_ASSERT_FATAL(setenv(name, eq + 1, 1) == 0);
			snprintf(cmd, sizeof(cmd), "cd '%s' && %s 2>&1 | grep PLANTED-I", w, rel[i][3]);
			host_line(cmd, line, sizeof(line));
			(void)unsetenv(name);
			ROW(strstr(line, "PLANTED-I") != NULL,
			    "%s: the host's `%s` did not run the plant (test premise)", rel[i][0], rel[i][3]);
		}
		free(out);
		free(err);
		out = err = NULL;
		snprintf(cmd, sizeof(cmd), "cd '%s' && rm -f ed-c ed_c.py ed-c.pl ed-c.js", w);
		(void)host_sh(cmd);
	}
	/* What developers set: started. */
	{
		const char *env[] = {"PAGER=perl -pe 's/\\e\\[?.*?[\\@-~]//g'",
				     "GIT_PAGER=python3 -c 'import sys; sys.stdout.write(sys.stdin.read())'",
				     "EDITOR=ruby -ne 'puts $_'", "VISUAL=node -pe 'process.version'", NULL};

		everyday_starts(env, "everyday inline code");
	}
}

/*
 * Round 38 (fix38v): the variables known by a pattern (cargo's
 * CARGO_TARGET_<triple>_LINKER and _RUNNER, the cc crate's
 * CC_<target>, cmake's CMAKE_<LANG>_COMPILER_LAUNCHER), node's REPL
 * module, a precommand's option that runs or loads code (su -s, fakeroot
 * -l, ld.so --library-path), perl -c (its BEGIN blocks run), php -c,
 * clang's --gcc-toolchain: refused, named; absolute in the tree (and R's
 * and PHP's start-up files) read-only; what developers set started.
 */
/*
 * The review of round 38: git's config entries set in the environment
 * (GIT_CONFIG_COUNT/KEY_<n>/VALUE_<n>, GIT_CONFIG_PARAMETERS, which
 * `git -c` passes on) that run a program with a relative path
 * (core.fsmonitor=./x, core.sshCommand, an alias's or a credential
 * helper's !./x, a diff driver) started: the host's git ran what the session
 * left in its working directory, as GIT_SSH_COMMAND=./x would (refused).
 * Now refused, the entry named; usual values start.
 */
static void test_git_env_config_r38b(void)
{
	static const char *const rel[][4] = {
		{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=./ed-r", "core.fsmonitor"},
		{"GIT_CONFIG_PARAMETERS='core.sshCommand'='ssh -F ./ed-r'", NULL, NULL, "core.sshCommand"},
		{"GIT_CONFIG_PARAMETERS='user.name'='It'\\''s me' 'alias.x'='!./ed-r'", NULL, NULL, "alias.x"},
		{"GIT_CONFIG_PARAMETERS='credential.https://h.example.helper=!./ed-r'", NULL, NULL,
		 "credential.https://h.example.helper"},
		{"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_1=diff.x.textconv", "GIT_CONFIG_VALUE_1=ed-r/conv",
		 "diff.x.textconv"},
	};
	const char *usual[] = {"GIT_CONFIG_PARAMETERS='core.fsmonitor'='true' 'user.name'='It'\\''s me' "
			       "'credential.helper'='!gh auth git-credential' 'alias.lg'='log --oneline' "
			       "'core.editor'='code --wait' 'filter.lfs.process'='git-lfs filter-process'",
			       "GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_VALUE_0=less -R",
			       "GIT_CONFIG_KEY_1=credential.helper", "GIT_CONFIG_VALUE_1=cache --timeout=3600", NULL};
	const char *plant = "printf '#!/bin/sh\\necho PLANTED-R\\n' > ed-r && chmod +x ed-r && echo planted\n";
	char w[PATH_MAX], cmd[4 * PATH_MAX], line[256], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		const char *env[] = {rel[i][0], rel[i][1], rel[i][2], NULL};

		st = run_fsh("home", NULL, env, NULL, "work.yaml", plant, &out, &err);
		ROW(st == 125 && !test_has(out, "planted") && test_has(err, rel[i][3]) && test_has(err, "ed-r") &&
			    test_has(err, "not started"),
		    "%s: status %d, not refused by name: %s", rel[i][0], st, err ? err : "");
		free(out);
		free(err);
		out = err = NULL;
	}
	/* the premise: the host's git runs an alias's ./ed-r from where it runs */
	snprintf(cmd, sizeof(cmd), "cd '%s' && { %s} >/dev/null && env GIT_CONFIG_PARAMETERS=\"'alias.x'='!./ed-r'\" "
		 "git x 2>&1 | grep PLANTED-R; rm -f ed-r", w, plant);
	host_line(cmd, line, sizeof(line));
	ROW(strstr(line, "PLANTED-R") != NULL, "the host's git did not run the alias's plant (test premise)");
	st = run_fsh("home", NULL, usual, NULL, "work.yaml", "echo started\n", &out, &err);
	ROW(st == 0 && test_has(out, "started"), "usual git config entries in the environment refused: %s",
	    err ? err : "");
	free(out);
	free(err);
}

/*
 * Round 39 (fix39v): what the host's tools read that round 38 did not:
 * a module imported by its name (PYTHONBREAKPOINT=mod.f: python imports
 * it at breakpoint() from the working directory for -c), perl's
 * PERL_USE_UNSAFE_INC=1 ("." on @INC), the launchers' JVM options
 * (MAVEN_OPTS, GRADLE_OPTS), cargo's aliases from the environment
 * (--config build.rustc-wrapper="./x": `cargo b` ran it), npm's
 * settings naming a program (npm_config_script_shell: every `npm run`),
 * pip's find-links, find -exec, chroot's root: refused, named, the
 * host's program shown to run the plant otherwise. The git config
 * entries' refusal names the variable the user set, not the stand-in.
 * What developers set: started.
 */
static void test_code_vars_r39(void)
{
	static const char *const rel[][4] = {
		{"PERL_USE_UNSAFE_INC=1", "PERL_USE_UNSAFE_INC=1 puts", "env -u PERL_USE_UNSAFE_INC",
		 "perl -e 'require Evy'"},
		{"CARGO_ALIAS_B=build --config build.rustc-wrapper=\"./ed-y\"", "CARGO_ALIAS_B holds", "\"./ed-y\"",
		 "cargo b -q --offline --manifest-path cy-y/Cargo.toml"},
		{"npm_config_script_shell=./ed-y", "npm_config_script_shell holds", "\"./ed-y\"",
		 "npm run -s x --prefix cy-y"},
		{"EDITOR=find . -maxdepth 0 -exec ./ed-y {} \\;", "EDITOR holds", "\"./ed-y\"",
		 "sh -c 'eval \"$EDITOR\"'"},
		{"MAVEN_OPTS=-Xmx1g -javaagent:./ag-y.jar", "MAVEN_OPTS holds", "\"./ag-y.jar\"", NULL},
		{"GRADLE_OPTS=-Dgradle.user.home=gh-y", "GRADLE_OPTS holds", "\"gh-y\"", NULL},
		{"PIP_FIND_LINKS=https://example.invalid/w ./wh-y", "PIP_FIND_LINKS holds", "\"./wh-y\"", NULL},
		{"EDITOR=chroot ./r-y /bin/sh", "EDITOR holds", "\"./r-y\"", NULL},
		{"BUNDLE_LOCAL__RACK=vendor-y/rack", "BUNDLE_LOCAL__RACK holds", "\"vendor-y/rack\"", NULL},
		/* review of round 39: pip reads PIP_* whatever the rest's case,
		 * '-' or '_'; JAVACMD, the java mvn, gradle and ant run;
		 * maven 3.9's MAVEN_ARGS */
		{"PIP_find_links=./wh-y", "PIP_find_links holds", "\"./wh-y\"", NULL},
		{"PIP_Find-Links=./wh-y", "PIP_Find-Links holds", "\"./wh-y\"", NULL},
		{"JAVACMD=./ed-y", "JAVACMD holds", "\"./ed-y\"", NULL},
		{"MAVEN_ARGS=-B -s ci-y/settings.xml", "MAVEN_ARGS holds", "\"ci-y/settings.xml\"", NULL},
	};
	const char *plant = "printf '#!/bin/sh\\necho PLANTED-Y\\necho PLANTED-Y >&2\\n' > ed-y && chmod +x ed-y && "
			    "printf 'import sys\\nprint(\"PLANTED-Y\", file=sys.stderr)\\ndef f(*a): pass\\n' > evm_y.py && "
			    "echo 'print STDERR \"PLANTED-Y\\n\"; 1;' > Evy.pm && mkdir -p cy-y/src && "
			    "printf '[package]\\nname = \"cy\"\\nversion = \"0.1.0\"\\nedition = \"2021\"\\n' > "
			    "cy-y/Cargo.toml && echo 'fn main() {}' > cy-y/src/main.rs && cp ed-y cy-y/ed-y && "
			    "echo '{\"scripts\": {\"x\": \"true\"}}' > cy-y/package.json && echo planted\n";
	static const char *const git[][4] = {
		{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=./ed-y",
		 "GIT_CONFIG_VALUE_0 holds"},
		{"GIT_CONFIG_PARAMETERS='core.sshCommand'='ssh -F ./ed-y'", NULL, NULL, "GIT_CONFIG_PARAMETERS holds"},
	};
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), plant, "PLANTED-Y", true, "ed-y evm_y.py Evy.pm cy-y");
	for (size_t i = 0; i < sizeof(git) / sizeof(git[0]); i++) {
		const char *env[] = {git[i][0], git[i][1], git[i][2], NULL};

		st = run_fsh("home", NULL, env, NULL, "work.yaml", "echo planted\n", &out, &err);
		ROW(st == 125 && test_has(err, git[i][3]) && !test_has(err, "GIT_SSH_COMMAND holds") &&
			    test_has(err, "ed-y"),
		    "%s: status %d, the refusal does not name what the user set: %s", git[i][0], st, err ? err : "");
		free(out);
		free(err);
		out = err = NULL;
	}
	/* Review of round 39: PYTHONBREAKPOINT names a module (ipdb.set_trace,
	 * pudb.set_trace, IPython.embed: common values, refused by fix39v).
	 * Started; the module made at its name in the session at the top
	 * (a package; the file ./MOD.py of the working directory is
	 * read-only already) moves aside as a tool's,
	 * so the host's breakpoint() there does not import it. */
	{
		static const char *const bp[][3] = {
			{"PYTHONBREAKPOINT=evm_y.f", "evm_y/__init__.py", "work/evm_y.py"},
			{"PYTHONBREAKPOINT=evp_y.sub.f", "evp_y/__init__.py", "work/evp_y.py"},
		};
		char w[PATH_MAX], cmd[2 * PATH_MAX], line[256], q[PATH_MAX];

		at(w, "work");
		for (size_t i = 0; i < sizeof(bp) / sizeof(bp[0]); i++) {
			const char *env[] = {bp[i][0], NULL};

			st = run_fsh("home", NULL, env, NULL, "work.yaml",
				     "mkdir -p evm_y evp_y && printf 'import sys\\nprint(\"PLANTED-Y\", file=sys.stderr)\\n"
				     "def f(*a): pass\\n' > evm_y/__init__.py && cp evm_y/__init__.py evp_y/__init__.py && "
				     "{ cp evm_y/__init__.py evm_y.py; cp evm_y/__init__.py evp_y.py; } 2>/dev/null; echo planted\n",
				     &out, &err);
			snprintf(q, sizeof(q), "work/%s.passavant-quarantine", bp[i][1]);
			ROW(st == 0 && test_has(out, "planted"), "%s: status %d, not started: %s", bp[i][0], st,
			    err ? err : "");
			snprintf(cmd, sizeof(cmd), "work/%s", bp[i][1]);
			ROW(!exists(cmd) && exists(q), "%s: the session's %s was not moved aside: %s", bp[i][0], bp[i][1],
			    err ? err : "");
			snprintf(cmd, sizeof(cmd), "cd '%s' && env '%s' python3 -c 'breakpoint()' 2>&1 | grep PLANTED-Y",
				 w, bp[i][0]);
			host_line(cmd, line, sizeof(line));
			ROW(strstr(line, "PLANTED-Y") == NULL, "%s: the host's breakpoint() ran the session's module",
			    bp[i][0]);
			free(out);
			free(err);
			out = err = NULL;
			ROW(!exists(bp[i][2]), "%s: a module file at the working directory's top stayed: %s", bp[i][0],
			    bp[i][2]);
			snprintf(cmd, sizeof(cmd), "cd '%s' && rm -rf evm_y* evp_y*", w);
			(void)host_sh(cmd);
		}
	}
	/* What developers set: started. */
	{
		const char *env[] = {"PYTHONBREAKPOINT=0", "PERL_USE_UNSAFE_INC=0", "MAVEN_OPTS=-Xmx1g -XX:+UseG1GC",
				     "GRADLE_OPTS=-Dorg.gradle.daemon=false", "CARGO_ALIAS_B=build --release",
				     "npm_config_script_shell=/bin/bash", "npm_config_registry=https://example.invalid/",
				     "PIP_INDEX_URL=https://example.invalid/simple", "PIP_FIND_LINKS=file:///opt/wheels",
				     "EDITOR=find /usr -maxdepth 0 -exec true {} +", "VISUAL=gosu me vim",
				     "PYTHONBREAKPOINT=ipdb.set_trace", NULL};

		everyday_starts(env, "everyday values");
	}
}

static void test_code_vars_r38(void)
{
	static const char *const rel[][4] = {
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=./ed-r", "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER holds",
		 "\"./ed-r\"", NULL},
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=./ed-r --flag", "_RUNNER holds", "\"./ed-r\"", NULL},
		{"CC_x86_64_unknown_linux_gnu=ccache ./ed-r", "CC_x86_64_unknown_linux_gnu holds", "\"./ed-r\"", NULL},
		{"CMAKE_CUDA_COMPILER_LAUNCHER=./ed-r", "CMAKE_CUDA_COMPILER_LAUNCHER holds", "\"./ed-r\"", NULL},
		{"NODE_REPL_EXTERNAL_MODULE=ed-r.js", "NODE_REPL_EXTERNAL_MODULE holds", "\"ed-r.js\"", NULL},
		{"EDITOR=su -s ./ed-r root -c vim", "EDITOR holds", "\"./ed-r\"", NULL},
		{"EDITOR=fakeroot -l ./ed-r.so vim", "EDITOR holds", "\"./ed-r.so\"", NULL},
		{"EDITOR=/lib64/ld-linux-x86-64.so.2 --library-path lib-r /usr/bin/vim", "EDITOR holds", "\"lib-r\"",
		 NULL},
		{"EDITOR=perl -c ed-r.pl", "EDITOR holds", "\"ed-r.pl\"", "sh -c '$EDITOR'"},
		{"EDITOR=php -c ./ed-r.ini x.php", "EDITOR holds", "\"./ed-r.ini\"", NULL},
		{"CFLAGS=--gcc-toolchain=./t-r", "CFLAGS holds", "\"./t-r\"", NULL},
	};
	const char *plant = "printf '#!/bin/sh\\necho PLANTED-R\\n' > ed-r && chmod +x ed-r && "
			    "echo 'BEGIN { print \"PLANTED-R\\n\" }' > ed-r.pl && echo planted\n";
	char w[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	at(w, "work");
	refused_rows(rel, sizeof(rel) / sizeof(rel[0]), plant, "PLANTED-R", true, "ed-r ed-r.pl");
	/* Absolute in the tree: read-only, the rest of it writable. */
	{
		static const char *const tpl[] = {"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=@W@/ld-r",
						  "CC_x86_64_unknown_linux_gnu=@W@/cc-r", "EDITOR=su -s @W@/sh-r root",
						  "R_PROFILE_USER=@W@/rprof-r", "PHPRC=@W@/phprc-r"};
		char e[sizeof(tpl) / sizeof(tpl[0])][2 * PATH_MAX];
		const char *env[sizeof(tpl) / sizeof(tpl[0]) + 1];

		for (size_t i = 0; i < sizeof(tpl) / sizeof(tpl[0]); i++) {
			const char *sub = strstr(tpl[i], "@W@");

			snprintf(e[i], sizeof(e[i]), "%.*s%s%s", (int)(sub - tpl[i]), tpl[i], w, sub + 3);
			env[i] = e[i];
		}
		env[sizeof(tpl) / sizeof(tpl[0])] = NULL;
		st = run_fsh("home", NULL, env, NULL, "work.yaml",
			     "for f in ld-r cc-r sh-r rprof-r phprc-r; do printf x > $f 2>/dev/null && echo wrote-$f; "
			     "done; printf x > ok-r.txt; echo ok=$?\n",
			     &out, &err);
		ROW(st == 0 && test_has(out, "ok=0"), "the tree: status %d, %s %s", st, out ? out : "", err ? err : "");
		ROW(!test_has(out, "wrote-"), "a linker, a compiler, su's shell, R's profile, php.ini in the tree were "
			"writable: %s", out ? out : "");
		free(out);
		free(err);
		out = err = NULL;
		drop("work/ok-r.txt");
		drop("work/ld-r");
		drop("work/cc-r");
		drop("work/sh-r");
		drop("work/rprof-r");
		drop("work/phprc-r");
	}
	/* What developers set: started. */
	{
		const char *env[] = {"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=clang",
				     "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64 -L /usr/aarch64-linux-gnu",
				     "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS=-C link-arg=-fuse-ld=mold",
				     "CC_x86_64_unknown_linux_gnu=x86_64-linux-gnu-gcc", "CC_EMAIL=a/b",
				     "CARGO_REGISTRY_CREDENTIAL_PROVIDER=cargo:token", "CARGO_TARGET_DIR=target",
				     "EDITOR=su - me -c vim", "VISUAL=fakeroot vim", "CFLAGS=-isysroot /opt/sdk -O2",
				     "PAGER=perl -c -w", NULL};

		everyday_starts(env, "everyday values");
	}
}

/*
 * Round 37's review: precommands nested by a long value (EDITOR="env
 * -Senv -S... ./x", 120 KB: each level held a copy of the rest, 1.5 GB
 * and 8 s per reading, read twice at the start; "sudo sudo ... ./x"
 * recursed once a word): refused, naming EDITOR, in a few seconds.
 */
static void test_nested_precmds_r37c(void)
{
	static const char *const unit[] = {"env -S", "sudo "};
	static char val[2][130000];
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	for (size_t u = 0; u < sizeof(unit) / sizeof(unit[0]); u++) {
		size_t ul = strlen(unit[u]), n = strlen("EDITOR=");
		const char *env[] = {val[u], NULL};
		struct timespec a, b;
		long ms;

		memcpy(val[u], "EDITOR=", n);
		while (n + ul + 4 < sizeof(val[u])) {
			memcpy(val[u] + n, unit[u], ul);
			n += ul;
		}
		memcpy(val[u] + n, "./x", 4);
		(void)clock_gettime(CLOCK_MONOTONIC, &a);
		st = run_fsh("home", NULL, env, NULL, "work.yaml", "echo started\n", &out, &err);
		(void)clock_gettime(CLOCK_MONOTONIC, &b);
		ms = (long)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
		ROW(st == 125 && !test_has(out, "started") && test_has(err, "EDITOR holds") && ms < 5000,
		    "EDITOR=%s x %zu ./x: status %d in %ld ms: %.300s", unit[u], (n - 7) / ul, st, ms, err ? err : "");
		free(out);
		free(err);
		out = err = NULL;
	}
}

/* Round 32 of the attack, b12: a link in a PATH directory outside the
 * home (npm link with prefix /usr/local, sudo ln -s) into the project:
 * its target is read-only, as for ~/bin's; in /usr/local/bin too when
 * PATH does not name it (another user's shell does). */
static void test_path_links_outside_home(void)
{
	char path[PATH_MAX + 64], sys[PATH_MAX], tgt[PATH_MAX], lnk[PATH_MAX], usr[128], buf[256];
	char *out = NULL, *err = NULL;
	const char *script = "printf '#!/bin/sh\\necho PLANTED\\n' > cli-b12.sh 2>/dev/null; echo w=$?; "
			     "printf '#!/bin/sh\\necho PLANTED\\n' > cli-b12b.sh 2>/dev/null; echo wb=$?; "
			     "echo ok > ok-b12.txt; echo done\n";
	bool have_usr;
	int st;
	FILE *f;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("sysbin") == 0);
	CU_ASSERT_FATAL(mkfile(at(tgt, "work/cli-b12.sh"), "#!/bin/sh\necho v1\n") == 0);
	CU_ASSERT_FATAL(mkfile(at(tgt, "work/cli-b12b.sh"), "#!/bin/sh\necho v1\n") == 0);
	drop("sysbin/b12tool");
	CU_ASSERT_FATAL(symlink(at(tgt, "work/cli-b12.sh"), at(lnk, "sysbin/b12tool")) == 0);
	/* /usr/local/bin, not on the command's PATH: root only, one name. */
	snprintf(usr, sizeof(usr), "/usr/local/bin/pv-fsh-b12-%ld", (long)getpid());
	have_usr = geteuid() == 0 && symlink(at(tgt, "work/cli-b12b.sh"), usr) == 0;
	snprintf(path, sizeof(path), "%s:/usr/bin:/bin", at(sys, "sysbin"));
	st = run_fsh("home", path, NULL, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "done") && exists("work/ok-b12.txt"), "status %d, or the control write failed",
	    st);
	ROW(test_has(out, "w=") && !test_has(out, "w=0"), "the target of sysbin/b12tool (in the project) was writable");
	f = fopen(at(tgt, "work/cli-b12.sh"), "r");
	ROW(f != NULL && fgets(buf, sizeof(buf), f) != NULL && fgets(buf, sizeof(buf), f) != NULL &&
		strstr(buf, "v1") != NULL,
	    "work/cli-b12.sh changed on the host");
	if (f != NULL)
		fclose(f);
	if (have_usr) {
		ROW(test_has(out, "wb=") && !test_has(out, "wb=0"),
		    "the target of %s (in the project) was writable, /usr/local/bin not on PATH", usr);
		(void)unlink(usr);
	}
	if (st != 0)
		show(st, out, err);
	drop("sysbin/b12tool");
	drop("work/cli-b12.sh");
	drop("work/cli-b12b.sh");
	drop("work/ok-b12.txt");
	free(out);
	free(err);
	out = err = NULL;
	/* Another user (nobody): a PATH link to a target in a directory
	 * that user cannot search (root's 0700 tree) leads to nothing of
	 * theirs: started (the first version refused every such start);
	 * the link into their project still makes its target read-only. */
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0)
		return;
	{
		char h[PATH_MAX], sb[PATH_MAX], script2[3 * PATH_MAX + 512];
		char *argv[] = {"sh", "-c", script2, NULL};
		int rc;

		CU_ASSERT_FATAL(mkdirs("home34h/proj") == 0 && mkdirs("sysbin34h") == 0 && mkdirs("priv34h") == 0 &&
				mkfile(at(tgt, "priv34h/tool"), "#!/bin/sh\n") == 0 &&
				mkfile(at(tgt, "home34h/proj/cli.sh"), "#!/bin/sh\necho v1\n") == 0);
		drop("sysbin34h/hidden");
		drop("sysbin34h/cli");
		CU_ASSERT_FATAL(symlink(at(tgt, "priv34h/tool"), at(lnk, "sysbin34h/hidden")) == 0 &&
				symlink(at(tgt, "home34h/proj/cli.sh"), at(lnk, "sysbin34h/cli")) == 0);
		(void)at(h, "home34h");
		(void)at(sb, "sysbin34h");
		CU_ASSERT_FATAL(snprintf(script2, sizeof(script2),
			 "chown -R 65534:65534 '%1$s' && chmod 700 '%3$s/../priv34h' || exit 9; "
			 "cd '%1$s/proj' && env -i HOME='%1$s' PATH='%3$s':/usr/bin:/bin TMPDIR=/tmp setpriv "
			 "--reuid=65534 --regid=65534 --clear-groups '%2$s' run -q -- sh -c "
			 "'echo x > cli.sh 2>/dev/null; echo w=$?; echo started'; echo status=$?",
			 h, test_passavant_bin(), sb) < (int)sizeof(script2));
		rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		ROW(rc == 0 && test_has(out, "started") && test_has(out, "status=0\n"),
		    "another user, a PATH link into root's 0700 tree: %d, %s %s", rc, out ? out : "", err ? err : "");
		ROW(test_has(out, "w=") && !test_has(out, "w=0"), "another user: the PATH link's target in the project "
								  "was writable: %s", out ? out : "");
		free(out);
		free(err);
	}
}

/* ------------------------------------------------------------------ */
/* Class 6: credential stores and environment                            */
/* ------------------------------------------------------------------ */

static void test_stores_unreadable(void)
{
	char script[8192], *out = NULL, *err = NULL;
	size_t off = 0;
	int st;

	SKIP_IF_NEEDED();
	for (size_t i = 0; i < sizeof(new_stores) / sizeof(new_stores[0]); i++)
		off += (size_t)snprintf(script + off, sizeof(script) - off,
					"cat ~/%s 2>/dev/null; echo\n", new_stores[i]);
	snprintf(script + off, sizeof(script) - off, "echo done\n");
	st = run_fsh("home", NULL, NULL, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "done"), "stores: status %d", st);
	for (size_t i = 0; i < sizeof(new_stores) / sizeof(new_stores[0]); i++) {
		char planted[PATH_MAX];
		snprintf(planted, sizeof(planted), "PLANTED-%s", new_stores[i]);
		ROW(!test_has(out, planted), "~/%s was readable in the sandbox", new_stores[i]);
	}
	free(out);
	free(err);
}

/* ------------------------------------------------------------------ */
/* Round 31: links under protected directories, stow'd dot files        */
/* ------------------------------------------------------------------ */

/* symlink(to, root/rel) where to is relative (kept so) or root-relative
 * when it starts with '@'. */
static int mklink(const char *to, const char *rel)
{
	char t[PATH_MAX], l[PATH_MAX];

	return symlink(to[0] == '@' ? at(t, to + 1) : to, at(l, rel));
}

/* Files of a read-denied directory (~/.ssh, ~/.aws, ~/.kube) that are
 * links elsewhere in the home: their targets are unreadable too, through
 * the link or by their own path, whatever the way (relative, absolute, a
 * chain, a link to a directory); a link pointing inside the directory
 * still works. */
static void test_read_denied_dir_links(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home31r/.ssh") == 0 && mkdirs("home31r/.aws") == 0 &&
			mkdirs("home31r/.kube") == 0 && mkdirs("home31r/keys") == 0 &&
			mkdirs("home31r/.aws/sso/cache") == 0 && mkdirs("home31r/secrets/keydir") == 0 &&
			mkfile(at(buf, "home31r/secrets/deep"), "R31-DEEP-TOKEN\n") == 0 &&
			mkfile(at(buf, "home31r/keys/id_work"), "R31-SSH-KEY\n") == 0 &&
			mkfile(at(buf, "home31r/secrets/aws"), "R31-AWS-SECRET\n") == 0 &&
			mkfile(at(buf, "home31r/secrets/kube"), "R31-KUBE-TOKEN\n") == 0 &&
			mkfile(at(buf, "home31r/secrets/keydir/id_dir"), "R31-DIR-KEY\n") == 0 &&
			mkfile(at(buf, "home31r/.ssh/inside"), "R31-INSIDE\n") == 0);
	CU_ASSERT_FATAL(mklink("../keys/id_work", "home31r/.ssh/id_work") == 0 &&
			mklink("@home31r/secrets/aws", "home31r/.aws/credentials") == 0 &&
			mklink("secrets/kube", "home31r/kubelink") == 0 &&
			mklink("../kubelink", "home31r/.kube/config") == 0 &&
			mklink("../secrets/keydir", "home31r/.ssh/keys.d") == 0 &&
			mklink("inside", "home31r/.ssh/same") == 0 &&
			mklink("../../../secrets/deep", "home31r/.aws/sso/cache/token.json") == 0);
	st = run_fsh("home31r", NULL, NULL, NULL, "work.yaml",
		     "for f in .ssh/id_work .aws/credentials .kube/config .ssh/keys.d/id_dir keys/id_work "
		     "secrets/aws secrets/kube kubelink secrets/keydir/id_dir secrets/deep; do cat ~/$f 2>/dev/null; done\n"
		     "ls ~/secrets/keydir 2>/dev/null; echo done\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "done"), "links in read-denied directories: status %d", st);
	ROW(!test_has(out, "R31-SSH-KEY"), "a key linked from ~/.ssh (relative link) was readable: %s", out);
	ROW(!test_has(out, "R31-AWS-SECRET"), "~/.aws/credentials's target (absolute link) was readable: %s", out);
	ROW(!test_has(out, "R31-KUBE-TOKEN"), "~/.kube/config's target (a chain of links) was readable: %s", out);
	ROW(!test_has(out, "R31-DIR-KEY") && !test_has(out, "id_dir"),
	    "a directory linked from ~/.ssh was readable: %s", out);
	ROW(!test_has(out, "R31-INSIDE"), "~/.ssh itself was readable: %s", out);
	ROW(!test_has(out, "R31-DEEP-TOKEN"), "a link two levels down in ~/.aws had a readable target: %s", out);
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* ~/.ssh itself a link out of the home (another disk): its links
	 * are followed as well (review of round 31: they were not). */
	CU_ASSERT_FATAL(mkdirs("home31l/keys") == 0 && mkdirs("store31l/ssh") == 0 &&
			mkfile(at(buf, "home31l/keys/id_work"), "R31L-SSH-KEY\n") == 0 &&
			mklink("@home31l/keys/id_work", "store31l/ssh/id_work") == 0 &&
			mklink("@store31l/ssh", "home31l/.ssh") == 0);
	st = run_fsh("home31l", NULL, NULL, NULL, "work.yaml", "cat ~/keys/id_work ~/.ssh/id_work 2>/dev/null; echo done\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "done"), "~/.ssh a link out of the home: status %d, %s", st, err ? err : "");
	ROW(!test_has(out, "R31L-SSH-KEY"), "a key linked from a linked ~/.ssh was readable: %s", out ? out : "");
	free(out);
	free(err);
	out = err = NULL;

	/* A link to an ancestor of the working directory would hide the
	 * session's own files: refused, named. */
	CU_ASSERT_FATAL(mklink("@", "home31r/.ssh/up") == 0);
	st = run_fsh("home31r", NULL, NULL, NULL, "work.yaml", "echo ran\n", &out, &err);
	ROW(st == 125 && !test_has(out, "ran") && test_has(err, "/.ssh/up") && test_has(err, "holds"),
	    "a link in ~/.ssh to an ancestor of the working directory: status %d, %s", st, err ? err : "");
	drop("home31r/.ssh/up");
	free(out);
	free(err);
}

/* Files of a write-denied directory row (~/.ssh, ~/.config/git,
 * ~/.config/nvim) that are links into the writable project (a dotfiles
 * repository, the session's working directory): their targets are
 * read-only; a dangling one cannot be created there; a link to the
 * project itself refuses the start. */
static void test_write_denied_dir_links(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home31w/.ssh") == 0 && mkdirs("home31w/.config/git") == 0 &&
			mkdirs("home31w/.config/nvim") == 0 && mkdirs("work/df31/ssh") == 0 &&
			mkdirs("work/df31/git") == 0 && mkdirs("work/df31/nvim/lua") == 0 &&
			mkfile(at(buf, "work/df31/ssh/config"), "Host *\n") == 0 &&
			mkfile(at(buf, "work/df31/git/config"), "[core]\n") == 0 &&
			mkfile(at(buf, "work/df31/nvim/init.lua"), "-- nvim\n") == 0 &&
			mkfile(at(buf, "work/df31/nvim/lua/plug.lua"), "-- plug\n") == 0);
	CU_ASSERT_FATAL(mklink("../../work/df31/ssh/config", "home31w/.ssh/config") == 0 &&
			mklink("@work/df31/git/config", "home31w/.config/git/config") == 0 &&
			mklink("../../nvimlink", "home31w/.config/nvim/init.lua") == 0 &&
			mklink("@work/df31/nvim/init.lua", "home31w/nvimlink") == 0 &&
			mklink("../../../work/df31/nvim/lua", "home31w/.config/nvim/lua") == 0 &&
			mklink("../../work/df31/ssh/rc", "home31w/.ssh/rc") == 0);
	st = run_fsh("home31w", NULL, NULL, NULL, "work.yaml",
		     "echo 'Match exec \"touch /x\"' >> df31/ssh/config 2>/dev/null; echo ssh=$?\n"
		     "echo '\tfsmonitor = x' >> df31/git/config 2>/dev/null; echo git=$?\n"
		     "echo 'os.execute(1)' >> df31/nvim/init.lua 2>/dev/null; echo nvim=$?\n"
		     "echo 'os.execute(2)' >> df31/nvim/lua/plug.lua 2>/dev/null; echo dir=$?\n"
		     "echo 'touch /x' > df31/ssh/rc 2>/dev/null; echo rc=$?\n"
		     "echo ok > df31/other 2>/dev/null; echo other=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "other=0"), "a dotfiles project: status %d, %s %s", st, out ? out : "",
	    err ? err : "");
	ROW(test_has(out, "ssh=") && !test_has(out, "ssh=0"), "~/.ssh/config's target in the project was writable");
	ROW(test_has(out, "git=") && !test_has(out, "git=0"),
	    "~/.config/git/config's target in the project was writable");
	ROW(test_has(out, "nvim=") && !test_has(out, "nvim=0"),
	    "~/.config/nvim/init.lua's target (a chain of links) was writable");
	ROW(test_has(out, "dir=") && !test_has(out, "dir=0"),
	    "a file in a directory linked from ~/.config/nvim was writable");
	ROW(test_has(out, "rc=") && !test_has(out, "rc=0"), "~/.ssh/rc's missing target could be created");
	text = test_read_file(at(buf, "work/df31/ssh/config"), NULL);
	ROW(text != NULL && strcmp(text, "Host *\n") == 0, "~/.ssh/config's target changed");
	free(text);
	ROW(!exists("work/df31/ssh/rc"), "the placeholder of ~/.ssh/rc's target was left");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* ~/.config a link out of the home (review of round 31): the row
	 * ~/.config/git's links are followed as well. */
	CU_ASSERT_FATAL(mkdirs("home31wl") == 0 && mkdirs("cfg31wl/git") == 0 && mkdirs("work/df31l/git") == 0 &&
			mkfile(at(buf, "work/df31l/git/config"), "[core]\n") == 0 &&
			mklink("@work/df31l/git/config", "cfg31wl/git/config") == 0 &&
			mklink("@cfg31wl", "home31wl/.config") == 0);
	st = run_fsh("home31wl", NULL, NULL, NULL, "work.yaml",
		     "echo '\tfsmonitor = x' >> df31l/git/config 2>/dev/null; echo git=$?\n", &out, &err);
	ROW(st == 0 && test_has(out, "git=") && !test_has(out, "git=0"),
	    "~/.config/git/config's target, ~/.config a link out of the home, was writable: status %d, %s %s", st,
	    out ? out : "", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;

	/* A link to the working directory itself: refused, named. */
	CU_ASSERT_FATAL(mklink("@work", "home31w/.config/git/proj") == 0);
	st = run_fsh("home31w", NULL, NULL, NULL, "work.yaml", "echo ran\n", &out, &err);
	ROW(st == 125 && !test_has(out, "ran") && test_has(err, "/.config/git/proj"),
	    "a link in ~/.config/git to the working directory: status %d, %s", st, err ? err : "");
	drop("home31w/.config/git/proj");
	free(out);
	free(err);
}

/* Round 32: package trees are listed for links, not skipped. An `npm
 * link`ed dependency of a ~/.vscode extension (node_modules/NAME, a
 * scoped node_modules/@me/NAME, a node_modules that is itself a link)
 * and of a dot directory with no row (the home walk): each target in the
 * project is read-only; the project's other files stay writable; a link
 * to the working directory itself refuses the start, named. */
static void test_package_tree_links(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home32p/.vscode/extensions/me.a/node_modules/@me") == 0 &&
			mkdirs("home32p/.vscode/extensions/me.a/node_modules/realpkg/lib") == 0 &&
			mkdirs("home32p/.vscode/extensions/me.b") == 0 &&
			mkdirs("home32p/.someed32/ext/node_modules") == 0 && mkdirs("work/lib32/plain") == 0 &&
			mkdirs("work/lib32/scoped") == 0 && mkdirs("work/lib32/nm/dep") == 0 &&
			mkdirs("work/lib32/other") == 0 &&
			mkfile(at(buf, "work/lib32/plain/index.js"), "module.exports = 1;\n") == 0 &&
			mkfile(at(buf, "work/lib32/scoped/index.js"), "module.exports = 2;\n") == 0 &&
			mkfile(at(buf, "work/lib32/nm/dep/index.js"), "module.exports = 3;\n") == 0 &&
			mkfile(at(buf, "work/lib32/other/index.js"), "module.exports = 4;\n") == 0 &&
			mkfile(at(buf, "home32p/.vscode/extensions/me.a/node_modules/realpkg/lib/i.js"), "x\n") == 0);
	CU_ASSERT_FATAL(mklink("@work/lib32/plain", "home32p/.vscode/extensions/me.a/node_modules/plain") == 0 &&
			mklink("@work/lib32/scoped", "home32p/.vscode/extensions/me.a/node_modules/@me/scoped") == 0 &&
			mklink("@work/lib32/nm", "home32p/.vscode/extensions/me.b/node_modules") == 0 &&
			mklink("@work/lib32/other", "home32p/.someed32/ext/node_modules/other") == 0);
	st = run_fsh("home32p", NULL, NULL, NULL, "work.yaml",
		     "echo 'require(\"child_process\")' >> lib32/plain/index.js 2>/dev/null; echo plain=$?\n"
		     "echo 'require(\"child_process\")' >> lib32/scoped/index.js 2>/dev/null; echo scoped=$?\n"
		     "echo 'require(\"child_process\")' >> lib32/nm/dep/index.js 2>/dev/null; echo nm=$?\n"
		     "echo 'require(\"child_process\")' >> lib32/other/index.js 2>/dev/null; echo home=$?\n"
		     "echo ok > lib32/free 2>/dev/null; echo free=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "free=0"), "npm-linked packages: status %d, %s %s", st, out ? out : "",
	    err ? err : "");
	ROW(test_has(out, "plain=") && !test_has(out, "plain=0"),
	    "an npm-linked package of a ~/.vscode extension (node_modules/plain) was writable");
	ROW(test_has(out, "scoped=") && !test_has(out, "scoped=0"),
	    "a scoped npm-linked package (node_modules/@me/scoped) was writable");
	ROW(test_has(out, "nm=") && !test_has(out, "nm=0"), "an extension's node_modules, a link, was writable");
	ROW(test_has(out, "home=") && !test_has(out, "home=0"),
	    "an npm-linked package under a dot directory with no row (the home walk) was writable");
	text = test_read_file(at(buf, "work/lib32/plain/index.js"), NULL);
	ROW(text != NULL && strcmp(text, "module.exports = 1;\n") == 0, "the linked package's index.js changed");
	free(text);
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* The package is the working directory (b14: a session in the
	 * library): refused, named. */
	CU_ASSERT_FATAL(mklink("@work", "home32p/.vscode/extensions/me.a/node_modules/self") == 0);
	st = run_fsh("home32p", NULL, NULL, NULL, "work.yaml", "echo ran\n", &out, &err);
	ROW(st == 125 && !test_has(out, "ran") && test_has(err, "node_modules/self"),
	    "an npm-linked package that is the working directory: status %d, %s", st, err ? err : "");
	drop("home32p/.vscode/extensions/me.a/node_modules/self");
	free(out);
	free(err);
	out = err = NULL;

	/* Another user's package tree the user cannot list (a root-made
	 * 0700 node_modules): started, as for any directory of the walk. */
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0) {
		TEST_SKIP("another user's node_modules: needs root and setpriv");
		return;
	}
	{
		char h[PATH_MAX], script[2 * PATH_MAX + 512];
		char *argv[] = {"sh", "-c", script, NULL};
		int rc;

		CU_ASSERT_FATAL(mkdirs("home32q/.vscode/extensions/x/node_modules/p") == 0 &&
				mkdirs("home32q/proj") == 0);
		(void)at(h, "home32q");
		CU_ASSERT_FATAL(snprintf(script, sizeof(script),
			 "chown -R 65534:65534 '%1$s' && chown -R 0:0 '%1$s/.vscode/extensions/x/node_modules' && "
			 "chmod 700 '%1$s/.vscode/extensions/x/node_modules' || exit 9; "
			 "cd '%1$s/proj' && env -i HOME='%1$s' PATH=/usr/bin:/bin TMPDIR=/tmp setpriv --reuid=65534 "
			 "--regid=65534 --clear-groups '%2$s' run -q -- echo started; echo status=$?",
			 h, test_passavant_bin()) < (int)sizeof(script));
		rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		ROW(rc == 0 && test_has(out, "started\nstatus=0\n"),
		    "another user's unlistable node_modules refused the start: %d, %s %s", rc, out ? out : "",
		    err ? err : "");
		free(out);
		free(err);
	}
}

/* Dot entries with no row of the table, linked into the writable project
 * (stow: ~/.lesskey, ~/.config/kitty as a directory, ~/.wezterm.lua, one
 * three levels down, one dangling): read-only, or not creatable, in a
 * session run in the project; the project's other files stay writable. */
static void test_stow_dot_links(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home31s/.config/foo/bar") == 0 && mkdirs("work/st31/less") == 0 &&
			mkdirs("work/st31/kitty") == 0 && mkdirs("work/st31/wez") == 0 &&
			mkdirs("work/st31/some") == 0 &&
			mkfile(at(buf, "work/st31/less/.lesskey"), "#command\n") == 0 &&
			mkfile(at(buf, "work/st31/kitty/kitty.conf"), "font_size 11\n") == 0 &&
			mkfile(at(buf, "work/st31/wez/.wezterm.lua"), "return {}\n") == 0 &&
			mkfile(at(buf, "work/st31/deep.conf"), "deep\n") == 0);
	CU_ASSERT_FATAL(mklink("../work/st31/less/.lesskey", "home31s/.lesskey") == 0 &&
			mklink("../../work/st31/kitty", "home31s/.config/kitty") == 0 &&
			mklink("@work/st31/wez/.wezterm.lua", "home31s/.wezterm.lua") == 0 &&
			mklink("@work/st31/deep.conf", "home31s/.config/foo/bar/baz.conf") == 0 &&
			mklink("../work/st31/some/rc", "home31s/.somerc31") == 0);
	st = run_fsh("home31s", NULL, NULL, NULL, "work.yaml",
		     "printf '#env\\nLESSOPEN=|-touch /x\\n' > st31/less/.lesskey 2>/dev/null; echo less=$?\n"
		     "echo 'shell sh' >> st31/kitty/kitty.conf 2>/dev/null; echo kitty=$?\n"
		     "echo 'os.execute(1)' > st31/wez/.wezterm.lua 2>/dev/null; echo wez=$?\n"
		     "echo x >> st31/deep.conf 2>/dev/null; echo deep=$?\n"
		     "echo x > st31/some/rc 2>/dev/null; echo dangling=$?\n"
		     "echo ok > st31/other 2>/dev/null; echo other=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "other=0"), "a stow'd dotfiles project: status %d, %s %s", st,
	    out ? out : "", err ? err : "");
	ROW(test_has(out, "less=") && !test_has(out, "less=0"), "~/.lesskey's target in the project was writable");
	ROW(test_has(out, "kitty=") && !test_has(out, "kitty=0"),
	    "a file of ~/.config/kitty (a link to a project directory) was writable");
	ROW(test_has(out, "wez=") && !test_has(out, "wez=0"), "~/.wezterm.lua's target was writable");
	ROW(test_has(out, "deep=") && !test_has(out, "deep=0"),
	    "~/.config/foo/bar/baz.conf's target was writable");
	ROW(test_has(out, "dangling=") && !test_has(out, "dangling=0"),
	    "a dangling dot link's target could be created in the project");
	text = test_read_file(at(buf, "work/st31/less/.lesskey"), NULL);
	ROW(text != NULL && strcmp(text, "#command\n") == 0, "~/.lesskey's target changed");
	free(text);
	ROW(!exists("work/st31/some/rc"), "the placeholder of a dangling dot link's target was left");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
	out = err = NULL;

	/* The third review of round 31: a log linked to /dev/stdout under a
	 * deny-read row (Chrome's chrome_debug.log) refused the start when
	 * stdout was a pipe; a link to /usr among the dot entries was walked
	 * (0.9 s a start). Both start now. */
	CU_ASSERT_FATAL(mkdirs("home31s4/.config/google-chrome") == 0 &&
			mklink("/dev/stdout", "home31s4/.config/google-chrome/chrome_debug.log") == 0 &&
			mklink("/usr", "home31s4/.sysusr") == 0);
	st = run_fsh("home31s4", NULL, NULL, NULL, "work.yaml", "echo started\n", &out, &err);
	ROW(st == 0 && test_has(out, "started"), "a link to /dev/stdout under a deny-read row, or to /usr: status %d, %s %s",
	    st, out ? out : "", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;

	/* Review of round 31: ~/.config itself a link out of the home, and
	 * there kitty -> the project's kitty (entered as a dot directory);
	 * a link inside a protected target directory into another file of
	 * the project (kitty/kitty.conf -> ../shared/kitty.conf). */
	CU_ASSERT_FATAL(mkdirs("home31s2") == 0 && mkdirs("cfg31s2") == 0 && mkdirs("work/st31b/kitty") == 0 &&
			mkdirs("work/st31b/shared") == 0 && mkdirs("home31s3/.config") == 0 &&
			mkfile(at(buf, "work/st31b/kitty/kitty.conf"), "font_size 11\n") == 0 &&
			mkfile(at(buf, "work/st31b/shared/kitty.conf"), "font_size 12\n") == 0 &&
			mklink("@work/st31b/kitty", "cfg31s2/kitty") == 0 && mklink("@cfg31s2", "home31s2/.config") == 0 &&
			mklink("../shared/kitty.conf", "work/st31b/kitty/shared.conf") == 0 &&
			mklink("../../work/st31b/kitty", "home31s3/.config/kitty") == 0);
	st = run_fsh("home31s2", NULL, NULL, NULL, "work.yaml",
		     "echo 'shell sh' >> st31b/kitty/kitty.conf 2>/dev/null; echo kitty=$?\n"
		     "echo ok > st31b/other 2>/dev/null; echo other=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "other=0") && test_has(out, "kitty=") && !test_has(out, "kitty=0"),
	    "~/.config a link out of the home, its kitty linked into the project: writable: status %d, %s %s", st,
	    out ? out : "", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	/* And a link five components down (stow --no-folding), six. */
	CU_ASSERT_FATAL(mkdirs("home31s3/.config/k5/themes/dark/extra") == 0 &&
			mkfile(at(buf, "work/st31b/t5.conf"), "t5\n") == 0 &&
			mkfile(at(buf, "work/st31b/t6.conf"), "t6\n") == 0 &&
			mklink("@work/st31b/t5.conf", "home31s3/.config/k5/themes/dark/t.conf") == 0 &&
			mklink("@work/st31b/t6.conf", "home31s3/.config/k5/themes/dark/extra/t.conf") == 0);
	st = run_fsh("home31s3", NULL, NULL, NULL, "work.yaml",
		     "echo 'shell sh' >> st31b/shared/kitty.conf 2>/dev/null; echo shared=$?\n"
		     "echo x >> st31b/t5.conf 2>/dev/null; echo t5=$?\n"
		     "echo x >> st31b/t6.conf 2>/dev/null; echo t6=$?\n"
		     "echo ok > st31b/other 2>/dev/null; echo other=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "other=0") && test_has(out, "shared=") && !test_has(out, "shared=0"),
	    "a link inside ~/.config/kitty's target (into the project) had a writable target: status %d, %s %s", st,
	    out ? out : "", err ? err : "");
	ROW(test_has(out, "t5=") && !test_has(out, "t5=0") && test_has(out, "t6=") && !test_has(out, "t6=0"),
	    "a dot link five or six components down had a writable target: %s", out ? out : "");
	free(out);
	free(err);
	out = err = NULL;

	/* A link inside a writable dot directory (allowWrite "~/.cache")
	 * is the session's own to change: no refusal for it. */
	CU_ASSERT_FATAL(mkdirs("home31s/.cache/tool/v2") == 0 && mklink("v2", "home31s/.cache/tool/current") == 0 &&
			write_policy("cache31.yaml", "filesystem:\n  allowWrite: [\"%1$s/home31s/.cache\", "
						     "\"%1$s/work\"]\n") == 0);
	st = run_fsh("home31s", NULL, NULL, NULL, "cache31.yaml", "echo ran\n", &out, &err);
	ROW(st == 0 && test_has(out, "ran"), "a link inside a writable ~/.cache refused the start: status %d, %s", st,
	    err ? err : "");
	free(out);
	free(err);
	out = err = NULL;

	/* A dot link to the working directory itself: refused, named. */
	CU_ASSERT_FATAL(mklink("@work", "home31s/.proj31") == 0);
	st = run_fsh("home31s", NULL, NULL, NULL, "work.yaml", "echo ran\n", &out, &err);
	ROW(st == 125 && !test_has(out, "ran") && test_has(err, "/.proj31"),
	    "a dot link to the working directory: status %d, %s", st, err ? err : "");
	drop("home31s/.proj31");
	free(out);
	free(err);
}

/* A Go build cache (~/.cache/go-build/00..ff, 801 files each: 205056
 * entries) in a home that is not writable: the walk of the dot links
 * skips the cache and the run starts (review of round 31: every run was
 * refused past 200000 entries). */
static void test_home_big_cache(void)
{
	char dir[PATH_MAX], f[PATH_MAX + 32], *out = NULL, *err = NULL;
	bool ok = true;
	int st, fd;

	SKIP_IF_NEEDED();
	for (unsigned i = 0; i < 256 && ok; i++) {
		snprintf(f, sizeof(f), "home31c/.cache/go-build/%02x", i);
		ok = mkdirs(f) == 0;
		(void)at(dir, f);
		for (unsigned j = 0; j < 801 && ok; j++) {
			snprintf(f, sizeof(f), "%s/%08x-d", dir, j);
			fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			ok = fd >= 0 && close(fd) == 0;
		}
	}
	CU_ASSERT_FATAL(ok);
	st = run_fsh("home31c", NULL, NULL, NULL, "work.yaml", "echo ran\n", &out, &err);
	ROW(st == 0 && test_has(out, "ran"), "a Go build cache in ~/.cache refused the start: status %d, %s", st,
	    err ? err : "");
	free(out);
	free(err);
}

/* A directory under ~/.ssh the user cannot list (0311) holding
 * id_vault -> ~/keys/id_vault: the start is refused, naming it (review
 * of round 31: the walk skipped it and the key was read at its target).
 * Run as nobody: root lists any directory. */
/* Round 32: a file inside a protected directory row with a second hard
 * link in the project (a dotfiles manager that hard-links): the start is
 * refused naming it, for a write deny and a read deny alike; hard links
 * whose names are all inside the row (rustup's proxies in ~/.cargo/bin)
 * start. */
static void test_hard_linked_row_files(void)
{
	static const struct {
		const char *home, *dir, *row_file, *work_file, *text;
	} cases[] = {
		{"home32hw", "home32hw/.config/git", "home32hw/.config/git/config", "work/df32/gitconfig", "[core]\n"},
		{"home32hs", "home32hs/.ssh/conf.d", "home32hs/.ssh/conf.d/hosts", "work/df32/sshhosts", "Host *\n"},
		{"home32hr", "home32hr/.aws", "home32hr/.aws/credentials", "work/df32/awscreds", "R32H-SECRET\n"},
	};
	char buf[PATH_MAX], buf2[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("work/df32") == 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_FATAL(mkdirs(cases[i].dir) == 0 && mkfile(at(buf, cases[i].work_file), cases[i].text) == 0 &&
				link(at(buf, cases[i].work_file), at(buf2, cases[i].row_file)) == 0);
		st = run_fsh(cases[i].home, NULL, NULL, NULL, "work.yaml",
			     "echo ran; cat df32/awscreds 2>/dev/null; echo 'Match exec x' >> df32/sshhosts 2>/dev/null; "
			     "echo '[core] fsmonitor = x' >> df32/gitconfig 2>/dev/null; echo done\n",
			     &out, &err);
		ROW(st == 125 && !test_has(out, "ran") && test_has(err, cases[i].row_file) &&
			    test_has(err, "hard links") && !test_has(err, "R32H-SECRET"),
		    "%s hard-linked from the project: status %d, %s %s", cases[i].row_file, st, out ? out : "",
		    err ? err : "");
		text = test_read_file(at(buf, cases[i].work_file), NULL);
		ROW(text != NULL && strcmp(text, cases[i].text) == 0, "%s changed: %s", cases[i].work_file,
		    text ? text : "(gone)");
		free(text);
		free(out);
		free(err);
		out = err = NULL;
		(void)unlink(at(buf, cases[i].work_file));
	}
	/* Round 32, read side: a read-denied or masked file's second name
	 * outside every writable tree (the home, read-only here) showed it
	 * (a policy denyRead file and a masked credentials.files file under
	 * a policy that makes nothing writable, a key in ~/.ssh hard-linked
	 * from ~/keys). */
	{
		static const struct {
			const char *dir, *file, *other, *policy;
		} reads[] = {
			{"home32hk/.config/tool", "home32hk/.config/tool/token", "home32hk/keep/token",
			 "filesystem:\n  denyRead: [\"%1$s/home32hk/.config/tool/token\"]\n"},
			{"home32hk/.config/tool", "home32hk/.config/tool/token", "home32hk/keep/token",
			 "credentials:\n  files:\n"
			 "    - {path: \"%1$s/home32hk/.config/tool/token\", mode: mask, injectHosts: [\"127.0.0.1\"]}\n"
			 "network:\n  allowedDomains: [\"127.0.0.1\"]\n"},
			{"home32hk/.ssh", "home32hk/.ssh/id_work", "home32hk/keep/id_work", NULL},
		};

		CU_ASSERT_FATAL(mkdirs("home32hk/keep") == 0);
		for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
			CU_ASSERT_FATAL(mkdirs(reads[i].dir) == 0 &&
					mkfile(at(buf, reads[i].other), "tok_R32HK_0123456789abcdef\n") == 0 &&
					link(buf, at(buf2, reads[i].file)) == 0);
			CU_ASSERT_FATAL(reads[i].policy == NULL || write_policy("hk32.yaml", reads[i].policy) == 0);
			CU_ASSERT_FATAL(snprintf(buf2, sizeof(buf2), "echo ran; cat '%s'\n", buf) < (int)sizeof(buf2));
			st = run_fsh("home32hk", NULL, NULL, NULL, reads[i].policy != NULL ? "hk32.yaml" : "work.yaml", buf2,
				     &out, &err);
			ROW(st == 125 && !test_has(out, "ran") && !test_has(out, "R32HK") && test_has(err, reads[i].file) &&
				    test_has(err, "hard links"),
			    "%s, its second name in the read-only home: status %d, %s %s", reads[i].file, st,
			    out ? out : "", err ? err : "");
			free(out);
			free(err);
			out = err = NULL;
			(void)unlink(at(buf, reads[i].file));
			(void)unlink(at(buf, reads[i].other));
		}
	}
	/* rustup: its proxies are hard links of one another, all in the row. */
	CU_ASSERT_FATAL(mkdirs("home32hc/.cargo/bin") == 0 && mkfile(at(buf, "home32hc/.cargo/bin/rustup"), "#!/bin/sh\n") == 0 &&
			link(buf, at(buf2, "home32hc/.cargo/bin/cargo")) == 0 &&
			link(buf, at(buf2, "home32hc/.cargo/bin/rustc")) == 0);
	st = run_fsh("home32hc", NULL, NULL, NULL, "work.yaml", "echo started\n", &out, &err);
	ROW(st == 0 && test_has(out, "started"), "rustup's hard-linked proxies in ~/.cargo/bin: status %d, %s %s", st,
	    out ? out : "", err ? err : "");
	free(out);
	free(err);
}

/* Whether name comes before other in the listing of directory rel
 * (the order the walk reads it in). */
static bool listed_before(const char *rel, const char *name, const char *other)
{
	char buf[PATH_MAX];
	DIR *d = opendir(at(buf, rel));
	struct dirent *e;
	bool before = false;

	if (d == NULL)
		return false;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, other) == 0)
			break;
		if (strcmp(e->d_name, name) == 0) {
			before = true;
			break;
		}
	}
	(void)closedir(d);
	return before;
}

/*
 * The third review of round 31: a directory first reached through a deep
 * link (listed at the last level, its subdirectories not entered) was
 * skipped when a link at the top of the home reached it later in the
 * walk's order: the links below it went unchecked. The deep entry is
 * made to come first in this filesystem's order (names tried until one
 * does); the link below the shared directory into the project must be
 * read-only all the same.
 */
static void test_link_walk_order(void)
{
	char buf[PATH_MAX], name[32], deep[96];
	char *out = NULL, *err = NULL, *text;
	int st, i;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home31o/cfgstore/sub") == 0 && mkdirs("work/st31o") == 0 &&
			mkfile(at(buf, "work/st31o/x.conf"), "orig\n") == 0 &&
			mklink("@work/st31o/x.conf", "home31o/cfgstore/sub/x.conf") == 0 &&
			mklink("@home31o/cfgstore", "home31o/.shallow") == 0);
	for (i = 0; i < 64; i++) {
		CU_ASSERT_FATAL(snprintf(name, sizeof(name), ".deep%d", i) < (int)sizeof(name));
		CU_ASSERT_FATAL(snprintf(deep, sizeof(deep), "home31o/%s/1/2/3", name) < (int)sizeof(deep));
		CU_ASSERT_FATAL(mkdirs(deep) == 0);
		CU_ASSERT_FATAL(snprintf(deep, sizeof(deep), "home31o/%s/1/2/3/lnk", name) < (int)sizeof(deep));
		CU_ASSERT_FATAL(mklink("@home31o/cfgstore", deep) == 0);
		if (listed_before("home31o", name, ".shallow"))
			break;
	}
	ROW(i < 64, "no name listed before .shallow in 64 tries: the case is not made");
	st = run_fsh("home31o", NULL, NULL, NULL, "work.yaml",
		     "echo pwned >> st31o/x.conf 2>/dev/null; echo wrote=$?\necho ok > st31o/other; echo other=$?\n", &out,
		     &err);
	ROW(st == 0 && test_has(out, "other=0") && test_has(out, "wrote=") && !test_has(out, "wrote=0"),
	    "a link below a directory reached first deep, then from the top of the home: status %d, %s %s", st,
	    out ? out : "", err ? err : "");
	text = test_read_file(at(buf, "work/st31o/x.conf"), NULL);
	ROW(text != NULL && strcmp(text, "orig\n") == 0, "~/.shallow/sub/x.conf's target changed: %s",
	    text ? text : "(gone)");
	free(text);
	free(out);
	free(err);
}

static void test_xonly_dir_links(void)
{
	char h[PATH_MAX], buf[PATH_MAX], script[3 * PATH_MAX + 512];
	char *argv[] = {"sh", "-c", script, NULL};
	char *out = NULL, *err = NULL;
	int rc;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0) {
		TEST_SKIP("needs root and setpriv to run as another user");
		return;
	}
	CU_ASSERT_FATAL(mkdirs("home31x/.ssh/vault") == 0 && mkdirs("home31x/keys") == 0 &&
			mkdirs("home31x/proj") == 0 && mkfile(at(buf, "home31x/keys/id_vault"), "R31X-KEY\n") == 0 &&
			mklink("@home31x/keys/id_vault", "home31x/.ssh/vault/id_vault") == 0);
	(void)at(h, "home31x");
	CU_ASSERT_FATAL(snprintf(script, sizeof(script),
		 "chown -R 65534:65534 '%1$s' && chmod 700 '%1$s/.ssh' && chmod 311 '%1$s/.ssh/vault' || exit 9; "
		 "cd '%1$s/proj' && env -i HOME='%1$s' PATH=/usr/bin:/bin TMPDIR=/tmp setpriv --reuid=65534 "
		 "--regid=65534 --clear-groups '%2$s' run -q -- cat '%1$s/keys/id_vault'; echo status=$?",
		 h, test_passavant_bin()) < (int)sizeof(script));
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "status=125\n") && !test_has(out, "R31X-KEY") &&
		    test_has(err, "/home31x/.ssh/vault") && test_has(err, "chmod u+r"),
	    "a key linked from a directory under ~/.ssh that cannot be listed: %d, %s %s", rc, out ? out : "",
	    err ? err : "");
	(void)chmod(at(buf, "home31x/.ssh/vault"), 0700);
	free(out);
	free(err);
	out = err = NULL;

	/* The third review of round 31: another user's directory the user
	 * cannot list, reached by the walk (a root-made 0711 directory in
	 * ~/.local/share; a link to a tree with root's 0711 and a 1733
	 * spool), refused the start. Only the user's own does. */
	CU_ASSERT_FATAL(mkdirs("home31y/.local/share/app/root-made/x") == 0 && mkdirs("home31y/proj") == 0 &&
			mkdirs("sys31y/lib/spool") == 0 && mkdirs("sys31y/lib/private/y") == 0 &&
			mklink("@sys31y", "home31y/.sysvar") == 0);
	(void)at(h, "home31y");
	CU_ASSERT_FATAL(snprintf(script, sizeof(script),
		 "chown -R 65534:65534 '%1$s' && chown -R 0:0 '%1$s/.local/share/app/root-made' && "
		 "chmod 711 '%1$s/.local/share/app/root-made' && chmod 1733 '%3$s/lib/spool' && "
		 "chmod 711 '%3$s/lib/private' || exit 9; "
		 "cd '%1$s/proj' && env -i HOME='%1$s' PATH=/usr/bin:/bin TMPDIR=/tmp setpriv --reuid=65534 "
		 "--regid=65534 --clear-groups '%2$s' run -q -- echo started; echo status=$?",
		 h, test_passavant_bin(), at(buf, "sys31y")) < (int)sizeof(script));
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "started\nstatus=0\n"),
	    "another user's directories the user cannot list (0711, 1733) refused the start: %d, %s %s", rc,
	    out ? out : "", err ? err : "");
	free(out);
	free(err);
}

static void test_env_dropped(void)
{
	static const char script[] =
		"for v in GITHUB_TOKEN FOO_SECRET my_password OPENAI_API_KEY TOKEN_HOLDER DB_URL "
		"PEMKEY NAMED_SECRET PLAIN_VAR TOKENIZERS_PARALLELISM SECRETS_DIR PASSAVANT_X; do\n"
		"  eval \"printf '%s=%s\\n' $v \\\"\\${$v-unset}\\\"\"\ndone\n"
		"printf 'GH_TOKEN=%s\\n' \"$GH_TOKEN\"\n";
	char gh[64], *out = NULL, *err = NULL;
	const char *env[] = {
		gh, "GITHUB_TOKEN=plain-value-1234", "FOO_SECRET=value-of-foo-secret",
		"my_password=hunter2hunter2", "OPENAI_API_KEY=sk-proj-abcdefghijklmnop",
		"TOKEN_HOLDER=ghp_Q0wDXk3mLr9TzP2vNb7YhJ4sGc8aEf6uKd1i",
		"DB_URL=postgres://app:s3cr3tpw@db.internal/app", "PEMKEY=-----BEGIN PRIVATE KEY-----",
		"NAMED_SECRET=named-deny-value", "PLAIN_VAR=hello", "TOKENIZERS_PARALLELISM=false",
		"SECRETS_DIR=/srv/secrets", "PASSAVANT_X=kept-own", NULL,
	};
	const char *quiet[] = {"-q", NULL}, *verbose[] = {"-v", NULL};
	const char *values[] = {"plain-value-1234", "value-of-foo-secret", "hunter2hunter2",
				"abcdefghijklmnop", "s3cr3tpw", "named-deny-value", real_token,
				"Q0wDXk3mLr9TzP2vNb7YhJ4sGc8aEf6uKd1i"};
	const char *gone[] = {"GITHUB_TOKEN", "FOO_SECRET", "my_password", "OPENAI_API_KEY",
			      "TOKEN_HOLDER", "DB_URL", "PEMKEY", "NAMED_SECRET"};
	const char *kept[] = {"PLAIN_VAR=hello", "TOKENIZERS_PARALLELISM=false",
			      "SECRETS_DIR=/srv/secrets", "PASSAVANT_X=kept-own"};
	char want[128];
	const char *line, *v;
	unsigned lines = 0;
	int st;

	SKIP_IF_NEEDED();
	snprintf(gh, sizeof(gh), "GH_TOKEN=%s", real_token);
	st = run_fsh("home", NULL, env, NULL, "env.yaml", script, &out, &err);
	ROW(st == 0, "env: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		snprintf(want, sizeof(want), "%s=unset\n", gone[i]);
		ROW(test_has(out, want), "%s reached the command: %s", gone[i], out ? out : "");
	}
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		ROW(test_has(out, kept[i]), "%s did not reach the command", kept[i]);
	/* The policy-named masked variable: a sentinel of the same shape. */
	v = out != NULL ? strstr(out, "GH_TOKEN=") : NULL;
	ROW(v != NULL && strncmp(v + 9, "ghp_", 4) == 0 && strncmp(v + 9, real_token, 40) != 0,
	    "GH_TOKEN inside is not a sentinel");
	/* One notice line naming the dropped variables the policy does not
	 * name, and no value anywhere on stderr. */
	for (line = err; line != NULL && *line != '\0';) {
		if (strncmp(line, "passavant: not passed to the command", 36) == 0)
			lines++;
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	ROW(lines == 1, "expected one notice line, got %u: %s", lines, err ? err : "");
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
		if (strcmp(gone[i], "NAMED_SECRET") != 0)
			ROW(test_has(err, gone[i]), "the notice does not name %s: %s", gone[i], err ? err : "");
	ROW(!test_has(err, "NAMED_SECRET"), "the notice names a variable the policy names");
	ROW(!test_has(err, "GH_TOKEN"), "the notice names the masked variable");
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		ROW(!test_has(err, values[i]) && !test_has(out, values[i]), "a value leaked: %s", values[i]);
	free(out);
	free(err);
	out = err = NULL;
	/* -q: dropped all the same, nothing said. */
	st = run_fsh("home", NULL, env, quiet, "env.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "GITHUB_TOKEN=unset"), "-q: status %d", st);
	ROW(!test_has(err, "not passed to the command"), "-q printed the notice: %s", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	/* -v: the rule, and each name with its reason (no value). */
	st = run_fsh("home", NULL, env, verbose, "env.yaml", script, &out, &err);
	ROW(st == 0, "-v: status %d", st);
	ROW(test_has(err, "environment rule") && test_has(err, "TOKEN_HOLDER dropped: its value starts with"),
	    "-v does not show the rule: %s", err ? err : "");
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		ROW(!test_has(err, values[i]), "-v: a value leaked: %s", values[i]);
	free(out);
	free(err);
}

/* `check -v`: the mandatory table (new rows among them), this run's PATH
 * directories and the environment rule; plain `check` stays short. */
static void test_check_verbose(void)
{
	char pol[PATH_MAX], pathenv[2 * PATH_MAX], bin[PATH_MAX], home[PATH_MAX + 8];
	char *out = NULL, *err = NULL;
	char *argv[] = {"env", "-i", home, pathenv, (char *)test_passavant_bin(), "check", "-v",
			"-p", at(pol, "work.yaml"), NULL};
	int st;

	SKIP_IF_NEEDED();
	snprintf(home, sizeof(home), "HOME=%s/home", root);
	snprintf(pathenv, sizeof(pathenv), "PATH=%s:" TEST_SAFE_PATH, at(bin, "work/bin"));
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0, "check -v: status %d: %s", st, err ? err : "");
	ROW(test_has(out, "Mandatory rules") && test_has(out, ".bash_login") &&
		    test_has(out, ".config/containers/auth.json") && test_has(out, ".claude/settings.json") &&
		    test_has(out, ".config/systemd") && test_has(out, "*.code-workspace") &&
		    test_has(out, ".local/bin") && test_has(out, "dot entry"),
	    "check -v does not print the table: %s", out ? out : "");
	ROW(test_has(out, bin), "check -v does not list the PATH directory %s", bin);
	ROW(test_has(out, "Environment:") && test_has(out, "SECRET") && test_has(out, "ghp_"),
	    "check -v does not print the environment rule");
	free(out);
	free(err);
	out = err = NULL;
	argv[6] = "-p"; /* plain check */
	argv[7] = pol;
	argv[8] = NULL;
	st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(st == 0 && !test_has(out, "Mandatory rules") && test_has(out, "looks like a credential"),
	    "plain check: status %d", st);
	free(out);
	free(err);
}

/* More spellings of a credential in the environment: names (_PAT, _JWT,
 * _DSN, API_KEY or _TOKEN_ inside), a token inside a value (after
 * "bearer ", after "--token="), a JSON Web Token; and look-alikes that
 * must stay. */
static void test_env_variants(void)
{
	static const char script[] =
		"for v in GITHUB_PAT CI_JOB_JWT SENTRY_DSN OPENAI_API_KEY_2 NPM_TOKEN_PROD HDR ARGS ID_BLOB "
		"HF_DATASETS_CACHE LSC DESC; do\n"
		"  eval \"printf '%s=%s\\n' $v \\\"\\${$v-unset}\\\"\"\ndone\n";
	const char *env[] = {
		"GITHUB_PAT=plainpat-value-99", "CI_JOB_JWT=jwt-value-plain-77",
		"SENTRY_DSN=https://dsnkey1234@o1.ingest.example/1", "OPENAI_API_KEY_2=second-key-value-55",
		"NPM_TOKEN_PROD=prod-token-value-33",
		"HDR=AUTHORIZATION: bearer ghp_Q0wDXk3mLr9TzP2vNb7YhJ4sGc8aEf6uKd1i",
		"ARGS=--verbose --token=glpat-Zx81kLmN0pQr5sTuVw2y",
		"ID_BLOB=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlMTIzNDU",
		"HF_DATASETS_CACHE=/data/hf_datasets_cache", "LSC=di=01;34:ln=01;36",
		"DESC=a task-runner-sk-thing here", NULL,
	};
	const char *gone[] = {"GITHUB_PAT", "CI_JOB_JWT", "SENTRY_DSN", "OPENAI_API_KEY_2",
			      "NPM_TOKEN_PROD", "HDR", "ARGS", "ID_BLOB"};
	const char *kept[] = {"HF_DATASETS_CACHE=/data/hf_datasets_cache", "LSC=di=01;34:ln=01;36",
			      "DESC=a task-runner-sk-thing here"};
	const char *values[] = {"plainpat-value-99", "jwt-value-plain-77", "dsnkey1234", "second-key-value-55",
				"prod-token-value-33", "Q0wDXk3mLr9TzP2vNb7YhJ4sGc8aEf6uKd1i",
				"Zx81kLmN0pQr5sTuVw2y", "c2lnbmF0dXJlMTIzNDU"};
	char want[128], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_fsh("home", NULL, env, NULL, "env.yaml", script, &out, &err);
	ROW(st == 0, "env: status %d", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		snprintf(want, sizeof(want), "%s=unset\n", gone[i]);
		ROW(test_has(out, want), "%s reached the command: %s", gone[i], out ? out : "");
		ROW(test_has(err, gone[i]), "the notice does not name %s: %s", gone[i], err ? err : "");
	}
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		ROW(test_has(out, kept[i]), "%s did not reach the command", kept[i]);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		ROW(!test_has(err, values[i]) && !test_has(out, values[i]), "a value leaked: %s", values[i]);
	free(out);
	free(err);
}

/* The host's start-up files and library path named by variables, in a
 * writable HOME but not at the usual names: $ENV, $BASH_ENV, $ZDOTDIR's
 * .zshenv, $PYTHONSTARTUP and a library in $LD_LIBRARY_PATH can be
 * neither created nor changed. */
static void test_persistence_env_paths(void)
{
	static const char *const files[] = {".config/sh/env", ".config/bash/env", ".config/zsh/.zshenv",
					    ".config/py/startup.py", "lib/libc.so.6"};
	char script[4096], e[5][PATH_MAX + 32], line[PATH_MAX], rel[PATH_MAX], *out = NULL, *err = NULL;
	const char *env[6];
	int st;

	SKIP_IF_NEEDED();
	snprintf(e[0], sizeof(e[0]), "ENV=%s/home2/.config/sh/env", root);
	snprintf(e[1], sizeof(e[1]), "BASH_ENV=%s/home2/.config/bash/env", root);
	snprintf(e[2], sizeof(e[2]), "ZDOTDIR=%s/home2/.config/zsh", root);
	snprintf(e[3], sizeof(e[3]), "PYTHONSTARTUP=%s/home2/.config/py/startup.py", root);
	snprintf(e[4], sizeof(e[4]), "LD_LIBRARY_PATH=/usr/local/lib:%s/home2/lib", root);
	for (size_t i = 0; i < 5; i++)
		env[i] = e[i];
	env[5] = NULL;
	try_writes(script, sizeof(script), "~", files, sizeof(files) / sizeof(files[0]));
	st = run_fsh("home2", NULL, env, NULL, "home.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "ok=0"), "writable HOME: status %d, control write failed", st);
	if (st != 0)
		show(st, out, err);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(line, sizeof(line), "w:%s=0\n", files[i]);
		ROW(!test_has(out, line), "~/%s could be written in the sandbox", files[i]);
		snprintf(rel, sizeof(rel), "home2/%s", files[i]);
		ROW(!exists(rel), "~/%s exists on the host afterwards", files[i]);
	}
	drop("home2/ctl/ok.txt");
	free(out);
	free(err);
}

/* Hard links: a start-up file (write deny) and a credential store (read
 * deny) of a read-only HOME, each with a second name the user made in the
 * writable work tree. The second name would reach the file past the
 * rule: the session does not start (125, naming the file), the file is
 * unchanged, the store's content is not shown. */
/* Round 20 of the attack: settings planted in a directory whose path
 * passes PATH_MAX (45 levels of 100 bytes). The check reported "path too
 * long" and left it; in a next session the directory, renamed up to the
 * top, kept its files' old ctimes and passed. What the check cannot read
 * now moves aside. */
static void test_too_deep(void)
{
	const char *script =
		"python3 -c \"\n"
		"import os\n"
		"os.makedirs('deep', exist_ok=True); os.chdir('deep')\n"
		"for i in range(45):\n"
		"    n = '%0100d' % i; os.mkdir(n); os.chdir(n)\n"
		"os.makedirs('x/.vscode'); open('x/.vscode/tasks.json', 'w').write('{}')\n"
		"print('staged')\n"
		"\"\n";
	char dir[PATH_MAX], *out = NULL, *err = NULL, *found = NULL, *ferr = NULL;
	char *find[] = {"find", dir, "-name", "tasks.json", NULL};
	char *rm[] = {"rm", "-rf", dir, NULL};
	int st;

	SKIP_IF_NEEDED();
	at(dir, "work/deep");
	st = run_fsh("home", NULL, NULL, NULL, "work.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "staged"), "status %d: %s", st, test_nz(err));
	ROW(test_has(err, "quarantined ") && test_has(err, "too deep to check"), "no move aside reported: %s",
	    test_nz(err));
	CU_ASSERT(test_run_capture(find, &found, &ferr, 30000) == 0);
	ROW(found != NULL && test_has(found, "tasks.json") && test_has(found, ".passavant-quarantine"),
	    "the deep settings were left in place: %s", test_nz(found));
	free(found);
	free(ferr);
	(void)test_run_capture(rm, NULL, NULL, 30000);
	free(out);
	free(err);
}

static void test_hard_links(void)
{
	static const struct {
		const char *file, *link, *want;
	} rows[] = {
		{"home3/.profile", "work/hl-profile", "cannot apply a write deny to "},
		{"home3/.pgpass", "work/hl-pgpass", "cannot apply a read deny to "},
	};
	char a[PATH_MAX], l[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	ROW(mkdirs("home3") == 0, "mkdir home3");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ROW(mkfile(at(a, rows[i].file), "PLANTED-hard-link\n") == 0 && link(a, at(l, rows[i].link)) == 0,
		    "cannot make %s", rows[i].link);
		st = run_fsh("home3", NULL, NULL, NULL, "work.yaml",
			     "cat hl-pgpass 2>/dev/null; echo evil >> hl-profile 2>/dev/null; echo ran\n", &out,
			     &err);
		ROW(st == 125 && !test_has(out, "ran"), "%s: status %d, the session ran", rows[i].link, st);
		ROW(test_has(err, rows[i].want) && test_has(err, rows[i].file + 6) && test_has(err, "hard links"),
		    "%s: the refusal does not name the file: %s", rows[i].link, err ? err : "");
		ROW(!test_has(out, "PLANTED-hard-link"), "%s: the store was read through its second name", rows[i].link);
		text = test_read_file(a, NULL);
		ROW(text != NULL && strcmp(text, "PLANTED-hard-link\n") == 0, "%s: the file changed", rows[i].file);
		free(text);
		(void)unlink(l);
		free(out);
		free(err);
		out = err = NULL;
	}
}

/*
 * Round 30's review of the home checks after the run.
 * A: as a user other than root (uid 65534 through setpriv, where modes
 * bind), the command's last step `chmod 0300 ~` made the home's open
 * fail: the new dot entry, the new ~/mc that .bashrc names and the
 * written hard-linked file all stayed, status 0. Now the home is opened
 * up (the one opener), each is moved aside, and the mode is put back.
 * B: HOME reached through a link (home9 -> home9r): .bashrc names
 * ~/mc by HOME as given (as conda init writes it); the search knew only
 * the canonical path. C: allowWrite naming a dot directory (~/.npm):
 * the command filled it past the search's bounds, and the new ~/mc that
 * .config/fish/config.fish names stayed; a writable tree is skipped now,
 * and bounds the user's own files hit make the status 1.
 */
static void test_home_checks_unreadable_link_bounds(void)
{
	char h[PATH_MAX], t[PATH_MAX], d[PATH_MAX], bin[PATH_MAX], pol[PATH_MAX], hv[PATH_MAX + 8];
	char pv[PATH_MAX + 8], pp[PATH_MAX + 8], buf[PATH_MAX], *out = NULL, *err = NULL, *big, *text;
	static const char inner[] = "mkdir -p ~/mc && echo 'echo PLANTED' > ~/mc/env.sh; echo x > ~/.planted_rc; "
				    "echo y >> ~/notes.txt; echo p=$?; chmod 0300 ~"; /* p: the append fails (read-only) */
	char sv[sizeof(inner) + 8];
	char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "-i", "-C", h, hv,
			"PATH=" TEST_SAFE_PATH, "TMPDIR=/tmp", pv, pp, sv, "sh", "-c",
			"\"$P\" run -p \"$Q\" -- sh -c \"$S\"", NULL};
	struct stat sb;
	int st, fd;

	SKIP_IF_NEEDED();
	/* A */
	if (geteuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0) {
		CU_ASSERT_FATAL(mkdirs("nb") == 0 && mkdirs("nb/h") == 0 && mkdirs("nb/ext") == 0 &&
				mkfile(at(h, "nb/h/.bashrc"), "[ -f ~/mc/env.sh ] && . ~/mc/env.sh\n") == 0 &&
				mkfile(at(h, "nb/ext/other"), "orig\n") == 0 &&
				link(at(t, "nb/ext/other"), at(h, "nb/h/notes.txt")) == 0);
		at(d, "nb");
		CU_ASSERT_FATAL(snprintf(bin, sizeof(bin), "%s/passavant", d) < (int)sizeof(bin) &&
				test_copy_file(test_passavant_bin(), bin, 0755) == 0);
		CU_ASSERT_FATAL(snprintf(pol, sizeof(pol), "%s/p.yaml", d) < (int)sizeof(pol) &&
				write_policy("nb/p.yaml", "filesystem:\n  allowWrite: [\"%1$s/nb/h\"]\n") == 0);
		snprintf(pv, sizeof(pv), "P=%s", bin);
		snprintf(pp, sizeof(pp), "Q=%s", pol);
		snprintf(sv, sizeof(sv), "S=%s", inner);
		CU_ASSERT_FATAL(chown(at(buf, "nb/h"), 65534, 65534) == 0 &&
				chown(at(buf, "nb/h/.bashrc"), 65534, 65534) == 0 &&
				chown(at(buf, "nb/ext/other"), 65534, 65534) == 0 &&
				chown(at(buf, "nb/p.yaml"), 65534, 65534) == 0);
		at(h, "nb/h");
		snprintf(hv, sizeof(hv), "HOME=%s", h);
		st = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		ROW(stat(h, &sb) == 0 && (sb.st_mode & 07777) == 0300, "the mode 0300 of ~ was not put back: %o",
		    (unsigned)(sb.st_mode & 07777));
		(void)chmod(h, 0755);
		ROW(test_has(out, "p=") && !test_has(out, "p=0\n") && !exists("nb/h/.planted_rc") &&
			    exists("nb/h/.planted_rc.passavant-quarantine"),
		    "chmod 0300 ~: a new dot entry stayed: status %d, %s %s", st, out ? out : "", err ? err : "");
		ROW(!exists("nb/h/mc") && exists("nb/h/mc.passavant-quarantine/env.sh"),
		    "chmod 0300 ~: a new ~/mc that .bashrc names stayed: %s", err ? err : "");
		/* A hard-linked file without a dot is covered read-only
		 * (test_home_hard_link_read_only()): the append failed. */
		text = test_read_file(at(buf, "nb/ext/other"), NULL);
		ROW(text != NULL && strcmp(text, "orig\n") == 0 && exists("nb/h/notes.txt"),
		    "chmod 0300 ~: the hard-linked file changed: %s", err ? err : "");
		free(text);
		free(out);
		free(err);
		out = err = NULL;
	} else {
		fprintf(stderr, "\n  (the 0300 home row needs root and setpriv: skipped)\n");
	}

	/* B */
	CU_ASSERT_FATAL(mkdirs("home9r") == 0 && symlink("home9r", at(h, "home9")) == 0 &&
			write_policy("home9.yaml",
				     "filesystem:\n  allowWrite: [\"%1$s/home9\", \"%1$s/work\"]\n") == 0);
	snprintf(buf, sizeof(buf),
		 "if [ -f \"%1$s/mc/etc/profile.d/conda.sh\" ]; then . \"%1$s/mc/etc/profile.d/conda.sh\"; fi\n",
		 at(t, "home9"));
	CU_ASSERT_FATAL(mkfile(at(h, "home9r/.bashrc"), buf) == 0);
	st = run_fsh("home9", NULL, NULL, NULL, "home9.yaml",
		     "mkdir -p ~/mc/etc/profile.d && echo 'echo PLANTED' > ~/mc/etc/profile.d/conda.sh; echo mc=$?\n",
		     &out, &err);
	ROW(test_has(out, "mc=0\n") && !exists("home9r/mc") && exists("home9r/mc.passavant-quarantine"),
	    "HOME through a link: a new ~/mc .bashrc names by HOME as given stayed: status %d, %s %s", st,
	    out ? out : "", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;

	/* C */
	CU_ASSERT_FATAL(mkdirs("home10/.npm") == 0 && mkdirs("home10/.config/fish") == 0 &&
			mkdirs("home10/.data") == 0 &&
			mkfile(at(h, "home10/.config/fish/config.fish"),
			       "source ~/mc/etc/fish/conf.d/conda.fish\n") == 0 &&
			write_policy("home10.yaml", "filesystem:\n  allowWrite: [\"%1$s/home10\", "
				     "\"%1$s/home10/.npm\", \"%1$s/work\"]\n") == 0);
	st = run_fsh("home10", NULL, NULL, NULL, "home10.yaml",
		     "i=0; while [ $i -lt 130 ]; do head -c 262144 /dev/zero | tr '\\0' a > ~/.npm/f$i; "
		     "i=$((i+1)); done\n"
		     "mkdir -p ~/mc/etc/fish/conf.d && echo 'echo PLANTED' > ~/mc/etc/fish/conf.d/conda.fish; "
		     "echo mc=$?\n",
		     &out, &err);
	ROW(test_has(out, "mc=0\n") && !exists("home10/mc") && exists("home10/mc.passavant-quarantine"),
	    "a writable ~/.npm filled past the bounds: the new ~/mc config.fish names stayed: status %d, %s %s", st,
	    out ? out : "", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	/* The user's own files past the bounds: what was not read is
	 * unread, status 1. */
	big = malloc(262144);
	CU_ASSERT_FATAL(big != NULL);
	memset(big, 'a', 262144);
	for (int i = 0; i < 130; i++) {
		snprintf(buf, sizeof(buf), "home10/.data/f%d", i);
		fd = open(at(t, buf), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		CU_ASSERT_FATAL(fd >= 0 && write(fd, big, 262144) == 262144 && close(fd) == 0);
	}
	free(big);
	st = run_fsh("home10", NULL, NULL, NULL, "home10.yaml", "mkdir -p ~/mc2 && echo x > ~/mc2/f; echo mc2=$?\n",
		     &out, &err);
	ROW(st == 1 && test_has(out, "mc2=0\n") && test_has(err, "(8192 files, 32 MiB)"),
	    "the bounds hit by the user's own files: status %d (want 1), %s", st, err ? err : "");
	free(out);
	free(err);
}

/* rel inside the home u (hr/NAME) into buf, relative to root. */
static char *in_hr(char *buf, const char *u, const char *rel)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", u, rel) >= PATH_MAX)
		buf[0] = '\0';
	return buf;
}

/*
 * Round 31 of the attack (a8, a9): the search of a writable home's
 * start-up files read only its dot files and dot directories, and knew
 * the home as $HOME, ${HOME}, ~ and its paths. A: .bashrc sources
 * ~/dotfiles/shell.sh (an existing directory without a dot), which puts
 * $HOME/sdk-tools/bin on PATH: the new ~/sdk-tools/bin/ls stayed and ran
 * at the next shell; so with a second step (shell.sh sourcing
 * "$HOME"/dotfiles/more/lib.sh), a glob (~/rc.d/ *.sh) and the home's
 * absolute path. B: the home spelled /PARENT/$USER, /PARENT/${USER},
 * /PARENT/"$LOGNAME", ${HOME:-/x}, $HOME/"x" (the home's directory
 * bears the user's name). Each such new entry is moved aside now; an
 * entry only a file nobody names names stays. C: a file .bashrc names
 * in a tree the session could write (allowWrite ~/proj): read when
 * unchanged; changed in the session, it is reported, status 1 (it is
 * itself the plant). ~user is tested by hand (a user whose password
 * entry gives this home).
 */
static void test_home_refs_named_files(void)
{
	char h[PATH_MAX], t[PATH_MAX], u[PATH_MAX], buf[4 * PATH_MAX], fmt[PATH_MAX], *out = NULL, *err = NULL;
	static const char *const dirs[] = {"dotfiles/more", "rc.d", "abs", "proj", "proj2"};
	const char *user;
	struct passwd *pw;
	int st;

	SKIP_IF_NEEDED();
	pw = getpwuid(geteuid());
	CU_ASSERT_FATAL(pw != NULL && pw->pw_name != NULL && strchr(pw->pw_name, '%') == NULL);
	user = pw->pw_name;
	snprintf(u, sizeof(u), "hr/%s", user);
	CU_ASSERT_FATAL(mkdirs(u) == 0);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		CU_ASSERT_FATAL(mkdirs(in_hr(t, u, dirs[i])) == 0);
	snprintf(buf, sizeof(buf),
		 "[ -f ~/dotfiles/shell.sh ] && . ~/dotfiles/shell.sh\n"
		 "[ -f %1$s/hr/$USER/mc9/init.sh ] && . %1$s/hr/$USER/mc9/init.sh\n"
		 "[ -f \"%1$s/hr/${USER}/mc10/init.sh\" ] && . \"%1$s/hr/${USER}/mc10/init.sh\"\n"
		 ". %1$s/hr/\"$LOGNAME\"/mc11/init.sh 2>/dev/null\n"
		 "export PATH=${HOME:-/nonexistent}/mc12/bin:$PATH\n"
		 "export PATH=$HOME/\"mc13\"/bin:$PATH\n"
		 "for f in ~/rc.d/*.sh; do . \"$f\"; done\n"
		 ". %1$s/hr/%2$s/abs/abs.sh\n"
		 ". ~/proj/env.sh; . ~/proj2/env.sh\n",
		 root, user);
	CU_ASSERT_FATAL(mkfile(at(h, in_hr(t, u, ".bashrc")), buf) == 0);
	CU_ASSERT_FATAL(mkfile(at(h, in_hr(t, u, "dotfiles/shell.sh")),
			       "[ -d \"$HOME/sdk-tools/bin\" ] && PATH=\"$HOME/sdk-tools/bin:$PATH\"\n"
			       ". \"$HOME\"/dotfiles/more/lib.sh\n") == 0 &&
			mkfile(at(h, in_hr(t, u, "dotfiles/more/lib.sh")), ". ${HOME}/deep2/x.sh\n") == 0 &&
			mkfile(at(h, in_hr(t, u, "dotfiles/unnamed.sh")), ". ~/notnamed/x.sh\n") == 0 &&
			mkfile(at(h, in_hr(t, u, "rc.d/a.sh")), ". ~/globbed/x.sh\n") == 0 &&
			mkfile(at(h, in_hr(t, u, "abs/abs.sh")), ". ~/absnamed/x.sh\n") == 0 &&
			mkfile(at(h, in_hr(t, u, "proj/env.sh")), "# the project's environment\n") == 0 &&
			mkfile(at(h, in_hr(t, u, "proj2/env.sh")), ". ~/p2named/x.sh\n") == 0);
	snprintf(fmt, sizeof(fmt),
		 "filesystem:\n  allowWrite: [\"%%1$s/hr/%1$s\", \"%%1$s/hr/%1$s/proj\", \"%%1$s/hr/%1$s/proj2\", "
		 "\"%%1$s/work\"]\n",
		 user);
	CU_ASSERT_FATAL(write_policy("hr.yaml", fmt) == 0);
	st = run_fsh(u, NULL, NULL, NULL, "hr.yaml",
		     "for d in sdk-tools/bin deep2 globbed absnamed p2named mc9 mc10 mc11 mc12/bin mc13/bin "
		     "notnamed newproj; do mkdir -p ~/$d && echo 'echo PLANTED' > ~/$d/x.sh || echo fail=$d; done\n"
		     "echo made=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "made=0\n") && !test_has(out, "fail="),
	    "new entries named by the files the start-up files name: status %d, %s %s", st, out ? out : "",
	    err ? err : "");
	{
		static const char *const moved[] = {"sdk-tools", "deep2", "globbed", "absnamed", "p2named",
						    "mc9",	 "mc10",  "mc11",    "mc12",	 "mc13"};

		for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
			char q[64];

			ROW(!exists(in_hr(t, u, moved[i])), "~/%s stayed (a start-up file names it): %s", moved[i], err ? err : "");
			snprintf(q, sizeof(q), "%s.passavant-quarantine", moved[i]);
			ROW(exists(in_hr(t, u, q)), "~/%s was not moved aside: %s", moved[i], err ? err : "");
		}
	}
	ROW(test_has(err, "~/dotfiles/shell.sh (which ~/.bashrc names)") &&
		    test_has(err, "~/dotfiles/more/lib.sh (which ~/dotfiles/shell.sh names)") &&
		    test_has(err, "~/rc.d/a.sh (which ~/.bashrc names)"),
	    "the notice does not say which file named the entry, and through which: %s", err ? err : "");
	ROW(exists(in_hr(t, u, "notnamed/x.sh")) && exists(in_hr(h, u, "newproj/x.sh")),
	    "an entry no read file names was moved aside: %s", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;

	/* C: the session changes ~/proj/env.sh (writable): reported,
	 * status 1; what it names is not read. */
	st = run_fsh(u, NULL, NULL, NULL, "hr.yaml",
		     "echo '. ~/pplant/x.sh' >> ~/proj/env.sh; echo append=$?\n"
		     "mkdir ~/pplant && echo 'echo PLANTED' > ~/pplant/x.sh; echo pplant=$?\n",
		     &out, &err);
	ROW(st == 1 && test_has(out, "append=0\n") && test_has(out, "pplant=0\n") &&
		    test_has(err, "/proj/env.sh") && test_has(err, "changed in the session") &&
		    test_has(err, "~/.bashrc runs it"),
	    "a file .bashrc sources, changed in a writable ~/proj: status %d (want 1), %s", st, err ? err : "");
	free(out);
	free(err);
}

/*
 * Round 30's review (K): ~/aliases.sh, a hard link of
 * ~/.bashrc.d/aliases.sh (which .bashrc sources), stayed writable in a
 * writable HOME, and a write through it changed the file the host shell
 * runs; only ~/aliases.sh was moved aside after. It is covered read-only
 * by that name now, like every other existing entry: the write fails
 * (read-only file system), both names keep their content.
 */
static void test_home_hard_link_read_only(void)
{
	char h[PATH_MAX], t[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home12/.bashrc.d") == 0 &&
			mkfile(at(h, "home12/.bashrc"), "for f in ~/.bashrc.d/*.sh; do . \"$f\"; done\n") == 0 &&
			mkfile(at(h, "home12/.bashrc.d/aliases.sh"), "alias ll='ls -l'\n") == 0 &&
			link(h, at(t, "home12/aliases.sh")) == 0 &&
			write_policy("home12.yaml", "filesystem:\n  allowWrite: [\"%1$s/home12\"]\n") == 0);
	st = run_fsh("home12", NULL, NULL, NULL, "home12.yaml",
		     "echo 'echo PLANTED-K' >> ~/aliases.sh 2>/dev/null; echo via_link=$?\n"
		     "echo 'echo PLANTED-K' >> ~/.bashrc.d/aliases.sh 2>/dev/null; echo direct=$?\n"
		     "touch ~/aliases.sh 2>&1; echo x > ~/new-file; echo new=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "via_link=") && !test_has(out, "via_link=0\n") &&
		    test_has(out, "direct=") && !test_has(out, "direct=0\n") && test_has(out, "new=0\n"),
	    "a hard-linked ~/aliases.sh was writable (or the run failed): status %d, %s", st, out ? out : "");
	ROW(test_has(out, "Read-only file system"), "the write did not fail read-only: %s", out ? out : "");
	text = test_read_file(at(h, "home12/.bashrc.d/aliases.sh"), NULL);
	ROW(text != NULL && strcmp(text, "alias ll='ls -l'\n") == 0, "~/.bashrc.d/aliases.sh changed on the host: %s",
	    text ? text : "(gone)");
	free(text);
	ROW(exists("home12/aliases.sh") && !exists("home12/aliases.sh.passavant-quarantine"),
	    "~/aliases.sh was moved aside: %s", err ? err : "");
	if (st != 0)
		show(st, out, err);
	free(out);
	free(err);
}

/*
 * Round 30's review (L), as a user other than root (uid 65534 through
 * setpriv, where modes bind): the command ran chmod 0500 ~ and the mount
 * plan's empty placeholders (~231 of them, ~/.bash_profile among them,
 * which then stopped login shells reading ~/.profile) stayed in the home,
 * the failed removals unsaid. The home is opened up for the removals and
 * its mode put back: none is left.
 */
static void test_home_placeholders_read_only_home(void)
{
	char h[PATH_MAX], y[PATH_MAX], bin[PATH_MAX], hv[PATH_MAX + 8], pv[PATH_MAX + 8], yv[PATH_MAX + 8];
	char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "-i", hv, pv, yv,
			"PATH=/usr/bin:/bin", "TMPDIR=/tmp", "sh", "-c",
			"cd \"$HOME\" && \"$P\" run -p \"$Y\" -- sh -c 'chmod 0500 ~'; echo status=$?", NULL};
	char *out = NULL, *err = NULL;
	struct dirent *de;
	struct stat st;
	size_t left = 0;
	char first[256] = "";
	DIR *d;
	int rc;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0) {
		TEST_SKIP("needs root and setpriv to run as another user");
		return;
	}
	CU_ASSERT_FATAL(mkdirs("home11") == 0 && mkfile(at(h, "home11/.profile"), "echo PROFILE-RAN\n") == 0 &&
			chown(at(h, "home11/.profile"), 65534, 65534) == 0 &&
			chown(at(h, "home11"), 65534, 65534) == 0 &&
			write_policy("home11.yaml", "filesystem:\n  allowWrite: [\"%1$s/home11\"]\n") == 0 &&
			chown(at(y, "home11.yaml"), 65534, 65534) == 0 &&
			test_copy_file(test_passavant_bin(), at(bin, "pv11"), 0755) == 0);
	snprintf(hv, sizeof(hv), "HOME=%s", h);
	snprintf(pv, sizeof(pv), "P=%s", bin);
	snprintf(yv, sizeof(yv), "Y=%s", y);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && lstat(h, &st) == 0 && (st.st_mode & 07777) == 0500,
	    "the session did not make ~ 0500: %d, %s %s", rc, out ? out : "", err ? err : "");
	CU_ASSERT_FATAL(chmod(h, 0755) == 0);
	d = opendir(h);
	CU_ASSERT_FATAL(d != NULL);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, ".profile") == 0)
			continue;
		if (left++ == 0)
			snprintf(first, sizeof(first), "%s", de->d_name);
	}
	(void)closedir(d);
	ROW(left == 0, "%zu placeholders left in the home after chmod 0500 ~ (%s first): %s %s", left, first,
	    out ? out : "", err ? err : "");
	ROW(!test_has(err, "cannot remove the empty"), "a placeholder was reported left: %s", err ? err : "");
	free(out);
	free(err);
}

/*
 * The review of round 31's fixes: the search read /etc's shell files but
 * not what sets a login's environment: pam_env's
 * /etc/security/pam_env.conf names the home as @{HOME}. A line there
 * puts @{HOME}/pamtools/bin on PATH (bind-mounted over the file in a
 * mount namespace of the test's own); the new ~/pamtools the session
 * makes is moved aside, another new directory stays.
 */
static void test_home_refs_pam_env(void)
{
	char h[PATH_MAX], y[PATH_MAX], conf[PATH_MAX], f[PATH_MAX], script[4 * PATH_MAX + 512];
	char *argv[] = {"unshare", "-m", "--propagation", "private", "sh", "-c", script, NULL};
	char *out = NULL, *err = NULL;
	int rc;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/etc/security/pam_env.conf", F_OK) < 0) {
		TEST_SKIP("needs root and /etc/security/pam_env.conf to bind a file over it");
		return;
	}
	CU_ASSERT_FATAL(mkdirs("home15") == 0 && mkfile(at(f, "home15/.profile"), "# nothing\n") == 0 &&
			mkfile(at(conf, "pam_env.conf"), "PATH DEFAULT=@{HOME}/pamtools/bin:${PATH}\n") == 0 &&
			write_policy("home15.yaml", "filesystem:\n  allowWrite: [\"%1$s/home15\"]\n") == 0);
	(void)at(h, "home15");
	(void)at(y, "home15.yaml");
	snprintf(script, sizeof(script),
		 "mount --bind '%1$s' /etc/security/pam_env.conf || exit 9; "
		 "cd '%2$s' && env -i HOME='%2$s' PATH=/usr/bin:/bin TMPDIR=/tmp '%3$s' run -q -p '%4$s' -- "
		 "sh -c 'mkdir -p ~/pamtools/bin ~/other && echo x > ~/pamtools/bin/ls && echo x > ~/other/f'; "
		 "echo status=$?",
		 conf, h, test_passavant_bin(), y);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "status=0\n"), "the case did not run: %d, %s %s", rc, out ? out : "",
	    err ? err : "");
	ROW(!exists("home15/pamtools") && exists("home15/pamtools.passavant-quarantine"),
	    "a new ~/pamtools that pam_env.conf names (@{HOME}) stayed: %s", err ? err : "");
	ROW(exists("home15/other/f"), "a new ~/other nothing names was moved aside: %s", err ? err : "");
	free(out);
	free(err);
}

/*
 * Round 42 of the attack: a package runner's install tree inside a cache
 * the policy makes writable (examples/npm.yaml: allowWrite ~/.npm). npx
 * runs what it finds in ~/.npm/_npx/<hash>/node_modules at the next `npx
 * PKG` without checking it again (an agent's MCP server configured as
 * `npx -y PKG` starts it at every start of the agent); pnpm dlx keeps
 * its own in ~/.cache/pnpm/dlx. With the caches writable, both stay
 * read-only (an existing package, and a new one), the caches' other
 * entries writable.
 */
static void test_runner_install_trees(void)
{
	char h[PATH_MAX], *out = NULL, *err = NULL, *text;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home42/.npm/_npx/0a1b/node_modules/tool/bin") == 0 &&
			mkdirs("home42/.npm/_cacache") == 0 &&
			mkdirs("home42/.cache/pnpm/dlx/0c1d/node_modules/tool") == 0 &&
			mkfile(at(h, "home42/.npm/_npx/0a1b/node_modules/tool/bin/tool.js"), "orig\n") == 0 &&
			mkfile(at(h, "home42/.cache/pnpm/dlx/0c1d/node_modules/tool/index.js"), "orig\n") == 0 &&
			write_policy("home42.yaml", "filesystem:\n  allowWrite: [\"%1$s/work\", "
				     "\"%1$s/home42/.npm\", \"%1$s/home42/.cache\"]\n") == 0);
	st = run_fsh("home42", NULL, NULL, NULL, "home42.yaml",
		     "echo PLANTED > ~/.npm/_npx/0a1b/node_modules/tool/bin/tool.js 2>/dev/null; echo w1=$?\n"
		     "mkdir -p ~/.npm/_npx/9f9f/node_modules 2>/dev/null; echo w2=$?\n"
		     "echo PLANTED > ~/.cache/pnpm/dlx/0c1d/node_modules/tool/index.js 2>/dev/null; echo w3=$?\n"
		     "mkdir -p ~/.cache/pnpm/dlx/9e9e 2>/dev/null; echo w4=$?\n"
		     "echo c > ~/.npm/_cacache/entry; echo c1=$?\n"
		     "mkdir -p ~/.cache/pnpm/store && echo c > ~/.cache/pnpm/store/entry; echo c2=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "c1=0\n") && test_has(out, "c2=0\n"),
	    "the writable caches: status %d, %s %s", st, test_nz(out), test_nz(err));
	/* Round 43: in a writable cache each tree is an empty directory
	 * of the session (the host's package not there, a new one made in
	 * the session only): the file writes fail, the new directories are
	 * made but never reach the host (below). */
	ROW(test_has(out, "w1=") && !test_has(out, "w1=0\n") && test_has(out, "w2="),
	    "npx's install tree in a writable ~/.npm was writable: %s", test_nz(out));
	ROW(test_has(out, "w3=") && !test_has(out, "w3=0\n") && test_has(out, "w4="),
	    "pnpm dlx's install tree in a writable ~/.cache was writable: %s", test_nz(out));
	text = test_read_file(at(h, "home42/.npm/_npx/0a1b/node_modules/tool/bin/tool.js"), NULL);
	ROW(text != NULL && strcmp(text, "orig\n") == 0, "the npx package's file changed on the host: %s",
	    text != NULL ? text : "(unreadable)");
	free(text);
	text = test_read_file(at(h, "home42/.cache/pnpm/dlx/0c1d/node_modules/tool/index.js"), NULL);
	ROW(text != NULL && strcmp(text, "orig\n") == 0, "the pnpm dlx package's file changed on the host: %s",
	    text != NULL ? text : "(unreadable)");
	free(text);
	ROW(!exists("home42/.npm/_npx/9f9f") && !exists("home42/.cache/pnpm/dlx/9e9e"),
	    "a new package directory was made in a runner's install tree");
	free(out);
	free(err);
}

/*
 * Review of round 42: the same trees where the tools' own variables move
 * their caches: npm_config_cache (an XDG layout's ~/.cache/npm, or a
 * directory of the project, as the docs suggest for a new npx package)
 * puts npx's tree at $npm_config_cache/_npx, pnpm's cache-dir its dlx.
 * The home rows named only ~/.npm/_npx and ~/.cache/pnpm/dlx: with
 * ~/.cache writable, both moved trees were writable.
 */
static void test_runner_trees_moved(void)
{
	char h[PATH_MAX], e1[PATH_MAX + 32], e2[PATH_MAX + 32], *out = NULL, *err = NULL;
	const char *env[3];
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home42m/.cache/npm/_npx/0a1b/node_modules/tool") == 0 &&
			mkdirs("home42m/.cache/pn/dlx/0c1d") == 0 &&
			write_policy("home42m.yaml", "filesystem:\n  allowWrite: [\"%1$s/work\", "
				     "\"%1$s/home42m/.cache\"]\n") == 0);
	snprintf(e1, sizeof(e1), "npm_config_cache=%s", at(h, "home42m/.cache/npm"));
	snprintf(e2, sizeof(e2), "PNPM_CONFIG_CACHE_DIR=%s", at(h, "home42m/.cache/pn"));
	env[0] = e1;
	env[1] = e2;
	env[2] = NULL;
	st = run_fsh("home42m", NULL, env, NULL, "home42m.yaml",
		     "mkdir -p \"$npm_config_cache/_npx/9f9f\" 2>/dev/null; echo w1=$?\n"
		     "mkdir -p \"$PNPM_CONFIG_CACHE_DIR/dlx/9e9e\" 2>/dev/null; echo w2=$?\n"
		     "echo c > \"$npm_config_cache/entry\"; echo c1=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "c1=0\n"), "the writable caches: status %d, %s %s", st, test_nz(out),
	    test_nz(err));
	/* Round 43: made in the session's own directory, not on the host. */
	ROW(test_has(out, "w1=") && !exists("home42m/.cache/npm/_npx/9f9f"),
	    "npx's tree under $npm_config_cache was writable: %s", test_nz(out));
	ROW(test_has(out, "w2=") && !exists("home42m/.cache/pn/dlx/9e9e"),
	    "pnpm dlx's tree under pnpm's cache-dir was writable: %s", test_nz(out));
	free(out);
	free(err);
}

/*
 * Round 43: `npx PKG` for a package not yet installed, under
 * examples/npm.yaml's filesystem (allowWrite: [".", "~/.npm"]): since
 * ~/.npm/_npx became read-only (round 42) npx could not install there
 * and failed with EROFS. Now the tree is an empty directory of the
 * session: a real npx installs a packed local package (npm pack, no
 * registry) and runs it, a second call in the same session finds it,
 * and the host's _npx holds nothing new after the run. Also where an
 * XDG layout moves the cache (npm_config_cache=~/.cache/npm).
 */
static void test_npx_in_session(void)
{
	char h[PATH_MAX], cmd[3 * PATH_MAX + 256], tgz[PATH_MAX + 32], e1[PATH_MAX + 32], script[4 * PATH_MAX + 1024];
	char *out = NULL, *err = NULL;
	const char *env[2];
	int st;

	SKIP_IF_NEEDED();
	if (system("command -v npx >/dev/null 2>&1") != 0) {
		fprintf(stderr, " (skipped: no npx)");
		return;
	}
	CU_ASSERT_FATAL(mkdirs("home43n/.npm") == 0 && mkdirs("home43n/.cache/npm") == 0 &&
			mkdirs("npx43/pkg") == 0 &&
			mkfile(at(h, "npx43/pkg/package.json"),
			       "{\"name\":\"hello43\",\"version\":\"1.0.0\",\"bin\":{\"hello43\":\"cli.js\"}}\n") == 0 &&
			mkfile(at(h, "npx43/pkg/cli.js"), "#!/usr/bin/env node\nconsole.log('hello43 ran');\n") == 0 &&
			chmod(at(h, "npx43/pkg/cli.js"), 0755) == 0 &&
			write_policy("home43n.yaml", "filesystem:\n  allowWrite: [\"%1$s/work\", \"%1$s/home43n/.npm\", "
				     "\"%1$s/home43n/.cache\"]\n") == 0);
	CU_ASSERT_FATAL(snprintf(cmd, sizeof(cmd),
				 "cd '%1$s/npx43/pkg' && HOME='%1$s/npx43' npm pack --silent --pack-destination "
				 "'%1$s/npx43' >/dev/null 2>&1",
				 root) < (int)sizeof(cmd));
	CU_ASSERT_FATAL(system(cmd) == 0);
	CU_ASSERT_FATAL(snprintf(tgz, sizeof(tgz), "%s/npx43/hello43-1.0.0.tgz", root) < (int)sizeof(tgz));
	CU_ASSERT_FATAL(snprintf(script, sizeof(script),
		 "export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false\n"
		 "npx --yes --prefer-offline --package='file:%1$s' hello43; echo n1=$?\n"
		 "npx --yes --prefer-offline --package='file:%1$s' hello43; echo n2=$?\n",
		 tgz) < (int)sizeof(script));
	st = run_fsh("home43n", NULL, NULL, NULL, "home43n.yaml", script, &out, &err);
	ROW(st == 0 && test_has(out, "hello43 ran\nn1=0\n"), "npx of a new package failed in a writable ~/.npm: "
	    "status %d, %s %s", st, test_nz(out), test_nz(err));
	ROW(test_has(out, "hello43 ran\nn2=0\n"), "npx's second call failed: %s", test_nz(out));
	free(out);
	free(err);
	out = err = NULL;
	/* The project's .npmrc moves the cache (an XDG layout): npm in
	 * the session and the host's next npx there both use
	 * ~/.cache/npm/_npx. */
	CU_ASSERT_FATAL(mkfile(at(h, "work/.npmrc"), "cache = ~/.cache/npm\n") == 0);
	CU_ASSERT_FATAL(snprintf(script, sizeof(script),
				 "export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false\n"
				 "npx --yes --prefer-offline --package='file:%1$s' hello43; echo n3=$?\n"
				 "mkdir -p ~/.cache/npm/_npx/9f9f; echo m=$?\n",
				 tgz) < (int)sizeof(script));
	st = run_fsh("home43n", NULL, NULL, NULL, "home43n.yaml", script, &out, &err);
	(void)unlink(at(h, "work/.npmrc"));
	ROW(st == 0 && test_has(out, "hello43 ran\nn3=0\n"), "npx with the cache at ~/.cache/npm failed: %s %s",
	    test_nz(out), test_nz(err));
	CU_ASSERT_FATAL(snprintf(cmd, sizeof(cmd),
				 "test -z \"$(ls -A '%1$s/home43n/.npm/_npx' '%1$s/home43n/.cache/npm/_npx' "
				 "2>/dev/null)\"",
				 root) < (int)sizeof(cmd));
	ROW(system(cmd) == 0, "npx's install reached the host's _npx");
	/* Without the cache writable, the tree stays as the row says. */
	env[0] = e1;
	env[1] = NULL;
	snprintf(e1, sizeof(e1), "npm_config_cache=%s", at(h, "npx43/ro"));
	CU_ASSERT_FATAL(mkdirs("npx43/ro/_npx") == 0);
	free(out);
	free(err);
	out = err = NULL;
	st = run_fsh("home43n", NULL, env, NULL, "home43n.yaml",
		     "mkdir \"$npm_config_cache/_npx/x\" 2>/dev/null; echo r=$?\n", &out, &err);
	ROW(st == 0 && test_has(out, "r=") && !test_has(out, "r=0\n") && !exists("npx43/ro/_npx/x"),
	    "a read-only cache's _npx became writable: %s %s", test_nz(out), test_nz(err));
	free(out);
	free(err);
}

/*
 * review43f: the local-vimrc family fix43c began with .lvimrc (vim's
 * localvimrc): thinca's vim-localrc sources a project's .local.vimrc
 * without asking, LucHermitte's local_vimrc its _vimrc_local.vim, when the
 * host's vim opens a file there. The session could write both.
 */
static void test_local_vimrc_names(void)
{
	char *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	st = run_fsh("home", NULL, NULL, NULL, "work.yaml",
		     "echo 'call system(\"id\")' > .local.vimrc 2>/dev/null; echo l1=$?\n"
		     "echo 'call system(\"id\")' > _vimrc_local.vim 2>/dev/null; echo l2=$?\n"
		     "echo x > notes43f.txt; echo n=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "n=0\n"), "the project: status %d, %s %s", st, test_nz(out), test_nz(err));
	ROW(test_has(out, "l1=") && !test_has(out, "l1=0") && !exists("work/.local.vimrc"),
	    "the project's .local.vimrc was writable: %s", test_nz(out));
	ROW(test_has(out, "l2=") && !test_has(out, "l2=0") && !exists("work/_vimrc_local.vim"),
	    "the project's _vimrc_local.vim was writable: %s", test_nz(out));
	drop("work/notes43f.txt");
	free(out);
	free(err);
}

/*
 * review43f: the npmrc files fix43c's plan_npmrc_caches() did not read or
 * did not read as npm and pnpm do. (1) A cache= with a trailing slash or a
 * '..' (cache=~/.cache/tn/) made a protected path the sandbox refuses
 * ("has an empty component"): the whole run was refused. (2) pnpm's own
 * global rc (~/.config/pnpm/rc, where `pnpm config set --global` writes
 * cache-dir), the global npmrc $npm_config_globalconfig names, npm's
 * ${VAR?} and a relative cache= (npm resolves it against its working
 * directory) were not followed: their _npx and dlx were writable on the
 * host in a writable cache.
 */
static void test_npmrc_caches_read_as_npm(void)
{
	char h[PATH_MAX], e1[PATH_MAX + 64], rc[2 * PATH_MAX], *out = NULL, *err = NULL;
	const char *env[2];
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("home43r/.cache/tn/_npx/0a") == 0 && mkdirs("home43r/.cache/pn/dlx/0c") == 0 &&
			mkdirs("home43r/.cache/gn/_npx/0d") == 0 && mkdirs("home43r/.config/pnpm") == 0 &&
			mkdirs("work/rel43r/c/_npx/0e") == 0 && mkdirs("g43r") == 0 &&
			mkdirs("home43r/.cache/hn/_npx/0f") == 0 &&
			write_policy("home43r.yaml", "filesystem:\n  allowWrite: [\"%1$s/work\", "
				     "\"%1$s/home43r/.cache\"]\n") == 0);
	/* (1) ~/.npmrc: a trailing slash, then a '..'. */
	CU_ASSERT_FATAL(mkfile(at(h, "home43r/.npmrc"), "cache=~/.cache/tn/\ncache=~/.cache/x/../tn//\n") == 0);
	st = run_fsh("home43r", NULL, NULL, NULL, "home43r.yaml",
		     "mkdir -p ~/.cache/tn/_npx/9a 2>/dev/null; echo w1=$?\necho c > ~/.cache/entry; echo c1=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "c1=0\n"), "cache=~/.cache/tn/ refused the run: status %d, %s %s", st,
	    test_nz(out), test_nz(err));
	ROW(!exists("home43r/.cache/tn/_npx/9a"), "cache=~/.cache/tn/: its _npx was writable: %s", test_nz(out));
	free(out);
	free(err);
	out = err = NULL;
	CU_ASSERT_FATAL(unlink(at(h, "home43r/.npmrc")) == 0);
	/* (2) pnpm's global rc, $npm_config_globalconfig with ${VAR?}, a
	 * relative cache= (the working directory is work), ${HOME?} in
	 * ~/.npmrc (fix43c looked up a variable named "HOME?"). */
	CU_ASSERT_FATAL(mkfile(at(h, "home43r/.config/pnpm/rc"), "cache-dir=~/.cache/pn\n") == 0 &&
			mkfile(at(h, "home43r/.npmrc"), "cache=${HOME?}/.cache/hn\n") == 0);
	CU_ASSERT_FATAL(snprintf(rc, sizeof(rc), "cache=${NOT_SET_43R?}%s/home43r/.cache/gn\ncache=rel43r/c\n", root) <
			(int)sizeof(rc));
	CU_ASSERT_FATAL(mkfile(at(h, "g43r/npmrc"), rc) == 0);
	snprintf(e1, sizeof(e1), "npm_config_globalconfig=%s", at(h, "g43r/npmrc"));
	env[0] = e1;
	env[1] = NULL;
	st = run_fsh("home43r", NULL, env, NULL, "home43r.yaml",
		     "mkdir -p ~/.cache/pn/dlx/9b 2>/dev/null; echo w2=$?\n"
		     "mkdir -p ~/.cache/gn/_npx/9c 2>/dev/null; echo w3=$?\n"
		     "mkdir -p rel43r/c/_npx/9d 2>/dev/null; echo w4=$?\n"
		     "mkdir -p ~/.cache/hn/_npx/9f 2>/dev/null; echo w5=$?\n"
		     "echo c > ~/.cache/entry; echo c2=$?\n",
		     &out, &err);
	ROW(st == 0 && test_has(out, "c2=0\n"), "the writable cache: status %d, %s %s", st, test_nz(out),
	    test_nz(err));
	ROW(test_has(out, "w2=") && !exists("home43r/.cache/pn/dlx/9b"),
	    "pnpm's global rc's cache-dir: its dlx was writable: %s", test_nz(out));
	ROW(test_has(out, "w3=") && !exists("home43r/.cache/gn/_npx/9c"),
	    "$npm_config_globalconfig's cache=${VAR?}...: its _npx was writable: %s", test_nz(out));
	ROW(test_has(out, "w4=") && !exists("work/rel43r/c/_npx/9d"),
	    "a relative cache=: its _npx was writable: %s", test_nz(out));
	ROW(test_has(out, "w5=") && !exists("home43r/.cache/hn/_npx/9f"),
	    "cache=${HOME?}/...: its _npx was writable: %s", test_nz(out));
	free(out);
	free(err);
	(void)unlink(at(h, "home43r/.config/pnpm/rc"));
	(void)unlink(at(h, "home43r/.npmrc"));
}

/*
 * Round 46 (lead): as root, a denied path inside a directory of another
 * user that is not even searchable (a 0700 home, as Fedora and newer
 * Ubuntu make them): the launcher's user namespace maps root only, so
 * it has no override there, and unseen.c's fallback for a directory it
 * cannot list opened "." in it, which needs that search right. Every
 * start was refused ("cannot open ... for the Landlock rules") while
 * one such directory held a denied path. It starts now, and what lies
 * inside stays out of reach.
 */
static void test_unsearchable_other_dir(void)
{
	char buf[PATH_MAX], *out = NULL, *err = NULL;
	int st;

	SKIP_IF_NEEDED();
	if (geteuid() != 0) {
		TEST_SKIP("needs root to make a directory of another user");
		return;
	}
	CU_ASSERT_FATAL(mkdirs("o46/.ssh") == 0 && mkfile(at(buf, "o46/.ssh/id_o46"), "O46-KEY\n") == 0 &&
			write_policy("o46.yaml", "filesystem:\n  allowWrite: [\"%1$s/work\"]\n"
				     "  denyRead: [\"%1$s/o46/.ssh\", \"%1$s/o46/.netrc\"]\n") == 0);
	CU_ASSERT_FATAL(chown(at(buf, "o46/.ssh/id_o46"), 65534, 65534) == 0 &&
			chown(at(buf, "o46/.ssh"), 65534, 65534) == 0 && chown(at(buf, "o46"), 65534, 65534) == 0 &&
			chmod(buf, 0700) == 0);
	st = run_fsh("home", NULL, NULL, NULL, "o46.yaml", "echo started; cat ../o46/.ssh/id_o46\n", &out, &err);
	ROW(st != 125 && test_has(out, "started"), "a 0700 directory of another user refused the start: %d, %s %s",
	    st, test_nz(out), test_nz(err));
	ROW(!test_has(out, "O46-KEY"), "the key in it was read: %s", test_nz(out));
	(void)chmod(at(buf, "o46"), 0755);
	free(out);
	free(err);
}

/*
 * Round 46 (the family "a path the launcher must protect that it cannot
 * resolve is skipped without a word"): npmrc_tree() returned 0 on a
 * cache= value longer than PATH_MAX, as written, once its ${VAR}s were put
 * in or once joined to the working directory. npm's path.resolve() folds
 * a run of "./" away, so such a value names a short tree npm uses, left
 * writable: npx runs what the sandbox put in its _npx. Now each refuses
 * the start, naming the file and the key, never the value. And the
 * .npmrc files above the working directory were read only 128 levels up:
 * a project's, above a deeper working directory, was never read.
 */
static void test_npmrc_long_values(void)
{
	char h[PATH_MAX], pol[PATH_MAX], sc[PATH_MAX], cwd[PATH_MAX], deep[PATH_MAX], e1[3 * PATH_MAX];
	char *rc = malloc(3 * PATH_MAX), *out = NULL, *err = NULL;
	const char *env[2] = {e1, NULL};
	size_t o = 0;
	int st;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(rc != NULL);
	CU_ASSERT_FATAL(mkdirs("work/c46l/_npx/0a") == 0 && mkdirs("home46l/.cache/dp46/_npx/0b") == 0 &&
			write_policy("home46l.yaml", "filesystem:\n  allowWrite: [\"%1$s/work\", "
				     "\"%1$s/home46l/.cache\"]\n") == 0);
	/* (1) as written: cache=././.../c46l, 4,206 bytes */
	o = (size_t)sprintf(rc, "cache=");
	for (int i = 0; i < 2100; i++)
		o += (size_t)sprintf(rc + o, "./");
	sprintf(rc + o, "c46l\n");
	CU_ASSERT_FATAL(mkfile(at(h, "work/.npmrc"), rc) == 0);
	st = run_fsh("home46l", NULL, NULL, NULL, "home46l.yaml", "mkdir -p c46l/_npx/9a 2>/dev/null; echo w1=$?\n",
		     &out, &err);
	ROW(st != 0 && !exists("work/c46l/_npx/9a") && test_has(err, "/work/.npmrc: its cache= value is longer than PATH_MAX as written"),
	    "a cache= of 4,206 bytes (./ runs) started, its _npx writable: status %d, %s %s", st, test_nz(out),
	    test_nz(err));
	ROW(!test_has(err, "././."), "the error showed the value: %s", test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	/* (2) once its ${VAR}s are put in: cache-dir=${X46L}/c46l, X46L a
	 * run of "/." of 4,200 bytes */
	o = (size_t)sprintf(e1, "X46L=");
	for (int i = 0; i < 2100; i++)
		o += (size_t)sprintf(e1 + o, "/.");
	CU_ASSERT_FATAL(mkfile(at(h, "work/.npmrc"), "cache-dir=${X46L}/c46l\n") == 0);
	st = run_fsh("home46l", NULL, env, NULL, "home46l.yaml", "echo started\n", &out, &err);
	ROW(st != 0 && !test_has(out, "started") &&
		    test_has(err, "its cache-dir= value is longer than PATH_MAX once its ${VAR}s are put in"),
	    "a cache-dir=${VAR} of 4,200 bytes started: status %d, %s %s", st, test_nz(out), test_nz(err));
	free(out);
	free(err);
	out = err = NULL;
	/* (3) a working directory 140 levels below the project's .npmrc */
	CU_ASSERT_FATAL(mkfile(at(h, "work/.npmrc"), "cache=~/.cache/dp46\n") == 0);
	o = (size_t)snprintf(deep, sizeof(deep), "work/dp46");
	for (int i = 0; i < 140; i++)
		o += (size_t)snprintf(deep + o, sizeof(deep) - o, "/d");
	CU_ASSERT_FATAL(mkdirs(deep) == 0);
	snprintf(sc, sizeof(sc), "%s/scripts/deep46.sh", root);
	CU_ASSERT_FATAL(mkfile(sc, "mkdir -p ~/.cache/dp46/_npx/9b 2>/dev/null; echo w3=$?\n") == 0);
	{
		struct test_sbx_run r = {at(cwd, deep), at(h, "home46l"), NULL, at(pol, "home46l.yaml"), sc, NULL, NULL};

		st = test_sbx_run(&r, &out, &err, RUN_TIMEOUT_MS);
	}
	ROW(st == 0 && test_has(out, "w3=") && !exists("home46l/.cache/dp46/_npx/9b"),
	    "the .npmrc 141 levels above the working directory was not read: its _npx was writable: status %d, "
	    "%s %s",
	    st, test_nz(out), test_nz(err));
	free(out);
	free(err);
	free(rc);
	drop("work/.npmrc");
	test_rmtree(at(h, "work/dp46"));
	test_rmtree(at(h, "work/c46l"));
}

/*
 * allowWrite naming a file (round 31's helper found it): the workspace
 * rows were joined to it as to a directory, and each one's nearest
 * existing part, the file itself, was covered read-only (118 mounts);
 * the check after the run could not open it and said the check did not
 * finish. The file is writable now, one mount, nothing said.
 */
static void test_allow_write_file(void)
{
	char f[PATH_MAX], y[PATH_MAX], w[PATH_MAX], cmd[4 * PATH_MAX];
	char *argv[] = {"sh", "-c", cmd, NULL};
	char *out = NULL, *err = NULL, *text;
	int rc;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("awf/proj") == 0 && mkfile(at(f, "awf/notes.txt"), "one\n") == 0 &&
			write_policy("awf.yaml", "filesystem:\n  allowWrite: [\"%1$s/awf/notes.txt\"]\n") == 0);
	(void)at(y, "awf.yaml");
	(void)at(w, "awf/proj");
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && '%s' run -q -p '%s' -- sh -c 'echo two >> \"$0\" && echo wrote; "
		 "grep -c \" $0 \" /proc/self/mountinfo' '%s'; echo status=$?",
		 w, test_passavant_bin(), y, f);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "wrote\n1\nstatus=0\n"),
	    "a file named by allowWrite: not written with one mount, or a status that is not 0: %s %s", out ? out : "",
	    err ? err : "");
	ROW(!test_has(err, "cannot check") && !test_has(err, "did not finish"), "the check said: %s", err ? err : "");
	text = test_read_file(f, NULL);
	ROW(text != NULL && strcmp(text, "one\ntwo\n") == 0, "the file on the host: %s", text ? text : "(gone)");
	free(text);
	free(out);
	free(err);
}

/*
 * A placeholder that cannot be removed after the run (here: ~/.kaggle,
 * where the plan puts an empty kaggle.json, made a read-only mount from
 * outside while the command ran, as a remounted file system would):
 * named on stderr with what to do, and a status that is not 0, since an
 * empty ~/.bash_profile left behind stops login shells reading
 * ~/.profile. The status was the command's 0.
 */
static void test_home_placeholder_left_status(void)
{
	char h[PATH_MAX], y[PATH_MAX], f[PATH_MAX], script[4 * PATH_MAX + 512];
	char *argv[] = {"unshare", "-m", "--propagation", "private", "sh", "-c", script, NULL};
	char *out = NULL, *err = NULL;
	int rc;

	SKIP_IF_NEEDED();
	if (geteuid() != 0) {
		TEST_SKIP("needs root to remount the home read-only");
		return;
	}
	CU_ASSERT_FATAL(mkdirs("home13/.kaggle") == 0 && mkfile(at(f, "home13/.profile"), "echo PROFILE-RAN\n") == 0 &&
			write_policy("home13.yaml", "filesystem:\n  allowWrite: [\"%1$s/home13\"]\n") == 0);
	(void)at(h, "home13");
	(void)at(y, "home13.yaml");
	/* The command says it started (a file in the home), then waits for
	 * the remount; the outer shell remounts and lets it end. */
	CU_ASSERT_FATAL(snprintf(script, sizeof(script),
		 "mount --bind '%1$s/.kaggle' '%1$s/.kaggle' || exit 9; "
		 "cd /tmp && env -i HOME='%1$s' PATH=/usr/bin:/bin TMPDIR=/tmp '%2$s' run -p '%3$s' -- "
		 "sh -c 'touch ~/started; i=0; while [ ! -e ~/go-on ] && [ $i -lt 600 ]; do sleep 0.1; "
		 "i=$((i+1)); done' & pid=$!; "
		 "i=0; while [ ! -e '%1$s/started' ] && kill -0 $pid && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); "
		 "done; "
		 "touch '%1$s/go-on' && mount -o remount,bind,ro '%1$s/.kaggle' || echo remount-failed; "
		 "wait $pid; echo status=$?",
		 h, test_passavant_bin(), y) < (int)sizeof(script));
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "status=") && !test_has(out, "remount-failed"),
	    "the case did not run: %d, %s %s", rc, out ? out : "", err ? err : "");
	ROW(test_has(err, "cannot remove the empty file") && test_has(err, "/home13/.kaggle/kaggle.json"),
	    "the placeholder left was not named: %s", err ? err : "");
	ROW(test_has(out, "status=1\n"), "the status was not 1 with a placeholder left: %s %s", out ? out : "",
	    err ? err : "");
	free(out);
	free(err);
}

/*
 * Round 43 of the attack: `run` started in a directory the host's other
 * programs and users share, with the default allowWrite ["."], bound the
 * host's own over the sandbox's private one: in /tmp every file of the
 * host's /tmp was the command's (the running sessions' directories of
 * the same user, with the trust.pem and resolver files their sandboxes
 * read), in /dev/shm the shared memory of host processes; the start-up
 * placeholders were made there for every user to see. Such a tree (a
 * sticky world-writable directory whatever its name, /dev/shm, the
 * runtime directories) is left out of allowWrite with a warning, and a
 * tree holding one (/var here, / as the working directory) refuses the
 * start.
 */
static void test_shared_dirs_r43(void)
{
	char host_tmp[PATH_MAX];
	char sc[PATH_MAX], y[PATH_MAX], yd[PATH_MAX], cmd[4 * PATH_MAX], probe[64];
	char *argv[] = {"sh", "-c", cmd, NULL};
	static const char *const dirs[] = {"/tmp", "/dev/shm", NULL};
	char *out = NULL, *err = NULL;
	struct stat st;
	int rc;

	SKIP_IF_NEEDED();
	snprintf(probe, sizeof(probe), "pv-r43-probe-%ld", (long)getpid());
	CU_ASSERT_FATAL(mkdirs("r43/scratch") == 0 && chmod(at(sc, "r43/scratch"), 01777) == 0 &&
			write_policy("r43var.yaml", "filesystem:\n  allowWrite: [\"/var\"]\n") == 0 &&
			write_policy("r43dot.yaml", "filesystem:\n  allowWrite: [\".\"]\n") == 0);
	(void)at(y, "r43var.yaml");
	(void)at(yd, "r43dot.yaml");
	for (size_t i = 0; i < 3; i++) {
		const char *d = i < 2 ? dirs[i] : sc;
		char host[PATH_MAX + 80];

		if (stat(d, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && '%s' run -q -p '%s' -- sh -c 'echo planted 2>/dev/null > ./%s && echo wrote; "
			 "echo also > /tmp/%s-t'; echo status=$?",
			 d, test_passavant_bin(), yd, probe, probe);
		rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		snprintf(host, sizeof(host), "%s/%s", d, probe);
		/* /tmp and /dev/shm: the sandbox's own; another: read-only. */
		ROW(rc == 0 && test_has(out, "status=0\n") && test_has(out, "wrote\n") == (i < 2),
		    "run in %s: the command did not run: %s %s", d, out ? out : "", err ? err : "");
		ROW(lstat(host, &st) < 0 && errno == ENOENT, "run in %s: the command's file is on the host: %s", d,
		    host);
		snprintf(host, sizeof(host), "/tmp/%s-t", probe);
		ROW(lstat(host, &st) < 0 && errno == ENOENT, "run in %s: the command's /tmp file is on the host", d);
		ROW(test_has(err, "other programs and users share") && test_has(err, d),
		    "run in %s: no warning naming the directory: %s", d, err ? err : "");
		ROW(!test_has(err, "cannot check") && !test_has(err, "did not finish") && !test_has(err, "another passavant"),
		    "run in %s: the check walked the shared directory: %s", d, err ? err : "");
		(void)unlink(host);
		snprintf(host, sizeof(host), "%s/%s", d, probe);
		(void)unlink(host);
		free(out);
		free(err);
		out = err = NULL;
	}
	/* A tree that holds one: refused before anything is made. */
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' run -q -p '%s' -- sh -c 'echo ran'; echo status=$?", sc,
		 test_passavant_bin(), y);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "status=125\n") && !test_has(out, "ran\n"),
	    "allowWrite /var (holding /var/tmp): not refused: %s %s", out ? out : "", err ? err : "");
	ROW(test_has(err, "allowWrite /var holds /var/tmp"), "allowWrite /var: the refusal does not say why: %s",
	    err ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	snprintf(cmd, sizeof(cmd), "cd / && '%s' run -q -p '%s' -- sh -c 'echo ran'; echo status=$?",
		 test_passavant_bin(), yd);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "status=125\n") && !test_has(out, "ran\n") && test_has(err, "allowWrite / holds"),
	    "run in /: not refused: %s %s", out ? out : "", err ? err : "");
	free(out);
	free(err);
	out = err = NULL;
	/* Its review (review43e): $TMPDIR, where the session directories
	 * are made, inside the writable tree: the directory of another
	 * running session of the user (started elsewhere) is not the
	 * command's to change, nor is $TMPDIR itself. */
	CU_ASSERT_FATAL(mkdirs("r43/tproj/tmpd") == 0 && mkdirs("r43/tother") == 0);
	snprintf(cmd, sizeof(cmd),
		 "export TMPDIR='%s/tproj/tmpd'; cd '%s/tother' && { '%s' run -q -p '%s' -- sleep 6 & }; sleep 2; "
		 "cd ../tproj && '%s' run -q -p '%s' -- sh -c 'for d in tmpd/passavant-*; do echo x >> $d/trust.pem && "
		 "echo tampered; done; echo p > tmpd/p && echo wrote-tmpd; mktemp >/dev/null && echo mktemp-ok'; "
		 "echo status=$?; wait",
		 at(sc, "r43"), at(host_tmp, "r43"), test_passavant_bin(), yd, test_passavant_bin(), yd);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "status=0\n") && test_has(out, "mktemp-ok\n"),
	    "TMPDIR in the tree: the command did not run: %s %s", out ? out : "", err ? err : "");
	ROW(!test_has(out, "tampered\n") && !test_has(out, "wrote-tmpd\n"),
	    "TMPDIR in the tree: another session's directory or TMPDIR written: %s", out ? out : "");
	free(out);
	free(err);
	out = err = NULL;
	/* Its review (review43e): a tree that holds the host's /tmp as a
	 * bind mount under another name (the recursive bind of the tree
	 * made the host's /tmp writable again): refused too. */
	if (geteuid() != 0 || access("/usr/bin/mount", X_OK) < 0)
		return;
	CU_ASSERT_FATAL(mkdirs("r43/bproj/t") == 0);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mount --bind /tmp t || exit 9; '%s' run -q -p '%s' -- sh -c 'echo pwn > t/%s-b && echo ran'; "
		 "echo status=$?; umount -l t",
		 at(sc, "r43/bproj"), test_passavant_bin(), yd, probe);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	{
		char host[PATH_MAX];

		snprintf(host, sizeof(host), "/tmp/%s-b", probe);
		ROW(rc == 0 && test_has(out, "status=125\n") && !test_has(out, "ran\n") && test_has(err, "holds") &&
			    test_has(err, "r43/bproj/t"),
		    "a tree holding a bind mount of /tmp: not refused: %s %s", out ? out : "", err ? err : "");
		ROW(lstat(host, &st) < 0 && errno == ENOENT, "a tree holding a bind mount of /tmp: %s written", host);
		(void)unlink(host);
	}
	free(out);
	free(err);
}

/*
 * Round 44 (fix44t), the shared-directory family once more. A link of
 * the home into a writable tree that lies in the host's /tmp or
 * /dev/shm (run from /tmp/proj: the tree is bound into the sandbox's
 * private /tmp) was skipped by the home's walk, as if everything below
 * /tmp and /dev were the sandbox's own: ~/.bashrc -> /tmp/proj/rc was
 * the command's to write, for the host's next shell. And a TMPDIR the
 * command cannot use as the host's (/var/tmp and a sticky shared
 * directory, read-only in the session; /dev/shm, shared memory) was
 * passed on: mktemp and node's os.tmpdir() failed with EROFS. Now the
 * link's target is judged like any other (read-only), and the
 * command's TMPDIR is the sandbox's private /tmp, with a notice; a
 * TMPDIR of the user's own in the writable tree is kept.
 */
static void test_shared_dirs_r44(void)
{
	char sc[PATH_MAX], yd[PATH_MAX], hm[PATH_MAX], proj[PATH_MAX], tdir[PATH_MAX], cmd[6 * PATH_MAX];
	char projs[2][64], link[PATH_MAX + 16], file[PATH_MAX + 16];
	char *argv[] = {"sh", "-c", cmd, NULL};
	char *out = NULL, *err = NULL, *text;
	int rc;

	SKIP_IF_NEEDED();
	snprintf(projs[0], sizeof(projs[0]), "/tmp/pv-r44-%ld", (long)getpid());
	snprintf(projs[1], sizeof(projs[1]), "/dev/shm/pv-r44-%ld", (long)getpid());
	CU_ASSERT_FATAL(mkdirs("r44/home") == 0 && mkdirs("r44/proj/own-tmp") == 0 && mkdirs("r44/sticky") == 0 &&
			chmod(at(sc, "r44/sticky"), 01777) == 0 &&
			write_policy("r44dot.yaml", "filesystem:\n  allowWrite: [\".\"]\n") == 0);
	(void)at(yd, "r44dot.yaml");
	(void)at(hm, "r44/home");
	/* The home's links into a tree in the host's /tmp and /dev/shm. */
	for (size_t i = 0; i < 2; i++) {
		const char *d = projs[i];

		if (mkdir(d, 0755) < 0 && errno != EEXIST)
			continue;
		snprintf(file, sizeof(file), "%s/rc", d);
		snprintf(link, sizeof(link), "%s/.bashrc%zu", hm, i);
		CU_ASSERT_FATAL(mkfile(file, "original\n") == 0 && (symlink(file, link) == 0 || errno == EEXIST));
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && env HOME='%s' '%s' run -q -p '%s' -- sh -c 'echo pwn >> ~/.bashrc%zu && echo "
			 "wrote-link; echo pwn >> ./rc && echo wrote-direct; echo ok > ./other && echo wrote-other'; "
			 "echo status=$?",
			 d, hm, test_passavant_bin(), yd, i);
		rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		ROW(rc == 0 && test_has(out, "status=0\n") && test_has(out, "wrote-other\n"),
		    "run in %s: the command did not run: %s %s", d, out ? out : "", err ? err : "");
		ROW(!test_has(out, "wrote-link\n") && !test_has(out, "wrote-direct\n"),
		    "run in %s: ~/.bashrc%zu's target in the tree was writable: %s", d, i, out ? out : "");
		text = test_read_file(file, NULL);
		ROW(text != NULL && strcmp(text, "original\n") == 0, "%s changed: %s", file, text ? text : "(gone)");
		free(text);
		free(out);
		free(err);
		out = err = NULL;
		(void)unlink(file);
		snprintf(file, sizeof(file), "%s/other", d);
		(void)unlink(file);
		(void)rmdir(d);
	}
	/* TMPDIR: each one the command cannot use as the host's becomes
	 * the sandbox's /tmp; real programs make their files there. */
	(void)at(proj, "r44/proj");
	for (size_t i = 0; i < 3; i++) {
		const char *t = i == 0 ? "/var/tmp" : i == 1 ? "/dev/shm" : at(tdir, "r44/sticky");
		char want[PATH_MAX + 8], py[PATH_MAX + 8];

		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && env TMPDIR='%s' '%s' run -p '%s' -- sh -c 'echo T=$TMPDIR; "
			 "mktemp >/dev/null && echo mktemp-ok; "
			 "python3 -c \"import tempfile; print(\\\"py=\\\" + tempfile.mkstemp()[1])\"; "
			 "node -e \"const fs = require(\\\"fs\\\"), os = require(\\\"os\\\"); "
			 "fs.mkdtempSync(os.tmpdir() + \\\"/n\\\"); console.log(\\\"node-ok\\\")\"'; echo status=$?",
			 proj, t, test_passavant_bin(), yd);
		rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		snprintf(want, sizeof(want), "T=/tmp\n");
		snprintf(py, sizeof(py), "py=/tmp/");
		ROW(rc == 0 && test_has(out, "status=0\n") && test_has(out, want) && test_has(out, "mktemp-ok\n") &&
			    test_has(out, py) && test_has(out, "node-ok\n"),
		    "TMPDIR=%s: the command's temporary files failed: %s %s", t, out ? out : "", err ? err : "");
		ROW(test_has(err, "TMPDIR=") && test_has(err, "the command's TMPDIR is /tmp"),
		    "TMPDIR=%s: no notice: %s", t, err ? err : "");
		free(out);
		free(err);
		out = err = NULL;
	}
	/* TMPDIR, where the session directories are made, inside the
	 * writable tree (review43e made it read-only): the notice says
	 * so, not that naming it in allowWrite would help (it is in a
	 * tree already). A TMP of the user's own in the tree is kept. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%1$s' && env TMPDIR='%1$s/own-tmp' '%2$s' run -p '%3$s' -- sh -c 'echo T=$TMPDIR; mktemp >/dev/null "
		 "&& echo mktemp-ok'; echo status=$?; mkdir -p own-tmp2 && env TMPDIR=/tmp TMP='%1$s/own-tmp2' '%2$s' "
		 "run -p '%3$s' -- sh -c 'echo U=$TMP; mktemp -p \"$TMP\" >/dev/null && echo tmp-ok'; echo status2=$?",
		 proj, test_passavant_bin(), yd);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "status=0\n") && test_has(out, "T=/tmp\n") && test_has(out, "mktemp-ok\n"),
	    "TMPDIR in the tree: the command did not run: %s %s", out ? out : "", err ? err : "");
	ROW(test_has(err, "holds passavant's session directories") && test_has(err, "r44/proj") &&
		    !test_has(err, "to keep yours"),
	    "TMPDIR in the tree: the notice does not say what happens: %s", err ? err : "");
	ROW(test_has(out, "status2=0\n") && test_has(out, "/own-tmp2\n") && test_has(out, "tmp-ok\n") &&
		    !test_has(err, "TMP="),
	    "TMP of the tree's own: not kept: %s %s", out ? out : "", err ? err : "");
	free(out);
	free(err);
}

/*
 * Round 44 (fix44t): secret files the command can read only through
 * their group or other bits, another user's store files (a ~/.netrc
 * 0644, an id_rsa 0644 in a ~/.ssh 0711): the HOME rows were denied in
 * HOME alone (and the Windows and Mac homes), so another Linux user's
 * were read in clear. A home in /home (the password database's homes
 * the same) now has them covered: as root, and as another user who can
 * read them through their mode. A file of the project stays readable.
 */
static void test_other_users_r44(void)
{
	char bob[64], proj[PATH_MAX], cmd[4 * PATH_MAX], f[128];
	char *argv[] = {"sh", "-c", cmd, NULL};
	char *out = NULL, *err = NULL;
	int rc;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) < 0 || access("/home", W_OK) < 0)
		return;
	snprintf(bob, sizeof(bob), "/home/pv-r44-bob-%ld", (long)getpid());
	CU_ASSERT_FATAL(mkdirs("r44u/proj0") == 0 && mkdirs("r44u/proj1") == 0 && mkdirs("r44u/home") == 0 &&
			mkdir(bob, 0755) == 0);
	snprintf(f, sizeof(f), "%s/.ssh", bob);
	CU_ASSERT_FATAL(mkdir(f, 0711) == 0);
	snprintf(f, sizeof(f), "%s/.ssh/id_rsa", bob);
	CU_ASSERT_FATAL(mkfile(f, "BOBKEY44\n") == 0);
	snprintf(f, sizeof(f), "%s/.netrc", bob);
	CU_ASSERT_FATAL(mkfile(f, "machine x login bob password BOBNETRC44\n") == 0 &&
			mkfile(at(proj, "r44u/proj0/readme"), "PROJECT44\n") == 0 &&
			mkfile(at(proj, "r44u/proj1/readme"), "PROJECT44\n") == 0 &&
			chown(at(proj, "r44u/proj1/readme"), 65534, 65534) == 0 &&
			chown(at(proj, "r44u/proj1"), 65534, 65534) == 0 && chown(at(proj, "r44u/home"), 65534, 65534) == 0);
	(void)at(proj, "r44u");
	for (int as_nobody = 0; as_nobody < 2; as_nobody++) {
		snprintf(cmd, sizeof(cmd),
			 "cd '%1$s/proj%5$d' && env -i HOME='%1$s/home' PATH=/usr/bin:/bin TMPDIR=/tmp %2$s '%3$s' run -q -- "
			 "sh -c 'cat %4$s/.netrc %4$s/.ssh/id_rsa readme 2>/dev/null; echo ran'; echo status=$?",
			 proj, as_nobody ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "", test_passavant_bin(),
			 bob, as_nobody);
		rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		ROW(rc == 0 && test_has(out, "ran\n") && test_has(out, "status=0\n") && test_has(out, "PROJECT44\n"),
		    "%s: the command did not run: %s %s", as_nobody ? "nobody" : "root", out ? out : "", err ? err : "");
		ROW(!test_has(out, "BOBNETRC44") && !test_has(out, "BOBKEY44"),
		    "%s: another user's world-readable stores read: %s", as_nobody ? "nobody" : "root", out ? out : "");
		free(out);
		free(err);
		out = err = NULL;
	}
	snprintf(f, sizeof(f), "%s/.ssh/id_rsa", bob);
	(void)unlink(f);
	snprintf(f, sizeof(f), "%s/.ssh", bob);
	(void)rmdir(f);
	snprintf(f, sizeof(f), "%s/.netrc", bob);
	(void)unlink(f);
	(void)rmdir(bob);
}

/*
 * review44t: the write twin of test_other_users_r44. The HOME class rule
 * (every entry of a home a writable tree holds is read-only) held for
 * the user's own home alone: root run from another user's home (or from
 * /home) had that user's ~/.bashrc and every other entry writable, for
 * the user's next shell to run outside the sandbox. A file the command
 * makes there, and one named in allowWrite, stay writable.
 */
static void test_other_users_write_r44(void)
{
	char bob[64], cmd[4 * PATH_MAX], f[128], pol[PATH_MAX];
	char *argv[] = {"sh", "-c", cmd, NULL};
	char *out = NULL, *err = NULL, *text;
	const char *names[] = {".bashrc", ".pv-toolrc", "notes"};
	int rc;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/home", W_OK) < 0)
		return;
	snprintf(bob, sizeof(bob), "/home/pv-r44w-bob-%ld", (long)getpid());
	CU_ASSERT_FATAL(mkdir(bob, 0755) == 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(f, sizeof(f), "%s/%s", bob, names[i]);
		CU_ASSERT_FATAL(mkfile(f, "original\n") == 0);
	}
	CU_ASSERT_FATAL(write_policy("r44w.yaml", "filesystem:\n  allowWrite: [\".\", \"./notes\"]\n") == 0);
	(void)at(pol, "r44w.yaml");
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && env -i HOME=/root PATH=/usr/bin:/bin TMPDIR=/tmp '%s' run -q -p '%s' -- sh -c "
		 "'for f in .bashrc .pv-toolrc; do echo pwn >> $f && echo wrote-$f; done; echo n >> notes && "
		 "echo wrote-notes; echo new > .new && echo wrote-new'; echo status=$?",
		 bob, test_passavant_bin(), pol);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "status=0\n") && test_has(out, "wrote-new\n") && test_has(out, "wrote-notes\n"),
	    "run from another user's home: the command did not run: %s %s", out ? out : "", err ? err : "");
	ROW(!test_has(out, "wrote-.bashrc") && !test_has(out, "wrote-.pv-toolrc"),
	    "another user's home entries were writable: %s", out ? out : "");
	for (size_t i = 0; i < 2; i++) {
		snprintf(f, sizeof(f), "%s/%s", bob, names[i]);
		text = test_read_file(f, NULL);
		ROW(text != NULL && strcmp(text, "original\n") == 0, "%s changed: %s", f, text ? text : "(gone)");
		free(text);
	}
	free(out);
	free(err);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", bob);
	CU_ASSERT(system(cmd) == 0);
}

/*
 * Round 45 (fix45h), the class of the homes of others a look would mount
 * or wait on: another user's home on an automounted or network
 * filesystem (autofs, NFS, CIFS, sshfs) had its stores stat'ed at every
 * start (an autofs map mounted, a server down hung every run). Here a
 * FUSE mount made by the test (a home whose daemon answers and writes
 * down every lookup) at /home/<x>; a home in /home that is a link into
 * it; and a local home whose ~/.ssh is a link into it. Nothing is looked
 * up in it (no FUSE_LOOKUP), and the home is unreadable in the session.
 */

/* Whether pid is top or one of its descendants (the other programs of
 * the machine, other test runs among them, look into /home too). */
static bool descends(pid_t pid, pid_t top)
{
	for (int hops = 0; pid > 1 && hops < 64; hops++) {
		char path[64], buf[512], *rp;
		FILE *f;

		if (pid == top)
			return true;
		snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
		if ((f = fopen(path, "re")) == NULL)
			return false;
		rp = fgets(buf, sizeof(buf), f);
		(void)fclose(f);
		if (rp == NULL || (rp = strrchr(buf, ')')) == NULL || sscanf(rp, ") %*c %d", &pid) != 1)
			return false;
	}
	return false;
}

/* The test's FUSE daemon: answers INIT, GETATTR (a 0755 directory),
 * OPENDIR and READDIR (empty), LOOKUP (ENOENT), and writes "op name"
 * lines to log for each request. Returns at the unmount. */
static void fuse_serve(int fd, const char *log, pid_t top)
{
	size_t cap = FUSE_MIN_READ_BUFFER + 65536;
	char *buf = malloc(cap);
	FILE *lf = fopen(log, "w");

	if (lf == NULL || buf == NULL)
		_exit(1);
	setvbuf(lf, NULL, _IONBF, 0);
	for (;;) {
		ssize_t n = read(fd, buf, cap);
		struct fuse_in_header *in = (struct fuse_in_header *)buf;
		char out[sizeof(struct fuse_out_header) + sizeof(struct fuse_init_out) + 256];
		struct fuse_out_header *oh = (struct fuse_out_header *)out;
		size_t olen = sizeof(*oh);

		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*in))
			break;
		memset(out, 0, sizeof(out));
		oh->unique = in->unique;
		if (in->opcode != FUSE_LOOKUP || descends((pid_t)in->pid, top))
			fprintf(lf, "%u %s\n", in->opcode,
				in->opcode == FUSE_LOOKUP ? (const char *)(buf + sizeof(*in)) : "-");
		switch (in->opcode) {
		case FUSE_INIT: {
			struct fuse_init_out *io = (struct fuse_init_out *)(out + sizeof(*oh));

			io->major = FUSE_KERNEL_VERSION;
			io->minor = FUSE_KERNEL_MINOR_VERSION;
			io->max_write = 4096;
			io->max_readahead = 4096;
			olen += sizeof(*io);
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out *ao = (struct fuse_attr_out *)(out + sizeof(*oh));

			ao->attr.ino = in->nodeid;
			ao->attr.mode = S_IFDIR | 0755;
			ao->attr.nlink = 2;
			olen += sizeof(*ao);
			break;
		}
		case FUSE_OPENDIR:
			olen += sizeof(struct fuse_open_out);
			break;
		case FUSE_READDIR:
		case FUSE_RELEASEDIR:
			break;
		case FUSE_LOOKUP:
			oh->error = -ENOENT;
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
			continue;
		default:
			oh->error = -ENOSYS;
			break;
		}
		oh->len = (uint32_t)olen;
		if (write(fd, out, olen) < 0 && errno == ENODEV)
			break;
	}
	(void)fclose(lf);
	free(buf);
}

static void test_remote_homes_r45(void)
{
	char fhome[64], lnk[64], bob[64], f[128], t[128], log[PATH_MAX], proj[PATH_MAX], opts[64];
	char cmd[4 * PATH_MAX];
	char *argv[] = {"sh", "-c", cmd, NULL};
	char *out = NULL, *err = NULL, *text;
	pid_t srv, top;
	int fd, rc, status = 0;

	SKIP_IF_NEEDED();
	if (geteuid() != 0 || access("/home", W_OK) < 0 || (fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)) < 0)
		return;
	snprintf(fhome, sizeof(fhome), "/home/pv-r45-fuse-%ld", (long)getpid());
	snprintf(lnk, sizeof(lnk), "/home/pv-r45-lnk-%ld", (long)getpid());
	snprintf(bob, sizeof(bob), "/home/pv-r45-bob-%ld", (long)getpid());
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	CU_ASSERT_FATAL(mkdirs("r45/proj") == 0 && mkdir(fhome, 0755) == 0 && mkdir(bob, 0755) == 0);
	snprintf(t, sizeof(t), "%s/sub", fhome);
	CU_ASSERT_FATAL(symlink(t, lnk) == 0);
	snprintf(f, sizeof(f), "%s/.ssh", bob);
	snprintf(t, sizeof(t), "%s/ssh", fhome);
	CU_ASSERT_FATAL(symlink(t, f) == 0);
	(void)at(log, "r45/fuse.log");
	if (mount("pv-r45", fhome, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
		fprintf(stderr, "\n  (no FUSE mount: %s; skipped)\n", strerror(errno));
		(void)close(fd);
		goto clean;
	}
	top = getpid();
	srv = fork();
	CU_ASSERT_FATAL(srv >= 0);
	if (srv == 0) {
		fuse_serve(fd, log, top);
		_exit(0);
	}
	(void)close(fd);
	(void)at(proj, "r45/proj");
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && env -i HOME=/root PATH=/usr/bin:/bin TMPDIR=/tmp '%s' run -- sh -c "
		 "'cat %s/probe-inside 2>/dev/null; echo ran'; echo status=$?",
		 proj, test_passavant_bin(), fhome);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	text = test_read_file(log, NULL);
	ROW(rc == 0 && test_has(out, "ran\n") && test_has(out, "status=0\n"),
	    "a home on a FUSE mount: the command did not run: %s %s", out ? out : "", err ? err : "");
	/* Opcode 1 is FUSE_LOOKUP: a name looked up in the home. The
	 * stores of plan_other_users() (.netrc, .npmrc, .vercel...) and the
	 * two links' targets (sub, ssh) are not. fix46h: nor setup.c's
	 * search of every mount for a home's marks (.ssh, .gnupg, .aws,
	 * .config, Library, AppData, then .git: round 35), which looked
	 * into every mount but autofs; review46h: nor gitcopies.c's
	 * find_repo(), which looked up .git in every directory denied
	 * whole, the remote home too. */
	ROW(text != NULL, "a home on a FUSE mount: no log of its daemon");
	for (const char *const *n = (const char *const[]){".netrc", ".npmrc", ".vercel", ".docker", ".kube",
							  ".git-credentials", "sub", "ssh", ".ssh", ".gnupg",
							  ".aws", ".config", "Library", "AppData", ".git", NULL};
	     text != NULL && *n != NULL; n++) {
		char line[64];

		snprintf(line, sizeof(line), "\n1 %s\n", *n);
		ROW(strstr(text, line) == NULL && strncmp(text, line + 1, strlen(line + 1)) != 0,
		    "a home on a FUSE mount: passavant looked up %s in it: %s", *n, text);
	}
	/* fix46h: one notice line names what was denied whole, and why */
	ROW(err != NULL && test_has(err, "unreadable whole in the sandbox") && test_has(err, fhome) &&
		    test_has(err, "filesystem.allowRead"),
	    "a home on a FUSE mount: denied whole without a word: %s", err ? err : "");
	/* The command's own look inside reaches nothing of it. */
	ROW(text != NULL && !test_has(text, "1 probe-inside\n"),
	    "a home on a FUSE mount: not denied whole in the session: %s", text ? text : "");
	free(text);
	free(out);
	free(err);
	if (umount2(fhome, MNT_DETACH) < 0)
		CU_FAIL("umount of the FUSE home");
	(void)waitpid(srv, &status, 0);
clean:
	(void)unlink(lnk);
	(void)unlink(f);
	(void)rmdir(bob);
	(void)rmdir(fhome);
}

/*
 * Round 45 (fix45h): the homes of a directory service's users (LDAP,
 * SSSD), in no /etc/passwd and not in /home: /export/home, /srv/home,
 * /var/home (Fedora Silverblue's). Their stores were read in clear; now
 * the usual roots of homes are listed with /home.
 */
static void test_other_roots_r45(void)
{
	static const char *const roots[] = {"/srv/home", "/export/home", "/var/home"};
	char proj[PATH_MAX], cmd[4 * PATH_MAX], carol[3][96], f[160];
	char *argv[] = {"sh", "-c", cmd, NULL};
	char *out = NULL, *err = NULL;
	bool made[3] = {false, false, false}, made_export = false;
	int rc;

	SKIP_IF_NEEDED();
	if (geteuid() != 0)
		return;
	CU_ASSERT_FATAL(mkdirs("r45r/proj") == 0 && mkfile(at(proj, "r45r/proj/readme"), "PROJECT45\n") == 0);
	if (access("/export", F_OK) < 0)
		made_export = mkdir("/export", 0755) == 0;
	for (size_t i = 0; i < 3; i++) {
		made[i] = mkdir(roots[i], 0755) == 0;
		snprintf(carol[i], sizeof(carol[i]), "%s/pv-r45-carol-%ld", roots[i], (long)getpid());
		CU_ASSERT_FATAL(mkdir(carol[i], 0755) == 0);
		snprintf(f, sizeof(f), "%s/.netrc", carol[i]);
		CU_ASSERT_FATAL(mkfile(f, "machine x login carol password CAROLNETRC45\n") == 0);
	}
	(void)at(proj, "r45r/proj");
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && env -i HOME=/root PATH=/usr/bin:/bin TMPDIR=/tmp '%s' run -q -- sh -c "
		 "'cat %s/.netrc %s/.netrc %s/.netrc readme 2>/dev/null; echo ran'; echo status=$?",
		 proj, test_passavant_bin(), carol[0], carol[1], carol[2]);
	rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
	ROW(rc == 0 && test_has(out, "ran\n") && test_has(out, "status=0\n") && test_has(out, "PROJECT45\n"),
	    "homes outside /home: the command did not run: %s %s", out ? out : "", err ? err : "");
	ROW(!test_has(out, "CAROLNETRC45"), "a home in /srv/home, /export/home or /var/home: its ~/.netrc read: %s",
	    out ? out : "");
	free(out);
	free(err);
	for (size_t i = 0; i < 3; i++) {
		snprintf(f, sizeof(f), "%s/.netrc", carol[i]);
		(void)unlink(f);
		(void)rmdir(carol[i]);
		if (made[i])
			(void)rmdir(roots[i]);
	}
	if (made_export)
		(void)rmdir("/export");
}

/*
 * review44t: a TMPDIR (here TMP: TMPDIR is where passavant makes its
 * session directories) in a writable tree below a denyWrite or denyRead of
 * the policy (allowWrite ".", denyWrite "./ro-tmp") was passed on as a
 * directory of the tree: read-only or hidden there, mktemp failed. Now
 * the command's TMPDIR is /tmp, with a notice naming the deny.
 */
static void test_tmpdir_denied_r44(void)
{
	char proj[PATH_MAX], pol[PATH_MAX], cmd[4 * PATH_MAX];
	char *argv[] = {"sh", "-c", cmd, NULL};
	char *out = NULL, *err = NULL;
	int rc;

	SKIP_IF_NEEDED();
	CU_ASSERT_FATAL(mkdirs("r44t/proj/ro-tmp") == 0 && mkdirs("r44t/proj/hid-tmp") == 0 &&
			write_policy("r44t.yaml", "filesystem:\n  allowWrite: [\".\"]\n  denyWrite: [\"./ro-tmp\"]\n"
						  "  denyRead: [\"./hid-tmp\"]\n") == 0);
	(void)at(proj, "r44t/proj");
	(void)at(pol, "r44t.yaml");
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && env TMPDIR=/tmp TMP='%s/%s' '%s' run -p '%s' -- sh -c 'echo T=$TMP; mktemp -p \"$TMP\" "
			 ">/dev/null && echo mktemp-ok'; echo status=$?",
			 proj, proj, i == 0 ? "ro-tmp" : "hid-tmp", test_passavant_bin(), pol);
		rc = test_run_capture(argv, &out, &err, RUN_TIMEOUT_MS);
		ROW(rc == 0 && test_has(out, "status=0\n") && test_has(out, "T=/tmp\n") && test_has(out, "mktemp-ok\n"),
		    "TMPDIR below a %s: not the sandbox's /tmp: %s %s", i == 0 ? "denyWrite" : "denyRead", out ? out : "",
		    err ? err : "");
		ROW(test_has(err, "which the policy denies"), "TMPDIR below a deny: no notice: %s", err ? err : "");
		free(out);
		free(err);
		out = err = NULL;
	}
}

TEST_REGISTRAR(register_fsharden)
{
	CU_pSuite s = test_suite("fsharden", suite_init, suite_cleanup);

	test_add(s, "symlink: planted allowWrite link refused (125, named)", test_link_allow_write);
	test_add(s, "symlink: planted allowRead link to ~/.ssh refused", test_link_allow_read);
	test_add(s, "symlink: planted intermediate component refused", test_link_intermediate);
	test_add(s, "symlink: host link to a planted link refused", test_link_chain);
	test_add(s, "symlink: host link in a read-only directory followed",
		 test_link_read_only_followed);
	test_add(s, "symlink: a dangling host link on the way to a protected path (~/.config -> "
		 "work/cfg): its target protected", test_link_dangling_way);
	test_add(s, "persistence: writable HOME, start-up/ssh/git/autostart/agent files",
		 test_persistence_home);
	test_add(s, "environment: more credential names, tokens inside values, JWTs", test_env_variants);
	test_add(s, "persistence: start-up files and libraries named by ENV, BASH_ENV, ZDOTDIR, "
		 "PYTHONSTARTUP, LD_LIBRARY_PATH", test_persistence_env_paths);
	test_add(s, "a directory too deep to check moves aside", test_too_deep);
	test_add(s, "hard links: a write-denied and a read-denied file with a name in the work tree",
		 test_hard_links);
	test_add(s, "persistence: agent and editor files in the workspace",
		 test_persistence_workspace);
	test_add(s, "persistence: PATH directories unless named by allowWrite", test_path_dirs);
	test_add(s, "round 34 (P2): LD_PRELOAD and LD_AUDIT: an absolute entry in the tree read-only, a relative "
		    "one refuses the start",
		 test_ld_preload);
	test_add(s, "round 34 (P3): a relative entry in PERL5LIB, PERLLIB, PYTHONPATH, RUBYLIB, NODE_PATH, GEM_PATH, "
		    "CLASSPATH, GOPATH, LUA_PATH, LUA_CPATH, NODE_OPTIONS --require/-r/--import: start refused, named",
		 test_module_path_relative);
	test_add(s, "round 35: the option variables (NODE_OPTIONS, RUBYOPT, PERL5OPT, JAVA_TOOL_OPTIONS, "
		    "JDK_JAVA_OPTIONS, _JAVA_OPTIONS): a loaded file in the tree read-only, a relative path refuses "
		    "the start",
		 test_option_vars);
	test_add(s, "round 35: PYTHONUSERBASE, GIT_EXEC_PATH, OPENSSL_CONF, GCONV_PATH in the tree read-only, a "
		    "relative one refuses the start",
		 test_runtime_paths);
	test_add(s, "round 35: $ORIGIN, $LIB, $PLATFORM in LD_LIBRARY_PATH, LD_PRELOAD, LD_AUDIT: start refused, "
		    "named",
		 test_ld_tokens);
	test_add(s, "round 35: GIT_SSH_COMMAND, GIT_ASKPASS, EDITOR, PAGER naming a program by a path: in the tree "
		    "read-only, relative refuses the start",
		 test_command_vars);
	test_add(s, "round 36: GIT_SSH \"~/x\", ssh -F/-o ProxyCommand, -agentlib:../x, BROWSER, MAKEFLAGS --eval, PROMPT_COMMAND, PS1 "
		    "$(...), cargo's wrappers, CMAKE_TOOLCHAIN_FILE, the .NET profiler, GTK, GStreamer, Qt, GIO, "
		    "Mesa, Vulkan, Tcl paths: relative refuses the start, in the tree read-only",
		 test_code_vars_r36);
	test_add(s, "round 39: VIMRUNTIME, VIM, XDG_DATA_DIRS, XDG_CONFIG_DIRS, BASH_COMPLETION_USER_DIR, EMACSLOADPATH "
		    "naming the tree: read-only (the host's vim ran the plugin), relative refuses the start",
		 test_startup_dirs_r39);
	test_add(s, "round 40: homes of code in the tree (CARGO_HOME, GRADLE_USER_HOME, GOMODCACHE, FPATH, "
		    "npm_Config_UserConfig, YARN_YARN_PATH, GOFLAGS, CATALINA_OPTS, -Dsbt.global.base): read-only; "
		    "relative: refused; CI values start", test_code_homes_r40);
	test_add(s, "round 40 review: a home of code in the tree is named at the start, with what to do (GOCACHE, "
		    "CARGO_HOME; go builds with its own)",
		 test_code_homes_notice_r40);
	test_add(s, "round 41: TeX's trees, yarn's ';' plugins, bun's homes and BUN_OPTIONS, a bare YARN_RC_FILENAME in "
		    "the home: read-only; Guile's, OCaml's, Erlang's, Raku's relative lists refused; the homes' notice "
		    "names each once", test_code_homes_r41);
	test_add(s, "review 41e: TeX's trees by program (TEXMFHOME_pdflatex, TEXMFCNF.lualatex) and TEXMF: read-only, "
		    "relative refused; the notice's state directory is not made through a link",
		 test_code_homes_r41e);
	test_add(s, "round 42: ERL_FLAGS and kin, GHC_ENVIRONMENT, MIX_EXS, bun's -c, Elixir's, Racket's, Haskell's, "
		    "Dart's, Nix's, Octave's homes, MAKEFILES, a TeX tree's inner \"//\": read-only or refused; a "
		    "refused start's notice named again; the marks' state directory through a link",
		 test_code_homes_r42);
	test_add(s, "round 43: ERL_COMPILER_OPTIONS, ERL_OTP<release>_FLAGS, the BEAM's emulators, stack's files, bun's "
		    "-e, node's --test-reporter, mix's, Racket's and Erlang's homes: read-only or refused; what CI "
		    "images set starts", test_code_homes_r43);
	test_add(s, "review of round 43: ERL_COMPILER_OPTIONS's escapes, comments, $' and non-ASCII atoms, "
		    "--test-reporter=dots, OCAMLPARAM, DOTNET_ROOT, DOTNET_ADDITIONAL_DEPS, DOTNET_SHARED_STORE, "
		    "NUGET_PACKAGES, NUGET_PLUGIN_PATHS read-only in a tree, relative refused; what CI images set starts",
		 test_code_homes_r43r);
	test_add(s, "round 39: start-up files moved by HGRCPATH, INPUTRC, PSQLRC, STARSHIP_CONFIG, RIPGREP_CONFIG_PATH, GOENV, "
		    "NPM_CONFIG_GLOBALCONFIG, ...: read-only in the tree (the host's hg ran the hook), relative refuses the start",
		 test_moved_startup_files_r39);
	test_add(s, "round 37: CC=./cc, CFLAGS=-B dir, env -S, script -c, flock -c, python3 -m, a bare NODE_OPTIONS module: refused, named; "
		    "an absolute CC in the tree read-only; env -C DIR, sudo -u node, CC=\"ccache gcc\" started",
		 test_code_vars_r37);
	test_add(s, "round 37's review: CC=\"gcc -B./t\", CFLAGS=@file, --prefix, -Bstatic, -Wl,-plugin, -Xlinker, "
		    "rustc's --codegen linker= and -C link-arg=: refused, named; dpkg-buildflags' and cargo's flags "
			"started",
		 test_build_flags_r37c);
	test_add(s, "round 37's review: setarch, linux64, firejail, strace, valgrind, su, ld.so's program; \". ./x\", "
		    "\"source x\", trap, function: refused, named; a prompt's title escape, firejail's options started",
		 test_precmds_r37c);
	test_add(s, "round 37's review: precommands nested by a long value (env -Senv -S..., sudo sudo ...): "
		    "refused in a few seconds", test_nested_precmds_r37c);
	test_add(s, "round 38: CARGO_TARGET_<triple>_LINKER/_RUNNER, CC_<target>, NODE_REPL_EXTERNAL_MODULE, su -s, "
		    "fakeroot -l, ld.so --library-path, perl -c, php -c, --gcc-toolchain: refused, named; in the tree "
		    "(and R's, PHP's start-up files) read-only; cargo's and cc's usual values started",
		 test_code_vars_r38);
	test_add(s, "round 38's review: git config entries in the environment (GIT_CONFIG_COUNT, "
		    "GIT_CONFIG_PARAMETERS) running a relative program: refused, named; usual ones started",
		 test_git_env_config_r38b);
	test_add(s, "round 39: PYTHONBREAKPOINT, PERL_USE_UNSAFE_INC, MAVEN_OPTS, CARGO_ALIAS_*, "
		    "npm_config_script_shell, PIP_FIND_LINKS, find -exec, chroot: refused, named; git's entries named "
		    "by the variable set; usual values started",
		 test_code_vars_r39);
	test_add(s, "round 37's review: inline code naming a file (python -c exec(open(...)), perl -e do, node -e "
		    "require, os.system): refused, named; perl -pe CODE, ruby -ne started", test_inline_code_r37c);
	test_add(s, "round 32: a relative or empty PATH entry (./node_modules/.bin, ., bin, ::), LD_LIBRARY_PATH, "
		    "BASH_ENV: start refused, named",
		 test_path_relative_entries);
	test_add(s, "round 35 (e1/e1b/e2/e2b): a relative XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL/SYSTEM, HGRCPATH entry, "
		    "PHPRC, GEM_HOME, GOENV, GOFLAGS -toolexec, PYTHONHOME, INPUTRC, *_HOME by its name: start "
		    "refused, named",
		 test_config_location_relative);
	test_add(s, "round 32: a link in a PATH directory outside the home, or in /usr/local/bin off PATH, into the "
		    "project: its target read-only",
		 test_path_links_outside_home);
	test_add(s, "persistence: HOME writable, every existing dot entry unless named", test_home_dot_rule);
	test_add(s, "writable HOME: a new dot entry is moved aside after the run", test_home_new_entries);
	test_add(s, "writable HOME: every existing entry, dot or not, unless named or the working directory; "
		    "a new ~/go moved aside",
		 test_home_every_entry);
	test_add(s, "writable HOME: a link or a hard-linked file without a dot stays, moved aside when changed",
		 test_home_links);
	test_add(s, "writable HOME: a new file at its top, a new ~/R, ~/texmf, ~/objects, ~/refs moved aside; "
		    "a new directory stays",
		 test_home_new_files);
	test_add(s, "writable HOME: the checks after the run with ~ made 0300, HOME through a link, a writable "
		    "dot directory filled past the search's bounds",
		 test_home_checks_unreadable_link_bounds);
	test_add(s, "writable HOME: new entries named by the files the start-up files name (~/dotfiles/shell.sh), "
		    "by /home/$USER, ${HOME:-...}; a named file the session changed is reported",
		 test_home_refs_named_files);
	test_add(s, "persistence: *.code-workspace in the workspace", test_workspace_pattern);
	test_add(s, "persistence: a writable ~/.config, every entry unless named", test_config_dir);
	test_add(s, "persistence: XDG_DATA_HOME created in the session, XDG_CONFIG_HOME swapped for a link",
		 test_xdg_dirs_missing_or_swapped);
	test_add(s, "persistence: start-up code read from the current directory (perl -d, python3 REPL, "
		    "GHCi, Octave)",
		 test_cwd_startup);
	test_add(s, "persistence: rows under .config, .hg and mise only where the directory exists",
		 test_workspace_if_dir);
	test_add(s, "credential stores: the new ones are unreadable", test_stores_unreadable);
	test_add(s, "round 31: links in read-denied directories (~/.ssh, ~/.aws, ~/.kube): targets unreadable",
		 test_read_denied_dir_links);
	test_add(s, "round 31: links in write-denied directory rows into the project: targets read-only",
		 test_write_denied_dir_links);
	test_add(s, "round 31: stow'd dot entries linked into the project: read-only", test_stow_dot_links);
	test_add(s, "round 31: a Go build cache in ~/.cache (205056 entries) is not walked", test_home_big_cache);
	test_add(s, "round 32: npm-linked packages in package trees (~/.vscode extensions' node_modules, "
		    "@scope, a linked node_modules, a dot directory with no row): read-only; the working "
		    "directory itself refused",
		 test_package_tree_links);
	test_add(s, "round 31: links in a directory of ~/.ssh that cannot be listed (0311): refused, named; "
		    "another user's (0711, 1733): started",
		 test_xonly_dir_links);
	test_add(s, "round 31: a directory reached deep first, then from the top of the home: walked again",
		 test_link_walk_order);
	test_add(s, "round 32: a file of a protected directory hard-linked from the project: start refused",
		 test_hard_linked_row_files);
	test_add(s, "environment: credential-looking variables dropped, one notice",
		 test_env_dropped);
	test_add(s, "check -v: mandatory table, PATH, environment rule", test_check_verbose);
	test_add(s, "writable HOME: a hard-linked file without a dot is read-only, its other name unchanged",
		 test_home_hard_link_read_only);
	test_add(s, "writable HOME, another user: chmod 0500 ~ leaves no placeholder",
		 test_home_placeholders_read_only_home);
	test_add(s, "writable HOME: a new entry named by pam_env.conf as @{HOME} is moved aside",
		 test_home_refs_pam_env);
	test_add(s, "allowWrite naming a file: writable, one mount, nothing said after the run",
		 test_allow_write_file);
	test_add(s, "a placeholder that cannot be removed after the run: named, status 1",
		 test_home_placeholder_left_status);
	test_add(s, "round 42: npx's and pnpm dlx's install trees read-only in a writable cache",
		 test_runner_install_trees);
	test_add(s, "round 42 review: npx's and pnpm dlx's trees where npm_config_cache and pnpm's cache-dir move them: read-only",
		 test_runner_trees_moved);
	test_add(s, "round 43: npx of a new package in a writable npm cache: runs, the host's _npx untouched",
		 test_npx_in_session);
	test_add(s, "round 43: run in a shared directory (/tmp, /dev/shm, a sticky 1777 one): not writable, the host's "
		    "files untouched; allowWrite /var, or run in /: refused",
		 test_shared_dirs_r43);
	test_add(s, "round 44: the home's links into a tree in /tmp or /dev/shm read-only; a TMPDIR the command "
		 "cannot use (/var/tmp, /dev/shm, a sticky directory) is the sandbox's /tmp: mktemp, python3, node",
		 test_shared_dirs_r44);
	test_add(s, "round 44: another user's stores readable through their mode (~/.netrc 0644, ~/.ssh 0711 with an "
		 "id_rsa 0644): covered, as root and as nobody", test_other_users_r44);
	test_add(s, "review44t: another user's home that a writable tree holds (root run from /home/bob): its "
		 "entries read-only (~/.bashrc, any dot file), as the user's own", test_other_users_write_r44);
	test_add(s, "round 45: another user's home on a FUSE mount (autofs, NFS, sshfs: not cheap to look at), "
		 "a home linked into it, a ~/.ssh linked into it: nothing looked up there, denied whole",
		 test_remote_homes_r45);
	test_add(s, "round 45: homes outside /etc/passwd and /home (/srv/home, /export/home, /var/home): their "
		 "stores covered", test_other_roots_r45);
	test_add(s, "review44t: a TMPDIR in a writable tree below a denyWrite or denyRead is the sandbox's /tmp",
		 test_tmpdir_denied_r44);
	test_add(s, "review43f: npmrc caches read as npm and pnpm do (a trailing slash, '..', pnpm's global rc, "
		    "$npm_config_globalconfig, ${VAR?}, a relative cache=)",
		 test_npmrc_caches_read_as_npm);
	test_add(s, "round 46: as root, a denied path in another user's 0700 directory: started, out of reach",
		 test_unsearchable_other_dir);
	test_add(s, "round 46: an npmrc cache= longer than PATH_MAX (as written, with its ${VAR}s, joined) refuses the "
		    "start; the .npmrc of a project 141 levels up is read",
		 test_npmrc_long_values);
	test_add(s, "review43f: a project's .local.vimrc and _vimrc_local.vim (vim-localrc, local_vimrc): read-only",
		 test_local_vimrc_names);
}
