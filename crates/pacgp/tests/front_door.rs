//! The front door stays true to the tree:
//! - the module map in `src/lib.rs`'s docs lists every `pub mod` of the crate, and names only
//!   modules that exist (an item of the map starts with its modules' links, `- [`a`], [`b`]:`);
//! - every path the README's layout names exists, a folder as a folder and a file as a file;
//! - every re-export of the prelude carries its own doc comment.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn repo() -> PathBuf {
    crate_dir().join("../..").canonicalize().unwrap()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The names of the `pub mod x;` declarations of a crate root.
fn pub_mods(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .filter_map(|rest| rest.strip_suffix(';'))
        .map(str::to_string)
        .collect()
}

/// The modules the crate docs' module map lists: the leading links of each item of the list
/// under `## Module map` (`- [`a`], [`b`]: what they hold`). An item that does not start with
/// a link is an error, so that the map holds nothing else.
fn module_map(lib: &str) -> Result<Vec<String>, String> {
    let docs: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let start = docs
        .iter()
        .position(|l| l.trim() == "## Module map")
        .ok_or("no '## Module map' heading in the crate docs")?;
    let mut names = Vec::new();
    for line in docs[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with("## "))
    {
        let Some(item) = line.strip_prefix("- ") else {
            continue;
        };
        let mut rest = item;
        let mut leading = 0;
        while let Some(after) = rest.strip_prefix("[`") {
            let end = after
                .find("`]")
                .ok_or_else(|| format!("unclosed link in '{line}'"))?;
            names.push(after[..end].to_string());
            leading += 1;
            rest = &after[end + 2..];
            rest = rest.strip_prefix(", ").unwrap_or(rest);
        }
        if leading == 0 || !rest.starts_with(':') {
            return Err(format!(
                "the map item '{line}' does not start with its modules' links and a colon"
            ));
        }
    }
    if names.is_empty() {
        return Err("the module map lists no module".into());
    }
    Ok(names)
}

#[test]
fn the_module_map_lists_every_pub_mod_and_nothing_else() {
    let lib = read(&crate_dir().join("src/lib.rs"));
    let declared = pub_mods(&lib);
    assert!(
        declared.len() > 20,
        "only {} pub mods found",
        declared.len()
    );
    let listed = module_map(&lib).unwrap();
    let mut seen = BTreeSet::new();
    for name in &listed {
        assert!(seen.insert(name), "the module map lists [`{name}`] twice");
    }
    let listed: BTreeSet<&String> = listed.iter().collect();
    let missing: Vec<&String> = declared.iter().filter(|m| !listed.contains(m)).collect();
    assert!(
        missing.is_empty(),
        "pub mods missing from lib.rs's module map: {missing:?}"
    );
    let stray: Vec<&&String> = listed.iter().filter(|m| !declared.contains(**m)).collect();
    assert!(
        stray.is_empty(),
        "lib.rs's module map names modules that are not `pub mod`s: {stray:?}"
    );
}

#[test]
fn the_module_map_check_finds_a_missing_module_and_a_stray_item() {
    let lib = "//! ## Module map\n//!\n//! - [`a`], [`b`]: two;\n//! - [`c`]: three,\n\
               //!   over two lines [`not_a_module`];\n//!\n//! ## After\n//! - [`d`]: no\n\
               pub mod a;\npub mod b;\npub mod c;\npub mod e;\n";
    assert_eq!(module_map(lib).unwrap(), ["a", "b", "c"]);
    assert_eq!(
        pub_mods(lib),
        BTreeSet::from(["a", "b", "c", "e"].map(String::from))
    );
    let err = module_map("//! ## Module map\n//! - [`a`]: one;\n//! - the rest\n").unwrap_err();
    assert!(err.contains("the rest"), "{err}");
    assert!(module_map("//! # No map\n").is_err());
}

/// The paths the README's layout names, each resolved against the repository: the code block
/// after `## Layout`, where a line's paths (separated by one space) come before two spaces
/// and its description, and an indented line's paths are inside the one folder of the
/// nearest line above it that is indented less.
fn layout_paths(readme: &str, root: &Path) -> Result<Vec<PathBuf>, String> {
    let section = readme
        .split("\n## Layout\n")
        .nth(1)
        .ok_or("no '## Layout' section")?;
    let block = section
        .split("```")
        .nth(1)
        .ok_or("no code block in the layout section")?;
    let mut parents: Vec<(usize, PathBuf)> = Vec::new();
    let mut paths = Vec::new();
    for line in block.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let indent = line.len() - line.trim_start().len();
        let named = line.trim_start().split("  ").next().unwrap_or("");
        while parents.last().is_some_and(|(at, _)| *at >= indent) {
            parents.pop();
        }
        let base = match parents.last() {
            Some((_, dir)) => dir.clone(),
            None if indent == 0 => root.to_path_buf(),
            None => return Err(format!("'{line}' is indented under nothing")),
        };
        let here: Vec<PathBuf> = named.split(' ').map(|p| base.join(p)).collect();
        if here.len() == 1 && named.ends_with('/') {
            parents.push((indent, here[0].clone()));
        }
        paths.extend(here);
    }
    Ok(paths)
}

/// The layout's paths that are not in the tree (a path ending in `/` must be a folder, any
/// other a file).
fn missing_paths(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .filter(|p| {
            let text = p.to_string_lossy();
            if text.ends_with('/') {
                !p.is_dir()
            } else {
                !p.is_file()
            }
        })
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn every_path_the_readme_layout_names_exists() {
    let root = repo();
    let paths = layout_paths(&read(&root.join("README.md")), &root).unwrap();
    assert!(paths.len() > 20, "only {} paths in the layout", paths.len());
    let missing = missing_paths(&paths);
    assert!(
        missing.is_empty(),
        "README.md's layout names paths that are not in the tree: {missing:?}"
    );
    // The library's files are named inside its source folder, not at the repository root.
    assert!(paths.contains(&root.join("crates/pacgp/src/").join("prelude.rs")));
}

#[test]
fn the_layout_check_finds_a_file_that_became_a_folder() {
    let root = repo();
    let readme = "# x\n\n## Layout\n\n```text\ncrates/pacgp/src/   the library\n  \
                  linalg.rs kernel/  a file that is now a folder; a folder\n  data/\n    \
                  split.rs         nested\ndocs/               the guide\n```\n";
    let paths = layout_paths(readme, &root).unwrap();
    let src = root.join("crates/pacgp/src/");
    assert_eq!(
        paths,
        [
            src.clone(),
            src.join("linalg.rs"),
            src.join("kernel/"),
            src.join("data/"),
            src.join("data/").join("split.rs"),
            root.join("docs/"),
        ]
    );
    assert_eq!(
        missing_paths(&paths),
        [src.join("linalg.rs").to_string_lossy()]
    );
    assert!(layout_paths("## Layout\n", &root).is_err());
}

#[test]
fn every_prelude_item_has_its_own_doc_comment() {
    let text = read(&crate_dir().join("src/prelude.rs"));
    let lines: Vec<&str> = text.lines().collect();
    let mut n = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("pub use ") {
            n += 1;
            assert!(
                !line.contains('{') && !line.contains('*'),
                "prelude.rs re-exports several items on one line: '{line}'"
            );
            assert!(
                i > 0 && lines[i - 1].starts_with("///"),
                "prelude.rs: '{line}' has no doc comment"
            );
        }
    }
    assert!((15..=35).contains(&n), "the prelude re-exports {n} items");
}
