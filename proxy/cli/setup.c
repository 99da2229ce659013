/*
 * setup.c - what the subcommands share: the policy lookup, the session's
 * credential table, audit log, CA and proxy, the env file, and the
 * machine facts the run plan uses (read here, once).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pwd.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/fstype.h"
#include "proxy/audit.h"
#include "proxy/cli/cli.h"
#include "proxy/log.h"
#include "proxy/tls.h"

extern char **environ;

/* 0 when path exists, else stat(2)'s errno (policy_lookup()). */
static int path_probe(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? 0 : errno;
}

/* Why path cannot be read as a file now, or NULL (policy_bind(): the
 * extraCaCertPaths are read when the proxy starts). */
static const char *file_problem(const char *path)
{
	struct stat st;
	int fd = fileio_open_regular(path, 0, &st);

	if (fd < 0)
		return errno == EINVAL ? "not a regular file" : strerror(errno);
	(void)close(fd);
	return NULL;
}

static const char *host_env(const char *name)
{
	return getenv(name);
}

static const char *host_env_at(size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (environ[k] == NULL)
			return NULL;
	return environ[i];
}

/* struct policy_host's unreachable: lstat() says EACCES. */
static bool host_unreachable(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 && errno == EACCES;
}

/* Most other homes looked at (other_homes()). */
#define CLI_OTHER_HOMES_MAX 64
/* Most glob patterns of other homes: the fixed ones, WSL's root, two per
 * volume found in /proc/self/mountinfo and one per mount that is a home
 * itself. */
#define CLI_OTHER_HOME_GLOBS 64

/* Where Windows homes are mounted: WSL's drives, a dual boot's NTFS
 * volume (udisks under /media or /run/media; an fstab line's usual
 * places, /media/windows, /windows, /win, /data: round 34 of the attack,
 * d7, also when the volume is not mounted with a Windows file system, a
 * copy or a bind mount of it). And /Users/NAME, macOS's own homes, which
 * a Linux virtual machine on a Mac (Lima, Colima, Rancher Desktop, Podman
 * machine, UTM) shares at the same path, the home itself or all of
 * /Users (round 35, e4: virtiofs, 9p, reverse sshfs, whatever the file
 * system); no Linux distribution puts anything there. Not any other
 * "/X/Users": a lookup of Users in an automount point at the top (/net)
 * would ask the network at every start. */
static const char *const other_home_patterns[] = {
    "/mnt/*/Users/*",	   "/media/*/*/Users/*", "/run/media/*/*/Users/*", "/media/*/Users/*",
    "/windows/Users/*", "/Windows/Users/*",   "/win/Users/*",	       "/data/Users/*",
    "/Users/*"};
#define CLI_OTHER_HOME_PATTERNS (sizeof(other_home_patterns) / sizeof(other_home_patterns[0]))

/* The file systems a Windows (or macOS) volume is mounted with: NTFS
 * (the kernel's ntfs3 and old ntfs, ntfs-3g as fuseblk or fuse.ntfs-3g),
 * FAT and exFAT, WSL's drvfs and 9p, a virtual machine's share (virtiofs,
 * or Lima's reverse sshfs), macOS's HFS+ and APFS (its homes are
 * Users/NAME too). */
static bool windows_fstype(const char *t)
{
	static const char *const types[] = {"ntfs",  "ntfs3", "fuseblk", "vfat",     "msdos",   "exfat",
					    "9p",    "drvfs", "virtiofs", "hfsplus", "apfs",    "fuse.ntfs-3g",
					    "fuse.lowntfs-3g", "fuse.apfs-fuse", "fuse.exfat", "fuse.sshfs"};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(t, types[i]) == 0)
			return true;
	return false;
}

/* The glob pattern of MOUNT/SUB/NAME, any NAME, or with sub NULL of
 * MOUNT itself (the mount point's glob characters escaped), into out;
 * false when it does not fit. */
