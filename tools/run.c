/* SPDX-License-Identifier: MIT */
/*
 * run.c - rgroup run: start a program nobody changed with its threads put
 * into rgroups by name (the preload, src/run/preload.c, does the placing; the
 * rules are src/run/run-spec.h's). This command checks everything it can
 * before the program starts, so that what cannot work is a clear error
 * here rather than a program that silently runs without its groups:
 * the rules, the program (a static or setuid program cannot take a
 * preload), the backend, and the settings against this process.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <rgroup.h>

#include "run-spec.h"
#include "tool.h"

static const char run_usage[] =
	"Usage: rgroup run [OPTIONS] -- PROGRAM [ARGS...]\n"
	"\n"
	"Start PROGRAM with its threads put into rgroups by their names. When the\n"
	"program names a thread (pthread_setname_np, prctl PR_SET_NAME), the thread\n"
	"enters the group of the first rule whose pattern matches the name and\n"
	"stays there; threads it creates are born in that group. Threads whose\n"
	"names match nothing stay where they are.\n"
	"\n"
	"  -g, --group SPEC     a rule (repeatable; the first matching pattern wins)\n"
	"  -c, --config FILE    rules from FILE: one SPEC per line, '#' comments\n"
	"  -n, --dry-run        check everything and print the plan; start nothing\n"
	"      --no-inherit     programs that PROGRAM starts do not get the rules\n"
	"      --no-control     no `rgroup set` for PROGRAM (else, from its first\n"
	"                       group on, a thread 'rgroup-ctl' answers it)\n"
	"  -b, --backend NAME   use this backend (RGROUP_BACKEND=NAME)\n"
	"  -v, --verbose        PROGRAM says on stderr where each thread went, and\n"
	"                       at its exit what each rule took (without -v: only\n"
	"                       when a rule took no thread)\n"
	"  -h, --help           show this help\n"
	"\n"
	"SPEC:  GROUP[=PATTERN[,PATTERN...]][:SETTING[,SETTING...]]\n"
	"  GROUP    a name, nested with '/': bg, bg/compaction\n"
	"  PATTERN  a shell glob on the thread's name (15 characters at most):\n"
	"           'CPU */TCG', 'rocksdb:low*'; '\\,' and '\\:' for a literal , or :\n"
	"  SETTING  nice=N (-20..19)   cpus=LIST (0,2-3)   max=P% (of one CPU) or\n"
	"           max=QUOTA/PERIOD (microseconds); a child group only narrows its parent\n"
	"\n"
	"Example:\n"
	"  rgroup run -g 'vcpu=CPU */TCG:nice=-5' -g 'rest=*:max=50%' \\\n"
	"      -- qemu-system-x86_64 -name vm,debug-threads=on ...\n"
	"\n"
	"Exit status: PROGRAM's; 1 if it cannot be started as asked (a static or\n"
	"setuid program, no backend, settings this process cannot have), 2 bad\n"
	"usage, 125 the preload stopped PROGRAM (it says why), 126/127 no exec.\n";

static struct rgroup__run_rules rules;

/* ---- The program ----------------------------------------------------------- */

struct program {
	char path[PATH_MAX];
	char interp[PATH_MAX];    /* ELF interpreter ("" static) */
	char script[PATH_MAX];    /* "#!" line's program, if a script */
};

/* PROGRAM as exec would find it (execvp's PATH search). */
static int find_program(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p;
	struct stat st;

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p++) {
		const char *end = strchrnul(p, ':');

		snprintf(out, len, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "", name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!*end)
			break;
		p = end;
	}
	return -ENOENT;
}

/* This machine's ELF class and machine, from our own executable. */
static int own_elf(unsigned char *cls, uint16_t *machine)
{
	Elf64_Ehdr h;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, &h, sizeof(h));

	if (fd >= 0)
		close(fd);
	if (n < (ssize_t)EI_NIDENT + 4)
		return -1;
	*cls = h.e_ident[EI_CLASS];
	*machine = h.e_machine;
	return 0;
}

/*
 * Is `path` an ELF the preload can load into? 0 and its interpreter in
 * interp ("" for a static one: an error), or -1 and why in err.
 */
