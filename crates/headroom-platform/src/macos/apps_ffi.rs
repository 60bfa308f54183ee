//! Layouts, function types, symbol names and pure mappings for the `hangs` FFI (macOS),
//! compiled on every OS so their tests run on Linux CI. The calls themselves are in
//! `apps.rs` (macOS only).
//!
//! Which calls are private, and what happens when one disappears:
//!
//! | call | where | status |
//! | --- | --- | --- |
//! | `SLSMainConnectionID` / `CGSMainConnectionID` | SkyLight / CoreGraphics | private SPI |
//! | `SLSEventIsAppUnresponsive` / `CGSEventIsAppUnresponsive` | SkyLight / CoreGraphics | private SPI |
//! | `_LSCopyRunningApplicationArray`, `_LSCopyApplicationInformation` | CoreServices (LaunchServices) | private SPI |
//! | `_LSASNExtractHighAndLowParts` | CoreServices | private SPI |
//! | `GetProcessForPID` | ApplicationServices (HIServices) | public, deprecated since 10.9 |
//! | `CFArray*`, `CFDictionary*`, `CFString*`, `CFNumber*`, `CFRelease` | CoreFoundation | public, linked |
//!
//! Every private symbol is looked up at run time with `dlopen`/`dlsym`, trying each name
//! and library listed below in order. A symbol that is missing (renamed or removed in a
//! future macOS), a WindowServer connection id of 0 (no GUI login session: ssh, a
//! LaunchDaemon) or an empty application list makes the scan report *interface
//! unavailable*: the monitor clears its pending observations and does nothing. Nothing is
//! ever called through a null pointer, and the responsiveness query is always given a
//! pointer to a `ProcessSerialNumber`, never a pid (a public app that passed a pid crashed
//! inside `SLSEventIsAppUnresponsive` on macOS 26). An app whose serial number cannot be
//! found (`{0, 0}`) is not a LaunchServices app and is left out, never called "hung".
//!
//! Sources for every declaration: `../shared/reference/macos-linux-apis-and-peers.md` §1e
//! (CGSInternal `CGSEvent.h` signatures, the SkyLight aliases, the LaunchServices SPI and
//! its dictionary keys, the session id `-2`) and Apple's public headers named per item.

use std::ffi::{CStr, c_void};

use crate::core::hangs::ActivationPolicy;

/// `struct ProcessSerialNumber { UInt32 highLongOfPSN; UInt32 lowLongOfPSN; }` (public
/// header `MacTypes.h` / `Processes.h`; reference notes §1e).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ProcessSerialNumber {
    pub high: u32,
    pub low: u32,
}

impl ProcessSerialNumber {
    /// `{0, 0}` is `kNoProcess`: not a LaunchServices app.
    pub(crate) fn is_valid(&self) -> bool {
        self.high != 0 || self.low != 0
    }
}

/// `typedef int CGSConnectionID;` (CGSInternal `CGSConnection.h`).
pub(crate) type ConnectionId = i32;
/// `CGSConnectionID CGSMainConnectionID(void);`
pub(crate) type MainConnectionFn = unsafe extern "C" fn() -> ConnectionId;
/// `bool CGSEventIsAppUnresponsive(CGSConnectionID cid, const ProcessSerialNumber *psn);`
pub(crate) type IsUnresponsiveFn =
    unsafe extern "C" fn(ConnectionId, *const ProcessSerialNumber) -> bool;
/// `OSStatus GetProcessForPID(pid_t pid, ProcessSerialNumber *psn);` (HIServices
/// `Processes.h`).
pub(crate) type GetProcessForPidFn = unsafe extern "C" fn(i32, *mut ProcessSerialNumber) -> i32;
/// `CFArrayRef _LSCopyRunningApplicationArray(int sessionID);` (+1 reference).
pub(crate) type CopyRunningApplicationsFn = unsafe extern "C" fn(i32) -> *const c_void;
/// `CFDictionaryRef _LSCopyApplicationInformation(int sessionID, CFTypeRef asn,
/// CFArrayRef keys);` with `keys == NULL` for every key (+1 reference).
pub(crate) type CopyApplicationInformationFn =
    unsafe extern "C" fn(i32, *const c_void, *const c_void) -> *const c_void;