static bool mount_pattern(char *out, size_t len, const char *mnt, const char *sub)
{
	size_t n = 0;

	for (const char *p = mnt; *p != '\0'; p++) {
		if (n + 2 >= len)
			return false;
		if (strchr("*?[\\", *p) != NULL)
			out[n++] = '\\';
		out[n++] = *p;
	}
	if (sub == NULL) {
		out[n] = '\0';
		return n > 0;
	}
	return (size_t)snprintf(out + n, len - n, "%s%s/*", n > 0 && out[n - 1] == '/' ? "" : "/", sub) < len - n;
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void mountinfo_unescape(char *s)
{
	char *w = s;

	for (const char *r = s; *r != '\0'; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/*
 * One line of /proc/self/mountinfo ("ID PARENT MAJ:MIN ROOT MOUNT OPTIONS
 * [OPTIONAL...] - TYPE SOURCE SUPER"), cut in place: *mnt the mount
 * point with its escapes undone, *type the file system. False for a
 * line of another shape or a mount point that is not absolute.
 */
static bool mountinfo_split(char *line, char **mnt, char **type)
{
	char *field[5], *save = NULL, *sep, *tok;
	size_t k = 0;

	sep = strstr(line, " - ");
	if (sep == NULL)
		return false;
	*sep = '\0';
	for (tok = strtok_r(line, " ", &save); tok != NULL && k < 5; tok = strtok_r(NULL, " ", &save))
		field[k++] = tok;
	tok = strtok_r(sep + 3, " \n", &save);
	if (k < 5 || tok == NULL)
		return false;
	mountinfo_unescape(field[4]);
	if (field[4][0] != '/')
		return false;
	*mnt = field[4];
	*type = tok;
	return true;
}

/*
 * Whether the mount point mnt is a home itself, whatever its file system
 * (round 35 of the attack, e4: a Linux virtual machine on a Mac shares the
 * Mac user's home, not the volume that holds it): it holds an entry whose
 * only use is a home's, an ssh or GnuPG directory, the AWS CLI's or the
 * GitHub CLI's store, macOS's Library/Keychains, Windows'
 * AppData/Roaming. Not "/" and not the user's own home (home, pw_home:
 * struct cli_host's, NULL when unknown), whose rows are there already.
 * Nor a project's work tree mounted on its own (a container's or a
 * virtual machine's bind mount of a checkout with a .ssh of deploy
 * keys: the review of round 35 found its .npmrc, .kube, .docker
 * emptied as a home's): the top of a git work tree (.git) with none
 * of a home's own entries (shell start-up files and histories, .cache,
 * .local, macOS's Library, Windows' AppData); a home that is a
 * dotfiles repository has its shell files.
 *
 * Round 46 (fix46h): only on a mount whose type (mountinfo's, type) is
 * cheap to look at: a local one (base/fstype.h) or a virtual machine's
 * share of its host (virtiofs, 9p, vboxsf, VMware's and Parallels'
 * shares: round 35's case, answered by this machine's hypervisor). A
 * mount of NFS, CIFS, sshfs, any other FUSE filesystem or autofs is not
 * looked at (a look waited on a server that is down, or mounted an
 * automount point, at every start): not taken as a home here; the homes
 * of other users there are plan_other_users()'s, denied whole. Each
 * mark is looked at with AT_NO_AUTOMOUNT.
 */
static bool mount_is_home(const char *mnt, const char *type, const char *home, const char *pw_home)
{
	static const char *const vm_shares[] = {"virtiofs", "9p", "vboxsf", "fuse.vmhgfs-fuse", "prl_fs"};
	static const char *const markers[] = {".ssh",		   ".gnupg", ".aws", ".config/gh",
					      "Library/Keychains", "AppData/Roaming"};
	static const char *const home_own[] = {".bashrc",	".profile",	 ".bash_profile", ".bash_login",
					       ".bash_history", ".zshrc",	 ".zprofile",	  ".zshenv",
					       ".zsh_history",	".cshrc",	 ".tcshrc",	  ".kshrc",
					       ".config/fish",	".cache",	 ".local",	  "Library",
					       "AppData",	"NTUSER.DAT",	 ".Trash",	  ".viminfo",
					       ".lesshst",	".python_history"};
	char p[PATH_MAX];
	struct stat st;
	bool marked = false, cheap = fstype_local(type);

	for (size_t i = 0; i < sizeof(vm_shares) / sizeof(vm_shares[0]) && !cheap; i++)
		cheap = strcmp(type, vm_shares[i]) == 0;
	if (!cheap || strcmp(mnt, "/") == 0 || (home != NULL && strcmp(mnt, home) == 0) ||
	    (pw_home != NULL && strcmp(mnt, pw_home) == 0))
		return false;
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]) && !marked; i++)
		marked = (size_t)snprintf(p, sizeof(p), "%s/%s", mnt, markers[i]) < sizeof(p) &&
			 fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0;
	if (!marked)
		return false;
	if ((size_t)snprintf(p, sizeof(p), "%s/.git", mnt) >= sizeof(p) ||
	    fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) != 0)
		return true;
	for (size_t i = 0; i < sizeof(home_own) / sizeof(home_own[0]); i++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", mnt, home_own[i]) >= sizeof(p) ||
		    fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0)
			return true;
	return false;
}

