//! One walk over the whole file's runtime code (type annotations are skipped) for the
//! patterns that matter wherever they appear: Bun APIs, CommonJS exports and CLI entry points.

use oxc_ast::ast::{
    AssignmentExpression, BinaryExpression, CallExpression, ComputedMemberExpression,
    ExportAllDeclaration, ExportFromDeclaration, Expression, IdentifierReference,
    ImportDeclaration, ImportExpression, ObjectPropertyKind, Program, StaticMemberExpression,
    StringLiteral, TSExportAssignment, TSExternalModuleDeclaration, TSExternalModuleReference,
    TSGlobalDeclaration, UnaryExpression, UnaryOperator,
};
use oxc_ast_visit::{VisitJs, walk_js};
use oxc_semantic::Scoping;

/// A use of a Bun-only API.
pub(super) struct BunUse {
    pub offset: u32,
    pub message: String,
}

/// A CommonJS export such as `module.exports = ...` or `exports.execute = ...`.
pub(super) struct CommonJsExport {
    pub offset: u32,
    /// How it reads, e.g. `module.exports = { execute }`.
    pub text: String,
    /// Whether it exports something named `execute`.
    pub exports_execute: bool,
}

/// A "run only when started from the command line" check.
pub(super) struct CliEntry {
    pub offset: u32,
    /// How it reads, e.g. `require.main === module`.
    pub text: String,
}

#[derive(Default)]
pub(super) struct Globals {
    pub bun: Vec<BunUse>,
    pub commonjs: Vec<CommonJsExport>,
    pub cli: Vec<CliEntry>,
}

pub(super) fn scan(program: &Program<'_>, scoping: &Scoping) -> Globals {
    let mut scan = Scan {
        scoping,
        found: Globals::default(),
    };
    scan.visit_program(program);
    scan.found
}

struct Scan<'s> {
    scoping: &'s Scoping,
    found: Globals,
}

/// Whether `ident` is a runtime reference to a global: it has no local binding, or only an
/// ambient one (TypeScript `declare const Bun: ...` describes a global, it does not create one).
pub(super) fn is_global(ident: &IdentifierReference<'_>, scoping: &Scoping) -> bool {
    ident.reference_id.get().is_some_and(|id| {
        let reference = scoping.get_reference(id);
        !reference.flags().is_type_only()
            && reference
                .symbol_id()
                .is_none_or(|symbol| scoping.symbol_flags(symbol).is_ambient())
    })
}

impl Scan<'_> {
    /// Where `expression` starts when it is the global `name` (not a local binding).
    fn global_named(&self, expression: &Expression<'_>, name: &str) -> Option<u32> {
        match expression.get_inner_expression() {
            Expression::Identifier(ident)
                if ident.name == name && is_global(ident, self.scoping) =>
            {
                Some(ident.span.start)
            }
            _ => None,
        }
    }

    /// Reports `Bun.property` (or bare `Bun`) when `object` is the global `Bun`.
    fn bun_member(&mut self, object: &Expression<'_>, property: Option<&str>) -> bool {
        let Some(offset) = self.global_named(object, "Bun") else {
            return false;
        };
        self.report_bun(offset, property);
        true
    }

    fn report_bun(&mut self, offset: u32, property: Option<&str>) {
        let message = match property {
            Some(property) => bun_member_message(property),
            None => "`Bun` is a Bun global and throws ReferenceError in Node.js; \
                     use the Node.js standard library instead"
                .to_string(),
        };
        self.found.bun.push(BunUse { offset, message });
    }

    fn bun_module(&mut self, specifier: &StringLiteral<'_>) {
        let name = specifier.value.as_str();
        if name != "bun" && !name.starts_with("bun:") {
            return;
        }
        let message = match name {
            "bun" => "`bun` is Bun's built-in module and does not exist in Node.js; \
                      import from the `node:` modules instead (e.g. `node:fs`, `node:child_process`)"
                .to_string(),
            "bun:sqlite" => "`bun:sqlite` is a Bun module and does not exist in Node.js; use `node:sqlite` instead".to_string(),
            "bun:test" => "`bun:test` is a Bun module and does not exist in Node.js; use `node:test` instead".to_string(),
            other => format!(
                "`{other}` is a Bun module and does not exist in Node.js; use a Node.js module instead"
            ),
        };
        self.found.bun.push(BunUse {
            offset: specifier.span.start,
            message,
        });
    }

    /// `module.exports = ...`, `module.exports.x = ...` or `exports.x = ...`.
    fn commonjs_export(&self, assignment: &AssignmentExpression<'_>) -> Option<CommonJsExport> {
        let target = assignment.left.as_member_expression()?;
        let property = target.static_property_name();
        let object = target.object().get_inner_expression();
        let (text, exports_execute) = if self.global_named(object, "module").is_some() {
            if property != Some("exports") {
                return None;
            }
            let execute = object_has_execute(&assignment.right);
            let text = if execute {
                "module.exports = { execute }"
            } else {
                "module.exports = ..."
            };
            (text.to_string(), execute)
        } else if self.global_named(object, "exports").is_some() {
            (
                format!("exports{} = ...", member_text(property)),
                property == Some("execute"),
            )
        } else if let Some(inner) = object.as_member_expression()
            && inner.static_property_name() == Some("exports")
            && self.global_named(inner.object(), "module").is_some()
        {
            (
                format!("module.exports{} = ...", member_text(property)),
                property == Some("execute"),
            )
        } else {
            return None;
        };
        Some(CommonJsExport {
            offset: assignment.span.start,
            text,
            exports_execute,
        })
    }

    /// `require.main === module` in either order, with `==`, `===`, `!=` or `!==`.
    fn cli_entry(binary: &BinaryExpression<'_>) -> Option<CliEntry> {
        if !binary.operator.is_equality() {
            return None;
        }
        let operator = binary.operator.as_str();
        let is_require_main = |e: &Expression<'_>| e.is_specific_member_access("require", "main");
        let is_module = |e: &Expression<'_>| e.is_specific_id("module");
        let text = if is_require_main(&binary.left) && is_module(&binary.right) {
            format!("require.main {operator} module")
        } else if is_module(&binary.left) && is_require_main(&binary.right) {
            format!("module {operator} require.main")
        } else {
            return None;
        };
        Some(CliEntry {
            offset: binary.span.start,
            text,
        })
    }
}

