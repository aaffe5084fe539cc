/*
 * A Newmarket bot in one file of C99, with nothing but libc: leads its lowest card.
 *
 * Build:  cc -O2 -o bot bot.c
 * Run:    ./bot          (the referee starts it and talks on stdin/stdout)
 *
 * The protocol (SPEC.md) is one JSON object per line, at most 64 KiB.  The
 * referee says "hello", we answer "ready"; then come any number of matches
 * ("match_start", "events", "request", "fault", "match_end") and finally
 * "shutdown", when we exit with status 0.  Every request lists its legal
 * choices ("legal") and a legal "default", so the bot needs no rules, only a
 * way to read a few fields.  That is the small JSON scanner below: it walks
 * the top level of an object, skipping every value it does not want
 * (strings, numbers, nested objects and arrays), so keys nested deeper (an
 * event's own "type") are never mistaken for the message's.
 *
 * With NEWMARKET_CONNECT=host:port set the bot connects over TCP instead,
 * and puts NEWMARKET_TOKEN (if set) into its "ready".  stderr is our log.
 */
#define _POSIX_C_SOURCE 200112L
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROTOCOL 1
#define NAME "c-lowest"
#define MAX_LINE 65536

/* A piece of the line: [start, end). */
typedef struct {
    const char *start;
    const char *end;
} Span;

static int aces_low = 0; /* "rank_order": "aces_low" in the match's rules */

/* ---------------------------------------------------------------- the JSON scanner */

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* Skip one JSON value starting at p; return the first character after it (NULL if broken). */
static const char *skip_value(const char *p) {
    p = skip_space(p);
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && p[1]) p++;
        return *p == '"' ? p + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (*p) {
            if (*p == '"') {
                p = skip_value(p);
                if (!p) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
            p++;
        }
        return NULL;
    }
    /* a number, true, false or null */
    while (*p && !strchr(",}] \t\r\n", *p)) p++;
    return p;
}

/* Find the value of "key" at the top level of the object in [obj.start, obj.end). */
static int find_key(Span obj, const char *key, Span *value) {
    size_t key_length = strlen(key);
    const char *p = skip_space(obj.start);
    if (*p != '{') return 0;
    p = skip_space(p + 1);
    while (p && p < obj.end && *p == '"') {
        const char *name = p + 1;
        const char *after_name = skip_value(p);
        if (!after_name) return 0;
        int match = (size_t)(after_name - 1 - name) == key_length &&
                    strncmp(name, key, key_length) == 0;
        p = skip_space(after_name);
        if (*p != ':') return 0;
        const char *start = skip_space(p + 1);
        const char *end = skip_value(start);
        if (!end) return 0;
        if (match) {
            value->start = start;
            value->end = end;
            return 1;
        }
        p = skip_space(end);
        if (*p == ',') p = skip_space(p + 1);
    }
    return 0;
}

/* True if the span is the JSON string "text" (our strings never need escapes). */
static int is_string(Span value, const char *text) {
    size_t length = strlen(text);
    return value.end - value.start == (long)length + 2 && value.start[0] == '"' &&
           strncmp(value.start + 1, text, length) == 0;
}

static int get_string(Span obj, const char *key, const char *text) {
    Span value;
    return find_key(obj, key, &value) && is_string(value, text);
}

static long get_int(Span obj, const char *key, long otherwise) {
    Span value;
    if (!find_key(obj, key, &value)) return otherwise;
    return strtol(value.start, NULL, 10);
}

/* Call visit(item) for each element of the array in span; return the number of elements. */
static int each_item(Span array, void (*visit)(Span item, void *data), void *data) {
    const char *p = skip_space(array.start);
    int count = 0;
    if (*p != '[') return 0;
    p = skip_space(p + 1);
    while (p && p < array.end && *p != ']') {
        Span item = {p, skip_value(p)};
        if (!item.end) break;
        if (visit) visit(item, data);
        count++;
        p = skip_space(item.end);
        if (*p == ',') p = skip_space(p + 1);
    }
    return count;
}

/* ---------------------------------------------------------------- the bot's decisions */

static int rank_of(char rank) {
    const char *order = aces_low ? "A23456789TJQK" : "23456789TJQKA";
    const char *at = strchr(order, rank);
    return at ? (int)(at - order) : 99;
}

typedef struct {
    Span best; /* the lowest card seen so far ("XY" with its quotes) */
    int found;
} Lowest;

static void consider_card(Span card, void *data) {
    Lowest *lowest = data;
    if (card.end - card.start != 4 || card.start[0] != '"') return; /* not a card "XY" */
    if (!lowest->found || rank_of(card.start[1]) < rank_of(lowest->best.start[1])) {
        lowest->best = card;
        lowest->found = 1;
    }
}

static void send_line(FILE *out, const char *line) {
    fputs(line, out);
    fputc('\n', out);
    fflush(out);
}

