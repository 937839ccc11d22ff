//! Sizes, offsets and constants of the preview1 ABI structures.
pub const FILETYPE_CHARACTER_DEVICE: u8 = 2;
pub const FILETYPE_DIRECTORY: u8 = 3;
pub const FILETYPE_REGULAR_FILE: u8 = 4;
pub const FILETYPE_SOCKET_STREAM: u8 = 6;

pub const FDFLAGS_APPEND: u16 = 1;
pub const FDFLAGS_DSYNC: u16 = 2;
pub const FDFLAGS_NONBLOCK: u16 = 4;
pub const FDFLAGS_SYNC: u16 = 16;

pub const OFLAGS_CREAT: u16 = 1;
pub const OFLAGS_DIRECTORY: u16 = 2;
pub const OFLAGS_EXCL: u16 = 4;
pub const OFLAGS_TRUNC: u16 = 8;

pub const RIGHTS_FD_READ: u64 = 1 << 1;
pub const RIGHTS_FD_WRITE: u64 = 1 << 6;
/// Every right preview1 defines: the simulator grants all of them and checks
/// only read/write intent, like a host that trusts its guest.
pub const RIGHTS_ALL: u64 = (1 << 30) - 1;

pub const WHENCE_SET: u8 = 0;
pub const WHENCE_CUR: u8 = 1;
pub const WHENCE_END: u8 = 2;

pub const CLOCK_REALTIME: u32 = 0;
pub const CLOCK_MONOTONIC: u32 = 1;
pub const CLOCK_PROCESS_CPUTIME: u32 = 2;
pub const CLOCK_THREAD_CPUTIME: u32 = 3;

pub const EVENTTYPE_CLOCK: u8 = 0;
pub const EVENTTYPE_FD_READ: u8 = 1;
pub const EVENTTYPE_FD_WRITE: u8 = 2;
pub const SUBCLOCKFLAGS_ABSTIME: u16 = 1;

pub const SUBSCRIPTION_SIZE: u32 = 48;
pub const EVENT_SIZE: u32 = 32;
pub const FDSTAT_SIZE: u32 = 24;
pub const FILESTAT_SIZE: u32 = 64;
pub const DIRENT_HEADER_SIZE: usize = 24;
