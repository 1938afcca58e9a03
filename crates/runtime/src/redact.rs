//! Keeping `sensitive` inputs out of logs, traces, errors and results.

use serde_json::Value;

/// Shorter values are not searched for as substrings: replacing every "1" in a log would
/// destroy it and protect nothing. They are still never logged as parameters.
const MIN_SECRET_LEN: usize = 4;
pub const REDACTED: &str = "[REDACTED]";

/// The values of a call's sensitive inputs.
#[derive(Debug, Clone, Default)]
pub struct Secrets(Vec<String>);

impl Secrets {
    /// Collects the string forms of the sensitive parameters present in `args`.
    pub fn from_args<'a>(args: &Value, sensitive: impl IntoIterator<Item = &'a str>) -> Self {
        let mut values: Vec<String> = sensitive
            .into_iter()
            .filter_map(|name| args.get(name))
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        // Longest first, so a secret containing another is replaced whole.
        values.sort_by_key(|s| std::cmp::Reverse(s.len()));
        values.dedup();
        Secrets(values)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text with every secret replaced, or `None` when it contains none.
    pub fn redact(&self, text: &str) -> Option<String> {
        if !self.0.iter().any(|s| text.contains(s.as_str())) {
            return None;
        }
        let mut out = text.to_string();
        for s in &self.0 {
            out = out.replace(s.as_str(), REDACTED);
        }
        Some(out)
    }

    /// Text safe to log or return: redacted, or as it was.
    pub fn clean(&self, text: &str) -> String {
        self.redact(text).unwrap_or_else(|| text.to_string())
    }

    pub fn redact_json(&self, value: &mut Value) {
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

/// A copy of `args` with every sensitive parameter replaced, for logs.
pub fn args_for_log<'a>(args: &Value, sensitive: impl IntoIterator<Item = &'a str>) -> Value {
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
            args_for_log(&args, ["token", "pin"]),
            json!({"token": "[REDACTED]", "pin": "[REDACTED]", "q": "sk"})
        );
    }
}
