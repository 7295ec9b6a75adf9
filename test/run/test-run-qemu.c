/* SPDX-License-Identifier: MIT */
/*
 * test-run-qemu.c - `rgroup run` on a real program nobody changed:
 * Debian's qemu-system-x86_64 under TCG, whose vCPU threads it names
 * "CPU 0/TCG", "CPU 1/TCG", ... (with -name x,debug-threads=on) and which
 * are busy when the guest is (the guest firmware, spin-firmware.S, spins
 * on every vCPU). On the backend RGROUP_BACKEND names:
 *
 *   vcpu_split   four vCPUs in two nested groups of two, nice 0 and 5,
 *                all on one CPU (rule 10: cpus= on their parent): each
 *                vCPU thread in its group, qemu's other threads outside,
 *                never seen on another CPU, and the measured split of CPU
 *                time between the two groups against the reference model
 *   vcpu_cap     the four vCPUs in one group capped at 60% of a CPU: their
 *                measured CPU use within 5% of the cap
 *
 * Environment (the build sets it): RGROUP_TEST_RGROUP, RGROUP_TEST_FIRMWARE;
 * RGROUP_TEST_QEMU names qemu where it is not on PATH (the VM).
 */
#include <sys/stat.h>

#include "judge.h"
#include "model.h"
#include "run-util.h"
#include "sgroup.h"

static const char *rgroup_cmd, *firmware;
static char qemu[PATH_MAX], sg[PATH_MAX];

#define NVCPU 4

static int where(pid_t pid, pid_t tid, char *out, size_t len)
{
	return rt_where(pid, tid, scn_sg.gov, scn_sg.v2 ? NULL : "cpu", sg, out, len);
}

/* rgroup run ARGS -- qemu ...: wait until its NVCPU vCPU threads are
 * placed (in tids, ordered CPU 0 first). 0 or -1. */
static int start_qemu(struct rt_proc *p, const char *const *args, pid_t *tids)
{
	char *argv[48], err[4096] = "";
	int n = 0;
	double end;

	argv[n++] = (char *)rgroup_cmd;
	argv[n++] = (char *)"run";
	while (*args)
		argv[n++] = (char *)*args++;
	argv[n++] = (char *)"--";
	argv[n++] = qemu;
	for (const char *const *a = (const char *const[]){ "-name", "rgtest,debug-threads=on",
		     "-machine", "pc", "-accel", "tcg,thread=multi", "-smp", "4", "-m", "16",
		     "-nodefaults", "-display", "none", "-no-reboot", "-bios", NULL }; *a; a++)
		argv[n++] = (char *)*a;
	argv[n++] = (char *)firmware;
	argv[n] = NULL;
	if (rt_spawn(p, argv, NULL) < 0)
		return -1;
	for (end = rt_now() + 20; rt_now() < end; rt_sleep(0.05)) {
		int placed = 0;

		for (int c = 0; c < NVCPU; c++) {
			char name[32], w[PATH_MAX];
			snprintf(name, sizeof(name), "CPU %d/TCG", c);
			if (rt_threads(p->pid, name, &tids[c], 1) == 1 &&
			    where(p->pid, tids[c], w, sizeof(w)) == 0 && w[0])
				placed++;
		}
		if (placed == NVCPU)
			return 0;
		if (kill(p->pid, 0) < 0)
			break;
	}
	rt_finish(p, 2);
	rt_stderr(p, err, sizeof(err));
	close(p->err);
	fprintf(stderr, "  qemu's vCPU threads were not all placed within 20 s; stderr: %s\n", err);
	return -1;
}

static void stop_qemu(struct rt_proc *p)
{
	kill(p->pid, SIGTERM);
	rt_finish(p, 5);
	close(p->err);
}

static double sum_cpu(pid_t pid, const pid_t *tids, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += rt_cpu(pid, tids[i]);
	return s;
}

