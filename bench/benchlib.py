"""What every bench script does the same way: install its peers, build iolab, describe the
machine in the first line of a result, and save the result under bench/results/."""
import os, platform, shutil, subprocess, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOLAB = os.path.join(ROOT, "target", "release", "iolab")
# Benchmarks of different work on one machine take turns on this lock (flock), so that no
# figure is measured while another benchmark runs.
LOCK = os.environ.get("IOLAB_BENCH_LOCK", "/tmp/iolab-bench.lock")


def sh(cmd):
    """Standard output of a shell command, stripped."""
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()


def install(*pairs):
    """apt-get installs each (command, package) whose command is missing."""
    need = [pkg for cmd, pkg in pairs
            if shutil.which(cmd) is None and not os.path.exists(f"/usr/sbin/{cmd}")]
    if need:
        subprocess.run("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                       + " ".join(need) + " >/dev/null", shell=True, check=True)


def build():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "iolab"], cwd=ROOT, check=True)


def machine(directory, *tools):
    """The first line of a result: time, kernel, CPUs, file system and the peers' versions."""
    fs = sh(f"df -T {directory} | awk 'NR==2{{print $2\" on \"$1}}'")
    return "; ".join([f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
                      f"kernel {platform.release()}", f"{os.cpu_count()} CPUs",
                      f"files on {fs}", *tools])


def save(prefix, lines):
    """Writes bench/results/PREFIX-<UTC time>.txt and returns its path."""
    out = os.path.join(ROOT, "bench", "results",
                       time.strftime(f"{prefix}-%Y%m%dT%H%M%SZ.txt", time.gmtime()))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return out
