// SPDX-License-Identifier: MIT
//
// rgroup.hpp - C++17 bindings of <rgroup.h>, header-only.
//
//   rgroup::thread      a thread started in a new rgroup (or its creator's
//                       group) that joins on destruction, like std::jthread
//   rgroup::group       an rgroup: its PRIO_RGRP nice value, CPUs and cap
//   rgroup::pool,       the executor: work groups whose items (any callable)
//   rgroup::work_group  run in the group's rgroup
//
// Errors are std::system_error with the C API's errno value in
// std::generic_category() (compare with std::errc). Compile with
//   c++ -std=c++17 prog.cpp $(pkg-config --cflags --libs rgroup)
// Each call wraps the C function of the same name: see its man page in
// section 3, and rgroup(7) for the rules.
#ifndef RGROUP_HPP
#define RGROUP_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "rgroup.hpp needs C++17 or later"
#endif

#include <rgroup.h>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <initializer_list>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#if __has_include(<version>)
#include <version>
#endif
#if defined(__cpp_lib_jthread) && __cpp_lib_jthread >= 201911L
#include <stop_token>
#define RGROUP_HPP_STD_STOP_TOKEN 1
#else
#define RGROUP_HPP_STD_STOP_TOKEN 0
#endif

namespace rgroup {

// An rgroup's identity in this process; 0 is "no rgroup" (the sgroup).
using group_id = rgroup_id_t;

namespace detail {

[[noreturn]] inline void throw_errno(int err, const char *what)
{
	throw std::system_error(err, std::generic_category(), what);
}

// The C API's usual convention: 0 or a count, or a negative errno.
inline int check(int r, const char *what)
{
	if (r < 0)
		throw_errno(-r, what);
	return r;
}

inline pid_t gettid() noexcept
{
	return static_cast<pid_t>(::syscall(SYS_gettid));
}

template <class T>
using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

} // namespace detail

// ---- The library and its groups -------------------------------------------

// "native", "cgroup2", "cgroup1", "governor", or "none" (rgroup_backend(3)).
inline const char *backend() noexcept
{
	return rgroup_backend();
}

// Would backend `name` (nullptr: the automatic choice) work here? An empty
// error code if so; else the reason's errno and, in *why, its explanation.
inline std::error_code probe(const char *name = nullptr, std::string *why = nullptr)
{
	char buf[512] = "";
	int r = rgroup_probe(name, buf, sizeof buf);

	if (why)
		*why = buf;
	return r < 0 ? std::error_code(-r, std::generic_category()) : std::error_code();
}

// The kernel weight of a nice value (clamped to -20..19): 1024 for 0.
inline unsigned nice_to_weight(int nice) noexcept
{
	return rgroup_nice_to_weight(nice);
}

// The rgroup of thread `tid` of this process (0: the caller); 0 if none.
inline group_id of(pid_t tid = 0)
{
	group_id id = 0;

	detail::check(rgroup_of(tid, &id), "rgroup_of");
	return id;
}

// Every rgroup of the process, a parent before its children.
inline std::vector<group_id> list()
{
	std::vector<group_id> ids(16);

	for (;;) {
		auto n = static_cast<std::size_t>(detail::check(rgroup_list(ids.data(), ids.size()), "rgroup_list"));
		if (n <= ids.size()) {
			ids.resize(n);
			return ids;
		}
		ids.resize(n + 16); // it grew meanwhile: try again
	}
}

// A snapshot of one rgroup (struct rgroup_info).
struct group_info {
	group_id id = 0;
	group_id parent = 0;          // 0: a top-level rgroup
	int nice = 0;                 // its PRIO_RGRP value
	unsigned weight = 0;          // nice_to_weight(nice)
	unsigned depth = 0;           // 1: top-level
	unsigned nthreads = 0;        // its own threads the library knows of
	unsigned nchildren = 0;
	std::chrono::nanoseconds usage{0};      // CPU time, children included
	std::string name;             // its directory name in the backend
	std::chrono::nanoseconds throttled{0};  // governor: time paused
	std::uint64_t unthrottled = 0;          // governor: pauses not taken
	bool unenforced = false;      // governor: the program took its signal
};

// std::system_error ENOENT when the rgroup does not exist (any more).
inline group_info info(group_id id)
{
	struct rgroup_info c {};
	c.sz = sizeof c;
	detail::check(rgroup_info(id, &c), "rgroup_info");

	group_info i;
	i.id = c.id;
	i.parent = c.parent;
	i.nice = c.nice;
	i.weight = c.weight;
	i.depth = c.depth;
	i.nthreads = c.nthreads;
	i.nchildren = c.nchildren;
	i.usage = std::chrono::nanoseconds(c.usage_ns);
	i.name.assign(c.name, ::strnlen(c.name, sizeof c.name));
	i.throttled = std::chrono::nanoseconds(c.throttled_ns);
	i.unthrottled = c.unthrottled;
	i.unenforced = (c.flags & RGROUP_INFO_UNENFORCED) != 0;
	return i;
}

// Remove what killed rgroup processes left in cgroup directory `dir`
// (rgroup_gc(3)); how many directories were removed.
inline unsigned gc(const char *dir)
{
	return static_cast<unsigned>(detail::check(rgroup_gc(dir), "rgroup_gc"));
}

// ---- CPU sets ---------------------------------------------------------------

// A set of CPU numbers (0..CPU_SETSIZE-1), as sched_setaffinity(2) takes it.
class cpu_set {
public:
	cpu_set() noexcept { CPU_ZERO(&set_); }
	cpu_set(std::initializer_list<int> cpus) : cpu_set()
	{
		for (int c : cpus)
			set(c);
	}
	explicit cpu_set(const cpu_set_t &s) noexcept : set_(s) {}

