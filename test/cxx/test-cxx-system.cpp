// SPDX-License-Identifier: MIT
//
// test-cxx-system.cpp - <rgroup.hpp> on the real library and this
// machine's backend (RGROUP_BACKEND: cgroup1 here, the governor, cgroup2
// in the VM), in a system group of the test's own:
//
//   membership        rgroup::thread with and without new_group: where the
//                     library and the kernel hold it, nesting, the
//                     destructor's join and the group's end (rules 1-3)
//   nice_and_weight   thread_options::nice and group::set_nice: the group's
//                     nice, the model's weight, the kernel's weight
//   limits            group::set_cpus / set_cap read back from the library
//                     and the kernel, and their errors (rule 10)
//   rule6             EACCES from inside the new thread reaches the
//                     creator; nothing is left; the work group's default nice
//   executor          items run in their work group's rgroup, nested like
//                     the groups; a pointer-sized callable costs no
//                     allocation, a larger one exactly one
//   cancel            canceled and refused items are destroyed, never run;
//                     ESHUTDOWN, ENOENT, the destructors' order
//   split             nice 0 against nice 5 through work groups, against the
//                     reference model
//
// The split pins the process to one CPU (so the weights alone divide it:
// test-executor.c says why) and is judged by the one rule of the test
// library (test/lib/judge.h) from the groups' own CPU clocks
// (work_group::info().cpu), with the window threshold test-executor.c
// uses for the same reason.
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <future>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <rgroup.hpp>

extern "C" {
#include "judge.h"
#include "scenario.h"
#include "sgroup.h"
}

using namespace std::chrono_literals;

static char sg[PATH_MAX];

// ---- Counting this thread's allocations ------------------------------------

static thread_local long allocations;

void *operator new(std::size_t n)
{
	allocations++;
	if (void *p = std::malloc(n ? n : 1))
		return p;
	throw std::bad_alloc();
}
void operator delete(void *p) noexcept
{
	std::free(p);
}
void operator delete(void *p, std::size_t) noexcept
{
	std::free(p);
}

// ---- Helpers ----------------------------------------------------------------------

