//! One isolation layer as a probe found it.

use serde::{Deserialize, Serialize};

/// One isolation layer and whether it can be used here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    /// The layer's name (`user-namespace`, `landlock`, `cgroups`, …).
    pub name: String,
    /// Whether this machine offers it.
    pub available: bool,
    /// What was found: a version, the controllers, or why the layer is missing.
    pub detail: String,
}
