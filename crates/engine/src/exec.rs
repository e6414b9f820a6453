//! `exec`, as fio's: the job runs a program instead of doing I/O. The first request starts
//! `program` with `arguments` (split at spaces; `%r` becomes the job's runtime in seconds and
//! `%n` its name), its output in `NAME.stdout` and `NAME.stderr` in the working directory
//! unless `std_redirect=0`; every later request waits 50 ms (fio's thinktime for exec) and
//! completes without moving a byte. When the job ends, a program still running gets SIGTERM,
//! then `grace_time` seconds to go, then SIGKILL.
//!
//! With a runtime the job lasts it, as fio's does, whether the program ends sooner or not.
//! Without one fio runs until it is killed; iolab ends the job when the program ends
//! ([`Engine::finished`]).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::kind::Descriptor;
use crate::sys;
use crate::{
    Caps, Done, Engine, EngineError, EngineKind, EngineOpts, ErrorKind, FileId, Queued, Req,
    SysCalls,
};

/// What the engine is before it is opened ([`Descriptor`]).
pub(crate) const DESC: Descriptor = Descriptor::data(EngineKind::Exec, "exec", open)
    .options(&["program", "arguments", "grace_time", "std_redirect"])
    .diskless()
    .no_data()
    .no_io();

/// The exec engine's options (fio's names), and what the runner says of the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecOpts {
    pub program: Option<String>,
    pub arguments: Option<String>,
    /// Seconds between SIGTERM and SIGKILL (fio's default 1).
    pub grace_time: u32,
    /// Output to `NAME.stdout` and `NAME.stderr` (fio's default) rather than iolab's own.
    pub std_redirect: bool,
    /// The job's name (set by the runner): `%n` and the output files' names.
    pub job: String,
    /// The job's runtime (set by the runner): `%r`, and whether the job outlives the program.
    pub runtime: Option<Duration>,
}

impl Default for ExecOpts {
    fn default() -> ExecOpts {
        ExecOpts {
            program: None,
            arguments: None,
            grace_time: 1,
            std_redirect: true,
            job: String::new(),
            runtime: None,
        }
    }
}

impl ExecOpts {
    /// The program and its arguments as fio builds them: `%r` and `%n` replaced, then the
    /// command line split at spaces (no quoting, as fio).
    pub fn argv(&self) -> Vec<String> {
        let line = match (&self.program, self.expanded_arguments()) {
            (Some(p), Some(a)) => format!("{p} {a}"),
            (Some(p), None) => p.clone(),
            (None, _) => String::new(),
        };
        line.split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// The arguments with `%r` and `%n` replaced.
    fn expanded_arguments(&self) -> Option<String> {
        let secs = self.runtime.map_or(0, |d| d.as_secs()).to_string();
        self.arguments
            .as_deref()
            .map(|a| a.replace("%r", &secs).replace("%n", &self.job))
    }

    /// Where the program's standard output and error go (fio's names).
    pub fn outputs(&self) -> (PathBuf, PathBuf) {
        (
            PathBuf::from(format!("{}.stdout", self.job)),
            PathBuf::from(format!("{}.stderr", self.job)),
        )
    }
}

/// fio's pause between looks at the running program.
const TICK: Duration = Duration::from_millis(50);

pub(crate) struct ExecEngine {
    o: ExecOpts,
    caps: Caps,
    child: Option<Child>,
    /// The program has ended (or could not start) and the job has no runtime to fill.
    done: bool,
    files: crate::files::Placeholders,
}

pub(crate) fn open(opts: &EngineOpts) -> Result<Box<dyn Engine>, EngineError> {
    let o = opts.exec.clone();
    if o.argv().is_empty() {
        return Err(
            EngineError::new(ErrorKind::InvalidRequest, "open", EngineKind::Exec)
                .hint("no program is defined, it is mandatory to define one (program=)"),
        );
    }
    let argv = o.argv();
    if !runnable(&argv[0]) {
        return Err(
            EngineError::new(ErrorKind::InvalidRequest, "open", EngineKind::Exec).hint(format!(
                "program={}: no such executable (nor in PATH)",
                argv[0]
            )),
        );
    }
    Ok(Box::new(ExecEngine {
        o,
        caps: Caps {
            moves_data: false,
            direct_io: false,
            sync_only: true,
            max_depth: 1,
            finishes: true,
            ..Caps::default()
        },
        child: None,
        done: false,
        files: crate::files::Placeholders::default(),
    }))
}

/// Whether `prog` names an executable file, as a path or found in PATH (as execvp looks).
pub fn runnable(prog: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let exec = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if prog.contains('/') {
        return exec(Path::new(prog));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| exec(&d.join(prog))))
}

