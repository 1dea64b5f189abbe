// The package as a user meets it: `npm pack`, then the tarball installed into fresh projects
// (CommonJS as `npm init -y` makes it, ESM, and TypeScript with today's `tsc --init` defaults
// made strict with skipLibCheck off), run on Node 20, 22 and 24. Checks the tarball with the
// tools users run on packages (publint; Are the Types Wrong? with its esm-only profile), the
// export list of every entry point against the build it was packed from (the API itself is
// checked by scripts/api-report.mjs in npm test), a real session against the packaged
// emulator from each module system, the README's examples compiling as written, and
// what the tarball ships. On Node 20 only (the heavier checks): the size of a lean install
// (`--omit=optional`, no fleet packages), every entry required without the fleet packages
// (their functions fail typed), and the README's ten-line example run from the installed
// package against `npx svc-stream emulator --scenario sample`, which exits when npx is
// signalled; `svc-stream media-stream --demo`; and analyze --record then replay. Run: npm run test:package (CI runs it after npm test).
import { execFileSync, spawn, spawnSync, type ExecFileSyncOptions } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { import: string }> };
/** Every entry point, as `[specifier, built file]`. */
const ENTRIES = Object.entries(pkg.exports)
  .filter(([key]) => key !== './package.json')
  .map(([key, value]) => [key === '.' ? 'svc-stream' : `svc-stream/${key.slice(2)}`, join(root, value.import)] as const);
/** The runtime names of each entry as the build has them (filled once `npm pack` has built dist/). */
const expected: Record<string, string[]> = {};
const NODES = (process.env['SVC_CONSUMER_NODES'] ?? '20,22,24').split(',').map((v) => v.trim());
const work = mkdtempSync(join(tmpdir(), 'svc-consumer-'));
let failures = 0;
let passes = 0;

function run(cmd: string, args: readonly string[], options: ExecFileSyncOptions = {}): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000, ...options }) as string;
}

async function check(name: string, fn: () => void | Promise<void>): Promise<void> {
  try {
    await fn();
    passes++;
    console.log(`  ✓ ${name}`);
  } catch (err) {
    failures++;
    const e = err as { message?: string; stdout?: string; stderr?: string };
    console.log(`  × ${name}\n${[e.message, e.stdout, e.stderr].filter(Boolean).join('\n').split('\n').slice(0, 40).map((l) => `      ${l}`).join('\n')}`);
  }
}

/** The node binary of a major version: this one, or the registry's `node@N` package through npx. */
function nodeCommand(major: string): readonly string[] {
  if (process.versions.node.split('.')[0] === major) return [process.execPath];
  return ['npx', '-y', `node@${major}`];
}

function runNode(major: string, cwd: string, file: string): string {
  const [cmd, ...pre] = nodeCommand(major);
  return run(cmd!, [...pre, file], { cwd, env: { ...process.env, NODE_NO_WARNINGS: '1' } });
}

// A program each module system runs: lists the entry points' exports, then streams one second
// of audio through a real session against the packaged emulator.
const ENTRY_SPECS = ENTRIES.map(([spec]) => spec);
const program = (load: (spec: string) => string): string => `
const entries = {};
${ENTRY_SPECS.map((spec) => `entries[${JSON.stringify(spec)}] = ${load(spec)};`).join('\n')}
const main = entries['svc-stream'];
const emulator = entries['svc-stream/emulator'];
const { lastValueFrom, toArray } = ${load('rxjs')};
(async () => {
  const names = Object.fromEntries(Object.entries(entries).map(([spec, mod]) => [spec, Object.keys(mod).sort()]));
  const emu = await emulator.startEmulator();
  try {
    const audio = () => main.fromAsyncIterable((async function* () { for (let i = 0; i < 50; i++) yield Buffer.alloc(640); })());
    const events = await lastValueFrom(audio().pipe(
      main.analyzeConversation({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, config: 'default', format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } }),
      toArray(),
    ));
    let typed = 'no error';
    try { await lastValueFrom(audio().pipe(main.analyzeConversation({ apiKey: 'wrong', baseUrl: emu.baseUrl, config: 'default', format: { audio_format: 's16le', sample_rate: 16000, num_channels: 1 } }))); }
    catch (err) { typed = err instanceof main.SvcError && err.code === 'invalid_api_key' ? true : String(err); }
    console.log(JSON.stringify({ names, last: events[events.length - 1].type, typed }));
  } finally {
    await emu.close();
  }
})().catch((err) => { console.error(err); process.exit(1); });
`;

