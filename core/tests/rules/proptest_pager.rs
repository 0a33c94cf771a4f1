//! Properties of the discovery pager (the fuzz targets `page` and `pager_sequence` check the same
//! ones; the checkers live in `core/fuzz/checks.rs`):
//!
//! - any page text, for either list and with default or tight limits, never panics the pager;
//! - a traversal agrees with a model of the documented rules on every outcome code, sends back
//!   exactly the cursor it was given, and **fails closed**: after any error there is no further
//!   request and no listing (never a prefix), and the error holds no cursor;
//! - a complete listing's byte count equals the sum of its items' serialized sizes (and of each
//!   page's projected bytes), every string in it is a fixed point of the sanitizer, every template
//!   is valid, and the bounds hold.
//!
//! Case counts are modest (256); `PROPTEST_CASES=10000` digs deeper.

#[allow(dead_code)]
use crate::checks;

use std::time::Duration;

use checks::{AnnotationsSpec, CursorSpec, ItemForm, ItemSpec, PageSpec, Script, Shape, Step, Val};
use mcplens::discovery::{Limits, ListKind, RepeatedCursors};
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::Value;

fn kind() -> impl Strategy<Value = ListKind> {
    prop_oneof![Just(ListKind::ResourceTemplates), Just(ListKind::Resources)]
}

fn text(max: usize) -> impl Strategy<Value = String> {
    let c = prop_oneof![
        proptest::sample::select(vec!['\u{1B}', '[', '\n', '\t', '\u{202E}', '\u{200B}', '\u{E0041}', '\u{FFFE}', 'é']),
        any::<char>(),
        proptest::char::range('a', 'z'),
    ];
    prop_oneof![
        8 => vec(c, 0..max).prop_map(String::from_iter),
        1 => (2040usize..2060).prop_map(|n| "\u{202E}x".repeat(n)),
    ]
}

fn val(good: BoxedStrategy<Val>) -> BoxedStrategy<Val> {
    prop_oneof![
        6 => good,
        1 => text(8).prop_map(Val::Str),
        1 => any::<i64>().prop_map(Val::Int),
        1 => (-2.0f64..2.0).prop_map(Val::Float),
        1 => prop_oneof![Just(Val::Null), Just(Val::Bool), Just(Val::LoneSurrogate)],
        1 => vec(text(6), 0..3).prop_map(Val::Arr),
        1 => prop_oneof![1u32..40, 100u32..3000].prop_map(Val::Nested),
    ]
    .boxed()
}

fn opt(good: BoxedStrategy<Val>) -> BoxedStrategy<Option<Val>> {
    proptest::option::of(val(good)).boxed()
}

fn item(kind: ListKind) -> BoxedStrategy<ItemSpec> {
    let form = prop_oneof![
        18 => Just(ItemForm::Object),
        1 => Just(ItemForm::NotObject),
        1 => Just(ItemForm::MissingId),
        1 => Just(ItemForm::NonStringId),
        1 => Just(ItemForm::MissingName),
        1 => Just(ItemForm::NonStringName),
        1 => Just(ItemForm::DuplicateName),
    ];
    let good_id = match kind {
        ListKind::ResourceTemplates => {
            proptest::sample::select(vec!["file:///{path}", "db://{table}/{id}", "{/list*}{;keys}", "", "%41{x:9}"])
                .prop_map(str::to_owned)
                .boxed()
        }
        ListKind::Resources => (0u8..=255).prop_map(|n| format!("file:///r{n}")).boxed(),
    };
    let id = prop_oneof![
        4 => good_id.prop_map(Val::Str),
        1 => vec(proptest::sample::select(checks::TEMPLATE_PIECES.to_vec()), 0..6).prop_map(|p| Val::Str(p.concat())),
        1 => Just(Val::LoneSurrogate),
    ];
    let name = prop_oneof![6 => text(12).prop_map(Val::Str), 1 => Just(Val::LoneSurrogate)];
    let s = |max: usize| text(max).prop_map(Val::Str).boxed();
    let annotations = proptest::option::of(prop_oneof![
        1 => val(Just(Val::Null).boxed()).prop_map(AnnotationsSpec::NotObject),
        3 => (
            opt(vec(proptest::sample::select(vec!["user".to_owned(), "assistant".to_owned()]), 0..3)
                .prop_map(Val::Arr)
                .boxed()),
            opt((0.0f64..=1.0).prop_map(Val::Float).boxed()),
            opt(Just(Val::Str("2025-01-02T03:04:05Z".into())).boxed()),
            proptest::bool::weighted(0.05),
        )
            .prop_map(|(audience, priority, last_modified, duplicate)| AnnotationsSpec::Object {
                audience,
                priority,
                last_modified,
                duplicate
            }),
    ]);
    (
        form,
        id,
        name,
        opt(s(12)),
        opt(s(24)),
        opt(Just(Val::Str("text/plain".into())).boxed()),
        opt((0i64..1 << 40).prop_map(Val::Int).boxed()),
        annotations,
        prop_oneof![3 => Just(0u32), 1 => 1u32..50, 1 => Just(5000u32)],
        any::<bool>(),
    )
        .prop_map(|(form, id, name, title, description, mime_type, size, annotations, meta_depth, extras)| ItemSpec {
            form,
            id,
            name,
            title,
            description,
            mime_type,
            size,
            annotations,
            meta_depth,
            extras,
        })
        .boxed()
}

