//! The JSON shape of a `compactsim_model::Violation` as report.json holds it, for the
//! JSON Schema (the model crate carries no schema derive). Field for field the model's
//! serde layout; a drift fails `a_real_report_validates` (unknown fields are refused).

use schemars::JsonSchema;

/// `compactsim_model::Violation`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct ViolationShape {
    invariant: String,
    turn: u32,
    step: u32,
    message: String,
    witness: WitnessShape,
}

/// `compactsim_model::Witness`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct WitnessShape {
    rows: Vec<WitnessRowShape>,
    /// Free-form facts: counts, token totals, event lines.
    facts: Vec<String>,
}

/// `compactsim_model::WitnessRow`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct WitnessRowShape {
    /// Position in the list the witness speaks of (`before` or `after`).
    index: u32,
    /// The message id.
    id: u32,
    role: RoleShape,
    marker: bool,
    micro_marker: bool,
    tokens: TokensShape,
    segments: u32,
    tool_calls: u32,
    note: String,
}

/// `compactsim_model::Role`.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum RoleShape {
    System,
    User,
    Assistant,
    Tool,
}

/// `compactsim_model::Tokens`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct TokensShape {
    rough: u32,
    real: u32,
}

/// The JSON Schema of `report.json` (draft 2020-12), pretty-printed with a final line
/// break: the text of `docs/schemas/report.schema.json`.
pub fn report_schema_json() -> String {
    let schema = schemars::schema_for!(crate::Report);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}
