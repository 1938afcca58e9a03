//! The module's exports: is there a named `execute`, which function is it, and if there is
//! none, which other export shape (class, default) did the author use instead.

use oxc_ast::ast::{
    ArrowFunctionExpression, BindingPattern, Declaration, ExportDefaultDeclarationKind, Expression,
    Function, Program, Statement,
};

const EXECUTE: &str = "execute";

/// The function that implements `execute`, when it is defined in this file.
pub(super) enum ExecuteFn<'b, 'a> {
    /// `function execute() {}` or `const execute = function () {}`.
    Function(&'b Function<'a>),
    /// `const execute = async () => {}`.
    Arrow(&'b ArrowFunctionExpression<'a>),
}

/// An export worth naming in a message: where it starts and how it reads.
pub(super) struct Found {
    pub offset: u32,
    pub text: String,
}

#[derive(Default)]
pub(super) struct ExportFacts<'b, 'a> {
    /// A runtime (not type-only) export named `execute` exists.
    pub has_execute: bool,
    /// The function behind that export, when this file defines it.
    pub execute_fn: Option<ExecuteFn<'b, 'a>>,
    /// `export * from '...'`: the exported names cannot be known from this file alone.
    pub star: bool,
    /// The first `export class X` / `export default class`.
    pub class_export: Option<Found>,
    /// The first `export default` that is not a class.
    pub default_export: Option<(Found, DefaultKind)>,
}

/// What a non-class default export is, to suggest the right fix.
pub(super) enum DefaultKind {
    /// A function or arrow: rename it to `execute`.
    Function,
    /// `export default run`: re-export `run` as `execute`.
    Identifier(String),
    /// Anything else (an object, a call, ...).
    Other,
}

