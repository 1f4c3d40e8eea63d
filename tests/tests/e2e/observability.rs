//! `deploy/observability/` checked against the tools and the services it is for: promtool
//! validates the Prometheus config, the alert rules (and runs their unit tests,
//! `alerts.test.yml`) and parses every dashboard query; and every series that a dashboard or a
//! rule names is one the services really export, as read from the `/metrics` of a controller,
//! a worker and a device gateway running as processes of their own after a few actions.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use nanomuse_proto::act_request::Action;
use nanomuse_proto::browser_tool_client::BrowserToolClient;
use nanomuse_proto::*;
use nanomuse_tests::phone::KotlinPhone;
use nanomuse_tests::{
    Worker, act_on, acted, built_binary, free_address, navigate, registered_worker_config,
    serve_site, wait_for_workers,
};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as Frame;

/// Series that Prometheus makes itself for every target, which no service exports.
const SYNTHETIC_SERIES: &[&str] = &["up"];

const DEVICE_TOKEN: &str = "device-token-of-local-001";
const DEVICE: &str = "observed-phone";

#[test]
fn prometheus_config_and_alert_rules_pass_promtool() {
    promtool(&["check", "config", "prometheus.yml"]);
    promtool(&["check", "rules", "alerts.yml"]);
    promtool(&["test", "rules", "alerts.test.yml"]);

    // Grafana never parses a query before it runs it; promtool does, given the queries as
    // recording rules.
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("dashboard-queries.yml");
    std::fs::write(&rules, dashboard_queries_as_rules()).unwrap();
    promtool(&["check", "rules", rules.to_str().unwrap()]);
}

/// Runs `promtool ARGS` in deploy/observability; panics with its output unless it succeeds.
fn promtool(args: &[&str]) {
    let output = std::process::Command::new("promtool")
        .args(args)
        .current_dir(observability_dir())
        .output()
        .unwrap_or_else(|error| {
            panic!("cannot run promtool ({error}); deploy/local/ensure-promtool.sh installs it")
        });
    assert!(
        output.status.success(),
        "promtool {} failed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every dashboard query as a recording rule, with Grafana's variables replaced by values
/// PromQL accepts: the interval macros by a duration, the others (used only inside label
/// matchers' strings here) by a plain word.
fn dashboard_queries_as_rules() -> String {
    let mut rules = String::from("groups:\n  - name: dashboard-queries\n    rules:\n");
    for (number, query) in dashboard_queries().iter().enumerate() {
        let expr = without_grafana_variables(&query.expr);
        // A JSON string is a YAML double-quoted scalar as well.
        let expr = serde_json::to_string(&expr).unwrap();
        rules.push_str(&format!(
            "      - record: dashboard:query_{number}\n        expr: {expr}\n"
        ));
    }
    rules
}

fn without_grafana_variables(expr: &str) -> String {
    let mut expr = expr.to_string();
    for macro_name in ["$__rate_interval", "$__interval", "$__range"] {
        expr = expr.replace(macro_name, "5m");
    }
    let mut out = String::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'{') {
            chars.by_ref().find(|&c| c == '}');
        } else {
            while chars
                .peek()
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == '_')
            {
                chars.next();
            }
        }
        out.push_str("variable");
    }
    out
}