/*
 * The patterns of the homes from /proc/self/mountinfo. On every volume
 * mounted with a Windows file system (windows_fstype()), wherever it is
 * mounted (round 34 of the attack, d7: an fstab line puts a dual boot's
 * volume at /media/windows, /windows or /data, which no fixed pattern
 * reaches): MOUNT/Users/NAME and MOUNT/Documents and Settings/NAME
 * (Windows XP's), "Users" in any case (FAT shows short names as the mount
 * says). And MOUNT itself when it is a home (mount_is_home(): a share of
 * a Mac's home at /mnt/mac or wherever a virtual machine's settings put
 * it, any file system but autofs, where a lookup would ask the network).
 * Appended to pats[*n] (each PATH_MAX + 32 long) up to max; *cut set when
 * mounts were left out.
 */
static void mounted_home_patterns(char (*pats)[PATH_MAX + 32], size_t *n, size_t max, bool *cut,
				  const char *home, const char *pw_home)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (f == NULL) {
		log_warnx("cannot read /proc/self/mountinfo to find the Windows volumes and homes mounted here: %s",
			  strerror(errno));
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		char *mnt, *tok;
		bool win, is_home;

		if (!mountinfo_split(line, &mnt, &tok))
			continue;
		win = windows_fstype(tok);
		is_home = mount_is_home(mnt, tok, home, pw_home);
		if (!win && !is_home)
			continue;
		if (*n + (win ? 2 : 0) + (is_home ? 1 : 0) > max) {
			*cut = true;
			continue;
		}
		if (is_home && mount_pattern(pats[*n], sizeof(pats[0]), mnt, NULL))
			(*n)++;
		if (win && mount_pattern(pats[*n], sizeof(pats[0]), mnt, "[Uu][Ss][Ee][Rr][Ss]"))
			(*n)++;
		if (win && mount_pattern(pats[*n], sizeof(pats[0]), mnt, "Documents and Settings"))
			(*n)++;
	}
	free(line);
	(void)fclose(f);
}

/*
 * WSL mounts the Windows drives under [automount] root of /etc/wsl.conf
 * ("/mnt/" unless set: "root = /" gives /c/Users/NAME, the review of round
 * 33): the glob pattern of the homes there (ROOT, any drive, Users, any
 * name) into out; false when the file sets no other root.
 */
static bool wsl_root_pattern(char *out, size_t len)
{
	char line[512], root[PATH_MAX] = "";
	bool in_automount = false;
	FILE *f = fopen("/etc/wsl.conf", "re");

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line + strspn(line, " \t"), *v;

		p[strcspn(p, "\r\n#;")] = '\0';
		if (*p == '[') {
			in_automount = strncasecmp(p, "[automount]", 11) == 0;
			continue;
		}
		if (!in_automount || strncasecmp(p, "root", 4) != 0 || (v = strchr(p, '=')) == NULL ||
		    strspn(p + 4, " \t") != (size_t)(v - p - 4))
			continue;
		v += 1 + strspn(v + 1, " \t\"");
		v[strcspn(v, " \t\"")] = '\0';
		snprintf(root, sizeof(root), "%s", v);
	}
	(void)fclose(f);
	if (root[0] != '/' || strcmp(root, "/mnt/") == 0 || strcmp(root, "/mnt") == 0)
		return false;
	return (size_t)snprintf(out, len, "%s%s*/Users/*", root, root[strlen(root) - 1] == '/' ? "" : "/") < len;
}

/*
 * Fills homes[] with the other homes mounted on this machine: the
 * directories (not links: "All Users", "Default User" are) matching
 * other_home_patterns (Windows' and macOS' Users/NAME), WSL's root and
 * the mounts of mounted_home_patterns() (home, pw_home: the user's own,
 * left out there). Their stores are the user's as much as $HOME's (round
 * 33 of the attack, under WSL; round 35, a Mac's home in a virtual
 * machine). Returns how many, each once; the strings are g's, freed with
 * globfree() on each.
 */