	cpu_set &set(int cpu)
	{
		CPU_SET(index(cpu), &set_);
		return *this;
	}
	cpu_set &reset(int cpu)
	{
		CPU_CLR(index(cpu), &set_);
		return *this;
	}
	bool test(int cpu) const
	{
		return CPU_ISSET(index(cpu), &set_);
	}
	int count() const noexcept { return CPU_COUNT(&set_); }
	bool empty() const noexcept { return count() == 0; }
	std::vector<int> cpus() const
	{
		std::vector<int> v;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set_))
				v.push_back(c);
		return v;
	}
	const cpu_set_t &native() const noexcept { return set_; }
	cpu_set_t &native() noexcept { return set_; }

	friend bool operator==(const cpu_set &a, const cpu_set &b) noexcept
	{
		return CPU_EQUAL(&a.set_, &b.set_);
	}
	friend bool operator!=(const cpu_set &a, const cpu_set &b) noexcept
	{
		return !(a == b);
	}

private:
	static std::size_t index(int cpu)
	{
		if (cpu < 0 || cpu >= CPU_SETSIZE)
			throw std::out_of_range("rgroup::cpu_set: no such CPU number");
		return static_cast<std::size_t>(cpu);
	}
	cpu_set_t set_;
};

// A CPU bandwidth cap: at most `quota` of CPU time in every `period`.
struct cpu_cap {
	std::chrono::microseconds quota{0};
	std::chrono::microseconds period{0};
};

// ---- A group handle -----------------------------------------------------------

// An rgroup, reached (as the C API reaches it) through one of its threads:
// the handle is good while that thread lives. Threads never change group
// (rule 2), so each call checks that the thread is still in the group it
// was in when the handle was made and throws ESRCH if its thread is gone
// (or its id now names another thread in another group). A handle on a
// thread in no rgroup (id() == 0) is valid, but its calls fail with
// EINVAL, as the C API's do.
class group {
public:
	// The calling thread's group.
	static group current()
	{
		return of_thread(detail::gettid());
	}
	// The group of thread `tid` of this process (0: the caller).
	static group of_thread(pid_t tid)
	{
		pid_t t = tid ? tid : detail::gettid();
		return group(t, rgroup::of(t));
	}

	group_id id() const noexcept { return id_; }
	pid_t tid() const noexcept { return tid_; }
	explicit operator bool() const noexcept { return id_ != 0; }

	// PRIO_RGRP: its nice value, hence its weight under its parent.
	int nice() const
	{
		check_thread();
		errno = 0;
		int n = rgroup_getpriority(PRIO_RGRP, static_cast<id_t>(tid_));
		if (n == -1 && errno != 0)
			detail::throw_errno(errno, "rgroup_getpriority");
		return n;
	}
	void set_nice(int value)
	{
		check_thread();
		if (rgroup_setpriority(PRIO_RGRP, static_cast<id_t>(tid_), value) < 0)
			detail::throw_errno(errno, "rgroup_setpriority");
	}
	group_info info() const
	{
		check_thread();
		return rgroup::info(id_);
	}