/* Answer one request: reply with our choice, or the referee's own (legal) default. */
static void answer(Span message, FILE *out) {
    static char reply[MAX_LINE + 128];
    long id = get_int(message, "id", 0);
    Span legal, fallback;
    if (!find_key(message, "default", &fallback)) {
        fallback.start = "0";
        fallback.end = fallback.start + 1;
    }
    int length = 0;
    if (get_string(message, "decision", "lead") && find_key(message, "legal", &legal)) {
        /* Lead the lowest card: keep high cards, which stop runs and win the lead back. */
        Lowest lowest = {{NULL, NULL}, 0};
        each_item(legal, consider_card, &lowest);
        if (lowest.found) fallback = lowest.best;
    } else if (get_string(message, "decision", "stake")) {
        /* stake_total chips spread evenly over the boodle cards, extra chips first. */
        Span cards;
        long total = get_int(message, "stake_total", 0);
        int count = find_key(message, "boodle_cards", &cards) ? each_item(cards, NULL, NULL) : 0;
        if (count > 0) {
            length = snprintf(reply, sizeof reply, "{\"type\":\"reply\",\"id\":%ld,\"choice\":[", id);
            for (int i = 0; i < count; i++)
                length += snprintf(reply + length, sizeof reply - length, "%s%ld", i ? "," : "",
                                   total / count + (i < total % count ? 1 : 0));
            snprintf(reply + length, sizeof reply - length, "]}");
            send_line(out, reply);
            return;
        }
    }
    /* dead_hand, bid and anything newer: the default, copied as it came. */
    snprintf(reply, sizeof reply, "{\"type\":\"reply\",\"id\":%ld,\"choice\":%.*s}", id,
             (int)(fallback.end - fallback.start), fallback.start);
    send_line(out, reply);
}

/* Write "ready", with the token if the environment gives one (escaped for JSON). */
static void greet(Span message, FILE *out) {
    static char line[1024];
    const char *token = getenv("NEWMARKET_TOKEN");
    long version = get_int(message, "protocol", -1);
    if (version != PROTOCOL) { /* SPEC.md, "Handshake": say why and exit with status 2 */
        fprintf(stderr, NAME ": the referee speaks protocol %ld, we speak %d\n", version, PROTOCOL);
        exit(2);
    }
    int length = snprintf(line, sizeof line,
                          "{\"type\":\"ready\",\"name\":\"" NAME "\",\"version\":\"1.0\","
                          "\"protocol\":%d",
                          PROTOCOL);
    if (token && *token) {
        length += snprintf(line + length, sizeof line - length, ",\"token\":\"");
        for (; *token && length < (int)sizeof line - 8; token++) {
            if (*token == '"' || *token == '\\') line[length++] = '\\';
            line[length++] = *token;
        }
        line[length++] = '"';
    }
    snprintf(line + length, sizeof line - length, "}");
    send_line(out, line);
}

/* ---------------------------------------------------------------- the loop */

/* Connect to host:port (or [v6]:port); return the socket's descriptor, or -1. */
static int connect_tcp(const char *address) {
    char host[256];
    const char *colon = strrchr(address, ':');
    if (!colon || colon == address || (size_t)(colon - address) >= sizeof host) return -1;
    const char *start = address, *stop = colon;
    if (*start == '[' && stop[-1] == ']') start++, stop--; /* [::1]:9000 */
    memcpy(host, start, (size_t)(stop - start));
    host[stop - start] = '\0';
    struct addrinfo hints, *found, *each;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &found) != 0) return -1;
    int fd = -1;
    for (each = found; each; each = each->ai_next) {
        fd = socket(each->ai_family, each->ai_socktype, each->ai_protocol);
        if (fd >= 0 && connect(fd, each->ai_addr, each->ai_addrlen) == 0) break;
        if (fd >= 0) close(fd);
        fd = -1;
    }
    freeaddrinfo(found);
    return fd;
}

int main(void) {
    static char line[MAX_LINE + 2];
    FILE *in = stdin, *out = stdout;
    const char *address = getenv("NEWMARKET_CONNECT");
    if (address && *address) {
        /* One stream to read and one to write: a stdio FILE must not switch direction. */
        int fd = connect_tcp(address);
        in = fd < 0 ? NULL : fdopen(fd, "r");
        out = fd < 0 ? NULL : fdopen(dup(fd), "w");
        if (!in || !out) {
            fprintf(stderr, NAME ": cannot connect to %s\n", address);
            return 1;
        }
    }
    while (fgets(line, sizeof line, in)) {
        size_t length = strlen(line);
        if (length && line[length - 1] != '\n' && !feof(in)) {
            /* Longer than the protocol allows: skip the rest of it. */
            fprintf(stderr, NAME ": skipped a line longer than %d bytes\n", MAX_LINE);
            int c;
            while ((c = fgetc(in)) != EOF && c != '\n') {
            }
            continue;
        }
        Span message = {line, line + length};
        if (get_string(message, "type", "hello"))
            greet(message, out);
        else if (get_string(message, "type", "match_start")) {
            Span rules;
            aces_low = find_key(message, "rules", &rules) &&
                       get_string(rules, "rank_order", "aces_low");
        } else if (get_string(message, "type", "request"))
            answer(message, out);
        else if (get_string(message, "type", "shutdown"))
            return 0;
        /* events, fault, match_end and unknown messages: nothing to do */
    }
    return 0; /* the referee closed the stream */
}
