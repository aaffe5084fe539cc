//! The tutorial bot of docs/writing-a-bot.md in Rust: it leads its lowest card.
//!
//! Build: cargo build --release --offline     Check: newmarket check -- target/release/my-rust-bot
//! Upload Cargo.toml, Cargo.lock and src/ (a zip or tar.gz) with the runtime "rust".

mod protocol;

use protocol::{Bot, Json, Request, State};

struct MyBot;

impl Bot for MyBot {
    fn name(&self) -> String {
        "my-rust-bot".to_string()
    }

    fn lead(&mut self, request: &Request, state: &State) -> Json {
        // request.legal: the cards you may lead; state.rank(card): 0 for a suit's lowest.
        match request.legal.iter().min_by_key(|card| state.rank(card)) {
            Some(card) => Json::Str(card.clone()),
            None => request.default.clone(),
        }
    }
}

fn main() {
    std::process::exit(protocol::run(&mut MyBot));
}
