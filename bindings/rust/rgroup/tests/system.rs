// SPDX-License-Identifier: MIT
//! The rgroup crate on the real library and this machine's backend
//! (RGROUP_BACKEND: cgroup1 or the governor), in a system group of the
//! test's own (tests/common): run with --test-threads=1, as each test
//! checks that its groups are gone and the split needs the CPU alone.
//!
//!   membership       Builder::new_group and plain threads, seen by the
//!                    library and the kernel; nesting; the groups end
//!                    with their threads (rules 1-3)
//!   nice_and_weight  Builder::nice and Group::set_nice: nice, the
//!                    model's weight, the kernel's cpu.shares; clamping
//!   limits           Group::set_cpus/set_cap read back, and their errors
//!   rule6            EACCES from inside the new thread reaches spawn, in
//!                    a child without CAP_SYS_NICE and RLIMIT_NICE room
//!   executor         items run in their work group's rgroup, nested like
//!                    the groups; counts; cancel, shutdown and drop drop
//!                    the items unrun
//!   split            nice 0 against nice 5 on one CPU, against the
//!                    reference model
//!   layout           the library agrees on the structs' sizes

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};

use common::{errno, kernel_agrees, kernel_weight, no_groups_left, setup};
use rgroup::exec::{GroupOptions, Pending, Pool, PoolOptions};
use rgroup::thread::Builder;
use rgroup::{Group, GroupId};

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Seen {
    tid: libc::pid_t,
    id: GroupId,
    parent: GroupId,
    depth: u32,
}

fn look() -> Seen {
    let id = rgroup::of(0).unwrap();
    let (parent, depth) = if id != 0 {
        let i = rgroup::info(id).unwrap();
        (i.parent, i.depth)
    } else {
        (0, 0)
    };
    Seen {
        tid: rgroup::gettid(),
        id,
        parent,
        depth,
    }
}

#[test]
fn membership() {
    setup();
    let go = Arc::new(Barrier::new(4));
    let (tx, rx) = mpsc::channel();
    let g2 = go.clone();
    let outer = Builder::new()
        .new_group(true)
        .spawn(move || {
            let me = look();
            // Flags 0: its creator's group; new_group: a child rgroup.
            let (g3, g4) = (g2.clone(), g2.clone());
            let plain = Builder::new().spawn(move || (look(), g3.wait())).unwrap();
            let inner = Builder::new()
                .new_group(true)
                .spawn(move || (look(), g4.wait()))
                .unwrap();
            tx.send(me).unwrap();
            g2.wait();
            (plain.join().unwrap().0, inner.join().unwrap().0)
        })
        .unwrap();
    let me = rx.recv().unwrap();
    let id = outer.group().unwrap().id();
    assert_eq!(rgroup::of(0).unwrap(), 0, "the creator stays in no rgroup");
    assert!(
        id != 0 && me.id == id && me.tid == outer.tid(),
        "{:?} in {}",
        me,
        id
    );
    assert_eq!((me.parent, me.depth), (0, 1), "top-level");
    assert_eq!(
        rgroup::info(id).unwrap().nthreads,
        2,
        "the outer thread and the plain one"
    );
    assert!(kernel_agrees(me.tid, id));
    go.wait();
    let (plain, inner) = outer.join().unwrap();
    assert_eq!(plain.id, id, "a plain thread joins its creator's group");
    assert!(
        inner.id != 0 && inner.id != id && inner.parent == id && inner.depth == 2,
        "{:?}",
        inner
    );
    assert!(no_groups_left(), "the groups end with their threads");
}

// The threads of the kernel checks must still run: a spawned thread that
// waits until told, and its group.
fn parked(b: Builder) -> (rgroup::thread::JoinHandle<()>, Group, mpsc::Sender<()>) {
    let (tx, rx) = mpsc::channel::<()>();
    let h = b
        .spawn(move || {
            let _ = rx.recv(); // until told (or the sender is dropped)
        })
        .unwrap();
    let g = h.group().unwrap();
    (h, g, tx)
}

