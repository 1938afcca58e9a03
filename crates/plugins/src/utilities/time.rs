//! Current time and time-zone conversion, with the IANA database bundled (jiff), so
//! results do not depend on the host's zoneinfo.

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use toolhost_toolsets::{Annotations, Tool, ToolError, typed_tool};

#[derive(Deserialize, JsonSchema)]
struct CurrentTimeArgs {
    /// An IANA time zone such as "Europe/Paris" or "America/New_York" (default: UTC).
    #[serde(default)]
    timezone: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct ConvertArgs {
    /// The date and time to convert, e.g. "2025-03-30 14:30" (read in `from_timezone`) or
    /// an instant with an offset such as "2025-03-30T14:30:00Z".
    time: String,
    /// The IANA time zone `time` is in, e.g. "Asia/Tokyo" (ignored when `time` has an offset).
    from_timezone: String,
    /// The IANA time zone to convert to, e.g. "America/Los_Angeles".
    to_timezone: String,
}

pub(crate) fn current_time() -> Tool {
    typed_tool(
        "get_current_time",
        "Get the current date and time, in UTC or in a given IANA time zone.",
        Annotations {
            idempotent: Some(false),
            ..Annotations::read_only()
        },
        |a: CurrentTimeArgs, _ctx| async move {
            let tz = zone(a.timezone.as_deref().unwrap_or("UTC"))?;
            Ok(describe(&Timestamp::now().to_zoned(tz)))
        },
    )
}

pub(crate) fn convert_timezone() -> Tool {
    typed_tool(
        "convert_timezone",
        "Convert a date and time from one IANA time zone to another (daylight saving time included).",
        Annotations::read_only(),
        |a: ConvertArgs, _ctx| async move {
            let from = zone(&a.from_timezone)?;
            let to = zone(&a.to_timezone)?;
            let source = parse_time(a.time.trim(), from)?;
            let target = source.with_time_zone(to);
            Ok(json!({ "from": describe(&source), "to": describe(&target) }))
        },
    )
}

fn zone(name: &str) -> Result<TimeZone, ToolError> {
    TimeZone::get(name).map_err(|_| {
        ToolError::InvalidArguments(format!(
            "unknown time zone {name:?}: use an IANA name such as \"Europe/Berlin\" or \"UTC\""
        ))
    })
}

fn parse_time(s: &str, zone: TimeZone) -> Result<Zoned, ToolError> {
    if let Ok(z) = s.parse::<Zoned>() {
        return Ok(z);
    }
    if let Ok(ts) = s.parse::<Timestamp>() {
        return Ok(ts.to_zoned(zone));
    }
    let civil: DateTime = s.parse().map_err(|_| {
        ToolError::InvalidArguments(format!(
            "cannot read {s:?} as a date and time: use \"YYYY-MM-DD HH:MM\" or ISO 8601"
        ))
    })?;
    civil
        .to_zoned(zone)
        .map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

fn describe(z: &Zoned) -> Value {
    json!({
        "timezone": z.time_zone().iana_name().unwrap_or("UTC"),
        "datetime": z.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string(),
        "date": z.strftime("%Y-%m-%d").to_string(),
        "time": z.strftime("%H:%M:%S").to_string(),
        "weekday": z.strftime("%A").to_string(),
        "utc_offset": z.strftime("%:z").to_string(),
        "abbreviation": z.strftime("%Z").to_string(),
        "unix": z.timestamp().as_second(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn converts_across_daylight_saving() {
        let paris = zone("Europe/Paris").unwrap();
        let z = parse_time("2025-03-30 14:30", paris).unwrap();
        let ny = z.with_time_zone(zone("America/New_York").unwrap());
        let d = describe(&ny);
        assert_eq!(d["datetime"], "2025-03-30T08:30:00-04:00");
        assert_eq!(d["timezone"], "America/New_York");
        let utc = parse_time("2025-01-15T12:00:00Z", zone("Asia/Tokyo").unwrap()).unwrap();
        assert_eq!(describe(&utc)["time"], "21:00:00");
        assert!(zone("Mars/Olympus").is_err());
        assert!(parse_time("yesterday", TimeZone::UTC).is_err());
    }
}
