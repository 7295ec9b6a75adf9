// SPDX-License-Identifier: MIT
//! examples/query-vs-compaction.c with the rgroup crate: a database keeps
//! its query threads in a top-level rgroup at the process's own nice and
//! its compaction threads in another at nice 10: background work yields to
//! queries, and no thread is reniced.
//!
//!     cargo run --example query_vs_compaction

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rgroup::thread::{Builder, JoinHandle};

// Stands in for running queries or compacting, until asked to stop.
fn work(stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        std::hint::spin_loop();
    }
}

// A pool's first thread, born in a new rgroup at its nice value: it starts
// 3 more threads in its own group and joins them when told to stop.
fn pool(name: &str, nice: i32, stop: Arc<AtomicBool>) -> std::io::Result<JoinHandle<()>> {
    Builder::new()
        .new_group(true)
        .nice(nice)
        .name(name.into())
        .spawn(move || {
            let more: Vec<_> = (0..3)
                .map(|_| {
                    let stop = stop.clone();
                    rgroup::thread::spawn(move || work(&stop))
                })
                .collect();
            work(&stop);
            for t in more {
                t.join().unwrap();
            }
        })
}

fn main() {
    let stop = Arc::new(AtomicBool::new(false));
    let own_nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let pools = pool("queries", own_nice, stop.clone())
        .and_then(|q| Ok((q, pool("compaction", 10, stop.clone())?)));
    let (queries, compaction) = match pools {
        Ok(p) => p,
        Err(e) => {
            stop.store(true, Ordering::Relaxed); // a queries pool that started ends
            if e.raw_os_error() == Some(libc::ENOTSUP) {
                eprintln!("rgroup: no backend here: run `rgroup doctor`");
            } else {
                eprintln!("rgroup: {}", e);
            }
            std::process::exit(1);
        }
    };
    std::thread::sleep(Duration::from_secs(3));
    // Read the groups while their threads run: an rgroup ends with them.
    for id in rgroup::list().unwrap_or_default() {
        if let Ok(i) = rgroup::info(id) {
            println!(
                "rgroup at nice {:3} (weight {:4}), {} threads: {:.2} s CPU",
                i.nice,
                i.weight,
                i.nthreads,
                i.usage.as_secs_f64()
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    queries.join().unwrap();
    compaction.join().unwrap();
}
