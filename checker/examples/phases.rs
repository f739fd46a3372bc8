//! Where the checker's time goes, phase by phase, on one snapshot:
//! `cargo run --release --example phases -- PODS.json EVENTS.json [PHASE] [REPS] [WORKLOADS.json]`.
//! With PHASE (read, report, workloads, events, render), only that phase is
//! repeated (workloads only with WORKLOADS.json: report.jq then computes
//! `active_owners` too, as the checker does when it reads the workloads),
//! so `perf stat -e instructions:u` of two runs tells its cost on a busy machine.
use checker::engine::Engine;
use checker::reader::Projection;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let only = args.get(3).map_or("all", String::as_str);
    let reps: u32 = args
        .get(4)
        .map_or(3, |s| s.parse().expect("REPS is a number"));
    let engine = Engine::new().expect("programs compile");
    let projection = Projection::canonical();
    let read = |path: &str, shape| {
        let file = std::fs::File::open(path).expect("readable file");
        // A snapshot is its documents (one List, or the pages of a list).
        checker::snapshot::read_documents(file, path, shape).expect("valid JSON")
    };
    let times = |phase: &str| {
        if only == "all" || only == phase {
            reps
        } else {
            1
        }
    };
    let started = Instant::now();
    let mut pods = None;
    for _ in 0..times("read") {
        pods = Some(read(&args[1], &projection.pods));
    }
    eprintln!("read pods {:?}", started.elapsed() / times("read"));
    let events = read(&args[2], &projection.events);
    let workloads = args.get(5).map(|path| read(path, &projection.workloads));
    let excluded = checker::engine::Excluded {
        workloads: workloads.is_some(),
        ..Default::default()
    };
    let started = Instant::now();
    let mut report = None;
    for _ in 0..times("report") {
        report = Some(engine.report(pods.clone().unwrap(), &excluded).unwrap());
    }
    eprintln!("report {:?}", started.elapsed() / times("report"));
    let mut report = report.unwrap();
    if let Some(workloads) = workloads {
        let started = Instant::now();
        let mut with_missing = None;
        for _ in 0..times("workloads") {
            with_missing = Some(
                engine
                    .workloads(&report, workloads.clone(), &excluded)
                    .unwrap(),
            );
        }
        eprintln!("workloads {:?}", started.elapsed() / times("workloads"));
        report = with_missing.unwrap();
    }
    let started = Instant::now();
    let mut matched = None;
    for _ in 0..times("events") {
        matched = Some(engine.events(events.clone(), &report).unwrap());
    }
    eprintln!("events {:?}", started.elapsed() / times("events"));
    let result = engine.result(&report, 1, 0, matched).unwrap();
    let started = Instant::now();
    for _ in 0..times("render") {
        engine
            .render(&result, checker::contract::LIST_LIMIT.default)
            .unwrap();
    }
    eprintln!("render {:?}", started.elapsed() / times("render"));
}
