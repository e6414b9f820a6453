//! The contents of write buffers and memory for I/O.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(Buffer, "zero_buffers", [], Flag, None, "Fill write buffers with zeroes",
        |s, a| { s.zero_buffers = a.flag()?; Ok(()) }),
    imp!(Buffer, "refill_buffers", [], Flag, None, "Refill write buffers before every write",
        |s, a| { s.refill_buffers = a.flag()?; Ok(()) }),
    imp!(Buffer, "scramble_buffers", [], Bool, Some("1"), "Scramble write buffers slightly before each write",
        |s, a| { s.scramble_buffers = a.flag()?; Ok(()) }),
    imp!(Buffer, "buffer_compress_percentage", [], Int, None, "Make write buffers compressible by this much",
        |s, a| { s.buffer_compress_percentage = Some(pct(a.int()?)?); Ok(()) }),
    imp!(Buffer, "buffer_pattern", [], Str, None, "Fill write buffers with this pattern (0x.., \"text\", 'file', decimal)",
        |s, a| { s.buffer_pattern = Some(value::DataPattern::parse(a.v, false)?); Ok(()) }),
    imp!(Buffer, "dedupe_percentage", [], Int, None, "Percentage of writes that repeat earlier buffers",
        |s, a| { s.dedupe_percentage = Some(pct(a.int()?)?); Ok(()) }),
    imp!(Buffer, "mem", ["iomem"], Str, Some("malloc"), "Where I/O buffers come from: malloc, shm, shmhuge, mmap, mmapshared, mmaphuge",
        |s, a| { s.mem = buf_mem(a.v)?; Ok(()) }),
    imp!(Buffer, "iomem_align", ["mem_align"], Int, Some("0"), "Start each I/O buffer this many bytes past a page boundary",
        |s, a| { s.iomem_align = u64::try_from(a.int()?).map_err(|_| "must not be negative")?; Ok(()) }),
    imp!(Buffer, "buffer_compress_chunk", [], Int, Some("512"), "Size of each compressible run of buffer_compress_percentage",
        |s, a| { s.buffer_compress_chunk = a.count()?.max(1); Ok(()) }),
    imp!(Buffer, "dedupe_mode", [], Choice(&["repeat", "working_set"]), Some("repeat"), "Deduped writes repeat the last unique buffer (repeat) or one of a working set",
        |s, a| { s.dedupe_working_set = a.choice()? == "working_set"; Ok(()) }),
    imp!(Buffer, "dedupe_working_set_percentage", [], Int, Some("5"), "Working set of dedupe_mode=working_set, in percent of the job's blocks",
        |s, a| { s.dedupe_working_set_percentage = pct(a.int()?)?; Ok(()) }),
    imp!(Buffer, "dedupe_global", [], Bool, Some("0"), "Deduped buffers may repeat other jobs' buffers",
        |s, a| { s.dedupe_global = a.flag()?; Ok(()) }),
    imp!(Buffer, "hugepage-size", [], Size, Some("2097152"), "Size of a huge page, for mem=shmhuge and mmaphuge (a multiple of 4096)",
        |s, a| {
            let n = value::parse_size(a.v, a.kb)?;
            if n == 0 || n % 4096 != 0 {
                return Err(format!("{n} is not a multiple of the 4096-byte page"));
            }
            s.hugepage_size = n;
            Ok(())
        }),
];

/// `mem=`: fio's names. A file after `mmap:` (a file-backed mapping) is refused.
fn buf_mem(v: &str) -> Result<iolab_engine::BufMem, String> {
    use iolab_engine::BufMem;
    let (kind, file) = match v.split_once(':') {
        Some((k, f)) => (k, Some(f)),
        None => (v, None),
    };
    if let Some(f) = file {
        return Err(format!(
            "mem={kind}:{f}: buffers mapped from a file are not supported by iolab (anonymous {kind} is)"
        ));
    }
    Ok(match kind {
        "malloc" => BufMem::Malloc,
        "shm" => BufMem::Shm,
        "shmhuge" => BufMem::ShmHuge,
        "mmap" => BufMem::Mmap,
        "mmapshared" => BufMem::MmapShared,
        "mmaphuge" => BufMem::MmapHuge,
        _ => {
            return Err(format!(
                "invalid value '{v}' (valid: malloc, shm, shmhuge, mmap, mmapshared, mmaphuge)"
            ))
        }
    })
}

