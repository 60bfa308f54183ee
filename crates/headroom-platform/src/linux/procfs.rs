//! Pure parsers for `/proc` and `/sys/fs/cgroup` text (compiled on every OS, so macOS
//! developers run these tests too). Nothing here touches the file system.

/// The fields of `/proc/PID/stat` headroom uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stat {
    pub pid: i32,
    pub comm: String,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// Field 8: the controlling terminal's foreground process group, -1 without one.
    pub tpgid: i32,
    pub utime: u64,
    pub stime: u64,
    pub num_threads: u32,
    pub starttime: u64,
}

/// Parse `/proc/PID/stat`. The comm field is parenthesised and may itself contain spaces and
/// parentheses, so the remaining fields are split after the *last* `)`.
pub(crate) fn parse_stat(s: &str) -> Result<Stat, String> {
    let open = s.find('(').ok_or("no `(` before comm")?;
    let close = s.rfind(')').ok_or("no `)` after comm")?;
    if close < open {
        return Err("`)` before `(`".into());
    }
    let pid = s[..open]
        .trim()
        .parse::<i32>()
        .map_err(|e| format!("pid: {e}"))?;
    let comm = s[open + 1..close].to_string();
    let rest: Vec<&str> = s[close + 1..].split_ascii_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3].
    let field = |n: usize| {
        rest.get(n - 3)
            .copied()
            .ok_or_else(|| format!("field {n} missing"))
    };
    let num = |n: usize| -> Result<i64, String> {
        field(n)?
            .parse::<i64>()
            .map_err(|e| format!("field {n}: {e}"))
    };
    let unum = |n: usize| -> Result<u64, String> {
        field(n)?
            .parse::<u64>()
            .map_err(|e| format!("field {n}: {e}"))
    };
    let state = field(3)?.chars().next().ok_or("empty state")?;
    Ok(Stat {
        pid,
        comm,
        state,
        ppid: num(4)? as i32,
        pgrp: num(5)? as i32,
        session: num(6)? as i32,
        tpgid: num(8)? as i32,
        utime: unum(14)?,
        stime: unum(15)?,
        num_threads: num(20)?.max(0) as u32,
        starttime: unum(22)?,
    })
}

/// The fields of `/proc/PID/status` headroom uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ProcStatus {
    /// `Name:` (the comm, with `\n` and `\\` escaped by the kernel).
    pub name: Option<String>,
    /// First letter of `State:`.
    pub state: Option<char>,
    pub ppid: Option<i32>,
    /// First field of `Uid:`: the real uid, which RLIMIT_NPROC charges.
    pub ruid: Option<u32>,
    pub threads: Option<u32>,
    pub rss_anon_kb: Option<u64>,
    pub vm_swap_kb: Option<u64>,
    pub cap_eff: Option<u64>,
}

impl ProcStatus {
    /// RssAnon + VmSwap: the private, unshared part, the Linux analogue of phys_footprint
    /// (RSS would count shared libraries once per process). Kernel threads and zombies have
    /// neither line, which reads as unknown.
    pub(crate) fn footprint_bytes(&self) -> Option<u64> {
        let anon = self.rss_anon_kb?;
        Some((anon + self.vm_swap_kb.unwrap_or(0)) * 1024)
    }
}

pub(crate) fn parse_status(s: &str) -> ProcStatus {
    let mut st = ProcStatus::default();
    for line in s.lines() {
        let Some((key, val)) = line.split_once(':') else {
            continue;
        };
        let val = val.trim();
        match key {
            "Name" => {
                st.name = Some(unescape_name(
                    line[5..].strip_prefix('\t').unwrap_or(&line[5..]),
                ))
            }
            "State" => st.state = val.chars().next(),
            "PPid" => st.ppid = val.parse().ok(),
            "Uid" => {
                st.ruid = val
                    .split_ascii_whitespace()
                    .next()
                    .and_then(|v| v.parse().ok())
            }
            "Threads" => st.threads = val.parse().ok(),
            "RssAnon" => st.rss_anon_kb = kb(val),
            "VmSwap" => st.vm_swap_kb = kb(val),
            "CapEff" => {
                st.cap_eff = u64::from_str_radix(val, 16).ok();
                // Every field read here comes before CapEff (task_state, task_mem, task_sig,
                // task_cap, in that order): the fifteen-odd lines after it are not split.
                break;
            }
            _ => {}
        }
    }
    st
}

