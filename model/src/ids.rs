//! Identifiers. Every id is a dense integer assigned in creation order within one case,
//! so comparing two ids compares creation order.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Identity of one message for the life of a case. Copies keep the id; a row made by
/// merging two rows keeps the id of the first (as Hermes keeps the first dict).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct MsgId(pub u32);

/// A tool call id, rendered `call_<n>` on the wire.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct CallId(pub u32);

/// One fact planted by the conversation generator. Facts are symbols, not strings: a
/// summary "retains" a fact by carrying its id.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct FactId(pub u32);

impl fmt::Display for MsgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}", self.0)
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call_{}", self.0)
    }
}

impl CallId {
    /// `call_<n>`, as `Display` writes it, without the formatter (a row's calls are
    /// written in every request).
    pub fn spelled(self) -> String {
        let mut out = String::with_capacity(16);
        out.push_str("call_");
        push_decimal(&mut out, self.0);
        out
    }
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut String, n: u32) {
    out.push_str(decimal(n, &mut [0; 10]));
}

/// `n` in decimal, written into `digits` without the formatter.
pub fn decimal(mut n: u32, digits: &mut [u8; 10]) -> &str {
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Every byte from `at` is an ASCII digit.
    std::str::from_utf8(&digits[at..]).unwrap_or_default()
}

impl fmt::Display for FactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FACT-{:06}", self.0)
    }
}

#[cfg(test)]
mod spelled_tests {
    use super::*;

    #[test]
    fn a_call_id_is_spelled_as_display_writes_it() {
        for n in [0, 7, 10, 99, 12_345, 999_999_999, u32::MAX] {
            assert_eq!(CallId(n).spelled(), CallId(n).to_string());
        }
    }
}
