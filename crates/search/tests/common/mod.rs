//! Test games and helpers shared by the integration tests.
#![allow(dead_code)]

pub mod chain_nim;
pub mod tictactoe;
