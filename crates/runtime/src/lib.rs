//! Runs tool calls. Filled by the runtime issue; the layer and its dependencies are fixed now.
