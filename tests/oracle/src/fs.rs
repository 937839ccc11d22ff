//! The real file systems the oracle makes, mounts and crashes, made as
//! servers make them (4 KiB blocks; mkfs would give a small ext4 1 KiB),
//! and what this machine needs to do it.
use std::path::Path;
use std::process::Command;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fs {
    Ext4,
    Xfs,
    Btrfs,
}

impl Fs {
    pub const ALL: [Fs; 3] = [Fs::Ext4, Fs::Xfs, Fs::Btrfs];

    pub fn name(self) -> &'static str {
        match self {
            Fs::Ext4 => "ext4",
            Fs::Xfs => "xfs",
            Fs::Btrfs => "btrfs",
        }
    }

    pub fn parse(s: &str) -> Option<Fs> {
        Fs::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The image size: mkfs.xfs wants 300 MiB, mkfs.btrfs more than 114 MiB.
    pub fn image_bytes(self) -> u64 {
        match self {
            Fs::Ext4 => 64 << 20,
            Fs::Xfs => 300 << 20,
            Fs::Btrfs => 256 << 20,
        }
    }

    pub fn mkfs_program(self) -> &'static str {
        match self {
            Fs::Ext4 => "mkfs.ext4",
            Fs::Xfs => "mkfs.xfs",
            Fs::Btrfs => "mkfs.btrfs",
        }
    }

    /// The Debian package that has `mkfs_program`.
    pub fn package(self) -> &'static str {
        match self {
            Fs::Ext4 => "e2fsprogs",
            Fs::Xfs => "xfsprogs",
            Fs::Btrfs => "btrfs-progs",
        }
    }

    /// mkfs's options. ext4's inode tables and journal are written at mkfs,
    /// not by a background thread after mount (which would write into the
    /// recording).
    pub fn mkfs_args(self) -> &'static [&'static str] {
        match self {
            Fs::Ext4 => &["-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
            Fs::Xfs => &["-q", "-f", "-b", "size=4096"],
            Fs::Btrfs => &["-q", "-f", "-s", "4096"],
        }
    }

    /// Mount options: the defaults servers run, plus what lets one image be
    /// mounted after another of the same file system (xfs: `nouuid`).
    pub fn mount_options(self) -> Option<&'static str> {
        match self {
            Fs::Ext4 | Fs::Btrfs => None,
            Fs::Xfs => Some("nouuid"),
        }
    }

    pub fn mkfs(self, image: &Path) -> Result<(), String> {
        run(Command::new(self.mkfs_program()).args(self.mkfs_args()).arg(image))
    }
}

/// Runs a command; its stderr's first line on failure.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    output(cmd).map(|_| ())
}

/// Runs a command and returns its stdout, trimmed.
pub fn output(cmd: &mut Command) -> Result<String, String> {
    let what = format!("{:?}", cmd);
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("(no message)");
        return Err(format!("{what}: {line}"));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

pub fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into())
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Why this machine cannot run the oracle on `fs`, if it cannot.
pub fn unavailable(fs: Fs) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("it must run as root (losetup, mount)".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse does not exist (FUSE is not available)".into());
    }
    if !on_path("fusermount3") && !on_path("fusermount") {
        return Some("fusermount3 is missing (Debian's fuse3)".into());
    }
    if !on_path("losetup") || !Path::new("/dev/loop-control").exists() {
        return Some("loop devices are not available (losetup, /dev/loop-control)".into());
    }
    if !on_path(fs.mkfs_program()) {
        return Some(format!("{} is missing (Debian's {})", fs.mkfs_program(), fs.package()));
    }
    let known = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !known.lines().any(|l| l.split_whitespace().last() == Some(fs.name())) {
        return Some(format!("the kernel has no {} (/proc/filesystems)", fs.name()));
    }
    None
}
