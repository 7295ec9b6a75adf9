// SPDX-License-Identifier: MIT
//! Resource groups for a process's own threads: safe bindings of librgroup.
//!
//! A thread can be started in a new *rgroup* ([`thread::Builder::new_group`]),
//! nested under its creator's group; under its parent an rgroup weighs like
//! one thread of its nice value ([`Group::set_nice`]), and the threads
//! inside share that time. The executor ([`exec`]) runs work items in the
//! rgroup of their work group. The rules are `rgroup(7)`'s; each call here
//! wraps the C function of the same name (its man page in section 3).
//!
//! Errors are [`std::io::Error`]s carrying the C call's errno
//! ([`std::io::Error::raw_os_error`]).
//!
//! ```no_run
//! let compaction = rgroup::thread::Builder::new()
//!     .new_group(true)
//!     .nice(10)                      // weight 110 against the caller's 1024
//!     .spawn(|| { /* compact */ })?;
//! /* ... serve queries at full weight ... */
//! compaction.join().unwrap();
//! # Ok::<(), std::io::Error>(())
//! ```

use std::ffi::{CStr, CString};
use std::io;
use std::os::raw::{c_char, c_int};
use std::time::Duration;

pub use rgroup_sys as sys;

pub mod exec;
pub mod thread;

/// An rgroup's identity in this process, never reused; 0 stands for "no
/// rgroup" (the process's sgroup).
pub type GroupId = sys::rgroup_id_t;

/// The C API's usual result: 0 or a count, or a negative errno.
pub(crate) fn check(r: c_int) -> io::Result<c_int> {
    if r < 0 {
        Err(io::Error::from_raw_os_error(-r))
    } else {
        Ok(r)
    }
}

pub(crate) fn errno() -> io::Error {
    io::Error::last_os_error()
}

pub(crate) fn einval() -> io::Error {
    io::Error::from_raw_os_error(libc::EINVAL)
}

pub(crate) fn c_name(name: &[c_char]) -> String {
    let bytes: Vec<u8> = name
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The calling thread's kernel thread id (gettid(2)).
pub fn gettid() -> libc::pid_t {
    unsafe { libc::gettid() }
}

/// The backend in use: "native", "cgroup2", "cgroup1", "governor", or
/// "none" when none can enforce rgroups here (see [`probe`]).
pub fn backend() -> &'static str {
    // A static string of the library's.
    unsafe { CStr::from_ptr(sys::rgroup_backend()) }
        .to_str()
        .unwrap_or("none")
}

/// The backends the library was built with, best first.
pub fn backends() -> Vec<&'static str> {
    let mut v = Vec::new();
    for i in 0.. {
        let p = unsafe { sys::rgroup_backend_name(i) };
        if p.is_null() {
            break;
        }
        v.push(unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("?"));
    }
    v
}

/// Would backend `name` (None: the automatic choice) enforce rgroups for
/// this process here? If not, the error (ENOENT for an unknown name) and
/// one line with the reason and the fix.
pub fn probe(name: Option<&str>) -> Result<(), (io::Error, String)> {
    let cname = match name.map(CString::new) {
        Some(Err(_)) => return Err((einval(), "a backend name has no NUL byte".into())),
        Some(Ok(c)) => Some(c),
        None => None,
    };
    let mut why = [0 as c_char; 512];
    let r = unsafe {
        sys::rgroup_probe(
            cname.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
            why.as_mut_ptr(),
            why.len(),
        )
    };
    match check(r) {
        Ok(_) => Ok(()),
        Err(e) => Err((e, c_name(&why))),
    }
}

/// The kernel weight of a nice value (clamped to -20..19): 1024 for 0,
/// about 1.25 times less for each step up.
pub fn nice_to_weight(nice: i32) -> u32 {
    unsafe { sys::rgroup_nice_to_weight(nice) }
}

/// The rgroup of thread `tid` of this process (0: the caller); 0 if it is
/// in none. EINVAL for a negative tid, ESRCH for a thread not ours.
pub fn of(tid: libc::pid_t) -> io::Result<GroupId> {
    let mut id = 0;
    check(unsafe { sys::rgroup_of(tid, &mut id) })?;
    Ok(id)
}

/// Every rgroup of the process, a parent before its children.
pub fn list() -> io::Result<Vec<GroupId>> {
    let mut ids = vec![0; 16];
    loop {
        let n = check(unsafe { sys::rgroup_list(ids.as_mut_ptr(), ids.len()) })? as usize;
        if n <= ids.len() {
            ids.truncate(n);
            return Ok(ids);
        }
        ids.resize(n + 16, 0); // it grew meanwhile: again
    }
}

/// A snapshot of one rgroup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInfo {
    pub id: GroupId,
    /// 0 for a top-level rgroup.
    pub parent: GroupId,
    /// Its PRIO_RGRP nice value.
    pub nice: i32,
    /// [`nice_to_weight`] of it.
    pub weight: u32,
    /// 1 for a top-level rgroup.
    pub depth: u32,
    /// Its own threads that the library knows of (not its children's).
    pub nthreads: u32,
    pub nchildren: u32,
    /// CPU time of its threads and its children's.
    pub usage: Duration,
    /// Its directory name in the backend, if it has one.
    pub name: String,
    /// The governor: time its threads were paused.
    pub throttled: Duration,
    /// The governor: pauses its threads did not take.
    pub unthrottled: u64,
}