static int inspect_elf(const char *path, char *interp, size_t len, char *err, size_t elen)
{
	Elf64_Ehdr h;
	unsigned char cls;
	uint16_t machine;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = -1;

	interp[0] = '\0';
	if (fd < 0) {
		snprintf(err, elen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) || memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) {
		snprintf(err, elen, "%s is neither an ELF program nor a script", path);
		goto out;
	}
	if (own_elf(&cls, &machine) == 0 && (h.e_ident[EI_CLASS] != cls || h.e_machine != machine)) {
		snprintf(err, elen, "%s is built for another machine or word size (ELF class %d, machine %d) than the preload (%d, %d)",
			 path, h.e_ident[EI_CLASS], h.e_machine, cls, machine);
		goto out;
	}
	for (unsigned int i = 0; i < h.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(h.e_phoff + (Elf64_Off)i * h.e_phentsize)) != (ssize_t)sizeof(ph))
			break;
		if (ph.p_type != PT_INTERP)
			continue;
		size_t n = ph.p_filesz < len ? ph.p_filesz : len - 1;
		if (pread(fd, interp, n, (off_t)ph.p_offset) != (ssize_t)n)
			n = 0;
		interp[n] = '\0';
		break;
	}
	if (!interp[0]) {
		snprintf(err, elen, "%s is statically linked: it has no dynamic loader to load the preload, so rgroup run cannot place its threads (a static program can use librgroup itself: rgroup_thread_create)",
			 path);
		goto out;
	}
	r = 0;
out:
	close(fd);
	return r;
}

/* Would the kernel run it in secure-execution mode, where the dynamic
 * loader ignores LD_PRELOAD? NULL if not, else what makes it so. */
static const char *secure_reason(const char *path)
{
	struct statvfs v;
	struct stat st;

	if (stat(path, &st) < 0 || (statvfs(path, &v) == 0 && (v.f_flag & ST_NOSUID)))
		return NULL;    /* a nosuid mount: the bits do nothing */
	if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
		return "setuid";
	if ((st.st_mode & S_ISGID) && st.st_gid != getgid())
		return "setgid";
	if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return "given file capabilities";
	return NULL;
}

/* Can PROGRAM be run with the preload? 0; -errno when exec itself would
 * fail (no such program, not executable); -1 when it would run but
 * without its rules (err says why). */
static int check_program(const char *name, struct program *p, char *err, size_t elen)
{
	char line[PATH_MAX + 8];
	const char *why;
	ssize_t n;
	int fd, r = find_program(name, p->path, sizeof(p->path));

	if (r < 0) {
		snprintf(err, elen, "cannot run %s: %s", name, strerror(-r));
		return r;   /* as exec failed: 127 or 126, as env(1) exits */
	}
	if ((why = secure_reason(p->path))) {
		snprintf(err, elen, "%s is %s: the kernel runs it in secure-execution mode, where the dynamic loader ignores LD_PRELOAD, so rgroup run cannot place its threads",
			 p->path, why);
		return -1;
	}
	p->script[0] = '\0';
	fd = open(p->path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, line, sizeof(line) - 1);
	if (fd >= 0)
		close(fd);
	if (n >= 2 && line[0] == '#' && line[1] == '!') {
		/* A script: what the preload loads into is its interpreter. */
		char *s = line + 2, *e;
		line[n] = '\0';
		s += strspn(s, " \t");
		e = s + strcspn(s, " \t\n");
		*e = '\0';
		snprintf(p->script, sizeof(p->script), "%s", s);
		if ((why = secure_reason(p->script))) {
			snprintf(err, elen, "%s's interpreter %s is %s: the dynamic loader would ignore the preload",
				 p->path, p->script, why);
			return -1;
		}
		return inspect_elf(p->script, p->interp, sizeof(p->interp), err, elen);
	}
	return inspect_elf(p->path, p->interp, sizeof(p->interp), err, elen);
}

/* ---- The preload ------------------------------------------------------------- */

/* The librgroup-preload.so of the librgroup.so this command runs with:
 * installed, it is in the private directory rgroup/ below the library's
 * (LIBDIR/rgroup/, src/meson.build); in the build tree, beside it. Found
 * from the library and not from a compiled-in path, so that the preload
 * always comes from the library's own build (its RGROUP_PRIVATE node),
 * also in a staged install. */
