// SPDX-License-Identifier: MIT
//! Threads started with `rgroup_thread_create()`: [`Builder`] alongside
//! [`std::thread::Builder`], with [`Builder::new_group`] to start the
//! thread in a new rgroup (rule 1: the only way into one) and
//! [`Builder::nice`] for that group's weight; [`scope`] for scoped threads.
//!
//! As with `std::thread`, dropping a [`JoinHandle`] detaches the thread,
//! [`JoinHandle::join`] returns the function's value or its panic, and a
//! scope joins every thread it started before it returns.

use std::any::Any;
use std::ffi::CString;
use std::io;
use std::marker::PhantomData;
use std::os::raw::c_void;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use crate::{einval, sys, Group};

/// What `join` gives: the function's value, or the payload of its panic.
pub type Result<T> = std::result::Result<T, Box<dyn Any + Send + 'static>>;

type Packet<T> = Arc<Mutex<Option<Result<T>>>>;
type Main = Box<dyn FnOnce() + Send + 'static>;

/// How a thread starts: in a new rgroup or its creator's group, at which
/// nice value, with which name and stack size.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    new_group: bool,
    nice: Option<i32>,
    name: Option<String>,
    stack_size: Option<usize>,
}

// What the new thread gets: it reports its tid, or why it did not start,
// before it runs `main`.
struct Start {
    main: Main,
    name: Option<CString>,
    nice: Option<i32>,
    started: mpsc::SyncSender<std::result::Result<libc::pid_t, i32>>,
}