#[test]
fn metric_name_extraction_from_promql() {
    let cases: &[(&str, &[&str])] = &[
        (
            r#"histogram_quantile(0.95, sum by (action, le) (rate(nanomuse_action_duration_seconds_bucket{job="nanomuse-controller", action=~"click|type"}[$__rate_interval])))"#,
            &["nanomuse_action_duration_seconds_bucket"],
        ),
        // Aggregation clauses after the arguments, vector matching with label lists, `bool`.
        (
            r#"sum(rate(nanomuse_actions_total{outcome!="ok"}[5m])) by (action)
               / ignoring(outcome) group_left sum without (outcome) (rate(nanomuse_actions_total[5m]))
               > bool 0.05"#,
            &["nanomuse_actions_total"],
        ),
        (
            "nanomuse_queue_length > 0 and on (job, instance) nanomuse_worker_busy_slots \
             < on(job,instance) group_right(version) nanomuse_worker_capacity_slots offset 1h30m",
            &[
                "nanomuse_queue_length",
                "nanomuse_worker_busy_slots",
                "nanomuse_worker_capacity_slots",
            ],
        ),
        // Label names and regexes in strings, one with an escaped quote and a brace.
        (
            r#"label_replace(up{job="nanomuse-worker", path="a\"}b"}, "host", "$1", "instance", "(.*):\\d+")"#,
            &["up"],
        ),
        // A name given as __name__, a subquery, an @ modifier, numbers in exponent form, Inf.
        (
            r#"{__name__="nanomuse_holds_open", job='x'} + max_over_time(nanomuse_worker_pages[1h:5m] @ end()) * 1e-3 + Inf - NaN"#,
            &["nanomuse_holds_open", "nanomuse_worker_pages"],
        ),
        // A function's string argument, a comment, a recording rule's name with colons.
        (
            "topk(5, count_values(\"version\", nanomuse_build_info)) # not_a_metric here\n\
             + job:nanomuse_actions:rate5m unless absent(nanomuse_workers_live)",
            &[
                "job:nanomuse_actions:rate5m",
                "nanomuse_build_info",
                "nanomuse_workers_live",
            ],
        ),
        // Keywords are not case-sensitive; an aggregation written before its clause.
        (
            "SUM BY (le) (nanomuse_hold_wait_seconds_count) OR vector(0)",
            &["nanomuse_hold_wait_seconds_count"],
        ),
        ("time() - 1", &[]),
    ];
    for (expr, expected) in cases {
        let expected: BTreeSet<String> = expected.iter().map(|name| name.to_string()).collect();
        assert_eq!(metric_names(expr), expected, "in {expr}");
    }
}

/// The metric names an expression selects: its identifiers less PromQL's functions, operators,
/// keywords and label names. Skipped whole: strings, label matchers `{…}` (but for a
/// `__name__="…"` in one), ranges and subqueries `[…]`, the label lists of `by`, `without`,
/// `on`, `ignoring`, `group_left` and `group_right`, numbers and durations, `$` variables and
/// comments. A function is known by the `(` after it, so new ones need no list.
fn metric_names(promql: &str) -> BTreeSet<String> {
    const AGGREGATIONS: &[&str] = &[
        "sum",
        "avg",
        "min",
        "max",
        "count",
        "group",
        "stddev",
        "stdvar",
        "topk",
        "bottomk",
        "count_values",
        "quantile",
        "limitk",
        "limit_ratio",
    ];
    const LABEL_LIST_KEYWORDS: &[&str] = &[
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
    ];
    const OTHER_KEYWORDS: &[&str] = &[
        "and", "or", "unless", "atan2", "bool", "offset", "inf", "nan",
    ];

    let chars: Vec<char> = promql.chars().collect();
    let mut names = BTreeSet::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '"' | '\'' | '`') {
            i = after_string(&chars, i);
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '{' {
            let end = after_closing(&chars, i);
            names.extend(name_from_matchers(&chars[i + 1..(end - 1).max(i + 1)]));
            i = end;
        } else if c == '[' {
            i = after_closing(&chars, i);
        } else if c == '$' {
            i += 1;
            if chars.get(i) == Some(&'{') {
                i = after_closing(&chars, i);
            } else {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            // Numbers (1e-3 leaves "-3" to the next round, a number again) and durations.
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '.' | '_'))
            {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || matches!(c, '_' | ':') {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '_' | ':'))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let lower = word.to_ascii_lowercase();
            let next = (i..chars.len()).find(|&j| !chars[j].is_whitespace());
            let opens = next.is_some_and(|j| chars[j] == '(');
            if LABEL_LIST_KEYWORDS.contains(&lower.as_str()) {
                if let Some(open) = next.filter(|_| opens) {
                    i = after_closing(&chars, open);
                }
            } else if !opens
                && !AGGREGATIONS.contains(&lower.as_str())
                && !OTHER_KEYWORDS.contains(&lower.as_str())
            {
                names.insert(word);
            }
        } else {
            i += 1;
        }
    }
    names
}

/// The index just past the string literal that starts at `start` (`"…"` and `'…'` with
/// backslash escapes, `` `…` `` raw).
fn after_string(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    let mut i = start + 1;
    while i < chars.len() {
        if chars[i] == '\\' && quote != '`' {
            i += 2;
        } else if chars[i] == quote {
            return i + 1;
        } else {
            i += 1;
        }
    }
    chars.len()
}

