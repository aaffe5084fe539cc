// The Newmarket protocol (SPEC.md) with nothing but the Java standard library.
//
// A bot reads one JSON object per line on stdin and writes one per line on stdout
// (stderr is its log).  This file holds a small JSON reader (Protocol.parse: objects
// become Map, arrays List, numbers Long) and writer (Protocol.dump), the request
// (Request), and the loop (Protocol.run) that answers "hello", follows "match_start"
// and asks your Bot for each "request".  A bot overrides only the decisions it cares
// about: every other one is answered with the request's "default", always legal.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class Protocol {
    public static final long PROTOCOL = 1;

    private Protocol() {}

    /** What a bot knows of the match it plays: its seat and the rank order. */
    public static final class State {
        public long seat;
        public boolean acesLow; // "rank_order": "aces_low" puts the Ace at the bottom of its suit

        /** A card's place in its suit, 0 (lowest) to 12 (the top card, where runs stop). */
        public int rank(String card) {
            return (acesLow ? "A23456789TJQK" : "23456789TJQKA").indexOf(card.charAt(0));
        }
    }

    /** A "request" (SPEC.md, section 7.4): the fields most bots use, and the whole message. */
    public static final class Request {
        public long id;
        public String decision; // "lead", "stake", "dead_hand" or "bid"
        public List<String> legal = new ArrayList<>();
        public List<String> hand = new ArrayList<>();
        public Object defaultChoice; // always a legal reply
        public Map<String, Object> message;
    }

    /** A bot: each decision's answer, the request's own default unless it says otherwise. */
    public abstract static class Bot {
        public abstract String name();

        public String version() {
            return "1.0";
        }

        public Object lead(Request request, State state) {
            return request.defaultChoice;
        }

        public Object stake(Request request, State state) {
            return request.defaultChoice;
        }

        public Object deadHand(Request request, State state) {
            return request.defaultChoice;
        }

        public Object bid(Request request, State state) {
            return request.defaultChoice;
        }

        public void onMatchStart(Map<String, Object> message, State state) {}

        public void onEvents(Map<String, Object> message, State state) {}
    }

    // ------------------------------------------------------------ JSON

    /** One line of JSON: Map, List, String, Long, Boolean or null. */
    public static Object parse(String text) {
        Parser parser = new Parser(text);
        Object value = parser.value();
        parser.space();
        if (parser.at != text.length()) throw parser.error("text after the value");
        return value;
    }

    private static final class Parser {
        final String s;
        int at = 0;

        Parser(String s) {
            this.s = s;
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException("JSON: " + what + " at character " + at);
        }

        void space() {
            while (at < s.length() && " \t\r\n".indexOf(s.charAt(at)) >= 0) at++;
        }

        char peek() {
            if (at >= s.length()) throw error("unexpected end");
            return s.charAt(at);
        }

        Object value() {
            space();
            char c = peek();
            if (c == '{') {
                at++;
                Map<String, Object> fields = new LinkedHashMap<>();
                space();
                if (peek() == '}') {
                    at++;
                    return fields;
                }
                while (true) {
                    space();
                    if (peek() != '"') throw error("expected a key");
                    String key = string();
                    space();
                    if (peek() != ':') throw error("expected ':'");
                    at++;
                    fields.put(key, value());
                    space();
                    char next = peek();
                    at++;
                    if (next == '}') return fields;
                    if (next != ',') throw error("expected ',' or '}'");
                }
            }
            if (c == '[') {
                at++;
                List<Object> items = new ArrayList<>();
                space();
                if (peek() == ']') {
                    at++;
                    return items;
                }
                while (true) {
                    items.add(value());
                    space();
                    char next = peek();
                    at++;
                    if (next == ']') return items;
                    if (next != ',') throw error("expected ',' or ']'");
                }
            }
            if (c == '"') return string();
            if (s.startsWith("true", at)) {
                at += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("false", at)) {
                at += 5;
                return Boolean.FALSE;
            }
            if (s.startsWith("null", at)) {
                at += 4;
                return null;
            }
            int start = at;
            if (c == '-') at++;
            while (at < s.length() && Character.isDigit(s.charAt(at))) at++;
            if (at == start) throw error("unexpected character");
            long number = Long.parseLong(s.substring(start, at));
            // The protocol's numbers are integers: a fraction or an exponent is read and dropped.
            while (at < s.length() && ".eE+-0123456789".indexOf(s.charAt(at)) >= 0) at++;
            return number;
        }

        String string() {
            at++; // the opening quote
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = peek();
                at++;
                if (c == '"') return out.toString();
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = peek();
                at++;
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        if (at + 4 > s.length()) throw error("short \\u escape");
                        out.append((char) Integer.parseInt(s.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> out.append(e); // \" \\ \/
                }
            }
        }
    }

    /** ``value`` as one line of JSON (Map, List, String, Number, Boolean or null). */
    public static String dump(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String text) {
            quote(text, out);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!first) out.append(',');
                first = false;
                quote(String.valueOf(entry.getKey()), out);
                out.append(':');
                write(entry.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) out.append(',');
                write(list.get(i), out);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write " + value.getClass() + " as JSON");
        }
    }

    private static void quote(String text, StringBuilder out) {
        out.append('"');
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
            }
        }
        out.append('"');
    }

    // ------------------------------------------------------------ the loop

    @SuppressWarnings("unchecked")
    private static List<String> strings(Object value) {
        List<String> out = new ArrayList<>();
        if (value instanceof List<?> list) for (Object item : list) out.add(String.valueOf(item));
        return out;
    }

    private static long number(Object value) {
        return value instanceof Number n ? n.longValue() : 0;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object value) {
        return value instanceof Map<?, ?> ? (Map<String, Object>) value : new LinkedHashMap<>();
    }

    /** Play on stdin and stdout until "shutdown" or the end of input; the exit status. */
    public static int run(Bot bot) throws IOException {
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        State state = new State();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            Map<String, Object> message;
            try {
                message = object(parse(line));
            } catch (IllegalArgumentException error) {
                System.err.println(bot.name() + ": skipped a line that is not JSON: " + error.getMessage());
                continue;
            }
            String type = String.valueOf(message.get("type"));
            switch (type) {
                case "hello" -> {
                    if (number(message.get("protocol")) != PROTOCOL) {
                        System.err.println(bot.name() + ": the referee speaks protocol "
                                + message.get("protocol") + ", this bot " + PROTOCOL);
                        return 2;
                    }
                    Map<String, Object> ready = new LinkedHashMap<>();
                    ready.put("type", "ready");
                    ready.put("name", bot.name());
                    ready.put("version", bot.version());
                    ready.put("protocol", PROTOCOL);
                    String token = System.getenv("NEWMARKET_TOKEN");
                    if (token != null) ready.put("token", token);
                    send(out, ready);
                }
                case "match_start" -> {
                    state.seat = number(message.get("seat"));
                    state.acesLow = "aces_low".equals(object(message.get("rules")).get("rank_order"));
                    bot.onMatchStart(message, state);
                }
                case "events" -> bot.onEvents(message, state);
                case "request" -> {
                    Request request = new Request();
                    request.id = number(message.get("id"));
                    request.decision = String.valueOf(message.get("decision"));
                    request.legal = strings(message.get("legal"));
                    request.hand = strings(message.get("hand"));
                    request.defaultChoice = message.get("default");
                    request.message = message;
                    Object choice;
                    try {
                        choice = switch (request.decision) {
                            case "lead" -> bot.lead(request, state);
                            case "stake" -> bot.stake(request, state);
                            case "dead_hand" -> bot.deadHand(request, state);
                            case "bid" -> bot.bid(request, state);
                            default -> request.defaultChoice; // a later protocol version's
                        };
                    } catch (RuntimeException error) {
                        System.err.println(bot.name() + ": could not decide (" + error + "); the default");
                        choice = request.defaultChoice;
                    }
                    Map<String, Object> reply = new LinkedHashMap<>();
                    reply.put("type", "reply");
                    reply.put("id", request.id);
                    reply.put("choice", choice);
                    send(out, reply);
                }
                case "fault" -> System.err.println(
                        bot.name() + ": fault " + message.get("kind") + ": " + message.get("detail"));
                case "shutdown" -> {
                    return 0;
                }
                default -> {} // "match_end", and message types of a later protocol version
            }
        }
        return 0; // the referee is gone
    }

    private static void send(PrintStream out, Object message) {
        out.print(dump(message) + "\n");
        out.flush(); // a line the referee waits for: flushed
    }
}
