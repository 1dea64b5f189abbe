// Analyse one audio file and print who is who and what was said:
// fileSource → analyzeConversation → splitSession.
//
//   npx tsx samples/analyze-file.ts [FILE] [CONFIG.json|default]
//
// FILE defaults to samples/call.wav (with samples/call.config.json). With SVC_API_KEY and
// SVC_BASE_URL unset, an embedded emulator answers, playing FILE's <stem>.scenario.json.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom } from 'rxjs';
import { analyzeConversation, fileSource, splitSession, type BatchConfig } from 'svc-stream';
import { startEmulator, type ScenarioInput } from 'svc-stream/emulator';

const here = dirname(fileURLToPath(import.meta.url));
const file = process.argv[2] ?? join(here, 'call.wav');
const configArg = process.argv[3] ?? (process.argv[2] === undefined ? join(here, 'call.config.json') : 'default');
const config: BatchConfig | 'default' = configArg === 'default' ? 'default' : (JSON.parse(readFileSync(configArg, 'utf8')) as BatchConfig);

async function endpoint(): Promise<{ apiKey: string; baseUrl: string; close: () => Promise<void> }> {
  const { SVC_API_KEY: apiKey, SVC_BASE_URL: baseUrl } = process.env;
  if (apiKey && baseUrl) return { apiKey, baseUrl, close: async () => undefined };
  // No service configured: a local emulator, told what to "hear" in this file.
  const scenarioPath = join(dirname(file), `${basename(file, extname(file))}.scenario.json`);
  const scenario = existsSync(scenarioPath) ? (JSON.parse(readFileSync(scenarioPath, 'utf8')) as ScenarioInput) : undefined;
  const emulator = await startEmulator(scenario ? { scenario } : {});
  return { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, close: () => emulator.close() };
}

const { apiKey, baseUrl, close } = await endpoint();
try {
  // One session, many derived streams: the socket is opened once, by the first subscriber.
  const session = splitSession(fileSource(file).pipe(analyzeConversation({ apiKey, baseUrl, config })));
  const [roles, transcript] = await Promise.all([
    lastValueFrom(session.currentRoles$, { defaultValue: undefined }),
    lastValueFrom(session.liveTranscript$, { defaultValue: undefined }),
  ]);

  console.log(`${basename(file)}`);
  console.log('Roles:');
  for (const pick of roles ?? []) console.log(`  speaker ${pick.speaker_label}: ${pick.name ?? pick.participant_role_uuid ?? '?'}`);
  console.log('Transcript:');
  for (const { clip } of transcript ?? []) {
    const at = clip.start_ms !== undefined ? `[${(clip.start_ms / 1000).toFixed(1).padStart(5)}s] ` : '';
    const role = clip.speaker_label ? roles?.get(clip.speaker_label)?.name : undefined;
    console.log(`  ${at}${clip.speaker_label ?? '?'}${role ? ` (${role})` : ''}: ${clip.text ?? ''}`);
  }
} finally {
  await close();
}
