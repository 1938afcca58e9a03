//! Tools written in Rust: the interface the tool sets of plugins implement.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tokio::sync::watch;

/// A tool implemented in Rust. It goes through the same call path as folder tools:
/// argument validation, deadlines, cancellation, progress, result normalisation.
pub trait NativeTool: Send + Sync + 'static {
    /// The tool's name, as callers name it.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// The JSON Schema of the arguments (for example derived with schemars).
    fn input_schema(&self) -> Value;
    /// Names of arguments that must never be logged.
    fn sensitive_inputs(&self) -> Vec<String> {
        Vec::new()
    }
    /// Runs the tool. Return a `{content: [...]}` object, a string or any JSON value (see
    /// [`crate::normalise`]), or a [`ToolError`], whose message the model reads.
    fn call(&self, args: Value, ctx: NativeContext) -> NativeOutput;
}

/// What [`NativeTool::call`] returns.
pub type NativeOutput = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;

/// Why a native tool failed. The model reads the message and can recover.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit (beyond what the schema says).
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool declined on purpose (a policy said no).
    #[error("refused: {0}")]
    Refused(String),
    /// Something went wrong doing the work.
    #[error("{0}")]
    Failed(String),
    /// The caller cancelled the call.
    #[error("cancelled")]
    Cancelled,
}

impl ToolError {
    /// [`ToolError::Failed`] with `why`'s message: `.map_err(ToolError::failed)?`.
    pub fn failed(why: impl std::fmt::Display) -> ToolError {
        ToolError::Failed(why.to_string())
    }
}

/// What a native tool gets besides its arguments.
#[derive(Clone)]
pub struct NativeContext {
    /// The call's id.
    pub tool_call_id: String,
    pub(crate) cancelled: watch::Receiver<bool>,
    pub(crate) progress: crate::events::EventSender,
}

impl NativeContext {
    /// True once the call was cancelled or timed out.
    pub fn is_cancelled(&self) -> bool {
        *self.cancelled.borrow()
    }

    /// Resolves when the call is cancelled or times out.
    pub async fn cancelled(&mut self) {
        let _ = self.cancelled.wait_for(|c| *c).await;
    }

    /// Reports progress to the caller.
    pub fn progress(&self, text: impl Into<String>) {
        let _ = self
            .progress
            .send(crate::events::ExecutionEvent::Progress(vec![
                crate::result::text_block(text),
            ]));
    }
}
