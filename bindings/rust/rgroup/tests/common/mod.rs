// SPDX-License-Identifier: MIT
//! What the system tests share: a system group of the test's own on the v1
//! cpu hierarchy (cgroup1; the governor needs none), removed at exit, so
//! that the tests never touch a group they did not make; the kernel's view
//! of a thread's group; errno of an io::Error; the one rule that judges a
//! CPU split.
#![allow(dead_code)]

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

pub fn errno<T>(r: io::Result<T>) -> i32 {
    match r {
        Ok(_) => 0,
        Err(e) => e.raw_os_error().unwrap_or(-1),
    }
}

/// The system group: its directory, its path in the hierarchy, and where
/// the process was before.
pub struct Sgroup {
    pub dir: PathBuf,
    pub path: String,
    home: PathBuf,
}

static SETUP: Once = Once::new();
static SG: Mutex<Option<Sgroup>> = Mutex::new(None);

pub fn skip(why: &str) -> ! {
    eprintln!("SKIP: {}", why);
    let strict = std::env::var("RGROUP_TEST_STRICT").map_or(false, |v| !v.is_empty() && v != "0");
    std::process::exit(if strict { 1 } else { 77 });
}

/// The v1 cpu hierarchy's mount point and the process's path in it.
fn cpu_v1() -> Option<(PathBuf, String)> {
    let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mnt = mounts.lines().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        let mut post = post.split(' ');
        let (fstype, opts) = (post.next()?, post.nth(1)?);
        let has_cpu = opts.split(',').any(|o| o == "cpu");
        (fstype == "cgroup" && has_cpu && pre.split(' ').nth(3)? == "/")
            .then(|| PathBuf::from(pre.split(' ').nth(4).unwrap()))
    })?;
    let cg = fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cg.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        ctrl.split(',')
            .any(|c| c == "cpu")
            .then(|| path.to_string())
    })?;
    Some((mnt, path))
}

extern "C" fn leave() {
    let sg = match SG.lock().ok().and_then(|mut g| g.take()) {
        Some(sg) => sg,
        None => return,
    };
    // The library keeps an emptied group up to 0.5 s as a spare.
    if !wait_no_groups(&sg.dir, Duration::from_secs(3)) {
        eprintln!("rgroup directories left in {}", sg.dir.display());
    }
    // What a test's forked child left (a process that ends by _exit or a
    // signal leaves its groups to the next one, rgroup(7)).
    let _ = rgroup::gc(&sg.dir.to_string_lossy());
    let pid = std::process::id().to_string();
    if let Err(e) = fs::write(sg.home.join("cgroup.procs"), &pid) {
        eprintln!("moving back to {}: {}", sg.home.display(), e);
    }
    if let Err(e) = fs::remove_dir(&sg.dir) {
        eprintln!("removing {}: {}", sg.dir.display(), e);
    }
}

/// This process's rgroup directories (rgroup-PID-...) at and below dir.
pub fn group_dirs(dir: &Path) -> usize {
    let mine = format!("rgroup-{}-", std::process::id());
    let mut n = 0;
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().map_or(false, |t| t.is_dir()) {
                if e.file_name().to_string_lossy().starts_with(&mine) {
                    n += 1;
                }
                n += group_dirs(&e.path());
            }
        }
    }
    n
}