extern "C" fn start_routine(arg: *mut c_void) -> *mut c_void {
    // rgroup_thread_create gives `arg` to exactly one thread.
    let s = unsafe { Box::from_raw(arg as *mut Start) };
    if let Some(name) = &s.name {
        let e = unsafe { libc::pthread_setname_np(libc::pthread_self(), name.as_ptr()) };
        if e != 0 {
            let _ = s.started.send(Err(e));
            return std::ptr::null_mut();
        }
    }
    if let Some(nice) = s.nice {
        if unsafe { sys::rgroup_setpriority(sys::PRIO_RGRP, 0, nice) } < 0 {
            let e = io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            let _ = s.started.send(Err(e));
            return std::ptr::null_mut();
        }
    }
    let _ = s.started.send(Ok(crate::gettid()));
    (s.main)(); // catches the function's panic itself
    std::ptr::null_mut()
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Start the thread in a new rgroup nested under the creating thread's
    /// group (RGROUP_NEW). ENOTSUP where no backend can enforce rgroups.
    pub fn new_group(mut self, yes: bool) -> Builder {
        self.new_group = yes;
        self
    }

    /// The new rgroup's PRIO_RGRP nice value, set from inside before the
    /// function runs; only with `new_group` (else EINVAL). Rule 6: below
    /// the creator's nice, a top-level group needs RLIMIT_NICE room or
    /// CAP_SYS_NICE (else EACCES, and no thread is left).
    pub fn nice(mut self, nice: i32) -> Builder {
        self.nice = Some(nice);
        self
    }

    /// The thread's name: at most 15 bytes (else ERANGE), no NUL (EINVAL).
    pub fn name(mut self, name: String) -> Builder {
        self.name = Some(name);
        self
    }

    /// Its stack size in bytes (else pthread's default).
    pub fn stack_size(mut self, size: usize) -> Builder {
        self.stack_size = Some(size);
        self
    }

    /// Start `f` on a new thread. When this returns Ok, the thread is in its
    /// group with its name and nice value set; on error no thread runs `f`
    /// and nothing is left behind.
    pub fn spawn<F, T>(self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let packet: Packet<T> = Arc::new(Mutex::new(None));
        let theirs = packet.clone();
        let main: Main = Box::new(move || {
            let r = panic::catch_unwind(AssertUnwindSafe(f));
            *theirs.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        });
        let (native, tid) = self.start(main)?;
        Ok(JoinHandle {
            native,
            tid,
            packet,
            joined: false,
        })
    }

    /// Start `f` on a new thread of `scope`, which may borrow from outside
    /// the scope: the scope joins it before it returns.
    pub fn spawn_scoped<'scope, 'env, F, T>(
        self,
        scope: &'scope Scope<'scope, 'env>,
        f: F,
    ) -> io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let packet: Packet<T> = Arc::new(Mutex::new(None));
        let theirs = packet.clone();
        let panics = scope.unhandled_panics.clone();
        let main: Box<dyn FnOnce() + Send + 'scope> = Box::new(move || {
            let r = panic::catch_unwind(AssertUnwindSafe(f));
            if r.is_err() {
                panics.fetch_add(1, Ordering::SeqCst);
            }
            *theirs.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        });
        // The scope joins the thread before 'scope ends, so what main
        // borrows outlives it.
        let main: Main =
            unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'scope>, Main>(main) };
        let (native, tid) = self.start(main)?;
        scope
            .threads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(native);
        Ok(ScopedJoinHandle {
            native,
            tid,
            packet,
            threads: &scope.threads,
            panics: scope.unhandled_panics.clone(),
        })
    }

    fn start(self, main: Main) -> io::Result<(libc::pthread_t, libc::pid_t)> {
        if self.nice.is_some() && !self.new_group {
            return Err(einval());
        }
        let name = match self.name {
            Some(n) if n.len() > 15 => return Err(io::Error::from_raw_os_error(libc::ERANGE)),
            Some(n) => Some(CString::new(n).map_err(|_| einval())?),
            None => None,
        };
        let (tx, rx) = mpsc::sync_channel(1);
        let start = Box::into_raw(Box::new(Start {
            main,
            name,
            nice: self.nice,
            started: tx,
        }));

        let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
        let mut attr_p: *const libc::pthread_attr_t = std::ptr::null();
        let mut err = 0;
        if let Some(size) = self.stack_size {
            err = unsafe { libc::pthread_attr_init(&mut attr) };
            if err == 0 {
                err = unsafe { libc::pthread_attr_setstacksize(&mut attr, size) };
                if err != 0 {
                    unsafe { libc::pthread_attr_destroy(&mut attr) };
                }
                attr_p = &attr;
            }
        }
        let mut native: libc::pthread_t = 0;
        if err == 0 {
            let flags = if self.new_group { sys::RGROUP_NEW } else { 0 };
            err = unsafe {
                sys::rgroup_thread_create(
                    &mut native,
                    attr_p,
                    flags,
                    start_routine,
                    start as *mut c_void,
                )
            };
            if !attr_p.is_null() {
                unsafe { libc::pthread_attr_destroy(&mut attr) };
            }
        }
        if err != 0 {
            // No thread has `start`: it is still ours to free.
            drop(unsafe { Box::from_raw(start) });
            return Err(io::Error::from_raw_os_error(err));
        }
        match rx.recv() {
            Ok(Ok(tid)) => Ok((native, tid)),
            Ok(Err(e)) => {
                // It ended without running main.
                unsafe { libc::pthread_join(native, std::ptr::null_mut()) };
                Err(io::Error::from_raw_os_error(e))
            }
            Err(_) => {
                unsafe { libc::pthread_join(native, std::ptr::null_mut()) };
                Err(io::Error::from_raw_os_error(libc::EIO))
            }
        }
    }
}

/// An owned permission to join a thread; dropping it detaches the thread.
pub struct JoinHandle<T> {
    native: libc::pthread_t,
    tid: libc::pid_t,
    packet: Packet<T>,
    joined: bool,
}

impl<T> JoinHandle<T> {
    /// Wait for the thread; its function's value, or its panic's payload.
    pub fn join(mut self) -> Result<T> {
        self.joined = true;
        let e = unsafe { libc::pthread_join(self.native, std::ptr::null_mut()) };
        assert_eq!(e, 0, "pthread_join of a thread this handle owns");
        take(&self.packet)
    }