/// `_LSASNExtractHighAndLowParts(CFTypeRef asn, UInt32 *high, UInt32 *low)`. Declared
/// returning nothing: some headers say `Boolean`, and a result left in a register is
/// harmless to ignore on both Apple ABIs; the out-parameters are what is read, and they
/// start at `{0, 0}`.
pub(crate) type AsnExtractFn = unsafe extern "C" fn(*const c_void, *mut u32, *mut u32);

/// `kLSDefaultSessionID`: the caller's login session (LaunchServices' private
/// `LSInfo.h`, as PyObjC scripts and Mac Monitor use it; reference notes §1e).
pub(crate) const LS_DEFAULT_SESSION: i32 = -2;

pub(crate) const SKYLIGHT: &CStr = c"/System/Library/PrivateFrameworks/SkyLight.framework/SkyLight";
pub(crate) const CORE_GRAPHICS: &CStr =
    c"/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics";
pub(crate) const CORE_SERVICES: &CStr =
    c"/System/Library/Frameworks/CoreServices.framework/CoreServices";
pub(crate) const APPLICATION_SERVICES: &CStr =
    c"/System/Library/Frameworks/ApplicationServices.framework/ApplicationServices";

/// (library, symbol) candidates, tried in order. Newer systems export the CGS names from
/// CoreGraphics, older ones from SkyLight (reference notes §1e, hung_detect's loader).
pub(crate) const MAIN_CONNECTION: &[(&CStr, &CStr)] = &[
    (SKYLIGHT, c"SLSMainConnectionID"),
    (CORE_GRAPHICS, c"CGSMainConnectionID"),
    (SKYLIGHT, c"CGSMainConnectionID"),
    (CORE_GRAPHICS, c"_CGSDefaultConnection"),
];
pub(crate) const IS_UNRESPONSIVE: &[(&CStr, &CStr)] = &[
    (SKYLIGHT, c"SLSEventIsAppUnresponsive"),
    (CORE_GRAPHICS, c"CGSEventIsAppUnresponsive"),
    (SKYLIGHT, c"CGSEventIsAppUnresponsive"),
];
pub(crate) const COPY_RUNNING_APPLICATIONS: &[(&CStr, &CStr)] =
    &[(CORE_SERVICES, c"_LSCopyRunningApplicationArray")];
pub(crate) const COPY_APPLICATION_INFORMATION: &[(&CStr, &CStr)] =
    &[(CORE_SERVICES, c"_LSCopyApplicationInformation")];
pub(crate) const ASN_EXTRACT: &[(&CStr, &CStr)] = &[
    (CORE_SERVICES, c"_LSASNExtractHighAndLowParts"),
    (CORE_SERVICES, c"LSASNExtractHighAndLowParts"),
];
pub(crate) const GET_PROCESS_FOR_PID: &[(&CStr, &CStr)] =
    &[(APPLICATION_SERVICES, c"GetProcessForPID")];

/// Keys of the `_LSCopyApplicationInformation` dictionary (reference notes §1e).
pub(crate) const KEY_BUNDLE_ID: &str = "CFBundleIdentifier";
pub(crate) const KEY_BUNDLE_PATH: &str = "LSBundlePath";
pub(crate) const KEY_DISPLAY_NAME: &str = "LSDisplayName";
pub(crate) const KEY_BUNDLE_NAME: &str = "CFBundleName";
pub(crate) const KEY_PID: &str = "pid";
pub(crate) const KEY_APPLICATION_TYPE: &str = "ApplicationType";

/// `kCFStringEncodingUTF8` (CoreFoundation `CFString.h`).
pub(crate) const CF_STRING_ENCODING_UTF8: u32 = 0x0800_0100;
/// `kCFNumberSInt64Type` (CoreFoundation `CFNumber.h`).
pub(crate) const CF_NUMBER_SINT64_TYPE: isize = 4;