static size_t other_homes(glob_t g[CLI_OTHER_HOME_GLOBS], const char *homes[CLI_OTHER_HOMES_MAX],
			  const char *home, const char *pw_home)
{
	static char pats[CLI_OTHER_HOME_GLOBS][PATH_MAX + 32];
	size_t n = 0, npat = 0;
	bool over = false, cut = false;

	for (size_t k = 0; k < CLI_OTHER_HOME_GLOBS; k++)
		memset(&g[k], 0, sizeof(g[k]));
	for (size_t k = 0; k < CLI_OTHER_HOME_PATTERNS; k++)
		snprintf(pats[npat++], sizeof(pats[0]), "%s", other_home_patterns[k]);
	if (wsl_root_pattern(pats[npat], sizeof(pats[0])))
		npat++;
	mounted_home_patterns(pats, &npat, CLI_OTHER_HOME_GLOBS, &cut, home, pw_home);
	if (cut)
		log_warnx("more than %d Windows volumes or homes mounted: the homes on some are not looked at; "
			  "add their stores to filesystem.denyRead",
			  (CLI_OTHER_HOME_GLOBS - (int)CLI_OTHER_HOME_PATTERNS - 1) / 2);
	for (size_t k = 0; k < npat; k++) {
		int rc;

		rc = glob(pats[k], 0, NULL, &g[k]);
		if (rc != 0 && rc != GLOB_NOMATCH)
			log_warnx("cannot list %s to protect the homes there (glob error %d)", pats[k], rc);
		for (size_t i = 0; rc == 0 && i < g[k].gl_pathc; i++) {
			struct stat st;
			bool dup = false;

			if (lstat(g[k].gl_pathv[i], &st) != 0 || !S_ISDIR(st.st_mode))
				continue;
			/* A volume under /mnt or /media matches twice. */
			for (size_t j = 0; j < n && !dup; j++)
				dup = strcmp(homes[j], g[k].gl_pathv[i]) == 0;
			if (dup)
				continue;
			if (n == CLI_OTHER_HOMES_MAX)
				over = true;
			else
				homes[n++] = g[k].gl_pathv[i];
		}
	}
	if (over)
		log_warnx("more than %d other homes mounted: the stores of those past the %dth are not denied; "
			  "add them to filesystem.denyRead",
			  CLI_OTHER_HOMES_MAX, CLI_OTHER_HOMES_MAX);
	return n;
}

/* Snapshot directories looked for at most (the tops of the mounts). */
#define CLI_SNAPSHOT_DIRS_MAX 64

/*
 * The snapshot directories of the file systems mounted here (round 37 of
 * the attack): each holds an older copy of every file of its mount, so
 * a home's stores, /etc/shadow or /root are readable there under other
 * paths that no row names. ZFS: MOUNT/.zfs of every dataset (hidden
 * from listings, there by name whatever snapdir says); btrfs: snapper's
 * MOUNT/.snapshots; NFS and SMB: a filer's MOUNT/.snapshot (NetApp and
 * others show one in every directory; the homes' own are rows of the
 * table) and ~snapshot (SMB). Mounts inside a snapshot directory (ZFS
 * mounts each snapshot it shows) are its own. Written into dirs[*n] up
 * to CLI_SNAPSHOT_DIRS_MAX, whether they exist or not (nothing is looked
 * up there: policy_bind() and the sandbox deny the path); returns how many.
 */
static size_t snapshot_dirs(char (*dirs)[PATH_MAX], const char *out[CLI_SNAPSHOT_DIRS_MAX])
{
	static const struct {
		const char *type;
		const char *sub;
	} kinds[] = {
		{"zfs", ".zfs"},	  {"btrfs", ".snapshots"}, {"nfs", ".snapshot"},  {"nfs4", ".snapshot"},
		{"cifs", ".snapshot"},	  {"smb3", ".snapshot"},   {"cifs", "~snapshot"}, {"smb3", "~snapshot"},
	};
	char *line = NULL;
	size_t cap = 0, n = 0;
	bool cut = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (f == NULL) {
		log_warnx("cannot read /proc/self/mountinfo to find the file systems' snapshot directories "
			  "(ZFS .zfs, btrfs .snapshots, NFS .snapshot): %s; add them to filesystem.denyRead",
			  strerror(errno));
		return 0;
	}
	while (getline(&line, &cap, f) > 0) {
		char *mnt, *type;

		if (!mountinfo_split(line, &mnt, &type) || strstr(mnt, "/.zfs/") != NULL ||
		    strstr(mnt, "/.snapshots/") != NULL || strstr(mnt, "/.snapshot/") != NULL)
			continue;
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			bool dup = false;

			if (strcmp(type, kinds[k].type) != 0)
				continue;
			if (n == CLI_SNAPSHOT_DIRS_MAX) {
				cut = true;
				break;
			}
			if ((size_t)snprintf(dirs[n], PATH_MAX, "%s%s%s", mnt, strcmp(mnt, "/") == 0 ? "" : "/",
					     kinds[k].sub) >= PATH_MAX)
				continue;
			for (size_t j = 0; j < n && !dup; j++)
				dup = strcmp(dirs[j], dirs[n]) == 0;
			if (!dup) {
				out[n] = dirs[n];
				n++;
			}
		}
	}
	if (cut)
		log_warnx("more than %d snapshot directories of mounted file systems: those past it are not "
			  "denied; add them to filesystem.denyRead",
			  CLI_SNAPSHOT_DIRS_MAX);
	free(line);
	(void)fclose(f);
	return n;
}