/// ENOENT when the rgroup does not exist (any more), also for id 0.
pub fn info(id: GroupId) -> io::Result<GroupInfo> {
    let mut c: sys::rgroup_info = unsafe { std::mem::zeroed() };
    c.sz = std::mem::size_of::<sys::rgroup_info>();
    check(unsafe { sys::rgroup_info(id, &mut c) })?;
    Ok(GroupInfo {
        id: c.id,
        parent: c.parent,
        nice: c.nice,
        weight: c.weight,
        depth: c.depth,
        nthreads: c.nthreads,
        nchildren: c.nchildren,
        usage: Duration::from_nanos(c.usage_ns),
        name: c_name(&c.name),
        throttled: Duration::from_nanos(c.throttled_ns),
        unthrottled: c.unthrottled,
    })
}

/// Remove what killed rgroup processes left in cgroup directory `dir`;
/// how many directories were removed.
pub fn gc(dir: &str) -> io::Result<usize> {
    let c = CString::new(dir).map_err(|_| einval())?;
    Ok(check(unsafe { sys::rgroup_gc(c.as_ptr()) })? as usize)
}

/// A CPU bandwidth cap: at most `quota` of CPU time in every `period`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cap {
    pub quota: Duration,
    pub period: Duration,
}

/// An rgroup, reached as the C API reaches it: through one of its threads,
/// so a handle is good while that thread lives. Threads never change group
/// (rule 2): each call first checks that the thread is still in the group
/// it was in when the handle was made, else ESRCH. A handle on a thread in
/// no rgroup ([`Group::id`] 0) is valid, but its calls fail with EINVAL, as
/// the C API's do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    tid: libc::pid_t,
    id: GroupId,
}

impl Group {
    /// The calling thread's group.
    pub fn current() -> io::Result<Group> {
        Group::of_thread(0)
    }

    /// The group of thread `tid` of this process (0: the caller).
    pub fn of_thread(tid: libc::pid_t) -> io::Result<Group> {
        let tid = if tid == 0 { gettid() } else { tid };
        Ok(Group { tid, id: of(tid)? })
    }

    pub fn id(&self) -> GroupId {
        self.id
    }

    /// The thread the handle reaches the group through.
    pub fn tid(&self) -> libc::pid_t {
        self.tid
    }

    fn check_thread(&self) -> io::Result<()> {
        // ESRCH from rgroup_of itself when the thread is gone.
        if of(self.tid)? != self.id {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(())
    }

    /// PRIO_RGRP: its nice value.
    pub fn nice(&self) -> io::Result<i32> {
        self.check_thread()?;
        unsafe { *libc::__errno_location() = 0 };
        let n = unsafe { sys::rgroup_getpriority(sys::PRIO_RGRP, self.tid as libc::id_t) };
        if n == -1 && io::Error::last_os_error().raw_os_error() != Some(0) {
            return Err(errno());
        }
        Ok(n)
    }

    /// Set its nice value (clamped to -20..19), hence its weight under its
    /// parent. Rule 6: EACCES for a top-level group below the caller's nice
    /// without RLIMIT_NICE room or CAP_SYS_NICE.
    pub fn set_nice(&self, nice: i32) -> io::Result<()> {
        self.check_thread()?;
        if unsafe { sys::rgroup_setpriority(sys::PRIO_RGRP, self.tid as libc::id_t, nice) } < 0 {
            return Err(errno());
        }
        Ok(())
    }

    pub fn info(&self) -> io::Result<GroupInfo> {
        self.check_thread()?;
        info(self.id)
    }

    /// Rule 10: the CPUs its threads may run on: its own set, else its
    /// nearest ancestor's, else the process's.
    pub fn cpus(&self) -> io::Result<Vec<usize>> {
        self.check_thread()?;
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        check(unsafe {
            sys::rgroup_get_cpus(self.tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set)
        })?;
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect())
    }

    /// Give the group its own CPUs, within its parent's (else EPERM); an
    /// empty list or a CPU beyond 1023 is EINVAL.
    pub fn set_cpus(&self, cpus: &[usize]) -> io::Result<()> {
        self.check_thread()?;
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus {
            if c >= libc::CPU_SETSIZE as usize {
                return Err(einval());
            }
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        check(unsafe {
            sys::rgroup_set_cpus(self.tid, std::mem::size_of::<libc::cpu_set_t>(), &set)
        })?;
        Ok(())
    }

    /// Lift its own set: it runs on its parent's again.
    pub fn reset_cpus(&self) -> io::Result<()> {
        self.check_thread()?;
        check(unsafe { sys::rgroup_set_cpus(self.tid, 0, std::ptr::null()) })?;
        Ok(())
    }

    /// Rule 10: its own cap, None if it has none (its ancestors' caps still
    /// apply).
    pub fn cap(&self) -> io::Result<Option<Cap>> {
        self.check_thread()?;
        let (mut q, mut p) = (0u64, 0u64);
        check(unsafe { sys::rgroup_get_cap(self.tid, &mut q, &mut p) })?;
        Ok(if q == 0 {
            None
        } else {
            Some(Cap {
                quota: Duration::from_micros(q),
                period: Duration::from_micros(p),
            })
        })
    }

    /// At most `quota` of CPU time in every `period` (1 ms to 1 s) for the
    /// group and its children; a zero quota is EINVAL (use [`clear_cap`]).
    ///
    /// [`clear_cap`]: Group::clear_cap
    pub fn set_cap(&self, quota: Duration, period: Duration) -> io::Result<()> {
        self.check_thread()?;
        let (q, p) = (quota.as_micros(), period.as_micros());
        if q == 0 || p == 0 || q > u64::MAX as u128 || p > u64::MAX as u128 {
            return Err(einval());
        }
        check(unsafe { sys::rgroup_set_cap(self.tid, q as u64, p as u64) })?;
        Ok(())
    }

    pub fn clear_cap(&self) -> io::Result<()> {
        self.check_thread()?;
        check(unsafe { sys::rgroup_set_cap(self.tid, 0, 0) })?;
        Ok(())
    }
}
