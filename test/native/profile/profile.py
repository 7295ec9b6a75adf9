#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""profile.py - instructions per thread creation, by kernel function and by
kind of work, from tbcount.c's counts of a run of create.c.

usage: profile.py CONSOLE COUNTS N [--functions K]

CONSOLE  the console of a boot of "create --kallsyms" (the symbols)
COUNTS   tbcount.c's output of a boot of "create N"
N        the iterations per window

Each window's count less the empty window's, divided by N, per function
(a block is the function's whose address is the nearest symbol at or
below it). The kinds are regular expressions over function names, tried
in order; a function that matches none is "other". Prints the table of
kinds, then the K functions (default 25) whose counts differ most between
B and C.
"""
import bisect
import collections
import re
import sys

KINDS = [
    ("rgroup and task group code",
     r"rgroup|sched_create_group|sched_online_group|sched_release_group|sched_destroy_group"
     r"|sched_free_group|sched_unregister|_fair_sched_group|init_tg_|tg_cpu|cfs_bandwidth"
     r"|init_cfs_rq|init_entity_runnable|attach_tg_cfs_rq|sched_move_task|task_group"),
    ("random numbers", r"chacha|blake2s|get_random|crng"),
    ("memcg charging", r"memcg|obj_cgroup|objcg|refill_stock|consume_stock|page_counter"),
    ("slab and page allocator",
     r"kmalloc|kmem_cache|slab|kfree|free_one_page|rmqueue|free_unref|free_pcppages|alloc_pages"
     r"|get_page_from_freelist|prep_new_page|post_alloc_hook|clear_page|virt_to_folio"
     r"|free_pages|init_on"),
    ("vmalloc (thread stacks)", r"vmap|vmalloc|vunmap|vfree|vm_area|purge|pcpu_|radix_tree"),
    ("RCU", r"rcu"),
    ("hrtimer", r"hrtimer"),
    ("load tracking (PELT)",
     r"load_avg|decay_load|propagate|blocked|accumulate_sum|clock_pelt|attach_entity"
     r"|detach_entity|update_cfs_group|reweight|calc_group_shares|util_est|leaf_cfs_rq"),
    ("scheduler core and fair class",
     r"sched|enqueue|dequeue|entity|pick|vruntime|place_|update_curr|calc_delta|switch"
     r"|finish_task|wake|select_task|set_next|put_prev|eligible|rq_|rb_|balance|idle"
     r"|task_tick|resched|preempt|migrate"),
    ("user space", r"^\(user space\)$"),
]
WINDOWS = ("A", "B", "C")


def symbols(console):
    syms = []
    for line in open(console, errors="replace"):
        f = line.split()
        if len(f) >= 4 and f[0] == "KS" and f[2] in "tTwW":
            syms.append((int(f[1], 16), f[3]))
    if not syms:
        sys.exit(f"profile.py: no symbols in {console}")
    syms.sort()
    return [a for a, _ in syms], [s for _, s in syms]


def windows(counts, addrs, names):
    """Per window, instructions per function (before subtracting)."""
    lines = open(counts).read().splitlines()
    marks = int(lines[0].split()[2])
    if marks < 5:
        sys.exit(f"profile.py: {marks} marks in {counts}, want 5 (the run did not finish?)")
    win = [collections.Counter() for _ in range(4)]
    for line in lines[1:]:
        f = line.split()
        vaddr, insns = int(f[0], 16), int(f[1])
        snap = [int(x) for x in f[2:]]
        if vaddr == 0:
            name = "(user space)"
        else:
            i = bisect.bisect_right(addrs, vaddr) - 1
            name = names[i] if i >= 0 else hex(vaddr)
        for w in range(4):
            win[w][name] += (snap[w + 1] - snap[w]) * insns
    return win


def main():
    args = sys.argv[1:]
    top = 25
    if "--functions" in args:
        i = args.index("--functions")
        top = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    console, counts, n = args[0], args[1], int(args[2])
    addrs, names = symbols(console)
    win = windows(counts, addrs, names)
    per = {w: {} for w in WINDOWS}
    for name in set().union(*win):
        for k, w in enumerate(WINDOWS):
            per[w][name] = (win[k][name] - win[3][name]) / n
    kinds = collections.defaultdict(lambda: collections.Counter())
    for name in per["A"]:
        kind = next((k for k, rx in KINDS if re.search(rx, name)), "other")
        for w in WINDOWS:
            kinds[kind][w] += per[w][name]

    print("Instructions per pthread_create + join (the empty window's subtracted):")
    print("  A: by a thread in a top-level rgroup; B: by a thread one level deeper;")
    print("  C: as A, each thread in a new rgroup.\n")
    print(f"| {'kind of work':30s} | {'A':>7s} | {'B':>7s} | {'C':>7s} | {'B - A':>7s} | {'C - B':>7s} |")
    print(f"| {'-' * 30} | {'-' * 6}: | {'-' * 6}: | {'-' * 6}: | {'-' * 6}: | {'-' * 6}: |")
    for kind in [k for k, _ in KINDS] + ["other"]:
        a, b, c = (kinds[kind][w] for w in WINDOWS)
        print(f"| {kind:30s} | {a:7.0f} | {b:7.0f} | {c:7.0f} | {b - a:+7.0f} | {c - b:+7.0f} |")
    a, b, c = (sum(kinds[k][w] for k in kinds) for w in WINDOWS)
    print(f"| {'total':30s} | {a:7.0f} | {b:7.0f} | {c:7.0f} | {b - a:+7.0f} | {c - b:+7.0f} |")
    print(f"\nC / A {c / a:.3f} (B / A {b / a:.3f}, C / B {c / b:.3f})\n")
    print(f"| {'function (largest C - B)':40s} | {'A':>7s} | {'B':>7s} | {'C':>7s} |")
    print(f"| {'-' * 40} | {'-' * 6}: | {'-' * 6}: | {'-' * 6}: |")
    diff = sorted(per["A"], key=lambda s: -abs(per["C"][s] - per["B"][s]))
    for s in diff[:top]:
        print(f"| {s:40s} | {per['A'][s]:7.0f} | {per['B'][s]:7.0f} | {per['C'][s]:7.0f} |")


if __name__ == "__main__":
    main()
