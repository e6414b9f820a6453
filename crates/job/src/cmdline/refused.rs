//! fio's top-level options that iolab refuses, and why.

/// Why fio's top-level option `name` is refused, if it is one iolab refuses.
pub(super) fn why(name: &str) -> Option<&'static str> {
    Some(match name {
        "server" | "client" | "daemonize" | "remote-config" => {
            "iolab has no networked mode; to drive many machines, run one iolab per \
             machine under MPI (mpirun -np N iolab run job.fio)"
        }
        "trigger-remote" => {
            "it sends the trigger to fio servers, and iolab has no networked mode; \
             use --trigger for this machine"
        }
        "cpuclock-test" => "not implemented",
        _ => return None,
    })
}
