//! Files: which files a job uses, their sizes and offsets, how they are laid out and opened.

use super::prelude::*;

/// The definitions, one entry per option, laid out by hand.
#[rustfmt::skip]
pub(super) static OPTIONS: &[OptDef] = &[
    imp!(File, "filename", [], Str, None, "File(s) to use, ':'-separated",
        |s, a| { s.filename = split_filenames(a.v); Ok(()) }),
    imp!(File, "directory", [], Str, None, "Directory for the job's files",
        |s, a| { s.directory = Some(a.v.to_string()); Ok(()) }),
    imp!(File, "filename_format", [], Str, Some("$jobname.$jobnum.$filenum"), "Name pattern for generated files",
        |s, a| { s.filename_format = a.v.to_string(); Ok(()) }),
    imp!(File, "nrfiles", ["nr_files"], Int, Some("1"), "Number of files per job",
        |s, a| {
            s.nrfiles = to_u32(a.int()?)?.max(1);
            Ok(())
        }),
    imp!(File, "filesize", [], SizeOrRange, None, "Size of each file (or a range)",
        |s, a| {
            s.filesize = Some(value::parse_size_or_range(a.v, a.kb)?);
            Ok(())
        }),
    imp!(File, "size", [], SizePct, None, "Total size of I/O for the job (or % of the file)",
        |s, a| { s.size = Some(a.size_pct()?); Ok(()) }),
    imp!(File, "io_size", ["io_limit"], SizePct, None, "Amount of I/O to do, if not size",
        |s, a| { s.io_size = Some(a.size_pct()?); Ok(()) }),
    imp!(File, "offset", ["fileoffset"], SizePct, Some("0"), "Start I/O at this offset",
        |s, a| { s.offset = a.size_pct()?; Ok(()) }),
    imp!(File, "offset_increment", [], SizePct, Some("0"), "Offset added per numjobs clone",
        |s, a| { s.offset_increment = a.size_pct()?; Ok(()) }),
    imp!(File, "create_on_open", [], Bool, Some("0"), "Create files when they are opened for I/O",
        |s, a| { s.create_on_open = a.flag()?; Ok(()) }),
    imp!(File, "fallocate", [], Choice(&["none", "native", "posix", "keep", "truncate", "0", "1"]), Some("native"), "How to preallocate files when laying them out",
        |s, a| {
            s.fallocate = match a.choice()? {
                "0" => "none",
                "1" => "posix",
                c => c,
            };
            Ok(())
        }),
    imp!(File, "pre_read", [], Bool, Some("0"), "Read files into the page cache before the run",
        |s, a| { s.pre_read = a.flag()?; Ok(()) }),
    imp!(File, "unlink", [], Bool, Some("0"), "Remove files when the job is done",
        |s, a| { s.unlink = a.flag()?; Ok(()) }),
    imp!(File, "invalidate", [], Bool, Some("1"), "Drop the page cache of the files before the run",
        |s, a| { s.invalidate = a.flag()?; Ok(()) }),
    imp!(File, "fadvise_hint", [], Choice(&["0", "1", "random", "sequential", "noreuse"]), Some("1"), "Advise the kernel of the access pattern (posix_fadvise): 1 follows rw, 0 none",
        |s, a| {
            s.fadvise_hint = match a.choice()? {
                "0" => Fadvise::None,
                "random" => Fadvise::Random,
                "sequential" => Fadvise::Sequential,
                "noreuse" => Fadvise::NoReuse,
                _ => Fadvise::Pattern,
            };
            Ok(())
        }),
    imp!(File, "allow_mounted_write", [], Bool, Some("0"), "Allow writes to a mounted block device",
        |s, a| { s.allow_mounted_write = a.flag()?; Ok(()) }),
    imp!(File, "lockfile", [], Choice(&["none", "exclusive", "readwrite"]), Some("none"), "Jobs sharing a file take turns: one I/O at a time (exclusive), or reads together and writes alone (readwrite)",
        |s, a| {
            s.lockfile = match a.choice()? {
                "exclusive" => FileLock::Exclusive,
                "readwrite" => FileLock::ReadWrite,
                _ => FileLock::None,
            };
            Ok(())
        }),
    imp!(File, "unique_filename", [], Bool, Some("1"), "Prefix generated names with the client's address (client/server runs only)",
        |s, a| { s.unique_filename = a.flag()?; Ok(()) }),
    imp!(File, "opendir", [], Str, None, "Add every regular file under this directory (recursively) to the job's files",
        |s, a| { s.opendir = Some(a.v.to_string()).filter(|d| !d.is_empty()); Ok(()) }),
    imp!(File, "fill_device", ["fill_fs"], Bool, Some("0"), "Write until ENOSPC (size defaults to unlimited); a full device ends the job without an error",
        |s, a| { s.fill_device = a.flag()?; Ok(()) }),
    imp!(File, "file_append", [], Bool, Some("0"), "Start I/O at the end of the existing file (append)",
        |s, a| { s.file_append = a.flag()?; Ok(()) }),
    imp!(File, "offset_align", [], Int, Some("0"), "Align a percentage offset to this (0: the minimum block size)",
        |s, a| { s.offset_align = Some(a.count()?).filter(|n| *n > 0); Ok(()) }),
    imp!(File, "file_service_type", [], Str, Some("roundrobin"), "How the next file is chosen: roundrobin, random, sequential (each with :N I/Os per file), zipf:t, pareto:h, normal:dev",
        |s, a| { (s.file_service_type, s.file_service_nr) = file_service(a.v)?; Ok(()) }),
    imp!(File, "openfiles", [], Int, Some("0"), "Use at most this many files at once, each finished before the next (0: all)",
        |s, a| { s.openfiles = to_u32(a.int()?)?; Ok(()) }),
    imp!(File, "overwrite", [], Bool, Some("0"), "Lay out (write) files before a write job, so writes overwrite data",
        |s, a| { s.overwrite = a.flag()?; Ok(()) }),
    imp!(File, "ioscheduler", [], Str, None, "Switch the job's block device to this I/O scheduler for the run (deadline, cfq, noop map to mq-deadline, bfq, none)",
        |s, a| { s.place.ioscheduler = Some(a.v.to_string()); Ok(()) }),
    imp!(File, "write_hint", [], Choice(&["none", "short", "medium", "long", "extreme"]), None, "Write lifetime hint for the files (fcntl F_SET_RW_HINT)",
        |s, a| {
            s.write_hint = match a.choice()? {
                "none" => 1,
                "short" => 2,
                "medium" => 3,
                "long" => 4,
                _ => 5,
            };
            Ok(())
        }),
    imp!(File, "create_serialize", [], Bool, Some("1"), "Lay out the jobs' files one job after another (0: each job lays out its own, in parallel)",
        |s, a| { s.create_serialize = a.flag()?; Ok(()) }),
    imp!(File, "create_fsync", [], Bool, Some("1"), "fsync a file after laying it out",
        |s, a| { s.create_fsync = a.flag()?; Ok(()) }),
    imp!(File, "create_only", [], Bool, Some("0"), "Only lay out the files; do no I/O",
        |s, a| { s.create_only = a.flag()?; Ok(()) }),
    imp!(File, "allow_file_create", [], Bool, Some("1"), "Allow the job to create files (0: they must exist)",
        |s, a| { s.allow_file_create = a.flag()?; Ok(()) }),
    imp!(File, "unlink_each_loop", [], Bool, Some("0"), "Remove the files after each loop but the last (loops=N); the next loop creates them again",
        |s, a| { s.unlink_each_loop = a.flag()?; Ok(()) }),
];

