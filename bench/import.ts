// What importing the package costs: time and RSS of one bare import in a fresh Node process,
// against the built dist/ (run `npm run build` first), compared with importing its two runtime
// foundations (rxjs and ws) alone. Variants run interleaved, several rounds, median reported.
// Run: npm run build && npx tsx bench/import.ts [--runs N]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(new URL('../dist/index.js', import.meta.url))) {
  console.error('dist/index.js is missing: run `npm run build` first');
  process.exit(1);
}

/** Import statements measured, each in its own fresh process (run from the package root, so 'svc-stream' resolves to itself). */
const VARIANTS: Record<string, string> = {
  'nothing (baseline)': '',
  "rxjs + ws": "await import('rxjs'); await import('ws');",
  "{ analyzeConversation } from 'svc-stream'": "const { analyzeConversation } = await import('svc-stream'); if (typeof analyzeConversation !== 'function') throw new Error('missing');",
  "'svc-stream'": "await import('svc-stream');",
  "dist/session/conversation.js alone (floor)": "await import('./dist/session/conversation.js');",
  "every client entry": ['', '/batch', '/platform', '/telephony', '/dashboard', '/fleet', '/operators'].map((e) => `await import('svc-stream${e}');`).join(' '),
  ...Object.fromEntries(['batch', 'platform', 'telephony', 'dashboard', 'fleet', 'operators', 'emulator'].map((e) => [`'svc-stream/${e}'`, `await import('svc-stream/${e}');`])),
};

interface Sample {
  readonly ms: number;
  readonly rssMb: number;
  readonly heapMb: number;
  readonly modules: number;
}

/**
 * The child measures from just before the import to just after it (Node's own start-up is
 * the same for every variant and left out). No loader hooks here: they would slow the import.
 */
function measure(code: string): Omit<Sample, 'modules'> {
  const script = `
    const before = process.memoryUsage();
    const t0 = performance.now();
    ${code}
    const ms = performance.now() - t0;
    const after = process.memoryUsage();
    globalThis.gc();
    const retained = process.memoryUsage().heapUsed;
    console.log(JSON.stringify({ ms, rssMb: (after.rss - before.rss) / 1048576, heapMb: (retained - before.heapUsed) / 1048576 }));
  `;
  // --expose-gc: the heap figure is what the import retains after a full collection, not
  // whatever garbage the last scavenge happened to leave (the RSS figure is taken before it).
  const child = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', `globalThis.gc(); ${script}`], { cwd: root, encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`import failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Omit<Sample, 'modules'>;
}

/** Files an import loads, counted once per variant in a process of its own (with a load hook). */
function countFiles(code: string): number {
  const hook = "export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write('LOADED\\n'); return next(url, context); }";
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const child = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`import failed: ${child.stderr}`);
  return child.stderr.split('\n').filter((l) => l === 'LOADED').length;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const runsAt = process.argv.indexOf('--runs');
const runs = runsAt >= 0 ? Number(process.argv[runsAt + 1]) : 7;
console.log(`node ${process.version}, median of ${runs} interleaved rounds, each import in a fresh process; load average before ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const samples = new Map<string, Array<Omit<Sample, 'modules'>>>(Object.keys(VARIANTS).map((name) => [name, []]));
const files = new Map(Object.entries(VARIANTS).map(([name, code]) => [name, countFiles(code)])); // also warms the file cache
for (let round = 0; round < runs; round++) {
  for (const [name, code] of Object.entries(VARIANTS)) samples.get(name)!.push(measure(code));
}
console.log(`\n  ${'import'.padEnd(44)} ${'ms'.padStart(7)} ${'RSS +MB'.padStart(8)} ${'heap +MB (after GC)'.padStart(20)} ${'files'.padStart(6)}`);
for (const [name, ss] of samples) {
  console.log(
    `  ${name.padEnd(44)} ${median(ss.map((s) => s.ms)).toFixed(1).padStart(7)} ${median(ss.map((s) => s.rssMb)).toFixed(1).padStart(8)} ${median(ss.map((s) => s.heapMb)).toFixed(1).padStart(20)} ${String(files.get(name)).padStart(6)}`,
  );
}
console.log(`\nload average after ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
