//! Inside `execute`'s own body (not nested functions, arrows or classes): console calls,
//! `return <value>` statements and `throw`s that no enclosing `try ... catch` handles.

use oxc_ast::ast::{
    ArrowFunctionExpression, CallExpression, Class, Expression, Function, ReturnStatement,
    ThrowStatement, TryStatement,
};
use oxc_ast_visit::{VisitJs, walk_js};
use oxc_semantic::{ScopeFlags, Scoping};

use super::exports::ExecuteFn;
use super::globals::is_global;

/// Console methods whose output the agent never sees.
const CONSOLE_METHODS: &[&str] = &["log", "info", "warn", "error", "debug"];

/// The first console call: where it starts and what it calls (`console.log`).
pub(super) struct ConsoleCall {
    pub offset: u32,
    pub callee: String,
}

#[derive(Default)]
pub(super) struct BodyFacts {
    pub first_console: Option<ConsoleCall>,
    /// A `return <expression>` (or an expression-bodied arrow).
    pub returns_value: bool,
    /// Where each `throw` outside any `try` block (with a `catch`) starts.
    pub unprotected_throws: Vec<u32>,
}

pub(super) fn scan(function: &ExecuteFn<'_, '_>, scoping: &Scoping) -> BodyFacts {
    let mut scan = Scan {
        scoping,
        try_depth: 0,
        facts: BodyFacts::default(),
    };
    match function {
        ExecuteFn::Function(function) => {
            if let Some(body) = &function.body {
                scan.visit_function_body(body);
            }
        }
        ExecuteFn::Arrow(arrow) => {
            scan.facts.returns_value = arrow.is_expression();
            scan.visit_arrow_function_body(&arrow.body);
        }
    }
    scan.facts
}

struct Scan<'s> {
    scoping: &'s Scoping,
    /// How many enclosing `try` blocks have a `catch` clause.
    try_depth: u32,
    facts: BodyFacts,
}

impl Scan<'_> {
    fn console_callee(&self, call: &CallExpression<'_>) -> Option<String> {
        let member = call.callee.get_inner_expression().as_member_expression()?;
        let Expression::Identifier(object) = member.object().get_inner_expression() else {
            return None;
        };
        if object.name != "console" || !is_global(object, self.scoping) {
            return None;
        }
        let method = member.static_property_name()?;
        CONSOLE_METHODS
            .contains(&method)
            .then(|| format!("console.{method}"))
    }
}

impl<'a> VisitJs<'a> for Scan<'_> {
    // Nested functions, arrows and classes are someone else's body.
    fn visit_function(&mut self, _it: &Function<'a>, _flags: ScopeFlags) {}

    fn visit_arrow_function_expression(&mut self, _it: &ArrowFunctionExpression<'a>) {}

    fn visit_class(&mut self, _it: &Class<'a>) {}

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        if self.facts.first_console.is_none()
            && let Some(callee) = self.console_callee(it)
        {
            self.facts.first_console = Some(ConsoleCall {
                offset: it.span.start,
                callee,
            });
        }
        walk_js::walk_call_expression(self, it);
    }

    fn visit_return_statement(&mut self, it: &ReturnStatement<'a>) {
        if it.argument.is_some() {
            self.facts.returns_value = true;
        }
        walk_js::walk_return_statement(self, it);
    }

    fn visit_throw_statement(&mut self, it: &ThrowStatement<'a>) {
        if self.try_depth == 0 {
            self.facts.unprotected_throws.push(it.span.start);
        }
        walk_js::walk_throw_statement(self, it);
    }

    fn visit_try_statement(&mut self, it: &TryStatement<'a>) {
        // Only a `catch` protects the `try` block; `try {} finally {}` still lets a throw out.
        // Throws in `catch` and `finally` themselves are not protected by this statement.
        let catches = it.handler.is_some();
        self.try_depth += u32::from(catches);
        self.visit_block_statement(&it.block);
        self.try_depth -= u32::from(catches);
        if let Some(handler) = &it.handler {
            self.visit_catch_clause(handler);
        }
        if let Some(finalizer) = &it.finalizer {
            self.visit_block_statement(finalizer);
        }
    }
}
