/*
 * bind.c - a loaded policy meets the machine (SPEC §3.3, §3.6). Loading is
 * pure: the same bytes give the same policy anywhere, with "~" and relative
 * paths kept as written. policy_bind() then takes what the caller read of
 * the machine (struct policy_host: the home directories, the working
 * directory, some environment variables, the policy file's real path, a
 * file check) and, still without reading anything itself:
 *
 *  - resolves every path of the policy to an absolute one;
 *  - checks that each extraCaCertPaths entry is a readable file now;
 *  - adds the filesystem denies every policy gets: the HOME rows of the
 *    mandatory table (mandatory.c: credential stores for reading and
 *    writing, start-up files and other persistence for writing) under each
 *    home, each store where the environment moves it, the host's own
 *    secrets and /root, the directories on $PATH and the other code paths, the policy
 *    file itself, the configuration directory, the audit log, the extra CA
 *    roots and the credential files in mode deny.
 */
#include <errno.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "loader_int.h"

/* A variable of the host, or NULL (h->env may be NULL: none set). */
static const char *host_env(const struct policy_host *h, const char *name)
{
	return h->env != NULL ? h->env(name) : NULL;
}

/* Adds path (absolute, normalised) to list unless present. */
static void fs_add(struct ldr *l, struct policy_strlist *list, const char *path)
{
	if (!ldr_strlist_has(list, path) && ldr_strlist_add(list, path) != 0)
		ldr_error(l, (struct policy_mark){0, 0},
			  "out of memory, expected to add the mandatory deny \"%s\"", path);
}

/* Resolves one path in place (*s, malloc'd); reports and returns -1 when
 * it cannot be. where names the key for the message. */
static int resolve_one(struct ldr *l, const struct policy_host *h, char **s, const char *where,
		       struct policy_mark m)
{
	const char *err;
	char *abs = ldr_path_resolve(*s, h->home, h->cwd, &err);

	if (abs == NULL) {
		ldr_error(l, m, "\"%s\" in %s, %s", *s, where, err);
		return -1;
	}
	free(*s);
	*s = abs;
	return 0;
}

/* Resolves every entry of a path list, keeping the first of equal ones
 * (two spellings may name one path: "~/x" and "/home/u/x"); marks (may be
 * NULL) follow their entries. */
static void resolve_list(struct ldr *l, const struct policy_host *h, struct policy_strlist *list,
			 struct policy_mark *marks, const char *where)
{
	size_t o = 0;

	for (size_t i = 0; i < list->n; i++) {
		struct policy_mark m = marks != NULL ? marks[i] : (struct policy_mark){0, 0};
		bool dup = false;
		if (resolve_one(l, h, &list->v[i], where, m) != 0) {
			free(list->v[i]);
			continue;
		}
		for (size_t j = 0; j < o && !dup; j++)
			dup = strcmp(list->v[j], list->v[i]) == 0;
		if (dup) {
			free(list->v[i]);
			continue;
		}
		if (marks != NULL)
			marks[o] = m;
		list->v[o++] = list->v[i];
	}
	list->n = o;
}

/* Every path of the policy made absolute; each extra CA file checked. */
static void resolve_paths(struct ldr *l, const struct policy_host *h)
{
	static const char *const fs_where[FS_LIST_COUNT] = {
		"filesystem.denyRead", "filesystem.allowRead", "filesystem.allowWrite",
		"filesystem.denyWrite"};
	static const char ca_where[] = "network.tlsTerminate.extraCaCertPaths";
	struct policy *p = l->p;

	for (int i = 0; i < FS_LIST_COUNT; i++)
		resolve_list(l, h, &p->fs[i], NULL, fs_where[i]);
	resolve_list(l, h, &p->extra_ca, p->extra_ca_marks, ca_where);
	for (size_t i = 0; i < p->extra_ca.n && h->file_problem != NULL; i++) {
		const char *why = h->file_problem(p->extra_ca.v[i]);
		if (why != NULL)
			ldr_error(l, p->extra_ca_marks ? p->extra_ca_marks[i] : (struct policy_mark){0, 0},
				  "\"%s\" in %s (%s), expected a readable PEM file", p->extra_ca.v[i],
				  ca_where, why);
	}
	if (p->audit_path != NULL &&
	    resolve_one(l, h, &p->audit_path, "audit.path", (struct policy_mark){0, 0}) != 0) {
		free(p->audit_path);
		p->audit_path = NULL;
	}
	for (size_t i = 0; i < p->n_creds; i++) {
		struct policy_cred_ent *c = &p->creds[i];
		if (c->path != NULL && resolve_one(l, h, &c->path, "credentials.files.path", c->mark) != 0) {
			free(c->path);
			c->path = NULL;
		}
		c->pub.path = c->path;
	}
}

/*
 * The HOME rows of the mandatory table (mandatory.c) under one home
 * directory, an absolute normalised path: a read row is a read deny unless
 * allowRead names that exact path, and a write deny too; a write row is a
 * write deny.
 */
