//! The deployment's files against the binaries they deploy. `deploy/k8s/validate.sh` renders
//! each overlay with kustomize and validates it against Kubernetes' schemas; then whatever in
//! the rendered manifests names something of ours is checked against the real thing: each
//! image is built by a Dockerfile whose entrypoint is a binary cargo builds; each container
//! port, probe, Service, Ingress, NetworkPolicy and scrape annotation names the port the
//! container's own arguments make it listen on; each address in a ConfigMap names a Service
//! that leads there; and each binary, started from the build with the container's arguments,
//! environment, ConfigMaps and Secrets (moved to loopback and temporary folders), answers its
//! probes' gRPC health checks with SERVING, registers where its config says, and ends cleanly
//! on SIGTERM within the pod's grace period. Besides: deploy/local's config files have the
//! keys and values of the cluster's, and deploy/local/run.sh brings its five processes up and
//! down.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use base64::Engine as _;
use nanomuse_tests::{binaries_dir, built_binary, free_address, repo};
use serde::Deserialize as _;
use serde_json::Value;
use tokio::io::AsyncBufReadExt as _;

const OVERLAYS: &[&str] = &["dev", "production"];
const PROBES: &[&str] = &["startupProbe", "readinessProbe", "livenessProbe"];

// ---------------------------------------------------------------------------------------------
// Rendering and validation: validate.sh, once for every test of this file.

struct Validation {
    success: bool,
    output: String,
    dir: PathBuf,
}

fn validation() -> &'static Validation {
    static VALIDATION: OnceLock<Validation> = OnceLock::new();
    VALIDATION.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("deploy-rendered");
        let _ = std::fs::remove_dir_all(&dir);
        let output = Command::new(repo().join("deploy/k8s/validate.sh"))
            .arg("--out")
            .arg(&dir)
            .output()
            .expect("deploy/k8s/validate.sh runs");
        Validation {
            success: output.status.success(),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
            dir,
        }
    })
}

/// The objects of one rendered overlay.
fn rendered(overlay: &str) -> Vec<Value> {
    let validation = validation();
    assert!(
        validation.success,
        "deploy/k8s/validate.sh failed:\n{}",
        validation.output
    );
    let text = std::fs::read_to_string(validation.dir.join(format!("{overlay}.yaml"))).unwrap();
    serde_norway::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).expect("kustomize's output is YAML"))
        .filter(|object| !object.is_null())
        .collect()
}