	// Rule 10: the CPUs its threads may run on (its own set, else its
	// nearest ancestor's, else the process's) and its own set; reset_cpus()
	// lifts its own set.
	cpu_set cpus() const
	{
		check_thread();
		cpu_set s;
		detail::check(rgroup_get_cpus(tid_, sizeof(cpu_set_t), &s.native()), "rgroup_get_cpus");
		return s;
	}
	void set_cpus(const cpu_set &cpus)
	{
		check_thread();
		detail::check(rgroup_set_cpus(tid_, sizeof(cpu_set_t), &cpus.native()), "rgroup_set_cpus");
	}
	void reset_cpus()
	{
		check_thread();
		detail::check(rgroup_set_cpus(tid_, 0, nullptr), "rgroup_set_cpus");
	}

	// Rule 10: its own cap (none: its ancestors' caps still apply).
	std::optional<cpu_cap> cap() const
	{
		check_thread();
		std::uint64_t q = 0, p = 0;
		detail::check(rgroup_get_cap(tid_, &q, &p), "rgroup_get_cap");
		if (q == 0)
			return std::nullopt;
		return cpu_cap{std::chrono::microseconds(q), std::chrono::microseconds(p)};
	}
	void set_cap(std::chrono::microseconds quota,
		     std::chrono::microseconds period = std::chrono::milliseconds(100))
	{
		check_thread();
		// Negative durations are bad input, not huge unsigned ones.
		if (quota.count() <= 0 || period.count() <= 0)
			detail::throw_errno(EINVAL, "rgroup_set_cap");
		detail::check(rgroup_set_cap(tid_, static_cast<std::uint64_t>(quota.count()),
					     static_cast<std::uint64_t>(period.count())),
			      "rgroup_set_cap");
	}
	void clear_cap()
	{
		check_thread();
		detail::check(rgroup_set_cap(tid_, 0, 0), "rgroup_set_cap");
	}

	friend bool operator==(const group &a, const group &b) noexcept { return a.id_ == b.id_; }
	friend bool operator!=(const group &a, const group &b) noexcept { return a.id_ != b.id_; }

private:
	group(pid_t tid, group_id id) noexcept : tid_(tid), id_(id) {}
	void check_thread() const
	{
		if (rgroup::of(tid_) != id_) // throws ESRCH itself if tid_ is gone
			detail::throw_errno(ESRCH, "rgroup::group: its thread left");
	}
	pid_t tid_;
	group_id id_;
};

// ---- Stop tokens --------------------------------------------------------------

// std::stop_token and std::stop_source where the library has them (C++20);
// in C++17 a minimal equivalent: stop_requested(), stop_possible(),
// request_stop(), no callbacks.
#if RGROUP_HPP_STD_STOP_TOKEN
using std::nostopstate;
using std::nostopstate_t;
using std::stop_source;
using std::stop_token;
#else
struct nostopstate_t {
	explicit nostopstate_t() = default;
};
inline constexpr nostopstate_t nostopstate{};

class stop_source;

class stop_token {
public:
	stop_token() noexcept = default;
	bool stop_requested() const noexcept
	{
		return state_ && state_->load(std::memory_order_acquire);
	}
	bool stop_possible() const noexcept { return static_cast<bool>(state_); }

private:
	friend class stop_source;
	explicit stop_token(std::shared_ptr<std::atomic<bool>> s) noexcept : state_(std::move(s)) {}
	std::shared_ptr<std::atomic<bool>> state_;
};

class stop_source {
public:
	stop_source() : state_(std::make_shared<std::atomic<bool>>(false)) {}
	explicit stop_source(nostopstate_t) noexcept {}
	stop_token get_token() const noexcept { return stop_token(state_); }
	bool request_stop() noexcept
	{
		return state_ && !state_->exchange(true, std::memory_order_acq_rel);
	}
	bool stop_requested() const noexcept
	{
		return state_ && state_->load(std::memory_order_acquire);
	}
	bool stop_possible() const noexcept { return static_cast<bool>(state_); }

private:
	std::shared_ptr<std::atomic<bool>> state_;
};
#endif

// ---- Threads --------------------------------------------------------------------

