//! Background work: every command runs the `seedfall` binary as a child
//! process (so the CLI and the editor write the same artifacts, and a guest
//! that brings the engine down cannot bring the daemon down), reporting
//! `$/progress` from the child's progress lines (`progress`) and cancelled
//! by killing it.
use crate::progress::{self, Event, Line};
use dashmap::DashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::oneshot;

/// Bound on jobs running at once; more are refused with a clear error.
pub const JOBS_MAX: usize = 8;
/// Bound on a child's stdout kept (a timeline can be large).
const STDOUT_BYTES_MAX: usize = 64 << 20;

pub struct Job {
    pub title: String,
    pub config: Option<PathBuf>,
    pub kill: Option<oneshot::Sender<()>>,
}

#[derive(Default)]
pub struct Jobs {
    pub running: DashMap<String, Job>,
    seq: AtomicU64,
}

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub cancelled: bool,
}

pub fn exe() -> PathBuf {
    std::env::var_os("SEEDFALL_BIN").map(PathBuf::from).or_else(|| std::env::current_exe().ok()).unwrap_or_else(|| PathBuf::from("seedfall"))
}

impl Jobs {
    pub fn next_token(&self) -> String {
        format!("seedfall-{}", self.seq.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Cancels the job with this progress token; true if there was one.
    pub fn cancel(&self, token: &str) -> bool {
        match self.running.get_mut(token) {
            Some(mut j) => {
                if let Some(k) = j.kill.take() {
                    let _ = k.send(());
                }
                true
            }
            None => false,
        }
    }

    /// Cancels every job (of one config, when given).
    pub fn stop(&self, config: Option<&PathBuf>) -> usize {
        let tokens: Vec<String> = self.running.iter().filter(|j| config.is_none() || j.config.as_ref() == config).map(|j| j.key().clone()).collect();
        tokens.iter().filter(|t| self.cancel(t)).count()
    }

    /// Runs `seedfall <args>` to the end, calling `on_event` for progress and
    /// round lines. The job is registered under `token` while it runs.
    pub async fn run(&self, token: &str, title: &str, config: Option<PathBuf>, args: Vec<String>, mut on_event: impl FnMut(Event)) -> Result<Output, String> {
        if self.running.len() >= JOBS_MAX {
            return Err(format!("{JOBS_MAX} seedfall jobs are running already; stop one first"));
        }
        let mut command = tokio::process::Command::new(exe());
        // Paths the CLI prints are relative to its folder: the config's reads best.
        if let Some(dir) = config.as_ref().and_then(|c| c.parent()).filter(|d| d.is_dir()) {
            command.current_dir(dir);
        }
        let mut child = command
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe().display()))?;
        let (kill_tx, mut kill_rx) = oneshot::channel();
        self.running.insert(token.to_string(), Job { title: title.to_string(), config, kill: Some(kill_tx) });
        let mut stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let out_task = tokio::spawn(async move {
            let mut buf = Vec::new();
            let _ = (&mut stdout).take(STDOUT_BYTES_MAX as u64).read_to_end(&mut buf).await;
            String::from_utf8_lossy(&buf).into_owned()
        });
        let mut lines = BufReader::new(stderr).lines();
        let mut err_text = String::new();
        let mut cancelled = false;
        loop {
            tokio::select! {
                line = lines.next_line() => match line {
                    Ok(Some(l)) => match progress::parse(&l) {
                        Line::Event(e) => on_event(e),
                        Line::Text if err_text.len() < 64 << 10 => {
                            err_text.push_str(&l);
                            err_text.push('\n');
                        }
                        Line::Garbled | Line::Text => {}
                    },
                    _ => break,
                },
                _ = &mut kill_rx, if !cancelled => {
                    cancelled = true;
                    let _ = child.start_kill();
                }
            }
        }
        let status = child.wait().await.map_err(|e| e.to_string())?;
        let stdout = out_task.await.unwrap_or_default();
        self.running.remove(token);
        Ok(Output { code: status.code().unwrap_or(-1), stdout, stderr: err_text, cancelled })
    }
}