#[test]
fn manifests_validate_against_the_kubernetes_schemas() {
    let validation = validation();
    assert!(
        validation.success,
        "deploy/k8s/validate.sh failed:\n{}",
        validation.output
    );
    for overlay in OVERLAYS {
        assert!(
            validation
                .output
                .contains(&format!("deploy/k8s/overlays/{overlay}: ")),
            "overlay {overlay} was not validated:\n{}",
            validation.output
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the objects.

fn kind(object: &Value) -> &str {
    object["kind"].as_str().unwrap_or_default()
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn of_kind<'a>(objects: &'a [Value], wanted: &'a str) -> impl Iterator<Item = &'a Value> {
    objects.iter().filter(move |object| kind(object) == wanted)
}

/// Whether `selector` (a Service's plain map, or a LabelSelector) picks pods labelled
/// `labels`. No manifest here uses matchExpressions; one that did would fail here rather than
/// be half read.
fn selects(selector: &Value, labels: &Value) -> bool {
    assert!(
        selector.get("matchExpressions").is_none(),
        "matchExpressions is not read by this test: {selector}"
    );
    let wanted = selector.get("matchLabels").unwrap_or(selector);
    wanted
        .as_object()
        .is_some_and(|wanted| wanted.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

/// One workload's pod: its template, and the name its first pod gets.
#[derive(Clone)]
struct Pod<'a> {
    workload: &'a Value,
    name: String,
    namespace: String,
    labels: &'a Value,
    annotations: &'a Value,
    spec: &'a Value,
    container: &'a Value,
}

fn pods(objects: &[Value]) -> Vec<Pod<'_>> {
    objects
        .iter()
        .filter(|object| matches!(kind(object), "StatefulSet" | "Deployment"))
        .map(|workload| {
            let template = &workload["spec"]["template"];
            let containers = list(&template["spec"]["containers"]);
            assert_eq!(
                containers.len(),
                1,
                "{} {}: one container per pod is what this test reads",
                kind(workload),
                name(workload)
            );
            Pod {
                workload,
                name: match kind(workload) {
                    "StatefulSet" => format!("{}-0", name(workload)),
                    _ => name(workload).to_string(),
                },
                namespace: text(&workload["metadata"]["namespace"]).to_string(),
                labels: &template["metadata"]["labels"],
                annotations: &template["metadata"]["annotations"],
                spec: &template["spec"],
                container: &containers[0],
            }
        })
        .collect()
}

impl Pod<'_> {
    fn title(&self) -> String {
        format!("{} {}", kind(self.workload), name(self.workload))
    }

    fn args(&self) -> Vec<String> {
        list(&self.container["args"])
            .iter()
            .map(|a| text(a).to_string())
            .collect()
    }

    /// The value after `flag` in the container's arguments (`--flag value` or `--flag=value`).
    fn flag(&self, flag: &str) -> Option<String> {
        let args = self.args();
        args.iter().enumerate().find_map(|(i, arg)| {
            if arg == flag {
                args.get(i + 1).cloned()
            } else {
                arg.strip_prefix(&format!("{flag}=")).map(str::to_string)
            }
        })
    }

    /// The port the binary listens on, from its `--listen` argument. Required: every binary's
    /// default is a loopback address, which nothing outside the pod (a probe, a Service)
    /// reaches.
    fn listen_port(&self) -> u16 {
        let listen = self.flag("--listen").unwrap_or_else(|| {
            panic!(
                "{}: no --listen; the binary's default is loopback",
                self.title()
            )
        });
        let (host, port) = listen.rsplit_once(':').unwrap();
        assert!(
            !host.starts_with("127.") && host != "localhost" && host != "[::1]",
            "{}: --listen {listen} is loopback, unreachable from outside the pod",
            self.title()
        );
        port.parse()
            .unwrap_or_else(|_| panic!("{}: --listen {listen}", self.title()))
    }

    /// A container port, by number or by name.
    fn container_port(&self, port: &Value) -> Option<u16> {
        let ports = list(&self.container["ports"]);
        match port {
            Value::Number(number) => number.as_u64().and_then(|n| u16::try_from(n).ok()),
            Value::String(wanted) => ports
                .iter()
                .find(|p| text(&p["name"]) == wanted)
                .and_then(|p| p["containerPort"].as_u64())
                .and_then(|n| u16::try_from(n).ok()),
            _ => None,
        }
    }

    /// The volume mounted over `path` in the container, and `path` inside that volume.
    fn mount_of(&self, path: &str) -> Option<(&Value, String)> {
        list(&self.container["volumeMounts"])
            .iter()
            .filter_map(|mount| {
                let at = text(&mount["mountPath"]).trim_end_matches('/');
                let rest = path.strip_prefix(at)?;
                let rest = if rest.is_empty() {
                    rest
                } else {
                    rest.strip_prefix('/')?
                };
                Some((mount, at.len(), rest.to_string()))
            })
            .max_by_key(|(_, length, _)| *length)
            .map(|(mount, _, rest)| (mount, rest))
    }

    fn volume(&self, mount: &Value) -> Option<&Value> {
        list(&self.spec["volumes"])
            .iter()
            .find(|volume| volume["name"] == mount["name"])
    }

    /// Whether `path` lies on one of the workload's PersistentVolumeClaims.
    fn on_claim(&self, path: &str) -> bool {
        self.mount_of(path).is_some_and(|(mount, _)| {
            list(&self.workload["spec"]["volumeClaimTemplates"])
                .iter()
                .any(|claim| claim["metadata"]["name"] == mount["name"])
        })
    }

    fn run_as_user(&self) -> Option<u64> {
        self.container["securityContext"]["runAsUser"]
            .as_u64()
            .or_else(|| self.spec["securityContext"]["runAsUser"].as_u64())
    }
}

/// The content of `key` in a ConfigMap or Secret volume (`items` honoured).
fn volume_key(volume: &Value, file: &str) -> Option<String> {
    let source = volume.get("configMap").or_else(|| volume.get("secret"))?;
    let items = list(&source["items"]);
    if items.is_empty() {
        Some(file.to_string())
    } else {
        items
            .iter()
            .find(|item| text(&item["path"]) == file)
            .map(|item| text(&item["key"]).to_string())
    }
}

/// A Secret's data by the name the manifests give it. The production overlay expects its
/// Secret to be made outside git; the dev overlay's (generated, so its name carries a hash)
/// stands in for it, which also checks that both have the keys the pods read.
fn secret_data(objects: &[Value], dev: &[Value], wanted: &str) -> BTreeMap<String, String> {
    let find = |objects: &[Value]| -> Option<Value> {
        of_kind(objects, "Secret")
            .find(|s| {
                name(s) == wanted
                    || name(s)
                        .strip_prefix(wanted)
                        .is_some_and(|rest| rest.starts_with('-'))
            })
            .cloned()
    };
    let secret = find(objects)
        .or_else(|| find(dev))
        .unwrap_or_else(|| panic!("no Secret {wanted} here nor in the dev overlay"));
    let mut data = BTreeMap::new();
    if let Some(encoded) = secret["data"].as_object() {
        for (key, value) in encoded {
            // kustomize folds long values over several lines.
            let encoded: String = text(value).split_whitespace().collect();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .unwrap();
            data.insert(key.clone(), String::from_utf8(bytes).unwrap());
        }
    }
    if let Some(plain) = secret["stringData"].as_object() {
        for (key, value) in plain {
            data.insert(key.clone(), text(value).to_string());
        }
    }
    data
}

/// The file at `path` inside the pod, from the ConfigMap or Secret mounted there.
fn mounted_file(objects: &[Value], dev: &[Value], pod: &Pod, path: &str) -> Option<String> {
    let (mount, file) = pod.mount_of(path)?;
    let volume = pod.volume(mount)?;
    let key = volume_key(volume, &file)?;
    if let Some(map) = volume.get("configMap") {
        let config_map = of_kind(objects, "ConfigMap").find(|c| name(c) == text(&map["name"]))?;
        Some(text(&config_map["data"][&key]).to_string())
    } else {
        let secret = text(&volume["secret"]["secretName"]);
        secret_data(objects, dev, secret).remove(&key)
    }
}

// ---------------------------------------------------------------------------------------------
// The images: deploy/docker/<image>.Dockerfile, its final stage.

struct Image {
    file: PathBuf,
    /// The whole file, for what the builder stage builds.
    source: String,
    /// The final stage's ENTRYPOINT (exec form).
    entrypoint: Vec<String>,
    user: String,
}

fn image(reference: &str) -> Image {
    let last = reference.rsplit('/').next().unwrap();
    let repository = last.split(['@', ':']).next().unwrap();
    let file = repo()
        .join("deploy/docker")
        .join(format!("{repository}.Dockerfile"));
    assert!(
        file.exists(),
        "image {reference}: no {} builds it",
        file.display()
    );
    let source = std::fs::read_to_string(&file).unwrap();
    // Instructions with their continuation lines joined, comments and blank lines left out.
    let mut instructions = Vec::new();
    let mut current = String::new();
    for line in source.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(start) => {
                current.push_str(start);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                instructions.push(std::mem::take(&mut current));
            }
        }
    }
    let last_from = instructions
        .iter()
        .rposition(|i| i.starts_with("FROM "))
        .unwrap_or_else(|| panic!("{}: no FROM", file.display()));
    let stage = &instructions[last_from..];
    let last = |keyword: &str| {
        stage
            .iter()
            .rev()
            .find_map(|i| i.strip_prefix(keyword).map(str::trim))
    };
    let entrypoint =
        last("ENTRYPOINT ").unwrap_or_else(|| panic!("{}: no ENTRYPOINT", file.display()));
    // The exec form: the binary (or tini) is PID 1 and gets the kubelet's SIGTERM; in the shell
    // form a shell would get it and not pass it on.
    let entrypoint: Vec<String> = serde_json::from_str(entrypoint).unwrap_or_else(|_| {
        panic!(
            "{}: ENTRYPOINT {entrypoint} is not the exec form",
            file.display()
        )
    });
    let user = last("USER ").unwrap_or_default().to_string();
    Image {
        file,
        source,
        entrypoint,
        user,
    }
}

/// The binaries cargo builds in this workspace.
fn cargo_binaries() -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo metadata failed");
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut binaries = BTreeSet::new();
    for package in list(&metadata["packages"]) {
        for target in list(&package["targets"]) {
            if list(&target["kind"]).iter().any(|k| k == "bin") {
                binaries.insert(text(&target["name"]).to_string());
            }
        }
    }
    binaries
}