// How a thread starts: in a new rgroup or its creator's group, at which
// nice value, with which name and stack size.
class thread_options {
public:
	// Start in a new rgroup nested under the creator's group (RGROUP_NEW).
	thread_options &new_group(bool yes = true) noexcept
	{
		new_group_ = yes;
		return *this;
	}
	// The new rgroup's PRIO_RGRP nice value, set from inside before the
	// function runs (only with new_group(): else EINVAL). Rule 6 applies.
	thread_options &nice(int n) noexcept
	{
		nice_ = n;
		return *this;
	}
	// The thread's name (pthread_setname_np: at most 15 bytes, else ERANGE).
	thread_options &name(std::string n)
	{
		name_ = std::move(n);
		return *this;
	}
	// Its stack size (0: pthread's default).
	thread_options &stack_size(std::size_t bytes) noexcept
	{
		stack_size_ = bytes;
		return *this;
	}

	bool new_group() const noexcept { return new_group_; }
	std::optional<int> nice() const noexcept { return nice_; }
	const std::string &name() const noexcept { return name_; }
	std::size_t stack_size() const noexcept { return stack_size_; }

private:
	bool new_group_ = false;
	std::optional<int> nice_;
	std::string name_;
	std::size_t stack_size_ = 0;
};

// Tag: rgroup::thread t(rgroup::new_group, f) starts f in a new rgroup.
struct new_group_t {
	explicit new_group_t() = default;
};
inline constexpr new_group_t new_group{};

namespace detail {

struct start_base {
	std::promise<pid_t> started;   // the thread's tid, or why it did not start
	stop_source stop;
	thread_options opts;
	start_base(const thread_options &o, stop_source s) : stop(std::move(s)), opts(o) {}
	virtual ~start_base() = default;
	virtual void run() = 0;
};

template <class Fn, class... Args>
struct start_state final : start_base {
	std::tuple<Fn, Args...> call;

	template <class F, class... A>
	start_state(const thread_options &o, stop_source s, F &&f, A &&...a)
		: start_base(o, std::move(s)), call(std::forward<F>(f), std::forward<A>(a)...)
	{
	}
	void run() override
	{
		// Like std::jthread: the stop token comes first if f takes it.
		if constexpr (std::is_invocable_v<Fn, stop_token, Args...>)
			std::apply([this](Fn &f, Args &...a) {
				std::invoke(std::move(f), stop.get_token(), std::move(a)...);
			}, call);
		else
			std::apply([](Fn &f, Args &...a) { std::invoke(std::move(f), std::move(a)...); }, call);
	}
};

// The thread's start: name and nice first, then report, then the function.
// An exception escaping the function calls std::terminate(), as with
// std::thread.
inline void *start_routine(void *arg) noexcept
{
	std::unique_ptr<start_base> s(static_cast<start_base *>(arg));

	try {
		const thread_options &o = s->opts;
		if (!o.name().empty()) {
			int e = ::pthread_setname_np(::pthread_self(), o.name().c_str());
			if (e)
				throw_errno(e, "pthread_setname_np");
		}
		if (o.nice() && rgroup_setpriority(PRIO_RGRP, 0, *o.nice()) < 0)
			throw_errno(errno, "rgroup_setpriority");
		s->started.set_value(gettid());
	} catch (...) {
		s->started.set_exception(std::current_exception());
		return nullptr;
	}
	s->run();
	return nullptr;
}

} // namespace detail

// A thread like std::jthread, created with rgroup_thread_create(): in its
// creator's group, or with new_group in a new rgroup. The constructor
// returns when the thread is in its group with its name and nice set, or
// throws std::system_error (no thread is left then). The destructor (and
// move assignment) requests a stop and joins. If f takes an
// rgroup::stop_token as first argument, it gets one.
class thread {
public:
	thread() noexcept : stop_(nostopstate) {}

	template <class F, class... Args,
		  class = std::enable_if_t<!std::is_same_v<detail::remove_cvref_t<F>, thread> &&
					   !std::is_same_v<detail::remove_cvref_t<F>, thread_options> &&
					   !std::is_same_v<detail::remove_cvref_t<F>, new_group_t>>>
	explicit thread(F &&f, Args &&...args)
		: thread(thread_options(), std::forward<F>(f), std::forward<Args>(args)...)
	{
	}

	template <class F, class... Args>
	thread(new_group_t, F &&f, Args &&...args)
		: thread(thread_options().new_group(), std::forward<F>(f), std::forward<Args>(args)...)
	{
	}

