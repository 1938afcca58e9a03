//! A gateway's side of the fleet: folder tools' calls go to runners.
//!
//! A call goes to its user's home runner (rendezvous hashing over the runners heard
//! lately, so every gateway agrees and warm workers stay warm). Until a runner *accepts*
//! it, a call may be tried on the next-ranked runner: "no responders" (nobody serves that
//! runner's subject any more), a `busy` answer and silence past [`ACCEPT_WAIT`] all mean it
//! did not start there (a runner refuses a call older than [`wire::ACCEPT_WITHIN`]). Once
//! accepted, it is never sent elsewhere: a runner that then falls silent for `lost_after`
//! ends the call with exactly one error saying its outcome is unknown. When every runner
//! tried is busy the call fails at once as overloaded: nothing queues without bound.
//!
//! The gateway also answers runners: whether it still waits for their calls (a runner
//! stops the calls of a gateway that is gone), and the bundles of the tools they run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use tokio::task::JoinHandle;
use toolhost_runtime::{
    Dispatch, Execution, ExecutionEvent, RemoteCall, RemoteControl, Running, RuntimeError, Starting,
};

use crate::members::{ANNOUNCE_EVERY, Members};
use crate::metrics::Counters;
use crate::wire::{self, ACCEPT_WAIT, Announcement, CallEnv, CallRequest, Frame};
use crate::{Bundles, FleetError, rendezvous};

/// Runners a call is offered to before it fails as overloaded.
pub const MAX_TRIES: usize = 3;

/// What a gateway needs besides its NATS connection.
pub struct GatewayOptions {
    /// Its node id.
    pub node: String,
    /// The environment tools get (`[env]`, `[resources]`), sent with each call.
    pub env: CallEnv,
    /// Silence after acceptance that means the runner was lost.
    pub lost_after: Duration,
    /// Where bundles are kept.
    pub bundles: Bundles,
    /// The connection's inbox prefix (`_INBOX.NODE`, as [`crate::NatsLogin`] sets it).
    pub inbox_prefix: String,
}

/// A gateway's link to the fleet. Cheap to clone; dropping the last clone stops its tasks.
#[derive(Clone)]
pub struct Gateway {
    shared: Arc<Shared>,
    _tasks: Arc<Tasks>,
}

/// The gateway's background tasks, stopped with it.
struct Tasks(Vec<JoinHandle<()>>);

struct Shared {
    node: String,
    client: async_nats::Client,
    runners: Members,
    gateways: Members,
    /// Calls accepted by a runner and still waited for: call id → runner.
    waiting: Mutex<HashMap<String, String>>,
    next: AtomicU64,
    finished: AtomicU64,
    started_at: u64,
    env: CallEnv,
    lost_after: Duration,
    bundles: Bundles,
    epoch: AtomicI64,
    catalog_changed: tokio::sync::broadcast::Sender<i64>,
    relayed: tokio::sync::broadcast::Sender<(String, String)>,
    access: tokio::sync::broadcast::Sender<()>,
    counters: crate::metrics::Counters,
    /// The offers waiting for replies, by route key.
    routes: Mutex<HashMap<String, tokio::sync::mpsc::UnboundedSender<async_nats::Message>>>,
    /// `_INBOX.NODE`: this gateway's replies arrive below it.
    inbox_prefix: String,
}

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

