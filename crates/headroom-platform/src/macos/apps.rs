//! The running GUI apps of this login session and whether the WindowServer considers each
//! unresponsive (what Force Quit shows as "not responding"). macOS only; thin: it returns
//! data, every decision is in `core::hangs`.
//!
//! Private interfaces, resolved at run time (see `apps_ffi.rs` for the full table and the
//! failure behaviour): the app list from LaunchServices' `_LSCopyRunningApplicationArray` +
//! `_LSCopyApplicationInformation`; each app's ProcessSerialNumber from its LaunchServices
//! ASN (`_LSASNExtractHighAndLowParts`), else from `GetProcessForPID`; responsiveness from
//! `SLSEventIsAppUnresponsive(connection, &psn)` (or the CGS alias). When macOS removes or
//! renames one of them, `hangs` reports *interface unavailable* and does nothing, until a
//! release adds the new name.
//!
//! It runs on the main thread of a CLI process (the only thread `hangs` uses), which is how
//! the public users of these calls use them. LaunchServices and SkyLight are Objective-C
//! underneath and a command-line tool's main thread has no autorelease pool, so each scan
//! runs inside one of its own (`objc_autoreleasePoolPush`/`Pop`, libobjc's public C entry
//! points): without it, objects autoreleased inside the calls would pile up round after
//! round in `hangs --watch` and `watch`. The symbols are resolved once per process.

use std::ffi::{CStr, c_void};
use std::sync::OnceLock;

use crate::core::hangs::AppObservation;
use crate::macos::apps_ffi::{
    self as ffi, AsnExtractFn, CopyApplicationInformationFn, CopyRunningApplicationsFn,
    GetProcessForPidFn, IsUnresponsiveFn, MainConnectionFn, ProcessSerialNumber,
};
use crate::macos::cf::{self, Owned};
use crate::{AppScan, AppSource};

/// The resolved entry points.
#[derive(Debug, Clone, Copy)]
struct Api {
    main_connection: MainConnectionFn,
    is_unresponsive: IsUnresponsiveFn,
    copy_running: CopyRunningApplicationsFn,
    copy_information: CopyApplicationInformationFn,
    asn_extract: Option<AsnExtractFn>,
    psn_for_pid: Option<GetProcessForPidFn>,
}

#[derive(Debug)]
pub(crate) struct MacApps {
    api: &'static Result<Api, String>,
}

#[link(name = "objc")]
unsafe extern "C" {
    /// `void *objc_autoreleasePoolPush(void)` (objc4 `NSObjCRuntime`/`objc-internal.h`,
    /// exported by /usr/lib/libobjc.A.dylib).
    fn objc_autoreleasePoolPush() -> *mut c_void;
    /// `void objc_autoreleasePoolPop(void *context)`.
    fn objc_autoreleasePoolPop(context: *mut c_void);
}

/// An autorelease pool for the length of one scan, popped on drop.
struct AutoreleasePool(*mut c_void);

impl AutoreleasePool {
    fn push() -> Self {
        // SAFETY: no preconditions; the returned token is popped exactly once, on this
        // thread, by Drop.
        Self(unsafe { objc_autoreleasePoolPush() })
    }
}

impl Drop for AutoreleasePool {
    fn drop(&mut self) {
        // SAFETY: the token came from objc_autoreleasePoolPush on this thread and pools are
        // popped in reverse order of pushing (the guard lives on the stack of `scan`).
        unsafe { objc_autoreleasePoolPop(self.0) }
    }
}

impl Default for MacApps {
    fn default() -> Self {
        Self::new()
    }
}

impl MacApps {
    pub(crate) fn new() -> Self {
        static API: OnceLock<Result<Api, String>> = OnceLock::new();
        Self {
            api: API.get_or_init(resolve_api),
        }
    }
}