static void fs_home_denies(struct ldr *l, const struct policy_host *h, const char *home)
{
	struct policy *p = l->p;

	for (size_t i = 0; i < policy_mandatory_count(); i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);
		const char *err;
		char *abs;
		if ((m->where & POLICY_MAND_HOME) == 0)
			continue;
		abs = ldr_path_resolve(m->path, NULL, home, &err); /* relative to home */
		if (abs == NULL) {
			ldr_error(l, (struct policy_mark){0, 0},
				  "cannot add the mandatory deny \"%s/%s\": %s", home, m->path, err);
			return;
		}
		/* Round 44: a row only where its first directory exists
		 * (POLICY_MAND_WS_IF_DIR with HOME: ~/go/bin) */
		if ((m->where & POLICY_MAND_WS_IF_DIR) && h != NULL && h->file_problem != NULL) {
			size_t first = strlen(home) + 1 + strcspn(m->path, "/");
			char *dir = strndup(abs, first);
			const char *why = dir != NULL ? h->file_problem(dir) : NULL;
			bool missing = why != NULL && strcmp(why, strerror(ENOENT)) == 0;

			free(dir);
			if (missing) {
				free(abs);
				continue;
			}
		}
		if ((m->deny & POLICY_MAND_READ) && !ldr_strlist_has(&p->fs[FS_ALLOW_READ], abs))
			fs_add(l, &p->fs[FS_DENY_READ], abs);
		if (m->deny & POLICY_MAND_WRITE)
			fs_add(l, &p->fs[FS_DENY_WRITE], abs);
		free(abs);
	}
}

/*
 * A Windows or macOS home (struct policy_host's other_homes): the HOME
 * rows, then what Windows and macOS keep there that no row of a Linux
 * home names. AppData whole, for reading and writing: browsers' profiles,
 * the Git Credential Manager's and the cloud CLIs' tokens, and the
 * Startup folder, whose programs Windows runs at the next logon;
 * PowerShell's profile scripts, which every PowerShell start runs, for
 * writing. Library whole, the same way (round 35 of the attack, e4: a
 * Mac's home shared into a virtual machine): Keychains, Cookies, the
 * browsers' and editors' profiles under Application Support, and
 * LaunchAgents, whose programs macOS runs at the next login.
 */
static void fs_other_home_denies(struct ldr *l, const char *home)
{
	static const struct {
		const char *sub;
		bool read;
	} rows[] = {
		{"AppData", true},
		{"Library", true},
		{"Documents/WindowsPowerShell", false},
		{"Documents/PowerShell", false},
	};
	struct policy *p = l->p;

	fs_home_denies(l, NULL, home);
	for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
		char *abs = NULL;

		if (asprintf(&abs, "%s/%s", home, rows[i].sub) < 0) {
			ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to add the mandatory denies");
			return;
		}
		if (rows[i].read && !ldr_strlist_has(&p->fs[FS_ALLOW_READ], abs))
			fs_add(l, &p->fs[FS_DENY_READ], abs);
		fs_add(l, &p->fs[FS_DENY_WRITE], abs);
		free(abs);
	}
}

/* Whether path is dir or below it, component-wise (both normalised). */
static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Whether path is "/" or holds the working directory (at or below it). */
static bool holds_cwd(const struct policy_host *h, const char *path)
{
	return strcmp(path, "/") == 0 || (h->cwd != NULL && path_under(h->cwd, path));
}

/*
 * Denies one place where the host's environment says store row m is:
 * dir[0..dirlen) (what variable var names), then "/sub" when sub is not
 * NULL. Only an absolute dir counts (a relative one depends on where the
 * tool runs), and none under /dev, /proc or /sys (HISTFILE=/dev/null). Denied like the row under HOME: for reading unless allowRead
 * names that exact path, and for writing. A place that is "/" or holds
 * the working directory cannot be denied without hiding the work: that
 * is an error, not a silent skip.
 */
static void fs_store_at(struct ldr *l, const struct policy_host *h, const struct policy_mandatory *m,
			const char *var, const char *dir, size_t dirlen, const char *sub)
{
	struct policy *p = l->p;
	const char *err;
	char *path = NULL, *abs;

	if (dirlen == 0 || dir[0] != '/')
		return;
	if (asprintf(&path, "%.*s%s%s", (int)dirlen, dir, sub != NULL ? "/" : "",
		     sub != NULL ? sub : "") < 0) {
		ldr_error(l, (struct policy_mark){0, 0},
			  "out of memory, expected to deny the store $%s names", var);
		return;
	}
	abs = ldr_path_resolve(path, NULL, NULL, &err);
	if (abs == NULL) {
		ldr_error(l, (struct policy_mark){0, 0}, "cannot deny \"%s\" ($%s, %s): %s", path,
			  var, m->why, err);
	} else if (path_under(abs, "/dev") || path_under(abs, "/proc") || path_under(abs, "/sys")) {
		/* HISTFILE=/dev/null turns a history off; the sandbox has its
		 * own /dev and /proc, and covering /dev/null would break every
		 * program. Nothing is stored there. */
	} else if (holds_cwd(h, abs) && !(m->deny & POLICY_MAND_READ)) {
		/* A write-only row that holds the working directory: denied
		 * for writing without an error, as fs_home_denies() does for
		 * the same row under HOME (~/.config/nvim as the project). */
		fs_add(l, &p->fs[FS_DENY_WRITE], abs);
	} else if (holds_cwd(h, abs)) {
		ldr_error(l, (struct policy_mark){0, 0},
			  "$%s puts a credential store (%s) at \"%s\", which holds the working "
			  "directory: it cannot be denied without hiding the work; set %s to the "
			  "store's own place or unset it",
			  var, m->why, abs, var);
	} else {
		if ((m->deny & POLICY_MAND_READ) && !ldr_strlist_has(&p->fs[FS_ALLOW_READ], abs))
			fs_add(l, &p->fs[FS_DENY_READ], abs);
		if ((m->deny & POLICY_MAND_WRITE) && (h->unreachable == NULL || !h->unreachable(abs)))
			fs_add(l, &p->fs[FS_DENY_WRITE], abs);
	}
	free(abs);
	free(path);
}

