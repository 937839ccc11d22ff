//! A guard in front of the LSP transport: the transport stops reading after
//! one undecodable message, which would end the daemon. Every frame from the
//! client is checked here first; a body that is not JSON is replaced by a
//! `$/seedfall/malformed` notification (which the daemon answers with a log
//! message), so the daemon keeps serving.
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Bound on one message from the client.
pub const FRAME_BYTES_MAX: usize = 64 << 20;

pub const MALFORMED: &str = "$/seedfall/malformed";

async fn write_frame(out: &mut tokio::io::DuplexStream, body: &[u8]) -> std::io::Result<()> {
    out.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes()).await?;
    out.write_all(body).await
}

/// Copies framed messages from `input` to `out`, replacing bodies that are
/// not JSON. Ends when `input` ends.
pub async fn guard(input: impl tokio::io::AsyncRead + Unpin, mut out: tokio::io::DuplexStream) {
    let mut reader = BufReader::new(input);
    loop {
        let mut length: Option<usize> = None;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let l = line.trim_end();
            if l.is_empty() {
                if length.is_some() {
                    break;
                }
                continue;
            }
            if let Some(v) = l.strip_prefix("Content-Length:") {
                length = v.trim().parse().ok();
            }
        }
        let n = length.unwrap_or(0);
        if n > FRAME_BYTES_MAX {
            // Too large to hold: skip it, and say so.
            let mut skip = (&mut reader).take(n as u64);
            if tokio::io::copy(&mut skip, &mut tokio::io::sink()).await.is_err() {
                return;
            }
            let note = serde_json::json!({ "jsonrpc": "2.0", "method": MALFORMED, "params": { "error": format!("a message of {n} bytes is over the {FRAME_BYTES_MAX}-byte limit") } });
            if write_frame(&mut out, note.to_string().as_bytes()).await.is_err() {
                return;
            }
            continue;
        }
        let mut body = vec![0u8; n];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let forwarded = match serde_json::from_slice::<serde_json::Value>(&body) {
            Ok(v) if v.is_object() => body,
            Ok(_) | Err(_) => {
                let error = match serde_json::from_slice::<serde_json::Value>(&body) {
                    Ok(_) => "not a JSON-RPC object".to_string(),
                    Err(e) => format!("not JSON: {e}"),
                };
                serde_json::json!({ "jsonrpc": "2.0", "method": MALFORMED, "params": { "error": error } }).to_string().into_bytes()
            }
        };
        if write_frame(&mut out, &forwarded).await.is_err() {
            return;
        }
    }
}
