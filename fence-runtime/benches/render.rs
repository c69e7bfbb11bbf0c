//! Fencing a `#[derive(Fenced)]` payload (rendered as JSON straight through the neutraliser)
//! against what a user would write instead (`serde_json::to_string`, then `fence` of the
//! string), and against serialising alone, in one run.
//!
//! ```text
//! cargo bench -p fence-runtime --features derive --bench render
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fence_runtime::{Fenced, Source, fence, fence_value};

#[derive(serde::Serialize, Fenced)]
struct FetchResult {
    status: u16,
    url: String,
    body: String,
    links: Vec<String>,
}

fn payload(body_len: usize) -> FetchResult {
    let page =
        "<li><a href=\"/docs\">Docs</a></li>\n<p>The tool returned a page about revenue.</p>\n";
    FetchResult {
        status: 200,
        url: "https://example.com/report".into(),
        body: page.repeat(body_len / page.len() + 1),
        links: (0..body_len / 512).map(|i| format!("/page/{i}")).collect(),
    }
}

fn bench(c: &mut Criterion) {
    let source = Source::tool("web-fetch");
    for (name, size) in [("payload-4KiB", 4 << 10), ("payload-1MiB", 1 << 20)] {
        let value = payload(size);
        let json = serde_json::to_string(&value).unwrap();
        let derived = fence_value(&source, &value).unwrap();
        assert_eq!(
            derived,
            fence(&source, &json),
            "{name}: both ways give the same block"
        );

        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Bytes(json.len() as u64));
        group.bench_function("derive Fenced", |b| {
            b.iter(|| fence_value(&source, &black_box(&value)).unwrap());
        });
        group.bench_function("to_string then fence", |b| {
            b.iter(|| fence(&source, &serde_json::to_string(black_box(&value)).unwrap()));
        });
        group.bench_function("to_string alone", |b| {
            b.iter(|| serde_json::to_string(black_box(&value)).unwrap());
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = bench
}
criterion_main!(benches);