#[test]
fn nice_and_weight() {
    setup();
    let (h, g, end) = parked(
        Builder::new()
            .new_group(true)
            .nice(5)
            .name("rust-nice5".into()),
    );
    let i = g.info().unwrap();
    assert_eq!(
        (g.nice().unwrap(), i.nice),
        (5, 5),
        "nice set before the function ran"
    );
    assert_eq!(i.weight, 335);
    assert!(
        kernel_weight(g.id()).map_or(true, |w| w == 335),
        "kernel {:?}",
        kernel_weight(g.id())
    );
    assert!(kernel_agrees(h.tid(), g.id()));
    let name = std::fs::read_to_string(format!("/proc/self/task/{}/comm", h.tid())).unwrap();
    assert_eq!(name.trim_end(), "rust-nice5");

    // From another thread, through the handle.
    for nice in [-3, 19, 0] {
        g.set_nice(nice).unwrap();
        let w = rgroup::nice_to_weight(nice);
        assert_eq!((g.nice().unwrap(), g.info().unwrap().weight), (nice, w));
        assert!(
            kernel_weight(g.id()).map_or(true, |k| k == w),
            "nice {}: kernel {:?}",
            nice,
            kernel_weight(g.id())
        );
    }
    g.set_nice(40).unwrap();
    assert_eq!(g.nice().unwrap(), 19, "clamped as setpriority(2) does");

    // A nested group starts at nice 0, whatever its parent's.
    let o = Builder::new()
        .new_group(true)
        .nice(7)
        .spawn(|| {
            Builder::new()
                .new_group(true)
                .spawn(|| Group::current().unwrap().nice())
                .unwrap()
                .join()
        })
        .unwrap();
    assert_eq!(o.join().unwrap().unwrap().unwrap(), 0);
    drop(end);
    h.join().unwrap();
    assert!(no_groups_left());
}

fn allowed_cpus() -> Vec<usize> {
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) },
        0
    );
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

#[test]
fn limits() {
    setup();
    let mine = allowed_cpus();
    let first = mine[0];
    let (tx, rx) = mpsc::channel::<()>();
    let h = Builder::new()
        .new_group(true)
        .spawn(move || {
            let _ = rx.recv();
            allowed_cpus()
        })
        .unwrap();
    let g = h.group().unwrap();
    assert_eq!(
        g.cpus().unwrap(),
        mine,
        "a new group runs where the process may"
    );
    g.set_cpus(&[first]).unwrap();
    assert_eq!(g.cpus().unwrap(), vec![first]);
    assert_eq!(g.cap().unwrap(), None);
    g.set_cap(Duration::from_millis(20), Duration::from_millis(100))
        .unwrap();
    let cap = g.cap().unwrap().unwrap();
    assert_eq!(
        (cap.quota, cap.period),
        (Duration::from_millis(20), Duration::from_millis(100))
    );
    if let Some(d) = common::group_dir(g.id()) {
        let q = std::fs::read_to_string(d.join("cpu.cfs_quota_us")).unwrap();
        assert_eq!(q.trim(), "20000", "the kernel's quota");
    }
    // Errors: the C API's errno, and nothing changes.
    assert_eq!(
        errno(g.set_cap(Duration::from_micros(500), Duration::from_millis(100))),
        libc::EINVAL
    );
    assert_eq!(
        errno(g.set_cap(Duration::from_millis(10), Duration::from_secs(10))),
        libc::EINVAL
    );
    assert_eq!(errno(g.set_cpus(&[])), libc::EINVAL);
    let outside = (0..1024).find(|c| !mine.contains(c)).unwrap();
    assert_eq!(
        errno(g.set_cpus(&[outside])),
        libc::EPERM,
        "CPU {} is not the process's",
        outside
    );
    assert_eq!(g.cpus().unwrap(), vec![first]);
    assert_eq!(
        g.cap().unwrap().map(|c| c.quota),
        Some(Duration::from_millis(20))
    );
    g.clear_cap().unwrap();
    assert_eq!(g.cap().unwrap(), None);
    drop(tx);
    assert_eq!(
        h.join().unwrap(),
        vec![first],
        "its thread may run on CPU {} only",
        first
    );
    assert_eq!(
        errno(g.set_cpus(&[first])),
        libc::ESRCH,
        "a handle whose thread ended"
    );
    assert!(no_groups_left());
}

