//! Times as the console shows them: UTC, to the second, and how long ago.

/// `2026-12-01 20:08:33 UTC` for `ms` since the Unix epoch.
pub(crate) fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Year, month, day of the day `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Days since 1970-01-01 of the date `y-m-d` (the inverse of `civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A `datetime-local` input's value (`2026-12-01T20:08`, seconds optional), read as UTC
/// (the console shows every time in UTC); `None` when it is not one.
pub(crate) fn parse_input(text: &str) -> Option<i64> {
    let (date, clock) = text.trim().split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut c = clock.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, min) = (c.next()??, c.next()??);
    let sec = c.next().map_or(Some(0), |s| s)?;
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&day)
        || !(0..24).contains(&h)
        || !(0..60).contains(&min)
        || !(0..60).contains(&sec)
    {
        return None;
    }
    Some(((days_from_civil(y, m, day) * 24 + h) * 60 + min) * 60_000 + sec * 1000)
}

/// `ms` as a `datetime-local` input's value, in UTC.
pub(crate) fn input_value(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// `12 ms`, `1.4 s`, `3 min`.
pub(crate) fn duration(ms: i64) -> String {
    match ms {
        ..1000 => format!("{ms} ms"),
        1000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min", ms / 60_000),
    }
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_798_761_599_000), "2026-12-31 23:59:59 UTC");
        assert_eq!(duration(12), "12 ms");
        assert_eq!(duration(1_400), "1.4 s");
        assert_eq!(duration(180_000), "3 min");
        assert_eq!(parse_input("2000-02-29T00:00"), Some(951_782_400_000));
        assert_eq!(parse_input("2026-12-31T23:59:59"), Some(1_798_761_599_000));
        assert_eq!(input_value(1_798_761_599_000), "2026-12-31T23:59");
        assert_eq!(parse_input("2026-13-01T00:00"), None);
        assert_eq!(parse_input("yesterday"), None);
    }
}
