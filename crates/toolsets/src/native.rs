//! Native tools from typed Rust functions: the input schema is derived from the argument
//! type with schemars (doc comments become descriptions), errors are typed, and a panic
//! becomes an error result instead of reaching the model.

use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolhost_runtime::{NativeContext, NativeOutput, NativeTool, ToolError};

use crate::tool::{Annotations, Tool};

/// A native tool whose arguments are `A`.
pub(crate) struct TypedTool<A, F> {
    name: String,
    description: String,
    schema: Value,
    run: F,
    args: PhantomData<fn(A)>,
}

/// Builds a [`Tool`] from a name, a description and an async function of typed arguments.
pub fn typed_tool<A, F, Fut>(
    name: &str,
    description: &str,
    annotations: Annotations,
    run: F,
) -> Tool
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, NativeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    Tool::native(TypedTool {
        name: name.to_string(),
        description: description.to_string(),
        schema: schema_for::<A>(),
        run,
        args: PhantomData,
    })
    .annotated(annotations)
}

/// The JSON Schema of `A`, with sub-schemas inlined (models read them more reliably
/// than `$ref`s) and without the `$schema`/`title` noise.
fn schema_for<A: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
    }
    schema
}

/// Properties (as JSON pointers) that have no description: every field of a native
/// tool's arguments must say what it is for.
pub fn undescribed_properties(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(schema, "", &mut out);
    out
}

fn walk(schema: &Value, at: &str, out: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(Value::Object(props)) = obj.get("properties") {
        for (name, prop) in props {
            let here = format!("{at}/{name}");
            if prop
                .get("description")
                .and_then(Value::as_str)
                .is_none_or(|d| d.trim().is_empty())
            {
                out.push(here.clone());
            }
            walk(prop, &here, out);
        }
    }
    if let Some(items) = obj.get("items") {
        walk(items, &format!("{at}[]"), out);
    }
}

impl<A, F, Fut> NativeTool for TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(A, NativeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn call(&self, args: Value, ctx: NativeContext) -> NativeOutput {
        let args: A = match serde_json::from_value(args) {
            Ok(a) => a,
            Err(e) => {
                let e = ToolError::InvalidArguments(e.to_string());
                return Box::pin(async move { Err(e) });
            }
        };
        let run = AssertUnwindSafe((self.run)(args, ctx)).catch_unwind();
        Box::pin(async move {
            match run.await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(e)) => Err(e),
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    tracing::error!("a native tool panicked: {what}");
                    Err(ToolError::Failed(format!(
                        "the tool failed unexpectedly (internal error: {what})"
                    )))
                }
            }
        })
    }
}
