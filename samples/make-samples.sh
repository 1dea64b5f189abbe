#!/usr/bin/env bash
# Regenerate the sample audio in this directory.
#
#   bash samples/make-samples.sh
#
# Needs espeak-ng, sox (with soxi), ffmpeg and jq:
#   apt-get install -y espeak-ng sox libsox-fmt-all ffmpeg jq
#
# Output is deterministic: fixed voices, speeds, pitches and gaps; sox runs
# with -R (fixed random seed for noise and dither); ffmpeg runs in bitexact
# mode with metadata stripped.
set -euo pipefail

OUT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RATE=16000

for tool in espeak-ng sox soxi ffmpeg jq awk; do
  command -v "$tool" >/dev/null 2>&1 || { echo "missing tool: $tool" >&2; exit 1; }
done

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

SOX=(sox -R -V1)

# ---------------------------------------------------------------------------
# 1. The call: agent (speaker 1) and customer (speaker 2) alternate.
# ---------------------------------------------------------------------------
AGENT_VOICE="en-us"     AGENT_PITCH=35 AGENT_SPEED=190
CUSTOMER_VOICE="en-gb+f3" CUSTOMER_PITCH=65 CUSTOMER_SPEED=180

# role|text
TURNS=(
  "agent|Northwind Bank support, this is Sam. How can I help?"
  "customer|Hi. I've been charged twice on my card for the same purchase."
  "agent|Sorry about that. Can you confirm the last four digits of the card?"
  "customer|Four four one two."
  "agent|Thanks. I see two charges of forty nine ninety nine. One is a duplicate."
  "customer|This is the second time! Nobody fixed it last month. I'm really fed up."
  "agent|I understand, and I apologise. I've issued a refund for the duplicate. It will show in three to five days."
  "customer|Okay. Will it happen again?"
  "agent|I've flagged the merchant, so it shouldn't. Anything else?"
  "customer|No, that's all. Thank you so much for your help."
)
# Silence (ms) after each turn except the last; all within 400-900 ms.
GAPS_MS=(600 450 800 500 700 550 900 650 400)

