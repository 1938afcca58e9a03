//! The network policy every part of Toolhost applies when it connects on a tool's behalf:
//! which addresses are not the public internet ([`special`]), and which of those a
//! connection may reach anyway ([`Reach`]). The sandbox's network supervisor and the web
//! plugin both ask [`Reach::check`], so they cannot disagree about what may be reached.
#![warn(missing_docs, unreachable_pub)]

mod addresses;
mod reach;

pub use addresses::{Kind, Special, canonical, special};
pub use reach::{Reach, Refused};

#[cfg(test)]
mod registries;
