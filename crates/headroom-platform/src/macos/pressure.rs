//! The macOS memory-pressure signal: a dispatch source of type
//! `DISPATCH_SOURCE_TYPE_MEMORYPRESSURE` on a global queue, with a plain C handler
//! (`dispatch_source_set_event_handler_f`, no blocks) that writes one byte into a pipe, so
//! that `platform::pressure` can wait on it with `poll` like on a Linux PSI trigger. The
//! level itself is `kern.memorystatus_vm_pressure_level` (1 normal, 2 warn, 4 critical).
//! libdispatch is part of libSystem, linked into every binary; the declarations are ours.

use std::ffi::c_void;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

#[repr(C)]
struct DispatchSourceType {
    _opaque: [u8; 0],
}

/// `DISPATCH_MEMORYPRESSURE_WARN` and `_CRITICAL`, from libdispatch's `<dispatch/source.h>`:
/// outside the xnu headers `.ci/macos-layout.c` is checked against (its header says so).
const DISPATCH_MEMORYPRESSURE_WARN: usize = 0x02;
const DISPATCH_MEMORYPRESSURE_CRITICAL: usize = 0x04;

// SAFETY: the declarations match <dispatch/source.h> and <dispatch/object.h>: objects are
// opaque pointers, the source type is the address of an exported static.
unsafe extern "C" {
    static _dispatch_source_type_memorypressure: DispatchSourceType;
    fn dispatch_get_global_queue(identifier: isize, flags: usize) -> *mut c_void;
    fn dispatch_source_create(
        kind: *const DispatchSourceType,
        handle: usize,
        mask: usize,
        queue: *mut c_void,
    ) -> *mut c_void;
    fn dispatch_set_context(object: *mut c_void, context: *mut c_void);
    fn dispatch_source_set_event_handler_f(
        source: *mut c_void,
        handler: extern "C" fn(*mut c_void),
    );
    fn dispatch_resume(object: *mut c_void);
    fn dispatch_source_cancel(source: *mut c_void);
    fn dispatch_release(object: *mut c_void);
}

/// Runs on a dispatch worker thread: only write(2) on the descriptor in the context.
extern "C" fn on_pressure(context: *mut c_void) {
    let fd = context as usize as libc::c_int;
    // SAFETY: one valid byte to the pipe's non-blocking write end (a full pipe drops it:
    // the reader is already due to wake).
    unsafe { libc::write(fd, b"p".as_ptr().cast(), 1) };
}

/// The armed source; cancelled and released on drop.
#[derive(Debug)]
pub(crate) struct PressureSource {
    source: *mut c_void,
    /// Kept open past cancellation (never closed): a handler already in flight must not
    /// write into a descriptor number the process has reused.
    write: Option<OwnedFd>,
}

impl PressureSource {
    /// Arm the source; returns it and the read end to poll.
    pub(crate) fn new() -> io::Result<(Self, OwnedFd)> {
        let (r, w) = crate::fd::nonblocking_pipe()?;
        // SAFETY: plain calls into libdispatch with valid arguments; the context is the
        // write end's number, which stays open for the life of the process (see `write`).
        let source = unsafe {
            let queue = dispatch_get_global_queue(0, 0);
            let s = dispatch_source_create(
                &raw const _dispatch_source_type_memorypressure,
                0,
                DISPATCH_MEMORYPRESSURE_WARN | DISPATCH_MEMORYPRESSURE_CRITICAL,
                queue,
            );
            if s.is_null() {
                return Err(io::Error::other("dispatch_source_create returned NULL"));
            }
            dispatch_set_context(s, w.as_raw_fd() as usize as *mut c_void);
            dispatch_source_set_event_handler_f(s, on_pressure);
            dispatch_resume(s);
            s
        };
        Ok((
            Self {
                source,
                write: Some(w),
            },
            r,
        ))
    }
}

impl Drop for PressureSource {
    fn drop(&mut self) {
        // SAFETY: the source was created and resumed by `new` and is released once here.
        unsafe {
            dispatch_source_cancel(self.source);
            dispatch_release(self.source);
        }
        std::mem::forget(self.write.take());
    }
}

/// `kern.memorystatus_vm_pressure_level`: 1 normal, 2 warn, 4 critical.
pub(crate) fn level() -> io::Result<i64> {
    super::kernel_reads::sysctl_int(c"kern.memorystatus_vm_pressure_level")
}