/// `file_service_type`: the kind and the I/Os per switch (fio's defaults: zipf 1.1,
/// pareto 0.2, normal 0 when no parameter is given).
fn file_service(v: &str) -> Result<(FileService, u32), String> {
    let (kind, arg) = match v.split_once(':') {
        Some((k, a)) => (k.trim(), Some(a.trim())),
        None => (v.trim(), None),
    };
    let float = |d: f64| {
        arg.map_or(Ok(d), |a| {
            a.parse::<f64>()
                .map_err(|_| format!("invalid {kind} parameter '{a}'"))
        })
    };
    let nr = || -> Result<u32, String> {
        arg.map_or(Ok(1), |a| {
            value::parse_int(a).and_then(to_u32).map(|n| n.max(1))
        })
    };
    Ok(match kind {
        "roundrobin" => (FileService::RoundRobin, nr()?),
        "random" => (FileService::Random, nr()?),
        "sequential" => (FileService::Sequential, nr()?),
        "zipf" => (FileService::Zipf(float(1.1)?), 1),
        "pareto" => (FileService::Pareto(float(0.2)?), 1),
        "normal" | "gauss" => (FileService::Normal(float(0.0)?), 1),
        _ => {
            return Err(format!(
                "invalid value '{v}' (valid: random, roundrobin, sequential, zipf, pareto, normal, gauss)"
            ))
        }
    })
}