// ---------------------------------------------------------------------------------------------
// The static checks.

/// What one container runs, as the manifests and its image say.
struct Deployed<'a> {
    pod: Pod<'a>,
    binary: String,
    /// The entrypoint's words after the binary, before the container's args.
    entrypoint_args: Vec<String>,
    /// The gRPC health services that must answer SERVING: the probes' ("" for the server as a
    /// whole) and those a gRPC Ingress routes to.
    health: BTreeSet<String>,
}

fn services_of<'a>(objects: &'a [Value], pod: &Pod) -> Vec<&'a Value> {
    of_kind(objects, "Service")
        .filter(|s| selects(&s["spec"]["selector"], pod.labels))
        .collect()
}

/// The pod behind `service`'s port `port` (by number or name), and the container port it
/// lands on.
fn behind<'a, 'p>(
    objects: &[Value],
    pods: &'p [Pod<'a>],
    service: &str,
    port: &Value,
) -> (&'p Pod<'a>, u16) {
    let service = of_kind(objects, "Service")
        .find(|s| name(s) == service)
        .unwrap_or_else(|| panic!("no Service {service}"));
    let service_port = list(&service["spec"]["ports"])
        .iter()
        .find(|p| match port {
            Value::String(wanted) => text(&p["name"]) == wanted,
            _ => &p["port"] == port,
        })
        .unwrap_or_else(|| panic!("Service {} has no port {port}", name(service)));
    let target = service_port
        .get("targetPort")
        .unwrap_or(&service_port["port"]);
    let selected: Vec<&Pod> = pods
        .iter()
        .filter(|pod| selects(&service["spec"]["selector"], pod.labels))
        .collect();
    assert_eq!(
        selected.len(),
        1,
        "Service {} selects {} workloads",
        name(service),
        selected.len()
    );
    let pod = selected[0];
    let container_port = pod.container_port(target).unwrap_or_else(|| {
        panic!(
            "Service {} port {port}: target {target} is no port of {}",
            name(service),
            pod.title()
        )
    });
    (pod, container_port)
}

/// `http://host:port` addresses in a TOML value, as (host, port).
fn addresses(value: &toml::Value, found: &mut Vec<(String, u16)>) {
    match value {
        toml::Value::String(s) => {
            if let Some(rest) = s
                .strip_prefix("http://")
                .or_else(|| s.strip_prefix("https://"))
            {
                let authority = rest.split('/').next().unwrap();
                if let Some((host, port)) = authority.rsplit_once(':') {
                    found.push((host.to_string(), port.parse().unwrap()));
                }
            }
        }
        toml::Value::Array(items) => items.iter().for_each(|v| addresses(v, found)),
        toml::Value::Table(table) => table.values().for_each(|v| addresses(v, found)),
        _ => {}
    }
}

/// A host name of a Service in `namespace`, short or qualified, as its Service's name.
fn service_name<'h>(host: &'h str, namespace: &str) -> &'h str {
    for suffix in [
        format!(".{namespace}.svc.cluster.local"),
        format!(".{namespace}.svc"),
        format!(".{namespace}"),
    ] {
        if let Some(short) = host.strip_suffix(&suffix) {
            return short;
        }
    }
    host
}

