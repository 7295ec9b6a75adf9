// SPDX-License-Identifier: MIT
//! The rgroup crate with no backend (RGROUP_BACKEND=none, which the test
//! runner sets: a name no build has, so nothing can be created) and no
//! privilege: the weight table, threads in no rgroup joined like
//! std::thread's, scoped threads, and every error path as an io::Error
//! with the C API's errno, with nothing started.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::errno;
use rgroup::thread::{self, Builder};

fn no_backend() {
    assert_eq!(
        std::env::var("RGROUP_BACKEND").as_deref(),
        Ok("none"),
        "run with RGROUP_BACKEND=none"
    );
    assert_eq!(rgroup::backend(), "none");
}

#[test]
fn weights_are_the_kernel_table() {
    // sched_prio_to_weight at its ends, at 0 and at 5 and 10; clamped.
    for (nice, w) in [
        (-20, 88761),
        (-1, 1277),
        (0, 1024),
        (1, 820),
        (5, 335),
        (10, 110),
        (19, 15),
    ] {
        assert_eq!(rgroup::nice_to_weight(nice), w, "nice {}", nice);
    }
    assert_eq!(rgroup::nice_to_weight(-40), 88761);
    assert_eq!(rgroup::nice_to_weight(40), 15);
    let b = rgroup::backends();
    assert!(
        b.contains(&"cgroup1") && b.contains(&"governor"),
        "built with {:?}",
        b
    );
}

#[test]
fn probe_says_why() {
    no_backend();
    let (e, why) = rgroup::probe(Some("no-such-backend")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    assert!(why.contains("no-such-backend"), "why: {}", why);
    assert!(
        rgroup::probe(None).is_err(),
        "RGROUP_BACKEND=none: no backend"
    );
    assert_eq!(
        errno(rgroup::probe(Some("a\0b")).map_err(|(e, _)| e)),
        libc::EINVAL
    );
}

// Without a backend, a new group is ENOTSUP: no thread runs the function.
#[test]
fn new_group_unsupported() {
    no_backend();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let e = Builder::new()
        .new_group(true)
        .spawn(move || r.fetch_add(1, Ordering::SeqCst))
        .err();
    assert_eq!(e.and_then(|e| e.raw_os_error()), Some(libc::ENOTSUP));
    let r = ran.clone();
    let e = Builder::new()
        .new_group(true)
        .nice(3)
        .name("x".into())
        .spawn(move || r.fetch_add(1, Ordering::SeqCst))
        .err();
    assert_eq!(e.and_then(|e| e.raw_os_error()), Some(libc::ENOTSUP));
    assert_eq!(errno(rgroup::exec::Pool::new()), libc::ENOTSUP);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(rgroup::list().unwrap(), Vec::<u64>::new());
}

// Without the flag a thread starts anyway (as pthread_create), in its
// creator's group (none); join gives its value or its panic.
#[test]
fn plain_thread_joins() {
    no_backend();
    let h = Builder::new()
        .name("rust-plain".into())
        .stack_size(1 << 20)
        .spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            (rgroup::gettid(), rgroup::of(0).unwrap(), 42)
        })
        .unwrap();
    let tid = h.tid();
    assert!(tid > 0 && tid != rgroup::gettid());
    assert_eq!(h.group().unwrap().id(), 0);
    let (inside_tid, inside_group, v) = h.join().unwrap();
    assert_eq!((inside_tid, inside_group, v), (tid, 0, 42));

    let p = thread::spawn(|| -> u32 { panic!("boom") });
    let payload = p.join().unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
}

// Bad options are refused before any thread exists.
#[test]
fn thread_errors() {
    no_backend();
    let ran = Arc::new(AtomicUsize::new(0));
    let tries: Vec<(Builder, i32)> = vec![
        (Builder::new().nice(5), libc::EINVAL), // nice without new_group
        (Builder::new().name("sixteen-bytes-xx".into()), libc::ERANGE),
        (Builder::new().name("nul\0".into()), libc::EINVAL),
        (Builder::new().stack_size(1), libc::EINVAL),
    ];
    for (b, want) in tries {
        let r = ran.clone();
        let e = b.spawn(move || r.fetch_add(1, Ordering::SeqCst)).err();
        assert_eq!(e.and_then(|e| e.raw_os_error()), Some(want));
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    let r = ran.clone();
    Builder::new()
        .name("fifteen-bytes-x".into())
        .spawn(move || r.fetch_add(1, Ordering::SeqCst))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

// Scoped threads borrow from the caller and are all joined at the end,
// also those started from inside another scoped thread.
#[test]
fn scoped_threads() {
    no_backend();
    let mut counts = vec![0u32; 4];
    let total = AtomicUsize::new(0);
    thread::scope(|s| {
        for (i, c) in counts.iter_mut().enumerate() {
            let total = &total;
            s.spawn(move || {
                *c = i as u32 * 10;
                total.fetch_add(1, Ordering::SeqCst);
            });
        }
        s.spawn(|| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(50));
                total.fetch_add(100, Ordering::SeqCst);
            });
        });
        let h = Builder::new()
            .spawn_scoped(s, || total.load(Ordering::SeqCst))
            .unwrap();
        assert!(h.join().unwrap() <= 4);
    });
    assert_eq!(counts, vec![0, 10, 20, 30]);
    assert_eq!(
        total.load(Ordering::SeqCst),
        104,
        "every thread joined before scope returned"
    );

    // A panic joined by hand is the caller's; one never joined makes the
    // scope panic, after the joins.
    let joined = thread::scope(|s| s.spawn(|| panic!("joined")).join().is_err());
    assert!(joined);
    let unjoined = std::panic::catch_unwind(|| {
        thread::scope(|s| {
            s.spawn(|| panic!("not joined"));
        })
    });
    assert!(unjoined.is_err());
}

// A handle on a thread in no rgroup: EINVAL from the C API; on a thread
// that ended: ESRCH; unknown groups: ENOENT.
#[test]
fn group_errors() {
    no_backend();
    let g = rgroup::Group::current().unwrap();
    assert_eq!((g.id(), g.tid()), (0, rgroup::gettid()));
    assert_eq!(errno(g.set_nice(1)), libc::EINVAL);
    assert_eq!(errno(g.nice()), libc::EINVAL);
    assert_eq!(errno(g.set_cpus(&[0])), libc::EINVAL);
    assert_eq!(errno(g.set_cpus(&[4096])), libc::EINVAL);
    assert_eq!(
        errno(g.set_cap(Duration::from_millis(10), Duration::from_millis(100))),
        libc::EINVAL
    );
    assert_eq!(
        errno(g.set_cap(Duration::ZERO, Duration::from_millis(100))),
        libc::EINVAL
    );
    assert_eq!(errno(g.info()), libc::ENOENT);

    let h = thread::spawn(|| std::thread::sleep(Duration::from_millis(20)));
    let gone = h.group().unwrap();
    h.join().unwrap();
    assert_eq!(errno(gone.set_nice(0)), libc::ESRCH);

    assert_eq!(errno(rgroup::of(-1)), libc::EINVAL);
    assert_eq!(errno(rgroup::of(1)), libc::ESRCH); // init: not our thread
    assert_eq!(errno(rgroup::info(0)), libc::ENOENT);
    assert_eq!(errno(rgroup::info(987654321)), libc::ENOENT);
    assert_eq!(errno(rgroup::gc("a\0b")), libc::EINVAL);
}