#[cfg(test)]
pub(super) mod tests {
    use crate::options::testing::{applied, spec, Acts, Refused};
    use crate::spec::{Fadvise, FileLock, FileService};
    use crate::value::SizeOrPct;

    /// Each definition at work: a value fio takes, and the field it must set.
    #[rustfmt::skip]
    pub(in crate::options) static ACTS: &[Acts] = &[
        (&["filename=/tmp/a:/tmp/b"], |s| s.filename == ["/tmp/a", "/tmp/b"]),
        (&["directory=/mnt/data"], |s| s.directory.as_deref() == Some("/mnt/data")),
        (&["filename_format=f.$jobnum"], |s| s.filename_format == "f.$jobnum"),
        (&["nrfiles=4"], |s| s.nrfiles == 4),
        (&["nr_files=2"], |s| s.nrfiles == 2),
        (&["filesize=1g"], |s| s.filesize == Some((1 << 30, 1 << 30))),
        (&["filesize=1m-4m"], |s| s.filesize == Some((1 << 20, 4 << 20))),
        (&["size=1g"], |s| s.size == Some(SizeOrPct::Bytes(1 << 30))),
        (&["size=50%"], |s| s.size == Some(SizeOrPct::Percent(50.0))),
        (&["io_size=2g"], |s| s.io_size == Some(SizeOrPct::Bytes(2 << 30))),
        (&["io_limit=10m"], |s| s.io_size == Some(SizeOrPct::Bytes(10 << 20))),
        (&["offset=1m"], |s| s.offset == SizeOrPct::Bytes(1 << 20)),
        (&["fileoffset=25%"], |s| s.offset == SizeOrPct::Percent(25.0)),
        (&["offset_increment=4m"], |s| s.offset_increment == SizeOrPct::Bytes(4 << 20)),
        (&["create_on_open=1"], |s| s.create_on_open),
        (&["fallocate=none"], |s| s.fallocate == "none"),
        (&["fallocate=keep"], |s| s.fallocate == "keep"),
        (&["fallocate=1"], |s| s.fallocate == "posix"),
        (&["pre_read=1"], |s| s.pre_read),
        (&["unlink=1"], |s| s.unlink),
        (&["invalidate=0"], |s| !s.invalidate),
        (&["fadvise_hint=sequential"], |s| s.fadvise_hint == Fadvise::Sequential),
        (&["fadvise_hint=0"], |s| s.fadvise_hint == Fadvise::None),
        (&["allow_mounted_write=1"], |s| s.allow_mounted_write),
        (&["lockfile=readwrite"], |s| s.lockfile == FileLock::ReadWrite),
        (&["unique_filename=0"], |s| !s.unique_filename),
        (&["opendir=/tmp/d"], |s| s.opendir.as_deref() == Some("/tmp/d")),
        (&["fill_device=1"], |s| s.fill_device),
        (&["file_append=1"], |s| s.file_append),
        (&["offset_align=4k"], |s| s.offset_align == Some(4096)),
        (&["file_service_type=random:4"], |s| (s.file_service_type, s.file_service_nr) == (FileService::Random, 4)),
        (&["file_service_type=sequential"], |s| s.file_service_type == FileService::Sequential),
        (&["file_service_type=pareto:0.5"], |s| s.file_service_type == FileService::Pareto(0.5)),
        (&["openfiles=2"], |s| s.openfiles == 2),
        (&["overwrite=1"], |s| s.overwrite),
        (&["ioscheduler=mq-deadline"], |s| s.place.ioscheduler.as_deref() == Some("mq-deadline")),
        // The kernel's RWH_WRITE_LIFE_* numbers.
        (&["write_hint=none"], |s| s.write_hint == 1),
        (&["write_hint=short"], |s| s.write_hint == 2),
        (&["write_hint=extreme"], |s| s.write_hint == 5),
        (&["create_serialize=0"], |s| !s.create_serialize),
        (&["create_fsync=0"], |s| !s.create_fsync),
        (&["create_only=1"], |s| s.create_only),
        (&["allow_file_create=0"], |s| !s.allow_file_create),
        (&["unlink_each_loop=1"], |s| s.unlink_each_loop),
    ];

