//! One litmus workload on a real file system: record its block writes, then
//! mount every crash image and read what survived.
use crate::device::{Device, State, IMAGE_NAME};
use crate::fs::{output, run, Fs};
use crate::images::{self, Cut};
use crate::tree::{self, Tree};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// What the real file system produced for one workload.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Workload {
    /// Block writes and flushes the workload issued.
    pub writes: usize,
    pub flushes: usize,
    /// Crash images mounted.
    pub images: usize,
    /// Each distinct tree, with how many images left it and the first cut
    /// that did.
    pub trees: Vec<Seen>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Seen {
    pub tree: Tree,
    pub images: usize,
    pub first: String,
}

/// The folders one workload uses, under the oracle's scratch folder.
struct Places {
    base: PathBuf,
    fuse: PathBuf,
    mnt: PathBuf,
}

impl Places {
    fn new(scratch: &Path) -> Result<Places, String> {
        let p = Places { base: scratch.join("base.img"), fuse: scratch.join("fuse"), mnt: scratch.join("mnt") };
        for d in [&p.fuse, &p.mnt] {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot make {}: {e}", d.display()))?;
        }
        Ok(p)
    }
}

/// A loop device on the FUSE file, with direct I/O so every write reaches it.
struct Loop(String);

impl Loop {
    fn attach(file: &Path) -> Result<Loop, String> {
        output(Command::new("losetup").args(["-f", "--show", "--direct-io=on"]).arg(file)).map(Loop)
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = run(Command::new("losetup").args(["-d", &self.0]));
    }
}

/// A mounted file system; unmounted when dropped.
struct Mounted<'a>(&'a Path);

impl<'a> Mounted<'a> {
    fn mount(fs: Fs, dev: &Loop, at: &'a Path) -> Result<Mounted<'a>, String> {
        let mut cmd = Command::new("mount");
        cmd.args(["-t", fs.name()]);
        if let Some(o) = fs.mount_options() {
            cmd.args(["-o", o]);
        }
        run(cmd.arg(&dev.0).arg(at))?;
        Ok(Mounted(at))
    }
}

impl Drop for Mounted<'_> {
    fn drop(&mut self) {
        let _ = run(Command::new("umount").arg(self.0));
    }
}

fn litmus(bin: &Path, verb: &str, workload: &str, root: &Path) -> Result<(), String> {
    run(Command::new(bin).args([verb, workload]).arg(root)).map_err(|e| format!("litmus {verb} {workload}: {e}"))
}

/// btrfs remembers every device it has seen by its file system id; an image
/// of the same file system on a new loop device must not meet the old one.
fn forget_devices(fs: Fs) {
    if fs == Fs::Btrfs {
        let _ = run(Command::new("btrfs").args(["device", "scan", "--forget"]));
    }
}

/// Records `workload` on a fresh `fs`, then mounts up to `max_images` crash
/// images. `scratch` is the workload's own folder.
pub fn workload(fs: Fs, litmus_bin: &Path, name: &str, scratch: &Path, max_images: usize) -> Result<Workload, String> {
    let places = Places::new(scratch)?;
    let base = std::fs::File::create(&places.base).map_err(|e| format!("{}: {e}", places.base.display()))?;
    base.set_len(fs.image_bytes()).map_err(|e| format!("{}: {e}", places.base.display()))?;
    drop(base);
    fs.mkfs(&places.base)?;
    let file = std::fs::File::open(&places.base).map_err(|e| format!("{}: {e}", places.base.display()))?;
    let state = Arc::new(Mutex::new(State::new(file).map_err(|e| format!("{}: {e}", places.base.display()))?));
    let options = [fuser::MountOption::FSName("seedfall-oracle".into()), fuser::MountOption::NoAtime];
    let session = fuser::spawn_mount2(Device(state.clone()), &places.fuse, &options).map_err(|e| format!("cannot mount the recording device (FUSE) on {}: {e}", places.fuse.display()))?;
    let image = places.fuse.join(IMAGE_NAME);
    forget_devices(fs);

    // The recording: set-up, synced, then the workload alone.
    let (start, log) = {
        let dev = Loop::attach(&image)?;
        let _mounted = Mounted::mount(fs, &dev, &places.mnt)?;
        litmus(litmus_bin, "setup", name, &places.mnt)?;
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        let start = {
            let mut s = state.lock().unwrap();
            s.log.clear();
            s.logging = true;
            s.snapshot()
        };
        let ran = litmus(litmus_bin, "run", name, &places.mnt);
        let mut s = state.lock().unwrap();
        s.logging = false;
        ran?;
        if s.overflowed {
            return Err(format!("{name} wrote more than {} bytes to the device", crate::device::LOG_BYTES_MAX));
        }
        (start, std::mem::take(&mut s.log))
        // Unmounting here writes more; none of it is logged.
    };
    forget_devices(fs);

    let epochs = images::epochs(&log);
    let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let cuts = images::cuts(&epochs, seed, max_images);
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    for cut in &cuts {
        let tree = crash_image(fs, &state, &start, &epochs, cut, &image, &places.mnt);
        let key = tree.key();
        seen.entry(key).or_insert_with(|| Seen { tree, images: 0, first: cut.describe(epochs[cut.epoch].len()) }).images += 1;
    }
    drop(session);
    let writes = epochs.iter().map(Vec::len).sum();
    Ok(Workload { writes, flushes: epochs.len() - 1, images: cuts.len(), trees: seen.into_values().collect() })
}

fn crash_image(fs: Fs, state: &Arc<Mutex<State>>, start: &BTreeMap<u64, Box<[u8]>>, epochs: &[Vec<(u64, &[u8])>], cut: &Cut, image: &Path, mnt: &Path) -> Tree {
    state.lock().unwrap().reset(start, &images::writes_of(epochs, cut));
    let tree = (|| {
        let dev = Loop::attach(image).map_err(|e| Tree::Broken { broken: e })?;
        // A mount that fails is a state too: the file system did not recover.
        let mounted = Mounted::mount(fs, &dev, mnt).map_err(|e| Tree::Broken { broken: format!("does not mount: {}", e.rsplit(": ").next().unwrap_or(&e)) })?;
        let tree = tree::read(mnt);
        drop(mounted);
        Ok::<Tree, Tree>(tree)
    })();
    forget_devices(fs);
    tree.unwrap_or_else(|t| t)
}
