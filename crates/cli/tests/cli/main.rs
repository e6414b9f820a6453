//! The `iolab` binary end to end, one test binary with a module per command (as ripgrep's
//! integration tests are): one link, one place for shared helpers.

mod compare;
mod compare_qos;
mod compare_trials;
mod control;
mod cp;
mod cp_gnu;
mod deep_queues;
mod engines;
mod examples;
mod exec;
mod fidelity;
mod fidelity_bufs;
mod fidelity_fid3;
mod fidelity_lfsr;
mod fidelity_more;
mod fidelity_patterns;
mod fidelity_random;
mod fidelity_seq;
mod fidelity_streams;
mod fidelity_verify;
mod fidelity_verify_loops;
mod fileopts;
mod fioopts;
mod iolog;
mod lastopts;
mod limits_input;
mod logs;
#[cfg(feature = "mpi")]
mod mpi;
mod net;
mod offload;
mod openfiles_limits;
mod place;
mod run;
mod run_robust;
mod serve_floods;
mod steadystate;
mod trimwrite;
mod verify;
mod verify_async;
mod verify_trim;
mod zbd;
