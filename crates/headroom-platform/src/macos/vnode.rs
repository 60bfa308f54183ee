//! The layout `proc_pidinfo(pid, PROC_PIDVNODEPATHINFO, ...)` fills, from `<sys/proc_info.h>`
//! (`struct proc_vnodepathinfo`, two `struct vnode_info_path`): the working directory of a
//! process, for a session child's relative `--log-dir`. Plain data, compiled and size-tested
//! on every OS; only the call (in `live.rs`) is macOS.

use std::ffi::c_char;

/// `PROC_PIDVNODEPATHINFO` in `<sys/proc_info.h>`.
pub(crate) const PROC_PIDVNODEPATHINFO: i32 = 9;
/// `MAXPATHLEN` in `<sys/param.h>`.
pub(crate) const MAXPATHLEN: usize = 1024;

/// `struct vnode_info` (`vinfo_stat vi_stat` of 136 bytes, `int vi_type`, `int vi_pad`,
/// `fsid_t vi_fsid`): 152 bytes, 8-aligned. Nothing of it is read, so it stays opaque.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct VnodeInfo {
    pub opaque: [u64; 19],
}

/// `struct vnode_info_path { struct vnode_info vip_vi; char vip_path[MAXPATHLEN]; }`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct VnodeInfoPath {
    pub vip_vi: VnodeInfo,
    pub vip_path: [c_char; MAXPATHLEN],
}

/// `struct proc_vnodepathinfo { struct vnode_info_path pvi_cdir; pvi_rdir; }`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProcVnodePathInfo {
    pub pvi_cdir: VnodeInfoPath,
    pub pvi_rdir: VnodeInfoPath,
}

/// The NUL-terminated path in `vip_path`; `None` when empty or not terminated.
pub(crate) fn path_of(v: &VnodeInfoPath) -> Option<String> {
    let bytes: Vec<u8> = v.vip_path.iter().map(|&c| c as u8).collect();
    let end = bytes.iter().position(|&b| b == 0)?;
    (end > 0).then(|| String::from_utf8_lossy(&bytes[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_sys_proc_info_h() {
        // vinfo_stat 136 + vi_type 4 + vi_pad 4 + vi_fsid 8.
        assert_eq!(std::mem::size_of::<VnodeInfo>(), 152);
        assert_eq!(std::mem::size_of::<VnodeInfoPath>(), 152 + MAXPATHLEN);
        assert_eq!(std::mem::size_of::<ProcVnodePathInfo>(), 2352);
        assert_eq!(std::mem::align_of::<ProcVnodePathInfo>(), 8);
        assert_eq!(std::mem::offset_of!(ProcVnodePathInfo, pvi_rdir), 1176);
    }

    #[test]
    fn the_path_ends_at_the_first_nul_and_an_unterminated_one_is_refused() {
        let mut v = VnodeInfoPath {
            vip_vi: VnodeInfo { opaque: [0; 19] },
            vip_path: [0; MAXPATHLEN],
        };
        assert_eq!(path_of(&v), None, "empty");
        for (i, b) in b"/Users/x/work".iter().enumerate() {
            v.vip_path[i] = *b as c_char;
        }
        assert_eq!(path_of(&v).as_deref(), Some("/Users/x/work"));
        v.vip_path = [b'a' as c_char; MAXPATHLEN];
        assert_eq!(path_of(&v), None, "no terminator");
    }
}
