//! Development aid, the same as `camelot solve --table FILE --sample-positions N --seed S
//! --out-positions OUT` without building the binary: `sample FILE N S OUT`.
use camelot_rules::Ruleset;
use camelot_solver::{read_table, sample_positions, write_positions};
use std::path::Path;
use std::sync::Arc;
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, table, n, seed, out] = &args[..] else { return Err("usage: sample FILE N SEED OUT".into()) };
    let rules = Arc::new(Ruleset::variant("camette")?);
    let table = read_table(&rules, Path::new(table))?;
    let records = sample_positions(&table, &rules, n.parse()?, seed.parse()?)?;
    write_positions(&records, Path::new(out), false)?;
    println!("{} positions", records.len());
    Ok(())
}
