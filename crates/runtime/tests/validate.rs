#![allow(clippy::unwrap_used)]
//! `ArgsValidator`: defaults, coercion, validation and messages, through the public API.
//!
//! The tests sit in `mod validate` so that `cargo test -p toolhost-runtime validate` runs them.

mod validate {
    use std::path::Path;

    use serde_json::{Value, json};
    use toolhost_runtime::{ArgsError, ArgsValidator, Problem};

    /// The shape `ToolManifest::input_schema()` builds.
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to search for."},
                "limit": {"type": "number", "default": 10},
                "verbose": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["fast", "thorough"]},
                "level": {"type": "string", "enum": ["1", "2", "high"]},
                "token": {"type": "string"},
                "pin": {"type": "number"},
            },
            "required": ["query"],
            "additionalProperties": false,
        })
    }

    fn validator() -> ArgsValidator {
        ArgsValidator::new(&schema()).unwrap()
    }

    fn sensitive_validator() -> ArgsValidator {
        validator().with_sensitive(["token", "pin", "mode"].map(String::from))
    }

    fn error_text(v: &ArgsValidator, args: Value) -> String {
        match v.prepare(args.clone()) {
            Ok(ok) => panic!("{args} was accepted as {ok}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn prepare_fills_defaults_coerces_and_drops_nulls() {
        let cases: &[(&str, Value, Value)] = &[
            // rule 3: defaults
            (
                "default filled",
                json!({"query": "x"}),
                json!({"query": "x", "limit": 10}),
            ),
            (
                "given value beats default",
                json!({"query": "x", "limit": 3}),
                json!({"query": "x", "limit": 3}),
            ),
            // rule 2: null optional dropped (and then defaulted)
            (
                "null optional dropped",
                json!({"query": "x", "mode": null, "verbose": null}),
                json!({"query": "x", "limit": 10}),
            ),
            (
                "null optional with default gets the default",
                json!({"query": "x", "limit": null}),
                json!({"query": "x", "limit": 10}),
            ),
            (
                "null unknown parameter dropped",
                json!({"query": "x", "other": null}),
                json!({"query": "x", "limit": 10}),
            ),
            // rule 4: number
            (
                "integer string",
                json!({"query": "x", "limit": "5"}),
                json!({"query": "x", "limit": 5}),
            ),
            (
                "decimal string",
                json!({"query": "x", "limit": "2.5"}),
                json!({"query": "x", "limit": 2.5}),
            ),
            (
                "negative padded string",
                json!({"query": "x", "limit": " -2.5 "}),
                json!({"query": "x", "limit": -2.5}),
            ),
            (
                "exponent string",
                json!({"query": "x", "limit": "1e3"}),
                json!({"query": "x", "limit": 1000.0}),
            ),
            // rule 4: boolean
            (
                "padded true",
                json!({"query": "x", "verbose": " true "}),
                json!({"query": "x", "limit": 10, "verbose": true}),
            ),
            (
                "upper-case FALSE",
                json!({"query": "x", "verbose": "FALSE"}),
                json!({"query": "x", "limit": 10, "verbose": false}),
            ),
            (
                "1 is true",
                json!({"query": "x", "verbose": 1}),
                json!({"query": "x", "limit": 10, "verbose": true}),
            ),
            (
                "0 is false",
                json!({"query": "x", "verbose": 0}),
                json!({"query": "x", "limit": 10, "verbose": false}),
            ),
            // rule 4: string
            (
                "number to string",
                json!({"query": 5}),
                json!({"query": "5", "limit": 10}),
            ),
            (
                "decimal to string",
                json!({"query": 2.5}),
                json!({"query": "2.5", "limit": 10}),
            ),
            (
                "boolean to string",
                json!({"query": true}),
                json!({"query": "true", "limit": 10}),
            ),
            (
                "enum coerced to an allowed value",
                json!({"query": "x", "level": 1}),
                json!({"query": "x", "limit": 10, "level": "1"}),
            ),
            (
                "enum value kept",
                json!({"query": "x", "mode": "fast"}),
                json!({"query": "x", "limit": 10, "mode": "fast"}),
            ),
            (
                "strings are not trimmed for string parameters",
                json!({"query": " x "}),
                json!({"query": " x ", "limit": 10}),
            ),
            // rule 1: a string holding the arguments object
            (
                "string-encoded object",
                json!("{\"query\": \"x\", \"limit\": \"7\"}"),
                json!({"query": "x", "limit": 7}),
            ),
        ];
        let v = validator();
        for (name, args, want) in cases {
            let got = v.prepare(args.clone());
            assert_eq!(got.as_ref(), Ok(want), "{name}: {args}");
        }
    }

    #[test]
    fn prepare_keeps_integers_as_json_integers() {
        let got = validator()
            .prepare(json!({"query": "x", "limit": "5"}))
            .unwrap();
        assert!(got["limit"].is_i64(), "{got}");
        assert_eq!(got.to_string(), r#"{"query":"x","limit":5}"#);
    }

    #[test]
    fn prepare_turns_null_args_into_an_empty_object() {
        let v = ArgsValidator::new(&json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": [],
            "additionalProperties": false,
        }))
        .unwrap();
        assert_eq!(v.prepare(Value::Null), Ok(json!({})));
        assert_eq!(v.prepare(json!({})), Ok(json!({})));
        assert_eq!(v.prepare(json!("{}")), Ok(json!({})));
    }

    #[test]
    fn prepare_rejects_with_model_friendly_messages() {
        let long = "z".repeat(200);
        let long_cut = format!("\"{}…\"", "z".repeat(79));
        let cases: Vec<(&str, Value, String)> = vec![
            // rule 1
            (
                "number args",
                json!(5),
                "invalid arguments: arguments must be a JSON object".into(),
            ),
            (
                "array args",
                json!([{"query": "x"}]),
                "invalid arguments: arguments must be a JSON object".into(),
            ),
            (
                "boolean args",
                json!(true),
                "invalid arguments: arguments must be a JSON object".into(),
            ),
            (
                "string args that are not JSON",
                json!("query=x"),
                "invalid arguments: arguments must be a JSON object".into(),
            ),
            (
                "string args holding an array",
                json!("[1, 2]"),
                "invalid arguments: arguments must be a JSON object".into(),
            ),
            (
                "null args with a required parameter",
                Value::Null,
                "invalid arguments: missing required parameter `query`".into(),
            ),
            // required
            (
                "missing required",
                json!({"limit": 3}),
                "invalid arguments: missing required parameter `query`".into(),
            ),
            (
                "null required is a type error",
                json!({"query": null}),
                "invalid arguments: `query`: expected a string, got null".into(),
            ),
            // additionalProperties
            (
                "unknown parameter",
                json!({"query": "x", "qurey": "y"}),
                "invalid arguments: unknown parameter `qurey`; known parameters: query, limit, \
                 verbose, mode, level, token, pin"
                    .into(),
            ),
            // wrong types
            (
                "word for a number",
                json!({"query": "x", "limit": "lots"}),
                "invalid arguments: `limit`: expected a number, got \"lots\"".into(),
            ),
            (
                "empty string for a number",
                json!({"query": "x", "limit": " "}),
                "invalid arguments: `limit`: expected a number, got \" \"".into(),
            ),
            (
                "infinity for a number",
                json!({"query": "x", "limit": "inf"}),
                "invalid arguments: `limit`: expected a number, got \"inf\"".into(),
            ),
            (
                "array for a number is never coerced",
                json!({"query": "x", "limit": [5]}),
                "invalid arguments: `limit`: expected a number, got [5]".into(),
            ),
            (
                "boolean for a number",
                json!({"query": "x", "limit": true}),
                "invalid arguments: `limit`: expected a number, got true".into(),
            ),
            (
                "yes for a boolean",
                json!({"query": "x", "verbose": "yes"}),
                "invalid arguments: `verbose`: expected a boolean, got \"yes\"".into(),
            ),
            (
                "2 for a boolean",
                json!({"query": "x", "verbose": 2}),
                "invalid arguments: `verbose`: expected a boolean, got 2".into(),
            ),
            (
                "object for a string is never coerced",
                json!({"query": {"text": "x"}}),
                "invalid arguments: `query`: expected a string, got {\"text\":\"x\"}".into(),
            ),
            // enum
            (
                "enum violation",
                json!({"query": "x", "mode": "quick"}),
                "invalid arguments: `mode`: must be one of \"fast\", \"thorough\", got \"quick\""
                    .into(),
            ),
            (
                "enum is case-sensitive",
                json!({"query": "x", "mode": "Fast"}),
                "invalid arguments: `mode`: must be one of \"fast\", \"thorough\", got \"Fast\""
                    .into(),
            ),
            (
                "enum not coerced to a value it does not allow",
                json!({"query": "x", "level": 3}),
                "invalid arguments: `level`: expected a string, got 3; `level`: must be one of \
                 \"1\", \"2\", \"high\", got 3"
                    .into(),
            ),
            // rule 7
            (
                "long value cut to 80 characters",
                json!({"query": "x", "limit": long}),
                format!("invalid arguments: `limit`: expected a number, got {long_cut}"),
            ),
            // several at once, sorted by parameter
            (
                "several problems",
                json!({"mode": "quick", "limit": "lots"}),
                "invalid arguments: `limit`: expected a number, got \"lots\"; `mode`: must be one \
                 of \"fast\", \"thorough\", got \"quick\"; missing required parameter `query`"
                    .into(),
            ),
            (
                "several problems with unknown parameters",
                json!({"zeta": 1, "verbose": "maybe", "alpha": 2, "query": "x"}),
                "invalid arguments: unknown parameter `alpha`; known parameters: query, limit, \
                 verbose, mode, level, token, pin; `verbose`: expected a boolean, got \"maybe\"; \
                 unknown parameter `zeta`; known parameters: query, limit, verbose, mode, level, \
                 token, pin"
                    .into(),
            ),
        ];
        let v = validator();
        for (name, args, want) in cases {
            assert_eq!(error_text(&v, args), want, "{name}");
        }
    }

    #[test]
    fn validate_reports_structured_problems() {
        let err = validator()
            .prepare(json!({"limit": "lots", "extra": 1}))
            .unwrap_err();
        assert_eq!(
            err,
            ArgsError {
                problems: vec![
                    Problem {
                        parameter: Some("extra".into()),
                        message: "unknown parameter `extra`; known parameters: query, limit, \
                                  verbose, mode, level, token, pin"
                            .into(),
                    },
                    Problem {
                        parameter: Some("limit".into()),
                        message: "expected a number, got \"lots\"".into(),
                    },
                    Problem {
                        parameter: Some("query".into()),
                        message: "missing required parameter `query`".into(),
                    },
                ],
            }
        );
        let not_object = validator().prepare(json!(42)).unwrap_err();
        assert_eq!(
            not_object.problems,
            vec![Problem {
                parameter: None,
                message: "arguments must be a JSON object".into(),
            }]
        );
    }

    #[test]
    fn validate_never_echoes_sensitive_values() {
        let secret = "hunter2-s3cr3t";
        let cases: &[(&str, Value, &str)] = &[
            (
                "sensitive string given an object",
                json!({"query": "x", "token": {"value": secret}}),
                "invalid arguments: `token`: expected a string, got an object",
            ),
            (
                "sensitive number given a word",
                json!({"query": "x", "pin": secret}),
                "invalid arguments: `pin`: expected a number, got a string",
            ),
            (
                "sensitive enum given another value",
                json!({"query": "x", "mode": secret}),
                "invalid arguments: `mode`: must be one of \"fast\", \"thorough\"",
            ),
            (
                "sensitive value beside an unknown parameter",
                json!({"token": [secret], "bogus": secret}),
                "invalid arguments: unknown parameter `bogus`; known parameters: query, limit, \
                 verbose, mode, level, token, pin; missing required parameter `query`; `token`: \
                 expected a string, got an array",
            ),
        ];
        let v = sensitive_validator();
        for (name, args, want) in cases {
            let err = v.prepare(args.clone()).unwrap_err();
            assert_eq!(err.to_string(), *want, "{name}");
            assert!(!format!("{err:?}").contains("hunter2"), "{name}: {err:?}");
        }
        // The same calls without the marking do show the values.
        assert_eq!(
            error_text(&validator(), json!({"query": "x", "pin": secret})),
            format!("invalid arguments: `pin`: expected a number, got \"{secret}\"")
        );
    }

    #[test]
    fn validate_uses_the_validators_message_for_other_keywords() {
        let schema = json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "maxLength": 4},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "additionalProperties": false,
        });
        let v = ArgsValidator::new(&schema).unwrap();
        let err = v.prepare(json!({"code": "abcdef"})).unwrap_err();
        assert_eq!(err.problems.len(), 1);
        assert_eq!(err.problems[0].parameter.as_deref(), Some("code"));
        assert!(err.problems[0].message.contains("\"abcdef\""), "{err}");

        let v = v.with_sensitive(["code".to_string()]);
        let err = v.prepare(json!({"code": "abcdef"})).unwrap_err();
        assert!(!err.to_string().contains("abcdef"), "{err}");
        assert!(
            err.to_string().starts_with("invalid arguments: `code`: "),
            "{err}"
        );

        // Nested problems say where inside the parameter they are.
        let err = v.prepare(json!({"tags": ["a", 2]})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: `tags`: at `/1`: expected a string, got 2"
        );
    }

    #[test]
    fn validate_names_no_known_parameters_for_a_tool_without_inputs() {
        let v = ArgsValidator::new(&json!({
            "type": "object",
            "properties": {},
            "required": [],
            "additionalProperties": false,
        }))
        .unwrap();
        assert_eq!(v.prepare(Value::Null), Ok(json!({})));
        assert_eq!(
            error_text(&v, json!({"x": 1})),
            "invalid arguments: unknown parameter `x`; this tool takes no parameters"
        );
    }

    #[test]
    fn validate_rejects_an_invalid_schema() {
        let err = ArgsValidator::new(&json!({"type": "objekt"}))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("invalid input schema at `/type`: "),
            "{err}"
        );
    }

    const TOOL_MD: &str = r#"---