/*
 * SPEC §3.6: a credential store is denied wherever its tool would find
 * it, not only under HOME: at each place the variables of its row name
 * (policy_mandatory_env(): "$NAME", "$NAME/sub", "$NAME:" for a colon
 * list) and, for a row under an XDG base directory's default, under the
 * variable that moves that base. Values are the host's when `run`
 * starts; the launcher resolves links in them (and refuses one the
 * sandbox could have planted) like any policy path.
 */
static void fs_store_relocations(struct ldr *l, const struct policy_host *h)
{
	char name[64], sub[128];

	for (size_t i = 0; i < policy_mandatory_count(); i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);
		const char *spec = policy_mandatory_env(i), *rest, *var, *val;
		/* Every home row, read or write only: a start-up file under
		 * $XDG_CONFIG_HOME (fish, autostart, systemd user units) runs on
		 * the host as surely as one under ~/.config. */
		if ((m->where & POLICY_MAND_HOME) == 0)
			continue;
		var = policy_mandatory_xdg(m, &rest);
		if (var != NULL && (val = host_env(h, var)) != NULL)
			fs_store_at(l, h, m, var, val, strlen(val), rest);
		/* Each item: "$" NAME, then nothing, ":" or "/" SUB, up to a
		 * space. The table is ours: an item too long for the buffers
		 * is a bug the unit tests catch (test_mandatory.c). */
		while (spec != NULL && *spec != '\0') {
			size_t n = strcspn(spec, " "), k;
			const char *item = spec;
			bool list;
			spec += n + (spec[n] == ' ');
			k = strcspn(item + 1, "/: ");
			if (item[0] != '$' || k == 0 || k >= sizeof(name) || n - 1 - k >= sizeof(sub))
				continue;
			memcpy(name, item + 1, k);
			name[k] = '\0';
			list = item[1 + k] == ':';
			sub[0] = '\0';
			/* "$NAME/sub", or round 44's "$NAME:/sub": sub under
			 * each entry of the list */
			if (item[1 + k + list] == '/') {
				memcpy(sub, item + 2 + k + list, n - 2 - k - list);
				sub[n - 2 - k - list] = '\0';
			}
			val = host_env(h, name);
			for (const char *s = val; s != NULL;) {
				size_t len = list ? strcspn(s, ":") : strlen(s);
				fs_store_at(l, h, m, name, s, len, sub[0] != '\0' ? sub : NULL);
				s = s[len] == ':' ? s + len + 1 : NULL;
			}
		}
	}
}

/*
 * Whether the variable NAME says that it names a credential's place: its
 * last '_'-separated word is FILE, PATH, DIR, DIRECTORY or LOCATION and
 * another whole word is TOKEN, PASSWORD, PASSWD, PASS, SECRET, KEY,
 * AUTH or CREDENTIAL(S) (RESTIC_PASSWORD_FILE, CONSUL_HTTP_TOKEN_FILE,
 * ANSIBLE_VAULT_PASSWORD_FILE, SSH_KEY_PATH), or it is one of the two
 * known names without such a suffix (GOOGLE_APPLICATION_CREDENTIALS,
 * systemd's CREDENTIALS_DIRECTORY). Whole words: TOKENIZER_PATH and
 * PUBKEY_FILE are not; a name without a place word (DOCKER_CREDENTIALS)
 * may hold the secret itself, which must never become a policy path.
 */
static bool names_credential_file(const char *name, size_t n)
{
	static const char *const what[] = {"TOKEN", "PASSWORD", "PASSWD", "PASS", "SECRET",
					   "KEY", "AUTH", "CREDENTIAL", "CREDENTIALS"};
	static const char *const place[] = {"FILE", "PATH", "DIR", "DIRECTORY", "LOCATION"};
	char up[128];
	const char *last, *w;
	bool is_place = false;

	if (n == 0 || n >= sizeof(up))
		return false;
	for (size_t i = 0; i < n; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	up[n] = '\0';
	if (strcmp(up, "GOOGLE_APPLICATION_CREDENTIALS") == 0 || strcmp(up, "CREDENTIALS_DIRECTORY") == 0)
		return true;
	last = strrchr(up, '_');
	if (last == NULL)
		return false;
	for (size_t i = 0; i < sizeof(place) / sizeof(place[0]) && !is_place; i++)
		is_place = strcmp(last + 1, place[i]) == 0;
	if (!is_place)
		return false;
	for (w = up; w < last; w += strcspn(w, "_") + 1) {
		size_t wl = strcspn(w, "_");

		for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++)
			if (wl == strlen(what[i]) && strncmp(w, what[i], wl) == 0)
				return true;
	}
	return false;
}

/* The table's row for files a variable names as a credential (its reason
 * in errors; read and write denied, anywhere). */
static const struct policy_mandatory credential_var_row = {
	"(a variable's file)", POLICY_MAND_READ | POLICY_MAND_WRITE, POLICY_MAND_HOME,
	"a credential file a variable names"};

/*
 * SPEC §3.6, the family of moved stores: a variable of the environment
 * `run` starts in whose name says it names a credential file or directory
 * (names_credential_file()) and whose value is an absolute path: that
 * place is denied like a store, for reading and writing. The environment
 * filter drops such a variable from the sandbox; this keeps the file it
 * names from being read there under its path.
 */
