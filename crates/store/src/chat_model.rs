//! The model the console's chat talks to: an OpenAI-compatible chat-completions endpoint
//! (base URL, model, API key), configured by an operator. All three are kept sealed in the
//! secrets table (owner `chat`); the key never leaves the server, and the audit log says
//! only whether it changed.

use serde::Serialize;

use crate::audit::{AuditEvent, record_in};
use crate::{Store, StoreError};

const OWNER: &str = "chat";

/// The chat's model settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatModel {
    /// The endpoint's base URL, e.g. `https://api.openai.com/v1` (the chat posts to
    /// `BASE/chat/completions`).
    pub base_url: String,
    /// The model's name, as the endpoint knows it.
    pub model: String,
    /// The API key, sent as a bearer token; `None` for endpoints that need none.
    pub api_key: Option<String>,
}

/// What the audit log keeps of a change.
#[derive(Serialize)]
struct Audited<'a> {
    base_url: &'a str,
    model: &'a str,
    api_key_set: bool,
}

fn audited(m: &ChatModel) -> Audited<'_> {
    Audited {
        base_url: &m.base_url,
        model: &m.model,
        api_key_set: m.api_key.is_some(),
    }
}

impl Store {
    /// The chat's model settings, when an operator has set them.
    pub async fn chat_model(&self) -> Result<Option<ChatModel>, StoreError> {
        let (Some(base_url), Some(model)) = (
            self.secret(OWNER, "base_url").await?,
            self.secret(OWNER, "model").await?,
        ) else {
            return Ok(None);
        };
        let api_key = self
            .secret(OWNER, "api_key")
            .await?
            .filter(|k| !k.is_empty());
        Ok(Some(ChatModel {
            base_url,
            model,
            api_key,
        }))
    }

    /// Sets the chat's model. `api_key`: `None` keeps the stored key, `Some("")` removes
    /// it. `actor` is who, for the audit log.
    pub async fn put_chat_model(
        &self,
        actor: &str,
        base_url: &str,
        model: &str,
        api_key: Option<&str>,
    ) -> Result<ChatModel, StoreError> {
        let old = self.chat_model().await?;
        let key = match api_key {
            Some(k) => Some(k.to_string()),
            None => old.as_ref().and_then(|m| m.api_key.clone()),
        };
        let mut tx = self.pool.begin().await?;
        for (name, value) in [
            ("base_url", base_url),
            ("model", model),
            ("api_key", key.as_deref().unwrap_or("")),
        ] {
            self.put_secret_on(&mut tx, OWNER, name, value).await?;
        }
        let new = ChatModel {
            base_url: base_url.to_string(),
            model: model.to_string(),
            api_key: key.filter(|k| !k.is_empty()),
        };
        record_in(
            &mut tx,
            AuditEvent::change(
                actor,
                "chat_model.update",
                "chat_model",
                "default",
                old.as_ref().map(audited).as_ref(),
                Some(&audited(&new)),
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(new)
    }
}
