// Tag every audio file of a folder with its sound events and its emotion, using the batch
// API: two bounded, retried runs over the same files (tagFiles, emotionFiles), joined by path.
//
//   npx tsx samples/tag-folder.ts [FOLDER]
//
// FOLDER defaults to samples/. With SVC_API_KEY and SVC_BASE_URL unset, an embedded
// emulator answers.
import { readdirSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { from, lastValueFrom, toArray } from 'rxjs';
import { BATCH_FILE_EXTENSIONS, isFileResult } from 'svc-stream/batch';
import { startEmulator } from 'svc-stream/emulator';
import { emotionFiles, tagFiles } from 'svc-stream/batch';

const folder = process.argv[2] ?? dirname(fileURLToPath(import.meta.url));
const files = readdirSync(folder)
  .filter((name) => (BATCH_FILE_EXTENSIONS as readonly string[]).includes(extname(name).toLowerCase()))
  .sort()
  .map((name) => join(folder, name));

async function endpoint(): Promise<{ apiKey: string; baseUrl: string; close: () => Promise<void> }> {
  const { SVC_API_KEY: apiKey, SVC_BASE_URL: baseUrl } = process.env;
  if (apiKey && baseUrl) return { apiKey, baseUrl, close: async () => undefined };
  const emulator = await startEmulator();
  return { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, close: () => emulator.close() };
}

const { apiKey, baseUrl, close } = await endpoint();
try {
  const options = { apiKey, baseUrl, concurrency: 3 };
  // Each run emits one outcome per file, in completion order; a failed file is an outcome too.
  const [events, emotions] = await Promise.all([
    lastValueFrom(from(files).pipe(tagFiles(options), toArray())),
    lastValueFrom(from(files).pipe(emotionFiles(options), toArray())),
  ]);
  console.log(`${files.length} audio files in ${folder}`);
  for (const path of files) {
    const tagged = events.find((o) => o.path === path)!;
    const felt = emotions.find((o) => o.path === path)!;
    const sounds = isFileResult(tagged)
      ? Object.entries(tagged.result.probs)
          .sort(([, a], [, b]) => (b ?? 0) - (a ?? 0))
          .slice(0, 3)
          .map(([name, p]) => `${name} ${(p ?? 0).toFixed(2)}`)
          .join(', ') || 'no confident sound event'
      : `failed: ${tagged.error.code}`;
    const emotion = isFileResult(felt) ? `${felt.result.emotion} (${felt.result.time_series.length} windows)` : `failed: ${felt.error.code}`;
    console.log(`${path.slice(folder.length + 1).padEnd(22)} emotion: ${emotion.padEnd(20)} events: ${sounds}`);
  }
} finally {
  await close();
}
