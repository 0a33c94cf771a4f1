//! RFC 6570 templates: the external uritemplate-test suite (`tests/uritemplate-test/`, unmodified)
//! and the shared template vectors (`tests/vectors/templates/`, format in `tests/vectors/README.md`).
//! Python and Node run the same files and must agree.

use std::path::{Path, PathBuf};

use mcplens::template::{self, Json, Template, Values};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn get<'a>(j: &'a Json, key: &str) -> Option<&'a Json> {
    match j {
        Json::Object(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

fn text(j: &Json) -> &str {
    match j {
        Json::String(s) => s,
        other => panic!("not a string: {other:?}"),
    }
}

fn compact(j: &Json) -> String {
    serde_json::to_string(j).unwrap()
}

/// Runs one suite file: (cases passed, cases, failures).
fn run_suite(file: &str) -> (usize, usize, Vec<String>) {
    let doc = read(&root().join("tests/uritemplate-test").join(file));
    let Json::Object(groups) = doc else { panic!("{file}: not an object") };
    let (mut passed, mut total, mut bad) = (0, 0, Vec::new());
    for (group, body) in &groups {
        let values = Values::from_ordered_json(get(body, "variables").unwrap().clone()).unwrap();
        let Some(Json::Array(cases)) = get(body, "testcases") else { panic!("{group}: no testcases") };
        for case in cases {
            let Json::Array(pair) = case else { panic!("{group}: a case is not a pair") };
            let t = text(&pair[0]);
            total += 1;
            let got = template::expand(t, &values);
            let ok = match &pair[1] {
                Json::Bool(false) => got.is_err(),
                Json::String(want) => got.as_deref() == Ok(want.as_str()),
                Json::Array(accepted) => got.as_ref().is_ok_and(|g| accepted.iter().any(|a| text(a) == g)),
                other => panic!("{group}: unexpected expectation {other:?}"),
            };
            if ok {
                passed += 1;
            } else {
                bad.push(format!("{file} / {group}: {t:?} gave {got:?}, want {}", compact(&pair[1])));
            }
        }
    }
    (passed, total, bad)
}

#[test]
fn uritemplate_test_suite() {
    let mut all = Vec::new();
    for (file, at_least) in [("spec-examples.json", 60), ("extended-tests.json", 50), ("negative-tests.json", 30)] {
        let (passed, total, bad) = run_suite(file);
        println!("{file}: {passed}/{total} cases passed");
        assert!(total >= at_least, "{file}: only {total} cases");
        all.extend(bad);
    }
    assert!(all.is_empty(), "{} suite cases fail:\n{}", all.len(), all.join("\n"));
}

/// Every positive suite case routes back: `matches` on the expected URI gives values that expand
/// to that same URI.
#[test]
fn uritemplate_test_suite_matches_back() {
    let mut bad = Vec::new();
    let mut n = 0;
    for file in ["spec-examples.json", "extended-tests.json"] {
        let Json::Object(groups) = read(&root().join("tests/uritemplate-test").join(file)) else { unreachable!() };
        for (group, body) in &groups {
            let Some(Json::Array(cases)) = get(body, "testcases") else { unreachable!() };
            for case in cases {
                let Json::Array(pair) = case else { unreachable!() };
                let t = text(&pair[0]);
                let uris: Vec<&str> = match &pair[1] {
                    Json::String(s) => vec![s],
                    Json::Array(a) => a.iter().map(text).collect(),
                    _ => continue,
                };
                for uri in uris {
                    n += 1;
                    match Template::parse(t).unwrap().matches(uri) {
                        Ok(Some(v)) => {
                            let back = template::expand(t, &v).unwrap();
                            if back != uri {
                                bad.push(format!(
                                    "{group}: {t:?} on {uri:?} gave {} which expands to {back:?}",
                                    v.to_json()
                                ));
                            }
                        }
                        other => bad.push(format!("{group}: {t:?} on {uri:?} gave {other:?}")),
                    }
                }
            }
        }
    }
    println!("{} expected URIs matched back", n - bad.len());
    assert!(bad.is_empty(), "{} of {n} do not match back:\n{}", bad.len(), bad.join("\n"));
}

/// Runs one template vector case; the problems found.
fn run_vector_case(case: &Json) -> Option<String> {
    let op = text(get(case, "op").unwrap());
    let t = text(get(case, "template").unwrap());
    let got: Result<String, template::TemplateError> = match op {
        "variables" => template::variables(t).map(|v| serde_json::to_string(&v).unwrap()),
        "expand" => Values::from_ordered_json(get(case, "values").unwrap().clone())
            .and_then(|values| template::expand(t, &values))
            .map(|s| serde_json::to_string(&s).unwrap()),
        "matches" => template::matches(t, text(get(case, "uri").unwrap()))
            .map(|m| m.map_or_else(|| "null".to_owned(), |v| v.to_json())),
        other => return Some(format!("unknown op {other}")),
    };
    match (get(case, "expectError"), got) {
        (None, Ok(text)) => {
            let want = compact(get(case, "expect").unwrap());
            (text != want).then(|| format!("{op} {t:?}: got {text}, want {want}"))
        }
        (Some(code), Err(e)) => {
            if e.code() != self::text(code) {
                return Some(format!("{op} {t:?}: error {}, want {}", e.code(), self::text(code)));
            }
            let message = get(case, "expectMessage").map(self::text);
            message
                .filter(|m| *m != e.to_string())
                .map(|m| format!("{op} {t:?}: message {:?}, want {m:?}", e.to_string()))
        }
        (None, Err(e)) => Some(format!("{op} {t:?}: unexpected error {e:?}")),
        (Some(code), Ok(text)) => Some(format!("{op} {t:?}: got {text}, want error {}", self::text(code))),
    }
}

#[test]
fn template_vectors() {
    let dir = root().join("tests/vectors/templates");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 10, "only {} template vectors", files.len());
    let mut bad = Vec::new();
    let mut n = 0;
    for file in &files {
        let doc = read(file);
        assert_eq!(text(get(&doc, "name").unwrap()), file.file_stem().unwrap().to_str().unwrap());
        let Some(Json::Array(cases)) = get(&doc, "cases") else { panic!("{}: no cases", file.display()) };
        for case in cases {
            n += 1;
            if let Some(problem) = run_vector_case(case) {
                bad.push(format!("{}: {problem}", file.file_stem().unwrap().to_string_lossy()));
            }
        }
    }
    assert!(bad.is_empty(), "{} of {n} template vector cases fail:\n{}", bad.len(), bad.join("\n"));
}
