//! Discovery benchmarks: the pager on the 42 KB / 100-template page of
//! `reference/baseline-discovery.md`, a 100-page traversal, and the sanitizer on adversarial text.
//! criterion prints time per page and throughput (MB/s) for each.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcplens::discovery::{Limits, ListKind, Outcome, Pager};
use mcplens::sanitize;

mod common;
use common::page;

fn one_page(text: &str) -> usize {
    let mut p = Pager::new(ListKind::ResourceTemplates, "bench", true, Limits::default(), Duration::ZERO).unwrap();
    p.poll_request().unwrap();
    p.handle_outcome(Outcome::Page(text), Duration::ZERO).unwrap();
    p.finish().unwrap().items.len()
}

fn bench_page(c: &mut Criterion) {
    let mut g = c.benchmark_group("pager");
    for (label, accent) in [("page_42kb_ascii", false), ("page_42kb_non_ascii", true)] {
        let text = page(0, 100, None, accent);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(format!("{label} ({} B, 100 templates)", text.len()), |b| {
            b.iter(|| assert_eq!(one_page(black_box(&text)), 100))
        });
        // Reference on the same machine in the same run (the machine is shared and noisy): a plain
        // serde_json::Value parse of the page, which reference/limits.md measured at ~97 µs.
        g.bench_function(format!("{label} reference serde_json::Value parse"), |b| {
            b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&text)).unwrap())
        });
    }
    g.finish();
}

fn bench_traversal(c: &mut Criterion) {
    let pages: Vec<String> =
        (0..100).map(|p| page(p * 100, 100, (p < 99).then(|| format!("cursor-{}", p + 1)).as_deref(), false)).collect();
    let total: usize = pages.iter().map(String::len).sum();
    let limits = Limits { max_bytes: 100_000_000, ..Limits::default() };
    let mut g = c.benchmark_group("traversal");
    g.throughput(Throughput::Bytes(total as u64));
    g.sample_size(20);
    g.bench_function(format!("100_pages_10000_templates ({total} B)"), |b| {
        b.iter(|| {
            let mut p = Pager::new(ListKind::ResourceTemplates, "bench", true, limits, Duration::ZERO).unwrap();
            let mut i = 0;
            while p.poll_request().is_some() {
                p.handle_outcome(Outcome::Page(black_box(&pages[i])), Duration::ZERO).unwrap();
                i += 1;
            }
            assert_eq!(p.finish().unwrap().items.len(), 10_000);
        })
    });
    g.finish();
}

fn bench_sanitize(c: &mut Criterion) {
    let mut hostile = String::new();
    while hostile.len() < 16_000 {
        hostile.push_str("ok \u{1b}[31mred\u{1b}[0m \u{202e}bidi\u{200b}zw \u{E0041}tag\u{7}\r\n é 😀 ");
    }
    let clean = "Plain description text with nothing to remove. ".repeat(300);
    let mut g = c.benchmark_group("sanitize");
    g.throughput(Throughput::Bytes(hostile.len() as u64));
    g.bench_function(format!("adversarial_text ({} B)", hostile.len()), |b| {
        b.iter(|| sanitize::text(black_box(&hostile)).len())
    });
    g.throughput(Throughput::Bytes(clean.len() as u64));
    g.bench_function(format!("clean_text ({} B)", clean.len()), |b| b.iter(|| sanitize::text(black_box(&clean)).len()));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench_page, bench_traversal, bench_sanitize
}
criterion_main!(benches);
