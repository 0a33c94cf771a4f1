//! The error codes written down outside the core — the table of `docs/errors.md`, Python's
//! `_core.pyi` (`_ErrorCode`) and Node's facade (`ErrorCode` in `lib/discovery.ts`) — are the
//! core's [`ErrorCode::ALL`], in its order. (At run time Python's `ERROR_CODES` and Node's
//! `errorCodes` come from the core itself.)

use std::path::Path;

use mcplens::ErrorCode;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn all() -> Vec<String> {
    ErrorCode::ALL.iter().map(|c| c.as_str().to_owned()).collect()
}

/// The quoted words of the lines between the line holding `start` and the next line holding `end`.
fn quoted_between(text: &str, start: &str, end: &str, quote: char) -> Vec<String> {
    // Not a skipped test: `.skip(1)` steps past the line holding `start`.
    let mut lines = text.lines().skip_while(|l| !l.contains(start)).skip(1);
    let mut out = Vec::new();
    for line in lines.by_ref() {
        if let Some(word) = line.split(quote).nth(1) {
            out.push(word.to_owned());
        }
        if line.contains(end) {
            break;
        }
    }
    out
}

#[test]
fn docs_errors_md_documents_every_code_in_order() {
    let mut seen: Vec<String> = Vec::new();
    for line in read("docs/errors.md").lines() {
        let Some(rest) = line.strip_prefix("| `") else { continue };
        let code = rest.split('`').next().unwrap().to_owned();
        if !seen.contains(&code) {
            seen.push(code);
        }
    }
    // `address_in_use` is the `mcplens` command's own (`events serve`), not a library code.
    let mut want = all();
    want.push("address_in_use".to_owned());
    assert_eq!(seen, want);
}

#[test]
fn the_python_stub_lists_every_code_in_order() {
    let pyi = read("bindings-python/python/mcplens/_core.pyi");
    assert_eq!(quoted_between(&pyi, "_ErrorCode: TypeAlias = Literal[", "]", '"'), all());
}

#[test]
fn the_node_facade_lists_every_code_in_order() {
    let ts = read("bindings-node/lib/discovery.ts");
    assert_eq!(quoted_between(&ts, "export type ErrorCode =", ";", '\''), all());
}
