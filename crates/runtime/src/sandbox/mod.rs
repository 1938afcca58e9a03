//! The embedded sandbox. So far: finding out which isolation layers this machine offers.
//! Running tools inside them is the next step (see ARCHITECTURE.md).

mod probe;

pub use probe::{Layer, probe_here};
