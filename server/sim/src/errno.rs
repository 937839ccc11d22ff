//! WASI preview1 errno values (the subset the host returns).
pub type Errno = u16;

pub const SUCCESS: Errno = 0;
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
pub const SPIPE: Errno = 70;
pub const ADDRINUSE: Errno = 3;
pub const ADDRNOTAVAIL: Errno = 4;
pub const AFNOSUPPORT: Errno = 5;
pub const ALREADY: Errno = 7;
pub const CONNREFUSED: Errno = 14;
pub const CONNRESET: Errno = 15;
pub const INPROGRESS: Errno = 26;
pub const ISCONN: Errno = 30;
pub const NFILE: Errno = 41;
pub const NOTCONN: Errno = 53;
pub const NOTSOCK: Errno = 57;
pub const PIPE: Errno = 64;
pub const PROTONOSUPPORT: Errno = 66;
pub const PROTOTYPE: Errno = 67;
pub const TIMEDOUT: Errno = 73;
pub const INTR: Errno = 27;
pub const DOM: Errno = 18;
pub const DEADLK: Errno = 16;
pub const NOLCK: Errno = 46;
pub const NOMEM: Errno = 48;

/// The error a `write_error` fault returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum WriteErrno {
    #[serde(rename = "EIO")]
    Eio,
    #[serde(rename = "ENOSPC")]
    Enospc,
}

impl WriteErrno {
    pub fn name(self) -> &'static str {
        match self {
            WriteErrno::Eio => "EIO",
            WriteErrno::Enospc => "ENOSPC",
        }
    }

    pub fn parse(text: &str) -> Option<WriteErrno> {
        [WriteErrno::Eio, WriteErrno::Enospc].into_iter().find(|e| e.name() == text)
    }

    pub fn errno(self) -> Errno {
        match self {
            WriteErrno::Eio => IO,
            WriteErrno::Enospc => NOSPC,
        }
    }
}