/* The host's mounts, for mount_aliases(): each mount's device
 * ("MAJ:MIN"), the directory of its file system it shows (root) and its
 * mount point, escapes undone; twice: whether a device is mounted more
 * than once. */
struct mount_ent {
	char *dev, *root, *mnt;
};
struct mount_table {
	struct mount_ent *v;
	size_t n, cap;
	bool twice;
};

static void mount_table_free(struct mount_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].dev);
		free(t->v[i].root);
		free(t->v[i].mnt);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static void mount_table_read(struct mount_table *t)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	memset(t, 0, sizeof(*t));
	if (f == NULL) {
		log_warnx("cannot read /proc/self/mountinfo to find the other mounts of the denied paths' file "
			  "systems: %s; add the places they show the homes at to filesystem.denyRead",
			  strerror(errno));
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		char *field[5], *save = NULL, *sep = strstr(line, " - "), *tok;
		struct mount_ent e;
		size_t k = 0;

		if (sep == NULL)
			continue;
		*sep = '\0';
		for (tok = strtok_r(line, " ", &save); tok != NULL && k < 5; tok = strtok_r(NULL, " ", &save))
			field[k++] = tok;
		if (k < 5)
			continue;
		mountinfo_unescape(field[3]);
		mountinfo_unescape(field[4]);
		if (field[3][0] != '/' || field[4][0] != '/')
			continue;
		if (t->n == t->cap) {
			size_t nc = t->cap == 0 ? 64 : t->cap * 2;
			struct mount_ent *nv = realloc(t->v, nc * sizeof(*nv));

			if (nv == NULL)
				break;
			t->v = nv;
			t->cap = nc;
		}
		e.dev = strdup(field[2]);
		e.root = strdup(field[3]);
		e.mnt = strdup(field[4]);
		if (e.dev == NULL || e.root == NULL || e.mnt == NULL) {
			free(e.dev);
			free(e.root);
			free(e.mnt);
			break;
		}
		for (size_t i = 0; i < t->n && !t->twice; i++)
			t->twice = strcmp(t->v[i].dev, e.dev) == 0;
		t->v[t->n++] = e;
	}
	if (!feof(f))
		log_warnx("cannot read all of /proc/self/mountinfo (out of memory or a read error): other mounts "
			  "of the denied paths' file systems may be left readable; add them to filesystem.denyRead");
	free(line);
	(void)fclose(f);
}

/* The rest of path below dir ("" or "/..."), or NULL when it is not at
 * or below it; dir "/" keeps all of path. */
static const char *path_rest(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0') ? path + n : NULL;
}

/*
 * The path as the mounts see it: its directory made canonical (realpath),
 * its last component kept (a link there is the link, lstat()ed as the
 * denied path is). HOME=/home/u with /home -> var/home (Fedora's atomic
 * desktops, whose /sysroot shows the whole disk again): "/home/u/.ssh"
 * is at or below "/" by its letters only. False when it is too long, or
 * its directory does not resolve (then it is taken as written).
 */
static bool path_canonical(const char *path, char out[PATH_MAX])
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], real[PATH_MAX];
	size_t dl = slash != NULL ? (size_t)(slash - path) : 0;

	if (slash == NULL || slash[1] == '\0' || dl >= sizeof(dir))
		return false;
	memcpy(dir, path, dl);
	dir[dl] = '\0';
	if (realpath(dl == 0 ? "/" : dir, real) == NULL)
		return false;
	return (size_t)snprintf(out, PATH_MAX, "%s%s", strcmp(real, "/") == 0 ? "" : real, slash) < PATH_MAX;
}

/*
 * policy_host's aliases (round 40 of the attack, f2): the other places
 * the host's mounts show the file at path. Its mount (the longest mount
 * point it is at or below, the last such line: what is on top) gives
 * its place in its file system; every other mount of the same device
 * whose root holds that place shows it again, at MOUNT/REST. Each is
 * given to add only when it is the same file there (lstat: device and
 * inode), so a submount hiding it, or a path that does not exist, costs
 * nothing. Its review: the mount is looked for by the canonical path (a
 * link on its way, /home -> var/home, gave the wrong mount and no
 * alias), and a mount whose root lies BELOW that place (~/.ssh/keys
 * bound at /mnt/k) shows part of the denied path: its mount point is an
 * alias as a whole, when it is the same directory as PATH/REST there.
 */
