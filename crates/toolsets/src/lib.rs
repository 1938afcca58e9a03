//! Plugins and tool sets. Filled by the tool-sets issue; the layer and its dependencies are fixed now.
