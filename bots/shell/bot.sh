#!/usr/bin/env bash
# A Newmarket bot in bash, written from SPEC.md alone, with no other program.
#
# It reads the referee's lines one at a time and picks fields out with bash
# regular expressions.  That works because the referee writes compact JSON
# with "type" first (SPEC.md section 4 and 7); the other fields are found
# wherever they are, never by their order.  Choices:
#   lead       a card whose next higher card we also hold (a run we keep
#              going ourselves), else the first legal card (the default);
#   stake      every chip on the first boodle card;
#   dead_hand  "exchange" when it is legal, else the default ("keep");
#   bid        1 chip when we have one, else 0.
#
# Transport: stdin/stdout, or TCP when NEWMARKET_CONNECT=host:port is set
# (bash's /dev/tcp), with NEWMARKET_TOKEN copied into "ready".  stderr is the log.
#
# Run it with: bash bots/shell/bot.sh

set -u

NAME="bash-runner"
PROTOCOL=1
ACES_LOW=0

log() { printf 'bash-runner: %s\n' "$*" >&2; }

if [[ -n "${NEWMARKET_CONNECT:-}" ]]; then
    address="$NEWMARKET_CONNECT"
    host="${address%:*}"
    port="${address##*:}"
    host="${host#[}"
    host="${host%]}"
    if ! exec 3<>"/dev/tcp/$host/$port"; then
        log "cannot connect to $address"
        exit 1
    fi
    exec 0<&3 1>&3
fi

send() { printf '%s\n' "$1"; }

# field NAME LINE: the raw JSON value of "NAME" (a string with its quotes, a
# number, or a flat list) into $value; returns 1 if absent.
field() {
    local re="\"$1\":(\"[^\"]*\"|-?[0-9]+|\\[[^]]*\\]|true|false|null)"
    if [[ $2 =~ $re ]]; then
        value="${BASH_REMATCH[1]}"
        return 0
    fi
    value=""
    return 1
}

# next_card CARD: the next higher card of the same suit under the match's rank
# order, into $next ("" after the top card).
next_card() {
    local order="23456789TJQKA" rank="${1:0:1}" suit="${1:1:1}" rest
    ((ACES_LOW)) && order="A23456789TJQK"
    rest="${order#*"$rank"}"
    next=""
    [[ -n $rest ]] && next="${rest:0:1}$suit"
}

ready() {
    local line="{\"type\":\"ready\",\"name\":\"$NAME\",\"protocol\":$PROTOCOL,\"version\":\"1.0\""
    if [[ -n "${NEWMARKET_TOKEN:-}" ]]; then
        local token="${NEWMARKET_TOKEN//\\/\\\\}"
        line+=",\"token\":\"${token//\"/\\\"}\""
    fi
    send "$line}"
}

answer() {
    local line="$1" id decision default choice legal hand card next count=0 total=0 i
    field id "$line" && id="$value"
    field decision "$line" && decision="${value//\"/}"
    field default "$line" && default="$value"
    choice="$default"
    case "$decision" in
    lead)
        field legal "$line" && legal="$value"
        field hand "$line" && hand="$value"
        legal="${legal//[\[\]\"]/}"
        for card in ${legal//,/ }; do
            next_card "$card"
            if [[ -n $next && $hand == *"\"$next\""* ]]; then
                choice="\"$card\""
                break
            fi
        done
        ;;
    stake)
        field stake_total "$line" && total="$value"
        field boodle_cards "$line" && count="${value//[^,]/}" && count="${#count}"
        choice="[$total"
        for ((i = 0; i < count; i++)); do choice+=",0"; done
        choice+="]"
        ;;
    dead_hand)
        field legal "$line" && [[ $value == *'"exchange"'* ]] && choice='"exchange"'
        ;;
    bid)
        field max_bid "$line" && ((value >= 1)) && choice=1
        ;;
    esac
    send "{\"type\":\"reply\",\"id\":$id,\"choice\":$choice}"
}

while IFS= read -r line; do
    line="${line%$'\r'}"
    field type "$line" || continue
    case "$value" in
    '"hello"')
        field protocol "$line"
        if [[ $value != "$PROTOCOL" ]]; then
            log "the referee speaks protocol $value; this bot speaks $PROTOCOL"
            exit 2
        fi
        ready
        ;;
    '"match_start"')
        ACES_LOW=0
        [[ $line == *'"rank_order":"aces_low"'* ]] && ACES_LOW=1
        ;;
    '"request"') answer "$line" ;;
    '"fault"') log "fault: $line" ;;
    '"shutdown"') exit 0 ;;
    esac
done
exit 0
