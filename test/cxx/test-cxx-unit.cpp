// SPDX-License-Identifier: MIT
//
// test-cxx-unit.cpp - <rgroup.hpp> without privilege or kernel state: what
// its types promise at compile time (built as C++17 and as C++20, where
// the stop tokens are std's), and its error paths with no backend
// (RGROUP_BACKEND=none, set by meson: a name no build has, so nothing is
// ever created): every error a std::system_error with the C API's errno,
// nothing started, threads joined by their destructors.
#include <rgroup.hpp> // first: the header stands alone

#include <array>
#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
}

// ---- Compile time ---------------------------------------------------------

static_assert(!std::is_copy_constructible_v<rgroup::thread> && !std::is_copy_assignable_v<rgroup::thread>);
static_assert(std::is_nothrow_move_constructible_v<rgroup::thread> &&
	      std::is_nothrow_move_assignable_v<rgroup::thread>);
static_assert(std::is_nothrow_default_constructible_v<rgroup::thread>);
static_assert(!std::is_copy_constructible_v<rgroup::pool> && std::is_nothrow_move_constructible_v<rgroup::pool>);
static_assert(!std::is_copy_constructible_v<rgroup::work_group> &&
	      std::is_nothrow_move_constructible_v<rgroup::work_group>);
// A thread is not made from options or a tag alone, nor from a thread.
static_assert(!std::is_constructible_v<rgroup::thread, rgroup::thread_options>);
static_assert(!std::is_constructible_v<rgroup::thread, const rgroup::thread &>);
static_assert(std::is_same_v<rgroup::group_id, rgroup_id_t>);
// The C++20 build (RGT_STD_STOP_TOKEN, from meson) gets std's tokens.
#ifdef RGT_STD_STOP_TOKEN
static_assert(std::is_same_v<rgroup::stop_token, std::stop_token>);
static_assert(std::is_same_v<rgroup::stop_source, std::stop_source>);
#else
static_assert(!RGROUP_HPP_STD_STOP_TOKEN && std::is_class_v<rgroup::stop_token>);
#endif

// Which callables travel in the C API's pointer (no allocation per item).
namespace {
int some_int;
void plain_fn() {}
auto by_ref = [p = &some_int] { ++*p; };
auto two_ptrs = [p = &some_int, q = &some_int] { *p += *q; };
auto empty = [] {};
auto big = [a = std::array<char, 64>{}] { (void)a; };
auto owns_string = [s = std::string("x")] { (void)s; };
auto owns_shared = [s = std::make_shared<int>(1)] { (void)s; };
} // namespace
static_assert(rgroup::detail::fits_inline<decltype(by_ref)>);
static_assert(rgroup::detail::fits_inline<decltype(empty)>);
static_assert(rgroup::detail::fits_inline<decltype(&plain_fn)>);
static_assert(rgroup::detail::fits_inline<std::reference_wrapper<decltype(big)>>);
static_assert(!rgroup::detail::fits_inline<decltype(two_ptrs)>);
static_assert(!rgroup::detail::fits_inline<decltype(big)>);
static_assert(!rgroup::detail::fits_inline<decltype(owns_string)>);
static_assert(!rgroup::detail::fits_inline<decltype(owns_shared)>);

// ---- Helpers -------------------------------------------------------------------

// Run f, which must throw std::system_error with errno `err`.
template <class F>
static void expect_errno(int err, F &&f)
{
	try {
		f();
	} catch (const std::system_error &e) {
		if (e.code() != std::error_code(err, std::generic_category()))
			fail_msg("threw %s (%d), wanted errno %d", e.what(), e.code().value(), err);
		return;
	}
	fail_msg("did not throw; wanted errno %d", err);
}

// ---- Cases ---------------------------------------------------------------------

static void test_weights_are_the_c_table(void **)
{
	for (int nice = -25; nice <= 25; nice++)
		assert_int_equal(rgroup::nice_to_weight(nice), rgroup_nice_to_weight(nice));
	assert_int_equal(rgroup::nice_to_weight(0), 1024);
	assert_string_equal(rgroup::backend(), "none");
}

// Without a backend, RGROUP_NEW fails with ENOTSUP and starts nothing.
static void test_new_group_unsupported(void **)
{
	std::atomic<int> ran{0};
	expect_errno(ENOTSUP, [&] { rgroup::thread t(rgroup::new_group, [&] { ran++; }); });
	expect_errno(ENOTSUP, [&] {
		rgroup::thread t(rgroup::thread_options().new_group().nice(3).name("x"), [&] { ran++; });
	});
	expect_errno(ENOTSUP, [] { rgroup::pool p; });
	assert_int_equal(ran.load(), 0);
	assert_true(rgroup::list().empty());
}

// Without the flag a thread starts anyway (as pthread_create), in the
// creator's group (none), and its destructor joins it.
static void test_plain_thread_joins(void **)
{
	std::atomic<int> done{0};
	pid_t tid = 0;
	{
		rgroup::thread t([&](int add) {
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
			done += add;
		}, 2);
		assert_true(t.joinable());
		tid = t.tid();
		assert_true(tid > 0);
		assert_int_not_equal(tid, rgroup::detail::gettid());
		assert_int_equal(t.group().id(), 0);
	}
	assert_int_equal(done.load(), 2); // joined, not detached
	assert_true(rgroup::list().empty());
}

// Like std::jthread: a function that takes a stop token gets one, and the
// destructor requests the stop before it joins.
static void test_stop_token(void **)
{
	std::atomic<long> spins{0};
	bool saw_stop = false;
	{
		rgroup::thread t([&](rgroup::stop_token st) {
			while (!st.stop_requested())
				spins++;
			saw_stop = true;
		});
		assert_true(t.get_stop_token().stop_possible());
		while (spins.load() == 0)
			std::this_thread::yield();
	}
	assert_true(saw_stop);

	rgroup::thread empty;
	assert_false(empty.get_stop_token().stop_possible());
	assert_false(empty.request_stop());
}