    /// Its kernel thread id (gettid(2)).
    pub fn tid(&self) -> libc::pid_t {
        self.tid
    }

    pub fn as_pthread_t(&self) -> libc::pthread_t {
        self.native
    }

    /// Its group, while it runs (ESRCH once it has ended).
    pub fn group(&self) -> io::Result<Group> {
        Group::of_thread(self.tid)
    }

    /// Has its function returned (or panicked)?
    pub fn is_finished(&self) -> bool {
        self.packet.lock().map(|p| p.is_some()).unwrap_or(true)
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if !self.joined {
            unsafe { libc::pthread_detach(self.native) };
        }
    }
}

fn take<T>(packet: &Packet<T>) -> Result<T> {
    packet
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .expect("a joined thread has stored its result")
}

/// Start `f` on a new thread in the caller's group, like
/// [`std::thread::spawn`]; panics if the thread cannot be made.
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    Builder::new().spawn(f).expect("failed to spawn thread")
}

/// Threads that may borrow from the caller: every thread started on the
/// scope is joined before [`scope`] returns.
pub struct Scope<'scope, 'env: 'scope> {
    threads: Mutex<Vec<libc::pthread_t>>,
    unhandled_panics: Arc<AtomicUsize>,
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

/// Run `f` with a [`Scope`] to start threads on; join them all, then
/// return what `f` returned. As [`std::thread::scope`]: if `f` panicked,
/// or one of the threads panicked and was not joined by hand, this panics
/// (after the joins).
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    let scope = Scope {
        threads: Mutex::new(Vec::new()),
        unhandled_panics: Arc::new(AtomicUsize::new(0)),
        scope: PhantomData,
        env: PhantomData,
    };
    let r = panic::catch_unwind(AssertUnwindSafe(|| f(&scope)));
    // A thread joined here may have started more on the scope: until none.
    loop {
        let threads = std::mem::take(&mut *scope.threads.lock().unwrap_or_else(|e| e.into_inner()));
        if threads.is_empty() {
            break;
        }
        for t in threads {
            unsafe { libc::pthread_join(t, std::ptr::null_mut()) };
        }
    }
    match r {
        Err(e) => panic::resume_unwind(e),
        Ok(_) if scope.unhandled_panics.load(Ordering::SeqCst) > 0 => {
            panic!("a scoped thread panicked")
        }
        Ok(v) => v,
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Start `f` on a new thread in the caller's group; panics if the
    /// thread cannot be made ([`Builder::spawn_scoped`] returns the error).
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        Builder::new()
            .spawn_scoped(self, f)
            .expect("failed to spawn thread")
    }
}

/// A permission to join a scoped thread before the scope ends.
pub struct ScopedJoinHandle<'scope, T> {
    native: libc::pthread_t,
    tid: libc::pid_t,
    packet: Packet<T>,
    threads: &'scope Mutex<Vec<libc::pthread_t>>,
    panics: Arc<AtomicUsize>,
}

impl<'scope, T> ScopedJoinHandle<'scope, T> {
    /// Wait for the thread; its function's value, or its panic's payload
    /// (a panic joined here does not make the scope panic).
    pub fn join(self) -> Result<T> {
        self.threads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&t| t != self.native); // glibc: pthread_t is a number
        let e = unsafe { libc::pthread_join(self.native, std::ptr::null_mut()) };
        assert_eq!(e, 0, "pthread_join of a thread this handle owns");
        let r = take(&self.packet);
        if r.is_err() {
            self.panics.fetch_sub(1, Ordering::SeqCst);
        }
        r
    }

    pub fn tid(&self) -> libc::pid_t {
        self.tid
    }

    /// Its group, while it runs (ESRCH once it has ended).
    pub fn group(&self) -> io::Result<Group> {
        Group::of_thread(self.tid)
    }

    pub fn is_finished(&self) -> bool {
        self.packet.lock().map(|p| p.is_some()).unwrap_or(true)
    }
}