impl Gateway {
    /// Joins the fleet on `client`: listens to announcements, answers runners, and
    /// announces itself every second.
    pub async fn start(
        client: async_nats::Client,
        options: GatewayOptions,
    ) -> Result<Gateway, FleetError> {
        let nats = |e: async_nats::SubscribeError| FleetError::Nats(e.to_string());
        let (catalog_changed, _) = tokio::sync::broadcast::channel(16);
        let (relayed, _) = tokio::sync::broadcast::channel(256);
        let (access, _) = tokio::sync::broadcast::channel(16);
        let shared = Arc::new(Shared {
            node: options.node,
            client: client.clone(),
            runners: Members::default(),
            gateways: Members::default(),
            waiting: Mutex::default(),
            next: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            started_at: crate::now_ms(),
            env: options.env,
            lost_after: options.lost_after,
            bundles: options.bundles,
            epoch: AtomicI64::new(0),
            catalog_changed,
            relayed,
            access,
            counters: crate::metrics::Counters::default(),
            routes: Mutex::default(),
            inbox_prefix: options.inbox_prefix,
        });
        let mut tasks = Vec::new();
        let replies = client
            .subscribe(format!("{}.calls.*", shared.inbox_prefix))
            .await
            .map_err(nats)?;
        tasks.push(tokio::spawn(demux(replies, Arc::clone(&shared))));
        let runners = client.subscribe(wire::RUNNERS).await.map_err(nats)?;
        tasks.push(tokio::spawn(listen(runners, Arc::clone(&shared), true)));
        let gateways = client.subscribe(wire::GATEWAYS).await.map_err(nats)?;
        tasks.push(tokio::spawn(listen(gateways, Arc::clone(&shared), false)));
        let alive = client
            .subscribe(wire::alive_subject(&shared.node))
            .await
            .map_err(nats)?;
        tasks.push(tokio::spawn(answer_alive(alive, Arc::clone(&shared))));
        let bundles = client
            .queue_subscribe(wire::BUNDLE_SUBJECT, wire::GATEWAY_QUEUE.into())
            .await
            .map_err(nats)?;
        tasks.push(tokio::spawn(serve_bundles(bundles, Arc::clone(&shared))));
        let changes = client
            .subscribe(wire::CATALOG_CHANGED)
            .await
            .map_err(nats)?;
        tasks.push(tokio::spawn(hear_catalog(changes, Arc::clone(&shared))));
        let access = client.subscribe(wire::ACCESS_CHANGED).await.map_err(nats)?;
        tasks.push(tokio::spawn(hear_access(access, Arc::clone(&shared))));
        let relay = client.subscribe(wire::SESSION_RELAY).await.map_err(nats)?;
        tasks.push(tokio::spawn(hear_relayed(relay, Arc::clone(&shared))));
        tasks.push(tokio::spawn(announce(Arc::clone(&shared))));
        client
            .flush()
            .await
            .map_err(|e| FleetError::Nats(e.to_string()))?;
        Ok(Gateway {
            shared,
            _tasks: Arc::new(Tasks(tasks)),
        })
    }

    /// The runtime's dispatch: folder tools' calls go to the fleet.
    pub fn dispatch(&self) -> Arc<dyn Dispatch> {
        Arc::new(FleetDispatch(Arc::clone(&self.shared)))
    }

    /// The runners heard lately, sorted by id.
    pub fn runners(&self) -> Vec<Announcement> {
        self.shared.runners.announcements()
    }

    /// The gateways heard lately (this one included once it heard itself).
    pub fn gateways(&self) -> Vec<Announcement> {
        self.shared.gateways.announcements()
    }

    /// Records that `dir` is bundle `hash` (see [`Bundles::seed`]).
    pub async fn seed_bundle(&self, dir: std::path::PathBuf, hash: String) {
        self.shared.bundles.seed(dir, hash).await;
    }

    /// Records the catalog epoch this gateway serves (for announcements).
    pub fn serving_epoch(&self, epoch: i64) {
        self.shared.epoch.store(epoch, Ordering::Relaxed);
    }

    /// Announcements of a changed shared catalog (the new epoch).
    pub fn catalog_changes(&self) -> tokio::sync::broadcast::Receiver<i64> {
        self.shared.catalog_changed.subscribe()
    }
}

impl toolhost_host::Fleet for Gateway {
    fn dispatch(&self) -> Arc<dyn Dispatch> {
        Gateway::dispatch(self)
    }

    fn relay_to_session(&self, key: String, message: String) {
        let body = serde_json::to_vec(&wire::Relayed {
            key,
            message,
            from: self.shared.node.clone(),
        })
        .unwrap_or_default();
        let client = self.shared.client.clone();
        tokio::spawn(async move {
            if let Err(e) = client.publish(wire::SESSION_RELAY, body.into()).await {
                tracing::warn!("relaying a session's message: {e}");
            }
        });
    }

    fn relayed_to_sessions(&self) -> tokio::sync::broadcast::Receiver<(String, String)> {
        self.shared.relayed.subscribe()
    }

