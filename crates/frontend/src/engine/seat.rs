//! The engine's seat at a game: the player built from a spec, kept between moves, and one
//! guarded call of its search. Shared by `camelot engine` (one seat per session) and
//! `camelot serve` (one seat per game in the browser).

use camelot_arena::{derive_seed, Choice, ModelStore, Player, PlayerSpec, StopFlag};
use camelot_rules::{Game, Ruleset};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// A player built from a spec, rebuilt only when the spec changes.
#[derive(Default)]
pub struct EngineSeat {
    /// The last player built and the spec it was built from: reused while the spec is the same,
    /// so that a player keeps its hash table or tree between moves of one game.
    player: Option<(PlayerSpec, Box<dyn Player>)>,
    /// Players built since the last [`EngineSeat::clear`], one stream of the players' seeds.
    builds: u64,
    /// Given to every player built here, so that another thread can end its searches.
    stop: Option<StopFlag>,
}

impl EngineSeat {
    /// An empty seat: the first [`EngineSeat::prepare`] builds the player.
    pub fn new() -> EngineSeat {
        EngineSeat::default()
    }

    /// Makes every search of the players of this seat end soon after `stop` is set.
    pub fn set_stop_flag(&mut self, stop: StopFlag) {
        self.stop = Some(stop);
    }

    /// Drops the player; the next one is built afresh with the build count back at 0.
    pub fn clear(&mut self) {
        self.player = None;
        self.builds = 0;
    }

    /// Drops the player but keeps counting builds (a player that failed may be in any state).
    pub fn forget(&mut self) {
        self.player = None;
    }

    /// Players built since the last [`EngineSeat::clear`].
    #[cfg(test)]
    pub fn builds(&self) -> u64 {
        self.builds
    }

    /// Whether a player is kept.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.player.is_none()
    }

    /// Builds the player for `spec` unless the one kept was built from it; its random stream is
    /// `derive_seed(seed, game, builds)`. Fails, naming the spec, for `human` and for a player
    /// that cannot be built (a missing model, a model of another variant).
    pub fn prepare(
        &mut self,
        spec: &PlayerSpec,
        rules: &Arc<Ruleset>,
        models: &ModelStore,
        seed: u64,
        game: u64,
    ) -> Result<&mut dyn Player, String> {
        if spec.is_human() {
            return Err("`human` cannot play as the engine: the front end seats people".to_string());
        }
        let kept = matches!(&self.player, Some((built, _)) if built == spec);
        if !kept {
            let rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, game, self.builds));
            self.builds += 1;
            let mut player = spec.build_with(rules, rng, models).map_err(|e| format!("player `{spec}`: {e}"))?;
            if let Some(stop) = &self.stop {
                player.set_stop_flag(stop.clone());
            }
            self.player = Some((spec.clone(), player));
        }
        match &mut self.player {
            Some((_, player)) => Ok(player.as_mut()),
            None => Err("no player".to_string()),
        }
    }

    /// The move `spec`'s player chooses in `game`, which must not be over. A player that fails
    /// or panics inside its search, or chooses a move that is not legal (a player's bug, not
    /// the front end's), is an error that says so, and the next call builds a fresh player.
    pub fn choose(
        &mut self,
        spec: &PlayerSpec,
        game: &Game,
        models: &ModelStore,
        seed: u64,
        game_index: u64,
    ) -> Result<Choice, String> {
        let rules = Arc::clone(game.rules());
        let chosen = self.prepare(spec, &rules, models, seed, game_index).and_then(|player| {
            match catch_unwind(AssertUnwindSafe(|| player.choose(game))) {
                Ok(Ok(choice)) => Ok(choice),
                Ok(Err(err)) => Err(format!("player `{spec}`: {err}")),
                Err(_) => Err(format!("player `{spec}` failed inside its search")),
            }
        });
        match chosen {
            Ok(choice) if game.legal_moves().contains(&choice.mv) => Ok(choice),
            Ok(choice) => {
                self.forget();
                let text = rules.move_to_string(game.position(), &choice.mv);
                Err(format!("player `{spec}` chose `{text}`, which is not legal here"))
            }
            Err(message) => {
                self.forget();
                Err(message)
            }
        }
    }
}