impl ExecEngine {
    fn start(&mut self) -> io::Result<()> {
        let argv = self.o.argv();
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]).stdin(Stdio::null());
        if self.o.std_redirect {
            let (out, err) = self.o.outputs();
            c.stdout(File::create(out)?).stderr(File::create(err)?);
        }
        self.child = Some(c.spawn()?);
        Ok(())
    }

    fn tick(&mut self) -> io::Result<usize> {
        if self.child.is_none() {
            return self.start().map(|_| 0);
        }
        std::thread::sleep(TICK);
        if let Some(c) = &mut self.child {
            if c.try_wait()?.is_some() && self.o.runtime.is_none() {
                self.done = true;
            }
        }
        Ok(0)
    }

    /// SIGTERM, `grace_time` seconds for the program to end, then SIGKILL; always reaped.
    fn stop(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        if let Ok(None) = c.try_wait() {
            let _ = sys::terminate(c.id());
            let until = Instant::now() + Duration::from_secs(u64::from(self.o.grace_time));
            while matches!(c.try_wait(), Ok(None)) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = c.kill();
        }
        let _ = c.wait();
    }
}

impl Engine for ExecEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Exec
    }

    /// fio's two lines, its init's and its first queue's (nothing comes between them); an
    /// absent value prints as glibc prints a NULL string.
    fn start_line(&self, job: &str) -> Option<String> {
        let null = |v: Option<String>| v.unwrap_or_else(|| "(null)".into());
        let program = null(self.o.program.clone());
        let given = null(self.o.arguments.clone());
        let expanded = null(self.o.expanded_arguments());
        let run = match self.o.std_redirect {
            true => {
                let (out, err) = self.o.outputs();
                format!(
                    "Saving output of {program} {expanded} : stdout={} stderr={}",
                    out.display(),
                    err.display()
                )
            }
            false => format!("Running {program} {expanded}"),
        };
        Some(format!(
            "{job} : program={program}, arguments={given}\n{job} : {run}"
        ))
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn add_file(&mut self, file: File, _path: &Path) -> Result<FileId, EngineError> {
        Ok(self.files.add(file))
    }

    fn remove_file(&mut self, id: FileId) -> Result<File, EngineError> {
        self.files.remove(id, EngineKind::Exec)
    }

    fn queue(&mut self, req: Req) -> Queued {
        let result = self.tick();
        if result.is_err() {
            self.done = true;
        }
        Queued::Done(Done { req, result })
    }

    crate::completes_in_queue!();

    fn syscalls(&self) -> SysCalls {
        SysCalls::default()
    }

    fn finished(&self) -> bool {
        self.done
    }
}

impl Drop for ExecEngine {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(program: &str, arguments: Option<&str>) -> ExecOpts {
        ExecOpts {
            program: Some(program.into()),
            arguments: arguments.map(Into::into),
            job: "job1".into(),
            runtime: Some(Duration::from_secs(7)),
            ..ExecOpts::default()
        }
    }

    #[test]
    fn arguments_are_split_at_spaces_with_runtime_and_name_substituted() {
        let o = opts("/bin/echo", Some("-n  %n ran %r s %r"));
        assert_eq!(o.argv(), ["/bin/echo", "-n", "job1", "ran", "7", "s", "7"]);
        assert_eq!(opts("true", None).argv(), ["true"]);
        assert_eq!(
            o.outputs(),
            (PathBuf::from("job1.stdout"), PathBuf::from("job1.stderr"))
        );
    }

    #[test]
    fn a_job_without_a_program_or_with_a_missing_one_is_refused() {
        let mut o = EngineOpts::new(EngineKind::Exec, 1);
        let e = open(&o).err().unwrap();
        assert!(e.to_string().contains("no program is defined"), "{e}");
        o.exec.program = Some("/no/such/program".into());
        let e = open(&o).err().unwrap();
        assert!(
            e.to_string()
                .contains("program=/no/such/program: no such executable"),
            "{e}"
        );
        o.exec.program = Some("sh".into());
        assert!(open(&o).is_ok(), "sh is found in PATH");
    }

    #[test]
    fn a_program_that_ignores_sigterm_is_killed_after_the_grace_time() {
        // fio splits at spaces, so the script's words are separated by tabs.
        let mut o = opts("/bin/sh", Some("-c trap\t''\tTERM;sleep\t30"));
        o.std_redirect = false;
        o.grace_time = 0;
        let mut e = ExecEngine {
            o,
            caps: Caps::default(),
            child: None,
            done: false,
            files: crate::files::Placeholders::default(),
        };
        e.tick().unwrap();
        let t = Instant::now();
        e.stop();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(e.child.is_none());
    }
}