    fn access_changed(&self) {
        let client = self.shared.client.clone();
        let from = self.shared.node.clone();
        tokio::spawn(async move {
            if let Err(e) = client.publish(wire::ACCESS_CHANGED, from.into()).await {
                tracing::warn!("telling the gateways that access changed: {e}");
            }
        });
    }

    fn access_changes(&self) -> tokio::sync::broadcast::Receiver<()> {
        self.shared.access.subscribe()
    }

    fn metrics(&self, out: &mut String) {
        self.shared.counters.render(out);
        let running = self
            .shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len();
        crate::metrics::render_node(out, "gateway", running, 0, 0);
        let runners = self.runners();
        out.push_str("# HELP toolhost_fleet_runners Runners heard in the last seconds.\n# TYPE toolhost_fleet_runners gauge\n");
        out.push_str(&format!("toolhost_fleet_runners {}\n", runners.len()));
        out.push_str("# HELP toolhost_fleet_runner_running Calls each runner runs, as it last announced.\n# TYPE toolhost_fleet_runner_running gauge\n");
        for r in &runners {
            out.push_str(&format!(
                "toolhost_fleet_runner_running{{runner=\"{}\"}} {}\n",
                toolhost_host::prometheus_label(&r.node),
                r.running
            ));
        }
        out.push_str("# HELP toolhost_fleet_catalog_epoch The published catalog's epoch this gateway serves.\n# TYPE toolhost_fleet_catalog_epoch gauge\n");
        out.push_str(&format!(
            "toolhost_fleet_catalog_epoch {}\n",
            self.shared.epoch.load(Ordering::Relaxed)
        ));
    }

    fn status(&self) -> toolhost_host::FleetStatus {
        toolhost_host::FleetStatus {
            node: self.shared.node.clone(),
            gateways: self.gateways(),
            runners: self.runners(),
        }
    }
}

/// Tells every gateway on `client` that the shared catalog is now at `epoch`.
pub async fn publish_catalog_change(
    client: &async_nats::Client,
    epoch: i64,
) -> Result<(), FleetError> {
    let body = serde_json::to_vec(&wire::CatalogChanged { epoch }).unwrap_or_default();
    client
        .publish(wire::CATALOG_CHANGED, body.into())
        .await
        .map_err(|e| FleetError::Nats(e.to_string()))?;
    client
        .flush()
        .await
        .map_err(|e| FleetError::Nats(e.to_string()))
}

async fn listen(mut sub: async_nats::Subscriber, shared: Arc<Shared>, runners: bool) {
    while let Some(message) = sub.next().await {
        let Ok(announcement) = serde_json::from_slice::<Announcement>(&message.payload) else {
            tracing::warn!(subject = %message.subject, "an announcement that is not one");
            continue;
        };
        // The subject is what NATS permissions check: a node names only itself.
        if !message
            .subject
            .ends_with(&format!(".{}", announcement.node))
        {
            tracing::warn!(subject = %message.subject, node = %announcement.node, "an announcement naming another node");
            continue;
        }
        if runners {
            shared.runners.heard(announcement);
        } else {
            shared.gateways.heard(announcement);
        }
    }
}

async fn announce(shared: Arc<Shared>) {
    let subject = wire::gateway_subject(&shared.node);
    loop {
        let running = shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len();
        let announcement = Announcement {
            node: shared.node.clone(),
            role: "gateway".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            started_at: shared.started_at,
            running,
            slots: 0,
            finished: shared.finished.load(Ordering::Relaxed),
            workers: 0,
            epoch: shared.epoch.load(Ordering::Relaxed),
        };
        let body = serde_json::to_vec(&announcement).unwrap_or_default();
        if let Err(e) = shared.client.publish(subject.clone(), body.into()).await {
            tracing::debug!("announcing: {e}");
        }
        tokio::time::sleep(ANNOUNCE_EVERY).await;
    }
}

