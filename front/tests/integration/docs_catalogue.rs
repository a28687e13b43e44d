//! The invariant catalogue in docs/invariants.md is the build's catalogue: the same ids,
//! in the same order, each claiming the same bug switches.

use std::path::Path;

/// `(id, catches)` of every row of the catalogue table in docs/invariants.md.
fn documented() -> Vec<(String, Vec<String>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/invariants.md");
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| id "))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            let catches = match cells.last().copied() {
                Some("—") | None => Vec::new(),
                Some(list) => list.split(", ").map(str::to_string).collect(),
            };
            (cells[0].to_string(), catches)
        })
        .collect()
}

#[test]
fn the_documented_catalogue_is_the_build_catalogue() {
    let built: Vec<(String, Vec<String>)> = compactsim_invariants::catalogue()
        .iter()
        .chain(&compactsim_invariants::gateway::gateway_catalogue())
        .map(|i| {
            (
                i.id.to_string(),
                i.catches.iter().map(|c| c.to_string()).collect(),
            )
        })
        .collect();
    assert_eq!(documented(), built);
}
