//! The protocol's golden exchanges (adapters/golden/*.jsonl) against the schema
//! (adapters/protocol.schema.json) and against the harness's (de)serializers: every
//! line validates, parses into the typed message of its direction and serializes back
//! to the same JSON. Bad messages are rejected by both the schema and serde.

use compactsim_harness::external::delta::Edit;
use compactsim_harness::external::wire::{AdapterMsg, HarnessMsg, KNOWN_HOOKS};
use serde_json::{json, Value};
use std::path::PathBuf;

fn adapters_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../adapters")
}

fn schema() -> Value {
    let text = std::fs::read_to_string(adapters_dir().join("protocol.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A validator for the subset of JSON Schema the protocol schema uses.
struct Validator {
    root: Value,
}

impl Validator {
    fn check(&self, schema: &Value, v: &Value, path: &str) -> Result<(), String> {
        let Some(s) = schema.as_object() else {
            return Ok(());
        };
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/definitions/");
            return self.check(&self.root["definitions"][name], v, path);
        }
        if let Some(c) = s.get("const") {
            if c != v {
                return Err(format!("{path}: {v} is not {c}"));
            }
        }
        if let Some(e) = s.get("enum").and_then(Value::as_array) {
            if !e.contains(v) {
                return Err(format!("{path}: {v} not in {e:?}"));
            }
        }
        if let Some(t) = s.get("type") {
            let types: Vec<&str> = match t {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => vec![],
            };
            if !types.iter().any(|t| type_matches(t, v)) {
                return Err(format!("{path}: {v} is not of type {types:?}"));
            }
        }
        if let (Some(min), Some(n)) = (s.get("minimum").and_then(Value::as_i64), v.as_i64()) {
            if n < min {
                return Err(format!("{path}: {n} < {min}"));
            }
        }
        if let Some(obj) = v.as_object() {
            for req in s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let key = req.as_str().unwrap();
                if !obj.contains_key(key) {
                    return Err(format!("{path}: missing {key}"));
                }
            }
            let props = s.get("properties").and_then(Value::as_object);
            for (k, val) in obj {
                match props.and_then(|p| p.get(k)) {
                    Some(ps) => self.check(ps, val, &format!("{path}.{k}"))?,
                    None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        return Err(format!("{path}: unexpected key {k}"))
                    }
                    None => {}
                }
            }
        }
        if let (Some(items), Some(arr)) = (s.get("items"), v.as_array()) {
            for (i, x) in arr.iter().enumerate() {
                self.check(items, x, &format!("{path}[{i}]"))?;
            }
        }
        for all in s
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.check(all, v, path)?;
        }
        if let Some(alts) = s.get("oneOf").and_then(Value::as_array) {
            let passing = alts
                .iter()
                .filter(|a| self.check(a, v, path).is_ok())
                .count();
            if passing != 1 {
                return Err(format!("{path}: {passing} of oneOf match {v}"));
            }
        }
        Ok(())
    }

    fn check_def(&self, def: &str, v: &Value) -> Result<(), String> {
        self.check(&self.root["definitions"][def], v, def)
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn golden_lines() -> Vec<(String, String, Value)> {
    let mut files: Vec<_> = std::fs::read_dir(adapters_dir().join("golden"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    let mut out = Vec::new();
    for f in files {
        for (i, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            let v: Value = serde_json::from_str(line).unwrap();
            let from = v["from"].as_str().unwrap().to_string();
            out.push((format!("{}:{}", f.display(), i + 1), from, v["msg"].clone()));
        }
    }
    out
}

#[test]
fn every_golden_line_validates_and_round_trips() {
    let v = Validator { root: schema() };
    let mut seen = std::collections::BTreeSet::new();
    for (at, from, msg) in golden_lines() {
        seen.insert(format!("{from}:{}", msg["type"].as_str().unwrap()));
        let back = match from.as_str() {
            "harness" => {
                v.check_def("harness_message", &msg)
                    .unwrap_or_else(|e| panic!("{at}: {e}"));
                harness_round_trip(&msg).unwrap_or_else(|e| panic!("{at}: {e}"))
            }
            "adapter" => {
                v.check_def("adapter_message", &msg)
                    .unwrap_or_else(|e| panic!("{at}: {e}"));
                let typed: AdapterMsg =
                    serde_json::from_value(msg.clone()).unwrap_or_else(|e| panic!("{at}: {e}"));
                serde_json::to_value(&typed).unwrap()
            }
            other => panic!("{at}: unknown direction {other}"),
        };
        assert_eq!(back, msg, "{at}: the serializer writes another form");
    }
    // Every message type of both directions appears in some golden exchange.
    for kind in [
        "harness:hello",
        "harness:micro_pass",
        "harness:batch_pass",
        "harness:hook",
        "harness:restart",
        "harness:summary",
        "adapter:hello",
        "adapter:summarize",
        "adapter:result",
        "adapter:error",
    ] {
        assert!(seen.contains(kind), "no golden line of {kind}");
    }
}

/// A harness line parsed and written back; a protocol 2 pass is its edits (as
/// `delta::Edit`s), digest and words around the protocol 1 pass without its transcript.
fn harness_round_trip(msg: &Value) -> Result<Value, serde_json::Error> {
    let Some(edits) = msg.get("edits") else {
        let typed: HarnessMsg = serde_json::from_value(msg.clone())?;
        return serde_json::to_value(&typed);
    };
    let edits: Vec<Edit> = serde_json::from_value(edits.clone())?;
    let mut v1 = msg.clone();
    let fields = v1.as_object_mut().unwrap();
    fields.remove("edits");
    let digest = fields.remove("digest").unwrap_or(Value::Null);
    let words: Option<Vec<u64>> = fields
        .remove("words")
        .map(serde_json::from_value)
        .transpose()?;
    fields.insert("transcript".into(), json!([]));
    let typed: HarnessMsg = serde_json::from_value(v1)?;
    let mut back = serde_json::to_value(&typed)?;
    let fields = back.as_object_mut().unwrap();
    fields.remove("transcript");
    fields.insert("edits".into(), serde_json::to_value(edits)?);
    fields.insert("digest".into(), digest);
    if let Some(words) = words {
        fields.insert("words".into(), serde_json::to_value(words)?);
    }
    Ok(back)
}

/// The golden files use only the hooks the harness sends, and the schema lists exactly
/// those (adapters/PROTOCOL.md, "Hooks").
#[test]
fn golden_hooks_are_the_harness_hooks() {
    let listed: Vec<String> = schema()["definitions"]["hook_name"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, KNOWN_HOOKS);
    for (at, _, msg) in golden_lines() {
        let mut names: Vec<&Value> = msg["capabilities"]["hooks"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        if msg["type"] == "hook" {
            names.push(&msg["hook"]);
        }
        for n in names {
            assert!(
                KNOWN_HOOKS.contains(&n.as_str().unwrap_or("")),
                "{at}: hook {n} is not one the harness sends"
            );
        }
    }
    let v = Validator { root: schema() };
    let bad = json!({"type": "hello", "id": 0, "protocol": 1, "name": "x", "version": "1",
                     "capabilities": {"hooks": ["should_compress"]}});
    assert!(v.check_def("adapter_message", &bad).is_err());
}

/// A false flag round-trips: the schema and serde keep `"_db_persisted": false`.
#[test]
fn a_false_flag_round_trips() {
    let row = json!({"role": "assistant", "content": "hi", "_db_persisted": false,
                     "_compressed_summary_has_user_turn": false, "_compactsim_id": 1});
    let typed: compactsim_harness::external::wire::ChatMessage =
        serde_json::from_value(row.clone()).unwrap();
    assert_eq!(typed.db_persisted, Some(false));
    assert_eq!(serde_json::to_value(&typed).unwrap(), row);
}

#[test]
fn bad_adapter_messages_are_rejected_by_schema_and_serde_alike() {
    let v = Validator { root: schema() };
    let bad = [
        json!({"type": "compacted", "id": 1}),
        json!({"type": "result", "id": 1, "transcrpt": []}),
        json!({"type": "result", "id": -1}),
        json!({"type": "summarize", "id": 1}),
        json!({"type": "error", "id": 1}),
        json!({"type": "result", "id": 1, "transcript": [{"role": "robot", "content": "x"}]}),
        json!({"type": "hello", "id": 0, "protocol": 1, "name": "x", "version": "1",
               "capabilities": {"micro": true}}),
        json!({"type": "result", "id": 1, "edits": [[0, 1], {"content": "no role"}],
               "digest": "0000000000000000"}),
    ];
    for msg in bad {
        assert!(
            v.check_def("adapter_message", &msg).is_err(),
            "schema let {msg} through"
        );
        let typed = serde_json::from_value::<AdapterMsg>(msg.clone());
        // An unknown role is valid JSON for serde and rejected when the rows are read
        // (bad-transcript); everything else serde rejects itself.
        if msg["transcript"][0]["role"] != "robot" {
            assert!(typed.is_err(), "serde let {msg} through");
        }
    }
}
