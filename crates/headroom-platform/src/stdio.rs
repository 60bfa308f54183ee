//! Writing to fd 1 or 2 without std's `Stdout`/`Stderr` lock (`output::queue`'s writer
//! thread): a writer blocked on a full pipe would hold that lock, and the exit path's flush
//! (or a panic message) would wait for it.

use std::io;

/// Write `buf` to stderr when `fd` is 2, else to stdout, with one write(2) (resumed when a
/// signal interrupts it): the bytes written, as `Write::write` returns them.
pub fn write_unlocked(fd: i32, buf: &[u8]) -> io::Result<usize> {
    #[cfg(unix)]
    {
        loop {
            // The descriptor only, through std's handle, whose `AsFd` takes no lock.
            let written = match fd {
                2 => rustix::io::write(io::stderr(), buf),
                _ => rustix::io::write(io::stdout(), buf),
            };
            match written {
                Ok(n) => return Ok(n),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    #[cfg(not(unix))]
    {
        use std::io::Write as _;
        match fd {
            2 => io::stderr().write(buf),
            _ => io::stdout().write(buf),
        }
    }
}
