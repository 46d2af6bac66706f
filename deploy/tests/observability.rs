//! The Grafana dashboard, the Prometheus alert rules and deploy/README.md
//! speak of the metrics a shard really exports: the list documented in
//! server/src/metrics.rs, checked against a live shard's /metrics.

use mino_testkit::{deploy_dir, server_bin, workspace_root, Shard};
use std::collections::BTreeSet;

/// Metric names (as scraped, e.g. `mino_ticks_total`) of the table in
/// server/src/metrics.rs's module docs, labels dropped.
fn documented() -> BTreeSet<String> {
    let src = std::fs::read_to_string(workspace_root().join("server/src/metrics.rs")).expect("metrics.rs");
    let names: BTreeSet<String> = src
        .lines()
        .filter_map(|l| l.strip_prefix("//! | `"))
        .filter_map(|l| l.split('`').next())
        .map(|n| n.split('{').next().unwrap_or(n).to_owned())
        .filter(|n| n.starts_with("mino_"))
        .collect();
    assert!(names.len() >= 15, "the table of metrics.rs was not found: {names:?}");
    names
}

/// The series names a metric produces: histograms (`_seconds`) have buckets.
fn series(name: &str) -> Vec<String> {
    if name.ends_with("_seconds") {
        ["_bucket", "_sum", "_count"].iter().map(|s| format!("{name}{s}")).collect()
    } else {
        vec![name.to_owned()]
    }
}

/// Every `mino_...` word in `text`.
fn mentioned(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("mino_") {
        let word: String =
            rest[i..].chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_').collect();
        rest = &rest[i + word.len()..];
        out.insert(word);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documented_metrics_are_the_ones_a_shard_exports() {
    let names = documented();
    let shard = Shard::start(server_bin(), &["--shard-id", "1"]);
    let scrape = shard.metrics().await;
    let families = scrape.families();
    for family in &families {
        let known = names.iter().any(|n| n == family || n.strip_suffix("_total") == Some(*family));
        assert!(known, "{family} is exported but not in the table of server/src/metrics.rs");
    }
    // Unlabelled metrics are exported from the start (labelled ones at 0 from the start when their
    // label values are a closed set the alerts and graphs take, else once a label value occurs).
    let samples = scrape.sample_names();
    let src = std::fs::read_to_string(workspace_root().join("server/src/metrics.rs")).expect("metrics.rs");
    for name in names.iter().filter(|n| !src.contains(&format!("`{n}{{"))) {
        for s in series(name) {
            assert!(samples.contains(s.as_str()), "{s} is documented but not exported");
        }
    }
}

#[test]
fn dashboard_and_alerts_use_only_exported_metrics_and_cover_them_all() {
    let names = documented();
    let known: BTreeSet<String> = names.iter().flat_map(|n| series(n)).collect();
    let dashboard_text = std::fs::read_to_string(deploy_dir().join("grafana/mino-dashboard.json")).expect("dashboard");
    let dashboard: serde_json::Value = serde_json::from_str(&dashboard_text).expect("the dashboard is valid JSON");
    let panels = dashboard["panels"].as_array().expect("panels");
    let mut exprs = String::new();
    for p in panels.iter().filter(|p| p["type"] != "row") {
        let targets = p["targets"].as_array().unwrap_or_else(|| panic!("panel {} has no targets", p["title"]));
        assert!(!targets.is_empty(), "panel {} has no targets", p["title"]);
        for t in targets {
            exprs.push_str(t["expr"].as_str().expect("expr"));
            exprs.push('\n');
        }
    }
    let alerts = std::fs::read_to_string(deploy_dir().join("prometheus/mino-alerts.yml")).expect("alerts");
    for (what, text) in [("dashboard", &exprs), ("alerts", &alerts)] {
        for m in mentioned(text) {
            assert!(known.contains(&m), "{what} uses {m}, which no shard exports");
        }
    }
    let used = mentioned(&exprs);
    for n in &names {
        assert!(series(n).iter().any(|s| used.contains(s)), "the dashboard shows nothing of {n}");
    }
    let scrape = std::fs::read_to_string(deploy_dir().join("prometheus/prometheus.yml")).expect("prometheus.yml");
    assert!(scrape.contains("job_name: mino") && scrape.contains("metrics_path: /metrics"));
    assert!(scrape.contains("- mino-alerts.yml"), "the scrape config loads the alert rules");
}

#[test]
fn readme_explains_every_metric() {
    let readme = std::fs::read_to_string(deploy_dir().join("README.md")).expect("deploy/README.md");
    for n in documented() {
        assert!(readme.contains(&format!("`{n}")), "deploy/README.md does not explain {n} (see its Metrics section)");
    }
}
