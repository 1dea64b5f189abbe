// Where the library finds ffmpeg, as public API. The locator itself stays in src/internal/
// because the emulator shares it (the emulator imports only src/schema and src/internal).
export { resolveFfmpeg, verifyFfmpeg, type ResolvedFfmpeg, type ResolveFfmpegOptions } from '../internal/ffmpegPath.js';