if (( ${#GAPS_MS[@]} != ${#TURNS[@]} - 1 )); then
  echo "need exactly one gap between each pair of turns" >&2; exit 1
fi

pieces=()
json_turns=()
cursor_s=0   # running position in seconds, summed from measured durations

for i in "${!TURNS[@]}"; do
  role="${TURNS[$i]%%|*}"
  text="${TURNS[$i]#*|}"
  if [[ "$role" == agent ]]; then
    voice=$AGENT_VOICE pitch=$AGENT_PITCH speed=$AGENT_SPEED label=1
  else
    voice=$CUSTOMER_VOICE pitch=$CUSTOMER_PITCH speed=$CUSTOMER_SPEED label=2
  fi

  raw="$WORK/turn$i.raw.wav"
  turn="$WORK/turn$i.wav"
  espeak-ng -v "$voice" -p "$pitch" -s "$speed" -a 120 -w "$raw" -- "$text"
  # To 16 kHz mono 16-bit; trim espeak's leading/trailing silence so the
  # turn boundaries are where speech is; normalise each turn to -3 dBFS so
  # both speakers sit at the same level.
  "${SOX[@]}" "$raw" -r "$RATE" -c 1 -b 16 -e signed-integer "$turn" \
    silence 1 0.02 0.5% reverse silence 1 0.02 0.5% reverse gain -n -3

  dur_s="$(soxi -D "$turn")"
  start_ms="$(awk -v c="$cursor_s" 'BEGIN { printf "%d", c * 1000 + 0.5 }')"
  cursor_s="$(awk -v c="$cursor_s" -v d="$dur_s" 'BEGIN { printf "%.6f", c + d }')"
  end_ms="$(awk -v c="$cursor_s" 'BEGIN { printf "%d", c * 1000 + 0.5 }')"
  pieces+=("$turn")

  json_turns+=("$(jq -cn --arg spk "$label" --arg role "$role" --arg text "$text" \
    --argjson start "$start_ms" --argjson stop "$end_ms" \
    '{speaker_label: $spk, role: $role, text: $text, start_ms: $start, end_ms: $stop}')")

  if (( i < ${#GAPS_MS[@]} )); then
    gap_ms=${GAPS_MS[$i]}
    gap="$WORK/gap$i.wav"
    # Exact sample count: gap_ms * 16 samples at 16 kHz.
    "${SOX[@]}" -r "$RATE" -c 1 -b 16 -e signed-integer -n "$gap" trim 0 "$(( gap_ms * RATE / 1000 ))s"
    gap_s="$(soxi -D "$gap")"
    cursor_s="$(awk -v c="$cursor_s" -v d="$gap_s" 'BEGIN { printf "%.6f", c + d }')"
    pieces+=("$gap")
  fi
done

"${SOX[@]}" "${pieces[@]}" -r "$RATE" -c 1 -b 16 -e signed-integer "$OUT_DIR/call.wav"

printf '%s\n' "${json_turns[@]}" | jq -s '.' > "$OUT_DIR/call.transcript.json"

# Headerless 8 kHz mono G.711 mu-law.
"${SOX[@]}" "$OUT_DIR/call.wav" -r 8000 -c 1 -e mu-law -b 8 -t raw "$OUT_DIR/call-8k.mulaw"

FF=(ffmpeg -nostdin -hide_banner -loglevel error -y -i "$OUT_DIR/call.wav"
    -map_metadata -1 -fflags +bitexact -flags:a +bitexact)
"${FF[@]}" -c:a libmp3lame -b:a 32k -ar 16000 -ac 1 "$OUT_DIR/call.mp3"
"${FF[@]}" -c:a aac -b:a 32k -ar 16000 -ac 1 -movflags +faststart "$OUT_DIR/call.mp4"

# ---------------------------------------------------------------------------
# 2. Music followed by applause (non-speech events).
# ---------------------------------------------------------------------------
# Melody: plucked notes over a soft sine pad, ~5 s.
notes=(C4 E4 G4 C5 B4 G4 A4 F4 D4 G4 B4 D5)
note_pieces=()
for j in "${!notes[@]}"; do
  n="$WORK/note$j.wav"
  "${SOX[@]}" -n -r "$RATE" -c 1 -b 16 "$n" synth 0.42 pluck "${notes[$j]}" fade 0 0.42 0.12 gain -6
  note_pieces+=("$n")
done
"${SOX[@]}" "${note_pieces[@]}" "$WORK/melody.wav"
mel_len="$(soxi -D "$WORK/melody.wav")"
"${SOX[@]}" -n -r "$RATE" -c 1 -b 16 "$WORK/pad.wav" \
  synth "$mel_len" sine C3 sine E3 sine G3 remix - fade 0.4 "$mel_len" 0.8 gain -18
"${SOX[@]}" -m "$WORK/melody.wav" "$WORK/pad.wav" "$WORK/music.wav" gain -n -3

# Applause: many independent trains of short band-passed noise claps at
# slightly different rates and offsets, over a quiet noise bed, ~4 s.
APPLAUSE_S=4
clap_tracks=()
periods=(0.210 0.233 0.251 0.274 0.297 0.318 0.229 0.262 0.287 0.305 0.243 0.221)
offsets=(0.000 0.037 0.081 0.013 0.122 0.059 0.097 0.025 0.144 0.071 0.109 0.048)
centers=(1500 2200 1800 2600 1300 3000 2000 1700 2400 1600 2800 1900)
for k in "${!periods[@]}"; do
  clap="$WORK/clap$k.wav"
  train="$WORK/train$k.wav"
  "${SOX[@]}" -n -r "$RATE" -c 1 -b 16 "$clap" \
    synth 0.03 whitenoise sinc 600-6000 bandpass "${centers[$k]}" 1.2q fade q 0.001 0.03 0.026 gain -n -1
  reps="$(awk -v p="${periods[$k]}" -v a="$APPLAUSE_S" 'BEGIN { printf "%d", a / p }')"
  "${SOX[@]}" "$clap" "$train" pad 0 "$(awk -v p="${periods[$k]}" 'BEGIN { printf "%.3f", p - 0.03 }')" \
    repeat "$((reps - 1))" pad "${offsets[$k]}" 0 trim 0 "$APPLAUSE_S"
  clap_tracks+=("$train")
done
"${SOX[@]}" -n -r "$RATE" -c 1 -b 16 "$WORK/bed.wav" synth "$APPLAUSE_S" pinknoise highpass 500 gain -30
"${SOX[@]}" -m "${clap_tracks[@]}" "$WORK/bed.wav" "$WORK/applause.wav" \
  fade q 0.3 "$APPLAUSE_S" 1.0 gain -n -4

"${SOX[@]}" -r "$RATE" -c 1 -b 16 -n "$WORK/short-gap.wav" trim 0 0.3
"${SOX[@]}" "$WORK/music.wav" "$WORK/short-gap.wav" "$WORK/applause.wav" \
  -r "$RATE" -c 1 -b 16 -e signed-integer "$OUT_DIR/music-applause.wav"

echo "wrote:"
for f in call.wav call-8k.mulaw call.mp3 call.mp4 music-applause.wav call.transcript.json; do
  printf '  %-22s %8d bytes\n' "$f" "$(stat -c %s "$OUT_DIR/$f")"
done
