//! Player spec strings: what is accepted, what it means, and errors that name the key at fault.

use camelot_arena::{AlphaBetaConfig, ArenaError, MctsConfig, PlayerSpec, SpecError, UctConfig};
use camelot_rules::Ruleset;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

fn parse(text: &str) -> PlayerSpec {
    PlayerSpec::parse(text).unwrap_or_else(|e| panic!("`{text}` should parse: {e}"))
}

fn error(text: &str) -> String {
    match PlayerSpec::parse(text) {
        Ok(spec) => panic!("`{text}` should be refused, got {spec:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn good_specs_parse_to_their_settings() {
    assert_eq!(parse("random"), PlayerSpec::Random);
    assert_eq!(parse(" greedy "), PlayerSpec::Greedy);
    assert_eq!(parse("human"), PlayerSpec::Human);
    assert_eq!(
        parse("alphabeta:depth=3"),
        PlayerSpec::AlphaBeta(AlphaBetaConfig { depth: Some(3), ms: None, ..AlphaBetaConfig::default() })
    );
    assert_eq!(
        parse("alphabeta:ms=200"),
        PlayerSpec::AlphaBeta(AlphaBetaConfig { depth: None, ms: Some(200), ..AlphaBetaConfig::default() })
    );
    assert_eq!(
        parse("alphabeta:depth=5, ms=1000,tt=20"),
        PlayerSpec::AlphaBeta(AlphaBetaConfig { depth: Some(5), ms: Some(1000), tt_bits: 20 })
    );
    // No limits: the default depth.
    assert_eq!(parse("alphabeta"), PlayerSpec::AlphaBeta(AlphaBetaConfig::default()));
    assert_eq!(parse("uct:sims=1000"), PlayerSpec::Uct(UctConfig { sims: 1000, ..UctConfig::default() }));
    assert_eq!(parse("uct:sims=50,cap=10,c=0.5"), PlayerSpec::Uct(UctConfig { sims: 50, ms: None, cap: 10, c: 0.5 }));
    assert_eq!(
        parse("mcts:model=runs/quick/latest,sims=400"),
        PlayerSpec::Mcts(MctsConfig { model: "runs/quick/latest".to_string(), sims: 400, ..MctsConfig::default() })
    );
    assert_eq!(
        parse(
            "mcts:model=m,sims=50,gumbel,mirror,forced,reuse,m=8,cscale=0.3,cpuct=2.5,ptemp=1.6,temperature=0.5,ms=100,cache=0,batch=2,material=0.3,mscale=2.5,draw=0.25,moves_left=0.2,precision=int8,device=cuda:1"
        ),
        PlayerSpec::Mcts(MctsConfig {
            model: "m".to_string(),
            sims: 50,
            gumbel: Some(true),
            mirror: Some(true),
            forced: Some(true),
            reuse: Some(true),
            gumbel_m: 8,
            gumbel_c_scale: 0.3,
            c_puct: 2.5,
            policy_temperature: Some(1.6),
            temperature: 0.5,
            ms: Some(100),
            cache: 0,
            batch: 2,
            material: Some(0.3),
            material_scale: Some(2.5),
            moves_left: Some(0.2),
            draw_penalty: Some(0.25),
            precision: camelot_net::Precision::Int8,
            device: "cuda:1".to_string(),
        })
    );
    // Left out, the root rule is the model's (its card's); given, it overrides the card.
    let PlayerSpec::Mcts(as_trained) = parse("mcts:model=m,ms=100") else { panic!("an mcts spec") };
    assert_eq!(as_trained.gumbel, None);
    let PlayerSpec::Mcts(puct) = parse("mcts:model=m,ms=100,gumbel=no") else { panic!("an mcts spec") };
    assert_eq!(puct.gumbel, Some(false));
    assert_eq!(parse("mcts:model=m,gumbel=yes"), parse("mcts:model=m,gumbel"));
    // The mirror average likewise: the card's unless given.
    let PlayerSpec::Mcts(plain) = parse("mcts:model=m,mirror=no") else { panic!("an mcts spec") };
    assert_eq!((as_trained.mirror, plain.mirror), (None, Some(false)));
    assert_eq!(parse("mcts:model=m,mirror=yes"), parse("mcts:model=m,mirror"));
    assert!(error("mcts:model=m,mirror=sometimes").contains("mirror"));
    // Forced pass-through likewise: the card's unless given.
    let PlayerSpec::Mcts(unforced) = parse("mcts:model=m,forced=no") else { panic!("an mcts spec") };
    assert_eq!((as_trained.forced, unforced.forced), (None, Some(false)));
    assert_eq!(parse("mcts:model=m,forced=yes"), parse("mcts:model=m,forced"));
    assert!(error("mcts:model=m,forced=often").contains("forced"));
    // Tree reuse: the default (off) unless given; not on any card.
    let PlayerSpec::Mcts(fresh) = parse("mcts:model=m,reuse=no") else { panic!("an mcts spec") };
    assert_eq!((as_trained.reuse, fresh.reuse), (None, Some(false)));
    assert!(!as_trained.reuse_in_effect() && !fresh.reuse_in_effect());
    let PlayerSpec::Mcts(kept) = parse("mcts:model=m,reuse") else { panic!("an mcts spec") };
    assert!(kept.reuse_in_effect());
    assert!(error("mcts:model=m,reuse=sometimes").contains("reuse"));
}

#[test]
fn specs_print_back_in_canonical_form() {
    for text in [
        "random",
        "greedy",
        "human",
        "alphabeta:depth=3",
        "alphabeta:ms=200",
        "alphabeta:depth=4,ms=50,tt=16",
        "uct:sims=1000",
        "uct:ms=100",
        "uct:sims=10,cap=5,c=2",
        "mcts:model=m.safetensors,sims=200",
        "mcts:model=runs/x/models/000017,sims=400,gumbel,temperature=1,ms=50",
        "mcts:model=m,ms=100",
        "mcts:model=m,sims=32,material=0.25",
        "mcts:model=m,sims=16,gumbel,material=0.4,draw=0.3",
        "mcts:model=m,sims=64,draw=0.1,moves_left=0.3",
        "mcts:model=m,sims=200,material=0.5,mscale=2",
        "mcts:model=models/000002,sims=8,gumbel,m=8,batch=1",
        "mcts:model=m,sims=200,gumbel=no",
        "mcts:model=m,sims=200,gumbel,m=12,cscale=0.5",
        "mcts:model=m,sims=200,cpuct=2.5",
        "mcts:model=m,sims=200,gumbel,ptemp=1.6",
        "mcts:model=m,sims=200,cpuct=2,ptemp=0.5,temperature=1",
        "mcts:model=m,sims=200,gumbel,mirror",
        "mcts:model=m,sims=200,mirror=no",
        "mcts:model=m,sims=200,gumbel,forced",
        "mcts:model=m,sims=200,gumbel,forced,reuse",
        "mcts:model=m,sims=200,reuse=no",
    ] {
        assert_eq!(parse(text).to_string(), text);
        assert_eq!(parse(&parse(text).to_string()), parse(text));
    }
    assert_eq!(parse("alphabeta").to_string(), "alphabeta:depth=3");
    assert_eq!(parse("mcts:model=x").to_string(), "mcts:model=x,sims=200");
}

#[test]
fn bad_specs_name_the_player_or_key_at_fault() {
    assert_eq!(PlayerSpec::parse("minimax:depth=3"), Err(SpecError::UnknownPlayer("minimax".to_string())));
    assert!(error("minimax").contains("known players: random, greedy, alphabeta, uct, human, mcts"));
    assert_eq!(PlayerSpec::parse(""), Err(SpecError::Empty));

    let e = error("alphabeta:depht=3");
    assert!(e.contains("`depht`") && e.contains("depth, ms, tt"), "{e}");
    let e = error("alphabeta:depth=0");
    assert!(e.contains("depth=0") && e.contains("1 to 64"), "{e}");
    let e = error("alphabeta:depth=three");
    assert!(e.contains("depth=three"), "{e}");
    let e = error("alphabeta:ms=-5");
    assert!(e.contains("ms=-5"), "{e}");
    let e = error("alphabeta:depth");
    assert!(e.contains("`depth`") && e.contains("key=value"), "{e}");
    let e = error("alphabeta:depth=2,depth=3");
    assert!(e.contains("`depth`") && e.contains("twice"), "{e}");

    let e = error("mcts:model=m,draw=1");
    assert!(e.contains("draw=1") && e.contains("below 1"), "{e}");

    let e = error("uct:simulations=10");
    assert!(e.contains("`simulations`") && e.contains("sims, ms, cap, c"), "{e}");
    let e = error("uct:c=nan");
    assert!(e.contains("c=nan"), "{e}");
    let e = error("uct:sims=0");
    assert!(e.contains("sims=0"), "{e}");

    let e = error("random:depth=2");
    assert!(e.contains("`random`") && e.contains("`depth`"), "{e}");
    let e = error("greedy:x=1");
    assert!(e.contains("`x`"), "{e}");

    let e = error("mcts:sims=200");
    assert!(e.contains("`model`"), "{e}");
    let e = error("mcts:model=a,temp=1");
    assert!(e.contains("`temp`") && e.contains("gumbel, temperature"), "{e}");
    let e = error("mcts:model=a,gumbel=maybe");
    assert!(e.contains("gumbel=maybe"), "{e}");
    let e = error("mcts:model=a,temperature=-1");
    assert!(e.contains("temperature=-1"), "{e}");
    for bad in ["ptemp=0.05", "ptemp=11", "ptemp=nan", "ptemp=hot"] {
        let e = error(&format!("mcts:model=a,{bad}"));
        assert!(e.contains(bad) && e.contains("`ptemp` must be a policy temperature from 0.1 to 10"), "{e}");
    }
    for bad in ["material=1.5", "material=-0.1", "material=nan", "material=much"] {
        let e = error(&format!("mcts:model=a,{bad}"));
        assert!(e.contains(bad) && e.contains("`material` must be a weight from 0 to 1"), "{e}");
    }
    // A setting given is kept, 0 included: it overrides what the model card says the network
    // was trained with; one not given is not printed (the card's, or 0, applies).
    assert_eq!(parse("mcts:model=a,material=0").to_string(), "mcts:model=a,sims=200,material=0");
    assert_eq!(parse("mcts:model=a").to_string(), "mcts:model=a,sims=200");
    let e = error("uct:gumbel");
    assert!(e.contains("key=value"), "{e}");
}

#[test]
fn building_refuses_human_and_missing_checkpoints() {
    let rules = Arc::new(Ruleset::variant("camelot").expect("camelot exists"));
    let rng = || ChaCha8Rng::seed_from_u64(1);
    for text in ["random", "greedy", "alphabeta:depth=2", "uct:sims=10"] {
        let player = parse(text).build(&rules, rng()).expect("builds");
        assert_eq!(player.name(), text);
    }
    assert!(matches!(parse("human").build(&rules, rng()), Err(ArenaError::HumanNeedsTerminal)));
    match parse("mcts:model=/nonexistent/latest,sims=200").build(&rules, rng()) {
        Err(e @ ArenaError::Model { .. }) => assert!(e.to_string().contains("/nonexistent"), "{e}"),
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("no checkpoint there"),
    }
    match parse("mcts:model=/nonexistent/000003,sims=200").build(&rules, rng()) {
        Err(e @ ArenaError::Model { .. }) => assert!(e.to_string().contains("000003"), "{e}"),
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("no checkpoint there"),
    }
}