static int find_preload(char *out, size_t len, char *err, size_t elen)
{
	static const char *const where[] = { "rgroup/", "" };
	char lib[PATH_MAX], dir[PATH_MAX];
	const char *d;
	Dl_info info;
	size_t i;

	if (!dladdr((void *)rgroup_backend, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, lib)) {
		snprintf(err, elen, "cannot tell where librgroup.so is");
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", lib);
	d = dirname(dir);
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(out, len, "%s/%slibrgroup-preload.so", d, where[i]);
		if (access(out, R_OK) == 0)
			break;
	}
	if (i == sizeof(where) / sizeof(where[0])) {
		snprintf(err, elen, "%s/rgroup/librgroup-preload.so is missing (it is installed with %s)",
			 d, lib);
		return -1;
	}
	if (strpbrk(out, ": ")) {
		snprintf(err, elen, "the preload's path %s holds ':' or ' ', which LD_PRELOAD cannot carry", out);
		return -1;
	}
	return 0;
}

/* ---- Settings this process can have -------------------------------------------- */

/* What the library would refuse later is refused now, where it can be
 * said: CPUs this process may not use (rule 10, EPERM), a top-level
 * group below this process's nice without room for it (rule 6, EACCES). */
static int check_settings(char *err, size_t elen)
{
	cpu_set_t mine, both;
	struct rlimit rl;
	char a[512], b[512];
	int nice;

	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		CPU_ZERO(&mine);
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		nice = 0;
	for (unsigned int i = 0; i < rules.ngroups; i++) {
		const struct rgroup__run_group *g = &rules.groups[i];

		CPU_AND(&both, &g->cpus, &mine);
		if (g->has_cpus && CPU_COUNT(&mine) && !CPU_EQUAL(&both, &g->cpus)) {
			rgroup__run_format_cpus(&g->cpus, a, sizeof(a));
			rgroup__run_format_cpus(&mine, b, sizeof(b));
			snprintf(err, elen, "group '%s': cpus=%s is not within the CPUs this process may use (%s)",
				 g->path, a, b);
			return -1;
		}
		if (g->has_nice && g->parent < 0 && g->nice < nice && geteuid() != 0 &&
		    !(getrlimit(RLIMIT_NICE, &rl) == 0 &&
		      (rl.rlim_cur == RLIM_INFINITY || (rlim_t)(20 - g->nice) <= rl.rlim_cur))) {
			snprintf(err, elen, "group '%s': nice=%d is below this process's nice %d, which a top-level group may go only with RLIMIT_NICE room or CAP_SYS_NICE (rule 6)",
				 g->path, g->nice, nice);
			return -1;
		}
	}
	return 0;
}

/*
 * A cap that can never bind is legal but does nothing: a group whose
 * threads may use only N CPUs (its own set, its nearest ancestor's, else
 * this process's) never runs more than N CPUs' worth, so a cap of N or
 * more CPUs never holds it back. Said, not refused: the program runs as
 * the rules say. The number of warnings.
 */
static int warn_caps(void)
{
	cpu_set_t mine;
	int n = 0;

	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		return 0;
	for (unsigned int i = 0; i < rules.ngroups; i++) {
		const struct rgroup__run_group *g = &rules.groups[i], *c;
		char set[256], where[300];
		int p = (int)i, ncpus;

		if (!g->quota_us)
			continue;
		while (p >= 0 && !rules.groups[p].has_cpus)
			p = rules.groups[p].parent;
		c = p >= 0 ? &rules.groups[p] : NULL;
		ncpus = CPU_COUNT(c ? &c->cpus : &mine);
		if (!ncpus || g->quota_us < (uint64_t)ncpus * g->period_us)
			continue;
		rgroup__run_format_cpus(c ? &c->cpus : &mine, set, sizeof(set));
		if (c == g)
			snprintf(where, sizeof(where), "its cpus=%s", set);
		else if (c)
			snprintf(where, sizeof(where), "cpus=%s of '%s'", set, c->path);
		else
			snprintf(where, sizeof(where), "the CPUs this process may use, %s", set);
		fprintf(stderr, "%s run: warning: group '%s': a cap of %.0f%% of one CPU never binds: its threads may use only %d CPU%s (%s)\n",
			tool_name, g->path, 100.0 * (double)g->quota_us / (double)g->period_us, ncpus,
			ncpus == 1 ? "" : "s", where);
		n++;
	}
	return n;
}

/* ---- The plan ------------------------------------------------------------------ */

