//! Tool-call arguments: JSON object strings of a requested length.

use compactsim_model::Arguments;

/// The argument key a tool is called with.
pub fn argument_key(tool: &str) -> &'static str {
    match tool {
        "read_file" | "write_file" | "patch" => "path",
        "terminal" => "command",
        "web_search" | "search_files" | "memory" | "session_search" => "query",
        "browser_navigate" | "web_extract" => "url",
        "send_message" => "text",
        "read_channel" => "channel",
        _ => "input",
    }
}

/// A JSON object `{"<key>":"<value>"}` of exactly `chars` characters when `chars` is at
/// least the empty object's length (else that length), the value drawn from `seed`:
/// kept as its recipe, written when first read (`Arguments`).
pub fn arguments(tool: &str, chars: u32, seed: u64) -> Arguments {
    Arguments::generated(argument_key(tool), chars, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_json_objects_of_the_requested_length() {
        for tool in ["terminal", "read_file", "send_message", "other"] {
            for chars in [20, 21, 57, 400, 1_500] {
                let a = arguments(tool, chars, chars as u64 * 31);
                assert_eq!(a.len(), chars as usize, "{tool} {chars}");
                let v: serde_json::Value = serde_json::from_str(&a).expect("valid JSON");
                assert!(v.get(argument_key(tool)).is_some());
            }
        }
        assert_ne!(arguments("terminal", 60, 1), arguments("terminal", 60, 2));
        assert_eq!(arguments("terminal", 0, 1), "{\"command\":\"\"}");
    }
}
