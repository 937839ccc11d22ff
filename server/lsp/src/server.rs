//! The LSP handlers: thin. State lives in `state`, what is shown is derived
//! in `diagnostics` and `lenses`, long work runs in `jobs` (child processes),
//! file changes arrive through `watch`.
use crate::jobs::{Event, Jobs};
use crate::protocol::*;
use crate::state::State;
use crate::{diagnostics, lenses, watch};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::{Client, LanguageServer};

pub struct Backend {
    pub client: Client,
    pub state: Arc<State>,
    pub jobs: Arc<Jobs>,
    published: Arc<Mutex<BTreeSet<PathBuf>>>,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
}

fn err(message: impl Into<String>) -> Error {
    Error::invalid_params(message.into())
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend { client, state: Arc::default(), jobs: Arc::default(), published: Arc::default(), watcher: Mutex::new(None) }
    }

    /// Recomputes and publishes every diagnostic; files that no longer have
    /// any get an empty list (that is how a fixed failure disappears).
    async fn publish(client: &Client, state: &Arc<State>, published: &Arc<Mutex<BTreeSet<PathBuf>>>) {
        let s = state.clone();
        let Ok(now) = tokio::task::spawn_blocking(move || diagnostics::compute(&s)).await else { return };
        let stale: Vec<PathBuf> = {
            let mut p = published.lock().unwrap();
            let stale = p.iter().filter(|f| !now.contains_key(*f)).cloned().collect();
            *p = now.keys().cloned().collect();
            stale
        };
        for f in stale {
            if let Some(u) = uri(&f) {
                client.publish_diagnostics(u, Vec::new(), None).await;
            }
        }
        for (f, d) in now {
            if let Some(u) = uri(&f) {
                client.publish_diagnostics(u, d, None).await;
            }
        }
        let _ = client.code_lens_refresh().await;
    }

    async fn refresh_and_publish(&self, configs: Option<Vec<PathBuf>>) {
        let s = self.state.clone();
        let _ = tokio::task::spawn_blocking(move || match configs {
            Some(list) => list.iter().for_each(|c| s.refresh_config(c)),
            None => s.refresh_all(),
        })
        .await;
        Self::publish(&self.client, &self.state, &self.published).await;
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
        let (client, state, published) = (self.client.clone(), self.state.clone(), self.published.clone());
        tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                // Gather what arrives in the next few milliseconds: one refresh per burst.
                let mut changes = vec![first];
                tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                while let Ok(c) = rx.try_recv() {
                    changes.push(c);
                }
                let mut all = false;
                let mut paths = Vec::new();
                for c in changes {
                    match c {
                        watch::Change::Overflow => all = true,
                        watch::Change::Paths(p) => paths.extend(p.into_iter().filter(|p| watch::relevant(p))),
                    }
                }
                if paths.is_empty() && !all {
                    continue;
                }
                let config_added = paths.iter().any(|p| p.file_name().is_some_and(|n| crate::state::is_config_name(&n.to_string_lossy())));
                let before: BTreeSet<PathBuf> = state.configs.iter().flat_map(|c| c.failures.iter().map(|f| f.folder.clone()).collect::<Vec<_>>()).collect();
                let s = state.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    if all || config_added {
                        s.refresh_all();
                    } else {
                        let mut owners: BTreeSet<PathBuf> = BTreeSet::new();
                        for p in &paths {
                            owners.extend(s.owner_of(p));
                        }
                        owners.iter().for_each(|c| s.refresh_config(c));
                    }
                })
                .await;
                for c in state.configs.iter() {
                    for f in &c.failures {
                        if !before.contains(&f.folder) {
                            let v = json!({ "config": c.path, "seed": f.seed, "node": f.node, "message": f.message, "folder": f.folder,
                                "source": f.source.as_ref().map(|(p, l)| json!({ "file": p, "line": l })) });
                            client.send_notification::<FailureFound>(v).await;
                        }
                    }
                }
                Self::publish(&client, &state, &published).await;
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

    /// The CLI arguments of a command, from its JSON arguments.
    fn cli_args(&self, command: &str, args: &Value, config: &PathBuf) -> Result<Vec<String>> {
        let c = config.display().to_string();
        let mut v: Vec<String> = match command {
            "seedfall.run" => vec!["run".into(), "-c".into(), c, "--seeds".into(), args["seeds"].as_str().unwrap_or("1-100").into(), "--json".into(), "--progress".into()],
            "seedfall.explore" => vec![
                "explore".into(), "-c".into(), c, "--json".into(), "--events".into(),
                "--rounds".into(), args["rounds"].as_u64().unwrap_or(30).to_string(),
                "--batch".into(), args["batch"].as_u64().unwrap_or(8).to_string(),
            ],
            "seedfall.replay" => vec!["replay".into(), "-c".into(), c, "--json".into()],
            "seedfall.inspect" => vec!["inspect".into(), "-c".into(), c, "--json".into()],
            "seedfall.cause" => vec!["cause".into(), "-c".into(), c, "--json".into()],
            "seedfall.shrink" => vec!["shrink".into(), "-c".into(), c],
            "seedfall.pin" => vec!["pin".into(), "-c".into(), c],
            other => return Err(err(format!("unknown command {other}"))),
        };
        if matches!(command, "seedfall.replay" | "seedfall.inspect" | "seedfall.cause" | "seedfall.shrink" | "seedfall.pin") {
            match (args["seed"].as_u64(), args["faults"].as_str()) {
                (None, None) => return Err(err(format!("{command} needs {{\"seed\": N}} or {{\"faults\": file}}"))),
                (seed, faults) => {
                    if let Some(s) = seed {
                        v.extend(["--seed".into(), s.to_string()]);
                    }
                    if let Some(f) = faults {
                        v.extend(["--faults".into(), f.to_string()]);
                    }
                }
            }
        }
        Ok(v)
    }

    async fn status(&self, message: String) {
        let running: Vec<Value> = self.jobs.running.iter().map(|j| json!({ "token": j.key(), "title": j.title, "config": j.config })).collect();
        self.client.send_notification::<Status>(json!({ "message": message, "running": running })).await;
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
        let cli = self.cli_args(&params.command, &args, &config)?;
        let token = match params.work_done_progress_params.work_done_token {
            Some(NumberOrString::String(s)) => s,
            Some(NumberOrString::Number(n)) => n.to_string(),
            None => {
                let t = self.jobs.next_token();
                let _ = self.client.create_work_done_progress(NumberOrString::String(t.clone())).await;
                t
            }
        };
        let title = format!("seedfall {}", &params.command["seedfall.".len()..]);
        let progress = self.client.progress(NumberOrString::String(token.clone()), title.clone()).with_percentage(0).with_cancel_button().begin().await;
        self.status(format!("{title}: started")).await;
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Event>(256);
        let jobs = self.jobs.clone();
        let run_config = config.clone();
        let job = tokio::spawn(async move {
            jobs.run(&token, &title, Some(run_config), cli, |e| {
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
                        progress.report_with_message(format!("{done}/{total} runs"), pct, None).await;
                    }
                }
                Event::Round(r) => {
                    let msg = format!("exploring: round {}, corpus {}, {} failures", r["round"], r["corpus"], r["failures"]);
                    progress.report_with_message(msg.clone(), 0, None).await;
                    rounds.push(r.clone());
                    self.state.rounds.insert(config.clone(), rounds.clone());
                    self.client.send_notification::<RoundFinished>(json!({ "config": config, "round": r })).await;
                    self.status(msg).await;
                }
            }
        }
        let out = job.await.map_err(|_| Error::internal_error())?.map_err(err)?;
        progress.finish_with_message(if out.cancelled { "cancelled" } else { "done" }).await;
        self.status(String::new()).await;
        self.refresh_and_publish(Some(vec![config])).await;
        if out.cancelled {
            return Ok(Some(json!({ "cancelled": true })));
        }
        let parsed: Value = if params.command == "seedfall.inspect" {
            Value::Array(out.stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
        } else {
            serde_json::from_str(&out.stdout).unwrap_or_else(|_| Value::String(out.stdout.clone()))
        };
        if out.code == 2 {
            return Err(err(out.stderr.trim().to_string()));
        }
        Ok(Some(json!({ "exit": out.code, "result": parsed })))
    }

    // Custom requests (docs/lsp.md).
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
                    "time_ns": f.time_ns, "folder": f.folder, "faults": f.folder.join("faults.json"),
                    "source": f.source.as_ref().map(|(p, l)| json!({ "file": p, "line": l })),
                }));
            }
        }
        Ok(Value::Array(out))
    }
    pub async fn properties(&self, _p: Value) -> Result<Value> {
        Ok(Value::Array(self.state.configs.iter().map(|c| json!({ "config": c.path, "last_run": c.last_run })).collect()))
    }
    pub async fn timeline(&self, p: Value) -> Result<Value> {
        let params = ExecuteCommandParams { command: "seedfall.inspect".into(), arguments: vec![p], work_done_progress_params: Default::default() };
        Ok(self.execute(params).await?.and_then(|v| v.get("result").cloned()).unwrap_or(Value::Null))
    }
    pub async fn malformed(&self, p: Value) {
        let why = p["error"].as_str().unwrap_or("malformed");
        self.client.log_message(MessageType::ERROR, format!("seedfall: ignored a malformed message from the client ({why})")).await;
    }

    pub async fn cancel_progress(&self, p: WorkDoneProgressCancelParams) {
        let token = match p.token {
            NumberOrString::String(s) => s,
            NumberOrString::Number(n) => n.to_string(),
        };
        self.jobs.cancel(&token);
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
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
                execute_command_provider: Some(ExecuteCommandOptions { commands: COMMANDS.iter().map(|c| c.to_string()).collect(), ..Default::default() }),
                ..Default::default()
            },
            server_info: Some(ServerInfo { name: "seedfall".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.refresh_and_publish(None).await;
        self.start_watching();
        let n = self.state.configs.len();
        self.client.log_message(MessageType::INFO, format!("seedfall: watching {n} config{}", if n == 1 { "" } else { "s" })).await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.jobs.stop(None);
        Ok(())
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        self.text_changed(&p.text_document.uri, Some(p.text_document.text)).await;
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        if let Some(change) = p.content_changes.into_iter().last() {
            self.text_changed(&p.text_document.uri, Some(change.text)).await;
        }
    }

    async fn did_close(&self, p: DidCloseTextDocumentParams) {
        self.text_changed(&p.text_document.uri, None).await;
    }

    async fn code_lens(&self, p: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let file = path(&p.text_document.uri).ok_or_else(|| err("not a file URI"))?;
        if !self.state.within_roots(&file) {
            return Err(err(format!("{} is outside the workspace", file.display())));
        }
        let s = self.state.clone();
        let lenses = tokio::task::spawn_blocking(move || lenses::for_file(&s, &file)).await.map_err(|_| Error::internal_error())?;
        Ok(Some(lenses))
    }

    async fn execute_command(&self, p: ExecuteCommandParams) -> Result<Option<Value>> {
        self.execute(p).await
    }
}

impl Backend {
    /// A config being typed is checked against the editor's text, not the disk's.
    async fn text_changed(&self, u: &Uri, text: Option<String>) {
        let Some(p) = path(u) else { return };
        let is_config = p.file_name().is_some_and(|n| crate::state::is_config_name(&n.to_string_lossy()));
        if !is_config || !self.state.within_roots(&p) {
            return;
        }
        match text {
            Some(t) => {
                self.state.open_texts.insert(p.clone(), t);
            }
            None => {
                self.state.open_texts.remove(&p);
            }
        }
        self.refresh_and_publish(Some(vec![p])).await;
    }
}
