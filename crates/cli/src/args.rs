//! The command-line convention every subcommand follows lives in `iolab-args`.

pub use iolab_args::{describe, show, text, Cmd};
