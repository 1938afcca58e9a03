//! Durations as `toolhost.toml` and plugin settings spell them: a non-negative number of
//! seconds (fractions allowed). For `#[serde(with = "…")]` on settings structs.

/// A required `Duration`: `#[serde(with = "toolhost_toolsets::seconds::secs")]`.
pub mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, de::Error};

    /// Reads a non-negative number of seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let s = f64::deserialize(d)?;
        Duration::try_from_secs_f64(s)
            .map_err(|_| D::Error::custom("expected a non-negative number of seconds"))
    }
}

/// An optional `Duration` (pair it with `#[serde(default)]`):
/// `#[serde(with = "toolhost_toolsets::seconds::opt_secs")]`.
pub mod opt_secs {
    use std::time::Duration;

    use serde::{Deserializer, de::Error};

    /// Reads a non-negative number of seconds, as `Some`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let s: f64 = serde::Deserialize::deserialize(d)?;
        Duration::try_from_secs_f64(s)
            .map(Some)
            .map_err(|_| D::Error::custom("expected a non-negative number of seconds"))
    }
}