static void mount_aliases(void *arg, const char *path, void (*add)(void *add_arg, const char *alias), void *add_arg)
{
	const struct mount_table *t = arg;
	const struct mount_ent *a = NULL;
	const char *rest;
	char in[PATH_MAX], alias[PATH_MAX], canon[PATH_MAX], below[PATH_MAX];
	struct stat st, at, bt;
	size_t best = 0;

	if (!t->twice)
		return;
	if (path_canonical(path, canon))
		path = canon;
	for (size_t i = 0; i < t->n; i++) {
		size_t ml = strlen(t->v[i].mnt);

		if (path_rest(path, t->v[i].mnt) != NULL && ml >= best) {
			best = ml;
			a = &t->v[i];
		}
	}
	if (a == NULL || (rest = path_rest(path, a->mnt)) == NULL || lstat(path, &st) != 0)
		return;
	if ((size_t)snprintf(in, sizeof(in), "%s%s", strcmp(a->root, "/") == 0 ? "" : a->root, rest) >= sizeof(in))
		return;
	if (in[0] == '\0')
		snprintf(in, sizeof(in), "/");
	for (size_t i = 0; i < t->n; i++) {
		const struct mount_ent *b = &t->v[i];
		const char *tail, *sub;

		if (b == a || strcmp(b->dev, a->dev) != 0)
			continue;
		if ((tail = path_rest(in, b->root)) == NULL) {
			/* b shows a directory inside the denied one: the
			 * same directory as path's own there, then all of
			 * b's mount point is the denied path's */
			if (!S_ISDIR(st.st_mode) || (sub = path_rest(b->root, in)) == NULL || sub[0] == '\0' ||
			    path_rest(b->mnt, path) != NULL)
				continue;
			if ((size_t)snprintf(below, sizeof(below), "%s%s", path, sub) >= sizeof(below) ||
			    lstat(below, &bt) != 0 || lstat(b->mnt, &at) != 0 || at.st_dev != bt.st_dev ||
			    at.st_ino != bt.st_ino)
				continue;
			add(add_arg, b->mnt);
			continue;
		}
		if ((size_t)snprintf(alias, sizeof(alias), "%s%s", strcmp(b->mnt, "/") == 0 ? "" : b->mnt, tail) >=
		    sizeof(alias))
			continue;
		if (alias[0] == '\0')
			snprintf(alias, sizeof(alias), "/");
		if (strcmp(alias, path) == 0 || lstat(alias, &at) != 0 || at.st_dev != st.st_dev ||
		    at.st_ino != st.st_ino)
			continue;
		add(add_arg, alias);
	}
}

unsigned cli_bind_policy(policy_t *p)
{
	struct mount_table mounts;
	static char snaps[CLI_SNAPSHOT_DIRS_MAX][PATH_MAX];
	const char *snap_dirs[CLI_SNAPSHOT_DIRS_MAX];
	struct cli_host ch;
	char *real = policy_file(p) != NULL ? realpath(policy_file(p), NULL) : NULL;
	const char *homes[CLI_OTHER_HOMES_MAX];
	glob_t g[CLI_OTHER_HOME_GLOBS];
	struct policy_host h;
	unsigned n;

	cli_host_read(&ch);
	h = (struct policy_host){.home = ch.h.home,
				 .pw_home = ch.h.pw_home,
				 .cwd = ch.h.cwd,
				 .policy_real = real,
				 .env = host_env,
				 .env_at = host_env_at,
				 .file_problem = file_problem,
				 .unreachable = host_unreachable};
	h.n_other_homes = other_homes(g, homes, ch.h.home, ch.h.pw_home);
	h.other_homes = homes;
	h.n_snapshot_dirs = snapshot_dirs(snaps, snap_dirs);
	h.snapshot_dirs = snap_dirs;
	mount_table_read(&mounts);
	h.aliases = mount_aliases;
	h.aliases_arg = &mounts;
	n = policy_bind(p, &h, stderr);
	mount_table_free(&mounts);
	for (size_t k = 0; k < CLI_OTHER_HOME_GLOBS; k++)
		globfree(&g[k]);
	free(real);
	return n;
}

/* What print_value_finding() needs: the policy and its file. */
struct value_findings {
	const policy_t *p;
	const char *path;
};

/* mask_diag_fn of cli_load_policy(): one line per finding on a masked
 * value, at the credential's place in the policy file, worded like the
 * loader's own ("FILE:LINE:COL: error: ...", "warning: FILE:LINE:COL: ..."). */
static void print_value_finding(void *arg, size_t cred, bool error, const char *msg)
{
	const struct value_findings *vf = arg;
	unsigned line, col;

	policy_cred_where(vf->p, cred, &line, &col);
	if (error)
		fprintf(stderr, "%s:%u:%u: error: %s\n", vf->path, line, col, msg);
	else
		fprintf(stderr, "warning: %s:%u:%u: %s\n", vf->path, line, col, msg);
}