static void print_group(int gi, int depth)
{
	const struct rgroup__run_group *g = &rules.groups[gi];
	char set[512], pats[1024] = "";
	size_t off = 0;

	rgroup__run_format_settings(g, set, sizeof(set));
	for (unsigned int i = 0; i < rules.npatterns; i++)
		if (rules.patterns[i].group == gi && off < sizeof(pats))
			off += (size_t)snprintf(pats + off, sizeof(pats) - off, "%s#%u '%s'",
						 off ? ", " : "", i + 1, rules.patterns[i].glob);
	printf("  %*s%-*s %-28s %s\n", 2 * depth, "", 22 - 2 * depth, g->path, *set ? set : "-",
	       off ? pats : "(only its child groups' threads)");
	for (unsigned int i = (unsigned int)gi + 1; i < rules.ngroups; i++)
		if (rules.groups[i].parent == gi)
			print_group((int)i, depth + 1);
}

static void print_plan(const struct program *p, const char *backend, const char *why,
		       int inherit, const char *preload, const char *env)
{
	printf("program:  %s", p->path);
	if (p->script[0])
		printf(" (a script for %s)", p->script);
	printf("%s%s%s\n", p->interp[0] ? ", dynamically linked (" : "", p->interp,
	       p->interp[0] ? ")" : "");
	printf("backend:  %s%s%s\n", backend, why ? ": " : "", why ? why : "");
	printf("children: %s\n", inherit ? "programs it starts get the same rules"
					 : "programs it starts run without the rules (--no-inherit)");
	printf("groups (a thread joins the group of the first pattern, #1, #2..., that its name matches):\n");
	printf("  %-22s %-28s %s\n", "GROUP", "SETTINGS", "PATTERNS");
	for (unsigned int i = 0; i < rules.ngroups; i++)
		if (rules.groups[i].parent < 0)
			print_group((int)i, 0);
	printf("environment:\n  LD_PRELOAD=%s\n  RGROUP_RUN_RULES='", preload);
	for (const char *c = env; *c; c++) {
		if (*c == '\n' && c[1])
			printf("\n                    ");
		else if (*c != '\n')
			putchar(*c);
	}
	printf("'\n");
}