fn check_overlay<'a>(overlay: &str, objects: &'a [Value], dev: &'a [Value]) -> Vec<Deployed<'a>> {
    let cargo_binaries = cargo_binaries();
    let pods = pods(objects);
    assert!(!pods.is_empty(), "{overlay}: no workloads");

    // Each workload's own port, from its arguments.
    let ports: Vec<u16> = pods.iter().map(Pod::listen_port).collect();

    let mut deployed = Vec::new();
    for (pod, &port) in pods.iter().zip(&ports) {
        let title = format!("{overlay}: {}", pod.title());

        // The image: a Dockerfile of ours whose entrypoint runs a binary cargo builds.
        let reference = text(&pod.container["image"]);
        let image = image(reference);
        assert!(
            pod.container.get("command").is_none(),
            "{title}: `command` would replace the image's entrypoint (and tini)"
        );
        let at = image
            .entrypoint
            .iter()
            .position(|word| {
                cargo_binaries.contains(word.rsplit('/').next().unwrap_or_default())
            })
            .unwrap_or_else(|| {
                panic!(
                    "{title}: {}'s ENTRYPOINT {:?} runs none of cargo's binaries {cargo_binaries:?}",
                    image.file.display(),
                    image.entrypoint
                )
            });
        let binary_name = image.entrypoint[at].rsplit('/').next().unwrap().to_string();
        assert!(
            image.source.contains(&format!("--bin {binary_name}"))
                && image.source.contains(&format!("/out/{binary_name}")),
            "{title}: {} does not build and copy {binary_name}",
            image.file.display()
        );
        built_binary(&binary_name);
        // runAsNonRoot needs a numeric user to check, and the volumes' fsGroup the same one.
        let user: u64 = image
            .user
            .split(':')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| {
                panic!(
                    "{}: USER {:?} is not numeric",
                    image.file.display(),
                    image.user
                )
            });
        assert_ne!(user, 0, "{}: runs as root", image.file.display());
        assert_eq!(
            pod.run_as_user(),
            Some(user),
            "{title}: runAsUser is not the image's user"
        );

        // The one container port, every probe and any scrape annotation: the listen port.
        let container_ports: Vec<u64> = list(&pod.container["ports"])
            .iter()
            .filter_map(|p| p["containerPort"].as_u64())
            .collect();
        assert_eq!(
            container_ports,
            vec![u64::from(port)],
            "{title}: container ports vs --listen"
        );
        let mut health = BTreeSet::new();
        for probe in PROBES {
            let grpc = &pod.container[probe]["grpc"];
            assert!(grpc.is_object(), "{title}: no gRPC {probe}");
            assert_eq!(
                grpc["port"].as_u64(),
                Some(u64::from(port)),
                "{title}: {probe}'s port vs --listen"
            );
            health.insert(text(&grpc["service"]).to_string());
        }
        if let Some(scraped) = pod.annotations.get("prometheus.io/port") {
            assert_eq!(
                text(scraped),
                port.to_string(),
                "{title}: prometheus.io/port"
            );
            assert_eq!(text(&pod.annotations["prometheus.io/path"]), "/metrics");
        }

        // Every Service in front of it lands on that port.
        let services = services_of(objects, pod);
        assert!(!services.is_empty(), "{title}: no Service selects it");
        for service in services {
            for service_port in list(&service["spec"]["ports"]) {
                let (_, lands) = behind(objects, &pods, name(service), &service_port["port"]);
                assert_eq!(lands, port, "{title}: Service {}", name(service));
            }
        }

        // What the config file names: Services that lead to a listening port, and state on
        // the pod's volumes.
        let config = pod
            .flag("--config")
            .unwrap_or_else(|| panic!("{title}: no --config"));
        let config_text = mounted_file(objects, dev, pod, &config)
            .unwrap_or_else(|| panic!("{title}: nothing mounted at {config}"));
        let config_toml: toml::Table =
            toml::from_str(&config_text).unwrap_or_else(|e| panic!("{title}: {config}: {e}"));
        let mut found = Vec::new();
        addresses(&toml::Value::Table(config_toml.clone()), &mut found);
        for (host, service_port) in found {
            let service = service_name(&host, &pod.namespace);
            let (target, lands) = behind(objects, &pods, service, &Value::from(service_port));
            assert_eq!(
                lands,
                target.listen_port(),
                "{title}: {config} names {host}:{service_port}, which does not lead to {}'s port",
                target.title()
            );
        }
        for (section, key) in [("controller", "data_dir"), ("worker", "profiles_root")] {
            if let Some(path) = config_toml.get(section).and_then(|s| s.get(key)) {
                let path = path.as_str().unwrap();
                assert!(
                    pod.on_claim(path),
                    "{title}: {section}.{key} = {path} is on no PersistentVolumeClaim"
                );
            }
        }
        if let Some(data) = pod.flag("--data") {
            assert!(
                pod.on_claim(&data),
                "{title}: --data {data} is on no volume claim"
            );
        }
        if let Some(worker) = config_toml.get("worker") {
            // The worker adds --no-sandbox only as root, and the pod never runs as root: a
            // --no-sandbox here would drop Chromium's sandbox for nothing.
            let chromium_args = worker.get("chromium_args").map(|a| a.to_string());
            assert!(
                !chromium_args.unwrap_or_default().contains("no-sandbox"),
                "{title}: worker.chromium_args drops Chromium's sandbox"
            );
            // The worker's drain ends before the kubelet's SIGKILL, with room to spare.
            let drain_ms = worker
                .get("drain_timeout_ms")
                .and_then(toml::Value::as_integer)
                .map_or(
                    nanomuse_worker::WorkerConfig::default().drain_timeout_ms,
                    |ms| ms as u64,
                );
            let grace = pod.spec["terminationGracePeriodSeconds"]
                .as_u64()
                .unwrap_or(30);
            assert!(
                drain_ms + 10_000 <= grace * 1000,
                "{title}: worker.drain_timeout_ms = {drain_ms} leaves under 10 s of the pod's \
                 {grace} s grace period"
            );
            let chromium = worker["chromium"].as_str().unwrap();
            assert!(
                chromium == "/usr/bin/chromium" && image.source.contains(" chromium "),
                "{title}: worker.chromium = {chromium}, which {} does not install",
                image.file.display()
            );
        }

        // The seccomp profile a pod names is the one in deploy/k8s/seccomp/, and it lets
        // Chromium's sandbox make its namespaces.
        let seccomp = &pod.spec["securityContext"]["seccompProfile"];
        if text(&seccomp["type"]) == "Localhost" {
            let file = text(&seccomp["localhostProfile"])
                .rsplit('/')
                .next()
                .unwrap();
            let path = repo().join("deploy/k8s/seccomp").join(file);
            let profile: Value = serde_json::from_str(
                &std::fs::read_to_string(&path)
                    .unwrap_or_else(|_| panic!("{title}: no {}", path.display())),
            )
            .unwrap();
            assert_eq!(text(&profile["defaultAction"]), "SCMP_ACT_ALLOW");
            for rule in list(&profile["syscalls"]) {
                for call in ["clone", "clone3", "unshare"] {
                    assert!(
                        !list(&rule["names"]).iter().any(|n| n == call),
                        "{}: refuses {call}, which Chromium's sandbox needs",
                        path.display()
                    );
                }
            }
        }

        deployed.push(Deployed {
            binary: binary_name,
            entrypoint_args: image.entrypoint[at + 1..].to_vec(),
            health,
            pod: pod.clone(),
        });
    }

    // Ingresses: each backend is a Service port; a gRPC one routes to a health-served service.
    for ingress in of_kind(objects, "Ingress") {
        let grpc = text(
            &ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/backend-protocol"],
        ) == "GRPC";
        for rule in list(&ingress["spec"]["rules"]) {
            for path in list(&rule["http"]["paths"]) {
                let backend = &path["backend"]["service"];
                let port = backend["port"]
                    .get("name")
                    .or_else(|| backend["port"].get("number"))
                    .unwrap();
                let (pod, _) = behind(objects, &pods, text(&backend["name"]), port);
                if grpc {
                    let service = text(&path["path"]).trim_matches('/').to_string();
                    let target = deployed
                        .iter_mut()
                        .find(|d| name(d.pod.workload) == name(pod.workload))
                        .unwrap();
                    target.health.insert(service);
                }
            }
        }
    }

    // NetworkPolicies: a rule that admits traffic to a pod admits it on the pod's port; a rule
    // that lets a pod out to other pods of ours lets it out to their ports.
    for policy in of_kind(objects, "NetworkPolicy") {
        let selected: Vec<usize> = (0..pods.len())
            .filter(|&i| selects(&policy["spec"]["podSelector"], pods[i].labels))
            .collect();
        for rule in list(&policy["spec"]["ingress"]) {
            let allowed: Vec<u64> = list(&rule["ports"])
                .iter()
                .filter_map(|p| p["port"].as_u64())
                .collect();
            for &i in &selected {
                assert!(
                    allowed.is_empty() || allowed.contains(&u64::from(ports[i])),
                    "{overlay}: NetworkPolicy {} lets traffic into {} on {allowed:?}, not its port {}",
                    name(policy),
                    pods[i].title(),
                    ports[i]
                );
            }
        }
        for rule in list(&policy["spec"]["egress"]) {
            let allowed: Vec<u64> = list(&rule["ports"])
                .iter()
                .filter_map(|p| p["port"].as_u64())
                .collect();
            for peer in list(&rule["to"]) {
                if peer.get("namespaceSelector").is_some() || peer.get("ipBlock").is_some() {
                    continue;
                }
                for (i, pod) in pods.iter().enumerate() {
                    if selects(&peer["podSelector"], pod.labels) {
                        assert!(
                            allowed.contains(&u64::from(ports[i])),
                            "{overlay}: NetworkPolicy {} lets pods out to {} on {allowed:?}, not its port {}",
                            name(policy),
                            pod.title(),
                            ports[i]
                        );
                    }
                }
            }
        }
    }

    // The other names: what HPAs and PDBs point at exists.
    for hpa in of_kind(objects, "HorizontalPodAutoscaler") {
        let target = &hpa["spec"]["scaleTargetRef"];
        assert!(
            pods.iter()
                .any(|p| kind(p.workload) == text(&target["kind"])
                    && name(p.workload) == text(&target["name"])),
            "{overlay}: HPA {} scales a workload that is not here",
            name(hpa)
        );
    }
    for pdb in of_kind(objects, "PodDisruptionBudget") {
        assert!(
            pods.iter()
                .any(|p| selects(&pdb["spec"]["selector"], p.labels)),
            "{overlay}: PodDisruptionBudget {} selects no pod",
            name(pdb)
        );
    }
    deployed
}