/// The first (library, symbol) of `candidates` that resolves. Libraries stay loaded for the
/// life of the process (never `dlclose`d), so the pointers stay valid.
fn lookup(candidates: &[(&CStr, &CStr)]) -> Option<*mut c_void> {
    candidates.iter().find_map(|(lib, sym)| {
        // SAFETY: both are NUL-terminated paths/names; dlopen of a system framework that is
        // already loaded just returns its handle, and a missing one returns NULL.
        let handle = unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return None;
        }
        // SAFETY: handle is a live dlopen handle; sym is NUL-terminated.
        let p = unsafe { libc::dlsym(handle, sym.as_ptr()) };
        (!p.is_null()).then_some(p)
    })
}

fn missing(candidates: &[(&CStr, &CStr)]) -> String {
    let names: Vec<String> = candidates
        .iter()
        .map(|(_, s)| s.to_string_lossy().into_owned())
        .collect();
    format!("symbol {} not found", names.join(" / "))
}

fn resolve_api() -> Result<Api, String> {
    let conn = lookup(ffi::MAIN_CONNECTION).ok_or_else(|| missing(ffi::MAIN_CONNECTION))?;
    let unresp = lookup(ffi::IS_UNRESPONSIVE).ok_or_else(|| missing(ffi::IS_UNRESPONSIVE))?;
    let running = lookup(ffi::COPY_RUNNING_APPLICATIONS)
        .ok_or_else(|| missing(ffi::COPY_RUNNING_APPLICATIONS))?;
    let info = lookup(ffi::COPY_APPLICATION_INFORMATION)
        .ok_or_else(|| missing(ffi::COPY_APPLICATION_INFORMATION))?;
    let asn = lookup(ffi::ASN_EXTRACT);
    let psn = lookup(ffi::GET_PROCESS_FOR_PID);
    if asn.is_none() && psn.is_none() {
        return Err(format!(
            "{} and {}",
            missing(ffi::ASN_EXTRACT),
            missing(ffi::GET_PROCESS_FOR_PID)
        ));
    }
    // SAFETY: (all transmutes below) each pointer is non-null and was resolved by name
    // from the system framework that exports that function; the function types are the C
    // signatures documented in apps_ffi.rs (reference notes §1e). Data and function
    // pointers have the same size and representation on both Apple targets.
    unsafe {
        Ok(Api {
            main_connection: std::mem::transmute::<*mut c_void, MainConnectionFn>(conn),
            is_unresponsive: std::mem::transmute::<*mut c_void, IsUnresponsiveFn>(unresp),
            copy_running: std::mem::transmute::<*mut c_void, CopyRunningApplicationsFn>(running),
            copy_information: std::mem::transmute::<*mut c_void, CopyApplicationInformationFn>(
                info,
            ),
            asn_extract: asn.map(|p| std::mem::transmute::<*mut c_void, AsnExtractFn>(p)),
            psn_for_pid: psn.map(|p| std::mem::transmute::<*mut c_void, GetProcessForPidFn>(p)),
        })
    }
}

fn unavailable(reason: impl Into<String>) -> AppScan {
    AppScan {
        available: false,
        unavailable_reason: Some(reason.into()),
        apps: Vec::new(),
    }
}

/// The dictionary keys, created once per scan.
struct Keys {
    bundle_id: Owned,
    bundle_path: Owned,
    display_name: Owned,
    bundle_name: Owned,
    pid: Owned,
    app_type: Owned,
}

impl Keys {
    fn new() -> Option<Self> {
        Some(Self {
            bundle_id: cf::string(ffi::KEY_BUNDLE_ID)?,
            bundle_path: cf::string(ffi::KEY_BUNDLE_PATH)?,
            display_name: cf::string(ffi::KEY_DISPLAY_NAME)?,
            bundle_name: cf::string(ffi::KEY_BUNDLE_NAME)?,
            pid: cf::string(ffi::KEY_PID)?,
            app_type: cf::string(ffi::KEY_APPLICATION_TYPE)?,
        })
    }
}

