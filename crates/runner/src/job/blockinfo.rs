//! fio's `block_error_percentiles`: the job's one file is cut into trim-block-sized blocks,
//! and each block keeps how many times it was trimmed and its state (unwritten, trimmed,
//! written, trim failure, write failure), as fio 3.33 keeps them: a trim that completes
//! counts one more trim and marks the block trimmed; a trim or write that fails marks it
//! failed, after which it no longer changes. fio 3.33 never marks a block written (its
//! state exists but nothing sets it), and neither does iolab. The report prints the trim
//! counts' percentiles (report/src/blocks.rs).

use iolab_engine::{Done, Op};
use iolab_stats::block;
use iolab_workload::JobPlan;

use crate::error::RunError;

mod hooks;

/// fio's limit on the number of blocks (its MAX_NR_BLOCK_INFOS).
const MAX_BLOCKS: u64 = 8192;

pub(super) struct BlockInfos {
    infos: Vec<u32>,
    start: u64,
    bs: u64,
}

/// The trim block size and the job's span on its file.
fn shape(plan: &JobPlan) -> (u64, u64, u64) {
    let p = &plan.pattern;
    let bs = p.bs[2].min().max(1);
    let (start, len) = p.files.first().map_or((0, 0), |f| (f.offset, f.len));
    (bs, start, len)
}

/// Refuses what fio refuses: more than one file, or a span of no or too many trim blocks.
pub(crate) fn check(plan: &JobPlan) -> Result<(), RunError> {
    if !plan.spec.block_error_percentiles {
        return Ok(());
    }
    let n = plan.files.len();
    if n != 1 {
        return Err(RunError::Refused(format!(
            "{}: block error histogram only available with a single file per job, but {n} files provided",
            plan.name
        )));
    }
    let (bs, _, len) = shape(plan);
    let blocks = len / bs;
    if blocks == 0 || blocks > MAX_BLOCKS {
        return Err(RunError::Refused(format!(
            "{}: cannot calculate block histogram with {blocks} trim blocks, maximum {MAX_BLOCKS}",
            plan.name
        )));
    }
    Ok(())
}

impl BlockInfos {
    pub(super) fn of(plan: &JobPlan) -> Option<Box<BlockInfos>> {
        if !plan.spec.block_error_percentiles {
            return None;
        }
        let (bs, start, len) = shape(plan);
        let n = (len / bs).min(MAX_BLOCKS) as usize;
        Some(Box::new(BlockInfos {
            infos: vec![block::info(block::UNWRITTEN, 0); n],
            start,
            bs,
        }))
    }

    fn done(&mut self, d: &Done) {
        let write = match d.req.op {
            Op::Trim => false,
            Op::Write => true,
            _ => return,
        };
        // An I/O over several blocks counts in its first, as in fio.
        let i = (d.req.offset.saturating_sub(self.start) / self.bs) as usize;
        let Some(info) = self.infos.get_mut(i) else {
            return;
        };
        if block::state(*info) >= block::TRIM_FAILURE {
            return;
        }
        let trims = block::trims(*info);
        *info = match (&d.result, write) {
            (Ok(_), false) => block::info(block::TRIMMED, trims + 1),
            (Ok(_), true) => return,
            (Err(_), false) => block::info(block::TRIM_FAILURE, trims),
            (Err(_), true) => block::info(block::WRITE_FAILURE, trims),
        };
    }
}