async fn answer_alive(mut sub: async_nats::Subscriber, shared: Arc<Shared>) {
    while let Some(message) = sub.next().await {
        let Some(reply) = message.reply else { continue };
        let Ok(ask) = serde_json::from_slice::<wire::AliveAsk>(&message.payload) else {
            continue;
        };
        let gone: Vec<String> = {
            let waiting = shared.waiting.lock().unwrap_or_else(|e| e.into_inner());
            ask.calls
                .into_iter()
                .filter(|c| waiting.get(c) != Some(&ask.runner))
                .collect()
        };
        let body = serde_json::to_vec(&wire::AliveAnswer { gone }).unwrap_or_default();
        let _ = shared.client.publish(reply, body.into()).await;
    }
}

async fn serve_bundles(mut sub: async_nats::Subscriber, shared: Arc<Shared>) {
    while let Some(message) = sub.next().await {
        let Some(reply) = message.reply else { continue };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut headers = async_nats::HeaderMap::new();
            let body = match serde_json::from_slice::<wire::BundleAsk>(&message.payload) {
                Err(e) => {
                    headers.insert(wire::ERROR_HEADER, format!("not a bundle request: {e}"));
                    Bytes::new()
                }
                Ok(ask) if !crate::bundle::is_name(&ask.hash) => {
                    headers.insert(wire::ERROR_HEADER, "not a bundle name");
                    Bytes::new()
                }
                Ok(ask) => match shared.bundles.packed(&ask.hash).await {
                    Ok(Some(packed)) => {
                        if ask.offset == 0 {
                            Counters::note(&shared.counters.bundles);
                        }
                        let start = ask.offset.min(packed.len());
                        let end = (start + wire::BUNDLE_CHUNK).min(packed.len());
                        headers.insert(wire::SIZE_HEADER, packed.len().to_string());
                        Bytes::copy_from_slice(&packed[start..end])
                    }
                    Ok(None) => {
                        headers.insert(wire::ERROR_HEADER, format!("no bundle {}", ask.hash));
                        Bytes::new()
                    }
                    Err(e) => {
                        headers.insert(wire::ERROR_HEADER, format!("the store failed: {e}"));
                        Bytes::new()
                    }
                },
            };
            let _ = shared
                .client
                .publish_with_headers(reply, headers, body)
                .await;
        });
    }
}

async fn hear_access(mut sub: async_nats::Subscriber, shared: Arc<Shared>) {
    while let Some(message) = sub.next().await {
        // The body names the gateway that changed access; it has forgotten already.
        if message.payload.as_ref() != shared.node.as_bytes() {
            let _ = shared.access.send(());
        }
    }
}

async fn hear_relayed(mut sub: async_nats::Subscriber, shared: Arc<Shared>) {
    while let Some(message) = sub.next().await {
        match serde_json::from_slice::<wire::Relayed>(&message.payload) {
            Ok(r) if r.from != shared.node => {
                let _ = shared.relayed.send((r.key, r.message));
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("a relayed message that is not one: {e}"),
        }
    }
}

async fn hear_catalog(mut sub: async_nats::Subscriber, shared: Arc<Shared>) {
    while let Some(message) = sub.next().await {
        match serde_json::from_slice::<wire::CatalogChanged>(&message.payload) {
            Ok(change) => {
                let _ = shared.catalog_changed.send(change.epoch);
            }
            Err(e) => tracing::warn!("a catalog change that is not one: {e}"),
        }
    }
}

struct FleetDispatch(Arc<Shared>);

impl Dispatch for FleetDispatch {
    fn start<'a>(
        &'a self,
        call: Execution<'a>,
        tool: &'a Arc<toolhost_catalog::Tool>,
    ) -> Starting<'a> {
        Box::pin(start(Arc::clone(&self.0), call, tool))
    }
}

