//! fio's verify state file (`local-<job>-<index>-verify.state`, version 3): what a write job
//! had issued when it ended, so that a later `verify_only` run with `verify_state_load`
//! checks only what was written. The layout is fio 3.33's, little-endian: a header (version,
//! size, crc32c of the rest), then the job's list: completions kept, depth, files, writes
//! issued, index, the offset stream's random state (fio's `random_state`: zero for a job that
//! is not random), the name, and, file by file, the last `depth` completed writes to it as
//! (file, offset), newest first. Debian's `fio-verify-state` reads it.

use iolab_workload::OffsetWords;

use super::fio_crc32c;

const VERSION: u64 = 3;
const HDR: usize = 24;
/// Bytes of fio's `struct thread_io_list` before its completions.
const LIST: usize = 8 + 4 + 4 + 8 + 8 + 8 + 48 + 64;

/// fio's `--aux-path`: the directory of the state files a run generates.
static AUX_PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Sets `--aux-path` for the process (the first call wins; the command line makes one).
pub fn set_aux_path(dir: std::path::PathBuf) {
    let _ = AUX_PATH.set(dir);
}

/// `file` in fio's `--aux-path` when it was given ([`set_aux_path`]), else in the working
/// directory: where fio puts the files a run generates (verify state, verify_dump's blocks).
pub fn in_aux_path(file: String) -> std::path::PathBuf {
    match AUX_PATH.get() {
        Some(dir) => dir.join(file),
        None => file.into(),
    }
}

/// One job's saved state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub name: String,
    pub depth: u32,
    pub files: u32,
    /// Writes issued (fio's numberio).
    pub numberio: u64,
    /// The last completed writes, (file index, offset), newest first.
    pub comps: Vec<(u64, u64)>,
    /// The offset stream's words (`None`: zero, a job that is not random).
    pub rand: Option<OffsetWords>,
}

impl State {
    /// fio's name for the state file of the job `name` numbered `thread` (from 1).
    pub fn file_name(name: &str, thread: u32) -> String {
        format!("local-{name}-{}-verify.state", thread.saturating_sub(1))
    }

    /// Where the state file of job `name` goes: in fio's `--aux-path` when it was given
    /// ([`set_aux_path`]), else in the working directory, as fio puts it.
    pub fn path(name: &str, thread: u32) -> std::path::PathBuf {
        in_aux_path(Self::file_name(name, thread))
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut l = Vec::with_capacity(LIST + 16 * self.comps.len());
        l.extend_from_slice(&(self.comps.len() as u64).to_le_bytes());
        l.extend_from_slice(&self.depth.to_le_bytes());
        l.extend_from_slice(&self.files.to_le_bytes());
        l.extend_from_slice(&self.numberio.to_le_bytes());
        l.extend_from_slice(&0u64.to_le_bytes());
        // fio's thread_rand_state: use64, then a union of four 32-bit or six 64-bit words.
        let mut rand = [0u8; 8 + 48];
        match self.rand {
            Some(OffsetWords::W64(w)) => {
                rand[0] = 1;
                for (i, w) in w.iter().enumerate() {
                    rand[8 + 8 * i..16 + 8 * i].copy_from_slice(&w.to_le_bytes());
                }
            }
            Some(OffsetWords::W32(w)) => {
                for (i, w) in w.iter().enumerate() {
                    rand[8 + 4 * i..12 + 4 * i].copy_from_slice(&w.to_le_bytes());
                }
            }
            None => {}
        }
        l.extend_from_slice(&rand);
        let mut name = [0u8; 64];
        let n = self.name.len().min(63);
        name[..n].copy_from_slice(&self.name.as_bytes()[..n]);
        l.extend_from_slice(&name);
        for (f, o) in &self.comps {
            l.extend_from_slice(&f.to_le_bytes());
            l.extend_from_slice(&o.to_le_bytes());
        }
        let mut out = Vec::with_capacity(HDR + l.len());
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(l.len() as u64).to_le_bytes());
        out.extend_from_slice(&u64::from(fio_crc32c(&l)).to_le_bytes());
        out.extend_from_slice(&l);
        out
    }

    pub fn decode(b: &[u8]) -> Result<State, String> {
        let u64_at = |i: usize| -> Result<u64, String> {
            b.get(i..i + 8)
                .and_then(|s| s.try_into().ok())
                .map(u64::from_le_bytes)
                .ok_or_else(|| format!("truncated at byte {i}"))
        };
        let u32_at = |i: usize| -> Result<u32, String> {
            b.get(i..i + 4)
                .and_then(|s| s.try_into().ok())
                .map(u32::from_le_bytes)
                .ok_or_else(|| format!("truncated at byte {i}"))
        };
        let version = u64_at(0)?;
        if version != VERSION {
            return Err(format!("version {version}, iolab reads version {VERSION}"));
        }
        let size = usize::try_from(u64_at(8)?).map_err(|_| "size out of range".to_string())?;
        let list = b
            .get(HDR..HDR.saturating_add(size))
            .filter(|l| l.len() == size && size >= LIST)
            .ok_or_else(|| format!("size {size} does not match the file ({} bytes)", b.len()))?;
        let crc = u64_at(16)?;
        if u64::from(fio_crc32c(list)) != crc {
            return Err(format!("bad crc {crc:#x}"));
        }
        let n = u64_at(HDR)?;
        if (size - LIST) as u64 != n.saturating_mul(16) {
            return Err(format!("{n} completions do not fit {size} bytes"));
        }
        let name_at = HDR + LIST - 64;
        let name = &b[name_at..name_at + 64];
        let end = name.iter().position(|&c| c == 0).unwrap_or(64);
        let comps = (0..n as usize)
            .map(|i| {
                Ok((
                    u64_at(HDR + LIST + 16 * i)?,
                    u64_at(HDR + LIST + 16 * i + 8)?,
                ))
            })
            .collect::<Result<_, String>>()?;
        let rand_at = HDR + 32;
        let rand = if u64_at(rand_at)? == 1 {
            let w = |i: usize| u64_at(rand_at + 8 + 8 * i);
            Some(OffsetWords::W64([w(0)?, w(1)?, w(2)?, w(3)?, w(4)?]))
        } else {
            let w = |i: usize| u32_at(rand_at + 8 + 4 * i);
            Some(OffsetWords::W32([w(0)?, w(1)?, w(2)?])).filter(|w| *w != OffsetWords::W32([0; 3]))
        };
        Ok(State {
            name: String::from_utf8_lossy(&name[..end]).into_owned(),
            depth: u32_at(HDR + 8)?,
            files: u32_at(HDR + 12)?,
            numberio: u64_at(HDR + 16)?,
            comps,
            rand,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_refuses_damage() {
        let s = State {
            name: "w".into(),
            depth: 4,
            files: 1,
            numberio: 25601,
            comps: vec![(0, 0), (0, 0x63ff000)],
            rand: Some(OffsetWords::W32([0xccb9_ad3d, 0x05a3_27f8, 0x137e_67c8])),
        };
        let b = s.encode();
        // fio 3.33's bytes for the words (its default seed, thread 1): little-endian after use64.
        assert_eq!(b[HDR + 40..HDR + 44], [0x3d, 0xad, 0xb9, 0xcc]);
        assert_eq!(b.len(), HDR + LIST + 32);
        assert_eq!(State::decode(&b), Ok(s));
        let mut bad = b.clone();
        bad[40] ^= 1;
        assert!(State::decode(&bad).unwrap_err().contains("crc"));
        assert!(State::decode(&b[..30]).is_err());
        assert_eq!(State::file_name("w", 1), "local-w-0-verify.state");
    }
}
