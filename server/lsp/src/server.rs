//! The LSP handlers: thin, and none waits on the client. State lives in
//! `state`; what is shown is derived in `diagnostics` and `lenses` and
//! published by `refresh`; long work runs in `jobs` (child processes); file
//! changes arrive through `watch`.
use crate::commands::{self, COMMANDS};
use crate::jobs::{Jobs, JOBS_MAX};
use crate::progress::Event;
use crate::protocol::*;
use crate::refresh::{self, ClientCaps, Inbox, LensCache};
use crate::state::State;
use crate::watch;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::{Client, LanguageServer};

/// How long a client may take to accept a progress token before the job
/// runs on without progress.
const PROGRESS_CREATE_ANSWER_MAX: Duration = Duration::from_secs(10);

pub struct Backend {
    pub client: Client,
    pub state: Arc<State>,
    pub jobs: Arc<Jobs>,
    inbox: Arc<Inbox>,
    caps: OnceLock<ClientCaps>,
    lenses: LensCache,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// The editor's text of each open config as of the last change, kept
    /// here as it arrives (the refresh loop takes its time): completion
    /// positions refer to exactly this text.
    buffers: dashmap::DashMap<PathBuf, String>,
    /// A `shutdown` request came.
    shut_down: Arc<std::sync::atomic::AtomicBool>,
}