    /// Values fio refuses (negative counts: iolab's, where fio would wrap them).
    pub(in crate::options) static REFUSED: &[Refused] = &[
        &["nrfiles=-1"],
        &["io_size=101%"],
        &["create_on_open"],
        &["fallocate=always"],
        &["invalidate=2"],
        &["fadvise_hint=willneed"],
        &["lockfile=shared"],
        &["offset_align=-1"],
        &["file_service_type=lru"],
        &["file_service_type=zipf:abc"],
        &["openfiles=-1"],
        &["write_hint=forever"],
        &["write_hint=0"],
    ];

    crate::options::testing::table_tests!();

    #[test]
    fn filename_splits_at_colons_but_keeps_escaped_ones() {
        assert_eq!(
            spec(&["filename=/dev/a\\:b:/tmp/c"]).filename,
            ["/dev/a:b", "/tmp/c"]
        );
    }

    #[test]
    fn sizes_take_percentages_and_zones() {
        assert_eq!(spec(&["size=50%"]).size, Some(SizeOrPct::Percent(50.0)));
        assert_eq!(spec(&["offset=1m"]).offset, SizeOrPct::Bytes(1 << 20));
        assert_eq!(spec(&["filesize=1k-2k"]).filesize, Some((1024, 2048)));
        assert_eq!(spec(&["size=2z"]).size, Some(SizeOrPct::Zones(2)));
    }

    #[test]
    fn fadvise_hint_follows_the_pattern_unless_told() {
        use crate::spec::Fadvise;
        assert_eq!(spec(&[]).fadvise_hint, Fadvise::Pattern);
        assert_eq!(spec(&["fadvise_hint=0"]).fadvise_hint, Fadvise::None);
        assert_eq!(spec(&["fadvise_hint=random"]).fadvise_hint, Fadvise::Random);
        assert_eq!(
            spec(&["fadvise_hint=noreuse"]).fadvise_hint,
            Fadvise::NoReuse
        );
        assert!(applied(&["fadvise_hint=willneed"]).is_err());
    }

    #[test]
    fn file_service_type_takes_kinds_counts_and_parameters() {
        use crate::spec::FileService;
        let fs = |v: &str| {
            let s = spec(&[v]);
            (s.file_service_type, s.file_service_nr)
        };
        assert_eq!(fs("nrfiles=1"), (FileService::RoundRobin, 1));
        assert_eq!(fs("file_service_type=random:4"), (FileService::Random, 4));
        assert_eq!(fs("file_service_type=zipf:2"), (FileService::Zipf(2.0), 1));
        assert_eq!(fs("file_service_type=gauss"), (FileService::Normal(0.0), 1));
        assert!(applied(&["file_service_type=lru"]).is_err());
    }

    #[test]
    fn lockfile_fill_device_and_create_serialize_read_fios_values() {
        use crate::spec::FileLock;
        assert_eq!(spec(&[]).lockfile, FileLock::None);
        assert_eq!(spec(&["lockfile=exclusive"]).lockfile, FileLock::Exclusive);
        assert_eq!(spec(&["lockfile=readwrite"]).lockfile, FileLock::ReadWrite);
        assert!(applied(&["lockfile=shared"]).is_err());
        assert!(spec(&["fill_fs=1"]).fill_device);
        assert!(spec(&[]).create_serialize);
        assert!(!spec(&["create_serialize=0"]).create_serialize);
        assert!(spec(&["unlink_each_loop=1"]).unlink_each_loop);
    }

    #[test]
    fn fallocate_takes_fios_numbers() {
        assert_eq!(spec(&["fallocate=0"]).fallocate, "none");
        assert_eq!(spec(&["fallocate=1"]).fallocate, "posix");
        assert_eq!(spec(&[]).fallocate, "native");
    }
}
