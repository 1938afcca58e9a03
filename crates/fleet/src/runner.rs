//! A runner's side of the fleet: take calls from gateways and run them here, in the
//! sandbox, on warm workers, reporting progress and the result on the call's inbox.
//!
//! A runner holds no database credentials: it gets a tool's bundle from the gateways (by
//! the name the call carries, checked against the bytes) and a call's environment with the
//! call. It takes at most `slots` calls at once and answers `busy` beyond, so a gateway
//! tries another runner at once. Every second it asks each gateway whose calls it runs
//! whether they are still waited for: a gateway that is gone ("no responders", or silent
//! for three seconds) has its calls cancelled, then killed after the grace.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use toolhost_runtime::{
    CallEvent, CallRequest as RuntimeCall, Canceller, Runtime, RuntimeConfig, ToolEnv, ToolRef,
    ToolResult, UserSpace,
};

use crate::members::ANNOUNCE_EVERY;
use crate::metrics::Counters;
use crate::wire::{self, ACCEPT_WITHIN, Announcement, CallEnv, CallRequest, Frame};
use crate::{FleetError, bundle};

/// A gateway silent this many times in a row is taken for gone.
const SILENT_ASKS: u32 = 3;

/// What a runner needs besides its NATS connection.
pub struct RunnerOptions {
    /// Its node id (its subjects, and its NATS user unless told otherwise).
    pub node: String,
    /// Calls at once.
    pub slots: usize,
    /// `[runtime]` and `[sandbox]` of this host.
    pub runtime: RuntimeConfig,
    /// Where users' homes are (shared with the gateways' view of them).
    pub homes: PathBuf,
    /// Where bundles are unpacked.
    pub bundles: PathBuf,
}

/// A runner in the fleet. Dropping it stops taking calls.
pub struct Runner {
    shared: Arc<Shared>,
    tasks: Vec<JoinHandle<()>>,
}

struct Shared {
    node: String,
    client: async_nats::Client,
    options: RunnerOptions,
    running: Mutex<HashMap<String, Taken>>,
    runtimes: tokio::sync::Mutex<HashMap<[u8; 32], Runtime>>,
    tools: Mutex<HashMap<String, Arc<toolhost_catalog::Tool>>>,
    finished: AtomicU64,
    started_at: u64,
    counters: Counters,
}

/// A call this runner took.
struct Taken {
    gateway: String,
    canceller: Option<Canceller>,
    kill: Arc<Notify>,
}

impl Drop for Runner {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Runner {
    /// Joins the fleet on `client`: takes calls, answers cancellations, announces itself
    /// every second and checks on the gateways whose calls it runs.
    pub async fn start(
        client: async_nats::Client,
        options: RunnerOptions,
    ) -> Result<Runner, FleetError> {
        if options.slots == 0 {
            return Err(FleetError::Config(
                "[cluster] slots is 0: the runner would take no call".into(),
            ));
        }
        std::fs::create_dir_all(&options.bundles).map_err(|e| {
            FleetError::Config(format!("cannot make {}: {e}", options.bundles.display()))
        })?;
        let nats = |e: async_nats::SubscribeError| FleetError::Nats(e.to_string());
        let shared = Arc::new(Shared {
            node: options.node.clone(),
            client: client.clone(),
            options,
            running: Mutex::default(),
            runtimes: tokio::sync::Mutex::default(),
            tools: Mutex::default(),
            finished: AtomicU64::new(0),
            started_at: crate::now_ms(),
            counters: Counters::default(),
        });
        let calls = client
            .subscribe(wire::call_subject(&shared.node))
            .await
            .map_err(nats)?;
        let cancels = client
            .subscribe(wire::cancel_filter(&shared.node))
            .await
            .map_err(nats)?;
        let tasks = vec![
            tokio::spawn(take_calls(calls, Arc::clone(&shared))),
            tokio::spawn(hear_cancels(cancels, Arc::clone(&shared))),
            tokio::spawn(announce(Arc::clone(&shared))),
            tokio::spawn(check_gateways(Arc::clone(&shared))),
        ];
        client
            .flush()
            .await
            .map_err(|e| FleetError::Nats(e.to_string()))?;
        Ok(Runner { shared, tasks })
    }

