// The emulator stands apart from the client: its modules import only each other, the shared
// src/schema and src/internal folders, Node built-ins and npm packages, never client code.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const EMULATOR = join(SRC, 'emulator');

/** Folders of src/ the emulator may import from (src/errors/index.ts is client-side and not needed). */
const SHARED = ['emulator', 'schema', 'internal'];
/** The client's own entry points (every one but 'svc-stream/emulator'): importing them loads the client. */
const isClientEntry = (spec: string): boolean => spec === 'svc-stream' || (spec.startsWith('svc-stream/') && spec !== 'svc-stream/emulator');

/**
 * Imports of client code that another change is removing, as `file: [specifier]`. An entry
 * whose import is gone fails the test, so each is deleted when that change lands.
 */
const PENDING: Record<string, readonly string[]> = {};

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every module specifier a file imports or re-exports, statically or with import() (comments ignored). */
function specifiers(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

/** Why importing `spec` from `file` is not allowed, or undefined when it is. */
function violation(file: string, spec: string): string | undefined {
  if (isClientEntry(spec)) return `the client entry ${spec}`;
  if (!spec.startsWith('.')) return undefined; // node: built-ins, npm packages, svc-stream/emulator
  const target = relative(SRC, resolve(dirname(file), spec));
  if (target.startsWith('..')) return `${spec} (outside src/)`;
  const top = target.split(sep)[0]!;
  return SHARED.includes(top) ? undefined : `src/${target.split(sep).join('/')}`;
}

function violations(): Array<{ file: string; spec: string; why: string }> {
  return tsFiles(EMULATOR).flatMap((file) =>
    specifiers(file).flatMap((spec) => {
      const why = violation(file, spec);
      return why === undefined ? [] : [{ file: relative(EMULATOR, file).split(sep).join('/'), spec, why }];
    }),
  );
}

describe('emulator imports', () => {
  it('reads every emulator module and finds its imports', () => {
    const files = tsFiles(EMULATOR);
    expect(files.length).toBeGreaterThan(10);
    expect(specifiers(join(EMULATOR, 'StreamingConnection.ts'))).toContain('ws');
  });

  it('imports no client module (audio, session, batch, platform, cli, dashboard, telephony, state, operators, errors)', () => {
    const found = violations().filter((v) => !PENDING[v.file]?.includes(v.spec));
    expect(found.map((v) => `${v.file} imports ${v.why}`)).toEqual([]);
  });

  it('keeps no stale pending exception', () => {
    const found = violations();
    const stale = Object.entries(PENDING).flatMap(([file, specs]) =>
      specs.filter((spec) => !found.some((v) => v.file === file && v.spec === spec)).map((spec) => `${file}: ${spec} is no longer imported; remove it from PENDING`),
    );
    expect(stale).toEqual([]);
  });

  it('tells a client import from a shared one', () => {
    const file = join(EMULATOR, 'example.ts');
    expect(violation(file, '../schema/events.js')).toBeUndefined();
    expect(violation(file, '../internal/ffmpegPath.js')).toBeUndefined();
    expect(violation(file, './scenario.js')).toBeUndefined();
    expect(violation(file, 'svc-stream/emulator')).toBeUndefined();
    expect(violation(file, '../platform/files.js')).toBe('src/platform/files.js');
    expect(violation(file, '../session/session.js')).toBe('src/session/session.js');
    expect(violation(file, '../errors.js')).toBe('src/errors.js');
    expect(violation(file, 'svc-stream')).toBe('the client entry svc-stream');
  });
});
