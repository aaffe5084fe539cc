//! The Newmarket protocol (SPEC.md) with nothing but the standard library.
//!
//! A bot reads one JSON object per line on stdin and writes one per line on stdout
//! (stderr is its log).  This module holds a small JSON value (`Json`), its reader
//! (`parse`) and writer (`Json::dump`), the request (`Request`), and the loop (`run`)
//! that answers `hello`, follows `match_start` and asks your `Bot` for each
//! `request`.  A bot implements only the decisions it cares about: every other one
//! is answered with the request's `default`, which is always legal.

#![allow(dead_code)] // a kit: not every helper is used by every bot

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};

pub const PROTOCOL: i64 = 1;

// ---------------------------------------------------------------- JSON

#[derive(Clone, Debug, Default, PartialEq)]
pub enum Json {
    #[default]
    Null,
    Bool(bool),
    Number(i64), // the protocol's numbers are integers (SPEC.md, section 4)
    Str(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

static NULL: Json = Json::Null;

impl Json {
    /// The field `key` of an object, or `Null` when it is absent.
    pub fn get(&self, key: &str) -> &Json {
        match self {
            Json::Object(fields) => fields.get(key).unwrap_or(&NULL),
            _ => &NULL,
        }
    }
    pub fn as_str(&self) -> &str {
        match self {
            Json::Str(text) => text,
            _ => "",
        }
    }
    pub fn as_i64(&self) -> i64 {
        match self {
            Json::Number(number) => *number,
            _ => 0,
        }
    }
    pub fn strings(&self) -> Vec<String> {
        match self {
            Json::Array(items) => items.iter().map(|item| item.as_str().to_string()).collect(),
            _ => Vec::new(),
        }
    }
    pub fn dump(&self) -> String {
        let mut out = String::new();
        self.write_to(&mut out);
        out
    }
    fn write_to(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(value) => out.push_str(if *value { "true" } else { "false" }),
            Json::Number(value) => out.push_str(&value.to_string()),
            Json::Str(text) => quote(text, out),
            Json::Array(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    item.write_to(out);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (index, (key, value)) in fields.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    quote(key, out);
                    out.push(':');
                    value.write_to(out);
                }
                out.push('}');
            }
        }
    }
}

fn quote(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// An object from (key, value) pairs: `object(vec![("type", Json::Str("ready".into()))])`.
pub fn object(fields: Vec<(&str, Json)>) -> Json {
    Json::Object(
        fields
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect(),
    )
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// One line of JSON, or what is wrong with it.
pub fn parse(line: &str) -> Result<Json, String> {
    let mut parser = Parser {
        bytes: line.as_bytes(),
        at: 0,
    };
    let value = parser.value()?;
    parser.space();
    if parser.at != parser.bytes.len() {
        return Err(parser.error("text after the value"));
    }
    Ok(value)
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        format!("JSON: {} at byte {}", what, self.at)
    }
    fn space(&mut self) {
        while self.at < self.bytes.len() && b" \t\r\n".contains(&self.bytes[self.at]) {
            self.at += 1;
        }
    }
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }
    fn word(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("unexpected character"))
        }
    }
    fn value(&mut self) -> Result<Json, String> {
        self.space();
        match self.peek() {
            None => Err(self.error("unexpected end")),
            Some(b'{') => {
                self.at += 1;
                let mut fields = BTreeMap::new();
                self.space();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Ok(Json::Object(fields));
                }
                loop {
                    self.space();
                    if self.peek() != Some(b'"') {
                        return Err(self.error("expected a key"));
                    }
                    let key = self.string()?;
                    self.space();
                    if self.peek() != Some(b':') {
                        return Err(self.error("expected ':'"));
                    }
                    self.at += 1;
                    let value = self.value()?;
                    fields.insert(key, value);
                    self.space();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Json::Object(fields));
                        }
                        _ => return Err(self.error("expected ',' or '}'")),
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.space();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    self.space();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Json::Array(items));
                        }
                        _ => return Err(self.error("expected ',' or ']'")),
                    }
                }
            }
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(_) => self.number(),
        }
    }
    fn number(&mut self) -> Result<Json, String> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or("");
        let value = digits
            .parse::<i64>()
            .map_err(|_| self.error("not a number"))?;
        // The protocol's numbers are integers: a fraction or an exponent is read and dropped.
        while matches!(
            self.peek(),
            Some(b'.' | b'e' | b'E' | b'+' | b'-' | b'0'..=b'9')
        ) {
            self.at += 1;
        }
        Ok(Json::Number(value))
    }
    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("short \\u"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("bad \\u"))?;
        self.at += 4;
        u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\u"))
    }
    fn string(&mut self) -> Result<String, String> {
        self.at += 1; // the opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek().ok_or_else(|| self.error("unfinished string"))?;
            self.at += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let escape = self.peek().ok_or_else(|| self.error("unfinished escape"))?;
                    self.at += 1;
                    let simple = match escape {
                        b'n' => Some(b'\n'),
                        b't' => Some(b'\t'),
                        b'r' => Some(b'\r'),
                        b'b' => Some(8),
                        b'f' => Some(12),
                        b'u' => None,
                        other => Some(other), // \" \\ \/
                    };
                    if let Some(byte) = simple {
                        out.push(byte);
                        continue;
                    }
                    let mut code = self.hex4()?;
                    if (0xD800..0xDC00).contains(&code) && self.bytes[self.at..].starts_with(b"\\u")
                    {
                        self.at += 2;
                        let low = self.hex4()?;
                        code =
                            0x10000 + ((code - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF);
                    }
                    let c = char::from_u32(code).unwrap_or('\u{FFFD}');
                    out.extend_from_slice(c.to_string().as_bytes());
                }
                byte => out.push(byte),
            }
        }
        String::from_utf8(out).map_err(|_| self.error("not UTF-8"))
    }
}