	template <class F, class... Args>
	thread(const thread_options &opts, F &&f, Args &&...args) : stop_()
	{
		using state = detail::start_state<std::decay_t<F>, std::decay_t<Args>...>;
		static_assert(std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...> ||
			      std::is_invocable_v<std::decay_t<F>, stop_token, std::decay_t<Args>...>,
			      "rgroup::thread: f cannot be called with these arguments");

		if (opts.nice() && !opts.new_group())
			detail::throw_errno(EINVAL, "rgroup::thread: a nice value needs new_group");
		if (opts.name().size() > 15)
			detail::throw_errno(ERANGE, "rgroup::thread: name longer than 15 bytes");

		auto s = std::make_unique<state>(opts, stop_, std::forward<F>(f), std::forward<Args>(args)...);
		std::future<pid_t> started = s->started.get_future();

		pthread_attr_t attr;
		pthread_attr_t *ap = nullptr;
		if (opts.stack_size()) {
			int e = ::pthread_attr_init(&attr);
			if (e)
				detail::throw_errno(e, "pthread_attr_init");
			e = ::pthread_attr_setstacksize(&attr, opts.stack_size());
			if (e) {
				::pthread_attr_destroy(&attr);
				detail::throw_errno(e, "pthread_attr_setstacksize");
			}
			ap = &attr;
		}
		int err = rgroup_thread_create(&handle_, ap, opts.new_group() ? RGROUP_NEW : 0u,
					       &detail::start_routine, s.get());
		if (ap)
			::pthread_attr_destroy(ap);
		if (err)
			detail::throw_errno(err, "rgroup_thread_create"); // no thread has s
		s.release(); // the thread owns it now
		try {
			tid_ = started.get();
		} catch (...) {
			::pthread_join(handle_, nullptr); // it ended without running f
			throw;
		}
		joinable_ = true;
	}

	~thread()
	{
		if (joinable()) {
			request_stop();
			join();
		}
	}

	thread(const thread &) = delete;
	thread &operator=(const thread &) = delete;

	thread(thread &&o) noexcept
		: handle_(o.handle_), tid_(std::exchange(o.tid_, 0)),
		  joinable_(std::exchange(o.joinable_, false)), stop_(std::move(o.stop_))
	{
	}
	thread &operator=(thread &&o) noexcept
	{
		if (this != &o) {
			if (joinable()) {
				request_stop();
				join();
			}
			handle_ = o.handle_;
			tid_ = std::exchange(o.tid_, 0);
			joinable_ = std::exchange(o.joinable_, false);
			stop_ = std::move(o.stop_);
		}
		return *this;
	}
	void swap(thread &o) noexcept
	{
		std::swap(handle_, o.handle_);
		std::swap(tid_, o.tid_);
		std::swap(joinable_, o.joinable_);
		std::swap(stop_, o.stop_);
	}

	bool joinable() const noexcept { return joinable_; }

	// std::errc::invalid_argument if not joinable,
	// resource_deadlock_would_occur from the thread itself.
	void join()
	{
		if (!joinable_)
			detail::throw_errno(EINVAL, "rgroup::thread::join: not joinable");
		if (::pthread_equal(handle_, ::pthread_self()))
			detail::throw_errno(EDEADLK, "rgroup::thread::join: the thread itself");
		int e = ::pthread_join(handle_, nullptr);
		if (e)
			detail::throw_errno(e, "pthread_join");
		joinable_ = false;
		tid_ = 0;
	}
	void detach()
	{
		if (!joinable_)
			detail::throw_errno(EINVAL, "rgroup::thread::detach: not joinable");
		int e = ::pthread_detach(handle_);
		if (e)
			detail::throw_errno(e, "pthread_detach");
		joinable_ = false;
		tid_ = 0;
	}

	// Its kernel thread id (gettid(2)); 0 when not joinable.
	pid_t tid() const noexcept { return tid_; }
	pthread_t native_handle() const noexcept { return handle_; }
	// Its group (while it runs: ESRCH once it has ended).
	rgroup::group group() const
	{
		if (!joinable_)
			detail::throw_errno(EINVAL, "rgroup::thread::group: not joinable");
		return rgroup::group::of_thread(tid_);
	}

	stop_source get_stop_source() noexcept { return stop_; }
	stop_token get_stop_token() const noexcept { return stop_.get_token(); }
	bool request_stop() noexcept { return stop_.request_stop(); }

private:
	pthread_t handle_{};
	pid_t tid_ = 0;
	bool joinable_ = false;
	stop_source stop_;
};

inline void swap(thread &a, thread &b) noexcept
{
	a.swap(b);
}

// ---- The executor -------------------------------------------------------------

// What a pool or a group does with its pending items when it is closed.
enum class pending { cancel, drain };

