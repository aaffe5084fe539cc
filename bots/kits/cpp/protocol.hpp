// The Newmarket protocol (SPEC.md) in one C++17 header, with nothing but the standard library.
//
// A bot reads one JSON object per line on stdin and writes one per line on stdout
// (stderr is its log).  This header holds a small JSON value (Json), its reader
// (parse) and writer (dump), the request as a struct (Request), and the loop
// (run) that answers "hello", follows "match_start" and calls your Bot for each
// "request".  A bot overrides only the decisions it cares about: every other one
// is answered with the request's "default", which is always legal.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace newmarket {

constexpr int PROTOCOL = 1;

// ---------------------------------------------------------------- JSON

struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool boolean = false;
    std::int64_t number = 0;  // the protocol's numbers are integers (SPEC.md, section 4)
    std::string text;
    std::vector<Json> items;
    std::map<std::string, Json> fields;

    // The field `key` of an object, or a null value when it is absent.
    const Json& operator[](const std::string& key) const {
        static const Json none;
        auto found = fields.find(key);
        return found == fields.end() ? none : found->second;
    }
    bool has(const std::string& key) const { return fields.count(key) > 0; }
    std::vector<std::string> strings() const {
        std::vector<std::string> out;
        for (const Json& item : items) out.push_back(item.text);
        return out;
    }
};

class Parser {
  public:
    explicit Parser(const std::string& line) : s_(line) {}

    Json document() {
        Json value = parse_value();
        skip_space();
        if (i_ != s_.size()) fail("text after the value");
        return value;
    }

  private:
    const std::string& s_;
    std::size_t i_ = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("JSON: " + what + " at byte " + std::to_string(i_));
    }
    void skip_space() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n'))
            i_++;
    }
    bool take(const char* word) {
        std::string w(word);
        if (s_.compare(i_, w.size(), w) != 0) return false;
        i_ += w.size();
        return true;
    }
    Json parse_value() {
        skip_space();
        if (i_ >= s_.size()) fail("unexpected end");
        Json value;
        char c = s_[i_];
        if (c == '{') {
            value.kind = Json::Object;
            i_++;
            skip_space();
            if (i_ < s_.size() && s_[i_] == '}') { i_++; return value; }
            while (true) {
                skip_space();
                if (i_ >= s_.size() || s_[i_] != '"') fail("expected a key");
                std::string key = parse_string();
                skip_space();
                if (i_ >= s_.size() || s_[i_++] != ':') fail("expected ':'");
                value.fields[key] = parse_value();
                skip_space();
                if (i_ < s_.size() && s_[i_] == ',') { i_++; continue; }
                if (i_ < s_.size() && s_[i_] == '}') { i_++; return value; }
                fail("expected ',' or '}'");
            }
        }
        if (c == '[') {
            value.kind = Json::Array;
            i_++;
            skip_space();
            if (i_ < s_.size() && s_[i_] == ']') { i_++; return value; }
            while (true) {
                value.items.push_back(parse_value());
                skip_space();
                if (i_ < s_.size() && s_[i_] == ',') { i_++; continue; }
                if (i_ < s_.size() && s_[i_] == ']') { i_++; return value; }
                fail("expected ',' or ']'");
            }
        }
        if (c == '"') {
            value.kind = Json::String;
            value.text = parse_string();
            return value;
        }
        if (take("true")) { value.kind = Json::Bool; value.boolean = true; return value; }
        if (take("false")) { value.kind = Json::Bool; return value; }
        if (take("null")) return value;
        // A number: the protocol's are integers; a fraction or exponent is read and dropped.
        std::size_t start = i_;
        if (s_[i_] == '-') i_++;
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) i_++;
        if (i_ == start) fail("unexpected character");
        value.kind = Json::Number;
        value.number = std::strtoll(s_.c_str() + start, nullptr, 10);
        while (i_ < s_.size() && std::string(".eE+-0123456789").find(s_[i_]) != std::string::npos) i_++;
        return value;
    }
    std::string parse_string() {
        std::string out;
        i_++;  // the opening quote
        while (i_ < s_.size() && s_[i_] != '"') {
            char c = s_[i_++];
            if (c != '\\') { out += c; continue; }
            if (i_ >= s_.size()) fail("unfinished escape");
            char e = s_[i_++];
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {
                    if (i_ + 4 > s_.size()) fail("short \\u escape");
                    unsigned code = std::stoul(s_.substr(i_, 4), nullptr, 16);
                    i_ += 4;
                    if (code >= 0xD800 && code < 0xDC00 && s_.compare(i_, 2, "\\u") == 0) {
                        unsigned low = std::stoul(s_.substr(i_ + 2, 4), nullptr, 16);
                        i_ += 6;
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    }
                    append_utf8(out, code);
                    break;
                }
                default: out += e;  // \" \\ \/
            }
        }
        if (i_ >= s_.size()) fail("unfinished string");
        i_++;  // the closing quote
        return out;
    }
    static void append_utf8(std::string& out, unsigned code) {
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (code >> 18));
            out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
    }
};

inline Json parse(const std::string& line) { return Parser(line).document(); }