async fn start(
    shared: Arc<Shared>,
    call: Execution<'_>,
    tool: &Arc<toolhost_catalog::Tool>,
) -> Result<Running<RemoteControl>, RuntimeError> {
    call.waiting.set(Some("the tool's bundle".into()));
    let bundle = shared
        .bundles
        .of(&tool.dir)
        .await
        .map_err(RuntimeError::Dispatch)?;
    let id = format!(
        "{}-{}",
        shared.node,
        shared.next.fetch_add(1, Ordering::Relaxed) + 1
    );
    let mut request = CallRequest {
        call: id.clone(),
        gateway: shared.node.clone(),
        tool: tool.manifest.name.clone(),
        bundle,
        user: call.user.user.clone(),
        tool_call_id: call.call_id.to_string(),
        args: call.args.clone(),
        env: shared.env.clone(),
        max_result_bytes: call.max_result_bytes,
        deadline_ms: 0,
        sent_at_ms: 0,
    };
    let live = shared.runners.live();
    if live.is_empty() {
        return Err(RuntimeError::Dispatch(
            "no runner is in the fleet (none announced itself in the last 3 s); the call did \
             not start"
                .into(),
        ));
    }
    let ranked = rendezvous::ranked(&call.user.user, live.iter().map(String::as_str));
    call.waiting.set(Some("a runner to accept the call".into()));
    let mut busy = Vec::new();
    for runner in ranked.into_iter().take(MAX_TRIES) {
        let nats = |e: &dyn std::fmt::Display| {
            RuntimeError::Dispatch(format!(
                "the fleet's messaging failed ({e}); the call did not start"
            ))
        };
        let (inbox, mut replies) = Route::open(&shared, &format!("{id}-{runner}"));
        request.deadline_ms = RUNNER_DEADLINE_MS;
        request.sent_at_ms = crate::now_ms();
        let body = serde_json::to_vec(&request).map_err(|e| nats(&e))?;
        // On the books before the runner can ask about it: a runner that accepted a call
        // its gateway does not know of would stop it.
        let booked = Booked::new(&shared, &id, runner);
        shared
            .client
            .publish_with_reply(wire::call_subject(runner), inbox, body.into())
            .await
            .map_err(|e| nats(&e))?;
        let first = tokio::time::timeout(ACCEPT_WAIT, replies.recv()).await;
        match first {
            Ok(Some(m)) if m.status == Some(async_nats::StatusCode::NO_RESPONDERS) => {
                tracing::info!(
                    runner,
                    "the runner is gone (no responders); trying the next"
                );
                Counters::note(&shared.counters.not_delivered);
                shared.runners.forget(runner);
            }
            Ok(Some(m)) => match serde_json::from_slice::<Frame>(&m.payload) {
                Ok(Frame::Accepted { .. }) => {
                    Counters::note(&shared.counters.accepted);
                    booked.keep();
                    return Ok(accepted(&shared, id, runner.to_string(), replies));
                }
                Ok(Frame::Busy { running, .. }) => {
                    tracing::debug!(runner, running, "busy; trying the next");
                    Counters::note(&shared.counters.busy);
                    busy.push(runner.to_string());
                }
                other => {
                    tracing::warn!(runner, "an answer that is not acceptance: {other:?}");
                }
            },
            Ok(None) => return Err(nats(&"the connection closed")),
            Err(_) => {
                tracing::warn!(runner, "no answer within {ACCEPT_WAIT:?}; trying the next");
                Counters::note(&shared.counters.not_delivered);
            }
        }
    }
    if !busy.is_empty() {
        Counters::note(&shared.counters.overloaded);
        return Err(RuntimeError::Overloaded(format!(
            "the fleet is overloaded: every runner tried ({}) is busy; the call did not \
             start, retry shortly",
            busy.join(", ")
        )));
    }
    Err(RuntimeError::Dispatch(
        "no runner took the call (the runners tried are gone or did not answer); the call \
         did not start"
            .into(),
    ))
}

/// The deadline a runner gets. The gateway's lifecycle keeps the call's real deadline and
/// cancels the call when it passes; the runner's own is only a backstop.
const RUNNER_DEADLINE_MS: u64 = 24 * 3600 * 1000;

/// Where one offer's replies arrive: `_INBOX.GATEWAY.calls.KEY` on the gateway's one
/// subscription to all of them (no subscription per call), handed here by the demux.
struct Route {
    shared: Arc<Shared>,
    key: String,
    rx: tokio::sync::mpsc::UnboundedReceiver<async_nats::Message>,
}

impl Route {
    /// A route for `key` (unique among the gateway's calls): its inbox, and the route.
    fn open(shared: &Arc<Shared>, key: &str) -> (String, Route) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        shared
            .routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string(), tx);
        let inbox = format!("{}.calls.{key}", shared.inbox_prefix);
        (
            inbox,
            Route {
                shared: Arc::clone(shared),
                key: key.to_string(),
                rx,
            },
        )
    }

    async fn recv(&mut self) -> Option<async_nats::Message> {
        self.rx.recv().await
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        self.shared
            .routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.key);
    }
}