policy_t *cli_load_policy(const char *cli_path, bool *invalid)
{
	struct passwd *pw = getpwuid(getuid());
	struct policy_lookup_env le = {
		.passavant_policy = getenv("PASSAVANT_POLICY"),
		.xdg_config_home = getenv("XDG_CONFIG_HOME"),
		.home = getenv("HOME"),
		.pw_home = pw != NULL ? pw->pw_dir : NULL,
		.probe = path_probe,
	};
	char path[4096];
	unsigned nerrors = 0;
	policy_t *p;

	*invalid = false;
	switch (policy_lookup(cli_path, &le, path, sizeof(path))) {
	case POLICY_SOURCE_EMBEDDED:
		p = policy_load_default(stderr);
		if (p == NULL || cli_bind_policy(p) != 0) {
			log_warnx("cannot build the embedded default policy");
			policy_free(p);
			return NULL;
		}
		return p;
	case POLICY_SOURCE_ERROR:
		log_warnx("%s", path);
		return NULL;
	case POLICY_SOURCE_FILE:
		break;
	}
	p = policy_load_file(path, stderr, &nerrors);
	/* Bound to this machine, then the masked values checked where mask/
	 * reads them: the same errors for check, proxy and run. */
	if (p != NULL &&
	    ((nerrors = cli_bind_policy(p)) != 0 ||
	     (nerrors = mask_table_check(p, print_value_finding,
					 &(struct value_findings){.p = p, .path = path})) != 0)) {
		policy_free(p);
		p = NULL;
	}
	if (p == NULL) {
		*invalid = true;
		fprintf(stderr, "%s: %u error%s; the policy was not loaded\n", path, nerrors,
			nerrors == 1 ? "" : "s");
	}
	return p;
}

bool cli_uses_state_dir(const policy_t *p)
{
	bool masked = false;

	for (size_t i = 0; i < policy_cred_count(p) && !masked; i++)
		masked = policy_cred(p, i)->mode == CRED_MASK;
	return masked && policy_sentinels(p) != POLICY_SENTINELS_PER_SESSION;
}

/*
 * The credential side of a session (SPEC §2, §4): reads every masked
 * credential of p into a table (real values in locked memory), warns once
 * when that memory cannot be locked, rewrites the masked variables of our
 * own environment to their sentinels (so no child and no /proc/PID/environ
 * reader sees a real value), and writes the sentinel copies of masked
 * files into <session>/files/. Sentinels are stable (SPEC §4.1: the key
 * and ledger of the state directory, proxy/cli/sentinels.c) unless the
 * policy says per-session. Returns NULL after printing why; the
 * message never carries a value.
 */
static mask_table_t *masks_setup(const policy_t *p, session_t *sess)
{
	char err[1024], dir[PATH_MAX];
	const char *files;
	mask_table_t *t;

	/* No key is created or read for a policy that masks nothing. */
	if (!cli_uses_state_dir(p)) {
		t = mask_table_new(p, err, sizeof(err));
	} else {
		/* SPEC §4.1: stable sentinels from the key in the user's
		 * state directory (created on first use). */
		struct cli_host ch;

		cli_host_read(&ch);
		t = cli_state_dir(getenv("XDG_STATE_HOME"), ch.h.home, dir, sizeof(dir), err,
				  sizeof(err)) == 0
			    ? cli_stable_table(p, dir, err, sizeof(err))
			    : NULL;
	}
	if (t == NULL) {
		log_warnx("credentials: %s", err);
		return NULL;
	}
	if ((mask_table_hygiene(t) & MASK_HYG_LOCKED) == 0)
		log_warnx("warning: cannot lock secret memory (mlock): real credential values may "
			  "be swapped to disk; raise the locked-memory limit (ulimit -l) or grant "
			  "CAP_IPC_LOCK");
	if (mask_table_forms_small(t)) {
		char names[1024];
		size_t nl = 0, k, more = 0;
		const char *nm;

		names[0] = '\0';
		for (k = 0; (nm = mask_table_forms_small_cred(t, k)) != NULL; k++) {
			int w = snprintf(names + nl, sizeof(names) - nl, "%s%s", k > 0 ? ", " : "", nm);

			if (w < 0 || (size_t)w >= sizeof(names) - nl - 32) {
				names[nl] = '\0';
				more++;
				continue;
			}
			nl += (size_t)w;
		}
		if (more > 0)
			(void)snprintf(names + nl, sizeof(names) - nl, " and %zu more", more);
		log_warnx("warning: the masked values over 4 KiB are too many for all their forms (the masking "
			  "sets hold 4 MiB): the values of %s (the largest) go without their base64, PHP's JSON "
			  "and their line-broken forms past 8 KiB, so a response or a file holding one of them "
			  "in those forms is not re-masked (the other values keep them); mask fewer values over "
			  "4 KiB, or deny them (mode: deny)",
			  names);
	}
	(void)mask_table_scrub_environ(t);
	files = session_files_dir(sess);
	if (files == NULL)
		goto fail;
	if (mask_table_write_files(t, files, err, sizeof(err)) < 0) {
		log_warnx("credentials: %s", err);
		goto fail;
	}
	return t;
fail:
	mask_table_free(t);
	return NULL;
}