inline std::string quote(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buffer[8];
                    std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
                    out += buffer;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

inline std::string dump(const Json& value) {
    switch (value.kind) {
        case Json::Null: return "null";
        case Json::Bool: return value.boolean ? "true" : "false";
        case Json::Number: return std::to_string(value.number);
        case Json::String: return quote(value.text);
        case Json::Array: {
            std::string out = "[";
            for (std::size_t i = 0; i < value.items.size(); i++) out += (i ? "," : "") + dump(value.items[i]);
            return out + "]";
        }
        case Json::Object: {
            std::string out = "{";
            bool first = true;
            for (const auto& [key, field] : value.fields) {
                out += (first ? "" : ",") + quote(key) + ":" + dump(field);
                first = false;
            }
            return out + "}";
        }
    }
    return "null";
}

inline Json string_value(const std::string& text) {
    Json value;
    value.kind = Json::String;
    value.text = text;
    return value;
}

// ---------------------------------------------------------------- the protocol

// What a bot knows of the match it plays: its seat and the rank order.
struct State {
    int seat = 0;
    bool aces_low = false;  // "rank_order": "aces_low" puts the Ace at the bottom of its suit

    // A card's place in its suit, 0 (lowest) to 12 (the top card, where runs stop).
    int rank(const std::string& card) const {
        const std::string order = aces_low ? "A23456789TJQK" : "23456789TJQKA";
        return static_cast<int>(order.find(card[0]));
    }
};

// A "request" (SPEC.md, section 7.4): the fields most bots use, and the whole message.
struct Request {
    std::int64_t id = 0;
    std::string decision;  // "lead", "stake", "dead_hand" or "bid"
    std::vector<std::string> legal;
    std::vector<std::string> hand;
    Json default_choice;  // always a legal reply
    Json message;
};

class Bot {
  public:
    virtual ~Bot() = default;
    virtual std::string name() const = 0;
    virtual std::string version() const { return "1.0"; }
    // Each decision's answer; the default is the request's own "default".
    virtual Json lead(const Request& request, const State&) { return request.default_choice; }
    virtual Json stake(const Request& request, const State&) { return request.default_choice; }
    virtual Json dead_hand(const Request& request, const State&) { return request.default_choice; }
    virtual Json bid(const Request& request, const State&) { return request.default_choice; }
    virtual void on_match_start(const Json&, const State&) {}
    virtual void on_events(const Json&, const State&) {}
};

inline void send(const Json& message) {
    std::cout << dump(message) << '\n' << std::flush;  // a line the referee waits for: flushed
}

inline Json decide(Bot& bot, const Request& request, const State& state) {
    if (request.decision == "lead") return bot.lead(request, state);
    if (request.decision == "stake") return bot.stake(request, state);
    if (request.decision == "dead_hand") return bot.dead_hand(request, state);
    if (request.decision == "bid") return bot.bid(request, state);
    return request.default_choice;  // a decision of a later protocol version
}

// Play on stdin and stdout until "shutdown" (exit status 0) or the end of input.
inline int run(Bot& bot) {
    std::ios::sync_with_stdio(false);
    State state;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        Json message;
        try {
            message = parse(line);
        } catch (const std::exception& error) {
            std::cerr << bot.name() << ": skipped a line that is not JSON: " << error.what() << '\n';
            continue;
        }
        const std::string type = message["type"].text;
        if (type == "hello") {
            if (message["protocol"].number != PROTOCOL) {
                std::cerr << bot.name() << ": the referee speaks protocol "
                          << message["protocol"].number << ", this bot " << PROTOCOL << '\n';
                return 2;
            }
            Json ready;
            ready.kind = Json::Object;
            ready.fields["type"] = string_value("ready");
            ready.fields["name"] = string_value(bot.name());
            ready.fields["version"] = string_value(bot.version());
            Json protocol;
            protocol.kind = Json::Number;
            protocol.number = PROTOCOL;
            ready.fields["protocol"] = protocol;
            if (const char* token = std::getenv("NEWMARKET_TOKEN"))
                ready.fields["token"] = string_value(token);
            send(ready);
        } else if (type == "match_start") {
            state.seat = static_cast<int>(message["seat"].number);
            state.aces_low = message["rules"]["rank_order"].text == "aces_low";
            bot.on_match_start(message, state);
        } else if (type == "events") {
            bot.on_events(message, state);
        } else if (type == "request") {
            Request request;
            request.id = message["id"].number;
            request.decision = message["decision"].text;
            request.legal = message["legal"].strings();
            request.hand = message["hand"].strings();
            request.default_choice = message["default"];
            request.message = std::move(message);  // (a copy cost as much as the parse)
            Json choice;
            try {
                choice = decide(bot, request, state);
            } catch (const std::exception& error) {
                std::cerr << bot.name() << ": could not decide (" << error.what() << "); the default\n";
                choice = request.default_choice;
            }
            Json reply;
            reply.kind = Json::Object;
            reply.fields["type"] = string_value("reply");
            reply.fields["id"] = request.message["id"];
            reply.fields["choice"] = choice;
            send(reply);
        } else if (type == "fault") {
            std::cerr << bot.name() << ": fault " << message["kind"].text << ": "
                      << message["detail"].text << '\n';
        } else if (type == "shutdown") {
            return 0;
        }
        // "match_end", and message types of a later protocol version: nothing to do.
    }
    return 0;  // the referee is gone
}

}  // namespace newmarket
