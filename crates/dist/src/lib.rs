//! `iolab run` on many hosts: under `mpirun` or `srun` every rank runs the job file, the
//! ranks start together, and rank 0 prints one report in fio's client/server shape with the
//! ranks' statistics merged exactly.
//!
//! Without the `mpi` feature this crate holds what needs no MPI: where each rank's files go
//! ([`names`]), the bytes a rank sends ([`wire`]) and the merge on rank 0 ([`merge`]).
#![forbid(unsafe_code)]

pub mod compare;
pub mod merge;
pub mod names;
pub mod wire;
#[cfg(feature = "mpi")]
pub mod world;

pub use names::{hostname, place, Placement};

/// Whether this process was started by an MPI launcher (mpirun/mpiexec of Open MPI or MPICH,
/// or Slurm's srun), so that `iolab run` should join the other ranks.
pub fn launched() -> bool {
    const VARS: [&str; 4] = [
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "PMIX_RANK",
        "MPI_LOCALNRANKS",
    ];
    VARS.iter().any(|v| std::env::var_os(v).is_some())
}