proxy_t *cli_session_proxy(policy_t *p, session_t *sess, const char **audit_path,
			   mask_table_t **masks)
{
	audit_t *audit = NULL;
	tls_session_t *tls;
	char err[1024];
	proxy_t *px;

	*masks = masks_setup(p, sess);
	if (*masks == NULL) {
		policy_free(p);
		return NULL;
	}
	if (*audit_path == NULL)
		*audit_path = policy_audit_path(p);
	if (*audit_path != NULL && (audit = audit_open(*audit_path, session_id(sess))) == NULL) {
		if (errno == ELOOP)
			log_warnx("audit log %s is a symbolic link (or one replaced a directory on "
				  "its path): passavant never writes through one; name the file "
				  "itself", *audit_path);
		else if (errno == EINVAL || errno == ENXIO)
			log_warnx("audit log %s is not a regular file; name a regular file (it is "
				  "created if missing)", *audit_path);
		else
			log_warn("audit log %s", *audit_path);
		policy_free(p);
		goto fail;
	}
	tls = tls_session_new(p, session_dir(sess), err, sizeof(err));
	if (tls == NULL) {
		log_warnx("session CA: %s", err);
		policy_free(p);
		audit_free(audit);
		goto fail;
	}
	/* proxy_new takes p and audit, also on failure. */
	px = proxy_new(p, policy_file(p), audit, session_id(sess));
	if (px == NULL) {
		tls_session_free(tls);
		goto fail;
	}
	proxy_set_tls(px, tls);
	proxy_set_binder(px, cli_bind_policy);
	return px;
fail:
	mask_table_free(*masks);
	*masks = NULL;
	return NULL;
}

int cli_write_session_env(session_t *sess, const char *host, uint16_t port,
			  const mask_table_t *masks)
{
	struct strv vars = {0}, sentinels = {0};
	char abs[PATH_MAX], trust[PATH_MAX + 16];
	const char *trust_pem = NULL;
	int rc = -1;

	/* Absolute, so the file works from any directory. */
	if (realpath(session_dir(sess), abs) != NULL) {
		(void)snprintf(trust, sizeof(trust), "%s/trust.pem", abs);
		trust_pem = trust;
	} else {
		log_warn("session directory %s: realpath", session_dir(sess));
	}
	if (plan_env_vars(&vars, host, port, trust_pem) == 0 &&
	    (masks == NULL || plan_sentinel_env(&sentinels, masks) == 0))
		rc = session_write_env(sess, strv_list(&vars), strv_list(&sentinels));
	strv_free(&vars);
	strv_free(&sentinels);
	return rc;
}

/* Copies s into out (PATH_MAX) and returns out, or NULL if s is. */
static const char *keep(char *out, const char *s)
{
	if (s == NULL || snprintf(out, PATH_MAX, "%s", s) >= PATH_MAX)
		return NULL;
	return out;
}

void cli_host_read(struct cli_host *ch)
{
	const char *home = getenv("HOME");
	struct passwd *pw = getpwuid(getuid());
	ssize_t n;

	memset(ch, 0, sizeof(*ch));
	/* As the shell does: $HOME, else the password database. */
	ch->h.pw_home = keep(ch->pw_home, pw != NULL ? pw->pw_dir : NULL);
	ch->h.home = keep(ch->home, home != NULL && home[0] != '\0' ? home : ch->h.pw_home);
	/* The password database's home spelled otherwise but the same
	 * directory as $HOME (HOME=/home/u with /home -> /var/home): its rows
	 * would be the same files, walked and checked a second time. */
	if (ch->h.home != NULL && ch->h.pw_home != NULL && strcmp(ch->h.home, ch->h.pw_home) != 0) {
		struct stat hst, pst;

		if (stat(ch->h.home, &hst) == 0 && stat(ch->h.pw_home, &pst) == 0 &&
		    hst.st_dev == pst.st_dev && hst.st_ino == pst.st_ino)
			ch->h.pw_home = ch->h.home;
	}
	ch->h.cwd = getcwd(ch->cwd, sizeof(ch->cwd));
	n = readlink("/proc/self/exe", ch->self, sizeof(ch->self) - 1);
	if (n > 0) {
		ch->self[n] = '\0';
		ch->h.self_exe = ch->self;
	}
	ch->h.env = environ;
}