fn wait_no_groups(dir: &Path, t: Duration) -> bool {
    let end = Instant::now() + t;
    loop {
        if rgroup::list().map_or(false, |l| l.is_empty()) && group_dirs(dir) == 0 {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Every system test's first call: on cgroup1, make the test's own
/// system group and move the whole process in (once); skip the program
/// where the backend under test cannot work.
pub fn setup() {
    SETUP.call_once(|| {
        let mut backend = std::env::var("RGROUP_BACKEND").unwrap_or_default();
        if backend == "kernel" {
            // The kernel backend the library picks here, as the C tests
            // take it (test/lib/sgroup.c); set again for what the tests
            // start. Before any other call: the library reads it once.
            std::env::remove_var("RGROUP_BACKEND");
            backend = rgroup::backend().to_string();
            std::env::set_var("RGROUP_BACKEND", &backend);
            eprintln!("# the kernel backend here: {}", backend);
        }
        match backend.as_str() {
            "governor" => {}
            "cgroup1" => {
                if unsafe { libc::geteuid() } != 0 {
                    skip("cgroup1 tests need root");
                }
                let (mnt, path) = cpu_v1().unwrap_or_else(|| skip("no v1 cpu hierarchy mounted"));
                let home = mnt.join(path.trim_start_matches('/'));
                let name = format!("rgtest-rust-{}", std::process::id());
                let dir = home.join(&name);
                if let Err(e) = fs::create_dir(&dir) {
                    skip(&format!("cannot make {}: {}", dir.display(), e));
                }
                if let Err(e) = fs::write(dir.join("cgroup.procs"), std::process::id().to_string())
                {
                    let _ = fs::remove_dir(&dir);
                    skip(&format!("cannot move into {}: {}", dir.display(), e));
                }
                let path = format!("{}/{}", path.trim_end_matches('/'), name);
                *SG.lock().unwrap() = Some(Sgroup { dir, path, home });
                unsafe { libc::atexit(leave) };
            }
            b => skip(&format!(
                "backend {:?}: these tests make their system group on the v1 cpu \
                 hierarchy (cgroup1) or need none (the governor)",
                b
            )),
        }
        if let Err((e, why)) = rgroup::probe(None) {
            skip(&format!("backend {}: {} ({})", backend, why, e));
        }
        eprintln!("backend {}", rgroup::backend());
    });
}

/// Wait until the process has no rgroup and its system group no rgroup
/// directory of the process's. A forked child calls it before _exit: the
/// library may keep an emptied group's directory a moment as a spare.
pub fn no_groups_left() -> bool {
    match &*SG.lock().unwrap() {
        Some(sg) => wait_no_groups(&sg.dir, Duration::from_secs(3)),
        None => wait_no_groups(Path::new("/nonexistent"), Duration::from_secs(3)),
    }
}

/// The cgroup directory of rgroup `id` (cgroup1), from the chain of its
/// names below the system group; None on the governor.
pub fn group_dir(id: rgroup::GroupId) -> Option<PathBuf> {
    let sg = SG.lock().unwrap();
    let sg = sg.as_ref()?;
    let mut names = Vec::new();
    let mut g = id;
    while g != 0 {
        let i = rgroup::info(g).ok()?;
        names.push(i.name);
        g = i.parent;
    }
    let mut dir = sg.dir.clone();
    for n in names.iter().rev() {
        dir.push(n);
    }
    Some(dir)
}

/// Does the kernel hold thread tid in rgroup id's directory (cgroup1)? On
/// the governor there is no kernel view: true.
pub fn kernel_agrees(tid: libc::pid_t, id: rgroup::GroupId) -> bool {
    let sg_path = match &*SG.lock().unwrap() {
        Some(sg) => sg.path.clone(),
        None => return true,
    };
    let want = match group_dir(id) {
        Some(d) if id != 0 => {
            let sg = SG.lock().unwrap();
            let base = sg.as_ref().unwrap().dir.clone();
            format!("{}/{}", sg_path, d.strip_prefix(&base).unwrap().display())
        }
        _ => sg_path,
    };
    let cg = fs::read_to_string(format!("/proc/self/task/{}/cgroup", tid)).unwrap_or_default();
    let got = cg.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        ctrl.split(',')
            .any(|c| c == "cpu")
            .then(|| path.to_string())
    });
    if got.as_deref() != Some(want.as_str()) {
        eprintln!(
            "  the kernel has thread {} in {:?}, the library in {}",
            tid, got, want
        );
        return false;
    }
    true
}

/// cpu.shares of rgroup id's directory (cgroup1); None on the governor.
pub fn kernel_weight(id: rgroup::GroupId) -> Option<u32> {
    let d = group_dir(id)?;
    fs::read_to_string(d.join("cpu.shares"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The test library's one rule for a CPU split (test/lib/judge.h, whose
/// reasons hold here too), restated for the Rust tests, which cannot link
/// it: 5 windows of 1 s, kept only when the measured set got at least
/// `min_cpus` CPUs, until a deadline of 60 s; each entity's median share of
/// the set's CPU time against the expected one, within 2 points plus 5% of
/// it. `read` gives each entity's CPU time so far. Returns the entities
/// off, or None when too few windows were kept to judge (a skip).
pub fn judge(
    what: &str,
    labels: &[&str],
    expected: &[f64],
    min_cpus: f64,
    read: &dyn Fn() -> Vec<f64>,
) -> Option<usize> {
    const WINDOWS: usize = 5;
    let window = Duration::from_secs(1);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut got: Vec<Vec<f64>> = vec![Vec::new(); labels.len()];
    let (mut kept, mut windows) = (0, 0);
    let mut c0 = read();
    let mut t0 = Instant::now();
    while kept < WINDOWS && Instant::now() < deadline {
        std::thread::sleep(window);
        let c1 = read();
        let t1 = Instant::now();
        windows += 1;
        let base: f64 = c1.iter().zip(&c0).map(|(a, b)| a - b).sum();
        if base > 0.0 && base / (t1 - t0).as_secs_f64() >= min_cpus {
            for (i, g) in got.iter_mut().enumerate() {
                g.push((c1[i] - c0[i]) / base);
            }
            kept += 1;
        }
        c0 = c1;
        t0 = t1;
    }
    eprintln!(
        "  {}: {} of {} windows of 1 s kept (the set got at least {:.2} CPUs)",
        what, kept, windows, min_cpus
    );
    if kept < WINDOWS {
        eprintln!("  {}: too little CPU to judge a split", what);
        return None;
    }
    let mut off = 0;
    for (i, g) in got.iter().enumerate() {
        let list: Vec<String> = g.iter().map(|v| format!("{:.3}", v)).collect();
        let mut sorted = g.clone();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let (m, e) = (sorted[WINDOWS / 2], expected[i]);
        let tol = 0.02 + 0.05 * e.abs();
        let bad = (m - e).abs() > tol;
        eprintln!(
            "  {:<26} median {:.4} expected {:.4}: off {:.4}, tolerance {:.4} (windows {}){}",
            labels[i],
            m,
            e,
            (m - e).abs(),
            tol,
            list.join(" "),
            if bad { "  <-- FAIL" } else { "" }
        );
        off += bad as usize;
    }
    Some(off)
}
