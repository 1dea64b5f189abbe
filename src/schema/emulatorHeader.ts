// The one header by which the emulator marks what it made up (a wire name shared by the
// emulator, which sends it, and the client, which reads it: src/resultSource.ts).

/**
 * The response header the emulator puts on every HTTP answer and WebSocket upgrade, saying
 * what made the result: `stand-in` (batch results computed from the signal by the emulator,
 * not by the service's models), `scenario` (a scripted session), `speech-segments-only` (a
 * session without a scenario: clips without text). The service never sends it.
 */
export const EMULATOR_HEADER = 'x-svc-emulator';