    /// Calls running now.
    pub fn running(&self) -> usize {
        self.shared.running().len()
    }

    /// The runner's counters and gauges, in Prometheus's text format.
    pub async fn metrics(&self) -> String {
        let mut out = String::new();
        self.shared.counters.render(&mut out);
        let mut workers = 0;
        for runtime in self.shared.runtimes.lock().await.values() {
            workers += runtime.workers().await;
        }
        crate::metrics::render_node(
            &mut out,
            "runner",
            self.running(),
            self.shared.options.slots,
            workers,
        );
        out
    }

    /// Stops taking calls and waits (at most `within`) for those running to end.
    pub async fn drain(&self, within: Duration) {
        // The first task takes calls: without it the runner's subject has no subscriber
        // once the subscription is dropped, and gateways get "no responders" at once.
        if let Some(taking) = self.tasks.first() {
            taking.abort();
        }
        let until = Instant::now() + within;
        while !self.shared.running().is_empty() && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Shared {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Taken>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn announcement(&self, workers: usize) -> Announcement {
        Announcement {
            node: self.node.clone(),
            role: "runner".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            started_at: self.started_at,
            running: self.running().len(),
            slots: self.options.slots,
            finished: self.finished.load(Ordering::Relaxed),
            workers,
            epoch: 0,
        }
    }

    /// The runtime for calls with environment `env` (one per environment; usually one).
    async fn runtime(&self, env: &CallEnv) -> Result<Runtime, String> {
        let key = env.fingerprint();
        let mut runtimes = self.runtimes.lock().await;
        if let Some(runtime) = runtimes.get(&key) {
            return Ok(runtime.clone());
        }
        // Tools may tell which runner ran them (as they may read the host name).
        let mut vars = env.vars.clone();
        vars.insert("TOOLHOST_RUNNER".into(), self.node.clone());
        let tool_env = ToolEnv {
            vars,
            resources: env.resources.clone(),
            tools_dirs: vec![self.options.bundles.clone()],
            homes: Some(self.options.homes.clone()),
        };
        let runtime = Runtime::new(self.options.runtime.clone(), tool_env)
            .map_err(|e| format!("the runner's runtime cannot start: {e}"))?;
        runtimes.insert(key, runtime.clone());
        Ok(runtime)
    }

    /// The tool in bundle `hash`: unpacked here before, or fetched from a gateway.
    async fn tool(&self, hash: &str) -> Result<Arc<toolhost_catalog::Tool>, String> {
        if let Some(tool) = self
            .tools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(hash)
        {
            return Ok(Arc::clone(tool));
        }
        let root = self.options.bundles.clone();
        let dir = root.join(hash);
        if !dir.is_dir() {
            let packed = fetch_bundle(&self.client, hash).await?;
            Counters::note(&self.counters.bundles);
            let (hash_owned, root2) = (hash.to_string(), root.clone());
            tokio::task::spawn_blocking(move || bundle::unpack(&packed, &hash_owned, &root2))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("the tool's bundle {hash}: {e}"))?;
        }
        let tool = toolhost_catalog::load_tool(&root, &dir).map_err(|diagnostics| {
            let why: Vec<String> = diagnostics.iter().map(|d| d.to_string()).collect();
            format!("the tool's bundle {hash} is not a tool: {}", why.join("; "))
        })?;
        self.tools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(hash.to_string(), Arc::clone(&tool));
        Ok(tool)
    }
}

/// Fetches bundle `hash` from the gateways, part by part.
async fn fetch_bundle(client: &async_nats::Client, hash: &str) -> Result<Vec<u8>, String> {
    let mut packed = Vec::new();
    loop {
        let ask = wire::BundleAsk {
            hash: hash.to_string(),
            offset: packed.len(),
        };
        let body = serde_json::to_vec(&ask).map_err(|e| e.to_string())?;
        let reply = tokio::time::timeout(
            Duration::from_secs(10),
            client.request(wire::BUNDLE_SUBJECT, body.into()),
        )
        .await
        .map_err(|_| format!("no gateway sent the tool's bundle {hash} within 10 s"))?
        .map_err(|e| format!("cannot get the tool's bundle {hash} from a gateway: {e}"))?;
        let header = |name: &str| {
            reply
                .headers
                .as_ref()
                .and_then(|h| h.get(name))
                .map(|v| v.as_str().to_string())
        };
        if let Some(error) = header(wire::ERROR_HEADER) {
            return Err(format!("the gateway has no bundle {hash}: {error}"));
        }
        let size: usize = header(wire::SIZE_HEADER)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("the gateway's reply for bundle {hash} gives no size"))?;
        if size > bundle::MAX_BYTES as usize * 2 {
            return Err(format!("the bundle {hash} is too big ({size} bytes)"));
        }
        if reply.payload.is_empty() && packed.len() < size {
            return Err(format!("the gateway sent bundle {hash} short"));
        }
        packed.extend_from_slice(&reply.payload);
        if packed.len() >= size {
            return Ok(packed);
        }
    }
}

async fn take_calls(mut sub: async_nats::Subscriber, shared: Arc<Shared>) {
    while let Some(message) = sub.next().await {
        let Some(reply) = message.reply else { continue };
        let request = match serde_json::from_slice::<CallRequest>(&message.payload) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("a call request that is not one: {e}");
                continue;
            }
        };
        let age = crate::now_ms().saturating_sub(request.sent_at_ms);
        if u128::from(age) > ACCEPT_WITHIN.as_millis() {
            // Its gateway may have given it to another runner by now: never run it.
            tracing::warn!(call = %request.call, age_ms = age, "a call sent too long ago; not taken");
            Counters::note(&shared.counters.not_delivered);
            continue;
        }
        let kill = Arc::new(Notify::new());
        let busy = {
            let mut running = shared.running();
            let n = running.len();
            if n >= shared.options.slots {
                Some(n)
            } else {
                running.insert(
                    request.call.clone(),
                    Taken {
                        gateway: request.gateway.clone(),
                        canceller: None,
                        kill: Arc::clone(&kill),
                    },
                );
                None
            }
        };
        Counters::note(if busy.is_some() {
            &shared.counters.busy
        } else {
            &shared.counters.accepted
        });
        let frame = match busy {
            Some(running) => Frame::Busy {
                runner: shared.node.clone(),
                running,
            },
            None => Frame::Accepted {
                runner: shared.node.clone(),
            },
        };
        send(&shared.client, &reply, &frame).await;
        if busy.is_none() {
            tokio::spawn(run_call(Arc::clone(&shared), request, reply, kill));
        }
    }
}

