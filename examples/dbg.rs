use replayground::{format, scenarios};
use replayground::sim::explore::Explorer;
use replayground::sim::scheduler::RoundRobin;
fn main() {
    let id = std::env::args().nth(1).unwrap();
    let params: serde_json::Value = std::env::args().nth(2).map(|p| serde_json::from_str(&p).unwrap()).unwrap_or(serde_json::Value::Null);
    let source = scenarios::BUILTIN_FILES.iter().find(|(n, _)| *n == id).unwrap().1;
    let file = format::parse(source, &id).unwrap();
    let ex = Explorer::new(file.build(&params).unwrap()).unwrap();
    let r = ex.run(&mut RoundRobin, true).unwrap();
    for s in r.trace.iter().flatten() {
        println!("{}: {} | {:?} | {}", s.label, s.report.name, s.report.progress, s.report.note);
    }
    println!("{:?}\n{:#?}", r.statuses, r.checks);
}