/// Undo the kernel's escaping of `\n` and `\\` in the `Name:` field.
fn unescape_name(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    s.replace("\\n", "\n").replace("\\\\", "\\")
}

fn kb(val: &str) -> Option<u64> {
    val.trim_end_matches("kB").trim().parse().ok()
}

/// CAP_SYS_ADMIN (21) and CAP_SYS_RESOURCE (24) exempt a process from RLIMIT_NPROC.
pub(crate) fn exempt_capability(cap_eff: u64) -> Option<&'static str> {
    if cap_eff & (1 << 24) != 0 {
        Some("CAP_SYS_RESOURCE")
    } else if cap_eff & (1 << 21) != 0 {
        Some("CAP_SYS_ADMIN")
    } else {
        None
    }
}

/// `MemTotal` and `MemAvailable` from `/proc/meminfo`, in bytes.
pub(crate) fn parse_meminfo(s: &str) -> Option<(u64, u64)> {
    let mut total = None;
    let mut avail = None;
    for line in s.lines() {
        if let Some(v) = line.strip_prefix("MemTotal:") {
            total = kb(v.trim());
        } else if let Some(v) = line.strip_prefix("MemAvailable:") {
            avail = kb(v.trim());
        }
    }
    Some((total? * 1024, avail? * 1024))
}

/// `/proc/PID/task/TID/children`: space-separated pids.
pub(crate) fn parse_children(s: &str) -> impl Iterator<Item = i32> + '_ {
    s.split_ascii_whitespace().filter_map(|p| p.parse().ok())
}

/// The total of the 4th field of `/proc/loadavg` (`runnable/total`): every task on the
/// machine, the count `threads-max` and `pid_max` are compared with.
pub(crate) fn parse_loadavg_tasks(s: &str) -> Option<u64> {
    s.split_ascii_whitespace()
        .nth(3)?
        .split_once('/')?
        .1
        .parse()
        .ok()
}

/// One line of `/proc/PID/cgroup`: `hierarchy-id:controllers:path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CgroupLine {
    pub hierarchy: String,
    pub controllers: Vec<String>,
    pub path: String,
}

pub(crate) fn parse_cgroup(s: &str) -> Vec<CgroupLine> {
    s.lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ':');
            let hierarchy = it.next()?.to_string();
            let controllers = it.next()?;
            let path = it.next()?.to_string();
            let controllers = if controllers.is_empty() {
                Vec::new()
            } else {
                controllers.split(',').map(str::to_string).collect()
            };
            Some(CgroupLine {
                hierarchy,
                controllers,
                path,
            })
        })
        .collect()
}

/// A `pids.max` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PidsMax {
    Unlimited,
    Limit(u64),
}

pub(crate) fn parse_pids_max(s: &str) -> Option<PidsMax> {
    match s.trim() {
        "max" => Some(PidsMax::Unlimited),
        v => v.parse().ok().map(PidsMax::Limit),
    }
}

