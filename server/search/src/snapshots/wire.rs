//! What the snapshot runner and its users say to each other: frames of a
//! little-endian u32 length and that many bytes of JSON, over pipes.
use seedfall_sim::config::Limits;
use seedfall_sim::{Outcome, Schedule};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// Bound on one frame: an outcome with a whole trace (`trace::EVENTS_MAX`
/// events) is tens of MiB.
pub const FRAME_BYTES_MAX: usize = 1 << 30;

/// A snapshot: the `index`-th moment of take `take`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SnapId {
    pub take: u64,
    pub index: u32,
}

/// Where a prefix run stops for a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Moment {
    /// The first step boundary at or after this virtual time.
    At(u64),
    /// The first step boundary after the time a workload reported setup
    /// complete (`SetupComplete`), a little later than that time.
    AfterSetup,
}

/// To the runner.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// The limits the user's process gave the program (its memory share,
    /// output cap): the runner's runs must have the same.
    Init { limits: Limits },
    /// Run `schedule` from the start, stopping at each moment (in order) to
    /// leave a snapshot there.
    Take { take: u64, schedule: Schedule, moments: Vec<Moment> },
    /// Continue snapshot `snap` as `schedule` (which agrees with it so far);
    /// `failing_trace`: keep a failing run's trace (passing runs' go).
    Child { id: u64, snap: SnapId, schedule: Schedule, failing_trace: bool },
    Release { snap: SnapId },
}

/// From the runner.
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    Hello { pid: u32 },
    /// A snapshot stands: the time and step of its moment, when setup
    /// completed (if it did), the memory its world holds, and what taking it
    /// cost on the host (the fork).
    Taken { snap: SnapId, now_ns: u64, step: u64, setup_ns: Option<u64>, bytes: u64, fork_ns: u64 },
    /// The prefix run ended before this moment.
    Missed { snap: SnapId, why: String },
    /// A child's outcome, and what its fork cost.
    Done { id: u64, fork_ns: u64, outcome: Box<Outcome> },
    /// A child that could not finish (its process died).
    Lost { id: u64, why: String },
    /// A snapshot's process ended (released, or died).
    Gone { snap: SnapId },
}

/// From a snapshot process to the runner.
#[derive(Debug, Serialize, Deserialize)]
pub enum Order {
    Child { id: u64, schedule: Schedule, failing_trace: bool },
    Exit,
}

pub fn encode(msg: &impl Serialize) -> Vec<u8> {
    let body = serde_json::to_vec(msg).expect("our messages serialize");
    assert!(body.len() <= FRAME_BYTES_MAX, "a frame of {} bytes is over the bound", body.len());
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

pub fn write(w: &mut impl Write, msg: &impl Serialize) -> io::Result<()> {
    w.write_all(&encode(msg))?;
    w.flush()
}

/// One frame's bytes (length prefix included); None at a clean end of stream.
pub fn read_raw(r: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let n = u32::from_le_bytes(len) as usize;
    if n > FRAME_BYTES_MAX {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("a frame of {n} bytes is over the bound of {FRAME_BYTES_MAX}")));
    }
    let mut buf = vec![0u8; 4 + n];
    buf[..4].copy_from_slice(&len);
    r.read_exact(&mut buf[4..])?;
    Ok(Some(buf))
}

pub fn decode<T: DeserializeOwned>(frame: &[u8]) -> io::Result<T> {
    serde_json::from_slice(&frame[4..]).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("a frame that does not parse: {e}")))
}

pub fn read<T: DeserializeOwned>(r: &mut impl Read) -> io::Result<Option<T>> {
    match read_raw(r)? {
        None => Ok(None),
        Some(f) => decode(&f).map(Some),
    }
}
