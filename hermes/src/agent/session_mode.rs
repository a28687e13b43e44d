//! How a compaction lands in the session store: `rotate` (a child session with a new id,
//! `compression.in_place = false`) or `in-place` (the transcript archived and rewritten
//! under the same id). A run may fix it (`--session-mode`); absent, each case keeps the
//! mode it drew. Era a always rotates.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum SessionMode {
    Rotate,
    InPlace,
}

impl SessionMode {
    pub const ALL: [SessionMode; 2] = [SessionMode::Rotate, SessionMode::InPlace];

    pub fn name(self) -> &'static str {
        match self {
            SessionMode::Rotate => "rotate",
            SessionMode::InPlace => "in-place",
        }
    }

    pub fn parse(s: &str) -> Result<SessionMode, String> {
        SessionMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown session mode `{s}` (known: rotate, in-place)"))
    }

    /// `compression.in_place`.
    pub fn in_place(self) -> bool {
        self == SessionMode::InPlace
    }

    pub fn of_in_place(in_place: bool) -> SessionMode {
        if in_place {
            SessionMode::InPlace
        } else {
            SessionMode::Rotate
        }
    }
}

impl std::fmt::Display for SessionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_others_are_refused() {
        for m in SessionMode::ALL {
            assert_eq!(SessionMode::parse(m.name()), Ok(m));
            assert_eq!(SessionMode::of_in_place(m.in_place()), m);
        }
        assert!(SessionMode::parse("inplace")
            .unwrap_err()
            .contains("rotate, in-place"));
    }
}
