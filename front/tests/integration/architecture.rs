//! The architecture, checked: the crates' dependencies point one way (down the layers of
//! docs/architecture.md), what is judged never imports the judge, and no crate's
//! top-level modules import each other in a loop. Test code (`#[cfg(test)]` modules) is
//! left out of the module graph: a test may look anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every crate of the workspace: its directory, its package name and its layer. A crate
/// may depend only on crates of a lower layer.
const CRATES: &[(&str, &str, u32)] = &[
    ("model", "compactsim-model", 0),
    ("invariants", "compactsim-invariants", 1),
    ("reports", "compactsim-reports", 1),
    ("fakes", "compactsim-fakes", 1),
    ("hermes", "compactsim-hermes", 2),
    ("harness", "compactsim-harness", 3),
    ("front", "compactsim", 4),
];

/// What is judged (the seam and fakes, Hermes as modelled) never depends on what judges
/// (the oracle, the reports).
const JUDGED: &[&str] = &["compactsim-fakes", "compactsim-hermes"];
const JUDGES: &[&str] = &["compactsim-invariants", "compactsim-reports"];
/// The oracle imports no compactor: it depends on the model alone.
const ORACLE_DEPS: &[&str] = &["compactsim-model"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace crates a manifest depends on (normal dependencies only).
fn workspace_deps(manifest: &str) -> Vec<String> {
    let doc: toml::Table = manifest.parse().expect("a manifest");
    doc.get("dependencies")
        .and_then(|d| d.as_table())
        .map(|d| {
            d.keys()
                .filter(|k| k.starts_with("compactsim"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// Every broken rule of the crate graph `deps` (package name → its workspace deps).
fn crate_graph_breaches(deps: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let layer: BTreeMap<&str, u32> = CRATES.iter().map(|&(_, n, l)| (n, l)).collect();
    let mut out = Vec::new();
    for (name, ds) in deps {
        let Some(&own) = layer.get(name.as_str()) else {
            out.push(format!("{name}: not placed in a layer (add it to CRATES)"));
            continue;
        };
        for d in ds {
            match layer.get(d.as_str()) {
                Some(&l) if l >= own => out.push(format!(
                    "{name} (layer {own}) depends on {d} (layer {l}): upward"
                )),
                None => out.push(format!("{name} depends on {d}, which has no layer")),
                _ => {}
            }
            if JUDGED.contains(&name.as_str()) && JUDGES.contains(&d.as_str()) {
                out.push(format!("{name} is judged and depends on {d}, a judge"));
            }
            if name == "compactsim-invariants" && !ORACLE_DEPS.contains(&d.as_str()) {
                out.push(format!("the oracle depends on {d}"));
            }
        }
    }
    out
}

/// `text` without its `#[cfg(test)]` inline modules (`#[cfg(test)] mod x { ... }`).
fn without_inline_tests(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let head = after.trim_start();
        let is_inline_mod = head.starts_with("mod ")
            && head
                .find(['{', ';'])
                .is_some_and(|i| head.as_bytes()[i] == b'{');
        if !is_inline_mod {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        }
        let open = after.find('{').expect("an inline module");
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Names of the modules `text` declares as `#[cfg(test)] mod name;` (files of tests).
fn test_module_files(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        rest = &rest[at + "#[cfg(test)]".len()..];
        let head = rest.trim_start();
        if let Some(decl) = head.strip_prefix("mod ") {
            if let Some(name) = decl.split(';').next().filter(|n| !n.contains('{')) {
                names.push(name.trim().to_string());
            }
        }
    }
    names
}

/// The top-level module graph of the crate whose sources are under `src`, test code left
/// out: module → the top-level modules it names through `crate::` (or, from a file
/// directly in `src`, through `super::`).
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    let mut test_files = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let dir = module_dir(f);
        for name in test_module_files(&text) {
            test_files.insert(dir.join(format!("{name}.rs")));
            test_files.insert(dir.join(&name));
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        if test_files.iter().any(|t| f.starts_with(t)) {
            continue;
        }
        let rel = f.strip_prefix(src).unwrap();
        let parts: Vec<_> = rel
            .iter()
            .map(|p| p.to_string_lossy().to_string())
            .collect();
        let top = parts[0].trim_end_matches(".rs").to_string();
        let top = if top == "lib" || top == "main" {
            "<root>".to_string()
        } else {
            top
        };
        let text = without_inline_tests(&std::fs::read_to_string(f).unwrap());
        let entry = graph.entry(top.clone()).or_default();
        let mut prefixes = vec!["crate::"];
        if parts.len() == 1 {
            prefixes.push("super::");
        }
        for prefix in prefixes {
            for name in named_after(&text, prefix) {
                if name != top {
                    entry.insert(name);
                }
            }
        }
    }
    // Only edges to modules of this crate (a `crate::` path may name an item of the root).
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for targets in graph.values_mut() {
        targets.retain(|t| modules.contains(t));
    }
    graph
}

/// The directory holding the submodules of the module in file `f`.
fn module_dir(f: &Path) -> PathBuf {
    let name = f.file_name().unwrap().to_string_lossy();
    let parent = f.parent().unwrap();
    if name == "mod.rs" || name == "lib.rs" || name == "main.rs" {
        parent.to_path_buf()
    } else {
        parent.join(name.trim_end_matches(".rs"))
    }
}

/// The identifiers that follow `prefix` in `text` (not as part of a longer path).
fn named_after(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(prefix) {
        let start = from + at;
        from = start + prefix.len();
        let before = text[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$') {
            continue;
        }
        let name: String = text[from..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The loops of `graph`: its strongly connected components of more than one module.
fn loops(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Two modules are in one loop when each reaches the other.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for t in graph.get(&m).into_iter().flatten() {
                if seen.insert(t.clone()) {
                    todo.push(t.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut placed = BTreeSet::new();
    for m in graph.keys() {
        if placed.contains(m) {
            continue;
        }
        let comp: Vec<String> = graph
            .keys()
            .filter(|o| *o == m || (reached[m].contains(*o) && reached[o].contains(m)))
            .cloned()
            .collect();
        if comp.len() > 1 {
            placed.extend(comp.iter().cloned());
            out.push(comp);
        }
    }
    out
}

#[test]
fn crate_dependencies_point_down_the_layers() {
    let mut deps = BTreeMap::new();
    let workspace: toml::Table = std::fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let members = workspace["workspace"]["members"].as_array().unwrap();
    assert_eq!(members.len(), CRATES.len(), "every member has a layer");
    for (dir, name, _) in CRATES {
        assert!(
            members.iter().any(|m| m.as_str() == Some(dir)),
            "{dir} is a member"
        );
        let manifest = std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
        let doc: toml::Table = manifest.parse().unwrap();
        assert_eq!(doc["package"]["name"].as_str(), Some(*name), "{dir}");
        deps.insert(name.to_string(), workspace_deps(&manifest));
    }
    let breaches = crate_graph_breaches(&deps);
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

#[test]
fn no_crate_has_a_module_loop() {
    let mut found = Vec::new();
    for (dir, _, _) in CRATES {
        let graph = module_graph(&root().join(dir).join("src"));
        assert!(graph.len() > 1 || *dir == "model", "{dir}: modules read");
        for comp in loops(&graph) {
            let edges: Vec<String> = comp
                .iter()
                .map(|m| {
                    let inside: Vec<&String> =
                        graph[m].iter().filter(|t| comp.contains(t)).collect();
                    format!("{m} -> {inside:?}")
                })
                .collect();
            found.push(format!("{dir}: {}", edges.join("; ")));
        }
    }
    assert!(found.is_empty(), "module loops:\n{}", found.join("\n"));
}

#[test]
fn an_upward_or_judging_dependency_is_a_breach() {
    let mut deps: BTreeMap<String, Vec<String>> = CRATES
        .iter()
        .map(|&(_, n, _)| (n.to_string(), Vec::new()))
        .collect();
    deps.insert("compactsim-hermes".into(), vec!["compactsim-fakes".into()]);
    assert!(crate_graph_breaches(&deps).is_empty());
    deps.insert(
        "compactsim-hermes".into(),
        vec!["compactsim-harness".into(), "compactsim-invariants".into()],
    );
    deps.insert(
        "compactsim-invariants".into(),
        vec!["compactsim-fakes".into()],
    );
    deps.insert("compactsim-new".into(), vec![]);
    let b = crate_graph_breaches(&deps).join("\n");
    assert!(
        b.contains("compactsim-hermes (layer 2) depends on compactsim-harness"),
        "{b}"
    );
    assert!(
        b.contains("compactsim-hermes is judged and depends on compactsim-invariants"),
        "{b}"
    );
    assert!(
        b.contains("compactsim-invariants (layer 1) depends on compactsim-fakes"),
        "{b}"
    );
    assert!(b.contains("the oracle depends on compactsim-fakes"), "{b}");
    assert!(b.contains("compactsim-new: not placed"), "{b}");
}

#[test]
fn a_module_loop_is_found_and_test_code_is_left_out() {
    let dir = std::env::temp_dir().join(format!("compactsim-arch-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    let write = |p: &str, t: &str| std::fs::write(src.join(p), t).unwrap();
    write("lib.rs", "mod a;\nmod b;\nmod c;\n#[cfg(test)]\nmod t;\n");
    write(
        "a.rs",
        "use crate::b::X;\n#[cfg(test)]\nmod tests {\n    use crate::c::Y;\n}\n",
    );
    write("b/mod.rs", "mod inner;\n");
    write("b/inner.rs", "use crate::c::Y; // a::b::c is not an edge\n");
    write("c.rs", "use super::a;\n");
    write("t.rs", "use crate::a; use crate::b;\n");
    let graph = module_graph(&src);
    assert_eq!(graph["a"], BTreeSet::from(["b".to_string()]));
    assert_eq!(graph["b"], BTreeSet::from(["c".to_string()]));
    assert_eq!(graph["c"], BTreeSet::from(["a".to_string()]));
    assert!(
        !graph.contains_key("t"),
        "a test file is no module of the graph"
    );
    assert_eq!(loops(&graph), vec![vec!["a", "b", "c"]]);
    write(
        "c.rs",
        "#[cfg(test)]\nmod tests {\n    use super::super::a;\n}\n",
    );
    assert!(loops(&module_graph(&src)).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
