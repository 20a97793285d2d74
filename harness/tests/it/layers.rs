//! The harness's modules import down only: each `crate::` path in a module's code (its tests
//! aside) names a module listed before it here, the order `lib.rs` documents. A new module or
//! an import back up fails this test.

use std::collections::BTreeMap;
use std::path::Path;

/// The modules, bottom first, as `lib.rs` lists them by layer.
const ORDER: &[&str] = &[
    // foundations
    "units",
    "error",
    "workload",
    "timing",
    "mismatch",
    "boxed",
    "counting",
    "tasks",
    // sources
    "remote",
    "opendal",
    "sources", // plan
    "plan",    // report
    "report",
    "verdict", // run
    "write",
    "truth",
    "readers",
    "verify",
    "pass_state",
    "limit",
    "stream",
    "run", // output
    "table",
    "plot", // command line
    "cli",
];

/// `text` without `//` comments (doc links are not imports) and without its `mod tests`.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segments after each `crate::` in `code`: `crate::a::B` gives `a`,
/// `crate::{a::B, c}` gives `a` and `c`.
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').expect("a closed use group");
            for item in group[..end].split(',') {
                let name = ident(item.trim());
                if !name.is_empty() {
                    found.push(name);
                }
            }
        } else {
            found.push(ident(rest));
        }
    }
    found
}

#[test]
fn every_module_imports_only_modules_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    // What `lib.rs` re-exports, by the module it comes from: `crate::Plan` is `plan`.
    let mut exported: BTreeMap<String, String> = BTreeMap::new();
    for line in lib.lines() {
        if let Some(rest) = line.strip_prefix("pub use ") {
            let (module, items) = rest.split_once("::").unwrap();
            for item in items.trim_matches(|c| "{};".contains(c)).split(',') {
                exported.insert(item.trim().to_string(), module.to_string());
            }
        }
    }
    let mut modules: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|name| name.strip_suffix(".rs").map(str::to_string))
        .filter(|name| name != "lib")
        .collect();
    modules.sort();
    let mut listed: Vec<String> = ORDER.iter().map(|m| m.to_string()).collect();
    listed.sort();
    assert_eq!(
        modules, listed,
        "every module of src/ has its place in ORDER"
    );

    let mut back_edges = Vec::new();
    for (rank, module) in ORDER.iter().enumerate() {
        let text = std::fs::read_to_string(src.join(format!("{module}.rs"))).unwrap();
        for name in crate_paths(&code(&text)) {
            let target = exported.get(&name).cloned().unwrap_or(name);
            let Some(target_rank) = ORDER.iter().position(|m| *m == target) else {
                continue; // a macro's `$crate::` of its own module, or a crate-root item
            };
            if target_rank >= rank && target != *module {
                back_edges.push(format!("{module} -> {target}"));
            }
        }
    }
    back_edges.sort();
    back_edges.dedup();
    assert!(
        back_edges.is_empty(),
        "imports up the layers: {back_edges:?}"
    );
}

#[test]
fn the_path_reader_sees_groups_and_paths() {
    assert_eq!(
        crate_paths("use crate::a::B; use crate::{c::D, e}; x(crate::f(1))"),
        ["a", "c", "e", "f"]
    );
    assert_eq!(
        code("a // crate::x\n#[cfg(test)]\nmod tests { crate::y }"),
        "a "
    );
}