/// LaunchServices' `ApplicationType` → activation policy: `Foreground` is a regular (Dock)
/// app, `UIElement` an accessory (`LSUIElement`), `BackgroundOnly` prohibited
/// (`LSBackgroundOnly`). The mapping is inferred from the Info.plist semantics (reference
/// notes §1e); anything else is unknown, and an app of unknown policy is left out.
pub(crate) fn policy_from_application_type(t: &str) -> Option<ActivationPolicy> {
    match t {
        "Foreground" => Some(ActivationPolicy::Regular),
        "UIElement" => Some(ActivationPolicy::Accessory),
        "BackgroundOnly" => Some(ActivationPolicy::Prohibited),
        _ => None,
    }
}

/// The display name: LaunchServices' display name, else the bundle name, else the bundle's
/// file name without `.app`.
pub(crate) fn display_name(display: Option<String>, bundle: Option<String>, path: &str) -> String {
    display
        .filter(|s| !s.is_empty())
        .or(bundle.filter(|s| !s.is_empty()))
        .unwrap_or_else(|| {
            let file = path
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or(path);
            file.strip_suffix(".app").unwrap_or(file).to_string()
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};

    #[test]
    fn process_serial_number_matches_the_c_layout() {
        assert_eq!(size_of::<ProcessSerialNumber>(), 8);
        assert_eq!(align_of::<ProcessSerialNumber>(), 4);
        assert_eq!(std::mem::offset_of!(ProcessSerialNumber, low), 4);
        assert!(!ProcessSerialNumber::default().is_valid());
        assert!(
            ProcessSerialNumber {
                high: 0,
                low: 0x11011
            }
            .is_valid()
        );
    }

    #[test]
    fn b01_the_windowserver_query_takes_a_psn_pointer_never_a_pid() {
        // The type of the responsiveness query: (connection id, pointer to a PSN). A pid
        // (an i32) does not type-check as its second argument.
        fn takes(_: IsUnresponsiveFn) {}
        unsafe extern "C" fn fake(_: ConnectionId, psn: *const ProcessSerialNumber) -> bool {
            !psn.is_null()
        }
        takes(fake);
        assert_eq!(size_of::<ConnectionId>(), 4);
        assert_eq!(size_of::<IsUnresponsiveFn>(), size_of::<*const c_void>());
    }

    #[test]
    fn symbol_lists_try_skylight_then_coregraphics() {
        assert_eq!(MAIN_CONNECTION[0].1, c"SLSMainConnectionID");
        assert!(IS_UNRESPONSIVE.iter().any(|(l, _)| *l == CORE_GRAPHICS));
        for list in [
            MAIN_CONNECTION,
            IS_UNRESPONSIVE,
            COPY_RUNNING_APPLICATIONS,
            COPY_APPLICATION_INFORMATION,
            ASN_EXTRACT,
            GET_PROCESS_FOR_PID,
        ] {
            assert!(!list.is_empty());
            for (lib, _) in list {
                assert!(lib.to_bytes().starts_with(b"/System/Library/"));
            }
        }
    }

    #[test]
    fn application_types_map_to_activation_policies() {
        assert_eq!(
            policy_from_application_type("Foreground"),
            Some(ActivationPolicy::Regular)
        );
        assert_eq!(
            policy_from_application_type("UIElement"),
            Some(ActivationPolicy::Accessory)
        );
        assert_eq!(
            policy_from_application_type("BackgroundOnly"),
            Some(ActivationPolicy::Prohibited)
        );
        assert_eq!(policy_from_application_type("foreground"), None);
    }

    #[test]
    fn display_name_falls_back_to_the_bundle_file_name() {
        assert_eq!(
            display_name(Some("Editor".into()), None, "/x/E.app"),
            "Editor"
        );
        assert_eq!(
            display_name(Some(String::new()), Some("Ed".into()), "/x/E.app"),
            "Ed"
        );
        assert_eq!(
            display_name(None, None, "/Applications/Editor.app/"),
            "Editor"
        );
    }
}
