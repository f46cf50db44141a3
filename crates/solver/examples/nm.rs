#[path = "../tests/common/mod.rs"]
mod common;
fn main() {
    let rules = camelot_rules::Ruleset::variant("camette").unwrap();
    let cpn = std::env::args().nth(1).unwrap();
    let p = rules.parse_cpn(&cpn).unwrap();
    for d in [7, 8, 9, 10, 11] {
        let mut n = common::Negamax::new(&rules);
        println!("depth {d}: {:?}", n.value(&p, d));
    }
}
