//! The read-back of an adapter's gateway store (`store` `read`, adapters/PROTOCOL.md
//! "Read-back") into the [`StoreSnapshot`] the gateway oracle judges: the adapter's
//! session ids are numbered in the order the harness first reads them, and every id,
//! route and parent is checked against what the harness wrote.

use compactsim_model::{MsgId, SessionNo, StoreSnapshot, StoredRow, StoredSession};
use serde::Deserialize;
use serde_json::Value;

/// The adapter's session ids by number ([`SessionNo`] = index): numbered when first read,
/// never renumbered.
#[derive(Clone, Debug, Default)]
pub struct Names(Vec<String>);

impl Names {
    /// The number of adapter session `name`, if it was read before.
    pub fn get(&self, name: &str) -> Option<SessionNo> {
        self.0
            .iter()
            .position(|n| n == name)
            .map(|i| i as SessionNo)
    }

    /// The adapter's id of session `no`.
    pub fn name(&self, no: SessionNo) -> Option<&str> {
        self.0.get(no as usize).map(String::as_str)
    }

    fn number(&mut self, name: &str) -> SessionNo {
        self.get(name).unwrap_or_else(|| {
            self.0.push(name.to_string());
            (self.0.len() - 1) as SessionNo
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    sessions: Vec<RawSession>,
    routes: Vec<(String, String)>,
    bindings: Vec<(String, String)>,
    delivered: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSession {
    session: String,
    parent: Option<String>,
    ended: bool,
    /// The release's `end_reason` (absent: not told).
    #[serde(default)]
    end_reason: Option<String>,
    rows: Vec<RawRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    id: Option<u32>,
    active: bool,
    compacted: bool,
}

/// A read-back as the oracle sees it, with the rows the harness never sent.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadBack {
    pub snapshot: StoreSnapshot,
    /// Stored rows without a `_compactsim_id` (left out of the snapshot).
    pub foreign_rows: u64,
}

/// Reads `value` (a `read` result) against `names`; `written` says whether the harness
/// wrote a row id. What is wrong with it, for a `protocol` failure.
pub fn parse(
    value: &Value,
    names: &mut Names,
    written: &dyn Fn(MsgId) -> bool,
) -> Result<ReadBack, String> {
    let raw = Raw::deserialize(value).map_err(|e| format!("store read: {e}"))?;
    // Listed sessions keep the order they were numbered in; a new one comes after every
    // known one. A session the store no longer lists (a real store may prune) is left out
    // of the snapshot; its number is never reused.
    let mut last: Option<SessionNo> = None;
    for s in &raw.sessions {
        let no = match names.get(&s.session) {
            Some(no) => no,
            None => names.number(&s.session),
        };
        if last.is_some_and(|l| no <= l) {
            return Err(format!(
                "store read: session `{}` listed out of creation order (sessions are listed in creation order)",
                s.session
            ));
        }
        last = Some(no);
    }
    let known = |n: &str, what: &str| {
        names
            .get(n)
            .ok_or_else(|| format!("store read: {what} names session `{n}`, which is not listed"))
    };
    let mut foreign_rows = 0u64;
    let mut sessions = Vec::with_capacity(raw.sessions.len());
    for s in &raw.sessions {
        let parent = s
            .parent
            .as_deref()
            .map(|p| known(p, "a parent"))
            .transpose()?;
        let parent = parent.filter(|&p| {
            raw.sessions
                .iter()
                .find(|r| names.get(&r.session) == Some(p))
                .is_none_or(compression_parent)
        });
        let mut rows = Vec::with_capacity(s.rows.len());
        for r in &s.rows {
            let Some(id) = r.id else {
                foreign_rows += 1;
                continue;
            };
            if !written(MsgId(id)) {
                return Err(format!(
                    "store read: session `{}` holds row {id}, which the harness never wrote",
                    s.session
                ));
            }
            rows.push(StoredRow {
                id: MsgId(id),
                active: r.active,
                compacted: r.compacted,
            });
        }
        sessions.push(stored_session(
            known(&s.session, "a session")?,
            parent,
            s.ended,
            rows,
        ));
    }
    let pairs = |v: &[(String, String)], what: &str| -> Result<Vec<(String, SessionNo)>, String> {
        let mut out = v
            .iter()
            .map(|(k, s)| Ok((k.clone(), known(s, what)?)))
            .collect::<Result<Vec<_>, String>>()?;
        out.sort();
        Ok(out)
    };
    Ok(ReadBack {
        snapshot: StoreSnapshot {
            routes: pairs(&raw.routes, "a route")?,
            bindings: pairs(&raw.bindings, "a binding")?,
            sessions,
            delivered: raw.delivered.into_iter().collect(),
        },
        foreign_rows,
    })
}

/// Whether a child of `parent` is its compression child: a parent that ended for
/// another reason (a reset that records a parent, as iot 0.22.2.post1 does) starts no
/// compression lineage.
fn compression_parent(parent: &RawSession) -> bool {
    parent
        .end_reason
        .as_deref()
        .is_none_or(|r| r == END_REASON_COMPRESSION)
}

/// The `end_reason` of a session rotated by compression.
pub const END_REASON_COMPRESSION: &str = "compression";

/// The one place a read-back session becomes the model's [`StoredSession`].
fn stored_session(
    id: SessionNo,
    parent: Option<SessionNo>,
    ended: bool,
    rows: Vec<StoredRow>,
) -> StoredSession {
    let mut session = StoredSession::new(id, parent, rows);
    session.ended = ended;
    session
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value, names: &mut Names) -> Result<ReadBack, String> {
        parse(&v, names, &|id| id.0 < 10)
    }

    #[test]
    fn sessions_are_numbered_as_first_read_and_foreign_rows_are_counted_apart() {
        let mut names = Names::default();
        let v = json!({"sessions": [
            {"session": "a", "parent": null, "ended": true,
             "rows": [{"id": 0, "active": false, "compacted": true}, {"id": null, "active": true, "compacted": false}]},
            {"session": "b", "parent": "a", "ended": false, "rows": [{"id": 3, "active": true, "compacted": false}]}],
            "routes": [["k", "b"]], "bindings": [], "delivered": [1]});
        let r = read(v, &mut names).unwrap();
        assert_eq!(r.foreign_rows, 1);
        assert_eq!(r.snapshot.route("k"), Some(1));
        assert_eq!(r.snapshot.sessions[1].parent, Some(0));
        assert_eq!(r.snapshot.sessions[0].rows().len(), 1);
        assert_eq!(names.name(1), Some("b"));
        assert_eq!(r.snapshot.delivered, std::collections::BTreeSet::from([1]));
    }

    #[test]
    fn a_read_back_naming_what_the_harness_never_saw_is_refused() {
        let mut names = Names::default();
        let unknown_route =
            json!({"sessions": [], "routes": [["k", "x"]], "bindings": [], "delivered": []});
        assert!(read(unknown_route, &mut names)
            .unwrap_err()
            .contains("a route names session `x`"));
        let unwritten = json!({"sessions": [{"session": "a", "parent": null, "ended": false,
            "rows": [{"id": 99, "active": true, "compacted": false}]}], "routes": [], "bindings": [], "delivered": []});
        assert!(read(unwritten, &mut names).unwrap_err().contains("row 99"));
        let mut names = Names::default();
        let two = json!({"sessions": [{"session": "a", "parent": null, "ended": false, "rows": []},
            {"session": "b", "parent": null, "ended": false, "rows": []}], "routes": [], "bindings": [], "delivered": []});
        read(two, &mut names).unwrap();
        let swapped = json!({"sessions": [{"session": "b", "parent": null, "ended": false, "rows": []},
            {"session": "a", "parent": null, "ended": false, "rows": []}], "routes": [], "bindings": [], "delivered": []});
        assert!(read(swapped, &mut names)
            .unwrap_err()
            .contains("out of creation order"));
        let pruned = json!({"sessions": [{"session": "b", "parent": null, "ended": false, "rows": []}],
            "routes": [["k", "b"]], "bindings": [], "delivered": []});
        let r = read(pruned, &mut names).unwrap();
        assert_eq!(
            r.snapshot.route("k"),
            Some(1),
            "a pruned session keeps the numbers"
        );
        let reset = json!({"sessions": [
            {"session": "a", "parent": null, "ended": true, "end_reason": "session_reset", "rows": []},
            {"session": "b", "parent": "a", "ended": false, "end_reason": null, "rows": []}],
            "routes": [], "bindings": [], "delivered": []});
        let r = read(reset, &mut Names::default()).unwrap();
        assert_eq!(
            r.snapshot.sessions[1].parent, None,
            "a reset starts no lineage"
        );
        let extra_key =
            json!({"sessions": [], "routes": [], "bindings": [], "delivered": [], "x": 1});
        assert!(read(extra_key, &mut Names::default()).is_err());
    }
}
