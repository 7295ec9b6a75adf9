// SPDX-License-Identifier: MIT
//! The executor: a [`Pool`] of workers divided into [`WorkGroup`]s. Each
//! work group's workers live in an rgroup of their own, nested like the
//! work groups, so the kernel divides the CPU between the groups by their
//! nice values however many items each submits (`rgroup_exec_create(3)`).
//!
//! Both handles close what they own when dropped: pending items are
//! dropped without running, running ones waited for, threads joined.

use std::ffi::CString;
use std::io;
use std::os::raw::{c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use crate::{c_name, check, einval, sys, GroupId};

/// What closing a pool or a group does with its pending items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    /// Drop them without running them.
    Cancel,
    /// Run them first.
    Drain,
}

impl Pending {
    fn flags(self) -> u32 {
        match self {
            Pending::Cancel => 0,
            Pending::Drain => sys::RGROUP_EXEC_DRAIN,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct PoolOptions {
    /// Workers per group; 0: the CPUs the creator may use.
    pub max_workers: u32,
    /// An idle worker ends after this; zero: 1 s.
    pub idle: Duration,
    /// Each worker's stack; 0: pthread's default.
    pub stack_size: usize,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct GroupOptions {
    /// Its rgroup's nice value. None: what a new rgroup there starts at:
    /// the calling thread's nice for a top-level group of a pool made in no
    /// rgroup, else 0.
    pub nice: Option<i32>,
    /// 0: the pool's.
    pub max_workers: u32,
}

/// A snapshot of a work group.
#[derive(Clone, Debug)]
pub struct WorkGroupInfo {
    pub pool: sys::rgroup_exec_t,
    /// 0: top-level.
    pub parent: sys::rgroup_exec_group_t,
    pub name: String,
    pub nice: i32,
    pub max_workers: u32,
    /// Worker threads alive.
    pub workers: u32,
    /// Items being run.
    pub running: u32,
    /// Items waiting.
    pub queued: u32,
    /// The last errno getting it threads, or 0.
    pub error: i32,
    /// Its rgroup now; 0: it has none.
    pub rgroup: GroupId,
    /// Rgroups it has had.
    pub rgroups: u64,
    pub submitted: u64,
    pub completed: u64,
    pub canceled: u64,
    /// CPU time of its threads, in all its rgroups.
    pub cpu: Duration,
}

// An item is one allocation: this header, then the closure. The C API
// passes its address as `arg`; `finish` runs or drops it and frees it.
#[repr(C)]
struct Item<F> {
    finish: unsafe fn(*mut c_void, bool),
    f: F,
}

unsafe fn finish<F: FnOnce()>(p: *mut c_void, run: bool) {
    let item = Box::from_raw(p as *mut Item<F>);
    if run {
        // The panic hook has reported it; the worker goes on.
        let _ = panic::catch_unwind(AssertUnwindSafe(item.f));
    }
}

// The one function every item of this crate is submitted with; the pool's
// `canceled` callback knows the crate's items by it.
unsafe extern "C" fn run_item(arg: *mut c_void) {
    let finish = (*(arg as *const Item<()>)).finish;
    finish(arg, true);
}

unsafe extern "C" fn on_canceled(f: Option<sys::rgroup_item_fn>, arg: *mut c_void) {
    if f.map(|f| f as usize) == Some(run_item as sys::rgroup_item_fn as usize) {
        let finish = (*(arg as *const Item<()>)).finish;
        finish(arg, false);
    }
}

fn timeout_ms(t: Duration) -> c_int {
    t.as_millis().min(i32::MAX as u128) as c_int
}

fn wait(pool: u64, group: u64, t: Option<Duration>) -> io::Result<bool> {
    let r = unsafe { sys::rgroup_exec_wait(pool, group, t.map_or(-1, timeout_ms)) };
    if r == -libc::ETIMEDOUT {
        return Ok(false);
    }
    check(r)?;
    Ok(true)
}

/// A pool of workers (`rgroup_exec_create`). Its groups' rgroups nest under
/// the creating thread's group.
#[derive(Debug)]
pub struct Pool {
    pool: sys::rgroup_exec_t,
    nested: bool,
}

impl Pool {
    /// ENOTSUP where no backend can enforce rgroups (see [`crate::probe`]).
    pub fn new() -> io::Result<Pool> {
        Pool::with_options(&PoolOptions::default())
    }

    pub fn with_options(o: &PoolOptions) -> io::Result<Pool> {
        let nested = crate::of(0)? != 0;
        let c = sys::rgroup_exec_opts {
            sz: std::mem::size_of::<sys::rgroup_exec_opts>(),
            max_workers: o.max_workers,
            idle_ms: timeout_ms(o.idle) as u32,
            stack_size: o.stack_size,
            canceled: Some(on_canceled),
        };
        let mut pool = 0;
        check(unsafe { sys::rgroup_exec_create(&mut pool, &c) })?;
        Ok(Pool { pool, nested })
    }

    /// A top-level work group named `name` (at most 31 bytes, else
    /// ENAMETOOLONG).
    pub fn group(&self, name: &str) -> io::Result<WorkGroup> {
        self.group_with(name, &GroupOptions::default())
    }

    pub fn group_with(&self, name: &str, o: &GroupOptions) -> io::Result<WorkGroup> {
        WorkGroup::make(self.pool, 0, name, o, !self.nested)
    }

    /// Stop taking work: submissions and new groups then fail with
    /// ESHUTDOWN; what was submitted still runs.
    pub fn shutdown(&self) -> io::Result<()> {
        check(unsafe { sys::rgroup_exec_shutdown(self.pool) })?;
        Ok(())
    }

    /// Until every group is idle at once (EDEADLK from one of its workers).
    pub fn wait(&self) -> io::Result<()> {
        wait(self.pool, 0, None).map(|_| ())
    }

    /// The same, at most `t`: false if the time ran out.
    pub fn wait_timeout(&self, t: Duration) -> io::Result<bool> {
        wait(self.pool, 0, Some(t))
    }

    /// Drop the items not yet started of every group; how many.
    pub fn cancel(&self) -> io::Result<usize> {
        Ok(check(unsafe { sys::rgroup_exec_cancel(self.pool, 0) })? as usize)
    }

    /// Shut down, cancel or run the pending items, wait for the running
    /// ones and end every thread; how many items were canceled. Its
    /// groups' handles go stale (their calls: ENOENT).
    pub fn close(mut self, p: Pending) -> io::Result<usize> {
        let pool = std::mem::replace(&mut self.pool, 0);
        Ok(check(unsafe { sys::rgroup_exec_destroy(pool, p.flags()) })? as usize)
    }

    pub fn as_raw(&self) -> sys::rgroup_exec_t {
        self.pool
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // From one of its own items a pool cannot end (it would wait for
        // itself): as a thread joining itself, that is fatal.
        if self.pool != 0 && unsafe { sys::rgroup_exec_destroy(self.pool, 0) } == -libc::EDEADLK {
            eprintln!("rgroup::exec::Pool dropped by one of its own items");
            std::process::abort();
        }
    }
}

/// A work group: its items run on workers in an rgroup of its own, which
/// weighs under its parent like one thread of the group's nice value.
#[derive(Debug)]
pub struct WorkGroup {
    pool: sys::rgroup_exec_t,
    group: sys::rgroup_exec_group_t,
}

impl WorkGroup {
    fn make(
        pool: sys::rgroup_exec_t,
        parent: sys::rgroup_exec_group_t,
        name: &str,
        o: &GroupOptions,
        caller_nice: bool,
    ) -> io::Result<WorkGroup> {
        let cname = CString::new(name).map_err(|_| einval())?;
        let nice = match o.nice {
            Some(n) => n,
            None if caller_nice => {
                // The calling thread's nice: a top-level rgroup starts there.
                unsafe { *libc::__errno_location() = 0 };
                let n = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
                if n == -1 && io::Error::last_os_error().raw_os_error() != Some(0) {
                    return Err(io::Error::last_os_error());
                }
                n
            }
            None => 0,
        };
        let c = sys::rgroup_exec_group_opts {
            sz: std::mem::size_of::<sys::rgroup_exec_group_opts>(),
            parent,
            nice,
            max_workers: o.max_workers,
        };
        let mut group = 0;
        check(unsafe { sys::rgroup_exec_group_create(pool, cname.as_ptr(), &c, &mut group) })?;
        Ok(WorkGroup { pool, group })
    }

    /// Queue `f` to run once on one of the group's workers, in its rgroup:
    /// one allocation (the closure). ENOENT (the group or its pool is
    /// closed), ESHUTDOWN (the pool is shut down): `f` is dropped then,
    /// never run. A panic in `f` is reported by the panic hook and the
    /// worker goes on.
    pub fn submit<F>(&self, f: F) -> io::Result<()>
    where
        F: FnOnce() + Send + 'static,
    {
        let item = Box::into_raw(Box::new(Item {
            finish: finish::<F>,
            f,
        })) as *mut c_void;
        let r = unsafe { sys::rgroup_exec_submit(self.group, Some(run_item), item) };
        if r < 0 {
            unsafe { finish::<F>(item, false) };
            return Err(io::Error::from_raw_os_error(-r));
        }
        Ok(())
    }

    /// A subgroup: its rgroup nests under this group's; it starts at nice 0.
    pub fn group(&self, name: &str) -> io::Result<WorkGroup> {
        self.group_with(name, &GroupOptions::default())
    }

    pub fn group_with(&self, name: &str, o: &GroupOptions) -> io::Result<WorkGroup> {
        WorkGroup::make(self.pool, self.group, name, o, false)
    }

    /// Its nice value (clamped to -20..19), in its rgroup now if it has one
    /// and in every rgroup it gets later. Rule 6 as for creation (EACCES).
    pub fn set_nice(&self, nice: i32) -> io::Result<()> {
        check(unsafe { sys::rgroup_exec_group_setnice(self.group, nice) })?;
        Ok(())
    }

    pub fn info(&self) -> io::Result<WorkGroupInfo> {
        let mut c: sys::rgroup_exec_group_info = unsafe { std::mem::zeroed() };
        c.sz = std::mem::size_of::<sys::rgroup_exec_group_info>();
        check(unsafe { sys::rgroup_exec_group_info(self.group, &mut c) })?;
        Ok(WorkGroupInfo {
            pool: c.pool,
            parent: c.parent,
            name: c_name(&c.name),
            nice: c.nice,
            max_workers: c.max_workers,
            workers: c.workers,
            running: c.running,
            queued: c.queued,
            error: c.error,
            rgroup: c.rgroup,
            rgroups: c.rgroups,
            submitted: c.submitted,
            completed: c.completed,
            canceled: c.canceled,
            cpu: Duration::from_nanos(c.cpu_ns),
        })
    }

    /// Until no item of the group is queued or running (EDEADLK from its
    /// own workers).
    pub fn wait(&self) -> io::Result<()> {
        wait(self.pool, self.group, None).map(|_| ())
    }

    /// The same, at most `t`: false if the time ran out.
    pub fn wait_timeout(&self, t: Duration) -> io::Result<bool> {
        wait(self.pool, self.group, Some(t))
    }

    /// Drop the items not yet started; how many.
    pub fn cancel(&self) -> io::Result<usize> {
        Ok(check(unsafe { sys::rgroup_exec_cancel(self.pool, self.group) })? as usize)
    }

    /// Cancel or run its pending items, wait for the running ones and its
    /// threads, and destroy it; how many items were canceled. EBUSY while
    /// it has subgroups: the handle is dropped all the same, which cancels
    /// its pending items and waits for its running ones; its pool removes
    /// it.
    pub fn close(mut self, p: Pending) -> io::Result<usize> {
        let r = check(unsafe { sys::rgroup_exec_group_destroy(self.group, p.flags()) })?;
        self.group = 0;
        Ok(r as usize)
    }

    pub fn as_raw(&self) -> sys::rgroup_exec_group_t {
        self.group
    }
}

impl Drop for WorkGroup {
    // A group already gone with its pool (ENOENT) is fine. One that still
    // has subgroups (EBUSY) cannot be destroyed yet: its pending items are
    // dropped and its running ones waited for, so that none of its items
    // runs after its handle's end; its pool removes it.
    fn drop(&mut self) {
        if self.group == 0 {
            return;
        }
        if unsafe { sys::rgroup_exec_group_destroy(self.group, 0) } == -libc::EBUSY {
            unsafe {
                sys::rgroup_exec_cancel(self.pool, self.group);
                sys::rgroup_exec_wait(self.pool, self.group, -1);
            }
        }
    }
}