/// Scans the top-level statements (the only place exports can appear).
pub(super) fn scan<'b, 'a>(program: &'b Program<'a>) -> ExportFacts<'b, 'a> {
    let mut facts = ExportFacts::default();
    // Local names exported as `execute` (`export { run as execute }`), resolved at the end.
    let mut local_names: Vec<&'a str> = Vec::new();

    for statement in &program.body {
        match statement {
            Statement::ExportDeclaration(export) => {
                let declaration = &export.declaration;
                if declares(declaration, EXECUTE) {
                    facts.has_execute = true;
                    if facts.execute_fn.is_none() {
                        facts.execute_fn = local_function(declaration, EXECUTE);
                    }
                }
                if let Declaration::ClassDeclaration(class) = declaration
                    && facts.class_export.is_none()
                {
                    let text = match &class.id {
                        Some(id) => format!("export class {}", id.name),
                        None => "export class".to_string(),
                    };
                    facts.class_export = Some(Found {
                        offset: export.span.start,
                        text,
                    });
                }
            }
            Statement::ExportNamedDeclaration(export) if !export.export_kind.is_type() => {
                for specifier in &export.specifiers {
                    if !specifier.export_kind.is_type()
                        && specifier.exported.name().as_str() == EXECUTE
                    {
                        facts.has_execute = true;
                        local_names.push(specifier.local.name().as_str());
                    }
                }
            }
            Statement::ExportFromDeclaration(export)
                if !export.export_kind.is_type()
                    && export.specifiers.iter().any(|s| {
                        !s.export_kind.is_type() && s.exported.name().as_str() == EXECUTE
                    }) =>
            {
                facts.has_execute = true;
            }
            Statement::ExportAllDeclaration(export) if !export.export_kind.is_type() => {
                match &export.exported {
                    None => facts.star = true,
                    Some(name) if name.name().as_str() == EXECUTE => facts.has_execute = true,
                    Some(_) => {}
                }
            }
            Statement::ExportDefaultDeclaration(export) => {
                let offset = export.span.start;
                match &export.declaration {
                    ExportDefaultDeclarationKind::ClassDeclaration(class) => {
                        if facts.class_export.is_none() {
                            let text = match &class.id {
                                Some(id) => format!("export default class {}", id.name),
                                None => "export default class".to_string(),
                            };
                            facts.class_export = Some(Found { offset, text });
                        }
                    }
                    ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                        if facts.default_export.is_none() {
                            let keyword = if function.r#async {
                                "async function"
                            } else {
                                "function"
                            };
                            let text = match &function.id {
                                Some(id) => format!("export default {keyword} {}", id.name),
                                None => format!("export default {keyword}"),
                            };
                            facts.default_export =
                                Some((Found { offset, text }, DefaultKind::Function));
                        }
                    }
                    ExportDefaultDeclarationKind::TSInterfaceDeclaration(_) => {}
                    kind => {
                        let expression = kind.as_expression().map(Expression::get_inner_expression);
                        if let Some(Expression::ClassExpression(class)) = expression {
                            if facts.class_export.is_none() {
                                let text = match &class.id {
                                    Some(id) => format!("export default class {}", id.name),
                                    None => "export default class".to_string(),
                                };
                                facts.class_export = Some(Found { offset, text });
                            }
                        } else if facts.default_export.is_none() {
                            let (text, kind) = match expression {
                                Some(Expression::Identifier(id)) => (
                                    format!("export default {}", id.name),
                                    DefaultKind::Identifier(id.name.to_string()),
                                ),
                                Some(Expression::ObjectExpression(_)) => {
                                    ("export default { ... }".to_string(), DefaultKind::Other)
                                }
                                Some(Expression::ArrowFunctionExpression(_)) => (
                                    "export default () => ...".to_string(),
                                    DefaultKind::Function,
                                ),
                                Some(Expression::FunctionExpression(_)) => {
                                    ("export default function".to_string(), DefaultKind::Function)
                                }
                                _ => ("export default ...".to_string(), DefaultKind::Other),
                            };
                            facts.default_export = Some((Found { offset, text }, kind));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    if facts.execute_fn.is_none() {
        facts.execute_fn = local_names
            .iter()
            .find_map(|name| find_local_function(program, name));
    }
    facts
}

/// Whether a runtime declaration binds `name` (`declare`d ones have no runtime value).
fn declares(declaration: &Declaration<'_>, name: &str) -> bool {
    match declaration {
        Declaration::FunctionDeclaration(function) => {
            !function.declare && function.id.as_ref().is_some_and(|id| id.name == name)
        }
        Declaration::VariableDeclaration(variables) => {
            !variables.declare
                && variables.declarations.iter().any(|d| {
                    d.id.get_binding_identifiers()
                        .iter()
                        .any(|id| id.name == name)
                })
        }
        _ => false,
    }
}

/// The top-level function named `name`, declared plainly or inside `export`.
fn find_local_function<'b, 'a>(program: &'b Program<'a>, name: &str) -> Option<ExecuteFn<'b, 'a>> {
    program.body.iter().find_map(|statement| {
        let declaration = match statement {
            Statement::ExportDeclaration(export) => &export.declaration,
            other => other.as_declaration()?,
        };
        local_function(declaration, name)
    })
}

/// The function a declaration binds to `name`: a function declaration with a body (not an
/// overload signature), or a variable initialised with a function or arrow expression.
fn local_function<'b, 'a>(
    declaration: &'b Declaration<'a>,
    name: &str,
) -> Option<ExecuteFn<'b, 'a>> {
    match declaration {
        Declaration::FunctionDeclaration(function)
            if function.body.is_some()
                && function.id.as_ref().is_some_and(|id| id.name == name) =>
        {
            Some(ExecuteFn::Function(function))
        }
        Declaration::VariableDeclaration(variables) => {
            variables
                .declarations
                .iter()
                .find_map(|declarator| match &declarator.id {
                    BindingPattern::BindingIdentifier(id) if id.name == name => {
                        declarator.init.as_ref().and_then(function_expression)
                    }
                    _ => None,
                })
        }
        _ => None,
    }
}

/// A function or arrow expression, seen through parentheses and TypeScript `as`/`satisfies`.
fn function_expression<'b, 'a>(expression: &'b Expression<'a>) -> Option<ExecuteFn<'b, 'a>> {
    match expression.get_inner_expression() {
        Expression::ArrowFunctionExpression(arrow) => Some(ExecuteFn::Arrow(arrow)),
        Expression::FunctionExpression(function) => Some(ExecuteFn::Function(function)),
        _ => None,
    }
}