static void fs_credential_files(struct ldr *l, const struct policy_host *h)
{
	const char *e;

	if (h->env_at == NULL)
		return;
	for (size_t i = 0; (e = h->env_at(i)) != NULL; i++) {
		const char *eq = strchr(e, '=');
		char name[128];
		size_t n;

		if (eq == NULL || eq[1] != '/' || !names_credential_file(e, (size_t)(eq - e)))
			continue;
		n = (size_t)(eq - e);
		memcpy(name, e, n);
		name[n] = '\0';
		fs_store_at(l, h, &credential_var_row, name, eq + 1, strlen(eq + 1), NULL);
	}
}

/*
 * The host's own secrets (SYSTEM rows of the table: /etc/shadow, host
 * keys, ...): denied for reading unless allowRead names one exactly, and
 * for writing. Then the superuser's home, /root, whole: passavant run by
 * root (CI, containers) with another HOME would otherwise leave it
 * readable; not when it is needed (HOME, the working directory, a
 * directory on PATH or a path the policy allows lies in it).
 */
static void fs_system_denies(struct ldr *l, const struct policy_host *h)
{
	struct policy *p = l->p;
	const char *path = host_env(h, "PATH");
	bool needed = (h->home != NULL && path_under(h->home, "/root")) || holds_cwd(h, "/root");

	for (size_t i = 0; i < policy_mandatory_count(); i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);
		if ((m->where & POLICY_MAND_SYSTEM) == 0)
			continue;
		if ((m->deny & POLICY_MAND_READ) && !ldr_strlist_has(&p->fs[FS_ALLOW_READ], m->path))
			fs_add(l, &p->fs[FS_DENY_READ], m->path);
		if ((m->deny & POLICY_MAND_WRITE) &&
		    (h->unreachable == NULL || !h->unreachable(m->path)))
			fs_add(l, &p->fs[FS_DENY_WRITE], m->path);
	}
	for (int k = FS_ALLOW_READ; k <= FS_ALLOW_WRITE && !needed; k++)
		for (size_t i = 0; i < p->fs[k].n && !needed; i++)
			needed = path_under(p->fs[k].v[i], "/root");
	for (const char *s = path; s != NULL && !needed;) {
		size_t len = strcspn(s, ":");
		needed = len >= 5 && strncmp(s, "/root", 5) == 0 && (len == 5 || s[5] == '/');
		s = s[len] == ':' ? s + len + 1 : NULL;
	}
	if (!needed)
		fs_add(l, &p->fs[FS_DENY_READ], "/root");
}

/*
 * Variables of the host user's environment that name where every later
 * process or shell loads code from, whatever project it is in (a colon
 * list, or one path): the dynamic linker's library path, and the
 * start-up files and directory of sh, bash, zsh and interactive python,
 * and the libraries the dynamic linker loads into every program
 * (LD_PRELOAD, LD_AUDIT: round 34 of the attack, P2, a shim the user
 * built in the project was rewritten by the session and ran in the
 * host's next /bin/true), and the directories and files a runtime
 * takes code from whatever program starts it (round 35): python's
 * user base (its site-packages' .pth files run at every start), home
 * and bytecode cache, git's exec path (git-remote-https, git-sh-setup),
 * glibc's iconv modules (GCONV_PATH) and OpenSSL's configuration (which
 * loads engines and providers), modules and engines directories
 * (base/envnames.h env_code_path_vars; and env_plugin_path_vars: where
 * a library loads plugins, drivers or modules into every program using
 * it, round 36, and env_startup_vars, the start-up files of R, PHP,
 * Julia, IPython, Jupyter and git's templates and system config, round
 * 38: as these, but an empty entry is none; `run` refuses a relative
 * entry, proxy/cli/plan.c).
 * A library or script the sandbox planted there would run in the host's
 * next process; PATH's rule applies to each of their entries. (Module
 * paths such as PYTHONPATH usually name the project itself, whose code
 * the user runs anyway: not listed; a relative entry of one refuses the
 * start, proxy/cli/plan.c plan_relative_path().)
 */
/*
 * SPEC §3.3: each directory on the host user's $PATH (var "PATH", kept in
 * path_dirs for `check -v`), and each entry of the code_path_vars, is a
 * write deny unless an allowWrite entry names that exact path: a program
 * the sandbox planted there would be run by the host's next shell. Empty
 * and relative entries are taken from the working directory, as a shell
 * does from wherever it runs; with empty_none, an empty entry is none.
 */