async fn send(client: &async_nats::Client, reply: &async_nats::Subject, frame: &Frame) {
    let body = serde_json::to_vec(frame).unwrap_or_default();
    if let Err(e) = client.publish(reply.clone(), body.into()).await {
        tracing::warn!("cannot answer on {reply}: {e}");
    }
}

async fn run_call(
    shared: Arc<Shared>,
    request: CallRequest,
    reply: async_nats::Subject,
    kill: Arc<Notify>,
) {
    let call_id = request.call.clone();
    tracing::info!(call = %call_id, tool = %request.tool, user = %request.user, gateway = %request.gateway, "accepted");
    let heartbeat = tokio::spawn({
        let client = shared.client.clone();
        let reply = reply.clone();
        async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                send(&client, &reply, &Frame::Running).await;
            }
        }
    });
    let result = run(&shared, request, &reply, &kill).await;
    heartbeat.abort();
    let value = serde_json::to_value(&result).unwrap_or_default();
    send(&shared.client, &reply, &Frame::Result { result: value }).await;
    let _ = shared.client.flush().await;
    shared.running().remove(&call_id);
    shared.finished.fetch_add(1, Ordering::Relaxed);
    tracing::info!(call = %call_id, is_error = result.is_error, "done");
}

async fn run(
    shared: &Shared,
    request: CallRequest,
    reply: &async_nats::Subject,
    kill: &Notify,
) -> ToolResult {
    let tool = match shared.tool(&request.bundle).await {
        Ok(tool) => tool,
        Err(e) => return ToolResult::error(e),
    };
    let runtime = match shared.runtime(&request.env).await {
        Ok(r) => r,
        Err(e) => return ToolResult::error(e),
    };
    let user = match UserSpace::in_homes(&shared.options.homes, &request.user) {
        Ok(u) => u,
        Err(e) => return ToolResult::error(e.to_string()),
    };
    let mut call = runtime.call(RuntimeCall {
        tool: ToolRef::Folder(tool),
        args: request.args,
        user,
        tool_call_id: Some(request.tool_call_id),
        timeout: Some(Duration::from_millis(request.deadline_ms)),
    });
    if let Some(taken) = shared.running().get_mut(&request.call) {
        taken.canceller = Some(call.canceller());
    }
    loop {
        tokio::select! {
            event = call.next() => match event {
                Some(CallEvent::Progress(p)) => {
                    send(&shared.client, reply, &Frame::Progress { content: p.content }).await;
                }
                Some(CallEvent::Done(result)) => return result,
                None => return ToolResult::error("the call ended without a result"),
            },
            () = kill.notified() => {
                // Dropping the call cancels it and kills what is left after the grace.
                drop(call);
                return ToolResult::error("the call was stopped: its gateway no longer waits for it");
            }
        }
    }
}

