//! Folder tools run elsewhere: the hook a fleet's gateway plugs into the local executor.
//!
//! A gateway keeps native tools in process (they are not sandboxed anyway) and hands every
//! folder tool's call to a [`Dispatch`], which starts it on a runner and reports its events.
//! The lifecycle around it ([`crate::Runtime`]) is the same as for a local call: the
//! deadline, idle timer, cancellation and its grace, redaction and normalisation.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::RuntimeError;
use crate::events::ErrorKind;
use crate::executor::{Execution, Running};

/// The future [`Dispatch::start`] returns.
pub type Starting<'a> =
    Pin<Box<dyn Future<Output = Result<Running<RemoteControl>, RuntimeError>> + Send + 'a>>;

/// Starts folder tools' calls somewhere else and reports their events.
///
/// Like [`crate::Executor::start`], a start that waits must stop cleanly when its future
/// is dropped (the deadline or the caller ended the wait).
pub trait Dispatch: Send + Sync + 'static {
    /// Starts `call`, whose tool is `tool` (a folder tool).
    fn start<'a>(
        &'a self,
        call: Execution<'a>,
        tool: &'a Arc<toolhost_catalog::Tool>,
    ) -> Starting<'a>;
}

/// What a dispatched call is stopped through (see [`crate::ExecutionControl`]).
pub trait RemoteCall: Send + 'static {
    /// Asks the call to stop; [`RemoteCall::kill`] follows after the grace.
    fn cancel(&self);
    /// Stops the call now.
    fn kill(&self);
    /// The call is over for the lifecycle.
    fn finish(self: Box<Self>, failure: Option<ErrorKind>);
}

/// The handle on a dispatched call.
pub struct RemoteControl(pub Box<dyn RemoteCall>);
