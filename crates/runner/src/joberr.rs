//! The error that stopped a job, kept as fio keeps it (td_verror): the errno, what failed
//! (`func=`) and where it was noticed (`file:`), so that `err=` and JSON `error` carry the
//! real errno and the job line can read as fio's does.

/// Where and why a job stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobError {
    pub errno: i32,
    /// iolab's own message (engine, operation, offset, length, errno name).
    pub message: String,
    /// fio's `func=`: what failed ("io_u error", "io commit", ...).
    pub func: &'static str,
    /// fio's `file:`: the source file and line that noticed it.
    pub site: &'static str,
}

/// `file!():line!()` without the directories, as fio prints its own source locations.
macro_rules! site {
    () => {
        concat!("job.rs:", line!())
    };
}
pub(crate) use site;

impl JobError {
    /// What follows `err=N` on fio's job line, in fio 3.33's words:
    /// `file:io_u.c:1876, func=io_u error, error=No space left on device`.
    pub fn fio_detail(&self) -> String {
        format!(
            "file:{}, func={}, error={}",
            self.site,
            self.func,
            strerror(self.errno)
        )
    }

    /// fio's line on standard output (with its informational lines) when a job ends on an
    /// error:
    /// `fio: pid=123, err=28/file:io_u.c:1876, func=io_u error, error=No space left on device`.
    pub fn fio_line(&self, pid: u32) -> String {
        format!(
            "fio: pid={pid}, err={}/file:{}, func={}, error={}",
            self.errno,
            self.site,
            self.func,
            strerror(self.errno)
        )
    }
}

/// The C library's text for `errno` ("No space left on device"), without Rust's
/// " (os error N)".
pub fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detail_and_line_read_as_fios() {
        let e = JobError {
            errno: libc::ENOSPC,
            message: "psync: write failed".into(),
            func: "io_u error",
            site: "job.rs:10",
        };
        assert_eq!(
            e.fio_detail(),
            "file:job.rs:10, func=io_u error, error=No space left on device"
        );
        assert_eq!(
            e.fio_line(7),
            "fio: pid=7, err=28/file:job.rs:10, func=io_u error, error=No space left on device"
        );
        assert_eq!(strerror(libc::EISDIR), "Is a directory");
    }
}