/// Hands each reply to the route its subject names.
async fn demux(mut sub: async_nats::Subscriber, shared: Arc<Shared>) {
    while let Some(message) = sub.next().await {
        let Some(key) = message.subject.rsplit('.').next() else {
            continue;
        };
        let route = shared
            .routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned();
        if let Some(route) = route {
            let _ = route.send(message);
        }
    }
}

/// A call on the books as offered to a runner; taken off again unless kept (accepted).
struct Booked<'a> {
    shared: &'a Shared,
    id: &'a str,
    kept: bool,
}

impl<'a> Booked<'a> {
    fn new(shared: &'a Shared, id: &'a str, runner: &str) -> Booked<'a> {
        shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_string(), runner.to_string());
        Booked {
            shared,
            id,
            kept: false,
        }
    }

    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Booked<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.shared
                .waiting
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(self.id);
        }
    }
}

/// A call `runner` accepted: its frames become the call's events.
fn accepted(
    shared: &Arc<Shared>,
    id: String,
    runner: String,
    mut replies: Route,
) -> Running<RemoteControl> {
    let (tx, events) = toolhost_runtime::event_channel();
    let lost_after = shared.lost_after;
    let gateway = Arc::clone(shared);
    let who = runner.clone();
    let pump = tokio::spawn(async move {
        loop {
            match tokio::time::timeout(lost_after, replies.recv()).await {
                Ok(Some(m)) => match serde_json::from_slice::<Frame>(&m.payload) {
                    Ok(Frame::Running | Frame::Accepted { .. } | Frame::Busy { .. }) => {}
                    Ok(Frame::Progress { content }) => {
                        tx.send(ExecutionEvent::Progress(content));
                    }
                    Ok(Frame::Result { result }) => {
                        tx.send(ExecutionEvent::Result {
                            value: result,
                            truncated_from: None,
                        });
                        break;
                    }
                    Err(e) => tracing::warn!(runner = %who, "a frame that is not one: {e}"),
                },
                Ok(None) => {
                    tx.send(ExecutionEvent::Died(format!(
                        "the connection to runner {who} closed mid-call; the tool may have \
                         partly run, so the call was not retried: its outcome is unknown"
                    )));
                    break;
                }
                Err(_) => {
                    Counters::note(&gateway.counters.lost);
                    tx.send(ExecutionEvent::Died(format!(
                        "runner {who} was lost mid-call (no word from it for {} s); the tool \
                         may have partly run, so the call was not retried: its outcome is \
                         unknown",
                        lost_after.as_secs_f64()
                    )));
                    break;
                }
            }
        }
        drop(replies);
    });
    Running {
        control: RemoteControl(Box::new(FleetCall {
            shared: Arc::clone(shared),
            id,
            runner,
            pump,
        })),
        events,
    }
}

/// The handle on a call a runner accepted.
struct FleetCall {
    shared: Arc<Shared>,
    id: String,
    runner: String,
    pump: JoinHandle<()>,
}

impl FleetCall {
    fn send_cancel(&self, kill: bool) {
        let client = self.shared.client.clone();
        let subject = wire::cancel_subject(&self.runner, &self.id);
        let body = serde_json::to_vec(&wire::Cancel { kill }).unwrap_or_default();
        tokio::spawn(async move {
            let _ = client.publish(subject, body.into()).await;
        });
    }
}

impl RemoteCall for FleetCall {
    fn cancel(&self) {
        self.send_cancel(false);
    }

    fn kill(&self) {
        self.send_cancel(true);
    }

    fn finish(self: Box<Self>, _failure: Option<toolhost_runtime::ErrorKind>) {
        let was_running = !self.pump.is_finished();
        self.pump.abort();
        self.shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
        self.shared.finished.fetch_add(1, Ordering::Relaxed);
        if was_running {
            // Nobody waits any more (the caller went away, or the runner fell silent):
            // the runner must stop it.
            self.send_cancel(true);
        }
    }
}
