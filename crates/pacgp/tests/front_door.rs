//! The front door stays true to the tree:
//! - the module map in `src/lib.rs`'s docs lists every module the crate root declares (`pub`
//!   or not), and names only modules that exist (an item of the map starts with its modules'
//!   names, `- [`a`], `b`:`: a public module as a link, a crate-private one as code, since
//!   rustdoc cannot link to it);
//! - every path the README's layout names exists, a folder as a folder and a file as a file;
//! - every re-export of the prelude carries its own doc comment.

use std::collections::{BTreeMap, BTreeSet};
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

/// The modules a crate root declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`), each with
/// whether it is public.
fn declared_mods(lib: &str) -> BTreeMap<String, bool> {
    lib.lines()
        .filter_map(|l| {
            let l = l.trim();
            let (public, rest) = if let Some(r) = l.strip_prefix("pub mod ") {
                (true, r)
            } else if let Some(r) = l.strip_prefix("pub(crate) mod ") {
                (false, r)
            } else {
                (false, l.strip_prefix("mod ")?)
            };
            Some((rest.strip_suffix(';')?.to_string(), public))
        })
        .collect()
}

/// The modules the crate docs' module map lists, each with whether it is written as a link:
/// the leading names of each item of the list under `## Module map` (`- [`a`], `b`: what they
/// hold`). An item that does not start with a name is an error, so that the map holds nothing
/// else.
fn module_map(lib: &str) -> Result<Vec<(String, bool)>, String> {
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
        loop {
            let (link, after) = if let Some(after) = rest.strip_prefix("[`") {
                (true, after)
            } else if let Some(after) = rest.strip_prefix('`') {
                (false, after)
            } else {
                break;
            };
            let close = if link { "`]" } else { "`" };
            let end = after
                .find(close)
                .ok_or_else(|| format!("unclosed name in '{line}'"))?;
            names.push((after[..end].to_string(), link));
            leading += 1;
            rest = &after[end + close.len()..];
            rest = rest.strip_prefix(", ").unwrap_or(rest);
        }
        if leading == 0 || !rest.starts_with(':') {
            return Err(format!(
                "the map item '{line}' does not start with its modules' names and a colon"
            ));
        }
    }
    if names.is_empty() {
        return Err("the module map lists no module".into());
    }
    Ok(names)
}

/// What is wrong between a crate root's modules and its map: modules the map leaves out, names
/// it lists twice or that are no module, and public modules not linked (or private ones linked).
fn map_problems(lib: &str) -> Result<Vec<String>, String> {
    let declared = declared_mods(lib);
    let listed = module_map(lib)?;
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (name, link) in &listed {
        if !seen.insert(name) {
            problems.push(format!("`{name}` is listed twice"));
        }
        match declared.get(name) {
            None => problems.push(format!("`{name}` is listed but not declared")),
            Some(public) if public != link => problems.push(format!(
                "`{name}` is {} but {} in the map",
                if *public { "pub" } else { "crate-private" },
                if *link { "linked" } else { "not linked" }
            )),
            Some(_) => {}
        }
    }
    for name in declared.keys().filter(|m| !seen.contains(m)) {
        problems.push(format!("`{name}` is declared but not in the map"));
    }
    Ok(problems)
}

#[test]
fn the_module_map_lists_every_module_and_nothing_else() {
    let lib = read(&crate_dir().join("src/lib.rs"));
    let declared = declared_mods(&lib);
    assert!(declared.len() > 20, "only {} mods found", declared.len());
    let problems = map_problems(&lib).unwrap();
    assert!(
        problems.is_empty(),
        "lib.rs's module map and its `mod` declarations disagree: {problems:?}"
    );
}

#[test]
fn the_module_map_check_finds_a_missing_module_and_a_stray_item() {
    let lib = "//! ## Module map\n//!\n//! - [`a`], `b`: two;\n//! - [`c`]: three,\n\
               //!   over two lines [`not_a_module`];\n//! - `f`, [`g`]: two more;\n\
               //!\n//! ## After\n//! - [`d`]: no\n\
               pub mod a;\npub(crate) mod b;\npub mod c;\nmod e;\npub mod f;\n";
    assert_eq!(
        module_map(lib).unwrap(),
        [
            ("a", true),
            ("b", false),
            ("c", true),
            ("f", false),
            ("g", true)
        ]
        .map(|(n, l)| (n.to_string(), l))
    );
    assert_eq!(
        declared_mods(lib),
        BTreeMap::from(
            [
                ("a", true),
                ("b", false),
                ("c", true),
                ("e", false),
                ("f", true)
            ]
            .map(|(n, p)| (n.to_string(), p))
        )
    );
    assert_eq!(
        map_problems(lib).unwrap(),
        [
            "`f` is pub but not linked in the map",
            "`g` is listed but not declared",
            "`e` is declared but not in the map",
        ]
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
