//! 2025-11-25 sessions that every gateway of a fleet can continue: rmcp's `SessionStore`
//! over the host's [`SessionRecords`] (the shared store). A gateway that does not know a
//! session asks the store and, when the session is the caller's, restores it by replaying
//! the client's `initialize`; another caller's session is unknown to them (404), exactly
//! as on the gateway that opened it.

use std::sync::Arc;

use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use toolhost_host::store::SessionRecords;

use crate::sessions::OPENER;

/// One endpoint's sessions in the shared store.
pub(crate) struct SharedSessions {
    pub(crate) records: Arc<dyn SessionRecords>,
    /// The endpoint's path: a session is kept for one endpoint.
    pub(crate) path: String,
}

/// The key a session of the endpoint at `path` is kept and relayed under: never the id
/// itself, which is a credential.
pub(crate) fn session_key(path: &str, id: &str) -> String {
    toolhost_host::hash_token(&format!("{path}\n{id}"))
}

impl SharedSessions {
    fn key(&self, id: &str) -> String {
        session_key(&self.path, id)
    }
}

/// The user of the current request (`""`: a server's one default user).
fn opener() -> Option<Arc<str>> {
    OPENER.try_with(|o| Arc::clone(&o.user)).ok()
}

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(user) = opener() else {
            return Ok(None);
        };
        let Some((owner, initialize)) = self.records.load(&self.key(id)).await? else {
            return Ok(None);
        };
        if owner != *user {
            return Ok(None);
        }
        let params: InitializeRequestParams = serde_json::from_str(&initialize)?;
        tracing::debug!(user = %owner, "continuing a session opened on another gateway");
        Ok(Some(SessionState::new(params)))
    }

    async fn store(&self, id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let user = opener().unwrap_or_else(|| Arc::from(""));
        let initialize = serde_json::to_string(&state.initialize_params)?;
        self.records.save(&self.key(id), &user, &initialize).await?;
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), SessionStoreError> {
        self.records.delete(&self.key(id)).await?;
        Ok(())
    }
}
