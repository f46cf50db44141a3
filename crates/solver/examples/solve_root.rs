//! Development aid: solve from a CPN root (default: the start) and print figures.
use camelot_rules::{Position, Ruleset};
use camelot_solver::{probe, solve, Progress};
struct Log(std::time::Instant, u64);
impl Progress for Log {
    fn phase(&mut self, n: &str, t: u64) {
        self.1 = t;
        eprintln!("{:?} phase {n} ({t})", self.0.elapsed());
    }
    fn set(&mut self, d: u64) {
        if d % (1 << 23) < 65536 {
            eprintln!("{:?}   {d}/{}", self.0.elapsed(), self.1);
        }
    }
    fn done(&mut self, m: &str) {
        eprintln!("{:?} done: {m}", self.0.elapsed());
    }
}
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rules = Ruleset::variant("camette")?;
    let root = match std::env::args().nth(1) {
        Some(cpn) => rules.parse_cpn(&cpn)?,
        None => Position::start(&rules),
    };
    let t = std::time::Instant::now();
    let (table, stats) = solve(&rules, &[root], &mut Log(std::time::Instant::now(), 0))?;
    println!("{stats:?} in {:?}", t.elapsed());
    if let Ok(out) = std::env::var("OUT") {
        camelot_solver::write_table(&table, std::path::Path::new(&out), false)?;
    }
    let p = probe(&table, &rules, &root)?;
    println!("root: {}", p.value);
    for m in &p.moves {
        println!("  {} {}", m.notation, m.value);
    }
    Ok(())
}
