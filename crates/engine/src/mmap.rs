//! Placeholder until this engine lands.

use crate::{Engine, EngineError, EngineKind, EngineOpts, ErrorKind};

pub(crate) fn open(_opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    Err(EngineError::new(ErrorKind::Unsupported, "open", EngineKind::Mmap).hint("not built yet"))
}