#[cfg(test)]
pub(super) mod tests {
    use crate::options::testing::{applied, spec, Acts, Refused};
    use iolab_engine::BufMem;

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["zero_buffers"], |s| s.zero_buffers),
        (&["refill_buffers=1"], |s| s.refill_buffers),
        (&["scramble_buffers=0"], |s| !s.scramble_buffers),
        (&["buffer_compress_percentage=40"], |s| s.buffer_compress_percentage == Some(40)),
        (&["buffer_pattern=0xdeadbeef"], |s| s.buffer_pattern.as_ref().map(|p| &p.bytes[..]) == Some(&[0xde, 0xad, 0xbe, 0xef][..])),
        (&["dedupe_percentage=25"], |s| s.dedupe_percentage == Some(25)),
        (&["mem=shm"], |s| s.mem == BufMem::Shm),
        (&["iomem=mmaphuge"], |s| s.mem == BufMem::MmapHuge),
        (&["iomem_align=4k"], |s| s.iomem_align == 4096),
        (&["buffer_compress_chunk=4k"], |s| s.buffer_compress_chunk == 4096),
        (&["dedupe_mode=working_set"], |s| s.dedupe_working_set),
        (&["dedupe_working_set_percentage=20"], |s| s.dedupe_working_set_percentage == 20),
        (&["dedupe_global=1"], |s| s.dedupe_global),
        (&["hugepage-size=1g"], |s| s.hugepage_size == 1 << 30),
    ];

    /// Values fio refuses (or iolab does, saying why).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["scramble_buffers"],
        &["buffer_compress_percentage=101"],
        &["buffer_compress_percentage=-1"],
        &["dedupe_percentage=120"],
        &["mem=hbm"],
        &["iomem_align=-1"],
        &["buffer_compress_chunk=-1"],
        &["dedupe_mode=random"],
        &["dedupe_working_set_percentage=101"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn percentages_are_bounded() {
        assert_eq!(
            spec(&["buffer_compress_percentage=40"]).buffer_compress_percentage,
            Some(40)
        );
        assert!(applied(&["dedupe_percentage=120"]).is_err());
        assert!(!spec(&["scramble_buffers=0"]).scramble_buffers);
    }

    #[test]
    fn mem_takes_fios_kinds_and_hugepage_size_whole_pages() {
        use iolab_engine::BufMem;
        assert_eq!(spec(&[]).mem, BufMem::Malloc);
        assert_eq!(spec(&["iomem=shmhuge"]).mem, BufMem::ShmHuge);
        assert_eq!(spec(&["mem=mmapshared"]).mem, BufMem::MmapShared);
        assert!(applied(&["mem=mmap:/tmp/x"]).is_err());
        assert!(applied(&["mem=hbm"]).is_err());
        assert_eq!(spec(&[]).hugepage_size, 2 << 20);
        assert_eq!(spec(&["hugepage-size=1g"]).hugepage_size, 1 << 30);
        assert!(applied(&["hugepage-size=1000"]).is_err());
    }

    #[test]
    fn iomem_align_and_its_alias_take_bytes() {
        assert_eq!(spec(&[]).iomem_align, 0);
        assert_eq!(spec(&["iomem_align=512"]).iomem_align, 512);
        assert_eq!(spec(&["mem_align=4k"]).iomem_align, 4096);
        assert!(applied(&["iomem_align=-1"]).is_err());
    }
}
