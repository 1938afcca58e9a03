//! `/chat/settings`: the chat's model, set by an operator. The key is write-only: the page
//! says whether one is stored, never what it is; leaving the field empty keeps it.

use askama::Template;
use axum::Form;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::may_configure;
use crate::icons::Icons;
use crate::layout::Layout;
use crate::session::Signed;
use crate::{ConsoleState, page};

#[derive(Template)]
#[template(path = "chat_settings.html")]
struct SettingsPage {
    layout: Layout,
    base_url: String,
    model: String,
    key_stored: bool,
    errors: Vec<(&'static str, String)>,
}

impl SettingsPage {
    fn error(&self, field: &str) -> Option<&str> {
        self.errors
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, e)| e.as_str())
    }
}

fn forbidden() -> Response {
    page::failure(
        StatusCode::FORBIDDEN,
        "Setting the chat's model needs the operator role and a token with the admin scope.",
    )
}

pub(crate) async fn page(State(state): State<ConsoleState>, who: Signed) -> Response {
    if !may_configure(&who.caller) {
        return forbidden();
    }
    let model = match state.store.chat_model().await {
        Ok(m) => m,
        Err(e) => return page::store_error(e),
    };
    let layout = Layout::new(&who.caller, "/chat", "Chat model", Icons::default());
    page::html(
        StatusCode::OK,
        &SettingsPage {
            layout,
            base_url: model
                .as_ref()
                .map(|m| m.base_url.clone())
                .unwrap_or_default(),
            model: model.as_ref().map(|m| m.model.clone()).unwrap_or_default(),
            key_stored: model.is_some_and(|m| m.api_key.is_some()),
            errors: Vec::new(),
        },
    )
}

#[derive(Deserialize)]
pub(crate) struct SettingsForm {
    base_url: String,
    model: String,
    #[serde(default)]
    api_key: String,
    #[serde(default)]
    remove_key: Option<String>,
}

/// What is wrong with the form, field by field.
fn check(form: &SettingsForm) -> Vec<(&'static str, String)> {
    let mut errors = Vec::new();
    let url = form.base_url.trim();
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
        Ok(_) => errors.push((
            "base_url",
            "Use an http:// or https:// URL with a host.".to_string(),
        )),
        Err(e) => errors.push(("base_url", format!("This is not a URL: {e}."))),
    }
    if form.model.trim().is_empty() {
        errors.push(("model", "Name the model, as the endpoint knows it.".into()));
    }
    if form.api_key.chars().any(char::is_control) {
        errors.push(("api_key", "The key holds control characters.".into()));
    }
    errors
}

pub(crate) async fn save(
    State(state): State<ConsoleState>,
    who: Signed,
    Form(form): Form<SettingsForm>,
) -> Response {
    if !may_configure(&who.caller) {
        return forbidden();
    }
    let errors = check(&form);
    let stored = match state.store.chat_model().await {
        Ok(m) => m,
        Err(e) => return page::store_error(e),
    };
    if !errors.is_empty() {
        let layout = Layout::new(&who.caller, "/chat", "Chat model", Icons::default());
        return page::html(
            StatusCode::UNPROCESSABLE_ENTITY,
            &SettingsPage {
                layout,
                base_url: form.base_url,
                model: form.model,
                key_stored: stored.is_some_and(|m| m.api_key.is_some()),
                errors,
            },
        );
    }
    let key = if form.remove_key.is_some() {
        Some("")
    } else if form.api_key.trim().is_empty() {
        None
    } else {
        Some(form.api_key.trim())
    };
    match state
        .store
        .put_chat_model(
            who.caller.user(),
            form.base_url.trim().trim_end_matches('/'),
            form.model.trim(),
            key,
        )
        .await
    {
        Ok(_) => Redirect::to("/chat?saved=1").into_response(),
        Err(e) => page::store_error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_says_what_is_wrong_where() {
        let form = |url: &str, model: &str| SettingsForm {
            base_url: url.into(),
            model: model.into(),
            api_key: String::new(),
            remove_key: None,
        };
        assert!(check(&form("http://127.0.0.1:8080/v1", "m")).is_empty());
        let e = check(&form("ftp://x", ""));
        assert_eq!(
            e.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
            ["base_url", "model"]
        );
        assert_eq!(check(&form("not a url", "m"))[0].0, "base_url");
    }
}