fn page(kind: ListKind) -> BoxedStrategy<PageSpec> {
    let shape = prop_oneof![
        26 => Just(Shape::Ok),
        1 => Just(Shape::NotObject),
        1 => Just(Shape::NoList),
        1 => Just(Shape::ListNotArray),
        1 => Just(Shape::DuplicateList),
        1 => Just(Shape::Trailing),
    ];
    let cursor = prop_oneof![
        2 => Just(CursorSpec::Absent),
        1 => Just(CursorSpec::Null),
        3 => (0u32..6).prop_map(CursorSpec::Fresh),
        1 => (0usize..4).prop_map(CursorSpec::Repeat),
        1 => Just(CursorSpec::Empty),
        1 => Just(CursorSpec::Number),
        1 => Just(CursorSpec::LoneSurrogate),
    ];
    let result_type = prop_oneof![
        6 => Just(None),
        1 => Just(Some(Val::Str("complete".into()))),
        1 => val(Just(Val::Str("incomplete".into())).boxed()).prop_map(Some),
    ];
    (
        shape,
        prop_oneof![8 => vec(item(kind), 0..4), 1 => vec(item(kind), 0..24)],
        cursor,
        result_type,
        opt((0i64..100_000).prop_map(Val::Int).boxed()),
        opt(Just(Val::Str("session".into())).boxed()),
        prop_oneof![6 => Just(0u32), 1 => 1u32..200, 1 => Just(100_000u32)],
    )
        .prop_map(|(shape, items, cursor, result_type, ttl_ms, cache_scope, meta_depth)| PageSpec {
            shape,
            items,
            cursor,
            result_type,
            ttl_ms,
            cache_scope,
            meta_depth,
        })
        .boxed()
}

fn step(kind: ListKind) -> BoxedStrategy<Step> {
    prop_oneof![
        12 => page(kind).prop_map(Step::Page),
        1 => prop_oneof![Just(-32601i64), Just(-32603), any::<i64>()].prop_map(Step::Rpc),
        1 => Just(Step::Malformed),
        1 => Just(Step::Transport),
        1 => Just(Step::TimedOut),
        1 => vec(any::<u8>(), 0..48).prop_map(|b| Step::Raw(checks::lossy(&b))),
    ]
    .boxed()
}

fn script() -> impl Strategy<Value = Script> {
    kind().prop_flat_map(|kind| {
        let bounds =
            (1u32..8, prop_oneof![0usize..24, Just(10_000)], prop_oneof![0usize..6000, Just(1_000_000)], 1u64..5000);
        let cursors = (
            prop_oneof![Just(RepeatedCursors::ByEra), Just(RepeatedCursors::Fail), Just(RepeatedCursors::Follow)],
            prop_oneof![3 => Just(65_536usize), 1 => 1usize..12],
        );
        let limits = (bounds, cursors).prop_map(
            |((max_pages, max_items, max_bytes, ms), (repeated_cursors, max_cursor_bytes))| Limits {
                max_pages,
                max_items,
                max_bytes,
                deadline: Duration::from_millis(ms),
                repeated_cursors,
                max_cursor_bytes,
            },
        );
        let version = proptest::sample::select(vec!["", "2025-06-18", "2025-11-25", "2026-07-28"]);
        let steps = vec((step(kind), prop_oneof![4 => 0u32..8, 1 => 0u32..6000]), 0..10);
        (Just(kind), limits, proptest::bool::weighted(0.95), version, steps).prop_map(
            |(kind, limits, capable, protocol_version, steps)| Script {
                kind,
                limits,
                capable,
                protocol_version,
                steps,
            },
        )
    })
}

/// Arbitrary JSON values (any depth up to 6, any keys), to feed pages that are JSON but not
/// pages.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text(10).prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        let key = prop_oneof![
            proptest::sample::select(vec![
                "resourceTemplates",
                "resources",
                "uriTemplate",
                "uri",
                "name",
                "nextCursor",
                "title",
                "annotations",
                "_meta",
                "resultType",
            ])
            .prop_map(str::to_owned),
            text(6),
        ];
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(key, inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(256) })]

    #[test]
    fn arbitrary_bytes_as_a_page_never_panic(data in vec(any::<u8>(), 0..512)) {
        checks::check_page(&data);
    }

    #[test]
    fn arbitrary_json_as_a_page_never_panics(v in json_value()) {
        checks::check_page(serde_json::to_string(&v).expect("JSON").as_bytes());
    }

    #[test]
    fn generated_pages_follow_the_rules(kind in kind(), p in kind().prop_flat_map(page)) {
        // One generated page as the whole traversal (pages of the other kind's shape included).
        let s = Script {
            kind,
            limits: Limits::default(),
            capable: true,
            protocol_version: "",
            steps: vec![(Step::Page(p), 1)],
        };
        checks::run_script(&s);
    }

    #[test]
    fn traversals_follow_the_rules_and_fail_closed(s in script()) {
        checks::run_script(&s);
    }

    #[test]
    fn fuzz_style_scripts_follow_the_rules(data in vec(any::<u8>(), 0..1024)) {
        checks::check_pager_sequence(&data);
    }
}