/// The index just past the bracket that closes the one at `open`, strings skipped.
fn after_closing(chars: &[char], open: usize) -> usize {
    let (opening, closing) = match chars[open] {
        '(' => ('(', ')'),
        '[' => ('[', ']'),
        _ => ('{', '}'),
    };
    let mut depth = 0;
    let mut i = open;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '"' | '\'' | '`') {
            i = after_string(chars, i);
            continue;
        }
        if c == opening {
            depth += 1;
        } else if c == closing {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
        i += 1;
    }
    chars.len()
}

/// The metric name of `__name__="…"` among label matchers, the one matcher that names a series.
fn name_from_matchers(matchers: &[char]) -> Option<String> {
    let text: String = matchers.iter().collect();
    let rest = text.split("__name__").nth(1)?.trim_start();
    let rest = rest.strip_prefix('=')?;
    if rest.starts_with('~') {
        return None;
    }
    let rest = rest.trim_start();
    let quote = rest
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'' | '`'))?;
    let value: String = rest[1..].chars().take_while(|&c| c != quote).collect();
    Some(value)
}

/// One query of a dashboard, and where it is (for messages).
struct DashboardQuery {
    place: String,
    expr: String,
}

/// Every dashboard's queries; checks on the way that each is a Grafana dashboard as
/// provisioning loads it: an object with a uid, a title, a Prometheus `datasource` variable and
/// panels, every panel (but rows) with targets that have an expression.
fn dashboard_queries() -> Vec<DashboardQuery> {
    let folder = observability_dir().join("grafana/dashboards");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let names: Vec<_> = files.iter().map(|f| f.file_name().unwrap()).collect();
    for expected in [
        "fleet-overview.json",
        "workers.json",
        "holds-and-devices.json",
    ] {
        assert!(
            names.iter().any(|name| *name == expected),
            "no {expected} in {}",
            folder.display()
        );
    }

    let mut uids = BTreeSet::new();
    let mut queries = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(file).unwrap();
        let dashboard: Value = serde_json::from_str(&text)
            .unwrap_or_else(|error| panic!("{name} is not JSON: {error}"));
        assert!(dashboard.is_object(), "{name}: not a JSON object");
        for key in ["uid", "title"] {
            let value = dashboard[key].as_str().unwrap_or_default();
            assert!(!value.is_empty(), "{name}: no {key}");
        }
        let uid = dashboard["uid"].as_str().unwrap();
        assert!(
            uid.len() <= 40,
            "{name}: Grafana refuses uids over 40 characters"
        );
        assert!(uids.insert(uid.to_string()), "{name}: uid {uid} used twice");
        assert!(
            dashboard["schemaVersion"].as_u64().is_some(),
            "{name}: no schemaVersion"
        );

        let variables = dashboard["templating"]["list"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            variables.iter().any(|v| v["name"] == "datasource"
                && v["type"] == "datasource"
                && v["query"] == "prometheus"),
            "{name}: no `datasource` variable of type datasource for Prometheus"
        );
        for variable in variables.iter().filter(|v| v["type"] == "query") {
            let query = match &variable["query"] {
                Value::String(query) => query.clone(),
                query => query["query"].as_str().unwrap_or_default().to_string(),
            };
            if let Some(expr) = grafana_variable_selector(&query) {
                queries.push(DashboardQuery {
                    place: format!("{name}: variable {}", variable["name"]),
                    expr,
                });
            }
        }

        let panels = dashboard["panels"].as_array().cloned().unwrap_or_default();
        assert!(!panels.is_empty(), "{name}: no panels");
        let mut ids = BTreeSet::new();
        // Rows hold their panels when collapsed; they have no queries of their own.
        let mut pending = panels;
        while let Some(panel) = pending.pop() {
            let title = panel["title"].as_str().unwrap_or_default().to_string();
            assert!(
                !title.is_empty(),
                "{name}: a panel without a title: {panel}"
            );
            if let Some(id) = panel["id"].as_u64() {
                assert!(ids.insert(id), "{name}: panel id {id} used twice");
            }
            if panel["type"] == "row" {
                pending.extend(panel["panels"].as_array().cloned().unwrap_or_default());
                continue;
            }
            let targets = panel["targets"].as_array().cloned().unwrap_or_default();
            assert!(
                !targets.is_empty(),
                "{name}: panel {title:?} has no targets"
            );
            for target in targets {
                let expr = target["expr"].as_str().unwrap_or_default();
                assert!(
                    !expr.trim().is_empty(),
                    "{name}: panel {title:?} has a target without expr"
                );
                queries.push(DashboardQuery {
                    place: format!("{name}: panel {title:?}"),
                    expr: expr.to_string(),
                });
            }
        }
    }
    queries
}