/// `.name` for a static property, `[...]` for a computed one.
fn member_text(property: Option<&str>) -> String {
    property.map_or_else(|| "[...]".to_string(), |name| format!(".{name}"))
}

/// Whether an object literal has an `execute` property (`{ execute }`, `{ execute: run }`).
fn object_has_execute(expression: &Expression<'_>) -> bool {
    let Expression::ObjectExpression(object) = expression.get_inner_expression() else {
        return false;
    };
    object.properties.iter().any(|property| match property {
        ObjectPropertyKind::ObjectProperty(p) => {
            p.key.static_name().is_some_and(|name| name == "execute")
        }
        ObjectPropertyKind::SpreadProperty(_) => false,
    })
}

fn bun_member_message(property: &str) -> String {
    let alternative = match property {
        "file" => "`fs.readFileSync` (from node:fs)",
        "write" => "`fs.writeFileSync` (from node:fs)",
        "sleep" => "`setTimeout` (from node:timers/promises)",
        "spawn" => "`child_process.spawn` (from node:child_process)",
        "spawnSync" => "`child_process.spawnSync` (from node:child_process)",
        "$" => "`child_process.execFile` (from node:child_process)",
        "env" => "`process.env`",
        "argv" => "`process.argv`",
        "nanoseconds" => "`process.hrtime.bigint()`",
        _ => "the Node.js standard library equivalent",
    };
    format!("`Bun.{property}` is a Bun API and throws ReferenceError in Node.js; use {alternative}")
}

impl<'a> VisitJs<'a> for Scan<'_> {
    fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
        // `if (import.meta.main)`: the ES module spelling of `require.main === module`.
        if matches!(it.object, Expression::ImportMeta(_)) && it.property.name == "main" {
            self.found.cli.push(CliEntry {
                offset: it.span.start,
                text: "import.meta.main".to_string(),
            });
        }
        if !self.bun_member(&it.object, Some(it.property.name.as_str())) {
            walk_js::walk_static_member_expression(self, it);
        }
    }

    fn visit_computed_member_expression(&mut self, it: &ComputedMemberExpression<'a>) {
        let property = it.static_property_name().map(|name| name.as_str());
        if self.bun_member(&it.object, property) {
            self.visit_expression(&it.expression);
        } else {
            walk_js::walk_computed_member_expression(self, it);
        }
    }

    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        if it.name == "Bun" && is_global(it, self.scoping) {
            self.report_bun(it.span.start, None);
        }
    }

    fn visit_unary_expression(&mut self, it: &UnaryExpression<'a>) {
        // `typeof Bun` is a feature check; it never throws.
        if it.operator == UnaryOperator::Typeof && self.global_named(&it.argument, "Bun").is_some()
        {
            return;
        }
        walk_js::walk_unary_expression(self, it);
    }

    fn visit_ts_export_assignment(&mut self, it: &TSExportAssignment<'a>) {
        let exports_execute = object_has_execute(&it.expression);
        let text = if exports_execute {
            "export = { execute }"
        } else {
            "export = ..."
        };
        self.found.commonjs.push(CommonJsExport {
            offset: it.span.start,
            text: text.to_string(),
            exports_execute,
        });
        walk_js::walk_ts_export_assignment(self, it);
    }

    fn visit_binary_expression(&mut self, it: &BinaryExpression<'a>) {
        if let Some(cli) = Self::cli_entry(it) {
            self.found.cli.push(cli);
        }
        walk_js::walk_binary_expression(self, it);
    }

    fn visit_assignment_expression(&mut self, it: &AssignmentExpression<'a>) {
        if let Some(export) = self.commonjs_export(it) {
            self.found.commonjs.push(export);
        }
        walk_js::walk_assignment_expression(self, it);
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        if let Some(specifier) = it.common_js_require() {
            self.bun_module(specifier);
        }
        walk_js::walk_call_expression(self, it);
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        if let Expression::StringLiteral(specifier) = it.source.get_inner_expression() {
            self.bun_module(specifier);
        }
        walk_js::walk_import_expression(self, it);
    }

    fn visit_import_declaration(&mut self, it: &ImportDeclaration<'a>) {
        if !it.import_kind.is_type() {
            self.bun_module(&it.source);
        }
    }

    fn visit_export_from_declaration(&mut self, it: &ExportFromDeclaration<'a>) {
        if !it.export_kind.is_type() {
            self.bun_module(&it.source);
        }
    }

    fn visit_export_all_declaration(&mut self, it: &ExportAllDeclaration<'a>) {
        if !it.export_kind.is_type() {
            self.bun_module(&it.source);
        }
    }

    fn visit_ts_external_module_reference(&mut self, it: &TSExternalModuleReference<'a>) {
        self.bun_module(&it.expression);
    }

    // Ambient declarations (`declare global {}`, `declare module 'x' {}`) have no runtime code.
    fn visit_ts_global_declaration(&mut self, _it: &TSGlobalDeclaration<'a>) {}

    fn visit_ts_external_module_declaration(&mut self, _it: &TSExternalModuleDeclaration<'a>) {}
}
