//! A 200 MB job log streams through `verify-pods triage` in bounded memory.
//!
//! The log is generated into a temp dir: many blocks of ordinary CI output
//! (each with a passing status line), one 8 MB line without a newline, and
//! the seed's race signature at the very end. The peak resident memory of
//! the triage process, as the kernel reports it (ru_maxrss, read by python3),
//! must stay far below the size of the log: reading the log whole, or
//! keeping a finding per status line, or a whole giant line, would show.
//!
//! Debug builds are ~20x slower: the test runs under `cargo test --release`
//! (as `make test` does) and is ignored otherwise.

use assert_cmd::cargo::cargo_bin;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::Command;

const LOG_BYTES: u64 = 200 * 1024 * 1024;
const GIANT_LINE: usize = 8 * 1024 * 1024;
/// Peak RSS allowed, in KiB: a small fraction of the 200 MB log.
const MAX_RSS_KIB: u64 = 48 * 1024;

/// One block of CI output: timestamps, colours, a passing status line.
fn block(n: u64) -> Vec<String> {
    let ts = format!("2026-05-28T10:{:02}:{:02}.1234567Z", n / 60 % 60, n % 60);
    let mut lines = vec![
        format!("{ts} ##[group]Run ./kwok/scripts/deploy-bundle.sh bundle-{n}"),
        format!("{ts} \x1b[0;32m[INFO]\x1b[0m Deploying bundle {n} onto the KWOK cluster"),
    ];
    for i in 0..20 {
        lines.push(format!(
            "{ts} deployment.apps/worker-{n}-{i} created (replicas=3, image=registry.k8s.io/pause:3.9)"
        ));
    }
    lines.push(format!(
        "{ts} \x1b[0;32m[INFO]\x1b[0m Pod status: 60 total, 60 running, 0 pending (0 unscheduled), 0 failed"
    ));
    lines.push(format!(
        "{ts} \x1b[0;32m[INFO]\x1b[0m All 60 pods are scheduled"
    ));
    lines
}

const SEED_TAIL: [&str; 5] = [
    "##[group]Run ./kwok/scripts/validate-scheduling.sh",
    "[INFO] Pod status: 20 total, 20 running, 0 pending (1 unscheduled), 0 failed",
    "[ERROR] Unscheduled pods:",
    "No resources found",
    "kube-system   2m   Warning   FailedScheduling   pod/coredns-x   0/3 nodes are available",
];

#[test]
#[cfg_attr(debug_assertions, ignore = "200 MB: run with cargo test --release")]
fn a_200_mb_log_streams_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.log");
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&path).unwrap());
    let (mut written, mut lines, mut blocks) = (0u64, 0u64, 0u64);
    while written < LOG_BYTES {
        for line in block(blocks) {
            out.write_all(line.as_bytes()).unwrap();
            out.write_all(b"\n").unwrap();
            written += line.len() as u64 + 1;
            lines += 1;
        }
        blocks += 1;
        if blocks == 1000 {
            out.write_all(&vec![b'x'; GIANT_LINE]).unwrap();
            out.write_all(b"\n").unwrap();
            written += GIANT_LINE as u64 + 1;
            lines += 1;
        }
    }
    let race_line = lines + 2;
    for line in SEED_TAIL {
        out.write_all(line.as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
        lines += 1;
    }
    out.flush().unwrap();
    drop(out);
    assert!(std::fs::metadata(&path).unwrap().len() >= LOG_BYTES);

    let report = dir.path().join("report.json");
    let measure = "import resource, subprocess, sys\n\
                   with open(sys.argv[1], 'wb') as out:\n\
                   \x20   code = subprocess.run(sys.argv[2:], stdout=out).returncode\n\
                   print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)";
    let measured = Command::new("python3")
        .args(["-c", measure])
        .arg(&report)
        .arg(cargo_bin("verify-pods"))
        .args(["triage", "--format", "json"])
        .arg(&path)
        .output()
        .expect("python3 runs (make tools installs it)");
    let stdout = String::from_utf8(measured.stdout).unwrap();
    let [code, max_rss_kib]: [u64; 2] = stdout
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap_or_else(|_| panic!("python3 printed {stdout:?}"));

    let doc: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let log = &doc["logs"][0];
    assert_eq!(code, 1, "{log}");
    assert_eq!(log["verdict"], "race-signature");
    assert_eq!(log["lines"], lines);
    assert_eq!(log["status_lines"], blocks + 1);
    let race: Vec<&Value> = log["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "race-signature")
        .collect();
    assert_eq!(race.len(), 1);
    assert_eq!(race[0]["line"], race_line);
    assert_eq!(race[0]["contradicted_at"], race_line + 2);
    assert_eq!(race[0]["red_herring"]["lines"], json!([race_line + 3]));
    assert!(
        log["findings_omitted"].as_u64().unwrap() >= blocks - 200,
        "passing status lines beyond the kept ones are only counted"
    );
    assert!(
        max_rss_kib < MAX_RSS_KIB,
        "peak RSS {max_rss_kib} KiB for a {} MiB log",
        LOG_BYTES >> 20
    );
}