// capget/capset: drop CAP_SYS_NICE from the calling thread (effective and
// permitted), as a process without it would be.
fn drop_cap_sys_nice() -> bool {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const CAP_SYS_NICE: u32 = 23;
    let mut h = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let mut d = [Data::default(); 2];
    unsafe {
        if libc::syscall(libc::SYS_capget, &mut h, d.as_mut_ptr()) != 0 {
            return false;
        }
        d[0].effective &= !(1 << CAP_SYS_NICE);
        d[0].permitted &= !(1 << CAP_SYS_NICE);
        libc::syscall(libc::SYS_capset, &mut h, d.as_ptr()) == 0
    }
}

// Rule 6 in a child process without CAP_SYS_NICE and RLIMIT_NICE room, at
// nice 4: a top-level group below that fails from inside the new thread,
// spawn gets EACCES and nothing is left; above it works.
#[test]
fn rule6() {
    setup();
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let code = std::panic::catch_unwind(|| {
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NICE, &none) }, 0);
            assert!(drop_cap_sys_nice());
            assert_eq!(
                unsafe { libc::setpriority(libc::PRIO_PROCESS, rgroup::gettid() as u32, 4) },
                0
            );
            let ran = Arc::new(AtomicUsize::new(0));
            let r = ran.clone();
            let e = Builder::new()
                .new_group(true)
                .nice(2)
                .spawn(move || r.fetch_add(1, Ordering::SeqCst));
            assert_eq!(errno(e), libc::EACCES, "nice 2 below 4");
            assert_eq!(ran.load(Ordering::SeqCst), 0, "its function never ran");
            let end = Instant::now() + Duration::from_secs(3);
            while !rgroup::list().unwrap().is_empty() {
                assert!(Instant::now() < end, "no rgroup left");
                std::thread::sleep(Duration::from_millis(5));
            }
            let r = ran.clone();
            let h = Builder::new()
                .new_group(true)
                .nice(6)
                .spawn(move || r.fetch_add(1, Ordering::SeqCst));
            h.unwrap().join().unwrap();
            assert_eq!(ran.load(Ordering::SeqCst), 1, "at nice 6 it works");
            let p = Pool::new().unwrap();
            assert_eq!(
                p.group("d").unwrap().info().unwrap().nice,
                4,
                "a work group starts at the caller's nice"
            );
            let below = GroupOptions {
                nice: Some(2),
                max_workers: 0,
            };
            assert_eq!(errno(p.group_with("a", &below)), libc::EACCES);
            drop(p);
            assert!(no_groups_left(), "the child's groups gone before it ends");
        })
        .map_or(1, |_| 0);
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the child's checks (status {:#x})",
        status
    );
}

