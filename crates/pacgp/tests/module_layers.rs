//! The library's top-level modules import each other without a cycle, so that they stack in
//! layers (the vocabulary and errors at the bottom, the fit pipelines and experiments at the
//! top). An import is a `crate::module` path in code (comments and unit tests aside, inline or in a
//! folder's `tests.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`lib` for lib.rs itself).
fn module_of(file: &Path, src: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The top-level modules `text` names as `crate::m` outside comments and `#[cfg(test)]`.
fn imports(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    // A file's unit tests come last, in `#[cfg(test)] mod tests`.
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    let mut found = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) {
                found.insert(name);
            }
        }
    }
    found
}

fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = src();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f, &src)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // A folder's `tests.rs` is its unit tests (`#[cfg(test)] mod tests;`), as inline ones are.
    let unit_tests = |f: &std::path::PathBuf| f.file_name().is_some_and(|n| n == "tests.rs");
    for file in files.iter().filter(|f| !unit_tests(f)) {
        let from = module_of(file, &src);
        let text = std::fs::read_to_string(file).unwrap();
        let to = imports(&text, &modules);
        let entry = graph.entry(from.clone()).or_default();
        entry.extend(to.into_iter().filter(|m| *m != from && m != "lib"));
    }
    graph
}

/// A cycle through `start`, if the graph has one reachable from it (depth-first).
fn cycle_from(
    graph: &BTreeMap<String, BTreeSet<String>>,
    node: &str,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(i) = path.iter().position(|p| p == node) {
        let mut cycle = path[i..].to_vec();
        cycle.push(node.to_string());
        return Some(cycle);
    }
    if done.contains(node) {
        return None;
    }
    path.push(node.to_string());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(c) = cycle_from(graph, next, path, done) {
            return Some(c);
        }
    }
    path.pop();
    done.insert(node.to_string());
    None
}

#[test]
fn top_level_modules_import_each_other_without_a_cycle() {
    let graph = import_graph();
    assert!(graph.len() > 20, "only {} modules found", graph.len());
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = cycle_from(&graph, node, &mut Vec::new(), &mut done) {
            panic!("import cycle: {}", cycle.join(" → "));
        }
    }
}

#[test]
fn the_vocabulary_and_the_errors_are_the_bottom_layers() {
    let graph = import_graph();
    assert_eq!(graph["vocabulary"], BTreeSet::new());
    let error: Vec<&String> = graph["error"].iter().collect();
    assert_eq!(error, ["vocabulary"]);
}

#[test]
fn a_cycle_is_found_when_there_is_one() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.insert("error".into(), BTreeSet::from(["spec".to_string()]));
    graph.insert("spec".into(), BTreeSet::from(["kernel".to_string()]));
    graph.insert("kernel".into(), BTreeSet::from(["error".to_string()]));
    let cycle = cycle_from(&graph, "error", &mut Vec::new(), &mut BTreeSet::new()).unwrap();
    assert_eq!(cycle, ["error", "spec", "kernel", "error"]);
}
