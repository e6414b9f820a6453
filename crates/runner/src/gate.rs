//! The start line of a phase: like `std::sync::Barrier`, but it can be called off, so that a
//! job whose thread was never created, or whose setup failed, ends the start for everyone
//! instead of leaving the others waiting for ever.

use std::sync::{Condvar, Mutex};

pub(crate) struct StartGate {
    need: usize,
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    arrived: usize,
    off: bool,
}

impl StartGate {
    pub(crate) fn new(need: usize) -> StartGate {
        StartGate {
            need,
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
        }
    }

    /// Arrives at the line, ready (`ok`) or not, and waits for everyone. True when every job
    /// arrived ready: the phase starts; false when the start was called off.
    pub(crate) fn wait(&self, ok: bool) -> bool {
        let mut st = match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if !ok {
            st.off = true;
        }
        st.arrived += 1;
        if st.arrived >= self.need || st.off {
            self.cv.notify_all();
        }
        while st.arrived < self.need && !st.off {
            st = match self.cv.wait(st) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
        }
        !st.off
    }

    /// No start: everyone waiting (and everyone who arrives later) is told so.
    pub(crate) fn call_off(&self) {
        let mut st = match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        st.off = true;
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn everyone_ready_starts_everyone() {
        let g = StartGate::new(3);
        let r: Vec<bool> = std::thread::scope(|s| {
            let h: Vec<_> = (0..3).map(|_| s.spawn(|| g.wait(true))).collect();
            h.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(r, [true; 3]);
    }

    #[test]
    fn call_off_releases_waiters_when_a_thread_never_comes() {
        // Regression: a thread that was never spawned left the start barrier waiting for ever.
        let g = StartGate::new(3);
        std::thread::scope(|s| {
            let h = s.spawn(|| g.wait(true));
            std::thread::sleep(Duration::from_millis(20));
            g.call_off();
            assert!(!h.join().unwrap());
        });
        assert!(!g.wait(true), "a late arrival sees the start called off");
    }

    #[test]
    fn one_not_ready_calls_the_start_off_for_all() {
        let g = StartGate::new(2);
        let r: Vec<bool> = std::thread::scope(|s| {
            let a = s.spawn(|| g.wait(true));
            let b = s.spawn(|| g.wait(false));
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        assert_eq!(r, [false, false]);
    }
}
