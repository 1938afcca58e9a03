//! Keeping `sensitive` inputs out of logs, traces, errors and results.

use serde_json::Value;

/// Shorter values are not searched for as substrings: replacing every "1" in a log would
/// destroy it and protect nothing. They are still never logged as parameters, and a whole
/// value equal to one (a JSON string or number, a text that is nothing but the secret) is
/// replaced: there the match cannot be a coincidence of a few common characters.
const MIN_SECRET_LEN: usize = 4;
/// What a sensitive value is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The values of a call's sensitive inputs, each in every spelling it can take on its way
/// out: as it is, escaped inside a JSON string (once, or twice for JSON that holds JSON
/// text), and escaped as Rust's `Debug` prints it (log lines). A value with a quote, a
/// backslash or a newline looks different in each.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    /// Every spelling of the values of at least [`MIN_SECRET_LEN`] bytes, longest first:
    /// searched for inside any text.
    spellings: Vec<String>,
    /// Every value (strings not empty, and numbers), however short: compared with whole
    /// texts and whole JSON values.
    whole: Vec<Value>,
}

impl Secrets {
    /// Collects the string forms of the sensitive parameters present in `args`.
    pub fn from_args<'a>(args: &Value, sensitive: impl IntoIterator<Item = &'a str>) -> Self {
        let present: Vec<&Value> = sensitive
            .into_iter()
            .filter_map(|name| args.get(name))
            .collect();
        let mut spellings: Vec<String> = present
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .flat_map(|s| spellings(&s))
            .collect();
        // Longest first, so a secret containing another is replaced whole.
        spellings.sort_by_key(|s| std::cmp::Reverse(s.len()));
        spellings.dedup();
        // A boolean (or null) is one of two values: replacing every `true` would protect
        // nothing. An empty string reveals nothing.
        let whole = present
            .into_iter()
            .filter(|v| v.is_number() || v.as_str().is_some_and(|s| !s.is_empty()))
            .cloned()
            .collect();
        Secrets { spellings, whole }
    }

    /// Secrets that are not a call's arguments (a plugin's credentials).
    pub fn from_values<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut secrets = Secrets::default();
        secrets.add_values(values);
        secrets
    }

    /// Adds `values` to redact.
    pub fn add_values<'a>(&mut self, values: impl IntoIterator<Item = &'a str>) {
        for v in values.into_iter().filter(|v| !v.is_empty()) {
            if v.len() >= MIN_SECRET_LEN {
                self.spellings.extend(spellings(v));
            }
            self.whole.push(Value::String(v.to_string()));
        }
        self.spellings.sort_by_key(|s| std::cmp::Reverse(s.len()));
        self.spellings.dedup();
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.spellings.is_empty() && self.whole.is_empty()
    }

    /// Whether `value` is, as a whole, one of the secrets (a number equal in value).
    fn is_whole(&self, value: &Value) -> bool {
        self.whole.iter().any(|w| match (w, value) {
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b || a.as_f64() == b.as_f64(),
            _ => false,
        })
    }

    /// The text with every secret replaced, or `None` when it contains none.
    pub fn redact(&self, text: &str) -> Option<String> {
        let is_whole = |w: &Value| match w {
            Value::String(s) => s == text,
            Value::Number(n) => text.parse::<serde_json::Number>().is_ok_and(|t| t == *n),
            _ => false,
        };
        if self.whole.iter().any(is_whole) {
            return Some(REDACTED.to_string());
        }
        if !self.spellings.iter().any(|s| text.contains(s.as_str())) {
            return None;
        }
        let mut out = text.to_string();
        for s in &self.spellings {
            out = out.replace(s.as_str(), REDACTED);
        }
        Some(out)
    }

    /// Text safe to log or return: redacted, or as it was.
    pub fn clean(&self, text: &str) -> String {
        self.redact(text).unwrap_or_else(|| text.to_string())
    }

    /// Replaces the secrets in every string of `value`, and every string or number that is
    /// one of them as a whole (a number becomes the string `[REDACTED]`).
    pub fn redact_json(&self, value: &mut Value) {
        if self.is_whole(value) {
            *value = Value::String(REDACTED.into());
            return;
        }
        match value {
            Value::String(s) => {
                if let Some(clean) = self.redact(s) {
                    *s = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => map.values_mut().for_each(|v| self.redact_json(v)),
            _ => {}
        }
    }
}

/// The secrets a long-lived tool process (a warm worker) has been given: those of its calls
/// in flight and those of its last [`SeenSecrets::REMEMBERED`] ended calls. The process
/// keeps what it was given and may print it at any time, with no call to tie the line to
/// (a timer that crashes after its call ended, a detached child's output), so every such
/// line is redacted with all of them, even after the worker itself is gone.
#[derive(Debug, Default)]
pub(crate) struct SeenSecrets {
    inner: std::sync::Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    in_flight: std::collections::HashMap<u64, Secrets>,
    ended: std::collections::VecDeque<Secrets>,
}

impl SeenSecrets {
    const REMEMBERED: usize = 256;

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn call_started(&self, id: u64, secrets: &Secrets) {
        if !secrets.is_empty() {
            self.seen().in_flight.insert(id, secrets.clone());
        }
    }

    pub(crate) fn call_ended(&self, id: u64) {
        let mut seen = self.seen();
        if let Some(secrets) = seen.in_flight.remove(&id) {
            if seen.ended.len() >= Self::REMEMBERED {
                seen.ended.pop_front();
            }
            seen.ended.push_back(secrets);
        }
    }

    /// `text` with every secret this process was ever given (of the remembered calls)
    /// replaced.
    pub(crate) fn clean(&self, text: &str) -> String {
        let seen = self.seen();
        let mut out = text.to_string();
        for s in seen.in_flight.values().chain(seen.ended.iter()) {
            if let Some(clean) = s.redact(&out) {
                out = clean;
            }
        }
        out
    }
}

/// `secret` and the escaped forms it takes inside JSON text and `Debug` output.
fn spellings(secret: &str) -> Vec<String> {
    let json_escaped = |s: &str| {
        let quoted = Value::String(s.to_string()).to_string();
        quoted[1..quoted.len() - 1].to_string()
    };
    let once = json_escaped(secret);
    let twice = json_escaped(&once);
    let debug = format!("{secret:?}");
    let debug = debug[1..debug.len() - 1].to_string();
    let mut forms = vec![secret.to_string(), once, twice, debug];
    forms.sort();
    forms.dedup();
    forms
}

/// A copy of `args` with every sensitive parameter replaced, for logs.
pub(crate) fn args_for_log<'a>(
    args: &Value,
    sensitive: impl IntoIterator<Item = &'a str>,
) -> Value {
    let mut copy = args.clone();
    if let Value::Object(map) = &mut copy {
        for name in sensitive {
            if let Some(v) = map.get_mut(name) {
                *v = Value::String(REDACTED.into());
            }
        }
    }
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// F9: an object result's text block holds the value JSON-escaped; a log line holds it
    /// Debug-escaped. Neither may leak.
    #[test]
    fn replaces_escaped_spellings_too() {
        let secret = "pa\"ss\\word-LEAKME\nline2\u{1b}";
        let s = Secrets::from_args(&json!({ "k": secret }), ["k"]);
        let as_json = json!({ "key": secret }).to_string();
        let as_pretty = serde_json::to_string_pretty(&json!({ "key": secret })).unwrap();
        let nested = json!({ "text": as_json }).to_string();
        let debug = format!("{:?}", json!({ "key": secret }));
        for text in [as_json, as_pretty, nested, debug] {
            let clean = s.clean(&text);
            assert!(!clean.contains("LEAKME"), "{text} -> {clean}");
            assert!(clean.contains(REDACTED), "{clean}");
        }
    }

    /// README claim 10 (issue 13): a value shorter than 4 bytes is not searched for inside
    /// text, but a JSON value or a text that is the secret as a whole is replaced, and so
    /// is a number equal to a sensitive number, however long.
    #[test]
    fn replaces_short_and_numeric_secrets_as_whole_values() {
        let args = json!({"pin": "482", "code": 90210, "flag": true, "empty": ""});
        let s = Secrets::from_args(&args, ["pin", "code", "flag", "empty"]);
        let mut v = json!({
            "pin": "482", "pins": ["482", "4821", "x482"], "code": 90210, "as_float": 90210.0,
            "other": 482, "flag": true, "empty": "", "note": "pin 482 accepted",
        });
        s.redact_json(&mut v);
        assert_eq!(
            v,
            json!({
                "pin": "[REDACTED]", "pins": ["[REDACTED]", "4821", "x482"],
                "code": "[REDACTED]", "as_float": "[REDACTED]", "other": 482, "flag": true,
                "empty": "", "note": "pin 482 accepted",
            })
        );
        assert_eq!(s.clean("482"), "[REDACTED]");
        assert_eq!(s.clean("90210"), "[REDACTED]");
        assert_eq!(s.clean("code 90210"), "code [REDACTED]");
        assert_eq!(
            s.clean("pin 482"),
            "pin 482",
            "too short to search for in text"
        );
    }

    #[test]
    fn replaces_secrets_everywhere() {
        let args = json!({"token": "sk-secret-123", "pin": "12", "q": "sk"});
        let s = Secrets::from_args(&args, ["token", "pin"]);
        assert_eq!(
            s.clean("auth sk-secret-123 failed"),
            "auth [REDACTED] failed"
        );
        assert_eq!(
            s.clean("pin 12 is short, left alone"),
            "pin 12 is short, left alone"
        );
        let mut v = json!({"a": ["x sk-secret-123"]});
        s.redact_json(&mut v);
        assert_eq!(v, json!({"a": ["x [REDACTED]"]}));
        assert_eq!(
            s.clean("12"),
            "[REDACTED]",
            "a text that is nothing but the pin"
        );
        assert_eq!(
            args_for_log(&args, ["token", "pin"]),
            json!({"token": "[REDACTED]", "pin": "[REDACTED]", "q": "sk"})
        );
    }
}