fn err(message: impl Into<String>) -> Error {
    Error::invalid_params(message.into())
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend::with(client, Arc::default(), Arc::default())
    }

    /// A backend whose jobs and shutdown flag its caller holds too: the
    /// daemon cancels the jobs when the client goes away, and exits 1 on
    /// an `exit` that no `shutdown` came before (as LSP says).
    pub fn with(client: Client, jobs: Arc<Jobs>, shut_down: Arc<std::sync::atomic::AtomicBool>) -> Backend {
        Backend { client, state: Arc::default(), jobs, inbox: Arc::default(), caps: OnceLock::new(), lenses: Arc::default(), watcher: Mutex::new(None), buffers: Default::default(), shut_down }
    }

    fn caps(&self) -> ClientCaps {
        self.caps.get().copied().unwrap_or_default()
    }

    fn start_watching(&self) {
        let roots = self.state.roots.read().unwrap().clone();
        let (watcher, mut rx) = match watch::start(&roots) {
            Ok(x) => x,
            Err(e) => {
                let client = self.client.clone();
                tokio::spawn(async move { client.log_message(MessageType::WARNING, e).await });
                return;
            }
        };
        *self.watcher.lock().unwrap() = Some(watcher);
        let inbox = self.inbox.clone();
        tokio::spawn(async move {
            while let Some(change) = rx.recv().await {
                match change {
                    watch::Change::Overflow => inbox.rescan(),
                    watch::Change::Paths(p) => {
                        let relevant: Vec<PathBuf> = p.into_iter().filter(|p| watch::relevant(p)).collect();
                        if !relevant.is_empty() {
                            inbox.files(relevant);
                        }
                    }
                }
            }
        });
    }

    fn config_arg(&self, args: &Value) -> Result<PathBuf> {
        let config = match args["config"].as_str() {
            Some(c) => PathBuf::from(c),
            None => {
                // The only config of the workspace, when there is exactly one.
                let all: Vec<PathBuf> = self.state.configs.iter().map(|c| c.key().clone()).collect();
                match all.as_slice() {
                    [one] => one.clone(),
                    [] => return Err(err("no seedfall config in the workspace")),
                    _ => return Err(err("several configs: pass {\"config\": path}")),
                }
            }
        };
        if !self.state.within_roots(&config) {
            return Err(err(format!("{} is outside the workspace", config.display())));
        }
        Ok(config)
    }

    async fn status(&self, message: String) {
        let running: Vec<Value> = self.jobs.running.iter().map(|j| json!({ "token": j.key(), "title": j.title, "config": j.config })).collect();
        self.client.send_notification::<Status>(json!({ "message": message, "running": running })).await;
    }

    /// The progress token of a command: the client's, or one the daemon
    /// asks a client that offered progress to create. The request is not
    /// awaited here: `Progress::ready` begins reporting once it is accepted.
    fn progress_for(&self, given: Option<NumberOrString>, title: &str) -> Progress {
        let token = match given {
            Some(NumberOrString::String(s)) => s,
            Some(NumberOrString::Number(n)) => n.to_string(),
            None if self.caps().work_done_progress => {
                let token = self.jobs.next_token();
                let (tx, rx) = tokio::sync::oneshot::channel();
                let client = self.client.clone();
                let t = NumberOrString::String(token.clone());
                tokio::spawn(async move {
                    let accepted = matches!(tokio::time::timeout(PROGRESS_CREATE_ANSWER_MAX, client.create_work_done_progress(t)).await, Ok(Ok(())));
                    let _ = tx.send(accepted);
                });
                return Progress { token, title: title.to_string(), client: self.client.clone(), state: ProgressState::Creating(rx) };
            }
            None => return Progress { token: self.jobs.next_token(), title: title.to_string(), client: self.client.clone(), state: ProgressState::Off },
        };
        Progress { token, title: title.to_string(), client: self.client.clone(), state: ProgressState::Accepted }
    }

    async fn execute(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let args = params.arguments.first().cloned().unwrap_or(json!({}));
        if params.command == "seedfall.stop" {
            let config = args["config"].as_str().map(PathBuf::from);
            let n = self.jobs.stop(config.as_ref());
            return Ok(Some(json!({ "stopped": n })));
        }
        if !COMMANDS.contains(&params.command.as_str()) {
            return Err(err(format!("unknown command {}", params.command)));
        }
        let config = self.config_arg(&args)?;
        let cli = commands::cli_args(&params.command, &args, &config).map_err(err)?;
        if self.jobs.running.len() >= JOBS_MAX {
            return Err(err(format!("{JOBS_MAX} seedfall jobs are running already; stop one first")));
        }
        let title = format!("seedfall {}", &params.command["seedfall.".len()..]);
        let mut progress = self.progress_for(params.work_done_progress_params.work_done_token, &title);
        progress.ready(None, 0).await;
        self.status(format!("{title}: started")).await;
        self.inbox.job_started(config.clone());
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Event>(256);
        let jobs = self.jobs.clone();
        let (token, run_config, job_title) = (progress.token.clone(), config.clone(), title.clone());
        let job = tokio::spawn(async move {
            jobs.run(&token, &job_title, Some(run_config), cli, |e| {
                let _ = tx.try_send(e);
            })
            .await
        });
        let mut last_pct = 0;
        let mut rounds = Vec::new();
        while let Some(e) = rx.recv().await {
            match e {
                Event::Progress { done, total } => {
                    let pct = (done * 100 / total.max(1)) as u32;
                    if pct != last_pct {
                        last_pct = pct;
                        progress.ready(Some(format!("{done}/{total} runs")), pct).await;
                    }
                }
                Event::Round(r) => {
                    let msg = format!("exploring: round {}, corpus {}, {} failures", r["round"], r["corpus"], r["failures"]);
                    progress.ready(Some(msg.clone()), 0).await;
                    rounds.push(r.clone());
                    self.state.rounds.insert(config.clone(), rounds.clone());
                    self.client.send_notification::<RoundFinished>(json!({ "config": config, "round": r })).await;
                    self.status(msg).await;
                }
            }
        }
        let out = job.await.map_err(|_| Error::internal_error());
        // Whatever the job did, the config is reread before the answer, so
        // a client that asks right after sees the new state.
        self.inbox.job_ended(config.clone()).await;
        let out = out?.map_err(err)?;
        progress.finish(if out.cancelled { "cancelled" } else { "done" }).await;
        self.status(String::new()).await;
        if out.cancelled {
            return Ok(Some(json!({ "cancelled": true })));
        }
        if out.code == 2 || out.code < 0 {
            let why = if out.stderr.trim().is_empty() { format!("seedfall exited with {}", out.code) } else { out.stderr.trim().to_string() };
            return Err(err(why));
        }
        Ok(Some(commands::answer(&params.command, out.code, &out.stdout)))
    }

    // Custom requests (docs/lsp.md).
    pub async fn configs(&self, _p: Value) -> Result<Value> {
        let mut all: Vec<Value> = self
            .state
            .configs
            .iter()
            .map(|c| json!({ "config": c.path, "name": c.parsed.as_ref().ok().map(|p| p.name.clone()), "error": c.parsed.as_ref().err().map(|e| format!("{}: {}", e.json_path, e.message)) }))
            .collect();
        all.sort_by(|a, b| a["config"].as_str().cmp(&b["config"].as_str()));
        Ok(Value::Array(all))
    }
    pub async fn corpus(&self, _p: Value) -> Result<Value> {
        Ok(Value::Array(self.state.configs.iter().map(|c| json!({ "config": c.path, "entries": c.corpus, "stale": c.stale_corpus })).collect()))
    }
    pub async fn rounds(&self, _p: Value) -> Result<Value> {
        Ok(Value::Array(self.state.rounds.iter().map(|r| json!({ "config": r.key(), "rounds": r.value() })).collect()))
    }
    pub async fn failures(&self, _p: Value) -> Result<Value> {
        let mut out = Vec::new();
        for c in self.state.configs.iter() {
            for f in &c.failures {
                out.push(json!({
                    "config": c.path, "seed": f.seed, "node": f.node, "kind": f.kind, "message": f.message, "details": f.details,
                    "time_ns": f.time_ns, "folder": f.folder, "faults": f.folder.join("faults.json"), "finding_seeds": f.finding_seeds,
                    "source": f.source.as_ref().map(|(p, l)| json!({ "file": p, "line": l })),
                }));
            }
        }
        Ok(Value::Array(out))
    }
    pub async fn properties(&self, _p: Value) -> Result<Value> {
        Ok(Value::Array(
            self.state
                .configs
                .iter()
                .map(|c| {
                    // Sources resolved against the config's folder, as every path the daemon hands out.
                    let mut last = c.last_run.clone();
                    for p in last.as_mut().and_then(|l| l["properties"].as_array_mut()).into_iter().flatten() {
                        if let Some(f) = p["source"]["file"].as_str() {
                            p["source"]["file"] = json!(c.resolve(f));
                        }
                    }
                    json!({ "config": c.path, "last_run": last, "catalog": c.catalog })
                })
                .collect(),
        ))
    }
    pub async fn timeline(&self, p: Value) -> Result<Value> {
        let params = ExecuteCommandParams { command: "seedfall.inspect".into(), arguments: vec![p], work_done_progress_params: Default::default() };
        Ok(self.execute(params).await?.and_then(|v| v.get("result").cloned()).unwrap_or(Value::Null))
    }

    pub async fn cancel_progress(&self, p: WorkDoneProgressCancelParams) {
        let token = match p.token {
            NumberOrString::String(s) => s,
            NumberOrString::Number(n) => n.to_string(),
        };
        self.jobs.cancel(&token);
    }

    /// A config being typed is checked against the editor's text, not the disk's.
    fn text_changed(&self, u: &Uri, text: Option<String>) {
        let Some(p) = path(u) else { return };
        let is_config = p.file_name().is_some_and(|n| crate::state::is_config_name(&n.to_string_lossy()));
        if is_config && self.state.within_roots(&p) {
            match &text {
                Some(t) if self.buffers.len() < crate::state::CONFIGS_MAX || self.buffers.contains_key(&p) => {
                    self.buffers.insert(p.clone(), t.clone());
                }
                Some(_) => {}
                None => {
                    self.buffers.remove(&p);
                }
            }
            self.inbox.text(p, text);
        }
    }
}