static int cpu_of(pid_t pid, pid_t tid)
{
	char file[64], text[1024];
	const char *p;
	int field = 2;

	snprintf(file, sizeof(file), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (rgroup__read_path(file, text, sizeof(text)) < 0 || !(p = strrchr(text, ')')))
		return -1;
	for (p++; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	return atoi(p);
}

/* The judge's readings: the fast pair's CPU time of both pairs', or all
 * four vCPUs' for a rate */
struct vcpu_ctx {
	pid_t pid;
	const pid_t *tids;
};

static int vcpu_read(void *ctx, double *cpu, double *base)
{
	struct vcpu_ctx *v = ctx;

	cpu[0] = sum_cpu(v->pid, v->tids, 2);
	*base = cpu[0] + sum_cpu(v->pid, v->tids + 2, 2);
	return 0;
}

static int vcpu_all_read(void *ctx, double *cpu, double *base)
{
	struct vcpu_ctx *v = ctx;

	cpu[0] = sum_cpu(v->pid, v->tids, NVCPU);
	*base = 0;
	return 0;
}

/* The one CPU of this process's that the vCPU tests put them all on. */
static int last_cpu(void)
{
	cpu_set_t mine;
	int cpu = -1;

	sched_getaffinity(0, sizeof(mine), &mine);
	for (int c = CPU_SETSIZE - 1; c >= 0 && cpu < 0; c--)
		if (CPU_ISSET(c, &mine))
			cpu = c;
	return cpu;
}

/*
 * Judge the split of one CPU between the vCPU pairs, CPU 0-1 in group
 * vcpu/fast at nice 0 and CPU 2-3 in vcpu/slow at nice `slow_nice`. The
 * model: the process's pool of one CPU; the vcpu group holds fast and
 * slow, each with two busy threads. qemu's other threads are idle.
 * Judged: the fast pair's part of the vCPUs' time.
 */
static void judge_split(struct rt_proc *p, const pid_t *tids, int slow_nice, const char *what)
{
	struct model m;
	int pool, vcpu, fast, slow;

	model_init(&m);
	pool = model_add(&m, -1, 1024, 0);
	vcpu = model_add(&m, pool, rgroup_nice_to_weight(0), 0);
	fast = model_add(&m, vcpu, rgroup_nice_to_weight(0), 0);
	slow = model_add(&m, vcpu, rgroup_nice_to_weight(slow_nice), 0);
	for (int i = 0; i < 2; i++) {
		model_add(&m, fast, 1024, 1.0);
		model_add(&m, slow, 1024, 1.0);
	}
	model_run(&m, 1.0);
	struct vcpu_ctx vc = { p->pid, tids };
	struct rgt_judge j = {
		.what = what, .n = 1, .label = { "fast vCPUs' part" }, .read = vcpu_read,
		.ctx = &vc, .min_cpus = 0.2,
		.fixed = { model_fraction(&m, fast) / (model_fraction(&m, fast) + model_fraction(&m, slow)) },
	};
	rgt_judge(&j, NULL);
}

static void vcpu_split(void)
{
	int cpu = last_cpu(), bad = 0, samples = 0;
	char spec[64], w[NVCPU][PATH_MAX], main_w[PATH_MAX];
	const char *args[] = { "-g", spec, "-g", "vcpu/fast=CPU [01]/TCG", "-g",
			       "vcpu/slow=CPU [23]/TCG:nice=5", NULL };
	struct rt_proc p;
	pid_t tids[NVCPU], qmain;
	double t0;

	/* All four on one CPU: the kernel divides one CPU by weight exactly,
	 * several by load balancing, which the model does not follow. */
	snprintf(spec, sizeof(spec), "vcpu:cpus=%d", cpu);
	if (start_qemu(&p, args, tids) < 0) {
		CHECK(0, "qemu under rgroup run");
		return;
	}
	qmain = p.pid;
	for (int c = 0; c < NVCPU; c++)
		where(p.pid, tids[c], w[c], sizeof(w[c]));
	fprintf(stderr, "  CPU 0/TCG .. CPU 3/TCG in: %s, %s, %s, %s\n", w[0], w[1], w[2], w[3]);
	CHECK(strcmp(w[0], w[1]) == 0 && strcmp(w[2], w[3]) == 0 && strcmp(w[0], w[2]) != 0,
	      "CPU 0 and 1 share a group, CPU 2 and 3 another");
	CHECK(strchr(w[0], '/') && strchr(w[2], '/') &&
	      strncmp(w[0], w[2], (size_t)(strchr(w[0], '/') - w[0] + 1)) == 0,
	      "both nested in one parent group");
	CHECK(where(p.pid, qmain, main_w, sizeof(main_w)) == 0 && main_w[0] == '\0',
	      "qemu's main thread stays outside (is in '%s')", main_w);

	rt_sleep(1.0);
	t0 = rt_now();
	while (rt_now() - t0 < 1.0) {
		for (int c = 0; c < NVCPU; c++, samples++)
			if (cpu_of(p.pid, tids[c]) != cpu)
				bad++;
		rt_sleep(0.005);
	}
	fprintf(stderr, "  %d samples of field 39, %d elsewhere\n", samples, bad);
	CHECK(bad == 0, "a vCPU thread was seen off CPU %d %d times", cpu, bad);

	judge_split(&p, tids, 5, "the vCPUs' split");
	stop_qemu(&p);
}

/*
 * rgroup set on a running qemu: the vCPU pairs start even (both groups at
 * nice 0), then `rgroup set PID vcpu/slow nice=5` lowers one pair while
 * the guest runs; the split measured before and after, each against the
 * model.
 */
static void vcpu_set(void)
{
	char spec[64], pidarg[16];
	const char *args[] = { "-g", spec, "-g", "vcpu/fast=CPU [01]/TCG", "-g",
			       "vcpu/slow=CPU [23]/TCG", NULL };
	struct rt_proc p, s;
	pid_t tids[NVCPU];
	char out[4096] = "", err[4096] = "";
	int st;

	snprintf(spec, sizeof(spec), "vcpu:cpus=%d", last_cpu());
	if (start_qemu(&p, args, tids) < 0) {
		CHECK(0, "qemu under rgroup run");
		return;
	}
	rt_sleep(1.0);
	judge_split(&p, tids, 0, "before rgroup set: the vCPUs' split, both pairs at nice 0");
	snprintf(pidarg, sizeof(pidarg), "%d", (int)p.pid);
	char *argv[] = { (char *)rgroup_cmd, (char *)"set", pidarg, (char *)"vcpu/slow",
			 (char *)"nice=5", NULL };
	st = -1;
	if (rt_spawn(&s, argv, NULL) == 0) {
		rt_until(&s, "\x01", out, sizeof(out), 10.0);   /* all of it */
		st = rt_finish(&s, 10.0);
		rt_stderr(&s, err, sizeof(err));
		close(s.err);
	}
	fprintf(stderr, "  rgroup set %s vcpu/slow nice=5: exit %d: %s%s", pidarg, st, out, err);
	CHECK(st == 0 && strstr(out, "now has nice=5"), "rgroup set changes the running qemu's group");
	rt_sleep(0.5);
	judge_split(&p, tids, 5, "after rgroup set: the vCPUs' split, the slow pair at nice 5");
	stop_qemu(&p);
}

static void vcpu_cap(void)
{
	static const char *const free_args[] = { "-g", "vcpu=CPU */TCG", NULL };
	static const char *const cap_args[] = { "-g", "vcpu=CPU */TCG:max=60%", NULL };
	struct rt_proc p;
	pid_t tids[NVCPU];
	double u0, t0, got;

	/* Uncapped first: the cap must be below what the machine gives. */
	if (start_qemu(&p, free_args, tids) < 0) {
		CHECK(0, "qemu under rgroup run");
		return;
	}
	rt_sleep(0.5);
	t0 = rt_now();
	u0 = sum_cpu(p.pid, tids, NVCPU);
	rt_sleep(2.0);
	got = (sum_cpu(p.pid, tids, NVCPU) - u0) / (rt_now() - t0);
	stop_qemu(&p);
	fprintf(stderr, "  uncapped: %.2f CPUs\n", got);
	if (got < 0.8) {
		rt_finish(&p, 1);
		rgt_skip_case("the machine gives qemu only %.2f CPUs uncapped: a cap of 60%% could not be told from that", got);
		return;
	}
	if (start_qemu(&p, cap_args, tids) < 0) {
		CHECK(0, "qemu under rgroup run, capped");
		return;
	}
	rt_sleep(1.0);
	struct vcpu_ctx vc = { p.pid, tids };
	struct rgt_judge j = {
		.what = "qemu's vCPUs capped at 60%", .n = 1, .label = { "vCPUs' CPUs" },
		.read = vcpu_all_read, .ctx = &vc, .rate = 1, .min_cpus = 0.02, .fixed = { 0.60 },
	};
	rgt_judge(&j, NULL);
	stop_qemu(&p);
}

static const struct rgt_case cases[] = {
	{ "vcpu_split", vcpu_split },
	{ "vcpu_cap", vcpu_cap },
	{ "vcpu_set", vcpu_set },
};

int main(int argc, char **argv)
{
	struct stat st;

	rgroup_cmd = getenv("RGROUP_TEST_RGROUP");
	firmware = getenv("RGROUP_TEST_FIRMWARE");
	if (!rgroup_cmd || !firmware || stat(firmware, &st) < 0)
		rgt_skip_all("RGROUP_TEST_RGROUP and RGROUP_TEST_FIRMWARE name the programs (the build sets them)");
	if (getenv("RGROUP_TEST_QEMU"))
		snprintf(qemu, sizeof(qemu), "%s", getenv("RGROUP_TEST_QEMU"));
	else {
		char *path = getenv("PATH") ? strdup(getenv("PATH")) : strdup("/usr/bin:/bin"), *save = NULL;
		for (char *d = strtok_r(path, ":", &save); d && !qemu[0]; d = strtok_r(NULL, ":", &save)) {
			snprintf(qemu, sizeof(qemu), "%s/qemu-system-x86_64", d);
			if (access(qemu, X_OK) < 0)
				qemu[0] = '\0';
		}
		free(path);
	}
	if (!qemu[0] || access(qemu, X_OK) < 0)
		rgt_skip_all("qemu-system-x86_64 not found (apt-get install qemu-system-x86)");
	rt_boost_session();
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof(sg));
	if (!scn_sg.v2 && !scn_sg.gov) {
		char dir[PATH_MAX + 32];
		scn_cg_dir(sg, dir, sizeof(dir));
		strcat(dir, "/cpu.shares");
		scn_write(dir, "262144");   /* against the machine's other load */
	}
	fprintf(stderr, "backend %s, system group %s, %s\n", rgroup_backend(), sg, qemu);
	return rgt_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