/// The series selector of a Grafana variable query `label_values(SELECTOR, LABEL)`; none for
/// `label_values(LABEL)` and the other Grafana functions that take no selector.
fn grafana_variable_selector(query: &str) -> Option<String> {
    let inner = query
        .trim()
        .strip_prefix("label_values(")?
        .strip_suffix(')')?;
    let (selector, _label) = inner.rsplit_once(',')?;
    Some(selector.trim().to_string())
}

/// Each rule of alerts.yml, by its alert (or record) name, with its expression. Not a YAML
/// parser: it reads the two forms the file uses, an `expr:` on its line or a block scalar
/// (`>-`, `|`) below it; the count check catches a rule written in another.
fn alert_rule_expressions() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(observability_dir().join("alerts.yml")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut rules = Vec::new();
    let mut rule = String::new();
    let mut declared = 0;
    for (number, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if let Some(name) = trimmed
            .strip_prefix("- alert:")
            .or_else(|| trimmed.strip_prefix("- record:"))
        {
            rule = name.trim().to_string();
            declared += 1;
        }
        let Some(value) = trimmed.strip_prefix("expr:") else {
            continue;
        };
        let value = value.trim();
        let expr = if value.starts_with(['>', '|']) {
            let indent = line.len() - trimmed.len();
            lines[number + 1..]
                .iter()
                .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
                .map(|l| l.trim())
                .collect::<Vec<_>>()
                .join("\n")
        } else if let Some(quoted) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            quoted.replace("\\\"", "\"").replace("\\\\", "\\")
        } else if let Some(quoted) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
            quoted.replace("''", "'")
        } else {
            value.to_string()
        };
        rules.push((rule.clone(), expr));
    }
    assert_eq!(
        rules.len(),
        declared,
        "alerts.yml: read {} expressions of {declared} rules: {rules:?}",
        rules.len()
    );
    assert!(!rules.is_empty(), "alerts.yml: no rules");
    rules
}

/// Every metric name the dashboards and alert rules select, with the places that name it.
fn queried_series() -> BTreeMap<String, BTreeSet<String>> {
    let mut queried: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let dashboards = dashboard_queries().into_iter().map(|q| (q.place, q.expr));
    let rules = alert_rule_expressions()
        .into_iter()
        .map(|(rule, expr)| (format!("alerts.yml: {rule}"), expr));
    // The worker autoscaler's queries (prometheus-adapter, deploy/k8s) read series too.
    let adapter = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/k8s/prometheus-adapter/config.yaml"),
    )
    .unwrap();
    let autoscaler = adapter
        .split("metricsQuery:")
        .skip(1)
        .map(|query| query.split("\n  - ").next().unwrap_or_default())
        .map(|query| query.replace("<<.LabelMatchers>>", "").replace(">-", ""))
        .map(|expr| ("prometheus-adapter: metricsQuery".to_string(), expr));
    for (place, expr) in dashboards.chain(rules).chain(autoscaler) {
        let names = metric_names(&expr);
        assert!(!names.is_empty(), "{place}: no series in {expr}");
        for name in names {
            queried.entry(name).or_default().insert(place.clone());
        }
    }
    queried
}

/// What one `/metrics` page declares: the metric families by name with their type (`# TYPE`
/// lines) and the names of the samples on it.
#[derive(Debug, Default)]
struct Exported {
    families: BTreeMap<String, String>,
    samples: BTreeSet<String>,
}

impl Exported {
    fn read(&mut self, exposition: &str) {
        for line in exposition.lines() {
            if let Some(declaration) = line.strip_prefix("# TYPE ") {
                let mut words = declaration.split_whitespace();
                if let (Some(name), Some(kind)) = (words.next(), words.next()) {
                    self.families.insert(name.to_string(), kind.to_string());
                }
            } else if !line.starts_with('#') && !line.trim().is_empty() {
                let name = line.split(['{', ' ']).next().unwrap_or_default();
                self.samples.insert(name.to_string());
            }
        }
    }