impl AppSource for MacApps {
    fn scan(&self) -> AppScan {
        let api = match self.api {
            Ok(a) => *a,
            Err(reason) => return unavailable(reason.clone()),
        };
        // SAFETY: pthread_main_np has no preconditions.
        if unsafe { libc::pthread_main_np() } == 0 {
            return unavailable("the WindowServer is only asked from the main thread");
        }
        // Declared before every CF object of the scan, so it is popped after they are
        // released.
        let _pool = AutoreleasePool::push();
        // SAFETY: resolved CGSMainConnectionID/SLSMainConnectionID, no arguments.
        let cid = unsafe { (api.main_connection)() };
        if cid == 0 {
            return unavailable(
                "no WindowServer connection (not in a GUI login session, e.g. over ssh)",
            );
        }
        let Some(keys) = Keys::new() else {
            return unavailable("cannot create CoreFoundation strings");
        };
        // SAFETY: resolved _LSCopyRunningApplicationArray; returns a +1 CFArray or NULL.
        let list = unsafe { Owned::from_create((api.copy_running)(ffi::LS_DEFAULT_SESSION)) };
        let Some(list) = list else {
            return unavailable("LaunchServices returned no application list");
        };
        let apps = list
            .array_items()
            .into_iter()
            .filter_map(|asn| app(&api, cid, &keys, asn.as_ptr()))
            .collect();
        AppScan {
            available: true,
            unavailable_reason: None,
            apps,
        }
    }
}

/// One app, or `None` when it lacks a pid, a bundle path, a known activation policy or a
/// process serial number (then it cannot be judged, and is not guessed at).
fn app(api: &Api, cid: i32, keys: &Keys, asn: cf::CfTypeRef) -> Option<AppObservation> {
    // SAFETY: resolved _LSCopyApplicationInformation; asn is a live ASN borrowed from the
    // running-application array; NULL keys = every key; returns a +1 CFDictionary or NULL.
    let info = unsafe {
        Owned::from_create((api.copy_information)(
            ffi::LS_DEFAULT_SESSION,
            asn,
            std::ptr::null(),
        ))
    }?;
    let get_str = |k: &Owned| info.dict_get(k).and_then(|v| v.string());
    let pid = i32::try_from(info.dict_get(&keys.pid)?.i64()?).ok()?;
    let bundle_path = get_str(&keys.bundle_path)?;
    let policy = ffi::policy_from_application_type(&get_str(&keys.app_type)?)?;
    let psn = psn(api, asn, pid)?;
    // SAFETY: resolved SLSEventIsAppUnresponsive/CGSEventIsAppUnresponsive, given the
    // connection id and a pointer to a valid ProcessSerialNumber (never a pid).
    let unresponsive = unsafe { (api.is_unresponsive)(cid, &psn) };
    Some(AppObservation {
        pid,
        start_time: None,
        uid: None,
        bundle_id: get_str(&keys.bundle_id),
        name: ffi::display_name(
            get_str(&keys.display_name),
            get_str(&keys.bundle_name),
            &bundle_path,
        ),
        bundle_path,
        policy,
        responsive: !unresponsive,
        // Read from the process table with the identity (`hangs::with_identities`).
        state: None,
    })
}

fn psn(api: &Api, asn: cf::CfTypeRef, pid: i32) -> Option<ProcessSerialNumber> {
    let mut psn = ProcessSerialNumber::default();
    if let Some(extract) = api.asn_extract {
        // SAFETY: resolved _LSASNExtractHighAndLowParts; asn is live; both out-pointers
        // point to writable u32s.
        unsafe { extract(asn, &mut psn.high, &mut psn.low) };
    }
    if !psn.is_valid() {
        if let Some(for_pid) = api.psn_for_pid {
            psn = ProcessSerialNumber::default();
            // SAFETY: resolved GetProcessForPID; psn is a writable ProcessSerialNumber.
            let status = unsafe { for_pid(pid, &mut psn) };
            if status != 0 {
                return None;
            }
        }
    }
    psn.is_valid().then_some(psn)
}
