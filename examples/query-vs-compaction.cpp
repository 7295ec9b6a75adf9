// SPDX-License-Identifier: MIT
//
// query-vs-compaction.cpp - query-vs-compaction.c with <rgroup.hpp>: a
// database keeps its query threads in a top-level rgroup at the process's
// own nice and its compaction threads in another at nice 10: background
// work yields to queries, and no thread is reniced.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <system_error>
#include <thread>
#include <vector>

#include <rgroup.hpp>

// Stands in for running queries or compacting, until asked to stop.
static void work(rgroup::stop_token stop)
{
	for (volatile unsigned long n = 0; !stop.stop_requested(); n++)
		;
}

// A pool's first thread, born in a new rgroup at its nice value: it starts
// 3 more threads in its own group. Each rgroup::thread asks its function
// to stop and joins it when it goes, the pool's first when main ends, the
// 3 others when `more` goes.
static void pool_main(rgroup::stop_token stop, const char *name)
{
	std::vector<rgroup::thread> more;

	try {
		for (int i = 0; i < 3; i++)
			more.emplace_back(work);
	} catch (const std::system_error &e) {
		std::cerr << name << ": " << e.what() << '\n';
	}
	work(stop);
}

int main()
{
	using rgroup::thread_options;

	try {
		rgroup::thread queries(thread_options().new_group().nice(getpriority(PRIO_PROCESS, 0)).name("queries"),
				       pool_main, "queries");
		rgroup::thread compaction(thread_options().new_group().nice(10).name("compaction"),
					  pool_main, "compaction");
		std::this_thread::sleep_for(std::chrono::seconds(3));
		// Read the groups while their threads run: an rgroup ends with them.
		for (rgroup::group_id id : rgroup::list()) {
			rgroup::group_info i = rgroup::info(id);
			std::printf("rgroup at nice %3d (weight %4u), %u threads: %.2f s CPU\n",
				    i.nice, i.weight, i.nthreads, i.usage.count() / 1e9);
		}
	} catch (const std::system_error &e) {
		if (e.code() == std::errc::not_supported)
			std::cerr << "rgroup: no backend here: run `rgroup doctor`\n";
		else
			std::cerr << e.what() << '\n';
		return 1;
	}
	return 0;
}
