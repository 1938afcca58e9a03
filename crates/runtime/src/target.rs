//! What a tool source hands a surface to call: the tool and the deadline the source gives
//! it. One idea for every source (the catalog, a turn's tool sets, an embedder's own).

use std::time::Duration;

use serde_json::Value;

use crate::{CallRequest, ToolRef, UserSpace};

/// A tool to call, short of the call's arguments and caller.
#[derive(Clone)]
pub struct Target {
    /// What the runtime runs.
    pub tool: ToolRef,
    /// A deadline the tool's source gives it (a tool set's annotation); `None` leaves it
    /// to the tool's own `timeout`, else the configuration's.
    pub timeout: Option<Duration>,
    /// The tool set it was granted through, when its source knows (for the call log).
    pub set: Option<String>,
}

impl Target {
    /// A tool with no deadline of its source's.
    pub fn new(tool: ToolRef) -> Target {
        Target {
            tool,
            timeout: None,
            set: None,
        }
    }

    /// The runtime's request for a call of this tool with `args`, by `user`; the caller
    /// may still set `tool_call_id` or a deadline of its own.
    pub fn request(&self, args: Value, user: UserSpace) -> CallRequest {
        CallRequest {
            tool: self.tool.clone(),
            args,
            user,
            tool_call_id: None,
            timeout: self.timeout,
        }
    }
}