// Move construction and assignment; assignment joins the old thread.
static void test_move(void **)
{
	std::atomic<int> stopped{0};
	auto loop = [&](rgroup::stop_token st) {
		while (!st.stop_requested())
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		stopped++;
	};
	rgroup::thread a(loop);
	pid_t tid = a.tid();
	rgroup::thread b(std::move(a));
	assert_false(a.joinable());
	assert_int_equal(a.tid(), 0);
	assert_true(b.joinable());
	assert_int_equal(b.tid(), tid);

	rgroup::thread c(loop);
	pid_t tid_c = c.tid();
	b = std::move(c); // stops and joins b's first thread
	assert_int_equal(stopped.load(), 1);
	assert_int_equal(b.tid(), tid_c);
	assert_false(c.joinable());
	b = rgroup::thread(); // and the second
	assert_int_equal(stopped.load(), 2);
	assert_false(b.joinable());
}

static void test_thread_errors(void **)
{
	std::atomic<int> ran{0};
	auto f = [&] { ran++; };
	// Checked before any thread exists.
	expect_errno(EINVAL, [&] { rgroup::thread t(rgroup::thread_options().nice(5), f); });
	expect_errno(ERANGE, [&] { rgroup::thread t(rgroup::thread_options().name("sixteen-bytes-xx"), f); });
	expect_errno(EINVAL, [&] { rgroup::thread t(rgroup::thread_options().stack_size(1), f); });
	assert_int_equal(ran.load(), 0);
	{
		rgroup::thread t(rgroup::thread_options().name("fifteen-bytes-x").stack_size(1 << 20), f);
	}
	assert_int_equal(ran.load(), 1);

	rgroup::thread none;
	expect_errno(EINVAL, [&] { none.join(); });
	expect_errno(EINVAL, [&] { none.detach(); });
	expect_errno(EINVAL, [&] { (void)none.group(); });

	// join() from the thread itself.
	rgroup::thread self;
	std::promise<void> go;
	std::promise<std::error_code> got;
	auto go_f = go.get_future();
	self = rgroup::thread([&] {
		go_f.wait();
		try {
			self.join();
			got.set_value({});
		} catch (const std::system_error &e) {
			got.set_value(e.code());
		}
	});
	go.set_value();
	assert_true(got.get_future().get() == std::errc::resource_deadlock_would_occur);
	self.join();

	// detach(): the thread goes on alone.
	std::promise<void> finished;
	auto fin = finished.get_future();
	rgroup::thread d([&] { finished.set_value(); });
	d.detach();
	assert_false(d.joinable());
	fin.wait();
}

// A handle on a group in no rgroup (the sgroup): EINVAL from the C API;
// on a thread that ended: ESRCH.
static void test_group_errors(void **)
{
	rgroup::group g = rgroup::group::current();
	assert_int_equal(g.id(), 0);
	assert_false(static_cast<bool>(g));
	assert_int_equal(g.tid(), rgroup::detail::gettid());
	expect_errno(EINVAL, [&] { g.set_nice(1); });
	expect_errno(EINVAL, [&] { (void)g.nice(); });
	expect_errno(EINVAL, [&] { g.set_cpus({0}); });
	expect_errno(EINVAL, [&] { g.set_cap(std::chrono::milliseconds(10)); });
	expect_errno(EINVAL, [&] { g.set_cap(std::chrono::microseconds(-1)); });
	expect_errno(ENOENT, [&] { (void)g.info(); });

	rgroup::group gone = g;
	{
		std::promise<void> end;
		rgroup::thread t([f = end.get_future()] { f.wait(); });
		gone = t.group();
		assert_int_equal(gone.tid(), t.tid());
		end.set_value();
	}
	expect_errno(ESRCH, [&] { gone.set_nice(0); });

	expect_errno(EINVAL, [] { (void)rgroup::of(-1); });
	expect_errno(ESRCH, [] { (void)rgroup::of(1); }); // init: not our thread
	expect_errno(ENOENT, [] { (void)rgroup::info(0); });
	expect_errno(ENOENT, [] { (void)rgroup::info(987654321); });

	std::string why;
	std::error_code ec = rgroup::probe("no-such-backend", &why);
	assert_true(ec == std::errc::no_such_file_or_directory);
	assert_true(why.find("no-such-backend") != std::string::npos);
}

static void test_cpu_set(void **)
{
	rgroup::cpu_set s{0, 3, 1023};
	assert_int_equal(s.count(), 3);
	assert_true(s.test(3));
	assert_false(s.test(2));
	assert_true((s.cpus() == std::vector<int>{0, 3, 1023}));
	s.reset(3);
	assert_true((s == rgroup::cpu_set{0, 1023}));
	assert_true((s != rgroup::cpu_set{}));
	assert_true(rgroup::cpu_set().empty());
	bool threw = false;
	try {
		s.set(CPU_SETSIZE);
	} catch (const std::out_of_range &) {
		threw = true;
	}
	assert_true(threw);
}

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights_are_the_c_table),
		cmocka_unit_test(test_new_group_unsupported),
		cmocka_unit_test(test_plain_thread_joins),
		cmocka_unit_test(test_stop_token),
		cmocka_unit_test(test_move),
		cmocka_unit_test(test_thread_errors),
		cmocka_unit_test(test_group_errors),
		cmocka_unit_test(test_cpu_set),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
