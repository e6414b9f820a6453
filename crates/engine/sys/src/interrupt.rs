//! Waking a thread out of a blocking system call, so that a stop reaches a job that sits in
//! `read(2)` on a source that never answers (a FIFO whose writer never writes; libaio reads a
//! pipe inside `io_submit`).
//!
//! The run installs a handler for [`WAKE_SIGNAL`] without `SA_RESTART`, so a blocked call that
//! the kernel lets signals interrupt returns EINTR instead of being restarted. The handler
//! notes, in the thread it ran on, that a stop reached it ([`woken`]); from then on the
//! engines answer EINTR with the error instead of retrying (see [`super::is_retry`]).
//!
//! Waits that only a fatal signal ends (a FUSE daemon that never answers, a hung NFS server,
//! block I/O) are not shortened by this: the kernel does not return from them.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use super::cvt;

/// The signal that wakes a job thread. SIGURG, because its default action is to ignore it
/// (a stray one cannot kill the process even before the handler is in place), nothing in
/// iolab asks for it (no socket has an owner set with F_SETOWN), and, unlike SIGWINCH, the
/// terminal never sends it. Go's runtime chose it for the same reasons.
pub const WAKE_SIGNAL: libc::c_int = libc::SIGURG;

thread_local! {
    /// Set by the handler in the thread the wake-up reached. A const-initialised atomic with
    /// no destructor: accessing it allocates nothing and registers nothing, so the handler
    /// may touch it.
    static WOKEN: AtomicBool = const { AtomicBool::new(false) };
}

extern "C" fn on_wake(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Only a wake-up this process sent to one of its threads counts: `kill -URG` from
    // outside (SI_USER), or the kernel's out-of-band data notice, must not look like a stop.
    // SAFETY: with SA_SIGINFO the kernel passes a valid siginfo_t; si_pid is the sender's
    // process id for SI_TKILL. getpid is async-signal-safe and cannot fail.
    let ours = unsafe {
        !info.is_null() && (*info).si_code == libc::SI_TKILL && (*info).si_pid() == libc::getpid()
    };
    if ours {
        WOKEN.with(|w| w.store(true, Ordering::Relaxed));
    }
}

/// Installs the wake-up handler for the process, without SA_RESTART. Installing it again
/// changes nothing.
pub fn install() -> io::Result<()> {
    // SAFETY: sigaction is plain old data; all-zero is a valid value (empty mask, no flags).
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = on_wake as *const () as libc::sighandler_t;
    sa.sa_flags = libc::SA_SIGINFO;
    // SAFETY: `sa` is initialised and points at a handler that only reads its siginfo and
    // stores to a thread-local atomic (async-signal-safe); the old action is not asked for.
    let r = unsafe { libc::sigaction(WAKE_SIGNAL, &sa, std::ptr::null_mut()) };
    cvt(r as isize).map(|_| ())
}

/// Whether a wake-up reached the calling thread: a stop was asked for, and EINTR is an answer
/// rather than something to retry.
pub fn woken() -> bool {
    WOKEN.with(|w| w.load(Ordering::Relaxed))
}

/// A thread of this process that can be woken: its kernel thread id.
///
/// `tgkill` with our own process id is used rather than `pthread_kill`: a `pthread_t` may not
/// be used once its thread has been joined, while a thread id that has gone only makes
/// `tgkill` answer ESRCH, and can never name a thread of another process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thread(libc::pid_t);

impl Thread {
    /// The calling thread.
    pub fn current() -> Thread {
        // SAFETY: gettid has no arguments and cannot fail.
        Thread(unsafe { libc::gettid() })
    }

    /// The thread id as a number (to keep in an atomic), and back.
    pub fn id(self) -> i32 {
        self.0
    }

    /// The thread with id `id`, as [`Thread::id`] gave it; `None` for 0 (no thread yet).
    pub fn from_id(id: i32) -> Option<Thread> {
        (id > 0).then_some(Thread(id))
    }

    /// Sends the wake-up signal. A call blocked in the thread at that moment returns EINTR if
    /// the kernel allows; one it enters just after does not, so a caller that waits for the
    /// thread repeats this. Call [`install`] first.
    pub fn wake(self) -> io::Result<()> {
        // SAFETY: tgkill takes no memory arguments; the target is restricted to this process.
        let r = unsafe {
            libc::syscall(
                libc::SYS_tgkill,
                libc::getpid(),
                self.0 as libc::c_long,
                WAKE_SIGNAL as libc::c_long,
            )
        };
        cvt(r as isize).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::atomic::AtomicI32;
    use std::time::{Duration, Instant};

    fn pipe() -> (OwnedFd, OwnedFd) {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two fds into the array.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both fds were just created and are owned by nobody else.
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    }

    #[test]
    fn wake_ends_a_read_blocked_on_a_silent_pipe_with_eintr() {
        // Regression: a read of a FIFO whose writer never wrote could not be stopped, since
        // EINTR was always retried.
        install().unwrap();
        let (r, w) = pipe();
        let mut w = std::fs::File::from(w);
        let tid = AtomicI32::new(0);
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                tid.store(Thread::current().id(), Ordering::Relaxed);
                let mut buf = vec![0u8; 4096];
                let mut calls = 0;
                // SAFETY: buf is valid for its length during the call.
                let res = unsafe {
                    super::super::rw_full(
                        false,
                        super::super::RwCall::Current,
                        r.as_raw_fd(),
                        buf.as_mut_ptr(),
                        buf.len(),
                        0,
                        &mut calls,
                    )
                };
                (res, woken())
            });
            let start = Instant::now();
            while !h.is_finished() {
                if start.elapsed() > Duration::from_secs(10) {
                    // Let the reader go, so that the test fails instead of hanging.
                    use std::io::Write;
                    w.write_all(&[0u8; 4096]).unwrap();
                    let _ = h.join();
                    panic!("the read was not woken in 10 s");
                }
                if let Some(t) = Thread::from_id(tid.load(Ordering::Relaxed)) {
                    t.wake().unwrap();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let (res, woke) = h.join().unwrap();
            assert!(woke);
            assert_eq!(res.unwrap_err().raw_os_error(), Some(libc::EINTR));
        });
        // The thread that sent the wake-ups was not woken itself.
        assert!(!woken());
    }

    #[test]
    fn a_thread_that_has_gone_is_esrch_not_another_thread() {
        let t = std::thread::spawn(Thread::current).join().unwrap();
        install().unwrap();
        let id = t.id();
        match t.wake() {
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::ESRCH)),
            // Thread ids wrap at pid_max (32768 here) and this test binary makes threads by
            // the thousand: the id may already be another thread's of ours, and then tgkill
            // rightly reaches it. Anything else is a wake-up sent to no one.
            Ok(()) => assert!(
                std::path::Path::new(&format!("/proc/self/task/{id}")).exists(),
                "tgkill reached thread {id}, which has gone and is no thread of ours"
            ),
        }
        assert!(Thread::from_id(0).is_none());
    }
}
