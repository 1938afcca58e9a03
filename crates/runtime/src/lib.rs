//! Runs tool calls: argument validation, language runners (TypeScript and JavaScript on
//! warm Node.js workers, Python and Bash one process per call, native Rust tools),
//! progress, cancellation, deadlines, output caps, error normalisation and redaction.
//!
//! The entry point is [`Runtime::call`], which returns a [`Call`]: a stream of progress
//! events and one final [`ToolResult`], and a way to cancel.
//!
//! A [`Runtime`] keeps the life of a call (validation, deadline, idle timer,
//! cancellation and its grace, redaction, normalisation); an [`Executor`] runs it. The
//! [`LocalExecutor`] runs calls on this host; [`Runtime::with_executor`] takes any other.

#![warn(missing_docs, unreachable_pub)]

mod cache;
mod call;
mod code;
mod config;
mod dispatch;
mod email_db;
mod error;
mod events;
mod executor;
mod home;
mod launch;
mod lines;
mod local;
mod local_plugin;
mod native;
mod node;
mod overlap;
mod plugin;
mod process;
mod redact;
mod result;
mod runtime;
mod server;
mod target;
mod tool_user;
mod validate;
mod version;

pub use call::{Call, CallEvent, Canceller, Progress};
pub use config::{RuntimeConfig, ToolEnv, UserSpace, WorkerScope};
pub use dispatch::{Dispatch, RemoteCall, RemoteControl, Starting};
pub use error::RuntimeError;
pub use events::{ErrorKind, EventReceiver, EventSender, ExecutionEvent, channel as event_channel};
pub use executor::{Execution, ExecutionControl, Executor, Running, Waiting};
pub use local::{LocalControl, LocalExecutor};
pub use native::{NativeContext, NativeOutput, NativeTool, ToolError};
pub use plugin::{
    Backend, ClosersRan, DescribedPlugin, DescribedSet, DescribedTool, DescribedTools, PluginError,
    PluginModule, PluginOp, PluginTool, PluginTurn, Skipped,
};
pub use redact::{REDACTED, Secrets};
pub use result::{Stopped, ToolResult, cap_text, normalise, text_block};
pub use runtime::{CallRequest, Runtime, ToolRef};
pub use server::{Isolation, ServerCommand, ServerHandle, ServerLauncher, ServerProcess};
pub use target::Target;
pub use validate::{ArgsError, ArgsValidator, Problem, SchemaError};
