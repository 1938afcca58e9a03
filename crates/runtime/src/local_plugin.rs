//! Platypus plugins on the local executor: a worker per user, plugin package and code
//! version (an edited plugin gets a fresh worker, since Node.js never unloads a module),
//! started in plugin mode with the package's folders visible read-only at their own paths.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::RuntimeError;
use crate::config::UserSpace;
use crate::events::ExecutionEvent;
use crate::executor::{Execution, Running, Waiting};
use crate::local::{Control, LocalControl, LocalExecutor};
use crate::node::{CallMessage, PluginKey, Worker, WorkerKey};
use crate::plugin::{
    ExecuteOp, PluginCallOp, PluginError, PluginMessage, PluginModule, PluginOp, PluginTool,
};
use crate::redact::Secrets;

impl LocalExecutor {
    /// A worker for `module` in `space`, with a call reserved on it; its code version.
    async fn plugin_worker(
        &self,
        space: &UserSpace,
        module: &PluginModule,
        waiting: &Waiting,
    ) -> Result<(Arc<Worker>, String), RuntimeError> {
        crate::home::check(space, &self.env)?;
        self.launcher.admit(space, &self.env).await?;
        let version = self
            .code
            .prepare(&self.launcher, &module.root, &space.user)
            .await?;
        let network = match &self.launcher.sandbox {
            Some(sandbox) => sandbox.config().network_for(&module.name, module.network),
            None => true,
        };
        let key = WorkerKey {
            user: space.user.clone(),
            tool: Some(module.root.clone()),
            network,
            plugin: Some(PluginKey {
                version: version.clone(),
                mounts: module.mounts.clone(),
            }),
        };
        let worker = self.pool.acquire(space, key, waiting).await?;
        Ok((worker, version))
    }

    /// The code version of `module` when a worker last loaded it, if none of its files
    /// changed since; `None` when it changed (or never ran here).
    pub fn plugin_version(&self, module: &PluginModule) -> Option<String> {
        self.code.current_version(&module.root)
    }

    /// Runs `op` of `module` on `space`'s worker for it, within `timeout`; the value the
    /// worker answered. Dropping the future cancels the operation.
    pub async fn plugin_op(
        &self,
        space: &UserSpace,
        module: &PluginModule,
        op: &PluginOp,
        timeout: Duration,
    ) -> Result<Value, PluginError> {
        let run = async {
            let waiting = Waiting::default();
            let (worker, version) = self
                .plugin_worker(space, module, &waiting)
                .await
                .map_err(|e| PluginError::Runtime(Arc::new(e)))?;
            let secrets = Secrets::from_values(module.secrets.iter().map(String::as_str));
            let (id, mut events) = worker.start_call(
                CallMessage {
                    id: 0,
                    entry: &module.entry,
                    version: &version,
                    tool_call_id: "",
                    params: &Value::Null,
                    max_text: usize::MAX / 4,
                    plugin: Some(PluginMessage {
                        op: PluginCallOp::Op(op),
                        settings: &module.settings,
                    }),
                },
                &secrets,
            );
            let _finish = FinishOnDrop(&worker, id);
            loop {
                let Some(received) = events.recv().await else {
                    return Err(PluginError::Protocol("the worker went away".into()));
                };
                match received.event {
                    ExecutionEvent::Result { value, .. } => return Ok(value),
                    ExecutionEvent::Error { message, .. } => {
                        return Err(PluginError::Plugin(secrets.clean(&message)));
                    }
                    ExecutionEvent::Died(why) => {
                        return Err(PluginError::Runtime(Arc::new(RuntimeError::WorkerStart(
                            why,
                        ))));
                    }
                    ExecutionEvent::Log { level, text } => {
                        crate::events::log_line(&level, &module.name, "", &secrets.clean(&text));
                    }
                    ExecutionEvent::Progress(_) => {}
                }
            }
        };
        tokio::time::timeout(timeout, run)
            .await
            .unwrap_or(Err(PluginError::TimedOut(timeout)))
    }

    pub(crate) async fn start_plugin(
        &self,
        tool: &Arc<PluginTool>,
        call: &Execution<'_>,
    ) -> Result<Running<LocalControl>, RuntimeError> {
        let module = &tool.module;
        let (worker, version) = self.plugin_worker(call.user, module, call.waiting).await?;
        let (id, events) = worker.start_call(
            CallMessage {
                id: 0,
                entry: &module.entry,
                version: &version,
                tool_call_id: call.call_id,
                params: call.args,
                max_text: call.max_result_bytes,
                plugin: Some(PluginMessage {
                    op: PluginCallOp::Execute(ExecuteOp {
                        set: &tool.set,
                        tool: &tool.key,
                        turn: tool.turn.as_ref().map(|t| t.id),
                        ctx: tool.turn.as_ref().map(|t| &t.ctx),
                    }),
                    settings: &module.settings,
                }),
            },
            call.secrets,
        );
        Ok(Running {
            control: LocalControl(Control::Worker {
                worker,
                id,
                dir: module.root.clone(),
                code: Arc::clone(&self.code),
            }),
            events,
        })
    }
}

/// Ends a plugin operation's call on its worker however the operation ends: a dropped
/// operation is cancelled first.
struct FinishOnDrop<'a>(&'a Arc<Worker>, u64);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.cancel(self.1);
        self.0.finish(self.1);
    }
}
