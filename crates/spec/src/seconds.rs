//! Durations as Toolhost writes them everywhere (TOOL.md, `toolhost.toml`, `toolset.toml`,
//! JSON output): a number of seconds, fractions allowed. For `#[serde(with = "…")]`.

use std::time::Duration;

use serde::de::Error;
use serde::{Deserialize, Deserializer, Serializer};

fn from_secs<E: Error>(secs: f64) -> Result<Duration, E> {
    Duration::try_from_secs_f64(secs).map_err(|_| {
        E::custom(if secs.is_nan() {
            "expected a number of seconds, not NaN".to_string()
        } else if secs < 0.0 {
            format!("expected a non-negative number of seconds, not {secs}")
        } else {
            format!("{secs} seconds is too big (at most {} seconds)", u64::MAX)
        })
    })
}

/// A [`Duration`] written as seconds.
pub mod secs {
    use super::*;

    /// Writes the duration as seconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    /// Reads seconds; negative, NaN or too large is an error saying so.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        from_secs(f64::deserialize(d)?)
    }
}

/// An optional [`Duration`] written as seconds (with `#[serde(default)]` when the key may
/// be absent).
pub mod opt_secs {
    use super::*;

    /// Writes the duration as seconds, or nothing.
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_f64(d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    /// Reads seconds as `Some`; negative, NaN or too large is an error saying so.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        from_secs(f64::deserialize(d)?).map(Some)
    }
}

/// A [`Duration`] written as whole milliseconds.
pub mod millis {
    use super::*;

    /// Writes the duration as milliseconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    /// Reads whole milliseconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct T {
        #[serde(with = "secs")]
        a: Duration,
        #[serde(default, with = "opt_secs", skip_serializing_if = "Option::is_none")]
        b: Option<Duration>,
        #[serde(with = "millis")]
        c: Duration,
    }

    #[test]
    fn seconds_round_trip_and_bad_values_say_what_is_wrong() {
        let t: T = serde_json::from_str(r#"{"a": 1.5, "b": 2, "c": 250}"#).unwrap();
        assert_eq!(t.a, Duration::from_millis(1500));
        assert_eq!(t.b, Some(Duration::from_secs(2)));
        assert_eq!(t.c, Duration::from_millis(250));
        let back = serde_json::to_string(&t).unwrap();
        assert_eq!(back, r#"{"a":1.5,"b":2.0,"c":250}"#);
        let absent: T = serde_json::from_str(r#"{"a": 0, "c": 0}"#).unwrap();
        assert_eq!(absent.b, None);
        for (bad, says) in [
            ("-1", "expected a non-negative number of seconds, not -1"),
            (
                "1e300",
                "seconds is too big (at most 18446744073709551615 seconds)",
            ),
        ] {
            let e = serde_json::from_str::<T>(&format!(r#"{{"a": {bad}, "c": 0}}"#)).unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
        }
    }
}