enum ProgressState {
    /// The client has not offered progress: none is reported.
    Off,
    /// The daemon asked the client to create the token; not answered yet.
    Creating(tokio::sync::oneshot::Receiver<bool>),
    /// The token may be used; `begin` not sent yet.
    Accepted,
    Begun(tower_lsp_server::OngoingProgress<tower_lsp_server::Bounded, tower_lsp_server::Cancellable>),
}

/// `$/progress` of one command, begun only once its token may be used.
struct Progress {
    token: String,
    title: String,
    client: Client,
    state: ProgressState,
}

impl Progress {
    /// Reports (beginning first, when the token has just become usable).
    async fn ready(&mut self, message: Option<String>, pct: u32) {
        if let ProgressState::Creating(rx) = &mut self.state {
            self.state = match rx.try_recv() {
                Ok(true) => ProgressState::Accepted,
                Err(tokio::sync::oneshot::error::TryRecvError::Empty) => return,
                Ok(false) | Err(_) => ProgressState::Off,
            };
        }
        match std::mem::replace(&mut self.state, ProgressState::Off) {
            ProgressState::Accepted => {
                let p = self.client.progress(NumberOrString::String(self.token.clone()), self.title.clone()).with_percentage(pct).with_cancel_button().begin().await;
                self.state = ProgressState::Begun(p);
            }
            ProgressState::Begun(p) => {
                if let Some(m) = message {
                    p.report_with_message(m, pct, None).await;
                }
                self.state = ProgressState::Begun(p);
            }
            other => self.state = other,
        }
    }