// A case body runs inside this: an exception it did not expect fails it
// (it must not cross the C harness).
template <class F>
static void guarded(const char *name, F &&f)
{
	try {
		f();
	} catch (const std::exception &e) {
		CHECK(0, "%s: unexpected exception: %s", name, e.what());
	}
}
#define CASE(name)                                                                 \
	static void name##_body();                                                 \
	static void name() { guarded(#name, name##_body); }                        \
	static void name##_body()

// errno of the std::system_error f throws; 0 if none, -1 for another one.
template <class F>
static int error_of(F &&f)
{
	try {
		f();
	} catch (const std::system_error &e) {
		return e.code().category() == std::generic_category() ? e.code().value() : -1;
	} catch (...) {
		return -1;
	}
	return 0;
}

static bool kernel_agrees(pid_t tid, rgroup::group_id id)
{
	char why[256] = "";
	int ok = rgt_kernel_agrees(sg, tid, id, why, sizeof why);
	if (!ok)
		fprintf(stderr, "  the kernel disagrees for %d: %s\n", static_cast<int>(tid), why);
	return ok;
}

static bool wait_gone(rgroup::group_id id, double timeout)
{
	double end = scn_now() + timeout;
	while (error_of([&] { (void)rgroup::info(id); }) != ENOENT)
		if (scn_now() > end)
			return false;
		else
			scn_sleep(0.005);
	return true;
}

// ---- Threads -------------------------------------------------------------------------

CASE(membership)
{
	struct seen {
		pid_t tid = 0;
		rgroup::group_id id = 0, parent = 0;
		unsigned depth = 0;
	};
	seen outer, plain, inner;
	std::promise<void> release;
	std::shared_future<void> go = release.get_future().share();
	std::atomic<bool> finished{false};
	auto look = [](seen &s) {
		s.tid = rgroup::detail::gettid();
		s.id = rgroup::of(0);
		if (s.id) {
			rgroup::group_info i = rgroup::info(s.id);
			s.parent = i.parent;
			s.depth = i.depth;
		}
	};
	rgroup::group_id outer_id = 0;
	{
		std::promise<void> ready;
		rgroup::thread t(rgroup::new_group, [&] {
			look(outer);
			// Flags 0: its creator's group; new_group: a child rgroup.
			// The constructor returns once a thread is in its group,
			// maybe before it ran a line: each says when it has looked.
			std::promise<void> p_looked, n_looked;
			rgroup::thread p([&] { look(plain); p_looked.set_value(); go.wait(); });
			rgroup::thread n(rgroup::new_group, [&] { look(inner); n_looked.set_value(); go.wait(); });
			p_looked.get_future().wait();
			n_looked.get_future().wait();
			ready.set_value();
			go.wait();
			scn_sleep(0.05);
			finished = true;
		});
		ready.get_future().wait();
		outer_id = t.group().id();
		CHECK(rgroup::of(0) == 0, "the creator stays in no rgroup");
		CHECK(outer.id != 0 && outer.id == outer_id && outer.tid == t.tid(),
		      "new_group: rgroup %llu, seen from inside %llu",
		      (unsigned long long)outer_id, (unsigned long long)outer.id);
		CHECK(outer.depth == 1 && outer.parent == 0, "top-level: depth %u", outer.depth);
		CHECK(plain.id == outer.id, "a plain thread joins its creator's group");
		CHECK(inner.id != 0 && inner.id != outer.id && inner.parent == outer.id && inner.depth == 2,
		      "a new_group thread from inside nests (parent %llu, depth %u)",
		      (unsigned long long)inner.parent, inner.depth);
		CHECK(kernel_agrees(outer.tid, outer.id) && kernel_agrees(plain.tid, plain.id) &&
			      kernel_agrees(inner.tid, inner.id),
		      "the kernel holds each thread where the library says");
		CHECK(rgroup::info(outer.id).nthreads == 2, "2 threads in the outer group (%u)",
		      rgroup::info(outer.id).nthreads);
		release.set_value();
	}
	CHECK(finished, "the destructor joined the thread");
	CHECK(wait_gone(outer.id, 3.0) && wait_gone(inner.id, 3.0), "the groups end with their threads");
}

CASE(nice_and_weight)
{
	std::promise<void> end;
	std::shared_future<void> f = end.get_future().share();
	rgroup::thread t(rgroup::thread_options().new_group().nice(5).name("cxx-nice5"), [f] { f.wait(); });
	rgroup::group g = t.group();
	rgroup::group_info i = g.info();

	CHECK(g.nice() == 5 && i.nice == 5, "nice set before the function ran: %d", i.nice);
	CHECK(i.weight == rgroup::nice_to_weight(5) && i.weight == 335, "weight %u", i.weight);
	long long kw = rgt_kernel_weight(sg, t.tid(), g.id());
	CHECK(kw == -1 || kw == 335, "kernel weight %lld", kw);
	char name[16] = "";
	CHECK(pthread_getname_np(t.native_handle(), name, sizeof name) == 0 && !strcmp(name, "cxx-nice5"),
	      "thread name '%s'", name);

	// From another thread, through the handle.
	for (int nice : {-3, 19, 0}) {
		g.set_nice(nice);
		kw = rgt_kernel_weight(sg, t.tid(), g.id());
		CHECK(g.nice() == nice && g.info().weight == rgroup::nice_to_weight(nice) &&
			      (kw == -1 || kw == rgroup::nice_to_weight(nice)),
		      "set_nice(%d): nice %d, weight %u, kernel %lld", nice, g.nice(), g.info().weight, kw);
	}
	g.set_nice(40); // clamped, as setpriority(2) does
	CHECK(g.nice() == 19, "nice 40 clamps to 19 (%d)", g.nice());

	// A nested group starts at nice 0, whatever its parent's.
	std::promise<int> nested;
	{
		rgroup::thread o(rgroup::thread_options().new_group().nice(7), [&] {
			rgroup::thread n(rgroup::new_group, [&] { nested.set_value(rgroup::group::current().nice()); });
		});
	}
	CHECK(nested.get_future().get() == 0, "a nested group starts at nice 0");
	end.set_value();
}

CASE(limits)
{
	cpu_set_t allowed;
	sched_getaffinity(0, sizeof allowed, &allowed);
	rgroup::cpu_set mine(allowed);
	int first = mine.cpus().front();

	std::promise<void> end;
	std::promise<rgroup::cpu_set> inside;
	std::shared_future<void> f = end.get_future().share();
	std::promise<void> pinned;
	std::shared_future<void> p = pinned.get_future().share();
	rgroup::thread t(rgroup::new_group, [&, f, p] {
		p.wait();
		cpu_set_t s;
		sched_getaffinity(0, sizeof s, &s);
		inside.set_value(rgroup::cpu_set(s));
		f.wait();
	});
	rgroup::group g = t.group();

	CHECK(g.cpus() == mine, "a new group runs where the process may");
	g.set_cpus({first});
	CHECK((g.cpus() == rgroup::cpu_set{first}), "set_cpus({%d}) reads back", first);
	pinned.set_value();
	rgroup::cpu_set got = inside.get_future().get();
	CHECK((got == rgroup::cpu_set{first}), "its thread may run on CPU %d only (%d CPUs)", first, got.count());
	g.reset_cpus();
	CHECK(g.cpus() == mine, "reset_cpus() lifts it");

	CHECK(!g.cap(), "no cap at first");
	g.set_cap(20ms);
	auto cap = g.cap();
	CHECK(cap && cap->quota == 20ms && cap->period == 100ms, "set_cap(20 ms) reads back");
	if (rgt_dirs()) {
		char path[PATH_MAX];
		CHECK(rgt_group_path(sg, g.id(), path, sizeof path) == 0, "the group's directory");
		long long q = rgt_cg_value(path, "cpu.cfs_quota_us"), v2 = rgt_cg_value(path, "cpu.max");
		CHECK(q == 20000 || (q == LLONG_MIN && v2 == 20000), "the kernel's quota: %lld / %lld", q, v2);
	}
	g.set_cap(150ms, 100ms);
	CHECK(g.cap()->quota == 150ms, "1.5 CPUs");
	g.clear_cap();
	CHECK(!g.cap(), "clear_cap()");

	// Errors come back as the C API's errno, and change nothing.
	CHECK(error_of([&] { g.set_cap(500us); }) == EINVAL, "a quota below 1 ms: EINVAL");
	CHECK(error_of([&] { g.set_cap(10ms, 10s); }) == EINVAL, "a period above 1 s: EINVAL");
	CHECK(error_of([&] { g.set_cpus({}); }) == EINVAL, "an empty set: EINVAL");
	int outside = -1;
	for (int c = 0; c < 1024 && outside < 0; c++)
		if (!mine.test(c))
			outside = c;
	CHECK(error_of([&] { g.set_cpus({outside}); }) == EPERM, "CPU %d, not the process's: EPERM", outside);
	CHECK(g.cpus() == mine && !g.cap(), "unchanged after the errors");
	end.set_value();
	t.join();
	CHECK(error_of([&] { g.set_cpus({first}); }) == ESRCH, "a handle whose thread ended: ESRCH");
}

// Rule 6 in a child process without CAP_SYS_NICE and RLIMIT_NICE room, at
// nice 4: a top-level group below that fails from inside the new thread,
// and the creator gets EACCES with nothing left behind.
CASE(rule6)
{
	int *res = static_cast<int *>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	static const char *what[] = {
		"a top-level group at nice 2 (below 4): EACCES", "its function never ran",
		"no rgroup left", "at nice 6 it works", "a work group's default nice is the caller's 4",
		"a work group at nice 2: EACCES",
	};
	const int n = sizeof what / sizeof what[0];

	CHECK(res != MAP_FAILED, "mmap");
	if (res == MAP_FAILED)
		return;
	std::memset(res, 0, 4096);
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit none = {0, 0};
		if (setrlimit(RLIMIT_NICE, &none) < 0 || rgt_drop_cap_sys_nice() < 0 ||
		    setpriority(PRIO_PROCESS, scn_gettid(), 4) < 0)
			_exit(3);
		try {
			std::atomic<int> ran{0};
			res[0] = error_of([&] {
				rgroup::thread t(rgroup::thread_options().new_group().nice(2), [&] { ran++; });
			}) == EACCES;
			res[1] = ran == 0;
			res[2] = scn_wait_no_groups(3.0) == 0;
			res[3] = error_of([&] {
				rgroup::thread t(rgroup::thread_options().new_group().nice(6), [&] { ran++; });
			}) == 0 && ran == 1;
			rgroup::pool p;
			rgroup::work_group d = p.make_group("d");
			res[4] = d.info().nice == 4;
			res[5] = error_of([&] { (void)p.make_group("a", {2, 0}); }) == EACCES;
		} catch (...) {
			_exit(4);
		}
		_exit(0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	for (int i = 0; i < n; i++)
		CHECK(res[i] == 1, "%s", what[i]);
	munmap(res, 4096);
}

// ---- The executor -------------------------------------------------------------------

CASE(executor)
{
	rgroup::pool pool({2, 200ms, 0});
	rgroup::work_group a = pool.make_group("cxx-a", {3, 0});
	rgroup::work_group b = a.make_group("cxx-a.b");

	struct where {
		rgroup::group_id id = 0, parent = 0;
		int nice = 99;
		pid_t tid = 0;
		bool kernel = false;
	};
	where wa, wb;
	auto probe = [](where *w) {
		return [w] { // one pointer: travels in the item's argument
			w->tid = rgroup::detail::gettid();
			w->id = rgroup::of(0);
			w->parent = rgroup::info(w->id).parent;
			w->nice = rgroup::group::current().nice();
			w->kernel = kernel_agrees(w->tid, w->id);
		};
	};
	a.submit(probe(&wa));
	b.submit(probe(&wb));
	pool.wait();
	CHECK(wa.id != 0 && wa.parent == 0 && wa.nice == 3 && wa.kernel, "a's item in a top-level rgroup at nice 3 (%d)", wa.nice);
	CHECK(wb.id != 0 && wb.parent == wa.id && wb.nice == 0 && wb.kernel, "b's item in a child of a's rgroup, at nice 0");
	CHECK(b.info().parent == a.native_handle() && b.info().name == "cxx-a.b", "b's info");

	// Allocations in the submitting thread: none for a pointer-sized
	// callable, exactly one for a larger one (its copy), whatever the
	// queue does (the C library's own memory is not operator new's).
	std::atomic<long> ran{0};
	const int items = 2000;
	long before = allocations;
	for (int i = 0; i < items; i++)
		a.submit([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
	long inline_allocs = allocations - before;
	std::array<long, 8> payload{};
	before = allocations;
	for (int i = 0; i < items; i++)
		a.submit([&ran, payload] { ran.fetch_add(1 + payload[0], std::memory_order_relaxed); });
	long heap_allocs = allocations - before;
	pool.wait();
	CHECK(inline_allocs == 0, "%d pointer-sized items: %ld allocations", items, inline_allocs);
	CHECK(heap_allocs == items, "%d larger items: %ld allocations", items, heap_allocs);
	CHECK(ran == 2 * items, "every item ran once (%ld)", ran.load());
	{
		rgroup::work_group_info i = a.info();
		CHECK(i.submitted == 2 * items + 1 && i.completed == 2 * items + 1 && i.canceled == 0,
		      "a's counts: %llu submitted, %llu completed", (unsigned long long)i.submitted,
		      (unsigned long long)i.completed);
	}
	b.close();
	CHECK(!b, "closed");
	pool.close();
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone");
}

CASE(cancel)
{
	// Items that own something: destroyed exactly once, run or not.
	auto token = std::make_shared<int>(0);
	std::atomic<int> ran{0}, started{0};
	std::atomic<bool> open{false};
	auto gate = [&] {
		started = 1;
		while (!open)
			scn_sleep(0.001);
	};
	auto owning = [&ran, token] { ran++; };
	const long base = token.use_count(); // token and owning's copy

	{
		rgroup::pool pool({1, 0ms, 0});
		rgroup::work_group g = pool.make_group("cxx-c");
		g.submit(gate);
		while (!started)
			scn_sleep(0.001);
		for (int i = 0; i < 5; i++)
			g.submit(owning);
		CHECK(token.use_count() == base + 5, "5 queued copies (%ld)", token.use_count());
		CHECK(g.cancel() == 5, "cancel() removes the 5 queued items");
		CHECK(token.use_count() == base && ran == 0, "canceled items are destroyed, not run (%ld)",
		      token.use_count());

		for (int i = 0; i < 4; i++)
			g.submit(owning);
		// The pool's destructor cancels the 4 queued items and waits for the
		// running gate, which another thread opens.
		rgroup::thread opener([&] {
			scn_sleep(0.1);
			open = true;
		});
		CHECK(pool.close() == 4, "close() cancels the 4 queued items");
		CHECK(token.use_count() == base && ran == 0, "and destroys them (%ld)", token.use_count());
		CHECK(error_of([&] { g.submit(owning); }) == ENOENT, "a group of a closed pool: ENOENT");
		CHECK(token.use_count() == base, "a refused item is destroyed");
	} // g's destructor after its pool's end: nothing to do

	rgroup::pool pool;
	rgroup::work_group g = pool.make_group("cxx-s");
	pool.shutdown();
	CHECK(error_of([&] { g.submit(owning); }) == ESHUTDOWN, "after shutdown(): ESHUTDOWN");
	auto count = [&ran] { ran++; };
	static_assert(rgroup::detail::fits_inline<decltype(count)>);
	CHECK(error_of([&] { g.submit(count); }) == ESHUTDOWN, "an inline item too");
	CHECK(error_of([&] { (void)pool.make_group("x"); }) == ESHUTDOWN, "no new group either");
	CHECK(token.use_count() == base && ran == 0, "refused items are destroyed, not run");
	pool.close();
	CHECK(scn_wait_no_groups(3.0) == 0, "every rgroup gone");

	// A parent destroyed before its subgroup (EBUSY for the C call): its
	// pending items are canceled and none of them runs after its end.
	rgroup::pool p2({1, 0ms, 0});
	rgroup::work_group child;
	{
		rgroup::thread opener; // declared first: ends after parent's destructor
		rgroup::work_group parent = p2.make_group("cxx-p");
		child = parent.make_group("cxx-p.c");
		open = false;
		started = 0;
		parent.submit(gate);
		while (!started)
			scn_sleep(0.001);
		parent.submit(owning);
		opener = rgroup::thread([&] {
			scn_sleep(0.1);
			open = true;
		});
	} // parent: EBUSY, so cancel its queue and wait for the gate
	CHECK(ran == 0 && token.use_count() == base, "the parent's queued item was canceled, not run");
	CHECK(open, "the parent's destructor waited for its running item");
	CHECK(error_of([&] { (void)p2.make_group(std::string(RGROUP_EXEC_NAME_MAX, 'n')); }) == ENAMETOOLONG,
	      "a name of %d bytes: ENAMETOOLONG", RGROUP_EXEC_NAME_MAX);
}

// ---- A measured split ---------------------------------------------------------------

// An item that spins about 0.5 ms, then queues itself again: one per group
// keeps its one worker busy with no gap. One pointer: no allocation.
struct chain_ctx {
	rgroup::work_group *g;
	std::atomic<bool> *stop;
};
struct chain {
	chain_ctx *c;
	void operator()() const
	{
		double end = scn_now() + 0.0005;
		while (scn_now() < end)
			;
		if (!c->stop->load(std::memory_order_relaxed))
			c->g->submit(*this);
	}
};
static_assert(rgroup::detail::fits_inline<chain>);

CASE(split)
{
	cpu_set_t saved;
	if (scn_pin_one_cpu(&saved) < 0) {
		CHECK(0, "cannot pin to one CPU: %s", strerror(errno));
		return;
	}
	rgroup::pool pool({1, 1000ms, 0});
	rgroup::work_group g[2] = {pool.make_group("cxx-n0", {0, 1}), pool.make_group("cxx-n5", {5, 1})};
	std::atomic<bool> stop{false};
	struct model m;

	model_init(&m);
	int root = model_add(&m, -1, 1024, 0), mi[2];
	for (int i = 0; i < 2; i++) {
		mi[i] = model_add(&m, root, rgroup::nice_to_weight(i ? 5 : 0), 0);
		model_add(&m, mi[i], 1024, 1);
	}
	model_run(&m, 1.0);
	double want = model_fraction(&m, mi[1]);

	chain_ctx ctx[2] = {{&g[0], &stop}, {&g[1], &stop}};
	for (auto &c : ctx)
		c.g->submit(chain{&c});
	scn_sleep(0.3);
	struct rgt_judge j = {};
	j.what = "nice 0 against nice 5, work groups on one CPU";
	j.n = 2;
	j.label[0] = "cxx-n0 (nice 0)";
	j.label[1] = "cxx-n5 (nice 5)";
	j.fixed[0] = 1 - want;
	j.fixed[1] = want;
	j.ctx = g;
	j.read = [](void *ctx, double *cpu, double *base) {
		auto *wg = static_cast<rgroup::work_group *>(ctx);
		try {
			*base = 0;
			for (int i = 0; i < 2; i++)
				*base += cpu[i] = wg[i].info().cpu.count() / 1e9;
		} catch (const std::system_error &) {
			return -1; // the window is dropped
		}
		return 0;
	};
	j.min_cpus = rgt_kernel() ? 0.10 : 0.40;
	rgt_judge(&j, nullptr);
	stop = true;
	pool.wait();
	sched_setaffinity(0, sizeof saved, &saved);
}

static const struct rgt_case cases[] = {
	{"membership", membership}, {"nice_and_weight", nice_and_weight},
	{"limits", limits},         {"rule6", rule6},
	{"executor", executor},     {"cancel", cancel},
	{"split", split},
};

int main(int argc, char **argv)
{
	rgt_sg_init();
	rgt_sg_enter(sg, sizeof sg);
	fprintf(stderr, "backend %s, system group %s\n", rgroup::backend(), sg);
	return rgt_main(cases, sizeof cases / sizeof cases[0], argc, argv);
}
