// SPDX-License-Identifier: MIT
//! Raw declarations of librgroup's C API, as `include/rgroup.h` declares
//! it, written by hand (no bindgen at build time). Every function keeps
//! the C contract: most return 0 (or a count) or a negative errno;
//! `rgroup_thread_create` returns an error number; the priority calls
//! return -1 and set errno. The safe layer is the `rgroup` crate.
//!
//! The structs that the library lets grow carry their size in `sz`: set it
//! to `size_of` the struct before a call (the library writes back the size
//! of the fields it knows).
#![allow(non_camel_case_types)]

use libc::{
    c_char, c_int, c_uint, c_void, cpu_set_t, id_t, pid_t, pthread_attr_t, pthread_t, size_t,
};

pub const RGROUP_VERSION_MAJOR: c_int = 0;
pub const RGROUP_VERSION_MINOR: c_int = 2;

/// rgroup_thread_create(): start the thread in a new rgroup nested under
/// the creating thread's group.
pub const RGROUP_NEW: c_uint = 0x1;
/// `which` for rgroup_setpriority()/rgroup_getpriority(): the rgroup of
/// thread `who` (0: the caller).
pub const PRIO_RGRP: c_int = 3;

/// An rgroup's identity in the process; 0 is "no rgroup" (the sgroup).
pub type rgroup_id_t = u64;
/// An executor pool; 0 is never one.
pub type rgroup_exec_t = u64;
/// An executor work group; 0 is never one.
pub type rgroup_exec_group_t = u64;

pub const RGROUP_EXEC_NAME_MAX: usize = 32;
pub const RGROUP_EXEC_DRAIN: c_uint = 0x1;

pub type rgroup_start_fn = extern "C" fn(*mut c_void) -> *mut c_void;
pub type rgroup_item_fn = unsafe extern "C" fn(*mut c_void);
pub type rgroup_canceled_fn = unsafe extern "C" fn(Option<rgroup_item_fn>, *mut c_void);

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rgroup_info {
    pub sz: size_t,
    pub id: rgroup_id_t,
    pub parent: rgroup_id_t,
    pub nice: c_int,
    pub weight: c_uint,
    pub depth: c_uint,
    pub nthreads: c_uint,
    pub nchildren: c_uint,
    pub usage_ns: u64,
    pub name: [c_char; 64],
    pub throttled_ns: u64,
    pub unthrottled: u64,
    pub flags: c_uint,
}

/// `rgroup_info::flags`: the governor enforces nothing in this process (the
/// program took its signal).
pub const RGROUP_INFO_UNENFORCED: c_uint = 0x1;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rgroup_exec_opts {
    pub sz: size_t,
    pub max_workers: c_uint,
    pub idle_ms: c_uint,
    pub stack_size: size_t,
    pub canceled: Option<rgroup_canceled_fn>,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rgroup_exec_group_opts {
    pub sz: size_t,
    pub parent: rgroup_exec_group_t,
    pub nice: c_int,
    pub max_workers: c_uint,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rgroup_exec_group_info {
    pub sz: size_t,
    pub pool: rgroup_exec_t,
    pub parent: rgroup_exec_group_t,
    pub name: [c_char; RGROUP_EXEC_NAME_MAX],
    pub nice: c_int,
    pub max_workers: c_uint,
    pub workers: c_uint,
    pub running: c_uint,
    pub queued: c_uint,
    pub error: c_int,
    pub rgroup: rgroup_id_t,
    pub rgroups: u64,
    pub submitted: u64,
    pub completed: u64,
    pub canceled: u64,
    pub cpu_ns: u64,
}

extern "C" {
    pub fn rgroup_thread_create(
        thread: *mut pthread_t,
        attr: *const pthread_attr_t,
        flags: c_uint,
        start: rgroup_start_fn,
        arg: *mut c_void,
    ) -> c_int;
    pub fn rgroup_setpriority(which: c_int, who: id_t, prio: c_int) -> c_int;
    pub fn rgroup_getpriority(which: c_int, who: id_t) -> c_int;
    pub fn rgroup_backend() -> *const c_char;
    pub fn rgroup_backend_name(i: c_uint) -> *const c_char;

    pub fn rgroup_of(tid: pid_t, id: *mut rgroup_id_t) -> c_int;
    pub fn rgroup_info(id: rgroup_id_t, info: *mut rgroup_info) -> c_int;
    pub fn rgroup_list(ids: *mut rgroup_id_t, max: size_t) -> c_int;
    pub fn rgroup_nice_to_weight(nice: c_int) -> c_uint;
    pub fn rgroup_probe(name: *const c_char, why: *mut c_char, len: size_t) -> c_int;
    pub fn rgroup_gc(dir: *const c_char) -> c_int;

    pub fn rgroup_exec_create(pool: *mut rgroup_exec_t, opts: *const rgroup_exec_opts) -> c_int;
    pub fn rgroup_exec_shutdown(pool: rgroup_exec_t) -> c_int;
    pub fn rgroup_exec_destroy(pool: rgroup_exec_t, flags: c_uint) -> c_int;
    pub fn rgroup_exec_group_create(
        pool: rgroup_exec_t,
        name: *const c_char,
        opts: *const rgroup_exec_group_opts,
        group: *mut rgroup_exec_group_t,
    ) -> c_int;
    pub fn rgroup_exec_group_destroy(group: rgroup_exec_group_t, flags: c_uint) -> c_int;
    pub fn rgroup_exec_group_setnice(group: rgroup_exec_group_t, nice: c_int) -> c_int;
    pub fn rgroup_exec_group_info(
        group: rgroup_exec_group_t,
        info: *mut rgroup_exec_group_info,
    ) -> c_int;
    pub fn rgroup_exec_submit(
        group: rgroup_exec_group_t,
        f: Option<rgroup_item_fn>,
        arg: *mut c_void,
    ) -> c_int;
    pub fn rgroup_exec_wait(
        pool: rgroup_exec_t,
        group: rgroup_exec_group_t,
        timeout_ms: c_int,
    ) -> c_int;
    pub fn rgroup_exec_cancel(pool: rgroup_exec_t, group: rgroup_exec_group_t) -> c_int;

    pub fn rgroup_set_cpus(who: pid_t, setsize: size_t, cpus: *const cpu_set_t) -> c_int;
    pub fn rgroup_get_cpus(who: pid_t, setsize: size_t, cpus: *mut cpu_set_t) -> c_int;
    pub fn rgroup_set_cap(who: pid_t, quota_us: u64, period_us: u64) -> c_int;
    pub fn rgroup_get_cap(who: pid_t, quota_us: *mut u64, period_us: *mut u64) -> c_int;
}