// ---------------------------------------------------------------------------------------------
// Metric names.

/// The adapter rules in an overlay's ConfigMaps (prometheus-adapter's config.yaml).
fn adapter_rules(objects: &[Value]) -> Vec<Value> {
    of_kind(objects, "ConfigMap")
        .filter_map(|c| c["data"].get("config.yaml"))
        .map(|config| {
            serde_norway::from_str::<Value>(text(config)).expect("adapter config is YAML")
        })
        .flat_map(|config| {
            ["rules", "externalRules"]
                .iter()
                .flat_map(|key| list(&config[*key]).to_vec())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The Prometheus series the manifests of every overlay rely on: those the autoscaling's
/// adapter rules query. The services must export each of them for the workers' HPA to work;
/// the check of that against what they serve on /metrics starts from this set.
fn metric_names_in_manifests() -> BTreeSet<String> {
    OVERLAYS
        .iter()
        .flat_map(|overlay| series_in(&rendered(overlay)))
        .collect()
}

/// The `nanomuse_*` series the adapter rules in one overlay's objects query.
fn series_in(objects: &[Value]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for rule in adapter_rules(objects) {
        for query in [&rule["seriesQuery"], &rule["metricsQuery"]] {
            let query = text(query);
            let mut word = String::new();
            for c in query.chars().chain(std::iter::once(' ')) {
                if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                    word.push(c);
                } else {
                    if word.starts_with("nanomuse_") {
                        names.insert(word.clone());
                    }
                    word.clear();
                }
            }
        }
    }
    names
}

/// Every metric an HPA asks the metrics APIs for is one an adapter rule of the same overlay
/// serves, and the series those rules read are gauges of ours (summed as they are, without
/// rate(), a counter would only grow).
fn check_metrics(overlay: &str, objects: &[Value]) {
    let served: BTreeSet<String> = adapter_rules(objects)
        .iter()
        .map(|rule| text(&rule["name"]["as"]).to_string())
        .collect();
    for hpa in of_kind(objects, "HorizontalPodAutoscaler") {
        for metric in list(&hpa["spec"]["metrics"]) {
            let wanted = match text(&metric["type"]) {
                "External" => &metric["external"]["metric"]["name"],
                "Pods" => &metric["pods"]["metric"]["name"],
                "Object" => &metric["object"]["metric"]["name"],
                _ => continue,
            };
            assert!(
                served.contains(text(wanted)),
                "{overlay}: HPA {} asks for {wanted}, which no adapter rule here serves ({served:?})",
                name(hpa)
            );
        }
    }
    let series = series_in(objects);
    if of_kind(objects, "HorizontalPodAutoscaler").next().is_some() {
        assert!(
            !series.is_empty(),
            "{overlay}: an HPA, and no series behind it"
        );
    }
    for name in series {
        assert!(
            !["_total", "_bucket", "_sum", "_count"]
                .iter()
                .any(|suffix| name.ends_with(suffix)),
            "{overlay}: adapter rules read {name}, a counter or histogram, as a gauge"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Running the binaries as the manifests say.

/// `$(NAME)` replaced as Kubernetes does, with the variables defined before.
fn expand(value: &str, variables: &[(String, String)]) -> String {
    let mut value = value.to_string();
    for (name, replacement) in variables {
        value = value.replace(&format!("$({name})"), replacement);
    }
    value
}

/// `value` with every path under a mount point moved to the mount's local folder, in one pass
/// (a local folder may itself lie under a mount point's name, /tmp say). A mount point counts
/// only as a whole path: at the start of a word, and followed by `/` or the word's end.
fn relocate(value: &str, mounts: &[(String, PathBuf)]) -> String {
    let in_path = |c: char| c.is_ascii_alphanumeric() || "._-/".contains(c);
    let mut out = String::new();
    let mut rest = value;
    let mut previous: Option<char> = None;
    'scan: while let Some(c) = rest.chars().next() {
        if !previous.is_some_and(in_path) {
            for (at, local) in mounts {
                if let Some(after) = rest.strip_prefix(at.as_str())
                    && after.chars().next().is_none_or(|n| n == '/' || !in_path(n))
                {
                    out.push_str(local.to_str().unwrap());
                    previous = at.chars().last();
                    rest = after;
                    continue 'scan;
                }
            }
        }
        out.push(c);
        previous = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

struct Started {
    title: String,
    child: tokio::process::Child,
    port: u16,
    log: PathBuf,
    grace: u64,
}

impl Started {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// Starts every container of `deployed` at once on loopback: each on a free port, Service
/// addresses pointing at those ports, the mounted ConfigMaps and Secrets written to a
/// temporary folder and every mounted path moved there.
fn start_all(objects: &[Value], dev: &[Value], deployed: &[Deployed], root: &Path) -> Vec<Started> {
    let all_pods = pods(objects);
    let free: Vec<u16> = deployed.iter().map(|_| free_address().port()).collect();
    let port_of = |pod: &Pod| {
        deployed
            .iter()
            .position(|d| name(d.pod.workload) == name(pod.workload))
            .map(|i| free[i])
            .unwrap()
    };
    // "name:port", "name.ns:port", … of every Service port → 127.0.0.1:<its pod's port>.
    let mut addresses: Vec<(String, String)> = Vec::new();
    for service in of_kind(objects, "Service") {
        let namespace = text(&service["metadata"]["namespace"]);
        for port in list(&service["spec"]["ports"]) {
            let (pod, _) = behind(objects, &all_pods, name(service), &port["port"]);
            let local = format!("127.0.0.1:{}", port_of(pod));
            let number = &port["port"];
            for host in [
                format!("{}.{namespace}.svc.cluster.local", name(service)),
                format!("{}.{namespace}.svc", name(service)),
                format!("{}.{namespace}", name(service)),
                name(service).to_string(),
            ] {
                addresses.push((format!("{host}:{number}"), local.clone()));
            }
        }
    }

    let mut started = Vec::new();
    for (d, &port) in deployed.iter().zip(&free) {
        let pod = &d.pod;
        let title = pod.title();
        let dir = root.join(name(pod.workload));
        // Mounts, longest path first, so /a/b wins over /a.
        let mut mounts: Vec<(String, PathBuf)> = Vec::new();
        for mount in list(&pod.container["volumeMounts"]) {
            let at = text(&mount["mountPath"]).to_string();
            let local = dir.join(text(&mount["name"]));
            std::fs::create_dir_all(&local).unwrap();
            mounts.push((at, local));
        }
        mounts.sort_by_key(|(at, _)| std::cmp::Reverse(at.len()));
        let localize = |value: &str| {
            let mut value = value.to_string();
            for (from, to) in &addresses {
                value = value.replace(from, to);
            }
            relocate(&value, &mounts)
        };
        // The ConfigMaps' and Secrets' files.
        for mount in list(&pod.container["volumeMounts"]) {
            let Some(volume) = pod.volume(mount) else {
                continue;
            };
            let local = dir.join(text(&mount["name"]));
            let keys: Vec<(String, String)> = if let Some(map) = volume.get("configMap") {
                let config_map = of_kind(objects, "ConfigMap")
                    .find(|c| name(c) == text(&map["name"]))
                    .unwrap_or_else(|| panic!("{title}: no ConfigMap {}", map["name"]));
                config_map["data"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), text(v).to_string()))
                    .collect()
            } else if let Some(secret) = volume.get("secret") {
                secret_data(objects, dev, text(&secret["secretName"]))
                    .into_iter()
                    .collect()
            } else {
                Vec::new()
            };
            let source = volume.get("configMap").or_else(|| volume.get("secret"));
            for (key, content) in keys {
                let items = source.map(|s| list(&s["items"])).unwrap_or_default();
                let file = if items.is_empty() {
                    Some(key.clone())
                } else {
                    items
                        .iter()
                        .find(|item| text(&item["key"]) == key)
                        .map(|item| text(&item["path"]).to_string())
                };
                if let Some(file) = file {
                    std::fs::write(local.join(file), localize(&content)).unwrap();
                }
            }
        }

        // The environment, as the kubelet makes it (the pod's IP is loopback here).
        let mut variables: Vec<(String, String)> = Vec::new();
        for var in list(&pod.container["env"]) {
            let var_name = text(&var["name"]).to_string();
            let value = if let Some(value) = var.get("value") {
                expand(text(value), &variables)
            } else if let Some(field) = var["valueFrom"].get("fieldRef") {
                match text(&field["fieldPath"]) {
                    "status.podIP" => "127.0.0.1".to_string(),
                    "metadata.name" => pod.name.clone(),
                    "metadata.namespace" => pod.namespace.clone(),
                    other => panic!("{title}: fieldRef {other} is not read by this test"),
                }
            } else if let Some(key) = var["valueFrom"].get("secretKeyRef") {
                secret_data(objects, dev, text(&key["name"]))
                    .remove(text(&key["key"]))
                    .unwrap_or_else(|| panic!("{title}: the Secret has no key {}", key["key"]))
            } else {
                panic!("{title}: env {var_name}: a source this test does not read");
            };
            variables.push((var_name, value));
        }
        let mut args: Vec<String> = d.entrypoint_args.clone();
        let container_args: Vec<String> = pod
            .args()
            .iter()
            .map(|a| localize(&expand(a, &variables)))
            .collect();
        let mut after_listen = false;
        for arg in container_args {
            if after_listen {
                args.push(format!("127.0.0.1:{port}"));
                after_listen = false;
            } else if arg == "--listen" {
                args.push(arg);
                after_listen = true;
            } else if arg.starts_with("--listen=") {
                args.push(format!("--listen=127.0.0.1:{port}"));
            } else {
                args.push(arg);
            }
        }

        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let log = dir.join("log");
        let out = std::fs::File::create(&log).unwrap();
        let mut command = tokio::process::Command::new(built_binary(&d.binary));
        command
            .args(&args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("RUST_LOG", "warn")
            .env("NO_COLOR", "1");
        for (var_name, value) in &variables {
            // The collector is outside this machine; issue 7's exporter reads these.
            if var_name.starts_with("OTEL_") {
                continue;
            }
            command.env(var_name, localize(value));
        }
        command
            .stdin(std::process::Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .kill_on_drop(true);
        let child = command.spawn().unwrap_or_else(|e| panic!("{title}: {e}"));
        started.push(Started {
            title,
            child,
            port,
            log,
            grace: pod.spec["terminationGracePeriodSeconds"]
                .as_u64()
                .unwrap_or(30),
        });
    }
    started
}

async fn channel(port: u16) -> Option<tonic::transport::Channel> {
    tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await
        .ok()
}

/// Waits until `service`'s health on `port` is SERVING; fails when the process ends first or
/// after 30 s.
async fn until_serving(started: &mut Started, service: &str) {
    use tonic_health::pb::health_check_response::ServingStatus;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut last = String::new();
    loop {
        if let Some(channel) = channel(started.port).await {
            let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
            match health
                .check(tonic_health::pb::HealthCheckRequest {
                    service: service.to_string(),
                })
                .await
            {
                Ok(reply) if reply.get_ref().status == ServingStatus::Serving as i32 => return,
                Ok(reply) => last = format!("status {}", reply.get_ref().status),
                Err(status) => last = status.to_string(),
            }
        }
        if let Some(status) = started.child.try_wait().unwrap() {
            panic!(
                "{} ended ({status}) before its health {service:?} answered SERVING:\n{}",
                started.title,
                started.log()
            );
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{}: health {service:?} not SERVING within 30 s ({last}):\n{}",
            started.title,
            started.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// SIGTERM, as the kubelet sends it; the process must end with 0 within the pod's grace period.
async fn stop(mut started: Started) {
    let pid = started.child.id().expect("still running").to_string();
    let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(sent.success(), "kill -TERM {pid}");
    let status = tokio::time::timeout(Duration::from_secs(started.grace), started.child.wait())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{} did not end within its grace period ({} s) after SIGTERM",
                started.title, started.grace
            )
        })
        .unwrap();
    assert!(
        status.success(),
        "{} ended with {status} after SIGTERM:\n{}",
        started.title,
        started.log()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn manifests_match_the_binaries() {
    let dev = rendered("dev");
    for overlay in OVERLAYS {
        let objects = rendered(overlay);
        let deployed = check_overlay(overlay, &objects, &dev);
        check_metrics(overlay, &objects);

        let root = tempfile::tempdir().unwrap();
        let mut started = start_all(&objects, &dev, &deployed, root.path());
        for (d, s) in deployed.iter().zip(started.iter_mut()) {
            for service in &d.health {
                until_serving(s, service).await;
            }
        }

        // The workers registered with the controller their config names, under their pod's
        // name and at the address they listen on.
        let controller = deployed
            .iter()
            .position(|d| d.binary == "controller")
            .expect("a controller");
        for (i, d) in deployed.iter().enumerate() {
            if d.binary != "worker" {
                continue;
            }
            let channel = channel(started[controller].port)
                .await
                .expect("the controller answers");
            let mut registry =
                nanomuse_proto::worker_registry_client::WorkerRegistryClient::new(channel);
            // The registry answers only calls from inside the deployment.
            let hop_secret = secret_data(&objects, &dev, "nanomuse-secrets")
                .remove("hop-secret")
                .expect("the Secret has a hop-secret");
            let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
            loop {
                let mut request = tonic::Request::new(nanomuse_proto::ListWorkersRequest {});
                request.metadata_mut().insert(
                    nanomuse_common::hop::HOP_SECRET_HEADER,
                    hop_secret.trim().parse().unwrap(),
                );
                let workers = registry
                    .list_workers(request)
                    .await
                    .unwrap()
                    .into_inner()
                    .workers;
                let expected = format!("http://127.0.0.1:{}", started[i].port);
                if workers
                    .iter()
                    .any(|w| w.name == d.pod.name && w.address == expected && w.live)
                {
                    break;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{overlay}: {} did not register as {} at {expected}: {workers:?}\n{}",
                    started[i].title,
                    d.pod.name,
                    started[i].log()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }

        for s in started {
            stop(s).await;
        }
    }
    // The workers' autoscaling reads the controller's gauges, and nothing else.
    assert_eq!(
        metric_names_in_manifests(),
        BTreeSet::from(
            [
                "nanomuse_queue_length",
                "nanomuse_worker_busy_slots",
                "nanomuse_worker_capacity_slots"
            ]
            .map(String::from)
        )
    );
}

// ---------------------------------------------------------------------------------------------
// deploy/local against the cluster's config files.

/// `section.key` → value; a table inside a section (token maps) counts as one value.
fn keys(path: &Path) -> BTreeMap<String, toml::Value> {
    let table: toml::Table = toml::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut keys = BTreeMap::new();
    for (section, values) in table {
        for (key, value) in values.as_table().unwrap() {
            keys.insert(format!("{section}.{key}"), value.clone());
        }
    }
    keys
}

#[test]
fn the_local_layout_has_the_clusters_config_files() {
    let local = repo().join("deploy/local");
    let cluster = repo().join("deploy/k8s/base/config");
    // Where the two may differ: names, addresses and paths of the place they run in, and the
    // secrets, which the cluster keeps in a Secret rather than in a ConfigMap.
    let placed = [
        "worker.name",
        "worker.profiles_root",
        "worker.controller",
        "worker.advertise",
        "controller.data_dir",
        "controller.gateways",
        "controller.http_hosts",
    ];
    let secret = ["controller.tokens", "gateway.device_tokens"];
    let pairs = [
        ("controller.toml", "controller.toml"),
        ("worker-1.toml", "worker.toml"),
        ("worker-2.toml", "worker.toml"),
        ("worker-3.toml", "worker.toml"),
        ("device-gateway.toml", "device-gateway.toml"),
    ];
    for (local_file, cluster_file) in pairs {
        let here = keys(&local.join(local_file));
        let there = keys(&cluster.join(cluster_file));
        for (key, value) in &there {
            let mine = here
                .get(key)
                .unwrap_or_else(|| panic!("deploy/local/{local_file} lacks {key}"));
            assert!(
                placed.contains(&key.as_str()) || mine == value,
                "{key}: deploy/local/{local_file} says {mine}, the cluster's {cluster_file} {value}"
            );
        }
        for key in here.keys() {
            assert!(
                there.contains_key(key) || secret.contains(&key.as_str()),
                "deploy/local/{local_file} has {key}, the cluster's {cluster_file} not"
            );
        }
    }
    // And each file reads as its binary reads it.
    for file in [
        local.join("controller.toml"),
        cluster.join("controller.toml"),
    ] {
        nanomuse_controller::Config::load(Some(&file))
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
    for file in [
        local.join("worker-1.toml"),
        local.join("worker-2.toml"),
        local.join("worker-3.toml"),
        cluster.join("worker.toml"),
    ] {
        nanomuse_common::config_section::<nanomuse_worker::WorkerConfig>(Some(&file), "worker")
            .and_then(|c| c.validate())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
    for file in [
        local.join("device-gateway.toml"),
        cluster.join("device-gateway.toml"),
    ] {
        nanomuse_common::config_section::<nanomuse_device_gateway::GatewayConfig>(
            Some(&file),
            "gateway",
        )
        .and_then(|c| c.validate())
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
}

/// deploy/local/run.sh, stopped with SIGTERM even when the test fails half way (its processes
/// are in sessions of their own: a SIGKILL to the script would leave them running).
struct LocalRun {
    child: tokio::process::Child,
}

impl Drop for LocalRun {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_layout_runs_as_five_processes_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = std::fs::File::create(dir.path().join("run.sh.log")).unwrap();
    let mut run = LocalRun {
        child: tokio::process::Command::new(repo().join("deploy/local/run.sh"))
            .arg("--bin-dir")
            .arg(binaries_dir())
            .args(["--base-port", "auto", "--dir"])
            .arg(dir.path().join("run"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("deploy/local/run.sh starts"),
    };
    let log = || std::fs::read_to_string(dir.path().join("run.sh.log")).unwrap_or_default();
    let mut lines = tokio::io::BufReader::new(run.child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(120), lines.next_line())
        .await
        .unwrap_or_else(|_| panic!("run.sh not ready within 120 s:\n{}", log()))
        .unwrap();
    assert_eq!(ready.as_deref(), Some("ready"), "{}", log());

    let run_dir = dir.path().join("run");
    let env = std::fs::read_to_string(run_dir.join("env")).unwrap();
    let server = env
        .lines()
        .find_map(|line| line.strip_prefix("NANOMUSE_SERVER="))
        .unwrap();
    let channel = tonic::transport::Channel::from_shared(server.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let workers = nanomuse_proto::worker_registry_client::WorkerRegistryClient::new(channel)
        .list_workers(nanomuse_proto::ListWorkersRequest {})
        .await
        .unwrap()
        .into_inner()
        .workers;
    for name in ["worker-1", "worker-2", "worker-3"] {
        assert!(
            workers.iter().any(|w| w.name == name && w.live),
            "{name} is not live: {workers:?}"
        );
    }
    let pids: Vec<String> = [
        "controller",
        "worker-1",
        "worker-2",
        "worker-3",
        "device-gateway",
    ]
    .iter()
    .map(|name| {
        std::fs::read_to_string(run_dir.join(format!("{name}.pid")))
            .unwrap()
            .trim()
            .to_string()
    })
    .collect();
    for pid in &pids {
        assert!(
            Path::new(&format!("/proc/{pid}")).exists(),
            "{pid} is not running"
        );
    }

    let pid = run.child.id().unwrap().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    tokio::time::timeout(Duration::from_secs(60), run.child.wait())
        .await
        .unwrap_or_else(|_| panic!("run.sh did not end within 60 s of SIGTERM:\n{}", log()))
        .unwrap();
    for pid in &pids {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "{pid} still runs after run.sh ended:\n{}",
            log()
        );
    }
}
