//! The MCP server's front door: JSON-RPC errors the rmcp transport does not
//! send. rmcp drops a line that is not JSON without a word, and answers a
//! `tools/call` whose `arguments` is not an object with "method not found";
//! JSON-RPC 2.0 wants -32700 (parse error) and -32602 (invalid params). So
//! stdin goes through this gate: lines that would be answered wrongly are
//! answered here, the rest pass on to rmcp, and one writer task puts both
//! replies on stdout, a whole line at a time.
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Bound on one request line; a longer one is answered -32700 and skipped.
pub const LINE_BYTES_MAX: u64 = 16 << 20;
/// Bound on replies waiting for the writer.
const REPLIES_MAX: usize = 256;

fn error(id: Value, code: i64, message: String) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string()
}

/// The reply the gate gives a request line itself, if any.
pub fn answer_here(line: &str) -> Option<String> {
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Some(error(Value::Null, -32700, format!("Parse error: {e}"))),
    };
    if v["method"] == "tools/call" {
        let args = &v["params"]["arguments"];
        if !args.is_null() && !args.is_object() {
            return Some(error(v["id"].clone(), -32602, "Invalid params: the arguments of tools/call must be an object".into()));
        }
    }
    None
}

/// Starts the gate; rmcp serves the returned stream. The handle ends when
/// every reply is written.
pub fn start() -> (tokio::io::DuplexStream, tokio::task::JoinHandle<()>) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (from_rmcp, mut to_rmcp) = tokio::io::split(ours);
    let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(REPLIES_MAX);
    let gate_tx = tx.clone();
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        loop {
            let mut line = Vec::new();
            match (&mut stdin).take(LINE_BYTES_MAX + 1).read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if line.len() as u64 > LINE_BYTES_MAX && line.last() != Some(&b'\n') {
                // Skip the rest of the line, then say why.
                let mut rest = Vec::new();
                while !matches!(stdin.read_until(b'\n', &mut rest).await, Ok(0) | Err(_)) && rest.last() != Some(&b'\n') {
                    rest.clear();
                }
                let _ = gate_tx.send(error(Value::Null, -32700, format!("Parse error: a request line is longer than {LINE_BYTES_MAX} bytes"))).await;
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            if text.trim().is_empty() {
                continue;
            }
            match answer_here(text.trim_end()) {
                Some(reply) => {
                    if gate_tx.send(reply).await.is_err() {
                        break;
                    }
                }
                None => {
                    if to_rmcp.write_all(&line).await.is_err() || (line.last() != Some(&b'\n') && to_rmcp.write_all(b"\n").await.is_err()) {
                        break;
                    }
                }
            }
        }
        // End of input: rmcp sees it and stops.
        let _ = to_rmcp.shutdown().await;
    });
    tokio::spawn(async move {
        let mut replies = BufReader::new(from_rmcp);
        loop {
            let mut line = String::new();
            match replies.read_line(&mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line.trim_end_matches('\n').to_string()).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = rx.recv().await {
            if stdout.write_all(format!("{line}\n").as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    (theirs, writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_and_bad_arguments_get_json_rpc_errors() {
        let e: Value = serde_json::from_str(&answer_here("{not json").unwrap()).unwrap();
        assert_eq!((e["id"].clone(), e["error"]["code"].clone()), (Value::Null, json!(-32700)));
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"seedfall_run","arguments":[1,2]}}"#;
        let e: Value = serde_json::from_str(&answer_here(call).unwrap()).unwrap();
        assert_eq!((e["id"].clone(), e["error"]["code"].clone()), (json!(7), json!(-32602)));
        assert_eq!(answer_here(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}"#), None);
        assert_eq!(answer_here(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#), None);
    }
}
