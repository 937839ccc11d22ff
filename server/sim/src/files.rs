//! Reading the files a user points seedfall at, with bounds.
//!
//! A config, schedule, pin or corpus entry is small JSON; a module or a
//! seeded disk file is bigger but still bounded. `-c /dev/zero` must not
//! grow memory without bound, and `-c` on a FIFO must not hang: only
//! regular files are read, and never more than their bound.
use std::io::Read;
use std::path::Path;

/// Bound on a JSON file seedfall reads (config, schedule, pin, corpus entry).
pub const JSON_BYTES_MAX: u64 = 16 << 20;
/// Bound on the values of a JSON file that is parsed whole into a tree
/// (a config): a tree costs up to 80 bytes a value, so a 16 MiB file of
/// one-character strings would take 30 times its size. Files parsed into
/// our own types need no such bound: they cost a small multiple of their
/// size whatever they hold.
pub const JSON_VALUES_MAX: u64 = 1_000_000;
/// Bound on a wasm module.
pub const MODULE_BYTES_MAX: u64 = 1 << 30;

/// The bytes of `path`, a regular file of at most `max` bytes; `what` names
/// it in errors ("the config", "the module").
pub fn read_bytes(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(format!("{what} {} does not exist", path.display())),
        Err(e) => return Err(format!("cannot read {what} {}: {e}", path.display())),
    };
    if meta.is_dir() {
        return Err(format!("{what} {} is a folder, expected a file", path.display()));
    }
    if !meta.is_file() {
        return Err(format!("{what} {} is not a regular file (a FIFO, socket or device?)", path.display()));
    }
    if meta.len() > max {
        return Err(format!("{what} {} holds {} bytes, more than the {max} it may", path.display(), meta.len()));
    }
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    f.take(max + 1).read_to_end(&mut out).map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    if out.len() as u64 > max {
        return Err(format!("{what} {} grew past the {max} bytes it may hold while being read", path.display()));
    }
    Ok(out)
}

/// At least how many values `text` holds if it is JSON (every number,
/// string, key, list and object, and one more per empty list or object),
/// counted without parsing; the count stops past `stop`.
pub fn json_values(text: &str, stop: u64) -> u64 {
    let (mut n, mut in_string, mut escaped) = (1u64, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b':' | b'[' | b'{' => {
                n += 1;
                if n > stop {
                    break;
                }
            }
            _ => {}
        }
    }
    n
}

/// As [`read_bytes`], as UTF-8 text.
pub fn read_text(path: &Path, max: u64, what: &str) -> Result<String, String> {
    String::from_utf8(read_bytes(path, max, what)?).map_err(|e| format!("{what} {} is not UTF-8 text (byte {} is not)", path.display(), e.utf8_error().valid_up_to()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bounded_regular_files_are_read() {
        let dir = std::env::temp_dir().join(format!("seedfall-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.json");
        std::fs::write(&f, "{}").unwrap();
        assert_eq!(read_text(&f, 10, "the config").unwrap(), "{}");
        assert!(read_text(&f, 1, "the config").unwrap_err().contains("holds 2 bytes, more than the 1"));
        assert!(read_text(&dir, 10, "the config").unwrap_err().ends_with("is a folder, expected a file"));
        assert!(read_text(&dir.join("nope"), 10, "the config").unwrap_err().ends_with("does not exist"));
        assert!(read_text(Path::new("/dev/zero"), 10, "the config").unwrap_err().contains("not a regular file"));
        assert_eq!(json_values(r#"{"a": [1, 2, "x,:[{"], "b": {}}"#, 100), 9);
        assert_eq!(json_values("[1,2,3,4,5]", 3), 4);
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(read_text(&f, 10, "the config").unwrap_err().contains("not UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