function verifyOutput(out: string): void {
  const line = out.trim().split('\n').pop()!;
  const result = JSON.parse(line) as { names: Record<string, string[]>; last: string; typed: true | string };
  for (const [entry, names] of Object.entries(expected)) {
    const got = result.names[entry];
    const missing = names.filter((n) => !got?.includes(n));
    const extra = (got ?? []).filter((n) => !names.includes(n));
    if (missing.length || extra.length) throw new Error(`${entry}: missing [${missing.join(', ')}], not in the build [${extra.join(', ')}]`);
  }
  if (result.last !== 'done') throw new Error(`the session ended with '${result.last}', not 'done'`);
  if (result.typed !== true) throw new Error(`a refused key did not arrive as SvcError invalid_api_key: ${result.typed}`);
}

function npmInstall(dir: string, specs: readonly string[]): void {
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...specs], { cwd: dir });
}

// The lean install: no bundled ffmpeg (a system one on PATH), no fleet packages.
const LEAN_BUDGET_MB = 35;
const FLEET = ['bullmq', 'ioredis', 'redis-semaphore'];

async function leanInstall(tarball: string): Promise<void> {
  const lean = join(work, 'lean');
  mkdirSync(lean);
  writeFileSync(join(lean, 'package.json'), JSON.stringify({ name: 'lean-consumer', version: '1.0.0', type: 'module' }));
  run('npm', ['install', '--omit=optional', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { cwd: lean });
  await check(`Node 20: npm install --omit=optional is at most ${LEAN_BUDGET_MB} MB, with neither the bundled ffmpeg nor the fleet packages`, () => {
    const kb = Number(run('du', ['-sk', join(lean, 'node_modules')]).split('\t')[0]);
    const mb = kb / 1024;
    const present = [...FLEET, '@ffmpeg-installer'].filter((p) => existsSync(join(lean, 'node_modules', p)));
    const packages = readdirSync(join(lean, 'node_modules')).flatMap((d) => (d.startsWith('@') ? readdirSync(join(lean, 'node_modules', d)).map((n) => `${d}/${n}`) : d.startsWith('.') ? [] : [d]));
    console.log(`      lean install: ${mb.toFixed(1)} MB (du -sk node_modules), ${packages.length} packages`);
    if (present.length) throw new Error(`installed although optional: ${present.join(', ')}`);
    if (mb > LEAN_BUDGET_MB) throw new Error(`${mb.toFixed(1)} MB is over the ${LEAN_BUDGET_MB} MB budget`);
  });

  // Every entry from CommonJS without the fleet packages; their functions fail typed on use.
  writeFileSync(
    join(lean, 'entries.cjs'),
    `const entries = {};
${ENTRY_SPECS.map((spec) => `entries[${JSON.stringify(spec)}] = require(${JSON.stringify(spec)});`).join('\n')}
const fleet = entries['svc-stream/fleet'];
const main = entries['svc-stream'];
(async () => {
  const limits = await fleet.createRedisLimits({ url: 'redis://127.0.0.1:1' }).then(() => 'resolved', (e) => e);
  const queue = await fleet.createBatchQueue({ url: 'redis://127.0.0.1:1' }).then(() => 'resolved', (e) => e);
  const publish = await fleet.createPublisher({ url: 'redis://127.0.0.1:1' }).then(() => 'resolved', (e) => e);
  const relay = entries['svc-stream/relay'].createRelay({ token: null, from: 'redis://127.0.0.1:1' });
  const relayFrom = await relay.listen().then(() => 'resolved', (e) => e);
  await relay.close();
  const ffmpeg = await main.resolveFfmpeg({ env: { PATH: '' } }).then(() => 'resolved', (e) => e);
  const out = (e) => ({ svc: e instanceof main.SvcError, code: e.code, message: e.message });
  console.log(JSON.stringify({ count: Object.keys(entries).length, limits: out(limits), queue: out(queue), publish: out(publish), relayFrom: out(relayFrom), ffmpeg: out(ffmpeg) }));
})().catch((err) => { console.error(err); process.exit(1); });
`,
  );
  await check(`Node 20: require() of every entry (${ENTRY_SPECS.length}) without the fleet packages; their functions fail with missing_dependency, ffmpeg with ffmpeg_not_found`, () => {
    const r = JSON.parse(runNode('20', lean, 'entries.cjs').trim().split('\n').pop()!) as Record<string, { svc: boolean; code: string; message: string }> & { count: number };
    if (r.count !== ENTRY_SPECS.length) throw new Error(`required ${r.count} entries`);
    const want = {
      limits: 'createRedisLimits needs ioredis and redis-semaphore: npm install ioredis redis-semaphore',
      queue: 'the batch queue needs bullmq and ioredis: npm install bullmq ioredis',
      publish: 'publishing to Redis needs ioredis: npm install ioredis',
      relayFrom: 'a relay reading Redis needs ioredis: npm install ioredis',
    } as const;
    for (const [k, message] of Object.entries(want)) {
      const e = r[k]!;
      if (!e.svc || e.code !== 'missing_dependency' || e.message !== message) throw new Error(`${k}: ${JSON.stringify(e)}`);
    }
    if (r.ffmpeg!.code !== 'ffmpeg_not_found' || !/npm install @ffmpeg-installer\/ffmpeg/.test(r.ffmpeg!.message) || !/FFMPEG_PATH=/.test(r.ffmpeg!.message)) throw new Error(`ffmpeg: ${JSON.stringify(r.ffmpeg)}`);
  });

  // Only svc-stream/fleet's types name the fleet's packages: every other entry typechecks
  // without them (a telephony user who publishes nothing needs no ioredis to compile).
  const typed = ENTRY_SPECS.filter((spec) => spec !== 'svc-stream/fleet');
  writeFileSync(join(lean, 'types.ts'), `${typed.map((spec, i) => `import * as e${i} from ${JSON.stringify(spec)};`).join('\n')}\nexport const entries = [${typed.map((_, i) => `e${i}`).join(', ')}];\n`);
  await check(`TypeScript, skipLibCheck: false: every entry but svc-stream/fleet (${typed.length}) compiles without the fleet packages`, () => {
    run(join(root, 'node_modules/.bin/tsc'), ['types.ts', '--module', 'nodenext', '--target', 'es2022', '--strict', '--skipLibCheck', 'false', '--noEmit', '--types', 'node', '--typeRoots', join(lean, 'node_modules/@types')], { cwd: lean });
  });

  // The CLI from the installed package: the media-stream bridge's demo, and record → replay.
  await check('Node 20: npx svc-stream media-stream --demo, end to end (a Twilio media stream of the sample call, analysed live)', () => {
    const out = run('npx', ['svc-stream', 'media-stream', '--demo', '--speed', '20', '--json'], { cwd: lean }).trim().split('\n');
    const state = JSON.parse(out.at(-1)!) as { type: string; source: string; clips: unknown[]; roles: Record<string, { name: string }> };
    if (state.type !== 'state' || state.source !== 'scenario' || state.clips.length !== 10 || state.roles['1']?.name !== 'Agent') throw new Error(`unexpected end: ${out.at(-1)}`);
    if (!out.some((l) => /"type":"call_end".*"status":"done"/.test(l))) throw new Error('no call ended done');
  });
  await check('Node 20: svc-stream analyze --record, then --scenario RECORDING: the same final state', () => {
    const call = join(lean, 'node_modules/svc-stream/samples/call.wav');
    const last = (args: string[]) => {
      // What made the results differs (a scenario, then the recording), and so does the session's
      // own account of its run (its wall time); the conversation's state is the same.
      const { source, label, session: _session, ...state } = JSON.parse(run('npx', ['svc-stream', 'analyze', call, '--json', ...args], { cwd: lean }).trim().split('\n').at(-1)!) as Record<string, unknown>;
      return { source, label, state: JSON.stringify(state) };
    };
    const recorded = last(['--record', 'call.ndjson']);
    const replayed = last(['--scenario', 'call.ndjson']);
    const sourceOf = (l: unknown): unknown => (l as { source?: unknown } | undefined)?.source;
    if (recorded.source !== 'scenario' || sourceOf(recorded.label) !== 'scenario' || replayed.source !== 'recording' || sourceOf(replayed.label) !== 'recording') throw new Error(`labels: ${JSON.stringify([recorded.label, replayed.label])}`);
    if (recorded.state !== replayed.state) throw new Error(`the replay ended elsewhere:\n${recorded.state.slice(0, 400)}\n${replayed.state.slice(0, 400)}`);
    if (/https?:\/\/|wss?:\/\//.test(readFileSync(join(lean, 'call.ndjson'), 'utf8'))) throw new Error('a URL in the recording');
  });

  // The README's ten lines, compiled as written, run from the installed package against
  // `npx svc-stream emulator --scenario sample`.
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const example = /## The operator in ten lines\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
  writeFileSync(join(lean, 'example.ts'), example);
  await check('Node 20: the README\'s ten-line example runs from the installed package against npx svc-stream emulator --scenario sample, which exits with npx', async () => {
    run(join(root, 'node_modules/.bin/tsc'), ['example.ts', '--module', 'nodenext', '--target', 'es2022', '--strict', '--skipLibCheck', 'false', '--types', 'node', '--typeRoots', join(lean, 'node_modules/@types'), '--outDir', 'out'], { cwd: lean });
    const emulator = spawn('npx', ['svc-stream', 'emulator', '--scenario', 'sample'], { cwd: lean, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const env = await new Promise<Record<string, string>>((resolve, reject) => {
        let text = '';
        const timer = setTimeout(() => reject(new Error(`the emulator printed no environment in 60 s: ${text}`)), 60_000);
        emulator.stdout.on('data', (c: Buffer) => {
          text += c.toString();
          const lines = text.split('\n').filter((l) => /^[A-Z_]+=/.test(l));
          if (lines.length >= 5) {
            clearTimeout(timer);
            resolve(Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])));
          }
        });
        emulator.once('exit', (code) => reject(new Error(`npx svc-stream emulator exited with ${code}`)));
      });
      const out = run(process.execPath, ['out/example.js'], { cwd: lean, env: { ...process.env, ...env } });
      if (!/^roles .*'1=/m.test(out) || !/^topics /m.test(out)) throw new Error(`unexpected output:\n${out}`);
      // npx signalled: the emulator under it stops listening.
      emulator.kill('SIGTERM');
      const url = `${env['SVC_BASE_URL']}/`;
      for (let waited = 0; ; waited += 200) {
        const up = await fetch(url).then(() => true, () => false);
        if (!up) break;
        if (waited > 15_000) throw new Error('the emulator still answers 15 s after npx was signalled');
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      emulator.kill('SIGKILL');
    }
  });
}

// A new user's first hour (issue #34), from the tarball in a fresh project with the default
// install, as the README says it: the quick start verbatim (tsx installed, the ten lines run
// under `svc-stream emulator -- …`, no sleep), each README command, the shipped sample from
// anywhere, and the `source` marking of a batch result and of rtp.
async function firstHour(tarball: string): Promise<void> {
  const dir = join(work, 'first-hour');
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'first-hour', version: '1.0.0', type: 'module' }));
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const shBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const commands = shBlocks.flatMap((b) => b.split('\n')).map((l) => l.replace(/\s+#.*$/, '').trim()).filter((l) => l.startsWith('npx svc-stream') || l.startsWith('npm install'));
  const sh = (line: string, timeout = 300_000): string => run('bash', ['-c', line], { cwd: dir, timeout, env: { ...process.env, SVC_API_KEY: '', SVC_BASE_URL: '' } });

  await check('first hour: npm install svc-stream (the README, as written, in a fresh project)', () => {
    const install = commands.find((l) => /^npm install svc-stream$/.test(l));
    if (!install) throw new Error('the README has no `npm install svc-stream` line');
    sh(install.replace('svc-stream', tarball));
  });
  await check('first hour: npx svc-stream analyze --sample runs the shipped call with its scenario, and says where its results come from', () => {
    const line = commands.find((l) => l === 'npx svc-stream analyze --sample');
    if (!line) throw new Error('the README has no `npx svc-stream analyze --sample` line');
    const out = sh(line).split('\n');
    if (!/^source: scenario call\.scenario\.json \(scripted results/.test(out[0]!)) throw new Error(`first line: ${out[0]}`);
    if (!out.some((l) => /Northwind Bank support/.test(l)) || !/^done: 38\.5 s of audio$/m.test(out.join('\n'))) throw new Error(`unexpected output:\n${out.slice(0, 8).join('\n')}`);
  });
  await check('first hour: npx svc-stream analyze your-call.wav (own audio, no scenario): speech segments only, said first', () => {
    const line = commands.find((l) => l === 'npx svc-stream analyze your-call.wav');
    if (!line) throw new Error('the README has no `npx svc-stream analyze your-call.wav` line');
    writeFileSync(join(dir, 'your-call.wav'), readFileSync(join(root, 'samples/call.wav')));
    const out = sh(line).split('\n');
    if (out[0] !== 'source: emulator: speech segments only (no transcription: clips without text; try --scenario)') throw new Error(`first line: ${out[0]}`);
  });
  await check('first hour: the README quick start verbatim (npm install --save-dev tsx; svc-stream emulator --scenario sample -- npx tsx example.ts)', () => {
    const example = /## The operator in ten lines\n\n```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    writeFileSync(join(dir, 'example.ts'), example);
    const block = shBlocks.find((b) => b.includes('-- npx tsx example.ts'));
    if (!block) throw new Error('the README has no quick start running example.ts');
    const out = sh(block);
    if (!/^roles .*'1=/m.test(out) || !/^topics /m.test(out)) throw new Error(`unexpected output:\n${out}`);
  });
  await check('first hour: npx svc-stream dashboard serves the sample call and stops on Ctrl-C', async () => {
    const line = commands.find((l) => l === 'npx svc-stream dashboard');
    if (!line) throw new Error('the README has no `npx svc-stream dashboard` line');
    // Its own process group, so Ctrl-C is what a terminal sends: SIGINT to every process of the job (npx and the command under it).
    const child = spawn('bash', ['-c', `exec ${line}`], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_API_KEY: '', SVC_BASE_URL: '' } });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = '';
        const timer = setTimeout(() => reject(new Error(`no URL in 60 s: ${text}`)), 60_000);
        child.stdout.on('data', (c: Buffer) => {
          text += c.toString();
          const m = /svc-stream dashboard: (http:\S+)/.exec(text);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      const page = await fetch(url);
      if (page.status !== 200) throw new Error(`the page answered ${page.status}`);
      process.kill(-child.pid!, 'SIGINT');
      // npx itself dies of the SIGINT (as in a terminal, where the shell then says 130); the
      // dashboard under it stops on it: its page no longer answers.
      await new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
      for (let waited = 0; ; waited += 200) {
        if (!(await fetch(url).then(() => true, () => false))) break;
        if (waited > 15_000) throw new Error('the dashboard still answers 15 s after Ctrl-C');
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      try {
        if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* the group is gone */
      }
    }
  });
  await check('first hour: a batch result on the embedded emulator says it is the emulator\'s (source on the line, one stderr line)', () => {
    const r = spawnSync('npx', ['svc-stream', 'emotion', 'your-call.wav'], { cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...process.env, SVC_API_KEY: '', SVC_BASE_URL: '' } });
    const line = JSON.parse(r.stdout.trim()) as { source?: string; result?: unknown };
    if (r.status !== 0 || line.source !== 'emulator' || !line.result) throw new Error(`exit ${r.status}: ${r.stdout}${r.stderr}`);
    if (!/^svc-stream: source: emulator: stand-ins /m.test(r.stderr)) throw new Error(`stderr: ${r.stderr}`);
  });
  await check('first hour: rtp says where its results come from, as analyze does', async () => {
    const child = spawn('npx', ['svc-stream', 'rtp', '--port', '0', '--idle-timeout', '300', '--exit-after', '1'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SVC_API_KEY: '', SVC_BASE_URL: '' } });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let err = '';
        const timer = setTimeout(() => reject(new Error(`rtp did not listen in 60 s: ${err}`)), 60_000);
        child.stderr.on('data', (c: Buffer) => {
          err += c.toString();
          const m = /listening for RTP on [\d.]+:(\d+)/.exec(err);
          if (m) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        });
      });
      // One second of PCMU (payload type 0), 20 ms packets.
      const socket = createSocket('udp4');
      for (let i = 0; i < 50; i++) {
        const packet = Buffer.alloc(12 + 160, 0xff);
        packet[0] = 0x80;
        packet[1] = 0;
        packet.writeUInt16BE(i, 2);
        packet.writeUInt32BE(i * 160, 4);
        packet.writeUInt32BE(0x1234, 8);
        await new Promise<void>((r) => socket.send(packet, port, '127.0.0.1', () => r()));
        await new Promise((r) => setTimeout(r, 20));
      }
      socket.close();
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      if (code !== 0) throw new Error(`exit ${code}`);
      if (out.split('\n')[0] !== 'source: emulator: speech segments only (no transcription: clips without text; try --scenario)') throw new Error(`first line: ${out.split('\n')[0]}`);
    } finally {
      child.kill('SIGKILL');
    }
  });
}