static void fs_path_denies(struct ldr *l, const struct policy_host *h, const char *var, bool empty_none)
{
	struct policy *p = l->p;
	const char *path = host_env(h, var), *s, *e, *err;
	bool is_path = strcmp(var, "PATH") == 0;
	/* The preload lists: ':' or ' ' (LD_PRELOAD), an empty entry is
	 * none, a name without '/' is looked for in the library path. */
	bool preload = strncmp(var, "LD_", 3) == 0 && strcmp(var, "LD_LIBRARY_PATH") != 0;
	/* round 41: yarn's plugins also at ';' (base/envnames.h) */
	const char *seps = strcmp(var, "LD_PRELOAD") == 0 ? ": " : env_list_seps(var, strlen(var));

	if (path == NULL || (!is_path && path[0] == '\0'))
		return;
	for (s = path;; s = e + 1) {
		char *dir, *abs;
		const char *d = s;
		size_t dl;

		e = s + (preload ? strcspn(s, seps) : env_list_len(var, strlen(var), s));
		dl = (size_t)(e - s);
		/* Julia's "@", "@v#.#", "@stdlib" name its own places; a TeX
		 * tree's "!!" and "//" marks are not the directory's (round
		 * 41), and one with kpathsea's '$' or braces is refused by
		 * `run` (proxy/cli/plan.c plan_relative_config()); a NIX_PATH
		 * URL names none (round 42) */
		if ((preload && memchr(s, '/', (size_t)(e - s)) == NULL) || (empty_none && s == e) ||
		    (s[0] == '@' && strcmp(var, "JULIA_LOAD_PATH") == 0) ||
		    (s != e && (!env_list_entry(var, strlen(var), &d, &dl) || dl == 0))) {
			if (*e == '\0')
				break;
			continue;
		}
		dir = strndup(s == e ? "." : d, s == e ? 1 : dl);
		if (dir == NULL) {
			ldr_error(l, (struct policy_mark){0, 0},
				  "out of memory, expected to add the mandatory denies");
			return;
		}
		/* "~/bin" is expanded as in a policy path; "~user" is skipped. */
		abs = dir[0] == '~' && dir[1] != '\0' && dir[1] != '/'
			      ? NULL
			      : ldr_path_resolve(dir, h->home, h->cwd, &err);
		free(dir);
		if (abs != NULL && !ldr_strlist_has(&p->fs[FS_ALLOW_WRITE], abs)) {
			fs_add(l, &p->fs[FS_DENY_WRITE], abs);
			if (is_path && !ldr_strlist_has(&p->path_dirs, abs) &&
			    ldr_strlist_add(&p->path_dirs, abs) != 0)
				ldr_error(l, (struct policy_mark){0, 0},
					  "out of memory, expected to add the mandatory denies");
		}
		free(abs);
		if (*e == '\0')
			break;
	}
}

/*
 * Round 41: yarn's settings file by another name (YARN_RC_FILENAME, any
 * case, a bare name: yarn reads it in the directory it starts in and in
 * each one above, the home among them, as .yarnrc.yml): the home's file
 * of that name is denied as the home's .yarnrc.yml row is (a token;
 * yarnPath names the program every yarn runs instead of itself), for
 * every project under the home reads it. One with a '/' refuses the
 * start (proxy/cli/plan.c).
 */
static void fs_yarn_rc_home(struct ldr *l, const struct policy_host *h)
{
	struct policy *p = l->p;

	for (size_t i = 0; h->env_at != NULL && h->env_at(i) != NULL && h->home != NULL && h->home[0] == '/'; i++) {
		const char *kv = h->env_at(i);
		char *abs;

		if (strncasecmp(kv, "YARN_RC_FILENAME=", 17) != 0 || kv[17] == '\0' || strchr(kv + 17, '/') != NULL ||
		    strcmp(kv + 17, ".") == 0 || strcmp(kv + 17, "..") == 0)
			continue;
		if (asprintf(&abs, "%s/%s", h->home, kv + 17) < 0) {
			ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to add the mandatory denies");
			return;
		}
		if (!ldr_strlist_has(&p->fs[FS_ALLOW_READ], abs))
			fs_add(l, &p->fs[FS_DENY_READ], abs);
		if (!ldr_strlist_has(&p->fs[FS_ALLOW_WRITE], abs))
			fs_add(l, &p->fs[FS_DENY_WRITE], abs);
		free(abs);
	}
}

/* fs_opt_deny()'s state. */
struct fs_opt {
	struct ldr *l;
	const struct policy_host *h;
};

/*
 * A file an option variable loads into every later run (PERL5OPT,
 * RUBYOPT, NODE_OPTIONS, the JVM's: policy_code_options(); round 35):
 * a write deny as an LD_PRELOAD library is, missing or not, unless an
 * allowWrite entry names that exact path. A relative one refuses the
 * start (proxy/cli/plan.c plan_relative_path()); it is denied here as
 * taken from the working directory all the same. The directories
 * searched for modules are not (as PERL5LIB's: they usually name the
 * project, whose code the user runs anyway).
 */
static int fs_opt_deny(void *arg, const char *var, const char *path, bool loaded)
{
	struct fs_opt *o = arg;
	struct policy *p = o->l->p;
	const char *err;
	char *abs;

	(void)var;
	if (!loaded || path[0] == '\0')
		return 0;
	abs = path[0] == '~' && path[1] != '/' ? NULL : ldr_path_resolve(path, o->h->home, o->h->cwd, &err);
	if (abs != NULL && !ldr_strlist_has(&p->fs[FS_ALLOW_WRITE], abs))
		fs_add(o->l, &p->fs[FS_DENY_WRITE], abs);
	free(abs);
	return 0;
}

/* Adds path, resolved against the working directory, to list. */
static void fs_add_resolved(struct ldr *l, const struct policy_host *h,
			    struct policy_strlist *list, const char *path)
{
	const char *err;
	char *abs = ldr_path_resolve(path, NULL, h->cwd, &err);

	if (abs == NULL) {
		ldr_error(l, (struct policy_mark){0, 0}, "cannot add the mandatory deny \"%s\": %s",
			  path, err);
		return;
	}
	fs_add(l, list, abs);
	free(abs);
}

/*
 * Round 39 of the attack: a filer (NetApp and the like, over NFS or SMB)
 * shows its ".snapshot" in EVERY directory of the share, not only at its
 * top: ~/.local/share/.snapshot/hourly.0/keyrings/login.keyring, or
 * ~/.docker/.snapshot/nightly.1/config.json, is a store again at another
 * path. Rows named the home's top and ~/.config only. The family: every
 * directory between a filer root (the homes, and each NFS or SMB mount
 * whose MOUNT/.snapshot setup.c found) and a path denied for reading gets
 * its ".snapshot" denied too (and, since its review, SMB's "~snapshot",
 * and the root's own): the stores, the policy's own denyRead, the
 * stores where the environment moves them. Missing ones (every machine
 * without a filer) cost no mount: unseen.c keeps them unreadable.
 */
