pub mod call;
pub mod check;
pub mod list;
pub mod new;
pub mod sandbox;
pub mod sync;