struct pool_options {
	unsigned max_workers = 0;              // per group; 0: the CPUs the creator may use
	std::chrono::milliseconds idle{0};     // an idle worker ends after this; 0: 1 s
	std::size_t stack_size = 0;            // of each worker; 0: pthread's default
};

struct work_group_options {
	// Its rgroup's nice value. Unset: what rgroup_exec_group_create() gives
	// with NULL opts: a top-level group of a pool made outside any rgroup
	// takes the calling thread's nice value, any other group 0.
	std::optional<int> nice;
	unsigned max_workers = 0;              // 0: the pool's
};

// A snapshot of a work group (struct rgroup_exec_group_info).
struct work_group_info {
	rgroup_exec_t pool = 0;
	rgroup_exec_group_t parent = 0;        // 0: top-level
	std::string name;
	int nice = 0;
	unsigned max_workers = 0;
	unsigned workers = 0;                  // worker threads alive
	unsigned running = 0;                  // items being run
	unsigned queued = 0;                   // items waiting
	int error = 0;                         // last errno getting it threads
	group_id rgroup_id = 0;                // its rgroup now; 0: none
	std::uint64_t rgroups = 0;             // rgroups it has had
	std::uint64_t submitted = 0, completed = 0, canceled = 0;
	std::chrono::nanoseconds cpu{0};       // its threads' CPU time
};

namespace detail {

// A callable that fits in the C API's `void *arg` travels in it: no
// allocation per item. It must be trivially copyable (its bytes are the
// object) and trivially destructible (a canceled item is just dropped):
// lambdas that capture one pointer or reference, function pointers,
// std::reference_wrapper.
template <class F>
inline constexpr bool fits_inline = sizeof(F) <= sizeof(void *) && alignof(F) <= alignof(void *) &&
				     std::is_trivially_copyable_v<F> && std::is_trivially_destructible_v<F>;

template <class F>
void run_inline(void *arg) noexcept
{
	alignas(F) unsigned char buf[sizeof(F)];
	std::memcpy(buf, &arg, sizeof(F));
	std::invoke(std::move(*std::launder(reinterpret_cast<F *>(buf))));
}

// Any other callable is moved into one allocation. run_heap and
// on_canceled are the pool's own functions: the canceled callback knows a
// heap item by its function, so both keep default visibility (one address
// in a program even where a library is built with -fvisibility=hidden).
struct heap_item {
	void (*run)(heap_item *) noexcept;     // runs and frees
	void (*drop)(heap_item *) noexcept;    // frees without running
};

template <class F>
struct heap_item_of final : heap_item {
	F f;
	template <class G>
	explicit heap_item_of(G &&g) : heap_item{&run_me, &drop_me}, f(std::forward<G>(g)) {}
	static void run_me(heap_item *h) noexcept
	{
		std::unique_ptr<heap_item_of> self(static_cast<heap_item_of *>(h));
		std::invoke(std::move(self->f));
	}
	static void drop_me(heap_item *h) noexcept
	{
		delete static_cast<heap_item_of *>(h);
	}
};

__attribute__((visibility("default"))) inline void run_heap(void *arg) noexcept
{
	auto *h = static_cast<heap_item *>(arg);
	h->run(h);
}

__attribute__((visibility("default"))) inline void on_canceled(void (*fn)(void *), void *arg) noexcept
{
	if (fn == &run_heap) {
		auto *h = static_cast<heap_item *>(arg);
		h->drop(h);
	}
}

inline int timeout_ms(std::chrono::milliseconds t) noexcept
{
	if (t.count() < 0)
		return 0;
	return t.count() > 0x7fffffff ? 0x7fffffff : static_cast<int>(t.count());
}

} // namespace detail

class pool;

// A work group: its items run on workers in an rgroup of its own, which
// weighs under its parent like one thread of the group's nice value. The
// destructor closes it (pending::cancel) if it is still open.
class work_group {
public:
	work_group() noexcept = default;
	~work_group() { close_quietly(); }
	work_group(const work_group &) = delete;
	work_group &operator=(const work_group &) = delete;
	work_group(work_group &&o) noexcept
		: pool_(std::exchange(o.pool_, 0)), group_(std::exchange(o.group_, 0))
	{
	}
	work_group &operator=(work_group &&o) noexcept
	{
		if (this != &o) {
			close_quietly();
			pool_ = std::exchange(o.pool_, 0);
			group_ = std::exchange(o.group_, 0);
		}
		return *this;
	}