name: issue_search
label: Issue Search
description: Search the issue tracker and list matching issues, newest first.
version: 3
language: typescript
inputs:
  query:
    type: string
    description: Words to look for in titles and bodies.
  state:
    type: enum
    values: open, closed, all
    description: Which issues to include.
    optional: true
    default: open
  limit:
    type: number
    description: At most this many issues (1 to 100).
    optional: true
    default: 20
  include_comments:
    type: boolean
    description: Also search comments.
    optional: true
    default: false
  api_token:
    type: string
    description: Token for the tracker's API.
    sensitive: true
---

# Issue Search

Searches the tracker. Pass `query`; the other inputs are optional.
"#;

    #[test]
    fn validate_end_to_end_with_a_tool_md_schema() {
        let parsed =
            toolhost_spec::parse_tool_md(Path::new("issue_search/TOOL.md"), TOOL_MD.as_bytes());
        let manifest = parsed.manifest.unwrap();
        let v = ArgsValidator::new(&manifest.input_schema())
            .unwrap()
            .with_sensitive(manifest.sensitive_inputs().map(String::from));

        // What a model typically sends: numbers and booleans as strings, null for "not given".
        let args = json!({
            "query": "crash on start",
            "limit": "5",
            "include_comments": "True",
            "state": null,
            "api_token": "tok-abc123",
        });
        assert_eq!(
            v.prepare(args),
            Ok(json!({
                "query": "crash on start",
                "limit": 5,
                "include_comments": true,
                "api_token": "tok-abc123",
                "state": "open",
            }))
        );

        // The same, as a string.
        let args = json!(r#"{"query": "crash", "api_token": "t"}"#);
        assert_eq!(
            v.prepare(args),
            Ok(json!({
                "query": "crash",
                "api_token": "t",
                "state": "open",
                "limit": 20,
                "include_comments": false,
            }))
        );

        let err = v
            .prepare(json!({
                "state": "pending",
                "limit": "a few",
                "api_token": {"token": "tok-abc123"},
                "page": 2,
            }))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: `api_token`: expected a string, got an object; `limit`: expected a \
             number, got \"a few\"; unknown parameter `page`; known parameters: query, state, \
             limit, include_comments, api_token; missing required parameter `query`; `state`: \
             must be one of \"open\", \"closed\", \"all\", got \"pending\""
        );
        assert!(!err.to_string().contains("tok-abc123"));
    }
}