    /// Whether a query naming `name` finds a series. A family declared without samples yet
    /// counts (a counter no one has incremented); a histogram's `_bucket`, `_sum` and `_count`
    /// are its family's, as a counter's `_total` is in OpenMetrics, where the family is named
    /// without it.
    fn has(&self, name: &str) -> bool {
        let family_of_kind = |suffix: &str, kinds: &[&str]| {
            name.strip_suffix(suffix).is_some_and(|base| {
                self.families
                    .get(base)
                    .is_some_and(|kind| kinds.contains(&kind.as_str()))
            })
        };
        self.samples.contains(name)
            || self.families.contains_key(name)
            || ["_bucket", "_sum", "_count"]
                .iter()
                .any(|suffix| family_of_kind(suffix, &["histogram", "summary"]))
            || family_of_kind("_total", &["counter"])
            || SYNTHETIC_SERIES.contains(&name)
    }
}

#[test]
fn exported_series_are_read_from_prometheus_and_openmetrics_text() {
    let mut exported = Exported::default();
    // OpenMetrics (the prometheus-client crate): a counter's family is named without
    // `_total`, and a family nothing has touched yet has no samples.
    exported.read(
        "# HELP nanomuse_actions Actions.\n\
         # TYPE nanomuse_actions counter\n\
         nanomuse_actions_total{action=\"click\",outcome=\"ok\"} 2\n\
         # TYPE nanomuse_gateway_websocket_errors counter\n\
         # TYPE nanomuse_hold_wait_seconds histogram\n\
         # UNIT nanomuse_hold_wait_seconds seconds\n\
         # EOF\n",
    );
    // The classic text format: the family named as its samples.
    exported.read(
        "# TYPE process_resident_memory_bytes gauge\n\
         process_resident_memory_bytes 1.2e+07\n\
         nanomuse_untyped 1\n",
    );
    for name in [
        "nanomuse_actions_total",
        "nanomuse_gateway_websocket_errors_total",
        "nanomuse_hold_wait_seconds_bucket",
        "nanomuse_hold_wait_seconds_count",
        "process_resident_memory_bytes",
        "nanomuse_untyped",
        "up",
    ] {
        assert!(exported.has(name), "{name} not found in {exported:?}");
    }
    for name in [
        "nanomuse_actions_bucket",
        "process_resident_memory_bytes_total",
        "nanomuse_holds_open",
    ] {
        assert!(!exported.has(name), "{name} found in {exported:?}");
    }
}

#[tokio::test]
async fn dashboards_and_rules_name_only_exported_series() {
    // The files first: a malformed dashboard fails before any process is started.
    let queried = queried_series();

    nanomuse_tests::logs();
    let site = serve_site().await;
    let dir = tempfile::tempdir().unwrap();
    let gateway = Service::spawn(
        "device-gateway",
        &["--device-token", &format!("{DEVICE_TOKEN}=local")],
    )
    .await;
    let controller_config = dir.path().join("controller.toml");
    std::fs::write(
        &controller_config,
        format!(
            "[controller]\nheartbeat_interval_ms = 100\nheartbeat_timeout_ms = 1000\n\
             gateways = [\"http://{}\"]\n",
            gateway.address
        ),
    )
    .unwrap();
    let controller = Service::spawn(
        "controller",
        &[
            "--config",
            controller_config.to_str().unwrap(),
            "--data",
            dir.path().join("controller").to_str().unwrap(),
        ],
    )
    .await;
    let worker = Worker::spawn(
        &built_binary("worker"),
        registered_worker_config(&dir.path().join("w1"), "w1", controller.address, 2),
    )
    .await;
    wait_for_workers(controller.address, &["w1"]).await;
    let phone = KotlinPhone::connect_in(
        gateway.address,
        DEVICE,
        DEVICE_TOKEN,
        Some(&dir.path().join("phone")),
    )
    .await;
    wait_for_phone(controller.address).await;

    // Actions on both backends and a refused phone, so that the series with labels have
    // samples whether or not a service declares families it has not used yet.
    let mut tool = BrowserToolClient::connect(format!("http://{}", controller.address))
        .await
        .unwrap();
    let page = format!("http://{site}/page");
    let listed = acted(
        &mut tool,
        act_on("observed-worker", "playwright", navigate(&page)),
    )
    .await;
    let first = listed.elements.first().expect("elements on the page").n;
    acted(
        &mut tool,
        act_on(
            "observed-worker",
            "playwright",
            Action::Click(ClickAction {
                n: first.into(),
                ..Default::default()
            }),
        ),
    )
    .await;
    acted(
        &mut tool,
        act_on("observed-phone", "device", navigate(&page)),
    )
    .await;
    refused_hello(gateway.address).await;

    let http = reqwest::Client::new();
    let mut scrapes = Vec::new();
    for (service, address) in [
        ("controller", controller.address),
        ("worker", worker.address),
        ("device-gateway", gateway.address),
    ] {
        scrapes.push((service, scrape(&http, address).await));
    }

    phone.stop().await;
    controller.stop().await;
    worker.stop().await;
    gateway.stop().await;

    let mut exported = Exported::default();
    let mut unscraped = Vec::new();
    for (service, scraped) in scrapes {
        match scraped {
            Ok(exposition) => exported.read(&exposition),
            Err(error) => unscraped.push(format!("the {service}'s /metrics: {error}")),
        }
    }
    assert!(unscraped.is_empty(), "{}", unscraped.join("\n"));
    let missing: Vec<String> = queried
        .iter()
        .filter(|(name, _)| !exported.has(name))
        .map(|(name, places)| {
            format!(
                "{name} (in {})",
                places.iter().cloned().collect::<Vec<_>>().join("; ")
            )
        })
        .collect();
    assert!(
        missing.is_empty(),
        "series named by dashboards or rules that no service exports:\n  {}\nexported families: {:?}",
        missing.join("\n  "),
        exported.families.keys().collect::<Vec<_>>()
    );
}

