//! The repository stands alone: every relative link in README.md, scenarios/README.md and
//! docs/*.md resolves to a file (and heading) inside the repository, and no page names
//! a path outside it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("front/ has a parent")
        .to_path_buf()
}

fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut pages = vec![root.join("README.md"), root.join("scenarios/README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 4, "docs/ has its pages: {docs:?}");
    pages.extend(docs);
    pages
}

/// The targets of the inline links `[text](target)` of a Markdown page, outside code.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_relative_link_of_the_user_docs_resolves_inside_the_repository() {
    let root = root().canonicalize().unwrap();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            if target.starts_with("https://") || target.starts_with("http://") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if file.is_empty() {
                page.clone()
            } else {
                assert!(
                    !file.starts_with('/'),
                    "{}: absolute link {target}",
                    page.display()
                );
                page.parent().unwrap().join(file)
            };
            let resolved = resolved.canonicalize().unwrap_or_else(|e| {
                panic!("{}: link {target} does not resolve: {e}", page.display())
            });
            assert!(
                resolved.starts_with(&root),
                "{}: link {target} leaves the repository",
                page.display()
            );
            if let Some(anchor) = anchor {
                let text = std::fs::read_to_string(&resolved).unwrap();
                assert!(
                    anchors(&text).contains(anchor),
                    "{}: link {target}: no heading with anchor #{anchor}",
                    page.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} links checked");
}

#[test]
fn no_page_names_a_path_outside_the_repository() {
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for bad in ["../shared", "/work/", "hermes-domain.md", "DESIGN.md"] {
            assert!(
                !text.contains(bad),
                "{} names `{bad}`, which is not in the repository",
                page.display()
            );
        }
    }
}

#[test]
fn the_readme_says_how_to_install_the_binary_the_repro_lines_name() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("cargo install --path front --locked"));
    assert!(readme.contains("compactsim replay --seed"));
}

#[test]
fn the_link_parser_and_slugs_work() {
    assert_eq!(
        links("see [a](x.md) and [b](y.md#z)\n```\n[c](no.md)\n```"),
        vec!["x.md", "y.md#z"]
    );
    assert_eq!(
        slug(" Micro-compaction (`--strategy micro`, and `both`)"),
        "micro-compaction---strategy-micro-and-both"
    );
}