	// Queue f() to run once on one of the group's workers, in its rgroup.
	// f is moved or copied; a callable that fits in a pointer (see
	// fits_inline) costs no allocation, any other one allocation. An
	// exception escaping f calls std::terminate(). Throws ENOENT (the group
	// is closed), ESHUTDOWN (its pool is shut down), ENOMEM; f is
	// destroyed then, never run.
	template <class F>
	void submit(F &&f)
	{
		using fn = std::decay_t<F>;
		static_assert(std::is_invocable_v<fn>, "rgroup::work_group::submit: f() must be callable");

		if constexpr (detail::fits_inline<fn>) {
			fn copy(std::forward<F>(f));
			void *arg = nullptr;
			std::memcpy(&arg, static_cast<const void *>(&copy), sizeof(fn));
			detail::check(rgroup_exec_submit(group_, &detail::run_inline<fn>, arg), "rgroup_exec_submit");
		} else {
			auto *h = new detail::heap_item_of<fn>(std::forward<F>(f));
			int r = rgroup_exec_submit(group_, &detail::run_heap, h);
			if (r < 0) {
				h->drop(h);
				detail::throw_errno(-r, "rgroup_exec_submit");
			}
		}
	}

	// A subgroup: its rgroup nests under this group's.
	work_group make_group(const std::string &name, const work_group_options &o = {})
	{
		return make(pool_, group_, name, o, false);
	}

	void set_nice(int value)
	{
		detail::check(rgroup_exec_group_setnice(group_, value), "rgroup_exec_group_setnice");
	}
	work_group_info info() const
	{
		struct rgroup_exec_group_info c {};
		c.sz = sizeof c;
		detail::check(rgroup_exec_group_info(group_, &c), "rgroup_exec_group_info");

		work_group_info i;
		i.pool = c.pool;
		i.parent = c.parent;
		i.name.assign(c.name, ::strnlen(c.name, sizeof c.name));
		i.nice = c.nice;
		i.max_workers = c.max_workers;
		i.workers = c.workers;
		i.running = c.running;
		i.queued = c.queued;
		i.error = c.error;
		i.rgroup_id = c.rgroup;
		i.rgroups = c.rgroups;
		i.submitted = c.submitted;
		i.completed = c.completed;
		i.canceled = c.canceled;
		i.cpu = std::chrono::nanoseconds(c.cpu_ns);
		return i;
	}

	// Until no item is queued or running (EDEADLK from its own workers).
	void wait()
	{
		detail::check(rgroup_exec_wait(pool_, group_, -1), "rgroup_exec_wait");
	}
	// The same, at most t; false if it ran out of time.
	bool wait_for(std::chrono::milliseconds t)
	{
		int r = rgroup_exec_wait(pool_, group_, detail::timeout_ms(t));
		if (r == -ETIMEDOUT)
			return false;
		detail::check(r, "rgroup_exec_wait");
		return true;
	}
	// Remove the items not yet started (destroyed, never run); how many.
	std::size_t cancel()
	{
		return static_cast<std::size_t>(detail::check(rgroup_exec_cancel(pool_, group_), "rgroup_exec_cancel"));
	}
	// Cancel or run its pending items, wait for the running ones and its
	// threads, and destroy it (EBUSY while it has subgroups); how many
	// items were canceled. The handle is empty afterwards.
	std::size_t close(pending p = pending::cancel)
	{
		int r = detail::check(rgroup_exec_group_destroy(group_, p == pending::drain ? RGROUP_EXEC_DRAIN : 0u),
				      "rgroup_exec_group_destroy");
		pool_ = group_ = 0;
		return static_cast<std::size_t>(r);
	}

	explicit operator bool() const noexcept { return group_ != 0; }
	rgroup_exec_group_t native_handle() const noexcept { return group_; }
	rgroup_exec_t pool_handle() const noexcept { return pool_; }

private:
	friend class pool;
	work_group(rgroup_exec_t p, rgroup_exec_group_t g) noexcept : pool_(p), group_(g) {}

	static work_group make(rgroup_exec_t pool, rgroup_exec_group_t parent, const std::string &name,
			       const work_group_options &o, bool caller_nice)
	{
		rgroup_exec_group_t g = 0;
		struct rgroup_exec_group_opts c {};
		c.sz = sizeof c;
		c.parent = parent;
		c.max_workers = o.max_workers;
		if (o.nice) {
			c.nice = *o.nice;
		} else if (caller_nice) {
			errno = 0;
			int n = ::getpriority(PRIO_PROCESS, 0); // the calling thread's
			if (n == -1 && errno != 0)
				detail::throw_errno(errno, "getpriority");
			c.nice = n;
		}
		detail::check(rgroup_exec_group_create(pool, name.c_str(), &c, &g), "rgroup_exec_group_create");
		return work_group(pool, g);
	}