/// `GET /metrics` on `address`: the exposition text, or why there is none.
async fn scrape(http: &reqwest::Client, address: SocketAddr) -> Result<String, String> {
    let url = format!("http://{address}/metrics");
    let response = http
        .get(&url)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .map_err(|error| format!("GET {url}: {error}"))?;
    let status = response.status();
    let text = response.text().await.map_err(|error| error.to_string())?;
    if !status.is_success() {
        return Err(format!("GET {url}: {status}: {text}"));
    }
    Ok(text)
}

/// A phone that says hello with a token the gateway does not know, and is turned away.
async fn refused_hello(gateway: SocketAddr) {
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{gateway}/device"))
        .await
        .unwrap();
    let hello = json!({"kind": "device", "device_id": "stranger", "token": "not-a-known-token-000",
                       "browser": true, "app": "test"});
    socket.send(Frame::text(hello.to_string())).await.unwrap();
    // The refusal, then the close; the socket ends either way.
    while let Some(Ok(frame)) = socket.next().await {
        if frame.is_close() {
            break;
        }
    }
}

/// Waits until the controller counts worker `name` live; registration has no event to await.
/// Waits until the controller lists the phone; it learns of it from the gateway, on its own
/// schedule.
async fn wait_for_phone(controller: SocketAddr) {
    let http = reqwest::Client::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let response = http
            .get(format!("http://{controller}/api/state"))
            .send()
            .await
            .unwrap();
        let state: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        if state["devices"] == json!([DEVICE]) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the controller does not list {DEVICE}: {state}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A workspace binary in a process of its own, as deployed; ended with SIGTERM by
/// [`Service::stop`], killed with this process should the test panic first.
struct Service {
    name: &'static str,
    address: SocketAddr,
    child: tokio::process::Child,
}

impl Service {
    /// Runs binary `name` with `args` and `--listen` on a free loopback port, and waits until
    /// it accepts connections.
    async fn spawn(name: &'static str, args: &[&str]) -> Self {
        let address = free_address();
        let mut child = tokio::process::Command::new(built_binary(name))
            .args(args)
            .args(["--listen", &address.to_string()])
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {name}: {error}"));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while tokio::net::TcpStream::connect(address).await.is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("{name} exited ({status}) before listening");
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{name} did not listen on {address} within 20 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Self {
            name,
            address,
            child,
        }
    }

    /// SIGTERM, as Kubernetes stops a pod: the service drains, then exits with 0.
    async fn stop(mut self) {
        let pid = self.child.id().expect("still running").to_string();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -TERM {pid} ({}) failed", self.name);
        let status = self.child.wait().await.unwrap();
        assert!(status.success(), "{} ended with {status}", self.name);
    }
}

fn observability_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/observability")
}