console.log(`consumer test in ${work}`);
try {
  // 1. The tarball, and what it ships.
  run('npm', ['pack', '--pack-destination', work, '--loglevel=error'], { cwd: root });
  const tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);
  const listing = run('tar', ['-tzf', tarball]).split('\n').filter(Boolean);
  for (const [spec, file] of ENTRIES) expected[spec] = Object.keys((await import(pathToFileURL(file).href)) as object).sort();
  await check('publint finds nothing to say about the tarball (--strict: warnings fail too)', () => {
    run(join(root, 'node_modules/.bin/publint'), ['run', tarball, '--strict']);
  });
  await check('Are the Types Wrong? (attw --profile esm-only) finds every entry\'s types for ESM and bundlers', () => {
    run(join(root, 'node_modules/.bin/attw'), [tarball, '--profile', 'esm-only', '--format', 'ascii', '--no-color']);
  });
  await check('the tarball ships dist, bin and the sample the dashboard plays, nothing else', () => {
    const outside = listing.filter((f) => !/^package\/(dist\/|bin\/|samples\/(call\.(wav|config\.json|scenario\.json)|call-8k\.mulaw|README\.md)$|README\.md$|package\.json$|LICENSE)/.test(f));
    if (outside.length) throw new Error(`unexpected files: ${outside.slice(0, 10).join(', ')}`);
    for (const entry of ENTRY_SPECS.flatMap((spec) => { const dir = spec === 'svc-stream' ? 'dist' : `dist/${spec.slice('svc-stream/'.length)}`; return [`${dir}/index.js`, `${dir}/index.d.ts`]; })) {
      if (!listing.includes(`package/${entry}`)) throw new Error(`missing ${entry}`);
    }
  });
  await check('source maps embed their sources (src/ is not shipped)', () => {
    const dir = join(work, 'unpacked');
    mkdirSync(dir);
    run('tar', ['-xzf', tarball, '-C', dir]);
    const maps = listing.filter((f) => f.endsWith('.js.map'));
    if (maps.length === 0) throw new Error('no source maps');
    for (const m of maps) {
      const map = JSON.parse(readFileSync(join(dir, m), 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
      if (!map.sourcesContent || map.sourcesContent.length !== map.sources.length || map.sourcesContent.some((c) => typeof c !== 'string')) {
        throw new Error(`${m} points at ${map.sources.join(', ')} without embedding it`);
      }
    }
  });

  // 2. CommonJS, as `npm init -y` makes a project.
  const cjs = join(work, 'cjs');
  mkdirSync(cjs);
  run('npm', ['init', '-y'], { cwd: cjs });
  npmInstall(cjs, [tarball, 'rxjs']);
  console.log(`      default install (with the bundled ffmpeg): ${(Number(run('du', ['-sk', join(cjs, 'node_modules')]).split('\t')[0]) / 1024).toFixed(1)} MB (du -sk node_modules)`);
  writeFileSync(join(cjs, 'index.js'), program((s) => `require(${JSON.stringify(s)})`));

  // 3. ESM.
  const esm = join(work, 'esm');
  mkdirSync(esm);
  writeFileSync(join(esm, 'package.json'), JSON.stringify({ name: 'esm-consumer', version: '1.0.0', type: 'module' }));
  npmInstall(esm, [tarball, 'rxjs']);
  writeFileSync(join(esm, 'index.mjs'), program((s) => `await import(${JSON.stringify(s)})`).replace('(async () => {', 'await (async () => {'));

  for (const major of NODES) {
    await check(`Node ${major}: require() of every entry (${ENTRY_SPECS.length}) from CommonJS; a session runs`, () => verifyOutput(runNode(major, cjs, 'index.js')));
    await check(`Node ${major}: import of every entry from ESM; a session runs`, () => verifyOutput(runNode(major, esm, 'index.mjs')));
  }

  // 4. TypeScript with today's `tsc --init` defaults (strict, exactOptionalPropertyTypes,
  // verbatimModuleSyntax, types: []), skipLibCheck off; the README's examples as written.
  const ts = join(work, 'ts');
  mkdirSync(ts);
  writeFileSync(join(ts, 'package.json'), JSON.stringify({ name: 'ts-consumer', version: '1.0.0', type: 'module' }));
  const tsVersion = (JSON.parse(readFileSync(join(root, 'node_modules/typescript/package.json'), 'utf8')) as { version: string }).version;
  // With the fleet's optional peer dependencies, as a user of svc-stream/fleet has them: its
  // types name theirs (the lean install without them is checked below).
  npmInstall(ts, [tarball, `typescript@${tsVersion}`, ...FLEET]);
  run(join(ts, 'node_modules/.bin/tsc'), ['--init'], { cwd: ts });
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  blocks.forEach((b, i) => writeFileSync(join(ts, `readme${i}.ts`), `${b}\nexport {};\n`));
  writeFileSync(
    join(ts, 'entries.ts'),
    `import { currentRoles, type ServerEvent } from 'svc-stream';\nimport { ServerEventSchema } from 'svc-stream/schema';\nimport { snapshotReducer } from 'svc-stream/state';\nimport { splitSession } from 'svc-stream/browser';\nimport { startEmulator, type EmulatorOptions } from 'svc-stream/emulator';\n` +
      `import { detectEmotion } from 'svc-stream/batch';\nimport { PlatformClient } from 'svc-stream/platform';\nimport { rtpSource } from 'svc-stream/telephony';\n` +
      `import { startDashboard } from 'svc-stream/dashboard';\nimport { createRedisLimits } from 'svc-stream/fleet';\n` +
      `const o: EmulatorOptions = { port: undefined };\nexport const x: [typeof currentRoles, typeof startEmulator, ServerEvent | undefined, EmulatorOptions] = [currentRoles, startEmulator, undefined, o];\n` +
      `export const y = [detectEmotion, PlatformClient, rtpSource, startDashboard, createRedisLimits, ServerEventSchema, snapshotReducer, splitSession] as const;\n`,
  );
  await check(`TypeScript ${tsVersion} with tsc --init defaults and skipLibCheck: false compiles the README examples and every entry point`, () => {
    const config = readFileSync(join(ts, 'tsconfig.json'), 'utf8');
    if (!/"exactOptionalPropertyTypes": true/.test(config) || !/"strict": true/.test(config)) throw new Error(`tsc --init no longer writes strict + exactOptionalPropertyTypes:\n${config}`);
    run(join(ts, 'node_modules/.bin/tsc'), ['-p', '.', '--noEmit', '--skipLibCheck', 'false'], { cwd: ts });
  });

  await leanInstall(tarball);
  await firstHour(tarball);
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`${passes} passed, ${failures} failed`);
process.exitCode = failures > 0 ? 1 : 0;