	// The destructor's close: a group already gone with its pool (ENOENT)
	// is fine. One that still has subgroups (EBUSY) cannot be destroyed
	// yet: its pending items are canceled and its running ones waited for,
	// so that none of its items runs after its handle's end; its pool
	// removes it. Called by one of its own workers (EDEADLK) it stays.
	void close_quietly() noexcept
	{
		if (!group_)
			return;
		int r = rgroup_exec_group_destroy(group_, 0);
		if (r == -EBUSY) {
			rgroup_exec_cancel(pool_, group_);
			rgroup_exec_wait(pool_, group_, -1);
		}
		pool_ = group_ = 0;
	}

	rgroup_exec_t pool_ = 0;
	rgroup_exec_group_t group_ = 0;
};

// A pool of workers divided into work groups (rgroup_exec_create(3)). Its
// groups' rgroups nest under the creating thread's group. The destructor
// closes it (pending::cancel) if it is still open: pending items are
// destroyed without running, running ones waited for, its threads joined.
class pool {
public:
	explicit pool(const pool_options &o = {}) : nested_(rgroup::of(0) != 0)
	{
		struct rgroup_exec_opts c {};
		c.sz = sizeof c;
		c.max_workers = o.max_workers;
		c.idle_ms = static_cast<unsigned>(detail::timeout_ms(o.idle));
		c.stack_size = o.stack_size;
		c.canceled = &detail::on_canceled;
		detail::check(rgroup_exec_create(&pool_, &c), "rgroup_exec_create");
	}
	~pool()
	{
		// From one of its own items (EDEADLK) a pool cannot end: as a
		// std::jthread that would join itself, that is fatal.
		if (pool_ && rgroup_exec_destroy(pool_, 0) == -EDEADLK)
			std::terminate();
	}
	pool(const pool &) = delete;
	pool &operator=(const pool &) = delete;
	pool(pool &&o) noexcept : pool_(std::exchange(o.pool_, 0)), nested_(o.nested_) {}
	pool &operator=(pool &&o) noexcept
	{
		if (this != &o) {
			if (pool_ && rgroup_exec_destroy(pool_, 0) == -EDEADLK)
				std::terminate();
			pool_ = std::exchange(o.pool_, 0);
			nested_ = o.nested_;
		}
		return *this;
	}

	// A top-level work group.
	work_group make_group(const std::string &name, const work_group_options &o = {})
	{
		return work_group::make(pool_, 0, name, o, !nested_);
	}

	// Stop taking work (submissions then throw ESHUTDOWN); what was
	// submitted still runs.
	void shutdown()
	{
		detail::check(rgroup_exec_shutdown(pool_), "rgroup_exec_shutdown");
	}
	// Until every group is idle at once.
	void wait()
	{
		detail::check(rgroup_exec_wait(pool_, 0, -1), "rgroup_exec_wait");
	}
	bool wait_for(std::chrono::milliseconds t)
	{
		int r = rgroup_exec_wait(pool_, 0, detail::timeout_ms(t));
		if (r == -ETIMEDOUT)
			return false;
		detail::check(r, "rgroup_exec_wait");
		return true;
	}
	std::size_t cancel()
	{
		return static_cast<std::size_t>(detail::check(rgroup_exec_cancel(pool_, 0), "rgroup_exec_cancel"));
	}
	// Shut down, cancel or run the pending items, wait for the running
	// ones, end every thread; how many items were canceled. Its groups'
	// handles go stale (their destructors then do nothing).
	std::size_t close(pending p = pending::cancel)
	{
		int r = detail::check(rgroup_exec_destroy(pool_, p == pending::drain ? RGROUP_EXEC_DRAIN : 0u),
				      "rgroup_exec_destroy");
		pool_ = 0;
		return static_cast<std::size_t>(r);
	}

	explicit operator bool() const noexcept { return pool_ != 0; }
	rgroup_exec_t native_handle() const noexcept { return pool_; }

private:
	rgroup_exec_t pool_ = 0;
	bool nested_;
};

} // namespace rgroup

#endif // RGROUP_HPP