// ---------------------------------------------------------------- the protocol

/// What a bot knows of the match it plays: its seat and the rank order.
#[derive(Default)]
pub struct State {
    pub seat: i64,
    pub aces_low: bool, // "rank_order": "aces_low" puts the Ace at the bottom of its suit
}

impl State {
    /// A card's place in its suit, 0 (lowest) to 12 (the top card, where runs stop).
    pub fn rank(&self, card: &str) -> usize {
        let order = if self.aces_low {
            "A23456789TJQK"
        } else {
            "23456789TJQKA"
        };
        order.find(&card[..1]).unwrap_or(0)
    }
}

/// A `request` (SPEC.md, section 7.4): the fields most bots use, and the whole message.
pub struct Request {
    pub id: i64,
    pub decision: String, // "lead", "stake", "dead_hand" or "bid"
    pub legal: Vec<String>,
    pub hand: Vec<String>,
    pub default: Json, // always a legal reply
    pub message: Json,
}

/// A bot: each decision's answer, the request's own `default` unless you say otherwise.
pub trait Bot {
    fn name(&self) -> String;
    fn version(&self) -> String {
        "1.0".to_string()
    }
    fn lead(&mut self, request: &Request, _state: &State) -> Json {
        request.default.clone()
    }
    fn stake(&mut self, request: &Request, _state: &State) -> Json {
        request.default.clone()
    }
    fn dead_hand(&mut self, request: &Request, _state: &State) -> Json {
        request.default.clone()
    }
    fn bid(&mut self, request: &Request, _state: &State) -> Json {
        request.default.clone()
    }
    fn on_match_start(&mut self, _message: &Json, _state: &State) {}
    fn on_events(&mut self, _message: &Json, _state: &State) {}
}

fn send(out: &mut impl Write, message: &Json) {
    // A line the referee waits for: written whole and flushed.
    let _ = writeln!(out, "{}", message.dump());
    let _ = out.flush();
}

/// Play on stdin and stdout until `shutdown` or the end of input; the exit status.
pub fn run(bot: &mut impl Bot) -> i32 {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut state = State::default();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(line) => line,
            Err(_) => break, // not UTF-8, or stdin gone: the referee is gone
        };
        if line.trim().is_empty() {
            continue;
        }
        let message = match parse(&line) {
            Ok(message) => message,
            Err(error) => {
                eprintln!("{}: skipped a line that is not JSON: {}", bot.name(), error);
                continue;
            }
        };
        let kind = message.get("type").as_str().to_string();
        match kind.as_str() {
            "hello" => {
                let protocol = message.get("protocol").as_i64();
                if protocol != PROTOCOL {
                    eprintln!(
                        "{}: the referee speaks protocol {}, this bot {}",
                        bot.name(),
                        protocol,
                        PROTOCOL
                    );
                    return 2;
                }
                let mut ready = vec![
                    ("type", Json::Str("ready".into())),
                    ("name", Json::Str(bot.name())),
                    ("version", Json::Str(bot.version())),
                    ("protocol", Json::Number(PROTOCOL)),
                ];
                if let Ok(token) = std::env::var("NEWMARKET_TOKEN") {
                    ready.push(("token", Json::Str(token)));
                }
                send(&mut out, &object(ready));
            }
            "match_start" => {
                state.seat = message.get("seat").as_i64();
                state.aces_low = message.get("rules").get("rank_order").as_str() == "aces_low";
                bot.on_match_start(&message, &state);
            }
            "events" => bot.on_events(&message, &state),
            "request" => {
                let request = Request {
                    id: message.get("id").as_i64(),
                    decision: message.get("decision").as_str().to_string(),
                    legal: message.get("legal").strings(),
                    hand: message.get("hand").strings(),
                    default: message.get("default").clone(),
                    message, // moved: a copy cost as much as the parse
                };
                let choice = match request.decision.as_str() {
                    "lead" => bot.lead(&request, &state),
                    "stake" => bot.stake(&request, &state),
                    "dead_hand" => bot.dead_hand(&request, &state),
                    "bid" => bot.bid(&request, &state),
                    _ => request.default.clone(), // a decision of a later protocol version
                };
                let reply = object(vec![
                    ("type", Json::Str("reply".into())),
                    ("id", Json::Number(request.id)),
                    ("choice", choice),
                ]);
                send(&mut out, &reply);
            }
            "fault" => eprintln!(
                "{}: fault {}: {}",
                bot.name(),
                message.get("kind").as_str(),
                message.get("detail").as_str()
            ),
            "shutdown" => return 0,
            _ => {} // "match_end", and message types of a later protocol version
        }
    }
    0 // the referee is gone
}
