//! The gateway engine's link to the store an adapter keeps, through the case's external
//! compactor (the same child serves its passes and its store): `open` on every child
//! start, one `store` request per durable step, a kill of the child at a crash point.

use super::dir::DurableDir;
use super::ops::StoreOp;
use crate::external::compactor::{failure, restart_if_pending, External, NoSummaries};
use crate::external::error::{AdapterFailure, FailureKind};
use crate::external::wire::HarnessMsg;
use compactsim_fakes::seam::CompactorFailure;
use serde_json::{json, Value};

/// The environment variable naming the case's durable directory in every child started
/// for the case (the same directory `open` names): an adapter may prepare the store's
/// process image before the first `open` (adapters/PROTOCOL.md, "Gateway store").
pub const STORE_DIR_ENV: &str = "COMPACTSIM_STORE_DIR";

/// One case's store: its durable directory (made on the first `open`), the key it
/// serves, and whether the running child has opened it.
#[derive(Debug, Default)]
pub struct StoreState {
    dir: Option<DurableDir>,
    key: String,
    topic: bool,
    opened: bool,
    /// Children killed at crash points in this case.
    pub kills: u64,
}

impl External {
    /// Whether the adapter's hello declares the gateway store.
    pub fn declares_store(&self) -> bool {
        self.pool
            .hello()
            .is_ok_and(|i| super::declares_store(&i.capabilities))
    }

    /// The case's store serves `key` (`topic`: a topic with a binding); its durable
    /// directory is made now, empty. The child a worker kept from its previous case is
    /// ended first: a case's store is served only by children started for it, as a
    /// gateway process serves one store for its life (a real store's modules fix paths
    /// and caches when imported, so a child that served another directory would write
    /// there).
    /// Its children get the directory in [`STORE_DIR_ENV`].
    pub fn store_begin(&mut self, key: &str, topic: bool) -> Result<(), CompactorFailure> {
        let dir = DurableDir::new().map_err(|e| CompactorFailure {
            what: format!("gateway store: durable directory: {e}"),
        })?;
        if let Some(s) = self.session.as_mut() {
            s.kill_child();
            let path = dir.path().display().to_string();
            s.set_case_env(vec![(STORE_DIR_ENV.to_string(), path)]);
        }
        self.store = StoreState {
            dir: Some(dir),
            key: key.to_string(),
            topic,
            opened: false,
            kills: 0,
        };
        Ok(())
    }

    /// The case's durable directory, while the case runs.
    pub fn store_dir(&self) -> Option<&std::path::Path> {
        self.store.dir.as_ref().map(DurableDir::path)
    }

    /// Sends `op` (after the `restart` and `open` a new child owes) and returns its
    /// result's `value` (`null` when absent).
    pub fn store_request(
        &mut self,
        op: &StoreOp<'_>,
        now_ms: u64,
    ) -> Result<Value, CompactorFailure> {
        let Some(session) = self.session.as_mut() else {
            return Err(CompactorFailure {
                what: format!("adapter `{}` could not be set up", self.pool.spec().command),
            });
        };
        restart_if_pending(session, &mut self.restart_pending, &mut NoSummaries)?;
        if !self.store.opened {
            let dir = self
                .store
                .dir
                .as_ref()
                .map(|d| d.path().display().to_string());
            let mut body = serde_json::Map::new();
            body.insert("op".into(), json!("open"));
            body.insert("now_ms".into(), json!(now_ms));
            body.insert("dir".into(), json!(dir.unwrap_or_default()));
            body.insert("key".into(), json!(self.store.key));
            body.insert("topic".into(), json!(self.store.topic));
            session
                .request(|id| HarnessMsg::Store { id, body }, &mut NoSummaries)
                .map_err(failure)?;
            self.store.opened = true;
        }
        let book = &mut self.book;
        let body = op.body(now_ms, &mut |rows| book.to_chat(rows));
        let reply = session
            .request(|id| HarnessMsg::Store { id, body }, &mut NoSummaries)
            .map_err(failure)?;
        Ok(reply.value.unwrap_or(Value::Null))
    }

    /// The gateway process dies: the child's group is killed, the next request starts a
    /// new child (`hello`, `restart`, `open` on the same directory).
    pub fn store_crash(&mut self) {
        if let Some(s) = self.session.as_mut() {
            s.kill_child();
        }
        self.restart_pending = true;
        self.store.opened = false;
        self.store.kills += 1;
    }

    /// A reply to store request `request` the harness cannot read: a `protocol` adapter
    /// failure naming the command and the request; the child is killed (never trusted
    /// again).
    pub fn store_bad_reply(&mut self, request: &str, what: String) -> CompactorFailure {
        if let Some(s) = self.session.as_mut() {
            s.kill_child();
        }
        failure(AdapterFailure {
            command: self.pool.spec().command.clone(),
            request: format!("store {request}"),
            kind: FailureKind::Protocol(what),
            stderr_tail: Vec::new(),
        })
    }
}