static void fs_snapshot_ancestors(struct ldr *l, const struct policy_host *h, const char *const *roots,
				  size_t n_roots)
{
	struct policy *p = l->p;
	size_t n = p->fs[FS_DENY_READ].n;

	for (size_t i = 0; i < n; i++) {
		char *e = strdup(p->fs[FS_DENY_READ].v[i]), *s, *path = NULL;

		if (e == NULL) {
			ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to add the mandatory denies");
			return;
		}
		for (size_t r = 0; r < n_roots; r++) {
			size_t rl = strlen(roots[r]);

			if (roots[r][0] != '/' || strcmp(roots[r], "/") == 0 || strcmp(e, roots[r]) == 0 ||
			    !path_under(e, roots[r]))
				continue;
			/* The root and each directory between it and e, its
			 * ".snapshot" and its "~snapshot" (review of round 39:
			 * SMB's name of the same directory, there by name in
			 * every directory of a filer's share; only ".snapshot"
			 * was denied below the root, and neither at a home's
			 * own top for "~snapshot"). */
			for (s = e + rl; s != NULL; s = strchr(s + 1, '/')) {
				const char *last;

				*s = '\0';
				last = strrchr(e, '/');
				for (size_t k = 0; k < 2; k++) {
					if (strcmp(last, "/.snapshot") == 0 || strcmp(last, "/~snapshot") == 0)
						break;
					if (asprintf(&path, "%s/%s", e, k == 0 ? ".snapshot" : "~snapshot") < 0) {
						*s = '/';
						ldr_error(l, (struct policy_mark){0, 0},
							  "out of memory, expected to add the mandatory denies");
						free(e);
						return;
					}
					if (!holds_cwd(h, path) && !ldr_strlist_has(&p->fs[FS_ALLOW_READ], path))
						fs_add(l, &p->fs[FS_DENY_READ], path);
					free(path);
					path = NULL;
				}
				*s = '/';
			}
		}
		free(e);
	}
}

/* fs_snapshot_ancestors() with the filer roots: HOME, the password
 * database's home, the other homes, each mount whose ".snapshot" (or
 * SMB's "~snapshot") setup.c found. */
static void fs_filer_snapshots(struct ldr *l, const struct policy_host *h)
{
	size_t n = 0, cap = 2 + h->n_other_homes + h->n_snapshot_dirs;
	const char **roots = calloc(cap, sizeof(*roots));
	char **owned = calloc(cap, sizeof(*owned));
	const char *err;

	if (roots == NULL || owned == NULL) {
		ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to add the mandatory denies");
		free(roots);
		free(owned);
		return;
	}
	if ((owned[n] = ldr_path_resolve("~", h->home, NULL, &err)) != NULL)
		roots[n] = owned[n], n++;
	if (h->pw_home != NULL && h->pw_home[0] == '/' &&
	    (owned[n] = ldr_path_resolve(h->pw_home, NULL, NULL, &err)) != NULL)
		roots[n] = owned[n], n++;
	for (size_t i = 0; i < h->n_other_homes; i++)
		if (h->other_homes[i] != NULL && h->other_homes[i][0] == '/')
			roots[n++] = h->other_homes[i];
	for (size_t i = 0; i < h->n_snapshot_dirs; i++) {
		const char *d = h->snapshot_dirs[i], *slash = d != NULL ? strrchr(d, '/') : NULL;

		if (slash == NULL || d[0] != '/' || (strcmp(slash, "/.snapshot") != 0 && strcmp(slash, "/~snapshot") != 0))
			continue;
		if ((owned[n] = strndup(d, slash == d ? 1 : (size_t)(slash - d))) == NULL) {
			ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to add the mandatory denies");
			break;
		}
		roots[n] = owned[n], n++;
	}
	fs_snapshot_ancestors(l, h, roots, n);
	for (size_t i = 0; i < cap; i++)
		free(owned[i]);
	free(roots);
	free(owned);
}

/* What alias_add() adds to. */
struct alias_ctx {
	struct ldr *l;
	const struct policy_host *h;
	struct policy_strlist *list;
	bool read;
};

static void alias_add(void *arg, const char *alias)
{
	struct alias_ctx *c = arg;

	/* The work reached again (a mount of the tree that holds it) is
	 * not hidden; allowRead naming the alias exactly lets it be read. */
	if (alias[0] != '/' || holds_cwd(c->h, alias) ||
	    (c->read && ldr_strlist_has(&c->l->p->fs[FS_ALLOW_READ], alias)))
		return;
	fs_add(c->l, c->list, alias);
}

/*
 * Round 40 of the attack (sandbox, f2; the "second mount of a denied
 * tree" of round 20, and snapshots "mounted elsewhere"): the stores and
 * the host's secrets were denied at their paths only, so a bind mount of
 * a directory above them (/home at /mnt/h, a container volume) or the
 * same device mounted a second time (/ at /mnt/disk) showed
 * ALIAS/u/.ssh/id_ed25519, ALIAS/etc/shadow in clear. Each denied path
 * that exists (no pattern) is denied again at every other place the
 * host's mounts show the same file (h->aliases), for reading and
 * writing as it is denied at its own. Not through a copy: a btrfs
 * snapshot or an LVM snapshot mounted elsewhere is another file system
 * (docs/threat-model.md).
 */