async fn hear_cancels(mut sub: async_nats::Subscriber, shared: Arc<Shared>) {
    while let Some(message) = sub.next().await {
        let Some(call) = message.subject.rsplit('.').next().map(str::to_string) else {
            continue;
        };
        let kill = serde_json::from_slice::<wire::Cancel>(&message.payload)
            .map(|c| c.kill)
            .unwrap_or(false);
        stop(&shared, &call, kill);
    }
}

/// Cancels call `call`, or kills it (`kill`).
fn stop(shared: &Shared, call: &str, kill: bool) {
    let running = shared.running();
    let Some(taken) = running.get(call) else {
        return;
    };
    tracing::info!(call, kill, "stopping");
    if let Some(canceller) = &taken.canceller {
        canceller.cancel();
    }
    if kill {
        taken.kill.notify_one();
    }
}

async fn announce(shared: Arc<Shared>) {
    let subject = wire::runner_subject(&shared.node);
    loop {
        let mut workers = 0;
        for runtime in shared.runtimes.lock().await.values() {
            workers += runtime.workers().await;
        }
        let body = serde_json::to_vec(&shared.announcement(workers)).unwrap_or_default();
        if let Err(e) = shared.client.publish(subject.clone(), body.into()).await {
            tracing::debug!("announcing: {e}");
        }
        tokio::time::sleep(ANNOUNCE_EVERY).await;
    }
}

/// Every second, asks each gateway with calls here whether it still waits for them.
async fn check_gateways(shared: Arc<Shared>) {
    let mut silent: HashMap<String, u32> = HashMap::new();
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        // A gateway books a call before offering it, so every call taken is on its books.
        let mut by_gateway: HashMap<String, Vec<String>> = HashMap::new();
        for (call, taken) in shared.running().iter() {
            by_gateway
                .entry(taken.gateway.clone())
                .or_default()
                .push(call.clone());
        }
        silent.retain(|g, _| by_gateway.contains_key(g));
        for (gateway, calls) in by_gateway {
            let ask = wire::AliveAsk {
                runner: shared.node.clone(),
                calls: calls.clone(),
            };
            let body = serde_json::to_vec(&ask).unwrap_or_default();
            let answer = tokio::time::timeout(
                Duration::from_secs(1),
                shared
                    .client
                    .request(wire::alive_subject(&gateway), body.into()),
            )
            .await;
            let gone = match answer {
                Ok(Ok(m)) => {
                    silent.remove(&gateway);
                    serde_json::from_slice::<wire::AliveAnswer>(&m.payload)
                        .map(|a| a.gone)
                        .unwrap_or_default()
                }
                Ok(Err(e)) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                    tracing::warn!(gateway, "the gateway is gone; stopping its calls");
                    calls
                }
                _ => {
                    let n = silent.entry(gateway.clone()).or_default();
                    *n += 1;
                    if *n >= SILENT_ASKS {
                        tracing::warn!(gateway, "the gateway is silent; stopping its calls");
                        calls
                    } else {
                        Vec::new()
                    }
                }
            };
            for call in gone {
                Counters::note(&shared.counters.orphaned);
                stop(&shared, &call, true);
            }
        }
    }
}