#[test]
fn executor() {
    setup();
    let pool = Pool::with_options(&PoolOptions {
        max_workers: 2,
        idle: Duration::from_millis(200),
        stack_size: 0,
    })
    .unwrap();
    let a = pool
        .group_with(
            "rust-a",
            &GroupOptions {
                nice: Some(3),
                max_workers: 0,
            },
        )
        .unwrap();
    let b = a.group("rust-a.b").unwrap();
    let (tx, rx) = mpsc::channel();
    for (name, g) in [("a", &a), ("b", &b)] {
        let tx = tx.clone();
        g.submit(move || {
            let s = look();
            let nice = Group::current().unwrap().nice().unwrap();
            tx.send((name, s, nice, kernel_agrees(s.tid, s.id)))
                .unwrap();
        })
        .unwrap();
    }
    let mut got: Vec<_> = (0..2).map(|_| rx.recv().unwrap()).collect();
    got.sort_by_key(|x| x.0);
    let (wa, wb) = (got[0].1, got[1].1);
    assert!(
        wa.id != 0 && wa.parent == 0 && got[0].2 == 3 && got[0].3,
        "a's item: top-level at nice 3: {:?}",
        got[0]
    );
    assert!(
        wb.id != 0 && wb.parent == wa.id && got[1].2 == 0 && got[1].3,
        "b's item: in a child of a's rgroup: {:?}",
        got[1]
    );
    let bi = b.info().unwrap();
    assert_eq!((bi.parent, bi.name.as_str()), (a.as_raw(), "rust-a.b"));

    let ran = Arc::new(AtomicUsize::new(0));
    for _ in 0..1000 {
        let r = ran.clone();
        a.submit(move || {
            r.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    }
    pool.wait().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1000, "every item ran once");
    let ai = a.info().unwrap();
    assert_eq!((ai.submitted, ai.completed, ai.canceled), (1001, 1001, 0));
    assert_eq!(b.close(Pending::Cancel).unwrap(), 0);
    drop(a);
    pool.close(Pending::Cancel).unwrap();
    assert!(no_groups_left(), "every rgroup gone");
}

#[test]
fn cancel() {
    setup();
    // Items that own something: dropped exactly once, run or not.
    let token = Arc::new(());
    let ran = Arc::new(AtomicUsize::new(0));
    let open = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let owning = |token: &Arc<()>, ran: &Arc<AtomicUsize>| {
        let (t, r) = (token.clone(), ran.clone());
        move || {
            let _t = t;
            r.fetch_add(1, Ordering::SeqCst);
        }
    };
    let gate = |open: &Arc<AtomicBool>, started: &Arc<AtomicBool>| {
        let (o, s) = (open.clone(), started.clone());
        move || {
            s.store(true, Ordering::SeqCst);
            while !o.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    };
    {
        let pool = Pool::with_options(&PoolOptions {
            max_workers: 1,
            ..Default::default()
        })
        .unwrap();
        let g = pool.group("rust-c").unwrap();
        g.submit(gate(&open, &started)).unwrap();
        while !started.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        for _ in 0..5 {
            g.submit(owning(&token, &ran)).unwrap();
        }
        assert_eq!(Arc::strong_count(&token), 6, "5 queued items");
        assert_eq!(g.cancel().unwrap(), 5);
        assert_eq!(
            (Arc::strong_count(&token), ran.load(Ordering::SeqCst)),
            (1, 0),
            "dropped, not run"
        );
        for _ in 0..4 {
            g.submit(owning(&token, &ran)).unwrap();
        }
        let o = open.clone();
        let opener = rgroup::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            o.store(true, Ordering::SeqCst);
        });
        assert_eq!(
            pool.close(Pending::Cancel).unwrap(),
            4,
            "close cancels the 4 queued items"
        );
        assert!(
            open.load(Ordering::SeqCst),
            "and waited for the running one"
        );
        assert_eq!(
            (Arc::strong_count(&token), ran.load(Ordering::SeqCst)),
            (1, 0)
        );
        assert_eq!(
            errno(g.submit(owning(&token, &ran))),
            libc::ENOENT,
            "a group of a closed pool"
        );
        assert_eq!(Arc::strong_count(&token), 1, "a refused item is dropped");
        opener.join().unwrap();
    } // g's drop after its pool's end: nothing to do

    let pool = Pool::new().unwrap();
    let g = pool.group("rust-s").unwrap();
    pool.shutdown().unwrap();
    assert_eq!(errno(g.submit(owning(&token, &ran))), libc::ESHUTDOWN);
    assert_eq!(errno(pool.group("x")), libc::ESHUTDOWN);
    assert_eq!(
        errno(pool.group(&"n".repeat(rgroup::sys::RGROUP_EXEC_NAME_MAX))),
        libc::ENAMETOOLONG
    );
    assert_eq!(
        (Arc::strong_count(&token), ran.load(Ordering::SeqCst)),
        (1, 0)
    );

    // Drain: the pending items run before the pool ends.
    let p2 = Pool::with_options(&PoolOptions {
        max_workers: 1,
        ..Default::default()
    })
    .unwrap();
    let g2 = p2.group("rust-d").unwrap();
    for _ in 0..3 {
        g2.submit(owning(&token, &ran)).unwrap();
    }
    assert_eq!(p2.close(Pending::Drain).unwrap(), 0);
    assert_eq!(
        (Arc::strong_count(&token), ran.load(Ordering::SeqCst)),
        (1, 3)
    );
    drop((g, g2, pool));
    assert!(no_groups_left());
}

