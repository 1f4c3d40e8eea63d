//! MCP sessions that outlive a restart. A client of Streamable HTTP keeps the session id it was
//! given and sends it with every call; a controller restarted (a Ctrl-C, a deploy) knew none of
//! them, so each agent's next call failed ("Session not found") and, once it opened a new
//! session, it was on a new thread, its page lost. The SDK restores a session from a store:
//! it replays the client's `initialize` it kept. Here that store is the controller's own, with
//! the tenant that opened the session beside it; a session is restored only for that tenant
//! (checked in [`super::http`]), and the thread it names (`mcp-<id>`) goes on where it was.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

use crate::replay::now_ms;
use crate::store::Store;

/// A session opened longer ago than this is not restored (it is forgotten at the next start):
/// an agent that comes back after so long starts a session anew.
pub const KEPT_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// The sessions' records in the controller's store.
pub struct StoredSessions {
    store: Arc<dyn Store>,
}

impl StoredSessions {
    /// Forgets the sessions older than [`KEPT_FOR`].
    pub fn open(store: Arc<dyn Store>) -> Self {
        match store.forget_mcp_sessions_before(now_ms() - KEPT_FOR.as_millis() as i64) {
            Ok(0) => {}
            Ok(forgotten) => tracing::info!(forgotten, "old MCP sessions forgotten"),
            Err(error) => tracing::warn!(%error, "old MCP sessions could not be forgotten"),
        }
        Self { store }
    }

    /// The tenant that opened session `id`, if it is known.
    pub fn tenant(&self, id: &str) -> Option<String> {
        self.store.mcp_session(id).ok().flatten()?.tenant
    }

    /// Records that `tenant` opened session `id`, before the client learns the id.
    pub async fn opened_by(&self, id: &str, tenant: &str) -> crate::error::Result<()> {
        self.store.update_mcp_session(id, &|session| {
            session.tenant = Some(tenant.to_string());
            if session.opened_at_ms == 0 {
                session.opened_at_ms = now_ms();
            }
        })?;
        self.store.flush().await
    }
}

#[tonic::async_trait]
impl SessionStore for StoredSessions {
    async fn load(&self, id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(session) = self.store.mcp_session(id)? else {
            return Ok(None);
        };
        match (session.tenant, session.state) {
            (Some(_), Some(state)) => Ok(Some(serde_json::from_value(state)?)),
            // Opened by a call whose reply never went out (a crash in between): unknown.
            _ => Ok(None),
        }
    }

    async fn store(&self, id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let state = serde_json::to_value(state)?;
        self.store.update_mcp_session(id, &|session| {
            session.state = Some(state.clone());
            if session.opened_at_ms == 0 {
                session.opened_at_ms = now_ms();
            }
        })?;
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), SessionStoreError> {
        self.store.remove_mcp_session(id)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    fn state() -> SessionState {
        serde_json::from_value(serde_json::json!({"initialize_params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "agent", "version": "1"}}}))
        .unwrap()
    }

    #[tokio::test]
    async fn a_session_is_restored_once_both_its_initialize_and_its_tenant_are_kept() {
        let sessions = StoredSessions::open(Arc::new(SledStore::temporary().unwrap()));
        sessions.store("s1", &state()).await.unwrap();
        assert!(
            sessions.load("s1").await.unwrap().is_none(),
            "no tenant yet"
        );
        sessions.opened_by("s1", "tenant-a").await.unwrap();
        let loaded = sessions.load("s1").await.unwrap().unwrap();
        assert_eq!(loaded.initialize_params.client_info.name, "agent");
        assert_eq!(sessions.tenant("s1").as_deref(), Some("tenant-a"));
        sessions.delete("s1").await.unwrap();
        assert!(sessions.load("s1").await.unwrap().is_none());
        assert_eq!(sessions.tenant("s1"), None);
    }

    #[tokio::test]
    async fn sessions_opened_too_long_ago_are_forgotten_at_the_next_start() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let sessions = StoredSessions::open(store.clone());
        sessions.store("old", &state()).await.unwrap();
        sessions.opened_by("old", "t").await.unwrap();
        sessions.store("new", &state()).await.unwrap();
        sessions.opened_by("new", "t").await.unwrap();
        store
            .update_mcp_session("old", &|session| {
                session.opened_at_ms = now_ms() - KEPT_FOR.as_millis() as i64 - 1
            })
            .unwrap();
        let sessions = StoredSessions::open(store);
        assert!(sessions.load("old").await.unwrap().is_none());
        assert!(sessions.load("new").await.unwrap().is_some());
    }
}
