// Start the live dashboard from code: a file paced at live speed through conversation
// analysis, served to the browser. Open the printed URL; the session starts on page load.
//
//   npx tsx samples/dashboard.ts [FILE] [--speed X] [--exit-when-done]
//
// FILE defaults to samples/call.wav with samples/call.config.json. With SVC_API_KEY and
// SVC_BASE_URL unset, an embedded emulator answers, playing FILE's <stem>.scenario.json.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { analyzeConversation, createSessionStats, fileSource, type BatchConfig } from 'svc-stream';
import { startDashboard } from 'svc-stream/dashboard';
import { startEmulator, type ScenarioInput } from 'svc-stream/emulator';

const here = dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { speed: { type: 'string', default: '1' }, 'exit-when-done': { type: 'boolean' } },
});
const file = positionals[0] ?? join(here, 'call.wav');
const config: BatchConfig | 'default' = positionals[0] === undefined ? (JSON.parse(readFileSync(join(here, 'call.config.json'), 'utf8')) as BatchConfig) : 'default';

async function endpoint(): Promise<{ apiKey: string; baseUrl: string; close: () => Promise<void> }> {
  const { SVC_API_KEY: apiKey, SVC_BASE_URL: baseUrl } = process.env;
  if (apiKey && baseUrl) return { apiKey, baseUrl, close: async () => undefined };
  const scenarioPath = join(dirname(file), `${basename(file, extname(file))}.scenario.json`);
  const scenario = existsSync(scenarioPath) ? (JSON.parse(readFileSync(scenarioPath, 'utf8')) as ScenarioInput) : undefined;
  const emulator = await startEmulator(scenario ? { scenario } : {});
  return { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, close: () => emulator.close() };
}

const { apiKey, baseUrl, close } = await endpoint();
// The dashboard follows the session's life cycle through its stats (stats.state$), so the page shows every status.
const stats = createSessionStats();
const dashboard = await startDashboard({
  events$: fileSource(file, { realtime: Number(values.speed) }).pipe(analyzeConversation({ apiKey, baseUrl, config, stats })),
  stats,
  title: basename(file),
});
console.log(`Dashboard: ${dashboard.url}`);

void dashboard.session.ended.then((view) => console.log(`session ${view.status}${view.error ? `: ${view.error.code}` : ''}`));
await new Promise<unknown>((resolve) => {
  process.once('SIGINT', resolve);
  if (values['exit-when-done']) void dashboard.finalServed.then(resolve);
});
await dashboard.close();
await close();