    async fn finish(self, message: &str) {
        if let ProgressState::Begun(p) = self.state {
            p.finish_with_message(message.to_string()).await;
        }
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        #[allow(deprecated)]
        let mut roots: Vec<PathBuf> = params.workspace_folders.unwrap_or_default().iter().filter_map(|f| path(&f.uri)).collect();
        #[allow(deprecated)]
        if roots.is_empty() {
            if let Some(p) = params.root_uri.as_ref().and_then(path) {
                roots.push(p);
            }
        }
        *self.state.roots.write().unwrap() = roots;
        let _ = self.caps.set(ClientCaps::of(&params.capabilities));
        // The first scan happens before the answer: lens requests that
        // follow find the workspace read, and need no refresh later.
        let (s, cache) = (self.state.clone(), self.lenses.clone());
        let _ = tokio::task::spawn_blocking(move || {
            s.refresh_all();
            *cache.write().unwrap() = crate::lenses::all(&s);
        })
        .await;
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
                completion_provider: Some(CompletionOptions { trigger_characters: Some(vec!["\"".into(), "[".into(), ",".into()]), ..Default::default() }),
                execute_command_provider: Some(ExecuteCommandOptions { commands: COMMANDS.iter().map(|c| c.to_string()).collect(), ..Default::default() }),
                ..Default::default()
            },
            server_info: Some(ServerInfo { name: "seedfall".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        tokio::spawn(refresh::run(self.inbox.clone(), self.state.clone(), self.client.clone(), self.caps(), self.lenses.clone()));
        // The loop's first batch publishes what the scan found.
        self.inbox.rescan();
        self.start_watching();
        let n = self.state.configs.len();
        self.client.log_message(MessageType::INFO, format!("seedfall: watching {n} config{}", if n == 1 { "" } else { "s" })).await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.jobs.stop(None);
        self.shut_down.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        self.text_changed(&p.text_document.uri, Some(p.text_document.text));
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        if let Some(change) = p.content_changes.into_iter().last() {
            self.text_changed(&p.text_document.uri, Some(change.text));
        }
    }

    async fn did_close(&self, p: DidCloseTextDocumentParams) {
        self.text_changed(&p.text_document.uri, None);
    }

    async fn code_lens(&self, p: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let file = path(&p.text_document.uri).ok_or_else(|| err("not a file URI"))?;
        if !self.state.within_roots(&file) {
            return Err(err(format!("{} is outside the workspace", file.display())));
        }
        Ok(Some(self.lenses.read().unwrap().get(&file).cloned().unwrap_or_default()))
    }

    /// Node names inside a fault's `nodes` in a config (`completion`).
    async fn completion(&self, p: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = p.text_document_position;
        let file = path(&at.text_document.uri).ok_or_else(|| err("not a file URI"))?;
        if !self.state.within_roots(&file) {
            return Err(err(format!("{} is outside the workspace", file.display())));
        }
        let text = match self.buffers.get(&file) {
            Some(t) => t.clone(),
            None => match self.state.configs.get(&file) {
                Some(c) => c.text.clone(),
                None => return Ok(None),
            },
        };
        let known: Vec<String> = self.state.configs.get(&file).and_then(|c| c.parsed.as_ref().ok().map(|c| c.nodes.iter().map(|n| n.name.clone()).collect())).unwrap_or_default();
        let names = crate::completion::node_names(&text, &known);
        let offset = crate::completion::offset(&text, at.position.line, at.position.character);
        Ok(Some(CompletionResponse::Array(crate::completion::items(&text, offset, &names))))
    }

    async fn execute_command(&self, p: ExecuteCommandParams) -> Result<Option<Value>> {
        self.execute(p).await
    }
}
