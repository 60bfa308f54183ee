//! The clocks headroom reads: the wall clock, the local offset from UTC, the awake and
//! boot clocks (which a wall-clock step moves neither way), what identifies this boot, and
//! this process's CPU time. Always the live OS, never a replay root.

// `unsafe` here: localtime_r, and macOS CLOCK_UPTIME_RAW and sysctlbyname: no safe wrapper.
#![allow(unsafe_code)]

use super::PlatformError;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The local clock's offset from UTC at instant `t` (Unix seconds), in seconds east, as
/// the C library's time zone rules (`TZ`, `/etc/localtime`) give it; None where it cannot say.
pub fn utc_offset_secs(t: i64) -> Option<i32> {
    #[cfg(unix)]
    {
        // time_t is 64 bits on the targets built today, 32 on others.
        #[allow(clippy::useless_conversion)]
        let t: libc::time_t = t.try_into().ok()?;
        // No safe crate reads the C library's zone rules (`TZ`, `/etc/localtime`) as
        // `date` and the other tools of the system do.
        // SAFETY: tm is plain old data, all-zero a valid value; both pointers are valid for
        // the call, and localtime_r is the reentrant form (no shared static result).
        let (tm, ok) = unsafe {
            let mut tm: libc::tm = std::mem::zeroed();
            let ok = !libc::localtime_r(&t, &mut tm).is_null();
            (tm, ok)
        };
        if !ok {
            return None;
        }
        i32::try_from(tm.tm_gmtoff).ok()
    }
    #[cfg(not(unix))]
    {
        let _ = t;
        None
    }
}

/// Milliseconds from a rustix `Timespec`.
#[cfg(unix)]
fn ms(ts: rustix::time::Timespec) -> i64 {
    // The fields are i64 on Linux, time_t and c_long (both i64 on the 64-bit targets
    // headroom supports) on macOS.
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    let ms = ts.tv_sec as i64 * 1000 + ts.tv_nsec as i64 / 1_000_000;
    ms
}

/// Milliseconds of a clock that stops while the machine sleeps, comparable across processes
/// within one boot (Linux CLOCK_MONOTONIC, macOS CLOCK_UPTIME_RAW): time asleep is not idle
/// time. It starts again near 0 after a reboot. A failed read is an error, never 0: a 0
/// would make every stored reading look like it came from the future, or a fresh one look
/// hours old.
pub fn awake_ms() -> Result<i64, PlatformError> {
    #[cfg(target_os = "macos")]
    {
        // rustix has no CLOCK_UPTIME_RAW (CLOCK_MONOTONIC counts time asleep on macOS).
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid, writable timespec.
        if unsafe { libc::clock_gettime(libc::CLOCK_UPTIME_RAW, &mut ts) } != 0 {
            return Err(PlatformError::io(
                "cannot read the awake clock",
                std::io::Error::last_os_error(),
            ));
        }
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Ok(ts.tv_sec as i64 * 1000 + ts.tv_nsec as i64 / 1_000_000)
    }
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        use rustix::time::{ClockId, DynamicClockId};
        rustix::time::clock_gettime_dynamic(DynamicClockId::Known(ClockId::Monotonic))
            .map(ms)
            .map_err(|e| PlatformError::io("cannot read the awake clock", e.into()))
    }
    #[cfg(not(unix))]
    Err(PlatformError::Unsupported {
        os: std::env::consts::OS,
        what: "the awake clock".into(),
    })
}

/// Milliseconds since boot on a clock that is never stepped and counts time asleep (Linux
/// CLOCK_BOOTTIME, macOS CLOCK_MONOTONIC), comparable across processes within one boot:
/// what the hang cooldown is measured on, so that a wall clock set forward or back moves it
/// neither way. `None` where there is none.
pub fn boot_ms() -> Option<i64> {
    #[cfg(target_os = "macos")]
    let clock = rustix::time::DynamicClockId::Known(rustix::time::ClockId::Monotonic);
    #[cfg(all(unix, not(target_os = "macos")))]
    let clock = rustix::time::DynamicClockId::Boottime;
    #[cfg(unix)]
    {
        rustix::time::clock_gettime_dynamic(clock).ok().map(ms)
    }
    #[cfg(not(unix))]
    None
}

/// CPU time (user + system, every thread) this process has used so far, in nanoseconds.
#[cfg(unix)]
pub fn own_cpu_ns() -> Option<u64> {
    use rustix::time::{ClockId, DynamicClockId};
    let ts =
        rustix::time::clock_gettime_dynamic(DynamicClockId::Known(ClockId::ProcessCPUTime)).ok()?;
    Some(u64::try_from(ts.tv_sec).ok()? * 1_000_000_000 + u64::try_from(ts.tv_nsec).ok()?)
}

/// What identifies the current boot, so that CPU history (pids, start times, awake-clock
/// readings) from an earlier boot is discarded: Linux `/proc/sys/kernel/random/boot_id`,
/// macOS `kern.bootsessionuuid` (not `kern.boottime`, which every clock step moves:
/// `macos::boot`). Always the live OS, never a replay root.
pub fn boot_id() -> Result<String, PlatformError> {
    #[cfg(target_os = "macos")]
    {
        // A `uuid_string_t` is 37 bytes; room to spare, and the parser stops at the NUL.
        let mut buf = [0u8; 64];
        let mut len = buf.len();
        // SAFETY: the name is NUL-terminated; the out-buffer is `len` writable bytes.
        let rc = unsafe {
            libc::sysctlbyname(
                c"kern.bootsessionuuid".as_ptr(),
                buf.as_mut_ptr().cast::<libc::c_void>(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if rc != 0 {
            return Err(PlatformError::io(
                "cannot read kern.bootsessionuuid",
                std::io::Error::last_os_error(),
            ));
        }
        super::macos::boot::parse_session_uuid(&buf[..len.min(buf.len())])
            .map_err(PlatformError::Invalid)
    }
    #[cfg(target_os = "linux")]
    {
        let path = "/proc/sys/kernel/random/boot_id";
        let text = std::fs::read_to_string(path).map_err(|e| PlatformError::io(path, e))?;
        let id = text.trim();
        if id.is_empty() {
            return Err(PlatformError::Invalid(format!("`{path}` is empty")));
        }
        Ok(id.to_string())
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    Err(PlatformError::Unsupported {
        os: std::env::consts::OS,
        what: "the boot identity".into(),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The clocks read something, and the CPU clock moves with work done (control: it
    /// does not go back).
    #[test]
    fn the_clocks_read_and_cpu_time_grows_with_work() {
        assert!(awake_ms().unwrap() > 0);
        assert!(boot_ms().is_some_and(|b| b > 0));
        let before = own_cpu_ns().unwrap();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while own_cpu_ns().unwrap() == before && t.elapsed() < std::time::Duration::from_secs(5) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(own_cpu_ns().unwrap() > before);
    }
}
