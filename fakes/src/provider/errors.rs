//! The errors the fake provider returns, shaped like real ones (hermes-domain §2.7):
//! 413, the context-length phrases, terse generic 400s, server disconnects and 5xx.

use serde::Serialize;

/// An error as the agent sees it: an HTTP status (none for a dropped connection) and
/// the message text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProviderError {
    pub status: Option<u16>,
    pub message: String,
}

/// How a case's provider reports a request over its context window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverflowShape {
    /// `413 Request Entity Too Large`.
    PayloadTooLarge,
    /// A 400 naming the context limit, with the phrase `CONTEXT_TEMPLATES[i]`.
    ContextPhrase(u8),
    /// A terse 400 that names nothing (`Bad Request`).
    GenericBadRequest,
    /// The server drops the connection: no status, no usage.
    Disconnect,
}

impl OverflowShape {
    /// The shape's name in plans and scenario files: `payload_too_large`, `phrase:<i>`
    /// (`i` below the number of context templates), `generic_400` or `disconnect`.
    pub fn name(self) -> String {
        match self {
            OverflowShape::PayloadTooLarge => "payload_too_large".into(),
            OverflowShape::ContextPhrase(i) => format!("phrase:{i}"),
            OverflowShape::GenericBadRequest => "generic_400".into(),
            OverflowShape::Disconnect => "disconnect".into(),
        }
    }

    /// Parses [`OverflowShape::name`]'s spellings.
    pub fn parse(text: &str) -> Result<OverflowShape, String> {
        let phrases = CONTEXT_TEMPLATES.len();
        let shape = match text {
            "payload_too_large" => Some(OverflowShape::PayloadTooLarge),
            "generic_400" => Some(OverflowShape::GenericBadRequest),
            "disconnect" => Some(OverflowShape::Disconnect),
            _ => text
                .strip_prefix("phrase:")
                .and_then(|i| i.parse::<u8>().ok())
                .filter(|&i| (i as usize) < phrases)
                .map(OverflowShape::ContextPhrase),
        };
        shape.ok_or_else(|| {
            format!(
                "unknown overflow shape `{text}` (known: payload_too_large, phrase:0 .. phrase:{}, generic_400, disconnect)",
                phrases - 1
            )
        })
    }
}

/// One template per context-length phrase the agent recognises; `{limit}` and
/// `{usage}` are filled in.
pub const CONTEXT_TEMPLATES: [&str; 10] = [
    "Error code: 400 - context length exceeded: {usage} tokens requested, {limit} allowed",
    "the request ({usage} tokens) is larger than the available context size ({limit} tokens)",
    "This model's maximum context length is {limit} tokens. However, your messages resulted in {usage} tokens.",
    "Request of {usage} tokens is over the token limit of {limit}",
    "too many tokens: {usage} > {limit}",
    "Please reduce the length of the messages or completion ({usage}/{limit}).",
    "input of {usage} tokens exceeds the limit of {limit}",
    "prompt of {usage} tokens does not fit the context window of {limit}",
    "Request Entity Too Large: {usage} tokens, limit {limit}",
    "prompt is too long: {usage} tokens > {limit} maximum",
];

/// Terse 400 bodies (all under 30 characters).
pub const GENERIC_BAD_REQUESTS: [&str; 3] = ["Bad Request", "Error code: 400", "invalid request"];

/// Exception names of a dropped connection (httpx / aiohttp).
pub const DISCONNECT_EXCEPTIONS: [&str; 3] = [
    "ReadError",
    "RemoteProtocolError",
    "ServerDisconnectedError",
];

/// Transient server errors.
pub const SERVER_ERRORS: [(u16, &str); 3] = [
    (500, "Internal Server Error"),
    (502, "Bad Gateway"),
    (503, "Service Unavailable"),
];

impl ProviderError {
    /// The overflow error of `shape` for `usage` tokens against `limit`; `pick` chooses
    /// among equivalent variants.
    pub fn overflow(shape: OverflowShape, usage: u64, limit: u32, pick: usize) -> Self {
        match shape {
            OverflowShape::PayloadTooLarge => ProviderError {
                status: Some(413),
                message: "Request Entity Too Large".into(),
            },
            OverflowShape::ContextPhrase(i) => {
                let template = CONTEXT_TEMPLATES[i as usize % CONTEXT_TEMPLATES.len()];
                ProviderError {
                    status: Some(400),
                    message: template
                        .replace("{usage}", &usage.to_string())
                        .replace("{limit}", &limit.to_string()),
                }
            }
            OverflowShape::GenericBadRequest => ProviderError {
                status: Some(400),
                message: GENERIC_BAD_REQUESTS[pick % GENERIC_BAD_REQUESTS.len()].into(),
            },
            OverflowShape::Disconnect => ProviderError::disconnect(pick),
        }
    }

    pub fn disconnect(pick: usize) -> Self {
        let name = DISCONNECT_EXCEPTIONS[pick % DISCONNECT_EXCEPTIONS.len()];
        ProviderError {
            status: None,
            message: format!("{name}: Server disconnected without sending a response."),
        }
    }

    pub fn server_error(pick: usize) -> Self {
        let (status, text) = SERVER_ERRORS[pick % SERVER_ERRORS.len()];
        ProviderError {
            status: Some(status),
            message: text.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_names_parse_back_and_phrases_stay_in_range() {
        let mut shapes = vec![
            OverflowShape::PayloadTooLarge,
            OverflowShape::GenericBadRequest,
            OverflowShape::Disconnect,
        ];
        shapes.extend((0..CONTEXT_TEMPLATES.len() as u8).map(OverflowShape::ContextPhrase));
        for shape in shapes {
            assert_eq!(OverflowShape::parse(&shape.name()), Ok(shape));
        }
        assert!(OverflowShape::parse("phrase:10").is_err());
        assert!(OverflowShape::parse("phrase:x")
            .unwrap_err()
            .contains("phrase:9"));
    }
}