/// Extract the arguments from `/proc/PID/cmdline` (NUL-separated, usually NUL-terminated).
pub(crate) fn parse_cmdline(bytes: &[u8]) -> Vec<String> {
    let trimmed = bytes.strip_suffix(b"\0").unwrap_or(bytes);
    if trimmed.is_empty() {
        return Vec::new();
    }
    trimmed
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "4242 (agency (copilot) x) S 1332 4242 1332 34816 4242 4194560 1234 0 0 0 \
                        150 25 0 0 20 0 3 0 987654 1234567 890 18446744073709551615";

    #[test]
    fn children_file() {
        assert_eq!(
            parse_children("4243 4250 \n").collect::<Vec<_>>(),
            vec![4243, 4250]
        );
        assert_eq!(parse_children("").count(), 0);
    }

    #[test]
    fn stat_comm_with_parens_and_spaces() {
        let s = parse_stat(STAT).unwrap();
        assert_eq!(s.pid, 4242);
        assert_eq!(s.comm, "agency (copilot) x");
        assert_eq!(
            (s.state, s.ppid, s.pgrp, s.session, s.tpgid),
            ('S', 1332, 4242, 1332, 4242)
        );
        assert_eq!(
            (s.utime, s.stime, s.num_threads, s.starttime),
            (150, 25, 3, 987654)
        );
    }

    #[test]
    fn stat_zombie_and_garbage() {
        let z = "77 (send-telemetry) Z 76 76 1 0 -1 4227084 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0";
        let s = parse_stat(z).unwrap();
        assert_eq!((s.state, s.ppid, s.num_threads), ('Z', 76, 1));
        assert_eq!(s.tpgid, -1, "no controlling terminal");
        assert!(parse_stat("").is_err());
        assert!(parse_stat("12 (short) S 1").unwrap_err().contains("field"));
        assert!(parse_stat("x (a) S 1 2 3").is_err());
        assert!(parse_stat(") weird (").is_err());
    }

    const STATUS: &str = "Name:\tagency\nUmask:\t0022\nState:\tS (sleeping)\nPPid:\t1\n\
        Uid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\nVmRSS:\t   20000 kB\n\
        RssAnon:\t    1500 kB\nRssFile:\t   18000 kB\nVmSwap:\t     100 kB\nThreads:\t4\n\
        CapEff:\t0000000001000000\n";

    #[test]
    fn status_real_uid_threads_and_footprint() {
        let st = parse_status(STATUS);
        assert_eq!(
            (st.name.as_deref(), st.state, st.ppid),
            (Some("agency"), Some('S'), Some(1))
        );
        assert_eq!(st.ruid, Some(1000));
        assert_eq!(st.threads, Some(4));
        assert_eq!(st.footprint_bytes(), Some(1600 * 1024));
        assert_eq!(
            st.cap_eff.and_then(exempt_capability),
            Some("CAP_SYS_RESOURCE")
        );
    }

    #[test]
    fn status_of_a_zombie_has_no_footprint() {
        let st = parse_status("Name:\tz\nState:\tZ (zombie)\nUid:\t5\t5\t5\t5\nThreads:\t1\n");
        assert_eq!(st.footprint_bytes(), None);
        assert_eq!(exempt_capability(0), None);
        assert_eq!(exempt_capability(1 << 21), Some("CAP_SYS_ADMIN"));
        let odd = parse_status("Name:\ta b\\nc\nState:\tZ (zombie)\n");
        assert_eq!(
            (odd.name.as_deref(), odd.state),
            (Some("a b\nc"), Some('Z'))
        );
    }

    #[test]
    fn meminfo_loadavg_cgroup_and_pids() {
        let m = "MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   12000000 kB\n";
        assert_eq!(
            parse_meminfo(m),
            Some((24_000_000 * 1024, 12_000_000 * 1024))
        );
        assert_eq!(parse_meminfo("MemTotal: 5 kB\n"), None);
        assert_eq!(
            parse_loadavg_tasks("0.00 0.01 0.05 2/345 6789\n"),
            Some(345)
        );
        assert_eq!(parse_loadavg_tasks("garbage"), None);
        let cg =
            parse_cgroup("12:pids:/user.slice/user-1000.slice\n0::/user.slice\n1:name=systemd:/\n");
        assert_eq!(cg[0].controllers, vec!["pids"]);
        assert_eq!(cg[0].path, "/user.slice/user-1000.slice");
        assert!(cg[1].controllers.is_empty());
        assert_eq!(parse_pids_max("max\n"), Some(PidsMax::Unlimited));
        assert_eq!(parse_pids_max("512\n"), Some(PidsMax::Limit(512)));
        assert_eq!(parse_pids_max("x"), None);
    }

    #[test]
    fn cmdline_split() {
        assert_eq!(
            parse_cmdline(b"copilot\0--log-dir\0/tmp/x y\0"),
            vec!["copilot", "--log-dir", "/tmp/x y"]
        );
        assert!(parse_cmdline(b"").is_empty());
    }
}