static void fs_mount_aliases(struct ldr *l, const struct policy_host *h)
{
	if (h->aliases == NULL)
		return;
	for (int k = 0; k < 2; k++) {
		struct policy_strlist *list = &l->p->fs[k == 0 ? FS_DENY_READ : FS_DENY_WRITE];
		struct alias_ctx c = {.l = l, .h = h, .list = list, .read = k == 0};
		size_t n = list->n;

		for (size_t i = 0; i < n; i++)
			if (list->v[i][0] == '/' && strpbrk(list->v[i], "*?[") == NULL)
				h->aliases(h->aliases_arg, list->v[i], alias_add, &c);
	}
}

/* Adds the filesystem entries every policy gets (SPEC §3.3, §3.6). */
static void fs_mandatory(struct ldr *l, const struct policy_host *h)
{
	struct policy *p = l->p;
	const char *xdg = host_env(h, "XDG_CONFIG_HOME"), *err;
	const char *state = host_env(h, "XDG_STATE_HOME");
	const char *gglobal = host_env(h, "GIT_CONFIG_GLOBAL");
	char *home = ldr_path_resolve("~", h->home, NULL, &err);

	/* One error, not one per path, when there is no home to expand. */
	if (home == NULL) {
		ldr_error(l, (struct policy_mark){0, 0},
			  "no home directory (%s), expected one to deny the credential stores "
			  "and start-up files in it",
			  err);
		return;
	}
	/* Round 46: a home that is / (HOME=/, what a container run with
	 * --user of a uid the password database does not name gets; the
	 * database's home of systemd-network and other daemons) made the
	 * home rows the system's own directories (~/bin is /bin): the start
	 * was refused over a hard link of the dynamic loader that /usr/bin's
	 * links lead to, a message that says nothing of why. */
	if (strcmp(home, "/") == 0) {
		ldr_error(l, (struct policy_mark){0, 0},
			  "the home directory is / (HOME=/, as a container run with --user of a uid the password "
			  "database does not name has): the credential stores and start-up files passavant denies "
			  "in a home would be the system's own directories (~/bin is /bin); expected a home of the "
			  "user's own: set HOME to one (HOME=$(mktemp -d) passavant run ...)");
		free(home);
		return;
	}
	fs_home_denies(l, h, home);
	/* "~" follows $HOME, which is only an environment variable: run with
	 * HOME=/somewhere/else, the real stores in the home directory of the
	 * password database would be left open. Deny them there too. */
	if (h->pw_home != NULL && h->pw_home[0] == '/') {
		char *pwhome = ldr_path_resolve(h->pw_home, NULL, NULL, &err);

		if (pwhome != NULL && strcmp(pwhome, "/") == 0)
			ldr_error(l, (struct policy_mark){0, 0},
				  "the password database gives / as this user's home (a daemon's account): "
				  "programs that read it rather than $HOME (ssh) would read their stores and "
				  "start-up files in the system's own directories, which passavant cannot deny as a "
				  "home's; expected a user with a home of its own: run passavant as one");
		else if (pwhome != NULL && strcmp(pwhome, home) != 0)
			fs_home_denies(l, h, pwhome);
		free(pwhome);
	}
	free(home);
	for (size_t i = 0; i < h->n_other_homes; i++)
		if (h->other_homes[i] != NULL && h->other_homes[i][0] == '/')
			fs_other_home_denies(l, h->other_homes[i]);
	for (size_t i = 0; i < h->n_snapshot_dirs; i++) {
		const char *d = h->snapshot_dirs[i];

		if (d == NULL || d[0] != '/' || holds_cwd(h, d))
			continue;
		if (!ldr_strlist_has(&p->fs[FS_ALLOW_READ], d))
			fs_add(l, &p->fs[FS_DENY_READ], d);
		if (h->unreachable == NULL || !h->unreachable(d))
			fs_add(l, &p->fs[FS_DENY_WRITE], d);
	}
	fs_store_relocations(l, h);
	fs_credential_files(l, h);
	fs_system_denies(l, h);
	fs_path_denies(l, h, "PATH", false);
	for (size_t i = 0; env_code_path_vars[i] != NULL; i++)
		fs_path_denies(l, h, env_code_path_vars[i], false);
	for (size_t i = 0; env_plugin_path_vars[i].name != NULL; i++)
		fs_path_denies(l, h, env_plugin_path_vars[i].name, true);
	for (size_t i = 0; env_startup_vars[i].name != NULL; i++)
		fs_path_denies(l, h, env_startup_vars[i].name, true);
	/* Round 40: the package managers' settings known by a pattern, any
	 * case (npm_config_userconfig, YARN_YARN_PATH, pnpm's store, ...) */
	for (size_t i = 0; h->env_at != NULL && h->env_at(i) != NULL; i++) {
		const char *kv = h->env_at(i), *eq = strchr(kv, '=');
		bool one = true;
		char *name;

		if (eq == NULL || !env_startup_family(kv, (size_t)(eq - kv), &one))
			continue;
		if ((name = strndup(kv, (size_t)(eq - kv))) == NULL) {
			ldr_error(l, (struct policy_mark){0, 0}, "out of memory, expected to add the mandatory denies");
			continue;
		}
		fs_path_denies(l, h, name, true);
		free(name);
	}
	fs_yarn_rc_home(l, h);
	for (size_t i = 0; env_code_opt_vars[i] != NULL; i++) {
		const char *val = host_env(h, env_code_opt_vars[i]);
		struct fs_opt o = {.l = l, .h = h};

		if (val != NULL && policy_code_options(env_code_opt_vars[i], val, fs_opt_deny, &o) < 0)
			ldr_error(l, (struct policy_mark){0, 0},
				  "out of memory, expected to add the mandatory denies");
	}
	/* Round 38: the families known by a pattern (CARGO_TARGET_<triple>_
	 * LINKER, CC_<target>, ...), found in the listed environment. */
	for (size_t i = 0; h->env_at != NULL && h->env_at(i) != NULL; i++) {
		const char *kv = h->env_at(i), *eq = strchr(kv, '='), *as;
		struct fs_opt o = {.l = l, .h = h};
		char *name;

		/* (the table's own names were read above; round 45: not
		 * MSBuild's in another case, which are as long) */
		if (eq == NULL || (as = env_code_var_as(kv, (size_t)(eq - kv))) == NULL ||
		    (strlen(as) == (size_t)(eq - kv) && memcmp(as, kv, (size_t)(eq - kv)) == 0))
			continue;
		name = strndup(kv, (size_t)(eq - kv));
		if (name == NULL || policy_code_options(name, eq + 1, fs_opt_deny, &o) < 0)
			ldr_error(l, (struct policy_mark){0, 0},
				  "out of memory, expected to add the mandatory denies");
		free(name);
	}
	/* The policy file and the place the lookup of §2 would find one next
	 * time: a sandbox that could write either would pick its own policy
	 * for the next run. */
	if (p->file != NULL) {
		fs_add_resolved(l, h, &p->fs[FS_DENY_WRITE], p->file);
		if (h->policy_real != NULL)
			fs_add_resolved(l, h, &p->fs[FS_DENY_WRITE], h->policy_real);
	}
	/* Files the next run trusts or the user reads afterwards: a sandbox
	 * that could write them could forge the audit log of its own egress
	 * or plant a root CA the proxy would verify upstreams against. */
	if (p->audit_path != NULL)
		fs_add(l, &p->fs[FS_DENY_WRITE], p->audit_path);
	for (size_t i = 0; i < p->extra_ca.n; i++)
		fs_add(l, &p->fs[FS_DENY_WRITE], p->extra_ca.v[i]);
	/* A credential file in mode deny must be unreadable in the sandbox
	 * (SPEC §3.2): it is a read deny like the stores, so a launcher that
	 * goes by the filesystem lists alone cannot miss it. */
	for (size_t i = 0; i < p->n_creds; i++)
		if (p->creds[i].pub.kind == CRED_FILE && p->creds[i].pub.mode == CRED_DENY &&
		    p->creds[i].path != NULL)
			fs_add(l, &p->fs[FS_DENY_READ], p->creds[i].path);
	/* Both places: a later run may have a different $XDG_CONFIG_HOME.
	 * git's global config, attributes and hooks there too (the table's
	 * row is ~/.config/git), and the file $GIT_CONFIG_GLOBAL names:
	 * git on the host reads them where the host's variables say. A
	 * relative one is left to `run`, which refuses to start with it
	 * (proxy/cli/plan.c plan_relative_config(), round 35 of the attack,
	 * e1); `check` prints the policy without it. */
	if (xdg != NULL && xdg[0] == '/') {
		char *path = NULL, *gpath = NULL;
		if (asprintf(&path, "%s/passavant", xdg) < 0 || asprintf(&gpath, "%s/git", xdg) < 0) {
			ldr_error(l, (struct policy_mark){0, 0},
				  "out of memory, expected to add the mandatory denies");
		} else {
			fs_add_resolved(l, h, &p->fs[FS_DENY_WRITE], path);
			fs_add_resolved(l, h, &p->fs[FS_DENY_WRITE], gpath);
		}
		free(path);
		free(gpath);
	}
	if (gglobal != NULL && gglobal[0] == '/')
		fs_add_resolved(l, h, &p->fs[FS_DENY_WRITE], gglobal);
	/* The sentinel key and ledger (SPEC §4.1): never readable (a
	 * sandbox with the key could forge the sentinel of any value it
	 * guesses) nor writable, in both places (the mandatory table has
	 * ~/.local/state/passavant) like the config directory. */
	if (state != NULL && state[0] == '/') {
		char *path = NULL;
		if (asprintf(&path, "%s/passavant", state) < 0) {
			ldr_error(l, (struct policy_mark){0, 0},
				  "out of memory, expected to add the mandatory denies");
		} else {
			fs_add_resolved(l, h, &p->fs[FS_DENY_READ], path);
			fs_add_resolved(l, h, &p->fs[FS_DENY_WRITE], path);
		}
		free(path);
	}
	fs_filer_snapshots(l, h);
	fs_mount_aliases(l, h);
}

/* Contract in policy.h. Errors are reported like the loader's, against
 * the policy's file name. */
unsigned policy_bind(policy_t *p, const struct policy_host *h, FILE *diag)
{
	struct ldr l = {.fname = p->file != NULL ? p->file : "<embedded default>",
			.diag = diag,
			.p = p,
			.embedded = p->file == NULL};

	if (p->bound)
		return 0;
	p->bound = true;
	resolve_paths(&l, h);
	for (size_t i = 0; i < FS_LIST_COUNT; i++)
		p->fs_named[i] = p->fs[i].n;
	fs_mandatory(&l, h);
	return ldr_flush_errors(&l);
}
