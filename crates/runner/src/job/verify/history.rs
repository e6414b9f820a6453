//! The blocks a verifying job has written and not yet read back, as fio's sorted history:
//! the last write to each place, in offset order, 24 bytes a block beyond its key.

use std::collections::BTreeMap;

use crate::verify::Written;

/// What one remembered block needs beyond its place (the map's key): 24 bytes.
#[derive(Clone, Copy, Debug)]
struct Rec {
    numberio: u64,
    seed: u64,
    len: u32,
    trimmed: bool,
}

/// The blocks written and not yet read back, by file and offset: the last write to each
/// place (an overlapping later write replaces the earlier), as fio's sorted history.
#[derive(Debug, Default)]
pub(super) struct History(BTreeMap<(u32, u64), Rec>);

impl History {
    fn written(&(file, offset): &(u32, u64), r: &Rec) -> Written {
        Written {
            file,
            offset,
            len: r.len,
            numberio: r.numberio,
            seed: r.seed,
            trimmed: r.trimmed,
            any_write: false,
        }
    }

    pub(super) fn insert(&mut self, w: Written) {
        let end = w.offset + u64::from(w.len);
        let before = self.0.range(..(w.file, w.offset)).next_back();
        if let Some((&k, p)) = before {
            if k.0 == w.file && k.1 + u64::from(p.len) > w.offset {
                self.0.remove(&k);
            }
        }
        while let Some((&k, _)) = self.0.range((w.file, w.offset)..(w.file, end)).next() {
            self.0.remove(&k);
        }
        let r = Rec {
            numberio: w.numberio,
            seed: w.seed,
            len: w.len,
            trimmed: w.trimmed,
        };
        self.0.insert((w.file, w.offset), r);
    }

    pub(super) fn get(&self, file: u32, offset: u64) -> Option<Written> {
        let k = (file, offset);
        self.0.get(&k).map(|r| Self::written(&k, r))
    }

    pub(super) fn remove(&mut self, k: (u32, u64)) -> Option<Written> {
        self.0.remove(&k).map(|r| Self::written(&k, &r))
    }

    pub(super) fn mark_trimmed(&mut self, k: (u32, u64)) -> Option<Written> {
        let r = self.0.get_mut(&k)?;
        r.trimmed = true;
        Some(Self::written(&k, r))
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// The first block by file and offset, taken out.
    pub(super) fn pop_first(&mut self) -> Option<Written> {
        self.0.pop_first().map(|(k, r)| Self::written(&k, &r))
    }

    /// Every block, by file and offset; the history is left empty.
    pub(super) fn take_all(&mut self) -> Vec<Written> {
        std::mem::take(&mut self.0)
            .into_iter()
            .map(|(k, r)| Self::written(&k, &r))
            .collect()
    }
}