static int load_config(const char *file)
{
	static char text[1 << 20];
	char err[700];
	ssize_t n;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "%s run: cannot read %s: %s\n", tool_name, file, strerror(errno));
		return EXIT_FAIL;
	}
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0 || n == (ssize_t)sizeof(text) - 1) {
		fprintf(stderr, "%s run: %s: %s\n", tool_name, file, n < 0 ? strerror(errno) : "larger than 1 MB");
		return EXIT_FAIL;
	}
	text[n] = '\0';
	if ((size_t)n != strlen(text)) {
		unsigned int line = 1;
		for (const char *c = text; *c; c++)
			line += *c == '\n';
		return tool_usage_error("run", "%s:%u: a NUL byte: not a text file of rules", file, line);
	}
	if (rgroup__run_add_text(&rules, text, file, err, sizeof(err)) < 0)
		return tool_usage_error("run", "%s", err);
	return EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "group", required_argument, NULL, 'g' },
		{ "config", required_argument, NULL, 'c' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "no-inherit", no_argument, NULL, 'I' },
		{ "no-control", no_argument, NULL, 'C' },
		{ "backend", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static char env[1 << 16];
	char err[800], why[512], preload[PATH_MAX], ld[PATH_MAX * 2 + 4096], pidstr[16];
	struct program prog;
	int c, dry = 0, inherit = 1, control = 1, verbose = 0, r, bad = 0;
	const char *backend = NULL, *old;

	rgroup__run_init(&rules);
	opterr = 0;
	/* '+': the program's own options are not ours. */
	while ((c = getopt_long(argc, argv, "+g:c:nb:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (rgroup__run_add(&rules, optarg, err, sizeof(err)) < 0)
				return tool_usage_error("run", "--group: %s", err);
			break;
		case 'c':
			if ((r = load_config(optarg)) != EXIT_OK)
				return r;
			break;
		case 'n':
			dry = 1;
			break;
		case 'I':
			inherit = 0;
			break;
		case 'C':
			control = 0;
			break;
		case 'b':
			backend = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			fputs(run_usage, stdout);
			return EXIT_OK;
		default:
			if (optopt && c == '?' && strchr("gcb", optopt))
				return tool_usage_error("run", "option '-%c' needs an argument", optopt);
			if (optopt)
				return tool_usage_error("run", "unknown option '-%c'", optopt);
			return tool_usage_error("run", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return tool_usage_error("run", "no PROGRAM given (rgroup run [OPTIONS] -- PROGRAM [ARGS...])");
	if (!rules.nrules)
		return tool_usage_error("run", "no rules: give --group SPEC or --config FILE");
	if (rgroup__run_check(&rules, err, sizeof(err)) < 0)
		return tool_usage_error("run", "%s", err);

	/* Everything that can be checked here is; for --dry-run all of it is
	 * printed, else the first problem ends it. */
	if ((r = check_program(argv[optind], &prog, err, sizeof(err))) < 0) {
		fprintf(stderr, "%s run: %s\n", tool_name, err);
		if (!dry)
			return r == -ENOENT ? 127 : r < -1 ? 126 : EXIT_FAIL;
		bad = 1;
		snprintf(prog.path, sizeof(prog.path), "%s", argv[optind]);
		prog.interp[0] = prog.script[0] = '\0';
	}
	if (backend) {
		if (rgroup_probe(backend, why, sizeof(why)) == -ENOENT)
			return tool_usage_error("run", "--backend: %s", why);
		setenv("RGROUP_BACKEND", backend, 1);
	}
	r = rgroup_probe(NULL, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "%s run: no backend can enforce rgroups for %s here: %s\n", tool_name,
			prog.path, why);
		if (!dry)
			return EXIT_FAIL;
		bad = 1;
	}
	if (check_settings(err, sizeof(err)) < 0) {
		fprintf(stderr, "%s run: %s\n", tool_name, err);
		if (!dry)
			return EXIT_FAIL;
		bad = 1;
	}
	warn_caps();
	if (find_preload(preload, sizeof(preload), err, sizeof(err)) < 0) {
		fprintf(stderr, "%s run: %s\n", tool_name, err);
		if (!dry)
			return EXIT_FAIL;
		bad = 1;
		snprintf(preload, sizeof(preload), "(missing)");
	}
	if (rgroup__run_format(&rules, env, sizeof(env)) < 0) {
		fprintf(stderr, "%s run: the rules do not fit in the environment\n", tool_name);
		return EXIT_FAIL;
	}
	/* Ours first; what the caller preloads stays, once. */
	old = getenv("LD_PRELOAD");
	if (old && *old && !strstr(old, preload))
		snprintf(ld, sizeof(ld), "%s:%s", preload, old);
	else if (old && *old)
		snprintf(ld, sizeof(ld), "%s", old);
	else
		snprintf(ld, sizeof(ld), "%s", preload);
	if (dry) {
		print_plan(&prog, r < 0 ? "none" : (backend ? backend : rgroup_backend()),
			   r < 0 ? why : NULL, inherit, ld, env);
		return bad ? EXIT_FAIL : EXIT_OK;
	}
	/* The program keeps this pid: the preload reports what the rules did
	 * at its exit (src/run/preload.c), its children only with -v. */
	snprintf(pidstr, sizeof(pidstr), "%d", (int)getpid());
	if (setenv("LD_PRELOAD", ld, 1) < 0 || setenv("RGROUP_RUN_RULES", env, 1) < 0 ||
	    setenv("RGROUP_RUN_PID", pidstr, 1) < 0 ||
	    (!inherit && setenv("RGROUP_RUN_INHERIT", "0", 1) < 0) ||
	    (!control && setenv("RGROUP_RUN_CONTROL", "0", 1) < 0) ||
	    (verbose && setenv("RGROUP_RUN_VERBOSE", "1", 1) < 0)) {
		fprintf(stderr, "%s run: cannot set the environment: %s\n", tool_name, strerror(errno));
		return EXIT_FAIL;
	}
	if (inherit)
		unsetenv("RGROUP_RUN_INHERIT");
	if (control)
		unsetenv("RGROUP_RUN_CONTROL");
	if (!verbose)
		unsetenv("RGROUP_RUN_VERBOSE");
	execv(prog.path, argv + optind);
	r = errno;
	fprintf(stderr, "%s run: cannot run %s: %s\n", tool_name, prog.path, strerror(r));
	return r == ENOENT ? 127 : 126;
}
