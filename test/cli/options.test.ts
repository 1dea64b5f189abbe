// The one option parser (src/cli/options.ts), step by step: each builder reads and checks its
// value naming the flag, the parser refuses what the table does not declare, and the help is
// one aligned column whatever the flags' lengths.
import { describe, expect, it } from 'vitest';
import { defineCommand } from '../../src/cli/command.js';
import { HELP_OPTION, option, optionsHelp, parseOptions } from '../../src/cli/options.js';
import { REDIS_OPTION } from '../../src/cli/redisFlag.js';
import { runCli } from './runCli.js';
import { PassThrough, Readable } from 'node:stream';

const TABLE = {
  port: option.integer('N', 'port', { min: 0, max: 65535, fallback: 5004 }),
  speed: option.number('X', 'pace', { above: 0 }),
  mode: option.choice('M', ['queue', 'reject'], 'when full', 'queue'),
  origin: option.list('URL', 'an origin'),
  name: option.text('S', 'a name'),
  json: option.flag('NDJSON'),
  ...HELP_OPTION,
} as const;

describe('parseOptions', () => {
  it('reads every value, with fallbacks when absent', () => {
    const { values, positionals } = parseOptions(['--port', '0', '--speed', '1.5', '--origin', 'a', '--origin', 'b', 'file.wav', '--json'], TABLE, true);
    expect(values).toEqual({ port: 0, speed: 1.5, mode: 'queue', origin: ['a', 'b'], name: undefined, json: true, help: false });
    expect(positionals).toEqual(['file.wav']);
    expect(parseOptions([], TABLE).values).toMatchObject({ port: 5004, speed: undefined, origin: [], json: false });
  });

  it.each([
    [['--speed', 'fast'], "--speed expects a number > 0, got 'fast'"],
    [['--speed', '0'], "--speed expects a number > 0, got '0'"],
    [['--port', '70000'], "--port expects an integer from 0 to 65535, got '70000'"],
    [['--port', '1.5'], "--port expects an integer from 0 to 65535, got '1.5'"],
    [['--port', ''], "--port expects an integer from 0 to 65535, got ''"],
    [['--mode', 'drop'], "--mode expects queue or reject, got 'drop'"],
  ])('%j is refused naming the flag', (argv, message) => {
    expect(() => parseOptions(argv, TABLE)).toThrow(expect.objectContaining({ code: 'invalid_argument', message }));
  });

  it('refuses what the table does not declare, as parseArgs words it', () => {
    expect(() => parseOptions(['--prot', '1'], TABLE)).toThrow(expect.objectContaining({ code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' }));
    expect(() => parseOptions(['extra'], TABLE)).toThrow(expect.objectContaining({ code: 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' }));
  });

  it('answers --help before reading any other value', () => {
    expect(parseOptions(['--speed', 'fast', '--help'], TABLE).values.help).toBe(true);
  });
});

describe('optionsHelp', () => {
  it('one column for every line, continuation lines under the first, a long flag on its own line', () => {
    const text = optionsHelp({
      port: option.integer('N', 'port'),
      ...REDIS_OPTION,
      'payload-type': option.list('PT=codec[/rate[/channels]]', 'map a payload type'),
      ...HELP_OPTION,
    });
    const lines = text.split('\n');
    // The long --payload-type does not widen the column: it is capped, and that flag's help goes below.
    const column = 24;
    expect(lines[0]).toBe(`${'  --port N'.padEnd(column)}port`);
    // --redis's two help lines, and the line under the long --payload-type, start in that column.
    expect(lines[1]!.indexOf('share')).toBe(column);
    expect(lines[2]!.search(/\S/)).toBe(column);
    expect(lines[3]).toBe('  --payload-type PT=codec[/rate[/channels]]');
    expect(lines[4]!.search(/\S/)).toBe(column);
    expect(lines[5]).toBe(`${'  -h, --help'.padEnd(column)}this help`);
  });
});

describe('defineCommand', () => {
  const cmd = defineCommand({
    name: 'demo',
    summary: 'a demo',
    synopsis: 'svc-stream demo [options]',
    description: 'Does nothing.',
    options: { speed: option.number('X', 'pace', { above: 0, fallback: 1 }) },
    run: async ({ values }, io) => {
      io.stdout.write(`speed ${values.speed}\n`);
      return 0;
    },
  });
  const io = () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => (out += String(c)));
    stderr.on('data', (c: Buffer) => (err += String(c)));
    return { io: { stdout, stderr, stdin: Readable.from([]), env: {} }, out: () => out, err: () => err };
  };

  it('builds the help from the table and runs with checked values', async () => {
    expect(cmd.usage).toBe('Usage: svc-stream demo [options]\n\nDoes nothing.\n\nOptions:\n  --speed X   pace\n  -h, --help  this help');
    const t = io();
    expect(await cmd.run(['--speed', '2'], t.io)).toBe(0);
    expect(t.out()).toBe('speed 2\n');
  });

  it('a refused value exits 2 before run, naming the flag, with the usage line', async () => {
    const t = io();
    expect(await cmd.run(['--speed', 'fast'], t.io)).toBe(2);
    expect(t.err()).toBe("svc-stream: invalid_argument: --speed expects a number > 0, got 'fast'\nUsage: svc-stream demo [options]\nRun 'svc-stream demo --help' for every option.\n");
    expect(t.out()).toBe('');
  });
});

describe('every command through the one parser', () => {
  it.each(['analyze', 'dashboard', 'relay', 'rtp', 'media-stream', 'emulator', 'events', 'emotion', 'presets'])('%s --help: one column for the option lines, --redis aligned', async (name) => {
    const r = await runCli([name, '--help']);
    expect(r.code).toBe(0);
    const options = r.stdout.split('\nOptions:\n')[1]!.split('\n\n')[0]!.split('\n').filter((l) => l !== '');
    const column = options.map((l) => /^ {2}-\S.*?\s{2,}(?=\S)/.exec(l)?.[0].length).find((n) => n !== undefined)!;
    for (const line of options) {
      const head = /^ {2}-\S.*?\s{2,}(?=\S)/.exec(line);
      // A flag with its help at the column, a flag alone on its line, or help continued at the column.
      if (head) expect(head[0].length).toBe(column);
      else if (!line.startsWith('  -')) expect(line.search(/\S/)).toBe(column);
    }
  });
});
