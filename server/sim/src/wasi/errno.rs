//! WASI preview1 errno values (the subset the host returns).
pub type Errno = u16;

pub const SUCCESS: Errno = 0;
pub const TOOBIG: Errno = 1;
pub const ACCES: Errno = 2;
pub const AGAIN: Errno = 6;
pub const BADF: Errno = 8;
pub const EXIST: Errno = 20;
pub const FAULT: Errno = 21;
pub const FBIG: Errno = 22;
pub const ILSEQ: Errno = 25;
pub const INVAL: Errno = 28;
pub const IO: Errno = 29;
pub const ISDIR: Errno = 31;
pub const MFILE: Errno = 33;
pub const NAMETOOLONG: Errno = 37;
pub const NOENT: Errno = 44;
pub const NOSPC: Errno = 51;
pub const NOSYS: Errno = 52;
pub const NOTDIR: Errno = 54;
pub const NOTEMPTY: Errno = 55;
pub const NOTSUP: Errno = 58;
pub const PERM: Errno = 63;
pub const SPIPE: Errno = 70;
pub const NOTCAPABLE: Errno = 76;