// Two groups, nice 0 and nice 5, one busy thread each, on one CPU: the
// weights alone divide it. The reference model for two sibling entities
// on one CPU gives each its weight over the sum: 335 / (1024 + 335) =
// 24.65% to nice 5. Judged by the test library's one rule (common::judge)
// from the groups' own clocks, so outside load slows both alike; a window
// counts when the two got a tenth of a CPU (the governor: 40%, as
// test-executor.c says why). Groups that competed as plain threads, or a
// nice step off, miss by 25% or more.
#[test]
fn split() {
    setup();
    let cpu = allowed_cpus()[0];
    let stop = Arc::new(AtomicBool::new(false));
    let spin = |nice: i32| {
        let stop = stop.clone();
        let h = Builder::new()
            .new_group(true)
            .nice(nice)
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
            .unwrap();
        let g = h.group().unwrap();
        g.set_cpus(&[cpu]).unwrap();
        (h, g)
    };
    let (h0, g0) = spin(0);
    let (h5, g5) = spin(5);
    let (w0, w5) = (
        rgroup::nice_to_weight(0) as f64,
        rgroup::nice_to_weight(5) as f64,
    );
    std::thread::sleep(Duration::from_millis(300));
    let min_cpus = if rgroup::backend() == "governor" {
        0.40
    } else {
        0.10
    };
    let used = || {
        vec![
            g0.info().unwrap().usage.as_secs_f64(),
            g5.info().unwrap().usage.as_secs_f64(),
        ]
    };
    let off = common::judge(
        "nice 0 against nice 5 on one CPU",
        &["nice 0", "nice 5"],
        &[w0 / (w0 + w5), w5 / (w0 + w5)],
        min_cpus,
        &used,
    );
    stop.store(true, Ordering::Relaxed);
    h0.join().unwrap();
    h5.join().unwrap();
    let off = off.unwrap_or_else(|| common::skip("the split: too little CPU to judge it"));
    assert_eq!(off, 0, "entities off the model's split");
    assert!(no_groups_left());
}

// The sizes the library knows are the sizes declared here: it writes them
// back into sz.
#[test]
fn layout() {
    setup();
    let (h, g, end) = parked(Builder::new().new_group(true));
    let mut i: rgroup::sys::rgroup_info = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of_val(&i);
    i.sz = size + 64; // a newer caller's bigger struct
    assert_eq!(unsafe { rgroup::sys::rgroup_info(g.id(), &mut i) }, 0);
    assert_eq!(i.sz, size, "struct rgroup_info");
    assert_eq!(i.id, g.id());

    let pool = Pool::new().unwrap();
    let wg = pool.group("rust-l").unwrap();
    let mut e: rgroup::sys::rgroup_exec_group_info = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of_val(&e);
    e.sz = size + 64;
    assert_eq!(
        unsafe { rgroup::sys::rgroup_exec_group_info(wg.as_raw(), &mut e) },
        0
    );
    assert_eq!(e.sz, size, "struct rgroup_exec_group_info");
    assert_eq!(e.pool, pool.as_raw());
    drop((wg, pool, end));
    h.join().unwrap();
    assert!(no_groups_left());
}
